"""The documentation site builds with ``mkdocs build --strict`` and its Python examples run.

Every ```` ```python ```` block of ``docs/**/*.md`` runs in a fresh namespace in a temporary
directory (where ``results/quickstart`` is a small result directory, for the examples
reading one). A fragment that cannot run on its own (it uses placeholders such as
``recs_df``) is marked with an ``<!-- not-run -->`` line right above its fence.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^(<!-- not-run -->\n)?```python\n(.*?)^```", re.S | re.M)


def _examples() -> list[tuple[str, int, str]]:
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            if m.group(1) is None:
                out.append((str(page.relative_to(DOCS)), text[: m.start()].count("\n") + 1, m.group(2)))
    return out


def test_docs_have_examples():
    pages = {page for page, _, _ in _examples()}
    assert {"index.md", "concepts.md", "guides/one-shot.md", "guides/cyclic.md", "guides/reports.md"} <= pages


@pytest.mark.parametrize(("page", "line", "code"), _examples(), ids=lambda v: v if isinstance(v, str) else None)
def test_docs_example_runs(page, line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if "results/quickstart" in code:  # the examples reading a result directory get one
        sys.path.insert(0, str(ROOT / "tests"))
        import _report_data

        _report_data.one_shot(tmp_path / "results" / "quickstart", systems=2, seeds=1, users=20, slices=False)
    compiled = compile(code, f"docs/{page}:{line}", "exec")
    exec(compiled, {"__name__": "__docs__"})  # an AssertionError/exception fails with the page and line


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs/test extras install mkdocs")
    pytest.importorskip("mkdocstrings")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr[-4000:]
    site = tmp_path / "site"
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "receval report" in cli and "receval run" in cli
    assert "ab_ndcg" in (site / "reference" / "metrics" / "index.html").read_text(encoding="utf-8")
    assert "ResultStore" in (site / "api" / "index.html").read_text(encoding="utf-8")
