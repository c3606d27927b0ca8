"""Self-contained HTML reports (and LaTeX tables) of a result directory or of in-memory tables.

:func:`build_report` reads an experiment directory written by ``receval run`` and
writes one HTML file: configuration and provenance, a notice of anything missing
(unfinished or failed tasks, tables an older receval did not write, figures the
results do not allow), summary tables with the best value in bold and significance
marks, and every figure of :mod:`receval.report.figures` the stored tables allow,
embedded as base64 PNG (no network access needed to open it). With ``latex_dir`` it
also writes each summary table as a booktabs LaTeX table.

Every file a report writes (the HTML, the LaTeX tables, the figures) appears together
(:func:`receval.atomic.publish`), inside the folders named; a data set, protocol or
figure name becomes a file name through :func:`receval.outputs.safe_name`, and each
folder of tables or figures gets an ``index.json`` naming what each file holds. LaTeX
text (captions, names) and labels are escaped.

Significance marks: in each column, the best configuration is bold; ``†`` marks a
configuration whose per-user values differ from the best one's (:data:`MARKS_TEST` over
their common users, :data:`MARKS_CORRECTION` correction over the column's comparisons,
α = :data:`ALPHA`), as the page's footnote says. Every figure draws a system in the
same colour and marker (:func:`receval.report.style.system_styles`, in the tables' order).

:func:`report_from_tables` writes the same kind of report from a dict of tables (the
output of ``receval demo``).

Examples
--------
>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> path = build_report(out / "missing-dir", out / "r.html")
>>> "no experiment.json" in path.read_text()
True
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from receval.atomic import Publication, publish, write_text
from receval.errors import DataError
from receval.outputs import safe_name
from receval.report import figures as F
from receval.report.style import PAGE_WIDTH, RC, close_figure, png_bytes, save, system_styles
from receval.stats.significance import CORRECTION_NAMES, TEST_NAMES, Correction, TestName

__all__ = ["ALPHA", "Report", "build_report", "latex_table", "report_from_tables", "significance_marks"]

ALPHA = 0.05
#: The test and correction of the significance marks of an experiment's or the demo's tables.
MARKS_TEST: TestName = "ttest"
MARKS_CORRECTION: Correction = "holm"
_MARKS_NOTE = (
    f"Bold: best value of the column; † differs significantly from the best ({TEST_NAMES[MARKS_TEST]} over "
    f"users, {CORRECTION_NAMES[MARKS_CORRECTION]}-corrected over the column's comparisons, α = {ALPHA:g})."
)
# Protocol names as section headings
_PROTOCOL_HEADINGS = {
    "one-shot": "One-shot evaluation",
    "cyclic": "Cyclic simulation",
    "coherence-split": "Easy and difficult users (coherence split)",
    "metaeval": "Meta-evaluation of metrics",
}
INDEX = "index.json"  # in a folder of LaTeX tables or figures: {file name: what it holds}
_MAX_DATA_RATINGS = 5_000_000  # data sets regenerated/loaded for the overview only up to this size


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


@dataclass
class Report:
    """An HTML document under construction: sections of HTML, notices, figures."""

    title: str
    figures_dir: Path | None = None
    publication: Publication | None = None  # where figures_dir's files are staged (required with figures_dir)
    parts: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    n_figures: int = 0
    tables: dict[str, str] = field(default_factory=dict)  # name -> LaTeX
    files: dict[Path, str] = field(default_factory=dict)  # file written -> what it holds (for the index)
    footnote: str = _MARKS_NOTE  # what the marks of the page's tables mean
    styles: dict[str, dict[str, Any]] = field(default_factory=dict)  # system -> look, shared by every figure

    def notice(self, text: str) -> None:
        """Record something missing or skipped (shown at the top of the report)."""
        self.notices.append(text)

    def heading(self, text: str, level: int = 2) -> None:
        """A section heading."""
        self.parts.append(f"<h{level}>{_esc(text)}</h{level}>")

    def text(self, text: str) -> None:
        """A paragraph of plain text."""
        self.parts.append(f"<p>{_esc(text)}</p>")

    def raw(self, markup: str) -> None:
        """Trusted HTML (built by this module)."""
        self.parts.append(markup)

    def frame(self, frame: pd.DataFrame, table_id: str, max_rows: int | None = None) -> None:
        """A table of ``frame`` (values escaped, floats to 4 places, missing as –), every row unless ``max_rows``."""
        self.parts.append(_frame_html(frame, table_id, len(frame) if max_rows is None else max_rows))

    def figure(self, name: str, caption: str, build: Callable[[], Any]) -> bool:
        """Draw ``build()`` and embed it; a :class:`DataError` (or any failure) becomes a notice instead."""
        try:
            fig = build()
        except DataError as err:
            self.notice(f"figure '{caption}' not drawn: {err}")
            return False
        except Exception as err:  # a figure must never take the report down
            self.notice(f"figure '{caption}' failed: {type(err).__name__}: {err}")
            return False
        try:
            if self.figures_dir is None:
                png = png_bytes(fig)
            else:
                if self.publication is None:
                    raise ValueError("a Report with figures_dir needs the publication its files are staged in")
                stem = self.figures_dir / safe_name(name)
                # save() adds each format to the staged stem. The page embeds the PNG file's bytes: drawn once
                # per format, and the page shows the file (a constrained layout drawn again can move by 1e-6 pt)
                formats = ("png", "svg")
                png = save(fig, self.publication.path(stem), formats, close=False)[0].read_bytes()
                for fmt in formats:
                    self.files[stem.with_name(f"{stem.name}.{fmt}")] = caption
        finally:
            close_figure(fig)
        data = base64.b64encode(png).decode("ascii")
        self.n_figures += 1
        self.parts.append(
            f'<figure id="fig-{_esc(name)}"><img alt="{_esc(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>Figure {self.n_figures}. {_esc(caption)}</figcaption></figure>"
        )
        return True

    def section(self, title: str, body: Callable[[], None]) -> None:
        """Run ``body()``; an unexpected error becomes a notice and the report goes on."""
        try:
            body()
        except Exception as err:
            self.notice(f"section '{title}' incomplete: {type(err).__name__}: {err}")
            self.parts.append(f'<pre class="error">{_esc(traceback.format_exc(limit=3))}</pre>')

    def render(self, subtitle: str = "") -> str:
        """The whole document."""
        notices = ""
        if self.notices:
            items = "".join(f"<li>{_esc(n)}</li>" for n in self.notices)
            notices = f'<div class="notice" id="notices"><strong>Missing or incomplete:</strong><ul>{items}</ul></div>'
        return _TEMPLATE.format(
            title=_esc(self.title),
            subtitle=_esc(subtitle),
            notices=notices,
            body="\n".join(self.parts),
            footnote=_esc(self.footnote),
            css=_CSS,
        )


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;
padding:0 1em;line-height:1.4}
h1{margin-bottom:0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.8em 0;font-size:.85em;font-variant-numeric:tabular-nums}
th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}td{white-space:nowrap}
th:first-child,td:first-child{text-align:left}thead th{border-bottom:2px solid #444}
td.best{font-weight:bold}figure{margin:1em 0}img{max-width:100%;height:auto}
figcaption{font-size:.85em;color:#444}.notice{background:#fff4e0;border-left:4px solid #E69F00;padding:.5em 1em}
.error{background:#fde8e8;font-size:.8em;overflow:auto}pre{background:#f6f6f6;padding:.6em;overflow:auto;font-size:.8em}
.muted{color:#666;font-size:.85em}
table.facts td{text-align:left;white-space:normal}td.text,th.text{text-align:left}
td.text{white-space:normal;overflow-wrap:anywhere;min-width:5em}
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><style>{css}</style></head>
<body><h1>{title}</h1><p class="muted">{subtitle}</p>
{notices}
{body}
<p class="muted">Written by receval. {footnote}</p>
</body></html>
"""


