"""The referee's parts, without running a candidate: tolerance table and comparison, draws, poison, checks.
Unit tier: CPU, no interpreter."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import torch

from kerntailor.problem import load_problem
from kerntailor.verify import checks as C
from kerntailor.verify.draws import DISTRIBUTIONS, SPECIAL, draw_inputs, draw_names, special_values
from kerntailor.verify.poison import GARBAGE_BYTE, NAN_BYTE, poison_value, poisoned_allocations
from kerntailor.verify.tolerance import (
    TOLERANCES,
    compare,
    flatten_outputs,
    native_specials,
    policy_dtype,
    relax,
    side_with_float64,
    side_with_native,
    special_reference,
    tolerance_for,
)

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "candidates" / "problems"


def _tf32(t: torch.Tensor) -> torch.Tensor:
    """fp32 -> tf32 by truncation (what the tensor cores do with fp32 operands)."""
    return (t.contiguous().view(torch.int32) & ~0x1FFF).view(torch.float32)


# ---- the table ----

def test_table_rows_are_ordered_by_precision():
    t = TOLERANCES
    assert t["fp64"].norm < t["fp32"].norm < t["tf32"].norm <= t["bf16"].norm
    assert t["fp32"].norm < t["fp16"].norm < t["bf16"].norm
    assert tolerance_for(torch.float32) is t["fp32"]
    assert tolerance_for(torch.float32, tf32=True) is t["tf32"]
    assert tolerance_for(torch.bfloat16, tf32=True) is t["bf16"]   # tf32 loosens fp32 only
    assert tolerance_for(None).policy == "exact"
    assert policy_dtype([torch.float32, torch.bfloat16, torch.int64]) is torch.bfloat16
    assert policy_dtype([torch.int64]) is None


def test_exact_answer_passes_and_zeros_fail_on_a_near_zero_answer():
    ref = torch.randn(64, 512, dtype=torch.float64).mean(dim=1)        # ~0.04: zeros are "close"
    assert compare(ref.float(), ref, TOLERANCES["fp32"]).problem is None
    zeros = compare(torch.zeros(64), ref, TOLERANCES["fp32"])
    assert zeros.problem == "accuracy" and zeros.rel_norm == pytest.approx(1.0)


def test_nan_never_passes_and_inf_only_where_the_reference_has_it():
    ref = torch.randn(100, dtype=torch.float64)
    out = ref.float().clone()
    out[7] = float("nan")
    c = compare(out, ref, TOLERANCES["fp32"])
    assert c.problem == "nan" and c.where == (7,)
    out = ref.float().clone()
    out[3] = float("inf")
    assert compare(out, ref, TOLERANCES["fp32"]).problem == "inf"
    ref_inf = ref.clone()
    ref_inf[3] = float("inf")
    assert compare(out, ref_inf, TOLERANCES["fp32"]).problem is None
    assert compare(ref.float(), ref_inf, TOLERANCES["fp32"]).problem == "inf"      # missing Inf
    big = ref.clone()
    big[5] = 1e300                                  # finite in fp64, Inf once rounded to fp32
    out = big.float()
    assert torch.isinf(out[5]) and compare(out, big, TOLERANCES["fp32"]).problem is None


def test_tf32_gemm_fails_fp32_and_passes_tf32_and_bf16_rounding_fails_fp32():
    torch.manual_seed(0)
    a, b = torch.randn(64, 96), torch.randn(96, 48)
    ref = a.double() @ b.double()
    tf32 = (_tf32(a).double() @ _tf32(b).double()).float()
    assert compare(tf32, ref, TOLERANCES["fp32"]).problem == "accuracy"
    assert compare(tf32, ref, TOLERANCES["tf32"]).problem is None
    assert compare(ref.float(), ref, TOLERANCES["fp32"]).problem is None
    low = (a.bfloat16().double() @ b.bfloat16().double()).float()
    assert compare(low, ref, TOLERANCES["fp32"]).problem == "accuracy"
    assert compare(ref.bfloat16(), ref, TOLERANCES["bf16"]).problem is None
    assert compare(ref.half(), ref, TOLERANCES["fp16"]).problem is None


def test_integer_outputs_must_match_exactly():
    ref = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert compare(torch.tensor([1, 2, 3]), ref, TOLERANCES["exact"]).problem is None
    assert compare(torch.tensor([1, 2, 4]), ref, TOLERANCES["exact"]).problem == "accuracy"


def test_relax_widens_only_to_a_multiple_of_a_clean_eager_error():
    tol = TOLERANCES["bf16"]
    ref = torch.randn(1000, dtype=torch.float64)
    clean = compare(ref.bfloat16(), ref, tol)
    assert relax(tol, clean) is tol                           # well-conditioned: the table rules
    noisy = compare((ref * (1 + 0.05 * torch.randn(1000, dtype=torch.float64))).float(), ref, tol)
    wide = relax(tol, noisy)
    assert wide.norm == pytest.approx(4 * noisy.rel_norm) and wide.rtol > tol.rtol
    bad = ref.float().clone()
    bad[0] = float("nan")
    assert relax(tol, compare(bad, ref, tol)) is tol          # a NaN never widens anything


@pytest.mark.parametrize("path, dtype", [
    (TINY / "softmax_rows.py", None), (TINY / "layernorm_small.py", "bf16"), (TINY / "linear_small.py", "fp16"),
    (ROOT / "problems/level1/softmax_long_rows.py", "bf16"), (ROOT / "problems/level1/rmsnorm.py", None),
    (ROOT / "problems/level1/matmul_square.py", "bf16"), (ROOT / "problems/level1/cross_entropy.py", "fp16"),
])
def test_pytorch_itself_passes_the_table_on_regular_draws(path, dtype):
    """The table is not tighter than PyTorch: the reference in its own dtype vs float64 passes its row."""
    if not path.exists():
        pytest.skip(f"{path.name} not in this checkout")
    problem = load_problem(path, dtype=dtype)
    variant = "small"
    model = problem.make_model(variant, "cpu", 1)
    for dist in ("normal", "uniform"):
        inputs = draw_inputs(problem, variant, dist, 3, "cpu")
        with torch.no_grad():
            out = flatten_outputs(model(*inputs))
            ref = flatten_outputs(copy.deepcopy(model).double()(
                *[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]))
        floats = [x.dtype for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
        for o, r in zip(out, ref):
            tol = tolerance_for(policy_dtype(floats + [o.dtype]))
            c = compare(o, r, tol)
            assert c.problem is None, (path.name, dist, c.detail)
            assert c.rel_norm < tol.norm / 2, (path.name, dist, c.rel_norm)


# ---- draws ----

def test_draws_cycle_distributions_and_keep_shape_dtype_stride():
    assert draw_names(3) == DISTRIBUTIONS
    assert draw_names(5) == ("normal", "uniform", "outliers", "normal#2", "uniform#2")
    problem = load_problem(TINY / "softmax_rows.py")
    base = problem.make_inputs("odd", "cpu", 0)[0]
    seen = []
    for dist in DISTRIBUTIONS:
        x = draw_inputs(problem, "odd", dist, 11, "cpu")[0]
        assert x.shape == base.shape and x.dtype == base.dtype and x.stride() == base.stride()
        assert bool((x != 0).any()) and not torch.equal(x, base)
        seen.append(x)
    assert float(seen[1].abs().max()) <= 1.0                      # uniform in (-1, 1)
    assert float(seen[2].abs().max()) >= 10.0                     # outliers
    assert torch.equal(draw_inputs(problem, "odd", "normal", 11, "cpu")[0], seen[0])   # seeded


def test_draws_keep_the_domain_and_the_structure(tmp_path):
    src = tmp_path / "domains.py"
    src.write_text('''
import torch
import torch.nn as nn
n = 64
VARIANTS = {"small": {"n": 32}, "odd": {"n": 33}}
class Model(nn.Module):
    def forward(self, p, q, labels, mask, k):
        return torch.log(p).sum() + q.sqrt().sum() + labels.sum() + mask.sum() * k
def get_inputs():
    return [torch.rand(n), torch.rand(n) * 5, torch.randint(0, 3, (n,)), (torch.rand(n) > 0.5).float(), 3]
def get_init_inputs():
    return []
''')
    problem = load_problem(src)
    base = problem.make_inputs("default", "cpu", 4)
    for dist in DISTRIBUTIONS:
        p, q, labels, mask, k = draw_inputs(problem, "default", dist, 4, "cpu")
        assert 0 <= float(p.min()) and float(p.max()) <= 1            # unit interval stays there
        assert float(q.min()) >= 0                                     # non-negative stays non-negative
        assert torch.equal(labels, base[2]) and torch.equal(mask, base[3]) and k == 3   # structure kept
        assert torch.equal(labels, base[2]) and torch.equal(mask, base[3]) and k == 3   # structure kept
    p, q, labels, mask, k = draw_inputs(problem, "default", SPECIAL, 4, "cpu")
    assert torch.equal(labels, base[2]) and torch.equal(mask, base[3]) and k == 3   # no NaN in a mask or labels
    for t, domain in ((p, "unit"), (q, "nonneg")):
        finite = t[torch.isfinite(t)]
        assert float(finite.min()) >= 0 and (domain == "nonneg" or float(finite.max()) <= 1)
        assert not bool(torch.isneginf(t).any()) and (domain == "nonneg" or not bool(torch.isinf(t).any()))


def test_special_draw_places_every_kind_in_a_small_fraction_seeded():
    problem = load_problem(TINY / "softmax_rows.py")
    base = problem.make_inputs("default", "cpu", 3)[0]
    x = draw_inputs(problem, "default", SPECIAL, 3, "cpu")[0]
    assert x.shape == base.shape and x.dtype == base.dtype and x.stride() == base.stride()
    assert torch.equal(draw_inputs(problem, "default", SPECIAL, 3, "cpu")[0].nan_to_num(7.0), x.nan_to_num(7.0))
    values = special_values(torch.float32, "real")
    big = torch.randn(512, 512)   # many elements: every kind appears, about 1 in 64 elements special
    from kerntailor.verify.draws import _redraw
    g = torch.Generator().manual_seed(0)
    y = _redraw(big, SPECIAL, g)
    special = torch.isnan(y) | torch.isinf(y) | (y == 0) | (y.abs() > 1e14) | (y.abs() < 1e-14)
    assert 0.01 < float(special.float().mean()) < 0.02
    assert bool(torch.isnan(y).any()) and bool(torch.isposinf(y).any()) and bool(torch.isneginf(y).any())
    assert bool((torch.signbit(y) & (y == 0)).any()) and bool((~torch.signbit(y) & (y == 0)).any())
    for v in values[5:]:   # ±huge, ±tiny: in the draw; a product of two is finite and normal in the dtype
        assert bool((y == torch.tensor(v, dtype=torch.float32)).any())
        assert torch.finfo(torch.float32).tiny <= v * v < torch.finfo(torch.float32).max
    half = special_values(torch.float16, "real")
    finite = [abs(v) for v in half if v == v and abs(v) != float("inf") and v != 0]
    assert finite and all(6.1e-5 <= v * v < 65504 for v in finite)   # fp16 too


def test_special_draw_puts_every_kind_in_a_small_tensor_and_as_many_as_fit_in_a_tiny_one():
    # 5 x 37 (relu_small's odd variant): at the 1/64 rate alone, P(no NaN) = 0.72 (a NaN-dropping ReLU passed
    # the special draw on the H200 that way, 2026-12-02)
    from kerntailor.verify.draws import _redraw
    values = torch.tensor(special_values(torch.float32, "real"), dtype=torch.float32)
    for seed in range(20):
        y = _redraw(torch.randn(5, 37), SPECIAL, torch.Generator().manual_seed(seed))
        assert bool(torch.isnan(y).any()) and bool(torch.isposinf(y).any()) and bool(torch.isneginf(y).any())
        for v in values[3:]:
            hits = (y == v) & (torch.signbit(y) == torch.signbit(v))
            assert bool(hits.any()), (seed, float(v))
    tiny = _redraw(torch.randn(4), SPECIAL, torch.Generator().manual_seed(0))
    assert int((torch.isnan(tiny) | torch.isinf(tiny)).sum()) == 3 and int((tiny == 0).sum()) == 1   # the first 4 kinds
    assert bool(torch.isnan(tiny).any()) and bool(torch.isposinf(tiny).any()) and bool(torch.isneginf(tiny).any())


def test_special_reference_takes_pytorchs_nan_and_inf_and_float64_elsewhere():
    ref64 = torch.tensor([1.0, 2.0, 1e60, 3.0, float("nan")], dtype=torch.float64)
    native = torch.tensor([1.0, float("nan"), float("inf"), 3.0001, 5.0])   # fp32 overflow, a NaN PyTorch gives
    r = special_reference(ref64, native)
    assert r.dtype == torch.float64
    assert r[0] == 1.0 and bool(torch.isnan(r[1])) and r[2] == float("inf") and r[3] == 3.0 and r[4] == 5.0
    ints = torch.tensor([1, 2])
    assert special_reference(ints, ints) is ints


def test_where_pytorch_disagrees_with_itself_either_answer_passes():
    """CPU fp32 gelu(+Inf) is NaN on PyTorch's vectorized path, +Inf in float64: a candidate giving either passes;
    one giving neither (a finite number) fails."""
    tol = TOLERANCES["fp32"]
    x = torch.tensor([float("inf"), 1.0] * 8)
    native = torch.nn.functional.gelu(x)
    ref64 = torch.nn.functional.gelu(x.double())
    ref = special_reference(ref64, native)
    for out in (native, ref64.float()):
        assert compare(out, side_with_float64(ref, ref64, out), tol, same_nan=True).problem is None
    wrong = torch.where(torch.isinf(x), 3.0, ref64.float())
    assert compare(wrong, side_with_float64(ref, ref64, wrong), tol, same_nan=True).problem is not None


def test_on_any_draw_a_nan_or_inf_pytorch_gives_in_its_own_dtype_passes_where_float64_differs():
    """scan_row_end on the H100 (2026-12-05, the rows case: 10^6 factors below 1 a row): keep = cumprod(f) reaches 0
    in fp32 after ~2,300 factors, so keep / keep[-1] is 0 / 0 = NaN in PyTorch's own fp32 where float64 gives
    tiny / 0 = Inf; a kernel computing in fp32 gave PyTorch's NaN and failed. Either answer passes now; a finite
    number there still fails, and where PyTorch's own dtype agrees with float64 nothing changes."""
    tol = TOLERANCES["fp32"]
    f = torch.full((4000,), 0.97, dtype=torch.float64)
    keep64 = torch.cumprod(f, 0)
    ref64 = keep64 / 0.0 * torch.sign(keep64)                     # the row end underflowed: x / 0
    ref64 = torch.cat([ref64, torch.tensor([2.0], dtype=torch.float64)])
    keep = torch.cumprod(f.float(), 0)
    native = torch.cat([keep / torch.zeros_like(keep), torch.tensor([2.0])])   # Inf, then 0 / 0 = NaN
    assert bool(torch.isnan(native).any()) and not bool(torch.isnan(ref64).any())
    assert native_specials(native, ref64)
    assert compare(native, ref64, tol).problem == "nan"          # judged against float64 alone: a false failure
    for out in (native, ref64.float()):
        assert compare(out, side_with_native(ref64, native, out), tol).problem is None
    wrong = torch.where(torch.isnan(native), 5.0, native)         # finite where both give a special value
    assert compare(wrong, side_with_native(ref64, native, wrong), tol).problem == "inf"
    off = native.clone()
    off[-1] = 2.5                                                 # a finite element stays judged
    assert compare(off, side_with_native(ref64, native, off), tol).problem == "accuracy"
    same = torch.tensor([1.0, float("inf")])
    assert not native_specials(same, torch.tensor([1.0, float("inf")], dtype=torch.float64))
    assert not native_specials(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0], dtype=torch.float64))


