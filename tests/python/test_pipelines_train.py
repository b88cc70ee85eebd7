"""Issue 35's four benchmark pipelines (bench/python_transforms.py: crop-flip, SimCLR's, torchvision's
classification reference, RandAugment) train from the CLI and from ``fastloop.train``: each run succeeds
with a finite loss, records the train pipeline in its config and checkpoint and the eval pipeline in the
checkpoint's model info, and trains on the batches the torchvision object makes in ``fastloop.Loader``."""

import importlib.util
import json
import math
import pathlib
import subprocess
from typing import Callable, Dict, List

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

import torchvision.transforms as T
import torchvision.transforms.v2 as v2

import fastloop
from fastloop.transforms import compile_transform
from conftest import ROOT, run


def _bench_pipelines() -> Dict[str, Callable[[int], object]]:
    """bench/python_transforms.py's PIPELINES (name -> the torchvision Compose for a crop side): the very
    objects the benchmark times, so a change there is tested here."""
    spec = importlib.util.spec_from_file_location("python_transforms", ROOT / "bench" / "python_transforms.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PIPELINES


BENCH = _bench_pipelines()
SIZE = 32  # px: the crop side and --image-size (the bench's 224 has 49x the pixels)
MEAN_STD = "(0.485, 0.456, 0.406), (0.229, 0.224, 0.225)"
CROP_FLIP = f"RandomResizedCrop({SIZE}), RandomHorizontalFlip()"
#: the bench's pipelines as a CLI user types them after --transform
TEXTS = {
    "crop-flip": f"{CROP_FLIP}, ToTensor(), Normalize({MEAN_STD})",
    "simclr": f"{CROP_FLIP}, RandomApply([ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), RandomGrayscale(0.2), "
              "GaussianBlur(23), ToTensor()",
    "reference": f"{CROP_FLIP}, TrivialAugmentWide(), PILToTensor(), ConvertImageDtype(torch.float), "
                 f"Normalize({MEAN_STD}), RandomErasing(0.25)",
    "randaugment": f"{CROP_FLIP}, RandAugment(2, 9), ToTensor(), Normalize({MEAN_STD})",
}
NAMES = list(TEXTS)
STEPS = 2
#: the run's settings besides the data and the pipelines: 12 images a step, 36 in the train split
RUN = {"image_size": SIZE, "batch_size": 12, "max_steps": STEPS, "epochs": 1, "threads": 2, "workers": 1,
       "seed": 1}


def eval_text(name: str) -> str:
    """The evaluation pipeline that goes with TEXTS[name]: torchvision's Resize + CenterCrop, normalised
    as the training images were."""
    normalise = f", Normalize({MEAN_STD})" if "Normalize" in TEXTS[name] else ""
    return f"Resize({SIZE * 256 // 224}), CenterCrop({SIZE}), ToTensor(){normalise}"


def flags(settings: Dict[str, object]) -> List[str]:
    return [part for key, value in settings.items() for part in (f"--{key.replace('_', '-')}", str(value))]


def epoch_line(metrics: pathlib.Path) -> Dict[str, object]:
    """The run's one epoch line of its --metrics file, its losses checked finite."""
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    epochs = [line for line in lines if line["kind"] == "epoch"]
    assert len(epochs) == 1 and epochs[0]["step"] == STEPS, lines
    for key in ("train_loss", "test_loss"):
        assert epochs[0][key] is not None and math.isfinite(epochs[0][key]), epochs[0]
    return epochs[0]


def checkpoint_config(cli: pathlib.Path, checkpoint: pathlib.Path, tmp_path: pathlib.Path) -> Dict[str, object]:
    """The resolved config a checkpoint carries, read through `fastloop export`'s safetensors metadata."""
    out = tmp_path / "weights.safetensors"
    run([cli, "export", "--checkpoint", checkpoint, "--out", out])
    with safe_open(str(out), "pt") as f:
        return json.loads(f.metadata()["fastloop_config"])


def test_every_bench_pipeline_has_its_cli_spelling():
    assert set(TEXTS) == set(BENCH)


@pytest.mark.parametrize("name", NAMES)
def test_the_cli_trains_with_the_pipeline_and_records_it(cli, tmp_path, image_folder, name):
    checkpoints, metrics = tmp_path / "ckpt", tmp_path / "metrics.jsonl"
    done = run([cli, "train", "--data", f"imagefolder:{image_folder}", *flags(RUN), "--transform", TEXTS[name],
                "--eval-transform", eval_text(name), "--checkpoint-dir", checkpoints, "--metrics", metrics])
    printed = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("config "))[7:])
    assert (printed["data.transform"], printed["data.eval_transform"]) == (TEXTS[name], eval_text(name))
    assert f"after {STEPS} steps" in done.stdout
    epoch_line(metrics)
    saved = checkpoint_config(cli, checkpoints / "last.ckpt", tmp_path)
    assert (saved["data.transform"], saved["data.eval_transform"]) == (TEXTS[name], eval_text(name))
    assert fastloop.model_info(str(checkpoints / "last.ckpt"))["transform"] == eval_text(name)


