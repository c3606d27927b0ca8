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

import contextlib
from typing import Any

import numpy as np

__all__ = [
    "FLAT_TYPES",
    "decoded",
    "dictionary",
    "ending_in",
    "holding_byte",
    "int32_array",
    "is_flat",
    "is_numeric",
    "is_text",
    "last_bytes",
    "numbers",
    "one_chunk",
    "text",
    "unified",
]

_ENCODED_FROM = 1 << 20  # dictionary entries of a chunked column; above, one hash pass over them beats Arrow's unifier
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
    segment = data[starts[0] : ends[-1]] if len(starts) else data[:0]
    # one pass without a copy first: the byte is outside the bytes' range (a NUL, below any other) in most columns
    if len(segment) and segment.min() <= byte <= segment.max():
        at = np.flatnonzero(segment == byte) + starts[0]
        out[np.searchsorted(ends, at, side="right")] = True  # the entry whose bytes end after the hit
    return out & valid


def last_bytes(values: Any) -> np.ndarray:
    """The last byte of each entry of an Arrow text array (int16), -1 for an empty or null entry.

    >>> import pyarrow as pa
    >>> last_bytes(pa.array(["ab", "", None, "é"])).tolist()
    [98, -1, -1, 169]
    """
    starts, ends, data, valid = _text_buffers(values)
    if not len(data):
        return np.full(len(starts), -1, dtype=np.int16)
    out = data[np.maximum(ends - 1, 0)].astype(np.int16)  # a gather over all: masks on millions of entries cost more
    unfilled = ends <= starts
    if values.null_count:
        unfilled |= ~valid
    if unfilled.any():
        out[unfilled] = -1
    return out


