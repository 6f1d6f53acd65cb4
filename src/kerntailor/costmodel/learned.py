"""The learned cost model: gradient-boosted trees over the store's measurements for one target.

    model = LearnedModel(get_target("mi300x")).fit(rows)        # rows: list[Row] (candidate, seconds)
    model.predict(candidates)                                   # seconds
    model.evaluate_quality(rows, holdout_fraction=0.25, seed=0) # Quality: top-5 hit rate, Spearman

It refines the analytical model rather than replacing it: it learns log(measured / roofline floor) (how
far above the floor a schedule lands, roughly independent of problem size) from the Config's knobs, the
ISA facts (estimated when a candidate has not been built), the grid, the problem sizes and the analytical
model's own terms. Predictions are the floor times the learned ratio, never below the floor.

scikit-learn is optional (`pip install 'kerntailor[learned]'`); without it, constructing a LearnedModel
raises `LearnedModelUnavailable` and everything else in kerntailor works.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

from kerntailor.costmodel.analytical import AnalyticalModel, Prediction, estimate_facts
from kerntailor.costmodel.candidate import Candidate, log2_or_zero
from kerntailor.costmodel.quality import Quality, Row, score
from kerntailor.errors import KerntailorError
from kerntailor.search.families import itemsize, loop_trips, padding_factor, program_count
from kerntailor.targets.occupancy import occupancy
from kerntailor.targets.spec import Target

_MISSING = -1.0
_BIG = 1e6      # stands in for an infinite analytical term (a candidate that cannot launch)


class LearnedModelUnavailable(KerntailorError, ImportError):
    """scikit-learn is not installed."""


def _gradient_boosting():
    try:
        from sklearn.ensemble import GradientBoostingRegressor
    except ImportError as e:
        raise LearnedModelUnavailable(
            "the learned cost model needs scikit-learn: pip install 'kerntailor[learned]' "
            "(or scikit-learn>=1.3); the analytical model (kerntailor.costmodel.AnalyticalModel) needs nothing"
        ) from e
    return GradientBoostingRegressor


def _finite(x: float, big: float = _BIG) -> float:
    return x if math.isfinite(x) else big


def features(candidate: Candidate, target: Target, prediction: Prediction) -> dict[str, float]:
    """The feature row of one candidate (names are stable; absent ones are filled with -1)."""
    config, work = candidate.config, candidate.work
    sizes = work.size_map
    f: dict[str, float] = {}
    for name, value in config.knobs:
        if isinstance(value, (bool, int, float)):
            f[f"knob:{name}"] = float(value)
    if config.get("maxnreg", 0) == 0 and "knob:maxnreg" in f:   # 0 is no cap: the most a thread can have
        f["knob:maxnreg"] = float(target.max_registers_per_thread)
    for name, value in work.sizes:
        f[f"size:{name}"] = log2_or_zero(value)
    f["work:log2_flops"] = log2_or_zero(work.flops + work.vector_flops)
    f["work:log2_bytes"] = log2_or_zero(work.min_bytes)
    f["work:matrix"] = float(work.matrix)
    f["work:itemsize"] = float(itemsize(work.dtype))

    facts = candidate.facts or estimate_facts(candidate, target)
    f["facts:estimated"] = float(candidate.facts is None)
    f["facts:registers"] = float(facts.registers)
    f["facts:spills"] = float(facts.spills)
    f["facts:scratch_bytes"] = float(facts.scratch_bytes)
    f["facts:lds_bytes"] = float(facts.lds_bytes)
    f["facts:matrix_instr_count"] = float(facts.matrix_instr_count)
    f["facts:code_size_bytes"] = float(facts.code_size_bytes) if facts.code_size_bytes is not None else _MISSING
    threads = facts.num_warps * target.warp_size
    occ = occupancy(target, registers_per_thread=facts.registers, lds_bytes_per_block=facts.lds_bytes,
                    threads_per_block=threads)
    f["facts:occupancy"] = float(facts.occupancy_rule if facts.occupancy_rule is not None
                                 else (occ.waves_per_simd if target.is_amd else occ.waves_per_cu))
    f["facts:blocks_per_cu"] = float(occ.blocks_per_cu)

    programs = program_count(config, sizes)
    f["grid:log2_programs"] = log2_or_zero(programs)
    f["grid:waves"] = programs / max(1, target.compute_units * occ.blocks_per_cu)
    f["grid:trips"] = float(loop_trips(config, sizes))
    f["grid:padding"] = padding_factor(config, sizes)
    f["grid:threads"] = float(threads)

    f["model:log_ratio"] = _finite(math.log(prediction.seconds / prediction.floor_seconds)
                                   if prediction.floor_seconds > 0 else 0.0, 50.0)
    f["model:quantization"] = _finite(prediction.quantization)
    f["model:occupancy_penalty"] = _finite(prediction.occupancy_penalty)
    f["model:memory_share"] = (_finite(prediction.memory_seconds) /
                               max(1e-30, _finite(prediction.memory_seconds) + prediction.compute_seconds))
    return f


class LearnedModel:
    """GradientBoostingRegressor on log(seconds / floor) for one target (module docstring)."""

    name = "learned"

    def __init__(self, target: Target, *, seed: int = 0, n_estimators: int = 300, max_depth: int = 3,
                 learning_rate: float = 0.05, subsample: float = 0.8):
        self._regressor_cls = _gradient_boosting()
        self.target = target
        self.analytical = AnalyticalModel(target)
        self.params = dict(n_estimators=n_estimators, max_depth=max_depth, learning_rate=learning_rate,
                           subsample=subsample, random_state=seed)
        self.seed = seed
        self.feature_names: tuple[str, ...] = ()
        self._regressor = None

    @property
    def fitted(self) -> bool:
        return self._regressor is not None

    def _matrix(self, candidates: Sequence[Candidate]) -> tuple[np.ndarray, np.ndarray]:
        """(feature matrix in `feature_names` order, floors in seconds)."""
        rows, floors = [], []
        for c in candidates:
            p = self.analytical.explain(c)
            rows.append(features(c, self.target, p))
            floors.append(p.floor_seconds)
        if not self.feature_names:
            self.feature_names = tuple(sorted({name for row in rows for name in row}))
        x = np.array([[row.get(n, _MISSING) for n in self.feature_names] for row in rows], dtype=float)
        return x.reshape(len(rows), len(self.feature_names)), np.asarray(floors, dtype=float)

    def fit(self, rows: Sequence[Row]) -> LearnedModel:
        """Fit on measured rows (this target's); returns self."""
        good = [r for r in rows if r.seconds > 0 and math.isfinite(r.seconds)]
        if len(good) < 2:
            raise ValueError(f"the learned model needs at least 2 measured rows, got {len(good)}")
        self.feature_names = ()
        x, floors = self._matrix([r.candidate for r in good])
        seconds = np.array([r.seconds for r in good])
        y = np.log(seconds / np.maximum(floors, 1e-30))
        regressor = self._regressor_cls(**self.params)
        regressor.fit(x, y)
        self._regressor = regressor
        return self

    def predict(self, candidates: Sequence[Candidate]) -> list[float]:
        """Predicted seconds, never below each candidate's roofline floor."""
        if not self.fitted:
            raise RuntimeError("LearnedModel.predict before fit: fit it on measured rows first")
        if not candidates:
            return []
        x, floors = self._matrix(candidates)
        ratio = np.exp(np.maximum(self._regressor.predict(x), 0.0))
        return [float(s) for s in floors * ratio]

    def evaluate_quality(self, rows: Sequence[Row], holdout_fraction: float = 0.25, seed: int = 0,
                         k: int = 5) -> Quality:
        """Fit a fresh model on all but a random `holdout_fraction` of each problem group's rows and score
        its ranking of the held-out rows (top-k hit rate per group, Spearman). This model is unchanged."""
        if not 0 < holdout_fraction < 1:
            raise ValueError(f"holdout_fraction must be in (0, 1), got {holdout_fraction}")
        rng = random.Random(seed)
        by_group: dict[str, list[Row]] = {}
        for r in rows:
            by_group.setdefault(r.group_key, []).append(r)
        train, test = [], []
        for group_rows in by_group.values():
            shuffled = list(group_rows)
            rng.shuffle(shuffled)
            n_test = min(len(shuffled) - 1, max(1, round(holdout_fraction * len(shuffled))))
            test += shuffled[:n_test]
            train += shuffled[n_test:]
        fresh = LearnedModel(self.target, seed=self.seed, **{k_: v for k_, v in self.params.items()
                                                             if k_ != "random_state"})
        fresh.fit(train)
        return score(fresh.predict([r.candidate for r in test]), test, k=k, n_train=len(train))
