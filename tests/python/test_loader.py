"""fastloop.Loader: the CLI's batches, the epoch and rank rules, and a clean end in every way one ends."""

import gc
import os
import pathlib
import signal
import threading
import time

import pytest
import torch
from safetensors.torch import load_file

import fastloop
from conftest import loader_threads, loader_threads_left, run, sigint_raises_keyboard_interrupt


def cli_batches(loader_dump, tmp_path, flags, epoch, batches):
    out = tmp_path / f"cli_{epoch}.safetensors"
    run([loader_dump, *flags, "--dump-epoch", epoch, "--dump-batches", batches, "--dump-out", out])
    tensors = load_file(str(out))
    return [(tensors[f"images_{k}"], tensors[f"labels_{k}"]) for k in range(batches)]


@pytest.mark.parametrize(
    "source, extra, kwargs",
    [
        ("synthetic:3x32x32:600", [], {}),
        ("synthetic:3x32x32:600", ["--amp", "bf16", "--channels-last"],
         {"dtype": torch.bfloat16, "channels_last": True}),
        ("fashion-mnist", [], {}),
    ],
)
def test_batches_equal_the_cli_loaders_for_the_same_seed_and_epoch(loader_dump, tmp_path, source, extra, kwargs):
    if source == "fashion-mnist" and not pathlib.Path("/usr/share/datasets/fashion-mnist").exists():
        pytest.skip("Debian's dataset-fashion-mnist is not installed")
    loader = fastloop.Loader(source, batch_size=64, workers=2, seed=7, **kwargs)
    flags = ["--data", source, "--batch-size", "64", "--workers", "1", "--seed", "7"] + extra
    if "--channels-last" not in extra:
        flags.append("--no-channels-last")
    for epoch in (0, 3):
        loader.set_epoch(epoch)
        ours = [b for _, b in zip(range(3), loader)]
        theirs = cli_batches(loader_dump, tmp_path, flags, epoch, 3)
        for (images, labels), (cli_images, cli_labels) in zip(ours, theirs):
            assert images.dtype == cli_images.dtype
            if images.size(1) > 1:  # one channel is both layouts
                assert images.is_contiguous(memory_format=torch.channels_last) == kwargs.get("channels_last", False)
            assert torch.equal(images.contiguous(), cli_images)
            assert torch.equal(labels, cli_labels)


def test_image_folder_batches_equal_the_cli_loaders(loader_dump, tmp_path, image_folder):
    source = f"imagefolder:{image_folder}"
    loader = fastloop.Loader(source, batch_size=8, workers=2, image_size=48, seed=3)
    assert loader.classes == ["ant", "bee", "cat"] and loader.num_classes == 3
    loader.set_epoch(1)
    ours = list(loader)
    theirs = cli_batches(loader_dump, tmp_path, ["--data", source, "--batch-size", "8", "--image-size", "48",
                                                  "--seed", "3", "--no-channels-last"], 1, len(ours))
    assert len(ours) == len(loader) == 36 // 8
    for (images, labels), (cli_images, cli_labels) in zip(ours, theirs):
        assert images.shape == (8, 3, 48, 48)
        assert torch.equal(images, cli_images) and torch.equal(labels, cli_labels)


def test_the_val_split_is_every_sample_once_in_order_without_augmentation(image_folder):
    val = fastloop.Loader(f"imagefolder:{image_folder}", split="val", batch_size=5, workers=1, image_size=32)
    batches = list(val)
    assert len(batches) == len(val) == 3  # 12 samples, the last batch partial (drop_last off)
    labels = torch.cat([y for _, y in batches])
    assert labels.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    again = torch.cat([x for x, _ in val])
    assert torch.equal(torch.cat([x for x, _ in batches]), again)  # no augmentation: every pass the same


def test_iterations_without_set_epoch_reshuffle_and_set_epoch_repeats():
    loader = fastloop.Loader("synthetic:3x8x8:256", batch_size=256, workers=1)
    first, second = next(iter(loader))[1], next(iter(loader))[1]
    assert loader.epoch == 2
    assert not torch.equal(first, second)
    loader.set_epoch(0)
    assert torch.equal(next(iter(loader))[1], first)


