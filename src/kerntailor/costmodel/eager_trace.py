"""What eager PyTorch launches for a problem: its forward run on meta tensors, one record per ATen op dispatched.

The captured graph (capture/) is decomposed to core ATen, where `softmax` is five nodes (amax, sub, exp, sum,
div); eager PyTorch runs one softmax kernel. So the eager baseline is traced here, at the level eager
dispatches: a TorchDispatchMode over the model's forward on meta tensors (nothing is allocated or computed)
records each ATen op with the bytes it reads and writes and, for matrix products, convolutions and attention,
its FLOPs (torch.utils.flop_counter's formulas).

- A view (an op whose outputs alias an input without writing it: view, transpose, expand, slice, detach, ...)
  moves nothing and launches nothing: not recorded. So are ops with no tensor output and `empty*` (an
  allocation, no kernel).
- Bytes read: each distinct tensor argument once, its distinct elements only (a stride-0 broadcast axis is
  read once), at most its storage; bytes written: every tensor output.
- `F.scaled_dot_product_attention` on meta tensors runs PyTorch's math fallback (a matmul, a softmax, a matmul,
  materialising the S x S scores); on a GPU eager runs one fused flash/efficient kernel. It is recorded as that
  one op (a TorchFunctionMode sees the call before it decomposes), its FLOPs 4 x B x H x Sq x Sk x D.
- `nn.RNN` / `nn.LSTM` / `nn.GRU` (`torch._VF.rnn_tanh`, `rnn_relu`, `lstm`, `gru`) decompose on meta tensors
  into their per-step ops (40,000 for KernelBench's 6-layer LSTM); on a GPU eager makes one cuDNN / MIOpen call.
  Each is recorded as that one library op, its FLOPs the sum of the matrix products it decomposed into.
- Each op carries the path of the innermost module whose forward dispatched it (`profile` attributes time to
  the user's modules through it).
- Not modelled: a kernel count per op above one, and a library call's time beyond its FLOPs and bytes (a
  recurrent call's steps run one after another; its time is underestimated).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from math import prod

RECURRENT_CALLS = frozenset({"rnn_tanh", "rnn_relu", "lstm", "gru"})   # torch._VF functions behind nn.RNN & co
MATRIX_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "convolution", "_convolution",
                        "cudnn_convolution", "convolution_overrideable", "_slow_conv2d_forward",
                        "scaled_dot_product_attention"})


@dataclass(frozen=True)
class EagerOp:
    """One ATen op eager PyTorch dispatches: one kernel launch."""

    op: str               # "aten._softmax.default"
    flops: int            # matrix FLOPs (products, convolutions, attention); elementwise work is not counted
    bytes_read: int
    bytes_written: int
    dtype: str            # the dtype of its first floating tensor argument (the rate key), "fp32" if none
    matrix: bool          # runs on the matrix units at the library's rate
    module: str = ""      # the innermost module whose forward dispatched it ("network.0"; "" the model itself)


def _tensors(tree) -> list:
    import torch
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]


def distinct_bytes(t) -> int:
    """Bytes of a tensor's distinct elements (stride-0 axes once), at most its storage."""
    distinct = prod(s for s, st in zip(t.shape, t.stride()) if st != 0) if t.dim() else 1
    nbytes = distinct * t.element_size()
    try:
        return min(nbytes, t.untyped_storage().nbytes())
    except (RuntimeError, NotImplementedError):
        return nbytes


def _dtype_key(tensors) -> str:
    from kerntailor.problem.spec import dtype_name

    for t in tensors:
        if t.is_floating_point():
            return dtype_name(t.dtype)
    return "fp32"


def _is_view(func) -> bool:
    """Whether every output aliases an input without writing it (a view, not an in-place op)."""
    returns = func._schema.returns
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


# ops that read their first tensor (a table) only where their indices point: at most as many of its bytes as they
# write (an embedding of 32 tokens reads 32 rows of its 128256, not the 525 MB table)
GATHERS = ("embedding", "index_select", "index", "gather")


