"""The pandas-free evaluation path: Arrow tables from the reader straight to the metrics.

``read_table(..., arrow=True)`` must give the table the DataFrame path gives, and
``evaluate`` must give the same numbers from Arrow tables as from DataFrames — on
random runs (grouped or shuffled, unknown users and items, repeated users in two
blocks, ranks or scores) — and the Arrow → numpy helpers must read nulls, offsets
and chunks as pyarrow's own conversion does.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data import _arrow, vocab
from receval.data.tables import read_table
from receval.errors import DataError, MetricError
from receval.evaluation import evaluate, to_rankings

METRICS = ["ndcg@5", "precision@3", "recall@5", "map@5", "mrr", "hit_rate@2"]


# ---------------------------------------------------------------- Arrow -> numpy
@pytest.mark.parametrize(
    "array",
    [
        pa.array([1.5, None, -2.0, 7.25]),
        pa.array([1, 2, None, 4], type=pa.int64()),
        pa.array([3, 1, 2], type=pa.int16()),
        pa.array([9, 8, 7, 6, 5], type=pa.uint32()).slice(2, 2),  # an offset into the buffer
        pa.array([1.0, None, 3.0, None, 5.0]).slice(1, 3),  # offset and nulls: the validity bitmap is shifted
        pa.chunked_array([pa.array([1, 2], type=pa.int32()), pa.array([None, 4], type=pa.int32())]),
        pa.chunked_array([], type=pa.float64()),
    ],
)
def test_numbers_equal_pyarrow_conversion(array):
    got = _arrow.numbers(array)
    expected = array.to_numpy(zero_copy_only=False) if not isinstance(array, pa.ChunkedArray) else (
        np.concatenate([c.to_numpy(zero_copy_only=False) for c in array.chunks]) if array.num_chunks else
        np.zeros(0)
    )  # fmt: skip
    np.testing.assert_array_equal(got, np.asarray(expected, dtype=got.dtype))
    if array.null_count:
        assert got.dtype == np.float64 and np.isnan(got).sum() == array.null_count


def test_numbers_refuse_text():
    with pytest.raises(TypeError, match="not a numeric"):
        _arrow.numbers(pa.array(["1"]))


@given(st.lists(st.one_of(st.none(), st.text(max_size=4)), max_size=30))
def test_text_and_dictionary_codes_round_trip(values):
    column = pa.array(values, type=pa.string())
    assert _arrow.text(column).tolist() == values
    codes, categories = vocab.dictionary_codes(pa.chunked_array([column.dictionary_encode()]))
    decoded = [None if c < 0 else categories[c] for c in codes]
    assert decoded == values


# ---------------------------------------------------------------- the id vocabulary
@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="ab\x00é1 ", min_size=1, max_size=3), min_size=1, max_size=40),
    st.lists(st.text(alphabet="ab\x00é1 ", min_size=1, max_size=3), max_size=40),
)
def test_text_lookup_equals_the_hash_table(space_values, queries):
    space = np.array(sorted(set(space_values)), dtype=object)
    values = np.array(queries, dtype=object)
    expected = pd.Index(space).get_indexer(values)
    np.testing.assert_array_equal(vocab.index_of(space, values), expected)
    unsorted = space[::-1]  # a space not in sorted order takes the sorting path
    np.testing.assert_array_equal(vocab.index_of(unsorted, values), pd.Index(unsorted).get_indexer(values))
    # the same ids dictionary-encoded in Arrow, split over two chunks
    half = len(queries) // 2
    chunked = pa.chunked_array(
        [pa.array(queries[:half], type=pa.string()).dictionary_encode(),
         pa.array(queries[half:], type=pa.string()).dictionary_encode()],
        type=pa.dictionary(pa.int32(), pa.string()),
    )  # fmt: skip
    np.testing.assert_array_equal(vocab.index_of(space, chunked), expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\x00é1", min_size=1, max_size=3), min_size=1, max_size=40))
def test_encode_of_arrow_dictionary_equals_pandas(values):
    codes, ids = vocab.encode(pa.chunked_array([pa.array(values).dictionary_encode()]))
    expected_codes, expected_ids = pd.factorize(pd.Series(values, dtype=object), sort=True)
    assert ids.tolist() == list(expected_ids)
    np.testing.assert_array_equal(codes, expected_codes)


def test_missing_arrow_id_is_named_by_row():
    with pytest.raises(DataError, match="row 1 has no id"):
        vocab.encode(pa.chunked_array([pa.array(["a", None]).dictionary_encode()]))


# ---------------------------------------------------------------- the reader
TRUTH = {"user": ["1", "1", "22"], "item": ["a", "b", "a"], "rating": [5.0, 2.0, 4.0]}
RUN = {"user": ["1", "1", "22"], "item": ["b", "a", "c"], "score": [0.9, 0.1, 0.5]}


def _files(folder):
    """One table in every text format the reader knows, and the columns it holds, written out by hand."""
    (folder / "t.csv").write_text("user,item,rating\n1,a,5\n1,b,2\n22,a,4\n")
    (folder / "r.tsv").write_text("user\titem\tscore\n1\tb\t0.9\n1\ta\t0.1\n22\tc\t0.5\n")
    (folder / "r.trec").write_text("1 Q0 b 1 0.9 x\n1 Q0 a 2 0.1 x\n22 Q0 c 1 0.5 x\n")
    (folder / "r_spaces.trec").write_text("1  Q0 b 1 0.9 x\n1 Q0 a 2  0.1 x\n22 Q0 c 1 0.5 x\n")
    (folder / "t.qrels").write_text("1 0 a 5\n1 0 b 2\n22 0 a 4\n")
    (folder / "r.json").write_text(json.dumps({"1": {"b": 0.9, "a": 0.1}, "22": {"c": 0.5}}))
    (folder / "t.inter").write_text("user_id:token\titem_id:token\trating:float\n1\ta\t5\n1\tb\t2\n22\ta\t4\n")
    (folder / "u1.test").write_text("1\t6\t5\t887431973\n2\t9\t3\t887431974\n")
    pd.DataFrame({"user": ["1", "22"], "item": ["a", "b"], "rating": ["5", " 3"]}).to_parquet(folder / "t.parquet")
    return {
        "t.csv": TRUTH, "r.tsv": RUN, "r.trec": RUN, "r_spaces.trec": RUN, "t.qrels": TRUTH, "r.json": RUN,
        "t.inter": TRUTH, "t.parquet": {"user": ["1", "22"], "item": ["a", "b"], "rating": [5.0, 3.0]},
        "u1.test": {"user": ["1", "2"], "item": ["6", "9"], "rating": [5.0, 3.0], "timestamp": [887431973, 887431974]},
    }  # fmt: skip


def test_arrow_table_is_the_frame(tmp_path):
    for name, expected in _files(tmp_path).items():
        what = "recommendations" if name.startswith("r") else "truth"
        frame = read_table(tmp_path / name, what)
        table = read_table(tmp_path / name, what, arrow=True)
        assert isinstance(table, pa.Table), name
        assert table.to_pydict() == expected, name  # what the file holds, ids as text
        assert all(pa.types.is_dictionary(table[c].type) for c in ("user", "item")), name  # ids stay encoded
        pd.testing.assert_frame_equal(table.to_pandas(), frame, check_dtype=True, obj=name)


def test_arrow_reader_keeps_its_errors(tmp_path):
    (tmp_path / "t.tsv").write_text("user\titem\trating\n1\ta\t5\n1\ta\t4\n")
    with pytest.raises(DataError, match=r"line 3: user '1', item 'a' repeats line 2"):
        read_table(tmp_path / "t.tsv", "truth", unique=("user", "item"), arrow=True)
    (tmp_path / "r.tsv").write_text("user\titem\tscore\n1\ta\t0.5\n \tb\t0.4\n")
    with pytest.raises(DataError, match=r"line 3, column user: empty user id"):
        read_table(tmp_path / "r.tsv", "recommendations", arrow=True)
    (tmp_path / "p.parquet").write_bytes(b"")
    pd.DataFrame({"user": ["1"], "item": ["a"], "rating": ["high"]}).to_parquet(tmp_path / "p.parquet")
    with pytest.raises(DataError, match=r"row 1: rating 'high' is not a number"):
        read_table(tmp_path / "p.parquet", "truth", arrow=True)


# ---------------------------------------------------------------- evaluate: Arrow == DataFrame
@st.composite
def _runs(draw):
    n_users, n_items = draw(st.integers(1, 6)), draw(st.integers(1, 8))
    truth_pairs = draw(
        st.lists(st.tuples(st.integers(0, n_users - 1), st.integers(0, n_items - 1)), min_size=1, max_size=25,
                 unique=True)
    )  # fmt: skip
    grades = draw(st.lists(st.integers(1, 5), min_size=len(truth_pairs), max_size=len(truth_pairs)))
    truth = pd.DataFrame(  # user z (no list) spans the scale, so that any threshold is on it
        {"user": [f"u{u}" for u, _ in truth_pairs] + ["z", "z"],
         "item": [f"i{i}" for _, i in truth_pairs] + ["i0", "i1"], "rating": [*grades, 1, 5]}
    )  # fmt: skip
    # lists: users of the truth and one it lacks, items of the truth and unknown ones; scores may tie
    rows = draw(
        st.lists(st.tuples(st.integers(0, n_users), st.integers(0, n_items + 2), st.integers(0, 3)), min_size=1,
                 max_size=40, unique_by=lambda r: (r[0], r[1]))
    )  # fmt: skip
    if draw(st.booleans()):  # as tools write runs: user after user, each list ranked
        rows.sort(key=lambda r: (r[0], -r[2]))
    recs = pd.DataFrame(
        {"user": [f"u{u}" for u, _, _ in rows], "item": [f"i{i}" for _, i, _ in rows],
         "score": [float(s) for _, _, s in rows]}
    )  # fmt: skip
    return truth, recs


def _arrow_of(frame):
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for j, name in enumerate(table.column_names):
        if name in ("user", "item"):
            table = table.set_column(j, name, table.column(j).dictionary_encode())
    return table


def _outcome(recs, truth, empty_users):
    """The result, or the refusal (type and message), and the warnings on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = evaluate(recs, truth, METRICS, threshold=3, empty_users=empty_users)
        except (DataError, MetricError) as err:
            result = (type(err), str(err))
    return result, [str(w.message) for w in caught]


