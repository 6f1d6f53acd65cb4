"""What the next turn is told about the last kernel: its build error, the referee's failed check with its
numbers, or its timing and ISA facts. Plain text, one fact a line, so that a model (and a person auditing
the store) reads the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

TRACE_LINES = 15


def no_code(why: str) -> str:
    return (f"No kernel was found in your reply: {why}. Return the whole module in one ```python block "
            "defining class ModelNew.")


def build_error(error: str, trace: str | None = None) -> str:
    text = f"The module did not build (it could not be loaded): {error}"
    if trace:
        text += "\n\n" + _tail(trace)
    return text


def verdict_feedback(verdict, shapes: Mapping[str, str] | None = None, isa: Mapping[str, Any] | None = None,
                     target: str | None = None) -> str:
    """The referee's answer as facts: the failed check and where, with its numbers; or, when it passed, the
    timing against eager, torch.compile and the floor, and the ISA facts of its kernels on `target`."""
    shapes = dict(shapes or {})
    if verdict.passed:
        lines = [f"It passed the referee: {verdict.reason} ({verdict.mode})."]
        lines += timing_lines(verdict.timing)
        if not verdict.timing:
            lines.append("Not timed: no target GPU at hand (times come from the target GPU only).")
    else:
        name = "static check" if verdict.check == "static" else f"check `{verdict.check}`"
        lines = [f"The referee rejected it. Failed {name}: {_for_the_model(verdict.reason)}"]
        if verdict.variant:
            where = f"variant `{verdict.variant}`"
            if verdict.variant in shapes:
                where += f" (forward({shapes[verdict.variant]}))"
            if verdict.draw:
                where += f", input draw `{verdict.draw}`"
            if verdict.output_index is not None:
                where += f", output {verdict.output_index}"
            if verdict.where:
                where += f", worst element at index {tuple(verdict.where)}"
            lines.append(f"- where: {where}")
        errs = [(label, v) for label, v in (("‖out−ref‖/‖ref‖", verdict.rel_norm_err),
                                             ("max |out−ref|", verdict.max_abs_err),
                                             ("max relative error", verdict.max_rel_err)) if v is not None]
        if errs:
            lines.append("- error: " + ", ".join(f"{label} = {v:.3g}" for label, v in errs))
        if verdict.check in ("accuracy", "nan", "inf") and verdict.tolerance:
            lines.append(f"- tolerance: {verdict.tolerance}")
        passed = [c for c in verdict.checks if c != verdict.check]
        if passed:
            lines.append(f"- checks passed before it: {', '.join(passed)}")
        for note in verdict.notes:
            note = _for_the_model(note.strip())
            if not note or note == _for_the_model(verdict.reason):
                continue
            lines.append(("- trace (last lines):\n" + _tail(note)) if "\n" in note else f"- note: {note}")
    if isa:
        lines += isa_lines(isa, target)
    return "\n".join(lines)


def timing_lines(timing: Mapping[str, Any] | None) -> list[str]:
    """Candidate, eager and torch.compile medians with speedups, the floor and the share of the roofline."""
    if not timing:
        return []
    rows = {r["name"]: r for r in timing.get("timings", [])}
    cand = rows.get("candidate")
    if cand is None:
        return []
    lines = [f"Measured on {timing.get('device_name', 'the GPU')} (median of {cand.get('runs', '?')} runs, "
             "L2 flushed):"]
    for name, row in rows.items():
        us = row["median_s"] * 1e6
        extra = ""
        if name != "candidate" and cand["median_s"] > 0:
            extra = f", yours is {row['median_s'] / cand['median_s']:.2f}x its speed"
        lines.append(f"- {name}: {us:.2f} µs (IQR {row.get('iqr_s', 0) * 1e6:.2f} µs){extra}")
    floor = timing.get("floor_s")
    if floor:
        lines.append(f"- roofline floor: {floor * 1e6:.2f} µs; yours takes {cand['median_s'] / floor:.2f}x the "
                     f"floor ({100 * floor / cand['median_s']:.0f} % of the roofline)")
    return lines


def isa_lines(isa: Mapping[str, Any], target: str | None = None) -> list[str]:
    """ISA facts per kernel ({kernel name: IsaFacts dict, or an error string}) from cross-compiling it."""
    lines = [f"Compiled for {target}:" if target else "Compiled:"]
    for name, facts in isa.items():
        if isinstance(facts, str):
            lines.append(f"- `{name}`: {facts}")
            continue
        parts = []
        if facts.get("vgprs") is not None:
            parts.append(f"{facts['vgprs']} VGPRs + {facts.get('agprs') or 0} AGPRs ({facts['registers']} "
                         f"allocated), {facts.get('sgprs')} SGPRs")
        else:
            parts.append(f"{facts['registers']} registers per thread")
        parts.append(f"spills {facts.get('spills', 0)}" + (f" (scratch {facts['scratch_bytes']} B)"
                                                          if facts.get("scratch_bytes") else ""))
        parts.append(f"LDS/shared {facts.get('lds_bytes', 0)} B")
        occ = facts.get("occupancy_rule") or facts.get("occupancy")
        if occ is not None:
            unit = "waves per SIMD" if facts.get("vgprs") is not None else "warps per SM"
            limited = f", limited by {facts['occupancy_limited_by']}" if facts.get("occupancy_limited_by") else ""
            parts.append(f"occupancy {occ} {unit}{limited}")
        parts.append(f"num_warps {facts.get('num_warps')}")
        if facts.get("matrix_instr_count"):
            parts.append(f"{facts['matrix_instr_count']} matrix instructions "
                         f"({', '.join(facts.get('matrix_instr_kinds') or ())})")
        loads = facts.get("global_load_widths") or ()
        if loads:
            parts.append("global loads " + ", ".join(f"{op} x{n}" for op, n in loads))
        lines.append(f"- `{name}`: " + "; ".join(parts))
    return lines


def _for_the_model(text: str) -> str:
    """The referee's words without the hints meant for a person at the command line (flags to pass)."""
    return re.sub(r"; pass --[\w-]+ to [^;(]*", "", text)


def _tail(text: str, n: int = TRACE_LINES) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(("    " + ln) for ln in lines[-n:])
