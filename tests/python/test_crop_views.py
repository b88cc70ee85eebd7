"""FiveCrop and TenCrop through fastloop.Loader against DataLoader: torchvision returns a tuple of crops, applies the
transforms after it to each crop with one draw for the tuple, and DataLoader's collate makes a batch of them a list
of 5 (10) tensors [B, C, H, W]. fastloop.Loader runs such a pipeline as 5 (10) views of one decode that draw alike,
each the pipeline with the FiveCrop replaced by the crop of that place, and yields the same ``(list, labels)``.
Compared with DataLoader over the same PNG files (decode_image + the same v2 object): equal where the only resize
is ATen's AVX2 / AVX-512 kernel, within 1 level under the baseline kernel (kernel_parity's resize rule).
What torchvision cannot give a batch of, or fastloop cannot express, is a TypeError that says what to do."""

from __future__ import annotations

import pytest
import torch
import torchvision
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader, Dataset

from kernel_parity import assert_within_one_level, torch_resize_is_fastloops

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform, compile_views  # noqa: E402


@pytest.fixture(scope="module")
def png_files(image_folder) -> fastloop.Files:
    paths = sorted((image_folder / "train").glob("*/*.png"))
    return fastloop.Files([str(p) for p in paths], [p.parent.name for p in paths])


class _Folder(Dataset):
    """What ImageFolder gives with decode_image: the transform's output and the class index."""

    def __init__(self, files: fastloop.Files, transform) -> None:
        self.files, self.transform = files, transform
        self.classes = sorted(set(files.labels))

    def __len__(self) -> int:
        return len(self.files.paths)

    def __getitem__(self, i):
        image = torchvision.io.decode_image(self.files.paths[i], mode=torchvision.io.ImageReadMode.RGB)
        return self.transform(image), self.classes.index(self.files.labels[i])


def _levels(x: torch.Tensor) -> torch.Tensor:
    return (x * 255).round().to(torch.uint8)


def _batches(files, transform, **kwargs):
    loader = fastloop.Loader(files, batch_size=4, workers=1, shuffle=False, drop_last=False, seed=3,
                             transform=transform, **kwargs)
    return [([v.clone() for v in views], labels.clone()) for views, labels in loader]


@pytest.mark.parametrize("crop, count", [(T.FiveCrop(32), 5), (T.TenCrop((32, 28)), 10),
                                         (T.TenCrop(30, vertical_flip=True), 10)], ids=repr)
def test_batches_equal_dataloaders(png_files, crop, count):
    # ToImage first, as ImageFolder's PIL images come in: torchvision transforms every crop of an Image after the
    # FiveCrop, but of plain tensors only the first (its rule for pure tensors), which fastloop does not copy.
    transform = T.Compose([T.ToImage(), T.Resize(44), crop, T.ToDtype(torch.float32, scale=True)])
    got = _batches(png_files, transform)
    want = list(DataLoader(_Folder(png_files, transform), batch_size=4, shuffle=False))
    assert len(got) == len(want) > 0
    for k, ((views, labels), (want_views, want_labels)) in enumerate(zip(got, want)):
        assert isinstance(want_views, list) and len(views) == len(want_views) == count
        assert torch.equal(labels, want_labels)
        for v, (x, w) in enumerate(zip(views, want_views)):
            assert x.shape == w.shape, (k, v, x.shape, w.shape)
            assert_within_one_level(_levels(x), _levels(w), torch_resize_is_fastloops(), (crop, k, v))


def test_the_transforms_after_the_crop_draw_once_for_the_tuple(png_files):
    """torchvision's RandomHorizontalFlip after FiveCrop flips all five crops of an image or none of them."""
    plain = _batches(png_files, T.Compose([T.Resize(40), T.FiveCrop(24), T.ToDtype(torch.float32, scale=True)]))
    flipped = _batches(png_files, T.Compose([T.Resize(40), T.FiveCrop(24), T.RandomHorizontalFlip(),
                                             T.ToDtype(torch.float32, scale=True)]))
    decisions = []
    for (views, _), (plain_views, _) in zip(flipped, plain):
        for b in range(views[0].shape[0]):
            same = [torch.equal(x[b], p[b]) for x, p in zip(views, plain_views)]
            mirrored = [torch.equal(x[b], p[b].flip(-1)) for x, p in zip(views, plain_views)]
            assert all(same) or all(mirrored), (same, mirrored)
            decisions.append(all(mirrored))
    assert any(decisions) and not all(decisions)  # both happen over the 12 images


def test_compiled_forms():
    assert compile_transform(T.FiveCrop(224)) == "FiveCrop(size=(224, 224))"
    spec = compile_transform(T.Compose([T.Resize(256), T.TenCrop(224, vertical_flip=True), T.RandomGrayscale(0.1)]))
    assert "TenCrop(size=(224, 224), vertical_flip=True)" in spec
    views = compile_views(spec)
    assert len(views) == 10 and all("_CropView(size=(224, 224), index=" in v for v in views)
    assert compile_views("Resize(size=(32, 32))") == [compile_transform(T.Resize((32, 32)))]
    assert "_CropView" not in fastloop.transforms.supported_transforms()
    with pytest.raises(ValueError, match="Please provide only two dimensions"):
        compile_transform("FiveCrop(size=(1, 2, 3))")


@pytest.mark.parametrize("transform, message", [
    (T.Compose([T.RandomApply([T.FiveCrop(24)], p=0.5)]), "FiveCrop inside RandomApply"),
    (T.Compose([T.RandomChoice([T.TenCrop(24), T.CenterCrop(24)])]), "TenCrop inside RandomChoice"),
    (T.Compose([T.FiveCrop(32), T.FiveCrop(24)]), "FiveCrop after FiveCrop"),
])
def test_what_cannot_be_expressed_is_refused(transform, message):
    with pytest.raises(TypeError, match=message):
        compile_transform(transform)


def test_loader_refusals(png_files):
    crop = T.Compose([T.Resize(40), T.FiveCrop(24)])
    with pytest.raises(TypeError, match="batch_transform"):
        fastloop.Loader(png_files, transform=crop, batch_transform=T.MixUp(num_classes=3))
    with pytest.raises(TypeError, match="leave views out"):
        fastloop.Loader(png_files, transform=crop, views=5)
    with pytest.raises(TypeError, match="FiveCrop or TenCrop"):
        fastloop.Loader(png_files, transform=[crop, T.Compose([T.Resize(24)])])
    with pytest.raises(TypeError, match="returns a tuple of 5 crops"):  # a pipeline of one image (the CLI's)
        fastloop._C._transform_repr("Resize(size=40), FiveCrop(size=24)")
    with pytest.raises(Exception, match="bigger than input size"):
        next(iter(fastloop.Loader(png_files, batch_size=2, workers=0, transform=T.Compose([T.FiveCrop(400), T.ToDtype(torch.float32, scale=True)]))))
