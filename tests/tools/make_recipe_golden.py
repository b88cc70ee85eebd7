"""Writes tests/golden/recipe/*.json, the references of tests/test_recipe_features.cpp, from the venv's torch
and from timm's definitions, copied below (timm is not a dependency) from huggingface/pytorch-image-models
at aa4b5850c1543fa488abf260f18390eda46cf85d:
  - timm/utils/model_ema.py   ModelEmaV2.update (decay * e + (1 - decay) * m on the state dict); integer
                              entries are copied as ModelEmaV3.apply_update_ does
  - timm/data/mixup.py        one_hot, mixup_target, rand_bbox, cutmix_bbox_and_lam, Mixup._mix_batch
  - timm/optim/_param_groups.py  param_groups_weight_decay (ndim <= 1 or name ending '.bias': no decay)
and torch itself for torch.nn.utils.clip_grad_norm_ and OneCycleLR(cycle_momentum=True).
Run with the project venv:  .venv/bin/python tests/tools/make_recipe_golden.py
"""
import json
import math
import pathlib
import sys
from unittest import mock

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from reference_models import make_model  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "golden" / "recipe"
SAMPLES = 8  # entries at (j * (n - 1)) // 7 of a flattened tensor, as tests/tools/make_golden.py


def samples(t):
    flat = t.detach().reshape(-1).double()
    n = flat.numel()
    return [flat[(j * (n - 1)) // (SAMPLES - 1)].item() for j in range(SAMPLES)]


def f32(values):
    """float32 values as 9 significant digits (enough to round-trip a float32; smaller files)."""
    return [float("%.9g" % v) for v in values]


def write(name, data):
    data["torch"] = torch.__version__
    (OUT / name).write_text(json.dumps(data, indent=1) + "\n")
    print("wrote", OUT / name)


# ---- timm/data/mixup.py (verbatim but for comments) ----
def one_hot(x, num_classes, on_value=1., off_value=0.):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=x.device).scatter_(1, x, on_value)


def mixup_target(target, num_classes, lam=1., smoothing=0.0):
    off_value = smoothing / num_classes
    on_value = 1. - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value)
    return y1 * lam + y2 * (1. - lam)


