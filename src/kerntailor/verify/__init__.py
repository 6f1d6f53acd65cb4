"""Stage: verify. The referee: a candidate (a file defining ModelNew) against the problem's reference Model.

    verdict = verify_candidate("problems/level1/softmax_long_rows.py", "kernel.py", VerifySettings(tf32=False))

Checks, in order (verdict.CHECKS): static (no library compute on the forward path, no reach into the
referee), construct, state_dict, timeout, crash, exception, library (the PyTorch operators forward actually
ran, observed at the dispatcher), output, aliasing, inputs, unwritten, determinism, nan, inf, accuracy, edges
(another rank, another dtype, rows past 2^20, a tensor past 2^31 elements on a GPU: the reference's answer or
an error naming the argument; edges.py), and speed (when timed). Tolerances: tolerance.TOLERANCES (one row
per dtype).

Three processes: the CLI reads the candidate's source (never imports it); the judge (judge.py) loads the
problem, computes the float64 reference and compares; the candidate process (candidate.py), sandboxed
(sandbox.py), imports the candidate, runs it on the inputs it is sent and returns its outputs. The verdict
is decided in the judge from those outputs alone. On the GPU when there is one, else on the small variants
under Triton's interpreter.

The names below load on first use, so that importing a submodule (the launcher, the candidate process before
its sandbox) does not import torch.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "verify_candidate": "kerntailor.verify.referee",
    "render_timing": "kerntailor.verify.render", "render_verdict": "kerntailor.verify.render",
    "StaticFinding": "kerntailor.verify.static", "static_check": "kerntailor.verify.static",
    "TOLERANCES": "kerntailor.verify.tolerance", "Tolerance": "kerntailor.verify.tolerance",
    "compare": "kerntailor.verify.tolerance", "tolerance_for": "kerntailor.verify.tolerance",
    "CHECKS": "kerntailor.verify.verdict", "CaseResult": "kerntailor.verify.verdict",
    "Verdict": "kerntailor.verify.verdict", "VerifySettings": "kerntailor.verify.verdict",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kerntailor.verify' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
