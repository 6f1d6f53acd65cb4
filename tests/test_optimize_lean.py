"""Graph mode's graph (optimizing/graph.py, made lean by lean.py) runs no more ATen ops that do device work than the
eager model it stands for, and computes the same values: on a pure-torch attention block that, like transformers,
takes another path under torch.export (an explicit causal mask from aranges, key/value heads repeated with expand +
reshape, where eager passes is_causal and enable_gqa), and on Llama-3.2-1B decode's and prefill's small variants
(transformers' own LlamaModel; skipped without transformers). Counted with a TorchDispatchMode on the CPU: views
and metadata asserts launch no kernel and are not counted."""

from __future__ import annotations

import copy
import importlib.util
from collections import Counter
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parents[1]


class _Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view and func not in (torch.ops.aten._assert_tensor_metadata.default,
                                             torch.ops.aten.lift_fresh.default):
            self.ops[str(func)] += 1
        return func(*args, **(kwargs or {}))


def _work(fn, inputs) -> tuple[Counter, object]:
    with torch.no_grad(), _Ops() as counted:
        out = fn(*inputs)
    return counted.ops, out


class Block(nn.Module):
    """RMS norm, q/k/v/o Linears, grouped-query SDPA (the export path as transformers': mask and repeat_kv), a GELU
    MLP."""

    def __init__(self, d=32, heads=4, kv_heads=2):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv_heads, d // heads
        self.w = nn.Parameter(1 + 0.1 * torch.randn(d))
        self.q, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.k, self.v = nn.Linear(d, kv_heads * self.hd, bias=False), nn.Linear(d, kv_heads * self.hd, bias=False)
        self.up, self.down = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

    def forward(self, x):   # x (B, T, d)
        b, t, _ = x.shape
        x = x + 0.01 * torch.arange(t, device=x.device, dtype=x.dtype)[:, None]   # read by no parameter: folded
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        q = self.q(h).view(b, t, self.heads, self.hd).transpose(1, 2)   # (B, H, T, hd)
        k = self.k(h).view(b, t, self.kv, self.hd).transpose(1, 2)      # (B, KV, T, hd)
        v = self.v(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        if torch.compiler.is_exporting():
            mask = torch.arange(t, device=x.device)[:, None] >= torch.arange(t, device=x.device)[None, :]
            n = self.heads // self.kv
            k = k[:, :, None].expand(b, self.kv, n, t, self.hd).reshape(b, self.heads, t, self.hd)
            v = v[:, :, None].expand(b, self.kv, n, t, self.hd).reshape(b, self.heads, t, self.hd)
            a = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask.expand(b, 1, t, t))
        else:
            a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=t > 1, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, -1))
        return x + self.down(nn.functional.gelu(self.up(x), approximate="tanh"))   # 8 ops decomposed, 1 in eager


def _graph_mode(model, inputs):
    """The graph graph mode runs (no swaps: every op is the export's), installed as optimize installs it."""
    from kerntailor.optimizing.graph import GraphForward
    from kerntailor.profiling import profile_model_traced

    traced = profile_model_traced(model, inputs, target="h200", top=1)
    return GraphForward(model, traced.traced.program, (), inputs)


@pytest.mark.capture
@pytest.mark.parametrize("tokens", [1, 5])   # decode: a mask of all True; prefill: the causal triangle
def test_graph_mode_runs_no_more_ops_than_eager_on_an_attention_block(tokens):
    torch.manual_seed(0)
    model, inputs = Block().eval(), [torch.randn(2, tokens, 32)]
    graph = _graph_mode(model, inputs)
    eager, expected = _work(model, inputs)
    ours, out = _work(graph, inputs)
    assert sum(ours.values()) <= sum(eager.values()), (ours - eager, eager - ours)
    assert torch.allclose(out, expected, rtol=1e-5, atol=1e-6)
    code = graph.graph.code
    assert "expand" not in code and "enable_gqa = True" in code and "attn_mask = None" in code, code
    assert ("is_causal = True" in code) == (tokens > 1), code
    assert ours["aten.gelu.default"] == 1 and "tanh" in code, ours


