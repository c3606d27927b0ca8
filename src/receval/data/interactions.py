"""`Interactions`: the one immutable data model every stage of receval shares.

Rows are (user, item, rating[, timestamp][, extra columns]) with users and items
stored as contiguous ``int32`` indices into ``user_ids`` / ``item_ids`` (the original
ids, for the way back). Repeated ratings of the same (user, item) pair are kept
(the magic barrier needs them); :meth:`Interactions.deduplicate` makes pairs unique
for the methods that need it. Splits and filters return objects over the *same* id
space, so indices from a training split are valid in its test split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.data import _arrow, vocab
from receval.errors import ConfigError, DataError, shown_id
from receval.validate import check_number

if TYPE_CHECKING:
    import pandas as pd
    import scipy.sparse as sp  # imported where a matrix is built: evaluating files never needs it

__all__ = ["Interactions", "RatingScale", "Relevance", "aspect_matrix", "distinct", "pair_keys", "relevant"]


_MASK_BLOCK = 1 << 18
"""Ratings :meth:`RatingScale.valid_mask` checks at a time."""


@dataclass(frozen=True)
class RatingScale:
    """The declared rating scale: ``low`` to ``high``, optionally in steps of ``step``.

    Examples
    --------
    >>> RatingScale(1, 5, 1).contains([1, 3, 5])
    True
    >>> RatingScale(1, 5, 1).contains([2.5])
    False
    >>> RatingScale(0.5, 5, 0.5).values().tolist()
    [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]
    >>> RatingScale(1, 5, 1.5).values().tolist()
    [1.0, 2.5, 4.0]
    """

    low: float
    high: float
    step: float | None = None

    def __post_init__(self) -> None:
        if not np.isfinite(self.low) or not np.isfinite(self.high) or self.low > self.high:
            raise DataError(
                f"rating scale {self.low}..{self.high} is not a valid range: "
                "give a finite minimum that is not above the maximum"
            )
        if self.step is not None and not self.step > 0:
            raise DataError(f"rating scale step {self.step} must be positive (or None for a continuous scale)")

    def contains(self, ratings: Sequence[float] | np.ndarray) -> bool:
        """Whether every rating lies on the scale (within float32 rounding)."""
        return bool(np.all(self.valid_mask(ratings)))

    def valid_mask(self, ratings: Sequence[float] | np.ndarray) -> np.ndarray:
        """Boolean mask of the ratings that lie on the scale.

        Blocks of :data:`_MASK_BLOCK` ratings at a time: the float64 temporaries of 5M ratings would add
        160 MB to the peak of reading them.

        >>> RatingScale(1, 5, 1).valid_mask(np.array([1, 2.5, 5, 6], dtype=np.float32)).tolist()
        [True, False, True, False]
        """
        values = np.asarray(ratings).ravel()  # sequences of ratings: one dimension
        tol = 1e-5 * max(1.0, abs(self.high))
        ok = np.empty(len(values), dtype=bool)
        for start in range(0, len(values), _MASK_BLOCK):
            r = values[start : start + _MASK_BLOCK].astype(np.float64)
            part = (r >= self.low - tol) & (r <= self.high + tol)
            if self.step is not None:
                k = (r - self.low) / self.step
                part &= np.abs(k - np.round(k)) <= 1e-4
            ok[start : start + _MASK_BLOCK] = part
        return ok

    def values(self) -> np.ndarray:
        """The discrete values of the scale (raises for a continuous scale)."""
        if self.step is None:
            raise DataError("a continuous rating scale has no finite list of values")
        n = int(np.floor((self.high - self.low) / self.step + 1e-9)) + 1
        return np.round(self.low + self.step * np.arange(n), 10)

    def default_threshold(self) -> float:
        """The relevance threshold λ used when none is given: 1, or the smallest positive value of the scale below 1.

        receval's one relevance policy (every command, study, protocol and the
        simulator read it here): a rating r is **relevant** (positive) when r ≥ λ
        (:func:`relevant`), and by default every positive grade is relevant. λ = 1 is
        trec_eval's and ranx's relevance level (a judged 0 is not relevant), the
        rating threshold Cornac applies, and on a 1–5 or 1–10 rating scale it makes
        every held-out rating relevant, as LensKit and RecBole count them. A scale of
        fractions (0.5–5, 0.1–0.9) keeps every positive rating relevant too: λ is its
        smallest positive value. A study of likes and dislikes (4 on 1–5, as the
        false-positive study) gives its λ explicitly. A continuous scale through 0 has
        no smallest positive value, and λ stays 1 (refused, when a metric uses it, if
        that is off the scale).

        >>> RatingScale(1, 5, 1).default_threshold(), RatingScale(0, 3, 1).default_threshold()
        (1.0, 1.0)
        >>> RatingScale(0.5, 5, 0.5).default_threshold(), RatingScale(0.1, 0.9, 0.1).default_threshold()
        (0.5, 0.1)
        >>> RatingScale(-0.3, 2, 0.1).default_threshold(), RatingScale(0.25, 0.8).default_threshold()
        (0.1, 0.25)
        """
        if self.low >= 1:
            return 1.0
        if self.low > 0:
            return float(self.low)
        if self.step is None:
            return 1.0
        first = round(self.low + self.step * (np.floor(-self.low / self.step + 1e-9) + 1), 10)
        return float(first) if first < 1 and first <= self.high else 1.0

    def relevance(self, threshold: float | None = None, negative_threshold: float | None = None) -> Relevance:
        """The relevance of this scale: the one place a missing λ (or negative λ) gets its default.

        ``threshold`` defaults to :meth:`default_threshold`; ``negative_threshold`` to the
        threshold (a rating is then either positive or negative, as in the thesis' Fallout).

        Returns
        -------
        Relevance
            The thresholds as floats, given or defaulted.

        Examples
        --------
        >>> RatingScale(1, 5, 1).relevance()
        Relevance(threshold=1.0, negative_threshold=1.0)
        >>> RatingScale(1, 5, 1).relevance(4, 3)
        Relevance(threshold=4.0, negative_threshold=3.0)
        >>> RatingScale(1, 5, 1).relevance("4")
        Traceback (most recent call last):
        ...
        receval.errors.ConfigError: threshold=4: give a finite number
        """
        lam = self.default_threshold() if threshold is None else check_number(threshold, "threshold")
        return Relevance(
            lam, lam if negative_threshold is None else check_number(negative_threshold, "negative_threshold")
        )

    @classmethod
    def infer(cls, ratings: np.ndarray) -> RatingScale:
        """Infer a scale from data: min..max, with a step when all values are on a grid.

        >>> RatingScale.infer(np.array([1.0, 2.0, 5.0]))
        RatingScale(low=1.0, high=5.0, step=1.0)
        >>> RatingScale.infer(np.array([0.5, 3.5, 5.0]))
        RatingScale(low=0.5, high=5.0, step=0.5)
        >>> RatingScale.infer(np.array([1.0, 3.2741]))
        RatingScale(low=1.0, high=3.2741, step=None)
        """
        r = np.asarray(ratings, dtype=np.float64)
        if r.size == 0:
            raise DataError("cannot infer a rating scale from no ratings; declare the scale")
        low, high = float(r.min()), float(r.max())
        step = None
        for candidate in (1.0, 0.5, 0.25, 0.1):
            k = (r - low) / candidate
            if np.all(np.abs(k - np.round(k)) <= 1e-4):
                step = candidate
                break
        return cls(round(low, 6), round(high, 6), step)


@dataclass(frozen=True)
class Relevance:
    """Which ratings count as positive and which as negative: r ≥ ``threshold`` is positive, r < ``negative_threshold``
    negative, and a rating in between (or an unrated item) neither.

    Make one with :meth:`RatingScale.relevance`, which fills in the defaults.

    Examples
    --------
    >>> Relevance(4.0, 3.0).positive(np.array([5.0, 3.5, 2.0])).tolist()
    [True, False, False]
    >>> Relevance(4.0, 3.0).negative(np.array([5.0, 3.5, 2.0])).tolist()
    [False, False, True]
    """

    threshold: float
    negative_threshold: float

    def positive(self, ratings: np.ndarray | Sequence[float] | float) -> np.ndarray:
        """Where the rating is relevant (:func:`relevant`)."""
        return relevant(ratings, self.threshold)

    def negative(self, ratings: np.ndarray | Sequence[float] | float) -> np.ndarray:
        """Where the rating is below the negative threshold (NaN, an unrated item, never is)."""
        return np.asarray(ratings) < self.negative_threshold


def relevant(ratings: np.ndarray | Sequence[float] | float, threshold: float) -> np.ndarray:
    """receval's relevance rule: a rating r is relevant when r ≥ ``threshold`` (NaN, an unrated item, never is).

    The default threshold of a scale is :meth:`RatingScale.default_threshold`.

    Returns
    -------
    numpy.ndarray of bool
        The shape of ``ratings``; True where the rating is at least ``threshold``.

    Examples
    --------
    >>> relevant(np.array([5.0, 3.0, np.nan]), 4).tolist()
    [True, False, False]
    """
    return np.asarray(ratings) >= threshold


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-d array: ``np.unique(values)`` by a sort and an adjacent-difference mask.

    numpy 2.4's ``np.unique`` hashes integer arrays before sorting; with millions of
    distinct values (the ``user * n_items + item`` keys of :func:`pair_keys`) that is
    more than ten times slower than one sort.

    Returns
    -------
    numpy.ndarray
        The distinct values, ascending, in ``values``' dtype.

    Examples
    --------
    >>> distinct(np.array([7, 3, 7, 1, 3])).tolist()
    [1, 3, 7]
    """
    ordered = np.sort(np.asarray(values).ravel())
    keep = np.empty(len(ordered), dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def pair_keys(users: np.ndarray, items: np.ndarray, n_items: int) -> np.ndarray:
    """One ``int64`` key per (user, item) index pair: ``user * n_items + item``, equal exactly when both are.

    Returns
    -------
    numpy.ndarray of int64
        One key per pair, in the order of ``users``.

    Examples
    --------
    >>> pair_keys(np.array([0, 1]), np.array([2, 0]), 3).tolist()
    [2, 3]
    """
    return np.asarray(users).astype(np.int64) * n_items + items


def _as_ids(values: object) -> np.ndarray:
    arr = np.asarray(values)
    return arr if arr.dtype != object else np.asarray(values, dtype=object)


def _float32_ratings(column: pd.Series, name: str) -> np.ndarray:
    """A frame's ratings as the float32 they are kept in; one that float32 cannot hold is a DataError naming its row.

    The same limits as the file reader's (``receval.data.tables``): not finite, too large (inf as float32) or too
    small (0 as float32); a complex rating would lose its imaginary part.
    """
    if column.dtype.kind == "c":
        raise DataError(f"ratings of dtype {column.dtype} are complex numbers; give real numbers", column=name)
    values = column.to_numpy(dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        kept = values.astype(np.float32)
    bad = ~np.isfinite(kept) | ((kept == 0) & (values != 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"rating {values[row]:g} of row {row} is not a finite 32-bit float (ratings are); give it on "
                        "a scale of ordinary numbers", column=name)  # fmt: skip
    return kept


def _frame_timestamps(column: pd.Series, name: str) -> np.ndarray:
    """A frame's timestamps as Unix seconds (int64), as the file reader gives them: dates (naive ones in UTC) to
    whole seconds, integers as they are; a missing one, or one int64 cannot hold, is a DataError naming its row."""
    import pandas as pd

    if isinstance(column.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(column):
        missing = column.isna().to_numpy()
        if missing.any():
            raise DataError(f"row {int(np.flatnonzero(missing)[0])} has no timestamp", column=name)
        utc = column.dt.tz_convert("UTC") if column.dt.tz is not None else column.dt.tz_localize("UTC")
        # the epoch in the dates' own unit (pandas keeps dates past 2262 in µs or s), then whole seconds
        return ((utc - pd.Timestamp(0, tz="UTC").as_unit(utc.dt.unit)) // pd.Timedelta(1, "s")).to_numpy(np.int64)
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.isna().any():
        bad = int(np.flatnonzero(numbers.isna().to_numpy())[0])
        raise DataError(f"timestamp {column.iloc[bad]!r} of row {bad} is not an integer", column=name)
    values = numbers.to_numpy()
    outside = np.zeros(len(values), dtype=bool)
    if values.dtype.kind == "f":  # the int64 cast would give -2^63 (inf, 1e30) silently
        with np.errstate(invalid="ignore"):
            outside = ~(np.abs(values) < 2.0**63)
    elif values.dtype.kind == "u":  # and wrap 2^64-1 to -1
        outside = values >= np.uint64(2**63)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise DataError(f"timestamp {float(values[row]):g} of row {row} is outside the 64-bit range of Unix seconds "
                        "(±9.2e18); give seconds (or a date) within it", column=name)  # fmt: skip
    return values.astype(np.int64)


@dataclass(frozen=True, eq=False)
class Interactions:
    """Ratings of items by users, with their original ids, scale and item aspects.

    Build one with :meth:`from_frame` or :meth:`from_arrays`; the constructor takes
    already-indexed arrays and validates them.

    Attributes
    ----------
    users, items : ndarray of int32
        Row-wise indices into ``user_ids`` / ``item_ids``.
    ratings : ndarray of float32
    user_ids, item_ids : ndarray
        Original ids; ``user_ids[users[j]]`` is the user of row ``j``. Every id in
        them is part of the id space even if it has no row (after a split).
    scale : RatingScale
    timestamps : ndarray of int64 or None
    aspects : scipy CSR matrix (n_items x n_aspects, float32 0/1) or None
    aspect_names : ndarray of str or None
    extra : mapping of column name to per-row ndarray (e.g. ``familiar``)
    name : str

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "rating": [5, 2, 4]})
    >>> data = Interactions.from_frame(df)
    >>> data.user_ids.tolist(), data.users.tolist(), data.scale
    (['a', 'b'], [0, 0, 1], RatingScale(low=2.0, high=5.0, step=1.0))
    >>> data.to_csr().toarray()
    array([[5., 2.],
           [0., 4.]], dtype=float32)
    """

    users: np.ndarray
    items: np.ndarray
    ratings: np.ndarray
    user_ids: np.ndarray
    item_ids: np.ndarray
    scale: RatingScale
    timestamps: np.ndarray | None = None
    aspects: sp.csr_matrix | None = None
    aspect_names: np.ndarray | None = None
    extra: Mapping[str, np.ndarray] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        n = len(self.ratings)
        for label, arr in (("users", self.users), ("items", self.items)):
            if len(arr) != n:
                raise DataError(f"{label} has {len(arr)} rows but ratings has {n}")
        if self.timestamps is not None and len(self.timestamps) != n:
            raise DataError(f"timestamps has {len(self.timestamps)} rows but ratings has {n}")
        for key, col in self.extra.items():
            if len(col) != n:
                raise DataError(f"extra column {key!r} has {len(col)} rows but ratings has {n}")
        object.__setattr__(self, "users", np.ascontiguousarray(self.users, dtype=np.int32))
        object.__setattr__(self, "items", np.ascontiguousarray(self.items, dtype=np.int32))
        object.__setattr__(self, "ratings", np.ascontiguousarray(self.ratings, dtype=np.float32))
        if self.timestamps is not None:
            object.__setattr__(self, "timestamps", np.ascontiguousarray(self.timestamps, dtype=np.int64))
        object.__setattr__(self, "user_ids", _as_ids(self.user_ids))
        object.__setattr__(self, "item_ids", _as_ids(self.item_ids))
        object.__setattr__(self, "extra", dict(self.extra))
        if n:
            if self.users.min() < 0 or self.users.max() >= len(self.user_ids):
                raise DataError("user indices fall outside user_ids")
            if self.items.min() < 0 or self.items.max() >= len(self.item_ids):
                raise DataError("item indices fall outside item_ids")
            if not np.all(np.isfinite(self.ratings)):
                bad = int(np.flatnonzero(~np.isfinite(self.ratings))[0])
                raise DataError(f"rating of row {bad} is not a finite number")
            ok = self.scale.valid_mask(self.ratings)
            if not ok.all():
                bad = int(np.flatnonzero(~ok)[0])
                raise DataError(
                    f"rating {self.ratings[bad]:g} of user {shown_id(self.user_ids[self.users[bad]])}, "
                    f"item {shown_id(self.item_ids[self.items[bad]])} is outside the declared scale "
                    f"{self.scale.low:g}..{self.scale.high:g}"
                    + (f" step {self.scale.step:g}" if self.scale.step else "")
                    + "; declare the right scale or fix the data"
                )
        if self.aspects is not None:
            import scipy.sparse as sp

            a = sp.csr_matrix(self.aspects, dtype=np.float32)
            if a.shape[0] != len(self.item_ids):
                raise DataError(f"aspect table has {a.shape[0]} rows but there are {len(self.item_ids)} items")
            names = (
                np.asarray([str(j) for j in range(a.shape[1])])
                if self.aspect_names is None
                else np.asarray(self.aspect_names)
            )
            if len(names) != a.shape[1]:
                raise DataError(f"{len(names)} aspect names for {a.shape[1]} aspect columns")
            object.__setattr__(self, "aspects", a)
            object.__setattr__(self, "aspect_names", names)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_arrays(
        cls,
        users: Sequence | np.ndarray,
        items: Sequence | np.ndarray,
        ratings: Sequence | np.ndarray,
        *,
        timestamps: Sequence | np.ndarray | None = None,
        scale: RatingScale | None = None,
        extra: Mapping[str, Sequence | np.ndarray] | None = None,
        name: str = "",
    ) -> Interactions:
        """Build from parallel arrays of original ids (factorised in sorted order).

        >>> d = Interactions.from_arrays([10, 10, 7], ["b", "a", "a"], [1, 2, 3])
        >>> d.user_ids.tolist(), d.item_ids.tolist(), d.users.tolist(), d.items.tolist()
        ([7, 10], ['a', 'b'], [1, 1, 0], [1, 0, 0])
        """
        import pandas as pd

        frame = pd.DataFrame({"user": users, "item": items, "rating": ratings})
        cols = {}
        if timestamps is not None:
            frame["timestamp"] = np.asarray(timestamps)
        for key, col in (extra or {}).items():
            frame[key] = np.asarray(col)
            cols[key] = key
        return cls.from_frame(
            frame,
            timestamp="timestamp" if timestamps is not None else None,
            extra=list(cols),
            scale=scale,
            name=name,
        )

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame | Any,
        *,
        user: str = "user",
        item: str = "item",
        rating: str | None = "rating",
        timestamp: str | None = None,
        extra: Sequence[str] = (),
        scale: RatingScale | None = None,
        item_aspects: pd.DataFrame | None = None,
        name: str = "",
    ) -> Interactions:
        """Build from a DataFrame with one row per rating.

        Parameters
        ----------
        frame
            The ratings: a pandas DataFrame, or a ``pyarrow.Table`` (as
            :func:`receval.data.tables.read_table` gives with ``arrow=True``: ids
            dictionary-encoded, numbers as numbers — read without pandas). Ids may be
            of any hashable scalar type (numbers, text, dates); a cell holding a list, tuple,
            dict or set is a DataError naming its row.
        user, item, rating, timestamp
            Column names. ``rating=None`` makes implicit data (every rating 1).
        extra
            Further per-row columns to keep (e.g. ``["familiar"]``).
        scale
            The declared scale; inferred from the data when omitted.
        item_aspects
            Optional frame with columns ``item`` and ``aspect`` (one row per pair);
            items it names that have no rating are added to the id space.
        """
        if not (_is_arrow_table(frame) or hasattr(frame, "columns")):  # a Series, a dict, None: an AttributeError
            raise DataError(f"from_frame reads a pandas DataFrame or a pyarrow Table, got {type(frame).__name__}")
        if scale is not None and not isinstance(scale, RatingScale):
            raise ConfigError(
                f"scale={scale!r} is not a RatingScale; give e.g. RatingScale(1, 5)", parameters=["scale"]
            )
        present = list(frame.column_names) if _is_arrow_table(frame) else list(frame.columns)
        twice = sorted(str(c) for c, n in Counter(present).items() if n > 1)  # not list.count: 1e5 columns
        if twice:  # frame[name] would be a table of them: pandas' 'Data must be 1-dimensional'
            raise DataError(f"the frame has two or more columns named {', '.join(map(repr, twice))}; keep one of each")
        missing = [c for c in (user, item, rating, timestamp, *extra) if c is not None and c not in present]
        if missing:
            raise DataError(f"missing column(s) {missing}; the frame has {present}", column=missing[0])
        for column, what in ((user, "user"), (item, "item")):
            _check_scalar_ids(frame, column, what)
        if _is_arrow_table(frame):
            return cls._from_arrow(frame, user, item, rating, timestamp, extra, scale, item_aspects, name)
        import pandas as pd

        if rating is None:
            ratings = np.ones(len(frame), dtype=np.float32)
        else:
            col = frame[rating]
            if not pd.api.types.is_numeric_dtype(col):
                num = pd.to_numeric(col, errors="coerce")
                rows = np.flatnonzero(num.isna().to_numpy() & col.notna().to_numpy())
                if len(rows):
                    raise DataError(f"rating {col.iloc[rows[0]]!r} of row {rows[0]} is not a number", column=rating)
                col = num
            if col.isna().any():
                bad = int(np.flatnonzero(col.isna().to_numpy())[0])
                raise DataError(f"row {bad} has no rating", column=rating)
            ratings = _float32_ratings(col, rating)
        ts = None
        if timestamp is not None:
            ts = _frame_timestamps(frame[timestamp], timestamp)
        return cls.from_ids(
            frame[user], frame[item], ratings, scale=scale, timestamps=ts,
            extra={k: frame[k].to_numpy() for k in extra}, item_aspects=item_aspects, name=name,
        )  # fmt: skip

    @classmethod
    def from_ids(
        cls,
        users: Any,
        items: Any,
        ratings: np.ndarray,
        *,
        scale: RatingScale | None = None,
        timestamps: np.ndarray | None = None,
        extra: Mapping[str, np.ndarray] | None = None,
        item_aspects: pd.DataFrame | None = None,
        name: str = "",
    ) -> Interactions:
        """Build from each row's original ids (numpy, pandas or Arrow columns) and numeric ratings.

        The ids are encoded in sorted order (:func:`receval.data.vocab.encode`; items an
        ``item_aspects`` table names join the id space); the scale is inferred from the
        ratings when not given. The readers that parse ratings themselves end here.

        >>> d = Interactions.from_ids(np.array([10, 10, 7]), np.array(["b", "a", "a"], dtype=object),
        ...                           np.array([1.0, 2.0, 3.0]))
        >>> d.user_ids.tolist(), d.items.tolist(), d.scale.step
        ([7, 10], [1, 0, 0], 1.0)
        """
        u_codes, u_ids = vocab.encode(users, what="user id")
        also = None if item_aspects is None else item_aspects["item"]
        i_codes, i_ids = vocab.encode(items, also=also, what="item id")
        aspects = names = None
        if item_aspects is not None:
            aspects, names = aspect_matrix(item_aspects, i_ids)
        return cls(
            users=u_codes,
            items=i_codes,
            ratings=ratings,
            user_ids=u_ids,
            item_ids=i_ids,
            scale=scale if scale is not None else RatingScale.infer(ratings),
            timestamps=timestamps,
            aspects=aspects,
            aspect_names=names,
            extra=extra or {},
            name=name,
        )

    @classmethod
    def _from_arrow(
        cls,
        table: Any,
        user: str,
        item: str,
        rating: str | None,
        timestamp: str | None,
        extra: Sequence[str],
        scale: RatingScale | None,
        item_aspects: pd.DataFrame | None,
        name: str,
    ) -> Interactions:
        """:meth:`from_frame` of an Arrow table whose numbers are numbers: ids through their dictionaries."""
        numeric = [c for c in (rating, timestamp, *extra) if c is not None]
        # text to convert, aspects to join: pandas' path names the bad row
        if item_aspects is not None or not all(_arrow.is_numeric(table[c]) for c in numeric):
            return cls.from_frame(
                table.to_pandas(), user=user, item=item, rating=rating, timestamp=timestamp, extra=extra,
                scale=scale, item_aspects=item_aspects, name=name,
            )  # fmt: skip
        values = {c: _arrow.numbers(table[c]) for c in numeric}
        for col, what in ((rating, "rating"), (timestamp, "timestamp")):
            if col is not None and table[col].null_count:
                bad = int(np.flatnonzero(np.isnan(values[col].astype(np.float64)))[0])
                raise DataError(f"row {bad} has no {what}", column=col)
        ratings = np.ones(table.num_rows, dtype=np.float32) if rating is None else values[rating].astype(np.float32)
        return cls.from_ids(
            table[user], table[item], ratings, scale=scale,
            timestamps=None if timestamp is None else values[timestamp].astype(np.int64),
            extra={k: values[k] for k in extra}, name=name,
        )  # fmt: skip

    # --------------------------------------------------------------- properties
    @property
    def n_users(self) -> int:
        """Size of the user id space (including users with no row here)."""
        return len(self.user_ids)

    @property
    def n_items(self) -> int:
        """Size of the item id space (including items with no row here)."""
        return len(self.item_ids)

    @property
    def n_ratings(self) -> int:
        return len(self.ratings)

    def __len__(self) -> int:
        return len(self.ratings)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return (
            f"<Interactions{label}: {self.n_ratings} ratings, {self.n_users} users, "
            f"{self.n_items} items, scale {self.scale.low:g}..{self.scale.high:g}>"
        )

    @property
    def has_duplicates(self) -> bool:
        """Whether some (user, item) pair is rated more than once."""
        return self.n_duplicates > 0

    @property
    def n_duplicates(self) -> int:
        """Rows beyond the first for each repeated (user, item) pair."""
        keys = pair_keys(self.users, self.items, self.n_items)
        return int(len(keys) - len(distinct(keys)))

    # ------------------------------------------------------------- conversions
    def to_frame(self, original_ids: bool = True) -> pd.DataFrame:
        """Rows as a DataFrame (``user``, ``item``, ``rating``[, ``timestamp``, extras])."""
        out = {
            "user": self.user_ids[self.users] if original_ids else self.users,
            "item": self.item_ids[self.items] if original_ids else self.items,
            "rating": self.ratings,
        }
        if self.timestamps is not None:
            out["timestamp"] = self.timestamps
        out.update(self.extra)
        import pandas as pd

        return pd.DataFrame(out)

    def to_csr(self, values: Literal["rating", "ones"] | np.ndarray = "rating") -> sp.csr_matrix:
        """A users x items CSR matrix (sorted indices) of ratings, ones, or given values.

        Raises :class:`DataError` when pairs repeat: call :meth:`deduplicate` first.
        """
        if self.has_duplicates:
            raise DataError(
                f"{self.n_duplicates} repeated (user, item) ratings; call .deduplicate('last' or 'mean') "
                "to choose one value per pair before building a matrix"
            )
        if isinstance(values, str):
            if values == "rating":
                data = self.ratings
            elif values == "ones":
                data = np.ones(self.n_ratings, dtype=np.float32)
            else:
                raise DataError(f"unknown values {values!r}; use 'rating', 'ones' or an array")
        else:
            data = np.asarray(values)
        import scipy.sparse as sp

        m = sp.csr_matrix((data, (self.users, self.items)), shape=(self.n_users, self.n_items))
        m.sort_indices()
        return m

    def positive_mask(self, threshold: float) -> np.ndarray:
        """Rows whose rating is at least ``threshold`` (relevant / positive)."""
        self._check_threshold(threshold)
        return relevant(self.ratings, threshold)

    def binarize(self, threshold: float) -> Interactions:
        """Ratings replaced by 1 (rating ≥ threshold) or 0 (below), on the scale 0..1.

        >>> d = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 2, 4])
        >>> d.binarize(4).ratings.tolist()
        [1.0, 0.0, 1.0]
        """
        pos = self.positive_mask(threshold)
        return replace(self, ratings=pos.astype(np.float32), scale=RatingScale(0, 1, 1))

    def _check_threshold(self, threshold: float) -> None:
        if not (self.scale.low <= threshold <= self.scale.high):
            raise DataError(
                f"threshold {threshold:g} is outside the rating scale {self.scale.low:g}..{self.scale.high:g}; "
                "pick a threshold on the scale"
            )

    # --------------------------------------------------------------- selection
    def subset(self, rows: np.ndarray) -> Interactions:
        """The rows selected by a boolean mask or index array, over the same id space."""
        rows = np.asarray(rows)
        if rows.dtype == bool and len(rows) != self.n_ratings:
            raise DataError(f"mask has {len(rows)} entries for {self.n_ratings} rows")
        return self._derive(
            users=self.users[rows],
            items=self.items[rows],
            ratings=self.ratings[rows],
            timestamps=None if self.timestamps is None else self.timestamps[rows],
            extra={k: v[rows] for k, v in self.extra.items()},
        )

    @classmethod
    def concat(cls, parts: Sequence[Interactions], *, name: str | None = None) -> Interactions:
        """The rows of every part, in order, over one id space.

        The parts share their id spaces, or extend them: each part's user ids (and
        item ids) are the first ids of the longest part's, as when profiles are
        injected into a data set (:mod:`receval.studies.attacks`) or revealed
        feedback joins the training data (cyclic simulation). The result takes the
        longest id spaces, the first part's scale (every rating must lie on it) and
        aspects (when they cover the result's items), timestamps when every part has
        them, and the extra columns every part has.

        >>> a = Interactions.from_arrays([1, 2], ["x", "y"], [4, 5])
        >>> b = a.subset(np.array([1]))
        >>> both = Interactions.concat([a, b])
        >>> both.n_ratings, both.n_duplicates, both.user_ids.tolist()
        (3, 1, [1, 2])
        """
        parts = list(parts)
        if not parts:
            raise DataError("nothing to concatenate: give at least one Interactions")
        first = parts[0]
        user_ids = max((p.user_ids for p in parts), key=len)
        item_ids = max((p.item_ids for p in parts), key=len)
        for j, p in enumerate(parts):
            for what, own, full in (("user", p.user_ids, user_ids), ("item", p.item_ids, item_ids)):
                if own is not full and not _is_prefix(own, full):
                    raise DataError(
                        f"part {j} has another {what} id space ({len(own)} ids) than the others ({len(full)}): "
                        "concatenate data split from the same Interactions, or rebuild them from frames"
                    )
            if j and p.scale != first.scale and not first.scale.contains(p.ratings):
                raise DataError(f"part {j} has ratings outside the first part's scale {first.scale}")
        timestamps = None
        if all(p.timestamps is not None for p in parts):
            timestamps = np.concatenate([p.timestamps for p in parts])
        keys = [k for k in first.extra if all(k in p.extra for p in parts)]
        aspects = first.aspects if first.aspects is None or first.aspects.shape[0] == len(item_ids) else None
        return first._derive(
            users=np.concatenate([p.users for p in parts]),
            items=np.concatenate([p.items for p in parts]),
            ratings=np.concatenate([p.ratings for p in parts]),
            user_ids=user_ids,
            item_ids=item_ids,
            timestamps=timestamps,
            extra={k: np.concatenate([p.extra[k] for p in parts]) for k in keys},
            aspects=aspects,
            aspect_names=None if aspects is None else first.aspect_names,
            name=first.name if name is None else name,
        )

    def _derive(self, **changes: object) -> Interactions:
        """A copy with some fields changed, skipping validation.

        Only for changes that keep every invariant (row selections of valid data):
        re-validating 25M rows for each split would dominate its cost.
        """
        new = object.__new__(Interactions)
        for f in fields(self):
            object.__setattr__(new, f.name, changes.get(f.name, getattr(self, f.name)))
        return new

    def deduplicate(self, keep: Literal["last", "first", "mean"] = "last") -> Interactions:
        """One row per (user, item) pair.

        ``last``/``first`` keep the latest/earliest row by timestamp (by row order when
        there are no timestamps); ``mean`` averages the ratings (timestamp: the latest;
        extra columns: of the last row), so the result may leave a discrete scale.

        >>> d = Interactions.from_arrays([0, 0, 0], [1, 1, 0], [2, 4, 3])
        >>> d.deduplicate("mean").to_frame().sort_values("item")["rating"].tolist()
        [3.0, 3.0]
        >>> d.deduplicate("first").to_frame().sort_values("item")["rating"].tolist()
        [3.0, 2.0]
        """
        if keep not in ("last", "first", "mean"):
            raise DataError(f"unknown keep={keep!r}; use 'last', 'first' or 'mean'")
        if not self.has_duplicates:
            return self
        keys = pair_keys(self.users, self.items, self.n_items)
        order_key = self.timestamps if self.timestamps is not None else np.arange(self.n_ratings)
        order = np.lexsort((np.arange(self.n_ratings), order_key, keys))
        sk = keys[order]
        starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
        ends = np.r_[starts[1:], len(sk)] - 1
        pick = order[starts if keep == "first" else ends]
        out = self.subset(np.sort(pick))
        if keep == "mean":
            sums = np.add.reduceat(self.ratings[order].astype(np.float64), starts)
            means = (sums / (ends - starts + 1)).astype(np.float32)
            sorted_pick = np.argsort(pick, kind="stable")
            scale = replace(self.scale, step=None)
            out = replace(out, ratings=means[sorted_pick], scale=scale)
        return out

    def with_aspects(self, table: pd.DataFrame) -> Interactions:
        """Attach an item→aspect table (columns ``item``, ``aspect``) by original item id.

        Items of the table not in this id space raise :class:`DataError`.
        """
        aspects, names = aspect_matrix(table, self.item_ids)
        return replace(self, aspects=aspects, aspect_names=names)

    # -------------------------------------------------------------- id mapping
    def user_index(self, ids: Sequence | np.ndarray, *, strict: bool = True) -> np.ndarray:
        """Indices of original user ids (−1 for unknown ones when ``strict=False``)."""
        return _lookup(self.user_ids, ids, "user", strict)

    def item_index(self, ids: Sequence | np.ndarray, *, strict: bool = True) -> np.ndarray:
        """Indices of original item ids (−1 for unknown ones when ``strict=False``)."""
        return _lookup(self.item_ids, ids, "item", strict)


_NOT_AN_ID = (list, tuple, dict, set, frozenset, np.ndarray)  # containers: several values in one cell


def _check_scalar_ids(frame: Any, column: str, what: str) -> None:
    """Refuse a column of ``frame`` whose cells hold lists, tuples, dicts or sets: each was kept as one id, its text.

    >>> import pandas as pd
    >>> _check_scalar_ids(pd.DataFrame({"user": [1, [2, 3]]}), "user", "user")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: column user: user id [2, 3] of row 1 is a list, not one id; give one id ...
    """
    if _is_arrow_table(frame):
        import pyarrow as pa

        values = frame[column]
        if not pa.types.is_nested(values.type):
            return
        valid = np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))
        row = int(valid[0]) if len(valid) else 0
        value = values[row].as_py()
    else:
        import pandas as pd

        values = frame[column]
        # the usual id columns (numbers, text) are told apart in C; only a mixed object column is looked at per cell
        if values.dtype != object or pd.api.types.infer_dtype(values, skipna=True) in ("string", "integer", "bytes"):
            return
        bad = np.flatnonzero(values.map(lambda v: isinstance(v, _NOT_AN_ID)).to_numpy(dtype=bool))
        if not len(bad):
            return
        row, value = int(bad[0]), values.iloc[int(bad[0])]
    raise DataError(f"{what} id {value!r} of row {row} is a {type(value).__name__}, not one id; give one id (a number "
                    f"or text) per row (frame.explode({column!r}) makes a row of each)", column=column)  # fmt: skip


def _is_arrow_table(frame: object) -> bool:
    return type(frame).__module__.startswith("pyarrow") and hasattr(frame, "column_names")


def _is_prefix(head: np.ndarray, full: np.ndarray) -> bool:
    return len(head) <= len(full) and bool(np.array_equal(head, full[: len(head)]))


def _lookup(space: np.ndarray, ids: Sequence | np.ndarray, what: str, strict: bool) -> np.ndarray:
    return vocab.lookup(space, ids, what) if strict else vocab.index_of(space, ids)


def aspect_matrix(
    table: pd.DataFrame, item_ids: np.ndarray, *, unknown: Literal["error", "drop"] = "error"
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Items × aspects 0/1 CSR over the id space ``item_ids`` from a table ``item, aspect``, and the aspect names.

    Aspect names are sorted; items of the table outside ``item_ids`` raise
    :class:`DataError` (``unknown="error"``) or are left out (``"drop"``).

    Returns
    -------
    tuple of (scipy.sparse.csr_matrix, numpy.ndarray)
        The ``len(item_ids)`` x aspects 0/1 matrix (rows in the order of ``item_ids``)
        and the sorted aspect names (its columns).

    Examples
    --------
    >>> import pandas as pd
    >>> m, names = aspect_matrix(pd.DataFrame({"item": [2, 1, 2], "aspect": ["b", "a", "a"]}), np.array([1, 2, 3]))
    >>> m.toarray().tolist(), names.tolist()
    ([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]], ['a', 'b'])
    """
    import pandas as pd
    import scipy.sparse as sp

    for col in ("item", "aspect"):
        if col not in table.columns:
            raise DataError(f"aspect table needs columns 'item' and 'aspect'; it has {list(table.columns)}", column=col)
    if unknown == "error":
        rows = vocab.lookup(item_ids, table["item"].to_numpy(), "item (in the aspect table)")
        aspects = table["aspect"]
    else:
        rows = vocab.index_of(item_ids, table["item"].to_numpy())
        keep = rows >= 0
        rows, aspects = rows[keep], table["aspect"][keep]
    codes, names = pd.factorize(aspects.astype(str), sort=True)
    m = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, codes)), shape=(len(item_ids), len(names)))
    m.sum_duplicates()
    m.data[:] = 1.0
    return m, np.asarray(names, dtype=object)
