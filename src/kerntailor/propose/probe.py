"""The build probe: the process that imports an LLM-written (or hand-written) module for its build, sandboxed.

    python -m kerntailor.verify.launch PID -- python -m kerntailor.propose.probe record JOB_DIR OUT_FD
    python -m kerntailor.verify.launch PID -- python -m kerntailor.propose.probe compile JOB_DIR OUT_FD

It enters the candidate's sandbox (verify/sandbox.py) before torch is imported, like the referee's candidate
process, and writes one JSON object to OUT_FD (a pipe to the caller, build.py, which never unpickles it):

- record (TRITON_INTERPRET=1): import the module, run its forward once on the smallest variant's inputs
  (sent by the caller: the problem module is not here), and record every kernel launch (name, argument
  types, constexprs, compile options): {"import_error", "trace", "forward_error", "launches": [...]};
- compile (no interpreter: a process that imported triton under TRITON_INTERPRET=1 cannot compile):
  cross-compile each launched kernel for the target: {"results": [{"ok", "error", "facts", "rejected"}]}.

Nothing here judges correctness; what it reports (ISA facts included) comes from a process that ran the
candidate's code, and is used as build feedback only.
"""

from __future__ import annotations

import inspect
import json
import os
import pickle
import sys
import traceback
from pathlib import Path

OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "waves_per_eu", "matrix_instr_nonkdim", "kpack",
                "maxnreg")
_TENSOR_TYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int64": "i64",
                 "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "i1",
                 "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "float8_e4m3fnuz": "fp8e4b8",
                 "float8_e5m2fnuz": "fp8e5b16"}


def _one_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _is_constexpr(param: inspect.Parameter) -> bool:
    ann = param.annotation
    name = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
    return str(name).split(".")[-1] == "constexpr"


def _arg_type(value) -> str | None:
    import torch

    if isinstance(value, torch.Tensor):
        return "*" + _TENSOR_TYPES.get(str(value.dtype).removeprefix("torch."), str(value.dtype))
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2 ** 31) <= value < 2 ** 31 else "i64"
    if isinstance(value, float):
        return "fp32"
    return None


def _record(fn, args, kwargs) -> dict:
    params = list(inspect.signature(fn).parameters.values())
    bound = dict(zip((p.name for p in params), args))
    bound.update({k: v for k, v in kwargs.items() if k not in OPTION_NAMES})
    launch = {"kernel": fn.__name__, "signature": {}, "constexprs": {},
              "options": {k: v for k, v in kwargs.items() if k in OPTION_NAMES}, "unsupported": None}
    for p in params:
        if p.name not in bound:
            if p.default is not inspect.Parameter.empty:
                bound[p.name] = p.default
            else:
                continue
        value = bound[p.name]
        if _is_constexpr(p) or value is None:
            if value is None or isinstance(value, (bool, int, float, str)):
                launch["constexprs"][p.name] = value
            else:
                launch["unsupported"] = f"constexpr {p.name} is a {type(value).__name__}"
            continue
        ty = _arg_type(value)
        if ty is None:
            launch["unsupported"] = f"argument {p.name} is a {type(value).__name__}"
        else:
            launch["signature"][p.name] = ty
    return launch


def record(job: dict, path: Path) -> dict:
    """Import the module at `path` and run its forward once, recording each kernel's first launch."""
    result: dict = {"import_error": None, "trace": None, "forward_error": None, "launches": []}
    from triton.runtime.interpreter import InterpretedFunction

    from kerntailor.verify.candidate import load_candidate

    try:
        module = load_candidate(str(path))
    except BaseException as e:  # the candidate's import can raise anything
        result["import_error"] = f"importing the candidate raised {_one_line(e)}"
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == str(path)]
        trace = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(e), e))
        result["trace"] = trace.replace(str(path), job["name"])[-3000:]
        return result
    seen: set[str] = set()
    original = InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        if self.fn.__name__ not in seen:
            seen.add(self.fn.__name__)
            result["launches"].append(_record(self.fn, args, kwargs))
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    InterpretedFunction.run = run
    try:
        import torch

        model = module.ModelNew(*job["init"])
        if job["dtype"] is not None:   # as the referee builds it
            from kerntailor.problem.spec import DTYPES

            model = model.to(DTYPES[job["dtype"]])
        with torch.no_grad():
            model(*job["inputs"])
    except BaseException as e:
        result["forward_error"] = _one_line(e)
    return result


def compile_all(job: dict) -> dict:
    """Cross-compile every KernelSource of the job for its target: the build's results as JSON."""
    from kerntailor.builder.compile import compile_here
    from kerntailor.builder.pool import finish

    results = []
    for kernel in job["kernels"]:
        result, _ = compile_here(kernel, job["target"], tool_timeout_s=job["tool_timeout_s"])
        result = finish(result, job["target"])
        results.append({"ok": result.ok, "error": result.error, "rejected": result.rejected_reason,
                        "facts": result.facts.to_json() if result.facts is not None else None})
    return {"results": results}


def main(argv: list[str]) -> int:
    phase, job_dir, out_fd = argv[0], Path(argv[1]), int(argv[2])
    os.set_inheritable(out_fd, False)
    job = pickle.loads((job_dir / "job.pkl").read_bytes())   # written by the caller: trusted
    from kerntailor.verify.sandbox import enter_sandbox, spec_from_json

    spec = (job_dir / "sandbox.json").read_text()
    enter_sandbox(spec_from_json(spec))
    # sandboxed from here on
    src = Path(json.loads(spec)["home"]) / "src"
    src.mkdir(exist_ok=True)
    path = src / job["name"]
    path.write_text(job["source"])
    if phase == "record":
        out = record(job, path)
    else:
        out = compile_all(job)
    data = json.dumps(out, default=repr).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(out_fd, view):]
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
