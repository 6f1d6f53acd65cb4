"""Graph mode (optimizing/graph.py) without the interpreter: a model whose hot groups no module holds (a norm
written out in the model's own forward that returns three values others read, Linears fused with the parent's ops
after them) has each group's nodes in the exported graph replaced by a call to a stand-in kernel: the group's own
problem file's Model (PyTorch's ops, exactly the cut, taking its arguments in the order a generated kernel does).
The model then agrees with the original, keeps its state_dict, falls back to its class's forward on any call unlike
the exported one, compiles, and is saved and rebuilt by save.py's file. tests/test_optimize.py runs it with generated
kernels under the interpreter."""

from __future__ import annotations

import importlib.util
import operator
import sys
from pathlib import Path

import pytest
import torch
from torch import nn


class Norms(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.fc1, self.fc2, self.w = nn.Linear(d, d), nn.Linear(d, d), nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        h = x + 1.0
        var = h.pow(2).mean(-1, keepdim=True)
        n = h * torch.rsqrt(var + 1e-6) * self.w
        return self.fc1(n) + self.fc2(h) * var


def _stand_in(problem_file: str, folder: Path) -> nn.Module:
    """The group's problem file as a kernel.py (its Model as ModelNew: save copies the file a kernel came from)."""
    path = folder / f"{Path(problem_file).stem}_kernel.py"
    path.write_text(Path(problem_file).read_text() + "\n\nModelNew = Model\n")
    name = f"stand_in_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # torch.compile looks the forward's module up
    spec.loader.exec_module(module)
    return module.ModelNew()


@pytest.fixture(scope="module")
def swapped(tmp_path_factory):
    from kerntailor.optimizing.graph import graph_cut, install_graph
    from kerntailor.optimizing.scope import group_scope
    from kerntailor.optimizing.swap import share_copy
    from kerntailor.profiling import profile_model_traced
    from kerntailor.profiling.extract import owners

    torch.manual_seed(0)
    model, inputs = Norms().eval(), [torch.randn(8, 32)]
    traced = profile_model_traced(model, inputs, target="h200", top=5, out_dir=tmp_path_factory.mktemp("problems"))
    owner, by_name = owners(traced.traced, traced.plan.groups), {g.name: g for g in traced.plan.groups}
    rows = traced.profile.groups
    scopes = [group_scope(traced.traced, by_name[r.name], owner, r.module, r.modules) for r in rows]
    cuts = [graph_cut(traced.traced, by_name[r.name], owner) for r in rows]
    optimized = share_copy(model)
    kernels = tmp_path_factory.mktemp("kernels")
    swaps = tuple((c, _stand_in(r.problem_file, kernels)) for r, c in zip(rows, cuts))
    install_graph(optimized, traced.traced.program, swaps, inputs)
    return model, inputs, optimized, scopes, cuts, traced.traced.program


@pytest.mark.capture
def test_groups_no_module_holds_are_swapped_in_the_graph(swapped):
    model, inputs, optimized, scopes, cuts, _ = swapped
    assert all(isinstance(s, str) for s in scopes), scopes   # the module swap takes none of them
    assert sorted(len(c.outputs) for c in cuts) == [1, 1, 3], cuts   # the norm: h, var and the normed value
    code = optimized.forward.graph.code
    assert code.count("self.kernel_") == 3 and "addmm" not in code and "rsqrt" not in code, code
    # each kernel result's node carries the value (shape, dtype) of the node it stands for: lean.py reads them
    program_values = {n.name: n.meta["val"] for n in swapped[5].graph.nodes if "val" in n.meta}
    nodes = list(optimized.forward.graph.graph.nodes)
    results = [n for n in nodes if n.op == "call_module" or n.target is operator.getitem]
    assert results and all(isinstance(n.meta.get("val"), (torch.Tensor, tuple)) for n in results), results
    (norm,) = [n for n in nodes if n.op == "call_module" and len(n.users) == 3]
    assert [tuple(v.shape) for v in norm.meta["val"]] == [tuple(program_values[o].shape)
                                                          for c in cuts if len(c.outputs) == 3 for o in c.outputs]
    x = torch.randn(8, 32)
    with torch.no_grad():
        assert torch.allclose(optimized(x), model(x), rtol=1e-5, atol=1e-5)
    before, after = model.state_dict(keep_vars=True), optimized.state_dict(keep_vars=True)
    assert list(before) == list(after) and all(after[k] is before[k] for k in before)   # the same Parameters
    assert "forward" not in vars(model)   # the user's model is left as it was


@pytest.mark.capture
def test_a_call_unlike_the_exported_one_runs_the_class_forward(swapped):
    """Another batch, a gradient needed, another training mode: the class's forward, not the graph."""
    model, _, optimized, *_ = swapped
    calls = []
    hook = optimized.forward.graph.register_forward_pre_hook(lambda *a: calls.append(1))
    x, other = torch.randn(8, 32), torch.randn(3, 32)
    try:
        with torch.no_grad():
            optimized(x)
            assert len(calls) == 1
            assert torch.equal(optimized(other), model(other)) and len(calls) == 1
        y = optimized(x)   # grad mode, parameters that require grad
        assert y.requires_grad and len(calls) == 1
        y.sum().backward()
        assert optimized.fc1.weight.grad is not None
        optimized.train()
        with torch.no_grad():
            optimized(x)
        assert len(calls) == 1
        optimized.eval()
        with torch.no_grad():
            optimized(x)
        assert len(calls) == 2
    finally:
        hook.remove()
        optimized.zero_grad(set_to_none=True)


@pytest.mark.capture
def test_the_graph_compiles_whole_undoes_and_is_saved(swapped, tmp_path):
    import inspect

    from kerntailor.optimizing.graph import graph_forward, install_graph
    from kerntailor.optimizing.save import save_model
    from kerntailor.optimizing.swap import share_copy

    model, inputs, optimized, _, _, program = swapped
    x = torch.randn(8, 32)
    with torch.no_grad():
        compiled = torch.compile(optimized, backend="aot_eager", fullgraph=True)
        assert torch.allclose(compiled(x), optimized(x), rtol=1e-6, atol=1e-6)
    problem = tmp_path / "norms.py"
    problem.write_text("import torch\nfrom torch import nn\n\n\n" + inspect.getsource(Norms) + "\n\nModel = Norms\n")
    saved = save_model(optimized, tmp_path / "out" / "fast.py", problem)
    spec = importlib.util.spec_from_file_location("saved_norms", saved)
    fast = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fast)
    rebuilt = fast.build("cpu")
    assert type(vars(rebuilt)["forward"]).__name__ == "GraphForward" and list(rebuilt.state_dict()) == list(
        model.state_dict())
    other = torch.randn(3, 32)
    with torch.no_grad():
        assert torch.equal(rebuilt(x), optimized(x))
        assert torch.equal(rebuilt(other), model(other))   # unlike the optimized call: the class's forward
    copy = share_copy(optimized)
    install_graph(copy, program, (), inputs)   # no swaps left: the class's forward again
    assert graph_forward(copy) is None and "forward" not in vars(copy)
    with torch.no_grad():
        assert torch.equal(copy(x), model(x))


