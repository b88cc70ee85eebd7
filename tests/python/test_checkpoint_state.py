"""The loader state in fastloop.train()'s checkpoints and summary is fastloop.Loader.state_dict()'s: a run stopped
mid-epoch hands a Loader of the same data the batches after the last one it trained on."""

import pytest
import torch

import fastloop
from conftest import ctrl_c_once_training

DATA = {"data.source": "synthetic:1x12x12:4096", "data.batch_size": 32, "run.seed": 3}


def _stopped_after_a_few_steps(tmp_path) -> str:
    """A fastloop.train() run stopped by Ctrl-C once it logged a step (mid-epoch: 128 batches an epoch)."""
    checkpoints, metrics = tmp_path / "ckpt", tmp_path / "metrics.jsonl"
    with ctrl_c_once_training(metrics), pytest.raises(KeyboardInterrupt, match="stopped at step"):
        fastloop.train(quiet=True, epochs=2, log_every=1, time_budget="off", **DATA, **{
            "model.name": "small_cnn", "run.threads": 1, "run.checkpoint_dir": str(checkpoints),
            "run.metrics": str(metrics)})
    return str(checkpoints / "last.ckpt")


def test_a_checkpoint_mid_epoch_resumes_a_loader_at_the_next_batch(tmp_path):
    checkpoint = _stopped_after_a_few_steps(tmp_path)
    state = fastloop.loader_state(checkpoint)
    assert state["epoch"] == 0 and 0 < state["position"] < 4096 and state["position"] % 32 == 0, state
    assert (state["order_world_size"], state["world_size"]) == (1, 1)

    loader = fastloop.Loader(DATA["data.source"], batch_size=32, seed=3, workers=1)
    loader.load_state_dict(state)
    assert loader.state_dict() == state  # the same fields, the same meaning
    resumed = [(i.clone(), l.clone()) for _, (i, l) in zip(range(2), loader)]

    whole = fastloop.Loader(DATA["data.source"], batch_size=32, seed=3, workers=1)
    whole.set_epoch(0)
    skip = state["position"] // 32
    expected = [(i.clone(), l.clone()) for k, (i, l) in zip(range(skip + 2), whole) if k >= skip]
    assert len(resumed) == len(expected) == 2
    for (a, la), (b, lb) in zip(resumed, expected):
        assert torch.equal(a, b) and torch.equal(la, lb)

    with pytest.raises(ValueError, match="seed is 3 in the state, 4 here"):
        fastloop.Loader(DATA["data.source"], batch_size=32, seed=4).load_state_dict(state)


def test_train_returns_the_state_its_last_checkpoint_holds(tmp_path):
    summary = fastloop.train(quiet=True, epochs=1, time_budget="off", **{
        **DATA, "data.source": "synthetic:1x12x12:256", "model.name": "small_cnn", "run.threads": 1,
        "run.checkpoint_dir": str(tmp_path)})
    assert summary["loader_state"] == fastloop.loader_state(summary["checkpoint"])
    assert (summary["loader_state"]["epoch"], summary["loader_state"]["position"]) == (1, 0)
    fastloop.Loader("synthetic:1x12x12:256", batch_size=32, seed=3).load_state_dict(summary["loader_state"])
