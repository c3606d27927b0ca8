"""Candidate sets for sampled evaluation: negatives drawn once, stored, and shared by every system.

A sampled metric ranks a held-out item against ``n`` sampled negatives instead of the whole
catalogue. Its value depends on the sample, so the sample is drawn once (seeded) and every
system is ranked against the same :class:`Candidates` — re-drawing per system or per run
(RecBole's ``uni100``) adds the sample's noise to every comparison.

Negatives exclude the user's training and test items (a negative is never a positive, and
an item the model was trained on is not a candidate, as in full evaluation). They are drawn
without replacement, uniformly or in proportion to the item's training count ``** exponent``
(``exponent=0`` is uniform). Two shapes: ``per-item`` — one row per held-out (user, item)
pair with its own negatives (NCF's leave-one-out files); ``per-user`` — one row per test
user, its negatives shared by all of that user's test items (RecBole).

Drawing is vectorised: each row takes items from a stream of independent draws (uniform,
or by popularity through one sorted search of the cumulative weights) and keeps the first
``n`` that are new and not excluded — which is exactly successive sampling without
replacement — in rounds over the rows still short; a row whose remaining items are too few
for that to be quick gets an exact weighted draw of its own (Gumbel top-``n``). Same
inputs and seed, same negatives, bit for bit.

Examples
--------
>>> from receval.data.interactions import Interactions
>>> data = Interactions.from_arrays(list("uuvvuv"), list("abaecd"), [1] * 6)
>>> in_test = np.array([0, 0, 0, 0, 1, 1], bool)
>>> train, test = data.subset(~in_test), data.subset(in_test)
>>> cands = draw_candidates(train, test, n=2, seed=0)
>>> cands.negatives.shape, sorted(data.item_ids[cands.negatives[0]].tolist())  # u's only unseen items
((2, 2), ['d', 'e'])
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from receval.data import vocab
from receval.data.interactions import Interactions, distinct, pair_keys
from receval.errors import ConfigError, DataError, shown_id
from receval.validate import check_count, check_number, check_seed
from receval.vocabulary import SAMPLE_SHAPES, SAMPLING_SCHEMES, sampled_word

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Candidates", "check_candidates", "draw_candidates"]

_ROUNDS = 6  # stream rounds before a short row is drawn on its own
_DESIGN_KEY = "receval_candidates_design"  # DataFrame.attrs key that carries the design through to_frame


@dataclass(frozen=True)
class Candidates:
    """The sampled negatives of each evaluated row, and how they were drawn.

    Attributes
    ----------
    users
        ``(n_rows,)`` int32 user index of each row.
    items
        ``(n_rows,)`` int32 held-out item of each row for shape ``per-item``; ``None`` for
        ``per-user``, where a row is a user and all its test items are ranked against the row's negatives.
    negatives
        ``(n_rows, n)`` int32 item indices.
    design
        ``{"sampling", "n", "exponent", "seed", "shape", "exclude": "train+test"}``: recorded in every result.
    user_ids, item_ids
        The id spaces the indices point into (original ids, for :meth:`to_frame`); ``None`` keeps indices.
    """

    users: np.ndarray
    items: np.ndarray | None
    negatives: np.ndarray
    design: dict[str, Any] = field(default_factory=dict)
    user_ids: np.ndarray | None = None
    item_ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "users", np.ascontiguousarray(self.users, dtype=np.int32))
        object.__setattr__(self, "negatives", np.ascontiguousarray(self.negatives, dtype=np.int32))
        if self.items is not None:
            object.__setattr__(self, "items", np.ascontiguousarray(self.items, dtype=np.int32))
        if self.negatives.ndim != 2 or len(self.negatives) != len(self.users):
            raise DataError(f"negatives {self.negatives.shape} do not give one row of negatives per user row")
        if self.items is not None and len(self.items) != len(self.users):
            raise DataError(f"{len(self.items)} held-out items for {len(self.users)} rows")
        object.__setattr__(self, "design", dict(self.design))

    @property
    def n(self) -> int:
        """The number of negatives per row."""
        return int(self.negatives.shape[1])

    def to_frame(self) -> pd.DataFrame:
        """receval's candidate table: one row per (row, negative), columns ``user``, ``item``, ``negative``.

        Ids are the original ids when the id spaces are known. Shape ``per-user`` has no
        ``item`` column. The design rides along in ``DataFrame.attrs`` (kept by Parquet).

        Returns
        -------
        pandas.DataFrame
            ``n_rows * n`` rows in row order, negatives in drawn order.

        Examples
        --------
        >>> Candidates(np.array([0]), np.array([1]), np.array([[2, 0]])).to_frame().values.tolist()
        [[0, 1, 2], [0, 1, 0]]
        """
        import pandas as pd

        n = self.n
        frame = {"user": _ids(self.user_ids, np.repeat(self.users, n))}
        if self.items is not None:
            frame["item"] = _ids(self.item_ids, np.repeat(self.items, n))
        frame["negative"] = _ids(self.item_ids, self.negatives.ravel())
        out = pd.DataFrame(frame)
        out.attrs[_DESIGN_KEY] = dict(self.design)
        return out

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, data: Interactions, *, design: Mapping[str, Any] | None = None
    ) -> Candidates:
        """Read a candidate table (:meth:`to_frame`'s columns, original ids) over ``data``'s id space.

        Rows of one (user, item) — or one user when there is no ``item`` column — in the order
        they first appear form one candidate row; every row must have the same number of
        negatives. The design is the table's own (``attrs``), else ``design``, else uniform
        sampling (NCF's files and most papers'); pass ``design={"sampling": "popularity"}`` when not.

        Returns
        -------
        Candidates
            Indices into ``data.user_ids`` / ``data.item_ids``.

        Examples
        --------
        >>> import pandas as pd
        >>> data = Interactions.from_arrays(["u", "v"], ["a", "b"], [1, 1])
        >>> c = Candidates.from_frame(pd.DataFrame({"user": ["v"], "item": ["b"], "negative": ["a"]}), data)
        >>> c.users.tolist(), c.items.tolist(), c.negatives.tolist(), c.design["shape"]
        ([1], [1], [[0]], 'per-item')
        """
        missing = [c for c in ("user", "negative") if c not in frame.columns]
        if missing:
            raise DataError(f"the candidate table has no column {missing[0]!r}; give columns user, item, negative")
        shape = "per-item" if "item" in frame.columns else "per-user"
        users = _index(data.user_ids, frame["user"].to_numpy(), "user")
        negatives = _index(data.item_ids, frame["negative"].to_numpy(), "negative")
        items = _index(data.item_ids, frame["item"].to_numpy(), "item") if shape == "per-item" else None
        key = users.astype(np.int64) * (len(data.item_ids) + 1) + (0 if items is None else items + 1)
        _, first, group = np.unique(key, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # groups in the order they first appear
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        group = rank[group.ravel()]
        sizes = np.bincount(group)
        if len(sizes) == 0:
            raise DataError("the candidate table has no rows")
        if (sizes != sizes[0]).any():
            bad = int(np.flatnonzero(sizes != sizes[0])[0])
            raise DataError(
                f"candidate row of user {shown_id(data.user_ids[users[first[order[bad]]]])} has {sizes[bad]} "
                "negatives, "
                f"the first row {sizes[0]}; every row needs the same number",
                line=int(first[order[bad]]) + 1,
            )
        rows = np.argsort(group, kind="stable").reshape(len(sizes), int(sizes[0]))
        head = rows[:, 0]
        recorded = dict(frame.attrs.get(_DESIGN_KEY, {}))
        full = {"sampling": "uniform", "n": int(sizes[0]), "exponent": 0.0, "seed": None, "shape": shape,
                "exclude": "train+test"} | dict(design or {}) | recorded  # fmt: skip
        return cls(users[head], None if items is None else items[head], negatives[rows], full,
                   data.user_ids, data.item_ids)  # fmt: skip


def _ids(space: np.ndarray | None, index: np.ndarray) -> np.ndarray:
    return index if space is None else space[index]


def _index(space: np.ndarray, ids: np.ndarray, column: str) -> np.ndarray:
    """Positions of ``ids`` in ``space``, ids compared as written (as the rating reader keeps them).

    Text finds an integer id by the integer's own text only, and an integer finds a
    text id written as that integer: ``'0286'`` is not item 286, exactly as ``load``
    keeps ``0286`` and ``286`` apart and reads ``286`` as the integer 286
    (:mod:`receval.data.loaders`).

    >>> _index(np.array([286, 7]), np.array(["7", "286"], dtype=object), "negative").tolist()
    [1, 0]
    >>> _index(np.array([286, 7]), np.array(["0286"], dtype=object), "negative")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: line 1: negative '0286' is not in the data; candidates must name its users and items
    """
    ids = np.asarray(ids)
    space = np.asarray(space)
    if ids.dtype.kind in "OUS" and space.dtype.kind != "O":  # text against integer ids: by the ids' own text
        space = space.astype(str).astype(object)
    elif ids.dtype.kind in "iu" and space.dtype.kind == "O":  # integers against text ids: by the integers' text
        ids = ids.astype(str)
    found = vocab.index_of(space, ids.astype(object) if ids.dtype.kind in "US" else ids)
    if (found < 0).any():
        row = int(np.flatnonzero(found < 0)[0])
        raise DataError(
            f"{column} {shown_id(ids[row])} is not in the data; candidates must name its users and items", line=row + 1
        )
    return found.astype(np.int32)


# ----------------------------------------------------------------------------- drawing
def draw_candidates(
    train: Interactions,
    test: Interactions,
    n: int = 100,
    *,
    sampling: str = "uniform",
    exponent: float = 1.0,
    shape: str = "per-item",
    seed: int = 0,
) -> Candidates:
    """Draw ``n`` negatives per test item (``per-item``) or per test user (``per-user``), once.

    Parameters
    ----------
    train, test
        A split over one id space; negatives exclude each user's training and test items.
    n
        Negatives per row (NCF and most papers: 100 or 99).
    sampling
        ``uniform`` or ``popularity`` (probability ∝ training count ``** exponent``; items
        never rated in training are never drawn).
    exponent
        Popularity's exponent, at least 0 (ignored for ``uniform``).
    shape
        ``per-item`` or ``per-user`` (:data:`receval.vocabulary.SAMPLE_SHAPES`).
    seed
        The seed; the same seed and data give the same negatives.

    Returns
    -------
    Candidates
        Rows sorted by user (then held-out item), negatives in drawn order.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=30, n_items=60, n_ratings=300, seed=1)
    >>> from receval.split import per_user_holdout
    >>> train, test = per_user_holdout(data, seed=1)
    >>> a = draw_candidates(train, test, n=10, sampling="popularity", seed=3)
    >>> b = draw_candidates(train, test, n=10, sampling="popularity", seed=3)
    >>> bool((a.negatives == b.negatives).all()), a.design["sampling"], a.negatives.shape[1]
    (True, 'popularity', 10)
    """
    n = check_count(n, "n")
    sampling = sampled_word("sampling", sampling, SAMPLING_SCHEMES)
    shape = sampled_word("shape", shape, SAMPLE_SHAPES)
    exponent = check_number(exponent, "exponent", minimum=0)
    seed = check_seed(seed)
    n_items = _same_space(train, test)
    excluded = _excluded(train, test, n_items)
    pairs = distinct(pair_keys(test.users, test.items, n_items))
    if shape != "per-user":  # per-item and recbole: a sample per held-out item (recbole pools them when ranking)
        users, items = (pairs // n_items).astype(np.int32), (pairs % n_items).astype(np.int32)
    else:
        users, items = np.unique(test.users).astype(np.int32), None
    if sampling == "uniform":
        weights = np.ones(n_items)
    else:
        weights = np.bincount(train.items, minlength=n_items).astype(np.float64) ** exponent
        weights[np.bincount(train.items, minlength=n_items) == 0] = 0.0
    _check_available(users, excluded, weights, n, test)
    negatives = _draw(users, excluded, weights, n, np.random.default_rng(seed))
    design = {"sampling": sampling, "n": n, "exponent": exponent if sampling == "popularity" else 0.0,
              "seed": seed, "shape": shape, "exclude": "train+test"}  # fmt: skip
    return Candidates(users, items, negatives, design, test.user_ids, test.item_ids)


def _same_space(train: Interactions, test: Interactions) -> int:
    if (
        len(train.item_ids) != len(test.item_ids)
        or len(train.user_ids) != len(test.user_ids)
        or not (np.array_equal(train.item_ids, test.item_ids) and np.array_equal(train.user_ids, test.user_ids))
    ):
        raise DataError("train and test are not over one id space; split one data set (receval.split)")
    return len(test.item_ids)


def _excluded(train: Interactions, test: Interactions, n_items: int) -> sp.csr_matrix:
    users = np.concatenate([train.users, test.users])
    items = np.concatenate([train.items, test.items])
    m = sp.csr_matrix((np.ones(len(users), np.int8), (users, items)), shape=(len(test.user_ids), n_items))
    m.sum_duplicates()
    m.sort_indices()
    return m


def _check_available(
    users: np.ndarray, excluded: sp.csr_matrix, weights: np.ndarray, n: int, test: Interactions
) -> None:
    drawable = weights > 0
    rows = excluded[np.unique(users)]
    blocked = np.asarray(rows.multiply(drawable[None, :]).sum(axis=1)).ravel()
    available = int(drawable.sum()) - blocked
    short = np.flatnonzero(available < n)
    if short.size:
        user = np.unique(users)[short[0]]
        more = f" (and {short.size - 1} more users)" if short.size > 1 else ""
        what = "items" if drawable.all() else "items rated in training"
        raise ConfigError(
            f"user {shown_id(test.user_ids[user])} has {available[short[0]]} {what} outside their training and test "
            f"items to draw negatives from{more}; n={n} is larger: use a smaller n",
            parameters=["n"],
        )


def _draw(
    users: np.ndarray, excluded: sp.csr_matrix, weights: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    n_items = len(weights)
    cumulative = np.cumsum(weights)
    total = float(cumulative[-1])
    uniform = bool((weights == weights[0]).all())
    # the share of weight a row may draw from decides how many draws its round needs
    open_share = 1.0 - np.asarray(excluded.multiply(weights[None, :]).sum(axis=1)).ravel()[users] / total
    chosen = np.full((len(users), n), -1, dtype=np.int64)
    have = np.zeros(len(users), dtype=np.int64)
    for _ in range(_ROUNDS):
        short = np.flatnonzero(have < n)
        if short.size == 0:
            break
        want = float(np.max((n - have[short]) / np.maximum(open_share[short], 1e-9)))
        size = int(min(4 * n, math.ceil(want * 1.3) + 8))
        if uniform:
            draws = rng.integers(0, n_items, size=(short.size, size))
        else:
            draws = np.searchsorted(cumulative, rng.random((short.size, size)) * total, side="right")
            draws = np.minimum(draws, n_items - 1)
        merged = np.concatenate([chosen[short], draws], axis=1)
        keep = _fresh(merged) & ~_blocked(excluded, users[short], merged)
        slot = np.cumsum(keep, axis=1) - 1
        keep &= slot < n
        # earlier picks come first in a row, so the kept entries in order are its picks so far
        at, col = np.nonzero(keep)
        picked = np.full((short.size, n), -1, dtype=np.int64)
        picked[at, slot[at, col]] = merged[at, col]
        chosen[short], have[short] = picked, keep.sum(axis=1)
    for row in np.flatnonzero(have < n):
        chosen[row] = _draw_one(excluded, weights, int(users[row]), n, rng)
    return chosen.astype(np.int32)


def _fresh(rows: np.ndarray) -> np.ndarray:
    """Whether each entry is the first of its value in its row (and not the -1 of an empty slot)."""
    order = np.argsort(rows, axis=1, kind="stable")  # stable: of equal values the earliest comes first
    ordered = np.take_along_axis(rows, order, axis=1)
    later = np.zeros(rows.shape, dtype=bool)
    later[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
    fresh = np.empty(rows.shape, dtype=bool)
    np.put_along_axis(fresh, order, ~later, axis=1)
    return fresh & (rows >= 0)


def _blocked(excluded: sp.csr_matrix, users: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether each entry of ``rows`` (row i drawn for ``users[i]``) is one of that user's excluded items."""
    out = np.zeros(rows.shape, dtype=bool)
    n_items = excluded.shape[1]
    step = max(1, (1 << 24) // n_items)  # a dense bitmap of step x n_items booleans per chunk of rows
    for start in range(0, len(users), step):
        part = excluded[users[start : start + step]]
        bitmap = np.zeros(part.shape, dtype=bool)
        bitmap[np.repeat(np.arange(part.shape[0]), np.diff(part.indptr)), part.indices] = True
        chunk = rows[start : start + step]
        out[start : start + step] = bitmap[np.arange(part.shape[0])[:, None], np.maximum(chunk, 0)]
    return out


def _keys(excluded: sp.csr_matrix, n_items: int) -> np.ndarray:
    rows = np.repeat(np.arange(excluded.shape[0], dtype=np.int64), np.diff(excluded.indptr))
    return rows * (n_items + 1) + excluded.indices  # sorted: CSR rows in order, indices sorted


def _member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    if len(sorted_keys) == 0:
        return np.zeros(keys.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[pos] == keys


def _draw_one(excluded: sp.csr_matrix, weights: np.ndarray, user: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """An exact weighted draw without replacement for one row (Gumbel top-n: successive sampling ∝ weights)."""
    allowed = weights > 0
    allowed[excluded.indices[excluded.indptr[user] : excluded.indptr[user + 1]]] = False
    items = np.flatnonzero(allowed)
    keys = np.log(weights[items]) + rng.gumbel(size=items.size)
    return items[np.argsort(-keys, kind="stable")[:n]]


# ----------------------------------------------------------------------------- checking
def check_candidates(
    candidates: Candidates,
    train: Interactions,
    test: Interactions,
    *,
    where: str,
    lines: np.ndarray | None = None,
) -> None:
    """Refuse candidates that do not fit the split: unknown indices, a negative that is a positive or training item.

    Parameters
    ----------
    candidates
        The candidate rows (drawn, or read from a file).
    train, test
        The split they are for.
    where
        Where the candidates come from, for the message (a file name).
    lines
        The line of ``where`` each candidate row was read from; without it, rows are counted from 1.

    Returns
    -------
    None
        Or a one-line :class:`~receval.errors.DataError` naming ``where``, the line, the user and the item.

    Examples
    --------
    >>> data = Interactions.from_arrays(["u", "u", "u"], ["a", "b", "c"], [1, 1, 1])
    >>> train, test = data.subset(np.array([1, 0, 0], bool)), data.subset(np.array([0, 1, 0], bool))
    >>> check_candidates(Candidates([0], [1], [[2]]), train, test, where="x.test.negative")
    >>> check_candidates(Candidates([0], [1], [[0]]), train, test, where="x.test.negative")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: x.test.negative, line 1: negative 'a' of user 'u' is one of the user's training items; ...
    """
    n_items = _same_space(train, test)
    line_of = (lambda row: int(lines[row])) if lines is not None else (lambda row: row + 1)
    c = candidates
    for label, values, bound in (("user", c.users[:, None], len(test.user_ids)), ("negative", c.negatives, n_items),
                                 ("item", None if c.items is None else c.items[:, None], n_items)):  # fmt: skip
        if values is not None and ((values < 0) | (values >= bound)).any():
            row = int(np.flatnonzero(((values < 0) | (values >= bound)).any(axis=1))[0])
            raise DataError(f"{label} index outside the data's {bound} ids; use ids of the data", path=where,
                            line=line_of(row))  # fmt: skip
    _check_distinct(c, test, where, line_of)
    row_keys = c.users.astype(np.int64)[:, None] * (n_items + 1)
    for label, data in (("training", train), ("test", test)):
        rated = _keys(_excluded(data, data.subset(np.zeros(data.n_ratings, bool)), n_items), n_items)
        hits = _member(rated, row_keys + c.negatives)
        if hits.any():
            row, col = (int(x[0]) for x in np.nonzero(hits))
            raise DataError(
                f"negative {shown_id(test.item_ids[c.negatives[row, col]])} of user "
                f"{shown_id(test.user_ids[c.users[row]])} is one "
                f"of the user's {label} items; a negative must be an item the user has not rated",
                path=where,
                line=line_of(row),
            )
    if c.items is not None:
        held = _member(_keys(_excluded(test, test.subset(np.zeros(test.n_ratings, bool)), n_items), n_items),
                       row_keys[:, 0] + c.items)  # fmt: skip
        if not held.all():
            row = int(np.flatnonzero(~held)[0])
            raise DataError(
                f"item {shown_id(test.item_ids[c.items[row]])} is not a test item of user "
                f"{shown_id(test.user_ids[c.users[row]])}; "
                "a candidate row ranks one of the user's held-out items",
                path=where,
                line=line_of(row),
            )


def _check_distinct(c: Candidates, test: Interactions, where: str, line_of: Any) -> None:
    """No negative twice in a row, no row (user and held-out item; user for ``per-user``) twice: either would
    count an item twice in the ranks and change the value."""
    ordered = np.sort(c.negatives, axis=1)
    twice = ordered[:, 1:] == ordered[:, :-1]
    if twice.any():
        row, col = (int(x[0]) for x in np.nonzero(twice))
        raise DataError(
            f"negative {shown_id(test.item_ids[ordered[row, col]])} is listed twice for user "
            f"{shown_id(test.user_ids[c.users[row]])}; each negative once (a repeat would be ranked twice)",
            path=where,
            line=line_of(row),
        )
    keys = c.users.astype(np.int64) * (len(test.item_ids) + 1) + (
        0 if c.items is None else c.items.astype(np.int64) + 1
    )
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if (counts > 1).any():
        earlier = int(first[np.flatnonzero(counts > 1)[0]])
        later = int(np.flatnonzero(keys == keys[earlier])[1])
        what = f"user {shown_id(test.user_ids[c.users[later]])}"
        if c.items is not None:
            what = f"the held-out item {shown_id(test.item_ids[c.items[later]])} of {what}"
        raise DataError(
            f"{what} is listed again (first at line {line_of(earlier)}); list each once (a repeat counts twice)",
            path=where,
            line=line_of(later),
        )
