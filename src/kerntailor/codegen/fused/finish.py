"""The last step of a fused kernel: the body a FusedWriter wrote becomes a GeneratedKernel (its constexprs, host
constexprs, docstring, compile options and grid, through assemble), and whether it must be compiled without FMA
contraction. Functions of the writer `w`, as split.py's and splitrows.py's are."""

from __future__ import annotations

from math import prod

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.assemble import assemble, one_dim
from kerntailor.codegen.fused.patterns import has_op
from kerntailor.codegen.helpers import named_helper
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis, Scratch
from kerntailor.codegen.sizes import const
from kerntailor.ir.nodes import Pointwise, Reduction
from kerntailor.units import next_power_of_two


def finish_kernel(w, xblock: int, rblock: int, rows: SizeExpr, split: int = 0, scratch: tuple[Scratch, ...] = (),
                  grid: GridAxis | None = None, reads: tuple[Scratch, ...] = (),
                  host_prologue: tuple[str, ...] = (), host_constexprs: tuple[tuple[str, str], ...] = ()
                  ) -> GeneratedKernel:
    """The kernel of the FusedWriter `w`'s body. `scratch`: buffers allocated for this kernel; `reads`: scratch an
    earlier kernel of the group allocated (`GeneratedKernel.before`); `grid`: the launch grid where it is not one
    program per XBLOCK rows; `host_constexprs`: (name, host text) of constexprs the host decides per call."""
    body = w.layout.expand(w.out.lines)
    dtypes = {s.buffer: s.dtype for s in scratch + reads}
    dtypes |= {b: w.graph.buffer_type(b).dtype for b in w.pointers if b not in dtypes}
    constexprs = [("XBLOCK", xblock)] + ([("RBLOCK", rblock)] if w.reduce else [])
    constexprs += [("SPLIT", split)] if split else []
    constexprs += [("WAVE", w.schedule.WAVE)] if w.phase == "windowed" else []
    whole_row = None
    space = w.space
    if w.reduce and w.persistent and not split:   # the whole row in one block, whatever its length
        row = w.at.reduced_size()
        traced = next_power_of_two(prod(space.concrete[k] for k in space.axes))
        constexprs = [(n, traced if n == "RBLOCK" else v) for n, v in constexprs]
        rblock_text = f"triton.next_power_of_2({w.sizes.host(row)})"
        host_constexprs = (("RBLOCK", rblock_text),)
        whole_row = row
        if xblock > 1 and grid is None:
            # several rows a program, as many as fit the traced tile (XBLOCK x the traced RBLOCK), one at least: a
            # longer row than traced takes fewer rows, so no call holds more elements than the schedule that was
            # searched and built (level-2 62's GroupNorm at 64 rows of 16, called on rows of 2050 by the referee's
            # edge case: a 64 x 4096 block compiled and ran past the GPU's 120-s allowance on the H100). The grid
            # keeps its traced factor, times XBLOCK / the call's (powers of two): programs past the last row idle.
            rows_a_program = f"max(1, min({xblock}, {xblock * traced} // {rblock_text}))"
            host_constexprs += (("XBLOCK", rows_a_program),)
            grid = GridAxis(((rows, xblock),), host_factor=f"({xblock} // {rows_a_program})")
    elif split and any(n == "RBLOCK" for n, _ in host_constexprs):
        # a cooperative split's one tile a program (splitrows.write_cooperative): its share of the row, SPLIT
        # programs a row, is one block, so its length is refused where the share passes Triton's limit
        # (guards.row_checks), as a persistent kernel's whole row is (level-2 77's mean of 51,380,567 elements at
        # SPLIT=7: RBLOCK 8,388,608 did not compile on the H100)
        whole_row = w.at.reduced_size()
    if w.aligned:   # the row length's largest power-of-two divisor, at most 16 (align_rows)
        length = prod(space.concrete[k] for k in space.axes)
        constexprs.append(("ALIGN", min(16, length & -length) or 1))
        row = w.sizes.host(w.at.reduced_size())
        host_constexprs += (("ALIGN", f"(min(16, ({row}) & -({row})) or 1)"),)
    shape = " x ".join(w.sizes.host(e) for e in space.orig)
    axes = space.orig_axes
    doc = (f"{w.group.family} over ({shape})"
           + (f", reducing axes {list(axes)}" if axes else "")
           + f": {', '.join(w.group.nodes)}."
           + (" Tiles: rows x the last axis." if w.tiled == "persistent" else "")
           + (" Tiles: one chunk of a row of the last axis per program." if w.tiled == "chunked" else "")
           + (" Tiles: 2-D, rows x a chunk of the last axis (a permuted load)." if w.tiled == "tile2d" else "")
           + (" Persistent: one read of each input." if w.reduce and w.persistent and not w.tiled else "")
           + {"partials": " Split rows, phase A: each program's partial statistics of one chunk of its rows.",
              "normalise": " Split rows, phase B: the partials combined in a fixed order, then this program's "
                           "chunk of the outputs.",
              "windowed": " Split rows, windowed: each wave's partials (phase A), then one wave later its rows "
                          "normalised while the cache holds them (phase B).",
              "cooperative": " Split rows, cooperative: each program reads its chunk once, publishes its partials, "
                             "waits for its row's other programs, then normalises the chunk from registers "
                             "(GPU only: the programs of a row must be resident together).", "": ""}[w.phase])
    options = w.schedule.options() + ((("enable_fp_fusion", False),) if contraction_hazard(w) else ())
    if grid is None:
        grid = one_dim(const(split), 1) if split else one_dim(rows, xblock)
    if w.tiled in ("chunked", "tile2d"):
        grid = GridAxis(((rows, xblock), (w.at.reduced_size(), rblock)))
    return assemble(group=w.group.name, name=w.name, doc=doc, body=body, pointers=w.pointers,
                    pointer_dtypes=dtypes, sizes=w.sizes, big=w.big, constexprs=constexprs,
                    options=options, grid=(grid,), host_constexprs=host_constexprs, scratch=scratch,
                    helpers=tuple(named_helper(h) for h in sorted(w.helpers)), whole_row=whole_row,
                    host_prologue=host_prologue)


def contraction_hazard(w) -> bool:
    """Whether this kernel must be compiled without FMA contraction: it makes more than one pass over
    a row, and a product (x·s) feeds a row max or min. The first pass rounds x·s for the max; the next
    recomputes it inside exp(x·s − max), where the compiler may contract it to fma(x, s, −max) and
    keep the product unrounded. The two then disagree by |x·s|·2⁻²⁴, which exp turns into a relative
    error: 8.7e-4 on decode_attention's outlier draw (H200, 2026-12-01; the referee caught it). Only
    there: off, cross_entropy bf16 ran 2-5 % slower on one H200 with nothing to protect (A/B,
    benchmarks/data/cross_entropy_fma_ab_h200_2026-12-01.json)."""
    if not w.reduce or w.persistent:
        return False
    shifts = [n for n in w.nodes if isinstance(n, Reduction) and n.op in ("max", "min")]
    feeding = w.graph.upstream([op.base for r in shifts for op in r.operands], w.members,
                                  through=lambda node: not isinstance(node, Reduction))
    return any(isinstance(n, Pointwise) and has_op(n.expr, ("mul", "div")) for n in feeding)
