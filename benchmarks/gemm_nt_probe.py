"""Probe: why our bf16 `x @ W.T` (NT) GEMM kernels run at ~525-565 TFLOP/s on the H200 when NN runs at ~700.

Times, side by side in one process on one GPU, the same GEMM + bias + ReLU (gemm_bias_relu's shape) four ways,
each over a few tile configs:

  pointer        the structure kerntailor's codegen emits today (pointer tiles, K mask in the loop)
  pointer_even   the same without the K mask (K a multiple of BLOCK_K)
  tma            TMA descriptors (host-side triton.tools.tensor_descriptor), one output tile per program
  tma_persist    TMA descriptors, one program per SM walking the tiles (GROUP_M order)
  nn_pointer_no_epilogue   the same product with W stored K x N (NN) and no epilogue: is it the layout?

against eager (F.linear + relu: cuBLAS, bias in the GEMM) and torch.compile of the same, plus the
tall-skinny NN shape (matmul_tall_skinny) over pointer configs, since that one misses its memory floor.
Also checks every output against eager (relative Frobenius error). Timing: triton.testing.do_bench,
median, L2 flushed between runs. Writes JSON to argv[1].

    python3 benchmarks/gemm_nt_probe.py OUT.json          # on the GPU machine
    TRITON_INTERPRET=1 python3 benchmarks/gemm_nt_probe.py --smoke   # tiny shapes on a CPU, correctness only
"""

from __future__ import annotations

import json
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # older triton
    TensorDescriptor = None


