"""capture_problem remembers its last captures (capture/capture.py): an equal call returns the same Capture without
tracing again, and every input the capture reads is part of the key (the problem's source, path and dtype policy,
the variant's sizes, prove_causal, torch's default dtype); a capture that raises is traced again."""

from __future__ import annotations

import textwrap

import pytest
import torch

import kerntailor.capture.capture as capture_module
from kerntailor.capture import capture_problem
from kerntailor.errors import CaptureError
from kerntailor.problem import load_problem

pytestmark = pytest.mark.capture

PROBLEM = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.proj = nn.Linear(n, n)

        def forward(self, x):
            return torch.relu(self.proj(x)) * SCALE

    SCALE = 2.0
    batch_size = 32
    n = 64

    def get_inputs():
        return [torch.rand(batch_size, n)]

    def get_init_inputs():
        return [n]

    VARIANTS = {"small": {"batch_size": 16, "n": 32}, "odd": {"batch_size": 15, "n": 31}}
"""


def _x(capture):
    """The type of the captured forward's argument x."""
    return next(i.type for i in capture.graph.inputs if i.kind == "input")


@pytest.fixture
def problem_file(tmp_path, monkeypatch):
    """The problem file, and a count of the exports capture runs (each one is a trace the cache did not save)."""
    path = tmp_path / "cached_linear.py"
    path.write_text(textwrap.dedent(PROBLEM))
    exports = []
    real = capture_module.export_on_meta

    def counted(*args, **kwargs):
        exports.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(capture_module, "export_on_meta", counted)
    return path, exports


def test_an_equal_call_returns_the_same_capture_without_tracing(problem_file):
    path, exports = problem_file
    spec = load_problem(path)
    first = capture_problem(spec)
    assert capture_problem(spec, "default") is first
    assert capture_problem(spec, spec.variant("default")) is first
    assert capture_problem(load_problem(path), "default") is first   # the file loaded again: an equal spec
    assert len(exports) == 1


def test_the_variant_and_prove_causal_are_keys(problem_file):
    path, exports = problem_file
    spec = load_problem(path)
    default, small = capture_problem(spec), capture_problem(spec, "small")
    assert small is not default and small.variant == "small"
    assert _x(small).shape == (16, 32) and _x(default).shape == (32, 64)
    assert capture_problem(spec, prove_causal=False) is not default
    assert len(exports) == 3


def test_the_dtype_policy_and_torch_default_dtype_are_keys(problem_file):
    path, exports = problem_file
    native = capture_problem(load_problem(path))
    half = capture_problem(load_problem(path, dtype="bf16"))
    assert _x(half).dtype == "bf16" and _x(native).dtype == "fp32"
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        wide = capture_problem(load_problem(path))
    finally:
        torch.set_default_dtype(before)
    assert _x(wide).dtype == "fp64"
    assert capture_problem(load_problem(path)) is native
    assert len(exports) == 3


def test_the_source_is_a_key(problem_file):
    path, exports = problem_file
    first = capture_problem(load_problem(path))
    path.write_text(textwrap.dedent(PROBLEM).replace("n = 64", "n = 48"))
    second = capture_problem(load_problem(path))
    assert second is not first and _x(second).shape == (32, 48)
    assert len(exports) == 2


def test_a_capture_that_raises_is_traced_again(problem_file, monkeypatch):
    path, exports = problem_file
    spec = load_problem(path)

    def refuses(model, inputs, name):
        exports.append(name)
        raise CaptureError(f"{name}: refused")

    monkeypatch.setattr(capture_module, "export_on_meta", refuses)
    for _ in range(2):
        with pytest.raises(CaptureError):
            capture_problem(spec, "odd")
    assert len(exports) == 2
