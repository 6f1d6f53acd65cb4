"""The LLM proposer, end to end against a real OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies:
feedback reaches the next turn, cheats are rejected, budgets stop the loop, the store holds every request,
reply and verdict (and a run resumes from it), nothing but the endpoint is contacted, and a missing extra or
endpoint variable is one line.

Interpreter tier: every kernel a reply carries is judged by the real referee (a worker under
TRITON_INTERPRET=1) on tests/candidates/problems/relu_small.py.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import OK, RELU, WRONG, captured_variant, fenced
from kerntailor.errors import ProposerError
from kerntailor.propose import ProposerSettings, run_proposer, seed_kernel
from kerntailor.propose.extract import extract_code
from kerntailor.store import Store
from kerntailor.store.llm import llm_attempts, llm_turns

HERE = Path(__file__).parent / "candidates"
# fails to build: an attribute Triton does not have, used at import time
NO_BUILD = OK.replace("class ModelNew(nn.Module):", "DEFAULT_BLOCK = tl.constexr(4096)\n\n\nclass ModelNew(nn.Module):")
# a cheat: launches a kernel for show, then lets PyTorch compute the answer
CHEAT_TORCH = OK.replace("        return y\n", "        return torch.relu(x)\n")
CHEAT_PARTIAL = (HERE / "cheat_partial.py").read_text()
CHEAT_EVEN = (HERE / "cheat_even_only.py").read_text()
assert NO_BUILD != OK and CHEAT_TORCH != OK


@pytest.fixture(autouse=True)
def cached_captures(monkeypatch):
    """The first prompt's roofline floor captures the problem: from the tests' disk cache, as the unit tier's
    captures are (helpers.captured_variant); capture itself is the capture tier's to test."""
    import kerntailor.capture

    monkeypatch.setattr(kerntailor.capture, "capture_problem", captured_variant)


@pytest.fixture
def destinations(monkeypatch):
    """Every network destination this process resolves or connects to."""
    seen: list[tuple] = []
    real_connect, real_create, real_getaddrinfo = socket.socket.connect, socket.create_connection, socket.getaddrinfo

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            seen.append(("connect", address[0], address[1]))
        return real_connect(self, address)

    def create_connection(address, *args, **kwargs):
        seen.append(("connect", address[0], address[1]))
        return real_create(address, *args, **kwargs)

    def getaddrinfo(host, port, *args, **kwargs):
        seen.append(("resolve", host, port))
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return seen


def settings(tmp_path: Path, **kw) -> ProposerSettings:
    base = dict(target="mi300x", attempts=1, turns=3, out_dir=tmp_path / "out", measured=False, cross_compile=False,
                store_path=tmp_path / "store.sqlite", verify_timeout_s=120.0, max_retries=0)
    return ProposerSettings(**(base | kw))


# ---- the whole loop


