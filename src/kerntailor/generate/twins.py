"""Twin groups: fusion groups whose kernels are the same function on the same shapes, searched once.

A deep net repeats its blocks: DeepNarrowMLP's 16 hidden layers are 15 identical Linear + ReLU groups, a ResNet's
stages repeat conv + batch-norm groups. Predicted, each group's candidates are built for the target and ranked by
the cost model from the group's Work and the build's ISA facts, so two groups whose kernels differ only in the names
of their tensors get the same ranking: the second reuses the first's (its schedules are knob sets, not bound to a
group). On the CPU that is most of a deep model's search (3_DeepNarrowMLP: 9 s of builds per hidden layer, its
search 158 s before, 38.5 s after; 2026-12-04, 2 shared cores at load 4-7). Measured, the same holds: a group's
candidates are timed as whole modules in which only that group's schedule varies (generate/evaluate.py), so their
differences are that group's kernels'; a twin (one kernel text, one signature, the same size arguments at the traced
shapes, strides and offsets included) runs the same code on the same memory pattern and ranks its schedules the same.
Timing it again only pays its compiles and whole-model timings once more, and a level-3 model repeats tens of groups
(the H200, 2026-12-04: level 3 at --jobs 3 finished 1 of 20 files in 490 s).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def canonical(text: str, names: Iterable[str]) -> str:
    """`text` with each of `names` (a group's tensors, nodes and kernels) renamed by order of first appearance,
    so two kernels that differ only in those names read the same; every other word (Triton calls, codegen's
    locals, constants) is kept."""
    names = frozenset(names)
    seen: dict[str, str] = {}

    def rename(m: re.Match) -> str:
        word = m.group(0)
        if word not in names:
            return word
        return seen.setdefault(word, f"_n{len(seen)}")

    return _IDENT.sub(rename, text)


def group_names(run, kernels) -> set[str]:
    """The names a group's kernels may spell differently from a twin's: the graph's inputs and nodes, each
    launch's kernel and argument names, and those with Triton's `_ptr` suffix or codegen's `v_` prefix."""
    graph = run.gen.graph
    names = {i.name for i in graph.inputs} | {n.name for n in graph.nodes}
    names |= {f"{n}_ptr" for n in names} | {f"v_{n}" for n in names}
    for k in kernels:
        names.add(k.kernel_name)
        names |= {arg for arg, _ in k.signature}
    return names


def twin_keys(run, schedules) -> dict[str, tuple]:
    """Each group's twin key (what two groups must share for one search to serve both): family, default schedule,
    Work (shapes, FLOPs, bytes), the text of every kernel the group launches, its names made canonical, and the
    values of its size arguments at the traced shapes (a stride that differs makes another key). From one
    module under `schedules` (a group's kernel text depends on its own schedule only). No key for a group without a
    kernel of its own (a library call), nor any where codegen refuses the module."""
    from kerntailor.codegen import CodegenUnsupported
    from kerntailor.generate.kernels import group_work, traced_value

    try:
        module = run.module(schedules)
    except CodegenUnsupported:
        return {}
    groups = {g.name: g for g in run.plan.groups}
    keys = {}
    for kernel in module.kernels:
        group = groups.get(kernel.group)
        if group is None or not kernel.source:
            continue
        launches = kernel.launches
        names = group_names(run, launches)
        texts = tuple(canonical(k.source, names) for k in launches)
        helpers = tuple(canonical(h, names) for k in launches for h in k.helpers)
        signature = tuple(tuple(ty for _, ty in k.signature) for k in launches)
        constexprs = tuple(k.constexprs for k in launches)
        sizes = tuple(tuple((name, traced_value(run.gen, expr)) for name, expr in k.size_args) for k in launches)
        work = group_work(run.gen, group, run.capture.cost.dtype)[0]
        keys[group.name] = (group.family, schedules[group.name], work, texts, helpers, signature, constexprs, sizes)
    return keys
