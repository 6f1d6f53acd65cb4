"""The `kerntailor` command line. Each command is a thin shell over a stage's functions.

Errors a user can cause (KerntailorError) become one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from kerntailor.errors import KerntailorError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Tailored Triton kernels for a PyTorch reference and a target GPU.")


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
    dtype: Optional[str] = typer.Option(None, "--dtype", help="cast floating inputs/params: fp32, bf16, fp16"),
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


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("kerntailor: interrupted", err=True)
        sys.exit(130)
