"""One chunk, one dictionary: :func:`receval.data._arrow.unified` and :func:`~receval.data._arrow.one_chunk`.

The reader used to merge every table with Arrow's ``unify_dictionaries().combine_chunks()``;
the chunk-wise mapping that replaces it must give the same table (the same dictionary, in
the same order, the same codes) on multi-chunk input: several record batches, dictionaries
that differ per chunk or are shared, blank, NUL and repeated ids, null ids, text and
integer dictionaries, empty chunks, sliced chunks. The old formulation is the reference.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval.data import _arrow
from receval.data.tables import read_located

IDS = st.one_of(
    st.sampled_from(["", " ", "\x00", "a\x00", "a", "b", "0286", "286", "é", "x y"]),
    st.text(max_size=4),
)


def _old(table: pa.Table) -> pa.Table:
    return table.unify_dictionaries().combine_chunks()


def _old_codes(column: pa.ChunkedArray) -> tuple[list[int], list[object]]:
    merged = column.unify_dictionaries().combine_chunks()
    codes = [-1 if v is None else v for v in merged.indices.to_pylist()]
    return codes, merged.dictionary.to_pylist()


def _chunked(chunks: list[list[object]], kind: pa.DataType) -> pa.ChunkedArray:
    arrays = [pa.array(values, type=kind).dictionary_encode() for values in chunks]
    return pa.chunked_array(arrays, type=pa.dictionary(pa.int32(), kind))


@pytest.fixture(params=["unifier", "one hash pass"])
def route(request, monkeypatch):
    """Both ways :func:`unified` maps dictionaries: Arrow's unifier (few entries), one hash pass (many)."""
    if request.param == "one hash pass":
        monkeypatch.setattr(_arrow, "_ENCODED_FROM", 0)
    return request.param


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.lists(st.one_of(st.none(), IDS), max_size=8), min_size=2, max_size=6))
def test_unified_equals_arrow_unify_then_combine_for_text(route, chunks):
    column = _chunked(chunks, pa.string())
    codes, ids = _arrow.unified(column)
    assert (codes.tolist(), ids.to_pylist()) == _old_codes(column)
    assert codes.dtype == np.int32


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.lists(st.one_of(st.none(), st.integers(-5, 5)), max_size=8), min_size=2, max_size=6))
def test_unified_equals_arrow_unify_then_combine_for_integers(route, chunks):
    column = _chunked(chunks, pa.int64())
    codes, ids = _arrow.unified(column)
    assert (codes.tolist(), ids.to_pylist()) == _old_codes(column)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    chunks=st.lists(st.lists(st.one_of(st.none(), IDS), min_size=1, max_size=6), min_size=2, max_size=5),
    scores=st.lists(st.floats(allow_nan=False, width=64), min_size=30, max_size=30),
)
def test_one_chunk_equals_the_old_merge_on_record_batches(route, chunks, scores):
    batches = [
        pa.record_batch(
            {
                "user": pa.array([f"u{len(values)}"] * len(values)).dictionary_encode(),
                "item": pa.array(values, type=pa.string()).dictionary_encode(),
                "score": pa.array(scores[: len(values)]),
            }
        )
        for values in chunks
    ]
    table = pa.Table.from_batches(batches)
    new = _arrow.one_chunk([table])
    old = _old(table)
    assert new.equals(old) and new.schema.equals(old.schema)
    for name in new.column_names:
        assert new[name].num_chunks == 1
        if pa.types.is_dictionary(new[name].type):
            assert new[name].chunk(0).dictionary.equals(old[name].chunk(0).dictionary)
            assert new[name].chunk(0).indices.null_count == old[name].chunk(0).indices.null_count


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    groups=st.lists(st.lists(IDS, min_size=1, max_size=6, unique=True), min_size=1, max_size=4),
    picks=st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(0, 5), max_size=5)), min_size=2, max_size=8),
)
def test_chunks_sharing_dictionaries_in_groups_equal_arrow_unify(route, groups, picks):
    """As a Parquet file's row groups give them: several chunks over one dictionary (the same memory), several
    dictionaries; each distinct one unified once, the codes and dictionary Arrow's."""
    dictionaries = [pa.array(values, pa.string()) for values in groups]
    chunks = []
    for group, indices in picks:
        values = dictionaries[group % len(dictionaries)]
        chunks.append(pa.DictionaryArray.from_arrays(pa.array([i % len(values) for i in indices], pa.int32()), values))
    column = pa.chunked_array(chunks, type=pa.dictionary(pa.int32(), pa.string()))
    codes, ids = _arrow.unified(column)
    assert (codes.tolist(), ids.to_pylist()) == _old_codes(column)


def test_shared_dictionary_is_kept_and_sliced_and_empty_chunks_are_read(route):
    dictionary = pa.array(["z", "a", "m"])
    shared = [pa.DictionaryArray.from_arrays(pa.array(i, pa.int32()), dictionary) for i in ([2, 0], [], [1, 1, 0])]
    column = pa.chunked_array(shared)
    codes, ids = _arrow.unified(column)
    assert ids is dictionary or ids.equals(dictionary)
    assert (codes.tolist(), ids.to_pylist()) == _old_codes(column)
    sliced = pa.chunked_array([pa.array(["q", "r", "s", "q"]).dictionary_encode().slice(1, 3),
                               pa.array(["s", "t"]).dictionary_encode().slice(1)])  # fmt: skip
    assert _arrow.unified(sliced)[0].tolist() == _old_codes(sliced)[0]
    assert _arrow.unified(sliced)[1].to_pylist() == _old_codes(sliced)[1]
    empty = pa.chunked_array([], type=pa.dictionary(pa.int32(), pa.string()))
    assert _arrow.unified(empty)[0].tolist() == []


