"""Golden tests: receval's ranking and error metrics equal pytrec_eval, ranx and scikit-learn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import receval

pytrec_eval = pytest.importorskip("pytrec_eval")

N_USERS, N_ITEMS, WIDTH = 60, 80, 25


def _random_run(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Graded truth (1-5, every user ≥ 1 rating, some with no rating ≥ 4) and scored top-25 lists."""
    rng = np.random.default_rng(seed)
    truth_rows, rec_rows = [], []
    for u in range(N_USERS):
        n_rated = int(rng.integers(1, 30))
        items = rng.choice(N_ITEMS, size=n_rated, replace=False)
        grades = rng.integers(1, 6, size=n_rated) if u % 7 else rng.integers(1, 4, size=n_rated)
        truth_rows += [(f"u{u}", f"i{i}", int(g)) for i, g in zip(items, grades, strict=True)]
        width = WIDTH if u % 5 else int(rng.integers(3, WIDTH))  # some short lists
        ranked = rng.permutation(N_ITEMS)[:width]
        scores = np.sort(rng.random(width))[::-1] + 1.0
        rec_rows += [(f"u{u}", f"i{i}", float(s)) for i, s in zip(ranked, scores, strict=True)]
    truth = pd.DataFrame(truth_rows, columns=["user", "item", "rating"])
    recs = pd.DataFrame(rec_rows, columns=["user", "item", "score"]).sample(frac=1.0, random_state=seed)
    return truth, recs


def _trec(truth: pd.DataFrame, recs: pd.DataFrame, measures: set[str], level: int) -> dict[str, dict[str, float]]:
    qrel: dict[str, dict[str, int]] = {}
    for u, i, r in truth.itertuples(index=False):
        qrel.setdefault(u, {})[i] = int(r)
    run: dict[str, dict[str, float]] = {}
    for u, i, s in recs.itertuples(index=False):
        run.setdefault(u, {})[i] = float(s)
    return pytrec_eval.RelevanceEvaluator(qrel, measures, relevance_level=level).evaluate(run)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level", [1, 4])
def test_equals_pytrec_eval(seed: int, level: int) -> None:
    truth, recs = _random_run(seed)
    k = 10
    ours_to_trec = {
        f"precision@{k}": f"P_{k}",
        f"recall@{k}": f"recall_{k}",
        # trec_eval's nDCG takes gains from every judged grade, ignoring relevance_level
        f"ndcg@{k}(threshold=1)": f"ndcg_cut_{k}",
        f"map@{WIDTH}": f"map_cut_{WIDTH}",
        "mrr": "recip_rank",
    }
    res = receval.evaluate(recs, truth, list(ours_to_trec), threshold=level, empty_users="zero")
    trec = _trec(truth, recs, set(ours_to_trec.values()), level)
    users = res.per_user["user"].tolist()
    assert sorted(users) == sorted(trec)
    for ours, theirs in ours_to_trec.items():
        expected = np.array([trec[u][theirs] for u in users])
        np.testing.assert_allclose(res.per_user[ours].to_numpy(), expected, rtol=0, atol=1e-9, err_msg=ours)
        assert res.summary[ours] == pytest.approx(expected.mean(), abs=1e-9)


# ranx compiles its numba kernels on first use (about a minute of CPU in a fresh numba
# cache, measured here): the slowest test of the suite, kept because it adds ranx's gain
# and relevance-level conventions to the pytrec_eval comparison above.
RANX = {
    "ndcg@10": "ndcg@10",
    "ndcg_burges@10": "ndcg@10(gain=exponential)",
    # ranx's "-l4" drops judgments below 4 everywhere, nDCG included: our threshold=4
    "ndcg@10-l4": "ndcg@10(threshold=4)",
    f"map@{WIDTH}": f"map@{WIDTH}",
    f"map@{WIDTH}-l4": f"map@{WIDTH}(threshold=4)",
    "precision@10": "precision@10",
    "recall@10-l4": "recall@10(threshold=4)",
    "mrr": "mrr",
}


@pytest.mark.slow
def test_equals_ranx() -> None:
    assert_equals_ranx(RANX, seed=3)


def assert_equals_ranx(names: dict[str, str], seed: int) -> None:
    """Per-user values of ranx's metric names (keys) equal receval's metric strings (values) to 1e-9."""
    ranx = pytest.importorskip("ranx")
    truth, recs = _random_run(seed)
    qrels = ranx.Qrels.from_df(
        truth.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item", score_col="rating"
    )
    run = ranx.Run.from_df(
        recs.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item", score_col="score"
    )
    scores = ranx.evaluate(qrels, run, list(names), return_mean=False)
    ours = receval.evaluate(recs, truth, list(names.values()), empty_users="zero")
    table = ours.per_user.set_index("user").loc[list(run.keys())]
    for theirs, metric in names.items():
        np.testing.assert_allclose(table[metric].to_numpy(), np.asarray(scores[theirs]), rtol=0, atol=1e-9)


def test_rmse_mae_equal_scikit_learn() -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame(
        {
            "user": rng.integers(0, 30, n),
            "item": rng.permutation(1000)[:n],
            "rating": rng.integers(1, 6, n).astype(float),
        }
    )
    frame["prediction"] = frame["rating"] + rng.normal(0, 1, n)
    res = receval.evaluate(
        None, frame[["user", "item", "rating"]], ["rmse", "mae", "rmse(agg=macro)"], predictions=frame
    )
    assert res.summary["rmse"] == pytest.approx(
        np.sqrt(sklearn_metrics.mean_squared_error(frame["rating"], frame["prediction"])), abs=1e-12
    )
    assert res.summary["mae"] == pytest.approx(
        sklearn_metrics.mean_absolute_error(frame["rating"], frame["prediction"]), abs=1e-12
    )
    per_user = frame.groupby("user").apply(
        lambda g: np.sqrt(sklearn_metrics.mean_squared_error(g["rating"], g["prediction"])), include_groups=False
    )
    got = res.per_user.set_index("user")["rmse"]
    np.testing.assert_allclose(got.loc[per_user.index].to_numpy(), per_user.to_numpy(), atol=1e-12)
    assert res.summary["rmse(agg=macro)"] == pytest.approx(per_user.mean(), abs=1e-12)
