"""The device check's Python step: `import fastloop` from the build tree, its loader's batches on the CPU
and, with a GPU, through the pinned ring with non_blocking copies (bitwise equal to the CPU's), then a
PyTorch loop fed by DataLoader and by fastloop.Loader (bench/python_loop.py) on an image folder of JPEGs
made here, and detection (boxes, masks) and segmentation batches on the device equal to the CPU's.
Usage: python python_loader.py WORK_DIR RESULTS_DIR [cpu|device]"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import torch
import torchvision.transforms.v2 as T
from PIL import Image
from torchvision import tv_tensors

import fastloop

work, results, mode = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
print("fastloop", fastloop.__version__, "from", fastloop.__file__, "torch", torch.__version__)
cuda = torch.cuda.is_available()

# 1. CPU and (with a GPU) CUDA batches of the same seed and epoch are the same bits.
cpu = fastloop.Loader("synthetic:3x32x32:2048", batch_size=128, workers=2, seed=1)
batches = list(cpu)
assert len(batches) == len(cpu) == 16
if cuda:
    ring = fastloop.Loader("synthetic:3x32x32:2048", batch_size=128, workers=2, seed=1, device="cuda",
                           channels_last=True)
    for (x, y), (xc, yc) in zip(batches, ring):
        assert xc.is_cuda and yc.is_cuda and xc.is_contiguous(memory_format=torch.channels_last)
        assert torch.equal(x, xc.cpu()) and torch.equal(y, yc.cpu())
    print("cuda: 16 batches through the pinned ring equal the CPU's")

# 2. An image folder of JPEGs (smooth random content, 500x375 as ImageNet's typical photo).
folder = work / "jpegs"
per_class = 64 if mode == "device" else 4
rng = np.random.default_rng(0)
for c in range(8):
    d = folder / "train" / f"c{c}"
    d.mkdir(parents=True, exist_ok=True)
    for i in range(per_class):
        small = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
        Image.fromarray(small).resize((500, 375), Image.BICUBIC).save(d / f"{i}.jpg", quality=85)
args = [sys.executable, str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "python_loop.py"),
        "--data", f"imagefolder:{folder}", "--out", str(results / f"python_loop_{mode}")]
if mode == "device":
    args += ["--device", "cuda", "--model", "resnet50", "--workers", str(min(8, os.cpu_count())),
             "--batch-size", "128", "--steps", "20", "--warmup", "5", "--pairs", "2"]
else:
    args += ["--workers", "1", "--batch-size", "4", "--image-size", "64", "--steps", "2", "--warmup", "1", "--pairs", "1"]
subprocess.run(args, check=True)

# 3. Detection and segmentation batches on the device are the CPU's bits (CPU mode: the CPU's, made twice).
photos = sorted((folder / "train" / "c0").glob("*.jpg"))[:4]
coco = {"images": [], "annotations": [], "categories": [{"id": 1, "name": "square"}, {"id": 2, "name": "bar"}]}
for k, path in enumerate(photos):
    coco["images"].append({"id": k + 1, "file_name": str(path.relative_to(folder)), "height": 375, "width": 500})
    for j in range(2):
        x, y = 40.0 + 150 * j, 30.0 + 60 * k
        coco["annotations"].append({"id": 10 * k + j, "image_id": k + 1, "category_id": j + 1, "iscrowd": 0,
                                    "bbox": [x, y, 120.0, 90.0], "area": 10800.0,
                                    "segmentation": [[x, y, x + 120, y, x + 60, y + 90]]})
(work / "instances.json").write_text(json.dumps(coco))
class_maps = []
for k, path in enumerate(photos):
    m = np.zeros((375, 500), np.uint8)
    m[50 * k:50 * k + 100, 100:300] = 1 + k % 2
    class_maps.append(work / f"mask{k}.png")
    Image.fromarray(m, mode="L").save(class_maps[-1])
detection = fastloop.CocoDetection(folder, work / "instances.json", target_keys=["boxes", "labels", "masks", "image_id"])
segmentation = fastloop.SegmentationFiles(photos, class_maps)
pipelines = {
    "detection": (detection, T.Compose([T.RandomHorizontalFlip(), T.RandomZoomOut(fill={tv_tensors.Mask: 0, "others": 0}),
                                        T.Resize((96, 96)), T.SanitizeBoundingBoxes(), T.ToDtype(torch.float32, scale=True)])),
    "segmentation": (segmentation, T.Compose([T.RandomResize(64, 160), T.RandomHorizontalFlip(),
                                              T.RandomCrop(96, pad_if_needed=True, fill={tv_tensors.Mask: 255, "others": 0}),
                                              T.ToDtype(torch.float32, scale=True)])),
}
for name, (dataset, transform) in pipelines.items():
    def batches(device: str) -> list:
        return list(fastloop.Loader(dataset, transform=transform, batch_size=2, seed=5, workers=2, device=device))
    want, got = batches("cpu"), batches("cuda" if cuda else "cpu")
    assert len(want) == len(got) == 2
    for (x, t), (xd, td) in zip(want, got):
        assert xd.device.type == ("cuda" if cuda else "cpu") and torch.equal(x, xd.cpu())
        if name == "segmentation":
            assert td.device == xd.device and torch.equal(t, td.cpu())
            continue
        for a, b in zip(t, td):
            assert isinstance(b["boxes"], tv_tensors.BoundingBoxes) and isinstance(b["masks"], tv_tensors.Mask)
            for key in ("boxes", "labels", "masks"):
                assert b[key].device == xd.device and torch.equal(a[key], b[key].cpu()), (name, key)
    print(f"{'cuda' if cuda else 'cpu'}: {name} batches (images and targets) equal the CPU's")
