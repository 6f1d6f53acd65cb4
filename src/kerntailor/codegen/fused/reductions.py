"""A reduction group's passes over its rows, and the strategies that reduce in them.

Reductions run in stages: a reduction is in the stage after every reduction its input depends on. Persistent
schedules (RBLOCK covers the row) reduce each stage from values held in registers: one read of each input.
Looped schedules make one pass over the row per stage, then one for the stores, and fold two stages into one
pass where they can:

- `Accumulators`: sum, prod, max, min, any, all (int64 for integer data: exact, or wrapping as torch's int64
  product does), argmax and argmin (each lane keeps
  its first best, so such a pass walks forwards), combined across lanes after the pass;

NaN as torch: a floating max/min is NaN over a row holding a NaN (torch.amax), and argmax/argmin give the first
NaN's index (torch.argmax). Triton's `tl.max` drops NaN (maxnum, on the GPU and in the interpreter's nanmax), so a
row's extremum is kernel.py's `_row_max`/`_row_min` (row_extremum; codegen/helpers/reduce.py: one NaN-keeping
reduction on a GPU); per-lane running values use `propagate_nan=tl.PropagateNan.ALL`.
- `OnlineSoftmax`: a max M and a sum S = Σ exp(x − M) over the same x, in one pass;
- `Welford`: a sum S and Q = Σ (x − m)² with m a row value derived from S, in one pass: per-lane running
  mean and M2, combined across lanes with Chan's formula (a variance never reads x twice).

`w` is the FusedWriter whose kernel the passes are written into.
"""

from __future__ import annotations

from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.patterns import squared
from kerntailor.codegen.render import nan_extremum
from kerntailor.ir.expr import Load, Op
from kerntailor.ir.nodes import Pointwise, Reduction, exp_of_difference

FLOAT_IDENTITY = {"sum": "0.0", "max": 'float("-inf")', "min": 'float("inf")', "prod": "1.0", "any": "0",
                  "all": "1", "argmax": 'float("-inf")', "argmin": 'float("inf")'}   # fp32 accumulators
INT_IDENTITY = {"sum": "0", "prod": "1", "max": "-9223372036854775807 - 1", "min": "9223372036854775807",
                "argmax": "-9223372036854775807 - 1", "argmin": "9223372036854775807", "any": "0", "all": "1"}
INT_SOURCES = ("i64", "i32", "i16", "i8", "u8", "bool")


def row_extremum(w, op: str, value: str, nan: bool = True) -> str:
    """The max or min of `value` ([rows, lanes]) over axis 1, kept as [rows, 1]; with `nan` (floating values),
    NaN on a row that holds one (tl.max alone would drop it): the helper `_row_<op>` joins `w`'s kernel."""
    if not nan:
        return f"{'tl.max' if op == 'max' else 'tl.min'}({value}, axis=1, keep_dims=True)"
    w.helpers.add(f"row_{op}")
    return f"_row_{op}({value})"


def row_combine(w, op: str, value: str, nan: bool = True) -> str:
    """`value` ([rows, lanes]) combined over axis 1 by a sum, product, max or min, kept as [rows, 1]: a row's
    reduction from its lanes or its partials. A product is kernel.py's `_row_prod` (Triton 3.6 has no tl.prod: a
    multiply tl.reduce; codegen/helpers/reduce.py), joining `w`'s kernel."""
    if op == "sum":
        return f"tl.sum({value}, axis=1, keep_dims=True)"
    if op == "prod":
        w.helpers.add("row_prod")
        return f"_row_prod({value})"
    return row_extremum(w, op, value, nan)