@settings(max_examples=150, deadline=None)
@given(_runs(), st.sampled_from(["skip", "zero"]), st.booleans())
def test_evaluate_arrow_equals_dataframe(run, empty_users, by_rank):
    truth, recs = run
    if by_rank:  # ranks 1.. within each user, in row order
        recs = recs.assign(rank=recs.groupby("user").cumcount() + 1.0).drop(columns="score")
    expected, expected_warnings = _outcome(recs, truth, empty_users)
    got, got_warnings = _outcome(_arrow_of(recs), _arrow_of(truth), empty_users)
    assert got_warnings == expected_warnings
    if isinstance(expected, tuple):  # both refuse, with one message
        assert got == expected
        return
    assert got.summary == pytest.approx(expected.summary, nan_ok=True, rel=0, abs=0)
    pd.testing.assert_frame_equal(got.per_user, expected.per_user)
    assert got.conventions == expected.conventions


def test_to_rankings_without_sorting_equals_sorted():
    """A grouped, ranked run is scattered from its blocks; the same rows shuffled are sorted first: one result."""
    rng = np.random.default_rng(0)
    users = np.repeat(rng.permutation(50), 7)
    items = rng.integers(0, 1000, len(users))
    scores = np.concatenate([np.sort(rng.random(7))[::-1] for _ in range(50)])
    grouped = to_rankings(users, items, scores, 60, 5, descending=True)
    shuffle = rng.permutation(len(users))
    assert np.array_equal(to_rankings(users[shuffle], items[shuffle], scores[shuffle], 60, 5, descending=True),
                          grouped)  # fmt: skip
    assert (grouped[np.setdiff1d(np.arange(60), users)] == -1).all()


