"""generalize._fit's search for one monomial `coeff · Π dim^exp + offset`, vectorized over the candidates.

The search tries, in a fixed order (stage by stage: one dim without an offset, one with, then two, three and four
dims; within a stage the dims' combinations in order, each exponent tuple, each offset), every candidate, and
takes the first that `check` (generalize._check: a float test, then the exact one) accepts. A deep model asks
that of many dims: DenseNet-201's variants vary 100-odd channel counts, C(100, 3) combinations times 64 exponent
tuples times 5 offsets for a size that needs three factors, and its 428 distinct questions took 560 of 670 s of
its generalization (cProfile, this CPU machine, 2026-12-04) one Python `_check` at a time.

Here numpy runs a looser float test (tolerances ten times `_check`'s, so it never drops a candidate that `_check`
takes) over a chunk of combinations at once, and only the candidates it keeps go to `check`, in the search's own
order, with their monomials computed exactly as the one-at-a-time search computed them: the first accepted is
the one that search returned.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from kerntailor.capture.polyfit import chunks

OFFSETS = (0, -1, 1, -2, 2)
# (factors, offsets): one dim without an offset before one dim with an offset (a conv's output size H - 2 is its
# own derived dim, not an input dim minus 2, which no kernel's sizes can multiply), then more dims
STAGES = ((1, (0,)), (1, OFFSETS), (2, OFFSETS), (3, OFFSETS), (4, OFFSETS))
CANDIDATES = 400_000   # monomials a chunk evaluates at once (combinations x exponent tuples)


def first_monomial(values: list, sizes: list[list[float]], exponents: tuple[Fraction, ...], floats: bool,
                   check: Callable) -> tuple[tuple[int, ...], tuple[Fraction, ...], int, Fraction | float] | None:
    """(dim indices, exponents, offset, coeff) of the first candidate `check(values, monomials, offset, floats)`
    accepts (module docstring), over dims of `sizes` (one list of values per dim, the variants' in order); None if
    none does."""
    target = np.array(values, dtype=np.float64)
    base = np.array(sizes, dtype=np.float64).reshape(len(sizes), len(values))
    for n, offsets in STAGES:
        if n > len(sizes):
            break
        allowed = exponents if n < 4 else exponents[:2]   # 4 factors: plain products and quotients only
        tuples = [e for e in itertools.product(allowed, repeat=n) if floats or all(x.denominator == 1 for x in e)]
        powers = np.array([[float(x) for x in e] for e in tuples])   # (X, n)
        for combos in chunks(itertools.combinations(range(len(sizes)), n), max(1, CANDIDATES // len(tuples))):
            for k, x, o in _kept(combos, powers, base, target, offsets):
                combo = tuple(int(j) for j in combos[k])
                fexps = [float(e) for e in tuples[x]]
                monomials = []
                for i in range(len(values)):   # as the one-at-a-time search multiplied them (bit for bit)
                    m = 1.0
                    for d, e in zip(combo, fexps):
                        m *= sizes[d][i] ** e
                    monomials.append(m)
                coeff = check(values, monomials, offsets[o], floats)
                if coeff is not None:
                    return combo, tuples[x], offsets[o], coeff
    return None


def _kept(combos: np.ndarray, powers: np.ndarray, base: np.ndarray, target: np.ndarray,
          offsets: tuple[int, ...]) -> np.ndarray:
    """(combination, exponent tuple, offset) indices, in that order, of the candidates of a chunk that pass a float
    test ten times looser than generalize._check's."""
    with np.errstate(all="ignore"):
        mono = np.ones((len(combos), len(powers), base.shape[1]))
        for j in range(combos.shape[1]):
            mono = mono * base[combos[:, j]][:, None, :] ** powers[None, :, j, None]
        passed = []
        for offset in offsets:
            coeff = (target[0] - offset) / mono[..., 0]
            predicted = coeff[..., None] * mono + offset
            close = np.abs(predicted - target) <= np.maximum(1e-5 * np.maximum(np.abs(predicted), np.abs(target)),
                                                             1e-8)
            passed.append(np.all(close, axis=-1) & (mono[..., 0] != 0))
    return np.argwhere(np.stack(passed, axis=-1))
