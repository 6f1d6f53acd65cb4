"""The observed-operators check (observe.py) and the judge's side of the line to the candidate (channel.py).

Unit tier, in this process: what a forward runs is named however it is spelled; plumbing is not a finding;
a caller allows exactly the operators it names; a legit kernel under Triton's interpreter is clean (the
interpreter's own copies are not the candidate's). The channel never unpickles what a candidate sends and
refuses anything that does not match its own description.
"""

from __future__ import annotations

import os
import pickle
import socket

import numpy as np
import pytest
import torch

from kerntailor.verify.channel import Channel, Opaque, ProtocolError, decode_values, encode_values
from kerntailor.verify.observe import observed

x = torch.randn(4, 8)


def _seen(fn, allowed=frozenset()):
    with torch.no_grad(), observed(allowed, "cpu") as seen:
        fn()
    return seen.findings()


@pytest.mark.parametrize("spelling", [
    lambda: torch.softmax(x, 1),
    lambda: getattr(torch, "soft" + "max")(x, 1),
    lambda: torch.__dict__["softmax"](x, 1),
    lambda: torch.softmax(x, 1),
    lambda _f=torch.softmax: _f(x, 1),
    lambda: x.softmax(1),
    lambda: torch.nn.functional.softmax(x, dim=1),
], ids=["plain", "getattr", "__dict__", "builtins", "default-arg", "method", "functional"])
def test_a_library_call_is_named_however_it_is_spelled(spelling):
    found = _seen(spelling)
    assert found and "aten._softmax.default" in found[0]


def test_plumbing_is_not_a_finding():
    def plumbing():
        y = torch.empty_like(x)
        z = torch.empty(3, 4)
        y.copy_(x)
        y.zero_()
        y.fill_(1.0)
        x.t().contiguous()
        x.view(-1)
        x.reshape(2, 16)
        x.unsqueeze(0).expand(2, 4, 8)
        x.permute(1, 0)
        x.to(torch.float64)
        x.new_empty(3)
        torch.zeros(3)
        torch.full((2,), 3.0)
        torch.arange(4)
        torch.tensor([1.0])
        z[0] = x[0, :4]
    assert _seen(plumbing) == []


def test_host_reads_are_findings():
    assert "Tensor.numpy()" in _seen(lambda: x.numpy())[0]
    assert "Tensor.tolist()" in _seen(lambda: x.tolist())[0]
    assert "Tensor.item()" in _seen(lambda: x[0, 0].item())[0]
    assert "Tensor.item()" in _seen(lambda: float(x[0, 0]))[0]
    assert "numpy.asarray" in " ".join(_seen(lambda: np.asarray(x)))


def test_allowed_ops_allow_exactly_those():
    w = torch.randn(8, 8)
    assert _seen(lambda: torch.matmul(x, w), frozenset({"aten.mm.default"})) == []
    found = _seen(lambda: (torch.matmul(x, w), torch.relu(x)), frozenset({"aten.mm.default"}))
    assert len(found) == 1 and "aten.relu.default" in found[0]
    assert "aten.mm.default" in _seen(lambda: torch.matmul(x, w), frozenset({"aten.convolution.default"}))[0]


def test_a_custom_op_is_followed_into_its_implementation():
    @torch.library.custom_op("kerntailor_test::hidden_softmax", mutates_args=())
    def hidden_softmax(t: torch.Tensor) -> torch.Tensor:
        return torch.softmax(t, -1)

    found = " ".join(_seen(lambda: hidden_softmax(x)))
    assert "softmax" in found


