"""Build an LLM-written (or hand-written) kernel module for the target, before the referee judges it.

    outcome = build_module(Path("kernel.py"), problem, target)
    outcome.ok, outcome.error, outcome.trace, outcome.isa     # isa: kernel name -> IsaFacts dict

The module's code never runs in this process, nor in a process that holds the problem: two sandboxed
processes (propose/probe.py, started like the referee's through verify/launch.py, each under a time limit)
import it. The first runs its forward once under Triton's interpreter on the smallest variant's inputs, which
this process computes and sends, recording every kernel launch (a failed import is a build error, with its
traceback); the second cross-compiles every launched `@triton.jit` kernel for the target with the launch's
argument types, constexprs and options (kerntailor.builder), which gives its ISA facts (VGPRs, spills, LDS,
occupancy) or the compile error that makes it a build failure. A forward that raises is left to the referee,
which reports it with its context. What comes back is JSON, checked field by field.
"""

from __future__ import annotations

import json
import os
import pickle
import select
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kerntailor.builder import KernelSource

MAX_REPLY = 16 << 20


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
    source = Path(path).read_text()
    variant = _smallest_variant(problem)
    job = {"source": source, "name": Path(path).name, "init": problem.init_inputs(variant),
           "inputs": problem.make_inputs(variant, "cpu", 0), "dtype": problem.dtype}
    probe = _run_sandboxed("record", job, timeout_s, interpreter=True)
    if isinstance(probe, str):
        return BuildOutcome(False, probe, seconds=time.monotonic() - started)
    if probe.get("import_error"):
        return BuildOutcome(False, str(probe["import_error"])[:500], str(probe.get("trace") or "")[-3000:],
                            seconds=time.monotonic() - started)
    notes = []
    if probe.get("forward_error"):
        notes.append(f"forward raised {str(probe['forward_error'])[:300]} under the interpreter; "
                     "kernels launched before it are compiled")
    kernels = []
    for launch in probe.get("launches", []):
        kernel, why = _kernel_source(source, launch)
        if kernel is None:
            notes.append(why)
        else:
            kernels.append(kernel)
    if not kernels:
        return BuildOutcome(True, notes=tuple(notes), seconds=time.monotonic() - started)
    built = _run_sandboxed("compile", {"source": source, "name": Path(path).name, "kernels": kernels,
                                       "target": target, "tool_timeout_s": timeout_s},
                           timeout_s * len(kernels), interpreter=False)
    if isinstance(built, str):
        return BuildOutcome(False, built, notes=tuple(notes), seconds=time.monotonic() - started)
    results = built.get("results", [])
    isa = []
    for kernel, result in zip(kernels, results):
        if not isinstance(result, dict) or not result.get("ok"):
            error = str(result.get("error", "no result")) if isinstance(result, dict) else "no result"
            return BuildOutcome(False, f"`{kernel.kernel_name}` does not compile for {target.name} "
                                       f"({target.arch}): {error[:400]}", notes=tuple(notes),
                                seconds=time.monotonic() - started)
        facts = dict(result.get("facts") or {})
        if result.get("rejected"):
            facts["rejected"] = str(result["rejected"])[:300]
            notes.append(f"`{kernel.kernel_name}` on {target.name}: {facts['rejected']}")
        isa.append((kernel.kernel_name, facts))
    if len(results) != len(kernels):
        return BuildOutcome(False, "the build process returned fewer results than kernels", notes=tuple(notes),
                            seconds=time.monotonic() - started)
    return BuildOutcome(True, isa=tuple(isa), notes=tuple(notes), seconds=time.monotonic() - started)


def _smallest_variant(problem) -> str:
    import torch

    def numel(name: str) -> int:
        return max((x.numel() for x in problem.make_inputs(name, "meta") if isinstance(x, torch.Tensor)), default=0)

    return min((v.name for v in problem.variants), key=numel)


def _kernel_source(source: str, launch: Any) -> tuple[KernelSource | None, str]:
    """A KernelSource from a recorded launch (JSON from the sandbox: every field checked), or why not."""
    if not isinstance(launch, dict) or not isinstance(launch.get("kernel"), str):
        return None, "a malformed launch record was skipped"
    name = launch["kernel"][:200]
    if launch.get("unsupported"):
        return None, f"`{name}` not cross-compiled: {str(launch['unsupported'])[:200]}"
    signature, constexprs, options = launch.get("signature"), launch.get("constexprs"), launch.get("options")
    scalars = (type(None), bool, int, float, str)
    if not (isinstance(signature, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                for k, v in signature.items())
            and isinstance(constexprs, dict) and all(isinstance(v, scalars) for v in constexprs.values())
            and isinstance(options, dict) and all(isinstance(v, scalars) for v in options.values())):
        return None, f"`{name}`: a malformed launch record was skipped"
    try:
        return KernelSource(source, name, signature, constexprs=constexprs, options=options), ""
    except (TypeError, ValueError) as e:
        return None, f"`{name}` not cross-compiled: {e}"


def _run_sandboxed(phase: str, job: dict, timeout_s: float, *, interpreter: bool) -> dict | str:
    """Run one phase of the probe in its sandbox: its JSON reply, or a one-line reason it gave none."""
    from kerntailor.verify import launch
    from kerntailor.verify.sandbox import sandbox_for

    with tempfile.TemporaryDirectory(prefix="kerntailor-build-") as tmp:
        job_dir = Path(tmp)
        spec, env = sandbox_for(job_dir / "home", parent_pid=0, gpu=False, cpu_seconds=int(2 * timeout_s) + 60)
        (job_dir / "sandbox.json").write_text(json.dumps(asdict(spec)))
        (job_dir / "job.pkl").write_bytes(pickle.dumps(job))
        if not interpreter:
            env.pop("TRITON_INTERPRET", None)
        out_r, out_w = os.pipe()
        data, proc = b"", None
        try:
            with open(job_dir / "log.txt", "wb") as log:
                proc = launch.start([sys.executable, "-m", "kerntailor.propose.probe", phase, str(job_dir),
                                     str(out_w)], env=env, log=log, pass_fds=(out_w,))
            os.close(out_w)
            out_w = -1
            deadline = time.monotonic() + timeout_s
            while len(data) <= MAX_REPLY:
                ready, _, _ = select.select([out_r], [], [], 0.1)
                if ready:
                    chunk = os.read(out_r, 1 << 16)
                    if not chunk:
                        break
                    data += chunk
                elif time.monotonic() > deadline:
                    return (f"importing and running the module once took more than {timeout_s:g} s (a hang?)"
                            if phase == "record" else f"cross-compiling took more than {timeout_s:g} s")
            proc.wait()
        finally:
            if proc is not None:
                launch.stop(proc)
            if out_w >= 0:
                os.close(out_w)
            os.close(out_r)
        log_tail = (job_dir / "log.txt").read_text(errors="replace").strip().splitlines()[-1:] or [""]
    try:
        reply = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        reply = None
    if not isinstance(reply, dict):
        return (f"the build probe died ({launch.exit_description(proc.returncode)}) "
                f"{'loading the module' if phase == 'record' else 'compiling'}: {log_tail[0][:300]}")
    return reply
