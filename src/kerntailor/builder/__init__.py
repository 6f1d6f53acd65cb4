"""build: cross-compile candidates for a Target on the CPU and read their ISA facts.

    result = cross_compile(KernelSource(...), target)          # one, in a worker with a timeout
    results = build_many(kernels, targets, workers=2)          # many, kernel-major
    result.ok, result.error, result.facts.registers, result.rejected_reason
"""

from kerntailor.builder.cache import BuildCache, default_cache_dir
from kerntailor.builder.limits import check_limits
from kerntailor.builder.pool import BuildPool, build_many, cross_compile
from kerntailor.builder.types import BuildResult, IsaFacts, KernelSource

__all__ = [
    "BuildCache",
    "BuildPool",
    "BuildResult",
    "IsaFacts",
    "KernelSource",
    "build_many",
    "check_limits",
    "cross_compile",
    "default_cache_dir",
]
