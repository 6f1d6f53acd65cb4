"""Stage: optimize. A model in, the same model with its hottest parts running verified generated kernels out.

    from kerntailor.optimizing import optimize_model
    result = optimize_model(model, example_inputs, target="h200", budget=60)
    fast, report = result.model, result.report

profile ranks the fusion groups (predicted), generate makes each hot group's kernel, swap.py puts it in place
of the user's module that the group computes (scope.py); a group no module holds (it spans modules, returns
several values) is swapped in graph mode (graph.py: the model's forward runs the exported graph with the kernel
in place of the group's nodes, guarded to calls like the exported one),
check.py verifies the whole model after each swap and undoes a swap that fails. See run.py.
"""

from kerntailor.optimizing.check import ModelCheck
from kerntailor.optimizing.run import GroupOutcome, OptimizeReport, OptimizeResult, optimize_model, optimize_problem

__all__ = ["GroupOutcome", "ModelCheck", "OptimizeReport", "OptimizeResult", "optimize_model", "optimize_problem"]
