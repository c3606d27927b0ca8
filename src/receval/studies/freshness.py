"""Freshness and reactivity of recommendation lists (real-time behaviour).

The dimension of Xiang, Recommender System Practice, 2012, ch. 1.

Three protocols:

- **Reactivity to feedback** (:func:`reactivity`): fit a model, take every user's
  top-k list, feed held-out ratings in ``steps`` batches (through the model's
  ``update`` — feedback 1.0 for ratings ≥ λ, 0.0 below, as the cyclic simulator — or,
  for models without ``update``, by refitting on the training data plus the feedback
  so far), and measure after each batch the Jaccard distance between each user's
  previous and new list, separately for the users whose feedback was in the batch
  and the others. :func:`log_list_change` does the same over a recommendation log
  (``round, user, item`` rows, e.g. :attr:`receval.simulate.Trajectory.log` with
  ``record_log=True``): the list of a user in a round is the set of items recommended
  to them in it.
- **Repeated one-shot runs over time windows** (:func:`window_freshness`): the
  timestamps are cut into ``n_windows`` windows of equal numbers of ratings; at the
  end of each window the model is trained on everything so far and recommends top-k
  among the items seen so far. Per window: the mean Jaccard distance between each
  user's lists at the end of the previous and of the current window, and the share of
  *new* items (first rated in the current window) in the lists, next to their share of
  the catalogue available then (what a uniformly random list would hold on average).
- **Item cold start** (:func:`item_cold_start_split`, :func:`item_cold_start`): a
  fraction of the items is held out entirely (all their ratings go to the test part);
  the model ranks only those items for each test user and :func:`receval.evaluate`
  scores the lists.

Jaccard distance between lists A and B: ``1 − |A ∩ B| / |A ∪ B|`` (0 for two empty
lists); ``-1`` padding is ignored.

Examples
--------
>>> a = np.array([[1, 2, 3], [4, 5, -1]])
>>> b = np.array([[3, 2, 1], [4, 6, -1]])
>>> jaccard_distance(a, b).round(3).tolist()
[0.0, 0.667]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError

__all__ = [
    "item_cold_start",
    "item_cold_start_split",
    "jaccard_distance",
    "log_list_change",
    "reactivity",
    "window_freshness",
]


def jaccard_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Jaccard distance of two item-index matrices padded with -1 (see the module docs).

    Returns
    -------
    numpy.ndarray of float64
        One distance in [0, 1] per row: ``1 − |A ∩ B| / |A ∪ B|`` of the rows' item sets
        (padding left out; 0 for two empty rows).

    Examples
    --------
    >>> a = np.array([[1, 2, -1], [3, 4, 5]])
    >>> jaccard_distance(a, np.array([[2, 1, -1], [3, 6, -1]])).tolist()  # {3, 4, 5} vs {3, 6}: 1 - 1/4
    [0.0, 0.75]
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise DataError(f"lists of shapes {a.shape} and {b.shape} do not pair row by row")
    inter = ((a[:, :, None] == b[:, None, :]) & (a[:, :, None] >= 0)).any(axis=2).sum(axis=1)
    size_a = np.array([len(np.unique(r[r >= 0])) for r in a]) if a.size else np.zeros(len(a), int)
    size_b = np.array([len(np.unique(r[r >= 0])) for r in b]) if b.size else np.zeros(len(b), int)
    union = size_a + size_b - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, 1.0 - inter / np.maximum(union, 1), 0.0)


def log_list_change(log: pd.DataFrame, *, step: str = "round") -> pd.DataFrame:
    """Jaccard distance between consecutive lists of each user in a recommendation log.

    ``log`` has columns ``step`` (default ``round``), ``user`` and ``item``; a user's
    list at a step is the set of items recommended to them at that step. Returns one
    row per (user, step) that has an earlier step for the same user: ``user``,
    ``previous``, ``step`` (named as the column), ``distance``.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``previous``, the step column and ``distance``, as described above.

    Examples
    --------
    >>> log = pd.DataFrame({"round": [1, 1, 2, 2, 1, 3], "user": [0, 0, 0, 0, 1, 1], "item": [1, 2, 2, 3, 5, 5]})
    >>> log_list_change(log).round(3).to_dict("list")
    {'user': [0, 1], 'previous': [1, 1], 'round': [2, 3], 'distance': [0.667, 0.0]}
    """
    missing = [c for c in (step, "user", "item") if c not in log.columns]
    if missing:
        raise DataError(f"the log lacks column(s) {missing}; it has {list(log.columns)}")
    sets = log.groupby(["user", step], sort=True)["item"].agg(frozenset).reset_index()
    previous = sets.groupby("user")[step].shift(1)
    prev_sets = sets.groupby("user")["item"].shift(1)
    keep = previous.notna().to_numpy()
    rows = []
    for user, prev, cur, a, b in zip(
        sets["user"][keep], previous[keep], sets[step][keep], prev_sets[keep], sets["item"][keep], strict=True
    ):
        union = len(a | b)
        rows.append((user, prev, cur, 1.0 - len(a & b) / union if union else 0.0))
    out = pd.DataFrame(rows, columns=["user", "previous", step, "distance"])
    out["previous"] = out["previous"].astype(sets[step].dtype)
    return out


def reactivity(
    model: Any | str,
    train: Interactions,
    feedback: Interactions,
    *,
    k: int = 10,
    steps: int = 5,
    threshold: float | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """How much top-k lists change after each batch of feedback (see the module docs).

    ``feedback`` rows (same id space as ``train``) are taken in timestamp order when
    both have timestamps, else in a seeded random order, and cut into ``steps`` equal
    batches. Lists exclude the items each user rated in ``train`` or in the feedback so
    far. Returns one row per step: ``step``, ``n_feedback``, ``n_touched`` (users with
    feedback in the batch), ``change_touched``, ``change_untouched``, ``change_all``
    (mean Jaccard distances) and ``mode`` (``update`` or ``refit``).

    Returns
    -------
    pandas.DataFrame
        One row per batch, with the columns described above.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.split import holdout
    >>> train, test = holdout(generate(n_users=60, n_items=50, n_ratings=1200, seed=0), seed=0)
    >>> table = reactivity("popularity", train, test, k=5, steps=2)
    >>> table[["step", "mode"]].values.tolist()
    [[1, 'update'], [2, 'update']]
    >>> bool((table["change_touched"] >= table["change_untouched"]).all())
    True
    """
    from receval.recommenders import recommend
    from receval.studies._models import model_factory

    if train.n_users != feedback.n_users or train.n_items != feedback.n_items:
        raise DataError("train and feedback must share one id space (split one data set, don't re-index)")
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise ConfigError(f"steps={steps!r} must be a positive integer")
    if feedback.n_ratings < steps:
        raise DataError(f"{feedback.n_ratings} feedback rows cannot fill {steps} steps")
    thr = train.scale.relevance(threshold).threshold
    if train.timestamps is not None and feedback.timestamps is not None:
        order = np.argsort(feedback.timestamps, kind="stable")
    else:
        order = np.random.default_rng(seed).permutation(feedback.n_ratings)
    batches = np.array_split(order, steps)
    model = model_factory(model)().fit(train)
    mode = "update" if hasattr(model, "update") else "refit"
    users = np.arange(train.n_users)
    known = train
    lists, _ = recommend(model, users, k, exclude=known, seed=seed)
    rows = []
    for step, rows_idx in enumerate(batches, start=1):
        batch = feedback.subset(np.sort(rows_idx))
        known = Interactions.concat([known, batch])
        if mode == "update":
            fb = (batch.ratings >= thr).astype(np.float64)
            model.update(batch.users.astype(np.int64), batch.items.astype(np.int64), fb)
        else:
            model = model.fit(known)
        new_lists, _ = recommend(model, users, k, exclude=known, seed=seed)
        dist = jaccard_distance(lists, new_lists)
        touched = np.zeros(train.n_users, dtype=bool)
        touched[batch.users] = True
        rows.append(
            {
                "step": step,
                "n_feedback": batch.n_ratings,
                "n_touched": int(touched.sum()),
                "change_touched": float(dist[touched].mean()) if touched.any() else float("nan"),
                "change_untouched": float(dist[~touched].mean()) if (~touched).any() else float("nan"),
                "change_all": float(dist.mean()),
                "mode": mode,
            }
        )
        lists = new_lists
    return pd.DataFrame(rows)


class _SeenOnly:
    """A fitted model whose scores are ``-inf`` for items outside ``allowed``."""

    def __init__(self, model: Any, allowed: np.ndarray):
        self.model = model
        self.allowed = allowed
        self.n_users_ = model.n_users_
        self.n_items_ = model.n_items_

    def score(self, users: np.ndarray) -> np.ndarray:
        scores = np.array(self.model.score(users), dtype=np.float64)
        scores[:, ~self.allowed] = -np.inf
        return scores


def window_freshness(
    data: Interactions,
    model: Any,
    *,
    n_windows: int = 5,
    k: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    """Repeated one-shot runs at the end of each time window (see the module docs).

    ``model`` is an algorithm name, an unfitted model or a factory returning one. Returns one
    row per window from the second: ``window``, ``end`` (last timestamp), ``n_users``
    (users with ratings before the window, compared), ``change`` (mean Jaccard
    distance to the previous window's lists), ``new_item_share`` (mean share of new
    items in the lists), ``n_new_items``, ``new_catalogue_share`` (new items / items
    available).

    Returns
    -------
    pandas.DataFrame
        One row per window from the second, with the columns described above.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> table = window_freshness(generate(n_users=60, n_items=50, n_ratings=1500, seed=0), "popularity", n_windows=3)
    >>> table["window"].tolist()
    [2, 3]
    >>> bool(table["change"].between(0, 1).all())
    True
    """
    from receval.recommenders import recommend
    from receval.studies._models import model_factory

    if data.timestamps is None:
        raise DataError("window freshness needs timestamps: load data with a timestamp column")
    if isinstance(n_windows, bool) or not isinstance(n_windows, int | np.integer) or n_windows < 2:
        raise ConfigError(f"n_windows={n_windows!r} must be an integer of at least 2")
    factory = model_factory(model)
    order = np.argsort(data.timestamps, kind="stable")
    cuts = [order[: int(round(len(order) * w / n_windows))] for w in range(1, n_windows + 1)]
    ends = [int(data.timestamps[c[-1]]) if len(c) else None for c in cuts]
    if any(e is None for e in ends) or len(set(ends)) < n_windows:
        raise DataError(f"the timestamps do not separate into {n_windows} windows; use fewer windows")
    first_seen = np.full(data.n_items, np.iinfo(np.int64).max)
    np.minimum.at(first_seen, data.items, data.timestamps)
    rows = []
    prev: tuple[np.ndarray, np.ndarray] | None = None  # the previous window's users and lists
    for w, end in enumerate(ends, start=1):
        train = data.subset(data.timestamps <= end)
        allowed = first_seen <= end
        model_w = _SeenOnly(factory().fit(train), allowed)
        users = np.unique(train.users).astype(np.int64)
        lists, _ = recommend(model_w, users, k, exclude=train, seed=seed)
        if prev is not None:
            prev_users, prev_lists = prev
            common, a, b = np.intersect1d(prev_users, users, return_indices=True)
            new = allowed & (first_seen > ends[w - 2])
            valid = lists >= 0
            n_listed = valid.sum(axis=1)
            new_in = (new[np.where(valid, lists, 0)] & valid).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(n_listed > 0, new_in / np.maximum(n_listed, 1), np.nan)
            rows.append(
                {
                    "window": w,
                    "end": end,
                    "n_users": len(common),
                    "change": float(jaccard_distance(prev_lists[a], lists[b]).mean()) if len(common) else float("nan"),
                    "new_item_share": float(np.nanmean(share)) if np.isfinite(share).any() else float("nan"),
                    "n_new_items": int(new.sum()),
                    "new_catalogue_share": float(new.sum() / allowed.sum()),
                }
            )
        prev = users, lists
    return pd.DataFrame(rows)


def item_cold_start_split(
    data: Interactions, item_fraction: float = 0.1, seed: int = 0
) -> tuple[Interactions, Interactions, np.ndarray]:
    """Hold out ``round(item_fraction × rated items)`` items entirely: (train, test, cold item indices).

    Every rating of a cold item is in ``test``, none in ``train``; both keep the id space.

    Returns
    -------
    tuple of (Interactions, Interactions, numpy.ndarray)
        ``train``, ``test`` and the cold items' indices, sorted.

    Examples
    --------
    >>> d = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 3, 2, 1])
    >>> train, test, cold = item_cold_start_split(d, 0.34, seed=0)
    >>> len(cold), bool(np.isin(train.items, cold).any()), bool(np.isin(test.items, cold).all())
    (1, False, True)
    """
    if isinstance(item_fraction, bool) or not 0 < item_fraction < 1:
        raise ConfigError(f"item_fraction={item_fraction!r} must lie strictly between 0 and 1")
    rated = np.unique(data.items)
    n_cold = int(round(item_fraction * len(rated)))
    if n_cold < 1 or n_cold >= len(rated):
        raise DataError(f"item_fraction={item_fraction:g} of {len(rated)} rated items leaves no cold or no warm item")
    cold = np.sort(np.random.default_rng(seed).choice(rated, size=n_cold, replace=False)).astype(np.int64)
    mask = np.isin(data.items, cold)
    return data.subset(~mask), data.subset(mask), cold


def item_cold_start(
    data: Interactions,
    model: Any,
    metrics: Sequence[str] = ("ndcg@10", "precision@10", "recall@10"),
    *,
    item_fraction: float = 0.1,
    k: int = 10,
    threshold: float | None = None,
    seed: int = 0,
) -> dict[str, float]:
    """Item cold-start evaluation: rank only the held-out items for each test user.

    ``model`` is an algorithm name, an unfitted model or a factory returning one.
    Returns the ``metrics`` (on the test users by the one-shot protocol,
    :func:`receval.evaluation.evaluate_model`, relevance ``rating ≥ threshold``, default
    the scale's :meth:`~receval.data.interactions.RatingScale.default_threshold`) plus ``n_cold_items`` and ``n_users``.
    A model that cannot score items without training ratings shows it here (e.g. ties
    broken at random).

    Returns
    -------
    dict of str to float
        Each metric's value, ``n_cold_items`` and ``n_users``.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=60, n_items=50, n_ratings=1200, seed=0)
    >>> result = item_cold_start(data, "popularity", ["ndcg@5"], k=5)
    >>> result["n_cold_items"]
    5
    """
    from receval.evaluation import evaluate_model
    from receval.studies._models import model_factory

    train, test, cold = item_cold_start_split(data, item_fraction, seed)
    allowed = np.zeros(data.n_items, dtype=bool)
    allowed[cold] = True
    fitted = _SeenOnly(model_factory(model)().fit(train), allowed)
    thr = data.scale.relevance(threshold).threshold
    result = evaluate_model(
        fitted, train, test, list(metrics), k=min(k, len(cold)), threshold=thr, seed=seed, fitted=True
    )
    n_users = result.conventions.users_evaluated
    assert isinstance(n_users, int)
    return {**result.summary, "n_cold_items": len(cold), "n_users": n_users}
