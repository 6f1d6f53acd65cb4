"""verify/interp.py's bf16 casts: under the referee's strict interpreter an fp32 -> bf16 cast rounds to nearest even,
bit for bit as torch's .to(torch.bfloat16) and a GPU's conversion do (Triton 3.6's interpreter truncates), and an
explicit round-toward-zero cast is still the interpreter's own (toward zero on normal values)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from kerntailor.verify.interp import _fp32_to_bf16

SPECIAL = [float("inf"), -float("inf"), float("nan"), 3.4e38, -3.39e38, 1e-40, -1e-42, 0.0, -0.0,
           1.00390625, 1.01171875, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8]   # the last two: ties to even, down and up


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).numpy().view(np.uint16)


def test_the_rounding_is_torchs_bit_for_bit():
    torch.manual_seed(0)
    x = torch.cat([torch.randn(10_000) * 10, torch.randn(1000) * 1e-39, torch.tensor(SPECIAL)])
    got, want = _fp32_to_bf16(x.numpy()), _bits(x.to(torch.bfloat16))
    nan = np.isnan(x.numpy())
    assert (got[~nan] == want[~nan]).all()
    assert ((got[nan] & 0x7F80) == 0x7F80).all() and ((got[nan] & 0x7F) != 0).all()   # a NaN stays a NaN


@pytest.mark.interpreter
def test_a_kernels_cast_rounds_to_nearest_even_and_rtz_still_truncates():
    script = textwrap.dedent('''
        import json
        import sys
        import torch
        import triton
        import triton.language as tl
        from kerntailor.verify import interp

        assert interp.install()

        @triton.jit
        def run(x_ptr, rne_ptr, rtz_ptr, N: tl.constexpr):
            i = tl.arange(0, N)
            x = tl.load(x_ptr + i)
            tl.store(rne_ptr + i, x.to(tl.bfloat16))
            tl.store(rtz_ptr + i, x.to(tl.bfloat16, fp_downcast_rounding="rtz"))

        torch.manual_seed(0)
        special = torch.tensor([float(v) for v in json.loads(sys.argv[1])])
        x = torch.cat([torch.randn(1024 - special.numel()) * 10, special]).float()
        rne, rtz = (torch.empty(1024, dtype=torch.bfloat16) for _ in range(2))
        run[(1,)](x, rne, rtz, N=1024)
        want = x.to(torch.bfloat16)
        same = (rne.view(torch.int16) == want.view(torch.int16)) | (rne.isnan() & want.isnan())
        normal = slice(0, 1024 - special.numel())   # the interpreter's own conversion (rtz) of normal values
        below = (rtz.float()[normal].abs() <= x[normal].abs()).all()
        print(json.dumps({"rne_exact": bool(same.all()), "rtz_toward_zero": bool(below),
                          "rtz_differs": int((rtz.view(torch.int16) != want.view(torch.int16)).sum())}))
    ''')
    run = subprocess.run([sys.executable, "-c", script, json.dumps([str(v) for v in SPECIAL])], capture_output=True,
                         text=True, timeout=300,
                         env=dict(os.environ, TRITON_INTERPRET="1"))
    assert run.returncode == 0, run.stderr[-3000:]
    r = json.loads(run.stdout.strip().splitlines()[-1])
    assert r["rne_exact"] and r["rtz_toward_zero"] and r["rtz_differs"] > 100, r
