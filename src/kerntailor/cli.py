"""The `kerntailor` command line. Each command is a thin shell over a stage's functions.

One error path: every mistake a user can make, whether the command line's parser finds it (an unknown choice,
a number out of range, a bad path: cli_options.py) or a stage does (KerntailorError), reaches
`KerntailorGroup.main`, which prints one line `kerntailor: error: ...` on stderr and exits with status 2 (a
KerntailorError's own exit_code), never a traceback. What the commands print and where: cli_output.py.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import typer
from typer.core import TyperGroup

from kerntailor.cli_options import (
    MAX_DRAWS,
    TARGET_METAVAR,
    Device,
    Dtype,
    Part,
    Precision,
    Proposer,
    Strategy,
    check_input_file,
    check_out_dir,
    check_py_file,
    parse_target,
    positive,
    positive_dollars,
    value,
)
from kerntailor.cli_output import (
    is_terminal,
    one_line_warnings,
    print_json,
    print_markdown,
    problem_lines,
    progress_reporter,
    say,
)
from kerntailor.errors import KerntailorError

PRECISION_HELP = ("matrix products: ieee, tf32x3 or tf32 (fp32 operands); fp8-row or fp8-tensor (fp8 operands "
                  "with power-of-two scales per row or per tensor)")
TARGET_HELP = "target GPU, by name or alias (gfx942, sm_90; see `kerntailor targets`), or local"
DTYPE_HELP = "cast floating inputs/params to this dtype"
JSON_HELP = "print the result as one JSON document on stdout (progress and messages go to stderr)"
USAGE_EXIT = 2


def _click_exceptions():
    """The ClickException class of the click that typer runs on (typer >= 0.20 vendors it as typer._click)."""
    return importlib.import_module(typer.BadParameter.__module__).ClickException


def _usage_line(e) -> str:
    """A parser error as one line, naming the command's --help."""
    text = " ".join(e.format_message().split()).replace("Value error, ", "")   # typer's validator's prefix
    ctx = getattr(e, "ctx", None)
    return f"{text} (see `{ctx.command_path} --help`)" if ctx is not None else text


def fail(message: str, code: int = USAGE_EXIT) -> int:
    """The one place a user's mistake is printed: one line on stderr. Returns the exit status."""
    typer.echo(f"kerntailor: error: {' '.join(str(message).split())}", err=True)
    return code


# options whose value may be left out, and what they then mean (click's parser, under Typer, cannot say so)
OPTIONAL_VALUES = {"--ray": "local"}


def optional_values(args: list[str]) -> list[str]:
    """`args` with the implied value after an option of OPTIONAL_VALUES written without one: last on the line
    or followed by another option (`bench suite --ray`, `bench suite --ray --jobs 2`)."""
    out = []
    for i, arg in enumerate(args):
        out.append(arg)
        if arg in OPTIONAL_VALUES and (i + 1 == len(args) or args[i + 1].startswith("-")):
            out.append(OPTIONAL_VALUES[arg])
    return out


class KerntailorGroup(TyperGroup):
    """The command group, run in click's non-standalone mode so that parser errors and KerntailorError from
    the commands both end here, in `fail`."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        click_exception = _click_exceptions()
        args = optional_values(sys.argv[1:] if args is None else list(args))
        try:
            rv = super().main(args=args, prog_name=prog_name or "kerntailor", complete_var=complete_var,
                              standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except KerntailorError as e:
            code = fail(str(e), e.exit_code)
        except click_exception as e:
            if type(e).__name__ == "NoArgsIsHelpError":   # `kerntailor` alone: the help, as --help prints it
                typer.echo(e.ctx.get_help() if getattr(e, "ctx", None) else e.format_message())
                code = 0
            else:
                code = fail(_usage_line(e), USAGE_EXIT)
        except typer.Abort:
            typer.echo("kerntailor: interrupted", err=True)
            code = 130
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(cls=KerntailorGroup, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Tailored Triton kernels for a PyTorch reference and a target GPU.")


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version
    from platform import python_version

    import kerntailor

    parts = []
    for name in ("torch", "triton"):
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name} not installed")
    return f"kerntailor {kerntailor.__version__} ({', '.join(parts)}, python {python_version()})"


def _show_version(shown: bool) -> None:
    if shown:
        typer.echo(_versions())
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", is_eager=True, callback=_show_version,
                                       help="print the versions of kerntailor, torch, triton and python")) -> None:
    """Tailored Triton kernels for a PyTorch reference and a target GPU."""


def _seconds(record) -> bool:
    record.seconds = record.relativeCreated / 1000
    return True


def _log_to_stderr(verbose: int) -> None:
    """kerntailor's loggers (one per module: kerntailor.generate.evaluate, ...) on stderr: INFO with -v, DEBUG with
    -vv."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    # seconds since the process started on every line: -v logs are how a slow run shows where its time went
    handler.setFormatter(logging.Formatter("[%(seconds)7.1f s] %(name)s: %(message)s", defaults={"seconds": 0.0}))
    handler.addFilter(_seconds)
    logger = logging.getLogger("kerntailor")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)


