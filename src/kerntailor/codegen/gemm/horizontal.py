"""A horizontal GEMM group (plan/horizontal.py): P products of one A with separate outputs (Q, K and V projections) in
one launch whose grid covers the concatenated N tiles of all of them.

    num_n = cdiv(N0, BLOCK_N) + cdiv(N1, BLOCK_N) + ...     # the column tiles of every product, side by side
    pid -> (pid_m, pid_n) over num_m x num_n, GROUP_M rows swept column by column (as one GEMM's tiles)
    if pid_n < end0:                 # product 0's tiles: its K loop, its epilogue, its stores
        ...
    if (pid_n >= end0) & (pid_n < end1):
        ...

Each program is an ordinary GEMM tile of one product: one fp32 accumulator (registers as for one GEMM, not P
accumulators as in a dual group), its B, N, output and epilogue all its own. Every branch is the whole tile, from its
pointers to its stores, so no pointer or stride value crosses an `if` (Triton's compiler rejects a value whose type
differs between branches, a constexpr stride of 1 in one and a runtime one in another, where the interpreter runs it).
The programs that run together (a GROUP_M swizzle group) share A's row blocks across all the products, so A comes
from L2 after the first product's tiles read it.

Built for the pointer-tile tl.dot path, plain or persistent; split-K, TMA, fp8 and the library product are refused
with CodegenUnsupported (the search skips them), and matrix-vector shapes take tl.dot tiles (never the GEMV path).
"""

from __future__ import annotations

from dataclasses import replace

from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.gemm import choose_product
from kerntailor.codegen.gemm.writer import GemmWriter
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis
from kerntailor.ir.nodes import Matmul, Pointwise
from kerntailor.plan.horizontal import branches


class HorizontalWriter(GemmWriter):
    def tail_names(self) -> set[str]:
        """Every product but the first and the epilogues computed from them: each is written in its own branch."""
        self.row, self.second = None, None
        self.branches = branches(self.nodes)
        if self.branches is None:
            raise CodegenUnsupported(f"{self.group.name}: not a horizontal group of products")
        return {n.name for branch in self.branches[1:] for n in branch}

    def write(self) -> GeneratedKernel:
        first: Matmul = self.anchor
        dtype = self.operand_dtype(first)
        schedule = replace(self.schedule, gemv=False)   # tl.dot tiles whatever the shape
        self.product = choose_product(schedule, self.gen, first, dtype, self.arch, self.group.name)
        self.refuse_paths("horizontal products")
        products = [self._branch(branch, dtype) for branch in self.branches]
        M = products[0][2]
        ends = [f"end{i}" for i in range(len(products))]
        for i, (mm, _, _, N, _) in enumerate(products):
            self.out(f"num_n{i} = tl.cdiv({N}, BLOCK_N)  # {mm.name}'s column tiles")
        for i, end in enumerate(ends):
            self.out(f"{end} = {ends[i - 1] + ' + ' if i else ''}num_n{i}")
        with self._programs(None, M, "", "", num_n=ends[-1]):
            self._program_ids(0, [], M, "", num_n=ends[-1])
            for i, (mm, parts, _, N, K) in enumerate(products):
                start = ends[i - 1] if i else "0"
                cond = " & ".join(c for c in (f"(pid_n >= {start})" if i else "",
                                              f"(pid_n < {ends[i]})" if i + 1 < len(products) else "") if c)
                with self.out.block(f"if {cond}:  # {mm.name}'s tiles"):
                    self._tile(mm, self.branches[i], parts, (M, N, K), start, dtype)
        space = [self.sizes.slot(("node", first.name, "out", k), s) for k, s in enumerate(first.out.shape)]
        bm, bn, _ = self.product.blocks
        grid = GridAxis(((space[0], bm),), tuple((self.sizes.slot(("node", mm.name, "out", 1), mm.out.shape[1]), bn)
                                               for mm, *_ in products))
        described = "; ".join(self._describe(mm, parts[0][1], parts[1][1], 0) for mm, parts, *_ in products)
        return self._finish(first, space, 0, f"{described}, side by side (A shared through L2)", grid)

    def _doc(self, mm: Matmul, space, product_text: str) -> str:
        tiles = ("NUM_PROGRAMS programs (one per SM) walk the tiles" if self.product.persistent
                 else "One BLOCK_M x BLOCK_N tile per program")
        return (f"{product_text}: {', '.join(self.group.nodes)}. {tiles}, of the product its column tile falls in, "
                f"tl.dot ({self.product.precision if self.operand_dtype(mm) == 'fp32' else 'fp32 accumulator'}), "
                "then that product's epilogue and stores.")

    def _branch(self, branch, dtype: str):
        """(product, its A and B parts, M, N, K texts) of one branch; CodegenUnsupported where its rows or dtype
        are not the first product's at every size, or an epilogue member is no pointwise node at its shape."""
        mm = branch[0]
        parts = (self.view_exprs(mm, 0), self.view_exprs(mm, 1))
        M, N, K = (self.sizes.text(e) for e in (parts[0][1][-2], parts[1][1][-1], parts[0][1][-1]))
        first_rows = self.sizes.text(self.view_exprs(self.anchor, 0)[1][-2])
        if self.operand_dtype(mm) != dtype or M != first_rows:
            raise CodegenUnsupported(f"{self.group.name}: {mm.name} does not share its rows and dtype with "
                                     f"{self.anchor.name} at every size")
        for n in branch[1:]:
            if not isinstance(n, Pointwise) or n.out.shape != mm.out.shape:
                raise CodegenUnsupported(f"{self.group.name}: {n.name} ({n.family}) in {mm.name}'s epilogue")
        return mm, parts, M, N, K

    def _tile(self, mm: Matmul, branch, parts, mnk: tuple[str, str, str], start: str, dtype: str) -> None:
        """One product's tile: its columns, K loop, epilogue and stores (the writer's state set to that product)."""
        M, N, _ = mnk
        self.anchor, self.epilogue, self.loads = mm, list(branch[1:]), {}
        self.out(f"rn = (pid_n - {start}) * BLOCK_N + tl.arange(0, BLOCK_N)" if start != "0"
                 else "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)")
        self._product(0, parts[0], parts[1], None, mnk, dtype, None)
        self.output_tile(0, M, N)
        self.out(f"v_{mm.name} = acc  # {self._describe(mm, parts[0][1], parts[1][1], 0)}, fp32 accumulator")
        self.compute_epilogue()
        space = [self.sizes.slot(("node", mm.name, "out", k), s) for k, s in enumerate(mm.out.shape)]
        names = {n.name for n in branch}
        self.store_outputs(space, tuple(n for n in self.group.outputs if n in names))
