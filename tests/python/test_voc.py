"""fastloop.VOCSegmentation and fastloop.SegmentationFiles against torchvision's
``wrap_dataset_for_transforms_v2(torchvision.datasets.VOCSegmentation(...))`` on a small VOC tree made here (JPEG
photos whose colours follow their class maps; palette PNG masks with classes 0..20 and 255 borders, one of them a
4-bit palette PNG; a greyscale mask for SegmentationFiles): samples equal, fastloop.Loader's batches equal to
torchvision's transform of the same samples, random crops the same for any worker count and aligned, and bad
input named."""
import re

import numpy as np
import pytest
import torch

import fastloop

torchvision = pytest.importorskip("torchvision")
import torchvision.transforms.v2 as T  # noqa: E402
from torchvision import tv_tensors  # noqa: E402
from torchvision.transforms.v2.functional import pil_to_tensor  # noqa: E402

# VOC's colour map (its devkit's labelcolormap): the colour of class k, 255 the border's.
VOC_PALETTE = np.zeros((256, 3), np.uint8)
for _k in range(256):
    _r = _g = _b = 0
    _c = _k
    for _j in range(8):
        _r |= ((_c >> 0) & 1) << (7 - _j)
        _g |= ((_c >> 1) & 1) << (7 - _j)
        _b |= ((_c >> 2) & 1) << (7 - _j)
        _c >>= 3
    VOC_PALETTE[_k] = (_r, _g, _b)

SIZES = [(30, 40), (37, 29), (50, 50), (45, 33), (41, 52)]  # (height, width) of each sample
NAMES = [f"2007_00{i:04d}" for i in range(len(SIZES))]


