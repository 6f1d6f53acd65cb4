"""The Triton helpers kernel.py copies (codegen/helpers/): each is its module's real source, the modules import,
and (interpreter) the functions themselves compute what they claim: the fp8 encoding bit for bit against torch's
fp8 dtypes and precision.pow2_scale, the portable math against float64, the tf32 rounding against its
definition."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from kerntailor.codegen import helpers
from kerntailor.codegen.helpers import dot, fp8_e4m3fn, fp8_e4m3fnuz, fp8_quantize, host, math
from kerntailor.codegen.render import HELPER_PRELUDE
from kerntailor.precision import FP8_FORMATS

ROOT = Path(__file__).resolve().parent.parent
FORMAT_MODULES = {"e4m3fn": fp8_e4m3fn, "e4m3fnuz": fp8_e4m3fnuz}


def test_helper_text_is_the_modules_source():
    """kernel.py gets the functions as written in the helper modules, and a line that picks a form per run."""
    assert helpers.source(math._tanh_portable) in helpers.math_helper("tanh")
    assert helpers.math_helper("tanh").endswith("_tanh = _tanh_portable if _INTERPRET else _tanh_libdevice\n")
    assert helpers.math_helper("tanh_softplus") == helpers.source(math._tanh_softplus)
    for name in ("tf32", "tf32x3", "fp8"):
        text = helpers.dot_helper(name)
        assert helpers.source(getattr(dot, f"_dot_{name}_hw")) in text and f"_dot_{name} = " in text
    assert helpers.source(host._tma_scratch) in helpers.tma_allocator()
    for name, fmt in FP8_FORMATS.items():
        text = helpers.fp8_helpers(fmt)
        assert text.startswith(f"FP8_DTYPE = torch.{fmt.torch_dtype}")
        for fn in (FORMAT_MODULES[name]._fp8_encode, FORMAT_MODULES[name]._to_fp8_hw, fp8_quantize._fp8_quantize,
                   fp8_quantize._fp8_quantize_kernel):
            assert helpers.source(fn) in text
        assert f"tl.{fmt.tl_type})" in text      # the GPU's cast to this format


def test_every_helper_text_is_a_valid_module_part():
    """Each text, after kernel.py's imports and prelude, compiles (it is defined at module level)."""
    texts = [helpers.math_helper(n) for n in helpers.MATH_HELPERS]
    texts += [helpers.dot_helper(n) for n in ("round_tf32", "tf32", "tf32x3", "16bit", "fp8")]
    texts += [helpers.tma_allocator(), helpers.num_programs()] + [helpers.fp8_helpers(f) for f in FP8_FORMATS.values()]
    texts += [helpers.channels_last_input(), helpers.channels_last_weight(), helpers.convt_weight()]
    for text in texts:
        compile("import torch\nimport triton\nimport triton.language as tl\n" + HELPER_PRELUDE + text, "kernel.py",
                "exec")


