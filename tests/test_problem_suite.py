"""The project's own problem suite (problems/level{1,2,3}/*.py): every file loads, has shape variants, and
its small variants run for real on CPU with finite outputs."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from helpers import loaded

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ROOT / "problems"
# the kernel suite: problems/models/ holds whole models (profile/optimize; tests/test_hf_models.py)
FILES = sorted(p for p in PROBLEMS.glob("level*/**/*.py") if not p.name.startswith("_"))
IDS = [str(p.relative_to(PROBLEMS)) for p in FILES]

# What the Triton interpreter can afford: the largest input of a non-default variant (elements).
# The loader aims for 32K; an odd variant may round a few constants up.
MAX_VARIANT_INPUT_NUMEL = 40_000
MAX_VARIANT_PARAM_NUMEL = 128 * 1024
# Realistic default sizes: inputs + parameters between 1 MiB and 8 GiB at fp32.
MIN_DEFAULT_BYTES = 1 << 20
MAX_DEFAULT_BYTES = 8 << 30


def _load(path: Path, dtype: str | None):
    return loaded(path, dtype)   # once per session, shared with the other modules that load every problem


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _tensors(out) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


def test_suite_has_all_levels_and_enough_problems():
    assert len(FILES) >= 40, f"only {len(FILES)} problems"
    levels = {p.relative_to(PROBLEMS).parts[0] for p in FILES}
    assert {"level1", "level2", "level3"} <= levels, levels
    names = [p.stem for p in FILES]
    assert len(names) == len(set(names)), "problem names must be unique across levels"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_file_is_plain_kernelbench(path: Path):
    source = path.read_text()
    assert "cuda" not in source, "problems must not place tensors on a device; the loader does"
    assert path.stem == path.stem.lower() and " " not in path.stem
    spec = _load(path, None)
    assert spec.description, "the module docstring's first line says what the problem is"


@pytest.mark.parametrize("dtype", [None, "bf16"])
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_loads_with_variants(path: Path, dtype):
    spec = _load(path, dtype)
    names = [v.name for v in spec.variants]
    assert names[0] == "default"
    assert len(names) >= 3 and len(set(names)) == len(names), names
    assert spec.inputs and any(i.shape is not None for i in spec.inputs)
    if dtype == "bf16":
        assert all(i.dtype in ("bf16", "i64", "i32", "bool") for i in spec.inputs if i.shape is not None)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_default_size_is_realistic(path: Path):
    spec = _load(path, None)
    model = spec.make_model("default")  # meta: no memory
    n_bytes = sum(i.nbytes for i in spec.inputs)
    n_bytes += sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))
    assert MIN_DEFAULT_BYTES <= n_bytes <= MAX_DEFAULT_BYTES, f"{n_bytes / 2**20:.0f} MiB"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_some_variant_is_not_a_power_of_two(path: Path):
    spec = _load(path, None)
    dims = set()
    for v in spec.variants[1:]:
        for t in _tensors(spec.make_inputs(v)):
            dims.update(d for d in t.shape if d > 1)
    assert any(not _is_pow2(d) for d in dims), f"all variant input sizes are powers of two: {sorted(dims)}"


@pytest.mark.parametrize("dtype", [None, "bf16"])
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_variants_run_on_cpu(path: Path, dtype):
    spec = _load(path, dtype)
    for v in spec.variants[1:]:
        model = spec.make_model(v, device="cpu")
        inputs = spec.make_inputs(v, device="cpu")
        biggest = max(t.numel() for t in _tensors(inputs))
        assert biggest <= MAX_VARIANT_INPUT_NUMEL, f"variant {v.name}: an input has {biggest} elements"
        params = [p.numel() for p in model.parameters()]
        assert max(params, default=0) <= MAX_VARIANT_PARAM_NUMEL, f"variant {v.name}: parameter too big"
        with torch.no_grad():
            outs = _tensors(model(*inputs))
        assert outs, f"variant {v.name}: forward returned no tensor"
        for o in outs:
            assert o.device.type == "cpu"
            if o.is_floating_point():
                assert torch.isfinite(o).all(), f"variant {v.name}: non-finite output"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_deterministic_given_seed(path: Path):
    spec = _load(path, None)
    v = spec.variants[1]
    a, b = spec.make_inputs(v, device="cpu", seed=3), spec.make_inputs(v, device="cpu", seed=3)
    for x, y in zip(_tensors(a), _tensors(b)):
        assert torch.equal(x, y)
    sa = spec.make_model(v, device="cpu", seed=3).state_dict()
    sb = spec.make_model(v, device="cpu", seed=3).state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    c = spec.make_inputs(v, device="cpu", seed=4)
    floats = [(x, y) for x, y in zip(_tensors(a), _tensors(c)) if x.is_floating_point()]
    assert not floats or any(not torch.equal(x, y) for x, y in floats), "the seed must change the inputs"
