"""``LinearTransformation`` (whitening): the flattened float image minus ``mean_vector`` times the [D, D]
``transformation_matrix``, as torchvision's v2 class computes it.

Both sides call ``torch.mm`` on the same [1, D] x [D, D] float32 operands, but the tests claim only a bound:
the GEMM's summation order is BLAS's (MKL's kernel per CPU) and not shown equal here, so values are compared
within 1e-5 of their scale. The tensors reach the C++ pipeline as a safetensors file (the Python package writes
the transform's own tensors to a content-named file) or, for small matrices, as nested lists in a spec.
"""

from __future__ import annotations

import os
from typing import Tuple

import pytest
import torch
import torchvision.transforms.v2 as T
from torchvision import tv_tensors

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform  # noqa: E402

_C = fastloop._C
SEED = 20261207


def _image(seed: int, channels: int = 3, height: int = 8, width: int = 6) -> torch.Tensor:
    return torch.randint(0, 256, (channels, height, width), dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))


def _whitening(d: int, seed: int, dtype: torch.dtype = torch.float32) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(d, d, generator=g).to(dtype) / d**0.5, torch.rand(d, generator=g).to(dtype)


def _assert_close(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=0, atol=1e-5 * max(1.0, want.abs().max().item()))


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTLOOP_CACHE", str(tmp_path / "cache"))  # this test's own: it counts the files


@pytest.mark.parametrize("before", [[], [T.CenterCrop((8, 6))], [T.RandomHorizontalFlip(p=1.0)]])
def test_whitening_after_the_conversion_gives_torchvisions_values(before):
    matrix, mean = _whitening(3 * 8 * 6, 1)
    transform = T.Compose([*before, T.ToDtype(torch.float32, scale=True), T.LinearTransformation(matrix, mean),
                           T.Normalize((0.1, 0.2, 0.3), (1.5, 2.0, 2.5))])
    spec = compile_transform(transform)
    for index in range(3):
        image = _image(index, height=10 if before and isinstance(before[0], T.CenterCrop) else 8)
        got = _C._transform_output(spec, image, SEED, index)
        _assert_close(got, transform(tv_tensors.Image(image)).as_subclass(torch.Tensor))


def test_the_tensors_travel_in_one_content_named_file_found_again(tmp_path):
    matrix, mean = _whitening(12, 2)
    spec = compile_transform([T.ToDtype(torch.float32), T.LinearTransformation(matrix, mean)])
    files = os.listdir(tmp_path / "cache" / "tensors")
    assert len(files) == 1 and files[0] in spec
    assert compile_transform([T.ToDtype(torch.float32), T.LinearTransformation(matrix.clone(), mean.clone())]) == spec
    other = compile_transform([T.ToDtype(torch.float32), T.LinearTransformation(matrix, mean + 1)])
    assert other != spec and len(os.listdir(tmp_path / "cache" / "tensors")) == 2


def test_a_spec_may_give_small_tensors_as_lists():
    image = _image(3, channels=1, height=2, width=2)
    matrix = [[1.0, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.25], [0.0, 0.0, 2.0, 0.0], [-1.0, 0.0, 0.0, 1.0]]
    mean = [0.1, 0.2, 0.3, 0.4]
    spec = f"ToDtype(torch.float32, scale=True), LinearTransformation({matrix}, {mean})"
    want = T.LinearTransformation(torch.tensor(matrix), torch.tensor(mean))(T.ToDtype(torch.float32, scale=True)(
        tv_tensors.Image(image)))
    _assert_close(_C._transform_output(spec, image, SEED, 0), want.as_subclass(torch.Tensor))


def test_float64_tensors_compute_in_float64_and_the_image_keeps_its_dtype():
    matrix, mean = _whitening(3 * 8 * 6, 4, torch.float64)
    transform = T.Compose([T.ToDtype(torch.float64, scale=True), T.LinearTransformation(matrix, mean)])
    image = _image(5)
    want = transform(tv_tensors.Image(image)).as_subclass(torch.Tensor)
    got = _C._transform_output(compile_transform(transform), image, SEED, 0)  # the loader's float32 output
    torch.testing.assert_close(got, want.float(), rtol=0, atol=1e-5 * want.abs().max().item())


