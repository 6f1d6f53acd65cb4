"""Shape generalization: from concrete captures of several variants to sizes as functions of input dims.

A generated kernel must work for every shape the referee throws at it, not just the traced one. We
capture the problem at each of its variants (default, small, odd), check that the graphs have the same
structure, and fit every integer or float that differs between them (a size, a stride, an offset, the
N of a mean, 1/sqrt(d) of attention) as `coeff · Π dim^exp + offset` over the graph inputs' dims:

    x: (B, N) in three variants -> mean's divisor N is `x.shape[1]`, a stride of a transposed weight
    (K, N) is `w.shape[1]`, var's N-1 is `x.shape[1] - 1`.

A fit is only as good as the variants it was checked on. A stride of an axis that has size 1 in some variant is
fitted over the others only (there it is arbitrary); a dim those others never vary (kv_heads 2 wherever the batch
was not 1) cannot be told from a constant: `2 * L * D` fits as well as `kv_heads * L * D`, and at another kv_heads
the first reads with the wrong stride. Such a stride is fitted over every variant where some expression fits them
all; where none does, the fit records what it could not see (Pinned: every product of dims those variants keep
equal: kv_heads == 2, H == W) and the kernel's host code checks it at run time (codegen/guards.py), as it checks
dims that never varied at all.

Some sizes are no monomial of input dims but follow from them by an op's own rule: a conv's or a pool's output
size (its window's formula), a concatenation's size along its axis (the sum of its operands': a KV cache's
past_len + 1). Each is a derived dim of its own (`Dim(-1, axis, node)`), fitted like an input dim, so that what
depends on it (strides, the sizes of the kernels after it) is a monomial in it; codegen computes it on the host.

Where no such term fits, with or without the probe variant, a size may be a sum of them (capture/polyfit.py):
the start of a last-step slice `x[:, -1]` of a (B, S, H) tensor is S·H - H. A SizeExpr keeps the further terms
in `more`; codegen sees such a size as no monomial (codegen/sizes.py canon) and passes it as a size argument.

Why not torch.export's dynamic shapes: module attributes (LayerNorm's normalized_shape, num_heads)
specialize dims to the traced constant, and then the kernel would be wrong for another instance.
Fitting over variants sees what really changes with the problem's size constants.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Any

from kerntailor.errors import CaptureError
from kerntailor.ir.expr import Const, Index, Load, Op
from kerntailor.ir.nodes import Graph, Node

Path = tuple[Any, ...]


class StructureChanged(CaptureError):
    """The variants' graphs differ in more than sizes."""


@dataclass(frozen=True)
class Dim:
    """Axis `axis` of graph input number `input` (in Graph.inputs order), or of node `node`'s output (input -1):
    conv and pool output sizes, which the kernel's host computes from its input by the op's formula, and a
    concatenation's size along its axis, the sum of its operands' sizes there. `end` k > 0 names a concatenation's
    inner boundary instead: where its operand k - 1 ends (the sum of the first k operands' sizes)."""

    input: int
    axis: int
    node: str = ""
    end: int = 0
    root: Fraction = Fraction(0)   # > 0: the exact integer square root of (this dim with root 0) x root (root_dims)

    @property
    def base(self) -> Dim:
        """The dim a root dim is the square root of (itself for any other dim)."""
        return replace(self, root=Fraction(0)) if self.root else self


Monomial = tuple[tuple[Dim, Fraction], ...]


