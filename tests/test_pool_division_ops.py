"""Ops real models write that torch.export keeps whole and capture used to refuse: adaptive pooling to any size
(average: torch's gathers over windows of two lengths; max: global, or windows that divide the map) and torch.div's
"trunc" rounding. Also integer floor division: Triton's integer // truncates, so a negative quotient with a remainder
is rounded down in the rendered code, not left truncated (a wrong result, not a refusal, before); and an explicit
cast to a 16-bit float rounds, though the arithmetic after it runs in fp32."""

from __future__ import annotations

import pytest

from helpers import DATA, judge, make_module, prepared
from kerntailor.codegen.render import ExprRenderer

FILES = [DATA / "adaptive" / "avg_uneven.py", DATA / "adaptive" / "max_global.py",
         DATA / "rounding" / "int_division.py", DATA / "rounding" / "cast_rounds.py"]


def test_rounded_division_renders_torchs_rounding():
    floor_int = ExprRenderer._rounded_div("floordiv", "i64", "a", "b")
    assert floor_int == "tl.where(((a % b) != 0) & ((a < 0) != (b < 0)), a // b - 1, a // b)"
    assert ExprRenderer._rounded_div("truncdiv", "i64", "a", "b") == "(a // b)"
    assert ExprRenderer._rounded_div("floordiv", "fp32", "a", "b") == "tl.floor(a / b)"
    assert ExprRenderer._rounded_div("truncdiv", "fp32", "a", "b") == (
        "tl.where((a / b) < 0, tl.ceil(a / b), tl.floor(a / b))")


def test_a_cast_to_a_16_bit_float_rounds():
    source = make_module(DATA / "rounding" / "cast_rounds.py").source
    assert ".to(tl.bfloat16).to(tl.float32)" in source and ".to(tl.float16).to(tl.float32)" in source


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_the_files_capture_and_generalize(path):
    problem, _, gen, _ = prepared(path)
    assert [v.name for v in problem.variants] == ["default", "small", "odd"]
    assert gen.graph.nodes


def test_an_unrolled_window_that_moves_with_the_variants_is_refused_in_one_line():
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.errors import CaptureError
    from kerntailor.problem import load_problem

    problem = load_problem(DATA / "adaptive" / "avg_uneven_moving.py")
    assert dict(problem.variants[1].overrides)["height"] < 30   # the variants move the map
    with pytest.raises(CaptureError, match="structure changes between variants"):
        capture_generalized(problem)


@pytest.mark.interpreter
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_generated_modules_pass_the_referee(path, tmp_path):
    verdict = judge(path, make_module(path), tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"
    assert {c.variant for c in verdict.cases if not c.refused} >= {"small", "odd"}
