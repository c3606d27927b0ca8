"""Metric kernels and the registry: hand-computed cases, conventions and properties."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import receval
from receval.errors import MetricError
from receval.metrics import Metric, MetricInput, available_metrics, parse_metric, register_metric
from receval.metrics.beyond import gini_index
from receval.metrics.ranking import pr_curve
from receval.metrics.registry import lookup


def _value(metric: str, data: MetricInput) -> float:
    return parse_metric(metric).compute(data)


def _user(metric: str, data: MetricInput) -> list[float]:
    return parse_metric(metric).per_user(data).tolist()


# ------------------------------------------------------------------- registry
def test_parse_canonical_strings_and_params() -> None:
    m = parse_metric("  NDCG@10(gain=exponential, threshold=4) ")
    assert (m.name, m.k, m.params["gain"], m.params["threshold"]) == ("ndcg", 10, "exponential", 4)
    assert str(m) == "ndcg@10(gain=exponential,threshold=4)"
    assert str(parse_metric("ndcg@10(gain=linear)")) == "ndcg@10"
    assert parse_metric("mrr@5").k == 5 and parse_metric("mrr").k is None
    assert Metric.of("fallout", 3).aggregation == "macro"
    assert parse_metric("precision@5(agg=micro)").aggregation == "micro"
    assert parse_metric("rmse").aggregation == "global"
    assert parse_metric("tp@5").aggregation == "sum"
    assert parse_metric("coverage").aggregation == "system"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("nope@10", "unknown metric 'nope'"),
        ("ndcg@0", "positive integer"),
        ("ndcg@-1", "positive integer"),
        ("ndcg@x", "positive integer"),
        ("ndcg", "needs a cutoff"),
        ("rmse@10", "takes no cutoff"),
        ("ndcg@10(foo=1)", "unknown parameter"),
        ("ndcg@10(gain)", "not key=value"),
        ("precision@10(agg=median)", "agg must be one of"),
        ("10@ndcg", "cannot read metric"),
    ],
)
def test_bad_metric_strings(text: str, fragment: str) -> None:
    with pytest.raises(MetricError, match=fragment):
        parse_metric(text)


def test_register_metric_adds_a_string_addressable_metric() -> None:
    @register_metric("unit_test_first_item", defaults={"offset": 0})
    def first_item(data, k, offset=0):
        return data.rankings[:, 0].astype(float) + offset

    try:
        data = MetricInput(np.array([[3, 1], [2, 0]]), sp.csr_matrix((2, 4)))
        assert _user("unit_test_first_item@1(offset=1)", data) == [4.0, 3.0]
        assert "unit_test_first_item" in available_metrics()
    finally:
        from receval.metrics.registry import _REGISTRY

        del _REGISTRY["unit_test_first_item"]


def test_lookup_matches_dense_indexing() -> None:
    rng = np.random.default_rng(0)
    dense = rng.integers(0, 6, (37, 23)).astype(float)
    dense[rng.random(dense.shape) < 0.5] = 0
    cols = rng.integers(-1, 23, (37, 9))
    got = lookup(sp.csr_matrix(dense), cols, budget=50)  # several chunks
    expected = np.where(
        (cols >= 0) & (dense[np.arange(37)[:, None], cols] != 0), dense[np.arange(37)[:, None], cols], np.nan
    )
    np.testing.assert_array_equal(got, expected)


# --------------------------------------------------------------- anti-metrics
@pytest.fixture
def anti() -> MetricInput:
    # user 0 rated items 0:5, 1:1, 2:3, 3:2; its list is 1, 2, 4 (unrated), 0
    truth = sp.csr_matrix(np.array([[5.0, 1.0, 3.0, 2.0, 0.0]]))
    return MetricInput(np.array([[1, 2, 4, 0]]), truth, threshold=4, negative_threshold=3)


def test_anti_metrics_hand_computed(anti: MetricInput) -> None:
    # positive {0}; negative (< 3) {1, 3}; item 2 (rated 3) neither; item 4 unknown
    assert _user("tp@3", anti) == [0.0] and _user("fp@3", anti) == [1.0]
    assert _user("tn@3", anti) == [1.0] and _user("fn@3", anti) == [1.0]
    assert _user("anti_precision@3", anti) == pytest.approx([1 / 3])
    assert _user("fallout@3", anti) == [0.5]
    assert _user("precision@4", anti) == [0.25] and _user("recall@4", anti) == [1.0]
    assert _user("tp@4", anti) == [1.0] and _user("fn@4", anti) == [0.0]


def test_negative_threshold_defaults_to_threshold(anti: MetricInput) -> None:
    data = MetricInput(anti.rankings, anti.truth, threshold=4)
    # now every rated item below 4 is negative: {1, 2, 3}
    assert _user("fp@3", data) == [2.0] and _user("fallout@3", data) == pytest.approx([2 / 3])
    assert _user("fallout@3(negative_threshold=2)", data) == [1.0]  # only item 1 (rating 1) is negative
    assert _user("tn@3", data) == [1.0]


def test_fallout_empty_policy_and_micro() -> None:
    truth = sp.csr_matrix(np.array([[5.0, 1.0, 0], [5.0, 4.0, 0]]))
    rankings = np.array([[1, 2], [0, 2]])
    skip = MetricInput(rankings, truth, threshold=4)
    zero = MetricInput(rankings, truth, threshold=4, empty_users="zero")
    assert _user("fallout@2", skip)[1] != _user("fallout@2", skip)[1]  # NaN: user 1 has no negative
    assert _user("fallout@2", zero) == [1.0, 0.0]
    assert _value("fallout@2", skip) == 1.0 and _value("fallout@2", zero) == 0.5
    assert _value("fallout@2(agg=micro)", skip) == 1.0  # Σ FP / Σ negatives = 1 / 1
    assert _value("anti_precision@2(agg=micro)", skip) == 0.25


# ----------------------------------------------------------------- accuracy
def test_accuracy_hand_computed() -> None:
    # user 0: rated 0:5, 2:2, 3:4; list 1 (unrated), 0, 2 ; user 1: rated 1:3 only, list 3
    truth = sp.csr_matrix(np.array([[5.0, 0, 2, 4], [0, 3.0, 0, 0]]))
    data = MetricInput(np.array([[1, 0, 2], [3, -1, -1]]), truth, threshold=4)
    assert _user("precision@3", data)[0] == pytest.approx(1 / 3)
    assert math.isnan(_user("precision@3", data)[1])  # no positive: skipped
    assert _user("precision@3(denominator=list)", data)[0] == pytest.approx(1 / 3)
    assert _user("recall@3", data)[0] == 0.5
    assert _user("mrr", data)[0] == 0.5 and _user("mrr@1", data)[0] == 0.0
    assert _user("hit_rate@2", data)[0] == 1.0 and _user("hit_rate@1", data)[0] == 0.0
    assert _user("map@3", data)[0] == pytest.approx((1 / 2) / 2)
    assert _user("map@3(denominator=min)", data)[0] == pytest.approx((1 / 2) / 2)
    # nDCG: gains 0, 5, 0 (2 < λ) against ideal 5, 4
    ideal = 5 + 4 / math.log2(3)
    assert _user("ndcg@3", data)[0] == pytest.approx((5 / math.log2(3)) / ideal)
    ideal_exp = 31 + 15 / math.log2(3)
    assert _user("ndcg@3(gain=exponential)", data)[0] == pytest.approx((31 / math.log2(3)) / ideal_exp)
    assert _user("ndcg@3(gain=binary)", data)[0] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert _user("ndcg@3(threshold=1)", data)[0] == pytest.approx(
        (5 / math.log2(3) + 2 / 2) / (5 + 4 / math.log2(3) + 2 / 2)
    )


def test_micro_versus_macro_precision_recall() -> None:
    # Xiang, Recommender System Practice, 2012: Recall = Σ|R∩T| / Σ|T|, Precision = Σ|R∩T| / Σ|R|
    truth = sp.csr_matrix(np.array([[1.0, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 0]]))
    data = MetricInput(np.array([[0, 5], [4, 3]]), truth)
    assert _value("recall@2(agg=micro)", data) == pytest.approx(2 / 5)
    assert _value("recall@2", data) == pytest.approx((1 / 4 + 1) / 2)
    assert _value("precision@2(agg=micro)", data) == pytest.approx(2 / 4)
    curve = pr_curve(data, [1, 2], agg="micro")
    assert curve["precision"].tolist() == [1.0, 0.5] and curve["recall"].tolist() == [0.4, 0.4]


# ----------------------------------------------------------- beyond accuracy
@pytest.fixture
def beyond() -> MetricInput:
    aspects = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0]], dtype=float))
    # train: users 0..2; item 0 rated by 3 users, item 1 by 1, items 2, 3 by none
    train = sp.csr_matrix(np.array([[5.0, 0, 0, 0], [4.0, 0, 0, 0], [3.0, 2.0, 0, 0]]))
    truth = sp.csr_matrix(np.array([[5.0, 0, 4.0, 0], [0, 0, 0, 5.0], [0, 0, 0, 4.0]]))
    rankings = np.array([[0, 1, 2], [0, 2, -1], [3, -1, -1]])
    return MetricInput(rankings, truth, threshold=4, train=train, aspects=aspects)


def test_coverage_entropy_gini(beyond: MetricInput) -> None:
    # recommended counts: item 0: 2, item 1: 1, item 2: 2, item 3: 1 (6 in all)
    assert _value("coverage", beyond) == 1.0 and _value("coverage@1", beyond) == 0.5
    p = np.array([2, 1, 2, 1]) / 6
    assert _value("entropy", beyond) == pytest.approx(-(p * np.log(p)).sum())
    assert _value("entropy(base=2)", beyond) == pytest.approx(-(p * np.log2(p)).sum())
    # sorted p: 1/6, 1/6, 2/6, 2/6 -> (−3/6 − 1/6 + 2/6 + 6/6) / 3
    assert _value("gini", beyond) == pytest.approx((-3 - 1 + 2 + 6) / 6 / 3)
    # top 1: items 0, 0, 3 -> over the catalogue p = 0, 0, 1/3, 2/3 -> (0 + 0 + 1/3 + 2) / 3
    assert _value("gini@1", beyond) == pytest.approx((1 / 3 + 2) / 3)
    assert _value("gini@1(items=recommended)", beyond) == pytest.approx((-1 / 3 + 2 / 3) / 1)
    # G1 of training popularity 3, 1, 0, 0 over the catalogue: sorted 0, 0, 1/4, 3/4
    g1 = (0 + 0 + 1 / 4 + 9 / 4) / 3
    assert _value("gini_train", beyond) == pytest.approx(g1)
    assert _value("matthew_effect", beyond) == pytest.approx(_value("gini", beyond) - g1)
    assert gini_index(np.array([4.0, 4.0])) == 0.0 and gini_index(np.array([0.0, 1.0])) == 1.0


def test_diversity_similarities(beyond: MetricInput) -> None:
    # user 0: items 0 {a,b}, 1 {a}, 2 {c}: Jaccard 1/2, 0, 0 over 3 pairs
    div = _user("diversity@3", beyond)
    assert div[0] == pytest.approx(1 - (1 / 2) / 3)
    assert div[1] == 1.0 and math.isnan(div[2])  # one pair (0, 2) with no overlap; one item: NaN
    cos = _user("diversity@3(similarity=aspect_cosine)", beyond)
    assert cos[0] == pytest.approx(1 - (1 / math.sqrt(2)) / 3)
    # rating vectors over training users: item 0 = (5, 4, 3), item 1 = (0, 0, 2), item 2 = 0
    c01 = 6 / (math.sqrt(50) * 2)
    assert _user("diversity@3(similarity=rating_cosine)", beyond)[0] == pytest.approx(1 - c01 / 3)
    with pytest.raises(MetricError, match="unknown similarity"):
        _user("diversity@3(similarity=nope)", beyond)


def test_novelty_forms(beyond: MetricInput) -> None:
    # popularity 3, 1, 0, 0 with 3 training users
    assert _user("novelty@2", beyond)[:2] == [2.0, 1.5]
    assert _user("novelty@2(form=epc)", beyond)[0] == pytest.approx((0 + 2 / 3) / 2)
    assert _user("novelty@2(form=self_information)", beyond)[0] == pytest.approx((0 + 1) / 2)
    assert _user("novelty@2(form=log_popularity)", beyond)[0] == pytest.approx((math.log(4) + math.log(2)) / 2)
    assert _user("novelty@1(form=self_information)", beyond)[2] == pytest.approx(2.0)  # log2(4 / 1)


def test_serendipity(beyond: MetricInput) -> None:
    # user 0: relevant in the top 3: items 0 and 2; profile {0}; Jaccard(0,0)=1, (2,0)=0 -> (0 + 1) / 3
    # user 1: none of 0, 2 is relevant -> 0; user 2: item 3 (no aspect) is unlike its profile {0, 1} -> 1/3
    assert _user("serendipity@3", beyond) == pytest.approx([1 / 3, 0.0, 1 / 3])


def test_error_metrics_need_predictions(beyond: MetricInput) -> None:
    with pytest.raises(MetricError, match="need rating predictions"):
        _value("rmse", beyond)


def test_rounded_predictions_lower_mae() -> None:
    preds = (np.zeros(4, dtype=int), np.array([4.0, 3, 5, 2]), np.array([4.3, 3.6, 4.6, 2.2]))
    data = MetricInput(np.zeros((1, 0), dtype=int), sp.csr_matrix((1, 1)), predictions=preds)
    assert _value("mae(round=true)", data) == pytest.approx(0.25)
    assert _value("mae", data) == pytest.approx((0.3 + 0.6 + 0.4 + 0.2) / 4)


# ------------------------------------------------------------------ properties
@st.composite
def runs(draw, complete: bool = False):
    n_users = draw(st.integers(1, 6))
    n_items = draw(st.integers(2, 9))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    grades = rng.integers(1, 6, (n_users, n_items)).astype(float)
    if not complete:
        grades[rng.random(grades.shape) < 0.5] = 0
    k = draw(st.integers(1, n_items))
    rankings = np.array([rng.permutation(n_items)[:k] for _ in range(n_users)])
    if not complete and n_users > 1:
        rankings[0, rng.integers(0, k + 1) :] = -1  # a short list
    return rankings, sp.csr_matrix(grades), k


PER_USER = [
    "precision@{k}",
    "recall@{k}",
    "ndcg@{k}",
    "ndcg@{k}(gain=exponential)",
    "map@{k}",
    "mrr",
    "hit_rate@{k}",
    "anti_precision@{k}",
    "fallout@{k}",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.sampled_from([1.0, 3.0, 4.0]), st.sampled_from(["skip", "zero"]))
def test_values_lie_in_unit_interval(run, threshold, empty) -> None:
    rankings, truth, k = run
    data = MetricInput(rankings, truth, threshold=threshold, empty_users=empty)
    for template in PER_USER:
        values = parse_metric(template.format(k=k)).per_user(data)
        finite = values[~np.isnan(values)]
        assert ((finite >= -1e-12) & (finite <= 1 + 1e-12)).all(), template
        if empty == "zero":
            assert not np.isnan(values).any(), template
    for system in ("coverage", "gini"):
        value = _value(system, data)
        assert math.isnan(value) or 0 <= value <= 1 + 1e-12


@settings(max_examples=40, deadline=None)
@given(runs(complete=True), st.sampled_from([2.0, 3.0, 4.0, 5.0]))
def test_identities_on_complete_truth(run, threshold) -> None:
    rankings, truth, k = run
    data = MetricInput(rankings, truth, threshold=threshold, empty_users="zero")
    prec, anti = _user(f"precision@{k}", data), _user(f"anti_precision@{k}", data)
    np.testing.assert_allclose(np.add(prec, anti), 1.0)
    rec, fall = np.array(_user(f"recall@{k}", data)), np.array(_user(f"fallout@{k}", data))
    np.testing.assert_allclose(rec * data.n_positive + fall * data.n_negative, k)
    tp, fp, tn, fn = (np.array(_user(f"{c}@{k}", data)) for c in ("tp", "fp", "tn", "fn"))
    np.testing.assert_allclose(tp + fp + tn + fn, truth.shape[1])


@settings(max_examples=15, deadline=None)
@given(runs(), st.integers(0, 2**31 - 1))
def test_invariance_to_user_order_batching_and_id_types(run, seed) -> None:
    rankings, truth, k = run
    assume(truth.nnz > 0)
    coo = truth.tocoo()
    # a threshold above every held-out rating is refused (it would score no user): keep one positive
    assume((coo.data >= 3).any())
    truth_df = pd.DataFrame({"user": coo.row, "item": coo.col, "rating": coo.data})
    rows, cols = np.nonzero(rankings >= 0)
    recs = pd.DataFrame({"user": rows, "item": rankings[rows, cols], "rank": cols + 1})
    metrics = [m.format(k=k) for m in PER_USER if "fallout" not in m and "anti" not in m]
    recs = recs[recs["user"].isin(truth_df["user"])]  # users without truth are dropped with a warning
    # a run none of whose items is in the truth is refused as an id mismatch (front-door check)
    assume(recs.empty or recs["item"].isin(truth_df["item"]).any())
    base = receval.evaluate(recs, truth_df, metrics, threshold=3)
    shuffled = recs.sample(frac=1.0, random_state=seed % 1000)
    again = receval.evaluate(shuffled, truth_df.sample(frac=1.0, random_state=seed % 999), metrics, threshold=3)
    pd.testing.assert_frame_equal(base.per_user, again.per_user)
    as_text = receval.evaluate(
        recs.astype({"user": str, "item": str}).assign(user=lambda f: "u" + f["user"]),
        truth_df.astype({"user": str, "item": str}).assign(user=lambda f: "u" + f["user"]),
        metrics,
        threshold=3,
    )
    np.testing.assert_allclose(as_text.per_user[metrics].to_numpy(), base.per_user[metrics].to_numpy())
    # per-user values do not depend on which other users are evaluated with them
    users = truth_df["user"].unique()
    half = users[: len(users) // 2 + 1]
    sub_recs, sub_truth = recs[recs.user.isin(half)], truth_df[truth_df.user.isin(half)]
    assume(sub_recs.empty or sub_recs["item"].isin(sub_truth["item"]).any())
    assume((sub_truth["rating"] >= 3).any())
    part = receval.evaluate(recs[recs.user.isin(half)], truth_df[truth_df.user.isin(half)], metrics, threshold=3)
    full = base.per_user.set_index("user").loc[part.per_user["user"]]
    np.testing.assert_allclose(part.per_user[metrics].to_numpy(), full[metrics].to_numpy())
