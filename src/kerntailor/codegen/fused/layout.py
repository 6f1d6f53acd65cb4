"""The body of a fused kernel, laid out when it is complete.

While a writer walks the group, three things cannot be written yet, so they stand in the lines as
placeholders and are laid out by `expand` at the end:

- coordinates: a block unravels a flat index into the coordinates `i<axis>` some load or store uses, and
  only those, each with the fewest divisions (a run of unused inner axes is one division by their product);
- passes over a row: flat (`for roffset in range(0, n, RBLOCK)`), or nested where the pass's loads index
  some reduced axes separately (a per-channel weight in a GroupNorm group): those axes become a scalar loop
  around a contiguous inner loop, if the inner loop wastes at most 1/8 of its last chunk. A pass that
  follows one ending at the row's end walks backwards (its first chunks are the ones L2 most likely holds),
  unless the order of elements matters (Welford's counts, argmax's first index);
- loads whose offset moves only with reduced axes: one value per row where those axes are scalars, a tile
  otherwise.
"""

from __future__ import annotations

from math import prod

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.sizes import SizeArgs, product
from kerntailor.codegen.writer import Lines


class Layout:
    def __init__(self, out: Lines, sizes: SizeArgs, space):
        self.out, self.sizes, self.space = out, sizes, space   # space: the (possibly tiled) IterationSpace
        self.rblock = 1                     # the kernel's RBLOCK, once known (a nested pass's waste)
        self.blocks: list[dict] = []        # coordinate blocks: which i<k> each section defines and uses
        self.owner: dict[int, int] = {}     # axis -> the block defining its coordinate now
        self.loops: list[dict] = []         # passes over the row
        self.deferred: list[dict] = []      # loads that are row-shaped if their reduced axes become scalars
        self._scalar_axes: set[int] = set()
        self._at_end = False                # whether the last pass laid out ended at the row's end

    # --- coordinates ---------------------------------------------------------------------------------------
    def ci(self, axis: int) -> str:
        """The coordinate variable of kernel axis `axis` (its definition is emitted because of this use)."""
        block = self.owner.get(axis)
        if block is None:
            raise CodegenUnsupported(f"coordinate of axis {axis} used where it is not defined")
        self.blocks[block]["used"].add(axis)
        return f"i{axis}"

    def coords_block(self, axes: list[int], flat: str) -> int:
        """A placeholder for the unravelling of `flat` (row-major over `axes`) into coordinates."""
        n = len(self.blocks)
        self.blocks.append({"axes": list(axes), "flat": flat, "depth": self.out.depth, "used": set()})
        for k in axes:
            self.owner[k] = n
        self.out.lines.append(f"\0coords{n}")
        return n

    def unravel(self, axes: list[int], flat: str, used: set[int], depth: int) -> list[str]:
        """Only the coordinates in `used`, each with the fewest divisions: a run of unused inner axes is
        one division by the product of their sizes."""
        pad = "    " * depth
        need = [p for p, k in enumerate(axes) if k in used]
        if not need:
            return []
        if len(axes) == 1:
            return [f"{pad}i{axes[0]} = {flat}"]
        shape = self.space.shape
        lines, rest, pending = [], flat, []
        for pos in range(len(axes) - 1, min(need) - 1, -1):
            k = axes[pos]
            if pos not in need:
                pending.append(shape[k])
                continue
            if pending:
                div = self.sizes.text(product(pending))
                if pos == 0:
                    lines.append(f"i{k} = {rest} // {div}")
                    break
                lines.append(f"q{k} = {rest} // {div}")
                rest = f"q{k}"
            if pos == 0:
                lines.append(f"i{k} = {rest}")
            else:
                lines.append(f"i{k} = {rest} % {self.sizes.text(shape[k])}")
                pending = [shape[k]]
        return [pad + line for line in lines]

    # --- loads that depend on the layout -------------------------------------------------------------------
    def defer(self, name: str, row: str, full: str, axes: set[int]) -> None:
        """`name` = `row` (one value per row) where `axes` are scalars of a nested pass, `full` otherwise."""
        self.deferred.append({"name": name, "row": row, "full": full, "axes": set(axes), "depth": self.out.depth})
        self.out.lines.append(f"\0load{len(self.deferred) - 1}")

    # --- passes over the row -------------------------------------------------------------------------------
    def open_loop(self, rnumel: SizeExpr) -> int:
        """A pass over the row in RBLOCK chunks, laid out when the kernel is done; lines written until
        `close_loop(n)` are its body."""
        n = len(self.loops)
        self.loops.append({"depth": self.out.depth, "rnumel": rnumel, "flat_only": False, "ordered": False})
        self.out.lines.append(f"\0loop{n}")
        self.out.depth += 1
        return n

    def loop_coords(self, n: int) -> None:
        """The pass's coordinates of the reduced axes (from rindex)."""
        self.loops[n]["block"] = self.coords_block(list(self.space.axes), "rindex")

    def close_loop(self, n: int) -> None:
        self.out.depth -= 1
        self.out.lines.append(f"\0endloop{n}")

    def expand(self, lines: list[str]) -> list[str]:
        """The lines with every placeholder laid out."""
        out, i = [], 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("\0loop"):
                n = int(line[5:])
                end = lines.index(f"\0endloop{n}", i + 1)
                out += self._expand_loop(n, lines[i + 1:end])
                i = end + 1
                continue
            if line.startswith("\0coords"):
                b = self.blocks[int(line[7:])]
                out += self.unravel(b["axes"], b["flat"], b["used"], b["depth"])
            elif line.startswith("\0load"):
                d = self.deferred[int(line[5:])]
                text = d["row"] if d["axes"] <= self._scalar_axes else d["full"]
                out.append("    " * d["depth"] + f"{d['name']} = {text}")
            else:
                out.append(line)
            i += 1
        return out

    def _nest_at(self, loop: dict) -> int | None:
        """Position in the reduced axes up to which a pass loops over scalar coordinates, or None (flat)."""
        axes = self.space.axes
        used = self.blocks[loop["block"]]["used"]
        if loop["flat_only"] or len(axes) < 2:
            return None
        positions = [p for p, k in enumerate(axes) if k in used]
        if not positions or max(positions) == len(axes) - 1:
            return None
        p = max(positions)
        inner = prod(self.space.concrete[k] for k in axes[p + 1:])
        waste = -(-inner // self.rblock) * self.rblock / inner
        return p if waste <= 1.125 else None

    def _expand_loop(self, n: int, body: list[str]) -> list[str]:
        loop = self.loops[n]
        pad = "    " * loop["depth"]
        rnumel = self.sizes.text(loop["rnumel"])
        reverse = self._at_end and not loop["ordered"] and not loop["flat_only"]
        self._at_end = not reverse
        p = self._nest_at(loop)

        def chunks(size: str, indent: str) -> list[str]:
            if not reverse:
                return [f"{indent}for roffset in range(0, {size}, RBLOCK):"]
            return [f"{indent}rlast = ({size} - 1) // RBLOCK * RBLOCK"
                    "  # backwards: first the chunks the previous pass read last (likely in L2)",
                    f"{indent}for rstep in range(0, {size}, RBLOCK):",
                    f"{indent}    roffset = rlast - rstep"]

        if p is None:
            return chunks(rnumel, pad) + [
                f"{pad}    rindex = roffset + tl.arange(0, RBLOCK)[None, :]  # within the row, (1, RBLOCK)",
                f"{pad}    rmask = rindex < {rnumel}"] + self.expand(body)
        block = self.blocks[loop["block"]]
        shape = self.space.shape
        outer, inner = list(self.space.axes[:p + 1]), list(self.space.axes[p + 1:])
        f = self.sizes.text(product([shape[k] for k in inner]))
        count = self.sizes.text(product([shape[k] for k in outer]))
        note = "  # reduced axes that loads index separately: scalars"
        if reverse:
            head = [f"{pad}for rqq in range(0, {count}):{note}", f"{pad}    rq = {count} - 1 - rqq"]
        else:
            head = [f"{pad}for rq in range(0, {count}):{note}"]
        head += self.unravel(outer, "rq", block["used"], loop["depth"] + 1)
        head += chunks(f, pad + "    ") + [
            f"{pad}        rinner = roffset + tl.arange(0, RBLOCK)[None, :]  # contiguous in every operand",
            f"{pad}        rmask = rinner < {f}",
            f"{pad}        rindex = rq * {f} + rinner  # within the row, (1, RBLOCK)"]
        saved, self._scalar_axes = self._scalar_axes, set(outer)
        rest = self.expand([line for line in body if line != f"\0coords{loop['block']}"])
        self._scalar_axes = saved
        return head + ["    " + line for line in rest]
