"""The whole model's check: the optimized model's outputs against the user's on fresh inputs, by the referee's
tolerance table; and, on a GPU, the end-to-end time of eager, torch.compile and the optimized model (eager, under
torch.compile, and replayed from a CUDA graph).

Fresh inputs: `DRAWS` seeded draws of the example inputs' shapes and dtypes (floating ones normal, integer ones
uniform over the example's own range, so token ids stay valid ids), never the example inputs themselves. The
reference is the user's model in float64 (a copy, on inputs upcast exactly), as the referee computes it; the
bounds are verify/tolerance.py's row for the model's least precise floating dtype, widened on a draw only where
PyTorch itself (the user's model in its own dtype) misses them (tolerance.relax: 4x its own error), exactly as
the referee judges a kernel. Integer and bool outputs must be equal. NaN never passes. The model's buffers are
restored after every forward (a model in training mode updates BatchNorm's running statistics): checking leaves
the user's model as it was.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from kerntailor.precision import policy_dtype
from kerntailor.verify.tolerance import compare, flatten_outputs, relax, tolerance_for

DRAWS = 2
SEED = 20261203


@dataclass(frozen=True)
class ModelCheck:
    """The optimized model against the user's on fresh inputs."""

    passed: bool
    reason: str                    # "" when passed
    tolerance: str                 # the table's row ("fp32")
    draws: int
    worst_rel_norm: float | None   # the largest ‖out − ref‖/‖ref‖ over the draws' floating outputs


class Reference:
    """The user's model on the fresh draws: float64 and native outputs, computed once for every swap's check."""

    def __init__(self, model, example_inputs: list, draws: int = DRAWS):
        self.inputs = [fresh_inputs(example_inputs, SEED + i) for i in range(draws)]
        self.buffers = list(model.buffers())   # the optimized model holds the same ones
        wide = copy.deepcopy(model).to(torch.float64)
        with torch.no_grad(), kept(self.buffers):
            self.native = [_flat(model(*x)) for x in self.inputs]
            self.ref64 = [_flat(wide(*[_upcast(v) for v in x])) for x in self.inputs]
        del wide
        dtypes = [t.dtype for t in list(model.parameters()) + list(model.buffers())]
        dtypes += [v.dtype for x in self.inputs[:1] for v in x if isinstance(v, torch.Tensor)]
        dtypes += [v.dtype for v in self.native[0] if isinstance(v, torch.Tensor)]
        self.tolerance = tolerance_for(policy_dtype(dtypes))

    def check(self, model) -> ModelCheck:
        """`model` (the optimized one) on the same draws, judged against the reference (module docstring)."""
        worst = None
        for i, x in enumerate(self.inputs):
            try:
                with torch.no_grad(), kept(self.buffers):
                    outs = _flat(model(*x))
            except Exception as e:  # noqa: BLE001  a kernel that raises is a failed check, reported
                return self._fail(f"draw {i}: {type(e).__name__}: {_line(e)}", worst)
            if len(outs) != len(self.ref64[i]):
                return self._fail(f"draw {i}: {len(outs)} outputs, the model returns {len(self.ref64[i])}", worst)
            for j, (out, native, ref) in enumerate(zip(outs, self.native[i], self.ref64[i])):
                why, rel = self._compare(out, native, ref)
                if rel is not None:
                    worst = rel if worst is None else max(worst, rel)
                if why:
                    return self._fail(f"draw {i}, output {j}: {why}", worst)
        return ModelCheck(True, "", self.tolerance.policy, len(self.inputs), worst)

    def _compare(self, out, native, ref) -> tuple[str, float | None]:
        if not isinstance(native, torch.Tensor):
            return ("" if out == native else f"{out!r} where the model gives {native!r}"), None
        if not isinstance(out, torch.Tensor) or out.shape != native.shape or out.dtype != native.dtype:
            return f"{_describe(out)} where the model gives {_describe(native)}", None
        if not native.is_floating_point():
            return ("" if torch.equal(out, native) else "integer values differ"), None
        tol = relax(self.tolerance, compare(native, ref, self.tolerance))
        c = compare(out, ref, tol)
        return (c.detail or c.problem or "") if c.problem else "", c.rel_norm

    def _fail(self, reason: str, worst) -> ModelCheck:
        return ModelCheck(False, reason, self.tolerance.policy, len(self.inputs), worst)


@contextlib.contextmanager
def kept(buffers: list):
    """The buffers as they were after the block: a check's forward in training mode (BatchNorm's running
    statistics) leaves the user's model as it found it."""
    saved = [(b, b.clone()) for b in buffers]
    try:
        yield
    finally:
        for b, value in saved:
            b.copy_(value)


