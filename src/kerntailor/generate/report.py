"""report.json and report.md for `generate`, the library-path module, and how files land in --out.

Nothing is written into --out in place: `place` writes beside the file and renames it over, so a killed run
leaves the old file or the new one, never half of one; kernel.py is placed only after the referee passed
what it holds (a candidate is judged from a temporary folder outside --out; `emit_library` judges the
library-path module before it places it).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import os
import tempfile
from pathlib import Path

from kerntailor.errors import KerntailorError
from kerntailor.problem import ProblemSpec

# Every JSON document kerntailor writes (report.json, bench.json, the --json output of each command) carries
# this version and the toolchain that wrote it. Bump it when a field changes meaning or is removed (adding
# fields needs no bump).
JSON_SCHEMA_VERSION = 1


def stamp(document: dict) -> dict:
    """`document` with "schema_version" and "toolchain" (torch, triton, python, kerntailor, CUDA/ROCm, driver,
    GPU) first; those of an earlier run (a report served from the store) are replaced by the current ones, the
    stored report keeping its own under "stored_toolchain"."""
    from kerntailor.store import toolchain_fingerprint

    earlier = document.get("toolchain")
    current = toolchain_fingerprint().to_dict()
    rest = {k: v for k, v in document.items() if k not in ("schema_version", "toolchain")}
    if earlier and earlier != current and "stored_toolchain" not in rest:
        rest["stored_toolchain"] = earlier
    return {"schema_version": JSON_SCHEMA_VERSION, "toolchain": current} | rest


def _us(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f} us"


def config_text(config) -> str:
    """A schedule as `XBLOCK=1024, num_warps=4`, never a dict repr."""
    if not isinstance(config, dict):
        return str(config)
    return ", ".join(f"{k}={config_text(v) if isinstance(v, dict) else v}" for k, v in config.items()) or "-"


def render_markdown(report: dict) -> str:
    t = report.get("target", {})
    lines = [f"# {report.get('problem')} on {t.get('name')} ({t.get('arch')})", "",
             f"Mode: **{report.get('mode')}**" + (" (times are predicted by kerntailor's analytical model from the "
                                                  "cross-compiled ISA; nothing ran on this target)"
                                                  if report.get("mode") == "predicted" else "")]
    if (report.get("precision") or "").startswith("fp8"):
        lines += ["", f"Precision policy for matrix products: **{report['precision']}** (operands quantized to fp8 "
                      "with power-of-two scales, fp32 accumulation; the referee judges against the float64 "
                      "reference with the same quantization, by the output dtype's tolerance, and reports the "
                      "error against the unquantized reference)"]
    elif report.get("precision"):
        lines += ["", f"Precision policy for fp32 matrix products: **{report['precision']}** (the referee judges "
                      f"by {'the tf32' if report['precision'] == 'tf32' else 'the fp32'} tolerance)"]
    if report.get("status") == "library":
        lines += ["", f"**Library path emitted**: {report.get('reason')}"]
    if report.get("mixed"):
        lines += ["", f"**Mixed module**: {report['generated_groups']} of {report['groups']} groups generated "
                      f"({report['generated_share']:.0%}); the library runs the others, inside kernel.py:"]
        lines += [f"- {g['group']} ({g['anchor']}): `{g['call']}`: {g['reason']}" for g in report["library_groups"]]
        lines += ["", "The referee allowed exactly those calls, and the operators they dispatch to on its device: "
                      + ", ".join(f"`{op}`" for op in report.get("library_ops", []))]
    floor = report.get("floor")
    if floor:
        lines += ["", f"Roofline floor on {t.get('name')}: {floor['us']:.1f} us, {floor['bound']}-bound "
                      f"({floor['label']})."]
    kernels = report.get("kernels") or []
    if kernels:
        lines += ["", "| kernel | family | config | time | ISA |", "|---|---|---|---|---|"]
        for k in kernels:
            isa = k.get("isa") or {}
            names = ("registers", "vgprs", "agprs", "spills", "lds_bytes", "occupancy_rule", "matrix_instr_count")
            facts = ", ".join(f"{n}={isa[n]}" for n in names if isa.get(n) is not None)
            lines.append(f"| {k['group']} | {k['family']} | {config_text(k['config'])} | {_us(k['seconds'])} "
                         f"({k['label']}) | "
                         f"{facts} |")
        kept = [k["group"] for k in kernels if k.get("searched") is False]
        if kept:
            lines += ["", f"{len(kept)} of {len(kernels)} kernels kept their default schedule, not searched: the "
                          f"search's budget went to the kernels with more of the floor first (generate/effort.py): "
                          + ", ".join(kept)]
        for k in kernels:
            if k.get("runners_up"):
                lines += ["", f"Runners-up for {k['group']}:"]
                lines += [f"- {config_text(r['config'])}: {_us(r['seconds'])}" for r in k["runners_up"]]
    lines += baselines_markdown(report.get("baselines"))
    v = report.get("verdict")
    if v:
        # the referee's reason states the worst error where it passed; the figure is added only where it does not
        error = "" if "worst" in (v.get("reason") or "") else f"; worst relative error {v.get('rel_norm_err')}"
        # on the library path the verdict is the generated candidate's (generated.py where it passed), not
        # kernel.py's: said so, or a FAIL reads as the emitted file's
        whose = " on the generated candidate, not the emitted library path" if report.get("status") == "library" else ""
        lines += ["", f"Referee{whose}: **{'PASS' if v.get('passed') else 'FAIL'}** ({v.get('mode')}): "
                      f"{v.get('reason') or 'all checks passed'}{error}"]
        if v.get("sandbox"):
            lines += ["", f"The candidate ran {v['sandbox']}"]
        timing = v.get("timing")
        if timing:
            lines += ["", f"Measured on {timing.get('device_name')} (torch {timing.get('torch_version')}, triton "
                          f"{timing.get('triton_version')}, {timing.get('date')}), median of interleaved runs with "
                          "the L2 flushed:", "", "| what | median | quartiles | vs this kernel |", "|---|---|---|---|"]
            rows = {r["name"]: r for r in timing.get("timings", [])}
            cand = (rows.get("candidate") or {}).get("median_s")
            for name, r in rows.items():
                ratio = f"{r['median_s'] / cand:.2f}x" if cand else "-"
                lines.append(f"| {name} | {_us(r['median_s'])} | {_us(r.get('q1_s'))} – {_us(r.get('q3_s'))} | "
                             f"{ratio} |")
            if timing.get("floor_s"):
                lines.append(f"| roofline floor (measured ceilings: {timing.get('floor_label') or 'copy bandwidth'}) | "
                             f"{_us(timing['floor_s'])} | | "
                             f"{timing['floor_s'] / cand:.2f}x |" if cand else "")
            if timing.get("library_floor_s") and cand:   # PyTorch's defaults: fp32 convolutions on TF32 (cuDNN)
                lines.append(f"| the library's floor (fp32 convolutions at the tf32 rate, PyTorch's default) | "
                             f"{_us(timing['library_floor_s'])} | | {timing['library_floor_s'] / cand:.2f}x |")
    return "\n".join(lines) + "\n"


def baselines_markdown(baselines: dict | None) -> list[str]:
    """The predicted eager and torch.compile times (report["baselines"], predicted mode only), every number
    under its label, and the predicted speed-ups where the kernel's time is predicted too."""
    if not baselines:
        return []
    label = baselines.get("label", "predicted")
    if baselines.get("error"):
        return ["", f"Baselines {label}: not estimated ({baselines['error']})."]
    lines = ["", f"Baselines, {label}: nothing ran; eager is one kernel per ATen op at the target's rates, "
                 "torch.compile the fusion plan's kernels (costmodel/baselines.py):", "",
             f"| what ({label}) | time | kernels | vs this kernel (predicted) |", "|---|---|---|---|"]
    for name, key in (("eager", "eager"), ("torch.compile", "compile")):
        ratio = baselines.get(f"speedup_vs_{key}")
        lines.append(f"| {name} | {_us(baselines[f'{key}_us'] * 1e-6)} | {baselines[f'{key}_kernels']} | "
                     f"{'-' if ratio is None else f'{ratio:.2f}x'} |")
    return lines


