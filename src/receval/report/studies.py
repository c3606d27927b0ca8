"""Figures of the studies in :mod:`receval.studies`, in receval's style, written atomically.

The studies compute tables; this module draws them and writes the figures through
:func:`receval.atomic.write_figure` (a reader never sees a half-written file).

- shilling attacks (:mod:`receval.studies.attacks`): :func:`attack_curves`, saved by
  :func:`plot_attack_experiment`;
- easy and difficult users (:mod:`receval.studies.partitions`):
  :func:`~receval.report.figures.coherence_curves`, saved by :func:`plot_coherence_split`;
  :func:`write_coherence_split` writes the tables (CSV) and the figure;
- meta-evaluation of metrics (:mod:`receval.studies.metaeval`):
  :func:`~receval.report.figures.swap_curves`,
  :func:`~receval.report.figures.discriminative_bars` and
  :func:`~receval.report.figures.incompleteness_plot`, saved by :func:`plot_metaeval`;
  :func:`write_metaeval` writes a whole study's tables (CSV) and figures.

Examples
--------
>>> import tempfile, pathlib
>>> from receval.data.synthetic import generate
>>> from receval.studies.attacks import attack_experiment
>>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
>>> frame = attack_experiment(data, "average", [0.05, 0.1], ["random"], n_targets=1, filler=5, metrics=())
>>> [ax.get_ylabel() for ax in attack_curves(frame).axes]  # random has no predict: shifts on a score axis
['prediction shift', 'hit ratio after', 'score shift (dashed)']
>>> png = plot_attack_experiment(frame, pathlib.Path(tempfile.mkdtemp()) / "attack.png")
>>> png.read_bytes()[:4]
b'\\x89PNG'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from receval.atomic import Publication, publish, write_figure, write_frame
from receval.report import figures as F
from receval.report.style import close_figure, figure, series_style, styled

if TYPE_CHECKING:
    from receval.studies.metaeval import MetaevalStudy
    from receval.studies.partitions import CoherenceSplitResult

__all__ = [
    "attack_curves",
    "plot_attack_experiment",
    "plot_coherence_split",
    "plot_metaeval",
    "write_coherence_split",
    "write_metaeval",
]

_DPI = 120


def _write(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with styled():
        write_figure(path, fig, dpi=_DPI)
    close_figure(fig)
    return path


# ---------------------------------------------------------------- attacks
def attack_curves(frame: pd.DataFrame, measures: Sequence[str] = ("prediction_shift", "hit_ratio_after")):
    """Each measure (mean over targets) against attack size, one line per algorithm, one row per attack.

    ``frame`` is :func:`receval.studies.attacks.attack_experiment`'s table. Prediction
    shifts measured on scores (models without ``predict``) are drawn dashed on a second
    y axis: their unit is the model's score, not the rating scale.

    Returns
    -------
    matplotlib.figure.Figure
        A ``len(attacks) x len(measures)`` grid of panels, one line per algorithm, each panel with its legend.

    Examples
    --------
    >>> frame = pd.DataFrame({"attack": "average", "intent": "push", "size": [0.05, 0.1] * 2,
    ...                       "algorithm": ["svd", "svd", "pop", "pop"], "shift_kind": "rating", "target": 7,
    ...                       "prediction_shift": [0.2, 0.5, 0.0, 0.1], "hit_ratio_after": [0.1, 0.3, 0.0, 0.2]})
    >>> fig = attack_curves(frame)
    >>> [ax.get_ylabel() for ax in fig.axes], [line.get_label() for line in fig.axes[0].get_lines()]
    (['prediction shift', 'hit ratio after'], ['svd', 'pop'])
    """
    from receval.studies.attacks import summarize_attack_experiment

    F._need(frame, ["attack", "intent", "size", "algorithm", "shift_kind", "target", *measures], "attack curves")
    summary = summarize_attack_experiment(frame)
    attacks = list(dict.fromkeys(summary["attack"]))
    fig, axes = figure(len(attacks), len(measures), width=4.6, height=3.4)
    with styled():
        for r, kind in enumerate(attacks):
            part = summary[summary["attack"] == kind]
            for c, measure in enumerate(measures):
                ax = axes[r][c]
                twin = None
                for n_line, (label, group) in enumerate(part.groupby("algorithm", sort=False)):
                    on_scores = measure == "prediction_shift" and (group["shift_kind"] == "score").all()
                    target = ax
                    if on_scores:
                        if twin is None:
                            twin = ax.twinx()
                            twin.spines["right"].set_visible(True)
                            twin.grid(False)
                            twin.set_ylabel("score shift (dashed)")
                        target = twin
                    style = series_style(n_line) | ({"linestyle": "--"} if on_scores else {})
                    target.plot(
                        group["size"] * 100,
                        group[measure],
                        label=f"{label} (score)" if on_scores else str(label),
                        **style,
                    )
                ax.set(
                    xlabel="attack size (% of users)",
                    ylabel=measure.replace("_", " "),
                    title=f"{kind} {part['intent'].iloc[0]} attack",
                )
                handles, labels = ax.get_legend_handles_labels()
                if twin is not None:
                    more = twin.get_legend_handles_labels()
                    handles, labels = handles + more[0], labels + more[1]
                ax.legend(handles, labels, fontsize=7)
    return fig


def plot_attack_experiment(
    frame: pd.DataFrame, path: str | Path, measures: Sequence[str] = ("prediction_shift", "hit_ratio_after")
) -> Path:
    """Write :func:`attack_curves` to ``path`` (format from its extension, PNG by default); returns the path.

    Returns
    -------
    pathlib.Path
        ``path``, now holding the figure.

    Examples
    --------
    >>> import tempfile
    >>> frame = pd.DataFrame({"attack": "average", "intent": "push", "size": [0.05, 0.1], "algorithm": "svd",
    ...                       "shift_kind": "rating", "target": 7, "prediction_shift": [0.2, 0.5],
    ...                       "hit_ratio_after": [0.1, 0.3]})
    >>> plot_attack_experiment(frame, Path(tempfile.mkdtemp()) / "attack.png").read_bytes()[:4]
    b'\\x89PNG'
    """
    return _write(attack_curves(frame, measures), path)


# ---------------------------------------------------------------- coherence split
def plot_coherence_split(result: CoherenceSplitResult, path: str | Path) -> Path:
    """Write the relative-RMSE curves of a coherence split (:func:`~receval.report.figures.coherence_curves`).

    ``result`` is :func:`receval.studies.partitions.coherence_split_experiment`'s outcome.

    Returns
    -------
    pathlib.Path
        ``path``, now holding the figure.

    Examples
    --------
    >>> import tempfile
    >>> from receval.studies.partitions import CoherenceSplitResult
    >>> table = pd.DataFrame({"recommender": "svd", "p": [0.2, 0.5], "All-Diff": [1.0, 2.0], "All-Easy": [-1.0, -2.0],
    ...                       "Diff-Diff": [0.5, 1.0], "Easy-Easy": [-0.5, -1.0], "Avg": [0.0, 0.1],
    ...                       "rating_ratio": [0.3, 0.6]}).set_index(["recommender", "p"])
    >>> result = CoherenceSplitResult(table, pd.DataFrame({"rmse": [0.9]}), gamma="wstd", folds=5, avg="users")
    >>> plot_coherence_split(result, Path(tempfile.mkdtemp()) / "coherence.png").name
    'coherence.png'
    """
    fig = F.coherence_curves(result.table.reset_index(), gamma=result.gamma, folds=result.folds, avg=result.avg)
    return _write(fig, path)


def write_coherence_split(result: CoherenceSplitResult, out_dir: str | Path) -> list[Path]:
    """Write ``table.csv`` (relative RMSE per recommender and p), ``rmse.csv`` and ``figure.png``; returns the paths.

    Returns
    -------
    list of pathlib.Path
        ``table.csv``, ``rmse.csv`` and ``figure.png`` in ``out_dir``, published together.

    Examples
    --------
    >>> import tempfile
    >>> from receval.studies.partitions import CoherenceSplitResult
    >>> table = pd.DataFrame({"recommender": "svd", "p": [0.2, 0.5], "All-Diff": [1.0, 2.0], "All-Easy": [-1.0, -2.0],
    ...                       "Diff-Diff": [0.5, 1.0], "Easy-Easy": [-0.5, -1.0], "Avg": [0.0, 0.1],
    ...                       "rating_ratio": [0.3, 0.6]}).set_index(["recommender", "p"])
    >>> result = CoherenceSplitResult(table, pd.DataFrame({"rmse": [0.9]}), gamma="wstd", folds=5, avg="users")
    >>> [p.name for p in write_coherence_split(result, Path(tempfile.mkdtemp()) / "split") if p.exists()]
    ['table.csv', 'rmse.csv', 'figure.png']
    """
    out = Path(out_dir)
    paths = [out / "table.csv", out / "rmse.csv", out / "figure.png"]
    with publish(out) as publication:  # the tables and their figure appear together
        write_frame(publication.path(paths[0]), result.table, index=True)
        write_frame(publication.path(paths[1]), result.rmse, index=True)
        plot_coherence_split(result, publication.path(paths[2]))
    return paths


# ---------------------------------------------------------------- metaeval
def plot_metaeval(
    curves: pd.DataFrame | None,
    power: pd.DataFrame | None,
    robustness: pd.DataFrame | None,
    out_dir: str | Path,
) -> list[Path]:
    """Write ``swap_curves.png``, ``discriminative_power.png`` and ``incompleteness.png`` for the tables given.

    The tables are those of :func:`receval.studies.metaeval.swap_correlation` (its
    curves), :func:`~receval.studies.metaeval.discriminative_power` and
    :func:`~receval.studies.metaeval.incompleteness`; ``None`` or an empty table is
    skipped. Returns the paths written.

    Returns
    -------
    list of pathlib.Path
        The figures written, in the order above, only for the tables given.

    Examples
    --------
    >>> import tempfile
    >>> curves = pd.DataFrame({"mode": "adjacent", "metric": "ndcg@10", "level": [0, 1], "value": [0.8, 0.4]})
    >>> [p.name for p in plot_metaeval(curves, None, pd.DataFrame(), Path(tempfile.mkdtemp()))]
    ['swap_curves.png']
    """
    out = Path(out_dir)
    with publish(out) as publication:
        return _metaeval_figures(curves, power, robustness, out, publication)


def _metaeval_figures(
    curves: pd.DataFrame | None,
    power: pd.DataFrame | None,
    robustness: pd.DataFrame | None,
    out: Path,
    publication: Publication,
) -> list[Path]:
    builders = (
        (curves, F.swap_curves, "swap_curves.png"),
        (power, F.discriminative_bars, "discriminative_power.png"),
        (robustness, F.incompleteness_plot, "incompleteness.png"),
    )
    publication.owns(out, [name for _, _, name in builders])  # a figure of an earlier run's table goes with it
    paths = []
    for table, build, name in builders:
        if table is not None and len(table):
            _write(build(table), publication.path(out / name))
            paths.append(out / name)
    return paths


def write_metaeval(study: MetaevalStudy, out_dir: str | Path) -> list[Path]:
    """Write a :func:`~receval.studies.metaeval.metaeval_study`'s four tables as CSV and its figures as PNG.

    Returns the paths written (``swap_correlation.csv``, ``swap_curves.csv``,
    ``discriminative_power.csv``, ``incompleteness.csv`` and :func:`plot_metaeval`'s).

    Returns
    -------
    list of pathlib.Path
        The four CSV files, then the figures of the non-empty tables, published together.

    Examples
    --------
    >>> import tempfile
    >>> from receval.studies.metaeval import MetaevalStudy
    >>> curves = pd.DataFrame({"mode": "adjacent", "metric": "ndcg@10", "level": [0, 1], "value": [0.8, 0.4]})
    >>> swap, none = pd.DataFrame({"metric": ["ndcg@10"], "tau": [1.0]}), pd.DataFrame()
    >>> study = MetaevalStudy(swap, curves, none, none, pd.DataFrame({"ndcg@10": [0.5]}, index=["pop"]), 3, 4, 2)
    >>> [p.name for p in write_metaeval(study, Path(tempfile.mkdtemp()))]  # no power or robustness: no figure of them
    ['swap_correlation.csv', 'swap_curves.csv', 'discriminative_power.csv', 'incompleteness.csv', 'swap_curves.png']
    """
    out = Path(out_dir)
    paths = []
    with publish(out) as publication:  # the tables and their figures appear together
        publication.owns(out, [f"{name}.csv" for name in study.tables()])
        for name, frame in study.tables().items():
            paths.append(out / f"{name}.csv")
            write_frame(publication.path(paths[-1]), frame)
        return paths + _metaeval_figures(study.curves, study.power, study.robustness, out, publication)
