"""The default recipe's on/off table, and candidate changes to it, each over one or more seeds.

The tuning guide's method applied to the recipe itself (issues 28 and 34): every row is one whole run of
``fastloop train`` (the default recipe: the built-in defaults, ``--perf auto``, time-budgeted to 300 s,
its final evaluation flip-averaged by ``--tta auto``)
with ONE thing switched: an ingredient off (the ``off`` rows) or a candidate change added (the
``candidates`` rows), its final test accuracy (the run's last evaluation) and its time from start to that
evaluation. Each row runs once per ``--seeds`` seed (``--seed S``); the table shows each row's mean ± half
the range over its seeds and its difference from the recipe's mean. The recipe's checkpoint is also
evaluated by ``fastloop eval`` with each ``--tta`` mode (float32, as eval computes): what test-time
augmentation adds to the same weights, and what it costs. Runs one after another, never two at once:
run it on an idle machine (each run takes the 300 s budget; the recipe's ~30 s more for its evals).

The candidates (``--list``) cover the issue's list: width (``--width-delta``) and depth (``--depth-delta``)
of the residual CNN, batch size, label smoothing, EMA, TTA, random erasing at lower p, alternating flips,
lookahead, progressive resizing, airbench's BatchNorm tricks and its whitened first layer.

Resumable: each finished run is appended to OUT/ablation.json at once and the tables are rewritten; a
rerun with the same OUT skips the (row, seed) runs already there unless ``--force``.

Usage::

    .venv/bin/python bench/recipe_ablation.py --out bench/results/cpu-2core/recipe94/ablation
    .venv/bin/python bench/recipe_ablation.py --rows recipe,no-flip --seeds 0,1 --out /tmp/a
    .venv/bin/python bench/recipe_ablation.py --rows candidates --seeds 0,1 --out /tmp/c
    .venv/bin/python bench/recipe_ablation.py --list

Writes OUT/ROW_seedS.log (the run's output), OUT/ROW_seedS.jsonl (its --metrics), OUT/ablation.json
(every run) and OUT/ablation.md (the tables).
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List, NamedTuple, Optional, Tuple

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Row(NamedTuple):
    name: str
    flags: List[str]
    what: str


#: The recipe, then each of its ingredients off. Flags are `fastloop train`'s; the recipe is its defaults.
ROWS: List[Row] = [
    Row("recipe", [], "the default recipe, every ingredient on"),
    Row("no-flip", ["--no-flip"], "no horizontal flip"),
    Row("random-flip", ["--alternate-flip", "off"], "random flips instead of alternating ones (airbench's)"),
    Row("crop2", ["--crop-pad", "2"], "a random 2-px padded crop (the recipe's before the short-run settings)"),
    Row("no-whiten", ["--whiten-stem", "off"],
        "the stem conv trained from its random init instead of fixed at the training patches' whitening"),
    Row("no-label-smoothing", ["--label-smoothing", "0"], "label smoothing 0.05 off"),
    Row("cos-anneal", ["--anneal-strategy", "cos"], "one-cycle's cosine phases instead of linear ones"),
    Row("no-nesterov", ["--no-nesterov"], "plain momentum instead of Nesterov's"),
    Row("no-weight-decay", ["--weight-decay", "0"], "weight decay 5e-4 off"),
    Row("wd-all", ["--wd-all"], "weight decay on BatchNorm parameters and biases too (timm's exclusion off)"),
    Row("constant-lr", ["--schedule", "constant"], "one-cycle schedule off: LR 0.1 throughout"),
    Row("fp32", ["--amp", "off"], "bf16 autocast off (--perf auto's choice on a CPU with native bf16)"),
    Row("no-short-run", ["--short-run", "off"], "where fewer than 5 epochs fit, the recipe's own epochs instead of "
        "the short run's cheaper ones (train/short_run.h; the same run where more fit)"),
    Row("no-tta", ["--tta", "off"], "plain final evaluation instead of the mean of each image's and its mirror's "
        "logits (--tta auto's flip, as the recipe flips)"),
]

#: The lead where a short run fits (6-7 epochs on the Xeon without AMX): whitened stem, no crop, smoothing 0.05.
SHORT_RUN_LEAD: List[str] = ["--whiten-stem", "--crop-pad", "0", "--label-smoothing", "0.05"]

#: Candidate changes (issue 34), each one switch added to the recipe as it was before the short-run settings
#: became the default (2-px crop, random flips, label smoothing 0.1, cosine one-cycle, trained stem): their
#: texts say what they changed from that recipe, and each run's record keeps its flags and text. Under the
#: 300 s budget a slower step (wider model, TTA's extra forward passes, EMA's second evaluation) buys fewer
#: steps: the rows measure the trade, not the change at equal steps.
CANDIDATES: List[Row] = [
    Row("width-8", ["--width-delta=-8"], "residual CNN 8 channels narrower per stage (16/32/96 -> 8/24/88)"),
    Row("width+8", ["--width-delta", "8"], "residual CNN 8 channels wider per stage (16/32/96 -> 24/40/104)"),
    Row("width+16", ["--width-delta", "16"], "residual CNN 16 channels wider per stage (-> 32/48/112)"),
    Row("bs64", ["--batch-size", "64", "--lr", "0.05"],
        "batch 64 instead of 128, peak LR scaled with it (linear rule) 0.1 -> 0.05"),
    Row("bs256", ["--batch-size", "256", "--lr", "0.2"],
        "batch 256 instead of 128, peak LR scaled with it (linear rule) 0.1 -> 0.2"),
    Row("ls0.05", ["--label-smoothing", "0.05"], "label smoothing 0.05 instead of 0.1"),
    Row("ls0.2", ["--label-smoothing", "0.2"], "label smoothing 0.2 instead of 0.1"),
    Row("ema0.999", ["--ema-decay", "0.999"],
        "EMA of the weights (timm's ModelEmaV2), decay 0.999, no warm-up (the default); the result is the EMA's"),
    Row("tta-flip-translate", ["--tta", "flip-translate"],
        "final evaluation with flip + 1-px shift TTA (6x its forward passes, inside the budget)"),
    Row("erasing0.1", ["--random-erasing", "0.1"], "random erasing at p = 0.1"),
    Row("erasing0.25", ["--random-erasing", "0.25"], "random erasing at p = 0.25"),
    Row("altflip", ["--alternate-flip"], "alternating flips (airbench) instead of random ones"),
    Row("pct0.15", ["--pct-start", "0.15"], "one-cycle rising over 15% of the steps instead of 25%"),
    Row("pct0.35", ["--pct-start", "0.35"], "one-cycle rising over 35% of the steps instead of 25%"),
    Row("lr0.05", ["--lr", "0.05"], "peak LR 0.05 instead of 0.1"),
    Row("lr0.2", ["--lr", "0.2"], "peak LR 0.2 instead of 0.1"),
    Row("mixup0.2", ["--mixup", "0.2"], "mixup, alpha 0.2 (timm's Mixup, per batch)"),
    Row("depth-1", ["--depth-delta=-1"],
        "residual CNN without its two residual blocks (4 convs fewer, ~45% of the FLOPs)"),
    Row("depth+1", ["--depth-delta", "1"], "residual CNN with a second residual block per stage (4 convs more)"),
    Row("lookahead", ["--lookahead-steps", "5", "--lookahead-alpha", "0.5"],
        "Lookahead (Zhang et al. 2019) over SGD: k = 5, alpha = 0.5 (timm's defaults are k = 6, alpha = 0.5)"),
    Row("resize16", ["--resize-min", "16", "--resize-start", "0", "--resize-end", "0.75"],
        "progressive resizing (FFCV): batches at 16 px growing to 28 px over the first 75% of the steps "
        "(~0.7x the step cost on average, so more steps fit)"),
    Row("resize20", ["--resize-min", "20", "--resize-start", "0.25", "--resize-end", "0.75"],
        "progressive resizing: 20 px for the first 25% of the steps, 28 px from 75%"),
    Row("bn-frozen", ["--bn-weight-frozen"], "BatchNorm weights fixed at 1, only their biases learned (airbench)"),
    Row("bn-momentum0.4", ["--bn-momentum", "0.4"],
        "BatchNorm running statistics with momentum 0.4 instead of 0.1 (airbench's 0.6 in its convention)"),
    Row("whiten", ["--whiten-stem"],
        "first conv fixed to the training patches' whitening filters (airbench): top 8 eigenvectors and negatives"),
    Row("whiten+resize16", ["--whiten-stem", "--resize-min", "16", "--resize-start", "0", "--resize-end", "0.75"],
        "the two candidates that led on the Xeon without AMX (seed 0), together"),
    Row("whiten+lr0.2", ["--whiten-stem", "--lr", "0.2"], "the whitened stem with peak LR 0.2 instead of 0.1"),
    Row("whiten+crop1", ["--whiten-stem", "--crop-pad", "1"],
        "the whitened stem with a 1-px padded crop instead of 2 (lighter augmentation for a short run)"),
    Row("whiten+crop0", ["--whiten-stem", "--crop-pad", "0"],
        "the whitened stem with no random crop (flips only)"),
    Row("whiten+crop0+ls0.05", SHORT_RUN_LEAD,
        "the whitened stem, no random crop and label smoothing 0.05: less regularisation for a short run"),
    Row("whiten+crop0+wd2e-4", ["--whiten-stem", "--crop-pad", "0", "--weight-decay", "2e-4"],
        "the whitened stem, no random crop and weight decay 2e-4 instead of 5e-4"),
    Row("whiten+crop0+ls0.05+poolbn", [*SHORT_RUN_LEAD, "--pool-before-bn"],
        "the leading combination with each stage max-pooled before its BN and ReLU (airbench's order): "
        "~13% faster steps"),
    Row("whiten+crop0+ls0", ["--whiten-stem", "--crop-pad", "0", "--label-smoothing", "0"],
        "the whitened stem, no random crop and no label smoothing"),
    Row("whiten+crop0+ls0.05+wd1e-3", [*SHORT_RUN_LEAD, "--weight-decay", "1e-3"],
        "the leading combination with weight decay 1e-3 instead of 5e-4"),
    Row("whiten+crop0+ls0.05+pct0.15", [*SHORT_RUN_LEAD, "--pct-start", "0.15"],
        "the leading combination with the one-cycle rising over 15% of the steps instead of 25%"),
    Row("whiten+crop0+ls0.05+noflip", [*SHORT_RUN_LEAD, "--no-flip", "--tta", "flip"],
        "the leading combination without random flips in training (the final evaluation still flip-TTA'd)"),
    Row("whiten+crop0+ls0.05+altflip", [*SHORT_RUN_LEAD, "--alternate-flip"],
        "the leading combination with alternating flips (airbench) instead of random ones"),
    Row("whiten+crop0+ls0.05+poolbn+bs256",
        [*SHORT_RUN_LEAD, "--pool-before-bn", "--batch-size", "256", "--lr", "0.2"],
        "the leading combination, pooled before BN, with batch 256 and peak LR 0.2"),
    Row("whiten+crop0+ls0.05+biaslr64", [*SHORT_RUN_LEAD, "--bn-bias-lr-scale", "64"],
        "the leading combination with the BatchNorm biases at 64x the learning rate (airbench's bias scaler)"),
    Row("whiten+crop0+ls0.05+bnfrozen+biaslr64",
        [*SHORT_RUN_LEAD, "--bn-weight-frozen", "--bn-bias-lr-scale", "64"],
        "the leading combination with airbench's BatchNorm: weights fixed at 1, biases at 64x the learning rate"),
    Row("whiten+crop0+ls0.05+dirac", [*SHORT_RUN_LEAD, "--dirac-init"],
        "the leading combination with every conv's first min(in, out) filters started as the identity (airbench)"),
    Row("whiten+crop0+ls0.05+altflip+biaslr64+dirac",
        [*SHORT_RUN_LEAD, "--alternate-flip", "--bn-bias-lr-scale", "64", "--dirac-init"],
        "the leading combination with airbench's alternating flips, bias scaler and identity initialisation"),
    Row("whiten+crop0+ls0.05+altflip+dirac", [*SHORT_RUN_LEAD, "--alternate-flip", "--dirac-init"],
        "the leading combination with alternating flips and the identity initialisation"),
    Row("whiten+crop0+ls0+altflip",
        ["--whiten-stem", "--crop-pad", "0", "--label-smoothing", "0", "--alternate-flip"],
        "the whitened stem, no random crop, alternating flips and no label smoothing"),
    Row("whiten+crop0+ls0.05+altflip+poolbn", [*SHORT_RUN_LEAD, "--alternate-flip", "--pool-before-bn"],
        "the leading combination with alternating flips and each stage pooled before its BN (~13% faster steps)"),
    Row("whiten+crop0+ls0.05+altflip+poolbn+dirac",
        [*SHORT_RUN_LEAD, "--alternate-flip", "--pool-before-bn", "--dirac-init"],
        "the leading combination with alternating flips, pooling before BN and the identity initialisation"),
    Row("whiten+crop0+ls0.05+altflip+linear",
        [*SHORT_RUN_LEAD, "--alternate-flip", "--schedule", "linear", "--warmup-epochs", "1.5"],
        "the leading combination with alternating flips, the LR rising linearly over 1.5 epochs and falling linearly "
        "to zero (airbench's triangle; Li et al. 2020's budget-aware linear schedule) instead of one-cycle's cosines"),
    Row("whiten+ls0.2", ["--whiten-stem", "--label-smoothing", "0.2"],
        "the whitened stem with label smoothing 0.2 (airbench's) instead of 0.1"),
    Row("whiten+width-8", ["--whiten-stem", "--width-delta=-8"],
        "the whitened stem on a net 8 channels narrower per stage (8/24/88): ~1.5x the steps fit"),
    Row("whiten+bs64", ["--whiten-stem", "--batch-size", "64", "--lr", "0.05"],
        "the whitened stem with batch 64 and peak LR 0.05: twice the updates per epoch"),
]

ALL_ROWS: List[Row] = ROWS + CANDIDATES

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


def machine() -> str:
    """This machine in words: the CPU's model name, the cores this process may use, whether bf16 is native."""
    try:
        found = re.search(r"^model name\s*:\s*(.+)$", pathlib.Path("/proc/cpuinfo").read_text(), re.M)
    except OSError:
        found = None
    name = found.group(1).strip() if found else "unknown CPU"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{name}, {cores} cores, bf16 {'native' if native_bf16() else 'not native'}"


