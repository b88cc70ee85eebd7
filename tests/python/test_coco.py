"""fastloop.CocoDetection against torchvision's
``wrap_dataset_for_transforms_v2(torchvision.datasets.CocoDetection(root, annFile), target_keys=...)`` on a small
COCO set made here (JPEG and PNG photos, polygons, uncompressed and compressed RLE, crowd objects, an image
without annotations), and its masks against pycocotools on hundreds of random polygons (seeded)."""
import io
import json
import pathlib

import numpy as np
import pytest
import torch

import fastloop

pycocotools_mask = pytest.importorskip("pycocotools.mask")
torchvision = pytest.importorskip("torchvision")
from torchvision import tv_tensors  # noqa: E402

# pycocotools 2.0.11's mask.decode under numpy 2 warns about __array__'s copy keyword on every call
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")


def _photo(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Smooth colour fields with some noise: JPEG-like content, not white noise."""
    y, x = np.mgrid[0:height, 0:width]
    channels = [np.sin(x / rng.uniform(5, 30) + rng.uniform(0, 6)) * np.cos(y / rng.uniform(5, 30)) for _ in range(3)]
    image = (np.stack(channels, -1) * 100 + 128 + rng.normal(0, 8, (height, width, 3))).clip(0, 255)
    return image.astype(np.uint8)


def _polygon(rng: np.random.Generator, height: int, width: int) -> list:
    n = int(rng.integers(3, 12))
    cx, cy, r = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(1, max(height, width) / 2)
    angle = np.sort(rng.uniform(0, 2 * np.pi, n))
    xy = np.empty(2 * n)
    xy[0::2] = np.round(cx + r * np.cos(angle), 2)
    xy[1::2] = np.round(cy + r * np.sin(angle), 2)
    return xy.tolist()


def _runs(flat: np.ndarray) -> list:
    runs, current, count = [], 0, 0
    for v in flat:
        if v != current:
            runs.append(count)
            count, current = 0, v
        count += 1
    return runs + [count]


@pytest.fixture(scope="module")
def coco(tmp_path_factory) -> tuple:
    from PIL import Image

    rng = np.random.default_rng(53)
    root = tmp_path_factory.mktemp("coco")
    (root / "images").mkdir()
    sizes = {5: (48, 64, "jpg"), 2: (40, 30, "png"), 9: (33, 47, "jpg"), 4: (20, 24, "png")}
    images, annotations = [], []
    for image_id, (h, w, ext) in sizes.items():
        name = f"images/{image_id:06d}.{ext}"
        pixels = _photo(rng, h, w)
        if ext == "jpg":
            Image.fromarray(pixels).save(root / name, quality=90)
        else:
            Image.fromarray(pixels[..., 0], mode="L").save(root / name)  # grayscale: RGB when read, as PIL's convert
        images.append({"id": image_id, "file_name": name, "height": h, "width": w, "license": 1})
    next_id = 100
    for image_id in (5, 2, 9, 5, 9, 2, 5):  # image 4 keeps no annotation
        h, w, _ = sizes[image_id]
        kind = next_id % 4
        if kind == 0:
            segmentation = [_polygon(rng, h, w) for _ in range(int(rng.integers(1, 3)))]
        else:
            m = np.zeros((h, w), np.uint8, order="F")
            m[int(rng.integers(0, h // 2)):int(rng.integers(h // 2, h)), int(rng.integers(0, w // 2)):] = 1
            rle = pycocotools_mask.encode(m)
            if kind == 1:  # uncompressed: runs down the columns, 0s first
                segmentation = {"counts": _runs(m.flatten(order="F")), "size": [h, w]}
            else:
                segmentation = {"counts": rle["counts"].decode(), "size": [h, w]}
        if kind == 3:
            segmentation = [_polygon(rng, h, w)]
        bbox = [float(np.round(v, 2)) for v in (rng.uniform(0, w / 2), rng.uniform(0, h / 2), rng.uniform(1, w / 2),
                                                rng.uniform(1, h / 2))]
        annotations.append({"id": next_id, "image_id": image_id, "category_id": int(rng.integers(1, 4)), "bbox": bbox,
                            "area": float(bbox[2] * bbox[3]), "iscrowd": int(kind == 2), "segmentation": segmentation})
        next_id += 1
    ann_file = root / "instances.json"
    ann_file.write_text(json.dumps({"info": {}, "images": images, "annotations": annotations,
                                    "categories": [{"id": c, "name": f"c{c}"} for c in (1, 2, 3)]}))
    return root, ann_file


def _reference(root, ann_file, target_keys):
    import contextlib

    with contextlib.redirect_stdout(io.StringIO()):
        dataset = torchvision.datasets.CocoDetection(str(root), str(ann_file))
    return torchvision.datasets.wrap_dataset_for_transforms_v2(dataset, target_keys=target_keys)


@pytest.mark.parametrize("target_keys", [None, "all", ["masks", "boxes"]])
def test_samples_equal_torchvisions(coco, target_keys):
    root, ann_file = coco
    reference = _reference(root, ann_file, target_keys)
    dataset = fastloop.CocoDetection(root, ann_file, target_keys=target_keys)
    assert len(dataset) == len(reference) == 4
    assert dataset.ids == reference.ids == [2, 4, 5, 9]
    for i in range(len(dataset)):
        image, target = dataset[i]
        want_image, want = reference[i]
        want_pixels = torch.from_numpy(np.array(want_image)).permute(2, 0, 1)
        assert isinstance(image, tv_tensors.Image) and image.dtype == torch.uint8
        assert image.shape == want_pixels.shape
        levels = (image.int() - want_pixels.int()).abs().float()
        if dataset.image_path(i).endswith(".png"):
            assert levels.max().item() == 0
        else:  # libjpeg-turbo as PIL's: the tolerance of tests/python/test_transform_size.py
            assert levels.mean().item() <= 0.5 and levels.max().item() <= 2.0
        assert target.keys() == want.keys(), i
        for key, value in want.items():
            got = target[key]
            if key == "boxes":
                assert isinstance(got, tv_tensors.BoundingBoxes) and got.dtype == torch.float32
                assert got.format == value.format and got.canvas_size == value.canvas_size
                torch.testing.assert_close(got.as_subclass(torch.Tensor), value.as_subclass(torch.Tensor).float(),
                                           atol=1e-4, rtol=0)
            elif key == "masks":
                assert isinstance(got, tv_tensors.Mask) and got.dtype == torch.uint8
                assert torch.equal(got.as_subclass(torch.Tensor), value.as_subclass(torch.Tensor)), i
            elif key == "labels":
                assert got.dtype == torch.int64 and torch.equal(got, value)
            else:
                assert got == value, key


def test_target_keys_are_checked_as_torchvision():
    with pytest.raises(ValueError, match=r"Target keys \['nope'\] are not available"):
        fastloop._coco._target_keys(["boxes", "nope"])


def test_a_malformed_file_names_the_file_and_the_element(tmp_path):
    ann = tmp_path / "bad.json"
    ann.write_text('{"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [{"id": 1, "image_id": 1, '
                   '"category_id": 1, "bbox": [1, 2, 3]}]}')
    with pytest.raises(ValueError, match=r"bad\.json: annotations\[0\]\.bbox must be 4 numbers"):
        fastloop.CocoDetection(tmp_path, ann)


def test_a_missing_image_is_named_when_read(tmp_path):
    ann = tmp_path / "a.json"
    ann.write_text('{"images": [{"id": 1, "file_name": "gone.jpg"}], "annotations": []}')
    dataset = fastloop.CocoDetection(tmp_path, ann)  # reads the JSON only
    with pytest.raises(ValueError, match="gone.jpg"):
        dataset[0]


def test_polygon_masks_equal_pycocotools_byte_for_byte(tmp_path):
    """Hundreds of random polygons: inside and across the canvas edges, far outside, tiny and degenerate (all
    points on one line or one point), several per object; each object's mask equals
    mask.decode(mask.merge(mask.frPyObjects(polygons, h, w)))."""
    rng = np.random.default_rng(0)
    images, annotations, expected = [], [], {}
    for image_id in range(1, 41):
        h, w = int(rng.integers(1, 70)), int(rng.integers(1, 70))
        images.append({"id": image_id, "file_name": f"{image_id}.png", "height": h, "width": w})
        for k in range(int(rng.integers(1, 12))):
            polygons = []
            for _ in range(int(rng.integers(1, 4))):
                n = int(rng.integers(3, 9))
                style = rng.integers(0, 5)
                if style == 0:  # tiny: within a pixel or two
                    xy = rng.uniform(-1, 1, 2 * n) + np.repeat(rng.uniform(0, [w, h]), n).reshape(2, n).T.ravel()
                elif style == 1:  # degenerate: one line or one point
                    t = rng.uniform(0, 1, n)
                    x0, y0, x1, y1 = rng.uniform(-5, 75, 4) * (rng.random() < 0.8)
                    xy = np.stack([x0 + t * (x1 - x0), y0 + t * (y1 - y0)], 1).ravel()
                elif style == 2:  # far outside and across
                    xy = rng.uniform(-200, 300, 2 * n)
                else:
                    xy = rng.uniform(-10, 80, 2 * n)
                decimals = int(rng.integers(0, 4))
                polygons.append([float(v) for v in np.round(xy, decimals)])
            if len(polygons[0]) <= 4:
                continue
            ann_id = image_id * 100 + k
            annotations.append({"id": ann_id, "image_id": image_id, "category_id": 1, "bbox": [0, 0, 1, 1],
                                "segmentation": polygons})
            rles = pycocotools_mask.frPyObjects(polygons, h, w)
            expected[ann_id] = pycocotools_mask.decode(pycocotools_mask.merge(rles))
    assert len(expected) > 200
    ann = tmp_path / "polygons.json"
    ann.write_text(json.dumps({"images": images, "annotations": annotations}))
    dataset = fastloop.CocoDetection(tmp_path, ann, target_keys=["masks", "segmentation"])
    checked = 0
    for i, image in enumerate(images):
        target = dataset.target(i, canvas_size=(image["height"], image["width"]))
        if "masks" not in target:
            continue
        ids = [a["id"] for a in annotations if a["image_id"] == image["id"]]
        for mask, ann_id, polygons in zip(target["masks"], ids, target["segmentation"]):
            assert torch.equal(mask.as_subclass(torch.Tensor), torch.from_numpy(expected[ann_id])), ann_id
            checked += 1
    assert checked == len(expected)


def test_rle_masks_equal_pycocotools_byte_for_byte(tmp_path):
    """Random masks as compressed RLE (pycocotools' encode) and as uncompressed runs, on canvases from 1 x 1 up:
    each decodes to pycocotools' mask.decode of the same object."""
    rng = np.random.default_rng(1)
    images, annotations, expected = [], [], {}
    for image_id in range(1, 31):
        h, w = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        images.append({"id": image_id, "file_name": f"{image_id}.png", "height": h, "width": w})
        for k in range(int(rng.integers(1, 6))):
            m = np.asfortranarray((rng.random((h, w)) < rng.uniform(0, 1)).astype(np.uint8))
            if k % 2:
                segmentation = {"counts": _runs(m.flatten(order="F")), "size": [h, w]}
                rle = pycocotools_mask.frPyObjects(segmentation, h, w)
            else:
                rle = pycocotools_mask.encode(m)
                segmentation = {"counts": rle["counts"].decode(), "size": [h, w]}
            ann_id = image_id * 100 + k
            annotations.append({"id": ann_id, "image_id": image_id, "category_id": 1, "bbox": [0, 0, 1, 1],
                                "iscrowd": 1, "segmentation": segmentation})
            expected[ann_id] = pycocotools_mask.decode(rle)
            assert np.array_equal(expected[ann_id], m)
    ann = tmp_path / "rles.json"
    ann.write_text(json.dumps({"images": images, "annotations": annotations}))
    dataset = fastloop.CocoDetection(tmp_path, ann, target_keys=["masks", "segmentation"])
    for i, image in enumerate(images):
        target = dataset.target(i, canvas_size=(image["height"], image["width"]))
        ids = [a["id"] for a in annotations if a["image_id"] == image["id"]]
        want = [a["segmentation"] for a in annotations if a["image_id"] == image["id"]]
        assert target["segmentation"] == want
        for mask, ann_id in zip(target["masks"], ids):
            assert torch.equal(mask.as_subclass(torch.Tensor), torch.from_numpy(expected[ann_id])), ann_id


LOADER_KEYS = ["image_id", "boxes", "labels", "masks", "iscrowd"]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_loader_gives_torchvisions_targets_through_the_transform(coco, workers):
    import torchvision.transforms.v2 as T
    from torchvision import tv_tensors

    root, ann_file = coco
    transform = T.Compose([T.RandomHorizontalFlip(p=1), T.Resize((32, 40)), T.ClampBoundingBoxes(),
                           T.ToDtype(torch.float32, scale=True)])
    dataset = fastloop.CocoDetection(root, ann_file, target_keys=LOADER_KEYS)
    loader = fastloop.Loader(dataset, transform=transform, batch_size=3, shuffle=False, drop_last=False,
                             workers=workers)
    got = [(image, target) for images, targets in loader for image, target in zip(images, targets)]
    reference = _reference(root, ann_file, LOADER_KEYS)
    assert len(got) == len(reference) == len(dataset)
    for index, (image, target) in enumerate(got):
        pil, raw = reference[index]
        want_image, want = transform(tv_tensors.Image(torchvision.transforms.v2.functional.pil_to_tensor(pil)), raw)
        assert image.shape == want_image.shape == (3, 32, 40)
        assert (image - want_image).abs().max() <= 3 / 255  # JPEG decoders a level or two apart, then resized
        assert set(target) == set(want), index
        assert target["image_id"] == want["image_id"]
        if "boxes" not in want:  # an image without annotations: torchvision's {"image_id": id}
            continue
        assert isinstance(target["boxes"], tv_tensors.BoundingBoxes) and target["boxes"].canvas_size == (32, 40)
        torch.testing.assert_close(target["boxes"], want["boxes"], atol=1e-4, rtol=0)
        assert torch.equal(target["labels"], want["labels"])
        assert torch.equal(target["masks"], want["masks"])
        assert target["iscrowd"] == want["iscrowd"]


def test_a_loader_gives_a_list_of_images_of_their_own_sizes(coco):
    root, ann_file = coco
    dataset = fastloop.CocoDetection(root, ann_file)
    images, targets = next(iter(fastloop.Loader(dataset, batch_size=4, shuffle=False, workers=1)))
    assert isinstance(images, list) and len(images) == len(targets) == 4
    for index, (image, target) in enumerate(zip(images, targets)):
        want_image, want = dataset[index]
        assert image.dtype == torch.uint8 and image.shape == want_image.shape
        assert target["image_id"] == want["image_id"]
        if "boxes" in want:
            torch.testing.assert_close(target["boxes"], want["boxes"], atol=0, rtol=0)


def test_padded_targets_hold_each_samples_boxes_then_padding(coco):
    root, ann_file = coco
    dataset = fastloop.CocoDetection(root, ann_file)
    _, targets = next(iter(fastloop.Loader(dataset, batch_size=4, shuffle=False, workers=0)))
    padded = fastloop.pad_targets(targets)
    counts = [len(t["boxes"]) if "boxes" in t else 0 for t in targets]
    assert padded["counts"].tolist() == counts and 0 in counts  # image 4 has no annotation
    k = max(counts)
    assert padded["boxes"].shape == (4, k, 4) and padded["labels"].shape == (4, k)
    for i, t in enumerate(targets):
        n = counts[i]
        assert torch.equal(padded["boxes"][i, :n], t["boxes"].as_subclass(torch.Tensor)) if n else True
        assert torch.equal(padded["labels"][i, :n], t["labels"]) if n else True
        assert (padded["labels"][i, n:] == -1).all() and (padded["boxes"][i, n:] == 0).all()
        assert padded["valid"][i].tolist() == [j < n for j in range(k)]
    assert fastloop.pad_targets(targets, max_boxes=1)["boxes"].shape == (4, 1, 4)


def test_a_detection_loader_pickles_and_refuses_mixup(coco):
    import pickle

    import torchvision.transforms.v2 as T

    root, ann_file = coco
    dataset = fastloop.CocoDetection(root, ann_file, target_keys=["boxes", "labels", "masks"])
    loader = fastloop.Loader(dataset, transform=T.RandomHorizontalFlip(), batch_size=2, seed=3, workers=1)
    copy = pickle.loads(pickle.dumps(loader))
    assert copy.source.target_keys == dataset.target_keys
    for (a_images, a_targets), (b_images, b_targets) in zip(loader, copy):
        assert torch.equal(a_images[0], b_images[0]) if isinstance(a_images, list) else torch.equal(a_images, b_images)
        for a, b in zip(a_targets, b_targets):
            assert a.keys() == b.keys() and all(torch.equal(torch.as_tensor(a[k]), torch.as_tensor(b[k])) for k in a)
    with pytest.raises(TypeError, match="batch_transform"):
        fastloop.Loader(dataset, batch_transform=T.MixUp(num_classes=91), batch_size=2)


def test_ranks_share_an_epoch_of_a_detection_loader(coco):
    root, ann_file = coco
    dataset = fastloop.CocoDetection(root, ann_file)
    seen = []
    for rank in range(2):
        loader = fastloop.Loader(dataset, batch_size=1, rank=rank, world_size=2, seed=7, drop_last=False, workers=1)
        seen.append([t["image_id"] for _, targets in loader for t in targets])
    assert not set(seen[0]) & set(seen[1])
    assert sorted(seen[0] + seen[1]) == sorted(dataset.ids)


def _detection_block() -> str:
    import re

    page = (pathlib.Path(__file__).resolve().parents[2] / "docs/getting-started.md").read_text()
    section = page[page.index("### Detection and segmentation"):]
    return re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)


def test_the_getting_started_detection_example_trains(coco, tmp_path):
    """docs/getting-started.md's Faster R-CNN loop, made small: the images with annotations, 2 per batch, 96 px."""
    import subprocess
    import sys

    root, ann_file = coco
    data = json.loads(pathlib.Path(ann_file).read_text())
    used = {a["image_id"] for a in data["annotations"]}
    data["images"] = [i for i in data["images"] if i["id"] in used]  # SanitizeBoundingBoxes raises on the others
    small = tmp_path / "instances.json"
    small.write_text(json.dumps(data))
    block = _detection_block()
    for written, replaced in [('"/data/coco/train2017"', repr(str(root))),
                              ('"/data/coco/annotations/instances_train2017.json"', repr(str(small))),
                              ("batch_size=8", "batch_size=2"), ("v2.Resize((320, 320))", "v2.Resize((96, 96))"),
                              ("num_classes=91)", "num_classes=91, min_size=96, max_size=96)"),
                              ("opt.step()", "opt.step(); print(tuple(images.shape), float(loss))")]:
        assert written in block, f"the example no longer has {written!r}"
        block = block.replace(written, replaced)
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    assert len(lines) == len(data["images"]) // 2 and all(line.startswith("(2, 3, 96, 96) ") for line in lines)
