"""benchmarks/conv_crosscompile.py (#19's gfx942 line): its core takes a conv file's timed schedules to records of
cross-compiled kernels, and its summary counts what compiled, with matrix instructions, and lists what did not."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONV2D = ROOT / "tests" / "data" / "conv" / "conv2d_groups_bias_relu.py"
HEADER = {"date": "today", "command": "c", "machine": "m", "toolchain": "t", "files": 1, "files_with_conv": 1,
          "groups": 1}


def _script():
    spec = importlib.util.spec_from_file_location("conv_crosscompile", ROOT / "benchmarks" / "conv_crosscompile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.compile
def test_a_16bit_conv_default_schedule_cross_compiles_for_gfx942_with_mfma(tmp_path):
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.targets import get_target

    cx = _script()
    row, jobs = cx.file_jobs(CONV2D, "bf16", [get_target("mi300x")])
    assert row["conv_groups"] and not row.get("skipped")
    assert {j[0]["role"] for j in jobs} >= {"default", "seed1"}   # the seeds the search times first, and the default
    default = [j for j in jobs if j[0]["role"] == "default" and j[0]["product"]]
    assert len(default) == 1 and default[0][0]["arch"] == "gfx942" and default[0][0]["expects_matrix"]
    with BuildPool(1, timeout_s=300) as pool:
        (rec,) = cx.build_records(default, pool, BuildCache(tmp_path))
    assert rec["compiled"] is True and rec["error"] is None, rec
    assert rec["matrix_instr_count"] > 0 and all(k.startswith("v_mfma") for k in rec["matrix_instr_kinds"]), rec
    assert rec["registers"] > 0 and rec["occupancy_rule"] >= 1
    md = cx.summarize([rec], [row], HEADER)
    assert "| gfx942 | bf16 | 1 | 1 | 1 | 1 | 1 | 0 | 0 (0) | 0 of 1 (0) / 0 of 0 (0) |" in md


def test_the_summary_lists_failures_and_dot_kernels_without_matrix_instructions():
    cx = _script()
    base = {"problem": "p.py", "dtype": "bf16", "group": "g", "arch": "gfx942", "kernel": "k", "product": True,
            "expects_matrix": True}
    records = [base | {"role": "default", "schedule": "ig_a", "compiled": False, "error": "CompilationError: boom"},
               base | {"role": "seed1", "schedule": "ig_b", "compiled": True, "matrix_instr_count": 0,
                       "registers": 64, "occupancy_rule": 4, "spills": 3, "spills_to_memory": True},
               base | {"role": "seed2", "schedule": "ig_c", "compiled": True, "matrix_instr_count": 8,
                       "matrix_instr_kinds": ["v_mfma_f32_16x16x16_bf16"], "registers": 128, "occupancy_rule": 2,
                       "spills": 0}]
    md = cx.summarize(records, [{"problem": "q.py", "dtype": "bf16", "skipped": "no conv group"}], HEADER)
    assert "| gfx942 | bf16 | 3 | 3 | 2 | 2 | 1 | 1 | 1 (1) | 0 of 0 (0) / 1 of 1 (1) | 96.0 | 3.0 |" in md
    assert "## Failures (1)" in md and "ig_a k: CompilationError: boom" in md
    assert "## tl.dot kernels without the matrix instructions expected (1)" in md and "seed1 ig_b k" in md
    assert "## Spills (1;" in md and "q.py (bf16): no conv group" in md
    # fp32 ieee on NVIDIA: FMAs by design (no fp32 MMA), so not expected; tf32 is
    nv = base | {"arch": "sm_90", "work_dtype": "fp32", "compiled": True, "matrix_instr_count": 0}
    assert not cx.matrix_expected(nv | {"knobs": {"precision": "ieee"}})
    assert cx.matrix_expected(nv | {"knobs": {"precision": "tf32"}})
    assert cx.matrix_expected(nv | {"arch": "gfx942", "knobs": {"precision": "ieee"}})
