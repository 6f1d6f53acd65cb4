"""The referee's worker: one fresh process per verification, so a crash or hang takes down only this.

    python -m kerntailor.verify.worker JOB.pkl EVENTS.jsonl

Reads the job (pickled by referee.py), runs the candidate against the reference on every variant and draw,
and appends one JSON object per line to EVENTS (written with O_APPEND, unbuffered, so what was written before
a segfault survives). The parent turns the events into a Verdict. Under TRITON_INTERPRET=1 (set by the
parent before this process starts) the interpreter is patched first: see interp.py.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import pickle
import sys
import traceback
from pathlib import Path
from typing import Any

CUDA_CRASH_MARKERS = ("illegal memory access", "misaligned address", "unspecified launch failure",
                      "device-side assert", "CUDA error", "an illegal instruction", "HIP error")


class Events:
    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def emit(self, **event: Any) -> None:
        os.write(self.fd, (json.dumps(event, default=_json_default) + "\n").encode())


def _json_default(o: Any) -> Any:
    if isinstance(o, tuple):
        return list(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    return str(o)


class Stop(Exception):
    """A failed check: ends the worker's run."""

    def __init__(self, check: str, reason: str, **info: Any):
        super().__init__(reason)
        self.check, self.reason, self.info = check, reason, info


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _classify(exc: BaseException) -> tuple[str, str]:
    """("crash", reason) for memory errors and dead CUDA contexts, else ("exception", reason)."""
    from kerntailor.verify.interp import IllegalMemoryAccess

    e: BaseException | None = exc
    while e is not None:
        if isinstance(e, IllegalMemoryAccess):
            return "crash", str(e)
        e = e.__cause__ or e.__context__
    text = str(exc)
    if any(m in text for m in CUDA_CRASH_MARKERS):
        return "crash", _one_line(exc)
    return "exception", f"forward raised {_one_line(exc)}"


def fp8_policy(precision: str, module) -> tuple[bool, Any] | None:
    """(per_row, Fp8Format) under fp8-row / fp8-tensor, from the candidate's module-level FP8_FORMAT (a key of
    precision.FP8_FORMATS); None under the other precisions. A Stop ("construct") where the format is missing."""
    from kerntailor.precision import FP8_FORMATS, is_fp8

    if not is_fp8(precision):
        return None
    name = getattr(module, "FP8_FORMAT", None)
    fmt = FP8_FORMATS.get(name) if isinstance(name, str) else None
    if fmt is None:
        known = " or ".join(f'"{n}"' for n in FP8_FORMATS)
        what = "defines no FP8_FORMAT" if name is None else f"has FP8_FORMAT = {name!r}, not a known fp8 format"
        raise Stop("construct", f"{precision} precision: the candidate {what} (a module-level {known}: the fp8 "
                   "format of its matrix products, which the reference emulates)")
    return precision == "fp8-row", fmt


