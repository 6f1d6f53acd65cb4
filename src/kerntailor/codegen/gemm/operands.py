"""Where a GEMM kernel's operands come from when they are not the group's own buffers: host lines run before
the launch, and the views the kernel reads instead.

- fp8 (precision fp8-row / fp8-tensor): A (as ..., M, K) and B (as ..., N, K: K-major) are quantized along K
  by `_fp8_quantize` (codegen/helpers/fp8_quantize.py); the kernel reads fp8_a (B, M, K) and fp8_b (B, N, K)
  as (B, K, N), and multiplies the accumulator by the power-of-two scales after the loop (exact).
- the library product (knob LIBRARY): torch.matmul(A, B) over the operand views, the kernel reads its tile.
"""

from __future__ import annotations

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.helpers import fp8_helpers
from kerntailor.codegen.sizes import const, product
from kerntailor.ir.types import View, contiguous_strides


def host_view(w, v, shape: list[SizeExpr], strides: list[SizeExpr], offset: SizeExpr) -> str:
    """Host text of an operand view: torch.as_strided over its buffer ({buffer}: the host's name for it)."""
    host = w.sizes.host
    return (f"torch.as_strided({{{v.base}}}, ({', '.join(host(e) for e in shape)},), "
            f"({', '.join(host(e) for e in strides)},), {host(offset)})")


def fp8_operands(w, nb: int, a_parts, b_parts, per_row: bool):
    """The host lines that quantize A and B before the launch; the views (as view_exprs gives them) the kernel
    reads instead: fp8_a (B, M, K) and fp8_b (B, N, K) read as (B, K, N)."""
    views = []
    for which, (v, shape, strides, offset) in zip("ab", (a_parts, b_parts)):
        source = host_view(w, v, shape, strides, offset)
        if which == "b":
            source += ".transpose(-1, -2)"
        kind = next((i.kind for i in w.graph.inputs if i.name == v.base), "")
        weight = f", weight={{{v.base}}}" if kind in ("parameter", "buffer") else ""   # quantized once per version
        w.prologue.append(f"{{fp8_{which}}}, {{fp8_s{which}}} = _fp8_quantize({source}, per_row={per_row}{weight})")
        stored = list(shape[:nb]) + ([shape[-2], shape[-1]] if which == "a" else [shape[-1], shape[-2]])
        concrete = tuple(v.shape[:nb]) + ((v.shape[-2], v.shape[-1]) if which == "a" else (v.shape[-1], v.shape[-2]))
        steps = [product(stored[j + 1:]) if j + 1 < len(stored) else const(1) for j in range(len(stored))]
        if any(st is None for st in steps):
            raise CodegenUnsupported(f"{w.group.name}: fp8 operand sizes are not products of the inputs'")
        conc = contiguous_strides(concrete)
        if which == "b":  # (B, N, K) stored, read as (B, K, N)
            steps[-1], steps[-2] = steps[-2], steps[-1]
            conc = conc[:-2] + (conc[-1], conc[-2])
        views.append((View(f"fp8_{which}", tuple(v.shape), tuple(conc), 0), list(shape), steps, const(0)))
    w.add_module_helper(fp8_helpers(w.product.fp8))
    return views


def fp8_rescale(w, nb: int, M: str, N: str) -> None:
    """acc *= s_a[row] · s_b[column] (or the two tensor scales): powers of two, exact."""
    sa, sb = w.pointer("fp8_sa"), w.pointer("fp8_sb")
    if w.product.precision != "fp8-row":
        w.out(f"acc = acc * (tl.load({sa}) * tl.load({sb}))  # the operands' power-of-two scales")
        return
    for name, ptr, index, size in (("s_rows", sa, "rm", M), ("s_cols", sb, "rn", N)):
        batch = f"bidx * {size} + " if nb else ""   # one row of scales per batch element
        w.out(f"{name} = tl.load({ptr} + {batch}{index}, mask={index} < {size}, other=1.0)")
    w.out("acc = acc * s_rows[:, None] * s_cols[None, :]  # per-row and per-column power-of-two scales")


LIBRARY_PRODUCTS = (("lib_prod", "acc"), ("lib_prod2", "acc2"))   # host buffer and accumulator of each product


def library_product(w, nb: int, a_parts, b_parts, M: str, N: str, which: int = 0) -> None:
    """Host: lib_prod = torch.matmul(A, B) over the operand views ((B, M, N), the library's output dtype).
    Kernel: acc = this tile of it, in fp32; the epilogue and row tail then run as after tl.dot. `which` 1: a dual
    group's second product (plan/dual.py), lib_prod2 into acc2."""
    buffer, acc = LIBRARY_PRODUCTS[which]
    a, b = (host_view(w, *parts) for parts in (a_parts, b_parts))
    w.prologue.append(f"{{{buffer}}} = torch.matmul({a}, {b})  # the library's GEMM (cuBLAS, hipBLASLt)")
    prod = w.pointer(buffer)
    batch = f"bidx.to(tl.int64) * {M} * {N} + " if nb else ""
    if not which:
        w.out(f"prod_rows = rm[:, None].to(tl.int64) * {N}")
    w.out(f"{acc} = tl.load({prod} + {batch}prod_rows + rn[None, :], mask=(rm[:, None] < {M}) & (rn[None, :] < {N}), "
          "other=0.0).to(tl.float32)  # the library's product, this tile")
