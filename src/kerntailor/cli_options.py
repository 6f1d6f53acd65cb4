"""The command line's choices and checks, in one place.

Every choice is an enum (Typer turns it into a Choice, so `--help` lists the values) or, for --target, a
parser whose metavar lists the targets (aliases such as gfx942 or sm_90 stay accepted). Every number is
range-checked by Typer (`min=`/`max=`) or by `positive`; paths are checked by `check_out_dir` and
`check_input_file`. All of it runs while the command line is parsed, before any work starts, and a mistake
is a `typer.BadParameter`, which cli.py's one error path prints as one line `kerntailor: error: ...` with
exit status 2. Nothing here imports torch: `kerntailor --help` stays fast.
"""

from __future__ import annotations

import math
import os
import tempfile
from enum import Enum
from pathlib import Path

import typer


class Strategy(str, Enum):
    """search/registry.py's STRATEGIES (a unit test keeps the two equal)."""

    exhaustive = "exhaustive"
    random = "random"
    evolutionary = "evolutionary"


class Dtype(str, Enum):
    """problem/spec.py's DTYPES (a unit test keeps the two equal)."""

    fp32 = "fp32"
    bf16 = "bf16"
    fp16 = "fp16"


class Precision(str, Enum):
    """precision.py's PRECISIONS (a unit test keeps the two equal)."""

    ieee = "ieee"
    tf32x3 = "tf32x3"
    tf32 = "tf32"
    fp8_row = "fp8-row"
    fp8_tensor = "fp8-tensor"


class Proposer(str, Enum):
    """generate/sources.py's PROPOSERS (a unit test keeps the two equal)."""

    template = "template"
    llm = "llm"
    all = "all"


class Part(str, Enum):
    """generate/bench.py's PARTS (a unit test keeps the two equal)."""

    all = "all"
    memory_bound = "memory-bound"
    gemm = "gemm"


class Device(str, Enum):
    """Where `verify` runs the candidate."""

    auto = "auto"
    cuda = "cuda"
    cpu = "cpu"


def value(choice: Enum | None) -> str | None:
    """The plain string of an enum choice (None stays None): what the stages take."""
    return None if choice is None else str(choice.value)


# --- targets: a choice with aliases -----------------------------------------------------------------------

def target_names() -> tuple[str, ...]:
    from kerntailor.targets.table import TARGETS

    return tuple(t.name for t in TARGETS) + ("local",)


TARGET_METAVAR = "[" + "|".join(target_names()) + "]"


def parse_target(text: str) -> str:
    """The canonical name of a target given by name or alias, any case ("MI300X", "gfx942", "sm_90"), or
    "local" (the GPU in this machine, resolved when the command runs)."""
    from kerntailor.errors import TargetError
    from kerntailor.targets.lookup import get_target, normalize_name

    if normalize_name(str(text)) == "local":
        return "local"
    try:
        return get_target(text).name
    except TargetError:
        raise typer.BadParameter(f"unknown target {text!r}: choose one of {', '.join(target_names())} "
                                 "(or an alias such as gfx942, sm_90; see `kerntailor targets`)") from None


# --- numbers ----------------------------------------------------------------------------------------------

# verify --draws: the draws run one after another (their inputs are never held at once: the memory of one draw,
# the largest judged variant's inputs, outputs and float64 reference, is what verify checks before it starts),
# but the judge lists every draw up front and each is one more full run of every judged variant. 100 draws is
# already 33 times the default; a billion would need some 70 GB for the tuple of their names alone (70 bytes
# a name, measured with sys.getsizeof on Python 3.11; issue #22 saw it run out of memory).
MAX_DRAWS = 100


def positive(number: float | None) -> float | None:
    """Typer callback: a finite number > 0 (None, an option left out, passes)."""
    if number is not None and not (math.isfinite(number) and number > 0):
        raise typer.BadParameter(f"must be a number of seconds > 0, got {number:g}")
    return number


def positive_dollars(number: float | None) -> float | None:
    """Typer callback: a price, a finite number of dollars > 0 (None, an option left out, passes)."""
    if number is not None and not (math.isfinite(number) and number > 0):
        raise typer.BadParameter(f"must be a number of dollars > 0, got {number:g}")
    return number


# --- paths ------------------------------------------------------------------------------------------------

def check_py_file(path: Path | None) -> Path | None:
    """Typer callback: a .py file to write (None passes), whose folder is not a file."""
    if path is None:
        return None
    if path.suffix != ".py":
        raise typer.BadParameter(f"{path}: must end in .py (the file is imported)")
    if path.parent.exists() and not path.parent.is_dir():
        raise typer.BadParameter(f"{path.parent} is not a directory")
    return path


def check_input_file(path: Path | None) -> Path | None:
    """Typer callback: an existing, readable file (None passes)."""
    if path is None:
        return None
    if not path.exists():
        raise typer.BadParameter(f"{path}: no such file")
    if not path.is_file():
        raise typer.BadParameter(f"{path}: not a file")
    if not os.access(path, os.R_OK):
        raise typer.BadParameter(f"{path}: not readable")
    return path


def check_out_dir(path: Path) -> Path:
    """Typer callback: a directory kerntailor can write its outputs into, created if missing. A path that is
    a file, that lies under a file, on a read-only file system, or that cannot be created is refused here,
    before any work starts (creating it is the only reliable test: root passes every permission check)."""
    if path.exists() and not path.is_dir():
        raise typer.BadParameter(f"{path} is a file, not a directory")
    parent = next((p for p in (path, *path.parents) if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise typer.BadParameter(f"{path} lies under {parent}, which is a file")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):   # the directory takes new files (a read-only mount does not)
            pass
    except OSError as e:
        raise typer.BadParameter(f"cannot write into {path}: {e.strerror or e}") from None
    return path
