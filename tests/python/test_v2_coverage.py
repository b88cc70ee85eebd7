"""docs/python.md's table of torchvision.transforms.v2 classes (``fastloop._v2_coverage``) says the truth: it
lists every transform class of the pinned torchvision, every class marked "runs" compiles with typical
arguments, and every other class is refused by ``compile_transform`` with a TypeError (MixUp and CutMix run as
``Loader(batch_transform=...)`` instead)."""

from __future__ import annotations

import importlib.util
import re
from typing import Any, Callable, Dict

import pytest
import torch
import torchvision
import torchvision.transforms.v2 as T
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode

from conftest import ROOT

fastloop = pytest.importorskip("fastloop")
from fastloop import _v2_coverage  # noqa: E402
from fastloop._batch import compile_batch_transform  # noqa: E402
from fastloop.transforms import compile_transform  # noqa: E402

REGENERATE = ".venv/bin/python tools/docs/make_python_md.py"

# One instance of every v2 class, built as users and torchvision's references build them.
EXAMPLES: Dict[str, Callable[[], Any]] = {
    "AugMix": lambda: T.AugMix(severity=3, mixture_width=3),
    "AutoAugment": lambda: T.AutoAugment(T.AutoAugmentPolicy.IMAGENET),
    "CenterCrop": lambda: T.CenterCrop(224),
    "ClampBoundingBoxes": lambda: T.ClampBoundingBoxes(),
    "ClampKeyPoints": lambda: T.ClampKeyPoints(),
    "ColorJitter": lambda: T.ColorJitter(0.4, 0.4, 0.4, 0.1),
    "Compose": lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip()]),
    "ConvertBoundingBoxFormat": lambda: T.ConvertBoundingBoxFormat(tv_tensors.BoundingBoxFormat.XYXY),
    "ConvertImageDtype": lambda: T.ConvertImageDtype(torch.float32),
    "CutMix": lambda: T.CutMix(num_classes=10),
    "ElasticTransform": lambda: T.ElasticTransform(alpha=50.0, sigma=5.0),
    "FiveCrop": lambda: T.FiveCrop(224),
    "GaussianBlur": lambda: T.GaussianBlur(5, sigma=(0.1, 2.0)),
    "GaussianNoise": lambda: T.GaussianNoise(sigma=0.1),
    "Grayscale": lambda: T.Grayscale(3),
    "Identity": lambda: T.Identity(),
    "JPEG": lambda: T.JPEG((50, 100)),
    "Lambda": lambda: T.Lambda(lambda x: x),
    "LinearTransformation": lambda: T.LinearTransformation(torch.eye(12), torch.zeros(12)),
    "MixUp": lambda: T.MixUp(alpha=0.2, num_classes=10),
    "Normalize": lambda: T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "PILToTensor": lambda: T.PILToTensor(),
    "Pad": lambda: T.Pad(4, fill=0, padding_mode="reflect"),
    "RGB": lambda: T.RGB(),
    "RandAugment": lambda: T.RandAugment(num_ops=2, magnitude=9),
    "RandomAdjustSharpness": lambda: T.RandomAdjustSharpness(2.0, p=0.5),
    "RandomAffine": lambda: T.RandomAffine(15, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5),
    "RandomApply": lambda: T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
    "RandomAutocontrast": lambda: T.RandomAutocontrast(),
    "RandomChannelPermutation": lambda: T.RandomChannelPermutation(),
    "RandomChoice": lambda: T.RandomChoice([T.RandomRotation(15), T.RandomPosterize(4)]),
    "RandomCrop": lambda: T.RandomCrop(32, padding=4),
    "RandomEqualize": lambda: T.RandomEqualize(),
    "RandomErasing": lambda: T.RandomErasing(p=0.25),
    "RandomGrayscale": lambda: T.RandomGrayscale(p=0.2),
    "RandomHorizontalFlip": lambda: T.RandomHorizontalFlip(),
    "RandomInvert": lambda: T.RandomInvert(),
    "RandomIoUCrop": lambda: T.RandomIoUCrop(),
    "RandomOrder": lambda: T.RandomOrder([T.RandomHorizontalFlip(), T.RandomVerticalFlip()]),
    "RandomPerspective": lambda: T.RandomPerspective(0.5),
    "RandomPhotometricDistort": lambda: T.RandomPhotometricDistort(),
    "RandomPosterize": lambda: T.RandomPosterize(bits=4),
    "RandomResize": lambda: T.RandomResize(260, 1040),
    "RandomResizedCrop": lambda: T.RandomResizedCrop(224, interpolation=InterpolationMode.BILINEAR, antialias=True),
    "RandomRotation": lambda: T.RandomRotation(30),
    "RandomShortestSize": lambda: T.RandomShortestSize([480, 512, 544], max_size=1333),
    "RandomSolarize": lambda: T.RandomSolarize(threshold=128),
    "RandomVerticalFlip": lambda: T.RandomVerticalFlip(),
    "RandomZoomOut": lambda: T.RandomZoomOut(fill={tv_tensors.Image: (123, 117, 104), "others": 0}),
    "Resize": lambda: T.Resize(256),
    "SanitizeBoundingBoxes": lambda: T.SanitizeBoundingBoxes(),
    "SanitizeKeyPoints": lambda: T.SanitizeKeyPoints(),
    "ScaleJitter": lambda: T.ScaleJitter((1024, 1024), scale_range=(0.1, 2.0)),
    "SetClampingMode": lambda: T.SetClampingMode("soft"),
    "TenCrop": lambda: T.TenCrop(224),
    "ToDtype": lambda: T.ToDtype(torch.float32, scale=True),
    "ToImage": lambda: T.ToImage(),
    "ToPILImage": lambda: T.ToPILImage(),
    "ToPureTensor": lambda: T.ToPureTensor(),
    "ToTensor": lambda: T.ToTensor(),
    "TrivialAugmentWide": lambda: T.TrivialAugmentWide(),
    "UniformTemporalSubsample": lambda: T.UniformTemporalSubsample(8),
}