def commit() -> str:
    """The checkout's short commit (the tool's own repository), or "unknown" outside a git clone."""
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def default_rows() -> List[str]:
    """The ingredient-off rows; the fp32 row only where the recipe trains in bf16 (elsewhere the recipe is
    that row)."""
    return [r.name for r in ROWS if r.name != "fp32" or native_bf16()]


def rows_select(text: str) -> List[str]:
    """Row names from --rows: names, or the groups `off` (the default rows), `candidates` (recipe and every
    candidate) and `all`; in the table's order, each once. Exits listing the rows on an unknown name."""
    groups = {"off": default_rows(), "candidates": ["recipe"] + [r.name for r in CANDIDATES],
              "all": default_rows() + [r.name for r in CANDIDATES]}
    known = [r.name for r in ALL_ROWS]
    names: List[str] = []
    for name in (n.strip() for n in text.split(",") if n.strip()):
        names += groups.get(name, [name])
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        sys.exit(f"recipe_ablation: unknown rows {unknown}; rows are {known} (groups: {list(groups)}; --list)")
    return sorted(set(names), key=known.index)


def run_logged(command: List[str], log: pathlib.Path, pattern: "re.Pattern[str]") -> "re.Match[str]":
    """Runs a command to its end, its output into `log`; exits naming the log when it fails."""
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    log.write_text(done.stdout + done.stderr)
    found = pattern.search(done.stdout)
    if done.returncode != 0 or found is None:
        sys.exit(f"recipe_ablation: {' '.join(map(str, command))} failed (exit {done.returncode}); see {log}")
    return found