def write_reduction(w, rblock: int) -> None:
    """Every stage's reductions, the row values after them, and the stores."""
    rsize = w.at.reduced_size()
    rnumel = w.sizes.text(rsize)
    reductions = [n for n in w.nodes if isinstance(n, Reduction)]
    stage = stages(w, reductions)
    online = {} if w.persistent else OnlineSoftmax.pairs(w, reductions)
    welford = {} if w.persistent else Welford.pairs(w, reductions, stage)
    for m, s_node in online.items():
        stage[s_node.name] = stage[m]
    for s1, (s2, _) in welford.items():
        stage[s2.name] = stage[s1]
    partners = {s_node.name for s_node in online.values()} | {s2.name for s2, _ in welford.values()}
    if not (w.persistent or online or welford):
        w.load_other = fill_value(w, reductions)
    done: set[str] = set()
    compute_ready_reduced(w, done)
    if w.persistent:
        w.rindex("0", rnumel)
    for s in sorted(set(stage.values())):
        group = [r for r in reductions if stage[r.name] == s]
        if w.persistent:
            for r in group:
                Accumulators.persistent(w, r, done)
        else:
            _looped_stage(w, group, rsize, online, welford, partners, done)
        compute_ready_reduced(w, done)
    w.store_outputs("reduced", done)
    if any(w.level[n.name] == "full" for n in w.outputs()):
        if w.persistent:
            w.store_outputs("full", done)
        else:
            n, saved = w.open_loop(rsize)
            w.store_outputs("full", {name for name in done if w.level[name] == "reduced"})
            w.close_loop(n, saved)


def fill_value(w, reductions: list[Reduction]) -> str:
    """What a looped pass's float tile loads hold in their masked lanes: the reductions' one identity where every
    reduction reads an input directly and all share it (input_value then skips `tl.where(mask, x, identity)`: one
    select an element, of the 8 SASS instructions a bf16 element of a strided max took on sm_90, cross-compiled
    2026-12-04), else "0". Other values computed from such loads are masked where they count, as before."""
    kinds = {identity(w, r) if is_float(w, r) and r.operands[0].base not in w.members else None for r in reductions}
    if len(kinds) != 1 or None in kinds:
        return "0"
    return kinds.pop()


def _looped_stage(w, group: list[Reduction], rsize, online: dict, welford: dict, partners: set[str],
                  done: set[str]) -> None:
    """One pass over the row for a stage's reductions, each by its strategy."""
    for r in group:
        if r.name in online:
            OnlineSoftmax.init(w, r, online[r.name])
        elif r.name in welford:
            Welford.init(w, r)
        elif r.name not in partners:
            Accumulators.init(w, r)
    n, saved = w.open_loop(rsize)
    loop_done = {name for name in done if w.level[name] == "reduced"}
    for r in group:
        if r.name in partners:
            continue
        if r.name in online:
            OnlineSoftmax.accumulate(w, r, online[r.name], loop_done)
        elif r.name in welford:
            Welford.accumulate(w, r, loop_done)
            w.layout.loops[n]["flat_only"] = True   # every lane's count is the chunk number
        else:
            Accumulators.accumulate(w, r, loop_done)
    w.close_loop(n, saved)
    for r in group:
        if r.name in partners:
            continue
        if r.name in online:
            OnlineSoftmax.finish(w, r, online[r.name])
            done.add(online[r.name].name)
        elif r.name in welford:
            Welford.finish(w, r, *welford[r.name], done)
        else:
            Accumulators.finish(w, r)
        done.add(r.name)


def stages(w, reductions: list[Reduction]) -> dict[str, int]:
    """Each reduction's stage: how many reductions its input needs completed first."""
    stage: dict[str, int] = {}
    memo: dict[str, int] = {}

    def depth(name: str) -> int:  # stages a value needs to be complete before it can be computed
        if name not in w.members:
            return 0
        if name in memo:
            return memo[name]
        node = w.graph.node(name)
        d = max((depth(op.base) for op in node.operands), default=0)
        if isinstance(node, Reduction):
            d = d + 1
        memo[name] = d
        return d

    for r in reductions:
        stage[r.name] = max((depth(op.base) for op in r.operands), default=0)
    return stage


def compute_ready_reduced(w, done: set[str]) -> None:
    """The row values whose inputs are all complete."""
    for node in w.nodes:
        if node.name in done or w.level[node.name] != "reduced" or isinstance(node, Reduction):
            continue
        if all(op.base not in w.members or op.base in done for op in node.operands):
            w.compute(node, done)


def acc_dtype(w, r: Reduction) -> str:
    """int64 for integer data (exact), fp32 otherwise; argmax/argmin compare in the input's kind."""
    source = r.out.dtype if r.op not in ("argmax", "argmin") else w.graph.buffer_type(r.operands[0].base).dtype
    return "tl.int64" if source in INT_SOURCES else "tl.float32"


