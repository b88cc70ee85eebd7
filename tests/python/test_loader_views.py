"""fastloop.Loader with several views per image (SimCLR, DINO): ``transform=[P1, P2, ...]`` or ``views=N`` yields
``(views, labels)`` from one decode of each image. View 0 is the single-view Loader's batch with the same seed,
view v the batch of a single-view Loader seeded with view v's seed; the same batches for 0, 1 and 2 workers;
views of different sizes; a resumed multi-view Loader equals the uninterrupted one; wrong arguments are named."""

import pathlib
import pickle
import re
import subprocess
import sys
from typing import List, Tuple

import pytest
import torch
from torchvision.transforms import v2

import fastloop
from fastloop import _C
from conftest import ROOT

ViewBatches = List[Tuple[List[torch.Tensor], torch.Tensor]]

# Global and local crops, as DINO's: the global crop reads boxes of at least 0.3 of the image at 48 px, so a
# JPEG (40 to 90 px here) decodes at full scale for it alone too; the local one is smaller and differently made.
GLOBAL = v2.Compose([v2.RandomResizedCrop(48, scale=(0.3, 1.0)), v2.RandomHorizontalFlip(),
                     v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean=[0.5] * 3, std=[0.25] * 3)])
LOCAL = v2.Compose([v2.RandomResizedCrop(24, scale=(0.05, 0.3)), v2.RandomHorizontalFlip(),
                    v2.RandomGrayscale(p=0.5), v2.ToDtype(torch.float32, scale=True)])


def view_epoch(loader: fastloop.Loader) -> ViewBatches:
    """One whole iteration of a multi-view loader (copies)."""
    return [([x.clone() for x in views], y.clone()) for views, y in loader]


def single_epoch(loader: fastloop.Loader) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    return [(x.clone(), y.clone()) for x, y in loader]


def assert_same(got: ViewBatches, want: ViewBatches) -> None:
    assert len(got) == len(want) > 0
    for k, ((views, y), (want_views, want_y)) in enumerate(zip(got, want)):
        assert torch.equal(y, want_y), f"batch {k}: labels differ"
        assert len(views) == len(want_views)
        for v, (x, w) in enumerate(zip(views, want_views)):
            assert torch.equal(x, w), f"batch {k}, view {v} differs"


@pytest.fixture(scope="module")
def png_files(image_folder) -> fastloop.Files:
    """image_folder's PNG train images (decoded at full scale whatever the crop) with their class names."""
    paths = sorted((image_folder / "train").glob("*/*.png"))
    return fastloop.Files([str(p) for p in paths], [p.parent.name for p in paths])


def test_views_have_their_sizes_and_view_zero_is_the_single_view_batch(image_folder):
    source = f"imagefolder:{image_folder}"
    multi = fastloop.Loader(source, batch_size=6, workers=0, seed=3, transform=[GLOBAL, LOCAL])
    single = fastloop.Loader(source, batch_size=6, workers=0, seed=3, transform=GLOBAL)
    assert multi.views == 2 and len(multi.transform) == 2 and single.views is None
    got, want = view_epoch(multi), single_epoch(single)
    assert len(got) == len(want) == 36 // 6
    for (views, labels), (images, single_labels) in zip(got, want):
        assert [tuple(x.shape) for x in views] == [(6, 3, 48, 48), (6, 3, 24, 24)]
        assert torch.equal(labels, single_labels)
        assert torch.equal(views[0], images)  # JPEG and PNG alike: the same decode scale, the same draws


def test_each_view_is_the_batch_of_a_loader_seeded_with_its_view_seed(png_files):
    def loader(**kwargs) -> fastloop.Loader:  # unshuffled: the order does not depend on the seed
        return fastloop.Loader(png_files, batch_size=4, workers=1, shuffle=False, **kwargs)

    got = view_epoch(loader(seed=5, transform=[GLOBAL, LOCAL, LOCAL]))
    assert _C._view_seed(5, 0) == 5 and len({_C._view_seed(5, v) for v in range(3)}) == 3
    for v, pipeline in enumerate([GLOBAL, LOCAL, LOCAL]):
        want = single_epoch(loader(seed=_C._view_seed(5, v), transform=pipeline))
        assert len(want) == len(got)
        for k, ((views, labels), (images, want_labels)) in enumerate(zip(got, want)):
            assert torch.equal(labels, want_labels) and torch.equal(views[v], images), f"batch {k}, view {v}"
    assert not torch.equal(got[0][0][1], got[0][0][2])  # one pipeline, two views: independent draws


@pytest.mark.parametrize("workers", [1, 2])
def test_the_same_batches_for_any_number_of_workers(image_folder, workers):
    def loader(workers: int) -> fastloop.Loader:
        return fastloop.Loader(f"imagefolder:{image_folder}", batch_size=5, workers=workers, seed=1,
                               transform=[GLOBAL, GLOBAL, LOCAL], drop_last=False)

    assert_same(view_epoch(loader(workers)), view_epoch(loader(0)))


