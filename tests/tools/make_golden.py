"""Writes the golden files of tests/test_models.cpp and tests/test_parity.cpp from tests/tools/reference_models.py.

Run with the project venv (its torch is the LibTorch the C++ side links):
    .venv/bin/python tests/tools/make_golden.py            # writes tests/golden/models.json, parity_*.json
The parity files record, for fixed formula weights and inputs in train mode: logits, label-smoothed
cross-entropy, BN running-stat norms, every gradient, and one SGD and one AdamW step (norms + samples).
"""
import argparse
import json
import pathlib
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from reference_models import MODEL_NAMES, make_model, model_stems  # noqa: E402

GOLDEN = pathlib.Path(__file__).resolve().parent.parent / "golden"
BATCH = 4
SAMPLES = 8  # entries sampled per tensor, at (j * (n - 1)) // 7 for j in 0..7 of the flattened tensor

PARITY = [  # file stem, model options, image side (px)
    ("resnet18", dict(name="resnet18", stem="cifar", in_channels=3, num_classes=10), 32),
    ("mobilenet_v2", dict(name="mobilenet_v2", stem="cifar", in_channels=3, num_classes=10, dropout=0.0), 32),
    ("small_cnn", dict(name="small_cnn", stem="cifar", in_channels=1, num_classes=10), 28),
]


def count_configs():
    """Every model and stem at 3 channels / 10 classes, plus 1-channel and torchvision's 1000 classes."""
    configs = [dict(name=n, stem=s, in_channels=3, num_classes=10) for n in MODEL_NAMES for s in model_stems(n)]
    configs += [dict(name="resnet18", stem="cifar", in_channels=1, num_classes=10),
                dict(name="small_cnn", stem="cifar", in_channels=1, num_classes=10),
                dict(name="mobilenet_v2", stem="cifar", in_channels=1, num_classes=10)]
    configs += [dict(name=n, stem="imagenet", in_channels=3, num_classes=1000)
                for n in ["resnet18", "resnet50", "mobilenet_v2"]]
    return configs


def wave(n, k):
    """sin(0.37 i + k) in float64; test_parity.cpp computes the same with the same LibTorch ops."""
    return torch.sin(0.37 * torch.arange(n, dtype=torch.float64) + k)


def fill_state_(model):
    """The k-th state_dict tensor gets 0.05 wave(n, k); running_var 1 + 0.1 wave^2 (stays positive)."""
    with torch.no_grad():
        for k, (name, t) in enumerate(model.state_dict(keep_vars=True).items()):
            if name.endswith("num_batches_tracked"):
                continue
            w = wave(t.numel(), k)
            v = 1 + 0.1 * w * w if name.endswith("running_var") else 0.05 * w
            t.copy_(v.to(torch.float32).reshape(t.shape))


def samples(t):
    flat = t.detach().reshape(-1)
    n = flat.numel()
    return [flat[(j * (n - 1)) // (SAMPLES - 1)].item() for j in range(SAMPLES)]


def norm(t):
    return t.detach().double().norm().item()


def optimizer_steps(model):
    """Per parameter, after backward: its gradient, then its value after one SGD step and, from the same
    weights and gradients, after one AdamW step (the updates test_parity.cpp checks)."""
    named = list(model.named_parameters())
    params = [p for _, p in named]
    record = [{"name": n, "shape": list(p.shape), "grad_norm": norm(p.grad), "grad": samples(p.grad)}
              for n, p in named]
    originals = [p.detach().clone() for p in params]
    steps = [("sgd", lambda: torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)),
             ("adamw", lambda: torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-2))]
    for key, make_optimizer in steps:
        with torch.no_grad():  # each optimizer starts from the same weights and the same gradients
            for p, o in zip(params, originals):
                p.copy_(o)
        make_optimizer().step()
        for entry, p in zip(record, params):
            entry[key + "_norm"] = norm(p)
            entry[key] = samples(p)
    return record


def parity_record(options, side):
    torch.manual_seed(0)
    model = make_model(**options)
    fill_state_(model)
    model.train()
    c = options["in_channels"]
    x = torch.sin(0.11 * torch.arange(BATCH * c * side * side, dtype=torch.float64) + 0.3)
    x = x.to(torch.float32).reshape(BATCH, c, side, side)
    labels = torch.tensor([(3 * i + 1) % options["num_classes"] for i in range(BATCH)])

    logits = model(x)
    loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    loss.backward()
    running = [{"name": n, "norm": norm(b)} for n, b in model.named_buffers() if "running_" in n]

    record = optimizer_steps(model)
    return {
        "torch": torch.__version__,
        "model": options,
        "input_shape": list(x.shape),
        "labels": labels.tolist(),
        "state_names": list(model.state_dict().keys()),
        "logits": logits.detach().reshape(-1).tolist(),
        "loss": loss.item(),
        "running_stats": running,
        "params": record,
    }


def main():
    global GOLDEN
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=GOLDEN,
                        help="folder to write to (default tests/golden; the build writes its own, see tests/CMakeLists.txt)")
    GOLDEN = parser.parse_args().out
    torch.set_num_threads(1)  # the C++ test runs single-threaded too: same reduction order
    GOLDEN.mkdir(parents=True, exist_ok=True)
    models = []
    for options in count_configs():
        model = make_model(**options)
        models.append(dict(options,
                           parameters=sum(p.numel() for p in model.parameters()),
                           named_parameters=[[n, list(p.shape)] for n, p in model.named_parameters()],
                           named_buffers=[[n, list(b.shape)] for n, b in model.named_buffers()]))
    files = {"models.json": {"torch": torch.__version__, "models": models}}
    for stem, options, side in PARITY:
        files[f"parity_{stem}.json"] = parity_record(options, side)
    for name, data in files.items():
        path = GOLDEN / name
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        print(f"{path}: {path.stat().st_size / 1024:.0f} KiB")
    for m in models:
        print(f"{m['name']:>12} {m['stem']:>8} in={m['in_channels']} classes={m['num_classes']:>4}: "
              f"{m['parameters']:,} parameters")


if __name__ == "__main__":
    main()
