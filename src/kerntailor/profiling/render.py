"""A ModelProfile as a rich table (the terminal) or as a JSON-ready dict (--json)."""

from __future__ import annotations

import math
from dataclasses import asdict

from kerntailor.profiling.attribute import GroupProfile, ModelProfile

PREDICTED_NOTE = "eager times predicted by the cost model: measured mode (--measured) needs a GPU here"
MEASURED_NOTE = ("eager times measured: each ATen op's kernels by torch.profiler, apportioned to the groups; "
                 "host launch gaps not counted")


def profile_dict(report: ModelProfile) -> dict:
    """The report as plain data (non-finite numbers as None), with the label beside the numbers."""
    data = asdict(report)
    data["note"] = MEASURED_NOTE if report.mode == "measured" else PREDICTED_NOTE
    return finite_numbers(data)


def finite_numbers(value):
    """`value` (dicts, lists, numbers) with every non-finite float as None: what JSON can say."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_numbers(v) for v in value]
    return value


def module_label(row: GroupProfile) -> str:
    """Where the group is in the user's model (module_text)."""
    return module_text(row.modules, row.module)


def module_text(modules, module: str) -> str:
    """The modules a group's nodes came from (up to three, "(top)" the model's own forward), else the innermost
    module holding them all."""
    if len(modules) <= 3 or not module:
        return " + ".join(m or "(top)" for m in modules)
    return module


def profile_table(report: ModelProfile, top: int):
    from rich.table import Table

    title = (f"{report.model} on {report.target}, dtype {report.dtype}: {report.label}\n"
             f"whole model: eager {_us(report.eager_us)} us ({report.eager_kernels} kernels), "
             f"sum of the groups' floors {_us(report.floor_us)} us")
    table = Table(title=title, title_justify="left")
    for name in ("#", "group", "family", "module", "ops", "eager us", "share", "floor us", "bound", "gain",
                 "model x"):
        right = name in ("#", "eager us", "share", "floor us", "gain", "model x")
        table.add_column(name, justify="right" if right else "left", no_wrap=name != "ops",
                         overflow="fold")
    for i, r in enumerate(report.groups[:top], 1):
        table.add_row(str(i), r.name, r.family, module_label(r), ops_text(r.ops), _us(r.eager_us), f"{r.share:.1%}",
                      _us(r.floor_us), r.bound, f"{r.gain_share:.1%}", f"{r.amdahl_speedup:.3f}")
    rest = report.groups[top:]
    if rest:
        table.add_row("", f"+{len(rest)}", "", "", "", _us(sum(r.eager_us for r in rest)),
                      f"{sum(r.share for r in rest):.1%}", _us(sum(r.floor_us for r in rest)), "", "", "")
    if report.unattributed_us:
        table.add_row("", "unattributed", "", "", "", _us(report.unattributed_us),
                      f"{report.unattributed_us / report.eager_us:.1%}", "", "", "", "")
    table.caption = ("eager: one kernel per ATen op; floor: roofline at compulsory bytes; gain: the model's time "
                     "saved if the group ran at its floor (Amdahl), model x: the model's speed-up. "
                     f"All {report.label}; "
                     f"{MEASURED_NOTE if report.mode == 'measured' else PREDICTED_NOTE}.")
    table.caption_justify = "left"
    return table


def written_lines(report: ModelProfile) -> list[str]:
    return [f"wrote {r.name} ({module_label(r)}): {r.problem_file}" for r in report.groups if r.problem_file]


def _us(x: float) -> str:
    return f"{x:,.1f}" if x >= 1 else f"{x:.3f}"


def ops_text(ops, most: int = 3) -> str:
    names = [o.removeprefix("aten.").split(".")[0] for o in ops]
    return ", ".join(names[:most]) + (f" +{len(names) - most}" if len(names) > most else "")
