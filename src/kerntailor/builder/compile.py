"""Compile one KernelSource for one Target in this process and read its ISA facts.

This is what a build worker runs. It imports arbitrary source and calls the Triton compiler, so
callers that need protection from hangs and crashes use `cross_compile` / `build_many`, which run it
in worker processes with a timeout.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

from kerntailor.builder.isa import count_matrix_and_loads, elf_text_bytes, parse_amdgcn, parse_ptxas_log, ptx_arch
from kerntailor.builder.types import BuildResult, IsaFacts, KernelSource
from kerntailor.targets.spec import Target

_MAX_ERROR_CHARS = 400


class _ToolError(Exception):
    """A failure of the toolchain rather than of the kernel (ptxas missing, ...): not cached."""


def compile_here(kernel: KernelSource, target: Target, *, keep_asm: bool = False,
                 tool_timeout_s: float | None = 120) -> tuple[BuildResult, bool]:
    """Build `kernel` for `target` in this process: (result, cacheable).

    `cacheable` is False when the failure came from the toolchain or environment, not the kernel.
    Warnings and anything the compiler prints are captured, never shown. The result's
    rejected_reason and occupancy_rule are left for the caller to fill (they depend on settings).
    """
    start = time.perf_counter()
    caught: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as recorded, \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("always")
            facts, asm, notes = _compile(kernel, target, keep_asm=keep_asm, tool_timeout_s=tool_timeout_s)
        caught = notes + [str(w.message).splitlines()[0] for w in recorded if str(w.message).strip()]
    except _ToolError as e:
        return _failure(kernel, target, str(e), start), False
    except BaseException as e:  # noqa: BLE001 - any failure of the candidate becomes data
        if isinstance(e, KeyboardInterrupt):
            raise
        return _failure(kernel, target, one_line_error(e, kernel), start), True
    result = BuildResult(key=kernel.key(), target=target.name, ok=True, facts=facts,
                         seconds=time.perf_counter() - start, warnings=tuple(dict.fromkeys(caught)), asm=asm)
    return result, True


def _failure(kernel: KernelSource, target: Target, error: str, start: float) -> BuildResult:
    return BuildResult(key=kernel.key(), target=target.name, ok=False, error=error,
                       seconds=time.perf_counter() - start)


def _compile(kernel: KernelSource, target: Target, *, keep_asm: bool, tool_timeout_s):
    if interpreter_mode():
        raise _ToolError("cannot compile in a process running under TRITON_INTERPRET=1; "
                         "use cross_compile with a timeout (a clean worker process) or build_many")
    import triton
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    gpu_target = target.gpu_target()
    if target.backend == "cuda":
        ptxas_path(target.arch)   # a missing ptxas is the toolchain's failure, not the kernel's (not cached)
    backend = make_backend(gpu_target)
    options, notes = backend_options(kernel.options, backend)
    with load_source(kernel) as module:
        fn = getattr(module, kernel.kernel_name, None)
        if fn is None or not hasattr(fn, "arg_names"):
            raise ValueError(f"the source defines no @triton.jit function named {kernel.kernel_name!r}")
        signature = _full_signature(kernel, fn)
        attrs = _attrs(kernel, fn, signature, backend)
        src = ASTSource(fn=fn, signature=signature, constexprs=dict(kernel.constexprs), attrs=attrs)
        compiled = triton.compile(src, target=gpu_target, options=options)

    lds = int(compiled.metadata.shared)
    num_warps = int(compiled.metadata.num_warps)
    if target.backend == "hip":
        text = compiled.asm["amdgcn"]
        amd = parse_amdgcn(text)
        facts = IsaFacts(
            backend="hip", arch=target.arch, num_warps=num_warps, registers=amd["registers"] or 0,
            spills=amd["spills"], scratch_bytes=amd["scratch_bytes"] or 0,
            lds_bytes=lds + (amd["lds_static_bytes"] or 0), vgprs=amd["vgprs"], agprs=amd["agprs"],
            sgprs=amd["sgprs"], occupancy=amd["occupancy"], matrix_instr_count=amd["matrix_instr_count"],
            matrix_instr_kinds=amd["matrix_instr_kinds"], global_load_widths=amd["global_load_widths"],
            code_size_bytes=amd["code_size_bytes"], vgpr_spills=amd["vgpr_spills"],
            sgpr_spills=amd["sgpr_spills"])
        asm = {"amdgcn": text} if keep_asm else {}
    else:
        ptx = compiled.asm["ptx"]
        log, cubin = run_ptxas(ptx, timeout_s=tool_timeout_s)
        nv = parse_ptxas_log(log)
        counts = count_matrix_and_loads(ptx, "cuda")
        facts = IsaFacts(
            backend="cuda", arch=target.arch, num_warps=num_warps, registers=nv["registers"],
            spills=nv["spills"], scratch_bytes=nv["stack_bytes"], lds_bytes=lds + nv["smem_bytes"],
            code_size_bytes=elf_text_bytes(cubin), **counts)
        asm = {"ptx": ptx} if keep_asm else {}
    return facts, asm, notes


def interpreter_mode() -> bool:
    """Whether this process runs Triton's interpreter (TRITON_INTERPRET=1, the verify stage's CPU mode).

    Triton then decorates even its own standard library (tl.zeros, tl.cdiv, ...) as interpreter
    functions when it is imported, so nothing can be compiled in this process.
    """
    from triton import knobs

    return bool(knobs.runtime.interpret)


def backend_options(options, backend) -> tuple[dict, list[str]]:
    """The options this backend's options dataclass accepts, and a note for each one dropped."""
    accepted = {f.name for f in dataclasses.fields(type(backend.parse_options({})))}
    kept, notes = {}, []
    for name, value in options:
        if name in accepted:
            kept[name] = value
        else:
            notes.append(f"option {name}={value!r} dropped: not a {backend.target.backend} compile option")
    return kept, notes


