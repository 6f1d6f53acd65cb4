"""A whole-tensor reduction split over SPLIT programs (a ReductionSchedule with SPLIT > 0).

Each program reduces its chunk of the one row and stores its partials; the last to finish (an atomic counter)
combines the partials in a fixed order and runs the epilogue. Deterministic: the combine order does not depend
on which program finishes last. Partials are kept in the accumulator's dtype, so an integer sum stays exact.
"""

from __future__ import annotations

from math import prod

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.reductions import (
    Accumulators,
    acc_dtype,
    compute_ready_reduced,
    is_float,
    row_combine,
    stages,
)
from kerntailor.codegen.kernel import GeneratedKernel, Scratch
from kerntailor.codegen.sizes import const
from kerntailor.ir.nodes import Reduction


def why_not_split(w) -> str:
    """Why the group cannot use a split reduction ("" if it can): one row, one stage, no row output."""
    space = w.space
    if not w.reduce or prod(space.concrete[k] for k in space.outer) != 1:
        return "split reductions are for a whole-tensor reduction"
    reductions = [n for n in w.nodes if isinstance(n, Reduction)]
    if any(r.op not in ("sum", "prod", "max", "min") for r in reductions):
        return "split reductions combine sum, prod, max and min only"
    if len({acc_dtype(w, r) for r in reductions}) > 1:
        return "split reductions keep their partials in one dtype: integer and float reductions mixed"
    if max(stages(w, reductions).values()) > 0:
        return "split reductions need independent reductions (one pass)"
    if any(w.level[n.name] == "full" for n in w.outputs()):
        return "split reductions write per-row results only"
    return ""


def write_split(w, split: int, rblock: int, rows: SizeExpr) -> GeneratedKernel:
    why = why_not_split(w)
    if why:
        raise CodegenUnsupported(why)
    rnumel = w.sizes.text(w.at.reduced_size())
    reductions = [n for n in w.nodes if isinstance(n, Reduction)]
    w.out("pid = tl.program_id(0)")
    w.out("xindex = tl.zeros([XBLOCK, 1], tl.int32)  # the one row")
    w.out("xmask = xindex < 1")
    w.layout.coords_block(list(w.space.outer), "xindex")
    w.out(f"chunk = tl.cdiv(tl.cdiv({rnumel}, SPLIT), RBLOCK) * RBLOCK")
    w.out("start = pid * chunk")
    done: set[str] = set()
    compute_ready_reduced(w, done)
    for r in reductions:
        Accumulators.init(w, r)
    with w.out.block("for roffset in range(0, chunk, RBLOCK):"):
        outer_loads, w.loads = w.loads, {}
        w.out("rindex = start + roffset + tl.arange(0, RBLOCK)[None, :]")
        w.out(f"rmask = rindex < {rnumel}")
        w.layout.coords_block(list(w.space.axes), "rindex")
        loop_done = {n for n in done if w.level[n] == "reduced"}
        for r in reductions:
            Accumulators.accumulate(w, r, loop_done)
        w.loads = outer_loads
    for k, r in enumerate(reductions):
        Accumulators.finish(w, r)
        w.out(f"tl.store(partials_ptr + {k} * SPLIT + pid + xindex, v_{r.name})")
    w.out('count = tl.atomic_add(counter_ptr, 1, sem="acq_rel")')
    with w.out.block("if count == SPLIT - 1:  # the last program: combine the partials in order, then the epilogue"):
        w.out("lanes = tl.arange(0, SPLIT)[None, :]")
        for k, r in enumerate(reductions):
            w.out(f"p_{r.name} = tl.load(partials_ptr + {k} * SPLIT + lanes + xindex, volatile=True)")
            value = row_combine(w, r.op, f"p_{r.name}", is_float(w, r))   # a partial's NaN stays NaN
            w.out(f"v_{r.name} = {value}  # {r.describe()}")
            done.add(r.name)
        compute_ready_reduced(w, done)
        w.store_outputs("reduced", done)
    partials = "i64" if acc_dtype(w, reductions[0]) == "tl.int64" else "fp32"
    scratch = (Scratch("partials", partials, ((const(len(reductions) * split), 1),)),
               Scratch("counter", "i32", ((const(1), 1),)))
    w.pointer("partials")
    w.pointer("counter")
    return w.finish(1, rblock, rows, split, scratch)
