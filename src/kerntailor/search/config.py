"""Config: the schedule knobs of one kernel family, as a small frozen, hashable, ordered value.

    Config(family="reduction", knobs=(("XBLOCK", 1), ("RBLOCK", 4096), ("persistent", True),
                                      ("num_warps", 8), ("num_stages", 1), ("waves_per_eu", 2)))

A Config is what the search tunes (like tinygrad's `Opt` list or Helion's `Config`); what the user sets
(budget, target, tolerance) lives elsewhere and is never tuned. Knob order is part of the value: it is the
order the family's Space declares, so `key()` is stable and two Configs with the same knobs in another order
are different values (build them through the Space and that never happens).

Knob values are plain JSON scalars (int, bool, float, str) so a Config round-trips through the store. A
Config's family and knob names are codegen's (the plan's family, the schedule's fields); the space turns a
Config into the typed schedule codegen takes (`Space.schedule`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# Knobs that are compile options (KernelSource.options); every other knob is a constexpr or a codegen choice.
OPTION_KNOBS = ("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "kpack", "maxnreg")
AMD_ONLY_KNOBS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")

# Stores written before one family vocabulary ran from plan to codegen name the matmul space "gemm" and the
# pointwise block "BLOCK": from_json reads them with today's names (they are the learned model's training rows).
_LEGACY_FAMILIES = {"gemm": "matmul"}
_LEGACY_KNOBS = {"pointwise": {"BLOCK": "XBLOCK"}}

_MISSING = object()
_SCALARS = (bool, int, float, str)


@dataclass(frozen=True)
class Config:
    """Frozen, hashable, ordered schedule knobs of one family. Build with a mapping or pairs."""

    family: str
    knobs: tuple[tuple[str, Any], ...]

    def __post_init__(self):
        items = self.knobs.items() if isinstance(self.knobs, Mapping) else self.knobs
        pairs = tuple((str(name), value) for name, value in items)
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names):
            raise ValueError(f"Config knobs repeat a name: {names}")
        for name, value in pairs:
            if not isinstance(value, _SCALARS):
                raise TypeError(f"knob {name}={value!r}: values must be int, bool, float or str")
        object.__setattr__(self, "knobs", pairs)

    # --- reading ---------------------------------------------------------------------------------------

    def get(self, name: str, default: Any = _MISSING) -> Any:
        """The value of knob `name`; `default` if absent (KeyError if absent and no default given)."""
        for knob, value in self.knobs:
            if knob == name:
                return value
        if default is _MISSING:
            raise KeyError(f"{self.family} config has no knob {name!r}; it has {', '.join(self.names)}")
        return default

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return any(knob == name for knob, _ in self.knobs)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return iter(self.knobs)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.knobs)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.knobs)

    def options(self) -> dict[str, Any]:
        """The knobs that are compile options (num_warps, num_stages and the AMD ones)."""
        return {k: v for k, v in self.knobs if k in OPTION_KNOBS}

    def constexprs(self) -> dict[str, Any]:
        """Every other knob: tile sizes, GROUP_M, split_k, persistent (constexprs or codegen choices)."""
        return {k: v for k, v in self.knobs if k not in OPTION_KNOBS}

    # --- changing ---------------------------------------------------------------------------------------

    def replace(self, **changes: Any) -> Config:
        """A copy with some knobs changed, order kept. Unknown names raise KeyError (a Config's knob set
        is fixed by its Space)."""
        unknown = [name for name in changes if name not in self]
        if unknown:
            raise KeyError(f"{self.family} config has no knob(s) {unknown}; it has {', '.join(self.names)}")
        return Config(self.family, tuple((k, changes.get(k, v)) for k, v in self.knobs))

    # --- identity and storage ---------------------------------------------------------------------------

    def key(self) -> str:
        """A stable, readable string: 'reduction:XBLOCK=1,RBLOCK=4096,persistent=True,num_warps=8'."""
        return f"{self.family}:" + ",".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"
                                            for k, v in self.knobs)

    def __str__(self) -> str:
        return self.key()

    def to_json(self) -> dict:
        """{"family": ..., "knobs": [[name, value], ...]}: a list of pairs, so the order survives."""
        return {"family": self.family, "knobs": [[k, v] for k, v in self.knobs]}

    @classmethod
    def from_json(cls, data: Mapping | str) -> Config:
        """The Config `to_json` wrote, also in the older vocabulary (family "gemm", pointwise knob "BLOCK")."""
        if isinstance(data, str):
            data = json.loads(data)
        family = _LEGACY_FAMILIES.get(str(data["family"]), str(data["family"]))
        renamed = _LEGACY_KNOBS.get(family, {})
        return cls(family, tuple((renamed.get(str(k), str(k)), v) for k, v in data["knobs"]))
