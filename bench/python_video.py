#!/usr/bin/env python3
"""Video clips through fastloop.Loader against DataLoader over a Dataset that decodes with torchcodec's VideoDecoder
and its sampler, the same transform object on tv_tensors.Video, and against torchcodec's decode alone in one thread
(the decode limit: the same clips' frames, no transform, no loader).

The videos are made once under --work with Debian's ffmpeg from the 12 photographs of mate-backgrounds
(scripts/make_photo_set.sh installs them), four of each (a pan either way, a zoom in, a zoom out): 640x360, 30 fps,
10 s, H.264 as `-c:v libx264 -preset veryfast` writes it (libx264's keyframe interval and B-frames). 48 videos make
epochs of 6 batches of 8, so that 2 workers have batches to share (12 videos made epochs of one batch).
Clips: 16 frames 2 apart at random positions (torchcodec's clips_at_random_indices), transform
RandomResizedCrop(112) + RandomHorizontalFlip + ToDtype + Normalize, batches of 8. Per worker count the sides
alternate over --pairs rounds (fastloop, DataLoader, decode limit; then the reverse); clips/s is the median.
Writes OUT.json and OUT.md.

    flock /tmp/fastloop-bench.lock .venv/bin/python bench/python_video.py --work /tmp/videos \\
        --out bench/results/cpu-2core/python_video
"""
import argparse
import json
import os
import pathlib
import platform
import random
import statistics
import subprocess
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torchcodec.decoders import VideoDecoder
from torchcodec.samplers import clips_at_random_indices
from torchvision import tv_tensors
from torchvision.transforms import v2

import fastloop

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from python_loader import children_gone  # noqa: E402

PHOTOS = pathlib.Path("/usr/share/backgrounds/mate/nature")
FRAMES, BETWEEN = 16, 2


def videos_make(work: pathlib.Path, count: int, seconds: int) -> list:
    """WORK/CLASS/clip-K.mp4, made once: photograph k % 12 with motion k // 12 % 4 (a pan left to right, a zoom
    in, a pan right to left, a zoom out), so every video differs."""
    photos = sorted(PHOTOS.glob("*.jpg"))
    if not photos:
        raise SystemExit(f"no photographs in {PHOTOS}: apt-get install mate-backgrounds")
    paths = []
    frames = seconds * 30
    motions = [f"scale=1280:-2,crop=640:360:x='640*n/{frames}':y='(ih-360)/2'",
               f"scale=1280:-2,zoompan=z='1+0.5*on/{frames}':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=1:s=640x360:fps=30",
               f"scale=1280:-2,crop=640:360:x='640-640*n/{frames}':y='(ih-360)/3'",
               f"scale=1280:-2,zoompan=z='1.5-0.5*on/{frames}':x='iw/3-iw/zoom/3':y='ih/2-ih/zoom/2':d=1:s=640x360:fps=30"]
    for k in range(count):
        photo = photos[k % len(photos)]
        out = work / photo.stem.lower() / f"clip-{k // len(photos)}.mp4"
        paths.append(str(out))
        if out.exists():
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-loop", "1", "-framerate", "30", "-i",
                        str(photo), "-vf", motions[k // len(photos) % len(motions)], "-frames:v", str(frames), "-c:v",
                        "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", str(out)], check=True)
    return paths


def transform_make():
    return v2.Compose([v2.RandomResizedCrop(112, antialias=True), v2.RandomHorizontalFlip(),
                       v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize([0.43216, 0.394666, 0.37645], [0.22803, 0.22145, 0.216989])])


class TorchcodecClips(Dataset):
    """What a user writes today: a VideoDecoder per sample (torchcodec's default, exact seek mode), one clip by
    clips_at_random_indices, the transform on it as a tv_tensors.Video."""

    def __init__(self, paths, transform):
        self.paths, self.transform = paths, transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        clip = clips_at_random_indices(VideoDecoder(self.paths[i]), num_clips=1, num_frames_per_clip=FRAMES,
                                       num_indices_between_frames=BETWEEN)
        return self.transform(tv_tensors.Video(clip.data[0])), i


def epochs(loader):
    while True:
        yield from loader


