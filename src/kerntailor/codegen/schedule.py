"""Schedules: how one fusion group's kernel is tiled and compiled, one frozen type per family.

A schedule is made once, where it is chosen (a family's default, or the search space from a Config), and
validated there: a knob no kernel of its family can take fails at once with `ScheduleError`, naming the knob.
Codegen takes it as it is. The field names are the knob names the search tunes (`Config`) and the constexpr
names the kernels use (`XBLOCK`, `BLOCK_M`, ...), so a Config, a schedule and a kernel agree by name.

What a schedule cannot know is checked by its writer: whether the problem allows it (`tl.dot` needs tiles of
16 where a GEMV does not) raises CodegenUnsupported there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kerntailor.codegen.errors import CodegenUnsupported

AMD_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")   # compile options only a ROCm build takes
NVIDIA_OPTIONS = ("maxnreg",)                                       # compile options only a CUDA build takes
MAXNREG_RANGE = (16, 255)   # a thread's register cap (ptx .maxnreg; sm_90 gives a thread at most 255)


class ScheduleError(CodegenUnsupported, ValueError):
    """A schedule knob has a value no kernel of its family can take (the message names the knob)."""


@dataclass(frozen=True, kw_only=True)
class Schedule:
    """Compile options every family has. Subclasses add their tiles and set `family`, `order` and `shown`."""

    family: ClassVar[str] = ""
    order: ClassVar[tuple[str, ...]] = ()   # knob order in kernel.py's header and the report
    shown: ClassVar[tuple[str, ...]] = ()   # knobs listed always; the others where they differ from the default

    num_warps: int = 4
    num_stages: int = 1
    waves_per_eu: int | None = None          # AMD: waves per execution unit the compiler aims for (0: its choice)

    def __post_init__(self) -> None:
        self.power_of_two("num_warps")
        self.at_least("num_stages", 1)
        if self.waves_per_eu is not None:
            self.at_least("waves_per_eu", 0)

    # --- checks, for __post_init__ ----------------------------------------------------------------------

    def _int(self, name: str) -> int:
        value = getattr(self, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ScheduleError(f"{self.family} schedule: {name}={value!r} is not an integer")
        return value

    def at_least(self, name: str, low: int) -> None:
        value = self._int(name)
        if value < low:
            raise ScheduleError(f"{self.family} schedule: {name}={value} (at least {low})")

    def cap_registers(self, name: str = "maxnreg") -> None:
        """A register cap (an NVIDIA_OPTIONS knob): 0 (none) or MAXNREG_RANGE."""
        value = self._int(name)
        if value and not MAXNREG_RANGE[0] <= value <= MAXNREG_RANGE[1]:
            raise ScheduleError(f"{self.family} schedule: {name}={value}; expected 0 (no cap) or a register count "
                                f"from {MAXNREG_RANGE[0]} to {MAXNREG_RANGE[1]}")

    def power_of_two(self, name: str) -> None:
        value = self._int(name)
        if value < 1 or value & (value - 1):
            raise ScheduleError(f"{self.family} schedule: {name}={value} is not a power of two")

    def one_of(self, name: str, allowed: tuple) -> None:
        value = getattr(self, name)
        if value not in allowed or isinstance(value, bool) != isinstance(allowed[0], bool):
            raise ScheduleError(f"{self.family} schedule: {name}={value!r}; expected one of "
                                f"{', '.join(repr(a) for a in allowed)}")

    # --- what the later stages ask of any schedule (a family that differs overrides these) --------------

    @property
    def row_split(self) -> int:
        """Programs each row of the group's reduction is spread over (0: each row is one program's)."""
        return 0

    @property
    def library_product(self) -> bool:
        """Whether the group's product is the library's (torch.matmul, a convolution), the kernel only its
        epilogue and tail."""
        return False

    def library_forms(self) -> tuple[Schedule, ...]:
        """This schedule with the group's product the library's (a family's LIBRARY knob), once per form worth
        timing (the library's output layout), the knobs of the generated product at their defaults; () for a family
        without that knob."""
        return ()

    # --- reading ----------------------------------------------------------------------------------------

    def knob_values(self) -> dict[str, Any]:
        """Every knob's value by name, set or default (what `retune` starts from, what a search space reads)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def options(self) -> tuple[tuple[str, object], ...]:
        """Compile options: num_warps, num_stages, the AMD ones that are set (kernel.py passes those only on a
        ROCm build) and a register cap where a family has one and sets it (maxnreg, `cap_registers`: kernel.py
        passes it only on a CUDA build, triton 3.6's HIP launcher refusing it, and the build stage drops it for gfx
        targets. AMD bounds a kernel's registers through waves_per_eu instead: n waves a SIMD, 512 / n VGPRs)."""
        amd = tuple((name, getattr(self, name)) for name in AMD_OPTIONS
                    if getattr(self, name, None) is not None)
        nvidia = tuple((name, getattr(self, name)) for name in NVIDIA_OPTIONS if getattr(self, name, 0))
        return (("num_warps", self.num_warps), ("num_stages", self.num_stages)) + amd + nvidia

    def knobs(self) -> dict[str, Any]:
        """The knobs worth reading, in `order`: the `shown` ones and any other set away from its default."""
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        return {name: getattr(self, name) for name in self.order
                if name in self.shown or getattr(self, name) != defaults[name]}

    # --- making -----------------------------------------------------------------------------------------

    @classmethod
    def from_knobs(cls, knobs: Mapping[str, Any]) -> Schedule:
        """A schedule from knob values by name (a Config's, a report's); an unknown name is a ScheduleError."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = [k for k in knobs if k not in names]
        if unknown:
            raise ScheduleError(f"{cls.family} schedule has no knob {', '.join(unknown)}; it has "
                                f"{', '.join(n for n in cls.order)}")
        return cls(**knobs)

    def retune(self, knobs: Mapping[str, Any]) -> Schedule:
        """This schedule with the tuned `knobs` (a Config's values) in place of its own; what the search does
        not tune (a precision policy, a split) stays."""
        return self.from_knobs(self.knob_values() | dict(knobs))
