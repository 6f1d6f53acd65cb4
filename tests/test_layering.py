"""The data flow runs one way (DESIGN.md: no stage reaches back): a package imports only packages of an earlier
or the same stage, at module level or inside a function alike. The ranks below are that flow as the code has it:
the judge times candidates in its own process, so verify uses measure and measure never uses verify."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kerntailor"

RANK = {
    "errors": 0, "units": 0, "htmlpage": 0, "precision": 0, "ir": 0, "targets": 0,
    "problem": 1, "capture": 2, "plan": 3, "search": 4, "codegen": 5, "builder": 6, "costmodel": 7,
    "measure": 8, "verify": 9, "store": 10, "inspect": 11, "profiling": 11, "propose": 12, "generate": 13,
    "optimizing": 14, "cli": 14,
    "cli_options": 14, "cli_output": 14,
    "__main__": 15, "__init__": 15,
}


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kerntailor."):
            out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("kerntailor.")}
    return out


def test_every_package_has_a_stage():
    names = {p.stem if p.is_file() else p.name for p in SRC.iterdir()
             if (p.suffix == ".py") or (p.is_dir() and (p / "__init__.py").exists())}
    assert names <= set(RANK), f"give these a stage in RANK: {sorted(names - set(RANK))}"


def test_no_stage_imports_a_later_one():
    backwards = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        stage = rel.parts[0].removesuffix(".py")
        for imported in _imports(path):
            if RANK[imported] > RANK[stage]:
                backwards.append(f"{rel} imports kerntailor.{imported}")
    assert not backwards, backwards
