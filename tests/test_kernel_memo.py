"""Writing modules for a search (codegen.KernelMemo, generate/run.py's Run.module): a kernel written before under
the same schedule is reused, so a candidate's module writes its own group's kernel only, and the text is the same
as without the memo. The lookups codegen makes per rendered size (Generalized.expr, Graph.node) are by key."""

from __future__ import annotations

from dataclasses import replace

import pytest

import kerntailor.codegen as codegen
from helpers import loaded
from kerntailor.codegen import KernelMemo, generate_module
from test_generate_twins import _run


def _count_writes(monkeypatch) -> list[str]:
    written = []
    real = codegen.generate_kernel

    def counting(gen, group, *args):
        written.append(group.name)
        return real(gen, group, *args)

    monkeypatch.setattr(codegen, "generate_kernel", counting)
    return written


def test_a_memo_writes_only_the_group_whose_schedule_changed(tmp_path, monkeypatch):
    run, plan, schedules = _run(tmp_path)
    spec = loaded(tmp_path / "twins.py")
    written = _count_writes(monkeypatch)
    memo = KernelMemo(run.gen)

    def module(s, memo=memo):
        return generate_module(spec, run.gen, plan, s, "mi300x", "gfx942", memo=memo)

    first = module(schedules)
    assert sorted(written) == sorted(g.name for g in plan.groups)
    changed = plan.groups[2].name
    other = dict(schedules, **{changed: replace(schedules[changed], num_warps=8)})
    written.clear()
    second = module(other)
    assert written == [changed]
    written.clear()
    assert module(schedules).source == first.source and written == []   # both schedules of it are kept
    assert second.source == module(other, memo=None).source != first.source
    written.clear()
    module(schedules, memo=KernelMemo(replace(run.gen)))   # a memo of another gen (problem) is not used
    assert len(written) == len(plan.groups)


def test_lookups_by_key_find_the_first_and_refuse_a_missing_name(tmp_path):
    run, _, _ = _run(tmp_path)
    gen = run.gen
    path, expr = gen.exprs[0]
    doubled = replace(gen, exprs=gen.exprs + ((path, gen.exprs[-1][1]),))
    assert doubled.expr(path, 0) == expr and gen.expr(("no", "such", "slot"), 7).evaluate({}) == 7
    graph = gen.graph
    first = graph.nodes[0]
    twice = replace(graph, nodes=graph.nodes + (replace(graph.nodes[1], name=first.name),))
    assert twice.node(first.name) is first
    assert graph.buffer_type(graph.inputs[0].name) == graph.inputs[0].type
    assert graph.buffer_type(first.name) == first.out
    with pytest.raises(KeyError):
        graph.node("no_such_node")


def test_the_names_a_module_binds_are_read_part_by_part_and_kept(monkeypatch):
    from kerntailor.codegen import customop

    parts = ["import torch", "", "@triton.jit\ndef k0_kernel(x_ptr):\n    pass", "_AMD = torch.version.hip is not None",
             "if _AMD:\n    import numpy as np"]
    whole = customop.module_names("\n".join(parts))
    assert whole == {"torch", "k0_kernel", "_AMD", "np"}
    parsed = []
    real = customop.module_names
    monkeypatch.setattr(customop, "module_names", lambda text: parsed.append(text) or real(text))
    customop._part_names.cache_clear()
    assert customop.parts_names(parts) == whole and len(parsed) == len(set(parts))
    parsed.clear()
    assert customop.parts_names(parts + ["def k1_kernel():\n    pass"]) == whole | {"k1_kernel"}
    assert parsed == ["def k1_kernel():\n    pass"]   # only the new part is parsed
    split = ["x = (1,", "2)", "def f():\n    pass"]   # a statement across two parts: the whole text decides
    assert customop.parts_names(split) == real("\n".join(split)) == {"x", "f"}


def test_a_build_imports_the_module_with_only_its_kernel_jitted(tmp_path):
    from kerntailor.generate.kernels import build_text

    run, plan, schedules = _run(tmp_path)
    module = run.module(schedules)
    kernel = module.kernels[1]
    text = build_text(module, kernel)
    others = [k.kernel_name for k in module.kernels if k is not kernel]
    assert len(others) == 3 and kernel.source in text
    # the same lines, the other kernels' decorators blank (their helpers keep theirs): line numbers are kept
    assert text.count("@triton.jit\n") == module.source.count("@triton.jit\n") - 3
    assert text.splitlines() == [
        "" if line == "@triton.jit" and any(lines[i + 1].startswith(f"def {name}(") for name in others) else line
        for lines in [module.source.splitlines()] for i, line in enumerate(lines)]
