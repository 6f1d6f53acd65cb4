"""ModelNew's constructor and parameter access: the reference `Model`'s own, so that kernel.py stands alone.

KernelBench's contract: `kernel.py`, loaded alone in a fresh process (no access to the problem file), gives a
`ModelNew` that `ModelNew(*get_init_inputs())` builds, that takes the reference's `state_dict`, and that returns
the same outputs. Real files build their models in every way Python allows — `super(Model, self).__init__()`,
helper methods called from `__init__` (`self._make_layer(...)`), helper classes (`BasicBlock`), `nn.Sequential`,
`ModuleList` and `ModuleDict` children, buffers, module-level constants and functions — so the constructor is not
rewritten but copied: the body of `Model` except `forward` (with the name `Model` read as `ModelNew`), and every
top-level import, constant, function and class of the file it needs, found by the names it reads, transitively,
in file order. `get_inputs`, `get_init_inputs` and `Model` itself are never copied.

Model's `forward` is carried too, renamed `_reference_forward` (and every top-level name it reads copied as
above): kernel.py's backward recomputes it with PyTorch autograd (codegen/grads.py); ModelNew's own forward
never calls it (the referee's static and observed-operator checks refuse a forward that does).

ModelNew's `forward` is generated; it reads parameters and buffers by their state_dict names, spelled as Python
attribute access that works for every container (`self.network[0].weight`, `self.heads['q'].bias`).
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
import symtable
import textwrap
from dataclasses import dataclass

import torch

from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.problem.spec import ProblemSpec

HEADER_NAMES = frozenset({"torch", "nn", "triton", "tl"})   # bound by kernel.py's own imports
NEVER_COPIED = frozenset({"Model", "get_inputs", "get_init_inputs"})


@dataclass(frozen=True)
class Constructor:
    """What kernel.py copies from the reference file to build ModelNew exactly as Model is built."""

    definitions: tuple[str, ...]    # top-level statements the class needs, in file order
    bases: str                      # Model's base classes, as written
    body: str                       # Model's class body without forward, dedented, Model renamed ModelNew
    forward_args: tuple[str, ...]   # forward()'s parameter names after self
    reference_forward: str          # Model's forward renamed `_reference_forward`, dedented, Model -> ModelNew
    # (name, default as written) of forward()'s parameters that have a default (NetVLAD's `mask=None`)
    forward_defaults: tuple[tuple[str, str], ...] = ()


class _RenameModel(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == "Model":
            return ast.copy_location(ast.Name("ModelNew", node.ctx), node)
        return node


def _bound_names(node: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names = set()
    for t in targets:
        names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _global_reads(table: symtable.SymbolTable) -> set[str]:
    """The module-level names a scope and the scopes inside it read (Python's own symbol tables: a parameter or
    a local of the same name as a global is not a read of the global)."""
    names = {s.get_name() for s in table.get_symbols() if s.is_referenced() and s.is_global()}
    for child in table.get_children():
        names |= _global_reads(child)
    return names


def _loads(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _reads(stmt: ast.stmt, scopes: dict[tuple[str, int], symtable.SymbolTable]) -> set[str]:
    """The module-level names a top-level statement reads: a definition's decorators, bases and defaults, and
    what its scope reads (symtable); any other statement's every name."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        outer = list(stmt.decorator_list)
        if isinstance(stmt, ast.ClassDef):
            outer += list(stmt.bases) + list(stmt.keywords)
        else:
            outer += list(stmt.args.defaults) + [d for d in stmt.args.kw_defaults if d is not None]
        return _loads(outer) | _global_reads(scopes[(stmt.name, stmt.lineno)])
    return _loads([stmt])


def _needed(tree: ast.Module, table: symtable.SymbolTable, roots: set[str]) -> list[ast.stmt]:
    """The top-level statements that the names in `roots` need, transitively, in file order."""
    scopes = {(t.get_name(), t.get_lineno()): t for t in table.get_children()}
    binders: dict[str, list[ast.stmt]] = {}
    for stmt in tree.body:
        for name in _bound_names(stmt):
            binders.setdefault(name, []).append(stmt)
    chosen: dict[int, ast.stmt] = {}
    pending, seen = set(roots), set()
    while pending:
        name = pending.pop()
        if name in seen or name in NEVER_COPIED:
            continue
        seen.add(name)
        for stmt in binders.get(name, ()):
            if id(stmt) in chosen:
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and _bound_names(stmt) <= HEADER_NAMES:
                continue   # `import torch`, `from torch import nn`: kernel.py imports these itself
            chosen[id(stmt)] = stmt
            if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                pending |= _reads(stmt, scopes)
    return [s for s in tree.body if id(s) in chosen]