@dataclass(frozen=True)
class SizeExpr:
    """coeff · Π dim^exp + offset; a plain constant when `factors` is empty. `more` holds further terms
    (coeff, factors) of a polynomial (capture/polyfit.py): the offset of `x[:, -1]` on a (B, S, H) tensor is
    S·H - H. Code that needs a monomial (canon in codegen/sizes.py) sees a polynomial as none."""

    coeff: Fraction | float
    factors: Monomial = ()
    offset: Fraction = Fraction(0)
    more: tuple[tuple[Fraction, Monomial], ...] = ()

    @property
    def is_constant(self) -> bool:
        return not self.factors and not self.more

    @property
    def dims(self) -> tuple[Dim, ...]:
        """Every dim a term uses, once each, in order of first use."""
        return tuple(dict.fromkeys(d for _, factors in ((self.coeff, self.factors),) + self.more
                                   for d, _ in factors))

    def evaluate(self, sizes: dict[Dim, int]) -> int | float:
        value: Any = self.offset
        for coeff, factors in ((self.coeff, self.factors),) + self.more:
            term: Any = coeff
            for dim, exp in factors:
                term = term * (sizes[dim] ** exp if exp.denominator == 1 else math.pow(sizes[dim], float(exp)))
            value = term + value
        if isinstance(value, Fraction):
            return int(value) if value.denominator == 1 else float(value)
        return value

    def render(self, names: dict[Dim, str]) -> str:
        """A Python expression over the names of the dims (ints stay ints: `//` where exact)."""
        if self.is_constant:
            return _literal(self.coeff + self.offset)
        text = _render_monomial(self.coeff, self.factors, names)
        for coeff, factors in self.more:   # integer coefficients and exponents (polyfit.py): ints stay ints
            text += f" {'+' if coeff > 0 else '-'} {_render_monomial(abs(coeff), factors, names)}"
        if self.offset:
            text = f"{text} {'+' if self.offset > 0 else '-'} {_literal(abs(self.offset))}"
        return text


def _render_monomial(coeff: Fraction | float, factors: Monomial, names: dict[Dim, str]) -> str:
    num = [names[d] if e == 1 else f"{names[d]} ** {e}" for d, e in factors if e > 0 and e.denominator == 1]
    den = [names[d] if e == -1 else f"{names[d]} ** {-e}" for d, e in factors if e < 0 and e.denominator == 1]
    roots = [f"{names[d]} ** {float(e)}" for d, e in factors if e.denominator != 1]
    if not roots and isinstance(coeff, Fraction):  # an integer: exact floor division
        top = ([] if coeff.numerator == 1 else [str(coeff.numerator)]) + num
        bottom = ([] if coeff.denominator == 1 else [str(coeff.denominator)]) + den
        text = " * ".join(top) or "1"
        if bottom:
            text = (f"({text}) // ({' * '.join(bottom)})" if len(top) > 1 or len(bottom) > 1
                    else f"{text} // {bottom[0]}")
    else:
        parts = ([] if coeff == 1 else [_literal(coeff)]) + num + roots
        text = " * ".join(parts) or "1"
        if den:
            text = f"({text}) / ({' * '.join(den)})"
    return text


def _literal(value: Fraction | float) -> str:
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else repr(float(value))
    return repr(float(value))


@dataclass(frozen=True)
class Pinned:
    """What a slot's fit (`path`) could not see: in every variant it was fitted over, Π dim^exp over `factors`
    was `value` (kv_heads == 2; H == W; N == 2 * B), so an expression with that product and one without it fitted
    alike. The expression holds where the same is true at run time, or where `unless` (the size of the axis whose
    stride the slot is) is 1: the stride of a size-1 axis is never used. codegen/guards.py checks it."""

    path: Path
    factors: tuple[tuple[Dim, int], ...]
    value: Fraction
    unless: SizeExpr


