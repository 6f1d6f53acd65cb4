"""The stopwatch, the ceilings cache, the problem cost and the floors.

Unit tier: CUDA events are replaced by host-clock fakes so that the control flow (warm-up, interleaving,
rotation, flushing, statistics, caching) runs on a CPU. GPU tier: the real thing, on small sizes.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from helpers import captured_variant
from kerntailor.measure import baselines, ceilings, gpulock, stopwatch
from kerntailor.measure.ceilings import Ceilings, cache_key, cache_path, load_ceilings
from kerntailor.measure.cost import estimate_cost, problem_cost
from kerntailor.measure.floor import floor_label, physics_floor_s, roofline_floor_s
from kerntailor.measure.stopwatch import measure, summarize
from kerntailor.problem import load_problem
from kerntailor.verify import render_timing

TINY = Path(__file__).parent / "candidates" / "problems"
CEIL = Ceilings("Fake GPU", torch.__version__, copy_bandwidth=4e12,
                matmul_flops=(("bf16", 800e12), ("fp16", 800e12), ("fp32", 50e12), ("fp8", 1600e12), ("tf32", 400e12)),
                l2_bytes=60 << 20, measured_on="2026-11-29")


@pytest.fixture(autouse=True)
def cached_captures(monkeypatch):
    """problem_cost asks the capture stage: from the tests' disk cache here, as the unit tier's captures are
    (helpers.captured_variant); capture itself is the capture tier's to test."""
    import kerntailor.capture

    monkeypatch.setattr(kerntailor.capture, "capture_problem", captured_variant)


class FakeEvent:
    """A torch.cuda.Event stand-in on the host clock."""

    def __init__(self, enable_timing: bool = False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.t - self.t) * 1e3


