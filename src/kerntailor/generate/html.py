"""report.html beside report.md (generate) and bench.html beside bench.md (bench): one static page each.

What a person opens in a browser, from a file, with no server and no script: the roofline of the target (its
ceilings, every candidate the report keeps as a point, the winner, eager and torch.compile marked), the speed-ups
against eager and torch.compile, the ISA facts of each kernel, and the referee's verdict with its checks. The
charts are drawn by matplotlib (Agg) and embedded as inline SVG, so the page is one self-contained file. The
parts every page shares (style, tagged numbers, tables, charts) are in kerntailor/htmlpage.py, which profile's
page (profiling/html.py) uses too; `write_html` writes any of them.

Every number the page shows that report.json (or bench.json) holds is wrapped in an element carrying
`data-key` (its path in the document, slashes between keys and list indices, as in a JSON pointer: bench's keys
hold dots) and `data-value` (the JSON value as written): tests/test_html_report.py compares them with the
document. Every time is shown under its label, measured (on which GPU) or predicted (for which target, by which
model), as report.md does.

matplotlib is the `report` extra: `write_html` writes nothing and logs one line where it does not import, so
a core install keeps working; it is imported only when a page is written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

from kerntailor.generate.report import config_text, place
from kerntailor.htmlpage import esc, num, page, ratio, svg, table, us, us_field

log = logging.getLogger(__name__)


def roofline_points(report: dict) -> list[dict]:
    """The points of the roofline chart: each with `kind` (candidate, winner, eager, compile), `seconds` for the
    whole problem, and `label` (measured on what, or predicted for what)."""
    kernels = report.get("kernels") or []
    timed = [k for k in kernels if k.get("seconds") is not None]
    total = sum(k["seconds"] for k in timed)
    points = []
    for k in timed:   # a candidate of one group: the others at their winners' times
        for cand in [k] + list(k.get("runners_up") or []):
            if cand.get("seconds") is not None:
                points.append({"kind": "candidate", "seconds": total - k["seconds"] + cand["seconds"],
                               "label": k.get("label") or ""})
    timing = (report.get("verdict") or {}).get("timing")
    baselines = report.get("baselines") or {}
    if timing:
        rows = {r["name"]: r for r in timing.get("timings", [])}
        where = f"measured on {timing.get('device_name')}"
        for name in ("candidate", "eager", "compile"):
            if (rows.get(name) or {}).get("median_s"):
                points.append({"kind": "winner" if name == "candidate" else name,
                               "seconds": rows[name]["median_s"], "label": f"{where} (median, referee's timing)"})
    else:
        if timed:
            points.append({"kind": "winner", "seconds": total, "label": timed[0].get("label") or ""})
        if baselines and not baselines.get("error"):
            for name in ("eager", "compile"):
                if baselines.get(f"{name}_us"):
                    points.append({"kind": name, "seconds": baselines[f"{name}_us"] * 1e-6,
                                   "label": baselines.get("label", "predicted")})
    return points


def roofline_ceilings(report: dict) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(memory ceilings in bytes/s, compute ceilings in FLOP/s), each with its label: the measured ones of
    the referee's timing where it ran on the GPU, and the target's vendor peaks."""
    from kerntailor.targets.lookup import get_target

    memory, compute = [], []
    timing = (report.get("verdict") or {}).get("timing") or {}
    ceilings = timing.get("ceilings") or {}
    device = ceilings.get("device_name", "the GPU")
    for key, what in (("read_bandwidth", "read"), ("write_bandwidth", "write"), ("copy_bandwidth", "copy")):
        if ceilings.get(key):
            memory.append((f"{what} {ceilings[key] / 1e12:.2f} TB/s, measured on {device}", ceilings[key]))
    dtype = timing.get("dtype")
    if timing.get("matrix") and dtype and (ceilings.get("matmul_flops") or {}).get(dtype):
        rate = ceilings["matmul_flops"][dtype]
        compute.append((f"library matmul {dtype} {rate / 1e12:.0f} TFLOP/s, measured on {device}", rate))
    try:
        target = get_target((report.get("target") or {}).get("name") or "")
    except Exception:   # an unknown target name: only the measured ceilings
        return memory, compute
    memory.append((f"{target.memory_bandwidth / 1e12:.2f} TB/s, vendor peak ({target.name})",
                   target.memory_bandwidth))
    for dt, matrix in ((dtype or "fp32", False), (dtype or "fp32", True)):
        rate = target.peak(dt, matrix)
        name = f"{'matrix' if matrix else 'vector'} {dt} {rate / 1e12:.0f} TFLOP/s, vendor peak ({target.name})"
        if rate and all(abs(rate - r) > 1e-6 * rate for _, r in compute):
            compute.append((name, rate))
    return memory, compute


