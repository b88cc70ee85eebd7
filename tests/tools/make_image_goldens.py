"""Writes the image goldens of tests/test_image_decode.cpp and tests/test_imagefolder.cpp.

Run with the project venv (its PIL and torchvision are the references):
    .venv/bin/python tests/tools/make_image_goldens.py      # writes tests/golden/images/
Test images are made here with PIL (nothing downloaded): JPEGs in RGB (4:2:0 and 4:4:4), greyscale,
progressive and Adobe CMYK; PNGs in RGB, RGBA, greyscale, palette with transparency and 16-bit greyscale;
WebP lossy, lossy with alpha, lossless and animated (image_formats_goldens.py); BMP, PNM and TIFF in
the layouts PIL writes, plus those it only reads, written byte by byte there; and truncated copies. Goldens: each image as PIL's Image.open(f).convert("RGB") decodes it (raw HWC
bytes, NAME.rgb); resized crops by torchvision.transforms.v2.functional.resized_crop(..., antialias=True)
of the PIL-decoded image for given boxes; Resize(size*256/224)+CenterCrop geometry; and the listing of an
ImageFolder tree (files to create, then torchvision's classes and (path, target) samples).
"""
import io
import json
import os
import pathlib
import tempfile

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision.transforms.v2 import functional as F

import image_formats_goldens

OUT = pathlib.Path(__file__).resolve().parent.parent / "golden" / "images"
W, H = 61, 47  # odd sizes: partial MCUs, uneven DCT scaling


def photo_like(w, h, seed):
    """Smooth gradients, an edge and mild noise: a JPEG of it has realistic blocks, not noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 100 * np.sin(x / 9.0) * np.cos(y / 13.0)
    g = 60 + 150 * (x + y) / (w + h)
    b = np.where(x > 0.6 * w + 0.2 * y, 220.0, 40.0)
    img = np.stack([r, g, b], -1) + rng.normal(0, 6, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def save(im, name, **kw):
    buf = io.BytesIO()
    im.save(buf, format=name.split(".")[-1].replace("jpg", "jpeg").upper(), **kw)
    (OUT / name).write_bytes(buf.getvalue())
    return buf.getvalue()


def make_images():
    rgb = Image.fromarray(photo_like(W, H, 0))
    files = {}
    files["rgb.jpg"] = save(rgb, "rgb.jpg", quality=90)
    files["rgb444.jpg"] = save(rgb, "rgb444.jpg", quality=85, subsampling=0)
    files["progressive.jpg"] = save(rgb, "progressive.jpg", quality=80, progressive=True)
    files["gray.jpg"] = save(rgb.convert("L"), "gray.jpg", quality=90)
    # Several iMCUs each way, for region decodes (crops start and end inside and across them).
    large = Image.fromarray(photo_like(211, 157, 6))
    files["large.jpg"] = save(large, "large.jpg", quality=85)
    files["large422.jpg"] = save(large, "large422.jpg", quality=85, subsampling=1)
    cmyk = Image.fromarray(np.concatenate([photo_like(W, H, 1), photo_like(W, H, 2)[..., :1]], -1), "CMYK")
    files["cmyk.jpg"] = save(cmyk, "cmyk.jpg", quality=90)
    files["rgb.png"] = save(rgb, "rgb.png")
    rgba = np.concatenate([photo_like(W, H, 3), photo_like(W, H, 4)[..., :1]], -1)
    files["rgba.png"] = save(Image.fromarray(rgba, "RGBA"), "rgba.png")
    files["gray.png"] = save(rgb.convert("L"), "gray.png")
    pal = rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=50)
    files["palette.png"] = save(pal, "palette.png", transparency=3)
    g16 = (photo_like(W, H, 5)[..., 0].astype(np.uint16) * 3)  # values up to 765: PIL clips above 255
    files["gray16.png"] = save(Image.fromarray(g16), "gray16.png")
    (OUT / "truncated.jpg").write_bytes(files["rgb.jpg"][: len(files["rgb.jpg"]) // 2])
    (OUT / "truncated.png").write_bytes(files["rgb.png"][: len(files["rgb.png"]) // 2])
    (OUT / "not_an_image.jpg").write_bytes(b"this is text, not a JPEG\n")
    files.update(image_formats_goldens.make(OUT, photo_like, save, W, H))
    decoded = {}
    for name in files:
        with Image.open(OUT / name) as im:
            arr = np.asarray(im.convert("RGB"))
        (OUT / (name.replace(".", "_") + ".rgb")).write_bytes(arr.tobytes())
        decoded[name] = {"width": arr.shape[1], "height": arr.shape[0], "pixels": name.replace(".", "_") + ".rgb"}
    return decoded


def make_crops():
    with Image.open(OUT / "rgb.png") as im:
        img = torch.from_numpy(np.asarray(im.convert("RGB")).copy()).permute(2, 0, 1)  # uint8 CHW
    crops = []
    for k, (box, size) in enumerate([((5, 7, 40, 30), (16, 16)), ((10, 10, 12, 9), (32, 32)),
                                     ((0, 0, H, W), (20, 24)), ((3, 20, 25, 41), (25, 41))]):
        out = F.resized_crop(img, *box, size=list(size), antialias=True)
        name = f"crop{k}.chw"
        (OUT / name).write_bytes(out.contiguous().numpy().tobytes())
        crops.append({"image": "rgb.png", "box": list(box), "size": list(size), "pixels": name})
    return crops


def make_eval_geometry():
    rows = []
    for h, w, size in [(375, 500, 224), (500, 375, 224), (47, 61, 224), (300, 300, 160), (333, 999, 224), (81, 80, 64)]:
        resize = size * 256 // 224
        resized = F.resize(torch.zeros(1, h, w, dtype=torch.uint8), [resize], antialias=True)
        rh, rw = resized.shape[-2:]
        marker = torch.arange(rh * rw).reshape(1, rh, rw)
        crop = F.center_crop(marker, [size])
        top, left = divmod(int(crop[0, 0, 0]), rw)
        rows.append({"height": h, "width": w, "size": size, "resized_height": rh, "resized_width": rw,
                     "top": top, "left": left})
    return rows


FOLDER_FILES = [  # relative to the root; every name ImageFolder could trip on
    "b/1.jpg", "b/0.JPG", "b/notes.txt", "b/x.jpeg.bak", "B/z.png", "a/sub/x.jpg", "a/sub-dir/y.jpg",
    "a/sub dir/w.Png", "a/a.webp", "a/sub/deeper/q.tif", "a b/k.PPM", "a-b/m.bmp", ".hidden/h.jpg",
    "Zed/c.pgm", "Zed/d.TIFF", "Zed/e.jpeg", "Zed/é.jpg", "Zed/f.JPG",
]


def make_folder():
    with tempfile.TemporaryDirectory() as tmp:
        for rel in FOLDER_FILES:
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "wb").close()
        ds = torchvision.datasets.ImageFolder(tmp, loader=lambda p: p)
        samples = [[os.path.relpath(p, tmp), t] for p, t in ds.samples]
    return {"files": FOLDER_FILES, "classes": ds.classes, "samples": samples}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    golden = {"pil": Image.__version__, "torchvision": torchvision.__version__, "decoded": make_images(),
              "crops": make_crops(), "eval_geometry": make_eval_geometry(), "folder": make_folder()}
    (OUT / "goldens.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {len(list(OUT.iterdir()))} files, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
