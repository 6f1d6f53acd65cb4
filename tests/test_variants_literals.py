"""Variants of files whose sizes are not (only) module-level integer constants: literals in get_inputs(),
get_init_inputs() and module-level tuples (problem/literals.py, problem/slots.py), sizes that must move
together, a batch below MIN_SIZE as the only size; and constructors that read tensor values (built on the
CPU, then moved to meta). Each file is loaded on meta tensors: seconds in all."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from kerntailor.capture import capture_problem
from kerntailor.errors import ProblemError
from kerntailor.problem import Variant, load_problem
from kerntailor.problem.literals import compile_with_literals, literal_slots
from kerntailor.problem.variants import SMALL_NUMEL


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def odd_not_pow2(n: int) -> bool:
    return n % 2 == 1 and n & (n - 1) != 0


def input_shapes(spec, variant: str) -> list[tuple[int, ...]]:
    return [tuple(t.shape) for t in spec.make_inputs(variant) if isinstance(t, torch.Tensor)]


LITERAL_INPUTS = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, labels):
        return torch.softmax(x, dim=1) * labels.unsqueeze(1)


def get_inputs():
    return [torch.rand(4096, 8192), torch.randint(0, 1000, (4096,)).float()]


def get_init_inputs():
    return []
"""


def test_sizes_written_as_literals_in_get_inputs(tmp_path):
    spec = load_problem(write(tmp_path, "literal_inputs", LITERAL_INPUTS))
    assert [v.name for v in spec.variants] == ["default", "small", "odd"]
    small, odd = spec.variant("small"), spec.variant("odd")
    assert not small.overrides and small.literals and not odd.overrides
    assert max(s[0] * s[1] for s in input_shapes(spec, "small")[:1]) <= SMALL_NUMEL
    (rows, cols), (labels,) = input_shapes(spec, "odd")
    assert labels == rows, "4096 is written twice: both literals move together"
    assert odd_not_pow2(rows) and odd_not_pow2(cols)
    # randint's bound 1000 sizes no tensor: never a slot, its literal is never rewritten
    source_lines = spec.source.splitlines()
    for key, _ in small.literals + odd.literals:
        line, col = map(int, key.split(":"))
        assert not source_lines[line - 1][col:].startswith("1000"), key
    first_line = spec.module("default").get_inputs.__code__.co_firstlineno
    assert first_line == spec.module("odd").get_inputs.__code__.co_firstlineno


LITERAL_INIT = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(128, 1024)]


def get_init_inputs():
    return [1024, 2048]
"""


@pytest.mark.capture
def test_sizes_written_as_literals_in_get_init_inputs(tmp_path):
    spec = load_problem(write(tmp_path, "literal_init", LITERAL_INIT))
    for name in ("small", "odd"):
        v = spec.variant(name)
        model = spec.make_model(v)
        (x,) = spec.make_inputs(v)
        assert model.linear.in_features == x.shape[1], "1024 in both functions moves together"
        assert model.linear.weight.numel() <= 4 * SMALL_NUMEL
        assert spec.init_inputs(v)[0] == x.shape[1]
    x_odd = input_shapes(spec, "odd")[0]
    assert any(odd_not_pow2(s) for s in x_odd), x_odd
    capture_problem(spec, "odd")  # every variant captures


HINGE = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size,)).float() * 2 - 1]


def get_init_inputs():
    return []
"""


def test_sizes_that_must_move_together(tmp_path):
    """batch_size must equal input_shape[0] (the product broadcasts (B, N) with (B,)): moved as one."""
    spec = load_problem(write(tmp_path, "hinge", HINGE))
    for name in ("small", "odd"):
        v = spec.variant(name)
        (b, n), (t,) = input_shapes(spec, name)
        assert b == n == t == dict(v.overrides)["batch_size"]
        assert len(v.literals) == 1 and v.literals[0][1] == b  # input_shape's 32768
    assert input_shapes(spec, "small")[0][0] ** 2 <= SMALL_NUMEL
    assert odd_not_pow2(input_shapes(spec, "odd")[0][0])


FIXED_MODEL = """
import torch
import torch.nn as nn

batch_size = 10


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4096, 4096)
        self.scale = torch.linspace(0, 1, 4)[1].item()  # reads a value: cannot run on meta tensors

    def forward(self, x):
        return self.proj(x) * self.scale


def get_inputs():
    return [torch.randn(batch_size, 4096)]


def get_init_inputs():
    return []
"""


@pytest.mark.capture
def test_a_batch_below_min_size_is_the_only_size(tmp_path):
    """Nothing of size can move (the model fixes 4096): the batch of 10, which sizes the inputs and no parameter,
    is halved for small and made odd for odd. The constructor reads `.item()`: built on the CPU, then meta."""
    spec = load_problem(write(tmp_path, "fixed_model", FIXED_MODEL))
    assert [(v.name, dict(v.overrides)) for v in spec.variants[1:]] == [("small", {"batch_size": 5}),
                                                                       ("odd", {"batch_size": 9})]
    model = spec.make_model("odd")
    assert model.proj.weight.is_meta and model.proj.weight.shape == (4096, 4096)
    assert model.scale == pytest.approx(1 / 3)
    graph = capture_problem(spec, "odd").graph
    assert [i.type.shape for i in graph.inputs if i.kind == "input"] == [(9, 4096)]


