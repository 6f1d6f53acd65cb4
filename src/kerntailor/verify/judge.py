"""The judge: one fresh process per verification, the first process of its own PID namespace (launch.py).

    python -m kerntailor.verify.launch CLI_PID -- python -m kerntailor.verify.judge JOB_DIR EVENTS_FD

It starts the candidate process (candidate.py, sandboxed; link.py is its handle on it) before it imports
torch, so that both start at once. Then, for every variant and draw, it computes the reference itself (float64,
from the problem file it loads), sends the candidate process the inputs, asks for two poisoned runs, and
compares the outputs it receives (tolerance.py, checks.py). The candidate process never holds the reference,
its outputs or the problem module; it cannot write to EVENTS_FD (a pipe to the CLI); and "done" is the judge's
own statement, made after every case passed. When the judge exits, the kernel ends every process of its namespace.

Events are JSON objects, one per line, that the CLI turns into a Verdict (referee.assemble).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import pickle
import sys
import traceback
from pathlib import Path
from typing import Any

from kerntailor.verify.judge_edges import EdgeCases, Refused
from kerntailor.verify.link import CandidateProcess, Stop

PR_SET_DUMPABLE = 4


class Events:
    def __init__(self, fd: int):
        self.fd = fd

    def emit(self, **event: Any) -> None:
        data = (json.dumps(event, default=_json_default) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


def _json_default(o: Any) -> Any:
    if isinstance(o, tuple):
        return list(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    return str(o)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def fp8_policy(precision: str, fmt_name: str | None) -> tuple[bool, Any] | None:
    """(per_row, Fp8Format) under fp8-row / fp8-tensor, from the candidate's module-level FP8_FORMAT (read from
    its source by the CLI); None under the other precisions. A Stop ("construct") where the format is missing."""
    from kerntailor.precision import FP8_FORMATS, is_fp8

    if not is_fp8(precision):
        return None
    fmt = FP8_FORMATS.get(fmt_name) if isinstance(fmt_name, str) else None
    if fmt is None:
        known = " or ".join(f'"{n}"' for n in FP8_FORMATS)
        what = "defines no FP8_FORMAT" if fmt_name is None else f"has FP8_FORMAT = {fmt_name!r}, not a known fp8 format"
        raise Stop("construct", f"{precision} precision: the candidate {what} (a module-level {known}: the fp8 "
                   "format of its matrix products, which the reference emulates)")
    return precision == "fp8-row", fmt


# --- the referee -------------------------------------------------------------------------------------------

class Judge(EdgeCases):
    """Runs the checks of one job, in the order of verdict.CHECKS, against the candidate process."""

    def __init__(self, job: dict, events: Events, cand: CandidateProcess):
        import torch

        self.job, self.events, self.cand = job, events, cand
        self.problem = job["problem"]
        self.device = torch.device(job["device"])
        self.checks: list[str] = ["static"]
        self.fp8 = None   # (per_row, Fp8Format) under the fp8 precisions: the reference's products are quantized
        self.fp8_unquantized: set[str] = set()   # fused matrix ops the fp8 reference ran as they are (noted once)
        self.max_numel = 1
        self.host_failed = False   # the plan's host reference failed once (a tensor the module keeps on the GPU)
        self.plan = job.get("memory") or {}   # where the float64 reference lives (an edge case may have its own)
        self.step = None   # the last progress step: an edge case's GPU context lost in "reference" is the reference's

    def ran(self, *names: str) -> None:
        for n in names:
            if n not in self.checks:
                self.checks.append(n)

    def progress(self, **where: Any) -> None:
        self.step = where.get("step")
        self.events.emit(event="progress", **where)

    def start(self) -> None:
        """The candidate process says hello (its sandbox report), takes CUDA IPC if it works, and loads the
        candidate (a failed import is a bad candidate: exit 2 in the CLI)."""
        from kerntailor.verify.sandbox import report_line

        hello, _ = self.cand.recv({})
        sandbox = hello.get("sandbox") if isinstance(hello, dict) else None
        if not isinstance(sandbox, dict):
            raise Stop("crash", "the candidate process did not start its sandbox")
        self.events.emit(event="sandbox", line=report_line(sandbox, os.environ.get("KERNTAILOR_PIDNS") == "1"),
                         notes=list(sandbox.get("notes", []))[:6])
        if self.device.type == "cuda":
            self.probe_ipc()
        reply, _ = self.cand.request({"op": "load"}, where={"step": "load"})
        if not reply.get("ok"):
            raise BadCandidate(str(reply.get("reason", "the candidate could not be loaded"))[:500])

    def probe_ipc(self) -> None:
        """Outputs by CUDA IPC when a small exported tensor reads back right; else by bytes (noted)."""
        import torch

        from kerntailor.verify.channel import ProtocolError, import_cuda

        reply, _ = self.cand.request({"op": "ipc_probe"})
        ok = False
        try:
            t = import_cuda(reply.get("ipc"), torch.int32, (256,), self.device)
            ok = bool(torch.equal(t.cpu(), torch.arange(256, dtype=torch.int32)))
            del t
        except (ProtocolError, RuntimeError, TypeError, ValueError) as e:
            self.events.emit(event="note", text=f"outputs come back as bytes: CUDA IPC failed ({_one_line(e)})")
        self.cand.ipc = ok
        self.cand.request({"op": "ipc", "on": ok})

    def run(self) -> None:
        from kerntailor.verify.draws import draw_inputs

        job = self.job
        self.start()
        self.fp8 = fp8_policy(job.get("precision", "ieee"), job.get("fp8_format"))
        if self.fp8 is not None:
            self.events.emit(event="fp8", precision=job["precision"], format=self.fp8[1].name)
        if (job.get("memory") or {}).get("note"):
            self.events.emit(event="note", text=job["memory"]["note"])
        for vi, variant in enumerate(job["variants"]):
            vseed = job["seed"] + 7919 * (vi + 1)
            ref_model = self.problem.make_model(variant, self.device, vseed)
            self.construct(variant, ref_model, vseed)
            self.warm(variant, job["draws"][0], job["seed"] + 1000 * (vi + 1))
            with self.gpu_exclusive(shared=True):  # parallel bench jobs: no correctness work while another one times
                for di, draw in enumerate(job["draws"]):
                    seed = job["seed"] + 1000 * (vi + 1) + di
                    inputs = None   # the last draw's inputs are freed before the next is drawn
                    self.release()
                    inputs = draw_inputs(self.problem, variant, draw, seed, self.device)
                    self.release()   # the draw's fp32 temporaries: not cached beside the float64 reference
                    self.case(ref_model, variant, draw, inputs, seed, first=di == 0)
                inputs = ref_model = None   # before the next variant's model and draws
        self.release()
        self.special_case()
        self.edge_cases()
        self.events.emit(event="done", checks=self.checks)

    def special_case(self) -> None:
        """The special-values draw (draws.SPECIAL) on job["special"], the smallest variant, after every regular
        case (so that a broken kernel is named by the regular checks first). Not under fp8 (its reference
        quantizes products; NaN and Inf have no fp8 meaning to compare)."""
        from kerntailor.verify.draws import SPECIAL, draw_inputs

        variant = self.job.get("special")
        if variant is None or self.fp8 is not None:
            return
        vi = self.job["variants"].index(variant)
        vseed = self.job["seed"] + 7919 * (vi + 1)
        ref_model = self.problem.make_model(variant, self.device, vseed)
        self.construct(variant, ref_model, vseed)
        seed = self.job["seed"] + 1000 * (vi + 1) + len(self.job["draws"])
        with self.gpu_exclusive(shared=True):
            inputs = draw_inputs(self.problem, variant, SPECIAL, seed, self.device)
            self.release()
            self.case(ref_model, variant, SPECIAL, inputs, seed)
            del inputs
        self.release()

    def warm(self, variant: str, draw: str, seed: int) -> None:
        """On a GPU: the candidate runs once at `variant` (candidate.op_warm: inputs of `draw` it draws itself, not
        judged) before the variant's judged runs take the GPU's lock. Triton compiles a kernel at its first call for
        each specialization of its arguments (sizes divisible by 16 or not, 1, per-call constexprs), so a variant's
        first judged run compiled every kernel of the module inside the lock, where parallel jobs wait for it: a
        level-2 file's run phase took 72.7 s on the H100 beside five other bench jobs' builds (98_Matmul_AvgPool_
        GELU_Scale_Max, 2026-12-05), and another job waited 181 s for the lock. The stopwatch warms up outside its
        lock the same way (measure/stopwatch.py). Not under the interpreter: nothing compiles there, and a run
        there costs what a judged run does."""
        if self.device.type != "cuda":
            return
        self.progress(variant=variant, step="warm")
        reply, _ = self.cand.request({"op": "warm", "variant": variant},
                                     {"problem": self.problem, "draw": draw, "seed": seed},
                                     where={"variant": variant, "step": "warm"})
        if not reply.get("ok"):
            raise RuntimeError(str(reply.get("reason", "the candidate process could not warm up"))[:300])

    def release(self) -> None:
        """Give the caching allocator's free blocks back to the GPU between the judge's steps: a draw's fp32
        temporaries, the float64 reference and the outputs are blocks of different sizes, and a cache kept across
        steps let the judge reserve twice what it held (22_Tanh fp32 on the H200: 94.0 GB reserved, 45.1 GB
        allocated; measure/memory.py budgets a multiple of what is held, and parallel jobs share the GPU)."""
        if self.device.type == "cuda":
            import torch

            torch.cuda.empty_cache()

    @contextlib.contextmanager
    def gpu_exclusive(self, shared: bool = False):
        """The GPU's timing lock (measure/gpulock.py) on a GPU, `shared` for correctness cases, edge cases among them
        (beside other jobs' correctness cases, never beside a timing); nothing on the CPU. The referee is told when the
        wait for it starts and ends (referee.Deadline: waiting behind another job is not the candidate's time)."""
        if self.device.type != "cuda":
            yield
            return
        from kerntailor.measure.gpulock import gpu_lock, holder

        self.events.emit(event="lock_wait", holder=holder(self.device))
        with gpu_lock(self.device, shared=shared):
            self.events.emit(event="lock_held")
            yield

    def construct(self, variant: str, ref_model, seed: int, problem=None, keep: bool = True,
                  refusal: bool = False) -> None:
        """ModelNew built for `variant` in the candidate process, the reference's state_dict loaded. `refusal`
        (an edge case): a constructor's exception comes back as Refused."""
        problem = problem or self.problem
        self.progress(variant=variant, step="construct")
        # the variant's size constants: a constructor that reads a module-level size (kernel.py copies the constant
        # with its default value) builds at the variant's sizes, as the reference's does
        payload = {"init": problem.init_inputs(variant), "dtype": problem.dtype, "seed": seed,
                   "variant": variant, "keep": keep, "constants": _size_constants(problem, variant)}
        payload["state"] = self.cand.ship(dict(ref_model.state_dict()), {"variant": variant})
        payload["init"] = self.cand.ship(payload["init"], {"variant": variant})
        reply, _ = self.cand.request({"op": "construct"}, payload, where={"variant": variant})
        if not reply.get("ok"):
            check = reply.get("check") if reply.get("check") in ("construct", "state_dict") else "referee"
            if refusal and check == "construct":
                raise Refused(reply)
            raise Stop(check, str(reply.get("reason", "?"))[:500], variant=variant)
        self.ran("construct", "state_dict")

    def reference64(self, ref_model, inputs: list[Any], quantized: bool = True):
        """The reference in float64 (params and floating inputs upcast); falls back to fp32, then native.

        Where the job's memory plan says so (measure/memory.referee_plan: the float64 copy does not fit the
        GPU beside the rest) it runs on the host, in float64 all the same; its outputs stay where the plan
        keeps them (`keep`: the host frees the GPU for the candidate; the comparison takes a chunk at a time).

        Under an fp8 precision (self.fp8) its matrix products are fp8-quantized (verify/fp8.py): that is what
        the candidate is judged against; `quantized` False gives the exact one (reported for scale only)."""
        import torch

        plan = self.plan
        out, dtype = None, None
        if plan.get("reference") == "host" and self.device.type != "cpu" and not self.host_failed:
            try:
                out, dtype = self._reference(ref_model, inputs, quantized, host=True)
            except RuntimeError as e:
                self.host_failed = True
                self.events.emit(event="note", text="the float64 reference could not run on the host "
                                 f"({_one_line(e)[:160]}): it runs on the GPU")
        if out is None:
            out, dtype = self._reference(ref_model, inputs, quantized, host=False)
        if plan.get("keep") == "host" and self.device.type != "cpu":
            out = _to_host(out)
            torch.cuda.empty_cache()   # the candidate's process may use what the reference held
        return out, dtype

    def _reference(self, ref_model, inputs: list[Any], quantized: bool, host: bool):
        import torch

        from kerntailor.verify.fp8 import fp8_products

        # on the host float64 only: where it fails, the GPU path's own fallbacks decide (reference64)
        for dtype in (torch.float64,) if host else (torch.float64, torch.float32, None):
            try:
                if host:
                    model = _host_copy(ref_model)
                    model = model if dtype is None else model.to(dtype)
                    src = [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]
                else:
                    model = ref_model if dtype is None else copy.deepcopy(ref_model).to(dtype)
                    src = inputs
                ins = [x.to(dtype) if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point()
                       else (x.clone() if isinstance(x, torch.Tensor) else x) for x in src]
                del src
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
        if host:
            raise RuntimeError(_one_line(last))
        raise Stop("exception", f"the reference itself raised {_one_line(last)}")

    def native_reference(self, ref_model, inputs: list[Any], seed: int):
        """The reference in its own dtype on a copy of the inputs: (its flat outputs, the copy it ran on, the inputs
        to compare that copy with). Where an edge case found that the reference raises on the GPU but answers on the
        host (plan "reference": "host", judge_edges.py: max_pool3d's launch at a stretched size), a GPU failure
        here runs it on the host too (it raised uncaught: 43_Max_Pooling_3D fp32 on the H200, "could not judge")."""
        import torch

        from kerntailor.verify.tolerance import flatten_outputs

        ref_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        torch.manual_seed(seed)
        try:
            with torch.no_grad():
                return flatten_outputs(ref_model(*ref_in)), ref_in, inputs
        except torch.OutOfMemoryError:
            raise
        except RuntimeError:
            if self.device.type == "cpu" or self.plan.get("reference") != "host":
                raise
        host = [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]
        ref_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in host]
        torch.manual_seed(seed)
        with torch.no_grad():   # on the host, as the float64 reference then is (reference64)
            return flatten_outputs(_host_copy(ref_model)(*ref_in)), ref_in, host

    def refuse_random(self, ref_model, inputs: list[Any], first_out: list[Any], seed: int, row) -> None:
        """A reference whose output is not a function of its inputs (it draws from a generator) is refused (a
        ProblemError): no tolerance can judge a kernel against it, and widening one to cover it would pass
        anything. One whose kernels only round differently from run to run is judged, with a note
        (randomness.py tells the two apart)."""
        from kerntailor.errors import ProblemError
        from kerntailor.verify.randomness import judge_randomness

        refusal, note = judge_randomness(ref_model, inputs, first_out, seed, row)
        if refusal:
            raise ProblemError(f"{self.problem.name}: {refusal}")
        if note:
            self.events.emit(event="note", text=note)

    def case(self, ref_model, variant: str, draw: str, inputs: list[Any], seed: int, first: bool = False,
             problem=None, edge=None) -> None:
        """One (variant, draw): the reference, two poisoned runs of the candidate, every check on its outputs.
        `problem`: the problem of an edge case (edges.edge_problem); `edge`: that case, whose first run may
        refuse (Judge.refusal)."""
        import torch

        from kerntailor.verify import checks as C
        from kerntailor.verify.draws import draw_inputs
        from kerntailor.verify.tolerance import (
            compare,
            flatten_outputs,
            native_specials,
            policy_dtype,
            relax,
            side_with_float64,
            side_with_native,
            special_reference,
            tolerance_for,
        )

        special = draw == "special"
        where = {"variant": variant, "draw": draw}
        self.progress(step="reference", **where)
        torch.manual_seed(seed)
        r64_raw, ref_dtype = self.reference64(ref_model, inputs)
        r64 = flatten_outputs(r64_raw)
        if draw != "problem" and not special and any(isinstance(r, torch.Tensor) and r.is_floating_point() and
                                     bool(torch.isnan(r).any()) for r in r64):
            self.events.emit(event="note", text=f"variant {variant}, draw {draw}: the reference gives NaN on "
                             "redrawn inputs (outside its domain); used the problem's own get_inputs() instead")
            draw = f"{draw}->problem"
            where["draw"] = draw
            if edge is not None:
                from kerntailor.verify.edges import edge_inputs

                inputs = edge_inputs(problem, edge, "problem", seed, self.device)
            else:
                inputs = draw_inputs(problem or self.problem, variant, "problem", seed, self.device)
            torch.manual_seed(seed)
            r64_raw, ref_dtype = self.reference64(ref_model, inputs)
            r64 = flatten_outputs(r64_raw)
        if ref_dtype is not torch.float64:
            self.events.emit(event="note", text=f"variant {variant}: the reference does not run in float64; "
                             f"compared against it in {ref_dtype or 'its own dtype'}")
        # fp8: the same reference with exact products, to report what fp8 costs (never judged against)
        exact = flatten_outputs(self.reference64(ref_model, inputs, quantized=False)[0]) if self.fp8 else None
        # the reference in its own dtype: output structure, whether it mutates or aliases its inputs
        ref_native, ref_in, seen = self.native_reference(ref_model, inputs, seed)
        exact64 = r64   # the special draw: where PyTorch's own dtype and float64 disagree, either answer passes
        if special:   # NaN and Inf where PyTorch gives them in its own dtype, float64 values elsewhere
            r64 = [special_reference(r, o) if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor)
                   and o.shape == r.shape else r for o, r in zip(ref_native, r64)] + r64[len(ref_native):]
        ref_mutates = C.changed_inputs(ref_in, seen) is not None
        ref_aliases = C.aliased(ref_native, ref_in) is not None
        del ref_in   # before refuse_random's own copy of the inputs: one copy at a time
        float_dtypes = [x.dtype for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
        float_dtypes += [p.dtype for p in ref_model.state_dict().values() if p.is_floating_point()]

        def table_row(o):
            # fp8: the output dtype's own row (the fp8 products are exact: only accumulation order is left)
            return tolerance_for(policy_dtype(float_dtypes + [o.dtype]), tf32=self.job["tf32"] and not self.fp8)

        if first:
            self.refuse_random(ref_model, inputs, ref_native, seed, table_row)
        # PyTorch's own error on this draw, in the problem's dtype: the bounds never get stricter than 4x it.
        # Under fp8 it is against the exact reference and for scale only: eager has no fp8, so its error says
        # nothing about an fp8 kernel, and widening by it would loosen the emulated reference's bounds
        eager = [compare(o, r, table_row(o)) if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor)
                 and o.shape == r.shape else None for o, r in zip(ref_native, exact if self.fp8 else r64)]
        # where PyTorch in its own dtype gives NaN or Inf that float64 does not, either answer is PyTorch's
        # (side_with_native): its outputs kept for that comparison, only where it happens (rarely)
        natives = [o if not special and isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor)
                   and native_specials(o, r) else None for o, r in zip(ref_native, r64)]
        # a reference run on the host by native_reference's fallback (seen: the host copy) still answers for the
        # device: the candidate's outputs belong where the inputs are (43_Max_Pooling_3D fp32, an edge case on the H200)
        ref_shapes = C.output_specs(ref_native, device=self.device if seen is not inputs else None)
        out_bytes = sum(o.numel() * o.element_size() for o in ref_native if isinstance(o, torch.Tensor))
        self.max_numel = max([self.max_numel] + [4 * o.numel() + (1 << 20) for o in ref_native
                                                 if isinstance(o, torch.Tensor)])
        # what one run's reply may weigh: outputs up to that size, 16 bytes an element, and some slack
        self.cand.chan.max_bytes = 16 * self.max_numel * max(1, len(ref_native)) + (64 << 20)
        del ref_native
        pool = 2 * out_bytes + (8 << 20)

        if self.device.type == "cuda":   # a CUDA error of the reference's own kernels surfaces here, in its step
            torch.cuda.synchronize(self.device)
        shipped = self.cand.ship(list(inputs), where)
        self.cand.request({"op": "inputs"}, {"inputs": shipped}, where=where)
        snaps = []
        for run, (byte, reverse) in enumerate(((0xFF, False), (0x42, True)), start=1):
            self.progress(step=f"run {run}", **where)
            try:
                out, facts = self.call(byte, reverse, seed, pool, where, refusal=edge is not None and run == 1)
            except Refused as r:
                self.refusal(edge, r, where)
                return
            wrong = C.check_structure(out, ref_shapes)
            if wrong:
                raise Stop("output", wrong, **where)
            self.ran("output")
            hit = facts["aliased"]
            if hit and not ref_aliases:
                raise Stop("aliasing", f"output {hit[0]} shares memory with input {hit[1]} (the candidate returns "
                           "or views its input; the reference returns new memory)", **where)
            self.ran("aliasing")
            changed = facts["changed"]
            if changed is not None and not ref_mutates:
                raise Stop("inputs", f"input {changed} changed during run {run} (the reference leaves its inputs "
                           "unchanged)", **where)
            self.ran("inputs")
            snaps.append(out)
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
                ref = side_with_float64(r, exact64[k], run_out) if special else r
                if k < len(natives) and natives[k] is not None:
                    ref = side_with_native(r, natives[k], run_out)
                cmp = compare(run_out, ref, tol, same_nan=special)
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

    def call(self, byte: int, reverse: bool, seed: int, pool: int, where: dict, refusal: bool = False) \
            -> tuple[list[Any], dict]:
        """One poisoned run in the candidate process: (its outputs as the judge's own tensors, its facts).
        `refusal` (an edge case's first run): an exception of forward comes back as Refused."""
        from kerntailor.verify.channel import ProtocolError, decode_values

        reply, segments = self.cand.request({"op": "run", "byte": byte, "reverse": reverse, "seed": seed,
                                             "pool_bytes": pool}, where=where)
        if not reply.get("ok"):
            check = reply.get("check") if reply.get("check") in ("crash", "exception", "referee") else "crash"
            if refusal and check == "exception":
                raise Refused(reply)
            raise Stop(check, str(reply.get("reason", "?"))[:500], **where)
        self.ran("timeout", "crash", "exception")
        library = reply.get("library")
        if not isinstance(library, list) or not all(isinstance(x, str) for x in library):
            raise self.cand.died("malformed library findings", where)
        if library:
            more = f" (+{len(library) - 1} more)" if len(library) > 1 else ""
            raise Stop("library", f"forward {library[0][:240]}{more}; pass --allow-library to allow library "
                       "calls", **where)
        self.ran("library")
        try:
            outs = decode_values(reply.get("outputs"), segments, self.device, max_numel=self.max_numel)
        except (ProtocolError, RuntimeError) as e:
            raise self.cand.died(str(e), where) from None
        finally:
            if self.cand.ipc:
                self.cand.request({"op": "release"}, where=where)
        aliased, changed = reply.get("aliased"), reply.get("changed")
        if not (aliased is None or (isinstance(aliased, list) and len(aliased) == 2 and
                                    all(isinstance(i, int) for i in aliased))):
            raise self.cand.died("malformed aliasing fact", where)
        if not (changed is None or isinstance(changed, int)):
            raise self.cand.died("malformed input fact", where)
        return outs, {"aliased": aliased, "changed": changed}

    def time_default(self) -> None:
        """Candidate vs eager vs torch.compile on the default variant (GPU only), timed in the candidate's
        process (it alone holds the candidate module) after the verdict; the floors are computed here."""
        from kerntailor.measure.baselines import timing_report
        from kerntailor.measure.stopwatch import Timing

        if "default" not in self.job["variants"]:
            self.events.emit(event="note", text="timing skipped: the default variant was not verified here")
            return
        self.events.emit(event="progress", step="timing")
        self.release()   # the judge holds no tensor of the cases now: the candidate process times next
        vseed = self.job["seed"] + 7919 * (self.job["variants"].index("default") + 1)
        payload = {"problem": self.problem, "seed": self.job["seed"], "model_seed": vseed,
                   "compile_mode": self.job["compile_mode"], "tf32": self.job["tf32"]}
        reply, _ = self.cand.request({"op": "time"}, payload, where={"step": "timing"})
        lock = None
        while reply.get("op") in ("lock", "unlock"):   # the candidate's stopwatch asks for the GPU's lock
            if reply["op"] == "lock" and lock is None:
                lock = self.gpu_exclusive()
                lock.__enter__()
            elif reply["op"] == "unlock" and lock is not None:
                lock.__exit__(None, None, None)
                lock = None
            self.cand.chan.send({"ok": True})
            reply, _ = self.cand.recv({"step": "timing"})
        if lock is not None:
            lock.__exit__(None, None, None)
        if not reply.get("ok"):
            raise RuntimeError(str(reply.get("reason", "the candidate process could not time"))[:300])
        timings = {}
        for row in reply.get("timings", []):
            t = Timing(str(row["name"]), *(float(row[k]) for k in ("median_s", "q1_s", "q3_s", "min_s", "max_s")),
                       int(row["runs"]))
            if t.name in ("candidate", "eager", "compile") and t.median_s > 0:
                timings[t.name] = t
        if "candidate" not in timings:
            raise RuntimeError("the candidate process returned no candidate timing")
        notes = [str(n)[:300] for n in reply.get("notes", [])][:10]
        if self.device.type == "cuda":   # beside the candidate process's own (candidate.py op_time)
            import torch

            # reserved against allocated: the allocator's cache and fragmentation apart from what the judge holds
            notes.append(f"judge process GPU peak: {torch.cuda.max_memory_reserved(self.device) / 1e9:.2f} GB "
                         f"reserved by its allocator, {torch.cuda.max_memory_allocated(self.device) / 1e9:.2f} GB "
                         "allocated")
        report = timing_report(self.problem, timings, int(reply.get("input_sets", 1)), notes,
                               compile_mode=self.job["compile_mode"], tf32=self.job["tf32"], device=self.device,
                               precision=self.job.get("precision", "ieee"))
        self.events.emit(event="timing", report=report.to_dict())


