"""Batch-1 latency, p50/p99, of one trained model five ways on the same threads: (a) fastloop's predict path
(`fastloop bench latency`: the checkpoint loaded, BatchNorm folded and the model run as its optimized inference
graph as `predict` does, then forward, softmax, top-5 in C++), (a') the same with --no-graph (eager C++), (b) its TorchScript export under torch.jit.load, (c) its ONNX export under ONNX Runtime, (d) PyTorch
eager: tests/tools/reference_models.py's same architecture with the exported safetensors weights. Each is timed on
one input image already in memory (decoding is not in it); rounds are interleaved (a a' b c d, a' b c d a, ...) so a
neighbour's build slows every variant alike, and the load average is recorded before and after.

Usage (from the repository root, after scripts/setup.sh):
  .venv/bin/python bench/predict_latency.py --models resnet18,mobilenet_v2 --out bench/results/cpu-2core/predict_latency
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from safetensors.torch import load_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
import reference_models  # noqa: E402

VARIANTS = ["fastloop", "fastloop_eager", "torchscript", "onnxruntime", "eager"]
LABELS = {"fastloop": "fastloop predict path (C++, BN folded, inference graph)",
          "fastloop_eager": "fastloop predict --no-graph (C++, BN folded, eager)", "torchscript": "TorchScript export (BN folded), torch.jit.load",
          "onnxruntime": "ONNX export (BN folded), ONNX Runtime", "eager": "PyTorch eager (reference model)"}


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"predict_latency: {' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def load_average():
    return os.getloadavg()


def prepare(a, model, work):
    """Trains a few steps (BatchNorm statistics that are not the initial ones), then the three exports."""
    d = os.path.join(work, model)
    data = f"synthetic:3x{a.image_size}x{a.image_size}:32"
    run([a.fastloop, "train", "--model", model, "--stem", a.stem, "--data", data, "--batch-size", "16",
         "--epochs", "1", "--threads", str(a.threads), "--device", "cpu", "--checkpoint-dir", d])
    ckpt = os.path.join(d, "last.ckpt")
    # What a deployment ships: BatchNorm folded, as fastloop's predict path runs (ONNX's exporter folds it too);
    # eager gets the plain weights, as a PyTorch user's model.eval() has them.
    for out, flags in (("model.pt", ["--fold-bn"]), ("model.onnx", ["--fold-bn"]), ("model.safetensors", [])):
        run([a.fastloop, "export", "--checkpoint", ckpt, "--out", os.path.join(d, out)] + flags)
    return d, ckpt


def timed(fn, x, warmup, iterations):
    for _ in range(warmup):
        fn(x)
    out = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn(x)
        out.append(time.perf_counter() - start)
    return out


def python_variants(a, d, classes):
    import onnxruntime as ort
    torch.set_num_threads(a.threads)
    script = torch.jit.load(os.path.join(d, "model.pt"), map_location="cpu").eval()
    eager = reference_models.make_model(a.model, a.stem, 3, classes).eval()
    eager.load_state_dict(load_file(os.path.join(d, "model.safetensors")), strict=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = a.threads, 1
    session = ort.InferenceSession(os.path.join(d, "model.onnx"), options, providers=["CPUExecutionProvider"])
    k = min(5, classes)

    def torch_fn(m):
        def call(x):
            with torch.inference_mode():
                torch.softmax(m(x), 1).topk(k, 1)
        return call

    def ort_fn(x):
        logits = session.run(["logits"], {"input": x.numpy()})[0]
        e = np.exp(logits - logits.max(1, keepdims=True))
        np.argsort(-(e / e.sum(1, keepdims=True)), 1)[:, :k]

    x = torch.randn(1, 3, a.image_size, a.image_size)
    with torch.inference_mode():
        ref = eager(x)
        agree = {"torchscript": float((script(x) - ref).abs().max()),
                 "onnxruntime": float(np.abs(session.run(["logits"], {"input": x.numpy()})[0] - ref.numpy()).max())}
    return {"torchscript": torch_fn(script), "onnxruntime": ort_fn, "eager": torch_fn(eager)}, x, agree


def percentile(values, q):
    return float(np.percentile(np.asarray(values) * 1e3, q))  # ms


def measure(a, model, work):
    a.model = model
    d, ckpt = prepare(a, model, work)
    extra = {"fastloop/model_info.json": ""}
    torch.jit.load(os.path.join(d, "model.pt"), _extra_files=extra)
    classes = len(json.loads(extra["fastloop/model_info.json"])["classes"])
    fns, x, agree = python_variants(a, d, classes)
    times = {v: [] for v in VARIANTS}
    for r in range(a.rounds):
        order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
        for v in order:
            if v.startswith("fastloop"):
                out = run([a.fastloop, "bench", "latency", "--checkpoint", ckpt, "--threads", str(a.threads),
                           "--warmup", str(a.warmup), "--iterations", str(a.iterations)] +
                          (["--no-graph"] if v == "fastloop_eager" else []))
                times[v] += json.loads(out.strip().splitlines()[-1])["seconds"]
            else:
                times[v] += timed(fns[v], x, a.warmup, a.iterations)
    rows = {v: {"p50_ms": percentile(t, 50), "p99_ms": percentile(t, 99), "mean_ms": float(np.mean(t) * 1e3),
                "samples": len(t)} for v, t in times.items()}
    for v in VARIANTS:
        rows[v]["p50_vs_eager"] = rows[v]["p50_ms"] / rows["eager"]["p50_ms"]
    return {"model": model, "stem": a.stem, "image_size": a.image_size, "rows": rows,
            "max_abs_logit_diff_vs_eager": agree, "per_round_ms": {v: [percentile(times[v][i:i + a.iterations], 50)
            for i in range(0, len(times[v]), a.iterations)] for v in VARIANTS}}


def markdown(result):
    h = result["header"]
    lines = [f"# Batch-1 predict latency ({h['cpu']}, {h['threads']} thread(s))", "",
             f"`{h['command']}` — torch {h['torch']}, onnxruntime {h['onnxruntime']}, commit {h['commit']}. "
             f"{h['rounds']} interleaved rounds × {h['iterations']} timed iterations (after {h['warmup']} untimed) per "
             f"variant; one image already in memory, forward + softmax + top-5. Load average (1/5/15 min) "
             f"before {h['load_before']}, after {h['load_after']} on {h['cores']} cores: a shared machine.", "",
             "| model | input | variant | p50 ms | p99 ms | mean ms | p50 ÷ eager |", "|---|---|---|---:|---:|---:|---:|"]
    for m in result["models"]:
        for v in VARIANTS:
            r = m["rows"][v]
            lines.append(f"| {m['model']} | {m['image_size']}² ({m['stem']}) | {LABELS[v]} | {r['p50_ms']:.2f} | "
                         f"{r['p99_ms']:.2f} | {r['mean_ms']:.2f} | {r['p50_vs_eager']:.2f} |")
    lines += ["", "Per-round p50 (ms), in run order — the spread the load put on each:", ""]
    for m in result["models"]:
        for v in VARIANTS:
            lines.append(f"- {m['model']} {v}: " + ", ".join(f"{x:.2f}" for x in m["per_round_ms"][v]))
    lines += ["", "Largest |logit| difference against eager on the timed input: " + "; ".join(
        f"{m['model']} " + ", ".join(f"{k} {v:.1e}" for k, v in m["max_abs_logit_diff_vs_eager"].items())
        for m in result["models"]), ""]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet18,mobilenet_v2")
    p.add_argument("--stem", default="imagenet")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--fastloop", default="build/fastloop")
    p.add_argument("--out", help="write OUT.md and OUT.json")
    a = p.parse_args()
    import onnxruntime
    before = load_average()
    with tempfile.TemporaryDirectory(prefix="predict_latency_") as work:
        models = [measure(a, m, work) for m in a.models.split(",")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    header = {"command": " ".join(["bench/predict_latency.py"] + sys.argv[1:]), "torch": torch.__version__,
              "onnxruntime": onnxruntime.__version__, "commit": commit, "threads": a.threads, "rounds": a.rounds,
              "iterations": a.iterations, "warmup": a.warmup, "cores": os.cpu_count(),
              "cpu": platform.processor() or platform.machine(),
              "load_before": "/".join(f"{x:.2f}" for x in before),
              "load_after": "/".join(f"{x:.2f}" for x in load_average())}
    try:
        header["cpu"] = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    result = {"header": header, "models": models}
    md = markdown(result)
    print(md)
    if a.out:
        with open(a.out + ".md", "w") as f:
            f.write(md)
        with open(a.out + ".json", "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
