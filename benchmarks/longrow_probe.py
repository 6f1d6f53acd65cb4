"""Probe (issue #18 item 3): where the time goes in a softmax over long rows, split over many programs per row.

Measured on the H200 (BENCHMARKS.md, first section): softmax over 4096 x 393,216 fp32 takes 4698 us with
kerntailor's windowed split (splitrows.py, WAVE > 0), where one read and one write (the floor) take 2878 us:
1.63x, three passes' worth, as slow as two kernels. This script times, on one CUDA GPU, each suspect as its own
small Triton kernel so that the differences between lines name the cost:

- P0  copy, y = x: one read and one write, the practical floor (two Triton copies and torch's copy_; the
      fastest is the floor every later line is divided by: `x1.23`).
- P1  two kernels: per-chunk partials (max, sum of exp), then normalise (x read again, from HBM): today's
      looped split. Normalise variants: `x / s` (div), `x * (1 / s)` per row (recip), exp2 with log2(e) folded
      into one FMA (exp2).
- P2  one program per chunk reading its chunk twice in a row (stats, then normalise with the chunk's own stats:
      NOT a row softmax, timing only): what the second read costs when it surely hits L2/L1.
- P3  windowed, the structure of splitrows.py's generated WAVE kernel (roles by an atomic ticket, partials, a
      release flag per row block, phase B spinning on it, then re-reading its chunk). P3b: the same with the
      spin removed (wrong results, timing only): waiting cost apart from cache misses. P3c: also no ticket
      (roles by program id, no atomic at all; timing only): the ticket's cost. `evict hints`: phase A's loads
      evict_last, phase B's loads and stores evict_first (keep x's rows in L2, stream y). P3 with its spin
      runs under the sequential interpreter too (--smoke): a B program only waits on lower tickets, programs
      that started before it, which the interpreter has run to their end.
- P4  cooperative, on-chip: each program loads its chunk ONCE into registers, publishes (max, sum exp), waits
      until its row's SPLIT chunks have published, combines the SPLIT partials in a fixed order (the same bits
      every run), normalises from registers and writes: exactly one read and one write. `reuse` keeps
      e = exp(x - m) instead of x and scales it by exp(m - M) / S: one exp per element. `volatile poll`: the
      wait polls with plain volatile loads, then one acquire atomic; P4b: no wait at all (wrong results,
      timing only): what waiting for the row's peers costs.
      Co-residency: a program waits for the peers of its row, so the SPLIT programs of a row must be able to be
      resident at once. Roles come from an atomic ticket drawn at start, so every row but the one of the
      highest ticket drawn has all its programs started (they published before waiting, so those rows finish);
      only that last row can be waiting for peers not yet started, and it holds at most SPLIT - 1 slots. So
      SPLIT <= the SM count (a program fits at least one per SM) suffices, whatever the dispatch order, as long
      as nothing else holds the SMs (no concurrent kernel: MPS, other streams). Under the sequential
      interpreter (TRITON_INTERPRET=1) one program runs to its end before the next starts, so the first
      program of a row spins forever on peers that never run: it deadlocks for any SPLIT > 1. --smoke runs it
      at SPLIT 1 (the whole row in one program: no peer to wait for) and at SPLIT 4 "replayed" (run_coop: the
      flags preset so that nobody waits, twice on one partials buffer), which check its indexing, partials and
      combine, but not the waiting.

Also timed: torch.softmax (eager). Each kernel's output is checked against torch.softmax computed in fp32 (max
abs error, and that error over the largest output), except the timing-only ones (marked).

Timing: CUDA events around each call, median of >= 20 reps after warmup, L2 flushed before each rep by writing
a 256 MB buffer. Standalone: torch and triton only (no kerntailor), so the lead can copy it to any GPU box.
Output: one line per variant (time, GB/s of one read + one write, x over the floor, error, registers and
spills per thread of its kernels), a summary (each family's fastest line over the floor), and --out JSON
rewritten after every variant ("complete": false until the end). Variants not started within --max-wall
(90 s) are skipped, so the whole run stays within 120 s of GPU time (predicted ~60 s at the default size).

    python3 benchmarks/longrow_probe.py --out longrow.json                 # H200: fp32 and bf16, 4096 x 393216
    python3 benchmarks/longrow_probe.py --rows 1024 --cols 65536 --dtype bf16 --only P0,P4
    TRITON_INTERPRET=1 python3 benchmarks/longrow_probe.py --smoke         # CPU, 3 x 1000, no timing
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
DIV, RECIP, EXP2, REUSE = 0, 1, 2, 3   # how the normalising step computes exp(x - M) / S
NORM_NAMES = {DIV: "div", RECIP: "recip", EXP2: "exp2", REUSE: "reuse"}


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _chunk_stats(x_ptr, xindex, xmask, start, chunk, C, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr,
                 HINTS: tl.constexpr = False):
    """(max m, sum exp(x - m)) of rows xindex (XBLOCK, 1) over columns [start, start + chunk), per lane online
    as splitrows.py's phase A does, then over the lanes. HINTS: loads marked evict_last (kept in L2 for the
    second read)."""
    acc_m = tl.full([XBLOCK, RBLOCK], float("-inf"), tl.float32)
    acc_s = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    for roffset in range(0, chunk, RBLOCK):
        rindex = start + roffset + tl.arange(0, RBLOCK)[None, :]
        mask = xmask & (rindex < C)
        if HINTS:
            x = tl.load(x_ptr + (xindex * C + rindex), mask=mask, other=float("-inf"), eviction_policy="evict_last")
        else:
            x = tl.load(x_ptr + (xindex * C + rindex), mask=mask, other=float("-inf"))
        x = x.to(tl.float32)
        e = tl.exp(-tl.abs(x - acc_m))
        acc_s = tl.where(x > acc_m, acc_s * e + 1.0, acc_s + tl.where(x == float("-inf"), 0.0, e))
        acc_m = tl.maximum(acc_m, x)
    m = tl.max(acc_m, axis=1, keep_dims=True)
    s = tl.sum(tl.where(acc_m == float("-inf"), 0.0, acc_s * tl.exp(acc_m - m)), axis=1, keep_dims=True)
    return m, s


@triton.jit
def _row_scale(M, S, NORM: tl.constexpr):
    """(shift, scale) per row for _normalise."""
    if NORM == 0:
        shift, scale = M, S
    elif NORM == 1:
        shift, scale = M, 1.0 / S
    else:
        shift, scale = M * 1.4426950408889634, 1.0 / S
    return shift, scale


@triton.jit
def _normalise(x, shift, scale, NORM: tl.constexpr):
    if NORM == 0:
        y = tl.exp(x - shift) / scale     # IEEE division per element
    elif NORM == 1:
        y = tl.exp(x - shift) * scale     # one reciprocal per row, a multiply per element
    else:
        y = tl.exp2(x * 1.4426950408889634 - shift) * scale   # log2(e) folded: one FMA, then ex2
    return y


@triton.jit
def _combine(part_ptr, xindex, xmask, R, SPLIT: tl.constexpr, SPLIT_P2: tl.constexpr):
    """The row's M and S from its SPLIT partials [2, R, SPLIT], one fixed tree (the same bits every run)."""
    lanes = tl.arange(0, SPLIT_P2)[None, :]
    mask = xmask & (lanes < SPLIT)
    p0 = tl.load(part_ptr + xindex * SPLIT + lanes, mask=mask, other=float("-inf"), cache_modifier=".cg")
    p1 = tl.load(part_ptr + (R + xindex) * SPLIT + lanes, mask=mask, other=0.0, cache_modifier=".cg")
    M = tl.max(p0, axis=1, keep_dims=True)
    S = tl.sum(tl.where(p0 == float("-inf"), 0.0, p1 * tl.exp(p0 - M)), axis=1, keep_dims=True)
    return M, S


