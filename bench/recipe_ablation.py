"""The default recipe's own on/off table: `fastloop train` as is, then with each ingredient switched off in turn.

The tuning guide's method applied to the recipe itself (issue 28): every row is one whole run of
``fastloop train`` (the default recipe: the built-in defaults, ``--perf auto``) with one ingredient off,
its final test accuracy (the run's last evaluation) and its time from start to that evaluation. The
recipe's checkpoint is then evaluated by ``fastloop eval`` with each ``--tta`` mode (float32, as eval
computes): what test-time augmentation adds to the same weights, and what it costs. Runs one after
another, never two at once: run it on an idle machine.

Usage::

    .venv/bin/python bench/recipe_ablation.py --out bench/results/cpu-2core/recipe94/ablation
    .venv/bin/python bench/recipe_ablation.py --rows recipe,no-tta --out /tmp/a   # some rows only

Writes OUT/ROW.log (the run's output), OUT/ROW.jsonl (its --metrics), OUT/ablation.json and OUT/ablation.md.
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, NamedTuple


class Row(NamedTuple):
    name: str
    flags: List[str]
    what: str


#: The recipe, then each of its ingredients off. Flags are `fastloop train`'s; the recipe is its defaults.
ROWS: List[Row] = [
    Row("recipe", [], "the default recipe, every ingredient on"),
    Row("no-flip", ["--no-flip"], "no random horizontal flip"),
    Row("no-crop", ["--crop-pad", "0"], "no random 2-px padded crop"),
    Row("no-label-smoothing", ["--label-smoothing", "0"], "label smoothing 0.1 off"),
    Row("no-nesterov", ["--no-nesterov"], "plain momentum instead of Nesterov's"),
    Row("no-weight-decay", ["--weight-decay", "0"], "weight decay 5e-4 off"),
    Row("wd-all", ["--wd-all"], "weight decay on BatchNorm parameters and biases too (timm's exclusion off)"),
    Row("constant-lr", ["--schedule", "constant"], "one-cycle schedule off: LR 0.1 throughout"),
    Row("fp32", ["--amp", "off"], "bf16 autocast off (--perf auto's choice on a CPU with native bf16)"),
]

_SUMMARY = re.compile(r"test accuracy ([0-9.]+)% .* after (\d+) steps, ([0-9.]+) s training, "
                      r"([0-9.]+) img/s, ([0-9.]+) s in all")


_EVAL = re.compile(r"test accuracy ([0-9.]+)% .*, ([0-9.]+) s\)")
TTA_MODES = ["off", "flip", "flip-translate"]


def native_bf16() -> bool:
    """Whether --perf auto picks bf16 autocast on this CPU (its rule: avx512_bf16 or AMX flags)."""
    try:
        flags = pathlib.Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def default_rows() -> List[str]:
    """Every row; the fp32 row only where the recipe trains in bf16 (elsewhere the recipe is that row)."""
    return [r.name for r in ROWS if r.name != "fp32" or native_bf16()]


def run_logged(command: List[str], log: pathlib.Path, pattern: "re.Pattern[str]") -> "re.Match[str]":
    """Runs a command to its end, its output into `log`; exits naming the log when it fails."""
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    log.write_text(done.stdout + done.stderr)
    found = pattern.search(done.stdout)
    if done.returncode != 0 or found is None:
        sys.exit(f"recipe_ablation: {' '.join(map(str, command))} failed (exit {done.returncode}); see {log}")
    return found


def run_row(cli: pathlib.Path, row: Row, out: pathlib.Path) -> Dict[str, object]:
    """Runs one row's `fastloop train` to the end and returns its summary line's numbers; the recipe's
    checkpoint is also evaluated with each --tta mode."""
    metrics = out / f"{row.name}.jsonl"
    metrics.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="fastloop_ablation_") as checkpoints:
        found = run_logged([cli, "train", *row.flags, "--metrics", metrics, "--checkpoint-dir", checkpoints],
                           out / f"{row.name}.log", _SUMMARY)
        accuracy, steps, train_s, img_per_s, elapsed = found.groups()
        result = {"row": row.name, "flags": " ".join(row.flags), "what": row.what, "accuracy": float(accuracy),
                  "steps": int(steps), "train_seconds": float(train_s), "img_per_s": float(img_per_s),
                  "elapsed_seconds": float(elapsed)}
        if row.name == "recipe":
            result["eval"] = {}
            for mode in TTA_MODES:
                found = run_logged([cli, "eval", "--checkpoint", f"{checkpoints}/last.ckpt", "--tta", mode],
                                   out / f"recipe_eval_tta_{mode}.log", _EVAL)
                result["eval"][mode] = {"accuracy": float(found.group(1)), "seconds": float(found.group(2))}
    return result


def markdown(results: List[Dict[str, object]]) -> str:
    """The table: each row's accuracy and time, and its difference from the recipe's."""
    base = next((r for r in results if r["row"] == "recipe"), None)
    lines = ["| row | flags | test accuracy | Δ vs recipe | start to final evaluation | img/s |",
             "|---|---|---:|---:|---:|---:|"]
    for r in results:
        delta = f"{r['accuracy'] - base['accuracy']:+.2f}" if base and r is not base else ""
        flags = f"`{r['flags']}`" if r["flags"] else "(none)"
        lines.append(f"| {r['row']}: {r['what']} | {flags} | {r['accuracy']:.2f}% | {delta} | "
                     f"{r['elapsed_seconds']:.0f} s | {r['img_per_s']:.0f} |")
    if base and "eval" in base:
        lines += ["", "The recipe's checkpoint under `fastloop eval --tta MODE` (float32):", "",
                  "| --tta | test accuracy | Δ vs off | evaluation time |", "|---|---:|---:|---:|"]
        off = base["eval"]["off"]["accuracy"]
        for mode, e in base["eval"].items():
            lines.append(f"| {mode} | {e['accuracy']:.2f}% | {e['accuracy'] - off:+.2f} | {e['seconds']:.1f} s |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", type=pathlib.Path, default=pathlib.Path("build/fastloop"))
    parser.add_argument("--rows", default=",".join(default_rows()), help="comma-separated row names")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for the logs, metrics and tables")
    args = parser.parse_args()
    by_name = {r.name: r for r in ROWS}
    names = args.rows.split(",")
    unknown = [n for n in names if n not in by_name]
    if unknown:
        sys.exit(f"recipe_ablation: unknown rows {unknown}; rows are {list(by_name)}")
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "ablation.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else []
    for name in names:
        result = run_row(args.cli, by_name[name], args.out)
        results = [r for r in results if r["row"] != name] + [result]
        results.sort(key=lambda r: list(by_name).index(r["row"]))
        results_path.write_text(json.dumps(results, indent=1) + "\n")
        (args.out / "ablation.md").write_text(markdown(results))
        print(f"{name}: {result['accuracy']:.2f}% in {result['elapsed_seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
