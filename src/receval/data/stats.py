"""Statistics of a rating data set: size, rating histogram, popularity long tail, MAR/MNAR.

The MAR/MNAR diagnostic
-----------------------
Items exposed to users uniformly at random (missing at random, as CM100k where
every user rated 100 random tracks) receive rating counts that vary like a Poisson
(binomial) sample: the coefficient of variation of item popularity, ``cv = std /
mean`` of the per-item counts, is then close to ``cv_uniform = 1 / sqrt(mean)``.
Popularity-biased exposure (missing not at random, as MovieLens) spreads the counts
far wider. **Rule:** the data is labelled ``"MAR"`` when ``cv <= 2 * cv_uniform``
(equivalently, index of dispersion ``var / mean <= 4``), else ``"MNAR"``. Reference
values: CM100k cv 0.10 (cv_uniform 0.10) MAR; Familiar CM100k 1.17 (0.30) MNAR;
MovieLens 100K 1.35 (0.13) MNAR. A complete data set (every user rated every item)
has cv 0 and is MAR. Only items with at least one rating are counted.

Examples
--------
>>> from receval.data import Interactions
>>> d = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 0, 0], [5, 3, 4, 4, 1])
>>> s = dataset_stats(d)
>>> s["n_users"], s["n_items"], s["n_ratings"], s["n_duplicates"]
(3, 2, 5, 1)
>>> s["rating_counts"]
{'1': 1, '2': 0, '3': 1, '4': 2, '5': 1}
>>> s["item_popularity"], round(s["gini_item_popularity"], 3)
([4, 1], 0.6)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from receval.data.interactions import Interactions

__all__ = ["dataset_stats", "gini", "mar_mnar"]

_MAX_HISTOGRAM_VALUES = 1000
_HISTOGRAM_BINS = 10


def gini(values: np.ndarray) -> float:
    """Gini coefficient of non-negative values, as Xiang, Recommender System Practice, 2012, ch. 1 writes it.

    ``G = 1/(n-1) Σ_j (2j - n - 1) p_j`` over the values sorted ascending, with
    ``p_j = v_j / Σ v`` and ``j = 1..n``: 0 when all are equal, 1 when one holds all.

    Returns
    -------
    float
        In [0, 1]; 0 for fewer than two values or a zero total.

    Examples
    --------
    >>> gini(np.array([5, 5, 5])), gini(np.array([0, 0, 9]))
    (0.0, 1.0)
    """
    v = np.sort(np.asarray(values, dtype=np.float64))
    n = len(v)
    total = v.sum()
    if n < 2 or total <= 0:
        return 0.0
    j = np.arange(1, n + 1)
    # weight the raw values and normalise once: exact for counts, so a uniform vector gives 0
    return float(np.clip(((2 * j - n - 1) * v).sum() / (total * (n - 1)), 0.0, 1.0))


def mar_mnar(counts: np.ndarray) -> dict[str, Any]:
    """The MAR/MNAR diagnostic of per-item rating counts (see the module docstring for the rule).

    Returns
    -------
    dict
        ``label`` (``"MAR"`` or ``"MNAR"``), the coefficient of variation ``cv`` of the
        counts, ``cv_uniform`` (that of uniform exposure), ``dispersion`` (variance / mean)
        and the ``rule`` applied, in words.

    Examples
    --------
    >>> mar_mnar(np.array([100, 96, 104, 99]))["label"]
    'MAR'
    >>> mar_mnar(np.array([300, 20, 5, 1, 1, 1]))["label"]
    'MNAR'
    """
    c = np.asarray(counts, dtype=np.float64)
    c = c[c > 0]
    if len(c) == 0:
        return {"label": None, "cv": None, "cv_uniform": None, "dispersion": None}
    mean = float(c.mean())
    cv = float(c.std() / mean)
    cv_uniform = 1.0 / math.sqrt(mean)
    return {
        "label": "MAR" if cv <= 2 * cv_uniform else "MNAR",
        "cv": cv,
        "cv_uniform": cv_uniform,
        "dispersion": float(c.var() / mean),
        "rule": "MAR when cv <= 2 / sqrt(mean item count) (dispersion var/mean <= 4), else MNAR",
    }


def _rating_counts(data: Interactions) -> dict[str, int]:
    r = data.ratings.astype(np.float64)
    scale = data.scale
    if scale.step is not None and (scale.high - scale.low) / scale.step < _MAX_HISTOGRAM_VALUES:
        grid = scale.values()
        index = np.clip(np.round((r - scale.low) / scale.step).astype(np.int64), 0, len(grid) - 1)
        counts = np.bincount(index, minlength=len(grid))
        return {f"{v:g}": int(n) for v, n in zip(grid, counts, strict=True)}
    values, counts = np.unique(r, return_counts=True)
    if len(values) <= _HISTOGRAM_BINS:
        return {f"{v:g}": int(n) for v, n in zip(values, counts, strict=True)}
    # a continuous scale with many distinct values: equal-width bins [a, b)
    edges = np.linspace(min(scale.low, values[0]), max(scale.high, values[-1]), _HISTOGRAM_BINS + 1)
    counts, _ = np.histogram(r, bins=edges)
    return {f"[{a:g}, {b:g})": int(n) for a, b, n in zip(edges[:-1], edges[1:], counts, strict=True)}


def _core(data: Interactions) -> dict[str, Any]:
    user_counts = np.bincount(data.users, minlength=data.n_users)
    item_counts = np.bincount(data.items, minlength=data.n_items)
    n_users = int(np.count_nonzero(user_counts))
    n_items = int(np.count_nonzero(item_counts))
    popularity = np.sort(item_counts[item_counts > 0])[::-1]
    n_pairs = data.n_ratings - data.n_duplicates
    top = max(1, math.ceil(0.1 * n_items)) if n_items else 0
    return {
        "n_users": n_users,
        "n_items": n_items,
        "n_ratings": int(data.n_ratings),
        "density": n_pairs / (n_users * n_items) if n_users and n_items else 0.0,
        "rating_counts": _rating_counts(data),
        "mean_rating": float(data.ratings.astype(np.float64).mean()) if data.n_ratings else None,
        "item_popularity": popularity.tolist(),
        "gini_item_popularity": gini(popularity),
        "top10pct_item_share": float(popularity[:top].sum() / data.n_ratings) if data.n_ratings else 0.0,
        "mar_mnar": mar_mnar(popularity),
        "user_activity": _summary(user_counts[user_counts > 0]),
        "n_duplicates": int(data.n_duplicates),
    }


def _summary(counts: np.ndarray) -> dict[str, float] | None:
    if len(counts) == 0:
        return None
    return {
        "min": int(counts.min()),
        "median": float(np.median(counts)),
        "mean": float(counts.mean()),
        "max": int(counts.max()),
    }


def dataset_stats(data: Interactions) -> dict[str, Any]:
    """Statistics of a data set, as one JSON-ready dict.

    Keys: ``name``, ``n_users`` and ``n_items`` (those with at least one rating),
    ``n_ratings``, ``density`` (distinct rated pairs / (n_users · n_items)),
    ``scale``, ``rating_counts`` (rating value -> count over the scale's values, or
    equal-width bins for a continuous scale with many values), ``mean_rating``,
    ``item_popularity`` (ratings per item, sorted descending: the long tail),
    ``gini_item_popularity`` (:func:`gini`), ``top10pct_item_share`` (share of the
    ratings on the 10% most rated items, rounded up), ``mar_mnar``
    (:func:`mar_mnar`), ``user_activity`` (ratings per user: min/median/mean/max),
    ``n_duplicates`` (rows repeating a (user, item) pair; they are kept),
    ``n_aspects`` and ``aspect_names`` when items have aspects, and when the data
    has a ``familiar`` flag: ``n_familiar``, ``familiar_share`` and ``familiar``
    (the same statistics for the familiar-only subset).

    Returns
    -------
    dict
        The keys above; every value is a number, a string, a list or a dict of them.

    Examples
    --------
    >>> from receval import Interactions
    >>> stats = dataset_stats(Interactions.from_arrays(["u1", "u1", "u2"], ["a", "b", "a"], [5, 3, 4]))
    >>> stats["n_ratings"], stats["density"], stats["mean_rating"], stats["item_popularity"]
    (3, 0.75, 4.0, [2, 1])
    """
    out: dict[str, Any] = {"name": data.name}
    out.update(_core(data))
    s = data.scale
    out["scale"] = {"low": float(s.low), "high": float(s.high), "step": None if s.step is None else float(s.step)}
    if data.aspects is not None and data.aspect_names is not None:
        out["n_aspects"] = len(data.aspect_names)
        out["aspect_names"] = [str(a) for a in data.aspect_names]
    if "familiar" in data.extra:
        flag = np.asarray(data.extra["familiar"], dtype=bool)
        out["n_familiar"] = int(flag.sum())
        out["familiar_share"] = float(flag.mean()) if len(flag) else 0.0
        out["familiar"] = _core(data.subset(flag))
    return out