def compensated_sum(w, r: Reduction) -> bool:
    """Whether sum `r` accumulates with Kahan's compensation (Accumulators.compensated): an fp32 sum whose result is
    fp32 or wider. A sum rounded to bf16/fp16 (eps 2^-8 / 2^-11) loses nothing to a plain fp32 lane (5.6e-5 over
    459,000 terms) that its own rounding does not, and the compensation's four operations an element made
    KernelBench's 100_HingeLoss bf16 (a billion elements into one sum) bound by instructions, not bytes (913 us
    against a 478 us floor, H200, 2026-12-03)."""
    return r.op == "sum" and acc_dtype(w, r) == "tl.float32" and r.out.dtype not in ("bf16", "fp16")


def is_float(w, r: Reduction) -> bool:
    """Whether reduction `r` accumulates floating values (which may hold NaN)."""
    return acc_dtype(w, r) == "tl.float32"


def _best(x: str, m: str, nan: bool) -> str:
    """Where `x` holds its row's best value `m`: its NaNs where `m` is NaN (torch.argmax picks the first NaN)."""
    return f"tl.where({m} != {m}, {x} != {x}, {x} == {m})" if nan else f"{x} == {m}"


def _improves(op: str, x: str, a: str, nan: bool) -> str:
    """Whether a lane's new `x` replaces its running best `a` (argmax/argmin; the first best stays): strictly better,
    or (floating) a NaN where the lane holds none yet. Floating, as `a` is a number and `x` is not at least as
    good, an unordered compare: NaN or better in two compares (the form before, `(x < a) | ((x != x) & (a == a))`
    plus a row-of-identity term, took 3 FSETP, 2 PLOP3 and an ISETP an element on sm_90, cross-compiled 2026-12-04)."""
    if not nan:
        return f"{x} {'>' if op == 'argmax' else '<'} {a}"
    return f"({a} == {a}) & ~({x} {'<=' if op == 'argmax' else '>='} {a})"


def identity(w, r: Reduction) -> str:
    return INT_IDENTITY[r.op] if acc_dtype(w, r) == "tl.int64" else FLOAT_IDENTITY[r.op]


def reduce_operand(w, r: Reduction, done: set[str]) -> str:
    """The value reduction `r` reads at the current tile position (cast for its accumulator)."""
    view = r.operands[0]
    if view.base in w.members:
        producer = w.graph.node(view.base)
        if isinstance(producer, Reduction) and not over_one_element(w, r):
            raise CodegenUnsupported(f"{r.name} reduces a reduction", r.name)
        if w.level[producer.name] == "inline":
            raise CodegenUnsupported(f"{r.name} reduces a recomputed {producer.name}", r.name)
        w.compute(producer, done)
        w.check_aligned(r, 0)
        value = f"v_{view.base}"
    else:
        value = w.leaf(r, "full")(Load(0, w.graph.buffer_type(view.base).dtype))
    if r.op in ("any", "all"):
        value = f"({value} != 0).to(tl.int64)"
    if acc_dtype(w, r) == "tl.int64" and r.op not in ("any", "all"):
        value = f"({value}).to(tl.int64)"
    return value


def over_one_element(w, r: Reduction) -> bool:
    """Whether `r` reduces axes of size 1 at every size (a keepdim axis: `x.sum(1, keepdim=True).amax(1)`): then each
    of its rows is one row value of a reduction before it (in an earlier stage: complete), which it may read as any
    row value. Over a size that varies, a reduction of a reduction is the group's own row values reduced again."""
    return all(w.gen.expr(("node", r.name, "operand", 0, "shape", k), r.operands[0].shape[k]).is_constant
               and r.operands[0].shape[k] == 1 for k in r.axes)


def input_value(w, r: Reduction, done: set[str]) -> str:
    """x_<r>: the reduced value, the identity where the tile is masked."""
    value = reduce_operand(w, r, done)
    if getattr(w, "filled", {}).get(value) == identity(w, r):   # loaded with the identity in its masked lanes
        w.out(f"x_{r.name} = {value}  # masked lanes loaded as {identity(w, r)}")
        return f"x_{r.name}"
    w.out(f"x_{r.name} = tl.where(xmask & rmask, {value}, {identity(w, r)})")
    return f"x_{r.name}"