def timed(batches, count, warmup):
    """clips/s over `count` batches after `warmup` untimed ones."""
    it = iter(batches)
    for _ in range(warmup):
        next(it)
    seen, start = 0, time.perf_counter()
    for _ in range(count):
        clips, _ = next(it)
        seen += clips.shape[0]
    return seen / (time.perf_counter() - start)


def decode_limit(paths, clips):
    """torchcodec's decode of random clips in this thread, nothing else: clips/s."""
    rng = random.Random(0)
    start = time.perf_counter()
    for _ in range(clips):
        clips_at_random_indices(VideoDecoder(rng.choice(paths)), num_clips=1, num_frames_per_clip=FRAMES,
                                num_indices_between_frames=BETWEEN)
    return clips / (time.perf_counter() - start)


def measure(side, workers, paths, a):
    transform = transform_make()
    if side == "fastloop":
        dataset = fastloop.VideoFiles(paths, list(range(len(paths))), num_frames_per_clip=FRAMES,
                                      num_indices_between_frames=BETWEEN)
        loader = fastloop.Loader(dataset, transform=transform, batch_size=a.batch_size, workers=workers)
    else:
        loader = DataLoader(TorchcodecClips(paths, transform), batch_size=a.batch_size, shuffle=True,
                            num_workers=workers, drop_last=True, persistent_workers=True)
    value = timed(epochs(loader), a.batches, a.warmup)
    del loader
    children_gone()
    return value


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="where the videos are made (once)")
    p.add_argument("--videos", type=int, default=48, help="videos (48: 6 batches of 8 an epoch)")
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--batches", type=int, default=6, help="timed batches per repetition")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--limit-clips", type=int, default=24, help="clips the decode limit times per repetition")
    p.add_argument("--pairs", type=int, default=2, help="rounds per worker count (order alternates)")
    p.add_argument("--out", required=True, help="OUT.json and OUT.md")
    a = p.parse_args()
    paths = videos_make(pathlib.Path(a.work), a.videos, a.seconds)
    rows = []
    for workers in map(int, a.workers.split(",")):
        reps = {"fastloop": [], "dataloader": [], "limit": []}
        for k in range(a.pairs):
            order = ["fastloop", "dataloader", "limit"]
            for side in order if k % 2 == 0 else reversed(order):
                reps[side].append(decode_limit(paths, a.limit_clips) if side == "limit"
                                  else measure(side, workers, paths, a))
        med = {s: statistics.median(v) for s, v in reps.items()}
        rows.append({"workers": workers, **{f"{s}_clips_per_s": v for s, v in med.items()}, "repetitions": reps})
        print(workers, {s: round(v, 1) for s, v in med.items()}, os.getloadavg(), flush=True)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    try:
        machine = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")) + \
            f", {os.cpu_count()} cores"
    except (OSError, StopIteration):
        pass
    result = {"torch": torch.__version__, "fastloop": fastloop.__version__, "ffmpeg": fastloop._C._video_libraries(),
              "machine": machine, "videos": len(paths), "seconds": a.seconds, "batch_size": a.batch_size,
              "load_before": os.getloadavg(), "rows": rows}
    pathlib.Path(a.out + ".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# Video clips: {len(paths)} videos of {a.seconds} s, 640x360 H.264, clips of {FRAMES} frames {BETWEEN} "
             f"apart, batch {a.batch_size}", "", f"{machine}; torch {torch.__version__}, {result['ffmpeg']}; "
             f"`{' '.join(sys.argv)}`", "",
             "| workers | fastloop.Loader clips/s | DataLoader + torchcodec clips/s | fastloop ÷ DataLoader | "
             "torchcodec decode alone, 1 thread, clips/s | fastloop ÷ decode limit |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['workers']} | {r['fastloop_clips_per_s']:.1f} | {r['dataloader_clips_per_s']:.1f} | "
                     f"{r['fastloop_clips_per_s'] / r['dataloader_clips_per_s']:.2f}× | {r['limit_clips_per_s']:.1f} | "
                     f"{r['fastloop_clips_per_s'] / r['limit_clips_per_s']:.2f}× |")
    pathlib.Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
