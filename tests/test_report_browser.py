"""The HTML report in a real browser: headless Chromium loads it offline, every image decodes, no console errors.

Chromium runs with ``--dump-dom``: a script injected into a copy of the report records
script errors from the start and, on ``load``, writes a JSON verdict (each image's
``complete``/``naturalWidth``/``naturalHeight``, the systems in the summary tables, how
far the page or a table (scrolled in its box or not) overflows a 1280-pixel window
horizontally) into a ``<pre id="checks">``
that the dumped DOM shows. Console messages are caught from Chromium's log
(``--enable-logging=stderr``). A second run takes a screenshot. The reports of an
experiment and of ``receval demo`` (its wide tables) are checked. Skips when
``chromium`` is not installed (CI installs it: ``.ci/apt-packages``).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _report_data as rd
from receval.report.html import build_report

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

_HEAD = (
    "<script>window.__errors=[];"
    'window.addEventListener("error",e=>window.__errors.push(String(e.message||e.type)),true);</script>'
)
_TAIL = """<script>window.addEventListener("load",()=>{const imgs=[...document.images];
const pre=document.createElement("pre");pre.id="checks";
pre.textContent=JSON.stringify({errors:window.__errors,
images:imgs.map(i=>({alt:i.alt,complete:i.complete,width:i.naturalWidth,height:i.naturalHeight})),
systems:[...document.querySelectorAll("td.system")].map(t=>t.textContent),
overflow:Math.max(document.documentElement.scrollWidth-document.documentElement.clientWidth,
...[...document.querySelectorAll("table")].map(t=>Math.max(t.getBoundingClientRect().right-
document.documentElement.clientWidth,t.parentElement.scrollWidth-t.parentElement.clientWidth)))});
document.body.appendChild(pre);});</script>"""
_WINDOW = "--window-size=1280,2400"


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp / 'chromium-profile'}",
    ]
    return subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


def _check(page: Path, tmp: Path) -> tuple[dict, list[str]]:
    """Load ``page`` (a copy with the check scripts); returns the in-page verdict and console lines."""
    probe = tmp / f"probe-{page.name}"
    text = page.read_text(encoding="utf-8")
    probe.write_text(text.replace("<head>", "<head>" + _HEAD, 1).replace("</body>", _TAIL + "</body>", 1))
    res = _chromium(
        tmp, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", _WINDOW, "--dump-dom", probe.as_uri()
    )
    m = re.search(r'<pre id="checks">(.*?)</pre>', res.stdout, re.S)
    assert m, f"the page did not finish loading; chromium said: {res.stderr[-2000:]}"
    console = [line for line in res.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    return json.loads(html.unescape(m.group(1))), console


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    root = rd.one_shot(tmp / "results", systems=3, seeds=1, users=60)
    return build_report(root, tmp / "report.html")


def test_report_loads_in_chromium(report, tmp_path):
    verdict, console = _check(report, tmp_path)
    assert console == [] and verdict["errors"] == [] and verdict["overflow"] <= 0
    assert len(verdict["images"]) >= 4
    for image in verdict["images"]:
        assert image["complete"] and image["width"] > 100 and image["height"] > 100, image
    assert {"sys0(k=0)", "sys1(k=1)", "sys2(k=2)"} <= set(verdict["systems"])
    shot = tmp_path / "report.png"
    _chromium(tmp_path, f"--screenshot={shot}", _WINDOW, report.as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000


def test_demo_report_fits_the_window(tmp_path):
    """The demo's one-shot table has eleven metric columns: split into tables that fit, no horizontal scrolling."""
    from receval.cli.demo import run_demo
    from receval.report.html import report_from_tables

    report = report_from_tables(run_demo(users=200, items=300, ratings=8_000, rounds=10), tmp_path / "demo.html")
    verdict, console = _check(report, tmp_path)
    assert console == [] and verdict["errors"] == []
    assert verdict["overflow"] <= 0, f"the page is {verdict['overflow']} pixels wider than the window"
    assert {"popularity", "item-knn", "global-mean"} <= set(verdict["systems"])
    assert all(image["complete"] and image["width"] > 100 for image in verdict["images"])
    shot = tmp_path / "demo.png"
    _chromium(tmp_path, f"--screenshot={shot}", _WINDOW, report.as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000


def test_the_overflow_check_sees_a_wide_page(tmp_path):
    page = tmp_path / "wide.html"
    page.write_text('<!DOCTYPE html><html><head></head><body><div style="width:3000px">wide</div></body></html>')
    verdict, _ = _check(page, tmp_path)
    assert verdict["overflow"] > 1000
    cell = "<td>a wide cell of a wide table</td>" * 60
    page.write_text(
        '<!DOCTYPE html><html><head></head><body><div style="overflow-x:auto">'
        f"<table><tr>{cell}</tr></table></div></body></html>"
    )
    verdict, _ = _check(page, tmp_path)
    assert verdict["overflow"] > 100  # a table scrolled inside its box hides columns too


def test_the_check_catches_broken_images_and_console_errors(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><head></head><body><img alt="x" src="data:image/png;base64,AAAA">'
        '<script>console.error("bad"); notDefined();</script></body></html>'
    )
    verdict, console = _check(page, tmp_path)
    assert verdict["images"][0]["width"] == 0
    assert any("bad" in line for line in console) and any("notDefined" in e for e in verdict["errors"])


def test_compare_report_fits_the_window(tmp_path):
    """The compare report's tests table (twelve columns) fits a 1280-pixel window; its one figure decodes."""
    import numpy as np
    import pandas as pd

    from receval.report.compare import compare_report
    from receval.studies.compare import compare_runs

    rng = np.random.default_rng(0)
    truth = pd.DataFrame({"user": np.repeat(np.arange(40), 6), "item": rng.integers(0, 60, 240), "rating": 5})
    runs = {
        name: pd.DataFrame({"user": np.repeat(np.arange(40), 10), "item": rng.integers(0, 60, 400)})
        .drop_duplicates(["user", "item"])
        .assign(rank=lambda f: f.groupby("user").cumcount() + 1)
        for name in ("item-knn(k=50,similarity=cosine)", "popularity", "mf(factors=50,epochs=20)")
    }
    result = compare_runs(runs, truth.drop_duplicates(["user", "item"]), ["ndcg@10", "recall@10"], test="wilcoxon")
    report = compare_report(result, tmp_path / "cmp.html", truth="qrels.tsv")
    verdict, console = _check(report, tmp_path)
    assert console == [] and verdict["errors"] == []
    assert verdict["overflow"] <= 0, f"the page is {verdict['overflow']} pixels wider than the window"
    assert len(verdict["images"]) == 1 and verdict["images"][0]["complete"] and verdict["images"][0]["width"] > 100
    assert set(verdict["systems"]) == set(runs)
