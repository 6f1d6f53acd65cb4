"""Stage: profile. Where a model's time goes, per fusion group and per user module, and the hot groups written
out as problem files for `generate`.

    from kerntailor.profiling import profile_model, profile_problem
    report = profile_problem("problems/level3/swiglu_mlp.py", "h200", top=3, out_dir="hot/")
    report = profile_model(model, example_inputs, target="h200", dtype="bf16")

Only the predicted mode is built (attribute.py): measured profiling (torch.profiler on the target GPU) needs
the GPU and is not built yet.
"""

from kerntailor.profiling.attribute import GroupProfile, ModelProfile
from kerntailor.profiling.run import TracedProfile, profile_model, profile_model_traced, profile_problem

__all__ = ["GroupProfile", "ModelProfile", "TracedProfile", "profile_model", "profile_model_traced",
           "profile_problem"]
