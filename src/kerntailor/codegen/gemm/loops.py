"""The loops over K that fill a GEMM kernel's fp32 accumulator tile `acc`, one per product path:

- `dot_loop`: pointer tiles of A and B, `tl.dot` per BLOCK_K step (the dot of the precision policy);
- `tma_loop`: the same through TMA descriptors (sm_90: the copy engine fetches the tiles, out-of-bounds rows and
  columns read as zeros), where `tma_plan` finds both operands' views fit; the host then checks per call that
  strides and base addresses are 16-byte aligned (USE_TMA) and falls back to `dot_loop`;
- `gemv_loop`: multiply-adds into a [rows, BLOCK_K] tile and one `tl.sum` (a matrix-vector product).

Rows and columns of an operand are read wrapped modulo their size where the axis is not the contiguous one (no
mask in the loop: edge tiles re-read valid rows and never store them), masked where it is (a wrap would break
the contiguity that vectorizes the loads). `w` is the GemmWriter.

**A long K in fp32** (`k_loop`): one fp32 accumulator summed over K steps in order has a rounding error that grows
with K. Where one program's share of K passes LONG_K (262,144; K over the split-K programs) a kernel's fp32 products
would miss the fp32 table where the library splits K (KernelBench level-3 2_ShallowWideMLP's edge case at K =
1,048,579 on an H100: 1.25e-5 > 1e-5, cuBLAS at most a quarter of it; the error grows about as sqrt(K), so a
quarter of that K stays near half the table). There the loop sums FLUSH_K (4,096) deep partial tiles and adds each
to `acc` (two levels: the
error of a K = 4,096 product plus a short sum of partials; 1M-long rows of exact 32-deep dots summed in fp32, a CPU
emulation: 3.8e-6 in one level, 4.3e-7 in two at 2,048). The host decides per call (the LONG_K constexpr, a second
specialization compiled only when a call has such a K); the kernel of the usual sizes is the one-level loop as
before, with no second accumulator tile to hold. The second tile costs registers in that specialization
(cross-compiled, x @ W.T in fp32 ieee: sm_90 128x128/8 warps 254 -> 255 registers and 640 bytes of spills, 64x64/4
warps 128 -> 255 and none; gfx942 128x128 130 -> 206 VGPRs, occupancy 3 -> 2): a K that long is slower than the
schedule's timing said, and right.
"""

from __future__ import annotations

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.helpers import dot_helper
from kerntailor.units import ITEMSIZE

LONG_K = 1 << 18     # K per split past this: the two-level loop (module docstring)
FLUSH_K = 1 << 12    # the depth of one partial tile under LONG_K


def times(w, index: str, stride: SizeExpr) -> str:
    st = w.sizes.text(stride)
    return index if st == "1" else f"{index} * {st}"


def rows(w, index: str, size: str, stride: SizeExpr) -> tuple[str, str]:
    """(index text, mask or "") for reading rows/columns of an operand (module docstring)."""
    if w.sizes.text(stride) == "1":
        return index, f"{index} < {size}"
    return f"({index} % {size})", ""


def pointers(w, which: str, view, *terms: tuple[str, SizeExpr]) -> None:
    """<which>_ptrs: the operand's base pointer, its batch/offset base, and index x stride terms."""
    parts = " + ".join(times(w, index, stride) for index, stride in terms)
    w.out(f"{which}_ptrs = {w.pointer(view.base)}{w.bases[which + '_base']} + {parts}")


def dot_text(w, dtype: str, precision: str, b: str = "b", acc: str = "acc") -> str:
    """`acc`'s update by the tile pair (a, `b`) in the precision policy (the helpers it needs join the module)."""
    if dtype == "fp8":
        w.add_module_helper(dot_helper("fp8"))
        return f"_dot_fp8(a, {b}, {acc})  # {w.product.fp8.name} operands ({precision}), fp32 accumulation"
    if dtype == "fp32" and precision == "ieee":
        return f'tl.dot(a, {b}, {acc}, input_precision="ieee")  # full fp32 products'
    helper = precision if dtype == "fp32" else "16bit"
    for name in (("round_tf32",) if helper != "16bit" else ()) + (helper,):
        w.add_module_helper(dot_helper(name))
    what = f"input_precision={precision}" if dtype == "fp32" else f"{dtype} operands, fp32 accumulation"
    return f"_dot_{helper}(a, {b}, {acc})  # {what}"


def long_k(K_host: str, K_traced: int, split: int = 1) -> tuple[str, str, int]:
    """The LONG_K constexpr of an fp32 product whose K is split over `split` programs (each sums its share): (name,
    the host's per-call condition, its traced value)."""
    return "LONG_K", f"({K_host}) > {LONG_K * split}", int(K_traced > LONG_K * split)


