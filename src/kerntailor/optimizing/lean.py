"""Graph mode's graph made lean: no more device work than the eager model for the ops no kernel replaced.

The graph graph.py runs is the one `profile` exported, and torch.export traces a model down paths its eager forward
does not take: libraries branch on `torch.compiler.is_exporting()` to stay portable across shapes (transformers
builds an explicit attention mask where eager passes none or `is_causal`, and repeats the key/value heads with
expand + clone where eager asks SDPA for grouped-query attention). Graph mode's graph is guarded to the exported
call (the same shapes, dtypes and devices), so what depends on shapes alone can be decided once, at install:

1. `_assert_tensor_metadata` checks go: the guard already fixes every dtype and device they check;
2. nodes that read no parameter, buffer or input (an arange, the mask made from it) are computed once on the
   device and read as constants (new placeholders after the program's: save.py writes them with the lifted ones);
   nothing nondeterministic, nothing over FOLD_BYTES;
3. an SDPA mask that is such a constant and lets every position through (all True, or all 0.0) is dropped; one
   that is exactly the lower triangle of a square becomes `is_causal=True`, which is its definition in torch;
4. an SDPA with no mask whose key and value are both head-repeats of one tensor each (unsqueeze, expand, clone,
   view: transformers' repeat_kv) reads them unrepeated with `enable_gqa=True`
   (the same function: query head h reads key/value head h // n_rep). Only without a mask and for head sizes up to
   256, as transformers' own `use_gqa_in_sdpa` rule for CUDA: else SDPA's GQA would run the math backend there;
5. an op of one tensor argument that the export decomposed into several ops that do device work (silu: a cast up,
   sigmoid, mul, a cast down in bf16; softmax; gelu), or into a clone (`contiguous`, `reshape`: eager copies only
   where the strides it meets at run time need it, as after SDPA, whose output the meta trace thinks contiguous),
   none of whose nodes a kernel replaced or was folded, is called again as itself (capture/export.py marks its
   nodes: meta["composite"]);
6. what no one reads any more is removed.

Rewrites decide by the nodes' values (meta["val"]: shape, dtype); a kernel call graph.py put in a group's place
carries the values of the nodes it stands for, so a rewrite sees through it (issue #21: without them, the GQA rewrite
skipped every SDPA reading a swapped KV-cache concatenation, and each layer cloned its heads 4x again).

Measured on the decode model's small variant on CPU (tests/test_optimize_lean.py counts the ops).
"""

from __future__ import annotations

import operator

import torch
from torch import fx
from torch.fx.operator_schemas import normalize_function
from torch.utils import _pytree as pytree

aten = torch.ops.aten

