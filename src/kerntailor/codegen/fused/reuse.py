"""The cooperative split's phase-A exponentials kept for phase B (splitrows.py's write_cooperative; issue #18).

Softmax's normalising pass needs E = exp(x − M) per element, M the row's max; phase A, over one tile, has already
computed G = exp(x − m) (0 where x is −inf) for the tile's own max m, to sum it. The cooperative kernel keeps the
tile in registers across the wait, so it can keep G instead of x and write E = G · s with one row value
s = exp(m − M): one multiply per element where it recomputed an exp (benchmarks/longrow_probe.py's P4 does this:
3735 us fp32 and 2433 us bf16 on the H200 against the generator's 4019 and 3421, softmax over 4096 x 393,216,
2026-12-03f; bf16, whose normalising pass was bound by the exp, gains most).

When: an online pair (max M, S = Σ exp(x − c)) whose shift c is M itself, whose exp node E = exp(x − M) is a
full-size value some full-size output reads (softmax's E / S; not log-softmax's x − M − log S, which needs no
exp), read by the sum as itself, of x read as the max reads it. Elsewhere the kernel is as before.

Exact enough, and the same non-finite values: G · s rounds twice where exp(x − M) rounds once (a few ulp in fp32;
bf16's output rounds far coarser). s is exactly 1 where m = M (finite or +inf: then G IS exp(x − M), the same
expression), exp(m − M) otherwise: 0 for a tile of −inf in a row with a larger max (G is 0: 0, as exp(−inf − M)),
NaN for a row all −inf (m = M = −inf: NaN, as exp(−inf + inf)) or a NaN max. M >= m always (M is the max of the
tiles' maxes), so s <= 1 and G · s never overflows.

A schedule knob (ReductionSchedule.REUSE; the search times both): the reuse holds G across the wait where the
recompute holds x, and takes more registers in fp32. Measured on the H200 (softmax over 4096 x 393,216, the
cooperative seed, benchmarks/data/h200_2026-12-03g/): bf16 reuse 3067 us (40 registers) against recompute 3449
(48); fp32 reuse 4210 (48) against recompute 3986 (40), and 3935 with the reuse capped at 40 registers (maxnreg).
Unset, REUSE follows the row's dtype (reuse_by_default): 16-bit floats reuse, others recompute (fp16 as bf16: not
measured).
"""

from __future__ import annotations

from kerntailor.codegen.fused.reductions import row_extremum
from kerntailor.ir.expr import CAST, Load, Op
from kerntailor.ir.nodes import Pointwise, Reduction, exp_of_difference
from kerntailor.ir.types import View

REUSED_DTYPES = ("bf16", "fp16")   # rows whose exponentials are reused when REUSE is unset (module docstring)


def reused_exps(w, online: dict, reuse: int | None = None) -> dict[str, tuple[str, str]]:
    """{M's name: (S's name, E's name)} for each online pair whose phase-A exponentials phase B reuses (the module
    docstring's conditions): none for `reuse` 0, each that can for 1, those of reuse_by_default for None."""
    if reuse == 0:
        return {}
    needed = _full_live(w)
    reused = {}
    for m_name, (s_node, c) in sorted(online.items()):
        e_name = s_node.operands[0].base
        if c != m_name or e_name not in needed or w.level.get(e_name) != "full":
            continue
        if reuse is None and not reuse_by_default(w, w.graph.node(m_name)):
            continue
        e = w.graph.node(e_name)
        found = exp_of_difference(w.graph, e_name)
        if found is None or found[0] not in w.members:
            continue
        d = w.graph.node(found[0])
        if s_node.operands[0] != View.of(e_name, e.out.shape) or e.operands[0] != View.of(d.name, d.out.shape) \
                or d.out.shape != e.out.shape or w.level.get(d.name) not in ("full", "inline"):
            continue
        reused[m_name] = (s_node.name, e_name)
    return reused


def reuse_by_default(w, m: Reduction) -> bool:
    """REUSE unset: whether the max `m` reads a row of 16-bit floats (REUSED_DTYPES), as stored: through the casts
    that upcast it (bf16 softmax's max reads x.to(fp32)), whose normalising pass the per-element exp bound (module
    docstring's measurements)."""
    name = m.operands[0].base
    while True:
        try:
            node = w.graph.node(name)
        except KeyError:   # a graph input
            break
        if not (isinstance(node, Pointwise) and isinstance(node.expr, Op) and node.expr.op == CAST
                and node.expr.args == (Load(0, node.expr.args[0].dtype),)):
            break
        name = node.operands[0].base
    return w.graph.buffer_type(name).dtype in REUSED_DTYPES


def _full_live(w) -> set[str]:
    """The full-size members the full-size outputs need (not through a row value: those are done by phase B)."""
    found: set[str] = set()
    stack = [n.name for n in w.outputs() if w.level[n.name] == "full"]
    while stack:
        name = stack.pop()
        if name in found or name not in w.members:
            continue
        node = w.graph.node(name)
        if isinstance(node, Reduction) or w.level[name] == "reduced":
            continue
        found.add(name)
        stack += [op.base for op in node.operands]
    return found


def keep_tile_exps(w, m: Reduction, s_name: str) -> None:
    """Phase A's (max, sum) of the one tile, its exponentials named (kept in registers for phase B) and the tile's
    max kept apart (phase B's v_<M> is the row's). acc_<M> is the tile, its masked lanes −inf."""
    w.out(f"v_{m.name} = {row_extremum(w, 'max', f'acc_{m.name}')}  # {m.describe()}")
    w.out(f'ex_{s_name} = tl.where(acc_{m.name} == float("-inf"), 0.0, tl.exp(acc_{m.name} - v_{m.name}))'
          "  # exp(x - tile max): kept in registers for the normalising pass")
    w.out(f"v_{s_name} = tl.sum(ex_{s_name}, axis=1, keep_dims=True)")
    w.out(f"tmax_{m.name} = v_{m.name}  # the tile's max (v_{m.name} becomes the row's)")


def row_rescale(w, m_name: str, s_name: str) -> None:
    """Phase B, once the row max v_<M> is combined: s = exp(tile max − row max), exactly 1 where they are equal
    and not −inf (module docstring)."""
    t = f"tmax_{m_name}"
    w.out(f'scale_{s_name} = tl.where(({t} == v_{m_name}) & ({t} != float("-inf")), 1.0, tl.exp({t} - v_{m_name}))'
          "  # exp(tile max - row max), once per row")


def reuse_tile_exps(w, reused: dict[str, tuple[str, str]], done: set[str]) -> None:
    """Phase B over the kept tile: each reused E = exp(x − M) written from phase A's exponentials (done)."""
    for s_name, e_name in sorted(reused.values()):
        w.out(f"v_{e_name} = ex_{s_name} * scale_{s_name}  # exp(x - max) from phase A's exp(x - tile max): no "
              "exp per element")
        done.add(e_name)
