"""The prompts: versioned template files in prompts/ (system_v1.md, first_turn_v1.md, refine_v1.md), filled with
facts from the problem, the target table and the referee, never with folklore.

    facts = problem_facts(problem, target, measured=False)
    messages = first_turn(facts, best=None)            # [("system", ...), ("user", ...)]
    messages = refine(facts, previous_code, feedback, best, turn=2, turns=3, passed=False)

Templates use string.Template (`${name}`); a template that names a fact not given fails loudly. Changing a
prompt means adding a file with the next version (system_v2.md, ...): the store records the version each
attempt used, so old runs stay auditable.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from string import Template

PROMPT_VERSION = "v1"
TEMPLATES = ("system", "first_turn", "refine")


def template(name: str, version: str = PROMPT_VERSION) -> Template:
    from kerntailor.errors import ProposerError

    try:
        text = resources.files("kerntailor.propose").joinpath("prompts", f"{name}_{version}.md").read_text()
    except (FileNotFoundError, OSError):
        raise ProposerError(f"no prompt template {name}_{version}.md in kerntailor/propose/prompts/") from None
    return Template(text)


@dataclass(frozen=True)
class ProblemFacts:
    """Everything a prompt says about the problem and the target; rendered once per run."""

    problem_name: str
    problem_path: str
    reference: str
    inputs: str
    target_name: str
    target_display: str
    target_facts: str
    floor: str
    tolerance: str
    mode_note: str
    variant_shapes: tuple[tuple[str, str], ...] = ()   # variant name -> its input shapes, for feedback


@dataclass(frozen=True)
class Best:
    """The best passing kernel so far and its report, as the prompts show it."""

    source: str
    report: str


def first_turn(facts: ProblemFacts, best: Best | None, version: str = PROMPT_VERSION) -> list[tuple[str, str]]:
    user = template("first_turn", version).substitute(_common(facts, best))
    return [("system", system(facts, version)), ("user", user)]


def refine(facts: ProblemFacts, previous_code: str, feedback: str, best: Best | None, *, turn: int, turns: int,
           passed: bool, version: str = PROMPT_VERSION) -> list[tuple[str, str]]:
    task = ("It passed. Make it faster, using the facts above; keep it correct." if passed
            else "Fix what failed, using the facts above.")
    user = template("refine", version).substitute(
        _common(facts, best), feedback=feedback.strip(), previous_code=previous_code.rstrip(), turn=turn,
        turns=turns, task=task)
    return [("system", system(facts, version)), ("user", user)]


def system(facts: ProblemFacts, version: str = PROMPT_VERSION) -> str:
    return template("system", version).substitute(tolerance=facts.tolerance)


def _common(facts: ProblemFacts, best: Best | None) -> dict[str, str]:
    return dict(problem_name=facts.problem_name, problem_path=facts.problem_path,
                reference=facts.reference.rstrip(), inputs=facts.inputs, target_name=facts.target_name,
                target_display=facts.target_display, target_facts=facts.target_facts, floor=facts.floor,
                mode_note=facts.mode_note, best=render_best(best))


def render_best(best: Best | None) -> str:
    if best is None:
        return "None yet."
    return f"{best.report.strip()}\n\n```python\n{best.source.rstrip()}\n```"


# ---- facts


def problem_facts(problem, target, *, measured: bool, gpu_name: str | None = None) -> ProblemFacts:
    """Facts about `problem` (a ProblemSpec) on `target` (a Target), from the problem file, the target table
    and the roofline floor of the captured problem."""
    from kerntailor.verify.tolerance import TOLERANCES

    shapes = variant_shapes(problem)
    dtype_line = (f"Floating inputs and parameters are cast to {problem.dtype}." if problem.dtype
                  else "Dtypes are as the reference file makes them.")
    inputs = "\n".join([f"- variant `{name}`: forward({text})" for name, text in shapes]
                       + [f"- get_init_inputs() = {_init_inputs(problem)}", f"- {dtype_line}",
                          "- Every variant is run; the kernel must work for all of them (and any other shape)."])
    rows = [TOLERANCES[r] for r in ("fp32", "bf16", "fp16")]
    tolerance = "; ".join(f"{t.policy} ‖out−ref‖/‖ref‖ ≤ {t.norm:g} and |out−ref| ≤ {t.atol:g}·rms(ref) + "
                          f"{t.rtol:g}·|ref|" for t in rows)
    if measured:
        mode = (f"It will be verified on {gpu_name or 'the GPU'} and timed against PyTorch eager and "
                "torch.compile (median, L2 flushed).")
    else:
        mode = (f"No {target.display_name} is at hand: it will be verified under Triton's interpreter on the "
                "small variants, so it must be correct first; it will run on the target later.")
    return ProblemFacts(problem.name, problem.path.name, problem.source, inputs, target.name, target.display_name,
                        target_facts(target), floor_text(problem, target), tolerance, mode, tuple(shapes))


def variant_shapes(problem) -> list[tuple[str, str]]:
    out = []
    for v in problem.variants:
        try:
            values = problem.make_inputs(v.name, "meta")
        except Exception as e:  # a variant that cannot build is the loader's business, not the prompt's
            out.append((v.name, f"<inputs failed: {type(e).__name__}>"))
            continue
        out.append((v.name, ", ".join(_describe(x) for x in values)))
    return out


def _describe(x) -> str:
    import torch

    from kerntailor.problem.spec import dtype_name

    if isinstance(x, torch.Tensor):
        return f"{dtype_name(x.dtype)}[{', '.join(str(d) for d in x.shape)}]"
    return repr(x)


def _init_inputs(problem) -> str:
    try:
        return repr(problem.init_inputs("default"))
    except Exception as e:
        return f"<failed: {type(e).__name__}>"


def _si(x: float, unit: str) -> str:
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def _time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def _kib(n: int) -> str:
    return f"{n // (1 << 20)} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n / 1024:g} KiB"


def target_facts(t) -> str:
    """The target's row of the table, as the facts a kernel engineer looks at."""
    amd = t.vendor == "amd"
    wave, cu = ("wavefront", "CU") if amd else ("warp", "SM")
    regs = (f"{t.registers_per_simd} VGPRs per lane per SIMD, at most {t.max_registers_per_thread} per thread "
            f"(arch + accumulation), allocated in granules of {t.register_granule}" if amd else
            f"{t.registers_per_simd} 32-bit registers per SM, at most {t.max_registers_per_thread} per thread")
    matrix = ", ".join(f"{m.name} ({m.in_dtype}, {'x'.join(map(str, m.shape))})" for m in t.matrix_instrs)
    options = "num_warps, num_stages" + (", waves_per_eu, matrix_instr_nonkdim, kpack" if amd else "")
    lines = [
        f"- {t.display_name}: Triton backend `{t.backend}`, arch `{t.arch}`",
        f"- {wave} size {t.warp_size} threads; {t.compute_units} {cu}s, {t.simds_per_cu} SIMDs "
        f"{'per CU' if amd else 'sub-partitions per SM'}; up to {t.max_waves_per_simd} "
        f"{'waves per SIMD' if amd else 'warps per SM'}, {t.max_blocks_per_cu} blocks per {cu}",
        f"- {'LDS' if amd else 'shared memory'}: {_kib(t.lds_per_cu)} per {cu}, {_kib(t.lds_per_block)} per block",
        f"- registers: {regs}",
        f"- L2 {_kib(t.l2_bytes)}" + (f", last-level cache {_kib(t.llc_bytes)}" if t.llc_bytes else "")
        + f"; memory {t.memory_bytes / 1e9:.0f} GB at {_si(t.memory_bandwidth, 'B/s')}",
        "- matrix-unit peaks: " + ", ".join(f"{k} {_si(v, 'FLOP/s')}" for k, v in t.peak_flops),
        "- vector peaks: " + ", ".join(f"{k} {_si(v, 'FLOP/s')}" for k, v in t.vector_flops),
        f"- matrix instructions: {matrix or 'none'}",
        f"- Triton compile options on this backend: {options}",
    ]
    return "\n".join(lines)


def floor_text(problem, target) -> str:
    """The roofline floor of the problem's default shapes on `target`, or why it is unknown."""
    try:
        from kerntailor.capture import capture_problem
        from kerntailor.inspect import floor_of

        capture = capture_problem(problem, "default")
        floor = floor_of(capture, target)
    except Exception as e:  # the floor is a fact worth having, not a reason to stop
        return f"Not computed: capturing the problem failed ({type(e).__name__}: {str(e).splitlines()[0][:200]})."
    cost = capture.cost
    return (f"{_time(floor.seconds)}, {floor.bound}-bound ({floor.ceiling_source}): compulsory traffic "
            f"{_si(cost.min_bytes, 'B')} (every input read once, every output written once) at "
            f"{_si(floor.bandwidth, 'B/s')} takes {_time(floor.memory_seconds)}; {_si(floor.flops, 'FLOP')} "
            f"({floor.rate_dtype}, {'matrix' if floor.matrix else 'vector'} units, {_si(floor.peak_flops, 'FLOP/s')}) "
            f"take {_time(floor.compute_seconds)}. Arithmetic intensity "
            f"{floor.arithmetic_intensity:.3g} FLOP/B; the ridge point is {floor.ridge_point:.3g} FLOP/B.")