def test_same_nan_asks_for_nan_where_the_reference_has_it():
    tol = TOLERANCES["fp32"]
    ref = torch.tensor([float("nan"), 1.0, float("inf"), 2.0], dtype=torch.float64)
    right = torch.tensor([float("nan"), 1.0, float("inf"), 2.0])
    assert compare(right, ref, tol, same_nan=True).problem is None
    dropped = torch.tensor([0.0, 1.0, float("inf"), 2.0])
    assert compare(dropped, ref, tol).problem is None   # the regular draws never see a NaN reference
    c = compare(dropped, ref, tol, same_nan=True)
    assert c.problem == "nan" and c.where == (0,) and "not NaN where the reference is NaN" in c.detail
    assert compare(torch.tensor([float("nan"), 1.0, 3.0, 2.0]), ref, tol, same_nan=True).problem == "inf"
    assert compare(torch.tensor([float("nan"), float("nan"), float("inf"), 2.0]), ref, tol,
                   same_nan=True).problem == "nan"


# ---- poison and the tensor checks ----

def test_poisoned_allocations_fill_and_restore():
    empty = torch.empty
    with poisoned_allocations(NAN_BYTE):
        assert torch.isnan(torch.empty(4)).all()
        assert torch.isnan(torch.empty_like(torch.ones(2, 3, dtype=torch.bfloat16))).all()
        assert (torch.empty(3, dtype=torch.int32) == -1).all()
        assert torch.isnan(torch.ones(1).new_empty(5)).all()
        assert torch.isnan(torch.empty_strided((2, 2), (1, 2))).all()
    with poisoned_allocations(GARBAGE_BYTE):
        assert torch.isfinite(torch.empty(4, dtype=torch.float16)).all()
    assert torch.empty is empty
    assert poison_value(torch.float32, GARBAGE_BYTE).item() == pytest.approx(48.5647, rel=1e-4)


