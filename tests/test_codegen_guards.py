"""kernel.py checks every assumption its kernels make before any launch (codegen/guards.py; issue 17 item 1):
rank, dtype, device, sizes the kernels take as literals or read through another dim, a persistent row past
Triton's block limit, a tensor past int32 offsets. Each case either computes the right answer or raises one
error naming the argument and the assumption, never a wrong shape. The modules run in a subprocess under
TRITON_INTERPRET=1; the too-large cases use expanded (stride-0) inputs, so the checks fire before anything
is allocated or copied."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import DATA, GQA_SIZES, L1, make_module, strided_graph

SCRIPT = """
import importlib.util, json, sys, torch
spec = importlib.util.spec_from_file_location("kernel", sys.argv[1])
kernel = importlib.util.module_from_spec(spec); spec.loader.exec_module(kernel)
init = json.loads(sys.argv[2])
cases = {}
def case(name, make_model, make_x, want=None):
    try:
        out = make_model()(make_x())
    except Exception as e:
        cases[name] = [type(e).__name__, str(e)]
        return
    ok = want is not None and out.shape == want.shape and bool(torch.equal(out, want))
    cases[name] = ["returned", list(out.shape), ok]
new = lambda: kernel.ModelNew(*init)
x = torch.randn(5, %(width)d)
case("right", new, lambda: x, torch.relu(x) if %(relu)s else None)
case("rank3", new, lambda: torch.randn(2, 3, %(width)d))
case("bf16", new, lambda: torch.randn(4, %(width)d, dtype=torch.bfloat16))
case("meta", new, lambda: torch.empty(4, %(width)d, device="meta"))
case("list", new, lambda: [[1.0] * %(width)d])
%(extra)s
print(json.dumps(cases))
"""


def _run(tmp_path, module, width: int, relu: bool, extra: str = "", init: tuple = ()) -> dict:
    path = tmp_path / "kernel.py"
    path.write_text(module.source)
    (tmp_path / "check.py").write_text(SCRIPT % {"width": width, "relu": relu, "extra": extra})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    run = subprocess.run([sys.executable, "check.py", str(path), json.dumps(list(init))], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.interpreter
def test_relu_refuses_another_rank_dtype_device_and_a_width_it_takes_as_a_literal(tmp_path):
    extra = """
case("width64", new, lambda: torch.randn(4, 64))
big = torch.zeros(1).expand(44739243, 48)   # 2^31 + 16 elements, one float of storage
case("int32", new, lambda: big)
"""
    got = _run(tmp_path, make_module(DATA / "guards" / "fixed_width.py"), 48, True, extra)
    assert got["right"] == ["returned", [5, 48], True]
    # a [2, 3, 48] input once returned a [2, 3] tensor (d0 * 48 elements read as rows of 48)
    assert got["rank3"][0] == "ValueError"
    assert got["rank3"][1].startswith("x is torch.float32 of shape (2, 3, 48): this kernel was generated for "
                                      "torch.float32 of rank 2")
    # bf16 once came back as fp32 (the output dtype is fixed at generation)
    assert got["bf16"][0] == "ValueError"
    assert got["bf16"][1].startswith("x is torch.bfloat16 of shape (4, 48): this kernel was generated for "
                                     "torch.float32 of rank 2")
    assert got["meta"][0] == "RuntimeError" and got["meta"][1].startswith("x is on meta: the Triton kernels run")
    assert got["list"][0] == "TypeError" and "x is a list" in got["list"][1]
    # width 48 is a literal in the kernel: 64 once returned a [4, 48] tensor of the wrong elements
    assert got["width64"] == ["ValueError", "x.shape[1] is 64: this kernel was generated for x.shape[1] == 48 "
                                            "(the same in every variant it was traced at)"]
    # offsets are int32: 2^31 elements are refused before .contiguous() could copy them
    assert got["int32"][0] == "ValueError"
    assert got["int32"][1].startswith("x has 2147483664 elements: k0_pointwise_kernel computes offsets in int32")


@pytest.mark.interpreter
def test_layernorm_takes_a_row_past_the_persistent_block_and_refuses_a_mismatched_weight(tmp_path):
    """The default schedule holds each row in one block; a row of 2^21 (past Triton's 2^20 elements a block: the
    demo's "numel exceeds triton maximum tensor numel", refused in forward() before the looped form) runs the
    kernel's looped form (fused/__init__.py's _looped_form; two rows that long: its split) and returns."""
    module = make_module(L1 / "layernorm.py")
    assert "Persistent: one read" in module.source
    extra = """
long = torch.randn(2, 2 ** 21) * 3 + 1
m = kernel.ModelNew(2 ** 21)
out = m(long).detach()
w, b = m.ln.weight.detach().double(), m.ln.bias.detach().double()
want = torch.nn.functional.layer_norm(long.double(), (2 ** 21,), w, b, 1e-5).float()
cases["row"] = ["returned", list(out.shape), bool(torch.allclose(out, want, rtol=1e-4, atol=1e-4))]
case("weight", lambda: kernel.ModelNew(32), lambda: torch.randn(3, 40))
"""
    got = _run(tmp_path, module, 40, False, extra, init=(40,))
    assert got["right"][:2] == ["returned", [5, 40]]
    assert got["rank3"][0] == "ValueError" and got["bf16"][0] == "ValueError"
    assert got["row"] == ["returned", [2, 2 ** 21], True], got["row"]
    assert got["weight"] == ["ValueError", "self.ln.weight.shape[0] is 32: this kernel was generated for "
                                           "self.ln.weight.shape[0] == x.shape[1]"]


def test_the_header_says_how_to_use_the_module_and_what_it_supports():
    source = make_module(L1 / "layernorm.py").source
    header = source[:source.index('"""', 3)]
    assert "new.load_state_dict(ref.state_dict())" in header
    assert "    x: torch.float32, shape (any, any)" in header
    assert "    self.ln.weight: torch.float32, shape (x.shape[1],)" in header
    assert ("k0_reduction_kernel: holds whole rows of up to 32768 elements in one block; longer rows run "
            "k0_reduction_looped_kernel, which loops over them") in header
    assert "k0_reduction_kernel: tensors of fewer than 2^31 - 1 elements (int32 offsets)" in header
    assert "Gradients: when grad mode is on" in header and "Gradients: none" not in header


