"""`kerntailor bench` over a tiny suite and `kerntailor recheck` after a toolchain change (CPU, predicted)."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from helpers import L2, check_page_numbers
from kerntailor.generate import GenerateSettings
from kerntailor.generate.bench import bench, problem_part, summarize
from kerntailor.generate.recheck import recheck

DATA = Path(__file__).parent / "data" / "codegen_fused"


@pytest.fixture
def suite(tmp_path):
    level = tmp_path / "suite" / "level1"
    level.mkdir(parents=True)
    shutil.copy(DATA / "tiny_softmax.py", level)
    shutil.copy(DATA / "tiny_conv2d.py", level)   # a lone transposed convolution: codegen refuses it → library path
    return tmp_path / "suite"


@pytest.mark.capture
def test_problem_parts_come_from_the_families_compute_bound_flag():
    """A convolution (a library group: a transposed one codegen refuses) is compute-bound like a matmul or attention."""
    assert problem_part(DATA / "tiny_softmax.py") == "memory-bound"
    assert problem_part(DATA / "tiny_conv2d.py") == "other"
    assert problem_part(L2 / "gemm_bias_relu.py") == "gemm"


def test_summary_arithmetic():
    rows = [{"level": "a", "status": "generated", "correct": True, "time_us": 10.0, "eager_us": 20.0,
             "compile_us": 11.0, "floor_us": 8.0},
            {"level": "a", "status": "generated", "correct": False, "time_us": 5.0, "eager_us": 20.0,
             "compile_us": 20.0, "floor_us": 4.0},
            {"level": "a", "status": "library", "correct": False}]
    s = summarize(rows)
    assert s["problems"] == 3 and s["correct"] == 1 and s["library"] == 1
    assert s["fast_1.0_vs_eager"] == pytest.approx(1 / 3)   # the wrong one is never fast
    assert s["fast_1.5_vs_eager"] == pytest.approx(1 / 3)
    assert s["fast_1.2_vs_compile"] == 0.0                   # 11/10 = 1.1
    assert s["geomean_speedup_vs_eager"] == pytest.approx((2.0 * 4.0 * 1.0) ** (1 / 3))  # library = 1.0
    assert s["geomean_speedup_vs_eager_generated"] == pytest.approx((2.0 * 4.0) ** 0.5)
    assert s["geomean_floor_over_time"] == pytest.approx(0.8)
    assert s["median_time_over_floor"] == pytest.approx(1.25)      # both rows at 10/8 and 5/4
    assert s["kernelbench_correct"] == pytest.approx(2 / 3)         # the library path is the reference: correct
    assert s["generated_share"] == pytest.approx(2 / 3)
    # a library path whose reference failed its own referee wrote no kernel.py: not correct
    failed = {"level": "a", "status": "library", "correct": False, "library_emitted": False}
    assert summarize(rows + [failed])["kernelbench_correct"] == pytest.approx(2 / 4)
    old = {"level": "a", "status": "library", "correct": False,   # a row from before the field: its message
           "message": "library path NOT emitted (the reference fails its own referee: ...)"}
    assert summarize(rows + [old])["kernelbench_correct"] == pytest.approx(2 / 4)


def test_a_mixed_module_counts_as_generated_with_its_share_of_generated_groups():
    rows = [{"level": "a", "status": "generated", "correct": True, "mixed": True, "generated_groups": 1, "groups": 2},
            {"level": "a", "status": "generated", "correct": True, "mixed": False, "generated_groups": 3,
             "groups": 3},
            {"level": "a", "status": "library", "correct": False, "mixed": False, "generated_groups": 0,
             "groups": 0}]
    s = summarize(rows)
    assert s["generated"] == 2 and s["mixed"] == 1 and s["library"] == 1
    assert s["generated_share"] == pytest.approx(2 / 3) and s["kernelbench_correct"] == pytest.approx(1.0)
    assert s["generated_groups_share"] == pytest.approx(4 / 5)   # over the generated modules' groups


@pytest.mark.interpreter
def test_bench_then_recheck(suite, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("kerntailor.generate.pipeline.detect_local_target", lambda: None)
    out = tmp_path / "out"
    settings = GenerateSettings(target="mi300x", out_dir=out, max_candidates=3, budget_s=20)
    result = bench(suite, settings)
    rows = {r["problem"]: r for r in result["rows"]}
    assert rows["tiny_softmax"]["status"] == "generated" and rows["tiny_softmax"]["correct"]
    assert rows["tiny_softmax"]["label"] == "predicted for mi300x"
    (kernel,) = rows["tiny_softmax"]["kernels"]          # what would run on the MI300X, from its gfx942 build
    assert kernel["config"] and kernel["isa"]["vgprs"] > 0 and "occupancy_rule" in kernel["isa"]
    assert rows["tiny_conv2d"]["kernels"] == []
    assert rows["tiny_conv2d"]["status"] == "library" and not rows["tiny_conv2d"]["correct"]
    assert result["summary"]["overall"]["correct"] == 1
    # predicted mode: eager and torch.compile predicted for the MI300X, in their own labelled columns
    for row in rows.values():
        assert row["predicted_eager_us"] > 0 and row["predicted_compile_us"] > 0
        assert row["baseline_label"].startswith("predicted (mi300x, ") and "eager_us" not in row
    overall = result["summary"]["overall"]
    assert overall["geomean_speedup_vs_predicted_eager"] > 0 and "fast_1.0_vs_predicted_compile" in overall
    assert json.loads((out / "bench.json").read_text())["summary"]["level1"]["problems"] == 2
    assert "tiny_softmax" in (out / "bench.md").read_text()
    assert "Predicted speed-ups, predicted (mi300x, " in (out / "bench.md").read_text()
    assert (out / "level1" / "tiny_softmax" / "kernel.py").exists()
    if importlib.util.find_spec("matplotlib"):   # the report extra: the pages beside bench.md and report.md
        written = json.loads((out / "bench.json").read_text())
        check_page_numbers((out / "bench.html").read_text(), written,
                           {f"rows/{i}/predicted_eager_us" for i in range(2)}
                           | {f"rows/{i}/time_us" for i, r in enumerate(written["rows"]) if r.get("time_us")})
        problem = out / "level1" / "tiny_softmax"
        check_page_numbers((problem / "report.html").read_text(), json.loads((problem / "report.json").read_text()),
                           {"kernels/0/seconds", "baselines/eager_us"})

    # nothing is stale under the same toolchain
    assert recheck() == []
    # a new toolchain: the stored winner is judged again and still passes
    from kerntailor.store import keys

    real = keys.toolchain_fingerprint()
    newer = type(real)(**{**real.to_dict(), "triton": real.triton + "+next"})
    monkeypatch.setattr("kerntailor.store.toolchain_fingerprint", lambda *a, **k: newer)
    rows = recheck()   # the kernel and the library-path decision are both stored winners
    assert sorted(r.problem for r in rows) == ["tiny_conv2d", "tiny_softmax"]
    assert all(r.passed and not r.regression for r in rows), [r.reason for r in rows]
    assert recheck() == []   # rechecked under the new toolchain: nothing left


@pytest.mark.interpreter
def test_bench_parallel_jobs_give_the_same_rows(suite, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    settings = GenerateSettings(target="mi300x", out_dir=tmp_path / "out", max_candidates=2, budget_s=20)
    result = bench(suite, settings, jobs=2)
    assert result["jobs"] == 2 and result["wall_s"] > 0
    assert [r["problem"] for r in result["rows"]] == ["tiny_conv2d", "tiny_softmax"]   # suite order, not finish order
    rows = {r["problem"]: r for r in result["rows"]}
    assert rows["tiny_softmax"]["status"] == "generated" and rows["tiny_softmax"]["correct"]
    assert rows["tiny_conv2d"]["status"] == "library"
    # where the wall time went: the pipeline's stages, and the referee's phases inside "judge"
    soft = rows["tiny_softmax"]
    assert set(soft["stage_s"]) >= {"capture", "plan", "search", "judge"}
    assert {"start", "construct", "reference", "run"} <= set(soft["judge_phase_s"])
    assert sum(soft["judge_phase_s"].values()) <= soft["stage_s"]["judge"] + 1e-3
    assert sum(soft["stage_s"].values()) <= soft["seconds"] + 0.1
    # the journal a cut bench would leave: each problem's steps in order, seconds since it was queued
    steps = [json.loads(line) for line in (tmp_path / "out" / "bench.progress.jsonl").read_text().splitlines()]
    mine = [s for s in steps if s["problem"] == "tiny_softmax"]
    assert [s["stage"] for s in mine[:3]] == ["queued", "admitted", "capture"]
    assert any(s["stage"].startswith("search ") and s["done"] for s in mine) and mine[-1]["stage"] == "verify"
    # inside the judgement, the referee's cases: where it is, and how many of the planned cases it has judged
    # (a slow machine may skip the last edge cases under the interpreter's allowance: counted, not judged)
    judged = [s for s in mine if s["stage"] == "verify" and s.get("detail", "").startswith("judged ")]
    assert judged and judged[-1]["total"] > 1 and mine[-1]["done"] == mine[-1]["total"] == judged[-1]["total"]
    assert [s["done"] for s in judged] == list(range(1, len(judged) + 1))
    assert len(judged) == judged[-1]["total"] or mine[-1]["detail"].startswith("skipped edge")
    assert any("variant odd" in s.get("detail", "") and "reference" in s["detail"] for s in mine)
    assert [s["t_s"] for s in mine] == sorted(s["t_s"] for s in mine) and mine[-1]["t_s"] <= soft["seconds"]
    with pytest.raises(Exception, match="--jobs"):
        bench(suite, settings, jobs=0)


def test_gpu_lock_is_exclusive(tmp_path, monkeypatch):
    import fcntl
    import os

    from kerntailor.measure import gpulock

    monkeypatch.setattr(gpulock, "lock_path", lambda device: tmp_path / "gpu.lock")
    with gpulock.gpu_lock(None) as path:
        fd = os.open(path, os.O_RDWR)
        with pytest.raises(BlockingIOError):   # another holder cannot take it while the block runs
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)   # released after the block
    os.close(fd)


def test_a_bug_on_one_problem_is_a_row_not_the_end_of_the_suite(suite, tmp_path, monkeypatch):
    def broken(path, settings, progress=None):
        if "softmax" in str(path):
            raise KeyError("pool config has no knob 'RBLOCK'")
        raise RuntimeError("second\nline")

    monkeypatch.setattr("kerntailor.generate.bench.generate", broken)
    result = bench(suite, GenerateSettings(target="mi300x", out_dir=tmp_path / "out"))
    rows = {r["problem"]: r for r in result["rows"]}
    assert rows["tiny_softmax"]["status"] == "error" and not rows["tiny_softmax"]["correct"]
    assert rows["tiny_softmax"]["error"] == "internal error: KeyError: \"pool config has no knob 'RBLOCK'\""
    assert rows["tiny_conv2d"]["error"] == "internal error: RuntimeError: second"
    assert len((tmp_path / "out" / "bench.rows.jsonl").read_text().splitlines()) == 2


def test_only_selects_by_exact_name_path_or_glob_never_substring(tmp_path):
    from kerntailor.errors import KerntailorError
    from kerntailor.generate.bench import select

    names = ["level1/relu.py", "level1/leaky_relu.py", "level2/conv_relu.py", "level2/gemm_relu_add.py",
             "level1/softmax.py"]
    for n in names:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_text("")
    paths = sorted(tmp_path / n for n in names)

    def chosen(*only):
        return sorted(p.relative_to(tmp_path).as_posix() for p in select(paths, tmp_path, list(only)))

    assert chosen("relu") == ["level1/relu.py"]                       # not leaky_relu, not conv_relu
    assert chosen("level1/relu") == chosen("level1/relu.py") == ["level1/relu.py"]
    assert chosen("*relu*") == sorted(n for n in names if "relu" in n)
    assert chosen("level2/*") == ["level2/conv_relu.py", "level2/gemm_relu_add.py"]
    assert chosen("relu", "softmax") == ["level1/relu.py", "level1/softmax.py"]
    with pytest.raises(KerntailorError, match="'relux' matches no problem"):
        chosen("relu", "relux")


def test_library_rows_are_labelled_library_neither_correct_nor_wrong():
    from kerntailor.generate.bench import render_bench

    rows = [{"problem": "sdpa", "level": "level1", "status": "library", "correct": None, "label": "x"},
            {"problem": "relu", "level": "level1", "status": "generated", "correct": True, "label": "x"},
            {"problem": "bad", "level": "level1", "status": "generated", "correct": False, "label": "x"},
            {"problem": "boom", "level": "level1", "status": "error", "correct": False, "error": "e"}]
    result = {"suite": "s", "target": "mi300x", "dtype": "fp32", "date": "d", "rows": rows,
              "summary": {"overall": summarize(rows)}}
    table = {line.split("|")[1].strip(): line.split("|")[4].strip() for line in render_bench(result).splitlines()
             if line.startswith("| ") and line.count("|") == 10 and "problem" not in line}
    assert table == {"sdpa": "library", "relu": "yes", "bad": "no", "boom": "-"}
    assert summarize(rows)["correct"] == 1


def test_problems_are_stored_by_their_resolved_path(monkeypatch):
    """recheck loads a stored problem again from wherever it is run: the key holds the resolved path."""
    from kerntailor.problem import load_problem
    from kerntailor.store import ProblemKey

    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(root)
    key = ProblemKey.of(load_problem("problems/level1/relu.py"), "mi300x")
    assert key.path == str(root / "problems" / "level1" / "relu.py")


def test_a_correct_generated_module_slower_than_the_library_counts_as_kept_not_generated():
    rows = [{"level": "a", "status": "generated", "correct": True, "time_us": 10.0, "compile_us": 11.0},
            {"level": "a", "status": "library", "correct": None, "time_us": 8.0, "compile_us": 8.0,
             "rejected_candidate_us": 10.0},   # passed the referee, 1.25x slower than torch.compile
            {"level": "a", "status": "library", "correct": None, "time_us": 4.0, "compile_us": 4.0}]
    s = summarize(rows)
    assert s["generated"] == 1 and s["kept_slower"] == 1
    assert s["passed_referee_share"] == pytest.approx(2 / 3) and s["generated_share"] == pytest.approx(1 / 3)
    assert s["geomean_kept_vs_library"] == pytest.approx(0.8)
    assert s["fast_1.0_vs_compile"] == pytest.approx(1 / 3)   # the kept module is never counted fast


def test_verify_watch_reports_the_referee_case_count_and_where_it_waits():
    from kerntailor.generate.run import verify_watch

    lines = []
    watch = verify_watch(lambda *a: lines.append(a), "verify library")
    for e in ({"event": "cases", "total": 3},
              {"event": "progress", "variant": "odd", "draw": "normal", "step": "run 1"},
              {"event": "case", "variant": "odd", "draw": "normal"}, {"event": "lock_wait"},
              {"event": "edge_skipped", "reason": "edge:int32: not judged: too big"},
              {"event": "retry", "wait_s": 15.0},
              {"event": "case", "variant": "small", "draw": "special"}, {"event": "case", "variant": "x"}):
        watch(e)
    assert [(s, d, t) for s, d, t, _, _ in lines] == [("verify library", n, 3) for n in (0, 1, 1, 2, 2, 3, 3)]
    details = [x[4] for x in lines]
    assert details[:2] == ["variant odd, draw normal, step run 1", "judged variant odd, draw normal"]
    assert details[2] == "waiting for the GPU's lock" and details[3].startswith("skipped edge:int32")
    assert "ran out of GPU memory" in details[4]   # a case past the planned count is never reported above it
    # an edge case past its interpreter allowance is skipped with the ones after it (never run): all are counted
    lines.clear()
    watch = verify_watch(lambda *a: lines.append(a))
    for e in ({"event": "cases", "total": 4}, {"event": "case", "variant": "odd", "draw": "normal"},
              {"event": "edge_skipped", "reason": "edge:wide: no answer within 90 s; edge:tall not run after it",
               "cases": 2}):
        watch(e)
    assert [(s, d, t) for s, d, t, _, _ in lines] == [("verify", 1, 4), ("verify", 3, 4)]


def test_a_row_whose_convolutions_are_the_librarys_takes_the_librarys_floor():
    """A library path or a module with library convolutions runs them on TF32 (PyTorch's default): its row's floor
    is TimingReport.library_floor_s (the ieee one kept beside it), which the time cannot beat by rate alone (level-2
    32 on the H100: 3126 us under an ieee floor of 11,896); a generated module keeps the ieee floor."""
    from types import SimpleNamespace

    from kerntailor.generate.bench import _row

    timing = {"floor_s": 11896e-6, "library_floor_s": 1600e-6, "floor_label": "read 3.13 TB/s",
              "timings": [{"name": n, "median_s": t * 1e-6} for n, t in
                          (("candidate", 3126.0), ("eager", 8163.0), ("compile", 3150.0))]}
    verdict = SimpleNamespace(to_dict=lambda: {"passed": True, "timing": timing})

    def row(status, **report):
        result = SimpleNamespace(verdict=verdict, status=status, mode="measured", message="", target="h100",
                                 report={"kernels": [], "library": "torch.compile", **report})
        return _row(Path("level2/32_Conv2d_Scaling_Min.py"), "level2", result)

    library, mixed, knob = row("library"), row("generated", mixed=True), row(
        "generated", kernels=[{"family": "conv", "config": {"LIBRARY": 1}}])
    for r in (library, mixed, knob):
        assert r["floor_us"] == pytest.approx(1600.0) and r["ieee_floor_us"] == pytest.approx(11896.0)
        assert "tf32 rate" in r["floor_label"] and r["floor_us"] < r["time_us"]
    generated = row("generated", kernels=[{"family": "conv", "config": {"precision": "ieee"}}])
    assert generated["floor_us"] == pytest.approx(11896.0) and "ieee_floor_us" not in generated