def test_unwritten_needs_the_poison_in_both_runs():
    with poisoned_allocations(NAN_BYTE):
        r1 = torch.empty(10)
    with poisoned_allocations(GARBAGE_BYTE):
        r2 = torch.empty(10)
    r1[:7], r2[:7] = 1.0, 1.0
    assert C.unwritten(r1, r2) == (3, (7,))
    r1[7:] = float("nan")                       # a computed NaN is not the poison pattern... unless bitwise equal
    r2[7:] = 2.0
    assert C.unwritten(r1, r2) is None
    assert C.unwritten(torch.ones(3), torch.ones(3)) is None


def test_disagreement_aliasing_mutation_and_structure():
    ref = torch.randn(50, dtype=torch.float64)
    a = ref.float()
    tol = TOLERANCES["fp32"]
    assert C.disagreement(a, a.clone(), ref, tol) is None
    b = a.clone()
    b[4] += 1.0
    assert "differ in 1 elements" in C.disagreement(a, b, ref, tol)
    c = a.clone()
    c[1] = float("nan")
    assert C.disagreement(a, c, ref, tol) is not None
    x = torch.randn(4)
    assert C.aliased([x.view(2, 2)], [x]) == (0, 0)
    assert C.aliased([x.clone()], [x]) is None
    y = x.clone()
    y[0] += 1
    assert C.changed_inputs([y], [x]) == 0 and C.changed_inputs([x.clone()], [x]) is None
    specs = C.output_specs([torch.ones(2, 3)])
    assert C.check_structure([torch.ones(2, 3)], specs) is None
    assert "shape" in C.check_structure([torch.ones(3, 2)], specs)
    assert "dtype" in C.check_structure([torch.ones(2, 3, dtype=torch.float64)], specs)
    assert "2 output(s)" in C.check_structure([torch.ones(2, 3)] * 2, specs)
    # a reference the judge ran on the host (its fallback) answers for the candidate's device
    moved = C.output_specs([torch.ones(2, 3)], device=torch.device("meta"))
    assert C.check_structure([torch.ones(2, 3, device="meta")], moved) is None
    assert "is on cpu, the reference's on meta" in C.check_structure([torch.ones(2, 3)], moved)