def _run_interpreted(script: str, tmp_path: Path) -> dict:
    """Run `script` in a fresh process under TRITON_INTERPRET=1 (set before triton.jit runs)."""
    path = tmp_path / "run.py"
    path.write_text(script)
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.interpreter
@pytest.mark.parametrize("fmt", list(FP8_FORMATS))
def test_fp8_helpers_match_torch_and_the_policy_bit_for_bit(fmt, tmp_path):
    """_fp8_encode == torch's cast to the format (its bit pattern) on every representable magnitude, the
    midpoints between neighbours (ties to even), subnormals and zeros, up to the sign of zero: -0 and what rounds
    to it come out +0 (on the GPU path too, which rounds with _fp8_round before its cast; a product with either
    zero is zero). _fp8_decode(code) == torch's value; _fp8_round == decode(encode); _fp8_scale ==
    precision.pow2_scale."""
    script = textwrap.dedent(f'''
        import json
        import torch
        import triton
        import triton.language as tl
        from kerntailor.codegen.helpers import fp8_{fmt} as h
        from kerntailor.precision import FP8_FORMATS, pow2_scale

        fmt = FP8_FORMATS[{fmt!r}]
        dtype = getattr(torch, fmt.torch_dtype)

        @triton.jit
        def run(x_ptr, code_ptr, back_ptr, round_ptr, scale_ptr, inv_ptr, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + i, mask=i < n)
            code = h._fp8_encode(x)
            tl.store(code_ptr + i, code, mask=i < n)
            tl.store(back_ptr + i, h._fp8_decode(code), mask=i < n)
            tl.store(round_ptr + i, h._fp8_round(x), mask=i < n)
            scale, inv = h._fp8_scale(tl.abs(x))
            tl.store(scale_ptr + i, scale, mask=i < n)
            tl.store(inv_ptr + i, inv, mask=i < n)

        codes = torch.arange(256, dtype=torch.uint8)
        values = codes.view(dtype).float()
        finite = values[torch.isfinite(values)].unique()
        mids = (finite[1:] + finite[:-1]) / 2                     # ties: round to even
        x = torch.cat([finite, mids, torch.tensor([0.0, -0.0, 1e-30, -3.3e-3, 5e-4])]).contiguous()
        n = x.numel()
        out = {{k: torch.empty(n, dtype=t) for k, t in (("code", torch.uint8), ("back", torch.float32),
                                                       ("round", torch.float32), ("scale", torch.float32),
                                                       ("inv", torch.float32))}}
        run[(triton.cdiv(n, 256),)](x, out["code"], out["back"], out["round"], out["scale"], out["inv"], n, BLOCK=256)
        want_code = x.to(dtype).view(torch.uint8)
        want_back = want_code.view(dtype).float()
        zero = want_back == 0
        bad_code = [(float(a), int(g), int(w)) for a, g, w, z in zip(x, out["code"], want_code, zero)
                    if g != w and not (z and g == 0)]
        bad_back = int((out["back"] != want_back).sum())    # -0.0 == 0.0: values, not bits
        bad_round = int((out["round"] != want_back).sum())
        scale = pow2_scale(x.abs(), fmt)
        bad_scale = int((out["scale"] != scale).sum()) + int((out["scale"] * out["inv"] != 1.0).sum())
        every = torch.arange(256, dtype=torch.uint8)
        every = every[torch.isfinite(every.view(dtype).float())]
        print(json.dumps({{"n": n, "bad_code": bad_code[:5], "bad_back": bad_back, "bad_round": bad_round,
                          "bad_scale": bad_scale, "codes": int(want_code.unique().numel()),
                          "finite_codes": int(every.numel())}}))
    ''')
    result = _run_interpreted(script, tmp_path)
    assert result["bad_code"] == [] and result["bad_back"] == 0 and result["bad_round"] == 0, result
    assert result["bad_scale"] == 0, result
    assert result["codes"] >= result["finite_codes"] - 1, result   # every finite code was produced (±0 fold in fnuz)


@pytest.mark.interpreter
def test_channels_last_input_copies_exactly_as_torch_does(tmp_path):
    """kernel.py's tiled channels-last copy (host._channels_last_input, as copied into kernel.py after its prelude)
    gives torch's own copy bit for bit: 4-d and 5-d, channels and positions past one 64 x 64 tile and not
    multiples of it, a permuted (non-contiguous) input, bf16 and fp32; an input already channels-last is returned
    as it is; a CPU tensor outside the interpreter takes torch's copy (the module's own function)."""
    imports = "import torch\nimport triton\nimport triton.language as tl\n"
    text = imports + HELPER_PRELUDE + helpers.channels_last_input()
    got = _run_interpreted(text + textwrap.dedent("""
        import json
        torch.manual_seed(0)
        cases = []
        for shape, fmt in (((2, 70, 9, 15), torch.channels_last), ((3, 5, 3, 5, 9), torch.channels_last_3d),
                           ((1, 3, 1, 1), torch.channels_last)):
            for dtype in (torch.bfloat16, torch.float32):
                x = torch.randn(shape, dtype=dtype)
                for src in (x, x.transpose(2, 3).contiguous().transpose(2, 3)):   # the second: not contiguous
                    y = _channels_last_input(src, fmt)
                    ref = src.contiguous(memory_format=fmt)
                    cases.append([list(shape), str(dtype), src.is_contiguous(), bool(torch.equal(y, ref)),
                                  y.is_contiguous(memory_format=fmt), y.stride() == ref.stride()])
        cl = torch.randn(2, 70, 9, 15).contiguous(memory_format=torch.channels_last)
        print(json.dumps({"cases": cases, "same": _channels_last_input(cl, torch.channels_last) is cl}))
        """), tmp_path)
    assert got["same"] and len(got["cases"]) == 12
    for shape, dtype, contiguous, equal, is_cl, strides in got["cases"]:
        assert equal and is_cl and strides, (shape, dtype, contiguous)
    x = torch.randn(2, 3, 4, 5)
    ref = x.contiguous(memory_format=torch.channels_last)
    assert torch.equal(host._channels_last_input(x, torch.channels_last), ref)


