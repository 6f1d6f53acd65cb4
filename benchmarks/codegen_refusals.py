"""Which planned fusion groups codegen refuses on problem files, and why: the groups the generate stage would then
split into a kernel per member (generate/pipeline.py's _plan_around_refusals) or hand to the library.

    python benchmarks/codegen_refusals.py [DIR_OR_FILE ...] --dtype fp32 bf16 --out benchmarks/data/DIR/NAME [--jobs 1]

Per file and dtype, in a forked child killed at --limit seconds (kernelbench_sweep.py's machinery): load ->
capture_generalized -> the plan generate starts from (codegen.plan_of: codegen's families, the anchors they refuse on
sight the library's) -> each group's default schedule (codegen.default_schedule) and kernel (codegen.generate_kernel,
for --arch), as codegen.generate_module writes them. Every refusal is a row: file, dtype, group, family, members,
the member codegen named (if any), the message. These are the first plan's refusals; for a file with any, what
generate makes of them (pipeline.first_module: the plan mended around them) is its `mended` column: kernels and
library groups. An error before codegen (load, capture, plan) is the file's status and its groups are not scanned;
an exception other than CodegenUnsupported inside codegen is a row of kind "crash". CPU only.
Writes OUT.json (every file's row, the command, machine, toolchain) and OUT.md (a tally by message pattern: the
numbers and names replaced by #).
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import re
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from kernelbench_sweep import ARCH_TARGETS, DEFAULT_DIRS, ROOT, one_line, preload, problem_files, receive, toolchain

STATUSES = ("scanned", "refused", "timeout", "crash")   # of a file: refused = an error before codegen


def scan_groups(problem, arch: str) -> dict:
    """Capture, plan and every group's kernel at its default schedule: the plan's size and the refusals."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import (
        CodegenUnsupported,
        default_schedule,
        generate_kernel,
        host_names,
        kernel_name,
        plan_of,
        writer_views,
    )

    _, gen = capture_generalized(problem)
    plan = plan_of(gen.graph)
    refusals, schedules = [], {}
    for group in plan.groups:
        try:
            schedules[group.name] = default_schedule(gen, group)
        except CodegenUnsupported as e:
            refusals.append(_refusal(gen, group, "schedule", e))
        except Exception as e:   # a bug in codegen, not a refusal
            refusals.append(_refusal(gen, group, "crash", e))
    gen, physical = writer_views(gen, plan, schedules)
    names = host_names(gen)
    for group in plan.launch_order():
        if group.name not in schedules:
            continue
        writer_gen = gen if group.family == "library" else physical
        try:
            generate_kernel(writer_gen, group, schedules[group.name], names, kernel_name(group), arch)
        except CodegenUnsupported as e:
            refusals.append(_refusal(gen, group, "kernel", e))
        except Exception as e:
            refusals.append(_refusal(gen, group, "crash", e))
    return {"groups": len(plan.groups), "families": dict(Counter(g.family for g in plan.groups)),
            "refusals": refusals}


def mended(path: str, dtype: str, arch: str) -> dict:
    """What generate makes of the refused plan (pipeline.first_module: the plan mended around every refusal, as many
    passes as it takes): its groups (kernels) and library groups, or the error that ended the mending."""
    import tempfile

    from kerntailor.codegen import CodegenUnsupported
    from kerntailor.errors import KerntailorError
    from kerntailor.generate.pipeline import GenerateSettings, first_module

    with tempfile.TemporaryDirectory() as out:
        try:
            first = first_module(path, GenerateSettings(target=ARCH_TARGETS[arch], dtype=dtype, out_dir=Path(out)))
        except (KerntailorError, CodegenUnsupported) as e:
            return {"error": f"{type(e).__name__}: {one_line(str(e))}"}
    return {"kernels": len(first.module.kernels), "library_groups": len(first.library_groups)}


def _refusal(gen, group, kind: str, e: Exception) -> dict:
    node = getattr(e, "node", None)
    message = one_line(str(e)) if kind != "crash" else f"{type(e).__name__}: {one_line(str(e))}"
    row = {"group": group.name, "family": group.family, "members": len(group.nodes), "kind": kind, "node": node,
           "message": message,
           "ops": [gen.graph.node(n).origin for n in group.nodes]}
    if kind == "crash":
        row["traceback"] = traceback.format_exc()[-1500:]
    return row


