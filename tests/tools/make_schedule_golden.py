"""Writes tests/golden/schedule.json: the learning rates torch.optim.lr_scheduler.OneCycleLR gives,
so fastloop's one-cycle schedule is checked against PyTorch itself. Run with the project venv."""
import json
import pathlib

import torch

TOTAL, MAX_LR, PCT = 50, 0.1, 0.25
param = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([param], lr=MAX_LR, momentum=0.9)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=MAX_LR, total_steps=TOTAL, pct_start=PCT,
                                            anneal_strategy="cos", cycle_momentum=False)
lrs = []
for _ in range(TOTAL):
    lrs.append(opt.param_groups[0]["lr"])
    opt.step()
    sched.step()
out = pathlib.Path(__file__).resolve().parent.parent / "golden" / "schedule.json"
out.write_text(json.dumps({"torch": torch.__version__, "total_steps": TOTAL, "max_lr": MAX_LR,
                           "pct_start": PCT, "onecycle": lrs}, indent=1) + "\n")
print("wrote", out)
