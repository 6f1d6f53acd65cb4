"""kernel.py's custom op: everything forward() runs after its checks, registered as one torch.library operator.

ModelNew.forward keeps its checks (guards.py) and its gradient branch (grads.py) in plain Python, then calls
`torch.ops.kerntailor.<name>(...)`: one operator whose implementation, `_launch_kernels`, reads the sizes from its
tensors again, makes them contiguous, allocates the outputs and scratch, and runs the host lines, library calls
and kernel launches in order; it returns the buffers the outputs are (forward() builds a view of one as
torch.as_strided where the output is one). To torch.compile the operator is one opaque call whose results it
learns from the fake implementation, `_launch_kernels_fake`: the same size lines, then empty tensors of the
returned buffers' shapes, dtypes and device, no launch. So a model holding ModelNew compiles without a graph
break (tests/test_customop.py), and a CUDA graph can capture the launches: nothing on the way synchronises with the
host (tests/test_customop_gpu.py, run on a GPU).

The operator takes tensors: forward()'s tensor arguments, then the module's parameters, buffers and constants,
as forward() names them; a forward() argument the host lines read that is not a tensor (a literal the trace
fixed: int, float or bool) comes after them, typed (no writer's host lines read one today; the referee's static
check would read such an argument as a tensor, and arithmetic on it as a finding). An op schema takes at most
MAX_OP_ARGS arguments (torch's own limit: "The function schema has 315 arguments but this PyTorch build only supports
64" was every ResNet101 kernel.py, cross-compiled by benchmarks/kernelbench_sweep.py --build, 2026-12-04): past it the
tensors travel as one list argument, `_op_tensors: list[torch.Tensor]`, unpacked in the first line of both functions.
It returns new tensors only
(mutates_args=()): a custom op's
outputs may not alias its inputs or each other, so an output that views a forward() input is built in forward()
from that input, and several outputs that view one buffer share the one returned buffer.

Name: `kerntailor::<problem>_<16 hex digits of the sha256 of kernel.py's code>`, the code being everything after
the header docstring (which holds the date and version), with the name itself left out. Importing a kernel.py
again in the same process (the tests and the referee do, from other folders) finds its name registered: the same
code, so it is used as it is. A different code under that name would silently run the first file's kernels for
the second; it takes a sha256 collision in 64 bits.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import re
from dataclasses import dataclass

from kerntailor.codegen.errors import CodegenUnsupported

NAMESPACE = "kerntailor"
PLACEHOLDER = "__KERNTAILOR_OP_NAME__"   # the op's name in the text until the code is hashed
IMPL, FAKE = "_launch_kernels", "_launch_kernels_fake"
SCALAR_TYPES = {int: "int", float: "float", bool: "bool"}
MAX_OP_ARGS = 64     # arguments a torch.library schema takes (c10's limit): more tensors go as one list
PACKED = "_op_tensors"   # the list argument's name then


@dataclass(frozen=True)
class OpSignature:
    """The op's arguments, in order: tensor names, then (name, Python type name) of scalars; its results."""

    tensors: tuple[str, ...]
    scalars: tuple[tuple[str, str], ...]
    results: tuple[str, ...]          # host names of the buffers it returns

    @property
    def names(self) -> tuple[str, ...]:
        return self.tensors + tuple(name for name, _ in self.scalars)

    @property
    def packed(self) -> bool:
        """Whether the tensors go as one list argument (more arguments than a schema takes: MAX_OP_ARGS)."""
        return len(self.names) > MAX_OP_ARGS

    @property
    def params(self) -> tuple[str, ...]:
        """The op's parameters as its functions name them: the tensors (or their list), then the scalars."""
        return ((PACKED,) if self.packed else self.tensors) + tuple(name for name, _ in self.scalars)

    def unpack_lines(self) -> list[str]:
        """The first lines of both functions where the tensors come as a list: their names bound again."""
        return [f"({', '.join(self.tensors)},) = {PACKED}"] if self.packed else []


def op_lines(sig: OpSignature, body: list[str], fake_body: list[str]) -> list[str]:
    """The module-level text: the implementation, the fake, and the registration (once per process)."""
    tensors = [f"{PACKED}: list[torch.Tensor]"] if sig.packed else [f"{t}: torch.Tensor" for t in sig.tensors]
    params = tensors + [f"{n}: {ty}" for n, ty in sig.scalars]
    returns = "torch.Tensor" if len(sig.results) == 1 else \
        f"tuple[{', '.join(['torch.Tensor'] * len(sig.results))}]"
    result = _tuple_text(sig.results)
    lines = ["# The launches as one operator, torch.ops." + f"{NAMESPACE}.{PLACEHOLDER} (ModelNew.forward calls it "
             "after its checks): torch.compile sees one call, and its fake gives the results' shapes.",
             f"def {IMPL}({', '.join(params)}) -> {returns}:"]
    lines += ["    " + line for line in sig.unpack_lines() + body + [f"return {result}"]]
    lines += ["", "", f"def {FAKE}({', '.join(sig.params)}):",
              '    """The results\' shapes, dtypes and device, as _launch_kernels makes them (for torch.compile: '
              'sizes may be symbolic)."""']
    lines += ["    " + line for line in sig.unpack_lines() + fake_body + [f"return {result}"]]
    lines += ["", "",
              "# once per process: the name hashes this file's code, so an op registered under it (this file "
              "imported before) runs this code",
              f'if not hasattr(torch.ops.{NAMESPACE}, "{PLACEHOLDER}"):',
              f'    torch.library.custom_op("{NAMESPACE}::{PLACEHOLDER}", {IMPL}, mutates_args=())'
              f'.register_fake({FAKE})']
    return lines


