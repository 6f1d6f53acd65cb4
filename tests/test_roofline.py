"""Roofline floors against hand-computed values. Unit tier: no GPU."""

from __future__ import annotations

import math

import pytest

from kerntailor.errors import TargetError
from kerntailor.targets import Ceilings, dtype_key, get_target, roofline_floor
from kerntailor.targets.roofline import H200_MEASURED

GEMM_FLOPS = 2 * 8192**3                 # 1.0995e12
GEMM_BYTES = 3 * 8192 * 8192 * 2         # A, B read, C written once, fp16: 402,653,184
SOFTMAX_BYTES = 2 * 4096 * 393216 * 4    # read once, write once, fp32


def test_softmax_fp32_on_mi300x_is_memory_bound():
    assert SOFTMAX_BYTES == 12_884_901_888
    f = roofline_floor(get_target("mi300x"), flops=5 * 4096 * 393216, min_bytes=SOFTMAX_BYTES,
                       dtype="float32", matrix=False)
    assert f.microseconds == pytest.approx(2431.1, abs=0.05)      # 12.885e9 B / 5.3e12 B/s
    assert f.bound == "memory" and f.seconds == f.memory_seconds
    assert f.compute_seconds == pytest.approx(5 * 4096 * 393216 / 163.4e12)
    assert f.arithmetic_intensity == pytest.approx(5 / 8)
    assert f.ceiling_source == "vendor peak"


def test_fp16_gemm_on_mi300x_is_compute_bound():
    assert GEMM_FLOPS == 1_099_511_627_776
    f = roofline_floor(get_target("mi300x"), flops=GEMM_FLOPS, min_bytes=GEMM_BYTES, dtype="fp16", matrix=True)
    assert f.microseconds == pytest.approx(841.0, abs=0.1)        # 1.0995e12 / 1307.4e12
    assert f.bound == "compute"
    assert f.memory_seconds * 1e6 == pytest.approx(75.97, abs=0.01)
    assert f.ridge_point == pytest.approx(1307.4e12 / 5.3e12)     # 246.7 FLOP/B
    assert f.arithmetic_intensity == pytest.approx(GEMM_FLOPS / GEMM_BYTES)  # 2730.7 FLOP/B


def test_fp16_gemm_on_h200():
    f = roofline_floor(get_target("h200"), flops=GEMM_FLOPS, min_bytes=GEMM_BYTES, dtype="float16", matrix=True)
    assert f.microseconds == pytest.approx(1111.3, abs=0.1)       # 1.0995e12 / 989.4e12
    assert f.bound == "compute"
    assert f.memory_seconds * 1e6 == pytest.approx(83.89, abs=0.01)  # 402.65e6 / 4.8e12
    assert f.ridge_point == pytest.approx(989.4e12 / 4.8e12)


def test_softmax_on_h200_with_measured_ceilings():
    f = roofline_floor(get_target("h200"), flops=0, min_bytes=SOFTMAX_BYTES, dtype="fp32", matrix=False,
                       ceilings=H200_MEASURED)
    assert f.microseconds == pytest.approx(SOFTMAX_BYTES / 4.27e12 * 1e6)   # 3017.5 us
    assert f.memory_source == "measured" and f.ceiling_source == "measured"
    assert f.compute_source == "vendor peak"  # no measured vector rate: the vendor one stays
    vendor = roofline_floor(get_target("h200"), flops=0, min_bytes=SOFTMAX_BYTES, dtype="fp32", matrix=False)
    assert vendor.microseconds == pytest.approx(2684.4, abs=0.05)  # 12.885e9 / 4.8e12
    assert vendor.ceiling_source == "vendor peak"


def test_measured_matmul_rate_is_used_for_matrix_work_only():
    h200 = get_target("h200")
    f = roofline_floor(h200, flops=GEMM_FLOPS, min_bytes=GEMM_BYTES, dtype="bf16", matrix=True,
                       ceilings=H200_MEASURED)
    assert f.peak_flops == 818e12 and f.compute_source == "measured" and f.ceiling_source == "measured"
    assert f.microseconds == pytest.approx(GEMM_FLOPS / 818e12 * 1e6)
    # fp16 was not measured: vendor rate, measured bandwidth
    f = roofline_floor(h200, flops=GEMM_FLOPS, min_bytes=GEMM_BYTES, dtype="fp16", matrix=True,
                       ceilings=H200_MEASURED)
    assert (f.compute_source, f.memory_source, f.ceiling_source) == ("vendor peak", "measured", "vendor peak")
    # partial ceilings: bandwidth unset falls back to the vendor figure
    f = roofline_floor(h200, flops=0, min_bytes=4.8e12, dtype="fp32", matrix=False, ceilings=Ceilings())
    assert f.seconds == pytest.approx(1.0) and f.memory_source == "vendor peak"


# read and write measured apart (numbers of the H200's kind, not a measurement): reads stream faster than a copy
SPLIT = Ceilings(copy_bandwidth=4.2e12, read_bandwidth=4.7e12, write_bandwidth=4.5e12, source="fake")