@dataclass(frozen=True)
class Generalized:
    """The default variant's graph plus a size expression for every slot that varies."""

    graph: Graph
    exprs: tuple[tuple[Path, SizeExpr], ...]
    dims: tuple[Dim, ...]                         # the dims the expressions and the pins use
    equal_dims: tuple[tuple[Dim, Dim], ...]       # dims that were equal in every variant: assert at run time
    pins: tuple[Pinned, ...] = ()                 # what the fits over part of the variants assume: assert too

    def expr(self, path: Path, default: int | float) -> SizeExpr:
        e = self._by_path.get(path)
        return e if e is not None else SizeExpr(Fraction(default) if isinstance(default, int) else default)

    @functools.cached_property
    def _by_path(self) -> dict[Path, SizeExpr]:
        """`exprs` by path (the first of a path wins, as a scan would find it). codegen asks for a slot's expression
        at every size it renders: a scan of `exprs` per ask made writing a module quadratic in the graph's size
        (15_DenseNet121: 14.5k slots; 280 of the 410 s of its capture, plan and first 3 searches were the scan)."""
        by_path: dict[Path, SizeExpr] = {}
        for p, e in self.exprs:
            by_path.setdefault(p, e)
        return by_path

    def sizes_at(self, graph: Graph) -> dict[Dim, int]:
        """Every dim's value in `graph` (the same problem at other sizes), the root dims' where they have one."""
        sizes = {d: values[0] for d, values in _dim_values([graph]).items()}
        for d in self.dims:
            if d.root and d.base in sizes:
                with contextlib.suppress(CaptureError):
                    sizes[d] = root_values(d, (sizes[d.base],))[0]
        return sizes

    def wrong_at(self, graph: Graph) -> list[str]:
        """The fitted expressions that do not give `graph`'s sizes (the same problem captured at other sizes, its
        rows flattened as these were: capture/product_rows.common_rows), as 'path: fitted X, real Y'; the stride
        of a size-1 axis is never used and not judged. A root dim (ViT's patch side) is the exact root of its base
        dim there; where it has none the expressions that use it cannot be evaluated, and say so."""
        sizes = self.sizes_at(graph)
        actual = dict(graph_slots(graph))
        wrong = []
        for p, expr in self.exprs:
            where = "/".join(map(str, p))
            if "strides" in p and actual.get(tuple("shape" if part == "strides" else part for part in p)) == 1:
                continue
            try:
                predicted = expr.evaluate(sizes)
            except (KeyError, ZeroDivisionError, ValueError) as e:
                wrong.append(f"{where}: cannot evaluate ({type(e).__name__})")
                continue
            real = actual.get(p)
            if isinstance(predicted, float) or isinstance(real, float):   # a softmax scale: equal up to rounding
                same = real is not None and math.isclose(float(predicted), float(real), rel_tol=1e-12, abs_tol=0.0)
            else:
                same = predicted == real
            if not same:
                wrong.append(f"{where}: fitted {predicted}, real {real}")
        return wrong

    @functools.cached_property
    def traced_dims(self) -> dict[Dim, int]:
        """Every input dim, conv or pool output dim and concatenation boundary at the traced (default) shapes."""
        return {d: values[0] for d, values in _dim_values([self.graph]).items()}


# --- walking the slots of a graph ---------------------------------------------------------------------

def _view_slots(prefix: Path, view) -> Iterator[tuple[Path, Any]]:
    yield prefix + ("base",), view.base
    for i, s in enumerate(view.shape):
        yield prefix + ("shape", i), s
    for i, s in enumerate(view.strides):
        yield prefix + ("strides", i), s
    yield prefix + ("offset",), view.offset


def _expr_slots(prefix: Path, expr) -> Iterator[tuple[Path, Any]]:
    counter = itertools.count()

    def walk(e) -> Iterator[tuple[Path, Any]]:
        i = next(counter)
        if isinstance(e, Const):
            yield prefix + ("const", i), e.value
        elif isinstance(e, Index):
            yield prefix + ("axis", i), e.axis
            yield prefix + ("start", i), e.start
            yield prefix + ("step", i), e.step
        elif isinstance(e, Load):
            yield prefix + ("load", i), e.operand
            if e.gather is not None:
                yield prefix + ("gather", i), e.gather[0]
                yield from walk(e.gather[1])
            if e.valid is not None:
                yield from walk(e.valid)
        elif isinstance(e, Op):
            yield prefix + ("op", i), e.op
            for a in e.args:
                yield from walk(a)

    yield from walk(expr)


def _node_slots(node: Node) -> Iterator[tuple[Path, Any]]:
    prefix: Path = ("node", node.name)
    yield prefix + ("family",), node.family
    yield prefix + ("dtype",), node.out.dtype
    for i, s in enumerate(node.out.shape):
        yield prefix + ("out", i), s
    for j, view in enumerate(node.operands):
        yield from _view_slots(prefix + ("operand", j), view)
    for f in fields(node):
        if f.name in ("name", "operands", "out", "origin"):
            continue
        value = getattr(node, f.name)
        if f.name == "expr":
            yield from _expr_slots(prefix, value)
        elif isinstance(value, tuple):
            for i, v in enumerate(value):
                yield prefix + (f.name, i), v
        else:
            yield prefix + (f.name,), value


