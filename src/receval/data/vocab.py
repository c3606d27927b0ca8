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
lookup table — one gather, several times faster than hashing on 25M rows; text ids
through one sorted search of fixed-width numpy strings, and other ids through one
pandas hash table; there is no per-row Python. Ids read from a file arrive
dictionary-encoded (a pandas categorical or an Arrow dictionary column, as
:func:`receval.data.tables.read_table` gives them): each distinct id is looked up
once and the rows follow through their codes, without importing pandas for Arrow
columns of text.

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

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from receval._jit import COMPILED_FROM
from receval.data import _arrow
from receval.errors import DataError, shown_id

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["dictionary_codes", "encode", "extend", "index_of", "lookup", "mismatch", "same_numbers"]

_COMPILED_FROM = COMPILED_FROM  # rows; below, the lookup table is built with numpy
_dense_codes_kernel = None
_TEXT_LOOKUP_MAX = 1 << 20  # ids; above, pandas' hash table beats checking every id is text in Python
_ARROW_SORT_FROM = 1 << 17  # text ids of an Arrow dictionary; from here Arrow's sort saves more than its import costs


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
    if also is None:
        sorted_by_arrow = _encode_arrow_text(values, what)
        if sorted_by_arrow is not None:
            return sorted_by_arrow
        dictionary = dictionary_codes(values)
        if dictionary is not None:
            name = getattr(values, "name", None)
            return _encode_dictionary(*dictionary, what, name if isinstance(name, str) else None)
        if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and len(values):
            dense = _dense_int_codes(values)  # integer ids as a file of numbers gives them: no pandas
            if dense is not None:
                return dense
    import pandas as pd

    series = values if isinstance(values, pd.Series) else pd.Series(_as_array(values))
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
    dictionary = dictionary_codes(values)
    if dictionary is not None:  # ids read from a file: each distinct id looked up once, rows through their codes
        codes, categories = dictionary
        found = index_of(space, categories, coerce=coerce)
        return np.append(found, np.int32(-1))[codes]  # code -1 (no id) finds -1
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
    text_found = _index_of_text(space, values)
    if text_found is not None:
        return text_found
    import pandas as pd

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
        example = f", e.g. {shown_id(space[0])}" if len(space) else ""
        raise DataError(
            f"{what} id {shown_id(bad)} is not in the data's id space ({len(space)} ids{example})", path=path
        )
    return out


def mismatch(
    space: np.ndarray,
    values: Any,
    what: str,
    side: str = "recommendations",
    other: str = "truth",
    *,
    otherwise: str | None = None,
) -> str:
    """The message for ids of which none is in ``space``: an example of each side, and a type mismatch named.

    When the two sides hold the same numbers read two ways (:func:`same_numbers`) the
    message names the pair and the fix; otherwise it ends with ``otherwise`` (by
    default the question whether these are the other side's ids).

    >>> print(mismatch(np.array([1, 2]), np.array(["1", "7"], dtype=object), "user"))
    none of the user ids of the recommendations is in the truth (recommendations: '1', truth: 1): the same ids are \
text on one side and numbers on the other ('1' vs 1); read both the same way (as text: str ids)
    >>> print(mismatch(np.array(["a"], dtype=object), np.array(["b"], dtype=object), "item"))
    none of the item ids of the recommendations is in the truth (recommendations: 'b', truth: 'a'): are these the \
truth's item ids?
    """
    dictionary = dictionary_codes(values)
    given = dictionary[1] if dictionary is not None else _as_array(values)
    example = _plain(given[0]) if len(given) else None
    theirs = _plain(space[0]) if len(space) else None
    message = f"none of the {what} ids of the {side} is in the {other} ({side}: {example!r}, {other}: {theirs!r})"
    pair = same_numbers(space, given)
    if pair is None:
        return message + ": " + (otherwise or f"are these the {other}'s {what} ids?")
    mine, yours = pair
    if isinstance(mine, str) and isinstance(yours, str):
        return message + (
            f": the same numbers are written differently on the two sides ({mine!r} vs {yours!r}); "
            "write the ids the same way in both files"
        )
    return message + (
        f": the same ids are text on one side and numbers on the other ({mine!r} vs {yours!r}); "
        "read both the same way (as text: str ids)"
    )


