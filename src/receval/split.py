"""Seeded train/test splits over one id space.

Every function returns :class:`~receval.data.interactions.Interactions` built with
:meth:`~receval.data.interactions.Interactions.subset`, so user and item indices of the
training part are valid in the test part (same ``user_ids``, ``item_ids``, scale,
aspects and extra columns).

**Repeated ratings stay together.** The unit of every split is the (user, item) pair,
not the row: all ratings of a pair go to the same side (otherwise a model would be
tested on a pair it was trained on, and the magic-barrier estimate, which needs every
rating of a pair, would be torn apart). Fractions count pairs; a pair's time is its
*first* rating's timestamp.

**Rounding.** A fraction ``f`` of ``n`` pairs is ``floor(f * n + 1/2)`` pairs (half up).

Examples
--------
>>> from receval.data.synthetic import generate
>>> data = generate(n_users=50, n_items=40, n_ratings=600, seed=0)
>>> train, test = holdout(data, test_fraction=0.2, seed=0)
>>> len(train), len(test), train.n_items == test.n_items == 40
(480, 120, True)
>>> [len(te) for _, te in kfold_per_user(data, k=5, seed=0)]
[120, 120, 120, 120, 120]
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from receval._jit import COMPILED_FROM, njit
from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.validate import check_count, check_folds, parse_duration, parse_instant
from receval.vocabulary import split_candidates, split_method, split_targets

_log = logging.getLogger(__name__)

__all__ = [
    "holdout",
    "kfold_per_user",
    "leave_one_out",
    "per_user_holdout",
    "existing_candidates",
    "rolling",
    "select_targets",
    "split_by_name",
    "temporal",
    "train_validation_test",
]

Seed = int | np.random.Generator


@dataclass(frozen=True, eq=False)
class _Pairs:
    """Rows grouped by (user, item): ``group[row]``; per group its user and first time."""

    group: np.ndarray
    user: np.ndarray
    time: np.ndarray | None

    @property
    def n(self) -> int:
        return len(self.user)


def _pairs(data: Interactions) -> _Pairs:
    if data.n_ratings == 0:
        raise DataError(f"{_label(data)}has no ratings to split")
    times = data.timestamps if data.timestamps is not None else np.empty(0, dtype=np.int64)
    grouping = _group_rows if data.n_ratings >= COMPILED_FROM else _group_rows_numpy
    group, user, time = grouping(data.users, data.items, times, data.n_users, data.n_items)
    return _Pairs(group=group, user=user, time=time if data.timestamps is not None else None)


def _group_rows_numpy(
    users: np.ndarray, items: np.ndarray, times: np.ndarray, n_users: int, n_items: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_group_rows` by sorting: the same groups, numbers and first times.

    >>> [a.tolist() for a in _group_rows_numpy(np.array([1, 0, 1, 1]), np.array([5, 2, 3, 5]),
    ...                                        np.array([9, 4, 7, 8]), 2, 6)]
    [[1, 0, 2, 1], [0, 1, 1], [4, 8, 7]]
    """
    order = np.argsort(users, kind="stable")  # rows by user, each user's in row order
    keys = users[order].astype(np.int64) * n_items + items[order]
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    number = np.empty(len(unique), dtype=np.int64)  # by first appearance, user by user
    number[np.argsort(first, kind="stable")] = np.arange(len(unique))
    group = np.empty(len(users), dtype=np.int64)
    group[order] = number[inverse]
    group_user = np.empty(len(unique), dtype=np.int64)
    group_user[number] = unique // n_items
    group_time = np.zeros(len(unique), dtype=np.int64)
    if len(times):
        group_time[:] = np.iinfo(np.int64).max
        np.minimum.at(group_time, group, times)
    return group, group_user, group_time


