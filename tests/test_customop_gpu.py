"""GPU tier of kernel.py's custom op (issue 17 item 4; the CPU tier is test_customop.py): a model holding a
generated ModelNew under torch.compile with the default backend (inductor, fullgraph), the module's launches
captured in a CUDA graph and replayed on new input data, and torch.compile(mode="reduce-overhead") (inductor's
CUDA graphs): each gives eager's outputs. One problem per family generate emits, from tests/data/grads (tiny shapes:
the whole file runs in seconds once Triton's cache is warm). Skipped where torch sees no GPU."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from helpers import DATA, make_module

GRADS = DATA / "grads"
NAMES = ["pointwise_chain", "softmax", "layernorm", "linear_gelu", "cumsum", "avgpool", "conv_relu"]


def _tolerance(dtype) -> dict:
    import torch

    return {"rtol": 1e-12, "atol": 1e-12} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-5}


def _setup(tmp_path, name: str):
    """(reference module, ModelNew on the GPU with Model's state, the problem's inputs on the GPU)."""
    import torch

    problem = GRADS / f"{name}.py"
    path = tmp_path / f"kernel_{name}.py"
    path.write_text(make_module(problem).source)
    modules = []
    for file, label in ((problem, f"customop_gpu_ref_{name}"), (path, f"customop_gpu_kernel_{name}")):
        spec = importlib.util.spec_from_file_location(label, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[label] = module   # torch.compile reads a function's globals through its module
        spec.loader.exec_module(module)
        modules.append(module)
    ref, kernel = modules
    torch.manual_seed(0)
    model = ref.Model(*ref.get_init_inputs())
    new = kernel.ModelNew(*ref.get_init_inputs())
    new.load_state_dict(model.state_dict())
    return ref, new.cuda(), [x.cuda() for x in ref.get_inputs()]


def _around(inner, dtype):
    """A model holding ModelNew: a learned scale before it (its input requires grad), a nonlinearity after."""
    import torch
    import torch.nn as nn

    class Around(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.tensor(1.25, dtype=dtype))
            self.inner = inner

        def forward(self, x):
            return torch.tanh(self.inner(x * self.scale)) * 3.0

    return Around().cuda()


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_gpu_inductor_fullgraph_equals_eager(tmp_path, name):
    import torch

    _, new, inputs = _setup(tmp_path, name)
    x = inputs[0]
    around = _around(new, x.dtype)
    eager = around(x)
    g = torch.randn_like(eager)
    want = torch.autograd.grad(eager, list(around.parameters()), g)
    torch._dynamo.reset()
    compiled = torch.compile(around, fullgraph=True)   # inductor
    got = compiled(x)
    torch.testing.assert_close(got, eager, **_tolerance(x.dtype))
    have = torch.autograd.grad(got, list(around.parameters()), g)
    for a, b in zip(have, want):
        torch.testing.assert_close(a, b, **_tolerance(x.dtype))
    with torch.no_grad():
        torch.testing.assert_close(compiled(x * 0.5), around(x * 0.5), **_tolerance(x.dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_gpu_cuda_graph_replay_on_new_data_equals_eager(tmp_path, name):
    import torch

    _, new, inputs = _setup(tmp_path, name)
    static = [x.clone() for x in inputs]
    with torch.no_grad():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):   # warm up (compiles the kernels) off the capture
            for _ in range(2):
                new(*static)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = new(*static)
        for seed in (1, 2):
            torch.manual_seed(seed)
            fresh = [torch.randn_like(x) for x in inputs]
            for s, f in zip(static, fresh):
                s.copy_(f)
            graph.replay()
            torch.cuda.synchronize()
            # stale inputs or outputs would be off by O(1); a library call (cuDNN) may pick another algorithm
            torch.testing.assert_close(out, new(*fresh), **_tolerance(out.dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_gpu_reduce_overhead_equals_eager(tmp_path, name):
    import torch

    _, new, inputs = _setup(tmp_path, name)
    torch._dynamo.reset()
    compiled = torch.compile(new, mode="reduce-overhead", fullgraph=True)
    with torch.no_grad():
        for seed in (1, 2, 3):   # the first calls record the graph, the later ones replay it
            torch.manual_seed(seed)
            fresh = [torch.randn_like(x) for x in inputs]
            got = compiled(*fresh).clone()
            torch.testing.assert_close(got, new(*fresh), **_tolerance(fresh[0].dtype))