def _scan_child(path: str, dtype: str, arch: str, conn) -> None:
    from kerntailor.errors import KerntailorError
    from kerntailor.problem import load_problem

    started = time.monotonic()
    try:
        problem = load_problem(path, dtype=dtype)
        row = {"status": "scanned", "reason": ""} | scan_groups(problem, arch)
        if row["refusals"]:
            row["mended"] = mended(path, dtype, arch)
    except KerntailorError as e:   # load, capture or plan said no in one line: before codegen
        row = {"status": "refused", "reason": one_line(str(e))}
    except BaseException as e:
        row = {"status": "crash", "reason": f"{type(e).__name__}: {one_line(str(e))}",
               "traceback": traceback.format_exc()[-2000:]}
    row["seconds"] = round(time.monotonic() - started, 2)
    conn.send(row)


def scan_file(path: Path, dtype: str, arch: str, limit_s: float) -> dict:
    """One file in one dtype, in a forked child killed at `limit_s`."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_scan_child, args=(str(path), dtype, arch, send), daemon=True)
    child.start()
    send.close()
    try:
        row = receive(recv, child, limit_s, "load, capture, plan and codegen")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
    return {"file": f"{path.parent.name}/{path.name}", "dtype": dtype} | row


# --- the tally ------------------------------------------------------------------------------------------

# node and buffer names (pw8, cumsum0, p_fc_weight_1), numbers, quoted names, shapes and strides
_NAMES = re.compile(r"\b[A-Za-z_]*\d[\w]*\b|'[^']*'|\([\d, ]+\)|\[[\d, ]+\]")


def pattern(message: str) -> str:
    """A refusal's message with its numbers, shapes and node names replaced by # (one pattern per cause)."""
    return re.sub(r"#(?:[\s,x#]*#)*", "#", _NAMES.sub("#", message))


def tally(rows: list[dict]) -> list[dict]:
    """Refusals grouped by (family, pattern), most files first: each with its files and dtypes."""
    found: dict[tuple[str, str], dict] = {}
    for r in rows:
        for ref in r.get("refusals", []):
            key = (ref["family"], pattern(ref["message"]))
            entry = found.setdefault(key, {"family": key[0], "pattern": key[1], "groups": 0, "files": set(),
                                           "dtypes": set(), "example": ref["message"]})
            entry["groups"] += 1
            entry["files"].add(r["file"])
            entry["dtypes"].add(r["dtype"])
    out = [e | {"files": sorted(e["files"]), "dtypes": sorted(e["dtypes"])} for e in found.values()]
    return sorted(out, key=lambda e: (-len(e["files"]), -e["groups"], e["pattern"]))


