"""Split-keys attention (flash-decoding): an attention group's keys in SPLIT chunks, one program each, then a small
kernel that combines the chunks of every row. Used by codegen/attention.py where the schedule's SPLIT > 1.

Why: the flash kernel's grid is cdiv(Lq, BLOCK_M) x (batch x heads) programs, each walking all Lk keys. At decode
(Lq = 1 or a few queries) that is batch x heads programs: a Llama decode step at batch 1 (32 heads) fills 32 of an
H200's 132 SMs (304 CUs on MI300X), each streaming Lk keys of K and V alone. With SPLIT chunks the grid is SPLIT
times larger and each program's chain SPLIT times shorter; the price is the partials' bytes (fp32: a row max, a row
sum and a Dv-wide accumulator per row and chunk, written once, read once) and a second launch.

    partials kernel   grid cdiv(Lq, BLOCK_M) x SPLIT x (batch x heads), query blocks fastest, then the chunk.
                      Program (m-block, s, bh) walks keys [s·C, min((s+1)·C, Lk)), C = cdiv(cdiv(Lk, SPLIT),
                      BLOCK_N)·BLOCK_N (whole blocks: only the last chunk has a tail), with the flash kernel's own
                      loop (attention.py: masks, causal, GQA, prologues, KCHUNK all unchanged), and stores its rows'
                      (m, l, acc): m the running max in the log2 domain, l the sum, acc un-normalised, all fp32.
                      Causal: the chunk's range is cut to the tile's keys (top-left: key j seen by row i iff
                      j <= i), a chunk past them runs no step and stores (-inf, 0, 0).
    combine kernel    grid cdiv(Lq, BLOCK_M) x (batch x heads): M = max_s m_s, then in chunk order s = 0, 1, ...
                      l = Σ l_s·2^(m_s - M), acc = Σ acc_s·2^(m_s - M) (M = -inf: no shift), o = acc / l with the
                      Attention's empty-row rule (attention.py's normalise), then what the flash kernel does
                      after its loop: the causal V scan's NaN, the epilogue, the stores.

Deterministic: no atomics; each partial is one program's, and the combine adds them in a fixed order, so a run
gives the same bits every time. Special values as the flash kernel gives them: a row with every key masked has
every m_s = -inf, so every weight 2^(-inf) = 0 and acc = Σ 0·acc_s (0, or NaN where a chunk's acc holds 0·NaN
from v), l = 0 (SDPA's safe softmax divides by 1: 0; written out: 0 / 0 = NaN); a NaN or Inf in v at a masked key
reaches acc_s as 0·NaN and the combine's 0 weight keeps it NaN, as SDPA; the causal kernel's V scan (NaN in v above
the diagonal) is read by the combine. ReLU attention keeps no statistics: its combine is the plain sum of the
chunks' acc. The workspace (torch.empty, every element read written by the partials kernel: rows past Lq and chunks
past the call's SPLIT are never read) is sized per call: (batch x heads) x SPLIT x Lq rows. SPLIT itself is decided
per call (per_call_split): at most the schedule's, at most the keys' blocks.

TMA (sm_90) is the flash kernel's: K and V descriptors over the whole head, loaded from the chunk's first key.

GQA packing (the PACK knob, attention.py's pack_group): the partials and the combine kernel both take the packed
rows (query head of the group, query) of one K/V head, G x Lq of them, and the workspace holds them in that order
per (batch x K/V heads, chunk): the same count as unpacked, (batch x heads) x SPLIT x Lq rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.assemble import assemble
from kerntailor.codegen.kernel import GeneratedKernel, Scratch, split_per_call
from kerntailor.codegen.sizes import const
from kerntailor.ir.types import View

# the kernels' own buffers (Scratch): the causal V scan's keys (attention.py), a split's partials
SCRATCH_DTYPES = {"v_last_bad": "i32", "split_m": "fp32", "split_l": "fp32", "split_acc": "fp32"}
COMBINE_OPTIONS = (("num_warps", 4), ("num_stages", 1))   # a few rows x Dv, SPLIT loads each: a small kernel


@dataclass(frozen=True)
class FlashParts:
    """What the lines after a flash kernel's key loops need of it: the output's sizes (space: leading dims, Lq,
    Dv), the leading dims' count nl, v's View (the causal V scan), the head blocks ((block, masked)) and the host
    texts of Lq and Dv."""

    space: tuple[SizeExpr, ...]
    nl: int
    v: View
    block_d: tuple[int, bool]
    block_dv: tuple[int, bool]
    Lq: str
    Dv: str


def key_chunk(w, Lk: str) -> None:
    """A partials program's key range: its chunk of whole blocks, cut to the flash kernel's (lo, hi)."""
    w.out(f"chunk = tl.cdiv(tl.cdiv({Lk}, SPLIT), BLOCK_N) * BLOCK_N  # keys per chunk, whole blocks")
    w.out("k_lo = split * chunk  # the chunk's first key")
    w.out("hi = tl.minimum(hi, k_lo + chunk)")
    w.out("lo = tl.maximum(tl.minimum(lo, hi), k_lo)  # the chunk's whole blocks (none, nor a tail, past hi)")


def per_call_split(w, split: int, lk) -> tuple[str, str]:
    """(host line, host name) of SPLIT at the call's key count Lk: min(SPLIT, the largest power of two <= the key
    blocks cdiv(Lk, BLOCK_N)), at least 1. A schedule's SPLIT is chosen at the default size; at a smaller Lk (a
    shorter cache, the referee's variants) most of its chunks would hold no key and their programs run for nothing
    (every chunk of at least one block: at most one chunk empty). Never above the schedule's: the workspace is
    sized by it. A power of two: few distinct values, so few compilations of the two kernels. The partials kernel,
    launched first, defines the name; the combine kernel reads it."""
    name = f"{w.group.name}_split"
    blocks = f"triton.cdiv({w.sizes.host(lk)}, {w.schedule.BLOCK_N})"
    return (f"{name} = {split_per_call(split, blocks)}  # SPLIT per call: at most the keys' blocks, a power of two"), \
        name


def write_split(w, dtype: str, parts) -> GeneratedKernel:
    """The group's kernels at SPLIT = w.schedule.SPLIT: the partials kernel (launched first, after a causal V
    scan), then the combine kernel `w` writes, which ends as the flash kernel does."""
    att, split = w.anchor, w.schedule.SPLIT
    partials = type(w)(w.gen, w.group, w.schedule, w.sizes.host_names, f"{w.name}_partials", w.arch)
    partials.relu, partials.first, partials.pack = w.relu, "k_lo", w.pack
    flash = partials.flash_loop(dtype, parts, split=True)
    _store_partials(partials, flash)
    space, nl = list(flash.space), flash.nl
    lead = tuple((e, 1) for e in space[:nl])
    count = lead + ((const(split), 1), (space[nl], 1))
    scratch = (Scratch("split_acc", "fp32", count + ((space[nl + 1], 1),), zeroed=False),)
    if not w.relu:
        scratch = (Scratch("split_m", "fp32", count, zeroed=False), Scratch("split_l", "fp32", count, zeroed=False)) \
            + scratch
    per_call = per_call_split(w, split, parts[1][1][-2])
    kernel = partials._finish(att, space, nl, w.schedule.BLOCK_M, w.schedule.BLOCK_N, flash.block_d,
                              flash.block_dv, (), dtype, split, scratch, per_call)
    if att.causal:   # the V scan, launched before it, checks the head dims
        kernel = replace(kernel, launch=replace(kernel.launch, host_prologue=per_call[:1]))
    w.host_constexprs.append(("SPLIT", per_call[1]))   # the combine kernel's
    w.head_dims = partials.head_dims   # the causal V scan's host checks
    combined = _combine_rows(w, parts, flash, split)
    if w.relu:
        w.out("o = acc  # relu weights are not normalised")
    else:
        w.normalise()
    return w.finish_rows(combined, dtype, (kernel,), combine=split)


def _store_partials(w, flash: FlashParts) -> None:
    """The program's rows of its chunk: (m_i, l_i, acc) to the workspace, (batch x heads, SPLIT, Lq) rows."""
    Dv, row = w._paren(flash.Dv), "rr" if w.pack is not None else "rm"
    w.out(f"ws = (bh * SPLIT + split).to(tl.int64) * {w.row_count(flash.Lq)} + {row}"
          "  # the chunk's rows in the workspace")
    w.out(f"rows = {w.row_ok(w._paren(flash.Lq))}")
    if not w.relu:
        w.out(f"tl.store({w.pointer('split_m')} + ws, m_i, mask=rows)")
        w.out(f"tl.store({w.pointer('split_l')} + ws, l_i, mask=rows)")
    w.out(f"tl.store({w.pointer('split_acc')} + ws[:, None] * {Dv} + rdv[None, :], acc, "
          f"mask=rows[:, None] & (rdv[None, :] < {Dv}))  # un-normalised")


