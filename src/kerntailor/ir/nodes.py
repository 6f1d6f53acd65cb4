"""IR nodes and the graph. One node per operation; fusion is the planner's job, not the IR's.

Families: pointwise (an expression tree), reduction (over any set of axes), and anchors that codegen
treats as whole kernels: matmul, conv, attention, pool, scan, recurrent. Anchors without a generator carry
their ATen op's arguments, so a module can call the library for them. Every operand is a View, so layout changes
cost nothing until a kernel reads through them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from math import prod

from kerntailor.ir.expr import Expr, flops_per_element
from kerntailor.ir.types import TensorType, View

REDUCTIONS = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all")


@dataclass(frozen=True)
class Node:
    name: str                    # the buffer this node writes
    operands: tuple[View, ...]
    out: TensorType
    origin: str                  # the ATen op it came from, for reports

    family = "node"

    def flops(self) -> int:
        return 0

    def describe(self) -> str:
        return self.origin


@dataclass(frozen=True)
class Pointwise(Node):
    """out = expr per element. A concatenation (torch.cat) also records its axis and its operands' sizes along it
    (`cat_sizes`): its output size there is their sum, which the kernel's host computes (capture/generalize.py
    makes it a derived dim), as it computes a pool's output size by the pool's formula."""

    expr: Expr
    cat_axis: int = 0
    cat_sizes: tuple[int, ...] = ()     # empty unless this node is a concatenation
    family = "pointwise"

    def flops(self) -> int:
        return self.out.numel * flops_per_element(self.expr)

    def describe(self) -> str:
        from kerntailor.ir.expr import render

        return render(self.expr)


@dataclass(frozen=True)
class Reduction(Node):
    """out = op over `axes` of operand 0 (whose View has the full, unreduced shape)."""

    op: str = "sum"
    axes: tuple[int, ...] = ()
    keepdim: bool = False
    family = "reduction"

    @property
    def reduced_size(self) -> int:
        return prod(self.operands[0].shape[a] for a in self.axes)

    def flops(self) -> int:
        return self.operands[0].numel if self.op in ("sum", "prod", "max", "min") else 0

    def describe(self) -> str:
        return f"{self.op} over axes {list(self.axes)}{' keepdim' if self.keepdim else ''}"


@dataclass(frozen=True)
class Matmul(Node):
    """out[b, m, n] = Σ_k A[b, m, k] · B[b, k, n]; A and B are operands 0 and 1 (any strides)."""

    batch: tuple[int, ...] = ()
    m: int = 0
    n: int = 0
    k: int = 0
    family = "matmul"

    def flops(self) -> int:
        return 2 * prod(self.batch) * self.m * self.n * self.k

    def describe(self) -> str:
        b = f"{'x'.join(map(str, self.batch))} x " if self.batch else ""
        layout = "".join("N" if op.strides[-1] == 1 else "T" for op in self.operands[:2])
        return f"{b}({self.m}x{self.k}) @ ({self.k}x{self.n}) [{layout}]"


@dataclass(frozen=True)
class Conv(Node):
    """N-d convolution of operand 0 (N, C, *spatial) with weight operand 1 (no bias: that is an epilogue).

    The fields are `aten.convolution`'s own arguments, so the library call is
    `aten.convolution(x, w, None, stride, padding, dilation, transposed, output_padding, groups)`.
    """

    stride: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    dilation: tuple[int, ...] = ()
    groups: int = 1
    transposed: bool = False
    output_padding: tuple[int, ...] = ()   # transposed only: extra rows/columns on the high side
    family = "conv"

    def flops(self) -> int:
        weight = self.operands[1].shape  # (Cout, Cin/groups, *kernel) or transposed (Cin, Cout/g, *k)
        if self.transposed:  # every input element scatters into Cout/g channels times the kernel
            return 2 * self.operands[0].numel * prod(weight[1:])
        return 2 * self.out.numel * prod(weight[1:])

    def describe(self) -> str:
        w = self.operands[1].shape
        extra = f" output_padding {self.output_padding}" if any(self.output_padding) else ""
        dilated = f" dilation {self.dilation}" if any(d != 1 for d in self.dilation) else ""
        return (f"{'transposed ' if self.transposed else ''}conv{len(w) - 2}d kernel {tuple(w[2:])} "
                f"stride {self.stride} pad {self.padding}{dilated}{extra} groups {self.groups}")


@dataclass(frozen=True)
class Attention(Node):
    """softmax(Q Kᵀ · scale + mask) V over operands q, k, v (B, H, S, D) [+ additive/boolean mask].

    As SDPA computes it by default (fill_on None, safe_softmax True): a boolean mask keeps the keys where it is True
    and is *added* as 0 / -inf; a row with every key masked gives 0. Attention written out (capture/
    rewrite_attention.py) differs in two ways the fields say: fill_on True / False: the boolean mask *replaces* the
    scaled score by -inf where it equals fill_on (masked_fill(m, -inf) / where(m, s, -inf): a NaN score there
    becomes -inf); safe_softmax False: a row whose scores are all -inf gives NaN (softmax's exp(-inf - -inf)).
    A written-out mask proved exactly causal (capture/causal_mask.py) is no operand: causal True, fill_on None (the
    causal kernel replaces the masked scores by -inf, as masked_fill does), safe_softmax False. causal halves
    flops(): the floor of such a problem halves with it (causal_attention_masked.py: 275 -> 137 GFLOP).
    score "relu" (written out only): relu(Q Kᵀ · scale + mask) V, no softmax and no normalisation (KernelBench's
    ReLU self-attention); a masked score is -inf, so its weight is relu(-inf) = 0, and relu keeps a NaN score NaN.
    """

    scale: float = 1.0
    causal: bool = False
    fill_on: bool | None = None
    safe_softmax: bool = True
    score: str = "softmax"   # or "relu": the weights are relu(scores), not their softmax
    family = "attention"

    @property
    def written_out(self) -> bool:
        """Whether this node has semantics SDPA's call does not (module: fill_on, safe_softmax, score)."""
        return self.fill_on is not None or not self.safe_softmax or self.score != "softmax"

    def flops(self) -> int:
        q, k = self.operands[0].shape, self.operands[1].shape
        b_h = prod(q[:-2])
        s_q, d = q[-2], q[-1]
        s_k = k[-2]
        dv = self.operands[2].shape[-1]
        full = 2 * b_h * s_q * s_k * (d + dv)
        return full // 2 if self.causal else full

    def describe(self) -> str:
        extra = ((f" masked_fill where mask is {self.fill_on}" if self.fill_on is not None else "")
                 + (" relu(scores), no softmax" if self.score == "relu" else
                    "" if self.safe_softmax else " (an all -inf row: NaN)"))
        return (f"attention q{list(self.operands[0].shape)} scale {self.scale:.4g}{' causal' if self.causal else ''}"
                + extra)


@dataclass(frozen=True)
class Recurrent(Node):
    """One result of a whole recurrent layer stack (`aten.lstm`/`gru`/`rnn_tanh`/`rnn_relu`, `.input` overload).

    Operands: the sequence input, then the `hidden` initial states (2 for lstm: h0, c0; else 1), then the
    weights in `aten.<mode>.input`'s order (per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]).
    The library call is `aten.<mode>.input(x, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)[result]`, with hx a list for lstm and a tensor otherwise. The results of one
    call share `call`, so a plan can run the call once for all of them.
    """

    mode: str = "lstm"            # "lstm" | "gru" | "rnn_tanh" | "rnn_relu"
    call: str = ""                # the name shared by every result of one call
    result: int = 0               # 0: the output sequence; 1: h_n; 2: c_n (lstm)
    hidden: int = 1               # how many operands after the input are initial states
    has_biases: bool = True
    num_layers: int = 1
    dropout: float = 0.0
    train: bool = False
    bidirectional: bool = False
    batch_first: bool = False
    family = "recurrent"

    def flops(self) -> int:
        """The whole call's matrix products (counted on result 0 only, so a graph counts a call once):
        per step and direction, gates·H·(in + H_out) multiply-adds per batch row."""
        if self.result != 0:
            return 0
        x = self.operands[0].shape
        steps, batch = (x[1], x[0]) if self.batch_first else (x[0], x[1])
        weights = self.operands[1 + self.hidden:]
        per_layer = len(weights) // (self.num_layers * (2 if self.bidirectional else 1))
        w_ih = weights[::per_layer]
        w_hh = weights[1::per_layer]
        macs = sum(prod(w.shape) for w in w_ih) + sum(prod(w.shape) for w in w_hh)
        return 2 * steps * batch * macs

    def describe(self) -> str:
        what = ("output sequence", "h_n", "c_n")[self.result]
        return (f"{self.mode} x{self.num_layers}{' bidirectional' if self.bidirectional else ''}"
                f"{' batch_first' if self.batch_first else ''} -> {what} (call {self.call})")


@dataclass(frozen=True)
class Pool(Node):
    kind: str = "max"             # "max" | "avg"
    kernel: tuple[int, ...] = ()
    stride: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    dilation: tuple[int, ...] = ()
    ceil_mode: bool = False
    count_include_pad: bool = True
    divisor: int | None = None
    family = "pool"

    def flops(self) -> int:
        return self.out.numel * prod(self.kernel)

    def describe(self) -> str:
        return f"{self.kind}-pool{len(self.kernel)}d kernel {self.kernel} stride {self.stride} pad {self.padding}"


@dataclass(frozen=True)
class Scan(Node):
    op: str = "sum"               # "sum" | "prod"
    axis: int = -1
    reverse: bool = False
    exclusive: bool = False
    family = "scan"

    def flops(self) -> int:
        return self.out.numel

    def describe(self) -> str:
        return f"cum{self.op} axis {self.axis}{' reverse' if self.reverse else ''}"


def exp_of_difference(graph: Graph, name: str) -> tuple[str, View, View] | None:
    """(d, u, c) when node `name` is exp(d) of a node d = u − c (each a single op on its operands, as
    captured: exp(in0), (in0 − in1)), with u and c the views d reads; else None. The summand of softmax's
    and logsumexp's Σ exp(x − max)."""
    from kerntailor.ir.expr import Load, Op

    e = graph.node(name)
    if not (isinstance(e, Pointwise) and isinstance(e.expr, Op) and e.expr.op == "exp"
            and e.expr.args[0] == Load(0, e.expr.args[0].dtype)):
        return None
    try:
        d = graph.node(e.operands[0].base)
    except KeyError:   # exp of a graph input
        return None
    if not (isinstance(d, Pointwise) and len(d.operands) == 2 and isinstance(d.expr, Op) and d.expr.op == "sub"
            and d.expr.args == (Load(0, d.expr.args[0].dtype), Load(1, d.expr.args[1].dtype))):
        return None
    return d.name, d.operands[0], d.operands[1]


@dataclass(frozen=True)
class GraphInput:
    name: str
    type: TensorType
    kind: str          # "input" | "parameter" | "buffer" | "constant"
    target: str = ""   # parameter/buffer name in the module's state_dict, or the forward() position


@dataclass(frozen=True)
class Graph:
    inputs: tuple[GraphInput, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[View, ...]
    output_types: tuple[TensorType, ...]
    # the module's training flag when it was traced, where forward() depends on it (BatchNorm, dropout, a
    # module reading self.training); None where it does not. kernel.py checks the flag is the same at run time.
    training: bool | None = None

    def node(self, name: str) -> Node:
        return self._by_name[1][name]

    def buffer_type(self, name: str) -> TensorType:
        inputs, nodes = self._by_name
        return inputs[name].type if name in inputs else nodes[name].out

    @functools.cached_property
    def _by_name(self) -> tuple[dict[str, GraphInput], dict[str, Node]]:
        """The inputs and the nodes by name (the first of a name wins, as a scan would find it): codegen looks a
        node up at every operand it renders, and a scan per look-up made a level-3 model's searches quadratic."""
        inputs: dict[str, GraphInput] = {}
        nodes: dict[str, Node] = {}
        for i in self.inputs:
            inputs.setdefault(i.name, i)
        for n in self.nodes:
            nodes.setdefault(n.name, n)
        return inputs, nodes

    def upstream(self, starts, members, through=lambda node: True) -> list[Node]:
        """The nodes among `members` (names) that `starts` (names) read, directly or through other members,
        each once: a node's own operands are followed only when `through(node)`."""
        out: list[Node] = []
        stack, seen = list(starts), set()
        while stack:
            name = stack.pop()
            if name in seen or name not in members:
                continue
            seen.add(name)
            node = self.node(name)
            out.append(node)
            if through(node):
                stack += [op.base for op in node.operands]
        return out

    def consumers(self) -> dict[str, list[str]]:
        """Per buffer, the nodes that read it (each once, in graph order)."""
        out: dict[str, list[str]] = {n.name: [] for n in self.nodes}
        out.update({i.name: [] for i in self.inputs})
        for n in self.nodes:
            for base in dict.fromkeys(op.base for op in n.operands):
                out[base].append(n.name)
        return out
