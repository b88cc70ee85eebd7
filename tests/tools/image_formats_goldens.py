"""The WebP, BMP, PNM and TIFF test images of tests/tools/make_image_goldens.py (which decodes them with PIL).

PIL writes what it can (BMP 1/8/24/32-bit, PBM/PGM/PPM raw, WebP, TIFF in most modes and compressions);
the layouts PIL reads but does not write (BMP 4-bit, 16-bit, RLE, OS/2 and top-down; PNM plain and odd
maxvals) are written byte by byte here. Files PIL opens but fastloop refuses (a float TIFF) and truncated
copies are written for the error tests, not decoded.
"""
import io
import struct

import numpy as np
from PIL import Image


def _bmp(pixels_rows, width, height, bits, palette=None, compression=0, masks=None, header=40, top_down=False):
    """A BMP file: rows (bytes, stored order, each padded by the caller or here), palette as (r, g, b)."""
    stride = ((width * bits + 31) >> 3) & ~3
    body = b"".join(r.ljust(stride, b"\0") for r in pixels_rows) if compression in (0, 3) else pixels_rows
    pal = b""
    if palette is not None:
        pal = b"".join(bytes([b, g, r]) + (b"" if header == 12 else b"\0") for r, g, b in palette)
    extra = b"".join(struct.pack("<I", m) for m in masks) if masks else b""
    if header == 12:
        info = struct.pack("<IHHHH", 12, width, height, 1, bits)
    else:
        info = struct.pack("<IiiHHIIiiII", 40, width, -height if top_down else height, 1, bits, compression,
                           len(body), 2835, 2835, len(palette) if palette else 0, 0)
    offset = 14 + len(info) + len(extra) + len(pal)
    return b"BM" + struct.pack("<IHHI", offset + len(body), 0, 0, offset) + info + extra + pal + body