# ---------------------------------------------------------------- tables
def significance_marks(
    per_user: pd.DataFrame,
    metric: str,
    best: str,
    *,
    correction: Correction = MARKS_CORRECTION,
) -> dict[str, float]:
    """Adjusted p-values (:data:`MARKS_TEST`, Holm by default) of every system against ``best`` on ``metric``.

    ``per_user`` has columns ``system``, ``user``, ``metric``, ``value``.

    Returns
    -------
    dict of str to float
        Each other system with its adjusted p-value against ``best``; empty when ``best`` is absent, fewer than two
        systems have values, or there are no values.

    Examples
    --------
    >>> pu = pd.DataFrame({"system": ["a"] * 5 + ["b"] * 5, "user": list(range(5)) * 2, "metric": "m",
    ...                    "value": [0.9, 0.8, 0.85, 0.95, 0.9, 0.1, 0.2, 0.15, 0.1, 0.2]})
    >>> significance_marks(pu, "m", "a")["b"] < 0.05
    True
    """
    from receval.stats.significance import compare_systems

    part = per_user[per_user["metric"] == metric] if per_user["metric"].nunique() > 1 else per_user
    part = part[part["value"].notna()]
    if part.empty or best not in set(part["system"]) or part["system"].nunique() < 2:
        return {}
    res = compare_systems(part, baseline=best, test=MARKS_TEST, correction=correction, n_resamples=20)  # CIs unused
    return {str(r.a): float(r.pvalue_adj) for r in res.itertuples()}


def _best(values: pd.Series, metric: str) -> str | None:
    """The system with the best value of ``metric``; None for a tie, or a quantity with no better direction.

    >>> _best(pd.Series([0.2, 0.3], index=["a", "b"]), "fallout@10"), _best(pd.Series([0.2, 0.3]), "gini_train")
    ('a', None)
    """
    direction = F.metric_direction(metric)
    v = values.astype(float).dropna()
    if direction is None or v.empty or v.nunique() < 2:
        return None
    return str(v.idxmin() if direction == "lower" else v.idxmax())


def _format(v: Any) -> str:
    if isinstance(v, float | np.floating):
        x = float(v)
        return "–" if not np.isfinite(x) else f"{x:.4f}" if abs(x) < 1000 else f"{x:,.0f}"
    return str(v)


_PAGE_PX = PAGE_WIDTH * RC["figure.dpi"]  # usable width of the page (max-width 1200px less padding) in pixels
_CHAR_PX = 7.6  # an estimate of one character of a table cell (0.85em tabular digits) in pixels
_CELL_PAD_PX = 20


def _width(texts: list[str]) -> float:
    return max(len(t) for t in texts) * _CHAR_PX + _CELL_PAD_PX


def _column_chunks(first: float, widths: list[float], budget: float = _PAGE_PX) -> list[list[int]]:
    """Consecutive column indices per table so that each table (with the first column) fits ``budget`` pixels.

    >>> _column_chunks(200, [400, 400, 400, 400])
    [[0, 1], [2, 3]]
    >>> _column_chunks(200, [2000])  # a column wider than the page still gets a table
    [[0]]
    """
    chunks: list[list[int]] = [[]]
    used = first
    for j, w in enumerate(widths):
        if chunks[-1] and used + w > budget:
            chunks.append([])
            used = first
        chunks[-1].append(j)
        used += w
    return chunks


def _summary_html(
    means: pd.DataFrame,
    stds: pd.DataFrame | None,
    marks: Mapping[str, Mapping[str, float]],
    table_id: str,
    caption: str,
    row_label: str = "configuration",
) -> str:
    """Systems as rows (headed ``row_label``), metrics as columns; several tables when the columns exceed the page."""
    columns = list(means.columns)
    bests = {c: _best(means[c], str(c)) for c in columns}
    heads = {c: f"{c}{' ↓' if F.lower_is_better(str(c)) else ''}" for c in columns}
    cells: dict[Any, list[str]] = {}
    for c in columns:
        texts = []
        for system in means.index:
            text = _format(means.at[system, c])
            if stds is not None and c in stds.columns and pd.notna(stds.at[system, c]):
                text += f" ± {stds.at[system, c]:.4f}"
            p = marks.get(str(c), {}).get(str(system))
            if p is not None and p < ALPHA:
                text += "\u00a0†"  # no break: the mark stays with its value
            texts.append(text)
        cells[c] = texts
    first = _width([row_label, *map(str, means.index)])
    chunks = _column_chunks(first, [_width([heads[c], *cells[c]]) for c in columns])
    tables = []
    for n, chunk in enumerate(chunks):
        cols = [columns[j] for j in chunk]
        head = "".join(f"<th>{_esc(heads[c])}</th>" for c in cols)
        rows = []
        for i, system in enumerate(means.index):
            row = [f'<td class="system">{_esc(system)}</td>']
            for c in cols:
                cls = ' class="best"' if bests[c] == str(system) else ""
                row.append(f"<td{cls}>{_esc(cells[c][i])}</td>")
            rows.append("<tr>" + "".join(row) + "</tr>")
        tid = table_id if n == 0 else f"{table_id}-{n + 1}"
        part = caption if len(chunks) == 1 else f"{caption} (columns {chunk[0] + 1}–{chunk[-1] + 1} of {len(columns)})"
        tables.append(
            f'<table id="{_esc(tid)}"><caption class="muted">{_esc(part)}</caption>'
            f"<thead><tr><th>{_esc(row_label)}</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(tables)


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
}


