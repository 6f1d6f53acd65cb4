"""Integer literals of a problem file that a variant may rewrite.

Most KernelBench files size their tensors with module-level integer constants, which a variant overrides by
name. Others write the sizes as literals: inside `get_inputs()` (`torch.rand(32768, 32768)`), inside
`get_init_inputs()` (`return [64, 128, 3]`), or inside a module-level tuple (`input_shape = (32768,)`).
Such a literal is named by where it stands in the source, "LINE:COL" (1-based line, 0-based column, as
Python's ast gives them), and a variant rewrites it by parsing the source, replacing the constant at that
position and compiling the tree: line numbers in errors stay those of the file.
"""

from __future__ import annotations

import ast
import dis
import types
from dataclasses import dataclass

# functions whose literals are sizes of the problem's inputs or constructor arguments
SIZE_FUNCTIONS = ("get_inputs", "get_init_inputs")


@dataclass(frozen=True)
class Literal:
    """One integer literal of the source: its position key and its value."""

    key: str      # "LINE:COL"
    value: int
    where: str    # "get_inputs", "get_init_inputs" or the module-level name it is assigned to


def _key(node: ast.AST) -> str:
    return f"{node.lineno}:{node.col_offset}"


def _int_constants(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            yield node


def literal_slots(source: str, module_ints: set[str]) -> tuple[Literal, ...]:
    """The integer literals in `get_inputs`/`get_init_inputs` and in module-level assignments to names that are
    not plain integers (those are overridden by name: `module_ints`), in source order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    out: list[Literal] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in SIZE_FUNCTIONS:
            out += [Literal(_key(c), c.value, stmt.name) for c in _int_constants(stmt)]
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if not names or any(n in module_ints for n in names):
                continue
            out += [Literal(_key(c), c.value, names[0]) for c in _int_constants(stmt.value)]
    return tuple(sorted(out, key=lambda lit: tuple(map(int, lit.key.split(":")))))


def compile_with_literals(source: str, filename: str, literals: dict[str, int]):
    """The source compiled with the integer literals at `literals`' positions replaced by their values.

    Raises KeyError naming a position that holds no integer literal (a variant made for another source)."""
    tree = ast.parse(source, filename)
    found = set()
    for node in _int_constants(tree):
        key = _key(node)
        if key in literals:
            node.value = int(literals[key])
            found.add(key)
    missing = set(literals) - found
    if missing:
        raise KeyError(sorted(missing)[0])
    return compile(tree, filename, "exec")


def model_globals(source: str) -> frozenset[str]:
    """The module-level names the model's own code reads: every class and function of the file but
    get_inputs() and get_init_inputs(). A size constant among them reaches the model by a side door (a
    constructor's `torch.randn(batch_size, hidden)`), not through get_init_inputs(): a candidate's ModelNew, built
    from get_init_inputs() in its own module, never sees a variant's value of it, so a variant may not move it."""
    try:
        code = compile(source, "<problem>", "exec")
    except SyntaxError:
        return frozenset()
    names: set[str] = set()
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name not in SIZE_FUNCTIONS:
            _global_loads(const, names)
    return frozenset(names)


def _global_loads(code: types.CodeType, names: set[str]) -> None:
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            names.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _global_loads(const, names)
