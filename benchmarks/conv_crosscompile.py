"""Every convolution schedule the tool would time, cross-compiled on the CPU (issue #19's gfx942 line, predicted).

For each convolution group (family "conv": forward and transposed, 1-d / 2-d / 3-d, depthwise, pointwise) of each
problem file, at the file's own (default) sizes, in each dtype, and for each target: the schedules the search times
first in predicted mode (generate/group_search.py's seeds: search/families.py's conv_seeds for the target, then the
default schedule, those the space forbids dropped), each module generated for the target's arch and every kernel of
the conv group (the product and the copies launched before it) built by the builder (kerntailor.builder: a worker
process with a timeout per compile, the build cache). One record per kernel: target, schedule, compiled or the
one-line error, MFMA / MMA instruction count and kinds, VGPRs / AGPRs / registers, spills, scratch, LDS, occupancy
(the compiler's and the target rule's, which counts LDS). `expects_matrix`: the kernel's source calls tl.dot (every
conv product but the depthwise form's multiply-adds). The summary expects matrix instructions of each such kernel
but an fp32 one in ieee precision on NVIDIA (no fp32 MMA there: Triton lowers it to FMAs by design; AMD has fp32
MFMA) and lists every expected one that shows none.

    PYTHONPATH=src python benchmarks/conv_crosscompile.py FILE_OR_DIR [...] --out-dir DIR \
        [--dtype bf16,fp32] [--targets gfx942,gfx90a,gfx950,sm_90] [--timeout-s 180]
    PYTHONPATH=src python benchmarks/conv_crosscompile.py - --out-dir DIR --summary-only    # the markdown again

A directory stands for its *.py files whose text mentions a convolution (conv / Conv); files without a conv group
after capture are listed as such. Writes DIR/conv_crosscompile.json (rewritten after each file, so a cut run keeps
what it built) and DIR/conv_crosscompile.md (the summary). Everything here is predicted (cross-compiled), not
measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCH_TARGETS = {"gfx942": "mi300x", "gfx90a": "mi250x", "gfx950": "mi355x", "sm_90": "h200"}
_CONV_TEXT = re.compile(r"\bconv|Conv")
_DOT = re.compile(r"\b(?:tl\.dot|_dot_\w+)\(")   # tl.dot, or the precision policy's helper around it


def problem_files(paths: list[Path]) -> list[Path]:
    """The files named, and each directory's *.py whose text mentions a convolution, sorted, once each."""
    files = []
    for p in paths:
        if p.is_dir():
            files += [f for f in sorted(p.glob("*.py")) if _CONV_TEXT.search(f.read_text(errors="replace"))]
        else:
            files.append(p)
    return list(dict.fromkeys(files))


def schedule_label(schedule) -> str:
    """form_BMxBNxBK_wW_sS[_precision]: form pw (pointwise), ph (phase split), tc (tap order, staged), tp (tap
    order), to (taps outer), ig (the implicit GEMM in the weight's order), dw (depthwise)."""
    s = schedule
    form = "pw" if s.pointwise else "ph" if s.phases else "tc" if s.stage else "tp" if s.taps else \
        "to" if s.taps_outer else "ig"
    precision = f"_{s.precision}" if s.precision != "ieee" else ""
    return f"{form}_{s.BLOCK_M}x{s.BLOCK_N}x{s.BLOCK_K}_w{s.num_warps}_s{s.num_stages}{precision}"


def conv_kind(node) -> dict:
    from kerntailor.codegen.conv import is_depthwise

    w = node.operands[1].shape
    kernel = tuple(w[2:])
    return {"dims": len(w) - 2, "transposed": node.transposed, "depthwise": is_depthwise(node),
            "pointwise_kernel": all(k == 1 for k in kernel), "kernel": list(kernel), "stride": list(node.stride),
            "groups": node.groups, "x": list(node.operands[0].shape), "w": list(w), "describe": node.describe()}


def timed_schedules(gen, group, target, dtype: str) -> tuple[list[tuple[str, object]], dict]:
    """([(role, schedule)], the group's sizes): what search_group times first in predicted mode, in its order (the
    target's seeds, then the default), each once."""
    from kerntailor.codegen import default_schedule
    from kerntailor.generate.group_search import _seeds
    from kerntailor.generate.kernels import group_work
    from kerntailor.search.families import make_space, seed_knobs

    _, sizes = group_work(gen, group, dtype)
    base = default_schedule(gen, group)
    space = make_space("conv", target, dtype=dtype, **sizes)
    configs = _seeds(space, base, seed_knobs("conv", target, dtype=dtype, **sizes))
    default = space.config_of(base)
    out, n = [], 0
    for c in configs:
        if c == default:
            role = "default"
        else:
            n += 1
            role = f"seed{n}"
        out.append((role, space.schedule(c, base)))
    return out, sizes


