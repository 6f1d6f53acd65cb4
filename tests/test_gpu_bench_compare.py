"""The measured search's sanity filter (generate/gpu_bench.py) compares a chunk at a time: the same figure as the
whole-output float64 norm, without whole float64 copies."""

from __future__ import annotations

import math

import torch

from kerntailor.generate import gpu_bench


def test_relative_error_by_chunks_equals_the_whole_norm(monkeypatch):
    monkeypatch.setattr(gpu_bench, "CHUNK", 7)   # 7 does not divide 5 x 13: a short last chunk
    torch.manual_seed(0)
    e = torch.randn(5, 13)
    g = e + 1e-3 * torch.randn(5, 13)
    whole = float((g.double() - e.double()).norm() / e.double().norm())
    assert math.isclose(gpu_bench.relative_error(g, e), whole, rel_tol=1e-12)
    assert gpu_bench.relative_error(e.bfloat16(), e.bfloat16()) == 0.0


def test_relative_error_of_a_wrong_shape_or_nan_is_never_within_a_bound():
    e = torch.ones(4, 6)
    assert gpu_bench.relative_error(torch.ones(6, 4), e) == math.inf   # same numel, other shape
    assert gpu_bench.relative_error(torch.ones(4, 1), e) == math.inf   # would broadcast
    bad = e.clone()
    bad[2, 3] = float("nan")
    assert not gpu_bench.relative_error(bad, e) <= 1.0


def test_the_bound_follows_the_tensors_dtype_when_the_file_sets_none():
    """A group file written out of a bf16 model holds bf16 tensors with no dtype override: the 16-bit bound."""
    bf16, fp32 = torch.zeros(3, dtype=torch.bfloat16), torch.zeros(3)
    assert gpu_bench.sanity_bound(None, (bf16,), "ieee") == 3e-2
    assert gpu_bench.sanity_bound(None, (fp32,), "ieee") == 1e-3
    assert gpu_bench.sanity_bound("bf16", (fp32,), "ieee") == 3e-2
    assert gpu_bench.sanity_bound(None, (fp32,), "fp8-row") == 1e-1
