"""KernelBench as a suite on the CPU: every problem file through load → capture → plan (what
`kerntailor inspect` does), one child process per file, killed at the time limit.

    python benchmarks/kernelbench_sweep.py [DIR_OR_FILE ...] --out benchmarks/data/kernelbench_sweep_cpu_DATE [--jobs 1]

Directories default to ../shared/kernelbench/level1..3 next to the repository. Per file it records the status
(captured / refused / timeout / crash), the one-line reason, the seconds the child worked, the plan's
group families, the number of groups and the families that have no code generator yet (since mixed plans, an
anchor of such a family is a `library` group: its family is read from the group's anchor node). A refusal is a
KerntailorError (what the CLI prints as one line); a crash is anything else (a traceback, a dead child).
After the plan, each captured file is also taken through shape generalization over its variants (what
`generate` does next), under its own limit; that result is a separate column and never changes the status.
With --build ARCH[,ARCH] (sm_90, gfx942, gfx90a, gfx950), a generalized file's first module (generate's default
schedules after the plan around codegen's refusals: pipeline.first_module) is generated for each arch's target and
every kernel cross-compiled (no GPU), under --build-limit: a kernel Triton's interpreter runs but its
compiler rejects is found here before a GPU call (the 3-d taps-outer clash of 2026-12-04 was one).
Writes OUT.json (every row, the command, machine, toolchain, date) and OUT.md (the summary).
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

from kerntailor.codegen import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = tuple(ROOT.parent / "shared" / "kernelbench" / f"level{k}" for k in (1, 2, 3))
# The plan families kerntailor.codegen.generate_kernel has a generator for: codegen's own registry, less the
# "library" stand-in (tests/test_kernelbench_sample.py checks codegen refuses the others by name).
GENERATED_FAMILIES = tuple(name for name in FAMILIES if name != "library")
STATUSES = ("captured", "refused", "timeout", "crash")


def one_line(text: str, limit: int = 400) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return (lines[0] if lines else "")[:limit]


# --- the child: one file ------------------------------------------------------------------------------

ARCH_TARGETS = {"sm_90": "h200", "gfx942": "mi300x", "gfx90a": "mi250x", "gfx950": "mi355x"}


def _build_first_module(path: str, archs: tuple[str, ...]) -> dict:
    """The build column: per arch, the first module's kernels cross-compiled (one line per failure)."""
    import tempfile

    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.generate.pipeline import GenerateSettings, first_module
    from kerntailor.targets import get_target

    result: dict = {"build": "ok", "build_failures": [], "kernels_built": 0, "max_spills": 0, "max_scratch_bytes": 0,
                    "worst_kernel": "", "library_groups": 0}
    worst_spills = 0   # the spills of the kernel named in worst_kernel (most scratch, then most spills)
    with tempfile.TemporaryDirectory() as out:
        for arch in archs:
            target = get_target(ARCH_TARGETS[arch])
            first = first_module(path, GenerateSettings(target=target.name, out_dir=Path(out)))
            result["library_groups"] = len(first.library_groups)
            sources = [kernel_source(first.module.source, k, first.gen) for kernel in first.module.kernels
                       for k in kernel.every_kernel if k.source]   # a library group's kernel: host lines only
            for source, r in zip(sources, build_many(sources, target)):
                result["kernels_built"] += 1
                if not r.usable:   # did not compile, or compiled past the target's limits (LDS, registers)
                    result["build"] = "failed"
                    why = r.error if not r.ok else f"compiled, cannot launch: {r.rejected_reason}"
                    result["build_failures"].append(f"{arch} {source.kernel_name}: {one_line(why or '', 300)}")
                elif r.facts is not None:
                    if (r.facts.scratch_bytes, r.facts.spills or 0) > (result["max_scratch_bytes"], worst_spills):
                        worst_spills = r.facts.spills or 0
                        result["max_scratch_bytes"] = r.facts.scratch_bytes
                        result["worst_kernel"] = _spill_line(source.kernel_name, r.facts)
                    result["max_spills"] = max(result["max_spills"], r.facts.spills or 0)
    return result


def _spill_line(name: str, facts) -> str:
    """One kernel's spill facts in one line (AMD: VGPR spills go to scratch, SGPR spills to VGPR lanes)."""
    if facts.backend == "hip":
        return (f"{name}: {facts.scratch_bytes} B scratch, {facts.vgpr_spills} VGPR / {facts.sgpr_spills} SGPR "
                f"spills, {facts.vgprs} VGPRs + {facts.agprs} AGPRs, {facts.num_warps} warps")
    return f"{name}: {facts.scratch_bytes} B stack, {facts.spills} B spilled, {facts.registers} registers"


