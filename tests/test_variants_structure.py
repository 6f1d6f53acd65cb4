"""Derived variants keep one graph structure (problem/variants.py, problem/slots.py, capture/capture.py).

Three general causes, each on a small synthetic problem file (not a KernelBench copy):
- a module-level constant that the model's own code reads (a constructor's `torch.zeros(batch_size, hidden)`)
  as well as get_inputs(): no variant may move it, since a candidate's ModelNew never sees the variant's value;
- a net whose shrunk sizes would take its pools down to a 1 x 1 map (a mean over one element is no division,
  and the captured graph changes): the shrinking stops at the smallest size that keeps the forward's structure;
- a concatenation whose channels grow with the constructor's arguments (C + 2 * growth): the probe variant that
  unties C and growth makes that size a sum, so generalization falls back to the referee's variants, where the
  weight's channels are fitted to the input's (and checked at run time).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kerntailor.capture.capture import capture_generalized, capture_problem
from kerntailor.capture.generalize import Dim
from kerntailor.problem import load_problem
from kerntailor.problem.literals import model_globals
from kerntailor.problem.load import meta_shapes


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


HIDDEN_STATE = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.hidden = torch.zeros((batch_size, hidden_size))
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)

        def forward(self, x, initial_hidden):
            self.hidden.copy_(initial_hidden)
            return torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))

    batch_size = 64
    input_size = 256
    hidden_size = 512

    def get_inputs():
        return [torch.rand(batch_size, input_size), torch.rand(batch_size, hidden_size)]

    def get_init_inputs():
        return [input_size, hidden_size]
"""


def test_model_globals_are_the_names_the_model_code_reads():
    names = model_globals(textwrap.dedent(HIDDEN_STATE))
    assert "batch_size" in names
    assert "input_size" not in names and "hidden_size" not in names   # read by get_inputs/get_init_inputs only


def test_a_constant_the_constructor_reads_is_never_moved(tmp_path):
    """batch_size sizes the constructor's hidden state and get_inputs(): a variant that moved it would give the
    reference a (32, H) state while a candidate built from get_init_inputs() keeps (64, H)."""
    spec = load_problem(_write(tmp_path, "hidden_state", HIDDEN_STATE))
    derived = [v for v in spec.variants if not v.is_default]
    assert {v.name for v in derived} == {"small", "odd"}
    for v in derived:
        moved = dict(v.overrides)
        assert "batch_size" not in moved, v
        assert moved.get("hidden_size", 512) < 512 or moved.get("input_size", 256) < 256, v
        x, h = spec.make_inputs(v)
        assert x.shape[0] == h.shape[0] == 64
    odd = dict(spec.variant("odd").overrides)
    assert any(value % 2 == 1 for value in odd.values())
    # every variant's model runs on its own inputs, and a model built at the default's module constants
    # (what a candidate sees) takes them too
    for v in derived:
        model = spec.make_model(v, device="cpu")
        model(*spec.make_inputs(v, device="cpu"))
    capture_generalized(spec)


POOLED = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1)
            self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
            self.head = nn.Linear(8, classes)

        def forward(self, x):
            x = self.pool(torch.relu(self.conv(x)))
            x = self.pool(x)
            x = nn.functional.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
            return self.head(x)

    batch_size = 4
    height = 128
    width = 128
    classes = 32

    def get_inputs():
        return [torch.rand(batch_size, 3, height, width)]

    def get_init_inputs():
        return [classes]