def graph_slots(graph: Graph) -> Iterator[tuple[Path, Any]]:
    for i, inp in enumerate(graph.inputs):
        yield ("input", i, "kind"), (inp.name, inp.kind, inp.target)
        for k, s in enumerate(inp.type.shape):
            yield ("input", i, "shape", k), s
    for node in graph.nodes:
        yield from _node_slots(node)
    for i, view in enumerate(graph.outputs):
        yield from _view_slots(("output", i), view)


# --- fitting ------------------------------------------------------------------------------------------

_STRUCTURAL = ("base", "kind", "family", "dtype", "load", "op", "axes", "axis")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def generalize(graphs: list[Graph], name: str, polynomials: bool = False, roots: tuple[Dim, ...] = ()) -> Generalized:
    """Fit the varying slots of `graphs` (graphs[0] is the default variant) over input dims; with `polynomials`,
    a slot no monomial fits may be a sum of them (polyfit.py). A slot nothing fits may be a dim's exact integer
    square root (root_dims): the fit starts again with those roots among the dims."""
    slot_lists = [list(graph_slots(g)) for g in graphs]
    paths = [p for p, _ in slot_lists[0]]
    index = {p: k for k, p in enumerate(paths)}
    for other in slot_lists[1:]:
        if [p for p, _ in other] != paths:
            raise StructureChanged(f"{name}: the graph's structure changes between variants; "
                               "kerntailor needs one structure for all input sizes")
    dim_values = _dim_values(graphs)
    equal = _equal_dims(dim_values)
    dims = _varying_dims(graphs, dim_values) + list(roots)
    dim_values.update({r: root_values(r, dim_values[r.base]) for r in roots})
    node_index = {n.name: i for i, n in enumerate(graphs[0].nodes)}
    fit = _Fitter(dims, dim_values, polynomials, {n.name: node_index[n.name] for n in graphs[0].nodes
                                                  if n.family in DERIVED_FAMILIES})
    exprs: list[tuple[Path, SizeExpr]] = []
    partial: list[tuple[Path, Path, list[bool]]] = []   # (stride slot, its axis's size slot, the variants fitted)
    derived = {("node", n.name, "out") for n in graphs[0].nodes if n.family in DERIVED_FAMILIES}
    for k, path in enumerate(paths):
        values = [slots[k][1] for slots in slot_lists]
        if all(v == values[0] or (v != v and values[0] != values[0]) for v in values):
            continue  # the same in every variant (NaN included)
        if path[:3] in derived:
            continue  # a conv/pool output size: computed by the op's formula at run time
        mask = [True] * len(values)
        if "strides" in path:
            # the stride of a size-1 axis is arbitrary: that variant does not constrain it
            shape_path = tuple("shape" if part == "strides" else part for part in path)
            mask = [slots[index[shape_path]][1] != 1 for slots in slot_lists]
        if any(part in _STRUCTURAL for part in path if isinstance(part, str)) or not all(map(_is_number, values)):
            raise CaptureError(f"{name}: {'/'.join(map(str, path))} changes between variants ({values}); "
                               "kerntailor needs one structure for all input sizes")
        if not any(mask):
            continue  # a size-1 axis in every variant: its stride is never used
        position = _made_at(path, graphs[0], node_index)
        fitted = fit(values, mask, position)
        if fitted is None:
            found = [r for r in root_dims(values, dims, dim_values) if r not in roots]
            # else a later slot's root may be what fits this one: ViT's patches a side, I/p, come before the
            # unfolded patch's own width p = (3p^2 / 3)^(1/2) in slot order
            found = found or _later_roots(paths[k + 1:], [[v for _, v in slots[k + 1:]] for slots in slot_lists],
                                          dims, dim_values, roots)
            if found:
                return generalize(graphs, name, polynomials, roots + tuple(found))
            raise CaptureError(f"{name}: cannot express {'/'.join(map(str, path))} = {values} across variants "
                               "as a function of input sizes")
        if not all(mask) and fitted.coeff != 0 and fit.relations(mask):   # (0: a broadcast axis)
            # fitted over part of the variants, blind to some dim there: over all of them if anything fits (the
            # size-1 axes' strides are usually the contiguous ones), else what it could not see is checked
            whole = fit(values, [True] * len(values), position)
            if whole is not None:
                fitted = whole
            else:
                partial.append((path, shape_path, mask))
        exprs.append((path, fitted))
    gen = Generalized(graphs[0], tuple(exprs), (), equal)
    pins = tuple(_pins(gen, partial, fit, graphs[0]))
    used = {d for _, e in exprs for d in e.dims}
    used |= {d.base for d in used}   # a root's host line reads its base dim
    pinned = {d for p in pins for d, _ in p.factors} - used
    # dims only the pins use come last: the names (d0, d1, ...) of the others stay as they were
    return Generalized(graphs[0], tuple(exprs), tuple(d for d in dims if d in used) +
                       tuple(d for d in dims if d in pinned), gen.equal_dims, pins)


