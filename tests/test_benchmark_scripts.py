"""The benchmark scripts whose output is committed data stay runnable: merge_bench.py (merging bench passes),
gemm_nt_probe.py's CPU smoke mode (its kernels' index arithmetic under the interpreter) and
fma_contraction_check.py's module (the schedule it judges still gets contraction off where it should) and
tf32x3_probe.py's, pool_probe.py's and attn_probe.py's CPU smoke modes; attention.py's plan (--dry-run)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _row(problem, level, status, time_us, eager_us, compile_us, floor_us, **extra):
    return {"problem": problem, "level": level, "status": status, "correct": status == "generated",
            "time_us": time_us, "eager_us": eager_us, "compile_us": compile_us, "floor_us": floor_us} | extra


@pytest.mark.integration
def test_merge_bench_takes_the_later_pass_and_keeps_each_rows_commit(tmp_path):
    first, second, again = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    first.write_text("\n".join(json.dumps(r) for r in [
        _row("relu", "level1", "library", 10.0, 10.0, 11.0, 10.0),
        _row("pool", "level1", "error", None, None, None, None)]) + "\n")
    second.write_text(json.dumps(_row("pool", "level1", "generated", 5.0, 10.0, 8.0, 4.0)) + "\n")
    again.write_text(json.dumps({"problem": "relu", "served_from_store": True, "seconds": 0.1}) + "\n")
    out = tmp_path / "m.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "merge_bench.py"), "--out", str(out),
                    "--md", str(tmp_path / "m.md"), "--target", "h200", "--dtype", "fp32", "--part", "memory-bound",
                    "--machine", "test", "--source", str(first), "c1", "cmd one", "--source", str(second), "c2",
                    "cmd two", "--again", str(again), "c1", "again"], check=True, cwd=ROOT)
    result = json.loads(out.read_text())
    rows = {r["problem"]: r for r in result["rows"]}
    assert rows["pool"]["status"] == "generated" and rows["pool"]["commit"] == "c2"
    assert rows["relu"]["commit"] == "c1" and rows["relu"]["command"] == "cmd one"
    overall = result["summary"]["overall"]
    assert overall["problems"] == 2 and overall["correct"] == 1
    assert overall["geomean_speedup_vs_compile"] == pytest.approx((1.1 * 1.6) ** 0.5)
    assert overall["median_time_over_floor"] == pytest.approx(1.125)   # 1.0 and 1.25
    assert result["again"][0]["served_from_store"] == 1
    assert "median time/floor" in (tmp_path / "m.md").read_text()


@pytest.mark.interpreter
def test_gemm_nt_probe_smoke_checks_every_variant():
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gemm_nt_probe.py"), "--smoke"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    kernels = [r for r in rows if r["variant"] not in ("eager", "torch.compile")]
    assert {r["variant"] for r in kernels} >= {"pointer", "pointer_even", "tma", "tma_persist",
                                               "nn_pointer_no_epilogue"}
    assert all("error" not in r and r["rel_err"] < 1e-5 for r in kernels), kernels


def test_fma_contraction_check_builds_the_schedule_it_judges():
    import importlib.util

    from helpers import prepared
    from kerntailor.codegen import generate_module
    from kerntailor.plan.fusion import Plan

    spec_ = importlib.util.spec_from_file_location("fma_check", ROOT / "benchmarks" / "fma_contraction_check.py")
    check = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(check)
    spec, _, gen, plan = prepared(ROOT / "tests" / "data" / "codegen_fused" / "decode_scores.py")
    plan = Plan(plan.launch_order())
    module = generate_module(spec, gen, plan, check.schedules_of(plan, check.SCHEDULE), "check", "sm_90")
    flagged = [k.group for k in module.kernels if ("enable_fp_fusion", False) in k.options]
    # the group's kernel and its long-row split's two (codegen/kernel.py's LongRowSplit): one group, one hazard
    (k1,) = (k for k in module.kernels if k.group == "k1")
    assert flagged == ["k1"] and len(k1.every_kernel) == 3
    assert module.source.count(", enable_fp_fusion=False") == len(k1.every_kernel)


@pytest.mark.interpreter
def test_tf32x3_probe_smoke_runs_its_schedules_correctly():
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tf32x3_probe.py"), "--smoke"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 2 and all("error" not in r and r["rel_err"] < 1e-5 for r in rows), rows


@pytest.mark.interpreter
def test_pool_probe_smoke_checks_every_variant(tmp_path):
    """KernelBench 41 and 44 at a small length in bf16: the window and the span variants all match eager, and the
    default schedule is the span one with 2 warps (the probe's "span" line)."""
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pool_probe.py"), "--smoke", "--dtypes", "bf16",
                           "--out", str(tmp_path / "pool.json")], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads((tmp_path / "pool.json").read_text())["rows"]
    assert [r["problem"] for r in rows] == ["41_Max_Pooling_1D", "44_Average_Pooling_1D"]
    for r in rows:
        assert set(r["knobs"]) == {"default", "window", "span", "span_w4", "span_512"}, r
        assert r["knobs"]["default"] == r["knobs"]["span"], r
        assert all(r[f"rel_err_{v}"] < 1e-2 for v in ("window", "span", "span_w4", "span_512")), r


