"""``fastloop.train`` and ``fastloop.evaluate``: ``fastloop train`` and ``fastloop eval`` as calls."""

import json
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple

import torch

from . import _C
from ._batch import contains_batch_transform
from .transforms import compile_transform

__all__ = ["train", "evaluate", "model_info", "loader_state"]


def _flatten(fields: Mapping[str, Any], prefix: str = "") -> List[Tuple[str, Any]]:
    """``{"optim": {"lr": 0.05}}`` -> ``[("optim.lr", 0.05)]``, as a TOML recipe nests its keys."""
    flat: List[Tuple[str, Any]] = []
    for key, value in fields.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.extend(_flatten(value, name + "."))
        else:
            flat.append((name, value))
    return flat


def _transform_setting(key: str) -> Optional[str]:
    """``"transform"`` or ``"eval_transform"`` when `key` names ``data.transform`` / ``data.eval_transform``
    in any spelling train() takes (``transform``, ``data.transform``, ``--eval-transform``), else None."""
    name = key[2:] if key.startswith("--") else key
    name = name.replace("-", "_")
    name = name[len("data."):] if name.startswith("data.") else name
    return name if name in ("transform", "eval_transform") else None


def _compile_settings(fields: List[Tuple[str, Any]]) -> List[Tuple[str, Any]]:
    """Each torchvision transform object given for a transform setting compiled to its spec, as
    ``fastloop.Loader(transform=...)`` compiles it (TypeError names what fastloop cannot run); text is kept
    as given (the run checks it before any work)."""
    compiled: List[Tuple[str, Any]] = []
    for key, value in fields:
        setting = _transform_setting(key)
        if setting is not None and value is not None and not isinstance(value, (str, bool, int, float)):
            mix = contains_batch_transform(value)
            if mix:
                raise TypeError(f"fastloop.train: {mix} in {setting}= is a batch transform (it mixes samples of a "
                                f"batch), and train() has no batch-transform setting: give its alpha as "
                                f"mixup=ALPHA or cutmix=ALPHA (data.mixup, data.cutmix: per batch, as timm's Mixup) "
                                f"instead, or use fastloop.Loader(batch_transform={mix}(...)) in a loop of your own")
            value = compile_transform(value)
        compiled.append((key, value))
    return compiled


def train(
    recipe: Optional[str] = None,
    model: Optional[torch.jit.ScriptModule] = None,
    quiet: bool = False,
    time_budget: Optional[str] = None,
    **fields: Any,
) -> Dict[str, Any]:
    r"""Runs what ``fastloop train`` runs and returns its summary.

    Args:
        recipe: a TOML recipe (``recipes/fashion_mnist.toml``); None: the built-in defaults.
        model: a ``torch.jit.ScriptModule`` (``torch.jit.script(module)``) to train in place instead of
            ``model.name``: its forward takes an image batch and returns logits.
        quiet: no progress display and none of the run's report lines.
        time_budget: the whole run's time, ``"300s"``, ``"5m"``, ``"2h"`` (``run.time_budget``; the default
            is 300 s): a short calibration measures the step and evaluation costs on this machine, then
            the steps, evaluations and the schedule are planned to end within it (the plan is printed,
            and recorded in ``run.metrics`` and the checkpoint); ``"off"`` trains ``epochs``. Given
            ``max_steps``, or ``epochs`` other than 8, turn it off: a plan replays with its recorded
            ``epochs`` and ``max_steps``.
        \**fields: settings by TOML key (``**{"optim.lr": 0.05}``), by name where it is unique
            (``epochs=2``, ``max_steps=20``) or nested as in TOML (``optim={"lr": 0.05}``); they override
            the recipe, and ``--perf auto`` keeps them as it keeps flags given on a command line.
            ``transform`` and ``eval_transform`` also take a torchvision transform object (v1 or v2,
            ``Compose`` and the other containers nested), compiled as ``fastloop.Loader`` compiles it.

    Returns:
        ``test_accuracy`` (fraction), ``test_loss``, ``test_samples``, ``test_tta`` (the final evaluation's
        test-time augmentation), ``img_per_s``, ``train_seconds``,
        ``elapsed_seconds`` (data loading to the final evaluation),
        ``steps``, ``epochs``, ``skipped_steps``, ``stopped``, ``checkpoint`` (path or None), ``config``
        (the resolved settings as JSON) and ``loader_state``: where the train loader ended, the dict
        :meth:`fastloop.Loader.state_dict` gives (the checkpoint records the same, :func:`loader_state`).

    Resuming: ``run={"checkpoint_dir": DIR, "resume": "auto"}`` continues from ``DIR/last.ckpt`` at the
    batch after the last one it trained, mid-epoch too, on as many ranks or another number.

    Raises:
        TypeError: a transform fastloop does not run (a ``Lambda``, a user's own class, MixUp or CutMix,
            an unsupported option), naming it, before any work.
        ValueError: a bad setting, recipe, data set or model, with the CLI's message.
        RuntimeError: a run that cannot go on (diverged, out of memory).
        KeyboardInterrupt: Ctrl-C stopped the run after its current step (with a checkpoint when
            ``run.checkpoint_dir`` is set).
    """
    if model is not None and not isinstance(model, torch.jit.ScriptModule):
        raise TypeError(f"fastloop.train: model must be a torch.jit.ScriptModule (torch.jit.script(module)), "
                        f"got {type(model).__name__}")
    if time_budget is not None:
        fields["run.time_budget"] = time_budget
    sys.stdout.flush()
    settings = _compile_settings(_flatten(fields))
    summary = _C.train(os.fspath(recipe) if recipe is not None else "", settings, model, quiet)
    summary["loader_state"] = json.loads(summary["loader_state"])
    if summary["stopped"]:
        raise KeyboardInterrupt(f"fastloop.train stopped at step {summary['steps']}")
    return summary


