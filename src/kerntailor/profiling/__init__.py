"""Stage: profile. Where a model's time goes, per fusion group and per user module, and the hot groups written
out as problem files for `generate`.

    from kerntailor.profiling import profile_model, profile_problem
    report = profile_problem("problems/level3/swiglu_mlp.py", "h200", top=3, out_dir="hot/")
    report = profile_model(model, example_inputs, target="h200", dtype="bf16")

Predicted mode (attribute.py): eager time from the cost model. Measured mode (measured.py, `measured=True`):
each eager ATen op's device time by torch.profiler on the GPU here, apportioned to the groups the same way.
"""

from kerntailor.profiling.attribute import GroupProfile, ModelProfile
from kerntailor.profiling.run import TracedProfile, profile_model, profile_model_traced, profile_problem

__all__ = ["GroupProfile", "ModelProfile", "TracedProfile", "profile_model", "profile_model_traced",
           "profile_problem"]
