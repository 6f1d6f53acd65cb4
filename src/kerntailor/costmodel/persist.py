"""The learned cost model's life cycle: training rows from the store, quality on held-back problems, a
saved model per target, and the ranker `generate` uses so that only the most promising schedules are timed.

    rows = rows_from_store(store, "h200")                 # every measured schedule on the target
    report = quality_report(rows, get_target("h200"))     # analytical vs learned, problems held back
    path = save_model(LearnedModel(target).fit(rows))     # $KERNTAILOR_HOME/models/h200.pkl
    rank = load_ranker(target, work)                      # None when no model is saved for the target

Held back means whole problems: each fold trains on the other problems' measurements and ranks the
held-out problems' schedules, which is the situation of a new problem. Per problem (kernel group) it
reports whether the measured-fastest schedule is among the model's top 5 (and top 1), and the Spearman
rank correlation of predicted against measured times.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kerntailor.costmodel.analytical import AnalyticalModel
from kerntailor.costmodel.candidate import Candidate, Work
from kerntailor.costmodel.quality import Quality, Row, score
from kerntailor.search.config import Config
from kerntailor.targets.spec import Target

# 2: the pointwise block knob is XBLOCK (its feature was knob:BLOCK): a model saved as format 1 is not loaded
# (`kerntailor costmodel --save` refits it; the stores' old rows are read in today's names by Config.from_json)
MODEL_FORMAT = 2


def work_to_json(work: Work) -> dict:
    return {"flops": work.flops, "min_bytes": work.min_bytes, "dtype": work.dtype, "matrix": work.matrix,
            "sizes": [[k, v] for k, v in work.sizes], "vector_flops": work.vector_flops}


def work_from_json(data: dict) -> Work:
    return Work(float(data["flops"]), float(data["min_bytes"]), data["dtype"], bool(data["matrix"]),
                tuple((k, int(v)) for k, v in data["sizes"]), float(data.get("vector_flops", 0.0)))


def _facts(data: dict | None):
    if not data:
        return None
    from kerntailor.builder.types import IsaFacts

    try:
        return IsaFacts.from_json(data)
    except (TypeError, KeyError, ValueError):  # facts in an older format: the model estimates them instead
        return None


def rows_from_store(store, target: str, *, toolchain_key: str | None = None) -> list[Row]:
    """Measured schedules of single kernels on `target` (module and library entries are not schedules).
    The group of a row is its problem and kernel sizes, so each group ranks schedules of one kernel."""
    rows = []
    for t in store.training_rows(target, toolchain_key=toolchain_key):
        config = t.config
        if not isinstance(config, dict) or "work" not in config or "knobs" not in config:
            continue
        work = work_from_json(config["work"])
        candidate = Candidate(Config.from_json(config), work, facts=_facts(t.facts))
        rows.append(Row(candidate, t.median_us * 1e-6, f"{t.problem_key[:12]} {work.key()}"))
    return rows


@dataclass(frozen=True)
class ModelQuality:
    model: str
    groups: int
    top1_hit_rate: float
    top5_hit_rate: float
    spearman: float
    n_train: int          # rows the model was fitted on, per fold on average (0 for the analytical model)
    n_test: int


def _summary(name: str, predicted: list[float], rows: list[Row], n_train: float) -> ModelQuality:
    q: Quality = score(predicted, rows, k=5)
    top1 = score(predicted, rows, k=1).top5_hit_rate   # the hit rate at k (the field is named for k = 5)
    return ModelQuality(name, len(q.groups), top1, q.top5_hit_rate, q.spearman, int(n_train), len(rows))


def quality_report(rows: Sequence[Row], target: Target, *, folds: int = 5, seed: int = 0,
                   min_group: int = 3) -> dict[str, Any]:
    """Analytical vs learned ranking on held-back problems (`folds`-fold split by problem). Groups with
    fewer than `min_group` schedules are left out (nothing to rank)."""
    from kerntailor.costmodel.learned import LearnedModel

    by_group: dict[str, list[Row]] = {}
    for r in rows:
        by_group.setdefault(r.group_key, []).append(r)
    groups = sorted(g for g, rs in by_group.items() if len(rs) >= min_group)
    if len(groups) < 2:
        raise ValueError(f"quality needs at least 2 kernels with {min_group}+ measured schedules, "
                         f"got {len(groups)}")
    folds = min(folds, len(groups))
    analytical = AnalyticalModel(target)
    test_rows: list[Row] = []
    learned_pred: list[float] = []
    trained = []
    for f in range(folds):
        held = set(groups[f::folds])
        train = [r for g in groups if g not in held for r in by_group[g]]
        test = [r for g in groups if g in held for r in by_group[g]]
        model = LearnedModel(target, seed=seed).fit(train)
        learned_pred += model.predict([r.candidate for r in test])
        test_rows += test
        trained.append(len(train))
    analytical_pred = analytical.predict([r.candidate for r in test_rows])
    return {
        "target": target.name, "rows": len(test_rows), "kernels": len(groups), "folds": folds,
        "split": "by problem: each fold's kernels are never seen in training",
        "models": [asdict(_summary("analytical", analytical_pred, test_rows, 0)),
                   asdict(_summary("learned", learned_pred, test_rows, sum(trained) / len(trained)))],
    }


def models_dir() -> Path:
    home = os.environ.get("KERNTAILOR_HOME")
    return (Path(home) if home else Path.home() / ".cache" / "kerntailor") / "models"


def save_model(model, path: Path | None = None) -> Path:
    path = path or models_dir() / f"{model.target.name}.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps({"format": MODEL_FORMAT, "target": model.target.name, "model": model}))
    tmp.replace(path)  # atomic: a reader never sees half a model
    return path


def load_model(target: Target, path: Path | None = None):
    """The saved learned model for `target`, or None (none saved, another format, or unreadable)."""
    path = path or models_dir() / f"{target.name}.pkl"
    if not path.exists():
        return None
    try:
        data = pickle.loads(path.read_bytes())
    except Exception:
        return None
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT or data.get("target") != target.name:
        return None
    return data["model"]


def load_ranker(target: Target, work: Work) -> Callable[[list[Config]], list[Config]] | None:
    """Ranks configs of one kernel by the saved learned model's predicted time (fastest first), or None."""
    model = load_model(target)
    if model is None:
        return None

    def rank(configs: list[Config]) -> list[Config]:
        predicted = model.predict([Candidate(c, work) for c in configs])
        return [c for _, c in sorted(zip(predicted, configs), key=lambda pc: pc[0])]

    return rank
