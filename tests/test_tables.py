"""The front door: every format the field writes, read by one reader, scored as ranx and pytrec_eval score it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import receval
from receval import Interactions
from receval.cli import main
from receval.data.tables import read_table
from receval.errors import DataError, ReceValWarning

ranx = pytest.importorskip("ranx")
pytrec_eval = pytest.importorskip("pytrec_eval")

N_USERS, N_ITEMS = 40, 60
# receval metric -> (ranx metric, trec_eval measure); threshold 1, every grade ≥ 1 relevant, as both tools by default
METRICS = {
    "ndcg@10": ("ndcg@10", "ndcg_cut_10"),
    "precision@10": ("precision@10", "P_10"),
    "recall@10": ("recall@10", "recall_10"),
    "map@100": ("map@100", "map_cut_100"),
    "mrr": ("mrr", "recip_rank"),
}


def _truth_and_run(seed: int = 0, prefix: tuple[str, str] = ("u", "i")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Graded truth (grades 1-4, some users with few) and scored lists (no tied scores) for every truth user."""
    rng = np.random.default_rng(seed)
    truth, run = [], []
    for u in range(N_USERS):
        rated = rng.choice(N_ITEMS, size=int(rng.integers(1, 15)), replace=False)
        truth += [(f"{prefix[0]}{u}", f"{prefix[1]}{i}", int(rng.integers(1, 5))) for i in rated]
        width = int(rng.integers(5, 30))
        listed = rng.permutation(N_ITEMS)[:width]
        scores = np.sort(rng.random(width))[::-1] + 1.0
        run += [(f"{prefix[0]}{u}", f"{prefix[1]}{i}", float(s)) for i, s in zip(listed, scores, strict=True)]
    return (
        pd.DataFrame(truth, columns=["user", "item", "rating"]),
        pd.DataFrame(run, columns=["user", "item", "score"]),
    )


def _references(truth: pd.DataFrame, run: pd.DataFrame) -> dict[str, dict[str, float]]:
    """{receval metric: {user: value}} from ranx and from pytrec_eval (asserted equal to each other first)."""
    truth = truth.astype({"user": str, "item": str, "rating": np.int64})
    qrels = ranx.Qrels.from_df(truth.astype({"user": object, "item": object}),
                               q_id_col="user", doc_id_col="item", score_col="rating")  # fmt: skip
    ranx_run = ranx.Run.from_df(run.astype({"user": str, "item": str}).astype({"user": object, "item": object}),
                                q_id_col="user", doc_id_col="item", score_col="score")  # fmt: skip
    theirs = ranx.evaluate(qrels, ranx_run, [m[0] for m in METRICS.values()], return_mean=False)
    qrel_dict: dict[str, dict[str, int]] = {}
    for u, i, r in truth.itertuples(index=False):
        qrel_dict.setdefault(str(u), {})[str(i)] = int(r)
    run_dict: dict[str, dict[str, float]] = {}
    for u, i, s in run.itertuples(index=False):
        run_dict.setdefault(str(u), {})[str(i)] = float(s)
    trec = pytrec_eval.RelevanceEvaluator(qrel_dict, {m[1] for m in METRICS.values()}).evaluate(run_dict)
    users = list(ranx_run.keys())
    out = {}
    for ours, (r_name, t_name) in METRICS.items():
        ranx_values = dict(zip(users, np.asarray(theirs[r_name]), strict=True))
        trec_values = {u: trec[u][t_name] for u in users}
        np.testing.assert_allclose([ranx_values[u] for u in users], [trec_values[u] for u in users], atol=1e-9)
        out[ours] = trec_values
    return out


def _assert_equal(per_user: pd.DataFrame, expected: dict[str, dict[str, float]]) -> None:
    table = per_user.assign(user=per_user["user"].astype(str)).set_index("user")
    for metric, values in expected.items():
        users = sorted(values)
        assert sorted(table.index) == users, metric
        np.testing.assert_allclose(
            table.loc[users, metric].to_numpy(), [values[u] for u in users], rtol=0, atol=1e-9, err_msg=metric
        )


@pytest.fixture(scope="module")
def case() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, float]]]:
    truth, run = _truth_and_run()
    return truth, run, _references(truth, run)