def ending_in(values: Any, table: np.ndarray) -> np.ndarray:
    """Whether the last byte ``b`` of each entry of an Arrow text array has ``table[b]`` (a bool table of 256), as a
    bool array; False for an empty or null entry.

    :func:`last_bytes` looked up in ``table`` in fewer passes: no 16-bit copy (5M rows of a run).

    >>> import pyarrow as pa
    >>> digits = np.zeros(256, dtype=bool); digits[48:58] = True
    >>> ending_in(pa.array(["a1", "", None, "b"]), digits).tolist()
    [True, False, False, False]
    """
    starts, ends, data, valid = _text_buffers(values)
    if not len(data) or not len(starts):
        return np.zeros(len(starts), dtype=bool)
    out = table[data[np.maximum(ends - 1, 0)]]
    if (ends - starts).min() <= 0:  # an empty (or null) entry's index reads another entry's byte
        out &= ends > starts
    if values.null_count:
        out &= valid
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

    Several chunks get one dictionary first (:func:`unified`: the dictionary and order
    Arrow's ``unify_dictionaries`` gives); the dictionary stays Arrow, so that a caller looks
    ids up or picks some of them without a Python object per id (a list over millions of
    items names most of them once).

    >>> import pyarrow as pa
    >>> codes, ids = dictionary(pa.chunked_array([pa.array(["b", "a"]).dictionary_encode(),
    ...                                          pa.array(["a", None]).dictionary_encode()]))
    >>> codes.tolist(), ids.to_pylist()
    ([0, 1, 1, -1], ['b', 'a'])
    """
    import pyarrow as pa

    chunks: list[Any] = [column]
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks > 1:  # several chunks: one dictionary for all, the codes mapped chunk by chunk
            return unified(column)
        chunks = column.chunks
    values = chunks[0].dictionary if chunks else pa.array([], type=column.type.value_type)
    parts = [numbers(chunk.indices) for chunk in chunks]
    parts = [np.where(np.isnan(p), -1, p) if p.dtype.kind == "f" else p for p in parts]  # NaN: null, no id
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    return codes.astype(np.int32, copy=False), values  # one chunk: a view of its indices


def unified(column: Any) -> tuple[np.ndarray, Any]:
    """(int32 codes, Arrow dictionary) of a dictionary-encoded chunked column whose chunks have their own dictionaries.

    The same dictionary, in the same order, and the same codes as Arrow's
    ``unify_dictionaries`` followed by a concatenation of the indices (each id where it
    first appears, chunk after chunk; code -1 marks a null), without their copies: Arrow
    unifies the chunks' dictionaries alone (a few entries a chunk), and each chunk's
    indices are mapped through its own map straight into the one output array. (Arrow writes
    every chunk's transposed indices, then the concatenation copies them again: 0.6 s
    and 240 MB more for a 30M-row TREC run read as ~1,000 blocks.) Chunks sharing one
    dictionary (an encoded chunked array) keep it as it is.

    >>> import pyarrow as pa
    >>> column = pa.chunked_array([pa.array(["b", "a"]).dictionary_encode(),
    ...                            pa.array(["c", None, "b"]).dictionary_encode()])
    >>> codes, ids = unified(column)
    >>> codes.tolist(), ids.to_pylist()
    ([0, 1, 2, -1, 0], ['b', 'a', 'c'])
    >>> fused = column.unify_dictionaries()
    >>> ids.equals(fused.chunk(0).dictionary)
    True
    """
    import pyarrow as pa

    chunks = column.chunks
    if not chunks:
        return np.zeros(0, dtype=np.int32), pa.array([], type=column.type.value_type)
    # the chunks of one Parquet row group share its dictionary: each distinct dictionary is unified once (39 chunks
    # of a 5M-row run name 5, whose 392,000 entries Arrow hashed over again)
    at_of: dict[tuple[Any, ...], int] = {}
    group: list[int] = []  # each chunk's dictionary among the distinct ones
    distinct: list[Any] = []
    for chunk in chunks:
        group.append(at_of.setdefault(_identity(chunk.dictionary), len(distinct)))
        if group[-1] == len(distinct):
            distinct.append(chunk.dictionary)
    first = distinct[0]
    maps: list[np.ndarray | None] = [None] * len(distinct)
    entries = sum(len(values) for values in distinct)
    if (
        entries > _ENCODED_FROM
        and not any(values.null_count for values in distinct)  # Arrow's unifier refuses them: so does this
        and len(distinct) > 1
    ):
        # many entries: Arrow's unifier takes seconds (4.3 s for 5M ids in 39 chunks), one hash pass over the
        # dictionaries laid end to end 1.2 s; the same ids in the same order (first appearance, chunk after chunk)
        import pyarrow.compute as pc

        with contextlib.suppress(pa.ArrowInvalid, pa.ArrowCapacityError):  # beyond 2 GiB of text: unified below
            encoded = pc.dictionary_encode(pa.concat_arrays(distinct))
            ends = np.cumsum([len(values) for values in distinct])
            flat = numbers(encoded.indices).astype(np.int32, copy=False)
            first, maps = encoded.dictionary, list(np.split(flat, ends[:-1]))
    if maps[0] is None and len(distinct) > 1:
        # Arrow unifies the dictionaries alone (each entry indexing itself): its transposed indices are the maps
        own = [pa.DictionaryArray.from_arrays(int32_array(np.arange(len(values), dtype=np.int32)), values)
               for values in distinct]  # fmt: skip
        fused = pa.chunked_array(own, type=pa.dictionary(pa.int32(), column.type.value_type)).unify_dictionaries()
        first = fused.chunk(0).dictionary
        maps = [numbers(chunk.indices) for chunk in fused.chunks]
    # in Arrow's memory pool, which keeps the pages of the chunks freed before (fresh pages cost a fault each)
    codes = np.frombuffer(pa.allocate_buffer(4 * len(column)), dtype=np.int32)
    at = 0
    for chunk, table in zip(chunks, (maps[j] for j in group), strict=True):
        part = codes[at : at + len(chunk)]
        indices = numbers(chunk.indices)
        if indices.dtype.kind == "f":  # nulls: NaN in the indices, no id
            valid = ~np.isnan(indices)
            part[:] = -1
            part[valid] = indices[valid] if table is None else table[indices[valid].astype(np.int64)]
        elif table is None:
            part[:] = indices
        else:
            np.take(table, indices, out=part)
        at += len(chunk)
    return codes, first


def int32_array(values: np.ndarray, valid: np.ndarray | None = None) -> Any:
    """An int32 numpy array as an Arrow array over the same memory (``valid``: False marks a null).

    (``pyarrow.array`` of a numpy array imports pandas, to ask whether it is a categorical.)

    >>> int32_array(np.array([3, -1], dtype=np.int32), np.array([True, False])).to_pylist()
    [3, None]
    """
    import pyarrow as pa

    bits = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.int32(), len(values), [bits, pa.py_buffer(values)])


def _identity(values: Any) -> tuple[Any, ...]:
    """An Arrow array's length, offset, type and buffer addresses: two arrays of one identity view the same memory
    (so hold the same values), known without comparing values.

    >>> import pyarrow as pa
    >>> a = pa.array(["x", "y"])
    >>> _identity(a) == _identity(a.slice(0)), _identity(a) == _identity(pa.array(["x", "y"]))
    (True, False)
    """
    return (
        len(values),
        values.offset,
        values.type,
        tuple(x.address if x is not None else None for x in values.buffers()),
    )


def decoded(column: Any) -> Any:
    """A dictionary-encoded chunked Arrow column as its plain values, chunk by chunk (no hash: a gather each).

    >>> import pyarrow as pa
    >>> decoded(pa.chunked_array([pa.array(["b", "a", "b"]).dictionary_encode()])).to_pylist()
    ['b', 'a', 'b']
    """
    import pyarrow as pa

    return pa.chunked_array([chunk.dictionary.take(chunk.indices) for chunk in column.chunks], column.type.value_type)


def one_chunk(held: list[Any]) -> Any:
    """The Arrow table taken out of ``held``, with each column in one chunk and one dictionary per dictionary column.

    The same table as ``table.unify_dictionaries().combine_chunks()`` (equal dictionaries,
    in the same order, and codes), its dictionary columns built by :func:`unified`, without
    Arrow's transposed copy of every chunk's indices. The table is taken out of the list
    (the caller keeps no reference) so that each column's chunks are freed as soon as the
    column is combined: the peak holds the table and one column's copy, not two tables.

    >>> import pyarrow as pa
    >>> t = pa.Table.from_batches([pa.record_batch({"u": pa.array(["x", "y"]).dictionary_encode(), "r": [1.0, 2.0]}),
    ...                            pa.record_batch({"u": pa.array(["y", "z"]).dictionary_encode(), "r": [3.0, 4.0]})])
    >>> one = one_chunk([t])
    >>> one.equals(t.unify_dictionaries().combine_chunks()), one["u"].num_chunks
    (True, 1)
    >>> one["u"].chunk(0).dictionary.to_pylist()
    ['x', 'y', 'z']
    """
    import pyarrow as pa

    table = held.pop()
    schema, columns = table.schema, table.columns
    del table  # the list below is the chunks' last holder
    combined_columns = []
    for j, field in enumerate(schema):
        column, columns[j] = columns[j], None
        if column.num_chunks > 1 and pa.types.is_dictionary(column.type):
            codes, values = unified(column)
            missing = codes < 0
            indices = int32_array(codes, ~missing if missing.any() else None)
            if indices.type != column.type.index_type:  # (a cast loads Arrow's compute kernels)
                indices = indices.cast(column.type.index_type)
            combined = pa.DictionaryArray.from_arrays(indices, values)
        else:  # a dictionary column of one chunk has its one dictionary already
            combined = column.combine_chunks()
        del column  # freed here: the peak holds one column twice, not the table
        # one table built at the end: set_column per column copies the column list, quadratic in the columns
        combined_columns.append(pa.chunked_array([combined], type=field.type))
    return pa.Table.from_arrays(combined_columns, schema=schema)


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
