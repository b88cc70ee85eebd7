"""A plain PyTorch training loop: fastloop train's recipe on the same model, as a PyTorch user writes it.

`fastloop bench e2e` runs it between fastloop's own training runs (A B B A, one time window) to measure
fastloop ÷ PyTorch end to end: same model (tests/tools/reference_models.py, parity-tested), same recipe (SGD
Nesterov, one-cycle LR, flip + pad-crop, batch, channels_last, autocast dtype, epochs), same threads,
data held in memory as uint8 and augmented per batch with tensor ops (the fast way to write it in Python).
Prints one JSON line: training img/s (epochs' training time only), seconds, final test accuracy.
"""
import argparse
import contextlib
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the PyTorch twins of the built-in models, parity-tested against fastloop's (tests/test_models.cpp)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "tools"))
from bench_peer import load_split_arrays  # noqa: E402
from reference_models import make_model  # noqa: E402


def batches(images, labels, batch, pad, flip, generator):
    """One epoch of shuffled, augmented float batches (pad + random crop + flip), dropping the last partial."""
    n, c, h, w = images.shape
    order = torch.randperm(n, generator=generator)
    rows, cols = torch.arange(h), torch.arange(w)
    for start in range(0, n - batch + 1, batch):
        index = order[start:start + batch]
        x = images[index]
        if pad:
            x = F.pad(x, (pad,) * 4)
            dy = torch.randint(0, 2 * pad + 1, (batch, 1), generator=generator)
            dx = torch.randint(0, 2 * pad + 1, (batch, 1), generator=generator)
            flips = torch.rand(batch, 1, generator=generator) < 0.5 if flip else torch.zeros(batch, 1, dtype=torch.bool)
            y_index = (rows[None] + dy)[:, None, :, None]
            x_index = (torch.where(flips, w - 1 - cols[None], cols[None]) + dx)[:, None, None, :]
            x = x[torch.arange(batch)[:, None, None, None], torch.arange(c)[None, :, None, None], y_index, x_index]
        yield x, labels[index]


def main():
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
    p.add_argument("--crop-pad", type=int, default=2)
    p.add_argument("--no-flip", action="store_true")
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

    model = make_model(a.model, "cifar", train_images.shape[1], 10).to(memory_format=memory_format)
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum, nesterov=True,
                                weight_decay=a.weight_decay)
    steps_per_epoch = len(train_images) // a.batch_size
    total = a.epochs * steps_per_epoch if not a.max_steps else min(a.max_steps, a.epochs * steps_per_epoch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=a.lr, total_steps=total,
                                                   pct_start=a.pct_start, cycle_momentum=False)
    autocast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if a.amp == "bf16" else contextlib.nullcontext
    generator = torch.Generator().manual_seed(0)
    train_seconds, images, step, accuracy = 0.0, 0, 0, 0.0
    for _ in range(a.epochs):
        model.train()
        start = time.perf_counter()
        for x, y in batches(train_images, train_labels, a.batch_size, a.crop_pad, not a.no_flip, generator):
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
