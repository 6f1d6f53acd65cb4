"""Predicted baselines in generate's report.md and in bench's rows, summary and bench.md (no generate run)."""

import pytest

from kerntailor.generate.bench import _row, render_bench, summarize
from kerntailor.generate.pipeline import GenerateResult
from kerntailor.generate.report import render_markdown

LABEL = "predicted (mi300x, baseline model v1)"


def _baselines(eager_us=300.0, compile_us=150.0, kernel_us=100.0) -> dict:
    out = {"label": LABEL, "eager_us": eager_us, "compile_us": compile_us, "eager_kernels": 3, "compile_kernels": 1}
    if kernel_us:
        out |= {"kernel_us": kernel_us, "speedup_vs_eager": eager_us / kernel_us,
                "speedup_vs_compile": compile_us / kernel_us}
    return out


def test_report_md_shows_the_predicted_baselines_under_their_label():
    report = {"problem": "p", "target": {"name": "mi300x", "arch": "gfx942"}, "mode": "predicted",
              "baselines": _baselines()}
    text = render_markdown(report)
    assert f"| what ({LABEL}) | time | kernels | vs this kernel (predicted) |" in text
    assert "| eager | 300.0 us | 3 | 3.00x |" in text and "| torch.compile | 150.0 us | 1 | 1.50x |" in text
    failed = render_markdown(report | {"baselines": {"label": "predicted (mi300x)", "error": "RuntimeError: x"}})
    assert "not estimated (RuntimeError: x)" in failed
    assert "Baselines" not in render_markdown({k: v for k, v in report.items() if k != "baselines"})


def _result(status: str, report: dict) -> GenerateResult:
    return GenerateResult("p", "mi300x", "predicted", status, "", None, None, report=report)


def test_bench_rows_keep_predicted_baselines_out_of_the_measured_columns(tmp_path):
    kernels = [{"group": "k0", "family": "reduction", "config": {}, "seconds": 100e-6}]
    row = _row(tmp_path / "level1" / "p.py", "level1", _result("generated", {"kernels": kernels,
                                                                            "baselines": _baselines()}))
    assert row["time_us"] == pytest.approx(100.0)
    assert row["predicted_eager_us"] == 300.0 and row["predicted_compile_us"] == 150.0
    assert row["baseline_label"] == LABEL
    assert "eager_us" not in row and "compile_us" not in row       # those columns hold measurements only
    # a measured row never takes predicted baselines, even if a report held them
    timing = {"timings": [{"name": n, "median_s": t} for n, t in
                          (("candidate", 1e-4), ("eager", 2e-4), ("compile", 3e-4))]}
    measured = _row(tmp_path / "level1" / "p.py", "level1", _result(
        "generated", {"kernels": kernels, "baselines": _baselines(), "verdict": {"passed": True, "timing": timing}}))
    assert measured["eager_us"] == pytest.approx(200.0) and "predicted_eager_us" not in measured


def test_bench_summary_and_markdown_give_predicted_speedups_apart():
    rows = [{"problem": "a", "level": "l1", "status": "generated", "correct": True, "time_us": 100.0,
             "predicted_eager_us": 300.0, "predicted_compile_us": 150.0, "baseline_label": LABEL,
             "label": "predicted for mi300x"},
            {"problem": "b", "level": "l1", "status": "generated", "correct": True, "time_us": 100.0,
             "predicted_eager_us": 110.0, "predicted_compile_us": 90.0, "baseline_label": LABEL,
             "label": "predicted for mi300x"},
            {"problem": "c", "level": "l1", "status": "library", "correct": None,
             "predicted_eager_us": 50.0, "predicted_compile_us": 40.0, "baseline_label": LABEL}]
    s = summarize(rows)
    assert s["fast_1.0_vs_predicted_eager"] == pytest.approx(2 / 3)
    assert s["fast_1.2_vs_predicted_eager"] == pytest.approx(1 / 3)
    assert s["fast_1.0_vs_predicted_compile"] == pytest.approx(1 / 3)
    assert s["geomean_speedup_vs_predicted_eager"] == pytest.approx((3.0 * 1.1 * 1.0) ** (1 / 3))
    assert s["geomean_speedup_vs_predicted_compile"] == pytest.approx((1.5 * 0.9 * 1.0) ** (1 / 3))
    assert "fast_1.0_vs_eager" not in s and "geomean_speedup_vs_eager" not in s   # nothing measured
    assert s["predicted_baselines_label"] == LABEL

    text = render_bench({"suite": "s", "target": "mi300x", "dtype": "as written", "date": "d", "rows": rows,
                         "summary": {"overall": s}})
    assert "| time µs | eager µs | compile µs | predicted eager µs | predicted compile µs | floor µs |" in text
    assert "| a | l1 | generated | yes | 100.0 | - | - | 300.0 | 150.0 |" in text
    assert f"Predicted speed-ups, {LABEL}" in text
    assert "| overall | 3 | 0.667 | 0.333 | 0.333 | 0.333 | 0.333 | 0.000 | 1.489 | 1.105 |" in text


def test_a_library_paths_report_says_whose_verdict_it_shows():
    """On the library path the verdict is the generated candidate's, not kernel.py's (the emitted library module):
    a FAIL under a plain "Referee:" read as the shipped file's (2026-12-06)."""
    verdict = {"passed": False, "mode": "cpu interpreter", "reason": "edge:rows: [output] forward returned outputs"}
    base = {"problem": "p", "target": {"name": "mi300x", "arch": "gfx942"}, "mode": "predicted", "verdict": verdict}
    library = render_markdown(base | {"status": "library", "reason": "no schedule passed the referee"})
    assert "Referee on the generated candidate, not the emitted library path: **FAIL**" in library
    generated = render_markdown(base | {"status": "generated", "verdict": verdict | {"passed": True}})
    assert "\nReferee: **PASS** (cpu interpreter)" in generated
