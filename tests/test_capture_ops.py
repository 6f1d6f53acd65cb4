"""The ops KernelBench needs, lowered to the IR (#14 item 3), each checked against the eager module: the
captured graph is run by the reference evaluator (tests/graph_eval.py, float64) on the values the eager
module runs on. Vector norms, instance norm, split/chunk/unbind/unfold, constant padding and copy_ lower to
pointwise, reduction and view nodes (generated kernels); transposed convolution and recurrent layers are
anchors whose fields are their ATen op's arguments, so the evaluator runs them as the library call a
generated module would make. A few seconds in all (small shapes, meta capture, CPU evaluation)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from graph_eval import check_against_eager
from kerntailor.capture import capture_problem
from kerntailor.codegen import FAMILIES, plan_of, refused_anchors
from kerntailor.errors import CaptureError
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Conv, Pointwise, Recurrent, Reduction
from kerntailor.plan import plan_fusion
from kerntailor.problem import load_problem

TEMPLATE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
{init}

    def forward(self, {args}):
{body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""


def problem(tmp_path: Path, name: str, body: str, inputs: str, args: str = "x", init: str = "pass"):
    source = TEMPLATE.format(init=textwrap.indent(textwrap.dedent(init), " " * 8), args=args,
                             body=textwrap.indent(textwrap.dedent(body), " " * 8), inputs=inputs)
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return load_problem(path)


def captured_matches_eager(spec, variant: str = "default"):
    """Capture `variant`, plan it, and check the graph against the eager module on real CPU values."""
    graph = capture_problem(spec, variant).graph
    plan_fusion(graph, FAMILIES)  # every new node has a group
    model = spec.make_model(variant, "cpu", seed=1)
    inputs = spec.make_inputs(variant, "cpu", seed=2)
    check_against_eager(graph, model, inputs)
    return graph


def families(graph) -> set[str]:
    return {n.family for n in graph.nodes}


# --- vector norms ---------------------------------------------------------------------------------------

@pytest.mark.capture
@pytest.mark.parametrize("name,body", [
    ("l2_normalize", "return x / torch.norm(x, p=2, dim=1, keepdim=True)"),
    ("frobenius", "return x / torch.norm(x, p='fro')"),
    ("l1_rows", "return torch.linalg.vector_norm(x, ord=1, dim=1)"),
    ("max_abs", "return torch.linalg.vector_norm(x, ord=float('inf'), dim=-1, keepdim=True)"),
    ("min_abs", "return torch.linalg.vector_norm(x, ord=float('-inf'), dim=(0, 2))"),
    ("p3", "return torch.linalg.vector_norm(x, ord=3, dim=(0, 2))"),
    ("p_half", "return torch.linalg.vector_norm(x, ord=0.5)"),
    ("nonzeros", "return torch.linalg.vector_norm(torch.relu(x), ord=0, dim=1)"),
    ("normalize", "return F.normalize(x, p=2, dim=-1)"),
])
def test_vector_norms(tmp_path, name, body):
    graph = captured_matches_eager(problem(tmp_path, name, body, "torch.randn(6, 40, 5)"))
    assert families(graph) <= {"pointwise", "reduction"}
    assert not any("norm" in n.origin and n.family not in ("pointwise", "reduction") for n in graph.nodes)


@pytest.mark.capture
def test_triplet_margin_loss(tmp_path):
    spec = problem(tmp_path, "triplet", "return F.triplet_margin_loss(a, p, n, margin=1.0)",
                   "torch.randn(32, 20), torch.randn(32, 20), torch.randn(32, 20)", args="a, p, n")
    assert families(captured_matches_eager(spec)) <= {"pointwise", "reduction"}


# --- instance norm (batch statistics) ----------------------------------------------------------------------

@pytest.mark.capture
@pytest.mark.parametrize("name,init,inputs", [
    ("instance2d", "self.norm = nn.InstanceNorm2d(6)", "torch.randn(3, 6, 5, 7)"),
    ("instance2d_affine", "self.norm = nn.InstanceNorm2d(6, affine=True)\n"
                          "nn.init.uniform_(self.norm.weight)\nnn.init.uniform_(self.norm.bias)",
     "torch.randn(3, 6, 5, 7)"),
    ("instance1d", "self.norm = nn.InstanceNorm1d(16, eps=1e-3)", "torch.randn(2, 16, 33)"),
    ("instance3d", "self.norm = nn.InstanceNorm3d(4)", "torch.randn(2, 4, 3, 5, 6)"),
])
def test_instance_norm(tmp_path, name, init, inputs):
    spec = problem(tmp_path, name, "return self.norm(x) * 2.0", inputs, init=init)
    graph = captured_matches_eager(spec)
    reductions = [n for n in graph.nodes if isinstance(n, Reduction)]
    assert reductions and families(graph) <= {"pointwise", "reduction"}
    # statistics per (sample, channel): torch views (N, C, *S) as (1, N*C, *S) and reduces all but axis 1
    n, c = spec.inputs[0].shape[:2]
    assert all(r.out.numel == n * c for r in reductions)


@pytest.mark.capture
def test_batch_norm_by_batch_statistics(tmp_path):
    spec = problem(tmp_path, "bn_batch_stats", "return F.batch_norm(x, None, None, self.w, self.b, training=True)",
                   "torch.randn(8, 5, 9)",
                   init="self.w = nn.Parameter(torch.rand(5))\nself.b = nn.Parameter(torch.rand(5))")
    captured_matches_eager(spec)


@pytest.mark.capture
def test_batch_norm_in_training_mode_with_running_statistics(tmp_path):
    """F.batch_norm with running statistics and training=True (aten._native_batch_norm_legit_functional): the
    output is the batch-statistics normalization; the updated statistics are buffer mutations, not outputs."""
    spec = problem(tmp_path, "bn_functional",
                   "return F.batch_norm(x, self.rm, self.rv, self.w, self.b, training=True, momentum=0.3)",
                   "torch.randn(8, 5, 9)",
                   init="self.w = nn.Parameter(torch.rand(5))\nself.b = nn.Parameter(torch.rand(5))\n"
                        "self.register_buffer('rm', torch.rand(5))\nself.register_buffer('rv', torch.rand(5) + 1)")
    graph = captured_matches_eager(spec)
    assert sum(n.family == "reduction" for n in graph.nodes) == 2   # the batch's mean and variance


# --- views: split, chunk, unbind, unfold ---------------------------------------------------------------------

@pytest.mark.capture
@pytest.mark.parametrize("name,body", [
    ("split_qkv", "q, k, v = x.split(16, dim=-1)\nreturn q * k + v"),
    ("split_uneven", "a, b, c = x.split([3, 5, 40], dim=-1)\nreturn a.sum(-1) + b.mean(-1) - c.amax(-1)"),
    ("chunk_uneven", "parts = torch.chunk(x[..., :47], 2, dim=-1)\nreturn parts[0].sum(-1) * parts[1].sum(-1)"),
    ("unbind", "a, b, c, d = torch.unbind(x[:, :4], dim=1)\nreturn a * b - c / (d.abs() + 1)"),
    ("unfold_windows", "return x.unfold(2, 8, 4).sum(-1)"),
    ("unfold_patches", "p = x.unfold(1, 2, 2).unfold(2, 4, 4)\nreturn p.reshape(p.shape[0], -1) * 2"),
    ("repeat", "return x.repeat(2, 1, 3)[:, 1:, :100] + x.sum()"),
])
def test_views(tmp_path, name, body):
    graph = captured_matches_eager(problem(tmp_path, name, body, "torch.randn(3, 6, 48)"))
    assert families(graph) <= {"pointwise", "reduction"}


# --- constant padding ---------------------------------------------------------------------------------------

@pytest.mark.capture
@pytest.mark.parametrize("name,body", [
    ("pad_last", "return F.pad(x, (1, 2)) * 3"),
    ("pad_two_axes_value", "return F.pad(x, (2, 1, 0, 3), value=0.5)"),
    ("pad_crop", "return F.pad(x, (-1, 2, 1, -2))"),
    ("pad_three_axes_sum", "return F.pad(x, (1, 1, 1, 1, 1, 0)).sum(1)"),
    ("pad_then_pool", "return F.max_pool2d(F.pad(x, (1, 0, 1, 0), value=-1e9), 2)"),
])
def test_constant_padding(tmp_path, name, body):
    graph = captured_matches_eager(problem(tmp_path, name, body, "torch.randn(2, 3, 7, 9)"))
    pads = [n for n in graph.nodes if n.origin == "constant_pad_nd"]
    assert pads, [n.origin for n in graph.nodes]
    for node in pads:  # padding is a masked load (as cat): one read of the input, no branches in memory
        assert isinstance(node, Pointwise)
        assert any(isinstance(e, Load) and e.valid is not None for e in _walk(node.expr)) or name == "pad_crop"


def _walk(e):
    yield e
    for child in getattr(e, "args", ()):
        yield from _walk(child)
    if isinstance(e, Load) and e.valid is not None:
        yield from _walk(e.valid)


@pytest.mark.capture
def test_padding_generalizes_over_variants(tmp_path):
    """The pad's bounds and its output's size are fitted across variants (W + 3: a line with an offset)."""
    from kerntailor.capture.capture import capture_generalized

    source = TEMPLATE.format(init="        pass", args="x", body="        return F.pad(x, (1, 2), value=1.0).sum(-1)",
                             inputs="torch.randn(batch, width)")
    path = tmp_path / "pad_sizes.py"
    path.write_text("batch = 64\nwidth = 256\n" + source)
    _, gen = capture_generalized(load_problem(path))
    (pad,) = [n for n in gen.graph.nodes if n.origin == "constant_pad_nd"]
    fitted = dict(gen.exprs)
    width = next(d for d in gen.dims if gen.graph.inputs[d.input].type.shape[d.axis] == 256)
    out = fitted[("node", pad.name, "out", 1)]
    assert out.evaluate({width: 100}) == 103 and out.offset == 3
    assert any(path[:2] == ("node", pad.name) and "const" in path for path in fitted), fitted


# --- copy_ of a module's tensor attribute -----------------------------------------------------------------

@pytest.mark.capture
def test_a_hidden_state_kept_on_the_module(tmp_path):
    """`self.hidden.copy_(h)` then `self.hidden = ...` (KernelBench's VanillaRNN): torch.export refuses to
    trace a write to a plain tensor attribute; captured with it registered as a buffer, and only forward()'s
    return value is an output."""
    init = ("self.hidden = torch.randn(batch, hidden)\nself.i2h = nn.Linear(features + hidden, hidden)\n"
            "self.h2o = nn.Linear(hidden, 8)")
    body = """
        self.hidden.copy_(h)
        self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
        return self.h2o(self.hidden)
    """
    source = TEMPLATE.format(init=textwrap.indent(init, " " * 8), args="x, h", body=textwrap.indent(
        textwrap.dedent(body), " " * 8), inputs="torch.randn(batch, features), torch.randn(batch, hidden)")
    path = tmp_path / "vanilla_rnn.py"
    path.write_text("batch = 16\nfeatures = 40\nhidden = 24\n" + source)
    spec = load_problem(path)
    for variant in ("default", "odd"):
        graph = captured_matches_eager(spec, variant)
        assert len(graph.outputs) == 1 and graph.output_types[0].shape == (spec.module(variant).batch, 8)


# --- transposed convolution: an anchor with aten.convolution's arguments ---------------------------------------

@pytest.mark.capture
@pytest.mark.parametrize("name,init,inputs", [
    ("convt2d_all", "self.conv = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, "
                    "dilation=2)", "torch.randn(2, 4, 5, 6)"),
    ("convt1d", "self.conv = nn.ConvTranspose1d(3, 5, 4, stride=3, padding=2, output_padding=2, bias=False)",
     "torch.randn(2, 3, 9)"),
    ("convt3d", "self.conv = nn.ConvTranspose3d(2, 4, (2, 3, 1), stride=(2, 1, 2), output_padding=(1, 0, 1))",
     "torch.randn(1, 2, 3, 4, 5)"),
])
def test_transposed_convolution(tmp_path, name, init, inputs):
    spec = problem(tmp_path, name, "return torch.relu(self.conv(x))", inputs, init=init)
    graph = captured_matches_eager(spec)
    (conv,) = [n for n in graph.nodes if isinstance(n, Conv)]
    module = spec.make_model("default", "meta").conv
    assert conv.transposed and conv.stride == module.stride and conv.padding == module.padding
    assert conv.output_padding == module.output_padding and conv.dilation == module.dilation
    assert conv.groups == module.groups
    assert any(conv.output_padding)
    x, w = conv.operands
    # every input element scatters into Cout/g channels x the kernel
    assert conv.flops() == 2 * x.numel * w.shape[1] * int(torch.tensor(w.shape[2:]).prod())
    assert "transposed" in conv.describe() and "output_padding" in conv.describe()
    # codegen generates a transposed convolution (codegen/conv.py's gather form): one conv group, its bias and
    # relu the epilogue
    assert conv.name not in refused_anchors(graph)
    plan = plan_of(graph)
    assert [g.family for g in plan.groups] == ["conv"]
    assert plan.groups[0].nodes[0] == conv.name


# --- recurrent layers: whole, one anchor per result --------------------------------------------------------------

@pytest.mark.capture
@pytest.mark.parametrize("name,init,body,inputs,args", [
    ("lstm_batch_first", "self.rnn = nn.LSTM(8, 12, 2, batch_first=True)",
     "out, (h, c) = self.rnn(x, (h0, c0))\nreturn out[:, -1], h, c",
     "torch.randn(3, 7, 8), torch.randn(2, 3, 12), torch.randn(2, 3, 12)", "x, h0, c0"),
    ("lstm_proj_bidirectional", "self.rnn = nn.LSTM(8, 12, 2, bidirectional=True, proj_size=5)",
     "out, (h, c) = self.rnn(x, (h0, c0))\nreturn out, c",
     "torch.randn(7, 3, 8), torch.randn(4, 3, 5), torch.randn(4, 3, 12)", "x, h0, c0"),
    ("gru_bidirectional", "self.rnn = nn.GRU(8, 10, 3, bidirectional=True, batch_first=True)",
     "out, h = self.rnn(x, h0)\nreturn h", "torch.randn(2, 6, 8), torch.randn(6, 2, 10)", "x, h0"),
    ("rnn_relu_no_bias", "self.rnn = nn.RNN(8, 9, 1, nonlinearity='relu', bias=False)",
     "out, h = self.rnn(x)\nreturn out * 2", "torch.randn(5, 4, 8)", "x"),
])
def test_recurrent_layers(tmp_path, name, init, body, inputs, args):
    spec = problem(tmp_path, name, body, inputs, args=args, init=init)
    graph = captured_matches_eager(spec)
    nodes = [n for n in graph.nodes if isinstance(n, Recurrent)]
    assert nodes and len({n.call for n in nodes}) == 1
    module = spec.make_model("default", "meta").rnn
    for node in nodes:
        assert node.num_layers == module.num_layers and node.bidirectional == module.bidirectional
        assert node.batch_first == module.batch_first and node.has_biases == module.bias
        assert node.operands[0].shape == spec.inputs[0].shape
        assert len(node.operands) == 1 + node.hidden + len(module._flat_weights)
    plan = plan_fusion(graph, FAMILIES)
    # no generator: one library group holds the call's every result (one node per used result, one call)
    recurrent_groups = [g for g in plan.groups if g.family == "library" and set(g.nodes) & {n.name for n in nodes}]
    assert len(recurrent_groups) == 1 and {n.name for n in nodes} <= set(recurrent_groups[0].nodes)


@pytest.mark.capture
def test_a_long_lstm_captures_in_seconds(tmp_path):
    """6 layers over 512 steps (KernelBench level3/36): one node per result, never unrolled step by step
    (unrolled, one meta forward took 17 s and torch.export 48 s on 2 shared cores, 2026-12-01; whole, the
    load and capture take about a second)."""
    spec = problem(tmp_path, "long_lstm", "out, _ = self.rnn(x, (h0, c0))\nreturn out[:, -1]",
                   "torch.rand(10, 512, 128), torch.rand(6, 10, 256), torch.rand(6, 10, 256)", args="x, h0, c0",
                   init="self.rnn = nn.LSTM(128, 256, 6, batch_first=True)")
    graph = capture_problem(spec).graph
    (node,) = [n for n in graph.nodes if isinstance(n, Recurrent)]
    assert node.result == 0 and node.out.shape == (10, 512, 256)
    assert node.flops() == 2 * 512 * 10 * 4 * 256 * (128 + 256 + 5 * (256 + 256))


def test_recurrent_kernels_are_restored():
    from kerntailor.problem.meta import RECURRENT, recurrent_by_shape

    before = {op: dict(op.py_kernels) for op in RECURRENT}
    with recurrent_by_shape():
        assert all(op.py_kernels != before[op] for op in RECURRENT)
    assert {op: dict(op.py_kernels) for op in RECURRENT} == before
    lstm = torch.nn.LSTM(3, 4)
    out, _ = lstm(torch.randn(5, 2, 3))  # real values again
    assert torch.isfinite(out).all() and out.abs().sum() > 0


# --- refusals --------------------------------------------------------------------------------------------------

@pytest.mark.capture
def test_random_numbers_in_forward_are_a_one_line_refusal(tmp_path):
    spec = problem(tmp_path, "random_h0", "return x + torch.randn(x.shape[0], 4, device=x.device)",
                   "torch.randn(64, 4)")
    with pytest.raises(CaptureError) as info:
        capture_problem(spec)
    message = str(info.value)
    assert "\n" not in message and "random" in message and "randn" in message


@pytest.mark.capture
def test_inspect_prints_the_new_anchors(tmp_path):
    from kerntailor.inspect import inspect_problem, render_inspection

    spec = problem(tmp_path, "convt_lstm", "y = self.conv(x).flatten(2)\nout, (h, c) = self.rnn(y)\nreturn out, c",
                   "torch.randn(2, 4, 5, 6)",
                   init="self.conv = nn.ConvTranspose2d(4, 3, 3, stride=2, output_padding=1)\n"
                        "self.rnn = nn.LSTM(168, 16, 2, batch_first=True)")
    text = render_inspection(inspect_problem(spec.path, "mi300x"))
    assert "transposed conv2d kernel (3, 3) stride (2, 2) pad (0, 0) output_padding (1, 1) groups 1" in text
    assert "lstm x2 batch_first -> output sequence (call lstm0)" in text and "-> c_n (call lstm0)" in text
    # the transposed convolution is generated with its bias as the epilogue (codegen/conv.py's gather form); the LSTM
    # has no generator: a library group, its two used results in one call
    assert "conv      [conv0, pw0]" in text and "library   [lstm0_0, lstm0_2]" in text


@pytest.mark.capture
@pytest.mark.parametrize("name,body,inputs", [
    ("index_rows", "return self.table[self.idx.view(-1)].view(7, 7, -1) * x", "torch.randn(2, 7, 7, 5)"),
    ("index_middle_negative", "return x[:, self.picks] * 2", "torch.randn(3, 6, 5)"),
])
def test_advanced_indexing_with_one_index_tensor(tmp_path, name, body, inputs):
    """x[idx] (aten.index.Tensor): Swin's relative position bias table; negative indices count from the end."""
    init = ("self.table = nn.Parameter(torch.randn(169, 5))\n"
            "self.register_buffer('idx', torch.randint(0, 169, (7, 7)))\n"
            "self.register_buffer('picks', torch.tensor([0, -1, 2, -3]))")
    graph = captured_matches_eager(problem(tmp_path, name, body, inputs, init=init))
    assert any(n.origin == "index" for n in graph.nodes)
