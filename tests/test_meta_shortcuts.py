"""MetaShortcuts (problem/meta.py): the outputs it makes by shape are those the ops' own meta kernels make (shape,
strides, dtype, device), it leaves every call it does not know exactly to the op (errors included), and a model's
meta forward records the same structure and shapes with and without it (what deriving variants compares)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from kerntailor.problem.load import OpStructure, meta_shapes
from kerntailor.problem.meta import MetaShortcuts, _shortcut

aten = torch.ops.aten


def _meta(shape, dtype=torch.float32, memory_format=torch.contiguous_format):
    return torch.empty(shape, dtype=dtype, device="meta").to(memory_format=memory_format)


def _facts(out):
    flat = out if isinstance(out, (list, tuple)) else (out,)
    return [(tuple(t.shape), t.stride(), t.dtype, t.device.type) for t in flat]


def _same_as_op(func, args):
    made = _shortcut(func, args, {})
    assert made is not None, "the shortcut declined a call it should know"
    assert _facts(made) == _facts(func(*args))


BATCH_NORM_INPUTS = [
    ((6, 5), torch.contiguous_format),
    ((6, 5, 7), torch.contiguous_format),
    ((3, 5, 7, 9), torch.contiguous_format),
    ((3, 5, 7, 9), torch.channels_last),
    ((1, 5, 1, 1), torch.channels_last),      # every stride but the channels' ambiguous
    ((2, 5, 1, 9), torch.channels_last),
    ((2, 5, 3, 4, 6), torch.channels_last_3d),
]


@pytest.mark.parametrize("shape,memory_format", BATCH_NORM_INPUTS)
@pytest.mark.parametrize("dtype,stats_dtype", [(torch.float32, torch.float32), (torch.float16, torch.float16),
                                               (torch.bfloat16, torch.float32), (torch.float32, torch.float64)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval_matches_the_meta_kernel(shape, memory_format, dtype, stats_dtype, affine):
    c = shape[1]
    x = _meta(shape, dtype, memory_format)
    weight, bias = (_meta((c,), stats_dtype), _meta((c,), stats_dtype)) if affine else (None, None)
    _same_as_op(aten.native_batch_norm.default,
                (x, weight, bias, _meta((c,), stats_dtype), _meta((c,), stats_dtype), False, 0.1, 1e-5))


def test_batch_norm_of_a_strided_input_matches_the_meta_kernel():
    x = _meta((4, 6, 10, 8))[:, ::2, :, 1:7]   # not dense: the output's strides are the elementwise rule's
    _same_as_op(aten.native_batch_norm.default, (x, None, None, _meta((3,)), _meta((3,)), False, 0.1, 1e-5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("m,k,n", [(8, 12, 5), (1, 3, 1), (7, 1, 9)])
@pytest.mark.parametrize("transposed", [True, False])
def test_addmm_matches_the_meta_kernel(dtype, m, k, n, transposed):
    mat2 = _meta((n, k), dtype).t() if transposed else _meta((k, n), dtype)   # a Linear's weight.t()
    _same_as_op(aten.addmm.default, (_meta((n,), dtype), _meta((m, k), dtype)[:, :k], mat2))


def test_calls_it_does_not_know_exactly_run_the_op():
    x = _meta((3, 5, 7))
    stats = (_meta((5,)), _meta((5,)))
    declined = [
        (aten.native_batch_norm.default, (x, None, None, *stats, True, 0.1, 1e-5)),            # training
        (aten.native_batch_norm.default, (x, _meta((4,)), None, *stats, False, 0.1, 1e-5)),    # weight of 4
        (aten.native_batch_norm.default, (x, None, None, _meta((4,)), stats[1], False, 0.1, 1e-5)),
        (aten.native_batch_norm.default, (torch.empty(3, 5, 7), None, None, torch.empty(5), torch.empty(5),
                                          False, 0.1, 1e-5)),                                  # not meta
        (aten.addmm.default, (_meta((4,)), _meta((2, 3)), _meta((3, 5)))),                     # bias of 4
        (aten.addmm.default, (_meta((5,)), _meta((2, 4)), _meta((3, 5)))),                     # K 4 != 3
        (aten.addmm.default, (_meta((5,), torch.float16), _meta((2, 3)), _meta((3, 5)))),      # two dtypes
        (aten.addmm.default, (_meta((2, 5)), _meta((2, 3)), _meta((3, 5)))),                   # a full bias
        (aten.mm.default, (_meta((2, 3)), _meta((3, 5)))),
    ]
    for func, args in declined:
        assert _shortcut(func, args, {}) is None, func
    with pytest.raises(RuntimeError):   # the op's own error, not a shortcut's output
        with MetaShortcuts():
            torch.addmm(_meta((5,)), _meta((2, 4)), _meta((3, 5)))


def _model():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 10)).to("meta").eval()


def test_a_forward_records_the_same_structure_with_and_without_shortcuts():
    model, x = _model(), _meta((2, 3, 8, 8))
    outputs, records = [], []
    for shortcuts in (True, False):
        recorder = OpStructure(shortcuts=shortcuts)
        with torch.no_grad(), recorder:
            outputs.append(_facts(model(x)))
        records.append(recorder.ops)
    assert outputs[0] == outputs[1]
    assert records[0] == records[1]
    assert any("native_batch_norm" in op for op, *_ in records[0]) and any("addmm" in op for op, *_ in records[0])


PROBLEM = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, c, classes):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(c, 2 * c, 3), nn.BatchNorm2d(2 * c), nn.ReLU())
            self.head = nn.Linear(2 * c, classes)

        def forward(self, x):
            return self.head(self.body(x).mean((2, 3)))

    batch_size = 16
    channels = 32
    classes = 64

    def get_inputs():
        return [torch.rand(batch_size, channels, 20, 20)]

    def get_init_inputs():
        return [channels, classes]
"""


def test_meta_shapes_are_those_of_the_forward_without_shortcuts(tmp_path, monkeypatch):
    path = tmp_path / "bn_linear.py"
    source = textwrap.dedent(PROBLEM)
    path.write_text(source)
    meta_shapes.cache_clear()
    fast = meta_shapes(source, path, (("channels", 16),), (), None, "bn_linear")
    meta_shapes.cache_clear()
    import kerntailor.problem.load as load

    monkeypatch.setattr(load, "OpStructure", lambda: OpStructure(shortcuts=False))
    slow = meta_shapes(source, path, (("channels", 16),), (), None, "bn_linear")
    meta_shapes.cache_clear()
    assert fast is not None and fast == slow
    assert fast.structure == slow.structure and fast.specs == slow.specs
