"""The parts of a static HTML page that every kerntailor page shares: the style, numbers that carry their JSON
path, tables, and matplotlib charts as inline SVG.

generate's report.html and bench.html (generate/html.py) and profile's profile.html (profiling/html.py) are built
from these; the module sits below every stage (it imports nothing of kerntailor), so each stage that writes a
page can use it without reaching forward.

Every number a page shows that its JSON document holds goes through `num` (or `us`, `us_field`, `ratio`, `pct`):
an element carrying `data-key` (its path in the document, slashes between keys and list indices, as in a JSON
pointer) and `data-value` (the JSON value as written), which tests/test_html_report.py reads back and compares
with the document. matplotlib (the `report` extra) is imported only inside `svg`, when a chart is drawn.
"""

from __future__ import annotations

import html
import io
import json
from collections.abc import Callable

CSS = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #1b1b1b; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } .num { text-align: right; font-variant-numeric: tabular-nums; }
.label { color: #555; font-size: 12px; } .pass { color: #0a7a2f; font-weight: bold; }
.fail { color: #b00020; font-weight: bold; } .chart svg { max-width: 100%; height: auto; }
.check { display: inline-block; margin: 2px; padding: 1px 6px; border-radius: 3px; background: #e3f3e6; }
.check.failed { background: #f9d6dc; }
"""


# ---- values that carry their key ------------------------------------------------------------------------------

def num(key: str, value, text: str | None = None) -> str:
    """`value` (a number from the document at path `key`) as an element the test can read back."""
    if value is None:
        return "-"
    shown = text if text is not None else _plain(value)
    return (f'<span data-key="{html.escape(key)}" data-value="{html.escape(json.dumps(value))}">'
            f"{html.escape(shown)}</span>")


def _plain(value) -> str:
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    return f"{value:.4g}"


def us(key: str, seconds) -> str:
    """A time held in seconds, shown in microseconds."""
    return "-" if seconds is None else num(key, seconds, f"{seconds * 1e6:.1f} us")


def us_field(key: str, micro) -> str:
    """A time held in microseconds."""
    return "-" if micro is None else num(key, micro, f"{micro:.1f} us")


def ratio(key: str, value) -> str:
    return "-" if value is None else num(key, value, f"{value:.2f}x")


def pct(key: str, value) -> str:
    """A share (0.25) shown as a percentage (25.0%)."""
    return "-" if value is None else num(key, value, f"{value:.1%}")


def esc(text) -> str:
    return html.escape("" if text is None else str(text))


def table(head: list[str], rows: list[list[str]]) -> str:
    """An HTML table; cells are HTML already (escape text with `esc`)."""
    top = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{top}</tr>{body}</table>"


def page(title: str, body: list[str], css: str = "") -> str:
    """The whole page: `body` (HTML) under the shared style and the page's own `css`, if any."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{CSS}{css}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


# ---- charts ---------------------------------------------------------------------------------------------------

def svg(draw: Callable, size: tuple[float, float]) -> str:
    """The figure `draw(ax)` fills, as inline SVG. matplotlib is imported here, only when a page is drawn; a
    Figure without pyplot leaves the caller's backend and figures alone."""
    import matplotlib
    from matplotlib.figure import Figure

    # stable element ids (the same report gives the same page); text as text, in the browser's sans-serif
    with matplotlib.rc_context({"svg.hashsalt": "kerntailor", "svg.fonttype": "none"}):
        fig = Figure(figsize=size)
        ax = fig.subplots()
        draw(ax)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return '<div class="chart">' + text[text.index("<svg"):] + "</div>"