def eval_object(name: str) -> object:
    """eval_text(name) as a torchvision.transforms.v2 object (the train pipelines are v1: both kinds go in)."""
    steps = [v2.Resize(SIZE * 256 // 224), v2.CenterCrop(SIZE), v2.ToImage(), v2.ToDtype(torch.float32, scale=True)]
    if "Normalize" in TEXTS[name]:
        steps.append(v2.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)))
    return v2.Compose(steps)


#: each spelling of the transform settings train() takes, one per pipeline (the object, then its eval object)
SETTINGS: Dict[str, Callable[[object, object, str], Dict[str, object]]] = {
    "crop-flip": lambda train, ev, source: {"data": source, "transform": train, "eval_transform": ev},
    "simclr": lambda train, ev, source: {"data": source, "data.transform": train, "data.eval_transform": ev},
    "reference": lambda train, ev, source: {"data": {"source": source, "transform": train, "eval_transform": ev}},
    "randaugment": lambda train, ev, source: {"data": source, "--transform": train, "--eval-transform": ev},
}


@pytest.mark.parametrize("name", NAMES)
def test_python_train_takes_the_torchvision_pipeline_object(tmp_path, image_folder, name):
    train_object, eval_obj = BENCH[name](SIZE), eval_object(name)
    settings = SETTINGS[name](train_object, eval_obj, f"imagefolder:{image_folder}")
    summary = fastloop.train(quiet=True, checkpoint_dir=str(tmp_path), metrics=str(tmp_path / "metrics.jsonl"),
                             **settings, **RUN)
    assert summary["steps"] == STEPS and not summary["stopped"] and math.isfinite(summary["test_loss"])
    # compiled as fastloop.Loader(transform=...) compiles it: the same spec, recorded in the config
    spec, eval_spec = compile_transform(train_object), compile_transform(eval_obj)
    assert spec == fastloop.Loader(f"imagefolder:{image_folder}", transform=train_object).transform
    assert spec.startswith(f"RandomResizedCrop(size=({SIZE}, {SIZE})") and "ToDtype" in eval_spec
    config = json.loads(summary["config"])
    assert (config["data.transform"], config["data.eval_transform"]) == (spec, eval_spec)
    epoch = epoch_line(tmp_path / "metrics.jsonl")
    assert epoch["test_loss"] == pytest.approx(summary["test_loss"])
    assert fastloop.model_info(summary["checkpoint"])["transform"] == eval_spec


#: a data folder that is not there: a run that got as far as loading its data would report it instead
MISSING = "imagefolder:/nonexistent/fastloop-test-data"


@pytest.mark.parametrize("setting", ["transform", "eval_transform", "data.transform"])
def test_python_train_refuses_a_lambda_in_the_compose_before_any_work(capfd, setting):
    pipeline = T.Compose([T.RandomResizedCrop(SIZE), T.Lambda(lambda image: image), T.ToTensor()])
    with pytest.raises(TypeError, match="Lambda is not supported.*RandomResizedCrop"):
        fastloop.train(data=MISSING, **{setting: pipeline}, **RUN)
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == ""


@pytest.mark.parametrize("mix", [v2.MixUp(alpha=0.5, num_classes=3), v2.CutMix(num_classes=3)])
def test_python_train_refuses_a_batch_transform_naming_its_mixup_settings(mix):
    kind = type(mix).__name__
    with pytest.raises(TypeError, match=f"{kind} in transform= is a batch transform.*mixup=ALPHA or cutmix=ALPHA"):
        fastloop.train(quiet=True, data=MISSING, transform=v2.Compose([v2.RandomResizedCrop(SIZE), mix]), **RUN)
    with pytest.raises(TypeError, match=f"{kind} in eval_transform= is a batch transform"):
        fastloop.train(quiet=True, data=MISSING, eval_transform=T.RandomChoice([mix]), **RUN)