def _relations(mask: list[bool], dims: list[Dim],
               dim_values: dict[Dim, tuple[int, ...]]) -> list[tuple[tuple[Dim, int], ...]]:
    """What a fit over the variants in `mask` cannot tell apart: a basis of the products Π dim^f (integer f) that
    are the same in every one of those variants (a dim that does not vary there, two dims equal there, one twice
    another). Times any of them a monomial fits those variants as well; strides are monomials of the sizes. Found
    exactly from the sizes' prime factors (the logs of primes are independent): f is in the integer null space of
    each variant's exponents less the first's."""
    kept = [k for k, m in enumerate(mask) if m]
    cols = [d for d in dims if all(dim_values[d][k] > 0 for k in kept)]
    exps = {d: [_prime_exponents(dim_values[d][k]) for k in kept] for d in cols}
    primes = sorted({p for d in cols for e in exps[d] for p in e})
    rows = [[Fraction(exps[d][k].get(p, 0) - exps[d][0].get(p, 0)) for d in cols]
            for k in range(1, len(kept)) for p in primes]
    return [tuple((cols[j], f) for j, f in enumerate(v) if f) for v in _null_space(rows, len(cols))]


def _prime_exponents(n: int) -> dict[int, int]:
    out: dict[int, int] = {}
    p = 2
    while p * p <= n:
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1
    if n > 1:
        out[n] = out.get(n, 0) + 1
    return out


def row_reduce(rows: list[list[Fraction]], n: int) -> tuple[list[list[Fraction]], list[int]]:
    """(the reduced row echelon form of `rows` over their first `n` columns, its pivot columns): Gauss-Jordan in
    Fractions, exact; columns past `n` (an augmented right-hand side) are carried along, never pivots."""
    rows = [r[:] for r in rows]
    pivots: list[int] = []
    for col in range(n):
        r = next((i for i in range(len(pivots), len(rows)) if rows[i][col] != 0), None)
        if r is None:
            continue
        i = len(pivots)
        rows[i], rows[r] = rows[r], rows[i]
        rows[i] = [x / rows[i][col] for x in rows[i]]
        for j in range(len(rows)):
            if j != i and rows[j][col] != 0:
                rows[j] = [a - rows[j][col] * b for a, b in zip(rows[j], rows[i])]
        pivots.append(col)
    return rows, pivots