class Accumulators:
    """A per-lane accumulator of one reduction over the pass, reduced across lanes after it; or, persistent,
    the whole row reduced at once."""

    @staticmethod
    def persistent(w, r: Reduction, done: set[str]) -> None:
        x = input_value(w, r, done)
        if r.op in ("sum", "prod", "max", "min"):
            w.out(f"v_{r.name} = {row_combine(w, r.op, x, is_float(w, r))}  # {r.describe()}")
        elif r.op == "any":
            w.out(f"v_{r.name} = tl.max({x}, axis=1, keep_dims=True)  # {r.describe()}")
        elif r.op == "all":
            w.out(f"v_{r.name} = tl.min({x}, axis=1, keep_dims=True)  # {r.describe()}")
        elif r.op in ("argmax", "argmin"):
            m = f"m_{r.name}"
            w.out(f"{m} = {row_extremum(w, r.op[3:], x, is_float(w, r))}")
            w.out(f"v_{r.name} = tl.min(tl.where(({_best(x, m, is_float(w, r))}) & rmask, rindex, 2147483647), "
                  f"axis=1, keep_dims=True).to(tl.int64)  # {r.describe()}, first index")
        else:
            raise CodegenUnsupported(f"reduction {r.op}")
        done.add(r.name)

    @staticmethod
    def init(w, r: Reduction) -> None:
        dt = acc_dtype(w, r)
        if r.op in ("argmax", "argmin"):
            w.out(f"acc_{r.name} = tl.full([XBLOCK, RBLOCK], {identity(w, r)}, {dt})")
            # 0, not "none yet": a lane that never improves on the identity keeps index 0, which the row's answer
            # is exactly when its best is the identity (every element equal to it: the first index)
            w.out(f"idx_{r.name} = tl.zeros([XBLOCK, RBLOCK], tl.int32)")
        elif r.op in ("sum", "prod", "max", "min", "any", "all"):
            w.out(f"acc_{r.name} = tl.full([XBLOCK, RBLOCK], {identity(w, r)}, {dt})")
            if compensated_sum(w, r):
                w.out(f"cmp_{r.name} = tl.zeros([XBLOCK, RBLOCK], tl.float32)  # the lanes' lost low bits (Kahan)")
        else:
            raise CodegenUnsupported(f"reduction {r.op}")

    @staticmethod
    def accumulate(w, r: Reduction, done: set[str]) -> None:
        x = input_value(w, r, done)
        a = f"acc_{r.name}"
        if compensated_sum(w, r):
            Accumulators.compensated(w, a, f"cmp_{r.name}", x)
        elif r.op == "sum":
            w.out(f"{a} = {a} + {x}")
        elif r.op == "prod":
            w.out(f"{a} = {a} * {x}")
        elif r.op in ("max", "min"):
            w.out(f"{a} = {nan_extremum(r.op, a, x, 'fp32' if is_float(w, r) else 'i64')}")
        elif r.op == "any":
            w.out(f"{a} = tl.maximum({a}, {x})")
        elif r.op == "all":
            w.out(f"{a} = tl.minimum({a}, {x})")
        else:  # argmax/argmin: each lane keeps its first best (so the pass must walk forwards); a NaN is best
            if w.layout.loops:
                w.layout.loops[-1]["ordered"] = True
            w.out(f"better = {_improves(r.op, x, a, is_float(w, r))}")
            w.out(f"idx_{r.name} = tl.where(better, rindex, idx_{r.name})")
            w.out(f"{a} = tl.where(better, {x}, {a})")

    @staticmethod
    def compensated(w, a: str, c: str, x: str) -> None:
        """`a += x` with Kahan's compensation `c`: each lane of a looped sum adds R / RBLOCK terms one after
        another, and a plain fp32 sum of 459,000 terms a lane (KernelBench 37_FrobeniusNorm_, 1.9e9 squares over
        4096 lanes) erred 5.6e-5, past the fp32 policy's 1e-5 (H200, 2026-12-03); compensated, a lane's error no
        longer grows with its count. Where the new sum is not finite (an inf or NaN term) the compensation is 0,
        so the sum stays inf or NaN as a plain one would, never a NaN made of inf - inf."""
        w.out(f"kahan_y = {x} - {c}")
        w.out(f"kahan_t = {a} + kahan_y")
        w.out(f"{c} = tl.where(kahan_t - kahan_t == 0, (kahan_t - {a}) - kahan_y, 0.0)")
        w.out(f"{a} = kahan_t")

    @staticmethod
    def finish(w, r: Reduction) -> None:
        a = f"acc_{r.name}"
        if r.op in ("sum", "prod", "max", "min"):
            w.out(f"v_{r.name} = {row_combine(w, r.op, a, is_float(w, r))}  # {r.describe()}")
        elif r.op == "any":
            w.out(f"v_{r.name} = tl.max({a}, axis=1, keep_dims=True)  # {r.describe()}")
        elif r.op == "all":
            w.out(f"v_{r.name} = tl.min({a}, axis=1, keep_dims=True)  # {r.describe()}")
        else:
            m = f"m_{r.name}"
            w.out(f"{m} = {row_extremum(w, r.op[3:], a, is_float(w, r))}")
            w.out(f"v_{r.name} = tl.min(tl.where({_best(a, m, is_float(w, r))}, idx_{r.name}, 2147483647), "
                  f"axis=1, keep_dims=True).to(tl.int64)  # {r.describe()}, first index")


