"""A library group: one anchor op that has no generator (convolution, scaled-dot-product attention, a recurrent
layer stack, or an anchor its own writer refused) run by the library on the host, inside the emitted module.

    k0_conv0 = torch.ops.aten.convolution.default(x, p_conv_weight, None, [1, 1], [1, 1], [1, 1], False,
                                                  [0, 0], 1).contiguous()   # (one line in kernel.py)

The call is the exact ATen op the anchor was captured from, with the arguments its IR node holds (ir/nodes.py),
so the backend is the vendor's (cuDNN / MIOpen convolution and attention, cuDNN / oneDNN recurrent layers).
Operands are passed as the buffers themselves where the anchor reads them whole, else as `torch.as_strided`
views over them with generalized sizes, strides and offsets; fields that change between the problem's variants
(a scale of 1/sqrt(D)) are host expressions over the input sizes. Its output is made contiguous (the layout the
generated kernels after it read; a channels-last convolution's stays channels-last where they can read that,
codegen/memory_format.py), and the groups after it (bias, activation, pool, softmax) are generated.

The writer returns a GeneratedKernel with no Triton source: host lines only (`Launch.host_prologue`), defining
the group's outputs (`host_buffers`), and the names of the calls it writes (`library_calls`), which are the
only library calls the referee's static check then allows. A convolution's output sizes are derived dims
(capture/generalize.py): `host_size_lines` computes them on the host by PyTorch's formula.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Dim, Generalized, SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.helpers import channels_last_input, channels_last_weight
from kerntailor.codegen.kernel import GeneratedKernel, Launch
from kerntailor.codegen.memory_format import TORCH_FORMATS, kept_layout
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.ir.nodes import Attention, Conv, Matmul, Node, Recurrent
from kerntailor.ir.types import View, contiguous_strides
from kerntailor.plan.fusion import FusionGroup


@dataclass(frozen=True, kw_only=True)
class LibrarySchedule(Schedule):
    """Nothing to tune: the library picks its own algorithm. (The compile options it inherits are unused.)"""

    family: ClassVar[str] = "library"
    order: ClassVar[tuple[str, ...]] = ("channels_last", "num_warps", "num_stages", "waves_per_eu")
    shown: ClassVar[tuple[str, ...]] = ()

    # a 2-d/3-d convolution called on channels-last copies of its input and weight, its output left channels-last
    # where its readers can index it so (codegen/memory_format.py: the tail reads NHWC itself, as torch.compile's
    # does), else copied back to the contiguous layout. cuDNN runs other kernels there (profiles of 2026-12-01:
    # level2/65's convolution 2797 us NHWC vs 5947 us NCHW). With the output copied back it lost: 1.5x-1.9x slower
    # than NCHW on five level-2 files on the H200 in fp32 (benchmarks/conv_layout.py,
    # conv_layout_h200_fp32_2026-12-02.json: 65 ran 14086 vs 7293 us); the kept layout is not measured yet.
    channels_last: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        self.one_of("channels_last", (False, True))


def default_schedule(gen: Generalized, group: FusionGroup) -> LibrarySchedule:
    return LibrarySchedule()


def work_sizes(gen: Generalized, group: FusionGroup) -> dict[str, int]:
    """{"numel"}, and {"layouts": 2} for a convolution whose output can stay channels-last for its readers
    (memory_format.kept_layout): the search's library space then has the knob `channels_last` (measured mode times
    both; which one cuDNN or MIOpen runs faster no model here predicts)."""
    sizes = {"numel": prod(group.space)}
    node = gen.graph.node(group.nodes[0])
    if isinstance(node, Conv) and kept_layout(gen, node) is not None:
        sizes["layouts"] = 2
    return sizes


# --- the call an anchor describes ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Operand:
    """Operand `index` of the anchor node, passed as a tensor."""

    index: int


@dataclass(frozen=True)
class Field:
    """A numeric field of the anchor node (element `index` of a tuple field): a host expression where it varies
    between the problem's variants, else its value."""

    name: str
    index: int | None = None

    def value(self, node: Node):
        v = getattr(node, self.name)
        return v if self.index is None else v[self.index]


