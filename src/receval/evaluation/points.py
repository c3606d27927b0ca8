"""Next-item evaluation points: runs and truth keyed by (user, point), aggregated per event or per user.

Sequential recommendation evaluates a model at each event of a user's test sequence, the
model seeing the history up to that event (the ``successive`` protocol; Kang & McAuley,
SASRec, ICDM 2018, and RecBole score the last one; Quadrana et al., ACM CSUR 2018, survey
both). Each *evaluation point* is then a list and its truth; :func:`evaluate_points` keys
both tables by a ``point`` column (any id, unique within a user) or by ``(user, timestamp)``,
and evaluates every point as :func:`~receval.evaluation.evaluate` evaluates a user (the
same metric machinery: each point one row of the metrics' input), then aggregates:

* ``weighting="event"``: the mean over points (every event counts once: users with long
  sequences weigh more);
* ``weighting="user"``: each user's mean over their points, then the mean over users.

With ``history`` (the events that precede the points: ``user, item, timestamp``) an item is
*in a point's history* when the user interacted with it at a time strictly before the
point's timestamp. ``exclude_history=True`` drops those items from the point's list (the
convention that does not recommend consumed items); ``repeat="only"`` keeps only the truth
items in the history (repeat consumption) and ``repeat="exclude"`` only the others (new
items), the split of the next-basket literature (Li et al., "A Next Basket Recommendation
Reality Check", TOIS 2023: their repetition and exploration performance); the lists are left
whole, and points without such a truth item are left out (counted in ``points_without_truth``).

Memory: the points are the rows of one evaluation, so it needs what :func:`evaluate` needs
for that many users (lists of the largest cutoff, truth rows); the history is read once, as
its first time per (user, item). The estimate is refused before any work when above the free
memory (:func:`receval.validate.check_memory`).

Examples
--------
>>> import pandas as pd
>>> truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["y", "z", "x"], "timestamp": [2, 3, 2]})
>>> recs = pd.DataFrame({"user": ["a", "a", "a", "a", "b"], "item": ["y", "x", "x", "z", "x"],
...                      "timestamp": [2, 2, 3, 3, 2], "score": [2.0, 1.0, 2.0, 1.0, 1.0]})
>>> hist = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "timestamp": [1, 2, 1]})
>>> evaluate_points(recs, truth, "hr@1", history=hist).summary  # a@2 hit, a@3 miss (x first), b@2 hit
{'hr@1': 0.6666666666666666}
>>> evaluate_points(recs, truth, "hr@1", history=hist, weighting="user").summary  # a: 0.5, b: 1
{'hr@1': 0.75}
>>> evaluate_points(recs, truth, "hr@1", history=hist, exclude_history=True).summary  # a@3: x was seen at 1
{'hr@1': 1.0}
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.evaluation.oneshot import evaluate
from receval.metrics import Metric, MetricList
from receval.validate import check_memory

if TYPE_CHECKING:  # pandas is imported by the calls that read DataFrames, not by importing receval.evaluation
    import pandas as pd

__all__ = ["REPEATS", "WEIGHTINGS", "PointsResult", "evaluate_points"]

Weighting = Literal["event", "user"]
Repeat = Literal["only", "exclude"]
WEIGHTINGS: tuple[Weighting, ...] = ("event", "user")
"""``weighting=``: the mean over evaluation points, or over users of their points' mean."""
REPEATS: tuple[Repeat, ...] = ("only", "exclude")
"""``repeat=``: truth items of the point's history only (repeat consumption), or the new ones only."""


@dataclass
class PointsResult:
    """What :func:`evaluate_points` returns.

    Attributes
    ----------
    summary : dict
        ``{metric string: value}`` aggregated by ``weighting`` (system metrics: over every point's list).
    per_point : DataFrame
        ``user``, ``point`` (the point column's value, or the timestamp) and one column per per-point metric.
    weighting, repeat, exclude_history
        The options the values were computed with.
    points_evaluated : int
        Points of the truth evaluated.
    points_without_truth : int
        Points left out by ``repeat`` (no repeat, or no new, truth item).
    conventions : dict
        The conventions of the underlying evaluation (:class:`~receval.evaluation.Conventions` as a dict).
    """

    summary: dict[str, float]
    per_point: pd.DataFrame
    weighting: str
    repeat: str | None
    exclude_history: bool
    points_evaluated: int
    points_without_truth: int
    conventions: dict[str, Any] = field(default_factory=dict)


def _table(obj: Any, what: str) -> pd.DataFrame:
    import pandas as pd

    if isinstance(obj, Interactions):
        return obj.to_frame()
    if not isinstance(obj, pd.DataFrame):
        raise ConfigError(f"evaluate_points: {what} must be a DataFrame (or Interactions), got {type(obj).__name__}")
    return obj