class StartsFromAnEmptyCache(nn.Module):
    """An empty tensor built inside forward on the input's device and concatenated to (transformers' DynamicCache): on
    the meta device, where profile exports, the export keeps it as a meta constant."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        past = torch.tensor([], device=x.device)
        return torch.relu(torch.cat([past, self.fc(x)], dim=-1))


@pytest.mark.capture
def test_an_empty_constant_traced_on_meta_is_an_empty_tensor_in_graph_mode():
    from kerntailor.errors import KerntailorError
    from kerntailor.optimizing.graph import real_constant
    from kerntailor.profiling import profile_model_traced

    model, inputs = StartsFromAnEmptyCache().eval(), [torch.randn(4, 8)]
    program = profile_model_traced(model, inputs, target="h200", top=1).traced.program
    lost = {k: v for k, v in program.constants.items() if isinstance(v, torch.Tensor) and v.is_meta}
    assert lost, "the meta export kept the value: this test no longer covers the case"
    for name, value in lost.items():
        real = real_constant(name, value)
        assert not real.is_meta and real.shape == value.shape and real.dtype == value.dtype
    with pytest.raises(KerntailorError, match="its value is lost"):
        real_constant("lifted_tensor_x", torch.empty(3, device="meta"))


def test_graph_mode_is_undone_where_it_loses_both_in_eager_and_under_compile():
    from kerntailor.optimizing.run import graph_slower

    us = 1e-6
    assert graph_slower({"eager": 4825 * us, "optimized": 4000 * us}) is None            # faster than eager
    decode = {"eager": 4825 * us, "optimized": 8960 * us, "compile": 2882 * us, "optimized_compile": 2627 * us}
    assert graph_slower(decode) is None                                                  # wins under torch.compile
    lost = graph_slower(dict(decode, optimized_compile=3000 * us))
    assert lost and "8960 us against eager's 4825" in lost and "3000 us against 2882" in lost
    assert graph_slower({"note": "not measured"}) is None


@pytest.mark.parametrize("second", ["faster", "slower"])
def test_graph_mode_is_undone_only_when_a_second_timing_confirms_it(second, monkeypatch, tmp_path):
    """Issue #21: optimize's first end-to-end timing of Llama decode (right after torch.compile's first calls and
    eight generates) measured every variant high (eager 6178 us, 4857 a second later) and graph mode was undone on
    it. Now a timing that says graph mode lost is taken again, and only the second decides; the report keeps the
    first as `first_seconds`. Stand-in kernels, end_to_end scripted (no GPU here)."""
    from dataclasses import replace

    import kerntailor.optimizing.run as run
    from kerntailor.optimizing.graph import graph_forward

    def generate(base, problem_file, names, settings):
        if base.mode != run.GRAPH:
            return replace(base, reason="module swaps are not this test's"), None
        return replace(base, kernel="generated", verdict="passed"), (_stand_in(problem_file, tmp_path), "stand_in")

    us = 1e-6
    lost = {"eager": 4857 * us, "optimized": 7984 * us, "compile": 2897 * us, "optimized_compile": 4054 * us}
    won = dict(lost, optimized=4605 * us, optimized_compile=1896 * us)
    timings = [lost, won if second == "faster" else lost, lost]
    calls = []

    def end_to_end(original, optimized, inputs):
        calls.append(graph_forward(optimized) is not None)
        return {"label": "scripted", "seconds": timings[len(calls) - 1]}

    monkeypatch.setattr(run, "_generate", generate)
    monkeypatch.setattr(run, "end_to_end", end_to_end)
    torch.manual_seed(0)
    model, inputs = Norms().eval(), [torch.randn(8, 32)]
    result = run.optimize_model(model, inputs, target="h200", top=3, out_dir=tmp_path / "out", use_store=False)
    in_graph = [g for g in result.report.groups if g.mode == run.GRAPH and g.kernel == "generated"]
    assert in_graph and all(g.verdict == "passed" for g in in_graph)
    if second == "faster":
        assert calls == [True, True]                           # measured again with graph mode still installed
        assert graph_forward(result.model) is not None and all(g.status == run.SWAPPED for g in in_graph)
        assert result.report.timing["seconds"] == won and result.report.timing["first_seconds"] == lost
    else:
        assert calls == [True, True, False]                    # confirmed, undone, measured without it
        assert graph_forward(result.model) is None and all(g.status == run.UNDONE for g in in_graph)
        assert "7984 us against eager's 4857" in in_graph[0].reason
