"""What a writer hands on: one kernel's source and the `Launch` that says how the host calls it.

Every generated kernel carries a Launch, whatever its family: emit.py turns it into the host lines of
`ModelNew.forward` (scratch allocations, host lines before the launch, the call with its grid, per-call
constexprs and compile options) and the build stage into a `KernelSource`. A group that runs no Triton
kernel of its own (a library call) has an empty `source`: its Launch carries only host lines and the buffers
they define, and emit.py writes no call.
"""

from __future__ import annotations

from dataclasses import dataclass

from kerntailor.capture.generalize import SizeExpr

Factors = tuple[tuple[SizeExpr, int], ...]   # Π ceil(size / block): a count of programs or of elements


@dataclass(frozen=True)
class GridAxis:
    """One axis of the launch grid: the product of ceil(size / block) over its factors, times the sum of
    ceil(size / block) over `summed` where there is one (a horizontal GEMM's column tiles, product after product),
    times `host_factor` where there is one."""

    factors: Factors
    summed: Factors = ()
    # host text of one more factor decided per call, as a host constexpr is (a name the kernel's host_prologue, or
    # an earlier kernel's of its group, defines): split rows' programs a row (fused/splitrows.py's per_call_split)
    host_factor: str = ""


def split_per_call(split: int, tiles: str) -> str:
    """Host text of a SPLIT decided per call: min(split, the largest power of two <= `tiles`, host text of the
    call's tile count), at least 1 (split rows' row tiles, split attention's key blocks)."""
    return f"min({split}, triton.next_power_of_2(max(1, {tiles}) + 1) // 2)"


@dataclass(frozen=True)
class Scratch:
    """A buffer the host allocates per call for the kernel's own use (partial results, arrival counters)."""

    buffer: str
    dtype: str
    count: Factors                 # elements
    zeroed: bool = True            # torch.zeros; torch.empty where the kernel writes every element before reading


@dataclass(frozen=True)
class Launch:
    """How the host launches one kernel."""

    pointer_args: tuple[tuple[str, str], ...]       # (kernel argument, buffer)
    size_args: tuple[tuple[str, SizeExpr], ...]     # (kernel argument, size expression)
    constexprs: tuple[tuple[str, int], ...]         # values at the traced shapes: what the build compiles
    options: tuple[tuple[str, object], ...]         # compile options (num_warps, ...; AMD-only ones included)
    grid: tuple[GridAxis, ...] = ()
    grid_cap: str = ""                              # persistent kernels: at most this many programs (host text)
    # constexprs the host decides per call: (name, host text over the host's sizes, {buffer} names and {device})
    host_constexprs: tuple[tuple[str, str], ...] = ()
    scratch: tuple[Scratch, ...] = ()
    # host lines run before the launch, formatted with the host's {buffer} names and {device}; they define the
    # buffers in host_buffers (each named "<group>_<buffer>" on the host)
    host_prologue: tuple[str, ...] = ()
    host_buffers: tuple[str, ...] = ()
    wide_indices: bool = False                      # int64 offsets; int32 ones take tensors under 2^31 - 1 elements
    # a persistent kernel's row: RBLOCK = next_power_of_2(it) per call, one block of XBLOCK such rows
    whole_row: SizeExpr | None = None


@dataclass(frozen=True)
class GeneratedKernel:
    """One fusion group's code: its @triton.jit function, the module-level helpers it calls, how to launch it."""

    group: str
    kernel_name: str
    source: str                                     # the @triton.jit function ("": host lines only)
    signature: tuple[tuple[str, str], ...]          # argument -> Triton type, for the build (KernelSource)
    launch: Launch
    helpers: tuple[str, ...] = ()                   # module-level text (Triton helpers, host functions)
    fp8_format: str = ""                            # the fp8 format its products use ("" when not fp8)
    # the library calls its host lines make, as written ("torch.ops.aten.convolution.default"): a library
    # group's (codegen/library.py); the referee's static check allows exactly these
    library_calls: tuple[str, ...] = ()
    # kernels of the same group launched before this one, in order (a split-row reduction's partials pass); their
    # scratch is allocated at their launch and stays defined for this kernel, which reads it by buffer name
    before: tuple[GeneratedKernel, ...] = ()
    # the same group's split-row kernels, launched instead of `launches` on a call of few long rows (LongRowSplit)
    long_rows: LongRowSplit | None = None

    @property
    def launches(self) -> tuple[GeneratedKernel, ...]:
        """Every kernel this group launches, in launch order (`before`, then this one)."""
        return self.before + (self,)

    @property
    def loops_long_rows(self) -> bool:
        """Whether a call of rows longer than this (persistent) kernel holds runs its looped form instead."""
        return self.long_rows is not None and self.long_rows.programs is None

    @property
    def every_kernel(self) -> tuple[GeneratedKernel, ...]:
        """Every kernel of this group that kernel.py defines: `launches`, then its long-row form's, and that one's
        own (a call launches one of them)."""
        return self.launches + (self.long_rows.kernel.every_kernel if self.long_rows is not None else ())

    @property
    def constexprs(self) -> tuple[tuple[str, int], ...]:
        return self.launch.constexprs

    @property
    def options(self) -> tuple[tuple[str, object], ...]:
        return self.launch.options

    @property
    def pointer_args(self) -> tuple[tuple[str, str], ...]:
        return self.launch.pointer_args

    @property
    def size_args(self) -> tuple[tuple[str, SizeExpr], ...]:
        return self.launch.size_args

    @property
    def scratch(self) -> tuple[Scratch, ...]:
        return self.launch.scratch


@dataclass(frozen=True)
class LongRowSplit:
    """A looped reduction's split-row form (fused/splitrows.py: partials, then the normalising pass), which the
    host launches instead of the looped kernel on a call of few long rows: fewer than `programs` row blocks of
    XBLOCK (`xblock`) rows, each longer than `min_row` elements (at least the traced row, so a call at the traced
    sizes always runs the schedule the search chose). A looped kernel takes one program per row block whatever
    the row's length: on the H100 (2026-12-06, benchmarks/data/h100_2026-12-06e) level-2 77's module, at the
    referee's stretched size (x of (1, 3, 3, 3, 1048579): BatchNorm statistics and a global pool over 3 rows of 51
    million elements, one to three programs), ran past the 120 s the edge case allows, twice (both passes' modules),
    holding the GPU's lock shared while the other jobs' timings and then their correctness work waited; split, each
    row's chunks go to up to 256 programs.

    A persistent reduction carries the same field with its looped form as `kernel` and no `programs`: a call whose
    rows are longer than `min_row` (the traced row or PERSISTENT_ROWS_MAX, codegen/fused) runs the looped kernel
    (and, on few such rows, that one's own split), never a persistent block sized to the row. On the H200
    (2026-12-06, benchmarks/data/h200_2026-12-06f) level-2 11's GroupNorm, persistent over rows of 2,048 traced,
    met rows of about 2^17 at the referee's stretched channel count and ran past the 120 s the edge case allows in
    every module, holding the GPU's lock while four other problems waited and were cut."""

    kernel: GeneratedKernel
    rows: SizeExpr      # the call's rows
    row: SizeExpr       # a row's elements
    xblock: int
    programs: int | None
    min_row: int

    def condition(self, host) -> str:
        """Host text (`host`: SizeExpr -> host text) of when the call takes the long-row form."""
        longer = f"{host(self.row)} > {self.min_row}"
        if self.programs is None:
            return longer
        return f"triton.cdiv({host(self.rows)}, {self.xblock}) < {self.programs} and {longer}"
