"""Stage 1: problem files (KernelBench format and our superset) → ProblemSpec."""

from kerntailor.problem.load import load_problem
from kerntailor.problem.spec import DTYPES, InputSpec, ProblemSpec, Variant

__all__ = ["DTYPES", "InputSpec", "ProblemSpec", "Variant", "load_problem"]
