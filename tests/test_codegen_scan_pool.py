"""Codegen for the scan and pool families: generated kernel.py files pass the referee (Triton interpreter),
compile for gfx942 and sm_90, and the host-side pieces (pool output sizes, flip folding) are exact."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from helpers import prepared
from kerntailor.capture.generalize import Dim, Generalized, SizeExpr
from kerntailor.codegen import FAMILIES, CodegenUnsupported, default_schedule, generate_module
from kerntailor.codegen.pool import host_size_lines
from kerntailor.codegen.scan import fold_flipped_scans
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.ir.nodes import Graph, GraphInput, Pool, Scan
from kerntailor.ir.types import TensorType, View
from kerntailor.plan import plan_fusion

ROOT = Path(__file__).resolve().parents[1]
LEVEL1 = ROOT / "problems" / "level1"
DATA = ROOT / "tests" / "data" / "codegen"
PROLOGUE = ROOT / "tests" / "data" / "pool_prologue"


def _generate(path: Path, dtype: str | None = None, knobs: dict | None = None, rewrite=None, family: str = "",
              arch: str = "gfx942"):
    """(problem, module) with `knobs` merged into every group's default schedule (only `family`'s groups where
    given); `rewrite` edits the captured problem before it is planned."""
    problem, _, gen, _ = prepared(path, dtype)
    if rewrite is not None:
        gen = rewrite(gen)
    plan = plan_fusion(gen.graph, FAMILIES)
    chosen = {g.name: default_schedule(gen, g).retune(knobs or {} if g.family == (family or g.family) else {})
              for g in plan.groups}
    return problem, generate_module(problem, gen, plan, chosen, "h200" if arch.startswith("sm_") else "mi300x", arch)


# --- the referee ------------------------------------------------------------------------------------------

CASES = [
    # (problem, dtype, knob overrides): the level-1 problems at default knobs (cumsum's odd row of 9973
    # takes five 2048-chunks), the small ones with 16-element chunks so their rows take several
    (LEVEL1 / "cumsum.py", None, {}),
    (LEVEL1 / "maxpool2d.py", None, {}),
    (LEVEL1 / "avgpool2d.py", None, {}),
    (DATA / "cumsum_middle_axis.py", None, {"XBLOCK": 4, "RBLOCK": 16}),
    (DATA / "cumsum_reverse.py", None, {"RBLOCK": 16}),
    (DATA / "cumprod.py", None, {"RBLOCK": 16}),
    (DATA / "cumsum_exclusive.py", None, {"RBLOCK": 16}),
    (DATA / "maxpool1d.py", None, {}),
    (DATA / "avgpool3d.py", None, {}),
    (DATA / "maxpool2d_dilated.py", None, {}),
    (DATA / "avgpool2d_ceil.py", None, {}),
    (LEVEL1 / "cumsum.py", "bf16", {}),
    (LEVEL1 / "maxpool2d.py", "bf16", {}),
    # a pointwise prologue evaluated on the pool's window (plan/fusion.py): each prologue's value at 0 would change
    # the result if a padded position were read as prologue(0) instead of being left out
    *[(PROLOGUE / f"{name}.py", None, {}) for name in (
        "maxpool1d_pad_ceil", "maxpool2d_pad", "maxpool3d_pad", "avgpool1d_ceil_exclude_pad", "avgpool2d_pad",
        "avgpool3d_ceil_pad")],
    (PROLOGUE / "maxpool2d_pad.py", "bf16", {}),
]


@pytest.mark.interpreter
@pytest.mark.parametrize("path,dtype,knobs", CASES, ids=[f"{p.stem}-{d or 'fp32'}" for p, d, _ in CASES])
def test_generated_kernel_passes_the_referee(path, dtype, knobs, tmp_path):
    from kerntailor.verify import VerifySettings, verify_candidate

    problem, module = _generate(path, dtype, knobs)
    kernel = tmp_path / "kernel.py"
    kernel.write_text(module.source)
    # without the edges stage, as helpers.judge under the interpreter: a pool's edge cases are further runs of
    # a kernel the interpreter walks slowly (maxpool2d's verdict took 270-311 s on 2 cores at load ~6)
    verdict = verify_candidate(problem, kernel, VerifySettings(edges=False))
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"


# --- scan flags the capture does not produce: reverse and exclusive, as IR -------------------------------

_RUN_FLAGS = textwrap.dedent('''
    import importlib.util, json, sys
    import torch

    def ref(x, op, axis, reverse, exclusive):
        if reverse:
            x = x.flip(axis)
        y = torch.cumsum(x, axis) if op == "sum" else torch.cumprod(x, axis)
        if exclusive:
            first = torch.zeros_like(x.narrow(axis, 0, 1)) + (0.0 if op == "sum" else 1.0)
            y = torch.cat([first, y.narrow(axis, 0, x.shape[axis] - 1)], axis)
        return y.flip(axis) if reverse else y

    worst = 0.0
    for path, op, axis, reverse, exclusive, prologue in json.loads(sys.argv[1]):
        spec = importlib.util.spec_from_file_location("k", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        torch.manual_seed(0)
        x = 1.0 + 0.05 * torch.randn(3, 45, 5) if op == "prod" else torch.randn(3, 45, 5)
        out = mod.ModelNew()(x)
        scanned = x.double() * 1.5 - 0.5 if prologue else x.double()   # cumsum_prologue.py's prologue
        expected = ref(scanned, op, axis, reverse, exclusive).float()
        err = ((out - expected).norm() / expected.norm()).item()
        assert err < 1e-5, (path, op, reverse, exclusive, err)
        worst = max(worst, err)
    print(worst)
''')


def _with_flags(op: str, reverse: bool, exclusive: bool):
    def rewrite(gen: Generalized) -> Generalized:
        nodes = tuple(dataclasses.replace(n, op=op, reverse=reverse, exclusive=exclusive)
                      if isinstance(n, Scan) else n for n in gen.graph.nodes)
        return dataclasses.replace(gen, graph=dataclasses.replace(gen.graph, nodes=nodes))
    return rewrite


@pytest.mark.interpreter
def test_scan_reverse_and_exclusive_flags(tmp_path):
    jobs = []
    for op, name in (("sum", "cumsum_middle_axis.py"), ("prod", "cumsum_middle_axis.py"),
                     ("sum", "cumsum_prologue.py")):   # the prologue at the element, or its predecessor (exclusive)
        prologue = name == "cumsum_prologue.py"
        for reverse in (False, True):
            for exclusive in (False, True):
                _, module = _generate(DATA / name, knobs={"XBLOCK": 4, "RBLOCK": 16},
                                      rewrite=_with_flags(op, reverse, exclusive))
                assert ("(prologue)" in module.source) == prologue   # x * 1.5 - 0.5 computed, never written
                path = tmp_path / f"k_{op}_{int(reverse)}{int(exclusive)}_{int(prologue)}.py"
                path.write_text(module.source)
                jobs.append((str(path), op, 1, reverse, exclusive, prologue))
    env = dict(os.environ, TRITON_INTERPRET="1")
    run = subprocess.run([sys.executable, "-c", _RUN_FLAGS, json.dumps(jobs)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]


# --- host-side pieces ------------------------------------------------------------------------------------

def test_flip_scan_flip_folds_into_a_reverse_scan():
    _, _, gen, _ = prepared(DATA / "cumsum_reverse.py")
    scan = next(n for n in gen.graph.nodes if isinstance(n, Scan))
    assert scan.operands[0].strides[-1] == -1 and gen.graph.outputs[0].strides[-1] == -1
    folded = fold_flipped_scans(gen)
    scan = next(n for n in folded.graph.nodes if isinstance(n, Scan))
    assert scan.reverse and scan.operands[0].is_contiguous and folded.graph.outputs[0].is_contiguous
    for path in (("node", scan.name, "operand", 0, "offset"), ("output", 0, "offset")):
        assert folded.expr(path, -7).evaluate({}) == 0
    assert folded.expr(("output", 0, "strides", 1), -7).evaluate({}) == 1
    # a flip only on the input is read through its negative stride: nothing to fold
    outputs = (View.of(scan.name, scan.out.shape),)
    plain = dataclasses.replace(gen, graph=dataclasses.replace(gen.graph, outputs=outputs))
    assert fold_flipped_scans(plain) is plain


POOLS = [  # kind, kernel, stride, padding, dilation, ceil_mode
    ("max", 3, 2, 1, 1, False), ("max", 3, 2, 1, 1, True), ("max", 2, 2, 0, 1, True), ("max", 3, 2, 1, 2, False),
    ("max", 3, 3, 1, 2, True), ("max", 4, 1, 2, 1, False), ("avg", 3, 2, 1, 1, True), ("avg", 2, 3, 1, 1, True),
    ("avg", 5, 2, 2, 1, False), ("avg", 1, 1, 0, 1, False),
]


@pytest.mark.parametrize("kind,k,s,p,d,ceil", POOLS)
def test_pool_output_sizes_follow_torch(kind, k, s, p, d, ceil):
    import torch
    import torch.nn.functional as F

    length = Dim(0, 2)
    node = Pool("pool0", (View.of("x", (1, 1, 32)),), TensorType((1, 1, 16), "fp32"), "pool", kind, (k,), (s,),
                (p,), (d,), ceil)
    graph = Graph((GraphInput("x", TensorType((1, 1, 32), "fp32"), "input"),), (node,), (), ())
    size = SizeExpr(Fraction(1), ((length, Fraction(1)),))
    gen = Generalized(graph, ((("node", "pool0", "operand", 0, "shape", 2), size),), (length,), ())
    lines = host_size_lines(gen, node, 2, "out", SizeArgs(gen, {length: "n"}))
    for n in range(max(1, d * (k - 1) + 1 - 2 * p), 40):
        scope = {"n": n}
        exec("\n".join(lines), scope)
        x = torch.empty(1, 1, n, device="meta")
        if kind == "max":
            ref = F.max_pool1d(x, k, s, p, d, ceil_mode=ceil)
        else:
            ref = F.avg_pool1d(x, k, s, p, ceil_mode=ceil)
        assert scope["out"] == ref.shape[-1], (n, lines)


# --- the sliding schedule (ROWS > 1): output rows that share input rows load them once ---------------------

_RUN_SLIDING = textwrap.dedent('''
    import importlib.util, json, sys
    import torch

    def load(path, name):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    for kernel, problem, dtype, shapes in json.loads(sys.argv[1]):
        ref_mod = load(problem, "ref")
        torch.manual_seed(0)
        ref = ref_mod.Model(*ref_mod.get_init_inputs())
        new = load(kernel, "new").ModelNew(*ref_mod.get_init_inputs())
        if dtype == "bf16":
            ref, new = ref.bfloat16(), new.bfloat16()
        new.load_state_dict(ref.state_dict())
        for shape in shapes:
            x = torch.randn(*shape, dtype=torch.bfloat16 if dtype == "bf16" else torch.float32)
            x[(0, 0, 1, 1) if x.dim() > 3 else (0, 0, 1)] = float("nan")   # inside the first outputs' windows
            with torch.no_grad():
                out, expected = new(x), ref(x)
            assert out.shape == expected.shape and out.dtype == expected.dtype, (problem, shape, out.shape)
            nan = torch.isnan(expected)
            assert nan.any() and torch.equal(torch.isnan(out), nan), (problem, shape, "NaN")
            err = ((out - expected).float().abs() / expected.float().abs().clamp(min=1))[~nan].max().item()
            assert err < (1e-2 if dtype == "bf16" else 1e-5), (problem, shape, err)
    print("ok")
''')


def _run_sliding(tmp_path, cases, marker: str = "row0", arch: str = "gfx942") -> None:
    """Each (problem, dtype, knobs, input shapes) generated with its pool group under `knobs` (its source has
    `marker`) and run under the interpreter against the problem's Model, a NaN in the first windows."""
    jobs = []
    for i, (path, dtype, knobs, shapes) in enumerate(cases):
        _, module = _generate(path, dtype, knobs, family="pool", arch=arch)
        assert marker in next(k for k in module.kernels if "pool" in k.kernel_name).source
        kernel = tmp_path / f"k{i}.py"
        kernel.write_text(module.source)
        jobs.append((str(kernel), str(path), dtype, shapes))
    run = subprocess.run([sys.executable, "-c", _RUN_SLIDING, json.dumps(jobs)], capture_output=True, text=True,
                         env=dict(os.environ, TRITON_INTERPRET="1"), timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr[-3000:]


@pytest.mark.interpreter
def test_sliding_rows_match_torch(tmp_path):
    """KernelBench 42's window (4x4, stride 1, padding 1) over 8 rows a program: output rows a multiple of 8 or
    not (17, 8, 13), widths not a multiple of the tile; an average over overlapping rows in ceil mode without the
    padding in its divisor, then an epilogue with a per-channel load per output row; bf16."""
    _run_sliding(tmp_path, [
        (DATA / "maxpool2d_overlap.py", None, {"ROWS": 8, "XBLOCK": 128},
         [(2, 2, 18, 20), (1, 3, 9, 12), (1, 2, 14, 11)]),
        (DATA / "avgpool2d_overlap_epilogue.py", None, {"ROWS": 4, "XBLOCK": 128}, [(2, 4, 11, 13), (1, 4, 6, 9)]),
        (DATA / "maxpool2d_overlap.py", "bf16", {"ROWS": 2, "XBLOCK": 128}, [(1, 2, 9, 12)]),
    ])


@pytest.mark.interpreter
@pytest.mark.slow
def test_sliding_rows_keep_every_pool_semantic(tmp_path):
    """Dilation and stride 2; count_include_pad; ceil mode; 3-d (the depth window loops around the rows); a
    prologue computed per loaded element (padding outside it); bf16 with a stride of 2."""
    _run_sliding(tmp_path, [
        (DATA / "maxpool2d_dilated.py", None, {"ROWS": 4, "XBLOCK": 128}, [(1, 2, 17, 23)]),
        (LEVEL1 / "avgpool2d.py", None, {"ROWS": 2, "XBLOCK": 128}, [(1, 2, 13, 21)]),
        (DATA / "avgpool2d_ceil.py", None, {"ROWS": 4, "XBLOCK": 128}, [(1, 3, 17, 24)]),
        (DATA / "avgpool3d.py", None, {"ROWS": 2, "XBLOCK": 128}, [(1, 3, 9, 11, 13)]),
        (PROLOGUE / "maxpool3d_pad.py", None, {"ROWS": 4, "XBLOCK": 128}, [(1, 3, 8, 10, 12)]),
        (PROLOGUE / "avgpool2d_pad.py", None, {"ROWS": 8, "XBLOCK": 128}, [(1, 6, 11, 9)]),
        (LEVEL1 / "maxpool2d.py", "bf16", {"ROWS": 2, "XBLOCK": 256}, [(1, 3, 13, 21)]),
    ])


def test_sliding_rows_load_each_shared_input_row_once():
    """ROWS=4 over a 4-row window at stride 1: 7 input rows, each loaded (4 columns) once, and each output row
    folds in its 4. A window too wide to unroll over the rows is refused, naming why (the search drops it)."""
    _, module = _generate(DATA / "maxpool2d_overlap.py", knobs={"ROWS": 4})
    (kernel,) = module.kernels
    src = kernel.source
    assert src.count("tl.load(") == 7 * 2   # per input row: its first column, then the unrolled loop's one
    assert src.count("# input row") == 7 and src.count("tl.store(") == 4
    assert "triton.cdiv(d4, 4)" in module.source   # the grid: row blocks x groups of 4 output rows
    def wide(gen: Generalized) -> Generalized:   # a 3 x 17 window: 8 rows would unroll 10 x 17 loads
        nodes = tuple(dataclasses.replace(n, kernel=(3, 17)) if isinstance(n, Pool) else n for n in gen.graph.nodes)
        return dataclasses.replace(gen, graph=dataclasses.replace(gen.graph, nodes=nodes))

    with pytest.raises(CodegenUnsupported, match="ROWS=8 unrolls 170 loads"):
        _generate(DATA / "maxpool2d_overlap.py", knobs={"ROWS": 8}, rewrite=wide)
    assert "row0" in _generate(DATA / "maxpool2d_overlap.py", knobs={"ROWS": 4}, rewrite=wide)[1].source  # 6 x 17


# --- the span schedule (SPAN=1): the last axis's window from aligned chunks, shared by a lane group's outputs ----

@pytest.mark.interpreter
def test_span_matches_torch(tmp_path):
    """KernelBench 41's window (8 taps, dilation 3, padding 4: chunk -1 read) and 44's (an average in ceil mode
    counting only the inputs), rows of several column programs and rows shorter than a program; bf16 (chunks of
    8); stride 2 (2 outputs a chunk). Generated for sm_90: max as tl.maximum propagating NaN (and so a
    prologue's padded window in the window of masked loads)."""
    _run_sliding(tmp_path, [
        (DATA / "maxpool1d_dilated.py", None, {"SPAN": 1, "XBLOCK": 128}, [(2, 3, 200), (1, 2, 17)]),
        (DATA / "avgpool1d_overlap.py", None, {"SPAN": 1, "XBLOCK": 128}, [(2, 3, 150), (1, 2, 5)]),
        (DATA / "maxpool2d_overlap.py", "bf16", {"SPAN": 1, "XBLOCK": 128}, [(1, 2, 9, 21)]),
        (DATA / "maxpool1d.py", None, {"SPAN": 1, "XBLOCK": 128}, [(1, 2, 33)]),
    ], marker="tl.split(", arch="sm_90")
    # the window of masked loads with its NVIDIA max: a prologue on a padded 3-d window
    _run_sliding(tmp_path, [(PROLOGUE / "maxpool3d_pad.py", None, {}, [(1, 3, 8, 10, 12)])],
                 marker="propagate_nan=tl.PropagateNan.ALL", arch="sm_90")


@pytest.mark.interpreter
@pytest.mark.slow
def test_span_keeps_every_pool_semantic(tmp_path):
    """Dilation and stride 2 on a 2-d window; ceil mode without the padding in the divisor; 3-d with the padding
    in it (the outer window axes loop around the chunks); an epilogue with a per-channel load."""
    _run_sliding(tmp_path, [
        (DATA / "maxpool2d_dilated.py", None, {"SPAN": 1, "XBLOCK": 128}, [(1, 2, 17, 23)]),
        (DATA / "avgpool2d_ceil.py", None, {"SPAN": 1, "XBLOCK": 128}, [(1, 3, 17, 24)]),
        (DATA / "avgpool3d.py", None, {"SPAN": 1, "XBLOCK": 128}, [(1, 3, 5, 7, 9)]),
        (DATA / "avgpool2d_overlap_epilogue.py", None, {"SPAN": 1, "XBLOCK": 128}, [(2, 4, 11, 13)]),
    ], marker="tl.split(")


def test_span_loads_each_chunk_once_and_is_refused_where_it_cannot_apply():
    """41's window: output e of a lane group of 4 reads positions e - 4 + 3k, k < 8: chunks -1..5, one load each
    (masked below 0 only for chunk -1), 8 combines per output; a prologue is refused by name; ROWS > 1 is the
    sliding schedule whatever SPAN says."""
    _, module = _generate(DATA / "maxpool1d_dilated.py", knobs={"SPAN": 1})
    (kernel,) = module.kernels
    src = kernel.source
    assert src.count("tl.load(") == 7 and src.count("(sq >= 0)") == 1
    assert src.count("acc0 = tl.where(") == 8 and "tl.join(" in src
    sliding = _generate(DATA / "maxpool2d_overlap.py", knobs={"SPAN": 1, "ROWS": 2})[1].source
    assert "row0" in sliding and "tl.split(" not in sliding
    with pytest.raises(CodegenUnsupported, match="SPAN=1"):
        _generate(PROLOGUE / "avgpool2d_pad.py", knobs={"SPAN": 1}, family="pool")


# --- cross-compilation ----------------------------------------------------------------------------------

def test_pool_tiles_rows_by_the_last_axis_with_no_per_element_division():
    """A 2-D grid of (rows x last-axis) tiles: only the YBLOCK row indices are divided by run-time sizes,
    the columns are the last output axis itself (the flat 1-D tile paid three divisions per element)."""
    for span in (0, 1):   # the window of masked loads; the span schedule (bf16 chunks of 8 at stride 2: 4 outputs)
        _, module = _generate(LEVEL1 / "avgpool2d.py", "bf16", {"XBLOCK": 1024, "SPAN": span})
        (kernel,) = module.kernels
        src = kernel.source
        assert dict(kernel.constexprs) == {"YBLOCK": 8, "XBLOCK": 128}     # the last output axis is 128 long
        divisions = [m.group(1, 3) for m in re.finditer(r"([\w.]+) (//|%) (\w+)", src)]
        assert divisions and all(a in ("yindex", "q2") or (a == "XBLOCK" and b.isdigit()) for a, b in divisions), \
            divisions   # row indices only, never i3 / xindex
        assert ("tl.full([YBLOCK, XBLOCK // 4]" if span else "tl.full([YBLOCK, XBLOCK]") in src
        assert "[(triton.cdiv(" in module.source and "), triton.cdiv(" in module.source   # a 2-D launch grid


@pytest.mark.unit
def test_a_scan_computes_a_private_pointwise_producer_and_never_writes_it(tmp_path):
    """cumsum(x * 1.5 - 0.5): one kernel reading x (KernelBench's masked cumsum wrote x * mask, then read it back);
    where the product is also returned it has to be written, and stays its own group."""
    problem, module = _generate(DATA / "cumsum_prologue.py")
    (kernel,) = module.kernels
    assert [b for _, b in kernel.pointer_args] == ["x", "cumsum0"] and "(prologue)" in kernel.source
    shared = tmp_path / "shared.py"
    shared.write_text((DATA / "cumsum_prologue.py").read_text().replace(
        "return torch.cumsum(x * 1.5 - 0.5, dim=1)", "y = x * 1.5 - 0.5\n        return torch.cumsum(y, dim=1), y"))
    plan = prepared(shared)[3]
    assert len(plan.groups) == 2 and not any(g.prologue for g in plan.groups)


def test_a_prologue_is_computed_on_the_window_and_never_written(library_conv):
    """The pool kernel reads x (not the prologue's output, which has no buffer), computes the prologue on each
    window element under the window's mask, leaves padded positions out by that mask (not prologue(0)), and
    loads the one-element scale once, above the window loop."""
    _, module = _generate(PROLOGUE / "avgpool2d_pad.py")
    (kernel,) = module.kernels
    src = kernel.source
    assert [b for _, b in kernel.pointer_args] == ["x", "p_scale", "avgpool0"]
    body = src[src.index("for k0"):]
    assert "tl.load(x_ptr" in body and "mask=m1" in body
    assert "v = tl.where(m1, v_pw2.to(tl.float32), 0.0)" in body
    scale = next(line for line in src.splitlines() if "tl.load(p_scale_ptr" in line)
    assert src.index(scale) < src.index("for k0") and "mask=xmask" in scale
    # no padding: the window never leaves the input, so the value is used as computed (the library's convolution:
    # a generated one takes the bias and scale as its epilogue, and the pool no prologue)
    _, module = _generate(ROOT / "tests" / "data" / "mixed" / "conv_scale_pool.py")
    pool = next(k for k in module.kernels if k.kernel_name.endswith("pool_kernel"))
    assert "tl.where(m" not in pool.source and "v = v_pw1.to(tl.float32)" in pool.source


@pytest.mark.compile
def test_span_loads_a_chunk_with_one_vector_load_on_both_targets():
    """KernelBench 41's window where the input length is a multiple of 16 (Triton's launch specialization): each
    chunk one 128-bit load (7 chunks per lane group of 4 fp32 outputs, 5 per 8 bf16 ones), where the window of
    masked loads issues one 32-bit load per tap and output (8 per output, 8 outputs a lane); no spills."""
    from kerntailor.builder import KernelSource, build_many
    from kerntailor.targets import get_target

    sources = []
    for dtype, span, warps in ((None, 0, 4), (None, 1, 4), ("bf16", 1, 2)):   # 16 x 64 tiles
        module = _generate(DATA / "maxpool1d_dilated.py", dtype, {"SPAN": span, "XBLOCK": 1024, "num_warps": warps})[1]
        (kernel,) = module.kernels
        length = re.search(r"\(p1 < (\w+)\)|\(sq < (\w+)\)", kernel.source).group(1 + span)
        pointers = [(name, "D") for name, t in kernel.signature if t.startswith("*")]
        sources.append(KernelSource(source=module.source, kernel_name=kernel.kernel_name, signature=kernel.signature,
                                    constexprs=kernel.constexprs, options=kernel.options,
                                    specialization=(*pointers, (length, "D"))))
    targets = [get_target("h200"), get_target("mi300x")]
    results = build_many(sources, targets, use_cache=False)
    widths = {}
    for i, name in enumerate(("window", "span", "span_bf16")):
        for j, target in enumerate(targets):
            r = results[i * len(targets) + j]
            assert r.ok and not r.facts.spills, (name, target.name, r.error)
            widths[name, target.backend] = dict(r.facts.global_load_widths)
    assert widths["window", "cuda"] == {"ld.global.b32": 64} and widths["window", "hip"] == {"global_load_dword": 32}
    assert widths["span", "cuda"] == {"ld.global.v4.b32": 14} and widths["span", "hip"] == {"global_load_dwordx4": 7}
    assert widths["span_bf16", "cuda"] == {"ld.global.v4.b32": 10}   # 2 lane groups a lane of 32, 1 of 64
    assert widths["span_bf16", "hip"] == {"global_load_dwordx4": 5}


@pytest.mark.compile
def test_generated_kernels_compile_for_gfx942_and_sm90():
    from kerntailor.builder import KernelSource, build_many
    from kerntailor.targets import get_target

    sources = []
    modules = [(f"{path.stem}/{dtype or 'fp32'}", _generate(path, dtype)[1])  # default knobs
               for path, dtype, _ in CASES]
    modules.append(("cumprod_reverse_exclusive", _generate(DATA / "cumsum_middle_axis.py",
                                                           rewrite=_with_flags("prod", True, True))[1]))
    # the sliding schedule: 8 rows of a 4x4 window (11 input rows), and 4 rows of a 3-d pool with a prologue
    modules.append(("maxpool2d_overlap/ROWS=8", _generate(DATA / "maxpool2d_overlap.py", knobs={"ROWS": 8})[1]))
    modules.append(("maxpool3d_pad/ROWS=4", _generate(PROLOGUE / "maxpool3d_pad.py", knobs={"ROWS": 4},
                                                      family="pool")[1]))
    for name, module in modules:
        for k in module.kernels:
            sources.append((name, KernelSource(
                source=module.source, kernel_name=k.kernel_name, signature=k.signature, constexprs=k.constexprs,
                options=k.options)))
    targets = [get_target("mi300x"), get_target("h200")]
    results = build_many([s for _, s in sources], targets, use_cache=False)
    failures = []
    for i, (name, _) in enumerate(sources):
        for j, target in enumerate(targets):
            r = results[i * len(targets) + j]
            if not r.ok or r.facts.spills:
                failures.append(f"{name} {target.arch}: {r.error or f'{r.facts.spills} spills'}")
    assert not failures, failures
