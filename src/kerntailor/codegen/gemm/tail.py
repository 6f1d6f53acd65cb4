"""What a GEMM kernel does after its product: split-K's combine and the row tail, both "last to arrive".

Split-K: each split stores its fp32 partial tile and bumps the tile's counter; the last to arrive sums the
partials in a fixed order (0, 1, ...) and runs the epilogue, so the sum does not depend on which split came
last and a non-linear epilogue sees the whole sum.

Row tail (plan/row_tail.py): reductions over N after the product (logsumexp's shifted sum, sums, means,
max/min). Each tile reduces its own columns and stores its rows' partials, per channel; the last tile of the
row block to arrive combines them in tile order, then computes and stores the row values, so the M x N product
is never written. Shifted sums Σ exp(u − c) are rescaled by exp(c_t − C). A convolution's reductions over
its channels are the same tail on its implicit GEMM's tile (codegen/conv.py): `find_row_tail`, `row_value_load`,
`row_tail_launch` and `write_row_tail` serve both writers, which define the tile's names the tail reads: `pid_m`,
`pid_n`, `om` (the output rows, (BLOCK_M, 1)), `mmask`, `nmask`.

Column tail (plan/row_tail.py's column_tail): a convolution's reductions over its spatial axes, the same scheme
transposed: its tiles hold one image's positions (rows), each reduces its rows per channel, and the image's last
position tile to arrive combines the partials in tile order (`write_column_tail`, `column_tail_launch`).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.reductions import FLOAT_IDENTITY, row_extremum
from kerntailor.codegen.kernel import Factors, Scratch
from kerntailor.codegen.render import TL_DTYPES, compute_dtype, nan_extremum
from kerntailor.codegen.sizes import const
from kerntailor.plan.row_tail import RowTail, row_tail
from kerntailor.units import next_power_of_two

# the row tail's scratch, and the column tail's (write_column_tail)
ROW_SCRATCH_DTYPES = {"row_partials": "fp32", "row_counters": "i32", "col_partials": "fp32", "col_counters": "i32"}


def find_row_tail(w, whole_row: bool = False) -> RowTail | None:
    """The row tail of writer `w`'s group (plan/row_tail.py; `whole_row`: the writer can put every column in one
    tile), None for a group the planner gave no reductions (reduce_axes); CodegenUnsupported where its reductions
    do not combine from tiles."""
    if not w.group.reduce_axes:
        return None
    row = row_tail(w.graph, list(w.group.nodes), set(w.group.outputs), whole_row)
    if row is None:
        raise CodegenUnsupported(f"{w.group.name}: its row reductions do not combine from tiles")
    return row


def row_value_load(w, base: str, gather: str | None, valid: str | None) -> str | None:
    """`v_<base>` where an epilogue or tail member reads a row value (row_tail checked how: broadcast along the
    columns, (BLOCK_M, 1)); None for any other read."""
    if w.row is not None and base in w.row.reduced and gather is None and valid is None:
        return f"v_{base}"
    return None


@dataclass(frozen=True)
class RowLaunch:
    """What a row tail adds to its kernel's launch."""

    constexprs: tuple[tuple[str, int], ...] = ()
    scratch: tuple[Scratch, ...] = ()
    host_constexprs: tuple[tuple[str, str], ...] = ()
    host_prologue: tuple[str, ...] = ()


def tile_form(row: RowTail, cols: SizeExpr, block_n: int, per_call: bool = False) -> str:
    """How each tile's row reductions become the rows': "one" (one tile spans the columns whatever the call:
    spans_columns), "split" (partials, the row block's last tile combines them), "per_call" (`per_call` writers
    where the columns vary: the host picks one of the two per call, constexpr ROW_ONE_TILE), "checked" (a whole-row
    tail over varying columns: one tile, the host refuses a call with more columns than BLOCK_N)."""
    if spans_columns(cols, block_n):
        return "one"
    if row.whole_row:
        return "checked"
    return "per_call" if per_call else "split"