@dataclass(frozen=True)
class Call:
    """`torch.ops.<op>(*args, **kwargs)`; `results` picks elements of a tuple result (None: the result itself).
    `cast` converts the result to the node's dtype where the op's own result dtype differs."""

    op: str                                       # "aten.convolution.default"
    args: tuple
    kwargs: tuple[tuple[str, object], ...] = ()
    results: tuple[int, ...] | None = None
    cast: str | None = None

    @property
    def dotted(self) -> str:
        return f"torch.ops.{self.op}"


def library_call(node: Node) -> Call:
    """The ATen call `node` describes (CodegenUnsupported for an anchor with no library call here)."""
    if isinstance(node, Conv):
        nd = len(node.stride)
        fields = [[Field(f, i) for i in range(nd)] for f in ("stride", "padding", "dilation")]
        return Call("aten.convolution.default", (Operand(0), Operand(1), None, *fields, node.transposed,
                                                 [Field("output_padding", i) for i in range(nd)], Field("groups")))
    if isinstance(node, Attention):
        if node.written_out:
            raise CodegenUnsupported(f"{node.name}: attention written out (masked_fill, NaN for an all -inf row) has "
                                     "no library call: SDPA's semantics differ")
        mask = Operand(3) if len(node.operands) > 3 else None
        gqa = (("enable_gqa", True),) if node.operands[0].shape[-3] != node.operands[1].shape[-3] else ()
        return Call("aten.scaled_dot_product_attention.default", (Operand(0), Operand(1), Operand(2)),
                    (("attn_mask", mask), ("dropout_p", 0.0), ("is_causal", node.causal), ("scale", Field("scale")))
                    + gqa)
    if isinstance(node, Recurrent):
        states = [Operand(1 + i) for i in range(node.hidden)]
        params = [Operand(j) for j in range(1 + node.hidden, len(node.operands))]
        return Call(f"aten.{node.mode}.input", (Operand(0), states if node.mode == "lstm" else states[0], params,
                                                node.has_biases, Field("num_layers"), Field("dropout"), node.train,
                                                node.bidirectional, node.batch_first), results=())
    if isinstance(node, Matmul):   # a product its writer refused: (..., M, K) @ (..., K, N)
        return Call("aten.matmul.default", (Operand(0), Operand(1)), cast=node.out.dtype)
    raise CodegenUnsupported(f"{node.name}: no library call for a {node.family} node")


# --- host text ---------------------------------------------------------------------------------------------

TORCH_DTYPES = {"fp64": "torch.float64", "fp32": "torch.float32", "bf16": "torch.bfloat16", "fp16": "torch.float16"}


class _Host:
    """Host text of a call's arguments: operands as {buffer} names (emit.py formats them) or views of them."""

    def __init__(self, gen: Generalized, node: Node, names: dict[Dim, str]):
        self.gen, self.node, self.sizes = gen, node, SizeArgs(gen, names)

    def text(self, value) -> str:
        if isinstance(value, Operand):
            return self.operand(value.index)
        if isinstance(value, Field):
            path = ("node", self.node.name, value.name) + (() if value.index is None else (value.index,))
            v = value.value(self.node)
            if isinstance(v, bool):
                return repr(v)
            return self.sizes.host(self.gen.expr(path, v))
        if isinstance(value, (list, tuple)):
            return f"[{', '.join(self.text(v) for v in value)}]"
        return repr(value)

    def operand(self, j: int) -> str:
        """{buffer} where the node reads its whole buffer in order, else torch.as_strided over it."""
        v: View = self.node.operands[j]
        buffer = self.gen.graph.buffer_type(v.base)
        if tuple(v.shape) == buffer.shape and v.offset == 0 and tuple(v.strides) == contiguous_strides(v.shape):
            return f"{{{v.base}}}"
        base = ("node", self.node.name, "operand", j)
        shape = [self.sizes.host(self.gen.expr(base + ("shape", k), s)) for k, s in enumerate(v.shape)]
        strides = [self.sizes.host(self.gen.expr(base + ("strides", k), s)) for k, s in enumerate(v.strides)]
        offset = self.sizes.host(self.gen.expr(base + ("offset",), v.offset))
        return f"torch.as_strided({{{v.base}}}, ({', '.join(shape)},), ({', '.join(strides)},), {offset})"


