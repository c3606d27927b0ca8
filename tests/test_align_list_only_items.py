"""A run's items that only the lists name need no identity when every metric only asks "is it a truth item?".

``align(item_identity=False)`` (what :func:`receval.evaluate` asks for metrics of
:attr:`MetricDefinition.list_only`) hashes a large run of plain Arrow text items
(``read_table(plain_items=True)``) a slice of whole users at a time with those users' truth
items, gives each item not in its user's truth an index of its own row and finds a list
that names an item twice user by user, instead of hashing all of the run's items (seconds
at millions of distinct ids). These tests check the
unhashed path against the hashed one: the same metric values per user, the same refusal
(by the same message, naming the same item) of a list naming an item twice, the same
reading and the same errors on missing ids. The sizes from which the path is taken (a
million rows, mostly distinct) are set to 0 (:func:`unhashed`) so that small tables take it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval.data.tables as tables
import receval.evaluation.align as align_module
from receval.cli.app import main
from receval.data import _arrow
from receval.data.tables import read_table, text_dictionary
from receval.errors import DataError, MetricError
from receval.evaluation import evaluate
from receval.evaluation.align import align

LIST_ONLY_METRICS = ["precision@3", "recall@5", "ndcg@4", "ndcg@5(ideal=full)", "map@10", "mrr", "hit_rate@2", "f1@3",
                     "r_precision", "ncrr@5"]  # fmt: skip
CUT_METRICS = ["precision@2", "ndcg@3"]  # the lists cut at 3: a repeat further down is not read, nor refused


@contextlib.contextmanager
def unhashed() -> Iterator[None]:
    """Every run takes the unhashed path, however small: read as plain text, looked up row by row."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(align_module, "_BY_ROW_FROM", 0)
        patch.setattr(_arrow, "_ENCODED_FROM", 0)  # block dictionaries decoded (and unified by one hash: the same)
        patch.setattr(tables, "_many_distinct", lambda column: True)
        patch.setattr(align_module, "_SLICE", 3)  # lists checked in slices of whole users: several slices
        yield


def _recs(users: list[str], items: list[str], scores: list[float], *, plain: bool, chunks: int = 1) -> pa.Table:
    """A run as the reader gives it: users dictionary-encoded; items plain text (``plain_items``) or encoded."""
    cut = np.linspace(0, len(items), chunks + 1).astype(int)
    parts = [pa.array(items[a:b], pa.string()) for a, b in itertools.pairwise(cut.tolist())]
    column = pa.chunked_array(parts, type=pa.string())
    user = text_dictionary(pa.chunked_array([pa.array(users, pa.string())]))
    item = column if plain else text_dictionary(column)
    return pa.table({"user": user, "item": item, "score": pa.array(scores, pa.float64())})


def _truth(users: list[str], items: list[str]) -> pa.Table:
    ratings = [float(j % 5 + 1) for j in range(len(users))]
    return pa.table({"user": text_dictionary(pa.chunked_array([users])),
                     "item": text_dictionary(pa.chunked_array([items])), "rating": ratings})  # fmt: skip


def _outcome(recs: pa.Table, truth: pa.Table, metrics: list[str]) -> tuple[str, object]:
    """("ok", summary and per-user values) or ("error", the message)."""
    try:
        result = evaluate(recs, truth, metrics, empty_users="zero")
    except (MetricError, DataError) as error:
        return "error", f"{type(error).__name__}: {error}"
    return "ok", (result.summary, {k: np.asarray(v).tolist() for k, v in result.per_user.items()})


