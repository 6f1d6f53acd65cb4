"""Where the time goes: the GPU kernels of each emitted module beside torch.compile's, per call (GPU only).

For every problem folder under a `kerntailor bench --out` folder (or `generate --out` folders) whose module is
generated (kernel.py of a generated result, or generated.py: the generated module the referee passed that lost to
the library on time), runs the module and the reference under torch.compile on the problem's default sizes and
lists each one's kernels with their device time per call (torch.profiler), so a tail that loses to Inductor shows
which kernel loses and by how much.

    python benchmarks/profile_modules.py OUTDIR [--iters 5] [--json profile.json]

Numbers are *measured* on the GPU it runs on; nothing here is a prediction.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from kerntailor.problem import load_problem


def _module_of(folder: Path) -> Path | None:
    if (folder / "generated.py").exists():
        return folder / "generated.py"
    report = folder / "report.json"
    generated = report.exists() and json.loads(report.read_text()).get("status") != "library"
    return folder / "kernel.py" if generated and (folder / "kernel.py").exists() else None


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"profiled_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernels_per_call(fn, args, iters: int) -> tuple[float, list[tuple[str, float, int]]]:
    """(device µs per call in all, [(kernel name, device µs per call, launches per call)] largest first)."""
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn(*args)
        torch.cuda.synchronize()
    per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name][0] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            per[e.name][1] += 1
    rows = sorted(((name, t / iters, n // iters) for name, (t, n) in per.items()), key=lambda r: -r[1])
    return sum(r[1] for r in rows), rows


def profile_folder(folder: Path, iters: int) -> dict | None:
    module_path = _module_of(folder)
    if module_path is None:
        return None
    report = json.loads((folder / "report.json").read_text())
    dtype = report.get("dtype")
    spec = load_problem(report["path"], dtype=None if dtype in (None, "as written") else dtype)
    ref = spec.make_model("default", device="cuda", seed=0)
    new = _load(module_path).ModelNew(*spec.init_inputs("default")).to("cuda")
    new.load_state_dict(ref.state_dict())
    new.train(ref.training)
    inputs = spec.make_inputs("default", device="cuda", seed=0)
    out = {"problem": report.get("problem"), "module": module_path.name}
    with torch.no_grad():
        for name, fn in (("kerntailor", new), ("torch.compile", torch.compile(ref))):
            try:
                total, rows = kernels_per_call(fn, inputs, iters)
                out[name] = {"device_us": round(total, 1),
                             "kernels": [{"name": n[:90], "us": round(t, 1), "launches": c} for n, t, c in rows[:10]]}
            except Exception as e:   # one module failing must not hide the others' profiles
                out[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
    torch.cuda.empty_cache()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results = []
    for report in sorted(args.root.rglob("report.json")):
        try:
            r = profile_folder(report.parent, args.iters)
        except Exception as e:
            r = {"problem": report.parent.name, "error": f"{type(e).__name__}: {str(e)[:200]}"}
        if r is None:
            continue
        results.append(r)
        print(f"== {r['problem']} ({r.get('module')})")
        for side in ("kerntailor", "torch.compile"):
            s = r.get(side, {})
            print(f"  {side}: {s.get('device_us', s.get('error', r.get('error')))} us")
            for k in s.get("kernels", [])[:6]:
                print(f"      {k['us']:10.1f} us x{k['launches']}  {k['name']}")
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                                         "results": results}, indent=1))


if __name__ == "__main__":
    main()
