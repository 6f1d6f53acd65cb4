"""The problem types that cross stage boundaries: ProblemSpec, Variant, InputSpec."""

from __future__ import annotations

import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

# Names a user writes on the command line → torch dtypes.
DTYPES: dict[str, torch.dtype] = {
    "fp32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
}
DTYPE_NAMES: dict[torch.dtype, str] = {v: k for k, v in DTYPES.items()} | {
    torch.float64: "fp64",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "bool",
}


def dtype_name(dtype: torch.dtype) -> str:
    return DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


# Inputs and parameters draw from different seeds, so that no input equals a function of a weight.
INPUT_SEED_OFFSET = 1_000_003


@dataclass(frozen=True)
class Variant:
    """One set of input shapes: the module-level size constants it overrides, and the integer literals of the
    source it rewrites ("LINE:COL" -> value, problem/literals.py: sizes written as literals in get_inputs(),
    get_init_inputs() or a module-level tuple); none of either for "default"."""

    name: str
    overrides: tuple[tuple[str, int], ...] = ()
    literals: tuple[tuple[str, int], ...] = ()

    @property
    def is_default(self) -> bool:
        return not self.overrides and not self.literals

    def describe(self) -> str:
        """The variant's changes in one line: `batch_size=8, 12:31=64` (a literal by its position)."""
        return ", ".join(f"{k}={v}" for k, v in self.overrides + self.literals) or "as written"


@dataclass(frozen=True)
class InputSpec:
    """Shape and dtype of one forward() argument (or a non-tensor value, kept as its repr)."""

    shape: tuple[int, ...] | None
    dtype: str | None
    value: str | None = None  # repr of a non-tensor argument

    @property
    def nbytes(self) -> int:
        if self.shape is None or self.dtype is None:
            return 0
        numel = 1
        for s in self.shape:
            numel *= s
        return numel * torch.empty((), dtype=_torch_dtype(self.dtype)).element_size()


def _torch_dtype(name: str) -> torch.dtype:
    for dt, n in DTYPE_NAMES.items():
        if n == name:
            return dt
    return getattr(torch, name)


@dataclass(frozen=True)
class ProblemSpec:
    """A loaded problem: where it came from, its content hash, dtype policy and input variants.

    The module is re-executed from `source` for every variant, so variants never leak into one another.
    Nothing here holds real tensors; `make_model`/`make_inputs` create them on the device asked for.
    """

    name: str
    path: Path
    source: str = field(repr=False)
    content_hash: str
    dtype: str | None  # override ("fp32"/"bf16"/"fp16"), None = as the file says
    variants: tuple[Variant, ...]
    inputs: tuple[InputSpec, ...]  # of the default variant
    description: str = ""

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        known = ", ".join(v.name for v in self.variants)
        from kerntailor.errors import ProblemError

        raise ProblemError(f"{self.name}: no variant {name!r} (known: {known})")

    def module(self, variant: str | Variant = "default") -> types.ModuleType:
        """A fresh module object of the problem file with the variant's size constants applied."""
        from kerntailor.problem.load import exec_module

        v = variant if isinstance(variant, Variant) else self.variant(variant)
        return exec_module(self.source, self.path, dict(v.overrides), dict(v.literals))

    def make_model(self, variant: str | Variant = "default", device: str | torch.device = "meta",
                   seed: int = 0) -> torch.nn.Module:
        from kerntailor.problem.load import build_model

        torch.manual_seed(seed)
        return build_model(self.module(variant), device, self.dtype, self.name)

    def make_inputs(self, variant: str | Variant = "default", device: str | torch.device = "meta",
                    seed: int = 0) -> list[Any]:
        from kerntailor.problem.load import build_inputs

        torch.manual_seed(INPUT_SEED_OFFSET + seed)  # not the parameters' stream
        return build_inputs(self.module(variant), device, self.dtype, self.name)

    def cast_candidate(self, model: torch.nn.Module) -> torch.nn.Module:
        """A candidate ModelNew in this problem's dtype policy (its floating parameters and buffers), as the
        reference is: load_state_dict keeps the candidate's own dtypes, so a bf16 run needs this."""
        return model.to(DTYPES[self.dtype]) if self.dtype is not None else model

    def init_inputs(self, variant: str | Variant = "default") -> list[Any]:
        from kerntailor.problem.load import call_checked

        return list(call_checked(self.module(variant), "get_init_inputs", self.name, default=[]))

    def key(self) -> str:
        """Content hash + dtype policy: what a stored result is keyed on (with shapes and target)."""
        return f"{self.content_hash[:16]}-{self.dtype or 'native'}"


def input_specs(values: Sequence[Any]) -> tuple[InputSpec, ...]:
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(InputSpec(tuple(v.shape), dtype_name(v.dtype)))
        else:
            out.append(InputSpec(None, None, repr(v)))
    return tuple(out)
