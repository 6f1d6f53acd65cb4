"""Twin groups: fusion groups whose kernels are the same function on the same shapes, searched once.

A deep net repeats its blocks: DeepNarrowMLP's 16 hidden layers are 15 identical Linear + ReLU groups, a ResNet's
stages repeat conv + batch-norm groups. Predicted, each group's candidates are built for the target and ranked by
the cost model from the group's Work and the build's ISA facts, so two groups whose kernels differ only in the names
of their tensors get the same ranking: the second reuses the first's (its schedules are knob sets, not bound to a
group). On the CPU that is most of a deep model's search (3_DeepNarrowMLP: 9 s of builds per hidden layer,
158 s of a 300 s survey run, 2026-12-04, 2 shared cores). Measured, each group is timed in its own module and
searched as before.

    key = twin_key(run, schedules, group)   # None: no kernel to compare (a library group)
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


def twin_key(run, schedules, group) -> tuple | None:
    """What two groups must share for one search to serve both: family, default schedule, Work (shapes, FLOPs,
    bytes) and the text of every kernel the group launches with its names made canonical. None for a group with
    no kernel of its own (a library call) or one codegen refuses under its default."""
    from kerntailor.codegen import CodegenUnsupported
    from kerntailor.generate.kernels import group_work

    base = schedules[group.name]
    try:
        module = run.module(schedules)
    except CodegenUnsupported:
        return None
    kernel = next((k for k in module.kernels if k.group == group.name), None)
    if kernel is None or not kernel.source:
        return None
    launches = kernel.launches
    names = group_names(run, launches)
    texts = tuple(canonical(k.source, names) for k in launches)
    helpers = tuple(canonical(h, names) for k in launches for h in k.helpers)
    signature = tuple(tuple(ty for _, ty in k.signature) for k in launches)
    constexprs = tuple(k.constexprs for k in launches)
    work = group_work(run.gen, group, run.capture.cost.dtype)[0]
    return group.family, base, work, texts, helpers, signature, constexprs

