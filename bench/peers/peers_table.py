#!/usr/bin/env python3
"""The loader against its peers, interleaved (bench/peers/run.sh makes the peers' environments and runs this):
on the same photos and the same work (RandomResizedCrop 224 + random flip + ImageNet normalisation into a float32
batch of 128), at each worker count, in --rounds rounds, each round running every loader once in a rotated order:

  fastloop   `build/fastloop bench loader --augment on --decode exact --decode-limit` (its loader, and the decode
             limit: libjpeg-turbo alone on the same JPEGs, regions and DCT scale, one thread per worker)
  dali       bench/peers/dali_loader.py (NVIDIA DALI's CPU pipeline; threads = workers)
  ffcv       bench/peers/ffcv_loader.py (FFCV's Loader on a .beton written once; workers = workers)
  spdl       bench/peers/spdl_loader.py (SPDL's pipeline, FFmpeg decode + crop/scale/flip filter; threads = workers)

A peer whose environment could not be made is passed as NAME=!REASON and shown as "not run: REASON". Prints a
markdown table (median img/s over rounds, each round's value, fastloop's ratio to each peer per round and its
share of the decode limit) and writes PREFIX.json / PREFIX.md with --out. The load average is recorded before each
run: other work on the machine slows every loader alike only when it is interleaved, so read the ratios.

    .venv/bin/python bench/peers/peers_table.py --data /tmp/photos --peer dali=PY --peer ffcv=PY --peer spdl=PY
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = ("dali", "ffcv", "spdl")
LABELS = {"fastloop": "fastloop (exact decode)", "decode": "decode limit (libjpeg-turbo alone)",
          "dali": "NVIDIA DALI, CPU", "ffcv": "FFCV", "spdl": "SPDL"}


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def run_json(command):
    """stdout's last JSON object of `command`; raises with its stderr's tail when it fails."""
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(lines[-1])


def run_fastloop(a):
    out = os.path.join(a.work, "fastloop_round")
    subprocess.run([a.fastloop, "bench", "loader", "--data", f"imagefolder:{a.data}", "--workers", a.workers,
                    "--batch-size", str(a.batch_size), "--augment", "on", "--decode", "exact", "--step-model", "",
                    "--decode-limit", "--batches", str(a.fastloop_batches), "--out", out],
                   cwd=ROOT, check=True, capture_output=True)
    with open(out + ".json") as f:
        result = json.load(f)
    return {"fastloop": {r["workers"]: r["img_per_s"] for r in result["rows"]},
            "decode": {r["workers"]: r["decode_limit_img_per_s"] for r in result["rows"]},
            "versions": {"fastloop": "LibTorch " + result["libtorch"]}}


def run_peer(a, name, python):
    script = os.path.join(HERE, f"{name}_loader.py")
    command = [python, script, "--imagefolder", a.data, "--workers", a.workers, "--batch-size", str(a.batch_size),
               "--batches", str(a.peer_batches[name])]
    if name == "ffcv":
        command += ["--work", os.path.join(a.work, "ffcv")]
    result = run_json(command)
    return {name: {r["workers"]: r["img_per_s"] for r in result["rows"]}, "versions": {name: result[name]}}


def fmt(x):
    return f"{x:,.0f}"


def table(results, workers, peers, failed):
    """The markdown table: one row per loader and worker count."""
    lines = ["| loader | workers | img/s (median) | img/s per round | fastloop ÷ it per round |",
             "|---|---:|---:|---:|---:|"]
    for name in ["fastloop", "decode", *peers, *failed]:
        for w in workers:
            if name in failed:
                lines.append(f"| {LABELS[name]} | {w} | not run: {failed[name]} | | |")
                continue
            rounds = [r[name][w] for r in results if name in r and w in r[name]]
            if not rounds:
                continue
            mine = [r["fastloop"][w] for r in results if name in r and w in r[name]]
            if name == "fastloop":
                ratio = "–"
            elif name == "decode":
                ratio = " / ".join(f"{100 * m / x:.0f}% of it" for m, x in zip(mine, rounds))
            else:
                ratio = " / ".join(f"{m / x:.2f}×" for m, x in zip(mine, rounds))
            lines.append(f"| {LABELS[name]} | {w} | {fmt(statistics.median(rounds))} | "
                         f"{' / '.join(fmt(x) for x in rounds)} | {ratio} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="the photo folder (DIR/train/CLASS/*.jpg)")
    p.add_argument("--peer", action="append", default=[], help="NAME=PYTHON (or NAME=!REASON when not made)")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--fastloop", default=os.path.join(ROOT, "build", "fastloop"))
    p.add_argument("--fastloop-batches", type=int, default=20, help="timed batches per repetition (3 repetitions)")
    p.add_argument("--peer-batches", default="dali=10,ffcv=10,spdl=4", help="timed batches per repetition")
    p.add_argument("--work", default="/tmp/fastloop-peers", help="the FFCV .beton and scratch files")
    p.add_argument("--out", default="", help="write PREFIX.json and PREFIX.md")
    a = p.parse_args()
    a.peer_batches = {k: int(v) for k, v in (kv.split("=") for kv in a.peer_batches.split(","))}
    os.makedirs(a.work, exist_ok=True)
    pythons, failed = {}, {}
    for spec in a.peer:
        name, _, python = spec.partition("=")
        (failed if python.startswith("!") else pythons)[name] = python.lstrip("!")
    peers = [n for n in PEERS if n in pythons]
    if "ffcv" in pythons:  # the .beton, written once, untimed
        subprocess.run([pythons["ffcv"], os.path.join(HERE, "ffcv_loader.py"), "--imagefolder", a.data, "--work",
                        os.path.join(a.work, "ffcv"), "--write-only"], cwd=ROOT, check=True, capture_output=True)
    workers = [int(w) for w in a.workers.split(",")]
    order = ["fastloop", *peers]
    results, versions, loads = [], {}, []
    for r in range(a.rounds):
        this_round = {}
        for name in order[r % len(order):] + order[:r % len(order)]:  # rotated: no loader always first
            loads.append({"round": r + 1, "loader": name, "load": os.getloadavg()[0]})
            print(f"round {r + 1}: {name} (load {loads[-1]['load']:.1f})", file=sys.stderr, flush=True)
            try:
                got = run_fastloop(a) if name == "fastloop" else run_peer(a, name, pythons[name])
            except (RuntimeError, subprocess.CalledProcessError) as e:
                failed[name] = str(e).splitlines()[-1][:200] if str(e) else "failed"
                print(f"  {name} failed: {e}", file=sys.stderr)
                order.remove(name)
                peers = [n for n in peers if n != name]
                continue
            versions.update(got.pop("versions"))
            this_round.update(got)
        results.append(this_round)
    md = (f"Loader peers on {a.data} ({cpu_model()}, {os.cpu_count()} CPUs; load average "
          f"{min(x['load'] for x in loads):.1f}-{max(x['load'] for x in loads):.1f} at the runs' starts), "
          f"RandomResizedCrop 224 + flip + normalise, batch {a.batch_size}, {a.rounds} interleaved rounds; "
          f"versions: {', '.join(f'{k} {v}' for k, v in versions.items())}.\n\n"
          + table(results, workers, peers, failed))
    print(md)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out + ".json", "w") as f:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                    text=True).stdout.strip()
            json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit,
                       "data": a.data, "machine": cpu_model(), "cpus": os.cpu_count(), "workers": workers,
                       "batch_size": a.batch_size, "versions": versions, "failed": failed, "loads": loads,
                       "rounds": [{k: {str(w): v for w, v in x.items()} for k, x in r.items()} for r in results]},
                      f, indent=1)
        with open(a.out + ".md", "w") as f:
            f.write("# fastloop's loader against DALI, FFCV and SPDL\n\n" + md)
        print(f"wrote {a.out}.json and {a.out}.md", file=sys.stderr)


if __name__ == "__main__":
    main()
