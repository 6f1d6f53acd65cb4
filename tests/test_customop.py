"""kernel.py's launches as one torch.library custom op (codegen/customop.py; issue 17 item 4).

Unit tier: the op's name (a valid identifier that hashes the code, the same for the same code), where the checks,
the call and the launches sit, what the op may take. Interpreter tier (a subprocess under TRITON_INTERPRET=1, on
the tiny problems of tests/data/grads, one per family generate emits): torch.library.opcheck passes every one of
its tests on the op, called with the tensors forward() hands it (and with a non-contiguous input); a model holding
ModelNew compiles with torch.compile(fullgraph=True, backend="aot_eager") with no graph break, and its outputs and
gradients are eager's; importing the same kernel.py twice (from two folders) works; the two gradients the header
says raise do raise. The GPU counterparts (inductor, CUDA graphs, reduce-overhead) are in test_customop_gpu.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from helpers import DATA, L1, make_module

GRADS = DATA / "grads"
OPCHECK_TESTS = {"test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"}


# --- unit: the text -----------------------------------------------------------------------------------------

def _op_name(source: str) -> str:
    names = set(re.findall(r"torch\.ops\.kerntailor\.(\w+)", source))
    assert len(names) == 1, names
    return names.pop()


def test_the_op_name_is_an_identifier_that_hashes_the_code():
    from kerntailor.codegen.customop import op_name

    source = make_module(L1 / "layernorm.py").source
    name = _op_name(source)
    assert re.fullmatch(r"layernorm_[0-9a-f]{16}", name), name
    assert f'torch.library.custom_op("kerntailor::{name}", _launch_kernels, mutates_args=())' in source
    # the same code, the same name (the header's date and version are not hashed); other code, another name
    assert _op_name(make_module(L1 / "layernorm.py").source) == name
    looped = make_module(L1 / "layernorm.py", {"reduction": {"persistent": False, "RBLOCK": 1024}}).source
    assert _op_name(looped) != name
    assert op_name("19_ReLU", "x").startswith("p19_ReLU_") and op_name("a-b c", "x").startswith("a_b_c_")
    assert op_name("relu", "x") != op_name("relu", "y")


def test_forward_checks_then_calls_the_op_which_launches_the_kernels():
    source = make_module(L1 / "layernorm.py").source
    name = _op_name(source)
    op = source.split("def _launch_kernels(", 1)[1].split("\n\n\n", 1)[0]
    forward = source.split("class ModelNew", 1)[1].split("    def forward(self", 1)[1]
    assert "k0_reduction_kernel[" in op and "x = x.contiguous()" in op and "torch.empty(" in op
    assert "_kernel[" not in forward and ".contiguous()" not in forward and "torch.empty(" not in forward
    call = forward.index(f"torch.ops.kerntailor.{name}(x, p_ln_weight, p_ln_bias)")
    # the op while torch.compile traces; its function in eager (the op's dispatch cost more than the launches)
    assert forward.index("if torch.compiler.is_compiling():") < call < forward.index(
        " = _launch_kernels(x, p_ln_weight, p_ln_bias)")
    assert "else:   # eager: the operator's function, without its dispatch" in forward
    assert forward.count("_launch_kernels(x, p_ln_weight, p_ln_bias)") == 1
    for check in ("x.dim() != 2", "!= d1:", ">= 2147483647", "requires_grad"):
        assert forward.index(check) < call, check
    fake = source.split("def _launch_kernels_fake(", 1)[1].split("\n\n\n", 1)[0]
    assert "torch.empty((d0, d1), device=x.device, dtype=torch.float32)" in fake and "[(" not in fake


def test_the_header_names_the_op_and_says_it_compiles():
    source = make_module(L1 / "layernorm.py").source
    header = source.split('"""', 2)[1]
    assert f"torch.ops.kerntailor.{_op_name(source)}" in header
    assert "torch.compile" in header and "CUDA graph" in header and "custom_op" in header