def _tex(text: Any) -> str:
    """``text`` as LaTeX text: special characters escaped, control characters (line breaks too) as spaces."""
    return "".join(_TEX_SPECIAL.get(ch, " " if ch < " " or ch == "\x7f" else ch) for ch in str(text))


_LABEL = re.compile(r"[A-Za-z0-9:._\-]+")


def _tex_label(label: str) -> str:
    """``label`` as a ``\\label`` key: kept when it is letters, digits and ``:._-``; else those, plus a digest.

    >>> _tex_label("tab:ml-100k-one-shot"), _tex_label("tab:a/b {x}%")
    ('tab:ml-100k-one-shot', 'tab:a-b--x---d91e774c')
    """
    if _LABEL.fullmatch(label):
        return label
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9:._\-]", "-", label) + "-" + digest


def latex_table(
    means: pd.DataFrame, marks: Mapping[str, Mapping[str, float]] | None = None, caption: str = "", label: str = ""
) -> str:
    """A booktabs table (systems as rows): best value per column in bold, ``\\dag`` for significant differences.

    Returns
    -------
    str
        The ``table`` environment, one line per row, ending in a newline.

    Examples
    --------
    >>> print(latex_table(pd.DataFrame({"ndcg@10": [0.2, 0.3]}, index=["pop", "knn_50"])).splitlines()[7])
    knn\\_50 & \\textbf{0.3000} \\\\
    """
    marks = marks or {}
    cols = list(means.columns)
    header = " & ".join(_tex(c) + (r" $\downarrow$" if F.lower_is_better(str(c)) else "") for c in cols)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{l" + "r" * len(cols) + "}",
        r"\toprule",
        f"configuration & {header} \\\\",
        r"\midrule",
    ]
    bests = {c: _best(means[c], str(c)) for c in cols}
    for system in means.index:
        cells = []
        for c in cols:
            text = _format(means.at[system, c]).replace("–", "--")
            if bests[c] == str(system):
                text = rf"\textbf{{{text}}}"
            p = marks.get(str(c), {}).get(str(system))
            if p is not None and p < ALPHA:
                text += r"$^\dagger$"
            cells.append(text)
        lines.append(_tex(system) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{_tex(caption)}}}")
    if label:
        lines.append(rf"\label{{{_tex_label(label)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _frame_html(frame: pd.DataFrame, table_id: str, max_rows: int = 200) -> str:
    shown = frame.head(max_rows)
    out = shown.to_html(
        index=False, border=0, table_id=table_id, float_format=lambda v: f"{v:.4f}", na_rep="–", escape=True
    )
    if len(frame) > max_rows:
        out += f'<p class="muted">first {max_rows} of {len(frame)} rows</p>'
    return out


# ---------------------------------------------------------------- reading a result directory
class _Results:
    """Read-only access to a result directory's tables (finished tasks only; never rewrites files)."""

    def __init__(self, root: Path) -> None:
        from receval.experiment.store import ResultStore

        self.root = root
        self.store = ResultStore(root)
        parts = self.store.parts
        self.part_mtime = (
            max((p.stat().st_mtime for p in parts.glob("*.parquet")), default=0.0) if parts.exists() else 0.0
        )
        self._cache: dict[str, pd.DataFrame | None] = {}

    def names(self) -> list[str]:
        combined = {p.stem for p in self.root.glob("*.parquet")}
        return sorted(combined | set(self.store.table_names()[1:] if self.store.parts.exists() else ()))

    def get(self, name: str) -> pd.DataFrame | None:
        if name not in self._cache:
            path = self.root / f"{name}.parquet"
            frame = None
            if path.exists() and path.stat().st_mtime >= self.part_mtime:
                frame = pd.read_parquet(path)
            elif self.store.parts.exists():
                frame = self.store.read_parts("task" if name == "tasks" else name)
                frame = frame if len(frame) else (pd.read_parquet(path) if path.exists() else None)
            elif path.exists():
                frame = pd.read_parquet(path)
            self._cache[name] = frame
        return self._cache[name]


def _system_labels(tasks: pd.DataFrame) -> pd.Series:
    """Each task's configuration: its label without seed, fold and ``<dataset>/`` (a data set name may hold a /)."""
    label = tasks["label"] if "label" in tasks else tasks.get("recommender", tasks["task_id"]).astype(str)
    configs = label.astype(str).str.replace(r" seed=\d+( fold=\d+)?$", "", regex=True)
    if "dataset" not in tasks:
        return configs.str.split("/", n=1).str[-1]
    prefixes = tasks["dataset"].astype(str) + "/"
    return pd.Series(
        [c[len(p) :] if c.startswith(p) else c for c, p in zip(configs, prefixes, strict=True)], index=tasks.index
    )


def build_report(
    results_dir: str | Path,
    out: str | Path | None = None,
    *,
    latex_dir: str | Path | None = None,
    figures_dir: str | Path | None = None,
    dataset_overview: bool = True,
) -> Path:
    """Write the HTML report of ``results_dir`` to ``out`` (default ``results_dir/report.html``); returns its path.

    Never raises for a missing, empty, partial or older-version directory: the report
    says what is missing instead (a tuning run's folder has its own report,
    :func:`receval.report.tune.report_tune_folder`). ``figures_dir`` also
    saves every figure as PNG and SVG; ``latex_dir`` writes the summary tables as
    ``<dataset>-<protocol>.tex`` (each name made a safe file name,
    :func:`~receval.outputs.safe_name`). All the files appear together.

    Returns
    -------
    pathlib.Path
        The report written.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> page = build_report(folder).read_text(encoding="utf-8")  # not a store: the page says so
    >>> "Missing or incomplete:" in page and "has no experiment.json" in page
    True
    """
    t0 = time.perf_counter()
    root = Path(results_dir)
    out = Path(out) if out is not None else root / "report.html"
    folders = [Path(d) for d in (latex_dir, figures_dir) if d is not None]
    with publish(out.parent, *folders) as publication:
        _build_report(root, out, publication, latex_dir, figures_dir, dataset_overview, t0)
    return out


def _build_report(
    root: Path,
    out: Path,
    publication: Publication,
    latex_dir: str | Path | None,
    figures_dir: str | Path | None,
    dataset_overview: bool,
    t0: float,
) -> None:
    rep = Report(
        title=f"receval report: {root.name or root}",
        figures_dir=Path(figures_dir) if figures_dir else None,
        publication=publication,
    )
    meta = None
    from receval.experiment.tune import SUMMARY_FILE

    try:
        from receval.experiment.store import ResultStore

        meta = ResultStore(root).meta()
    except Exception as err:
        rep.notice(f"experiment.json unreadable: {type(err).__name__}: {err}")
    if not root.exists():
        rep.notice(f"{str(root)!r} does not exist: no experiment.json, no results")
    elif meta is None and (root / SUMMARY_FILE).is_file():
        rep.notice(f"{str(root)!r} holds a tuning run ({SUMMARY_FILE}): its report is 'receval report {root}'")
    elif meta is None:
        rep.notice(f"{str(root)!r} has no experiment.json (not a receval experiment, or written by an older version)")
    else:
        rep.title = f"receval report: {meta.get('name', root.name)}"
    results = _Results(root)
    _damaged_notice(rep, results)
    rep.section("overview", lambda: _overview(rep, results, meta))
    rep.section("evaluation card", lambda: _card(rep, root))
    tasks = None
    try:
        tasks = results.get("tasks")
    except Exception as err:
        rep.notice(f"tasks table unreadable: {type(err).__name__}: {err}")
    if tasks is None or tasks.empty or "task_id" not in tasks:
        rep.notice("no finished task: nothing to summarise (run the experiment first)")
    else:
        ok = tasks[tasks["status"] == "ok"].copy() if "status" in tasks else tasks.copy()
        ok["system"] = _system_labels(ok)
        rep.styles = system_styles(sorted(set(ok["system"])))  # the summary tables' order
        if "dataset" not in ok:
            ok["dataset"] = "data"
            rep.notice("tasks table has no 'dataset' column (older version?): all tasks grouped as one data set")
        if dataset_overview and meta is not None:
            rep.section("data sets", lambda: _datasets(rep, meta, sorted(set(ok["dataset"]))))
        protocols = ok["protocol"] if "protocol" in ok else pd.Series("one-shot", index=ok.index)
        for (dataset, protocol), part in ok.groupby([ok["dataset"], protocols], sort=True):
            title = f"{dataset} — {protocol}"
            rep.section(title, partial(_protocol, rep, results, dataset, protocol, part, latex_dir))
        if ok["dataset"].nunique() >= 2:
            rep.section("across data sets", lambda: _across_datasets(rep, results))
        rep.section("failed tasks", lambda: _failed(rep, tasks))
    extra = [n for n in results.names() if n not in _KNOWN_TABLES]
    if extra:
        rep.raw(f'<p class="muted">Further tables (not shown): {_esc(", ".join(extra))}</p>')
    _write_files(rep, publication, latex_dir)
    subtitle = f"{root} · generated {pd.Timestamp.now(tz='UTC'):%Y-%m-%d %H:%M} UTC in {time.perf_counter() - t0:.1f} s"
    write_text(publication.path(out), rep.render(subtitle))


def _write_files(rep: Report, publication: Publication, latex_dir: str | Path | None) -> None:
    """The LaTeX tables (one file each, named by :func:`safe_name`) and each folder's ``index.json``."""
    if latex_dir is not None:
        for name, tex in rep.tables.items():
            path = Path(latex_dir) / f"{safe_name(name)}.tex"
            write_text(publication.path(path), tex)
            rep.files[path] = name
    # each folder's index is written even when empty: it says how many tables or figures this report made
    given = [Path(d) for d in (latex_dir, rep.figures_dir) if d is not None]
    by_folder: dict[Path, dict[str, str]] = {folder: {} for folder in given}
    for path, what in rep.files.items():
        by_folder.setdefault(path.parent, {})[path.name] = what
    for folder, index in by_folder.items():
        # what an earlier report wrote here (its index says) and this one does not goes: a table or figure of
        # another run's metrics would pass for this run's; files no report listed are left alone
        publication.owns(folder, _indexed(folder))
        write_text(publication.path(folder / INDEX), json.dumps(index, indent=1, sort_keys=True, ensure_ascii=False))


def _indexed(folder: Path) -> list[str]:
    """The files an earlier report listed in ``folder``'s index (plain names in the folder only), else none.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / INDEX).write_text('{"ndcg.tex": "ndcg", "../x": "elsewhere"}')
    >>> _indexed(folder), _indexed(folder / "none")
    (['ndcg.tex'], [])
    """
    try:
        index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or not one receval wrote: nothing of it is known to be ours
        return []
    names = index if isinstance(index, dict) else {}
    return [n for n in names if isinstance(n, str) and n not in ("", ".", "..", INDEX) and Path(n).name == n]


def _damaged_notice(rep: Report, results: _Results) -> None:
    """Name the tasks whose files are missing, unreadable or changed: they are left out until a resumed run."""
    try:
        damaged = results.store.damaged()
    except Exception as err:  # a store too damaged to scan still gets a report
        rep.notice(f"the task files could not be checked: {type(err).__name__}: {err}")
        return
    if damaged:
        listed = "; ".join(f"{task_id}: {why}" for task_id, why in sorted(damaged.items()))
        rep.notice(
            f"{len(damaged)} damaged task(s) left out of every table (`receval run` again to redo them): {listed}"
        )


_KNOWN_TABLES = {
    "tasks",
    "aggregates",
    "per_user",
    "slices",
    "groups",
    "trajectories",
    "coherence",
    "coherence_rmse",
    "metaeval_swap",
    "metaeval_swap_curves",
    "metaeval_discriminative",
    "metaeval_incompleteness",
}


def _overview(rep: Report, results: _Results, meta: Mapping[str, Any] | None) -> None:
    rep.heading("Experiment")
    tasks = results.get("tasks") if results.root.exists() else None
    n_expected = (meta or {}).get("n_tasks")
    status = tasks["status"].value_counts().to_dict() if tasks is not None and "status" in tasks else {}
    n_done = 0 if tasks is None else len(tasks)
    rows = [
        ("name", (meta or {}).get("name", "–")),
        ("configuration hash", (meta or {}).get("config_hash", "–")),
        ("configuration file", (meta or {}).get("source", "–")),
        ("created", (meta or {}).get("created", "–")),
        ("receval version (experiment)", (meta or {}).get("receval_version", "–")),
        (
            "tasks",
            f"{n_expected if n_expected is not None else '?'} planned, {status.get('ok', 0)} ok, "
            f"{n_done - status.get('ok', 0)} failed, "
            f"{(n_expected - n_done) if n_expected is not None else '?'} not run",
        ),
    ]
    if tasks is not None and len(tasks):
        if "versions" in tasks:
            vers = sorted(set(tasks["versions"].dropna()))
            if vers:
                rows.append(("versions", ", ".join(f"{k} {v}" for k, v in json.loads(vers[-1]).items())))
                if len(vers) > 1:
                    rep.notice(f"tasks ran under {len(vers)} different sets of package versions")
        if "seconds" in tasks:
            rows.append(("compute time", f"{tasks['seconds'].sum():.1f} s over {len(tasks)} tasks"))
        if "worker" in tasks:
            rows.append(("workers", ", ".join(sorted(set(tasks["worker"].astype(str))))[:300]))
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)
    rep.raw(f'<table id="provenance" class="facts">{body}</table>')
    if n_expected is not None and n_done < n_expected:
        rep.notice(
            f"partial results: {n_done} of {n_expected} tasks finished; "
            f"run the same `receval run` command again to finish the other {n_expected - n_done}"
        )
    if status.get("failed"):
        rep.notice(f"{status['failed']} task(s) failed (listed at the end)")
    if meta is not None and "config" in meta:
        rep.raw(
            "<details><summary>Configuration</summary><pre>"
            + _esc(json.dumps(meta["config"], indent=2, sort_keys=True, default=str))
            + "</pre></details>"
        )


