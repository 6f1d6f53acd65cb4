"""Upsampling (F.interpolate, nn.Upsample) is captured: nearest and bicubic through torch's decompositions (gathers
at computed indices), linear, bilinear and trilinear through capture/export.py's own, which sums the neighbours
times their weights as eager does. Before, every upsampling op was refused at capture ("cannot lower")."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from helpers import DATA, judge, make_module, prepared
from kerntailor.capture.export import _upsample_linear_vec

UPSAMPLE = DATA / "upsample"
LINEAR_SHAPES = {"linear": (2, 3, 17), "bilinear": (2, 3, 13, 9), "trilinear": (1, 2, 5, 7, 6)}


def _with_specials(shape, dtype) -> torch.Tensor:
    x = torch.randn(shape, dtype=dtype)
    flat = x.view(-1)
    flat[::7], flat[3::11], flat[5::13] = float("inf"), float("-inf"), float("nan")
    return x


@pytest.mark.parametrize("mode", sorted(LINEAR_SHAPES))
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("how", [{"scale_factor": 2}, {"scale_factor": 1.7}, {"scale_factor": 0.5}, {"size": "odd"}])
def test_linear_upsampling_matches_eager_and_its_special_values(mode, align_corners, how):
    """fp32 within a few ulps of eager, bf16 within one bf16 ulp (fp32 inside, as eager), and NaN and +-inf exactly
    where eager has them."""
    torch.manual_seed(0)
    shape = LINEAR_SHAPES[mode]
    for dtype, atol in ((torch.float32, 4e-6), (torch.float64, 1e-12), (torch.bfloat16, 1.6e-2)):
        x = _with_specials(shape, dtype)
        if how.get("size") == "odd":
            ref = F.interpolate(x, size=tuple(2 * s + 1 for s in shape[2:]), mode=mode, align_corners=align_corners)
            ours = _upsample_linear_vec(x, list(ref.shape[2:]), align_corners, None)
        else:
            ref = F.interpolate(x, mode=mode, align_corners=align_corners, **how)
            ours = _upsample_linear_vec(x, None, align_corners, [float(how["scale_factor"])] * (len(shape) - 2))
        assert ours.shape == ref.shape and ours.dtype == ref.dtype
        assert torch.equal(ours.isnan(), ref.isnan())
        assert torch.equal(ours == float("inf"), ref == float("inf"))
        assert torch.equal(ours == float("-inf"), ref == float("-inf"))
        finite = ref.isfinite()
        assert (ours[finite].double() - ref[finite].double()).abs().max().item() <= atol


def test_torchs_own_linear_decomposition_is_nan_where_eager_is_inf():
    """Why capture/export.py has its own: torch's writes v1 + (v2 - v1) * a (the referee's special-values draw
    failed a generated bilinear upsampling on it: NaN where the reference is inf)."""
    from torch._decomp.decompositions import _upsample_linear

    x = torch.full((1, 1, 4, 4), float("inf"))
    ref = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
    inf = ref == float("inf")   # (the first row and column are NaN in eager too: a weight of 0 times inf)
    assert inf.sum() == 49
    assert torch.isnan(_upsample_linear(x, [8, 8], False, [2.0, 2.0])[inf]).all()
    ours = _upsample_linear_vec(x, None, False, [2.0, 2.0])
    assert torch.equal(ours == float("inf"), inf) and torch.equal(ours.isnan(), ref.isnan())


@pytest.mark.parametrize("name", ["nearest2d", "bilinear2d"])
def test_upsampling_files_capture_and_generalize(name):
    problem, _, gen, _ = prepared(UPSAMPLE / f"{name}.py")
    assert [v.name for v in problem.variants] == ["default", "small", "odd"]
    assert any(n.name.startswith("gather") for n in gen.graph.nodes)   # the neighbours, gathered
    assert gen.graph.outputs[0].shape == (16, 8, 64, 48)


@pytest.mark.interpreter
@pytest.mark.parametrize("name", ["nearest2d", "bilinear2d"])
def test_generated_upsampling_passes_the_referee(name, tmp_path):
    """Every variant and draw, special values included (the bilinear module failed that draw with torch's
    decomposition)."""
    path = UPSAMPLE / f"{name}.py"
    verdict = judge(path, make_module(path), tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"
    assert {c.variant for c in verdict.cases if not c.refused} >= {"small", "odd"}
