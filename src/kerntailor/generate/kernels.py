"""A fusion group's kernel as the later stages see it: its `Work` (what the cost model and the search space
size it by) and its `KernelSource` (what the build stage compiles).

    work, sizes = group_work(gen, group, "fp32")     # sizes: the family's, e.g. {"R": 4096, "X": 512}
    space = make_space(group.family, target, dtype="fp32", **sizes)
    source = kernel_source(build_text(module, kernel), kernel, gen)   # or module.source: the same kernel built
"""

from __future__ import annotations

from kerntailor.builder import KernelSource
from kerntailor.codegen import GeneratedKernel
from kerntailor.codegen.families import family
from kerntailor.costmodel import Work
from kerntailor.plan.fusion import FusionGroup


def group_work(gen, group: FusionGroup, dtype: str) -> tuple[Work, dict]:
    """(Work, the family's sizes) of one group at the traced shapes: FLOPs and bytes for the cost model, and the
    sizes its family's search space takes (codegen's `Family.work_sizes`: R and X, numel, M, N, K, ...). A matrix
    family's first node is its product: those FLOPs run at the matrix rate (and a dual group's second product's,
    plan/dual.py), the rest (its epilogue) are vector."""
    fam = family(group.family, group.name)
    nodes = [gen.graph.node(n) for n in group.nodes]
    flops = sum(n.flops() for n in nodes)
    sizes = fam.work_sizes(gen, group)
    if fam.matrix:
        matrix = sum(n.flops() for n in nodes if n.family == nodes[0].family)
        return Work(matrix, group.bytes_moved, dtype, True, tuple(sizes.items()), flops - matrix), sizes
    return Work(flops, group.bytes_moved, dtype, False, tuple(sizes.items())), sizes


def kernel_source(source: str, kernel: GeneratedKernel, gen=None) -> KernelSource:
    """What the build stage compiles for one kernel of a module (`source`: the module's text). With `gen`, size
    arguments that are multiples of 16 at the traced shapes are specialized "D" as Triton's launcher does at run
    time, so the ISA facts (vector widths, LDS, matrix instructions per loop) describe the kernel that will run.
    Zero is one (triton 3.6's launcher: 0 -> "D"): a broadcast stride passed as `0 * d0` (an attention bias shared
    by the batch) left unmarked made the bias loads scalar in the cross-compiled kernel, 2768 bytes of spills on
    sm_90 against none for the kernel that runs (benchmarks/data/attn_probe/sdpa_bias.py, 128 x 64, 8 warps)."""
    specialization = None
    if gen is not None:
        specialization = {name: "DS" for name, ty in kernel.signature if ty.startswith("*")}
        for name, expr in kernel.size_args:
            value = traced_value(gen, expr)
            if isinstance(value, int) and value % 16 == 0:
                specialization[name] = "D"
    return KernelSource(source=source, kernel_name=kernel.kernel_name, signature=kernel.signature,
                        constexprs=dict(kernel.constexprs), options=dict(kernel.options),
                        specialization=specialization)


def build_text(module, kernel: GeneratedKernel) -> str:
    """The text a build of `kernel` imports: `module`'s (kernel.py's) with every other kernel's `@triton.jit` line
    blank, so they are plain functions. Nothing else changes, line numbers included, and `kernel` compiles from
    the same text and globals. Triton reads a jit function's source back as it decorates it: importing
    15_DenseNet121's kernel.py (247 kernels, 1.3 MB) took ~1 s of each candidate's build, for one kernel built."""
    text = module.source
    for other in (k for group in module.kernels for k in group.every_kernel):
        if other.kernel_name != kernel.kernel_name and other.source.startswith(_JIT):
            text = text.replace(other.source, "\n" + other.source[len(_JIT):], 1)
    return text


_JIT = "@triton.jit\n"


def traced_value(gen, expr) -> int | None:
    """A size expression's value at the traced (default) shapes (Generalized.traced_dims): of inputs' axes, of a
    library convolution's output sizes (which the host computes: 77_ConvTranspose3d_..._GlobalAvgPool's reductions
    over the kept NDHWC output took their row counts from them, left unspecialized, and the cross-compiled kernel
    loaded one float at a time where the one that runs loads four), of a concatenation's boundaries. None where a
    dim is none of these (a square-root dim)."""
    try:
        value = expr.evaluate({dim: gen.traced_dims[dim] for dim in expr.dims})
    except Exception:
        return None
    return int(value) if float(value).is_integer() else None
