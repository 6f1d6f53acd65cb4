"""Loading problem files: one-line errors that name the problem, dtype policy, content hash, variants,
seeds, meta-only loading; and real KernelBench-format files (tests/data/kernelbench/) end to end."""

from __future__ import annotations

import hashlib
import json
import math
import resource
import textwrap
import time
from pathlib import Path

import pytest
import torch

from kerntailor.errors import CaptureError, KerntailorError, ProblemError
from kerntailor.problem import load_problem
from kerntailor.problem.variants import MIN_SIZE, SMALL_NUMEL

KERNELBENCH = Path(__file__).resolve().parent / "data" / "kernelbench"

GOOD = """
import torch
import torch.nn as nn

batch_size = 64
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def replace(old: str, new: str, source: str = GOOD) -> str:
    assert old in source, old
    return source.replace(old, new)


def load_error(path: Path, *, dtype: str | None = None, error=ProblemError) -> str:
    """Loads `path`, expects `error`, checks the message is one line naming the problem; returns it."""
    with pytest.raises(error) as info:
        load_problem(path, dtype=dtype)
    assert isinstance(info.value, KerntailorError) and info.value.exit_code == 2
    message = str(info.value)
    assert message and "\n" not in message, f"not one line: {message!r}"
    assert path.stem in message, f"does not name the problem: {message!r}"
    assert "Traceback" not in message
    return message


def test_good_template_loads(tmp_path):
    spec = load_problem(write(tmp_path, "good", GOOD))
    assert spec.name == "good"
    assert spec.inputs[0].shape == (64, 1024) and spec.inputs[0].dtype == "fp32"


# --- bad files: each is a ProblemError with one line naming the problem ------------------------------------

def test_syntax_error_gives_the_line(tmp_path):
    source = GOOD.replace("    def forward(self, x):", "    def forward(self, x)")
    lineno = next(i for i, line in enumerate(source.splitlines(), 1) if "def forward(self, x)" in line)
    message = load_error(write(tmp_path, "bad_syntax", source))
    assert "syntax error" in message and f"line {lineno}" in message


def test_no_model(tmp_path):
    message = load_error(write(tmp_path, "no_model", replace("class Model(nn.Module)", "class Other(nn.Module)")))
    assert "Model" in message


@pytest.mark.parametrize("definition", ["class Model:", "class Model(object):"])
def test_model_not_a_module(tmp_path, definition):
    message = load_error(write(tmp_path, "plain_model", replace("class Model(nn.Module):", definition)))
    assert "nn.Module" in message


def test_model_is_not_a_class(tmp_path):
    message = load_error(write(tmp_path, "model_value", GOOD + "\nModel = 3\n"))
    assert "Model" in message


def test_no_get_inputs(tmp_path):
    message = load_error(write(tmp_path, "no_inputs", replace("def get_inputs():", "def make_inputs():")))
    assert "get_inputs" in message


def test_get_inputs_raises(tmp_path):
    source = replace("    return [torch.randn(batch_size, dim)]",
                     "    raise ValueError('boom\\nsecond line of the error')")
    message = load_error(write(tmp_path, "inputs_raise", source))
    assert "get_inputs" in message and "ValueError" in message and "boom" in message
    assert "second line" not in message


@pytest.mark.parametrize("returned", ["torch.randn(batch_size, dim)", "None", "{'x': 1}"])
def test_get_inputs_returns_a_non_list(tmp_path, returned):
    source = replace("return [torch.randn(batch_size, dim)]", f"return {returned}")
    message = load_error(write(tmp_path, "inputs_not_list", source))
    assert "get_inputs" in message and "list" in message


def test_get_init_inputs_raises(tmp_path):
    source = replace("def get_init_inputs():\n    return []", "def get_init_inputs():\n    return 1 / 0")
    message = load_error(write(tmp_path, "init_raise", source))
    assert "get_init_inputs" in message and "ZeroDivisionError" in message


def test_get_init_inputs_returns_a_non_list(tmp_path):
    source = replace("def get_init_inputs():\n    return []", "def get_init_inputs():\n    return 5")
    message = load_error(write(tmp_path, "init_not_list", source))
    assert "get_init_inputs" in message and "list" in message


def test_model_constructor_raises(tmp_path):
    source = replace("        super().__init__()", "        super().__init__()\n        raise RuntimeError('no')")
    message = load_error(write(tmp_path, "ctor_raise", source))
    assert "Model(" in message and "RuntimeError" in message


def test_forward_fails_on_meta(tmp_path):
    source = replace("return torch.relu(x)", "return x @ torch.randn(3, 3)")
    message = load_error(write(tmp_path, "bad_forward", source))
    assert "forward()" in message and "meta" in message


def test_import_of_a_missing_package_says_what_to_install(tmp_path):
    message = load_error(write(tmp_path, "import_raise", GOOD + "\nimport no_such_module_kerntailor.sub\n"))
    assert "imports 'no_such_module_kerntailor'" in message and "pip install no_such_module_kerntailor`" in message


def test_import_raises(tmp_path):
    message = load_error(write(tmp_path, "import_raise", GOOD + "\nraise ImportError('cannot import name x')\n"))
    assert "importing the file raised ImportError: cannot import name x" in message


def test_einops_is_installed_for_kernelbench_files():
    """KernelBench's Mamba2 files `from einops import rearrange`: the project installs it (pyproject)."""
    import einops
    assert callable(einops.rearrange)


