"""A leakage audit of any train/test split: how much of the future the training part holds.

Ji et al. ("A Critical Study on Data Leakage in Recommender System Offline Evaluation",
TOIS 2023) show that a random or leave-one-out split lets a model train on interactions
that happened after the ones it is tested on. :func:`audit` measures that from the
timestamps, for any split (receval's or a file made elsewhere):

- ``train_after_test``: the share of training interactions later than their user's first
  test interaction (the user's *test time*);
- ``users_affected``: the share of test users with at least one such training interaction;
- ``future_items``: the share of test interactions whose item first appears (in training
  or test) after the user's test time;
- ``future_items_in_recs`` (with a run): the share of recommended items, over the test
  users' lists, that first appear after the user's test time;
- ``overlap_pairs``: the (user, item) pairs present in both parts;
- ``unseen_test_users`` / ``unseen_test_items``: test users and items with no training
  interaction.

A global cut at a date has ``train_after_test == 0`` exactly (every training interaction
precedes every test one); ``future_items`` can still be above 0 (an item released after a
user's first test event). The time figures are ``None`` when either part has no timestamps.

Everything is vectorised numpy over integer codes: O(n) passes plus one sort of the
(user, item) keys for the overlap.

Examples
--------
>>> from receval import Interactions
>>> d = Interactions.from_arrays([0, 0, 0, 1, 1], [0, 1, 2, 0, 2], [1] * 5, timestamps=[1, 5, 3, 2, 4])
>>> train, test = d.subset(np.array([1, 1, 0, 1, 0], bool)), d.subset(np.array([0, 0, 1, 0, 1], bool))
>>> r = audit(train, test)
>>> r.train_after_test, r.users_affected, r.future_items, r.overlap_pairs  # user 0 trains on t=5 > its test t=3
(0.3333333333333333, 0.5, 0.0, 0)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from receval.data.interactions import Interactions, distinct, pair_keys
from receval.errors import DataError

__all__ = ["LeakageReport", "audit", "leakage_warning"]

_NEVER = np.iinfo(np.int64).max


@dataclass(frozen=True)
class LeakageReport:
    """The figures of :func:`audit` (see the module's text for each); time figures ``None`` without timestamps."""

    train_after_test: float | None
    users_affected: float | None
    future_items: float | None
    overlap_pairs: int
    unseen_test_users: int
    unseen_test_items: int
    test_users: int
    test_items: int
    timestamps: bool
    future_items_in_recs: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain values (``receval audit --json``); ``future_items_in_recs`` only with a run.

        Returns
        -------
        dict
            Name to figure.
        """
        body = asdict(self)
        if body["future_items_in_recs"] is None:
            del body["future_items_in_recs"]
        return body

    @property
    def leaks(self) -> bool:
        """Whether the timestamps show leakage: training after a user's test time, or future items in the run.

        Future items in the test part alone are not leakage (a global cut has them when an
        item is released during the test period); they are reported, not warned about.
        """
        return bool(self.train_after_test or self.future_items_in_recs)

    def warning(self) -> str:
        """One line with the figures, for ``receval split`` and ``receval evaluate --train``.

        Returns
        -------
        str
            The line (without a trailing newline).
        """
        recs = "" if self.future_items_in_recs is None else f", future items in recs {self.future_items_in_recs:.2%}"
        return (
            f"WARNING time leakage: {self.train_after_test or 0:.2%} of training interactions come after their "
            f"user's first test interaction ({self.users_affected or 0:.2%} of test users), "
            f"{self.future_items or 0:.2%} of test interactions are of items first seen after the user's test time"
            f"{recs}; {self.overlap_pairs} pairs in both parts (see receval audit)"
        )


def audit(train: Any, test: Any, recs: Any = None) -> LeakageReport:
    """The leakage figures of a split (``train``, ``test``) and, optionally, of a run on it.

    Parameters
    ----------
    train, test
        :class:`~receval.data.interactions.Interactions` (over one id space or not: ids
        are matched by value) or tables (pandas or Arrow) with columns ``user``, ``item``
        and, for the time figures, ``timestamp`` (epoch seconds).
    recs
        A run: a table with ``user`` and ``item`` columns (original ids). Items never seen in
        either part count as not from the future (their time is unknown); only the lists of
        test users count.

    Returns
    -------
    LeakageReport
        The figures.

    Examples
    --------
    >>> import pandas as pd
    >>> tr = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "x"], "timestamp": [1, 9, 2]})
    >>> te = pd.DataFrame({"user": ["a", "b"], "item": ["z", "y"], "timestamp": [5, 6]})
    >>> run = pd.DataFrame({"user": ["a", "a", "b"], "item": ["y", "z", "x"]})
    >>> r = audit(tr, te, run)
    >>> r.train_after_test, r.future_items, r.future_items_in_recs, r.unseen_test_items  # y first seen at 6 > a's 5
    (0.3333333333333333, 0.0, 0.3333333333333333, 1)
    """
    codes = _Codes(train, test, recs)
    n_users, n_items = codes.n_users, codes.n_items
    tr_u, tr_i, te_u, te_i = codes.train_user, codes.train_item, codes.test_user, codes.test_item
    train_count_u = np.bincount(tr_u, minlength=n_users)
    train_count_i = np.bincount(tr_i, minlength=n_items)
    is_test_user = np.bincount(te_u, minlength=n_users) > 0
    is_test_item = np.bincount(te_i, minlength=n_items) > 0
    n_test_users = int(is_test_user.sum())
    keys_train = distinct(pair_keys(tr_u, tr_i, n_items))
    keys_test = distinct(pair_keys(te_u, te_i, n_items))
    where = np.searchsorted(keys_train, keys_test)
    overlap = (
        int(np.count_nonzero(keys_train[np.minimum(where, len(keys_train) - 1)] == keys_test)) if len(keys_train) else 0
    )
    after = affected = future = future_recs = None
    tr_t, te_t = codes.train_time, codes.test_time
    if tr_t is not None and te_t is not None:
        test_time = np.full(n_users, _NEVER, dtype=np.int64)
        np.minimum.at(test_time, te_u, te_t)
        later = tr_t > test_time[tr_u]
        after = float(later.mean()) if len(later) else 0.0
        hit = np.zeros(n_users, dtype=bool)
        hit[tr_u[later]] = True
        affected = float(hit.sum() / n_test_users) if n_test_users else 0.0
        first_seen = np.full(n_items, _NEVER, dtype=np.int64)
        np.minimum.at(first_seen, tr_i, tr_t)
        np.minimum.at(first_seen, te_i, te_t)
        future = float((first_seen[te_i] > test_time[te_u]).mean()) if len(te_u) else 0.0
        if codes.rec_user is not None:
            assert codes.rec_item is not None
            listed = (codes.rec_user >= 0) & is_test_user[np.maximum(codes.rec_user, 0)]
            ru, ri = codes.rec_user[listed], codes.rec_item[listed]
            known = ri >= 0
            late = np.zeros(len(ru), dtype=bool)
            late[known] = (first_seen[ri[known]] != _NEVER) & (first_seen[ri[known]] > test_time[ru[known]])
            future_recs = float(late.mean()) if len(late) else 0.0
    return LeakageReport(
        train_after_test=after,
        users_affected=affected,
        future_items=future,
        overlap_pairs=overlap,
        unseen_test_users=int(np.count_nonzero(is_test_user & (train_count_u == 0))),
        unseen_test_items=int(np.count_nonzero(is_test_item & (train_count_i == 0))),
        test_users=n_test_users,
        test_items=int(is_test_item.sum()),
        timestamps=after is not None,
        future_items_in_recs=future_recs,
    )


class _Codes:
    """Integer codes of the users and items of both parts (and a run) over one id space; times as int64."""

    def __init__(self, train: Any, test: Any, recs: Any) -> None:
        if isinstance(train, Interactions) and isinstance(test, Interactions):
            (self.train_user, self.test_user), users = _joined(train.user_ids, test.user_ids, train.users, test.users)
            (self.train_item, self.test_item), items = _joined(train.item_ids, test.item_ids, train.items, test.items)
            self.train_time, self.test_time = train.timestamps, test.timestamps
        else:
            tr, te = _columns(train), _columns(test)
            self.train_user, self.test_user, users = _factorized(tr["user"], te["user"])
            self.train_item, self.test_item, items = _factorized(tr["item"], te["item"])
            self.train_time, self.test_time = tr.get("timestamp"), te.get("timestamp")
        self.n_users, self.n_items = len(users), len(items)
        self.rec_user: np.ndarray | None = None
        self.rec_item: np.ndarray | None = None
        if recs is not None:
            run = _columns(recs)
            self.rec_user = users.get_indexer(pd.Index(run["user"]).astype(users.dtype, copy=False))
            self.rec_item = items.get_indexer(pd.Index(run["item"]).astype(items.dtype, copy=False))


def _joined(
    ids_a: np.ndarray, ids_b: np.ndarray, codes_a: np.ndarray, codes_b: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray], pd.Index]:
    """Codes of two parts over the union of their id spaces (the same arrays when the spaces are equal)."""
    if len(ids_a) == len(ids_b) and np.array_equal(ids_a, ids_b):
        return (codes_a, codes_b), pd.Index(ids_a)
    union = pd.Index(ids_a).append(pd.Index(ids_b)).unique()
    return (union.get_indexer(ids_a)[codes_a], union.get_indexer(ids_b)[codes_b]), union


def _factorized(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    codes, uniques = pd.factorize(np.concatenate([a, b]))
    return codes[: len(a)], codes[len(a) :], pd.Index(uniques)


def _columns(table: Any) -> dict[str, np.ndarray]:
    """``user``, ``item`` (and ``timestamp`` when present, as int64) of a pandas or Arrow table."""
    names = list(table.column_names) if hasattr(table, "column_names") else list(table.columns)
    out = {}
    for name in ("user", "item", "timestamp"):
        if name in names:
            column = table[name]
            values = column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)
            out[name] = _seconds(values) if name == "timestamp" else values
    return out


def _seconds(values: np.ndarray) -> np.ndarray:
    """Timestamps as int64 Unix seconds, as receval's reader gives them: numbers as written, dates (``date``
    objects, ``datetime64`` of any unit, ISO text) converted in UTC.

    ``astype(int64)`` was a TypeError traceback for ``date`` objects (`receval audit` of ISO dates) and days, not
    seconds, for ``datetime64[D]``.

    >>> _seconds(np.array(["1970-01-02", "2000-01-01"], dtype="datetime64[D]")).tolist()
    [86400, 946684800]
    """
    if values.dtype.kind in "iu":
        return values.astype(np.int64)
    if values.dtype.kind == "f" and np.isfinite(values).all():
        outside = np.flatnonzero(~(np.abs(values) < 2.0**63))  # int64 would make them -2^63, silently
        if len(outside):
            raise DataError(f"column timestamp: {values[outside[0]]:g} (row {outside[0] + 1}) is outside the 64-bit "
                            "range of Unix seconds (±9.2e18); give seconds (or a date) within it")  # fmt: skip
        return np.floor(values).astype(np.int64)
    try:
        dates = pd.to_datetime(pd.Series(values), utc=True, format="mixed")
    except (ValueError, TypeError, OverflowError) as err:
        raise DataError(f"column timestamp: {err}; give integers (Unix seconds) or dates") from None
    if dates.isna().any():
        raise DataError(f"column timestamp: row {int(np.flatnonzero(dates.isna().to_numpy())[0]) + 1} has no time")
    epoch = pd.Timestamp(0, tz="UTC").as_unit(dates.dt.unit)
    return ((dates - epoch) // pd.Timedelta(1, "s")).to_numpy(np.int64)


def leakage_warning(train: Any, test: Any) -> str | None:
    """The one-line warning of :meth:`LeakageReport.warning` when both parts have timestamps and leak, else None.

    ``receval split`` and ``receval evaluate --train`` print it on stderr.

    Returns
    -------
    str or None
        The line, or None.

    Examples
    --------
    >>> import pandas as pd
    >>> tr = pd.DataFrame({"user": [1, 1], "item": [1, 2], "timestamp": [1, 9]})
    >>> leakage_warning(tr, pd.DataFrame({"user": [1], "item": [3], "timestamp": [5]}))[:40]
    'WARNING time leakage: 50.00% of training'
    >>> leakage_warning(tr, pd.DataFrame({"user": [1], "item": [3]})) is None
    True
    """
    report = audit(train, test)
    return report.warning() if report.timestamps and report.leaks else None