@pytest.mark.capture
@pytest.mark.parametrize("shape", ["decode", "prefill"])
def test_graph_mode_runs_no_more_ops_of_any_kind_than_eager_on_llama(shape):
    pytest.importorskip("transformers")
    from kerntailor.problem import load_problem

    problem = load_problem(ROOT / "problems" / "models" / f"llama3_2_1b_{shape}.py")
    torch.manual_seed(0)
    model = problem.make_model("small", device="cpu").eval()
    inputs = problem.make_inputs("small", device="cpu")
    graph = _graph_mode(model, inputs)
    eager, expected = _work(model, inputs)
    ours, out = _work(graph, inputs)
    assert not ours - eager, (ours - eager, eager - ours)   # no op kind more often (the export's ran 8 clones more)
    assert ours["aten.silu.default"] == eager["aten.silu.default"] == 4 and ours["aten.sigmoid.default"] == 0, ours
    assert torch.allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.capture
def test_the_lean_graph_compiles_whole_and_is_saved_with_its_folded_constants(tmp_path):
    import inspect

    from kerntailor.optimizing.save import save_model

    torch.manual_seed(0)
    model, inputs = Block().eval(), [torch.randn(2, 5, 32)]
    optimized = copy.deepcopy(model)
    graph = _graph_mode(optimized, inputs)
    object.__setattr__(optimized, "forward", graph)   # as install_graph does with swaps
    assert any(kind == "constant" and name.startswith("folded") for kind, name in graph.sources), graph.sources
    x = torch.randn(2, 5, 32)
    with torch.no_grad():
        compiled = torch.compile(optimized, backend="aot_eager", fullgraph=True)
        assert torch.allclose(compiled(x), model(x), rtol=1e-5, atol=1e-6)
    problem = tmp_path / "block.py"
    problem.write_text("import torch\nfrom torch import nn\n\n\n" + inspect.getsource(Block) + "\n\nModel = Block\n")
    saved = save_model(optimized, tmp_path / "out" / "fast.py", problem)
    spec = importlib.util.spec_from_file_location("saved_block", saved)
    fast = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fast)
    rebuilt = fast.build("cpu")
    constants = torch.load(tmp_path / "out" / "fast_parts" / "graph_constants.pt", weights_only=True)
    assert any(name.startswith("folded") for name in constants), list(constants)
    calls = []
    rebuilt.forward.fn = lambda *a, fn=rebuilt.forward.fn: calls.append(1) or fn(*a)
    with torch.no_grad():
        assert torch.equal(rebuilt(x), optimized(x)) and calls == [1]   # the saved graph ran, not the class's forward