def _target_option(default="mi300x", help: str = TARGET_HELP):
    return typer.Option(default, "--target", "-t", parser=parse_target, metavar=TARGET_METAVAR, help=help)


@app.command()
def targets(json_out: bool = typer.Option(False, "--json", help="print JSON instead of a table")) -> None:
    """List the GPU targets kerntailor knows, with their facts."""
    import json

    from kerntailor.targets.show import show_targets

    if json_out:   # the table's rows under "targets", with the schema version and toolchain every JSON carries
        from kerntailor.generate.report import stamp

        print_json(stamp({"targets": json.loads(show_targets(json_out=True))}))
        return
    typer.echo(show_targets())


@app.command()
def inspect(
    problem: Path = typer.Argument(..., help="problem file (KernelBench format)"),
    target: str = _target_option(),
    dtype: Dtype | None = typer.Option(None, "--dtype", help=DTYPE_HELP),
    variant: str = typer.Option("default", "--variant", help="input variant to inspect"),
    json_out: bool = typer.Option(False, "--json", help="print JSON instead of text"),
) -> None:
    """Show the captured graph, a first fusion plan, FLOPs, bytes and the roofline floor on a target."""
    from kerntailor.inspect import inspect_problem, render_inspection

    report = inspect_problem(problem, target, dtype=value(dtype), variant=variant)
    if json_out:
        from kerntailor.generate.report import stamp

        print_json(stamp(report.to_dict()))
        return
    typer.echo(render_inspection(report))


@app.command()
def profile(
    model: Path = typer.Argument(..., help="model file (KernelBench format: Model, get_inputs, get_init_inputs)"),
    target: str = _target_option(),
    dtype: Dtype | None = typer.Option(None, "--dtype", help=DTYPE_HELP),
    top: int = typer.Option(5, "--top", min=1, help="how many of the hottest groups to show (and write with --out)"),
    out: Path | None = typer.Option(None, "--out", callback=lambda p: None if p is None else check_out_dir(p),
                                    help="write each of the top groups here as a problem file `generate` takes, "
                                         "and the profile as profile.json and profile.html"),
    json_out: bool = typer.Option(False, "--json", help="print the profile as one JSON document"),
    measured: bool | None = typer.Option(None, "--measured/--predicted",
                                         help="eager times measured by torch.profiler on the GPU here, or predicted "
                                              "by the cost model (default: measured where a GPU is present)"),
    steps: int = typer.Option(5, "--steps", min=1, help="forwards timed in measured mode (after one warm-up)"),
) -> None:
    """Where MODEL's time goes on TARGET, per fusion group and module, and what each group could gain.

    Measured (a GPU here): each eager ATen op's device time by torch.profiler, apportioned to the fusion groups;
    PREDICTED (no GPU, or --predicted): eager time (one kernel per ATen op) from the cost model. Floors are the
    target's roofline either way."""
    import torch

    from kerntailor.generate.report import stamp
    from kerntailor.profiling import profile_problem
    from kerntailor.profiling.render import profile_dict, profile_table, written_lines

    if measured is None:
        measured = torch.cuda.is_available()
    report = profile_problem(model, target, dtype=value(dtype), top=top, out_dir=out, measured=measured, steps=steps)
    doc = stamp(profile_dict(report))
    written = _write_profile(doc, out) if out is not None else []
    lines = written_lines(report) + ([f"wrote {' and '.join(map(str, written))}"] if written else [])
    if json_out:
        page = next((str(p) for p in written if p.suffix == ".html"), None)
        print_json({**doc, "profile_json": str(written[0]) if written else None, "profile_html": page})
        for line in lines:
            say(line)
        return
    _print_table(profile_table(report, top))
    for line in lines:
        typer.echo(line)


