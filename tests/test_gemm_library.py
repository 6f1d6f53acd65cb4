"""The issue's "library GEMM + fused tail": a matmul group whose product is torch.matmul's (cuBLAS / hipBLASLt) and
whose epilogue and row tail run in one generated kernel over its tiles (knob LIBRARY, codegen/gemm.py), offered to
the pipeline in measured mode beside the searched schedules (generate/pipeline.py)."""

from __future__ import annotations

import pytest

from helpers import L1, L2, FakeTimer, matmul_kernels, prepared
from helpers import gemm_module as make_module
from kerntailor.codegen.gemm import MatmulSchedule
from kerntailor.generate.group_search import library_product_trial
from kerntailor.generate.run import Run
from kerntailor.targets import get_target
from kerntailor.verify import VerifySettings, verify_candidate


@pytest.mark.interpreter
@pytest.mark.parametrize("name, dtype, knobs", [
    ("gemm_logsumexp", "bf16", {"BLOCK_M": 32, "BLOCK_N": 32}),    # the row tail over the library's product
    ("gemm_bias_gelu", None, {"BLOCK_M": 16, "BLOCK_N": 64}),
    ("bmm", "bf16", {"BLOCK_M": 32, "BLOCK_N": 32}),               # batched, the product alone
    ("matmul_transposed_a", None, {"BLOCK_M": 32, "BLOCK_N": 32}),  # a transposed operand view, the product alone
])
def test_library_product_with_generated_tail_passes_the_referee(name, dtype, knobs, tmp_path):
    path = next(p for p in (*L1.glob("*.py"), *L2.glob("*.py")) if p.stem == name)
    module = make_module(path, dict(knobs, LIBRARY=1, TMA=1, split_k=2), dtype, arch="sm_90")
    _, _, _, plan = prepared(path, dtype)
    if len(plan.groups[0].nodes) > 1:   # an epilogue or tail: one kernel over the library product's tiles
        (kernel,) = matmul_kernels(path, module, dtype)
        assert "tl.dot" not in kernel.source and "lib_prod_ptr" in kernel.source
        assert "SPLIT_K" not in kernel.source and "USE_TMA" not in kernel.source    # the product's knobs do not apply
        assert "_lib_prod = torch.matmul(torch.as_strided(" in module.source
    else:   # the product alone: the library call defines the output on the host, no kernel copies it
        (kernel,) = module.kernels
        assert kernel.source == "" and kernel.library_calls == ("torch.ops.aten.matmul.default",)
        assert "tl.load" not in module.source and f"{kernel.group}_{plan.groups[0].nodes[0]} = torch.ops.aten.matmul" \
            in module.source
    out = tmp_path / "kernel.py"
    out.write_text(module.source)
    spec = prepared(path, dtype)[0]
    verdict = verify_candidate(spec, out, VerifySettings(allow_library=True))
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"
    # the static check sees the library call: the pipeline allows it for its own module, nobody else's
    strict = verify_candidate(spec, out, VerifySettings())
    assert not strict.passed and strict.check == "static"


def test_library_product_is_not_offered_under_fp8():
    from kerntailor.codegen import CodegenUnsupported

    with pytest.raises(CodegenUnsupported, match="library product under fp8-row"):
        make_module(L2 / "gemm_bias_relu.py", {"LIBRARY": 1, "precision": "fp8-row"}, "bf16", arch="sm_90")


def test_pipeline_offers_the_library_product_tiled_like_the_best_schedule(tmp_path):
    path = L2 / "gemm_bias_relu.py"
    spec, _, gen, plan = prepared(path, "bf16")
    (group,) = plan.groups
    best = MatmulSchedule(BLOCK_M=128, BLOCK_N=64, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3, split_k=1,
                          TMA=1, PERSISTENT=1, precision="ieee")
    run = Run(None, get_target("h200"), spec, None, tmp_path, lambda *a: None, gen=gen, plan=plan)
    # the best schedule's tiles and the tail tiles are all timed; the fastest is offered
    timer = FakeTimer(lambda k: 4e-4 if (k["BLOCK_M"], k["BLOCK_N"]) == (64, 128) else 5e-4)
    chosen, ev = library_product_trial(run, {group.name: best}, group, timer)
    assert ev.seconds == 4e-4 and len(timer.sources) == 4
    assert chosen.LIBRARY == 1 and (chosen.BLOCK_M, chosen.BLOCK_N, chosen.num_warps) == (64, 128, 4)
    assert (chosen.TMA, chosen.PERSISTENT, chosen.split_k) == (0, 0, 1)   # the product's knobs do not apply
    assert "TMA" not in chosen.knobs() and "PERSISTENT" not in chosen.knobs()
    assert all("torch.matmul(" in source for source in timer.sources)
    only_best = FakeTimer(lambda k: 5e-4 if (k["BLOCK_M"], k["BLOCK_N"]) == (128, 64) else None)
    chosen, _ = library_product_trial(run, {group.name: best}, group, only_best)
    assert chosen.BLOCK_N == 64
    assert library_product_trial(run, {group.name: best}, group, FakeTimer(lambda k: None)) is None


def test_library_trial_times_one_form_when_the_group_is_its_product_alone(tmp_path):
    """A group that is its product alone becomes host calls under LIBRARY=1, with no kernel to tile: the trial times
    that one form, not the best schedule's tiling and every LIBRARY_TAIL_TILES tiling of the same host call."""
    path = next(p for p in (*L1.glob("*.py"), *L2.glob("*.py")) if p.stem == "bmm")
    spec, _, gen, plan = prepared(path, "bf16")
    (group,) = plan.groups
    assert len(group.nodes) == 1
    best = MatmulSchedule(BLOCK_M=128, BLOCK_N=64, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3, split_k=1,
                          TMA=1, PERSISTENT=1, precision="ieee")
    run = Run(None, get_target("h200"), spec, None, tmp_path, lambda *a: None, gen=gen, plan=plan)
    timer = FakeTimer(lambda k: 3e-4)
    chosen, ev = library_product_trial(run, {group.name: best}, group, timer)
    assert len(timer.sources) == 1 and ev.seconds == 3e-4 and chosen.LIBRARY == 1
    (source,) = timer.sources
    assert "torch.ops.aten.matmul" in source and "tl.load" not in source
