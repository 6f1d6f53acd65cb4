"""The floor's bandwidths on this GPU, and a check of the floor built on them (issue #18 item 6).

1. The ceilings as the referee measures them (measure/ceilings.py: copy, read and write bandwidth, matmul
   rates; the user's ceilings cache is neither read nor written), then every read and write way of
   measure/streams.py once more, each with its rate (a second, independent draw of the same numbers).
2. Read-mostly and copy-like ops at KernelBench's Huber-loss size (two 8192 x 16384 fp32 tensors), timed by the
   stopwatch (interleaved, L2 flushed before every run): torch.sum and torch.mean of one tensor, a fused
   Huber loss (one Triton pass that reads both tensors and writes one partial per block; the partials' sum
   is a second, tiny launch; what KernelBench's Huber loss did at 0.91x the copy-bandwidth floor), and a copy.
   Each row: time / new floor (reads at the read rate, writes at the write rate) and time / old floor (every
   byte at the copy rate). A ratio under 1.0 against the new floor is a stream faster than every way the
   ceilings measured: the floor would not be honest yet (the script says so in `verdict`).
3. The read, write and copy rates against the datasheet bandwidth of the targets table (all must sit under it,
   or the physics line of measure/floor.py is wrong).

Writes JSON (command, machine, toolchain, date, ceilings, every way, every row) to --out and prints a table.
About 30 s on one H200 (most of it CUDA start-up and Triton compiles).

    PYTHONPATH=src python3 benchmarks/bandwidth.py --out benchmarks/data/bandwidth_h200_DATE.json   # GPU
    PYTHONPATH=src python3 benchmarks/bandwidth.py --out F.json --compile     # also torch.compile's Huber loss
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/bandwidth.py --smoke  # CPU: the kernels' results only
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parent.parent
ROWS, COLS = 8192, 16384           # KernelBench's Huber loss: two fp32 tensors, 1 GiB read in all
HUBER_CONFIGS = ((4096, 4), (8192, 8))


@triton.jit
def _huber_partial_kernel(a_ptr, b_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    d = tl.abs(a - b)
    loss = tl.where(d < 1.0, 0.5 * d * d, d - 0.5)      # smooth L1, beta = 1 (masked lanes: d = 0, loss 0)
    tl.store(partial_ptr + pid, tl.sum(loss, axis=0))


def huber_loss(a, b, partial, block: int, warps: int):
    """mean(smooth_l1(a - b)) of two flat fp32 tensors: one fused pass, then the partials' sum."""
    n = a.numel()
    _huber_partial_kernel[(triton.cdiv(n, block),)](a, b, partial, n, BLOCK=block, num_warps=warps)
    return partial.sum() / n


def check_ops(a, b, out, compiled_huber=None) -> list[tuple[str, int, int, object]]:
    """(name, bytes read, bytes written, call) of every op timed against the floors; compulsory bytes only
    (a two-launch op's partials are not compulsory: they count against it)."""
    import torch

    n4 = a.numel() * a.element_size()
    ops = [("torch.sum", n4, 4, lambda: torch.sum(a)), ("torch.mean", n4, 4, lambda: torch.mean(a))]
    for block, warps in HUBER_CONFIGS:
        partial = torch.empty(triton.cdiv(a.numel(), block), dtype=torch.float32, device=a.device)
        ops.append((f"huber fused triton BLOCK={block} warps={warps}", 2 * n4, 4,
                    lambda p=partial, bl=block, w=warps: huber_loss(a, b, p, bl, w)))
    if compiled_huber is not None:
        ops.append(("huber torch.compile", 2 * n4, 4, lambda: compiled_huber(a, b)))
    ops.append(("copy_", n4, n4, lambda: out.copy_(a)))
    return ops


def smoke() -> None:
    """CPU, under TRITON_INTERPRET=1: the stream kernels and the fused Huber loss against torch, small sizes."""
    import torch
    import torch.nn.functional as F

    from kerntailor.measure.streams import TRITON_CONFIGS, triton_read, triton_write

    torch.manual_seed(0)
    n = 3 * 4096 + 123                                  # a ragged last block
    a, b = torch.randn(n) * 2, torch.randn(n) * 2
    for block, warps in dict.fromkeys(TRITON_CONFIGS[:1] + HUBER_CONFIGS[-1:]):
        partial = torch.empty(triton.cdiv(n, block))
        triton_read(a, partial, block, warps)
        y = torch.zeros(n)
        triton_write(y, 1.0, block, warps)
        got = huber_loss(a, b, torch.empty(triton.cdiv(n, block)), block, warps)
        want = F.smooth_l1_loss(a, b, beta=1.0)
        print(json.dumps({"block": block, "warps": warps,
                          "read_rel_err": abs(float(partial.sum()) - float(a.sum())) / float(a.abs().sum()),
                          "write_ok": bool((y == 1.0).all()),
                          "huber_rel_err": abs(float(got) - float(want)) / abs(float(want))}))


