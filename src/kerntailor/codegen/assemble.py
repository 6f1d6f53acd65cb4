"""The one assembler: a writer's kernel body in, a GeneratedKernel (source, signature, Launch) out.

A writer decides what the kernel does; the assembler writes what every kernel has the same way: the
argument list (pointers in order of first use, then size arguments, then constexprs), the Triton signature
the build compiles (a size argument is fp32 where its host value is a float, i64 for kernels that index past
2^31 elements, else i32: what Triton's launcher passes at run time), the docstring, and the Launch emit.py turns
into host lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis, Launch, Scratch
from kerntailor.codegen.render import PTR_TYPES
from kerntailor.codegen.sizes import SizeArgs, host_value_is_float


def size_type(e: SizeExpr, big: bool) -> str:
    """The Triton type of a size argument: what the launcher makes of the host's value (fp32 for a float),
    else an integer wide enough for the kernel's indices."""
    if host_value_is_float(e):
        return "fp32"
    return "i64" if big else "i32"


def assemble(*, group: str, name: str, doc: str, body: Sequence[str], pointers: Mapping[str, str],
             pointer_dtypes: Mapping[str, str], sizes: SizeArgs, big: bool, constexprs: Sequence[tuple[str, int]],
             options: Sequence[tuple[str, object]], grid: Sequence[GridAxis], host_constexprs=(), grid_cap: str = "",
             scratch: Sequence[Scratch] = (), host_prologue: Sequence[str] = (), host_buffers: Sequence[str] = (),
             helpers: Sequence[str] = (), fp8_format: str = "", whole_row: SizeExpr | None = None) -> GeneratedKernel:
    """`body`: the kernel's lines, indented one level. `pointers`: buffer -> argument, in order of first use;
    `pointer_dtypes`: each buffer's element dtype. `constexprs` hold their values at the traced shapes; those
    named in `host_constexprs` are decided per call by the host. `big`: the kernel indexes in int64 (else the
    host refuses tensors of 2^31 - 1 elements or more); `whole_row`: a persistent kernel's row length."""
    args: list[str] = []
    signature: list[tuple[str, str]] = []
    for buffer, arg in pointers.items():
        args.append(arg)
        signature.append((arg, PTR_TYPES[pointer_dtypes[buffer]]))
    for arg, e in sizes.args:
        args.append(arg)
        signature.append((arg, size_type(e, big)))
    for constexpr, _ in constexprs:
        args.append(f"{constexpr}: tl.constexpr")
        signature.append((constexpr, "constexpr"))
    source = f"@triton.jit\ndef {name}({', '.join(args)}):\n    \"\"\"{doc}\"\"\"\n" + "\n".join(body) + "\n"
    launch = Launch(tuple((arg, buffer) for buffer, arg in pointers.items()), tuple(sizes.args), tuple(constexprs),
                    tuple(options), tuple(grid), grid_cap, tuple(host_constexprs), tuple(scratch),
                    tuple(host_prologue), tuple(host_buffers), big, whole_row)
    return GeneratedKernel(group, name, source, tuple(signature), launch, tuple(helpers), fp8_format)


def one_dim(size: SizeExpr, block: int) -> GridAxis:
    """ceil(size / block) programs along one grid axis."""
    return GridAxis(((size, block),))
