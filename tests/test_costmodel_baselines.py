"""Predicted eager and torch.compile baselines (costmodel/baselines.py, costmodel/eager_trace.py), on the CPU."""

import pytest

from helpers import captured_variant
from kerntailor.costmodel.analytical import LAUNCH_OVERHEAD_S
from kerntailor.costmodel.baselines import MODEL, kernel_seconds, predict_baselines
from kerntailor.costmodel.eager_trace import trace_eager
from kerntailor.problem import load_problem
from kerntailor.targets import get_target
from kerntailor.targets.roofline import H200_MEASURED


def _problem(tmp_path, name: str, forward: str, inputs: str, init: str = "") -> object:
    """A problem file whose Model runs `forward` (statements over `xs`) after `init` (statements in __init__)."""
    def body(text: str) -> str:
        return "".join(f"        {line}\n" for line in text.strip().splitlines())

    source = ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n" + (body(init) if init else "") +
              "\n    def forward(self, *xs):\n" + body(forward) +
              f"\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return []\n")
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return load_problem(path)


def _predict(problem, target="h200", ceilings=None):
    return predict_baselines(problem, captured_variant(problem).graph, get_target(target), ceilings)


N = 1 << 24   # 64 MiB of fp32: launch overhead is a small share next to the bytes


def test_a_three_op_pointwise_chain_costs_three_times_its_fused_kernel_in_eager(tmp_path):
    problem = _problem(tmp_path, "chain", "x = xs[0]\nreturn torch.relu(x * 2.0 + 1.0)", f"[torch.randn({N})]")
    b = _predict(problem)
    assert [k.ops[0] for k in b.eager.kernels] == ["aten.mul.Tensor", "aten.add.Tensor", "aten.relu.default"]
    assert len(b.compile.kernels) == 1
    assert b.eager.bytes == 3 * b.compile.bytes == 3 * 2 * 4 * N    # each op reads and writes N floats
    assert b.eager.seconds / b.compile.seconds == pytest.approx(3.0, rel=0.02)
    # the fused kernel moves its bytes at the datasheet rate the analytical model charges, plus one launch
    h200 = get_target("h200")
    expected = 8 * N / h200.memory_bandwidth + LAUNCH_OVERHEAD_S["nvidia"]
    assert b.compile.seconds == pytest.approx(expected, rel=1e-9)


def test_a_matmul_runs_at_the_library_gemm_rate_in_both_baselines(tmp_path):
    m = 4096
    problem = _problem(tmp_path, "mm", "return xs[0] @ xs[1]",
                       f"[torch.randn({m}, {m}, dtype=torch.bfloat16), torch.randn({m}, {m}, dtype=torch.bfloat16)]")
    b = _predict(problem, "mi300x")
    (eager,) = b.eager.kernels
    (compiled,) = b.compile.kernels
    mi300x = get_target("mi300x")
    flops = 2 * m ** 3
    assert eager.flops_matrix == compiled.flops_matrix == flops and eager.library and compiled.library
    expected = flops / mi300x.peak("bf16") + LAUNCH_OVERHEAD_S["amd"]
    assert eager.seconds == pytest.approx(expected, rel=1e-9)
    assert compiled.seconds == pytest.approx(expected, rel=1e-9)
    # twice the FLOPs in K: twice the time (compute-bound), the launch aside
    twice = kernel_seconds(mi300x, flops_matrix=2 * flops, flops_vector=0, bytes_read=eager.bytes_read,
                           bytes_written=eager.bytes_written, dtype="bf16")
    assert twice - LAUNCH_OVERHEAD_S["amd"] == pytest.approx(2 * (expected - LAUNCH_OVERHEAD_S["amd"]), rel=1e-9)


