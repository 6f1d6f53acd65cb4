"""Graph mode with a model's KV-cache concatenations swapped for generated kernels, end to end (issue #21).

    PYTHONPATH=src python3 benchmarks/graph_swaps.py problems/models/llama3_2_1b_decode.py --dtype bf16 \\
        --out benchmarks/data/graph_swaps_h200_<date>.json [--groups k13,k14,...] [--kernels DIR] [--max-wall 210]

On the H200 box (no transformers there): `bash benchmarks/gpu_calls/graph_swaps.sh`, carrying .hf-bundle.

Call 4 of 2026-12-03f: seven KV-cache concatenation groups of Llama-3.2-1B decode swapped in graph mode (each a
generated kernel, 68 us against eager's 479 for its two cats) ran the model in 6986 us against eager's 4825 and the
lean graph's 4829. The cause: the kernel calls' FX nodes carried no value (shape, dtype), so lean.py's GQA rewrite
skipped every SDPA reading one, and each layer cloned its key and value heads 4x (graph.py's _carry_meta fixes it).
This times, side by side in one process under torch.no_grad, per forward:
- eager:            the model's own forward;
- lean:             graph mode's graph with no swap (optimizing/lean.py);
- swapped_unfixed:  the graph with the cache concatenations swapped, the kernel calls' nodes without values (as
                    graph mode built it in call 4: _carry_meta disabled);
- swapped:          the same swaps as graph mode builds them now;
- swapped_cuda_graph: `swapped` replayed from one CUDA graph (what is left once the host's launches cost nothing);
- compile, swapped_compile, lean_compile: torch.compile of the model, of the model with the swapped graph as its
                    forward (as optimize's end-to-end timing compiles it), of the model with the lean graph
                    (dropped, in that order from the last, where --max-wall would be passed).
The groups swapped: every group whose cut concatenates onto a user input (the cache), or --groups. Their kernels are
read from --kernels DIR (DIR/<group>/kernel.py, as optimize writes a group's folder: pass --kernels to reuse them) or
made here with codegen's default schedule (no search, no referee: pointwise XBLOCK=1024, num_warps=4, the schedule
the search kept on the H200 in call 4); every variant's output is compared with eager's, and the swapped ones must
equal the lean graph's exactly (a concatenation copies). Each variant: median per forward of `--repeats` rounds of
`--iters` calls between CUDA events (rotating), CUDA kernels per forward (torch.profiler), ATen ops that do device
work (not for compiled variants), SDPA calls with enable_gqa and the copies of repeated heads in the graph.

On a machine without a GPU no time is meaningful: the small variant runs on the CPU (kernels under
TRITON_INTERPRET=1, set by this script), counts ops and compares outputs, and writes no time.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_lean import count_kernels, count_ops, time_rounds  # noqa: E402

aten = torch.ops.aten


def cache_concatenations(traced, owner: dict, by_name: dict, rows) -> list:
    """(profile row, GraphCut) of each group whose cut holds a cat reading (through views and selects) a user
    input: the KV cache transformers' DynamicCache appends to."""
    from kerntailor.optimizing.graph import graph_cut

    program = traced.program
    user = set(program.graph_signature.user_inputs)
    nodes = {n.name: n for n in program.graph.nodes}
    found = []
    for row in rows:
        cut = graph_cut(traced, by_name[row.name], owner)
        if isinstance(cut, str) or not any(nodes[n].target is aten.cat.default for n in cut.nodes):
            continue
        if set(cut.inputs) & user:
            found.append((row, cut))
    return found


