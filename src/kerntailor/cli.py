"""The `kerntailor` command line. Each command is a thin shell over a stage's functions.

Errors a user can cause (KerntailorError) become one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from kerntailor.errors import KerntailorError

PRECISION_HELP = ("matrix products: ieee, tf32x3 or tf32 (fp32 operands); fp8-row or fp8-tensor (fp8 operands "
                  "with power-of-two scales per row or per tensor)")

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Tailored Triton kernels for a PyTorch reference and a target GPU.")


def _log_to_stderr(verbose: int) -> None:
    """kerntailor's loggers (kerntailor.search, kerntailor.generate, ...) on stderr: INFO with -v, DEBUG with -vv."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logger = logging.getLogger("kerntailor")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)


def _fail(exc: KerntailorError) -> None:
    typer.echo(f"kerntailor: error: {exc}", err=True)
    raise typer.Exit(exc.exit_code)


@app.command()
def targets(json_out: bool = typer.Option(False, "--json", help="print JSON instead of a table")) -> None:
    """List the GPU targets kerntailor knows, with their facts."""
    from kerntailor.targets.show import show_targets

    try:
        typer.echo(show_targets(json_out=json_out))
    except KerntailorError as e:
        _fail(e)


@app.command()
def inspect(
    problem: Path = typer.Argument(..., help="problem file (KernelBench format)"),
    target: str = typer.Option("mi300x", "--target", "-t", help="target GPU (see `kerntailor targets`)"),
    dtype: str | None = typer.Option(None, "--dtype", help="cast floating inputs/params: fp32, bf16, fp16"),
    variant: str = typer.Option("default", "--variant", help="input variant to inspect"),
    json_out: bool = typer.Option(False, "--json", help="print JSON instead of text"),
) -> None:
    """Show the captured graph, a first fusion plan, FLOPs, bytes and the roofline floor on a target."""
    from kerntailor.inspect import inspect_problem, render_inspection

    try:
        report = inspect_problem(problem, target, dtype=dtype, variant=variant)
        typer.echo(render_inspection(report, json_out=json_out))
    except KerntailorError as e:
        _fail(e)


@app.command()
def verify(
    problem: Path = typer.Argument(..., help="problem file (KernelBench format)"),
    candidate: Path = typer.Argument(..., help="candidate file defining ModelNew (same constructor as Model)"),
    dtype: str | None = typer.Option(None, "--dtype", help="cast floating inputs/params: fp32, bf16, fp16"),
    allow_library: bool = typer.Option(False, "--allow-library", help="allow PyTorch compute ops in forward"),
    tf32: bool = typer.Option(False, "--tf32", help="judge fp32 outputs by the tf32 tolerance row"),
    time_it: bool = typer.Option(False, "--time", help="time vs eager, torch.compile and the roofline floor (GPU)"),
    json_out: bool = typer.Option(False, "--json", help="print the verdict as JSON"),
    timeout: float = typer.Option(300.0, "--timeout", help="seconds before a hanging candidate fails"),
    device: str = typer.Option("auto", "--device", help="auto (GPU if present, else CPU interpreter), cuda, cpu"),
    draws: int = typer.Option(3, "--draws", help="fresh input draws per variant (at least 3)"),
    seed: int = typer.Option(0, "--seed", help="seed of the draws"),
    variant: list[str] | None = typer.Option(None, "--variant", help="only these variants (repeatable)"),
    max_autotune: bool = typer.Option(False, "--max-autotune", help="torch.compile baseline in max-autotune mode"),
    precision: str = typer.Option("ieee", "--precision",
                                  help="the policy the candidate computes in: ieee, tf32x3, tf32, fp8-row, fp8-tensor "
                                       "(fp8: judged against a reference whose products are quantized the same way)"),
) -> None:
    """Judge a candidate kernel against the problem's reference: exit 0 pass, 1 a failed check, 2 a bad file."""
    import json

    from kerntailor.precision import PRECISIONS
    from kerntailor.problem import load_problem
    from kerntailor.verify import VerifySettings, render_verdict, verify_candidate

    try:
        if precision not in PRECISIONS:
            raise KerntailorError(f"unknown precision {precision!r}: choose one of {', '.join(PRECISIONS)}")
        spec = load_problem(problem, dtype=dtype)
        settings = VerifySettings(allow_library=allow_library, tf32=tf32 or precision == "tf32", time=time_it,
                                  timeout_s=timeout, precision=precision, draws=draws, seed=seed, device=device,
                                  variants=tuple(variant) if variant else None,
                                  compile_mode="max-autotune" if max_autotune else "default")
        verdict = verify_candidate(spec, candidate, settings)
    except KerntailorError as e:
        _fail(e)
    typer.echo(json.dumps(verdict.to_dict(), indent=2, default=str) if json_out else render_verdict(verdict))
    raise typer.Exit(0 if verdict.passed else 1)


