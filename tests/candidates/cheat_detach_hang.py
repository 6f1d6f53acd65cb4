"""CHEAT (relu_small), #15: starts a detached child that sleeps for ten minutes, then hangs in forward. Used
to kill `kerntailor verify` while a candidate hangs: nothing may outlive it. tests/test_verify_sandbox.py
fills SETTINGS (a token in the child's command line)."""
import subprocess
import sys
import time

import torch
import torch.nn as nn

SETTINGS = {}
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", SETTINGS["token"]], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while True:
            time.sleep(60)
