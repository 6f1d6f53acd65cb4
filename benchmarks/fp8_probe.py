"""Probe: kerntailor's fp8 GEMM on the H200. gemm_bias_relu in bf16 (4096 x 14336 x 4096, x @ W.T + b, ReLU)
under `--precision fp8-row` / `fp8-tensor`, the module generate_module emits for sm_90, over a grid of schedules.
Side by side in one process on one GPU:

- eager bf16 (cuBLAS) and the library's fp8: torch._scaled_mm with row-wise scales (quantize with torch ops,
  bias and ReLU after), with and without its quantization in the time;
- each schedule: the whole module (quantize kernels + GEMM), its error against the float64 reference with the
  same quantization (precision.quantize_along_k: what the referee holds it to) and against the unquantized
  float64 reference (what fp8 costs), and the same schedule with sm_90's fp8 accumulator left unpromoted
  (max_num_imprecise_acc at its default: faster, fewer accumulator bits);
- the quantize step alone (both operands).

Timing: triton.testing.do_bench medians (L2 flushed between runs). Writes JSON to argv[1].

    PYTHONPATH=src python3 benchmarks/fp8_probe.py OUT.json [--first N]   # on the GPU machine (N: grid rows)
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/fp8_probe.py --smoke   # CPU: small variant, 2 schedules
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tf32x3_probe import _module, _rel, write_probe  # noqa: E402  (one way to build, load and record a probe)

# (precision, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, TMA, PERSISTENT)
GRID = [
    ("fp8-row", 256, 128, 128, 8, 3, 1, 1),   # the fastest on 2026-12-01 (3b6d864), first for --first N runs
    ("fp8-row", 128, 128, 128, 8, 3, 1, 1), ("fp8-row", 128, 128, 128, 8, 4, 1, 1),
    ("fp8-row", 64, 256, 128, 8, 3, 1, 1), ("fp8-row", 128, 128, 128, 8, 4, 1, 0),
    ("fp8-row", 128, 128, 64, 8, 4, 1, 1), ("fp8-row", 128, 128, 128, 8, 3, 0, 0),
    ("fp8-row", 128, 256, 128, 8, 3, 1, 1),
    ("fp8-row", 128, 128, 256, 8, 3, 1, 1), ("fp8-row", 128, 64, 128, 4, 4, 1, 1),
    ("fp8-tensor", 128, 128, 128, 8, 3, 1, 1), ("fp8-tensor", 128, 128, 128, 8, 4, 1, 1),
]
UNPROMOTED = ("tl.dot(a, b, acc, max_num_imprecise_acc=a.shape[1])", "tl.dot(a, b, acc)")


def _emulated(x, w, b, per_row: bool):
    import torch

    from kerntailor.precision import FP8_FORMATS, quantize_along_k

    fmt = FP8_FORMATS["e4m3fn"]
    qa, sa = quantize_along_k(x.double(), 1, per_row, fmt)
    qb, sb = quantize_along_k(w.double().t(), 0, per_row, fmt)
    return torch.relu((qa @ qb) * sa * sb + b.double())


def main() -> None:
    import torch
    import triton

    smoke = "--smoke" in sys.argv
    device = "cuda" if torch.cuda.is_available() and not smoke else "cpu"
    variant = "small" if smoke else "default"
    first = int(sys.argv[sys.argv.index("--first") + 1]) if "--first" in sys.argv else len(GRID)
    grid = GRID[:2] if smoke else GRID[:first]
    rows, refs = [], {}
    ref_model = inputs = exact = None
    bench = (lambda f: triton.testing.do_bench(f, return_mode="median") * 1e3) if device == "cuda" else None
    for precision, bm, bn, bk, warps, stages, tma, persistent in grid:
        knobs = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": warps, "num_stages": stages,
                 "split_k": 1, "precision": precision, "TMA": tma, "PERSISTENT": persistent}
        name = (f"{precision} {bm}x{bn}x{bk} w{warps} s{stages}" + (" TMA" if tma else "")
                + (" persistent" if persistent else ""))
        for promoted in (True, False) if not smoke else (True,):
            row = {"variant": name + ("" if promoted else " unpromoted")}
            try:
                spec, module = _module(knobs, "bf16", edit=None if promoted else lambda s: s.replace(*UNPROMOTED))
                if ref_model is None:
                    ref_model = spec.make_model(variant, device).eval()
                    inputs = spec.make_inputs(variant, device)
                    x, w, b = inputs[0], ref_model.linear.weight, ref_model.linear.bias
                    exact = torch.relu(x.double() @ w.double().t() + b.double())
                    refs = {p: _emulated(x, w, b, p == "fp8-row") for p in ("fp8-row", "fp8-tensor")}
                    with torch.no_grad():
                        baselines = [{"variant": "eager bf16 (cuBLAS)", "rel_err_exact": _rel(ref_model(x), exact)}
                                     | ({"us": bench(lambda: ref_model(x))} if bench else {})]
                        if device == "cuda":
                            baselines += _scaled_mm_rows(x, w, b, exact, bench)
                            q = module._fp8_quantize
                            baselines.append({"variant": "our quantize step alone (x and W, fp8-row, W not kept)",
                                              "us": bench(lambda: (q(x, True), q(w, True)))})
                    for base in baselines:   # printed as they come: a run cut short keeps them
                        print(json.dumps(base), flush=True)
                    rows += baselines
                cand = module.ModelNew(*spec.init_inputs(variant)).to(device).to(torch.bfloat16)
                cand.load_state_dict(ref_model.state_dict())
                with torch.no_grad():
                    out = cand(*inputs)
                    row["rel_err_emulated"] = _rel(out, refs[precision])
                    row["rel_err_exact"] = _rel(out, exact)
                    if bench:
                        row["us"] = bench(lambda: cand(*inputs))
            except Exception as e:  # one schedule failing is a row, not the end
                row["error"] = " ".join(str(e).split())[:300]
            print(json.dumps(row), flush=True)
            rows.append(row)
    if not smoke:
        write_probe(sys.argv[1], "fp8 schedules, gemm_bias_relu bf16", "fp8_probe.py", rows)


def _scaled_mm_rows(x, w, b, exact, bench) -> list[dict]:
    """The library's fp8: torch._scaled_mm, row-wise scales (amax / 448), bf16 out, bias and ReLU after."""
    import torch

    f8 = torch.float8_e4m3fn

    def quantize(t):
        s = t.float().abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 448.0
        return (t.float() / s).to(f8), s

    qx, sx = quantize(x)
    qw, sw = quantize(w)

    def gemm_only():
        return torch.relu(torch._scaled_mm(qx, qw.t(), scale_a=sx, scale_b=sw.t(), out_dtype=torch.bfloat16) + b)

    def with_quantize():
        a, s_a = quantize(x)
        c, s_c = quantize(w)
        return torch.relu(torch._scaled_mm(a, c.t(), scale_a=s_a, scale_b=s_c.t(), out_dtype=torch.bfloat16) + b)

    rows = []
    for label, fn in (("torch._scaled_mm row-wise, GEMM + bias + ReLU (operands quantized beforehand)", gemm_only),
                      ("torch._scaled_mm row-wise, quantize (torch ops) + GEMM + bias + ReLU", with_quantize)):
        try:
            rows.append({"variant": label, "us": bench(fn), "rel_err_exact": _rel(fn(), exact)})
        except Exception as e:
            rows.append({"variant": label, "error": " ".join(str(e).split())[:300]})
    return rows


if __name__ == "__main__":
    main()