def test_the_op_takes_a_literal_scalar_the_host_lines_read_and_refuses_anything_else():
    from kerntailor.codegen.customop import op_signature
    from kerntailor.codegen.errors import CodegenUnsupported

    body = ["n = x.shape[0] * dim", "y = torch.empty((n,), device=x.device, dtype=torch.float32)",
            "k0_kernel[(triton.cdiv(n, 64),)](x, y, n, scale, BLOCK=64)"]
    sig = op_signature(["x"], body, {"torch", "triton", "k0_kernel"}, {"dim": "2", "scale": "0.5"}, ["y"])
    assert sig.tensors == ("x",) and sig.scalars == (("dim", "int"), ("scale", "float")) and sig.results == ("y",)
    with pytest.raises(CodegenUnsupported, match="read self, which"):
        op_signature(["x"], ["y = self.weight"], {"torch"}, {}, ["y"])
    with pytest.raises(CodegenUnsupported, match="read mode, which"):   # a string literal: not a scalar an op takes
        op_signature(["x"], ["y = x if mode else x"], {"torch"}, {"mode": "'mean'"}, ["y"])
    with pytest.raises(CodegenUnsupported, match="no output is computed"):
        op_signature(["x"], ["pass"], {"torch"}, {}, [])


def test_the_static_check_follows_the_op_into_its_implementation():
    from kerntailor.verify.static import static_check

    source = make_module(L1 / "layernorm.py").source
    assert static_check(source, problem_stem="layernorm", tensor_args=[True]) == []
    found = re.search(r"\n( {4,})k0_reduction_kernel\[", source)   # under its long-row branch's else
    launch, indent = found.start(), found.group(1)
    bad = source[:launch] + f"\n{indent}pw9.copy_(torch.layer_norm(x, (d1,), p_ln_weight, p_ln_bias))" + source[launch:]
    found = static_check(bad, problem_stem="layernorm", tensor_args=[True])
    assert [f.message for f in found] == ["calls torch.layer_norm on the forward path (a PyTorch op, not a kernel)"]


# --- interpreter: opcheck, torch.compile, two imports, the gradients that raise ----------------------------

SCRIPT = r"""
import importlib.util, json, shutil, sys, torch, torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # torch.compile reads a function's globals through its module
    spec.loader.exec_module(module)
    return module

kernel_path, ref_path, other_dir = sys.argv[1:4]
ref = load(ref_path, "reference")
kernel = load(kernel_path, "kernel")
shutil.copy(kernel_path, other_dir + "/kernel.py")
again = load(other_dir + "/kernel.py", "kernel_again")   # the same file from another folder: its op is registered
torch.manual_seed(0)
model = ref.Model(*ref.get_init_inputs())
new, new2 = kernel.ModelNew(*ref.get_init_inputs()), again.ModelNew(*ref.get_init_inputs())
new.load_state_dict(model.state_dict()); new2.load_state_dict(model.state_dict())
inputs = ref.get_inputs()
result = {}

class Calls(TorchDispatchMode):   # the op's calls, with the tensors forward() hands it
    def __init__(self):
        super().__init__(); self.calls = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "kerntailor":
            self.calls.append((func, args))
        return func(*args, **(kwargs or {}))

launched = []   # forward()'s calls of the op's function in eager, with the tensors it hands on

def recording(module):
    original = module._launch_kernels
    def wrapper(*a):
        launched.append(a)
        return original(*a)
    module._launch_kernels = wrapper   # forward() finds it in its module's globals at each call

recording(kernel); recording(again)
with torch.no_grad(), Calls() as seen:
    out = new(*inputs)
    out2 = new2(*inputs)
result["ops"] = [str(f) for f, _ in seen.calls]
result["launch_calls"] = len(launched)
result["two_imports_equal"] = bool(torch.equal(out, out2))
with torch.no_grad():
    result["forward_rel"] = ((out - model(*inputs)).norm() / model(*inputs).norm()).item()

named = [getattr(torch.ops.kerntailor, m.__doc__.split("torch.ops.kerntailor.")[1].split()[0].rstrip(".:,)")).default
         for m in (kernel, again)]
result["op_names"] = [str(o) for o in named]
op, args = named[0], launched[0]
args = tuple(a.detach() if isinstance(a, torch.Tensor) else a for a in args)
result["opcheck"] = {k: str(v) for k, v in torch.library.opcheck(op, args).items()}
first = args[0]
if first.dim() >= 2:   # forward() hands on whatever strides it was given: the op makes them contiguous
    strided = first.transpose(-1, -2).contiguous().transpose(-1, -2)
    assert not strided.is_contiguous() and torch.equal(strided, first)
    result["opcheck_strided"] = {k: str(v) for k, v in torch.library.opcheck(op, (strided,) + args[1:]).items()}

# a model holding ModelNew: a scale before it (so ModelNew's input requires grad), a nonlinearity after it
class Around(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(1.25, dtype=inputs[0].dtype))
        self.inner = inner
    def forward(self, x):
        return torch.tanh(self.inner(x * self.scale)) * 3.0

around = Around(new)
x = inputs[0]
eager = around(x)
explain = torch._dynamo.explain(around)(x)
result["graph_breaks"] = explain.graph_break_count
result["graphs"] = explain.graph_count
torch._dynamo.reset()
compiled = torch.compile(around, fullgraph=True, backend="aot_eager")
got = compiled(x)
result["compiled_forward_equal"] = bool(torch.equal(got, eager))
g = torch.randn_like(eager)
want = torch.autograd.grad(eager, list(around.parameters()), g)
have = torch.autograd.grad(got, list(around.parameters()), g)
result["compiled_grads_max_rel"] = max(((a - b).norm() / b.norm().clamp_min(1e-30)).item() for a, b in zip(have, want))
with torch.no_grad():
    result["compiled_no_grad_equal"] = bool(torch.equal(compiled(x), around(x)))

# the op alone has no autograd formula: a backward through it raises, never a wrong gradient
leaf = args[0].clone().requires_grad_()
try:
    op(leaf, *args[1:]).sum().backward()
    result["bare_op_backward"] = "no error"
except RuntimeError as e:
    result["bare_op_backward"] = str(e).splitlines()[0]

# the header's two raising gradients: an input changed in place before backward, a second-order gradient
a = x.clone().requires_grad_()
b = a * 1.0
y2 = new(b)
b.mul_(2.0)
try:
    y2.sum().backward()
    result["changed_in_place"] = "no error"
except RuntimeError as e:
    result["changed_in_place"] = str(e).splitlines()[0]
for key, extra in (("second_order", {}), ("second_order_unused", {"allow_unused": True, "materialize_grads": True})):
    c = x.clone().requires_grad_()
    (first_grad,) = torch.autograd.grad(new(c).pow(2).sum(), c, create_graph=True)
    try:
        torch.autograd.grad(first_grad.sum(), c, **extra)   # zeros or None here would be a wrong second order
        result[key] = "no error"
    except RuntimeError as e:
        result[key] = str(e).splitlines()[0]
print(json.dumps(result))
"""


