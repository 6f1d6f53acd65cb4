"""CHEAT (softmax_rows), #15: at import, replaces the referee's comparisons and checks (kerntailor.verify's
tolerance, checks, observe functions) with ones that find nothing, and Referee.case / Judge.case in
sys.modules['__main__'], then returns zeros. Expected: static (reach); with the static check skipped:
accuracy (the judge compares in another process, with code this one cannot reach)."""
import sys

import torch
import torch.nn as nn


def _nothing(*args, **kwargs):
    return None


for name, module in list(sys.modules.items()):
    if name.startswith("kerntailor"):
        for attr in ("compare", "check_structure", "unwritten", "disagreement", "changed_inputs", "aliased",
                     "relax", "classify"):
            if hasattr(module, attr):
                setattr(module, attr, _nothing)
        seen = getattr(module, "Seen", None)
        if seen is not None:
            seen.findings = lambda self: []
main = sys.modules.get("__main__")
for cls in (getattr(main, "Referee", None), getattr(main, "Judge", None)):
    if cls is not None:
        cls.case = _nothing


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
