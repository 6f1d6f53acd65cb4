"""Attention written out, recognised as one Attention node: a graph rewrite after lowering, before the plan.

MinGPT's attention (and every hand-written one like it)

    att = (q @ k.transpose(-2, -1)) * scale          # or / c
    att = att.masked_fill(mask, float("-inf"))       # or torch.where(mask, att, -inf), or att + bias
    y = torch.softmax(att, dim=-1) @ v

lowers to two bmm anchors around softmax's decomposition (amax, sub, exp, sum, div; in 16 bits a cast to fp32
before it and back after), with the T x T score matrix written between them. `rewrite_attention` replaces that
chain by one Attention node over the same q, k, v (and mask) views, so codegen/attention.py writes one
flash-attention kernel and the scores are never written. The chain must be exactly

    Matmul(Q, Kᵀ) -> [scale: x * c, c * x or x / c] -> [mask] -> [cast to fp32] -> softmax over the last axis
                  -> [cast back] -> Matmul(., V)

with [mask] one of: where(m, -inf, x) (masked_fill), where(m, x, -inf) over a *boolean* m, or x + b over a float
b (an additive bias). In place of the softmax (and its casts) the chain may apply relu to the scores (ReLU
self-attention: relu(mask(Q Kᵀ · scale)) @ V, no normalisation): the node's `score` is then "relu". Every
intermediate buffer must have no reader outside the chain and must not be a graph output; anything else leaves
the graph exactly as it was (the matmul path keeps working).

Head layouts stay views: q, k and v are the products' operands read at the scores' leading dims, and where a
product reads a copy that torch.matmul made of a transposed head layout (MinGPT's split + view + transpose), the
copy's source instead (the copy dies). A graph that changed has its nodes renumbered (`_renumbered`).

Semantics kept exactly (the referee's NaN / Inf draws check them):
- a mask computed in the graph from iota / arange and one comparison that causal_mask.py proves to be exactly
  the causal pattern (key j kept for row i iff j <= i, at every size) is dropped and the node is `causal`: the
  kernel skips the key blocks above the diagonal and replaces the masked scores by -inf, as masked_fill does
  (fill_on None, safe_softmax False: no causal row is all masked, since key 0 is kept, but scores of -inf from q
  and k still make a NaN row). Any other mask is an operand, never read for its values here: a registered tril
  buffer stays one (a state_dict load may change its values after capture; proving it would need kernel.py to
  check the loaded buffer at run time: not done), and so does an additive mask (s + -inf is NaN at a NaN score);
- masked_fill *replaces* the scaled score (a NaN score at a masked key becomes -inf), where SDPA's boolean mask
  is *added* as 0 / -inf: `Attention.fill_on` says which;
- the written-out softmax of a row whose scores are all -inf is NaN (exp(-inf - -inf)), where SDPA's
  `_safe_softmax` gives 0: `Attention.safe_softmax` is False here;
- the scale is applied before the mask (a scale after the mask is not matched).
Dropout needs no case: in eval or at p = 0 export leaves no node, and a dropout that draws random numbers fails
capture (ops_anchor._random).

The rewrite is refused where codegen/attention.py would refuse the node at the traced shapes (operand dtypes,
head dims past its 256), because a refused Attention falls back to the library, whose SDPA call does not have
these semantics (codegen/library.py refuses a written-out node).
"""

from __future__ import annotations

import math
from dataclasses import replace

from kerntailor.capture.causal_mask import proves_causal
from kerntailor.ir.expr import CAST, Const, Load, Op
from kerntailor.ir.nodes import Attention, Graph, Matmul, Node, Pointwise, Reduction, exp_of_difference
from kerntailor.ir.types import View

# codegen/attention.py's limits (MATRIX_DTYPES, MAX_HEAD_DIM); capture may not import codegen (test_layering.py)
OPERAND_DTYPES = ("fp32", "bf16", "fp16")
MASK_DTYPES = ("fp32", "bf16", "fp16", "fp64")
MAX_HEAD_DIM = 256


