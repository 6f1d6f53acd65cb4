"""profile_problem / profile_model: capture, plan, trace eager, attribute, and write the top groups out."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from pathlib import Path

from kerntailor.capture.provenance import TracedCapture, capture_traced
from kerntailor.codegen import plan_of
from kerntailor.costmodel.eager_trace import trace_eager
from kerntailor.plan import Plan
from kerntailor.profiling.attribute import ModelProfile, profile_groups
from kerntailor.profiling.extract import extra_nodes, owners, write_group
from kerntailor.profiling.measured import MeasuredEager, measure_eager
from kerntailor.profiling.render import module_label
from kerntailor.targets import resolve_target


def profile_problem(path: str | Path, target: str, *, dtype: str | None = None, top: int = 5,
                    out_dir: str | Path | None = None, measured: bool = False, steps: int = 5) -> ModelProfile:
    """The profile of a KernelBench-format file's model (its default variant): predicted, or `measured` (each
    eager op timed by torch.profiler, `steps` forwards, on the GPU here: measured.py; the CPU's clock without one)."""
    from kerntailor.problem import load_problem

    problem = load_problem(path, dtype=dtype)
    timed = None
    if measured:
        device = _device()
        timed = measure_eager(problem.make_model("default", device), problem.make_inputs("default", device),
                              steps=steps)
    return _profile_traced(problem, str(path), target, dtype or "as written", top, out_dir, timed).profile


def profile_model(model, example_inputs, *, target: str, dtype: str | None = None, top: int = 5,
                  out_dir: str | Path | None = None, name: str | None = None, measured: bool = False,
                  steps: int = 5) -> ModelProfile:
    """The profile of any nn.Module called on `example_inputs` (neither is changed: a copy on the meta device is
    traced, its parameters never copied). `measured`: each eager op timed by torch.profiler on the model's own
    device, the model and inputs as given (measured.py; `dtype` then only names the capture's dtype)."""
    return profile_model_traced(model, example_inputs, target=target, dtype=dtype, top=top, out_dir=out_dir,
                                name=name, measured=measured, steps=steps).profile


@dataclass(frozen=True)
class TracedProfile:
    """A profile with what it was computed from: the capture with provenance and the plan (what `optimize`
    needs to tell which module a group's problem file computes)."""

    profile: ModelProfile
    traced: TracedCapture
    plan: Plan


def profile_model_traced(model, example_inputs, *, target: str, dtype: str | None = None, top: int = 5,
                         out_dir: str | Path | None = None, name: str | None = None, measured: bool = False,
                         steps: int = 5) -> TracedProfile:
    """profile_model, with the capture and the plan it was computed from."""
    timed = measure_eager(model, list(example_inputs), steps=steps) if measured else None
    source = _ModuleSource(name or type(model).__name__, model, list(example_inputs), dtype)
    return _profile_traced(source, "(python)", target, dtype or "as given", top, out_dir, timed)


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _profile_traced(problem, path: str, target: str, dtype: str, top: int, out_dir,
                    measured: MeasuredEager | None = None) -> TracedProfile:
    tgt = resolve_target(target)
    traced = capture_traced(problem.name, problem.make_model("default", device="meta"),
                            problem.make_inputs("default", device="meta"), problem.dtype)
    plan = plan_of(traced.capture.graph)
    eager = measured.ops if measured is not None else trace_eager(problem)
    report = profile_groups(problem.name, path, dtype, traced, plan, eager, tgt, measured)
    if out_dir is None:
        return TracedProfile(report, traced, plan)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    owner = owners(traced, plan.groups)
    by_name = {g.name: g for g in plan.groups}
    rows = list(report.groups)
    for rank, row in enumerate(rows[:top], 1):
        doc = (f"{row.name} ({row.family}) of {report.model}, module {module_label(row)}: "
               f"{row.share:.1%} of the model's eager time, floor {row.floor_us:.1f} us, eager {row.eager_us:.1f} us "
               f"({report.label}). Written by `kerntailor profile`; inputs are random, with the real shapes."
               + _extra(traced, by_name[row.name]))
        written = write_group(Path(out_dir), _slug(report.model), rank, traced, by_name[row.name], owner, doc)
        rows[rank - 1] = replace(row, problem_file=str(written) if written else None)
    return TracedProfile(replace(report, groups=tuple(rows)), traced, plan)


def _extra(traced, group) -> str:
    extra = extra_nodes(traced, group)
    if not extra:
        return ""
    return (f" It also computes {', '.join(extra)} of another group: an op lowered to nodes of both is "
            "written whole.")


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


class _ModuleSource:
    """A module and its inputs as the problem interface capture and trace_eager take (meta copies)."""

    variants = ()

    def __init__(self, name: str, model, inputs: list, dtype: str | None):
        self.name, self.model, self.inputs, self.dtype = name, model, inputs, dtype

    def make_model(self, variant="default", device="meta"):
        import torch

        cast = _dtype(self.dtype)
        memo = {}
        for t in list(self.model.parameters()) + list(self.model.buffers()):
            meta = torch.empty_like(t, device="meta", dtype=cast if cast and t.is_floating_point() else t.dtype)
            memo[id(t)] = torch.nn.Parameter(meta, t.requires_grad) if isinstance(t, torch.nn.Parameter) else meta
        return copy.deepcopy(self.model, memo)

    def make_inputs(self, variant="default", device="meta"):
        import torch

        cast = _dtype(self.dtype)
        return [torch.empty_like(x, device="meta", dtype=cast if cast and x.is_floating_point() else x.dtype)
                if isinstance(x, torch.Tensor) else x for x in self.inputs]


def _dtype(name: str | None):
    from kerntailor.problem.spec import DTYPES

    return DTYPES[name] if name else None