def load_candidate(path: str):
    path_obj = Path(path).resolve()
    name = f"kerntailor_candidate_{path_obj.stem}"
    sys.path.insert(0, str(path_obj.parent))
    spec = importlib.util.spec_from_file_location(name, path_obj)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Referee:
    """Runs the checks of one job, in the order of verdict.CHECKS."""

    def __init__(self, job: dict, events: Events):
        import torch

        self.job, self.events = job, events
        self.problem = job["problem"]
        self.device = torch.device(job["device"])
        self.checks: list[str] = ["static"]
        self.default_models = None
        self.fp8 = None   # (per_row, Fp8Format) under the fp8 precisions: the reference's products are quantized
        self.fp8_unquantized: set[str] = set()   # fused matrix ops the fp8 reference ran as they are (noted once)

    def ran(self, *names: str) -> None:
        for n in names:
            if n not in self.checks:
                self.checks.append(n)

    def progress(self, **where: Any) -> None:
        self.events.emit(event="progress", **where)

    # ---- one forward of the candidate, poisoned ----
    def call(self, model, inputs: list[Any], byte: int, reverse: bool, pool_bytes: int, where: dict) -> Any:
        import torch

        from kerntailor.verify import interp
        from kerntailor.verify.poison import poison_device_cache, poisoned_allocations

        poison_device_cache(self.device, pool_bytes, byte)
        try:
            with torch.no_grad(), poisoned_allocations(byte), interp.reversed_grid(reverse):
                out = model(*inputs)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        except Exception as e:
            check, reason = _classify(e)
            raise Stop(check, reason, **where) from None
        return out

    def reference64(self, ref_model, inputs: list[Any], quantized: bool = True):
        """The reference in float64 (params and floating inputs upcast); falls back to fp32, then native.

        Under an fp8 precision (self.fp8) its matrix products are fp8-quantized (verify/fp8.py): that is what
        the candidate is judged against; `quantized` False gives the exact one (reported for scale only)."""
        import contextlib

        import torch

        from kerntailor.verify.fp8 import fp8_products

        for dtype in (torch.float64, torch.float32, None):
            try:
                model = ref_model if dtype is None else copy.deepcopy(ref_model).to(dtype)
                ins = [x.to(dtype) if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point()
                       else (x.clone() if isinstance(x, torch.Tensor) else x) for x in inputs]
                mode = fp8_products(*self.fp8) if quantized and self.fp8 is not None else None
                with torch.no_grad(), (mode if mode is not None else contextlib.nullcontext()):
                    out = model(*ins)
                if mode is not None and mode.unquantized - self.fp8_unquantized:
                    new = sorted(mode.unquantized - self.fp8_unquantized)
                    self.fp8_unquantized |= mode.unquantized
                    self.events.emit(event="note", text=f"fp8: the reference's {', '.join(new)} ran unquantized "
                                     "(the fp8 reference quantizes mm, bmm, addmm, baddbmm, mv, addmv and dot)")
                return out, dtype
            except Exception as e:  # noqa: PERF203 - an upcast the reference does not support
                last = e
        raise Stop("exception", f"the reference itself raised {_one_line(last)}")

    def run(self) -> None:
        import torch

        from kerntailor.verify.draws import draw_inputs

        job = self.job
        try:
            module = load_candidate(job["candidate"])
        except BaseException as e:  # the candidate's import can raise anything
            self.events.emit(event="bad_candidate", reason=f"importing the candidate raised {_one_line(e)}")
            return
        model_new = getattr(module, "ModelNew", None)
        if not isinstance(model_new, type) or not issubclass(model_new, torch.nn.Module):
            self.events.emit(event="bad_candidate", reason="ModelNew is not an nn.Module class")
            return
        self.fp8 = fp8_policy(job.get("precision", "ieee"), module)
        if self.fp8 is not None:
            self.events.emit(event="fp8", precision=job["precision"], format=self.fp8[1].name)
        for vi, variant in enumerate(job["variants"]):
            vseed = job["seed"] + 7919 * (vi + 1)
            ref_model = self.problem.make_model(variant, self.device, vseed)
            cand = self.construct(model_new, variant, ref_model, vseed)
            if variant == "default":
                self.default_models = (cand, ref_model)
            with self.gpu_exclusive():  # parallel bench jobs: no correctness work while another one times
                for di, draw in enumerate(job["draws"]):
                    seed = job["seed"] + 1000 * (vi + 1) + di
                    inputs = draw_inputs(self.problem, variant, draw, seed, self.device)
                    self.case(cand, ref_model, variant, draw, inputs, seed)
        self.events.emit(event="done", checks=self.checks)

    def gpu_exclusive(self):
        """The GPU's timing lock (measure/gpulock.py) on a GPU; nothing on the CPU."""
        import contextlib

        if self.device.type != "cuda":
            return contextlib.nullcontext()
        from kerntailor.measure.gpulock import gpu_lock

        return gpu_lock(self.device)

    def construct(self, model_new, variant: str, ref_model, seed: int):
        import torch

        from kerntailor.problem.spec import DTYPES

        self.progress(variant=variant, step="construct")
        init = self.problem.init_inputs(variant)
        torch.manual_seed(seed)
        try:
            with torch.device(self.device):
                cand = model_new(*init)
            cand = cand.to(self.device)
            if self.problem.dtype is not None:
                cand = cand.to(DTYPES[self.problem.dtype])
        except Exception as e:
            raise Stop("construct", f"ModelNew(*get_init_inputs()) raised {_one_line(e)}", variant=variant) from None
        self.ran("construct")
        try:
            cand.load_state_dict(ref_model.state_dict(), strict=True)
        except Exception as e:
            msg = " ".join(str(e).split())
            raise Stop("state_dict", f"the reference's state_dict does not load into ModelNew: {msg[:300]}",
                       variant=variant) from None
        self.ran("state_dict")
        return cand.eval()

    def case(self, cand, ref_model, variant: str, draw: str, inputs: list[Any], seed: int) -> None:
        import torch

        from kerntailor.verify import checks as C
        from kerntailor.verify.draws import draw_inputs
        from kerntailor.verify.poison import GARBAGE_BYTE, NAN_BYTE
        from kerntailor.verify.tolerance import compare, flatten_outputs, policy_dtype, relax, tolerance_for

        where = {"variant": variant, "draw": draw}
        self.progress(step="reference", **where)
        r64_raw, ref_dtype = self.reference64(ref_model, inputs)
        r64 = flatten_outputs(r64_raw)
        if draw != "problem" and any(isinstance(r, torch.Tensor) and r.is_floating_point() and
                                     bool(torch.isnan(r).any()) for r in r64):
            self.events.emit(event="note", text=f"variant {variant}, draw {draw}: the reference gives NaN on "
                             "redrawn inputs (outside its domain); used the problem's own get_inputs() instead")
            draw = f"{draw}->problem"
            where["draw"] = draw
            inputs = draw_inputs(self.problem, variant, "problem", seed, self.device)
            r64_raw, ref_dtype = self.reference64(ref_model, inputs)
            r64 = flatten_outputs(r64_raw)
        if ref_dtype is not torch.float64:
            self.events.emit(event="note", text=f"variant {variant}: the reference does not run in float64; "
                             f"compared against it in {ref_dtype or 'its own dtype'}")
        # fp8: the same reference with exact products, to report what fp8 costs (never judged against)
        exact = flatten_outputs(self.reference64(ref_model, inputs, quantized=False)[0]) if self.fp8 else None
        # the reference in its own dtype: output structure, whether it mutates or aliases its inputs
        ref_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            ref_native = flatten_outputs(ref_model(*ref_in))
        ref_mutates = C.changed_inputs(ref_in, inputs) is not None
        ref_aliases = C.aliased(ref_native, ref_in) is not None
        float_dtypes = [x.dtype for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
        float_dtypes += [p.dtype for p in ref_model.state_dict().values() if p.is_floating_point()]

        def table_row(o):
            # fp8: the output dtype's own row (the fp8 products are exact: only accumulation order is left)
            return tolerance_for(policy_dtype(float_dtypes + [o.dtype]), tf32=self.job["tf32"] and not self.fp8)

        # PyTorch's own error on this draw, in the problem's dtype: the bounds never get stricter than 4x it.
        # Under fp8 it is against the exact reference and for scale only: eager has no fp8, so its error says
        # nothing about an fp8 kernel, and widening by it would loosen the emulated reference's bounds
        eager = [compare(o, r, table_row(o)) if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor)
                 and o.shape == r.shape else None for o, r in zip(ref_native, exact if self.fp8 else r64)]
        ref_shapes = C.output_specs(ref_native)
        out_bytes = sum(o.numel() * o.element_size() for o in ref_native if isinstance(o, torch.Tensor))
        del ref_in, ref_native
        pool = 2 * out_bytes + (8 << 20)

        snaps = []
        for run, (byte, reverse) in enumerate(((NAN_BYTE, False), (GARBAGE_BYTE, True)), start=1):
            self.progress(step=f"run {run}", **where)
            ins = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            out = flatten_outputs(self.call(cand, ins, byte, reverse, pool, where))
            self.ran("timeout", "crash", "exception")
            problem = C.check_structure(out, ref_shapes)
            if problem:
                raise Stop("output", problem, **where)
            self.ran("output")
            hit = C.aliased(out, ins)
            if hit and not ref_aliases:
                raise Stop("aliasing", f"output {hit[0]} shares memory with input {hit[1]} (the candidate returns "
                           "or views its input; the reference returns new memory)", **where)
            self.ran("aliasing")
            changed = C.changed_inputs(ins, inputs)
            if changed is not None and not ref_mutates:
                raise Stop("inputs", f"input {changed} changed during run {run} (the reference leaves its inputs "
                           "unchanged)", **where)
            self.ran("inputs")
            snaps.append([o.detach().clone() if isinstance(o, torch.Tensor) else o for o in out])
            del out, ins
        worst = None
        for k, (o1, o2, r) in enumerate(zip(snaps[0], snaps[1], r64)):
            if not isinstance(o1, torch.Tensor):
                if o1 != o2 or (isinstance(r, (int, float)) and abs(float(o1) - float(r)) > 1e-6 * (1 + abs(r))):
                    raise Stop("accuracy", f"output {k} is {o1!r} (run 2: {o2!r}), the reference gives {r!r}",
                               output_index=k, **where)
                continue
            hole = C.unwritten(o1, o2)
            if hole:
                raise Stop("unwritten", f"output {k}: {hole[0]} of {o1.numel()} elements never written (poison "
                           f"survived both runs), first at {hole[1]}", where_index=hole[1], output_index=k, **where)
            self.ran("unwritten")
            tol = table_row(o1)
            if k < len(eager) and eager[k] is not None and not self.fp8:
                tol = relax(tol, eager[k])
            differ = C.disagreement(o1, o2, r, tol)
            if differ:
                raise Stop("determinism", f"output {k}: {differ}", output_index=k, **where)
            self.ran("determinism")
            for run_out in (o1, o2):
                cmp = compare(run_out, r, tol)
                if cmp.problem:
                    raise Stop(cmp.problem, f"output {k}: {cmp.detail}", where_index=cmp.where, output_index=k,
                               max_abs=cmp.max_abs, max_rel=cmp.max_rel, rel_norm=cmp.rel_norm, policy=tol.policy,
                               **where)
            self.ran("nan", "inf", "accuracy")
            if worst is None or cmp.rel_norm > worst["rel_norm"]:
                worst = dict(rel_norm=cmp.rel_norm, max_abs=cmp.max_abs, max_rel=cmp.max_rel, policy=tol.policy,
                             where_index=cmp.where, output_index=k,
                             eager_rel_norm=eager[k].rel_norm if k < len(eager) and eager[k] else None)
                if exact is not None:
                    e = exact[k] if k < len(exact) else None
                    worst["exact_rel_norm"] = (compare(o1, e, tol).rel_norm if isinstance(e, torch.Tensor)
                                               and e.shape == o1.shape else None)
        self.events.emit(event="case", **where, **(worst or dict(rel_norm=0.0, max_abs=0.0, max_rel=0.0,
                                                                 policy="exact")))

    def time_default(self) -> None:
        """Candidate vs eager vs torch.compile on the default variant (GPU only), interleaved."""
        from kerntailor.measure.baselines import time_candidate
        from kerntailor.verify.draws import draw_inputs

        if self.default_models is None:
            self.events.emit(event="note", text="timing skipped: the default variant was not verified here")
            return
        cand, ref_model = self.default_models
        self.events.emit(event="progress", step="timing")
        report = time_candidate(
            self.problem, cand, ref_model,
            make_inputs=lambda i: draw_inputs(self.problem, "default", "normal", self.job["seed"] + 99 + i,
                                              self.device),
            compile_mode=self.job["compile_mode"], tf32=self.job["tf32"], device=self.device,
            precision=self.job.get("precision", "ieee"))
        self.events.emit(event="timing", report=report.to_dict())


