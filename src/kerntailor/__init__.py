"""kerntailor: tailored Triton kernels for a PyTorch reference and a target GPU.

Stages follow the data flow in DESIGN.md: problem → capture → plan → (codegen) → build → verify → measure.
"""

__version__ = "0.1.0"

from kerntailor.errors import KerntailorError  # noqa: E402


def profile(model, example_inputs, *, target: str = "mi300x", dtype: str | None = None, top: int = 5,
            out_dir=None):
    """Where `model(*example_inputs)`'s time goes on `target`, per fusion group and module, PREDICTED (a
    profiling.ModelProfile; measured profiling needs the target GPU and is not built yet). With `out_dir`,
    the `top` hottest groups are written there as problem files `kerntailor generate` takes."""
    from kerntailor.profiling import profile_model

    return profile_model(model, example_inputs, target=target, dtype=dtype, top=top, out_dir=out_dir)


__all__ = ["KerntailorError", "__version__", "profile"]
