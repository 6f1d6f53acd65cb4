"""Lower a core-ATen ExportedProgram to the IR.

One handler per ATen op (registered in ops_*.py). Views never become nodes: they transform Views.
Everything the handlers cannot express is collected and reported in one CaptureError naming the ops.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

from kerntailor.errors import CaptureError
from kerntailor.ir.expr import Const, Expr, Load
from kerntailor.ir.nodes import Graph, GraphInput, Node, Pointwise
from kerntailor.ir.types import TensorType, View
from kerntailor.problem.spec import dtype_name

Handler = Callable[..., Any]
HANDLERS: dict[Any, Handler] = {}


def lowers(*ops: Any) -> Callable[[Handler], Handler]:
    """Register a handler for ATen overloads (or OpOverloadPackets: all their overloads)."""

    def register(fn: Handler) -> Handler:
        for op in ops:
            HANDLERS[op] = fn
        return fn

    return register


class Unsupported(Exception):
    """Raised by a handler for a use it cannot lower; collected into one CaptureError."""


@dataclass
class Lowering:
    """Mutable state while walking one FX graph: the nodes built so far and fresh names."""

    nodes: list[Node] = field(default_factory=list)
    counter: dict[str, int] = field(default_factory=dict)
    fx_node: Any = None  # the FX node being lowered (for its meta["val"])
    dtypes: dict[str, str] = field(default_factory=dict)  # buffer name -> dtype
    constants: dict[str, Const] = field(default_factory=dict)  # constant nodes, folded into users
    sources: dict[str, str] = field(default_factory=dict)  # IR node name -> the FX node that emitted it

    def dtype(self, view: View) -> str:
        return self.dtypes[view.base]

    def fresh(self, prefix: str) -> str:
        n = self.counter.get(prefix, 0)
        self.counter[prefix] = n + 1
        return f"{prefix}{n}"

    # --- what the current FX node produces ---------------------------------------------------------
    def out_type(self, index: int | None = None) -> TensorType:
        val = self.fx_node.meta["val"]
        if index is not None:
            val = val[index]
        return TensorType(tuple(int(s) for s in val.shape), dtype_name(val.dtype))

    def emit(self, node: Node) -> View:
        self.nodes.append(node)
        self.dtypes[node.name] = node.out.dtype
        self.sources[node.name] = self.fx_node.name if self.fx_node is not None else ""
        return View.of(node.name, node.out.shape)

    def pointwise(self, operands: list[View], build: Callable[[list[Expr]], Expr], out: TensorType,
                  origin: str) -> View:
        """A pointwise node over `operands`, each broadcast to `out.shape`; `build` gets their Loads.

        Operands that are constants (full, scalar_tensor) are folded into the expression, not loaded.
        """
        views: list[View] = []
        leaves: list[Expr] = []
        for v in operands:
            if v.base in self.constants:
                leaves.append(self.constants[v.base])
            else:
                leaves.append(Load(len(views), self.dtype(v)))
                views.append(v.expand(out.shape))
        expr = build(leaves)
        if isinstance(expr, Load) and len(views) == 1 and views[0].shape == out.shape and \
                self.dtype(views[0]) == out.dtype and expr.gather is None and expr.valid is None:
            return views[0]  # an identity (x * 1, x + 0): no node
        return self.emit(Pointwise(self.fresh("pw"), tuple(views), out, origin, expr))

    def constant(self, value: float | int | bool, out: TensorType, origin: str) -> View:
        view = self.emit(Pointwise(self.fresh("const"), (), out, origin, Const(value, out.dtype)))
        self.constants[view.base] = Const(value, out.dtype)
        return view

    def materialize(self, view: View, dtype: str, origin: str) -> View:
        """Copy a view into a new contiguous buffer (only when strides cannot express a reshape)."""
        out = TensorType(view.shape, dtype)
        return self.emit(Pointwise(self.fresh("copy"), (view,), out, origin, Load(0, dtype)))


def _input_kind(kind: InputKind) -> str:
    return {InputKind.USER_INPUT: "input", InputKind.PARAMETER: "parameter", InputKind.BUFFER: "buffer",
            InputKind.CONSTANT_TENSOR: "constant"}.get(kind, "input")


def _op_name(target: Any) -> str:
    return str(getattr(target, "_name", None) or getattr(target, "__name__", target)).replace("aten::", "aten.")


def lower_program(program: ExportedProgram, name: str) -> Graph:
    return lower_program_traced(program, name)[0]


def lower_program_traced(program: ExportedProgram, name: str) -> tuple[Graph, dict[str, str]]:
    """lower_program, and per IR node the name of the FX node of `program` it was lowered from (profile.py
    attributes kernels to the user's modules and extracts them as problem files through it)."""
    from kerntailor.capture import ops_anchor, ops_pointwise, ops_reduce, ops_view  # noqa: F401 (register)

    ctx = Lowering()
    env: dict[str, Any] = {}
    inputs: list[GraphInput] = []
    specs = {s.arg.name: s for s in program.graph_signature.input_specs if hasattr(s.arg, "name")}
    dtypes = ctx.dtypes
    unsupported: dict[str, str] = {}
    outputs: tuple = ()
    user_index = 0
    for fx in program.graph.nodes:
        if fx.op == "placeholder":
            val = fx.meta.get("val")
            if not isinstance(val, torch.Tensor):
                env[fx.name] = val  # a non-tensor forward argument, constant for this trace
                user_index += 1
                continue
            spec = specs.get(fx.name)
            kind = _input_kind(spec.kind) if spec else "input"
            target = spec.target if spec is not None and spec.target else f"arg{user_index}"
            if kind == "constant":   # a tensor forward() builds itself (`torch.tensor(self.value)`), lifted by export
                env[fx.name] = _lifted_constant(ctx, program, str(target), val, name)
                continue
            if kind == "input":
                user_index += 1
            ttype = TensorType(tuple(int(s) for s in val.shape), dtype_name(val.dtype))
            inputs.append(GraphInput(fx.name, ttype, kind, str(target)))
            env[fx.name] = View.of(fx.name, ttype.shape)
            dtypes[fx.name] = ttype.dtype
        elif fx.op == "call_function":
            handler = HANDLERS.get(fx.target) or HANDLERS.get(getattr(fx.target, "overloadpacket", None))
            if fx.target is operator.getitem:
                container, index = fx.args
                value = env[container.name]
                env[fx.name] = FAILED if value is FAILED else value[index]
                continue
            op_name = _op_name(fx.target)
            if handler is None:
                unsupported.setdefault(op_name, fx.name)
                env[fx.name] = FAILED
                continue
            args = _resolve(fx.args, env)
            kwargs = {k: _resolve(v, env) for k, v in fx.kwargs.items()}
            if _unusable_in(args, unsupported) or _unusable_in(list(kwargs.values()), unsupported):
                env[fx.name] = FAILED  # an input of this node was already unsupported
                continue
            ctx.fx_node = fx
            try:
                env[fx.name] = handler(ctx, *args, **kwargs)
            except Unsupported as e:
                unsupported.setdefault(f"{op_name} ({e})", fx.name)
                env[fx.name] = FAILED
            except (ValueError, TypeError, IndexError, KeyError, AssertionError, ZeroDivisionError) as e:
                # a handler's own bug on a form of the op it did not expect (var_mean.dim's positional keepdim
                # came out as a shape error): one line naming the op, the library path in generate
                first = (str(e).strip().splitlines() or [""])[0][:200]
                raise CaptureError(f"{name}: lowering {op_name} at {fx.name} failed ({type(e).__name__}: {first}); "
                                   "kerntailor cannot lower this form of the op yet") from None
        elif fx.op == "output":
            # only what forward() returns: buffer mutations (a hidden state kept on the module) are not outputs
            kinds = [spec.kind for spec in program.graph_signature.output_specs]
            outputs = tuple(_resolve(a, env) for a, kind in zip(fx.args[0], kinds) if kind == OutputKind.USER_OUTPUT)
    if unsupported:
        ops = ", ".join(sorted(unsupported))
        raise CaptureError(f"{name}: unsupported op(s) {ops}; kerntailor cannot lower these yet")
    out_types = []
    for view in outputs:
        if not isinstance(view, View):
            raise CaptureError(f"{name}: forward() returns a non-tensor value ({type(view).__name__})")
        out_types.append(TensorType(view.shape, dtypes[view.base]))
    graph = Graph(tuple(inputs), tuple(_live_nodes(ctx.nodes, outputs)), tuple(outputs), tuple(out_types))
    return graph, dict(ctx.sources)


def _lifted_constant(ctx: Lowering, program: ExportedProgram, target: str, val: torch.Tensor, name: str) -> View:
    """A one-element tensor constant folded into its users as a Const, like `full` (its value is fixed when the
    model is built: ModelNew, built from the same arguments, has no attribute holding it); an empty one too, as
    any value (it has none to read: transformers' DynamicCache starts each layer's keys as `torch.tensor([])` and
    concatenates onto it, which cat drops). A larger one has no home in the emitted module: refused in one line."""
    value = program.constants.get(target)
    if not isinstance(value, torch.Tensor) or value.numel() > 1:
        raise CaptureError(f"{name}: forward() builds a tensor constant of shape {tuple(val.shape)} "
                           f"({target}); kerntailor folds only one-element constants")
    out = TensorType(tuple(int(s) for s in val.shape), dtype_name(val.dtype))
    return ctx.constant(value.item() if value.numel() else 0, out, "constant")


def _live_nodes(nodes: list[Node], outputs: tuple) -> list[Node]:
    """Drop nodes nothing reads (constants folded into their users, identities)."""
    live = {v.base for v in outputs}
    kept = []
    for node in reversed(nodes):
        if node.name in live:
            kept.append(node)
            live.update(op.base for op in node.operands)
    return kept[::-1]


FAILED = object()  # env value of an FX node that could not be lowered


class _Unusable:
    """A tuple element that a handler cannot produce (e.g. max_pool indices); fails only if used."""

    def __init__(self, what: str) -> None:
        self.what = what


def unusable(what: str) -> _Unusable:
    return _Unusable(what)


def _resolve(value: Any, env: dict[str, Any]) -> Any:
    if isinstance(value, torch.fx.Node):
        return env.get(value.name)
    if isinstance(value, (list, tuple)):
        return type(value)(_resolve(v, env) for v in value)
    return value


def _unusable_in(values: Any, unsupported: dict[str, str]) -> bool:
    """True if any value failed to lower; a used _Unusable is recorded as unsupported."""
    for v in values:
        if v is FAILED:
            return True
        if isinstance(v, _Unusable):
            unsupported.setdefault(v.what, "")
            return True
        if isinstance(v, (list, tuple)) and _unusable_in(v, unsupported):
            return True
    return False