def _run(tmp_path, problem) -> dict:
    module = make_module(problem)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    kernel = tmp_path / "a" / "kernel.py"
    kernel.write_text(module.source)
    (tmp_path / "check.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    run = subprocess.run([sys.executable, "check.py", str(kernel), str(problem), str(tmp_path / "b")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    result["name"] = _op_name(module.source)
    return result


FAMILIES = {"pointwise_chain": ["pointwise"], "softmax": ["reduction"], "layernorm": ["reduction"],
            "linear_gelu": ["matmul"], "cumsum": ["scan"], "avgpool": ["pool"], "conv_relu": ["library", "pointwise"],
            "attention": ["attention"]}
FP32 = {"linear_gelu", "attention"}   # fp32 problems (their writers take no fp64): fp32's tolerance


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_opcheck_compile_and_raising_gradients_on_each_family(tmp_path, name):
    from helpers import prepared

    problem = GRADS / f"{name}.py"
    assert [g.family for g in prepared(problem)[3].groups] == FAMILIES[name]   # the family this case stands for
    r = _run(tmp_path, problem)
    # both imports name the one op, which the file carries; the second import reused it. In eager forward()
    # calls the op's function, not the op (no dispatch: customop.call_lines); torch.compile traces the op (below)
    assert r["op_names"] == [f"kerntailor.{r['name']}.default"] * 2 and r["two_imports_equal"], r
    assert r["ops"] == [] and r["launch_calls"] == 2, r
    assert r["forward_rel"] <= (1e-5 if name in FP32 else 1e-12), r
    for key in ("opcheck",) + (("opcheck_strided",) if "opcheck_strided" in r else ()):
        assert set(r[key]) == OPCHECK_TESTS and set(r[key].values()) == {"SUCCESS"}, (key, r[key])
    assert "opcheck_strided" in r, r   # every input here has two axes or more
    assert r["graph_breaks"] == 0 and r["graphs"] == 1, r
    assert r["compiled_forward_equal"] and r["compiled_no_grad_equal"], r
    assert r["compiled_grads_max_rel"] <= (1e-5 if name in FP32 else 1e-12), r
    assert "no autograd formula" in r["bare_op_backward"], r
    assert "modified by an inplace operation" in r["changed_in_place"], r
    assert "first-order gradients only" in r["second_order"], r
    assert "first-order gradients only" in r["second_order_unused"], r


@pytest.mark.interpreter
@pytest.mark.slow
def test_the_guard_overhead_benchmark_runs_without_a_gpu_and_says_its_times_mean_nothing(tmp_path):
    """benchmarks/guard_overhead.py (run on the H200 for numbers): here it builds the module, finds its op, checks
    that forward, the op and the bare launches agree, and writes no time."""
    root = GRADS.parents[2]
    out = tmp_path / "overhead.json"
    env = dict(os.environ, PYTHONPATH=str(root / "src"), CUDA_VISIBLE_DEVICES="")
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "guard_overhead.py"), "--only", "relu",
                          "--out", str(out)], cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["meaningful"] is False and doc["toolchain"]["torch"] and doc["date"] and doc["command"]
    (row,) = doc["rows"]
    assert row["problem"] == "relu" and row["same_outputs"] is True and row["op"].startswith("kerntailor.relu_")
    assert row["timings"] == "not meaningful on CPU/interpreter"


