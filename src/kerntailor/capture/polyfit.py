"""A size as a polynomial of input dims, where no single monomial fits (generalize._fit's last resort).

The offset of a last-step slice is a sum of monomials: `out[:, -1, :]` on a (B, S, 2H) LSTM output starts at
(S - 1) · 2H = 2·S·H - 2·H, which no `coeff · Π dim^exp + offset` gives across variants where S and H both vary.
Here a size is fitted as Σ c_i · m_i (+ c_0) over monomials m_i (products of up to three varying dims, positive
integer exponents) with integer coefficients c_i: offsets, strides and shapes of views are such sums.

Honesty: with k unknown coefficients the fit takes a set of k columns only where the variants determine them
(the k columns are independent over the variants) and at least one variant is left over to refute them (more
distinct variants than unknowns, so that a wrong set of monomials fails somewhere): three variants fit two
unknowns (2·S·H - 2·H), four fit three. Integer coefficients are a second check: a wrong set of monomials solves
to fractions almost always. Fewest unknowns first, and at that number the fit must be the only one: where two
sets of monomials fit every variant exactly (tiny variants: S²·H and B·S·H - S·H + H² agree on four of them), the
variants cannot tell which holds at another size, and the fit refuses. Monomials that are multiples of one another
over the variants (H, and a weight's 4·H rows) count once: they are the same column.

The candidate sets are solved together in numpy (floats, a filter) and only the survivors are solved exactly
in Fractions: 5 dims give 55 monomials, 1540 pairs and 26k triples, milliseconds.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from kerntailor.capture.generalize import Dim, SizeExpr, row_reduce

MAX_DEGREE = 3        # S·H·W: the offset of x[-1] on a (B, S, H) tensor is B·S·H - S·H
MAX_UNKNOWNS = 3
MAX_SETS = 500_000    # candidate sets tried (in chunks): with more (many dims) the degree drops


def fit_polynomial(values: list[int], dims: list[Dim], columns: dict[Dim, list[int]]) -> SizeExpr | None:
    """The one Σ c_i · m_i (+ c_0) with integer c_i and the fewest terms that gives `values` (one per variant;
    `columns`: each dim's size in those variants) exactly, with more distinct variants than unknowns; None if
    none does or several do."""
    n = len(values)
    if n < 3 or not all(isinstance(v, int) for v in values):
        return None
    for degree in range(MAX_DEGREE, 0, -1):
        monomials = _monomials(dims, degree)
        if _count_sets(len(monomials) + 1, min(MAX_UNKNOWNS, n - 1)) <= MAX_SETS:
            break
    else:
        return None
    table, monomials = _distinct_columns([[1] * n] + [[_value(m, columns, i) for i in range(n)] for m in monomials],
                                         [()] + monomials)   # column 0: the constant
    for k in range(2, min(MAX_UNKNOWNS, n - 1) + 1):
        found = _fit_k(values, table, monomials, k)
        if found is not None:
            return found or None   # (): more than one fits, the variants cannot tell which
    return None


def _distinct_columns(table: list[list[int]], monomials: list[tuple]) -> tuple[list[list[int]], list[tuple]]:
    """One column of each family of multiples of one another over the variants: W's 4·H rows and H (or a dim that
    equals another's product) give the same sums over the variants, told apart by nothing. The smallest member is
    kept (H rather than 4·H: the coefficients of the others' sums are integer multiples of it), in the place of
    the family's first."""
    first: dict[tuple, int] = {}
    kept_table: list[list[int]] = []
    kept: list[tuple] = []
    for col, m in zip(table, monomials):
        g = math.gcd(*col)
        key = tuple(v // g for v in col) if g else tuple(col)
        if key[next((i for i, v in enumerate(key) if v), 0)] < 0:
            key = tuple(-v for v in key)
        if key not in first:
            first[key] = len(kept)
            kept_table.append(col)
            kept.append(m)
        elif sum(map(abs, col)) < sum(map(abs, kept_table[first[key]])):
            kept_table[first[key]], kept[first[key]] = col, m
    return kept_table, kept


def _monomials(dims: list[Dim], degree: int) -> list[tuple[Dim, ...]]:
    """Multisets of dims of 1..degree elements, by degree, then by the dims' order."""
    return [combo for d in range(1, degree + 1) for combo in itertools.combinations_with_replacement(dims, d)]


def _count_sets(columns: int, k: int) -> int:
    return sum(math.comb(columns, j) for j in range(2, k + 1))


def _value(monomial: tuple[Dim, ...], columns: dict[Dim, list[int]], i: int) -> int:
    v = 1
    for d in monomial:
        v *= columns[d][i]
    return v


def _fit_k(values: list[int], table: list[list[int]], monomials: list[tuple], k: int) -> SizeExpr | tuple | None:
    """The one set of k columns (the constant among them or not) that fits `values` with integer coefficients;
    () when several do, None when none does."""
    n = len(values)
    candidates = [c for chunk in chunks(itertools.combinations(range(len(table)), k))
                  for c in _float_filter(values, table, chunk)]
    degree = [len(m) for m in monomials]
    fits = []
    for chosen in sorted(candidates, key=lambda c: (sum(degree[j] for j in c), c)):
        exact = _solve_exact([[table[j][i] for j in chosen] for i in range(n)], values)
        if exact is None or any(q.denominator != 1 or q == 0 for q in exact):
            continue
        if len({tuple(table[j][i] for j in chosen) for i in range(n)}) <= k:
            continue   # no variant left over to refute the fit
        fits.append(_expr([(q, monomials[j]) for q, j in zip(exact, chosen)]))
    if len(fits) > 1:
        return ()
    return fits[0] if fits else None


def chunks(sets, size: int = 100_000):
    """`sets` (an iterator of index tuples) as int64 arrays of at most `size` rows."""
    while chunk := list(itertools.islice(sets, size)):
        yield np.array(chunk, dtype=np.int64)


def _float_filter(values: list[int], table: list[list[int]], sets: np.ndarray) -> list[tuple[int, ...]]:
    """The sets (rows of column indices) whose least-squares fit in floats matches every value with nonzero,
    near-integer coefficients: a cheap superset of the exact fits."""
    k = sets.shape[1]
    cols = np.array(table, dtype=np.float64)                              # (C, n)
    scale = np.abs(cols).max(axis=1)
    scale[scale == 0] = 1
    a = (cols / scale[:, None])[sets].transpose(0, 2, 1)                   # (N, n, k), each column's max 1
    v = np.array(values, dtype=np.float64)
    q, r = np.linalg.qr(a)                         # least squares by QR: the normal equations square the condition
    independent = np.all(np.abs(np.diagonal(r, axis1=1, axis2=2)) > 1e-9, axis=1)
    r[~independent] = np.eye(k)
    x = np.linalg.solve(r, q.transpose(0, 2, 1) @ v[:, None])              # (N, k, 1)
    fits = np.all(np.abs((a @ x)[..., 0] - v) <= 1e-6 * (1 + np.abs(v)), axis=1)
    coeffs = x[..., 0] / scale[sets]
    whole = np.all(np.abs(coeffs - np.round(coeffs)) <= 1e-6 * (1 + np.abs(coeffs)), axis=1)
    nonzero = np.all(np.abs(coeffs) > 0.5, axis=1)
    return [tuple(int(j) for j in sets[c]) for c in np.nonzero(independent & fits & whole & nonzero)[0]]


def _solve_exact(rows: list[list[int]], values: list[int]) -> list[Fraction] | None:
    """The unique x with rows · x == values exactly (Gaussian elimination in Fractions), or None when the columns
    are dependent or the system is inconsistent."""
    k = len(rows[0])
    m, pivots = row_reduce([[Fraction(a) for a in row] + [Fraction(v)] for row, v in zip(rows, values)], k)
    if len(pivots) < k or any(row[-1] != 0 for row in m[k:]):
        return None
    return [m[i][-1] for i in range(k)]


def _expr(terms: list[tuple[Fraction, tuple]]) -> SizeExpr:
    """The SizeExpr of Σ q · monomial (the empty monomial: the constant): the highest-degree term with a
    positive coefficient first, the constant last."""
    offset = sum((q for q, m in terms if not m), Fraction(0))
    parts = [(q, tuple((d, Fraction(e)) for d, e in _powers(m))) for q, m in terms if m]
    parts.sort(key=lambda t: (t[0] < 0, -sum(e for _, e in t[1])))
    (coeff, factors), *more = parts
    return SizeExpr(coeff, factors, offset, tuple(more))


def _powers(monomial: tuple[Dim, ...]) -> list[tuple[Dim, int]]:
    """(S, H, H) -> [(S, 1), (H, 2)], in order of first appearance."""
    counts: dict[Dim, int] = {}
    for d in monomial:
        counts[d] = counts.get(d, 0) + 1
    return list(counts.items())