@pytest.mark.interpreter
def test_feedback_reaches_the_next_turn_and_the_correct_kernel_wins(llm, destinations, tmp_path):
    fake = llm([fenced(NO_BUILD), fenced(WRONG, "Fixed the typo."), fenced(OK, "Fixed the negative branch.")])
    result = run_proposer(RELU, settings(tmp_path))

    assert [t.outcome for t in result.turns] == ["build", "failed", "passed"]
    assert len(fake.requests) == 3 and result.stopped == "done"
    # turn 1: the facts, no feedback yet
    first = fake.prompt(0)
    assert "return torch.relu(x)" in first                  # the reference source
    assert "wave" in first and "gfx942" in first and "5.3 TB/s" in first   # the target's facts
    assert "roofline" in first.lower() and "memory-bound" in first         # the floor for this problem
    assert "forward(fp32[5, 37])" in first                   # the odd variant's shapes
    assert "None yet." in first
    # turn 2 is told the build error of turn 1
    second = fake.prompt(1)
    assert "did not build" in second and "constexr" in second and "AttributeError" in second
    assert "DEFAULT_BLOCK = tl.constexr(4096)" in second     # its own previous code
    # turn 3 is told the failed check and its numbers
    third = fake.prompt(2)
    v = result.turns[1].verdict
    assert v.check == "accuracy" and not v.passed
    assert "Failed check `accuracy`" in third
    assert f"max |out−ref| = {v.max_abs_err:.3g}" in third
    assert f"‖out−ref‖/‖ref‖ = {v.rel_norm_err:.3g}" in third
    assert f"variant `{v.variant}`" in third and "tolerance:" in third
    assert "0.25 * x" in third
    # the winner is turn 3's kernel, verified
    assert result.passed and result.verdict.passed and result.source == OK
    assert result.kernel_path.read_text() == OK and result.mode == "predicted" and result.median_us is None
    assert result.tokens == sum(t.prompt_tokens + t.completion_tokens for t in result.turns) > 0
    # the requests: the configured model and key, a system prompt, a completion cap
    assert {r["model"] for r in fake.requests} == {"scripted-coder"}
    assert all(h.get("authorization") == "Bearer test-key" for h in fake.headers)
    assert all(r["messages"][0]["role"] == "system" and "ModelNew" in r["messages"][0]["content"]
               for r in fake.requests)
    assert all(r["max_tokens"] == 8192 for r in fake.requests)
    # nothing but the endpoint was contacted
    assert destinations and {(h, p) for _, h, p in destinations} <= {("127.0.0.1", fake.port),
                                                                      ("127.0.0.1", str(fake.port))}

    # the store holds everything needed to audit the run
    with Store(tmp_path / "store.sqlite") as store:
        run = store.run(result.run_id)
        assert run.command == "propose-llm" and run.status == "done" and run.target == "mi300x"
        (attempt,) = llm_attempts(store, result.run_id)
        assert attempt.model == "scripted-coder" and attempt.base_url == fake.url
        assert attempt.prompt_version == "v1" and "test-key" not in json.dumps(attempt.settings)
        turns = llm_turns(store, result.run_id)
        assert [(t.attempt, t.turn, t.outcome) for t in turns] == [(1, 1, "build"), (1, 2, "failed"), (1, 3, "passed")]
        for t, request, sent in zip(turns, fake.requests, [NO_BUILD, WRONG, OK]):
            assert [{"role": r, "content": c} for r, c in t.messages] == request["messages"]
            assert t.code == sent and sent in t.reply and t.prompt_tokens > 0 and t.completion_tokens > 0
            assert t.request_s > 0 and t.judge_s > 0 and t.feedback
        assert turns[0].verdict is None and "constexr" in turns[0].error
        assert turns[1].verdict.check == "accuracy" and turns[2].verdict.passed
        assert turns[2].candidate_id == result.candidate_id
        winner = store.candidate(result.candidate_id)
        assert winner.source == OK and winner.family == "llm"
        assert [v.passed for v in store.verdicts_for(turns[1].candidate_id)] == [False]
        assert [v.passed for v in store.verdicts_for(result.candidate_id)] == [True]
        assert "test-key" not in (tmp_path / "store.sqlite").read_bytes().decode(errors="replace")


@pytest.mark.interpreter
def test_cheats_are_rejected_and_never_win(llm, tmp_path):
    fake = llm([fenced(CHEAT_TORCH), fenced(CHEAT_PARTIAL), fenced(CHEAT_EVEN)])
    result = run_proposer(RELU, settings(tmp_path))
    assert [t.outcome for t in result.turns] == ["static", "failed", "failed"]
    assert [t.verdict.check for t in result.turns] == ["static", "unwritten", "unwritten"]
    assert not result.passed and result.source is None and result.kernel_path is None
    assert "torch.relu" in result.turns[0].error
    second = fake.prompt(1)
    line = CHEAT_TORCH.splitlines().index("        return torch.relu(x)") + 1
    assert f"Failed static check: line {line}: calls torch.relu" in second
    assert "--allow-library" not in second               # a hint for people at the command line, not the model
    assert "Failed check `unwritten`" in fake.prompt(2)


