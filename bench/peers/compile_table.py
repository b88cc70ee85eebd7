#!/usr/bin/env python3
"""fastloop's training step against eager PyTorch and against torch.compile, on the seed grid's models, through
`fastloop bench` itself: for each model, `fastloop bench --models M --rows baseline --compare-python` twice, its
PyTorch peer (bench/peers/bench_peer.py, interleaved with fastloop's repetitions in one run) once eager and once
with FASTLOOP_PEER_COMPILE=1 (torch.compile, Inductor's default mode, a fresh TORCHINDUCTOR_CACHE_DIR so that every
compile is cold). The compile happens in the peer's warm-up step; its seconds are reported apart (the warm-up
step's time less one steady-state step), and the img/s are the steady state. Ratios are within one run:
fastloop ÷ eager from the eager run, fastloop ÷ compiled from the compiled run.

    .venv/bin/python bench/peers/compile_table.py --models resnet18,mobilenet_v2 --out bench/results/cpu-2core/peers/compile
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_bench(a, model, compiled):
    """(fastloop train img/s, peer train img/s, its eval img/s, {phase: warm-up seconds}) of one run."""
    env = dict(os.environ, FASTLOOP_PEER_COMPILE="1" if compiled else "0")
    with tempfile.TemporaryDirectory(prefix="fastloop-inductor-") as cache:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache
        out = os.path.join(a.work, f"{model}_{'compiled' if compiled else 'eager'}")
        command = [a.fastloop, "bench", "--models", model, "--rows", "baseline", "--compare-python",
                   "--batch-size", str(a.batch_size), "--steps", str(a.steps), "--eval-steps", str(a.eval_steps),
                   "--warmup", "1", "--repeat", str(a.repeat), "--out", out]
        print(("FASTLOOP_PEER_COMPILE=1 " if compiled else "") + " ".join(command), file=sys.stderr, flush=True)
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    warmups = {}
    for line in done.stderr.splitlines():
        if line.startswith("bench_peer compile: "):
            e = json.loads(line.split(": ", 1)[1])
            warmups[e["phase"]] = e["warmup_s"]
    with open(out + ".json") as f:
        result = json.load(f)
    cell = result["cells"][0]
    return {"fastloop": cell["train_img_per_s"], "pytorch": cell["python_train_img_per_s"],
            "ratio": cell["train_vs_python"], "ratio_min": cell["train_vs_python_min"],
            "ratio_max": cell["train_vs_python_max"],
            "pytorch_eval": cell["python_eval_img_per_s"], "fastloop_eval": cell["eval_img_per_s"],
            "warmup_s": warmups, "load": result["environment"].get("load_average", ""),
            "torch": result["environment"].get("pytorch_version", "")}


def ratio(run):
    """fastloop ÷ the peer over the run's interleaved pairs: median (min–max)."""
    if "ratio" not in run:
        return f"{run['fastloop'] / run['pytorch']:.2f}×"
    return f"{run['ratio']:.2f}× ({run['ratio_min']:.2f}–{run['ratio_max']:.2f})"


def table(rows, batch_size, steps, repeat, cpu):
    lines = [f"Training step (fastloop's `train_step` and PyTorch's, SGD), CIFAR-shaped synthetic data, batch {batch_size}, "
             f"{steps} steps x {repeat} repetitions after 1 warm-up step, {cpu}, {os.cpu_count()} CPUs; torch "
             f"{rows[0]['eager']['torch'] if rows else '?'}. Each ratio is fastloop's over the peer's, median "
             f"(min–max) over the interleaved pairs of one `fastloop bench` run; compile seconds are the peer's "
             f"warm-up step less one steady step, from a cold Inductor cache.", "",
             "| model | fastloop img/s | eager PyTorch img/s | fastloop ÷ eager | fastloop img/s (2nd run) | "
             "torch.compile img/s | fastloop ÷ compiled | compile s (train / eval) | load (eager run; compiled run) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        e, c = r["eager"], r["compiled"]
        lines.append(f"| {r['model']} | {e['fastloop']:.1f} | {e['pytorch']:.1f} | {ratio(e)} | "
                     f"{c['fastloop']:.1f} | {c['pytorch']:.1f} | {ratio(c)} | "
                     f"{r['compile_s']:.0f} / {r['eval_compile_s']:.0f} | {e['load']}; {c['load']} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet18,resnet50,resnet101,mobilenet_v2")
    p.add_argument("--batch-size", type=int, default=16, help="fastloop bench's CPU default")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--eval-steps", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--fastloop", default=os.path.join(ROOT, "build", "fastloop"))
    p.add_argument("--work", default="/tmp/fastloop-compile")
    p.add_argument("--out", default="")
    p.add_argument("--render", default="", help="only print the table of an earlier --out's JSON")
    a = p.parse_args()
    if a.render:
        with open(a.render) as f:
            saved = json.load(f)
        print(table(saved["rows"], saved["batch_size"], saved["steps"], saved["repeat"], saved["machine"]))
        return
    os.makedirs(a.work, exist_ok=True)
    rows = []
    for model in a.models.split(","):
        eager, compiled = run_bench(a, model, False), run_bench(a, model, True)
        step_s = a.batch_size / compiled["pytorch"]  # one steady-state training step of the compiled model
        rows.append({"model": model, "eager": eager, "compiled": compiled,
                     "compile_s": compiled["warmup_s"].get("train", 0.0) - step_s,
                     "eval_compile_s": compiled["warmup_s"].get("eval", 0.0) - a.batch_size / compiled["pytorch_eval"]})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), platform.processor())
    md = table(rows, a.batch_size, a.steps, a.repeat, cpu)
    print(md)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out + ".json", "w") as f:
            json.dump({"machine": cpu, "batch_size": a.batch_size, "steps": a.steps, "repeat": a.repeat, "rows": rows},
                      f, indent=1)
        with open(a.out + ".md", "w") as f:
            f.write("# fastloop against eager PyTorch and torch.compile\n\n" + md)


if __name__ == "__main__":
    main()