# ---- events -> verdict (the parent side), including the speed check ----

def _timing(candidate_s: float, physics_s: float) -> dict:
    row = dict(name="candidate", median_s=candidate_s, q1_s=candidate_s, q3_s=candidate_s, min_s=candidate_s,
               max_s=candidate_s, iqr_s=0.0, runs=10, time_over_floor=1.0, pct_of_roofline=100.0)
    return dict(device_name="Fake GPU", torch_version="x", triton_version="y", date="2026-11-29",
                timings=[row, {**row, "name": "eager"}], floor_s=physics_s * 1.1, physics_floor_s=physics_s,
                physics_source="datasheet", flops=0.0, min_bytes=1, dtype="fp32", matrix=False,
                ceilings={"copy_bandwidth": 4e12, "matmul_flops": {"fp32": 5e13}}, input_sets=1,
                compile_mode="default", notes=[])


def _assemble(events, ended="ok", tail=""):
    from kerntailor.verify.referee import assemble
    from kerntailor.verify.verdict import VerifySettings

    base = dict(problem="p", candidate="c.py", mode="gpu cuda:0", tolerance="fp32")
    return assemble(events, ended, tail, base, ["default"], [], VerifySettings(time=True, timeout_s=7),
                    False, 1.0)


CASE = dict(event="case", variant="default", draw="normal", rel_norm=1e-7, max_abs=1e-7, max_rel=1e-7,
            policy="fp32")
