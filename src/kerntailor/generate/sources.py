"""Candidates from other sources than the template codegen: a user's kernel (`--seed-kernel FILE`) and the
LLM proposer (`--proposer llm|all`). Each is judged by the same referee (and, on the target GPU, the same
stopwatch) as a generated module; this module picks the winner among them and the template's result.

Who wins:
- measured (the target is this machine's GPU): the fastest passing kernel, and only if it beats the better
  of eager and torch.compile; otherwise the library path;
- predicted (no target GPU): a passing template kernel first (it has a predicted time and ISA facts for the
  target; an LLM or user kernel has no predicted time to compare), else the first passing other kernel,
  else the library path.

With `--proposer all` the LLM starts from the template's kernel (as a seed it refines), or from the user's
seed kernel when one is given.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from kerntailor.errors import KerntailorError, ProposerError
from kerntailor.generate.report import emit_library, place, write_report

log = logging.getLogger(__name__)

PROPOSERS = ("template", "llm", "all")
LLM_SHARE_UNDER_ALL = 0.5   # with --proposer all, the LLM's share of --budget; the template's search has the rest


def budget_shares(settings) -> tuple[float, float]:
    """(the template search's seconds, the LLM proposer's seconds) of settings.budget_s: all of it to the one
    proposer asked for, split LLM_SHARE_UNDER_ALL under `all`. The LLM's share bounds its requests, retries and
    waits included (propose/llm.py): an endpoint that fails or hangs costs at most that."""
    if settings.proposer == "all":
        llm = settings.budget_s * LLM_SHARE_UNDER_ALL
        return settings.budget_s - llm, llm
    return (0.0, settings.budget_s) if settings.proposer == "llm" else (settings.budget_s, 0.0)


def check_proposer(settings) -> None:
    """ProposerError (one line), before any work, when the LLM proposer is asked for but cannot run: the `llm`
    extra or an endpoint variable is missing."""
    if settings.proposer in ("llm", "all"):
        from kerntailor.propose.llm import LLMConfig, require_openai

        require_openai()
        LLMConfig.from_env()


@dataclass(frozen=True)
class Contender:
    source: str                 # "template" | "seed" | "llm"
    code: str
    verdict: object | None      # the referee's Verdict (or its dict, for a template result served from the store)
    median_us: float | None     # measured, on the target GPU
    candidate_id: int | None = None


def _timings(verdict) -> dict[str, float]:
    data = verdict if isinstance(verdict, dict) or verdict is None else verdict.to_dict()
    return {t["name"]: t["median_s"] * 1e6 for t in ((data or {}).get("timing") or {}).get("timings", [])}


def _template_contender(result) -> Contender | None:
    if result is None or result.status not in ("generated", "cached"):
        return None
    verdict = result.verdict if result.verdict is not None else result.report.get("verdict")
    return Contender("template", result.kernel_path.read_text(), verdict, _timings(verdict).get("candidate"))


def _proposer_settings(settings, out: Path, seed: Path | None):
    from kerntailor.propose import ProposerSettings

    return ProposerSettings(target=settings.target, dtype=settings.dtype, attempts=settings.llm_attempts,
                            turns=settings.llm_turns, out_dir=out, seed_kernel=seed, use_store=settings.use_store,
                            store_path=settings.store_path, max_seconds=budget_shares(settings)[1])


def _others(problem_path, settings, template: Contender | None, out: Path, progress) -> tuple[list[Contender], dict]:
    """Run the seed kernel and/or the LLM proposer; their passing kernels, and what to report about them."""
    from kerntailor.propose import run_proposer, seed_kernel

    seed = Path(settings.seed_kernel) if settings.seed_kernel else None
    if seed is not None and not seed.is_file():
        raise KerntailorError(f"{seed}: no such seed kernel file")
    if settings.proposer in ("llm", "all"):
        if seed is None and template is not None:  # the LLM refines the template's kernel
            seed = out / "template_kernel.py"
            seed.write_text(template.code)
        try:
            r = run_proposer(problem_path, _proposer_settings(settings, out, seed), progress=progress)
        except ProposerError as e:
            if template is None:   # --proposer llm: nothing else was asked for; the error is the answer
                raise
            # --proposer all: the endpoint failed before any reply; the template's kernel stands
            return [], {"proposer": "llm", "passed": False, "error": str(e)}
        info = {"proposer": "llm", "passed": r.passed, "stopped": r.stopped, "turns": len(r.turns),
                "tokens": r.tokens, "seconds": round(r.seconds, 1), "model": r.model, "store_run": r.run_id}
        if not r.passed:
            return [], info
        best_turn = next((t for t in r.turns if t.candidate_id == r.candidate_id and t.passed), None)
        origin = "seed" if best_turn is not None and best_turn.attempt == 0 else "llm"
        if origin == "seed" and template is not None and seed == out / "template_kernel.py":
            return [], info | {"best": "the template kernel (the LLM did not beat it)"}
        return [Contender(origin, r.source, r.verdict, r.median_us, r.candidate_id)], info
    turn = seed_kernel(problem_path, seed, _proposer_settings(settings, out, seed))
    info = {"seed_kernel": str(seed), "passed": turn.passed, "error": turn.error}
    if not turn.passed:
        log.info("the seed kernel %s dropped: %s", seed, turn.error)
    return ([Contender("seed", turn.code or seed.read_text(), turn.verdict, turn.median_us, turn.candidate_id)]
            if turn.passed else []), info


def _pick(contenders: list[Contender], measured: bool) -> tuple[Contender | None, str]:
    if not contenders:
        return None, "no kernel passed the referee"
    if not measured:
        return contenders[0], ""  # template first (it has a predicted time); else the first that passed
    timed = [c for c in contenders if c.median_us is not None]
    if not timed:
        return None, "no passing kernel could be timed"
    best = min(timed, key=lambda c: c.median_us)
    for c in timed:
        if c is not best:
            log.info("the %s kernel dropped: slower than the %s kernel (%.1f us vs %.1f us)", c.source, best.source,
                     c.median_us, best.median_us)
    baselines = [v for k, v in _timings(best.verdict).items() if k != "candidate" and v]
    if baselines and best.median_us > min(baselines):
        return None, (f"the best kernel ({best.source}, {best.median_us:.1f} us) is slower than the library "
                      f"({min(baselines):.1f} us)")
    return best, ""


def combine(problem_path, settings, template, progress, *, measured: bool):
    """The final GenerateResult when a seed kernel or the LLM proposer takes part (`template` is the template
    pipeline's result, or None with --proposer llm)."""
    from kerntailor.generate.pipeline import GenerateResult
    from kerntailor.problem import load_problem
    from kerntailor.targets import resolve_target

    out = Path(settings.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = resolve_target(settings.target)
    problem = load_problem(problem_path, dtype=settings.dtype)
    mode = "measured" if measured else "predicted"
    first = _template_contender(template)
    others, info = _others(problem_path, settings, first, out, progress)
    contenders = ([first] if first else []) + others
    best, why = _pick(contenders, measured)
    report = dict(template.report) if template is not None else {
        "problem": problem.name, "target": {"name": target.name, "arch": target.arch}, "mode": mode}
    report["sources"] = {"template": template.status if template is not None else "not run", **info,
                         "contenders": [{"source": c.source, "median_us": c.median_us} for c in contenders]}
    kernel_path, report_path = out / "kernel.py", out / "report.json"
    if report.get("baselines") and (best is None or best.source != "template"):
        # the predicted speed-ups were the template kernel's; another winner (or the library) has none of its own
        report["baselines"] = {k: v for k, v in report["baselines"].items()
                               if k not in ("kernel_us", "speedup_vs_eager", "speedup_vs_compile")}
    if best is None:
        reason = why if template is None or template.status != "library" else template.report.get("reason", why)
        report |= {"status": "library", "reason": reason}
        library_verdict = emit_library(problem, reason, out)   # kernel.py only if it passes
        if not library_verdict.passed:
            report["library_verdict"] = library_verdict.to_dict()
        write_report(report, out)
        return GenerateResult(problem.name, target.name, mode, "library", f"library path emitted: {reason}",
                              kernel_path, report_path, None, template.groups if template else (), report)
    if best.source == "template":
        write_report(report | {"source": "template"}, out)
        return replace(template, report=report | {"source": "template"})
    place(kernel_path, best.code)   # the code the referee passed (as a seed or LLM turn)
    verdict = best.verdict
    report |= {"status": "generated", "source": best.source,
               "verdict": verdict.to_dict() if hasattr(verdict, "to_dict") else verdict}
    report.pop("reason", None)
    write_report(report, out)
    if settings.use_store and best.candidate_id is not None:
        from kerntailor.store import Store

        store = Store(settings.store_path)
        store.record_winner(best.candidate_id, report=report, median_us=best.median_us,
                            label="measured" if measured and best.median_us is not None else "predicted")
    label = {"seed": "the seed kernel", "llm": "an LLM-written kernel"}[best.source]
    return GenerateResult(problem.name, target.name, mode, "generated",
                          f"{label} won; referee: passed" + (f", {best.median_us:.1f} us" if best.median_us else ""),
                          kernel_path, report_path, verdict if hasattr(verdict, "passed") else None,
                          template.groups if template else (), report)


__all__ = ["PROPOSERS", "Contender", "budget_shares", "check_proposer", "combine"]