def test_a_constructor_that_fails_on_cpu_too_is_one_line(tmp_path):
    source = FIXED_MODEL.replace("torch.linspace(0, 1, 4)[1].item()", "torch.linspace(0, 1, 4)[9].item()")
    with pytest.raises(ProblemError) as info:
        load_problem(write(tmp_path, "bad_item", source))
    assert "\n" not in str(info.value) and "IndexError" in str(info.value)


def test_literal_slots_skip_names_overridden_by_name():
    source = textwrap.dedent("""
        n = 4096
        shape = (n, 64)
        pair = [128, 3]
        def get_inputs():
            return [torch.rand(n, 512)]
        def helper():
            return 999
    """)
    slots = literal_slots(source, {"n"})
    assert [(s.value, s.where) for s in slots] == [(64, "shape"), (128, "pair"), (3, "pair"), (512, "get_inputs")]
    assert slots[-1].key == "6:26"


def test_compile_with_literals_rewrites_exactly_those_positions():
    source = "a = (16, 16)\nb = 16\n"
    namespace: dict = {}
    exec(compile_with_literals(source, "f.py", {"1:9": 5}), namespace)
    assert namespace["a"] == (16, 5) and namespace["b"] == 16
    with pytest.raises(KeyError):
        compile_with_literals(source, "f.py", {"1:7": 5})  # a comma, not a literal


def test_a_variant_for_another_source_is_one_line(tmp_path):
    spec = load_problem(write(tmp_path, "literal_init", LITERAL_INIT))
    with pytest.raises(ProblemError) as info:
        spec.make_inputs(Variant("stale", (), (("1:0", 3),)))
    assert "1:0" in str(info.value) and "\n" not in str(info.value)


def test_variant_is_frozen_and_describes_itself():
    v = Variant("odd", (("batch_size", 9),), (("12:31", 127),))
    assert not v.is_default and Variant("default").is_default
    assert v.describe() == "batch_size=9, 12:31=127"
    assert hash(v) == hash(Variant("odd", (("batch_size", 9),), (("12:31", 127),)))
    with pytest.raises(AttributeError):
        v.name = "x"  # type: ignore[misc]


DEEP_MLP = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers, current = [], input_size
        for hidden in hidden_layer_sizes:
            layers += [nn.Linear(current, hidden), nn.ReLU()]
            current = hidden
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


batch_size = 64
input_size = 1024
hidden_layer_sizes = [1024] * 10
output_size = 1024


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
"""


def test_many_tensors_too_many_elements_take_the_literal_sizes_too(tmp_path):
    # the constants shrink input, output and batch, but the ten 1024 x 1024 hidden weights in a module-level list
    # (10.5 M elements, none over TOO_LARGE) stay: their total sends the derivation to the file's literals as well
    from kerntailor.problem.variants import TOO_LARGE_TOTAL

    spec = load_problem(write(tmp_path, "deep_mlp", DEEP_MLP))
    for name in ("small", "odd"):
        model = spec.make_model(name)
        total = sum(p.numel() for p in model.parameters()) + sum(x.numel() for x in spec.make_inputs(name))
        assert total <= TOO_LARGE_TOTAL, (name, total)
        assert model.network[2].in_features < 1024   # a hidden size moved, not only the constants


EXPANDING_BLOCK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, expand_ratio):
        super(Model, self).__init__()
        hidden = in_channels * expand_ratio
        self.expand = nn.Sequential(nn.Conv2d(in_channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden),
                                    nn.ReLU6(inplace=True))
        self.project = nn.Sequential(nn.Conv2d(hidden, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels))

    def forward(self, x):
        return self.project(self.expand(x))


batch_size = 10
in_channels = 112
out_channels = 192
expand_ratio = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, 224, 224)]


def get_init_inputs():
    return [in_channels, out_channels, expand_ratio]
"""


def test_large_activations_take_the_literal_sizes_too(tmp_path):
    # 21_EfficientNetMBConv's shape: the constants shrink the channels to 8, but the image size is a literal and
    # the batch (10) under MIN_SIZE, so the input stays 4.0 M elements (under TOO_LARGE) while the block expands it
    # 6x: its "odd" variant (21 M-element activations) ran 790 s a forward under the interpreter. The activations
    # count now (MetaShapes.activations): the derivation takes the literals as well
    from kerntailor.problem.load import meta_shapes
    from kerntailor.problem.variants import TOO_LARGE

    path = write(tmp_path, "expanding_block", EXPANDING_BLOCK)
    spec = load_problem(path)
    for name in ("small", "odd"):
        variant = spec.variant(name)
        assert variant.literals, variant                       # the 224s moved
        shapes = meta_shapes(spec.source, path, variant.overrides, variant.literals, None, spec.name)
        assert shapes.activations <= TOO_LARGE, (name, shapes.activations)
        assert input_shapes(spec, name)[0][-1] < 224
    default = meta_shapes(spec.source, path, (), (), None, spec.name)
    assert default.activations == 10 * 112 * 6 * 224 * 224    # the expanded map, the largest op result