@st.composite
def runs(draw: st.DrawFn) -> tuple[pa.Table, pa.Table, pa.Table]:
    """Truth and lists over a small id range: items repeat across lists (and, sometimes, within one), many items
    only the lists name; ids as text, some of them numbers written two ways ('7', '07') or accented two ways."""
    n_users = draw(st.integers(1, 5))
    pool = draw(st.sampled_from([[f"i{j}" for j in range(30)], [str(j) for j in range(20)] + ["07", "007", "7.0"],
                                 ["é", "e\u0301", "a", "b", "ab", "a b", "x" * 30, "x" * 29 + "y"]]))  # fmt: skip
    pairs = draw(st.lists(st.tuples(st.integers(0, n_users - 1), st.sampled_from(pool)), min_size=1, max_size=15,
                          unique=True))  # fmt: skip
    truth = _truth([f"u{u}" for u, _ in pairs], [item for _, item in pairs])
    repeats = draw(st.booleans())
    rows = draw(st.lists(st.tuples(st.integers(0, n_users - 1), st.sampled_from(pool)), min_size=1, max_size=40,
                         unique=not repeats))  # fmt: skip
    if draw(st.booleans()):  # grouped by user (sliced by users), or users apart (hashed whole)
        rows.sort(key=lambda row: row[0])
    scores = draw(st.lists(st.integers(0, 4), min_size=len(rows), max_size=len(rows)))
    users, items = [f"u{u}" for u, _ in rows], [item for _, item in rows]
    chunks = draw(st.integers(1, 3))
    plain = _recs(users, items, [float(s) for s in scores], plain=True, chunks=chunks)
    encoded = _recs(users, items, [float(s) for s in scores], plain=False)
    return plain, encoded, truth


@pytest.mark.filterwarnings("ignore:none of the item ids", "ignore:.* user.s. of the recommendations have no truth")
@settings(max_examples=300, deadline=None)
@given(runs(), st.sampled_from([LIST_ONLY_METRICS, CUT_METRICS]))
def test_unhashed_items_give_the_values_and_refusals_of_hashed_ones(
    run: tuple[pa.Table, pa.Table, pa.Table], metrics: list[str]
) -> None:
    plain, encoded, truth = run
    expected = _outcome(encoded, truth, metrics)  # items hashed (a dictionary, as before plain_items)
    with unhashed():
        assert _outcome(plain, truth, metrics) == expected
        if expected[0] == "ok":  # the unhashed path taken: the lists hold items the truth does not, and some it does
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # users without truth, lists of misses only
                aligned = align(plain, truth, item_identity=False, width=3 if metrics == CUT_METRICS else None)
            pairs = set(zip(truth["user"].to_pylist(), truth["item"].to_pylist(), strict=True))
            known_users = {u for u, _ in pairs}
            rows = list(zip(plain["user"].to_pylist(), plain["item"].to_pylist(), strict=True))
            hits = [(u, v) in pairs for u, v in rows if u in known_users]  # an item of the user's own truth
            listed = [u for u, _ in rows if u in known_users]  # a row left out joins the user before it
            grouped = len({u for u, _ in itertools.groupby(listed)}) == len(list(itertools.groupby(listed)))
            assert aligned.catalogue.per_row == (grouped and any(hits) and not all(hits))
    assert _outcome(plain, truth, metrics) == expected  # small: hashed as always


