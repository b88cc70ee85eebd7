"""Python side of tests/test_safetensors.cpp: moves weights between fastloop and the reference PyTorch models
(tests/tools/reference_models.py) through the official `safetensors` package, and compares logits.

  check WEIGHTS IO [--fold-bn]  load fastloop's export (strict) and print max |logits - IO["logits"]| on IO["input"]
  make WEIGHTS IO               save a seeded reference model and {input, logits} for fastloop to compare
Both take --model/--stem/--classes/--in-channels (default resnet18, cifar, 10, 3); output is one JSON line.
"""
import argparse
import json

import torch
from torch import nn
from safetensors.torch import load_file, save_file

from reference_models import make_model


def fold_bn_structure(model):
    """The network fastloop's --fold-bn export fits: each BatchNorm2d after a conv becomes Identity, the conv gets a bias."""
    conv = None
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Conv2d):
            conv = module
        elif isinstance(module, nn.BatchNorm2d) and conv is not None and conv.out_channels == module.num_features:
            if conv.bias is None:
                conv.bias = nn.Parameter(torch.zeros(conv.out_channels))
            parent_name, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent_name) if parent_name else model, child, nn.Identity())
            conv = None
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["check", "make"])
    parser.add_argument("weights")
    parser.add_argument("io")
    parser.add_argument("--fold-bn", action="store_true")
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--stem", default="cifar")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--in-channels", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1234)
    model = make_model(args.model, args.stem, args.in_channels, args.classes)
    if args.action == "check":
        if args.fold_bn:
            fold_bn_structure(model)
        model.load_state_dict(load_file(args.weights), strict=True)
        model.eval()
        io = load_file(args.io)
        with torch.no_grad():
            logits = model(io["input"])
        diff = (logits - io["logits"]).abs().max().item()
        print(json.dumps({"max_abs_diff": diff, "max_abs_logit": io["logits"].abs().max().item()}))
    else:
        with torch.no_grad():  # non-trivial BatchNorm statistics, so eval mode tests them
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 2.0)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)
                    m.num_batches_tracked.fill_(7)
        model.eval()
        x = torch.randn(2, args.in_channels, 32, 32)
        with torch.no_grad():
            logits = model(x)
        save_file(model.state_dict(), args.weights, metadata={"format": "pt"})
        save_file({"input": x, "logits": logits}, args.io)
        print(json.dumps({"tensors": len(model.state_dict())}))


if __name__ == "__main__":
    main()