def _card(rep: Report, root: Path) -> None:
    """The run's evaluation card (card.json, :mod:`receval.experiment.card`): what to rerun it bit for bit."""
    path = root / "card.json"
    if not path.is_file():  # stores written before cards existed, or by hand: the overview says what there is
        return
    card = json.loads(path.read_text(encoding="utf-8"))
    rep.heading("Evaluation card")

    def words(value: Any) -> str:
        return json.dumps(value, sort_keys=True, default=str)

    rows = [(f"data {label}", words(data)) for label, data in card.get("data", {}).items()]
    rows += [(key, words(card.get(key))) for key in ("preprocessing", "split", "protocol", "conventions", "metrics")]
    rows += [(key, words(card.get(key))) for key in ("tests", "seeds", "versions")]
    rows += [(f["rule"], f"{f['message']} [{f['reference']}]") for f in card.get("findings", [])]
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)
    rep.raw(f'<table id="card" class="facts">{body}</table>')
    rep.raw(
        "<details><summary>Configuration to rerun (card.json: config_toml)</summary><pre>"
        + _esc(card.get("config_toml", ""))
        + "</pre></details>"
    )


def _datasets(rep: Report, meta: Mapping[str, Any], names: list[str]) -> None:
    from receval.data.stats import dataset_stats
    from receval.experiment.config import DatasetSpec
    from receval.experiment.datasets import prepare_dataset
    from receval.experiment.store import recorded_data_path

    specs = (meta.get("config") or {}).get("datasets") or {}
    rep.heading("Data sets")
    for name in names:
        spec = specs.get(name)
        if spec is None:
            rep.notice(f"data set {name!r}: not described in experiment.json; no overview")
            continue
        try:
            gen = spec.get("generate")
            if gen is not None and gen.get("n_ratings", 0) > _MAX_DATA_RATINGS:
                raise DataError(f"generated data set of {gen['n_ratings']:,} ratings: too large to regenerate here")
            path = recorded_data_path(meta, name)  # where the run read it, whatever the folder of this report
            if gen is None and (path is None or not Path(path).exists()):
                raise DataError(f"data file {path or spec.get('path')!r} is not available on this machine")
            ds = DatasetSpec(
                name,
                path=path,
                format=spec.get("format"),
                generate=gen,
                filters=spec.get("filters") or {},
                options={
                    k: v for k, v in spec.items() if k not in ("path", "format", "generate", "filters", "threshold")
                },
            )
            data = prepare_dataset(ds).data
        except Exception as err:
            rep.notice(f"data set {name!r}: overview not drawn ({err})")
            continue
        stats = dataset_stats(data)
        rep.heading(name, 3)
        rep.figure(
            f"dataset-{name}",
            f"{name}: rating distribution, item popularity (log–log) and user activity",
            partial(F.dataset_overview, data, stats),
        )