def test_missing_file(tmp_path):
    message = load_error(tmp_path / "does_not_exist.py")
    assert "cannot read" in message


def test_unreadable_files(tmp_path):
    binary = tmp_path / "binary_junk.py"
    binary.write_bytes(b"\xff\xfe\x00\x81 not utf-8 \xc3\x28")
    assert "cannot read" in load_error(binary)
    directory = tmp_path / "a_directory.py"
    directory.mkdir()
    assert "cannot read" in load_error(directory)


@pytest.mark.parametrize("dtype", ["fp8", "float32", "int8", ""])
def test_unknown_dtype(tmp_path, dtype):
    message = load_error(write(tmp_path, "dtype_typo", GOOD), dtype=dtype)
    assert "dtype" in message and repr(dtype) in message and "bf16" in message


def test_variants_override_a_non_integer(tmp_path):
    source = GOOD + "\nscale = 0.5\nname = 'relu'\nVARIANTS = {'small': {'scale': 2}, 'odd': {'dim': 7}}\n"
    message = load_error(write(tmp_path, "variant_float", source))
    assert "'scale'" in message and "integer" in message


def test_variants_override_an_unknown_name(tmp_path):
    source = GOOD + "\nVARIANTS = {'small': {'dimm': 16}}\n"
    message = load_error(write(tmp_path, "variant_typo", source))
    assert "'dimm'" in message


@pytest.mark.parametrize("variants", [
    "[('small', {'dim': 16})]",
    "{'small': [('dim', 16)]}",
    "{'small': {'dim': 16.0}}",
    "{'small': {'dim': '16'}}",
    "{'small': {3: 16}}",
    "{'default': {'dim': 16}}",
    "'small'",
])
def test_variants_bad_format(tmp_path, variants):
    message = load_error(write(tmp_path, "variant_format", GOOD + f"\nVARIANTS = {variants}\n"))
    assert "VARIANTS" in message or "variant" in message


def test_a_variant_that_breaks_forward_names_the_variant(tmp_path):
    source = replace("return torch.relu(x)", "return x.view(batch_size, 32, -1)")
    source += "\nVARIANTS = {'small': {'batch_size': 4, 'dim': 64}, 'odd': {'batch_size': 3, 'dim': 33}}\n"
    message = load_error(write(tmp_path, "variant_breaks", source))
    assert "variant odd" in message


def test_no_integer_sizes_and_no_variants(tmp_path):
    """Sizes nowhere (a scalar input): no variant can be built, a one-line refusal that says what to declare."""
    source = replace("batch_size = 64\ndim = 1024", "").replace("torch.randn(batch_size, dim)", "torch.randn(())")
    message = load_error(write(tmp_path, "scalar_no_variants", source))
    assert "cannot derive variants" in message and "VARIANTS" in message


def test_sizes_that_cannot_move_and_no_variants(tmp_path):
    """Every size fixed by forward() itself (a hard-coded view): no variant builds, a one-line refusal."""
    source = replace("return torch.relu(x)", "return torch.relu(x.view(64, 2, 512))")
    message = load_error(write(tmp_path, "fixed_sizes", source))
    assert "variant" in message and "VARIANTS" in message


def test_derived_variants_unchanged():
    """The variants of the bundled KernelBench files are what they were before sizes were also taken from
    literals (tests/data/derived_variants.json, written by the loader at 963675c): results are keyed on them."""
    expected = json.loads((KERNELBENCH.parent / "derived_variants.json").read_text())["tests/data/kernelbench"]
    assert len(expected) == len(list(KERNELBENCH.glob("*.py")))
    for name, variants in expected.items():
        spec = load_problem(KERNELBENCH / name)
        got = {v.name: dict(v.overrides) for v in spec.variants if not v.is_default}
        assert got == variants, name
        assert all(not v.literals for v in spec.variants), name


