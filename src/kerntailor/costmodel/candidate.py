"""What the cost model predicts for: a Candidate = a Config, the Work it does, and (once built) its ISA facts.

    work = Work.gemm(M=4096, N=4096, K=4096, dtype="fp16")
    Candidate(config, work)                       # before building: resource use is estimated
    Candidate(config, work, facts=build.facts)    # after building: the compiler's numbers
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from kerntailor.builder.types import IsaFacts
from kerntailor.search.config import Config
from kerntailor.search.families import itemsize
from kerntailor.targets.roofline import dtype_key


@dataclass(frozen=True)
class Work:
    """The roofline's inputs for one kernel, and the problem sizes its grid is cut from.

    `flops` run on the matrix units when `matrix` (else the vector units); `vector_flops` is extra
    vector work beside matrix work (a GEMM's epilogue). `min_bytes` is the compulsory traffic: every
    input read once, every output written once. `sizes` are the family's sizes: numel (pointwise), R and
    X (reduction: X rows of R), M, N and K (gemm).
    """

    flops: float
    min_bytes: float
    dtype: str = "fp32"
    matrix: bool = False
    sizes: tuple[tuple[str, int], ...] = ()
    vector_flops: float = 0.0

    def __post_init__(self):
        sizes = self.sizes.items() if isinstance(self.sizes, Mapping) else self.sizes
        object.__setattr__(self, "sizes", tuple((str(k), int(v)) for k, v in sizes))
        object.__setattr__(self, "dtype", dtype_key(self.dtype))
        if self.flops < 0 or self.min_bytes < 0 or self.vector_flops < 0:
            raise ValueError(f"Work needs non-negative flops and bytes, got {self.flops=}, {self.min_bytes=}")

    @property
    def size_map(self) -> dict[str, int]:
        return dict(self.sizes)

    def key(self) -> str:
        """'M=4096,N=4096,K=4096 fp16': the problem group in quality reports."""
        return ",".join(f"{k}={v}" for k, v in self.sizes) + f" {self.dtype}"

    @classmethod
    def gemm(cls, *, M: int, N: int, K: int, dtype: str = "fp16", out_dtype: str | None = None) -> Work:
        """C = A @ B: 2MNK FLOPs on the matrix units; A and B read once, C written once."""
        a = itemsize(dtype)
        c = itemsize(out_dtype or dtype)
        return cls(2.0 * M * N * K, (M * K + K * N) * a + M * N * c, dtype, True, (("M", M), ("N", N), ("K", K)))

    @classmethod
    def reduction(cls, *, R: int, X: int, dtype: str = "fp32", flops_per_element: float = 1.0,
                  outputs_per_row: int = 1) -> Work:
        """X rows of R reduced to `outputs_per_row` values each (R for softmax-like kernels)."""
        size = itemsize(dtype)
        return cls(flops_per_element * R * X, (R * X + outputs_per_row * X) * size, dtype, False,
                   (("R", R), ("X", X)))

    @classmethod
    def pointwise(cls, *, numel: int, dtype: str = "fp32", inputs: int = 1, outputs: int = 1,
                  flops_per_element: float = 1.0) -> Work:
        return cls(flops_per_element * numel, (inputs + outputs) * numel * itemsize(dtype), dtype, False,
                   (("numel", numel),))


@dataclass(frozen=True)
class Candidate:
    """One schedule of one kernel. `bytes_moved` is the kernel's own traffic where it differs from the
    compulsory minimum (a two-pass softmax reads its input twice); None means `work.min_bytes`."""

    config: Config
    work: Work
    facts: IsaFacts | None = None
    bytes_moved: float | None = None

    def traffic_floor(self) -> float:
        """Bytes the kernel moves at least: its own estimate, never below the compulsory minimum."""
        return max(self.work.min_bytes, self.bytes_moved or 0.0)


def log2_or_zero(x: float) -> float:
    return math.log2(x) if x > 0 else 0.0