@app.command()
def optimize(
    model: Path = typer.Argument(..., callback=check_input_file,
                                 help="model file (KernelBench format: Model, get_inputs, get_init_inputs)"),
    target: str = _target_option(),
    dtype: Dtype | None = typer.Option(None, "--dtype", help=DTYPE_HELP),
    top: int = typer.Option(3, "--top", min=1, help="how many of the hottest groups to tailor"),
    budget: float = typer.Option(120.0, "--budget", callback=positive,
                                 help="seconds of search in all, shared among the groups (> 0)"),
    candidates: int = typer.Option(8, "--candidates", min=1, help="most schedules tried per kernel"),
    out: Path = typer.Option(Path("optimized"), "--out", callback=check_out_dir,
                             help="where the problem files, kernels, reports and optimize.json go"),
    no_store: bool = typer.Option(False, "--no-store", help="neither read nor write the result store"),
    price_per_hour: float | None = typer.Option(
        None, "--price-per-hour", callback=positive_dollars,
        help="dollars per GPU-hour for the cost per token (default: the target's in targets/price.py, marked "
             "assumed there)"),
    tokens_per_call: int | None = typer.Option(
        None, "--tokens-per-call", min=1,
        help="tokens one call of the model processes (default: batch x sequence of the first token-id input, "
             "else the first floating input's dims but the last)"),
    save: Path | None = typer.Option(
        None, "--save", callback=check_py_file,
        help="also write the optimized model as this Python file (imports torch, triton and the files it puts "
             "beside it)"),
    graph: bool = typer.Option(True, "--graph/--no-graph",
                               help="swap the hot groups no module holds in graph mode (the model's forward runs the "
                                    "exported graph with their kernels, guarded); --no-graph: module swaps only"),
    json_out: bool = typer.Option(False, "--json", help="print the report as one JSON document"),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True,
                                help="log each phase's seconds as it ends (profile, each group's generate and swap, "
                                     "end to end) and generate's decisions (-vv: every trial)"),
) -> None:
    """MODEL with its hottest modules running generated kernels, each swap verified on the whole model.

    Profiles MODEL on TARGET (predicted ranking), generates a kernel for each of the TOP groups that is one module's
    whole forward (the others in graph mode, or skipped with why), swaps each in and checks the whole model against
    the original on fresh inputs by the referee's tolerance; a swap that fails is undone. Times eager,
    torch.compile and the optimized model end to end on a GPU (also in a CUDA graph), with tokens per second and
    dollars per million tokens. Without a GPU the kernels run under Triton's interpreter and nothing is timed."""
    import json
    import os

    import torch

    from kerntailor.generate.report import place, stamp
    from kerntailor.optimizing import optimize_problem

    if verbose:
        _log_to_stderr(verbose)
    from kerntailor.optimizing.render import cost_table, optimize_dict, optimize_table

    if not torch.cuda.is_available():   # the kernels are loaded in this process: the interpreter runs them
        os.environ.setdefault("TRITON_INTERPRET", "1")
    result = optimize_problem(model, target=target, dtype=value(dtype), top=top, budget=budget, candidates=candidates,
                              out_dir=out, use_store=not no_store, price_per_hour=price_per_hour,
                              tokens_per_call=tokens_per_call, graph=graph)
    doc = stamp(optimize_dict(result.report))
    place(out / "optimize.json", json.dumps(doc, indent=2, default=str))
    written = [out / "optimize.json"] + ([result.save(save)] if save is not None else [])
    if json_out:
        print_json({**doc, "saved": str(save) if save is not None else None})
        say(f"wrote {' and '.join(map(str, written))}")
        return
    _print_table(optimize_table(result.report))
    _print_table(cost_table(result.report))
    typer.echo(f"wrote {' and '.join(map(str, written))}")