def _full_signature(kernel: KernelSource, fn) -> dict:
    given = dict(kernel.signature)
    constexprs = dict(kernel.constexprs)
    unknown = sorted(set(given) - set(fn.arg_names))
    if unknown:
        raise ValueError(f"signature names {unknown} that {kernel.kernel_name} does not take")
    signature = {}
    for name in fn.arg_names:
        if name in given:
            signature[name] = given[name]
        elif name in constexprs:
            signature[name] = "constexpr"
        else:
            raise ValueError(f"signature lacks argument {name!r} of {kernel.kernel_name}")
    return signature


def _attrs(kernel: KernelSource, fn, signature: dict, backend) -> dict:
    if kernel.specialization is None:
        codes = {name: "DS" for name, ty in signature.items() if ty.startswith("*")}
    else:
        codes = dict(kernel.specialization)
    attrs = {}
    for name, code in codes.items():
        if name not in signature:
            raise ValueError(f"specialization names {name!r}, not an argument of {kernel.kernel_name}")
        if signature[name] == "constexpr":
            continue
        parsed = backend.parse_attr(code)
        if parsed:
            attrs[(fn.arg_names.index(name),)] = parsed
    return attrs


@contextlib.contextmanager
def load_source(kernel: KernelSource):
    """Import `kernel.source` from a temporary file as a fresh module; removed again on exit."""
    name = f"_kerntailor_src_{kernel.key()[:16]}"
    with tempfile.TemporaryDirectory(prefix="kerntailor-build-") as tmp:
        path = os.path.join(tmp, f"{kernel.kernel_name}.py")
        with open(path, "w") as f:
            f.write(kernel.source)
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        try:
            yield module
        finally:
            sys.modules.pop(name, None)


def ptxas_path(arch: str) -> str:
    """The ptxas Triton itself uses for `arch` (the one in its wheel unless TRITON_PTXAS_PATH is set)."""
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        capability = int(re.sub(r"\D", "", arch) or 0)
        path = get_ptxas(capability).path
    except Exception as e:  # noqa: BLE001
        raise _ToolError(f"ptxas not found ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from e
    if not path or not os.path.exists(path):
        raise _ToolError(f"ptxas not found at {path!r}")
    return path


def run_ptxas(ptx: str, *, timeout_s: float | None = 120) -> tuple[str, bytes]:
    """Run `ptxas -arch=<the PTX's .target> -v` on `ptx`: (its log, the cubin bytes)."""
    arch = ptx_arch(ptx)
    exe = ptxas_path(arch)
    with tempfile.TemporaryDirectory(prefix="kerntailor-ptxas-") as tmp:
        src, out = os.path.join(tmp, "kernel.ptx"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        try:
            proc = subprocess.run([exe, f"-arch={arch}", "-v", src, "-o", out],
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as e:
            raise _ToolError(f"ptxas timed out after {timeout_s:g}s") from e
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            first = next((ln.strip() for ln in log.splitlines() if "error" in ln.lower()), log.strip()[:200])
            raise RuntimeError(f"ptxas -arch={arch} failed (exit {proc.returncode}): {first}")
        with open(out, "rb") as f:
            return log, f.read()


def one_line_error(e: BaseException, kernel: KernelSource) -> str:
    """`ExceptionType: message (where)` on one line, at most a few hundred characters."""
    from triton.compiler.errors import CompilationError

    name = type(e).__name__
    if isinstance(e, CompilationError):
        message = e.error_message or (repr(e.__cause__) if e.__cause__ else "")
        where = ""
        node_line = getattr(e.node, "lineno", None)
        fn_match = re.match(r"\s*(?:@.*\n\s*)*def\s+(\w+)", e.src or "")
        if node_line is not None and fn_match:
            fn_name = fn_match.group(1)
            def_line = _def_line(kernel.source, fn_name)
            where = f" (in {fn_name}, line {def_line + node_line - 1})" if def_line else f" (in {fn_name})"
        text = f"{name}: {message}{where}"
    elif isinstance(e, SyntaxError):
        text = f"{name}: {e.msg} (line {e.lineno})"
    else:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        text = f"{name}: {lines[0]}" if lines else name
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS - 3] + "..."


def _def_line(source: str, fn_name: str) -> int | None:
    for number, line in enumerate(source.splitlines(), start=1):
        if re.match(rf"\s*def\s+{re.escape(fn_name)}\s*\(", line):
            return number
    return None
