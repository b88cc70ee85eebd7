"""Writes tests/golden/torchscript/: scripted torchvision models of three families and one training step of
each in eager PyTorch, for tests/test_torchscript.cpp; plus small bad modules for its error tests.

Run with the project venv (its torch is the LibTorch the C++ side links):
    .venv/bin/python tests/tools/make_torchscript_golden.py          # writes tests/golden/torchscript/* (~0.5 MB)
    .venv/bin/python tests/tools/make_torchscript_golden.py --twin resnet18.pt   # the bench's scripted twin
Families (tiny widths, 16 px inputs, so the folder stays small):
  resnet       torchvision ResNet + BasicBlock, widths 8-64, CIFAR stem (3x3 conv, no max-pool)
  efficientnet torchvision EfficientNet (MBConv: SiLU, squeeze-excitation, stochastic depth 0.2, dropout 0.2)
  vit          torchvision VisionTransformer (patch 4, 2 layers, 2 heads, hidden 16)
Weights are make_golden.py's formula weights, saved inside the .pt. Randomness (dropout, stochastic depth)
is aligned, not switched off: the step runs right after torch.manual_seed(0), single-threaded, and the C++
test does the same, so both draw the same masks from the same CPU generator in the same op order. The
scripted module is also run here in Python and must match eager before anything is written.
"""
import argparse
import json
import pathlib
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.efficientnet import EfficientNet, MBConvConfig
from torchvision.models.resnet import BasicBlock, ResNet
from torchvision.models.vision_transformer import VisionTransformer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_golden import fill_state_, norm, optimizer_steps  # noqa: E402
from reference_models import make_model  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "golden" / "torchscript"
BATCH, SIDE, CLASSES = 4, 16, 10


def tiny_resnet():
    """torchvision's ResNet and BasicBlock code at widths 8, 16, 32, 64 with the CIFAR stem."""
    model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=CLASSES)
    model.inplanes = 8
    model.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
    model.bn1 = nn.BatchNorm2d(8)
    model.maxpool = nn.Identity()
    model.layer1 = model._make_layer(BasicBlock, 8, 1)
    model.layer2 = model._make_layer(BasicBlock, 16, 1, stride=2)
    model.layer3 = model._make_layer(BasicBlock, 32, 1, stride=2)
    model.layer4 = model._make_layer(BasicBlock, 64, 1, stride=2)
    model.fc = nn.Linear(64, CLASSES)
    return model


def tiny_efficientnet():
    setting = [MBConvConfig(1, 3, 1, 8, 8, 1), MBConvConfig(4, 3, 2, 8, 16, 2)]
    return EfficientNet(setting, dropout=0.2, stochastic_depth_prob=0.2, num_classes=CLASSES, last_channel=32)


def tiny_vit():
    return VisionTransformer(image_size=SIDE, patch_size=4, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
                             num_classes=CLASSES)


FAMILIES = {"resnet": tiny_resnet, "efficientnet": tiny_efficientnet, "vit": tiny_vit}


def train_step(model, x, labels):
    """One step as test_parity.cpp checks it: forward (seeded), label-smoothed loss, backward, SGD, AdamW."""
    torch.manual_seed(0)
    logits = model(x)
    loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    loss.backward()
    record = optimizer_steps(model)
    running = [{"name": n, "norm": norm(b)} for n, b in model.named_buffers() if "running_" in n]
    return logits, loss, running, record


def inputs():
    x = torch.sin(0.11 * torch.arange(BATCH * 3 * SIDE * SIDE, dtype=torch.float64) + 0.3)
    x = x.to(torch.float32).reshape(BATCH, 3, SIDE, SIDE)
    labels = torch.tensor([(3 * i + 1) % CLASSES for i in range(BATCH)])
    return x, labels


def close(a, b, what):
    scale = max(b.abs().max().item(), 1e-6)
    assert (a - b).abs().max().item() <= 1e-5 * scale, f"{what}: scripted and eager differ in Python"


