"""Poison what a candidate allocates, so that an output element it never writes cannot look right.

A candidate allocates its own outputs (almost always with torch.empty / empty_like). Two layers:

- `poisoned_allocations(byte)`: while active, torch.empty, empty_like, empty_strided and Tensor.new_empty
  return tensors with every byte set to `byte`. 0xFF makes every float dtype NaN (and ints -1); 0x42 makes
  finite garbage in every float dtype (48.56 in fp32, 3.13 in fp16, 48.5 in bf16). The referee runs the
  candidate once under each: an element that is NaN in run 1 and the 0x42 pattern in run 2 was never written.
- `poison_device_cache(device, nbytes, byte)` (GPU): allocate a large block and many small ones, fill them with
  `byte`, free them. The caching allocator hands this memory back to the next allocations, so memory a
  candidate gets by any other route (a C++ op, torch.zeros's storage before its fill) also starts poisoned.

Worker process only: these patch torch's module attributes for the duration of a `with` block.
"""

from __future__ import annotations

import contextlib

import torch

NAN_BYTE = 0xFF      # all-ones: NaN in fp16/bf16/fp32/fp64, -1 in signed ints
GARBAGE_BYTE = 0x42  # finite in every float dtype


def poison_value(dtype: torch.dtype, byte: int) -> torch.Tensor:
    """The scalar that `byte` repeated makes in `dtype` (what an unwritten element holds)."""
    size = torch.empty((), dtype=dtype).element_size()
    raw = torch.full((size,), byte, dtype=torch.uint8)
    return raw.view(dtype)[0]


def _fill(t: torch.Tensor, byte: int, alloc=torch.empty) -> torch.Tensor:
    if t.numel() == 0:
        return t
    with torch.no_grad():
        storage = t.untyped_storage()
        flat = alloc(0, dtype=torch.uint8, device=t.device)
        flat.set_(storage, 0, (storage.nbytes(),), (1,))
        flat.fill_(byte)
    return t


@contextlib.contextmanager
def poisoned_allocations(byte: int = NAN_BYTE):
    """Make torch.empty & co. return memory filled with `byte` (restored on exit)."""
    orig_empty = torch.empty
    orig_empty_like = torch.empty_like
    orig_empty_strided = torch.empty_strided
    orig_new_empty = torch.Tensor.new_empty

    def empty(*args, **kwargs):
        return _fill(orig_empty(*args, **kwargs), byte, orig_empty)

    def empty_like(*args, **kwargs):
        return _fill(orig_empty_like(*args, **kwargs), byte, orig_empty)

    def empty_strided(*args, **kwargs):
        return _fill(orig_empty_strided(*args, **kwargs), byte, orig_empty)

    def new_empty(self, *args, **kwargs):
        return _fill(orig_new_empty(self, *args, **kwargs), byte, orig_empty)

    torch.empty, torch.empty_like, torch.empty_strided = empty, empty_like, empty_strided
    torch.Tensor.new_empty = new_empty
    try:
        yield
    finally:
        torch.empty, torch.empty_like, torch.empty_strided = orig_empty, orig_empty_like, orig_empty_strided
        torch.Tensor.new_empty = orig_new_empty


def poison_device_cache(device: torch.device, nbytes: int, byte: int = NAN_BYTE) -> None:
    """Fill and free a large block plus small-pool blocks so the caching allocator hands back `byte` memory."""
    if device.type != "cuda":
        return
    torch.cuda.synchronize(device)
    big = torch.empty(max(int(nbytes), 4 << 20), dtype=torch.uint8, device=device)
    big.fill_(byte)
    # the small pool (requests <= 1 MiB) is carved from 2 MiB segments
    small = [torch.empty(s, dtype=torch.uint8, device=device) for s in (512 << 10,) * 8 + (4096,) * 64]
    for t in small:
        t.fill_(byte)
    torch.cuda.synchronize(device)
    del big, small
