"""The search's build workers (generate/evaluate.py's BUILDS): one pool serves every batch of a search, and the
pipeline's close_gpu_worker ends it."""

from __future__ import annotations

import pytest

from kerntailor.costmodel import Work
from kerntailor.generate import evaluate
from kerntailor.search.config import Config
from kerntailor.targets import get_target
from test_builder import relu


@pytest.mark.compile
def test_batches_of_a_search_share_their_build_workers(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))   # a cold build cache: both candidates are compiled
    kernels = {Config("pointwise", {"XBLOCK": b, "num_warps": 4}): relu(b) for b in (256, 512)}
    evaluator = evaluate.Evaluator(get_target("mi300x"), Work(4096, 3 * 4 * 4096, sizes={"numel": 4096}),
                                   lambda config: (kernels[config].source, kernels[config]))
    evaluate.close_gpu_worker()
    spawned = evaluate.BUILDS._spawned
    trials = [t for config in kernels for t in evaluator([config])]   # two batches, one candidate each
    assert [t.ok for t in trials] == [True, True]
    assert all(not e.build.cached for e in evaluator.seen.values())
    assert evaluate.BUILDS._spawned == spawned + 1   # the second batch's build ran in the first one's worker
    evaluate.close_gpu_worker()
    assert evaluate.BUILDS._workers == []
