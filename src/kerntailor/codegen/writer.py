"""What every kernel writer shares: the output lines, pointer arguments, cached loads, view sizes.

A writer turns one fusion group into the body of one @triton.jit function. Sizes always come from the
generalized graph (runtime arguments where they vary between variants), never from the traced shapes.
"""

from __future__ import annotations

from contextlib import contextmanager

from kerntailor.capture.generalize import Generalized
from kerntailor.codegen.render import literal
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.ir.nodes import Graph, Node
from kerntailor.plan.fusion import FusionGroup


class Lines:
    """The kernel body, indented one level inside the function."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    @contextmanager
    def indented(self):
        """Lines written inside the `with` are one level deeper."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def block(self, header: str):
        """`with out.block("for k in range(n):"):` writes the header line, then its body one level deeper."""
        self(header)
        return self.indented()


class KernelWriter:
    def __init__(self, gen: Generalized, group: FusionGroup, schedule: Schedule, host_names: dict, name: str):
        self.gen, self.group, self.schedule, self.name = gen, group, schedule, name
        self.graph: Graph = gen.graph
        self.nodes: list[Node] = [self.graph.node(n) for n in group.nodes]
        self.members = {n.name for n in self.nodes}
        self.sizes = SizeArgs(gen, host_names)
        self.pointers: dict[str, str] = {}   # buffer -> kernel pointer argument
        self.out = Lines()
        self.loads: dict[str, str] = {}      # load text -> variable, in the current section
        self.load_counter = 0
        self.helpers: set[str] = set()
        # every buffer this kernel writes is bf16/fp16: its math may be accurate to 16 bits (ExprRenderer)
        self.short_outputs = all(self.graph.buffer_type(b).dtype in ("bf16", "fp16") for b in group.outputs)

    def view_exprs(self, node: Node, j: int):
        """Operand j of `node`: its View and its shape, strides and offset as size expressions."""
        v = node.operands[j]
        base = ("node", node.name, "operand", j)
        shape = [self.sizes.slot(base + ("shape", k), s) for k, s in enumerate(v.shape)]
        strides = [self.sizes.slot(base + ("strides", k), s) for k, s in enumerate(v.strides)]
        offset = self.sizes.slot(base + ("offset",), v.offset)
        return v, shape, strides, offset

    def pointer(self, buffer: str) -> str:
        if buffer not in self.pointers:
            self.pointers[buffer] = f"{buffer}_ptr"
        return self.pointers[buffer]

    def bind(self, text: str) -> str:
        """A variable holding expression `text`, written before the statement that reads it (ExprRenderer's bind:
        an expression nested too deep for Python's parser)."""
        name = f"nest{self.load_counter}"
        self.load_counter += 1
        self.out(f"{name} = {text}")
        return name

    def cached_load(self, text: str) -> str:
        """Each distinct load once per section (the whole kernel, or one loop body)."""
        if text not in self.loads:
            name = f"ld{self.load_counter}"
            self.load_counter += 1
            self.out(f"{name} = {text}")
            self.loads[text] = name
        return self.loads[text]

    def slot(self, node: Node):
        """Renders a number in `node`'s expression: a literal, or a runtime size argument."""
        def render(kind: str, i: int, value, dtype: str) -> str:
            e = self.sizes.slot(("node", node.name, kind, i), value)
            return literal(value, dtype) if e.is_constant else self.sizes.text(e)
        return render