def _inspect_file(path: str, target: str, conn, build: tuple[str, ...] = ()) -> None:
    """Runs in the child: load → capture → plan, then generalization, then (with `build`) the first module's
    kernels cross-compiled; sends one dict per stage."""
    from kerntailor.errors import KerntailorError

    started = time.monotonic()
    try:
        from kerntailor.capture import capture_problem
        from kerntailor.codegen import plan_of
        from kerntailor.problem import load_problem
        from kerntailor.targets import resolve_target

        resolve_target(target)
        problem = load_problem(path)
        capture = capture_problem(problem)
        plan = plan_of(capture.graph)
        families = [g.family for g in plan.groups]
        # a library group runs an anchor without a generator (conv, attention, recurrent): count its anchor's family
        anchors = [capture.graph.node(g.nodes[0]).family if g.family == "library" else g.family for g in plan.groups]
        row = {"status": "captured", "reason": "", "families": sorted(set(families)), "groups": len(families),
               "no_generator": sorted({f for f in anchors if f not in GENERATED_FAMILIES}),
               "library_groups": families.count("library"),
               "nodes": len(capture.graph.nodes),
               "variants": {v.name: v.describe() for v in problem.variants if not v.is_default}}
    except KerntailorError as e:
        conn.send({"status": "refused", "reason": one_line(str(e)), "reason_lines": len(str(e).strip().splitlines()),
                   "seconds": time.monotonic() - started})
        return
    except BaseException as e:  # a traceback: exactly what must not happen
        conn.send({"status": "crash", "reason": f"{type(e).__name__}: {one_line(str(e))}",
                   "traceback": traceback.format_exc()[-2000:], "seconds": time.monotonic() - started})
        return
    row["seconds"] = time.monotonic() - started
    conn.send(row)
    started = time.monotonic()
    try:
        from kerntailor.capture.capture import capture_generalized

        _, gen = capture_generalized(problem)
        result = {"generalized": "ok", "generalize_reason": "", "fitted_sizes": len(gen.exprs)}
    except KerntailorError as e:
        result = {"generalized": "refused", "generalize_reason": one_line(str(e))}
    except BaseException as e:
        result = {"generalized": "crash", "generalize_reason": f"{type(e).__name__}: {one_line(str(e))}"}
    result["generalize_seconds"] = time.monotonic() - started
    conn.send(result)
    if not build or result["generalized"] != "ok":
        return
    started = time.monotonic()
    from kerntailor.codegen import CodegenUnsupported

    try:
        built = _build_first_module(path, build)
    except (KerntailorError, CodegenUnsupported) as e:   # refused before any kernel: generate's library path, one
        built = {"build": "refused", "build_failures": [f"{type(e).__name__}: {one_line(str(e))}"]}   # line
    except BaseException as e:
        built = {"build": "crash", "build_failures": [f"{type(e).__name__}: {one_line(str(e))}"]}
    built["build_seconds"] = time.monotonic() - started
    conn.send(built)


def sweep_file(path: Path, target: str, limit_s: float, generalize: bool = True, build: tuple[str, ...] = (),
               build_limit_s: float = 300.0) -> dict:
    """One file in a forked child (torch is imported once, in the parent); killed at `limit_s` per stage
    (`build_limit_s` for the build stage)."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_inspect_file, args=(str(path), target, send, build if generalize else ()),
                        daemon=True)
    started = time.monotonic()
    child.start()
    send.close()
    row: dict = {"file": str(path)}
    try:
        row.update(receive(recv, child, limit_s, "load, capture and plan"))
        if row["status"] == "captured" and generalize:
            extra = receive(recv, child, limit_s, "generalization")
            if extra.get("status") == "timeout":
                extra = {"generalized": "timeout", "generalize_reason": extra["reason"],
                         "generalize_seconds": limit_s}
            elif "generalized" not in extra:
                extra = {"generalized": "crash", "generalize_reason": extra.get("reason", "")}
            row.update(extra)
            if build and row.get("generalized") == "ok":
                built = receive(recv, child, build_limit_s, "the build")
                if built.get("status") == "timeout":
                    built = {"build": "timeout", "build_failures": [built["reason"]], "build_seconds": build_limit_s}
                elif "build" not in built:
                    built = {"build": "crash", "build_failures": [built.get("reason", "")]}
                row.update(built)
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
    row["wall_seconds"] = round(time.monotonic() - started, 2)
    for key in ("seconds", "generalize_seconds", "build_seconds"):
        if row.get(key) is not None:   # a child that died has none (receive): its row says so, the sweep goes on
            row[key] = round(row[key], 2)
    return row


def receive(recv, child, limit_s: float, what: str) -> dict:
    if recv.poll(limit_s):
        try:
            return recv.recv()
        except EOFError:   # the pipe closed: the child is exiting; reap it, or it reads as a timeout below
            child.join(5)
    if child.is_alive():
        child.kill()
        return {"status": "timeout", "reason": f"{what} ran past the {limit_s:g} s limit", "seconds": limit_s}
    child.join()
    return {"status": "crash", "reason": f"the child process died (exit code {child.exitcode}) during {what}",
            "seconds": None}


def preload() -> None:
    """Imported once in the parent: every forked child shares them. torch.export's own modules (torch._dynamo,
    functorch, sympy) otherwise load at each child's first export: 2-8 s of every file's seconds (7.8 s with the
    cores shared, 2026-12-05)."""
    import torch  # noqa: F401
    import torch.export._trace  # noqa: F401

    import kerntailor.capture.capture  # noqa: F401  (and what the children import lazily, once, here)
    import kerntailor.codegen  # noqa: F401
    import kerntailor.plan  # noqa: F401
    import kerntailor.problem.slots  # noqa: F401
    import kerntailor.problem.variants  # noqa: F401
    import kerntailor.targets  # noqa: F401


# --- the suite ----------------------------------------------------------------------------------------

def problem_files(paths) -> list[Path]:
    """Every problem file of each directory (sorted by name), or the file itself."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.glob("*.py") if not f.name.startswith("_"))
        elif p.is_file():
            files.append(p)
        else:
            raise SystemExit(f"kernelbench_sweep: error: {p} is neither a directory nor a file")
    return files


