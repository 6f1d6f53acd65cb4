"""A first fusion plan: partition the IR graph into groups, one kernel each.

Rules (in the spirit of Inductor's scheduler, simplified):
- an anchor (matmul, conv, attention, pool, scan, recurrent) starts a group; pointwise nodes of its output shape
  that consume it join it as an epilogue;
- an anchor whose family the caller does not name in `generated` (no code generator: plan/coverage.py), or one
  the caller names in `library` (codegen refused it), is a `library` group alone: the host calls its ATen op,
  and what follows it is planned as usual, reading the library's output (a convolution's bias + activation +
  pool + softmax tail stays generated);
- a reduction joins the group of its producer when that group iterates over the reduction's input
  shape (a pointwise prologue) or already reduces the same shape over the same axes (softmax's max and
  sum, a norm's mean and variance); pointwise nodes at the full or the reduced shape join it;
- a pointwise node whose shape is a reshape of a reduction group's space (the same elements in the same
  row-major order, as GroupNorm's affine on (N, C, H, W) after statistics over (N, G, C/G·H·W)) joins it:
  codegen iterates over the common refinement of the two shapes (N, G, C/G, H, W);
- a reduction whose producer's group cannot take it joins a group that already reduces the same view over
  the same axes (a row's max and min: one read of the input);
- the results of one recurrent call (its output sequence, h_n, c_n) are one group (one library call);
- pointwise nodes of the same shape chain into one group;
- a pointwise group that only feeds one pointwise node, which reads it through views that only narrow or
  pad its extents (the halves of a `cat`, masked by the cat's own conditions), is recomputed inside that
  node's group instead of being written (rotary embedding's `-x[..., d/2:]`);
- no merge may create a cycle between groups;
- a node the caller names in `cuts` (codegen refused to fuse it with what it reads: a reduction of the group's own
  reduction, a gather of a gather) never shares a group with a node it depends on: it starts a group, which later
  nodes may join as usual;
- a reduction over the rows of a matrix product that can be combined from per-tile partials joins the
  product's group (a GEMM "row tail", plan/row_tail.py): the product itself is never written; so does a reduction
  over a convolution's channels (one group, forward or transposed: its implicit GEMM's rows are the output positions),
  and where it has at most WHOLE_ROW_CHANNELS channels (one tile spans them) also softmax's normalized output;
  a reduction over all of a convolution's spatial axes (global pooling) joins it as a *column tail* (same file);
- a pointwise group whose only reader is a pool, at the pool's input shape (read as it is, or with size-1 axes put
  in: a 1-d pool is a 2-d one over (N, C, 1, L)), joins the pool's group as its *prologue*
  (`FusionGroup.prologue`): codegen evaluates it on each window element it loads, so the pool's input (a
  convolution's bias + activation) is never written. Overlapping windows recompute it, so
  the merge is refused where a window has more than RECOMPUTE_LIMIT times as many elements as its stride step
  moves over (a 3x3 window at stride 1: 9); a padded position stays outside the prologue's output (-inf to a
  max, nothing to an average), never prologue(0). So does a norm's normalising tail (`(x - mean) * rstd * weight +
  bias` after the statistics of a BatchNorm or LayerNorm) that only the pool reads, at the pool's input shape: it
  leaves the norm's group, which then writes its statistics instead of the normalised tensor, and the pool reads the
  norm's input and those statistics (one write and read of the whole tensor fewer). A GroupNorm's tail begins at its
  (N, G, C/G.H.W) shape: its members may lie over the pool's input in the ways `regrouped` names, each computed at
  its own coordinates of the element the window loads. Where another reduction's group reads the tail (the mean of
  a GroupNorm's output, a logsumexp over its channels), that group takes it the same way, its members at reshapes
  of its space (codegen iterates over their common refinement). A full-size member that the statistics need too,
  computed from what the norm's group reads and nothing of its own (a library convolution's bias add, a scale
  before the norm), does not stop the tail: the reader computes it again where it loads (`FusionGroup.recomputed`),
  the norm's group keeps it for its statistics, and neither writes it;
- the same for a scan (`cumsum(x * mask)`): a pointwise group at the scan's input shape that only the scan reads, read
  by it as it is, is computed where the scan loads each element (codegen/scan.py), so `x * mask` is never written;
- a pointwise group at an attention's query or key operand shape, which only the attention reads, whole and as it is
  (rotary embedding on q and k, a scale, a cast), joins the attention's group as the *prologue of that operand*
  (`FusionGroup.operand_prologues`): codegen evaluates it on the Q tile it loads once per program and on every K
  block its loop loads (codegen/attention.py), so its output is never written (a chain that computes nothing, a copy
  or a concatenation, stays a kernel: optimize's graph mode swaps a KV cache's cat). Every query block recomputes a key
  block's prologue, so the merge is refused where it loads more than PROLOGUE_LOADS elements, or costs more than
  PROLOGUE_FLOPS operations, per element it produces. Not V (the causal kernel's V scan reads V itself), and not a
  reduction (a q/k RMSNorm stays its own kernel);
- a *layout store*: a copy that reads an attention group's output (or an epilogue member at its shape) whole through
  a permutation of its leading axes (a GPT block's `y.transpose(1, 2).contiguous()`, (B, H, T, D) -> (B, T, H, D))
  joins the group (`layout_store`): codegen stores the tile at the copy's strides, so the (B, H, T, D) buffer is
  never written and the copy kernel disappears. A permutation that moves the last axis (the head dim: every store
  would be strided) is refused, and nothing else in the group may read the copy (it is stored, never held);
- *dual products* (plan/dual.py): a matmul group whose epilogue reads another product of the same A view (SwiGLU's
  `silu(x @ Wg^T) * (x @ Wu^T)`) takes that product's group: one kernel, two accumulators, A read once;
- *horizontal products* (plan/horizontal.py): up to MAX_PRODUCTS single-product matmul groups of one A view, none
  reading another (Q, K and V projections), are one kernel whose grid covers all their N tiles: A read once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from math import prod

from kerntailor.capture.cost import view_bytes
from kerntailor.ir.expr import Load, Op
from kerntailor.ir.nodes import Graph, Matmul, Node, Pool, Reduction
from kerntailor.ir.types import View, contiguous_strides
from kerntailor.plan.coverage import LIBRARY
from kerntailor.plan.dual import dual_product
from kerntailor.plan.horizontal import MAX_PRODUCTS, horizontal_key, independent
from kerntailor.plan.row_tail import column_tail, row_tail

ANCHORS = ("matmul", "conv", "attention", "pool", "scan", "recurrent")
LAYOUT_STORES = ("attention",)   # the anchor families whose writers store an output at a copy's strides
# a pool's prologue is recomputed on every window that reads an element: at most this many times on average
# (window elements / the product of the strides)
RECOMPUTE_LIMIT = 4
# an attention operand's prologue is recomputed by every query block that reads a key block (cdiv(Lq, BLOCK_M) times):
# at most this many loads and operations per element it produces (rotary embedding: 5 loads, the projection at its
# column and the two masked halves, cos and sin; 4 operations), small beside the score product's 2 x BLOCK_M per
# key element (BLOCK_M >= 16)
PROLOGUE_LOADS = 6
PROLOGUE_FLOPS = 16
PROLOGUE_OPERANDS = (0, 1)   # an attention's q and k
# a convolution of at most this many output channels takes a row tail that needs the whole row (softmax over the
# channels): its schedules keep them in one tile (codegen/conv.py's work_sizes, search/families.py's conv_space)
WHOLE_ROW_CHANNELS = 128


@dataclass(frozen=True)
class FusionGroup:
    name: str
    family: str                  # "pointwise" | "reduction" | one of ANCHORS | "library" (an anchor op on the host)
    nodes: tuple[str, ...]       # in topological order
    inputs: tuple[str, ...]      # buffers read from outside the group
    outputs: tuple[str, ...]     # buffers the group must write
    space: tuple[int, ...]       # iteration shape: output shape, or a reduction's full input shape
    reduce_axes: tuple[int, ...] = ()
    bytes_moved: int = 0         # what this kernel reads and writes, at least
    # members computed on every element the anchor reads (a pool's window), never written: a pointwise prologue
    prologue: tuple[str, ...] = ()
    # an attention's: (operand index, the prologue members that compute it, in order), per operand that has one
    operand_prologues: tuple[tuple[int, tuple[str, ...]], ...] = ()
    # members another group owns and computes too, which this group computes again from their operands instead of
    # reading them (a norm's normalising tail that moved to its reader, with the bias add its statistics also need):
    # never written by this group
    recomputed: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        """The first member outside the prologue: an anchor group's anchor op (a pool after its prologue)."""
        return next(n for n in self.nodes if n not in self.prologue)