def _combine_rows(w, parts, flash: FlashParts, split: int) -> FlashParts:
    """The combine kernel's lines up to acc and l_i: its program's rows, the chunks' partials in chunk order."""
    q_shape, v_shape = parts[0][1], parts[2][1]
    att = w.anchor
    Lq, Dv = w.sizes.text(q_shape[-2]), w.sizes.text(v_shape[-1])
    block_dv = w._head_block("BLOCK_DV", v_shape[-1], att.operands[2].shape[-1])
    nl = flash.nl
    space = [w.sizes.slot(("node", att.name, "out", j), s) for j, s in enumerate(att.out.shape)]
    w._program(nl, space[:nl], Lq)
    lq, dv = w.row_count(Lq), w._paren(Dv)   # lq: rows per batch x heads (PACK: G x Lq per K/V head)
    w.rows(Lq)
    w.out("rdv = tl.arange(0, BLOCK_DV)  # v head dim")
    w.out(f"rows = {w.row_ok(w._paren(Lq))}")
    w.out(f"ws = bh.to(tl.int64) * SPLIT * {lq} + {'rr' if w.pack is not None else 'rm'}"
          "  # chunk 0's rows in the workspace; chunk s's s x Lq further")
    w.out(f"tile = rows[:, None] & (rdv[None, :] < {dv})")
    acc = f"tl.load({w.pointer('split_acc')} + (ws + s * {lq})[:, None] * {dv} + rdv[None, :], mask=tile, other=0.0)"
    w.out("acc = tl.zeros([BLOCK_M, BLOCK_DV], tl.float32)")
    if w.relu:   # no statistics: the chunks' sums added
        with w.out.block("for s in range(SPLIT):  # in chunk order: the same bits every run"):
            w.out(f"acc = acc + {acc}")
        return replace(flash, space=tuple(space), block_dv=block_dv, Lq=Lq, Dv=Dv)
    m = f"tl.load({w.pointer('split_m')} + ws + s * {lq}, mask=rows, other=float(\"-inf\"))"
    w.out('m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)')
    with w.out.block("for s in range(SPLIT):"):
        w.out(f"m_i = tl.maximum(m_i, {m})  # the row max over the chunks (log2 domain)")
    w.out('m_use = tl.where(m_i == float("-inf"), 0.0, m_i)  # every key masked: no shift (every weight 0)')
    w.out("l_i = tl.zeros([BLOCK_M], tl.float32)")
    with w.out.block("for s in range(SPLIT):  # in chunk order: the same bits every run"):
        w.out(f"alpha = tl.math.exp2({m} - m_use)  # the chunk's results rescaled to the row max")
        w.out(f"l_i = l_i + tl.load({w.pointer('split_l')} + ws + s * {lq}, mask=rows, other=0.0) * alpha")
        w.out(f"acc = acc + {acc} * alpha[:, None]")
    return replace(flash, space=tuple(space), block_dv=block_dv, Lq=Lq, Dv=Dv)


def combine_kernel(w, flash: FlashParts, before: tuple[GeneratedKernel, ...], split: int) -> GeneratedKernel:
    """The combine kernel assembled (its lines written by write_split and attention.py's finish_rows)."""
    att, nl, bm = w.anchor, flash.nl, w.schedule.BLOCK_M
    space = list(flash.space)
    grid = (w.grid(space, nl, bm),)
    shape = " x ".join(w.sizes.host(e) for e in space)
    doc = (f"{att.describe()} -> ({shape}): {', '.join(w.group.nodes)}. The SPLIT key chunks' partials combined in "
           "chunk order (flash-decoding), then the epilogue: BLOCK_M query rows per program.")
    kernel = assemble(group=w.group.name, name=w.name, doc=doc, body=w.out.lines, pointers=w.pointers,
                      pointer_dtypes=w.buffer_dtypes(), sizes=w.sizes, big=w.big,
                      constexprs=[("BLOCK_M", bm), ("BLOCK_DV", flash.block_dv[0]), ("SPLIT", split)],
                      options=COMBINE_OPTIONS, grid=grid, host_constexprs=tuple(w.host_constexprs),
                      helpers=w.all_helpers())
    return replace(kernel, before=before)
