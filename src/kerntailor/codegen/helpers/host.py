"""Host functions kernel.py defines for some GEMM schedules, copied into it as they are (gemm.py): global
memory for the TMA descriptors a kernel builds on the device (sm_90), the program count of a persistent
GEMM (one per SM or CU of the GPU it runs on), and a library convolution's channels-last weight and input
(library.py)."""

import torch
import triton
import triton.language as tl

_INTERPRET = False   # kernel.py's own (render.HELPER_PRELUDE) stands in for this one where these are copied


def _tma_scratch(size: int, alignment: int, stream):
    """Global memory for the TMA descriptors a kernel builds on the device (tl.make_tensor_descriptor)."""
    return torch.empty(size, device="cuda", dtype=torch.int8)


def _num_programs(device) -> int:
    """Programs of a persistent GEMM: one per SM (CU) of the GPU it runs on; 4 under the interpreter."""
    device = torch.device(device)
    if device.type != "cuda":
        return 4
    return torch.cuda.get_device_properties(device).multi_processor_count


def _channels_last_weight(w, memory_format):
    """`w` in `memory_format` (a library convolution's weight, codegen/library.py), copied once and kept on the
    tensor until it changes: its address, its version (an in-place update: an optimizer step, load_state_dict)
    or its shape; a forward then pays no copy. Held by the tensor itself, so it goes when the tensor does."""
    key = (w.data_ptr(), w._version, tuple(w.shape), w.dtype, memory_format)
    cached = getattr(w, "_kerntailor_channels_last", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    copy = w.detach().contiguous(memory_format=memory_format)
    w._kerntailor_channels_last = (key, copy)
    return copy


@triton.jit
def _channels_last_copy_kernel(src, dst, C, S, BLOCK_S: tl.constexpr, BLOCK_C: tl.constexpr):
    """dst[b, s, c] = src[b, c, s] for a contiguous (B, C, S): one BLOCK_S x BLOCK_C tile a program, read along
    the positions and written along the channels (Triton transposes the tile through shared memory)."""
    rs = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    rc = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    base = tl.program_id(2).to(tl.int64) * C * S
    mask = (rs < S)[:, None] & (rc < C)[None, :]
    v = tl.load(src + base + rc.to(tl.int64)[None, :] * S + rs[:, None], mask=mask)
    tl.store(dst + base + rs.to(tl.int64)[:, None] * C + rc[None, :], v, mask=mask)


def _channels_last_input(x, memory_format):
    """`x` (B, C, *S) in `memory_format` (channels-last) for a library convolution, copied per call by one tiled
    Triton kernel: torch's own copy (`x.contiguous(memory_format=...)`, a permuted elementwise copy) took 582 us
    of a (128, 64, 128, 128) bf16 input on the H200 where torch.compile's tiled kernel took 132 (2026-12-04,
    benchmarks/libtail_profile.py). Torch's copy where no kernel can run (a CPU tensor outside the interpreter,
    more images than a grid axis holds)."""
    if x.is_contiguous(memory_format=memory_format):
        return x
    if (x.device.type == "cpu" and not _INTERPRET) or x.shape[0] > 65535 or x.numel() == 0:
        return x.contiguous(memory_format=memory_format)
    x = x.contiguous()
    out = torch.empty_like(x, memory_format=memory_format)
    b, c = x.shape[0], x.shape[1]
    s = x.numel() // (b * c)
    _channels_last_copy_kernel[(triton.cdiv(s, 64), triton.cdiv(c, 64), b)](x, out, c, s, BLOCK_S=64, BLOCK_C=64,
                                                                          num_warps=4)
    return out