def test_unsupported_op_without_a_meta_kernel_is_a_capture_error(tmp_path):
    source = replace("return torch.relu(x)", "return torch.nonzero(x > 0).float()")
    message = load_error(write(tmp_path, "uses_nonzero", source), error=CaptureError)
    assert "nonzero" in message


# --- dtype policy -------------------------------------------------------------------------------------

MIXED = """
import torch
import torch.nn as nn

num_tokens = 256
vocab = 512
hidden = 64


class Model(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.register_buffer("scale", torch.ones(hidden) * 0.5)

    def forward(self, ids, x):
        return self.proj(self.embed(ids) + x) * self.scale


def get_inputs():
    return [torch.randint(0, vocab, (num_tokens,)), torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [vocab, hidden]
"""


@pytest.mark.parametrize("dtype,torch_dtype", [("bf16", torch.bfloat16), ("fp16", torch.float16),
                                               ("fp32", torch.float32)])
def test_dtype_override_casts_floats_not_integers(tmp_path, dtype, torch_dtype):
    spec = load_problem(write(tmp_path, "mixed", MIXED), dtype=dtype)
    assert spec.dtype == dtype
    assert [i.dtype for i in spec.inputs] == ["i64", dtype]
    ids, x = spec.make_inputs()
    assert ids.dtype == torch.int64 and x.dtype == torch_dtype
    model = spec.make_model()
    tensors = dict(model.named_parameters()) | dict(model.named_buffers())
    assert set(tensors) == {"embed.weight", "proj.weight", "proj.bias", "scale"}
    assert all(t.dtype == torch_dtype for t in tensors.values()), {k: t.dtype for k, t in tensors.items()}
    assert all(t.is_meta for t in [ids, x, *tensors.values()])


def test_native_dtype_is_kept_and_non_tensor_inputs_are_recorded(tmp_path):
    source = MIXED.replace("def forward(self, ids, x):", "def forward(self, ids, x, k):")
    source = source.replace("torch.randn(num_tokens, hidden)]", "torch.randn(num_tokens, hidden), 3]")
    spec = load_problem(write(tmp_path, "mixed_native", source))
    assert spec.dtype is None
    assert [i.dtype for i in spec.inputs] == ["i64", "fp32", None]
    assert spec.inputs[2].value == "3" and spec.inputs[2].nbytes == 0
    assert spec.inputs[1].nbytes == 256 * 64 * 4
    assert all(p.dtype == torch.float32 for p in spec.make_model().parameters())


# --- content hash ---------------------------------------------------------------------------------------

def test_content_hash_is_stable_and_follows_the_source(tmp_path):
    path = write(tmp_path, "hashed", GOOD)
    first, second = load_problem(path), load_problem(path)
    assert first.content_hash == second.content_hash == hashlib.sha256(path.read_text().encode()).hexdigest()
    copy = write(tmp_path, "hashed_copy", GOOD)
    assert load_problem(copy).content_hash == first.content_hash  # the content, not the path
    path.write_text(path.read_text() + "\n# a comment changes the source\n")
    changed = load_problem(path)
    assert changed.content_hash != first.content_hash
    path.write_text(textwrap.dedent(GOOD))
    assert load_problem(path).content_hash == first.content_hash
    assert load_problem(path, dtype="bf16").key() != first.key()
    assert first.key().startswith(first.content_hash[:16])


# --- variants -------------------------------------------------------------------------------------------

def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _largest(spec, variant: str) -> tuple[int, int]:
    """(largest input numel, largest parameter/buffer numel) of a variant, on meta."""
    inputs = [t for t in spec.make_inputs(variant) if isinstance(t, torch.Tensor)]
    model = spec.make_model(variant)
    params = list(model.parameters()) + list(model.buffers())
    return max(t.numel() for t in inputs), max((t.numel() for t in params), default=0)


def test_derived_variants_for_a_plain_kernelbench_file():
    spec = load_problem(KERNELBENCH / "19_ReLU.py")
    names = [v.name for v in spec.variants]
    assert names == ["default", "small", "odd"]
    small, odd = dict(spec.variant("small").overrides), dict(spec.variant("odd").overrides)
    assert set(small) <= {"batch_size", "dim"} and small != {}
    assert _largest(spec, "small")[0] <= SMALL_NUMEL < _largest(spec, "default")[0]
    assert any(v % 2 == 1 and not _is_pow2(v) for v in odd.values()), odd
    x, = spec.make_inputs("odd")
    assert any(s % 2 == 1 for s in x.shape), x.shape


