"""report.html and bench.html (generate/html.py) and profile.html (profiling/html.py): every number the page shows
under a data-key equals the one in report.json / bench.json / profile.json, and headless Chromium (Debian's
package; `make setup` installs it where apt-get exists) renders the committed examples to a screenshot that is
not blank.

The examples are the committed ones under benchmarks/data/html_examples/: a measured H200 report, a predicted
MI300X report, a measured H200 bench result and a predicted MI300X profile of a small model. Skipped without
matplotlib (the `report` extra) or, for the screenshot, without chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="matplotlib (the report extra) not installed")

from helpers import check_page_numbers  # noqa: E402
from kerntailor.generate.html import render_bench_html, render_html, write_html  # noqa: E402
from kerntailor.profiling.html import render_profile_html  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "html_examples"
REPORTS = {"h200_measured": "42_Max_Pooling_2D_h200_report.json", "mi300x_predicted": "relu_mi300x_report.json"}
BENCH = EXAMPLES.parent / "kernelbench_sample8o4_h200_fp32_2026-12-02.json"
PROFILE = EXAMPLES / "llama_decoder_block_mi300x_profile.json"
PROFILE_KEYS = ("eager_us", "share", "floor_us", "roofline_share", "gain_share", "amdahl_speedup", "flops", "bytes")


@pytest.fixture(scope="module")
def pages() -> dict[str, tuple[str, dict]]:
    out = {}
    for name, file in REPORTS.items():
        report = json.loads((EXAMPLES / file).read_text())
        out[name] = (render_html(report), report)
    bench = json.loads(BENCH.read_text())
    out["bench"] = (render_bench_html(bench), bench)
    profile = json.loads(PROFILE.read_text())
    out["profile"] = (render_profile_html(profile), profile)
    return out


def test_measured_report_shows_the_numbers_of_report_json(pages):
    page, report = pages["h200_measured"]
    check_page_numbers(page, report, {"floor/us", "cost/flops", "cost/min_bytes", "kernels/0/seconds",
                                 "kernels/0/isa/registers", "kernels/0/runners_up/0/seconds",
                                 "verdict/timing/timings/0/median_s", "verdict/timing/timings/1/median_s",
                                 "verdict/timing/timings/2/median_s", "verdict/timing/speedup_vs_eager",
                                 "verdict/timing/speedup_vs_compile", "verdict/rel_norm_err"})
    assert "measured on NVIDIA H200" in page and "<svg" in page and "PASS" in page
    assert all(f">{check}<" in page for check in report["verdict"]["checks"])


def test_predicted_report_labels_its_times_predicted(pages):
    page, report = pages["mi300x_predicted"]
    check_page_numbers(page, report, {"floor/us", "kernels/0/seconds", "kernels/0/isa/vgprs", "baselines/eager_us",
                                 "baselines/compile_us", "baselines/speedup_vs_eager",
                                 "baselines/speedup_vs_compile"})
    assert "predicted (mi300x, baseline model v1)" in page and "nothing ran on this target" in page
    assert "measured" not in page.lower()


def test_bench_page_shows_the_numbers_of_bench_json(pages):
    page, bench = pages["bench"]
    n = len(bench["rows"])
    check_page_numbers(page, bench, {f"rows/{i}/time_us" for i in range(n) if bench["rows"][i].get("time_us")}
                  | {"summary/overall/geomean_speedup_vs_eager", "summary/overall/problems"})
    assert page.count("<svg") == 3


def test_profile_page_shows_the_numbers_of_profile_json_under_its_label(pages):
    page, profile = pages["profile"]
    check_page_numbers(page, profile, {"eager_us", "eager_kernels", "floor_us"}
                       | {f"groups/{i}/{k}" for i in range(len(profile["groups"])) for k in PROFILE_KEYS})
    assert profile["mode"] == "predicted" and len(profile["groups"]) > 3
    assert "<span class='mode predicted'>predicted (mi300x, baseline model v1)</span>" in page
    assert "nothing ran on mi300x" in page and page.count("<svg") == 1


def test_the_number_check_catches_a_wrong_share(pages):
    page, profile = pages["profile"]
    key = f"data-key=\"groups/0/share\" data-value=\"{profile['groups'][0]['share']}\">"
    shown = f"{key}{profile['groups'][0]['share']:.1%}<"
    assert shown in page
    with pytest.raises(AssertionError):
        check_page_numbers(page.replace(shown, f"{key}{profile['groups'][0]['share'] + 0.01:.1%}<"), profile, set())


def _text(page: str) -> str:
    """A page less its charts (their SVG differs from one matplotlib version to the next)."""
    return re.sub(r"<svg.*?</svg>", "<svg/>", page, flags=re.S)


def test_committed_examples_are_what_the_renderer_writes(pages):
    """The committed pages are this renderer's output for the committed JSON, charts aside (rewrite them with
    `python -m kerntailor.generate.html DOC.json OUT.html` if the page changes on purpose)."""
    for name in REPORTS:
        assert _text((EXAMPLES / f"{name}.html").read_text()) == _text(pages[name][0]), name
    assert _text((EXAMPLES / "bench_h200_fp32.html").read_text()) == _text(pages["bench"][0])
    assert _text((EXAMPLES / "mi300x_profile.html").read_text()) == _text(pages["profile"][0])


def test_no_matplotlib_writes_no_page_and_says_so(tmp_path, monkeypatch):
    from helpers import without_matplotlib

    said = without_matplotlib(monkeypatch)
    (tmp_path / "report.html").write_text("an earlier run's page")
    assert write_html(tmp_path / "report.html", render_html, {}) is False
    assert not (tmp_path / "report.html").exists()
    assert said == ["report.html not written: matplotlib is not installed (pip install 'kerntailor[report]')"]


def _not_blank(png: Path) -> None:
    import numpy as np
    from matplotlib import image

    pixels = np.asarray(image.imread(png))[..., :3]
    flat = (pixels * 255).astype(np.uint32).reshape(-1, 3)
    colours = len(np.unique(flat[:, 0] << 16 | flat[:, 1] << 8 | flat[:, 2]))
    ink = float((flat.min(axis=1) < 200).mean())   # share of pixels darker than a light grey
    assert colours > 50 and ink > 0.02, (png.name, colours, ink)


@pytest.mark.integration
@pytest.mark.slow
def test_chromium_renders_the_examples(tmp_path):
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium not installed")

    def shoot(page: Path) -> Path:
        png = tmp_path / f"{page.stem}.png"
        subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                        "--window-size=1200,1600", f"--user-data-dir={tmp_path / 'profile'}", page.as_uri()],
                       check=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
        return png

    for name in ("h200_measured", "mi300x_predicted", "bench_h200_fp32", "mi300x_profile"):
        _not_blank(shoot(EXAMPLES / f"{name}.html"))
    blank = tmp_path / "blank.html"   # the check tells a blank page apart
    blank.write_text("<!DOCTYPE html><html><body><p>-</p></body></html>")
    with pytest.raises(AssertionError):
        _not_blank(shoot(blank))


def test_the_number_check_catches_a_wrong_number(pages):
    page, report = pages["h200_measured"]
    shown = f"{report['floor']['us']:.1f} us"
    assert shown in page
    with pytest.raises(AssertionError):
        check_page_numbers(page.replace(shown, f"{report['floor']['us'] + 1:.1f} us", 1), report, set())
