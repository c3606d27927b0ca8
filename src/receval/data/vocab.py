"""The one id vocabulary: original user/item ids ↔ contiguous ``int32`` indices.

Every place that turns ids into indices goes through these functions:
:class:`~receval.data.interactions.Interactions` (building and ``user_index`` /
``item_index``), :func:`receval.evaluate` (recommendations, predictions, training
data and aspects over the truth's id space), the table readers, the attack study
and the command line. An id space is an array of unique ids; a row's index is its
id's position in that array.

Two rules hold everywhere:

- :func:`encode` gives *sorted* unique ids (the order of ``pandas.factorize(sort=True)``),
  so the same set of ids always gets the same indices, whatever the row order.
- :func:`index_of` compares ids by value and type: the text ``'1'`` is not the
  integer ``1``. Ids typed by a person (a command-line option, a text file read as
  text) are matched with ``coerce=True``, which reads them as the id space's kind.

Speed: integer ids spanning a compact range (every MovieLens release) go through a
lookup table — one gather, several times faster than hashing on 25M rows — and other
ids through one pandas hash table; there is no per-row Python.

Examples
--------
>>> codes, ids = encode(np.array(["b", "a", "b", "c"], dtype=object))
>>> codes.tolist(), ids.tolist()
([1, 0, 1, 2], ['a', 'b', 'c'])
>>> index_of(ids, np.array(["c", "z"], dtype=object)).tolist()
[2, -1]
>>> index_of(np.array([10, 20]), np.array(["20"], dtype=object)).tolist()
[-1]
>>> index_of(np.array([10, 20]), np.array(["20"], dtype=object), coerce=True).tolist()
[1]
>>> extend(np.array([10, 20]), np.array(["x"], dtype=object)).tolist()
[10, 20, 'x']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from receval.errors import DataError

__all__ = ["encode", "extend", "index_of", "lookup", "mismatch"]

_COMPILED_FROM = 1 << 20  # rows; below, numpy is as fast as the compiled loop and needs no compilation
_dense_codes_kernel = None


def encode(
    values: Sequence[Any] | np.ndarray | pd.Series,
    *,
    also: Sequence[Any] | np.ndarray | pd.Series | None = None,
    what: str = "id",
) -> tuple[np.ndarray, np.ndarray]:
    """``int32`` codes of ``values`` into their sorted unique ids, and those ids.

    ``also`` adds ids that have no row (e.g. items named only in an aspect table);
    they take their sorted place in the id space. Ids of mixed types (numbers and
    text in one column) are compared as text. A missing id (None, NaN) is a
    :class:`DataError` naming its row (0-based).

    >>> encode([30, 10, 30])[0].tolist(), encode([30, 10, 30])[1].tolist()
    ([1, 0, 1], [10, 30])
    >>> encode([3, 1], also=[2])[1].tolist()
    [1, 2, 3]
    """
    series = values if isinstance(values, pd.Series) else pd.Series(_as_array(values))
    if also is None and isinstance(series.dtype, pd.CategoricalDtype):
        return _encode_categorical(series, what)
    n = len(series)
    if also is not None:
        series = pd.concat([pd.Series(series.to_numpy()), pd.Series(_as_array(also))], ignore_index=True)
    codes, uniques = _codes(series)
    if (codes < 0).any():
        bad = int(np.flatnonzero(codes < 0)[0])
        raise DataError(f"row {bad} has no {what}", column=values.name if isinstance(values, pd.Series) else None)
    return codes[:n], uniques


def index_of(
    space: np.ndarray,
    values: Sequence[Any] | np.ndarray,
    *,
    coerce: bool = False,
) -> np.ndarray:
    """Positions (``int32``) of ``values`` in the id space ``space``; -1 where absent.

    ``coerce=True`` reads ids given as text as the space's kind first (``'7'``
    finds the integer id 7; numbers find text ids by their text form): for ids
    typed by a person, never for two data files, whose ids must agree as they are.

    >>> index_of(np.array([5, 7, 9]), np.array([9, 5, 6])).tolist()
    [2, 0, -1]
    """
    space = np.asarray(space)
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):  # ids read from a file: look up each once
        cat = pd.Categorical(values)
        found = index_of(space, _as_array(cat.categories), coerce=coerce)
        return np.where(cat.codes >= 0, found[cat.codes], -1).astype(np.int32)
    values = _as_array(values)
    if coerce:
        values = _coerce(space, values)
    if space.dtype.kind in "iu" and values.dtype.kind in "iu" and len(space) and len(values):
        low, high = int(space.min()), int(space.max())
        if 0 <= low and high <= max(10 * len(space), 1 << 20):  # dense table: one gather instead of hashing
            table = np.full(high + 1, -1, dtype=np.int32)
            table[space] = np.arange(len(space), dtype=np.int32)
            if 0 <= int(values.min()) and int(values.max()) <= high:
                return table[values]
            out = np.full(len(values), -1, dtype=np.int32)
            inside = (values >= 0) & (values <= high)
            out[inside] = table[values[inside]]
            return out
    if space.dtype == object and values.dtype != object:
        values = values.astype(object)
    try:
        return pd.Index(space).get_indexer(values).astype(np.int32)
    except (TypeError, ValueError):  # ids pandas cannot hash together: compare their text
        return pd.Index(space.astype(str)).get_indexer(values.astype(str)).astype(np.int32)


def lookup(
    space: np.ndarray,
    values: Sequence[Any] | np.ndarray,
    what: str,
    *,
    coerce: bool = False,
    path: object | None = None,
) -> np.ndarray:
    """Like :func:`index_of`, but an id absent from ``space`` is a :class:`DataError` naming it (and ``path``).

    >>> lookup(np.array(["a", "b"], dtype=object), ["b"], "item").tolist()
    [1]
    >>> lookup(np.array(["a", "b"], dtype=object), ["q"], "item")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: item id 'q' is not in the data's id space (2 ids, e.g. 'a')
    """
    values = _as_array(values)
    out = index_of(space, values, coerce=coerce)
    if (out < 0).any():
        bad = values[np.flatnonzero(out < 0)[0]]
        example = f", e.g. {_plain(space[0])!r}" if len(space) else ""
        raise DataError(
            f"{what} id {_plain(bad)!r} is not in the data's id space ({len(space)} ids{example})", path=path
        )
    return out


def mismatch(space: np.ndarray, values: Any, what: str, side: str = "recommendations", other: str = "truth") -> str:
    """The message for ids of which none is in ``space``: an example of each side, and a type mismatch named.

    >>> print(mismatch(np.array([1, 2]), np.array(["1", "7"], dtype=object), "user"))
    none of the user ids of the recommendations is in the truth (recommendations: '1', truth: 1): the same ids are \