def main(argv: list[str]) -> int:
    job_path, events_path = argv
    events = Events(events_path)
    with open(job_path, "rb") as f:
        job = pickle.load(f)
    if job.get("interpreter"):
        from kerntailor.verify import interp

        if not interp.install():
            events.emit(event="note", text="could not patch the Triton interpreter (memcheck, tf32, grid order)")
    import torch

    if job.get("interpreter"):
        torch.set_num_threads(1)  # tiny tensors; several workers may share the cores
    if job["device"].startswith("cuda"):
        name = torch.cuda.get_device_name(torch.device(job["device"]))
        events.emit(event="mode", mode=f"gpu {job['device']} ({name})")
    from kerntailor.errors import KerntailorError

    # verification runs strict fp32 (PyTorch's defaults put cuDNN convolutions on tf32): the eager reference
    # must be a real fp32 computation; the timing phase restores the user's defaults
    saved_tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    referee = Referee(job, events)
    try:
        referee.run()
    except KerntailorError as e:  # the problem's own factories failed on a real device
        events.emit(event="bad_problem", reason=str(e))
        return 0
    except Stop as s:
        info = dict(s.info)
        events.emit(event="fail", check=s.check, reason=s.reason, checks=referee.checks + [s.check], **info)
        return 0
    except Exception as e:  # a referee bug or an unexpected reference failure: report, never hang
        events.emit(event="fail", check="referee", reason=f"the referee could not judge: {_one_line(e)}",
                    checks=referee.checks, trace=traceback.format_exc()[-2000:])
        return 0
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved_tf32
    if job.get("time"):
        try:
            referee.time_default()
        except Exception as e:
            check, reason = _classify(e)
            events.emit(event="timing_error", reason=reason, check=check)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # skip interpreter teardown: a CUDA context left broken by an illegal access, or torch.compile's worker
    # pools, can make a normal exit hang; every event is already written (O_APPEND, unbuffered)
    os._exit(code)