def test_inside_a_custom_op_the_same_calls_are_recorded_as_in_forward():
    """kernel.py's launches run as a custom op (#17 item 4), whose kernel runs below autograd: there composites
    (torch.matmul, Tensor.item) reach the mode undecomposed and Python-level host reads (numpy, tolist) dispatch
    nothing. The findings must be those of the same calls made in forward(), neither fewer nor renamed: an allowed
    library product (aten.mm) stays allowed, a host read stays a host read."""
    w = torch.randn(8, 8)

    def body(t):
        t.numpy()
        t.tolist()
        t.sum().item()
        t.to("cpu")
        return torch.matmul(t, w) + torch.relu(t)

    @torch.library.custom_op("kerntailor_test::same_calls", mutates_args=())
    def same_calls(t: torch.Tensor) -> torch.Tensor:
        return body(t)

    in_forward, in_op = _seen(lambda: body(x)), _seen(lambda: same_calls(x))
    assert sorted(in_op) == sorted(in_forward) and len(in_op) == 7, in_op
    assert any("Tensor.numpy()" in f for f in in_op) and any("Tensor.item()" in f for f in in_op)
    assert _seen(lambda: same_calls(x), frozenset({"aten.mm.default", "aten.add.Tensor", "aten.relu.default",
                                                   "aten.sum.default"})) == [f for f in in_op if "host" in f]