def rewrite_attention(graph: Graph, prove_causal: bool = True) -> Graph:
    """`graph` with every written-out attention chain (module docstring) replaced by one Attention node; where any
    was, its nodes renumbered (below). `prove_causal`: a mask computed in the graph that causal_mask.py proves to be
    exactly the causal pattern becomes `causal=True` with no mask operand (capture.py turns it off where the variants
    disagree)."""
    original = graph
    while True:
        consumers = graph.consumers()
        for node in graph.nodes:
            if isinstance(node, Matmul):
                found = _match(graph, node, consumers, prove_causal)
                if found is not None:
                    graph = _replace(graph, node, *found)
                    break
        else:
            return graph if graph is original else _renumbered(graph)


def _renumbered(graph: Graph) -> Graph:
    """Nodes named <prefix><n> (as Lowering.fresh names them) numbered again in graph order, per prefix.

    The copies torch.matmul makes of transposed heads exist only at some sizes (a batch of 1 needs none) and die
    here, so the names after them would differ between variants while the graph is the same; generalize.py
    compares variants by name. Recurrent results (named after their call) keep their names."""
    import re

    from kerntailor.ir.nodes import Recurrent

    counts: dict[str, int] = {}
    names: dict[str, str] = {}
    for n in graph.nodes:
        m = re.fullmatch(r"([a-z]+)(\d+)", n.name)
        if m is None or isinstance(n, Recurrent):
            continue
        names[n.name] = f"{m.group(1)}{counts.get(m.group(1), 0)}"
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    taken = {n.name for n in graph.nodes if n.name not in names} | {i.name for i in graph.inputs}
    if taken & set(names.values()):
        return graph   # a new name would collide with one kept: leave the names as they are

    def rebase(view: View) -> View:
        return replace(view, base=names.get(view.base, view.base))

    nodes = tuple(replace(n, name=names.get(n.name, n.name), operands=tuple(rebase(o) for o in n.operands))
                  for n in graph.nodes)
    return replace(graph, nodes=nodes, outputs=tuple(rebase(o) for o in graph.outputs))


# --- matching -----------------------------------------------------------------------------------------------

def _pointwise(graph: Graph, view: View) -> Pointwise | None:
    """The pointwise node `view` reads as a whole (same elements, row-major), else None."""
    node = _producer(graph, view)
    return node if isinstance(node, Pointwise) and _whole(view, node) else None


def _producer(graph: Graph, view: View) -> Node | None:
    try:
        return graph.node(view.base)
    except KeyError:
        return None


def _whole(view: View, node: Node) -> bool:
    """`view` reads every element of `node`'s buffer once in row-major order (a contiguous reshape)."""
    return view.base == node.name and view.is_contiguous and view.numel == node.out.numel


def _unary(node: Pointwise, op: str) -> bool:
    """node = op(in0) over its single operand."""
    e = node.expr
    return (len(node.operands) == 1 and isinstance(e, Op) and e.op == op and len(e.args) == 1
            and _plain(e.args[0], 0))


def _plain(e, operand: int) -> bool:
    return isinstance(e, Load) and e.operand == operand and e.gather is None and e.valid is None


def _is_cast(node: Pointwise, dtype: str) -> bool:
    return _unary(node, CAST) and node.out.dtype == dtype


def _binary(node: Pointwise, op: str) -> bool:
    """node = op(in0, in1) over its two operands."""
    e = node.expr
    return (len(node.operands) == 2 and isinstance(e, Op) and e.op == op
            and _plain(e.args[0], 0) and _plain(e.args[1], 1))


def _row_stat(graph: Graph, view: View, op: str, full: View) -> Reduction | None:
    """The Reduction `op` over the last axis of `full` that `view` broadcasts back along that axis, else None."""
    node = _producer(graph, view)
    if not (isinstance(node, Reduction) and node.op == op and len(node.operands) == 1
            and _same_elements(node.operands[0], full)):
        return None
    last = len(full.shape) - 1
    if node.axes not in ((last,), (-1,)):
        return None
    rows = full.shape[:-1]
    if node.out.shape != (rows if not node.keepdim else rows + (1,)):
        return None
    # the statistic read once per row: stride 0 along the reduced axis, the row's own element elsewhere
    kept = View.of(node.name, node.out.shape)
    expected = (kept.unsqueeze(-1) if not node.keepdim else kept).expand(full.shape)
    return node if _same_elements(view, expected) else None


