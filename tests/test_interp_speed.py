"""verify/interp.py's two time savers change no result: with install() the overflow sanitizer (whose device_assert
is a no-op while `debug` is off) is off, and a launch patches the language once per module namespace instead of on
every jit call from inside a kernel. One script runs the same kernel (jit helpers, tl.sum / tl.max, int32
arithmetic that wraps) under the stock interpreter and under install(), in separate processes: the outputs agree
bit for bit and the patch count falls from once a call to once a namespace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json
    import sys
    import torch
    import triton
    import triton.language as tl
    from triton.runtime import interpreter as I

    if sys.argv[1] == "installed":
        from kerntailor.verify import interp
        assert interp.install()
    calls = []
    patch = I._patch_lang
    I._patch_lang = lambda fn: calls.append(fn.__name__) or patch(fn)

    @triton.jit
    def _scaled(x, k):
        return x * k

    @triton.jit
    def run(x_ptr, out_ptr, wrap_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        i = pid * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + i, mask=i < n, other=0.0)
        row = tl.sum(_scaled(x, 2.0), 0) + tl.max(x, 0)
        tl.store(out_ptr + i, _scaled(x, row), mask=i < n)
        big = (pid + 1) * 65536
        tl.store(wrap_ptr + pid, big * 65536 + 7)   # int32: wraps, never asserted while debug is off

    torch.manual_seed(0)
    programs, block = 64, 16
    x = torch.randn(programs * block)
    out, wrap = torch.empty_like(x), torch.empty(programs, dtype=torch.int32)
    run[(programs,)](x, out, wrap, x.numel(), BLOCK=block)
    print(json.dumps({"out": out.view(torch.int32).tolist(), "wrap": wrap.tolist(), "patches": len(calls),
                      "sanitize": I.interpreter_builder.options.sanitize_overflow}))
''')


def _run(mode: str) -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.interpreter
def test_the_time_savers_change_no_result_and_patch_once_a_namespace():
    stock, installed = _run("stock"), _run("installed")
    assert installed["out"] == stock["out"]      # fp32 bits
    assert installed["wrap"] == stock["wrap"]    # the int32 wrap, as on a GPU without debug
    assert stock["sanitize"] is True and installed["sanitize"] is False
    # stock: the launch's patch, then one per jit call of every program (_scaled x2, tl.sum, tl.max and their
    # own calls); installed: the launch's, then one per module namespace (this file's, triton.language's)
    assert stock["patches"] >= 1 + 4 * 64
    assert installed["patches"] <= 4