def test_checks_come_before_contiguous_copies_and_allocations():
    """forward() checks everything, then calls the custom op (customop.py), which alone copies and allocates."""
    source = make_module(L1 / "layernorm.py").source
    forward = source.split("class ModelNew", 1)[1].split("    def forward(self", 1)[1]
    call = forward.index("torch.ops.kerntailor.")
    for check in ("x.dim() != 2", "!= d1:", ">= 2147483647"):
        assert forward.index(check) < call, check
    assert ".contiguous()" not in forward and "torch.empty(" not in forward
    op = source.split("def _launch_kernels(", 1)[1]
    assert op.index(".contiguous()") < op.index("torch.empty(")


def _load_on_gpu(tmp_path, module):
    import importlib.util

    path = tmp_path / "kernel.py"
    path.write_text(module.source)
    spec = importlib.util.spec_from_file_location("guards_kernel", path)
    kernel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernel)
    return kernel


@pytest.mark.gpu
def test_gpu_a_real_tensor_past_int32_offsets_is_refused_before_launch(tmp_path):
    """2^31 + 16 real elements (8 GiB fp32) on the GPU: the int32 kernel refuses them, naming the limit."""
    import torch

    kernel = _load_on_gpu(tmp_path, make_module(DATA / "guards" / "fixed_width.py"))
    x = torch.empty(44739243, 48, device="cuda")
    with pytest.raises(ValueError, match="x has 2147483664 elements: k0_pointwise_kernel computes offsets in int32"):
        kernel.ModelNew()(x)


@pytest.mark.gpu
def test_gpu_layernorm_at_the_persistent_row_limit_computes_and_one_past_it_is_refused(tmp_path):
    """hidden 2^20 (XBLOCK 1 x RBLOCK 2^20: Triton's block limit) runs and matches torch; 2^20 + 1 raises."""
    import torch

    kernel = _load_on_gpu(tmp_path, make_module(L1 / "layernorm.py"))
    hidden = 2 ** 20
    ref = torch.nn.LayerNorm(hidden).cuda()
    new = kernel.ModelNew(hidden).cuda()
    new.ln.load_state_dict(ref.state_dict())
    x = torch.randn(3, hidden, device="cuda")
    with torch.no_grad():
        torch.testing.assert_close(new(x), ref(x), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="rows of 1048577 elements"):
        kernel.ModelNew(hidden + 1).cuda()(torch.randn(2, hidden + 1, device="cuda"))


def test_a_stride_fitted_where_a_dim_did_not_vary_is_checked_by_name():
    """generalize.Pinned: the batch stride fitted only where the batch was not 1, and kv_heads was 2 there
    (test_generalize.py's graphs). forward()'s check refuses kv_heads 1 with a batch of 2, naming k, and passes
    the traced sizes, a batch of 1 (the stride unused) and another length."""
    from kerntailor.capture.generalize import generalize
    from kerntailor.codegen import host_names
    from kerntailor.codegen.guards import pin_checks

    gen = generalize([strided_graph(b, kv, n, kv * n if b != 1 else 7) for b, kv, n in GQA_SIZES], "gqa")
    names = host_names(gen)
    code = "\n".join(pin_checks(gen, {"k": "k"}, names))

    def run(b: int, kv: int, n: int) -> str:
        sizes = dict(zip((0, 1, 2), (b, kv, n)))
        try:
            exec(code, {}, {name: sizes[d.axis] for d, name in names.items()})  # noqa: S102
        except ValueError as e:
            return str(e)
        return "ok"

    assert [run(*s) for s in GQA_SIZES] == ["ok"] * 4
    assert run(1, 3, 9) == "ok" and run(2, 2, 77) == "ok"
    refused = run(2, 1, 40)
    assert refused.startswith("k.shape[1] = 1: this kernel was generated for k.shape[1] == 2 (the stride "
                              "node/pw0/operand/0/strides/0"), refused
    assert run(3, 2, 40).startswith("k.shape[0] = 3: this kernel was generated for k.shape[0] == 2")


@pytest.mark.unit
def test_a_refused_rows_length_is_traced_to_the_input_behind_a_derived_size():
    """A row of a tensor the model makes (a conv's output depth, derived on the host from x's) names x: the
    referee takes a refusal only when it names what its case changed (KernelBench level2 24 on the H200: the
    conv output's depth 1048577 named nothing the case changed, x's depth 1048579)."""
    from kerntailor.codegen.emit import _size_origins

    lines = ["d0 = x.shape[0]", "d2 = x.shape[2]", "w0 = conv_weight.shape[0]", "conv0_2 = (d2 - 3) // 1 + 1",
             "cat0_1 = conv0_2 + w0"]
    origins = _size_origins(lines, {"x": "x", "p_w": "conv_weight"}, {"x": "x", "p_w": "self.conv.weight"})
    assert origins["d2"] == ("x",) and origins["conv0_2"] == ("x",)
    assert origins["cat0_1"] == ("x", "self.conv.weight")
