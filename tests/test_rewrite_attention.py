"""capture/rewrite_attention.py: attention written out (MinGPT style) becomes one Attention node exactly when the
chain QKᵀ -> [scale] -> [mask] -> softmax(-1) -> @ V matches and its scores have no other reader; every rewritten
graph still computes what the eager module computes (tests/graph_eval.py, float64), and every near miss leaves
the graph as lowering made it (two matrix products). The kernel's values, special ones included, are checked by
the referee in test_codegen_attention.py."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
import torch.nn as nn

from graph_eval import check_against_eager
from kerntailor.capture.export import export_on_meta
from kerntailor.capture.lower import lower_program
from kerntailor.capture.rewrite_attention import rewrite_attention
from kerntailor.ir.nodes import Attention, GraphInput, Matmul
from kerntailor.ir.types import TensorType

# every test here exports a hand-written model (capture's own tests: the capture tier)
pytestmark = pytest.mark.capture

B, H, T, D = 2, 3, 7, 16


class _Written(nn.Module):
    """softmax(mask(q kᵀ · scale)) v in the ways a model writes it; `how` picks the variant."""

    def __init__(self, how: str = "tril"):
        super().__init__()
        self.how = how
        self.register_buffer("bias", torch.tril(torch.ones(12, 12)).view(1, 1, 12, 12))

    def forward(self, q, k, v, extra=None):
        t = q.size(-2)
        att = q @ k.transpose(-2, -1)
        how = self.how
        if how == "scale_after_mask":
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf")) * (1.0 / math.sqrt(k.size(-1)))
        elif how == "divide":
            att = att / math.sqrt(k.size(-1))
        elif how != "plain":
            att = att * (1.0 / math.sqrt(k.size(-1)))
        if how in ("tril", "second_reader", "other_dim"):
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        elif how == "where_keep":
            att = torch.where(extra, att, float("-inf"))
        elif how == "additive":
            att = att + extra
        elif how == "finite_fill":
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, -1e9)
        if how == "relu":   # ReLU self-attention: the weights are relu(scores), not normalised
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
            return torch.relu(att) @ v
        if how == "relu_returned":   # the weights are also an output: not the pattern
            att = torch.relu(att)
            return att @ v, att
        probs = torch.softmax(att, dim=-2 if how == "other_dim" else -1)
        y = probs @ (att if how == "scores_as_values" else v)
        return (y, att) if how == "second_reader" else y


def _graph(model: nn.Module, inputs: list, dtype=torch.float32):
    model = model.to(dtype)
    meta = [x.to(dtype).to("meta") if x.is_floating_point() else x.to("meta") for x in inputs]
    return lower_program(export_on_meta(model.to("meta"), meta, "written"), "written")


def _inputs(how: str, t: int = T):
    torch.manual_seed(0)
    qkv = [torch.randn(B, H, t, D, dtype=torch.float64) for _ in range(3)]
    if how == "where_keep":
        keep = torch.rand(t, t) > 0.4
        keep[:, 0] = True
        return qkv + [keep]
    if how == "additive":
        return qkv + [torch.randn(1, H, t, t, dtype=torch.float64)]
    return qkv


@pytest.mark.parametrize("how, fill_on, scale", [
    ("tril", True, 1 / math.sqrt(D)),
    ("where_keep", False, 1 / math.sqrt(D)),
    ("additive", None, 1 / math.sqrt(D)),
    ("divide", None, 1 / math.sqrt(D)),
    ("plain", None, 1.0),
])
def test_written_out_attention_becomes_one_attention_node(how, fill_on, scale):
    inputs = _inputs(how)
    lowered = _graph(_Written(how), inputs)
    graph = rewrite_attention(lowered)
    atts = [n for n in graph.nodes if isinstance(n, Attention)]
    assert len(atts) == 1 and not any(isinstance(n, Matmul) for n in graph.nodes)
    (att,) = atts
    assert att.fill_on is fill_on and att.safe_softmax is False and not att.causal
    assert att.scale == pytest.approx(scale, rel=1e-12)
    assert att.out.shape == (B, H, T, D) and [op.shape for op in att.operands[:3]] == [(B, H, T, D)] * 3
    assert {op.base for op in att.operands[:3]} == {"q", "k", "v"}   # read as views: no copies
    assert len(att.operands) == (3 if how in ("divide", "plain") else 4)
    if how == "tril":   # the buffer stays an operand (its `== 0` a small pointwise node), never read for values
        mask = graph.node(att.operands[3].base)
        assert graph.buffer_type(mask.name).dtype == "bool" and mask.operands[0].base == "b_bias"
    # no reductions and no T x T pointwise nodes left: the scores are never written
    assert all(n.out.shape[-1] != T or n is att or graph.buffer_type(n.name).dtype == "bool" for n in graph.nodes)
    check_against_eager(graph, _Written(how), inputs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_relu_attention_becomes_one_attention_node_with_relu_scores(dtype):
    """relu(masked_fill(q kᵀ · scale)) @ v: one Attention whose weights are relu(scores) (score "relu"), the tril
    buffer a boolean mask operand, q, k and v read as views, and the graph computes what eager computes."""
    inputs = _inputs("relu")
    graph = rewrite_attention(_graph(_Written("relu"), inputs, dtype))
    (att,) = [n for n in graph.nodes if isinstance(n, Attention)]
    assert att.score == "relu" and att.fill_on is True and att.written_out and not att.causal
    assert att.scale == pytest.approx(1 / math.sqrt(D), rel=1e-12)
    assert not any(isinstance(n, Matmul) for n in graph.nodes) and len(att.operands) == 4
    if dtype == torch.float32:
        check_against_eager(graph, _Written("relu"), inputs)


def test_relu_weights_with_another_reader_leave_the_graph_alone():
    inputs = _inputs("relu_returned")
    lowered = _graph(_Written("relu_returned"), inputs)
    assert rewrite_attention(lowered) == lowered


def test_the_mask_buffer_is_read_as_the_model_holds_it_not_as_a_tril():
    """A bias buffer that is no tril (here: random) is passed on as it is: the rewritten graph follows it."""
    model = _Written("tril")
    inputs = _inputs("tril")
    graph = rewrite_attention(_graph(model, inputs))
    model.bias = (torch.rand(1, 1, 12, 12) > 0.5).to(torch.float64)
    model.bias[..., 0] = 1.0   # every row keeps a key
    check_against_eager(graph, model, inputs)


def test_16_bit_attention_through_softmax_casts():
    inputs = _inputs("tril")
    graph = rewrite_attention(_graph(_Written("tril"), inputs, torch.bfloat16))
    (att,) = [n for n in graph.nodes if isinstance(n, Attention)]
    assert att.out.dtype == "bf16" and att.fill_on is True
    assert not any(isinstance(n, Matmul) for n in graph.nodes)


@pytest.mark.parametrize("how", ["second_reader", "scale_after_mask", "other_dim", "finite_fill", "scores_as_values"])
def test_near_misses_leave_the_graph_alone(how):
    """The score matrix read elsewhere (returned, or as the values: softmax(s) @ s), a scale after the mask,
    softmax over the query axis, a fill with a finite value: not the pattern, so the graph is exactly what lowering
    made."""
    inputs = _inputs(how, t=D if how == "scores_as_values" else T)
    lowered = _graph(_Written(how), inputs)
    assert rewrite_attention(lowered) == lowered
    assert sum(isinstance(n, Matmul) for n in lowered.nodes) == 2


def test_a_minus_inf_fill_selected_by_a_non_boolean_is_left_alone():
    """where(m, -inf, s) whose condition is not boolean (a float tensor, possible in the IR) is refused."""
    inputs = _inputs("where_keep")
    lowered = _graph(_Written("where_keep"), inputs)
    assert rewrite_attention(lowered) != lowered
    mask = next(i for i in lowered.inputs if i.type.dtype == "bool")
    as_float = replace(mask, type=TensorType(mask.type.shape, "fp32"))
    graph = replace(lowered, inputs=tuple(as_float if i is mask else i for i in lowered.inputs))
    assert isinstance(as_float, GraphInput)
    assert rewrite_attention(graph) == graph


def test_heads_transposed_from_one_projection_are_read_through_torch_matmuls_copies():
    """q, k, v split from one projection and transposed to (B, H, T, hd): torch.matmul copies them to (B·H, T, hd);
    the Attention reads the projection instead (the copies die) and still computes what eager computes."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent / "data" / "attention" / "written_gpt_block.py"
    spec = importlib.util.spec_from_file_location("gpt_block", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    init = module.get_init_inputs()
    model = module.Model(*init).double()
    inputs = [torch.randn(2, 11, module.n_embd, dtype=torch.float64)]
    graph = rewrite_attention(_graph(module.Model(*init), inputs))
    (att,) = [n for n in graph.nodes if isinstance(n, Attention)]
    assert len({op.base for op in att.operands[:3]}) == 1
    assert not any(n.name.startswith("copy") for n in graph.nodes[:graph.nodes.index(att)])
    check_against_eager(graph, model, inputs)