@pytest.fixture
def fake_cuda(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Fake GPU")
    monkeypatch.setattr(stopwatch, "l2_bytes", lambda device: 1 << 20)
    monkeypatch.setattr(stopwatch, "FLUSH_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(gpulock, "lock_path", lambda device: tmp_path / "gpu.lock")


def test_summarize_gives_median_and_spread():
    t = summarize("x", [5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.median_s, t.min_s, t.max_s, t.runs) == (3.0, 1.0, 5.0, 5)
    assert (t.q1_s, t.q3_s) == (2.0, 4.0) and t.iqr_s == 2.0


def test_measure_interleaves_flushes_and_rotates(fake_cuda):
    calls: list[tuple[str, int]] = []
    sets = [[torch.full((4,), float(i))] for i in range(3)]

    def make(name, seconds):
        def fn(inputs):
            calls.append((name, int(inputs[0][0])))
            time.sleep(seconds)
        return fn

    timings = measure({"a": make("a", 0.02), "b": make("b", 0.0)}, sets, device="cpu", warmup=2,
                      budget_s=0.05, min_runs=6, max_runs=9)
    timed = calls[6:]                                   # after 2 warm-ups + 1 estimate per function
    assert [n for n, _ in timed[:6]] == ["a", "b"] * 3  # A B A B ...
    assert [i for n, i in timed if n == "a"][:4] == [0, 1, 2, 0]   # input sets rotate round by round
    assert 6 <= timings["a"].runs <= 9 and timings["a"].runs == timings["b"].runs
    assert timings["a"].median_s > timings["b"].median_s
    assert timings["a"].min_s <= timings["a"].median_s <= timings["a"].max_s


def test_ceilings_cache_is_keyed_and_read_from_env_at_call_time(tmp_path, monkeypatch, fake_cuda):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    assert cache_path() == tmp_path / "home" / "ceilings.json"
    measured = []
    monkeypatch.setattr(ceilings, "measure_ceilings", lambda device=None: measured.append(1) or CEIL)
    first = load_ceilings("cpu")
    second = load_ceilings("cpu")
    assert first == second == CEIL and len(measured) == 1
    table = json.loads(cache_path().read_text())
    assert list(table) == [cache_key("Fake GPU", torch.__version__)]
    assert Ceilings.from_dict(table[cache_key("Fake GPU", torch.__version__)]) == CEIL
    load_ceilings("cpu", refresh=True)
    assert len(measured) == 2
    # a file written before fp8 was measured lacks its rate: measured again rather than read as 0
    old = CEIL.to_dict()
    del old["matmul_flops"]["fp8"]
    cache_path().write_text(json.dumps({cache_key("Fake GPU", torch.__version__): old}))
    assert load_ceilings("cpu") == CEIL and len(measured) == 3


def test_problem_cost_estimate_reads_hints_and_counts_bytes():
    problem = load_problem(TINY / "linear_small.py")
    cost = estimate_cost(problem)
    # x (32x64) + W (48x64) + b (48) read, y (32x48) written, fp32
    assert cost.min_bytes == 4 * (32 * 64 + 48 * 64 + 48 + 32 * 48)
    assert cost.read_bytes == 4 * (32 * 64 + 48 * 64 + 48)              # x, W, b read; y written
    assert cost.flops == 2 * 32 * 64 * 48 and cost.matrix and cost.dtype == "fp32"
    assert estimate_cost(problem, "small").flops == 2 * 16 * 32 * 32     # FLOPS() sees the variant's sizes
    flops, min_bytes, dtype, matrix, read_bytes, conv = problem_cost(problem)  # capture or estimate: same shape
    assert min_bytes > 0 and dtype == "fp32" and 0 < read_bytes < min_bytes and conv == 0.0   # a linear, no conv
    relu = estimate_cost(load_problem(TINY / "relu_small.py"))
    assert relu == (0.0, 2 * 16 * 64 * 4, "fp32", False, 16 * 64 * 4, 0.0)
    assert problem_cost(load_problem(TINY / "relu_small.py"))[1:] == relu[1:]   # the capture splits alike


def test_floors():
    memory = (0.0, 4_000_000, "fp32", False)
    assert roofline_floor_s(memory, CEIL) == pytest.approx(1e-6)
    gemm = (2 * 4096**3, 3 * 4096**2 * 4, "fp32", True)
    assert roofline_floor_s(gemm, CEIL) == pytest.approx(2 * 4096**3 / 50e12)
    assert roofline_floor_s(gemm, CEIL, tf32=True) == pytest.approx(2 * 4096**3 / 400e12)
    # tf32x3: three tf32 products per fp32 product, so a third of the tf32 rate (not the ieee rate it skips)
    assert roofline_floor_s(gemm, CEIL, precision="tf32x3") == pytest.approx(3 * 2 * 4096**3 / 400e12)
    phys, source = physics_floor_s(memory, CEIL)
    assert phys == pytest.approx(1e-6 / 1.25) and "measured" in source
    target = SimpleNamespace(memory_bandwidth=4.8e12, display_name="NVIDIA H200",
                             peak=lambda dtype, matrix=True: {"fp32": 67e12, "tf32": 495e12}.get(dtype, 0.0))
    phys, source = physics_floor_s(gemm, CEIL, target)
    assert phys == pytest.approx(2 * 4096**3 / 495e12) and "H200" in source   # fp32 work may use tf32 units


def test_the_library_floor_charges_fp32_convolutions_at_the_tf32_rate():
    """PyTorch's defaults run fp32 convolutions on TF32 (cuDNN): the library's floor charges their FLOPs at the tf32
    rate, the rest as the ieee floor does; None where it is the ieee floor (no fp32 convolution, 16-bit)."""
    from kerntailor.measure.floor import library_floor_s

    conv, other = 2 * 4096**3, 1e9
    problem = (conv + other, 4096**2 * 4, "fp32", True, 4096**2 * 2, conv)
    assert library_floor_s(problem, CEIL) == pytest.approx(conv / 400e12 + other / 50e12)
    assert library_floor_s(problem, CEIL) < roofline_floor_s(problem, CEIL) == pytest.approx((conv + other) / 50e12)
    assert library_floor_s(problem[:5] + (0.0,), CEIL) is None       # a matmul: cuBLAS stays ieee by default
    assert library_floor_s(problem[:5], CEIL) is None                # a cost that does not say
    assert library_floor_s((problem[0], problem[1], "bf16", True, problem[4], conv), CEIL) is None
    memory_bound = (1e6, 4e9, "fp32", True, 2e9, 1e6)                # bytes dominate: the same memory time
    assert library_floor_s(memory_bound, CEIL) == pytest.approx(roofline_floor_s(memory_bound, CEIL))


# CEIL with read and write measured apart (numbers of the H200's kind, not a measurement)
SPLIT = replace(CEIL, read_bandwidth=4.7e12, write_bandwidth=4.5e12, read_method="torch.sum", write_method="fill_")


def test_floor_charges_reads_and_writes_at_their_own_rates():
    loss = (3e6, 8_000_004, "fp32", False, 8_000_000)                  # two 4 MB inputs in, one fp32 out
    assert roofline_floor_s(loss, SPLIT) == pytest.approx(8_000_000 / 4.7e12 + 4 / 4.5e12)
    assert roofline_floor_s(loss, SPLIT) < roofline_floor_s(loss, CEIL)   # the old floor charged the copy rate
    copy = (0.0, 8_000_000, "fp32", False, 4_000_000)
    assert roofline_floor_s(copy, SPLIT) == pytest.approx(4e6 / 4.7e12 + 4e6 / 4.5e12)
    gemm = (2 * 4096**3, 3 * 4096**2 * 4, "fp32", True, 2 * 4096**2 * 4)
    assert roofline_floor_s(gemm, SPLIT) == pytest.approx(2 * 4096**3 / 50e12)   # compute-bound: unchanged
    assert floor_label(loss, SPLIT) == "read 4.70 TB/s, write 4.50 TB/s, measured on Fake GPU 2026-11-29"
    # a cost that does not say its reads (the old 4-tuple): every byte at the copy rate, and the label says so
    assert roofline_floor_s(loss[:4], SPLIT) == pytest.approx(8_000_004 / 4e12)
    assert "not split" in floor_label(loss[:4], SPLIT)
    # the physics line stays under the split floor: datasheet, or the fastest measured rate with slack
    phys, _ = physics_floor_s(loss, SPLIT)
    assert phys == pytest.approx(8_000_004 / (4.7e12 * 1.25)) and phys < roofline_floor_s(loss, SPLIT)
    target = SimpleNamespace(memory_bandwidth=4.8e12, display_name="NVIDIA H200", peak=lambda d, matrix=True: 67e12)
    phys, source = physics_floor_s(loss, SPLIT, target)
    assert phys == pytest.approx(8_000_004 / 4.8e12) and phys < roofline_floor_s(loss, SPLIT)
    assert "datasheet" in source


def test_ceilings_without_read_and_write_stay_readable_and_fall_back_to_copy():
    # the committed H200 measurement predates read and write: read as 0.0, floor at the copy rate, said so
    committed = json.loads((Path(__file__).parent.parent / "benchmarks" / "data" /
                            "ceilings_h200_2026-11-29.json").read_text())
    old = Ceilings.from_dict(next(iter(committed.values())))
    assert old.copy_bandwidth == pytest.approx(4.2227e12, rel=1e-4) and not old.split
    assert (old.read_bandwidth, old.write_bandwidth, old.read_method) == (0.0, 0.0, "")
    loss = (0.0, 2 * 2**30 + 4, "fp32", False, 2 * 2**30)
    assert roofline_floor_s(loss, old) == pytest.approx((2 * 2**30 + 4) / old.copy_bandwidth)
    assert floor_label(loss, old) == ("copy 4.22 TB/s for all bytes (read and write rates not measured apart), "
                                      "measured on NVIDIA H200 2026-11-29")
    assert Ceilings.from_dict(SPLIT.to_dict()) == SPLIT                 # the new fields round-trip
    roof = SPLIT.to_roofline()
    assert (roof.copy_bandwidth, roof.read_bandwidth, roof.write_bandwidth, roof.matmul_flops) == (
        4e12, 4.7e12, 4.5e12, ())
    assert old.to_roofline(matmul=True).read_bandwidth is None and old.to_roofline(matmul=True).matmul_flops


def test_cached_entry_without_read_and_write_is_measured_again(tmp_path, monkeypatch, fake_cuda):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))
    measured = []
    monkeypatch.setattr(ceilings, "measure_ceilings", lambda device=None: measured.append(1) or SPLIT)
    old = CEIL.to_dict()
    for key in ("read_bandwidth", "write_bandwidth", "read_method", "write_method"):
        del old[key]
    cache_path().write_text(json.dumps({cache_key("Fake GPU", torch.__version__): old}))
    assert load_ceilings("cpu") == SPLIT and len(measured) == 1
    assert load_ceilings("cpu") == SPLIT and len(measured) == 1         # now complete: read from the cache
    # measured, but every way failed (rates 0.0): kept, not measured again on every call
    failed = replace(SPLIT, read_bandwidth=0.0, write_bandwidth=0.0)
    cache_path().write_text(json.dumps({cache_key("Fake GPU", torch.__version__): failed.to_dict()}))
    assert load_ceilings("cpu") == failed and len(measured) == 1


def test_time_candidate_end_to_end_with_fakes(fake_cuda, monkeypatch, tmp_path):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))
    monkeypatch.setattr(ceilings, "measure_ceilings", lambda device=None: CEIL)
    monkeypatch.setattr(torch, "compile", lambda model, mode=None: model)
    problem = load_problem(TINY / "relu_small.py")
    model = problem.make_model("default", "cpu")
    report = baselines.time_candidate(problem, model, model, make_inputs=lambda i: problem.make_inputs(
        "default", "cpu", i), device="cpu", budget_s=0.02)
    d = report.to_dict()
    assert [t["name"] for t in d["timings"]] == ["candidate", "eager", "compile"]
    assert d["device_name"] == "Fake GPU" and d["floor_s"] == pytest.approx(2 * 16 * 64 * 4 / 4e12)
    assert d["speedup_vs_eager"] > 0 and d["input_sets"] == 4        # a tiny set fits in cache: rotate
    assert all(t["time_over_floor"] > 0 for t in d["timings"])
    text = render_timing(d)
    assert "measured on Fake GPU" in text and "candidate" in text and "floor" in text
    assert "copy 4.00 TB/s for all bytes" in d["floor_label"] and any("not measured apart" in n for n in d["notes"])


