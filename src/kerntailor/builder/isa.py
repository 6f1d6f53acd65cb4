"""Parsers for compiler output: AMDGCN assembly text, PTX text, `ptxas -v` logs, cubin ELF files.

Each returns plain numbers and is tested on saved real output in tests/data/isa/. The formats, as
LLVM (triton 3.6, gfx942) prints them at the end of the AMDGCN text:

    ; codeLenInByte = 10696          ; NumVgprs: 192       ; NumAgprs: 64
    ; TotalNumVgprs: 256             ; ScratchSize: 0      ; Occupancy: 2
    amdhsa.kernels:
      - .agpr_count:     64
        .group_segment_fixed_size: 0
        .sgpr_count:     94
        .sgpr_spill_count: 0
        .vgpr_count:     256
        .vgpr_spill_count: 0

and as ptxas 12.8 prints them:

    ptxas info    : Function properties for gemm_kernel
        200 bytes stack frame, 196 bytes spill stores, 196 bytes spill loads
    ptxas info    : Used 255 registers, used 1 barriers, 200 bytes cumulative stack size
"""

from __future__ import annotations

import re
import struct
from collections import Counter

# ---- AMDGCN ---------------------------------------------------------------------------------------

_AMD_COMMENT_FIELDS = {           # "; Name: N" lines of the kernel-info block
    "vgprs": r"^; NumVgprs: (\d+)",
    "agprs_comment": r"^; NumAgprs: (\d+)",
    "total_vgprs": r"^; TotalNumVgprs: (\d+)",
    "scratch_bytes": r"^; ScratchSize: (\d+)",
    "occupancy": r"^; Occupancy: (\d+)",
    "code_size_bytes": r"^; codeLenInByte = (\d+)",
}
_AMD_METADATA_FIELDS = {          # YAML keys of the amdhsa.kernels metadata
    "vgpr_count": "vgpr_count",
    "agprs": "agpr_count",
    "sgprs": "sgpr_count",
    "vgpr_spills": "vgpr_spill_count",
    "sgpr_spills": "sgpr_spill_count",
    "lds_static_bytes": "group_segment_fixed_size",
    "private_segment_bytes": "private_segment_fixed_size",
}
_AMD_MATRIX = re.compile(r"^\s*(v_mfma\w*|v_smfmac\w*)\b", re.M)
_AMD_LOAD = re.compile(r"^\s*((?:global|buffer)_load_\w+)\b", re.M)


def parse_amdgcn(text: str) -> dict:
    """Resource use and instruction counts of the (first) kernel in an AMDGCN text.

    Keys: vgprs, agprs, sgprs, registers (`.vgpr_count`, arch + AGPR as allocated), vgpr_spills,
    sgpr_spills, spills, scratch_bytes, occupancy, lds_static_bytes, code_size_bytes,
    matrix_instr_count, matrix_instr_kinds, global_load_widths. Missing fields are None.
    """
    out: dict = {}
    for name, pattern in _AMD_COMMENT_FIELDS.items():
        m = re.search(pattern, text, re.M)
        out[name] = int(m.group(1)) if m else None
    for name, key in _AMD_METADATA_FIELDS.items():
        m = re.search(rf"^\s*-?\s*\.{key}:\s+(\d+)\s*$", text, re.M)
        out[name] = int(m.group(1)) if m else None
    if out["agprs"] is None:
        out["agprs"] = out["agprs_comment"]
    del out["agprs_comment"]
    out["registers"] = out.pop("vgpr_count")
    total = out.pop("total_vgprs")
    if out["registers"] is None:
        out["registers"] = total
    out["spills"] = (out["vgpr_spills"] or 0) + (out["sgpr_spills"] or 0)
    out.update(count_matrix_and_loads(text, "hip"))
    return out


# ---- PTX and ptxas --------------------------------------------------------------------------------