MARKS = {"candidate": ("o", "#7a8aa0", 30), "winner": ("*", "#d62728", 220), "eager": ("s", "#2f6fb0", 70),
         "compile": ("D", "#2a9d4a", 60)}


def rooflinesvg(report: dict) -> str:
    """The roofline chart (log-log, FLOP/s against FLOP/byte) at the problem's arithmetic intensity (its FLOPs
    over its fewest bytes); a note where the FLOPs or bytes are not known."""
    cost = report.get("cost") or {}
    flops, nbytes = cost.get("flops") or 0, cost.get("min_bytes") or 0
    points = roofline_points(report)
    if not (flops > 0 and nbytes > 0 and points):
        return '<p class="label">No roofline: the problem\'s FLOPs or bytes are not known, or nothing was timed.</p>'
    memory, compute = roofline_ceilings(report)
    ai = flops / nbytes

    def draw(ax):
        lo, hi = min(ai / 100, 0.01), max(ai * 100, 1000.0)
        xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        top = max((r for _, r in compute), default=None)
        for i, (name, bw) in enumerate(memory):
            ax.plot(xs, [min(bw * x, top) if top else bw * x for x in xs], color=f"C{i}", lw=1.3,
                    ls="-" if i == 0 else "--", label=name)
        for i, (name, rate) in enumerate(compute):
            ax.axhline(rate, color=f"C{i + len(memory)}", lw=1, ls=":", label=name)
        ax.axvline(ai, color="#bbb", lw=0.8)
        seen = set()
        for p in sorted(points, key=lambda p: p["kind"] == "winner"):
            marker, color, size = MARKS[p["kind"]]
            name = {"candidate": "candidate", "winner": "chosen kernel", "eager": "eager",
                    "compile": "torch.compile"}[p["kind"]]
            label = None if p["kind"] in seen else f"{name} ({p['label']})"
            seen.add(p["kind"])
            ax.scatter([ai], [flops / p["seconds"]], marker=marker, s=size, color=color, zorder=5,
                       edgecolors="black" if p["kind"] == "winner" else "none", linewidths=0.6, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_xlabel("arithmetic intensity (FLOP / byte, fewest bytes)")
        ax.set_ylabel("FLOP/s")
        ax.set_title(f"Roofline of {(report.get('target') or {}).get('name')}: {report.get('problem')} "
                     f"at {ai:.3g} FLOP/byte")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")

    return svg(draw, (10, 6))


def speedupsvg(bars: list[tuple[str, float]], title: str) -> str:
    """Horizontal bars of speed-ups (a line at 1.0: faster on its right)."""
    if not bars:
        return ""

    def draw(ax):
        names = [n for n, _ in bars]
        values = [v for _, v in bars]
        ax.barh(range(len(bars)), values, color=["#2a9d4a" if v >= 1 else "#c0392b" for v in values])
        ax.set_yticks(range(len(bars)), names, fontsize=8)
        ax.invert_yaxis()
        ax.axvline(1.0, color="black", lw=1)
        ax.set_xlim(0, max(values) * 1.15)
        ax.set_xlabel("speed-up (time of the baseline / time of ours; 1.0: as fast)")
        ax.set_title(title, fontsize=10)
        for i, v in enumerate(values):
            ax.text(v, i, f" {v:.2f}x", va="center", fontsize=7)
        ax.grid(True, axis="x", alpha=0.3)

    return svg(draw, (10, max(1.6, 0.28 * len(bars) + 1.0)))


# ---- generate's report ----------------------------------------------------------------------------------------

def render_html(report: dict) -> str:
    """report.html for a generate report (the dict written as report.json)."""
    t = report.get("target") or {}
    title = f"{report.get('problem')} on {t.get('name')} ({t.get('arch')})"
    mode = report.get("mode")
    body = [f"<h1>{esc(title)}</h1>",
            f"<p>Mode: <b>{esc(mode)}</b>"
            + (" (times are predicted by kerntailor's analytical model from the cross-compiled ISA; nothing ran on "
               "this target)" if mode == "predicted" else "") + "</p>"]
    if report.get("status") == "library":
        body.append(f"<p><b>Library path emitted</b>: {esc(report.get('reason'))}</p>")
    floor, cost = report.get("floor"), report.get("cost") or {}
    if floor:
        body.append(f"<p>Roofline floor on {esc(t.get('name'))}: {us_field('floor/us', floor.get('us'))}, "
                    f"{esc(floor.get('bound'))}-bound <span class='label'>({esc(floor.get('label'))}; "
                    f"{esc(floor.get('bandwidth'))})</span>. FLOPs {num('cost/flops', cost.get('flops'))}, "
                    f"fewest bytes {num('cost/min_bytes', cost.get('min_bytes'))}.</p>")
    body += ["<h2>Roofline</h2>", rooflinesvg(report)]
    body += _speedups(report)
    body += _kernels(report)
    body += _verdict(report.get("verdict"))
    return page(title, body)


def _speedups(report: dict) -> list[str]:
    timing = (report.get("verdict") or {}).get("timing")
    baselines = report.get("baselines") or {}
    if timing:
        out = ["<h2>Times and speed-ups (measured)</h2>",
               f"<p class='label'>Measured on {esc(timing.get('device_name'))} "
               f"(torch {esc(timing.get('torch_version'))}, triton {esc(timing.get('triton_version'))}, "
               f"{esc(timing.get('date'))}), median of interleaved runs with the L2 flushed.</p>"]
        rows = timing.get("timings", [])
        cand = next((r.get("median_s") for r in rows if r["name"] == "candidate"), None)
        cells = []
        for i, r in enumerate(rows):
            base = f"verdict/timing/timings/{i}"
            cells.append([esc(r["name"]), us(f"{base}/median_s", r.get("median_s")),
                          us(f"{base}/q1_s", r.get("q1_s")) + " – " + us(f"{base}/q3_s", r.get("q3_s")),
                          esc(f"{r['median_s'] / cand:.2f}x") if cand and r.get("median_s") else "-"])
        if timing.get("floor_s"):
            cells.append([f"roofline floor <span class='label'>({esc(timing.get('floor_label'))})</span>",
                          us("verdict/timing/floor_s", timing["floor_s"]), "",
                          esc(f"{timing['floor_s'] / cand:.2f}x") if cand else "-"])
        out.append(table(["what", "median", "quartiles", "vs this kernel"], cells))
        bars = [(f"vs {n} (measured)", timing[f"speedup_vs_{k}"]) for n, k in (("eager", "eager"),
                ("torch.compile", "compile")) if timing.get(f"speedup_vs_{k}")]
        out.append("<p>Speed-ups, measured: vs eager "
                   f"{ratio('verdict/timing/speedup_vs_eager', timing.get('speedup_vs_eager'))}, vs torch.compile "
                   f"{ratio('verdict/timing/speedup_vs_compile', timing.get('speedup_vs_compile'))}.</p>")
        out.append(speedupsvg(bars, f"Speed-up of the chosen kernel, measured on {timing.get('device_name')}"))
        return out
    if not baselines:
        return ["<h2>Times and speed-ups</h2><p>No baselines in this report.</p>"]
    label = baselines.get("label", "predicted")
    if baselines.get("error"):
        return [f"<h2>Times and speed-ups</h2><p>Baselines {esc(label)}: not estimated "
                f"({esc(baselines['error'])}).</p>"]
    out = [f"<h2>Times and speed-ups ({esc(label)})</h2>",
           "<p class='label'>Nothing ran: eager is one kernel per ATen op at the target's rates, torch.compile the "
           "fusion plan's kernels (costmodel/baselines.py).</p>"]
    cells = [["this kernel", us_field("baselines/kernel_us", baselines.get("kernel_us")), "", "-"]]
    for name, key in (("eager", "eager"), ("torch.compile", "compile")):
        cells.append([esc(name), us_field(f"baselines/{key}_us", baselines.get(f"{key}_us")),
                      num(f"baselines/{key}_kernels", baselines.get(f"{key}_kernels")),
                      ratio(f"baselines/speedup_vs_{key}", baselines.get(f"speedup_vs_{key}"))])
    out.append(table([f"what ({esc(label)})", "time", "kernels", "vs this kernel (predicted)"], cells))
    bars = [(f"vs {n} (predicted)", baselines[f"speedup_vs_{k}"]) for n, k in (("eager", "eager"),
            ("torch.compile", "compile")) if baselines.get(f"speedup_vs_{k}")]
    out.append(speedupsvg(bars, f"Speed-up of the chosen kernel, {label}"))
    return out


ISA_FACTS = ("registers", "vgprs", "agprs", "sgprs", "spills", "vgpr_spills", "sgpr_spills", "scratch_bytes",
             "lds_bytes", "occupancy", "occupancy_rule", "occupancy_limited_by", "matrix_instr_count",
             "code_size_bytes")


def _kernels(report: dict) -> list[str]:
    kernels = report.get("kernels") or []
    if not kernels:
        return []
    out = ["<h2>Kernels and their ISA</h2>"]
    rows = []
    for i, k in enumerate(kernels):
        isa = k.get("isa") or {}
        facts = ", ".join(f"{n}={num(f'kernels/{i}/isa/{n}', isa[n])}" for n in ISA_FACTS
                          if isa.get(n) is not None)
        if isa.get("matrix_instr_kinds"):
            facts += ", matrix instructions: " + esc(", ".join(map(str, isa["matrix_instr_kinds"])))
        if isa.get("global_load_widths"):
            facts += ", global loads: " + esc(", ".join(f"{w[0]} ×{w[1]}" for w in isa["global_load_widths"]))
        rows.append([esc(k.get("group")), esc(k.get("family")), esc(config_text(k.get("config"))),
                     us(f"kernels/{i}/seconds", k.get("seconds")) + f"<br><span class='label'>{esc(k.get('label'))}"
                     "</span>", esc(f"{isa.get('backend', '')} {isa.get('arch', '')}"), facts or "-"])
    out.append(table(["kernel", "family", "config", "time", "ISA of", "ISA facts"], rows))
    for i, k in enumerate(kernels):
        if k.get("runners_up"):
            out.append(f"<p>Runners-up for {esc(k.get('group'))} <span class='label'>({esc(k.get('label'))})"
                       "</span>:</p>")
            out.append(table(["config", "time"], [[esc(config_text(r.get("config"))),
                                                    us(f"kernels/{i}/runners_up/{j}/seconds", r.get("seconds"))]
                                                   for j, r in enumerate(k["runners_up"])]))
    return out


def _verdict(v: dict | None) -> list[str]:
    if not v:
        return []
    passed = v.get("passed")
    out = ["<h2>The referee's verdict</h2>",
           f"<p><span class='{'pass' if passed else 'fail'}'>{'PASS' if passed else 'FAIL'}</span> "
           f"({esc(v.get('mode'))}): {esc(v.get('reason') or 'all checks passed')}</p>",
           "<p>Checks: " + " ".join(f"<span class='check{' failed' if c == v.get('check') else ''}'>{esc(c)}</span>"
                                    for c in v.get("checks") or []) + "</p>",
           f"<p>Worst relative error {num('verdict/rel_norm_err', v.get('rel_norm_err'))}, largest absolute "
           f"{num('verdict/max_abs_err', v.get('max_abs_err'))}. <span class='label'>Tolerance: "
           f"{esc(v.get('tolerance'))}</span></p>"]
    cases = v.get("cases") or []
    if cases:
        out.append(table(["variant", "draw", "policy", "‖out−ref‖/‖ref‖", "max |Δ|", "eager's own", "refused"],
                         [[esc(c.get("variant")), esc(c.get("draw")), esc(c.get("policy")),
                           num(f"verdict/cases/{i}/rel_norm", c.get("rel_norm")),
                           num(f"verdict/cases/{i}/max_abs", c.get("max_abs")),
                           num(f"verdict/cases/{i}/eager_rel_norm", c.get("eager_rel_norm")),
                           esc(c.get("refused") or "")] for i, c in enumerate(cases)]))
    for key, what in (("variants_skipped", "Variants skipped"), ("edges_skipped", "Edge cases skipped"),
                      ("notes", "Notes")):
        if v.get(key):
            out.append(f"<p>{what}:</p><ul>" + "".join(f"<li>{esc(s)}</li>" for s in v[key]) + "</ul>")
    if v.get("sandbox"):
        out.append(f"<p class='label'>The candidate ran {esc(v['sandbox'])}</p>")
    return out


# ---- bench's result -------------------------------------------------------------------------------------------

BENCH_SUMMARY = ("problems", "correct", "generated", "mixed", "library", "kernelbench_correct", "fast_1.0_vs_eager",
                 "fast_1.0_vs_compile", "geomean_speedup_vs_eager", "geomean_speedup_vs_compile",
                 "geomean_floor_over_time", "median_time_over_floor", "kept_slower", "passed_referee_share",
                 "geomean_speedup_vs_predicted_eager", "geomean_speedup_vs_predicted_compile")


def render_bench_html(result: dict) -> str:
    """bench.html for a bench result (the dict written as bench.json)."""
    title = (f"bench {result.get('suite')} on {result.get('target')} ({result.get('dtype')}, precision "
             f"{result.get('precision', 'ieee')}, {result.get('date')})")
    rows = result.get("rows") or []
    labels = sorted({r["label"] for r in rows if r.get("label")})
    body = [f"<h1>{esc(title)}</h1>", f"<p class='label'>Times: {esc('; '.join(labels) or '-')}.</p>"]
    if result.get("note"):
        body.append(f"<p class='label'>{esc(result['note'])}</p>")
    body += ["<h2>Speed-ups per problem</h2>"]
    predicted = "; ".join(sorted({r["baseline_label"] for r in rows if r.get("baseline_label")}))
    for base, name, label in (("eager", "eager", "; ".join(labels)), ("compile", "torch.compile", "; ".join(labels)),
                              ("predicted_eager", "eager", predicted), ("predicted_compile", "torch.compile",
                                                                         predicted)):
        bars = [(r["problem"], r[f"{base}_us"] / r["time_us"]) for r in rows
                if r.get("time_us") and r.get(f"{base}_us")]
        body.append(speedupsvg(bars, f"against {name} ({label}); our times: {'; '.join(labels)}"))
    body.append(_bench_floorsvg(rows))
    body += ["<h2>Problems</h2>", _bench_rows(rows), "<h2>Summary</h2>", _bench_summary(result.get("summary") or {})]
    return page(title, body)


def _bench_floorsvg(rows: list[dict]) -> str:
    """Each problem's time against its roofline floor (log-log; the diagonal is the floor)."""
    pts = [(r["floor_us"], r["time_us"], r["status"]) for r in rows if r.get("floor_us") and r.get("time_us")]
    if not pts:
        return ""

    def draw(ax):
        lo = min(min(p[0], p[1]) for p in pts) / 2
        hi = max(max(p[0], p[1]) for p in pts) * 2
        ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="at the roofline floor")
        for status, color in (("generated", "#2a9d4a"), ("library", "#2f6fb0")):
            sel = [p for p in pts if p[2] == status]
            if sel:
                ax.scatter([p[0] for p in sel], [p[1] for p in sel], color=color, s=30, label=status, zorder=5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("roofline floor (us)")
        ax.set_ylabel("time of the emitted module (us)")
        ax.set_title("Time against the roofline floor (above the line: slower than the floor)", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)

    return svg(draw, (7, 5))


def _bench_rows(rows: list[dict]) -> str:
    cells = []
    for i, r in enumerate(rows):
        cells.append([esc(r.get("problem")), esc(r.get("level")), esc(r.get("status")),
                      us_field(f"rows/{i}/time_us", r.get("time_us")),
                      us_field(f"rows/{i}/eager_us", r.get("eager_us")),
                      us_field(f"rows/{i}/compile_us", r.get("compile_us")),
                      us_field(f"rows/{i}/predicted_eager_us", r.get("predicted_eager_us")),
                      us_field(f"rows/{i}/predicted_compile_us", r.get("predicted_compile_us")),
                      us_field(f"rows/{i}/floor_us", r.get("floor_us")),
                      esc(r.get("label") or r.get("error") or r.get("message") or "")])
    return table(["problem", "level", "status", "time", "eager", "compile", "predicted eager", "predicted compile",
                  "floor", "label"], cells)


def _bench_summary(summary: dict) -> str:
    keys = [k for k in BENCH_SUMMARY if any(s.get(k) is not None for s in summary.values())]
    cells = [[esc(scope)] + [num(f"summary/{scope}/{k}", s.get(k)) for k in keys] for scope, s in summary.items()]
    return table(["scope"] + [esc(k) for k in keys], cells)


# ---- writing --------------------------------------------------------------------------------------------------

def write_html(path: Path, render: Callable[[dict], str], document: dict) -> bool:
    """Write `render(document)` to `path` whole (report.place); False, with one logged line, where matplotlib
    (the `report` extra) does not import: the Markdown and JSON beside it are written all the same, and a page
    of an earlier run at `path` is removed (it would show another run's numbers)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        path.unlink(missing_ok=True)
        log.warning("%s not written: matplotlib is not installed (pip install 'kerntailor[report]')", path.name)
        return False
    place(path, render(document))
    return True



def main(argv: list[str] | None = None) -> None:
    """`python -m kerntailor.generate.html DOC.json OUT.html`: the page of a report.json, a bench.json (one with
    "rows") or a profile.json (one with "groups"), as generate, bench and profile write it; how the committed
    examples are rewritten."""
    import sys

    from kerntailor.profiling.html import render_profile_html

    source, target = (argv if argv is not None else sys.argv[1:])
    document = json.loads(Path(source).read_text())
    render = (render_bench_html if "rows" in document else render_profile_html if "groups" in document
              else render_html)
    write_html(Path(target), render, document)


if __name__ == "__main__":
    main()
