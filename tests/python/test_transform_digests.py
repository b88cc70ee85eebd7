"""fastloop's own batches are the same bits on every machine: each pipeline of tests/tools/make_transform_digests.py
(every warp, colour blend, resize, blur and pointwise operation, the AutoAugment family, RandomErasing, the
detection and segmentation targets, the output dtypes) run by ``fastloop.Loader`` with 1 and 2 workers gives
the SHA-256 digest committed in transform_digests.json. fastloop computes with its own kernels, not ATen's, so
the digests hold natively and under ``ATEN_CPU_CAPABILITY=avx2`` and ``=default`` alike
(scripts/test_capabilities.sh runs this file under each)."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest
import torch

from conftest import ROOT

fastloop = pytest.importorskip("fastloop")

COMMITTED = ROOT / "tests/python/transform_digests.json"
REGENERATE = ".venv/bin/python tests/tools/make_transform_digests.py"


def _generator():
    spec = importlib.util.spec_from_file_location("make_transform_digests",
                                                  ROOT / "tests/tools/make_transform_digests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


digests = _generator()
RECORD = json.loads(COMMITTED.read_text())


def _changed(what: str, got: str, committed: str) -> str:
    return (f"{what}: digest {got}, committed {committed}. A changed digest means fastloop's batches changed on "
            f"every machine; that is acceptable only with a stated reason (a fixed bug, a new parity rule): then "
            f"regenerate with `{REGENERATE}` and say why in the commit message.")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> "digests.Inputs":
    return digests.write_inputs(tmp_path_factory.mktemp("digest_inputs"))


def test_inputs_are_the_committed_ones_and_decode_to_the_generated_pixels(inputs):
    got = digests.inputs_digest(inputs)
    assert got == RECORD["inputs"], (f"the generated inputs changed (numpy {RECORD['numpy']} made the committed "
                                     f"ones): {_changed('inputs', got, RECORD['inputs'])}")
    for path, pixels in zip(inputs.images, inputs.pixels):  # PNG is lossless: the decode adds no arithmetic
        decoded = fastloop._C._image_decode(str(path))
        assert torch.equal(decoded, torch.from_numpy(pixels).permute(2, 0, 1)), path


def test_every_case_has_a_committed_digest_and_no_two_are_equal():
    assert sorted(digests.cases()) == sorted(RECORD["digests"]), f"the cases changed: run `{REGENERATE}`"
    values = list(RECORD["digests"].values())
    assert len(set(values)) == len(values), "two cases gave the same batches: one of them tests nothing"


@pytest.mark.parametrize("name", sorted(digests.cases()))
def test_batches_have_the_committed_digest_with_1_and_2_workers(name, inputs):
    case = digests.cases()[name]
    for workers in (1, 2):
        got = digests.batches_digest(digests.run_case(case, inputs, workers))
        capability = torch.backends.cpu.get_cpu_capability()
        what = f"{name} ({workers} worker{'s' * (workers > 1)}, ATen capability {capability})"
        assert got == RECORD["digests"][name], _changed(what, got, RECORD["digests"][name])


def test_a_digest_sees_one_changed_value(inputs):
    """The digest reads every value: a batch with one value changed by one float32 ulp digests otherwise."""
    batches = digests.run_case(digests.cases()["color_jitter"], inputs, workers=1)
    images = batches[-1][0].clone()
    images.view(-1)[-1] = torch.nextafter(images.view(-1)[-1], torch.tensor(float("inf")))
    changed = batches[:-1] + [(images, batches[-1][1])]
    assert digests.batches_digest(changed) != digests.batches_digest(batches) == RECORD["digests"]["color_jitter"]
