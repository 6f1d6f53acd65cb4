"""What the referee takes (VerifySettings) and returns (Verdict): frozen, plain data."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

# Every check the referee can run, in the order it runs them. A failed verdict names one of these.
CHECKS = (
    "static",       # the forward path calls no library compute op (ast); never imports/calls the reference Model,
    #                 never reaches into the referee (frames, modules, the dispatcher) or out of its sandbox
    "construct",    # ModelNew(*get_init_inputs()) builds
    "state_dict",   # the reference's parameters and buffers load into ModelNew (same names, strict)
    "timeout",      # every run finishes within the time limit
    "crash",        # no segfault, illegal memory access (interpreter memcheck / CUDA), or dead worker
    "exception",    # forward() raises nothing
    "library",      # forward ran no PyTorch compute operator and read no tensor data on the host, however the
    #                 call was spelled (observed at the dispatcher in the candidate's process)
    "output",       # same number, kind, shape and dtype of outputs as the reference
    "aliasing",     # no output shares memory with an input (unless the reference's does)
    "inputs",       # inputs unchanged after the run (unless the reference changes them)
    "unwritten",    # every output element written (poisoned allocations)
    "determinism",  # two runs on the same inputs agree (races, reads of unwritten memory)
    "nan",          # no NaN where the reference has a number
    "inf",          # Inf only where the reference has the same Inf
    "accuracy",     # within the tolerance table against the float64 reference
    "edges",        # another rank, another dtype, a row past 2^20, a tensor past 2^31 elements (GPU): the
    #                 reference's answer or an error naming the argument (edges.py)
    "speed",        # not faster than the roofline floor ("suspect: faster than physics")
)
REFEREE_ERROR = "referee"  # not a check: the referee itself failed (a bug to report), so nothing was judged


@dataclass(frozen=True)
class VerifySettings:
    """What the user sets for one verification. Nothing here is tuned."""

    allow_library: bool = False   # switch the library-call checks off (static and observed)
    allowed_ops: frozenset[str] = frozenset()   # exactly these operators may run in forward ("aten.mm.default"):
    #                                            what a generated module's own library calls dispatch to
    allowed_calls: frozenset[str] = frozenset()  # and exactly these calls may be written on its forward path
    #                                            ("torch.ops.aten.convolution.default", "torch.matmul"): the
    #                                            static check's library rule allows them and nothing else
    library_path: bool = False    # the module is kerntailor's library path: running the reference Model is its point
    tf32: bool = False            # fp32 outputs judged by the tf32 row of the tolerance table
    time: bool = False            # time candidate vs eager vs torch.compile vs roofline floor (GPU only)
    timeout_s: float = 300.0      # per verification worker (its runs, not counting timing)
    time_timeout_s: float = 900.0  # extra allowance for the timing phase (torch.compile is slow to build)
    draws: int = 3                # fresh draws per variant; cycles normal, uniform, outliers
    special: bool = True          # and one special-values draw (NaN, ±Inf, ±0, huge, tiny) on the smallest variant
    edges: bool = True            # and the edge cases (edges.py) after them; never for the library path
    seed: int = 0
    device: str = "auto"          # "auto" (GPU if present, else CPU interpreter), "cuda", "cpu"
    variants: tuple[str, ...] | None = None   # None: every variant that fits the mode
    compile_mode: str = "default"  # torch.compile mode of the baseline: "default" or "max-autotune"
    precision: str = "ieee"       # the fp32 matrix-product policy the candidate was generated under: its floor;
    #                               fp8-row / fp8-tensor: judged against the reference with fp8-quantized products


@dataclass(frozen=True)
class CaseResult:
    """One (variant, draw) that was run: its worst errors over the outputs."""

    variant: str
    draw: str
    rel_norm: float
    max_abs: float
    max_rel: float
    policy: str
    eager_rel_norm: float | None = None   # the reference in its own dtype vs float64, for scale
    exact_rel_norm: float | None = None   # fp8 precisions only: the candidate vs the unquantized float64
    #                                       reference (worst output): what fp8 costs, for scale, never judged
    refused: str | None = None    # an edge case the candidate refused by a named error: its line (errors are 0)


@dataclass(frozen=True)
class Verdict:
    """The referee's answer. `check` and `reason` say what failed; `checks` lists what ran."""

    passed: bool
    check: str | None                 # the failed check (one of CHECKS), None when passed
    reason: str                       # one line
    problem: str
    candidate: str
    mode: str                         # "gpu cuda:0 (NVIDIA H200)" or "cpu interpreter"
    checks: tuple[str, ...]           # checks that ran (all passed except the last, when failed)
    variant: str | None = None        # where it failed (or the worst case when passed)
    draw: str | None = None
    where: tuple[int, ...] | None = None   # index of the worst element
    output_index: int | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    rel_norm_err: float | None = None
    tolerance: str | None = None      # the policy row used, e.g. "fp32: norm 1e-05, rtol 0.0001, atol 0.0001·rms"
    cases: tuple[CaseResult, ...] = ()
    variants_skipped: tuple[str, ...] = ()   # with why, e.g. "default (too big for the interpreter)"
    edges_skipped: tuple[str, ...] = ()      # edge cases not run, with why, e.g. "edge:int32 ...: needs a GPU"
    notes: tuple[str, ...] = ()
    timing: dict[str, Any] | None = None   # TimingReport.to_dict() when --time ran on a GPU
    wall_s: float = 0.0
    phase_s: dict[str, float] | None = None   # where the judge's wall time went (referee.phase_seconds)
    sandbox: str | None = None        # how the candidate's process was confined: "sandboxed: ..." or
    #                                   "unsandboxed: ..." (what the system refused)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
