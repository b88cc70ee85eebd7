"""fastloop.Loader.state_dict() / load_state_dict(): a Loader loaded with the state saved after k batches of an
epoch yields the rest of that epoch and the epochs after it bit for bit as the uninterrupted run (after the
first batch, mid-epoch, before and after the last batch; image folders, CSV lists, in-memory data, local and
remote tar shards, MixUp/CutMix; 1 and 2 workers) without reading the k batches' images again; ranks of
another world size share the rest of the epoch (2 -> 3 and 3 -> 2 ranks, emulated in one process: every
sample once); a state of another data set, seed or batch size is a ValueError naming the field."""

import os
import pathlib
import pickle
import re
import subprocess
import sys
import tarfile
from collections import Counter
from typing import Callable, Dict, List, Tuple

import pytest
import torch
from torchvision.transforms import v2

import fastloop
from conftest import ROOT, run

Batches = List[Tuple[torch.Tensor, torch.Tensor]]
FASHION_MNIST = pathlib.Path("/usr/share/datasets/fashion-mnist")


def take(loader: fastloop.Loader, n: int) -> Batches:
    """The next `n` batches of a new iteration of `loader` (copies), leaving the iteration where it is."""
    it = iter(loader)
    out = [(x.clone(), y.clone()) for _, (x, y) in zip(range(n), it)]
    return out


def epochs(loader: fastloop.Loader, count: int) -> Batches:
    """`count` whole iterations of `loader`, one after the other."""
    return [(x.clone(), y.clone()) for _ in range(count) for x, y in loader]


def assert_same(got: Batches, want: Batches) -> None:
    assert len(got) == len(want)
    for k, ((x, y), (u, v)) in enumerate(zip(got, want)):
        assert torch.equal(x, u) and torch.equal(y, v), f"batch {k} differs"


def samples_of(batches: Batches) -> Counter:
    """How often each label (here, each sample's own number) was seen."""
    return Counter(label for _, y in batches for label in y.tolist())


@pytest.fixture(scope="module")
def csv_list(image_folder, tmp_path_factory) -> pathlib.Path:
    """image_folder's train images as a CSV list (paths relative to the file, class names)."""
    folder = tmp_path_factory.mktemp("csv")
    rows = ["path,label"] + [f"{os.path.relpath(p, folder)},{p.parent.name}"
                             for p in sorted((image_folder / "train").glob("*/*"))]
    (folder / "train.csv").write_text("\n".join(rows) + "\n")
    return folder / "train.csv"


