"""Figures, tables and the HTML page of the sampled-against-full study (:mod:`receval.studies.sampled`).

:func:`estimates_figure` draws, per metric, each estimate's mean over the samples (with
its spread) against the system's full-catalogue value (the diagonal is a perfect
estimate); :func:`errors_figure` the mean absolute error of each estimate and
:func:`tau_figure` Kendall τ between each estimate's ranking of the systems and the full
ranking, per metric. :func:`write_outputs` writes the study's tables, the three figures
and ``report.html`` (the figures embedded, beside the tables they are drawn from) into a
folder, as one set (:func:`receval.atomic.publish`).

Examples
--------
>>> import pandas as pd, tempfile, pathlib
>>> from receval.studies.sampled import SampledStudy
>>> values = pd.DataFrame({"system": ["a", "b"] * 2, "metric": "ndcg@10", "estimate": ["sampled"] * 2 + ["bv"] * 2,
...                        "repeat": 0, "value": [0.5, 0.4, 0.12, 0.09], "full": [0.1, 0.08] * 2})
>>> kendall = pd.DataFrame({"metric": "ndcg@10", "estimate": ["sampled", "bv"], "kendall_tau": [1.0, 1.0],
...                         "kendall_tau_std": float("nan"), "kendall_tau_expected": [1.0, 1.0],
...                         "mae": [0.36, 0.015], "mse": [0.13, 0.0003], "spread": float("nan")})
>>> paths = write_outputs(SampledStudy(values, kendall), pathlib.Path(tempfile.mkdtemp()))
>>> [p.name for p in paths]
['values.csv', 'summary.csv', 'kendall.csv', 'estimates.png', 'errors.png', 'tau.png', 'report.html']
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from receval.atomic import publish, write_frame, write_text
from receval.report.html import Report
from receval.report.style import figure, series_style
from receval.studies.sampled import SampledStudy, estimate_label
from receval.vocabulary import SAMPLED_CORRECTIONS

__all__ = ["errors_figure", "estimates_figure", "tau_figure", "write_outputs"]

# the estimates in the vocabulary's order (``sampled`` for the uncorrected one): one look each, in every figure
_ORDER = [estimate_label(c) for c in SAMPLED_CORRECTIONS]


def _rank(estimate: str) -> int:
    return _ORDER.index(estimate) if estimate in _ORDER else len(_ORDER)


def _style(estimate: str) -> dict[str, Any]:
    return series_style(_rank(estimate))


def estimates_figure(summary: pd.DataFrame) -> Any:
    """Per metric a panel: each estimate's mean (± its spread over samples) against the full value, per system.

    ``summary`` is :meth:`~receval.studies.sampled.SampledStudy.to_frame`'s table. An estimate
    outside the metric's range (an unstable correction) is left off the panel, and its legend
    entry says for how many systems, so that the others stay readable.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric, one series per estimate, the diagonal estimate = full.

    Examples
    --------
    >>> s = pd.DataFrame({"system": ["a", "b"], "metric": "ndcg@10", "estimate": "sampled", "full": [0.1, 0.2],
    ...                   "mean": [0.4, 3e7], "std": [0.01, 0.02]})
    >>> ax = estimates_figure(s).axes[0]
    >>> ax.get_xlabel(), sorted(t.get_text() for t in ax.get_legend().get_texts())
    ('ndcg@10, full catalogue', ['estimate = full', 'sampled (1 off the panel)'])
    """
    from receval.metrics import parse_metric

    metrics = list(dict.fromkeys(summary["metric"]))
    fig, axes = figure(1, len(metrics), width=4.2, height=3.6)
    for ax, metric in zip(axes[0], metrics, strict=True):
        rows = summary[summary["metric"] == metric]
        low, high = parse_metric(metric).definition.bounds or (-np.inf, np.inf)
        inside = rows[(rows["mean"] >= low) & (rows["mean"] <= high)]
        for est, group in rows.groupby("estimate", sort=False):
            style = _style(str(est))
            shown = inside[inside["estimate"] == est]
            off = len(group) - len(shown)
            ax.errorbar(shown["full"], shown["mean"], yerr=np.nan_to_num(shown["std"].to_numpy(dtype=float)),
                        linestyle="none", marker=style["marker"], color=style["color"], capsize=2,
                        label=f"{est} ({off} off the panel)" if off else est)  # fmt: skip
        values = pd.concat([inside["full"], inside["mean"]]).to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        if values.size:
            lo, hi = float(values.min()), float(values.max())
            ax.plot([lo, hi], [lo, hi], color="0.6", linewidth=0.8, label="estimate = full")
        ax.set_xlabel(f"{metric}, full catalogue")
        ax.set_ylabel(f"{metric}, estimate (mean over samples)")
    axes[0, -1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return fig


def _bars(
    kendall: pd.DataFrame,
    column: str,
    spread: str | None,
    ylabel: str,
    limits: tuple[float, float] | None,
    *,
    log: bool = False,
):
    metrics = list(dict.fromkeys(kendall["metric"]))
    estimates = sorted(dict.fromkeys(kendall["estimate"]), key=_rank)
    fig, axes = figure(width=max(4.0, 0.45 * len(metrics) * len(estimates) + 2.5), height=3.4)
    ax = axes[0, 0]
    width = 0.8 / max(len(estimates), 1)
    for i, est in enumerate(estimates):
        rows = kendall[kendall["estimate"] == est].set_index("metric").reindex(metrics)
        heights = rows[column].to_numpy(dtype=float)
        errors = None if spread is None else np.nan_to_num(rows[spread].to_numpy(dtype=float))
        ax.bar(
            np.arange(len(metrics)) + (i - (len(estimates) - 1) / 2) * width,
            np.nan_to_num(heights),
            width,
            yerr=errors,
            capsize=2,
            color=_style(est)["color"],
            label=est,
        )
    ax.axhline(0.0, color="0.3", linewidth=0.6)
    ax.set_xticks(np.arange(len(metrics)), metrics, rotation=30, ha="right")
    if limits is not None:
        ax.set_ylim(*limits)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return fig


def errors_figure(kendall: pd.DataFrame) -> Any:
    """Mean absolute error of each estimate against the full value, grouped by metric, on a log scale.

    The errors of the estimates differ by orders of magnitude (the uncorrected sampled
    metric is several times the full one; an unstable correction far more), hence the scale.

    Returns
    -------
    matplotlib.figure.Figure
        One bar per metric and estimate.

    Examples
    --------
    >>> k = pd.DataFrame({"metric": "ndcg@10", "estimate": ["sampled", "bv"], "mae": [0.3, 0.02]})
    >>> errors_figure(k).axes[0].get_ylabel(), errors_figure(k).axes[0].get_yscale()
    ('mean absolute error vs full', 'log')
    """
    return _bars(kendall, "mae", None, "mean absolute error vs full", None, log=True)


def tau_figure(kendall: pd.DataFrame) -> Any:
    """Kendall τ of each estimate's system ranking against the full ranking (mean ± std over samples), by metric.

    Returns
    -------
    matplotlib.figure.Figure
        One bar per metric and estimate, on −1 … 1.

    Examples
    --------
    >>> k = pd.DataFrame({"metric": "ndcg@10", "estimate": ["sampled", "bv"], "kendall_tau": [0.4, 1.0],
    ...                   "kendall_tau_std": [0.2, 0.0]})
    >>> [float(v) for v in tau_figure(k).axes[0].get_ylim()]
    [-1.05, 1.05]
    """
    return _bars(kendall, "kendall_tau", "kendall_tau_std", "Kendall τ vs full ranking", (-1.05, 1.05))


def write_outputs(study: SampledStudy, folder: str | Path) -> list[Path]:
    """``values.csv``, ``summary.csv``, ``kendall.csv``, the three figures (PNG, SVG) and ``report.html``, as one set.

    Returns
    -------
    list of pathlib.Path
        The CSV files, the PNG figures and the page (each figure also as ``.svg``).

    Examples
    --------
    >>> import tempfile
    >>> from receval.studies.sampled import SampledStudy
    >>> v = pd.DataFrame({"system": ["a", "b"], "metric": "recall@10", "estimate": "sampled", "repeat": 0,
    ...                   "value": [0.5, 0.3], "full": [0.2, 0.1]})
    >>> k = pd.DataFrame({"metric": ["recall@10"], "estimate": ["sampled"], "kendall_tau": [1.0],
    ...                   "kendall_tau_std": [None], "kendall_tau_expected": [1.0], "mae": [0.25], "mse": [0.065],
    ...                   "spread": [None]})
    >>> out = Path(tempfile.mkdtemp())
    >>> _ = write_outputs(SampledStudy(v, k, {"sample": {"n": 100}}), out)
    >>> "recall@10" in (out / "report.html").read_text() and (out / "tau.svg").exists()
    True
    """
    out = Path(folder)
    summary = study.to_frame()
    tables = {"values": study.values, "summary": summary, "kendall": study.kendall}
    paths = [out / f"{name}.csv" for name in tables]
    with publish(out) as publication:
        # a figure that fails this time is a notice on the page: an earlier run's figure of that name goes
        figures = [f"{name}.{ext}" for name in ("estimates", "errors", "tau") for ext in ("png", "svg")]
        publication.owns(out, [*(p.name for p in paths), *figures, "report.html"])
        for path, frame in zip(paths, tables.values(), strict=True):
            write_frame(publication.path(path), frame)
        rep = Report(title="Sampled against full", figures_dir=out, publication=publication)
        rep.footnote = (
            "Full: the metric over the whole catalogue (training and test items of the user excluded); sampled: the "
            "same metric over the sampled candidates, uncorrected; the other estimates correct it."
        )
        conventions = study.conventions
        if conventions:
            items = "".join(
                f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(str(v))}</td></tr>" for k, v in conventions.items()
            )
            rep.heading("Design")
            rep.raw(f'<table class="facts">{items}</table>')
        rep.heading("Estimates against the full value")
        rep.figure(
            "estimates",
            "each estimate (mean ± std over samples) against the full value, per system",
            lambda: estimates_figure(summary),
        )
        rep.frame(summary, "summary")
        rep.heading("Errors and agreement with the full ranking")
        rep.figure("errors", "mean absolute error against the full value", lambda: errors_figure(study.kendall))
        rep.figure(
            "tau",
            "Kendall τ between each estimate's and the full ranking of the systems",
            lambda: tau_figure(study.kendall),
        )
        rep.frame(study.kendall, "kendall")
        page = out / "report.html"
        write_text(publication.path(page), rep.render(f"{len(set(study.values['system']))} systems"))
    drawn = [path for path in rep.files if path.suffix == ".png"]  # a figure that failed is a notice on the page
    return [*paths, *drawn, page]
