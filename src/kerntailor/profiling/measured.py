"""Measured profile: each eager ATen op's device time on the GPU here, by torch.profiler.

The model runs for real (its parameters and inputs on the device) under the same trace as the predicted mode
(costmodel/eager_trace.py `trace_forward`), which also puts each recorded op in a profiler range of its own; the
op's time is the device time (every kernel it launched, `device_time_total`) of its range, the mean over `steps`
forwards after one warm-up forward. So the ops, their modules and their order are the predicted mode's, and
attribute.py apportions them to the fusion groups in the same way; only each op's seconds are measured instead of
predicted. Not in it: the host's launch gaps between kernels (the sum is the GPU's busy time, not wall time) and
kernels launched outside any op's range (none in the models tried: each op launches inside its own dispatch).

On a machine without a GPU, `device="cpu"` measures the host's time per op the same way (`cpu_time_total`): the
plumbing's test, labelled as the CPU's, never a GPU number.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kerntailor.costmodel.eager_trace import EagerOp, trace_forward
from kerntailor.errors import KerntailorError

PREFIX = "kerntailor.op#"


@dataclass(frozen=True)
class MeasuredEager:
    """The eager ops of one forward and each one's measured seconds (the mean over `steps` forwards)."""

    ops: tuple[EagerOp, ...]
    seconds: tuple[float, ...]
    steps: int
    device: str               # "NVIDIA H200" (torch.cuda.get_device_name) or "cpu"
    clock: str                # "device" (kernels' time on the GPU) | "cpu" (the host's time per op)

    @property
    def total_s(self) -> float:
        return sum(self.seconds)


def measure_eager(model, inputs: list, *, steps: int = 5) -> MeasuredEager:
    """Run `model(*inputs)` once to warm up, then `steps` times under torch.profiler; each eager op's time."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    if steps < 1:
        raise KerntailorError(f"--steps must be at least 1, not {steps}")
    devices = {t.device.type for t in [*model.parameters(), *model.buffers(), *inputs] if isinstance(t, torch.Tensor)}
    cuda = "cuda" in devices
    trace_forward(model, inputs)   # warm-up: caches, cuBLAS handles, autotuning of the libraries
    if cuda:
        torch.cuda.synchronize()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    traces = []
    with profile(activities=activities) as prof:
        for step in range(steps):
            traces.append(trace_forward(model, inputs, ranges=f"{PREFIX}{step}#"))
        if cuda:
            torch.cuda.synchronize()
    first = traces[0]
    if any([op.op for op in t] != [op.op for op in first] for t in traces[1:]):
        raise KerntailorError("the model dispatched different ops on different forwards: no op-by-op profile")
    per_op: dict[int, float] = defaultdict(float)
    for event in prof.events():
        # the host's range only: kineto also puts each range on the GPU's timeline (a gpu_user_annotation of the same
        # name, as long as the kernels in it): counted too, every op's time was doubled (Llama decode on the H200:
        # 9.27 ms of ops against 4.85 ms end to end)
        if not event.name.startswith(PREFIX) or event.device_type != DeviceType.CPU:
            continue
        index = int(event.name.rpartition("#")[2])
        us = event.device_time_total if cuda else event.cpu_time_total
        per_op[index] += us * 1e-6 / steps
    seconds = tuple(per_op.get(i, 0.0) for i in range(len(first)))
    device = torch.cuda.get_device_name() if cuda else "cpu"
    return MeasuredEager(first, seconds, steps, device, "device" if cuda else "cpu")
