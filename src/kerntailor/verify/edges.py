"""The referee's edge cases (#17): inputs a user meets and the variants never have, each expecting either the
reference's answer or a named error.

After every regular draw and the special-values draw have passed, the judge runs these cases, one draw each
(the normal distribution), on the smallest variant judged or on sizes derived from it:

| case          | inputs                                                                                 |
|---------------|----------------------------------------------------------------------------------------|
| edge:rank+1   | every tensor input with a leading axis of LEAD (3, 4 or 5 by the seed) added: LEAD    |
|               | independent draws of it stacked                                                        |
| edge:rank-1   | every tensor input of rank >= 1 with its leading axis removed (its first slice)        |
| edge:bf16 ... | the problem in another floating dtype (fp32 -> bf16; bf16 or fp16 -> fp32): the model  |
|               | and its floating inputs cast, as `--dtype` does; judged by that dtype's tolerance row  |
| edge:rows     | one generalized size (a size constant or literal that differs between the problem's    |
|               | variants: what capture/generalize.py fits as a run-time size) set past ROW_LIMIT, the  |
|               | others at the smallest variant's values, halved (each checked on meta) while a tensor  |
|               | has more than the budget's elements (interpreter: INTERPRETER_BUDGET; GPU: GPU_BUDGET) |
|               | (beside the 127 rows of problems/level1/layernorm's smallest variant a row past 2^20   |
|               | holds 2^27 elements: without the halving the interpreter could stretch nothing)        |
| edge:int32    | GPU only: one generalized size stretched until a tensor (input, parameter or output)   |
|               | has more than 2^31 elements, where the GPU holds it and the float64 reference          |
|               | (measure/memory.py's plan; a float64 GEMM of that size on the host would take hours)   |

The answer is judged as on the regular draws (structure, poison, aliasing, inputs, determinism, NaN, Inf, accuracy
by the table row of its dtype). A refusal passes only when it is *named* (named_refusal): forward (or the
constructor, at a stretched size: its arguments are new there) raises a ValueError or TypeError (or a subclass)
whose message names what the case changed, as a whole word: a tensor argument by the name Model.forward gives it
(`args[0]` for `*args`), a parameter or buffer by its state_dict name (`ln.weight`, which `self.ln.weight` holds);
on the size cases also a multiple of the stretched size (the size itself, a row or an element count that holds it:
"rows of 1048579 elements"; the stretched sizes are odd or hold an odd factor, so that a power of two in Triton's
own "numel (2097152) exceeds triton maximum tensor numel (1048576)" is no such multiple). A bare IndexError, a
RuntimeError of PyTorch, a Triton compile error or interpreter error, and Python's own "too many values to unpack"
(a ValueError naming nothing) all fail, as does a wrong shape or dtype. Where the reference itself raises on the
case's inputs, there is no answer to give: the candidate must raise too (any exception); outputs fail.

What the stage proves, and what it cannot. On each input it tries, the candidate does not return a wrong answer
silently: it answers right, or refuses in a way a user can read. It cannot prove anything about an input it does
not try: a candidate may refuse exactly these shapes (a leading axis of this LEAD, this stretched size) and
compute garbage for their neighbours. Such a candidate was already wrong somewhere untried; the stage narrows the
room (LEAD and the regular draws move with the seed; refusals are only taken for the named assumption, and a
candidate refusing every input fails the regular draws, which come first) but a refusal is taken at its word: the
message is the candidate's, so a message forged to name the argument passes. Nor can it rule out a candidate whose
behaviour depends on how often it has been built or called (a counter that refuses everything past the regular
draws' calls): no finite test can, here or in the regular draws; a constructor that refuses arguments it accepted
before is not taken as a refusal.

Which sizes are stretched: under the interpreter one (a size that makes a tensor input's last axis past 2^20
first: its rows are few, so are a kernel's programs; then the largest in the base variant), and a rows case
that has not answered within ROWS_INTERPRETER_S is skipped, said in the verdict, not failed: the interpreter's
time is no verdict on a kernel, but a slow candidate is then not judged there (run it on a GPU). On the GPU up
to MAX_STRETCHES in the same order, and the int32 case, each under the judge's own time limit. A size that
forward loops over in Python (its operator count on meta grows with it: an RNN stepping over its sequence) is
never stretched: 2^20 steps would hang the planner's meta forward and the reference.

Planned here in the CLI process (on meta tensors: nothing is allocated; at most 8 s for KernelBench's ResNet-101,
a median of 0.25 s over its level 2 and 3 files, 2026-12-02), run by judge_edges.EdgeCases in the judge. A case
the judge cannot set up or hold (its model does not build on the device, the GPU runs out of memory) is skipped
with the reason, never the candidate's failure.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from dataclasses import dataclass
from math import prod
from typing import Any

from kerntailor.problem.spec import DTYPE_NAMES, Variant

ROW_LIMIT = 1 << 20   # triton 3.6's TRITON_MAX_TENSOR_NUMEL: a persistent block holds at most this many elements
INT32_LIMIT = 2 ** 31 - 1   # int32 offsets address fewer elements than this
# Elements per tensor of a stretched case. The interpreter walks a kernel's programs in Python, and a case runs
# forward twice: one run over 3 x (2^20 + 3) elements took 4 s (generated cross_entropy), 9.5 s (relu), 13 s
# (softmax_long_rows), 26 s (cumsum), 109 s (matmul_tall_skinny: a K loop of 2^20 / BLOCK_K steps) and 382 s
# (maxpool2d) on 2 CPU cores shared with other jobs (load 5-7, 2026-12-02). Rows past 2^20 need 2^20 elements;
# under the interpreter the others shrink to fit 2^21, and a case that has not answered within
# ROWS_INTERPRETER_S is skipped, said in the verdict (the candidate process is then busy: the stage ends there).
# Its cost is that wait: a generated GEMM's referee took 3 s without the stage, 63 s with a 60 s allowance
# (its K loop of 2^20 / BLOCK_K steps never finished), so the allowance is short.
INTERPRETER_BUDGET = 1 << 21
ROWS_INTERPRETER_S = 15.0
# On the GPU a case's runs of forward must answer within EDGE_GPU_S, or EDGE_GPU_FACTOR times the reference's own
# run at that size where that is longer, plus EDGE_GPU_S_PER_GB for each GB of its inputs and outputs (shipped as
# bytes where CUDA IPC fails: at least 0.5 GB/s); past it the case fails (check "edges", "[timeout]"). Without it, a
# schedule unfit for a stretched size ran until the judge's own limit (300 s) holding the GPU's lock that every
# other job's judge waits for: level-2 62 at hidden_size 1,049,600 on the H100 (2026-12-06, --jobs 6), two
# judgements of 295 s each, while four other problems waited up to 295 s for the lock and were cut. (At 60 s, the
# next call's 62 passed with its rows case inside it: the judge's run phase took 55 s in all.)
EDGE_GPU_S = 120.0   # a first call compiles the stretched size's kernels (Triton) beside five other jobs' builds
EDGE_GPU_FACTOR = 100.0
EDGE_GPU_S_PER_GB = 2.0
GPU_BUDGET = 1 << 26
# past 2^20, tried in order until the model builds; each holds an odd factor (named_refusal's multiples)
STRETCHES = ((1 << 20) + 3, (1 << 20) + 16, (1 << 20) + 64, (1 << 20) + 1024, 5 << 18, 3 << 19)
SHRINK_FLOOR = 1      # the other sizes are halved no lower than this
MAX_STRETCHES = {True: 1, False: 4}   # rows cases under the interpreter, on the GPU
Slot = tuple[str, str]   # ("const", name) or ("literal", "LINE:COL"), as problem/slots.py


@dataclass(frozen=True)
class Edge:
    """One edge case, planned on meta tensors (plan_edges) and run by the judge."""

    kind: str                  # "rank+1", "rank-1", "dtype", "rows", "int32"
    draw: str                  # the case's draw name in the verdict: "edge:rank+1", "edge:bf16", "edge:rows", ...
    base: str                  # the judged variant it starts from (the smallest)
    what: str                  # one line: what the case changes
    names: tuple[str, ...]     # what a refusal may name: the arguments, parameters and buffers the case changes
    size: int | None = None   # or a multiple of this number (the stretched size)
    lead: int = 0              # rank+1: the leading axis's size; rank-1: -1
    dtype: str | None = None   # the dtype policy of the case ("dtype": the other one), else the problem's
    variant: Variant | None = None   # rows, int32: the stretched sizes; else the base variant's
    memory: dict | None = None       # int32: the memory plan of its variant (MemoryPlan.to_job)
    allowance_s: float | None = None   # interpreter rows: skipped (not failed) past this many seconds

    @property
    def variant_name(self) -> str:
        return self.variant.name if self.variant is not None else self.base

    def label(self) -> str:
        return f"{self.draw} ({self.what})"


def edge_problem(problem, edge: Edge):
    """The problem the case runs: the stretched variant added, the dtype policy the case's."""
    variants = problem.variants + ((edge.variant,) if edge.variant is not None else ())
    return dataclasses.replace(problem, variants=variants,
                               dtype=edge.dtype if edge.kind == "dtype" else problem.dtype)