def operand_host_text(gen: Generalized, node: Node, j: int, names: dict[Dim, str]) -> str:
    """Host text of operand j of `node`: its {buffer}, or a torch.as_strided view over it (emit.py formats it)."""
    return _Host(gen, node, names).operand(j)


CHANNELS_LAST = TORCH_FORMATS   # by the convolution's rank


def host_lines(gen: Generalized, group: FusionGroup, names: dict[Dim, str],
               channels_last: bool = False) -> tuple[list[str], Call]:
    """The host lines that run `group`'s anchor call and define its outputs ({node} names), and the call;
    `channels_last` (LibrarySchedule): a 2-d/3-d convolution's input (copied per call by a tiled kernel,
    `channels_last_input`: the user's tensor is NCHW) and weight (copied once per weight: `channels_last_weight`)
    in that memory format, and its output kept in it where its readers index it so (memory_format.kept_layout),
    else made contiguous."""
    node = gen.graph.node(group.nodes[0])
    text, call, layout = call_text(gen, node, names, channels_last)
    if call.results is None:
        if len(group.nodes) != 1:
            raise CodegenUnsupported(f"{group.name}: a library group of one call has nodes {group.nodes}")
        cast = f".to({TORCH_DTYPES[call.cast]})" if call.cast and call.cast != _operand_dtype(gen, node) else ""
        kept = layout is not None and kept_layout(gen, node) is not None
        contiguous = f".contiguous(memory_format={layout})" if kept else ".contiguous()"
        note = f"  (kept {layout.removeprefix('torch.')} for the kernels after it)" if kept else ""
        return [f"{{{node.name}}} = {text}{cast}{contiguous}  # {node.describe()}{note}"], call
    # a call with several results (a recurrent stack: output, h_n[, c_n]); the group's nodes are some of them
    members = {gen.graph.node(n).result: n for n in group.nodes}
    if any(not isinstance(gen.graph.node(n), Recurrent) or gen.graph.node(n).call != node.call for n in group.nodes):
        raise CodegenUnsupported(f"{group.name}: library nodes of different calls")
    count = 1 + node.hidden
    targets = ", ".join(f"{{{members[i]}}}" if i in members else "_" for i in range(count))
    lines = [f"{targets} = {text}  # {node.describe().rsplit(' -> ', 1)[0]}"]
    lines += [f"{{{n}}} = {{{n}}}.contiguous()" for n in group.nodes]
    return lines, call


def call_text(gen: Generalized, node: Node, names: dict[Dim, str],
              channels_last: bool = False) -> tuple[str, Call, str | None]:
    """The host text of `node`'s library call, the call, and the memory format a 2-d/3-d convolution's input and
    weight are given in where `channels_last` asks (None: as they are). Also the conv group's LIBRARY knob's
    product (codegen/conv_library.py): the same call as the library group's."""
    call = library_call(node)
    host = _Host(gen, node, names)
    args = [host.text(a) for a in call.args] + [f"{k}={host.text(v)}" for k, v in call.kwargs]
    layout = CHANNELS_LAST.get(len(node.out.shape)) if channels_last and isinstance(node, Conv) else None
    if layout is not None:
        args[:2] = [f"_channels_last_input({args[0]}, {layout})", _weight_text(gen, node, args[1], layout)]
    return f"{call.dotted}({', '.join(args)})", call, layout


def host_helpers(lines: list[str]) -> tuple[str, ...]:
    """The module-level host functions `lines` call (a channels-last convolution's copies)."""
    return tuple(text() for name, text in (("_channels_last_input(", channels_last_input),
                                           ("_channels_last_weight(", channels_last_weight))
                 if any(name in line for line in lines))