def _text(source: str, node: ast.stmt) -> str:
    """A statement's own source text (comments kept), dedented; regenerated where it names Model."""
    if any(isinstance(n, ast.Name) and n.id == "Model" for n in ast.walk(node)):
        return ast.unparse(_RenameModel().visit(ast.parse(ast.unparse(node)).body[0]))
    start = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
    return textwrap.dedent("\n".join(source.splitlines()[start - 1:node.end_lineno]))


@functools.lru_cache(maxsize=32)
def reference_constructor(problem: ProblemSpec) -> Constructor:
    """Model's constructor and everything it needs, as source text (module docstring)."""
    source = problem.source
    tree = ast.parse(source)
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        raise CodegenUnsupported("the problem defines no class Model")
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        raise CodegenUnsupported("Model has no forward()")
    if forward.args.vararg or forward.args.kwonlyargs or forward.args.kwarg or forward.args.posonlyargs:
        raise CodegenUnsupported("forward() with *args, **kwargs, keyword-only or positional-only arguments")
    names = tuple(a.arg for a in forward.args.args[1:])
    docstring = model.body[0] if ast.get_docstring(model) is not None else None
    kept = [n for n in model.body if n is not forward and n is not docstring]
    body = "\n\n".join(_text(source, n) for n in kept) or "pass"
    table = symtable.symtable(source, str(problem.path), "exec")
    model_scope = next(t for t in table.get_children() if t.get_name() == "Model" and t.get_lineno() == model.lineno)
    roots = _loads(list(model.bases) + list(model.keywords))
    roots |= {s.get_name() for s in model_scope.get_symbols() if s.is_referenced() and s.is_global()}
    for scope in model_scope.get_children():   # forward's reads included: _reference_forward needs them
        roots |= _global_reads(scope)
    definitions = _needed(tree, table, roots)
    texts = tuple(_text(source, stmt) for stmt in definitions)
    bases = ", ".join(ast.unparse(b) for b in list(model.bases) + list(model.keywords)) or "nn.Module"
    reference = re.sub(r"\bdef forward\b", "def _reference_forward", _text(source, forward), count=1)
    defaults = forward.args.defaults
    with_default = tuple((a.arg, ast.unparse(d)) for a, d in zip(forward.args.args[len(forward.args.args) -
                                                                                    len(defaults):], defaults))
    return Constructor(texts, bases, body, names, reference, with_default)


def attribute_text(model: torch.nn.Module, target: str) -> str:
    """Python text that reads the parameter, buffer or tensor attribute `target` (a state_dict name such as
    `network.0.weight`) from `self`, for the model as built: `self.network[0].weight`."""
    parts = target.split(".")
    text, obj = "self", model
    for part in parts[:-1]:
        child = obj._modules.get(part) if isinstance(obj, torch.nn.Module) else None
        if child is None:
            raise CodegenUnsupported(f"cannot find the module {part!r} of {target!r} in the model")
        if isinstance(obj, (torch.nn.Sequential, torch.nn.ModuleList)) and part.isdigit():
            text += f"[{part}]"
        elif isinstance(obj, torch.nn.ModuleDict):
            text += f"[{part!r}]"
        elif part.isidentifier() and not keyword.iskeyword(part):
            text += f".{part}"
        else:
            text += f".get_submodule({part!r})"
        obj = child
    last = parts[-1]
    if last.isidentifier() and not keyword.iskeyword(last):
        return f"{text}.{last}"
    return f"getattr({text}, {last!r})"


@functools.lru_cache(maxsize=32)
def meta_model(problem: ProblemSpec) -> torch.nn.Module:
    """The reference model built on meta tensors at the default sizes: its module tree names the containers."""
    return problem.make_model("default", "meta")