def _flat(value) -> list:
    """A forward's result as a flat list; a mapping (a ModelOutput) by its values, in order."""
    if isinstance(value, Mapping):
        return [v for item in value.values() for v in _flat(item)]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return flatten_outputs(value)


def fresh_inputs(example: list, seed: int) -> list:
    """A draw of the example inputs' shapes and dtypes (module docstring); non-tensors as given."""
    gen = torch.Generator().manual_seed(seed)
    return [_fresh(v, gen) for v in example]


def _fresh(v, gen):
    if not isinstance(v, torch.Tensor):
        return v
    if v.is_floating_point():
        return torch.randn(v.shape, generator=gen, dtype=torch.float32).to(v.dtype).to(v.device)
    if v.dtype == torch.bool:
        return (torch.rand(v.shape, generator=gen) > 0.5).to(v.device)
    lo, hi = (int(v.min()), int(v.max())) if v.numel() else (0, 1)
    return torch.randint(lo, hi + 1, v.shape, generator=gen, dtype=v.dtype).to(v.device)


def _upcast(v):
    return v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v


def _describe(v) -> str:
    if isinstance(v, torch.Tensor):
        return f"{v.dtype} {tuple(v.shape)}"
    return type(v).__name__


def _line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else ""


NO_GPU = "not measured: no GPU"


def end_to_end(original, optimized, example_inputs: list) -> dict:
    """Measured seconds per call of the whole model, eager vs torch.compile vs optimized (and the optimized one
    under torch.compile, and captured in a CUDA graph: `cuda_graphed`; the original captured the same way,
    `eager_cuda_graph`, is its like-for-like baseline: a CUDA graph removes launch costs from either), interleaved
    on the GPU
    (measure/stopwatch.py, drained: each call's whole span from an idle GPU, its launches included); {"note": why
    not} without a GPU or with the model elsewhere. A variant that fails to
    run (or to be captured) is left out with its error."""
    if not torch.cuda.is_available():
        return {"note": NO_GPU}
    tensors = [v for v in example_inputs if isinstance(v, torch.Tensor)]
    if not tensors or tensors[0].device.type != "cuda":
        return {"note": "not measured: the model's inputs are not on the GPU"}
    from kerntailor.measure.stopwatch import measure

    fns = {"eager": original, "compile": torch.compile(original), "optimized": optimized,
           "optimized_compile": torch.compile(optimized)}
    errors, first = {}, {}
    runnable = {}
    for name, fn in fns.items():
        start = time.perf_counter()
        try:
            with torch.no_grad():
                fn(*example_inputs)
            torch.cuda.synchronize()
            runnable[name] = (lambda f: (lambda xs: f(*xs)))(fn)
        except Exception as e:  # noqa: BLE001  reported beside the others' times
            errors[name] = f"{type(e).__name__}: {_line(e)}"
        first[name] = round(time.perf_counter() - start, 3)   # torch.compile's compile time is in it
    for name, model in (("eager_cuda_graph", original), ("optimized_cuda_graph", optimized)):
        try:
            runnable[name] = cuda_graphed(model, example_inputs)
        except Exception as e:  # noqa: BLE001  a capture that fails is reported, the other variants still timed
            errors[name] = f"capture failed: {type(e).__name__}: {_line(e)}"
    # drained: each call from an idle GPU, so no variant's launches hide behind the one before it (stopwatch.py)
    timings = measure(runnable, [example_inputs], drained=True) if runnable else {}
    seconds = {n: t.median_s for n, t in timings.items()}
    speedup = {f"optimized_vs_{base}": seconds[base] / seconds["optimized"] for base in ("eager", "compile")
               if base in seconds and seconds.get("optimized")}
    graphed, opt_graphed = seconds.get("eager_cuda_graph"), seconds.get("optimized_cuda_graph")
    if graphed and opt_graphed:
        speedup["optimized_cuda_graph_vs_eager_cuda_graph"] = graphed / opt_graphed
    return {"label": f"measured on {torch.cuda.get_device_name()}", "seconds": seconds, "speedup": speedup,
            "spread": {n: t.to_dict() for n, t in timings.items()}, "errors": errors, "first_call_s": first}


def cuda_graphed(model, example_inputs: list, warmup: int = 3):
    """`model` captured in one torch.cuda.CUDAGraph on static inputs (the example's own tensors): a call copies
    its tensors into them (none to copy when it passes the example's, as the stopwatch does) and replays. Warmed
    up on a side stream first, as PyTorch's CUDA-graph notes ask (Triton compiles and autotunes there, outside
    the capture). Raises what the capture raises."""
    static = list(example_inputs)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(warmup):
            model(*static)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        out = model(*static)

    def replay(xs):
        for dst, src in zip(static, xs):
            if isinstance(dst, torch.Tensor) and dst is not src:
                dst.copy_(src)
        graph.replay()
        return out

    return replay
