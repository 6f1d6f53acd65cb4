"""Mixed plans (#14 item 4): anchors with no generator run through the library inside the emitted module, the
groups around them generated. Unit tier: what the planner and the library writer produce, the conv output-size
formula against torch, the library space. Interpreter tier: whole mixed modules generated and passed by the
referee (conv + pool + softmax tail, transposed conv, SDPA, LSTM), and a mixed module that runs or writes a call
other than its own failing it. The library's convolution with its whole tail as one generated kernel (#19 item 3):
conv + bias + ReLU, conv + bias + InstanceNorm, passed, and failed on values with a wrong tail.

The problems are tests/data/mixed/ (small fp32 modules; the referee's variants are derived or declared there).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from helpers import prepared
from kerntailor.codegen import FAMILIES, default_schedule, generate_module, host_names
from kerntailor.codegen.library import host_size_lines
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.generate import GenerateSettings, generate
from kerntailor.ir.nodes import Conv
from kerntailor.plan.fusion import ANCHORS, plan_fusion

DATA = Path(__file__).parent / "data" / "mixed"
ROOT = Path(__file__).resolve().parents[1]


# the library path of plain convolutions: without codegen's conv family (conftest's library_conv); the generated
# family's own plans are tests/test_codegen_conv.py's
pytestmark = pytest.mark.usefixtures("library_conv")


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def no_local_gpu(monkeypatch):
    import kerntailor.generate.pipeline as pipeline

    monkeypatch.setattr(pipeline, "detect_local_target", lambda *a, **k: None)


def _module(name: str):
    problem, _, gen, plan = prepared(DATA / f"{name}.py")   # captured from the tests' disk cache
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    return problem, gen, plan, generate_module(problem, gen, plan, schedules, "mi300x", "gfx942")


# --- unit ------------------------------------------------------------------------------------------------

def test_the_planner_generates_exactly_the_anchor_families_its_caller_names():
    """The planner may not import codegen: its caller names the families codegen writes (codegen's FAMILIES), and
    an anchor of any other family is a library group. Without matmul among them, gemm_bias_relu's product is the
    library's and its bias + relu a generated pointwise group."""
    assert "library" in FAMILIES and not {"conv", "recurrent"} & set(FAMILIES) and "attention" in FAMILIES
    _, _, gen, plan = prepared(Path(__file__).resolve().parents[1] / "problems" / "level2" / "gemm_bias_relu.py")
    assert [g.family for g in plan.groups] == ["matmul"]
    without = plan_fusion(gen.graph, set(FAMILIES) - {"matmul"})
    assert [g.family for g in without.groups] == ["library", "pointwise"]
    assert without.groups[0].nodes == plan.groups[0].nodes[:1]
    assert [g.family for g in plan_fusion(gen.graph, set(FAMILIES) - set(ANCHORS)).groups] == ["library", "pointwise"]


def test_a_library_group_is_host_lines_calling_its_aten_op():
    problem, gen, plan, module = _module("conv_pool_softmax")
    # the bias + relu is the pool's prologue (plan/fusion.py): computed on the window, never written
    assert [g.family for g in plan.groups] == ["library", "pool", "reduction"]
    lib = next(k for k in module.kernels if k.group == plan.groups[0].name)
    assert lib.source == "" and lib.library_calls == ("torch.ops.aten.convolution.default",)
    assert lib.launch.host_buffers == ("conv0",)
    (line,) = lib.launch.host_prologue
    assert line.startswith("{conv0} = torch.ops.aten.convolution.default({x}, {p_conv_weight}, None, [1, 1], [1, 1], "
                           "[1, 1], False, [0, 0], 1).contiguous()")
    text = module.source
    assert "k0_conv0 = torch.ops.aten.convolution.default(x, p_conv_weight, None" in text
    assert "k0_library_kernel[" not in text and "def k0_library_kernel" not in text   # no Triton kernel for it
    kernels = re.findall(r"@triton\.jit\ndef (k\d+_\w+_kernel)\(", text)   # helpers (_row_max, ...) aside
    assert kernels[:2] == ["k1_pool_kernel", "k2_reduction_kernel"]   # then the softmax's looped form (long rows)
    assert all(k.startswith("k2_reduction_looped") for k in kernels[2:])
    # the pool kernel (bias + relu on its window) reads the library's output
    launch = next(ln for ln in text.splitlines() if "k1_pool_kernel[" in ln)
    assert "(k0_conv0, p_conv_bias," in launch


@pytest.mark.parametrize("transposed, stride, padding, dilation, output_padding, groups", [
    (False, 1, 1, 1, 0, 1), (False, 2, 0, 1, 0, 1), (False, 3, 2, 2, 0, 2), (True, 2, 1, 1, 1, 2),
    (True, 1, 0, 1, 0, 1), (True, 3, 2, 2, 2, 1)])
def test_conv_output_sizes_on_the_host_match_torch(transposed, stride, padding, dilation, output_padding, groups):
    """host_size_lines evaluated at sizes other than the traced ones gives torch's output shape."""
    from kerntailor.capture.generalize import Generalized
    from kerntailor.ir.nodes import Graph, GraphInput
    from kerntailor.ir.types import TensorType, View, contiguous_strides

    def view(name, shape):
        return View(name, shape, contiguous_strides(shape), 0)

    x_shape, w_shape = (2, 4, 9, 11), ((4, 6 // groups, 3, 3) if transposed else (6, 4 // groups, 3, 3))
    node = Conv("conv0", (view("x", x_shape), view("w", w_shape)), TensorType((1, 1, 1, 1), "fp32"), "convolution",
                (stride,) * 2, (padding,) * 2, (dilation,) * 2, groups, transposed, (output_padding,) * 2)
    graph = Graph((GraphInput("x", TensorType(x_shape, "fp32"), "input", "arg0"),
                   GraphInput("w", TensorType(w_shape, "fp32"), "parameter", "w")), (node,), (), ())
    gen = Generalized(graph, (), (), ())
    names = host_names(gen)
    sizes = SizeArgs(gen, names)
    env: dict = {}
    for axis in range(4):
        for line in host_size_lines(gen, node, axis, names[next(d for d in names if d.axis == axis)], sizes):
            exec(line, {}, env)
    x, w = torch.randn(x_shape), torch.randn(w_shape)
    out = torch.ops.aten.convolution.default(x, w, None, [stride] * 2, [padding] * 2, [dilation] * 2, transposed,
                                             [output_padding] * 2 if transposed else [0, 0], groups)
    assert tuple(env[f"conv0_o{k}"] for k in range(4)) == tuple(out.shape)


def test_the_library_space_has_one_config_and_no_knobs():
    from kerntailor.codegen.library import LibrarySchedule
    from kerntailor.search.families import make_space
    from kerntailor.targets import resolve_target

    space = make_space("library", resolve_target("mi300x"), dtype="fp32")
    (config,) = space.enumerate()
    assert config.knobs == () and space.schedule(config, LibrarySchedule()) == LibrarySchedule()


# --- interpreter: whole modules --------------------------------------------------------------------------

def _generate(name: str, tmp_path: Path):
    settings = GenerateSettings(target="mi300x", out_dir=tmp_path / "out", max_candidates=2, budget_s=20,
                                use_store=False)
    result = generate(DATA / f"{name}.py", settings)
    report = json.loads(result.report_path.read_text())
    return result, report


@pytest.mark.interpreter
@pytest.mark.parametrize("name, anchor, call, ops", [
    ("conv_pool_softmax", "conv", "torch.ops.aten.convolution.default", {"aten.convolution.default"}),
    ("conv_transpose_tanh", "conv", "torch.ops.aten.convolution.default", {"aten.convolution.default"}),
    ("conv_scale_pool", "conv", "torch.ops.aten.convolution.default", {"aten.convolution.default"}),
    ("lstm_tail", "recurrent", "torch.ops.aten.lstm.input", None),
])
def test_a_mixed_module_is_generated_and_passes_the_referee(name, anchor, call, ops, tmp_path, no_local_gpu):
    result, report = _generate(name, tmp_path)
    assert result.status == "generated" and result.mixed, result.message
    assert result.verdict.passed and "mixed" in result.message
    (lib,) = report["library_groups"]
    assert lib["call"] == call and lib["reason"] == f"{anchor}: no generator"
    assert 0 < report["generated_share"] < 1 and report["generated_groups"] == report["groups"] - 1
    if ops is not None:   # what one call runs on this CPU (lstm: oneDNN layers and their glue, library_ops.py)
        assert set(report["library_ops"]) == ops
    else:
        assert report["library_ops"]
    md = (result.report_path.parent / "report.md").read_text()
    assert "**Mixed module**" in md and call in md
    assert call in result.kernel_path.read_text()


@pytest.mark.interpreter
def test_a_problem_whose_every_group_is_library_takes_the_plain_library_path(tmp_path, no_local_gpu):
    """A bare convolution (no bias, no tail): nothing gained by wrapping it."""
    problem = tmp_path / "bare_conv.py"
    problem.write_text((DATA / "conv_transpose_tanh.py").read_text().replace(
        "return torch.tanh(self.conv(x) - self.bias)", "return self.conv(x)"))
    result = generate(problem, GenerateSettings(target="mi300x", out_dir=tmp_path / "out", use_store=False))
    assert result.status == "library" and not result.mixed
    assert "every group is a library call (conv: no generator)" in result.message


@pytest.mark.interpreter
def test_a_mixed_module_running_or_writing_another_call_fails_the_referee(tmp_path, no_local_gpu):
    """The referee allows exactly the library group's call: the module with its bias + relu kernel replaced by
    torch's relu fails the static check (a call not named), and, with the static check skipped, the observed
    check (an operator the call does not dispatch to)."""
    from kerntailor.verify import VerifySettings, verify_candidate
    from kerntailor.verify.referee import verify_dynamic

    problem, gen, plan, module = _module("conv_transpose_tanh")
    calls, ops = frozenset({"torch.ops.aten.convolution.default"}), frozenset({"aten.convolution.default"})
    good = tmp_path / "good.py"
    good.write_text(module.source)
    settings = VerifySettings(allowed_ops=ops, allowed_calls=calls, variants=("odd",))
    assert verify_candidate(problem, good, settings).passed
    lines = module.source.splitlines()
    launch = next(i for i, ln in enumerate(lines) if "k1_pointwise_kernel[" in ln)
    indent = lines[launch][:len(lines[launch]) - len(lines[launch].lstrip())]
    lines[launch] = (f"{indent}pw1.copy_(torch.ops.aten.tanh.default(torch.ops.aten.sub.Tensor(k0_conv0, "
                     "p_bias)))")
    bad = tmp_path / "bad.py"
    bad.write_text("\n".join(lines) + "\n")
    v = verify_candidate(problem, bad, settings)
    assert not v.passed and v.check == "static" and "torch.ops.aten.tanh.default" in v.reason + " ".join(v.notes)
    v = verify_dynamic(problem, bad, settings)
    assert not v.passed and v.check == "library" and ("aten.tanh.default" in v.reason or "aten.sub" in v.reason)


# --- the library's convolution with one generated tail (#19 item 3) ------------------------------------------

@pytest.mark.parametrize("name, tail", [("conv_bias_relu", "pointwise"), ("conv_instance_norm", "reduction")])
def test_a_conv_is_the_library_call_and_its_whole_tail_one_generated_kernel(name, tail):
    """The convolution is called without its bias; the bias and everything after it (InstanceNorm's statistics,
    read through the (1, N*C, H, W) view it lowers to) are one generated kernel reading the convolution's output."""
    problem, gen, plan, module = _module(name)
    library, rest = plan.groups[0], plan.groups[1:]
    assert library.family == "library" and [g.family for g in rest] == [tail]
    assert set(rest[0].inputs) == {library.outputs[0], "p_conv_bias"}
    (call,) = [k for k in module.kernels if k.library_calls]
    assert call.library_calls == ("torch.ops.aten.convolution.default",) and call.source == ""
    assert "torch.ops.aten.convolution.default(x, p_conv_weight, None," in module.source


@pytest.mark.interpreter
@pytest.mark.parametrize("name", ["conv_bias_relu", pytest.param("conv_instance_norm", marks=pytest.mark.slow)])
def test_the_library_conv_with_a_generated_tail_passes_and_a_wrong_tail_fails(name, tmp_path):
    """The referee passes the module (allowing the one convolution call and what it dispatches to) and fails it
    on values when the tail computes the wrong function: the last op of the tail dropped (relu; the divide). About
    20 s each on the 2-core CI machine (a referee process, the interpreter): the second is marked slow."""
    problem, gen, plan, module = _module(name)
    last = gen.graph.nodes[-1]
    lines = module.source.splitlines()
    operand = gen.graph.nodes[-2].name
    found = [i for i, ln in enumerate(lines) if ln.lstrip().startswith(f"v_{last.name} = ")]
    assert found   # the tail kernel's (and its looped form's, where it has one)
    for i in found:
        lines[i] = lines[i].split("=")[0] + f"= v_{operand}  # the last op dropped"
    _passes_and_a_mutation_fails(problem, module.source, lines, tmp_path)


def _passes_and_a_mutation_fails(problem, source: str, lines: list[str], tmp_path) -> None:
    """The referee (allowing the one convolution call and what it dispatches to) passes `source` and fails `lines`,
    a mutated copy, on values."""
    from kerntailor.verify import VerifySettings, verify_candidate

    settings = VerifySettings(allowed_ops=frozenset({"aten.convolution.default"}),
                              allowed_calls=frozenset({"torch.ops.aten.convolution.default"}), variants=("odd",))
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(source)
    v = verify_candidate(problem, good, settings)
    assert v.passed, (v.check, v.reason)
    assert "\n".join(lines) + "\n" != source
    bad.write_text("\n".join(lines) + "\n")
    v = verify_candidate(problem, bad, settings)
    assert not v.passed and v.check == "accuracy", (v.check, v.reason)


def test_a_library_convs_bias_add_is_computed_again_where_the_norm_tail_moves():
    """Conv + GroupNorm + scale + max pool: the convolution is called without its bias, so the bias add is a
    full-size node the norm's statistics read, and so does its normalising tail. The tail still becomes the pool's
    prologue, the bias add with it (`recomputed`): the norm's group writes its two statistics and nothing of the
    convolution's size is written but the library's output (KernelBench level-2 85: 2.18 GB planned before, 1.66 GB
    after, what the generated convolution's plan moves)."""
    _, gen, plan, module = _module("conv_groupnorm_maxpool")
    library, norm, pool = plan.groups
    assert (library.family, norm.family, pool.family) == ("library", "reduction", "pool")
    (bias,) = [n.name for n in gen.graph.nodes if n.origin == "conv bias"]
    assert pool.recomputed == (bias,) and bias in pool.prologue and bias in norm.nodes
    assert {library.outputs[0], "p_conv_bias"} <= set(pool.inputs) and set(norm.outputs) <= set(pool.inputs)
    full = gen.graph.node(bias).out.numel
    written = [o for g in plan.groups for o in g.outputs if gen.graph.node(o).out.numel >= full]
    assert written == list(library.outputs)


@pytest.mark.interpreter
def test_the_recomputed_bias_add_passes_and_a_pool_that_leaves_it_out_fails(tmp_path):
    """The module passes the referee; with the pool's copy of the bias add dropped (the statistics' copy kept) it
    fails on values: the pool's recomputation is what its outputs rest on."""
    problem, gen, plan, module = _module("conv_groupnorm_maxpool")
    (bias,) = plan.groups[2].recomputed
    lines = module.source.splitlines()
    pool = next(i for i, ln in enumerate(lines) if ln.startswith("def k2_pool_kernel("))
    copies = [i for i, ln in enumerate(lines) if ln.lstrip().startswith(f"v_{bias} = ")]
    mine = next(i for i in copies if i > pool)   # the pool's (the statistics' kernel and its looped forms come first)
    assert copies[0] < pool
    lines[mine] = re.sub(r"= \((\w+) \+ \w+\)", r"= \1", lines[mine])
    _passes_and_a_mutation_fails(problem, module.source, lines, tmp_path)


@pytest.mark.interpreter
def test_a_channels_last_library_conv_writes_its_layout_and_passes_the_referee(tmp_path):
    """LibrarySchedule(channels_last=True): the convolution's input is a channels-last copy (by the tiled kernel
    kernel.py defines, not torch's permuted copy) and its weight a copy
    kept across calls (cuDNN picks other kernels there), its output stays channels-last for the generated tail
    (codegen/memory_format.py); the referee passes the module."""
    from kerntailor.codegen.library import LibrarySchedule
    from kerntailor.codegen.schedule import ScheduleError
    from kerntailor.verify import VerifySettings, verify_candidate

    with pytest.raises(ScheduleError, match="channels_last"):
        LibrarySchedule(channels_last=1)
    problem, _, gen, plan = prepared(DATA / "conv_bias_relu.py")
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    schedules[plan.groups[0].name] = LibrarySchedule(channels_last=True)
    module = generate_module(problem, gen, plan, schedules, "mi300x", "gfx942")
    assert ("torch.ops.aten.convolution.default(_channels_last_input(x, torch.channels_last), "
            "_channels_last_weight(p_conv_weight, torch.channels_last), None,") in module.source
    settings = VerifySettings(allowed_ops=frozenset({"aten.convolution.default"}),
                              allowed_calls=frozenset({"torch.ops.aten.convolution.default"}), variants=("odd",))
    path = tmp_path / "kernel.py"
    path.write_text(module.source)
    v = verify_candidate(problem, path, settings)
    assert v.passed, (v.check, v.reason)
