"""Optimize's graph-mode install against benchmarks/graph_swaps.py's, op for op (issue #21), on the CPU.

    PYTHONPATH=src python3 benchmarks/optimize_install_diff.py [problems/models/llama3_2_1b_decode.py] [--variant small]

Call 4 of 2026-12-03g: `kerntailor optimize --graph` measured Llama decode with its eight KV-cache concatenations
swapped at 7984 us, where graph_swaps.py's graph with the same eight swaps ran 4605. This builds both graphs on the
small variant (kernels: codegen's default schedule, run under TRITON_INTERPRET=1): the script's (the model in eval
mode, GraphForward with every swap at once) and optimize's (the model as optimize_problem builds it, in training mode;
optimizing/run.py's _graph_swap a swap at a time, each installed and checked against the float64 reference), and
prints the ATen ops each runs per call by kind, and its SDPA facts. 2026-12-03 (CPU): 157 ops each, the same by
kind, every SDPA with enable_gqa, no repeated-head copies: the install is not where the two differ.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")   # before any kernel.py imports triton's jit

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_lean import count_ops  # noqa: E402
from graph_swaps import cache_concatenations, default_kernel, graph_facts  # noqa: E402


def build(problem, variant: str, work: Path, as_optimize: bool):
    """(the graph forward, its op counts, its facts) as optimize (`as_optimize`) or as graph_swaps.py installs it."""
    from kerntailor.optimizing import run
    from kerntailor.optimizing.check import Reference
    from kerntailor.optimizing.graph import GraphForward, graph_forward
    from kerntailor.optimizing.swap import load_kernel, share_copy
    from kerntailor.profiling import profile_model_traced
    from kerntailor.profiling.extract import owners

    model, inputs = problem.make_model(variant, device="cpu"), problem.make_inputs(variant, device="cpu")
    if not as_optimize:
        model = model.eval()
    traced = profile_model_traced(model, inputs, target="h200", top=1000, out_dir=work / "problems")
    owner, by_name = owners(traced.traced, traced.plan.groups), {g.name: g for g in traced.plan.groups}
    cats = cache_concatenations(traced.traced, owner, by_name, traced.profile.groups)
    swaps = tuple((cut, load_kernel(default_kernel(r.problem_file, work / r.name, "h200"))[0]) for r, cut in cats)
    program = traced.traced.program
    if as_optimize:
        optimized, state, reference, before = share_copy(model), model.state_dict(), Reference(model, inputs), []
        for cut, kernel in swaps:
            base = run.GroupOutcome(0, cut.group, "pointwise", "", 0.0, run.SKIPPED, "", "", "", None, None)
            outcome, passed = run._graph_swap(optimized, program, (*before, (cut, kernel)), before, inputs, base,
                                              reference, state)
            if not passed:
                raise SystemExit(f"{cut.group}: {outcome.reason}")
            before.append((cut, kernel))
        forward = graph_forward(optimized)
    else:
        forward = GraphForward(model, program, swaps, inputs)
    with torch.no_grad():
        return count_ops(forward, inputs), graph_facts(forward)


def main(argv: list[str] | None = None) -> int:
    from kerntailor.problem import load_problem

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default="problems/models/llama3_2_1b_decode.py")
    parser.add_argument("--variant", default="small")
    args = parser.parse_args(argv)
    problem = load_problem(args.problem)
    with tempfile.TemporaryDirectory(prefix="install_diff-") as work:
        script = build(problem, args.variant, Path(work) / "script", as_optimize=False)
        optimize = build(problem, args.variant, Path(work) / "optimize", as_optimize=True)
    (a, fa), (b, fb) = script, optimize
    print(f"{'ATen op':60s} {'script':>7s} {'optimize':>8s}")
    for k in sorted(set(a) | set(b)):
        print(f"{k:60s} {a[k]:7d} {b[k]:8d}{'' if a[k] == b[k] else '  <- differs'}")
    print(f"{'total':60s} {sum(a.values()):7d} {sum(b.values()):8d}")
    print("script  ", fa)
    print("optimize", fb)
    return 0 if a == b and fa == fb else 1


if __name__ == "__main__":
    sys.exit(main())
