"""The HTML report of ``receval compare``: what was compared, how, and what the tests say.

:func:`compare_report` writes one self-contained page from a
:class:`~receval.studies.compare.RunComparison`:

- a header: the truth file (and training data), the runs and their files, the threshold,
  the baseline, the users evaluated, the cold users (no training rating) and what the
  cold-start policy did with them and, per run, the users without a list; the test,
  the correction, α and the bootstrap set-up;
- the metric table (runs as rows), the best value of each column in bold, ``†`` exactly
  where the tests table's adjusted p-value is below α for the run against the best run
  of the column (or against the baseline, when one was given): the marks and the table
  are one family of comparisons, which the page names;
- one figure: each per-user metric's mean per run with its bootstrap interval;
- the tests table, headed by the test and correction actually used, p-values in
  scientific notation when small, one number format per column;
- with ``user_groups=``: the gaps between user groups per run and metric (group means,
  gap, interval, test, p-values, Hedges' g); with ``distribution=True``: the per-user
  utility quantiles, CVaR and risk–reward against the first run, and one figure of each
  metric's empirical CDF of per-user values per run.

Examples
--------
>>> import tempfile, pathlib
>>> from receval.studies.compare import compare_runs
>>> truth = pd.DataFrame({"user": [1, 1, 2, 2, 3, 4], "item": [10, 11, 10, 12, 11, 13]})
>>> runs = {
...     "a": pd.DataFrame({"user": [1, 2, 3, 4], "item": [10, 10, 11, 13], "rank": [1, 1, 1, 1]}),
...     "b": pd.DataFrame({"user": [1, 2, 3, 4], "item": [12, 11, 12, 10], "rank": [1, 1, 1, 1]}),
... }
>>> result = compare_runs(runs, truth, ["precision@1"], test="wilcoxon")
>>> page = compare_report(result, pathlib.Path(tempfile.mkdtemp()) / "cmp.html", truth="qrels.tsv").read_text()
>>> "Wilcoxon signed-rank test" in page and "paired t-test" not in page and "qrels.tsv" in page
True
>>> format_pvalue(2.5e-86), format_pvalue(0.0747), format_pvalue(0.0)
('2.5 × 10⁻⁸⁶', '0.075', '< 2.2 × 10⁻³⁰⁸')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from receval.atomic import publish, write_text
from receval.report import figures as F
from receval.report.html import ALPHA, Report, _best, _esc, _format, _summary_html
from receval.report.style import system_styles
from receval.stats.significance import CORRECTION_NAMES, STATISTIC_NAMES, TEST_NAMES, Correction, TestName

if TYPE_CHECKING:
    from receval.studies.compare import RunComparison

__all__ = ["compare_marks", "compare_report", "format_pvalue"]

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_SMALLEST = float(np.finfo(np.float64).tiny)  # a p-value of 0 is one below the smallest float


def format_pvalue(p: float) -> str:
    """A p-value as a reader takes it in: three decimals from 0.001, else ``m × 10⁻ᵉ`` (never ``0.0000``).

    Returns
    -------
    str
        ``"0.500"``, ``"9.9 × 10⁻⁴"``, ``"< 2.2 × 10⁻³⁰⁸"`` for 0, ``"–"`` for NaN.

    Examples
    --------
    >>> format_pvalue(0.5), format_pvalue(0.00099), format_pvalue(float("nan"))
    ('0.500', '9.9 × 10⁻⁴', '–')
    """
    if not math.isfinite(p):
        return "–"
    if p <= 0:
        return "< " + format_pvalue(_SMALLEST)
    if p >= 0.001:
        return f"{p:.3f}"
    mantissa, exponent = f"{p:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _column_format(values: Sequence[float]) -> str:
    """One format for a whole column: integers (with thousands separators) when every value is one,
    halves with one decimal (rank sums with ties), else about four significant digits of the largest.

    >>> _column_format([389.0, 22596.0]), _column_format([12.5, 3.0]), _column_format([-2.31, 14.2])
    ('{:,.0f}', '{:,.1f}', '{:,.2f}')
    >>> _column_format([0.012, -0.0031])  # a mean difference (randomisation test)
    '{:,.4f}'
    """
    finite = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if finite.size == 0 or np.all(finite == np.round(finite)):
        return "{:,.0f}"
    if np.all(2 * finite == np.round(2 * finite)):
        return "{:,.1f}"
    digits = 3 - math.floor(math.log10(float(np.max(np.abs(finite)))))
    return f"{{:,.{min(4, max(1, digits))}f}}"


def compare_marks(result: RunComparison) -> tuple[dict[str, dict[str, float]], str]:
    """``{metric: {run: adjusted p}}`` of the runs the summary marks, read from the tests table, and against what.

    Without a baseline each run is marked against the best run of the column (its row
    of the tests table, in either order); with one, against the baseline. The p-values
    are the table's ``pvalue_adj``: a mark is there exactly when that number is below :data:`ALPHA`.

    Returns
    -------
    tuple of (dict, str)
        The marks ``{metric: {run: adjusted p}}`` (every run compared, marked or not; a metric with no tests or no
        best run is left out) and what they were compared against, in words.

    Examples
    --------
    >>> from receval.studies.compare import compare_runs
    >>> truth = pd.DataFrame({"user": [1, 1, 2, 2, 3, 4], "item": [10, 11, 10, 12, 11, 13]})
    >>> runs = {"a": pd.DataFrame({"user": [1, 2, 3, 4], "item": [10, 10, 11, 13], "rank": 1}),  # hits 1, 1, 1, 1
    ...         "b": pd.DataFrame({"user": [1, 2, 3, 4], "item": [11, 11, 12, 10], "rank": 1})}  # hits 1, 0, 0, 0
    >>> marks, against = compare_marks(compare_runs(runs, truth, ["precision@1"]))  # paired t: t = 3 on 3 df
    >>> {m: {run: round(p, 4) for run, p in ps.items()} for m, ps in marks.items()}, against
    ({'precision@1': {'b': 0.0577}}, 'the best run of the column')
    >>> compare_marks(compare_runs(runs, truth, ["precision@1"], baseline="b"))[1]
    'the baseline b'
    """
    baseline = result.conventions.get("comparison", {}).get("baseline")
    tests = result.tests
    marks: dict[str, dict[str, float]] = {}
    for metric in result.summary.columns:
        rows = tests[tests["metric"] == metric]
        if rows.empty:
            continue
        other = baseline if baseline is not None else _best(result.summary[metric], str(metric))
        if other is None:
            continue
        found = {}
        for row in rows.itertuples():
            if other in (row.a, row.b) and row.a != row.b and math.isfinite(row.pvalue_adj):
                found[row.b if row.a == other else row.a] = float(row.pvalue_adj)
        marks[str(metric)] = found
    against = f"the baseline {baseline}" if baseline is not None else "the best run of the column"
    return marks, against


def compare_report(
    result: RunComparison,
    out: str | Path,
    *,
    truth: str | Path | None = None,
    train: str | Path | None = None,
    runs: Mapping[str, str | Path] | None = None,
    title: str = "receval compare",
) -> Path:
    """Write the comparison's HTML report to ``out``; returns the path.

    ``truth``, ``train`` and ``runs`` (``{run: file}``) name the inputs on the page; the
    threshold, users, test, correction, confidence and seed come from ``result.conventions``.

    Returns
    -------
    pathlib.Path
        ``out``, now holding the page.

    Examples
    --------
    >>> import tempfile
    >>> from receval.studies.compare import compare_runs
    >>> truth = pd.DataFrame({"user": [1, 1, 2, 2], "item": [10, 11, 10, 12]})
    >>> runs = {"a": pd.DataFrame({"user": [1, 2], "item": [10, 10], "rank": 1}),
    ...         "b": pd.DataFrame({"user": [1, 2], "item": [11, 11], "rank": 1})}
    >>> out = compare_report(compare_runs(runs, truth, ["precision@1"]), Path(tempfile.mkdtemp()) / "compare.html")
    >>> out.name, "Paired tests" in out.read_text(encoding="utf-8")
    ('compare.html', True)
    """
    out, alpha = Path(out), ALPHA
    comparison = result.conventions.get("comparison", {})
    test, correction = comparison.get("test", "ttest"), comparison.get("correction", "holm")
    marks, against = compare_marks(result)
    rep = Report(title=title, styles=system_styles(result.summary.index))
    rep.footnote = (
        f"Bold: best value of the column. †: the run differs from {against} by the tests table's adjusted "
        f"p-value ({TEST_NAMES[test]}, {_correction_words(correction)}) below α = {alpha:g}."
    )
    _header(rep, result, truth, train, runs, alpha)
    rep.heading("Metrics per run")
    tested = set(result.tests["metric"])
    untested = [str(m) for m in result.summary.columns if m not in tested]
    caption = f"† against {against}, α = {alpha:g}" + (
        f"; {', '.join(untested)}: one value per run (a system-level metric), not tested" if untested else ""
    )
    rep.raw(_summary_html(result.summary, None, marks, "summary-comparison", caption, row_label="run"))
    _figure(rep, result, comparison)
    rep.heading("Paired tests")
    rep.raw(_tests_html(result.tests, test, correction, alpha, comparison))
    _claims_section(rep, result.tests)
    _group_sections(rep, result, alpha)
    with publish(out.parent) as publication:
        write_text(publication.path(out), rep.render(f"generated {pd.Timestamp.now(tz='UTC'):%Y-%m-%d %H:%M} UTC"))
    return out


def _claims_section(rep: Report, tests: pd.DataFrame) -> None:
    """Each pair's minimum detectable effect and, with a margin, its TOST (``receval compare --margin``), when
    :func:`receval.studies.compare.claims_columns` added them to the tests."""
    if "mde" not in tests.columns or tests.empty:
        return
    from receval.studies.compare import within_margin_lines

    margin = "equivalent" in tests.columns
    columns = ["metric", "a", "b", "diff", "mde"] + (["margin", "tost_p", "tost_ci", "equivalent"] if margin else [])
    heads = {"mde": "mde (80% power, α = 0.05)", "tost_p": "TOST p", "tost_ci": "90% interval"}
    rows = []
    for row in tests.to_dict("records"):
        cells = {c: _format(row[c]) for c in columns if c in row}
        if margin:
            cells["tost_p"] = format_pvalue(float(row["tost_p"]))
            cells["tost_ci"] = f"[{_format(row['tost_ci_low'])}, {_format(row['tost_ci_high'])}]"
            cells["equivalent"] = "yes" if row["equivalent"] else "no"
        rows.append("<tr>" + "".join(f"<td>{_esc(cells[c])}</td>" for c in columns) + "</tr>")
    rep.heading("Power and equivalence")
    rep.text(
        "mde: the smallest mean difference the paired t-test detects with 80% probability at α = 0.05 with the "
        "pair's users and spread of differences (Sakai 2016)"
        + ("; TOST: two one-sided tests of |a - b| < margin (Schuirmann 1987)." if margin else ".")
    )
    head = "".join(f"<th>{_esc(heads.get(c, c))}</th>" for c in columns)
    rep.raw(f'<table class="claims"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')
    for line in within_margin_lines(tests):
        rep.text(line)


def _correction_words(correction: Correction) -> str:
    if correction == "none":
        return "p-values not corrected for multiple comparisons"
    return f"p-values {CORRECTION_NAMES[correction]}-corrected over each metric's comparisons"


def _header(
    rep: Report,
    result: RunComparison,
    truth: str | Path | None,
    train: str | Path | None,
    runs: Mapping[str, str | Path] | None,
    alpha: float,
) -> None:
    comparison = result.conventions.get("comparison", {})
    per_run = {name: result.conventions[name] for name in result.summary.index if name in result.conventions}
    first = next(iter(per_run.values()), None)
    rows: list[tuple[str, str]] = []
    if truth is not None:
        rows.append(("truth", str(truth)))
    rows.append(
        (
            "training data",
            str(train) if train is not None else "not given: the catalogue is the truth's and the runs' items",
        )
    )
    names = [str(n) for n in result.summary.index]
    rows.append(("runs", ", ".join(f"{n} ({runs[n]})" if runs and n in runs else n for n in names)))
    if first is not None:
        rows.append(("threshold λ", f"relevant: rating ≥ {first.threshold:g}"))
        if getattr(first, "convention", None):
            rows.append(("convention", str(first.convention)))
        evaluated = "truth users with at least one rating" + (
            ", the cold ones left out" if first.cold_start == "exclude" and first.users_cold else ""
        )
        rows.append(("users evaluated", f"{first.users_evaluated:,} ({evaluated})"))
        rows.append(("cold users", _cold_users(per_run)))
        without = {n: c.users_without_list for n, c in per_run.items()}
        rows.append(
            (
                "users without a list",
                ", ".join(f"{n} {v if v is not None else 0:,}" for n, v in without.items())
                + " (scored as empty lists)",
            )
        )
        rows.append(("users with no relevant item", _empty_users(first, set(result.tests["metric"]))))
    baseline = comparison.get("baseline")
    rows.append(("baseline", baseline if baseline is not None else "none: every pair of runs is compared"))
    test, correction = comparison.get("test", "ttest"), comparison.get("correction", "holm")
    rows.append(("paired test", f"{TEST_NAMES[test]}, two-sided, over the users both runs score"))
    rows.append(("correction", f"{CORRECTION_NAMES[correction]}, within each metric"))
    confidence = comparison.get("confidence", 0.95)
    rows.append(("α", f"{alpha:g}"))
    rows.append(
        (
            "intervals",
            f"{confidence:.0%} percentile bootstrap over users, {comparison.get('n_resamples', 2000):,} resamples, "
            f"seed {comparison.get('seed', 0)}",
        )
    )
    rep.heading("What was compared")
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)
    rep.raw(f'<table id="comparison-setup" class="facts">{body}</table>')


def _cold_users(per_run: Mapping[str, Any]) -> str:
    """The cold users and what the cold-start policy did with them: once, or per run when the runs differ."""
    from receval.cold_start import describe

    texts = {}
    for name, c in per_run.items():
        if c.users_cold is None:
            texts[name] = "not counted: give the training data (--train) to tell them"
        else:
            texts[name] = describe(c.cold_start, users_cold=c.users_cold,
                                   users_cold_without_list=c.users_cold_without_list,
                                   users_evaluated=c.users_evaluated).split(": ", 1)[1]  # fmt: skip
    policy = f" (cold-start policy: {next(iter(per_run.values())).cold_start})"
    if len(set(texts.values())) == 1:
        return next(iter(texts.values())) + policy
    return "; ".join(f"{name}: {text}" for name, text in texts.items()) + policy


def _empty_users(conventions: Any, tested: set[str]) -> str:
    """How users without a relevant truth item were scored, and how many users each tested metric scored."""
    policy = "skipped" if conventions.empty_users == "skip" else "scored 0"
    scored = {m: n for m, n in conventions.users_scored.items() if m in tested}
    if not scored:
        return policy
    counts = set(scored.values())
    if len(counts) == 1:
        return f"{policy}: {counts.pop():,} of {conventions.users_evaluated:,} users scored"
    return f"{policy}; users scored: " + ", ".join(f"{m} {n:,}" for m, n in scored.items())


def _figure(rep: Report, result: RunComparison, comparison: Mapping[str, Any]) -> None:
    per_user = result.per_user
    if per_user.empty:
        return
    confidence = comparison.get("confidence", 0.95)
    n = comparison.get("n_resamples", 2000)
    table = F.bootstrap_table(per_user, confidence=confidence, n_resamples=n, seed=comparison.get("seed", 0))
    rep.figure(
        "comparison-means",
        f"Mean of each metric over the users each run scores, with {confidence:.0%} bootstrap intervals",
        partial(F.metric_bars, table, styles=rep.styles),
    )


# (column, heading) of the tests table; the statistic's heading is the test's
_COLUMNS = (
    ("metric", "metric"),
    ("a", "run A"),
    ("b", "run B"),
    ("n", "users"),
    ("mean_a", "mean A"),
    ("mean_b", "mean B"),
    ("diff", "A − B"),
    ("ci", "{confidence:.0%} CI of A − B"),
    ("effect_size", "Cohen's d"),
    ("statistic", "{statistic}"),
    ("pvalue", "p"),
    ("pvalue_adj", "p adjusted ({correction})"),
)


_TEXT = ("metric", "a", "b")  # columns of names, left-aligned


def _tests_html(
    tests: pd.DataFrame, test: TestName, correction: Correction, alpha: float, comparison: Mapping[str, Any]
) -> str:
    if tests.empty:
        return '<p class="muted">No per-user metric: nothing to test.</p>'
    words = {
        "confidence": comparison.get("confidence", 0.95),
        "statistic": STATISTIC_NAMES[test],
        "correction": CORRECTION_NAMES[correction],
    }
    statistic = _column_format(tests["statistic"].astype(float).tolist())
    head = "".join(
        ('<th class="text">' if c in _TEXT else "<th>") + f"{_esc(h.format(**words))}</th>" for c, h in _COLUMNS
    )
    body = []
    for row in tests.to_dict("records"):
        cells = []
        for column, _ in _COLUMNS:
            if column == "ci":
                text = f"[{_format(row['ci_low'])}, {_format(row['ci_high'])}]"
            elif column == "n":
                text = f"{int(row['n']):,}"
            elif column == "effect_size":
                text = "–" if not math.isfinite(row[column]) else f"{row[column]:.2f}"
            elif column == "statistic":
                text = "–" if not math.isfinite(row[column]) else statistic.format(row[column])
            elif column in ("pvalue", "pvalue_adj"):
                text = format_pvalue(float(row[column]))
            else:
                text = _format(row[column])
            strong = column == "pvalue_adj" and math.isfinite(row[column]) and row[column] < alpha
            kind = "best" if strong else "text" if column in _TEXT else ""
            cells.append((f'<td class="{kind}">' if kind else "<td>") + f"{_esc(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = (
        f"{TEST_NAMES[test]} (two-sided) over the users both runs score; "
        f"{_correction_words(correction)}; adjusted p below α = {alpha:g} in bold"
    )
    return (
        f'<table id="paired-tests"><caption class="muted">{_esc(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


# --- user groups and the utility distribution ---
def _group_sections(rep: Report, result: RunComparison, alpha: float) -> None:
    """The group gaps table, the utility distribution table and the ECDF figure, when the comparison has them."""
    if result.groups:
        rep.heading("Gaps between user groups")
        rep.raw(_groups_html(result.groups, alpha))
    if result.distribution:
        rep.heading("Per-user utility: the worst-served users")
        rep.raw(_distribution_html(result.distribution, alpha))
        per_user = result.per_user[result.per_user["metric"].isin(list(result.distribution))]
        rep.figure(
            "utility-ecdf",
            "Empirical CDF of each metric's per-user values per run (a curve to the right and below serves users "
            "better; the left end is the worst-served users)",
            partial(_ecdf_figure, per_user, rep.styles),
        )


def _groups_html(groups: Mapping[str, Mapping[str, Any]], alpha: float) -> str:
    rows = []
    for run, gaps in groups.items():
        for metric, g in gaps.items():
            means = ", ".join(f"{name} {_format(v)} (n = {g.counts[name]:,})" for name, v in g.values.items())
            kind = "first − second" if g.gap_kind == "difference" else "max − min"
            adj = g.p_value_adj if g.p_value_adj is not None else float("nan")
            strong = math.isfinite(adj) and adj < alpha
            cells = [run, metric, means, f"{_format(g.gap)} ({kind})", f"[{_format(g.ci[0])}, {_format(g.ci[1])}]",
                     g.test, format_pvalue(g.p_value), format_pvalue(adj),
                     "–" if not math.isfinite(g.effect_size) else f"{g.effect_size:.2f}"]  # fmt: skip
            body = "".join(
                ('<td class="best">' if strong and i == 7 else '<td class="text">' if i < 3 else "<td>")
                + f"{_esc(str(c))}</td>"
                for i, c in enumerate(cells)
            )
            rows.append(f"<tr>{body}</tr>")
    head = "".join(f"<th>{_esc(h)}</th>" for h in ("run", "metric", "group means", "gap", "CI", "test", "p",
                                                     "p adjusted", "Hedges' g"))  # fmt: skip
    caption = (f"Unpaired test per run and metric, p-values corrected across each run's metrics; adjusted p below "
               f"α = {alpha:g} in bold; bootstrap interval of the gap resampling users within each group")  # fmt: skip
    return (f'<table id="group-gaps"><caption class="muted">{_esc(caption)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def _distribution_html(distribution: Mapping[str, Mapping[str, Any]], alpha: float) -> str:
    first = next(iter(distribution.values()))
    baseline = next(iter(first))
    level = first[baseline]["cvar_level"]
    quantiles = list(first[baseline]["quantiles"])
    head = ["metric", "run", "mean", *(f"q{q:g}" for q in quantiles), f"CVaR@{level:g} [CI]", "Gini",
            f"helped / hurt vs {baseline}", "CVaR − first [CI]", "p (CVaR)"]  # fmt: skip
    rows = []
    for metric, runs in distribution.items():
        for run, d in runs.items():
            vs = d.get("vs_first")
            lo, hi = d["ci"]["cvar"]
            cells = [metric, run, _format(d["mean"]), *(_format(v) for v in d["quantiles"].values()),
                     f"{_format(d['cvar'])} [{_format(lo)}, {_format(hi)}]",
                     "–" if d["gini"] is None else _format(d["gini"])]  # fmt: skip
            if vs is None:
                cells += ["–", "–", "–"]
            else:
                dlo, dhi = vs["ci"]["cvar_diff"]
                cells += [f"{vs['helped']:.1%} / {vs['hurt']:.1%}",
                          f"{_format(vs['cvar_diff'])} [{_format(dlo)}, {_format(dhi)}]",
                          format_pvalue(vs["cvar_p_value"])]  # fmt: skip
            strong = vs is not None and vs["cvar_p_value"] < alpha
            body = "".join(
                ('<td class="best">' if strong and i == len(cells) - 1 else '<td class="text">' if i < 2 else "<td>")
                + f"{_esc(str(c))}</td>"
                for i, c in enumerate(cells)
            )
            rows.append(f"<tr>{body}</tr>")
    caption = (f"CVaR@{level:g}: mean of the worst {level:.0%} of users (Rockafellar–Uryasev weights); helped/hurt: "
               f"share of users above/below {baseline}; p: paired randomisation test of the CVaR difference "
               "(not corrected); intervals: percentile bootstrap over users")  # fmt: skip
    header = "".join(f"<th>{_esc(h)}</th>" for h in head)
    return (f'<table id="utility-distribution"><caption class="muted">{_esc(caption)}</caption><thead><tr>{header}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def _ecdf_figure(per_user: pd.DataFrame, styles: Mapping[str, Mapping[str, Any]] | None) -> Any:
    """One panel per metric (at most 6): each run's empirical CDF of per-user values, as a step curve."""
    from receval.report.style import figure
    from receval.stats.distribution import ecdf

    metrics = list(dict.fromkeys(per_user["metric"]))[:6]
    ncols = min(len(metrics), 3)
    fig, axes = figure(-(-len(metrics) // ncols), ncols, width=3.6, height=2.8)
    for i, ax in enumerate(axes.flat):
        if i >= len(metrics):
            ax.set_visible(False)
            continue
        part = per_user[per_user["metric"] == metrics[i]]
        for run, values in part.groupby("system", sort=False)["value"]:
            look = dict((styles or {}).get(str(run), {}))
            x, f = ecdf(values.to_numpy(dtype=float))
            ax.step(np.r_[x[0], x], np.r_[0.0, f], where="post", label=str(run), color=look.get("color"),
                    linestyle=look.get("linestyle", "-"))  # fmt: skip
        ax.set_title(metrics[i])
        ax.set_xlabel("per-user value")
        ax.set_ylabel("share of users ≤ value")
        ax.legend(fontsize=7, loc="lower right")
    return fig