@njit(cache=True)
def _group_rows(users, items, times, n_users, n_items):
    """Group ids of the rows' (user, item) pairs in O(rows): groups are numbered user by
    user (so each user's groups are contiguous), then in order of first appearance."""
    n = len(users)
    start = np.zeros(n_users + 1, dtype=np.int64)
    for r in range(n):
        start[users[r] + 1] += 1
    for u in range(n_users):
        start[u + 1] += start[u]
    order = np.empty(n, dtype=np.int64)  # rows by user, stable (a counting sort)
    fill = start[:-1].copy()
    for r in range(n):
        order[fill[users[r]]] = r
        fill[users[r]] += 1
    owner = np.full(n_items, -1, dtype=np.int64)  # the user whose group an item's gid belongs to
    gid = np.empty(n_items, dtype=np.int64)
    group = np.empty(n, dtype=np.int64)
    group_user = np.empty(n, dtype=np.int64)
    group_time = np.zeros(n, dtype=np.int64)
    g = 0
    for j in range(n):
        r = order[j]
        u, i = users[r], items[r]
        if owner[i] != u:
            owner[i] = u
            gid[i] = g
            group_user[g] = u
            if len(times):
                group_time[g] = times[r]
            g += 1
        elif len(times) and times[r] < group_time[gid[i]]:
            group_time[gid[i]] = times[r]
        group[r] = gid[i]
    return group, group_user[:g].copy(), group_time[:g].copy()


def _label(data: Interactions) -> str:
    return f"data set {data.name!r} " if data.name else "the data "


