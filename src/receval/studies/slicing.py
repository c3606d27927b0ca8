"""Evaluation dimensions: metrics per user, item and time slice, with statistics per slice.

The dimensions of Xiang, Recommender System Practice, 2012, ch. 1.

- **User slices** group users (activity quantiles, new vs returning, demographics when
  the data ships them); a per-user metric table is simply restricted to each group.
- **Item slices** group items (popularity bins, average-rating bins, new items, one
  group per aspect); **time slices** group test ratings by their timestamp
  (weekday/weekend, part of the day, season). For both, the metrics are computed again
  with the truth restricted to the slice — the lists stay as they are — so a slice's
  precision counts the hits on that slice's items or moments.

Group definitions (``n_bins`` = 4 by default):

=====================  ==================================================================
``activity``           quartiles of the users' training profile sizes (equal-size bins)
``new_returning``      "new": first rating in the latest 20 % of the data's time span
                       (no timestamps: no training rating); otherwise "returning"
``age``                MovieLens brackets <18, 18-24, 25-34, 35-44, 45-49, 50-55, 56+
``gender``,            the values of the user-feature table (``load_user_features``)
``occupation``
``popularity``         "unseen" (no training rating), then quartiles of training counts
``avg_rating``         "unrated", then quartiles of the items' mean training rating
``new_items``          "new": first rating in the latest 20 % of the time span
                       (no timestamps: no training rating); otherwise "old"
``aspect``             one group per aspect (an item may be in several)
``weekday``            weekday / weekend (Saturday, Sunday; UTC)
``hour``               night 0-5, morning 6-11, afternoon 12-17, evening 18-23 (UTC)
``season``             winter (Dec-Feb), spring, summer, autumn (meteorological, north)
=====================  ==================================================================

The quantile groups are named ``q1`` (lowest values) … ``qN`` so that they line up
across seeds and folds; :func:`evaluate_slices` gives each row of such a group the
range of the slicing variable in it (``low``, ``high``; :data:`QUANTILE_VARIABLES`
says what the variable is), so reports can name the groups with their ranges.

Examples
--------
>>> import numpy as np, pandas as pd
>>> per_user = pd.DataFrame({"user_index": [0, 1, 2, 3], "metric": "ndcg@10", "value": [0.1, 0.2, 0.3, 0.4]})
>>> groups = {"light": np.array([True, True, False, False]), "heavy": np.array([False, False, True, True])}
>>> slice_table(per_user, groups).groupby("group")["value"].mean().round(2).to_dict()
{'heavy': 0.35, 'light': 0.15}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from receval.errors import ConfigError, DataError

if TYPE_CHECKING:
    from receval.data.interactions import Interactions

__all__ = [
    "QUANTILE_VARIABLES",
    "SLICERS",
    "group_ranges",
    "user_groups",
    "item_groups",
    "time_groups",
    "slice_table",
    "evaluate_slices",
    "slice_summary",
    "compare_slices",
]

SLICERS: dict[str, tuple[str, ...]] = {
    "user": ("activity", "new_returning", "age", "gender", "occupation"),
    "item": ("popularity", "avg_rating", "new_items", "aspect"),
    "time": ("weekday", "hour", "season"),
}
#: The variable the quantile groups ``q1`` … ``qN`` of a (dimension, slice) split, in words.
QUANTILE_VARIABLES: dict[tuple[str, str], str] = {
    ("user", "activity"): "training ratings per user",
    ("item", "popularity"): "training ratings per item",
    ("item", "avg_rating"): "mean training rating of the item",
}
_AGE_EDGES = [0, 18, 25, 35, 45, 50, 56, 200]
_AGE_LABELS = ["<18", "18-24", "25-34", "35-44", "45-49", "50-55", "56+"]
_NEW_FRACTION = 0.2


def _quantile_groups(values: np.ndarray, eligible: np.ndarray, n_bins: int) -> dict[str, np.ndarray]:
    """Equal-size bins ``q1`` (lowest values) .. ``qN`` of the eligible entries (ties broken by position).

    The labels do not carry the bins' value ranges, which differ between splits, so that
    groups line up across seeds and folds.
    """
    out: dict[str, np.ndarray] = {}
    idx = np.flatnonzero(eligible)
    if len(idx) == 0:
        return out
    order = idx[np.argsort(values[idx], kind="stable")]
    for b, chunk in enumerate(np.array_split(order, min(n_bins, len(order)))):
        mask = np.zeros(len(values), dtype=bool)
        mask[chunk] = True
        out[f"q{b + 1}"] = mask
    return out


def _slice_values(dimension: str, name: str, train: Interactions) -> np.ndarray:
    """The variable the quantile groups of a slice are cut on (one of :data:`QUANTILE_VARIABLES`)."""
    if (dimension, name) == ("user", "activity"):
        return np.bincount(train.users, minlength=train.n_users).astype(float)
    counts = np.bincount(train.items, minlength=train.n_items)
    if (dimension, name) == ("item", "popularity"):
        return counts.astype(float)
    sums = np.bincount(train.items, weights=train.ratings, minlength=train.n_items)  # ("item", "avg_rating")
    return np.divide(sums, counts, out=np.zeros(train.n_items), where=counts > 0)


def group_ranges(
    dimension: str, name: str, train: Interactions, groups: Mapping[str, np.ndarray]
) -> dict[str, tuple[float, float]]:
    """``(low, high)`` of the slicing variable in each quantile group ``q1`` … of a slice (others are left out).

    Returns
    -------
    dict of str to tuple of float
        Quantile group label to the lowest and highest value of the slicing variable
        (e.g. a user's number of training ratings) among its members.

    Examples
    --------
    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 0, 1, 2, 2], [0, 1, 2, 0, 1, 2], [5, 4, 3, 2, 5, 1])
    >>> group_ranges("user", "activity", d, user_groups("activity", d, d, n_bins=2))
    {'q1': (1.0, 2.0), 'q2': (3.0, 3.0)}
    """
    if (dimension, name) not in QUANTILE_VARIABLES:
        return {}
    values = _slice_values(dimension, name, train)
    out = {}
    for label, mask in groups.items():
        if label.startswith("q") and label[1:].isdigit() and np.any(mask):
            chosen = values[np.asarray(mask, dtype=bool)]
            out[label] = (float(chosen.min()), float(chosen.max()))
    return out


def _first_seen(train: Interactions, test: Interactions, of: str) -> tuple[np.ndarray, float] | None:
    if train.timestamps is None or test.timestamps is None:
        return None
    idx = np.concatenate([getattr(train, of), getattr(test, of)])
    ts = np.concatenate([train.timestamps, test.timestamps])
    n = train.n_users if of == "users" else train.n_items
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, idx, ts)
    cut = ts.min() + (1 - _NEW_FRACTION) * (ts.max() - ts.min())
    return first, float(cut)


def user_groups(
    name: str,
    train: Interactions,
    test: Interactions,
    *,
    user_features: pd.DataFrame | None = None,
    n_bins: int = 4,
) -> dict[str, np.ndarray]:
    """Boolean masks over the user id space, one per group of the user slice ``name``.

    Returns
    -------
    dict of str to numpy.ndarray of bool
        Group label to a mask over the user indices (``train.n_users`` values).

    Examples
    --------
    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 0, 1, 2, 2], [0, 1, 2, 0, 1, 2], [5, 4, 3, 2, 5, 1])
    >>> sorted(user_groups("activity", d, d, n_bins=2))
    ['q1', 'q2']
    """
    n = train.n_users
    if name == "activity":
        seen = np.zeros(n, dtype=bool)
        seen[train.users] = True
        seen[test.users] = True
        return _quantile_groups(_slice_values("user", name, train), seen, n_bins)
    if name == "new_returning":
        first = _first_seen(train, test, "users")
        if first is None:
            new = np.bincount(train.users, minlength=n) == 0
        else:
            new = (first[0] >= first[1]) & (first[0] < np.iinfo(np.int64).max)
        return {"new": new, "returning": ~new}
    if name in ("age", "gender", "occupation"):
        if user_features is None or name not in user_features.columns:
            raise DataError(f"user slice {name!r} needs user features with a {name!r} column (MovieLens 100K/1M)")
        feats = user_features.set_index(user_features["user"].astype(str))[name]
        values = feats.reindex(pd.Index(train.user_ids.astype(str))).to_numpy()
        if name == "age":
            values = pd.cut(pd.to_numeric(values), _AGE_EDGES, right=False, labels=_AGE_LABELS).astype(object)
            values = np.asarray(values)
        labels = [v for v in pd.unique(values) if not pd.isna(v)]
        # age brackets in age order ("<18" first, which sorting the strings would put last)
        order = [v for v in _AGE_LABELS if v in labels] if name == "age" else sorted(labels, key=str)
        return {str(v): np.asarray(values == v, dtype=bool) for v in order}
    raise ConfigError(f"unknown user slice {name!r}; valid: {', '.join(SLICERS['user'])}")


def item_groups(name: str, train: Interactions, test: Interactions, *, n_bins: int = 4) -> dict[str, np.ndarray]:
    """Boolean masks over the item id space, one per group of the item slice ``name``.

    Returns
    -------
    dict of str to numpy.ndarray of bool
        Group label to a mask over the item indices.

    Examples
    --------
    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [5, 4, 3, 2, 5])
    >>> {k: v.tolist() for k, v in item_groups("popularity", d, d, n_bins=2).items()}
    {'q1': [False, True], 'q2': [True, False]}
    """
    m = train.n_items
    counts = np.bincount(train.items, minlength=m)
    if name == "popularity":
        groups = {"unseen": counts == 0} if np.any(counts == 0) else {}
        return groups | _quantile_groups(counts.astype(float), counts > 0, n_bins)
    if name == "avg_rating":
        groups = {"unrated": counts == 0} if np.any(counts == 0) else {}
        return groups | _quantile_groups(_slice_values("item", name, train), counts > 0, n_bins)
    if name == "new_items":
        first = _first_seen(train, test, "items")
        if first is None:
            new = counts == 0
        else:
            new = (first[0] >= first[1]) & (first[0] < np.iinfo(np.int64).max)
        return {"new": new, "old": ~new}
    if name == "aspect":
        if train.aspects is None or train.aspect_names is None:  # Interactions sets both or neither
            raise DataError("item slice 'aspect' needs item aspects (e.g. MovieLens genres)")
        a = train.aspects.tocsc()
        out = {}
        for j, aspect in enumerate(train.aspect_names):
            mask = np.zeros(m, dtype=bool)
            mask[a.indices[a.indptr[j] : a.indptr[j + 1]]] = True
            out[str(aspect)] = mask
        return out
    raise ConfigError(f"unknown item slice {name!r}; valid: {', '.join(SLICERS['item'])}")


def time_groups(name: str, test: Interactions) -> dict[str, np.ndarray]:
    """Boolean masks over the test rows, one per group of the time slice ``name`` (UTC).

    Returns
    -------
    dict of str to numpy.ndarray of bool
        Group label to a mask over ``test``'s rows.

    Examples
    --------
    >>> from receval import Interactions
    >>> t = Interactions.from_arrays([0, 0], [0, 1], [5, 4], timestamps=[0, 2 * 86400])  # Thu, Sat
    >>> {k: v.tolist() for k, v in time_groups("weekday", t).items()}
    {'weekday': [True, False], 'weekend': [False, True]}
    """
    if test.timestamps is None:
        raise DataError(f"time slice {name!r} needs timestamps; this data set has none")
    when = pd.to_datetime(test.timestamps, unit="s", utc=True)
    if name == "weekday":
        weekend = np.asarray(when.day_of_week >= 5)
        return {"weekday": ~weekend, "weekend": weekend}
    if name == "hour":
        hour = np.asarray(when.hour)
        bands = (("night", 0), ("morning", 6), ("afternoon", 12), ("evening", 18))
        return {f"{label} {lo}-{lo + 5}": (hour >= lo) & (hour < lo + 6) for label, lo in bands}
    if name == "season":
        month = np.asarray(when.month)
        seasons = {"winter": (12, 1, 2), "spring": (3, 4, 5), "summer": (6, 7, 8), "autumn": (9, 10, 11)}
        return {s: np.isin(month, months) for s, months in seasons.items()}
    raise ConfigError(f"unknown time slice {name!r}; valid: {', '.join(SLICERS['time'])}")


def slice_table(
    per_user: pd.DataFrame, groups: Mapping[str, np.ndarray], *, user_col: str = "user_index"
) -> pd.DataFrame:
    """Rows of a per-user table whose user is in each group, with a ``group`` column (groups may overlap).

    Returns
    -------
    pandas.DataFrame
        ``per_user``'s columns and ``group``; a user in two groups appears twice.

    Examples
    --------
    >>> per_user = pd.DataFrame({"user_index": [0, 1, 2], "ndcg@10": [0.1, 0.5, 0.9]})
    >>> groups = {"q1": np.array([True, True, False]), "q2": np.array([False, True, True])}
    >>> slice_table(per_user, groups)[["group", "user_index"]].values.tolist()
    [['q1', 0], ['q1', 1], ['q2', 1], ['q2', 2]]
    """
    if user_col not in per_user.columns:
        raise DataError(f"per-user table lacks column {user_col!r}; it has {list(per_user.columns)}")
    users = per_user[user_col].to_numpy()
    frames = []
    for label, mask in groups.items():
        keep = np.asarray(mask, dtype=bool)[users]
        if keep.any():
            frames.append(per_user.loc[keep].assign(group=label))
    if not frames:
        return per_user.iloc[:0].assign(group=pd.Series(dtype=object))
    return pd.concat(frames, ignore_index=True)


def _long(wide: pd.DataFrame, user_ids: np.ndarray) -> pd.DataFrame:
    """Wide per-user frame (index = user index, metric columns, NaN = not evaluated) to long rows."""
    frames = []
    for metric in wide.columns:
        col = wide[metric]
        col = col[col.notna()]
        idx = col.index.to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "user_index": idx.astype(np.int32),
                    "user": user_ids[idx].astype(str),
                    "metric": str(metric),
                    "value": col.to_numpy(dtype=np.float64),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def evaluate_slices(
    evaluate: Callable[[Interactions], pd.DataFrame],
    train: Interactions,
    test: Interactions,
    slices: Mapping[str, Sequence[str]],
    *,
    user_features: pd.DataFrame | None = None,
    n_bins: int = 4,
) -> pd.DataFrame:
    """Per-user metric values for every group of every requested slice.

    ``evaluate(truth)`` must return the per-user metrics of the (fixed) recommendation
    lists against ``truth`` (an :class:`Interactions` subset of ``test``): a frame
    indexed by user index with one column per metric, NaN for users not evaluated.
    User slices reuse the full evaluation; item and time slices call ``evaluate`` with
    the truth restricted to the slice.

    Returns
    -------
    pandas.DataFrame
        A long table: ``dimension``, ``slice``, ``group``, ``user_index``, ``user``,
        ``metric``, ``value``, and ``low``, ``high``: the range of the slicing variable in
        a quantile group (:func:`group_ranges`; NaN for other groups).

    Examples
    --------
    A stand-in metric, each user's number of test ratings, over two activity groups:

    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 0, 1, 2, 2], [0, 1, 2, 0, 1, 2], [5, 4, 3, 2, 5, 1])
    >>> def per_user(truth):
    ...     return pd.DataFrame({"n_test": np.bincount(truth.users, minlength=truth.n_users).astype(float)})
    >>> table = evaluate_slices(per_user, d, d, {"user": ["activity"]}, n_bins=2)
    >>> table[["group", "user", "value"]].values.tolist()
    [['q1', '1', 1.0], ['q1', '2', 2.0], ['q2', '0', 3.0]]
    """
    frames = []
    full = None
    for dim, names in slices.items():
        for name in names:
            if dim == "user":
                if full is None:
                    full = _long(evaluate(test), test.user_ids)
                groups = user_groups(name, train, test, user_features=user_features, n_bins=n_bins)
                table = slice_table(full, groups)
            elif dim in ("item", "time"):
                groups = item_groups(name, train, test, n_bins=n_bins) if dim == "item" else time_groups(name, test)
                parts = []
                for label, mask in groups.items():
                    rows = mask[test.items] if dim == "item" else mask
                    if rows.any():
                        parts.append(_long(evaluate(test.subset(rows)), test.user_ids).assign(group=label))
                table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
            else:
                raise ConfigError(f"unknown slice dimension {dim!r}; use user, item or time")
            if len(table):
                ranges = group_ranges(dim, name, train, groups)
                low = table["group"].map({g: r[0] for g, r in ranges.items()}).astype(float)
                high = table["group"].map({g: r[1] for g, r in ranges.items()}).astype(float)
                frames.append(table.assign(dimension=dim, slice=name, low=low, high=high))
    cols = ["dimension", "slice", "group", "user_index", "user", "metric", "value", "low", "high"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


def slice_summary(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("dimension", "slice", "group", "metric"),
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean, user count and bootstrap confidence interval of ``value`` per group.

    Returns
    -------
    pandas.DataFrame
        One row per group of ``by``: the columns of ``by``, ``n`` (rows), ``mean`` and
        the bootstrap interval of the mean, ``ci_low`` and ``ci_high``.

    Examples
    --------
    >>> t = pd.DataFrame({"group": ["a"] * 50 + ["b"] * 50, "value": np.r_[np.zeros(50), np.ones(50)]})
    >>> slice_summary(t, by=["group"])[["group", "n", "mean"]].to_dict("records")
    [{'group': 'a', 'n': 50, 'mean': 0.0}, {'group': 'b', 'n': 50, 'mean': 1.0}]
    """
    from receval.stats.significance import bootstrap_ci  # scipy.stats: only when groups are summarised or compared

    rows = []
    for key, grp in table.groupby(list(by), sort=True, observed=True):
        vals = grp["value"].to_numpy(dtype=np.float64)
        vals = vals[np.isfinite(vals)]
        lo = hi = np.nan
        if len(vals) >= 2:
            lo, hi = bootstrap_ci(vals, confidence=confidence, n_resamples=n_resamples, seed=seed)
        keys = key if isinstance(key, tuple) else (key,)
        rows.append(
            dict(zip(by, keys, strict=True))
            | {"n": len(vals), "mean": float(vals.mean()) if len(vals) else np.nan, "ci_low": lo, "ci_high": hi}
        )
    return pd.DataFrame(rows, columns=[*by, "n", "mean", "ci_low", "ci_high"])


