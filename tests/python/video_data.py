"""Small generated videos for the video tests (test_video*.py), made with the `ffmpeg` CLI (Debian's FFmpeg 5.1,
the libraries fastloop opens at run time): moving test patterns in a class-folder layout, and the codecs and
containers fastloop's parity is checked on."""

import pathlib
import shutil
import subprocess
from typing import List

import pytest

if shutil.which("ffmpeg") is None:
    pytest.fail("the video tests need the ffmpeg CLI (scripts/setup.sh installs it)")


def ffmpeg(*args: str) -> None:
    done = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def make_clips(root: pathlib.Path) -> pathlib.Path:
    """root/clips/CLASS/*.mp4: four 3 s moving test patterns, 320x240 at 30 fps, H.264 with B-frames (libx264's
    default), a keyframe every 30 frames; and root/short.mp4, 10 frames (shorter than a clip of 16)."""
    for cls, sources in (("pattern", ["testsrc2=size=320x240:rate=30", "mandelbrot=size=320x240:rate=30"]),
                         ("rgb", ["rgbtestsrc=size=320x240:rate=30", "testsrc=size=320x240:rate=30"])):
        (root / "clips" / cls).mkdir(parents=True)
        for k, source in enumerate(sources):
            ffmpeg("-f", "lavfi", "-i", source, "-t", "3", "-c:v", "libx264", "-preset", "veryfast", "-g", "30",
                   "-pix_fmt", "yuv420p", str(root / "clips" / cls / f"{k}.mp4"))
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "10", "-c:v", "libx264",
           "-pix_fmt", "yuv420p", str(root / "short.mp4"))
    return root


def make_videos(root: pathlib.Path) -> pathlib.Path:
    """make_clips' videos; static.mp4, a lossless still picture (every frame the same bytes); odd_width.mp4 (a width
    not a multiple of 32); VP9/webm, HEVC/mkv, AV1/mkv and MPEG-4/avi (B-frames, no pts)."""
    make_clips(root)
    ffmpeg("-f", "lavfi", "-i", "smptebars=size=320x240:rate=30", "-t", "1", "-c:v", "libx264", "-qp", "0",
           "-pix_fmt", "yuv444p", str(root / "static.mp4"))
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=360x200:rate=25", "-t", "2", "-c:v", "libx264", "-g", "25",
           "-pix_fmt", "yuv420p", str(root / "odd_width.mp4"))
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2", "-c:v", "libvpx-vp9", "-deadline",
           "realtime", "-cpu-used", "8", str(root / "vp9.webm"))
    one_second = ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "1"]
    ffmpeg(*one_second, "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-g", "12",
           str(root / "hevc.mkv"))
    ffmpeg(*one_second, "-c:v", "libsvtav1", "-preset", "12", "-g", "12", str(root / "av1.mkv"))
    ffmpeg(*one_second, "-c:v", "mpeg4", "-bf", "2", "-g", "12", str(root / "mpeg4.avi"))  # no pts in AVI
    return root


def clip_paths(videos: pathlib.Path) -> List[str]:
    return sorted(str(p) for p in (videos / "clips").rglob("*.mp4"))