@dataclass(frozen=True)
class Plan:
    groups: tuple[FusionGroup, ...]

    @property
    def bytes_moved(self) -> int:
        return sum(g.bytes_moved for g in self.groups)

    def group_of(self, node: str) -> FusionGroup:
        """The group that owns `node` (not one that only recomputes it)."""
        for g in self.groups:
            if node in g.nodes and node not in g.recomputed:
                return g
        raise KeyError(node)

    def recomputing(self) -> dict[str, frozenset[str]]:
        """Per node that some group recomputes (FusionGroup.recomputed): the members of those groups, readers that
        compute it themselves and need it from no other kernel."""
        out: dict[str, frozenset[str]] = {}
        for g in self.groups:
            for n in g.recomputed:
                out[n] = out.get(n, frozenset()) | frozenset(g.nodes)
        return out

    def launch_order(self) -> tuple[FusionGroup, ...]:
        """The groups in an order where each runs after every group whose outputs it reads: the plan's own order
        where it already is (a stable topological sort). Two parallel branches that merge (SwiGLU's gate and up
        projections) can leave the plan's order with a reader before its writer. ValueError on a cycle."""
        writer = {out: g.name for g in self.groups for out in g.outputs}
        pending = list(self.groups)
        done: set[str] = set()
        ordered = []
        while pending:
            ready = next((g for g in pending
                          if all(writer.get(i) in (None, g.name) or writer[i] in done for i in g.inputs)), None)
            if ready is None:
                raise ValueError("the fusion plan has a cycle between groups")
            ordered.append(ready)
            done.add(ready.name)
            pending.remove(ready)
        return tuple(ordered)