def test_views_of_one_pipeline_and_of_the_built_in_augmentation(image_folder):
    source = f"imagefolder:{image_folder}"
    counted = fastloop.Loader(source, batch_size=6, workers=2, transform=GLOBAL, views=2)
    listed = fastloop.Loader(source, batch_size=6, workers=2, transform=[GLOBAL, GLOBAL])
    assert counted.transform == fastloop.transforms.compile_transform(GLOBAL) and counted.views == 2
    batches = view_epoch(counted)
    assert_same(batches, view_epoch(listed))
    assert all(not torch.equal(views[0], views[1]) for views, _ in batches)
    built_in = fastloop.Loader(source, batch_size=6, workers=1, image_size=32, views=3)
    plain = fastloop.Loader(source, batch_size=6, workers=1, image_size=32)
    for (views, labels), (images, plain_labels) in zip(view_epoch(built_in), single_epoch(plain)):
        assert len(views) == 3 and all(x.shape == (6, 3, 32, 32) for x in views)
        assert torch.equal(views[0], images) and torch.equal(labels, plain_labels)


def test_views_of_data_held_in_memory():
    flip = "RandomHorizontalFlip(p=0.5), ToDtype(torch.float32, scale=True)"
    multi = fastloop.Loader("synthetic:3x16x16:96", batch_size=8, workers=1, transform=flip, views=2)
    single = fastloop.Loader("synthetic:3x16x16:96", batch_size=8, workers=1, transform=flip)
    got = view_epoch(multi)
    assert any(not torch.equal(views[0], views[1]) for views, _ in got)
    for (views, labels), (images, single_labels) in zip(got, single_epoch(single)):
        assert torch.equal(views[0], images) and torch.equal(labels, single_labels)


def test_each_image_is_decoded_once_whatever_the_number_of_views(image_folder):
    def decoded(**kwargs) -> int:
        loader = fastloop.Loader(f"imagefolder:{image_folder}", batch_size=6, workers=2, drop_last=False, **kwargs)
        batches = sum(1 for _ in loader)
        assert batches == 6
        return loader._impl.images_decoded

    assert decoded(transform=GLOBAL) == 36
    assert decoded(transform=[GLOBAL, LOCAL, LOCAL, LOCAL]) == 36
    assert decoded(transform=LOCAL, views=5) == 36


@pytest.mark.parametrize("k", [1, 3, 5])
def test_resume_mid_epoch_equals_the_uninterrupted_run(image_folder, k):
    def loader() -> fastloop.Loader:
        return fastloop.Loader(f"imagefolder:{image_folder}", batch_size=6, workers=2, seed=9,
                               transform=[GLOBAL, LOCAL])

    first = loader()
    want = view_epoch(first) + view_epoch(first)  # epochs 0 and 1
    stopped = loader()
    it = iter(stopped)
    for _ in range(k):
        next(it)
    state = pickle.loads(pickle.dumps(stopped.state_dict()))
    resumed = loader()
    resumed.load_state_dict(state)
    assert_same(view_epoch(resumed) + view_epoch(resumed), want[k:])


def test_a_multi_view_loader_pickles_as_its_arguments(image_folder):
    loader = fastloop.Loader(f"imagefolder:{image_folder}", batch_size=6, workers=1, transform=[GLOBAL, LOCAL])
    copy = pickle.loads(pickle.dumps(loader))
    assert copy.transform == loader.transform and copy.views == 2 and repr(copy) == repr(loader)
    assert_same(view_epoch(copy), view_epoch(loader))


def test_wrong_arguments_are_named(image_folder):
    source = f"imagefolder:{image_folder}"
    with pytest.raises(ValueError, match=r"transform=\[\] is an empty list"):
        fastloop.Loader(source, transform=[])
    with pytest.raises(TypeError, match=r"MixUp in transform\[1\] is a batch transform.*batch_transform=MixUp"):
        fastloop.Loader(source, transform=[GLOBAL, v2.Compose([LOCAL, v2.MixUp(num_classes=3)])])
    with pytest.raises(TypeError, match=r"CutMix in transform\[1\] is a batch transform"):
        fastloop.Loader(source, transform=[GLOBAL, v2.CutMix(num_classes=3)])
    with pytest.raises(TypeError, match="mixes whole pipelines with a single RandomHorizontalFlip"):
        fastloop.Loader(source, transform=[GLOBAL, v2.RandomHorizontalFlip()])
    with pytest.raises(TypeError, match="batch_transform=MixUp.*with several views"):
        fastloop.Loader(source, transform=GLOBAL, views=2, batch_transform=v2.MixUp(alpha=0.2, num_classes=3))
    with pytest.raises(ValueError, match="views must be an int >= 1"):
        fastloop.Loader(source, transform=GLOBAL, views=0)
    with pytest.raises(ValueError, match="views=3 beside a list of 2 pipelines"):
        fastloop.Loader(source, transform=[GLOBAL, LOCAL], views=3)
    with pytest.raises(TypeError, match=r"ends with uint8 images"):
        fastloop.Loader(source, transform=[GLOBAL, v2.Compose([v2.RandomResizedCrop(24)])])


def _views_block() -> str:
    page = (ROOT / "docs/getting-started.md").read_text()
    section = page[page.index("### Several views per image"):]
    return re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)


def test_the_getting_started_simclr_example_trains(image_folder, tmp_path):
    """docs/getting-started.md's two-view SimCLR loop, made small: it runs an epoch and asserts a finite loss."""
    block = _views_block()
    for written, small in [("imagefolder:/data/pets", f"imagefolder:{image_folder}"), ("batch_size=64", "batch_size=6"),
                           ("RandomResizedCrop(224", "RandomResizedCrop(32"),
                           ("opt.step()", "opt.step(); print(x1.shape[-1], x2.shape[-1], float(loss))")]:
        assert written in block, f"the example no longer has {written!r}"
        block = block.replace(written, small)
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    assert len(lines) == 36 // 6 and all(line.startswith("32 32 ") for line in lines)