def _weight_text(gen: Generalized, node: Conv, text: str, layout: str) -> str:
    """The weight in `layout`: a parameter's copy is kept on the tensor itself and made again only when the
    parameter changes (its address or version: an optimizer step, load_state_dict), so a forward pays no copy;
    another tensor (a weight computed in forward) is copied per call."""
    v = node.operands[1]
    kind = next((i.kind for i in gen.graph.inputs if i.name == v.base), "")
    if kind in ("parameter", "buffer", "constant") and text == f"{{{v.base}}}":
        return f"_channels_last_weight({text}, {layout})"
    return f"{text}.contiguous(memory_format={layout})"


def _operand_dtype(gen: Generalized, node: Node) -> str:
    return gen.graph.buffer_type(node.operands[0].base).dtype


def generate_library(gen: Generalized, group: FusionGroup, schedule: LibrarySchedule, host_names: dict,
                     kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Host lines only (module docstring): no Triton source, no launch."""
    if group.family != "library":
        raise CodegenUnsupported(f"{group.name} is a {group.family} group")
    missing = [o for o in group.outputs if o not in group.nodes]
    if missing:
        raise CodegenUnsupported(f"{group.name}: outputs {missing} are not its nodes")
    if len(group.nodes) > 1 and all(isinstance(gen.graph.node(n), Matmul) for n in group.nodes):
        # products of a matmul group's library form that are its outputs and nothing else (horizontal Q, K, V
        # projections under LIBRARY=1: codegen/gemm): one call each
        parts = [host_lines(gen, replace(group, nodes=(n,)), host_names) for n in group.nodes]
        lines, calls = [line for part, _ in parts for line in part], [call for _, call in parts]
    else:
        lines, call = host_lines(gen, group, host_names, schedule.channels_last)
        calls = [call]
    launch = Launch((), (), (), (), host_prologue=tuple(lines), host_buffers=tuple(group.outputs))
    return GeneratedKernel(group.name, kernel_name, "", (), launch, host_helpers(lines),
                           library_calls=tuple(dict.fromkeys(c.dotted for c in calls)))


# --- convolution output sizes (derived dims) ---------------------------------------------------------------

def _conv_dim(node: Conv, axis: int) -> Dim:
    return Dim(-1, axis, node.name)


def derived_host_names(gen: Generalized) -> dict[Dim, str]:
    """Host variable names of every convolution's output sizes (whether or not gen.dims uses them)."""
    return {_conv_dim(n, k): f"{n.name}_o{k}" for n in gen.graph.nodes if isinstance(n, Conv)
            for k in range(len(n.out.shape))}


def output_shape(gen: Generalized, node: Node) -> list[SizeExpr]:
    """A convolution's output shape in its derived dims; another anchor's as fitted."""
    if isinstance(node, Conv):
        return [SizeExpr(Fraction(1), ((_conv_dim(node, k), Fraction(1)),)) for k in range(len(node.out.shape))]
    return [gen.expr(("node", node.name, "out", k), s) for k, s in enumerate(node.out.shape)]


def host_size_lines(gen: Generalized, node: Conv, axis: int, name: str, sizes: SizeArgs) -> list[str]:
    """Host lines setting `name` to output size `axis` of convolution `node`, by PyTorch's formula, from the
    runtime sizes of its input and weight: N; C_out = weight.shape[0] (transposed: weight.shape[1] * groups);
    spatial (x + 2p - d(k-1) - 1) // s + 1, transposed (x - 1)s - 2p + d(k-1) + output_padding + 1."""
    def slot(path: tuple, default: int) -> SizeExpr:
        return gen.expr(("node", node.name) + path, default)

    def text(e: SizeExpr) -> str:
        t = sizes.host(e)
        return t if t.isidentifier() or t.lstrip("-").isdigit() else f"({t})"

    def plus(x: str, c: int) -> str:
        return f"{x} + {c}" if c > 0 else f"{x} - {-c}" if c < 0 else x

    if axis == 0:
        return [f"{name} = {text(slot(('operand', 0, 'shape', 0), node.operands[0].shape[0]))}"]
    if axis == 1:
        if not node.transposed:
            return [f"{name} = {text(slot(('operand', 1, 'shape', 0), node.operands[1].shape[0]))}"]
        per_group = text(slot(("operand", 1, "shape", 1), node.operands[1].shape[1]))
        return [f"{name} = {per_group} * {text(slot(('groups',), node.groups))}"]
    d = axis - 2
    x = text(slot(("operand", 0, "shape", axis), node.operands[0].shape[axis]))
    parts = {"k": slot(("operand", 1, "shape", axis), node.operands[1].shape[axis]),
             "s": slot(("stride", d), node.stride[d]), "p": slot(("padding", d), node.padding[d]),
             "d": slot(("dilation", d), node.dilation[d]), "o": slot(("output_padding", d), node.output_padding[d])}
    if all(e.is_constant for e in parts.values()):   # the usual case: fold the constants
        k, st, p, dil, op = (int(parts[c].evaluate({})) for c in ("k", "s", "p", "d", "o"))
        if node.transposed:
            scaled = x if st == 1 else f"({x} - 1) * {st}"
            c = -2 * p + dil * (k - 1) + op + 1 - (1 if st == 1 else 0)
            return [f"{name} = {plus(scaled, c)}"]
        c = 2 * p - dil * (k - 1) - 1
        return [f"{name} = {plus(x, c + 1)}" if st == 1 else f"{name} = ({plus(x, c)}) // {st} + 1"]
    k, st, p, dil, op = (text(parts[c]) for c in ("k", "s", "p", "d", "o"))
    if node.transposed:
        return [f"{name} = ({x} - 1) * {st} - 2 * {p} + {dil} * ({k} - 1) + {op} + 1"]
    return [f"{name} = ({x} + 2 * {p} - {dil} * ({k} - 1) - 1) // {st} + 1"]


# --- a small call of the same op, to learn what it runs ----------------------------------------------------

def probe_shapes(node: Node) -> list[tuple[int, ...]]:
    """Operand shapes for one small call of `node`'s op with its own configuration (weights at their real
    shapes, one batch row, a few positions): what `generate` runs once, observed, to learn which operators
    the call dispatches to on the referee's device (generate/library_ops.py)."""
    shapes = [tuple(v.shape) for v in node.operands]
    if isinstance(node, Conv):
        x, w = shapes[0], shapes[1]
        spatial = []
        for d in range(len(x) - 2):
            reach = node.dilation[d] * (w[2 + d] - 1) + 1
            if node.transposed:   # smallest input with a positive output size
                size = next(n for n in range(1, 2 * reach + 2 * node.padding[d] + 2)
                            if (n - 1) * node.stride[d] - 2 * node.padding[d] + reach + node.output_padding[d] > 0)
            else:
                size = max(1, reach - 2 * node.padding[d])
            spatial.append(size)
        return [(1, x[1], *spatial), w]
    if isinstance(node, Attention):
        q, k, v = shapes[:3]
        lead = (1,) * (len(q) - 2)
        out = [lead + (3, q[-1]), lead + (3, k[-1]), lead + (3, v[-1])]
        return out + ([lead + (3, 3)] if len(shapes) > 3 else [])
    if isinstance(node, Recurrent):
        x = shapes[0]
        seq = (1, 2, x[2]) if node.batch_first else (2, 1, x[2])
        states = [(s[0], 1, s[2]) for s in shapes[1:1 + node.hidden]]
        return [seq] + states + shapes[1 + node.hidden:]
    if isinstance(node, Matmul):
        a, b = shapes
        return [tuple(min(n, 2) for n in a[:-2]) + (2, a[-1]), tuple(min(n, 2) for n in b[:-2]) + (b[-2], 2)]
    raise CodegenUnsupported(f"{node.name}: no library call for a {node.family} node")


def probe_value(value, node: Node, tensors: list):
    """An argument of `library_call(node)` for the probe: operands from `tensors`, fields at their traced values."""
    if isinstance(value, Operand):
        return tensors[value.index]
    if isinstance(value, Field):
        return value.value(node)
    if isinstance(value, (list, tuple)):
        return [probe_value(v, node, tensors) for v in value]
    return value