# ---------------------------------------------------------------- files, through the command line
def _write_trec(folder: Path, truth: pd.DataFrame, run: pd.DataFrame) -> tuple[Path, Path, list[str]]:
    q = ranx.Qrels.from_df(truth.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item",
                           score_col="rating")  # fmt: skip
    r = ranx.Run.from_df(run.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item",
                         score_col="score")  # fmt: skip
    q.save(str(folder / "qrels.txt"), kind="trec")
    r.save(str(folder / "run.txt"), kind="trec")
    return folder / "qrels.txt", folder / "run.txt", []


def _write_ranx(kind: str):
    def write(folder: Path, truth: pd.DataFrame, run: pd.DataFrame) -> tuple[Path, Path, list[str]]:
        q = ranx.Qrels.from_df(truth.astype({"user": object, "item": object}), q_id_col="user",
                               doc_id_col="item", score_col="rating")  # fmt: skip
        r = ranx.Run.from_df(run.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item",
                             score_col="score")  # fmt: skip
        q.save(str(folder / f"qrels.{kind}"))
        r.save(str(folder / f"run.{kind}"))
        return folder / f"qrels.{kind}", folder / f"run.{kind}", []

    return write


def _write_recbole(folder: Path, truth: pd.DataFrame, run: pd.DataFrame) -> tuple[Path, Path, list[str]]:
    t = truth.rename(columns={"user": "user_id:token", "item": "item_id:token", "rating": "rating:float"})
    r = run.rename(columns={"user": "user_id:token", "item": "item_id:token", "score": "score:float"})
    t.to_csv(folder / "test.inter", sep="\t", index=False)
    r.to_csv(folder / "run.inter", sep="\t", index=False)
    return folder / "test.inter", folder / "run.inter", []


def _write_headerless(folder: Path, truth: pd.DataFrame, run: pd.DataFrame) -> tuple[Path, Path, list[str]]:
    truth.assign(timestamp=881250949).to_csv(folder / "u1.test", sep="\t", index=False, header=False)
    run.to_csv(folder / "run.tsv", sep="\t", index=False, header=False)
    return folder / "u1.test", folder / "run.tsv", []


def _write_named(folder: Path, truth: pd.DataFrame, run: pd.DataFrame) -> tuple[Path, Path, list[str]]:
    truth.rename(columns={"user": "uid", "item": "song", "rating": "stars"}).to_csv(folder / "t.csv", index=False)
    run.rename(columns={"user": "uid", "item": "song", "score": "s"}).to_csv(folder / "r.csv", index=False)
    options = ["--user", "uid", "--item", "song", "--rating", "stars", "--score", "s"]
    return folder / "t.csv", folder / "r.csv", options


def _write_lenskit(folder: Path, truth: pd.DataFrame, run: pd.DataFrame) -> tuple[Path, Path, list[str]]:
    truth.rename(columns={"user": "user_id", "item": "item_id"}).to_parquet(folder / "t.parquet", index=False)
    run.rename(columns={"user": "user_id", "item": "item_id"}).to_parquet(folder / "r.parquet", index=False)
    return folder / "t.parquet", folder / "r.parquet", []


def _write_odd_extension(folder: Path, truth: pd.DataFrame, run: pd.DataFrame) -> tuple[Path, Path, list[str]]:
    t, r, _ = _write_trec(folder, truth, run)
    return t.rename(folder / "test.judgments"), r.rename(folder / "bm25.out"), ["--truth-format", "trec",
                                                                            "--recs-format", "trec"]  # fmt: skip


WRITERS = {
    "trec": _write_trec,
    "ranx-json": _write_ranx("json"),
    "ranx-parquet": _write_ranx("parquet"),
    "recbole": _write_recbole,
    "headerless-movielens": _write_headerless,
    "named-columns": _write_named,
    "lenskit-parquet": _write_lenskit,
    "explicit-format": _write_odd_extension,
}


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_cli_reads_each_format_and_equals_ranx_and_pytrec_eval(fmt, case, tmp_path, capsys):
    truth, run, expected = case
    t, r, options = WRITERS[fmt](tmp_path, truth, run)
    per_user = tmp_path / "per_user.csv"
    args = ["evaluate", "--truth", str(t), "--recs", str(r), "--metrics", ",".join(METRICS), "--empty-users",
            "zero", "--per-user", str(per_user), "--json", *options]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    summary = json.loads(capsys.readouterr().out)
    _assert_equal(pd.read_csv(per_user, dtype={"user": str}), expected)
    for metric, values in expected.items():
        assert summary[metric] == pytest.approx(np.mean(list(values.values())), abs=1e-9)


