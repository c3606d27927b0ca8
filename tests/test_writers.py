"""write_table: every format reads back to the same lists and numbers; ranx reads our TREC and JSON runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import evaluate
from receval.cli import main
from receval.data.tables import read_table
from receval.data.writers import WRITE_FORMATS, write_table
from receval.errors import DataError


def _run(seed: int, n_users: int = 30, n_items: int = 50, k: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        items = rng.choice(n_items, k, replace=False)
        scores = np.sort(rng.random(k))[::-1]
        rows += [(f"u{u}", f"i{i}", float(s), r + 1) for r, (i, s) in enumerate(zip(items, scores, strict=True))]
    return pd.DataFrame(rows, columns=["user", "item", "score", "rank"])


def _truth(seed: int, n_users: int = 30, n_items: int = 50) -> pd.DataFrame:
    rng = np.random.default_rng(seed + 1000)
    rows = [(f"u{u}", f"i{i}", int(rng.integers(1, 6))) for u in range(n_users) for i in rng.choice(n_items, 8, False)]
    return pd.DataFrame(rows, columns=["user", "item", "rating"])


@pytest.mark.parametrize("suffix", [s[0] for s in WRITE_FORMATS.values()])
def test_round_trip_gives_the_same_lists_and_values(tmp_path: Path, suffix: str) -> None:
    run, truth = _run(0), _truth(0)
    path = write_table(run, tmp_path / f"run{suffix}")
    back = read_table(path, "recommendations")
    key = ["user", "item"]
    merged = run.merge(back.astype({"user": str, "item": str}), on=key, suffixes=("", "_back"))
    assert len(merged) == len(run) == len(back)
    np.testing.assert_array_equal(merged["score"], merged["score_back"])  # bit for bit
    metrics = ["ndcg@10", "precision@5", "map"]
    assert evaluate(back, truth, metrics, threshold=4).summary == evaluate(run, truth, metrics, threshold=4).summary


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=20))
def test_floats_read_back_exactly(tmp_path_factory: pytest.TempPathFactory, values: list[float]) -> None:
    folder = tmp_path_factory.mktemp("floats")
    frame = pd.DataFrame({"user": ["a"] * len(values), "item": [f"i{j}" for j in range(len(values))], "score": values})
    for suffix in (".tsv", ".csv", ".trec", ".json"):
        back = read_table(write_table(frame, folder / f"x{suffix}"), "recommendations").set_index("item")["score"]
        np.testing.assert_array_equal(back.loc[frame["item"]].to_numpy(), np.asarray(values))


def test_ranx_reads_our_trec_and_json_runs(tmp_path: Path) -> None:
    ranx = pytest.importorskip("ranx")
    run, truth = _run(1), _truth(1)
    qrels = ranx.Qrels.from_df(truth.astype({"user": object, "item": object}), "user", "item", "rating")
    ours = evaluate(run, truth, ["ndcg@10(gain=linear)", "precision@5"], threshold=1).summary
    for suffix in (".trec", ".json"):
        path = write_table(run, tmp_path / f"run{suffix}")
        loaded = ranx.Run.from_file(str(path), kind="trec" if suffix == ".trec" else "json")
        theirs = ranx.evaluate(qrels, loaded, ["ndcg@10", "precision@5"])
        assert theirs["ndcg@10"] == pytest.approx(ours["ndcg@10(gain=linear)"], abs=1e-9)
        assert theirs["precision@5"] == pytest.approx(ours["precision@5"], abs=1e-9)


def test_rank_only_runs_keep_their_order_in_trec(tmp_path: Path) -> None:
    run = _run(2).drop(columns="score").sample(frac=1, random_state=0)
    back = read_table(write_table(run, tmp_path / "r.trec"), "recommendations")
    ordered = back.sort_values(["user", "score"], ascending=[True, False]).groupby("user", observed=True)["item"]
    expected = run.sort_values(["user", "rank"]).groupby("user")["item"]
    assert {u: list(v) for u, v in ordered} == {u: list(v) for u, v in expected}


@pytest.mark.parametrize(
    ("name", "frame", "message"),
    [
        ("x.xlsx", _run(0), "cannot tell the output format"),
        ("x.trec", pd.DataFrame({"user": [1], "item": [2]}), "needs columns user, item and score or rank"),
        ("x.trec", pd.DataFrame({"user": ["a b"], "item": [2], "score": [1.0]}), "white space"),
    ],
)
def test_bad_requests_name_the_file(tmp_path: Path, name: str, frame: pd.DataFrame, message: str) -> None:
    with pytest.raises(DataError, match=message):
        write_table(frame, tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_recommend_writes_a_trec_run_that_evaluate_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    truth = _truth(3)
    train = truth.assign(user=truth["user"], item=truth["item"]).iloc[::2]
    test = truth.iloc[1::2]
    train.to_csv(tmp_path / "train.tsv", sep="\t", index=False)
    test.to_csv(tmp_path / "test.tsv", sep="\t", index=False)
    argv = ["recommend", "--train", str(tmp_path / "train.tsv"), "--test", str(tmp_path / "test.tsv")]
    assert main([*argv, "--algorithm", "popularity", "--k", "5", "--out", str(tmp_path / "run.trec")]) == 0
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert lines and all(len(line.split()) == 6 and line.split()[1] == "Q0" for line in lines)
    argv = ["evaluate", "--truth", str(tmp_path / "test.tsv"), "--recs", str(tmp_path / "run.trec")]
    capsys.readouterr()
    assert main([*argv, "--metrics", "precision@5", "--json"]) == 0


def test_predictions_are_written_at_full_precision(tmp_path: Path) -> None:
    truth = _truth(4)
    truth.iloc[::2].to_csv(tmp_path / "train.tsv", sep="\t", index=False)
    truth.iloc[1::2].to_csv(tmp_path / "test.tsv", sep="\t", index=False)
    argv = ["predict", "--train", str(tmp_path / "train.tsv"), "--test", str(tmp_path / "test.tsv")]
    assert main([*argv, "--algorithm", "biases", "--unknown", "global-mean", "--out", str(tmp_path / "p.tsv")]) == 0
    text = pd.read_csv(tmp_path / "p.tsv", sep="\t", dtype={"prediction": str})["prediction"]
    assert text.str.len().max() > 8  # not cut to six significant digits


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=30),
    st.integers(-(2**62), 2**62),
    st.sampled_from(["csv", "tsv"]),
)
def test_number_columns_written_without_pandas_as_pandas_writes_them(tmp_path_factory, floats, big, fmt):
    folder = tmp_path_factory.mktemp("w")
    columns = {
        "user": np.arange(len(floats), dtype=np.int64) + big % 1000,
        "item": np.full(len(floats), big, dtype=np.int64),
        "prediction": np.array(floats, dtype=np.float64),
    }
    ours = write_table(columns, folder / f"ours.{fmt}")
    theirs = folder / f"theirs.{fmt}"
    pd.DataFrame(columns).to_csv(theirs, sep="," if fmt == "csv" else "\t", index=False)
    assert ours.read_bytes() == theirs.read_bytes()


def test_other_mappings_go_through_a_dataframe(tmp_path):
    ratings = np.array([4.5, 3.0], dtype=np.float32)  # float32: pandas' own formatting, not repr of a double
    path = write_table({"user": np.array(["a", "b"], dtype=object), "rating": ratings}, tmp_path / "t.tsv")
    assert path.read_text() == pd.DataFrame({"user": ["a", "b"], "rating": ratings}).to_csv(sep="\t", index=False)


@pytest.mark.parametrize("suffix", [".trec", ".json"])
@pytest.mark.parametrize("with_rank", [True, False])
def test_a_run_from_arrays_is_the_run_from_a_dataframe(tmp_path, suffix, with_rank):
    """The arrays `receval recommend` writes give the bytes the DataFrame gives (ranks derived when absent)."""
    rng = np.random.default_rng(1)
    users = np.repeat(np.array([12, 3, 7]), 4)
    run = {"user": users, "item": rng.permutation(40)[:12].astype(object), "score": rng.random(12).round(3)}
    run["score"][1] = run["score"][0]  # a tie: ranked in row order
    if with_rank:
        run["rank"] = np.tile(np.arange(1, 5), 3)
    ours = write_table(run, tmp_path / f"ours{suffix}").read_text()
    theirs = write_table(pd.DataFrame(run), tmp_path / f"theirs{suffix}").read_text()
    assert ours == theirs and "12" in ours
    # and both are the run itself: ranks 1-4 within each user, by descending score, the tie in row order
    ranks = [1 + sorted(range(4), key=lambda j: -run["score"][u * 4 + j]).index(r) for u in range(3) for r in range(4)]
    if with_rank:
        ranks = list(run["rank"])
    rows = list(zip(users.tolist(), run["item"].tolist(), ranks, run["score"].tolist(), strict=True))
    if suffix == ".trec":
        assert ours.splitlines() == [f"{u} Q0 {i} {r} {s:g} receval" for u, i, r, s in rows]
    else:
        expected: dict[str, dict[str, float]] = {}
        for u, i, _, s in rows:
            expected.setdefault(str(u), {})[str(i)] = s
        assert json.loads(ours) == expected


def test_a_run_from_arrays_refuses_white_space_in_ids(tmp_path):
    run = {"user": np.array(["a b"], dtype=object), "item": np.array(["x"], dtype=object), "rank": np.array([1])}
    with pytest.raises(DataError, match="user id 'a b' contains white space"):
        write_table(run, tmp_path / "r.trec")


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".trec"])
def test_the_pieces_text_is_written_in_change_no_byte(tmp_path: Path, suffix: str) -> None:
    from receval.data import writers

    rng = np.random.default_rng(5)
    n = 23
    columns = {
        "user": np.repeat(np.arange(5), 5)[:n],
        "item": rng.integers(0, 10**12, n),
        "score": np.where(rng.uniform(size=n) < 0.2, np.nan if suffix != ".trec" else 2.0, rng.normal(size=n)),
    }
    written = []
    for rows in (1, 4, 23, 1 << 16):  # pieces of one row, of a few, the whole table at once
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(writers, "_ROWS", rows)
            written.append(write_table(columns, tmp_path / f"{rows}{suffix}").read_bytes())
    assert all(w == written[-1] for w in written)
    if suffix != ".trec":
        theirs = pd.DataFrame(columns).to_csv(sep="," if suffix == ".csv" else "\t", index=False)
        assert written[0] == theirs.encode()
