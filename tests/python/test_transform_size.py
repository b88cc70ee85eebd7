"""Batches sized by the user's transform, as with ``DataLoader``: a pipeline that ends in a crop or resize to a
size needs no ``image_size``; one that disagrees with a given ``image_size`` is refused by the constructor with a
message saying what to do; one whose size follows each image's stacks images while their sizes agree, as
DataLoader's collate does (the first image of another size is named); the CLI's ``--eval-transform`` and the
checkpoint's recorded one (``predict``, ``export``) take the same size.

Parity: torchvision's evaluation pipeline ``Resize(s) + CenterCrop(c) + ToTensor + Normalize`` over
``ImageFolder`` (its images decoded to tensors, the kernels fastloop restates) against ``fastloop.Loader``'s
``val`` split: PNG samples equal to the float32 ulp, JPEG samples within the decoder's bound below.
"""

from __future__ import annotations

import pytest
import torch
import torchvision
import torchvision.transforms.v2 as T

import fastloop
from conftest import run
from kernel_parity import torch_resize_is_fastloops

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _eval_pipeline(resize: int, crop: int) -> T.Compose:
    return T.Compose([T.Resize(resize), T.CenterCrop(crop), T.ToImage(), T.ToDtype(torch.float32, scale=True),
                      T.Normalize(MEAN, STD)])


def test_an_eval_pipeline_sizes_the_batches_and_equals_torchvisions(image_folder):
    transform = _eval_pipeline(60, 48)
    loader = fastloop.Loader(f"imagefolder:{image_folder}", split="val", batch_size=4, workers=2, transform=transform)
    reference = torchvision.datasets.ImageFolder(str(image_folder / "val"), transform=transform,
                                                 loader=torchvision.io.decode_image)
    got = torch.cat([images for images, _ in loader])
    labels = torch.cat([labels for _, labels in loader])
    assert got.shape == (len(reference), 3, 48, 48)
    std = torch.tensor(STD).view(3, 1, 1)
    for i, (want, label) in enumerate(reference):
        assert labels[i].item() == label
        levels = ((got[i] - want) * std * 255).abs()  # back in uint8 levels
        if reference.samples[i][0].endswith(".png"):  # the resize's bytes: kernel_parity.py's rule
            assert levels.max().item() < (1e-3 if torch_resize_is_fastloops() else 1 + 1e-3), reference.samples[i][0]
        else:  # libjpeg-turbo's decode as PIL's: the same bytes (fastloop decodes as PIL, torchvision.io too)
            assert levels.mean().item() <= 0.5 and levels.max().item() <= 2.0, (reference.samples[i][0], levels.max())


def test_a_non_square_size_comes_from_the_transform(image_folder):
    loader = fastloop.Loader(f"imagefolder:{image_folder}", batch_size=4, workers=1,
                             transform="Resize((40, 56)), RandomHorizontalFlip(), ToTensor()")
    images, _ = next(iter(loader))
    assert images.shape == (4, 3, 40, 56)


def test_a_given_image_size_must_agree_with_the_transforms(image_folder):
    source = f"imagefolder:{image_folder}"
    same = fastloop.Loader(source, split="val", batch_size=4, image_size=48, transform=_eval_pipeline(60, 48))
    assert next(iter(same))[0].shape == (4, 3, 48, 48)
    with pytest.raises(ValueError, match=r"transform ends in 48 x 48 images, but image_size is 64"):
        fastloop.Loader(source, split="val", image_size=64, transform=_eval_pipeline(60, 48))


def test_a_pipeline_whose_size_follows_each_image_stacks_while_the_sizes_agree(image_folder):
    """As DataLoader's collate: the first image's size, and the first image of another size named."""
    varied = fastloop.Loader(f"imagefolder:{image_folder}", split="val", batch_size=4, shuffle=False,
                             transform=T.Compose([T.Resize(60), T.ToImage(), T.ToDtype(torch.float32, scale=True)]))
    with pytest.raises(ValueError, match=r"\.(jpg|png): the transform made a 3 x \d+ x \d+ image.*the first image's"):
        for _ in varied:
            pass
    # With image_size given, each image is checked against it as it is made, and the first that differs is named.
    checked = fastloop.Loader(f"imagefolder:{image_folder}", split="val", batch_size=4, image_size=60,
                              transform="Resize(60), ToTensor()")
    with pytest.raises(ValueError, match=r"\.(jpg|png): the transform made a 3 x \d+ x \d+ image.*CenterCrop\(60\)"):
        for _ in checked:
            pass


@pytest.mark.parametrize("workers", [1, 2])
def test_same_sized_images_need_no_size_to_batch(tmp_path, workers):
    """A CIFAR-like folder of 32 x 32 PNGs through ToImage() and ToDtype alone: stacked as DataLoader stacks them."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(3)
    for c in ("a", "b"):
        (tmp_path / "train" / c).mkdir(parents=True)
        for i in range(3):
            Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(tmp_path / "train" / c / f"{i}.png")
    transform = T.Compose([T.ToImage(), T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)])
    loader = fastloop.Loader(f"imagefolder:{tmp_path}", batch_size=6, shuffle=False, transform=transform,
                             workers=workers)
    images, labels = next(iter(loader))
    assert images.shape == (6, 3, 32, 32)
    reference = torchvision.datasets.ImageFolder(str(tmp_path / "train"), transform=transform)
    for i in range(6):
        want, label = reference[i]
        assert torch.equal(images[i], want) and labels[i] == label, i


def test_the_cli_eval_transform_sizes_evaluation_predict_and_export(cli, tmp_path, image_folder):
    eval_transform = f"Resize(60), CenterCrop(48), ToTensor(), Normalize({MEAN}, {STD})"
    runs = tmp_path / "runs"
    run([cli, "train", "--data", f"imagefolder:{image_folder}", "--model", "small_cnn", "--max-steps", "2",
         "--batch-size", "8", "--transform", "RandomResizedCrop(32), ToTensor()", "--eval-transform", eval_transform,
         "--checkpoint-dir", runs, "--time-budget", "off"])
    info = fastloop.model_info(runs / "last.ckpt")
    assert (info["height"], info["width"]) == (48, 48)  # evaluation's size, not the 32 of training
    evaluated = run([cli, "eval", "--checkpoint", runs / "last.ckpt"]).stdout
    assert "12 images" in evaluated and "test-time augmentation: off" in evaluated
    predictions = tmp_path / "preds.csv"
    run([cli, "predict", "--checkpoint", runs / "last.ckpt", "--out", predictions, image_folder / "val"])
    assert len(predictions.read_text().splitlines()) == 1 + 12
    exported = tmp_path / "model.pt"
    run([cli, "export", "--checkpoint", runs / "last.ckpt", "--out", exported])
    module = torch.jit.load(str(exported))
    assert module(torch.zeros(1, 3, 48, 48)).shape == (1, 3)