@dataclass
class _Group:
    family: str
    nodes: list[Node]
    space: tuple[int, ...]
    axes: tuple[int, ...] = ()
    prologue: tuple[str, ...] = ()
    operand_prologues: tuple[tuple[int, tuple[str, ...]], ...] = ()
    recomputed: tuple[str, ...] = ()   # members another group owns (FusionGroup.recomputed)

    @property
    def reduced_numel(self) -> int:
        return prod(s for i, s in enumerate(self.space) if i not in self.axes)


def _accepts_pointwise(group: _Group, node: Node) -> bool:
    shape = node.out.shape
    if group.family == "pointwise":
        return shape == group.space
    if group.family == "reduction":
        return shape == group.space or node.out.numel == group.reduced_numel or _reshape_member(group, node)
    if group.family in LAYOUT_STORES:
        members = {n.name: n for n in group.nodes}
        stored = {n.name for n in group.nodes if layout_store(n, members, group.space) is not None}
        if layout_store(node, members, group.space) is not None:
            return True
        return shape == group.space and not any(op.base in stored for op in node.operands)
    if group.family in ANCHORS:
        return shape == group.space
    return False


def _reduction_prologue(group: _Group, node: Node, consumers: Mapping[str, list[str]], by_name: Mapping[str, Node],
                        outputs: Collection[str]) -> bool:
    """Whether `node` stays out of the anchor `group` it reads to be a prologue of the reductions that alone read it:
    a value computed from the group's members only (a residual's square before an RMSNorm's sum) would otherwise be
    written beside the member it squares and read back, where the reduction can recompute it from that member."""
    if group.family not in ANCHORS or node.name in outputs or not consumers.get(node.name):
        return False
    members = {n.name for n in group.nodes}
    return all(op.base in members for op in node.operands) and \
        all(isinstance(by_name[c], Reduction) for c in consumers[node.name])