def test_derived_variants_keep_structural_constants():
    spec = load_problem(KERNELBENCH / "Conv2d_ReLU_BiasAdd.py")
    structural = {"in_channels": 3, "kernel_size": 3}
    assert all(v < MIN_SIZE for v in structural.values())
    for v in spec.variants:
        assert not set(dict(v.overrides)) & set(structural), v
        module = spec.module(v)
        assert {k: getattr(module, k) for k in structural} == structural
        model = spec.make_model(v)
        assert tuple(model.conv.weight.shape[1:]) == (3, 3, 3)
    # out_channels also sizes bias_shape (computed at import), so it cannot change: it is frozen
    assert all(dict(v.overrides).get("out_channels", 16) == 16 for v in spec.variants)
    assert _largest(spec, "small")[0] <= SMALL_NUMEL


DECODE_GEMM = """
import torch
import torch.nn as nn

batch_size = 8
in_features = 4096
out_features = 14336


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
"""


def test_small_bounds_the_largest_input_and_parameter(tmp_path):
    spec = load_problem(write(tmp_path, "decode_gemm", DECODE_GEMM))
    assert _largest(spec, "default") == (8 * 4096, 4096 * 14336)
    largest_input, largest_param = _largest(spec, "small")
    assert largest_input <= SMALL_NUMEL and largest_param <= SMALL_NUMEL, (largest_input, largest_param)
    small = dict(spec.variant("small").overrides)
    assert "batch_size" not in small and spec.module("small").batch_size == 8  # below MIN_SIZE: kept
    assert small["in_features"] < 4096 and small["out_features"] < 14336
    odd = dict(spec.variant("odd").overrides)
    assert any(not _is_pow2(v) for v in odd.values())
    # odd may round a few constants up, but stays in the same range
    assert max(_largest(spec, "odd")) <= 2 * SMALL_NUMEL


def test_upper_case_kernelbench_constants():
    spec = load_problem(KERNELBENCH / "1_Square_matrix_multiplication_.py")
    assert spec.inputs[0].shape == (2048, 2048) and spec.inputs[1].shape == (2048, 2048)
    assert [v.name for v in spec.variants] == ["default", "small", "odd"]
    small, odd = dict(spec.variant("small").overrides), dict(spec.variant("odd").overrides)
    assert set(small) == set(odd) == {"N"}
    assert small["N"] ** 2 <= SMALL_NUMEL and odd["N"] % 2 == 1
    a, b = spec.make_inputs("odd")
    assert a.shape == b.shape == (odd["N"], odd["N"])


UPPER_MNK = """
import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
"""


def test_upper_case_m_n_k(tmp_path):
    spec = load_problem(write(tmp_path, "matmul_mnk", UPPER_MNK))
    assert [i.shape for i in spec.inputs] == [(1024, 4096), (4096, 2048)]
    small = dict(spec.variant("small").overrides)
    assert set(small) == {"M", "N", "K"}
    a, b = spec.make_inputs("small")
    assert a.shape[1] == b.shape[0] and max(a.numel(), b.numel()) <= SMALL_NUMEL


DATACLASS = """
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class Config:
    hidden: int = 1024
    eps: float = 1e-6
    names: list[str] = field(default_factory=list)


num_tokens = 512
hidden = 1024


class Model(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.cfg = cfg
        self.weight = nn.Parameter(torch.ones(cfg.hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.cfg.eps)
        return x * rms * self.weight


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs() -> list[Config]:
    return [Config(hidden=hidden)]
"""


@pytest.mark.capture
def test_dataclass_with_future_annotations_loads_and_captures(tmp_path):
    from kerntailor.capture import capture_problem

    spec = load_problem(write(tmp_path, "dataclass_config", DATACLASS))
    assert spec.inputs[0].shape == (512, 1024)
    config = spec.init_inputs()[0]
    assert type(config).__name__ == "Config" and config.hidden == 1024
    assert spec.make_model("small").weight.shape == spec.make_inputs("small")[0].shape[-1:]
    graph = capture_problem(spec).graph
    assert [n.family for n in graph.nodes].count("reduction") == 1


SEEDS = """
import torch
import torch.nn as nn

n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return x * self.weight


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []

VARIANTS = {"small": {"n": 1024}, "odd": {"n": 1001}}
"""