@triton.jit
def _normalise_chunk(x_ptr, y_ptr, xindex, xmask, start, chunk, C, shift, scale, NORM: tl.constexpr,
                     RBLOCK: tl.constexpr, HINTS: tl.constexpr = False):
    """HINTS: the last read of x and the store of y marked evict_first (streamed: L2 is kept for x's rows)."""
    for roffset in range(0, chunk, RBLOCK):
        rindex = start + roffset + tl.arange(0, RBLOCK)[None, :]
        mask = xmask & (rindex < C)
        if HINTS:
            x = tl.load(x_ptr + (xindex * C + rindex), mask=mask, other=0.0, eviction_policy="evict_first")
        else:
            x = tl.load(x_ptr + (xindex * C + rindex), mask=mask, other=0.0)
        y = _normalise(x.to(tl.float32), shift, scale, NORM).to(y_ptr.dtype.element_ty)
        if HINTS:
            tl.store(y_ptr + (xindex * C + rindex), y, mask=mask, eviction_policy="evict_first")
        else:
            tl.store(y_ptr + (xindex * C + rindex), y, mask=mask)


@triton.jit
def _rows(rowblock, R, XBLOCK: tl.constexpr):
    xindex = (rowblock.to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK))[:, None]   # (XBLOCK, 1)
    return xindex, xindex < R


