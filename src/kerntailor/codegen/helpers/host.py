"""Host functions kernel.py defines for some GEMM schedules, copied into it as they are (gemm.py): global
memory for the TMA descriptors a kernel builds on the device (sm_90), and the program count of a persistent
GEMM (one per SM or CU of the GPU it runs on)."""

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