PACKED_SCRIPT = r"""
import importlib.util, json, sys, torch
spec = importlib.util.spec_from_file_location("kernel", sys.argv[1]); kernel = importlib.util.module_from_spec(spec)
sys.modules["kernel"] = kernel; spec.loader.exec_module(kernel)
spec = importlib.util.spec_from_file_location("reference", sys.argv[2]); ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
torch.manual_seed(0)
model = ref.Model(*ref.get_init_inputs()); new = kernel.ModelNew(*ref.get_init_inputs())
new.load_state_dict(model.state_dict())
x = ref.get_inputs()[0]
with torch.no_grad():
    want, got = model(x), new(x)
    compiled = torch.compile(new, fullgraph=True, backend="aot_eager")(x)
op = getattr(torch.ops.kerntailor, kernel.__doc__.split("torch.ops.kerntailor.")[1].split()[0].rstrip(".:,)"))
print(json.dumps({"schema": str(op.default._schema), "equal": bool(torch.equal(got, want)),
                  "compiled_equal": bool(torch.equal(compiled, got))}))
"""


@pytest.mark.unit
def test_more_tensors_than_a_schema_takes_travel_as_one_list():
    """torch.library takes at most 64 arguments a schema (every level-3 ResNet's op had hundreds): past MAX_OP_ARGS
    the op takes its tensors as one list, unpacked in the first line of the implementation and the fake, and forward()
    passes the list; at or below it nothing changes."""
    from kerntailor.codegen.customop import MAX_OP_ARGS, PACKED, call_lines, op_lines, op_signature

    names = [f"t{i}" for i in range(MAX_OP_ARGS + 6)]
    body = ["out = " + " + ".join(names)]
    sig = op_signature(names, body, set(), {}, ["out"])
    assert sig.packed and sig.params == (PACKED,)
    text = "\n".join(op_lines(sig, body, ["out = torch.empty_like(t0)"]))
    assert f"({PACKED}: list[torch.Tensor]) -> torch.Tensor:" in text and f"_fake({PACKED}):" in text
    assert text.count(f"({', '.join(names)},) = {PACKED}") == 2
    assert all(line.endswith(f"([{', '.join(names)}])") for line in call_lines(sig)[1::2])
    few = op_signature(names[:MAX_OP_ARGS], ["out = " + " + ".join(names[:MAX_OP_ARGS])], set(), {}, ["out"])
    assert not few.packed and all(line.endswith(f"({', '.join(names[:MAX_OP_ARGS])})")
                                  for line in call_lines(few)[1::2])


@pytest.mark.interpreter
def test_a_module_with_seventy_parameters_loads_passes_the_referee_and_compiles(tmp_path):
    """The op of tests/data/customop/many_parameters.py takes 71 tensors: kernel.py imports (its schema is one
    Tensor[]), the referee passes it under the interpreter, and torch.compile(fullgraph) runs it through its fake."""
    from helpers import judge

    problem = DATA / "customop" / "many_parameters.py"
    module = make_module(problem)
    assert "_op_tensors: list[torch.Tensor]" in module.source
    verdict = judge(problem, module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"
    (tmp_path / "check.py").write_text(PACKED_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    run = subprocess.run([sys.executable, "check.py", str(tmp_path / "kernel.py"), str(problem)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    r = json.loads(run.stdout.strip().splitlines()[-1])
    assert "Tensor[] _op_tensors" in r["schema"] and r["equal"] and r["compiled_equal"], r
