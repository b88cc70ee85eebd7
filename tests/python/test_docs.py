"""docs/cli.md and docs/python.md are generated (tools/docs/): each must equal a fresh generation, so a flag,
a command, a parameter or a docstring changed without regenerating the page fails here. The README's Python
quick starts run as written (tests/test_readme.cpp runs its and docs/'s shell commands)."""

import importlib.util
import inspect
import pathlib
import re
import subprocess
import sys
from typing import List

import fastloop
import fastloop.transforms

from conftest import ROOT


def _generator(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools/docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_equals_a_fresh_generation(cli):
    fresh = _generator("make_cli_md").render(cli.resolve())
    committed = (ROOT / "docs/cli.md").read_text()
    assert committed == fresh, "docs/cli.md is stale: run .venv/bin/python tools/docs/make_cli_md.py"


def test_cli_reference_lists_every_command_and_recipe_key(cli):
    page = (ROOT / "docs/cli.md").read_text()
    for command in ("train", "eval", "predict", "export", "bench", "bench e2e", "bench loader", "launch", "tune"):
        assert f"## fastloop {command}\n" in page, command
    keys = re.findall(r'\{"([a-z_]+\.[a-z0-9_]+)",\s*"--', (ROOT / "src/fastloop/core/config_fields.cpp").read_text())
    assert len(keys) > 50
    for key in keys:
        assert f"| `{key}` |" in page, f"docs/cli.md misses the recipe key {key}"


def test_python_reference_equals_a_fresh_generation():
    fresh = _generator("make_python_md").render()
    committed = (ROOT / "docs/python.md").read_text()
    assert committed == fresh, "docs/python.md is stale: run .venv/bin/python tools/docs/make_python_md.py"


def test_python_reference_names_every_public_name_and_parameter():
    page = (ROOT / "docs/python.md").read_text()
    for name in fastloop.__all__:
        if name.startswith("_"):
            continue
        assert f"## fastloop.{name}\n" in page, name
        for parameter in inspect.signature(getattr(fastloop, name)).parameters:
            assert re.search(rf"\b{parameter}\b", page), f"docs/python.md misses {name}'s parameter {parameter}"
    for name in fastloop.transforms.__all__:
        assert f"### fastloop.transforms.{name}\n" in page, name


def _python_blocks(page: pathlib.Path) -> List[str]:
    """The ```python blocks of a page, in order."""
    return re.findall(r"^```python\n(.*?)^```$", page.read_text(), re.M | re.S)


# How the README's Python quick starts are shortened here: each (written, run) pair must be found in the
# block as written, so a changed README fails until this list follows it.
_README_SHORTENED = [
    [("imagefolder:/data/pets", "imagefolder:{images}"), ("batch_size=64", "batch_size=4"),
     ("RandomResizedCrop(224", "RandomResizedCrop(32"), ("transform=transform)", "transform=transform, image_size=32)")],
    [('time_budget="2m"', 'time_budget="off", max_steps=2, data={{"source": "synthetic:1x28x28:256"}}')],
    [],
]


def test_readme_python_quick_starts_run_as_written(image_folder, cli, tmp_path):
    """Each ```python block of the README runs (in order, in one folder: the export block loads the model
    that the `fastloop export` line writes), with the data made small and the runs short."""
    blocks = _python_blocks(ROOT / "README.md")
    assert len(blocks) == len(_README_SHORTENED), "the README's python blocks changed: update _README_SHORTENED"
    (tmp_path / "recipes").symlink_to(ROOT / "recipes")
    for block, shortened in zip(blocks, _README_SHORTENED):
        for written, run in shortened:
            assert written in block, f"the README's python block no longer has {written!r}:\n{block}"
            block = block.replace(written, run.format(images=image_folder))
        if "fm.pt" in block:  # the README's `fastloop export ... --out fm.pt` line, before its loader
            subprocess.run([str(cli), "export", "--checkpoint", "runs/fm/last.ckpt", "--out", "fm.pt"],
                           cwd=tmp_path, check=True, capture_output=True)
        done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{done.stdout}\n{done.stderr}"
