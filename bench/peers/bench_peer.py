#!/usr/bin/env python3
"""PyTorch peer of `fastloop bench`: the same cells (model x row) trained and evaluated in PyTorch Python
with this venv's torch/torchvision (the LibTorch fastloop links), models from tests/tools/reference_models.py,
the same batch, threads, data and protocol (warm-up steps untimed, then `repeat` timed repetitions of
`steps` training steps and `eval_steps` evaluation batches; median img/s). Data goes through a DataLoader
with torchvision transforms on PIL images, as seed 001 did. Rows with no PyTorch equivalent report
"n/a: reason", as does every cell on image folders and shards (the grid does not send the peer its
--image-size; `fastloop bench loader --compare-python` compares the image loader with ImageFolder).

Input: a JSON object (file named by --cells, or stdin) with
  cells [{model, row}], batch_size, steps, eval_steps, warmup, repeat, threads, device, data.
steps 0 means one epoch of the train split per repetition, eval_steps 0 the whole test split, and warm-up
then counts epochs. With FASTLOOP_PEER_COMPILE=1 (or "compile": true in the input) each model runs through
torch.compile (Inductor, default mode; train and eval each compile in their warm-up, which must be >= 1), and each
phase's warm-up seconds, compile included, go to stderr as `bench_peer compile: {json}` lines: the compile time
kept apart from the steady-state img/s (bench/peers/compile_table.py reads them). Output on stdout: {"torch": version, "cells": [{model, row, status, train_img_per_s,
eval_img_per_s, train_img_per_s_all, eval_img_per_s_all}]}. Progress goes to stderr.

    echo '{"cells":[{"model":"small_cnn","row":"baseline"}],"batch_size":32,"steps":2,"eval_steps":2,
           "warmup":1,"repeat":1,"threads":2,"device":"cpu","data":"synthetic:1x28x28"}' |
      .venv/bin/python bench/peers/bench_peer.py
"""
import argparse
import contextlib
import gzip
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the PyTorch twins of the built-in models, parity-tested against fastloop's (tests/test_models.cpp)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "tools"))
from reference_models import SmallCNN, make_model  # noqa: E402

SYNTHETIC_TRAIN, SYNTHETIC_TEST = 2048, 512  # fastloop's synthetic splits (data/sources/source.cpp)
ENCODED_KINDS = ("imagefolder", "shards")    # decoded by fastloop's loader at --image-size; not held here
ENCODED_NA = "n/a: the peer reads in-memory data only; image folders: `bench loader --compare-python`"
# The workers4/workers8 rows ask for more workers than cores on purpose (the seed's settings).
warnings.filterwarnings("ignore", message="This DataLoader will create")


# ---- data: uint8 NHWC arrays and labels, as torchvision's CIFAR10 keeps them -------------------------

