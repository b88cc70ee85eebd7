"""A plain PyTorch training loop: fastloop train's recipe on the same model, as a PyTorch user writes it.

`fastloop bench e2e` runs it between fastloop's own training runs (A B B A, one time window) to measure
fastloop ÷ PyTorch end to end: same model (tests/tools/reference_models.py, parity-tested), same recipe (SGD
Nesterov, one-cycle LR with either anneal strategy, flips (random or airbench's alternating) with an optional
pad-crop, label smoothing, airbench's whitened and frozen stem, batch, channels_last, autocast dtype, epochs),
same threads, data held in memory as uint8 and augmented per batch with tensor ops (the fast way to write it in
Python). Prints one JSON line: training img/s (epochs' training time only), seconds, final test accuracy.
"""
import argparse
import contextlib
import json
import os
import sys
import time
from typing import Iterator, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the PyTorch twins of the built-in models, parity-tested against fastloop's (tests/test_models.cpp)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "tools"))
from bench_peer import load_split_arrays  # noqa: E402
from reference_models import make_model  # noqa: E402

WHITENING_IMAGES = 5000  # the first images of the train split the stem is whitened from (airbench's 5000)
WHITENING_EPS = 5e-4     # airbench's, added to each eigenvalue before the 1 / sqrt


def patch_whitening_filters(images: torch.Tensor, kernel: int, filters: int, eps: float) -> torch.Tensor:
    """Whitening filters of the kernel x kernel patches of `images` (float [N, C, H, W]), as fastloop's
    src/fastloop/models/whiten.cpp: the zero-padded ("same" conv) patches' uncentred second moment X^T X / patches
    in float64, its top m = min(filters // 2, C * kernel^2) eigenvectors scaled by 1 / sqrt(lambda + eps), then
    the same m negated. Returns float32 [2m, C, kernel, kernel]."""
    channels = images.shape[1]
    dim = channels * kernel * kernel
    moment = torch.zeros(dim, dim, dtype=torch.float64)
    patches = 0
    for chunk in images.split(256):  # bounds the unfolded float64 patches, as the C++ does
        columns = F.unfold(chunk.double(), kernel, padding=kernel // 2)  # [B, C * k * k, L], a conv weight's order
        flat = columns.transpose(1, 2).reshape(-1, dim)
        moment.addmm_(flat.t(), flat)
        patches += flat.shape[0]
    moment /= patches
    eigenvalues, eigenvectors = torch.linalg.eigh(moment)  # ascending eigenvalues; eigenvectors in columns
    top = torch.arange(dim - 1, dim - 1 - min(filters // 2, dim), -1)
    whitening = eigenvectors[:, top].t() * eigenvalues[top].clamp_min(0).add(eps).rsqrt()[:, None]
    return torch.cat([whitening, -whitening]).reshape(-1, channels, kernel, kernel).float()


def whiten_stem(model: nn.Module, images: torch.Tensor) -> None:
    """airbench's first layer, as fastloop's --whiten-stem: the stem conv's first rows set to the whitening filters
    of `images` (rows past 2 * C * kernel^2 keep their init) and the weight frozen, to be left out of the optimizer."""
    stem = dict(model.named_modules()).get("stem.0")
    if not isinstance(stem, nn.Conv2d):
        raise ValueError("--whiten-stem: the model has no small_cnn stem (stem.0, a 3x3 conv); use --model small_cnn")
    weight = stem.weight  # [w0, in_channels, k, k]
    filters = patch_whitening_filters(images, weight.shape[2], weight.shape[0], WHITENING_EPS)
    with torch.no_grad():
        weight[:len(filters)].copy_(filters)
    weight.requires_grad_(False)


def epoch_flips(epoch: int, coins: torch.Tensor, alternate: bool, generator: torch.Generator) -> torch.Tensor:
    """Whether each image is mirrored in `epoch`: a fresh coin per image, or (alternate, airbench's rule) its epoch-0
    coin `coins`, inverted in every odd epoch, so each image is seen both ways in turn."""
    if alternate:
        return coins ^ bool(epoch % 2)
    return coins if epoch == 0 else torch.rand(len(coins), generator=generator) < 0.5


def batches(images: torch.Tensor, labels: torch.Tensor, batch: int, pad: int, flips: Optional[torch.Tensor],
            generator: torch.Generator) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
    """One epoch of shuffled, augmented float batches, dropping the last partial: pad + random crop when pad > 0,
    and image i mirrored where flips[i] (None: no flips)."""
    n, c, h, w = images.shape
    order = torch.randperm(n, generator=generator)
    rows, cols = torch.arange(h), torch.arange(w)
    for start in range(0, n - batch + 1, batch):
        index = order[start:start + batch]
        x = images[index]
        mirror = flips[index] if flips is not None else torch.zeros(batch, dtype=torch.bool)
        if pad:
            x = F.pad(x, (pad,) * 4)
            dy = torch.randint(0, 2 * pad + 1, (batch, 1), generator=generator)
            dx = torch.randint(0, 2 * pad + 1, (batch, 1), generator=generator)
            y_index = (rows[None] + dy)[:, None, :, None]
            x_index = (torch.where(mirror[:, None], w - 1 - cols[None], cols[None]) + dx)[:, None, None, :]
            x = x[torch.arange(batch)[:, None, None, None], torch.arange(c)[None, :, None, None], y_index, x_index]
        elif flips is not None:
            x[mirror] = x[mirror].flip(3)  # x is the batch's own copy (advanced indexing)
        yield x, labels[index]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="fashion-mnist")
    p.add_argument("--model", default="small_cnn")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--label-smoothing", type=float, default=0.0)
    p.add_argument("--pct-start", type=float, default=0.25)
    p.add_argument("--anneal-strategy", choices=["cos", "linear"], default="cos", help="OneCycleLR's anneal_strategy")
    p.add_argument("--crop-pad", type=int, default=2)
    p.add_argument("--no-flip", action="store_true")
    p.add_argument("--alternate-flip", action="store_true",
                   help="each image flipped at random in epoch 0, then the other way in every next epoch (airbench)")
    p.add_argument("--whiten-stem", action="store_true",
                   help="stem conv fixed at the whitening of the first 5000 training images' 3x3 patches (airbench)")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--amp", choices=["off", "bf16"], default="off")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: all epochs)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    train_x, train_y, test_x, test_y = load_split_arrays(a.data)
    to_nchw = lambda x: torch.from_numpy(x.copy()).permute(0, 3, 1, 2).float()  # noqa: E731
    train_images, test_images = to_nchw(train_x), to_nchw(test_x)
    mean = train_images.mean(dim=(0, 2, 3), keepdim=True)
    std = train_images.std(dim=(0, 2, 3), keepdim=True)
    train_images, test_images = (train_images - mean) / std, (test_images - mean) / std
    train_labels, test_labels = torch.from_numpy(train_y), torch.from_numpy(test_y)
    memory_format = torch.channels_last if a.channels_last else torch.contiguous_format

    model = make_model(a.model, "cifar", train_images.shape[1], 10)
    if a.whiten_stem:  # before the optimizer: the frozen stem is in no group
        whiten_stem(model, train_images[:WHITENING_IMAGES])
    model = model.to(memory_format=memory_format)
    optimizer = torch.optim.SGD([q for q in model.parameters() if q.requires_grad], lr=a.lr, momentum=a.momentum,
                                nesterov=True, weight_decay=a.weight_decay)
    steps_per_epoch = len(train_images) // a.batch_size
    total = a.epochs * steps_per_epoch if not a.max_steps else min(a.max_steps, a.epochs * steps_per_epoch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=a.lr, total_steps=total, pct_start=a.pct_start,
                                                   anneal_strategy=a.anneal_strategy, cycle_momentum=False)
    autocast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if a.amp == "bf16" else contextlib.nullcontext
    generator = torch.Generator().manual_seed(0)
    coins = torch.rand(len(train_images), generator=generator) < 0.5  # each image's flip in epoch 0
    train_seconds, images, step, accuracy = 0.0, 0, 0, 0.0
    for epoch in range(a.epochs):
        model.train()
        start = time.perf_counter()
        flips = None if a.no_flip else epoch_flips(epoch, coins, a.alternate_flip, generator)
        for x, y in batches(train_images, train_labels, a.batch_size, a.crop_pad, flips, generator):
            with autocast():
                loss = F.cross_entropy(model(x.contiguous(memory_format=memory_format)), y,
                                       label_smoothing=a.label_smoothing)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            schedule.step()
            images += len(y)
            step += 1
            if step == total:
                break
        train_seconds += time.perf_counter() - start
        model.eval()
        correct = 0
        with torch.inference_mode(), autocast():
            for i in range(0, len(test_images), 1000):
                logits = model(test_images[i:i + 1000].contiguous(memory_format=memory_format))
                correct += int((logits.argmax(1) == test_labels[i:i + 1000]).sum())
        accuracy = correct / len(test_images)
        if step == total:
            break
    print(json.dumps({"img_per_s": images / train_seconds, "train_seconds": train_seconds, "steps": step,
                      "test_accuracy": accuracy, "torch": torch.__version__, "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
