"""Figures and tables of the debiasing study (:mod:`receval.studies.debiasing`).

:func:`plot_estimates` draws, for one metric, each estimator's estimate against the
MAR value per system (the diagonal is a perfect estimator); :func:`plot_tau` draws
Kendall τ between each estimator's system ranking and the MAR ranking, per metric;
:func:`write_outputs` writes the study's tables and both figures to a folder, as one
set (:func:`receval.atomic.publish`).

Examples
--------
>>> import pandas as pd, tempfile, pathlib
>>> est = pd.DataFrame({"system": ["a", "b"] * 2, "metric": "recall@10", "estimator": ["naive"] * 2 + ["ips"] * 2,
...                     "estimate": [0.2, 0.1, 0.15, 0.12], "truth": [0.14, 0.11] * 2})
>>> tau = pd.DataFrame({"metric": "recall@10", "estimator": ["naive", "ips"], "kendall_tau": [1.0, 1.0]})
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> plot_estimates(est, "recall@10", out / "estimates.png").exists(), plot_tau(tau, out / "tau.png").exists()
(True, True)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from receval.atomic import publish, write_figure, write_frame
from receval.report.style import close_figure, figure, series_style

__all__ = ["plot_estimates", "plot_tau", "write_outputs"]


def plot_estimates(estimates: pd.DataFrame, metric: str, path: str | Path) -> Path:
    """Estimate (y) against the MAR value (x) per system, one series per estimator.

    Returns
    -------
    pathlib.Path
        ``path``, now holding the figure (one panel; its format from the extension).

    Examples
    --------
    >>> import tempfile
    >>> est = pd.DataFrame({"system": ["a", "b"], "metric": "recall@10", "estimator": "naive",
    ...                     "estimate": [0.2, 0.1], "truth": [0.14, 0.11]})
    >>> plot_estimates(est, "recall@10", Path(tempfile.mkdtemp()) / "estimates.png").read_bytes()[:4]
    b'\\x89PNG'
    """
    rows = estimates[estimates["metric"] == metric]
    fig, axes = figure(width=5.0, height=4.0)
    ax = axes[0, 0]
    for i, (est, group) in enumerate(rows.groupby("estimator", sort=False)):
        style = series_style(i)
        ax.plot(
            group["truth"], group["estimate"], linestyle="none", marker=style["marker"], color=style["color"], label=est
        )
    values = pd.concat([rows["truth"], rows["estimate"]]).to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if values.size:
        lo, hi = float(values.min()), float(values.max())
        ax.plot([lo, hi], [lo, hi], color="0.6", linewidth=0.8, label="estimate = MAR")
    ax.set_xlabel(f"{metric} on the MAR test (truth)")
    ax.set_ylabel(f"{metric} estimated from the MNAR test")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    out = write_figure(path, fig, dpi=100)
    close_figure(fig)
    return out


def plot_tau(kendall: pd.DataFrame, path: str | Path) -> Path:
    """Kendall τ of each estimator's system ranking against the MAR ranking, grouped by metric.

    Returns
    -------
    pathlib.Path
        ``path``, now holding the figure (one bar per metric and estimator).

    Examples
    --------
    >>> import tempfile
    >>> tau = pd.DataFrame({"metric": "recall@10", "estimator": ["naive", "ips"], "kendall_tau": [0.2, 1.0]})
    >>> plot_tau(tau, Path(tempfile.mkdtemp()) / "tau.png").name
    'tau.png'
    """
    metrics = list(dict.fromkeys(kendall["metric"]))
    estimators = list(dict.fromkeys(kendall["estimator"]))
    fig, axes = figure(width=max(4.0, 0.5 * len(metrics) * len(estimators) ** 0.5 + 3), height=3.4)
    ax = axes[0, 0]
    width = 0.8 / max(len(estimators), 1)
    table = kendall.pivot_table(index="metric", columns="estimator", values="kendall_tau", sort=False)
    for i, est in enumerate(estimators):
        heights = table.reindex(metrics)[est].to_numpy(dtype=float) if est in table else np.full(len(metrics), np.nan)
        ax.bar(
            np.arange(len(metrics)) + (i - (len(estimators) - 1) / 2) * width,
            np.nan_to_num(heights),
            width,
            color=series_style(i)["color"],
            label=est,
        )
    ax.axhline(0.0, color="0.3", linewidth=0.6)
    ax.set_xticks(np.arange(len(metrics)), metrics, rotation=30, ha="right")
    ax.set_ylim(-1.05, 1.05)
    ax.set_ylabel("Kendall τ vs MAR ranking")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    out = write_figure(path, fig, dpi=100)
    close_figure(fig)
    return out


def write_outputs(study, folder: str | Path, *, metric: str = "recall@10") -> list[Path]:
    """Tables ``estimates``, ``kendall``, ``recall_fallout`` (CSV), ``tau.png`` and ``estimates.png`` (``metric``).

    Returns
    -------
    list of pathlib.Path
        The three CSV files and ``tau.png``, then ``estimates.png`` when ``study.estimates`` has ``metric``.

    Examples
    --------
    >>> import tempfile, types
    >>> est = pd.DataFrame({"system": ["a", "b"], "metric": "recall@10", "estimator": "naive",
    ...                     "estimate": [0.2, 0.1], "truth": [0.14, 0.11]})
    >>> tau = pd.DataFrame({"metric": ["recall@10"], "estimator": ["naive"], "kendall_tau": [1.0]})
    >>> study = types.SimpleNamespace(estimates=est, kendall=tau, recall_fallout=pd.DataFrame({"system": ["a"]}))
    >>> [p.name for p in write_outputs(study, Path(tempfile.mkdtemp()))]
    ['estimates.csv', 'kendall.csv', 'recall_fallout.csv', 'tau.png', 'estimates.png']
    >>> [p.name for p in write_outputs(study, Path(tempfile.mkdtemp()), metric="ndcg@10")]  # no estimates of it
    ['estimates.csv', 'kendall.csv', 'recall_fallout.csv', 'tau.png']
    """
    out = Path(folder)
    paths = [out / "estimates.csv", out / "kendall.csv", out / "recall_fallout.csv", out / "tau.png"]
    with publish(out) as publication:
        publication.owns(out, [*(p.name for p in paths), "estimates.png"])  # an earlier run's estimates.png goes
        write_frame(publication.path(paths[0]), study.estimates)
        write_frame(publication.path(paths[1]), study.kendall)
        write_frame(publication.path(paths[2]), study.recall_fallout)
        plot_tau(study.kendall, publication.path(paths[3]))
        if metric in set(study.estimates["metric"]):
            paths.append(out / "estimates.png")
            plot_estimates(study.estimates, metric, publication.path(paths[-1]))
    return paths