def _same_elements(a: View, b: View) -> bool:
    """a and b address the same elements (the stride of a size-1 axis is never used)."""
    return (a.base == b.base and a.shape == b.shape and a.offset == b.offset
            and all(s == 1 or x == y for s, x, y in zip(a.shape, a.strides, b.strides)))


def _softmax(graph: Graph, view: View) -> tuple[View, list[Node]] | None:
    """(x, nodes) where `view` reads softmax(x, dim=-1) as decomposed (max, sub, exp, sum, div), x its input
    view; nodes: the decomposition's nodes."""
    div = _pointwise(graph, view)
    if div is None or not _binary(div, "div"):
        return None
    e_view, s_view = div.operands
    exp = _producer(graph, e_view)
    if exp is None or not _whole(e_view, exp) or e_view.shape != div.out.shape:
        return None
    total = _row_stat(graph, s_view, "sum", e_view)
    found = exp_of_difference(graph, exp.name)
    if total is None or found is None:
        return None
    d_name, x, m_view = found
    sub = graph.node(d_name)
    if not _whole(exp.operands[0], sub) or exp.operands[0].shape != sub.out.shape or sub.out.shape != div.out.shape:
        return None
    top = _row_stat(graph, m_view, "max", x)
    if top is None or x.shape != div.out.shape:
        return None
    if any(n.out.dtype != div.out.dtype for n in (sub, exp, total, top)):
        return None
    return x, [top, sub, exp, total, div]


def _relu(graph: Graph, probs: View, p_view: View) -> tuple[View, list[Node]] | None:
    """(x, [relu]) where `probs` (the weights P @ V reads, no cast before them) reads relu(x) whole; else None."""
    node = _pointwise(graph, probs)
    if probs.base != p_view.base or node is None or not _unary(node, "relu") or node.operands[0].shape != \
            node.out.shape:
        return None
    return node.operands[0], [node]


def _scale(node: Pointwise) -> float | None:
    """c where node = in0 * c, c * in0 or in0 / c (as 1 / c), over its single operand; else None."""
    e = node.expr
    if len(node.operands) != 1 or not isinstance(e, Op) or e.op not in ("mul", "div") or len(e.args) != 2:
        return None
    a, b = e.args
    if _plain(a, 0) and isinstance(b, Const) and not isinstance(b.value, bool):
        c = float(b.value)
        if e.op == "div":
            return 1.0 / c if c != 0 and math.isfinite(c) else None
        return c if math.isfinite(c) else None
    if e.op == "mul" and _plain(b, 0) and isinstance(a, Const) and not isinstance(a.value, bool):
        c = float(a.value)
        return c if math.isfinite(c) else None
    return None


def _mask(graph: Graph, node: Pointwise) -> tuple[int, View, bool | None] | None:
    """(i, mask view, fill_on) where `node` masks its operand i (the scores): where(m, -inf, x) (fill_on True),
    where(m, x, -inf) (False) over a boolean m, or x + b over a float b (None: additive); else None."""
    e = node.expr
    if not isinstance(e, Op):
        return None
    if e.op == "where" and len(node.operands) == 2 and _plain(e.args[0], 0):
        if graph.buffer_type(node.operands[0].base).dtype != "bool":
            return None
        if _minus_inf(e.args[1]) and _plain(e.args[2], 1):
            return 1, node.operands[0], True
        if _minus_inf(e.args[2]) and _plain(e.args[1], 1):
            return 1, node.operands[0], False
        return None
    if _binary(node, "add"):
        for i in (0, 1):
            bias = node.operands[1 - i]
            if graph.buffer_type(bias.base).dtype in MASK_DTYPES:
                return i, bias, None   # which one is the scores is decided by the caller (the matmul side)
    return None