@pytest.mark.interpreter
def test_portable_math_and_tf32_rounding(tmp_path):
    """The interpreter's forms of tanh, log1p, expm1 and tanh(softplus) within 4 fp32 ulp of float64 (tiny, huge
    and negative arguments), the 16-bit results' expm1 within 1e-5 relative; _round_tf32 keeps 10 mantissa bits,
    rounding to nearest, ties away from zero."""
    script = textwrap.dedent('''
        import json
        import torch
        import triton
        import triton.language as tl
        from kerntailor.codegen.helpers import dot, math as m

        @triton.jit
        def run(x_ptr, tanh_ptr, log1p_ptr, expm1_ptr, mish_ptr, tf32_ptr, e16_ptr, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + i, mask=i < n)
            tl.store(tanh_ptr + i, m._tanh_portable(x), mask=i < n)
            tl.store(log1p_ptr + i, m._log1p_portable(x), mask=i < n)
            tl.store(expm1_ptr + i, m._expm1_portable(x), mask=i < n)
            tl.store(mish_ptr + i, m._tanh_softplus(x), mask=i < n)
            tl.store(tf32_ptr + i, dot._round_tf32(x), mask=i < n)
            tl.store(e16_ptr + i, m._expm1_16(x), mask=i < n)

        torch.manual_seed(0)
        x = torch.cat([torch.logspace(-8, 1.3, 300), -torch.logspace(-8, 1.3, 300), torch.randn(400) * 3,
                       torch.tensor([0.0, 0.5, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11])]).float().contiguous()
        n = x.numel()
        outs = [torch.empty(n) for _ in range(6)]
        run[(triton.cdiv(n, 256),)](x, *outs, n, BLOCK=256)
        x64 = x.double()
        exact = [torch.tanh(x64), torch.log1p(x64.clamp_min(-0.999)), torch.expm1(x64),
                 torch.tanh(torch.nn.functional.softplus(x64))]

        def ulps(got, want):
            ok = torch.isfinite(want)
            step = torch.finfo(torch.float32).eps * want[ok].abs().clamp_min(torch.finfo(torch.float32).tiny)
            return float(((got.double()[ok] - want[ok]).abs() / step).max())

        usable = x > -0.999
        errors = {"tanh": ulps(outs[0], exact[0]), "log1p": ulps(outs[1][usable], exact[1][usable]),
                  "expm1": ulps(outs[2], exact[2]), "tanh_softplus": ulps(outs[3], exact[3])}
        bits = x.view(torch.int32)
        want = ((bits + 0x1000) & -0x2000).view(torch.float32)    # cvt.rna.tf32.f32
        tf32_ok = bool(torch.equal(outs[4], want)) and bool(((outs[4].view(torch.int32) & 0x1FFF) == 0).all())
        ties = [float(v) for v in outs[4][-2:]]
        e16 = float(((outs[5].double() - exact[2]).abs() / exact[2].abs().clamp_min(1e-30)).max())
        print(json.dumps({"ulps": errors, "tf32_ok": tf32_ok, "ties": ties, "expm1_16_rel": e16}))
    ''')
    result = _run_interpreted(script, tmp_path)
    assert all(err <= 4.0 for err in result["ulps"].values()), result["ulps"]
    assert result["tf32_ok"]
    assert result["ties"] == [1 + 2.0 ** -10, 1 + 2.0 ** -9]   # halfway cases round away from zero
    # the 16-bit results' expm1: relative error below 1e-5 everywhere (a bf16 / fp16 half-ulp: 2e-3 / 4.9e-4)
    assert result["expm1_16_rel"] < 1e-5, result["expm1_16_rel"]


# --- Inf and NaN through the tf32x3 split and the NaN-keeping row max/min ------------------------------------

