"""Recommendation ids looked up over their Arrow dictionary: the same indices and catalogue as the generic path.

:func:`receval.evaluation.align._lookup` finds an Arrow dictionary column of text ids in a space
of text ids by ``pyarrow.compute.index_in`` instead of :func:`receval.data.vocab.index_of` over the
dictionary's Python strings, past the size where ``index_of`` hashes through pandas (the tests
lower that size to reach the Arrow path with small data); :func:`~receval.evaluation.align._ids_of`
picks ids of an Arrow dictionary; :func:`receval.data._arrow.dictionary` is the Arrow half of
:func:`~receval.data.vocab.dictionary_codes`. Each is checked against the computation it replaces,
on text with NUL bytes, accents, blanks, nulls, several chunks and ids absent from the space.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data import _arrow, vocab
from receval.evaluation.align import _ids_of, _lookup

IDS = st.text(alphabet="ab\x00é1 ", min_size=0, max_size=3)


def _chunked(values: list[str | None], cut: int) -> pa.ChunkedArray:
    """``values`` dictionary-encoded in two chunks, each with its own dictionary (as pyarrow builds them)."""
    cut = min(cut, len(values))
    return pa.chunked_array(
        [pa.array(values[:cut], type=pa.string()).dictionary_encode(),
         pa.array(values[cut:], type=pa.string()).dictionary_encode()],
        type=pa.dictionary(pa.int32(), pa.string()),
    )  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.lists(IDS, max_size=30, unique=True),
    st.lists(st.one_of(st.none(), IDS), max_size=40),
    st.integers(0, 40),
    st.booleans(),
)
def test_lookup_equals_index_of(space_values, queries, cut, shuffled):
    space = np.array(sorted(space_values), dtype=object)
    if shuffled:  # a space in any order (the truth's ids are sorted, a catalogue need not be)
        space = space[::-1]
    column = _chunked(queries, cut)
    with mock.patch("receval.evaluation.align._TEXT_LOOKUP_MAX", 0):
        got = _lookup(space, column)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, vocab.index_of(space, column))
    # and what it means, without receval: each row's id found by Python's equality, -1 for none or null
    position = {value: j for j, value in enumerate(space.tolist())}
    assert got.tolist() == [-1 if q is None else position.get(q, -1) for q in queries]


def test_lookup_falls_back_where_arrow_cannot_hold_the_space():
    column = _chunked(["1", "b", "a\ud7ff"], 1)
    numbers = np.array([1, 2])  # numbers never equal text ids
    mixed = np.array(["b", 1], dtype=object)
    surrogate = np.array(["b", "x\ud800"], dtype=object)  # no UTF-8 form: Python compares it
    with mock.patch("receval.evaluation.align._TEXT_LOOKUP_MAX", 0):
        for space in (numbers, mixed, surrogate):
            np.testing.assert_array_equal(_lookup(space, column), vocab.index_of(space, column))
        assert _lookup(surrogate, column).tolist() == [-1, 0, -1]
        integer_column = pa.chunked_array([pa.array([7, 9, 7]).dictionary_encode()])
        assert _lookup(np.array([9, 8]), integer_column).tolist() == [-1, 0, -1]


def test_small_text_files_evaluate_without_pandas_or_compute_kernels(tmp_path: Path) -> None:
    """Below the size where ``index_of`` hashes through pandas, the lookup imports neither (both cost start-up)."""
    (tmp_path / "t.tsv").write_text("user\titem\trating\nu1\ti1\t4\nu2\ti2\t3\n")
    (tmp_path / "r.tsv").write_text("user\titem\tscore\nu1\ti1\t0.4\nu1\ti3\t0.3\nu2\ti2\t0.3\nu3\ti2\t0.1\n")
    code = (
        "import sys, warnings\n"
        "from receval.evaluation import evaluate\n"
        "from receval.data.tables import read_table\n"
        f"truth = read_table({str(tmp_path / 't.tsv')!r}, 'truth', arrow=True)\n"
        f"recs = read_table({str(tmp_path / 'r.tsv')!r}, 'recommendations', arrow=True)\n"
        "warnings.simplefilter('ignore')\n"
        "print(evaluate(recs, truth, ['ndcg@2', 'coverage@2']).summary)\n"
        "print(sorted(m for m in ('pandas', 'pyarrow.compute') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert "ndcg@2" in result.stdout
    assert result.stdout.split("\n")[-2] == "[]"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), IDS), min_size=1, max_size=30), st.integers(0, 30), st.data())
def test_ids_of_equals_the_decoded_dictionary(values, cut, data):
    column = _chunked(values, cut)
    codes, dictionary = _arrow.dictionary(column)
    decoded = vocab.dictionary_codes(column)  # the whole dictionary as Python strings
    assert decoded is not None
    old_codes, categories = decoded
    np.testing.assert_array_equal(codes, old_codes)
    assert dictionary.to_pylist() == categories.tolist()
    size = len(dictionary)  # 0 when every value is null
    positions = np.array(data.draw(st.lists(st.integers(0, max(size - 1, 0)), max_size=20 if size else 0)), dtype=int)
    picked = _ids_of(dictionary, positions)
    assert picked.dtype == categories.dtype
    assert picked.tolist() == categories[positions].tolist()
    assert [type(v) for v in picked] == [type(v) for v in categories[positions]]


def test_ids_of_integer_dictionary_keeps_numpy_integers():
    _, dictionary = _arrow.dictionary(pa.chunked_array([pa.array([30, 10, 30], type=pa.int64()).dictionary_encode()]))
    picked = _ids_of(dictionary, np.array([1, 0]))
    assert picked.dtype == np.int64 and picked.tolist() == [10, 30]