def edge_inputs(problem, edge: Edge, dist: str, seed: int, device) -> list[Any]:
    """The case's inputs from `problem` (edge_problem's): the base variant's draw reshaped (rank cases), or the
    draw of the case's own variant and dtype."""
    import torch

    from kerntailor.verify.draws import draw_inputs

    if edge.lead > 0:
        draws = [draw_inputs(problem, edge.base, dist, seed + i, device) for i in range(edge.lead)]
        return [torch.stack([d[k] for d in draws]) if isinstance(v, torch.Tensor) else v
                for k, v in enumerate(draws[0])]
    inputs = draw_inputs(problem, edge.variant_name, dist, seed, device)
    if edge.lead < 0:
        return [v[0].clone() if isinstance(v, torch.Tensor) and v.dim() >= 1 else v for v in inputs]
    return inputs


# --- what a refusal must say --------------------------------------------------------------------------------

REFUSAL_TYPES = ("ValueError", "TypeError")


def named_refusal(types: list[str], message: str, edge: Edge) -> str | None:
    """None when an exception (its class and base classes' names, its message) is a named refusal of `edge`
    (module docstring); else what it lacks, one line."""
    want = " or ".join(edge.names[:4]) + (" (or another changed tensor)" if len(edge.names) > 4 else "")
    if edge.size is not None:
        want += f"{' or ' if want else ''}a multiple of {edge.size} (the size, a row or a count holding it)"
    expected = f"expected the reference's answer or a ValueError/TypeError naming {want}"
    if not any(t in REFUSAL_TYPES for t in types):
        return f"not a named refusal ({types[0] if types else 'an exception'}): {expected}"
    if any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", message) for n in edge.names):
        return None
    numbers = (int(re.sub(r"[,_]", "", m)) for m in re.findall(r"\d[\d,_]*\d|\d", message))
    if edge.size is not None and any(n > 0 and n % edge.size == 0 for n in numbers):
        return None
    return f"the message names nothing the case changed: {expected}"


