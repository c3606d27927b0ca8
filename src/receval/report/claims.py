"""Figures of claims over many systems: the critical-difference diagram (Demšar, JMLR 2006).

:func:`cd_diagram` draws the average ranks of :func:`receval.stats.multiple.friedman_nemenyi`
on an axis from 1 (best, left) to k, each system's name on a leader line, the Nemenyi
critical difference as a bar above the axis, and a thick bar under each group of systems
whose average ranks differ by less than CD (not told apart at alpha).

Examples
--------
>>> import numpy as np
>>> from receval.stats.multiple import friedman_nemenyi
>>> scores = np.random.default_rng(0).uniform(size=(12, 4)) + np.array([0.3, 0.2, 0.0, 0.0])
>>> fig = cd_diagram(friedman_nemenyi(scores, ["ease", "als", "pop", "random"]))
>>> fig.axes[0].get_title()
'Average rank over 12 data sets (1 = best); CD = 1.35 at α = 0.05 (Nemenyi)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from receval.report.style import OKABE_ITO, figure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from receval.stats.multiple import FriedmanResult

__all__ = ["cd_diagram", "friedman_of"]


def _blocks(store: Any, metric: str) -> tuple[pd.DataFrame, str]:
    """:func:`friedman_of`'s blocks x configurations table and what a block is (a DataError when a value is missing)."""
    import pandas as pd

    from receval.errors import DataError

    if "aggregates" not in store.table_names():
        raise DataError(f"{store.root} holds no aggregates; run the experiment first")
    agg = store.read("aggregates")
    if metric not in set(agg["metric"]):
        raise DataError(f"--friedman {metric}: no such metric in the results; they have {sorted(set(agg['metric']))}")
    tasks = store.read("tasks")
    tasks = tasks[tasks["status"] == "ok"].copy()
    tasks["system"] = tasks["recommender"].astype(str) + " " + tasks["params"].astype(str)
    if "options" in tasks and tasks["options"].nunique() > 1:
        tasks["system"] = tasks["system"] + " " + tasks["options"].astype(str)
    merged = agg[agg["metric"] == metric].merge(tasks, on="task_id")
    if merged["dataset"].nunique() >= 2:
        merged["block"], what = merged["dataset"].astype(str), "data sets"
    else:
        merged["block"] = "fold " + merged["fold"].astype(str) + " seed " + merged["seed"].astype(str)
        what = "folds and seeds"
    table = merged.pivot_table(index="block", columns="system", values="value", aggfunc="mean", observed=True)
    if table.isna().any().any():
        counts = ", ".join(f"{c}: {int(table[c].notna().sum())}" for c in table.columns)
        raise DataError(f"the {what} have different configurations ({counts} of {len(table)}); compare like with like")
    assert isinstance(table, pd.DataFrame)
    return table, what


def friedman_of(store: Any, metric: str) -> tuple[FriedmanResult, pd.DataFrame, str]:
    """The Friedman test with Nemenyi's CD of ``metric`` over a run's blocks, in the metric's direction.

    Blocks are the data sets when there are two or more, else the (fold, seed) pairs; a configuration is the
    recommender with its parameters and options, its value the mean over the rest of the block.

    ``receval results --friedman`` prints it and the run report draws it.

    Returns
    -------
    tuple of (FriedmanResult, pandas.DataFrame, str)
        :func:`receval.stats.multiple.friedman_nemenyi`'s result, the blocks x configurations table and
        ``"data sets"`` or ``"folds and seeds"``.

    Examples
    --------
    >>> import tempfile
    >>> from receval.experiment import parse_config, run_experiment
    >>> text = 'metrics = ["ndcg@5"]\\n[protocol]\\nname = "one-shot"\\n'
    >>> text += "[recommenders.popularity]\\n[recommenders.random]\\n[recommenders.item-knn]\\n"
    >>> text += "".join(f"[datasets.d{s}]\\ngenerate = {{ n_users = 30, n_items = 20, n_ratings = 300, seed = {s} }}\\n"
    ...                 for s in (1, 2, 3))
    >>> report = run_experiment(parse_config(text), out=tempfile.mkdtemp(), processes=False)
    >>> result, table, what = friedman_of(report.store, "ndcg@5")
    >>> what, len(result.systems), bool(1.0 <= min(result.avg_ranks) <= max(result.avg_ranks) <= 3.0)
    ('data sets', 3, True)
    """
    from receval.metrics.registry import metric_direction
    from receval.stats.multiple import friedman_nemenyi

    table, what = _blocks(store, metric)
    result = friedman_nemenyi(table.to_numpy(), [str(c) for c in table.columns],
                              higher_is_better=metric_direction(metric) != "lower")  # fmt: skip
    return result, table, what


def cd_diagram(result: FriedmanResult, *, width: float = 6.0) -> Figure:
    """A critical-difference diagram of ``result`` (one per metric): ranks, CD bar, groups not told apart.

    Returns
    -------
    matplotlib.figure.Figure
        One panel; the better half of the systems is labelled on the left, the other half on the right.
    """
    data = result.cd_data()
    names: list[str] = list(data["systems"])  # type: ignore[call-overload]
    ranks: list[float] = list(data["avg_ranks"])  # type: ignore[call-overload]
    groups: list[list[str]] = list(data["groups"])  # type: ignore[call-overload]
    k = len(names)
    half = (k + 1) // 2
    height = 1.2 + 0.22 * max(half, k - half) + 0.12 * len(groups)
    fig, axes = figure(1, 1, width=width, height=height)
    ax = axes[0, 0]
    ax.set_xlim(-0.9, k + 1.9)  # room for the names beside the axis
    ax.set_ylim(-(max(half, k - half) + 1.5) - 0.5 * len(groups), 1.8)
    ax.axhline(0, color="black", lw=1)
    for r in range(1, k + 1):
        ax.plot([r, r], [0, 0.15], color="black", lw=1)
        ax.text(r, 0.3, str(r), ha="center", va="bottom", fontsize=8)
    ax.plot([1, 1 + result.cd], [1.2, 1.2], color=OKABE_ITO[5], lw=2)
    ax.text(1 + result.cd / 2, 1.35, "CD", ha="center", va="bottom", fontsize=8)
    for i, (name, rank) in enumerate(zip(names, ranks, strict=True)):
        left = i < half
        level = -(i + 1) if left else -(k - i)
        end = 0.6 if left else k + 0.4
        ax.plot([rank, rank, end], [0, level, level], color="black", lw=0.8)
        ax.text(end, level, f"{name} ({rank:.2f})", ha="left" if not left else "right", va="center", fontsize=8)
    if groups:
        position = {name: rank for name, rank in zip(names, ranks, strict=True)}
        for g, group in enumerate(groups):
            y = -0.35 - 0.25 * g
            ax.plot([position[group[0]] - 0.03, position[group[-1]] + 0.03], [y, y], color=OKABE_ITO[1], lw=3)
    ax.set_axis_off()
    title = (
        f"Average rank over {result.n_datasets} data sets (1 = best); CD = {result.cd:.2f} at α = {result.alpha:g} "
        "(Nemenyi)"
    )
    ax.set_title(title, fontsize=9)
    return fig
