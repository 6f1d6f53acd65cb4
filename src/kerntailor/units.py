"""Leaf facts that several stages use; this module imports nothing from kerntailor.

- `ITEMSIZE`: bytes per element of an operand dtype, named as the targets' peak rates name them (tf32 and fp8
  included; the IR's storage dtypes are in `kerntailor.ir.types.ITEMSIZE`).
- `next_power_of_two(n)`: the smallest power of two >= n (1 for n <= 1): block sizes that cover a size.
"""

from __future__ import annotations

ITEMSIZE = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


def next_power_of_two(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()
