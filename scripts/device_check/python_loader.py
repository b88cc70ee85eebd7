"""The device check's Python step: `import fastloop` from the build tree, its loader's batches on the CPU
and, with a GPU, through the pinned ring with non_blocking copies (bitwise equal to the CPU's), then a
PyTorch loop fed by DataLoader and by fastloop.Loader (bench/python_loop.py) on an image folder of JPEGs
made here. Usage: python python_loader.py WORK_DIR RESULTS_DIR [cpu|device]"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import torch
from PIL import Image

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
