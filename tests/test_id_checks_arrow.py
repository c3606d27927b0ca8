"""The reader's id checks (blank ids, NUL bytes) read from the Arrow dictionary: the same rows as decoding it.

:func:`receval.data.tables._missing_ids` and :func:`~receval.data.tables._nul_ids` look at an
Arrow dictionary of text through its buffers (:func:`receval.data._arrow.holding_byte`,
:func:`~receval.data._arrow.last_bytes`; was: every distinct id as a Python string). Both are
checked against that computation, written out here as it was, on ids of letters, digits,
Unicode white space, NUL bytes, nulls, blanks and several chunks.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data import _arrow, tables, vocab

# white space Python strips (\x1c, \x85, \xa0, \u3000 ...), NUL, ASCII and other letters, digits
ALPHABET = " \t\n\x0b\x1c\x1f\x85\xa0\u2028\u3000\x00aZ9é_"
IDS = st.text(alphabet=ALPHABET, max_size=4)


def _old(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(missing, NUL) rows as the reader computed them before: from the dictionary's Python strings."""
    decoded = vocab.dictionary_codes(column)
    assert decoded is not None
    codes, categories = decoded
    blank = np.char.strip(categories.astype(str)) == ""
    missing = (codes < 0) | (blank[codes] if blank.any() else False)
    nul = np.array(["\x00" in str(v) for v in categories.tolist()], dtype=bool)
    return missing, (nul[codes] & (codes >= 0) if nul.any() else np.zeros(len(codes), dtype=bool))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), IDS), min_size=1, max_size=30), st.integers(0, 30), st.booleans())
def test_id_checks_equal_decoding_the_dictionary(values, cut, large):
    kind = pa.large_string() if large else pa.string()
    column = pa.chunked_array(
        [pa.array(values[:cut], type=kind).dictionary_encode(), pa.array(values[cut:], type=kind).dictionary_encode()],
        type=pa.dictionary(pa.int32(), kind),
    )
    missing, nul = _old(column)
    np.testing.assert_array_equal(tables._missing_ids(column), missing)
    np.testing.assert_array_equal(tables._nul_ids(column), nul)
    # what the NUL rows mean, without numpy: an id holding the byte (numpy's strip also takes NUL for white space,
    # so blank ids keep its meaning, checked above)
    assert tables._nul_ids(column).tolist() == [v is not None and "\x00" in v for v in values]
    assert not tables._missing_ids(column)[[v is not None and any(c.isalnum() and c.isascii() for c in v)
                                            for v in values]].any()  # fmt: skip


@pytest.mark.parametrize(
    "values",
    [["a\x00", "", None, "\x00", "é", "x1", " \x00 "], ["\x00"], [None, None], [], ["é" * 3, "\x00" * 4]],
)
@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_byte_helpers_equal_python(values, kind):
    array = pa.array(values, type=kind)
    sliced = pa.array(["a\x00", "b", *values], type=kind).slice(2)  # an offset into offsets and validity
    for arrow in (array, sliced):
        assert _arrow.holding_byte(arrow, 0).tolist() == [v is not None and "\x00" in v for v in values]
        for byte in "ax1 ~":  # bytes inside the data's range, at its ends and outside it
            assert _arrow.holding_byte(arrow, ord(byte)).tolist() == [v is not None and byte in v for v in values]
        assert _arrow.last_bytes(arrow).tolist() == [v.encode()[-1] if v else -1 for v in values]
