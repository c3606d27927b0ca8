"""Figure builders for every protocol; each returns a matplotlib figure in receval's style.

Each builder takes the tables the result store holds (or a data set) and raises
:class:`~receval.errors.DataError` saying what is missing when they cannot make a
figure: nothing here draws an empty figure. Save with :func:`receval.report.style.save`
(PNG and SVG) or embed with :func:`receval.report.style.png_bytes`.

- data set: :func:`dataset_overview` (rating histogram, log–log item-popularity long
  tail with the MAR/MNAR diagnostic of :func:`receval.data.stats.dataset_stats`, user
  activity);
- one-shot: :func:`bootstrap_table` + :func:`metric_bars` (means with bootstrap CIs of
  :func:`receval.stats.significance.bootstrap_ci`), :func:`precision_recall`
  (over cutoffs), :func:`slice_heatmap`;
- cyclic: :func:`cyclic_curves` (cumulative and normalised metrics vs round),
  :func:`tau_plot` (Kendall τ of :func:`receval.stats.agreement.tau_curve`),
  :func:`rank_plot` (:func:`receval.stats.agreement.ranks_over_time`);
- aspects: :func:`swap_curves`, :func:`discriminative_bars`, :func:`incompleteness_plot`;
- coherence: :func:`coherence_curves` (relative RMSE of the easy/difficult-user models).

Figures of the studies that write files (attacks, metaeval, coherence split) are
saved by :mod:`receval.report.studies`.

Examples
--------
>>> import pandas as pd
>>> pu = pd.DataFrame({"system": ["a"] * 3 + ["b"] * 3, "user": [1, 2, 3] * 2,
...                    "metric": "ndcg@10", "value": [0.1, 0.2, 0.3, 0.5, 0.4, 0.6]})
>>> table = bootstrap_table(pu, n_resamples=200)
>>> table[["system", "metric", "mean", "n"]].round(2).to_dict("records")
[{'system': 'a', 'metric': 'ndcg@10', 'mean': 0.2, 'n': 3}, {'system': 'b', 'metric': 'ndcg@10', 'mean': 0.5, 'n': 3}]
>>> fig = metric_bars(table)
>>> [(ax.get_title(), ax.get_xlabel()) for ax in fig.axes]
[('ndcg@10 (higher is better)', 'mean over users, 95% CI')]
>>> precision_recall(pd.DataFrame({"precision@10": [0.1], "recall@10": [0.3]}, index=["a"])).axes[0].get_title()
'precision vs recall at k = 10'
>>> precision_recall(pd.DataFrame({"precision@10": [0.1]}, index=["a"]))
Traceback (most recent call last):
...
receval.errors.DataError: a precision-recall figure needs precision@k and recall@k at a common cutoff k
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from receval.errors import DataError
from receval.metrics.registry import metric_direction
from receval.report.style import OKABE_ITO, PAGE_WIDTH, figure, series_style, system_styles

if TYPE_CHECKING:
    from receval.data.interactions import Interactions

__all__ = [
    "bootstrap_table",
    "coherence_curves",
    "cyclic_curves",
    "dataset_overview",
    "discriminative_bars",
    "incompleteness_plot",
    "metric_bars",
    "pair_label",
    "precision_recall",
    "precision_recall_cutoffs",
    "rank_plot",
    "slice_heatmap",
    "swap_curves",
    "tau_plot",
]

#: ``{system: style}`` (:func:`receval.report.style.system_styles`): a report's one colour and marker per system.
Styles = Mapping[str, Mapping[str, Any]]


def _styles_for(names: Sequence[Any], styles: Styles | None) -> dict[str, dict[str, Any]]:
    """The systems among ``names`` with their styles: in ``styles``' order (when given), then the others.

    >>> list(_styles_for(["b", "a", "c"], {"a": series_style(0), "b": series_style(1)}))
    ['a', 'b', 'c']
    """
    if styles is None:
        return system_styles(_ordered(names, ()))
    ordered = _ordered(names, styles)
    extra = iter(range(len(styles), len(styles) + len(ordered)))
    return {s: dict(styles[s]) if s in styles else series_style(next(extra)) for s in ordered}


def _ordered(names: Sequence[Any], order: Iterable[str]) -> list[str]:
    """The distinct ``names`` as strings: those in ``order`` first, in that order, then the others as they come.

    >>> _ordered(["b", "c", "a", "b"], ["a", "b", "z"])
    ['a', 'b', 'c']
    """
    present = list(dict.fromkeys(str(n) for n in names))
    first = [s for s in dict.fromkeys(map(str, order)) if s in set(present)]
    return first + [s for s in present if s not in set(first)]


def lower_is_better(metric: str) -> bool:
    """Whether smaller values of ``metric`` are better, as the metric registry declares it.

    >>> lower_is_better("fallout@10"), lower_is_better("ndcg@10"), lower_is_better("anti_precision")
    (True, False, True)
    >>> lower_is_better("fp@10"), lower_is_better("matthew_effect"), lower_is_better("tp@10")
    (True, True, False)
    """
    return metric_direction(metric) == "lower"


def _text_inches(text: str, fontsize: float) -> float:
    """About how wide ``text`` draws, in inches (an average glyph is about 0.55 em)."""
    return len(text) * 0.55 * fontsize / 72


def _legend_columns(labels: Sequence[str], width: float, *, fontsize: float = 7, most: int = 4) -> int:
    """How many legend columns of these labels fit ``width`` inches (each entry: handle, label, spacing)."""
    entry = max((_text_inches(str(label), fontsize) for label in labels), default=0.0) + 5 * fontsize / 72
    return max(1, min(most, len(labels), int(width // entry)))


def _panels(n: int, width: float, most: int = 4) -> tuple[int, int]:
    """``(columns, rows)`` of a grid of ``n`` panels ``width`` inches wide that fits the report's page.

    >>> _panels(6, 3.4), _panels(2, 5.0), _panels(1, 20.0)
    ((3, 2), (2, 1), (1, 1))
    """
    ncols = max(1, min(n, most, int(PAGE_WIDTH // width)))
    return ncols, -(-n // ncols)


def _need(frame: pd.DataFrame | None, columns: Sequence[str], what: str) -> pd.DataFrame:
    if frame is None or len(frame) == 0:
        raise DataError(f"{what}: no rows to draw")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{what}: the table lacks column(s) {missing}; it has {list(frame.columns)}")
    return frame


# ---------------------------------------------------------------- data set
def dataset_overview(data: Interactions | None, stats: Mapping[str, Any] | None = None):
    """Rating histogram, item-popularity long tail (log–log) with the MAR/MNAR label, user activity.

    With ``data=None`` the statistics alone give the first two panels (no user activity).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels from ``stats`` alone, three with ``data`` (rating histogram, long tail, user activity), titled with
        the data set's size and density.

    Examples
    --------
    >>> from receval.data import Interactions
    >>> fig = dataset_overview(Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [5, 3, 4, 4, 1]))
    >>> [ax.get_title() for ax in fig.axes]
    ['rating distribution', 'item popularity long tail', 'user activity']
    >>> fig.get_suptitle()
    'data set: 3 users, 2 items, 5 ratings (density 0.8333)'
    """
    from receval.data.stats import dataset_stats

    if stats is None:
        if data is None:
            raise DataError("dataset overview needs the data set or its statistics")
        stats = dataset_stats(data)
    if stats["n_ratings"] == 0:
        raise DataError(f"data set {stats.get('name')!r} has no ratings to draw")
    fig, axes = figure(1, 3 if data is not None else 2, width=3.8, height=3.0)
    ax = axes[0][0]
    counts = stats["rating_counts"]
    ax.bar(range(len(counts)), list(counts.values()), color=OKABE_ITO[0])
    ax.set_xticks(range(len(counts)), list(counts), rotation=45 if len(counts) > 6 else 0)
    ax.set(xlabel="rating value", ylabel="number of ratings", title="rating distribution")
    ax = axes[0][1]
    pop = np.asarray(stats["item_popularity"], dtype=float)
    ax.loglog(np.arange(1, len(pop) + 1), pop, color=OKABE_ITO[3], linewidth=1.5, label="items")
    ax.axhline(pop.mean(), color=OKABE_ITO[7], linestyle=":", linewidth=1, label=f"mean {pop.mean():.1f}")
    mm = stats["mar_mnar"]
    label = mm.get("label")
    if label is not None:
        gini = stats["gini_item_popularity"]
        note = f"{label}: cv {mm['cv']:.2f} vs {2 * mm['cv_uniform']:.2f} MAR bound\nGini {gini:.2f}"
        ax.text(0.03, 0.04, note, transform=ax.transAxes, fontsize=7, va="bottom")
    ax.set(xlabel="item rank by popularity (log)", ylabel="ratings per item (log)", title="item popularity long tail")
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 0.16))
    if data is not None:
        _activity(axes[0][2], data)
    name = stats.get("name") or "data set"
    fig.suptitle(
        f"{name}: {stats['n_users']:,} users, {stats['n_items']:,} items, "
        f"{stats['n_ratings']:,} ratings (density {stats['density']:.4f})",
        fontsize=10,
    )
    return fig


def _activity(ax, data: Interactions) -> None:
    activity = np.bincount(data.users, minlength=data.n_users)
    activity = activity[activity > 0]
    bins = np.unique(np.geomspace(activity.min(), activity.max() + 1, 25).astype(int))
    ax.hist(activity, bins=bins if len(bins) > 1 else 10, color=OKABE_ITO[2])
    if activity.max() > 10 * max(activity.min(), 1):
        from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel="ratings per user", ylabel="number of users", title="user activity")


# ---------------------------------------------------------------- one-shot
def bootstrap_table(
    per_user: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """Mean and percentile-bootstrap CI over users of every (system, metric) of a long per-user table.

    ``per_user`` has columns ``system``, ``user``, ``metric``, ``value`` (a user evaluated
    several times — seeds, folds — counts once, with the mean of their values). NaN values
    are left out; a cell with fewer than two users gets no CI.

    Returns
    -------
    pandas.DataFrame
        One row per (system, metric): ``system``, ``metric``, ``mean``, ``ci_low``, ``ci_high`` (NaN below two users),
        ``n`` (users); ``attrs["confidence"]`` holds ``confidence``.

    Examples
    --------
    >>> pu = pd.DataFrame({"system": "a", "user": [1, 2, 3, 3], "metric": "ndcg@10", "value": [0.1, 0.2, 0.2, 0.4]})
    >>> row = bootstrap_table(pu, n_resamples=100).iloc[0]
    >>> round(float(row["mean"]), 3), int(row["n"]), bool(row["ci_low"] <= row["mean"] <= row["ci_high"])
    (0.2, 3, True)
    """
    _need(per_user, ["system", "user", "metric", "value"], "bootstrap table")
    from receval.stats.significance import bootstrap_ci

    means = per_user.groupby(["system", "metric", "user"], sort=False, observed=True)["value"].mean().dropna()
    order = {m: i for i, m in enumerate(dict.fromkeys(per_user["metric"]))}
    rows = []
    groups = sorted(means.groupby(level=["system", "metric"], sort=False), key=lambda g: (str(g[0][0]), order[g[0][1]]))
    for (system, metric), values in groups:
        v = values.to_numpy()
        lo = hi = np.nan
        if len(v) >= 2:
            lo, hi = bootstrap_ci(v, confidence=confidence, n_resamples=n_resamples, seed=seed)
        rows.append(
            {"system": system, "metric": metric, "mean": float(v.mean()), "ci_low": lo, "ci_high": hi, "n": len(v)}
        )
    if not rows:
        raise DataError("bootstrap table: every per-user value is NaN")
    out = pd.DataFrame(rows)
    out.attrs["confidence"] = confidence
    return out


def metric_bars(
    table: pd.DataFrame, metrics: Sequence[str] | None = None, *, max_metrics: int = 8, styles: Styles | None = None
):
    """One panel per metric, one horizontal bar per system with its bootstrap CI (from :func:`bootstrap_table`).

    ``styles`` (:func:`~receval.report.style.system_styles`) gives each system its colour
    and the order of the bars; by default the systems' order in ``table``.

    Returns
    -------
    matplotlib.figure.Figure
        Up to three panels a row, one per metric (at most ``max_metrics``), titled with the metric's direction.

    Examples
    --------
    >>> table = pd.DataFrame({"system": ["pop", "knn", "pop"], "metric": ["ndcg@10", "ndcg@10", "recall@10"],
    ...                       "mean": [0.2, 0.3, 0.1], "ci_low": [0.1, 0.2, 0.05], "ci_high": [0.3, 0.4, 0.15]})
    >>> fig = metric_bars(table)
    >>> [ax.get_title() for ax in fig.axes], [t.get_text() for t in fig.axes[0].get_yticklabels()]
    (['ndcg@10 (higher is better)', 'recall@10 (higher is better)'], ['pop', 'knn'])
    """
    _need(table, ["system", "metric", "mean", "ci_low", "ci_high"], "metric bars")
    names = (
        list(dict.fromkeys(table["metric"])) if metrics is None else [m for m in metrics if m in set(table["metric"])]
    )
    if not names:
        raise DataError(f"metric bars: none of the metrics {list(metrics or [])} is in the results")
    names = names[:max_metrics]
    looks = _styles_for(table["system"], styles)
    systems = list(looks)
    ncols = min(len(names), 3)
    nrows = -(-len(names) // ncols)
    fig, axes = figure(nrows, ncols, width=3.6, height=0.6 + 0.28 * len(systems))
    conf = table.attrs.get("confidence", 0.95)
    has_ci = table["ci_low"].notna().any()
    for i, ax in enumerate(axes.flat):
        if i >= len(names):
            ax.set_visible(False)
            continue
        part = table[table["metric"] == names[i]].assign(system=lambda f: f["system"].astype(str))
        part = part.set_index("system").reindex(systems)
        y = np.arange(len(systems))
        mean = part["mean"].to_numpy(dtype=float)
        err = np.vstack([mean - part["ci_low"].to_numpy(dtype=float), part["ci_high"].to_numpy(dtype=float) - mean])
        colours = [looks[s]["color"] for s in systems]
        xerr = np.nan_to_num(err) if has_ci else None  # no zero-width error caps when there are no CIs
        bars = ax.barh(y, np.nan_to_num(mean), xerr=xerr, color=colours, capsize=2, error_kw={"linewidth": 1})
        for bar, system in zip(bars, systems, strict=True):  # each bar names its system (no legend: tick labels)
            bar.set_gid(system)
            bar.set_hatch(_HATCHES[looks[system].get("linestyle", "-")])  # systems past the seventh share a colour
        for j in np.flatnonzero(np.isnan(mean)):  # say so rather than leave a gap that reads as 0
            ax.text(0, y[j], " n/a", va="center", fontsize=7, color="#555555")
        ax.set_yticks(y, systems if i % ncols == 0 else [""] * len(systems))
        ax.invert_yaxis()
        direction = metric_direction(names[i])
        ax.set_title(names[i] + (f" ({direction} is better)" if direction else ""))
        ax.set_xlabel(f"mean over users, {conf:.0%} CI" if has_ci else "value")
    return fig


_HATCHES = {"-": "", "--": "///", "-.": "\\\\\\", ":": "..."}  # a line style's counterpart on a bar
_CUTOFF = re.compile(r"^(precision|recall)@(\d+)$")


def precision_recall_cutoffs(columns: Sequence[Any]) -> list[int]:
    """The cutoffs k at which both ``precision@k`` and ``recall@k`` are among ``columns`` (ascending).

    Returns
    -------
    list of int
        The common cutoffs, ascending; empty when the columns allow no precision-recall figure.

    Examples
    --------
    >>> precision_recall_cutoffs(["precision@10", "recall@10", "recall@20", "ndcg@10"])
    [10]
    """
    ks: dict[str, set[int]] = {"precision": set(), "recall": set()}
    for col in columns:
        m = _CUTOFF.match(str(col))
        if m:
            ks[m.group(1)].add(int(m.group(2)))
    return sorted(ks["precision"] & ks["recall"])


def precision_recall(summary: pd.DataFrame, *, styles: Styles | None = None):
    """Precision against recall over the cutoffs k of ``precision@k``/``recall@k`` columns, one line per system.

    With a single common cutoff each system is one point (precision and recall at that k).
    :func:`precision_recall_cutoffs` says whether the columns allow the figure.

    Returns
    -------
    matplotlib.figure.Figure
        One panel, one line (or point) per system, the legend under it.

    Examples
    --------
    >>> summary = pd.DataFrame({"precision@5": [0.2, 0.1], "recall@5": [0.1, 0.05],
    ...                         "precision@10": [0.15, 0.1], "recall@10": [0.2, 0.1]}, index=["pop", "knn"])
    >>> ax = precision_recall(summary).axes[0]
    >>> ax.get_title(), [line.get_label() for line in ax.get_lines()]
    ('precision–recall over k = 5, 10', ['pop', 'knn'])
    """
    cutoffs = precision_recall_cutoffs(summary.columns)
    if not cutoffs:
        raise DataError("a precision-recall figure needs precision@k and recall@k at a common cutoff k")
    looks = _styles_for(summary.index, styles)
    ncol = _legend_columns(list(looks), 5.0)
    fig, axes = figure(1, 1, width=5.2, height=3.8 + 0.2 * -(-len(summary) // ncol))
    ax = axes[0][0]
    rows = summary.set_axis(summary.index.astype(str))
    for system, look in looks.items():
        row = rows.loc[system]
        r = [row[f"recall@{k}"] for k in cutoffs]
        p = [row[f"precision@{k}"] for k in cutoffs]
        ax.plot(r, p, label=system, **look | ({"markersize": 7} if len(cutoffs) == 1 else {}))
    ax.set(
        xlabel="recall@k (mean over users)",
        ylabel="precision@k (mean over users)",
        title=f"precision–recall over k = {', '.join(map(str, cutoffs))}"
        if len(cutoffs) > 1
        else f"precision vs recall at k = {cutoffs[0]}",
    )
    fig.legend(loc="outside lower center", ncol=ncol, fontsize=7)
    return fig


def slice_heatmap(means: pd.DataFrame, metric: str, *, systems: Sequence[str] | None = None):
    """Mean ``metric`` per system (rows) and slice group (columns), one panel per slice.

    ``means`` has columns ``dimension``, ``slice``, ``group``, ``system``, ``metric``,
    ``value`` (the mean) and optionally ``low``, ``high``: the range of the slicing
    variable in a quantile group (:func:`receval.studies.slicing.group_ranges`), shown
    under the group's name. ``systems`` orders the rows (as the report's tables; by
    default their order in ``means``). The panels wrap onto further rows so that the
    figure fits the report's page (:data:`~receval.report.style.PAGE_WIDTH`) at full size.

    Returns
    -------
    matplotlib.figure.Figure
        One heat-map panel per (dimension, slice), each cell printed with its value, and one colour bar.

    Examples
    --------
    >>> means = pd.DataFrame({"dimension": "user", "slice": "activity", "group": ["q1", "q2"] * 2,
    ...                       "system": ["a", "a", "b", "b"], "metric": "ndcg@10", "value": [0.1, 0.2, 0.3, 0.4]})
    >>> fig = slice_heatmap(means, "ndcg@10", systems=["b", "a"])
    >>> len(fig.axes), fig.axes[0].get_title(), [t.get_text() for t in fig.axes[0].get_yticklabels()]
    (2, 'users by activity', ['b', 'a'])
    """
    from receval.studies.slicing import QUANTILE_VARIABLES

    _need(means, ["dimension", "slice", "group", "system", "metric", "value"], "slice heatmap")
    part = means[means["metric"] == metric].assign(system=lambda f: f["system"].astype(str))
    if part.empty:
        raise DataError(f"slice heatmap: no slice values of metric {metric!r}")
    panels = list(dict.fromkeys(zip(part["dimension"], part["slice"], strict=True)))
    rows = _ordered(part["system"], systems or ())
    n_groups = max(part.groupby(["dimension", "slice"], sort=False)["group"].nunique())
    names = max(_text_inches(s, 8) for s in rows) + 0.3  # the first panel of a row also holds the system names
    colorbar = 0.9
    # cells wide enough for their numbers (an axis label under the panel), never wider than the page
    panel = min(max(2.4, 0.5 * n_groups + 0.6), PAGE_WIDTH - names - colorbar)
    ncols = max(1, min(len(panels), int((PAGE_WIDTH - names - colorbar) // panel)))
    nrows = -(-len(panels) // ncols)
    height = 1.9 + 0.3 * len(rows)
    fig, axes = figure(nrows, ncols, width=panel + (names + colorbar) / ncols, height=height)
    vmin, vmax = float(np.nanmin(part["value"])), float(np.nanmax(part["value"]))
    image, shared = None, False
    for i, ax in enumerate(axes.flat):
        if i >= len(panels):
            ax.set_visible(False)
            continue
        dim, name = panels[i]
        sub = part[(part["dimension"] == dim) & (part["slice"] == name)]
        grid = sub.pivot_table(index="system", columns="group", values="value", observed=True).reindex(rows)
        image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="viridis", vmin=vmin, vmax=vmax)
        ax.set_xticks(range(grid.shape[1]), [_group_label(sub, g) for g in grid.columns], fontsize=8)
        ax.set_yticks(range(len(rows)), rows if i % ncols == 0 else [""] * len(rows), fontsize=8)
        ax.grid(False)
        variable = QUANTILE_VARIABLES.get((dim, name))
        shared = shared or (variable is not None and _shared_bounds(sub))
        ax.set(xlabel=f"groups by {variable}" if variable else "group", title=f"{_SLICED.get(dim, dim)} by {name}")
        for (r, c), v in np.ndenumerate(grid.to_numpy(dtype=float)):
            if np.isfinite(v):
                light = v < vmin + 0.5 * (vmax - vmin)
                ax.text(c, r, f"{v:.3f}", ha="center", va="center", fontsize=8, color="white" if light else "black")
    if image is not None:
        shown = [ax for ax in axes.flat if ax.get_visible()]
        fig.colorbar(image, ax=shown, label=f"mean {metric}", shrink=0.9 / nrows**0.5)
    # equal-size groups split a tie between two groups: say why two ranges share a value
    note = "\n(equal-size groups split ties, so neighbouring ranges can share a value)" if shared else ""
    fig.suptitle(f"{metric}: mean over the users of each group{note}", fontsize=10)
    return fig


_SLICED = {"user": "users", "item": "items", "time": "ratings"}  # what a slice dimension groups, in words


def _shared_bounds(rows: pd.DataFrame) -> bool:
    """Whether a quantile group's range starts at the value where the previous group's range ends.

    >>> _shared_bounds(pd.DataFrame({"group": ["q1", "q2"], "low": [1.0, 5.0], "high": [5.0, 9.0]}))
    True
    """
    if not {"low", "high"} <= set(rows.columns):
        return False
    bounds = rows.groupby("group", observed=True)[["low", "high"]].median().dropna().sort_values(["low", "high"])
    return bool(np.any(bounds["low"].to_numpy()[1:] <= bounds["high"].to_numpy()[:-1]))


def _group_label(rows: pd.DataFrame, group: Any) -> str:
    """The group's name, with the range of its slicing variable below it when the table has one."""
    if not {"low", "high"} <= set(rows.columns):
        return str(group)
    mine = rows[rows["group"] == group]
    low, high = mine["low"].median(), mine["high"].median()
    if not (np.isfinite(low) and np.isfinite(high)):
        return str(group)
    return f"{group}\n{_short(low)}–{_short(high)}"