def file_jobs(path: Path, dtype: str, targets: list) -> tuple[dict, list[tuple[dict, object, object]]]:
    """(the file's row, [(record stub, KernelSource or None, Target)]): one job per conv group x target x timed
    schedule x kernel of the group (None: codegen refused the schedule, the stub says why)."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import default_schedule, generate_module, plan_of
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.problem import load_problem

    row = {"problem": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path), "dtype": dtype}
    try:
        spec = load_problem(path, dtype=dtype)
        cap, gen = capture_generalized(spec)
        plan = plan_of(gen.graph)
    except Exception as e:   # a file the tool refuses (KerntailorError or worse) is a row, not the end of the sweep
        row["skipped"] = " ".join(f"{type(e).__name__}: {e}".split())[:300]
        return row, []
    groups = [g for g in plan.groups if g.family == "conv"]
    row["conv_groups"] = [g.name for g in groups]
    if not groups:
        row["skipped"] = f"no conv group (families {sorted({g.family for g in plan.groups})})"
        return row, []
    work_dtype = cap.cost.dtype
    defaults = {g.name: default_schedule(gen, g) for g in plan.groups}
    jobs = []
    for group in groups:
        kind = conv_kind(gen.graph.node(group.nodes[0]))
        row.setdefault("kinds", {})[group.name] = kind
        for target in targets:
            try:
                schedules, sizes = timed_schedules(gen, group, target, work_dtype)
            except Exception as e:
                row.setdefault("errors", []).append(f"{group.name} {target.arch}: space: {type(e).__name__}: {e}"[:300])
                continue
            row.setdefault("sizes", {})[group.name] = sizes
            for role, schedule in schedules:
                stub = {"problem": row["problem"], "dtype": dtype, "work_dtype": work_dtype, "group": group.name,
                        "conv": kind["describe"], "depthwise": kind["depthwise"], "transposed": kind["transposed"],
                        "dims": kind["dims"], "target": target.name, "arch": target.arch, "role": role,
                        "schedule": schedule_label(schedule), "knobs": schedule.knobs()}
                try:
                    module = generate_module(spec, gen, plan, dict(defaults) | {group.name: schedule}, target.name,
                                             target.arch)
                except Exception as e:   # codegen's refusal is a record too
                    jobs.append((stub | {"kernel": None, "compiled": False,
                                         "error": " ".join(f"codegen: {type(e).__name__}: {e}".split())[:300]},
                                 None, target))
                    continue
                main = next(k for k in module.kernels if k.group == group.name)
                for k in main.launches:
                    if not k.source:
                        continue
                    stub_k = stub | {"kernel": k.kernel_name, "product": k is main,
                                     "expects_matrix": bool(_DOT.search(k.source))}
                    jobs.append((stub_k, kernel_source(module.source, k, gen), target))
    return row, jobs


def record_of(stub: dict, result) -> dict:
    if result is None:
        return stub
    f = result.facts
    rec = stub | {"compiled": result.ok, "error": result.error or None, "rejected": result.rejected_reason,
                  "seconds": round(result.seconds, 1)}
    if f is not None:
        rec |= {"matrix_instr_count": f.matrix_instr_count, "matrix_instr_kinds": list(f.matrix_instr_kinds),
                "registers": f.registers, "vgprs": f.vgprs, "agprs": f.agprs, "sgprs": f.sgprs, "spills": f.spills,
                "vgpr_spills": f.vgpr_spills, "sgpr_spills": f.sgpr_spills, "scratch_bytes": f.scratch_bytes,
                "spills_to_memory": f.spills_to_memory, "lds_bytes": f.lds_bytes, "occupancy": f.occupancy,
                "occupancy_rule": f.occupancy_rule, "occupancy_limited_by": f.occupancy_limited_by}
    return rec


def build_records(jobs: list, pool, cache=None) -> list[dict]:
    """The records of `jobs`, each kernel built in `pool` (a BuildPool: worker processes, a timeout per compile),
    or read from `cache` (a BuildCache) where it was built before."""
    results = {i: pool.build([src], [target], cache=cache)[0] for i, (_, src, target) in enumerate(jobs)
               if src is not None}
    return [record_of(stub, results.get(i)) for i, (stub, _, _) in enumerate(jobs)]


def matrix_expected(rec: dict) -> bool:
    """Whether a record's kernel should hold matrix instructions: it calls tl.dot, and its operands have a matrix
    instruction on the target (every dtype on AMD; on NVIDIA 16-bit operands or tf32-family fp32, not ieee fp32)."""
    if not rec.get("expects_matrix"):
        return False
    ieee_fp32 = rec.get("work_dtype") == "fp32" and rec.get("knobs", {}).get("precision", "ieee") == "ieee"
    return not (rec["arch"].startswith("sm_") and ieee_fp32)


def summarize(records: list[dict], rows: list[dict], header: dict) -> str:
    """The markdown summary: per target and dtype the counts, then every failure, every spill, every product
    without matrix instructions."""
    lines = [f"# Convolution schedules cross-compiled ({header['date']}, predicted, not measured)", "",
             f"- command: `{header['command']}`", f"- machine: {header['machine']}",
             f"- toolchain: {header['toolchain']}", f"- files: {header['files']} ({header['files_with_conv']} with a "
             f"conv group); conv groups x dtypes: {header['groups']}", "",
             "Products are the conv kernels (tl.dot, or the depthwise form's multiply-adds); copies are the tap "
             "order's channels-last copy kernels launched before them. Matrix instructions are expected of every "
             "tl.dot product but fp32 ieee ones on NVIDIA (FMAs by design: no fp32 MMA). Occupancy: waves per SIMD "
             "(AMD) / warps per SM (NVIDIA), the target rule's (counts LDS), median over compiled products.", "",
             "| target | dtype | schedules | kernels | compiled | products expecting matrix instr | with them | "
             "without | spilling (to memory) | defaults / first seeds spilling (to memory) | "
             "median VGPRs/regs | median occupancy |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keyf = lambda r: (r["arch"], r["dtype"])   # noqa: E731
    for arch in ARCH_TARGETS:
        for dtype in sorted({r["dtype"] for r in records}):
            rs = [r for r in records if keyf(r) == (arch, dtype)]
            if not rs:
                continue
            scheds = {(r["problem"], r["group"], r["schedule"], r["role"]) for r in rs}
            ok = [r for r in rs if r.get("compiled")]
            prods = [r for r in ok if r.get("product")]
            dot = [r for r in prods if matrix_expected(r)]
            mat = [r for r in dot if r.get("matrix_instr_count")]
            spill = [r for r in ok if r.get("spills")]
            mem = [r for r in ok if r.get("spills_to_memory")]
            regs = [r["registers"] for r in prods if r.get("registers") is not None]
            occ = [r["occupancy_rule"] for r in prods if r.get("occupancy_rule") is not None]
            first = {role: [r for r in ok if r.get("product") and r["role"] == role] for role in ("default", "seed1")}
            firsts = " / ".join(f"{sum(bool(r.get('spills')) for r in x)} of {len(x)} "
                                f"({sum(bool(r.get('spills_to_memory')) for r in x)})" for x in first.values())
            lines.append(f"| {arch} | {dtype} | {len(scheds)} | {len(rs)} | {len(ok)} | {len(dot)} | {len(mat)} | "
                         f"{len(dot) - len(mat)} | {len(spill)} ({len(mem)}) | {firsts} | "
                         f"{statistics.median(regs) if regs else '-'} | {statistics.median(occ) if occ else '-'} |")
    kinds = {}
    for r in records:
        for k in r.get("matrix_instr_kinds") or ():
            kinds.setdefault((r["arch"], r["dtype"]), set()).add(k)
    lines += ["", "## Matrix instruction kinds", ""]
    lines += [f"- {a} {d}: {', '.join(sorted(v))}" for (a, d), v in sorted(kinds.items())]

    def where(r):
        return f"{r['arch']} {r['dtype']} {r['problem']} {r['group']} {r['role']} {r['schedule']} {r.get('kernel')}"
    fails = [r for r in records if not r.get("compiled")]
    lines += ["", f"## Failures ({len(fails)})", ""]
    lines += [f"- {where(r)}: {r.get('error')}" for r in fails] or ["none"]
    nomat = [r for r in records if r.get("compiled") and matrix_expected(r) and not r.get("matrix_instr_count")]
    lines += ["", f"## tl.dot kernels without the matrix instructions expected ({len(nomat)})", ""]
    lines += [f"- {where(r)}" for r in nomat] or ["none"]
    rejected = [r for r in records if r.get("rejected")]
    lines += ["", f"## Compiled but over the target's limits ({len(rejected)})", ""]
    lines += [f"- {where(r)}: {r['rejected']}" for r in rejected] or ["none"]
    spills = [r for r in records if r.get("compiled") and r.get("spills")]
    lines += ["", f"## Spills ({len(spills)}; VGPR/SGPR counts on AMD, bytes on NVIDIA; scratch bytes per lane)", ""]
    lines += [f"- {where(r)}: spills {r['spills']} (vgpr {r.get('vgpr_spills')}, sgpr {r.get('sgpr_spills')}), "
              f"scratch {r.get('scratch_bytes')} B, registers {r.get('registers')}" for r in spills] or ["none"]
    skipped = [r for r in rows if r.get("skipped")]
    lines += ["", f"## Files without a cross-compiled conv group ({len(skipped)})", ""]
    lines += [f"- {r['problem']} ({r['dtype']}): {r['skipped']}" for r in skipped] or ["none"]
    return "\n".join(lines) + "\n"


def toolchain() -> str:
    import torch
    import triton

    parts = [f"python {platform.python_version()}", f"torch {torch.__version__}", f"triton {triton.__version__}"]
    try:
        from kerntailor.builder.compile import ptxas_path

        out = subprocess.run([ptxas_path("sm_90"), "--version"], capture_output=True, text=True, timeout=30).stdout
        parts.append("ptxas " + (re.findall(r"release ([\d.]+)", out) or ["?"])[0])
    except Exception:   # noqa: BLE001 - the note is informative only
        pass
    parts.append("AMD: Triton's bundled LLVM (AMDGCN text, no ROCm install)")
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.targets import get_target

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--dtype", default="bf16,fp32")
    parser.add_argument("--targets", default="gfx942", help="archs, comma-separated: gfx942,gfx90a,gfx950,sm_90")
    parser.add_argument("--timeout-s", type=float, default=180.0, help="per compile (its worker is killed after)")
    parser.add_argument("--deadline-s", type=float, default=None, help="stop starting files after this")
    parser.add_argument("--summary-only", action="store_true",
                        help="rewrite DIR's markdown from its JSON (no capture, no builds); FILES are ignored")
    args = parser.parse_args(argv)
    if args.summary_only:
        data = json.loads((args.out_dir / "conv_crosscompile.json").read_text())
        rows, records = data.pop("rows"), data.pop("records")
        (args.out_dir / "conv_crosscompile.md").write_text(summarize(records, rows, data))
        return 0
    archs = [a.strip() for a in args.targets.split(",") if a.strip()]
    unknown = [a for a in archs if a not in ARCH_TARGETS]
    if unknown:
        print(f"conv_crosscompile.py: unknown target {unknown[0]!r} (one of {', '.join(ARCH_TARGETS)})",
              file=sys.stderr)
        return 2
    targets = [get_target(ARCH_TARGETS[a]) for a in archs]
    files = problem_files(args.files)
    missing = [f for f in files if not f.is_file()]
    if missing:
        print(f"conv_crosscompile.py: no such file: {missing[0]}", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    header = {"command": " ".join(["PYTHONPATH=src python"] + [str(a) for a in sys.argv]),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": f"CPU only ({platform.node()}, {platform.machine()}, 1 build worker), no GPU",
              "toolchain": toolchain(), "mode": "predicted (cross-compiled), not measured", "files": len(files)}
    rows, records = [], []
    started = time.monotonic()
    with BuildPool(1, timeout_s=args.timeout_s) as pool:
        for dtype in [d.strip() for d in args.dtype.split(",") if d.strip()]:
            for path in files:
                if args.deadline_s is not None and time.monotonic() - started > args.deadline_s:
                    rows.append({"problem": str(path), "dtype": dtype, "skipped": "deadline"})
                    continue
                t0 = time.monotonic()
                row, jobs = file_jobs(path, dtype, targets)
                recs = build_records(jobs, pool, BuildCache())
                row["seconds"] = round(time.monotonic() - t0, 1)
                rows.append(row)
                records += recs
                print(json.dumps({"problem": row["problem"], "dtype": dtype, "kernels": len(recs),
                                  "compiled": sum(bool(r.get("compiled")) for r in recs),
                                  "skipped": row.get("skipped"), "s": row["seconds"]}), flush=True)
                write(args.out_dir, header, rows, records)
    write(args.out_dir, header, rows, records)
    return 0


def write(out_dir: Path, header: dict, rows: list, records: list) -> None:
    header = header | {"files_with_conv": len({r["problem"] for r in rows if r.get("conv_groups")}),
                       "groups": sum(len(r.get("conv_groups", ())) for r in rows)}
    (out_dir / "conv_crosscompile.json").write_text(compact_json(header | {"rows": rows, "records": records}))
    (out_dir / "conv_crosscompile.md").write_text(summarize(records, rows, header))


def compact_json(data: dict) -> str:
    """JSON with one line per top-level key and per row / record (thousands of records: indent=1 took 4.5 MB)."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list):
            items = ",\n  ".join(json.dumps(v, separators=(",", ":")) for v in value)
            parts.append(f"{json.dumps(key)}: [\n  {items}\n ]" if value else f"{json.dumps(key)}: []")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


if __name__ == "__main__":
    raise SystemExit(main())