def _host_copy(model):
    """A copy of `model` on the host, made without a second copy on the GPU: each parameter and buffer is
    copied to the host first and the module's deepcopy takes those (its memo)."""
    import torch

    memo: dict[int, Any] = {}
    for t in list(model.parameters()) + list(model.buffers()):
        host = t.detach().to("cpu", copy=True)
        memo[id(t)] = torch.nn.Parameter(host, requires_grad=t.requires_grad) \
            if isinstance(t, torch.nn.Parameter) else host
    return copy.deepcopy(model, memo)


def _to_host(value: Any) -> Any:
    """A forward's result with every tensor moved to the host (sequences become lists: it is flattened next)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, (list, tuple)):
        return [_to_host(v) for v in value]
    return value


class BadCandidate(Exception):
    """The candidate file could not be imported (or defines no nn.Module ModelNew): exit 2 in the CLI."""


def _size_constants(problem, variant: str) -> dict[str, int]:
    """The module-level integers whose value `variant` changes (an override, or a rewritten literal of an assignment
    `seq = 24`), as the variant's module has them."""
    if variant == "default":
        return {}
    default, varied = vars(problem.module("default")), vars(problem.module(variant))
    return {k: v for k, v in varied.items() if type(v) is int and type(default.get(k)) is int and default[k] != v}


