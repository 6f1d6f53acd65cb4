"""torch.export on meta tensors, decomposed to core ATen plus the few composites we lower ourselves.

Each node the decomposition made from one op of one tensor argument (a softmax, a silu, a gelu: eager runs one kernel
where the graph runs several; `contiguous`, `reshape`: eager copies only where the strides it meets need it, the
graph's clone always) carries meta["composite"] = (the op's node name, Composite): what graph mode needs to
call the op again in place of its decomposition where no kernel replaced it (optimizing/lean.py)."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import torch

from kerntailor.errors import CaptureError
from kerntailor.problem.meta import recurrent_by_shape

aten = torch.ops.aten

# Composites torch would otherwise keep or decompose badly: turned into ATen pointwise + reductions.
_DECOMPOSE = [aten._softmax, aten._log_softmax, aten.gelu, aten.mish, aten.hardswish, aten.hardsigmoid,
              aten.silu, aten.leaky_relu, aten.elu, aten.softplus, aten.hardtanh, aten.nll_loss_forward,
              aten.mse_loss, aten.huber_loss, aten.smooth_l1_loss, aten.logsumexp,
              aten.l1_loss, aten.binary_cross_entropy, aten.binary_cross_entropy_with_logits,
              aten.upsample_nearest1d, aten.upsample_nearest2d, aten.upsample_nearest3d,
              aten._upsample_nearest_exact1d, aten._upsample_nearest_exact2d, aten._upsample_nearest_exact3d,
              aten.upsample_bicubic2d, aten.adaptive_max_pool2d, aten.adaptive_max_pool3d,
              aten._adaptive_avg_pool2d]

# Kept whole: lowered by kerntailor (norms into reductions; attention and recurrent layers as anchors: a
# recurrent op would otherwise be unrolled into one cell per time step and layer, see problem/meta.py).
# addmm/baddbmm are not in _DECOMPOSE because torch's decomposition upcasts bf16 operands to fp32 before
# the product.
_KEEP = ("scaled_dot_product", "layer_norm", "group_norm", "batch_norm", "aten.var.", "aten.var_mean.",
         "aten.lstm.input", "aten.gru.input", "aten.rnn_tanh.input", "aten.rnn_relu.input")


def decomposition_table() -> dict:
    from torch._decomp import get_decompositions

    table = torch.export.default_decompositions()
    table.update(get_decompositions(_DECOMPOSE))
    for key in list(table):
        if any(k in str(key) for k in _KEEP):
            del table[key]
    if aten.roll.default in table:
        table[aten.roll.default] = functools.partial(_roll_as_slices, table[aten.roll.default])
    table.update(_LINEAR_UPSAMPLING)
    return table


def _roll_as_slices(flat_roll, x, shifts, dims=()):
    """torch.roll over named dims as, per dim in turn, the cat of its two slices (`x[n-s:], x[:n-s]`): masked loads
    at views shifted along that dim, which fuse with what reads them. torch's own decomposition gathers along each dim
    through an index tensor built from an arange (iota, add, fmod, gather: two kernels of indices for a roll over two
    dims, a gather of a gather that codegen cut, and gathers that a group whose rows reshape the map refused: Swin's
    cyclic shift before its norm). One dim at a time, each view's offset is (n - s) or -s times one stride, which
    three variants fit; slices of slices (every quadrant read from x at once) put offsets such as
    (H - s)·W·C + (W - t)·C in the views, which they do not (capture/polyfit.py). A roll of the flattened tensor
    (no dims) keeps torch's decomposition."""
    if not dims or len(shifts) != len(dims):
        return flat_roll(x, shifts, dims)
    for s, d in zip(shifts, dims):
        n = x.shape[d]
        s = s % n if n else 0
        if s:
            x = torch.cat([x.narrow(d, n - s, s), x.narrow(d, 0, n - s)], dim=d)
    return x.clone()


def _upsample_linear(x: torch.Tensor, output_size, align_corners: bool, scales) -> torch.Tensor:
    """Linear, bilinear and trilinear upsampling as eager computes it: each output a sum of its 2^d neighbours times
    their weights, (1 - a) and a along each axis, in fp32 for 16-bit inputs. torch's own decomposition writes
    v1 + (v2 - v1) * a, which is NaN where both neighbours are inf (inf - inf) and eager's sum is inf: the referee's
    special-values draw failed a generated bilinear upsampling on that. Indices, weights and the output's memory
    format as torch's decomposition computes them."""
    import itertools

    from torch._decomp.decompositions import _compute_scale, _compute_source_index
    from torch._prims_common import suggest_memory_format

    sizes = x.shape[2:]
    opmath = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) or not x.is_floating_point() else x.dtype
    low, high, weight = [], [], []
    for k, (size, out, scale) in enumerate(zip(sizes, output_size, scales)):
        step = _compute_scale(size, out, align_corners, scale)
        source = _compute_source_index(step, torch.arange(out, device=x.device).to(opmath), align_corners)
        source = source.clamp(min=0.0).reshape(out, *[1] * (len(sizes) - 1 - k))
        index = source.to(torch.int64)
        low.append(index)
        high.append((index + 1).clamp(max=size - 1))
        weight.append((source - index).clamp(0.0, 1.0))
    values = [aten._unsafe_index(x, [None, None] + [high[k] if corner[k] else low[k] for k in range(len(sizes))])
              .to(opmath) for corner in itertools.product((0, 1), repeat=len(sizes))]
    for k in reversed(range(len(sizes))):
        values = [v1 * (1 - weight[k]) + v2 * weight[k] for v1, v2 in zip(values[::2], values[1::2])]
    out = values[0] if x.is_floating_point() else values[0].round()
    return out.to(x.dtype).contiguous(memory_format=suggest_memory_format(x))


