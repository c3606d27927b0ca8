"""Names people type: trec_eval / ranx / ir-measures spellings, F1, R-precision and AUC, each
checked against the library whose name it borrows (pytrec_eval, ranx, scikit-learn)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import receval
from receval.errors import MetricError
from receval.metrics.registry import FIELD_SPELLINGS, MetricInput, get_definition, parse_metric
from test_metrics_oracles import RANX as ORACLE_RANX
from test_metrics_oracles import WIDTH, _random_run, _trec, assert_equals_ranx

pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("P@10", "precision@10"),
        ("P_10", "precision@10"),
        ("R@10", "recall@10"),
        ("recall_10", "recall@10"),
        # a letter's case never changes a number: trec_eval's nDCG is asked by its own name or convention
        ("nDCG@10", "ndcg@10"),
        ("ndcg_cut_10", "ndcg@10(graded=true)"),
        ("ndcg@10(convention=trec_eval)", "ndcg@10(graded=true)"),
        ("ndcg@10", "ndcg@10"),
        ("NDCG@10", "ndcg@10"),
        ("ndcg_burges@10", "ndcg@10(gain=exponential)"),
        ("AP", "map"),
        ("AP@100", "map@100"),
        ("map", "map"),
        ("map_cut_100", "map@100"),
        ("RR", "mrr"),
        ("RR@10", "mrr@10"),
        ("recip_rank", "mrr"),
        ("hits@10", "tp@10(agg=macro)"),
        ("hit_rate@10", "hit_rate@10"),
        ("success_10", "hit_rate@10"),
        ("Success@10", "hit_rate@10"),
        ("Rprec", "r_precision"),
        ("F1@10", "f1@10"),
        ("nDCG@10(gain=exponential)", "ndcg@10(gain=exponential)"),
    ],
)
def test_field_spellings_resolve(typed: str, canonical: str) -> None:
    assert str(parse_metric(typed)) == canonical


def test_every_field_spelling_names_a_metric_and_did_you_mean() -> None:
    for alias, name, preset, _ in FIELD_SPELLINGS:
        assert get_definition(alias).name == name
        assert alias in get_definition(name).aliases
        metric = parse_metric(alias if get_definition(name).k == "none" else f"{alias}@5")
        assert metric.convention == preset.get("convention")
        assert {key: metric.params[key] for key in preset if key != "convention"} == {
            key: v for key, v in preset.items() if key != "convention"
        }
    with pytest.raises(MetricError, match="did you mean 'recip_rank'"):
        parse_metric("recip_rnk")
    with pytest.raises(MetricError, match="did you mean 'ndcg'"):
        parse_metric("ndgc@10")
    with pytest.raises(MetricError, match="no threshold"):
        parse_metric("ndcg_cut_10(threshold=4)").per_user(
            MetricInput(np.array([[0]]), sp.csr_matrix(np.array([[5.0]])))
        )


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level", [1, 4])
def test_trec_spellings_equal_pytrec_eval(seed: int, level: int) -> None:
    truth, recs = _random_run(seed)
    typed_to_trec = {
        "P_10": "P_10",
        "P@5": "P_5",
        "recall_10": "recall_10",
        "R@10": "recall_10",
        # trec_eval's nDCG: gains from every judged grade, relevance_level only for binary measures
        "ndcg_cut_10": "ndcg_cut_10",
        "ndcg@5(convention=trec_eval)": "ndcg_cut_5",
        "map": "map",
        "AP": "map",
        f"AP@{WIDTH}": f"map_cut_{WIDTH}",
        "map_cut_10": "map_cut_10",
        "recip_rank": "recip_rank",
        "RR": "recip_rank",
        "Rprec": "Rprec",
        "success_10": "success_10",
        "Success@5": "success_5",
    }
    res = receval.evaluate(recs, truth, list(typed_to_trec), threshold=level, empty_users="zero")
    assert list(res.summary) == list(typed_to_trec)  # the summary keeps the strings as typed
    trec = _trec(truth, recs, set(typed_to_trec.values()), level)
    users = res.per_user["user"].tolist()
    assert sorted(users) == sorted(trec)
    for ours, theirs in typed_to_trec.items():
        expected = np.array([trec[u][theirs] for u in users])
        np.testing.assert_allclose(res.per_user[ours].to_numpy(), expected, rtol=0, atol=1e-9, err_msg=ours)
        assert res.summary[ours] == pytest.approx(expected.mean(), abs=1e-9)
    if level > 1:  # the two nDCG conventions differ once the threshold is above the lowest grade
        ranx_style = receval.evaluate(recs, truth, ["ndcg@10"], threshold=level, empty_users="zero")
        assert abs(ranx_style.summary["ndcg@10"] - res.summary["ndcg_cut_10"]) > 1e-3


# ranx compiles its numba kernels on first use (about a minute of CPU in a fresh cache)
RANX = {
    "f1@10": "F1@10",
    "f1@5-l4": "f1@5(threshold=4)",
    "r-precision": "Rprec",
    "r-precision-l4": "r_precision(threshold=4)",
    "hits@10": "hits@10",
    "hits@10-l4": "hits@10(threshold=4)",
    "hit_rate@5": "hit_rate@5",
    "ndcg_burges@10": "ndcg_burges@10",
}


@pytest.mark.slow
def test_new_metrics_equal_ranx() -> None:
    assert_equals_ranx(RANX, seed=4)


@pytest.mark.parametrize("theirs", [*RANX, *ORACLE_RANX])
def test_ranx_spellings_read_as_ranx_reads_them(theirs: str) -> None:
    """ranx's own strings (``r-precision``, the ``-l4`` relevance level) are the metrics they were checked against."""
    ours = {**RANX, **ORACLE_RANX}[theirs]
    assert str(parse_metric(theirs)) == str(parse_metric(ours))
    truth, recs = _random_run(3)
    typed = receval.evaluate(recs, truth, [theirs], empty_users="zero")  # the label stays as typed
    assert typed.summary[theirs] == receval.evaluate(recs, truth, [ours], empty_users="zero").summary[ours]


