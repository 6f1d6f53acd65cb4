"""Every place that prints a floor names which one: reads and writes at their measured rates, the copy rate (and
why), or the datasheet's one rate. Unit tier: report dicts built by hand, no GPU."""

from __future__ import annotations

from pathlib import Path

from kerntailor.generate.bench import _row
from kerntailor.generate.pipeline import GenerateResult
from kerntailor.generate.report import render_markdown
from kerntailor.verify import render_timing

SPLIT_LABEL = "read 4.70 TB/s, write 4.50 TB/s, measured on NVIDIA H200 2026-12-02"


def _timing(**extra) -> dict:
    row = {"name": "candidate", "median_s": 250e-6, "q1_s": 249e-6, "q3_s": 251e-6, "min_s": 248e-6,
           "max_s": 260e-6, "iqr_s": 2e-6, "runs": 40, "time_over_floor": 1.1, "pct_of_roofline": 90.9}
    return {"device_name": "NVIDIA H200", "torch_version": "2.11", "triton_version": "3.6.0", "date": "2026-12-02",
            "timings": [row, {**row, "name": "eager", "median_s": 500e-6}], "floor_s": 228e-6,
            "physics_floor_s": 224e-6, "physics_source": "datasheet (NVIDIA H200)", "flops": 0.0,
            "min_bytes": 1 << 30, "dtype": "fp32", "matrix": False, "input_sets": 1, "compile_mode": "default",
            "ceilings": {"copy_bandwidth": 4.22e12, "matmul_flops": {"fp32": 5e13}}, "notes": []} | extra


def test_verify_output_names_the_split_floor_and_reads_older_reports():
    assert f"ceilings {SPLIT_LABEL}; matmul fp32 50 TFLOP/s" in render_timing(_timing(floor_label=SPLIT_LABEL))
    assert "ceilings 4.22 TB/s copy; matmul" in render_timing(_timing())       # a report from before the split


def test_report_markdown_names_the_floor():
    report = {"problem": "huber_loss", "target": {"name": "h200", "arch": "sm_90"}, "mode": "measured",
              "verdict": {"passed": True, "mode": "gpu", "timing": _timing(floor_label=SPLIT_LABEL)}}
    assert f"| roofline floor (measured ceilings: {SPLIT_LABEL}) | 228" in render_markdown(report)
    report["verdict"]["timing"] = _timing()
    assert "| roofline floor (measured ceilings: copy bandwidth) |" in render_markdown(report)


def test_bench_rows_name_the_floor(tmp_path):
    def result(verdict: dict | None) -> GenerateResult:
        return GenerateResult("huber_loss", "h200", "measured", "generated", "", Path(tmp_path / "k.py"),
                              Path(tmp_path / "r.json"), report={"floor": {"us": 214.0}, "verdict": verdict})

    measured = _row(Path("huber_loss.py"), "level1", result({"passed": True, "timing": _timing(
        floor_label=SPLIT_LABEL)}))
    assert measured["floor_us"] == 228.0 and measured["floor_label"] == f"measured ceilings: {SPLIT_LABEL}"
    predicted = _row(Path("huber_loss.py"), "level1", result(None))
    assert predicted["floor_us"] == 214.0
    assert predicted["floor_label"] == "predicted from vendor peaks (one datasheet bandwidth for reads and writes)"
