"""Arrow columns as numpy arrays without pandas.

pyarrow's own ``to_numpy`` goes through its pandas conversion layer, which imports
pandas (as costly to import as parsing a mid-sized file) the first time any array is converted, even to
numpy. These helpers read the Arrow buffers directly: fixed-width numbers as a
view of the data buffer (a copy only to mark nulls), text through Python strings.
The evaluation path (:func:`receval.data.tables.read_table` with ``arrow=True``,
then :func:`receval.evaluate`) uses them so that it never imports pandas.

>>> import pyarrow as pa
>>> numbers(pa.chunked_array([pa.array([1.5, None]), pa.array([3.0])])).tolist()
[1.5, nan, 3.0]
>>> numbers(pa.array([4, 5], type=pa.int32())).dtype
dtype('int32')
>>> text(pa.array(["a", None, "b"])).tolist()
['a', None, 'b']
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "FLAT_TYPES",
    "dictionary",
    "holding_byte",
    "is_flat",
    "is_numeric",
    "is_text",
    "last_bytes",
    "numbers",
    "text",
]

# the kinds of column a reader takes, by the pyarrow.types test of each (lists, structs, maps, binary are not)
_FLAT = {
    "integers": ("is_integer",),
    "floats": ("is_floating",),
    "decimals": ("is_decimal",),
    "text": ("is_string", "is_large_string", "is_string_view"),
    "dates": ("is_date",),
    "timestamps": ("is_timestamp",),
}
FLAT_TYPES = ", ".join(list(_FLAT)[:-1]) + " or " + list(_FLAT)[-1]
"""The kinds of Arrow column receval reads, as messages name them."""


def is_numeric(column: Any) -> bool:
    """Whether an Arrow array or chunked array holds integers or floats."""
    import pyarrow as pa

    return bool(pa.types.is_integer(column.type) or pa.types.is_floating(column.type))


def is_text(kind: Any) -> bool:
    """Whether an Arrow type is text whose buffers :func:`holding_byte` and :func:`last_bytes` read.

    >>> import pyarrow as pa
    >>> is_text(pa.string()), is_text(pa.large_string()), is_text(pa.int64())
    (True, True, False)
    """
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def holding_byte(values: Any, byte: int) -> np.ndarray:
    """Which entries of an Arrow text array hold the byte ``byte`` (a null entry holds nothing), as a bool array.

    One comparison over the array's data buffer, each hit placed in its entry by the
    offsets: no Python string per entry (millions of distinct ids in milliseconds). A NUL
    or any ASCII byte is found exactly as Python's ``in`` finds the character: in UTF-8 no
    other character holds such a byte.

    >>> import pyarrow as pa
    >>> holding_byte(pa.array(["a\\x00b", "ab", None, ""]), 0).tolist()
    [True, False, False, False]
    """
    starts, ends, data, valid = _text_buffers(values)
    out = np.zeros(len(starts), dtype=bool)
    if len(starts) and ends[-1] > starts[0]:
        at = np.flatnonzero(data[starts[0] : ends[-1]] == byte) + starts[0]
        out[np.searchsorted(ends, at, side="right")] = True  # the entry whose bytes end after the hit
    return out & valid


def last_bytes(values: Any) -> np.ndarray:
    """The last byte of each entry of an Arrow text array (int16), -1 for an empty or null entry.

    >>> import pyarrow as pa
    >>> last_bytes(pa.array(["ab", "", None, "é"])).tolist()
    [98, -1, -1, 169]
    """
    starts, ends, data, valid = _text_buffers(values)
    out = np.full(len(starts), -1, dtype=np.int16)
    filled = valid & (ends > starts)
    out[filled] = data[ends[filled] - 1]
    return out


def _text_buffers(values: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, end) byte offsets of each entry of a string or large_string Arrow array, its data and validity."""
    import pyarrow as pa

    validity, offsets, data = values.buffers()[:3]
    n, offset = len(values), values.offset
    kind = np.int64 if pa.types.is_large_string(values.type) else np.int32
    bounds = np.frombuffer(offsets, dtype=kind, count=n + 1 + offset)[offset:] if n else np.zeros(1, dtype=kind)
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None and n else np.zeros(0, dtype=np.uint8)
    valid = np.ones(n, dtype=bool)
    if values.null_count:
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[offset : offset + n] > 0
    return bounds[:-1], bounds[1:], raw, valid