# --- planning, on meta tensors ------------------------------------------------------------------------------

@dataclass(frozen=True)
class MetaRun:
    """A variant's tensors on meta: forward's arguments ((shape, dtype) or None), state (name, shape, dtype),
    the numel of each tensor output, and how many operators forward dispatched."""

    inputs: tuple[tuple[tuple[int, ...], Any] | None, ...]
    state: tuple[tuple[str, tuple[int, ...], Any], ...]
    outputs: tuple[int, ...]
    ops: int
    empties: int = 0   # operators that returned an empty tensor from non-empty ones (meta_run)

    @property
    def largest(self) -> int:
        sizes = [prod(i[0]) for i in self.inputs if i is not None] + [prod(s[1]) for s in self.state]
        return max(sizes + list(self.outputs), default=0)

    @property
    def total(self) -> int:
        return sum(prod(i[0]) for i in self.inputs if i is not None) + sum(prod(s[1]) for s in self.state) + \
            sum(self.outputs)


@functools.lru_cache(maxsize=256)
def _meta_run(source: str, path, overrides: tuple, literals: tuple, dtype: str | None, name: str) -> MetaRun | None:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from kerntailor.problem.load import build_inputs, build_model, empty_from_nonempty, eval_for_shapes, exec_module
    from kerntailor.problem.meta import eager_recurrent_by_shape
    from kerntailor.verify.tolerance import flatten_outputs

    class OpCount(TorchDispatchMode):
        n = 0
        empties = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.n += 1
            out = func(*args, **(kwargs or {}))
            self.empties += empty_from_nonempty(args, out)
            return out

    try:
        module = exec_module(source, path, dict(overrides), dict(literals))
        model = eval_for_shapes(build_model(module, "meta", dtype, name))
        inputs = build_inputs(module, "meta", dtype, name)
        with torch.no_grad(), eager_recurrent_by_shape(model), OpCount() as count:
            out = flatten_outputs(model(*inputs))
    except Exception:   # noqa: BLE001 - the model does not build or run at these sizes
        return None
    state = [(k, tuple(v.shape), v.dtype) for k, v in model.state_dict().items() if isinstance(v, torch.Tensor)]
    return MetaRun(tuple((tuple(v.shape), v.dtype) if isinstance(v, torch.Tensor) else None for v in inputs),
                   tuple(state), tuple(o.numel() for o in out if isinstance(o, torch.Tensor)), count.n,
                   count.empties)