def _special_script(device: str, dot_form: str, row_forms: tuple[str, ...]) -> str:
    """A script printing, as JSON, how the tf32x3 dot `dot_form` and the row max/min forms `row_forms` compare with
    IEEE float64 (the dot) and torch.amax/amin (the rows) on inputs holding NaN, ±Inf and ±0."""
    return textwrap.dedent(f'''
        import json
        import torch
        import triton
        import triton.language as tl
        from kerntailor.codegen.helpers import dot, reduce
        from kerntailor.verify import interp

        interp.install()   # under the interpreter: tl.dot(input_precision="tf32x3") as the referee runs it
        DEV = {device!r}

        @triton.jit
        def run_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr, HW: tl.constexpr):
            r = tl.arange(0, N)
            a = tl.load(a_ptr + r[:, None] * N + r[None, :])
            b = tl.load(b_ptr + r[:, None] * N + r[None, :])
            acc = tl.full([N, N], 0.5, tl.float32)
            if HW:
                c = tl.dot(a, b, acc, input_precision="tf32x3")
            else:
                c = dot.{dot_form}(a, b, acc)
            tl.store(c_ptr + r[:, None] * N + r[None, :], c)

        torch.manual_seed(0)
        n = 16
        a, b = torch.randn(n, n), torch.randn(n, n)
        a[0, 3] = float("inf"); a[1, 5] = float("-inf"); a[2, 7] = float("nan")
        a[3, 0] = a[3, 1] = float("inf"); b[0, 4] = 1.0; b[1, 4] = -1.0    # inf - inf in one output
        a[4, 9] = 1.0; a[4, 10] = 0.5; a[4, 11] = 3.0; b[9, 8] = float("inf"); b[10, 8] = b[11, 8] = 0.0
        b[2, 2] = float("-inf"); b[6, 1] = float("inf"); b[5, 6] = 0.0      # Inf·0 in (1, 6); tf32 a_lo = 0 at (4, 8)
        want = (a.double()[:, :, None] * b.double()[None, :, :]).sum(1) + 0.5   # elementwise IEEE products
        result = {{}}
        for name, hw in (("dot", 0), ("dot_referee", 1)):
            if hw and DEV != "cpu":
                continue
            c = torch.empty(n, n, device=DEV)
            run_dot[(1,)](a.to(DEV), b.to(DEV), c, N=n, HW=hw)
            c = c.cpu().double()
            fin = torch.isfinite(want)
            result[name] = {{"nan_same": bool(torch.equal(c.isnan(), want.isnan())),
                            "inf_same": bool(torch.equal(c[want.isinf()], want[want.isinf()])
                                             and torch.equal(c.isinf(), want.isinf())),
                            "finite_err": float(((c[fin] - want[fin]).abs() / want[fin].abs().clamp_min(1)).max()),
                            "nan": int(want.isnan().sum()), "inf": int(want.isinf().sum())}}

        @triton.jit
        def run_rows(x_ptr, mx_ptr, mn_ptr, pr_ptr, L: tl.constexpr, R: tl.constexpr, FORM: tl.constexpr):
            r = tl.arange(0, R)
            x = tl.load(x_ptr + r[:, None] * L + tl.arange(0, L)[None, :])
            if FORM == 0:
                mx = reduce._row_max_hw(x)
                mn = reduce._row_min_hw(x)
                pr = reduce._row_prod_hw(x)
            else:
                mx = reduce._row_max_flagged(x)
                mn = reduce._row_min_flagged(x)
                pr = reduce._row_prod_scanned(x)
            tl.store(mx_ptr + r[:, None], mx)
            tl.store(mn_ptr + r[:, None], mn)
            tl.store(pr_ptr + r[:, None], pr)

        nan, inf = float("nan"), float("inf")
        rows = torch.randn(8, 8)
        rows[0, 3] = nan                                        # one NaN
        rows[1] = -inf                                          # a row of -Inf
        rows[2, 0], rows[2, 7] = inf, nan                       # +Inf and NaN
        rows[3] = nan                                           # all NaN
        rows[4, 2], rows[4, 5] = inf, -inf                      # both Infs
        rows[5] = torch.tensor([-0.0, 0.0, -1.0, 2.0, -3.0, 0.0, 1.0, -0.0])
        rows[6] = inf
        for form, name in enumerate(("hw", "flagged")):
            if name not in {row_forms!r}:
                continue
            mx, mn, pr = (torch.empty(8, 1, device=DEV) for _ in range(3))
            run_rows[(1,)](rows.to(DEV), mx, mn, pr, L=8, R=8, FORM=form)
            same = [torch.equal(g.cpu().isnan(), w.isnan()) and torch.equal(g.cpu()[~w.isnan()], w[~w.isnan()])
                    for g, w in ((mx, rows.amax(1, keepdim=True)), (mn, rows.amin(1, keepdim=True)))]
            want = rows.prod(1, keepdim=True)   # NaN rows 0, 2, 3 (inf * 0 on none), inf rows 1, 4, 6, 0 row 5
            got = pr.cpu()
            same.append(torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())
                        and torch.allclose(got[~want.isnan()], want[~want.isnan()], rtol=1e-6, atol=0))
            result["rows_" + name] = same
        print(json.dumps(result))
    ''')


