"""bench/recipe_ablation.py against a fake `fastloop`: seeds expand rows, the table's arithmetic, resuming.

The fake prints the summary lines of `fastloop train` and `fastloop eval` with an accuracy that depends on
the flags and the seed it was given, and records each call, so no test trains anything.
"""

import importlib.util
import json
import pathlib
import shlex
import subprocess
import sys
from typing import List

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: Accuracy in % = 90 + seed + 1 with --label-smoothing 0.2 + 2 with --lr 0.2; eval: 80 + 0.5 per TTA mode.
FAKE = '''\
import pathlib, sys
args = sys.argv[1:]
here = pathlib.Path(__file__).parent
with open(here / "calls.txt", "a") as calls:
    calls.write(" ".join(args) + "\\n")
def value(flag, default):
    return args[args.index(flag) + 1] if flag in args else default
if args[0] == "eval":
    accuracy = 80 + 0.5 * ["off", "flip", "flip-translate"].index(value("--tta", "off"))
    print(f"test accuracy {accuracy:.2f}% (loss 0.3000, 10000 images, 2.0 s) {value('--checkpoint', '')}")
    sys.exit(0)
if value("--seed", "0") == "13":
    print("fake: seed 13 crashes", file=sys.stderr)
    sys.exit(1)
accuracy = 90 + int(value("--seed", "0"))
accuracy += 1 if value("--label-smoothing", "0.1") == "0.2" else 0
accuracy += 2 if value("--lr", "0.1") == "0.2" else 0
pathlib.Path(value("--metrics", "/dev/null")).write_text("{}\\n")
print("epoch 1/1 ...")
print(f"test accuracy {accuracy:.2f}% (loss 0.2500, 10000 images) after 100 steps, 290.0 s training, "
      f"{1000 + 10 * int(value('--seed', '0'))} img/s, {295 + int(value('--seed', '0'))}.0 s in all")
'''


def ablation_module():
    spec = importlib.util.spec_from_file_location("recipe_ablation", ROOT / "bench" / "recipe_ablation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake_cli(tmp_path: pathlib.Path) -> pathlib.Path:
    """An executable that answers `train` and `eval` as fastloop's summary lines do, logging its calls."""
    path = tmp_path / "fake bin" / "fastloop"
    path.parent.mkdir()
    script = path.with_name("fake_fastloop.py")
    script.write_text(FAKE)
    # A shell wrapper, not a `#!python` line: a shebang cannot hold a path with a space (a clone in "a clone/").
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(script))} "$@"\n')
    path.chmod(0o755)
    return path


def ablation(cli: pathlib.Path, out: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "recipe_ablation.py"), "--cli", str(cli),
                           "--out", str(out), *args], capture_output=True, text=True)


def calls(cli: pathlib.Path) -> List[str]:
    path = cli.parent / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_seeds_expand_every_row_and_the_json_keeps_every_run(fake_cli, tmp_path):
    out = tmp_path / "out"
    done = ablation(fake_cli, out, "--rows", "recipe,ls0.2", "--seeds", "0,1")
    assert done.returncode == 0, done.stderr
    runs = json.loads((out / "ablation.json").read_text())
    assert sorted((r["row"], r["seed"]) for r in runs) == [("ls0.2", 0), ("ls0.2", 1), ("recipe", 0), ("recipe", 1)]
    assert {(r["row"], r["seed"]): r["accuracy"] for r in runs} == {
        ("recipe", 0): 90.0, ("recipe", 1): 91.0, ("ls0.2", 0): 91.0, ("ls0.2", 1): 92.0}
    trains = [c for c in calls(fake_cli) if c.startswith("train")]
    assert len(trains) == 4 and all("--seed" in c for c in trains)
    assert sum("--label-smoothing 0.2 --seed 1" in c for c in trains) == 1
    # The recipe's checkpoint is evaluated with each TTA mode, once per seed.
    assert len([c for c in calls(fake_cli) if c.startswith("eval")]) == 6
    assert all("eval" in r for r in runs if r["row"] == "recipe")
    assert (out / "ls0.2_seed1.log").exists() and (out / "recipe_seed0_eval_tta_flip.log").exists()


def test_table_shows_mean_spread_n_and_delta_vs_the_recipe_mean(fake_cli, tmp_path):
    out = tmp_path / "out"
    assert ablation(fake_cli, out, "--rows", "recipe,lr0.2", "--seeds", "0,1,3").returncode == 0
    table = (out / "ablation.md").read_text()
    # recipe: 90, 91, 93 -> mean 91.33, half range 1.50; lr0.2: 92, 93, 95 -> 93.33, +2.00 vs the recipe.
    recipe = next(line for line in table.splitlines() if line.startswith("| recipe:"))
    assert "| 91.33 ± 1.50% | 3 |  |" in recipe
    assert "| 296 s | 1013 |" in recipe  # elapsed 295, 296, 298 s; 1000, 1010, 1030 img/s
    lr = next(line for line in table.splitlines() if line.startswith("| lr0.2:"))
    assert "| 93.33 ± 1.50% | 3 | +2.00 |" in lr and "`--lr 0.2`" in lr
    assert "(max - min) / 2" in table and "Commit:" in table and "cores, bf16" in table
    assert "| flip-translate | 81.00 ± 0.00% | +1.00 | 2.0 s |" in table


