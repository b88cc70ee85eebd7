#!/usr/bin/env python3
"""Remote tar shards through fastloop.Loader: the photo set (scripts/make_photo_set.sh) packed with `fastloop pack`
and read (a) from local disk, (b) from a SeaweedFS S3 gateway on loopback (signed requests), (c) from the same
gateway through a loopback proxy adding --latency-ms per request and capping bandwidth at --rate-mbps; beside
WebDataset's own loader over the same shards and URLs (DataLoader workers, `pipe:curl` with curl's SigV4,
the same torchvision training transform: RandomResizedCrop(224) + flip + Normalize), at equal workers.

One round runs every side for --epochs whole epochs from a fresh loader (its first epoch starts with no
shard fetched, so that wait is counted); the sides alternate in order over --rounds rounds so that all see
the machine alike. img/s is the median over the rounds; beside it the median time from the loader's creation
to its first batch, and the share of the machine's CPU time the S3 server took during the side's run (it
shares this machine's cores with the loader it serves, as a remote store would not). Writes OUT.json and OUT.md.

    scripts/make_photo_set.sh /tmp/photos6k 500 10     # 6,000 training photos, 160 MB
    .venv/bin/python bench/remote_shards.py --photos /tmp/photos6k --out bench/results/cpu-2core/remote_shards
"""
import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Tuple

import torch
from torch.utils.data import DataLoader

import fastloop

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "peers"))
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import remote_store  # noqa: E402
from loader_peer import imagenet_transform  # noqa: E402


def fastloop_epochs(source: str, args) -> Tuple[float, float]:
    """img/s of fastloop.Loader over --epochs epochs of `source` (training transform, 224 px), and the seconds
    from its creation to its first batch."""
    start = time.perf_counter()
    loader = fastloop.Loader(source, batch_size=args.batch_size, workers=args.workers, image_size=224, drop_last=False,
                             shuffle_buffer=args.shuffle_buffer)
    seen, first = 0, None
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        for images, _ in loader:
            first = first if first is not None else time.perf_counter() - start
            seen += images.shape[0]
    seconds = time.perf_counter() - start
    loader.close()
    return seen / seconds, first