"""


def _final_map(spec, variant) -> tuple[int, int]:
    """The spatial size the adaptive pool averages over: height / 8 (a stride-2 conv and two 2 x 2 pools)."""
    (x,) = spec.make_inputs(variant)
    return -(-x.shape[2] // 8), -(-x.shape[3] // 8)


def test_shrinking_stops_before_a_pool_degenerates(tmp_path):
    """Shrunk to fit SMALL_NUMEL alone, height and width would reach 8, and the map the adaptive pool averages
    would be 1 x 1; the variants stop where it is still larger and capture one structure."""
    path = _write(tmp_path, "pooled", POOLED)
    spec = load_problem(path)
    derived = [v for v in spec.variants if not v.is_default]
    assert {v.name for v in derived} == {"small", "odd"}
    for v in derived:
        h, w = _final_map(spec, v)
        assert h > 1 and w > 1, (v, h, w)
    small, odd = dict(spec.variant("small").overrides), dict(spec.variant("odd").overrides)
    assert small["height"] < 128 and small["width"] < 128
    assert odd["height"] % 2 == 1 or odd["width"] % 2 == 1
    # the sizes that were refused do build: it is their structure, not a failure, that kept them out
    source = path.read_text()
    assert meta_shapes(source, path, (("height", 8), ("width", 8)), (), None, spec.name) is not None
    graphs = [capture_problem(spec, v).graph for v in spec.variants]
    assert len({len(g.nodes) for g in graphs}) == 1
    _, gen = capture_generalized(spec)
    assert gen.exprs


DENSE = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, layers, channels, growth):
            super().__init__()
            self.convs = nn.ModuleList(
                nn.Conv2d(channels + i * growth, growth, kernel_size=3, padding=1, bias=False)
                for i in range(layers))

        def forward(self, x):
            features = [x]
            for conv in self.convs:
                features.append(torch.relu(conv(torch.cat(features, 1))))
            return torch.cat(features, 1)

    batch_size = 2
    layers = 6
    channels = 32
    growth = 32
    height, width = 16, 16

    def get_inputs():
        return [torch.rand(batch_size, channels, height, width)]

    def get_init_inputs():
        return [layers, channels, growth]
"""


def test_a_concatenation_over_constructor_sized_channels_generalizes(tmp_path):
    """The output's channels are channels + 6 * growth, which the referee's variants keep tied (growth moves with
    channels); the probe unties them, and the concatenations' sums are derived dims (generalize.concat_dims), so
    the fit keeps the probe: growth is a dim of its own (the convs' out-channels), and every fitted size holds at
    sizes no variant had, growth and channels apart."""
    from kerntailor.capture.generalize import concat_dims, graph_slots
    from kerntailor.problem.spec import Variant

    spec = load_problem(_write(tmp_path, "dense", DENSE))
    small = dict(spec.variant("small").overrides)
    assert small["channels"] == small["growth"] < 32
    capture, gen = capture_generalized(spec)
    x = Dim(next(i for i, inp in enumerate(capture.graph.inputs) if inp.kind == "input"), 1)
    assert x in gen.dims
    weights = [i for i, inp in enumerate(capture.graph.inputs) if inp.kind != "input"]
    fitted = {p: e for p, e in gen.exprs if p[0] == "input" and p[1] in weights and p[2:] == ("shape", 0)}
    assert fitted and all(len(e.factors) == 1 and e.factors[0][0] not in (x,) for e in fitted.values())
    untied = capture_problem(spec, Variant("untied", (("channels", 5), ("growth", 3), ("height", 7), ("width", 6))))
    graph = untied.graph
    sizes = {d: concat_dims([graph.node(d.node)])[d][0] if d.node else graph.inputs[d.input].type.shape[d.axis]
             for d in gen.dims}
    values = dict(graph_slots(graph))
    for path, e in gen.exprs:
        size_one = "strides" in path and values[tuple("shape" if q == "strides" else q for q in path)] == 1
        assert size_one or e.evaluate(sizes) == values[path], path


GROUP_NORM = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, in_features, out_features, num_groups):
            super().__init__()
            self.fc = nn.Linear(in_features, out_features)
            self.gn = nn.GroupNorm(num_groups, out_features)

        def forward(self, x):
            return self.gn(self.fc(x))

    batch_size = 64
    in_features = 1024
    out_features = 1024
    num_groups = 256

    def get_inputs():
        return [torch.rand(batch_size, in_features)]

    def get_init_inputs():
        return [in_features, out_features, num_groups]
