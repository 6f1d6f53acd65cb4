"""NaN and Inf in generated kernels propagate as PyTorch's do (issue #17 item 3).

Interpreter tier: each case generates a module, runs it in one fresh TRITON_INTERPRET=1 process (with
verify/interp.py installed, so that tl.maximum's default maxnum drops a NaN as it does on a GPU), on inputs of
the problem's smallest variant with special values at fixed places, and compares it with eager PyTorch by
torch.testing.assert_close(equal_nan=True): NaN where eager has NaN, the same Inf where eager has Inf.

The special values, in the first rows of the input viewed as (-1, last axis):
(the k-th floating input's moved k places or 11 k places along the row, so that two inputs' NaNs do not meet)
row 0 two NaNs; row 1 two +Inf; row 2 a -Inf, a -0.0 and a 0.0; row 3 (where there is one) -Inf everywhere.

Unit tier: the emitted text (PropagateNan.ALL where a NaN could vanish). Compile tier: a changed kernel
cross-compiles for sm_90 and gfx942.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from helpers import DATA, L1, ROOT, make_module

IEEE = DATA / "ieee"
LOOPED = {"reduction": {"persistent": False, "RBLOCK": 32, "XBLOCK": 1}}

# name: (problem file, knob overrides)
CASES = {
    "relu": (L1 / "relu.py", None),
    "leaky_relu": (L1 / "leaky_relu.py", None),
    "clamp": (IEEE / "clamp.py", None),
    "maximum_minimum": (IEEE / "maximum_minimum.py", None),
    "amax_amin_persistent": (IEEE / "amax_amin_rows.py", None),
    "amax_amin_looped": (IEEE / "amax_amin_rows.py", LOOPED),
    "amax_first_axis": (L1 / "amax_first_axis.py", None),
    "argmax_argmin_persistent": (IEEE / "argmax_argmin_rows.py", None),
    "argmax_argmin_looped": (IEEE / "argmax_argmin_rows.py", LOOPED),
    "argmax_last_axis": (L1 / "argmax_last_axis.py", None),
    "argmax_argmin_middle_axis": (IEEE / "arg_extrema_middle_axis.py", None),   # the strided default (looped)
    "softmax_persistent": (DATA / "codegen_fused" / "tiny_softmax.py", None),
    "softmax_looped": (DATA / "codegen_fused" / "tiny_softmax.py", LOOPED),
    "softmax_long_rows": (L1 / "softmax_long_rows.py", None),
    "log_softmax": (L1 / "log_softmax.py", None),
    "log": (IEEE / "log.py", None),
    "maxpool2d": (L1 / "maxpool2d.py", None),
}

RUNNER = textwrap.dedent('''
    import importlib.util, json, sys
    import torch
    from kerntailor.problem import load_problem
    from kerntailor.verify import interp
    from kerntailor.verify.referee import _largest_numel

    assert interp.install()
    results = {}
    for name, problem_path, kernel_path in json.loads(sys.argv[1]):
        try:
            problem = load_problem(problem_path)
            variant = min((v.name for v in problem.variants), key=lambda n: _largest_numel(problem, n))
            ref = problem.make_model(variant, "cpu", 0).eval()
            spec = importlib.util.spec_from_file_location(f"kernel_{name}", kernel_path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            new = mod.ModelNew(*problem.init_inputs(variant))
            new.load_state_dict(ref.state_dict())
            inputs = problem.make_inputs(variant, "cpu", 0)
            for k, x in enumerate(inputs):
                if isinstance(x, torch.Tensor) and x.is_floating_point():
                    rows = x.view(-1, x.shape[-1])
                    last = rows.shape[1]
                    rows[0, (5 + 11 * k) % last] = rows[0, (last * 2) // 3 - k] = float("nan")
                    rows[1, (7 + 11 * k) % last] = rows[1, last // 2 - k] = float("inf")
                    rows[2, (3 + 11 * k) % last] = float("-inf")
                    rows[2, last - 1], rows[2, last // 3] = -0.0, 0.0
                    if rows.shape[0] > 3:
                        rows[3] = float("-inf")
            with torch.no_grad():
                want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                got = new(*inputs)
            want = want if isinstance(want, (tuple, list)) else (want,)
            got = got if isinstance(got, (tuple, list)) else (got,)
            for w, g in zip(want, got, strict=True):
                torch.testing.assert_close(g, w, equal_nan=True, rtol=1e-4, atol=1e-5)
            nonfinite = sum(int((~torch.isfinite(w)).sum()) for w in want if w.is_floating_point())
            results[name] = {"ok": True, "nonfinite": nonfinite}
        except Exception as e:
            results[name] = {"ok": False, "error": f"{type(e).__name__}: {e}"[:1500]}
    print(json.dumps(results))
''')


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every case run once, in one interpreter process: {name: {"ok": ..., "error" or "nonfinite": ...}}."""
    tmp = tmp_path_factory.mktemp("ieee")
    jobs = []
    for name, (path, knobs) in CASES.items():
        kernel = tmp / f"{name}.py"
        kernel.write_text(make_module(path, knobs).source)
        jobs.append((name, str(path), str(kernel)))
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(jobs)], capture_output=True, text=True,
                          env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.interpreter
