"""`fastloop train` and `fastloop eval` on video clips: `--data videofolder:DIR` and `videocsv:FILE` with a TorchScript
video model (a tiny 3-D convolution net scripted here), the clip flags, and each bad input's message. The videos are
made with the `ffmpeg` CLI, tiny (2 classes x 2 videos, 32 x 32, 8 frames), so the runs take seconds."""

import csv
import json
import math
import pathlib
import shutil
import subprocess
from typing import List

import pytest
import torch

from conftest import run

if shutil.which("ffmpeg") is None:
    pytest.fail("the video tests need the ffmpeg CLI (scripts/setup.sh installs it)")

FRAMES = 4  # --clip-frames of the runs
TRANSFORM = ("RandomResizedCrop(16, scale=(0.5, 1.0)), RandomHorizontalFlip(), ToDtype(torch.float32, scale=True), "
             "Normalize(mean=(0.43, 0.39, 0.38), std=(0.23, 0.22, 0.22))")
EVAL_TRANSFORM = "CenterCrop(16), ToDtype(torch.float32, scale=True), Normalize(mean=(0.43, 0.39, 0.38), std=(0.23, 0.22, 0.22))"


def _video(path: pathlib.Path, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                           f"{source}=size=32x32:rate=8", "-frames:v", "8", "-c:v", "libx264", "-preset", "veryfast",
                           "-pix_fmt", "yuv420p", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> pathlib.Path:
    """root/train/{bars,test}/{0,1}.mp4 and root/val/{bars,test}/0.mp4 (torchvision's Kinetics layout)."""
    root = tmp_path_factory.mktemp("videos")
    for split, count in (("train", 2), ("val", 1)):
        for name, source in (("bars", "smptebars"), ("test", "testsrc2")):
            for i in range(count):
                _video(root / split / name / f"{i}.mp4", source)
    return root


class Tiny3d(torch.nn.Module):
    """A clip classifier on [N, C, T, H, W] that checks the layout it is given (a Conv3d, pooling, a Linear)."""

    def __init__(self, frames: int, classes: int = 2) -> None:
        super().__init__()
        self.frames = frames
        self.conv = torch.nn.Conv3d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 5 and x.size(1) == 3 and x.size(2) == self.frames, "expected clips [N, 3, T, H, W]"
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3, 4)))


