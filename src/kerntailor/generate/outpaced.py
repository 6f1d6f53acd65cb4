"""Convolutions the library outpaces by its rate alone, known before anything is built or timed.

PyTorch lets cuDNN run fp32 convolutions on TF32 tensor cores by default (`torch.backends.cudnn.allow_tf32`), and
the referee times eager, torch.compile and a library convolution under those defaults. A generated fp32
convolution under the `ieee` policy (the default: fp32-level accuracy) is an FMA loop on the CUDA cores, 7.4x
fewer FLOP/s on an H100 (67 TF fp32 against 494.7 TF tf32). Where the convolution is compute-bound, no schedule
closes that gap: measured on the H200 and H100, generated ieee convolutions lost to eager's TF32 ones by 3-5x, and a
measured run found that out only after its search and its judged, timed first pass (~270 s a level-2 file at
`bench --jobs 6`, 2026-12-05f call 4), then generated the problem again around the library's convolution.

`outpaced_convs` names those convolutions up front by their roofline floors: the generated one's at the fp32 vector
rate against the library's at the tf32 rate, each bounded by the bytes the convolution must move (its input,
weight and output once). Where the generated floor is OUTPACED_RATIO or more times the library's, the generate
stage plans the convolution as a library call (its tail generated) or, where its group takes the library knob,
times only the library's product with the generated tail. Memory-bound convolutions (depthwise, few channels) keep
their generated candidates: there the two floors are the same bytes. Only dense convolutions (one group): grouped
and transposed-grouped forms are where cuDNN falls to slow kernels (KernelBench level-1 75, fp32: eager 5684 us
against a generated 2122 on the H200, 2026-12-03), and their floor says nothing about that.

Measured mode on NVIDIA only: on ROCm, MIOpen's fp32 convolutions are not TF32 by this flag, and predicted mode
spends no GPU time on a losing candidate.
"""

from __future__ import annotations

from dataclasses import dataclass

from kerntailor.ir.nodes import Conv
from kerntailor.ir.types import ITEMSIZE
from kerntailor.targets import Target
from kerntailor.targets.roofline import roofline_floor

OUTPACED_RATIO = 2.0   # the generated floor against the library's: at or above it, no generated candidate is timed


@dataclass(frozen=True)
class Outpaced:
    """One convolution the library outpaces: its floors at the generated and the library rate."""

    node: str
    generated_s: float      # at the fp32 vector rate (ieee)
    library_s: float        # at the tf32 rate (cuDNN under PyTorch's defaults)

    @property
    def ratio(self) -> float:
        return self.generated_s / self.library_s

    def reason(self) -> str:
        return (f"the library's TF32 convolution (PyTorch's default for cuDNN) has a floor of "
                f"{self.library_s * 1e6:.1f} us against {self.generated_s * 1e6:.1f} us for a generated ieee fp32 "
                f"one ({self.ratio:.1f}x), so no generated convolution was timed (--precision tf32 generates TF32 "
                f"ones)")

    def to_dict(self) -> dict:
        return {"node": self.node, "generated_floor_us": round(self.generated_s * 1e6, 3),
                "library_floor_us": round(self.library_s * 1e6, 3), "ratio": round(self.ratio, 3),
                "label": "predicted (roofline floors, vendor peaks)"}


def library_runs_tf32(target: Target) -> bool:
    """Whether this process's PyTorch runs fp32 convolutions on TF32 on `target`: an NVIDIA GPU with a tf32 rate, and
    cuDNN allowed to (torch.backends.cudnn.allow_tf32, True unless the user turned it off)."""
    import torch

    return (target.vendor == "nvidia" and target.peak("tf32") > target.peak("fp32", matrix=False) > 0
            and bool(torch.backends.cudnn.allow_tf32) and torch.version.hip is None)


def outpaced_convs(graph, target: Target, precision: str, measured: bool) -> dict[str, Outpaced]:
    """Conv node name -> Outpaced, for each dense fp32 convolution of `graph` whose generated floor (ieee) is at least
    OUTPACED_RATIO times the library's (module docstring). Empty unless `measured`, `precision` is ieee and the
    library runs TF32 on `target`."""
    if not measured or precision != "ieee" or not library_runs_tf32(target):
        return {}
    out = {}
    for node in graph.nodes:
        if not isinstance(node, Conv) or node.groups != 1 or node.out.dtype != "fp32":
            continue
        moved = (sum(op.numel for op in node.operands[:2]) + node.out.numel) * ITEMSIZE["fp32"]
        generated = roofline_floor(target, flops=node.flops(), min_bytes=moved, dtype="fp32", matrix=False)
        library = roofline_floor(target, flops=node.flops(), min_bytes=moved, dtype="tf32", matrix=True)
        if library.seconds > 0 and generated.seconds >= OUTPACED_RATIO * library.seconds:
            out[node.name] = Outpaced(node.name, generated.seconds, library.seconds)
    return out
