"""GPU worker for the search in measured mode: times candidate modules.

    python -m kerntailor.generate.gpu_bench --serve          # batches from stdin, the set-up kept (serve)
    python -m kerntailor.generate.gpu_bench JOB.json OUT.json # one batch, one process

JOB: {"problem": path, "dtype": str|null, "candidates": [kernel.py paths], "budget_s": float, "precision": str,
      "time_eager": bool}
OUT: one line of JSON per candidate, appended as each finishes (so a crash loses only the one in
flight): {"path", "ok", "median_s", "error", "rel_err", "first_s", "timing_s"}, after a first line {"setup_s"} and,
where the job asked for it (time_eager), a line {"eager_median_s"}, the reference timed as a candidate is: the
worker's own set-up (load the problem, build the reference, compute its output; `first_s` is a candidate's build and
first run, where Triton compiles its kernels). The search logs where a batch's seconds went (evaluate.py).
Each candidate is checked against eager on the default inputs first (a sanity filter with a loose bound; the
referee judges the winner strictly).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any


def _load(path: str):
    spec = importlib.util.spec_from_file_location(f"kt_candidate_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHUNK = 1 << 24   # elements compared at a time: float64 copies of a chunk (128 MiB each), never of a whole output


def relative_error(got, expected) -> float:
    """‖got − expected‖ / ‖expected‖ in float64, a chunk at a time. Whole float64 copies of both outputs and their
    difference were 24 bytes per element beside the job's tensors (12x a bf16 output): on the H200, with parallel
    bench jobs admitted by the referee's own memory plan (measure/memory.py), other jobs ran out of memory.
    A shape other than the reference's is infinitely wrong."""
    if tuple(got.shape) != tuple(expected.shape):
        return float("inf")
    g, e = got.reshape(-1), expected.reshape(-1)
    num = den = 0.0
    for start in range(0, e.numel(), CHUNK):
        e64, g64 = e[start:start + CHUNK].double(), g[start:start + CHUNK].double()
        num += float((g64 - e64).square().sum())
        den += float(e64.square().sum())
    return (num ** 0.5) / max(den ** 0.5, 1e-30)


def sanity_bound(dtype: str | None, expected, precision: str) -> float:
    """The filter's loose bound on ‖got − eager‖ / ‖eager‖: 1e-3 for fp32; 3e-2 for a 16-bit run, or a file whose
    tensors are 16-bit as written (a group `profile` wrote out of a bf16 model: its dtype is None; with the fp32
    bound every bf16 candidate of optimize's groups was dropped on the H200 at ~1e-3); 1e-1 under fp8 (eager has no
    fp8: its products differ by fp8's ~4 %)."""
    import torch

    if precision.startswith("fp8"):
        return 1e-1
    sixteen = (dtype or "fp32") != "fp32" or any(
        e.dtype in (torch.bfloat16, torch.float16) for e in expected if isinstance(e, torch.Tensor))
    return 3e-2 if sixteen else 1e-3


@dataclass
class Bench:
    """A worker's set-up for one (problem, dtype, precision, device): built once, reused by every batch that asks
    for the same (serve)."""

    key: tuple
    problem: Any
    reference: Any
    inputs: list
    expected: tuple
    bound: float
    init: list
    device: str
    eager_s: float | None = None   # the reference's own time, once a job asked for it (time_eager)


def job_key(job: dict) -> tuple:
    return (job["problem"], job.get("dtype"), job.get("precision", "ieee"), job.get("device", "cuda"))