def test_markdown_arithmetic_of_runs_without_seeds_and_a_single_run():
    module = ablation_module()
    runs = [{"row": "recipe", "flags": "", "what": "w", "accuracy": 93.0, "elapsed_seconds": 300.0,
             "img_per_s": 2000.0},  # written before --seeds: counts as seed 0
            {"row": "ls0.05", "seed": 0, "flags": "--label-smoothing 0.05", "what": "w", "accuracy": 92.5,
             "elapsed_seconds": 290.0, "img_per_s": 2100.0},
            {"row": "ls0.05", "seed": 1, "flags": "--label-smoothing 0.05", "what": "w", "accuracy": 93.25,
             "elapsed_seconds": 310.0, "img_per_s": 2000.0}]
    table = module.markdown(runs)
    assert "| recipe: w | (none) | 93.00% | 1 |  | 300 s | 2000 |" in table
    assert "| ls0.05: w | `--label-smoothing 0.05` | 92.88 ± 0.38% | 2 | -0.12 | 300 s | 2050 |" in table
    assert table.index("| recipe:") < table.index("| ls0.05:")  # the rows' order, not the runs'
    assert module.mean_spread([1.0, 2.0, 6.0]) == (3.0, 2.5)


def test_rerun_skips_finished_runs_unless_forced(fake_cli, tmp_path):
    out = tmp_path / "out"
    assert ablation(fake_cli, out, "--rows", "ls0.2", "--seeds", "0").returncode == 0
    assert len(calls(fake_cli)) == 1
    done = ablation(fake_cli, out, "--rows", "ls0.2", "--seeds", "0,1")
    assert done.returncode == 0 and "1 runs to do (1 already" in done.stdout
    assert [c.split("--seed ")[1].split()[0] for c in calls(fake_cli)] == ["0", "1"]
    assert ablation(fake_cli, out, "--rows", "ls0.2", "--seeds", "0,1").returncode == 0
    assert len(calls(fake_cli)) == 2  # nothing left to run
    assert ablation(fake_cli, out, "--rows", "ls0.2", "--seeds", "1", "--force").returncode == 0
    assert len(calls(fake_cli)) == 3
    runs = json.loads((out / "ablation.json").read_text())
    assert sorted(r["seed"] for r in runs) == [0, 1]  # the forced run replaced its old one


def test_a_failed_run_keeps_the_runs_finished_before_it(fake_cli, tmp_path):
    out = tmp_path / "out"
    done = ablation(fake_cli, out, "--rows", "ls0.2", "--seeds", "0,13,2")
    assert done.returncode != 0 and "ls0.2_seed13.log" in done.stderr
    assert [r["seed"] for r in json.loads((out / "ablation.json").read_text())] == [0]
    assert "| 90.00% | 1 |" not in (out / "ablation.md").read_text()  # ls0.2 seed 0 is 91
    assert "| 91.00% | 1 |" in (out / "ablation.md").read_text()


def test_unknown_row_exits_with_the_list_of_rows(fake_cli, tmp_path):
    done = ablation(fake_cli, tmp_path / "out", "--rows", "recipe,width+99")
    assert done.returncode != 0 and calls(fake_cli) == []
    assert "unknown rows ['width+99']" in done.stderr
    assert "'no-flip'" in done.stderr and "'tta-flip-translate'" in done.stderr and "candidates" in done.stderr


def test_groups_and_list():
    module = ablation_module()
    candidates = module.rows_select("candidates")
    assert candidates[0] == "recipe" and "bs256" in candidates and "no-flip" not in candidates
    assert module.rows_select("ls0.2,recipe,ls0.2") == ["recipe", "ls0.2"]  # the table's order, each once
    assert set(module.rows_select("all")) == set(module.rows_select("off")) | set(candidates)
    listed = subprocess.run([sys.executable, str(ROOT / "bench" / "recipe_ablation.py"), "--list"],
                            capture_output=True, text=True, check=True).stdout
    assert len(listed.splitlines()) == len(module.ALL_ROWS)
    assert any(line.split()[:3] == ["bs256", "--batch-size", "256"] for line in listed.splitlines())


def test_every_rows_flags_are_flags_of_fastloop_train(cli):
    """A row whose flag the CLI does not know (renamed, misspelt) would only fail hours into a table."""
    help_text = subprocess.run([str(cli), "train", "--help"], capture_output=True, text=True, check=True).stdout
    known = {word.split("=")[0].split(",")[0].split("{")[0] for word in help_text.split() if word.startswith("--")}
    known |= {"--no-" + flag[2:] for flag in known}  # CLI11 lists a bool's --no- form after a comma
    for row in ablation_module().ALL_ROWS:
        for flag in (f.split("=")[0] for f in row.flags if f.startswith("--")):
            assert flag in known, f"row {row.name}: {flag} is not a flag of `fastloop train`"
