"""Writes tests/golden/schedule.json: the learning rates PyTorch's own schedulers give, so fastloop's
schedules are checked against PyTorch itself: OneCycleLR with either anneal_strategy (one-cycle) and a
LinearLR warm-up followed by LinearLR down to zero (linear). Run with the project venv."""
import json
import pathlib
from typing import Callable, List

import torch
from torch.optim.lr_scheduler import LinearLR, OneCycleLR, SequentialLR

TOTAL, MAX_LR, PCT = 50, 0.1, 0.25
WARMUP = 10  # linear: warm-up steps (--warmup-epochs 1 at 10 steps per epoch)


def learning_rates(make_scheduler: Callable[[torch.optim.Optimizer], object]) -> List[float]:
    """The learning rate of each of TOTAL steps, as the scheduler made by `make_scheduler` sets them."""
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=MAX_LR, momentum=0.9)
    sched = make_scheduler(opt)
    lrs = []
    for _ in range(TOTAL):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


onecycle = learning_rates(lambda opt: OneCycleLR(opt, max_lr=MAX_LR, total_steps=TOTAL, pct_start=PCT,
                                                 anneal_strategy="cos", cycle_momentum=False))
onecycle_linear = learning_rates(lambda opt: OneCycleLR(opt, max_lr=MAX_LR, total_steps=TOTAL, pct_start=PCT,
                                                        anneal_strategy="linear", cycle_momentum=False))
# Warm-up step i at (i + 1) / WARMUP of the peak, then from the peak down by equal steps to 0 one past the end.
linear = learning_rates(lambda opt: SequentialLR(
    opt, [LinearLR(opt, start_factor=1.0 / WARMUP, end_factor=1.0, total_iters=WARMUP - 1),
          LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=TOTAL - WARMUP)], milestones=[WARMUP]))
out = pathlib.Path(__file__).resolve().parent.parent / "golden" / "schedule.json"
out.write_text(json.dumps({"torch": torch.__version__, "total_steps": TOTAL, "max_lr": MAX_LR,
                           "pct_start": PCT, "onecycle": onecycle, "onecycle_linear": onecycle_linear,
                           "warmup_steps": WARMUP, "linear": linear},
                          indent=1) + "\n")
print("wrote", out)