@pytest.mark.parametrize("name", NAMES)
def test_a_run_trains_on_the_batches_the_torchvision_object_makes(loader_dump, tmp_path, image_folder, name):
    source = f"imagefolder:{image_folder}"
    out = tmp_path / "batches.safetensors"
    run([loader_dump, "--data", source, "--batch-size", 12, "--image-size", SIZE, "--seed", 1, "--no-channels-last",
         "--transform", TEXTS[name], "--dump-epoch", 0, "--dump-batches", 2, "--dump-out", out])
    dumped = load_file(str(out))
    piped = fastloop.Loader(source, batch_size=12, workers=1, image_size=SIZE, seed=1, transform=BENCH[name](SIZE))
    built_in = fastloop.Loader(source, batch_size=12, workers=1, image_size=SIZE, seed=1)
    ours = [images for _, (images, _) in zip(range(2), piped)]
    plain = [images for _, (images, _) in zip(range(2), built_in)]
    piped.close(), built_in.close()  # the epochs are left part-way: stop their workers now
    for k, images in enumerate(ours):
        assert images.shape == (12, 3, SIZE, SIZE) and images.dtype == torch.float32
        assert torch.equal(images, dumped[f"images_{k}"]), "the CLI's text and the object differ"
    same_as_built_in = all(torch.equal(a, b) for a, b in zip(ours, plain))
    assert same_as_built_in == (name == "crop-flip"), "(a) is the built-in augmentation; the others add to it"
    both = torch.cat(ours)
    if name == "simclr":  # no Normalize: ToTensor's [0, 1]; RandomGrayscale(0.2) greyed some of the 24
        assert 0 <= both.min() and both.max() <= 1
        assert any(torch.equal(x[0], x[1]) and torch.equal(x[1], x[2]) for x in both)
    else:
        assert both.min() < 0


def test_a_misspelt_operation_stops_the_cli_and_train_naming_it(cli, image_folder):
    text = TEXTS["randaugment"].replace("RandAugment", "RandAugmnet")
    args = [cli, "train", "--data", f"imagefolder:{image_folder}", *flags(RUN), "--transform", text]
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert done.returncode != 0
    assert "transform RandAugmnet is not supported" in done.stderr and "RandAugment," in done.stderr
    assert "test accuracy" not in done.stdout
    with pytest.raises(TypeError, match="RandAugmnet is not supported"):
        fastloop.train(quiet=True, data=f"imagefolder:{image_folder}", transform=text, **RUN)


@pytest.mark.parametrize("flag", ["--transform", "--eval-transform"])
@pytest.mark.parametrize("data", ["found", "missing"])
def test_a_bad_transform_stops_the_cli_before_it_prints_or_loads(cli, image_folder, flag, data):
    # checked with the other flags: no `perf auto:` or `config` line, and the data (even a missing folder) unread
    bad = TEXTS["randaugment"].replace("RandAugment", "RandAugmnet")
    source = f"imagefolder:{image_folder}" if data == "found" else MISSING
    args = [cli, "train", "--data", source, *flags(RUN), "--perf", "auto", flag, bad]
    done = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert done.returncode == 2, done.stdout
    lines = done.stdout.splitlines()
    assert any("transform RandAugmnet is not supported" in line for line in lines), done.stdout
    assert not [line for line in lines if line.startswith(("config ", "perf auto"))], done.stdout


@pytest.mark.parametrize("text", ["RandomResizedCrop(32), RandAugmnet(2, 9), ToTensor()",
                                  "RandomResizedCrop(32), RandomHorizontalFlip()"])
def test_a_bad_transform_stops_train_before_it_prints(capfd, image_folder, text):
    # the second ends with uint8 images: refused before the run too, with the loader's message
    with pytest.raises(TypeError, match="RandAugmnet is not supported|ends with uint8 images"):
        fastloop.train(data=f"imagefolder:{image_folder}", transform=text, **RUN)
    printed = capfd.readouterr()
    assert "config " not in printed.out and "perf auto" not in printed.out, printed.out