def _check_special(result: dict, dot_names: tuple[str, ...], row_forms: tuple[str, ...]) -> None:
    for name in dot_names:
        r = result[name]
        assert r["nan"] >= 4 and r["inf"] >= 3, r          # the draw holds what it means to
        assert r["nan_same"] and r["inf_same"], (name, r)
        assert r["finite_err"] < 1e-5, (name, r)           # tf32x3: about fp32 accuracy on the finite outputs
    for form in row_forms:
        assert result["rows_" + form] == [True, True, True], (form, result)   # max, min, prod


@pytest.mark.interpreter
def test_tf32x3_split_and_row_extremes_keep_inf_and_nan(tmp_path):
    """The interpreter's tf32x3 (kernel.py's emulation, and the referee's tl.dot(input_precision="tf32x3")) gives
    NaN and ±Inf where the IEEE product has them: an Inf operand's low part is inf - inf = NaN, which the small
    products must not carry into the result (Triton's F32DotTC zeroes their NaNs; so does the emulation). Both
    forms of _row_max/_row_min equal torch.amax/amin, NaN where a row holds one (the GPU form, a tl.reduce with a
    NaN-keeping combine, runs here through the interpreter's element-by-element reduce); both forms of _row_prod
    equal torch.prod, its NaNs and infinities where torch's are."""
    result = _run_interpreted(_special_script("cpu", "_dot_tf32x3_emulated", ("hw", "flagged")), tmp_path)
    _check_special(result, ("dot", "dot_referee"), ("hw", "flagged"))


@pytest.mark.gpu
def test_tf32x3_and_row_extremes_keep_inf_and_nan_on_the_gpu(tmp_path):
    """The GPU forms: tl.dot(input_precision="tf32x3") as Triton compiles it, and _row_max_hw/_row_min_hw."""
    path = tmp_path / "run.py"
    path.write_text(_special_script("cuda", "_dot_tf32x3_hw", ("hw",)))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {"PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    _check_special(json.loads(done.stdout.strip().splitlines()[-1]), ("dot",), ("hw",))


@pytest.mark.compile
def test_triton_tf32x3_drops_the_nan_of_the_small_products_on_sm90(tmp_path):
    """What the emulation copies (dot.py): Triton's F32DotTC rewrites tl.dot(input_precision="tf32x3") into two
    small tf32 products, a NaN-to-zero select on their sum (`arith.cmpf uno` + `arith.select`), then the big
    product. Should an upgrade of Triton lose that select, Inf operands give NaN on the GPU and this fails."""
    script = textwrap.dedent('''
        import json, re
        import triton
        import triton.language as tl
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        @triton.jit
        def k(a_ptr, b_ptr, c_ptr):
            r = tl.arange(0, 32)
            a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
            b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
            tl.store(c_ptr + r[:, None] * 32 + r[None, :], tl.dot(a, b, input_precision="tf32x3"))

        src = ASTSource(fn=k, signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"}, constexprs={})
        ttgir = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ttgir"]
        steps = [m.group(1) for m in re.finditer(r"(tt\\.dot|arith\\.cmpf uno|arith\\.select)\\b", ttgir)]
        print(json.dumps(steps))
    ''')
    path = tmp_path / "run.py"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {"PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    assert steps == ["tt.dot", "tt.dot", "arith.cmpf uno", "arith.select", "tt.dot"], steps
