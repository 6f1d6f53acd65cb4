"""What the benchmark scripts share: loading a candidate file and the relative error against a reference."""

from __future__ import annotations

from pathlib import Path


def load_candidate(path: Path, prefix: str = "bench"):
    """Import a kernel.py file as a fresh module (a name per file, so candidates never share a module)."""
    import importlib.util

    name = f"{prefix}_{path.parent.name.replace('-', '_')}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rel_err(got, ref) -> float:
    """max over outputs of ‖got − ref‖ / ‖ref‖ in float64; NaN never passes (it counts as infinite)."""
    got = got if isinstance(got, (tuple, list)) else (got,)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    worst = 0.0
    for g, r in zip(got, ref):
        g64, r64 = g.double(), r.double()
        err = float((g64 - r64).norm() / r64.norm().clamp_min(1e-30))
        worst = max(worst, err if err == err else float("inf"))
    return worst


def schedules_of(plan, knobs: dict) -> dict:
    """The typed schedules of a plan's groups from knob dicts by group name (the manifests keep knobs as data)."""
    from kerntailor.codegen import FAMILIES

    return {g.name: FAMILIES[g.family].schedule.from_knobs(knobs[g.name]) for g in plan.groups}


def run_files(script: str, doc: str, bench_file, argv: list[str] | None = None, free_between: bool = False,
              flags: tuple[tuple[str, str], ...] = ()) -> int:
    """The main of a per-file GPU script (conv_layout.py, conv_gen_probe.py): FILES --out JSON [--dtype] [--smoke]
    [--deadline-s]; `bench_file(path, dtype, smoke, workdir)` gives each file's row (a failure is a row too), and the
    JSON is rewritten after each (a cut run keeps what it measured). --dtype may list several (bf16,fp32): every
    file in the first, then every file in the next. `flags`: the script's own on/off options ((name, help), e.g.
    ("quick", "...")), passed to bench_file by keyword."""
    import argparse
    import json
    import time

    import torch

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dtype", default=None, help="bf16 | fp16 | fp32, or several: bf16,fp32 (default: as written)")
    parser.add_argument("--smoke", action="store_true", help="CPU: small variant under TRITON_INTERPRET, no times")
    parser.add_argument("--deadline-s", type=float, default=300.0, help="stop starting files after this")
    for name, text in flags:
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, action="store_true", help=text)
    args = parser.parse_args(argv)
    extra = {name: getattr(args, name) for name, _ in flags}
    dtypes = args.dtype.split(",") if args.dtype else [None]
    start = time.monotonic()
    workdir = args.out.parent / (args.out.stem + "_modules")
    workdir.mkdir(parents=True, exist_ok=True)
    result = {"command": f"benchmarks/{script} " + " ".join(str(f) for f in args.files),
              "dtype": args.dtype or "as written", "date": time.strftime("%Y-%m-%d"),
              "device": "cpu (interpreter, no times)" if args.smoke else torch.cuda.get_device_name(),
              "torch": torch.__version__, "label": "smoke (CPU)" if args.smoke else "measured", "rows": []}
    for dtype in dtypes:
        for path in args.files:
            if time.monotonic() - start > args.deadline_s:
                result["rows"].append({"problem": path.stem, "dtype": dtype or "as written", "skipped": "deadline"})
                continue
            try:
                row = bench_file(path, dtype, args.smoke, workdir, **extra)
            except Exception as e:   # one file's failure is a row, not the end of the run
                row = {"problem": path.stem, "dtype": dtype or "as written", "error": f"{type(e).__name__}: {e}"[:400]}
            row["elapsed_s"] = round(time.monotonic() - start, 1)
            result["rows"].append(row)
            print(json.dumps(row), flush=True)
            args.out.write_text(json.dumps(result, indent=1))
            if free_between and not args.smoke:
                torch.cuda.empty_cache()
    return 0
