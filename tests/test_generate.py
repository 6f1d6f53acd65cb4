"""`kerntailor generate` end to end on CPU: search (cross-compile + analytical model, "predicted" mode),
emit, referee under the interpreter, store, report; the cache hit on a second run; the library path
for a problem codegen does not cover; the CLI.

Small problems of our own (tests/data/codegen_fused/) keep every run to a few seconds. KERNTAILOR_HOME
points at a temporary directory in every test, so nothing here touches the user's store or build cache.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from kerntailor.generate import GenerateSettings, generate
from kerntailor.problem import load_problem
from kerntailor.verify import verify_candidate

DATA = Path(__file__).parent / "data" / "codegen_fused"
ROOT = Path(__file__).resolve().parents[1]
SOFTMAX = DATA / "tiny_softmax.py"
LINEAR = DATA / "tiny_linear_relu.py"
CONV = DATA / "tiny_conv2d.py"   # an anchor codegen refuses (a transposed convolution), alone



@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("KERNTAILOR_HOME", str(home))
    return home


@pytest.fixture
def no_local_gpu(monkeypatch):
    """Predicted mode even on a machine whose GPU is the target."""
    import kerntailor.generate.pipeline as pipeline

    monkeypatch.setattr(pipeline, "detect_local_target", lambda *a, **k: None)


def settings(tmp_path: Path, **kw) -> GenerateSettings:
    base = dict(target="mi300x", out_dir=tmp_path / "out", max_candidates=4, budget_s=30,
                store_path=tmp_path / "store.sqlite")
    return GenerateSettings(**(base | kw))


def _load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"kt_test_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _open_in_this_process(path: Path) -> list[str]:
    """This process's descriptors of `path` and its -wal and -shm (Linux's /proc)."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        return []
    found = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


@pytest.mark.interpreter
def test_generate_predicted_then_cached(tmp_path, no_local_gpu):
    s = settings(tmp_path)
    seen = []
    result = generate(SOFTMAX, s, progress=lambda stage, done, total, best: seen.append(stage))
    assert result.status == "generated", result.message
    assert result.mode == "predicted"
    assert result.target == "mi300x" and result.problem == "tiny_softmax"
    assert "capture" in seen and "verify" in seen and any(st.startswith("search") for st in seen)

    kernel = tmp_path / "out" / "kernel.py"
    assert result.kernel_path == kernel and kernel.exists()
    assert "class ModelNew" in kernel.read_text() and "@triton.jit" in kernel.read_text()
    assert result.verdict is not None and result.verdict.passed
    # the emitted file passes the referee on its own
    verdict = verify_candidate(load_problem(SOFTMAX), kernel)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"

    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert (tmp_path / "out" / "report.md").exists()
    assert report["mode"] == "predicted"
    assert report["target"] == {"name": "mi300x", "arch": "gfx942"}
    assert report["floor"]["us"] > 0 and report["floor"]["bound"] in ("memory", "compute")
    assert "predicted" in report["floor"]["label"]
    assert report["verdict"]["passed"] is True
    k0 = report["kernels"][0]
    assert k0["family"] == "reduction"
    assert "predicted" in k0["label"] and "mi300x" in k0["label"]
    assert k0["isa"]["registers"] > 0
    assert 0 < k0["trials"] <= 4
    assert k0["seconds"] > 0
    # eager and torch.compile predicted for the MI300X, labelled, with the predicted speed-ups of the kernel
    b = report["baselines"]
    assert b["label"].startswith("predicted (mi300x, ") and b["eager_us"] > 0 and b["compile_us"] > 0
    assert b["eager_kernels"] == 1 and b["compile_kernels"] == 1      # softmax: one kernel either way
    assert b["kernel_us"] == pytest.approx(k0["seconds"] * 1e6)
    assert b["speedup_vs_eager"] == pytest.approx(b["eager_us"] / b["kernel_us"])
    # like for like: eager softmax is one kernel moving the same bytes at the same rates, so the generated kernel
    # (predicted at or above its floor, plus the same launch) is never predicted faster than it
    assert b["speedup_vs_eager"] <= 1.0 + 1e-9
    assert b["label"] in (tmp_path / "out" / "report.md").read_text()
    assert s.store_path.exists()

    # the same problem, target and toolchain again: served from the store, no search, no referee
    first = kernel.read_text()
    kernel.unlink()
    again = generate(SOFTMAX, s)
    assert again.status == "cached", again.message
    assert "store" in again.message and again.verdict is None
    assert kernel.read_text() == first
    assert again.report.get("served_from_store") is True
    # each run closes its store as it returns (bench's worker goes on with the next problem): no descriptor of the
    # file is left to the garbage collector (see store/connect.py's _HELD)
    assert not _open_in_this_process(s.store_path)
    # every JSON written says its schema and the toolchain that wrote it; the problem by its resolved path
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["schema_version"] >= 1 and {"torch", "triton", "python", "kerntailor"} <= set(report["toolchain"])
    assert report["path"] == str(SOFTMAX.resolve()) and report["search"]["budget_s"] == 30

    # a smaller search is served the stored one; a larger one searches again and replaces it
    assert generate(SOFTMAX, replace(s, budget_s=10, max_candidates=2)).status == "cached"
    larger = generate(SOFTMAX, replace(s, budget_s=60))
    assert larger.status == "generated" and larger.verdict is not None, larger.message
    assert larger.report["search"]["budget_s"] == 60
    assert generate(SOFTMAX, replace(s, budget_s=60)).status == "cached"


