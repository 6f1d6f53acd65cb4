"""The build probe's worker: import a candidate, run its forward once under Triton's interpreter on the
smallest variant, and record every kernel launch (name, argument types, constexprs, compile options), so
that the parent can cross-compile exactly what the module launches.

    python -m kerntailor.propose.probe JOB.pkl OUT.json      (TRITON_INTERPRET=1; see build.py)

OUT.json: {"import_error", "trace", "forward_error", "launches": [{kernel, signature, constexprs, options}]}.
It runs arbitrary code, so it runs in its own process under a time limit; nothing here judges correctness.
"""

from __future__ import annotations

import inspect
import json
import pickle
import sys
import traceback

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


def _smallest_variant(problem) -> str:
    import torch

    def numel(name: str) -> int:
        return max((x.numel() for x in problem.make_inputs(name, "meta") if isinstance(x, torch.Tensor)), default=0)

    return min((v.name for v in problem.variants), key=numel)


def main() -> None:
    job = pickle.loads(open(sys.argv[1], "rb").read())
    out_path = sys.argv[2]
    result: dict = {"import_error": None, "trace": None, "forward_error": None, "launches": []}

    def write() -> None:
        with open(out_path, "w") as f:
            json.dump(result, f, default=repr)

    from triton.runtime.interpreter import InterpretedFunction

    from kerntailor.verify.candidate import load_candidate

    try:
        module = load_candidate(job["candidate"])
    except BaseException as e:  # the candidate's import can raise anything
        result["import_error"] = f"importing the candidate raised {_one_line(e)}"
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == job["candidate"]]
        result["trace"] = ("".join(traceback.format_list(frames))
                           + "".join(traceback.format_exception_only(type(e), e)))[-3000:]
        write()
        return
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

        problem = job["problem"]
        variant = _smallest_variant(problem)
        model = module.ModelNew(*problem.init_inputs(variant))
        if problem.dtype is not None:  # as the referee builds it
            from kerntailor.problem.spec import DTYPES

            model = model.to(DTYPES[problem.dtype])
        with torch.no_grad():
            model(*problem.make_inputs(variant, "cpu", 0))
    except BaseException as e:
        result["forward_error"] = _one_line(e)
    write()


if __name__ == "__main__":
    main()