def _short(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


# ---------------------------------------------------------------- cyclic
def _integer_ticks():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


#: The cyclic metrics in words (the trajectory columns the simulator writes).
_CYCLIC_NAMES = {
    "recall": "Recall",
    "fallout": "Fallout",
    "precision": "Precision",
    "anti_precision": "AntiPrecision",
    "recall_norm": "normalised Recall",
    "fallout_norm": "normalised Fallout",
}


# (metric, panel title): the simulator's metrics are cumulative, their normalised forms per round
_CYCLIC_PANELS = tuple((m, name if m.endswith("_norm") else f"cumulative {name}") for m, name in _CYCLIC_NAMES.items())


def cyclic_curves(trajectories: pd.DataFrame, *, algorithm: str = "algorithm", styles: Styles | None = None):
    """Cumulative Recall, Fallout, Precision, AntiPrecision and normalised Recall/Fallout vs round, per algorithm.

    ``trajectories`` is a long table with columns ``algorithm``, ``round`` and the metrics
    (as :func:`receval.simulate.simulate` writes them); panels for missing metrics are left out.
    ``styles`` (:func:`~receval.report.style.system_styles`) gives each algorithm its look.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric present, one line per algorithm, a legend under the panels.

    Examples
    --------
    >>> trajectories = pd.DataFrame({"algorithm": ["pop", "pop", "rand", "rand"], "round": [1, 2, 1, 2],
    ...                              "recall": [0.1, 0.2, 0.05, 0.1], "fallout": [0.01, 0.02, 0.02, 0.04]})
    >>> [ax.get_title() for ax in cyclic_curves(trajectories).axes if ax.get_visible()]
    ['cumulative Recall', 'cumulative Fallout\\n(lower is better)']
    """
    _need(trajectories, [algorithm, "round"], "cyclic curves")
    panels = [(m, t) for m, t in _CYCLIC_PANELS if m in trajectories.columns]
    if not panels:
        raise DataError(f"cyclic curves: no metric among {[m for m, _ in _CYCLIC_PANELS]} in the trajectories")
    ncols, nrows = _panels(len(panels), 3.4)
    fig, axes = figure(nrows, ncols, width=3.4, height=2.8)
    looks = _styles_for(trajectories[algorithm], styles)
    names = trajectories[algorithm].astype(str)
    for i, ax in enumerate(axes.flat):
        if i >= len(panels):
            ax.set_visible(False)
            continue
        metric, title = panels[i]
        for name, look in looks.items():
            t = trajectories[names == name].sort_values("round")
            ax.plot(t["round"], t[metric], label=name, **_markers(look, len(t)))
        ax.xaxis.set_major_locator(_integer_ticks())
        ax.set(
            xlabel="round t",
            ylabel=f"{metric} (fraction)",
            title=title + ("\n(lower is better)" if lower_is_better(metric) else ""),
        )
    handles, labels = axes.flat[0].get_legend_handles_labels()
    ncol = _legend_columns(labels, fig.get_figwidth())
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=7)
    return fig


