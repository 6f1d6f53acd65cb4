"""The plan family of an anchor run by the library, in a leaf module that both the plan and codegen read.

Which anchor families have a code generator is codegen's fact (codegen/families.py's `FAMILIES`), and the plan
may not import codegen: the caller passes those names to `plan_fusion(graph, generated)`. An anchor whose family
is not among them (convolution, recurrent layers) becomes a `library` group of its own: a host call of the ATen
op it describes, with its epilogue planned as ordinary generated groups that read the library's output
(plan/fusion.py).
"""

from __future__ import annotations

LIBRARY = "library"   # the plan family of an anchor run by the library
