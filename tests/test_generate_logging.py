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


def test_a_gpu_worker_batch_says_where_its_seconds_went():
    """Measured mode's batches (one GPU worker process each) are where a level-3 model's minutes went on the H200
    (2026-12-04e: one pool candidate's search 42 s): the log splits a batch into the worker's set-up, the
    candidates' builds and first runs (Triton's compiles), the timing, and the rest (process start and exit)."""
    from kerntailor.generate.evaluate import batch_line

    records = [{"path": "a", "first_s": 3.0, "timing_s": 0.5}, {"path": "b", "first_s": 1.0, "timing_s": 0.5},
               {"path": "c", "ok": False, "error": "wrong result"}]
    line = batch_line("k1", 3, 12.0, 4.0, records)
    assert line == ("k1: GPU worker batch of 3: 12.0 s (set-up 4.0 s, builds and first runs 4.0 s, timing 1.0 s, "
                    "the rest (process start, imports before set-up, exit) 3.0 s)")
    assert batch_line("", 1, 120.0, None, []) == ("GPU worker batch of 1: 120.0 s (no set-up record, builds and "
                                                   "first runs 0.0 s, timing 0.0 s)")


def test_the_cli_log_lines_carry_seconds_since_start():
    from kerntailor.cli import _log_to_stderr

    logger = logging.getLogger("kerntailor")
    level, before = logger.level, list(logger.handlers)
    _log_to_stderr(1)
    (handler,) = [h for h in logger.handlers if h not in before]
    try:
        record = logging.LogRecord("kerntailor.x", logging.INFO, __file__, 1, "hello", None, None)
        assert handler.filter(record)
        line = handler.format(record)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert line.startswith("[") and line.endswith(" s] kerntailor.x: hello"), line
    assert float(line[1:].split(" s]")[0]) == round(record.relativeCreated / 1000, 1)