FOLD_BYTES = 1 << 26   # a constant bigger than 64 MiB is computed at each call, as the export wrote it
_SDPA = aten.scaled_dot_product_attention.default
_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def lean_graph(gm: fx.GraphModule, known: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Rewrite `gm`'s graph in place (module docstring; it must be in a topological order). `known`: the values of
    the placeholders that are constants (the lifted constants). Returns the constants it folded, by the names of the
    placeholders it added after the others (in their order), for the caller to pass after the program's inputs."""
    graph = gm.graph
    for n in list(graph.nodes):
        if n.op == "call_function" and n.target is aten._assert_tensor_metadata.default:
            graph.erase_node(n)
    folded = _fold(graph, known)
    for n in graph.nodes:
        if n.op == "call_function" and n.target is _SDPA:
            _drop_mask(n, folded)
            _use_gqa(n)
    graph.eliminate_dead_code()
    _recompose(graph)
    graph.eliminate_dead_code()
    for n in [n for n in graph.nodes if n.op == "placeholder" and n.name in folded and not n.users]:
        graph.erase_node(n)
        del folded[n.name]
    graph.lint()
    gm.recompile()
    return folded


def _recompose(graph: fx.Graph) -> None:
    """Each whole decomposition of a marked op (module docstring, 2) replaced by a call of the op."""
    made: dict[str, list[fx.Node]] = {}
    for n in graph.nodes:
        if n.op == "call_function" and "composite" in n.meta:
            made.setdefault(n.meta["composite"][0], []).append(n)
    for nodes in made.values():
        composite, members = nodes[0].meta["composite"][1], set(nodes)
        if len(nodes) != composite.size:
            continue   # a kernel took part of it, or it was folded
        if sum(1 for n in nodes if _work(n)) < 2 and not any(n.target is aten.clone.default for n in nodes):
            continue   # nothing to win
        reads = {a for n in nodes for a in n.all_input_nodes if a not in members}
        outs = [n for n in nodes if any(u not in members for u in n.users)]
        if len(reads) != 1 or len(outs) != 1:
            continue
        x, out = reads.pop(), outs[0]
        if _meta(x) != composite.arg_meta or _meta(out) != composite.out_meta:
            continue
        args = tuple(x if i == composite.arg else a for i, a in enumerate(composite.args))
        with graph.inserting_before(out):
            call = graph.call_function(composite.op, args, dict(composite.kwargs))
        call.meta = {"val": out.meta["val"]}
        out.replace_all_uses_with(call)


def _work(n: fx.Node) -> bool:
    """An op that launches device work (no view, no getitem)."""
    return isinstance(n.target, torch._ops.OpOverload) and not n.target.is_view


def _meta(n: fx.Node) -> tuple | None:
    value = n.meta.get("val")
    return (tuple(value.shape), value.dtype) if isinstance(value, torch.Tensor) else None


def _foldable(n: fx.Node) -> bool:
    if n.op != "call_function" or n.is_impure():
        return False
    if n.target is operator.getitem:
        return True
    return isinstance(n.target, torch._ops.OpOverload) and torch.Tag.nondeterministic_seeded not in n.target.tags \
        and not n.target._schema.is_mutable


def _fold(graph: fx.Graph, known: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Replace the nodes that read only constants by placeholders (their values computed here); the names added."""
    values = {}
    for n in graph.nodes:
        if n.op == "placeholder":
            if n.name in known:
                values[n] = known[n.name]
            continue
        if not _foldable(n) or any(a not in values for a in n.all_input_nodes):
            continue
        args, kwargs = pytree.tree_map_only(fx.Node, values.__getitem__, (n.args, n.kwargs))
        try:
            value = n.target(*args, **kwargs)
        except Exception:  # noqa: BLE001  it runs at each call, as before
            continue
        if all(not isinstance(t, torch.Tensor) or t.untyped_storage().nbytes() <= FOLD_BYTES
               for t in pytree.tree_leaves(value)):
            values[n] = value
    frontier = [n for n in values if n.op != "placeholder" and isinstance(values[n], torch.Tensor)
                and any(u not in values for u in n.users)]
    last = [n for n in graph.nodes if n.op == "placeholder"][-1] if frontier else None
    out = {}
    for i, n in enumerate(frontier):
        with graph.inserting_after(last):
            last = graph.placeholder(f"folded_{i}")
        last.meta = dict(n.meta)
        n.replace_all_uses_with(last, delete_user_cb=lambda u: u not in values)
        out[last.name] = values[n]
    return out


def _arguments(n: fx.Node) -> dict:
    return normalize_function(n.target, n.args, n.kwargs, normalize_to_only_use_kwargs=True).kwargs


def _drop_mask(n: fx.Node, folded: dict[str, torch.Tensor]) -> None:
    """A constant SDPA mask that masks nothing, or exactly the causal triangle: none, or is_causal."""
    kw = _arguments(n)
    mask = kw.get("attn_mask")
    if not isinstance(mask, fx.Node) or mask.name not in folded or kw.get("is_causal"):
        return
    value = folded[mask.name]
    keep = value if value.dtype == torch.bool else value == 0
    if value.dtype != torch.bool and not bool(((value == 0) | (value == -torch.inf)).all()):
        return   # an additive bias, not a mask
    if bool(keep.all()):
        n.args, n.kwargs = (), {**kw, "attn_mask": None}
        return
    if keep.dim() < 2 or keep.shape[-1] != keep.shape[-2]:
        return   # non-square: torch aligns is_causal top-left, masks over a cache are aligned bottom-right
    causal = torch.ones(keep.shape[-2:], dtype=torch.bool, device=keep.device).tril()
    if bool((keep == causal).all()):
        n.args, n.kwargs = (), {**kw, "attn_mask": None, "is_causal": True}


def _repeated(n) -> tuple[fx.Node, int] | None:
    """(x, n_rep) where `n` is x's heads (dim 1 of (B, H, S, D)) each repeated n_rep times, through nodes only it
    reads; else None."""
    if not isinstance(n, fx.Node) or n.target not in _VIEWS:
        return None
    clone = n.args[0]
    if clone.target is aten.clone.default:
        chain, expand = [n, clone], clone.args[0]
    else:
        chain, expand = [n], clone
    if not isinstance(expand, fx.Node) or expand.target is not aten.expand.default:
        return None
    unsqueeze = expand.args[0]
    if not isinstance(unsqueeze, fx.Node) or unsqueeze.target is not aten.unsqueeze.default \
            or unsqueeze.args[1] not in (2, -3):
        return None
    x = unsqueeze.args[0]
    shapes = [_shape(m) for m in (x, expand, n)]
    if any(s is None for s in shapes) or len(shapes[0]) != 4:
        return None
    (b, h, s, d), big, out = shapes
    if len(big) != 5 or big[:2] != (b, h) or big[3:] != (s, d) or out != (b, h * big[2], s, d):
        return None
    if any(len(m.users) != 1 for m in (*chain[1:], expand, unsqueeze)):
        return None
    return x, big[2]


def _shape(n) -> tuple[int, ...] | None:
    value = n.meta.get("val") if isinstance(n, fx.Node) else None
    if not isinstance(value, torch.Tensor) or not all(isinstance(d, int) for d in value.shape):
        return None
    return tuple(value.shape)


def _use_gqa(n: fx.Node) -> None:
    """An SDPA with no mask reading key and value head-repeated: the unrepeated ones, enable_gqa."""
    kw = _arguments(n)
    if kw.get("attn_mask") is not None or kw.get("enable_gqa"):
        return
    key, value = _repeated(kw["key"]), _repeated(kw["value"])
    query = _shape(kw["query"])
    if key is None or value is None or key[1] != value[1] or query is None or len(query) != 4:
        return
    if not _shape(key[0])[-1] == _shape(value[0])[-1] <= 256:
        return   # transformers' rule too: flash attention's head sizes
    if query[1] != _shape(key[0])[1] * key[1]:
        return
    n.args, n.kwargs = (), {**kw, "key": key[0], "value": value[0], "enable_gqa": True}
