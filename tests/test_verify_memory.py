"""The referee within a memory budget (issue #14 item 5): the chunked comparison reports what the whole-tensor
one does, the judge's peak is a known multiple of the problem's tensors (counted by measure.memory.LiveBytes),
the float64 reference can live on the host, and a problem that cannot fit is refused in one line."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from kerntailor.measure import memory as M
from kerntailor.problem import load_problem
from kerntailor.verify import tolerance as T
from kerntailor.verify.tolerance import TOLERANCES, Tolerance, compare

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = Path(__file__).parent / "candidates"
WHOLE = 1 << 40   # a chunk budget larger than any tensor here: one chunk


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks and chunks of a few dozen elements, so that a test tensor spans many chunks."""
    monkeypatch.setattr(T, "BLOCK", 16)


def _both(out, ref, tol, chunk_elems=48):
    chunked = compare(out, ref, tol, chunk_bytes=chunk_elems * 8)
    whole = compare(out, ref, tol, chunk_bytes=WHOLE)
    return chunked, whole


def _same(a, b) -> None:
    """Every field equal, NaN equal to NaN."""
    assert a.problem == b.problem and a.detail == b.detail and a.where == b.where
    for x, y in ((a.rel_norm, b.rel_norm), (a.max_abs, b.max_abs), (a.max_rel, b.max_rel)):
        assert (x != x and y != y) or x == y, (x, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("scale", [1e-6, 1e-3, 1.0])   # from passing to failing on accuracy
def test_chunked_compare_equals_the_whole_tensor_compare(small_blocks, dtype, scale):
    g = torch.Generator().manual_seed(int(scale * 1e6) + len(str(dtype)))
    ref = torch.randn(7, 131, generator=g, dtype=torch.float64) * 3
    ref[0, :5] = 1e4                                                  # outliers set the RMS
    out = (ref * (1 + scale * torch.randn(ref.shape, generator=g, dtype=torch.float64))).to(dtype)
    tol = TOLERANCES[{torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[dtype]]
    chunked, whole = _both(out, ref, tol)
    _same(chunked, whole)
    if scale == 1.0:
        assert whole.problem == "accuracy"   # the comparison is not vacuous


def test_chunked_compare_on_nan_and_inf(small_blocks):
    ref = torch.linspace(-3, 3, 1000, dtype=torch.float64)
    ref[100], ref[900] = float("nan"), float("inf")    # NaN and Inf in the reference (where the output agrees)
    base = ref.to(torch.float32)
    _same(*_both(base, ref, TOLERANCES["fp32"]))        # passes, the NaN/Inf elements left out of the norms
    assert compare(base, ref, TOLERANCES["fp32"], chunk_bytes=48 * 8).problem is None
    nan = base.clone()
    nan[700], nan[701], nan[20] = float("nan"), float("nan"), float("nan")   # new NaN, two chunks apart
    c, w = _both(nan, ref, TOLERANCES["fp32"])
    _same(c, w)
    assert c.problem == "nan" and c.detail.startswith("4 NaN elements, first at (20,)")   # all of them
    inf = base.clone()
    inf[900] = float("-inf")                            # the wrong Inf
    c, w = _both(inf, ref, TOLERANCES["fp32"])
    _same(c, w)
    assert c.problem == "inf" and c.where == (900,)
    big = torch.full((500,), 1e39, dtype=torch.float64)  # overflows fp32: the reference rounds to Inf
    c, w = _both(torch.full((500,), float("inf")), big, TOLERANCES["fp32"])
    _same(c, w)
    assert c.problem is None


def test_chunked_compare_at_the_exact_boundary(small_blocks):
    """|ref| = 1 everywhere (rms exactly 1) and atol + rtol = 0.75 exactly: an element off by 0.75 passes, one
    off by 0.75 + 2^-20 fails, whichever chunk it is in."""
    tol = Tolerance("t", norm=10.0, rtol=0.5, atol=0.25)
    sign = torch.where(torch.arange(999) % 3 == 0, -1.0, 1.0).to(torch.float64)
    out = sign.clone()
    out[::7] += 0.75                                    # exactly on the bound: pass
    over = [i for i in range(5, 999, 97) if i % 7]
    out[over] -= 0.75 + 2 ** -20                         # just past it: fail
    c, w = _both(out, sign, tol)
    _same(c, w)
    assert c.problem == "accuracy" and c.detail.startswith(f"{len(over)} of 999 elements outside")


def test_chunked_compare_of_integers(small_blocks):
    ref = torch.arange(1000, dtype=torch.float64)
    out = torch.arange(1000, dtype=torch.int32)
    _same(*_both(out, ref, TOLERANCES["exact"]))
    out[[300, 800]] = -1
    c, w = _both(out, ref, TOLERANCES["exact"])
    _same(c, w)
    assert c.detail.startswith("2 of 1000 elements differ") and c.where == (300,)


def test_chunks_are_whole_blocks(small_blocks):
    assert T.chunk_elems(100 * 8) == 96 and T.chunk_elems(1) == 16
    assert T.chunk_elems(WHOLE) % 16 == 0


def test_live_bytes_counts_what_is_alive():
    with M.LiveBytes() as live:
        a = torch.empty(1000, dtype=torch.float64)     # 8000
        b = a[10:]                                      # a view: nothing new
        c = torch.empty(500, dtype=torch.float32)       # 2000: 10000 at once
        del a, b
        d = torch.empty(100, dtype=torch.float64)       # 800 after 8000 were freed
        del c, d
    assert live.peak == 10000 and live.now == 0


def test_footprint_counts_the_float64_reference():
    f = M.footprint(load_problem(ROOT / "problems/level1/layernorm.py"), "small")
    assert f.inputs64 == 2 * f.inputs and f.outputs64 == 2 * f.outputs
    assert f.forward >= f.outputs and f.forward64 >= f.outputs64


# --- the judge in this process, its candidate a stand-in that runs the reference ------------------------------

class _Events:
    """Records the judge's events, and LiveBytes' peak per step (the step a progress event names)."""

    def __init__(self):
        self.events, self.peaks, self.step, self.live = [], {}, "start", None

    def emit(self, **e):
        if e.get("event") == "progress" and self.live is not None:
            self._close()
            self.step = e["step"]
        self.events.append(e)

    def _close(self):
        self.peaks[self.step] = max(self.peaks.get(self.step, 0), self.live.peak)
        self.live.peak = self.live.now


class _StandIn:
    """The candidate process, replaced by the reference model run outside the byte counter (its memory is the
    candidate process's, not the judge's)."""

    ipc = False

    def __init__(self, problem, variant):
        self.problem, self.variant, self.chan = problem, variant, SimpleNamespace(max_bytes=0)

    def ship(self, value, where):
        return value

    def request(self, header, payload=None, where=None):
        from torch.utils._python_dispatch import _disable_current_modes

        from kerntailor.verify.channel import encode_values
        from kerntailor.verify.tolerance import flatten_outputs

        with _disable_current_modes():
            if header["op"] == "construct":
                self.model = self.problem.make_model(self.variant, "cpu")
                self.model.load_state_dict(payload["state"])
            elif header["op"] == "inputs":
                self.inputs = payload["inputs"]
            elif header["op"] == "run":
                with torch.no_grad():
                    outs = flatten_outputs(self.model(*[x.clone() for x in self.inputs]))
                descs, segments, _ = encode_values(outs, ipc=False)
                return ({"ok": True, "outputs": descs, "library": [], "aliased": None, "changed": None},
                        [bytearray(s) for s in segments])
        return {"ok": True}, []


def judge_peaks(problem, variant: str, memory: dict | None = None) -> tuple[dict[str, int], int]:
    """({step: the most bytes the judge's own tensors held beyond the inputs and parameters}, I + P + O in
    bytes) for one case (the first draw) of `variant` on the CPU."""
    from kerntailor.verify.draws import draw_inputs
    from kerntailor.verify.judge import Judge

    events = _Events()
    job = dict(problem=problem, device="cpu", tf32=False, memory=memory, seed=0)
    judge = Judge(job, events, _StandIn(problem, variant))
    model = problem.make_model(variant, "cpu", 1)
    judge.construct(variant, model, 1)
    inputs = draw_inputs(problem, variant, "normal", 1, torch.device("cpu"))
    f = M.footprint(problem, variant)
    with M.LiveBytes(list(inputs) + list(model.parameters()) + list(model.buffers())) as live:
        events.live = live
        judge.case(model, variant, "normal", inputs, 1, first=True)
        events._close()
    assert any(e.get("event") == "case" for e in events.events), events.events[-3:]
    return events.peaks, f.inputs + f.parameters + f.outputs


@pytest.mark.parametrize("path, variant", [("problems/level1/layernorm.py", "small"),
                                           ("problems/level2/gemm_bias_relu.py", "small"),
                                           ("problems/level1/softmax_long_rows.py", "small")])
def test_the_judges_peak_is_the_float64_reference(path, variant):
    """What the module docstring of measure/memory.py reports: the judge's peak is its float64 reference step
    (float64 copies of the model and the inputs, the forward in float64), and it stays within the terms the
    plan counts for it (measure.memory._needs)."""
    problem = load_problem(ROOT / path)
    peaks, tensors = judge_peaks(problem, variant)
    f = M.footprint(problem, variant)
    assert max(peaks, key=peaks.get) == "reference"
    device, _ = M._needs(f, "device", "device", gpu=False)
    candidate = f.parameters + 2 * f.inputs + f.forward + 2 * f.outputs   # the stand-in is not counted here
    assert f.inputs + f.parameters + max(peaks.values()) <= device - candidate - 2 * M.PROCESS_BYTES


# --- refusal ------------------------------------------------------------------------------------------------

def _cli(*args, env_budget: str, home: Path):
    env = {**os.environ, M.BUDGET_ENV: env_budget, "KERNTAILOR_HOME": str(home),
           "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "kerntailor", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


@pytest.mark.integration
def test_verify_refuses_a_problem_over_the_budget_in_one_line(tmp_path):
    r = _cli("verify", "problems/level1/layernorm.py", str(CANDIDATES / "ok_layernorm.py"), env_budget="1MB",
             home=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kerntailor: error: layernorm: too big to verify here: needs ~")
    assert "the host has 0.0 GB free" in lines[0] and "Traceback" not in r.stderr


@pytest.mark.integration
def test_generate_refuses_before_touching_the_output_or_the_store(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    # an earlier result of this problem (with the report that names it: --out's owner check lets it be replaced)
    earlier = {"kernel.py": "# an earlier result\n",
               "report.json": json.dumps({"problem": "layernorm",
                                          "path": str((ROOT / "problems/level1/layernorm.py").resolve())})}
    for name, text in earlier.items():
        (out / name).write_text(text)
    r = _cli("generate", "problems/level1/layernorm.py", "--target", "mi300x", "--out", str(out),
             env_budget="1MB", home=tmp_path / "home")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().startswith("kerntailor: error: layernorm: too big to verify here")
    assert len(r.stderr.strip().splitlines()) == 1
    assert {name: (out / name).read_text() for name in os.listdir(out)} == earlier
    assert not (tmp_path / "home").exists()


def _three(path: str) -> tuple[object, int, int, int]:
    problem = load_problem(ROOT / path)
    f = M.footprint(problem, "default")
    needs = [M._needs(f, reference, keep, gpu=True)[0] for reference, keep in M.PLANS]   # special: on "small"
    assert needs[0] >= needs[1] >= needs[2]
    return problem, *needs


JUDGED = ["default", "small"]   # the special-values draw on "small": the default's plans differ by the reference


def test_the_plan_keeps_the_reference_on_the_host_before_refusing():
    # layernorm: the outputs are large, so keeping their float64 copy on the host is what saves GPU memory
    problem, on_gpu, kept, _ = _three("problems/level1/layernorm.py")
    assert on_gpu > kept
    plan = M.referee_plan(problem, JUDGED, gpu=True, device_budget=on_gpu, host_budget=1 << 40)
    assert (plan.reference, plan.keep) == ("device", "device") and plan.note() is None
    plan = M.referee_plan(problem, JUDGED, gpu=True, device_budget=on_gpu - 1, host_budget=1 << 40)
    assert (plan.reference, plan.keep) == ("device", "host") and "kept on the host" in plan.note()
    # gemm_sigmoid_sum: the float64 copy of its weight is what does not fit (matvec's input: its draws weigh more)
    problem, _, kept, hosted = _three("problems/level2/gemm_sigmoid_sum.py")
    assert kept > hosted
    plan = M.referee_plan(problem, JUDGED, gpu=True, device_budget=hosted, host_budget=1 << 40)
    assert (plan.reference, plan.keep) == ("host", "host") and "computed and kept on the host" in plan.note()
    with pytest.raises(M.MemoryRefused, match=r"needs ~.* GB, the GPU has .* GB free \(variant default"):
        M.referee_plan(problem, JUDGED, gpu=True, device_budget=hosted - 1, host_budget=1 << 40)
    with pytest.raises(M.MemoryRefused, match=r"the host has 0\.0 GB free"):
        M.referee_plan(problem, JUDGED, gpu=True, device_budget=hosted, host_budget=1000)


def test_a_budget_that_is_not_a_size_is_a_one_line_error(monkeypatch):
    from kerntailor.errors import KerntailorError

    monkeypatch.setenv(M.BUDGET_ENV, "lots")
    with pytest.raises(KerntailorError, match="is not a size"):
        M.referee_plan(load_problem(ROOT / "problems/level1/layernorm.py"), ["small"], gpu=False)


def test_host_copy_of_a_model_is_the_same_model():
    from kerntailor.verify.judge import _host_copy, _to_host

    problem = load_problem(ROOT / "problems/level2/gemm_bias_relu.py")
    model = problem.make_model("small", "cpu", 3)
    model.register_buffer("scratch", torch.arange(4.0), persistent=False)
    copy = _host_copy(model)
    assert copy.state_dict().keys() == model.state_dict().keys() and torch.equal(copy.scratch, model.scratch)
    for a, b in zip(list(copy.parameters()) + list(copy.buffers()), list(model.parameters()) + list(model.buffers())):
        assert torch.equal(a, b) and a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()
    x = problem.make_inputs("small", "cpu", 1)
    from kerntailor.verify.judge import Judge

    judge = Judge(dict(problem=problem, device="cpu"), _Events(), None)   # the float64 reference both ways
    (on_host, dtype), (on_device, _) = (judge._reference(model, x, True, host=h) for h in (True, False))
    assert dtype is torch.float64 and on_host.dtype == torch.float64 and torch.equal(on_host, on_device)
    assert next(model.parameters()).dtype == torch.float32   # the problem's model is left as it was
    moved = _to_host((torch.ones(2), [torch.zeros(1), 3]))
    assert isinstance(moved, list) and moved[1][1] == 3 and moved[0].device.type == "cpu"


# --- GPU -----------------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_chunked_compare_with_the_reference_on_the_host_equals_the_whole(small_blocks):
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    g = torch.Generator().manual_seed(3)
    ref = torch.randn(3001, generator=g, dtype=torch.float64)
    out = (ref * (1 + 1e-5 * torch.randn(3001, generator=g, dtype=torch.float64))).float().cuda()
    on_gpu = compare(out, ref.cuda(), TOLERANCES["fp32"], chunk_bytes=WHOLE)
    _same(compare(out, ref, TOLERANCES["fp32"], chunk_bytes=48 * 8), on_gpu)
    _same(compare(out, ref, TOLERANCES["fp32"], chunk_bytes=WHOLE), on_gpu)


BIG = {  # (forward's arguments, body, inputs, candidate's return): about 2 GB of fp32 input or weight each
    "relu": ("x", "return torch.relu(x)", "[torch.randn(16384, 32768)]", "torch.relu(x)"),
    # the matrix a parameter: drawn inputs of its size would weigh more than its float64 copy (the draws' peak)
    "matvec": ("v", "return torch.matmul(self.w, v)", "[torch.randn(COLS, 1)]", "torch.matmul(self.w, v)"),
}
INIT = ("    def __init__(self, rows, cols):\n        super().__init__()\n"
        "        self.w = torch.nn.Parameter(torch.randn(rows, cols))\n")


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(BIG))
def test_gpu_a_big_input_problem_gets_a_verdict_under_a_budget(tmp_path, monkeypatch, name):
    """A problem whose float64 reference does not fit the GPU budget beside the rest gets a verdict, the
    float64 reference kept (relu) or computed (matvec) on the host, not an out-of-memory crash."""
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    from kerntailor.verify import VerifySettings, verify_candidate

    args, body, inputs, cand = BIG[name]
    init = INIT if name == "matvec" else ""
    problem = tmp_path / f"big_{name}.py"
    problem.write_text(f"import torch\n\nROWS, COLS = 8192, 65536\n\nclass Model(torch.nn.Module):\n{init}"
                       f"    def forward(self, {args}):\n        {body}\n\ndef get_inputs():\n    return {inputs}\n\n"
                       f"def get_init_inputs():\n    return {'[ROWS, COLS]' if init else '[]'}\n")
    candidate = tmp_path / "cand.py"
    candidate.write_text(f"import torch\n\nclass ModelNew(torch.nn.Module):\n{init}    def forward(self, {args}):\n"
                         f"        return {cand}\n")
    spec = load_problem(problem)
    f = M.footprint(spec, "default")
    needs = [M._needs(f, reference, keep, gpu=True)[0] for reference, keep in M.PLANS]
    budget = needs[2] if name == "matvec" else needs[1]
    assert budget < needs[0]
    monkeypatch.setenv(M.BUDGET_ENV, str(budget))
    verdict = verify_candidate(spec, candidate, VerifySettings(allow_library=True, variants=tuple(JUDGED)))
    assert verdict.passed, verdict.reason
    where = "computed and kept on the host" if name == "matvec" else "computed on the GPU and kept on the host"
    assert any(where in n for n in verdict.notes), verdict.notes


@pytest.mark.parametrize("reason, judged", [
    ("the referee could not judge: OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB", 2),
    ("the referee could not judge: KeyError: 'x'", 1),
    ("crash:the candidate process did not allocate its inputs: candidate process: OutOfMemoryError: CUDA out of "
     "memory. Tried to allocate 4.00 GiB", 2),
    ("crash:the candidate process did not allocate its inputs: candidate process: ValueError: bad spec", 1)])
def test_the_referee_running_out_of_gpu_memory_is_judged_again_not_a_verdict(monkeypatch, reason, judged):
    """49_Max_reduction bf16 on the H200 (2026-12-03): the judge's own 8 GiB allocation failed beside other jobs'
    processes and the verdict said so. Only the referee's own out-of-memory is judged again (after a wait), once
    per wait; the second verdict stands, with a note; any other referee failure is the verdict at once."""
    from kerntailor.verify import referee
    from kerntailor.verify.verdict import Verdict, VerifySettings

    check, reason = reason.split(":", 1) if reason.startswith("crash:") else ("referee", reason)
    verdicts = iter([Verdict(False, check, reason, checks=(check,), problem="p", candidate="c", mode="gpu"),
                     Verdict(True, None, "passed", checks=("static",), problem="p", candidate="c", mode="gpu")])
    runs, slept = [], []
    monkeypatch.setattr(referee, "plan_edge_cases", lambda *a: ([], []))
    monkeypatch.setattr(referee, "run_judge", lambda *a: runs.append(1) or ([], "ended", ""))
    monkeypatch.setattr(referee, "assemble", lambda *a: next(verdicts))
    monkeypatch.setattr(referee.time, "sleep", slept.append)
    v = referee._judge_dynamic(SimpleNamespace(), Path("c.py"), ast.parse(""), VerifySettings(), "cuda:0", False,
                               ["default"], [], {}, 0.0)
    assert len(runs) == judged and len(slept) == judged - 1
    if judged == 2:
        assert v.passed and any("judged again after 15 s" in n for n in v.notes)
    else:
        assert not v.passed and v.check == check


def test_an_edge_case_whose_reference_breaks_the_gpu_context_is_judged_again_without_it(monkeypatch):
    """sdpa_gqa_decode_b1 bf16 on the H100 (2026-12-05): at the edge case num_heads=1048592 PyTorch's own SDPA read
    out of bounds (its kernels launch heads on a 65,535-block grid axis, pytorch/pytorch#142228) and the judge's
    CUDA context was gone: every schedule failed "the referee could not judge". The judge now reports the lost
    case (event edge_lost, judge_edges.ContextLost) and the referee judges again without it, once per lost case;
    the case is listed skipped with the reason. A malformed report is not obeyed (no endless rejudging)."""
    from kerntailor.verify import referee
    from kerntailor.verify.verdict import Verdict, VerifySettings

    edges = ["rank+1", "rows:context_len", "rows:num_heads", "rows:batch_size"]
    lost = {"event": "edge_lost", "index": 2, "reason": "edge:rows (num_heads=1048592): not judged: PyTorch's "
            "reference broke the GPU context here"}
    replies = iter([[lost], [{"event": "done", "checks": ["static"]}], [{"event": "edge_lost", "index": 9}]])
    jobs, assembled = [], []
    monkeypatch.setattr(referee, "plan_edge_cases", lambda *a: (list(edges), ["edge:int32: too big"]))
    monkeypatch.setattr(referee, "run_judge", lambda job, *a: jobs.append(list(job["edges"])) or (
        next(replies), "ended", ""))
    monkeypatch.setattr(referee, "assemble", lambda *a: assembled.append(a) or Verdict(
        True, None, "passed", checks=("static",), problem="p", candidate="c", mode="gpu"))
    referee._judge_dynamic(SimpleNamespace(), Path("c.py"), ast.parse(""), VerifySettings(), "cuda:0", False,
                           ["default"], [], {}, 0.0)
    assert jobs == [edges, ["rank+1", "rows:context_len", "rows:batch_size"]]
    events, skipped = assembled[0][0], assembled[0][-1]
    assert events == [{"event": "done", "checks": ["static"]}]
    assert skipped == ["edge:int32: too big", lost["reason"]]
    # a report naming no case the job has: judged once, the events stand as they came
    replies = iter([[{"event": "edge_lost", "index": 9}]])
    jobs.clear()
    referee._judge_dynamic(SimpleNamespace(), Path("c.py"), ast.parse(""), VerifySettings(), "cuda:0", False,
                           ["default"], [], {}, 0.0)
    assert jobs == [edges]


class _EdgeJudge:
    """judge_edges.EdgeCases.judge_edge's collaborators: the lock's mode per run, the edge case's outcomes in
    order, the let-go requests and cache releases."""

    def __init__(self, device: str, outcomes: list):
        from kerntailor.verify.judge_edges import EdgeCases

        self.judge_edge = EdgeCases.judge_edge.__get__(self)
        self.let_go = EdgeCases.let_go.__get__(self)
        self.device = torch.device(device) if device == "cpu" else SimpleNamespace(type=device)
        self.outcomes, self.locks, self.requests, self.releases, self.notes = list(outcomes), [], [], 0, []
        self.events = SimpleNamespace(emit=lambda **e: self.notes.append(e))
        self.cand = SimpleNamespace(request=lambda header, payload=None: self.requests.append((header, payload)))

    def gpu_exclusive(self, shared: bool = False):
        import contextlib

        self.locks.append("shared" if shared else "alone")
        return contextlib.nullcontext()

    def release(self) -> None:
        self.releases += 1

    def edge_case(self, *args) -> None:
        outcome = self.outcomes.pop(0)
        if outcome is not None:
            raise outcome


def _oom_stop():
    from kerntailor.verify.link import Stop

    return Stop("exception", "forward raised OutOfMemoryError: CUDA out of memory. Tried to allocate 962.00 MiB. "
                "GPU 0 has a total capacity of 139.80 GiB of which 645.12 MiB is free")


def test_an_edge_case_that_ran_out_of_gpu_memory_beside_other_jobs_is_judged_again_alone():
    """20_MobileNetV2 on the H200 (2026-12-07e): its rows case (x of 10 x 3 x 1 x 1048579) ran the candidate's
    process out of memory while other jobs' edge cases held the rest of the GPU (645 MiB free of 139.8 GiB), and the
    kernel was failed for it. An out-of-memory under the shared lock (the candidate's forward, or the judge's own)
    runs the case once more with the lock held alone, both processes' caches given back first; the second run is
    judged as the first (its out-of-memory stands); any other failure is not run again, nor is anything on the CPU."""
    from kerntailor.verify.judge_edges import Unready, out_of_memory
    from kerntailor.verify.link import Stop

    edge = SimpleNamespace(label=lambda: "edge:rows (x (10, 3, 1, 1048579))")
    args = (None, edge, 1, 2, {"draw": "edge:rows"})
    # the candidate's out-of-memory beside other jobs, then an answer when alone: passes, judged twice
    j = _EdgeJudge("cuda", [_oom_stop(), None])
    j.judge_edge(*args)
    assert j.locks == ["shared", "alone"] and not j.outcomes
    assert any("judged again holding the GPU alone" in n.get("text", "") for n in j.notes)
    assert j.requests == [({"op": "inputs"}, {"inputs": []})] * 2   # before the second run, and after it
    # out of memory again when alone: that verdict stands
    j = _EdgeJudge("cuda", [_oom_stop(), _oom_stop()])
    with pytest.raises(Stop, match="OutOfMemoryError"):
        j.judge_edge(*args)
    assert j.locks == ["shared", "alone"]
    # the judge's own allocation: judged again too, and skipped by the caller if it fails again
    j = _EdgeJudge("cuda", [torch.OutOfMemoryError("CUDA out of memory"), Unready("the candidate process ran out "
                                                                                  "of GPU memory beside the judge")])
    with pytest.raises(Unready):
        j.judge_edge(*args)
    assert j.locks == ["shared", "alone"]
    # a wrong answer, or an exception that is not memory: no second run
    for failure in (Stop("accuracy", "max rel error 3.2 at [0, 1]"), Stop("exception", "forward raised IndexError"),
                    Stop("crash", "the candidate process died: OutOfMemoryError")):
        j = _EdgeJudge("cuda", [failure, None])
        with pytest.raises(Stop):
            j.judge_edge(*args)
        assert j.locks == ["shared"] and not out_of_memory(failure)
    # on the CPU there are no other jobs' GPU allocations to wait out: no second run
    j = _EdgeJudge("cpu", [_oom_stop(), None])
    with pytest.raises(Stop):
        j.judge_edge(*args)
    assert j.locks == ["shared"]
    # a case that answers first time lets go of its memory once
    j = _EdgeJudge("cuda", [None])
    j.judge_edge(*args)
    assert j.locks == ["shared"] and len(j.requests) == 1 and j.releases == 2