@pytest.mark.parametrize("workers", [1, 2])
def test_a_loader_whitens_each_sample(workers, tmp_path):
    from PIL import Image

    images = [_image(i) for i in range(5)]
    paths = []
    for i, image in enumerate(images):
        paths.append(str(tmp_path / f"{i}.png"))
        Image.fromarray(image.permute(1, 2, 0).numpy()).save(paths[-1])
    matrix, mean = _whitening(3 * 8 * 6, 6)
    transform = T.Compose([T.ToImage(), T.ToDtype(torch.float32, scale=True), T.LinearTransformation(matrix, mean)])
    loader = fastloop.Loader(fastloop.Files(paths, [0, 1, 0, 1, 0]), transform=transform, batch_size=2,
                             shuffle=False, drop_last=False, seed=SEED, workers=workers)
    got = torch.cat([batch for batch, _ in loader])
    for i, image in enumerate(images):
        _assert_close(got[i], transform(tv_tensors.Image(image)).as_subclass(torch.Tensor))


# ---------------------------------------------------------------------------------------------- bad input
def test_on_a_uint8_image_it_is_refused_with_the_conversion_to_put_first():
    matrix, mean = _whitening(12, 7)
    with pytest.raises(TypeError, match=r"LinearTransformation\(\.\.\.\) on a uint8 image.*ToDtype\(torch.float32, "
                                        r"scale=False\) before it"):
        compile_transform([T.LinearTransformation(matrix, mean), T.ToDtype(torch.float32)])


def test_an_image_of_another_size_is_named_with_torchvisions_message(tmp_path):
    matrix, mean = _whitening(12, 8)
    spec = compile_transform([T.ToDtype(torch.float32), T.LinearTransformation(matrix, mean)])
    with pytest.raises(ValueError, match=r"incompatible shape.*\[3 x 8 x 6\] != 12"):
        _C._transform_output(spec, _image(9), SEED, 0)


def test_tensor_files_and_shapes_are_checked_as_torchvision_checks_them(tmp_path):
    to_float = "ToDtype(torch.float32), "
    missing = tmp_path / "missing.safetensors"
    with pytest.raises(ValueError, match="missing.safetensors"):
        _C._transform_repr(to_float + f"LinearTransformation('{missing}', '{missing}')")
    square = tmp_path / "rect.safetensors"
    _C._save_tensors(str(square), [("transformation_matrix", torch.zeros(3, 4)), ("mean_vector", torch.zeros(3))])
    with pytest.raises(ValueError, match=r"transformation_matrix should be square. Got \(3, 4\) rectangular matrix"):
        _C._transform_repr(to_float + f"LinearTransformation('{square}', '{square}')")
    with pytest.raises(ValueError, match=r"mean_vector should have the same length 2"):
        _C._transform_repr(to_float + "LinearTransformation([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "
                                      "[1.0, 2.0])")
    mixed = tmp_path / "mixed.safetensors"
    _C._save_tensors(str(mixed), [("transformation_matrix", torch.eye(3, dtype=torch.float64)),
                                  ("mean_vector", torch.zeros(3))])
    with pytest.raises(ValueError, match=r"same dtype. Got torch.float64 and torch.float32"):
        _C._transform_repr(to_float + f"LinearTransformation('{mixed}', '{mixed}')")
    with pytest.raises(TypeError, match=r"equal rows"):
        _C._transform_repr(to_float + "LinearTransformation([[1.0, 0.0], [1.0]], [1.0, 2.0])")
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    with pytest.raises(ValueError, match="garbage.safetensors"):
        _C._transform_repr(to_float + f"LinearTransformation('{garbage}', '{garbage}')")