text on one side and numbers on the other ('1' vs 1); read both the same way (as text: str ids)
    """
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        values = pd.Categorical(values).categories
    given = _as_array(values)
    example = _plain(given[0]) if len(given) else None
    theirs = _plain(space[0]) if len(space) else None
    message = f"none of the {what} ids of the {side} is in the {other} ({side}: {example!r}, {other}: {theirs!r})"
    found = index_of(space, given, coerce=True) if len(given) and len(space) else np.zeros(0, dtype=np.int32)
    if (found >= 0).any():
        j = int(np.flatnonzero(found >= 0)[0])
        message += (
            f": the same ids are text on one side and numbers on the other ({_plain(given[j])!r} vs "
            f"{_plain(space[found[j]])!r}); read both the same way (as text: str ids)"
        )
    else:
        message += f": are these the {other}'s {what} ids?"
    return message


def extend(space: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``space`` followed by the ``new`` ids, keeping a numeric dtype when both are numeric."""
    new = np.asarray(new)
    if not len(new):
        return space
    if space.dtype.kind in "iuf" and new.dtype.kind in "iuf":
        return np.concatenate([space, new])
    return np.concatenate([space.astype(object), new.astype(object)])


# ---------------------------------------------------------------------- helpers
def _as_array(values: Sequence[Any] | np.ndarray | pd.Series) -> np.ndarray:
    if isinstance(values, pd.Series | pd.Index):
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.dtype.kind in "UST":  # fixed-width numpy text: object, as every id space holds text
        arr = arr.astype(object)
    return arr


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _coerce(space: np.ndarray, values: np.ndarray) -> np.ndarray:
    if space.dtype.kind in "iuf" and values.dtype == object:
        num = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=np.float64)
        ok = np.isfinite(num)
        if space.dtype.kind in "iu":
            ok &= num == np.round(num)
        if ok.all():
            return num.astype(space.dtype)
        out = values.copy()  # what is not a number stays text, which no numeric id equals
        out[ok] = num[ok].astype(space.dtype)
        return out
    if space.dtype == object and values.dtype.kind in "iuf":
        return values.astype(str).astype(object)
    return values