def main(argv: list[str]) -> int:
    job_dir, events_fd = Path(argv[0]), int(argv[1])
    os.set_inheritable(events_fd, False)
    events = Events(events_fd)
    try:
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)   # no same-user process may trace or read it
    except OSError:
        pass
    spawn = json.loads((job_dir / "job.json").read_text())
    cand = CandidateProcess(spawn, job_dir / "candidate")   # first: its imports overlap ours
    try:
        return _judge(job_dir, events, cand)
    finally:
        cand.close()


def _judge(job_dir: Path, events: Events, cand: CandidateProcess) -> int:
    with open(job_dir / "job.pkl", "rb") as f:
        job = pickle.load(f)
    import torch

    if job.get("interpreter"):
        torch.set_num_threads(1)
    if job["device"].startswith("cuda"):
        name = torch.cuda.get_device_name(torch.device(job["device"]))
        events.emit(event="mode", mode=f"gpu {job['device']} ({name})")
    from kerntailor.errors import KerntailorError
    from kerntailor.verify.judge_edges import ContextLost

    # verification runs strict fp32 (PyTorch's defaults put cuDNN convolutions on tf32): the eager reference
    # must be a real fp32 computation
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    judge = Judge(job, events, cand)
    try:
        judge.run()
    except BadCandidate as e:
        events.emit(event="bad_candidate", reason=str(e))
        return 0
    except KerntailorError as e:  # the problem's own factories failed, or its reference is random
        events.emit(event="bad_problem", reason=str(e))
        return 0
    except Stop as s:
        events.emit(event="fail", check=s.check, reason=s.reason, checks=judge.checks + [s.check], **s.info)
        return 0
    except ContextLost:   # its "edge_lost" event is out: the referee judges again without that case
        return 0
    except Exception as e:  # a referee bug or an unexpected reference failure: report, never hang
        events.emit(event="fail", check="referee", reason=f"the referee could not judge: {_one_line(e)}",
                    checks=judge.checks, trace=traceback.format_exc()[-2000:])
        return 0
    if job.get("time"):
        try:
            judge.time_default()
        except Stop as s:
            events.emit(event="timing_error", reason=s.reason, check=s.check)
        except Exception as e:
            events.emit(event="timing_error", reason=_one_line(e), check="exception")
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # skip interpreter teardown: a CUDA context left broken, or torch.compile's worker pools, can make a
    # normal exit hang; every event is already written
    os._exit(code)