def test_a_repeat_is_named_as_the_hashed_catalogue_names_it() -> None:
    """Two items repeated in one list: the message names the one a catalogue of identities numbers first, the one
    named first user by user (here in an earlier user's list), whatever their order in the repeating list."""
    truth = _truth(["u1", "u2"], ["t", "t"])
    users = ["u1", "u1", "u1", "u2", "u2", "u2", "u2"]
    items = ["p", "t", "q", "q", "p", "q", "p"]  # u2 repeats q first, but u1 named p first
    checked: list[bool] = []
    for plain in (True, False):
        recs = _recs(users, items, [7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0], plain=plain)
        with unhashed(), pytest.MonkeyPatch.context() as patch:
            patch.setattr(align_module, "_list_items", _recorded(checked, plain))
            with pytest.raises(MetricError, match=r"^user 'u2' is recommended item 'p' more than once"):
                evaluate(recs, truth, ["precision@5"])
    assert checked == [True]  # the plain run took the unhashed path, the encoded one the hashed
    # an item of the truth is numbered before any other: it is the one named, another user's truth item too
    recs = _recs(["u1", "u1", "u1", "u1"], ["q", "t", "q", "t"], [4.0, 3.0, 2.0, 1.0], plain=True)
    with unhashed(), pytest.raises(MetricError, match=r"^user 'u1' is recommended item 't' more than once"):
        evaluate(recs, truth, ["precision@5"])
    truth = _truth(["u1", "u2", "u2"], ["t", "s", "z"])
    repeats = [(["q", "t", "q", "t", "s"], "t"), (["s", "t", "q", "t", "s"], "s"), (["s", "t", "q", "q"], "q")]
    for items, named in repeats:
        recs = _recs(["u2"] * len(items), items, [5.0, 4.0, 3.0, 2.0, 1.0][: len(items)], plain=True)
        for run in (recs, text_encoded(recs)):
            with unhashed(), pytest.raises(MetricError, match=rf"^user 'u2' is recommended item '{named}' more than"):
                evaluate(run, truth, ["precision@5"])


def _recorded(calls: list[bool], plain: bool) -> object:
    """:func:`_list_items`, noting ``plain`` in ``calls`` when called."""
    items = align_module._list_items

    def recorded(*args: object) -> object:
        calls.append(plain)
        return items(*args)  # type: ignore[arg-type]

    return recorded


def test_a_catalogue_of_rows_has_no_ids() -> None:
    truth = _truth(["u1"], ["t"])
    recs = _recs(["u1", "u1", "u2"], ["a", "t", "a"], [2.0, 1.0, 1.0], plain=True)
    with unhashed(), pytest.warns(UserWarning, match="1 user"):
        aligned = align(recs, truth, item_identity=False)
    assert aligned.catalogue.per_row and len(aligned.catalogue) == 4  # the truth's item, then one index a row
    assert aligned.rankings.tolist() == [[1, 0]] and aligned.catalogue[1] == "a"
    with pytest.raises(RuntimeError, match="no ids"):
        _ = aligned.catalogue.ids
    # any metric outside the list-only ones makes the identities, as before
    with unhashed(), pytest.warns(UserWarning, match="1 user"):
        assert (
            evaluate(recs, truth, ["coverage@2"]).summary == evaluate(text_encoded(recs), truth, ["coverage@2"]).summary
        )


def text_encoded(recs: pa.Table) -> pa.Table:
    return recs.set_column(recs.column_names.index("item"), "item", text_dictionary(recs["item"]))


def test_plain_items_read_the_same_ids(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("u1 Q0 07 1 0.9 x\nu1 Q0 7 2 0.8 x\nu2 Q0 é 1 0.5 x\n")
    encoded = read_table(run, "recommendations", arrow=True)
    small = read_table(run, "recommendations", arrow=True, plain_items=True)  # few rows: encoded as always
    assert small.equals(encoded) and pa.types.is_dictionary(encoded["item"].type)
    with unhashed():
        plain = read_table(run, "recommendations", arrow=True, plain_items=True)
    assert pa.types.is_string(plain["item"].type)
    assert plain["item"].to_pylist() == encoded["item"].to_pylist() == ["07", "7", "é"]
    assert plain["user"].type == encoded["user"].type  # users stay encoded
    numbers = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"user": [1, 1], "item": [7, 8], "score": [0.5, 0.4]}), numbers)
    with unhashed():
        read = read_table(numbers, "recommendations", arrow=True, plain_items=True)  # numbers: each cast to text
    assert pa.types.is_string(read["item"].type) and read["item"].to_pylist() == ["7", "8"]
    assert read_table(numbers, "recommendations", arrow=True)["item"].to_pylist() == ["7", "8"]
    dictionary = [pa.types.is_dictionary(read_table(run, "recommendations", arrow=True, plain_items=True)[c].type)
                  for c in ("user", "item")]  # fmt: skip
    assert dictionary == [True, True]


