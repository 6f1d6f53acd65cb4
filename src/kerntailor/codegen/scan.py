"""Triton source for a scan group: a cumulative sum or product along one axis, plus its pointwise epilogue.

Iteration: the scanned axis is the "row"; every other axis is flattened into rows, XBLOCK rows per
program. A program walks its rows in RBLOCK chunks: `tl.cumsum`/`tl.cumprod` inside a chunk and a
running carry (the last value of the previous chunk) between chunks, so a row of any length works with
one read and one write of every element. Accumulation is fp32 for floats (fp64 for fp64) and int64 for
integers, as torch's cumsum promotes them.

`reverse` walks the row from its end; `exclusive` reads each element's predecessor (the identity at the
row's start). torch's `x.flip(d).cumsum(d).flip(d)` arrives as a scan over a flipped View whose result is
read through a flipped View: `fold_flipped_scans` rewrites that into a reverse scan over the unflipped
input, so the output needs no flipped (negative-stride) view, which no allocation could express.

The shared `AnchorWriter` (also used by pool.py) renders operand offsets through Views (any strides,
negative ones included, and offsets, all runtime size arguments where they vary), masked loads, and the
pointwise epilogue nodes of the anchor's output shape.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from fractions import Fraction
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Dim, Generalized, SizeExpr
from kerntailor.codegen.assemble import assemble, one_dim
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis
from kerntailor.codegen.helpers import math_helper
from kerntailor.codegen.render import TL_DTYPES, ExprRenderer, compute_dtype
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import const, product, same
from kerntailor.codegen.writer import KernelWriter
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Node, Pointwise, Scan
from kerntailor.ir.types import View, contiguous_strides
from kerntailor.plan.fusion import FusionGroup
from kerntailor.units import next_power_of_two

INT_DTYPES = ("i64", "i32", "i16", "i8", "u8", "bool")


def _scan_node(gen: Generalized, group: FusionGroup) -> Scan:
    node = gen.graph.node(group.nodes[0])
    if not isinstance(node, Scan):
        raise CodegenUnsupported(f"{group.name}: a scan group must start with its Scan node")
    return node


@dataclass(frozen=True, kw_only=True)
class ScanSchedule(Schedule):
    """XBLOCK rows per program, RBLOCK elements of each row per chunk (a carry between chunks)."""

    family: ClassVar[str] = "scan"
    order: ClassVar[tuple[str, ...]] = ("XBLOCK", "RBLOCK", "num_warps", "num_stages", "waves_per_eu")
    shown: ClassVar[tuple[str, ...]] = ("XBLOCK", "RBLOCK", "num_warps")

    XBLOCK: int
    RBLOCK: int

    def __post_init__(self) -> None:
        super().__post_init__()
        self.power_of_two("XBLOCK")
        self.power_of_two("RBLOCK")


def default_schedule(gen: Generalized, group: FusionGroup) -> ScanSchedule:
    """A schedule without search: long chunks along a contiguous row, else many rows side by side (the
    rows are then what is contiguous in memory, so a tile's loads coalesce across rows)."""
    node = _scan_node(gen, group)
    shape = node.operands[0].shape
    length = shape[node.axis] if shape else 1
    rows = max(1, prod(shape) // max(1, length))
    if abs(node.operands[0].strides[node.axis]) == 1 or length == 1:
        rblock = min(next_power_of_two(length), 2048)
        xblock = max(1, min(next_power_of_two(rows), 2048 // rblock, 64))
    else:
        xblock = min(64, next_power_of_two(rows))
        rblock = min(next_power_of_two(length), max(16, 2048 // xblock))
    return ScanSchedule(XBLOCK=xblock, RBLOCK=rblock, num_warps=8 if xblock * rblock >= 4096 else 4)


def generate_scan(gen: Generalized, group: FusionGroup, schedule: ScanSchedule, host_names: dict,
                  kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for a scan group under `schedule`."""
    if group.family != "scan":
        raise CodegenUnsupported(f"{group.name} is a {group.family} group")
    return _ScanWriter(gen, group, schedule, host_names, kernel_name).write()


# --- shared by the anchor families (scan, pool) ---------------------------------------------------------

class AnchorWriter(KernelWriter):
    """Common parts of a kernel whose first node is an anchor and whose other nodes are a pointwise
    epilogue over the anchor's output shape."""

    anchor_type: type = Node

    def __init__(self, gen: Generalized, group: FusionGroup, schedule: Schedule, host_names: dict, name: str):
        super().__init__(gen, group, schedule, host_names, name)
        self.anchor = self.nodes[0]
        if not isinstance(self.anchor, self.anchor_type):
            raise CodegenUnsupported(f"{group.name}: expected a {self.anchor_type.__name__} first, "
                                     f"got {type(self.anchor).__name__}")
        tail = self.tail_names()
        self.epilogue = [n for n in self.nodes[1:] if n.name not in tail]
        for n in self.epilogue:
            if not isinstance(n, Pointwise):
                raise CodegenUnsupported(f"{group.name}: {n.name} ({n.family}) in a {group.family} epilogue")
            if n.out.shape != self.anchor.out.shape:
                raise CodegenUnsupported(f"{group.name}: epilogue {n.name} of shape {n.out.shape}, "
                                         f"not the {group.family} output's {self.anchor.out.shape}")
        buffers = [self.graph.buffer_type(v.base).numel for n in self.nodes for v in n.operands]
        self.big = max([n.out.numel for n in self.nodes] + buffers) >= 2 ** 31 - 1
        # set by the family writer: axis -> coordinate text, the tile shape, the full-tile mask
        self.coords: dict[int, str] = {}
        self.tile = "[XBLOCK]"
        self.full_mask = "xmask"
        self.flat_index = ""  # a 1-d tile's flat position in the row-major iteration space, if any

    def tail_names(self) -> set[str]:
        """Members computed after the epilogue by the family's own code (a GEMM's row reductions)."""
        return set()

    # --- sizes and views ---------------------------------------------------------------------------
    def operand_offset(self, node: Node, j: int, coords: dict[int, str]) -> str:
        """Element offset of operand j of `node` at the position whose coordinate along each of the view's
        axes is `coords[axis]` (strides may be negative: a flip; the offset then points at its end)."""
        v, shape, strides, offset = self.view_exprs(node, j)
        terms = []
        if self.flat_index and coords is self.coords and self._contiguous(v, shape, strides):
            terms.append(self.flat_index)  # row-major over the iteration space: the flat index itself
            v = View(v.base, (), (), v.offset)
        for k in range(len(v.shape)):
            if v.strides[k] == 0 and strides[k].is_constant:
                continue  # broadcast
            if v.shape[k] == 1 and shape[k].is_constant:
                continue
            st = self.sizes.text(strides[k])
            terms.append(coords[k] if st == "1" else f"{coords[k]} * {st}")
        if not offset.is_constant or offset.coeff + offset.offset != 0:
            terms.append(self.sizes.text(offset))
        return " + ".join(terms) or "0"

    def _contiguous(self, v: View, shape: list[SizeExpr], strides: list[SizeExpr]) -> bool:
        if tuple(v.shape) != tuple(self.anchor.out.shape):
            return False
        for k in range(len(shape)):
            if v.shape[k] == 1 and shape[k].is_constant:
                continue
            expected = product(shape[k + 1:]) if k + 1 < len(shape) else const(1)
            if expected is None or not same(strides[k], expected):
                return False
        return True

    def full_tile(self, offset: str) -> str:
        """A pointer block must have the mask's shape: broadcast an offset that lacks some tile axis."""
        if all(any(_mentions(offset, n) for n in names) for names in self.tile_axes()):
            return offset
        return f"{offset} + tl.zeros({self.tile}, tl.int32)"

    def tile_axes(self) -> list[list[str]]:
        """For each axis of the tile, the names of values that vary along it."""
        return [list(self.coords.values()) + ([self.flat_index] if self.flat_index else [])]

    def load_text(self, buffer: str, offset: str, mask: str, other: str = "0") -> str:
        dtype = self.graph.buffer_type(buffer).dtype
        text = f"tl.load({self.pointer(buffer)} + ({self.full_tile(offset)}), mask={mask}, other={other})"
        cdt = compute_dtype(dtype)
        if cdt != dtype:
            text = f"{text}.to({TL_DTYPES[cdt]})"
        return text

    # --- the epilogue ------------------------------------------------------------------------------
    def _check_aligned(self, node: Node, j: int) -> None:
        view = node.operands[j]
        producer = self.graph.node(view.base)
        if tuple(view.shape) != tuple(producer.out.shape) or view.offset != 0 or any(
                st != c for s, st, c in zip(view.shape, view.strides, contiguous_strides(view.shape)) if s != 1):
            raise CodegenUnsupported(f"{node.name} reads {producer.name} of its group through a view "
                                     f"{view.describe()}")

    def leaf(self, node: Node):
        def render(load: Load, gather: str | None = None, valid: str | None = None, i: int = 0) -> str:
            view = node.operands[load.operand]
            if view.base in self.members:
                if gather is not None:
                    raise CodegenUnsupported(f"{node.name} gathers from {view.base} of its group")
                self._check_aligned(node, load.operand)
                return f"v_{view.base}"
            if len(view.shape) != len(self.anchor.out.shape):
                raise CodegenUnsupported(f"{node.name} operand {load.operand} has rank {len(view.shape)}")
            offset = self.operand_offset(node, load.operand, self.coords)
            if gather is not None:
                stride = self.sizes.text(self.sizes.slot(("node", node.name, "gather", i), load.gather[0]))
                offset = f"{offset} + ({gather}).to(tl.int64) * {stride}"
            mask = self.full_mask if valid is None else f"{self.full_mask} & {valid}"
            return self.cached_load(self.load_text(view.base, offset, mask))
        return render

    def compute_epilogue(self) -> None:
        for node in self.epilogue:
            self.compute_node(node)

    def compute_node(self, node: Node) -> None:
        """v_<node> = its expression over the tile."""
        renderer = ExprRenderer(self.leaf(node), lambda a: self.coords[a], self.slot(node))
        text = renderer.render(node.expr)
        self.helpers.update(renderer.helpers)
        self.out(f"v_{node.name} = {text}  # {node.origin}, {node.out}")

    def store_outputs(self, space: list[SizeExpr]) -> None:
        strides = [product(space[k + 1:]) if k + 1 < len(space) else const(1) for k in range(len(space))]
        if any(s is None for s in strides):
            raise CodegenUnsupported("output strides are not monomials")
        terms = []
        for k, s in enumerate(strides):
            if self.anchor.out.shape[k] == 1 and space[k].is_constant:
                continue
            st = self.sizes.text(s)
            terms.append(self.coords[k] if st == "1" else f"{self.coords[k]} * {st}")
        offset = self.full_tile(self.flat_index or " + ".join(terms) or "0")
        for name in self.group.outputs:
            node = self.graph.node(name)
            value = f"v_{name}"
            if node.out.dtype != compute_dtype(node.out.dtype) or node.out.dtype in INT_DTYPES:
                value = f"{value}.to({TL_DTYPES[node.out.dtype]})"
            self.out(f"tl.store({self.pointer(name)} + ({offset}), {value}, mask={self.full_mask})")

    # --- the kernel --------------------------------------------------------------------------------
    def finish(self, doc: str, constexprs: list[tuple[str, int]], grid: tuple[GridAxis, ...]) -> GeneratedKernel:
        return assemble(group=self.group.name, name=self.name, doc=doc, body=self.out.lines, pointers=self.pointers,
                        pointer_dtypes={b: self.graph.buffer_type(b).dtype for b in self.pointers}, sizes=self.sizes,
                        big=self.big, constexprs=constexprs, options=self.schedule.options(), grid=grid,
                        helpers=tuple(math_helper(h) for h in sorted(self.helpers)))

    def unravel(self, axes: list[int], sizes: list[SizeExpr], flat: str) -> None:
        """Coordinates i<axis> of `flat`, row-major over `axes` (of sizes `sizes`)."""
        if len(axes) == 1:
            self.out(f"i{axes[0]} = {flat}")
            return
        rest = flat
        for pos in range(len(axes) - 1, -1, -1):
            k = axes[pos]
            if pos == 0:
                self.out(f"i{k} = {rest}")
            else:
                size = self.sizes.text(sizes[pos])
                self.out(f"i{k} = {rest} % {size}")
                self.out(f"q{k} = {rest} // {size}")
                rest = f"q{k}"


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


# --- the scan writer ----------------------------------------------------------------------------------

_IDENTITY = {"sum": "0", "prod": "1"}


class _ScanWriter(AnchorWriter):
    anchor_type = Scan

    def write(self) -> GeneratedKernel:
        scan: Scan = self.anchor
        if scan.op not in ("sum", "prod"):
            raise CodegenUnsupported(f"scan op {scan.op}")
        xblock, rblock = self.schedule.XBLOCK, self.schedule.RBLOCK
        rank = len(scan.out.shape)
        axis = scan.axis % rank if rank else 0
        space = [self.sizes.slot(("node", scan.name, "out", k), s) for k, s in enumerate(scan.out.shape)]
        if rank == 0:
            raise CodegenUnsupported("a scan of a 0-d tensor")
        outer = [k for k in range(rank) if k != axis]
        rows = product([space[k] for k in outer]) if outer else const(1)
        if rows is None:
            raise CodegenUnsupported("row count is not a product of input dims")
        length = self.sizes.text(space[axis])
        in_dtype = self.graph.buffer_type(scan.operands[0].base).dtype
        if scan.out.dtype in INT_DTYPES:  # torch accumulates integer scans in int64
            acc, ident = "tl.int64", _IDENTITY[scan.op]
        else:
            acc = "tl.float64" if "fp64" in (scan.out.dtype, in_dtype) else "tl.float32"
            ident = _IDENTITY[scan.op] + ".0"
        self.tile = "[XBLOCK, RBLOCK]"
        self.full_mask = "xmask & rmask"
        self._outer = [f"i{k}" for k in outer]
        self._axis_coord = f"i{axis}"

        pid = "tl.program_id(0).to(tl.int64)" if self.big else "tl.program_id(0)"
        self.out(f"xindex = ({pid} * XBLOCK + tl.arange(0, XBLOCK))[:, None]  # rows, (XBLOCK, 1)")
        self.out(f"xmask = xindex < {self.sizes.text(rows)}")
        if outer:
            self.unravel(outer, [space[k] for k in outer], "xindex")
        self.coords = {k: f"i{k}" for k in range(rank)}
        self.out(f"carry = tl.full([XBLOCK, 1], {ident}, {acc})")
        self.out("last = tl.arange(0, RBLOCK)[None, :] == RBLOCK - 1")
        self.out(f"for roffset in range(0, {length}, RBLOCK):")
        self.out.depth += 1
        self.out("rindex = roffset + tl.arange(0, RBLOCK)[None, :]  # along the row, (1, RBLOCK)")
        self.out(f"rmask = rindex < {length}")
        self.out(f"i{axis} = {length} - 1 - rindex  # reverse: from the row's end" if scan.reverse
                 else f"i{axis} = rindex")
        # the scanned value: the element itself, or (exclusive) its predecessor along the walk
        if scan.exclusive:
            prev = f"i{axis} + 1" if scan.reverse else f"i{axis} - 1"
            coords = dict(self.coords)
            coords[axis] = "ip"
            self.out(f"ip = {prev}")
            offset = self.operand_offset(scan, 0, coords)
            mask = "xmask & rmask & (rindex > 0)"
        else:
            offset = self.operand_offset(scan, 0, self.coords)
            mask = self.full_mask
        value = self.cached_load(self.load_text(scan.operands[0].base, offset, mask))
        self.out(f"x = tl.where({mask}, {value}.to({acc}), {ident})")
        fn = "tl.cumsum" if scan.op == "sum" else "tl.cumprod"
        combine = "+" if scan.op == "sum" else "*"
        self.out(f"v_{scan.name} = carry {combine} {fn}(x, axis=1)  # {scan.describe()}, carried across chunks")
        self.out(f"carry = tl.sum(tl.where(last, v_{scan.name}, 0), axis=1, keep_dims=True)")
        self.compute_epilogue()
        self.store_outputs(space)
        self.out.depth -= 1
        shape_text = " x ".join(self.sizes.host(e) for e in space)
        doc = (f"cum{scan.op} along axis {axis} of ({shape_text}){' reversed' if scan.reverse else ''}"
               f"{' exclusive' if scan.exclusive else ''}: {', '.join(self.group.nodes)}. "
               f"XBLOCK rows per program, RBLOCK-element chunks with a carry.")
        return self.finish(doc, [("XBLOCK", xblock), ("RBLOCK", rblock)], (one_dim(rows, xblock),))

    def tile_axes(self) -> list[list[str]]:
        return [self._outer + ["xindex"], [self._axis_coord, "ip", "rindex"]]


# --- flip -> scan -> flip as a reverse scan ----------------------------------------------------------

Poly = dict[tuple, Fraction]


def _poly(e: SizeExpr) -> Poly | None:
    if not isinstance(e.coeff, Fraction):
        return None
    merged: dict[Dim, Fraction] = {}
    for d, x in e.factors:
        merged[d] = merged.get(d, Fraction(0)) + x
    key = tuple(sorted(((d, x) for d, x in merged.items() if x), key=repr))
    out: Poly = {}
    if e.coeff:
        out[key] = out.get(key, Fraction(0)) + e.coeff
    if e.offset:
        out[()] = out.get((), Fraction(0)) + Fraction(e.offset)
    return out


def _add(a: Poly, b: Poly, scale: Fraction = Fraction(1)) -> Poly:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + scale * v
    return {k: v for k, v in out.items() if v}


def _mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ka, va in a.items():
        for kb, vb in b.items():
            merged: dict[Dim, Fraction] = dict(ka)
            for d, x in kb:
                merged[d] = merged.get(d, Fraction(0)) + x
            key = tuple(sorted(((d, x) for d, x in merged.items() if x), key=repr))
            out[key] = out.get(key, Fraction(0)) + va * vb
    return {k: v for k, v in out.items() if v}


def _size_expr(p: Poly) -> SizeExpr | None:
    terms = [(k, v) for k, v in p.items() if k]
    offset = p.get((), Fraction(0))
    if not terms:
        return SizeExpr(Fraction(offset))
    if len(terms) > 1:
        return None
    (key, coeff), = terms
    return SizeExpr(coeff, key, offset)


def _flip_slots(gen: Generalized, exprs: dict, prefix: tuple, view: View, axis: int) -> View | None:
    """Flip `view` along `axis`, updating its stride and offset expressions in `exprs` (None if the new
    offset is not a monomial of input dims)."""
    length = gen.expr(prefix + ("shape", axis), view.shape[axis])
    stride = gen.expr(prefix + ("strides", axis), view.strides[axis])
    offset = gen.expr(prefix + ("offset",), view.offset)
    pl, ps, po = _poly(length), _poly(stride), _poly(offset)
    if pl is None or ps is None or po is None:
        return None
    new_offset = _size_expr(_add(po, _mul(_add(pl, {(): Fraction(1)}, Fraction(-1)), ps)))
    new_stride = _size_expr({k: -v for k, v in ps.items()})
    if new_offset is None or new_stride is None:
        return None
    flipped = view.flip((axis,))
    exprs[prefix + ("strides", axis)] = new_stride
    exprs[prefix + ("offset",)] = new_offset
    return flipped


def fold_flipped_scans(gen: Generalized) -> Generalized:
    """Rewrite `flip(d) -> scan(d) -> flip(d)` as a reverse scan: where every use of a scan's result is
    its full flip along the scanned axis, scan the flipped operand in reverse instead (flip∘scan∘flip is
    the reverse scan) and read the result directly. The groups of a plan are unchanged (same nodes)."""
    graph = gen.graph
    nodes = list(graph.nodes)
    outputs = list(graph.outputs)
    exprs = dict(gen.exprs)
    changed = False
    for idx, node in enumerate(nodes):
        if not isinstance(node, Scan) or not node.out.shape:
            continue
        axis = node.axis % len(node.out.shape)
        shape = node.out.shape
        if shape[axis] <= 1:
            continue
        flipped_use = View.of(node.name, shape).flip((axis,))
        uses = [("node", j, k) for j, n in enumerate(nodes) for k, v in enumerate(n.operands) if v.base == node.name]
        uses += [("output", i) for i, v in enumerate(outputs) if v.base == node.name]
        views = [nodes[u[1]].operands[u[2]] if u[0] == "node" else outputs[u[1]] for u in uses]
        if not uses or any((v.shape, v.strides, v.offset) != (flipped_use.shape, flipped_use.strides,
                                                                  flipped_use.offset) for v in views):
            continue
        trial = dict(exprs)
        new_operand = _flip_slots(gen, trial, ("node", node.name, "operand", 0), node.operands[0], axis)
        if new_operand is None:
            continue
        ok = True
        new_views = []
        for u, v in zip(uses, views):
            prefix = ("node", nodes[u[1]].name, "operand", u[2]) if u[0] == "node" else ("output", u[1])
            nv = _flip_slots(gen, trial, prefix, v, axis)
            if nv is None:
                ok = False
                break
            new_views.append(nv)
        if not ok:
            continue
        exprs = trial
        nodes[idx] = dataclasses.replace(node, operands=(new_operand,) + node.operands[1:],
                                         reverse=not node.reverse)
        for u, nv in zip(uses, new_views):
            if u[0] == "node":
                n = nodes[u[1]]
                ops = list(n.operands)
                ops[u[2]] = nv
                nodes[u[1]] = dataclasses.replace(n, operands=tuple(ops))
            else:
                outputs[u[1]] = nv
        changed = True
    if not changed:
        return gen
    new_graph = dataclasses.replace(graph, nodes=tuple(nodes), outputs=tuple(outputs))
    return dataclasses.replace(gen, graph=new_graph, exprs=tuple(exprs.items()))