def webdataset_epochs(urls, args) -> Tuple[float, float]:
    """img/s of webdataset.WebDataset + DataLoader over --epochs epochs of `urls` (pipe:... or paths)."""
    import webdataset as wds

    transform = imagenet_transform(True, 224)
    dataset = (wds.WebDataset(urls, shardshuffle=100, nodesplitter=None, empty_check=False)
               .shuffle(args.shuffle_buffer).decode("pil").to_tuple("jpg;png", "cls")
               .map_tuple(transform, int).batched(args.batch_size, partial=True))
    start = time.perf_counter()
    loader = DataLoader(dataset, batch_size=None, num_workers=args.workers)
    seen, first = 0, None
    for _ in range(args.epochs):
        for images, _ in loader:
            first = first if first is not None else time.perf_counter() - start
            seen += images.shape[0]
    return seen / (time.perf_counter() - start), first


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_model() -> str:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def curl_urls(endpoint: str, names) -> list:
    sign = f"--aws-sigv4 aws:amz:{remote_store.REGION}:s3 --user {remote_store.ACCESS_KEY}:{remote_store.SECRET_KEY}"
    return [f"pipe:curl -s -f {sign} {endpoint}/{remote_store.BUCKET}/photos/{n}" for n in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photos", required=True, help="an image folder (scripts/make_photo_set.sh DIR)")
    parser.add_argument("--out", required=True, help="OUT.json and OUT.md")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2, help="epochs per side and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shard-mb", type=int, default=8, help="MiB per shard (fastloop pack --shard-mb)")
    parser.add_argument("--shuffle-buffer", type=int, default=256,
                        help="samples, both loaders; ~one shard's, so that shards stream as in a large set")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="(c): added before each request")
    parser.add_argument("--rate-mbps", type=float, default=400.0, help="(c): bandwidth cap, Mbit/s per connection")
    parser.add_argument("--no-webdataset", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()  # other work on the machine: reported beside the numbers
    cli = ROOT / "build" / "fastloop"
    with tempfile.TemporaryDirectory(prefix="remote_shards_bench-") as work:
        work = pathlib.Path(work)
        shards = work / "shards"
        subprocess.run([str(cli), "pack", args.photos, str(shards), "--shard-mb", str(args.shard_mb)], check=True,
                       stdout=subprocess.DEVNULL)
        names = sorted(p.name for p in shards.glob("train-*.tar"))
        s3 = remote_store.SeaweedS3(remote_store.weed_program(), work / "weed")
        try:
            s3.upload(shards, "photos")
            proxy = remote_store.FaultProxy(s3.port)
            proxy.mode(f"latency:{args.latency_ms}")
            proxy.mode(f"rate:{args.rate_mbps * 1e6 / 8}")
            os.environ.update(AWS_ACCESS_KEY_ID=remote_store.ACCESS_KEY, AWS_SECRET_ACCESS_KEY=remote_store.SECRET_KEY,
                              AWS_REGION=remote_store.REGION)
            train = f"{{{names[0][6:12]}..{names[-1][6:12]}}}"
            sides = {
                "a_local": lambda: fastloop_epochs(f"shards:{shards}/train-{train}.tar", args),
                "b_s3": lambda: (os.environ.update(AWS_ENDPOINT_URL=s3.endpoint),
                                 fastloop_epochs("shards:s3://shards/photos", args))[1],
                "c_proxy": lambda: (os.environ.update(AWS_ENDPOINT_URL=proxy.url),
                                    fastloop_epochs("shards:s3://shards/photos", args))[1],
            }
            if not args.no_webdataset:
                sides["wds_local"] = lambda: webdataset_epochs([str(shards / n) for n in names], args)
                sides["wds_s3"] = lambda: webdataset_epochs(curl_urls(s3.endpoint, names), args)
                sides["wds_proxy"] = lambda: webdataset_epochs(curl_urls(proxy.url, names), args)
            rates, firsts, store_cpu = ({k: [] for k in sides} for _ in range(3))
            for r in range(args.rounds):
                for key in (list(sides) if r % 2 == 0 else list(reversed(sides))):
                    weed_before, wall_before = cpu_seconds(s3.process.pid), time.perf_counter()
                    rate, first = sides[key]()
                    wall = time.perf_counter() - wall_before
                    rates[key].append(rate)
                    firsts[key].append(first)
                    store_cpu[key].append((cpu_seconds(s3.process.pid) - weed_before) / (wall * os.cpu_count()))
                    print(f"round {r} {key}: {rate:.0f} img/s, first batch after {first:.2f} s, "
                          f"store {100 * store_cpu[key][-1]:.1f}% of the CPU", flush=True)
            proxy.close()
        finally:
            s3.close()
    median = {k: statistics.median(v) for k, v in rates.items()}
    median_first = {k: statistics.median(v) for k, v in firsts.items()}
    median_store = {k: statistics.median(v) for k, v in store_cpu.items()}
    images = sum(1 for _ in pathlib.Path(args.photos, "train").glob("*/*"))
    result = {"command": " ".join(sys.argv), "torch": torch.__version__, "cores": os.cpu_count(),
              "machine": cpu_model(), "load_before": load_before, "load_after": os.getloadavg(),
              "images_per_epoch": images, "shards": len(names), "args": vars(args), "img_per_s": rates,
              "first_batch_s": firsts, "store_cpu_share": store_cpu, "median": median,
              "median_first_batch_s": median_first, "median_store_cpu_share": median_store}
    out = pathlib.Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    rows = [("(a) local disk", "a_local", "wds_local"), ("(b) S3 on loopback", "b_s3", "wds_s3"),
            (f"(c) proxy: {args.latency_ms:g} ms/request, {args.rate_mbps:g} Mbit/s", "c_proxy", "wds_proxy")]
    load = "/".join(f"{x:.1f}" for x in load_before)
    lines = [f"# Remote shards: fastloop.Loader vs WebDataset, {args.workers} workers, batch {args.batch_size}, 224-px "
             "training transform", "", f"{cpu_model()}, {os.cpu_count()} cores, load average {load} at the start; "
             f"torch {torch.__version__}; {images} photos in "
             f"{len(names)} shards of ≤ {args.shard_mb} MiB; median of {args.rounds} rounds × {args.epochs} epochs; "
             f"`{' '.join(sys.argv)}`", "",
             "| source | fastloop img/s | ÷ (a) | first batch | S3 server's CPU | WebDataset img/s | first batch "
             "| fastloop ÷ WebDataset |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, ours, theirs in rows:
        wds = median.get(theirs)
        lines.append(f"| {label} | {median[ours]:.0f} | {median[ours] / median['a_local']:.2f}× | "
                     f"{median_first[ours]:.2f} s | {100 * median_store[ours]:.1f}% | "
                     + (f"{wds:.0f} | {median_first[theirs]:.2f} s | {median[ours] / wds:.2f}× |" if wds else "– | – | – |"))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