def test_f1_and_r_precision_by_hand() -> None:
    truth = sp.csr_matrix(np.array([[5.0, 4.0, 1.0, 0, 5.0], [0, 0, 0, 2.0, 0]]))
    data = MetricInput(np.array([[1, 2, 3], [3, -1, -1]]), truth, threshold=4)
    # user 0: 3 positives, 1 in the top 2 -> P = 1/2, R = 1/3, F1 = 2PR/(P+R) = 0.4
    assert parse_metric("f1@2").per_user(data)[0] == pytest.approx(0.4)
    # R = 3: the first three hold one positive -> 1/3; user 1 has no positive: skipped
    values = parse_metric("r_precision").per_user(data)
    assert values[0] == pytest.approx(1 / 3) and np.isnan(values[1])


def test_auc_equals_scikit_learn_per_user() -> None:
    roc_auc_score = pytest.importorskip("sklearn.metrics").roc_auc_score
    rng = np.random.default_rng(11)
    n_users, n_items, width = 40, 30, 20
    truth = sp.csr_matrix(np.where(rng.random((n_users, n_items)) < 0.5, rng.integers(1, 6, (n_users, n_items)), 0))
    rankings = np.stack([rng.permutation(n_items)[:width] for _ in range(n_users)])
    rankings[::7, 12:] = -1  # some short lists
    data = MetricInput(rankings, truth.astype(float), threshold=4)
    for k in (None, 10):
        ours = parse_metric("auc" if k is None else f"auc@{k}").per_user(data)
        scored = 0
        for u in range(n_users):
            items = [i for i in rankings[u, :k] if i >= 0]
            grades = truth[u].toarray().ravel()
            judged = [(j, grades[i]) for j, i in enumerate(items) if grades[i] > 0]
            labels = [g >= 4 for _, g in judged]
            if len(set(labels)) < 2:
                assert np.isnan(ours[u])
                continue
            expected = roc_auc_score(labels, [-j for j, _ in judged])  # higher in the list = higher score
            assert ours[u] == pytest.approx(expected, abs=1e-12)
            scored += 1
        assert scored > 20
    res = receval.evaluate(
        pd.DataFrame({"user": [0, 0, 0], "item": [0, 1, 2], "rank": [1, 2, 3]}),
        pd.DataFrame({"user": [0, 0, 0], "item": [0, 1, 2], "rating": [5, 2, 4]}),
        ["auc"],
        threshold=4,
    )
    assert res.summary["auc"] == pytest.approx(0.5)  # pairs (0 above 1) right, (2 below 1) wrong