def _write_profile(doc: dict, out: Path) -> list[Path]:
    """profile.json and profile.html (the latter only with matplotlib, the `report` extra: generate/html.py's
    write_html says so in one line) in `out`; the paths written."""
    import json

    from kerntailor.generate.html import write_html
    from kerntailor.generate.report import place
    from kerntailor.profiling.html import render_profile_html

    doc = json.loads(json.dumps(doc, default=str))
    place(out / "profile.json", json.dumps(doc, indent=2))
    page = out / "profile.html"
    return [out / "profile.json"] + ([page] if write_html(page, render_profile_html, doc) else [])


@app.command()
def verify(
    problem: Path = typer.Argument(..., help="problem file (KernelBench format)"),
    candidate: Path = typer.Argument(..., help="candidate file defining ModelNew (same constructor as Model)"),
    dtype: Dtype | None = typer.Option(None, "--dtype", help=DTYPE_HELP),
    allow_library: bool = typer.Option(False, "--allow-library", help="allow PyTorch compute ops in forward"),
    tf32: bool = typer.Option(False, "--tf32", help="judge fp32 outputs by the tf32 tolerance row"),
    time_it: bool = typer.Option(False, "--time", help="time vs eager, torch.compile and the roofline floor (GPU)"),
    json_out: bool = typer.Option(False, "--json", help="print the verdict as JSON"),
    timeout: float = typer.Option(300.0, "--timeout", callback=positive,
                                  help="seconds before a hanging candidate fails (> 0)"),
    device: Device = typer.Option(Device.auto, "--device", help="auto: the GPU if present, else the CPU interpreter"),
    draws: int = typer.Option(3, "--draws", min=3, max=MAX_DRAWS, help="fresh input draws per variant"),
    seed: int = typer.Option(0, "--seed", help="seed of the draws"),
    variant: list[str] | None = typer.Option(None, "--variant", help="only these variants (repeatable)"),
    max_autotune: bool = typer.Option(False, "--max-autotune", help="torch.compile baseline in max-autotune mode"),
    precision: Precision = typer.Option(Precision.ieee, "--precision",
                                        help="the policy the candidate computes in (fp8: judged against a "
                                             "reference whose products are quantized the same way)"),
) -> None:
    """Judge a candidate kernel against the problem's reference: exit 0 pass, 1 a failed check, 2 a bad file."""
    from kerntailor.generate.report import stamp
    from kerntailor.problem import load_problem
    from kerntailor.verify import VerifySettings, render_verdict, verify_candidate

    spec = load_problem(problem, dtype=value(dtype))
    settings = VerifySettings(allow_library=allow_library, tf32=tf32 or precision is Precision.tf32, time=time_it,
                              timeout_s=timeout, precision=value(precision), draws=draws, seed=seed,
                              device=value(device), variants=tuple(variant) if variant else None,
                              compile_mode="max-autotune" if max_autotune else "default")
    verdict = verify_candidate(spec, candidate, settings)
    if json_out:
        print_json(stamp(verdict.to_dict()))
    else:
        typer.echo(render_verdict(verdict))
    raise typer.Exit(0 if verdict.passed else 1)


