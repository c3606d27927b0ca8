"""Do two metrics rank systems alike? Kendall's τ between quality rankings.

At a round t, the systems (algorithms) are ranked by quality under each metric, in
the direction the metric registry declares (:func:`receval.metrics.registry.metric_direction`):
Recall and Precision higher is better, Fallout and AntiPrecision lower is better (a
false-positive metric measures failure). Kendall's τ between two such quality rankings
is +1 when the metrics order the systems identically from best to worst — they *agree*
— and −1 when the orders are exactly opposite.

Two variants (``tau=``), which differ only when a ranking has ties:

- ``"b"`` (receval's default, scipy's :func:`scipy.stats.kendalltau`): the concordant
  minus discordant pairs over the geometric mean of the pairs untied in each ranking,
  so that two identical rankings with ties still score 1;
- ``"a"`` (Eq. 2.10 of Cuesta Fernández's BSc thesis, UAM 2021, and Kendall 1938):
  Σ_{i<j} sgn(x_i − x_j)·sgn(y_i − y_j) over all N(N − 1)/2 pairs, so a tied pair
  counts 0 and ties pull τ towards 0.

Sign convention: papers that correlate the raw metric values (e.g. Mena-Maldonado et
al. 2020) report the opposite sign: a positive correlation between raw Recall and
raw Fallout means the metrics *disagree* on which system is better. Here
τ(Recall, Fallout) = −τ_raw(Recall, Fallout).

Trajectories of different lengths (runs that stopped when every user was exhausted)
are compared at round t with their last row carried forward: cumulative metrics no
longer change after a run ends.

Examples
--------
>>> import pandas as pd
>>> tables = {
...     "a": pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.3], "fallout": [0.0, 0.1]}),
...     "b": pd.DataFrame({"round": [1, 2], "recall": [0.2, 0.2], "fallout": [0.1, 0.2]}),
...     "c": pd.DataFrame({"round": [1, 2], "recall": [0.0, 0.1], "fallout": [0.2, 0.3]}),
... }
>>> kendall_tau(tables, "recall", "fallout")  # a best and c worst under both
1.0
>>> quality_ranks(tables, "fallout", t=1)
{'a': 1.0, 'b': 2.0, 'c': 3.0}
>>> tau_curve(tables, "recall", "fallout")["tau"].round(3).tolist()  # round 1: b, a, c vs a, b, c
[0.333, 1.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from receval.errors import ConfigError, MetricError
from receval.metrics.registry import metric_direction
from receval.stats.significance import _kendall_tau

__all__ = [
    "TAU_VARIANTS",
    "kendall_tau_a",
    "tau_between",
    "higher_is_better",
    "metric_values",
    "quality_ranks",
    "kendall_tau",
    "kendall_agreement",
    "tau_curve",
    "ranks_over_time",
]


TAU_VARIANTS = ("a", "b")


def kendall_tau_a(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-a: Σ_{i<j} sgn(x_i − x_j)·sgn(y_i − y_j) / (N(N − 1)/2).

    The thesis' Eq. 2.10 (Cuesta Fernández, UAM 2021; Kendall, Biometrika 1938). Pairs
    where either value is not finite are left out first; N counts the rest.

    Returns
    -------
    float
        In [−1, 1]; NaN with fewer than two systems. A tie in either ranking adds 0, so
        a ranking that is all ties gives 0 (τ-b is then undefined).

    Examples
    --------
    One tie in y: of the three pairs two are concordant and the tied one adds 0, so
    τ-a = 2/3 while τ-b = 2/√(3·2) ≈ 0.816.

    >>> round(kendall_tau_a(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 2.0])), 4)
    0.6667
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    if n < 2:
        return float("nan")
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    return float(np.triu(sx * sy, 1).sum() / (n * (n - 1) / 2))


def tau_between(x: np.ndarray, y: np.ndarray, tau: str = "b") -> float:
    """Kendall's τ between two score vectors (same systems, same order; larger = better).

    ``tau`` is ``"b"`` (scipy's τ-b: NaN when a side is all ties) or ``"a"``
    (:func:`kendall_tau_a`); pairs with a non-finite value are left out.

    Returns
    -------
    float
        In [−1, 1], or NaN with fewer than two systems.

    Examples
    --------
    >>> x, y = np.array([3.0, 2.0, 1.0]), np.array([-0.1, -0.1, -0.2])
    >>> round(tau_between(x, y, "a"), 4), round(tau_between(x, y, "b"), 4)
    (0.6667, 0.8165)
    """
    if tau not in TAU_VARIANTS:
        raise ConfigError(f"tau={tau!r} is not one of {', '.join(TAU_VARIANTS)} (Kendall's τ-a or τ-b)")
    return kendall_tau_a(x, y) if tau == "a" else _kendall_tau(x, y)


def higher_is_better(metric: str) -> bool:
    """Whether larger values of ``metric`` are better, from the metric registry.

    ``metric`` is a metric string (``"precision@10"``) or a declared measure such as the
    cyclic simulator's ``recall_norm``; a name without a declared direction is refused.

    Returns
    -------
    bool
        True for higher-is-better metrics (Recall), False for lower-is-better ones (Fallout).

    Examples
    --------
    >>> higher_is_better("recall"), higher_is_better("anti_precision"), higher_is_better("fp@10")
    (True, False, False)
    """
    direction = metric_direction(metric)
    if direction is None:
        raise MetricError(
            f"unknown metric {metric!r} for agreement: the metric registry gives it no direction "
            "(higher or lower is better); use a metric string such as 'recall' or 'fallout@10'"
        )
    return direction == "higher"


def _table(traj: Any) -> pd.DataFrame:
    return traj.table if hasattr(traj, "table") else traj


def _aligned(trajectories: Mapping[str, Any], metric: str) -> pd.DataFrame:
    """Rounds x systems values of ``metric``, each run's last row carried forward."""
    higher_is_better(metric)  # refuses a name without a direction before any table is read
    if len(trajectories) == 0:
        raise MetricError("no trajectories to compare")
    cols = {}
    for name, traj in trajectories.items():
        table = _table(traj)
        if metric not in table.columns or "round" not in table.columns:
            raise MetricError(
                f"unknown metric {metric!r} for trajectory {name!r}: it has no {metric!r} or 'round' column "
                f"(columns: {', '.join(map(str, table.columns))})"
            )
        cols[name] = pd.Series(table[metric].to_numpy(dtype=np.float64), index=table["round"].to_numpy())
    last = max(int(c.index.max()) for c in cols.values())
    index = pd.RangeIndex(1, last + 1, name="round")
    return pd.DataFrame({name: c.reindex(index).ffill() for name, c in cols.items()}, index=index)


def metric_values(trajectories: Mapping[str, Any], metric: str, t: int | None = None) -> pd.Series:
    """Each system's value of ``metric`` at round ``t`` (default: the last round of the longest run).

    ``trajectories`` maps a system's name to its :class:`~receval.simulate.Trajectory`
    or to a table with a ``round`` column; a run that ended earlier keeps its last value.

    Returns
    -------
    pandas.Series
        Indexed by system, named ``metric``.

    Examples
    --------
    >>> runs = {"a": pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.3], "fallout": [0.05, 0.1]}),
    ...         "b": pd.DataFrame({"round": [1, 2], "recall": [0.2, 0.25], "fallout": [0.1, 0.2]}),
    ...         "c": pd.DataFrame({"round": [1], "recall": [0.05], "fallout": [0.01]})}  # c stopped after round 1
    >>> metric_values(runs, "recall").to_dict(), metric_values(runs, "recall", t=1).to_dict()
    ({'a': 0.3, 'b': 0.25, 'c': 0.05}, {'a': 0.1, 'b': 0.2, 'c': 0.05})
    """
    frame = _aligned(trajectories, metric)
    last = len(frame)
    t = last if t is None else int(t)
    if not 1 <= t <= last:
        raise MetricError(f"round t={t} is outside 1..{last}")
    return frame.loc[t].rename(metric)


def _quality(values: pd.Series | np.ndarray, metric: str) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    return v if higher_is_better(metric) else -v


def quality_ranks(trajectories: Mapping[str, Any], metric: str, t: int | None = None) -> dict[str, float]:
    """Rank of each system under ``metric`` at round ``t``: 1 = best (ties share the mean rank).

    Returns
    -------
    dict of str to float
        System name to rank, in the metric's direction (lowest Fallout ranks 1).

    Examples
    --------
    >>> runs = {"a": pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.3], "fallout": [0.05, 0.1]}),
    ...         "b": pd.DataFrame({"round": [1, 2], "recall": [0.2, 0.25], "fallout": [0.1, 0.2]}),
    ...         "c": pd.DataFrame({"round": [1], "recall": [0.05], "fallout": [0.01]})}  # c stopped after round 1
    >>> quality_ranks(runs, "recall"), quality_ranks(runs, "fallout")
    ({'a': 1.0, 'b': 2.0, 'c': 3.0}, {'a': 2.0, 'b': 3.0, 'c': 1.0})
    """
    values = metric_values(trajectories, metric, t)
    ranks = stats.rankdata(-_quality(values, metric), method="average", nan_policy="omit")
    return dict(zip(values.index, ranks.astype(float).tolist(), strict=True))


def kendall_tau(
    trajectories: Mapping[str, Any], metric_a: str, metric_b: str, t: int | None = None, tau: str = "b"
) -> float:
    """Kendall's τ (``tau``: ``"b"`` scipy's τ-b, ``"a"`` the thesis' τ-a) between the
    quality rankings under two metrics at round ``t``.

    NaN when fewer than two systems have both values, or (τ-b) one ranking is all ties.

    Returns
    -------
    float
        In [−1, 1]: +1 when both metrics order the systems alike from best to worst.

    Examples
    --------
    At the last round Recall ranks a, b, c and Fallout c, a, b: of the three pairs only
    (a, b) is ordered alike, so τ = (1 − 2) / 3.

    >>> runs = {"a": pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.3], "fallout": [0.05, 0.1]}),
    ...         "b": pd.DataFrame({"round": [1, 2], "recall": [0.2, 0.25], "fallout": [0.1, 0.2]}),
    ...         "c": pd.DataFrame({"round": [1], "recall": [0.05], "fallout": [0.01]})}  # c stopped after round 1
    >>> round(kendall_tau(runs, "recall", "fallout"), 4)
    -0.3333

    With a tie (a and b share the lowest Fallout) the variants differ: two of the three
    pairs are concordant and the tied one counts 0, so τ-a = 2/3 and τ-b = 2/√(3·2).

    >>> tied = {"a": pd.DataFrame({"round": [1], "recall": [0.3], "fallout": [0.1]}),
    ...         "b": pd.DataFrame({"round": [1], "recall": [0.2], "fallout": [0.1]}),
    ...         "c": pd.DataFrame({"round": [1], "recall": [0.1], "fallout": [0.2]})}
    >>> round(kendall_tau(tied, "recall", "fallout", tau="a"), 4), round(kendall_tau(tied, "recall", "fallout"), 4)
    (0.6667, 0.8165)
    """
    a = _quality(metric_values(trajectories, metric_a, t), metric_a)
    b = _quality(metric_values(trajectories, metric_b, t), metric_b)
    return tau_between(a, b, tau)


def kendall_agreement(
    final: pd.DataFrame | Mapping[str, Any], t: int | None = None, tau: str = "b"
) -> dict[str, float]:
    """τ(Recall, Fallout) and τ(Precision, AntiPrecision) quality agreement.

    ``final`` is either a table with one row per system and metric columns (e.g. each
    system's :meth:`~receval.simulate.Trajectory.final`) or a mapping of system names
    to trajectories (then at round ``t``, default the last).

    ``tau`` is the variant, ``"b"`` or ``"a"`` (see :func:`kendall_tau`).

    Returns
    -------
    dict of str to float
        ``recall_fallout`` and ``precision_anti_precision``: each τ (see :func:`kendall_tau`).

    Examples
    --------
    >>> final = pd.DataFrame({"recall": [0.3, 0.2], "fallout": [0.1, 0.2],
    ...                       "precision": [0.5, 0.4], "anti_precision": [0.4, 0.3]}, index=["a", "b"])
    >>> kendall_agreement(final)
    {'recall_fallout': 1.0, 'precision_anti_precision': -1.0}
    """
    pairs = {"recall_fallout": ("recall", "fallout"), "precision_anti_precision": ("precision", "anti_precision")}
    if isinstance(final, pd.DataFrame):
        for col in ("recall", "fallout", "precision", "anti_precision"):
            if col not in final.columns:
                raise MetricError(f"the table of final values has no {col!r} column")
        return {k: tau_between(_quality(final[a], a), _quality(final[b], b), tau) for k, (a, b) in pairs.items()}
    return {k: kendall_tau(final, a, b, t, tau) for k, (a, b) in pairs.items()}


def tau_curve(trajectories: Mapping[str, Any], metric_a: str, metric_b: str, tau: str = "b") -> pd.DataFrame:
    """τ (variant ``tau``, see :func:`kendall_tau`) between the two quality rankings at every
    round (columns ``round``, ``tau``).

    Returns
    -------
    pandas.DataFrame
        One row per round of the longest run: ``round`` (1..) and ``tau`` (:func:`kendall_tau`).

    Examples
    --------
    >>> runs = {"a": pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.3], "fallout": [0.05, 0.1]}),
    ...         "b": pd.DataFrame({"round": [1, 2], "recall": [0.2, 0.25], "fallout": [0.1, 0.2]}),
    ...         "c": pd.DataFrame({"round": [1], "recall": [0.05], "fallout": [0.01]})}  # c stopped after round 1
    >>> tau_curve(runs, "recall", "fallout").round(4).values.tolist()  # opposite orders at round 1
    [[1.0, -1.0], [2.0, -0.3333]]
    """
    a = _quality(_aligned(trajectories, metric_a).to_numpy(), metric_a)
    b = _quality(_aligned(trajectories, metric_b).to_numpy(), metric_b)
    taus = [tau_between(a[r], b[r], tau) for r in range(len(a))]
    return pd.DataFrame({"round": np.arange(1, len(a) + 1), "tau": taus})


def ranks_over_time(trajectories: Mapping[str, Any], metric: str) -> pd.DataFrame:
    """Each system's quality rank under ``metric`` at every round (rows rounds, columns systems).

    The data of the thesis' ranking figures.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``round`` (1..), one column of ranks (1 = best) per system.

    Examples
    --------
    >>> runs = {"a": pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.3], "fallout": [0.05, 0.1]}),
    ...         "b": pd.DataFrame({"round": [1, 2], "recall": [0.2, 0.25], "fallout": [0.1, 0.2]}),
    ...         "c": pd.DataFrame({"round": [1], "recall": [0.05], "fallout": [0.01]})}  # c stopped after round 1
    >>> ranks_over_time(runs, "recall").values.tolist()  # b leads at round 1, a at round 2
    [[2.0, 1.0, 3.0], [1.0, 2.0, 3.0]]
    """
    frame = _aligned(trajectories, metric)
    q = _quality(frame.to_numpy(), metric)
    ranks = stats.rankdata(-q, axis=1, method="average", nan_policy="omit")
    return pd.DataFrame(ranks, index=frame.index, columns=frame.columns)