@pytest.mark.compile
@pytest.mark.interpreter
def test_build_step_gives_the_traceback_and_isa_facts(llm, tmp_path):
    """With cross-compilation on: an import error comes back with the line it happened on; a passing kernel's
    report (the next attempt's "best so far") carries its ISA facts for gfx942."""
    fake = llm([fenced(NO_BUILD), fenced(OK), "No change needed."])
    result = run_proposer(RELU, settings(tmp_path, attempts=2, turns=2, cross_compile=True))
    assert [(t.attempt, t.turn, t.outcome) for t in result.turns] == [(1, 1, "build"), (1, 2, "passed"),
                                                                      (2, 1, "no_code"), (2, 2, "no_code")]
    told = fake.prompt(1).split("## Your previous kernel")[0]
    line = NO_BUILD.splitlines().index("DEFAULT_BLOCK = tl.constexr(4096)") + 1
    assert f"line {line}, in <module>" in told and "DEFAULT_BLOCK = tl.constexr(4096)" in told   # the traceback
    third = fake.prompt(2)                      # attempt 2 starts from the best so far, with its report
    best = third.split("## Best kernel so far")[1]
    assert "Compiled for mi300x (gfx942)" in best and "VGPRs" in best and "occupancy" in best and "spills 0" in best
    assert result.turns[1].build.isa[0][0] == "_relu_kernel"
    assert result.passed and result.source == OK


def fake_timing(candidate_us: float) -> dict:
    rows = [("candidate", candidate_us), ("eager", 12.0), ("compile", 11.0)]
    return {"device_name": "NVIDIA H200", "floor_s": 8e-6, "physics_floor_s": 4e-6,
            "timings": [{"name": n, "median_s": us * 1e-6, "iqr_s": 0.1e-6, "runs": 100} for n, us in rows]}


def test_measured_mode_refines_for_speed_and_keeps_the_fastest(llm, tmp_path, monkeypatch):
    """On the target GPU every passing kernel is timed, its timing goes into the next prompt, the attempt goes
    on for speed, and the fastest passing kernel wins. (The referee is replaced by a stub that times by
    BLOCK, so this runs without a GPU; the GPU tier of the referee is tested in test_verify_*.)"""
    import kerntailor.verify as verify
    from kerntailor.verify import Verdict

    speeds = {"4096": 20.0, "1024": 10.0, "256": 15.0}
    asked = []

    def fake_verify(problem, path, settings):
        asked.append(settings)
        block = next(b for b in speeds if f"BLOCK = {b}" in Path(path).read_text())
        return Verdict(True, None, "all checks passed", problem.name, str(path), "gpu cuda:0 (NVIDIA H200)",
                       ("static", "accuracy", "speed"), timing=fake_timing(speeds[block]))

    monkeypatch.setattr(verify, "verify_candidate", fake_verify)
    kernels = [OK, OK.replace("BLOCK = 4096", "BLOCK = 1024"), OK.replace("BLOCK = 4096", "BLOCK = 256")]
    fake = llm([fenced(k) for k in kernels])
    result = run_proposer(RELU, settings(tmp_path, measured=True))
    assert all(s.time for s in asked) and len(fake.requests) == 3
    assert [t.median_us for t in result.turns] == pytest.approx([20.0, 10.0, 15.0])
    assert result.mode == "measured" and result.median_us == pytest.approx(10.0) and result.source == kernels[1]
    second = fake.prompt(1)
    assert "It passed. Make it faster" in second and "Measured on NVIDIA H200" in second
    assert "candidate: 20.00 µs" in second and "eager: 12.00 µs (IQR 0.10 µs), yours is 0.60x its speed" in second
    assert "roofline floor: 8.00 µs; yours takes 2.50x the floor (40 % of the roofline)" in second
    assert "candidate: 10.00 µs" in fake.prompt(2).split("## Best kernel so far")[1]
    with Store(tmp_path / "store.sqlite") as store:
        (timing,) = store.timings_for(result.candidate_id)
        assert timing.label == "measured" and timing.median_us == pytest.approx(10.0)


