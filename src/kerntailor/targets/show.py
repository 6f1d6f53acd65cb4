"""`kerntailor targets`: the targets table as text (rich) or JSON."""

from __future__ import annotations

import io
import json
from dataclasses import asdict

from kerntailor.targets.lookup import all_targets, describe_local_gpu, detect_local_target
from kerntailor.targets.spec import Target

_KiB = 1024
_MiB = 1024 * 1024


def target_to_dict(t: Target) -> dict:
    """Every field of `t`, with the (key, value) tuples turned into JSON objects."""
    d = asdict(t)
    d["peak_flops"] = dict(t.peak_flops)
    d["vector_flops"] = dict(t.vector_flops)
    d["sources"] = dict(t.sources)
    d["matrix_instrs"] = [{**asdict(m), "shape": list(m.shape)} for m in t.matrix_instrs]
    d["aliases"] = list(t.aliases)
    d["fp8_dtypes"] = list(t.fp8_dtypes)
    return d


def _shape_text(name: str, shape: tuple[int, int, int]) -> str:
    m, n, k = shape
    return f"{m}xNx{k}" if "nN" in name else f"{m}x{n}x{k}"


def matrix_summary(t: Target) -> str:
    """'fp16/bf16 32x32x8 16x16x16; fp8 16x16x32 32x32x16; ...': shapes per dtype, equal lists merged."""
    by_dtype: dict[str, list[str]] = {}
    for m in t.matrix_instrs:
        shapes = by_dtype.setdefault(m.in_dtype, [])
        text = _shape_text(m.name, m.shape)
        if text not in shapes:
            shapes.append(text)
    merged: dict[tuple[str, ...], list[str]] = {}
    for dtype, shapes in by_dtype.items():
        merged.setdefault(tuple(shapes), []).append(dtype)
    return "; ".join(f"{'/'.join(dtypes)} {' '.join(shapes)}" for shapes, dtypes in merged.items())


def _tflops(t: Target, dtype: str) -> str:
    rate = t.peak(dtype, matrix=True)
    return f"{rate / 1e12:,.1f}" if rate else "-"


def _size(nbytes: int, unit: int) -> str:
    value = nbytes / unit
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _console():
    from rich.console import Console

    return Console(file=io.StringIO(), width=160, color_system=None, force_terminal=False,
                   highlight=False, soft_wrap=False)


def _render(table) -> str:
    console = _console()
    console.print(table)
    return "\n".join(line.rstrip() for line in console.file.getvalue().rstrip().splitlines())


def _render_table(targets: tuple[Target, ...], local: Target | None, local_text: str) -> str:
    from rich.table import Table

    facts = Table(title="GPU targets (dense vendor peaks, TFLOP/s; sources: kerntailor targets --json)",
                  title_justify="left")
    for header in ["target", "arch", "backend", "wave", "CUs", "LDS KiB CU/block", "L2 MiB", "HBM TB/s",
                   "fp32", "tf32", "bf16", "fp8"]:
        facts.add_column(header, justify="left" if header in ("target", "arch", "backend") else "right")
    isa = Table(title="matrix instructions (MxNxK) and aliases", title_justify="left")
    isa.add_column("target")
    isa.add_column("matrix instructions", overflow="fold")
    isa.add_column("aliases", overflow="fold")
    for t in targets:
        name = t.name + (" *" if local is t else "")
        facts.add_row(
            name, t.arch, t.backend, str(t.warp_size), str(t.compute_units),
            f"{_size(t.lds_per_cu, _KiB)}/{_size(t.lds_per_block, _KiB)}", _size(t.l2_bytes, _MiB),
            f"{t.memory_bandwidth / 1e12:.2f}", _tflops(t, "fp32"), _tflops(t, "tf32"), _tflops(t, "bf16"),
            _tflops(t, "fp8"),
        )
        isa.add_row(name, matrix_summary(t), ", ".join(a for a in t.aliases if a != t.name))
    notes = [
        f"local GPU: {local_text}" + (" (marked *)" if local else ""),
        "mi250x is one GCD (ROCm shows each GCD as its own device): 110 CUs, 1.6 TB/s, 8 MiB L2.",
        "arch aliases: gfx942 -> mi300x, gfx950 -> mi355x, gfx90a -> mi250x, sm_90 -> h200, sm_80 -> a100.",
        "fp32 on NVIDIA is the CUDA-core rate (no fp32 tensor cores); '-' means no such rate.",
    ]
    return "\n\n".join([_render(facts), _render(isa), "\n".join(notes)])


def show_targets(json_out: bool = False) -> str:
    """The known targets as a readable table, or (json_out) a JSON list of every field with its sources."""
    targets = all_targets()
    local = detect_local_target()
    if json_out:
        return json.dumps([{**target_to_dict(t), "local": local is t} for t in targets], indent=2)
    return _render_table(targets, local, describe_local_gpu())
