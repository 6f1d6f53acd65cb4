"""kerntailor: tailored Triton kernels for a PyTorch reference and a target GPU.

Stages follow the data flow in DESIGN.md: problem → capture → plan → (codegen) → build → verify → measure.
"""

__version__ = "0.1.0"

from kerntailor.errors import KerntailorError  # noqa: E402


def profile(model, example_inputs, *, target: str = "mi300x", dtype: str | None = None, top: int = 5,
            out_dir=None, measured: bool = False, steps: int = 5):
    """Where `model(*example_inputs)`'s time goes on `target`, per fusion group and module (a
    profiling.ModelProfile): PREDICTED, or `measured` (each eager ATen op timed by torch.profiler on the model's
    own device, `steps` forwards). With `out_dir`, the `top` hottest groups are written there as problem files
    `kerntailor generate` takes."""
    from kerntailor.profiling import profile_model

    return profile_model(model, example_inputs, target=target, dtype=dtype, top=top, out_dir=out_dir,
                         measured=measured, steps=steps)


def optimize(model, example_inputs, *, target: str = "h200", budget: float = 120.0, top: int = 3,
             candidates: int = 8, out_dir=None, use_store: bool = True, price_per_hour: float | None = None,
             tokens_per_call: int | None = None, graph: bool = True):
    """`model` with the modules of its `top` hottest fusion groups (with `graph`, the groups no module holds too, in
    graph mode: optimizing/graph.py) running kernels generated for `target`, each
    swap verified on the whole model against `model` on fresh inputs (a failing swap is undone). Returns an
    optimizing.OptimizeResult: `.model` (a copy of `model`'s module tree holding the same parameter tensors, so
    its state_dict is `model`'s; `model` itself is left as it was) and `.report` (per group: swapped, skipped or
    undone and why; the whole-model check; end-to-end times on a GPU, tokens per second and dollars per million
    tokens at `price_per_hour` for `tokens_per_call`, defaults in optimizing/cost.py) and `.save(path,
    problem_file)`. See kerntailor.optimizing."""
    from kerntailor.optimizing import optimize_model

    return optimize_model(model, example_inputs, target=target, budget=budget, top=top, candidates=candidates,
                          out_dir=out_dir, use_store=use_store, price_per_hour=price_per_hour,
                          tokens_per_call=tokens_per_call, graph=graph)


__all__ = ["KerntailorError", "__version__", "optimize", "profile"]