def render_markdown(result: dict) -> str:
    rows = result["rows"]
    status = Counter((r["dtype"], r["status"]) for r in rows)
    lines = [f"# Codegen's refusals on the first plan ({result['date']})", "",
             f"Command: `{result['command']}`  ",
             f"Machine: {result['machine']}; load average {result['load_average']['start']} at the start, "
             f"{result['load_average']['end']} at the end  ",
             "Toolchain: " + ", ".join(f"{k} {v}" for k, v in result["toolchain"].items()) + "  ",
             f"Arch {result['arch']}; limit {result['limit_s']:g} s per file and dtype", "",
             "| dtype | files | scanned | with a refusal | groups | refused groups | refused before codegen | "
             "timeout | crash |", "|---|---|---|---|---|---|---|---|---|"]
    for dtype in result["dtypes"]:
        mine = [r for r in rows if r["dtype"] == dtype]
        lines.append(f"| {dtype} | {len(mine)} | {status[dtype, 'scanned']} | "
                     f"{sum(1 for r in mine if r.get('refusals'))} | {sum(r.get('groups', 0) for r in mine)} | "
                     f"{sum(len(r.get('refusals', [])) for r in mine)} | {status[dtype, 'refused']} | "
                     f"{status[dtype, 'timeout']} | {status[dtype, 'crash']} |")
    lines += ["", "## Refusals by cause (message pattern)", "", "| files | groups | family | pattern | dtypes | "
              "files (first 6) |", "|---|---|---|---|---|---|"]
    for e in result["tally"]:
        lines.append(f"| {len(e['files'])} | {e['groups']} | {e['family']} | {_cell(e['pattern'])} | "
                     f"{' '.join(e['dtypes'])} | {', '.join(e['files'][:6])} |")
    lines += ["", "## Every refusal", "", "| file | dtype | group | family | members | kind | node | message |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for ref in r.get("refusals", []):
            lines.append(f"| {r['file']} | {r['dtype']} | {ref['group']} | {ref['family']} | {ref['members']} | "
                         f"{ref['kind']} | {ref['node'] or '-'} | {_cell(ref['message'])} |")
    lines += ["", "## What generate makes of them (the plan mended around the refusals: pipeline.first_module)", "",
              "| file | dtype | groups planned | refused | kernels after mending | library groups |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("refusals"):
            m = r.get("mended", {})
            lines.append(f"| {r['file']} | {r['dtype']} | {r['groups']} | {len(r['refusals'])} | "
                         f"{m.get('kernels', _cell(m.get('error', '-')))} | {m.get('library_groups', '-')} |")
    lines += ["", "## Not scanned (an error before codegen, a timeout or a crash)", "",
              "| file | dtype | status | s | reason |", "|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "scanned":
            lines.append(f"| {r['file']} | {r['dtype']} | {r['status']} | {r.get('seconds') or '-'} | "
                         f"{_cell(r['reason'])} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "/")[:300]


def _write(out: Path, result: dict) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(result, indent=1) + "\n")
    Path(f"{out}.md").write_text(render_markdown(result))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(d) for d in DEFAULT_DIRS], metavar="DIR_OR_FILE")
    parser.add_argument("--out", required=True, help="path prefix: writes OUT.json and OUT.md")
    parser.add_argument("--dtype", nargs="+", default=["fp32"], help="the problem's dtype(s): every file in each")
    parser.add_argument("--arch", default="gfx942", choices=sorted(ARCH_TARGETS),
                        help="the arch the kernels are written for (matmul precisions)")
    parser.add_argument("--jobs", type=int, default=1, help="files at once (each its own child process)")
    parser.add_argument("--limit", type=float, default=180.0, help="seconds per file and dtype before its child is "
                        "killed")
    parser.add_argument("--retally", action="store_true", help="rewrite OUT.json's tally and OUT.md from its rows "
                        "(after a change to the message patterns), scanning nothing")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.retally:
        result = json.loads(Path(f"{out}.json").read_text())
        _write(out, result | {"tally": tally(result["rows"])})
        return
    preload()
    files = problem_files(args.paths)
    tools = toolchain()
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = os.getloadavg()
    work = [(path, dtype) for dtype in args.dtype for path in files]

    def run(item) -> dict:
        row = scan_file(*item, args.arch, args.limit)
        print(json.dumps({k: row.get(k) for k in ("file", "dtype", "status", "seconds", "reason", "groups")}
                         | {"refused": [f"{r['group']} {r['family']}: {r['message'][:160]}"
                                        for r in row.get("refusals", [])]}), flush=True)
        return row

    if args.jobs <= 1:
        rows = [run(item) for item in work]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(run, work))
    result = {"command": " ".join(["python", os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
              "date": started.date().isoformat(), "started_utc": started.isoformat(timespec="seconds"),
              "machine": f"CPU only, {os.cpu_count()} cores ({platform.machine()}, {platform.system()})",
              "load_average": {"start": round(load_before[0], 2), "end": round(os.getloadavg()[0], 2)},
              "toolchain": tools, "arch": args.arch, "limit_s": args.limit, "jobs": args.jobs, "dtypes": args.dtype,
              "tally": tally(rows), "rows": rows}
    _write(out, result)
    print(json.dumps([(len(e["files"]), e["groups"], e["family"], e["pattern"]) for e in result["tally"]]), flush=True)


if __name__ == "__main__":
    main()
