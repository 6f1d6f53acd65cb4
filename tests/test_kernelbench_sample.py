"""KernelBench as a suite, on the CPU (#14 item 6): a fixed sample of ../shared/kernelbench chosen by a rule
(every file whose content's sha256 ends in the hex digit 0: 10 of the 221, across the three levels) goes
through load -> capture -> plan, each file in its own child process killed at 30 s, by the sweep script
(benchmarks/kernelbench_sweep.py, the same code that wrote the committed sweep of all 221 files).

Each file must capture, or be refused in one line with a reason; never time out, never crash; and every file
the committed sweep captured must capture here. 16 s with two jobs on two shared cores (1-minute load
average 2.2, 2026-12-01). Skipped where ../shared/kernelbench is not next to the repository.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT.parent / "shared" / "kernelbench"
SWEEP = ROOT / "benchmarks" / "kernelbench_sweep.py"
COMMITTED = ROOT / "benchmarks" / "data" / "kernelbench_sweep_cpu_2026-12-02.json"


def sample(suite: Path | None = None) -> list[Path]:
    """The rule: every problem file whose sha256 (of its bytes) ends in "0", in sorted order."""
    files = sorted(p for p in (suite or SUITE).glob("level*/*.py") if not p.name.startswith("_"))
    return [p for p in files if hashlib.sha256(p.read_bytes()).hexdigest().endswith("0")]


def _name(path: str | Path) -> str:
    p = Path(path)
    return f"{p.parent.name}/{p.name}"


def _sweep_module():
    spec = importlib.util.spec_from_file_location("kernelbench_sweep", SWEEP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"{SUITE} is not next to the repository")


@pytest.mark.integration
@needs_suite
def test_kernelbench_sample_captures_or_refuses_in_one_line(tmp_path):
    files = sample()
    assert len(files) >= 8 and {p.parent.name for p in files} == {"level1", "level2", "level3"}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "sample"
    subprocess.run([sys.executable, str(SWEEP), *map(str, files), "--out", str(out), "--jobs", "2",
                    "--no-generalize"], check=True, cwd=ROOT, env=env, timeout=600, capture_output=True)
    result = json.loads(Path(f"{out}.json").read_text())
    rows = {_name(r["file"]): r for r in result["rows"]}
    assert set(rows) == {_name(p) for p in files}
    committed = {_name(r["file"]): r for r in json.loads(COMMITTED.read_text())["rows"]}
    for name, row in rows.items():
        assert row["status"] in ("captured", "refused"), (name, row["status"], row["reason"])
        if row["status"] == "refused":
            assert row["reason"] and row["reason_lines"] == 1 and "Traceback" not in row["reason"], row
            assert name.split("/")[1].removesuffix(".py") in row["reason"], "the reason names the problem"
        else:
            assert row["groups"] >= 1 and row["families"]
        if committed[name]["status"] == "captured":
            assert row["status"] == "captured", (name, row["reason"])


GENERATED_SINCE = {"conv"}   # generators added after the committed sweep (codegen/conv.py)


def test_families_without_a_generator_are_codegens_own_refusals():
    """The sweep's list of generated families agrees with codegen: every family the committed sweep lists as
    having no generator is one codegen refuses by name, and none of the listed generated families is."""
    from kerntailor.codegen import CodegenUnsupported, generate_kernel
    from kerntailor.plan import FusionGroup

    generated = _sweep_module().GENERATED_FAMILIES
    committed = json.loads(COMMITTED.read_text())
    missing = {f for r in committed["rows"] if r["status"] == "captured" for f in r["no_generator"]}
    seen = {f for r in committed["rows"] if r["status"] == "captured" for f in r["families"]}
    # a sweep made since mixed plans lists "library" groups, whose anchors' families are in no_generator; a family
    # that got its generator after the committed sweep (GENERATED_SINCE) is listed there still
    assert missing and seen - set(generated) - {"library"} <= missing
    assert missing & set(generated) == GENERATED_SINCE & missing
    for family in missing - GENERATED_SINCE:
        group = FusionGroup("k0", family, (), (), (), ())
        with pytest.raises(CodegenUnsupported, match=f"no code generator for the {family} family"):
            generate_kernel(None, group, {}, {}, "k0_kernel")


@pytest.mark.compile
def test_the_sweeps_build_stage_cross_compiles_the_first_module_and_names_a_kernel_that_fails(monkeypatch):
    """kernelbench_sweep.py --build: a generalized file's first module (generate's default schedules) is generated for
    the arch's target and each distinct kernel cross-compiled in the child; a kernel the compiler rejects is one line
    naming the arch and the kernel, and the file's build is "failed" (a GPU call would have found it later)."""
    from types import SimpleNamespace

    import kerntailor.builder

    sweep = _sweep_module()
    problem = ROOT / "tests" / "data" / "conv" / "conv2d_min_tanh.py"
    row = sweep.sweep_file(problem, "mi300x", 120, build=("sm_90",))
    assert row["status"] == "captured" and row["generalized"] == "ok", row
    assert row["build"] == "ok" and row["kernels_built"] >= 1 and row["build_failures"] == [], row
    assert row["max_scratch_bytes"] >= 0 and (row["worst_kernel"] == "" or "registers" in row["worst_kernel"]), row

    def rejects(kernels, target, **_):   # the child forks after this: it sees the patched builder
        return [SimpleNamespace(ok=False, usable=False, error="CompilationError: a clash\nmore", facts=None)
                for _ in kernels]

    monkeypatch.setattr(kerntailor.builder, "build_many", rejects)
    row = sweep.sweep_file(problem, "mi300x", 120, build=("gfx942",))
    assert row["build"] == "failed" and row["build_failures"], row
    assert all(f.startswith("gfx942 ") and f.endswith("CompilationError: a clash") for f in row["build_failures"])

    def past_limits(kernels, target, **_):   # compiled, but past the target's LDS: it could not launch
        return [SimpleNamespace(ok=True, usable=False, error="", rejected_reason="LDS 98304 B exceeds the 65536 B",
                                facts=None) for _ in kernels]

    monkeypatch.setattr(kerntailor.builder, "build_many", past_limits)
    row = sweep.sweep_file(problem, "mi300x", 120, build=("gfx942",))
    assert row["build"] == "failed" and row["build_failures"], row
    assert all(f.endswith("cannot launch: LDS 98304 B exceeds the 65536 B") for f in row["build_failures"])


def test_a_child_that_dies_while_loading_is_a_crash_row_and_the_sweep_goes_on(monkeypatch):
    """A file's child killed from outside (2026-12-04: both gfx942 sweeps, at once) has no seconds: the row says
    crash with the exit code, where round(None) used to end the whole sweep before it wrote anything."""
    sweep = _sweep_module()
    monkeypatch.setattr(sweep, "_inspect_file", lambda *args: os._exit(9))   # the child forks after this
    row = sweep.sweep_file(ROOT / "tests" / "data" / "conv" / "conv2d_min_tanh.py", "mi300x", 60)
    assert row["status"] == "crash" and row["seconds"] is None and "exit code 9" in row["reason"], row
    assert sweep.summarize([row])["total"]["crash"] == 1
