"""`generate --seed-kernel` and `--proposer llm|all`: other kernels compete with the template's under the same
referee; the winner is emitted and stored (predicted mode on CPU, interpreter referee)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import OK, WRONG, fenced
from kerntailor.errors import KerntailorError
from kerntailor.generate import GenerateSettings, generate
from kerntailor.store import Store

HERE = Path(__file__).parent / "candidates"
RELU = HERE / "problems" / "relu_small.py"
SDPA = Path(__file__).parent / "data" / "codegen_fused" / "tiny_sdpa.py"

pytestmark = pytest.mark.interpreter


# --budget bounds the LLM proposer too (its share: all of it with --proposer llm, half with all, counted from the
# proposer's start: loading the problem and judging each kernel under the interpreter take seconds a turn here)
LLM_BUDGET_S = 300.0


def _settings(tmp_path, **kw) -> GenerateSettings:
    return GenerateSettings(**(dict(target="mi300x", out_dir=tmp_path / "out", max_candidates=2, budget_s=20,
                                    store_path=tmp_path / "store.sqlite") | kw))


def test_seed_kernel_competes_and_the_template_wins_in_predicted_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    result = generate(RELU, _settings(tmp_path, seed_kernel=HERE / "ok_relu.py"))
    assert result.status == "generated" and result.report["source"] == "template"
    sources = result.report["sources"]
    assert sources["passed"] is True and sources["seed_kernel"].endswith("ok_relu.py")
    assert [c["source"] for c in sources["contenders"]] == ["template", "seed"]
    assert json.loads(result.report_path.read_text())["source"] == "template"


def test_a_failing_seed_kernel_is_reported_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    bad = tmp_path / "bad.py"
    bad.write_text(WRONG)
    result = generate(RELU, _settings(tmp_path, seed_kernel=bad))
    assert result.status == "generated" and result.report["source"] == "template"
    assert result.report["sources"]["passed"] is False and result.report["sources"]["error"]
    with pytest.raises(KerntailorError, match="no such seed kernel"):
        generate(RELU, _settings(tmp_path, seed_kernel=tmp_path / "missing.py"))


def test_llm_proposer_alone_emits_and_stores_its_kernel(tmp_path, llm):
    fake = llm([fenced(WRONG), fenced(OK)])
    s = _settings(tmp_path, proposer="llm", llm_attempts=1, llm_turns=2, budget_s=LLM_BUDGET_S)
    result = generate(RELU, s)
    assert result.status == "generated" and result.report["source"] == "llm", result.message
    assert result.kernel_path.read_text().strip() == OK.strip()
    assert result.report["sources"]["turns"] == 2 and result.report["sources"]["template"] == "not run"
    assert len(fake.requests) == 2
    assert "mismatch" in fake.prompt(1).lower() or "accuracy" in fake.prompt(1).lower()
    winners = Store(s.store_path).winners()
    assert len(winners) == 1 and winners[0].candidate.family == "llm"
    assert winners[0].candidate.source.strip() == OK.strip()


def test_llm_that_never_passes_falls_back_to_the_library(tmp_path, llm):
    llm([fenced(WRONG)])
    result = generate(SDPA, _settings(tmp_path, proposer="llm", llm_attempts=1, llm_turns=1, budget_s=LLM_BUDGET_S))
    assert result.status == "library" and "no kernel passed" in result.message
    assert "library path" in result.kernel_path.read_text()


def test_proposer_all_starts_the_llm_from_the_template_kernel(tmp_path, llm):
    fake = llm([fenced(WRONG)])
    result = generate(RELU, _settings(tmp_path, proposer="all", llm_attempts=1, llm_turns=1, budget_s=LLM_BUDGET_S))
    assert result.status == "generated" and result.report["source"] == "template"
    assert (tmp_path / "out" / "template_kernel.py").read_text() in fake.prompt(0)


@pytest.mark.parametrize("failure, error", [({"text": "boom", "status": 500}, "InternalServerError"),
                                            ({"raw": '{"id": "chatcmpl-1", "choi'}, "not valid JSON")],
                         ids=["http-500", "truncated-json"])
def test_an_endpoint_failure_under_all_keeps_the_templates_kernel(tmp_path, llm, failure, error):
    """Issue #22: HTTP 500 under --proposer all threw the template's verified kernel away and exited 2."""
    fake = llm([failure] * 5)
    # a budget whose LLM share (half) outlasts judging the template's kernel as the LLM's seed under the
    # interpreter (about 10 s here), so that the endpoint is asked
    result = generate(RELU, _settings(tmp_path, proposer="all", llm_attempts=1, llm_turns=1, budget_s=120))
    assert fake.requests
    assert result.status == "generated" and result.report["source"] == "template", result.message
    assert result.report["sources"]["passed"] is False, result.report["sources"]
    assert error in result.report["sources"]["error"]
    assert "@triton.jit" in result.kernel_path.read_text()
    assert json.loads(result.report_path.read_text())["source"] == "template"


def test_a_hanging_endpoint_costs_at_most_the_llms_share_of_the_budget(tmp_path, llm):
    import time

    from kerntailor.generate.sources import budget_shares

    fake = llm([{"text": "too late", "delay_s": 120}])
    s = _settings(tmp_path, proposer="all", llm_attempts=1, llm_turns=1, budget_s=60)
    result = generate(RELU, s)
    returned = time.monotonic()
    assert result.status == "generated" and result.report["source"] == "template", result.message
    assert "did not answer" in result.report["sources"]["error"]
    share = budget_shares(s)[1]
    assert share == 30 and len(fake.requests) == 1
    assert returned - fake.requests[0]["at"] < share + 3   # not the client's own 600 s timeout


def test_the_llm_proposer_needs_its_endpoint_before_any_work(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.delenv("KERNTAILOR_LLM_BASE_URL", raising=False)
    monkeypatch.setattr("kerntailor.generate.pipeline._generate_template",
                        lambda *a, **k: pytest.fail("the template search ran before the endpoint was checked"))
    with pytest.raises(KerntailorError, match="KERNTAILOR_LLM_BASE_URL"):
        generate(RELU, _settings(tmp_path, proposer="all"))
