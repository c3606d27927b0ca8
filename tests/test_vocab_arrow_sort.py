"""``vocab.encode`` of an Arrow dictionary of text ids sorted by Arrow, against the numpy sort it replaces.

Arrow orders text by its UTF-8 bytes; the ids (the same Python strings), the codes and the
errors (a missing id) must be those of the general path (:func:`receval.data.vocab._encode_dictionary`:
the ids as fixed-width numpy text, sorted, pandas' order when two of them tie), whatever the
ids: accents composed or not, NULs inside or at the end, empty text, entries of the dictionary
no row uses, a dictionary naming an id twice, several chunks.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data import vocab
from receval.errors import DataError

TEXT = st.sampled_from(["", "a", "b", "ab", "a\x00", "a\x00b", "\x00", "é", "e\u0301", "Z", "10", "9", "ß", "😀",
                        "x y"])  # fmt: skip


def _encoded(column: pa.ChunkedArray, arrow: bool) -> tuple[str, object]:
    with pytest.MonkeyPatch.context() as patch:
        if arrow:
            patch.setattr(vocab, "_ARROW_SORT_FROM", 0)
        else:
            patch.setattr(vocab, "_encode_arrow_text", lambda values, what: None)
        try:
            codes, ids = vocab.encode(column, what="item id")
        except DataError as error:
            return "error", str(error)
    assert codes.dtype == np.int32 and ids.dtype == object
    return "ok", (codes.tolist(), [(type(v), v) for v in ids.tolist()])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(TEXT, st.text(max_size=4)), min_size=1, max_size=12),
    st.lists(st.integers(-1, 11), min_size=1, max_size=30),
    st.integers(1, 3),
    st.booleans(),
)
def test_arrow_sort_gives_the_ids_codes_and_errors_of_the_numpy_sort(entries, rows, n_chunks, large):
    kind = pa.large_string() if large else pa.string()
    dictionary = pa.array(entries, type=kind)
    codes = [None if j < 0 else j % len(entries) for j in rows]
    cut = np.linspace(0, len(codes), n_chunks + 1).astype(int).tolist()
    chunks = [pa.DictionaryArray.from_arrays(pa.array(codes[a:b], pa.int32()), dictionary)
              for a, b in itertools.pairwise(cut)]  # fmt: skip
    column = pa.chunked_array(chunks, type=pa.dictionary(pa.int32(), kind))
    assert _encoded(column, arrow=True) == _encoded(column, arrow=False)


def test_a_small_dictionary_stays_with_numpy_unless_arrow_compute_is_loaded(monkeypatch):
    column = pa.chunked_array([pa.array(["b", "a"]).dictionary_encode()])
    monkeypatch.delitem(__import__("sys").modules, "pyarrow.compute", raising=False)
    assert vocab._encode_arrow_text(column, "id") is None
    monkeypatch.setattr(vocab, "_ARROW_SORT_FROM", 2)
    codes, ids = vocab._encode_arrow_text(column, "id")
    assert codes.tolist() == [1, 0] and ids.tolist() == ["a", "b"]
