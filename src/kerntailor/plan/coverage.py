"""Which anchor families have a code generator: the one fact the planner needs from codegen, kept in a leaf
module so that the plan never imports codegen (tests/test_library.py checks it against codegen's FAMILIES).

An anchor whose family is not here (convolution, recurrent layers) becomes a `library` group of its
own: a host call of the ATen op it describes, with its epilogue planned as ordinary generated groups that read
the library's output (plan/fusion.py).
"""

from __future__ import annotations

GENERATED_ANCHORS = frozenset({"matmul", "pool", "scan", "attention"})
LIBRARY = "library"   # the plan family of an anchor run by the library