DONE = dict(event="done", checks=["static", "accuracy"])


def test_assemble_pass_speed_and_physics():
    from kerntailor.verify import render_verdict

    ok = _assemble([CASE, DONE, dict(event="timing", report=_timing(2e-6, 1e-6))])
    assert ok.passed and ok.checks[-1] == "speed" and ok.timing["device_name"] == "Fake GPU"
    assert "measured on Fake GPU" in render_verdict(ok)
    fast = _assemble([CASE, DONE, dict(event="timing", report=_timing(0.5e-6, 1e-6))])
    assert not fast.passed and fast.check == "speed" and fast.reason.startswith("suspect: faster than physics")


def test_assemble_timeout_crash_and_bad_candidate():
    from kerntailor.errors import CandidateError

    progress = dict(event="progress", variant="small", draw="uniform", step="run 2")
    hung = _assemble([progress], ended="timeout")
    assert hung.check == "timeout" and "7 s" in hung.reason and "run 2" in hung.reason
    assert (hung.variant, hung.draw) == ("small", "uniform")
    died = _assemble([progress], ended="signal 11", tail="Segmentation fault")
    assert died.check == "crash" and "SIGSEGV" in died.reason and "\n" not in died.reason
    with pytest.raises(CandidateError, match="no module"):
        _assemble([dict(event="bad_candidate", reason="importing the candidate raised no module")])