def test_inputs_and_parameters_use_different_seeds(tmp_path):
    spec = load_problem(write(tmp_path, "seeds", SEEDS))
    weight = spec.make_model("small", device="cpu", seed=0).weight.detach()
    x, = spec.make_inputs("small", device="cpu", seed=0)
    assert x.shape == weight.shape == (1024,)
    assert not torch.equal(x, weight)
    corr = torch.corrcoef(torch.stack([x, weight]))[0, 1].abs().item()
    assert corr < 0.2, f"inputs correlate with the weight ({corr:.2f}): same random stream?"
    # reproducible per seed, different across seeds
    assert torch.equal(spec.make_inputs("small", device="cpu", seed=0)[0], x)
    assert torch.equal(spec.make_model("small", device="cpu", seed=0).weight.detach(), weight)
    assert not torch.equal(spec.make_inputs("small", device="cpu", seed=1)[0], x)


HUGE = """
import torch
import torch.nn as nn

batch_size = 40000
dim = 40000


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return torch.softmax(x + self.bias, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]   # passed on, not read by the constructor itself: a variant may move it (literals.model_globals)
"""


def test_loading_a_6gb_problem_is_fast_and_allocates_nothing(tmp_path):
    path = write(tmp_path, "huge", HUGE)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB, peak
    start = time.perf_counter()
    spec = load_problem(path)
    elapsed = time.perf_counter() - start
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert spec.inputs[0].nbytes == 40000 * 40000 * 4 > 6e9
    assert elapsed < 5.0, f"loading took {elapsed:.1f} s"
    assert (rss_after - rss_before) * 1024 < 512 * 2**20, "loading allocated real memory"
    x, = spec.make_inputs()
    assert x.is_meta and spec.make_model().bias.is_meta
    assert _largest(spec, "small")[0] <= SMALL_NUMEL


# --- KernelBench-format files: load, capture, inspect on every target ---------------------------------------

KB_FILES = sorted(KERNELBENCH.glob("*.py"))

# file stem -> (families of the captured nodes that must appear, the input shapes of the default variant)
KB_EXPECT = {
    "1_Square_matrix_multiplication_": ({"matmul"}, [(2048, 2048), (2048, 2048)]),
    "19_ReLU": ({"pointwise"}, [(16, 16384)]),
    "23_Softmax": ({"reduction", "pointwise"}, [(16, 16384)]),
    "40_LayerNorm": ({"reduction", "pointwise"}, [(16, 64, 256, 256)]),
    "Gemm_Scaling_Hardtanh_GELU": ({"matmul", "pointwise"}, [(128, 1024)]),
    "Conv2d_ReLU_BiasAdd": ({"conv", "pointwise"}, [(128, 3, 32, 32)]),
}


def test_kernelbench_data_files_are_present():
    assert {p.stem for p in KB_FILES} == set(KB_EXPECT)


@pytest.mark.capture
@pytest.mark.parametrize("path", KB_FILES, ids=[p.stem for p in KB_FILES])
def test_kernelbench_file_loads_captures_and_inspects_on_every_target(path):
    from kerntailor.capture import capture_problem
    from kerntailor.codegen import FAMILIES
    from kerntailor.inspect import Inspection, floor_of, render_inspection
    from kerntailor.plan import plan_fusion
    from kerntailor.targets import all_targets

    families, shapes = KB_EXPECT[path.stem]
    spec = load_problem(path)
    assert "VARIANTS" not in path.read_text()  # plain KernelBench: variants are derived
    assert [v.name for v in spec.variants] == ["default", "small", "odd"]
    assert [i.shape for i in spec.inputs] == shapes
    capture = capture_problem(spec)
    assert families == {n.family for n in capture.graph.nodes}
    assert capture.cost.flops > 0 and capture.cost.min_bytes >= sum(i.nbytes for i in spec.inputs)
    plan = plan_fusion(capture.graph, FAMILIES)
    # each is one kernel's worth of work (a convolution with its epilogue: codegen/conv.py)
    assert len(plan.groups) == 1, [g.nodes for g in plan.groups]
    targets = all_targets()
    assert len(targets) == 7
    for target in targets:
        floor = floor_of(capture, target)
        assert math.isfinite(floor.microseconds) and floor.microseconds > 0
        assert floor.seconds == max(floor.compute_seconds, floor.memory_seconds)
        assert floor.memory_seconds == pytest.approx(capture.cost.min_bytes / target.memory_bandwidth)
        report = Inspection(spec.name, str(path), "default", "as written", target, capture, plan, floor)
        text = render_inspection(report)
        assert f"roofline floor on {target.name}" in text and f"{floor.microseconds:.1f} us" in text
        data = json.loads(render_inspection(report, json_out=True))
        assert data["target"]["name"] == target.name
        assert data["floor"]["microseconds"] == pytest.approx(floor.microseconds)