# ---- budgets


def test_turns_and_attempts_bound_the_requests(llm, tmp_path):
    fake = llm(["Sorry, I cannot write kernels."] * 10)
    result = run_proposer(RELU, settings(tmp_path, attempts=2, turns=2))
    assert len(fake.requests) == 4 and result.stopped == "done"
    assert [(t.attempt, t.turn, t.outcome) for t in result.turns] == [(1, 1, "no_code"), (1, 2, "no_code"),
                                                                      (2, 1, "no_code"), (2, 2, "no_code")]
    assert "No kernel was found in your reply" in fake.prompt(1)
    assert "No kernel was found" not in fake.prompt(2)       # a new attempt starts afresh


def test_token_budget_stops_the_loop_and_caps_each_reply(llm, tmp_path):
    fake = llm([{"text": "no code", "prompt_tokens": 800, "completion_tokens": 200}] * 10)
    result = run_proposer(RELU, settings(tmp_path, attempts=10, turns=1, max_tokens=2500, reply_tokens=4000))
    assert len(fake.requests) == 3
    assert [r["max_tokens"] for r in fake.requests] == [2500, 1500, 500]
    assert result.tokens == 3000 and result.stopped == "budget: 3000 of 2500 tokens used"


def test_seconds_budget_stops_the_loop(llm, tmp_path):
    # the budget is the invocation's wall clock: loading the problem counts too (over 1 s on a loaded 2-core
    # machine, where no request was then made), so only the bound on requests is asserted
    fake = llm([{"text": "thinking...", "delay_s": 0.6}] * 20)
    t0 = time.monotonic()
    result = run_proposer(RELU, settings(tmp_path, attempts=20, turns=1, max_seconds=1.0))
    assert len(fake.requests) <= 3 and result.stopped == "budget: 1 s spent"
    assert time.monotonic() - t0 < 15


def test_a_reply_cut_off_by_the_cap_is_said_so(llm, tmp_path):
    fake = llm([{"text": "```python\nimport torch\nclass ModelNew", "finish_reason": "length"}, "nothing"])
    result = run_proposer(RELU, settings(tmp_path, turns=2))
    assert result.turns[0].outcome == "no_code"
    assert "cut off" in fake.prompt(1) and "8192-token cap" in fake.prompt(1)


def test_a_server_that_wants_max_completion_tokens_gets_it(llm, tmp_path):
    fake = llm([{"status": 400, "text": "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'."},
                "no code"])
    result = run_proposer(RELU, settings(tmp_path, turns=1))
    assert len(fake.requests) == 2 and result.turns[0].outcome == "no_code"
    assert "max_tokens" not in fake.requests[1] and fake.requests[1]["max_completion_tokens"] == 8192


# ---- resume and seeds


@pytest.mark.interpreter
def test_a_run_resumes_from_the_store(llm, tmp_path):
    fake = llm([fenced(WRONG), {"text": "never sent", "status": 200}])
    first = run_proposer(RELU, settings(tmp_path, max_tokens=1))     # one turn, then the token budget
    assert [t.outcome for t in first.turns] == ["failed"] and first.stopped.startswith("budget")
    assert len(fake.requests) == 1

    again = llm([fenced(OK)])
    result = run_proposer(RELU, settings(tmp_path, run_id=first.run_id))
    assert len(again.requests) == 1                       # turn 1 was not asked again
    prompt = again.prompt(0)
    assert "2 of 3." in prompt
    assert "Failed check `accuracy`" in prompt and "0.25 * x" in prompt   # from the stored turn
    assert [(t.turn, t.outcome) for t in result.turns] == [(1, "failed"), (2, "passed")]
    assert result.run_id == first.run_id and result.passed and result.source == OK
    with Store(tmp_path / "store.sqlite") as store:
        assert [t.turn for t in llm_turns(store, first.run_id)] == [1, 2]
        assert len(llm_attempts(store, first.run_id)) == 1