def _markers(style: Mapping[str, Any], n_points: int) -> dict[str, Any]:
    """``style`` with its marker only when the line has few enough points for markers to be told apart."""
    return dict(style) if n_points <= 30 else {k: v for k, v in style.items() if not k.startswith("marker")}


def pair_label(pair: str) -> str:
    """A pair of cyclic metrics as written in a τ table's column (``precision_anti_precision``), in words.

    Returns
    -------
    str
        ``"<first> vs <second>"`` in the metrics' names, or ``pair`` itself when it is no pair of cyclic metrics.

    Examples
    --------
    >>> pair_label("precision_anti_precision"), pair_label("recall_fallout"), pair_label("mine")
    ('Precision vs AntiPrecision', 'Recall vs Fallout', 'mine')
    """
    for i in (j for j, ch in enumerate(pair) if ch == "_"):
        left, right = pair[:i], pair[i + 1 :]
        if left in _CYCLIC_NAMES and right in _CYCLIC_NAMES:
            return f"{_CYCLIC_NAMES[left]} vs {_CYCLIC_NAMES[right]}"
    return pair


def tau_plot(taus: pd.DataFrame):
    """Kendall τ between the quality rankings by Recall and Fallout (and Precision/AntiPrecision) vs round.

    ``taus`` has a ``round`` column and one column per pair (e.g. ``recall_fallout``).

    Returns
    -------
    matplotlib.figure.Figure
        One panel, one line per pair with a defined τ, a zero line and the legend under it.

    Examples
    --------
    >>> fig = tau_plot(pd.DataFrame({"round": [1, 2, 3], "recall_fallout": [1.0, 0.0, -1.0]}))
    >>> fig.axes[0].get_title(), fig.axes[0].get_lines()[0].get_label()
    ('agreement of the quality rankings', 'Recall vs Fallout')
    """
    _need(taus, ["round"], "Kendall tau curve")
    cols = [c for c in taus.columns if c != "round" and taus[c].notna().any()]
    if not cols:
        raise DataError("Kendall tau curve: every τ is undefined (fewer than two algorithms?)")
    fig, axes = figure(1, 1, width=5.0, height=3.2)
    ax = axes[0][0]
    for j, c in enumerate(cols):
        label = pair_label(c)
        same = [p for p in cols[:j] if np.allclose(taus[p], taus[c], equal_nan=True)]
        if same:  # drawn dashed over the earlier one, which would hide it otherwise
            label += f" (identical to {pair_label(same[0])})"
        style = series_style(j, markers=len(taus) <= 30) | {"linewidth": 2.8 if j == 0 else 1.4}
        ax.plot(taus["round"], taus[c], label=label, **style | ({"linestyle": "--"} if j % 2 else {}))
    ax.axhline(0, color=OKABE_ITO[7], linewidth=0.8)
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.set(
        ylim=(-1.05, 1.05),
        xlabel="round t",
        ylabel="Kendall τ-b (+1 agree, −1 inverted)",
        title="agreement of the quality rankings",
    )
    fig.legend(loc="outside lower center", ncol=1)
    return fig