# ---------------------------------------------------------------- objects, through evaluate()
def _ranx_objects(truth, run):
    q = ranx.Qrels.from_df(truth.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item",
                           score_col="rating")  # fmt: skip
    r = ranx.Run.from_df(run.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item",
                         score_col="score")  # fmt: skip
    return r, q


def _dicts(truth, run):
    qrels: dict = {}
    for u, i, g in truth.itertuples(index=False):
        qrels.setdefault(u, {})[i] = int(g)
    scores: dict = {}
    for u, i, s in run.itertuples(index=False):
        scores.setdefault(u, {})[i] = float(s)
    return scores, qrels


def _lenskit(truth, run):
    names = {"user": "user_id", "item": "item_id"}
    return run.rename(columns=names), truth.rename(columns=names)


def _own_names(truth, run):
    return run.rename(columns={"user": "who", "score": "s"}), truth.rename(columns={"user": "who", "rating": "g"})


def _ir_measures(truth, run):
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel(u, i, int(g)) for u, i, g in truth.itertuples(index=False)]
    return [ir_measures.ScoredDoc(u, i, float(s)) for u, i, s in run.itertuples(index=False)], qrels


OBJECTS = {
    "ranx-objects": (_ranx_objects, {}),
    "ir-measures-tuples": (_ir_measures, {}),
    "pytrec-eval-dicts": (_dicts, {}),
    "lenskit-frames": (_lenskit, {}),
    "column-keywords": (_own_names, {"columns": {"user": "who", "score": "s", "rating": "g"}}),
}


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_evaluate_takes_other_libraries_objects(kind, case):
    truth, run, expected = case
    make, keywords = OBJECTS[kind]
    recs, qrels = make(truth, run)
    res = receval.evaluate(recs, qrels, list(METRICS), empty_users="zero", **keywords)
    _assert_equal(res.per_user, expected)


def _score_matrix_case(seed: int = 2):
    rng = np.random.default_rng(seed)
    truth, _ = _truth_and_run(seed)
    data = Interactions.from_frame(truth)
    scores = rng.random((data.n_users, data.n_items)) + 1.0
    return data, scores


def _run_of(data: Interactions, rows, cols, values) -> pd.DataFrame:
    return pd.DataFrame({"user": data.user_ids[rows], "item": data.item_ids[cols], "score": values})


def test_dense_score_matrix_equals_references():
    data, scores = _score_matrix_case()
    scores[3, :] = -np.inf  # a user with nothing to recommend
    scores[5, 7] = np.nan  # one unscored item
    res = receval.evaluate(scores, data, list(METRICS), empty_users="zero")
    rows, cols = np.nonzero(np.isfinite(scores))
    truth = data.to_frame()
    expected = _references(truth[truth["user"] != data.user_ids[3]], _run_of(data, rows, cols, scores[rows, cols]))
    table = res.per_user.set_index("user")
    assert np.all(table.loc[data.user_ids[3]].to_numpy() == 0.0)
    _assert_equal(res.per_user[res.per_user["user"] != data.user_ids[3]], expected)
    assert res.conventions.users_without_list == 1


def test_sparse_score_matrix_ranks_its_stored_entries_only():
    data, scores = _score_matrix_case(3)
    mask = np.random.default_rng(4).random(scores.shape) < 0.3
    mask[:, 0] = True  # every user has a list
    csr = sp.csr_matrix(np.where(mask, scores, 0.0))
    res = receval.evaluate(csr, data, list(METRICS), empty_users="zero")
    coo = csr.tocoo()
    _assert_equal(res.per_user, _references(data.to_frame(), _run_of(data, coo.row, coo.col, coo.data)))


def test_score_matrix_shape_must_match_the_id_space():
    data, scores = _score_matrix_case()
    n, m = data.n_users, data.n_items
    with pytest.raises(DataError, match=rf"score matrix is {n} x {m - 1}, but there are {n} truth users and {m} truth"):
        receval.evaluate(scores[:, :-1], data, ["ndcg@10"])


