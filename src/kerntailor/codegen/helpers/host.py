"""Host functions kernel.py defines for some GEMM schedules, copied into it as they are (gemm.py): global
memory for the TMA descriptors a kernel builds on the device (sm_90), the program count of a persistent
GEMM (one per SM or CU of the GPU it runs on), and a library convolution's channels-last weight (library.py)."""

import torch


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
