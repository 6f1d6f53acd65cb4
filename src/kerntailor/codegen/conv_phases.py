"""A transposed convolution split by output phase (codegen/conv.py's `phases` knob): the gather form without the taps
the stride leaves empty.

At stride s (> 1 along some axis), output position o = o'·s + φ (phase φ = o mod s) is reached only by the taps k
with (φ + p - k·dil) divisible by s: with g = gcd(s, dil), step = s / g, none where g does not divide φ + p, else
k = c_φ + j·step (j = 0, 1, ..) where c_φ = ((φ + p) / g · (dil / g)^-1 mod step) mod step, and their input position
is i = o' + base_φ - j·(dil / g), base_φ = (φ + p - c_φ·dil) / s (exact). One program computes one phase along
every axis (scalars, outermost in the grid), so its K is Cin / groups x Π ceil(k / step) taps (KernelBench 73's 3 x 3
x 3 kernel at stride 2: 8 taps instead of 27, of which 27 / 8 on average are real; the gather form multiplies 1 in 8)
and its input patch is a row offset plus a column offset, no division in the loop. Its weight tile is row
(phase, g, co) of the host-packed weight (packed_weight: the phase's taps in order, zeros where it has fewer), so
contiguous along K (cross-compiled for sm_90 at 73's sizes, bf16, 128 x 32 x 32 / 4 warps / 3 stages: 32 scalar
loads and one 16-byte cp.async per thread and K step where the weight's own view took 40 scalar loads; predicted).

Rows are BLOCK_M consecutive o' along the last spatial axis of one (n, o'_1..o'_{d-1}) line (the grid's
ceil(ceil(O / s) / BLOCK_M) = ceil(O / (s·BLOCK_M)) a product of factors like every size of the grid): the input
patch's rows are consecutive along x's last axis. Rows whose o is past the output are computed and not stored. The
epilogue sees the output coordinates (n, co, o_1..o_d), the scalar ones broadcast to the rows.

Costs of the line tiling: a last axis shorter than BLOCK_M leaves rows idle (default_schedule caps BLOCK_M at the
traced ceil(O / s)), and a 3-d problem has many short lines: under the interpreter KernelBench 73's phase form (128 x
32 x 32 / 4 warps) ran past the referee's 300 s on one case of a derived variant (CPU, 2026-12-03, load ~5) where
the gather form passed, so a CPU-only `generate` shipped the gather form (its runner-up). Rows over several lines
would need ceil(N·Π ceil(O_d / s_d) / BLOCK_M) programs, which the grid's product of factors cannot say.
"""

from __future__ import annotations

from math import gcd, prod

from kerntailor.codegen.gemm.loops import dot_text
from kerntailor.codegen.helpers import convt_weight
from kerntailor.codegen.kernel import GridAxis
from kerntailor.codegen.sizes import const

ALIGN = 8   # the packed weight's rows padded to a multiple of this many elements: 16 bytes of bf16, 32 of fp32