def _class_map(rng: np.random.Generator, height: int, width: int, classes: int) -> np.ndarray:
    """Rectangles of random classes on background 0, each outlined with VOC's 255 border."""
    mask = np.zeros((height, width), np.uint8)
    for _ in range(4):
        h, w = int(rng.integers(8, height // 2 + 8)), int(rng.integers(8, width // 2 + 8))
        y, x = int(rng.integers(0, height - 6)), int(rng.integers(0, width - 6))
        mask[y:y + h, x:x + w] = 255
        mask[y + 1:y + h - 1, x + 1:x + w - 1] = int(rng.integers(1, classes))
    return mask


def _photo(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """Each class in its VOC colour (the border a grey), with a little noise: the image follows the mask."""
    colours = VOC_PALETTE.astype(np.int16).copy()
    colours[255] = (128, 128, 128)
    image = colours[mask] + rng.normal(0, 3, mask.shape + (3,))
    return image.clip(0, 255).astype(np.uint8)


def _palette_png(path, mask: np.ndarray, bits: int = 8) -> None:
    from PIL import Image

    image = Image.fromarray(mask, "P")
    image.putpalette(VOC_PALETTE.ravel().tolist())
    image.save(path, bits=bits) if bits != 8 else image.save(path)


@pytest.fixture(scope="module")
def voc(tmp_path_factory):
    from PIL import Image

    rng = np.random.default_rng(53)
    root = tmp_path_factory.mktemp("voc")
    base = root / "VOCdevkit" / "VOC2012"
    for folder in ("JPEGImages", "SegmentationClass", "ImageSets/Segmentation"):
        (base / folder).mkdir(parents=True)
    for i, (name, (h, w)) in enumerate(zip(NAMES, SIZES)):
        four_bit = i == 3  # its classes 0..15 and no border: a 4-bit palette PNG
        mask = _class_map(rng, h, w, 16 if four_bit else 21)
        if four_bit:
            mask[mask == 255] = 15
        Image.fromarray(_photo(rng, mask)).save(base / "JPEGImages" / f"{name}.jpg", quality=95)
        _palette_png(base / "SegmentationClass" / f"{name}.png", mask, bits=4 if four_bit else 8)
    (base / "ImageSets/Segmentation/train.txt").write_text("\n".join(NAMES) + "\n")
    (base / "ImageSets/Segmentation/val.txt").write_text(NAMES[1] + "\n")
    return root


def _reference(root, image_set="train"):
    return torchvision.datasets.wrap_dataset_for_transforms_v2(
        torchvision.datasets.VOCSegmentation(root, year="2012", image_set=image_set))


def _assert_jpeg_close(image: torch.Tensor, want: torch.Tensor) -> None:
    """libjpeg-turbo as PIL's: the tolerance of tests/python/test_coco.py (tests/python/test_transform_size.py)."""
    assert image.shape == want.shape
    levels = (image.int() - want.int()).abs().float()
    assert levels.mean().item() <= 0.5 and levels.max().item() <= 2.0


def test_samples_equal_torchvisions_wrapper(voc):
    dataset = fastloop.VOCSegmentation(voc, year="2012", image_set="train")
    reference = _reference(voc)
    assert len(dataset) == len(reference) == len(NAMES)
    assert dataset.images == reference.images and dataset.masks == reference.masks == reference.targets
    for i in range(len(dataset)):
        image, mask = dataset[i]
        want_image, want_mask = reference[i]
        assert isinstance(image, tv_tensors.Image) and image.dtype == torch.uint8
        _assert_jpeg_close(image, pil_to_tensor(want_image))
        assert isinstance(mask, tv_tensors.Mask) and mask.dtype == torch.uint8 and mask.shape == (1, *SIZES[i])
        assert torch.equal(mask.as_subclass(torch.Tensor), want_mask.as_subclass(torch.Tensor)), NAMES[i]
    assert (dataset[0][1] == 255).any() and dataset[0][1][dataset[0][1] != 255].max() <= 20
    assert len(fastloop.VOCSegmentation(voc, image_set="val")) == 1


def test_segmentation_files_reads_palette_and_greyscale_masks(voc, tmp_path):
    from PIL import Image

    base = voc / "VOCdevkit" / "VOC2012"
    grey = np.arange(30 * 40, dtype=np.uint8).reshape(30, 40) % 7
    Image.fromarray(grey, "L").save(tmp_path / "grey.png")
    images = [base / "JPEGImages" / f"{NAMES[0]}.jpg", base / "JPEGImages" / f"{NAMES[3]}.jpg"]
    masks = [tmp_path / "grey.png", base / "SegmentationClass" / f"{NAMES[3]}.png"]
    dataset = fastloop.SegmentationFiles(images, masks)
    assert len(dataset) == 2
    for (image, mask), image_path, mask_path in zip(dataset, images, masks):
        _assert_jpeg_close(image, pil_to_tensor(Image.open(image_path).convert("RGB")))
        assert torch.equal(mask.as_subclass(torch.Tensor), pil_to_tensor(Image.open(mask_path)))
    assert torch.equal(dataset[0][1][0], torch.from_numpy(grey))


def _deterministic():
    return [T.RandomHorizontalFlip(p=1), T.Resize((40, 48)), T.Pad(4, fill=0)]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_loader_gives_torchvisions_transform_of_the_samples(voc, workers):
    # fill=0 for images and masks alike: fastloop's compile_transform takes no per-type fill dict yet
    transform = T.Compose(_deterministic() + [T.ToDtype(torch.float32, scale=True)])
    dataset = fastloop.VOCSegmentation(voc)
    loader = fastloop.Loader(dataset, transform=transform, batch_size=2, shuffle=False, drop_last=False,
                             workers=workers)
    batches = list(loader)
    assert [images.shape[0] for images, _ in batches] == [2, 2, 1]
    reference = _reference(voc)
    index = 0
    for images, masks in batches:
        assert images.dtype == torch.float32 and images.shape[1:] == (3, 48, 56)
        assert masks.dtype == torch.uint8 and masks.shape == (images.shape[0], 48, 56)
        for image, mask in zip(images, masks):
            pil, raw_mask = reference[index]
            want_image, want_mask = transform(tv_tensors.Image(pil_to_tensor(pil)), raw_mask)
            assert (image - want_image).abs().max() <= 3 / 255  # JPEG decoders a level or two apart, then resized
            assert torch.equal(mask, want_mask.as_subclass(torch.Tensor)[0]), NAMES[index]
            index += 1


def test_random_crops_agree_for_any_worker_count_and_keep_masks_aligned(voc):
    transform = T.Compose(_deterministic() + [T.RandomCrop(36), T.ToDtype(torch.float32, scale=True)])
    dataset = fastloop.VOCSegmentation(voc)
    runs = [list(fastloop.Loader(dataset, transform=transform, batch_size=2, shuffle=False, drop_last=False,
                                 workers=workers, seed=7)) for workers in (0, 2)]
    for (images0, masks0), (images2, masks2) in zip(*runs):
        assert torch.equal(images0, images2) and torch.equal(masks0, masks2)
    # Each crop's mask matches the uncropped reference's at some offset, and the image at one of those offsets.
    uncropped = T.Compose(_deterministic() + [T.ToDtype(torch.float32, scale=True)])
    reference = _reference(voc)
    samples = [(image, mask) for images, masks in runs[0] for image, mask in zip(images, masks)]
    for index, (image, mask) in enumerate(samples):
        assert image.shape == (3, 36, 36) and mask.shape == (36, 36)
        pil, raw_mask = reference[index]
        full_image, full_mask = uncropped(tv_tensors.Image(pil_to_tensor(pil)), raw_mask)
        full_mask = full_mask.as_subclass(torch.Tensor)[0]
        errors = [(image - full_image[:, t:t + 36, l:l + 36]).abs().max().item()
                  for t in range(48 - 36 + 1) for l in range(56 - 36 + 1)
                  if torch.equal(mask, full_mask[t:t + 36, l:l + 36])]
        assert errors and min(errors) <= 3 / 255, NAMES[index]


def test_batches_are_the_same_whether_the_consumer_keeps_them_or_drops_them(voc):
    """The loader recycles the memory of the batches the consumer dropped (data/loader/batch_buffers.h): the
    batches made in it are those made while every earlier batch is still held."""
    transform = T.Compose(_deterministic() + [T.RandomCrop(36), T.ToDtype(torch.float32, scale=True)])
    dataset = fastloop.VOCSegmentation(voc)
    loader = fastloop.Loader(dataset, transform=transform, batch_size=2, workers=2, seed=7)
    kept = [batch for _ in range(4) for batch in loader]  # epochs 0..3
    loader = fastloop.Loader(dataset, transform=transform, batch_size=2, workers=2, seed=7)
    dropped = [(images.clone(), masks.clone()) for _ in range(4) for images, masks in loader]
    assert len(kept) == len(dropped) == 4 * (len(NAMES) // 2)
    for (images, masks), (images_dropped, masks_dropped) in zip(kept, dropped):
        assert torch.equal(images, images_dropped) and torch.equal(masks, masks_dropped)


def test_a_missing_mask_is_named(voc, tmp_path):
    base = voc / "VOCdevkit" / "VOC2012"
    images = [base / "JPEGImages" / f"{name}.jpg" for name in NAMES[:2]]
    missing = tmp_path / "missing.png"
    dataset = fastloop.SegmentationFiles(images, [base / "SegmentationClass" / f"{NAMES[0]}.png", missing])
    with pytest.raises(ValueError, match=re.escape(f"masks[1]: {missing}: no such file")):
        fastloop.Loader(dataset, batch_size=2, workers=0)
    with pytest.raises(ValueError, match=re.escape(str(missing))):
        dataset[1]


def test_a_mask_of_another_size_names_both_files(voc):
    base = voc / "VOCdevkit" / "VOC2012"
    image, mask = base / "JPEGImages" / f"{NAMES[0]}.jpg", base / "SegmentationClass" / f"{NAMES[1]}.png"
    dataset = fastloop.SegmentationFiles([image], [mask])
    message = f"mask {mask} is 29x37 pixels but its image {image} is 40x30"
    with pytest.raises(ValueError, match=re.escape(message)):
        dataset[0]
    with pytest.raises(ValueError, match=re.escape(message)):
        list(fastloop.Loader(dataset, transform=T.Compose([T.ToDtype(torch.float32, scale=True)]), batch_size=1,
                             workers=1))


def test_an_rgb_mask_is_refused_naming_the_file(voc, tmp_path):
    from PIL import Image

    base = voc / "VOCdevkit" / "VOC2012"
    rgb = tmp_path / "rgb.png"
    Image.fromarray(VOC_PALETTE[np.zeros((30, 40), np.uint8)]).save(rgb)
    dataset = fastloop.SegmentationFiles([base / "JPEGImages" / f"{NAMES[0]}.jpg"], [rgb])
    with pytest.raises(ValueError, match=re.escape(f"mask {rgb}: an RGB PNG") + ".*palette or greyscale"):
        dataset[0]
    with pytest.raises(ValueError, match=re.escape(f"mask {rgb}: an RGB PNG")):
        list(fastloop.Loader(dataset, batch_size=1, workers=1,
                             transform=T.Compose([T.ToDtype(torch.float32, scale=True)])))


def test_bad_arguments_are_refused_as_torchvision_refuses_them(voc, tmp_path):
    for kwargs in ({"year": "2013"}, {"image_set": "test"}, {"year": 2012}):
        with pytest.raises(ValueError) as want:
            torchvision.datasets.VOCSegmentation(voc, **kwargs)
        with pytest.raises(ValueError) as got:
            fastloop.VOCSegmentation(voc, **kwargs)
        assert str(got.value) == str(want.value)
    assert "image_set" in str(got.value) or "year" in str(got.value)
    with pytest.raises(RuntimeError, match="Dataset not found"):
        fastloop.VOCSegmentation(tmp_path)
    with pytest.raises(FileNotFoundError, match="trainval.txt"):
        fastloop.VOCSegmentation(voc, image_set="trainval")
    with pytest.raises(ValueError, match="2 images but 1 masks"):
        fastloop.SegmentationFiles(["a.jpg", "b.jpg"], ["a.png"])


def test_a_loader_state_resumes_mid_epoch(voc):
    transform = T.Compose(_deterministic() + [T.ToDtype(torch.float32, scale=True)])
    dataset = fastloop.VOCSegmentation(voc)
    loader = fastloop.Loader(dataset, transform=transform, batch_size=2, shuffle=True, workers=1)
    batches = iter(loader)
    next(batches)
    state = loader.state_dict()
    rest = list(batches)
    resumed = fastloop.Loader(dataset, transform=transform, batch_size=2, shuffle=True, workers=0)
    resumed.load_state_dict(state)
    for (images, masks), (want_images, want_masks) in zip(resumed, rest, strict=True):
        assert torch.equal(images, want_images) and torch.equal(masks, want_masks)