def rank_plot(ranks: Mapping[str, pd.DataFrame], *, styles: Styles | None = None):
    """Each algorithm's quality rank (1 = best) over the rounds, one panel per metric (``styles`` as for bars).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric ranking at least two algorithms (rank 1 at the top), a legend under the panels.

    Examples
    --------
    >>> ranks = {"recall": pd.DataFrame({"pop": [1, 2], "rand": [2, 1]}, index=[1, 2])}
    >>> [ax.get_title() for ax in rank_plot(ranks).axes]
    ['ranking by Recall']
    """
    from matplotlib.ticker import MaxNLocator

    panels = [(m, r) for m, r in ranks.items() if len(r) and r.shape[1] >= 2]
    if not panels:
        raise DataError("ranking plot: needs at least two algorithms")
    fig, axes = figure(1, len(panels), width=3.8, height=3.0)
    for ax, (metric, r) in zip(axes[0], panels, strict=True):
        for name, look in _styles_for(r.columns, styles).items():
            ax.plot(r.index, r.set_axis(r.columns.astype(str), axis=1)[name], label=name, **_markers(look, len(r)))
        ax.invert_yaxis()
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        word = _CYCLIC_NAMES.get(metric, metric)
        ax.set(xlabel="round t", ylabel=f"rank by {word} (1 = best)", title=f"ranking by {word}")
    handles, labels = axes[0][0].get_legend_handles_labels()
    ncol = _legend_columns(labels, fig.get_figwidth())
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=7)
    return fig