class Flat2d(torch.nn.Module):
    """An image model: its Conv2d refuses 5-D clips."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).mean(dim=(2, 3))


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    torch.jit.script(Tiny3d(FRAMES)).save(str(folder / "tiny3d.pt"))
    torch.jit.script(Flat2d()).save(str(folder / "flat2d.pt"))
    return folder


def _train_args(data: str, model: pathlib.Path, *extra: str, transform: str = TRANSFORM,
                eval_transform: str = EVAL_TRANSFORM) -> List[str]:
    return ["train", "--data", data, "--model", f"torchscript:{model}", "--clip-frames", str(FRAMES), "--clip-step", "2",
            "--transform", transform, "--eval-transform", eval_transform, "--batch-size", "2", "--device", "cpu",
            "--workers", "1", "--threads", "1", "--lr", "0.01", *extra]


def _fails(cli: pathlib.Path, args: List[str]) -> str:
    """Runs a command that must stop with a message (exit 2: bad input), never a crash; returns its stderr."""
    done = subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stderr


def test_train_and_eval_video_folder(cli, videos, models, tmp_path):
    checkpoints, metrics = tmp_path / "ckpt", tmp_path / "metrics.jsonl"
    done = run([cli, *_train_args(f"videofolder:{videos}", models / "tiny3d.pt", "--epochs", "2", "--log-every", "1",
                                  "--checkpoint-dir", checkpoints, "--metrics", metrics)])
    assert "test accuracy" in done.stdout and "(loss " in done.stdout
    assert "2 images" in done.stdout  # the val split: 2 videos, 1 clip each
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    losses = [line["train_loss"] for line in lines if line["kind"] == "step"]
    assert len(losses) == 4 and all(math.isfinite(loss) and loss > 0 for loss in losses), lines  # 2 epochs x 2 steps
    config = json.loads(done.stdout.split("config ", 1)[1].splitlines()[0])
    assert config["data.clip_frames"] == FRAMES and config["data.clip_layout"] == "CTHW"
    checkpoint = checkpoints / "last.ckpt"
    assert checkpoint.is_file()

    report = tmp_path / "eval.json"
    run([cli, "eval", "--checkpoint", checkpoint, "--workers", "1", "--out", report])
    result = json.loads(report.read_text())
    assert result["samples"] == 2 and result["classes"] == ["bars", "test"]
    assert 0.0 <= result["accuracy"] <= 1.0 and math.isfinite(result["loss"])
    assert sum(map(sum, result["confusion"])) == 2


def test_train_video_csv_and_flat_folder(cli, videos, models, tmp_path):
    listing = tmp_path / "train.csv"
    with open(listing, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["path", "label", "start", "end"])  # empty start/end: whole videos
        for path in sorted((videos / "train").rglob("*.mp4")):
            writer.writerow([path, path.parent.name, "", ""])
    done = run([cli, *_train_args(f"videocsv:{listing}", models / "tiny3d.pt", "--max-steps", "1",
                                  "--clips-per-video", "2", "--clip-sampler", "regular")])
    assert "no test split" in done.stdout
    # The flat layout root/CLASS/VIDEO (here the train folder alone): a train split without a test split.
    done = run([cli, *_train_args(f"videofolder:{videos}/train", models / "tiny3d.pt", "--max-steps", "1",
                                  "--clip-layout", "CTHW", "--clip-sampler", "random_timestamps")])
    assert "no test split" in done.stdout


def test_bad_video_inputs_are_named(cli, videos, models, tmp_path):
    tiny = models / "tiny3d.pt"
    missing = tmp_path / "missing"
    err = _fails(cli, _train_args(f"videofolder:{missing}", tiny))
    assert f"no folder {missing}" in err and "--data" in err

    empty = tmp_path / "empty"
    (empty / "cat").mkdir(parents=True)
    (empty / "cat" / "notes.txt").write_text("no video here")
    err = _fails(cli, _train_args(f"videofolder:{empty}", tiny))
    assert f"{empty}/cat: no videos in this class folder" in err
    err = _fails(cli, _train_args(f"videofolder:{empty}/cat", tiny))
    assert "holds no class folders" in err and "--data" in err

    # A model that takes images, not clips: the probe names the model, the batch and the layout flag.
    err = _fails(cli, _train_args(f"videofolder:{videos}", models / "flat2d.pt"))
    assert f"torchscript:{models / 'flat2d.pt'}" in err and "[2, 3, 4, 16, 16]" in err and "--clip-layout CTHW" in err
    # The clips as [N, T, C, H, W]: the layout the model does not take.
    err = _fails(cli, _train_args(f"videofolder:{videos}", tiny, "--clip-layout", "TCHW"))
    assert "[2, 4, 3, 16, 16]" in err and "--clip-layout TCHW" in err
    # The built-in (image) models.
    err = _fails(cli, ["train", "--data", f"videofolder:{videos}", "--device", "cpu", "--max-steps", "1"])
    assert "--model small_cnn is not supported with video clips" in err and "torchscript:FILE.pt" in err
    err = _fails(cli, _train_args(f"videofolder:{videos}", tiny, "--clips-per-video", "0"))
    assert "--clips-per-video: must be in [1, 4096]" in err
    err = _fails(cli, _train_args(f"videofolder:{videos}", tiny, "--clip-seconds", "0.5"))
    assert "--clip-seconds: is for --clip-sampler random_timestamps" in err
    err = _fails(cli, _train_args(f"videofolder:{videos}", tiny, "--mixup", "0.2"))
    assert "--mixup is not supported with video clips" in err

    listing = tmp_path / "list.csv"
    listing.write_text(f"path,label\n{videos}/train/bars/0.mp4,bars\n{tmp_path}/gone.mp4,test\n")
    err = _fails(cli, _train_args(f"videocsv:{listing}", tiny))
    assert f"{listing} line 3: {tmp_path}/gone.mp4: no such video file" in err
    bars = f"{videos}/train/bars/0.mp4"
    for start, end, words in (("abc", "", "line 3, column 'start': 'abc' is not a number of seconds"),
                              ("", "-0.5", "line 3, column 'end': -0.5 is negative"),
                              ("0.5", "0.25", "line 3, column 'end': 0.25 is not after the start (0.5)")):
        listing.write_text(f"path,label,start,end\n{bars},bars,,\n{bars},test,{start},{end}\n")
        err = _fails(cli, _train_args(f"videocsv:{listing}", tiny))
        assert f"{listing} {words}" in err, err
    # a part shorter than a clip (frames 5-7 of 8 for 4 frames 2 apart) under --clip-policy error: named when read
    listing.write_text(f"path,label,start,end\n{bars},bars,0.6,\n{bars},test,,\n")
    err = _fails(cli, _train_args(f"videocsv:{listing}", tiny, "--clip-policy", "error", "--clip-sampler", "regular"))
    assert f"{listing} line 2: {bars}: a clip of 4 frames 2 apart from frame 5 runs past frame 7, the last in its " \
           "range [0.6 s, end)" in err, err
    err = _fails(cli, _train_args(f"videofolder:{videos}", tiny, "--clip-sampler", "regular_timestamps"))
    assert "--clip-sampler regular_timestamps: takes --clips-every SECONDS" in err
    err = _fails(cli, _train_args(f"videofolder:{videos}", tiny, "--clips-every", "0.5"))
    assert "--clips-every: is for --clip-sampler regular_timestamps" in err
    err = _fails(cli, _train_args(f"videofolder:{videos}", tiny, transform="UniformTemporalSubsample(0), " + TRANSFORM))
    assert "UniformTemporalSubsample(num_samples) takes one whole number of frames" in err
    err = _fails(cli, ["train", "--data", "synthetic:3x16x16:8", "--max-steps", "1", "--device", "cpu", "--transform",
                       "UniformTemporalSubsample(2), ToDtype(torch.float32, scale=True)"])
    assert "UniformTemporalSubsample(2) picks frames of video clips, and these data are images" in err


def _clip_batches(loader_dump, tmp_path, flags, count):
    from safetensors.torch import load_file

    out = tmp_path / "cli.safetensors"
    run([loader_dump, *flags, "--dump-epoch", "1", "--dump-batches", str(count), "--dump-out", out])
    tensors = load_file(str(out))
    return [(tensors[f"images_{k}"], tensors[f"labels_{k}"]) for k in range(count)]


def test_cli_clips_equal_fastloop_loaders(loader_dump, videos, tmp_path):
    """The CLI's train batches (tests/loader_dump.cpp) equal fastloop.Loader's for the same settings: a CSV list's
    start/end ranges, --clip-sampler regular_timestamps with --clips-every, UniformTemporalSubsample in --transform."""
    import fastloop
    from torchvision.transforms import v2

    listing = tmp_path / "train.csv"
    rows = [(p, p.parent.name, start, end) for p, (start, end) in
            zip(sorted((videos / "train").rglob("*.mp4")), [("0.24", "0.74"), ("", "0.49"), ("0.49", ""), ("", "")])]
    listing.write_text("path,label,start,end\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    common = ["--batch-size", "2", "--seed", "3", "--workers", "1", "--no-channels-last", "--clip-frames", "3"]
    models = {}
    for frames in (3, 2):  # the run checks its model on a clip batch: one that takes the clips' frames
        models[frames] = tmp_path / f"tiny3d_{frames}.pt"
        torch.jit.script(Tiny3d(frames)).save(str(models[frames]))
    steady = [v2.RandomResizedCrop(16, scale=(0.5, 1.0)), v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True),
              v2.Normalize(mean=(0.43, 0.39, 0.38), std=(0.23, 0.22, 0.22))]
    cases = [(["--data", f"videocsv:{listing}", "--clip-sampler", "regular", "--clips-per-video", "2", "--transform",
               TRANSFORM, "--model", f"torchscript:{models[3]}"],
              fastloop.video_csv(listing, num_frames_per_clip=3, num_clips=2, sampler="regular", output_format="CTHW"),
              TRANSFORM),
             (["--data", f"videofolder:{videos}/train", "--clip-sampler", "regular_timestamps", "--clips-every", "0.25",
               "--clip-seconds", "0.125", "--transform", "UniformTemporalSubsample(2), " + TRANSFORM, "--model",
               f"torchscript:{models[2]}"],
              fastloop.VideoFolder(videos / "train", num_frames_per_clip=3, sampler="regular_timestamps",
                                   seconds_between_clip_starts=0.25, seconds_between_frames=0.125, output_format="CTHW"),
              v2.Compose([v2.UniformTemporalSubsample(2), *steady]))]
    for flags, dataset, transform in cases:
        loader = fastloop.Loader(dataset, transform=transform, batch_size=2, workers=2, seed=3)
        loader.set_epoch(1)
        ours = list(loader)
        theirs = _clip_batches(loader_dump, tmp_path, common + flags, len(ours))
        assert len(ours) >= 2
        for (images, labels), (cli_images, cli_labels) in zip(ours, theirs):
            assert torch.equal(images, cli_images) and torch.equal(labels, cli_labels), flags
    assert ours[0][0].shape[2] == 2 and len(cases[1][1]) == 4 * 3  # 1 s videos: clips at 0, 0.25, 0.5 (0.75 + 0.25 > 1)


def test_train_regular_timestamps_with_temporal_subsample(cli, videos, tmp_path):
    torch.manual_seed(0)
    model = tmp_path / "tiny3d_2.pt"
    torch.jit.script(Tiny3d(2)).save(str(model))  # checks that its clips hold 2 frames
    done = run([cli, *_train_args(f"videofolder:{videos}", model, "--clip-sampler", "regular_timestamps",
                                  "--clips-every", "0.5", "--epochs", "1",
                                  transform="UniformTemporalSubsample(2), " + TRANSFORM,
                                  eval_transform="UniformTemporalSubsample(2), " + EVAL_TRANSFORM)])
    assert "test accuracy" in done.stdout
    config = json.loads(done.stdout.split("config ", 1)[1].splitlines()[0])
    assert config["data.clip_sampler"] == "regular_timestamps" and config["data.clips_every"] == 0.5


def test_getting_started_cli_video_example_runs(cli, videos, tmp_path):
    """docs/getting-started.md's CLI video example (a scripted r3d_18, train, eval), run as written on the small
    folder with shorter, smaller clips and one epoch."""
    import re
    import shlex
    import sys

    from conftest import ROOT

    page = (ROOT / "docs/getting-started.md").read_text()
    section = page[page.index("### Video clips"):page.index("## Using a trained model")]
    block = re.search(r"^```sh\n(.*?)^```$", section, re.M | re.S).group(1)
    for written, ran in (("build/fastloop", shlex.quote(str(cli))), (".venv/bin/python", shlex.quote(sys.executable)),
                         ("/data/kinetics", shlex.quote(str(videos))), ("num_classes=400", "num_classes=2"),
                         ("--clip-frames 16", "--clip-frames 4"), ("RandomResizedCrop(112)", "RandomResizedCrop(32)"),
                         ("Resize(128), CenterCrop(112)", "Resize(36), CenterCrop(32)"),
                         ("--batch-size 8 --epochs 10", "--batch-size 2 --epochs 1 --device cpu --workers 1")):
        assert written in block, written
        block = block.replace(written, ran)
    done = subprocess.run(["bash", "-euc", block], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    result = json.loads((tmp_path / "eval.json").read_text())
    assert result["samples"] == 2 and math.isfinite(result["loss"])
