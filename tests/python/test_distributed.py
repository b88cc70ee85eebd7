"""fastloop.Loader under torchrun: each rank takes its share from torch.distributed, as DistributedSampler."""

import pathlib
import subprocess
import sys

import torch

import fastloop

SOURCE = "synthetic:3x8x8:512"

RANK_SCRIPT = """
import sys, torch, torch.distributed as dist, fastloop
dist.init_process_group("gloo")
loader = fastloop.Loader({source!r}, batch_size=32, workers=1, augment=False, drop_last=False)
loader.set_epoch(2)
images = torch.cat([x for x, _ in loader])
torch.save({{"rank": loader.rank, "world": loader.world_size, "images": images}},
           sys.argv[1] + f"/rank{{dist.get_rank()}}.pt")
dist.destroy_process_group()
"""


def rows(images: torch.Tensor):
    return {bytes(row.numpy().tobytes()) for row in images.flatten(1)}


def test_two_torchrun_ranks_get_disjoint_halves_that_make_the_epoch(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT.format(source=SOURCE))
    torchrun = pathlib.Path(sys.executable).parent / "torchrun"
    done = subprocess.run([str(torchrun), "--standalone", "--nproc-per-node", "2", str(script), str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    shares = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    assert [(s["rank"], s["world"]) for s in shares] == [(0, 2), (1, 2)]
    assert all(s["images"].shape[0] == 256 for s in shares)
    whole = fastloop.Loader(SOURCE, batch_size=32, workers=1, augment=False, drop_last=False)
    everything = rows(torch.cat([x for x, _ in whole]))
    assert len(everything) == 512  # every sample distinct, so sets count them
    first, second = rows(shares[0]["images"]), rows(shares[1]["images"])
    assert not first & second
    assert first | second == everything
