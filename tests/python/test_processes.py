"""fastloop across processes: a Loader inherited through fork() never hangs (its threads start afresh in the
child, or it says why it cannot), it pickles for spawn-started processes, and Ctrl-C stops fastloop.train().

The fork tests repeat their trial (FASTLOOP_FORK_TRIALS, default 10): the hang they guard against was a race
between the fork and the parent's worker threads. scripts/stress.sh runs them hundreds of times.
"""

import json
import os
import pickle
import signal
import threading
import time

import pytest
import torch

import fastloop
from conftest import ctrl_c_once_training, fork_and_wait, loader_threads_left

TRIALS = int(os.environ.get("FASTLOOP_FORK_TRIALS", "10"))
SOURCE = "synthetic:3x32x32:2048"


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal bytes, compared without a torch kernel. After fork() a child's thread that had run a parallel
    torch kernel in the parent hangs in the next one (GNU OpenMP's pool lost its threads): PyTorch's own
    DataLoader workers call torch.set_num_threads(1) for this reason. fastloop's Loader does not depend on it."""
    return a.shape == b.shape and a.dtype == b.dtype and a.numpy().tobytes() == b.numpy().tobytes()


def first_batch(loader: fastloop.Loader, epoch: int):
    loader.set_epoch(epoch)
    images, labels = next(iter(loader))
    return images.clone(), labels.clone()


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_loader_mid_epoch_in_the_parent_iterates_afresh_in_a_forked_child(trial, workers):
    loader = fastloop.Loader(SOURCE, batch_size=64, workers=workers, prefetch=2)
    expected = [first_batch(loader, epoch) for epoch in (1, 2)]
    loader.set_epoch(1)
    running = iter(loader)
    for _ in range(trial % 4):  # fork at different points of the parent's epoch
        next(running)

    def child() -> int:  # compares with numpy: torch's own OpenMP pool of this thread did not survive the fork
        for epoch, (images, labels) in zip((1, 2), expected):
            loader.set_epoch(epoch)
            batches = list(loader)
            if len(batches) != len(loader):
                return 3
            if not (same(batches[0][0], images) and same(batches[0][1], labels)):
                return 4
        return 0 if loader_threads_left() == 0 else 5

    assert fork_and_wait(child) == 0
    assert sum(1 for _ in running) == len(loader) - trial % 4  # the parent's epoch goes on
    assert loader_threads_left() == 0


@pytest.mark.parametrize("trial", range(TRIALS))
def test_an_iteration_begun_before_the_fork_raises_runtime_error_in_the_child(trial):
    loader = fastloop.Loader(SOURCE, batch_size=64, workers=2, prefetch=2)
    running = iter(loader)
    for _ in range(trial % 3):
        next(running)

    def child() -> int:
        try:
            next(running)
        except RuntimeError as error:
            message = str(error)
            return 0 if "forked" in message and "spawn" in message else 6
        return 7

    assert fork_and_wait(child) == 0
    del running


class BatchesDataset(torch.utils.data.Dataset):
    """A user's Dataset holding a fastloop.Loader: item k is the k-th batch of epoch 0."""

    def __init__(self, loader: fastloop.Loader) -> None:
        self.loader = loader

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int):
        self.loader.set_epoch(0)
        for k, batch in enumerate(self.loader):
            if k == index:
                return batch[0].clone(), batch[1].clone()
        raise IndexError(index)


def test_a_loader_inside_a_dataset_works_in_forked_dataloader_workers():
    loader = fastloop.Loader(SOURCE, batch_size=64, workers=2)
    expected = [(x.clone(), y.clone()) for k, (x, y) in zip(range(4), loader)]
    next(iter(loader))  # the parent's threads were running shortly before the workers fork
    workers = torch.utils.data.DataLoader(BatchesDataset(loader), batch_size=None, num_workers=2,
                                          multiprocessing_context="fork", timeout=120)
    got = list(workers)
    assert len(got) == 4
    for (x, y), (ex, ey) in zip(got, expected):
        assert torch.equal(x, ex) and torch.equal(y, ey)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible")
def test_a_cuda_loader_in_a_forked_child_raises_runtime_error():
    loader = fastloop.Loader(SOURCE, batch_size=64, workers=1, device="cuda")
    next(iter(loader))

    def child() -> int:
        try:
            iter(loader)
        except RuntimeError as error:
            return 0 if "spawn" in str(error) else 8
        return 9

    assert fork_and_wait(child) == 0