@app.command()
def generate(
    problem: Path = typer.Argument(..., help="problem file (KernelBench format)"),
    target: str = _target_option(),
    dtype: Dtype | None = typer.Option(None, "--dtype", help=DTYPE_HELP),
    budget: float = typer.Option(120.0, "--budget", callback=positive,
                                 help="search seconds, split over the kernels (with --proposer all: half for "
                                      "the template's search, half for the LLM)"),
    candidates: int = typer.Option(48, "--candidates", min=1, help="most schedules tried per kernel"),
    out: Path = typer.Option(Path("out"), "--out", callback=check_out_dir,
                             help="directory for kernel.py and report.{json,md}"),
    force: bool = typer.Option(False, "--force", help="overwrite --out even where it holds another problem's "
                                                      "kernel"),
    strategy: Strategy = typer.Option(Strategy.evolutionary, "--strategy", help="search strategy"),
    no_store: bool = typer.Option(False, "--no-store", help="neither read nor write the result store (a stored "
                                                            "result is reused only when its search was at least "
                                                            "as large as this one's)"),
    precision: Precision = typer.Option(Precision.ieee, "--precision", help=PRECISION_HELP),
    proposer: Proposer = typer.Option(Proposer.template, "--proposer",
                                      help="template (our codegen), llm (an OpenAI-compatible endpoint, see "
                                           "README) or all"),
    seed_kernel: Path | None = typer.Option(None, "--seed-kernel", callback=check_input_file,
                                            help="your own kernel.py: judged, and a contender (the LLM's "
                                                 "starting point)"),
    llm_attempts: int = typer.Option(2, "--llm-attempts", min=1, help="independent LLM conversations"),
    llm_turns: int = typer.Option(3, "--llm-turns", min=1, help="requests per LLM conversation (first + "
                                                                "refinements)"),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True,
                                help="say why candidates are dropped and what was decided (-vv: every trial)"),
) -> None:
    """Generate a verified Triton kernel for PROBLEM on TARGET: kernel.py and a report."""
    if verbose:
        _log_to_stderr(verbose)
    from kerntailor.generate import GenerateSettings
    from kerntailor.generate import generate as run_generate
    from kerntailor.generate.report import check_out_owner, render_markdown, stamp

    check_out_owner(out, problem, force)
    settings = GenerateSettings(target=target, dtype=value(dtype), budget_s=budget, max_candidates=candidates,
                                out_dir=out, strategy=value(strategy), use_store=not no_store,
                                precision=value(precision), proposer=value(proposer), seed_kernel=seed_kernel,
                                llm_attempts=llm_attempts, llm_turns=llm_turns)
    with progress_reporter() as progress:
        result = run_generate(problem, settings, progress)
    report_md = result.report_path.with_suffix(".md")
    report_html = result.report_path.with_suffix(".html")   # written where matplotlib is installed (generate/html.py)
    written = [result.kernel_path, result.report_path, report_md] + ([report_html] if report_html.exists() else [])
    last = f"wrote {', '.join(map(str, written[:-1]))} and {written[-1]}"
    if json_out:
        say(f"{result.status}: {result.message}")
        say(last)
        print_json(stamp({"status": result.status, "message": result.message, "problem": result.problem,
                          "target": result.target, "mode": result.mode, "kernel": str(result.kernel_path),
                          "report_json": str(result.report_path), "report_md": str(report_md),
                          "report_html": str(report_html) if report_html.exists() else None,
                          "report": result.report}))
        return
    if result.report:
        print_markdown(render_markdown(result.report))
    typer.echo(f"{result.status}: {result.message}")
    typer.echo(last)