# ---------------------------------------------------------------- aspect metrics
def _metric_styles(*frames: pd.DataFrame | None) -> dict[str, dict[str, Any]]:
    names = dict.fromkeys(m for f in frames if f is not None and "metric" in f for m in f["metric"])
    return {m: series_style(i) for i, m in enumerate(names)}


def swap_curves(curves: pd.DataFrame):
    """Metric value relative to the ideal list vs swap level, one panel per swap mode (``metaeval_swap_curves``).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per swap mode, one line per metric (divided by its value at level 0), a legend under the panels.

    Examples
    --------
    >>> curves = pd.DataFrame({"mode": "adjacent", "metric": "ndcg@10", "level": [0, 1, 2], "value": [0.8, 0.4, 0.2]})
    >>> ax = swap_curves(curves).axes[0]
    >>> ax.get_title(), ax.get_lines()[0].get_ydata().tolist()
    ('swaps: adjacent', [1.0, 0.5, 0.25])
    """
    _need(curves, ["mode", "metric", "level", "value"], "swap curves")
    styles = _metric_styles(curves)
    modes = list(dict.fromkeys(curves["mode"]))
    ncols, nrows = _panels(len(modes), 4.0)
    fig, axes = figure(nrows, ncols, width=4.0, height=3.2)
    for ax in axes.flat[len(modes) :]:
        ax.set_visible(False)
    labels: dict[str, str] = {}
    for ax, mode in zip(axes.flat, modes, strict=False):
        drawn: dict[str, np.ndarray] = {}
        for metric, g in curves[curves["mode"] == mode].groupby("metric", sort=False):
            v = g["value"].to_numpy(dtype=float)
            y = v / v[0] if v[0] else v
            same = next((m for m, d in drawn.items() if d.shape == y.shape and np.allclose(d, y, equal_nan=True)), None)
            style = dict(styles[metric])
            if same is not None:  # dashed on top of the curve it coincides with, which would hide it
                style |= {"linestyle": "--", "markerfacecolor": "none"}
                labels[metric] = f"{metric} (same curve as {same})"
            drawn[metric] = y
            ax.plot(g["level"], y, label=metric, **style)
        ax.set(title=f"swaps: {mode}", xlabel="swap level (number of swaps)", ylabel="value / value of the ideal list")
    handles, names = axes[0][0].get_legend_handles_labels()
    shown = [labels.get(n, n) for n in names]
    fig.legend(handles, shown, loc="outside lower center", ncol=_legend_columns(shown, fig.get_figwidth()), fontsize=7)
    return fig