def _protocol(rep: Report, results: _Results, dataset: str, protocol: str, tasks: pd.DataFrame, latex_dir: Any) -> None:
    rep.heading(f"{dataset}: {_PROTOCOL_HEADINGS.get(protocol, protocol)}")
    handler = _PROTOCOLS.get(protocol)
    agg = results.get("aggregates")
    if agg is not None and len(agg) and {"task_id", "metric", "value"} <= set(agg.columns) and protocol != "metaeval":
        merged = agg.merge(tasks[["task_id", "system"]], on="task_id")
        if len(merged):
            _summary(rep, results, merged, tasks, f"{dataset}-{protocol}", protocol)
    elif protocol != "metaeval":
        rep.notice(f"{dataset}/{protocol}: no aggregates table")
    if handler is None:
        rep.notice(f"{dataset}: protocol {protocol!r} has no figures in this receval version")
        return
    handler(rep, results, dataset, tasks)


def _summary(
    rep: Report, results: _Results, merged: pd.DataFrame, tasks: pd.DataFrame, name: str, protocol: str
) -> None:
    grouped = merged.groupby(["system", "metric"], sort=False)["value"]
    means = grouped.mean().unstack("metric").sort_index()
    means = means[[m for m in dict.fromkeys(merged["metric"]) if m in means.columns]]
    stds = grouped.std().unstack("metric").reindex_like(means)
    if protocol == "coherence-split":  # one column per (model, p): show the Avg and rating ratio only
        keep = [c for c in means.columns if c.startswith(("Avg(", "base_error(", "rating_ratio("))]
        means, stds = means[keep], stds[keep]
    means = means.loc[:, means.notna().any()]
    per_user = _per_user(results, tasks)
    marks: dict[str, dict[str, float]] = {}
    if per_user is not None:
        by_metric = dict(tuple(per_user.groupby("metric", sort=False, observed=True)))
        for c in means.columns:
            best = _best(means[c], str(c))
            if best is not None and c in by_metric:
                marks[str(c)] = significance_marks(by_metric[c], str(c), best)
    n_seeds = merged.groupby("system")["task_id"].nunique().max()
    caption = f"mean{' ± std over ' + str(n_seeds) + ' seeds/folds' if n_seeds > 1 else ''} of each metric; " + (
        "† after Holm correction" if marks else "no per-user values stored: no significance tests"
    )
    if not marks:
        rep.notice(f"{name}: no per-user values, so no significance marks")
    shown = means.iloc[:, :12]
    rep.raw(_summary_html(shown, stds if n_seeds > 1 else None, marks, f"summary-{name}", caption))
    if means.shape[1] > 12:
        rep.raw(f'<p class="muted">{means.shape[1] - 12} further metrics in the LaTeX table</p>')
    rep.tables[name] = latex_table(means, marks, caption=f"{name}: {caption}", label=f"tab:{name}")