@app.command()
def generate(
    problem: Path = typer.Argument(..., help="problem file (KernelBench format)"),
    target: str = typer.Option("mi300x", "--target", "-t", help="target GPU (see `kerntailor targets`)"),
    dtype: str | None = typer.Option(None, "--dtype", help="cast floating inputs/params: fp32, bf16, fp16"),
    budget: float = typer.Option(120.0, "--budget", help="search seconds, split over the kernels"),
    candidates: int = typer.Option(48, "--candidates", help="most schedules tried per kernel"),
    out: Path = typer.Option(Path("out"), "--out", help="directory for kernel.py and report.{json,md}"),
    strategy: str = typer.Option("evolutionary", "--strategy", help="exhaustive, random or evolutionary"),
    no_store: bool = typer.Option(False, "--no-store", help="neither read nor write the result store"),
    precision: str = typer.Option("ieee", "--precision", help=PRECISION_HELP),
    proposer: str = typer.Option("template", "--proposer", help="template (our codegen), llm (an OpenAI-compatible "
                                 "endpoint, see README) or all"),
    seed_kernel: Path | None = typer.Option(None, "--seed-kernel", help="your own kernel.py: judged, and a "
                                               "contender (the LLM's starting point)"),
    llm_attempts: int = typer.Option(2, "--llm-attempts", help="independent LLM conversations"),
    llm_turns: int = typer.Option(3, "--llm-turns", help="requests per LLM conversation (first + refinements)"),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True,
                                help="say why candidates are dropped and what was decided (-vv: every trial)"),
) -> None:
    """Generate a verified Triton kernel for PROBLEM on TARGET: kernel.py and a report."""
    if verbose:
        _log_to_stderr(verbose)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kerntailor.generate import GenerateSettings
    from kerntailor.generate import generate as run_generate

    try:
        settings = GenerateSettings(target=target, dtype=dtype, budget_s=budget, max_candidates=candidates,
                                    out_dir=out, strategy=strategy, use_store=not no_store, precision=precision,
                                    proposer=proposer, seed_kernel=seed_kernel, llm_attempts=llm_attempts,
                                    llm_turns=llm_turns)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[best]}"), TimeElapsedColumn(), transient=True,
                      console=None) as bar:
            task = bar.add_task("loading", total=None, best="")

            def progress(stage: str, done: int, total: int, best: float | None) -> None:
                label = "" if best is None else f"best {best * 1e6:.1f} us"
                bar.update(task, description=stage, completed=done, total=total or None, best=label)

            result = run_generate(problem, settings, progress)
    except KerntailorError as e:
        _fail(e)
    from kerntailor.generate.report import render_markdown

    typer.echo(render_markdown(result.report) if result.report else "")
    typer.echo(f"{result.status}: {result.message}")
    typer.echo(f"wrote {result.kernel_path} and {result.report_path}")