@pytest.mark.interpreter
def test_a_legit_kernel_under_the_interpreter_is_clean(monkeypatch):
    """The interpreter copies a launch's arguments to and from the host; that bookkeeping is not the
    candidate's and must not count (TRITON_INTERPRET=1 read at triton's import: a fresh process)."""
    import subprocess
    import sys

    code = ("import torch, triton, triton.language as tl\n"
            "from kerntailor.verify import interp\n"
            "from kerntailor.verify.observe import observed\n"
            "interp.install()\n"
            "@triton.jit\n"
            "def k(x_ptr, y_ptr, n, B: tl.constexpr):\n"
            "    o = tl.program_id(0) * B + tl.arange(0, B)\n"
            "    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)\n"
            "x = torch.randn(1000)\n"
            "with observed(frozenset(), 'cpu') as seen:\n"
            "    y = torch.empty_like(x)\n"
            "    k[(4,)](x, y, 1000, B=256)\n"
            "assert torch.equal(y, x * 2)\n"
            "print(seen.findings())\n")
    env = dict(os.environ, TRITON_INTERPRET="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


# --- the channel -------------------------------------------------------------------------------------------

def test_values_round_trip_as_bytes():
    values = [torch.randn(3, 4), torch.tensor([True, False]), torch.zeros(0, 3), torch.ones(2, dtype=torch.bfloat16),
              torch.randn(4, 4).t(), 3, 2.5, None, "text"]
    descs, segments, _ = encode_values(values, ipc=False)
    out = decode_values(descs, [bytearray(s) for s in segments], torch.device("cpu"), max_numel=100)
    for a, b in zip(values[:5], out[:5]):
        assert torch.equal(a, b) and a.dtype == b.dtype
    assert out[5:8] == [3, 2.5, None] and isinstance(out[8], Opaque)


@pytest.mark.parametrize("tamper", ["dtype", "bytes", "shape", "numel", "kind", "value"])
def test_decode_refuses_what_does_not_match_its_description(tamper):
    descs, segments, _ = encode_values([torch.randn(3, 4)], ipc=False)
    segs = [bytearray(s) for s in segments]
    d = descs[0]
    if tamper == "dtype":
        d["dtype"] = "object"
    elif tamper == "bytes":
        segs[0] = segs[0][:-4]
    elif tamper == "shape":
        d["shape"] = [3, -4]
    elif tamper == "numel":
        d["shape"] = [1 << 20, 1 << 20]
    elif tamper == "kind":
        d["kind"] = "pickle"
    else:
        descs = [{"kind": "value", "value": {"__reduce__": "os.system"}}]
    with pytest.raises(ProtocolError):
        decode_values(descs, segs, torch.device("cpu"), max_numel=1 << 16)


def test_the_judge_never_unpickles_what_the_candidate_sends(tmp_path):
    """A pickle in a candidate's frame is bytes to the judge: it reaches decode_values as a segment, and a
    pickle that would run code when loaded never runs."""
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    judge_end, cand_end = socket.socketpair()
    Channel(cand_end).send({"op": "run", "ok": True, "outputs": [{"kind": "tensor", "dtype": "uint8", "shape": [1],
                                                                  "device": "cpu", "nbytes": 1}]},
                           [pickle.dumps(Evil())])
    header, segments = Channel(judge_end).recv()
    with pytest.raises(ProtocolError):
        decode_values(header["outputs"], segments, torch.device("cpu"), max_numel=16)
    assert not marker.exists()


def test_frames_are_capped():
    judge_end, cand_end = socket.socketpair()
    cand_end.sendall((100 << 20).to_bytes(4, "big"))
    with pytest.raises(ProtocolError):
        Channel(judge_end).recv()
    judge_end, cand_end = socket.socketpair()
    Channel(cand_end).send({"ok": True}, [b"x" * 1000])
    with pytest.raises(ProtocolError):
        Channel(judge_end, max_bytes=100).recv()


def test_a_shipped_tensor_keeps_its_view():
    """Over CUDA IPC the judge copies a tensor's whole storage into a flat buffer the candidate allocated, and
    the candidate rebuilds the view (a transposed or offset input stays transposed or offset). The same
    rebuild, on the host."""
    from kerntailor.verify.candidate import Server
    from kerntailor.verify.channel import Slot
    from kerntailor.verify.link import CandidateProcess

    base = torch.randn(6, 5)
    view = base.t()[1:, :]                                    # strides (1, 5), offset 1
    flat = CandidateProcess._flat_storage(view)
    assert flat.numel() == 30 and torch.equal(flat.view(6, 5), base)
    server = Server.__new__(Server)
    server.slots, server.device = {7: flat.clone()}, torch.device("cpu")
    rebuilt = server._unship([Slot(7, tuple(view.shape), view.stride(), view.storage_offset())])[0]
    assert torch.equal(rebuilt, view) and rebuilt.stride() == view.stride()


@pytest.mark.interpreter
def test_a_generated_library_product_module_runs_exactly_the_allowed_operators(tmp_path):
    """kerntailor's own GEMM + epilogue module with the LIBRARY knob takes its product from torch.matmul: the
    pipeline allows exactly what that runs (LIBRARY_PRODUCTS["matmul"]), and nothing else passes for it."""
    from dataclasses import replace
    from pathlib import Path

    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, default_schedule, generate_module
    from kerntailor.generate.pipeline import LIBRARY_PRODUCTS
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem
    from kerntailor.verify import VerifySettings, verify_candidate

    problem = load_problem(Path(__file__).resolve().parents[1] / "problems" / "level2" / "gemm_bias_relu.py")
    _, gen = capture_generalized(problem)
    plan = plan_fusion(gen.graph, FAMILIES)
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    schedules = {g.name: replace(schedules[g.name], LIBRARY=1) if g.family == "matmul" else schedules[g.name]
                 for g in plan.groups}
    out = tmp_path / "kernel.py"
    out.write_text(generate_module(problem, gen, plan, schedules, "h200", "sm_90").source)
    small = ("small",)
    LIBRARY_PRODUCT_OPS, LIBRARY_PRODUCT_CALLS = LIBRARY_PRODUCTS["matmul"]
    v = verify_candidate(problem, out, VerifySettings(allowed_ops=LIBRARY_PRODUCT_OPS,
                                                      allowed_calls=LIBRARY_PRODUCT_CALLS, variants=small))
    assert v.passed, f"{v.check}: {v.reason}"
    v = verify_candidate(problem, out, VerifySettings(allowed_ops=frozenset({"aten.convolution.default"}),
                                                      allowed_calls=LIBRARY_PRODUCT_CALLS, variants=small))
    assert v.check == "library" and "aten.mm.default" in v.reason
    # the static check allows the calls named, not any library call: torch.matmul unnamed is a finding
    v = verify_candidate(problem, out, VerifySettings(allowed_ops=LIBRARY_PRODUCT_OPS,
                                                      allowed_calls=frozenset({"torch.ops.aten.convolution.default"}),
                                                      variants=small))
    assert v.check == "static" and "torch.matmul" in v.reason