def _per_user(results: _Results, tasks: pd.DataFrame) -> pd.DataFrame | None:
    pu = results.get("per_user")
    if pu is None or pu.empty or not {"task_id", "metric", "value"} <= set(pu.columns):
        return None
    user = "user_index" if "user_index" in pu else "user"
    merged = pu.merge(tasks[["task_id", "system"]], on="task_id")
    return merged.rename(columns={user: "user_key"}).assign(user=lambda f: f["user_key"])[
        ["system", "user", "metric", "value"]
    ]


def _one_shot(rep: Report, results: _Results, dataset: str, tasks: pd.DataFrame) -> None:
    per_user = _per_user(results, tasks)
    if per_user is None:
        rep.notice(f"{dataset}: no per-user values (per_user table): no confidence intervals")
    else:
        table = F.bootstrap_table(per_user, n_resamples=500)
        rep.figure(
            f"{dataset}-bars",
            f"{dataset}: mean of each metric over users with 95% bootstrap CIs",
            lambda: F.metric_bars(table, styles=rep.styles),
        )
    agg = results.get("aggregates")
    if agg is not None:  # without it _protocol has noted "no aggregates table"
        agg = agg.merge(tasks[["task_id", "system"]], on="task_id")
        summary = agg.groupby(["system", "metric"], sort=False)["value"].mean().unstack("metric")
        if F.precision_recall_cutoffs(summary.columns):  # drawn when the metrics asked allow it, else not named
            caption = f"{dataset}: precision vs recall at the cutoffs k"
            rep.figure(f"{dataset}-pr", caption, partial(F.precision_recall, summary, styles=rep.styles))
    _group_gaps(rep, results, dataset, tasks)
    slices = results.get("slices")
    if slices is None or slices.empty:
        return
    user = "user_index" if "user_index" in slices else "user"
    merged = slices.merge(tasks[["task_id", "system"]], on="task_id")
    means = (
        merged.groupby(["dimension", "slice", "group", "system", "metric", user], sort=False, observed=True)["value"]
        .mean()
        .groupby(level=[0, 1, 2, 3, 4], sort=False, observed=True)
        .mean()
        .reset_index()
    )
    if {"low", "high"} <= set(merged.columns):  # quantile groups' ranges: the median over seeds and folds
        keys = ["dimension", "slice", "group"]
        means = means.merge(merged.groupby(keys, sort=False, observed=True)[["low", "high"]].median(), on=keys)
    for metric in list(dict.fromkeys(means["metric"]))[:2]:
        rep.figure(
            f"{dataset}-slices-{metric}",
            f"{dataset}: {metric} per slice group",
            partial(F.slice_heatmap, means, metric, systems=list(rep.styles)),
        )


def _group_gaps(rep: Report, results: _Results, dataset: str, tasks: pd.DataFrame) -> None:
    """The configuration's ``groups``: per system and metric, each group's mean, the gap, its test and interval.

    Over several seeds or folds the means and gaps are averaged over the tasks, the p-value shown is the largest
    of the tasks' (a gap is claimed only where every task finds it) and the interval spans the tasks' intervals.
    """
    gaps = results.get("groups")
    if gaps is None or gaps.empty:
        return
    merged = gaps.merge(tasks[["task_id", "system"]], on="task_id")
    if merged.empty:
        return
    keys = ["system", "metric"]
    per_group = merged.groupby([*keys, "group"], sort=False)["mean"].mean().reset_index()
    names = per_group.groupby(keys, sort=False).apply(
        lambda f: ", ".join(f"{g} {m:.4g}" for g, m in zip(f["group"], f["mean"], strict=True)), include_groups=False
    )
    one = merged.drop_duplicates(["task_id", "metric"])
    by = one.groupby(keys, sort=False)
    adjusted = by["p_value_adj"].max() if "p_value_adj" in one else by["p_value"].max()
    frame = pd.DataFrame({"group means": names, "gap": by["gap"].mean(), "CI": by["ci_low"].min().map("{:.4g}".format)
                          + " … " + by["ci_high"].max().map("{:.4g}".format), "test": by["test"].first(),
                          "p": by["p_value"].max(), "p corrected": adjusted, "Hedges' g": by["effect_size"].mean(),
                          "tasks": by["task_id"].nunique()}).reset_index()  # fmt: skip
    rep.heading(f"{dataset}: gaps between user groups", level=3)
    rep.text(
        "Each metric's gap between the configuration's user groups (two groups: first minus second by name; more: "
        "the range of the group means), with its unpaired test, Holm-corrected across the metrics, a bootstrap 95% "
        "interval and Hedges' g. Over several seeds or folds: means averaged, the largest p-value, the interval "
        "spanning the tasks' intervals."
    )
    rep.raw(_frame_html(frame, f"group-gaps-{safe_name(dataset)}"))


def _across_datasets(rep: Report, results: _Results) -> None:
    """Per metric, the Friedman test over the data sets and its critical-difference diagram (Demšar, JMLR 2006)."""
    from receval.report.claims import cd_diagram, friedman_of

    agg = results.get("aggregates")
    if agg is None or agg.empty:
        return
    rep.heading("Across data sets: Friedman and Nemenyi")
    rep.text(
        "Each configuration's mean on each data set, ranked within the data set (1 = best); the Friedman test of "
        "equal average ranks and the Nemenyi critical difference (CD) at α = 0.05. Configurations joined by a bar "
        "in a diagram are not told apart. As receval results --friedman METRIC prints it."
    )
    for metric in dict.fromkeys(agg["metric"].astype(str)):
        try:
            result, table, _ = friedman_of(results.store, metric)
        except DataError as err:
            rep.notice(f"across data sets, {metric}: {err}")
            continue
        rep.heading(
            f"{metric}: χ² = {result.statistic:.4g}, p = {result.pvalue:.4g} over {len(table)} data sets; "
            f"CD = {result.cd:.3g}",
            level=3,
        )
        ranks = pd.DataFrame({"configuration": result.systems, "average rank": result.avg_ranks})
        rep.frame(ranks.sort_values("average rank", kind="stable"), f"friedman-{safe_name(metric)}")
        rep.figure(f"cd-{metric}", f"Critical-difference diagram of {metric}", partial(cd_diagram, result))