def test_resuming_another_problems_run_is_refused(llm, tmp_path):
    llm([])
    with Store(tmp_path / "store.sqlite") as store:
        from kerntailor.problem import load_problem
        from kerntailor.store import ProblemKey, toolchain_fingerprint

        other = load_problem(HERE / "problems" / "row_mean.py")
        run_id = store.start_run("propose-llm", ProblemKey.of(other, "mi300x"), toolchain_fingerprint())
    with pytest.raises(ProposerError, match=f"run {run_id} .* is for another problem/target"):
        run_proposer(RELU, settings(tmp_path, run_id=run_id))


@pytest.mark.interpreter
def test_a_passing_seed_kernel_is_the_best_so_far(llm, tmp_path):
    seed = tmp_path / "mine.py"
    seed.write_text(OK)
    fake = llm(["I would not change it."])
    result = run_proposer(RELU, settings(tmp_path, turns=1, seed_kernel=seed))
    assert [(t.attempt, t.outcome) for t in result.turns] == [(0, "passed"), (1, "no_code")]
    best = fake.prompt(0).split("## Best kernel so far")[1]
    assert "It passed the referee" in best and "_relu_kernel" in best
    assert result.passed and result.source == OK and result.turns[0].messages == ()


@pytest.mark.interpreter
def test_a_failing_seed_kernel_is_what_turn_one_fixes(llm, tmp_path):
    seed = tmp_path / "mine.py"
    seed.write_text(CHEAT_PARTIAL)
    fake = llm([fenced(OK)])
    result = run_proposer(RELU, settings(tmp_path, turns=1, seed_kernel=seed))
    first = fake.prompt(0)
    assert "Failed check `unwritten`" in first and "skips the last block" in first
    assert result.passed and result.turns[-1].attempt == 1
    alone = seed_kernel(RELU, seed, settings(tmp_path))         # the helper needs no endpoint
    assert alone.outcome == "failed" and alone.verdict.check == "unwritten"


# ---- errors a user can cause: one line


