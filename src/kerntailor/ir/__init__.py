"""The project's IR: views folded into index maps, pointwise expression trees, reductions, anchors."""

from kerntailor.ir.expr import Const, Expr, Index, Load, Op
from kerntailor.ir.nodes import (
    Attention,
    Conv,
    Graph,
    GraphInput,
    Matmul,
    Node,
    Pointwise,
    Pool,
    Recurrent,
    Reduction,
    Scan,
)
from kerntailor.ir.types import TensorType, View

__all__ = ["Attention", "Const", "Conv", "Expr", "Graph", "GraphInput", "Index", "Load", "Matmul", "Node",
           "Op", "Pointwise", "Pool", "Recurrent", "Reduction", "Scan", "TensorType", "View"]