# --- the judge's deadline: waiting for the GPU's lock is not the candidate's time ------------------------------

def test_deadline_moves_by_the_wait_for_the_gpu_lock():
    from kerntailor.verify.referee import Deadline

    d = Deadline(120.0, now=0.0)
    events = [{"event": "progress", "step": "construct"}, {"event": "lock_wait"}]
    d.observe(events, now=10.0)
    assert not d.expired(now=500.0)              # queued behind another job: not a hang
    events.append({"event": "lock_held"})
    d.observe(events, now=510.0)                 # waited 500 s: the limit is now 620 s from the start
    assert not d.expired(now=619.0) and d.expired(now=621.0)


def test_deadline_charges_the_candidate_once_the_lock_is_held_and_caps_the_wait():
    from kerntailor.verify.referee import Deadline

    d = Deadline(120.0, now=0.0, max_wait_s=300.0)
    d.observe([{"event": "lock_held"}], now=5.0)   # no wait announced: nothing credited
    assert d.expired(now=121.0)
    d = Deadline(120.0, now=0.0, max_wait_s=300.0)
    d.observe([{"event": "lock_wait"}], now=0.0)
    assert not d.expired(now=299.0) and d.expired(now=301.0)   # a wait past the cap ends the judge
    d.observe([{"event": "lock_wait"}, {"event": "lock_held"}], now=1000.0)
    assert d.at == 420.0                                        # credited at most the cap


def test_phase_seconds_charges_each_interval_to_the_step_it_was_in():
    """The judge's wall time split by the arrival times of its events: start until the first progress, each
    step after, and the GPU-lock queue apart from the step that waited (resumed after lock_held)."""
    from kerntailor.verify.referee import ARRIVED, phase_seconds

    def ev(t, **kw):
        return {**kw, ARRIVED: t}

    events = [ev(2.0, event="progress", step="construct"),
              ev(3.0, event="lock_wait"), ev(7.0, event="lock_held"),
              ev(8.0, event="progress", step="reference"),
              ev(9.5, event="progress", step="run 1"), ev(10.0, event="progress", step="run 2"),
              {"event": "note"},   # no arrival stamp (not from the reader): ignored
              ev(11.0, event="lock_wait"), ev(11.5, event="progress", step="timing"), ev(12.0, event="lock_held")]
    got = phase_seconds(events, started=0.0, ended=15.0)
    assert got == {"start": 2.0, "construct": 2.0, "gpu lock wait": 5.0, "reference": 1.5, "run": 1.5,
                   "timing": 3.0}
    assert sum(got.values()) == pytest.approx(15.0)
    assert phase_seconds([], started=1.0, ended=4.0) == {"start": 3.0}
    # a long wait names the lock's holder as its note said when the wait began; a short one does not
    events = [ev(1.0, event="lock_wait", holder="pid 7 98_Matmul (fp32) (held 3 s)"), ev(61.0, event="lock_held"),
              ev(62.0, event="lock_wait", holder="pid 8 x"), ev(63.0, event="lock_held")]
    got = phase_seconds(events, started=0.0, ended=64.0)
    assert got["gpu lock wait"] == 61.0 and got["gpu lock wait behind pid 7 98_Matmul (fp32) (held 3 s)"] == 60.0
    assert not any("pid 8" in k for k in got)