def discriminative_bars(power: pd.DataFrame):
    """Share of run pairs a metric separates (p < 0.05), per significance test (``metaeval_discriminative``).

    Returns
    -------
    matplotlib.figure.Figure
        One panel, a group of bars per metric with one bar per significance test.

    Examples
    --------
    >>> power = pd.DataFrame({"metric": ["ndcg@10", "ndcg@10", "recall@10", "recall@10"],
    ...                       "test": ["t-test", "wilcoxon"] * 2, "share": [0.5, 0.4, 0.3, 0.2]})
    >>> ax = discriminative_bars(power).axes[0]
    >>> [t.get_text() for t in ax.get_xticklabels()], len(ax.patches)
    (['ndcg@10', 'recall@10'], 4)
    """
    _need(power, ["metric", "test", "share"], "discriminative power")
    table = power.pivot_table(index="metric", columns="test", values="share", observed=True)
    table = table.reindex(list(dict.fromkeys(power["metric"])))
    # rotated labels take about 0.7 of their length in width: give each metric that much room
    room = max(0.6, 0.75 * max(_text_inches(str(m), 9) for m in table.index) + 0.2)
    fig, axes = figure(1, 1, width=max(4.5, 1.2 + room * len(table)), height=3.4)
    ax = axes[0][0]
    width = 0.8 / max(1, table.shape[1])
    x = np.arange(len(table))
    for j, test in enumerate(table.columns):
        ax.bar(x + (j - (table.shape[1] - 1) / 2) * width, table[test], width, label=str(test), color=OKABE_ITO[j % 7])
    ax.set_xticks(x, table.index, rotation=45, ha="right", rotation_mode="anchor")
    ax.set(ylim=(0, 1.0), ylabel="share of run pairs with p < 0.05", title="discriminative power")
    fig.legend(title="significance test", ncol=table.shape[1], loc="outside lower center")
    return fig


