"""Recurrent layers on meta tensors by shape only.

torch runs `aten.lstm`/`gru`/`rnn_tanh`/`rnn_relu` as one cell per time step and layer, also on meta
tensors and while torch.export traces: one forward of a 6-layer LSTM over 512 steps took 17 s on meta
tensors and 48 s to export (2026-12-01, 2 shared CPU cores). Their output shapes follow from their
arguments alone, so while `recurrent_by_shape()` is active they return empty tensors of those shapes,
and torch.export records each call as one node (capture keeps it whole: capture/export.py).
"""

from __future__ import annotations

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
RECURRENT = (aten.lstm.input, aten.gru.input, aten.rnn_tanh.input, aten.rnn_relu.input)


def recurrent_shapes(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """What aten.lstm/gru/rnn_*.input return, by shape only: (output, *final states). The output's last axis
    is directions x the hidden state's (LSTM's projected h); the final states have their initial states' shapes."""
    states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
    directions = 2 if bidirectional else 1
    output = input.new_empty(tuple(input.shape[:-1]) + (directions * states[0].shape[-1],))
    return (output,) + tuple(h.new_empty(h.shape) for h in states)


@contextlib.contextmanager
def recurrent_by_shape():
    """While active, the recurrent ops' Python kernels (what torch.export's tracing and the Python dispatcher
    call) are `recurrent_shapes`; everything is restored on exit. torch's own torch.export._patches swaps
    these kernels the same way. Only ever used with meta or fake tensors."""
    from torch._decomp import global_decomposition_table

    registry = global_decomposition_table["post_autograd"]
    implicit = torch._C.DispatchKey.CompositeImplicitAutograd
    saved = {op: (registry.get(op), dict(op.py_kernels)) for op in RECURRENT}
    try:
        for op in RECURRENT:
            registry[op] = recurrent_shapes
            for key in list(op.py_kernels) + [implicit]:
                op.py_kernels[key] = recurrent_shapes
            op._dispatch_cache.clear()
        yield
    finally:
        for op, (decomposition, kernels) in saved.items():
            if decomposition is None:
                registry.pop(op, None)
            else:
                registry[op] = decomposition
            op.py_kernels.clear()
            op.py_kernels.update(kernels)
            op._dispatch_cache.clear()


def has_recurrent_layers(model: torch.nn.Module) -> bool:
    return any(isinstance(m, torch.nn.RNNBase) for m in model.modules())


@contextlib.contextmanager
def eager_recurrent_by_shape(model: torch.nn.Module):
    """For an eager forward on meta tensors: `recurrent_by_shape` with the Python dispatcher on (plain eager
    calls skip Python kernels), only for a model with recurrent layers (nothing changes for any other)."""
    if not has_recurrent_layers(model):
        yield
        return
    from torch._dispatch.python import enable_python_dispatcher

    with recurrent_by_shape(), enable_python_dispatcher():
        yield


class MetaShortcuts(TorchDispatchMode):
    """A forward on meta tensors with the outputs of two ops made by their shapes alone, as their meta kernels
    would make them. Their meta kernels are Python decompositions (torch._meta_registrations): an eval-mode
    BatchNorm's native_batch_norm ran 1.6 ms a call, 166 of ResNet-101's 310 ms meta forward; a Linear's addmm
    1.05 ms, 539 of a 256-step RNN loop's 740 ms (2026-12-05, 2 shared CPU cores). Only the calls `_shortcut`
    knows exactly (meta tensors, shapes that fit, one dtype) take the shortcut: any other runs the op (and raises
    where it would). tests/test_meta_shortcuts.py checks each output's shape, strides and dtype against the op's."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self.run(func, args, kwargs or {})

    @staticmethod
    def run(func, args, kwargs):
        out = _shortcut(func, args, kwargs)
        return func(*args, **kwargs) if out is None else out


def _shortcut(func, args, kwargs):
    from torch._subclasses.fake_tensor import FakeTensor

    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if kwargs or not all(t.device.type == "meta" and not isinstance(t, FakeTensor) for t in tensors):
        return None
    if func is aten.native_batch_norm.default:
        return _batch_norm_eval(*args)
    if func is aten.addmm.default and len(args) == 3:
        return _addmm(*args)
    return None


def _batch_norm_eval(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """native_batch_norm in eval mode on meta (torch._decomp's native_batch_norm_helper, not on the CPU): the
    output is elementwise over the input (its strides), save_mean and save_invstd the running statistics in the
    computation dtype."""
    from torch._prims_common import compute_elementwise_output_strides, get_computation_dtype

    if training or input.dim() < 2 or not input.is_floating_point():
        return None
    channels = input.shape[1]
    stats = (running_mean, running_var)
    if not all(isinstance(t, torch.Tensor) and t.shape == (channels,) and t.is_contiguous() and t.is_floating_point()
               for t in stats):
        return None
    if not all(t is None or (isinstance(t, torch.Tensor) and t.shape == (channels,) and t.is_floating_point())
               for t in (weight, bias)):
        return None
    computation = get_computation_dtype(input.dtype)
    output = torch.empty_strided(input.shape, compute_elementwise_output_strides(input), dtype=input.dtype,
                                 device="meta")
    return output, *(torch.empty((channels,), dtype=computation, device="meta") for _ in stats)


def _addmm(bias, mat1, mat2):
    """addmm(bias, mat1, mat2) (beta = alpha = 1) on meta with one floating dtype and a bias of the output's row
    (a Linear's): a contiguous (M, N) result (torch._decomp's addmm: mm's result plus the broadcast bias)."""
    tensors = (bias, mat1, mat2)
    if not all(isinstance(t, torch.Tensor) for t in tensors) or mat1.dim() != 2 or mat2.dim() != 2:
        return None
    if len({t.dtype for t in tensors}) != 1 or not mat1.is_floating_point() or mat1.shape[1] != mat2.shape[0]:
        return None
    if bias.shape != (mat2.shape[1],):
        return None
    return torch.empty((mat1.shape[0], mat2.shape[1]), dtype=mat1.dtype, device="meta")
