"""profile.html beside profile.json (`kerntailor profile --out DIR`): where a model's time goes, as one static page.

What a person opens in a browser, from a file, with no server and no script: the label of every number on the
page (*predicted (target, model)*, or *measured (GPU)* once measured profiling is built) at the top, the whole
model's time, a horizontal bar chart of each group's share of the time beside the gain possible were it at its
roofline floor, and the table of the groups, hottest first: share, floor against eager time (the share of the
roofline rate reached), and the Amdahl gain. The chart is matplotlib's inline SVG (kerntailor/htmlpage.py).

Every number the page shows that profile.json holds is tagged with its path there (htmlpage.num):
tests/test_html_report.py compares them with the document. The renderer reads the JSON document (render.py's
profile_dict, as written), not the dataclasses, so that the committed example can be drawn again from its JSON.
"""

from __future__ import annotations

from kerntailor.htmlpage import esc, num, page, pct, svg, table, us_field
from kerntailor.profiling.render import module_text, ops_text

CHART_GROUPS = 20   # the hottest groups drawn; the table lists them all

CSS = """
.mode { font-size: 20px; font-weight: bold; padding: 8px 14px; border-radius: 4px; display: inline-block; }
.mode.predicted { background: #fff3cd; border: 2px solid #c99a00; }
.mode.measured { background: #e3f3e6; border: 2px solid #0a7a2f; }
body { max-width: 1400px; } table { font-size: 12px; } td { white-space: nowrap; }
"""


def render_profile_html(doc: dict) -> str:
    """profile.html for a profile document (render.profile_dict, as profile.json holds it)."""
    title = f"profile of {doc.get('model')} on {doc.get('target')} (dtype {doc.get('dtype')})"
    groups = doc.get("groups") or []
    body = [f"<h1>{esc(title)}</h1>", _banner(doc), _summary(doc),
            "<h2>Time share and gain possible per group</h2>", _chart(doc),
            "<h2>Groups, hottest first</h2>", _groups(groups)]
    if doc.get("unattributed_us"):
        body.append(f"<p>Unattributed (eager ops no group took): {us_field('unattributed_us', doc['unattributed_us'])}"
                    f" of the model's time.</p>")
    body.append("<p class='label'>eager: one kernel per ATen op; floor: the group's roofline floor at its compulsory "
                "bytes and FLOPs; roofline rate: floor over eager time; gain: the model's time saved were the group "
                "at its floor (Amdahl), and the model's speed-up then.</p>")
    if doc.get("note"):
        body.append(f"<p class='label'>{esc(doc['note'])}.</p>")
    return page(title, body, CSS)


def _banner(doc: dict) -> str:
    mode = doc.get("mode") or ""
    where = (f"every time on this page is predicted by kerntailor's cost model; nothing ran on {doc.get('target')}"
             if mode == "predicted" else "every time on this page was measured on the GPU")
    return (f"<p><span class='mode {esc(mode)}'>{esc(doc.get('label'))}</span></p>"
            f"<p class='label'>{esc(where)}.</p>")


def _summary(doc: dict) -> str:
    return (f"<p>Whole model: eager {us_field('eager_us', doc.get('eager_us'))} "
            f"({num('eager_kernels', doc.get('eager_kernels'))} kernels); the sum of the groups' floors "
            f"{us_field('floor_us', doc.get('floor_us'))}; {len(doc.get('groups') or [])} fusion groups. "
            f"<span class='label'>Model file: {esc(doc.get('path'))}</span></p>")


def _groups(groups: list[dict]) -> str:
    cells = []
    for i, g in enumerate(groups):
        key = f"groups/{i}"
        speedup = g.get("amdahl_speedup")
        where = module_text(g.get("modules") or [], g.get("module") or "")
        cells.append([esc(i + 1), esc(g.get("name")), esc(g.get("family")), esc(where),
                      esc(ops_text(g.get("ops") or [])),
                      us_field(f"{key}/eager_us", g.get("eager_us")), pct(f"{key}/share", g.get("share")),
                      us_field(f"{key}/floor_us", g.get("floor_us")), esc(g.get("bound")),
                      pct(f"{key}/roofline_share", g.get("roofline_share")),
                      pct(f"{key}/gain_share", g.get("gain_share")),
                      num(f"{key}/amdahl_speedup", speedup, None if speedup is None else f"{speedup:.3f}x"),
                      _count(f"{key}/flops", g.get("flops")), _count(f"{key}/bytes", g.get("bytes")),
                      _file(g.get("problem_file"))])
    return table(["#", "group", "family", "module", "ops", "eager", "share of time", "floor", "bound",
                  "roofline rate reached", "gain possible", "model speed-up", "FLOPs", "bytes", "problem file"], cells)


def _count(key: str, value) -> str:
    return num(key, value, None if value is None else f"{value:.3g}")


def _file(path: str | None) -> str:
    """The written problem file by its name, its path on hover."""
    return "" if not path else f"<span title='{esc(path)}'>{esc(path.replace(chr(92), '/').rpartition('/')[2])}</span>"


def _chart(doc: dict) -> str:
    """Horizontal bars, hottest group on top: its share of the model's time, and over it the share the model
    would save were the group at its floor."""
    groups = [g for g in (doc.get("groups") or [])[:CHART_GROUPS] if g.get("share") is not None]
    if not groups:
        return "<p class='label'>No groups: nothing to draw.</p>"

    def draw(ax):
        ys = range(len(groups))
        names = [f"{g['name']}: {module_text(g.get('modules') or [], g.get('module') or '')}" for g in groups]
        share = [100 * g["share"] for g in groups]
        gain = [100 * (g.get("gain_share") or 0.0) for g in groups]
        ax.barh(ys, share, color="#9bb7d9", label="share of the model's time")
        ax.barh(ys, gain, height=0.45, color="#d9822b", label="gain possible: time saved at the group's floor")
        ax.set_yticks(list(ys), names, fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color="black", lw=0.8)
        for y, s, g in zip(ys, share, gain):
            ax.text(max(s, g, 0), y, f" {s:.1f}% / {g:.1f}%", va="center", fontsize=7)
        ax.set_xlim(min(0.0, min(gain) * 1.1), max(share + gain) * 1.25)
        ax.set_xlabel("% of the whole model's eager time")
        ax.set_title(f"{doc.get('model')} on {doc.get('target')}: share / gain possible per group, "
                     f"{doc.get('label')}", fontsize=10)
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")

    shown = "" if len(doc["groups"]) <= CHART_GROUPS else (
        f"<p class='label'>The {CHART_GROUPS} hottest of {len(doc['groups'])} groups.</p>")
    return svg(draw, (10, max(2.0, 0.3 * len(groups) + 1.2))) + shown
