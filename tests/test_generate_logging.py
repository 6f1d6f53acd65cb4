"""`kerntailor generate -v` says why a candidate was dropped: each stage logs it under its module's logger
(`kerntailor.generate.evaluate`, ...), which the CLI shows at INFO."""

from __future__ import annotations

import logging

from kerntailor.codegen.fused import ReductionSchedule
from kerntailor.costmodel import Work
from kerntailor.generate.evaluate import Evaluator
from kerntailor.search import Config
from kerntailor.targets import get_target


def test_a_candidate_codegen_refuses_is_logged_with_its_reason(caplog):
    def materialize(config: Config):   # the search's Candidates make the schedule first: codegen refuses it there
        schedule = ReductionSchedule.from_knobs(config.as_dict())
        raise NotImplementedError(f"not reached: {schedule}")

    evaluator = Evaluator(get_target("h200"), Work(flops=0.0, min_bytes=4096.0), materialize, group="g0")
    bad = Config("reduction", (("XBLOCK", 1), ("RBLOCK", 96), ("persistent", False)))
    with caplog.at_level(logging.INFO, logger="kerntailor"):
        (trial,) = evaluator([bad])
    assert not trial.ok and "RBLOCK=96 is not a power of two" in trial.error
    dropped = [r for r in caplog.records if r.name == "kerntailor.generate.evaluate"]
    assert len(dropped) == 1 and dropped[0].levelno == logging.INFO
    message = dropped[0].getMessage()
    assert message.startswith("g0: dropped ") and "codegen: reduction schedule: RBLOCK=96 is not a power of two" \
        in message, message
