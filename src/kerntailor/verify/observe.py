"""What a candidate's forward actually ran: every PyTorch operator, however the call was spelled.

    with observed(allowed_ops=frozenset(), device_type="cuda") as seen:
        out = model(*inputs)
    seen.findings()   # ["ran aten._softmax.default (PyTorch compute) 1x", "Tensor.numpy() 1x (...)"]

The static check reads names (`torch.softmax`); a candidate that spells the call `getattr(t, 'soft'+'max')`,
`torch.__dict__[...]`, a default argument or `builtins.getattr` gets past it. This looks below the spelling:
a TorchDispatchMode sees each ATen operator that runs (composite calls arrive decomposed: torch.matmul as
aten.mm, F.linear as aten.addmm or aten.mm), and a TorchFunctionMode sees the Tensor methods that hand data to
the host without an operator (numpy(), tolist(), numpy.asarray). Findings:

- an operator outside PLUMBING_OPS (allocation, views, copies, casts, fills) that the caller did not allow
  (`allowed_ops`, full names such as "aten.mm.default": a generated module's own library call);
- a read of tensor data on the host: Tensor.item() / float() / int() / bool() (aten._local_scalar_dense),
  numpy(), tolist(), and on the GPU any copy of a device tensor to the host;
- a custom operator whose implementation cannot be observed (one registered with torch.library.custom_op
  is followed into its Python implementation, so what it runs is seen, and seen as a call from forward() would
  be: a custom op's kernel runs below autograd, where composite operators are not yet decomposed, so this mode
  decomposes them itself (torch.matmul is recorded as aten.mm, not aten.matmul; Tensor.item() as a host read),
  and the Tensor-method mode is re-entered for the host reads that dispatch nothing (numpy(), tolist()).
  kernel.py runs its launches as such an op (codegen/customop.py).

Triton kernel launches do not go through the dispatcher. Under Triton's interpreter, what the interpreter
itself does to its arguments (copies to and from the host) is not the candidate's: interp.py marks that
bookkeeping and it is not recorded, while a kernel body's own calls are.

The modes live in the candidate's own process, so a candidate that rewrites this module or pops the modes
off the dispatcher's stack could hide its calls; doing so takes code the static check's rule "reach" names
(sys.modules, kerntailor, torch._C, torch.utils._python_dispatch, frames, ...). The values it returns are
judged in the judge's process either way.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass, field

from kerntailor.verify import interp

# ATen operator packets (the name without the overload) that only allocate, view, copy or describe
PLUMBING_OPS = frozenset({
    # allocation and fills
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "ones",
    "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full", "arange", "scalar_tensor",
    "lift", "lift_fresh", "lift_fresh_copy", "fill_", "zero_", "resize_", "set_",
    # views and layout
    "view", "_unsafe_view", "_reshape_alias", "reshape", "as_strided", "expand", "permute", "t", "transpose",
    "squeeze", "unsqueeze", "select", "slice", "narrow", "split", "split_with_sizes", "unsafe_split",
    "unbind", "chunk", "alias", "detach", "view_as_real", "view_as_complex", "movedim", "flatten", "unflatten",
    "expand_as", "view_as", "contiguous", "_conj", "_neg_view",
    # copies and casts
    "copy_", "clone", "_to_copy", "_copy_from", "_copy_from_and_resize", "to",
    # description and bookkeeping
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "record_stream",
    "_has_compatible_shallow_copy_type", "is_pinned", "_pin_memory", "pin_memory",
})
HOST_READ_OP = "_local_scalar_dense"
HOST_METHODS = {"numpy": "Tensor.numpy()", "tolist": "Tensor.tolist()", "__array__": "numpy.asarray(tensor)"}
DEVICE_COPIES = ("_to_copy", "copy_", "_copy_from", "_copy_from_and_resize")


@dataclass
class Seen:
    """What one forward ran, beyond plumbing: operator name -> count, host reads -> count."""

    allowed: frozenset[str] = frozenset()
    ops: Counter = field(default_factory=Counter)
    host: Counter = field(default_factory=Counter)
    opaque: Counter = field(default_factory=Counter)

    def findings(self) -> list[str]:
        out = [f"ran {name} (a PyTorch operator, not a kernel) {n}x" for name, n in self.ops.most_common()]
        out += [f"read tensor data on the host: {what} {n}x" for what, n in self.host.most_common()]
        out += [f"called the custom operator {name}, whose implementation cannot be observed {n}x"
                for name, n in self.opaque.most_common()]
        return out


def _packet(func) -> tuple[str, str]:
    """(namespace, packet name) of an OpOverload, e.g. ("aten", "_softmax")."""
    schema = func._schema.name   # "aten::_softmax"
    namespace, _, name = schema.partition("::")
    return namespace, name


def _python_impl(func, device_type: str):
    """The Python function behind a torch.library.custom_op, or None."""
    try:
        from torch._library.custom_ops import OPDEFS
    except ImportError:
        return None
    opdef = OPDEFS.get(func._schema.name)
    if opdef is None:
        return None
    return opdef._backend_fns.get(device_type) or opdef._init_fn


def _device_to_host(packet: str, args, kwargs) -> bool:
    import torch

    def dev(x):
        return x.device.type if isinstance(x, torch.Tensor) else None

    if packet == "_to_copy":
        target = kwargs.get("device")
        return dev(args[0]) not in (None, "cpu") and target is not None and torch.device(target).type == "cpu"
    if packet in ("copy_", "_copy_from_and_resize"):
        return len(args) > 1 and dev(args[0]) == "cpu" and dev(args[1]) not in (None, "cpu")
    if packet == "_copy_from":
        return len(args) > 1 and dev(args[0]) not in (None, "cpu") and dev(args[1]) == "cpu"
    return False


def _composite(func) -> bool:
    """Whether an operator has a CompositeImplicitAutograd kernel (made of other operators: aten.matmul, item)."""
    import torch

    return torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), torch._C.DispatchKey.CompositeImplicitAutograd)


def _modes(seen: Seen, device_type: str):
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in HOST_METHODS and not interp.in_bookkeeping():
                seen.host[HOST_METHODS[name]] += 1
            return func(*args, **(kwargs or {}))

    function = Function()

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if interp.in_bookkeeping():
                return func(*args, **kwargs)
            namespace, packet = _packet(func)
            if namespace not in ("aten", "prim", "prims"):
                impl = _python_impl(func, device_type)
                if impl is not None and str(func) not in seen.allowed:
                    # observe what the custom op's Python implementation runs, as if forward() ran it: both modes
                    # (Python-level host reads, numpy() and tolist(), dispatch no operator)
                    with function, self:
                        return impl(*args, **kwargs)
                if str(func) not in seen.allowed:
                    seen.opaque[str(func)] += 1
                return func(*args, **kwargs)
            if str(func) not in seen.allowed and _composite(func):
                # a composite reaches this mode only below autograd (inside a custom op, whose kernel runs there):
                # decomposed, it is recorded as what forward() would have run (aten.matmul as aten.mm, item as
                # _local_scalar_dense, to as _to_copy)
                with self:
                    out = func.decompose(*args, **kwargs)
                if out is not NotImplemented:
                    return out
            if packet == HOST_READ_OP:
                seen.host["Tensor.item() (or float(), int(), bool() of a tensor)"] += 1
            elif packet in DEVICE_COPIES and _device_to_host(packet, args, kwargs):
                seen.host[f"copied a {device_type} tensor to the host ({func})"] += 1
            elif packet not in PLUMBING_OPS and str(func) not in seen.allowed:
                seen.ops[str(func)] += 1
            return func(*args, **kwargs)

    # TorchDispatchMode wraps __torch_dispatch__ so that torch.compile skips it, importing torch._dynamo on
    # the first call: 2.3 s of the first verification run on this machine (2-core CPU, 2026-12-01), for a
    # wrapper nothing here needs. Pointing the wrapper at the function itself skips that import.
    raw = getattr(Dispatch.__torch_dispatch__, "__wrapped__", None)
    if raw is not None:
        raw.__dynamo_disable = raw
    return function, Dispatch()


@contextlib.contextmanager
def observed(allowed_ops: frozenset[str] = frozenset(), device_type: str = "cpu"):
    """Record what runs inside the block (see the module docstring); yields the Seen."""
    seen = Seen(allowed=frozenset(allowed_ops))
    function_mode, dispatch_mode = _modes(seen, device_type)
    with function_mode, dispatch_mode:
        yield seen
