"""Build an LLM-written (or hand-written) kernel module for the target, before the referee judges it.

    outcome = build_module(Path("kernel.py"), problem, target)
    outcome.ok, outcome.error, outcome.trace, outcome.isa     # isa: kernel name -> IsaFacts dict

Two steps, each in its own process under a time limit: probe.py imports the module and runs its forward
once under Triton's interpreter on the smallest variant, recording every kernel launch (a failed import is a
build error, with its traceback); then every launched `@triton.jit` kernel is cross-compiled for the target
with the launch's argument types, constexprs and options (kerntailor.builder), which gives its ISA facts
(VGPRs, spills, LDS, occupancy) — or the compile error that makes it a build failure. A forward that raises
is left to the referee, which reports it with its context.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kerntailor.builder import KernelSource, build_many


@dataclass(frozen=True)
class BuildOutcome:
    ok: bool
    error: str = ""                              # one line, when not ok
    trace: str = ""                              # the import's traceback, when it failed
    isa: tuple[tuple[str, Any], ...] = ()        # (kernel name, IsaFacts as a dict)
    notes: tuple[str, ...] = ()                  # what was not compiled, and why
    seconds: float = 0.0


def build_module(path: Path, problem, target, *, timeout_s: float = 120.0) -> BuildOutcome:
    started = time.monotonic()
    probe = _run_probe(path, problem, timeout_s)
    if isinstance(probe, str):
        return BuildOutcome(False, probe, seconds=time.monotonic() - started)
    if probe.get("import_error"):
        return BuildOutcome(False, probe["import_error"], probe.get("trace") or "",
                            seconds=time.monotonic() - started)
    notes = []
    if probe.get("forward_error"):
        notes.append(f"forward raised {probe['forward_error']} under the interpreter; "
                     "kernels launched before it are compiled")
    source = path.read_text()
    kernels = []
    for launch in probe.get("launches", []):
        if launch.get("unsupported"):
            notes.append(f"`{launch['kernel']}` not cross-compiled: {launch['unsupported']}")
            continue
        kernels.append(KernelSource(source, launch["kernel"], launch["signature"],
                                    constexprs=launch["constexprs"], options=launch["options"]))
    if not kernels:
        return BuildOutcome(True, notes=tuple(notes), seconds=time.monotonic() - started)
    results = build_many(kernels, [target], workers=min(4, len(kernels)), timeout_s=timeout_s)
    isa = []
    for kernel, result in zip(kernels, results):
        if not result.ok:
            return BuildOutcome(False, f"`{kernel.kernel_name}` does not compile for {target.name} "
                                       f"({target.arch}): {result.error}", notes=tuple(notes),
                                seconds=time.monotonic() - started)
        facts = result.facts.to_json()
        if result.rejected_reason:
            facts["rejected"] = result.rejected_reason
            notes.append(f"`{kernel.kernel_name}` on {target.name}: {result.rejected_reason}")
        isa.append((kernel.kernel_name, facts))
    return BuildOutcome(True, isa=tuple(isa), notes=tuple(notes), seconds=time.monotonic() - started)


def _run_probe(path: Path, problem, timeout_s: float) -> dict | str:
    """The probe's JSON, or a one-line reason it gave none (timeout, crash)."""
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONUNBUFFERED="1")
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with tempfile.TemporaryDirectory(prefix="kerntailor-probe-") as tmp:
        job, out = Path(tmp, "job.pkl"), Path(tmp, "out.json")
        job.write_bytes(pickle.dumps({"problem": problem, "candidate": str(Path(path).resolve())}))
        proc = subprocess.Popen([sys.executable, "-m", "kerntailor.propose.probe", str(job), str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.communicate()
            return f"importing and running the module once took more than {timeout_s:g} s (a hang?)"
        if not out.exists():
            last = (log or b"").decode(errors="replace").strip().splitlines()[-1:] or [""]
            return f"the build probe died (exit {proc.returncode}) loading the module: {last[0][:300]}"
        return json.loads(out.read_text())