def run_row(cli: pathlib.Path, row: Row, seed: int, out: pathlib.Path) -> Dict[str, object]:
    """Runs one row's `fastloop train --seed SEED` to the end and returns its summary line's numbers; the
    recipe's checkpoint is also evaluated with each --tta mode."""
    stem = f"{row.name}_seed{seed}"
    metrics = out / f"{stem}.jsonl"
    metrics.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="fastloop_ablation_") as checkpoints:
        found = run_logged([cli, "train", *row.flags, "--seed", seed, "--metrics", metrics,
                            "--checkpoint-dir", checkpoints], out / f"{stem}.log", _SUMMARY)
        accuracy, steps, train_s, img_per_s, elapsed = found.groups()
        result = {"row": row.name, "seed": seed, "flags": " ".join(row.flags), "what": row.what,
                  "accuracy": float(accuracy), "steps": int(steps), "train_seconds": float(train_s),
                  "img_per_s": float(img_per_s), "elapsed_seconds": float(elapsed), "machine": machine(),
                  "commit": commit()}
        if row.name == "recipe":
            result["eval"] = {}
            for mode in TTA_MODES:
                found = run_logged([cli, "eval", "--checkpoint", f"{checkpoints}/last.ckpt", "--tta", mode],
                                   out / f"{stem}_eval_tta_{mode}.log", _EVAL)
                result["eval"][mode] = {"accuracy": float(found.group(1)), "seconds": float(found.group(2))}
    return result