def meta_run(problem, variant: Variant, dtype: str | None = None) -> MetaRun | None:
    """The variant's MetaRun, or None where the model does not build or run at its sizes, including where an
    operator returns an empty tensor from non-empty ones that it does not at the default sizes: on meta a
    convolution whose dilated kernel outgrows its padded input gives an empty output, on a device it raises
    (80_conv_standard_2D's dilated 5 x 9 kernel, its width halved for an edge, H200 2026-12-03)."""
    dtype = dtype if dtype is not None else problem.dtype
    run = _meta_run(problem.source, problem.path, variant.overrides, variant.literals, dtype, problem.name)
    if run is None or not run.empties:
        return run
    default = _meta_run(problem.source, problem.path, (), (), dtype, problem.name)
    return run if default is not None and default.empties >= run.empties else None


def forward_names(problem, count: int) -> list[str]:
    """Model.forward's names of its first `count` arguments (`args[i]` past a `*args`)."""
    try:
        params = list(inspect.signature(problem.module("default").Model.forward).parameters.values())[1:]
    except (TypeError, ValueError, AttributeError):
        params = []
    names = []
    for i in range(count):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), "args")
            first = next((j for j, p in enumerate(params) if p.kind == p.VAR_POSITIONAL), i)
            names.append(f"{star}[{i - first}]")
    return names


def _slots(problem) -> tuple[dict[Slot, int], list[Slot]]:
    """(every slot any variant sets -> its default value, the generalized ones: values differ between
    variants), in a fixed order."""
    from kerntailor.problem.literals import literal_slots

    default = problem.module("default")
    literal_values = {lit.key: lit.value for lit in literal_slots(problem.source, set())}
    values: dict[Slot, int] = {}
    for v in problem.variants:
        for k, _ in v.overrides:
            values.setdefault(("const", k), getattr(default, k))
        for k, _ in v.literals:
            if k in literal_values:
                values.setdefault(("literal", k), literal_values[k])
    general = [s for s in values if len({_value(v, s, values) for v in problem.variants}) > 1]
    return values, general


def _value(variant: Variant, slot: Slot, defaults: dict[Slot, int]) -> int:
    pairs = variant.overrides if slot[0] == "const" else variant.literals
    return dict(pairs).get(slot[1], defaults[slot])


def _variant(name: str, sizes: dict[Slot, int]) -> Variant:
    consts = tuple(sorted((k, v) for (kind, k), v in sizes.items() if kind == "const"))
    literals = tuple(sorted((k, v) for (kind, k), v in sizes.items() if kind == "literal"))
    return Variant(name, consts, literals)


def _shapes_text(names: list[str], run: MetaRun, only: set[int] | None = None, lead: int = 0) -> str:
    parts = []
    for k, (name, inp) in enumerate(zip(names, run.inputs)):
        if inp is None or (only is not None and k not in only):
            continue
        shape = inp[0]
        shape = ((lead,) + shape) if lead > 0 else (shape[1:] if lead < 0 else shape)
        parts.append(f"{name} {tuple(shape)}")
    more = f", +{len(parts) - 3} more" if len(parts) > 3 else ""
    return ", ".join(parts[:3]) + more


