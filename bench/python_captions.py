#!/usr/bin/env python3
"""Image-caption shards through fastloop.Loader(fields=...) beside OpenCLIP's own input pipeline.

The photo set (scripts/make_photo_set.sh) written as WebDataset shards of KEY.jpg + KEY.txt + KEY.json, as
img2dataset writes them, and read for training as OpenCLIP trains CLIP: RandomResizedCrop(224, scale=(0.9, 1)),
ToDtype (ToTensor), Normalize with OpenAI's mean and std, captions tokenized by open_clip's ViT-B-32 tokenizer.

- webdataset: OpenCLIP's `get_wds_dataset` (open_clip_train/data.py) stage for stage: shard list, shard shuffle,
  split_by_node, split_by_worker, tar to samples, sample shuffle, select (image and caption present),
  decode("pilrgb"), rename, map_dict (the transform per image, the tokenizer per caption), to_tuple, batched;
  in a WebLoader (DataLoader) with `--workers` worker processes;
- fastloop: fastloop.Loader over the same shards, fields=("jpg;png;jpeg;webp", "txt"), the same transform run
  by `--workers` C++ threads, the tokenizer once per batch (field_transforms);
- fastloop mixture: the same shards as two sources (halves) mixed with weights [1, 1]: its overhead;
- with `--s3`: the same shards uploaded to a SeaweedFS S3 gateway on loopback (tests/tools/remote_store.py, as
  bench/remote_shards.py runs it), read by both sides again: OpenCLIP's pipeline over signed `pipe:curl` URLs (as
  OpenCLIP reads s3 with `pipe:aws s3 cp`), fastloop over `shards:s3://shards/captions` (its shards.idx by
  `fastloop pack --index-only`).

Sides alternate within each round (interleaved), `--rounds` rounds; samples/s is the median over rounds of
`--epochs` whole epochs from a fresh loader. Writes OUT.json and OUT.md.

    scripts/make_photo_set.sh /tmp/photos 120 24      # 1,440 training photos (500x375)
    flock /tmp/fastloop-bench.lock .venv/bin/python bench/python_captions.py --photos /tmp/photos \\
        --out bench/results/cpu-2core/python_captions
"""
import argparse
import io
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import Callable, Dict, List

import torch
from torchvision.transforms import v2

import fastloop

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import remote_store  # noqa: E402

MEAN, STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)  # OpenAI CLIP's


def transform() -> v2.Compose:
    return v2.Compose([v2.ToImage(), v2.RandomResizedCrop(224, scale=(0.9, 1.0)), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(MEAN, STD)])


def write_shards(photos: pathlib.Path, out: pathlib.Path, per_shard: int, repeat: int) -> List[pathlib.Path]:
    """The photos (`repeat` times, each copy its own key) as caption shards of `per_shard` samples."""
    files = sorted((photos / "train").glob("*/*.jpg"))
    samples = [(f"{r:02d}{i:06d}", path) for r in range(repeat) for i, path in enumerate(files)]
    shards = []
    for s in range(0, len(samples), per_shard):
        shards.append(out / f"captions-{s // per_shard:05d}.tar")
        with tarfile.open(shards[-1], "w", format=tarfile.USTAR_FORMAT) as tar:
            for key, path in samples[s:s + per_shard]:
                text = f"a photograph of {path.parent.name}, picture {key}, taken outdoors in daylight"
                meta = {"caption": text, "key": key, "status": "success", "url": f"http://example.com/{key}.jpg"}
                for ext, data in (("jpg", path.read_bytes()), ("txt", text.encode()), ("json", json.dumps(meta).encode())):
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    return shards


class _OpenClipData:
    """What get_wds_dataset returns (open_clip_train.data.DataInfo): the loader and set_epoch."""

    def __init__(self, dataloader, shared_epoch) -> None:
        self.dataloader, self.shared_epoch = dataloader, shared_epoch

    def set_epoch(self, epoch: int) -> None:
        self.shared_epoch.set_value(epoch)