class Banded(nn.Module):
    """Attention over a band of 3 positions (a real mask) with repeated key/value heads: SDPA keeps both."""

    def __init__(self, d=32):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)

    def forward(self, x):   # x (B, T, d)
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 4, d // 4).permute(2, 0, 3, 1, 4)   # each (B, 4, T, d/4)
        k = k[:, :2, None].expand(b, 2, 2, t, d // 4).reshape(b, 4, t, d // 4)
        v = v[:, :2, None].expand(b, 2, 2, t, d // 4).reshape(b, 4, t, d // 4)
        pos = torch.arange(t, device=x.device)
        mask = (pos[:, None] - pos[None, :]).abs() <= 1
        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum(1)


@pytest.mark.capture
def test_a_mask_that_masks_something_and_the_heads_it_reads_stay():
    torch.manual_seed(0)
    model, inputs = Banded().eval(), [torch.randn(2, 6, 32)]
    graph = _graph_mode(model, inputs)
    (sdpa,) = [n for n in graph.graph.graph.nodes if n.target is torch.ops.aten.scaled_dot_product_attention.default]
    assert sdpa.args[3].op == "placeholder" and "enable_gqa" not in sdpa.kwargs, graph.graph.code   # a constant mask
    assert [n.target for n in sdpa.args[1].all_input_nodes] == [torch.ops.aten.expand.default], graph.graph.code
    with torch.no_grad():
        assert torch.allclose(graph(*inputs), model(*inputs), rtol=1e-5, atol=1e-6)


@pytest.mark.capture
def test_where_lean_fails_graph_mode_runs_the_graph_as_exported(monkeypatch, caplog):
    import kerntailor.optimizing.graph as graph_mode

    def broken(gm, known):
        gm.graph.erase_node(next(n for n in gm.graph.nodes if n.op == "output"))   # half done, then fails
        raise AttributeError("a torch lean.py does not know")

    monkeypatch.setattr(graph_mode, "lean_graph", broken)
    torch.manual_seed(0)
    model, inputs = Block().eval(), [torch.randn(2, 5, 32)]
    graph = _graph_mode(model, inputs)
    assert "expand" in graph.graph.code and "lean.py failed" in caplog.text
    with torch.no_grad():
        assert torch.allclose(graph(*inputs), model(*inputs), rtol=1e-5, atol=1e-6)


class CacheStep(nn.Module):
    """One decode step over a KV cache, transformers' way: the new key/value appended to the cache by a cat that no
    module holds (graph mode swaps it), the export path repeating the cache's heads for SDPA, eager asking for GQA."""

    def __init__(self, d=32, heads=4, kv_heads=2):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv_heads, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.k, self.v = nn.Linear(d, kv_heads * self.hd, bias=False), nn.Linear(d, kv_heads * self.hd, bias=False)

    def forward(self, x, past_k, past_v):   # x (B, 1, d); past_k, past_v (B, KV, L, hd)
        b = x.shape[0]
        q = self.q(x).view(b, 1, self.heads, self.hd).transpose(1, 2)       # (B, H, 1, hd)
        k = torch.cat([past_k, self.k(x).view(b, 1, self.kv, self.hd).transpose(1, 2)], -2)   # (B, KV, L + 1, hd)
        v = torch.cat([past_v, self.v(x).view(b, 1, self.kv, self.hd).transpose(1, 2)], -2)
        if torch.compiler.is_exporting():
            n, s = self.heads // self.kv, k.shape[2]
            k = k[:, :, None].expand(b, self.kv, n, s, self.hd).reshape(b, self.heads, s, self.hd)
            v = v[:, :, None].expand(b, self.kv, n, s, self.hd).reshape(b, self.heads, s, self.hd)
            return nn.functional.scaled_dot_product_attention(q, k, v)
        return nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def _stand_in(problem_file: str, folder: Path) -> nn.Module:
    """The group's problem file's Model, exactly its cut, as graph mode would call a kernel (test_optimize_graph.py)."""
    path = folder / f"{Path(problem_file).stem}_stand_in.py"
    path.write_text(Path(problem_file).read_text())
    spec = importlib.util.spec_from_file_location(f"stand_in_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Model()


def _cache_step():
    torch.manual_seed(0)
    return CacheStep().eval(), [torch.randn(2, 1, 32), torch.randn(2, 2, 7, 8), torch.randn(2, 2, 7, 8)]


def _llama_decode():
    pytest.importorskip("transformers")
    from kerntailor.problem import load_problem

    problem = load_problem(ROOT / "problems" / "models" / "llama3_2_1b_decode.py")
    torch.manual_seed(0)
    return problem.make_model("small", device="cpu").eval(), problem.make_inputs("small", device="cpu")


@pytest.mark.capture
@pytest.mark.parametrize("build", [_cache_step, _llama_decode], ids=["cache_step", "llama_decode"])
def test_swapped_cache_concatenations_keep_the_lean_rewrites(build, tmp_path):
    """Issue #21: Llama decode with seven KV-cache concatenations swapped in graph mode ran 6986 us on the H200
    against 4829 for the lean graph without them. The kernel calls' nodes carried no value (shape, dtype), so
    lean.py's GQA rewrite, which checks the repeated tensor's shape, skipped every SDPA reading one: each layer
    cloned its key and value heads 4x again. Here every concatenation with the cache is swapped (stand-ins: the
    group's own problem file): the graph must run no op the unswapped lean graph does not (the cats aside) and
    no clone, every SDPA with enable_gqa, the same values."""
    from kerntailor.optimizing.graph import GraphForward, graph_cut
    from kerntailor.profiling import profile_model_traced
    from kerntailor.profiling.extract import owners

    model, inputs = build()
    traced = profile_model_traced(model, inputs, target="h200", top=100, out_dir=tmp_path)
    owner, by_name = owners(traced.traced, traced.plan.groups), {g.name: g for g in traced.plan.groups}
    user = set(traced.traced.program.graph_signature.user_inputs)
    swaps = []
    for row in traced.profile.groups:
        cut = graph_cut(traced.traced, by_name[row.name], owner)
        if not isinstance(cut, str) and any(n.startswith("cat") for n in cut.nodes) and set(cut.inputs) & user:
            swaps.append((cut, _stand_in(row.problem_file, tmp_path)))
    assert len(swaps) == 2 * sum(1 for n in traced.traced.program.graph.nodes
                                 if n.target is torch.ops.aten.scaled_dot_product_attention.default), swaps
    lean = GraphForward(model, traced.traced.program, (), inputs)
    swapped = GraphForward(model, traced.traced.program, tuple(swaps), inputs)
    unswapped_ops, expected = _work(lean, inputs)
    ours, out = _work(swapped, inputs)
    cat = "aten.cat.default"
    assert not Counter({k: v for k, v in (ours - unswapped_ops).items() if k != cat}), ours - unswapped_ops
    assert ours["aten.clone.default"] == 0 and ours[cat] <= unswapped_ops[cat], ours
    sdpa = [n for n in swapped.graph.graph.nodes if n.target is torch.ops.aten.scaled_dot_product_attention.default]
    assert sdpa and all(n.kwargs.get("enable_gqa") for n in sdpa), swapped.graph.code
    assert all(a.op == "call_module" for n in sdpa for a in (n.kwargs["key"], n.kwargs["value"])), swapped.graph.code
    assert torch.equal(out, expected)


@pytest.mark.capture
def test_optimize_installs_the_graph_a_direct_graph_forward_builds(tmp_path, monkeypatch):
    """Issue #21: `kerntailor optimize` measured its eight swapped KV-cache concatenations of Llama decode at 7984 us
    where benchmarks/graph_swaps.py's graph with the same swaps ran 4605. Optimize's own path (the model as
    optimize_problem builds it, in training mode; a swap at a time in rank order, each checked; stand-in kernels)
    installs a graph that runs the same ATen ops as GraphForward built at once on the model in eval mode, as the
    script builds it: the difference is not in what is installed."""
    from dataclasses import replace

    import kerntailor.optimizing.run as run
    from kerntailor.optimizing.graph import GraphForward, graph_cut, graph_forward
    from kerntailor.profiling import profile_model_traced
    from kerntailor.profiling.extract import owners

    model, inputs = _cache_step()
    traced = profile_model_traced(model, inputs, target="h200", top=100, out_dir=tmp_path / "script")
    user = set(traced.traced.program.graph_signature.user_inputs)
    cats = {}

    def generate(base, problem_file, names, settings):   # the script's groups: a cat onto the cache (a user input)
        if base.mode != run.GRAPH or "cat" not in Path(problem_file).read_text() or not set(names) & user:
            return replace(base, reason="not a cache concatenation"), None
        cats[base.group] = _stand_in(problem_file, tmp_path)
        return replace(base, kernel="generated", verdict="passed"), (cats[base.group], "stand_in")

    monkeypatch.setattr(run, "_generate", generate)
    result = run.optimize_model(model.train(), inputs, target="h200", top=100, out_dir=tmp_path / "out",
                                use_store=False, time_it=False)
    installed = graph_forward(result.model)
    assert installed is not None and len(cats) == 2 and len(installed.swaps) == 2, result.report.groups
    owner, by_name = owners(traced.traced, traced.plan.groups), {g.name: g for g in traced.plan.groups}
    swaps = tuple((graph_cut(traced.traced, by_name[name], owner), kernel) for name, kernel in sorted(cats.items()))
    direct = GraphForward(model.eval(), traced.traced.program, swaps, inputs)
    theirs, expected = _work(direct, inputs)
    model.train()
    ours, out = _work(installed, inputs)
    assert ours == theirs and ours["aten.clone.default"] == 0, (ours, theirs)
    assert torch.equal(out, expected)
