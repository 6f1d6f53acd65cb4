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

The writer is an AnchorWriter (anchor.py): the scan node, then a pointwise epilogue over its output. A pointwise
prologue (plan/fusion.py: `x * mask` before a masked cumsum, read by nothing else) is computed where the scan loads
each element, at that element's coordinates (its predecessor's for an exclusive scan), so it is never written.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Generalized, SizeExpr
from kerntailor.codegen.anchor import INT_DTYPES, AnchorWriter
from kerntailor.codegen.assemble import one_dim
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GeneratedKernel
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import const, poly, poly_add, poly_expr, poly_mul, product, row_sizes, same
from kerntailor.ir.nodes import Scan
from kerntailor.ir.types import View
from kerntailor.plan.fusion import FusionGroup
from kerntailor.units import next_power_of_two


def _scan_node(gen: Generalized, group: FusionGroup) -> Scan:
    node = gen.graph.node(group.anchor)
    if not isinstance(node, Scan):
        raise CodegenUnsupported(f"{group.name}: a scan group must start with its Scan node (after its prologue)")
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


def work_sizes(gen: Generalized, group: FusionGroup) -> dict[str, int]:
    """{"R", "X"}: rows of R scanned along the scan's axis (search/families.py's scan_space)."""
    return row_sizes(group.space, (_scan_node(gen, group).axis,))


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


# --- the scan writer ----------------------------------------------------------------------------------

_IDENTITY = {"sum": "0", "prod": "1"}


class _ScanWriter(AnchorWriter):
    anchor_type = Scan
    takes_prologue = True
    row_end_reads: frozenset | set = frozenset()   # (node, operand) reading the row's end (_row_end_reads)

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
        self.row_end_reads = self._row_end_reads(space, axis)
        self.out(f"carry = tl.full([XBLOCK, 1], {ident}, {acc})")
        self.out("last = tl.arange(0, RBLOCK)[None, :] == RBLOCK - 1")
        if self.row_end_reads:   # a first pass: the row's end, which the epilogue reads at every element
            self.out(f"for roffset in range(0, {length}, RBLOCK):  # the row's end first: the scan, nothing stored")
            self.out.depth += 1
            self._scan_chunk(scan, axis, length, acc, ident)
            self.out.depth -= 1
            self.out(f"end_{scan.name} = carry  # {scan.name} at the row's end, (XBLOCK, 1)")
            self.out(f"carry = tl.full([XBLOCK, 1], {ident}, {acc})")
        self.out(f"for roffset in range(0, {length}, RBLOCK):")
        self.out.depth += 1
        self._scan_chunk(scan, axis, length, acc, ident)
        self.compute_epilogue()
        self.store_outputs(space)
        self.out.depth -= 1
        shape_text = " x ".join(self.sizes.host(e) for e in space)
        doc = (f"cum{scan.op} along axis {axis} of ({shape_text}){' reversed' if scan.reverse else ''}"
               f"{' exclusive' if scan.exclusive else ''}: {', '.join(self.group.nodes)}. "
               f"XBLOCK rows per program, RBLOCK-element chunks with a carry"
               f"{'; a first pass for the row end the epilogue reads' if self.row_end_reads else ''}.")
        return self.finish(doc, [("XBLOCK", xblock), ("RBLOCK", rblock)], (one_dim(rows, xblock),))

    def _scan_chunk(self, scan: Scan, axis: int, length: str, acc: str, ident: str) -> None:
        """One RBLOCK chunk of the rows (a loop body): its indices, the scanned values, v_<scan> and the carry to
        the next chunk. Its loads are its own (a second pass reloads)."""
        self.loads = {}
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
        if self.prologue:
            value = self._prologue_at(coords if scan.exclusive else self.coords, mask)
        else:
            value = self.cached_load(self.load_text(scan.operands[0].base, offset, mask))
        self.out(f"x = tl.where({mask}, {value}.to({acc}), {ident})")
        fn = "tl.cumsum" if scan.op == "sum" else "tl.cumprod"
        combine = "+" if scan.op == "sum" else "*"
        self.out(f"v_{scan.name} = carry {combine} {fn}(x, axis=1)  # {scan.describe()}, carried across chunks")
        self.out(f"carry = tl.sum(tl.where(last, v_{scan.name}, 0), axis=1, keep_dims=True)")

    def _row_end_reads(self, space: list[SizeExpr], axis: int) -> set[tuple[str, int]]:
        """(node, operand) of the epilogue's reads of the scan at its row's last walked element, broadcast along
        the row (`c = x.cumsum(-1); c[..., -1:] - c`: Mamba2's segment decays): the row's final carry, at every
        size. An exclusive scan never holds its final carry; a reversed one (fold_flipped_scans: only where every
        use is the full flip) has no such reader. Other reads of the scan through a view are refused by
        member_value, naming the reader (generate cuts the group there)."""
        scan: Scan = self.anchor
        if scan.exclusive or scan.reverse:
            return set()
        rank = len(space)
        strides = [product(space[k + 1:]) if k + 1 < rank else const(1) for k in range(rank)]
        pl, ps = poly(space[axis]), poly(strides[axis]) if strides[axis] is not None else None
        if pl is None or ps is None:
            return set()
        end = poly_add(poly_mul(pl, ps), ps, Fraction(-1))   # (length - 1) x the row's stride
        found = set()
        for node in self.epilogue:
            for j, v in enumerate(node.operands):
                if v.base != scan.name or len(v.shape) != rank or v.strides[axis] != 0:
                    continue
                _, shape, view_strides, offset = self.view_exprs(node, j)
                if view_strides[axis].is_constant and poly(offset) == end and all(
                        k == axis or (same(shape[k], space[k]) and (v.shape[k] == 1 and shape[k].is_constant
                                                                   or same(view_strides[k], strides[k])))
                        for k in range(rank)):
                    found.add((node.name, j))
        return found

    def member_value(self, node, j: int) -> str:
        if (node.name, j) in self.row_end_reads:
            return f"end_{self.anchor.name}"
        return super().member_value(node, j)

    def tile_axes(self) -> list[list[str]]:
        return [self._outer + ["xindex"], [self._axis_coord, "ip", "rindex"]]

    def _prologue_at(self, coords: dict[int, str], mask: str) -> str:
        """The prologue's members at `coords` (their loads under `mask`); the name of the value the scan reads."""
        view = self.anchor.operands[0]
        if view.base not in self.members or any(n.out.shape != view.shape for n in self.prologue):
            raise CodegenUnsupported(f"{self.group.name}: {self.anchor.name} reads {view.base} as {view.shape}")
        for node in self.prologue:
            self.compute_node(node, coords, mask, note=" (prologue)")
        return f"v_{view.base}"


# --- flip -> scan -> flip as a reverse scan ----------------------------------------------------------

def _flip_slots(gen: Generalized, exprs: dict, prefix: tuple, view: View, axis: int) -> View | None:
    """Flip `view` along `axis`, updating its stride and offset expressions in `exprs` (None if the new
    offset is not a monomial of input dims)."""
    length = gen.expr(prefix + ("shape", axis), view.shape[axis])
    stride = gen.expr(prefix + ("strides", axis), view.strides[axis])
    offset = gen.expr(prefix + ("offset",), view.offset)
    pl, ps, po = poly(length), poly(stride), poly(offset)
    if pl is None or ps is None or po is None:
        return None
    new_offset = poly_expr(poly_add(po, poly_mul(poly_add(pl, {(): Fraction(1)}, Fraction(-1)), ps)))
    new_stride = poly_expr({k: -v for k, v in ps.items()})
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
