"""Writes tests/golden/recipe/random_erasing.json and tta.json, the references of tests/test_recipe94.cpp:
  - torchvision.transforms.RandomErasing(p=0.5, value=0) itself (forward: its coin, get_params and
    F.erase), run on images of ones; the statistics of where and how large its boxes are over many draws
    (fastloop draws from (seed, epoch, index) instead of torch's generator, so only the distribution can
    match);
  - airbench94.py's infer_mirror and infer_mirror_translate (KellerJordan/airbench, copied below) on a
    linear model whose weights and inputs are formulas the C++ test computes too.
Run with the project venv:  .venv/bin/python tests/tools/make_recipe94_golden.py
"""
import json
import math
import pathlib

import torch
import torch.nn.functional as F
from torchvision import transforms

OUT = pathlib.Path(__file__).resolve().parent.parent / "golden" / "recipe"
DRAWS = 100_000  # per image size: the means' standard errors are ~1% of a pixel


def write(name, data):
    data["torch"] = torch.__version__
    (OUT / name).write_text(json.dumps(data, indent=1) + "\n")
    print("wrote", OUT / name)


def erasing_stats(height, width, p=0.5):
    """Mean and standard deviation of the box's top, left, height, width and area over DRAWS images, and the
    share of images erased."""
    erase = transforms.RandomErasing(p=p, value=0)
    image = torch.ones(1, height, width)
    boxes = []
    for _ in range(DRAWS):
        erased = erase(image)[0] == 0
        if not erased.any():
            continue
        rows = erased.any(1).nonzero().flatten()
        cols = erased.any(0).nonzero().flatten()
        h, w = len(rows), len(cols)
        assert int(erased.sum()) == h * w, "RandomErasing erased something other than one box"
        boxes.append((int(rows[0]), int(cols[0]), h, w, h * w))
    t = torch.tensor(boxes, dtype=torch.float64)
    names = ["top", "left", "height", "width", "area"]
    return {"height": height, "width": width, "p": p, "draws": DRAWS, "erased_share": len(boxes) / DRAWS,
            "mean": dict(zip(names, t.mean(0).tolist())), "std": dict(zip(names, t.std(0).tolist()))}


# ---- airbench94.py: infer() (verbatim but for the names of the model argument) ----
def infer_mirror(inputs, net):
    return 0.5 * net(inputs) + 0.5 * net(inputs.flip(-1))


def infer_mirror_translate(inputs, net):
    logits = infer_mirror(inputs, net)
    pad = 1
    padded_inputs = F.pad(inputs, (pad,) * 4, "reflect")
    inputs_translate_list = [
        padded_inputs[:, :, 0:inputs.size(2), 0:inputs.size(3)],  # airbench: 0:32, 0:32
        padded_inputs[:, :, 2:inputs.size(2) + 2, 2:inputs.size(3) + 2],  # airbench: 2:34, 2:34
    ]
    logits_translate_list = [infer_mirror(inputs_translate, net) for inputs_translate in inputs_translate_list]
    logits_translate = torch.stack(logits_translate_list).mean(0)
    return 0.5 * logits + 0.5 * logits_translate


def tta_case():
    """A linear model, logits = flatten(x) @ W, with W[i, k] = sin(0.37 (i K + k) + 1) and x = sin(0.11 j + 0.3)
    over a [3, 2, 5, 7] batch: every pixel's position matters, so a wrong flip axis or shift shows."""
    shape, classes = [3, 2, 5, 7], 4
    features = shape[1] * shape[2] * shape[3]
    weight = torch.sin(0.37 * torch.arange(features * classes, dtype=torch.float64) + 1).float().reshape(features, classes)
    x = torch.sin(0.11 * torch.arange(math.prod(shape), dtype=torch.float64) + 0.3).float().reshape(shape)
    net = lambda inputs: inputs.flatten(1) @ weight  # noqa: E731
    return {"input_shape": shape, "classes": classes,
            "off": net(x).flatten().tolist(), "flip": infer_mirror(x, net).flatten().tolist(),
            "flip-translate": infer_mirror_translate(x, net).flatten().tolist()}


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    write("random_erasing.json", {"cases": [erasing_stats(28, 28), erasing_stats(32, 32), erasing_stats(7, 12)]})
    write("tta.json", tta_case())