@pytest.mark.interpreter
def test_attn_probe_smoke_checks_the_masked_shapes(tmp_path):
    """attn_probe.py's two masked shapes (a per-head additive bias, a (B, 1, 1, L) key-padding mask) at their small
    variants in bf16: the default schedule and the first sm_90 tile both generate, run and match eager; the bias's
    tile takes 2 stages (at 3, two buffers of its 128 x 128 tile beside K, V and Q pass the 227 KiB of sm_90)."""
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "attn_probe.py"), "--smoke", "--only",
                           "bias,padding", "--out", str(tmp_path / "attn.json")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = json.loads((tmp_path / "attn.json").read_text())["rows"]
    assert [(r["problem"], r["schedule"]) for r in rows] == [
        ("bias", "default 128x64/8w/2s"), ("bias", "128x128/8w/2s"),
        ("padding", "default 128x64/8w/2s"), ("padding", "128x128/8w/3s")], rows
    assert all(r["ok"] and r["in_space"] and r["rel_err"] < 1.6e-2 for r in rows), rows


@pytest.mark.interpreter
def test_graph_swaps_smoke_shows_the_repeated_heads_the_fix_removes(tmp_path):
    """graph_swaps.py (issue #21) on Llama decode's small variant, two of its cache concatenations swapped with
    generated kernels under the interpreter: as graph mode built it in call 4 every SDPA reading a kernel lost
    enable_gqa and copied its repeated heads; as it builds it now none does, and the output equals the lean graph's."""
    pytest.importorskip("transformers")
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    out = tmp_path / "swaps.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "graph_swaps.py"),
                           "problems/models/llama3_2_1b_decode.py", "--dtype", "bf16", "--groups", "k13,k14",
                           "--out", str(out)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert [g["group"] for g in doc["groups"]] == ["k13", "k14"], doc["groups"]
    v = doc["variants"]
    assert (v["swapped_unfixed"]["sdpa_enable_gqa"], v["swapped_unfixed"]["repeat_copies"]) == (3, 2), v
    assert (v["swapped"]["sdpa_enable_gqa"], v["swapped"]["repeat_copies"]) == (4, 0), v
    assert v["swapped"]["aten_ops"] == v["lean"]["aten_ops"] - 2, v   # 4 cats -> 2 kernel calls
    assert v["swapped"]["equals_lean"] and v["swapped_unfixed"]["equals_lean"], v


@pytest.mark.integration   # runs the script in a child process
def test_baseline_prediction_compares_each_measured_problem_with_its_prediction(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    rows = [{"path": "problems/level1/relu.py", "eager_us": 500.0, "compile_us": 480.0, "command": "bench run A"},
            {"path": "problems/level1/relu.py", "eager_us": 520.0, "compile_us": 490.0, "command": "bench run A"},
            {"path": "problems/level1/matmul_square.py", "eager_us": 180.0, "compile_us": 181.0},
            {"path": "problems/level1/relu.py", "status": "error"}]          # no times: not compared
    (data / "bench_x_h200_2026-12-01_bf16.json").write_text(json.dumps({"dtype": None, "rows": rows}))
    out = tmp_path / "out"
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "benchmarks/baseline_prediction.py", "--data", str(data), "--out-dir", str(out)],
                   cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=300)
    (report_file,) = out.glob("baseline_prediction_h200_*.json")
    report = json.loads(report_file.read_text())
    assert report["command"].startswith("benchmarks/baseline_prediction.py") and report["toolchain"]["torch"]
    by = {r["problem"]: r for r in report["rows"]}
    assert set(by) == {"relu", "matmul_square"} and by["relu"]["dtype"] == "bf16"   # the dtype from the file name
    assert by["relu"]["runs"] == 2 and by["relu"]["measured_eager_us"] == 510.0       # the median of its runs
    assert by["relu"]["label"].startswith("predicted (h200, ")
    eager = report["summary"]["datasheet peaks (predicted mode)"]["eager"]
    ratios = sorted(r["predicted_eager_us"] / r["measured_eager_us"] for r in report["rows"])
    assert eager["n"] == 2 and eager["median_ratio"] == pytest.approx(sum(ratios) / 2)
    assert eager["worst_ratio"] == pytest.approx(max(max(r, 1 / r) for r in ratios))
    assert "| relu | bf16 | 510.0 |" in report_file.with_suffix(".md").read_text()


