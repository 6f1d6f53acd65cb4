"""A ModelProfile as a rich table (the terminal) or as a JSON-ready dict (--json)."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path

from kerntailor.profiling.attribute import GroupProfile, ModelProfile

MEASURED_NOTE = "measured mode (torch.profiler on the target GPU) needs the GPU and is not built yet"


def profile_dict(report: ModelProfile) -> dict:
    """The report as plain data (non-finite numbers as None), with the label beside the numbers."""
    data = asdict(report)
    data["note"] = MEASURED_NOTE
    return _finite(data)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def module_label(row: GroupProfile) -> str:
    """Where the group is in the user's model: the innermost module holding it, else the modules it spans."""
    if row.module:
        return row.module
    return " + ".join(m or "(top)" for m in row.modules)


def profile_table(report: ModelProfile, top: int):
    from rich.table import Table

    title = (f"{report.model} on {report.target}, dtype {report.dtype}: {report.label}\n"
             f"whole model: eager {report.eager_us:.1f} us ({report.eager_kernels} kernels), "
             f"sum of the groups' floors {report.floor_us:.1f} us")
    table = Table(title=title, title_justify="left")
    for name in ("#", "group", "family", "module", "ops", "eager us", "share", "floor us", "bound",
                 "gain", "model x", "problem file"):
        table.add_column(name, justify="right" if name in ("#", "eager us", "share", "floor us", "gain", "model x")
                         else "left")
    for i, r in enumerate(report.groups[:top], 1):
        table.add_row(str(i), r.name, r.family, module_label(r), _ops(r.ops), f"{r.eager_us:.1f}", f"{r.share:.1%}",
                      f"{r.floor_us:.1f}", r.bound, f"{r.gain_share:.1%}", f"{r.amdahl_speedup:.3f}",
                      Path(r.problem_file).name if r.problem_file else "")
    rest = report.groups[top:]
    if rest:
        table.add_row("", f"{len(rest)} more", "", "", "", f"{sum(r.eager_us for r in rest):.1f}",
                      f"{sum(r.share for r in rest):.1%}", f"{sum(r.floor_us for r in rest):.1f}", "", "", "", "")
    if report.unattributed_us:
        table.add_row("", "unattributed", "", "", "", f"{report.unattributed_us:.1f}",
                      f"{report.unattributed_us / report.eager_us:.1%}", "", "", "", "", "")
    table.caption = ("eager: one kernel per ATen op; floor: roofline at compulsory bytes; gain: the model's time "
                     "saved if the group ran at its floor (Amdahl), model x: the model's speed-up. "
                     f"All {report.label}; {MEASURED_NOTE}.")
    table.caption_justify = "left"
    return table


def _ops(ops: tuple[str, ...], most: int = 4) -> str:
    names = [o.removeprefix("aten.").split(".")[0] for o in ops]
    return ", ".join(names[:most]) + (f" +{len(names) - most}" if len(names) > most else "")