def write_shards(files: List[pathlib.Path], labels: List[int], out: pathlib.Path, per_shard: int = 6) -> None:
    """webdataset tar shards train-NNNNNN.tar of `per_shard` samples each, as webdataset users write them."""
    out.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(files), per_shard):
        with tarfile.open(out / f"train-{start // per_shard:06d}.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
            for k, path in enumerate(files[start:start + per_shard]):
                key = f"{start + k:06d}"
                tar.add(path, arcname=f"{key}{path.suffix}")
                label = out / "label.cls"
                label.write_text(str(labels[start + k]))
                tar.add(label, arcname=f"{key}.cls")
    (out / "label.cls").unlink()


@pytest.fixture(scope="module")
def shards(image_folder, tmp_path_factory) -> pathlib.Path:
    """image_folder's 36 train images as 6 shards of 6 samples, labelled by class."""
    files = sorted((image_folder / "train").glob("*/*"))
    classes = sorted(p.name for p in (image_folder / "train").iterdir())
    out = tmp_path_factory.mktemp("shards")
    write_shards(files, [classes.index(p.parent.name) for p in files], out)
    (out / "classes.txt").write_text("\n".join(classes) + "\n")
    return out


@pytest.fixture(scope="module")
def all_images(image_folder) -> List[pathlib.Path]:
    """image_folder's 48 images (train and val): samples numbered by their label in the tests below."""
    return sorted(image_folder.glob("*/*/*"))


@pytest.fixture(scope="module")
def numbered_shards(all_images, tmp_path_factory) -> pathlib.Path:
    """The 48 images as 8 shards of 6, each sample labelled by its own number."""
    out = tmp_path_factory.mktemp("numbered_shards")
    write_shards(all_images, list(range(len(all_images))), out)
    return out


IMAGES = dict(image_size=32, seed=5)


def sources(image_folder, csv_list, shards) -> Dict[str, Callable[..., fastloop.Loader]]:
    """Each kind of source, made small: a Loader maker taking `workers`."""
    makers = {
        "imagefolder": lambda w: fastloop.Loader(f"imagefolder:{image_folder}", batch_size=4, workers=w, **IMAGES),
        "csv": lambda w: fastloop.Loader(f"csv:{csv_list}", batch_size=4, workers=w, **IMAGES),
        "synthetic": lambda w: fastloop.Loader("synthetic:3x16x16:200", batch_size=16, workers=w, seed=5),
        "shards": lambda w: fastloop.Loader(f"shards:{shards}", batch_size=4, workers=w, shuffle_buffer=8, **IMAGES),
        "mixup-cutmix": lambda w: fastloop.Loader(
            f"imagefolder:{image_folder}", batch_size=4, workers=w, **IMAGES,
            batch_transform=v2.RandomChoice([v2.MixUp(alpha=0.4, num_classes=3), v2.CutMix(alpha=1.0, num_classes=3)])),
    }
    if FASHION_MNIST.exists():
        makers["fashion-mnist"] = lambda w: fastloop.Loader("fashion-mnist", batch_size=4096, workers=w, seed=5)
    return makers


SOURCES = ["imagefolder", "csv", "synthetic", "shards", "mixup-cutmix", "fashion-mnist"]


def check_resume(make: Callable[[], fastloop.Loader], epoch: int = 1) -> None:
    """From states saved after 1, a middle, all but one and all batches of `epoch`, a new Loader yields the
    uninterrupted run's batches from there through the end of the epoch after."""
    reference = make()
    reference.set_epoch(epoch)
    want = epochs(reference, 2)
    n = len(want) // 2
    assert n >= 4
    for k in (1, n // 2, n - 1, n):
        first = make()
        first.set_epoch(epoch)
        taken = take(first, k)
        assert_same(taken, want[:k])
        state = pickle.loads(pickle.dumps(first.state_dict()))
        assert (state["epoch"], state["position"] > 0) == ((epoch, True) if k < n else (epoch + 1, False))
        first.close()
        second = make()
        second.load_state_dict(state)
        assert second.epoch == state["epoch"]
        got = epochs(second, 2 if k < n else 1)
        assert_same(got, want[k:])


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("source", SOURCES)
def test_resuming_after_k_batches_equals_the_uninterrupted_run(source, workers, image_folder, csv_list, shards):
    makers = sources(image_folder, csv_list, shards)
    if source not in makers:
        pytest.skip("Debian's dataset-fashion-mnist is not installed")
    check_resume(lambda: makers[source](workers))


@pytest.mark.parametrize("workers", [1, 2])
def test_remote_shards_resume_as_the_local_ones(workers, shards, cli, tmp_path):
    """Shards over HTTP (tests/tools/remote_store.py's range server) resume as the same shards on disk."""
    sys.path.insert(0, str(ROOT / "tests/tools"))
    import remote_store

    served = tmp_path / "served"
    served.mkdir()
    for path in shards.iterdir():
        (served / path.name).write_bytes(path.read_bytes())
    run([cli, "pack", "--index-only", served])
    http = remote_store.HttpFiles(served)
    try:
        make = lambda: fastloop.Loader(f"shards:{http.url}", batch_size=4, workers=workers, shuffle_buffer=8,  # noqa
                                       **IMAGES)
        check_resume(make)
    finally:
        http.close()


def test_the_first_batches_are_not_read_again(all_images, tmp_path):
    """The images of the k batches before the state are made undecodable: the resumed Loader (which stops at
    an undecodable image) never opens them."""
    copies = []
    for k, path in enumerate(all_images):
        copy = tmp_path / f"{k:03d}{path.suffix}"
        copy.write_bytes(path.read_bytes())
        copies.append(copy)
    make = lambda: fastloop.Loader(fastloop.Files(copies, list(range(len(copies)))), batch_size=4,  # noqa: E731
                                   workers=2, **IMAGES)
    want = epochs(make(), 1)
    first = make()
    taken = take(first, 5)
    state = first.state_dict()
    first.close()
    for label in samples_of(taken):
        copies[label].write_bytes(b"not an image")
    second = make()
    second.load_state_dict(state)
    assert_same(epochs(second, 1), want[5:])
    with pytest.raises(ValueError, match=r"\d{3}\.(jpg|png)"):
        epochs(make(), 1)  # a fresh epoch reads them, and stops at the first, naming it


def test_the_first_batches_of_shards_are_not_read_again(numbered_shards, tmp_path):
    """As above for tar shards, whose shuffle buffer the resumed Loader replays as sample numbers: the image
    bytes of the samples before the state are zeroed in place (the tar's layout unchanged)."""
    for path in numbered_shards.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    make = lambda: fastloop.Loader(f"shards:{tmp_path}", batch_size=4, workers=2, shuffle_buffer=8,  # noqa: E731
                                   **IMAGES)
    want = epochs(make(), 1)
    first = make()
    taken = take(first, 5)
    state = first.state_dict()
    first.close()
    zeroed = set(samples_of(taken))
    for path in tmp_path.glob("*.tar"):
        with tarfile.open(path) as tar:
            members = [m for m in tar.getmembers() if m.name.endswith((".jpg", ".png"))]
        with open(path, "r+b") as f:
            for m in members:
                if int(m.name.split(".")[0]) in zeroed:
                    f.seek(m.offset_data)
                    f.write(bytes(m.size))
    second = make()
    second.load_state_dict(state)
    assert_same(epochs(second, 1), want[5:])
    with pytest.raises(ValueError, match=r"\.tar"):
        epochs(make(), 1)  # a fresh epoch reads them, and stops at the first, naming it


def elastic(make: Callable[[int, int], fastloop.Loader], old: int, new: int, k: int, samples: int) -> None:
    """`old` ranks take k batches of epoch 1 and save; `new` ranks load rank 0's state and finish the epoch:
    every sample once, and the epoch after is a `new`-rank group's own."""
    seen: Counter = Counter()
    states = []
    for rank in range(old):
        loader = make(rank, old)
        loader.set_epoch(1)
        seen += samples_of(take(loader, k))
        states.append(loader.state_dict())
    assert all(s == states[0] for s in states), "ranks saving after the same batches save the same state"
    assert states[0]["position"] == k * 4 * old
    later = []
    for rank in range(new):
        loader = make(rank, new)
        loader.load_state_dict(pickle.loads(pickle.dumps(states[0])))
        rest = epochs(loader, 1)
        assert len({len(y) for _, y in rest}) == 1
        seen += samples_of(rest)
        later.append(epochs(loader, 1))
        fresh = make(rank, new)
        fresh.set_epoch(2)
        assert_same(later[-1], epochs(fresh, 1))
    assert seen == Counter(range(samples)), "each sample of the epoch once, across the old and the new ranks"
    assert samples_of([b for rank in later for b in rank]) == Counter(range(samples))


@pytest.mark.parametrize("old,new,k", [(2, 3, 3), (3, 2, 2)])
@pytest.mark.parametrize("source", ["files", "shards"])
def test_another_number_of_ranks_shares_the_rest_of_the_epoch(source, old, new, k, all_images, numbered_shards):
    """48 samples, batches of 4: 2 ranks x 3 batches leave 24 samples, 8 for each of 3 ranks; 3 ranks x 2 batches
    leave 24, 12 for each of 2 (the rest divides evenly: no padding)."""
    labels = list(range(len(all_images)))
    if source == "files":
        make = lambda rank, world: fastloop.Loader(  # noqa: E731
            fastloop.Files(all_images, labels), batch_size=4, workers=2, rank=rank, world_size=world,
            drop_last=False, **IMAGES)
    else:
        make = lambda rank, world: fastloop.Loader(  # noqa: E731
            f"shards:{numbered_shards}", batch_size=4, workers=2, rank=rank, world_size=world, shuffle_buffer=8,
            drop_last=False, **IMAGES)
    elastic(make, old, new, k, len(all_images))


def test_a_second_resize_mid_epoch_goes_on_from_the_first_ones_position(all_images):
    """2 ranks take a batch each, 3 ranks resume and take one each, then 2 ranks finish the epoch: 8 + 12 + 28
    samples, each of the 48 once."""
    make = lambda rank, world: fastloop.Loader(  # noqa: E731
        fastloop.Files(all_images, list(range(len(all_images)))), batch_size=4, workers=1, rank=rank,
        world_size=world, drop_last=False, **IMAGES)
    seen: Counter = Counter()
    state = None
    for world, batches in ((2, 1), (3, 1), (2, None)):
        states = []
        for rank in range(world):
            loader = make(rank, world)
            if state is not None:
                loader.load_state_dict(state)
            seen += samples_of(epochs(loader, 1) if batches is None else take(loader, batches))
            states.append(loader.state_dict())
        assert all(s == states[0] for s in states)
        state = states[0]
    assert seen == Counter(range(len(all_images)))
    assert (state["epoch"], state["position"]) == (1, 0)


def test_an_elastic_rest_that_does_not_divide_is_padded_as_distributed_sampler_pads():
    """200 samples, 2 ranks x 3 batches of 16 leave 104; 3 ranks take 35 each: 105, one sample twice."""
    make = lambda rank, world: fastloop.Loader("synthetic:1x4x4:200", batch_size=16, workers=1, rank=rank,  # noqa
                                               world_size=world, drop_last=False, augment=False, seed=2)
    state = None
    for rank in range(2):
        loader = make(rank, 2)
        take(loader, 3)
        state = loader.state_dict()
    counts = []
    for rank in range(3):
        loader = make(rank, 3)
        loader.load_state_dict(state)
        counts.append(sum(len(y) for _, y in epochs(loader, 1)))
        assert loader.epoch == 1
    assert counts == [35, 35, 35]


def test_the_state_is_small_and_plain():
    loader = fastloop.Loader("synthetic:3x8x8:256", batch_size=32, workers=1, seed=3)
    take(loader, 2)
    state = loader.state_dict()
    assert state == {"version": 1, "epoch": 0, "position": 64, "order_world_size": 1, "world_size": 1,
                     "samples": 256, "num_classes": 10, "source": "synthetic:3x8x8:256", "split": "train",
                     "seed": 3, "batch_size": 32, "shuffle": True, "drop_last": True, "shuffle_buffer": 2048}
    assert len(pickle.dumps(state)) < 1024
    loader.close()
    assert loader.state_dict() == state  # an abandoned iteration: where it stopped
    assert len(epochs(loader, 1)) == 8  # iterating again runs the next epoch from its start
    assert loader.state_dict()["epoch"] == 2 and loader.state_dict()["position"] == 0
    loader.set_epoch(5)
    assert (loader.state_dict()["epoch"], loader.state_dict()["position"]) == (5, 0)


def test_set_epoch_keeps_a_loaded_states_position_only_in_its_epoch():
    make = lambda: fastloop.Loader("synthetic:3x8x8:256", batch_size=32, workers=1, seed=3)  # noqa: E731
    first = make()
    first.set_epoch(4)
    take(first, 3)
    state = first.state_dict()
    resumed = make()
    resumed.load_state_dict(state)
    resumed.set_epoch(4)  # a DistributedSampler-style loop calls it: the position stays
    assert len(epochs(resumed, 1)) == 5
    other = make()
    other.load_state_dict(state)
    other.set_epoch(3)  # another epoch: from its start
    assert len(epochs(other, 1)) == 8
    copy = make()
    copy.load_state_dict(state)
    assert len(epochs(pickle.loads(pickle.dumps(copy)), 1)) == 5  # a loaded state travels with a pickled Loader


@pytest.mark.parametrize("field,kwargs,source", [
    ("seed", dict(seed=1), "synthetic:3x8x8:256"),
    ("batch_size", dict(batch_size=16), "synthetic:3x8x8:256"),
    ("source", {}, "synthetic:3x8x8:300"),
    ("shuffle_buffer", dict(shuffle_buffer=4), "synthetic:3x8x8:256"),
])
def test_a_state_of_another_data_set_seed_or_batch_size_is_a_value_error_naming_it(field, kwargs, source):
    saved = fastloop.Loader("synthetic:3x8x8:256", batch_size=32, workers=1, seed=3)
    take(saved, 2)
    state = saved.state_dict()
    other = fastloop.Loader(source, **{**dict(batch_size=32, workers=1, seed=3), **kwargs})
    with pytest.raises(ValueError, match=rf"{field} is .* in the state, .* here"):
        other.load_state_dict(state)
    if field == "source":
        with pytest.raises(ValueError, match=r"samples is 256 in the state, 300 here"):
            other.load_state_dict(state)


def test_a_state_of_another_image_folder_names_the_source(image_folder, csv_list):
    saved = fastloop.Loader(f"imagefolder:{image_folder}", batch_size=4, workers=1, **IMAGES)
    take(saved, 1)
    with pytest.raises(ValueError, match=r"source is 'imagefolder:.*' in the state, 'csv:.*' here"):
        fastloop.Loader(f"csv:{csv_list}", batch_size=4, workers=1, **IMAGES).load_state_dict(saved.state_dict())


def test_what_is_not_a_state_is_refused():
    loader = fastloop.Loader("synthetic:3x8x8:256", batch_size=32, workers=1)
    with pytest.raises(TypeError, match="must be a dict"):
        loader.load_state_dict([1, 2])
    state = loader.state_dict()
    with pytest.raises(ValueError, match="has no position"):
        loader.load_state_dict({k: v for k, v in state.items() if k != "position"})
    with pytest.raises(ValueError, match="version 7"):
        loader.load_state_dict(dict(state, version=7))
    with pytest.raises(ValueError, match="position 999 is past the end of an epoch of 256 samples"):
        loader.load_state_dict(dict(state, position=999))


def _resume_block() -> str:
    page = (ROOT / "docs/getting-started.md").read_text()
    section = page[page.index("### Resume a loop mid-epoch"):]
    return re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)


def test_the_getting_started_resume_example_continues_where_it_stopped(image_folder, tmp_path):
    """docs/getting-started.md's example, made small: a run stopped right after its third checkpoint (mid-epoch),
    then run again, trains on the uninterrupted run's batches."""
    block = _resume_block()
    for written, small in [("imagefolder:/data/pets", f"imagefolder:{image_folder}"), ("batch_size=64", "batch_size=4"),
                           ("workers=2)", "workers=2, image_size=32)"), ("step % 100 == 99", "step % 4 == 3"),
                           ("opt.step()", "opt.step(); print(epoch, labels.tolist(), float(images.sum()))")]:
        assert written in block, f"the example no longer has {written!r}"
        block = block.replace(written, small)
    save = re.search(r"^( +)(torch\.save\(.*\))$", block, re.M)
    assert save, "the example no longer saves a checkpoint"
    stopping = block.replace(save.group(0), save.group(0) + f"\n{save.group(1)}SAVES.append(1)\n"
                             f"{save.group(1)}if len(SAVES) == 3: raise SystemExit")
    stopping = "SAVES = []\n" + stopping

    def trained(script: str, folder: pathlib.Path) -> List[str]:
        folder.mkdir(exist_ok=True)
        done = subprocess.run([sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{script}\nexited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        return done.stdout.splitlines()

    want = trained(block, tmp_path / "whole")
    before = trained(stopping, tmp_path / "stopped")
    assert 0 < len(before) < len(want) and (tmp_path / "stopped/last.pt").exists()
    after = trained(block, tmp_path / "stopped")
    assert before + after == want