def default_kernel(problem_file: str, folder: Path, target: str) -> Path:
    """kernel.py of a group's problem file under codegen's default schedules (no search, no referee)."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import default_schedule, generate_module, plan_of
    from kerntailor.problem import load_problem
    from kerntailor.targets import resolve_target

    problem = load_problem(problem_file)
    _, gen = capture_generalized(problem)
    plan = plan_of(gen.graph)
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    t = resolve_target(target)
    module = generate_module(problem, gen, plan, schedules, t.name, t.arch,
                             ["Made by benchmarks/graph_swaps.py: default schedule, not searched, not refereed."])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kernel.py"
    path.write_text(module.source)
    return path


def graph_facts(forward) -> dict:
    """What the graph runs that decides its cost: SDPA calls (with enable_gqa, with a mask), head repeats, kernel
    calls."""
    nodes = list(forward.graph.graph.nodes)
    sdpa = [n for n in nodes if n.target is aten.scaled_dot_product_attention.default]
    return {"sdpa": len(sdpa), "sdpa_enable_gqa": sum(1 for n in sdpa if n.kwargs.get("enable_gqa")),
            "sdpa_masked": sum(1 for n in sdpa if n.kwargs.get("attn_mask") is not None),
            "expands": sum(1 for n in nodes if n.target is aten.expand.default),
            "repeat_copies": sum(1 for n in nodes if n.target in (aten.clone.default, aten.reshape.default)
                                 and n.args[0].target is aten.expand.default),   # repeated heads materialised
            "kernel_calls": sum(1 for n in nodes if n.op == "call_module")}


def _with_forward(model, forward):
    """A copy of `model` (the same tensors) whose forward is `forward`, as install_graph sets it."""
    from kerntailor.optimizing.swap import share_copy

    copy = share_copy(model)
    object.__setattr__(copy, "forward", forward)
    return copy


def _unfixed(model, program, swaps, inputs):
    """The swapped graph as graph mode built it before _carry_meta (call 4 of 2026-12-03f)."""
    import kerntailor.optimizing.graph as graph_mode

    keep = graph_mode._carry_meta
    graph_mode._carry_meta = lambda call, outs, replaced: None
    try:
        return graph_mode.GraphForward(model, program, swaps, inputs)
    finally:
        graph_mode._carry_meta = keep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--variant", default=None, help="default on a GPU, small on the CPU")
    parser.add_argument("--groups", default=None, help="comma-separated group names (default: every cache cat)")
    parser.add_argument("--kernels", default=None, help="DIR/<group>/kernel.py to use (else made here)")
    parser.add_argument("--target", default="h200")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--max-wall", type=float, default=210.0, help="seconds; compiled variants left out past it")
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="graph_swaps-") as work:   # problem files and kernels, while it runs
        return measure_swaps(args, Path(work))


def measure_swaps(args, work: Path) -> int:
    start = time.monotonic()
    gpu = torch.cuda.is_available()
    if not gpu:
        os.environ.setdefault("TRITON_INTERPRET", "1")   # before any kernel.py imports triton's jit
    from kerntailor.optimizing.graph import GraphForward
    from kerntailor.optimizing.swap import load_kernel
    from kerntailor.problem import load_problem
    from kerntailor.profiling import profile_model_traced
    from kerntailor.profiling.extract import owners

    device, variant = ("cuda" if gpu else "cpu"), args.variant or ("default" if gpu else "small")
    problem = load_problem(args.problem, dtype=args.dtype)
    torch.manual_seed(0)
    model = problem.make_model(variant, device=device).eval()
    inputs = problem.make_inputs(variant, device=device)
    out = Path(args.out)
    row = {"problem": args.problem, "dtype": args.dtype, "variant": variant, "device": device,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name() if gpu else None, "phases_s": {},
           "variants": {}}

    def lap(what: str) -> None:
        row["phases_s"][what] = round(time.monotonic() - start, 1)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(row, indent=1))   # a run cut short leaves what it had
        print(f"[{row['phases_s'][what]:6.1f} s] {what}", flush=True)

    traced = profile_model_traced(model, inputs, target=args.target, top=1000, out_dir=work / "problems")
    owner = owners(traced.traced, traced.plan.groups)
    by_name = {g.name: g for g in traced.plan.groups}
    cats = cache_concatenations(traced.traced, owner, by_name, traced.profile.groups)
    if args.groups:
        wanted = args.groups.split(",")
        cats = [(r, c) for r, c in cats if r.name in wanted]
    row["groups"] = [{"group": r.name, "nodes": list(c.nodes), "inputs": list(c.inputs)} for r, c in cats]
    lap(f"profile: {len(cats)} cache concatenation group(s)")
    swaps = []
    for r, cut in cats:
        given = Path(args.kernels) / r.name / "kernel.py" if args.kernels else None
        path = given if given is not None and given.is_file() else default_kernel(r.problem_file, work / r.name,
                                                                                  args.target)
        swaps.append((cut, load_kernel(path)[0]))
        row["groups"][len(swaps) - 1]["kernel"] = str(path) if path == given else "made here: default schedule"
    swaps = tuple(swaps)
    lap("kernels")
    program = traced.traced.program
    graphs = {"lean": GraphForward(model, program, (), inputs),
              "swapped_unfixed": _unfixed(model, program, swaps, inputs),
              "swapped": GraphForward(model, program, swaps, inputs)}
    fns = {"eager": model, **graphs}
    with torch.no_grad():
        ref = model(*inputs)
        lean_out = graphs["lean"](*inputs)
        for name, fn in fns.items():
            result = fn(*inputs)
            ops = count_ops(fn, inputs)
            row["variants"][name] = {"max_abs_diff": float((result.float() - ref.float()).abs().max()),
                                     "equals_lean": bool(torch.equal(result, lean_out)),
                                     "aten_ops": sum(ops.values()), "ops": dict(sorted(ops.items()))}
            if name in graphs:
                row["variants"][name].update(graph_facts(graphs[name]))
        lap("outputs and op counts")
        if gpu:
            from kerntailor.optimizing.check import cuda_graphed

            try:
                fns["swapped_cuda_graph"] = (lambda replay: (lambda *xs: replay(list(xs))))(
                    cuda_graphed(graphs["swapped"], inputs))
            except Exception as e:  # noqa: BLE001  reported, the others still timed
                row["variants"]["swapped_cuda_graph"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
            compiled = {"compile": model, "swapped_compile": _with_forward(model, graphs["swapped"]),
                        "lean_compile": _with_forward(model, graphs["lean"])}
            for name, module in ({} if args.no_compile else compiled).items():
                if time.monotonic() - start > args.max_wall:
                    row["variants"][name] = {"error": f"left out: past --max-wall {args.max_wall:g} s"}
                    continue
                t = time.monotonic()
                try:
                    fn = torch.compile(module)
                    result = fn(*inputs)
                    torch.cuda.synchronize()
                    fns[name] = fn
                    row["variants"][name] = {"max_abs_diff": float((result.float() - ref.float()).abs().max()),
                                             "first_call_s": round(time.monotonic() - t, 1)}
                except Exception as e:  # noqa: BLE001  reported beside the others
                    row["variants"][name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
                lap(f"compiled {name}")
            for name, fn in fns.items():
                for _ in range(3):
                    fn(*inputs)
                row["variants"].setdefault(name, {})["cuda_kernels"] = count_kernels(fn, inputs)
            lap("kernel counts")
            for name, t in time_rounds(fns, inputs, args.iters, args.repeats).items():
                row["variants"][name].update(t)
        else:
            row["note"] = "times not meaningful on CPU: op counts and outputs only"
    lap("done")
    for name, r in row["variants"].items():
        print(f"{name:20s} ops {r.get('aten_ops', '-')!s:>5} kernels {r.get('cuda_kernels', '-')!s:>5} "
              f"median {r.get('median_us', float('nan')):9.1f} us  gqa {r.get('sdpa_enable_gqa', '-')!s:>2}/"
              f"{r.get('sdpa', '-')!s:<2} repeats {r.get('repeat_copies', '-')!s:>2}  "
              f"max|diff| {r.get('max_abs_diff', '-')}{'  ' + r['error'] if 'error' in r else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
