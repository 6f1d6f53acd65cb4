"""A build cache: one small JSON file per (kernel, target, triton version), assembly not kept.

What is stored is what the compiler decided (ok, error, ISA facts, compile seconds, warnings);
`rejected_reason` and `occupancy_rule` are recomputed on every read, since they depend on the
caller's settings and on the targets table. Timeouts and toolchain failures are never stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from kerntailor.builder.types import BuildResult, IsaFacts, KernelSource
from kerntailor.targets.spec import Target

CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """`$KERNTAILOR_HOME/build-cache`, else `~/.cache/kerntailor/build-cache` (read at call time)."""
    home = os.environ.get("KERNTAILOR_HOME")
    if home:
        return Path(home).expanduser() / "build-cache"
    return Path("~/.cache/kerntailor/build-cache").expanduser()


def _triton_version() -> str:
    import triton

    return triton.__version__


class BuildCache:
    """JSON files under `root` (default: `default_cache_dir()`), two hex digits of fan-out."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    def entry_key(self, kernel: KernelSource, target: Target) -> str:
        parts = [CACHE_FORMAT, kernel.key(), target.name, target.backend, target.arch, _triton_version()]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, kernel: KernelSource, target: Target) -> BuildResult | None:
        """The stored result (cached=True, no asm), or None on a miss or an unreadable entry."""
        path = self._path(self.entry_key(kernel, target))
        try:
            data = json.loads(path.read_text())
            facts = IsaFacts.from_json(data["facts"]) if data.get("facts") else None
            return BuildResult(key=kernel.key(), target=target.name, ok=bool(data["ok"]),
                               error=str(data.get("error", "")), facts=facts,
                               seconds=float(data.get("seconds", 0.0)),
                               warnings=tuple(data.get("warnings", ())), cached=True)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, kernel: KernelSource, target: Target, result: BuildResult) -> None:
        """Store `result` atomically (write to a temporary file, then rename); best effort: a cache
        that cannot be written (read-only, full disk) only loses the entry, never the build."""
        facts = None
        if result.facts is not None:
            facts = replace(result.facts, occupancy_rule=None, occupancy_limited_by=None).to_json()
        data = {"ok": result.ok, "error": result.error, "facts": facts, "seconds": result.seconds,
                "warnings": list(result.warnings), "kernel_name": kernel.kernel_name,
                "target": target.name}
        path = self._path(self.entry_key(kernel, target))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, separators=(",", ":"))
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
