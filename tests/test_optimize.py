"""`kerntailor optimize` / kerntailor.optimize on a tiny model under Triton's interpreter: a module is swapped
for a generated kernel (a torch.library custom op), the whole model still agrees with the original by the
referee's tolerance, the state_dict is the same, torch.compile sees no graph break, a sabotaged kernel is caught
and undone, groups that span modules are swapped in graph mode, a chain of sibling modules (LayerNorm then GELU) is
swapped as one, the report's cost per token has no number without a GPU, the model saved as a file is rebuilt in a
fresh process without kerntailor, and the CLI's mistakes are one line with exit 2.

One optimize run (module fixture, about 15 s: one generate under the interpreter) serves most tests; the
sabotage test reuses its store (the kernel is served from it, no search)."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from typer.testing import CliRunner

import kerntailor
from kerntailor.cli import app
from kerntailor.verify.tolerance import TOLERANCES, compare


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.norm(self.fc(x)))


class Tiny(nn.Module):
    def __init__(self, d=32, layers=2):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(d) for _ in range(layers)])
        self.head = nn.Linear(d, 16)

    def forward(self, x):
        return self.head(self.blocks(x))


def tiny_model():
    torch.manual_seed(0)
    return Tiny().eval(), [torch.randn(8, 32)]


CHILD = "KT_OPTIMIZE_CHILD"   # set in the fresh process test_the_interpreter_tests_in_a_fresh_process starts


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """The interpreter's environment. These tests run the kernels in this process, and Triton decides at its first
    import whether its own jitted helpers (tl.cdiv ...) are the interpreter's: a process that imported it without
    TRITON_INTERPRET=1 cannot interpret them ("Cannot call @triton.jit'd outside of the scope of a kernel"), and one
    that imported it with can compile nothing. So under xdist's workers, which run many files in one process, they
    run in a process of their own (the test below) and are skipped elsewhere."""
    if os.environ.get(CHILD) != "1":
        pytest.skip("runs in a fresh process under TRITON_INTERPRET=1 (test_the_interpreter_tests_in_a_fresh_process)")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_INTERPRET", "1")
        mp.setenv("KERNTAILOR_HOME", str(tmp_path_factory.mktemp("home")))
        yield mp


@pytest.fixture(scope="module")
def optimized(env, tmp_path_factory):
    model, inputs = tiny_model()
    result = kerntailor.optimize(model, inputs, target="h200", budget=4, top=3, candidates=1,
                                 out_dir=tmp_path_factory.mktemp("opt"))
    return model, inputs, result


def _agrees(out, ref64, policy="fp32"):
    c = compare(out, ref64, TOLERANCES[policy])
    return c.problem is None, c


@pytest.mark.integration
@pytest.mark.interpreter
def test_a_module_is_swapped_and_the_whole_model_agrees(optimized):
    model, _, result = optimized
    report = result.report
    swapped = report.swapped
    assert swapped, [(g.group, g.status, g.reason) for g in report.groups]
    assert all(g.kernel in ("generated", "cached") and g.verdict == "passed" and g.op for g in swapped)
    assert report.check is not None and report.check.passed and report.check.tolerance == "fp32"
    for g in (g for g in swapped if g.mode == "module"):
        module = result.model.get_submodule(g.module)
        assert type(module).__name__ == "Tailored" and g.op in repr(module)
        assert type(model.get_submodule(g.module)) is nn.Linear   # the user's model is left as it was
    x = torch.randn(8, 32)
    wide = Tiny().double()
    wide.load_state_dict(model.state_dict())
    with torch.no_grad():
        ok, c = _agrees(result.model(x), wide(x.double()))
    assert ok, c
    assert report.timing == {"note": "not measured: no GPU"}


@pytest.mark.integration
@pytest.mark.interpreter
def test_groups_that_span_modules_are_swapped_in_graph_mode(optimized):
    """LayerNorm + GELU + the residual add fuse into one group (the add is the block's own op: no module holds it):
    the model's forward runs the exported graph with its kernel, and the Linear's module-swapped kernel, in place."""
    from kerntailor.optimizing.graph import graph_forward

    model, _, result = optimized
    graph = [g for g in result.report.groups if g.mode == "graph"]
    assert len(graph) == 2 and all(g.status == "swapped" and g.op and g.module.startswith("(graph)") for g in graph)
    forward = graph_forward(result.model)
    assert forward is not None and len(forward.swaps) == len(result.report.swapped) and graph_forward(model) is None


@pytest.mark.integration
@pytest.mark.interpreter
def test_state_dict_keys_and_tensors_are_the_originals(optimized):
    model, _, result = optimized
    before, after = model.state_dict(), result.model.state_dict()
    assert list(before) == list(after)
    for k in before:
        assert after[k].data_ptr() == before[k].data_ptr() and torch.equal(after[k], before[k]), k
    fresh = Tiny()
    fresh.load_state_dict(result.model.state_dict())   # loads into the user's class as it is


@pytest.mark.integration
@pytest.mark.interpreter
def test_the_optimized_model_compiles_without_a_graph_break(optimized):
    _, inputs, result = optimized
    with torch.no_grad():
        explained = torch._dynamo.explain(result.model)(*inputs)
        assert explained.graph_break_count == 0, explained.break_reasons
        compiled = torch.compile(result.model, backend="aot_eager", fullgraph=True)
        assert torch.equal(compiled(*inputs), result.model(*inputs))


@pytest.mark.integration
@pytest.mark.interpreter
def test_a_sabotaged_kernel_is_caught_and_undone(optimized, monkeypatch, tmp_path):
    """The same run again (its kernel served from the store), with the generated forward adding 1."""
    from kerntailor.optimizing import run

    load = run.load_kernel

    def sabotaged(path):
        kernel, op = load(path)
        forward = kernel.forward

        @functools.wraps(forward)   # the same signature: only the values are wrong
        def plus_one(*args):   # to one column: a constant on all would vanish in the LayerNorm after the Linear
            out = forward(*args).clone()
            out[..., 0] += 1
            return out

        kernel.forward = plus_one
        return kernel, op

    monkeypatch.setattr(run, "load_kernel", sabotaged)
    model, inputs = tiny_model()
    result = kerntailor.optimize(model, inputs, target="h200", budget=4, top=3, candidates=1, out_dir=tmp_path)
    undone = [g for g in result.report.groups if g.status == "undone"]
    assert undone and not result.report.swapped, result.report.groups
    assert all(g.kernel == "cached" and g.verdict == "passed" for g in undone)   # from the store: the first run's
    assert all("whole-model check failed" in g.reason and "‖out−ref‖/‖ref‖" in g.reason for g in undone), undone
    assert result.report.check is None
    for g in (g for g in undone if g.mode == "module"):
        assert type(result.model.get_submodule(g.module)) is nn.Linear
    assert "forward" not in vars(result.model)   # no graph left: every graph swap was undone too
    with torch.no_grad():
        assert torch.equal(result.model(*inputs), model(*inputs))


@pytest.mark.integration
@pytest.mark.interpreter
def test_report_is_plain_json_and_a_table(optimized):
    from rich.console import Console

    from kerntailor.optimizing.render import optimize_dict, optimize_table

    _, _, result = optimized
    doc = json.loads(json.dumps(optimize_dict(result.report)))
    assert doc["swapped"] == len(result.report.swapped) and doc["check"]["passed"]
    assert {g["status"] for g in doc["groups"]} <= {"swapped", "skipped", "undone"}
    console = Console(width=200, record=True)
    console.print(optimize_table(result.report))
    text = console.export_text()
    assert "swapped" in text and "not measured: no GPU" in text and "passed" in text
    assert doc["cost"]["tokens_per_call"] == 8 and doc["cost"]["price"]["usd_per_hour"] > 0
    assert all(r["note"] == "not measured: no GPU" and r["usd_per_million_tokens"] is None
               for r in doc["cost"]["rows"])


def _tiny_problem(path: Path) -> Path:
    """Tiny's own classes as a KernelBench file (its Model is Tiny): the user's class that save rebuilds from."""
    import inspect

    path.write_text("import torch\nfrom torch import nn\n\n\n" + inspect.getsource(Block) + "\n\n"
                    + inspect.getsource(Tiny) + "\n\nModel = Tiny\n\n\ndef get_inputs():\n"
                    "    return [torch.randn(8, 32)]\n")
    return path


SAVED_CHILD = """
import sys
sys.modules["kerntailor"] = None   # the saved file must not need it
sys.path.insert(0, sys.argv[1])
import torch
import optimized_model
model = optimized_model.build("cpu")
with torch.no_grad():
    torch.save(model(torch.load(sys.argv[2])), sys.argv[3])
graph = vars(model).get("forward")
print(sum(type(m).__name__ == "Swapped" for m in model.modules()), len(graph.graph._modules) if graph else 0,
      model.training)
"""


@pytest.mark.integration
@pytest.mark.interpreter
def test_the_saved_file_rebuilds_the_optimized_model_in_a_fresh_process(optimized, tmp_path):
    """OptimizeResult.save: a file importing torch, triton and the parts beside it; a fresh process without
    kerntailor builds the model from the user's class and the state_dict and gives the optimized model's outputs.
    In graph mode: the graph (graph.py), its kernels and constants beside the module swaps' kernels."""
    from kerntailor.optimizing.graph import graph_forward

    _, _, result = optimized
    with pytest.raises(kerntailor.KerntailorError, match="problem_file="):
        result.save(tmp_path / "no_file.py")   # optimize_model's result: which class to build is not known
    other = tmp_path / "other.py"
    other.write_text(TINY_FILE)
    with pytest.raises(kerntailor.KerntailorError, match="other state_dict keys"):
        result.save(tmp_path / "wrong.py", problem_file=other)
    saved = result.save(tmp_path / "out" / "optimized_model.py", problem_file=_tiny_problem(tmp_path / "tiny.py"))
    parts = sorted(p.name for p in (saved.parent / "optimized_model_parts").iterdir())
    modules = sum(g.mode == "module" for g in result.report.swapped)
    kernels = [f"kernel_{i:02d}.py" for i in range(1, modules + 1)]
    graph = [f"graph_kernel_{i:02d}.py" for i in range(1, len(graph_forward(result.model).swaps) + 1)]
    assert parts == sorted(kernels + graph + ["graph.py", "graph_constants.pt", "model.py", "state_dict.pt"]), parts
    _saved_run(saved, result, tmp_path)


def _saved_run(saved: Path, result, tmp_path: Path) -> None:
    """The saved model, built in a fresh process without kerntailor, gives the optimized model's outputs."""
    x = torch.randn(8, 32)
    torch.save(x, tmp_path / "x.pt")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    child = subprocess.run([sys.executable, "-c", SAVED_CHILD, str(saved.parent), str(tmp_path / "x.pt"),
                            str(tmp_path / "y.pt")], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    from kerntailor.optimizing.graph import graph_forward

    graph = graph_forward(result.model)
    expected = [sum(g.mode == "module" for g in result.report.swapped), len(graph.swaps) if graph else 0]
    assert child.stdout.split() == [*map(str, expected), str(result.model.training)], child.stdout
    with torch.no_grad():
        assert torch.equal(torch.load(tmp_path / "y.pt"), result.model(x))


TINY_FILE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU())
        self.head = nn.Linear(d, 16)

    def forward(self, x):
        return self.head(self.mlp(x))


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return [32]
'''


@pytest.mark.parametrize("args,needle", [
    (["{missing}"], "no such file"),
    (["{tiny}", "--top", "0"], "--top"),
    (["{tiny}", "--budget", "-1"], "--budget"),
    (["{tiny}", "--target", "no-such-gpu"], "unknown target"),
    (["{tiny}", "--out", "{tiny}"], "not a directory"),
    (["{tiny}", "--price-per-hour", "0"], "--price-per-hour"),
    (["{tiny}", "--tokens-per-call", "0"], "--tokens-per-call"),
    (["{tiny}", "--save", "{tiny}.txt"], "--save"),
])
def test_cli_mistakes_are_one_line(tmp_path, args, needle):
    tiny = tmp_path / "tiny.py"
    tiny.write_text(TINY_FILE)
    paths = {"tiny": tiny, "missing": tmp_path / "missing.py"}
    result = CliRunner().invoke(app, ["optimize", *[a.format(**paths) for a in args]])
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kerntailor: error: ") and needle in lines[0], lines


@pytest.mark.integration
@pytest.mark.interpreter
@pytest.mark.slow
def test_cli_optimizes_a_model_file(env, tmp_path):
    """About 15 s: one generate under the interpreter."""
    tiny = tmp_path / "tiny.py"
    tiny.write_text(TINY_FILE)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["optimize", str(tiny), "--target", "h200", "--top", "1", "--budget", "4",
                                      "--candidates", "1", "--out", str(out), "--json", "--price-per-hour", "2",
                                      "--save", str(tmp_path / "saved.py")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["swapped"] == 1 and doc["groups"][0]["module"] == "mlp" and doc["check"]["passed"], doc
    assert doc["cost"]["price"] == {"usd_per_hour": 2.0, "source": "given by the user", "date": "", "assumed": False}
    assert doc["saved"] == str(tmp_path / "saved.py") and (tmp_path / "saved_parts" / "kernel_01.py").is_file()
    assert (tmp_path / "saved_parts" / "model.py").read_text() == TINY_FILE   # the user's file, as it is
    assert json.loads((out / "optimize.json").read_text())["groups"] == doc["groups"]


def _chain_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 32), nn.LayerNorm(32), nn.GELU()).eval(), [torch.randn(8, 32)]


def _scopes(model, inputs):
    from kerntailor.optimizing.scope import group_scope
    from kerntailor.profiling import profile_model_traced
    from kerntailor.profiling.extract import owners

    traced = profile_model_traced(model, inputs, target="h200")
    owner, by_name = owners(traced.traced, traced.plan.groups), {g.name: g for g in traced.plan.groups}
    return {r.family: group_scope(traced.traced, by_name[r.name], owner, r.module, r.modules)
            for r in traced.profile.groups}


@pytest.mark.capture
def test_a_chain_of_sibling_modules_is_one_scope_and_swaps_as_one():
    """LayerNorm then GELU (one reduction group) is a chain: the kernel at the LayerNorm, the GELU passed through,
    both modules' parameters where they were. A stand-in kernel (PyTorch's own ops) takes the generated one's
    place: the mechanics, without the interpreter."""
    import torch.nn.functional as F

    from kerntailor.optimizing.scope import ARG
    from kerntailor.optimizing.swap import PassThrough, Tailored, install_scope, same_state, share_copy, undo_scope

    model, inputs = _chain_model()
    scopes = _scopes(model, inputs)
    chain = scopes["reduction"]
    assert chain.modules == ("1", "2") and chain.args == 1, chain
    assert scopes["matmul"].modules == ("0",)
    order = [s.name if s.kind == ARG else s.state for s in chain.slots]

    class StandIn(nn.Module):
        def forward(self, *tensors):
            named = dict(zip(order, tensors))
            x = next(t for name, t in named.items() if name not in ("weight", "bias"))
            return F.gelu(F.layer_norm(x, (32,), named["weight"], named["bias"]))

    optimized = share_copy(model)
    optimized, originals = install_scope(optimized, chain, StandIn(), "stand_in")
    assert isinstance(optimized[1], Tailored) and isinstance(optimized[2], PassThrough)
    assert same_state(model.state_dict(), optimized.state_dict()) == ""
    with torch.no_grad():
        assert torch.allclose(optimized(*inputs), model(*inputs), rtol=1e-6, atol=1e-6)
    optimized.train()   # not the mode it was swapped in: the modules' own forwards run, the stand-in does not
    calls = []
    originals[0].register_forward_hook(lambda *a: calls.append("own"))
    with torch.no_grad():
        assert torch.equal(optimized(*inputs), model.train()(*inputs)) and calls == ["own"]
    undo_scope(optimized, chain, originals)
    assert type(optimized[1]) is nn.LayerNorm and type(optimized[2]) is nn.GELU


@pytest.mark.integration
@pytest.mark.interpreter
@pytest.mark.slow
def test_a_generated_chain_kernel_is_swapped(env, tmp_path):
    """About 15 s: a reduction kernel generated and judged under the interpreter."""
    model, inputs = _chain_model()
    result = kerntailor.optimize(model, inputs, target="h200", budget=4, top=1, candidates=1, out_dir=tmp_path)
    (group,) = result.report.groups
    assert group.status == "swapped" and group.module == "1 + 2", group
    assert result.report.check.passed
    problem = tmp_path / "chain.py"   # the chain's kernel and pass-through saved and rebuilt in a fresh process
    problem.write_text("import torch\nfrom torch import nn\n\n\nclass Model(nn.Sequential):\n"
                       "    def __init__(self):\n"
                       "        super().__init__(nn.Linear(32, 32), nn.LayerNorm(32), nn.GELU())\n")
    _saved_run(result.save(tmp_path / "saved" / "optimized_model.py", problem_file=problem), result, tmp_path)


@pytest.mark.capture
def test_a_linear_on_a_3d_input_is_its_group_then_a_view():
    """A Linear on (batch, tokens, d) exports as view, addmm, view; the last view belongs to no group. The module
    is still the group's (the kernel returns the 2-d product, Tailored views it to the module's result)."""
    from kerntailor.optimizing.scope import ARG
    from kerntailor.optimizing.swap import install_scope, share_copy

    torch.manual_seed(0)
    model, inputs = nn.Sequential(nn.Linear(32, 48), nn.LayerNorm(48)).eval(), [torch.randn(2, 4, 32)]
    scope = _scopes(model, inputs)["matmul"]
    assert scope.modules == ("0",) and scope.reshape == (2, 4, 48), scope
    order = [s.name if s.kind == ARG else s.state for s in scope.slots]

    class StandIn(nn.Module):   # what the generated kernel computes: the 2-d product of the flattened input
        def forward(self, *tensors):
            named = dict(zip(order, tensors))
            x = next(t for name, t in named.items() if name not in ("weight", "bias"))
            return x.reshape(-1, 32) @ named["weight"].T + named["bias"]

    optimized = share_copy(model)
    install_scope(optimized, scope, StandIn(), "stand_in")
    with torch.no_grad():
        assert torch.allclose(optimized(*inputs), model(*inputs), rtol=1e-5, atol=1e-5)


def test_the_whole_model_check_judges_by_the_referee_table_and_leaves_buffers_alone():
    """check.Reference with no kernel involved: the right row of the table, a wrong model caught, one that raises
    caught with its error, a mapping result compared by its values, BatchNorm's running statistics untouched."""
    from kerntailor.optimizing.check import Reference

    class Net(nn.Module):
        def __init__(self, dtype=torch.float32):
            super().__init__()
            self.fc, self.bn = nn.Linear(8, 8).to(dtype), nn.BatchNorm1d(8).to(dtype)

        def forward(self, x):
            return {"y": self.bn(self.fc(x))}

    torch.manual_seed(0)
    net = Net().train()
    stats = net.bn.running_mean.clone(), net.bn.num_batches_tracked.clone()
    ref = Reference(net, [torch.randn(16, 8)])
    assert ref.tolerance.policy == "fp32" and ref.check(net).passed
    assert torch.equal(net.bn.running_mean, stats[0]) and torch.equal(net.bn.num_batches_tracked, stats[1])

    class Off(nn.Module):
        def forward(self, x):
            y = net(x)["y"].clone()
            y[0, 0] += 1e-3
            return {"y": y}

    failed = ref.check(Off())
    assert not failed.passed and "draw 0, output 0" in failed.reason

    class Raises(nn.Module):
        def forward(self, x):
            raise ValueError("x.shape[0] is 16: this kernel was generated for x.shape[0] == 8")

    raised = ref.check(Raises())
    assert not raised.passed and "ValueError: x.shape[0] is 16" in raised.reason
    assert Reference(Net(torch.bfloat16).eval(), [torch.randn(16, 8, dtype=torch.bfloat16)]).tolerance.policy == "bf16"


def test_the_end_to_end_line_says_what_was_measured_and_never_invents_a_time():
    from kerntailor.optimizing.check import NO_GPU, end_to_end
    from kerntailor.optimizing.render import timing_line

    measured = {"label": "measured on H200", "seconds": {"eager": 2e-3, "compile": 1.5e-3, "optimized": 1e-3},
                "speedup": {"optimized_vs_eager": 2.0, "optimized_vs_compile": 1.5},
                "errors": {"optimized_compile": "BackendCompilerFailed: x"}}
    line = timing_line(measured)
    assert "eager 2.000 ms" in line and "optimized vs compile 1.50x" in line and "optimized_compile failed" in line
    if not torch.cuda.is_available():
        assert end_to_end(nn.Linear(2, 2), nn.Linear(2, 2), [torch.randn(1, 2)]) == {"note": NO_GPU}
        assert timing_line({"note": NO_GPU}) == "end to end: not measured: no GPU"


@pytest.mark.capture
def test_a_group_that_is_the_whole_models_forward_swaps_the_model():
    """A KernelBench-style model of one kernel (Linear, then ops in the model's own forward): the returned model
    is the Tailored one, with the model's parameters under their names; undoing gives the model back."""
    from kerntailor.optimizing.scope import ARG
    from kerntailor.optimizing.swap import Tailored, install_scope, same_state, share_copy, undo_scope

    class OneKernel(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(32, 32)

        def forward(self, x):
            return torch.relu(self.linear(x)) * 2

    torch.manual_seed(0)
    model, inputs = OneKernel().eval(), [torch.randn(8, 32)]
    (scope,) = _scopes(model, inputs).values()
    assert scope.modules == ("",) and scope.label == "(the whole model)", scope
    order = [s.name if s.kind == ARG else s.state for s in scope.slots]
    assert set(order) >= {"linear.weight", "linear.bias"}, order

    class StandIn(nn.Module):
        def forward(self, *tensors):
            named = dict(zip(order, tensors))
            x = next(t for name, t in named.items() if not name.startswith("linear."))
            return torch.relu(x @ named["linear.weight"].T + named["linear.bias"]) * 2

    optimized = share_copy(model)
    swapped, originals = install_scope(optimized, scope, StandIn(), "stand_in")
    assert isinstance(swapped, Tailored) and same_state(model.state_dict(), swapped.state_dict()) == ""
    with torch.no_grad():
        assert torch.allclose(swapped(*inputs), model(*inputs), rtol=1e-5, atol=1e-5)
    assert undo_scope(swapped, scope, originals) is optimized


@pytest.mark.integration
@pytest.mark.interpreter
def test_the_interpreter_tests_in_a_fresh_process():
    """The tests that run kernels in process (the `env` fixture's), in a child that imports Triton under
    TRITON_INTERPRET=1 first: every one of them must pass there."""
    if os.environ.get(CHILD) == "1":
        pytest.skip("this is the child")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, CHILD: "1", "TRITON_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root / "tests"), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "interpreter",
                            str(Path(__file__))], capture_output=True, text=True, cwd=root, env=env, timeout=1800)
    tail = child.stdout[-3000:] + child.stderr[-1000:]
    summary = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else ""
    passed = re.search(r"(\d+) passed", summary)
    assert child.returncode == 0 and passed and int(passed.group(1)) >= 8 and "failed" not in summary, tail


STAND_IN_KERNEL = '''
import torch
import torch.nn.functional as F
from torch import nn

ORDER = {order!r}   # the kernel's arguments as the scope orders them: the module's argument, then state by name


class ModelNew(nn.Module):
    def forward(self, *tensors):
        named = dict(zip(ORDER, tensors))
        x = named.pop("x")
        return {body}
'''


@pytest.mark.capture
@pytest.mark.parametrize("case", ["whole_model", "linear_3d"])
def test_save_redoes_a_whole_model_swap_and_a_reshaped_one(tmp_path, case):
    """save.py without the interpreter: a stand-in kernel.py (PyTorch's own ops, in the order the scope gives the
    kernel its arguments) swapped in, saved and rebuilt: the whole model as the swapped module (module ""), and a
    Linear on a 3-d input (the kernel's 2-d result viewed back). The fresh-process test above covers the rest."""
    import importlib.util

    from kerntailor.optimizing.save import save_model
    from kerntailor.optimizing.scope import ARG
    from kerntailor.optimizing.swap import install_scope, load_kernel, share_copy

    sources = {
        "whole_model": ("class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                        "        self.linear = nn.Linear(32, 32)\n\n    def forward(self, x):\n"
                        "        return torch.relu(self.linear(x)) * 2\n", [torch.randn(8, 32)], "",
                        "torch.relu(x @ named['linear.weight'].T + named['linear.bias']) * 2"),
        "linear_3d": ("class Model(nn.Sequential):\n    def __init__(self):\n"
                      "        super().__init__(nn.Linear(32, 48), nn.LayerNorm(48))\n", [torch.randn(2, 4, 32)], "0",
                      "x.reshape(-1, 32) @ named['weight'].T + named['bias']"),
    }
    text, inputs, module, body = sources[case]
    problem = tmp_path / "problem.py"
    problem.write_text("import torch\nfrom torch import nn\n\n\n" + text)
    spec = importlib.util.spec_from_file_location(f"save_case_{case}", problem)
    user = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(user)
    torch.manual_seed(0)
    model = user.Model().eval()
    (scope,) = [s for s in _scopes(model, inputs).values() if not isinstance(s, str) and s.module == module]
    order = ["x" if s.kind == ARG else s.state for s in scope.slots]
    kernel_file = tmp_path / "kernel.py"
    kernel_file.write_text(STAND_IN_KERNEL.format(order=order, body=body))
    optimized, _ = install_scope(share_copy(model), scope, *load_kernel(kernel_file))
    saved = save_model(optimized, tmp_path / "out" / "fast.py", problem, name=case)
    spec = importlib.util.spec_from_file_location(f"saved_{case}", saved)
    fast = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fast)
    rebuilt = fast.build("cpu")
    assert type(rebuilt if not module else rebuilt.get_submodule(module)).__name__ == "Swapped"
    assert list(rebuilt.state_dict()) == list(model.state_dict()) and not rebuilt.training
    with torch.no_grad():
        assert torch.equal(rebuilt(*inputs), optimized(*inputs))
        assert torch.allclose(rebuilt(*inputs), model(*inputs), rtol=1e-5, atol=1e-5)


@pytest.mark.unit
def test_optimize_swaps_a_kept_module_that_lost_only_to_torch_compile(tmp_path):
    """A group whose generated module passed the referee but lost to torch.compile of the group (generate keeps the
    library path and generated.py) is swapped when it beat eager: the optimized model runs that group in eager. Not
    when it lost to eager too, nor when it failed the referee (no lost_on_time), nor without the kept file."""
    from types import SimpleNamespace

    from kerntailor.optimizing.run import kept_faster_than_eager

    (tmp_path / "generated.py").write_text("# kept\n")
    result = SimpleNamespace(lost_on_time=True, kernel_path=tmp_path / "kernel.py")

    def verdict(cand, eager, compiled):
        return {"timing": {"timings": [{"name": "candidate", "median_s": cand}, {"name": "eager", "median_s": eager},
                                       {"name": "compile", "median_s": compiled}]}}

    assert kept_faster_than_eager(result, verdict(69.7e-6, 479e-6, 68.2e-6)) == tmp_path / "generated.py"
    assert kept_faster_than_eager(result, verdict(69.7e-6, 60e-6, 68.2e-6)) is None
    assert kept_faster_than_eager(SimpleNamespace(lost_on_time=False, kernel_path=result.kernel_path),
                                  verdict(69.7e-6, 479e-6, 68.2e-6)) is None
    (tmp_path / "generated.py").unlink()
    assert kept_faster_than_eager(result, verdict(69.7e-6, 479e-6, 68.2e-6)) is None