def setup(job: dict) -> Bench:
    import torch

    from kerntailor.problem import load_problem

    device = job.get("device", "cuda")
    problem = load_problem(job["problem"], dtype=job.get("dtype"))
    reference = problem.make_model("default", device=device, seed=0)
    inputs = problem.make_inputs("default", device=device, seed=0)
    with torch.no_grad():
        expected = reference(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    bound = sanity_bound(problem.dtype, expected, job.get("precision", "ieee"))
    return Bench(job_key(job), problem, reference, inputs, tuple(expected), bound, problem.init_inputs("default"),
                 device)


def run_batch(bench: Bench, job: dict, out_path: str) -> bool:
    """Check and time each of the job's candidates, a record each appended to `out_path`; False where a
    candidate's failure left the device unusable (a CUDA error is sticky: every later call fails), so the worker
    must not serve another batch."""
    import torch

    from kerntailor.measure.stopwatch import measure

    healthy = True
    if job.get("time_eager"):
        _eager_record(bench, job, out_path)
    for path in job["candidates"]:
        record = {"path": path, "ok": False, "median_s": None, "error": "", "rel_err": None}
        begun = time.monotonic()
        model = got = None
        try:
            with torch.device(bench.device):
                model = _load(path).ModelNew(*bench.init)
            model.load_state_dict(bench.reference.state_dict())
            model = bench.problem.cast_candidate(model.to(bench.device))   # as built, like the reference
            with torch.no_grad():
                got = model(*bench.inputs)
            got = got if isinstance(got, (tuple, list)) else (got,)
            record["first_s"] = time.monotonic() - begun
            worst = max((relative_error(g, e) for g, e in zip(got, bench.expected, strict=True)), default=0.0)
            record["rel_err"] = worst
            if not worst <= bench.bound:
                record["error"] = f"wrong result on the default inputs: relative error {worst:.3g}"
            else:
                timed = time.monotonic()
                timing = measure({"candidate": lambda xs, m=model: m(*xs)}, [bench.inputs],
                                 budget_s=job.get("budget_s", 0.5))
                record.update(ok=True, median_s=timing["candidate"].median_s, timing_s=time.monotonic() - timed)
        except Exception as e:  # the candidate's own failure: recorded, the batch goes on
            lines = traceback.format_exception_only(type(e), e)
            record["error"] = lines[-1].strip()[:300]
            healthy = healthy and _device_usable(bench.device)
        with open(out_path, "a") as f:
            f.write(json.dumps(record) + "\n")
        del model, got
    if bench.device != "cpu" and torch.cuda.is_available():
        torch.cuda.empty_cache()   # a candidate's allocations are not the next batch's
    return healthy


def _eager_record(bench: Bench, job: dict, out_path: str) -> None:
    """{"eager_median_s"}: the reference timed as the candidates are, once per set-up (a search that asks for it
    learns whether its best module is already far behind eager: generate/group_search.py's FirstPassLost)."""
    from kerntailor.measure.stopwatch import measure

    if bench.eager_s is None:
        try:
            timing = measure({"eager": lambda xs: bench.reference(*xs)}, [bench.inputs],
                             budget_s=job.get("budget_s", 0.5))
            bench.eager_s = timing["eager"].median_s
        except Exception as e:  # noqa: BLE001  the candidates are timed without it
            with open(out_path, "a") as f:
                f.write(json.dumps({"eager_error": str(e).splitlines()[0][:200] if str(e) else type(e).__name__})
                        + "\n")
            return
    with open(out_path, "a") as f:
        f.write(json.dumps({"eager_median_s": bench.eager_s}) + "\n")


def _device_usable(device: str) -> bool:
    import torch

    if device == "cpu":
        return True
    try:
        torch.cuda.synchronize()
        return True
    except Exception:   # a sticky CUDA error (an illegal address): this process's context is lost
        return False


def main(job_path: str, out_path: str) -> None:
    """One batch in this process (KERNTAILOR_GPU_WORKER=batch, and the protocol's first form)."""
    started = time.monotonic()
    job = json.loads(open(job_path).read())
    bench = setup(job)
    with open(out_path, "a") as f:
        f.write(json.dumps({"setup_s": time.monotonic() - started}) + "\n")
    run_batch(bench, job, out_path)


def serve() -> None:
    """Batches from stdin, one JSON job a line ({..., "out": path}), until stdin closes: each job's records go to
    its "out" file and a line "done" to the protocol's stdout once it is complete. The set-up is kept while jobs
    ask for the same key, so a search's batches pay for it once (each batch in a process of its own took ~15 s
    before its first candidate on the H200: torch, CUDA, the problem and its reference; 2026-12-04e call 3). The
    worker exits after a batch whose candidate left the device unusable. Anything a candidate prints goes to
    stderr: stdout carries the protocol only."""
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    bench = None
    for line in sys.stdin:
        job = json.loads(line)
        started = time.monotonic()
        reused = bench is not None and bench.key == job_key(job)
        if not reused:
            bench = None   # the last set-up's tensors go before the next one's are made
            bench = setup(job)
        with open(job["out"], "a") as f:
            f.write(json.dumps({"setup_s": 0.0 if reused else time.monotonic() - started, "reused": reused}) + "\n")
        healthy = run_batch(bench, job, job["out"])
        protocol.write("done\n")
        protocol.flush()
        if not healthy:
            break
    protocol.close()
    os._exit(0)   # no teardown of CUDA or of the candidates' modules: the parent waits for nothing more


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main(sys.argv[1], sys.argv[2])