def _upsample_linear_vec(x, output_size, align_corners, scale_factors):
    from torch._decomp.decompositions import upsample_compute_output_size

    size = upsample_compute_output_size(x.size(), output_size, scale_factors)
    return _upsample_linear(x, size, align_corners, scale_factors if scale_factors else [None] * len(size))


def _upsample_linear_sizes(x, output_size, align_corners, *scales):
    return _upsample_linear(x, output_size, align_corners, list(scales) + [None] * (len(output_size) - len(scales)))


_LINEAR_UPSAMPLING = {op.vec: _upsample_linear_vec for op in (aten.upsample_linear1d, aten.upsample_bilinear2d,
                                                              aten.upsample_trilinear3d)} | {
    op.default: _upsample_linear_sizes for op in (aten.upsample_linear1d, aten.upsample_bilinear2d,
                                                  aten.upsample_trilinear3d)}


def _buffers_for_mutated_constants(model: torch.nn.Module) -> None:
    """Register plain tensor attributes as (non-persistent) buffers, in place.

    torch.export refuses a forward that writes a tensor attribute that is not a buffer ("Constant hidden is
    mutated", a hidden state kept as `self.hidden`); as a buffer, the write becomes a buffer mutation, whose
    new value the graph computes and capture ignores (only forward()'s return values are outputs)."""
    for module in model.modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter) \
                    and not name.startswith("_"):
                delattr(module, name)
                module.register_buffer(name, value, persistent=False)


def export_on_meta(model: torch.nn.Module, inputs: list, name: str) -> torch.export.ExportedProgram:
    """Trace `model(*inputs)` (meta tensors) to a core-ATen ExportedProgram."""
    try:
        return _export(model, inputs)
    except Exception as e:  # torch.export raises many types; the user needs one line
        if "is mutated in the forward method" in str(e):
            _buffers_for_mutated_constants(model)
            try:
                return _export(model, inputs)
            except Exception as again:
                e = again
        first = (str(e).strip().splitlines() or [""])[0][:300]
        raise CaptureError(f"{name}: torch.export could not trace the model ({type(e).__name__}: {first})") from None


class _ConcreteScalars(torch.overrides.TorchFunctionMode):
    """`torch.tensor(0.5)` built inside forward() stays a real (CPU) 0-d tensor under the meta device, so torch.export
    lifts it with its value and capture can fold it (lower.py): on meta its value would be lost. A CPU scalar tensor
    mixes with tensors of any device, as a Python number does."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in (torch.tensor, torch.as_tensor, torch.scalar_tensor) and args \
                and type(args[0]) in (bool, int, float):
            kwargs["device"] = "cpu"
        return func(*args, **kwargs)


def _export(model: torch.nn.Module, inputs: list) -> torch.export.ExportedProgram:
    with warnings.catch_warnings(), torch.device("meta"), recurrent_by_shape(), _ConcreteScalars():
        warnings.simplefilter("ignore")
        source = torch.export.export(model, tuple(inputs), strict=False)
        program = source.run_decompositions(decomposition_table())
    try:
        _mark_composites(source.graph, program.graph)
    except Exception:  # noqa: BLE001  provenance in another torch's format: graph mode runs the decompositions
        pass
    return program


@dataclass(frozen=True)
class Composite:
    """One op of the exported graph before decomposition, of one tensor argument: `op(*args, **kwargs)` with the
    tensor at `args[arg]`; its shape and dtype, and the result's; `size` the nodes its decomposition made."""

    op: object
    args: tuple
    kwargs: tuple
    arg: int
    arg_meta: tuple
    out_meta: tuple
    size: int


def _mark_composites(source, graph) -> None:
    """meta["composite"] on the nodes of `graph` decomposed from an op of `source` with one tensor argument (module
    docstring); deterministic, functional ops only."""
    ops = {n.name: n for n in source.nodes if n.op == "call_function"}
    made: dict[str, list] = {}
    for n in graph.nodes:
        origin = (n.meta.get("from_node") or [None])[-1]
        name, target = getattr(origin, "name", None), getattr(origin, "target", None)
        if n.op == "call_function" and name in ops and target == str(ops[name].target):
            made.setdefault(name, []).append(n)
    for name, nodes in made.items():
        if len(nodes) == 1 and nodes[0].target == ops[name].target:
            continue   # not decomposed
        composite = _composite(ops[name], len(nodes))
        for n in nodes if composite is not None else ():
            n.meta["composite"] = (name, composite)


def _composite(node, size: int) -> Composite | None:
    op = node.target
    if not isinstance(op, torch._ops.OpOverload) or op._schema.is_mutable \
            or torch.Tag.nondeterministic_seeded in op.tags:
        return None
    tensors = [i for i, a in enumerate(node.args) if isinstance(a, torch.fx.Node)]
    nested = [a for a in node.args if not isinstance(a, torch.fx.Node)
              and any(isinstance(b, torch.fx.Node) for b in torch.utils._pytree.tree_leaves(a))]
    if len(tensors) != 1 or nested or any(isinstance(v, torch.fx.Node) for v in torch.utils._pytree.tree_leaves(
            node.kwargs)):
        return None
    metas = [_meta(node.args[tensors[0]]), _meta(node)]
    if None in metas:
        return None
    args = tuple(None if i == tensors[0] else a for i, a in enumerate(node.args))
    return Composite(op, args, tuple(node.kwargs.items()), tensors[0], metas[0], metas[1], size)


def _meta(node) -> tuple | None:
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor) or not all(isinstance(d, int) for d in value.shape):
        return None
    return tuple(value.shape), value.dtype
