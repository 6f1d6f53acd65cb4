"""Which convolutions of a set of problem files generate/outpaced.py plans as the library's, on a target, before any
GPU work: each file's captured convolutions and, for the outpaced ones, the ratio of the generated floor (fp32 vector
rate) to the library's (tf32 rate). CPU only; the run is taken as measured on TARGET with PyTorch's defaults.

    PYTHONPATH=src python benchmarks/outpaced_survey.py h100 ../shared/kernelbench/level1/*onv*.py ...
"""

from __future__ import annotations

import sys

from kerntailor.capture.capture import capture_generalized
from kerntailor.generate.outpaced import outpaced_convs
from kerntailor.ir.nodes import Conv
from kerntailor.problem import load_problem
from kerntailor.targets import resolve_target


def main(target_name: str, paths: list[str]) -> None:
    target = resolve_target(target_name)
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        try:
            _, gen = capture_generalized(load_problem(path))
        except Exception as e:  # noqa: BLE001  a file that does not capture is a row, not the end
            print(f"{name}\terror\t{str(e).splitlines()[0][:120] if str(e) else type(e).__name__}", flush=True)
            continue
        convs = [n for n in gen.graph.nodes if isinstance(n, Conv)]
        if not convs:
            continue
        found = outpaced_convs(gen.graph, target, "ieee", measured=True)
        shapes = ", ".join(f"groups {n.groups}{' transposed' if n.transposed else ''}" for n in convs)
        ratios = ", ".join(f"{k} {v.ratio:.2f}x" for k, v in found.items()) or "-"
        print(f"{name}\t{len(convs)} conv ({shapes})\t{'outpaced ' + ratios if found else 'kept'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