def place(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: written beside it, then renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_report(report: dict, out: Path, html: bool = True) -> None:
    """report.json, report.md and, with `html`, report.html (only with matplotlib: see generate/html.py)."""
    from kerntailor.generate.html import render_html, write_html

    stamped = stamp(report)
    place(out / "report.json", json.dumps(stamped, indent=2, default=str))
    place(out / "report.md", render_markdown(report))
    if html:
        write_html(out / "report.html", render_html, json.loads(json.dumps(stamped, default=str)))


def check_out_owner(out: Path, problem: Path, force: bool = False) -> None:
    """KerntailorError (before any work) when `out` holds the kernel.py of another problem than `problem`,
    unless `force`. The owner is what out/report.json names (its resolved path, else its problem name); a
    kernel.py without a report.json is of unknown origin and refused too."""
    if force or not (out / "kernel.py").exists():
        return
    what = _owner(out / "report.json")
    mine = (str(Path(problem).resolve()), Path(problem).stem)
    if what is not None and (what[0] == mine[0] or (not what[0] and what[1] == mine[1])):
        return
    held = f"the kernel of {what[1]} ({what[0] or 'path not recorded'})" if what else \
        "a kernel.py without a report.json"
    raise KerntailorError(f"--out {out} holds {held}; pass --force to overwrite it, or choose another --out")


def _owner(report_json: Path) -> tuple[str, str] | None:
    """(resolved problem path or "", problem name) of the report at `report_json`, or None if unreadable."""
    try:
        report = json.loads(report_json.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(report, dict) or not report.get("problem"):
        return None
    path = report.get("path") or ""
    if path and not Path(path).is_absolute():   # written before paths were resolved: not comparable
        path = ""
    return path, str(report["problem"])


def judging_folder() -> tempfile.TemporaryDirectory:
    """A temporary folder (outside --out) for a kernel.py the referee has not passed yet."""
    return tempfile.TemporaryDirectory(prefix="kerntailor-judging-")


# Library-path verdicts given within one `generate` (library_verdicts), by (problem content, dtype, compiled): the
# module differs only in its docstring's reason, so a second pass of one problem (pipeline._generate_template: a
# generated convolution's, then the library convolution's) takes the first's verdict instead of judging the same code
# again. Judging the compiled one compiles the reference per variant: level-2 15's took 60 s of its 178 s on the H100
# (2026-12-06, --jobs 6), after its first pass had judged it.
_LIBRARY_VERDICTS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("library_verdicts", default=None)


@contextlib.contextmanager
def library_verdicts():
    """The block's library-path verdicts are judged once each (emit_library)."""
    token = _LIBRARY_VERDICTS.set({})
    try:
        yield
    finally:
        _LIBRARY_VERDICTS.reset(token)


def emit_library(problem: ProblemSpec, reason: str, out: Path, compiled: bool = False, watch=None):
    """Judge the library-path module (the static library check off: running the reference is its point) and
    place it as out/kernel.py only if it passes. Returns the verdict, naming out/kernel.py. `watch`: the
    referee's progress (verify_candidate). Inside library_verdicts(), one judged before there is not judged again."""
    from kerntailor.verify import VerifySettings, verify_candidate

    source = library_module(problem, reason, compiled)
    known, key = _LIBRARY_VERDICTS.get(), (problem.content_hash, problem.dtype, compiled)
    verdict = known.get(key) if known is not None else None
    if verdict is None:
        with judging_folder() as tmp:
            path = Path(tmp) / "kernel.py"
            path.write_text(source)
            verdict = verify_candidate(problem, path, VerifySettings(library_path=True, draws=3), watch=watch)
        if known is not None:
            known[key] = verdict
    if verdict.passed:
        place(out / "kernel.py", source)
    return dataclasses.replace(verdict, candidate=str(out / "kernel.py"))


def library_module(problem: ProblemSpec, reason: str, compiled: bool = False) -> str:
    """kernel.py that runs the reference itself (vendor libraries): what the user keeps when we lose. With
    `compiled` (torch.compile was measured faster than eager on the target) the reference runs compiled, so
    a user who runs this module eagerly still gets the better of the two."""
    head = (f'"""{problem.name}: library path (no generated kernel is used).\n\nWhy: {reason}\n"""\n\n'
            f"{problem.source}\n\n")
    if not compiled:
        return head + "ModelNew = Model\n"
    return head + (
        "import torch as _torch\n\n\n"
        "class ModelNew(Model):\n"
        '    """The reference under torch.compile: measured faster than eager on the target."""\n\n'
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        "        self._library_forward = _torch.compile(super().forward)\n\n"
        "    def forward(self, *args):\n"
        "        return self._library_forward(*args)\n")