@triton.jit
def _tile(t, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * num_n
    first_m = (t // width) * GROUP_M
    rows = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (t % width) % rows, (t % width) // rows


@triton.jit
def nt_pointer(x_ptr, w_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, MASK_K: tl.constexpr, BIAS: tl.constexpr):
    pid_m, pid_n = _tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = x_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = w_ptr + rk[:, None] + (rn % N)[None, :] * K
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BLOCK_K)):
        if MASK_K:
            k_left = K - kt * BLOCK_K
            a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0.0)
        else:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    if BIAS:
        acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :], 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def nn_pointer(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for _kt in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs, mask=rn[None, :] < N, other=0.0), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _nt_tma_tile(x_desc, w_desc, b_ptr, c_desc, t, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """Output tile t: its K loop through the descriptors, bias + ReLU, a TMA store."""
    pid_m, pid_n = _tile(t, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BLOCK_K)):
        a = x_desc.load([off_m, kt * BLOCK_K])
        b = w_desc.load([off_n, kt * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    rn = off_n + tl.arange(0, BLOCK_N)
    acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :], 0.0)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def nt_tma(x_desc, w_desc, b_ptr, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    _nt_tma_tile(x_desc, w_desc, b_ptr, c_desc, tl.program_id(0), M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


@triton.jit
def nt_tma_persistent(x_desc, w_desc, b_ptr, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for t in range(tl.program_id(0), tiles, NUM_SMS):
        _nt_tma_tile(x_desc, w_desc, b_ptr, c_desc, t, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


NT_CONFIGS = [  # BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages
    (128, 256, 64, 8, 4), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4),
]
SKINNY_CONFIGS = [
    (128, 64, 64, 4, 4), (64, 64, 64, 4, 4), (64, 64, 128, 4, 4), (128, 64, 128, 4, 3), (128, 64, 128, 8, 4),
    (64, 64, 256, 4, 3),
]


def _rel(out, ref) -> float:
    return float((out.float() - ref.float()).norm() / ref.float().norm())


def _time(fn, smoke: bool) -> float | None:
    if smoke:
        fn()
        return None
    return triton.testing.do_bench(fn, warmup=25, rep=150, return_mode="median") * 1e3  # us


def _setup(smoke):
    """(device, dtype): the interpreter keeps bf16 as raw bits and its dot multiplies those, so the CPU
    smoke run checks the index arithmetic in fp32."""
    return ("cpu", torch.float32) if smoke else ("cuda", torch.bfloat16)


def nt_case(name, M, N, K, smoke, sms):
    dev, dt = _setup(smoke)
    x = torch.randn(M, K, device=dev, dtype=dt)
    w = torch.randn(N, K, device=dev, dtype=dt) / K ** 0.5
    bias = torch.randn(N, device=dev, dtype=dt)
    ref_fn = lambda: F.relu(F.linear(x, w, bias))  # noqa: E731
    ref = ref_fn()
    flops = 2.0 * M * N * K
    rows = [{"shape": name, "variant": "eager", "us": _time(ref_fn, smoke)}]
    if not smoke:
        compiled = torch.compile(ref_fn)
        compiled()
        rows.append({"shape": name, "variant": "torch.compile", "us": _time(compiled, smoke)})
    out = torch.empty(M, N, device=dev, dtype=dt)
    for bm, bn, bk, warps, stages in (NT_CONFIGS[:1] if smoke else NT_CONFIGS):
        if smoke:
            bm, bn, bk = 16, 32, 16
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        kw = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages)
        variants = {
            "pointer": lambda: nt_pointer[grid](x, w, bias, out, M, N, K, MASK_K=True, BIAS=True, **kw),
            "pointer_even": lambda: nt_pointer[grid](x, w, bias, out, M, N, K, MASK_K=False, BIAS=True, **kw),
        }
        wt = w.t().contiguous()  # the same product with B stored K x N (NN), no epilogue: layout or shape?
        variants["nn_pointer_no_epilogue"] = lambda: nn_pointer[grid](x, wt, out, M, N, K, **kw)
        if TensorDescriptor is not None:
            xd = TensorDescriptor.from_tensor(x, [bm, bk])
            wd = TensorDescriptor.from_tensor(w, [bn, bk])
            cd = TensorDescriptor.from_tensor(out, [bm, bn])
            variants["tma"] = lambda: nt_tma[grid](xd, wd, bias, cd, M, N, K, **kw)
            variants["tma_persist"] = lambda: nt_tma_persistent[(min(sms, grid[0]),)](
                xd, wd, bias, cd, M, N, K, NUM_SMS=sms, **kw)
        for variant, fn in variants.items():
            row = {"shape": name, "variant": variant, "config": [bm, bn, bk, warps, stages]}
            try:
                out.zero_()
                fn()
                row["rel_err"] = _rel(out, ref if "no_epilogue" not in variant else x @ wt)
                row["us"] = _time(fn, smoke)
            except Exception as e:  # a config that does not compile or run is a row, not the end
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            rows.append(row)
    for r in rows:
        if r.get("us"):
            r["tflops"] = flops / r["us"] / 1e6
    return rows


def skinny_case(smoke):
    M, K, N = (64, 64, 32) if smoke else (32768, 4096, 64)
    dev, dt = _setup(smoke)
    a = torch.randn(M, K, device=dev, dtype=dt)
    b = torch.randn(K, N, device=dev, dtype=dt)
    ref_fn = lambda: a @ b  # noqa: E731
    ref = ref_fn()
    floor_bytes = 2 * (M * K + K * N + M * N)
    rows = [{"shape": "tall_skinny", "variant": "eager", "us": _time(ref_fn, smoke)}]
    out = torch.empty(M, N, device=dev, dtype=dt)
    for bm, bn, bk, warps, stages in (SKINNY_CONFIGS[:1] if smoke else SKINNY_CONFIGS):
        if smoke:
            bm, bn, bk = 16, 32, 16
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        fn = lambda: nn_pointer[grid](a, b, out, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,  # noqa: E731
                                      GROUP_M=1, num_warps=warps, num_stages=stages)
        row = {"shape": "tall_skinny", "variant": "pointer", "config": [bm, bn, bk, warps, stages]}
        try:
            fn()
            row["rel_err"] = _rel(out, ref)
            row["us"] = _time(fn, smoke)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        rows.append(row)
    for r in rows:
        if r.get("us"):
            r["bytes_floor_us_at_4.27TBps"] = floor_bytes / 4.27e12 * 1e6
            r["time_over_copy_floor"] = r["us"] / r["bytes_floor_us_at_4.27TBps"]
    return rows


def main() -> None:
    smoke = "--smoke" in sys.argv
    sms = 4 if smoke else torch.cuda.get_device_properties(0).multi_processor_count
    started = time.time()
    rows = []
    if smoke:
        rows += nt_case("smoke", 48, 96, 64, smoke, sms)
    else:
        rows += nt_case("gemm_bias_relu 4096x14336x4096", 4096, 14336, 4096, smoke, sms)
    rows += skinny_case(smoke)
    result = {"command": "python3 benchmarks/gemm_nt_probe.py " + " ".join(sys.argv[1:]),
              "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__, "triton": triton.__version__,
              "device": "cpu (interpreter)" if smoke else torch.cuda.get_device_name(0),
              "label": "correctness only (interpreter)" if smoke else "measured", "wall_s": time.time() - started,
              "rows": rows}
    for r in rows:
        print(json.dumps(r))
    if not smoke:
        with open(sys.argv[1], "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
