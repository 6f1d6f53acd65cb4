"""Verdicts and timings as text for the terminal (JSON is Verdict.to_dict())."""

from __future__ import annotations

from typing import Any

from kerntailor.verify.verdict import Verdict


def _num(x: float | None, fmt: str = ".3g") -> str:
    return "-" if x is None else format(x, fmt)


def render_verdict(v: Verdict) -> str:
    """First line: PASS, or FAIL [check] with the reason. Then where, errors, checks, timing."""
    head = f"PASS  {v.reason}" if v.passed else f"FAIL [{v.check}] {v.reason}"
    lines = [head]
    place = ", ".join(p for p in (f"variant {v.variant}" if v.variant else "", f"draw {v.draw}" if v.draw else "",
                                  f"output {v.output_index}" if v.output_index else "",
                                  f"index {v.where}" if v.where else "") if p)
    lines.append(f"  {v.problem} <- {v.candidate}   ({v.mode})")
    if place:
        lines.append(f"  at: {place}")
    if v.rel_norm_err is not None or v.max_abs_err is not None:
        lines.append(f"  error: ‖out−ref‖/‖ref‖ {_num(v.rel_norm_err)}, max |out−ref| "
                     f"{_num(v.max_abs_err)}, max rel {_num(v.max_rel_err)}")
    lines.append(f"  checks: {', '.join(v.checks)}")
    if v.variants_skipped:
        lines.append(f"  skipped: {'; '.join(v.variants_skipped)}")
    for c in v.cases:
        if c.draw.startswith("edge:"):
            how = f"refused: {c.refused}" if c.refused else f"answered, ‖out−ref‖/‖ref‖ {_num(c.rel_norm)} ({c.policy})"
            lines.append(f"  {c.draw} on {c.variant}: {how}")
    for why in v.edges_skipped:
        lines.append(f"  skipped {why}")
    if v.tolerance:
        lines.append(f"  tolerance: {v.tolerance}")
    if v.sandbox:
        lines.append(f"  candidate process: {v.sandbox}")
    for note in v.notes:
        first = note.strip().splitlines()[0] if note.strip() else ""
        if first:
            lines.append(f"  note: {first}")
    if v.timing:
        lines.append(render_timing(v.timing))
    return "\n".join(lines)


def render_timing(t: dict[str, Any]) -> str:
    """Candidate, eager, torch.compile and the floor side by side, labelled with the GPU they ran on."""
    floor = t["floor_s"]
    cand = next((r for r in t["timings"] if r["name"] == "candidate"), None)
    lines = [f"timing: measured on {t['device_name']} (torch {t['torch_version']}, triton {t['triton_version']}, "
             f"{t['date']}); median of {cand['runs'] if cand else '?'} interleaved runs, L2 flushed, "
             f"{t['input_sets']} input set(s)",
             f"  {'':<10} {'median µs':>11} {'IQR µs':>9} {'min µs':>9} {'max µs':>9} {'speedup':>8} "
             f"{'time/floor':>10} {'% roofline':>10}"]
    for r in t["timings"]:
        sp = cand["median_s"] and r["median_s"] / cand["median_s"] if cand else None
        speed = "1.00x" if r["name"] == "candidate" else (f"{sp:.2f}x" if sp else "-")
        lines.append(f"  {r['name']:<10} {r['median_s'] * 1e6:>11.2f} {r['iqr_s'] * 1e6:>9.2f} "
                     f"{r['min_s'] * 1e6:>9.2f} {r['max_s'] * 1e6:>9.2f} {speed:>8} "
                     f"{_num(r.get('time_over_floor'), '.2f'):>10} {_num(r.get('pct_of_roofline'), '.1f'):>10}")
    c = t["ceilings"]
    bandwidth = t.get("floor_label") or f"{c['copy_bandwidth'] / 1e12:.2f} TB/s copy"   # older reports: copy only
    lines.append(f"  {'floor':<10} {floor * 1e6:>11.2f}   from {t['min_bytes'] / 1e6:.1f} MB, "
                 f"{t['flops'] / 1e9:.3g} GFLOP ({t['dtype']}{', matrix' if t['matrix'] else ''}); ceilings "
                 f"{bandwidth}; matmul "
                 + ", ".join(f"{k} {v / 1e12:.0f}" for k, v in sorted(c["matmul_flops"].items())) + " TFLOP/s")
    lines.append(f"  speedup = baseline time / candidate time; physics floor {t['physics_floor_s'] * 1e6:.2f} µs "
                 f"({t['physics_source']})")
    for n in t.get("notes", []):
        lines.append(f"  note: {n}")
    return "\n".join(lines)
