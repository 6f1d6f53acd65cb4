"""Sizes as polynomials of input dims (capture/polyfit.py): what the fit finds, what it must refuse, how a
polynomial SizeExpr evaluates and renders, and a last-step slice (offset (seq - 1) · hidden) that captures,
generates and passes the referee under the interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from helpers import make_module, prepared, verify
from kerntailor.capture.generalize import Dim, SizeExpr
from kerntailor.capture.polyfit import fit_polynomial
from kerntailor.codegen.sizes import canon, host_value_is_float, same

B, S, H = Dim(0, 0), Dim(0, 1), Dim(0, 2)
NAMES = {B: "d0", S: "d1", H: "d2"}
ONE = Fraction(1)
DATA = Path(__file__).parent / "data" / "polysize"
LAST_STEP = DATA / "last_step.py"     # relu(x[:, -1, :]) * 2, x (B, S, H)
LAST_THREE = DATA / "last_three.py"   # x[:, -3:, :].mean(1)
LAST_THREE_2D = DATA / "last_three_2d.py"   # x[:, -3:].sum(1), x (B, S): a monomial offset S - 3

# the LSTM's (S, H) in its default, small and odd variants (level3/38_LSTMBidirectional), and a batch
LSTM = {B: [10, 2, 3], S: [512, 32, 31], H: [256, 64, 63]}


def _values(f, columns: dict[Dim, list[int]]) -> list[int]:
    n = len(next(iter(columns.values())))
    return [f(*(columns[d][i] for d in (B, S, H))) for i in range(n)]


def test_the_offset_of_a_bidirectional_lstms_last_step_is_found():
    values = _values(lambda b, s, h: (s - 1) * 2 * h, LSTM)
    assert values == [261632, 3968, 3780]    # what 38_LSTMBidirectional's fc reads from
    e = fit_polynomial(values, [B, S, H], LSTM)
    assert e == SizeExpr(Fraction(2), ((S, ONE), (H, ONE)), Fraction(0), ((Fraction(-2), ((H, ONE),)),))
    assert e.render(NAMES) == "2 * d1 * d2 - 2 * d2"
    # at sizes no variant had, the expression and its host text agree with the truth
    assert e.evaluate({B: 7, S: 1000, H: 33}) == 999 * 66
    assert eval(e.render(NAMES), {}, {"d0": 7, "d1": 1000, "d2": 33}) == 999 * 66   # noqa: S307


def test_a_term_times_a_size_plus_any_constant_and_three_terms_over_four_variants():
    cols = {d: v + [w] for (d, v), w in zip(LSTM.items(), (5, 37, 65))}   # with a fourth variant (the probe's)
    e = fit_polynomial(_values(lambda b, s, h: s * h - 5, cols), [B, S, H], cols)
    assert e is not None and e.offset == -5 and not e.more and e.render(NAMES) == "d1 * d2 - 5"
    # three unknowns need four variants: B·S·H - S·H + H·H (x[-1]'s offset next to a square)
    e = fit_polynomial(_values(lambda b, s, h: b * s * h - s * h + h * h, cols), [B, S, H], cols)
    assert e is not None and e.evaluate({B: 11, S: 13, H: 17}) == 11 * 13 * 17 - 13 * 17 + 17 * 17


def test_two_polynomials_the_variants_cannot_tell_apart_are_refused():
    tiny = {B: [4, 2, 3, 5], S: [6, 3, 5, 7], H: [8, 4, 7, 9]}
    values = _values(lambda b, s, h: b * s * h - s * h + h * h, tiny)
    assert values == _values(lambda b, s, h: s * s * h - 2 * h * h + 6 * h, tiny)   # agree on all four
    assert fit_polynomial(values, [B, S, H], tiny) is None


def test_a_size_and_its_multiple_are_one_column():
    # H and a weight's 4·H rows (two dims of the LSTM): 2·S·H - 2·H, not also S·(4H)/2 - (4H)/2
    four_h = Dim(1, 0)
    cols = LSTM | {four_h: [4 * h for h in LSTM[H]]}
    e = fit_polynomial(_values(lambda b, s, h: (s - 1) * 2 * h, LSTM), [B, S, four_h, H], cols)
    assert e is not None and e.dims == (S, H)


def test_too_few_variants_to_determine_a_polynomial_is_refused():
    # three unknowns over three variants: some choice of three columns always solves, none can be refuted
    values = _values(lambda b, s, h: b * s * h - s * h + 7, LSTM)
    assert fit_polynomial(values, [B, S, H], LSTM) is None
    # two variants: not even two unknowns
    two = {d: v[:2] for d, v in LSTM.items()}
    assert fit_polynomial(values[:2], [B, S, H], two) is None


def test_the_odd_variant_refutes_a_wrong_fit():
    values = _values(lambda b, s, h: (s - 1) * h, LSTM)
    values[2] += 1   # (S - 1)·H on default and small, one off on odd
    assert fit_polynomial(values, [B, S, H], LSTM) is None
    assert fit_polynomial([1.5, 2.5, 3.5], [B, S, H], LSTM) is None   # floats are not sizes


def test_a_polynomial_is_no_monomial_to_codegen():
    e = SizeExpr(Fraction(1), ((S, ONE), (H, ONE)), Fraction(0), ((Fraction(-1), ((H, ONE),)),))
    head = SizeExpr(Fraction(1), ((S, ONE), (H, ONE)))
    assert not e.is_constant and e.dims == (S, H)
    assert canon(e) is None and not same(e, head)   # never merged with S·H, never a product or a quotient
    assert not host_value_is_float(e)
    assert e.render(NAMES) == "d1 * d2 - d2" and e.evaluate({S: 5, H: 7}) == 28


@pytest.mark.capture
def test_last_step_slice_offset_is_fitted_as_a_polynomial():
    _, _, gen, plan = prepared(LAST_STEP)
    offsets = [e for p, e in gen.exprs if p[-1] == "offset"]
    assert offsets == [SizeExpr(ONE, ((S, ONE), (H, ONE)), Fraction(0), ((Fraction(-1), ((H, ONE),)),))]
    assert not any(g.family == "library" for g in plan.groups)


@pytest.mark.interpreter
def test_last_step_slice_passes_the_referee(tmp_path):
    module = make_module(LAST_STEP)   # gfx942 (mi300x)
    assert "d1 * d2 - d2" in module.source   # the offset computed on the host from x's shape
    verify(LAST_STEP, module, tmp_path)


def test_only_an_offset_that_can_go_negative_is_checked():
    from kerntailor.codegen.guards import _never_negative

    def poly(*terms, offset=0):
        (c, f), *more = [(Fraction(c), tuple((d, ONE) for d in f)) for c, f in terms]
        return SizeExpr(c, f, Fraction(offset), tuple(more))

    assert _never_negative(poly((2, (S, H)), (-2, (H,))))           # the last step: 2·H·(S - 1)
    assert not _never_negative(poly((1, (S, H)), (-3, (H,))))       # the last three steps: H·(S - 3)
    assert not _never_negative(poly((1, (S, H)), (-1, (B,))))       # S·H - B: B does not divide S·H
    assert _never_negative(poly((1, (B, S, H)), (-1, (S, H)), (1, (H,)), offset=-1))
    assert not _never_negative(poly((1, (B, S, H)), (-1, (S, H)), (1, (H,)), offset=-2))


@pytest.mark.interpreter
def test_last_three_steps_refuse_a_shorter_sequence_by_name(tmp_path):
    module = make_module(LAST_THREE)
    assert "if d1 * d2 - 3 * d2 < 0:" in module.source and "a view of x starts at element" in module.source
    assert " < 0:" not in make_module(LAST_STEP).source   # (S - 1)·H never is
    # the referee's edge cases shrink seq below 3 (edge:rows): a named refusal, not a read before x
    verify(LAST_THREE, module, tmp_path, edges=True)


RUN_SHORT = """
import importlib.util, json, sys, torch
spec = importlib.util.spec_from_file_location("kernel", sys.argv[1])
kernel = importlib.util.module_from_spec(spec); spec.loader.exec_module(kernel)
x = torch.randn(3, int(sys.argv[2]))
try:
    print(json.dumps(["returned", bool(torch.allclose(kernel.ModelNew()(x), x[:, -3:].sum(1)))]))
except ValueError as e:
    print(json.dumps(["ValueError", str(e)]))
"""


@pytest.mark.interpreter
def test_a_monomial_offset_of_the_last_three_columns_refuses_two_columns(tmp_path):
    # x[:, -3:].sum(1) on (B, S): offset S - 3. At S = 2 the kernel once summed the wrong elements silently
    module = make_module(LAST_THREE_2D)
    assert "if d1 - 3 < 0:" in module.source
    (tmp_path / "kernel.py").write_text(module.source)
    (tmp_path / "run.py").write_text(RUN_SHORT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    got = {}
    for seq in (2, 4):
        run = subprocess.run([sys.executable, "run.py", "kernel.py", str(seq)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        got[seq] = json.loads(run.stdout.strip().splitlines()[-1])
    assert got[4] == ["returned", True]
    assert got[2] == ["ValueError", "a view of x starts at element -1: this kernel was generated for sizes where a "
                                    "slice of a fixed length fits its axis (x[:, -k:] needs k steps); generate the "
                                    "kernel at these sizes"]