def is_flat(kind: Any) -> bool:
    """Whether an Arrow type is one of :data:`FLAT_TYPES` (dictionary-encoded too; an all-null column as well).

    >>> import pyarrow as pa
    >>> is_flat(pa.dictionary(pa.int32(), pa.string())), is_flat(pa.list_(pa.string())), is_flat(pa.binary())
    (True, False, False)
    """
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return is_flat(kind.value_type)
    # getattr: is_string_view is newer than the oldest pyarrow receval supports
    tests = [getattr(pa.types, name, None) for names in _FLAT.values() for name in names]
    return bool(pa.types.is_null(kind) or any(test is not None and test(kind) for test in tests))


def numbers(column: Any) -> np.ndarray:
    """An integer or float Arrow column (chunked or not) as numpy; with nulls, float64 with NaN for them."""
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    dtype = _dtype(column.type)
    parts = [_chunk(chunk, dtype) for chunk in chunks]
    if any(part.dtype != dtype for part in parts):  # a chunk with nulls turned floating
        parts = [part.astype(np.float64) for part in parts]
    if not parts:
        return np.zeros(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def dictionary(column: Any) -> tuple[np.ndarray, Any]:
    """(int32 codes, Arrow dictionary) of a dictionary-encoded Arrow column, chunked or not; code -1 marks a null.

    Several chunks get one dictionary first (``unify_dictionaries``); the dictionary stays
    Arrow, so that a caller looks ids up or picks some of them without a Python object per
    id (a list over millions of items names most of them once).

    >>> import pyarrow as pa
    >>> codes, ids = dictionary(pa.chunked_array([pa.array(["b", "a"]).dictionary_encode(),
    ...                                          pa.array(["a", None]).dictionary_encode()]))
    >>> codes.tolist(), ids.to_pylist()
    ([0, 1, 1, -1], ['b', 'a'])
    """
    import pyarrow as pa

    chunks: list[Any] = [column]
    if isinstance(column, pa.ChunkedArray):  # several chunks: one dictionary for all first
        chunks = column.chunks if column.num_chunks <= 1 else column.unify_dictionaries().chunks
    values = chunks[0].dictionary if chunks else pa.array([], type=column.type.value_type)
    parts = [numbers(chunk.indices) for chunk in chunks]
    parts = [np.where(np.isnan(p), -1, p) if p.dtype.kind == "f" else p for p in parts]  # NaN: null, no id
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    return codes.astype(np.int32, copy=False), values  # one chunk: a view of its indices


def text(column: Any) -> np.ndarray:
    """An Arrow column as an object array of Python values (None where null)."""
    values = np.empty(len(column), dtype=object)
    values[:] = column.to_pylist()
    return values


def _dtype(kind: Any) -> np.dtype:
    import pyarrow as pa

    if pa.types.is_floating(kind):
        return np.dtype(f"float{kind.bit_width}")
    if pa.types.is_signed_integer(kind):
        return np.dtype(f"int{kind.bit_width}")
    if pa.types.is_unsigned_integer(kind):
        return np.dtype(f"uint{kind.bit_width}")
    raise TypeError(f"not a numeric Arrow type: {kind}")


def _chunk(chunk: Any, dtype: np.dtype) -> np.ndarray:
    validity, data = chunk.buffers()[:2]
    n, offset = len(chunk), chunk.offset
    values = np.frombuffer(data, dtype=dtype, count=n + offset)[offset:] if n else np.zeros(0, dtype=dtype)
    if not chunk.null_count:
        return values
    bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[offset : offset + n]
    out = values.astype(np.float64)
    out[bits == 0] = np.nan
    return out