def _null_space(rows: list[list[Fraction]], n: int) -> list[list[int]]:
    """An integer basis of {f : rows · f = 0} (reduced row echelon form: a free column's vector expresses that
    column by the pivot columns before it)."""
    rows, pivots = row_reduce(rows, n)
    basis = []
    for free in (c for c in range(n) if c not in pivots):
        v = [Fraction(0)] * n
        v[free] = Fraction(1)
        for i, col in enumerate(pivots):
            v[col] = -rows[i][free]
        scale = math.lcm(*(x.denominator for x in v))
        ints = [int(x * scale) for x in v]
        g = math.gcd(*ints)
        basis.append([x // g for x in ints])
    return basis


def _pins(gen: Generalized, partial: list[tuple[Path, Path, list[bool]]], fit: _Fitter,
          default: Graph) -> Iterator[Pinned]:
    values = dict(graph_slots(default)) if partial else {}
    for path, shape_path, mask in partial:
        unless = gen.expr(shape_path, values[shape_path])
        k = mask.index(True)
        for factors in fit.relations(mask):
            value = Fraction(1)
            for d, f in factors:
                value *= Fraction(fit.dim_values[d][k]) ** f
            yield Pinned(path, factors, value, unless)


DERIVED_FAMILIES = ("conv", "pool")


def _dim_values(graphs: list[Graph]) -> dict[Dim, tuple[int, ...]]:
    out = {}
    for i, inp in enumerate(graphs[0].inputs):
        for axis in range(len(inp.type.shape)):
            out[Dim(i, axis)] = tuple(g.inputs[i].type.shape[axis] for g in graphs)
    for j, node in enumerate(graphs[0].nodes):
        if node.family in DERIVED_FAMILIES:
            for axis in range(len(node.out.shape)):
                out[Dim(-1, axis, node.name)] = tuple(g.nodes[j].out.shape[axis] for g in graphs)
        out.update(concat_dims([g.nodes[j] for g in graphs]))
    return out


def concat_dims(nodes: list[Node]) -> dict[Dim, tuple[int, ...]]:
    """One concatenation's sizes that are sums of its operands' (the same node in each variant): its output size
    along its axis and its inner boundaries (`Dim.end`), each a dim of its own, so that its bounds, the strides
    of whatever reads it and the sizes of the kernels after it are monomials in them. The host computes them
    (codegen/concat.py). Where a sum is a monomial of input dims in every variant, `_varying_dims` keeps the
    input dims instead."""
    sizes = getattr(nodes[0], "cat_sizes", ())
    if not sizes:
        return {}
    axis, name = nodes[0].cat_axis, nodes[0].name
    out = {Dim(-1, axis, name, k): tuple(sum(n.cat_sizes[:k]) for n in nodes) for k in range(2, len(sizes))}
    out[Dim(-1, axis, name)] = tuple(n.out.shape[axis] for n in nodes)
    return out


def root_dims(values: list, dims: list[Dim], dim_values: dict[Dim, tuple[int, ...]]) -> list[Dim]:
    """Dims whose every variant's value is the exact integer square root of a dim's times one rational r, where
    `values` (a slot nothing else fits, positive integers that vary) are those roots: KernelBench's ViT states its
    patch size p only as a weight's width 3p^2 (the patch embedding's input) and (I/p)^2 + 1 (its positional
    embedding), while its unfolded patches are p wide. Fitting p itself as (3p^2 / 3)^(1/2) needs no float: the host
    computes it exactly, and checks it is (codegen/emit.py)."""
    if not all(_is_number(v) and isinstance(v, int) and v > 0 for v in values) or len(set(values)) < 2:
        return []
    found = []
    for d in dims:
        if d.root or not all(x > 0 for x in dim_values[d]):
            continue
        ratios = {Fraction(v * v, x) for v, x in zip(values, dim_values[d])}
        if len(ratios) == 1:
            found.append(replace(d, root=ratios.pop()))
    return found


def _later_roots(paths: list[Path], values: list[list], dims: list[Dim], dim_values: dict[Dim, tuple[int, ...]],
                 roots: tuple[Dim, ...]) -> list[Dim]:
    """The root dims (root_dims) of the first of these slots that has one new; [] if none has. `values` holds each
    variant's values of the slots, in `paths` order."""
    for k, path in enumerate(paths):
        if any(part in _STRUCTURAL for part in path if isinstance(part, str)) or "strides" in path:
            continue
        found = [r for r in root_dims([v[k] for v in values], dims, dim_values) if r not in roots]
        if found:
            return found
    return []


def root_values(root: Dim, base: tuple[int, ...]) -> tuple[int, ...]:
    """A root dim's value in each variant, from its base dim's (exact by root_dims' construction)."""
    out = []
    for x in base:
        square = x * root.root
        r = math.isqrt(int(square))
        if square.denominator != 1 or r * r != square:
            raise CaptureError(f"no integer square root of {x} x {root.root}")
        out.append(r)
    return tuple(out)


def _varying_dims(graphs: list[Graph], dim_values: dict[Dim, tuple[int, ...]]) -> list[Dim]:
    """One representative dim per distinct varying value vector (user inputs first)."""
    seen: dict[tuple[int, ...], Dim] = {}
    def rank(dim: Dim) -> tuple:
        if dim.node:
            return (2, 0, dim.axis, dim.end)
        return (int(graphs[0].inputs[dim.input].kind != "input"), dim.input, dim.axis)

    order = sorted(dim_values.items(), key=lambda kv: rank(kv[0]))
    for dim, values in order:
        if len(set(values)) > 1 and values not in seen:
            seen[values] = dim
    return list(seen.values())


def _equal_dims(dim_values: dict[Dim, tuple[int, ...]]) -> tuple[tuple[Dim, Dim], ...]:
    reps: dict[tuple[int, ...], Dim] = {}
    pairs = []
    for dim, values in dim_values.items():
        if len(set(values)) == 1 or dim.node:
            continue
        if values in reps:
            pairs.append((reps[values], dim))
        else:
            reps[values] = dim
    return tuple(pairs)


_EXPONENTS = (Fraction(1), Fraction(-1), Fraction(2), Fraction(3), Fraction(1, 2), Fraction(-1, 2))


class _Fitter:
    """_fit and _relations over one set of variants, each computed once per distinct question.

    The dims' values are read from the graphs once (reading them per slot walked every node per slot: ResNet-101's
    8816 varying slots times 1490 nodes, 49 of its 60 s of fitting), and a deep model asks the same question for
    many slots (every activation of a stage has the same sizes), so an answer is kept by the values' reprs (2 and
    2.0, 0.0 and -0.0 fit differently), the mask and where the slot is made (the order of the dims it tries:
    `ops` maps the convolutions and pools to their places in the graph, _nearest_first)."""

    def __init__(self, dims: list[Dim], dim_values: dict[Dim, tuple[int, ...]], polynomials: bool = False,
                 ops: dict[str, int] | None = None):
        self.dims = dims
        self.dim_values = dim_values
        self.polynomials = polynomials
        self.ops = ops or {}
        self._fits: dict[tuple, SizeExpr | None] = {}
        self._relations: dict[tuple[bool, ...], list[tuple[tuple[Dim, int], ...]]] = {}
        self._orders: dict[int | None, list[Dim]] = {}
        self._made = [self.ops[d.node] for d in _made_by_ops(dims, self.ops)]

    def __call__(self, values: list, mask: list[bool], position: int | None = None) -> SizeExpr | None:
        """The fit of one slot; `position` (_made_at) orders the dims nearest first (_nearest_first)."""
        cut = None if position is None else sum(i <= position for i in self._made)   # the order depends on it alone
        key = (tuple(map(repr, values)), tuple(mask), cut)
        if key not in self._fits:
            if cut not in self._orders:
                self._orders[cut] = self.dims if position is None else _nearest_first(self.dims, position, self.ops)
            self._fits[key] = _fit(values, mask, self._orders[cut], self.dim_values, self.polynomials)
        return self._fits[key]

    def relations(self, mask: list[bool]) -> list[tuple[tuple[Dim, int], ...]]:
        key = tuple(mask)
        if key not in self._relations:
            self._relations[key] = _relations(mask, self.dims, self.dim_values)
        return self._relations[key]


def _made_at(path: Path, graph: Graph, node_index: dict[str, int]) -> int:
    """Where the data a slot describes is made: the node whose output a view (an operand's, a graph output's)
    reads, else the slot's own node; -1 for a graph input. An operand that reads a graph input (a parameter
    broadcast over the node's space: BatchNorm's weight over N, C, H, W) takes its sizes from the node reading it."""
    if path[0] == "output":
        return node_index.get(graph.outputs[path[1]].base, -1)
    if path[0] != "node":
        return -1
    if path[2] == "operand":
        return node_index.get(graph.nodes[node_index[path[1]]].operands[path[3]].base, node_index[path[1]])
    return node_index[path[1]]


def _nearest_first(dims: list[Dim], position: int, ops: dict[str, int]) -> list[Dim]:
    """The dims in the order a slot made at node `position` (_made_at) tries them: input dims; then the output
    sizes of the convolutions and pools made at or before it, the nearest first, since its sizes are computed from
    those; then the rest as they were (a concatenation's sizes, later convolutions' and pools'). Over variants
    whose maps are even, half the pool before fits a pool's output as well as the pool's own size does
    (DenseNet's transitions: H // 2 where floor(H / 2) is meant; a stride 2·H0·W0 for 8·H1·W1), but only the
    nearest is exact on an odd map (benchmarks/fit_holdout.py)."""
    made = _made_by_ops(dims, ops)
    before = sorted((d for d in made if ops[d.node] <= position), key=lambda d: -ops[d.node])
    inputs = [d for d in dims if not d.node and not d.root]
    return inputs + before + [d for d in dims if d not in inputs and d not in before]


def _made_by_ops(dims: list[Dim], ops: dict[str, int]) -> list[Dim]:
    """The dims that are output sizes of the nodes in `ops` (the convolutions and pools: the host computes them by
    the op's formula)."""
    return [d for d in dims if d.node in ops and not d.end and not d.root]


def _fit(values: list, mask: list[bool], dims: list[Dim], dim_values: dict[Dim, tuple[int, ...]],
         polynomials: bool = False) -> SizeExpr | None:
    """The simplest coeff · Π dim^exp + offset that gives `values` in every variant where mask is set (or, with
    `polynomials`, a sum of such terms)."""
    if sum(mask) < 2:
        return None
    values = [v for v, m in zip(values, mask) if m]
    floats = any(isinstance(v, float) for v in values)
    kept = [k for k, m in enumerate(mask) if m]
    from kerntailor.capture.monofit import first_monomial

    # the first in the search's order (capture/monofit.py): one dim without an offset, then with one, then more dims
    found = first_monomial(values, [[float(dim_values[d][k]) for k in kept] for d in dims], _EXPONENTS, floats,
                           _check)
    best = None
    if found is not None:
        combo, exps, offset, coeff = found
        best = SizeExpr(coeff, tuple(zip((dims[j] for j in combo), exps)), Fraction(offset))
    if best is None and not floats and len(values) >= 3:
        best = _fit_line(values, kept, dims, dim_values)
        if best is None and polynomials and all(mask):
            # a sum of monomials (a last-step slice's offset, S·H - H), over every variant only: the pins of a
            # partial fit (_pins) say what a monomial could not see, not what a sum of them could not
            from kerntailor.capture.polyfit import fit_polynomial
            best = fit_polynomial(values, dims, {d: list(dim_values[d]) for d in dims})
    return best


def _fit_line(values: list, kept: list[int], dims: list[Dim], dim_values) -> SizeExpr | None:
    """coeff · dim + offset with any integer offset (a padded size: H + 3), from two variants where the dim
    differs and checked on every other: only tried with three or more variants, so a line is not a guess."""
    for d in dims:
        xs = [dim_values[d][k] for k in kept]
        j = next((j for j in range(1, len(xs)) if xs[j] != xs[0]), None)
        if j is None:
            continue
        coeff = Fraction(values[j] - values[0], xs[j] - xs[0])
        offset = values[0] - coeff * xs[0]
        if coeff == 0 or offset.denominator != 1:
            continue
        if all(coeff * x + offset == v for x, v in zip(xs, values)):
            return SizeExpr(coeff, ((d, Fraction(1)),), offset)
    return None


def _check(values: list, monomials: list[float], offset: int, floats: bool) -> Fraction | float | None:
    if monomials[0] == 0:
        return None
    coeff = (values[0] - offset) / monomials[0]
    # a float test first, a thousand times looser than the exact one below, so it never rejects a fit that one
    # takes: most candidates fail here, without building Fractions (a 3-D conv's 145 slots took 100 s of
    # Fraction arithmetic in 3 M candidate checks, 2026-12-01)
    if not all(math.isclose(coeff * m + offset, v, rel_tol=1e-6, abs_tol=1e-9) for v, m in zip(values, monomials)):
        return None
    if not floats:
        coeff = Fraction(coeff).limit_denominator(64)
    for v, m in zip(values, monomials):
        predicted = float(coeff) * m + offset
        if not math.isclose(predicted, v, rel_tol=1e-9, abs_tol=1e-12):
            return None
    if not floats and not all(float(Fraction(coeff) * Fraction(m).limit_denominator(1 << 20) + offset).is_integer()
                              for m in monomials):
        return None
    return coeff
