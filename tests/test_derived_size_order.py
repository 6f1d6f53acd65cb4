"""The host sizes a module derives (convolution and pool output sizes, concatenation boundaries) are assigned
before they are read. Each node's sizes come in node order, but generalization may fit one node's size in the
terms of a dim that a later node derives: level-3 19_MobileNetV1's fourth convolution reads a width of 2 * d5, d5
being the eighth's output height, and its kernel.py raised UnboundLocalError before any kernel ran (CPU sample
of 2026-12-07, every candidate failed: library path)."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

from helpers import make_module
from kerntailor.codegen.emit import _defined_before_use
from kerntailor.codegen.errors import CodegenUnsupported

ROOT = Path(__file__).resolve().parents[1]
MOBILENET = ROOT.parent / "shared" / "kernelbench" / "level3" / "19_MobileNetV1.py"


def read_before_assigned(source: str, function: str) -> list[str]:
    """Names `function` (a top-level def of `source`) reads before a statement on the way there assigns them: what
    Python raises UnboundLocalError for, found without running it. Statements are walked in order, a compound
    one's header (an if's test, a for's iterable) before its blocks, each block from what was assigned before it."""
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function)
    local = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    early: list[str] = []

    def names(node, ctx) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}

    def walk(stmts, assigned: set[str]) -> set[str]:
        for stmt in stmts:
            blocks = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, f, None),
                                                                                               list)]
            blocks += [h.body for h in getattr(stmt, "handlers", ())]
            if not blocks or isinstance(stmt, ast.FunctionDef):
                header = [stmt]
            else:
                header = [getattr(stmt, f) for f in ("test", "iter", "target") if getattr(stmt, f, None) is not None]
                header += [i for i in getattr(stmt, "items", ())]
            for part in header:
                early.extend(sorted(r for r in names(part, ast.Load) - assigned
                                    if r in local and not hasattr(builtins, r)))
                assigned |= names(part, ast.Store)
            for block in (blocks if header[:1] != [stmt] else []):
                assigned |= walk(block, set(assigned))
        return assigned

    walk(fn.body, {a.arg for a in fn.args.args})
    return early


@pytest.mark.unit
def test_a_block_moves_after_the_blocks_that_assign_what_it_reads():
    blocks = [["a = x.shape[2]"], ["conv4_o3 = (2 * d5)"], ["b = a + 1"], ["d5 = (a - 1) // 2 + 1"]]
    assert _defined_before_use(blocks) == [blocks[0], blocks[2], blocks[3], blocks[1]]
    in_order = [["a = 1"], ["b = a"]]
    assert _defined_before_use(in_order) == in_order   # nothing to move: node order kept
    with pytest.raises(CodegenUnsupported, match="each computed from another"):
        _defined_before_use([["a = b + 1"], ["b = a - 1"]])


@pytest.mark.unit
def test_the_checker_finds_a_read_before_its_assignment():
    source = "def f(x):\n    y = 2 * z\n    z = x + 1\n    return y\n"
    assert read_before_assigned(source, "f") == ["z"]
    assert read_before_assigned(source.replace("2 * z", "2 * x"), "f") == []
    branch = ("def f(x):\n    if x:\n        t = x + 1\n        y = t * 2\n    else:\n        y = u\n"
              "    u = 1\n    return y\n")
    assert read_before_assigned(branch, "f") == ["u"]   # a block reads what it assigned above, not what follows


@pytest.mark.integration
@pytest.mark.skipif(not MOBILENET.is_file(), reason=f"{MOBILENET} is not next to the repository")
def test_mobilenets_sizes_are_assigned_before_they_are_read():
    """Since the probe keeps both image sizes odd through the halvings (problem/variants.py's odd_chains), the
    fit no longer reads a later node's dim here (the fourth convolution's width was 2 * d5, a height, and a later
    convolution's width W // 2 for (W - 1) // 2 + 1): every size derived is the one a 3 x 3 convolution of stride
    2 and padding 1 gives. The order is still checked (a block moved after what it reads: the unit test above)."""
    import re

    source = make_module(MOBILENET).source
    assert read_before_assigned(source, "_launch_kernels") == []
    launch = source[source.index("def _launch_kernels"):]
    derived = re.findall(r"^ +(d\d+) = (.+)$", launch, re.M)
    halvings = {d: e for d, e in derived if not re.fullmatch(r"\w+\.shape\[\d\]", e)}   # (each function's)
    assert len(halvings) == 10, derived   # five stride-2 convolutions, height and width each
    assert all(re.fullmatch(r"\(d\d+ - 1\) // 2 \+ 1", e) for e in halvings.values()), halvings
    assert not re.search(r"conv\d+_o[23] = \(.*//", launch), "a convolution size fitted as other than a halving"
