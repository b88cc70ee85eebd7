"""The Python half of scripts/wheel_check.sh, run by the fresh venv's Python inside the sandbox that hides the
system's image libraries: ``import fastloop`` from the installed wheel, a ``fastloop.Loader`` with a torchvision
``transform=`` over JPEG, PNG, WebP and TIFF files, and a short ``fastloop.train()``.

Usage: python tools/wheel_check.py IMAGES WORK_DIR   (IMAGES/{train,val}/CLASS/IMAGE; prints one ``ok:`` line
per check and exits 1 at the first that fails)
"""

import ctypes
import os
import sys


def check(name: str, passed: bool, detail: str = "") -> None:
    print(f"{'ok' if passed else 'FAILED'}: {name}{': ' + detail if detail else ''}", flush=True)
    if not passed:
        sys.exit(1)


def main() -> None:
    images, work = sys.argv[1], sys.argv[2]
    # The sandbox hides the codecs: loading the system's libturbojpeg must fail here, or nothing is proven.
    try:
        ctypes.CDLL("libturbojpeg.so.0")
        hidden = False
    except OSError:
        hidden = True
    check("the system's libturbojpeg.so.0 is hidden", hidden)

    import torch
    from torchvision.transforms import v2 as T

    import fastloop

    site = os.path.dirname(os.path.dirname(fastloop.__file__))
    check("import fastloop", fastloop.__file__.startswith(sys.prefix), f"{fastloop.__version__} from {site}")
    maps = open("/proc/self/maps").read()
    bundled = sorted({line.split()[-1] for line in maps.splitlines() if "/fastloop.libs/" in line})
    check("codecs loaded from the wheel's fastloop.libs", bool(bundled), ", ".join(map(os.path.basename, bundled)))

    transform = T.Compose([
        T.RandomResizedCrop(24, scale=(0.5, 1)), T.RandomHorizontalFlip(),
        T.ToImage(), T.ToDtype(torch.float32, scale=True), T.Normalize([0.5] * 3, [0.25] * 3),
    ])
    loader = fastloop.Loader(f"imagefolder:{images}", batch_size=4, workers=2, transform=transform)
    seen, shapes = 0, set()
    for batch, labels in loader:
        seen += labels.numel()
        shapes.add(tuple(batch.shape[1:]))
    formats = sorted({name.rsplit(".", 1)[-1] for _, _, names in os.walk(images) for name in names})
    check("fastloop.Loader(transform=torchvision Compose)", seen > 0 and shapes == {(3, 24, 24)},
          f"{seen} images ({', '.join(formats)}) as {sorted(shapes)} batches, {loader.num_classes} classes")

    summary = fastloop.train(quiet=True, **{"data.source": f"imagefolder:{images}", "data.image_size": 24,
                                            "data.batch_size": 4, "run.max_steps": 2,
                                            "run.checkpoint_dir": os.path.join(work, "run-python")})
    check("fastloop.train()", summary["steps"] == 2 and os.path.exists(summary["checkpoint"] or ""),
          f"{summary['steps']} steps, checkpoint {summary['checkpoint']}")


if __name__ == "__main__":
    main()