def test_a_loader_pickles_as_its_arguments_and_epoch():
    loader = fastloop.Loader(SOURCE, batch_size=32, workers=1, seed=7, dtype=torch.bfloat16)
    next(iter(loader))  # mid-epoch: the threads and buffers do not travel
    loader.set_epoch(3)
    copy = pickle.loads(pickle.dumps(loader))
    assert copy.epoch == 3 and repr(copy) == repr(loader)
    for (x, y), (cx, cy) in zip(loader, copy):
        assert torch.equal(x, cx) and torch.equal(y, cy)
    assert copy.epoch == loader.epoch == 4


def spawned_first_batch(rank: int, loader: fastloop.Loader, out: str) -> None:
    images, labels = next(iter(loader))
    torch.save({"images": images.clone(), "labels": labels.clone(), "epoch": loader.epoch}, out)


def test_a_loader_passed_through_torch_multiprocessing_spawn_yields_the_parents_first_batch(tmp_path):
    loader = fastloop.Loader(SOURCE, batch_size=64, workers=2, seed=3)
    loader.set_epoch(2)
    out = tmp_path / "spawned.pt"
    torch.multiprocessing.spawn(spawned_first_batch, args=(loader, str(out)), nprocs=1)
    got = torch.load(out)
    images, labels = first_batch(loader, 2)
    assert torch.equal(got["images"], images) and torch.equal(got["labels"], labels)
    assert got["epoch"] == 3  # the child's iteration ran epoch 2, as the parent's would have


# Batches of 32: a step of small_cnn on 16x16 images takes ~70 ms at the default 128 on 2 cores, ~15 ms at 32.
SHORT_RUN = {"data.source": "synthetic:3x16x16:512", "model.name": "small_cnn", "data.batch_size": 32, "run.epochs": 100}


def test_train_in_a_forked_child_runs_when_the_parents_run_finished_before_the_fork():
    fastloop.train(quiet=True, **SHORT_RUN, **{"run.max_steps": 3})  # the forking thread's OpenMP pool is the parent's

    def child() -> int:
        summary = fastloop.train(quiet=True, **SHORT_RUN, **{"run.max_steps": 3})
        evaluated = summary["test_samples"] > 0 and summary["steps"] == 3
        return 0 if evaluated else 10

    assert fork_and_wait(child, timeout=120) == 0


def test_train_in_a_child_forked_during_a_run_in_another_thread_raises_instead_of_hanging(tmp_path):
    # The parent's run is surely in flight at the fork: its first step is logged, and 200 more take seconds (a
    # longer run only makes the test wait for it to end).
    # Its thread held LibTorch's locks (autocast's cast cache) at that moment; in the child they stay held.
    metrics = tmp_path / "metrics.jsonl"
    background = threading.Thread(target=fastloop.train, kwargs=dict(
        quiet=True, **SHORT_RUN, **{"run.max_steps": 200, "run.log_every": 1, "run.metrics": str(metrics)}))
    background.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (metrics.exists() and '"kind":"step"' in metrics.read_text()):
        time.sleep(0.005)

    def child() -> int:
        try:
            fastloop.train(quiet=True, **SHORT_RUN, **{"run.max_steps": 3})
        except RuntimeError as error:
            return 0 if "spawn start method" in str(error) else 11
        return 10  # it ran: the parent's run had ended before the fork (the test did not test what it says)

    try:
        assert fork_and_wait(child, timeout=120) == 0
    finally:
        background.join()


def test_ctrl_c_in_train_stops_the_run_keeps_a_whole_checkpoint_and_raises(tmp_path):
    checkpoints, metrics = tmp_path / "ckpt", tmp_path / "metrics.jsonl"
    with ctrl_c_once_training(metrics) as started, pytest.raises(KeyboardInterrupt, match="stopped at step"):
        fastloop.train(quiet=True, epochs=10_000, log_every=1, **{
            "data.source": "synthetic:3x32x32:4096", "model.name": "small_cnn", "data.batch_size": 32,
            "run.checkpoint_dir": str(checkpoints), "run.metrics": str(metrics)})
    assert started.is_set()
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_DFL  # the handler found is back
    for line in metrics.read_text().splitlines():  # every record whole
        json.loads(line)
    left = sorted(p.name for p in checkpoints.iterdir())
    assert left == ["last.ckpt"], left  # the stop's checkpoint, no temporary file beside it
    info = fastloop.model_info(str(checkpoints / "last.ckpt"))
    assert info["model"] == "small_cnn"