@pytest.mark.slow   # two captures and eight generations: ~12 s on 2 cores
def test_attention_bench_dry_run_plans_each_config_and_names_the_ones_that_fail(tmp_path, capsys):
    """benchmarks/attention.py --dry-run (CPU): each config generated, a config outside the space still planned
    (named so), one that is no schedule a row with its error; two dtypes, one JSON each."""
    import importlib.util

    spec_ = importlib.util.spec_from_file_location("attention_bench", ROOT / "benchmarks" / "attention.py")
    bench = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(bench)
    assert bench.parse_config("128x64/8w/3s/tma") == {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8,
                                                      "num_stages": 3, "TMA": 1}
    assert bench.main(["--configs", "12x64", "--out", str(tmp_path)]) == 2
    code = bench.main(["--dtype", "bf16,fp32", "--only", "sdpa", "--configs",
                       "128x128/8w/3s/tma,256x64/8w/3s,12x64/4w/2s", "--dry-run", "--out", str(tmp_path)])
    assert code == 0
    bf16 = json.loads((tmp_path / "attention_bf16_plan.json").read_text())["results"][0]["candidates"]
    rows = {c["label"]: c for c in bf16}
    assert list(rows) == ["default", "128x128/8w/3s/tma", "256x64/8w/3s (outside the space)", "12x64/4w/2s"]
    assert all(rows[k]["source_chars"] > 0 for k in list(rows)[:3]) and "power of two" in rows["12x64/4w/2s"]["error"]
    fp32 = json.loads((tmp_path / "attention_fp32_plan.json").read_text())["results"][0]["candidates"]
    assert all(c["knobs"]["k0"]["precision"] == "ieee" for c in fp32 if "knobs" in c)


@pytest.mark.integration   # runs the script in a child process: two captures, their groups' kernels, one mending
def test_codegen_refusals_records_each_refused_group_and_what_generate_makes_of_it(tmp_path):
    """benchmarks/codegen_refusals.py (the committed data in benchmarks/data/cpu_2026-12-05/): a refusal is a row
    with its group, family, member count, named member and message; a file with one has its mended kernel count; the
    tally groups messages by pattern, names and numbers as #."""
    data = ROOT / "tests" / "data"
    out = tmp_path / "refusals"
    subprocess.run([sys.executable, "benchmarks/codegen_refusals.py", str(data / "mended" / "scan_then_last.py"),
                    str(data / "codegen_fused" / "tiny_softmax.py"), "--dtype", "fp32", "--out", str(out)],
                   check=True, cwd=ROOT, env=os.environ | {"PYTHONPATH": str(ROOT / "src")}, capture_output=True)
    result = json.loads(out.with_suffix(".json").read_text())
    rows = {r["file"]: r for r in result["rows"]}
    clean = rows["codegen_fused/tiny_softmax.py"]
    assert clean["status"] == "scanned" and clean["groups"] >= 1 and clean["refusals"] == []
    scan = rows["mended/scan_then_last.py"]
    (refusal,) = scan["refusals"]
    assert refusal["family"] == "scan" and refusal["members"] > 1 and refusal["node"] in refusal["message"]
    assert scan["mended"] == {"kernels": scan["groups"] + 1, "library_groups": 0}   # the epilogue cut off
    (entry,) = result["tally"]
    assert entry["files"] == ["mended/scan_then_last.py"] and not any(c.isdigit() for c in entry["pattern"])
    assert entry["pattern"] in out.with_suffix(".md").read_text()


def test_rows_summary_names_the_problems_a_cut_bench_left_in_flight():
    """gpu_calls/rows_summary.py with the progress journal: a problem with no row is named with its last step."""
    import importlib.util

    spec_ = importlib.util.spec_from_file_location("rows_summary", ROOT / "benchmarks/gpu_calls/rows_summary.py")
    summary = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(summary)
    steps = [{"problem": "a", "stage": "queued", "done": None, "total": None, "t_s": 0.0},
             {"problem": "b", "stage": "queued", "done": None, "total": None, "t_s": 0.0},
             {"problem": "b", "stage": "admitted", "done": None, "total": None, "t_s": 88.9},
             {"problem": "b", "stage": "search k3", "done": 2, "total": 3, "t_s": 140.5}]
    assert summary.in_flight([{"problem": "a"}], steps) == ["b: cut at search k3 (2/3), 140.5 s after it was queued"]
    assert summary.in_flight([{"problem": "a"}, {"problem": "b"}], steps) == []
    steps.append({"problem": "b", "stage": "verify", "done": 4, "total": 17, "t_s": 151.0,
                  "detail": "waiting for the GPU's lock"})
    assert summary.in_flight([{"problem": "a"}], steps) == [
        "b: cut at verify (4/17): waiting for the GPU's lock, 151.0 s after it was queued"]