@app.command()
def bench(
    suite: Path = typer.Argument(..., help="directory of problem files (searched recursively)"),
    target: str = _target_option(),
    dtype: Dtype | None = typer.Option(None, "--dtype", help=DTYPE_HELP),
    budget: float = typer.Option(60.0, "--budget", callback=positive, help="search seconds per problem"),
    candidates: int = typer.Option(16, "--candidates", min=1, help="most schedules tried per kernel"),
    out: Path = typer.Option(Path("out/bench"), "--out", callback=check_out_dir,
                             help="directory for bench.{json,md} and each kernel"),
    force: bool = typer.Option(False, "--force", help="overwrite --out even where it holds another suite's bench"),
    only: list[str] | None = typer.Option(None, "--only", help="only the problems with this name (relu), path "
                                                               "under the suite (level1/relu) or glob ('*relu*', "
                                                               "'level2/*'); repeatable"),
    part: Part = typer.Option(Part.all, "--part", help="memory-bound: no matmul/conv/attention; gemm: a matmul "
                                                       "and nothing else compute-bound"),
    strategy: Strategy = typer.Option(Strategy.evolutionary, "--strategy", help="search strategy"),
    precision: Precision = typer.Option(Precision.ieee, "--precision", help=PRECISION_HELP),
    proposer: Proposer = typer.Option(Proposer.template, "--proposer", help="template, llm or all (see generate)"),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="problems at once, spread over the GPUs (timing is "
                                                            "serialized per GPU)"),
    ray: str | None = typer.Option(None, "--ray", metavar="[ADDRESS]",
                                   help="run the problems as tasks on a Ray cluster: its address, auto (the "
                                        "cluster this machine belongs to), or nothing (a Ray started here); one "
                                        "GPU or CPU per task, one writer of --out and the store; needs the ray "
                                        "extra"),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Generate over a whole suite; report correctness, fast_p, geomean speedups and roofline efficiency."""
    from kerntailor.generate import GenerateSettings
    from kerntailor.generate.bench import bench as run_bench
    from kerntailor.generate.bench import check_bench_out, render_bench

    check_bench_out(out, suite, force)
    settings = GenerateSettings(target=target, dtype=value(dtype), budget_s=budget, max_candidates=candidates,
                                out_dir=out, strategy=value(strategy), precision=value(precision),
                                proposer=value(proposer))
    result = run_bench(suite, settings, only, part=value(part), jobs=jobs, on_problem=problem_lines(), ray=ray)
    last = f"wrote {out / 'bench.json'} and {out / 'bench.md'}"
    if json_out:
        say(last)
        print_json(result)
        return
    print_markdown(render_bench(result))
    typer.echo(last)


@app.command()
def costmodel(
    target: str = _target_option(..., help="the target whose measurements to learn from"),
    save: bool = typer.Option(False, "--save", help="fit on every row and save the model for generate's ranking"),
    folds: int = typer.Option(5, "--folds", min=2, help="held-back folds, split by problem"),
    json_out: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
) -> None:
    """Train the learned cost model on the store's measurements for TARGET; report its ranking quality on
    held-back problems beside the analytical model's (and, with --save, keep it for `generate`)."""
    from kerntailor.costmodel.persist import quality_report, rows_from_store, save_model
    from kerntailor.generate.report import stamp
    from kerntailor.store import Store
    from kerntailor.targets import resolve_target

    t = resolve_target(target)
    from kerntailor.costmodel.learned import LearnedModel

    rows = rows_from_store(Store(), t.name)
    try:
        report = quality_report(rows, t, folds=folds)
    except ValueError as e:
        raise KerntailorError(f"not enough measurements of {t.name} in the store ({len(rows)} rows): {e}; "
                              f"run `kerntailor generate/bench --target {t.name}` on that GPU first") from None
    if save:
        report["saved"] = str(save_model(LearnedModel(t).fit(rows)))
    if json_out:
        print_json(stamp(report))
        return
    from rich.table import Table

    title = (f"{report['rows']} measured schedules of {report['kernels']} kernels on {report['target']}; "
             f"{report['folds']} folds, {report['split']}")
    table = Table(title=title, title_justify="left")
    for name in ("model", "top-1", "top-5", "Spearman"):
        table.add_column(name, justify="left" if name == "model" else "right")
    for m in report["models"]:
        table.add_row(m["model"], f"{m['top1_hit_rate']:.2f}", f"{m['top5_hit_rate']:.2f}", f"{m['spearman']:.2f}")
    _print_table(table)
    if report.get("saved"):
        typer.echo(f"saved {report['saved']}: generate ranks schedules on {report['target']} with it")


def _print_table(table) -> None:
    from rich.console import Console

    Console(force_terminal=is_terminal(sys.stdout), width=None if is_terminal(sys.stdout) else 120).print(table)


@app.command()
def recheck(json_out: bool = typer.Option(False, "--json", help=JSON_HELP)) -> None:
    """Re-verify (and on the target GPU re-time) every stored winner on the current toolchain."""
    from dataclasses import asdict

    from kerntailor.generate.recheck import recheck as run_recheck
    from kerntailor.generate.report import stamp

    rows = run_recheck(on_winner=problem_lines())
    regressions = any(r.regression for r in rows)
    if json_out:
        print_json(stamp({"rows": [asdict(r) for r in rows], "regressions": sum(r.regression for r in rows)}))
    else:
        if not rows:
            typer.echo("nothing to recheck: every stored winner is from the current toolchain")
        for r in rows:
            typer.echo(f"{'REGRESSION' if r.regression else 'ok':<10} {r.problem} on {r.target}: {r.reason}")
    if regressions:
        raise typer.Exit(1)


def main() -> None:
    one_line_warnings()
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("kerntailor: interrupted", err=True)
        sys.exit(130)
