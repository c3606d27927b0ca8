"""Figures of the off-policy evaluation study (:mod:`receval.studies.ope`).

:func:`plot_estimates` draws each estimator's estimate of every target policy, with its
bootstrap interval, against the target's true value (the diagonal is a perfect estimator);
:func:`plot_error_by_size` draws each estimator's mean absolute error against the log's size.

Examples
--------
>>> import tempfile, pathlib
>>> est = pd.DataFrame({"estimator": ["ips", "ips", "dm", "dm"], "policy": ["a", "b"] * 2,
...                     "estimate": [0.2, 0.5, 0.3, 0.4], "low": [0.1, 0.4, 0.3, 0.4],
...                     "high": [0.3, 0.6, 0.3, 0.4], "truth": [0.25, 0.45] * 2})
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> plot_estimates(est, out / "estimates.png").exists()
True
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from receval.atomic import write_figure
from receval.report.style import close_figure, figure, series_style

__all__ = ["plot_estimates", "plot_error_by_size"]


def plot_estimates(estimates: pd.DataFrame, path: str | Path) -> Path:
    """Estimate (y, with its interval) against the truth (x) per target, one series per estimator.

    ``estimates`` has the columns estimator, policy, estimate, low, high, truth
    (:meth:`receval.studies.ope.OpeResult.frame`).

    Returns
    -------
    pathlib.Path
        ``path``, now holding the figure.

    >>> import tempfile
    >>> est = pd.DataFrame({"estimator": ["ips"], "policy": ["a"], "estimate": [0.2], "low": [0.1], "high": [0.3],
    ...                     "truth": [0.25]})
    >>> plot_estimates(est, Path(tempfile.mkdtemp()) / "e.png").read_bytes()[:4]
    b'\\x89PNG'
    """
    fig, axes = figure(width=5.0, height=4.0)
    ax = axes[0, 0]
    groups = list(estimates.groupby("estimator", sort=False))
    spread = 0.004 * max(float(np.ptp(estimates["truth"].to_numpy(dtype=float))), 1.0)
    for i, (name, group) in enumerate(groups):
        style = series_style(i)
        x = group["truth"].to_numpy(dtype=float) + (i - (len(groups) - 1) / 2) * spread  # side by side, readable
        y = group["estimate"].to_numpy(dtype=float)
        err = np.vstack([y - group["low"].to_numpy(dtype=float), group["high"].to_numpy(dtype=float) - y])
        ax.errorbar(x, y, yerr=np.maximum(err, 0), linestyle="none", marker=style["marker"], color=style["color"],
                    label=name, markersize=4, capsize=2)  # fmt: skip
    values = pd.concat([estimates["truth"], estimates["low"], estimates["high"]]).to_numpy(dtype=float)
    lo, hi = float(values.min()), float(values.max())
    ax.plot([lo, hi], [lo, hi], color="0.6", linewidth=0.8, label="estimate = truth")
    ax.set_xlabel("true value of the target policy")
    ax.set_ylabel("off-policy estimate (95% bootstrap interval)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    out = write_figure(path, fig, dpi=100)
    close_figure(fig)
    return out


def plot_error_by_size(errors: pd.DataFrame, path: str | Path) -> Path:
    """Mean absolute error (y, log scale) against the number of logged decisions (x, log scale), per estimator.

    ``errors`` has the columns rounds, estimator, error (:func:`receval.studies.ope.error_by_size`).

    Returns
    -------
    pathlib.Path
        ``path``, now holding the figure.

    >>> import tempfile
    >>> err = pd.DataFrame({"rounds": [100, 1000] * 2, "estimator": ["ips"] * 2 + ["dm"] * 2,
    ...                     "error": [0.1, 0.03, 0.05, 0.04]})
    >>> plot_error_by_size(err, Path(tempfile.mkdtemp()) / "s.png").read_bytes()[:4]
    b'\\x89PNG'
    """
    fig, axes = figure(width=5.0, height=4.0)
    ax = axes[0, 0]
    for i, (name, group) in enumerate(errors.groupby("estimator", sort=False)):
        style = series_style(i)
        group = group.sort_values("rounds")
        ax.plot(group["rounds"], np.maximum(group["error"], 1e-6), marker=style["marker"], color=style["color"],
                label=name)  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("logged decisions")
    ax.set_ylabel("mean absolute error over the targets")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    out = write_figure(path, fig, dpi=100)
    close_figure(fig)
    return out
