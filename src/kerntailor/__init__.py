"""kerntailor: tailored Triton kernels for a PyTorch reference and a target GPU.

Stages follow the data flow in DESIGN.md: problem → capture → plan → (codegen) → build → verify → measure.
"""

__version__ = "0.1.0"

from kerntailor.errors import KerntailorError  # noqa: E402

__all__ = ["KerntailorError", "__version__"]