def _minus_inf(e) -> bool:
    return isinstance(e, Const) and not isinstance(e.value, bool) and e.value == float("-inf")


def _match(graph: Graph, pv: Matmul, consumers: dict[str, list[str]], prove_causal: bool = True):
    """The written-out attention ending in `pv` (= P @ V): (Attention fields, operands, chain nodes), else None."""
    if len(pv.operands) != 2 or not pv.batch:
        return None
    p_view, v = pv.operands
    chain: list[Node] = []
    p = _pointwise(graph, p_view)
    if p is None or p.out.shape[-2:] != p_view.shape[-2:]:
        return None
    probs = View.of(p.name, p.out.shape)
    below = _pointwise(graph, p.operands[0]) if p.operands else None
    if _is_cast(p, graph.buffer_type(v.base).dtype) and below is not None and p.operands[0].shape == p.out.shape:
        chain.append(p)
        probs = p.operands[0]
    score, found = "softmax", _softmax(graph, probs)
    if found is None:
        found, score = _relu(graph, probs, p_view), "relu"
        if found is None:
            return None
    x, soft = found
    chain += soft
    shape = x.shape                                  # (..., Tq, Tk): the scores' shape
    node = _pointwise(graph, x)
    if score == "softmax" and node is not None and x.shape == node.out.shape and _is_cast(node, "fp32") \
            and graph.buffer_type(node.operands[0].base).dtype in ("bf16", "fp16"):
        chain.append(node)                           # 16-bit scores cast up for the softmax
        x = node.operands[0]
        node = _pointwise(graph, x)
    fill_on, mask = None, None
    if node is not None and x.shape == node.out.shape:
        masked = _mask(graph, node)
        if masked is not None:
            i, m, fill = masked
            if fill is None:   # additive: the scores are the operand that leads back to Q Kᵀ
                i = next((j for j in (0, 1) if _leads_to_qk(graph, node.operands[j], shape)), None)
                if i is None:
                    return None
                m = node.operands[1 - i]
            chain.append(node)
            fill_on, mask = fill, m
            x = node.operands[i]
            node = _pointwise(graph, x)
    scale = 1.0
    if node is not None and x.shape == node.out.shape and _scale(node) is not None:
        chain.append(node)
        scale = _scale(node)
        x = node.operands[0]
    qk = _producer(graph, x)
    if not (isinstance(qk, Matmul) and len(qk.operands) == 2 and _whole(x, qk) and x.shape == shape
            and qk.out.shape[-2:] == shape[-2:] and qk.batch == pv.batch and qk.m == pv.m and qk.n == pv.k):
        return None
    chain.append(qk)
    if any(n.name in {o.base for o in graph.outputs} for n in chain):
        return None
    names = {n.name for n in chain}
    if any(set(consumers[n.name]) - names - {pv.name} for n in chain):
        return None   # some score, probability or statistic has a reader outside the chain
    if v.base in names or (mask is not None and mask.base in names) or any(o.base in names for o in qk.operands):
        return None   # an operand of the attention computed inside the chain (softmax(s) @ s)
    found = _attention(graph, pv, qk, shape, scale, mask, fill_on, chain, consumers, prove_causal)
    return None if found is None else found + (score,)


def _leads_to_qk(graph: Graph, view: View, shape: tuple[int, ...]) -> bool:
    """Whether `view` reads, whole, a scale of a Matmul or the Matmul itself (the scores side of an add)."""
    node = _producer(graph, view)
    if isinstance(node, Pointwise) and _whole(view, node) and _scale(node) is not None:
        view = node.operands[0]
        node = _producer(graph, view)
    return isinstance(node, Matmul) and _whole(view, node) and view.shape == shape