@app.command()
def bench(
    suite: Path = typer.Argument(..., help="directory of problem files (searched recursively)"),
    target: str = typer.Option("mi300x", "--target", "-t", help="target GPU (see `kerntailor targets`)"),
    dtype: str | None = typer.Option(None, "--dtype", help="cast floating inputs/params: fp32, bf16, fp16"),
    budget: float = typer.Option(60.0, "--budget", help="search seconds per problem"),
    candidates: int = typer.Option(16, "--candidates", help="most schedules tried per kernel"),
    out: Path = typer.Option(Path("out/bench"), "--out", help="directory for bench.{json,md} and each kernel"),
    only: list[str] | None = typer.Option(None, "--only", help="only problems whose path contains this"),
    part: str = typer.Option("all", "--part", help="all, memory-bound (no matmul/conv/attention), or gemm"),
    strategy: str = typer.Option("evolutionary", "--strategy", help="exhaustive, random or evolutionary"),
    precision: str = typer.Option("ieee", "--precision", help=PRECISION_HELP),
    proposer: str = typer.Option("template", "--proposer", help="template, llm or all (see generate)"),
    jobs: int = typer.Option(1, "--jobs", "-j", help="problems at once, spread over the GPUs (timing is serialized "
                                                     "per GPU)"),
) -> None:
    """Generate over a whole suite; report correctness, fast_p, geomean speedups and roofline efficiency."""
    from kerntailor.generate import GenerateSettings
    from kerntailor.generate.bench import bench as run_bench
    from kerntailor.generate.bench import render_bench

    try:
        settings = GenerateSettings(target=target, dtype=dtype, budget_s=budget, max_candidates=candidates,
                                    out_dir=out, strategy=strategy, precision=precision, proposer=proposer)
        result = run_bench(suite, settings, only, part=part, jobs=jobs,
                           on_problem=lambda name, i, n: typer.echo(f"[{i + 1}/{n}] {name}", err=True))
    except KerntailorError as e:
        _fail(e)
    typer.echo(render_bench(result))
    typer.echo(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")


@app.command()
def costmodel(
    target: str = typer.Option(..., "--target", "-t", help="the target whose measurements to learn from"),
    save: bool = typer.Option(False, "--save", help="fit on every row and save the model for generate's ranking"),
    folds: int = typer.Option(5, "--folds", help="held-back folds, split by problem"),
    json_out: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
) -> None:
    """Train the learned cost model on the store's measurements for TARGET; report its ranking quality on
    held-back problems beside the analytical model's (and, with --save, keep it for `generate`)."""
    import json

    from kerntailor.costmodel.persist import quality_report, rows_from_store, save_model
    from kerntailor.store import Store
    from kerntailor.targets import get_target

    try:
        t = get_target(target)
        from kerntailor.costmodel.learned import LearnedModel

        rows = rows_from_store(Store(), t.name)
        try:
            report = quality_report(rows, t, folds=folds)
        except ValueError as e:
            raise KerntailorError(f"not enough measurements of {t.name} in the store ({len(rows)} rows): {e}; "
                                  f"run `kerntailor generate/bench --target {t.name}` on that GPU first") from None
        if save:
            report["saved"] = str(save_model(LearnedModel(t).fit(rows)))
    except KerntailorError as e:
        _fail(e)
    if json_out:
        typer.echo(json.dumps(report, indent=2))
        return
    typer.echo(f"{report['rows']} measured schedules of {report['kernels']} kernels on {report['target']}; "
               f"{report['folds']} folds, {report['split']}")
    typer.echo(f"{'model':<12}{'top-1':>8}{'top-5':>8}{'Spearman':>10}")
    for m in report["models"]:
        typer.echo(f"{m['model']:<12}{m['top1_hit_rate']:>8.2f}{m['top5_hit_rate']:>8.2f}{m['spearman']:>10.2f}")
    if report.get("saved"):
        typer.echo(f"saved {report['saved']}: generate ranks schedules on {report['target']} with it")


@app.command()
def recheck() -> None:
    """Re-verify (and on the target GPU re-time) every stored winner on the current toolchain."""
    from kerntailor.generate.recheck import recheck as run_recheck

    try:
        rows = run_recheck(on_winner=lambda name, i, n: typer.echo(f"[{i + 1}/{n}] {name}", err=True))
    except KerntailorError as e:
        _fail(e)
    if not rows:
        typer.echo("nothing to recheck: every stored winner is from the current toolchain")
    for r in rows:
        typer.echo(f"{'REGRESSION' if r.regression else 'ok':<10} {r.problem} on {r.target}: {r.reason}")
    if any(r.regression for r in rows):
        raise typer.Exit(1)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("kerntailor: interrupted", err=True)
        sys.exit(130)