@pytest.mark.interpreter
def test_no_store_writes_no_store(tmp_path, home, no_local_gpu):
    s = settings(tmp_path, use_store=False, out_dir=tmp_path / "nostore")
    result = generate(SOFTMAX, s)
    assert result.status == "generated", result.message
    assert not s.store_path.exists()
    assert not (home / "store.sqlite").exists()
    # and nothing is served from a store either: a second run generates again
    assert generate(SOFTMAX, s).status == "generated"


@pytest.mark.integration
def test_uncovered_family_takes_the_library_path_and_is_served_from_the_store(tmp_path, home):
    s = settings(tmp_path, out_dir=tmp_path / "lib")
    result = generate(CONV, s)
    assert result.status == "library"
    assert "not covered" in result.message and "conv" in result.message
    report = json.loads(result.report_path.read_text())
    assert report["status"] == "library" and "not covered" in report["reason"]
    assert report["floor"]["us"] > 0
    # the baselines predicted for the target; no speed-up: what runs is the reference itself
    assert report["baselines"]["eager_us"] > 0 and "speedup_vs_eager" not in report["baselines"]
    module = _load_module(result.kernel_path)
    assert module.ModelNew is module.Model        # the reference itself runs: never slower, never wrong
    assert "library path" in result.kernel_path.read_text()

    # the decision is a stored, verified winner: a second run is served from the store
    from kerntailor.store import Store

    winners = Store(s.store_path).winners()
    assert [w.candidate.family for w in winners] == ["library"]
    again = generate(CONV, s)
    assert again.status == "library" and "served from the store" in again.message, again.message
    cached = _load_module(again.kernel_path)
    assert cached.ModelNew is cached.Model


