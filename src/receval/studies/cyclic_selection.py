"""The conclusion step of a cyclic grid: the best configuration of each algorithm, then the algorithms' ranking.

A grid runs several configurations (parameter values) of each algorithm. The procedure
described for the study of Cuesta Fernández's BSc thesis (UAM 2021) keeps, per data set,
each algorithm's best configuration at round t (500) by Recall and, separately, by
Fallout, ranks the algorithms by those best values, and compares the two rankings with
Kendall's τ. The thesis text available stops after its chapter 3, so its own grid and
tables are not there: this module offers the procedure on any grid's trajectories.

Examples
--------
>>> import pandas as pd
>>> rows = [("eg@0.1", "egreedy", 0.30, 0.20), ("eg@0.2", "egreedy", 0.35, 0.25),
...         ("pop", "popularity", 0.32, 0.10)]
>>> table = pd.DataFrame([(c, a, 1, r, f) for c, a, r, f in rows],
...                      columns=["configuration", "algorithm", "round", "recall", "fallout"])
>>> sel = best_per_algorithm(table, t=1)
>>> sel.table[["algorithm", "best_by_recall", "recall_rank", "best_by_fallout", "fallout_rank"]].values.tolist()
[['egreedy', 'eg@0.2', 1.0, 'eg@0.1', 2.0], ['popularity', 'pop', 2.0, 'pop', 1.0]]
>>> sel.tau
{'': -1.0}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from receval.errors import ConfigError, DataError
from receval.stats.agreement import TAU_VARIANTS, higher_is_better, tau_between

__all__ = ["Selection", "best_per_algorithm", "best_of_runs", "DEFAULT_ROUND"]

DEFAULT_ROUND = 500


@dataclass
class Selection:
    """The result of :func:`best_per_algorithm`.

    Attributes
    ----------
    table
        One row per data set and algorithm: ``dataset``, ``algorithm``, then for each
        metric m ``best_by_m`` (the configuration), ``m`` (its value at the round) and
        ``m_rank`` (the algorithm's rank among the data set's algorithms, 1 = best, ties
        share the mean rank), and ``round`` (the round read, ≤ t: a run that ended earlier
        counts with its last row).
    tau
        Per data set, Kendall's τ between the rankings by the two metrics (+1: they agree).
    t, variant, metrics
        The round asked for, the τ variant (``"a"`` or ``"b"``) and the two metrics.
    """

    table: pd.DataFrame
    tau: dict[str, float]
    t: int | None
    variant: str
    metrics: tuple[str, str] = ("recall", "fallout")


def _at_round(frame: pd.DataFrame, t: int | None, keys: list[str]) -> pd.DataFrame:
    """Each configuration's row at round t (its last row up to t), means over repeated rows (seeds)."""
    if t is not None:
        frame = frame[frame["round"] <= t]
    mean = frame.groupby([*keys, "round"], sort=False, dropna=False).mean(numeric_only=True).reset_index()
    last = mean.sort_values("round", kind="stable").groupby(keys, sort=False, dropna=False).tail(1)
    return last.reset_index(drop=True)