def _cyclic(rep: Report, results: _Results, dataset: str, tasks: pd.DataFrame) -> None:
    traj = results.get("trajectories")
    if traj is None or traj.empty:
        rep.notice(f"{dataset}: no trajectories table: no curves")
        return
    traj = traj.merge(tasks[["task_id", "system"]], on="task_id")
    if traj.empty:
        rep.notice(f"{dataset}: no trajectory of a finished task")
        return
    mean = traj.drop(columns="task_id").groupby(["system", "round"], sort=False).mean(numeric_only=True).reset_index()
    _trajectory_figures(rep, dataset, mean, " (mean over seeds)", _tau_variants(tasks))


def _tau_variants(tasks: pd.DataFrame) -> dict[str, str]:
    """Each system's Kendall τ variant: its task's ``[protocol] tau``, else its preset's (``SIMULATION_PRESETS``)."""
    from receval.recommenders.registry import simulation_option

    if "options" not in tasks:  # a store without the tasks' options: the standard preset's
        return {}
    options = [json.loads(o) if isinstance(o, str) else {} for o in tasks["options"]]
    return {
        str(s): str(simulation_option("tau", o.get("preset"), o.get("tau")))
        for s, o in zip(tasks["system"], options, strict=True)
    }


def _tau_figure(taus: pd.DataFrame, variant: str) -> Any:
    """:func:`~receval.report.figures.tau_plot` with its axis naming the τ variant the curve is."""
    fig = F.tau_plot(taus)
    ax = fig.axes[0]
    ax.set_ylabel(re.sub(r"τ-[ab]", f"τ-{variant}", ax.get_ylabel()))
    return fig


def _trajectory_figures(
    rep: Report, name: str, mean: pd.DataFrame, over: str = "", variants: Mapping[str, str] | None = None
) -> None:
    """Metrics vs round, Kendall τ vs round and ranks vs round of a long table ``system, round, metrics``.

    ``variants`` gives each system's τ variant (``a`` or ``b``; a system without one: the
    standard preset's): one τ figure per variant, over the systems run with it.
    """
    from receval.recommenders.registry import simulation_option
    from receval.stats.agreement import ranks_over_time, tau_curve

    rep.figure(
        f"{name}-cyclic",
        f"{name}: cumulative and normalised metrics vs round{over}",
        lambda: F.cyclic_curves(mean, algorithm="system", styles=rep.styles),
    )
    runs = {s: g.drop(columns="system").reset_index(drop=True) for s, g in mean.groupby("system", sort=False)}
    variant_of = {s: (variants or {}).get(str(s)) or str(simulation_option("tau")) for s in runs}
    chosen = sorted(set(variant_of.values()))
    several = len(chosen) > 1
    for variant in chosen:  # a grid over tau (or preset) is one agreement per variant, each over its own systems
        part = {s: run for s, run in runs.items() if variant_of[s] == variant}
        taus = tau_curve(part, "recall", "fallout", tau=variant).rename(columns={"tau": "recall_fallout"})
        if {"precision", "anti_precision"} <= set(mean.columns):
            anti = tau_curve(part, "precision", "anti_precision", tau=variant)
            taus["precision_anti_precision"] = anti["tau"].to_numpy()
        rep.figure(
            f"{name}-tau-{variant}" if several else f"{name}-tau",
            f"{name}: Kendall τ-{variant} between the rankings by Recall and by Fallout vs round"
            + (f" (the configurations with tau = {variant})" if several else ""),
            partial(_tau_figure, taus, variant),
        )
    rep.figure(
        f"{name}-ranks",
        f"{name}: each algorithm's rank by Recall and by Fallout vs round",
        lambda: F.rank_plot({m: ranks_over_time(runs, m) for m in ("recall", "fallout")}, styles=rep.styles),
    )


def _coherence(rep: Report, results: _Results, dataset: str, tasks: pd.DataFrame) -> None:
    table = results.get("coherence")
    if table is None or table.empty:
        rep.notice(f"{dataset}: no coherence table")
        return
    table = table[table["task_id"].isin(tasks["task_id"])]
    opts = json.loads(tasks["options"].iloc[0]) if "options" in tasks else {}
    if table["p"].nunique() < 2:
        rep.notice(f"{dataset}: relative RMSE at a single p only ({table['p'].iloc[0]:g}): curves need two or more")
    rep.figure(
        f"{dataset}-coherence",
        f"{dataset}: RMSE change relative to All-All vs share p of difficult users",
        lambda: F.coherence_curves(
            table.drop(columns="task_id"), gamma=str(opts.get("gamma", "wstd")), folds=int(opts.get("folds", 5))
        ),
    )
    cols = [
        c
        for c in (
            "recommender",
            "p",
            "base_error",
            "All-Diff",
            "All-Easy",
            "Diff-Diff",
            "Easy-Easy",
            "Avg",
            "rating_ratio",
            "best",
            "worst",
        )
        if c in table.columns
    ]
    rep.raw(_frame_html(table[cols], f"coherence-{dataset}"))


def _metaeval(rep: Report, results: _Results, dataset: str, tasks: pd.DataFrame) -> None:
    def part(name: str) -> pd.DataFrame | None:
        frame = results.get(name)
        if frame is None or frame.empty:
            rep.notice(f"{dataset}: no {name} table")
            return None
        return frame[frame["task_id"].isin(tasks["task_id"])].drop(columns="task_id")

    swap = part("metaeval_swap")
    if swap is not None:
        rep.heading("swap correlation", 3)
        rep.raw(_frame_html(swap, f"metaeval-swap-{dataset}"))
    curves = part("metaeval_swap_curves")
    if curves is not None:
        curves = curves.groupby(["mode", "metric", "level"], sort=False)["value"].mean().reset_index()
        rep.figure(
            f"{dataset}-swaps",
            f"{dataset}: metric value relative to the ideal list vs number of swaps",
            lambda: F.swap_curves(curves),
        )
    power = part("metaeval_discriminative")
    if power is not None:
        power = power.groupby(["metric", "test"], sort=False)["share"].mean().reset_index()
        rep.heading("discriminative power", 3)
        rep.raw(
            _frame_html(
                power.pivot_table(index="metric", columns="test", values="share").reset_index(),
                f"metaeval-power-{dataset}",
            )
        )
        rep.figure(f"{dataset}-power", f"{dataset}: discriminative power", lambda: F.discriminative_bars(power))
    robust = part("metaeval_incompleteness")
    if robust is not None:
        rep.figure(
            f"{dataset}-incompleteness",
            f"{dataset}: robustness to incomplete judgments",
            lambda: F.incompleteness_plot(robust),
        )