@pytest.mark.parametrize("name", list(CASES))
def test_special_values_propagate_as_in_eager(outcomes, name):
    result = outcomes[name]
    assert result["ok"], result["error"]
    if not name.startswith("argmax"):   # integer outputs; every floating one holds NaN or Inf here
        assert result["nonfinite"] > 0


@pytest.mark.interpreter
def test_the_interpreter_drops_nan_in_maxnum_as_a_gpu_does():
    """With interp.install(), the default tl.maximum (maxnum) returns the other operand, as the GPU does; the
    PropagateNan.ALL form keeps the NaN. Without this the interpreter would hide a kernel's lost NaN."""
    script = textwrap.dedent('''
        import torch, triton, triton.language as tl
        from kerntailor.verify import interp
        assert interp.install()

        @triton.jit
        def k(x_ptr, y_ptr, a_ptr, b_ptr):
            i = tl.arange(0, 4)
            x = tl.load(x_ptr + i)
            y = tl.load(y_ptr + i)
            tl.store(a_ptr + i, tl.maximum(x, y))
            tl.store(b_ptr + i, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))

        x = torch.tensor([float("nan"), 1.0, 2.0, float("nan")])
        y = torch.tensor([0.0, float("nan"), 3.0, float("nan")])
        a, b = torch.empty(4), torch.empty(4)
        k[(1,)](x, y, a, b)
        print(a.tolist(), b.tolist())
    ''')
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    a, b = _two_lists(proc.stdout)
    assert a[:3] == [0.0, 1.0, 3.0] and a[3] != a[3]
    assert all(v != v for v in (b[0], b[1], b[3])) and b[2] == 2.0


def _two_lists(stdout: str) -> tuple[list[float], list[float]]:
    line = stdout.strip().splitlines()[-1].replace("nan", "NaN")
    first, second = line.split("] [")
    return json.loads(first + "]"), json.loads("[" + second)


def test_relu_max_and_reductions_keep_nan_in_the_text():
    """Unit: the emitted forms that keep a NaN (the interpreter cases above check their values)."""
    from kerntailor.codegen.render import ExprRenderer
    from kerntailor.ir.expr import Const, Load, Op

    render = ExprRenderer(lambda load, gather, valid, i: f"x{load.operand}", lambda axis: f"i{axis}").render
    assert render(Op("relu", (Load(0, "fp32"),), "fp32")) == "tl.where(x0 < 0, 0.0, x0)"
    assert render(Op("max", (Load(0, "fp32"), Const(0.0, "fp32")), "fp32")) == \
        "tl.maximum(x0, 0.0, propagate_nan=tl.PropagateNan.ALL)"
    assert render(Op("min", (Load(0, "i32"), Load(1, "i32")), "i32")) == "tl.minimum(x0, x1)"
    looped = make_module(IEEE / "amax_amin_rows.py", LOOPED).source
    assert "propagate_nan=tl.PropagateNan.ALL" in looped
    # the lanes' values into the row's: one NaN-keeping reduction on a GPU (codegen/helpers/reduce.py)
    for op in ("max", "min"):
        assert f"_row_{op}(acc_" in looped
        assert f"_row_{op} = _row_{op}_flagged if _INTERPRET else _row_{op}_hw" in looped
    assert "return tl.reduce(x, 1, _maximum_nan, keep_dims=True)" in looped


COMPILED = {**{name: CASES[name] for name in ("clamp", "amax_amin_looped", "argmax_argmin_persistent",
                                                "argmax_argmin_looped", "softmax_looped")},
            "gemm_logsumexp_row_tail": (ROOT / "problems" / "level2" / "gemm_logsumexp.py", None),
            "gemm_bias_relu": (ROOT / "problems" / "level2" / "gemm_bias_relu.py", None)}


@pytest.mark.compile
@pytest.mark.parametrize("name", list(COMPILED))
def test_nan_keeping_kernels_cross_compile(name, tmp_path):
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    path, knobs = COMPILED[name]
    module = make_module(path, knobs)
    sources = [kernel_source(module.source, kernel) for kernel in module.kernels]
    targets = [get_target("mi300x"), get_target("h200")]
    results = build_many(sources, targets, cache_dir=tmp_path / "build-cache")
    assert len(results) == len(sources) * len(targets)
    for r in results:
        assert r.ok and r.usable, f"{r.target}: {r.error}"