# ---------------------------------------------------------------- headerless MovieLens files
def test_headerless_u1_files_round_trip_and_evaluate_as_headed_ones(tmp_path, capsys):
    rng = np.random.default_rng(7)
    base = pd.DataFrame({"user": rng.integers(1, 30, 400), "item": rng.integers(1, 80, 400)}).drop_duplicates()
    base = base.assign(rating=rng.integers(1, 6, len(base)), timestamp=874965758 + np.arange(len(base)))
    test = base.sample(frac=0.25, random_state=1)
    base.to_csv(tmp_path / "u1.base", sep="\t", header=False, index=False)
    test.to_csv(tmp_path / "u1.test", sep="\t", header=False, index=False)
    read = read_table(tmp_path / "u1.base", "train").astype({"user": "int64", "item": "int64"})
    pd.testing.assert_frame_equal(read, base.reset_index(drop=True).astype({"rating": float}))
    read.to_csv(tmp_path / "again.tsv", sep="\t", index=False)  # write with a header, read back
    again = read_table(tmp_path / "again.tsv", "train").astype({"user": "int64", "item": "int64"})
    pd.testing.assert_frame_equal(again, read)
    recs = test[["user", "item"]].assign(score=rng.random(len(test)))
    recs.to_csv(tmp_path / "recs.tsv", sep="\t", header=False, index=False)
    recs.to_csv(tmp_path / "recs_h.tsv", sep="\t", index=False)
    test.to_csv(tmp_path / "test_h.tsv", sep="\t", index=False)
    out = []
    for t, r in (("u1.test", "recs.tsv"), ("test_h.tsv", "recs_h.tsv")):
        assert main(["evaluate", "--truth", str(tmp_path / t), "--recs", str(tmp_path / r), "--train",
                     str(tmp_path / "u1.base"), "--metrics", "ndcg@10,recall@5,novelty@10", "--threshold", "4",
                     "--json"]) == 0  # fmt: skip
        out.append(json.loads(capsys.readouterr().out))
    assert out[0] == out[1] and out[0]["ndcg@10"] > 0


@pytest.mark.realdata
def test_real_ml100k_u1_popularity_run_as_trec_equals_pytrec_eval(ml100k_dir, tmp_path, capsys):
    """u1.base/u1.test as GroupLens ship them, a most-popular TREC run: no option but the metrics."""
    base = read_table(ml100k_dir / "u1.base", "train")
    test = read_table(ml100k_dir / "u1.test", "truth")
    assert (len(base), len(test)) == (80000, 20000)
    assert list(test.columns) == ["user", "item", "rating", "timestamp"]
    counts = base["item"].astype(str).value_counts(sort=False)
    ranked = counts.index.to_numpy()[np.lexsort((counts.index.astype(int), -counts.to_numpy()))][:200]
    seen = base.groupby(base["user"].astype(str), observed=True)["item"].agg(lambda s: set(s.astype(str)))
    lines, run = [], {}
    for user in sorted(test["user"].astype(str).unique(), key=int):
        items = [i for i in ranked if i not in seen.get(user, set())][:10]
        run[user] = {i: float(10 - r) for r, i in enumerate(items)}
        lines += [f"{user} Q0 {i} {r + 1} {10 - r} pop\n" for r, i in enumerate(items)]
    (tmp_path / "pop.run").write_text("".join(lines))
    per_user = tmp_path / "per_user.csv"
    args = ["--metrics", "precision@10,ndcg@10", "--threshold", "4", "--per-user", str(per_user)]
    assert main(["evaluate", "--truth", str(ml100k_dir / "u1.test"), "--recs", str(tmp_path / "pop.run"), *args]) == 0
    qrels: dict[str, dict[str, int]] = {}
    for u, i, r in test[["user", "item", "rating"]].astype({"user": str, "item": str}).itertuples(index=False):
        qrels.setdefault(u, {})[i] = int(r)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"P_10"}, relevance_level=4).evaluate(run)
    ours = pd.read_csv(per_user, dtype={"user": str}).set_index("user")
    users = sorted(trec)
    np.testing.assert_allclose(ours.loc[users, "precision@10"].fillna(0.0), [trec[u]["P_10"] for u in users],
                               atol=1e-9)  # fmt: skip
    assert "users evaluated: 459" in capsys.readouterr().out


@pytest.mark.realdata
def test_real_ml_latest_small_ratings_csv_columns_are_recognised(ml_latest_small_dir):
    ratings = read_table(ml_latest_small_dir / "ratings.csv", "truth")
    assert list(ratings.columns) == ["user", "item", "rating", "timestamp"] and len(ratings) == 100836