def _attention(graph: Graph, pv: Matmul, qk: Matmul, shape, scale, mask, fill_on, chain, consumers,
               prove_causal: bool = True):
    """The Attention over q, k, v read at the scores' leading dims (shape[:-2]), or None where a view cannot
    express it or codegen/attention.py would refuse it. A mask proved causal (causal_mask.py) is dropped: the node
    is causal, its masked keys replaced by -inf as masked_fill replaces them (fill_on None then)."""
    lead = tuple(shape[:-2])
    q3, kt3 = qk.operands
    v3 = pv.operands[1]
    q = _operand(graph, q3, lead, qk, consumers)
    kt = _operand(graph, kt3, lead, qk, consumers)
    v = _operand(graph, v3, lead, pv, consumers)
    if q is None or kt is None or v is None:
        return None
    k = kt.permute(tuple(range(len(lead))) + (len(lead) + 1, len(lead)))   # (..., Tk, D)
    out_shape = lead + (pv.m, pv.n)
    if pv.out.numel != math.prod(out_shape) or pv.out.shape[-2:] != out_shape[-2:]:
        return None
    dtypes = {graph.buffer_type(o.base).dtype for o in (q, k, v)}
    if len(dtypes) != 1 or pv.out.dtype not in dtypes or pv.out.dtype not in OPERAND_DTYPES:
        return None
    if max(q.shape[-1], v.shape[-1]) > MAX_HEAD_DIM:
        return None
    operands, causal = (q, k, v), False
    if mask is not None:
        if mask.shape != shape:
            return None
        if prove_causal and proves_causal(graph, mask, fill_on):
            causal, fill_on = True, None
        else:
            operands += (mask,)
    return operands, out_shape, scale, fill_on, causal, chain


def _operand(graph: Graph, view: View, lead: tuple[int, ...], reader: Matmul, consumers) -> View | None:
    """`view` (a product's operand, batch dims flattened) read at the scores' leading dims `lead`; where it reads,
    whole, a copy that only this product reads (torch.matmul's reshape of a transposed head layout, `.contiguous()`),
    the copy's own source instead, so the heads stay views of the projection and the copy dies."""
    copy = _producer(graph, view)
    if (isinstance(copy, Pointwise) and len(copy.operands) == 1 and _plain(copy.expr, 0)
            and copy.expr.dtype == copy.out.dtype == graph.buffer_type(copy.operands[0].base).dtype
            and _whole(view, copy) and copy.out.shape[-2:] == view.shape[-2:] and consumers[copy.name] == [reader.name]
            and copy.name not in {o.base for o in graph.outputs}):
        source = copy.operands[0].reshape(lead + view.shape[-2:])
        if source is not None:
            return source
    return view.reshape(lead + view.shape[-2:])


def _replace(graph: Graph, pv: Matmul, operands, out_shape, scale, fill_on, causal, chain, score) -> Graph:
    """`graph` with `pv` replaced by the Attention (its buffer: the same elements in the same order, so every
    view of pv reads the Attention's buffer with the same strides) and the chain removed."""
    taken = {n.name for n in graph.nodes} | {i.name for i in graph.inputs}
    name = next(f"attn{i}" for i in range(len(taken) + 1) if f"attn{i}" not in taken)
    att = Attention(name, operands, replace(pv.out, shape=out_shape), "written-out attention", float(scale), causal,
                    fill_on=fill_on, safe_softmax=False, score=score)
    gone = {n.name for n in chain}

    def rebase(view: View) -> View:
        return replace(view, base=name) if view.base == pv.name else view

    nodes = []
    for n in graph.nodes:
        if n.name in gone:
            continue
        if n is pv:
            nodes.append(att)
            continue
        nodes.append(replace(n, operands=tuple(rebase(o) for o in n.operands)))
    outputs = tuple(rebase(o) for o in graph.outputs)
    live = {o.base for o in outputs}   # drop what only the chain read (a copy the attention reads through)
    kept = []
    for n in reversed(nodes):
        if n.name in live:
            kept.append(n)
            live.update(o.base for o in n.operands)
    return replace(graph, nodes=tuple(kept[::-1]), outputs=outputs)