_PROTOCOLS: dict[str, Callable[[Report, _Results, str, pd.DataFrame], None]] = {
    "one-shot": _one_shot,
    "cyclic": _cyclic,
    "coherence-split": _coherence,
    "metaeval": _metaeval,
}


def _failed(rep: Report, tasks: pd.DataFrame) -> None:
    if "status" not in tasks:
        return
    bad = tasks[tasks["status"] != "ok"]
    if bad.empty:
        return
    rep.heading("Failed tasks")
    cols = [c for c in ("task_id", "label", "error") if c in bad.columns]
    rep.raw(_frame_html(bad[cols], "failed-tasks"))


# ---------------------------------------------------------------- in-memory tables (receval demo)
def report_from_tables(
    tables: Mapping[str, Any],
    out: str | Path,
    *,
    title: str = "receval demo",
    latex_dir: str | Path | None = None,
    titles: Mapping[str, str] | None = None,
) -> Path:
    """Write a report of in-memory results, e.g. the dict :func:`receval.cli.demo.run_demo` returns.

    Recognised keys: ``stats`` (:func:`~receval.data.stats.dataset_stats`), ``data``
    (the :class:`~receval.data.interactions.Interactions`), ``per_user`` (long table
    ``system, user, metric, value``: CIs and significance marks), ``trajectories`` (long
    table ``system, round`` and the simulator's metrics: curves over the rounds), and any
    DataFrame with systems as rows and metrics as columns (``one_shot``, ``rmse``,
    ``cyclic``, ...); ``kendall_tau`` (dict) is shown as text. ``titles`` gives a key's
    heading in words (default: the key, spaced). Returns the path written.

    Returns
    -------
    pathlib.Path
        ``out``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> t = {"one_shot": pd.DataFrame({"ndcg@10": [0.1, 0.3]}, index=["random", "popularity"])}
    >>> p = report_from_tables(t, pathlib.Path(tempfile.mkdtemp()) / "r.html", titles={"one_shot": "One-shot"})
    >>> "popularity" in p.read_text() and "<h2>One-shot</h2>" in p.read_text()
    True
    """
    out = Path(out)
    with publish(out.parent, *([Path(latex_dir)] if latex_dir is not None else [])) as publication:
        rep = _tables_report(tables, title, titles or {})
        _write_files(rep, publication, latex_dir)
        write_text(publication.path(out), rep.render(f"generated {pd.Timestamp.now(tz='UTC'):%Y-%m-%d %H:%M} UTC"))
    return out


_TABLE_HEADINGS = {"data": "Data set", "trajectories": "Simulation: the metrics round by round"}


def _heading(key: str, titles: Mapping[str, str]) -> str:
    """A table's heading: its title when given, else its key with spaces, capitalised (``one_shot``: One shot)."""
    if key in titles or key in _TABLE_HEADINGS:
        return titles.get(key) or _TABLE_HEADINGS[key]
    words = key.replace("_", " ")
    return words[:1].upper() + words[1:]


def _tables_report(tables: Mapping[str, Any], title: str, titles: Mapping[str, str]) -> Report:
    rep = Report(title=title)
    frames = {k: f for k, f in tables.items() if isinstance(f, pd.DataFrame) and not f.empty}
    trajectories = frames.pop("trajectories", None)
    per_user = frames.pop("per_user", None)
    numerics = {k: f.select_dtypes("number") for k, f in frames.items()}
    numerics = {k: f for k, f in numerics.items() if not f.empty}
    groups = [list(f.index) for f in numerics.values()]
    groups += [] if trajectories is None else [list(dict.fromkeys(trajectories["system"]))]
    rep.styles = system_styles([s for group in groups for s in group], together=groups)  # distinct within a table
    stats, data = tables.get("stats"), tables.get("data")
    if stats is not None or data is not None:
        rep.heading(_heading("data", titles))
        if data is not None:
            rep.figure(
                "dataset",
                "rating distribution, item popularity (log–log) and user activity",
                lambda: F.dataset_overview(data, stats),
            )
        else:
            rep.figure(
                "dataset", "rating distribution and item popularity (log–log)", lambda: F.dataset_overview(None, stats)
            )
    for key, numeric in numerics.items():
        heading = _heading(key, titles)
        rep.heading(heading)
        rows = None
        if per_user is not None:  # only this table's systems and metrics (names may recur across tables)
            rows = per_user[per_user["system"].isin(numeric.index) & per_user["metric"].isin(numeric.columns)]
            rows = rows if not rows.empty else None
        marks: dict[str, dict[str, float]] = {}
        if rows is not None:
            for c in numeric.columns:
                best = _best(numeric[c], str(c))
                if best is not None:
                    marks[str(c)] = significance_marks(rows, str(c), best)
        what = "mean over users" if rows is not None else "one value per system"
        rep.raw(_summary_html(numeric, None, marks, f"summary-{key}", what, row_label="system"))
        rep.tables[key] = latex_table(numeric, marks, caption=heading, label=f"tab:{key}")
        if rows is not None:
            long = F.bootstrap_table(rows)
            caption = f"{heading}: mean of each metric over users with 95% bootstrap CIs"
        else:
            long = numeric.rename_axis("system").reset_index().melt(id_vars="system", var_name="metric")
            long = long.rename(columns={"value": "mean"}).assign(ci_low=np.nan, ci_high=np.nan)
            caption = f"{heading}: each metric per system"
        rep.figure(f"{key}-bars", caption, partial(F.metric_bars, long, styles=rep.styles))
    if trajectories is not None:
        rep.heading(_heading("trajectories", titles))
        _trajectory_figures(rep, "simulation", trajectories)
    tau = tables.get("kendall_tau")
    if isinstance(tau, Mapping):
        rep.text(
            "Kendall τ between the quality rankings: "
            + "; ".join(f"{F.pair_label(k)} {v:+.2f}" for k, v in tau.items())
            + " (+1: the two metrics rank the systems alike, −1: in reverse)."
        )
    if per_user is None:
        rep.notice("no per-user values: bars without confidence intervals, tables without significance marks")
    return rep