def openclip_loader(shards, samples: int, args, tokenizer) -> _OpenClipData:
    """open_clip_train.data.get_wds_dataset(is_train=True, resampled=False), stage for stage, with its own helpers
    and constants. One change: webdataset's tarfile_to_samples in place of its tarfile_to_samples_nothrow, which
    webdataset 1.0.2's end-of-shard marker breaks (KeyError 'fname'); OpenCLIP's own code names it as the
    alternative (the comment beside that stage)."""
    import math
    import webdataset as wds
    from open_clip_train import data as oc

    shared_epoch = oc.SharedEpoch(epoch=0)
    pipeline = [wds.SimpleShardList(shards),
                oc.detshuffle2(bufsize=oc._SHARD_SHUFFLE_SIZE, initial=oc._SHARD_SHUFFLE_INITIAL, seed=0,
                               epoch=shared_epoch),
                wds.split_by_node, wds.split_by_worker,
                wds.tarfile_to_samples(handler=oc.log_and_continue),
                wds.shuffle(bufsize=oc._SAMPLE_SHUFFLE_SIZE, initial=oc._SAMPLE_SHUFFLE_INITIAL),
                wds.select(oc.filter_no_caption_or_no_image),
                wds.decode("pilrgb", handler=oc.log_and_continue),
                wds.rename(image="jpg;png;jpeg;webp", text="txt"),
                wds.map_dict(image=transform(), text=lambda text: tokenizer(text)[0]),
                wds.to_tuple("image", "text"),
                wds.batched(args.batch_size, partial=False)]
    dataset = wds.DataPipeline(*pipeline)
    num_workers = max(1, args.workers)
    num_worker_batches = math.ceil(math.ceil(samples / args.batch_size) / num_workers)
    dataset = dataset.with_epoch(num_worker_batches)
    loader = wds.WebLoader(dataset, batch_size=None, shuffle=False, num_workers=args.workers,
                           persistent_workers=args.workers > 0)
    return _OpenClipData(loader, shared_epoch)


def timed(make: Callable[[], object], epochs: int) -> float:
    """Samples per second over `epochs` epochs of a fresh loader, creation included (OpenCLIP's DataInfo: its
    set_epoch and dataloader)."""
    start = time.perf_counter()
    loader = make()
    seen = 0
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for images, tokens in getattr(loader, "dataloader", loader):
            assert tokens.shape[1] == 77
            seen += images.shape[0]
    seconds = time.perf_counter() - start
    if hasattr(loader, "close"):
        loader.close()
    return seen / seconds


def s3_store(work: pathlib.Path, shards: List[pathlib.Path]) -> "remote_store.SeaweedS3":
    """SeaweedFS serving the shards and their shards.idx as s3://shards/captions/NAME; its keys in the environment."""
    subprocess.run([str(ROOT / "build" / "fastloop"), "pack", "--index-only", str(work)], check=True,
                   stdout=subprocess.DEVNULL)
    upload = work / "upload"
    upload.mkdir()
    for path in shards + [work / "shards.idx"]:
        os.link(path, upload / path.name)
    s3 = remote_store.SeaweedS3(remote_store.weed_program(), work / "weed")
    s3.upload(upload, "captions")
    os.environ.update(AWS_ACCESS_KEY_ID=remote_store.ACCESS_KEY, AWS_SECRET_ACCESS_KEY=remote_store.SECRET_KEY,
                      AWS_REGION=remote_store.REGION, AWS_ENDPOINT_URL=s3.endpoint)
    return s3


def s3_urls(endpoint: str, names: List[str]) -> List[str]:
    """Signed GETs of the shards through curl, as bench/remote_shards.py gives them to webdataset."""
    sign = f"--aws-sigv4 aws:amz:{remote_store.REGION}:s3 --user {remote_store.ACCESS_KEY}:{remote_store.SECRET_KEY}"
    return [f"pipe:curl -s -f {sign} {endpoint}/{remote_store.BUCKET}/captions/{n}" for n in names]