def test_time_candidate_names_the_split_floor(fake_cuda, monkeypatch, tmp_path):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))
    monkeypatch.setattr(ceilings, "measure_ceilings", lambda device=None: SPLIT)
    monkeypatch.setattr(torch, "compile", lambda model, mode=None: model)
    problem = load_problem(TINY / "relu_small.py")
    model = problem.make_model("default", "cpu")
    d = baselines.time_candidate(problem, model, model, make_inputs=lambda i: problem.make_inputs(
        "default", "cpu", i), device="cpu", budget_s=0.02).to_dict()
    nbytes = 16 * 64 * 4
    assert d["min_bytes_read"] == nbytes and d["min_bytes"] == 2 * nbytes
    assert d["floor_s"] == pytest.approx(nbytes / 4.7e12 + nbytes / 4.5e12)
    assert d["floor_label"] == "read 4.70 TB/s, write 4.50 TB/s, measured on Fake GPU 2026-11-29"
    assert not any(n.startswith("floor:") for n in d["notes"])
    assert "ceilings read 4.70 TB/s, write 4.50 TB/s" in render_timing(d)


# ---- GPU tier ----

@pytest.mark.gpu
def test_gpu_measure_orders_one_copy_below_two():
    x = torch.randn(1 << 26, device="cuda")
    y = torch.empty_like(x)
    t = measure({"one": lambda inp: y.copy_(inp[0]), "two": lambda inp: (y.copy_(inp[0]), y.copy_(inp[0]))},
                [[x]], budget_s=0.5)
    assert t["one"].median_s < t["two"].median_s
    assert t["one"].min_s > 2 * x.numel() * 4 / 10e12          # under 10 TB/s: not faster than physics


