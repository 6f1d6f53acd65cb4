"""What the benchmark scripts share: loading a candidate file and the relative error against a reference."""

from __future__ import annotations

from pathlib import Path


def load_candidate(path: Path, prefix: str = "bench"):
    """Import a kernel.py file as a fresh module (a name per file, so candidates never share a module)."""
    import importlib.util

    name = f"{prefix}_{path.parent.name.replace('-', '_')}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rel_err(got, ref) -> float:
    """max over outputs of ‖got − ref‖ / ‖ref‖ in float64; NaN never passes (it counts as infinite)."""
    got = got if isinstance(got, (tuple, list)) else (got,)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    worst = 0.0
    for g, r in zip(got, ref):
        g64, r64 = g.double(), r.double()
        err = float((g64 - r64).norm() / r64.norm().clamp_min(1e-30))
        worst = max(worst, err if err == err else float("inf"))
    return worst


def schedules_of(plan, knobs: dict) -> dict:
    """The typed schedules of a plan's groups from knob dicts by group name (the manifests keep knobs as data)."""
    from kerntailor.codegen import FAMILIES

    return {g.name: FAMILIES[g.family].schedule.from_knobs(knobs[g.name]) for g in plan.groups}