# Classes that torchvision runs only after others (Normalize on float images): compiled in that pipeline.
IN_PIPELINE: Dict[str, Callable[[Any], Any]] = {
    "Normalize": lambda t: T.Compose([T.ToDtype(torch.float32, scale=True), t]),
    "LinearTransformation": lambda t: T.Compose([T.ToDtype(torch.float32, scale=True), t]),
}

COVERAGE = _v2_coverage.v2_coverage()


def _pinned(package: str) -> str:
    """The version requirements.txt pins ``package`` to."""
    match = re.search(rf"^{package}==([\w.]+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert match, f"requirements.txt pins no {package}"
    return match.group(1)


def test_the_table_lists_every_v2_class_of_the_pinned_torchvision():
    assert torchvision.__version__.split("+")[0] == _pinned("torchvision"), "the venv's torchvision is not the pinned one"
    names = [row.name for row in COVERAGE]
    assert names == _v2_coverage.v2_transform_classes()
    assert "Transform" not in names and {"Compose", "RandomApply", "RandomChoice", "RandomOrder"} <= set(names)
    assert len(names) == 62  # torchvision 0.29's v2: 58 operations, 4 containers
    assert sorted(EXAMPLES) == names, "EXAMPLES must build one instance of every v2 class"
    assert {row.status for row in COVERAGE} <= {_v2_coverage.RUNS, _v2_coverage.BY_DESIGN, _v2_coverage.NOT_YET}


def test_every_class_not_run_says_why():
    for row in COVERAGE:
        if row.status != _v2_coverage.RUNS:
            assert row.note and row.note != "no reason recorded", f"{row.name}: add its reason to _v2_coverage._NOT_YET"


@pytest.mark.filterwarnings(r"ignore:The transform `ToTensor\(\)` is deprecated:UserWarning")
@pytest.mark.parametrize("row", COVERAGE, ids=lambda row: row.name)
def test_the_status_is_what_compile_transform_does(row):
    transform = EXAMPLES[row.name]()
    pipeline = IN_PIPELINE.get(row.name, lambda t: t)(transform)
    if row.status == _v2_coverage.RUNS:
        spec = compile_transform(pipeline)
        if row.name != "Compose":  # a top-level Compose is the list of its transforms
            assert f"{row.name}(" in spec, spec
    else:
        with pytest.raises(TypeError, match=row.name):
            compile_transform(pipeline)
    if row.name in ("MixUp", "CutMix"):  # by design: on batches instead
        assert compile_batch_transform(transform)[0] == row.name


def test_lambda_and_to_pil_image_are_refused_by_design():
    status = {row.name: row.status for row in COVERAGE}
    for name in ("Lambda", "ToPILImage", "MixUp", "CutMix", "UniformTemporalSubsample"):
        assert status[name] == _v2_coverage.BY_DESIGN, name


def test_the_docs_table_is_this_builds():
    spec = importlib.util.spec_from_file_location("make_python_md", ROOT / "tools/docs/make_python_md.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    page = (ROOT / "docs/python.md").read_text()
    fresh = "\n".join(line.rstrip() for line in "\n".join(generator.v2_classes_section()).splitlines())
    assert generator.V2_HEADING in page, f"docs/python.md has no v2 table: run `{REGENERATE}`"
    committed = page[page.index(generator.V2_HEADING):].rstrip()
    assert committed == fresh.rstrip(), f"docs/python.md's v2 table is stale: run `{REGENERATE}`"