def _record(name: str, args: list, outputs: list, flops: int, matrix: bool, module: str = "") -> EagerOp:
    seen, read = set(), 0
    written = sum(t.numel() * t.element_size() for t in outputs)
    gather = name.split(".")[1] in GATHERS if name.count(".") >= 2 else False
    for j, t in enumerate(args):
        key = (id(t.untyped_storage()) if t.device.type != "meta" else id(t), t.shape, t.stride(),
               t.storage_offset())
        if key not in seen:
            seen.add(key)
            read += min(distinct_bytes(t), written) if gather and j == 0 else distinct_bytes(t)
    return EagerOp(name, int(flops), read, written, _dtype_key(args), matrix, module)


def trace_eager(problem, variant: str = "default") -> tuple[EagerOp, ...]:
    """The ATen ops eager PyTorch runs for `problem`'s forward at `variant`'s sizes (module docstring)."""
    model = problem.make_model(variant, device="meta")
    inputs = problem.make_inputs(variant, device="meta")
    return trace_forward(model, inputs)


def trace_forward(model, inputs: list, ranges: str | None = None) -> tuple[EagerOp, ...]:
    """The ATen ops `model(*inputs)` dispatches, as trace_eager records them, on whatever device its tensors are.

    `ranges`: a prefix; each recorded op then runs inside a profiler range (torch.profiler.record_function)
    named `<prefix><its index in the result>`, so that a torch.profiler run can give each op its device time
    (profiling/measured.py). An op not recorded (a view, an allocation) runs inside the range of the next
    recorded op's index: it launches nothing, or its kernel's time goes with the op after it."""
    import contextlib

    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    from kerntailor.problem.load import fake_forward, reads_values

    ops: list[EagerOp] = []
    stack = [""]                  # the module paths whose forward is running, innermost last
    calls: list[list[int]] = []   # per library call being traced, the matrix FLOPs of the ops it decomposed into

    def span():
        """The profiler range of the op recorded next (none inside a library call: its range is the call's)."""
        if ranges is None or calls:
            return contextlib.nullcontext()
        return torch.profiler.record_function(f"{ranges}{len(ops)}")

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            with span():
                out = func(*args, **kwargs)
            outputs = _tensors(out)
            if not outputs or _is_view(func) or func.overloadpacket.__name__.startswith("empty"):
                return out
            packet = func.overloadpacket
            matrix = packet.__name__ in MATRIX_OPS
            flops = flop_registry[packet](*args, **kwargs, out_val=out) if matrix and packet in flop_registry else 0
            if calls:   # inside a library call: its FLOPs count, not its own launch
                calls[-1][0] += int(flops)
                return out
            ops.append(_record(str(func), _tensors((args, kwargs)), outputs, flops, matrix, stack[-1]))
            return out

    class Functions(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            library = func is F.scaled_dot_product_attention or name in RECURRENT_CALLS
            if not library or calls:
                return func(*args, **kwargs)
            with span():
                calls.append([0])
                try:
                    out = func(*args, **kwargs)
                finally:
                    inner = calls.pop()[0]
            if func is F.scaled_dot_product_attention:
                q, k, v = args[:3]
                flops = 2 * prod(q.shape[:-1]) * k.shape[-2] * (q.shape[-1] + v.shape[-1])
                name = "scaled_dot_product_attention"
            else:
                flops = inner
            ops.append(_record(f"aten.{name}", _tensors((args, kwargs)), _tensors(out), flops, True, stack[-1]))
            return out

    try:
        with torch.no_grad(), Functions(), Dispatch(), _module_paths(model, stack):
            model(*inputs)
    except Exception as e:
        if not reads_values(e):
            raise
        # a value read where the forward is not traced: the traced path on fake tensors, as the loader and the
        # capture see it (problem/load.py fake_forward)
        ops.clear()
        del stack[1:]
        fake_forward(model, inputs, Functions(), Dispatch(), _module_paths(model, stack))
    return tuple(ops)


@contextmanager
def _module_paths(model, stack: list[str]):
    """Keep `stack` at the paths (as named_modules names them) of the modules whose forward is running."""
    names = {id(m): name for name, m in model.named_modules()}

    def enter(mod, args) -> None:   # a hook's return value would replace the module's inputs or output
        stack.append(names.get(id(mod), stack[-1]))

    def leave(mod, args, out) -> None:
        stack.pop()

    hooks = []
    for m in model.modules():
        hooks.append(m.register_forward_pre_hook(enter))
        hooks.append(m.register_forward_hook(leave))
    try:
        yield
    finally:
        for h in hooks:
            h.remove()