def rand_bbox(img_shape, lam, margin=0., count=None):
    ratio = np.sqrt(1 - lam)
    img_h, img_w = img_shape[-2:]
    cut_h, cut_w = int(img_h * ratio), int(img_w * ratio)
    margin_y, margin_x = int(margin * cut_h), int(margin * cut_w)
    cy = np.random.randint(0 + margin_y, img_h - margin_y, size=count)
    cx = np.random.randint(0 + margin_x, img_w - margin_x, size=count)
    yl = np.clip(cy - cut_h // 2, 0, img_h)
    yh = np.clip(cy + cut_h // 2, 0, img_h)
    xl = np.clip(cx - cut_w // 2, 0, img_w)
    xh = np.clip(cx + cut_w // 2, 0, img_w)
    return yl, yh, xl, xh


def cutmix_bbox_and_lam(img_shape, lam, ratio_minmax=None, correct_lam=True, count=None):
    yl, yu, xl, xu = rand_bbox(img_shape, lam, count=count)
    if correct_lam or ratio_minmax is not None:
        bbox_area = (yu - yl) * (xu - xl)
        lam = 1. - bbox_area / float(img_shape[-2] * img_shape[-1])
    return (yl, yu, xl, xu), lam


def mix_batch(x, lam, use_cutmix):  # Mixup._mix_batch after its _params_per_batch draw
    if lam == 1.:
        return 1., None
    box = None
    if use_cutmix:
        (yl, yh, xl, xh), lam = cutmix_bbox_and_lam(x.shape, lam, ratio_minmax=None, correct_lam=True)
        x[:, :, yl:yh, xl:xh] = x.flip(0)[:, :, yl:yh, xl:xh]
        box = [int(yl), int(yh), int(xl), int(xh)]
    else:
        x_flipped = x.flip(0).mul_(1. - lam)
        x.mul_(lam).add_(x_flipped)
    return lam, box


def mixup_cases():
    n, c, h, w, classes = 5, 2, 9, 8, 5  # odd batch: the middle image pairs with itself
    labels = [3, 0, 4, 1, 2]
    cases = []
    for kind, lam, centre in [("mixup", 0.3, None), ("cutmix", 0.55, (2, 6)), ("cutmix", 0.2, (8, 0)),
                              ("mixup", 1.0, None)]:
        x = torch.sin(torch.arange(n * c * h * w, dtype=torch.float64).mul(0.13).add(0.2)).float().reshape(n, c, h, w)
        # rand_bbox's two np.random.randint draws give the box centre the C++ test passes in.
        with mock.patch.object(np.random, "randint", side_effect=list(centre or (0, 0))):
            lam_used, box = mix_batch(x, lam, kind == "cutmix")
        target = mixup_target(torch.tensor(labels), classes, lam_used, smoothing=0.1)
        cases.append({"kind": kind, "lam": lam, "centre": list(centre or (0, 0)), "lam_used": lam_used,
                      "box": box, "images": f32(x.reshape(-1).tolist()), "targets": f32(target.reshape(-1).tolist())})
    return {"shape": [n, c, h, w], "num_classes": classes, "labels": labels, "smoothing": 0.1, "cases": cases}


# ---- timm/utils/model_ema.py: ModelEmaV2 update ----
def ema_update(ema_state, model_state, decay):
    with torch.no_grad():
        for ema_v, model_v in zip(ema_state.values(), model_state.values()):
            if ema_v.is_floating_point():
                ema_v.copy_(decay * ema_v + (1. - decay) * model_v)  # ModelEmaV2's update_fn
            else:
                ema_v.copy_(model_v)  # ModelEmaV3: integer buffers are copied


def fill_state(model, k):
    """State entry j at update k: 0.05 sin(0.37 i + j + 0.5 k) (running_var: 1 + that squared), counts k + 1."""
    with torch.no_grad():
        for j, (name, t) in enumerate(model.state_dict().items()):
            if name.endswith("num_batches_tracked"):
                t.fill_(k + 1)
                continue
            wave = torch.sin(torch.arange(t.numel(), dtype=torch.float64).mul(0.37).add(j + 0.5 * k))
            v = wave.mul(0.05)
            if name.endswith("running_var"):
                v = v.mul(v).add(1.0)
            t.copy_(v.float().reshape(t.shape))


def ema_cases():
    cases = []
    for decay, warmup in [(0.9, False), (0.99, True)]:
        model = make_model("small_cnn", in_channels=1, num_classes=10)
        average = make_model("small_cnn", in_channels=1, num_classes=10)
        fill_state(model, 0)
        average.load_state_dict(model.state_dict())  # ModelEmaV2's deepcopy
        decays = []
        for k in range(1, 6):
            fill_state(model, k)
            step = k - 1
            d = min(decay, (1 + step) / (10 + step)) if warmup else decay  # --ema-warmup (TF's num_updates ramp)
            decays.append(d)
            ema_update(average.state_dict(), model.state_dict(), d)
        cases.append({"decay": decay, "warmup": warmup, "updates": 5, "decays": decays,
                      "state": {n: samples(t) for n, t in average.state_dict().items()}})
    return {"model": "small_cnn", "in_channels": 1, "num_classes": 10, "cases": cases}


# ---- timm/optim/_param_groups.py: param_groups_weight_decay's rule ----
def no_decay_names():
    model = make_model("resnet18", stem="cifar", in_channels=3, num_classes=10)
    small = make_model("small_cnn", in_channels=1, num_classes=10)
    rule = lambda name, p: p.ndim <= 1 or name.endswith(".bias")  # noqa: E731
    return {m: {"no_decay": [n for n, p in net.named_parameters() if rule(n, p)],
                "decay": [n for n, p in net.named_parameters() if not rule(n, p)]}
            for m, net in [("resnet18", model), ("small_cnn", small)]}


def clip_cases():
    shapes = [(4, 3, 3, 3), (4,), (10, 4), (10,)]
    cases = []
    for max_norm in [0.5, 100.0]:
        params = []
        for k, s in enumerate(shapes):
            p = torch.nn.Parameter(torch.zeros(s))
            n = math.prod(s)
            p.grad = torch.sin(torch.arange(n, dtype=torch.float64).mul(0.7).add(k)).mul(0.3 + k).float().reshape(s)
            params.append(p)
        total = torch.nn.utils.clip_grad_norm_(params, max_norm)
        cases.append({"max_norm": max_norm, "total_norm": total.item(),
                      "grads": [f32(p.grad.reshape(-1).tolist()) for p in params]})
    return {"shapes": [list(s) for s in shapes], "cases": cases}


def momentum_cycles():
    total, max_lr, pct = 50, 0.1, 0.25
    out = {"total_steps": total, "max_lr": max_lr, "pct_start": pct, "base_momentum": 0.85, "max_momentum": 0.95}
    for name, make, read in [("sgd", lambda ps: torch.optim.SGD(ps, lr=max_lr, momentum=0.9, nesterov=True),
                              lambda g: g["momentum"]),
                             ("adamw", lambda ps: torch.optim.AdamW(ps, lr=max_lr), lambda g: g["betas"][0])]:
        param = torch.nn.Parameter(torch.zeros(1))
        opt = make([param])
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=total, pct_start=pct,
                                                    anneal_strategy="cos", cycle_momentum=True,
                                                    base_momentum=0.85, max_momentum=0.95)
        lrs, momenta = [], []
        for _ in range(total):
            lrs.append(opt.param_groups[0]["lr"])
            momenta.append(read(opt.param_groups[0]))
            opt.step()
            sched.step()
        out[name] = {"lr": lrs, "momentum": momenta}
    return out


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    write("mixup.json", mixup_cases())
    write("ema.json", ema_cases())
    write("weight_decay.json", no_decay_names())
    write("clip_grad_norm.json", clip_cases())
    write("momentum.json", momentum_cycles())
