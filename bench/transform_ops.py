"""Each transform operation of fastloop against torchvision.transforms.v2.functional (ATen's kernels) on the same input.

One 224 x 224 RGB crop of a photograph, uint8, one thread on both sides (a loader worker runs one image on one
thread). fastloop's time per operation is ``fastloop._C._transform_time(spec, image, seed, runs)`` (the compiled
pipeline run in C++ on a fresh copy of the image each time, as a worker's decoded image) minus the same for an
identity spec (``RandomHorizontalFlip(p=0)``: the copy): what remains is the kernel as the loader's workers run it. torchvision's is the functional
call on the [C, H, W] tensor, as ``DataLoader(transform=...)`` runs it after ``PILToTensor``. Parameters are
RandAugment's at magnitude 9 of 31 where the operation is one of its ops. Each figure is the best of
``--repeats`` means over ``--calls`` calls. Run it on an idle machine:

    .venv/bin/python bench/transform_ops.py --data /tmp/photos --out bench/results/cpu-2core/transform_ops
"""

import argparse
import glob
import json
import os
import sys
import time
from typing import Callable, List, NamedTuple

import torch
import torchvision
import torchvision.transforms.v2.functional as F
from torchvision.io import decode_jpeg, read_file
from torchvision.transforms import InterpolationMode

import fastloop
from fastloop import _C

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_transforms import cpu_name  # noqa: E402

NEAREST, BILINEAR = InterpolationMode.NEAREST, InterpolationMode.BILINEAR


class Op(NamedTuple):
    name: str
    spec: str  # fastloop's spec running the operation with fixed parameters
    reference: Callable[[torch.Tensor], torch.Tensor]  # torchvision's functional call with the same ones


OPS: List[Op] = [
    Op("shear x 5.1 deg, nearest", "RandomAffine(0, shear=(5.14, 5.14))",
       lambda x: F.affine(x, 0.0, [0, 0], 1.0, [5.14, 0.0], NEAREST)),
    Op("shear y 5.1 deg, nearest", "RandomAffine(0, shear=(0, 0, 5.14, 5.14))",
       lambda x: F.affine(x, 0.0, [0, 0], 1.0, [0.0, 5.14], NEAREST)),
    Op("translate ~30 px, nearest", "RandomAffine(0, translate=(0.135, 0.135))",
       lambda x: F.affine(x, 0.0, [30, 0], 1.0, [0.0, 0.0], NEAREST)),
    Op("rotate 9 deg, nearest", "RandomRotation((9, 9))", lambda x: F.rotate(x, 9.0, NEAREST)),
    Op("rotate 9 deg, bilinear", "RandomRotation((9, 9), interpolation='bilinear')",
       lambda x: F.rotate(x, 9.0, BILINEAR)),
    Op("brightness 1.27", "ColorJitter(brightness=(1.27, 1.27))", lambda x: F.adjust_brightness(x, 1.27)),
    Op("contrast 1.27", "ColorJitter(contrast=(1.27, 1.27))", lambda x: F.adjust_contrast(x, 1.27)),
    Op("saturation 1.27", "ColorJitter(saturation=(1.27, 1.27))", lambda x: F.adjust_saturation(x, 1.27)),
    Op("hue 0.1", "ColorJitter(hue=(0.1, 0.1))", lambda x: F.adjust_hue(x, 0.1)),
    Op("sharpness 1.27", "RandomAdjustSharpness(1.27, p=1)", lambda x: F.adjust_sharpness(x, 1.27)),
    Op("posterize 7 bits", "RandomPosterize(7, p=1)", lambda x: F.posterize(x, 7)),
    Op("solarize 178.5", "RandomSolarize(178.5, p=1)", lambda x: F.solarize(x, 178.5)),
    Op("autocontrast", "RandomAutocontrast(p=1)", F.autocontrast),
    Op("equalize", "RandomEqualize(p=1)", F.equalize),
    Op("invert", "RandomInvert(p=1)", F.invert),
    Op("grayscale, 3 channels", "Grayscale(3)", lambda x: F.rgb_to_grayscale(x, 3)),
    Op("gaussian blur 23, sigma 1.5", "GaussianBlur(23, sigma=(1.5, 1.5))",
       lambda x: F.gaussian_blur(x, [23, 23], [1.5, 1.5])),
    Op("resize to 160, bilinear, antialias", "Resize(160)", lambda x: F.resize(x, [160], antialias=True)),
    Op("horizontal flip", "RandomHorizontalFlip(p=1)", F.horizontal_flip),
]
IDENTITY = "RandomHorizontalFlip(p=0)"


def best_mean_us(call: Callable[[], object], calls: int, repeats: int) -> float:
    """The best of `repeats` means over `calls` calls, in microseconds."""
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def photo(data: str, side: int = 224) -> torch.Tensor:
    """The centre side x side crop of the first JPEG under DATA/train, uint8 [3, side, side]."""
    files = sorted(glob.glob(os.path.join(data, "train", "*", "*.jp*g")))
    if not files:
        raise SystemExit(f"transform_ops: no JPEG under {data}/train/CLASS/ (scripts/make_photo_set.sh makes one)")
    return F.center_crop(decode_jpeg(read_file(files[0])), [side, side]).contiguous()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="DIR with DIR/train/CLASS/IMAGE.jpg")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", required=True, help="OUT.json and OUT.md")
    a = parser.parse_args()
    torch.set_num_threads(1)
    image = photo(a.data)
    def ours_us(spec: str) -> float:
        return min(_C._transform_time(spec, image, 0, a.calls) for _ in range(a.repeats)) * 1e6

    base = ours_us(IDENTITY)
    rows = []
    for op in OPS:
        assert op.reference(image).shape[0] == 3
        ours = ours_us(op.spec) - base
        theirs = best_mean_us(lambda: op.reference(image), a.calls, a.repeats)
        rows.append({"op": op.name, "spec": op.spec, "fastloop_us": ours, "torchvision_us": theirs,
                     "speedup": theirs / max(ours, 0.1)})
        print(json.dumps(rows[-1]), flush=True)
    meta = {"cpu": cpu_name(), "cores": os.cpu_count(), "torch": torch.__version__,
            "torchvision": torchvision.__version__, "fastloop": fastloop.__version__ if hasattr(fastloop, "__version__") else "",
            "image": list(image.shape), "copy_us": base, "calls": a.calls, "repeats": a.repeats}
    with open(a.out + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    lines = [f"# Transform operations: fastloop's kernels against torchvision.transforms.v2.functional (ATen)", "",
             f"{meta['cpu']}, {meta['cores']} cores, one thread each side; torch {meta['torch']}, torchvision "
             f"{meta['torchvision']}; one {image.shape[1]} x {image.shape[2]} RGB photo crop, uint8. fastloop's time is "
             f"its pipeline's run minus an identity pipeline's ({base:.1f} µs: the image's copy). "
             "`bench/transform_ops.py`.", "",
             "| operation | fastloop µs | torchvision µs | torchvision ÷ fastloop |", "|---|---:|---:|---:|"]
    lines += [f"| {r['op']} | {r['fastloop_us']:.1f} | {r['torchvision_us']:.1f} | {r['speedup']:.1f}× |" for r in rows]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
