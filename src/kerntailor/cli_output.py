"""What the commands print, and where.

- Results go to stdout: Markdown rendered by rich when stdout is a terminal, the Markdown text itself when it
  is not (a file or a pipe gets what report.md holds); with --json, one JSON document and nothing else.
- Progress goes to stderr: a live bar when stderr is a terminal; otherwise one plain line per stage (and per
  problem in bench), flushed at once, so a pipe or a CI log shows it as it happens.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import typer


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):   # closed or replaced streams (CliRunner's) are not terminals
        return False


def print_markdown(text: str) -> None:
    """Markdown on stdout: rendered by rich on a terminal, as text elsewhere."""
    if is_terminal(sys.stdout):
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    else:
        typer.echo(text.rstrip("\n"))


def print_json(document) -> None:
    typer.echo(json.dumps(document, indent=2, default=str))


def say(line: str) -> None:
    """One line of human text on stderr, flushed (what --json moves off stdout)."""
    print(line, file=sys.stderr, flush=True)


def one_line_warnings() -> None:
    """Each Python warning (raised by the user's problem file, or by torch or triton on its behalf) as one labelled
    line on stderr: `warning (UserWarning at torch/functional.py:504): torch.meshgrid: ...`, not Python's two
    lines that echo the source line and read like an error (30_SwinTransformerV2's meshgrid, on `inspect`). Python's
    filters still decide which warnings show and how often (once per place, by default)."""
    import warnings
    from pathlib import Path

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).split(" (Triggered internally at ")[0].strip()
        first = text.splitlines()[0] if text else ""
        path = Path(str(filename))
        say(f"warning ({category.__name__} at {path.parent.name}/{path.name}:{lineno}): {first[:300]}")
    warnings.showwarning = show


class StageLines:
    """Progress as plain lines on stderr: one when a stage starts, with the count it ended on when it ends
    (a search of 48 schedules is two lines, not 48). Used when stderr is not a terminal."""

    def __init__(self, prefix: str = ""):
        self.prefix = prefix
        self.stage: str | None = None
        self.last = (0, 0, None)
        self.started = time.monotonic()

    def __call__(self, stage: str, done: int, total: int, best: float | None, detail: str | None = None) -> None:
        if stage != self.stage:
            self._close()
            self.stage = stage
            say(f"{self.prefix}{stage} ...")
        self.last = (done, total, best)

    def _close(self) -> None:
        if self.stage is None:
            return
        done, total, best = self.last
        counts = f" {done}/{total}" if total and total > 1 else ""
        label = "" if best is None else f", best {best * 1e6:.1f} us"
        say(f"{self.prefix}{self.stage}{counts} done ({time.monotonic() - self.started:.0f} s{label})")

    def close(self) -> None:
        self._close()
        self.stage = None


class _Bar:
    """rich's live bar on stderr (transient: it leaves no trace once the command prints its result)."""

    def __init__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[best]}"), TimeElapsedColumn(), transient=True,
                            console=Console(stderr=True))
        self.task = None

    def __enter__(self):
        self.bar.__enter__()
        self.task = self.bar.add_task("loading", total=None, best="")
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def __call__(self, stage: str, done: int, total: int, best: float | None, detail: str | None = None) -> None:
        label = "" if best is None else f"best {best * 1e6:.1f} us"
        self.bar.update(self.task, description=f"{stage}: {detail}" if detail else stage, completed=done,
                        total=total or None, best=label)


class _Lines:
    def __init__(self):
        self.lines = StageLines()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lines.close()
        return False

    def __call__(self, *args) -> None:
        self.lines(*args)


def progress_reporter(quiet: bool = False):
    """A context manager that yields generate's progress callback: a live bar on a terminal, plain stage lines
    elsewhere, nothing when `quiet`."""
    import contextlib

    if quiet:
        return contextlib.nullcontext(lambda *a: None)
    return _Bar() if is_terminal(sys.stderr) else _Lines()


def problem_lines() -> Callable[[str, int, int], None]:
    """bench's and recheck's per-problem callback: `[3/40] relu` on stderr, flushed."""
    return lambda name, i, n: say(f"[{i + 1}/{n}] {name}")