def mean_spread(values: List[float]) -> Tuple[float, float]:
    """The mean and half the range (max - min) / 2 of some runs' numbers (0 for one run)."""
    return statistics.fmean(values), (max(values) - min(values)) / 2


def run_key(result: Dict[str, object]) -> Tuple[str, int]:
    """A run's identity: its row and seed (results written before seeds existed ran with seed 0)."""
    return str(result["row"]), int(result.get("seed", 0))


def markdown(results: List[Dict[str, object]]) -> str:
    """The tables: each row's mean accuracy ± half the range over its seeds, its difference from the
    recipe's mean, its mean time and throughput; then the recipe's checkpoints under each eval --tta."""
    known = [r.name for r in ALL_ROWS]
    by_row: Dict[str, List[Dict[str, object]]] = {}
    for r in sorted(results, key=lambda r: (known.index(r["row"]) if r["row"] in known else len(known),
                                            run_key(r))):
        by_row.setdefault(str(r["row"]), []).append(r)
    base: Optional[float] = None
    if "recipe" in by_row:
        base = mean_spread([r["accuracy"] for r in by_row["recipe"]])[0]
    machines = sorted({str(r.get("machine", "not recorded")) for r in results})
    commits = sorted({str(r.get("commit", "not recorded")) for r in results})
    lines = [f"Machine: {'; '.join(machines)}. Commit: {', '.join(commits)}. Test accuracy: the mean over the "
             "row's seeds ± half their range ((max - min) / 2); n: the runs (seeds); Δ: the row's mean minus "
             "the recipe's; time and img/s: means.", "",
             "| row | flags | test accuracy | n | Δ vs recipe | start to final evaluation | img/s |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name, runs in by_row.items():
        accuracy, spread = mean_spread([r["accuracy"] for r in runs])
        shown = f"{accuracy:.2f} ± {spread:.2f}%" if len(runs) > 1 else f"{accuracy:.2f}%"
        delta = f"{accuracy - base:+.2f}" if base is not None and name != "recipe" else ""
        flags = f"`{runs[0]['flags']}`" if runs[0]["flags"] else "(none)"
        elapsed = statistics.fmean(r["elapsed_seconds"] for r in runs)
        img_per_s = statistics.fmean(r["img_per_s"] for r in runs)
        lines.append(f"| {name}: {runs[0]['what']} | {flags} | {shown} | {len(runs)} | {delta} | "
                     f"{elapsed:.0f} s | {img_per_s:.0f} |")
    evals = [r["eval"] for r in by_row.get("recipe", []) if "eval" in r]
    if evals:
        lines += ["", f"The recipe's checkpoint under `fastloop eval --tta MODE` (float32; mean over {len(evals)} "
                  f"seed{'s' if len(evals) > 1 else ''} ± half the range):", "",
                  "| --tta | test accuracy | Δ vs off | evaluation time |", "|---|---:|---:|---:|"]
        off = statistics.fmean(e["off"]["accuracy"] for e in evals)
        for mode in TTA_MODES:
            accuracy, spread = mean_spread([e[mode]["accuracy"] for e in evals])
            seconds = statistics.fmean(e[mode]["seconds"] for e in evals)
            lines.append(f"| {mode} | {accuracy:.2f} ± {spread:.2f}% | {accuracy - off:+.2f} | {seconds:.1f} s |")
    return "\n".join(lines) + "\n"


def results_save(results: List[Dict[str, object]], out: pathlib.Path) -> None:
    """Writes OUT/ablation.json (through a temporary file: a crash never leaves half of it) and ablation.md."""
    path = out / "ablation.json"
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(results, indent=1) + "\n")
    partial.replace(path)
    (out / "ablation.md").write_text(markdown(results))


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", type=pathlib.Path, default=pathlib.Path("build/fastloop"))
    parser.add_argument("--rows", default="off",
                        help="comma-separated row names or groups: off (the default: recipe and each ingredient "
                             "off), candidates (recipe and each candidate change), all")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds; every row runs once per seed")
    parser.add_argument("--force", action="store_true", help="rerun the (row, seed) runs already in OUT")
    parser.add_argument("--list", action="store_true", help="print every row's name, flags and what, and exit")
    parser.add_argument("--out", type=pathlib.Path, help="folder for the logs, metrics and tables")
    args = parser.parse_args(argv)
    if args.list:
        for r in ALL_ROWS:
            print(f"{r.name:20} {' '.join(r.flags) or '(none)':32} {r.what}")
        return
    if args.out is None:
        parser.error("--out is required (or --list)")
    names = rows_select(args.rows)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--seeds {args.seeds!r}: give comma-separated integers, e.g. 0,1")
    if not seeds:
        parser.error("--seeds is empty: give comma-separated integers, e.g. 0,1")
    by_name = {r.name: r for r in ALL_ROWS}
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "ablation.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else []
    done = {run_key(r) for r in results}
    pending = [(name, seed) for name in names for seed in seeds if args.force or (name, seed) not in done]
    skipped = len(names) * len(seeds) - len(pending)
    print(f"recipe_ablation: {len(pending)} runs to do ({skipped} already in {results_path})", flush=True)
    try:
        for name, seed in pending:
            result = run_row(args.cli, by_name[name], seed, args.out)
            results = [r for r in results if run_key(r) != (name, seed)] + [result]
            results_save(results, args.out)
            print(f"{name} seed {seed}: {result['accuracy']:.2f}% in {result['elapsed_seconds']:.0f} s", flush=True)
    except KeyboardInterrupt:
        sys.exit(f"recipe_ablation: stopped; the {len(results)} finished runs are in {results_path} "
                 "(rerun the same command to continue)")


if __name__ == "__main__":
    main()