def call_lines(sig: OpSignature) -> list[str]:
    """forward()'s call, binding the buffers it returns: the op while torch.compile traces (one opaque call), the
    op's own function in eager. The op's dispatch cost more than the launches themselves: 37-54 us a call on
    the H100's host beside 55-123 us for _launch_kernels' two launches and allocations (decode attention at batch
    1, benchmarks/host_overhead.py, measured on the H100, 2026-12-05), where the GPU's work took 20-47 us."""
    targets = ", ".join(sig.results)
    scalars = [name for name, _ in sig.scalars]
    args = ", ".join(([f"[{', '.join(sig.tensors)}]"] + scalars) if sig.packed else list(sig.names))
    return ["if torch.compiler.is_compiling():   # torch.compile and export trace one operator",
            f"    {targets} = torch.ops.{NAMESPACE}.{PLACEHOLDER}({args})",
            "else:   # eager: the operator's function, without its dispatch",
            f"    {targets} = {IMPL}({args})"]


def op_signature(tensors: list[str], body: list[str], module_names: set[str], scalar_args: dict[str, str],
                 results: list[str]) -> OpSignature:
    """The op's arguments: `tensors`, then each forward() argument in `scalar_args` (name -> the literal the trace
    fixed) that `body` reads. Any other name `body` reads but neither binds nor finds at module level (`self`, a
    forward() argument that is not a literal of a scalar type) is a CodegenUnsupported: the op could not see it."""
    free = sorted(_free_names(tensors, body) - module_names - set(dir(builtins)))
    scalars = []
    for name in free:
        value = scalar_args.get(name)
        kind = SCALAR_TYPES.get(type(ast.literal_eval(value))) if value is not None else None
        if kind is None:
            raise CodegenUnsupported(f"the host lines read {name}, which a custom op cannot take (tensors, ints, "
                                     "floats, bools only)")
        scalars.append((name, kind))
    if not results:
        raise CodegenUnsupported("no output is computed by a kernel (every output is a view of an input)")
    return OpSignature(tuple(tensors), tuple(scalars), tuple(results))


def _free_names(params: list[str], body: list[str]) -> set[str]:
    """Names `body` (a function's lines) reads that it does not bind and that are not `params`."""
    tree = ast.parse("def f(" + ", ".join(params) + "):\n" + "\n".join("    " + line for line in body + ["pass"]))
    bound, read = set(params), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound


def module_names(source: str) -> set[str]:
    """The names a module's top-level statements bind (functions, classes, assignments, imports), in any branch."""
    names = set()
    for node in ast.parse(source).body:
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
            elif isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def parts_names(parts: list[str]) -> set[str]:
    """module_names of `"\n".join(parts)`, from each part's own names where every part parses alone (a kernel, a
    helper, an import line), else from the whole text. A part's names are kept: a search writes kernel.py for every
    candidate, and all its kernels but one are the text of the module before (15_DenseNet121: parsing its 1.3 MB
    for the names took 0.8 s a candidate, most of the module's writing)."""
    try:
        return set().union(*map(_part_names, parts))
    except SyntaxError:
        return module_names("\n".join(parts))


@functools.lru_cache(maxsize=4096)
def _part_names(text: str) -> frozenset[str]:
    return frozenset(module_names(text))


def op_name(problem_name: str, code: str) -> str:
    """`<problem>_<hash>` (module docstring): a valid identifier, never ending in "_" (an in-place op's mark)."""
    ident = re.sub(r"\W", "_", problem_name)[:40] or "kernel"
    if not ident[0].isalpha():
        ident = "p" + ident
    return f"{ident}_{hashlib.sha256(code.encode()).hexdigest()[:16]}"


def name_module(header: str, code: str, problem_name: str) -> str:
    """kernel.py's text: `header` (the docstring) and `code`, with the op's name (which hashes `code` alone) in place
    of PLACEHOLDER in both."""
    return (header + code).replace(PLACEHOLDER, op_name(problem_name, code))


def _tuple_text(names) -> str:
    return names[0] if len(names) == 1 else f"({', '.join(names)},)"
