"""benchmarks/longrow_probe.py stays runnable and its kernels right: its --smoke mode runs every variant on a
3 x 1000 tensor under TRITON_INTERPRET=1 (the cooperative P4 at SPLIT 1, and at SPLIT 4 replayed with nobody
waiting: waiting on peers would deadlock the sequential interpreter), and each softmax variant must match
torch.softmax."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.interpreter
def test_longrow_probe_smoke_checks_every_variant(tmp_path):
    out = tmp_path / "longrow.json"
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "longrow_probe.py"), "--smoke", "--out", str(out)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(out.read_text())
    rows = report["results"]
    assert report["label"].startswith("measured on") and report["triton"] and report["torch"]
    assert all("error" not in r for r in rows), [r for r in rows if "error" in r]
    names = {r["variant"].split()[0] for r in rows}
    assert names >= {"P0", "P1", "P2", "P3", "P3b", "P3c", "P4"}
    assert all(r["copy_exact"] for r in rows if r["variant"].startswith("P0"))
    checked = [r for r in rows if not r["timing_only"]]
    assert {r["dtype"] for r in checked} == {"float32", "bfloat16"}
    assert {r["variant"].split()[0] for r in checked} == {"P1", "P3", "P4"}
    assert any(r["variant"].startswith("P4") and "SPLIT 4" in r["variant"] for r in checked)
    # fp32: a few ulps of the largest output; bf16 (8 significant bits): the interpreter's fp32 -> bf16 cast was
    # seen 2 ulps off (7.5e-3 of the largest output), so within 2^-7 of it
    for r in checked:
        assert r["err_over_max"] < (1e-6 if r["dtype"] == "float32" else 2 ** -7), r


def test_longrow_probe_summary_divides_each_familys_fastest_line_by_the_fastest_exact_copy():
    import importlib.util

    spec = importlib.util.spec_from_file_location("longrow_probe", ROOT / "benchmarks" / "longrow_probe.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    rows = [{"variant": "P0 copy BLOCK 1024 warps 4", "dtype": "float32", "time_us": 3000.0, "copy_exact": True},
            {"variant": "P0 torch copy_", "dtype": "float32", "time_us": 2000.0, "copy_exact": False},   # wrong
            {"variant": "P1 two kernels div", "dtype": "float32", "time_us": 4500.0},
            {"variant": "P1 two kernels recip", "dtype": "float32", "time_us": 4200.0, "err_over_max": 1e-7},
            {"variant": "P1 two kernels exp2", "dtype": "float32", "time_us": 4100.0, "err_over_max": float("nan")},
            {"variant": "P4 cooperative reuse", "dtype": "float32", "error": "RuntimeError: x"}]
    lines = probe.summary(rows)
    assert lines[0] == "float32: floor 3000.0 us (fastest exact copy)"
    assert len(lines) == 2 and "P1" in lines[1] and "x 1.40" in lines[1] and lines[1].endswith("recip")


def test_coop_probe_times_the_tools_cooperative_kernel_at_each_knob_value():
    """benchmarks/coop_probe.py (the lead's GPU run) generates the tool's module at the cooperative seed of a GPU's
    SM count and dtype (SPLIT 96 of 4096-element tiles at 393,216 on 132 SMs; REUSE 0 fp32, 1 bf16), at each REUSE
    and maxnreg its labels name, at SPLIT 128 (the old shape) and the windowed default (no GPU here: the sources
    only); an unknown label is refused."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("coop_probe", ROOT / "benchmarks" / "coop_probe.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    labels = probe.DEFAULT_SCHEDULES.split(",") + ["coop-pow2", "windowed"]
    assert len(labels) == 8 and "coop-reuse1-maxnreg40" in labels
    schedules = probe.tool_schedules(393216, 132, "fp32", labels)
    assert schedules["coop"]["SPLIT"] == 96 and schedules["coop-pow2"]["SPLIT"] == 128
    assert schedules["windowed"]["WAVE"] > 0
    assert schedules["coop"]["REUSE"] == 0 and probe.tool_schedules(393216, 132, "bf16")["coop"]["REUSE"] == 1
    assert schedules["coop-reuse1-maxnreg40"] == dict(schedules["coop"], REUSE=1, maxnreg=40)
    source = probe.tool_source("fp32", schedules["coop"])
    launch = next(line for line in source.splitlines() if "k0_reduction_kernel[" in line)
    assert "(d0 * 96,)" in launch and "SPLIT=96" in launch and "for roffset" not in source
    assert "= ex_sum0 * scale_sum0" not in source   # fp32's seed recomputes the exp
    capped = probe.tool_source("fp32", schedules["coop-reuse1-maxnreg40"])
    assert "= ex_sum0 * scale_sum0" in capped and "**({} if _AMD else {'maxnreg': 40}))" in capped
    with pytest.raises(ValueError, match="unknown schedule 'coop-recompute'"):
        probe.tool_schedules(393216, 132, "fp32", ["coop-recompute"])


def test_split_sum_probe_generates_the_split_reduction_at_each_schedule(capsys):
    """benchmarks/split_sum_probe.py (the lead's GPU run for 100_HingeLoss bf16) generates the tool's whole-tensor
    split reduction at its grid's schedules (no GPU here: the sources only); a missing problem file is one line."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("split_sum_probe", ROOT / "benchmarks" / "split_sum_probe.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    problem = ROOT / "tests" / "data" / "codegen_fused" / "tiny_hinge_mean.py"
    assert probe.GRID[0] == (512, 2048, 8, 1) and len(set(probe.GRID)) == len(probe.GRID)
    for split, rblock, warps, stages in [probe.GRID[0], probe.GRID[-1]]:
        source = probe.tool_source(problem, "bf16", probe.knobs_of(split, rblock, warps, stages))
        launch = next(line for line in source.splitlines() if "k0_reduction_kernel[" in line)
        assert f"SPLIT={split}," in launch and f"RBLOCK={rblock}," in launch and f"num_warps={warps}," in launch
        assert f"num_stages={stages}" in launch and "for roffset in range(0, chunk, RBLOCK)" in source
    assert probe.main(["--problem", str(ROOT / "no_such_problem.py")]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
