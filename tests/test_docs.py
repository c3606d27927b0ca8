"""The documentation site builds with ``mkdocs build --strict``, its Python examples run, and the API reference renders.

Every ```` ```python ```` block of ``docs/**/*.md`` runs in a fresh namespace in a temporary
directory (where ``results/quickstart`` is a small result directory, for the examples
reading one). A fragment that cannot run on its own (it uses placeholders such as
``recs_df``) is marked with an ``<!-- not-run -->`` line right above its fence.

The API reference is checked on what mkdocstrings receives (griffe's docstrings after
``docs/griffe_sphinx.py``), which needs no mkdocs: no Sphinx role is left raw, each
becomes a cross-reference to the full path, and bare doctests are code.
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
RAW_ROLE = re.compile(r":(?:py:)?[a-z]+:`")


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
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "ResultStore" in api
    assert not RAW_ROLE.search(api)
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="#receval\.errors\.DataError"', api)
    assert "<table" not in api  # parameters as lists: a table of long types would run under the contents


@pytest.fixture(scope="module")
def reference():
    """The receval package as griffe loads it for mkdocstrings, with the site's extension."""
    griffe = pytest.importorskip("griffe")
    sys.path.insert(0, str(DOCS))
    import griffe_sphinx

    extensions = griffe.load_extensions(griffe_sphinx.SphinxRoles())
    return griffe.load("receval", search_paths=[str(ROOT / "src")], extensions=extensions)


def _docstrings(obj):
    if obj.docstring is not None:
        yield obj.path, obj.docstring.value
    for member in obj.members.values():
        if not member.is_alias:
            yield from _docstrings(member)


def test_api_reference_has_no_raw_sphinx_role(reference):
    raw = [(path, m.group()) for path, text in _docstrings(reference) for m in RAW_ROLE.finditer(text)]
    assert not raw, raw[:10]


def test_roles_become_references_to_the_full_path(reference):
    meta = reference["experiment.store.ResultStore.meta"].docstring.value
    # written :class:`~receval.errors.DataError`: the last component shown, the full path linked
    assert '<autoref identifier="receval.errors.DataError" optional><code>DataError</code></autoref>' in meta
    module = reference["recommenders"].docstring.value
    # written :func:`recommend` in receval.recommenders: resolved in that scope, to where it is defined
    assert '<autoref identifier="receval.recommenders.topn.recommend" optional><code>recommend()</code></autoref>' in (
        module
    )


def test_bare_doctests_are_fenced_and_examples_sections_left_to_the_parser(reference):
    to_rankings = reference["evaluation.align.to_rankings"].docstring.value
    fenced = re.search(r"^```pycon\n(>>> .*?)^```$", to_rankings, re.S | re.M)
    assert fenced and "[[8, -1], [9, 7], [-1, -1]]" in fenced.group(1)
    evaluate = reference["evaluation.evaluate"].docstring.value
    assert "```pycon" not in evaluate and re.search(r"^Examples\n-+\n>>> ", evaluate, re.M)


def test_extension_examples(reference):
    import doctest

    import griffe_sphinx

    result = doctest.testmod(griffe_sphinx)
    assert result.attempted >= 3 and result.failed == 0


# Modules whose public functions each document what they return and show an example (``help()`` and
# the API reference), and classes whose public methods do; the others are brought to it module by module.
DOCUMENTED = [
    "atomic.py", "outputs.py", "progress.py", "data/interactions.py", "data/stats.py", "data/synthetic.py",
    "recommenders/registry.py", "recommenders/base.py", "recommenders/baselines.py", "simulate/core.py",
    "stats/agreement.py", "stats/barrier.py", "experiment/store.py", "experiment/ids.py", "experiment/grid.py",
    "experiment/datasets.py", "data/writers.py", "metrics/aspects.py", "data/registry.py",
    "studies/slicing.py", "studies/axioms.py", "studies/freshness.py", "studies/partitions.py",
    "evaluation/sharded.py", "evaluation/sharded_files.py", "stats/coherence.py", "data/prepare.py",
    "studies/attacks.py", "studies/metaeval.py", "studies/debiasing.py",
    "experiment/executors.py",
    "report/figures.py", "report/style.py", "report/studies.py", "report/html.py", "report/debias.py",
    "report/cyclic.py", "report/compare.py", "stats/significance.py", "metrics/ranking.py", "metrics/registry.py",
    "metrics/error.py", "metrics/trec.py", "validate.py", "split.py", "vocabulary.py", "data/formats.py",
    "data/tables.py", "data/loaders.py", "errors.py", "metrics/debiased.py", "recommenders/als.py",
    "stats/propensity.py", "metrics/conventions.py", "metrics/beyond.py", "evaluation/oneshot.py", "cold_start.py",
    "stats/sampled.py", "evaluation/candidates.py", "evaluation/sampled.py", "studies/sampled.py",
    "studies/cyclic_selection.py", "recommenders/linear.py", "recommenders/graph.py",
    "experiment/tune.py", "report/tune.py", "report/sampled.py", "data/ncf.py",
    "experiment/protocols/coherence_barrier.py", "experiment/protocols/sampled.py", "metrics/_list.py",
]  # fmt: skip
DOCUMENTED_CLASSES = ["experiment/store.py:ResultStore"]
SECTION = re.compile(r"^\s*(Returns|Yields)\n\s*-+\n", re.M)


def _undocumented(nodes) -> list[str]:
    import ast

    missing = []
    for node in nodes:
        doc = ast.get_docstring(node) or ""
        lacks = [what for what, ok in (("Returns", SECTION.search(doc)), ("an example", ">>>" in doc)) if not ok]
        if lacks:
            missing.append(f"{node.name}: no {' and no '.join(lacks)}")
    return missing


def _tree(module: str):
    import ast

    return ast.parse((ROOT / "src" / "receval" / module).read_text(encoding="utf-8"))


@pytest.mark.parametrize("module", DOCUMENTED)
def test_public_functions_document_returns_and_an_example(module):
    import ast

    tree = _tree(module)
    exported = next(
        (ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
         and any(getattr(t, "id", None) == "__all__" for t in n.targets)),
        None,
    )  # fmt: skip
    functions = [
        n for n in tree.body
        if isinstance(n, ast.FunctionDef) and not n.name.startswith("_") and (exported is None or n.name in exported)
    ]  # fmt: skip
    assert functions and not _undocumented(functions), _undocumented(functions)


@pytest.mark.parametrize("where", DOCUMENTED_CLASSES)
def test_public_methods_document_returns_and_an_example(where):
    import ast

    module, name = where.split(":")
    cls = next(n for n in _tree(module).body if isinstance(n, ast.ClassDef) and n.name == name)
    methods = [
        m for m in cls.body
        if isinstance(m, ast.FunctionDef) and not m.name.startswith("_")
        and not {getattr(d, "id", None) for d in m.decorator_list} & {"property", "cached_property"}
    ]  # fmt: skip
    assert methods and not _undocumented(methods), _undocumented(methods)