def test_len_is_batches_per_epoch_of_this_ranks_share():
    assert len(fastloop.Loader("synthetic:3x8x8:1000", batch_size=64, workers=0)) == 1000 // 64
    assert len(fastloop.Loader("synthetic:3x8x8:1000", batch_size=64, drop_last=False, workers=0)) == 16
    assert len(fastloop.Loader("synthetic:3x8x8:1000", batch_size=64, rank=1, world_size=2, workers=0)) == 500 // 64


def test_a_batch_kept_stays_valid_while_the_epoch_goes_on_and_after_the_loader_is_gone():
    loader = fastloop.Loader("synthetic:3x32x32:2048", batch_size=32, workers=2, prefetch=2)
    it = iter(loader)
    kept_images, kept_labels = next(it)
    expected = kept_images.clone(), kept_labels.clone()
    for _ in it:  # the pool must not hand the kept buffer to a worker
        pass
    del loader, it
    gc.collect()
    assert torch.equal(kept_images, expected[0]) and torch.equal(kept_labels, expected[1])


def test_batches_held_across_epochs_stay_unchanged_and_equal_to_a_loader_that_held_none():
    def epochs(hold):
        loader = fastloop.Loader("synthetic:3x16x16:640", batch_size=32, workers=2, prefetch=2, seed=3)
        seen, held = [], []
        for epoch in range(2):
            loader.set_epoch(epoch)
            for k, (images, labels) in enumerate(loader):
                seen.append((images.clone(), labels.clone()))
                if hold and k % 3 == 0:  # kept while the pool recycles the batches let go around them
                    held.append((len(seen) - 1, images, labels))
        return seen, held

    reference, _ = epochs(hold=False)
    seen, held = epochs(hold=True)
    assert len(seen) == len(reference) == 40 and len(held) == 14
    assert all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for a, b in zip(seen, reference))
    for k, images, labels in held:
        assert torch.equal(images, reference[k][0]) and torch.equal(labels, reference[k][1]), f"held batch {k} changed"


def test_batches_let_go_are_written_into_memory_already_faulted_in():
    # 320 x 3 x 96 x 96 float32 = 35 MB a batch, above glibc's mmap threshold: a fresh buffer per batch would be
    # 8,640 first-touch page faults each; the loader's recycled buffers (Loader::host_acquire, at most prefetch +
    # workers + 2 of them) take none once made, so 8 batches after the warm-up fault in at most a late buffer or two.
    resource = pytest.importorskip("resource")
    loader = fastloop.Loader("synthetic:3x96x96:6400", batch_size=320, workers=1, prefetch=2)
    it = iter(loader)
    for _ in range(8):  # warm-up: the pool's buffers are made and first touched
        next(it)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(8):
        next(it)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 3 * 8640, f"{faults} page faults for 8 batches let go: their buffers were not reused"


def test_abandoning_an_iteration_stops_the_workers():
    loader = fastloop.Loader("synthetic:3x32x32:4096", batch_size=16, workers=2)
    for k, _ in enumerate(loader):
        assert loader_threads() == 2
        if k == 3:
            break
    gc.collect()
    assert loader_threads_left() == 0
    assert len(list(loader)) == len(loader)  # and iterating again restarts them
    assert loader_threads_left() == 0


def test_deleting_a_loader_mid_epoch_joins_its_threads():
    loader = fastloop.Loader("synthetic:3x32x32:4096", batch_size=16, workers=2)
    it = iter(loader)
    next(it)
    del loader
    next(it)  # the iterator keeps its loader alive
    del it
    gc.collect()
    assert loader_threads_left() == 0


def test_ctrl_c_during_iteration_raises_keyboard_interrupt_and_stops_the_workers():
    # Big batches, one worker: the main thread spends its time waiting in next(), where Ctrl-C arrives.
    # The signal is sent once a batch has been seen; the loop runs epochs until it lands (no timer to race).
    loader = fastloop.Loader("synthetic:3x64x64:8192", batch_size=512, workers=1, prefetch=1)
    first_batch = threading.Event()

    def interrupt() -> None:
        if first_batch.wait(timeout=120):
            os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    seen = 0
    with sigint_raises_keyboard_interrupt(), pytest.raises(KeyboardInterrupt):
        sender.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for _ in loader:
                seen += 1
                first_batch.set()
    sender.join()
    assert seen > 0
    assert loader_threads_left() == 0