class OnlineSoftmax:
    """max M and sum S = Σ exp(x − M) over the same x, in one pass."""

    @staticmethod
    def pairs(w, reductions: list[Reduction]) -> dict[str, Reduction]:
        """{M's name: S} for each such pair among `reductions`."""
        pairs = {}
        for s_node in reductions:
            if s_node.op != "sum" or s_node.operands[0].base not in w.members:
                continue
            found = exp_of_difference(w.graph, s_node.operands[0].base)
            if found is None or found[0] not in w.members:
                continue
            _, x, shift = found
            m = next((r for r in reductions if r.name == shift.base), None)
            if m is None or m.op != "max" or m.axes != s_node.axes or x != m.operands[0]:
                continue
            pairs[m.name] = s_node
        return pairs

    @staticmethod
    def init(w, m: Reduction, s_node: Reduction) -> None:
        w.out(f'acc_{m.name} = tl.full([XBLOCK, RBLOCK], float("-inf"), tl.float32)  # per lane: running max')
        w.out(f"acc_{s_node.name} = tl.zeros([XBLOCK, RBLOCK], tl.float32)  # and running sum of exp(x - max)")

    @staticmethod
    def accumulate(w, m: Reduction, s_node: Reduction, done: set[str]) -> None:
        """Per lane, a running max and a running sum of exp(x − max), with one exp per element: the new
        element either raises the lane's max (the sum is rescaled by exp(max − x), then counts 1) or adds
        exp(x − max); both are exp(−|x − max|). No cross-lane reduction inside the loop."""
        x = input_value(w, m, done)
        am, as_ = f"acc_{m.name}", f"acc_{s_node.name}"
        w.out(f"e_{m.name} = tl.exp(-tl.abs({x} - {am}))")
        w.out(f"{as_} = tl.where({x} > {am}, {as_} * e_{m.name} + 1.0, "
              f'{as_} + tl.where({x} == float("-inf"), 0.0, e_{m.name}))  # online: rescale the running sum')
        w.out(f"{am} = {nan_extremum('max', am, x)}")

    @staticmethod
    def finish(w, m: Reduction, s_node: Reduction) -> None:
        """The lanes' (max, sum) into the row's: the row max, and each lane's sum rescaled to it."""
        w.out(f"v_{m.name} = {row_extremum(w, 'max', f'acc_{m.name}')}  # {m.describe()}")
        w.out(f'v_{s_node.name} = tl.sum(tl.where(acc_{m.name} == float("-inf"), 0.0, acc_{s_node.name} * '
              f"tl.exp(acc_{m.name} - v_{m.name})), axis=1, keep_dims=True)  # {s_node.describe()}")