def compare_slices(
    table: pd.DataFrame,
    *,
    system: str = "system",
    by: Sequence[str] = ("dimension", "slice", "group", "metric"),
    **kwargs: Any,
) -> pd.DataFrame:
    """:func:`~receval.stats.significance.compare_systems` within every slice group.

    ``table`` holds several systems' sliced per-user values (a ``system`` column plus
    the columns of :func:`evaluate_slices`); ``kwargs`` go to ``compare_systems``
    (baseline, test, correction, ...). The correction applies within each group.

    Returns
    -------
    pandas.DataFrame
        The columns of ``by``, then ``compare_systems``' columns (the pair ``a``, ``b``,
        ``n`` users, the means, their difference with its interval, the effect size,
        the statistic, the p-value and the corrected one), one row per group and pair.

    Examples
    --------
    System b is 0.1 better than a for the ten users of q1, 0.01 better on average in q2:

    >>> users = np.arange(20)
    >>> better = np.where(users < 10, 0.1, 0.0) + users % 3 / 100
    >>> table = pd.DataFrame({"system": np.repeat(["a", "b"], 20), "dimension": "user", "slice": "activity",
    ...                       "group": np.tile(np.where(users < 10, "q1", "q2"), 2), "metric": "ndcg@10",
    ...                       "user_index": np.tile(users, 2), "value": np.r_[users % 4 / 10, users % 4 / 10 + better]})
    >>> compare_slices(table, baseline="a")[["group", "n", "diff"]].round(3).values.tolist()
    [['q1', 10, 0.109], ['q2', 10, 0.01]]
    """
    from receval.stats.significance import compare_systems  # scipy.stats: only when groups are summarised or compared

    frames = []
    for key, grp in table.groupby(list(by), sort=True, observed=True):
        if grp[system].nunique() < 2:
            continue
        res = compare_systems(grp, system=system, user="user_index", value="value", **kwargs)
        keys = key if isinstance(key, tuple) else (key,)
        frames.append(res.assign(**dict(zip(by, keys, strict=True))))
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[[*by, *[c for c in out.columns if c not in by]]]