def summarize(rows: list[dict]) -> dict:
    by_level: dict[str, dict[str, int]] = {}
    for r in rows:
        level = Path(r["file"]).parent.name
        counts = by_level.setdefault(level, {s: 0 for s in STATUSES})
        counts[r["status"]] += 1
    total = {s: sum(c[s] for c in by_level.values()) for s in STATUSES}
    captured = [r for r in rows if r["status"] == "captured"]
    no_gen: dict[str, int] = {}
    for r in captured:
        for f in r["no_generator"]:
            no_gen[f] = no_gen.get(f, 0) + 1
    return {"files": len(rows), "by_level": by_level, "total": total,
            "coverage": round(total["captured"] / len(rows), 4) if rows else 0.0,
            "all_generated_families": sum(1 for r in captured if not r["no_generator"]),
            "no_generator_files": dict(sorted(no_gen.items())),
            "generalized": sum(1 for r in captured if r.get("generalized") == "ok"),
            "built": {b: sum(1 for r in captured if r.get("build") == b)
                      for b in ("ok", "failed", "refused", "timeout", "crash")},
            "max_seconds": max((r["seconds"] or 0 for r in rows), default=0)}


def toolchain() -> dict:
    import torch
    import triton

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {"python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__,
            "commit": commit + ("+dirty" if dirty else "")}


