"""Cost per token (optimizing/cost.py, targets/price.py, render.cost_table) without a kernel: the token rule and its
override, the arithmetic on measured seconds, rows without numbers where nothing was measured (never a predicted
figure in their place), every price stated with its source; and, on a GPU, end_to_end's CUDA-graph variant."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from kerntailor.errors import KerntailorError
from kerntailor.optimizing.check import NO_GPU
from kerntailor.optimizing.cost import RULE_ACTIVATIONS, RULE_IDS, VARIANTS, count_tokens, token_costs
from kerntailor.targets import TARGETS
from kerntailor.targets.price import LIST_PRICES, ListPrice, list_price, price_for


@pytest.mark.parametrize("inputs,tokens,rule", [
    ([torch.zeros(8, 2048, dtype=torch.long)], 8 * 2048, RULE_IDS),
    ([torch.randn(32, 1, 64), torch.zeros(32, 1, dtype=torch.long)], 32, RULE_IDS),   # ids win over activations
    ([torch.zeros(5, dtype=torch.int32)], 5, RULE_IDS),
    ([3, torch.randn(8, 2048, 4096)], 8 * 2048, RULE_ACTIVATIONS),
    ([torch.randn(16, 3, 32, 32)], 16 * 3 * 32, RULE_ACTIVATIONS),
    ([torch.randn(64)], 1, RULE_ACTIVATIONS),
    ([torch.ones(4, 4, dtype=torch.bool), torch.randn(4, 10)], 4, RULE_ACTIVATIONS),   # a mask is not token ids
])
def test_tokens_per_call_follows_the_stated_rule(inputs, tokens, rule):
    assert count_tokens(inputs) == (tokens, rule)


def test_tokens_per_call_is_the_users_when_given_and_none_without_a_tensor():
    assert count_tokens([torch.randn(8, 16)], 1000) == (1000, "given by the user")
    assert count_tokens([2.0])[0] is None
    with pytest.raises(KerntailorError, match="--tokens-per-call"):
        count_tokens([torch.randn(8, 16)], 0)


def test_every_target_has_a_price_with_its_source_and_none_is_a_made_up_citation():
    assert {t.name for t in TARGETS} == set(LIST_PRICES)
    for t in TARGETS:
        p = list_price(t.name)
        assert p.usd_per_hour > 0 and p.date and p.source
        assert p.assumed and p.source.startswith("assumed:"), p   # nothing in the repo's sources cites a price
    assert list_price("sm_90") == list_price("h200")
    assert price_for("h200", 2.25) == ListPrice(2.25, "given by the user", "", False)
    with pytest.raises(KerntailorError, match="--price-per-hour"):
        price_for("h200", -1.0)


def test_measured_seconds_become_tokens_per_second_and_dollars_per_million_tokens():
    timing = {"label": "measured on H200", "seconds": {"eager": 0.5, "compile": 0.25, "optimized": 0.2},
              "errors": {"optimized_cuda_graph": "capture failed: RuntimeError: x"}}
    report = token_costs(timing, 16384, RULE_IDS, ListPrice(3.6, "given by the user", "", False))
    rows = {r.variant: r for r in report.rows}
    assert tuple(rows) == VARIANTS
    assert rows["eager"].tokens_per_s == pytest.approx(32768)
    assert rows["eager"].usd_per_million_tokens == pytest.approx(3.6 / 3600 / 32768 * 1e6)
    assert rows["optimized"].usd_per_million_tokens == pytest.approx(rows["eager"].usd_per_million_tokens * 0.4)
    assert rows["optimized_cuda_graph"].note == "failed: capture failed: RuntimeError: x"
    assert rows["optimized_compile"].note == "not measured" and rows["optimized_compile"].seconds is None


def test_without_a_gpu_every_row_says_so_and_carries_no_number():
    from rich.console import Console

    from kerntailor.optimizing.check import ModelCheck
    from kerntailor.optimizing.render import cost_table, optimize_dict
    from kerntailor.optimizing.run import OptimizeReport

    cost = token_costs({"note": NO_GPU}, 8, RULE_ACTIVATIONS, list_price("h200"))
    assert all(r.note == NO_GPU and r.seconds is r.tokens_per_s is r.usd_per_million_tokens is None
               for r in cost.rows)
    report = OptimizeReport("m", "h200", "predicted", (), ModelCheck(True, "", "fp32", 2, 0.0), {"note": NO_GPU},
                            "/tmp", cost)
    doc = optimize_dict(report)
    assert doc["cost"]["price"]["assumed"] and doc["cost"]["token_rule"] == RULE_ACTIVATIONS
    console = Console(width=200, record=True)
    console.print(cost_table(report))
    text = console.export_text()
    assert text.count(NO_GPU) == len(VARIANTS) and "$3.50 per GPU-hour (assumed:" in text
    body = text.split("┡")[1].split("└")[0]
    assert not any(ch.isdigit() for ch in body), body   # no invented figure in any row


def test_tokens_without_a_rule_leave_the_rate_out_but_keep_the_time():
    report = token_costs({"seconds": {"eager": 1e-3}}, None, "no tensor input", list_price("h100"))
    eager = report.rows[0]
    assert eager.seconds == 1e-3 and eager.tokens_per_s is None and eager.note == "no tensor input"


@pytest.mark.gpu
def test_gpu_end_to_end_times_the_optimized_model_in_a_cuda_graph():
    from kerntailor.optimizing.check import cuda_graphed, end_to_end

    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    torch.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(64, 64), nn.GELU()).cuda().eval(), torch.randn(8, 64, device="cuda")
    replay = cuda_graphed(model, [x])
    y = torch.randn(8, 64, device="cuda")
    with torch.no_grad():
        assert torch.allclose(replay([y]), model(y))   # new data copied into the static input
    timing = end_to_end(model, model, [x])
    assert {"optimized_cuda_graph", "eager_cuda_graph"} <= set(timing["seconds"]), timing.get("errors")
    assert timing["speedup"]["optimized_cuda_graph_vs_eager_cuda_graph"] > 0