_PRED = r"^\s*(?:@!?%\w+\s+)?"
_PTX_MATRIX = re.compile(_PRED + r"((?:wgmma\.mma_async|mma\.sync|tcgen05\.mma)[\w.:]*)", re.M)
_PTX_LOAD = re.compile(_PRED + r"(ld\.global[\w.:]*)", re.M)
_PTX_CP_ASYNC = re.compile(  # cp.async.cg.shared.global [dst], [src], 0x10, %r24;  (size is the 3rd operand)
    _PRED + r"(cp\.async\.(?:ca|cg)\.shared\.global[\w.:]*)[^;]*?,\s*(0x[0-9a-fA-F]+|\d+)\s*[,;]", re.M)
_PTX_TMA = re.compile(_PRED + r"(cp\.async\.bulk\.tensor[\w.:]*)", re.M)
_PTX_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)", re.M)


def count_matrix_and_loads(text: str, backend: str) -> dict:
    """matrix_instr_count, matrix_instr_kinds and global_load_widths of AMDGCN or PTX text.

    Load keys are mnemonics (`buffer_load_dwordx4`, `ld.global.v4.b32`); a cp.async gets its copy
    size appended (`cp.async.cg.shared.global.16B`), since PTX gives the size as an operand.
    """
    if backend == "hip":
        matrix = Counter(_AMD_MATRIX.findall(text))
        loads = Counter(_AMD_LOAD.findall(text))
    else:
        matrix = Counter(_PTX_MATRIX.findall(text))
        loads = Counter(_PTX_LOAD.findall(text))
        for mnemonic, size in _PTX_CP_ASYNC.findall(text):
            loads[f"{mnemonic}.{int(size, 0)}B"] += 1
        loads.update(_PTX_TMA.findall(text))
    return {
        "matrix_instr_count": sum(matrix.values()),
        "matrix_instr_kinds": tuple(sorted(matrix)),
        "global_load_widths": tuple(sorted(loads.items())),
    }


def ptx_arch(ptx: str) -> str:
    """The `.target` of a PTX text (`sm_90a`, `sm_80`), for `ptxas -arch`."""
    m = _PTX_TARGET.search(ptx)
    if not m:
        raise ValueError("PTX text has no .target line")
    return m.group(1)


def parse_ptxas_log(log: str) -> dict:
    """registers, spill_store_bytes, spill_load_bytes, spills, stack_bytes, smem_bytes, barriers.

    Reads the first function's lines of `ptxas -v` output. Raises ValueError when there is no
    "Used N registers" line (ptxas failed or was not run with -v).
    """
    used = re.search(r"Used (\d+) registers", log)
    if not used:
        raise ValueError("no 'Used N registers' line in the ptxas log")
    frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    smem = re.search(r"Used \d+ registers.*?(\d+) bytes smem", log)
    barriers = re.search(r"used (\d+) barriers", log)
    stack, stores, loads = (int(g) for g in frame.groups()) if frame else (0, 0, 0)
    return {
        "registers": int(used.group(1)),
        "stack_bytes": stack,
        "spill_store_bytes": stores,
        "spill_load_bytes": loads,
        "spills": stores + loads,
        "smem_bytes": int(smem.group(1)) if smem else 0,
        "barriers": int(barriers.group(1)) if barriers else 0,
    }


def elf_text_bytes(elf: bytes) -> int | None:
    """Total size of the `.text*` sections of an ELF64 little-endian file (a cubin), or None."""
    if len(elf) < 64 or elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    if shoff == 0 or shnum == 0 or shoff + shnum * shentsize > len(elf):
        return None

    def section(i):
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize)
        return name, offset, size

    _, strtab_off, strtab_size = section(shstrndx)
    strtab = elf[strtab_off:strtab_off + strtab_size]
    total = 0
    for i in range(shnum):
        name_off, _, size = section(i)
        name = strtab[name_off:strtab.find(b"\0", name_off)]
        if name == b".text" or name.startswith(b".text."):
            total += size
    return total