def tap_counts(wins) -> list[int]:
    """The taps per axis of one phase, at most: ceil(k / step) (step = s / gcd(s, dil))."""
    return [-(-w.k // (w.s // gcd(w.s, w.d))) for w in wins]


def phase_taps(win) -> tuple[tuple[int, int, int], ...]:
    """Per phase φ = 0..s-1 along one axis: (c_φ, step, taps), the kernel positions k = c_φ + j·step (j < taps)
    that reach outputs of that phase (module docstring; taps 0 where gcd(s, dil) does not divide φ + p)."""
    g = gcd(win.s, win.d)
    step = win.s // g
    out = []
    for phase in range(win.s):
        e = phase + win.p
        if e % g:
            out.append((0, step, 0))
            continue
        c = (e // g * pow(win.d // g, -1, step)) % step if step > 1 else 0
        out.append((c, step, max(0, -(-(win.k - c) // step))))
    return tuple(out)


def packed_weight(wr, conv, groups: int, wins, phases: bool, cin_g,
                  taps_first: bool = False) -> tuple[str, str, str]:
    """The weight as the kernel reads it, laid out by the host (helpers/convt.py's _convt_weight: per phase, group
    and output channel a zero-padded row over K = (ci, taps), ALIGN-element aligned, cached on the weight; with
    `taps_first` over (taps, ci), each tap's channels padded to ALIGN): host line and buffer registered on writer
    `wr`; returns (its pointer, the row length's kernel text, the padded channels' text: taps_first only). Row co's
    tile is then contiguous along K: cross-compiled for sm_90 at KernelBench 57's sizes (bf16, 128 x 64 x 32 / 4
    warps / 3 stages) 2 16-byte cp.async per thread and K step where the weight's own view took 16 scalar loads,
    strided 9 elements apart across the lanes (predicted, not measured)."""
    axes = tuple(phase_taps(w) if phases else ((0, 1, w.k),) for w in wins)
    taps = tuple(tap_counts(wins) if phases else [w.k for w in wins])
    buffer = f"{conv.name}_wt"
    view = wr.weight_operand_text()
    first = ", taps_first=True" if taps_first else ""
    wr.add_host_buffer(buffer, f"{{{buffer}}} = _convt_weight({view}, {groups}, {axes!r}, {taps!r}, {ALIGN}{first})  "
                               f"# the weight as {'each phase reads it' if phases else 'the kernel reads it'}",
                       wr.graph.buffer_type(conv.operands[1].base).dtype, convt_weight())
    kvol = prod(taps)
    if taps_first:   # rows of kvol taps x the channels padded
        cin_p = (str(-(-int(cin_g.evaluate({})) // ALIGN) * ALIGN) if cin_g.is_constant else
                 f"(({wr.sizes.text(cin_g)} + {ALIGN - 1}) // {ALIGN} * {ALIGN})")
        return wr.pointer(buffer), f"{kvol} * {cin_p}" if kvol > 1 else cin_p, cin_p
    if cin_g.is_constant:
        count = int(cin_g.evaluate({})) * kvol
        row = str(-(-count // ALIGN) * ALIGN)
    else:
        row = f"(({wr.sizes.text(cin_g)} * {kvol} + {ALIGN - 1}) // {ALIGN} * {ALIGN})"
    return wr.pointer(buffer), row, ""


def write_phases(wr, conv, wins, groups: int, dtype: str, x_view, w_view, space, cin_g, cout_g):
    """The body of the phase form into writer `wr` (conv.py's _ConvWriter); returns (grid, how) for its _finish."""
    x, x_shape, x_strides, x_off = x_view
    w, w_shape, w_strides, w_off = w_view
    t, nd = wr.sizes.text, len(wins)
    last = nd - 1
    phases = prod(w.s for w in wins)
    taps = tap_counts(wins)
    out = wr.out
    N, Cg, Cin = t(cout_g), t(cout_g), t(cin_g)
    pid = "tl.program_id(0).to(tl.int64)" if wr.big else "tl.program_id(0)"
    out(f"pid = {pid}")
    out(f"num_n = tl.cdiv({N}, BLOCK_N)")
    out(f"num_l = tl.cdiv({t(space[2 + last])}, {wins[last].s} * BLOCK_M)  # tiles along the last axis's o'")
    out("pid_n = pid % num_n  # channel tiles fastest: programs that run together share the input patch in L2")
    out("rest = pid // num_n")
    out("pid_l = rest % num_l")
    out("rest = rest // num_l")
    for d in range(last - 1, -1, -1):   # the line: o'_d of the other spatial axes, then the image
        q = f"tl.cdiv({t(space[2 + d])}, {wins[d].s})" if wins[d].s > 1 else t(space[2 + d])
        out(f"q{d} = rest % {q}")
        out(f"rest = rest // {q}")
    out(f"n = rest % {t(space[0])}")
    out(f"rest = rest // {t(space[0])}")
    if groups > 1:
        out(f"g = rest % {groups}  # the convolution's group")
        out(f"rest = rest // {groups}")
    for d in range(nd - 1, -1, -1):   # the phase along each axis, outermost
        if wins[d].s > 1:
            out(f"f{d} = rest % {wins[d].s}  # the phase o mod s along axis {2 + d}")
            out(f"rest = rest // {wins[d].s}")
        else:
            out(f"f{d} = 0")
    out("rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)")
    out(f"q{last} = pid_l * BLOCK_M + tl.arange(0, BLOCK_M)  # o' along the last axis: the rows")
    for d, win in enumerate(wins):   # the phase's first tap c, whether it has any, and its input position's base
        g, step = gcd(win.s, win.d), win.s // gcd(win.s, win.d)
        out(f"e{d} = f{d} + {win.p}" if win.p else f"e{d} = f{d}")
        if g > 1:   # the phase has taps along this axis only where gcd(s, dil) divides φ + p
            out(f"has{d} = (e{d} % {g}) == 0")
        if step > 1:
            inv = pow(win.d // g, -1, step)
            part = f"e{d} // {g}" if g > 1 else f"e{d}"
            out(f"c{d} = (({part}) * {inv}) % {step}")
        else:
            out(f"c{d} = 0")
        dil = f"c{d} * {win.d}" if win.d != 1 else f"c{d}"
        out(f"b{d} = (e{d} - {dil}) // {win.s}" if win.s > 1 else f"b{d} = e{d} - {dil}")
        out(f"t{d} = q{d} + b{d}  # the input position of tap j = 0")
    terms = [wr._times("n", x_strides[0])]
    if groups > 1:
        terms.append(wr._times(f"g * {Cin}", x_strides[1]))
    terms += [wr._times(f"t{d}", x_strides[2 + d]) for d in range(last)]
    if not x_off.is_constant or x_off.coeff + x_off.offset != 0:
        terms.append(t(x_off))
    out(f"x_line = {' + '.join(terms)}")
    out(f"x_rows = x_line + {wr._times(f't{last}', x_strides[2 + last])}")
    packed = packed_weight(wr, conv, groups, wins, True, cin_g)[:2] if wr.schedule.packed_weight else None
    if packed is not None:   # the packed weight's row (phase, g, co): K = (ci, the phase's taps) along it
        terms = [(f"f{d}", prod(w.s for w in wins[d + 1:])) for d in range(nd) if wins[d].s > 1]
        row = " + ".join(f"{f} * {m}" if m > 1 else f for f, m in terms)   # the phase, row-major over the axes
        if groups > 1:
            row = f"({row}) * {groups} + g" if row else "g"
        w_cols = f"(({row}) * {N} + rn % {N}) * {packed[1]}" if row else f"(rn % {N}) * {packed[1]}"
    else:
        w_cols = wr._times(f"(rn % {N})", w_strides[1])
        if groups > 1:
            w_cols += " + " + wr._times(f"g * {Cin}", w_strides[0])
        if not w_off.is_constant or w_off.coeff + w_off.offset != 0:
            w_cols += f" + {t(w_off)}"
    out(f"w_cols = {w_cols}")
    out("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
    kvol = prod(taps)
    K = f"{Cin} * {kvol}" if kvol > 1 else Cin
    out("rk = tl.arange(0, BLOCK_K)")
    def step() -> None:   # one BLOCK_K step (K tile `kt`); _k_loop chains them (chunks past LONG_K elements)
        out("kk = kt * BLOCK_K + rk")
        out(f"ci = kk // {kvol}" if kvol > 1 else "ci = kk")
        rest = f"kk % {kvol}" if kvol > 1 else ""
        for d in range(nd - 1, -1, -1):
            if taps[d] == 1:
                out(f"j{d} = 0")
            elif d == 0:
                out(f"j{d} = {rest}")
            else:
                out(f"j{d} = ({rest}) % {taps[d]}")
                rest = f"({rest}) // {taps[d]}"
        cols = [f"(kk < {K})"]
        x_cols = [wr._times("ci", x_strides[1])]
        w_rows = [wr._times("ci", w_strides[0])]
        for d, win in enumerate(wins):
            k_step, dg = win.s // gcd(win.s, win.d), win.d // gcd(win.s, win.d)
            out(f"k{d} = c{d} + j{d} * {k_step}" if k_step > 1 else f"k{d} = c{d} + j{d}")
            jd = f"j{d} * {dg}" if dg != 1 else f"j{d}"
            cols.append(f"has{d} & (k{d} < {win.k})" if gcd(win.s, win.d) > 1 else f"(k{d} < {win.k})")
            if d < last:   # a scalar line position less the tap's step: one per column
                out(f"h{d} = t{d} - {jd}")
                cols.append(f"(h{d} >= 0) & (h{d} < {t(x_shape[2 + d])})")
            if taps[d] > 1:
                x_cols.append("- " + wr._times(f"({jd})", x_strides[2 + d]))
            if win.k > 1:
                w_rows.append("+ " + wr._times(f"k{d}", w_strides[2 + d]))
        jl = f"j{last} * {wins[last].d // gcd(wins[last].s, wins[last].d)}"
        out(f"kmask = {' & '.join(cols)}")
        out(f"il = t{last}[:, None] - ({jl})[None, :]  # the last axis's input position")
        out(f"a_mask = kmask[None, :] & (il >= 0) & (il < {t(x_shape[2 + last])})")
        x_cols_text = x_cols[0] + "".join(f" {c}" for c in x_cols[1:])
        w_rows_text = w_rows[0] + "".join(f" {c}" for c in w_rows[1:])
        out(f"a = tl.load({wr.pointer(x.base)} + x_rows[:, None] + ({x_cols_text})[None, :], mask=a_mask, other=0.0)")
        if packed is not None:   # zeros where the phase lacks a tap and past K
            out(f"b = tl.load({packed[0]} + kk[:, None] + w_cols[None, :], mask=(kk < {packed[1]})[:, None], "
                "other=0.0)")
        else:
            out(f"b = tl.load({wr.pointer(w.base)} + ({w_rows_text})[:, None] + w_cols[None, :], "
                "mask=kmask[:, None], other=0.0)")
        out(f"acc = {dot_text(wr, dtype, wr.schedule.precision)}")

    traced = conv.operands[1].shape[0] // conv.groups * kvol
    # a phase that no tap reaches along an axis (gcd(s, dil) does not divide φ + p: has<d> false) skips its K loop:
    # its outputs are the epilogue of zeros. At stride 2 and dilation 2 that is every other phase along each such
    # axis (KernelBench level-1 77, 3-d: 7 of 8 phase programs), which ran the whole loop on masked loads before
    empty = [f"has{d}" for d, win in enumerate(wins) if gcd(win.s, win.d) > 1]
    tiles = f"tl.cdiv({K}, BLOCK_K)" + (f" * ({' & '.join(empty)}).to(tl.int32)" if empty else "")
    wr._k_loop(tiles, cin_g, traced, "[BLOCK_M, BLOCK_N]", step, kvol)

    # the output coordinates: o = o'·s + φ; the scalar ones broadcast to the rows (the epilogue's loads mask them)
    out(f"zr = (q{last} * 0)[:, None]")
    out("i0 = n + zr")
    out(f"i1 = ({f'g * {N} + ' if groups > 1 else ''}rn % {N})[None, :]  # the output channel")
    valid = []
    for d, win in enumerate(wins):
        o = f"q{d} * {win.s} + f{d}" if win.s > 1 else f"q{d}"
        out(f"i{2 + d} = ({o}){'[:, None]' if d == last else ' + zr'}")
        valid.append(f"(i{2 + d} < {t(space[2 + d])})")
    out(f"mmask = {' & '.join(valid)}")
    out(f"nmask = rn[None, :] < {Cg}")
    wr.coords = {k: f"i{k}" for k in range(nd + 2)}
    wr.rows = ["i0", *(f"i{k}" for k in range(2, nd + 2))]
    wr.tile = "[BLOCK_M, BLOCK_N]"
    wr.full_mask = "mmask & nmask"
    bm, bn = wr.schedule.BLOCK_M, wr.schedule.BLOCK_N
    factors = [(space[0], 1)] + [(space[2 + d], wins[d].s) for d in range(last)]
    factors += [(space[2 + last], wins[last].s * bm), (cout_g, bn), (const(phases * groups), 1)]
    how = (f"Transposed convolution split by output phase ({phases} phases): one BLOCK_M (o' along the last axis) x "
           f"BLOCK_N (channels) tile of one phase, line and group per program, K = input channels x the phase's "
           f"taps (at most {kvol}) in BLOCK_K steps, tl.dot ({wr._product(dtype)})")
    return GridAxis(tuple(factors)), how