def test_a_missing_score_is_named_by_position_in_both_kinds_of_table():
    truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "rating": [5, 2, 4]})
    recs = pd.DataFrame({"user": ["a", "b"], "item": ["y", "x"], "score": [0.9, np.nan]}, index=[10, 20])
    for table in (recs, _arrow_of(recs)):
        with pytest.raises(MetricError, match=r"score of user 'b', item 'x' \(row 1\) is missing"):
            evaluate(table, truth, "mrr", threshold=4)


def test_loading_number_ids_needs_neither_pandas_nor_compute_kernels(tmp_path):
    """The ratings of ``predict``/``recommend``: Arrow's CSV reader and numpy only (both cost more than the parse)."""
    import subprocess
    import sys

    path = tmp_path / "r.tsv"
    path.write_text("user\titem\trating\ttimestamp\n1\t10\t4\t881250949\n2\t10\t3\t881250950\n2\t30\t5\t881250951\n")
    code = (
        "import sys\n"
        "from receval.data import load\n"
        f"data = load({str(path)!r})\n"
        "assert data.user_ids.tolist() == [1, 2] and data.item_ids.tolist() == [10, 30], data\n"
        "assert data.timestamps.tolist() == [881250949, 881250950, 881250951]\n"
        "print(sorted(m for m in ('pandas', 'pyarrow.compute', 'pyarrow.csv') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert result.stdout.split("\n")[-2] == "['pyarrow.csv']"  # the reader did run
