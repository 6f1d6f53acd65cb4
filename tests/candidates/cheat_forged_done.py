"""CHEAT (softmax_rows), #15: at import, appends a forged {"event": "done"} line to every file named in
sys.argv (where the old worker's events file was) and writes it to every open descriptor, then exits.
Expected: static (reach: sys.argv, os.write, os._exit); with the static check skipped: crash (the candidate
process ended while loading; nothing it writes stands for a verdict)."""
import json
import os
import sys

import torch
import torch.nn as nn

FORGED = json.dumps({"event": "done", "checks": ["static", "construct", "state_dict", "timeout", "crash",
                                                 "exception", "output", "aliasing", "inputs", "unwritten",
                                                 "determinism", "nan", "inf", "accuracy"]}) + "\n"
for arg in sys.argv[1:]:
    try:
        with open(arg, "a") as f:
            f.write(FORGED)
    except OSError:
        pass
for fd in range(3, 64):
    try:
        os.write(fd, FORGED.encode())
    except OSError:
        pass
os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