def incompleteness_plot(robustness: pd.DataFrame):
    """Kendall τ with the full-truth ranking vs share of judgments removed (``metaeval_incompleteness``).

    Returns
    -------
    matplotlib.figure.Figure
        One panel, one line per metric (with error bars where the table has a ``<tau>_std`` column).

    Examples
    --------
    >>> robustness = pd.DataFrame({"metric": "ndcg@10", "fraction": [0.1, 0.5], "tau": [0.9, 0.6]})
    >>> ax = incompleteness_plot(robustness).axes[0]
    >>> ax.get_title(), tuple(map(float, ax.get_xlim()))
    ('incompleteness', (0.0, 100.0))
    """
    _need(robustness, ["metric", "fraction"], "incompleteness")
    tau = next((c for c in robustness.columns if "tau" in c and "std" not in c), None)
    if tau is None:
        raise DataError(f"incompleteness: no tau column in {list(robustness.columns)}")
    std = f"{tau}_std" if f"{tau}_std" in robustness.columns else None
    styles = _metric_styles(robustness)
    fig, axes = figure(1, 1, width=4.8, height=3.4)
    ax = axes[0][0]
    for metric, g in robustness.groupby("metric", sort=False):
        yerr = g[std] if std is not None and g[std].notna().any() else None
        ax.errorbar(g["fraction"] * 100, g[tau], yerr=yerr, capsize=3, label=metric, **styles[metric])
    ax.set(
        xlabel="judgments removed (%)",
        ylabel="Kendall τ with the full-truth ranking",
        title="incompleteness",
        ylim=(min(-0.05, float(np.nanmin(robustness[tau])) - 0.05), 1.05),
        xlim=(0, 100),
    )
    ax.legend(fontsize=7)
    return fig