def test_compile_keeps_the_gemm_a_library_call_and_fuses_its_epilogue_into_one_kernel(tmp_path):
    problem = _problem(tmp_path, "gemm_tail", "return torch.sigmoid(self.fc(xs[0])) * 2.0",
                       "[torch.randn(2048, 1024)]", init="self.fc = nn.Linear(1024, 512)\n")
    b = _predict(problem)
    assert len(b.compile.kernels) == 2          # the product (with or without its bias), then one epilogue kernel
    assert b.compile.kernels[0].library and not b.compile.kernels[1].library
    assert len(b.eager.kernels) == 3             # addmm, sigmoid, mul
    out_bytes = 2048 * 512 * 4
    assert b.compile.kernels[1].bytes_written == out_bytes
    assert b.compile.seconds < b.eager.seconds


def test_views_cost_nothing_and_a_softmax_is_one_eager_kernel(tmp_path):
    problem = _problem(tmp_path, "view_softmax",
                       "x = xs[0].transpose(0, 1)[:, None]\nreturn torch.softmax(x, dim=2)",
                       "[torch.randn(64, 4096)]")
    ops = trace_eager(problem)
    assert [o.op for o in ops] == ["aten._softmax.default"]     # view and transpose launch nothing
    assert ops[0].bytes_read == ops[0].bytes_written == 4096 * 64 * 4


def test_attention_is_one_eager_kernel_not_the_math_fallback_of_meta_tensors(tmp_path):
    b, h, s, d = 2, 4, 256, 64
    problem = _problem(tmp_path, "sdpa", "return torch.nn.functional.scaled_dot_product_attention(*xs)",
                       f"[torch.randn({b}, {h}, {s}, {d}) for _ in range(3)]")
    (op,) = trace_eager(problem)
    assert op.matrix and op.flops == 4 * b * h * s * s * d
    assert op.bytes_read == 3 * b * h * s * d * 4 and op.bytes_written == b * h * s * d * 4


def test_every_figure_carries_its_label_and_measured_ceilings_set_the_rates(tmp_path):
    problem = _problem(tmp_path, "relu", "return torch.relu(xs[0])", f"[torch.randn({N})]")
    vendor = _predict(problem, "h200")
    d = vendor.to_dict(kernel_seconds=vendor.compile.seconds / 2)
    assert d["label"] == f"predicted (h200, {MODEL})" and d["rates"] == "vendor peak"
    assert d["speedup_vs_compile"] == pytest.approx(2.0) and d["speedup_vs_eager"] == pytest.approx(2.0)
    assert "speedup_vs_eager" not in vendor.to_dict()            # no kernel time, no speed-up
    measured = _predict(problem, "h200", H200_MEASURED)
    copy = 8 * N / H200_MEASURED.copy_bandwidth + LAUNCH_OVERHEAD_S["nvidia"]
    assert measured.compile.seconds == pytest.approx(copy, rel=1e-9)
    assert measured.to_dict()["rates"] == H200_MEASURED.source


def test_a_recurrent_layer_is_one_eager_library_call_with_the_flops_of_its_steps(tmp_path):
    batch, seq, inp, hidden = 32, 64, 128, 256
    problem = _problem(tmp_path, "gru", "out, h = self.gru(xs[0])\nreturn h",
                       f"[torch.randn({batch}, {seq}, {inp})]",
                       init=f"self.gru = nn.GRU({inp}, {hidden}, 2, batch_first=True)")
    # nn.GRU fills its initial state, then one call: not the per-step ops meta tensors decompose it into
    fill, op = trace_eager(problem)
    assert fill.op == "aten.zeros.default" and fill.bytes_written == 2 * batch * hidden * 4
    assert op.op == "aten.gru" and op.matrix
    # per layer and step, the input and hidden products of three gates: 2 x batch x (in + hidden) x 3 hidden
    per_step = 2 * batch * 3 * hidden * ((inp + hidden) + (hidden + hidden))
    assert op.flops == pytest.approx(seq * per_step, rel=0.01)
    # compile runs the same call (the graph keeps h_n alone, yet the call's products are counted)
    (call,) = [k for k in _predict(problem).compile.kernels if k.library]
    assert call.flops_matrix == op.flops