@pytest.mark.gpu
def test_gpu_ceilings_are_measured_once_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))
    # 1 GiB: at 256 MiB the read stream measured 3.19 TB/s, the copy 3.88 (H200, 2026-12-02)
    monkeypatch.setattr(ceilings, "COPY_BYTES", 1 << 30)
    monkeypatch.setattr(ceilings, "MATMUL_N", 2048)
    c = load_ceilings()
    assert c.copy_bandwidth > 1e11 and c.matmul("bf16") > c.matmul("fp32") > 0
    # read and write apart: each stream at least as fast as the copy's mixed stream (not faster than 10 TB/s)
    assert c.split and c.read_method and c.write_method
    assert 10e12 > c.read_bandwidth > 0.9 * c.copy_bandwidth and 10e12 > c.write_bandwidth > 0.9 * c.copy_bandwidth
    monkeypatch.setattr(ceilings, "measure_ceilings", lambda device=None: pytest.fail("not cached"))
    assert load_ceilings() == c


class _Queue:
    """A GPU stand-in with a virtual clock: the host spends `host` seconds per launch, the device runs each launch's
    work after what was queued before it; an event completes when the device reaches it; synchronize waits."""

    def __init__(self):
        self.host = self.device = 0.0

    def launch(self, host: float, work: float) -> None:
        self.host += host
        self.device = max(self.device, self.host) + work

    def sync(self, device=None) -> None:
        self.host = self.device = max(self.host, self.device)

    def event(self, enable_timing: bool = False):
        queue = self

        class Event:
            def record(self, stream=None):
                queue.device = max(queue.device, queue.host)
                self.t = queue.device

            def elapsed_time(self, end) -> float:
                return (end.t - self.t) * 1e3

        return Event()