def _bmp_files(rgb, width, height):
    out = {}
    rows = rgb[::-1]  # bottom row first
    r5, g5, b5 = (rows[..., 0] >> 3).astype(np.uint16), (rows[..., 1] >> 3).astype(np.uint16), (rows[..., 2] >> 3).astype(np.uint16)
    g6 = (rows[..., 1] >> 2).astype(np.uint16)
    out["rgb555.bmp"] = _bmp([(r << 10 | g << 5 | b).astype("<u2").tobytes() for r, g, b in zip(r5, g5, b5)], width, height, 16)
    out["rgb565.bmp"] = _bmp([(r << 11 | g << 5 | b).astype("<u2").tobytes() for r, g, b in zip(r5, g6, b5)], width, height,
                             16, compression=3, masks=[0xF800, 0x7E0, 0x1F])
    out["topdown.bmp"] = _bmp([row[:, ::-1].tobytes() for row in rgb], width, height, 24, top_down=True)
    palette = [(17 * i, 255 - 13 * i, (91 * i) % 256) for i in range(16)]
    index = ((rgb[..., 0].astype(np.int32) + rgb[..., 2]) // 32 % 16).astype(np.uint8)
    packed4 = lambda row: bytes((row[i] << 4) | (row[i + 1] if i + 1 < len(row) else 0) for i in range(0, len(row), 2))
    out["palette4.bmp"] = _bmp([packed4(r) for r in index[::-1]], width, height, 4, palette)
    out["os2.bmp"] = _bmp([r.tobytes() for r in index[::-1]], width, height, 8, palette, header=12)
    # RLE8: each row as runs of equal indices (encoded mode), one literal stretch (absolute mode), end of line.
    rle8, rle4 = b"", b""
    for r, row in enumerate(index[::-1]):
        x = 0
        if r % 3 == 0:  # absolute mode: 5 literal indices (odd: padded to a 16-bit boundary)
            rle8 += bytes([0, 5]) + row[:5].tobytes() + b"\0"
            x = 5
        while x < width:
            n = 1
            while x + n < width and row[x + n] == row[x] and n < 255:
                n += 1
            rle8 += bytes([n, row[x]])
            x += n
        rle8 += b"\0\0"
        for x in range(0, width, 2):  # RLE4: pairs of alternating indices
            n = min(2, width - x)
            rle4 += bytes([n, (row[x] << 4) | (row[x + 1] if n == 2 else 0)])
        rle4 += b"\0\0"
    out["rle8.bmp"] = _bmp(rle8 + b"\0\1", width, height, 8, palette, compression=1)
    out["rle4.bmp"] = _bmp(rle4 + b"\0\1", width, height, 4, palette, compression=2)
    return out


def _pnm_files(rgb, width, height):
    grey = rgb[..., 1]
    plain = lambda values, per_line: "\n".join(" ".join(str(v) for v in values[i:i + per_line])
                                               for i in range(0, len(values), per_line))
    out = {}
    out["plain.pgm"] = (f"P2\n# a comment\n{width} {height}\n255\n" + plain(grey.ravel().tolist(), 17) + "\n").encode()
    out["plain.ppm"] = (f"P3 {width}\n{height} 1000 # odd maxval\n" + plain((rgb.astype(int) * 1000 // 255).ravel().tolist(), 12)
                        + "\n").encode()
    bits = (grey > 128).astype(int)
    out["plain.pbm"] = (f"P1\n{width} {height}\n" + "\n".join("".join(str(b) for b in row) for row in bits) + "\n").encode()
    out["maxval100.ppm"] = f"P6 {width} {height} 100\n".encode() + (rgb.astype(int) * 100 // 255).astype(np.uint8).tobytes()
    g1000 = grey.astype(np.int64) * 4  # some values above 255 and below 1000
    out["maxval1000.pgm"] = f"P5\n{width} {height}\n1000\n".encode() + g1000.astype(">u2").tobytes()
    return out


def _tiff(im, **kw):
    buf = io.BytesIO()
    im.save(buf, format="TIFF", **kw)
    return buf.getvalue()


def _webp(im, **kw):
    buf = io.BytesIO()
    im.save(buf, format="WEBP", **kw)
    return buf.getvalue()


def make(out, photo_like, save, W, H):
    """Writes the images into `out`; returns {name: bytes} of those to decode as goldens."""
    rgb_arr = photo_like(W, H, 7)
    rgb = Image.fromarray(rgb_arr)
    alpha = Image.fromarray(photo_like(W, H, 8)[..., 0])
    rgba = rgb.copy()
    rgba.putalpha(alpha)
    files = {}
    files["lossy.webp"] = _webp(rgb, quality=80)
    files["lossy_alpha.webp"] = _webp(rgba, quality=70)
    files["lossless.webp"] = _webp(rgba, lossless=True)
    frames = [rgb, Image.fromarray(photo_like(W, H, 9)), rgb.transpose(Image.Transpose.FLIP_LEFT_RIGHT)]
    anim = io.BytesIO()
    frames[0].save(anim, format="WEBP", save_all=True, append_images=frames[1:], duration=100, quality=75)
    files["animated.webp"] = anim.getvalue()
    for name, im in [("rgb.bmp", rgb), ("gray.bmp", rgb.convert("L")), ("bilevel.bmp", rgb.convert("1")),
                     ("palette.bmp", rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=40)), ("rgba.bmp", rgba)]:
        buf = io.BytesIO()
        im.save(buf, format="BMP")
        files[name] = buf.getvalue()
    files.update(_bmp_files(rgb_arr, W, H))
    for name, im in [("rgb.ppm", rgb), ("gray.pgm", rgb.convert("L")), ("bilevel.pbm", rgb.convert("1")),
                     ("gray16.pgm", Image.fromarray(photo_like(W, H, 10)[..., 0].astype(np.uint16) * 3))]:
        buf = io.BytesIO()
        im.save(buf, format="PPM")
        files[name] = buf.getvalue()
    files.update(_pnm_files(rgb_arr, W, H))
    files["rgb.tif"] = _tiff(rgb)
    files["lzw.tif"] = _tiff(rgb, compression="tiff_lzw")
    files["deflate.tiff"] = _tiff(rgb, compression="tiff_adobe_deflate")
    files["packbits.tif"] = _tiff(rgb.convert("L"), compression="packbits")
    files["jpeg.tif"] = _tiff(rgb, compression="jpeg", quality=85)
    files["rgba.tif"] = _tiff(rgba, compression="tiff_lzw")
    files["bilevel.tif"] = _tiff(rgb.convert("1"), compression="group4")
    files["palette.tif"] = _tiff(rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=30))
    files["gray16.tif"] = _tiff(Image.fromarray(photo_like(W, H, 11)[..., 0].astype(np.uint16) * 3))
    cmyk = Image.fromarray(np.concatenate([photo_like(W, H, 12), photo_like(W, H, 13)[..., :1]], -1), "CMYK")
    files["cmyk.tif"] = _tiff(cmyk, compression="tiff_lzw")
    files["pages.tif"] = _tiff(rgb, save_all=True, append_images=[rgb.convert("L")])
    for name, data in files.items():
        (out / name).write_bytes(data)
    # Files PIL opens that fastloop refuses, and truncated copies: errors, not goldens.
    (out / "float.tif").write_bytes(_tiff(Image.fromarray(photo_like(W, H, 14)[..., 0].astype(np.float32) / 255)))
    for name in ("lossy.webp", "rgb.bmp", "rgb.ppm", "lzw.tif"):
        stem, ext = name.rsplit(".", 1)
        (out / f"truncated_{stem}.{ext}").write_bytes(files[name][: len(files[name]) * 2 // 3])
    return files