def _encode_categorical(series: pd.Series, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a categorical column (ids read as a dictionary): the dictionary is sorted once, rows are remapped."""
    codes = np.asarray(series.cat.codes)
    if (codes < 0).any():
        bad = int(np.flatnonzero(codes < 0)[0])
        raise DataError(f"row {bad} has no {what}", column=series.name)
    categories = _as_array(series.cat.categories)
    used = np.bincount(codes, minlength=len(categories)) > 0
    new_codes, ids = _codes(pd.Series(categories[used]))
    table = np.full(len(categories), -1, dtype=np.int32)
    table[used] = new_codes
    return table[codes], ids


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """int32 codes into the sorted unique ids (the same result as ``pandas.factorize(sort=True)``)."""
    if pd.api.types.is_integer_dtype(values.dtype) and len(values):
        ids = values.to_numpy(dtype=np.int64)
        low, high = int(ids.min()), int(ids.max())
        span = high - low + 1
        if span <= max(len(ids), 1 << 20):  # the lookup table is no larger than the codes
            if len(ids) >= _COMPILED_FROM:
                codes, present = _dense_codes(ids, low, span)
                return codes, (np.flatnonzero(present) + low).astype(values.dtype)
            offsets = ids - low
            present = np.zeros(span, dtype=bool)
            present[offsets] = True
            table = (np.cumsum(present, dtype=np.int64) - 1).astype(np.int32)
            return table[offsets], (np.flatnonzero(present) + low).astype(values.dtype)
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # ids of mixed types (numbers and text) in one column: compare them as text
        codes, uniques = pd.factorize(values.astype(str).where(values.notna()), sort=True)
    uniques = np.asarray(uniques)
    if uniques.dtype.kind in "OUT":
        uniques = uniques.astype(object)
    return codes.astype(np.int32), uniques


def _dense_codes(ids: np.ndarray, low: int, span: int) -> tuple[np.ndarray, np.ndarray]:
    global _dense_codes_kernel
    if _dense_codes_kernel is None:
        import numba

        _dense_codes_kernel = numba.njit(cache=True, nogil=True)(_dense_codes_py)
    return _dense_codes_kernel(ids, low, span)


def _dense_codes_py(ids: np.ndarray, low: int, span: int) -> tuple[np.ndarray, np.ndarray]:
    present = np.zeros(span, dtype=np.bool_)
    for x in ids:
        present[x - low] = True
    table = np.empty(span, dtype=np.int32)
    count = 0
    for j in range(span):
        table[j] = count
        if present[j]:
            count += 1
    codes = np.empty(len(ids), dtype=np.int32)
    for k in range(len(ids)):
        codes[k] = table[ids[k] - low]
    return codes, present