@pytest.mark.integration
def test_a_problem_capture_cannot_express_takes_the_library_path(tmp_path, home, no_local_gpu):
    """An op the IR has no lowering for (aten.sort) is not an error of the user's file: the reference runs,
    judged like any candidate, and the report says why."""
    path = tmp_path / "sort_scale.py"
    path.write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                return torch.sort(x, dim=-1).values * 2


        def get_inputs():
            return [torch.randn(32, 32)]


        def get_init_inputs():
            return []
    """))
    result = generate(path, settings(tmp_path, out_dir=tmp_path / "sorted", use_store=False))
    assert result.status == "library" and "not captured" in result.message and "aten.sort" in result.message
    assert json.loads(result.report_path.read_text())["status"] == "library"
    assert "ModelNew = Model" in result.kernel_path.read_text()


def _cli(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, KERNTAILOR_HOME=str(home))
    # this checkout's source first: a relative PYTHONPATH (src) means nothing from `cwd`
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, "-m", "kerntailor", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


@pytest.mark.interpreter
def test_cli_generate(tmp_path, home):
    out = tmp_path / "cli-out"
    proc = _cli(["generate", str(SOFTMAX), "--target", "mi300x", "--out", str(out), "--candidates", "4",
                 "--budget", "20"], home, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "generated" in proc.stdout
    assert (out / "kernel.py").exists() and (out / "report.json").exists()
    assert (home / "store.sqlite").exists()      # the default store lives under KERNTAILOR_HOME


@pytest.mark.integration
def test_cli_unknown_target_is_one_line(tmp_path, home):
    proc = _cli(["generate", str(SOFTMAX), "--target", "no-such-gpu", "--out", str(tmp_path / "x")], home, tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "unknown target" in lines[0] and "no-such-gpu" in lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "x" / "kernel.py").exists()


def test_compiled_library_module_runs_the_reference_compiled(monkeypatch, tmp_path):
    """When torch.compile was measured faster than eager, the library path runs the reference compiled."""
    import torch

    from kerntailor.generate.report import library_module

    compiled = []
    monkeypatch.setattr(torch, "compile", lambda fn: compiled.append(fn) or fn)   # no C++ toolchain needed
    path = tmp_path / "lib.py"
    path.write_text(library_module(load_problem(SOFTMAX), "slower than torch.compile", compiled=True))
    module = _load_module(path)
    assert issubclass(module.ModelNew, module.Model) and module.ModelNew is not module.Model
    spec = load_problem(SOFTMAX)
    ref = spec.make_model("small", device="cpu", seed=0)
    new = module.ModelNew(*spec.init_inputs("small"))
    new.load_state_dict(ref.state_dict())
    x = spec.make_inputs("small", device="cpu", seed=0)
    assert torch.equal(new(*x), ref(*x)) and len(compiled) == 1
    assert "compile(super().forward)" in path.read_text()
    # judged as a library decision (the library-call check off) it is clean, so it can be stored and served;
    # as a candidate kernel it is the reference itself and fails
    from kerntailor.verify.static import static_check

    assert static_check(path.read_text(), library_path=True, problem_stem=SOFTMAX.stem) == []
    assert {f.rule for f in static_check(path.read_text(), problem_stem=SOFTMAX.stem)} >= {"reference"}
    assert {f.rule for f in static_check(path.read_text(), problem_stem=SOFTMAX.stem, allow_library=True)} \
        == {"reference"}   # the user's --allow-library does not allow subclassing the reference


def test_build_specializes_sizes_that_are_multiples_of_16():
    """The ISA facts must describe the kernel that runs: Triton's launcher specializes integer arguments that
    are multiples of 16 ("D"), so the build does the same for sizes that are at the traced shapes."""
    from helpers import prepared
    from kerntailor.codegen import default_schedule, generate_module
    from kerntailor.generate.kernels import kernel_source

    spec, _, gen, plan = prepared(ROOT / "problems" / "level1" / "layernorm.py")
    module = generate_module(spec, gen, plan, {g.name: default_schedule(gen, g) for g in plan.groups}, "mi300x",
                             "gfx942")
    k = module.kernels[0]
    assert kernel_source(module.source, k).specialization is None
    codes = dict(kernel_source(module.source, k, gen).specialization)
    assert all(codes[name] == "DS" for name, ty in k.signature if ty.startswith("*"))
    sized = [name for name, _ in k.size_args]
    assert sized and all(codes.get(name) == "D" for name in sized)   # layernorm's sizes are all multiples of 16


def test_build_specializes_a_zero_size_argument_as_triton_does():
    """A stride of 0 (an attention bias shared by the batch: `0 * d0`) is "D" at launch (triton 3.6's launcher
    specializes 0 as it does every multiple of 16); unmarked, the cross-compiled kernel's bias loads were scalar."""
    from helpers import prepared
    from kerntailor.codegen import default_schedule, generate_module
    from kerntailor.generate.kernels import kernel_source, traced_value

    spec, _, gen, plan = prepared(ROOT / "benchmarks" / "data" / "attn_probe" / "sdpa_bias.py", "bf16")
    module = generate_module(spec, gen, plan, {g.name: default_schedule(gen, g) for g in plan.groups}, "h200",
                             "sm_90")
    k = next(k for k in module.kernels if k.kernel_name.endswith("attention_kernel"))
    zeros = [name for name, expr in k.size_args if traced_value(gen, expr) == 0]
    codes = dict(kernel_source(module.source, k, gen).specialization)
    assert zeros and all(codes[name] == "D" for name in zeros), (zeros, codes)