def same_numbers(space: np.ndarray, values: Any) -> tuple[Any, Any] | None:
    """An id of ``values`` and an id of ``space`` that differ but read as the same number; None if no such pair.

    This is what a type mismatch looks like: ``'1'`` vs ``1`` (text on one side,
    numbers on the other) or ``'007'`` vs ``'7'`` (one number written two ways).

    >>> same_numbers(np.array([7, 8]), np.array(["007"], dtype=object))
    ('007', 7)
    >>> same_numbers(np.array(["x"], dtype=object), np.array(["y"], dtype=object)) is None
    True
    """
    dictionary = dictionary_codes(values)
    given = dictionary[1] if dictionary is not None else _as_array(values)
    space = _as_array(space)
    if not (len(given) and len(space)):
        return None
    mine, theirs = _as_numbers(given), _as_numbers(space)
    common = np.intersect1d(mine[np.isfinite(mine)], theirs[np.isfinite(theirs)])
    if not len(common):
        return None
    j = int(np.flatnonzero(np.isin(mine, common))[0])
    k = int(np.flatnonzero(theirs == mine[j])[0])
    return _plain(given[j]), _plain(space[k])


def _as_numbers(ids: np.ndarray) -> np.ndarray:
    """Ids as float64 numbers (NaN for an id that is not a number)."""
    if ids.dtype.kind in "iufb":
        return ids.astype(np.float64)
    import pandas as pd

    return pd.to_numeric(pd.Series(ids, dtype=object), errors="coerce").to_numpy(dtype=np.float64)


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
    if _is_arrow(values):  # without pyarrow's to_numpy, which imports pandas
        values = _arrow.numbers(values) if _arrow.is_numeric(values) else _arrow.text(values)
    elif hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):  # pandas Series/Index
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.dtype.kind in "UST":  # fixed-width numpy text: object, as every id space holds text
        arr = arr.astype(object)
    return arr


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _coerce(space: np.ndarray, values: np.ndarray) -> np.ndarray:
    if space.dtype.kind in "iuf" and values.dtype == object:
        import pandas as pd

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


def _is_arrow(values: object) -> bool:
    return type(values).__module__.startswith("pyarrow")


def dictionary_codes(values: object) -> tuple[np.ndarray, np.ndarray] | None:
    """(codes, categories) of a dictionary-encoded id column, else None; code -1 marks a missing id.

    Pandas categoricals (Series or Categorical) and Arrow dictionary arrays (chunked or
    not: their dictionaries are unified first) are recognised without importing either
    library when ``values`` is neither.

    >>> import pyarrow as pa
    >>> codes, cats = dictionary_codes(pa.chunked_array([pa.array(["b", "a"]).dictionary_encode(),
    ...                                                  pa.array(["a", None]).dictionary_encode()]))
    >>> codes.tolist(), cats.tolist()
    ([0, 1, 1, -1], ['b', 'a'])
    """
    if _is_arrow(values):
        import pyarrow as pa

        if not pa.types.is_dictionary(values.type):  # type: ignore[attr-defined]
            return None
        codes, dictionary = _arrow.dictionary(values)
        return codes, _as_array(dictionary)
    if "pandas" not in sys.modules:
        return None
    import pandas as pd

    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        cat = values.cat if isinstance(values, pd.Series) else values
        return np.asarray(cat.codes, dtype=np.int32), _as_array(cat.categories)  # type: ignore[union-attr]
    return None


