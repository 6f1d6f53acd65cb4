"""The read and write streams behind the floor's rates (measure/streams.py) and the GPU script that checks the
floor (benchmarks/bandwidth.py).

Unit tier: the ways are timed with host-clock fakes on the CPU (torch's ways run, a failing way is data), the
script's rows and verdict from fake timings. Compile tier: the stream kernels cross-compile to 128-bit loads
and stores for sm_90 and gfx942 (what lets them reach the read and write rates). Interpreter tier: the
kernels' results against torch. GPU tier: every way runs, and the Triton read sums what torch.sum sums.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kerntailor.measure import streams
from kerntailor.measure.ceilings import Ceilings
from kerntailor.measure.stopwatch import Timing

ROOT = Path(__file__).resolve().parent.parent
CEIL = Ceilings("Fake GPU", "x", copy_bandwidth=4.2e12, matmul_flops=(("fp32", 50e12),), l2_bytes=60 << 20,
                measured_on="2026-12-02", read_bandwidth=4.7e12, write_bandwidth=4.5e12, read_method="torch.sum",
                write_method="fill_")


class FakeEvent:
    def __init__(self, enable_timing: bool = False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.t - self.t) * 1e3


def _script():
    spec = importlib.util.spec_from_file_location("bandwidth_script", ROOT / "benchmarks" / "bandwidth.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_measure_streams_times_every_way_and_keeps_failures_as_data(monkeypatch):
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    real = streams.stream_ways

    def ways(x, y):
        def broken():
            raise RuntimeError("no such instruction\nsecond line")
        return [w for w in real(x, y) if not w[1].startswith("triton")] + [("read", "broken", broken)]

    monkeypatch.setattr(streams, "stream_ways", ways)
    rates = streams.measure_streams("cpu", nbytes=1 << 20, runs=3, warmup=1)
    by_name = {(r.kind, r.name): r for r in rates}
    assert set(by_name) == {("read", "torch.sum"), ("write", "fill_"), ("write", "zero_"), ("read", "broken")}
    assert all(r.bytes_per_s > 0 and r.runs == 3 and not r.error for k, r in by_name.items() if k[1] != "broken")
    broken = by_name[("read", "broken")]
    assert (broken.bytes_per_s, broken.runs, broken.error) == (0.0, 0, "RuntimeError: no such instruction")
    assert streams.best(rates, "read") == by_name[("read", "torch.sum")]       # the failure never wins
    fastest = max((r for r in rates if r.kind == "write"), key=lambda r: r.bytes_per_s)
    assert streams.best(rates, "write") == fastest
    assert streams.best((broken,), "read") is None


def test_stream_ways_cover_torch_and_triton_for_both_directions():
    x, y = torch.zeros(8), torch.zeros(8)
    names = [(kind, name) for kind, name, _ in streams.stream_ways(x, y)]
    assert ("read", "torch.sum") in names and ("write", "fill_") in names and ("write", "zero_") in names
    for block, warps in streams.TRITON_CONFIGS:
        assert ("read", f"triton BLOCK={block} warps={warps}") in names
        assert ("write", f"triton BLOCK={block} warps={warps}") in names


def test_bandwidth_script_rows_compare_new_and_old_floors():
    script = _script()
    n4 = 1 << 30
    ops = [("torch.sum", n4, 4, None), ("copy_", n4, n4, None)]
    timings = {"torch.sum": Timing("torch.sum", 240e-6, 239e-6, 241e-6, 238e-6, 250e-6, 50),
               "copy_": Timing("copy_", 500e-6, 499e-6, 501e-6, 498e-6, 510e-6, 50)}
    rows = script.floor_rows(ops, timings, CEIL, {})
    total = rows[0]
    assert total["new_floor_us"] == pytest.approx((n4 / 4.7e12 + 4 / 4.5e12) * 1e6)
    assert total["old_floor_us"] == pytest.approx((n4 + 4) / 4.2e12 * 1e6)
    assert total["time_over_new_floor"] == pytest.approx(240e-6 / (n4 / 4.7e12 + 4 / 4.5e12))
    assert total["time_over_old_floor"] < 1.0 < total["time_over_new_floor"]   # the case the old floor got wrong
    copy = rows[1]
    assert copy["new_floor_us"] == pytest.approx((n4 / 4.7e12 + n4 / 4.5e12) * 1e6)
    v = script.verdict(rows, CEIL, datasheet=4.8e12)
    assert v["honest"] and v["under_new_floor"] == [] and v["rates_over_datasheet"] == []
    # a stream faster than every measured way, or a rate above the datasheet: not honest, and named
    fast = {**timings, "torch.sum": replace(timings["torch.sum"], median_s=200e-6)}
    v = script.verdict(script.floor_rows(ops, fast, CEIL, {}), replace(CEIL, read_bandwidth=5e12), 4.8e12)
    assert v["under_new_floor"] == ["torch.sum"] and v["rates_over_datasheet"] == ["read"] and not v["honest"]
    # copy-only ceilings (an older cache): never called honest, the split was not measured
    old = replace(CEIL, read_bandwidth=0.0, write_bandwidth=0.0)
    assert not script.verdict(script.floor_rows(ops, timings, old, {}), old, 4.8e12)["honest"]
    result = {"label": "measured on Fake GPU", "date": "2026-12-02", "ceilings": CEIL.to_dict(),
              "datasheet_bandwidth_Bps": 4.8e12, "rows": rows, "verdict": v, "wall_s": 1.0,
              "ways_second_draw": [{"kind": "read", "name": "torch.sum", "GBps": 4700.0, "runs": 10, "error": ""}]}
    text = script.render(result)
    assert "read 4.700 TB/s (torch.sum)" in text and "torch.sum" in text and "copy_" in text


@pytest.mark.compile
@pytest.mark.parametrize("arch, load, wide_load, store, wide_store", [
    ("sm_90", "ld.global", "ld.global.v4", "st.global", "st.global.v4"),
    ("gfx942", "global_load", "global_load_dwordx4", "global_store", "global_store_dwordx4")])
def test_stream_kernels_move_128_bits_per_access(arch, load, wide_load, store, wide_store):
    """Aligned pointers and a length divisible by 16 (what a 2 GiB torch tensor launch specializes on) give
    128-bit loads and stores only: the stream is bounded by memory, not by the instruction count."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("cuda", 90, 32) if arch == "sm_90" else GPUTarget("hip", "gfx942", 64)
    asm_key = "ptx" if arch == "sm_90" else "amdgcn"
    aligned = [["tt.divisibility", 16]]
    block, warps = streams.TRITON_CONFIGS[0]
    read = triton.compile(ASTSource(fn=streams._read_kernel, signature={
        "x_ptr": "*fp32", "partial_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, constexprs={"BLOCK": block},
        attrs={(0,): aligned, (1,): aligned, (2,): aligned}), target=target, options={"num_warps": warps})
    write = triton.compile(ASTSource(fn=streams._write_kernel, signature={
        "y_ptr": "*fp32", "value": "fp32", "n": "i32", "BLOCK": "constexpr"}, constexprs={"BLOCK": block},
        attrs={(0,): aligned, (2,): aligned}), target=target, options={"num_warps": warps})
    loads = [line for line in read.asm[asm_key].splitlines() if load in line]
    stores = [line for line in write.asm[asm_key].splitlines() if store in line]
    assert loads and all(wide_load in line for line in loads), loads
    # the read kernel's one store is its partial (a scalar); the write kernel stores nothing narrow
    assert stores and all(wide_store in line for line in stores), stores


@pytest.mark.interpreter
def test_bandwidth_script_smoke_checks_its_kernels():
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bandwidth.py"), "--smoke"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 2, rows
    assert all(r["read_rel_err"] < 1e-6 and r["write_ok"] and r["huber_rel_err"] < 1e-6 for r in rows), rows


# ---- GPU tier ----

@pytest.mark.gpu
def test_gpu_every_way_runs_and_the_triton_read_sums_right():
    rates = streams.measure_streams(torch.device("cuda"), nbytes=1 << 28, runs=3)
    assert all(not r.error and r.bytes_per_s > 1e11 for r in rates), [r for r in rates if r.error]
    assert streams.best(rates, "read").bytes_per_s < 10e12 and streams.best(rates, "write").bytes_per_s < 10e12
    x = torch.rand(1 << 20, device="cuda", dtype=torch.float64).float()
    for block, warps in streams.TRITON_CONFIGS:
        partial = torch.empty((1 << 20) // block, device="cuda")
        streams.triton_read(x, partial, block, warps)
        torch.testing.assert_close(partial.double().sum(), x.double().sum(), rtol=1e-5, atol=0)
        y = torch.zeros(1 << 20, device="cuda")
        streams.triton_write(y, 1.0, block, warps)
        assert bool((y == 1.0).all())