@pytest.mark.interpreter
def test_generated_module_slower_than_the_library_is_kept_beside_it(tmp_path, monkeypatch, no_local_gpu):
    """Measured slower than the library, the library path is emitted and the generated module, which the referee
    passed, is kept as generated.py (to read and profile); a later run that emits a generated kernel removes it."""
    from dataclasses import replace

    import kerntailor.generate.pipeline as pipeline

    real_judge = pipeline._judge

    def judged_then_timed(run, schedules, searches):
        verdict, chosen, source = real_judge(run, schedules, searches)
        run.local = run.target    # as on the target GPU, where this timing decides
        timing = {"timings": [{"name": "candidate", "median_s": 2e-3}, {"name": "eager", "median_s": 1e-3}]}
        return replace(verdict, timing=timing), chosen, source

    monkeypatch.setattr(pipeline, "_judge", judged_then_timed)
    out = tmp_path / "out"
    result = generate(SOFTMAX, settings(tmp_path, use_store=False))
    assert result.status == "library", result.message
    assert "slower than the library (1000.0 us, eager)" in result.message and "generated.py" in result.message
    assert result.lost_on_time and result.report["lost_on_time"] is True   # what the conv retry reads
    kept = (out / "generated.py").read_text()
    assert "@triton.jit" in kept and "@triton.jit" not in (out / "kernel.py").read_text()
    assert verify_candidate(load_problem(SOFTMAX), out / "generated.py").passed

    monkeypatch.setattr(pipeline, "_judge", real_judge)
    result = generate(SOFTMAX, settings(tmp_path, use_store=False))
    assert result.status == "generated" and not result.lost_on_time and not (out / "generated.py").exists()


@pytest.mark.interpreter
def test_a_generated_module_that_lost_only_to_a_compile_that_fails_its_referee_ships(tmp_path, monkeypatch,
                                                                                   no_local_gpu):
    """Slower than torch.compile but faster than eager, where the compiled reference fails its own referee (an
    Inductor error at a variant's shapes): the library path would be eager, so the generated module ships, the
    report saying why (level-2 92 on the H100: eager 4236 us emitted beside a generated 1534 us). Slower than eager
    too, the eager library path ships as before."""
    import kerntailor.generate.pipeline as pipeline
    from kerntailor.verify import Verdict

    real_judge, real_emit = pipeline._judge, pipeline.emit_library
    emitted = []

    def timed(candidate_s):
        def judged_then_timed(run, schedules, searches):
            verdict, chosen, source = real_judge(run, schedules, searches)
            run.local = run.target
            timing = {"timings": [{"name": "candidate", "median_s": candidate_s}, {"name": "eager", "median_s": 3e-3},
                                  {"name": "compile", "median_s": 1e-3}]}
            return replace(verdict, timing=timing), chosen, source
        return judged_then_timed

    def compile_fails(problem, reason, out, compiled=False, watch=None):
        emitted.append(compiled)
        if compiled:
            return Verdict(False, "exception", "forward raised InductorError: AssertionError", problem.name,
                           str(out / "kernel.py"), "cpu interpreter", ("static", "exception"))
        return real_emit(problem, reason, out, compiled, watch)

    monkeypatch.setattr(pipeline, "emit_library", compile_fails)
    monkeypatch.setattr(pipeline, "_judge", timed(2e-3))
    out = tmp_path / "out"
    result = generate(SOFTMAX, settings(tmp_path, use_store=False))
    assert result.status == "generated", result.message
    assert emitted == [True] and result.lost_on_time
    assert "@triton.jit" in (out / "kernel.py").read_text() and not (out / "generated.py").exists()
    report = json.loads((out / "report.json").read_text())
    assert "failed the referee" in report["reason"] and "faster than eager (3000.0 us)" in report["reason"]
    assert report["compiled_library_verdict"]["check"] == "exception" and report["lost_on_time"] is True
    assert verify_candidate(load_problem(SOFTMAX), out / "kernel.py").passed

    emitted.clear()
    monkeypatch.setattr(pipeline, "_judge", timed(4e-3))
    result = generate(SOFTMAX, settings(tmp_path, use_store=False))
    assert result.status == "library" and emitted == [True, False], result.message
    assert "@triton.jit" not in (out / "kernel.py").read_text() and (out / "generated.py").exists()
    assert "failed the referee" in result.message and "so eager" in result.message