def _encode_dictionary(
    codes: np.ndarray, categories: np.ndarray, what: str, column: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode` of dictionary-encoded ids: the used categories are sorted once, the rows remapped."""
    if (codes < 0).any():
        bad = int(np.flatnonzero(codes < 0)[0])
        raise DataError(f"row {bad} has no {what}", column=column)
    used = np.bincount(codes, minlength=len(categories)) > 0
    kept = categories[used]
    text = kept.astype(str) if kept.dtype == object and _all_text(kept) else None
    order = np.argsort(text, kind="stable") if text is not None else None
    if order is not None and not (text[order][1:] == text[order][:-1]).any():  # type: ignore[index]
        # text sorts as pandas.factorize(sort=True) sorts it (unless two ids differ only by trailing NULs)
        new_codes, ids = np.empty(len(kept), dtype=np.int32), kept[order]
        new_codes[order] = np.arange(len(kept), dtype=np.int32)
    else:
        import pandas as pd

        new_codes, ids = _codes(pd.Series(kept))
    table = np.full(len(categories), -1, dtype=np.int32)
    table[used] = new_codes
    return table[codes], ids


def _encode_arrow_text(values: object, what: str) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`encode` of an Arrow dictionary column of text, its used ids sorted by Arrow; None for any other column,
    a dictionary of fewer than :data:`_ARROW_SORT_FROM` ids while ``pyarrow.compute`` is not loaded, or one naming
    an id twice (:func:`_encode_dictionary` then, as before).

    Arrow compares text by its UTF-8 bytes, which order as Python orders the strings (code point by code point):
    the ids and codes of :func:`_encode_dictionary`, without each id made fixed-width numpy text and sorted so
    (0.15 of 0.2 s for 220,000 item ids). The ids are still made Python strings, once each.

    >>> import pyarrow as pa
    >>> codes, ids = _encode_arrow_text(pa.chunked_array([pa.array(["b", "é", "a", "b"]).dictionary_encode()]), "id")
    >>> codes.tolist(), ids.tolist()
    ([1, 2, 0, 1], ['a', 'b', 'é'])
    """
    if not _is_arrow(values):
        return None
    import pyarrow as pa

    kind = values.type  # type: ignore[attr-defined]
    if not (pa.types.is_dictionary(kind) and _arrow.is_text(kind.value_type)):
        return None
    codes, dictionary = _arrow.dictionary(values)
    if dictionary.null_count or (len(dictionary) < _ARROW_SORT_FROM and "pyarrow.compute" not in sys.modules):
        return None  # (the import of pyarrow.compute costs more than the sort of a small dictionary saves)
    if (codes < 0).any():
        bad = int(np.flatnonzero(codes < 0)[0])
        name = getattr(values, "name", None)
        raise DataError(f"row {bad} has no {what}", column=name if isinstance(name, str) else None)
    import pyarrow.compute as pc

    used = np.bincount(codes, minlength=len(dictionary)) > 0
    kept = dictionary if used.all() else dictionary.take(_arrow.int32_array(np.flatnonzero(used).astype(np.int32)))
    order = _arrow.numbers(pc.array_sort_indices(kept)).astype(np.int64, copy=False)
    ids = _arrow.text(kept.take(_arrow.int32_array(order.astype(np.int32))))
    if len(ids) > 1 and (ids[1:] == ids[:-1]).any():  # a dictionary naming an id twice: merged as before
        return None
    new_codes = np.empty(len(ids), dtype=np.int32)
    new_codes[order] = np.arange(len(ids), dtype=np.int32)
    table = np.full(len(dictionary), -1, dtype=np.int32)
    table[used] = new_codes
    return table[codes], ids


def _all_text(values: np.ndarray) -> bool:
    return set(map(type, values.tolist())) <= {str}  # (a generator over the array: 4x slower)


def _index_of_text(space: np.ndarray, values: np.ndarray) -> np.ndarray | None:
    """Positions of text ids in a space of text ids by one sorted search (None unless both are all text).

    Fixed-width numpy strings compare in C; two ids that would become equal there (a
    trailing NUL) send the lookup back to the hash table (None).
    """
    if space.dtype != object or values.dtype != object or max(len(space), len(values)) > _TEXT_LOOKUP_MAX:
        return None
    if not (_all_text(space) and _all_text(values)):
        return None
    text_space = space.astype(str)
    if (text_space[1:] > text_space[:-1]).all():  # an id space from encode() is sorted and unique already
        order, ordered = np.arange(len(space)), text_space
    else:
        order = np.argsort(text_space, kind="stable")
        ordered = text_space[order]
        if len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any():
            return None
    if not len(space):
        return np.full(len(values), -1, dtype=np.int32)
    text = values.astype(str)
    pos = np.minimum(np.searchsorted(ordered, text), len(ordered) - 1)
    found = ordered[pos] == text
    out = np.where(found, order[pos], -1).astype(np.int32)
    hit = np.flatnonzero(found)
    exact = space[out[hit]] == values[hit]  # as Python compares them (NUL-padded text differs)
    if not exact.all():
        return None
    return out


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """int32 codes into the sorted unique ids (the same result as ``pandas.factorize(sort=True)``)."""
    import pandas as pd

    if pd.api.types.is_integer_dtype(values.dtype) and len(values):
        dense = _dense_int_codes(values.to_numpy())
        if dense is not None:
            return dense
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # ids of mixed types (numbers and text) in one column: compare them as text
        codes, uniques = pd.factorize(values.astype(str).where(values.notna()), sort=True)
    uniques = np.asarray(uniques)
    if uniques.dtype.kind in "OUT":
        uniques = uniques.astype(object)
    return codes.astype(np.int32), uniques


def _dense_int_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_codes` of integer ids spanning a compact range, by a lookup table (None when the range is wide)."""
    ids = values.astype(np.int64, copy=False)
    low, high = int(ids.min()), int(ids.max())
    span = high - low + 1
    if span > max(len(ids), 1 << 20):  # the lookup table would be larger than the codes
        return None
    if len(ids) >= _COMPILED_FROM:
        codes, present = _dense_codes(ids, low, span)
        return codes, (np.flatnonzero(present) + low).astype(values.dtype)
    offsets = ids - low
    present = np.zeros(span, dtype=bool)
    present[offsets] = True
    table = (np.cumsum(present, dtype=np.int64) - 1).astype(np.int32)
    return table[offsets], (np.flatnonzero(present) + low).astype(values.dtype)


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