@triton.jit
def _partials_kernel(x_ptr, part_ptr, R, C, chunk, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr,
                     SPLIT: tl.constexpr):
    pid = tl.program_id(0)
    split = pid % SPLIT
    xindex, xmask = _rows(pid // SPLIT, R, XBLOCK)
    m, s = _chunk_stats(x_ptr, xindex, xmask, split * chunk, chunk, C, XBLOCK, RBLOCK)
    tl.store(part_ptr + xindex * SPLIT + split, m, mask=xmask)
    tl.store(part_ptr + (R + xindex) * SPLIT + split, s, mask=xmask)


@triton.jit
def _normalise_kernel(x_ptr, y_ptr, part_ptr, R, C, chunk, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr,
                      SPLIT: tl.constexpr, SPLIT_P2: tl.constexpr, NORM: tl.constexpr):
    pid = tl.program_id(0)
    split = pid % SPLIT
    xindex, xmask = _rows(pid // SPLIT, R, XBLOCK)
    M, S = _combine(part_ptr, xindex, xmask, R, SPLIT, SPLIT_P2)
    shift, scale = _row_scale(M, S, NORM)
    _normalise_chunk(x_ptr, y_ptr, xindex, xmask, split * chunk, chunk, C, shift, scale, NORM, RBLOCK)


@triton.jit
def _reread_kernel(x_ptr, y_ptr, R, C, chunk, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr, SPLIT: tl.constexpr,
                   NORM: tl.constexpr):
    """P2: the chunk's stats, then the same chunk again, normalised by them (not a row softmax)."""
    pid = tl.program_id(0)
    split = pid % SPLIT
    xindex, xmask = _rows(pid // SPLIT, R, XBLOCK)
    m, s = _chunk_stats(x_ptr, xindex, xmask, split * chunk, chunk, C, XBLOCK, RBLOCK)
    shift, scale = _row_scale(m, s, NORM)
    _normalise_chunk(x_ptr, y_ptr, xindex, xmask, split * chunk, chunk, C, shift, scale, NORM, RBLOCK)


@triton.jit
def _windowed_kernel(x_ptr, y_ptr, part_ptr, flags_ptr, R, C, chunk, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr,
                     SPLIT: tl.constexpr, SPLIT_P2: tl.constexpr, WAVE: tl.constexpr, NORM: tl.constexpr,
                     SPIN: tl.constexpr, TICKET: tl.constexpr, HINTS: tl.constexpr):
    """P3: splitrows.py's WAVE kernel. Programs in the order A(0), A(1), B(0), A(2), B(1), ..., B(last); A
    stores its chunk's partials and releases its row block's flag; B spins on it (SPIN), combines, re-reads
    its chunk and normalises. TICKET: roles from an atomic ticket (else from the program id: no atomics).
    HINTS: A's loads evict_last, B's loads and stores evict_first."""
    nwaves = tl.cdiv(tl.cdiv(R, XBLOCK), WAVE)
    if TICKET:
        ticket = tl.atomic_add(flags_ptr + nwaves * WAVE, 1, sem="relaxed")
    else:
        ticket = tl.program_id(0)
    segment = ticket // (WAVE * SPLIT)
    normalise = (segment > 0) & ((segment % 2 == 0) | (segment == 2 * nwaves - 1))
    wave = tl.where(normalise, segment // 2 - 1 + segment % 2, (segment + 1) // 2)
    rowblock = wave * WAVE + ticket % (WAVE * SPLIT) // SPLIT
    split = ticket % SPLIT
    xindex, xmask = _rows(rowblock, R, XBLOCK)
    start = split * chunk
    if normalise:
        if SPIN:
            while tl.atomic_add(flags_ptr + rowblock, 0, sem="acquire") < SPLIT:
                pass
        M, S = _combine(part_ptr, xindex, xmask, R, SPLIT, SPLIT_P2)
        shift, scale = _row_scale(M, S, NORM)
        _normalise_chunk(x_ptr, y_ptr, xindex, xmask, start, chunk, C, shift, scale, NORM, RBLOCK, HINTS)
    else:
        m, s = _chunk_stats(x_ptr, xindex, xmask, start, chunk, C, XBLOCK, RBLOCK, HINTS)
        tl.store(part_ptr + xindex * SPLIT + split, m, mask=xmask)
        tl.store(part_ptr + (R + xindex) * SPLIT + split, s, mask=xmask)
        if TICKET:
            tl.debug_barrier()
            tl.atomic_add(flags_ptr + rowblock, 1, sem="release")


@triton.jit
def _coop_kernel(x_ptr, y_ptr, part_ptr, flags_ptr, R, C, BLOCK: tl.constexpr, SPLIT: tl.constexpr,
                 SPLIT_P2: tl.constexpr, NORM: tl.constexpr, WAIT: tl.constexpr = 1):
    """P4: one read, one write. Needs the SPLIT programs of a row co-resident (module docstring). WAIT: 1 spins
    on an acquire atomic add of 0 as splitrows.py's phase B does (Triton 3.6, sm_90 PTX: one thread's
    ld.global.gpu.acquire, broadcast through shared memory between two bar.syncs, per poll); 2 polls with every
    thread's ld.volatile (no barrier), then that acquire once; 0 does not wait (wrong results: P4b, timing
    only)."""
    ticket = tl.atomic_add(flags_ptr + R, 1, sem="relaxed")   # roles in start order: waits only on started peers
    row = ticket // SPLIT
    split = ticket % SPLIT
    cols = split * BLOCK + tl.arange(0, BLOCK)
    mask = cols < C
    base = row.to(tl.int64) * C
    x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf")).to(tl.float32)   # (BLOCK,): registers
    m = tl.max(x, axis=0)
    e = tl.where(mask, tl.exp(x - m), 0.0)
    tl.store(part_ptr + row * SPLIT + split, m)
    tl.store(part_ptr + (R + row) * SPLIT + split, tl.sum(e, axis=0))
    tl.debug_barrier()   # every thread's partials stored before the release
    tl.atomic_add(flags_ptr + row, 1, sem="release")
    if WAIT == 1:
        while tl.atomic_add(flags_ptr + row, 0, sem="acquire") < SPLIT:
            pass
    elif WAIT == 2:
        while tl.load(flags_ptr + row, volatile=True) < SPLIT:
            pass
        while tl.atomic_add(flags_ptr + row, 0, sem="acquire") < SPLIT:   # once (the count only grows): the
            pass   # acquire. Its result used: Triton (3.6) makes an atomic add of 0 a load, dropped when unused
    lanes = tl.arange(0, SPLIT_P2)
    p0 = tl.load(part_ptr + row * SPLIT + lanes, mask=lanes < SPLIT, other=float("-inf"), cache_modifier=".cg")
    p1 = tl.load(part_ptr + (R + row) * SPLIT + lanes, mask=lanes < SPLIT, other=0.0, cache_modifier=".cg")
    M = tl.max(p0, axis=0)
    S = tl.sum(tl.where(p0 == float("-inf"), 0.0, p1 * tl.exp(p0 - M)), axis=0)
    if NORM == 3:
        y = e * (tl.exp(m - M) / S)
    else:
        shift, scale = _row_scale(M, S, NORM)
        y = _normalise(x, shift, scale, NORM)
    tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


# ---------------------------------------------------------------------------------------------- host side

def _chunk(C: int, split: int, rblock: int) -> int:
    """Columns per program: whole RBLOCKs, as splitrows.py sizes them."""
    return triton.cdiv(triton.cdiv(C, split), rblock) * rblock


def _partials(R: int, split: int, device) -> torch.Tensor:
    return torch.empty(2 * R * split, device=device, dtype=torch.float32)


def run_copy(x, y, block, warps):
    return _copy_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block, num_warps=warps)


def run_two_kernels(x, y, cfg, norm):
    R, C = x.shape
    split, xb, rb = cfg["split"], cfg["xblock"], cfg["rblock"]
    part, chunk = _partials(R, split, x.device), _chunk(C, split, rb)
    grid = (triton.cdiv(R, xb) * split,)
    a = _partials_kernel[grid](x, part, R, C, chunk, XBLOCK=xb, RBLOCK=rb, SPLIT=split, num_warps=cfg["warps"])
    return a, _normalise_kernel[grid](x, y, part, R, C, chunk, XBLOCK=xb, RBLOCK=rb, SPLIT=split,
                            SPLIT_P2=triton.next_power_of_2(split), NORM=norm, num_warps=cfg["warps"])


def run_reread(x, y, cfg, norm):
    R, C = x.shape
    split, xb, rb = cfg["split"], cfg["xblock"], cfg["rblock"]
    return _reread_kernel[(triton.cdiv(R, xb) * split,)](x, y, R, C, _chunk(C, split, rb), XBLOCK=xb, RBLOCK=rb,
                                                         SPLIT=split, NORM=norm, num_warps=cfg["warps"])


def run_windowed(x, y, cfg, norm, spin=True, ticket=True, hints=False):
    R, C = x.shape
    split, xb, rb, wave = cfg["split"], cfg["xblock"], cfg["rblock"], cfg["wave"]
    nwaves = triton.cdiv(triton.cdiv(R, xb), wave)
    flags = torch.zeros(nwaves * wave + 1, device=x.device, dtype=torch.int32)   # per row block; the ticket
    return _windowed_kernel[(2 * nwaves * wave * split,)](
        x, y, _partials(R, split, x.device), flags, R, C, _chunk(C, split, rb), XBLOCK=xb, RBLOCK=rb,
        SPLIT=split, SPLIT_P2=triton.next_power_of_2(split), WAVE=wave, NORM=norm, SPIN=spin, TICKET=ticket,
        HINTS=hints, num_warps=cfg["warps"], num_stages=1)


def run_coop(x, y, cfg, norm, wait=1):
    """cfg["replay"] (the interpreter's check of SPLIT > 1): every row's flag starts at SPLIT, so no program
    waits, and the kernel runs twice on one partials buffer: the second run's combine reads the partials of
    the first wherever a peer has not yet run, the same values. Its output is then the row softmax."""
    R, C = x.shape
    block, split = cfg["block"], triton.cdiv(C, cfg["block"])
    part = _partials(R, split, x.device)
    for _ in range(2 if cfg.get("replay") else 1):
        flags = torch.zeros(R + 1, device=x.device, dtype=torch.int32)   # per row; the ticket
        if cfg.get("replay"):
            flags[:R] = split
        handle = _coop_kernel[(R * split,)](x, y, part, flags, R, C, BLOCK=block, SPLIT=split,
                                            SPLIT_P2=triton.next_power_of_2(split), NORM=norm, WAIT=wait,
                                            num_warps=cfg["warps"])
    return handle


def coop_configs(C: int, max_split: int, smoke: bool) -> list[dict]:
    """P4 chunk sizes: the smallest power-of-2 chunk with SPLIT = cdiv(C, chunk) <= max_split, and twice that
    (fewer programs per row, more registers each); chunks over 16K elements are refused (registers)."""
    if smoke:   # SPLIT 1 (no peer to wait for), then SPLIT > 1 replayed (run_coop)
        return [{"block": triton.next_power_of_2(C), "warps": 4}, {"block": 256, "warps": 4, "replay": True}]
    block = max(1024, triton.next_power_of_2(triton.cdiv(C, max_split)))
    return [{"block": b, "warps": min(16, max(4, b // 512))} for b in (block, 2 * block) if b <= 16384]


def variants(C: int, smoke: bool, n_sm: int) -> list[tuple[str, object, bool]]:
    """(name, function of (x, y), timing only?) in the order run, the questions first (a run cut short by a
    caller's timeout, or --max-wall, keeps them): the floor, today's two kernels, the one-read P4, the windowed
    P3 and its decomposition, then the re-read P2, the searched windowed schedule and P4's second chunk size."""
    if smoke:
        split = {"split": 4, "xblock": 1, "rblock": 256, "warps": 4}
        windows = [dict(split, wave=2), dict(split, xblock=2, wave=1)]
    else:
        split = {"split": 128, "xblock": 1, "rblock": 1024, "warps": 8}
        windows = [dict(split, wave=4), {"split": 256, "xblock": 4, "rblock": 1024, "warps": 8, "wave": 1}]
    # P0: checked as copies (y == x), not as softmaxes; the fastest is the floor the other lines are divided by
    p0 = [(f"P0 copy BLOCK {b} warps {w}", lambda x, y, b=b, w=w: run_copy(x, y, b, w), True)
          for b, w in ((1024, 4), (4096, 8))]
    p0.append(("P0 torch copy_", lambda x, y: y.copy_(x), True))
    p1 = [(f"P1 two kernels {NORM_NAMES[norm]} {_label(split)}", _bind(run_two_kernels, split, norm), False)
          for norm in (DIV, RECIP, EXP2)]
    p2 = [(f"P2 chunk re-read div {_label(split)}", _bind(run_reread, split, DIV), True)]
    p3 = []
    for i, w in enumerate(windows):   # the second: the schedule the search picked on the H200, fewer lines
        lines = [(f"P3 windowed {NORM_NAMES[norm]} {_label(w)}", _bind(run_windowed, w, norm), False)
                 for norm in (DIV, RECIP)[:2 - i]]
        if i == 0:
            lines.append((f"P3 windowed div evict hints {_label(w)}", _bind(run_windowed, w, DIV, hints=True), False))
        lines.append((f"P3b windowed no spin {_label(w)}", _bind(run_windowed, w, DIV, spin=False), True))
        lines.append((f"P3c windowed no spin no ticket {_label(w)}",
                      _bind(run_windowed, w, DIV, spin=False, ticket=False), True))
        p3.append(lines)
    p4 = []
    for i, cfg in enumerate(coop_configs(C, n_sm, smoke)):   # the second (twice the chunk): fewer lines
        label = f"BLOCK {cfg['block']} SPLIT {triton.cdiv(C, cfg['block'])} warps {cfg['warps']}" \
            + (" replayed" if cfg.get("replay") else "")
        lines = [(f"P4 cooperative {NORM_NAMES[norm]} {label}", _bind(run_coop, cfg, norm), False)
                 for norm in ((DIV, RECIP, EXP2, REUSE) if i == 0 else (DIV, REUSE))]
        if i == 0:   # the waiting's cost: polled without atomics, and not at all
            lines.append((f"P4 cooperative reuse volatile poll {label}", _bind(run_coop, cfg, REUSE, wait=2), False))
            lines.append((f"P4b cooperative no wait {label}", _bind(run_coop, cfg, REUSE, wait=0), True))
        p4.append(lines)
    first, later = (p4[:1], p4[1:]) if p4 else ([], [])
    return p0 + p1 + sum(first, []) + p3[0] + p2 + p3[1] + sum(later, [])


def _label(cfg: dict) -> str:
    return " ".join(f"{k.upper()} {v}" for k, v in cfg.items())


def _bind(fn, cfg, norm, **kw):
    return lambda x, y: fn(x, y, cfg, norm, **kw)


def bench_us(fn, reps: int, warmup: int = 3) -> float:
    """Median µs of fn() over reps, each after writing a 256 MB buffer (L2 flushed), timed by CUDA events."""
    for _ in range(warmup):
        fn()
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return 1000.0 * times[len(times) // 2]


def max_error(y: torch.Tensor, ref: torch.Tensor) -> float:
    """max |y - ref| over the tensor, 256 rows at a time (no full-size temporary)."""
    return max(float((y[i:i + 256].float() - ref[i:i + 256]).abs().max()) for i in range(0, y.shape[0], 256))


def _compiled(handles) -> dict:
    """Registers and spills per thread of the kernels a variant launched (none under the interpreter)."""
    handles = handles if isinstance(handles, tuple) else (handles,)
    regs = [getattr(k, "n_regs", None) for k in handles]
    if any(r is None for r in regs):
        return {}
    return {"regs": regs, "spills": [getattr(k, "n_spills", None) for k in handles]}


def probe_dtype(rows: int, cols: int, dtype: torch.dtype, device: str, reps: int, only, smoke: bool,
                on_row, deadline: float) -> None:
    """Runs, checks and times every variant on one dtype; on_row(row) after each (a hang keeps what came).
    Past `deadline` (time.perf_counter) the remaining variants are reported skipped, not run."""
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(rows, cols, device=device, generator=gen).to(dtype)
    ref = torch.softmax(x.float(), dim=1)
    ref_max = float(ref.max())
    n_sm = torch.cuda.get_device_properties(0).multi_processor_count if device == "cuda" else 1
    bytes_moved = 2 * x.numel() * x.element_size()
    floor = None
    todo = variants(cols, smoke, n_sm)
    todo.insert(3, ("torch.softmax eager", lambda a, b: torch.softmax(a, dim=1), True))   # after the P0s
    for name, fn, timing_only in todo:
        if only and not any(name.startswith(o) for o in only):
            continue
        if smoke and timing_only and dtype != torch.float32 and not name.startswith("P0"):
            continue   # the interpreter's time (CI's): unchecked variants run once, in fp32
        row = {"variant": name, "dtype": str(dtype).replace("torch.", ""), "rows": rows, "cols": cols,
               "timing_only": timing_only}
        if time.perf_counter() > deadline:
            on_row(row | {"error": "skipped: past --max-wall"})
            continue
        y = torch.full_like(x, float("nan"))
        try:
            row.update(_compiled(fn(x, y)))
            if device == "cuda":
                torch.cuda.synchronize()
            if name.startswith("P0"):
                row["copy_exact"] = bool(torch.equal(x, y))
            elif not timing_only:
                err = max_error(y, ref)
                row.update(max_abs_err=err, err_over_max=err / ref_max)
            if device == "cuda":
                t = bench_us(lambda: fn(x, y), reps)
                floor = min(t, floor or t) if name.startswith("P0") else floor
                row.update(time_us=round(t, 1), gb_s=round(bytes_moved / t / 1e3, 1),
                           over_floor=round(t / floor, 3) if floor else None)
        except Exception as exc:   # noqa: BLE001  (a probe reports a failed variant and goes on)
            row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        on_row(row)


def summary(results: list[dict]) -> list[str]:
    """Per dtype: the floor (fastest exact copy), then the fastest line of each family over it (a checked line
    only if within 2^-7 of the largest output: wrong kernels are no candidates)."""
    lines = []
    for dtype in dict.fromkeys(r["dtype"] for r in results):
        timed = [r for r in results if r["dtype"] == dtype and "time_us" in r]
        copies = [r["time_us"] for r in timed if r["variant"].startswith("P0") and r.get("copy_exact")]
        if not copies:
            continue
        floor = min(copies)
        lines.append(f"{dtype}: floor {floor:.1f} us (fastest exact copy)")
        for family in ("torch.softmax", "P1", "P2", "P3", "P3b", "P3c", "P4"):
            rows = [r for r in timed if r["variant"].split()[0] == family
                    and r.get("err_over_max", 0.0) <= 2 ** -7]   # not NaN, nor off by more than bf16's rounding
            if rows:
                best = min(rows, key=lambda r: r["time_us"])
                lines.append(f"  {family:14s} best {best['time_us']:9.1f} us  x{best['time_us'] / floor:5.2f}  "
                             f"{best['variant']}")
    return lines


def _line(row: dict) -> str:
    timing = f"{row['time_us']:9.1f} us {row['gb_s']:7.1f} GB/s x{row['over_floor'] or 0:5.2f}" if "time_us" in row \
        else "(not timed)"
    check = f"copy exact: {row['copy_exact']}" if "copy_exact" in row else "timing only" if row["timing_only"] else \
        f"max abs err {row['max_abs_err']:.2e} ({row['err_over_max']:.1e} of max)" if "max_abs_err" in row else ""
    regs = f"regs {row['regs']} spills {row['spills']}" if "regs" in row else ""
    return f"{row['dtype']:8s} {row['variant']:70s} {timing}  {check}  {regs} {row.get('error', '')}".rstrip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=393216)
    ap.add_argument("--dtype", choices=["fp32", "bf16", "both"], default="both")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only", default="", help="comma-separated name prefixes (e.g. P0,P4)")
    ap.add_argument("--out", default="")
    ap.add_argument("--max-wall", type=float, default=90.0,
                    help="seconds; variants not started by then are skipped (the GPU budget is 120 s)")
    ap.add_argument("--smoke", action="store_true", help="tiny, on the CPU under TRITON_INTERPRET=1")
    args = ap.parse_args(argv)
    dtypes = {"fp32": [torch.float32], "bf16": [torch.bfloat16], "both": [torch.float32, torch.bfloat16]}
    if args.smoke:
        rows, cols, device, reps = 3, 1000, "cpu", 1
    else:
        if not torch.cuda.is_available():
            print("no CUDA GPU: run with --smoke under TRITON_INTERPRET=1 on the CPU", file=sys.stderr)
            return 2
        rows, cols, device, reps = args.rows, args.cols, "cuda", max(20, args.reps)
    only = [o.strip() for o in args.only.split(",") if o.strip()]
    where = torch.cuda.get_device_name(0) if device == "cuda" else "CPU (TRITON_INTERPRET=1, not timed)"
    print(f"measured on {where}; torch {torch.__version__}, triton {triton.__version__}; {rows} x {cols}",
          flush=True)
    n_sm = torch.cuda.get_device_properties(0).multi_processor_count if device == "cuda" else None
    results, began = [], time.perf_counter()

    def save(complete: bool) -> None:   # after every variant: a run killed by a hang keeps the lines before it
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"label": f"measured on {where}", "torch": torch.__version__, "triton": triton.__version__,
                           "sm_count": n_sm, "rows": rows, "cols": cols, "reps": reps, "complete": complete,
                           "wall_s": round(time.perf_counter() - began, 1),
                           "timer": "CUDA events, median, L2 flushed (256 MB)", "results": results}, f, indent=1)

    def on_row(row: dict) -> None:
        print(_line(row), flush=True)
        results.append(row)
        save(False)

    for dtype in dtypes[args.dtype]:
        probe_dtype(rows, cols, dtype, device, reps, only, args.smoke, on_row, began + args.max_wall)
        if device == "cuda":
            torch.cuda.empty_cache()
    print(f"wall {time.perf_counter() - began:.0f} s (compiles, checks and timing)", flush=True)
    for line in summary(results):
        print(line, flush=True)
    save(True)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