def load_split_arrays(spec):
    """(train_images, train_labels, test_images, test_labels) as uint8 [N, H, W, C] and int64 [N]; None for
    image folders and shards, whose cells are n/a here."""
    kind, _, arg = spec.partition(":")
    if kind in ENCODED_KINDS:
        return None
    if kind == "synthetic":
        shape, _, n = arg.partition(":")
        c, h, w = (int(v) for v in (shape or "3x32x32").split("x"))
        n = int(n) if n else SYNTHETIC_TRAIN
        rng = np.random.default_rng(0)
        images = rng.integers(0, 256, size=(n + SYNTHETIC_TEST, h, w, c), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n + SYNTHETIC_TEST).astype(np.int64)
        return images[:n], labels[:n], images[n:], labels[n:]
    if kind == "cifar10":
        def read(names):
            raw = np.concatenate([np.fromfile(os.path.join(arg, f), dtype=np.uint8).reshape(-1, 3073) for f in names])
            return raw[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy(), raw[:, 0].astype(np.int64)
        return (*read([f"data_batch_{i}.bin" for i in range(1, 6)]), *read(["test_batch.bin"]))
    if kind in ("fashion-mnist", "mnist"):
        folder = arg or "/usr/share/datasets/fashion-mnist"
        def idx(name):
            path = os.path.join(folder, name)
            opener = gzip.open if not os.path.exists(path) else open
            with opener(path if os.path.exists(path) else path + ".gz", "rb") as f:
                data = f.read()
            dims = data[3]
            shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
            return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
        train_x, test_x = idx("train-images-idx3-ubyte")[..., None], idx("t10k-images-idx3-ubyte")[..., None]
        return (train_x, idx("train-labels-idx1-ubyte").astype(np.int64),
                test_x, idx("t10k-labels-idx1-ubyte").astype(np.int64))
    raise ValueError(f"data {spec!r}: the peer reads synthetic[:CxHxW[:N]], cifar10:DIR, fashion-mnist[:DIR], mnist:DIR")


class ArrayDataset(Dataset):
    def __init__(self, images, labels, transform):
        self.images, self.labels, self.transform = images, labels, transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        image = self.images[i]
        pil = Image.fromarray(image[..., 0] if image.shape[-1] == 1 else image)
        return self.transform(pil), int(self.labels[i])


def normalize_for(images):
    flat = images.reshape(-1, images.shape[-1]).astype(np.float64) / 255.0
    return transforms.Normalize(flat.mean(0).tolist(), flat.std(0).tolist())


def endless(loader):
    """Batches without end; a new epoch starts when one runs out (as fastloop's BatchStream)."""
    while True:
        yield from loader


class DeviceAugment:
    """data-on-device: the uint8 train split on the device, pad + random crop + flip + normalize as tensor ops."""

    def __init__(self, images, labels, batch_size, pad, mean, std, device):
        self.images = torch.from_numpy(images).permute(0, 3, 1, 2).contiguous().to(device)  # uint8 NCHW
        self.labels = torch.from_numpy(labels).to(device)
        self.batch_size, self.pad, self.device = batch_size, pad, device
        self.mean = torch.tensor(mean, device=device).view(1, -1, 1, 1) * 255
        self.std = torch.tensor(std, device=device).view(1, -1, 1, 1) * 255

    def __iter__(self):
        n, (_, c, h, w) = len(self.images), self.images.shape
        order = torch.randperm(n, device=self.device)
        rows, cols = torch.arange(h, device=self.device), torch.arange(w, device=self.device)
        for start in range(0, n - self.batch_size + 1, self.batch_size):
            index = order[start:start + self.batch_size]
            b = len(index)
            padded = F.pad(self.images[index], (self.pad,) * 4)
            dy = torch.randint(0, 2 * self.pad + 1, (b, 1), device=self.device)
            dx = torch.randint(0, 2 * self.pad + 1, (b, 1), device=self.device)
            flip = torch.rand(b, 1, device=self.device) < 0.5
            y = (rows[None] + dy)[:, None, :, None]
            x = (torch.where(flip, w - 1 - cols[None], cols[None]) + dx)[:, None, None, :]
            batch = padded[torch.arange(b, device=self.device)[:, None, None, None],
                           torch.arange(c, device=self.device)[None, :, None, None], y, x]
            yield (batch.float() - self.mean) / self.std, self.labels[index]


# ---- models: fastloop's, with the rec-model row's widths (every stage -1) ----------------------------
# `torchscript:FILE.pt` cells load that file with torch.jit.load and run it as Python would (profiling
# executor, its default); the eager twin of a scripted built-in is that built-in's own cell (e.g. resnet18).
TORCHSCRIPT = "torchscript:"

def rec_model(name, stem, in_channels, num_classes, w):
    """fastloop's width_delta: every stage's width + w (ResNet stem and layers, MobileNetV2 stages and head)."""
    if name.startswith("resnet"):
        block, layers = {"resnet18": ("BasicBlock", [2, 2, 2, 2]), "resnet34": ("BasicBlock", [3, 4, 6, 3]),
                         "resnet50": ("Bottleneck", [3, 4, 6, 3]), "resnet101": ("Bottleneck", [3, 4, 23, 3])}[name]
        block = getattr(torchvision.models.resnet, block)

        class RecResNet(torchvision.models.resnet.ResNet):
            def _make_layer(self, blk, planes, blocks, stride=1, dilate=False):
                if planes == 64:
                    self.inplanes = 64 + w  # layer1 starts from the (narrower) stem
                return super()._make_layer(blk, planes + w, blocks, stride, dilate)

        model = RecResNet(block, layers, num_classes=num_classes)
        cifar = stem == "cifar"
        model.conv1 = nn.Conv2d(in_channels, 64 + w, 3 if cifar else 7, 1 if cifar else 2, 1 if cifar else 3, bias=False)
        model.bn1 = nn.BatchNorm2d(64 + w)
        if cifar:
            model.maxpool = nn.Identity()
        model.fc = nn.Linear((512 + w) * block.expansion, num_classes)
        return model
    if name == "mobilenet_v2":
        from torchvision.models.mobilenetv2 import InvertedResidual
        from torchvision.ops.misc import Conv2dNormActivation
        setting = [[1, 16, 1, 1], [6, 24, 2, 1 if stem == "cifar" else 2], [6, 32, 3, 2], [6, 64, 4, 2],
                   [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
        act = dict(norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU6)
        features = [Conv2dNormActivation(in_channels, 32 + w, stride=1 if stem == "cifar" else 2, **act)]
        channels = 32 + w
        for t, c, n, s in setting:
            for i in range(n):
                features.append(InvertedResidual(channels, c + w, s if i == 0 else 1, t, norm_layer=nn.BatchNorm2d))
                channels = c + w
        features.append(Conv2dNormActivation(channels, 1280 + w, kernel_size=1, **act))
        model = make_model(name, stem, in_channels, num_classes)
        model.features = nn.Sequential(*features)
        model.classifier[1] = nn.Linear(1280 + w, num_classes)
        return model
    return SmallCNN(in_channels, num_classes, widths=(16 + w, 32 + w, 96 + w))


def fold_batchnorms(module):
    """Each Conv2d directly followed by a BatchNorm2d among a module's children becomes one conv (eval)."""
    children = list(module.named_children())
    for (name, child), (next_name, next_child) in zip(children, children[1:]):
        if isinstance(child, nn.Conv2d) and isinstance(next_child, nn.BatchNorm2d):
            setattr(module, name, torch.nn.utils.fusion.fuse_conv_bn_eval(child, next_child))
            setattr(module, next_name, nn.Identity())
    for _, child in module.named_children():
        fold_batchnorms(child)
    return module


# ---- rows: the settings fastloop's grid (bench/src/fastloop/bench/grid.cpp) gives each row ----------------

def cpu_flags():
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def row_settings(row, cuda):
    """dict of settings for a row, or a string "n/a: why"."""
    base = dict(workers=0, pin=False, non_blocking=False, amp=None, channels_last=False, set_to_none=False,
                accumulate=1, fused=False, train=True, eval_grad=False, fold_bn=False, on_device=False,
                width_delta=0, batch_delta=0, cudnn_benchmark=False, tf32=False)
    seed_base = dict(base, workers=4, pin=cuda, non_blocking=cuda)  # workers4 + pinning: the later rows' base
    amp = "float16" if cuda else "bfloat16"
    if row == "baseline":
        return base
    if row in ("workers4", "workers8"):
        return dict(base, workers=int(row[-1]), pin=cuda)
    if row == "non-blocking":
        return seed_base if cuda else "n/a: CUDA only (no host-to-device copy on the CPU)"
    if row == "rec-model":
        return dict(seed_base, width_delta=-1, batch_delta=1)
    if row == "amp":
        return dict(seed_base, amp=amp)
    if row == "set-to-none":
        return dict(seed_base, set_to_none=True)
    if row == "accumulate":
        return dict(seed_base, accumulate=2)
    if row == "no-grad":
        return dict(seed_base, train=False, eval_grad=True)
    if row == "cudnn-benchmark":
        return dict(seed_base, cudnn_benchmark=True) if cuda else "n/a: CUDA only (cuDNN)"
    if row == "channels-last":
        return dict(seed_base, amp=amp, channels_last=True)
    if row == "fused-optim":
        return dict(seed_base, fused=True)
    if row == "cuda-graph":
        return "n/a: not compared (PyTorch eager replays no graph; its counterpart is torch.cuda.graphs)"
    if row == "data-on-device":
        return dict(seed_base, on_device=True)
    if row == "fold-bn":
        return dict(seed_base, train=False, fold_bn=True)
    if row == "perf-auto":  # train/perf_auto.cpp's rules, on the hardware this peer sees
        cores = len(os.sched_getaffinity(0))
        s = dict(seed_base, set_to_none=True, fused=True, workers=min(max(cores // 4, 1), 8))
        if cuda:
            major = torch.cuda.get_device_capability()[0]
            return dict(s, amp="bfloat16" if major >= 8 else "float16", channels_last=True, cudnn_benchmark=True,
                        tf32=major >= 8)
        native_bf16 = bool({"avx512_bf16", "amx_bf16"} & set(cpu_flags()))
        return dict(s, channels_last="avx512f" in cpu_flags(), amp="bfloat16" if native_bf16 else None)
    return f"n/a: unknown row {row!r}"


# ---- one cell ---------------------------------------------------------------------------------------

def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class CellRun:
    """What a cell's train and eval phases share: the row's settings `s`, the device, the memory format
    batches and model take, and the row's autocast."""

    def __init__(self, s, device, compiled=False, model_name=""):
        self.s, self.device, self.compiled, self.model_name = s, device, compiled, model_name
        self.memory_format = torch.channels_last if s["channels_last"] else torch.contiguous_format
        self.amp_dtype = getattr(torch, s["amp"]) if s["amp"] else None

    def prepare(self, x, y):
        """A batch on the device, images in the row's memory format."""
        x = x.to(self.device, non_blocking=self.s["non_blocking"], memory_format=self.memory_format)
        return x, y.to(self.device, non_blocking=self.s["non_blocking"])

    def autocast(self):
        return torch.autocast(self.device.type, dtype=self.amp_dtype) if self.amp_dtype else contextlib.nullcontext()


def cell_model(cell, s, channels, run):
    """The cell's model on the device in the row's memory format: the scripted file fastloop trains (run by
    torch.jit here), the twin at another width, or the twin itself."""
    if cell["model"].startswith(TORCHSCRIPT):
        model = torch.jit.load(cell["model"][len(TORCHSCRIPT):])
    elif s["width_delta"]:
        model = rec_model(cell["model"], "cifar", channels, 10, s["width_delta"])
    else:
        model = make_model(cell["model"], "cifar", channels, 10)
    model = model.to(run.device)
    return model.to(memory_format=run.memory_format)


def train_events(run, model, spec, train_x, train_y, batch, normalize, loader_args):
    """The train phase: warm-up steps, then ready, then train_rep x repeat (img/s of `steps` optimizer steps)."""
    s, device = run.s, run.device
    height = train_x.shape[1]
    pad = 4 if height >= 32 else 2
    if s["on_device"]:
        train_loader = DeviceAugment(train_x, train_y, batch, pad, normalize.mean, normalize.std, device)
    else:
        augment = [transforms.RandomCrop(height, padding=pad), transforms.RandomHorizontalFlip()]
        train_loader = DataLoader(ArrayDataset(train_x, train_y, transforms.Compose(
            augment + [transforms.ToTensor(), normalize])), shuffle=True, **loader_args)
    per_epoch = len(train_x) // batch // s["accumulate"]
    steps = spec["steps"] or per_epoch
    warmup_steps = spec["warmup"] if spec["steps"] else spec["warmup"] * per_epoch
    opt_args = dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
    optimizer = torch.optim.SGD(model.parameters(), **opt_args, **({"fused": True} if s["fused"] else {"foreach": False}))
    scaler = torch.amp.GradScaler(device.type, enabled=s["amp"] == "float16")
    model.train()
    stream = endless(train_loader)

    def step():  # accumulate: N batches of B per optimizer step, as `fastloop train --accumulate N`
        images = 0
        for _ in range(s["accumulate"]):
            x, y = run.prepare(*next(stream))
            with run.autocast():
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss / s["accumulate"] if s["accumulate"] > 1 else loss).backward()
            images += len(y)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=s["set_to_none"])
        return images

    start = time.perf_counter()
    for _ in range(warmup_steps):
        step()
    sync(device)
    warmup_report(run, "train", warmup_steps, time.perf_counter() - start)
    yield {"event": "ready", "status": "ok"}
    for _ in range(spec["repeat"]):
        sync(device)
        start, images = time.perf_counter(), 0
        for _ in range(steps):
            images += step()
        sync(device)
        yield {"event": "train_rep", "img_per_s": images / (time.perf_counter() - start)}
    # the loader (and its workers) go with this generator's frame, before the eval phase starts its own


def warmup_report(run, phase, steps, seconds):
    """With torch.compile, a phase's warm-up (its compile included) on stderr: `bench_peer compile: {json}`."""
    if run.compiled:
        print("bench_peer compile: " + json.dumps({"model": run.model_name, "phase": phase, "warmup_steps": steps,
                                                   "warmup_s": seconds}), file=sys.stderr, flush=True)


def eval_events(run, model, spec, test_x, test_y, normalize, loader_args):
    """The eval phase: warm-up batches, then eval_ready, then eval_rep x repeat (img/s of the forward passes)."""
    s, device = run.s, run.device
    test_loader = DataLoader(ArrayDataset(test_x, test_y, transforms.Compose([transforms.ToTensor(), normalize])),
                             shuffle=False, **dict(loader_args, drop_last=spec["eval_steps"] > 0))
    eval_steps = spec["eval_steps"] or len(test_loader)
    model.eval()
    if s["fold_bn"]:
        model = fold_batchnorms(model)
    stream = endless(test_loader)
    grad = contextlib.nullcontext if s["eval_grad"] else torch.inference_mode

    def eval_batches(n):  # in inference mode only while they run: another slot's cell may run between yields
        images = 0
        with grad():
            for _ in range(n):
                x, y = run.prepare(*next(stream))
                with run.autocast():
                    logits = model(x)
                logits.argmax(1).eq(y).sum()  # kept on the device, as fastloop's evaluate()
                images += len(y)
        return images

    start = time.perf_counter()
    eval_batches(spec["warmup"])
    sync(device)
    warmup_report(run, "eval", spec["warmup"], time.perf_counter() - start)
    yield {"event": "eval_ready"}
    for _ in range(spec["repeat"]):
        sync(device)
        start = time.perf_counter()
        images = eval_batches(eval_steps)
        sync(device)
        yield {"event": "eval_rep", "img_per_s": images / (time.perf_counter() - start)}


def cell_events(cell, spec, data, device):
    """One cell as a sequence of events, each after the work it names: ready (set up, warmed up; or
    status n/a), train_rep x repeat (train rows), eval_ready, eval_rep x repeat. The serve mode runs one
    event per request, so fastloop's repetitions and these alternate in one time window."""
    s = ENCODED_NA if data is None else row_settings(cell["row"], device.type == "cuda")
    if isinstance(s, str):
        yield {"event": "ready", "status": s}
        return
    train_x, train_y, test_x, test_y = data
    batch = spec["batch_size"] + s["batch_delta"]
    if batch > len(train_x) or batch > len(test_x):
        yield {"event": "ready", "status": f"n/a: batch {batch} is larger than a split of the data"}
        return
    torch.backends.cudnn.benchmark = s["cudnn_benchmark"]
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = s["tf32"]
    normalize = normalize_for(train_x)
    torch.manual_seed(0)
    if cell["model"].startswith(TORCHSCRIPT) and (s["width_delta"] or s["fold_bn"]):
        yield {"event": "ready", "status": "n/a: a TorchScript model's widths and BatchNorms are fixed in its file"}
        return
    run = CellRun(s, device, compiled=spec["compile"], model_name=cell["model"])
    model = cell_model(cell, s, train_x.shape[-1], run)
    if run.compiled:
        if spec["warmup"] < 1:
            yield {"event": "ready", "status": "n/a: torch.compile needs >= 1 warm-up step to compile in"}
            return
        model = torch.compile(model)
    loader_args = dict(batch_size=batch, num_workers=s["workers"], pin_memory=s["pin"], drop_last=True,
                       persistent_workers=s["workers"] > 0)
    if s["train"]:
        yield from train_events(run, model, spec, train_x, train_y, batch, normalize, loader_args)
    else:
        yield {"event": "ready", "status": "ok"}
    yield from eval_events(run, model, spec, test_x, test_y, normalize, loader_args)


def measure_cell(cell, spec, data, device):
    """The whole cell at once (the batch mode): status and the lower median of each phase's repetitions."""
    result = {"status": "ok", "train_img_per_s": 0.0, "eval_img_per_s": 0.0}
    for event in cell_events(cell, spec, data, device):
        kind = event["event"]
        if kind == "ready" and event["status"] != "ok":
            return {"status": event["status"]}
        if kind in ("train_rep", "eval_rep"):
            result.setdefault(kind[:-4] + "_img_per_s_all", []).append(event["img_per_s"])
    for phase in ("train", "eval"):
        if result.get(phase + "_img_per_s_all"):
            result[phase + "_img_per_s"] = statistics.median_low(result[phase + "_img_per_s_all"])
    return result


def serve(spec, data, device):
    """The interleaved mode (--serve): after the settings line, each stdin line is a request and gets one
    JSON line back. {"op": "cell", "model", "row"} sets the cell up and warms it up (reply: its ready
    event); {"op": "next"} runs the cell's next event (a repetition, or the switch to evaluation). A
    "slot" key (default 0) keeps several cells open at once, their repetitions alternating: with --twin,
    the scripted model's and its built-in twin's in eager PyTorch."""
    events = {}
    reply({"event": "hello", "torch": torch.__version__, "threads": torch.get_num_threads()})
    for line in sys.stdin:
        request = json.loads(line)
        slot = request.get("slot", 0)
        try:
            if request["op"] == "cell":
                events[slot] = cell_events(request, spec, data, device)
            cell = events.get(slot)
            reply(next(cell, {"event": "done"}) if cell else {"event": "error", "error": "no cell"})
        except Exception as e:  # noqa: BLE001 -- a cell that fails says so; the grid goes on
            events.pop(slot, None)
            reply({"event": "error", "error": f"{type(e).__name__}: {e}"})


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", help="JSON file with the cells and settings (default: read stdin)")
    p.add_argument("--serve", action="store_true",
                   help="interleaved mode: settings on the first stdin line, then one request per line")
    a = p.parse_args()
    spec = json.loads(sys.stdin.readline()) if a.serve else json.load(open(a.cells) if a.cells else sys.stdin)
    for key, default in (("steps", 5), ("eval_steps", 5), ("warmup", 2), ("repeat", 3), ("threads", 0),
                         ("device", "cpu"), ("data", "synthetic"), ("batch_size", 128),
                         ("compile", os.environ.get("FASTLOOP_PEER_COMPILE", "") not in ("", "0"))):
        spec.setdefault(key, default)
    if spec["threads"] > 0:
        torch.set_num_threads(spec["threads"])
    device = torch.device(spec["device"])
    data = load_split_arrays(spec["data"])
    if a.serve:
        return serve(spec, data, device)
    out = []
    for cell in spec["cells"]:
        start = time.perf_counter()
        result = measure_cell(cell, spec, data, device)
        out.append({"model": cell["model"], "row": cell["row"], **result})
        print(f"bench_peer {cell['model']:<12} {cell['row']:<16} train {result.get('train_img_per_s', 0):8.1f} img/s"
              f"  eval {result.get('eval_img_per_s', 0):8.1f} img/s  {result['status']}"
              f" ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "cells": out}))


if __name__ == "__main__":
    main()
