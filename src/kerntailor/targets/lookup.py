"""Finding a Target: by name or alias, or by detecting the GPU in this machine.

Names are matched case-insensitively, ignoring spaces, dashes and underscores and a leading vendor word,
so "MI300X", "mi-300x", "AMD Instinct MI300X", "h100-sxm" and "SM_90" all resolve. An arch name maps to
exactly one target: gfx942 -> mi300x, gfx950 -> mi355x, gfx90a -> mi250x, sm_90 -> h200, sm_80 -> a100.
"""

from __future__ import annotations

import re

from kerntailor.errors import TargetError
from kerntailor.targets.spec import Target
from kerntailor.targets.table import TARGETS

_VENDOR_WORDS = ("amd", "nvidia", "instinct")


def normalize_name(name: str) -> str:
    """'AMD Instinct MI300X' -> 'mi300x'; 'sm_90' -> 'sm90'; 'H100-SXM' -> 'h100sxm'."""
    key = re.sub(r"[\s_\-]+", "", name.strip().lower())
    stripped = True
    while stripped:
        stripped = False
        for word in _VENDOR_WORDS:
            if key.startswith(word) and len(key) > len(word):
                key = key[len(word):]
                stripped = True
    return key


def _build_index() -> dict[str, Target]:
    index: dict[str, Target] = {}
    for t in TARGETS:
        for alias in (t.name, *t.aliases):
            key = normalize_name(alias)
            other = index.setdefault(key, t)
            if other is not t:  # a table bug, caught by the tests
                raise AssertionError(f"alias {alias!r} names both {other.name} and {t.name}")
    return index


_INDEX = _build_index()


def all_targets() -> tuple[Target, ...]:
    """Every known target, in the table's stable order."""
    return TARGETS


def known_names() -> tuple[str, ...]:
    return tuple(t.name for t in TARGETS)


def get_target(name: str) -> Target:
    """The target called `name` (canonical name or alias, any case). TargetError if unknown."""
    target = _INDEX.get(normalize_name(str(name)))
    if target is None:
        raise TargetError(f"unknown target {name!r}; known targets: {', '.join(known_names())} "
                          f"(aliases such as gfx942, sm_90; or 'local'; see `kerntailor targets`)")
    return target


def match_device(name: str, *, arch: str = "", total_memory: int = 0) -> Target | None:
    """The table row for a device as torch describes it, or None when it matches none.

    `name` is `get_device_properties().name` ("NVIDIA H200", "AMD Instinct MI300X"); `arch` is the ROCm
    `gcnArchName` ("gfx942:sramecc+:xnack-") or "sm_90" on CUDA. The name decides where it is specific;
    otherwise the arch maps to its one target (gfx942 with more than 200 GB is an MI325X). Close relatives
    map to the nearest row (A100 40GB -> a100, H100 PCIe -> h100, GH200 -> h200, MI210 -> mi250x).
    """
    lowered = (name or "").lower()
    for t in TARGETS:  # a canonical name as a whole word: "a100" in "A100-SXM4-80GB", not in "RTX A1000"
        if re.search(rf"(?<![a-z0-9])g?{t.name}(?![a-z0-9])", lowered):
            return t
    base_arch = (arch or "").split(":")[0].strip().lower()
    if base_arch == "gfx942" and total_memory > 200 * 10**9:
        return get_target("mi325x")
    by_arch = _INDEX.get(normalize_name(base_arch)) if base_arch else None
    return by_arch


def _local_device() -> tuple[str, str, int] | None:
    """(name, arch, total_memory) of GPU 0, or None when torch sees no GPU. May raise."""
    import torch

    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return None
    props = torch.cuda.get_device_properties(0)
    if getattr(torch.version, "hip", None):
        arch = getattr(props, "gcnArchName", "") or ""
    else:
        arch = f"sm_{props.major}{props.minor}"
    return props.name, arch, int(getattr(props, "total_memory", 0))


def detect_local_target() -> Target | None:
    """The target for GPU 0 of this machine (CUDA or ROCm torch), or None: no GPU, unknown GPU, any error."""
    try:
        device = _local_device()
        if device is None:
            return None
        name, arch, total_memory = device
        return match_device(name, arch=arch, total_memory=total_memory)
    except Exception:  # detection must never take the caller down
        return None


def describe_local_gpu() -> str:
    """One line naming the local GPU as torch sees it ("none" if there is none)."""
    try:
        device = _local_device()
    except Exception as e:  # noqa: BLE001 - a description, not a decision
        return f"none ({type(e).__name__}: {e})"
    if device is None:
        return "none"
    name, arch, _ = device
    target = match_device(name, arch=arch)
    return f"{name} ({arch})" + (f" -> {target.name}" if target else " -> not in the table")


def resolve_target(name_or_local: str | Target) -> Target:
    """`get_target(name)`, or the detected GPU for "local". TargetError if unknown or no GPU is found."""
    if isinstance(name_or_local, Target):
        return name_or_local
    if normalize_name(str(name_or_local)) == "local":
        target = detect_local_target()
        if target is None:
            raise TargetError(f"--target local: no known GPU detected (local GPU: {describe_local_gpu()}); "
                              f"name a target instead: {', '.join(known_names())}")
        return target
    return get_target(name_or_local)