def flush_steps(block_k: int) -> int:
    """K_FLUSH: the BLOCK_K steps of one partial tile under LONG_K."""
    return max(1, FLUSH_K // block_k)


def k_loop(w, accs: list[str], body, header: str = "") -> None:
    """The loop over this program's BLOCK_K steps filling `accs` (fp32 tiles); `body(names)` writes one step, each
    accumulator under names[acc]. Where the writer has a LONG_K constexpr (w.long_k), the two-level form beside it
    (module docstring)."""
    def one_level():
        for acc in accs:
            w.out(f"{acc} = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
        with w.out.block(f"for kt in range(k_lo, k_hi):{header}"):
            body({acc: acc for acc in accs})

    if w.long_k is None:
        one_level()
        return
    with w.out.block(f"if LONG_K:  # this program's K > {LONG_K}: partial tiles {FLUSH_K} deep summed into acc (a "
                     "long fp32 sum's error)"):
        for acc in accs:
            w.out(f"{acc} = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
        with w.out.block("for k0 in range(k_lo, k_hi, K_FLUSH):  # K_FLUSH BLOCK_K steps a partial tile"):
            for acc in accs:
                w.out(f"{acc}_part = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
            with w.out.block(f"for kt in range(k0, tl.minimum(k0 + K_FLUSH, k_hi)):{header}"):
                body({acc: f"{acc}_part" for acc in accs})
            for acc in accs:
                w.out(f"{acc} += {acc}_part")
    with w.out.block("else:"):
        one_level()


def dot_loop(w, operands, M: str, N: str, K: str, dtype: str, precision: str, second=None) -> None:
    """acc over K; with `second` (the view and strides of a dual group's second B), acc2 beside it: each A tile is
    loaded once for both tl.dots."""
    a, a_strides, b, b_strides = operands
    am, am_mask = rows(w, "rm", M, a_strides[-2])
    w.out("kk = k_lo * BLOCK_K + rk")
    pointers(w, "a", a, (f"{am}[:, None]", a_strides[-2]), ("kk[None, :]", a_strides[-1]))
    rights = [("b", "acc", b, b_strides)] + ([("b2", "acc2", *second)] if second else [])
    masks = []
    for name, _, view, strides in rights:
        bn, bn_mask = rows(w, "rn", N, strides[-1])
        pointers(w, name, view, ("kk[:, None]", strides[-2]), (f"{bn}[None, :]", strides[-1]))
        masks.append(f"(rk[:, None] < k_left) & ({bn_mask})[None, :]" if bn_mask else "rk[:, None] < k_left")

    def step(names: dict[str, str]) -> None:
        w.out(f"k_left = {K} - kt * BLOCK_K")
        a_mask = f"(rk[None, :] < k_left) & ({am_mask})[:, None]" if am_mask else "rk[None, :] < k_left"
        w.out(f"a = tl.load(a_ptrs, mask={a_mask}, other=0.0)")
        for (name, acc, _, _), mask in zip(rights, masks):
            w.out(f"{name} = tl.load({name}_ptrs, mask={mask}, other=0.0)")
            w.out(f"{names[acc]} = {dot_text(w, dtype, precision, name, names[acc])}")
        w.out(f"a_ptrs += {times(w, 'BLOCK_K', a_strides[-1])}")
        for name, _, _, strides in rights:
            w.out(f"{name}_ptrs += {times(w, 'BLOCK_K', strides[-2])}")

    k_loop(w, [acc for _, acc, _, _ in rights], step)


def gemv_loop(w, gemv: str, operands, M: str, N: str, K: str) -> None:
    """Multiply-adds into a [rows, BLOCK_K] fp32 tile, one reduction at the end."""
    a, a_strides, b, b_strides = operands
    w.out("kk = k_lo * BLOCK_K + rk")
    if gemv == "n":   # out[m] = Σ_k A[m, k] · B[k, 0]
        am, am_mask = rows(w, "rm", M, a_strides[-2])
        pointers(w, "a", a, (f"{am}[:, None]", a_strides[-2]), ("kk[None, :]", a_strides[-1]))
        pointers(w, "b", b, ("kk[None, :]", b_strides[-2]))
        w.out("part = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)")
        k_mask, a_mask, b_mask = "rk[None, :] < k_left", am_mask and f"({am_mask})[:, None]", ""
        a_step, b_step, axis = a_strides[-1], b_strides[-2], 1
    else:             # out[n] = Σ_k A[0, k] · B[k, n]
        bn, bn_mask = rows(w, "rn", N, b_strides[-1])
        pointers(w, "a", a, ("kk[:, None]", a_strides[-1]))
        pointers(w, "b", b, ("kk[:, None]", b_strides[-2]), (f"{bn}[None, :]", b_strides[-1]))
        w.out("part = tl.zeros([BLOCK_K, BLOCK_N], dtype=tl.float32)")
        k_mask, a_mask, b_mask = "rk[:, None] < k_left", "", bn_mask and f"({bn_mask})[None, :]"
        a_step, b_step, axis = a_strides[-1], b_strides[-2], 0
    with w.out.block("for kt in range(k_lo, k_hi):"):
        w.out(f"k_left = {K} - kt * BLOCK_K")
        w.out(f"a = tl.load(a_ptrs, mask={_both(k_mask, a_mask)}, other=0.0).to(tl.float32)")
        w.out(f"b = tl.load(b_ptrs, mask={_both(k_mask, b_mask)}, other=0.0).to(tl.float32)")
        w.out("part += a * b")
        w.out(f"a_ptrs += {times(w, 'BLOCK_K', a_step)}")
        w.out(f"b_ptrs += {times(w, 'BLOCK_K', b_step)}")
    w.out(f"acc = tl.sum(part, axis={axis}, keep_dims=True)  # (BLOCK_M, BLOCK_N), one side 1")


def tma_plan(w, *operands) -> list[tuple] | None:
    """How each operand is read through a TMA descriptor, or None where one does not qualify: a view offset,
    or no unit stride in a matrix axis. Per operand: (which, view, rows stride, whether the tile is transposed
    after the load, the traced stride in elements)."""
    plan = []
    for which, (v, strides, offset) in zip("ab", operands):
        if not offset.is_constant or offset.coeff + offset.offset != 0:
            return None
        inner = [w.sizes.text(st) == "1" for st in strides[-2:]]
        if inner == [False, True]:    # rows x K (A) or K x N (B): loaded as stored
            plan.append((which, v, strides[-2], False, v.strides[-2]))
        elif inner == [True, False]:  # stored transposed: load the other way round, transpose the tile
            plan.append((which, v, strides[-1], True, v.strides[-1]))
        else:
            return None
    return plan


def tma_descriptors(w, plan, M: str, N: str, K: str) -> None:
    """a_desc: A as [M, K], or [K, M] when A is stored transposed; b_desc: B as [K, N], or [N, K]
    (x @ W.T). Built on the device (global scratch from triton.set_allocator: helpers/host.py)."""
    w.helpers.add("tma_allocator")
    (_, a, a_rows, a_t, _), (_, b, b_rows, b_t, _) = plan
    a_shape, a_block = (f"[{K}, {M}]", "[BLOCK_K, BLOCK_M]") if a_t else (f"[{M}, {K}]", "[BLOCK_M, BLOCK_K]")
    b_shape, b_block = (f"[{N}, {K}]", "[BLOCK_N, BLOCK_K]") if b_t else (f"[{K}, {N}]", "[BLOCK_K, BLOCK_N]")
    w.out(f"a_desc = tl.make_tensor_descriptor({w.pointer(a.base)}, shape={a_shape}, "
          f"strides=[{w.sizes.text(a_rows)}, 1], block_shape={a_block})")
    w.out(f"b_desc = tl.make_tensor_descriptor({w.pointer(b.base)}, shape={b_shape}, "
          f"strides=[{w.sizes.text(b_rows)}, 1], block_shape={b_block})")


def tma_loop(w, plan, M: str, N: str, K: str, dtype: str, precision: str) -> tuple[str, str, int]:
    """The TMA loop (descriptors first, unless a persistent program built them once); the USE_TMA constexpr:
    (name, the host's per-call condition, its value at the traced shapes)."""
    (*_, a_t, _), (*_, b_t, _) = plan
    a_at = "[kt * BLOCK_K, pid_m * BLOCK_M]" if a_t else "[pid_m * BLOCK_M, kt * BLOCK_K]"
    b_at = "[pid_n * BLOCK_N, kt * BLOCK_K]" if b_t else "[kt * BLOCK_K, pid_n * BLOCK_N]"
    if not w.product.persistent:
        tma_descriptors(w, plan, M, N, K)

    def step(names: dict[str, str]) -> None:
        w.out(f"a = {'tl.trans(' if a_t else ''}a_desc.load({a_at}){')' if a_t else ''}")
        w.out(f"b = {'tl.trans(' if b_t else ''}b_desc.load({b_at}){')' if b_t else ''}")
        w.out(f"{names['acc']} = {dot_text(w, dtype, precision, acc=names['acc'])}")

    k_loop(w, ["acc"], step, "  # out-of-bounds rows and columns read as zeros")
    align = 16 // ITEMSIZE[dtype]
    host = [f"({w.sizes.host(rows_stride)}) % {align} == 0" for _, _, rows_stride, _, _ in plan]
    host += [f"{{{v.base}}}.data_ptr() % 16 == 0" for _, v, _, _, _ in plan]
    traced = all(stride % align == 0 for *_, stride in plan)
    return "USE_TMA", " and ".join(dict.fromkeys(host)), int(traced)


def _both(a: str, b: str) -> str:
    return f"({a}) & {b}" if b else a