class Welford:
    """S = Σ x and Q = Σ (x − m)², m a row value derived from S, in one pass of per-lane (mean, M2)."""

    @staticmethod
    def pairs(w, reductions: list[Reduction], stage: dict[str, int]) -> dict[str, tuple]:
        """{S's name: (Q, m's name)}: Q = M2 + n·(mean − m)² (a variance never reads x twice)."""
        pairs: dict[str, tuple] = {}
        for q in reductions:
            if q.op != "sum" or q.operands[0].base not in w.members:
                continue
            sq = w.graph.node(q.operands[0].base)
            d_name = squared(sq)
            if d_name is None or d_name not in w.members or w.level[sq.name] != "full":
                continue
            d = w.graph.node(d_name)
            if not (isinstance(d, Pointwise) and len(d.operands) == 2 and w.level[d.name] == "full"
                    and d.expr == Op("sub", (Load(0, d.expr.args[0].dtype), Load(1, d.expr.args[1].dtype)),
                                     d.expr.dtype)):
                continue
            x_view, m_view = d.operands
            m_name = m_view.base
            if m_name not in w.members or w.level[m_name] != "reduced":
                continue
            s = next((r for r in reductions if r is not q and r.op == "sum" and r.operands[0] == x_view
                      and r.axes == q.axes), None)
            if s is None or s.name in pairs or acc_dtype(w, s) != "tl.float32" \
                    or d.expr.dtype not in ("fp32", "bf16", "fp16"):
                continue
            deps = {n.name for n in w.graph.upstream([m_name], w.members) if isinstance(n, Reduction)}
            if s.name not in deps or any(stage[r] >= stage[s.name] for r in deps if r != s.name):
                continue
            pairs[s.name] = (q, m_name)
        return pairs

    @staticmethod
    def init(w, s: Reduction) -> None:
        w.out(f"mean_{s.name} = tl.zeros([XBLOCK, RBLOCK], tl.float32)  # per lane: running mean")
        w.out(f"m2_{s.name} = tl.zeros([XBLOCK, RBLOCK], tl.float32)  # and sum of squared deviations")

    @staticmethod
    def accumulate(w, s: Reduction, done: set[str]) -> None:
        x = reduce_operand(w, s, done)
        mean, m2 = f"mean_{s.name}", f"m2_{s.name}"
        w.out(f"w_{s.name} = tl.where(xmask & rmask, {x}, {mean})")
        w.out(f"d_{s.name} = w_{s.name} - {mean}")
        w.out(f"{mean} = {mean} + d_{s.name} * (1.0 / (roffset // RBLOCK + 1))"
              "  # Welford: each lane's (roffset // RBLOCK + 1)-th element")
        w.out(f"{m2} = {m2} + d_{s.name} * (w_{s.name} - {mean})")

    @staticmethod
    def finish(w, s: Reduction, q: Reduction, m_name: str, done: set[str]) -> None:
        """The lanes' (mean, M2, count) into the row's: Σ n·mean, and M2 = Σ M2_lane + Σ n·(mean_lane − mean)²
        (the parallel-variance formula over all lanes at once: plain tl.sum trees, no custom combine).

        The row's count is the row value rnumel (exact below 2**24, as the lanes' counts summed in fp32 were), not
        a tl.sum of an (XBLOCK, RBLOCK) tile of counts plus zeros that no load anchors (split rows' same tile got
        the row values' layout there: splitrows._welford_chunk). Cross-compiled at GroupNorm's looped schedules
        (triton 3.6.0, CPU, 2026-12-03) this saved a register or two and no spills: none happened at XBLOCK 1 up
        to 32 values per thread; those at 32 warps with 32 or 64 values per thread (RBLOCK 32768, 65536; sm_90,
        64 registers) are the two accumulators alone outgrowing the registers, whatever the count."""
        rnumel = w.sizes.text(w.at.reduced_size())
        n = f"n_{s.name}"
        w.out(f"{n} = ((({rnumel}) - tl.arange(0, RBLOCK)[None, :] + RBLOCK - 1) // RBLOCK).to(tl.float32)"
              "  # elements each lane saw")
        w.out(f"v_{s.name} = tl.sum({n} * mean_{s.name}, axis=1, keep_dims=True)  # {s.describe()}")
        w.out(f"cnt_{s.name} = ({rnumel}) + tl.zeros([XBLOCK, 1], tl.float32)"
              "  # the lanes' counts summed: the row's length")
        w.out(f"mean_{s.name} = mean_{s.name} - v_{s.name} / cnt_{s.name}  # lane mean - row mean")
        w.out(f"m2_{s.name} = tl.sum(m2_{s.name} + {n} * mean_{s.name} * mean_{s.name}, axis=1, keep_dims=True)")
        done.add(s.name)
        compute_ready_reduced(w, done)
        m = w.graph.node(m_name)
        if m_name not in done:
            w.compute(m, done)
        dev = f"(v_{s.name} / cnt_{s.name} - v_{m_name})"
        w.out(f"v_{q.name} = m2_{s.name} + cnt_{s.name} * {dev} * {dev}  # {q.describe()}: M2 + n·(mean − m)²")
        done.add(q.name)
