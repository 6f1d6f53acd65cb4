"""Stage: verify. The referee: a candidate (a file defining ModelNew) against the problem's reference Model.

    verdict = verify_candidate("problems/level1/softmax_long_rows.py", "kernel.py", VerifySettings(tf32=False))

Checks, in order (verdict.CHECKS): static (no library compute on the forward path), construct, state_dict,
timeout, crash, exception, output, aliasing, inputs, unwritten, determinism, nan, inf, accuracy, and speed
(when timed). Dynamic checks run in a fresh worker process, on the GPU when there is one, else on the small
variants under Triton's interpreter. Tolerances: tolerance.TOLERANCES (one row per dtype).
"""

from kerntailor.verify.referee import verify_candidate
from kerntailor.verify.render import render_timing, render_verdict
from kerntailor.verify.static import StaticFinding, static_check
from kerntailor.verify.tolerance import TOLERANCES, Tolerance, compare, tolerance_for
from kerntailor.verify.verdict import CHECKS, CaseResult, Verdict, VerifySettings

__all__ = ["CHECKS", "CaseResult", "StaticFinding", "TOLERANCES", "Tolerance", "Verdict", "VerifySettings",
           "compare", "render_timing", "render_verdict", "static_check", "tolerance_for", "verify_candidate"]