# ---------------------------------------------------------------- coherence
_COHERENCE_COLOURS = {
    "All-All": OKABE_ITO[7],
    "All-Diff": OKABE_ITO[3],
    "Diff-Diff": OKABE_ITO[3],
    "All-Easy": OKABE_ITO[0],
    "Easy-Easy": OKABE_ITO[0],
    "Avg": OKABE_ITO[1],
    "rating ratio": "#999999",
}


def coherence_curves(table: pd.DataFrame, *, gamma: str = "wstd", folds: int = 5, avg: str = "users"):
    """Relative RMSE vs p per model with the rating ratio (``coherence`` table), one panel per recommender.

    The table is :func:`receval.studies.partitions.coherence_split_experiment`'s, with
    ``recommender`` and ``p`` as columns. Difficult users are drawn vermillion, easy ones
    blue, dashed when the model was trained on all users; the rating ratio (grey) is on
    a second axis; ``folds`` and ``avg`` name the set-up in the titles and legend.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per recommender, each with a second axis for the rating ratio, one legend under the panels.

    Examples
    --------
    >>> table = pd.DataFrame({"recommender": "svd", "p": [0.2, 0.5], "All-Diff": [1.0, 2.0], "All-Easy": [-1.0, -2.0],
    ...                       "Diff-Diff": [0.5, 1.0], "Easy-Easy": [-0.5, -1.0], "Avg": [0.0, 0.1],
    ...                       "rating_ratio": [0.3, 0.6]})
    >>> fig = coherence_curves(table)
    >>> len(fig.axes), fig.axes[0].get_title()
    (2, 'svd (wstd coherence, 5-fold)')
    """
    _need(table, ["p", "All-Diff", "All-Easy", "Diff-Diff", "Easy-Easy", "Avg", "rating_ratio"], "coherence curves")
    from receval.report.style import styled

    if "recommender" not in table.columns:
        raise DataError(f"coherence curves: no recommender column in {list(table.columns)}")
    indexed = table.set_index(["recommender", "p"]).sort_index()
    recs = list(dict.fromkeys(indexed.index.get_level_values(0)))
    lines = {"All-All": "-", "All-Diff": "--", "All-Easy": "--", "Diff-Diff": "-", "Easy-Easy": "-", "Avg": ":"}
    avg_label = "Avg" if avg == "users" else f"Avg ({avg} weights)"
    ncols, nrows = _panels(len(recs), 5.0)
    fig, axes = figure(nrows, ncols, width=5.0, height=3.6)
    for ax in axes.flat[len(recs) :]:
        ax.set_visible(False)
    handles: list[Any] = []
    with styled():
        for ax, rec in zip(axes.flat, recs, strict=False):
            sub = indexed.loc[rec].sort_index()
            ps = sub.index.to_numpy(dtype=float)
            for model, style in lines.items():
                y = np.zeros(len(ps)) if model == "All-All" else sub[model].to_numpy(dtype=float)
                ax.plot(
                    ps,
                    y,
                    color=_COHERENCE_COLOURS[model],
                    linestyle=style,
                    marker="o",
                    markersize=3,
                    label=avg_label if model == "Avg" else model,
                )
            ax.set(
                xlim=(0, 1),
                xlabel="p (share of difficult users)",
                ylabel="% RMSE change w.r.t. All-All",
                title=f"{rec} ({gamma} coherence, {folds}-fold)",
            )
            twin = ax.twinx()
            twin.plot(
                ps,
                sub["rating_ratio"].to_numpy(dtype=float),
                color=_COHERENCE_COLOURS["rating ratio"],
                linewidth=2,
                label="rating ratio",
            )
            twin.set(ylim=(0, 1), ylabel="rating ratio")
            twin.spines["right"].set_visible(True)
            twin.grid(False)
            if not handles:  # one legend under the panels: inside, it hid the rating-ratio line
                handles = ax.get_lines() + twin.get_lines()
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8)
    return fig