@pytest.mark.parametrize(
    ("items", "message"),
    [([None, "b"], "empty item id"), (["  ", "b"], "empty item id"), (["a\x00", "b"], "holds a NUL byte")],
)
def test_plain_items_refuse_missing_ids_as_encoded_ones(tmp_path: Path, items: list, message: str) -> None:
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"user": ["u1", "u1"], "item": pa.array(items, pa.string()), "score": [0.5, 0.4]}), path)
    errors = []
    for plain in (True, False):
        with unhashed(), pytest.raises(DataError, match=message) as caught:
            read_table(path, "recommendations", arrow=True, plain_items=plain)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("suffix", ["trec", "parquet", "int.parquet"])
def test_the_command_prints_the_same_bytes_either_way(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``receval evaluate`` (plain items read) on a run with items only it names, repeated across lists: the same
    --json and --per-user bytes through the unhashed path as through the hashed one; a repeat refused alike."""
    users = [f"u{j // 4}" for j in range(24)]
    items = [f"d{(7 * j) % 11}" for j in range(24)]  # shared across lists, 11 distinct
    truth, run = tmp_path / "truth.qrels", tmp_path / f"run.{suffix}"
    truth.write_text("".join(f"u{u} 0 d{d} {1 + (u + d) % 3}\n" for u in range(6) for d in (u, 2 * u + 1)))
    ranks = [j % 4 + 1 for j in range(24)]
    if suffix == "trec":
        run.write_text("".join(f"{u} Q0 {i} {r} {1 / r} x\n" for u, i, r in zip(users, items, ranks, strict=True)))
    elif suffix == "parquet":
        pq.write_table(pa.table({"user": users, "item": items, "score": [1 / r for r in ranks]}), run)
    else:  # integer ids (the truth's text ids, 'd' dropped): each cast to text when read
        truth.write_text(truth.read_text().replace("u", "").replace(" d", " "))
        numbers = {"user": [int(u[1:]) for u in users], "item": [int(i[1:]) for i in items]}
        pq.write_table(pa.table({**numbers, "score": [1 / r for r in ranks]}), run)

    def command(per_user: Path) -> tuple[int, str, str, bytes]:
        status = main(["evaluate", "--truth", str(truth), "--recs", str(run), "--metrics", ",".join(LIST_ONLY_METRICS),
                       "--json", "--per-user", str(per_user)])  # fmt: skip
        out = capsys.readouterr()
        return status, out.out, out.err, per_user.read_bytes() if per_user.exists() else b""

    hashed = command(tmp_path / "hashed.tsv")
    with unhashed():
        assert command(tmp_path / "unhashed.tsv") == hashed
    assert hashed[0] == 0 and json.loads(hashed[1])["conventions"]["users_evaluated"] == 6
    if suffix == "trec":  # u0 names d7 twice: refused, by one message either way
        run.write_text(run.read_text() + "u0 Q0 d7 5 0.1 x\nu0 Q0 d7 6 0.05 x\n")
        refused = command(tmp_path / "r1.tsv")
        with unhashed():
            assert command(tmp_path / "r2.tsv") == refused
        assert refused[0] == 2 and "item 'd7' more than once" in refused[1]  # --json: the error as JSON


@pytest.mark.parametrize(("distinct", "plain"), [(True, True), (False, False)])
def test_a_file_of_mostly_distinct_items_is_read_plain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, distinct: bool, plain: bool
) -> None:
    """Delimited text: the items of the file's first lines tell (here 8 of them): mostly distinct, the column is
    read as plain text (never hashed); else encoded block by block as always. The ids are the same either way."""
    monkeypatch.setattr(tables, "_HEAD", 8)
    run = tmp_path / "run.trec"
    items = [f"d{j if distinct else j % 3}" for j in range(20)]
    run.write_text("".join(f"u{j // 5} Q0 {item} {j % 5 + 1} {1 - j / 100} x\n" for j, item in enumerate(items)))
    read = read_table(run, "recommendations", arrow=True, plain_items=True)
    assert pa.types.is_string(read["item"].type) == plain and pa.types.is_dictionary(read["user"].type)
    assert read["item"].to_pylist() == read_table(run, "recommendations", arrow=True)["item"].to_pylist() == items
    short = tmp_path / "short.trec"  # no more lines than the sample: encoded, however distinct
    short.write_text("".join(run.read_text().splitlines(keepends=True)[:8]))
    assert pa.types.is_dictionary(read_table(short, "recommendations", arrow=True, plain_items=True)["item"].type)


def test_an_empty_run_of_plain_items_reads_as_an_encoded_one() -> None:
    truth = _truth(["u1", "u2"], ["t", "s"])
    plain, encoded = _recs([], [], [], plain=True), _recs([], [], [], plain=False)
    expected = _outcome(encoded, truth, LIST_ONLY_METRICS)
    with unhashed():
        assert _outcome(plain, truth, LIST_ONLY_METRICS) == expected


def test_a_trec_run_of_plain_items_is_evaluated_without_pandas(tmp_path: Path) -> None:
    """TREC files need no pandas (pyarrow.csv reads them): the list-only path makes no Arrow text of Python strings
    (``pyarrow.array``) and fills no nulls (``pyarrow.compute.fill_null``), which import it (0.4 s). A fresh
    interpreter looks, with the sizes from which the path is taken set to 0."""
    import subprocess
    import sys

    truth, run = tmp_path / "truth.qrels", tmp_path / "run.trec"
    truth.write_text("".join(f"u{u} 0 d{u * 3 + j} 1\n" for u in range(5) for j in range(2)))
    run.write_text("".join(f"u{u} Q0 d{u * 3 + r} {r + 1} {1 - r / 10} x\n" for u in range(6) for r in range(4)))
    code = (
        "import sys; import receval.evaluation.align as a, receval.data._arrow as r, receval.data.tables as t; "
        "a._BY_ROW_FROM = 0; a._SLICE = 3; r._ENCODED_FROM = 0; t._HEAD = 4; "
        "calls = []; hashed = a._list_items; a._list_items = lambda *args: calls.append(1) or hashed(*args); "
        "from receval.evaluation import evaluate; "
        f"s = evaluate({str(run)!r}, {str(truth)!r}, ['precision@3', 'recall@4'], unknown_users='warn').summary; "
        "print(round(s['precision@3'], 6), round(s['recall@4'], 6), len(calls), 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0.666667", "1.0", "1", "False"]  # d(3u + 2) misses, d(3u + 3) is u + 1's


def test_the_list_only_metrics_are_those_their_definitions_say():
    """One home: ``list_only`` on each definition; the built-in set and evaluate's choice read it, so that a
    metric registered ``list_only`` (or one losing the flag) changes both."""
    from receval.evaluation.oneshot import _list_only
    from receval.metrics import parse_metric
    from receval.metrics._definition import _REGISTRY, register_metric
    from receval.metrics.registry import LIST_ONLY

    assert LIST_ONLY == {"precision", "recall", "hit_rate", "mrr", "ncrr", "map", "f1", "r_precision", "ndcg"}
    assert _list_only(parse_metric("ndcg@10")) and not _list_only(parse_metric("ndcg@10(estimator=ips)"))
    assert not _list_only(parse_metric("coverage@10"))

    @register_metric("hits_example", direction="higher", list_only=True)
    def _hits_example(data, k):
        return data.positive[:, :k].sum(axis=1).astype(float)

    try:
        assert _list_only(parse_metric("hits_example@5"))
    finally:
        del _REGISTRY["hits_example"]
