"""The judge's randomness check (verify/randomness.py): a reference that draws is refused, one whose kernels only
round differently from run to run (a library's atomics) is judged with a note. On the CPU, the library's varying
summation order is stood in for by a module that sums in a different order on every call unless PyTorch's
deterministic algorithms are on, as cuDNN's transposed convolutions do on a GPU (KernelBench level-2 77, H100)."""

import numpy as np
import pytest
import torch
import torch.nn as nn

from kerntailor.verify.randomness import deterministic_algorithms, first_difference, judge_randomness, run_again
from kerntailor.verify.tolerance import tolerance_for


def _row(_o):
    return tolerance_for("fp32")


class _Cancelling(nn.Module):
    """Row sums of x + 100 less 100 per element: the rounding of the large partial sums depends on their order, and
    the result is small (cancellation), so two orders differ by ~1e-4 relative, above the fp32 table's 1e-5."""

    def __init__(self, varies: bool = True):
        super().__init__()
        self.calls, self.varies = 0, varies

    def forward(self, x):
        self.calls += 1
        shift = 0 if torch.are_deterministic_algorithms_enabled() or not self.varies else 97 * self.calls
        y = (x + 100.0).roll(shift, dims=1)
        return y.view(y.shape[0], -1, 64).sum(2).sum(1) - 100.0 * x.shape[1]


class _Dropout(nn.Module):
    def forward(self, x):
        return nn.functional.dropout(x, 0.5, training=True)


class _NumpyNoise(nn.Module):
    """Draws from numpy's generator, which torch.manual_seed does not reach."""

    def forward(self, x):
        return x + torch.from_numpy(np.random.standard_normal(x.shape).astype(np.float32))


def _first(model, x, seed=0):
    return run_again(model, [x], seed)


@pytest.fixture
def x():
    return torch.randn(16, 8192, generator=torch.Generator().manual_seed(1))


def test_a_reproducible_reference_passes_without_a_note(x):
    model = _Cancelling(varies=False)
    assert judge_randomness(model, [x], _first(model, x), 0, _row) == (None, None)


def test_the_stand_in_does_vary_beyond_the_fp32_table(x):
    """The premise of the next test: two calls of the varying module differ by more than the table allows."""
    model = _Cancelling()
    a, b = _first(model, x)[0], _first(model, x)[0]
    assert ((a.double() - b.double()).norm() / a.double().norm()).item() > 1e-5


def test_a_reference_whose_kernels_round_differently_is_judged_with_a_note(x):
    model = _Cancelling()
    refusal, note = judge_randomness(model, [x], _first(model, x), 0, _row)
    assert refusal is None
    assert "round differently from run to run" in note and "deterministic algorithms" in note


def test_dropout_in_training_mode_is_refused(x):
    model = _Dropout()
    refusal, note = judge_randomness(model, [x], _first(model, x), 0, _row)
    assert note is None and refusal.startswith("the reference is random: put it in eval mode")
    assert "under PyTorch's deterministic algorithms" in refusal


class _Intermittent(_Cancelling):
    """Reorders on every other call only, as a library's atomics need not reorder on every run: a rerun at the first
    run's generator state may agree with it."""

    def forward(self, x):
        self.calls += 1
        shift = 0 if torch.are_deterministic_algorithms_enabled() else 97 * (self.calls % 2)
        y = (x + 100.0).roll(shift, dims=1)
        return y.view(y.shape[0], -1, 64).sum(2).sum(1) - 100.0 * x.shape[1]


def test_a_reference_whose_kernels_reorder_only_sometimes_is_judged_with_a_note(x):
    """Level-2 77 on the H100: judged with the note in one call, refused as random in a later one, where a rerun at
    the same generator state happened to agree with the first run (the check that came first then)."""
    probe = _Intermittent()   # the premise: runs 1 and 2 differ, run 3 (at run 1's generator state) agrees with 1
    one, two, three = _first(probe, x), _first(probe, x, 1), _first(probe, x)
    assert first_difference(one, two, _row) is not None and first_difference(one, three, _row) is None
    model = _Intermittent()
    refusal, note = judge_randomness(model, [x], _first(model, x), 0, _row)
    assert refusal is None and "round differently from run to run" in note


def test_a_generator_the_seed_does_not_reach_is_refused(x):
    model = _NumpyNoise()
    refusal, note = judge_randomness(model, [x], _first(model, x), 0, _row)
    assert note is None and refusal.startswith("the reference is random")
    assert "under PyTorch's deterministic algorithms" in refusal


def test_deterministic_algorithms_are_restored_after(x):
    before = (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
              torch.backends.cudnn.benchmark)
    with deterministic_algorithms():
        assert torch.are_deterministic_algorithms_enabled() and torch.backends.cudnn.deterministic
    with pytest.raises(RuntimeError), deterministic_algorithms():
        raise RuntimeError("the reference raised")
    assert (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
            torch.backends.cudnn.benchmark) == before


@pytest.mark.interpreter
def test_the_referee_judges_a_reference_that_only_rounds_differently(tmp_path):
    """End to end through verify: the unreproducible row mean is judged (a correct Triton row mean passes), with the
    note in the verdict (before verify/randomness.py the judge refused it as random; the training-mode dropout
    problems are still refused: tests/test_verify_sandbox.py)."""
    from pathlib import Path

    from kerntailor.problem import load_problem
    from kerntailor.verify import VerifySettings, verify_candidate

    here = Path(__file__).parent / "candidates"
    v = verify_candidate(load_problem(here / "problems" / "row_mean_unreproducible.py"), here / "ok_row_mean.py",
                         VerifySettings(device="cpu"))
    assert v.passed, f"{v.check}: {v.reason}"
    assert any("round differently from run to run" in n for n in v.notes), v.notes