"""


def test_a_constant_that_sizes_no_tensor_keeps_its_value(tmp_path):
    """num_groups (>= MIN_SIZE) changes no input's or parameter's shape: it is structure, so no variant or probe
    moves it (the shrinking halved it once out_features could go no lower, and a group count of 256 in one
    variant and 128 in another is no function of the input's sizes: generalization refused the file), while the
    sizes still shrink and the file generalizes."""
    from kerntailor.problem.variants import probe_variant

    spec = load_problem(_write(tmp_path, "group_norm", GROUP_NORM))
    derived = [v for v in spec.variants if not v.is_default]
    assert {v.name for v in derived} == {"small", "odd"}
    for v in derived + [probe_variant(spec)]:
        moved = dict(v.overrides)
        assert "num_groups" not in moved, v
        assert moved["in_features"] < 1024 and moved["out_features"] < 1024, v
        assert moved["out_features"] >= 2 * 256, v   # not one channel a group, where the file has four
    assert any(value % 2 == 1 for value in dict(spec.variant("odd").overrides).values())
    _, gen = capture_generalized(spec)
    assert gen is not None


def test_the_probe_moves_no_two_constants_to_one_value():
    """Constants the variants keep equal (growth == channels, height == width) are moved by different steps, and
    never onto a value another one moved to: DenseNet's block had growth 16 + 1 == height 14 + 3 and channels
    16 + 5 == width 14 + 7, so C·H·W == growth·W² in every variant and the stride was fitted as the latter."""
    from kerntailor.problem.variants import move_apart

    base = {"growth_rate": 16, "height": 14, "num_input_features": 16, "width": 14}
    probe = move_apart(base, {k: {v} for k, v in base.items()}, lambda trial: True)
    assert len(set(probe.values())) == len(probe) and all(probe[k] != base[k] for k in base)



DIVISIBLE = """
    import torch
    import torch.nn as nn

    image_size = 224
    patch_size = 16
    dim = 64


    class Model(nn.Module):
        def __init__(self, image_size, patch_size, dim):
            super().__init__()
            assert image_size % patch_size == 0
            self.patch_size = patch_size
            self.embed = nn.Linear(patch_size, dim)

        def forward(self, x):
            return self.embed(x.reshape(x.shape[0], -1, self.patch_size))


    def get_inputs():
        return [torch.rand(8, image_size, image_size)]


    def get_init_inputs():
        return [image_size, patch_size, dim]
"""


def test_a_size_that_did_not_halve_halves_once_another_moved(tmp_path):
    """ViT's shape (KernelBench level-3 28): image_size = 224 halves to 112, not to 56 while patch_size = 16 must
    divide it; once the patch is 8 it does. Frozen for good at its first refusal, the "small" variant kept 8 x 112
    x 112 inputs (3x the interpreter's budget, SMALL_NUMEL), and ViT's CPU referee ran past its 300 s."""
    from kerntailor.problem.variants import SMALL_NUMEL

    spec = load_problem(_write(tmp_path, "divisible", DIVISIBLE))
    small, odd = dict(spec.variant("small").overrides), dict(spec.variant("odd").overrides)
    assert small["image_size"] == 56 and small["patch_size"] == 8
    assert 8 * small["image_size"] ** 2 <= SMALL_NUMEL
    assert odd["image_size"] % odd["patch_size"] == 0 and odd != small


HALVING = Path(__file__).parent / "data" / "variants" / "halving_net.py"


def _halvings(size: int, times: int) -> list[int]:
    out = [size]
    for _ in range(times):
        out.append((out[-1] - 1) // 2 + 1)   # a 3 x 3 convolution, stride 2, padding 1
    return out


def test_the_probe_keeps_tied_image_sizes_odd_and_apart_through_halvings():
    """Height and width, equal in every variant (224 x 224 literals), are moved so that four stride-2 halvings keep
    each odd and the two apart at every level: with small steps (59 x 61: 8 x 8 after three) sizes even in every
    variant fitted halves of the map before, and a width was fitted to a height."""
    from kerntailor.problem.variants import probe_variant

    spec = load_problem(HALVING)
    probe = dict(probe_variant(spec).literals)
    height, width = (probe[k] for k in sorted(probe))
    h, w = _halvings(height, 4), _halvings(width, 4)
    assert all(v % 2 == 1 for v in h + w), (h, w)
    assert not set(h) & set(w), (h, w)


def test_the_probe_moves_each_size_to_its_own_odd_chain():
    from kerntailor.problem.variants import move_apart

    base = {"height": 28, "width": 28, "depth": 28, "batch": 1}
    probe = move_apart(base, {k: {v} for k, v in base.items()}, lambda trial: True)
    chains = [_halvings(probe[k], 3) for k in ("depth", "height", "width")]
    assert all(v % 2 == 1 for chain in chains for v in chain), chains
    assert len({v for chain in chains for v in chain}) == 12, chains   # no level of one is a level of another
    assert probe["batch"] != 1


def test_a_size_whose_first_chain_does_not_build_takes_another_odd_one():
    """19_MobileNetV1 ends in a fixed AvgPool2d(7) feeding a Linear(1024): only inputs 7..13 wide after five
    halvings build. Its width's first odd chain (769) did not, and the probe fell back to a small step (229, even
    after two halvings): a width fitted as W // 2 for (W - 1) // 2 + 1, wrong on inputs of other widths. Another
    chain that stays odd through four halvings, apart from the height's, is taken instead."""
    from kerntailor.problem.variants import chain_of, move_apart

    def builds(trial):
        return all(7 <= _halvings(trial[k], 5)[-1] <= 13 for k in ("height", "width"))

    base = {"height": 224, "num_classes": 8, "width": 224}
    probe = move_apart(base, {k: {v} for k, v in base.items()}, builds)
    h, w = _halvings(probe["height"], 4), _halvings(probe["width"], 4)
    assert all(v % 2 == 1 for v in h + w), (h, w)
    assert not set(h) & set(w) and chain_of(probe["height"]) != chain_of(probe["width"]), (h, w)
    assert builds(probe)


FLOOR_POOL = Path(__file__).parent / "data" / "variants" / "floor_pool_net.py"


@pytest.mark.capture
def test_sizes_after_a_floor_pool_are_the_pools_own_not_half_the_map_before():
    """The second 2x2 average pool's input is even in every variant and the probe, so its output (and the strides
    of what reads it) fitted as half the first pool's (d // 2, 2·H0·W0 for 8·H1·W1) as well as by its own size.
    On a 91 x 108 input (maps 46, 23, 11 -> 5 high) that read 5.5 rows: the expressions are now the pool's own
    dims, the nearest made before the slot (generalize._nearest_first; a BatchNorm weight broadcast over the map
    takes the reading node's place). 15_DenseNet121 was wrong so on a held-out size set (benchmarks/fit_holdout.py)."""
    from kerntailor.capture.product_rows import common_rows
    from kerntailor.problem.spec import Variant
    from kerntailor.problem.variants import probe_variant

    spec = load_problem(FLOOR_POOL)
    _, gen = capture_generalized(spec)
    probe = probe_variant(spec)
    keys = sorted(dict(probe.literals))
    odd = Variant("odd", probe.overrides, tuple(zip(keys, (91, 108))))
    seen = [capture_problem(spec, v).unflattened for v in (*spec.variants, probe, odd)]
    graph = common_rows(seen)[-1]
    assert [i.type.shape for i in graph.inputs if i.kind == "input"] == [(10, 3, 91, 108)]
    assert gen.wrong_at(graph) == []
    assert gen.wrong_at(common_rows(seen)[0]) == []   # and the default's own sizes, as fitted


@pytest.mark.interpreter
@pytest.mark.parametrize("hw", [(8, 64), (64, 33)])
def test_a_halving_net_is_right_on_inputs_that_are_not_square(hw, library_conv, tmp_path):
    """The generated module (convolutions the library's, the BatchNorm statistics, ReLU6 and pool generated) gives
    eager's output on a non-square input, one with a 1-high map after three halvings: before the probe kept height
    and width apart, the first raised in the interpreter and the second was NaN. Run in a child process under
    TRITON_INTERPRET=1 (the kernels' shared helpers are jitted when first imported)."""
    import os
    import subprocess
    import sys

    from helpers import make_module

    kernel = tmp_path / "halving_kernel.py"
    kernel.write_text(make_module(HALVING, arch="sm_90").source)
    script = textwrap.dedent(f"""
        import importlib.util, torch

        def load(name, path):
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module

        source, kernel = load("halving_net", {str(HALVING)!r}), load("halving_kernel", {str(kernel)!r})
        torch.manual_seed(0)
        reference = source.Model(*source.get_init_inputs())
        candidate = kernel.ModelNew(*source.get_init_inputs())
        candidate.load_state_dict(reference.state_dict())
        x = torch.randn(10, 3, {hw[0]}, {hw[1]})
        with torch.no_grad():
            expected, got = reference(x), candidate(x)
        print(float((got - expected).norm() / expected.norm()))
    """)
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    error = float(done.stdout.strip().splitlines()[-1])
    assert error < 1e-5, error
