"""What a stored result is keyed on: the problem (hash, dtype policy, input shapes, target) and the toolchain.

A winner found under one toolchain is a cache hit only under the same toolchain; a new torch, Triton,
CUDA/ROCm runtime, GPU driver or kerntailor version (or source: `generator_digest`) makes it *stale*: `kerntailor
recheck` re-verifies and re-times it before it is trusted again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Bump when what goes into a key changes, so that old keys stop matching instead of matching wrongly.
KEY_FORMAT = 1


def _digest(parts: Any) -> str:
    text = json.dumps(parts, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Toolchain:
    """The software and driver a kernel was verified and timed with. None where there is none (no GPU)."""

    torch: str
    triton: str
    python: str
    kerntailor: str
    cuda: str | None = None      # torch.version.cuda: the CUDA runtime torch was built with
    hip: str | None = None       # torch.version.hip: the ROCm/HIP runtime torch was built with
    driver: str | None = None    # GPU kernel driver (nvidia / amdgpu module version)
    gpu: str | None = None       # device name of GPU 0, when one is present

    def key(self) -> str:
        """A stable string: equal toolchains give equal keys, in any process, on any machine."""
        parts = [KEY_FORMAT, self.torch, self.triton, self.python, self.kerntailor, self.cuda, self.hip,
                 self.driver, self.gpu]
        runtime = f"cuda{self.cuda}" if self.cuda else f"hip{self.hip}" if self.hip else "cpu"
        return f"torch{self.torch}-triton{self.triton}-{runtime}-{_digest(parts)[:16]}"

    def to_dict(self) -> dict[str, str | None]:
        return {"torch": self.torch, "triton": self.triton, "python": self.python,
                "kerntailor": self.kerntailor, "cuda": self.cuda, "hip": self.hip, "driver": self.driver,
                "gpu": self.gpu}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Toolchain:
        return cls(**{k: data.get(k) for k in ("torch", "triton", "python", "kerntailor", "cuda", "hip",
                                                "driver", "gpu")})

    def diff(self, other: Toolchain) -> list[str]:
        """What changed from `self` to `other`, as "triton 3.5.0 → 3.6.0" lines."""
        a, b = self.to_dict(), other.to_dict()
        return [f"{k} {a[k]} → {b[k]}" for k in a if a[k] != b[k]]


def _driver_version() -> str | None:
    """The GPU kernel driver's version from /sys or /proc (Linux); None elsewhere or without a GPU."""
    for name, path in (("nvidia", "/sys/module/nvidia/version"), ("nvidia", "/proc/driver/nvidia/version"),
                       ("amdgpu", "/sys/module/amdgpu/version")):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if not text:
            continue
        if path.startswith("/proc"):  # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..."
            words = [w for w in text.split() if w[:1].isdigit() and "." in w]
            text = words[0] if words else text.splitlines()[0]
        return f"{name} {text}"
    return None


def _gpu_name() -> str | None:
    """Device 0's name, or None with no GPU. Note: this initializes CUDA/HIP in the calling process."""
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.device_count() > 0:
            return torch.cuda.get_device_name(0)
    except Exception:  # a broken driver must not stop a CPU-only run
        return None
    return None


@functools.lru_cache(maxsize=1)
def generator_digest() -> str:
    """12 hex digits over kerntailor's own source (.py and prompt files): a winner chosen by an older
    generator is a stale winner (recheck) and a library-path decision made before codegen covered a
    family is not served again. Computed once per process: the code that runs is what was imported."""
    import hashlib

    import kerntailor

    root = Path(kerntailor.__file__).parent
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".md", ".txt") and p.is_file()):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def toolchain_fingerprint(gpu: str | None | bool = True) -> Toolchain:
    """The toolchain of this process. `gpu=True` asks torch for GPU 0's name (initializing CUDA/HIP in
    this process); pass the name if it is already known, or False to leave it out."""
    import torch
    import triton

    import kerntailor

    if gpu is True:
        gpu_name = _gpu_name()
    else:
        gpu_name = gpu or None
    driver = _driver_version()
    if driver is None and gpu_name is not None:
        try:  # CUDA driver API version (e.g. 12040), where the kernel module is not visible
            driver = f"cuda-driver {torch._C._cuda_getDriverVersion()}"
        except Exception:
            driver = None
    return Toolchain(
        torch=torch.__version__,
        triton=triton.__version__,
        python=platform.python_version(),
        kerntailor=f"{kerntailor.__version__}+{generator_digest()}",
        cuda=torch.version.cuda,
        hip=getattr(torch.version, "hip", None),
        driver=driver,
        gpu=gpu_name,
    )


@dataclass(frozen=True)
class ProblemKey:
    """One problem on one target: content hash, dtype policy, default input shapes/dtypes, target name.

    `name` and `path` say where it came from (for `recheck` and reports); they are not part of the key,
    so a renamed or moved problem file still hits.
    """

    content_hash: str
    dtype: str | None                                         # dtype policy; None = as the file says
    inputs: tuple[tuple[tuple[int, ...] | None, str | None, str | None], ...]  # (shape, dtype, value repr)
    target: str
    name: str = field(default="", compare=False)
    path: str = field(default="", compare=False)
    precision: str = "ieee"                                   # fp32 matrix-product policy (generate --precision)

    def __post_init__(self):
        inputs = tuple((None if s is None else tuple(int(d) for d in s), dt, v) for s, dt, v in self.inputs)
        object.__setattr__(self, "inputs", inputs)

    @classmethod
    def of(cls, spec, target, precision: str = "ieee") -> ProblemKey:
        """The key of a ProblemSpec's default inputs on `target` (a Target or its name)."""
        target_name = target if isinstance(target, str) else target.name
        inputs = tuple((i.shape, i.dtype, i.value) for i in spec.inputs)
        # the resolved path: `recheck` loads the problem again from wherever it is run
        return cls(spec.content_hash, spec.dtype, inputs, target_name, spec.name, str(Path(spec.path).resolve()),
                   precision)

    def key(self) -> str:
        """`target/hash16-dtype/digest16`: readable, and the digest covers every part of the key."""
        inputs = [[None if s is None else list(s), dt, v] for s, dt, v in self.inputs]
        parts = [KEY_FORMAT, self.content_hash, self.dtype, inputs, self.target]
        if self.precision != "ieee":  # keys made before the policy existed stay valid for ieee
            parts.append(self.precision)
        digest = _digest(parts)
        return f"{self.target}/{self.content_hash[:16]}-{self.dtype or 'native'}/{digest[:16]}"

    def to_dict(self) -> dict[str, Any]:
        return {"content_hash": self.content_hash, "dtype": self.dtype,
                "inputs": [[None if s is None else list(s), dt, v] for s, dt, v in self.inputs],
                "target": self.target, "name": self.name, "path": self.path, "precision": self.precision}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProblemKey:
        return cls(data["content_hash"], data.get("dtype"), tuple(tuple(i) for i in data.get("inputs", ())),
                   data["target"], data.get("name", ""), data.get("path", ""), data.get("precision", "ieee"))
