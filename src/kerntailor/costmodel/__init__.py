"""The cost model: predicts a candidate's time on a target so the search times only the likeliest.

    from kerntailor.costmodel import AnalyticalModel, Candidate, Work, config_ranker
    model = AnalyticalModel(get_target("mi300x"))
    work = Work.gemm(M=4096, N=4096, K=4096, dtype="fp16")
    model.explain(Candidate(config, work))           # Prediction: seconds and every term
    rank_hook = config_ranker(model, lambda c: Candidate(c, work))   # for Strategy.run(rank=...)

- `candidate.py`  Work (flops, bytes, sizes) and Candidate (Config + Work + IsaFacts)
- `analytical.py` roofline + occupancy + wave quantization + spills + launch overhead; needs no data
- `learned.py`    gradient boosting on measurements (optional scikit-learn), refining the analytical model
- `quality.py`    Row, Quality, Spearman (numpy only), top-k hit rate per problem group
- `rank.py`       rank(candidates, model) and the search's `rank(configs) -> configs` hook

Predictions are estimates: anything shown to a user from them is labelled *predicted*.
"""

from kerntailor.costmodel.analytical import (
    AnalyticalModel,
    Prediction,
    estimate_facts,
    wave_quantization,
)
from kerntailor.costmodel.candidate import Candidate, Work
from kerntailor.costmodel.learned import LearnedModel, LearnedModelUnavailable
from kerntailor.costmodel.quality import Quality, Row, rankdata, score, spearman
from kerntailor.costmodel.rank import config_ranker, rank

__all__ = [
    "AnalyticalModel",
    "Candidate",
    "LearnedModel",
    "LearnedModelUnavailable",
    "Prediction",
    "Quality",
    "Row",
    "Work",
    "config_ranker",
    "estimate_facts",
    "rank",
    "rankdata",
    "score",
    "spearman",
    "wave_quantization",
]
