"""The judge's edge cases (edges.py plans them in the CLI; Judge runs them after the special draw).

A mixin of judge.Judge: the cases run through Judge.construct and Judge.case, which take an edge case's problem
(edges.edge_problem) and let its first run refuse (Refused, judged by edges.named_refusal).
"""

from __future__ import annotations

from typing import Any

from kerntailor.verify.link import Stop


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


class Refused(Exception):
    """The candidate raised where an edge case takes a refusal: the candidate process's reason line and the
    exception's facts (candidate.error_facts), checked for shape since that process is the candidate's."""

    def __init__(self, reply: dict):
        error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
        types, message = error.get("types"), error.get("message")
        self.types = [t for t in types if isinstance(t, str)] if isinstance(types, list) else []
        self.message = message if isinstance(message, str) else ""
        self.reason = str(reply.get("reason", "?"))[:500]
        super().__init__(self.reason)


class Unready(Exception):
    """An edge case the judge could not set up or hold: its reference model or inputs do not build here, or the
    GPU ran out of memory for it (the judge's own share, or at the int32 case the candidate's). Skipped with this
    reason, never the candidate's failure; anything the candidate's code does wrong stays a Stop."""


def out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` is running out of GPU memory: the judge's own (torch.OutOfMemoryError, or an edge case it
    could not hold: Unready), or the candidate's forward raising it (a Stop of check "exception"; the text is the
    candidate process's, so this only ever buys the case a second run, never a pass)."""
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    if isinstance(exc, Stop):
        return exc.check == "exception" and "OutOfMemoryError" in exc.reason
    return isinstance(exc, Unready) and ("OutOfMemoryError" in str(exc) or "out of GPU memory" in str(exc))


class ContextLost(Exception):
    """PyTorch's reference broke the judge's GPU context at an edge case: a CUDA error of its own kernels at a
    stretched size (its memory-efficient SDPA launches batch x heads on a grid axis of 65,535 blocks and read out
    of bounds past it, pytorch/pytorch#142228), after which no CUDA call in this process works. No candidate code
    runs in the judge's process (the candidate's is another, with its own context), so this is never the
    candidate's failure: the referee judges again without the case (referee._judge_dynamic)."""


def context_lost(device) -> bool:
    """Whether the GPU context of this process no longer works (a sticky CUDA error: an illegal address, a failed
    launch), as opposed to an error that left it usable (an invalid launch configuration)."""
    import torch

    try:
        return torch.zeros(1, device=device).add_(1).item() != 1.0
    except Exception:   # noqa: BLE001 - any failure of the probe: the context is gone
        return True


class EdgeCases:
    """Judge's edge-case steps (it provides job, events, cand, plan, problem, construct, case, call, progress,
    ran, release and gpu_exclusive)."""

    def edge_cases(self) -> None:
        """The edge cases (edges.py, planned by the CLI) after every other case, one draw each: the reference's
        answer or a named refusal. Any failure there is check "edges", its reason naming the case and the check
        that failed in it. A case with an allowance (the interpreter's rows) that has not answered in time is
        skipped with the reason, and so is every case after it: the candidate process is still at that work; a
        case the judge cannot set up or hold in memory (Unready) is skipped with its reason."""
        import time

        import torch

        from kerntailor.verify.channel import Overtime
        from kerntailor.verify.edges import edge_problem

        edges = self.job.get("edges") or ()
        for k, edge in enumerate(edges):
            problem = edge_problem(self.problem, edge)
            vi = self.job["variants"].index(edge.base)
            vseed = self.job["seed"] + 7919 * (vi + 1)
            seed = self.job["seed"] + 1000 * (vi + 1) + len(self.job["draws"]) + 1 + k
            where = {"variant": edge.variant_name, "draw": edge.draw}
            self.plan = edge.memory or self.job.get("memory") or {}
            if edge.allowance_s is not None:
                self.cand.chan.deadline = time.monotonic() + edge.allowance_s
            try:
                self.judge_edge(problem, edge, vseed, seed, where)
            except (Unready, torch.OutOfMemoryError) as e:
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                why = str(e) if isinstance(e, Unready) else f"the judge ran out of GPU memory ({_one_line(e)[:200]})"
                self.events.emit(event="edge_skipped", reason=f"{edge.label()}: not judged: {why}")
            except Overtime:
                if edge.allowance_s is None:   # the GPU's allowance (edge_case): a hang at this size
                    raise Stop("edges", f"{edge.label()}: [timeout] no answer within {self.edge_allowance_s:.0f} s "
                               f"on the GPU, where the reference answered in {self.edge_reference_s:.2f} s: a hang, "
                               "or a schedule unfit for this size", **where) from None
                later = "".join(f"; {e.draw} not run after it" for e in edges[k + 1:])
                self.events.emit(event="edge_skipped", reason=f"{edge.label()}: no answer within "
                                 f"{edge.allowance_s:g} s under the interpreter (two runs of forward); judge it on "
                                 f"a GPU{later}", cases=len(edges) - k)   # this case and the ones not run after it
                break
            except Stop as s:
                if s.check == "referee":
                    raise
                raise Stop("edges", f"{edge.label()}: [{s.check}] {s.reason}", **{**s.info, **where}) from None
            except Exception as e:
                if self.device.type != "cuda" or self.step != "reference" or not context_lost(self.device):
                    raise
                self.events.emit(event="edge_lost", index=k, reason=f"{edge.label()}: not judged: PyTorch's "
                                 f"reference broke the GPU context here ({_one_line(e)[:160]}), a limit of its own "
                                 "kernels at this size; judged again without this case")
                raise ContextLost(edge.label()) from None
            finally:
                self.plan = self.job.get("memory") or {}
                self.cand.chan.deadline = None
        if edges:
            self.ran("edges")

    def judge_edge(self, problem, edge, vseed: int, seed: int, where: dict) -> None:
        """One edge case under the GPU's lock held shared (correctness work beside other jobs', gpulock.py); where
        it ran out of GPU memory there (the judge's allocation, or the candidate's forward: `out_of_memory`), once
        more with the lock held alone, after both processes gave their caches back. A stretched case's memory is
        not in its job's reservation (measure/memory.py counts the default sizes): 20_MobileNetV2's rows case
        (x of 10 x 3 x 1 x 1048579) needed 21.8 GB in the candidate's process while the other jobs' edge cases held
        the rest of the H200's 139.8 GB, 645 MiB free (2026-12-07), and its kernel was failed for it. The second
        run is judged as the first: an out-of-memory there stands (a candidate that raises it on purpose only
        earns the same case again)."""
        import torch

        again = self.device.type == "cuda"   # on the host no other job's allocations are there to wait out
        for shared in (True, False):
            try:
                with self.gpu_exclusive(shared=shared):
                    self.release()   # the last case's cache: an edge's stretched sizes do not fit its blocks
                    self.edge_case(problem, edge, vseed, seed, where)
            except (Stop, Unready, torch.OutOfMemoryError) as e:
                if not (shared and again and out_of_memory(e)):   # the second run's verdict stands, whatever it is
                    raise
                self.events.emit(event="note", text=f"{edge.label()}: ran out of GPU memory beside other jobs' work "
                                 f"({str(e)[:160]}); judged again holding the GPU alone")
            else:
                self.let_go()   # for the next case, and for another job's case judged alone meanwhile
                return
            self.let_go()   # the traceback's frames (its tensors) are gone here

    def let_go(self) -> None:
        """Both processes give back an edge case's memory: the candidate process its inputs and its allocator's
        cache, the judge its cache."""
        self.cand.request({"op": "inputs"}, {"inputs": []})
        self.release()

    def edge_case(self, problem, edge, vseed: int, seed: int, where: dict) -> None:
        """One edge case: where the reference answers, a regular case that also takes a named refusal at the
        first run; where the reference raises, the candidate must raise too (any exception)."""
        import time

        import torch

        from kerntailor.verify.edges import EDGE_GPU_FACTOR, EDGE_GPU_S, EDGE_GPU_S_PER_GB, edge_inputs

        variant = edge.variant_name
        try:
            ref_model = problem.make_model(variant, self.device, vseed)
            inputs = edge_inputs(problem, edge, "normal", seed, self.device)
        except Exception as e:   # noqa: BLE001 - planned on meta tensors; here they do not build
            raise Unready(f"its reference model or inputs do not build here ({_one_line(e)[:200]})") from None
        self.progress(step="reference", **where)
        started, self.edge_bytes = time.monotonic(), 0
        raises = self.reference_raises(ref_model, inputs, seed)
        self.edge_reference_s = time.monotonic() - started
        if raises is not None and self.device.type != "cpu" and self.host_answers(ref_model, inputs, seed):
            # a limit of the GPU's library kernel (a launch grid past its axis limit at a stretched size), not of
            # the function: the case is judged against the reference on the host (the plan's host path)
            self.events.emit(event="note", text=f"{edge.label()}: the reference raises on the GPU ({raises[:160]}) "
                             "but answers on the host: judged against the host's reference")
            self.plan = {**self.plan, "reference": "host"}
            raises = None
        try:
            # a refusal by the constructor only where its arguments are new (a stretched size): the same arguments
            # built a module before, so refusing them now would be a refusal no user meets
            self.construct(variant, ref_model, vseed, problem=problem, keep=False, refusal=edge.variant is not None)
            if edge.allowance_s is None and self.device.type == "cuda":   # its runs, from here (EDGE_GPU_S)
                self.edge_allowance_s = (max(EDGE_GPU_S, EDGE_GPU_FACTOR * self.edge_reference_s)
                                         + EDGE_GPU_S_PER_GB * self.edge_bytes / 1e9)
                self.cand.chan.deadline = time.monotonic() + self.edge_allowance_s
            if raises is None:
                self.case(ref_model, variant, edge.draw, inputs, seed, problem=problem, edge=edge)
                return
            numel = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
            self.max_numel = max(self.max_numel, 4 * numel + (1 << 20))
            self.cand.chan.max_bytes = 16 * self.max_numel + (64 << 20)
            shipped = self.cand.ship(list(inputs), where)
            self.cand.request({"op": "inputs"}, {"inputs": shipped}, where=where)
            self.progress(step="run 1", **where)
            self.call(0xFF, False, seed, 8 << 20, where, refusal=True)
        except Refused as r:
            self.refusal(edge, r, where, raises)
            return
        raise Stop("output", f"forward returned outputs where the reference raises {raises}", **where)

    def reference_raises(self, ref_model, inputs: list[Any], seed: int) -> str | None:
        """The reference's exception on these inputs in its own dtype (one line), or None when it answers."""
        import torch

        from kerntailor.verify.tolerance import flatten_outputs

        ins = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        gpu = next((x.device for x in ins if isinstance(x, torch.Tensor) and x.device.type == "cuda"), None)
        torch.manual_seed(seed)
        try:
            with torch.no_grad():
                out = ref_model(*ins)
            # what a case ships: the inputs out, the outputs back (edge_case's allowance counts them)
            self.edge_bytes = sum(t.nbytes for t in (*ins, *flatten_outputs(out)) if isinstance(t, torch.Tensor))
            del out
            if gpu is not None:
                torch.cuda.synchronize(gpu)   # its kernels' errors surface in its own step
        except torch.OutOfMemoryError:
            raise
        except Exception as e:   # noqa: BLE001 - any exception: the case has no answer
            if gpu is not None and context_lost(gpu):
                raise   # nothing more runs here (edge_cases: ContextLost)
            return _one_line(e)[:300]
        return None

    def host_answers(self, ref_model, inputs: list[Any], seed: int) -> bool:
        """Whether the reference answers these inputs on the host in its own dtype (where it raised on the GPU)."""
        import torch

        from kerntailor.verify.judge import _host_copy

        try:
            model = _host_copy(ref_model)
            ins = [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]
        except (RuntimeError, MemoryError):
            return False
        return self.reference_raises(model, ins, seed) is None

    def refusal(self, edge, refused: Refused, where: dict, reference_raises: str | None = None) -> None:
        """A refusal at an edge case: a case that passed (emitted) when it is named (edges.named_refusal), or
        any exception where the reference raises too; else a Stop."""
        from kerntailor.verify.edges import named_refusal

        if edge.kind == "int32" and "OutOfMemoryError" in refused.types:
            raise Unready(f"the candidate process ran out of GPU memory beside the judge ({refused.reason[:200]})")
        if reference_raises is None:
            why = named_refusal(refused.types, refused.message, edge)
            if why:
                raise Stop("exception", f"{refused.reason}: {why}", **where)
            text = refused.reason
        else:
            text = f"{refused.reason} (the reference raises too: {reference_raises})"
        self.events.emit(event="case", **where, rel_norm=0.0, max_abs=0.0, max_rel=0.0, policy="refused",
                         refused=text[:400])
