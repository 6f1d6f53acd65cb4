"""The learned model's life cycle through the store: measured schedules recorded by `generate` (with their
kernel's Work) become training rows; quality is scored on held-back problems; a saved model ranks configs."""

from __future__ import annotations

import math
import random

import pytest

from helpers import ROOT
from kerntailor.costmodel import AnalyticalModel, Candidate, Work
from kerntailor.costmodel.persist import (
    load_model,
    load_ranker,
    quality_report,
    rows_from_store,
    save_model,
    work_from_json,
    work_to_json,
)
from kerntailor.search import reduction_space
from kerntailor.store import ProblemKey, Store, Toolchain
from kerntailor.targets import get_target

H200 = get_target("h200")
TC = Toolchain(torch="2.11.0", triton="3.6.0", python="3.12", kerntailor="0.1.0+x", cuda="13.0", gpu="H200")


def _ratio(v: dict) -> float:
    """A made-up but learnable truth: the further from 8 warps and a 2K chunk, the slower."""
    return 1.05 + 0.3 * abs(math.log2(v["num_warps"]) - 3) + 0.2 * abs(math.log2(v["RBLOCK"]) - 11)


def _fill(store: Store, problems: int = 6, per: int = 12, seed: int = 0) -> None:
    rng = random.Random(seed)
    model = AnalyticalModel(H200)
    for p in range(problems):
        R, X = 1 << rng.randint(11, 15), 1 << rng.randint(8, 13)
        work = Work.reduction(R=R, X=X, dtype="fp32")
        key = ProblemKey(f"hash{p:02d}", None, (((X, R), "fp32", None),), "h200", name=f"p{p}")
        run = store.start_run("generate", key, TC)
        space = reduction_space(H200, R=R, X=X)
        for config in dict.fromkeys(space.sample(rng) for _ in range(per)):
            floor = model.explain(Candidate(config, work)).floor_seconds
            cid = store.record_candidate(run, family="reduction", key=config.key(), source=f"# {config.key()}",
                                         config=config.to_json() | {"work": work_to_json(work)})
            store.record_timing(cid, {}, median_us=floor * _ratio(config.as_dict()) * 1e6, label="measured")
        # a module-level winner and a predicted timing are not training rows
        cid = store.record_candidate(run, family="module", key=f"m{p}", config={"k0": {}}, source="#")
        store.record_timing(cid, {}, median_us=1.0, label="measured")
        cid = store.record_candidate(run, family="reduction", key=f"pred{p}", source="#",
                                     config=config.to_json() | {"work": work_to_json(work)})
        store.record_timing(cid, {}, median_us=1.0, label="predicted")


def test_work_round_trips_through_json():
    work = Work.gemm(M=128, N=64, K=32, dtype="bf16")
    assert work_from_json(work_to_json(work)) == work


def test_rows_quality_save_and_rank(tmp_path, monkeypatch):
    pytest.importorskip("sklearn")
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))
    store = Store(tmp_path / "store.sqlite")
    _fill(store)
    rows = rows_from_store(store, "h200")
    assert len({r.group_key for r in rows}) == 6
    assert all(r.candidate.config.family == "reduction" and r.seconds > 0 for r in rows)
    assert rows_from_store(store, "mi300x") == []

    report = quality_report(rows, H200, folds=3)
    assert report["kernels"] == 6 and report["rows"] == len(rows) and report["folds"] == 3
    by_model = {m["model"]: m for m in report["models"]}
    learned, analytical = by_model["learned"], by_model["analytical"]
    assert 0 <= learned["top1_hit_rate"] <= learned["top5_hit_rate"] <= 1
    assert learned["n_train"] > 0 and learned["n_train"] < len(rows)   # held-back problems are not trained on
    # the truth is learnable and invisible to the analytical model
    assert learned["spearman"] > 0.5 and learned["spearman"] > analytical["spearman"]

    from kerntailor.costmodel.learned import LearnedModel

    assert load_model(H200) is None and load_ranker(H200, rows[0].candidate.work) is None
    path = save_model(LearnedModel(H200).fit(rows))
    assert path == tmp_path / "models" / "h200.pkl"
    assert load_model(get_target("mi300x")) is None      # a model is for its own target only
    work = rows[0].candidate.work
    rank = load_ranker(H200, work)
    configs = [r.candidate.config for r in rows if r.candidate.work == work]
    ranked = rank(configs)
    assert sorted(map(str, ranked)) == sorted(map(str, configs))
    truth = {c: _ratio(c.as_dict()) for c in configs}
    assert truth[ranked[0]] <= sorted(truth.values())[len(truth) // 2]   # its first pick is in the better half


def test_a_corrupt_model_file_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "h200.pkl").write_bytes(b"not a pickle")
    assert load_model(H200) is None


@pytest.mark.parametrize("stored, families", [
    ("bench_gemm_h200_2026-12-01_bf16_run3_store", {"matmul"}),
    ("bench_memory_bound_h200_2026-11-30_run1_store", {"pointwise", "reduction", "pool", "scan"}),
])
def test_stores_written_in_the_old_vocabulary_are_training_rows(stored, families, tmp_path):
    """Stores written before #16 name the matmul space "gemm" and the pointwise block "BLOCK" (benchmarks/data
    holds such stores: the learned model's training data). They read back in today's names, which are the
    search spaces' knobs, and the cost model predicts every row."""
    import gzip
    import json
    import sqlite3

    from kerntailor.search import make_space

    path = tmp_path / f"{stored}.sqlite"
    path.write_bytes(gzip.decompress((ROOT / "benchmarks" / "data" / f"{stored}.sqlite.gz").read_bytes()))
    with sqlite3.connect(path) as db:   # the old shape really is in the file
        stored = [json.loads(c).get("data") for (c,) in db.execute("SELECT config FROM candidates")
                  if c and c.startswith("{")]
        written = {d.get("family") for d in stored if isinstance(d, dict)}
    assert written & {"gemm", "pointwise"}
    rows = rows_from_store(Store(path), "h200")
    assert rows and {r.candidate.config.family for r in rows} == families
    sizes_of = {"matmul": ("M", "N", "K"), "pointwise": ("numel",), "pool": ("numel",)}
    for row in rows:
        config, work = row.candidate.config, row.candidate.work
        assert "BLOCK" not in config.names
        space = make_space(config.family, H200, dtype=work.dtype,
                           **{k: v for k, v in work.sizes if k in sizes_of.get(config.family, ("R", "X"))})
        assert set(config.names) <= set(space.names), (config.names, space.names)
    predicted = AnalyticalModel(H200).predict([r.candidate for r in rows])
    assert all(math.isfinite(p) and p > 0 for p in predicted)