def _rng(seed: Seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _fraction(value: float, label: str = "test_fraction") -> float:
    if not isinstance(value, int | float | np.floating) or not 0 < value < 1:
        raise ConfigError(f"{label} must be strictly between 0 and 1, got {value!r}")
    return float(value)


def _share(n: np.ndarray | int, fraction: float) -> np.ndarray:
    return np.floor(np.asarray(n) * fraction + 0.5).astype(np.int64)


def _split(data: Interactions, pairs: _Pairs, test_groups: np.ndarray) -> tuple[Interactions, Interactions]:
    test_rows = test_groups[pairs.group]
    train, test = data.subset(~test_rows), data.subset(test_rows)
    _log.info("split %s: %d training and %d test ratings", _label(data).strip(), train.n_ratings, test.n_ratings)
    return train, test


def _rank_within_user(pairs: _Pairs, key: np.ndarray | None, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Per group: its 0-based rank among its user's groups (by ``key``, ties at random),
    and the user's number of groups. ``key=None`` ranks in random order."""
    use_key = key is not None
    rank = _segment_ranks(pairs.user, key if use_key else np.empty(0, dtype=np.int64), use_key, rng)
    return rank, np.bincount(pairs.user)[pairs.user]


@njit(cache=True)
def _segment_ranks(group_user, key, use_key, rng):
    # each user's groups are contiguous: shuffle them (Fisher-Yates), then, when a key
    # is given, sort them stably by key so equal keys stay in random order
    n = len(group_user)
    rank = np.empty(n, dtype=np.int64)
    start = 0
    while start < n:
        end = start
        while end < n and group_user[end] == group_user[start]:
            end += 1
        perm = np.arange(end - start)
        for j in range(len(perm) - 1, 0, -1):
            k = int(rng.random() * (j + 1))
            perm[j], perm[k] = perm[k], perm[j]
        if use_key:
            perm = perm[np.argsort(key[start:end][perm], kind="mergesort")]
        for t in range(len(perm)):
            rank[start + perm[t]] = t
        start = end
    return rank


def _rank_by(key: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """0-based rank of each entry by ``key``, equal keys in random order."""
    shuffled = rng.permutation(len(key))
    order = shuffled[np.argsort(key[shuffled], kind="stable")]
    rank = np.empty(len(key), dtype=np.int64)
    rank[order] = np.arange(len(key))
    return rank


def _check_min_train(min_train: int) -> int:
    if not isinstance(min_train, int | np.integer) or min_train < 0:
        raise ConfigError(f"min_train must be an integer >= 0, got {min_train!r}")
    return int(min_train)


def _need_timestamps(data: Interactions, what: str) -> None:
    if data.timestamps is None:
        raise DataError(
            f"{_label(data)}has no timestamps, which {what} needs; load it with a timestamp column "
            "or use a random split"
        )


def _day(seconds: float) -> str:
    from datetime import UTC, datetime

    try:
        return datetime.fromtimestamp(float(seconds), tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return f"{seconds:g} s"


def _range(data: Interactions) -> str:
    assert data.timestamps is not None
    low, high = int(data.timestamps.min()), int(data.timestamps.max())
    return f"the data's time range is {_day(low)} to {_day(high)} UTC ({low} to {high})"


def _check_parts(data: Interactions, option: str, value: Any, n_test: int, n_train: int) -> None:
    """A DataError naming ``option=value`` and the data's range when a cut leaves an empty part."""
    if n_test == 0 or n_train == 0:
        empty = "test" if n_test == 0 else "training"
        raise DataError(
            f"{option}={value} leaves an empty {empty} part; {_range(data)}: cut inside it", parameters=[option]
        )


def holdout(data: Interactions, test_fraction: float = 0.2, seed: Seed = 0) -> tuple[Interactions, Interactions]:
    """Random holdout: a fraction of all (user, item) pairs, drawn uniformly, is the test set.

    Returns
    -------
    tuple of (Interactions, Interactions)
        ``(train, test)`` over ``data``'s id space; every rating of a pair goes to the same part.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> train, test = holdout(generate(20, 30, 100, reratings=2, seed=1), 0.25, seed=0)
    >>> len(train), len(test)  # 75 and 25 pairs, two ratings each
    (150, 50)
    """
    f = _fraction(test_fraction)
    pairs = _pairs(data)
    test = np.zeros(pairs.n, dtype=bool)
    test[_rng(seed).choice(pairs.n, size=int(_share(pairs.n, f)), replace=False, shuffle=False)] = True
    return _split(data, pairs, test)


def per_user_holdout(
    data: Interactions, test_fraction: float = 0.2, seed: Seed = 0, min_train: int = 1
) -> tuple[Interactions, Interactions]:
    """Per-user random holdout: each user's pairs are split by ``test_fraction``.

    A user with ``n`` pairs gets ``min(floor(f n + 1/2), max(n - min_train, 0))`` test
    pairs, so at least ``min_train`` pairs stay in training (users with too few pairs
    stay entirely in training).

    Returns
    -------
    tuple of (Interactions, Interactions)
        ``(train, test)`` over ``data``'s id space; every rating of a pair goes to the same part.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(10, 40, 200, seed=2)
    >>> train, test = per_user_holdout(data, 0.2, seed=0)
    >>> import numpy as np
    >>> bool(np.all(np.bincount(test.users) == np.floor(np.bincount(data.users) * 0.2 + 0.5)))
    True
    """
    f = _fraction(test_fraction)
    min_train = _check_min_train(min_train)
    pairs = _pairs(data)
    rank, size = _rank_within_user(pairs, None, _rng(seed))
    n_test = np.minimum(_share(size, f), np.maximum(size - min_train, 0))
    return _split(data, pairs, rank < n_test)


def temporal(
    data: Interactions,
    test_fraction: float = 0.2,
    per_user: bool = False,
    seed: Seed = 0,
    min_train: int = 1,
    at: str | float | None = None,
) -> tuple[Interactions, Interactions]:
    """Temporal split: the latest pairs (by their first rating's time) are the test set.

    ``per_user=False`` takes the globally latest ``test_fraction`` of the pairs (a
    global cut); ``per_user=True`` the latest fraction of each user's pairs (at least
    ``min_train`` kept for training, as in :func:`per_user_holdout`). Pairs with the
    same time at the cut are ordered at random with ``seed``. ``at`` (an ISO date, UTC
    unless a zone is given, or epoch seconds) cuts at that instant instead of a fraction:
    pairs first rated at or after ``at`` are the test set (``test_fraction`` is then not
    used). Raises :class:`~receval.errors.DataError` when the data has no timestamps or
    when ``at`` leaves an empty part (the message gives the data's time range).

    Returns
    -------
    tuple of (Interactions, Interactions)
        ``(train, test)`` over ``data``'s id space; every rating of a pair goes to the same part.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> train, test = temporal(generate(30, 30, 300, seed=3), 0.2)
    >>> bool(train.timestamps.max() <= test.timestamps.min()), len(test)
    (True, 60)
    """
    f = _fraction(test_fraction)
    min_train = _check_min_train(min_train)
    _need_timestamps(data, "a temporal split")
    pairs = _pairs(data)
    time = pairs.time
    assert time is not None  # the data has timestamps (checked above)
    if at is not None:
        if per_user:
            raise ConfigError("at= is one cut for every user; drop per_user (or at)")
        cut = parse_instant(at, "at")
        test = time >= cut
        _check_parts(data, "at", at, int(test.sum()), int((~test).sum()))
        return _split(data, pairs, test)
    rng = _rng(seed)
    if per_user:
        rank, size = _rank_within_user(pairs, time, rng)
        n_test = np.minimum(_share(size, f), np.maximum(size - min_train, 0))
        test = rank >= size - n_test
    else:
        test = _rank_by(time, rng) >= pairs.n - _share(pairs.n, f)
    return _split(data, pairs, test)


def leave_one_out(
    data: Interactions, mode: Literal["last", "random"] = "last", seed: Seed = 0
) -> tuple[Interactions, Interactions]:
    """One test pair per user with at least two pairs: the latest one or a random one.

    ``mode="last"`` takes the pair rated last (first-rating time; ties at random with
    ``seed``) and needs timestamps; users with a single pair stay in training.

    Returns
    -------
    tuple of (Interactions, Interactions)
        ``(train, test)`` over ``data``'s id space, ``test`` holding one pair per user with at least two.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> import numpy as np
    >>> train, test = leave_one_out(generate(15, 20, 100, seed=4), "random", seed=0)
    >>> bool(np.all(np.bincount(test.users, minlength=15) == 1)), len(train)
    (True, 85)
    """
    if mode not in ("last", "random"):
        raise ConfigError(f"unknown leave-one-out mode {mode!r}; use 'last' or 'random'")
    if mode == "last":
        _need_timestamps(data, "leave_one_out(mode='last')")
    pairs = _pairs(data)
    rank, size = _rank_within_user(pairs, pairs.time if mode == "last" else None, _rng(seed))
    return _split(data, pairs, (size >= 2) & (rank == size - 1))


def kfold_per_user(data: Interactions, k: int = 5, seed: Seed = 0) -> list[tuple[Interactions, Interactions]]:
    """Per-user k-fold cross-validation (Said & Bellogín 2018 use 5 folds on each user's ratings).

    Each user's pairs are shuffled and dealt to the k folds in turn; the dealing runs
    on from one user to the next (users in random order), so every fold holds
    ``floor(n/k)`` or ``ceil(n/k)`` of each user's ``n`` pairs, fold sizes differ by at
    most one pair overall, and every pair is tested exactly once. Policy for users with
    fewer than ``k`` pairs: they are in the test part of ``n`` folds (one pair each)
    and entirely in training in the others; they are not dropped. Fold ``j`` is
    ``(train_j, test_j)`` with ``train_j`` = all pairs not in fold ``j``.

    Returns
    -------
    list of (Interactions, Interactions)
        The ``k`` folds ``(train_j, test_j)`` in order, over ``data``'s id space.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> folds = kfold_per_user(generate(10, 30, 120, seed=5), k=3, seed=0)
    >>> [(len(tr), len(te)) for tr, te in folds]
    [(80, 40), (80, 40), (80, 40)]
    """
    if not isinstance(k, int | np.integer) or isinstance(k, bool) or k < 2:
        raise ConfigError(f"k must be an integer >= 2, got {k!r}")
    pairs = _pairs(data)
    rng = _rng(seed)
    rank, _ = _rank_within_user(pairs, None, rng)
    # deal the users' pairs as one round-robin over the users in random order, so fold
    # sizes differ by at most one both per user and overall
    visit = rng.permutation(data.n_users)
    sizes = np.bincount(pairs.user, minlength=data.n_users)[visit]
    offset = np.empty(data.n_users, dtype=np.int64)
    offset[visit] = np.r_[0, np.cumsum(sizes)[:-1]] % k
    fold = (rank + offset[pairs.user]) % k
    return [_split(data, pairs, fold == j) for j in range(k)]


def rolling(
    data: Interactions,
    windows: int = 5,
    window: str | float | None = None,
    expanding: bool = True,
    gap: str | float = 0,
    seed: Seed = 0,
) -> list[tuple[Interactions, Interactions]]:
    """Rolling-origin backtest: ``windows`` consecutive test spans at the end of the data, each with its past.

    Time runs from ``t0`` (the earliest first-rating time of a pair) to ``t1`` (the latest,
    plus one second, so the last pair falls inside). The test spans are the last
    ``windows`` spans of length ``W`` ending at ``t1``: window ``j`` (0-based) tests the
    pairs first rated in ``[s_j, s_j + W)`` with ``s_j = t1 - (windows - j) W``.
    ``window`` is a duration (``30d``, ``12h``, ``1w``; see
    :func:`receval.validate.parse_duration`) or a fraction of ``t1 - t0``; by default
    ``(t1 - t0) / (windows + 1)``. Training is the pairs first rated before
    ``s_j - gap``: all of them (``expanding=True``) or, with ``expanding=False``, those in
    the last span of the first window's training length (``s_0 - gap - t0``), so every
    window trains on a span of the same length that slides with it. Pairs inside the gap
    or after the window are in neither part. ``seed`` is accepted for a uniform call; a
    rolling split draws nothing. Like :func:`kfold_per_user`, the result is a list of
    folds. Raises :class:`~receval.errors.DataError` when a window's training or test part
    is empty (the message gives the data's time range).

    Returns
    -------
    list of (Interactions, Interactions)
        The ``windows`` folds ``(train_j, test_j)`` in time order, over ``data``'s id space.

    Examples
    --------
    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [1] * 6, timestamps=[0, 1, 2, 3, 4, 5])
    >>> [(tr.timestamps.tolist(), te.timestamps.tolist()) for tr, te in rolling(d, windows=2, window=2)]
    [([0, 1], [2, 3]), ([0, 1, 2, 3], [4, 5])]
    >>> [tr.timestamps.tolist() for tr, _ in rolling(d, windows=2, window=2, expanding=False)]
    [[0, 1], [2, 3]]
    """
    n = check_count(windows, "windows")
    _need_timestamps(data, "a rolling split")
    span_gap = parse_duration(gap, "gap")
    pairs = _pairs(data)
    time = pairs.time
    assert time is not None  # the data has timestamps (checked above)
    t0, t1 = int(time.min()), int(time.max()) + 1
    if window is None:
        length = (t1 - t0) / (n + 1)
    else:
        length = parse_duration(window, "window", fraction=True)
        if 0 < length < 1:  # a fraction of the time span (a window under one second means nothing else)
            length *= t1 - t0
        if length <= 0:
            raise ConfigError(f"window={window}: give a positive duration (30d) or a fraction of the time span")
    starts = [t1 - (n - j) * length for j in range(n + 1)]  # starts[n] == t1: the end of the last window
    first_train = starts[0] - span_gap - t0
    shown = f"windows={n}, window={window if window is not None else 'default'}, gap={gap}"
    if first_train <= 0:
        raise DataError(
            f"{shown}: the first window leaves no training data; {_range(data)}: use fewer or shorter windows"
        )
    folds = []
    for j in range(n):
        test = (time >= starts[j]) & (time < starts[j + 1])
        end_train = starts[j] - span_gap
        train = time < end_train
        if not expanding:
            train &= time >= end_train - first_train
        if not test.any() or not train.any():
            empty = "test" if not test.any() else "training"
            raise DataError(
                f"{shown}: window {j + 1} ({_day(starts[j])} to {_day(starts[j + 1])}) has no {empty} pairs; "
                f"{_range(data)}: use fewer or longer windows"
            )
        folds.append(_parts(data, pairs, train, test))
    return folds


def _parts(
    data: Interactions, pairs: _Pairs, train_groups: np.ndarray, test_groups: np.ndarray
) -> tuple[Interactions, Interactions]:
    """Like :func:`_split`, for parts that need not cover the data (rolling windows)."""
    return data.subset(train_groups[pairs.group]), data.subset(test_groups[pairs.group])


def select_targets(data: Interactions, test: Interactions, targets: str) -> Interactions:
    """Which of each user's test ratings a cut keeps: ``all``, ``first``, ``last`` or ``successive``.

    ``all`` keeps the test part as it is; ``first`` (``last``) keeps each user's earliest
    (latest) test pair by first-rating time, ties broken by row order (``first``: the
    earlier row, ``last``: the later), with every rating of that pair. ``successive`` keeps
    every test rating, each distinct ``(user, timestamp)`` its own evaluation point (the protocol of sequential
    recommendation): the rows are sorted by user then time and get an extra integer
    column ``point``, numbered from 0 in that order, so that evaluation can key on
    ``point`` or on ``(user, timestamp)``. The history of a point is the user's
    training ratings plus the user's test ratings with an earlier timestamp. ``data``
    names the data set in messages. Needs timestamps but for ``all``.

    Returns
    -------
    Interactions
        The kept test ratings over ``test``'s id space.

    Examples
    --------
    >>> from receval import Interactions
    >>> t = Interactions.from_arrays([0, 0, 1, 0], [3, 1, 2, 2], [1] * 4, timestamps=[7, 5, 6, 7])
    >>> ids = lambda part: part.item_ids[part.items].tolist()
    >>> ids(select_targets(t, t, "first")), ids(select_targets(t, t, "last"))
    ([1, 2], [2, 2])
    >>> p = select_targets(t, t, "successive")
    >>> p.users.tolist(), p.timestamps.tolist(), p.extra["point"].tolist()
    ([0, 0, 0, 1], [5, 7, 7, 6], [0, 1, 1, 2])
    """
    chosen = split_targets(targets)
    if chosen == "all" or test.n_ratings == 0:
        return test
    _need_timestamps(data, f"targets={chosen}")
    assert test.timestamps is not None
    users, times = test.users.astype(np.int64), test.timestamps.astype(np.int64)
    if chosen == "successive":
        order = np.lexsort((np.arange(len(users)), times, users))
        ordered = test.subset(order)
        u, t = users[order], times[order]
        new = np.r_[True, (u[1:] != u[:-1]) | (t[1:] != t[:-1])]
        return replace(ordered, extra={**ordered.extra, "point": np.cumsum(new) - 1})
    pairs = _pairs(test)
    assert pairs.time is not None
    first_row = np.full(pairs.n, len(users), dtype=np.int64)
    np.minimum.at(first_row, pairs.group, np.arange(len(users)))
    sign = 1 if chosen == "first" else -1
    order = np.lexsort((sign * first_row, sign * pairs.time, pairs.user))  # each user's chosen pair first
    keep = np.zeros(pairs.n, dtype=bool)
    leading = order[np.r_[True, pairs.user[order][1:] != pairs.user[order][:-1]]]
    keep[leading] = True
    return test.subset(keep[pairs.group])


def existing_candidates(train: Interactions, test: Interactions) -> tuple[Interactions, int, int]:
    """``candidates=existing``: the test ratings of items with a training rating, and what was removed.

    An item with no rating before the cut did not exist yet for the model; testing on it
    rewards or punishes a model for items it could not know.

    Returns
    -------
    tuple of (Interactions, int, int)
        The kept test ratings, the number of test ratings removed and of items they were of.

    Examples
    --------
    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 0, 2], [1] * 4)
    >>> train, test = d.subset(np.array([1, 0, 1, 0], bool)), d.subset(np.array([0, 1, 0, 1], bool))
    >>> kept, rows, items = existing_candidates(train, test)
    >>> kept.items.tolist(), rows, items
    ([], 2, 2)
    """
    seen = np.bincount(train.items, minlength=train.n_items)[test.items] > 0
    removed = test.items[~seen]
    return test.subset(seen), int(len(removed)), int(len(np.unique(removed)))


def train_validation_test(
    data: Interactions,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.2,
    method: Literal["random", "per_user", "temporal"] = "random",
    seed: Seed = 0,
) -> tuple[Interactions, Interactions, Interactions]:
    """Three-way split: the test part first, then validation out of the remainder.

    ``method`` picks :func:`holdout`, :func:`per_user_holdout` or :func:`temporal`
    (global cut; validation is then the latest pairs before the test period). The
    validation share of the remainder is ``validation_fraction / (1 - test_fraction)``,
    so both fractions are of all pairs.

    Returns
    -------
    tuple of (Interactions, Interactions, Interactions)
        ``(train, validation, test)`` over ``data``'s id space.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> parts = train_validation_test(generate(20, 30, 200, seed=6), 0.1, 0.2, seed=0)
    >>> [len(p) for p in parts]
    [140, 20, 40]
    """
    v = _fraction(validation_fraction, "validation_fraction")
    t = _fraction(test_fraction)
    if v + t >= 1:
        raise ConfigError(
            f"validation_fraction + test_fraction = {v + t:g} leaves no training data; keep their sum below 1"
        )
    methods: dict[str, Callable[..., tuple[Interactions, Interactions]]] = {
        "random": holdout,
        "per_user": per_user_holdout,
        "temporal": temporal,
    }
    if method not in methods:
        raise ConfigError(f"unknown method {method!r}; use one of {', '.join(methods)}")
    rng = _rng(seed)
    rest, test = methods[method](data, t, seed=rng)
    train, validation = methods[method](rest, v / (1 - t), seed=rng)
    return train, validation, test


def split_by_name(
    data: Interactions,
    method: str,
    *,
    test_fraction: float = 0.2,
    folds: int = 5,
    seed: Seed = 0,
    targets: str = "all",
    candidates: str = "all",
    core: int = 0,
    **options: Any,
) -> list[tuple[Interactions, Interactions]]:
    """The split called ``method`` (see :data:`~receval.vocabulary.SPLIT_METHODS`) as a list of ``(train, test)``.

    One fold for every method but ``kfold`` (``folds`` of them) and ``rolling`` (``windows``
    of them); ``test_fraction`` applies to the methods that take it, and ``options`` are
    the method's other options (``min_train=2``, ``per_user=True``, ``at="1998-01-01"`` …).
    Every method also takes ``core`` (filter the data to its ``core``-core first,
    :func:`receval.data.prepare.prepare`), ``targets`` (:func:`select_targets`) and
    ``candidates`` (``existing``: :func:`existing_candidates`), applied to each fold. The
    command line and the experiment configuration call this with the same names.

    Returns
    -------
    list of (Interactions, Interactions)
        The folds, each a ``(train, test)`` pair over ``data``'s id space (the k-core's with ``core``).

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=20, n_items=30, n_ratings=200, seed=0)
    >>> [(len(tr), len(te)) for tr, te in split_by_name(data, "kfold", folds=4)]
    [(150, 50), (150, 50), (150, 50), (150, 50)]
    >>> split_by_name(data, "per_user_holdout")[0][1].n_ratings == per_user_holdout(data)[1].n_ratings
    True
    >>> len(split_by_name(data, "rolling", windows=3))
    3
    >>> split_by_name(data, "random")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: unknown split method 'random'; use one of holdout, per-user, temporal, ...
    """
    chosen = split_method(method)
    chosen_targets = split_targets(targets)
    chosen_candidates = split_candidates(candidates)
    given = {"test_fraction": test_fraction, "k": folds, **options}
    unknown = sorted(set(options) - set(chosen.options))
    if unknown:
        valid = ", ".join(chosen.options) or "none"
        raise ConfigError(f"split method {chosen.name!r} has no option {unknown[0]!r}; its options: {valid}")
    if core:
        from receval.data.prepare import prepare

        data = prepare(data, core=core, label=data.name)
    if chosen.function == "kfold_per_user":  # the check a configuration's folds get, here for every caller
        check_folds(folds, np.bincount(data.users, minlength=data.n_users))
    kwargs = {name: value for name, value in given.items() if name in chosen.options}
    result = _FUNCTIONS[chosen.function](data, seed=seed, **chosen.fixed, **kwargs)
    parts = result if isinstance(result, list) else [result]
    chosen_parts = []
    for train, test in parts:
        if chosen_candidates == "existing":  # first, so that first/last pick among the items that existed
            test, rows, items = existing_candidates(train, test)
            _log.info("candidates=existing: %d test ratings of %d items without training ratings removed", rows, items)
        test = select_targets(data, test, chosen_targets)
        chosen_parts.append((train, test))
    return chosen_parts


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "holdout": holdout,
    "per_user_holdout": per_user_holdout,
    "temporal": temporal,
    "leave_one_out": leave_one_out,
    "kfold_per_user": kfold_per_user,
    "rolling": rolling,
}
