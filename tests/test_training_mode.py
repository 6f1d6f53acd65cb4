"""A model runs in the mode its constructor leaves it in (KernelBench builds models and never calls eval()):
BatchNorm in training mode normalizes by the batch's statistics, and kernel.py refuses to run in the other mode
wherever forward() depends on the flag (capture.reads_training, Graph.training, emit._mode_check)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch.nn as nn

from helpers import DATA, L1, captured, make_module
from kerntailor.capture.capture import reads_training
from kerntailor.ir.nodes import Reduction
from kerntailor.problem import load_problem

TRAIN_BN = DATA / "module_trees" / "batchnorm_train.py"


def test_reads_training_finds_the_modules_whose_forward_reads_the_flag():
    assert reads_training(nn.Sequential(nn.BatchNorm2d(3)))
    assert reads_training(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.0)))
    assert reads_training(nn.LSTM(2, 2))
    assert not reads_training(nn.Sequential(nn.Linear(2, 2), nn.GELU(), nn.LayerNorm(2), nn.GroupNorm(1, 2)))


def test_the_graph_records_the_mode_it_was_traced_in():
    train = captured(load_problem(TRAIN_BN))[0].graph
    assert train.training is True
    # batch statistics: sums over the batch (mean and variance); eval mode reads the running statistics instead
    assert sum(isinstance(n, Reduction) for n in train.nodes) == 2
    evaluated = captured(load_problem(L1 / "batchnorm2d_eval.py"))[0].graph
    assert evaluated.training is False
    assert not any(isinstance(n, Reduction) for n in evaluated.nodes)
    assert captured(load_problem(L1 / "log_softmax.py"))[0].graph.training is None


SCRIPT = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("kernel", sys.argv[2])
kernel = importlib.util.module_from_spec(spec); spec.loader.exec_module(kernel)
ref = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), ref)
torch.manual_seed(0); model = ref["Model"](*ref["get_init_inputs"]())
assert model.training
new = kernel.ModelNew(*ref["get_init_inputs"]()); new.load_state_dict(model.state_dict())
x = torch.randn(48, 40)
with torch.no_grad():
    want = model(x)
    torch.testing.assert_close(new(x), want, rtol=1e-4, atol=1e-4)
    # what eval mode gives is far from it: the check tells the two modes apart
    assert not torch.allclose(model.eval()(x), want, rtol=1e-2, atol=1e-2)
    new.eval()
    try:
        new(x)
    except RuntimeError as e:
        print("refused:", e)
"""


@pytest.mark.interpreter
def test_kernel_py_computes_the_training_mode_output_and_refuses_eval_mode(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(make_module(TRAIN_BN).source)
    (tmp_path / "check.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    run = subprocess.run([sys.executable, "check.py", str(TRAIN_BN), str(path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "refused: this kernel was generated for the model in training mode" in run.stdout