def plan_edges(problem, base: str, interpreter: bool, seed: int = 0, memory_plan=None) \
        -> tuple[list[Edge], list[str]]:
    """(the edge cases to run from variant `base`, the ones skipped with why). `memory_plan`: the referee's
    memory plan for a variant name list on the GPU (measure.memory.referee_plan), for the int32 case."""
    base_variant = problem.variant(base)
    run = meta_run(problem, base_variant)
    if run is None:
        return [], ["edges: the smallest variant does not run on meta tensors, so no edge can be derived"]
    names = forward_names(problem, len(run.inputs))
    edges, skipped = [], []
    tensors = [k for k, inp in enumerate(run.inputs) if inp is not None]
    if tensors:
        lead = 3 + seed % 3
        edges.append(Edge("rank+1", "edge:rank+1", base, f"a leading axis of {lead} on every tensor input: "
                          + _shapes_text(names, run, lead=lead), tuple(names[k] for k in tensors), lead=lead))
    else:
        skipped.append("edge:rank+1: forward takes no tensor")
    ranked = [k for k in tensors if len(run.inputs[k][0]) >= 1]
    if ranked:
        edges.append(Edge("rank-1", "edge:rank-1", base, "the leading axis of every tensor input removed: "
                          + _shapes_text(names, run, set(ranked), lead=-1), tuple(names[k] for k in ranked),
                          lead=-1))
    else:
        skipped.append("edge:rank-1: no tensor input has an axis")
    edges += _dtype_edge(problem, base, run, names, skipped)
    found, why = _stretch_edges(problem, base, run, names, interpreter)
    edges += found
    skipped += why
    if interpreter:
        skipped.append("edge:int32 (a tensor past 2^31 elements): needs a GPU with the memory; the interpreter would "
                       "walk 2^31 elements in Python for hours")
    else:
        found, why = _int32_edge(problem, base, run, names, memory_plan)
        edges += found
        skipped += why
    return edges, skipped


def _dtype_edge(problem, base: str, run: MetaRun, names: list[str], skipped: list[str]) -> list[Edge]:
    import torch

    floating = {inp[1] for inp in run.inputs if inp is not None and inp[1].is_floating_point} | \
        {s[2] for s in run.state if s[2].is_floating_point}
    if not floating:
        skipped.append("edge:dtype: no floating tensor (inputs, parameters, buffers)")
        return []
    other = "fp32" if floating & {torch.bfloat16, torch.float16} else "bf16"
    changed = tuple([names[k] for k, inp in enumerate(run.inputs) if inp is not None and inp[1].is_floating_point]
                    + [s[0] for s in run.state if s[2].is_floating_point])
    now = "/".join(sorted(DTYPE_NAMES.get(d, str(d)) for d in floating))
    return [Edge("dtype", f"edge:{other}", base, f"{other} where the problem is {now}: the model and its floating "
                 f"inputs cast (as --dtype {other}), judged by the {other} tolerance row", changed, dtype=other)]


def _changed(names: list[str], before: MetaRun, after: MetaRun) -> tuple[tuple[str, ...], set[int]]:
    """The tensor arguments and state whose shapes differ between two runs (names; argument indices)."""
    args = {k for k, (a, b) in enumerate(zip(before.inputs, after.inputs)) if a is not None and b is not None
            and a[0] != b[0]}
    state = [s[0] for s, t in zip(before.state, after.state) if s[1] != t[1]]
    return tuple([names[k] for k in sorted(args)] + state), args


def _slot_text(slot: Slot) -> str:
    return slot[1] if slot[0] == "const" else f"the literal at {slot[1]}"