def row_tail_launch(row: RowTail, form: str, lead: Factors, rows: SizeExpr, cols: SizeExpr, blocks: tuple[int, int],
                    traced_cols: int, host_cols: str, kernel: str) -> RowLaunch:
    """The row tail's launch in `form` (tile_form): for a combine, constexpr ROW_PARTS (partials of this many tiles
    per load in the combine, any N) and the scratch: per row block (`lead` factors before it: a batch), each column
    tile's partials of BLOCK_M rows per channel (every one written before it is read) and the row block's arrival
    counter (zeroed); per call, the host's ROW_ONE_TILE; "checked", the host's refusal of too many columns."""
    bm, bn = blocks
    if form == "one":
        return RowLaunch()
    if form == "checked":
        return RowLaunch(host_prologue=(
            f"if {host_cols} > {bn}:",
            f'    raise ValueError(f"{kernel} reduces rows of {{{{{host_cols}}}}} columns (output channels) in one '
            f'tile of {bn}: generate the kernel at this size")'))
    parts = max(2, min(32, next_power_of_two(-(-traced_cols // bn))))
    row_blocks = lead + ((rows, bm),)
    channels = const(bm * len(row.channels))
    scratch = (Scratch("row_partials", "fp32", row_blocks + ((cols, bn), (channels, 1)), False),
               Scratch("row_counters", "i32", row_blocks))
    if form == "split":
        return RowLaunch((("ROW_PARTS", parts),), scratch)
    return RowLaunch((("ROW_PARTS", parts), ("ROW_ONE_TILE", int(traced_cols <= bn))), scratch,
                     (("ROW_ONE_TILE", f"int({host_cols} <= {bn})"),))


def _row_value(w, op: str, value: str) -> str:
    """A row reduction of `value` over axis 1 (max and min keep a NaN, as torch.amax)."""
    return f"tl.sum({value}, axis=1, keep_dims=True)" if op == "sum" else row_extremum(w, op, value)


@contextmanager
def last_to_arrive(w, name: str, counter: str, count: str, whose: str, then: str):
    """Lines in the `with` run only in the last of `count` programs to arrive, after this program's partials
    are stored (split-K's tiles, the row tail's row blocks): every thread's stores come before the counter
    moves (barrier, acq_rel atomic), so the last arriver reads them all."""
    w.out(f"tl.debug_barrier()  # every thread's partials are written before {whose} counter moves")
    w.out(f'{name} = tl.atomic_add({counter}, 1, sem="acq_rel")')
    with w.out.block(f"if {name} == {count} - 1:  # {then}"):
        yield


@contextmanager
def split_combine(w, split: int):
    """With split-K, lines in the `with` run in the tile's last split, after it summed every split's partial
    tile in order; without, they run as they are."""
    if split == 1:
        yield
        return
    w.pointer("partials")
    w.pointer("counters")
    w.out("local = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]")
    w.out("tl.store(partials_ptr + pid.to(tl.int64) * (BLOCK_M * BLOCK_N) + local, acc)")
    with last_to_arrive(w, "arrived", "counters_ptr + tile_id", "SPLIT_K", "the tile's",
                        "the last split: sum the partials in a fixed order, then the epilogue"):
        w.out("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
        w.out("for s in tl.static_range(SPLIT_K):")
        w.out("    part_id = tile_id.to(tl.int64) * SPLIT_K + s")
        w.out("    acc += tl.load(partials_ptr + part_id * (BLOCK_M * BLOCK_N) + local, volatile=True)")
        yield


def spans_columns(cols: SizeExpr, block_n: int) -> bool:
    """Whether one BLOCK_N tile holds every column in every variant (a constant N <= BLOCK_N: a convolution's
    output channels): each tile's row reductions are then the whole row's, no partials and no combine."""
    return cols.is_constant and int(cols.evaluate({})) <= block_n


def write_row_tail(w, M: str, N: str, form: str = "split") -> None:
    """The row tail in `form` (tile_form): "split", each tile's share of the row reductions, then (last tile of the
    row block) their combine and stores; "one" and "checked", the tile's reductions are the rows' and the row values
    are stored at once; "per_call", both, under the host's ROW_ONE_TILE."""
    _in_form(w, form, "ROW_ONE_TILE", "this call's columns fit one tile", lambda one: _write_row_tail(w, M, N, one))


def _in_form(w, form: str, flag: str, what: str, write) -> None:
    """`write(one_tile)` as `form` says: "split" write(False), "per_call" both under the host's constexpr `flag`
    (true where `what`), any other write(True). A load either branch makes is that branch's (w.loads restored)."""
    if form == "per_call":
        before = dict(w.loads)
        with w.out.block(f"if {flag}:  # {what}"):
            write(True)
        w.loads = dict(before)
        with w.out.block("else:"):
            write(False)
        w.loads = before
        return
    write(form != "split")


def _write_row_tail(w, M: str, N: str, one_tile: bool) -> None:
    row = w.row
    by_name = {r.name: r for r in row.reductions}
    channels = row.channels
    if one_tile:
        w.out("# row tail: this tile holds every column, so its reductions are the rows' (columns past N count as "
              "the identity)")
    else:
        w.out("# row tail: this tile's share of each row reduction (columns past N count as the identity)")
    needed = set(row.nodes if one_tile else channels)
    for name in reversed(row.nodes):   # what the partials need (not the row values after them)
        if name in needed:
            needed.update(v.base for v in w.graph.node(name).operands if v.base in row.nodes)
    for name in (n for n in row.nodes if n in needed):
        node = w.graph.node(name)
        if name in by_name:
            op = by_name[name].op
            tile = f"tl.where(nmask, v_{node.operands[0].base}, {FLOAT_IDENTITY[op]})"
            w.out(f"v_{name} = {_row_value(w, op, tile)}  # {node.describe()} over this tile")
        else:
            w.compute_node(node)
    if one_tile:
        _store_rows(w)
        return
    parts, counters = w.pointer("row_partials"), w.pointer("row_counters")
    w.out(f"tiles_n = tl.cdiv({N}, BLOCK_N)")
    w.out(f"rows_pad = tl.cdiv({M}, BLOCK_M) * BLOCK_M")
    for ch, name in enumerate(channels):
        w.out(f"tl.store({parts} + {_channel_rows(ch)} * tiles_n + pid_n, v_{name})")
    with last_to_arrive(w, "row_arrived", f"{counters} + pid_m", "tiles_n", "the row block's",
                        "the row block's last tile: combine its partials in tile order"):
        w.out("rt = tl.arange(0, ROW_PARTS)[None, :]")
        for name in row.nodes:
            node = w.graph.node(name)
            if name not in by_name:
                if name in row.reduced:
                    w.compute_node(node)   # again, from the combined values
                continue
            _combine(w, by_name[name], channels, parts)
            w.out(f"v_{name} = {_row_value(w, by_name[name].op, f'acc_{name}')}  # {node.describe()}")
        _store_rows(w)


def _store_rows(w) -> None:
    """The group's per-row outputs, one value per row, each in its dtype (a whole-row tail's full-size outputs are
    the writer's to store)."""
    for name in (n for n in w.group.outputs if n in w.row.reduced):
        node = w.graph.node(name)
        value = f"v_{name}"
        if node.out.dtype != compute_dtype(node.out.dtype):
            value = f"{value}.to({TL_DTYPES[node.out.dtype]})"
        w.out(f"tl.store({w.pointer(name)} + om, {value}, mask=mmask)  # one value per row")


def _combine(w, r, channels: tuple[str, ...], parts: str) -> None:
    """acc_<r>: the row block's partials of reduction `r`, combined in tile order, ROW_PARTS tiles at a time."""
    name, ident = r.name, FLOAT_IDENTITY[r.op]
    at = f"{parts} + {{rows}} * tiles_n + part0 + rt"
    w.out(f"acc_{name} = tl.full([BLOCK_M, ROW_PARTS], {ident if not r.shift else '0.0'}, tl.float32)")
    with w.out.block("for part0 in range(0, tiles_n, ROW_PARTS):"):
        w.out("tmask = part0 + rt < tiles_n")
        part = (f"tl.load({at.format(rows=_channel_rows(channels.index(name)))}, mask=tmask, other={ident}, "
                "volatile=True)")
        if r.shift:   # Σ_t s_t · exp(c_t − C): each tile summed exp(u − c_t)
            w.out(f"c_t = tl.load({at.format(rows=_channel_rows(channels.index(r.shift)))}, mask=tmask, "
                  "other=0.0, volatile=True)")
            w.out(f"acc_{name} += tl.where(tmask, {part} * tl.exp(c_t - v_{r.shift}), 0.0)")
        else:
            combined = f"acc_{name} + {part}" if r.op == "sum" else nan_extremum(r.op, f"acc_{name}", part)
            w.out(f"acc_{name} = {combined}")


def _channel_rows(ch: int) -> str:
    """Row index, in int64, of the output rows `om` in partial channel `ch` (rows_pad rows per channel)."""
    return f"(om + {ch} * rows_pad).to(tl.int64)" if ch else "om.to(tl.int64)"


# --- column tail: a convolution's reductions over its spatial axes (plan/row_tail.py's column_tail) -------------

def column_tail_launch(row: RowTail, images: SizeExpr, positions: SizeExpr, cols: SizeExpr,
                       blocks: tuple[int, int], traced_positions: int, form: str, host_positions: str) -> RowLaunch:
    """A column tail's launch in `form` (tile_form's "one", "split" or "per_call", over an image's positions):
    for a combine, per image, position tile and channel, BLOCK_N-padded columns of partials (every one written
    before it is read), and per image and column tile an arrival counter (zeroed); ROW_PARTS position tiles per
    load in the combine; per call, the host's COL_ONE_TILE (an image's positions fit one tile)."""
    if form == "one":
        return RowLaunch()
    bm, bn = blocks
    channels = const(len(row.channels))
    scratch = (Scratch("col_partials", "fp32", ((images, 1), (positions, bm), (channels, 1), (cols, bn),
                                                (const(bn), 1)), False),
               Scratch("col_counters", "i32", ((images, 1), (cols, bn))))
    parts = (("ROW_PARTS", max(2, min(32, next_power_of_two(-(-traced_positions // bm))))),)
    if form == "split":
        return RowLaunch(parts, scratch)
    return RowLaunch(parts + (("COL_ONE_TILE", int(traced_positions <= bm)),), scratch,
                     (("COL_ONE_TILE", f"int({host_positions} <= {bm})"),))


def _column_value(op: str, value: str) -> str:
    """A reduction of `value` ([BLOCK_M, BLOCK_N]) over axis 0, kept as [1, BLOCK_N]; max and min keep a NaN."""
    if op == "sum":
        return f"tl.sum({value}, axis=0, keep_dims=True)"
    fn = "tl.max" if op == "max" else "tl.min"
    return (f"tl.where(tl.sum(({value} != {value}).to(tl.int32), axis=0, keep_dims=True) > 0, float('nan'), "
            f"{fn}({value}, axis=0, keep_dims=True))")


def write_column_tail(w, S: str, N: str, form: str) -> None:
    """The column tail in `form` (column_tail_launch's): "per_call" writes both, under the host's COL_ONE_TILE."""
    _in_form(w, form, "COL_ONE_TILE", "this call's image positions fit one tile",
             lambda one: _write_column_tail(w, S, N, one))


def _write_column_tail(w, S: str, N: str, one_tile: bool) -> None:
    """The column tail on a convolution's tile of one image's positions (writer names: `img`, `pid_m`, `pid_n`,
    `rn`, `mmask` (positions of this image), `nmask`): each reduction over the tile's rows; with `one_tile` those
    are the image's and the values are stored at once, else each tile stores its partials and the image's last
    position tile to arrive combines them in tile order, then computes the values after them and stores them."""
    row = w.row
    w.out("# column tail: this tile's share of each reduction over the image's positions (rows past them count "
          "as the identity)")
    for r in row.reductions:
        node = w.graph.node(r.name)
        tile = f"tl.where(mmask, v_{node.operands[0].base}, {FLOAT_IDENTITY[r.op]})"
        w.out(f"v_{r.name} = {_column_value(r.op, tile)}  # {node.describe()} over this tile")
    if not one_tile:
        parts, counters = w.pointer("col_partials"), w.pointer("col_counters")
        w.out(f"tiles_m = tl.cdiv({S}, BLOCK_M)")
        w.out(f"tiles_n = tl.cdiv({N}, BLOCK_N)")
        w.out("cols_pad = tiles_n * BLOCK_N")
        channels = len(row.channels)
        at = (f"{parts} + ((img * tiles_m + {{tile}}) * {channels} + {{ch}}).to(tl.int64) * cols_pad + rn[None, :]"
              if channels > 1 else f"{parts} + (img * tiles_m + {{tile}}).to(tl.int64) * cols_pad + rn[None, :]")
        for ch, r in enumerate(row.reductions):
            w.out(f"tl.store({at.format(tile='pid_m', ch=ch)}, v_{r.name})")
        with last_to_arrive(w, "col_arrived", f"{counters} + img * tiles_n + pid_n", "tiles_m", "the image's",
                            "the image's last position tile: combine its partials in tile order"):
            w.out("rt = tl.arange(0, ROW_PARTS)[:, None]")
            for ch, r in enumerate(row.reductions):
                ident = FLOAT_IDENTITY[r.op]
                w.out(f"acc_{r.name} = tl.full([ROW_PARTS, BLOCK_N], {ident}, tl.float32)")
                with w.out.block("for part0 in range(0, tiles_m, ROW_PARTS):"):
                    part = (f"tl.load({at.format(tile='part0 + rt', ch=ch)}, mask=part0 + rt < tiles_m, "
                            f"other={ident}, volatile=True)")
                    combined = (f"acc_{r.name} + {part}" if r.op == "sum" else
                                nan_extremum(r.op, f"acc_{r.name}", part))
                    w.out(f"acc_{r.name} = {combined}")
                w.out(f"v_{r.name} = {_column_value(r.op, f'acc_{r.name}')}")
            _column_values(w, S, N)
        return
    _column_values(w, S, N)


def _column_values(w, S: str, N: str) -> None:
    """The tail's values after its reductions, then its outputs: one value per (image, channel)."""
    reductions = {r.name for r in w.row.reductions}
    for name in (n for n in w.row.nodes if n not in reductions):
        w.compute_node(w.graph.node(name))
    for name in w.group.outputs:
        node = w.graph.node(name)
        value = f"v_{name}"
        if node.out.dtype != compute_dtype(node.out.dtype):
            value = f"{value}.to({TL_DTYPES[node.out.dtype]})"
        w.out(f"tl.store({w.pointer(name)} + img * {N} + rn[None, :], {value}, mask=nmask)  # one value per "
              "(image, channel)")
