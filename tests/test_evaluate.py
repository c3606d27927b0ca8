"""receval.evaluate and ``receval evaluate``: input forms, conventions, bad input, CLI."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import receval
from receval.cli import main
from receval.errors import DataError, MetricError
from receval.evaluation import to_rankings


@pytest.fixture
def truth() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "user": ["a", "a", "a", "b", "b", "c"],
            "item": ["x", "y", "z", "x", "w", "y"],
            "rating": [5, 2, 4, 1, 5, 3],
        }
    )


@pytest.fixture
def recs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "user": ["a", "a", "a", "b", "b", "c"],
            "item": ["y", "x", "q", "w", "y", "x"],
            "score": [0.9, 0.8, 0.1, 0.3, 0.2, 0.5],
        }
    )


def test_score_rank_and_matrix_inputs_agree(truth: pd.DataFrame, recs: pd.DataFrame) -> None:
    metrics = ["precision@2", "recall@3", "ndcg@3", "map@3", "mrr", "fallout@3", "coverage"]
    by_score = receval.evaluate(recs, truth, metrics, threshold=4)
    ranked = recs.assign(rank=recs.groupby("user")["score"].rank(ascending=False)).drop(columns="score")
    by_rank = receval.evaluate(ranked, truth, metrics, threshold=4)
    assert by_score.summary == pytest.approx(by_rank.summary, nan_ok=True)
    data = receval.Interactions.from_frame(truth)
    items = data.item_index(["y", "x"]).tolist()  # "q" is not in the truth's items: leave it out here
    matrix = np.array([[items[0], items[1], -1], [data.item_index(["w"])[0], items[0], -1], [items[1], -1, -1]])
    by_matrix = receval.evaluate(matrix, data, ["precision@2", "recall@3", "ndcg@3", "mrr"], threshold=4)
    for name in ("precision@2", "recall@3", "ndcg@3", "mrr"):
        assert by_matrix.summary[name] == pytest.approx(by_score.summary[name])


def test_per_user_table_and_conventions(truth: pd.DataFrame, recs: pd.DataFrame) -> None:
    res = receval.evaluate(recs, truth, "precision@2, recall@2(agg=micro), coverage", threshold=4)
    assert res.per_user["user"].tolist() == ["a", "b", "c"]
    assert list(res.per_user.columns) == ["user", "precision@2", "recall@2(agg=micro)"]
    # user c has no item rated ≥ 4: skipped by default, reported as such
    assert np.isnan(res.per_user["precision@2"].iloc[2])
    assert res.conventions.users_scored["precision@2"] == 2
    assert res.conventions.aggregation == {
        "precision@2": "macro",
        "recall@2(agg=micro)": "micro",
        "coverage": "system",
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.conventions.threshold = 1  # type: ignore[misc]
    plain = json.loads(json.dumps(res.conventions.to_dict()))  # what --json prints
    assert plain["threshold"] == 4 and plain["users_scored"] == {"precision@2": 2, "recall@2(agg=micro)": 2}
    assert "not_applicable" not in plain and "shards" not in plain
    # a: y(2), x(5) -> 1 hit of 2 positives (x, z); b: w(5), y -> 1 hit of 1
    assert res.summary["precision@2"] == pytest.approx(0.5)
    assert res.summary["recall@2(agg=micro)"] == pytest.approx(2 / 3)
    # catalogue: x, y, z, w from the truth + q only recommended -> 4 recommended of 5
    assert res.summary["coverage"] == pytest.approx(4 / 5)
    zero = receval.evaluate(recs, truth, ["precision@2"], threshold=4, empty_users="zero")
    assert zero.summary["precision@2"] == pytest.approx(1 / 3)
    assert "precision@2" in repr(res) and res.to_frame().loc["coverage", "value"] == pytest.approx(0.8)


def test_truth_users_without_recommendations_score_zero(truth: pd.DataFrame, recs: pd.DataFrame) -> None:
    res = receval.evaluate(recs[recs.user != "b"], truth, ["recall@3"], threshold=4)
    assert res.per_user.set_index("user").loc["b", "recall@3"] == 0.0


def test_train_and_aspects_from_frames(truth: pd.DataFrame, recs: pd.DataFrame) -> None:
    train = pd.DataFrame({"user": ["a", "b", "c", "d"], "item": ["x", "x", "w", "v"], "rating": [4, 5, 3, 2]})
    aspects = pd.DataFrame({"item": ["x", "y", "y", "w", "q"], "aspect": ["g1", "g1", "g2", "g3", "g3"]})
    res = receval.evaluate(
        recs,
        truth,
        ["novelty@2", "gini_train", "diversity@2", "serendipity@2"],
        train=train,
        aspects=aspects,
        threshold=4,
    )
    per = res.per_user.set_index("user")
    # popularity from train: x 2, w 1, v 1 (d's item counts even though d is not evaluated), y 0
    assert per.loc["a", "novelty@2"] == pytest.approx((0 + 2) / 2)
    assert per.loc["b", "novelty@2"] == pytest.approx((1 + 0) / 2)
    # a: y {g1, g2} vs x {g1}: Jaccard 1/2
    assert per.loc["a", "diversity@2"] == pytest.approx(0.5)
    # catalogue x, y, z, w, q, v; popularity 2, 0, 0, 1, 0, 1 -> sorted 0,0,0,1,1,2 over 4
    assert res.summary["gini_train"] == pytest.approx((1 * 1 + 3 * 1 + 5 * 2) / 4 / 5)
    # a: x is relevant; profile {x}: unexpectedness 0. b: w relevant, profile {x}, Jaccard(w, x) = 0 -> 1/2
    assert per.loc["a", "serendipity@2"] == 0.0 and per.loc["b", "serendipity@2"] == 0.5


def test_interactions_truth_and_train_share_an_id_space() -> None:
    data = receval.Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 0], [5, 4, 5, 2, 4])
    train, test = data.subset(np.array([0, 2, 4])), data.subset(np.array([1, 3]))
    res = receval.evaluate(np.array([[1, 2], [2, 0], [0, 1]]), test, ["recall@1", "novelty@2"], train=train)
    # users 0, 1 have test ratings; user 2 has none and is not evaluated
    assert res.per_user["user"].tolist() == [0, 1]
    assert res.per_user["recall@1"].tolist() == [1.0, 1.0]
    # training popularity: item 0 twice, item 1 once, item 2 never
    assert res.per_user["novelty@2"].tolist() == [0.5, 1.0]


def test_to_rankings_sorts_and_pads() -> None:
    out = to_rankings(np.array([0, 0, 0, 2]), np.array([5, 6, 7, 8]), np.array([3.0, 1.0, 2.0, 0.0]), 3, width=2)
    assert out.tolist() == [[6, 7], [-1, -1], [8, -1]]
    ties = to_rankings(np.array([0, 0, 0]), np.array([5, 6, 7]), np.array([1.0, 0.0, 1.0]), 1)
    assert ties.tolist() == [[6, 5, 7]]  # equal order values keep the input order


# ------------------------------------------------------------------ bad input
def test_duplicate_items_in_a_list(truth: pd.DataFrame, recs: pd.DataFrame) -> None:
    dup = pd.concat([recs, recs.iloc[[0]].assign(score=0.05)])
    with pytest.raises(MetricError, match="user 'a' is recommended item 'y' more than once"):
        receval.evaluate(dup, truth, ["precision@5"])


def test_nan_scores(truth: pd.DataFrame, recs: pd.DataFrame) -> None:
    bad = recs.assign(score=recs["score"].where(recs.index != 3))
    with pytest.raises(MetricError, match="score of user 'b', item 'w'"):
        receval.evaluate(bad, truth, ["precision@5"])


@pytest.mark.parametrize("metric", ["ndcg@0", "prec@5", "ndcg@-3"])
def test_bad_metric_names_and_cutoffs(truth, recs, metric: str) -> None:
    with pytest.raises(MetricError):
        receval.evaluate(recs, truth, [metric])


def test_truth_without_ratings(truth: pd.DataFrame, recs: pd.DataFrame) -> None:
    implicit = truth.drop(columns="rating")
    with pytest.raises(MetricError, match=r"needs graded truth.*gain=binary"):
        receval.evaluate(recs, implicit, ["ndcg@3"])
    res = receval.evaluate(recs, implicit, ["ndcg@3(gain=binary)", "recall@3"])
    assert 0 < res.summary["ndcg@3(gain=binary)"] <= 1
    with pytest.raises(MetricError, match="needs negative ratings"):
        receval.evaluate(recs, implicit, ["fallout@3"], threshold=1)


def test_anti_metrics_need_an_explicit_threshold(truth, recs) -> None:
    with pytest.raises(MetricError, match="give threshold="):
        receval.evaluate(recs, truth, ["fallout@3"])
    with pytest.raises(MetricError, match="above threshold"):
        receval.evaluate(recs, truth, ["fallout@3"], threshold=3, negative_threshold=4)
    res = receval.evaluate(recs, truth, ["fallout@3", "fp@3", "tn@3"], threshold=4, negative_threshold=3)
    # negatives (< 3): a: y(2); b: x(1). a's list y, x, q -> FP 1; b's w, y -> FP 0 (y unrated by b)
    assert res.summary["fp@3"] == 1.0 and res.summary["tn@3"] == 1.0
    assert res.summary["fallout@3"] == pytest.approx(0.5)


def test_recommended_users_absent_from_truth(truth, recs) -> None:
    extra = pd.concat([recs, pd.DataFrame({"user": ["zz"], "item": ["x"], "score": [1.0]})])
    with pytest.warns(UserWarning, match="1 user\\(s\\) of the recommendations have no truth"):
        res = receval.evaluate(extra, truth, ["precision@2"], threshold=4)
    assert res.conventions.users_dropped_not_in_truth == 1
    with pytest.raises(MetricError, match="no truth"):
        receval.evaluate(extra, truth, ["precision@2"], unknown_users="error")


def test_missing_columns_and_side_data(truth, recs) -> None:
    with pytest.raises(MetricError, match="'score' or a 'rank'"):
        receval.evaluate(recs.drop(columns="score"), truth, ["precision@2"])
    with pytest.raises(MetricError, match="needs training data"):
        receval.evaluate(recs, truth, ["novelty@2"])
    with pytest.raises(MetricError, match="needs rating predictions"):
        receval.evaluate(recs, truth, ["rmse"])
    with pytest.raises(MetricError, match="item aspects"):
        receval.evaluate(recs, truth, ["diversity@2"])
    with pytest.raises(MetricError, match="empty_users"):
        receval.evaluate(recs, truth, ["precision@2"], empty_users="drop")  # type: ignore[arg-type]


def test_predictions_look_up_truth_ratings(truth: pd.DataFrame) -> None:
    preds = truth.drop(columns="rating").assign(prediction=[4.0, 2.0, 4.0, 2.0, 4.0, 3.0])
    res = receval.evaluate(None, truth, ["rmse", "mae"], predictions=preds)
    assert res.summary["mae"] == pytest.approx(3 / 6)
    assert res.summary["rmse"] == pytest.approx(np.sqrt(3 / 6))
    with pytest.raises(MetricError, match="no true rating"):
        receval.evaluate(None, truth, ["rmse"], predictions=preds.assign(item="nope"))


# ------------------------------------------------------------------------ CLI
def _write(tmp_path, name: str, frame: pd.DataFrame) -> str:
    path = tmp_path / name
    if name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, sep="\t" if name.endswith(".tsv") else ",", index=False)
    return str(path)


def test_cli_json_and_per_user(tmp_path, truth, recs, capsys) -> None:
    t = _write(tmp_path, "truth.tsv", truth)
    r = _write(tmp_path, "recs.parquet", recs)
    out = tmp_path / "per_user.csv"
    status = main(
        [
            *("evaluate", "--truth", t, "--recs", r, "--metrics", "precision@2,fallout@3,coverage"),
            *("--threshold", "4", "--negative-threshold", "3", "--per-user", str(out), "--json"),
        ]
    )
    assert status == 0
    printed = json.loads(capsys.readouterr().out)
    conventions = printed.pop("conventions")  # the one extra key beside {metric: value}
    assert conventions["threshold"] == 4 and conventions["metrics"]["fallout@3"]["metric"] == "fallout@3"
    expected = receval.evaluate(
        recs, truth, ["precision@2", "fallout@3", "coverage"], threshold=4, negative_threshold=3
    )
    assert printed == pytest.approx(expected.summary)
    table = pd.read_csv(out)
    assert table["user"].tolist() == ["a", "b", "c"] and "fallout@3" in table.columns


def test_cli_text_output_predictions_and_errors(tmp_path, truth, capsys) -> None:
    t = _write(tmp_path, "truth.csv", truth)
    p = _write(tmp_path, "pred.csv", truth.assign(prediction=truth["rating"] + 1.0))
    assert main(["evaluate", "--truth", t, "--predictions", p, "--metrics", "rmse,mae"]) == 0
    out = capsys.readouterr().out
    assert "rmse" in out and "1.000000" in out and "global" in out
    bad = _write(tmp_path, "bad.csv", truth.drop(columns="item"))
    assert main(["evaluate", "--truth", bad, "--predictions", p, "--metrics", "rmse"]) == 2
    assert "needs columns user, item" in capsys.readouterr().err
    assert main(["evaluate", "--truth", t, "--metrics", "rmse"]) == 2
    assert "exactly one of --recs" in capsys.readouterr().err
    assert main(["evaluate", "--truth", t, "--predictions", p, "--metrics", "nope@3"]) == 2
    assert "unknown metric 'nope'" in capsys.readouterr().err


def test_cli_reads_numeric_ids_as_text_consistently(tmp_path, capsys) -> None:
    truth = pd.DataFrame({"user": [1, 1, 2], "item": [10, 20, 10], "rating": [5, 1, 4]})
    recs = pd.DataFrame({"user": [1, 2], "item": [10, 10], "rank": [1, 1]})
    t, r = _write(tmp_path, "t.csv", truth), _write(tmp_path, "r.parquet", recs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["evaluate", "--truth", t, "--recs", r, "--metrics", "mrr", "--json", "--threshold", "4"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed.pop("conventions")["users_evaluated"] == 2 and printed == {"mrr": 1.0}


def test_data_error_for_unknown_extension(tmp_path) -> None:
    from receval.data.tables import read_table

    path = tmp_path / "x.xlsx"  # .json is a format now (ranx's run files)
    path.write_text("a;b\n")
    with pytest.raises(DataError, match="extension"):
        read_table(path, "truth", ("user", "item"))


@pytest.mark.realdata
def test_movielens_100k_popularity_against_pytrec_eval(ml100k_dir) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from receval.data import load

    data = load(ml100k_dir, "movielens-100k")
    rng = np.random.default_rng(0)
    in_test = rng.random(data.n_ratings) < 0.2
    train, test = data.subset(~in_test), data.subset(in_test)
    # popularity ranking of items the user has not rated in training, top 20
    scores = np.tile(np.bincount(train.items, minlength=data.n_items).astype(float), (data.n_users, 1))
    scores[train.users, train.items] = -np.inf
    top = np.argsort(-scores, axis=1, kind="stable")[:, :20]
    metrics = ["precision@10", "recall@10", "map@20", "mrr", "ndcg@10(threshold=1)"]
    res = receval.evaluate(
        top, test, [*metrics, "coverage", "matthew_effect@20", "diversity@10", "novelty@10"], train=train, threshold=4
    )
    # genres come with ML-100k as aspects; popularity lists concentrate exposure (Matthew effect: G2 > G1)
    assert 0 < res.summary["diversity@10"] < 1 and res.summary["matthew_effect@20"] > 0
    assert res.summary["coverage"] < 0.1 and res.summary["novelty@10"] > 200
    qrel: dict[str, dict[str, int]] = {}
    for u, i, r in zip(test.users, test.items, test.ratings, strict=True):
        qrel.setdefault(str(u), {})[str(i)] = int(r)
    run = {str(u): {str(i): float(20 - j) for j, i in enumerate(top[u])} for u in range(data.n_users)}
    trec = pytrec_eval.RelevanceEvaluator(qrel, {"P_10", "recall_10", "map_cut_20", "recip_rank", "ndcg_cut_10"}, 4)
    got = trec.evaluate({u: run[u] for u in qrel})
    # users without a rating ≥ 4 in the test: trec_eval scores them 0; ours skips them by default
    scored = [str(data.user_index([u])[0]) for u in res.per_user["user"]]
    for ours, theirs in zip(metrics, ["P_10", "recall_10", "map_cut_20", "recip_rank", "ndcg_cut_10"], strict=True):
        expected = np.array([got[u][theirs] for u in scored])
        mask = ~np.isnan(res.per_user[ours].to_numpy())
        np.testing.assert_allclose(res.per_user[ours].to_numpy()[mask], expected[mask], atol=1e-9)
