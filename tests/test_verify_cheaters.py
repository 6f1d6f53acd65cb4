"""The referee's adversarial suite: every deliberately broken candidate in tests/candidates/ must be rejected,
by the check that names its bug; every correct one must pass.

The attacks of #15 (a candidate that forges the worker's events, walks frames to the reference, patches the
referee, finds the reference Model, or calls the library however it can spell it) are judged twice: by
verify_candidate (where the static check names most of them) and by verify_dynamic, with the static check
skipped, which shows that the process boundary and the observed operators stop them on their own.

Interpreter tier: each verification runs in its own worker process under TRITON_INTERPRET=1 on tiny
problems (tests/candidates/problems/); the verifications run concurrently (one per core), so the whole suite
takes about a minute on a 2-core CI machine. GPU tier: the same candidates on the GPU (default shapes and
variants of the same tiny problems); where a GPU may legitimately expose a bug through another check (a race
that the hardware happens to order the same way twice is wrong, not non-deterministic), the case lists it.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kerntailor.problem import load_problem
from kerntailor.verify import Verdict, VerifySettings, verify_candidate
from kerntailor.verify.referee import verify_dynamic

HERE = Path(__file__).parent / "candidates"
PROBLEMS = HERE / "problems"
SLEEP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Case:
    candidate: str
    problem: str
    check: str | None                  # None: must pass
    variant: str | None = None         # where it must fail (None: any)
    draw: str | None = None            # draw name prefix where it must fail
    tf32: bool = False
    timeout_s: float = 120.0
    on_gpu: tuple[str, ...] = field(default=())   # further checks acceptable on a GPU
    dynamic: bool = False              # judged with the static check skipped (verify_dynamic)

    @property
    def id(self) -> str:
        return f"{self.candidate}{'+tf32' if self.tf32 else ''}{'+dynamic' if self.dynamic else ''}"


CHEATERS = [
    Case("cheat_zeros", "row_mean", "accuracy"),
    Case("cheat_partial", "relu_small", "unwritten"),
    Case("cheat_stale", "softmax_rows", "accuracy", draw="uniform"),
    Case("cheat_hardcoded", "softmax_rows", "unwritten", variant="small"),
    Case("cheat_even_only", "relu_small", "unwritten", variant="odd"),
    Case("cheat_race", "row_mean", "determinism", on_gpu=("accuracy",)),
    Case("cheat_uninit", "row_mean", "determinism", on_gpu=("nan", "accuracy")),
    Case("cheat_mutates_input", "softmax_rows", "inputs"),
    Case("cheat_returns_input", "relu_small", "aliasing"),
    Case("cheat_torch_op", "softmax_rows", "static"),
    Case("cheat_calls_model", "softmax_rows", "static"),
    Case("cheat_sleeps", "relu_small", "timeout", timeout_s=SLEEP_TIMEOUT_S),
    Case("cheat_oob", "relu_small", "crash"),
    Case("cheat_low_precision", "softmax_rows", "accuracy"),
    Case("cheat_naive_softmax", "softmax_rows", "nan", draw="outliers", on_gpu=("inf", "accuracy")),
    Case("cheat_state_dict", "linear_small", "state_dict"),
    Case("cheat_wrong_dtype", "relu_small", "output"),
    Case("cheat_drops_nan", "relu_small", "nan", draw="special"),   # #17: NaN -> 0 where torch.relu keeps NaN
    Case("tf32_linear", "linear_small", "accuracy"),          # tf32 GEMM under the default fp32 policy
    # #15: each attack that passed `kerntailor verify` at 64ad185
    Case("cheat_forged_done", "softmax_rows", "static"),
    Case("cheat_forged_done", "softmax_rows", "crash", dynamic=True),
    Case("cheat_frame_walk", "softmax_rows", "static"),
    Case("cheat_frame_walk", "softmax_rows", "accuracy", dynamic=True),
    Case("cheat_patch_referee", "softmax_rows", "static"),
    Case("cheat_patch_referee", "softmax_rows", "accuracy", dynamic=True),
    Case("cheat_find_model", "softmax_rows", "static"),
    Case("cheat_find_model", "softmax_rows", "accuracy", dynamic=True),
    Case("cheat_getattr_op", "softmax_rows", "library"),
    Case("cheat_dict_op", "softmax_rows", "static"),
    Case("cheat_dict_op", "softmax_rows", "library", dynamic=True),
    Case("cheat_default_arg", "softmax_rows", "library"),
    Case("cheat_builtins_getattr", "softmax_rows", "static"),
    Case("cheat_builtins_getattr", "softmax_rows", "library", dynamic=True),
    Case("cheat_numpy_host", "softmax_rows", "library"),
    # #17: a forward that runs the copy of the reference kernel.py carries for backward
    Case("cheat_reference_forward", "softmax_rows", "static"),
    Case("cheat_reference_forward", "softmax_rows", "library", dynamic=True),
    # #17 item 4: a kernel.py-shaped custom op whose implementation calls the library
    Case("cheat_custom_op", "softmax_rows", "static"),
    Case("cheat_custom_op", "softmax_rows", "library", dynamic=True),
    # #17 item 1: right on every variant and draw, wrong at an edge (verify/edges.py), each failed there by name
    Case("cheat_rank_shape", "relu_small", "edges", draw="edge:rank+1"),      # (3, 5, 37) -> a (3, 5) output
    Case("cheat_bf16_fp32", "relu_small", "edges", draw="edge:bf16"),         # bf16 in, fp32 out
    # rows past 2^20: the tail unwritten. On a GPU its one-program row of 2^20 fp32 values compiles and runs past the
    # judge's time limit (H200, 2026-12-02: `timeout` in edge:rows, variant odd+hidden_size=1048579): caught there too
    Case("cheat_rows_garbage", "layernorm_small", "edges", draw="edge:rows", on_gpu=("timeout",)),
    # a package the reference imports (einops, KernelBench's Mamba2) may be imported; computing through it is the
    # library's work all the same
    Case("cheat_einops_reduce", "row_mean_einops", "library"),
]
# the check inside the edge case that each edge cheater must fail (the reason's "[check]")
EDGE_CHECKS = {"cheat_rank_shape": "output", "cheat_bf16_fp32": "output", "cheat_rows_garbage": "unwritten"}
# named by the static check's rule "reach" (its findings come before the library rule's)
REACH_ATTACKS = {"cheat_forged_done", "cheat_frame_walk", "cheat_patch_referee", "cheat_find_model", "cheat_dict_op",
                 "cheat_builtins_getattr"}
# what the observed check must name, for the cases it rejects
LIBRARY_NAMES = {"cheat_getattr_op": "aten._softmax", "cheat_dict_op": "aten._softmax",
                 "cheat_default_arg": "aten._softmax", "cheat_builtins_getattr": "aten._softmax",
                 "cheat_numpy_host": "on the host", "cheat_reference_forward": "aten._softmax",
                 "cheat_custom_op": "aten._softmax", "cheat_einops_reduce": "aten.mean"}
CORRECT = [
    Case("ok_relu", "relu_small", None),
    Case("ok_softmax", "softmax_rows", None),
    Case("ok_layernorm", "layernorm_small", None),
    Case("ok_row_mean", "row_mean", None),
    Case("ok_row_mean_einops", "row_mean_einops", None),   # imports einops as its reference does
    Case("ok_linear_ieee", "linear_small", None),
    Case("tf32_linear", "linear_small", None, tf32=True),     # the same GEMM passes when tf32 is allowed
]
ALL = CHEATERS + CORRECT


def _judge(case: Case, device: str) -> Verdict:
    settings = VerifySettings(tf32=case.tf32, timeout_s=case.timeout_s, device=device)
    judge = verify_dynamic if case.dynamic else verify_candidate
    return judge(load_problem(PROBLEMS / f"{case.problem}.py"), HERE / f"{case.candidate}.py", settings)


def _judge_all(device: str) -> dict[str, Verdict]:
    workers = max(2, os.cpu_count() or 2) if device == "cpu" else 4
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # the sleeper first: its wait overlaps the others
        order = sorted(ALL, key=lambda c: c.check != "timeout")
        futures = {c.id: pool.submit(_judge, c, device) for c in order}
        return {k: f.result() for k, f in futures.items()}


@pytest.fixture(scope="module")
def interpreter_verdicts() -> dict[str, Verdict]:
    return _judge_all("cpu")


@pytest.fixture(scope="module")
def gpu_verdicts() -> dict[str, Verdict]:
    return _judge_all("cuda")


def _assert_case(case: Case, v: Verdict, gpu: bool) -> None:
    label = f"{case.id}: {v.check} {v.reason}"
    if case.check is None:
        assert v.passed, label
        assert v.checks[-1] == "edges" and "unwritten" in v.checks and "determinism" in v.checks
        # the edge cases: answered or refused by name; rows past 2^20 may be too slow for the interpreter (a GEMM's
        # K loop of 2^20 / 32 steps), which the verdict says; past 2^31 elements needs a GPU
        edges = {c.draw.split("->")[0] for c in v.cases if c.draw.startswith("edge:")}
        slow = any(s.startswith("edge:rows (") and "no answer within" in s for s in v.edges_skipped)
        assert edges | ({"edge:rows"} if slow else set()) >= {"edge:rank+1", "edge:rank-1", "edge:bf16", "edge:rows"}, \
            label
        assert gpu or any(s.startswith("edge:int32") for s in v.edges_skipped), label
        return
    assert not v.passed, f"{case.id} passed but should fail [{case.check}]: {v.reason}"
    allowed = (case.check,) + (case.on_gpu if gpu else ())
    assert v.check in allowed, label
    assert v.reason and "\n" not in v.reason, label
    assert v.checks and v.checks[-1] == v.check, label
    if case.variant and v.check == case.check:
        assert v.variant == case.variant, label
    if case.draw and v.check in (case.check, "timeout"):   # a timeout counts only in the case's own draw
        assert (v.draw or "").startswith(case.draw), label
    if v.check == "library":
        assert LIBRARY_NAMES[case.candidate] in v.reason, label
    if v.check == "static" and case.candidate in REACH_ATTACKS:
        assert "may not reach" in v.reason, label
    if v.check == "edges":
        assert v.reason.startswith(f"{case.draw} (") and f"[{EDGE_CHECKS[case.candidate]}]" in v.reason, label


@pytest.mark.interpreter
@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_interpreter(case: Case, interpreter_verdicts: dict[str, Verdict]) -> None:
    v = interpreter_verdicts[case.id]
    assert v.mode == "cpu interpreter"
    _assert_case(case, v, gpu=False)


@pytest.mark.gpu
@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_gpu(case: Case, gpu_verdicts: dict[str, Verdict]) -> None:
    v = gpu_verdicts[case.id]
    assert v.mode.startswith("gpu cuda")
    _assert_case(case, v, gpu=True)


@pytest.mark.interpreter
def test_suite_is_broad(interpreter_verdicts: dict[str, Verdict]) -> None:
    """At least 12 cheaters over several problems, caught by at least 10 different checks."""
    failed = [interpreter_verdicts[c.id] for c in CHEATERS]
    assert len(failed) >= 12
    assert len({c.problem for c in CHEATERS}) >= 4
    assert len({v.check for v in failed}) >= 10


@pytest.mark.interpreter
def test_interpreter_skips_nothing_on_tiny_problems(interpreter_verdicts: dict[str, Verdict]) -> None:
    v = interpreter_verdicts["ok_softmax"]
    regular = [c for c in v.cases if not c.draw.startswith("edge:")]
    assert {c.variant for c in regular} == {"default", "small", "odd"}
    assert {c.draw for c in regular} == {"normal", "uniform", "outliers", "special"}
    assert [c.variant for c in regular if c.draw == "special"] == ["odd"]
    assert v.variants_skipped == ()
    # the edge cases after them, on the smallest variant (odd: 7 x 45) or sizes from it: a rank-3 input is refused
    # by name (the kernel takes rows), a rank-1 one too (the reference raises: softmax over dim 1 of a vector)
    edges = {c.draw: c for c in v.cases if c.draw.startswith("edge:")}
    assert list(edges) == ["edge:rank+1", "edge:rank-1", "edge:bf16", "edge:rows"]
    assert edges["edge:rank+1"].refused.startswith("forward raised ValueError: x has shape (3, 7, 45)")
    assert "the reference raises too: IndexError" in edges["edge:rank-1"].refused
    assert edges["edge:bf16"].refused is None and edges["edge:bf16"].policy == "bf16"
    # PyTorch's own fp32 softmax over 2^20 + 3 keys misses float64 by about 2.5e-6 (norm) on a normal draw: 4x of it
    # sits at the table's 1e-5, so on some draws the documented widening rule applies (tolerance.relax), on others not
    assert edges["edge:rows"].variant == "odd+dim=1048579" and edges["edge:rows"].refused is None
    assert edges["edge:rows"].policy in ("fp32", "fp32 widened to 4x PyTorch's own error")