def _key_column(recs: pd.DataFrame, truth: pd.DataFrame) -> str:
    for key in ("point", "timestamp"):
        if key in truth.columns and key in recs.columns:
            for what, table in (("truth", truth), ("recommendations", recs)):
                missing = np.flatnonzero(table[key].isna().to_numpy())
                if len(missing):  # NaN would be a point of its own, matched to nothing
                    raise DataError(f"evaluate_points: the {what} have {len(missing):,} row(s) without a {key} (first: "
                                    f"row {missing[0] + 1}); give every row its evaluation point")  # fmt: skip
            return key
    raise ConfigError(
        "evaluate_points: key the recommendations and the truth by evaluation point: a 'point' column in both, "
        f"or 'user' and 'timestamp' (truth has {list(truth.columns)}, recommendations {list(recs.columns)})"
    )


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _first_seen(history: pd.DataFrame) -> pd.DataFrame:
    """The first time of every (user, item) of the history."""
    missing = [c for c in ("user", "item", "timestamp") if c not in history.columns]
    if missing:
        raise ConfigError(f"evaluate_points: history needs columns user, item, timestamp; missing {missing}")
    return (
        history.groupby(["user", "item"], sort=False, observed=True)["timestamp"].min().rename("_first").reset_index()
    )


def _in_history(rows: pd.DataFrame, first: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """Whether each row's (user, item) was seen strictly before ``times`` (one per row)."""
    seen = rows[["user", "item"]].merge(first, on=["user", "item"], how="left")["_first"].to_numpy(dtype=np.float64)
    return ~np.isnan(seen) & (seen < times)


def evaluate_points(
    recommendations: pd.DataFrame,
    truth: pd.DataFrame,
    metrics: MetricList | Sequence[str | Metric] | str,
    *,
    history: pd.DataFrame | Interactions | None = None,
    weighting: Weighting = "event",
    repeat: Repeat | None = None,
    exclude_history: bool = False,
    threshold: float | None = None,
    convention: str | None = None,
    ties: Literal["input", "id", "trec_eval"] | None = None,
    empty_users: Literal["skip", "zero"] = "skip",
) -> PointsResult:
    """Evaluate lists keyed by evaluation point; aggregate per event or per user; split repeat and new items.

    Parameters
    ----------
    recommendations
        ``user, item, score`` (or ``rank``) and the point's key: a ``point`` column, or ``timestamp``.
    truth
        ``user, item[, rating]`` and the same key (with ``point``, a ``timestamp`` column too when
        ``history`` is used: the point's time).
    metrics
        As for :func:`~receval.evaluation.evaluate` (each point is a row of its per-user values).
    history
        ``user, item, timestamp`` of the events before the points (a DataFrame or Interactions);
        needed by ``exclude_history`` and ``repeat``. A point of a user without any earlier event
        is refused.
    weighting
        ``event`` (mean over points) or ``user`` (mean over users of their points' mean).
    repeat
        ``only``: truth restricted to items of the point's history; ``exclude``: to the others; None: all.
    exclude_history
        Drop the items of the point's history from its list before ranking.
    threshold, convention, ties, empty_users
        As for :func:`~receval.evaluation.evaluate`.

    Returns
    -------
    PointsResult
        The summary, the per-point values and what was left out.

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.DataFrame({"user": [1, 1], "point": [0, 1], "item": ["x", "y"]})
    >>> recs = pd.DataFrame({"user": [1, 1], "point": [0, 1], "item": ["x", "x"], "score": [1.0, 1.0]})
    >>> res = evaluate_points(recs, truth, "hr@1")
    >>> res.summary, res.per_point["hr@1"].tolist()
    ({'hr@1': 0.5}, [1.0, 0.0])
    """
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"weighting must be 'event' or 'user', got {weighting!r}")
    if repeat is not None and repeat not in REPEATS:
        raise ConfigError(f"repeat must be 'only', 'exclude' or None, got {repeat!r}")
    if repeat == "only" and exclude_history:
        raise ConfigError("repeat='only' scores items of the history, which exclude_history=True removes: use one")
    if (repeat is not None or exclude_history) and history is None:
        raise ConfigError("repeat= and exclude_history need history= (user, item, timestamp of earlier events)")
    recs, truth = _table(recommendations, "recommendations"), _table(truth, "truth")
    key = _key_column(recs, truth)
    specs = MetricList.of(metrics, convention)
    # truth points first: their codes are 0..n_points-1; recommendation points absent from the truth come after
    import pandas as pd

    keys = pd.concat([truth[["user", key]], recs[["user", key]]], ignore_index=True)
    codes = pd.MultiIndex.from_frame(keys).factorize()[0] if len(keys) else np.zeros(0, np.int64)
    truth_codes, rec_codes = codes[: len(truth)], codes[len(truth) :]
    n_points = int(truth_codes.max()) + 1 if len(truth_codes) else 0
    widths = [m.k for _, m in specs if m.k is not None]
    width = max(widths) if widths else int(np.bincount(rec_codes).max()) if len(rec_codes) else 0
    check_memory(
        8.0 * (n_points * (width + 4) + 6 * (len(truth) + len(recs))),
        f"evaluating {n_points:,} points with lists of {width:,}",
        "evaluate fewer points (a sample of users) or a smaller cutoff",
    )
    truth = truth.assign(user=truth_codes, _user=truth["user"].to_numpy())
    recs = recs.assign(user=rec_codes, _user=recs["user"].to_numpy())
    point_user = truth.groupby("user", sort=True)["_user"].first()
    point_key = truth.groupby("user", sort=True)[key].first()
    orphan = rec_codes >= n_points  # points of the recommendations that the truth lacks, named here by user and key
    if orphan.any():
        first = recs.iloc[int(np.flatnonzero(orphan)[0])]
        who, at = _plain(first["_user"]), _plain(first[key])
        count = f"{len(np.unique(rec_codes[orphan])):,} of the recommendations' {len(np.unique(rec_codes)):,} points"
        if orphan.all():
            raise DataError(f"none of the recommendations' points is a point of the truth (e.g. user {who!r}, "
                            f"{key}={at!r}); key both by the same {key}")  # fmt: skip
        warnings.warn(f"{count} have no truth (e.g. user {who!r}, {key}={at!r}) and cannot be scored; they are "
                      "left out", UserWarning, stacklevel=2)  # fmt: skip
        recs = recs[~orphan]
    dropped = 0
    if history is not None:
        hist = _table(history, "history")
        time_col = "timestamp"
        if time_col not in truth.columns:
            raise ConfigError("evaluate_points: with history=, the truth needs a 'timestamp' column (the point's time)")
        first = _first_seen(hist)
        point_time = truth.groupby("user", sort=True)[time_col].min()
        earliest = hist.groupby("user", observed=True)["timestamp"].min()
        start = earliest.reindex(point_user.to_numpy()).to_numpy(dtype=np.float64)
        lacking = np.flatnonzero(~(start < point_time.to_numpy(dtype=np.float64)))
        if len(lacking):
            p = point_user.index[lacking[0]]
            who, at, when = (_plain(v) for v in (point_user[p], point_key[p], point_time[p]))
            raise DataError(
                f"evaluation point ({who!r}, {key}={at!r}) has no history: user {who!r} has no event before "
                f"{when!r} in history=; "
                f"{len(lacking):,} of {n_points:,} points lack one (drop them, or give the earlier events)"
            )
        times = point_time.reindex(np.arange(n_points)).to_numpy(dtype=np.float64)
        if exclude_history:
            rec_times = np.full(len(recs), np.nan)
            known = recs["user"].to_numpy() < n_points
            rec_times[known] = times[recs["user"].to_numpy()[known]]
            seen = _in_history(recs.assign(user=recs["_user"]), first, rec_times)
            recs = recs[~seen]
        if repeat is not None:
            seen = _in_history(truth.assign(user=truth["_user"]), first, times[truth["user"].to_numpy()])
            truth = truth[seen if repeat == "only" else ~seen]
            if not len(truth):
                where = "in" if repeat == "only" else "outside"
                raise DataError(
                    f"repeat={repeat!r} leaves no truth: no truth item of the {n_points:,} points is {where} its "
                    "user's history before the point; drop repeat= or give other data"
                )
            kept = np.unique(truth["user"].to_numpy())
            dropped = n_points - len(kept)
            recs = recs[np.isin(recs["user"].to_numpy(), kept)]
    drop = [c for c in ("_user", "point", "timestamp") if c in truth.columns]
    result = evaluate(
        recs.drop(columns=[c for c in ("_user", "point", "timestamp") if c in recs.columns]),
        truth.drop(columns=drop), specs, threshold=threshold, ties=ties, empty_users=empty_users,
    )  # fmt: skip
    per = result.per_user
    codes_out = per["user"].to_numpy(dtype=np.int64)
    per_point = per.drop(columns=["user"])
    per_point.insert(0, "point", point_key.to_numpy()[codes_out])
    per_point.insert(0, "user", point_user.to_numpy()[codes_out])
    summary = dict(result.summary)
    if weighting == "user":
        for label, spec in specs:
            if spec.kind == "system":
                continue
            if spec.aggregation != "macro":
                raise ConfigError(
                    f"weighting='user' averages each user's points, which {label!r} (aggregation "
                    f"{spec.aggregation!r}) does not do: use weighting='event'"
                )
            by_user = per_point.groupby("user", sort=False)[label].mean()  # NaN points (not scored) left out
            summary[label] = float(by_user.mean())
    return PointsResult(
        summary=summary,
        per_point=per_point.reset_index(drop=True),
        weighting=weighting,
        repeat=repeat,
        exclude_history=exclude_history,
        points_evaluated=len(per_point),
        points_without_truth=dropped,
        conventions=result.conventions.to_dict(),
    )
