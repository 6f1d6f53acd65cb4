"""Whole models from transformers (problems/models/: Llama-3.2-1B's decoder for prefill and decode) and the capture
gaps they opened, closed generally: an empty tensor constant (DynamicCache's `torch.tensor([])` that each layer's
keys are concatenated onto), grouped-query SDPA with a boolean mask (the causal mask transformers builds under
torch.export), advanced indexing with several index tensors (how that mask reads the packed-sequence ids without a
cache) and a forward that reads a value where it is not traced (the loader then runs it on fake tensors). The model
files need the optional `transformers` extra: without it their tests skip, and loading
one fails in one line that names the extra; the capture gaps are tested on a small file of our own either way."""

from __future__ import annotations

import importlib.util

import pytest

from helpers import DATA, ROOT, make_module, prepared, verify
from kerntailor.errors import ProblemError
from kerntailor.ir.nodes import Attention
from kerntailor.problem import load_problem

MODELS = ROOT / "problems" / "models"
DECODERS = [MODELS / "llama3_2_1b_prefill.py", MODELS / "llama3_2_1b_decode.py"]
CACHE_MASK = DATA / "attention" / "sdpa_gqa_cache_mask.py"
INDEX_POINTS = DATA / "mixed" / "index_points.py"
HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
needs_transformers = pytest.mark.skipif(not HAS_TRANSFORMERS,
                                        reason="transformers not installed (pip install 'kerntailor[transformers]')")


@pytest.mark.skipif(HAS_TRANSFORMERS, reason="transformers is installed: the missing-extra message cannot show")
def test_a_model_file_without_transformers_fails_in_one_line_naming_the_extra():
    with pytest.raises(ProblemError) as err:
        load_problem(DECODERS[0])
    assert "kerntailor[transformers]" in str(err.value) and "\n" not in str(err.value)


def test_the_kernel_suite_sweeps_and_bench_skip_the_models_folder():
    from kerntailor.generate.bench import suite_files

    files = suite_files(ROOT / "problems")
    assert files and not any("models" in p.relative_to(ROOT / "problems").parts for p in files)
    assert suite_files(MODELS) == sorted(MODELS.glob("*.py"))   # a bench of the folder itself still runs them


def test_gqa_attention_with_a_mask_over_an_empty_cache_is_one_attention_group():
    """The empty constant folds away (each cat is a copy of k or v), and the attention keeps 2 k/v heads for 4
    query heads with the mask read at the query heads. The copies stay kernels: an attention prologue must compute
    something (plan/fusion.py; optimize's graph mode swaps a KV cache's concatenation as a kernel of its own)."""
    _, _, gen, plan = prepared(CACHE_MASK)
    assert [g.family for g in plan.groups] == ["pointwise", "pointwise", "attention"]
    assert not plan.groups[2].operand_prologues
    (att,) = [n for n in gen.graph.nodes if isinstance(n, Attention)]
    q, k, v, mask = att.operands
    assert q.shape[1] == 2 * k.shape[1] == 2 * v.shape[1] and mask.shape == q.shape[:-1] + (k.shape[-2],)


def test_several_index_tensors_gather_single_elements_and_a_value_read_loads_on_fake_tensors():
    """x[r[:, None], c[None, :]] and y[r', :, c']: one gather node each, reading x at Σ index · stride; the file
    reads r's values on meta tensors (refused there), so the loader ran its forward on fake ones."""
    spec, _, gen, _ = prepared(INDEX_POINTS)
    assert [v.name for v in spec.variants] == ["default", "small", "odd"]
    gathers = [n for n in gen.graph.nodes if n.name.startswith("gather")]
    assert len(gathers) == 2 and all(n.expr.gather[0] == 1 and len(n.operands) == 3 for n in gathers)
    assert [g.out.shape for g in gathers] == [(20, 20), (20, 20, 40)]


def test_the_eager_trace_of_a_forward_that_reads_a_value_runs_on_fake_tensors():
    """profile's predicted eager time: the forward refused on meta tensors is traced on fake ones."""
    from kerntailor.costmodel.eager_trace import trace_eager

    spec, _, _, _ = prepared(INDEX_POINTS)
    ops = trace_eager(spec)
    names = [op.op for op in ops]
    assert names.count("aten.index.Tensor") == 2 and "aten.mul.Tensor" in names
    # a gather reads its table only where the indices point: x (48, 40) fp32 is 7,680 bytes, x[r, c] writes 1,600
    first = next(op for op in ops if op.op == "aten.index.Tensor")
    assert first.bytes_written == 20 * 20 * 4 and first.bytes_read == 1600 + 2 * 20 * 8


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("path", [CACHE_MASK, INDEX_POINTS], ids=lambda p: p.stem)
def test_generated_modules_pass_the_referee(path, tmp_path):
    """The referee's whole protocol (variants, draws, special values, poisoned outputs): negative indices and
    the mask read at the query heads included."""
    verify(path, make_module(path), tmp_path)


@needs_transformers
@pytest.mark.capture
@pytest.mark.slow
@pytest.mark.parametrize("path", DECODERS, ids=lambda p: p.stem)
def test_decoder_loads_runs_and_captures_at_its_small_variant(path):
    """Meta runs of the three variants and one export of four layers at the small one: about 10 s a file."""
    import torch

    from kerntailor.capture.capture import capture_problem
    from kerntailor.codegen import FAMILIES
    from kerntailor.plan import plan_fusion

    spec = load_problem(path, dtype="bf16")
    assert [v.name for v in spec.variants] == ["default", "small", "odd"]
    model, inputs = spec.make_model("small", device="cpu"), spec.make_inputs("small", device="cpu")
    with torch.no_grad():
        out = model(*inputs)
    assert out.dtype == torch.bfloat16 and torch.isfinite(out.float()).all()
    graph = capture_problem(spec, "small").graph
    attentions = [n for n in graph.nodes if isinstance(n, Attention)]
    assert len(attentions) == 4 and all(a.operands[0].shape[1] == 2 * a.operands[1].shape[1] for a in attentions)
    assert "attention" in {g.family for g in plan_fusion(graph, FAMILIES).groups}