def cpu_model() -> str:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photos", required=True, help="an image folder (scripts/make_photo_set.sh DIR)")
    parser.add_argument("--out", required=True, help="OUT.json and OUT.md")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=1, help="epochs per side and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2, help="copies of the photo set in the shards")
    parser.add_argument("--per-shard", type=int, default=160, help="samples per shard")
    parser.add_argument("--shuffle-buffer", type=int, default=5000,
                        help="samples, fastloop's (OpenCLIP's is its _SAMPLE_SHUFFLE_SIZE, 5000 per worker)")
    parser.add_argument("--s3", action="store_true", help="also read the shards from a SeaweedFS S3 gateway")
    args = parser.parse_args()
    import open_clip
    tokenizer = open_clip.get_tokenizer("ViT-B-32")
    load_before = os.getloadavg()
    results: Dict[str, Dict[str, List[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="captions_bench-") as work:
        shards = write_shards(pathlib.Path(args.photos), pathlib.Path(work), args.per_shard, args.repeat)
        count = len(shards)
        pattern = f"shards:{work}/captions-{{00000..{count - 1:05d}}}.tar"
        half = count // 2
        halves = [f"shards:{work}/captions-{{00000..{half - 1:05d}}}.tar",
                  f"shards:{work}/captions-{{{half:05d}..{count - 1:05d}}}.tar"]
        fields = ("jpg;png;jpeg;webp", "txt")
        s3 = s3_store(pathlib.Path(work), shards) if args.s3 else None
        for workers in [int(w) for w in args.workers.split(",")]:
            args.workers = workers
            common = dict(fields=fields, transform=transform(), field_transforms={"txt": tokenizer},
                          batch_size=args.batch_size, workers=workers, shuffle_buffer=args.shuffle_buffer)
            samples = args.per_shard * count
            sides = {
                "webdataset": lambda: openclip_loader(pattern[len("shards:"):], samples, args, tokenizer),
                "fastloop": lambda: fastloop.Loader(pattern, **common),
                "fastloop mixture": lambda: fastloop.Loader(halves, weights=[1, 1], **common),
            }
            if s3 is not None:
                urls = s3_urls(s3.endpoint, [p.name for p in shards])
                remote = "shards:s3://shards/captions/" + pathlib.Path(pattern).name
                sides["webdataset s3"] = lambda: openclip_loader(urls, samples, args, tokenizer)
                sides["fastloop s3"] = lambda: fastloop.Loader(remote, **common)
            rates: Dict[str, List[float]] = {name: [] for name in sides}
            for _ in range(args.rounds):
                for name, make in sides.items():
                    rates[name].append(timed(make, args.epochs))
                    print(f"workers {workers} {name}: {rates[name][-1]:.0f} samples/s", flush=True)
            results[str(workers)] = rates
        if s3 is not None:
            s3.close()
    report = {"machine": f"{cpu_model()}, {os.cpu_count()} cores", "torch": torch.__version__,
              "load_before": load_before, "load_after": os.getloadavg(), "args": vars(args), "samples_per_s": results}
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    lines = [f"Machine: {report['machine']}; load before {load_before[0]:.1f}, after {report['load_after'][0]:.1f}",
             "", "| workers | webdataset (OpenCLIP) samples/s | fastloop samples/s | ratio | fastloop mixture "
             "samples/s | mixture overhead |", "|---|---|---|---|---|---|"]
    for workers, rates in results.items():
        med = {name: statistics.median(r) for name, r in rates.items()}
        lines.append(f"| {workers} | {med['webdataset']:.0f} | {med['fastloop']:.0f} | "
                     f"{med['fastloop'] / med['webdataset']:.1f}x | {med['fastloop mixture']:.0f} | "
                     f"{100 * (1 - med['fastloop mixture'] / med['fastloop']):+.1f}% |")
    if args.s3:
        lines += ["", "s3:// (SeaweedFS on loopback):", "", "| workers | webdataset (OpenCLIP) samples/s | fastloop "
                  "samples/s | ratio |", "|---|---|---|---|"]
        for workers, rates in results.items():
            med = {name: statistics.median(r) for name, r in rates.items()}
            lines.append(f"| {workers} | {med['webdataset s3']:.0f} | {med['fastloop s3']:.0f} | "
                         f"{med['fastloop s3'] / med['webdataset s3']:.1f}x |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