# ---------------------------------------------------------------- bad input
def _cli_error(capsys, *args: str) -> str:
    assert main(["evaluate", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    ("truth_text", "recs_text", "options", "message"),
    [
        ("a;b;c\n", "u,i,1\n", [], r"t\.dat: cannot tell the format of the truth file .* pass --truth-format"),
        ("u,i,r\nx,2,3\n", "user,item,score\n1,2,0.5\n", ["--user", "uid"],
         r"t\.csv, column uid: --user uid: the truth file has no such column; it has \['u', 'i', 'r'\]"),
        ("1 0 a 1\n", "1 Q0 a 1 0.5 x\n1 Q0 b 2 0.4\n", ["--truth-format", "trec", "--recs-format", "trec"],
         r"r\.csv, line 2: has 5 fields, .*a TREC run line is: qid Q0 docid rank score tag"),
        ("1 0 a 1\n1 0 b high\n", "1 Q0 a 1 0.5 x\n", ["--truth-format", "trec", "--recs-format", "trec"],
         r"t\.csv, line 2, column rating: rating 'high' is not a number"),
        ("user,item,rating\n1,2,3\n", "user,item,score\n1,2,0.5\n", ["--truth-format", "excel"],
         r"unknown format 'excel' for --truth-format; use one of: csv, tsv"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_file_line_and_option(tmp_path, capsys, truth_text, recs_text, options, message):
    truth = tmp_path / ("t.dat" if ";" in truth_text else "t.csv")  # .dat: the content must tell
    truth.write_text(truth_text)
    (tmp_path / "r.csv").write_text(recs_text)
    err = _cli_error(capsys, "--truth", str(truth), "--recs", str(tmp_path / "r.csv"), "--metrics", "mrr", *options)
    assert re.search(message, err), err


def test_ids_matching_none_of_the_truth_are_an_error_naming_both_sides():
    truth = pd.DataFrame({"user": [1, 2], "item": [10, 20], "rating": [5, 4]})
    recs = pd.DataFrame({"user": ["1", "2"], "item": [10, 20], "score": [1.0, 1.0]})
    with pytest.raises(DataError, match=r"none of the user ids .*\('1' vs 1\)"):
        receval.evaluate(recs, truth, ["mrr"])
    recs = pd.DataFrame({"user": [1, 2], "item": ["x", "y"], "score": [1.0, 1.0]})
    # items: an all-miss run scores 0 (a warning names both sides), unless the ids are one number read two ways
    with pytest.warns(UserWarning, match=r"none of the item ids .*recommendations: 'x', truth: 10\): every list"):
        assert receval.evaluate(recs, truth, ["mrr"]).summary == {"mrr": 0.0}
    with pytest.raises(DataError, match=r"none of the item ids .*\('10' vs 10\)"):
        receval.evaluate(recs.assign(item=["10", "20"]), truth, ["mrr"])


def test_truth_users_without_a_list_are_counted(case):
    truth, run, _ = case
    missing = {"u3", "u7"}
    res = receval.evaluate(run[~run["user"].isin(missing)], truth, ["mrr"], empty_users="zero")
    assert res.conventions.users_without_list == 2
    assert res.per_user.set_index("user").loc[sorted(missing), "mrr"].tolist() == [0.0, 0.0]


def test_data_set_aliases_are_shared():
    from receval.data.loaders import check_format
    from receval.data.registry import DATASETS, dataset_name

    for name, entry in DATASETS.items():
        assert check_format(name) == entry.format
        assert dataset_name(name) == name
    assert dataset_name("movielens-100k") == "ml-100k"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("t.csv", b"", r"t\.csv, line 1: the file is empty"),
        ("t.csv", b"user,item,rating\n1,a,5\n2,\xe9,4\n", r"t\.csv, line 3: byte 3 of the line is not UTF-8 text"),
        ("t.csv", b"user,item,rating\n1,a,5\n2,b,4,9\n", r"t\.csv, line 3: has 4 fields, expected 3"),
        ("t.csv", b"user,item,rating\n1,a,5\n2,b,nan\n", r"t\.csv, line 3, column rating: rating is missing"),
        ("t.csv", b"user,item,rating\n1,a,5\n\n2,b,inf\n", r"t\.csv, line 4, column rating: rating inf is not"),
        ("t.csv", b"user,item,rating\n1,a,5\n,b,3\n", r"t\.csv, line 3, column user: empty user id"),
        ("t.parquet", b"PAR1 not really", r"t\.parquet: not a readable Parquet file"),
        ("t.csv", b"user,item,rating\n1,a,5\n1,b,2\n\n1,a,4\n", r"t\.csv, line 5: user '1', item 'a' repeats line 2"),
        ("t", None, r"the truth path is a folder; give the file"),
    ],
)
def test_unreadable_tables_are_one_line_errors(tmp_path, capsys, name, content, message):
    truth = tmp_path / name
    if content is None:
        truth.mkdir()
    else:
        truth.write_bytes(content)
    (tmp_path / "r.csv").write_text("user,item,score\n1,a,0.5\n")
    err = _cli_error(capsys, "--truth", str(truth), "--recs", str(tmp_path / "r.csv"), "--metrics", "mrr")
    assert re.search(message, err), err


def test_blank_aspects_are_left_out(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("user,item,rating\n1,a,5\n1,b,2\n")
    (tmp_path / "r.csv").write_text("user,item,score\n1,a,0.9\n1,b,0.5\n")
    (tmp_path / "a.csv").write_text("item,aspect\na,x\nb,\nb,y| \n")
    assert main(["evaluate", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "r.csv"), "--aspects",
                 str(tmp_path / "a.csv"), "--metrics", "s_recall@2", "--json"]) == 0  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert "conventions" in printed and {k: v for k, v in printed.items() if k != "conventions"} == {"s_recall@2": 1.0}


def test_recbole_item_file_gives_the_same_aspects_as_a_csv(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("user,item,rating\n1,a,5\n1,b,2\n2,c,4\n")
    (tmp_path / "r.csv").write_text("user,item,score\n1,a,0.9\n1,c,0.5\n2,b,0.7\n2,c,0.6\n")
    (tmp_path / "a.csv").write_text("item,aspect\na,Action|Comedy\nb,Drama\nc,Action\n")
    (tmp_path / "ml.item").write_text("item_id:token\tgenre:token_seq\na\tAction Comedy\nb\tDrama\nc\tAction\n")
    got = []
    for aspects in ("a.csv", "ml.item"):
        assert main(["evaluate", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "r.csv"), "--aspects",
                     str(tmp_path / aspects), "--metrics", "s_recall@2,alpha_ndcg@2", "--json"]) == 0  # fmt: skip
        got.append(json.loads(capsys.readouterr().out))
    assert got[0] == got[1] and got[0]["s_recall@2"] > 0


def test_a_named_column_the_file_lacks_is_said_when_its_default_is_read(tmp_path, capsys):
    """``--user nope`` on a file with a ``user`` column read ``user`` without a word."""
    from receval.cli import main

    data = tmp_path / "r.csv"
    data.write_text("user,item,rating\n1,a,4\n1,b,2\n2,a,5\n2,c,3\n")
    with pytest.warns(ReceValWarning, match=r"columns=\{'user': 'nope'\}: the train file has no column 'nope'"):
        table = read_table(data, "train", columns={"user": "nope"})
    assert list(table["user"]) == ["1", "1", "2", "2"]  # ids as written
    assert main(["split", str(data), "--user", "nope", "--method", "per-user", "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {data}: --user nope: the train file has no column 'nope'; its column 'user' is read" in err
    data.write_text("uid,item,rating\n1,a,4\n")
    with pytest.raises(DataError, match="has no such column"):  # no user column at all: refused, as before
        read_table(data, "train", columns={"user": "who"})


@pytest.mark.parametrize(("header", "role"), [("user_id:token\titem_id:token_seq", "item"),
                                              ("user_id:token_seq\titem_id:token", "user")])  # fmt: skip
def test_a_recbole_id_column_of_sequences_is_refused(tmp_path, header: str, role: str) -> None:
    """``item_id:token_seq`` was read as one id per field ('i1 i2'); an item's genres may still be a sequence."""
    path = tmp_path / "r.inter"
    path.write_text(f"{header}\trating:float\nu1\ti1\t4\nu2 u3\ti1 i2\t3\n")
    with pytest.raises(DataError, match=f"the {role} column is a token_seq .* one {role} per row"):
        read_table(path, "train", format="recbole")
