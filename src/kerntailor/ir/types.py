"""IR value types: tensor types and index maps (views folded into strides, never copies)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

# Bytes per element of the dtype names the IR uses (names as in kerntailor.problem.spec.DTYPE_NAMES).
ITEMSIZE = {"fp64": 8, "fp32": 4, "bf16": 2, "fp16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1,
            "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1}
FLOATS = ("fp64", "fp32", "bf16", "fp16")


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: str

    @property
    def numel(self) -> int:
        return prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * ITEMSIZE[self.dtype]

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


@dataclass(frozen=True)
class View:
    """Element (i_0, ..., i_n) of this view is `base[offset + Σ i_k · strides[k]]`.

    Permutes, transposes, expands (stride 0), slices, flips (negative strides) and reshapes that strides
    can express are all Views of the same buffer; no data moves.
    """

    base: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    @staticmethod
    def of(base: str, shape: tuple[int, ...]) -> View:
        return View(base, tuple(shape), contiguous_strides(tuple(shape)), 0)

    @property
    def numel(self) -> int:
        return prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        return self.offset == 0 and all(
            st == c for s, st, c in zip(self.shape, self.strides, contiguous_strides(self.shape)) if s != 1)

    @property
    def is_broadcast(self) -> bool:
        return any(st == 0 and s > 1 for s, st in zip(self.shape, self.strides))

    def describe(self) -> str:
        if self.is_contiguous:
            return self.base
        return f"{self.base}<{'x'.join(map(str, self.shape))} strides {self.strides}" + (
            f" +{self.offset}>" if self.offset else ">")

    # --- view algebra -------------------------------------------------------------------------------
    def permute(self, dims: tuple[int, ...]) -> View:
        return View(self.base, tuple(self.shape[d] for d in dims), tuple(self.strides[d] for d in dims),
                    self.offset)

    def expand(self, shape: tuple[int, ...]) -> View:
        """Broadcast to `shape` (numpy rules: new leading dims and size-1 dims get stride 0)."""
        lead = len(shape) - len(self.shape)
        if lead < 0:
            raise ValueError(f"cannot expand {self.shape} to {shape}")
        strides = [0] * lead
        for i, (s, st) in enumerate(zip(self.shape, self.strides)):
            target = shape[lead + i]
            if s == target:
                strides.append(st)
            elif s == 1:
                strides.append(0)
            else:
                raise ValueError(f"cannot expand {self.shape} to {shape}")
        return View(self.base, tuple(shape), tuple(strides), self.offset)

    def unsqueeze(self, dim: int) -> View:
        dim = dim % (len(self.shape) + 1)
        stride = self.strides[dim] * self.shape[dim] if dim < len(self.shape) else 1
        return View(self.base, self.shape[:dim] + (1,) + self.shape[dim:],
                    self.strides[:dim] + (stride,) + self.strides[dim:], self.offset)

    def squeeze(self, dims: tuple[int, ...]) -> View:
        dims = {d % len(self.shape) for d in dims} if self.shape else set()
        keep = [i for i in range(len(self.shape)) if not (i in dims and self.shape[i] == 1)]
        return View(self.base, tuple(self.shape[i] for i in keep), tuple(self.strides[i] for i in keep),
                    self.offset)

    def slice(self, dim: int, start: int, end: int, step: int) -> View:
        size = self.shape[dim]
        start = max(0, min(size, start + size if start < 0 else start))
        end = max(start, min(size, end + size if end < 0 else end))
        n = (end - start + step - 1) // step
        shape = list(self.shape)
        strides = list(self.strides)
        shape[dim] = n
        strides[dim] = self.strides[dim] * step
        return View(self.base, tuple(shape), tuple(strides), self.offset + start * self.strides[dim])

    def select(self, dim: int, index: int) -> View:
        index = index + self.shape[dim] if index < 0 else index
        return View(self.base, self.shape[:dim] + self.shape[dim + 1:],
                    self.strides[:dim] + self.strides[dim + 1:], self.offset + index * self.strides[dim])

    def flip(self, dims: tuple[int, ...]) -> View:
        strides = list(self.strides)
        offset = self.offset
        for d in dims:
            offset += (self.shape[d] - 1) * self.strides[d]
            strides[d] = -strides[d]
        return View(self.base, self.shape, tuple(strides), offset)

    def reshape(self, shape: tuple[int, ...]) -> View | None:
        """The same elements in a new shape, or None when strides cannot express it (a copy is needed)."""
        if prod(shape) != self.numel:
            raise ValueError(f"cannot reshape {self.shape} to {shape}")
        # Like ATen's computeStride: walk chunks of the old shape that are contiguous among themselves.
        old = [(s, st) for s, st in zip(self.shape, self.strides) if s != 1]
        new_strides = [0] * len(shape)
        oi = 0
        ni = 0
        while ni < len(shape):
            if shape[ni] == 1:
                new_strides[ni] = 1
                ni += 1
                continue
            if oi >= len(old):
                return None
            # gather a chunk of old dims whose product equals a chunk of new dims
            chunk_old = [old[oi]]
            old_prod = old[oi][0]
            oi += 1
            chunk_new = [ni]
            new_prod = shape[ni]
            ni += 1
            while old_prod != new_prod:
                if old_prod < new_prod:
                    if oi >= len(old):
                        return None
                    chunk_old.append(old[oi])
                    old_prod *= old[oi][0]
                    oi += 1
                else:
                    while ni < len(shape) and shape[ni] == 1:
                        new_strides[ni] = 1
                        chunk_new.append(ni)
                        ni += 1
                    if ni >= len(shape):
                        return None
                    chunk_new.append(ni)
                    new_prod *= shape[ni]
                    ni += 1
            # the old chunk must be contiguous within itself
            for (_, st_a), (s_b, st_b) in zip(chunk_old, chunk_old[1:]):
                if st_a != st_b * s_b:
                    return None
            acc = chunk_old[-1][1]
            for i in reversed(chunk_new):
                if shape[i] == 1:
                    new_strides[i] = acc
                    continue
                new_strides[i] = acc
                acc *= shape[i]
        if oi != len(old):
            return None
        return View(self.base, tuple(shape), tuple(new_strides), self.offset)
