"""An OptimizeReport as rich tables (the terminal: the groups, then the cost per token) or as a JSON-ready dict
(--json)."""

from __future__ import annotations

from dataclasses import asdict

from kerntailor.optimizing.run import OptimizeReport
from kerntailor.profiling.render import finite_numbers


def optimize_dict(report: OptimizeReport) -> dict:
    """The report as plain data (non-finite numbers as None)."""
    data = asdict(report)
    data["swapped"] = len(report.swapped)
    return finite_numbers(data)


def optimize_table(report: OptimizeReport):
    from rich.table import Table

    table = Table(title=f"{report.model} on {report.target}: the hottest groups ({report.profile_label})",
                  title_justify="left")
    for name in ("#", "group", "family", "module", "share", "status", "why", "kernel", "verdict"):
        table.add_column(name, justify="right" if name in ("#", "share") else "left", overflow="fold",
                         no_wrap=name in ("#", "group", "family", "share", "status"))
    for g in report.groups:
        table.add_row(str(g.rank), g.group, g.family, g.module, f"{g.share:.1%}", g.status, g.reason or "-",
                      g.kernel or "-", g.verdict or "-")
    table.caption = "\n".join([check_line(report), timing_line(report.timing)])
    table.caption_justify = "left"
    return table


def check_line(report: OptimizeReport) -> str:
    c = report.check
    if c is None:
        return "whole model: nothing swapped, the model runs as it was"
    worst = f", worst ‖Δ‖/‖ref‖ {c.worst_rel_norm:.2e}" if c.worst_rel_norm is not None else ""
    state = "passed" if c.passed else f"FAILED ({c.reason})"
    return (f"whole model ({len(report.swapped)} swapped) vs the original on {c.draws} fresh draws, {c.tolerance} "
            f"tolerance: {state}{worst}")


def timing_line(timing: dict) -> str:
    if "seconds" not in timing:
        return f"end to end: {timing.get('note', 'not measured')}"
    parts = [f"{n} {s * 1e3:.3f} ms" for n, s in timing["seconds"].items()]
    errors = [f"{n} failed ({e})" for n, e in (timing.get("errors") or {}).items()]
    ratios = [f"{k.replace('_', ' ')} {v:.2f}x" for k, v in (timing.get("speedup") or {}).items()]
    return f"end to end, {timing['label']}: " + ", ".join(parts + errors) + (f"; {', '.join(ratios)}" if ratios else "")


def cost_table(report: OptimizeReport):
    """Per variant: seconds per call, tokens per second and dollars per million tokens (measured rows only), the
    token rule and the price with its source in the caption."""
    from rich.table import Table

    table = Table(title="cost per token", title_justify="left")
    for name in ("variant", "ms / call", "tokens / s", "$ / M tokens", "note"):
        table.add_column(name, justify="left" if name in ("variant", "note") else "right", overflow="fold",
                         no_wrap=name != "note")
    for row in report.cost.rows:
        numbers = (f"{row.seconds * 1e3:.3f}", f"{row.tokens_per_s:,.0f}", f"{row.usd_per_million_tokens:.4f}") \
            if row.usd_per_million_tokens is not None else \
            (f"{row.seconds * 1e3:.3f}" if row.seconds is not None else "-", "-", "-")
        table.add_row(row.variant, *numbers, row.note or "-")
    table.caption = "\n".join(cost_lines(report))
    table.caption_justify = "left"
    return table


def cost_lines(report: OptimizeReport) -> list[str]:
    c = report.cost
    tokens = f"{c.tokens_per_call:,}" if c.tokens_per_call is not None else "unknown"
    p = c.price
    when = f", {p.date}" if p.date else ""
    return [f"tokens per call: {tokens} ({c.token_rule}; --tokens-per-call to set it)",
            f"price: ${p.usd_per_hour:.2f} per GPU-hour ({p.source}{when})"]