def render_markdown(result: dict) -> str:
    s = result["summary"]
    lines = [f"# KernelBench sweep on the CPU ({result['date']})", "",
             f"Command: `{result['command']}`  ",
             f"Machine: {result['machine']}; 1-minute load average {result['load_average']['start']} at the start, "
             f"{result['load_average']['end']} at the end (the cores are shared)  ",
             "Toolchain: " + ", ".join(f"{k} {v}" for k, v in result["toolchain"].items()) + "  ",
             f"Limit: {result['limit_s']:g} s per file (load + capture + plan, in a child process killed at the "
             f"limit); target {result['target']}", "",
             f"**{s['total']['captured']} of {s['files']} captured ({100 * s['coverage']:.1f} %)**; "
             f"{s['total']['refused']} refused, {s['total']['timeout']} timed out, {s['total']['crash']} crashed; "
             f"slowest {s['max_seconds']:.1f} s. Every group has a generator in {s['all_generated_families']} of "
             f"the captured; {s['generalized']} generalize over their variants.", "",
             "| level | files | captured | refused | timeout | crash |", "|---|---|---|---|---|---|"]
    for level, c in sorted(s["by_level"].items()):
        lines.append(f"| {level} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in STATUSES) + " |")
    lines += ["", "Families without a generator (files): "
              + (", ".join(f"{f} {n}" for f, n in s["no_generator_files"].items()) or "none"), "",
              "## Not captured", "", "| file | status | seconds | reason |", "|---|---|---|---|"]
    for r in result["rows"]:
        if r["status"] != "captured":
            lines.append(f"| {_short(r['file'])} | {r['status']} | {r['seconds'] or '-'} | "
                         f"{r['reason'].replace('|', '/')} |")
    lines += ["", "## Captured, not generalized over the variants", "", "| file | result | reason |",
              "|---|---|---|"]
    for r in result["rows"]:
        if r["status"] == "captured" and r.get("generalized") != "ok":
            lines.append(f"| {_short(r['file'])} | {r.get('generalized')} | "
                         f"{r.get('generalize_reason', '').replace('|', '/')} |")
    if any("build" in r for r in result["rows"]):
        b = s["built"]
        lines += ["", f"## The first module cross-compiled ({', '.join(result.get('build', []))})", "",
                  f"Built: {b['ok']} ok, {b['failed']} with a kernel that failed, {b['refused']} refused, "
                  f"{b['timeout']} timed out, {b['crash']} crashed.", "",
                  "Max spills: bytes on NVIDIA; on AMD the count of spilled VGPRs + SGPRs (SGPRs spill to VGPR "
                  "lanes; VGPRs to scratch). Max scratch: bytes per lane (AMD) or stack frame (NVIDIA) of the "
                  "kernel that uses most (then spills most), named in the next column.", "",
                  "| file | build | kernels | max spills | max scratch (B) | that kernel | library groups | s | "
                  "failures |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in result["rows"]:
            if "build" in r:
                lines.append(f"| {_short(r['file'])} | {r['build']} | {r.get('kernels_built', '-')} | "
                             f"{r.get('max_spills', '-')} | {r.get('max_scratch_bytes', '-')} | "
                             f"{r.get('worst_kernel') or '-'} | {r.get('library_groups', '-')} | "
                             f"{r.get('build_seconds', '-')} | "
                             f"{'; '.join(r.get('build_failures', [])).replace('|', '/')[:600] or '-'} |")
    lines += ["", "## Every file", "", "| file | status | s | groups | families | no generator | generalized |",
              "|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {_short(r['file'])} | {r['status']} | {r['seconds'] or '-'} | {r.get('groups', '-')} | "
                     f"{' '.join(r.get('families', [])) or '-'} | {' '.join(r.get('no_generator', [])) or '-'} | "
                     f"{r.get('generalized', '-')} |")
    return "\n".join(lines) + "\n"


def _short(file: str) -> str:
    p = Path(file)
    return f"{p.parent.name}/{p.name}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(d) for d in DEFAULT_DIRS], metavar="DIR_OR_FILE")
    parser.add_argument("--out", required=True, help="path prefix: writes OUT.json and OUT.md")
    parser.add_argument("--jobs", type=int, default=1, help="files at once (each its own child process)")
    parser.add_argument("--limit", type=float, default=30.0, help="seconds per file before its child is killed")
    parser.add_argument("--target", default="mi300x")
    parser.add_argument("--no-generalize", action="store_true", help="skip the generalization column")
    parser.add_argument("--build", default="", help="ARCH[,ARCH]: cross-compile each generalized file's first "
                        "module for these (sm_90, gfx942, gfx90a, gfx950)")
    parser.add_argument("--build-limit", type=float, default=300.0, help="seconds for the build stage of a file")
    args = parser.parse_args(argv)
    build = tuple(a for a in args.build.split(",") if a)
    unknown = [a for a in build if a not in ARCH_TARGETS]
    if unknown:
        raise SystemExit(f"kernelbench_sweep: error: unknown arch {', '.join(unknown)} (known: "
                         f"{', '.join(ARCH_TARGETS)})")
    preload()
    files = problem_files(args.paths)
    tools = toolchain()   # at the start: the code the files ran with (commits may land while a long sweep runs)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = os.getloadavg()
    rows: list[dict] = []

    def run(path: Path) -> dict:
        row = sweep_file(path, args.target, args.limit, not args.no_generalize, build, args.build_limit)
        print(json.dumps({k: row.get(k) for k in ("file", "status", "seconds", "reason", "generalized", "build",
                                                  "build_failures") if k in row}), flush=True)
        return row

    if args.jobs <= 1:
        rows = [run(p) for p in files]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(run, files))
    result = {"command": " ".join(["python"] + [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
              "date": started.date().isoformat(), "started_utc": started.isoformat(timespec="seconds"),
              "machine": f"CPU only, {os.cpu_count()} cores ({platform.machine()}, {platform.system()})",
              "load_average": {"start": round(load_before[0], 2), "end": round(os.getloadavg()[0], 2)},
              "toolchain": tools, "target": args.target, "limit_s": args.limit, "jobs": args.jobs,
              "build": list(build), "build_limit_s": args.build_limit,
              "summary": summarize(rows), "rows": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(result, indent=1) + "\n")
    Path(f"{out}.md").write_text(render_markdown(result))
    print(json.dumps(result["summary"]), flush=True)


if __name__ == "__main__":
    main()