def test_the_gpu_locks_note_names_its_holder_while_held(tmp_path, monkeypatch):
    """measure/gpulock.py: a note beside the lock file while it is held (the job's label), gone after."""
    from kerntailor.measure import gpulock

    monkeypatch.setattr(gpulock, "lock_path", lambda device: tmp_path / "gpu.lock")
    monkeypatch.setenv(gpulock.LABEL_ENV, "sdpa (bf16)")
    assert gpulock.holder(None) == ""
    with gpulock.gpu_lock(None):
        note = gpulock.holder(None)
        assert note.startswith(f"pid {os.getpid()} sdpa (bf16) (held ") and note.endswith(" s)")
    assert gpulock.holder(None) == ""


def test_the_gpu_lock_is_shared_by_correctness_work_and_exclusive_for_timing(tmp_path, monkeypatch):
    """measure/gpulock.py: shared holders (the referee's correctness cases) hold it at once; an exclusive holder
    (a timing, an edge case) holds it alone; and an exclusive waiter goes before the shared holders that come after
    it (the turnstile), so correctness work cannot starve a timing."""
    import fcntl
    import threading
    import time

    from kerntailor.measure import gpulock

    monkeypatch.setattr(gpulock, "lock_path", lambda device: tmp_path / "gpu.lock")
    monkeypatch.delenv(gpulock.LABEL_ENV, raising=False)   # generate sets it in this process (pipeline._start)
    order, inside = [], threading.Event()

    def hold(name, shared, seconds, ready=None):
        with gpulock.gpu_lock(None, shared=shared):
            order.append(f"{name} in")
            if ready is not None:
                ready.set()
            time.sleep(seconds)
            order.append(f"{name} out")

    first = threading.Thread(target=hold, args=("s1", True, 1.0, inside))
    first.start()
    inside.wait(5)
    second = threading.Thread(target=hold, args=("s2", True, 0.1))
    second.start()
    second.join(5)
    assert order[:3] == ["s1 in", "s2 in", "s2 out"]   # two shared holders at once
    note = gpulock.holder(None)
    assert note.startswith(f"pid {os.getpid()} (shared) (held ") and ";" not in note   # s2's note is gone
    timing = threading.Thread(target=hold, args=("x", False, 0.2))
    timing.start()
    turnstile = os.open(tmp_path / "gpu.lock.turn", os.O_RDWR | os.O_CREAT)
    for _ in range(500):   # until x waits for s1, holding the turnstile
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            time.sleep(0.01)
        except BlockingIOError:
            break
    os.close(turnstile)
    assert order[-1] == "s2 out"   # s1 still holds it: x waits
    late = threading.Thread(target=hold, args=("s3", True, 0.0))
    late.start()
    for t in (first, timing, late):
        t.join(5)
    assert order[3:] == ["s1 out", "x in", "x out", "s3 in", "s3 out"]   # x alone, and before s3 that came later
    assert gpulock.holder(None) == ""


def test_a_dead_holders_note_is_dropped(tmp_path, monkeypatch):
    """A note no holder flocks (its process died holding the lock: SIGKILL leaves the file) is not a holder."""
    from kerntailor.measure import gpulock

    monkeypatch.setattr(gpulock, "lock_path", lambda device: tmp_path / "gpu.lock")
    monkeypatch.delenv(gpulock.LABEL_ENV, raising=False)
    stale = tmp_path / f"gpu.lock{gpulock.NOTE}0123"
    stale.write_text("pid 1 dead (fp32) since 1.0")
    with gpulock.gpu_lock(None):
        assert gpulock.holder(None).startswith(f"pid {os.getpid()} (held ")
    assert not stale.exists() and gpulock.holder(None) == ""