def layout_permutation(view: View, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """p where `view` reads a contiguous buffer of `shape` whole, its axis i being the buffer's axis p[i] (a permute,
    as `.contiguous()` copies it); None for any other view (a slice, a broadcast, a reshape, another rank). Size-1
    axes pair in order (their strides are never used)."""
    if len(view.shape) != len(shape) or view.offset or sorted(view.shape) != sorted(shape):
        return None
    contiguous = contiguous_strides(shape)
    perm: list[int | None] = []
    for size, stride in zip(view.shape, view.strides):
        if size == 1:
            perm.append(None)
            continue
        axis = [k for k in range(len(shape)) if shape[k] == size and contiguous[k] == stride and k not in perm]
        if len(axis) != 1:
            return None
        perm.append(axis[0])
    ones = iter(k for k in range(len(shape)) if shape[k] == 1)
    return tuple(next(ones) if p is None else p for p in perm)


def layout_store(node: Node, members: Mapping[str, Node], space: tuple[int, ...]) -> tuple[int, ...] | None:
    """The permutation (layout_permutation) through which `node` copies, as it is (no cast), a member of `members`
    at shape `space` (itself no such copy: it is never held), keeping the last axis last and moving some other one;
    None where `node` is no such copy."""
    if node.family != "pointwise" or len(node.operands) != 1:
        return None
    view = node.operands[0]
    source = members.get(view.base)
    expr = getattr(node, "expr", None)
    if source is None or source.out.shape != space or not isinstance(expr, Load) or expr.operand != 0 \
            or expr.gather is not None or expr.valid is not None:
        return None
    if not expr.dtype == node.out.dtype == source.out.dtype or layout_store(source, members, space) is not None:
        return None
    perm = layout_permutation(view, space)
    if perm is None or perm[-1] != len(space) - 1 or perm == tuple(range(len(space))):
        return None
    return perm


def refinement(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The coarsest shape that splits every one of `shapes` (all of one numel) into whole dims, or None
    when their row-major orders do not nest ((6, 4) and (4, 6) share no such shape). Size-1 dims vanish."""
    total = prod(shapes[0])
    if any(prod(s) != total for s in shapes) or total == 0:
        return None
    bounds = {1, total}
    for shape in shapes:
        for k in range(len(shape)):
            bounds.add(prod(shape[k:]))
    ordered = sorted(bounds, reverse=True)
    if any(a % b for a, b in zip(ordered, ordered[1:])):
        return None
    return tuple(a // b for a, b in zip(ordered, ordered[1:]))


def split_strides(shape: tuple[int, ...], strides: tuple[int, ...], fine: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides of a view of `shape` over its refinement `fine` (splitting a dim always has strides)."""
    out = []
    k = 0
    for size, stride in zip(shape, strides):
        if size == 1:
            continue
        group, acc = [], 1
        while acc < size and k < len(fine):
            group.append(fine[k])
            acc *= fine[k]
            k += 1
        if acc != size:
            return None
        sub, inner = [], stride   # row-major: the group's last fine dim keeps the view's stride
        for f in reversed(group):
            sub.append(inner)
            inner *= f
        out.extend(reversed(sub))
    return tuple(out) if k == len(fine) else None


def _reshape_member(group: _Group, node: Node) -> bool:
    """A pointwise node whose shape is a reshape of the reduction space (same numel, nested orders), reading
    full-level members contiguously and row values with stride 0 along the reduced dims."""
    if node.out.numel != prod(group.space) or node.out.shape == group.space:
        return False
    fine = refinement(group.space, node.out.shape)
    if fine is None:
        return False
    space_strides = split_strides(group.space, tuple(1 if k in group.axes else 0 for k in range(len(group.space))),
                                  fine)  # nonzero exactly on the reduced dims of the refinement
    if space_strides is None:
        return False
    members = {n.name: n for n in group.nodes}
    for view in node.operands:
        producer = members.get(view.base)
        if producer is None:
            continue
        if producer.out.numel == prod(group.space):
            if view.offset or tuple(view.strides) != contiguous_strides(view.shape) or view.shape != node.out.shape:
                return False
            continue
        fine_strides = split_strides(view.shape, view.strides, fine)
        if fine_strides is None or any(s and r for s, r in zip(fine_strides, space_strides)):
            return False
    return True


def _accepts_reduction(group: _Group, node: Reduction) -> bool:
    full = node.operands[0].shape
    if group.family == "pointwise":
        return group.space == full
    if group.family == "reduction":
        return group.space == full and group.axes == node.axes
    return False


def plan_fusion(graph: Graph, generated: Collection[str], library: Collection[str] = (),
                no_tails: Collection[str] = (), cuts: Collection[str] = ()) -> Plan:
    """The fusion plan of `graph` (module docstring). `generated`: the families codegen writes (the names of
    codegen's FAMILIES, which the plan may not import). Anchors of other families, and the anchor nodes named in
    `library`, become library groups of their own. The anchors named in `no_tails` take no row tail (codegen
    refused theirs): their reductions stay kernels of their own. The nodes named in `cuts` start groups apart
    from every node they depend on."""
    generated_map = generated if isinstance(generated, Mapping) else None
    generated, library, cuts = frozenset(generated), frozenset(library), frozenset(cuts)

    def by_library(node: Node) -> bool:
        return node.family in ANCHORS and (node.family not in generated or node.name in library)

    group_of: dict[str, _Group] = {}
    groups: list[_Group] = []
    ancestors: dict[str, set[str]] = {i.name: set() for i in graph.inputs}
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    consumers = graph.consumers()
    graph_outputs = {v.base for v in graph.outputs}
    input_names = {i.name for i in graph.inputs}
    by_name = {n.name: n for n in graph.nodes}

    def given(buffer: str) -> bool:
        """Whether `buffer` is in memory whatever the plan: a graph input or a library call's output."""
        return buffer in input_names or getattr(group_of.get(buffer), "family", None) == LIBRARY

    def apart(nodes: list[Node]) -> bool:
        """Whether one group of `nodes` keeps each cut node apart from the nodes it depends on."""
        names = {n.name for n in nodes}
        return not any(n.name in cuts and ancestors[n.name] & names for n in nodes)

    def may_join(group: _Group, node: Node) -> bool:
        """Whether `node` may join `group`: no cycle between groups, cut nodes kept apart."""
        return apart(group.nodes + [node]) and not creates_cycle(group, node)

    def creates_cycle(group: _Group, node: Node) -> bool:
        members = {n.name for n in group.nodes}
        for op in node.operands:
            if op.base in members:
                continue
            if ancestors.get(op.base, set()) & members:
                return True
        return False

    def can_merge(a: _Group, b: _Group) -> bool:
        """Whether two groups can become one without a path between them through a third (nor a cut node with
        what it depends on)."""
        if not apart(a.nodes + b.nodes):
            return False
        members = {n.name for n in a.nodes} | {n.name for n in b.nodes}
        for g, other in ((a, b), (b, a)):
            other_names = {n.name for n in other.nodes}
            for n in g.nodes:
                for op in n.operands:
                    if op.base not in members and (ancestors.get(op.base, set()) & other_names):
                        return False
        return True

    def absorb(target: _Group, g: _Group) -> None:
        """Merge group g into target (its nodes keep the graph's order)."""
        target.nodes = sorted(target.nodes + g.nodes, key=lambda n: order[n.name])
        for n in g.nodes:
            group_of[n.name] = target
        groups.remove(g)

    for node in graph.nodes:
        ancestors[node.name] = set().union(*({op.base} | ancestors.get(op.base, set()) for op in node.operands))
        producers = []
        for op in node.operands:
            g = group_of.get(op.base)
            if g is not None and g not in producers:
                producers.append(g)
        target = None
        if node.family == "pointwise":
            # prefer joining anchors and reductions (epilogues), then pointwise chains
            for g in sorted(producers, key=lambda g: g.family == "pointwise"):
                if _reduction_prologue(g, node, consumers, by_name, graph_outputs):
                    continue
                if _accepts_pointwise(g, node) and may_join(g, node):
                    target = g
                    break
        elif node.family == "reduction":
            for g in producers:
                if _accepts_reduction(g, node) and may_join(g, node):
                    target = g
                    if g.family == "pointwise":
                        g.family, g.axes = "reduction", node.axes
                    break
        if target is not None:
            # horizontal merge: the other producers this node joins up (gelu's two branches of x)
            for g in producers:
                if g is target or g.family != "pointwise" or not _accepts_pointwise(target, g.nodes[-1]):
                    continue
                if can_merge(target, g):
                    absorb(target, g)
        if target is None and node.family == "reduction":
            # a sibling: another reduction of the same view over the same axes (a row's max and min) shares
            # its kernel, so the input is read once
            target = next((g for g in groups if g.family == "reduction" and g.axes == node.axes
                           and g.space == node.operands[0].shape and may_join(g, node)
                           and any(isinstance(n, Reduction) and n.operands[0] == node.operands[0] for n in g.nodes)),
                          None)
        if target is None and node.family == "recurrent":
            # the results of one recurrent call (output, h_n, c_n) are one library call: one group
            target = next((g for g in groups if g.family in ("recurrent", LIBRARY)
                           and any(getattr(n, "call", None) == node.call for n in g.nodes)), None)
        if target is None:
            if by_library(node):   # the anchor alone; its epilogue forms generated groups reading its output
                target = _Group(LIBRARY, [], node.out.shape)
            elif node.family == "reduction":
                target = _Group("reduction", [], node.operands[0].shape, node.axes)
            else:
                space = node.operands[0].shape if node.family == "scan" else node.out.shape
                target = _Group(node.family, [], space)
            groups.append(target)
        target.nodes.append(node)
        group_of[node.name] = target
        if node.family in ("pool", "scan") and target.family == node.family and not target.prologue:
            producer = group_of.get(node.operands[0].base)
            fits = _pool_prologue if node.family == "pool" else _scan_prologue
            if producer is not None and producer is not target and fits(producer, node, consumers, graph_outputs) \
                    and can_merge(target, producer):
                target.prologue = tuple(n.name for n in producer.nodes)
                absorb(target, producer)
            elif node.family == "pool" and producer is not None and producer.family == "reduction" \
                    and prod(node.kernel) <= RECOMPUTE_LIMIT * prod(node.stride):
                # a norm's normalising tail that only the pool reads: the pool's prologue, the norm's group keeps
                # its statistics (module docstring)
                view = node.operands[0]
                tail, shared = _normalising_tail(producer, view, {node.name}, consumers, graph_outputs, given,
                                                 lambda shape, v=view: regrouped(v.shape, shape) is not None)
                if tail and apart(target.nodes + tail):
                    _move_tail(tail, shared, producer, target, group_of, order)
                    target.prologue = tuple(n.name for n in tail)
        if node.family == "attention" and target.family == "attention":
            for j in PROLOGUE_OPERANDS:
                base = node.operands[j].base
                producer = group_of.get(base)
                if producer is target and base in target.prologue:   # q and k of one prologue (q = k)
                    target.operand_prologues += ((j, _feeding(target.nodes, base, target.prologue)),)
                elif producer is not None and producer is not target \
                        and _attention_prologue(producer, node, j, consumers, graph_outputs) \
                        and can_merge(target, producer):
                    names = tuple(n.name for n in producer.nodes)
                    target.prologue += names
                    target.operand_prologues += ((j, names),)
                    absorb(target, producer)
        if node.family == "pointwise" and target.family == "pointwise" and node.out.shape == target.space:
            # recompute, do not write: pointwise producers that only this node reads, through narrowing views
            for g in producers:
                if g is target or g not in groups or not _inlinable(graph, g, node, consumers, graph_outputs):
                    continue
                if can_merge(target, g):
                    absorb(target, g)
    # a norm's normalising tail that only another reduction's group reads (a GroupNorm, then the mean of its output or
    # a logsumexp over its channels): that group computes it where it loads, the norm's group keeps its statistics
    for t in [g for g in groups if g.family == "reduction"]:
        own = {n.name for n in t.nodes}
        for view in [op for n in t.nodes for op in n.operands if op.base not in own]:
            source = group_of.get(view.base)
            if source is None or source is t or source.family != "reduction":
                continue
            tail, shared = _normalising_tail(source, view, own, consumers, graph_outputs, given)
            if tail and apart(t.nodes + tail):
                _move_tail(tail, shared, source, t, group_of, order)
                own |= {n.name for n in tail}
    # a family takes tails where codegen's entry says its writer computes them (Family.tails); names alone: the
    # built-in writers that do (matmul, conv)
    tailed = ({n for n, f in generated_map.items() if getattr(f, "tails", False)} if generated_map is not None
              else {"matmul", "conv"})
    _attach_row_tails(graph, [g for g in groups if g.nodes[0].name not in no_tails and g.family in tailed],
                      groups, order, apart)
    # dual products (plan/dual.py): a matmul group whose epilogue reads another product of the same A takes it
    for g in [g for g in groups if g.family == "matmul"]:
        if g not in groups or g.axes or g.prologue:
            continue
        h = next((h for h in groups if h is not g and h.family == "matmul" and not h.axes and not h.prologue
                  and dual_product(graph, g.nodes, h.nodes) and can_merge(g, h)), None)
        if h is not None:
            absorb(g, h)
    # horizontal products (plan/horizontal.py): single-product matmul groups of one A, none reading another
    for g in [g for g in groups if g.family == "matmul"]:
        key = horizontal_key(graph, g.nodes) if g in groups and not g.axes and not g.prologue else None
        for h in [h for h in groups if key is not None and h is not g and h.family == "matmul"]:
            if sum(isinstance(n, Matmul) for n in g.nodes) == MAX_PRODUCTS:
                break
            if not h.axes and not h.prologue and horizontal_key(graph, h.nodes) == key \
                    and independent(g.nodes, h.nodes) and can_merge(g, h):
                absorb(g, h)
    consumers = graph.consumers()
    names = [frozenset(n.name for n in g.nodes) for g in groups]
    holders: dict[str, list[frozenset[str]]] = {}   # per node, the members of each group computing it (owner or not)
    for members in names:
        for n in members:
            holders.setdefault(n, []).append(members)
    return Plan(tuple(_finish(graph, i, g, names[i], consumers, graph_outputs, holders)
                      for i, g in enumerate(groups)))


def _attach_row_tails(graph: Graph, anchors: list[_Group], groups: list[_Group], order: dict[str, int],
                      apart=lambda nodes: True) -> None:
    """Reduction groups that read only a matmul group's product (and each other), reducing its rows over
    N, join that group when their reductions combine from per-tile partials (plan/row_tail.py): the
    M x N product is then never written, only its row values. A convolution group's reductions over its
    channels likewise (its output positions are the rows). Only the groups of `anchors` take them. Nothing else
    may read the product (it would have to be written anyway), so the merge cannot create a cycle. `apart(nodes)`:
    whether one group of `nodes` keeps the caller's cut nodes apart from what they depend on."""
    consumers = graph.consumers()
    graph_outputs = {v.base for v in graph.outputs}
    inputs = {i.name for i in graph.inputs}   # a conv's column tail may read them too (a bias after the pooling)
    for g in [g for g in anchors if g.family in ("matmul", "conv") and not g.prologue]:
        names = {n.name for n in g.nodes}
        readable = names | inputs if g.family == "conv" else names
        tails: list[_Group] = []
        grew = True
        while grew:  # sibling reductions (a row's max and min) may read each other's results
            grew = False
            for r in groups:
                if r.family != "reduction" or r in tails or r.space != g.space:
                    continue
                own = {n.name for n in r.nodes}
                if {op.base for n in r.nodes for op in n.operands} - own <= readable:
                    tails.append(r)
                    names |= own
                    readable |= own
                    grew = True
        if not tails:
            continue
        merged = sorted(g.nodes + [n for r in tails for n in r.nodes], key=lambda n: order[n.name])
        if not apart(merged):
            continue
        outputs = {n.name for n in merged if n.name in graph_outputs or any(c not in names for c in consumers[n.name])}
        whole_row = g.family == "conv" and g.space[1] <= WHOLE_ROW_CHANNELS
        members = [n.name for n in merged]
        if row_tail(graph, members, outputs, whole_row) is None and (
                g.family != "conv" or column_tail(graph, members, outputs) is None):
            continue
        g.nodes, g.axes = merged, tails[0].axes
        for r in tails:
            groups.remove(r)


def narrowing_shift(view: View, shape: tuple[int, ...]) -> tuple[int, int] | None:
    """(axis, shift) when `view` reads a contiguous buffer of `shape` at the same coordinates, shifted by
    `shift` along at most one axis, with extents that may narrow or pad it (padding must be masked);
    (-1, 0) for no shift; None for any other view (permuted, strided, broadcast)."""
    if len(view.shape) != len(shape):
        return None
    contiguous = contiguous_strides(shape)
    for k, (v, p, st) in enumerate(zip(view.shape, shape, view.strides)):
        if v > 1 and (p == 1 or st != contiguous[k]):
            return None
    if view.offset == 0:
        return (-1, 0)
    differs = [k for k, (v, p) in enumerate(zip(view.shape, shape)) if v != p]
    if len(differs) != 1 or view.offset % contiguous[differs[0]]:
        return None
    return (differs[0], view.offset // contiguous[differs[0]])


def _loads_of(expr, operand: int) -> list[Load]:
    out = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Load):
            if e.operand == operand:
                out.append(e)
            stack += [x for x in ((e.gather[1] if e.gather else None), e.valid) if x is not None]
        elif isinstance(e, Op):
            stack += list(e.args)
    return out


def _inlinable(graph: Graph, g: _Group, node: Node, consumers: dict, outputs: set) -> bool:
    """Whether pointwise group `g` can be recomputed inside `node`'s group: only `node` reads it, through
    narrowing views (padding only under the load's own mask), and its members read each other as they are."""
    if g.family != "pointwise" or g.space == node.out.shape or prod(g.space) == node.out.numel:
        return False
    names = {n.name: n for n in g.nodes}
    for n in g.nodes:
        if n.name in outputs or any(c not in names and c != node.name for c in consumers[n.name]):
            return False
        for view in n.operands:
            producer = names.get(view.base)
            if producer is not None and (view.shape != producer.out.shape or view.offset
                                         or tuple(view.strides) != contiguous_strides(view.shape)):
                return False
    for j, view in enumerate(node.operands):
        producer = names.get(view.base)
        if producer is None:
            continue
        if narrowing_shift(view, producer.out.shape) is None:
            return False
        padded = any(v > p for v, p in zip(view.shape, producer.out.shape)) or view.offset
        loads = _loads_of(node.expr, j)
        if any(ld.gather is not None or (padded and ld.valid is None) for ld in loads):
            return False
    return True


def _pool_prologue(g: _Group, pool: Node, consumers: dict, outputs: set) -> bool:
    """Whether pointwise group `g` can be evaluated inside `pool`'s window loop (module docstring): every member
    at the group's shape, read by nothing but the group and the pool (and no graph output), members reading each
    other as they are, the pool reading its producer as it is (size-1 axes aside), and a recompute factor within
    the limit."""
    if g.family != "pointwise" or not isinstance(pool, Pool):
        return False
    view = pool.operands[0]
    if view.offset or tuple(view.strides) != contiguous_strides(view.shape) or view.numel != prod(g.space):
        return False
    if squeezed(view.shape) != squeezed(g.space):   # as it is, or with size-1 axes put in (a 1-d pool's (N, C, 1, L))
        return False
    if prod(pool.kernel) > RECOMPUTE_LIMIT * prod(pool.stride):
        return False
    return _private_chain(g, pool, consumers, outputs)


def _normalising_tail(g: _Group, view: View, readers: Collection[str], consumers: dict, outputs: set,
                      given: Callable[[str], bool], fits=lambda shape: True) -> tuple[list[Node], frozenset[str]]:
    """The members of reduction group `g` that compute the tensor `view` reads, from the group's statistics and what
    the group reads (a norm's `(x - mean) * rstd * weight + bias`), where its readers (`readers`: a pool, or another
    reduction's group) can compute them on each element they load instead: pointwise, of `view`'s elements (every
    shape `fits`, a reshape of one another), read by nothing but each other and the readers (nor a graph output),
    and reading the group's other members only at a reduced size (its statistics, written instead of the normalised
    tensor). `view` reads it whole and as it is. Members in it that the group's reductions need too (a library
    convolution's bias add, a LayerNorm's `x - mean`) the readers compute again and the group keeps for its
    statistics: the second result names them (`_move_tail`). Those may read, outside the group, only buffers
    that are there whatever the plan does (`given`: a graph input, a library call's output): a group that reads
    something else may yet join its producer (a convolution's row tail), which would then have to write it.
    ([], frozenset()) where there is no such tail."""
    none: tuple[list[Node], frozenset[str]] = ([], frozenset())
    members = {n.name: n for n in g.nodes}
    base = members.get(view.base)
    if base is None or view.offset or tuple(view.strides) != contiguous_strides(view.shape) \
            or view.numel != base.out.numel:
        return none
    needed, stack = set(), [op.base for n in g.nodes if isinstance(n, Reduction) for op in n.operands]
    while stack:   # what the reductions read, within the group
        b = stack.pop()
        if b in members and b not in needed:
            needed.add(b)
            stack += [op.base for op in members[b].operands]
    full = prod(g.space)
    tail, stack = set(), [base.name]
    while stack:   # the tensor read and the full-size members it is computed from (those the reductions need too)
        b = stack.pop()
        if b in members and b not in tail and members[b].out.numel >= full:
            tail.add(b)
            stack += [op.base for op in members[b].operands]
    shared = tail & needed
    if any(op.base not in members and not given(op.base) for b in shared for op in members[b].operands):
        return none
    nodes = [n for n in g.nodes if n.name in tail]
    for n in nodes:
        if n.family != "pointwise" or n.out.numel != view.numel or not fits(n.out.shape):
            return none
        if n.name not in shared and (n.name in outputs or any(c not in tail and c not in readers
                                                              for c in consumers[n.name])):
            return none
        for op in n.operands:
            if op.base in tail and (op.shape != n.out.shape or op.offset or op.numel != members[op.base].out.numel
                                    or tuple(op.strides) != contiguous_strides(op.shape)):
                return none   # members read each other element for element (as they are, or reshaped)
            if op.base in members and op.base not in tail and members[op.base].out.numel >= full:
                return none   # a full-size member: it would be written for the readers to read
    return nodes, frozenset(shared)


def _move_tail(tail: list[Node], shared: frozenset[str], source: _Group, target: _Group, group_of: dict,
               order: dict) -> None:
    """Norm tail `tail` (_normalising_tail) leaves `source` for `target`, which computes it where it loads; the
    members named in `shared` stay in `source` too (its statistics read them) and are `target`'s recomputed ones."""
    source.nodes = [n for n in source.nodes if n not in tail or n.name in shared]
    target.nodes = sorted(target.nodes + tail, key=lambda n: order[n.name])
    target.recomputed += tuple(n.name for n in tail if n.name in shared)
    for n in tail:
        if n.name not in shared:
            group_of[n.name] = target


def _scan_prologue(g: _Group, scan: Node, consumers: dict, outputs: set) -> bool:
    """Whether pointwise group `g` can be evaluated where `scan` loads each element (module docstring: masked
    cumsum's `x * mask`): as for a pool, and the scan reads the producer exactly as it is, every member's operands
    at its rank (codegen/scan.py loads them at the scan's coordinates)."""
    if g.family != "pointwise" or scan.family != "scan":
        return False
    view = scan.operands[0]
    if view.offset or tuple(view.shape) != tuple(g.space) or tuple(view.strides) != contiguous_strides(view.shape):
        return False
    if any(len(op.shape) != len(g.space) for n in g.nodes for op in n.operands):
        return False
    return _private_chain(g, scan, consumers, outputs)


def _private_chain(g: _Group, anchor: Node, consumers: dict, outputs: set) -> bool:
    """Every member of pointwise group `g` at its shape, read only by members and `anchor` (never a graph output),
    members reading each other as they are: what an anchor can recompute where it reads, without writing it."""
    names = {n.name for n in g.nodes}
    for n in g.nodes:
        if n.out.shape != g.space or n.name in outputs:
            return False
        if any(c not in names and c != anchor.name for c in consumers[n.name]):
            return False
        for op in n.operands:
            if op.base in names and (op.shape != g.space or op.offset
                                     or tuple(op.strides) != contiguous_strides(op.shape)):
                return False
    return True


def _attention_prologue(g: _Group, att: Node, j: int, consumers: dict, outputs: set) -> bool:
    """Whether pointwise group `g` can be evaluated where attention `att` loads its operand j (module docstring):
    `att` reads it whole and as it is (contiguous, no offset), nothing but the group and `att` reads a member (nor is
    one a graph output), every operand of a member at the operand's rank, members reading members at the group's
    shape as they are and the others (a rotary embedding's halves) through narrowing views, within the recompute
    limits."""
    if g.family != "pointwise" or att.family != "attention" or j not in PROLOGUE_OPERANDS:
        return False
    names = {n.name: n for n in g.nodes}
    for k, view in enumerate(att.operands):
        if view.base in names and (k not in PROLOGUE_OPERANDS or view.offset or tuple(view.shape) != tuple(g.space)
                                   or tuple(view.strides) != contiguous_strides(view.shape)):
            return False
    loads = flops = 0
    for n in g.nodes:
        if n.name in outputs or any(c not in names and c != att.name for c in consumers[n.name]):
            return False
        flops += n.flops() // max(1, n.out.numel)
        for i, op in enumerate(n.operands):
            if len(op.shape) != len(g.space):
                return False
            producer = names.get(op.base)
            if producer is None:
                loads += len(_loads_of(n.expr, i))
            elif producer.out.shape == g.space:
                if op.shape != g.space or op.offset or tuple(op.strides) != contiguous_strides(op.shape):
                    return False
            elif narrowing_shift(op, producer.out.shape) is None:
                return False
    # a chain that computes nothing (a copy, a concatenation: a KV cache's cat, GQA's repeated heads) stays a kernel:
    # optimize's graph mode swaps a cache concatenation as a kernel of its own and lean.py's GQA rewrite reads it
    return 0 < flops <= PROLOGUE_FLOPS and loads <= PROLOGUE_LOADS


def _feeding(nodes: list[Node], base: str, among: Collection[str]) -> tuple[str, ...]:
    """The members of `among` that `base` is computed from (itself included), in the order of `nodes`."""
    by_name = {n.name: n for n in nodes}
    needed, stack = set(), [base]
    while stack:
        name = stack.pop()
        if name in needed or name not in among:
            continue
        needed.add(name)
        stack += [op.base for op in by_name[name].operands]
    return tuple(n.name for n in nodes if n.name in needed)


def regrouped(in_shape: tuple[int, ...], shape: tuple[int, ...]) -> str | None:
    """How a contiguous tensor of `shape` lies over a pool's contiguous input of `in_shape` (N, C, *spatial), element
    for element, in the terms codegen/pool.py computes a prologue member's coordinates in: "same" (the input's shape,
    size-1 axes aside), "spatial" (axes of its own over N·C, then the spatial axes), "merged" (axes over N·C, the last
    one spanning whole spatial planes: GroupNorm's (N, G, C/G·H·W)); None where it lies otherwise."""
    if squeezed(shape) == squeezed(in_shape):
        return "same"
    spatial = tuple(in_shape[2:])
    if prod(shape) != prod(in_shape) or not spatial or not shape:
        return None
    if len(shape) > len(spatial) and tuple(shape[-len(spatial):]) == spatial:
        return "spatial"
    return "merged" if shape[-1] % max(1, prod(spatial)) == 0 else None


def squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    """`shape` without its size-1 axes."""
    return tuple(s for s in shape if s != 1)


def _finish(graph: Graph, index: int, group: _Group, members: frozenset[str], consumers: dict[str, list[str]],
            graph_outputs: set[str], holders: dict[str, list[frozenset[str]]]) -> FusionGroup:
    """The group as the plan gives it (`members`: its node names). It writes the members it owns that are graph
    outputs or that another group computing one of their readers (`holders`: per node, the members of the groups
    that compute it) does not compute itself; a member it recomputes never."""
    inputs: list[str] = []
    reads: dict[str, int] = {}   # per buffer, the widest view the group reads it through
    for n in group.nodes:
        for op in n.operands:
            if op.base not in members:
                if op.base not in inputs:
                    inputs.append(op.base)
                ttype = graph.buffer_type(op.base)
                reads[op.base] = max(reads.get(op.base, 0), min(view_bytes(op, ttype.dtype), ttype.nbytes))
    read = sum(reads.values())
    outputs = [n.name for n in group.nodes if n.name not in group.recomputed and (
               n.name in graph_outputs or any(h is not members and n.name not in h
                                              for c in consumers[n.name] for h in holders[c]))]
    written = sum(n.out.nbytes for n in group.nodes if n.name in outputs)
    return FusionGroup(f"k{index}", group.family, tuple(n.name for n in group.nodes), tuple(inputs),
                       tuple(outputs), group.space, group.axes, read + written, group.prologue,
                       group.operand_prologues, group.recomputed)