def best_per_algorithm(
    table: pd.DataFrame,
    t: int | None = DEFAULT_ROUND,
    *,
    tau: str = "b",
    metrics: tuple[str, str] = ("recall", "fallout"),
    configuration: str = "configuration",
    algorithm: str = "algorithm",
    dataset: str = "dataset",
) -> Selection:
    """Per data set, each algorithm's best configuration at round ``t`` by each metric; ranking and τ.

    Parameters
    ----------
    table
        Trajectories, one row per configuration and round (and per seed: rows that share
        data set, configuration and round are averaged): columns ``configuration``,
        ``algorithm``, ``round``, the two ``metrics`` and optionally ``dataset``.
    t
        The round (default 500); ``None`` the last round. A configuration whose run
        ended before ``t`` counts with its last row (cumulative metrics no longer change).
    tau
        Kendall's τ variant between the two rankings: ``"b"`` (scipy's) or ``"a"`` (the
        thesis' Eq. 2.10), see :mod:`receval.stats.agreement`.
    metrics
        The two metrics; each is read in its registry direction (Recall higher is
        better, Fallout lower is better).
    configuration, algorithm, dataset
        The column names.

    Returns
    -------
    Selection
        The per-algorithm table and τ per data set (see :class:`Selection`).

    Examples
    --------
    Two configurations of one bandit and one of popularity: by Recall the bandit's
    second configuration wins and the bandit ranks first; by Fallout popularity ranks
    first, so the rankings are opposite (τ = −1).

    >>> rows = [("eg@0.1", "egreedy", 0.30, 0.20), ("eg@0.2", "egreedy", 0.35, 0.25),
    ...         ("pop", "popularity", 0.32, 0.10)]
    >>> table = pd.DataFrame([(c, a, 1, r, f) for c, a, r, f in rows],
    ...                      columns=["configuration", "algorithm", "round", "recall", "fallout"])
    >>> best_per_algorithm(table, t=None, tau="a").table[["algorithm", "recall", "fallout"]].values.tolist()
    [['egreedy', 0.35, 0.2], ['popularity', 0.32, 0.1]]
    """
    if tau not in TAU_VARIANTS:
        raise ConfigError(f"tau={tau!r} is not one of {', '.join(TAU_VARIANTS)} (Kendall's τ-a or τ-b)")
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | np.integer) or t < 1):
        raise ConfigError(f"t={t!r} must be a positive round number (or None for the last round)")
    for metric in metrics:
        higher_is_better(metric)  # an unknown metric is refused before the table is read
    needed = [configuration, algorithm, "round", *metrics]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise DataError(
            f"the trajectories table has no column {missing[0]!r} (columns: {', '.join(map(str, table.columns))}); "
            f"best_per_algorithm needs {', '.join(needed)}"
        )
    frame = table[[c for c in (dataset, *needed) if c in table.columns]].copy()
    frame = frame.rename(columns={configuration: "configuration", algorithm: "algorithm", dataset: "dataset"})
    if "dataset" not in frame.columns:
        frame["dataset"] = ""
    frame["dataset"] = frame["dataset"].astype(str)
    rows, taus = [], {}
    for name, part in frame.groupby("dataset", sort=False):
        at = _at_round(part, t, ["dataset", "configuration", "algorithm"])
        out = pd.DataFrame({"dataset": name, "algorithm": list(dict.fromkeys(at["algorithm"]))})
        out["round"] = at.groupby("algorithm", sort=False)["round"].max().reindex(out["algorithm"]).to_numpy()
        qualities = []
        for metric in metrics:
            sign = 1.0 if higher_is_better(metric) else -1.0
            scored = at.assign(_q=sign * at[metric].astype(np.float64)).dropna(subset=["_q"])
            # the best quality, ties to the configuration named first (sorted), so the choice is reproducible
            scored = scored.sort_values(["algorithm", "_q", "configuration"], ascending=[True, False, True])
            best = scored.groupby("algorithm", sort=False).head(1).set_index("algorithm")
            best = best.reindex(out["algorithm"])
            out[f"best_by_{metric}"] = best["configuration"].to_numpy()
            out[metric] = best[metric].to_numpy(dtype=np.float64)
            quality = sign * out[metric].to_numpy()
            ranks = pd.Series(-quality).rank(method="average", na_option="keep").to_numpy()
            out[f"{metric}_rank"] = ranks
            qualities.append(quality)
        taus[str(name)] = tau_between(qualities[0], qualities[1], tau)
        rows.append(out)
    result = pd.concat(rows, ignore_index=True)
    order = ["dataset", "algorithm"]
    for metric in metrics:
        order += [f"best_by_{metric}", metric, f"{metric}_rank"]
    return Selection(result[[*order, "round"]], taus, t, tau, metrics)


def best_of_runs(runs: Mapping[str, Any], t: int | None = None, *, tau: str = "b") -> Selection | None:
    """:func:`best_per_algorithm` of runs labelled ``NAME`` or ``NAME@TAG`` (one data set).

    ``runs`` maps a label to a :class:`~receval.simulate.Trajectory` or its table; the
    algorithm of a label is the part before ``@`` (``receval simulate --algorithms
    knn-bandit,knn-bandit@k5`` runs two configurations of ``knn-bandit``). ``t`` None is
    the last round.

    Returns
    -------
    Selection or None
        None when no algorithm runs in more than one configuration (nothing to select).

    Examples
    --------
    >>> a = pd.DataFrame({"round": [1], "recall": [0.3], "fallout": [0.2]})
    >>> runs = {"eg": a, "eg@2": a.assign(recall=0.35, fallout=0.25), "pop": a.assign(recall=0.32, fallout=0.1)}
    >>> sel = best_of_runs(runs)
    >>> sel.table[["algorithm", "best_by_recall", "best_by_fallout"]].values.tolist(), sel.tau
    ([['eg', 'eg@2', 'eg'], ['pop', 'pop', 'pop']], {'': -1.0})
    >>> best_of_runs({"eg": a, "pop": a}) is None
    True
    """
    algorithm = {label: str(label).partition("@")[0] for label in runs}
    if len(set(algorithm.values())) == len(algorithm):
        return None
    table = pd.concat(
        [
            (run.table if hasattr(run, "table") else run).assign(configuration=label, algorithm=algorithm[label])
            for label, run in runs.items()
        ],
        ignore_index=True,
    )
    return best_per_algorithm(table, t, tau=tau)
