"""What the build stage takes (KernelSource) and returns (BuildResult carrying IsaFacts)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

# AMD-only compile options (HIPOptions); dropped when the target is NVIDIA.
AMD_ONLY_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")


def _as_pairs(value, *, sort: bool) -> tuple:
    """A mapping or an iterable of pairs as a tuple of (str, value) pairs."""
    items = value.items() if isinstance(value, Mapping) else value
    pairs = tuple((str(k), v) for k, v in items)
    return tuple(sorted(pairs, key=lambda kv: kv[0])) if sort else pairs


@dataclass(frozen=True)
class KernelSource:
    """A Triton kernel to build: module text, the jit function to compile, and how to compile it.

    `source` is a whole Python module's text (jit kernels plus host code); it is imported from a
    temporary file so that `@triton.jit` can read it back with `inspect`.
    `signature` maps every argument of the jit function, in order, to a Triton type ("*fp16", "i32",
    "fp32", "constexpr"); an argument named in `constexprs` but missing here is added as "constexpr".
    `options` are compile options: num_warps, num_stages, and on AMD waves_per_eu,
    matrix_instr_nonkdim, kpack (dropped for NVIDIA targets).
    `specialization` maps argument names to Triton's launch-time specialization codes: "D" (divisible
    by 16) and, on AMD, "S" (the buffer fits in 2 GiB, so buffer_load/store may be used). None means
    what Triton's launcher gives a torch tensor under 2 GiB: "DS" for every pointer argument and
    nothing for integers. Integer arguments that will be multiples of 16 at run time (sizes,
    strides) should be listed with "D": without it masked loads are not vectorized and the ISA
    facts describe a slower kernel than the one that runs. An integer that will be 1 at run time
    (a unit stride) is specialized by Triton to the constant 1: pass it in `constexprs`.

    Mappings may be given as dicts; they are stored as tuples of pairs (constexprs, options and
    specialization sorted by name) so the value is hashable and its `key()` is stable.
    """

    source: str
    kernel_name: str
    signature: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, object], ...] = ()
    options: tuple[tuple[str, object], ...] = ()
    specialization: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "signature", _as_pairs(self.signature, sort=False))
        object.__setattr__(self, "constexprs", _as_pairs(self.constexprs, sort=True))
        object.__setattr__(self, "options", _as_pairs(self.options, sort=True))
        if self.specialization is not None:
            object.__setattr__(self, "specialization", _as_pairs(self.specialization, sort=True))

    def key(self) -> str:
        """A content hash (sha256 hex) of everything that decides the compiled code."""
        payload = [self.source, self.kernel_name, self.signature, self.constexprs, self.options,
                   self.specialization]
        text = json.dumps(payload, default=repr, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class IsaFacts:
    """Resource use and instruction mix of one compiled kernel, read from the compiler's output.

    AMD (from the AMDGCN text): `vgprs` architectural VGPRs (`; NumVgprs`), `agprs` accumulation
    VGPRs (`.agpr_count`), `sgprs` (`.sgpr_count`), `registers` the VGPRs allocated per lane, arch
    plus AGPR with the accumulation offset's alignment (`.vgpr_count`, the number occupancy
    depends on), `spills` = `.vgpr_spill_count` + `.sgpr_spill_count`, `scratch_bytes` per lane
    (`; ScratchSize`), `vgpr_spills`/`sgpr_spills` the two counts, `occupancy` waves per SIMD as
    the compiler reports it (`; Occupancy`, which ignores Triton's dynamically allocated LDS).
    NVIDIA (from `ptxas -v`): `registers` per thread, `spills` = spill-store + spill-load bytes,
    `scratch_bytes` the stack frame; `vgprs`/`agprs`/`sgprs`/`occupancy` are None.
    Both: `lds_bytes` LDS / shared memory per block (Triton's `metadata.shared` plus any static
    allocation); `occupancy_rule` waves per SIMD (AMD) or warps per SM (NVIDIA) from the target's
    rule (`kerntailor.targets.occupancy`, which also counts LDS), and `occupancy_limited_by` what
    limits it ("registers", "lds", "waves", "blocks");
    `matrix_instr_count` matrix instructions in the code (v_mfma / wgmma.mma_async, mma.sync),
    `matrix_instr_kinds` their distinct names, `global_load_widths` (load mnemonic, count) pairs,
    `code_size_bytes` machine-code bytes (`; codeLenInByte` on AMD, the cubin's .text on NVIDIA).
    """

    backend: str
    arch: str
    num_warps: int
    registers: int
    spills: int
    scratch_bytes: int
    lds_bytes: int
    vgprs: int | None = None
    agprs: int | None = None
    sgprs: int | None = None
    occupancy: int | None = None
    occupancy_rule: int | None = None
    occupancy_limited_by: str | None = None
    matrix_instr_count: int = 0
    matrix_instr_kinds: tuple[str, ...] = ()
    global_load_widths: tuple[tuple[str, int], ...] = ()
    code_size_bytes: int | None = None
    vgpr_spills: int | None = None
    sgpr_spills: int | None = None

    @property
    def spills_to_memory(self) -> bool:
        """Whether spilled values go to scratch / local memory (slow), not only to other registers.

        On AMD, SGPR spills usually go to VGPR lanes (v_writelane) and cost little; VGPR spills and
        any scratch use mean memory traffic. On NVIDIA every spill byte is local memory.
        """
        if self.backend == "hip":
            return bool(self.vgpr_spills) or self.scratch_bytes > 0
        return self.spills > 0

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping) -> IsaFacts:
        data = dict(data)
        data["matrix_instr_kinds"] = tuple(data.get("matrix_instr_kinds", ()))
        data["global_load_widths"] = tuple((str(k), int(n)) for k, n in data.get("global_load_widths", ()))
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class BuildResult:
    """The outcome of building one KernelSource for one Target. Never None; never printed.

    ok=False: it did not compile, or the build timed out or crashed its worker; `error` says why in
    one line. ok=True with `rejected_reason` set: it compiled but cannot run on the target as
    configured (LDS over the per-block limit, spills where spills are forbidden, ...); use
    `usable` for "compiled and within limits". `asm` holds the text ("amdgcn" or "ptx") only when
    asked for; it is never cached. `warnings` are the compiler's (e.g. kpack forced to 1 on gfx950)
    and the options that were dropped for this backend.
    """

    key: str
    target: str
    ok: bool
    error: str = ""
    facts: IsaFacts | None = None
    seconds: float = 0.0
    rejected_reason: str | None = None
    warnings: tuple[str, ...] = ()
    cached: bool = False
    asm: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def usable(self) -> bool:
        return self.ok and self.rejected_reason is None
