"""Triton source for an attention group: softmax(Q Kᵀ · scale + mask) V as a flash-attention forward, plus the
pointwise epilogue over its output.

    out[..., i, :] = Σ_j softmax_j(scale · q[i]·k[j] + bias[i, j]) · v[j]        (Attention, ir/nodes.py)

Iteration: a 1-D grid of cdiv(Lq, BLOCK_M) x (the output's leading dims flattened: batch x heads) programs, query
blocks fastest. A program holds one BLOCK_M x D tile of Q in registers and walks the keys BLOCK_N at a time:
S = Q Kᵀ with `tl.dot` into fp32, the running row max m and sum l of the online softmax (in the log2 domain: exp2
of scores pre-multiplied by log2(e)), acc = acc · exp2(m_old - m_new) + P V (P cast to V's dtype for the second
product, as FlashAttention does). The score matrix is never written. The loop is split in two: the key blocks
every row of the tile sees whole (no mask), then the few that need one (the causal diagonal, the keys past Lk).
With is_causal the blocks above the diagonal are never visited (top-left aligned, as SDPA's is_causal: key j
is seen by row i iff j <= i), and the query blocks run last first (the most keys first: a shorter tail).
The step is Triton's fused-attention tutorial's (_step); where the head dims vary per call, the host passes
D_FULL (they fill BLOCK_D and BLOCK_DV) and the loop's loads then carry no head-dim mask. With the TMA knob
(sm_90), K and V come through per-program tensor descriptors, as the tutorial reads them on Hopper, where the host
finds every stride and address 16-byte aligned (USE_TMA, per call); otherwise through the pointer loads.

Decode (one or a few queries, a grid below the GPU's compute units): with SPLIT > 1 the keys are cut in SPLIT chunks,
a program each, whose partial (m, l, acc) a second kernel combines in a fixed order before the epilogue
(codegen/attention_split.py, flash-decoding); SPLIT = 1 is the kernel described here.

ReLU attention (Attention.score "relu", written out only): relu(Q Kᵀ · scale + mask) V, the same loop without
the statistics: p = relu(masked scores) at the scores' own scale, acc += P V, no division at the end (a masked
score is -inf, so it weighs 0; relu keeps a NaN score NaN, `tl.where(s < 0, 0, s)`, as torch.relu does).

A q or k the plan gave a pointwise prologue (rotary embedding: FusionGroup.operand_prologues) is computed, not
loaded: q's on its tile once, k's on every key block of both loops (codegen/attention_prologue.py), by pointer loads
(a TMA schedule refuses a computed k), 0 outside the tile. A computed k halves the default BLOCK_N.

GQA / MQA: a K/V operand with fewer heads than Q (enable_gqa) is read at head i // (Hq / Hkv), never expanded.
With the PACK knob (decode, a few queries: pack_group) a program's rows are (query head of the group, query) for the
G = Hq / Hkv query heads of one K/V head: the grid is cdiv(G x Lq, BLOCK_M) x batch x K/V heads, q's loads and the
output's stores take each row's head (ih), and K and V are read once per K/V head instead of G times.
Every size and stride is a runtime argument; q, k and v are read through their Views (a transpose of a fused
QKV projection costs nothing). Head dims that are not powers of two are padded to BLOCK_D (masked loads).

Precision: 16-bit operands multiply exactly with fp32 accumulation (the dot helpers of codegen/helpers/dot.py,
which upcast under the interpreter); fp32 operands take the user's policy (ieee by default, tf32 / tf32x3),
checked per target as the GEMM does (gemm.check_precision). Softmax statistics are always fp32.

Special values, as PyTorch's SDPA computes them (its math backend: what the float64 reference runs; measured
with torch 2.13 on the CPU, 2026-12-02):
- a row whose scores are all -inf (every key masked) gives 0, not NaN (PyTorch's `_safe_softmax`): l = 0 there,
  and the kernel divides by 1 instead, so the row is Σ 0·v (0, or NaN where v holds a NaN or Inf);
- a boolean mask is added as 0 / -inf (NaN + -inf stays NaN), an additive mask is added; is_causal replaces the
  masked scores by -inf (masked_fill: a NaN key above the diagonal does not reach the row);
- attention written out (capture/rewrite_attention.py; Attention.fill_on, safe_softmax): a masked_fill mask
  replaces the scaled score by -inf (`tl.where`, so a NaN score at a masked key does not reach the row), and a
  row with every key masked is 0 / 0 = NaN, as eager softmax gives it; a written-out mask proved causal
  (capture/causal_mask.py) arrives as is_causal with fill_on None, whose -inf replacement is masked_fill's;
- a masked key still multiplies its (zero) weight by v: a NaN or Inf in v at a key masked for row i makes
  out[i] NaN in that column. The causal kernel skips the blocks above the diagonal, so a small kernel before it
  records, per (batch x head) and column of v, 1 + the last key holding a NaN or Inf (`v_last_bad`, one read of
  V, in key chunks); the attention kernel writes NaN where that key lies above row i. Only causal kernels have
  it: every other kernel visits every key, and 0 x NaN reaches the row by itself.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Generalized, SizeExpr
from kerntailor.codegen.anchor import AnchorWriter
from kerntailor.codegen.assemble import assemble
from kerntailor.codegen.attention_prologue import compute_prologue, operand_prologue
from kerntailor.codegen.attention_split import SCRATCH_DTYPES, FlashParts, combine_kernel, key_chunk, write_split
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.gemm import check_precision
from kerntailor.codegen.helpers import dot_helper, math_helper, tma_allocator
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis, Scratch
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import const, product, same
from kerntailor.ir.expr import loads
from kerntailor.ir.nodes import Attention
from kerntailor.plan.fusion import FusionGroup
from kerntailor.search.families import MAX_PACK_QUERIES
from kerntailor.units import ITEMSIZE, next_power_of_two

PRECISIONS = ("ieee", "tf32", "tf32x3")   # fp32 operands' dot policies (16-bit operands ignore it)
MATRIX_DTYPES = ("fp32", "bf16", "fp16")
MAX_HEAD_DIM = 256   # the largest head dim the kernel takes per call (flash attention's usual limit)
MIN_DOT = 16                               # tl.dot's smallest tile side (triton 3.6)
LOG2E = 1.4426950408889634
SCAN_KEYS = 512       # keys per program of the causal kernel's V scan (_v_scan)
LONG_KEYS = 1 << 16   # fp32: past this many keys the whole-block loop runs in chunks (_whole_blocks)


def key_chunks(lk: int, block_n: int) -> int:
    """KCHUNK, the key blocks per chunk of an fp32 kernel's loop at Lk keys: 1 (one chain) up to LONG_KEYS, else
    about sqrt(Lk) keys per chunk (a power of two of blocks, at least 2). The host's per-call text is the same."""
    if lk <= LONG_KEYS:
        return 1
    return max(2, next_power_of_two(int(lk ** 0.5)) // block_n)


@dataclass(frozen=True, kw_only=True)
class AttentionSchedule(Schedule):
    """BLOCK_M query rows per program, BLOCK_N keys per step of its loop; fp32 products in `precision` (the
    user's policy, never tuned); AMD: matrix_instr_nonkdim; sm_90: TMA (K and V through tensor descriptors where
    the host finds the strides and addresses 16-byte aligned, else the pointer loads)."""

    family: ClassVar[str] = "attention"
    order: ClassVar[tuple[str, ...]] = ("BLOCK_M", "BLOCK_N", "num_warps", "num_stages", "precision",
                                        "waves_per_eu", "matrix_instr_nonkdim", "TMA", "SPLIT", "PACK")
    shown: ClassVar[tuple[str, ...]] = ("BLOCK_M", "BLOCK_N", "num_warps", "num_stages", "precision")

    BLOCK_M: int
    BLOCK_N: int
    num_stages: int = 2
    precision: str = "ieee"
    matrix_instr_nonkdim: int | None = None
    TMA: int = 0   # sm_90: K and V tiles through tensor descriptors (the tutorial's Hopper loads); not for a computed k
    SPLIT: int = 1   # key chunks, each its own program (decode: codegen/attention_split.py); 1: one program walks all
    PACK: int = 0    # GQA: a program's rows span the query heads of one K/V head (pack_group); 0: one query head

    def __post_init__(self) -> None:
        super().__post_init__()
        self.one_of("TMA", (0, 1))
        self.one_of("PACK", (0, 1))
        self.power_of_two("SPLIT")
        for name in ("BLOCK_M", "BLOCK_N"):
            self.power_of_two(name)
            self.at_least(name, MIN_DOT)
        self.one_of("precision", PRECISIONS)
        if self.matrix_instr_nonkdim is not None:
            self.one_of("matrix_instr_nonkdim", (0, 16, 32))


def attention_node(gen: Generalized, group: FusionGroup) -> Attention:
    node = gen.graph.node(group.anchor)
    if not isinstance(node, Attention):
        raise CodegenUnsupported(f"{group.name}: an attention group must start with its Attention node")
    return node


def work_sizes(gen: Generalized, group: FusionGroup) -> dict:
    """{"BH", "Lq", "Lk", "D", "Dv"} of the group's attention at the traced shapes (BH: the leading dims of the
    output, batch x heads), and "MASK" (its element's bytes) where a mask is loaded as a (BLOCK_M, BLOCK_N) tile
    (not broadcast along the queries or keys: _score_masks), and "KLOADS" where k has a prologue (key_loads): what
    search/families.py's attention_space and the cost model size it by."""
    node = attention_node(gen, group)
    q, k, v = (op.shape for op in node.operands[:3])
    sizes = {"BH": prod(node.out.shape[:-2]), "Lq": q[-2], "Lk": k[-2], "D": q[-1], "Dv": v[-1]}
    if len(node.operands) == 4 and all(node.operands[3].strides[-2:]):   # a 2-D mask tile a step, not a row
        dtype = gen.graph.buffer_type(node.operands[3].base).dtype
        sizes["MASK"] = 1 if dtype == "bool" else ITEMSIZE[dtype]
    if 1 in dict(group.operand_prologues):
        sizes["KLOADS"] = key_loads(gen, group)
    group_heads = pack_group(gen, group)
    if group_heads:
        sizes["G"] = group_heads
    return sizes


def pack_group(gen: Generalized, group: FusionGroup) -> int:
    """G, the query heads that share one K/V head, where the PACK knob can put them in one program's rows; 0 where
    it cannot. PACK (GQA / MQA at a decode step): the rows of a program's tile are (query head of the group, query),
    G x Lq of them per K/V head, so K and V are read once per K/V head, not G times, and a 16-row tile at Lq = 1
    holds G rows, not 1. Offered where the heads are the axis before the queries, K and V have the same fewer heads,
    the attention is not causal (its key range per row stays the flash kernel's), no prologue computes q or k,
    and a mask, if any, is broadcast along the heads (its load stays one per tile: no per-row head)."""
    node = attention_node(gen, group)
    q, k, v = node.operands[:3]
    if len(node.out.shape) < 3 or node.causal or group.operand_prologues:
        return 0
    hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
    if hk != hv or hk >= hq or hq % hk:
        return 0
    if len(node.operands) == 4 and node.operands[3].strides[-3] != 0:
        return 0
    return hq // hk


def key_loads(gen: Generalized, group: FusionGroup) -> int:
    """The tiles of K's shape that k's prologue loads on every key step (at least 1): one per operand a member reads
    from memory (codegen/attention_prologue.py loads each as a (BLOCK_D, BLOCK_N) tile under the tile's mask; a
    rotate_half's two halves are two masked loads). Rotary embedding: 5 (k, its two halves, cos, sin). Each is a
    load the software pipeliner gives buffers of its own: cross-compiled for sm_90 (rope_sdpa bf16, D = 128, 128 x
    64, 2 stages, triton 3.6, 2026-12-05) the TTGIR holds five (1, 128, 64) bf16 buffers beside V's two."""
    members = set(dict(group.operand_prologues)[1])
    count = 0
    for name in members:
        node = gen.graph.node(name)
        count += sum(node.operands[i].base not in members for i in loads(node.expr))
    return max(1, count)


def operand_dtype(gen: Generalized, group: FusionGroup) -> str:
    return gen.graph.buffer_type(attention_node(gen, group).operands[0].base).dtype


def default_schedule(gen: Generalized, group: FusionGroup) -> AttentionSchedule:
    """A schedule without search, portable across targets.

    16-bit operands: 128 query rows x 64 keys, 8 warps, 2 stages (Triton's fused-attention tutorial's Hopper
    choice is 128 x 64 or 128 x 128 with 8 warps and 3-4 stages; 2 keeps a D = 128 K+V pair, 2 x 16 KiB per
    stage, within gfx942's 64 KiB of LDS). fp32 operands: 16 x 64 with 4 warps (measured on the H200 under the
    ieee policy, an FMA loop there: 48 ms against 104 ms for 64 x 32 on sdpa; BENCHMARKS.md, fourth session of
    2026-12-03). Short sequences get tiles rounded up from their length (never below tl.dot's 16): decode (Lq = 1)
    takes 16 rows. GQA at a few queries (pack_group, Lq <= MAX_PACK_QUERIES) packs the query heads of a K/V head in
    the rows (PACK): measured on the H100 (Llama decode step, 32 heads on 8, Lk 4096, D 128, bf16, 16 x 64 / 4 warps /
    2 stages, GPU time in a CUDA graph; benchmarks/data/h100_2026-12-05f/): batch 32 178 us packed against 286
    unpacked (eager's cuDNN 191 under the stopwatch), batch 1 split 16 ways 14.0 against 20.2 (eager 10.6)."""
    sizes = work_sizes(gen, group)
    sixteen = operand_dtype(gen, group) in ("bf16", "fp16")
    bm, bn = (128, 64) if sixteen else (16, 64)
    if max(sizes["D"], sizes["Dv"]) > 128:   # 256-wide heads: half the rows, the accumulator stays 64 KiB
        bm = bm // 2
    if 1 in dict(group.operand_prologues):
        # k computed on every key block (rotary embedding: five loads and their values live at once): half the keys.
        # Cross-compiled (rope_sdpa, D = 128, triton 3.6, 2026-12-04): bf16 at 128 x 64 spilled 144 on sm_90 and 27
        # on gfx942, at 128 x 32 0 and 9; fp32 at 16 x 64 took 232 KiB of shared memory on sm_90 (over its 227), at
        # 16 x 32 120 KiB (and spills, as fp32 ieee does there), 0 spills on gfx942
        bn = 32
    pack = int(sizes.get("G", 0) > 1 and sizes["Lq"] <= MAX_PACK_QUERIES)
    bm = min(bm, max(MIN_DOT, next_power_of_two(sizes["Lq"] * (sizes["G"] if pack else 1))))
    bn = min(bn, max(MIN_DOT, next_power_of_two(sizes["Lk"])))
    warps = 8 if bm >= 128 else 4
    return AttentionSchedule(BLOCK_M=bm, BLOCK_N=bn, num_warps=warps, num_stages=2, PACK=pack)


def generate_attention(gen: Generalized, group: FusionGroup, schedule: AttentionSchedule, host_names: dict,
                       kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for an attention group under `schedule` (the causal kernel's V scan before it)."""
    if group.family != "attention":
        raise CodegenUnsupported(f"{group.name} is a {group.family} group")
    return _AttentionWriter(gen, group, schedule, host_names, kernel_name, arch).write()


class _AttentionWriter(AnchorWriter):
    anchor_type = Attention
    takes_layout_stores = True   # a GPT block's (B, H, T, D) -> (B, T, H, D) copy: O stored at its strides
    takes_prologue = True        # q's and k's pointwise prologues (rotary embedding): codegen/attention_prologue.py

    def __init__(self, gen, group, schedule: AttentionSchedule, host_names, name, arch):
        super().__init__(gen, group, schedule, host_names, name)
        self.arch = arch
        self.module_helpers: list[str] = []
        self.host_constexprs: list[tuple[str, str]] = []
        self.chunk: tuple[int, str | None] | None = None   # KCHUNK: (its value, or the host's text per call)
        self.d_full: int | None = None       # D_FULL at the traced shapes (_head_full), None: no such constexpr
        self.tma: tuple[str, int] | None = None   # USE_TMA: (the host's per-call condition, its traced value)
        self.scale_positive = False          # the softmax scale > 0 at every size (_positive)
        self.relu = False                    # weights relu(scores), not their softmax (Attention.score)
        self.computed = {j for j in (0, 1) if operand_prologue(self, j)}   # q, k: computed by a prologue, not loaded
        self.kv_coords: dict[str, dict[int, str]] = {}
        self.first = "0"   # the first key of the program's whole blocks ("k_lo": its chunk's, attention_split.py)
        self.pack: tuple[SizeExpr, SizeExpr] | None = None   # PACK: (query heads, K/V heads) as sizes (_check_pack)

    # --- checks -----------------------------------------------------------------------------------------------
    def _check(self) -> tuple[str, list]:
        att: Attention = self.anchor
        if len(att.operands) not in (3, 4):
            raise CodegenUnsupported(f"{att.name}: attention with {len(att.operands)} operands")
        q, k, v = att.operands[:3]
        rank = len(att.out.shape)
        if rank < 2 or any(len(op.shape) != rank for op in att.operands):
            raise CodegenUnsupported(f"{att.name}: operands of ranks {[len(op.shape) for op in att.operands]}")
        dtype = self.graph.buffer_type(q.base).dtype
        if dtype not in MATRIX_DTYPES or any(self.graph.buffer_type(op.base).dtype != dtype for op in (k, v)):
            raise CodegenUnsupported(f"{att.name}: attention over "
                                     f"{', '.join(self.graph.buffer_type(op.base).dtype for op in (q, k, v))}")
        if att.out.dtype != dtype:
            raise CodegenUnsupported(f"{att.name}: {dtype} operands with a {att.out.dtype} result")
        if dtype == "fp32":
            check_precision(self.schedule.precision, dtype, self.arch)
        parts = [self.view_exprs(att, j) for j in range(len(att.operands))]
        if len(parts) == 4:
            mask_dtype = self.graph.buffer_type(att.operands[3].base).dtype
            if mask_dtype not in ("bool", "fp32", "bf16", "fp16", "fp64"):
                raise CodegenUnsupported(f"{att.name}: an attention mask of {mask_dtype}")
            if att.fill_on is not None and mask_dtype != "bool":
                raise CodegenUnsupported(f"{att.name}: a masked_fill mask of {mask_dtype}, not bool")
        elif att.fill_on is not None:
            raise CodegenUnsupported(f"{att.name}: masked_fill semantics without a mask operand")
        if att.score not in ("softmax", "relu"):
            raise CodegenUnsupported(f"{att.name}: attention weights by {att.score}")
        fed = {n for j in self.computed for n in dict(self.group.operand_prologues)[j]}
        if any(n.name not in fed for n in self.prologue):
            raise CodegenUnsupported(f"{self.group.name}: a prologue that computes neither q nor k", att.name)
        if self.schedule.TMA and 1 in self.computed:
            raise CodegenUnsupported(f"{att.name}: TMA loads K through a descriptor, its prologue computes it")
        if self.schedule.PACK:
            self._check_pack(parts)
        return dtype, parts

    def _check_pack(self, parts) -> None:
        """self.pack for a PACK schedule: the query heads and the K/V heads as sizes, where pack_group offers it and
        the sizes keep it at every variant (K and V the same heads, a mask broadcast along them); else refused."""
        att: Attention = self.anchor
        if not pack_group(self.gen, self.group):
            raise CodegenUnsupported(f"{att.name}: PACK needs grouped K/V heads (GQA) before the queries, no causal "
                                     "mask, no prologue and a mask broadcast along the heads")
        h = len(att.out.shape) - 3
        k_heads, v_heads = parts[1][1][h], parts[2][1][h]
        if not same(k_heads, v_heads) or (len(parts) == 4 and not _zero(parts[3][2][h])):
            raise CodegenUnsupported(f"{att.name}: PACK needs K and V of the same heads and a mask broadcast along "
                                     "them at every size")
        out_heads = self.sizes.slot(("node", att.name, "out", h), att.out.shape[h])
        self.pack = (out_heads, k_heads)

    # --- the kernel -------------------------------------------------------------------------------------------
    def write(self) -> GeneratedKernel:
        att: Attention = self.anchor
        dtype, parts = self._check()
        self.relu = att.score == "relu"
        if self.schedule.SPLIT > 1:   # the keys in SPLIT chunks, then a kernel that combines them
            return write_split(self, dtype, parts)
        flash = self.flash_loop(dtype, parts)
        if self.relu:
            self.out("o = acc  # relu weights are not normalised")
        else:
            self.normalise()
        return self.finish_rows(flash, dtype)

    def flash_loop(self, dtype: str, parts, split: bool = False) -> FlashParts:
        """The kernel's lines up to the end of its key loops: the program's coordinates, its q tile, and (m_i, l_i,
        acc) over its keys (split: over its chunk of them, attention_split.py)."""
        att: Attention = self.anchor
        (q, q_shape, q_st, q_off), (k, k_shape, k_st, k_off), (v, v_shape, v_st, v_off) = parts[:3]
        rank = len(att.out.shape)
        nl = rank - 2
        space = [self.sizes.slot(("node", att.name, "out", j), s) for j, s in enumerate(att.out.shape)]
        Lq, Lk = self.sizes.text(q_shape[-2]), self.sizes.text(k_shape[-2])
        D, Dv = self.sizes.text(q_shape[-1]), self.sizes.text(v_shape[-1])
        block_d = self._head_block("BLOCK_D", q_shape[-1], att.operands[0].shape[-1])
        block_dv = self._head_block("BLOCK_DV", v_shape[-1], att.operands[2].shape[-1])
        self.head_dims = (("q", q_shape[-1]), ("k", k_shape[-1]), ("v", v_shape[-1]))
        lead = space[:nl]
        self._program(nl, lead, Lq, split)
        self.kv_coords = kv_coords = {name: self._kv_coords(name, parts[j][0], parts[j][1], lead, nl)
                                      for j, name in ((1, "k"), (2, "v"))}
        q_coords = {a: f"i{a}" for a in range(nl)}
        q_head = ""   # PACK: q's head per row (ih), added to its rows' offsets; i<h> is the K/V head
        if self.pack is not None:
            for coords in kv_coords.values():
                coords[nl - 1] = f"i{nl - 1}"
            q_coords[nl - 1] = "0"
            q_head = f"{self._t('ih[:, None]', q_st[nl - 1])} + "
        if 0 not in self.computed:
            self._base("q", q, q_st, q_off, q_coords, nl)
        if 1 not in self.computed:
            self._base("k", k, k_st, k_off, kv_coords["k"], nl)
        self._base("v", v, v_st, v_off, kv_coords["v"], nl)
        masked = len(parts) == 4
        if masked:
            m_view, _, m_st, m_off = parts[3]
            self._base("m", m_view, m_st, m_off, {a: f"i{a}" for a in range(nl)}, nl)
        d_mask = block_d[1]
        dv_mask = block_dv[1]
        self.rows(Lq)
        self.out("rd = tl.arange(0, BLOCK_D)  # q and k head dim")
        self.out("rdv = tl.arange(0, BLOCK_DV)  # v head dim")
        self.out("rn0 = tl.arange(0, BLOCK_N)")
        q_mask = [f"({self.row_ok(Lq, column=True)})"] + ([f"(rd[None, :] < {D})"] if d_mask else [])
        if 0 in self.computed:   # (BLOCK_M, BLOCK_D), held
            compute_prologue(self, 0, {a: f"i{a}" for a in range(nl)} | {nl: "rm[:, None]", nl + 1: "rd[None, :]"},
                             q_mask, "[BLOCK_M, BLOCK_D]", "rm", "q")
        else:
            self.out(f"q = tl.load({self.pointer(q.base)} + q_base + {q_head}{self._t('rm[:, None]', q_st[-2])} + "
                     f"{self._t('rd[None, :]', q_st[-1])}, mask={' & '.join(q_mask)}, other=0.0)  "
                     "# (BLOCK_M, BLOCK_D), held")
        self.d_full = self._head_full(d_mask or dv_mask, (q_shape[-1], v_shape[-1]))
        if 1 not in self.computed:
            self.out(f"kt_off = {self._t('rn0[None, :]', k_st[-2])} + {self._t('rd[:, None]', k_st[-1])}"
                     "  # K^T's offsets at key block 0, (BLOCK_D, BLOCK_N): the loop adds start x the row stride")
        self.out(f"v_off = {self._t('rn0[:, None]', v_st[-2])} + {self._t('rdv[None, :]', v_st[-1])}"
                 "  # (BLOCK_N, BLOCK_DV)")
        scale = self.sizes.slot(("node", att.name, "scale"), att.scale)
        self.scale_positive = _positive(scale)
        if self.relu:   # no exponential: the scores at their own scale
            self.out(f"qk_scale = {self.sizes.text(scale) if not scale.is_constant else repr(float(att.scale))}"
                     "  # relu(scores): no softmax, no base change")
        else:
            scale_text = self.sizes.text(scale) if not scale.is_constant else repr(float(att.scale) * LOG2E)
            self.out(f"qk_scale = {scale_text}{f' * {LOG2E!r}' if not scale.is_constant else ''}"
                     "  # scale x log2(e): the softmax in base 2")
        if self.schedule.TMA:
            self._tma_descriptors(parts, dtype, Lk, D, Dv)
        if not self.relu:
            self.out('m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running row max (log2 domain)')
            self.out("l_i = tl.zeros([BLOCK_M], tl.float32)  # running row sum")
        self.out("acc = tl.zeros([BLOCK_M, BLOCK_DV], tl.float32)")
        # keys every row of the tile sees whole (no mask), then the rest (the diagonal, the tail past Lk)
        if att.causal:
            self.out(f"hi = tl.minimum((pid_m + 1) * BLOCK_M, {Lk})  # causal: keys past the tile's last row unseen")
            self.out(f"lo = tl.minimum(pid_m * BLOCK_M, {Lk}) // BLOCK_N * BLOCK_N"
                     "  # keys below every row of the tile")
        else:
            self.out(f"hi = {Lk}")
            self.out(f"lo = {Lk} // BLOCK_N * BLOCK_N  # whole key blocks")
        if split:
            key_chunk(self, Lk)
        ops = (k, k_st, v, v_st, Lk, D, Dv, d_mask, dv_mask, dtype)
        self._whole_blocks(ops, masked, parts, k_shape[-2], att.operands[1].shape[-2], dtype)
        with self.out.block("for start in range(lo, hi, BLOCK_N):  # the diagonal and the tail: masked"):
            self._step(ops, masked, parts, edge=True)
        return FlashParts(tuple(space), nl, v, block_d, block_dv, Lq, Dv)

    def normalise(self) -> None:
        """o: the softmax's weighted sum, acc over the row sums l_i (per the Attention's empty-row rule)."""
        if self.anchor.safe_softmax:
            self.out("l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # a row with every key masked: 0 (SDPA's safe softmax)")
            self.out("o = acc / l_safe[:, None]")
        else:
            self.out("o = acc / l_i[:, None]  # a row with every key masked: 0 / 0 = NaN, as softmax written out")

    def finish_rows(self, flash: FlashParts, dtype: str, before: tuple[GeneratedKernel, ...] = (),
                    combine: int = 0) -> GeneratedKernel:
        """From the rows' o (BLOCK_M x BLOCK_DV, rm and rdv written) on: a causal kernel's NaN from v above the
        diagonal (its V scan launched first), the epilogue, the stores, the kernel. combine: the SPLIT of the
        partials this kernel combines (0: it is the whole flash kernel)."""
        att: Attention = self.anchor
        space, nl = list(flash.space), flash.nl
        if att.causal:
            before = (self._v_scan(nl, space[:nl], flash.v, self.schedule.BLOCK_N, flash.block_dv),) + before
            dv = flash.Dv
            self.out(f"last_bad = tl.load({self.pointer('v_last_bad')} + bh * {dv} + rdv, "
                     f"mask=rdv < {dv}, other=0)  # 1 + the last key with a NaN or Inf in v, per column (0: none)")
            self.out('o = tl.where(last_bad[None, :] > rm[:, None] + 1, float("nan"), o)'
                     "  # that key masked for the row: 0 x NaN, as SDPA")
        self.out("om = rm[:, None]  # output rows, (BLOCK_M, 1)")
        self.out("od = rdv[None, :]  # output columns, (1, BLOCK_DV)")
        self.out(f"mmask = {self.row_ok(flash.Lq, column=True) if self.pack is not None else f'om < {flash.Lq}'}")
        self.out(f"dmask = od < {flash.Dv}")
        self.coords = {a: f"i{a}" for a in range(nl)} | {nl: "om", nl + 1: "od"}
        if self.pack is not None:   # the rows' own query heads
            self.out("oh = ih[:, None]  # each row's query head, (BLOCK_M, 1)")
            self.coords[nl - 1] = "oh"
        self.tile = "[BLOCK_M, BLOCK_DV]"
        self.full_mask = "mmask & dmask"
        self.out(f"v_{att.name} = o  # {att.describe()}")
        self.compute_epilogue()
        self.store_outputs(space)
        if combine:
            return combine_kernel(self, flash, before, combine)
        return self._finish(att, space, nl, self.schedule.BLOCK_M, self.schedule.BLOCK_N, flash.block_d,
                            flash.block_dv, before, dtype)

    def _t(self, index: str, stride: SizeExpr) -> str:
        st = self.sizes.text(stride)
        return index if st == "1" else f"{index} * {st}"

    def _head_block(self, name: str, size: SizeExpr, traced: int) -> tuple[int, bool]:
        """(BLOCK_D at the traced shapes, whether loads need a mask along the head dim). A head dim that changes
        between variants takes its block per call from the host (next power of two, at least 16)."""
        block = max(MIN_DOT, next_power_of_two(traced))
        if size.is_constant:
            return block, block != traced
        self.host_constexprs.append((name, f"max({MIN_DOT}, triton.next_power_of_2({self.sizes.host(size)}))"))
        return block, True

    def _head_dim_checks(self) -> tuple[str, ...]:
        """Host lines refusing, by name, a head dim past MAX_HEAD_DIM where it varies per call: the kernel holds
        BLOCK_M rows of q (and BLOCK_N of k and v) over the whole head dim on chip, so a longer one fails to compile
        (the referee's edges stage met Triton's CompilationError at a head dim of 2^20 + 3) or spills."""
        names: dict[str, list[str]] = {}   # host text of a varying head dim -> the tensors that have it
        for what, size in self.head_dims:
            if not size.is_constant:
                names.setdefault(self.sizes.host(size), []).append(what)
        lines = []
        for host, whats in names.items():
            lines += [f"if {host} > {MAX_HEAD_DIM}:",
                      f'    raise ValueError(f"the head dim of {", ".join(whats)} is {{{{{host}}}}}: {self.name} holds '
                      f'whole head rows on chip and was generated for head dims up to {MAX_HEAD_DIM}; generate the '
                      'kernel at this head dim")']
        return tuple(lines)

    def _program(self, nl: int, lead: list[SizeExpr], Lq: str, split: bool = False) -> None:
        """pid_m: the query block; bh: the leading coordinates flattened, unravelled into i0, i1, ... One grid
        axis holds both (query blocks fastest: the programs of one head run together and share its k and v in
        L2): a second axis would hold batch x heads, and CUDA caps grid axes 1 and 2 at 65535 programs (an
        H200 launch of 2^20 + 3 heads failed with "invalid argument"), axis 0 at 2^31 - 1. split: the key chunk
        (attention_split.py) between the two, `split` of SPLIT."""
        pid = "tl.program_id(0).to(tl.int64)" if self.big else "tl.program_id(0)"
        self.out(f"pid = {pid}")
        if self.pack is not None:   # the rows: G x Lq of one K/V head's query heads; bh over batch x K/V heads
            hq, hkv = (self._paren(self.sizes.text(e)) for e in self.pack)
            self.out(f"GQ = {hq} // {hkv}  # query heads per K/V head: a program's rows span them (PACK)")
            self.out(f"num_m = tl.cdiv(GQ * {self._paren(Lq)}, BLOCK_M)")
            lead = list(lead[:-1]) + [self.pack[1]]
        else:
            self.out(f"num_m = tl.cdiv({Lq}, BLOCK_M)")
        if self.anchor.causal:   # the heaviest query blocks (the most keys below the diagonal) start first
            self.out("pid_m = num_m - 1 - pid % num_m  # causal: the last query block (the most keys) first")
        else:
            self.out("pid_m = pid % num_m")
        if split:
            self.out("split = pid // num_m % SPLIT  # the key chunk")
            self.out("bh = pid // num_m // SPLIT  # batch x heads, flattened")
        else:
            self.out("bh = pid // num_m  # batch x heads, flattened")
        if nl:
            self.unravel(list(range(nl)), lead, "bh")

    def rows(self, Lq: str) -> None:
        """rm, the program's query rows; PACK: rr, its packed rows (query head of the group, query), and each row's
        query rm and query head ih."""
        if self.pack is None:
            self.out("rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # query rows")
            return
        lq = self._paren(Lq)
        self.out("rr = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # packed rows: (query head of the group, query)")
        self.out(f"rm = rr % {lq}  # each row's query")
        self.out(f"ih = i{len(self.anchor.out.shape) - 3} * GQ + rr // {lq}  # each row's query head")

    def row_ok(self, Lq: str, column: bool = False) -> str:
        """The program's rows that exist: rm < Lq, or (PACK) rr < G x Lq; column: as a (BLOCK_M, 1) tile."""
        row = "rr" if self.pack is not None else "rm"
        bound = f"GQ * {self._paren(Lq)}" if self.pack is not None else Lq
        return f"{row}[:, None] < {bound}" if column else f"{row} < {bound}"

    def row_count(self, Lq: str) -> str:
        """Rows per (batch x heads) of the program grid: Lq, or (PACK) G x Lq per K/V head (kernel text)."""
        return f"(GQ * {self._paren(Lq)})" if self.pack is not None else self._paren(Lq)

    def pack_lead(self) -> list[SizeExpr]:
        """The output's leading sizes; PACK: with the K/V heads for the query heads (the grid's batch x heads)."""
        att: Attention = self.anchor
        lead = [self.sizes.slot(("node", att.name, "out", j), s) for j, s in enumerate(att.out.shape[:-2])]
        return lead[:-1] + [self.pack[1]] if self.pack is not None else lead

    def grid(self, space: list[SizeExpr], nl: int, bm: int, chunks: tuple = (), host_factor: str = "") -> GridAxis:
        """The launch's one axis (see _program): query blocks x chunks x batch x heads; PACK: cdiv(G x Lq,
        BLOCK_M) x chunks x batch x K/V heads, the first factor host text (G is a quotient of sizes)."""
        if self.pack is None:
            return GridAxis(((space[nl], bm),) + chunks + tuple((e, 1) for e in space[:nl]), host_factor=host_factor)
        hq, hkv = (self._paren(self.sizes.host(e)) for e in self.pack)
        rows = f"triton.cdiv({hq} // {hkv} * {self._paren(self.sizes.host(space[nl]))}, {bm})"
        return GridAxis(chunks + tuple((e, 1) for e in self.pack_lead()),
                        host_factor=" * ".join(t for t in (rows, host_factor) if t))

    def _kv_coords(self, which: str, view, shape: list[SizeExpr], lead: list[SizeExpr], nl: int) -> dict[int, str]:
        """The coordinates k or v is read at along each leading axis: the output's, or, where the operand has
        fewer heads (GQA: Hkv dividing Hq, checked by capture), i · Hkv // Hq, which is i // (Hq / Hkv) without
        a quotient of sizes."""
        coords = {}
        for a in range(nl):
            if same(shape[a], lead[a]) or (shape[a].is_constant and lead[a].is_constant
                                           and shape[a].evaluate({}) == lead[a].evaluate({})):
                coords[a] = f"i{a}"
            elif view.shape[a] == 1 and shape[a].is_constant:
                coords[a] = "0"
            elif a == nl - 1:
                coords[a] = (f"(i{a} * {self._paren(self.sizes.text(shape[a]))} // "
                             f"{self._paren(self.sizes.text(lead[a]))})")
            else:
                raise CodegenUnsupported(f"{self.anchor.name}: {which} has {view.shape[a]} along axis {a}, the "
                                         f"output {self.anchor.out.shape[a]}")
        return coords

    @staticmethod
    def _paren(text: str) -> str:
        return text if text.isidentifier() or text.isdigit() else f"({text})"

    def _base(self, which: str, view, strides, offset, coords: dict[int, str], nl: int) -> None:
        """<which>_base: where the program's (batch, head) starts in the operand, and the view's offset."""
        terms = []
        for a in range(nl):
            if coords[a] == "0" or (view.strides[a] == 0 and strides[a].is_constant):
                continue
            terms.append(self._t(coords[a], strides[a]))
        if not offset.is_constant or offset.coeff + offset.offset != 0:
            terms.append(self.sizes.text(offset))
        self.out(f"{which}_base = {' + '.join(terms) or '0'}")

    def _whole_blocks(self, ops, masked: bool, parts, lk: SizeExpr, traced_lk: int, dtype: str) -> None:
        """The loop over the key blocks every row sees whole: one chain of steps into (m_i, l_i, acc), or, for
        fp32 operands over a long key range (KCHUNK > 1, key_chunks), chunks of KCHUNK blocks, each accumulated
        into its own (m_c, l_c, acc_c) and then added into (m_i, l_i, acc), both rescaled to the new row max.

        Why: fp32 rounding error grows with the length of the accumulation chain. An fp32 tl.dot(p, v, acc) on FMAs
        adds into acc key by key, so the chain is Lk long: at Lk = 2^20 + 3 (the referee's edges stage, H200,
        2026-12-02) the written-out where_keep attention missed the fp32 tolerance, 1.62e-05 > 1e-05. Chunked,
        the chain is about KCHUNK x BLOCK_N + Lk / (KCHUNK x BLOCK_N), 2 sqrt(Lk) at KCHUNK x BLOCK_N ~ sqrt(Lk).
        Up to LONG_KEYS keys KCHUNK is 1 and the loop is the plain one (the other branch is not compiled: no
        extra register tile); a size fixed at generation is decided here, a run-time one per call by the host.
        16-bit operands keep the plain loop: the same fp32 error is far inside their tolerance (bf16 1.6e-2).
        The masked loop after it walks at most cdiv(BLOCK_M, BLOCK_N) + 1 blocks and stays one chain."""
        plain = f"for start in range({self.first}, lo, BLOCK_N):  # whole blocks: no mask"
        if dtype != "fp32" or (lk.is_constant and key_chunks(traced_lk, self.schedule.BLOCK_N) == 1):
            with self.out.block(plain):
                self._step(ops, masked, parts, edge=False)
            return
        bn = self.schedule.BLOCK_N
        if lk.is_constant:
            self.chunk = (key_chunks(traced_lk, bn), None)
            self._chunked(ops, masked, parts)
            return
        host = self.sizes.host(lk)
        self.chunk = (1, f"1 if {host} <= {LONG_KEYS} else max(2, triton.next_power_of_2(int({host} ** 0.5)) // {bn})")
        with self.out.block("if KCHUNK == 1:  # up to LONG_KEYS keys: one accumulation chain"):
            with self.out.block(plain):
                self._step(ops, masked, parts, edge=False)
        with self.out.block("else:  # a long key range: chunks of KCHUNK blocks, a short chain each"):
            self._chunked(ops, masked, parts)

    def _chunked(self, ops, masked: bool, parts) -> None:
        """The whole blocks in chunks of KCHUNK: each chunk's own row max (from m_i), sum and accumulator, then
        one rescaled add into the running ones (the online softmax's merge of two partial results); the fewer than
        KCHUNK whole blocks left after the last whole chunk step into the running ones directly. The inner loop
        runs a constant KCHUNK steps: with a bound of min(c0 + KCHUNK x BLOCK_N, lo) instead, the masked kernels
        (where_keep) failed to compile for gfx942 at num_stages=2 ("PassManager::run failed", triton 3.6,
        cross-compiled 2026-12-02), at num_stages=1 they built."""
        first = self.first
        if first == "0":
            self.out("lo_c = lo // (KCHUNK * BLOCK_N) * (KCHUNK * BLOCK_N)  # whole chunks")
        else:
            self.out(f"lo_c = {first} + (lo - {first}) // (KCHUNK * BLOCK_N) * (KCHUNK * BLOCK_N)  # whole chunks")
        if self.relu:   # no statistics: each chunk's own accumulator, then added
            with self.out.block(f"for c0 in range({first}, lo_c, KCHUNK * BLOCK_N):  # whole blocks, KCHUNK at a time"):
                self.out("acc_c = tl.zeros([BLOCK_M, BLOCK_DV], tl.float32)")
                with self.out.block("for start in range(c0, c0 + KCHUNK * BLOCK_N, BLOCK_N):  # no mask"):
                    self._step(ops, masked, parts, edge=False, state=("", "", "acc_c"))
                self.out("acc = acc + acc_c")
            with self.out.block("for start in range(lo_c, lo, BLOCK_N):  # the whole blocks past the last chunk"):
                self._step(ops, masked, parts, edge=False)
            return
        with self.out.block(f"for c0 in range({first}, lo_c, KCHUNK * BLOCK_N):  # whole blocks, KCHUNK at a time"):
            self.out("m_c = m_i  # the chunk's running row max, from the one so far")
            self.out("l_c = tl.zeros([BLOCK_M], tl.float32)")
            self.out("acc_c = tl.zeros([BLOCK_M, BLOCK_DV], tl.float32)")
            with self.out.block("for start in range(c0, c0 + KCHUNK * BLOCK_N, BLOCK_N):  # no mask"):
                self._step(ops, masked, parts, edge=False, state=("m_c", "l_c", "acc_c"))
            self.out('m_use = tl.where(m_c == float("-inf"), 0.0, m_c)')
            self.out("alpha = tl.math.exp2(m_i - m_use)  # the running results rescaled to the chunk's max")
            self.out("l_i = l_i * alpha + l_c")
            self.out("acc = acc * alpha[:, None] + acc_c")
            self.out("m_i = m_c")
        with self.out.block("for start in range(lo_c, lo, BLOCK_N):  # the whole blocks past the last chunk"):
            self._step(ops, masked, parts, edge=False)

    def _step(self, ops, masked: bool, parts, edge: bool, state: tuple[str, str, str] = ("m_i", "l_i", "acc")) \
            -> None:
        """One BLOCK_N step of the loop into `state` (row max, row sum, accumulator): scores, their masks, the
        online softmax update and acc += P V, in the order of Triton's fused-attention tutorial (its
        _attn_fwd_inner): without a mask operand, the row max of the unscaled scores (-inf where the causal or
        key mask hides them) times qk_scale (exact: qk_scale > 0 and rounding is monotone), then one FMA per score,
        qk x qk_scale - m; the row sum is updated after the second product. The addresses are the hoisted offsets
        (kt_off, v_off) plus a scalar per step. Cross-compiled for sm_90 (sdpa bf16, D = 128, 128 x 64, 8 warps,
        3 stages, triton 3.6): 186 registers before these changes, 167 after."""
        k, k_st, v, v_st, Lk, D, Dv, d_mask, dv_mask, dtype = ops
        fast = not masked and self.scale_positive and not self.relu
        if edge or masked or 1 in self.computed:
            self.out("rn = start + rn0  # keys")
        keys, heads = [f"(rn[None, :] < {Lk})"] if edge else [], [f"(rd[:, None] < {D})"] if d_mask else []
        if 1 in self.computed:   # K^T computed on the block: its prologue (rotary embedding) at the block's keys
            nl = len(self.anchor.out.shape) - 2
            compute_prologue(self, 1, self.kv_coords["k"] | {nl: "rn[None, :]", nl + 1: "rd[:, None]"}, keys + heads,
                             "[BLOCK_D, BLOCK_N]", "rn", "kt")
        else:
            self._load("kt", f"{self.pointer(k.base)} + k_base + {self._t('start', k_st[-2])} + kt_off", keys, heads,
                       "K^T, (BLOCK_D, BLOCK_N)", "tl.trans(k_desc.load([start, 0]))")
        dot = self._dot("q", "kt", "tl.zeros([BLOCK_M, BLOCK_N], tl.float32)", dtype)
        m, rowsum, acc = state
        if self.relu:   # the weights are relu(scores): no statistics, no rescaling
            self.out(f"qk = {dot} * qk_scale")
            self._score_masks(masked, parts, edge, Lk)
            self.out("p = tl.where(qk < 0.0, 0.0, qk)  # relu: a masked score (-inf) weighs 0, a NaN one stays NaN")
            self._pv(ops, edge, acc, acc)
            return
        if fast:
            self.out(f"qk = {dot}  # unscaled")
            self._score_masks(masked, parts, edge, Lk)
            self.out(f"m_new = tl.maximum({m}, tl.max(qk, 1) * qk_scale)  # the max before the scale (qk_scale > 0)")
        else:
            self.out(f"qk = {dot} * qk_scale")
            self._score_masks(masked, parts, edge, Lk)
            self.out(f"m_new = tl.maximum({m}, tl.max(qk, 1))")
        self.out('m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # every key so far masked: no shift')
        self.out(f"p = tl.math.exp2({'qk * qk_scale' if fast else 'qk'} - m_use[:, None])"
                 + ("  # one FMA per score" if fast else ""))
        self.out(f"alpha = tl.math.exp2({m} - m_use)")
        self.out("l_ij = tl.sum(p, 1)")
        self._pv(ops, edge, acc, f"{acc} * alpha[:, None]")
        self.out(f"{rowsum} = {rowsum} * alpha + l_ij  # after the product: fewer values live across it")
        self.out(f"{m} = m_new")

    def _pv(self, ops, edge: bool, acc: str, acc_in: str) -> None:
        """V's block (BLOCK_N, BLOCK_DV) loaded, then acc = acc_in + P V (P cast to V's dtype for 16-bit operands)."""
        k, k_st, v, v_st, Lk, D, Dv, d_mask, dv_mask, dtype = ops
        self._load("vt", f"{self.pointer(v.base)} + v_base + {self._t('start', v_st[-2])} + v_off",
                   [f"(rn[:, None] < {Lk})"] if edge else [], [f"(rdv[None, :] < {Dv})"] if dv_mask else [],
                   "(BLOCK_N, BLOCK_DV)", "v_desc.load([start, 0])")
        p = "p" if dtype == "fp32" else f"p.to({_TL[dtype]})"
        self.out(f"{acc} = {self._dot(p, 'vt', acc_in, dtype)}")

    def _score_masks(self, masked: bool, parts, edge: bool, Lk: str) -> None:
        """The mask operand's replacement or addition (on the scaled scores qk), then (edge blocks) -inf at the
        keys past Lk and above the diagonal."""
        att: Attention = self.anchor
        if masked:
            m_view, _, m_st, _ = parts[3]
            Lq = self.sizes.text(parts[0][1][-2])
            # an axis the mask is broadcast along (stride 0, as a key-padding mask (B, 1, 1, Lk) along the queries)
            # is not indexed: the load is a 1-D row of BLOCK_N keys (or column of BLOCK_M rows) expanded after it,
            # not a (BLOCK_M, BLOCK_N) tile that loads each element BLOCK_M times. 1-D, not a (1, BLOCK_N) load:
            # cross-compiled for sm_90 (padding shape, 64 x 128, 4 warps, 3 stages), the tile spilled 316 bytes,
            # the (1, BLOCK_N) load 6556 and 240 KiB of shared memory (over the 227), the 1-D row none and 209 KiB
            rows, cols = (not _zero(st) for st in (m_st[-2], m_st[-1]))
            base = f"{self.pointer(m_view.base)} + m_base"
            if rows and cols:
                terms = [f"(rm[:, None] < {Lq})"] + ([f"(rn[None, :] < {Lk})"] if edge else [])
                address, expand = (f"{base} + {self._t('rm[:, None]', m_st[-2])} + "
                                   f"{self._t('rn[None, :]', m_st[-1])}"), ""
            elif cols:   # one row of keys for every query
                terms, address, expand = ([f"(rn < {Lk})"] if edge else []), f"{base} + {self._t('rn', m_st[-1])}", \
                    "[None, :]"
            elif rows:   # one column of queries for every key
                terms, address, expand = [f"(rm < {Lq})"], f"{base} + {self._t('rm', m_st[-2])}", "[:, None]"
            else:
                terms, address, expand = [], base, ""
            where = f", mask={' & '.join(terms)}, other=0" if terms else ""
            bias = f"tl.load({address}{where}){expand}"
            if att.fill_on is not None:   # masked_fill / where: the score is replaced, a NaN one too
                keep = "qk, float(\"-inf\")" if not att.fill_on else "float(\"-inf\"), qk"
                self.out(f"qk = tl.where({bias} != 0, {keep})  # the mask replaces the score by -inf where "
                         f"{att.fill_on} (masked_fill)")
            elif self.graph.buffer_type(m_view.base).dtype == "bool":
                self.out(f"qk = qk + tl.where({bias} != 0, 0.0, float(\"-inf\"))  # boolean mask: 0 or -inf, added")
            else:
                self.out(f"qk = qk + {bias}.to(tl.float32){'' if self.relu else f' * {LOG2E!r}'}  # additive mask")
        if edge:
            keep = [f"(rn[None, :] < {Lk})"] + (["(rn[None, :] <= rm[:, None])"] if att.causal else [])
            self.out(f"qk = tl.where({' & '.join(keep)}, qk, float(\"-inf\"))"
                     + ("  # causal: key j seen by row i iff j <= i" if att.causal else ""))

    def _load(self, name: str, address: str, keys: list[str], heads: list[str], what: str, tma: str) -> None:
        """`name` = tl.load(address) under the key mask `keys` and the head-dim mask `heads`; where the head dims
        vary per call, the head mask only where D_FULL (a host constexpr: every head dim fills its block) is 0;
        with the TMA knob, the descriptor's load `tma` where the host allows it (USE_TMA: rows past Lk and
        columns past the head dim read as zeros)."""
        branches: list[tuple[str | None, str]] = []   # (the constexpr branch's header, its load)
        if self.tma is not None:
            branches.append(("if USE_TMA:  # the copy engine fetches the tile", tma))
        if heads and self.d_full is not None:
            branches.append((f"{'elif' if branches else 'if'} D_FULL:  # the head dims fill BLOCK_D and BLOCK_DV: "
                             "no head mask", f"tl.load({address}{_masked(keys)})"))
        branches.append(("else:" if branches else None, f"tl.load({address}{_masked(keys + heads)})"))
        if len(branches) == 1:
            self.out(f"{name} = {branches[0][1]}  # {what}")
            return
        for header, load in branches:
            with self.out.block(header):
                self.out(f"{name} = {load}" + (f"  # {what}" if header.startswith("if") else ""))

    def _tma_descriptors(self, parts, dtype: str, Lk: str, D: str, Dv: str) -> None:
        """k_desc, v_desc: this program's K and V as [Lk, D] and [Lk, Dv] tensor descriptors (built on the
        device: global scratch from triton.set_allocator), under `if USE_TMA:`; USE_TMA is the host's per call:
        the rows contiguous, every stride (the row's, the leading axes') and the view offset a multiple of 16 bytes,
        the row stride > 0, the base addresses 16-byte aligned. A view with no unit stride along the head dim
        keeps the pointer loads (no USE_TMA)."""
        if not (self.arch or "").startswith(("sm_9", "sm_10", "sm_12")):
            raise CodegenUnsupported(f"{self.anchor.name}: TMA loads on {self.arch or 'no arch'} (sm_90 and later)")
        align = 16 // ITEMSIZE[dtype]
        host, traced = [], True
        for view, _, strides, offset in (parts[1], parts[2]):
            if self.sizes.text(strides[-1]) != "1":
                return
            host.append(f"{{{view.base}}}.data_ptr() % 16 == 0")
            host.append(f"({self.sizes.host(strides[-2])}) > 0")
            host += [f"({self.sizes.host(st)}) % {align} == 0" for st in strides[:-1] if not st.is_constant]
            host += [f"({self.sizes.host(offset)}) % {align} == 0"] if not offset.is_constant else []
            traced = traced and all(st % align == 0 for st in view.strides[:-1]) and view.offset % align == 0
            traced = traced and view.strides[-2] > 0
            if any(st.is_constant and st.evaluate({}) % align for st in strides[:-1]) or \
                    (offset.is_constant and (offset.coeff + offset.offset) % align):
                return   # a fixed stride or offset TMA cannot take
        self.tma = (f"int({' and '.join(dict.fromkeys(host))})", int(traced))
        if tma_allocator() not in self.module_helpers:
            self.module_helpers.append(tma_allocator())
        (k, _, k_st, _), (v, _, v_st, _) = parts[1], parts[2]
        with self.out.block("if USE_TMA:  # K and V tiles through tensor descriptors (sm_90)"):
            self.out(f"k_desc = tl.make_tensor_descriptor({self.pointer(k.base)} + k_base, shape=[{Lk}, {D}], "
                     f"strides=[{self.sizes.text(k_st[-2])}, 1], block_shape=[BLOCK_N, BLOCK_D])")
            self.out(f"v_desc = tl.make_tensor_descriptor({self.pointer(v.base)} + v_base, shape=[{Lk}, {Dv}], "
                     f"strides=[{self.sizes.text(v_st[-2])}, 1], block_shape=[BLOCK_N, BLOCK_DV])")

    def _head_full(self, padded: bool, sizes: tuple[SizeExpr, SizeExpr]) -> int | None:
        """D_FULL at the traced shapes where the head dims vary per call (the host decides it per call:
        whether D and Dv are their blocks, as flash attention's EVEN_HEADDIM), None where no load needs a head
        mask or a head dim is fixed (its mask then decided here)."""
        if not padded or any(size.is_constant for size in sizes):
            return None
        hosts = sorted({self.sizes.host(size) for size in sizes})
        text = " and ".join(f"{h} == max({MIN_DOT}, triton.next_power_of_2({h}))" for h in hosts)
        self.host_constexprs.append(("D_FULL", f"int({text})"))
        traced = [op.shape[-1] for op in (self.anchor.operands[0], self.anchor.operands[2])]
        return int(all(t == max(MIN_DOT, next_power_of_two(t)) for t in traced))

    def _dot(self, a: str, b: str, acc: str, dtype: str) -> str:
        """acc + a @ b in the precision policy (the helpers join kernel.py's module level)."""
        precision = self.schedule.precision
        if dtype == "fp32" and precision == "ieee":
            return f'tl.dot({a}, {b}, {acc}, input_precision="ieee")'
        helper = precision if dtype == "fp32" else "16bit"
        for name in (("round_tf32",) if helper != "16bit" else ()) + (helper,):
            text = dot_helper(name)
            if text not in self.module_helpers:
                self.module_helpers.append(text)
        return f"_dot_{helper}({a}, {b}, {acc})"

    # --- the V scan of a causal kernel ------------------------------------------------------------------------
    def _v_scan(self, nl: int, lead: list[SizeExpr], v, bn: int, block_dv: tuple[int, bool]) -> GeneratedKernel:
        """A kernel before the attention: per (batch x head) and column of v, one more than the last key whose
        value is NaN or Inf (0 where none), in the zeroed scratch buffer v_last_bad (module docstring). Its programs
        split the keys in chunks of SCAN_KEYS (key chunks fastest, then batch x heads), each with one atomic max
        per column: one program per head walked all Lk keys alone, latency-bound (64 dependent loads
        of 16 KiB one after another for a 4096 x 128 head), where the chunks read V at the copy bandwidth."""
        scan = _AttentionWriter(self.gen, self.group, self.schedule, self.sizes.host_names, f"{self.name}_v_scan",
                                self.arch)
        v_parts = self.view_exprs(self.anchor, 2)
        v_shape, v_st = v_parts[1], v_parts[2]
        lk = self.view_exprs(self.anchor, 1)[1][-2]
        Lk, Dv = scan.sizes.text(lk), scan.sizes.text(v_shape[-1])
        scan._head_block("BLOCK_DV", v_shape[-1], self.anchor.operands[2].shape[-1])
        pid = "tl.program_id(0).to(tl.int64)" if self.big else "tl.program_id(0)"
        scan.out(f"pid = {pid}")
        scan.out(f"num_c = tl.cdiv({Lk}, SCAN_KEYS)")
        scan.out("c0 = pid % num_c * SCAN_KEYS  # the chunk's first key")
        scan.out("bh = pid // num_c  # batch x heads, flattened")
        out_lead = [scan.sizes.slot(("node", self.anchor.name, "out", j), s)
                    for j, s in enumerate(self.anchor.out.shape[:nl])]
        if nl:
            scan.unravel(list(range(nl)), out_lead, "bh")
        coords = scan._kv_coords("v", v, v_shape, out_lead, nl)
        scan._base("v", v, v_st, v_parts[3], coords, nl)
        scan.out("rdv = tl.arange(0, BLOCK_DV)")
        scan.out("rn0 = tl.arange(0, BLOCK_N)")
        scan.out("last = tl.full([BLOCK_DV], 0, tl.int32)")
        with scan.out.block("for start in range(c0, c0 + SCAN_KEYS, BLOCK_N):"):
            scan.out("rn = start + rn0")
            scan.out(f"x = tl.load({scan.pointer(v.base)} + v_base + {scan._t('rn[:, None]', v_st[-2])} + "
                     f"{scan._t('rdv[None, :]', v_st[-1])}, mask=(rn[:, None] < {Lk}) & (rdv[None, :] < {Dv}), "
                     "other=0.0).to(tl.float32)")
            scan.out('bad = (x != x) | (tl.abs(x) == float("inf"))')
            scan.out("last = tl.maximum(last, tl.max(tl.where(bad, rn[:, None] + 1, 0), 0))")
        scan.out(f"tl.atomic_max({scan.pointer('v_last_bad')} + bh * {Dv} + rdv, last, mask=(rdv < {Dv}) & (last > 0))"
                 "  # the chunks of one head meet here")
        count = ((prod_expr(lead), 1), (v_shape[-1], 1)) if lead else ((v_shape[-1], 1),)
        scratch = (Scratch("v_last_bad", "i32", count, zeroed=True),)
        dtypes = scan.buffer_dtypes()
        grid = (GridAxis(((lk, max(SCAN_KEYS, bn)),) + (tuple((e, 1) for e in lead) or ((const(1), 1),))),)
        return assemble(group=self.group.name, name=scan.name,
                        doc="One more than the last key holding a NaN or Inf in v, per (batch x head) and column "
                            "(0: none).",
                        body=scan.out.lines, pointers=scan.pointers, pointer_dtypes=dtypes, sizes=scan.sizes,
                        big=self.big, constexprs=[("BLOCK_N", bn), ("BLOCK_DV", block_dv[0]),
                                                  ("SCAN_KEYS", max(SCAN_KEYS, bn))],
                        options=(("num_warps", 4), ("num_stages", 1)), grid=grid,
                        host_constexprs=scan.host_constexprs, scratch=scratch,
                        host_prologue=self._head_dim_checks())   # the group's first launch refuses a head dim

    # --- the launch -----------------------------------------------------------------------------------------
    def buffer_dtypes(self) -> dict[str, str]:
        """Each pointer's element dtype: the graph's buffers', the kernels' own scratch (SCRATCH_DTYPES)."""
        return {b: SCRATCH_DTYPES.get(b) or self.graph.buffer_type(b).dtype for b in self.pointers}

    def all_helpers(self) -> tuple[str, ...]:
        """Module-level text the kernel calls: the math helpers its expressions use, then the dot / TMA ones."""
        return tuple(math_helper(h) for h in sorted(self.helpers)) + tuple(self.module_helpers)

    def tile_axes(self) -> list[list[str]]:
        return [["om", "rm", "oh"], ["od", "rdv"]]

    def _finish(self, att: Attention, space, nl: int, bm: int, bn: int, block_d, block_dv, before,
                dtype: str, split: int = 0, scratch: tuple[Scratch, ...] = (), per_call: tuple[str, str] = ()) \
            -> GeneratedKernel:
        """The flash kernel assembled; split: its programs' key chunks (SPLIT), each writing its partials to
        `scratch` (attention_split.py); per_call: (host line, host name) of SPLIT decided per call, at most split
        (attention_split.per_call_split)."""
        constexprs = [("BLOCK_M", bm), ("BLOCK_N", bn), ("BLOCK_D", block_d[0]), ("BLOCK_DV", block_dv[0])]
        if self.d_full is not None:
            constexprs.append(("D_FULL", self.d_full))
        if self.tma is not None:
            constexprs.append(("USE_TMA", self.tma[1]))
            self.host_constexprs.append(("USE_TMA", self.tma[0]))
        if self.chunk is not None:
            constexprs.append(("KCHUNK", self.chunk[0]))
            if self.chunk[1] is not None:
                self.host_constexprs.append(("KCHUNK", self.chunk[1]))
        if split:
            constexprs.append(("SPLIT", split))
        if per_call:
            self.host_constexprs.append(("SPLIT", per_call[1]))
        chunks = ((const(split), 1),) if split and not per_call else ()
        grid = (self.grid(space, nl, bm, chunks, per_call[1] if per_call else ""),)   # see _program
        dtypes = self.buffer_dtypes()
        shape = " x ".join(self.sizes.host(e) for e in space)
        what = ("causal, " if att.causal else "") + ("masked, " if len(att.operands) == 4 else "")
        doc = (f"{att.describe()} -> ({shape}): {', '.join(self.group.nodes)}. Flash attention ({what}online "
               f"softmax in fp32): BLOCK_M query rows per program, BLOCK_N keys per step, "
               f"{'tl.dot ' + self.schedule.precision if dtype == 'fp32' else dtype + ' tl.dot, fp32 accumulation'}."
               + (" The keys in SPLIT chunks, a program each: its partial row max, sum and accumulator to the "
                  "workspace." if split else ""))
        helpers = self.all_helpers()
        kernel = assemble(group=self.group.name, name=self.name, doc=doc, body=self.out.lines, pointers=self.pointers,
                          pointer_dtypes=dtypes, sizes=self.sizes, big=self.big, constexprs=constexprs,
                          options=self.schedule.options(), grid=grid, host_constexprs=tuple(self.host_constexprs),
                          helpers=helpers, scratch=scratch,
                          host_prologue=(() if before else self._head_dim_checks()) + tuple(per_call[:1]))
        return replace(kernel, before=before) if before else kernel


_TL = {"bf16": "tl.bfloat16", "fp16": "tl.float16", "fp32": "tl.float32"}


def _masked(terms: list[str]) -> str:
    return f", mask={' & '.join(terms)}, other=0.0" if terms else ""


def _zero(stride: SizeExpr) -> bool:
    """Whether a stride is 0 at every size: the constant 0, or 0 x a product of sizes (a broadcast axis whose
    length follows another operand's, as `0 * d0`)."""
    return stride.coeff == 0 and stride.offset == 0


def _positive(scale: SizeExpr) -> bool:
    """Whether the softmax scale is > 0 at every size: a constant > 0, or coeff x a product of sizes' powers
    (sizes > 0) with coeff > 0 and no negative offset."""
    if scale.is_constant:
        return scale.coeff + scale.offset > 0
    return scale.coeff > 0 and scale.offset >= 0 and all(c > 0 for c, _ in scale.more)


def prod_expr(exprs: list[SizeExpr]) -> SizeExpr:
    p = product(exprs)
    if p is None:
        raise CodegenUnsupported("the attention's leading dims are not a product of sizes")
    return p