@pytest.mark.interpreter
def test_the_report_names_the_runner_up_that_ships_when_the_referee_failed_the_best(tmp_path, monkeypatch,
                                                                                    no_local_gpu):
    """Where the referee fails the best schedule and passes a runner-up, kernel.py holds the runner-up and the
    report's group says so: its config, its predicted time and the best among the others (seen on KernelBench 73,
    whose report listed the failed schedule over the runner-up's kernel)."""
    import kerntailor.generate.pipeline as pipeline

    real_referee, calls = pipeline._referee, []

    def fail_first(run, path, *args, **kw):
        calls.append(path.read_text())
        verdict = real_referee(run, path, *args, **kw)
        return verdict if len(calls) > 1 else replace(verdict, passed=False, check="accuracy", reason="planted")

    monkeypatch.setattr(pipeline, "_referee", fail_first)
    result = generate(SOFTMAX, settings(tmp_path, use_store=False))
    assert result.status == "generated" and len(calls) == 2, result.message
    (group,) = [g for g in result.groups if g.family != "library"]
    assert "runner-up 1" in group.label and group.config != group.runners_up[0][0]
    assert (tmp_path / "out" / "kernel.py").read_text() == calls[1]   # the module the referee passed ships


def test_one_generate_judges_a_problems_library_path_once(tmp_path, monkeypatch):
    """The library-path module of a problem differs between generate's two passes only in its docstring's reason, so
    inside one generate (report.library_verdicts) the second pass takes the first's verdict; compiled and eager are
    judged apart, and outside a generate every call judges (level-2 15 on the H100: 60 s of its 178 s judging it
    again)."""
    import kerntailor.verify as verify_pkg
    from kerntailor.generate.report import emit_library, library_verdicts
    from kerntailor.verify import Verdict

    judged = []

    def fake_verify(problem, path, settings, watch=None):
        judged.append(Path(path).read_text())
        return Verdict(True, None, "all checks passed", problem.name, str(path), "cpu interpreter", ("static",))

    monkeypatch.setattr(verify_pkg, "verify_candidate", fake_verify)
    problem = load_problem(SOFTMAX)
    with library_verdicts():
        for reason, compiled in (("first pass lost", True), ("second pass lost", True), ("compile failed", False)):
            out = tmp_path / reason.replace(" ", "_")
            out.mkdir()
            verdict = emit_library(problem, reason, out, compiled)
            assert verdict.passed and reason in (out / "kernel.py").read_text()
    assert len(judged) == 2 and "compile(super().forward)" in judged[0] and "ModelNew = Model" in judged[1]
    for again in ("a", "b"):
        (tmp_path / again).mkdir()
        emit_library(problem, "again", tmp_path / again, True)
    assert len(judged) == 4