def test_dictionary_of_several_chunks_goes_through_unified():
    column = _chunked([["b", "a"], ["c", None, "b"]], pa.string())
    codes, ids = _arrow.dictionary(column)
    assert (codes.tolist(), ids.to_pylist()) == ([0, 1, 2, -1, 0], ["b", "a", "c"])


def test_a_dictionary_holding_a_null_is_left_to_arrow(route):
    """Arrow's unifier refuses a null inside a dictionary; the mapping does not decide otherwise."""
    with_null = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["a", None]))
    column = pa.chunked_array([with_null, pa.array(["b", "a"]).dictionary_encode()])
    with pytest.raises(pa.ArrowInvalid):
        column.unify_dictionaries()
    with pytest.raises(pa.ArrowInvalid):
        _arrow.unified(column)


def test_the_one_chunk_table_frees_the_callers_list():
    held = [pa.table({"x": pa.chunked_array([pa.array([1.0]), pa.array([2.0])])})]
    table = _arrow.one_chunk(held)
    assert held == [] and table["x"].num_chunks == 1


@pytest.mark.parametrize("ids", ["text", "numbers"])
def test_a_file_read_in_many_blocks_equals_the_old_merge(tmp_path, ids, monkeypatch, route):
    """A TREC run of ~200 KB read in 1 KB blocks: hundreds of chunks, each with its own dictionary."""
    rng = np.random.default_rng(7)
    users = np.repeat(np.arange(400), 25)
    items = rng.integers(0, 3000, len(users))
    name = (lambda j: f"d{j:04d}") if ids == "text" else str
    rows = enumerate(zip(users, items, strict=True))
    lines = [f"{u} Q0 {name(i)} {r % 25 + 1} {1.0 / (r % 25 + 1):.6f} run" for r, (u, i) in rows]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    import pyarrow.csv as pv

    real = pv.ReadOptions

    def small_blocks(*args, **kwargs):
        kwargs["block_size"] = 1 << 10
        return real(*args, **kwargs)

    monkeypatch.setattr(pv, "ReadOptions", small_blocks)
    with monkeypatch.context() as patched:
        patched.setattr(_arrow, "one_chunk", lambda held: _old(held.pop()))
        old = read_located(path, "recommendations").table
    new = read_located(path, "recommendations").table
    assert new.equals(old)
    assert new["item"].chunk(0).dictionary.equals(old["item"].chunk(0).dictionary)


def test_evaluate_outputs_are_byte_identical_to_the_old_merge(tmp_path, monkeypatch):
    """The command's JSON and per-user output from many-block files, with the old merge and the new one."""
    from typer.testing import CliRunner

    from receval.cli.app import app

    rng = np.random.default_rng(3)
    run, qrels = [], []
    for u in range(300):
        items = rng.choice(2000, 20, replace=False)
        run += [f"q{u} Q0 d{i} {r + 1} {20 - r} tag" for r, i in enumerate(items)]
        qrels += [f"q{u} 0 d{i} {int(rng.integers(0, 3))}" for i in rng.choice(items, 5, replace=False)]
    (tmp_path / "run.trec").write_text("\n".join(run) + "\n")
    (tmp_path / "truth.qrels").write_text("\n".join(qrels) + "\n")
    import pyarrow.csv as pv

    real = pv.ReadOptions

    def outputs() -> tuple[str, str]:
        args = ["evaluate", "--truth", str(tmp_path / "truth.qrels"), "--recs", str(tmp_path / "run.trec"),
                "--metrics", "ndcg@10,precision@5,recall@20,map@20,mrr"]  # fmt: skip
        summary = CliRunner().invoke(app, [*args, "--json"])
        per_user = CliRunner().invoke(app, [*args, "--per-user", str(tmp_path / "per_user.tsv")])
        assert summary.exit_code == 0 and per_user.exit_code == 0, summary.output + per_user.output
        return summary.output, (tmp_path / "per_user.tsv").read_text()

    monkeypatch.setattr(pv, "ReadOptions", lambda *a, **k: real(*a, **{**k, "block_size": 1 << 10}))
    new = outputs()
    monkeypatch.setattr(_arrow, "one_chunk", lambda held: _old(held.pop()))
    old = outputs()
    assert new == old
    assert json.loads(new[0])["mrr"] > 0


def test_reading_many_blocks_needs_neither_pandas_nor_compute_kernels(tmp_path):
    """The merge of a file read in many blocks stays on the pandas-free path (a fresh interpreter looks)."""
    import subprocess
    import sys

    path = tmp_path / "run.trec"
    path.write_text("".join(f"q{u} Q0 d{u * 7 % 1013} 1 0.5 tag\n" for u in range(60_000)))  # ~2 MB: 2 blocks
    code = (
        "import sys; from receval.data.tables import read_located; "
        f"t = read_located({str(path)!r}, 'recommendations').table; "
        "print(t['item'].num_chunks, 'pandas' in sys.modules, 'pyarrow.compute' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1", "False", "False"]
