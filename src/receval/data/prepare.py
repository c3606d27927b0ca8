"""Data preparation: the one path from loaded ratings to the data set an experiment uses.

:func:`prepare` keeps the familiar ratings only (CM100k's "Familiar CM100k",
Cañamares & Castells, SIGIR 2018) and/or the users and items with enough ratings.
``receval simulate --familiar-only``, ``receval data stats --familiar-only``,
``load(..., familiar_only=True)`` and the ``filters`` of an experiment configuration
all call it, so a command and a configuration of the same experiment see the same
data.

The id space policy: **preparation re-indexes, splitting does not.** After the
filters, users and items without a remaining rating leave the id space (indices are
renumbered in the same sorted order). A prepared data set is thus the same object as
a file holding only the kept rows, loaded afresh — the catalogue is the items the
data set has, so ``n_items``, a random recommender's draws, catalogue coverage and
every "share of the catalogue" figure are those of the prepared data, wherever it
was prepared. Splits (:mod:`receval.split`) then keep that id space, so indices from
a training part are valid in its test part.

Examples
--------
>>> from receval import Interactions
>>> d = Interactions.from_arrays([0, 0, 1], [0, 1, 2], [5, 4, 3], extra={"familiar": [True, False, True]})
>>> f = prepare(d, familiar_only=True)
>>> f.n_ratings, f.n_items, f.item_ids.tolist()
(2, 2, [0, 2])
>>> prepare(d, min_item_ratings=2)
Traceback (most recent call last):
...
receval.errors.DataError: the filters (min_item_ratings=2) leave no ratings; relax them
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import DataError

__all__ = ["FILTERS", "CoreReport", "k_core", "prepare"]

FILTERS: dict[str, type] = {"familiar_only": bool, "min_user_ratings": int, "min_item_ratings": int, "core": int}
"""The filters :func:`prepare` applies (in this order), with their types."""


def prepare(
    data: Interactions,
    *,
    familiar_only: bool = False,
    min_user_ratings: int = 0,
    min_item_ratings: int = 0,
    core: int = 0,
    label: str = "",
) -> Interactions:
    """The familiar rows and/or users and items with enough ratings, re-indexed to those that remain.

    Parameters
    ----------
    data
        Loaded or generated ratings.
    familiar_only
        Keep only the rows whose ``familiar`` flag is set (CM100k's ``Known``).
    min_user_ratings, min_item_ratings
        Keep users (then items) with at least this many ratings, each counted once
        on the rows left by the previous filter (one pass each, not iterated to a
        fixed point).
    core
        After the other filters, keep the ``core``-core: rows are removed, round after
        round, until every user and every item has at least ``core`` ratings (a fixed
        point; :func:`k_core`, whose report says what each round kept).
    label
        The data set's name in error messages.

    Returns
    -------
    Interactions
        ``data`` itself when no filter is asked; otherwise the kept rows over the
        users and items that still have a rating (see the module's id space policy).

    Examples
    --------
    >>> d = Interactions.from_arrays(["a", "a", "a", "b", "c", "c"], [1, 2, 3, 1, 1, 2], [5, 4, 3, 2, 5, 1])
    >>> kept = prepare(d, min_user_ratings=2)  # user b rated once
    >>> kept.n_ratings, kept.n_users, prepare(d) is d
    (5, 2, True)
    """
    asked = {
        k: v
        for k, v in (
            ("familiar_only", familiar_only),
            ("min_user_ratings", min_user_ratings),
            ("min_item_ratings", min_item_ratings),
            ("core", core),
        )
        if v
    }
    if not asked:
        return data
    for key in ("min_user_ratings", "min_item_ratings", "core"):
        value = asked.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise DataError(f"{key}={value!r} must be a whole number ≥ 0")
    where = f" (data set {label!r})" if label else ""
    keep = np.ones(data.n_ratings, dtype=bool)
    name = data.name
    if familiar_only:
        if "familiar" not in data.extra:
            raise DataError(
                f"familiar_only needs a 'familiar' flag, which this data does not have{where} "
                "(CM100k has it; for a generic file name the column with extra=['familiar'])"
            )
        keep &= np.asarray(data.extra["familiar"], dtype=bool)
        name = f"{data.name} (familiar)" if data.name else "familiar"
    if min_user_ratings > 0:
        counts = np.bincount(data.users[keep], minlength=data.n_users)
        keep &= counts[data.users] >= min_user_ratings
    if min_item_ratings > 0:
        counts = np.bincount(data.items[keep], minlength=data.n_items)
        keep &= counts[data.items] >= min_item_ratings
    if core > 0 and keep.any():
        keep &= _core_mask(data.users, data.items, keep, data.n_users, data.n_items, int(core))[0]
    if not keep.any():
        shown = ", ".join(f"{k}={v!r}" for k, v in asked.items())
        raise DataError(f"the filters ({shown}) leave no ratings{where}; relax them")
    return _compact(data.subset(keep), name)


def _compact(data: Interactions, name: str) -> Interactions:
    """The same rows with users and items re-indexed to those that have a row (sorted order kept)."""
    used_u, users = np.unique(data.users, return_inverse=True)
    used_i, items = np.unique(data.items, return_inverse=True)
    return replace(
        data,
        users=users,
        items=items,
        user_ids=data.user_ids[used_u],
        item_ids=data.item_ids[used_i],
        aspects=None if data.aspects is None else data.aspects[used_i],
        name=name,
    )


@dataclass(frozen=True)
class CoreReport:
    """What a k-core filter kept: per round (after its removals) the users, items and ratings left.

    ``rounds[0]`` is the data before any removal, then one entry per round that removed rows;
    the round after the last found nothing to remove (the fixed point).
    """

    core: int
    rounds: list[dict[str, int]]

    def as_dict(self) -> dict[str, Any]:
        """The report as plain values (``receval data prepare --json`` prints it).

        Returns
        -------
        dict
            ``core``, ``rounds`` and the shares of users, items and ratings kept.
        """
        first, last = self.rounds[0], self.rounds[-1]
        kept = {f"{k}_kept": (last[k] / first[k] if first[k] else 0.0) for k in ("users", "items", "ratings")}
        return {"core": self.core, "rounds": [dict(r) for r in self.rounds], **kept}


def k_core(data: Interactions, core: int, *, label: str = "") -> tuple[Interactions, CoreReport]:
    """The ``core``-core of ``data`` (every user and item with ≥ ``core`` ratings) and the retention report.

    Each round removes every row whose user or item has fewer than ``core`` ratings among
    the rows left, both counted on the same rows (as Microsoft Recommenders'
    ``filter_k_core`` alternates users and items until nothing changes; both reach the
    same fixed point, the largest subset where every count is ≥ ``core``, because
    removal only lowers counts). Rows count ratings: a re-rated pair counts each time.

    Returns
    -------
    tuple of (Interactions, CoreReport)
        The k-core re-indexed to its users and items (as :func:`prepare`), and the report.

    Examples
    --------
    >>> d = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [1] * 5)
    >>> kept, report = k_core(d, 2)
    >>> kept.n_ratings, [r["ratings"] for r in report.rounds]
    (4, [5, 4])
    """
    if isinstance(core, bool) or not isinstance(core, int | np.integer) or core < 1:
        raise DataError(f"core={core!r} must be a whole number ≥ 1")
    keep, rounds = _core_mask(data.users, data.items, np.ones(data.n_ratings, dtype=bool), data.n_users,
                              data.n_items, int(core))  # fmt: skip
    if not keep.any():
        where = f" of data set {label!r}" if label else ""
        raise DataError(
            f"core={core} removes every rating{where} ({data.n_ratings} ratings of {data.n_users} users and "
            f"{data.n_items} items; rounds kept {', '.join(str(r['ratings']) for r in rounds)}); use a smaller core"
        )
    name = f"{data.name} ({core}-core)" if data.name else f"{core}-core"
    return _compact(data.subset(keep), name), CoreReport(int(core), rounds)


def _core_mask(
    users: np.ndarray, items: np.ndarray, keep: np.ndarray, n_users: int, n_items: int, core: int
) -> tuple[np.ndarray, list[dict[str, int]]]:
    """Rows of the ``core``-core among ``keep`` (a fixed point), and per round the users, items, ratings left."""
    keep = keep.copy()

    def counts() -> dict[str, int]:
        return {
            "users": int(np.count_nonzero(np.bincount(users[keep], minlength=n_users))),
            "items": int(np.count_nonzero(np.bincount(items[keep], minlength=n_items))),
            "ratings": int(keep.sum()),
        }

    rounds = [counts()]
    while True:
        per_user = np.bincount(users[keep], minlength=n_users)
        per_item = np.bincount(items[keep], minlength=n_items)
        drop = keep & ((per_user[users] < core) | (per_item[items] < core))
        if not drop.any():
            return keep, rounds
        keep &= ~drop
        rounds.append(counts())
