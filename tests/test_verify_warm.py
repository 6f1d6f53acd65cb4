"""The referee's warm-up run (judge.warm, candidate.op_warm): on a GPU the candidate runs once per variant before the
variant's judged runs take the GPU's lock, so that Triton's compilation of its kernels at the variant's sizes does
not hold up parallel jobs. Unit: the judge asks for it only on a GPU, with the variant's first draw; the candidate
side draws its own inputs, drops the outputs and reports no exception (the judged runs do)."""

from __future__ import annotations

import pytest
import torch

from helpers import DATA, loaded
from kerntailor.verify.candidate import Server
from kerntailor.verify.judge import Judge

pytestmark = pytest.mark.unit

PROBLEM = DATA / "attention" / "sdpa_gqa_decode.py"


class _Events:
    def __init__(self):
        self.events = []

    def emit(self, **event):
        self.events.append(event)


class _Candidate:
    """Stands in for the candidate process: records the requests, answers ok."""

    def __init__(self):
        self.requests = []

    def request(self, header, payload=None, where=None):
        self.requests.append((header, payload, where))
        return {"ok": True}, []


@pytest.mark.parametrize("device, asked", [("cpu", False), ("cuda", True)])
def test_the_judge_warms_the_candidate_only_on_a_gpu(device, asked):
    events, cand = _Events(), _Candidate()
    problem = loaded(PROBLEM)
    judge = Judge({"problem": problem, "device": device}, events, cand)
    judge.warm("small", "normal", 1234)
    assert bool(cand.requests) == asked
    if asked:
        ((header, payload, where),) = cand.requests
        assert header == {"op": "warm", "variant": "small"}
        assert payload == {"problem": problem, "draw": "normal", "seed": 1234}
        assert events.events == [{"event": "progress", "variant": "small", "step": "warm"}]


def _server(model) -> Server:
    server = Server.__new__(Server)
    server.device, server.current = torch.device("cpu"), model
    return server


def test_the_candidate_runs_once_on_its_own_draw_and_drops_everything():
    seen = []

    def forward(*inputs):
        seen.append([tuple(x.shape) for x in inputs])
        return inputs[0] * 2

    problem = loaded(PROBLEM)
    reply, segments = _server(forward).op_warm({"variant": "small"}, {"problem": problem, "draw": "normal", "seed": 7})
    assert reply == {"ok": True} and segments == []
    assert seen == [[(3, 4, 5, 32), (3, 2, 40, 32), (3, 2, 40, 32)]]   # the small variant's sizes


def test_an_exception_in_the_warm_run_is_left_to_the_judged_runs():
    def forward(*inputs):
        raise RuntimeError("out of resources")

    reply, _ = _server(forward).op_warm({"variant": "small"}, {"problem": loaded(PROBLEM), "draw": "normal",
                                                                "seed": 7})
    assert reply == {"ok": True}