class _StartThenInterrupted:
    """A Loader's C++ part whose start() returns and then Ctrl-C is raised, as Python does when the signal is
    seen at the call's return, in Loader.__iter__'s frame."""

    def __init__(self, impl) -> None:
        self.impl = impl

    def start(self, epoch: int, *position: int) -> None:
        self.impl.start(epoch, *position)
        raise KeyboardInterrupt

    def stop(self) -> None:
        self.impl.stop()


def test_ctrl_c_raised_in_the_loaders_python_frames_stops_the_workers_while_its_traceback_lives(monkeypatch):
    # Python raises Ctrl-C's KeyboardInterrupt at a call in whichever frame runs when the signal is seen; in
    # the iterator's own frames the traceback then keeps the iterator alive (its __del__ does not run). Such
    # a landing is made certain here rather than left to the timing of a real signal (1 in ~80 before).
    loader = fastloop.Loader("synthetic:3x64x64:8192", batch_size=512, workers=1, prefetch=1)
    take = fastloop._loader._LoaderIterator._next

    def taken_then_interrupted(self):
        take(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(fastloop._loader._LoaderIterator, "_next", taken_then_interrupted)
    with pytest.raises(KeyboardInterrupt) as caught:
        for _ in loader:
            pass
    assert any(entry.name == "taken_then_interrupted" for entry in caught.traceback)  # the frame lives
    assert loader_threads_left() == 0
    monkeypatch.undo()

    loader._impl = _StartThenInterrupted(loader._impl)
    with pytest.raises(KeyboardInterrupt) as caught:
        iter(loader)
    assert any(entry.name == "__iter__" for entry in caught.traceback)
    assert loader_threads_left() == 0


@pytest.mark.parametrize("workers", [0, 2])
def test_an_undecodable_image_is_a_value_error_naming_it(tmp_path, image_folder, workers):
    import shutil

    root = tmp_path / "bad"
    shutil.copytree(image_folder, root)
    bad = root / "train" / "bee" / "005.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    loader = fastloop.Loader(f"imagefolder:{root}", batch_size=36, workers=workers, image_size=32)
    with pytest.raises(ValueError, match="005.jpg"):
        list(loader)
    assert loader_threads_left() == 0
    skipping = fastloop.Loader(f"imagefolder:{root}", batch_size=36, workers=workers, image_size=32,
                               bad_image_policy="skip")
    assert len(list(skipping)) == 1


def test_a_file_gone_after_listing_is_a_value_error_naming_it(tmp_path, image_folder):
    import shutil

    root = tmp_path / "gone"
    shutil.copytree(image_folder, root)
    loader = fastloop.Loader(f"imagefolder:{root}", batch_size=36, workers=2, image_size=32)
    (root / "train" / "cat" / "002.jpg").unlink()
    with pytest.raises(ValueError, match="002.jpg"):
        list(loader)


def test_bad_arguments_are_value_errors_with_the_clis_message():
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        fastloop.Loader("nope:x")
    with pytest.raises(ValueError, match="split must be"):
        fastloop.Loader("synthetic", split="validation")
    with pytest.raises(ValueError, match="--batch-size"):
        fastloop.Loader("synthetic", batch_size=0)


def test_a_split_the_source_lacks_is_a_value_error(tmp_path, image_folder):
    import shutil

    shutil.copytree(image_folder / "train", tmp_path / "train")
    with pytest.raises(ValueError, match="has no val split"):
        fastloop.Loader(f"imagefolder:{tmp_path}", split="val")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible")
def test_cuda_batches_come_through_the_pinned_ring_equal_to_the_cpu_ones():
    cpu = fastloop.Loader("synthetic:3x32x32:1024", batch_size=64, workers=2)
    cuda = fastloop.Loader("synthetic:3x32x32:1024", batch_size=64, workers=2, device="cuda")
    for (x, y), (xc, yc) in zip(cpu, cuda):
        assert xc.is_cuda and yc.is_cuda
        assert torch.equal(x, xc.cpu()) and torch.equal(y, yc.cpu())