def run(args) -> dict:
    import torch
    import torch.nn.functional as F

    from kerntailor.measure.ceilings import measure_ceilings
    from kerntailor.measure.floor import local_target
    from kerntailor.measure.gpulock import gpu_lock
    from kerntailor.measure.stopwatch import measure
    from kerntailor.measure.streams import measure_streams
    from kerntailor.store import toolchain_fingerprint

    started = time.time()
    device = torch.device("cuda", torch.cuda.current_device())
    ceilings = measure_ceilings(device)
    with gpu_lock(device):
        ways = measure_streams(device)
    a = torch.randn(ROWS * COLS, device=device)
    b = torch.randn(ROWS * COLS, device=device)
    out = torch.empty_like(a)
    compiled = None
    if args.compile:
        compiled = torch.compile(lambda x, y: F.smooth_l1_loss(x, y, beta=1.0))
        compiled(a, b)
    ops = check_ops(a, b, out, compiled)
    # the fused Huber loss computes what torch computes (a wrong kernel would time nothing useful)
    want = F.smooth_l1_loss(a, b, beta=1.0).double()
    huber_err = {name: abs(float(call()) - float(want)) / abs(float(want)) for name, _, _, call in ops
                 if name.startswith("huber")}
    timings = measure({name: (lambda inp, c=call: c()) for name, _, _, call in ops}, [[a]], device=device,
                      budget_s=args.budget)
    rows = floor_rows(ops, timings, ceilings, huber_err)
    target = local_target(ceilings.device_name)     # the targets table's entry for this GPU, or None
    datasheet = getattr(target, "memory_bandwidth", 0.0) if target is not None else 0.0
    return {
        "command": " ".join(["python3"] + sys.argv), "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{torch.cuda.get_device_name(device)} ({platform.node()})",
        "toolchain": toolchain_fingerprint().to_dict(),
        "label": f"measured on {torch.cuda.get_device_name(device)}",
        "ceilings": ceilings.to_dict(), "floor_label": ceilings.floor_label(),
        "ways_second_draw": [{"kind": w.kind, "name": w.name, "GBps": w.bytes_per_s / 1e9, "runs": w.runs,
                              "error": w.error} for w in ways],
        "datasheet_bandwidth_Bps": datasheet, "datasheet_target": getattr(target, "name", None),
        "rows": rows, "shape": [ROWS, COLS], "dtype": "fp32", "verdict": verdict(rows, ceilings, datasheet),
        "wall_s": time.time() - started,
    }


def floor_rows(ops, timings, ceilings, rel_err: dict) -> list[dict]:
    """One row per op: its median time against the new floor (ceilings.memory_seconds: reads and writes at
    their own rates) and the old one (every byte at the copy rate)."""
    rows = []
    for name, read, written, _ in ops:
        t = timings[name]
        new = ceilings.memory_seconds(read + written, read)
        old = (read + written) / ceilings.copy_bandwidth
        rows.append({"op": name, "bytes_read": read, "bytes_written": written, "median_us": t.median_s * 1e6,
                     "q1_us": t.q1_s * 1e6, "q3_us": t.q3_s * 1e6, "runs": t.runs,
                     "new_floor_us": new * 1e6, "old_floor_us": old * 1e6,
                     "time_over_new_floor": t.median_s / new, "time_over_old_floor": t.median_s / old,
                     "effective_GBps": (read + written) / t.median_s / 1e9, "rel_err_vs_torch": rel_err.get(name)})
    return rows


def verdict(rows: list[dict], ceilings, datasheet: float) -> dict:
    """Honest when no op beats the new floor and no measured rate tops the datasheet bandwidth."""
    under = [r["op"] for r in rows if r["time_over_new_floor"] < 1.0]
    over_sheet = [k for k, v in (("copy", ceilings.copy_bandwidth), ("read", ceilings.read_bandwidth),
                                 ("write", ceilings.write_bandwidth)) if datasheet and v > datasheet]
    wrong = [r["op"] for r in rows if r["rel_err_vs_torch"] is not None and not r["rel_err_vs_torch"] < 1e-4]
    return {"under_new_floor": under, "rates_over_datasheet": over_sheet, "wrong_results": wrong,
            "split_measured": ceilings.split, "honest": ceilings.split and not under and not over_sheet}


def render(result: dict) -> str:
    c = result["ceilings"]
    lines = [f"{result['label']}, {result['date']}: copy {c['copy_bandwidth'] / 1e12:.3f} TB/s, read "
             f"{c['read_bandwidth'] / 1e12:.3f} TB/s ({c['read_method']}), write {c['write_bandwidth'] / 1e12:.3f} "
             f"TB/s ({c['write_method']}); datasheet {result['datasheet_bandwidth_Bps'] / 1e12:.2f} TB/s", ""]
    for w in result["ways_second_draw"]:
        lines.append(f"  {w['kind']:<5} {w['name']:<28} {w['GBps']:>8.1f} GB/s {w['error']}")
    lines += ["", f"  {'op':<36} {'µs':>9} {'new floor':>10} {'t/new':>6} {'old floor':>10} {'t/old':>6}"]
    for r in result["rows"]:
        lines.append(f"  {r['op']:<36} {r['median_us']:>9.1f} {r['new_floor_us']:>10.1f} "
                     f"{r['time_over_new_floor']:>6.3f} {r['old_floor_us']:>10.1f} {r['time_over_old_floor']:>6.3f}")
    lines.append(f"\nverdict: {result['verdict']}; {result['wall_s']:.1f} s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="JSON file to write (GPU run)")
    parser.add_argument("--budget", type=float, default=3.0, help="stopwatch seconds for the ops' timing")
    parser.add_argument("--compile", action="store_true", help="also time torch.compile's Huber loss (+~20 s)")
    parser.add_argument("--smoke", action="store_true", help="CPU check of the kernels (TRITON_INTERPRET=1)")
    args = parser.parse_args()
    if args.smoke:
        smoke()
        return
    if args.out is None:
        parser.error("--out is needed for a GPU run")
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(render(result))


if __name__ == "__main__":
    main()