@pytest.mark.unit
@pytest.mark.parametrize("drained", [False, True])
def test_a_launch_bound_run_after_a_graph_replay_is_timed_whole_when_drained(fake_cuda, monkeypatch, drained):
    """Issue #21: end_to_end timed eager right after the optimized model's CUDA-graph replay (little host time, much
    GPU work queued). Undrained, eager's own launches (host-bound: 2 ms of launches for 0.5 ms of GPU work) ran
    behind the replay's queue and it measured its GPU time alone; drained, every run measures its whole span, so
    the order of the variants no longer decides which one's launches count."""
    queue = _Queue()
    monkeypatch.setattr(torch.cuda, "Event", queue.event)
    monkeypatch.setattr(torch.cuda, "synchronize", queue.sync)

    def eager(inputs):          # 20 launches of 100 us host each, 25 us of GPU work each
        for _ in range(20):
            queue.launch(100e-6, 25e-6)

    def replay(inputs):         # one launch, 3 ms of GPU work
        queue.launch(10e-6, 3e-3)

    timings = measure({"replay": replay, "eager": eager}, [[torch.zeros(1)]], device="cpu", warmup=1,
                      budget_s=0.1, min_runs=8, max_runs=8, flush=False, drained=drained)
    whole = timings["eager"].median_s
    if drained:
        assert whole == pytest.approx(20 * 100e-6 + 25e-6, rel=1e-6)   # its launches, then its last kernel
    else:
        assert whole == pytest.approx(20 * 25e-6, rel=1e-6)             # the launches hidden behind the replay
    assert timings["replay"].median_s == pytest.approx(3e-3 + (10e-6 if drained else 0), rel=1e-6)
