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