def write_family(name, make):
    torch.manual_seed(0)
    eager = make()
    fill_state_(eager)
    eager.train()
    scripted = torch.jit.script(eager)  # shares eager's tensors: save before the step changes them
    path = OUT / f"{name}.pt"
    torch.jit.save(scripted, str(path))
    state_names = list(eager.state_dict().keys())

    x, labels = inputs()
    logits, loss, running, record = train_step(eager, x, labels)
    python_scripted = torch.jit.load(str(path))
    python_scripted.train()
    s_logits, s_loss, s_running, s_record = train_step(python_scripted, x, labels)
    close(s_logits, logits, name + " logits")
    close(s_loss, loss, name + " loss")
    golden = {
        "torch": torch.__version__,
        "file": path.name,
        "input_shape": list(x.shape),
        "labels": labels.tolist(),
        "param_names": [n for n, _ in eager.named_parameters()],
        "buffer_names": [n for n, _ in eager.named_buffers()],
        "state_names": state_names,
        "logits": logits.detach().reshape(-1).tolist(),
        "loss": loss.item(),
        "running_stats": running,
        "params": record,
    }
    (OUT / f"{name}.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, CLASSES)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fc(x.mean((2, 3)) + y)


class NoParameters(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)[:, :10]


class FlatLinear(nn.Module):  # applies Linear to the last axis of the image: [N, C, H, CLASSES], not [N, CLASSES]
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(SIDE, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


class FlattenedLinear(nn.Module):  # flattens the image for a Linear of the wrong width: the forward throws
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(7, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.flatten(1))


def write_bad_modules():
    """Modules each check of torchscript_load / model_check_forward must refuse."""
    torch.manual_seed(0)
    conv_bn = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                            nn.Linear(4, CLASSES)).eval()
    torch.jit.save(torch.jit.trace(conv_bn, torch.zeros(2, 3, SIDE, SIDE)), str(OUT / "bad_traced_eval_bn.pt"))
    torch.jit.save(torch.jit.script(TwoInputs()), str(OUT / "bad_two_inputs.pt"))
    torch.jit.save(torch.jit.script(NoParameters()), str(OUT / "bad_no_parameters.pt"))
    torch.jit.save(torch.jit.script(FlatLinear()), str(OUT / "bad_output_shape.pt"))
    torch.jit.save(torch.jit.script(FlattenedLinear()), str(OUT / "bad_forward_throws.pt"))
    conv_bn.train()  # traced in training mode: it would evaluate with batch statistics
    torch.jit.save(torch.jit.trace(conv_bn, torch.zeros(2, 3, SIDE, SIDE)), str(OUT / "bad_traced_train_bn.pt"))
    dropout = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(3 * SIDE * SIDE, CLASSES)).train()
    torch.jit.save(torch.jit.trace(dropout, torch.zeros(2, 3, SIDE, SIDE), check_trace=False),
                   str(OUT / "bad_traced_dropout.pt"))


def main():
    global OUT
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bad-only", action="store_true", help="write only the modules the checks must refuse")
    parser.add_argument("--twin", help="write fastloop's resnet18 (CIFAR stem, 10 classes) scripted to this file")
    parser.add_argument("--out", type=pathlib.Path, default=OUT,
                        help="folder to write to (default tests/golden/torchscript; the build writes its own)")
    args = parser.parse_args()
    OUT = args.out
    if args.twin:  # the bench's `--models resnet18,torchscript:FILE`: same architecture and names as built in
        torch.jit.save(torch.jit.script(make_model("resnet18", "cifar", 3, 10)), args.twin)
        print(f"wrote {args.twin}")
        return
    torch.set_num_threads(1)  # the C++ test runs single-threaded too: same reduction order
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in ({} if args.bad_only else FAMILIES).items():
        write_family(name, make)
    write_bad_modules()
    total = sum(p.stat().st_size for p in OUT.iterdir())
    for p in sorted(OUT.iterdir()):
        print(f"{p}: {p.stat().st_size / 1024:.0f} KiB")
    print(f"total {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