def evaluate(
    checkpoint: str,
    data: Optional[str] = None,
    batch_size: Optional[int] = None,
    workers: int = 1,
    fold_bn: bool = False,
    tta: Optional[str] = None,
) -> Dict[str, Any]:
    """Runs what ``fastloop eval --checkpoint`` runs: the checkpoint's model on a test split.

    Args:
        checkpoint: a checkpoint written by ``fastloop train`` (``DIR/last.ckpt``).
        data: a ``--data`` source; None: the one the checkpoint was trained on.
        batch_size: None: the checkpoint's.
        workers: loader threads.
        fold_bn: fold each BatchNorm into the conv before it (same results, one pass less).
        tta: test-time augmentation, ``"off"``, ``"flip"``, ``"flip-translate"`` or ``"auto"`` (flip for the
            default Fashion-MNIST recipe, off elsewhere); None: the checkpoint's.

    Returns:
        ``accuracy`` (fraction), ``loss``, ``samples``, ``seconds``, ``tta`` (the test-time augmentation used:
        ``"off"`` is one forward per image), ``model``, ``data`` and ``classes``.
    """
    sys.stdout.flush()
    if tta not in (None, "auto", "off", "flip", "flip-translate"):
        raise ValueError(
            f"tta={tta!r} is not one of 'auto', 'off', 'flip', 'flip-translate' (or None: the checkpoint's)")
    return _C.evaluate(os.fspath(checkpoint), data or "", batch_size or 0, workers, fold_bn, tta or "")


def model_info(checkpoint: str) -> Dict[str, Any]:
    """What a checkpoint's model needs beside its weights: ``model`` (its name), ``classes`` (the name of
    each output), ``channels``, ``height``, ``width``, ``image_files`` with ``resize`` (Resize of the shorter
    side, then CenterCrop), ``mean`` and ``std`` (in [0, 1] units), ``channels_last`` and ``autocast``."""
    return json.loads(_C.model_info(os.fspath(checkpoint)))


def loader_state(checkpoint: str) -> Optional[Dict[str, Any]]:
    r"""Where the train loader of the run that wrote `checkpoint` stood: the dict
    :meth:`fastloop.Loader.state_dict` gives (``epoch``, ``position``, ``order_world_size``, ``world_size`` and
    the data's identity), so a loop of your own continues the same epoch at the same sample::

        loader = fastloop.Loader("synthetic:1x28x28:1024", batch_size=64, seed=0)  # the run's data settings
        loader.load_state_dict(fastloop.loader_state("runs/last.ckpt"))

    Returns None for a checkpoint written before checkpoints recorded it.
    """
    text = _C.checkpoint_loader_state(os.fspath(checkpoint))
    return json.loads(text) if text else None