def test_measured_split_charges_reads_and_writes_at_their_own_rates():
    h200 = get_target("h200")
    # a loss: 1 GiB read, one fp32 written
    loss = roofline_floor(h200, flops=0, min_bytes=2**30 + 4, read_bytes=2**30, dtype="fp32", matrix=False,
                          ceilings=SPLIT)
    assert loss.memory_seconds == pytest.approx(2**30 / 4.7e12 + 4 / 4.5e12)
    assert loss.memory_seconds < (2**30 + 4) / 4.2e12            # a read-mostly kernel may beat the copy rate
    assert loss.bandwidth == pytest.approx((2**30 + 4) / loss.memory_seconds)   # the effective rate
    assert loss.memory_label == "read 4.70 TB/s, write 4.50 TB/s" and loss.read_bytes == 2**30
    # copy-like: as many bytes each way
    half = SOFTMAX_BYTES // 2
    copy = roofline_floor(h200, flops=0, min_bytes=SOFTMAX_BYTES, read_bytes=half, dtype="fp32", matrix=False,
                          ceilings=SPLIT)
    assert copy.seconds == pytest.approx(half / 4.7e12 + half / 4.5e12)
    # a GEMM stays compute-bound; its memory time uses the split too
    gemm = roofline_floor(h200, flops=GEMM_FLOPS, min_bytes=GEMM_BYTES, read_bytes=GEMM_BYTES * 2 // 3,
                          dtype="fp16", matrix=True, ceilings=SPLIT)
    assert gemm.bound == "compute"
    assert gemm.memory_seconds == pytest.approx(GEMM_BYTES * 2 / 3 / 4.7e12 + GEMM_BYTES / 3 / 4.5e12)
    with pytest.raises(ValueError, match="read_bytes"):
        roofline_floor(h200, flops=0, min_bytes=10, read_bytes=11, dtype="fp32", matrix=False, ceilings=SPLIT)


def test_one_rate_where_reads_and_writes_are_not_apart():
    h200 = get_target("h200")
    # copy only (an older measurement): every byte at the copy rate, and the label says why
    f = roofline_floor(h200, flops=0, min_bytes=SOFTMAX_BYTES, read_bytes=SOFTMAX_BYTES // 2, dtype="fp32",
                       matrix=False, ceilings=H200_MEASURED)
    assert f.seconds == pytest.approx(SOFTMAX_BYTES / 4.27e12)
    assert f.memory_label.startswith("copy 4.27 TB/s") and "not measured apart" in f.memory_label
    # rates known but the bytes not split: the copy rate, and the label says so
    f = roofline_floor(h200, flops=0, min_bytes=SOFTMAX_BYTES, dtype="fp32", matrix=False, ceilings=SPLIT)
    assert f.seconds == pytest.approx(SOFTMAX_BYTES / 4.2e12) and "not split" in f.memory_label
    # predicted (datasheet): one bandwidth for reads and writes, whatever the split
    f = roofline_floor(get_target("mi300x"), flops=0, min_bytes=SOFTMAX_BYTES, read_bytes=SOFTMAX_BYTES,
                       dtype="fp32", matrix=False)
    assert f.microseconds == pytest.approx(2431.1, abs=0.05)
    assert f.memory_label == "5.30 TB/s datasheet, one rate for reads and writes"


def test_fp32_matrix_on_nvidia_falls_back_to_the_vector_rate():
    f = roofline_floor(get_target("a100"), flops=19.5e12, min_bytes=1, dtype="fp32", matrix=True)
    assert f.seconds == pytest.approx(1.0) and f.rate_dtype == "fp32"


def test_missing_rates_fall_back():
    mi355x = get_target("mi355x")     # no tf32 in hardware: computed at the fp32 rate
    f = roofline_floor(mi355x, flops=157.3e12, min_bytes=1, dtype="tf32", matrix=True)
    assert (f.rate_dtype, f.seconds) == ("fp32", pytest.approx(1.0))
    a100 = get_target("a100")         # no fp8: upcast to the fp16 rate
    f = roofline_floor(a100, flops=312e12, min_bytes=1, dtype="float8_e4m3fn", matrix=True)
    assert (f.dtype, f.rate_dtype, f.seconds) == ("fp8", "fp16", pytest.approx(1.0))


def test_mi250x_is_one_gcd():
    f = roofline_floor(get_target("mi250x"), flops=0, min_bytes=1.6e12, dtype="bf16", matrix=False)
    assert f.seconds == pytest.approx(1.0)


def test_degenerate_work():
    f = roofline_floor(get_target("mi300x"), flops=0, min_bytes=0, dtype="fp32", matrix=False)
    assert f.seconds == 0.0 and f.bound == "memory" and math.isinf(f.arithmetic_intensity)
    with pytest.raises(ValueError):
        roofline_floor(get_target("mi300x"), flops=-1, min_bytes=0, dtype="fp32", matrix=False)


@pytest.mark.parametrize("spelling, key", [
    ("fp32", "fp32"), ("float32", "fp32"), ("torch.float32", "fp32"), ("bfloat16", "bf16"),
    ("half", "fp16"), ("float8_e4m3fnuz", "fp8"), ("tf32", "tf32"), ("float64", "fp64"),
])
def test_dtype_spellings(spelling, key):
    assert dtype_key(spelling) == key


def test_torch_dtypes_and_unknown_dtypes():
    torch = pytest.importorskip("torch")
    assert dtype_key(torch.bfloat16) == "bf16" and dtype_key(torch.float32) == "fp32"
    with pytest.raises(TargetError, match="int8"):
        dtype_key("int8")


def test_floor_summary_is_one_line():
    f = roofline_floor(get_target("mi300x"), flops=0, min_bytes=SOFTMAX_BYTES, dtype="fp32", matrix=False)
    assert f.summary() == "2431.1 us, memory-bound (vendor peak)"