def _loops_over(problem, start: dict[Slot, int], slot: Slot, run: MetaRun) -> str | None:
    """Why `slot` is not stretched where forward's work grows with it (a Python loop over it: KernelBench's
    VanillaRNNHidden steps over its sequence one cell at a time, so a sequence past 2^20 would run millions of
    operators, on meta while planning and in the reference): the operators forward dispatches on meta at twice
    the base value against the base's (`run`); None where their count stays."""
    twice = meta_run(problem, _variant("edge", {**start, slot: 2 * start[slot]}))
    if twice is None or twice.ops <= run.ops:
        return None
    return (f"{_slot_text(slot)} (forward dispatches {run.ops} operators at {start[slot]}, {twice.ops} at "
            f"{2 * start[slot]}: a loop over it)")


def _stretch_edges(problem, base: str, run: MetaRun, names: list[str], interpreter: bool) \
        -> tuple[list[Edge], list[str]]:
    """edge:rows: each generalized size past ROW_LIMIT (module docstring), the others shrunk to fit the budget;
    the first MAX_STRETCHES in this order (one under the interpreter): a size that stretches the last axis of a
    tensor input (rows along it are few, so are the programs a kernel launches over the others: the interpreter's
    time goes by programs), then the largest in the base variant."""
    defaults, general = _slots(problem)
    if not general:
        return [], ["edge:rows: no size differs between the problem's variants (nothing generalized to stretch)"]
    budget = INTERPRETER_BUDGET if interpreter else GPU_BUDGET
    start = {s: _value(problem.variant(base), s, defaults) for s in defaults}
    found, tried, looped = [], [], []
    for i, slot in enumerate(general):
        loop = _loops_over(problem, start, slot, run)
        if loop:
            looped.append(loop)
            continue
        sizes = _stretched(problem, start, slot, general, budget)
        if sizes is None:
            tried.append(_slot_text(slot))
            continue
        after = meta_run(problem, _variant("edge", sizes))
        last = any(b is not None and b[0] and b[0][-1] > ROW_LIMIT for b in after.inputs)
        found.append(((not last, -start[slot], i), slot, sizes, after))
    if not found:
        why = [f"{', '.join(tried)} could not be set past 2^20 with every tensor within {budget:,} elements, the "
               f"other sizes halved down to {SHRINK_FLOOR} (each checked on meta)"] if tried else []
        return [], [f"edge:rows: no generalized size fits: {'; '.join(why + looped)}"]
    found.sort(key=lambda f: f[0])
    edges = []
    for _, slot, sizes, after in found[:MAX_STRETCHES[interpreter]]:
        variant = _variant(f"{base}+{slot[1]}={sizes[slot]}", sizes)
        changed, args = _changed(names, run, after)
        others = ", ".join(f"{_slot_text(s)}={sizes[s]}" for s in general if s != slot and sizes[s] != start[s])
        what = (f"{_slot_text(slot)}={sizes[slot]}, past the persistent-row limit 2^20"
                + (f" (shrunk to fit {budget:,} elements: {others})" if others else "")
                + f": {_shapes_text(names, after, args) or 'the parameters'}")
        edges.append(Edge("rows", "edge:rows", base, what, changed, size=sizes[slot], variant=variant,
                          allowance_s=ROWS_INTERPRETER_S if interpreter else None))
    return edges, []


