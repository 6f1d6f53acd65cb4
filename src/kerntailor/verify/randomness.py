"""Whether a reference's output is a function of its inputs: the judge's first case runs it again before any
comparison (judge.Judge.refuse_random).

Two different reasons make a second run on the same inputs differ, and only one of them stops the judge:

- **randomness**: forward draws from a generator (dropout in training mode, `torch.rand_like`, numpy's or Python's
  `random`). No tolerance can judge a kernel against it, and the tolerance's widening to 4x PyTorch's own error
  would then pass anything (tolerance.py): refused.
- **arithmetic that is not reproducible**: a library kernel that sums with atomics (cuDNN's transposed 3-d
  convolutions pick such algorithms) rounds differently from run to run. The output is still a function of the
  inputs, up to its rounding; where cancellation follows (a global average of a convolution's output), the runs can
  differ by more than the fp32 table's 1e-5 (KernelBench level-2 77 on an H100, 2026-12-06: 1.29e-5). The judge
  compares against the float64 reference as on every problem: not refused, said in a note.

Told apart by two more runs, only where the first two differ: two runs under different generator states with
PyTorch's deterministic algorithms on (torch.use_deterministic_algorithms, cuDNN's deterministic mode): a reference
whose only variation is its kernels' summation order agrees with itself there; one that draws (from torch's
generator or one torch's seed does not reach) or has an op with no deterministic algorithm that also varies still
differs and is refused: the judge cannot tell its rounding from a draw. (A third run at the first one's generator
state used to come first, refusing where it agreed with the first: a library's atomics do not always reorder, and
level-2 77 was refused so on the H100 once its earlier call had judged it, 2026-12-06.) Those runs hold one more
output than the two of the usual check, on this rare path only.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from kerntailor.verify.tolerance import Comparison, Tolerance, compare, flatten_outputs


@contextlib.contextmanager
def deterministic_algorithms() -> Iterator[None]:
    """PyTorch's deterministic algorithms (warn only where an op has none: it then runs as it would) and cuDNN's
    deterministic mode, restored after."""
    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "... does not have a deterministic implementation": it still runs
            yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = before[2], before[3]


def run_again(ref_model, inputs: list[Any], seed: int) -> list[Any]:
    """The reference's flat outputs on a copy of `inputs` under generator state `seed`."""
    ins = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    torch.manual_seed(seed)
    with torch.no_grad():
        return flatten_outputs(ref_model(*ins))


def first_difference(a_out: list[Any], b_out: list[Any], row: Callable[[torch.Tensor], Tolerance]) \
        -> tuple[int, Comparison] | None:
    """(output index, comparison) of the first tensor output where `b_out` misses `a_out` by the table of its
    dtype; None where every one agrees."""
    for k, (a, b) in enumerate(zip(a_out, b_out)):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape:
            cmp = compare(b, a, row(a))   # compare takes the reference a chunk at a time, as float64
            if cmp.problem:
                return k, cmp
    return None


def judge_randomness(ref_model, inputs: list[Any], first_out: list[Any], seed: int,
                     row: Callable[[torch.Tensor], Tolerance]) -> tuple[str | None, str | None]:
    """(refusal, note) for a reference whose first run under generator state `seed` gave `first_out`: both None
    where a run under `seed + 1` agrees; else a refusal (random), or a note (only its arithmetic varies: module
    docstring). Each run takes its own copy of the inputs."""
    differs = first_difference(first_out, run_again(ref_model, inputs, seed + 1), row)
    if differs is None:
        return None, None
    k, cmp = differs
    seen = f"two runs on the same inputs differ in output {k}: {cmp.detail[:160]}"
    with deterministic_algorithms():
        one = run_again(ref_model, inputs, seed)
        other = run_again(ref_model, inputs, seed + 1)
    still = first_difference(one, other, row)
    del one, other
    if still is not None:
        return (f"the reference is random: put it in eval mode or fix its generator ({seen}; it differs also under "
                f"PyTorch's deterministic algorithms)"), None
    return None, (f"the reference's kernels round differently from run to run (output {k}: relative difference "
                  f"{cmp.rel_norm:.2e} between two runs; none under PyTorch's deterministic algorithms): a library's "
                  "summation order, not a random draw; judged against the float64 reference as always")