def test_missing_endpoint_variables_are_one_line(monkeypatch, tmp_path):
    monkeypatch.delenv("KERNTAILOR_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("KERNTAILOR_LLM_MODEL", "m")
    with pytest.raises(ProposerError) as err:
        run_proposer(RELU, settings(tmp_path))
    assert "KERNTAILOR_LLM_BASE_URL" in str(err.value) and "\n" not in str(err.value)
    monkeypatch.delenv("KERNTAILOR_LLM_MODEL")
    with pytest.raises(ProposerError, match="KERNTAILOR_LLM_BASE_URL and KERNTAILOR_LLM_MODEL"):
        run_proposer(RELU, settings(tmp_path))


def test_missing_openai_extra_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNTAILOR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("KERNTAILOR_LLM_MODEL", "m")
    monkeypatch.setitem(sys.modules, "openai", None)     # `import openai` now raises ImportError
    with pytest.raises(ProposerError, match=r"pip install 'kerntailor\[llm\]'") as err:
        run_proposer(RELU, settings(tmp_path))
    assert "\n" not in str(err.value)


def test_the_core_imports_without_openai():
    code = ("import sys; sys.modules['openai'] = None\n"
            "import kerntailor.cli, kerntailor.propose, kerntailor.store.llm\n"
            "assert 'openai' not in [m for m in sys.modules if sys.modules[m] is not None]\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_an_unreachable_endpoint_is_one_line(monkeypatch, tmp_path):
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("KERNTAILOR_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("KERNTAILOR_LLM_MODEL", "m")
    with pytest.raises(ProposerError, match=f"the LLM endpoint http://127.0.0.1:{port}/v1 failed") as err:
        run_proposer(RELU, settings(tmp_path))
    assert "\n" not in str(err.value)


def test_an_endpoint_error_after_a_reply_ends_the_loop_with_what_it_has(llm, tmp_path):
    fake = llm(["no code here", {"text": "", "status": 500}])
    result = run_proposer(RELU, settings(tmp_path, turns=3))
    assert len(fake.requests) == 2 and len(result.turns) == 1
    assert result.stopped.startswith("endpoint error: the LLM endpoint") and not result.passed


def test_a_reply_cut_off_in_transit_is_one_line_not_a_traceback(llm, tmp_path):
    """A 200 whose JSON body is cut short: the openai client raises JSONDecodeError (a ValueError), which used
    to end `generate` with a traceback (issue #22)."""
    llm([{"raw": '{"id": "chatcmpl-1", "object": "chat.completion", "choi'}])
    with pytest.raises(ProposerError, match="not valid JSON") as err:
        run_proposer(RELU, settings(tmp_path))
    assert "\n" not in str(err.value)


def test_an_endpoint_that_never_answers_costs_at_most_the_seconds_budget(llm, tmp_path):
    """The request's deadline is the proposer's time left, whatever the client's own timeout (600 s here)."""
    fake = llm([{"text": "too late", "delay_s": 30}])
    t0 = time.monotonic()
    with pytest.raises(ProposerError, match="did not answer within") as err:
        run_proposer(RELU, settings(tmp_path, max_seconds=2.0, request_timeout_s=600.0, max_retries=2))
    assert time.monotonic() - t0 < 6 and len(fake.requests) == 1, str(err.value)


def test_server_errors_are_retried_within_the_deadline(llm, tmp_path):
    fake = llm([{"text": "overloaded", "status": 500}, "no code here"])
    result = run_proposer(RELU, settings(tmp_path, turns=1, max_retries=1))
    assert len(fake.requests) == 2 and result.turns[0].outcome == "no_code"
    fake = llm([{"text": "overloaded", "status": 500}] * 5)
    with pytest.raises(ProposerError, match="InternalServerError"):
        run_proposer(RELU, settings(tmp_path, turns=1, max_retries=1))
    assert len(fake.requests) == 2   # the first try and one retry


# ---- extraction


@pytest.mark.parametrize("reply, found", [
    ("text\n```python\nclass ModelNew:\n    pass\n```\n", "class ModelNew:\n    pass\n"),
    ("```python\nx = 1\n```\nthen\n```py\nclass ModelNew: pass\n```", "class ModelNew: pass\n"),
    ("```python\nclass ModelNew: a\n```\n```python\nclass ModelNew: b\n```", "class ModelNew: b\n"),
    ("<think>```python\nclass ModelNew: hidden\n```</think>\n```python\nclass ModelNew: shown\n```",
     "class ModelNew: shown\n"),
    ("import torch\n\nclass ModelNew:\n    pass\n", "import torch\n\nclass ModelNew:\n    pass\n"),
])
def test_extract_finds_the_module(reply, found):
    assert extract_code(reply) == (found, "")


@pytest.mark.parametrize("reply, why", [
    ("", "empty"),
    ("I cannot do that.", "no ```python block"),
    ("```python\nx = 1\n```", "defines class ModelNew"),
    ("```python\nclass ModelNew:\n    pass\n", "cut off"),
    ("<think>```python\nclass ModelNew: pass\n```</think>", "no ```python block"),
])
def test_extract_says_why_there_is_no_module(reply, why):
    code, reason = extract_code(reply)
    assert code is None and why in reason


def test_settings_are_frozen():
    s = ProposerSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.turns = 5  # type: ignore[misc]
    assert replace(s, turns=5).turns == 5