def _stretched(problem, start: dict[Slot, int], slot: Slot, general: list[Slot], budget: int) \
        -> dict[Slot, int] | None:
    """`start` with `slot` at the first of STRETCHES that builds, the other generalized sizes halved (largest
    first; a halving that breaks the model is not kept) while a tensor exceeds `budget`; None if it never fits."""
    sizes = None
    for value in STRETCHES:
        trial = {**start, slot: value}
        found = meta_run(problem, _variant("edge", trial))
        if found is not None:
            sizes, run = trial, found
            break
    if sizes is None:
        return None
    frozen: set[Slot] = set()
    while run.largest > budget:
        movable = [s for s in general if s != slot and s not in frozen and sizes[s] > SHRINK_FLOOR]
        if not movable:
            return None
        key = max(movable, key=lambda s: sizes[s])
        trial = {**sizes, key: max(SHRINK_FLOOR, sizes[key] // 2)}
        found = meta_run(problem, _variant("edge", trial))
        if found is None:
            frozen.add(key)
            continue
        sizes, run = trial, found
    return sizes


def _int32_edge(problem, base: str, run: MetaRun, names: list[str], memory_plan) -> tuple[list[Edge], list[str]]:
    """edge:int32 (GPU): the generalized size whose stretch past 2^31 elements in one tensor needs the fewest
    elements in all, where the referee's memory plan fits it with the float64 reference on the GPU
    (`memory_plan`: (problem, variant names) -> MemoryPlan, or raises MemoryRefused). A size that also grows an
    output goes before one that does not: a size only reduced over would make one reduction 10^9 terms long,
    where any blocked fp32 sum misses the fp32 row of the table (H200, 2026-12-02: a correct row mean over 3 rows
    of 715,827,883 at 1.0e-5) and the case would judge accumulation, not the int32 offsets it is for."""
    defaults, general = _slots(problem)
    if not general:
        return [], ["edge:int32: no size differs between the problem's variants (nothing generalized to stretch)"]
    start = {s: _value(problem.variant(base), s, defaults) for s in defaults}
    found, looped = [], []
    for slot in general:
        loop = _loops_over(problem, start, slot, run)
        if loop:
            looped.append(loop)
            continue
        sizes = _past_int32(problem, start, slot, run)
        if sizes is not None:
            stretched = meta_run(problem, _variant("edge", sizes))
            found.append(((sum(stretched.outputs) <= sum(run.outputs), stretched.total), slot, sizes))
    if not found:
        return [], ["edge:int32: no generalized size takes a tensor past 2^31 elements (each checked on meta)"
                    + (f"; not stretched: {'; '.join(looped)}" if looped else "")]
    reasons = []
    for _, slot, sizes in sorted(found, key=lambda f: f[0]):
        variant = _variant(f"{base}+{slot[1]}={sizes[slot]}", sizes)
        after = meta_run(problem, variant)
        edge = Edge("int32", "edge:int32", base, "", (), variant=variant)
        try:
            plan = memory_plan(edge_problem(problem, edge), [variant.name])
        except MemoryError as e:   # measure.memory.MemoryRefused
            reasons.append(f"{_slot_text(slot)}={sizes[slot]}: {str(e).split(': ', 1)[-1]}")
            continue
        if plan.reference != "device":   # a float64 GEMM of this size on the host would take hours
            reasons.append(f"{_slot_text(slot)}={sizes[slot]}: the float64 reference would not fit the GPU "
                           f"(~{plan.device_need / 1e9:.0f} GB with it on the host)")
            continue
        changed, args = _changed(names, run, after)
        what = (f"{_slot_text(slot)}={sizes[slot]}: {after.largest:,} elements in one tensor, past 2^31: "
                f"{_shapes_text(names, after, args) or 'the parameters'}")
        return [dataclasses.replace(edge, what=what, names=changed, size=sizes[slot],
                                    memory=plan.to_job())], []
    return [], [f"edge:int32 (a tensor past 2^31 elements): the GPU has not the memory ({'; '.join(reasons)[:300]})"]


def _past_int32(problem, start: dict[Slot, int], slot: Slot, run: MetaRun) -> dict[Slot, int] | None:
    """`start` with `slot` at a value found on meta that puts a tensor past INT32_LIMIT elements: the growth
    measured at twice the value, extrapolated to an odd value (or, where the model needs it, a multiple of the
    base value), then stepped up by 1 % until past (a few tries)."""
    import math

    v0, n0 = start[slot], run.largest
    twice = meta_run(problem, _variant("edge", {**start, slot: 2 * v0}))
    if twice is None or twice.largest <= n0 or n0 == 0:
        return None
    exponent = max(0.25, round(math.log2(twice.largest / n0) * 4) / 4)
    value = max(2 * v0, math.ceil(v0 * ((INT32_LIMIT + 2) / n0) ** (1 / exponent)))
    for _ in range(4):
        for trial in (value | 1, -(-value // v0) * v0):   # odd: no power of two (named_refusal's multiples)
            found = meta_run(problem, _variant("edge", {**start, slot: trial}))
            if found is not None:
                break
        else:
            return None
        if found.largest > INT32_LIMIT:
            return {**start, slot: trial}
        value = trial + max(1, trial // 100)
    return None
