"""Debiased estimators and propensity models: unbiasedness on generated MNAR data, identities, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from receval import evaluate
from receval.data.interactions import Interactions
from receval.data.synthetic import generate_with_truth
from receval.errors import ConfigError, DataError, MetricError
from receval.metrics import parse_metric
from receval.metrics.debiased import Propensities
from receval.metrics.ranking import ideal_dcg
from receval.metrics.registry import MetricInput
from receval.stats.propensity import (
    LogisticPropensity,
    NaiveBayesPropensity,
    PopularityPropensity,
    calibrated_propensities,
)


def _world(seed: int):
    """Generated MNAR data with exact propensities, its complete ratings and one fixed system."""
    t = generate_with_truth(
        n_users=400, n_items=200, n_ratings=12_000, n_aspects=0, sampling="bernoulli", keep_complete=True, seed=seed
    )
    n_u, n_i = t.data.n_users, t.data.n_items
    rng = np.random.default_rng(10_000 + seed)
    mu = t.true_rating(np.repeat(np.arange(n_u), n_i), np.tile(np.arange(n_i), n_u)).reshape(n_u, n_i)
    recs = np.argsort(-(mu + rng.normal(0, 0.8, mu.shape)), axis=1)[:, :10].astype(np.int32)
    pred = mu + rng.normal(0, 0.3, mu.shape)  # the system's rating predictions for every pair
    return t, recs, pred


def _predictions(data: Interactions, pred: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "user": data.user_ids[data.users],
            "item": data.item_ids[data.items],
            "prediction": pred[data.users, data.items],
        }
    )


@pytest.fixture(scope="module")
def replications():
    """Over 50 seeds: complete-data value and each estimate of micro Recall@10, macro Recall@10 and MSE."""
    rows = []
    for seed in range(50):
        t, recs, pred = _world(seed)
        est = ["naive", "ips", "snips"]
        metrics = [f"recall@10(agg=micro,estimator={e},propensity=known)" for e in est]
        metrics += [f"recall@10(estimator={e},propensity=known)" for e in est]
        metrics += [f"rmse(estimator={e},propensity=known)" for e in [*est, "dr"]]
        table = t.propensity_table()
        observed = evaluate(
            recs, t.data, metrics, threshold=4, predictions=_predictions(t.data, pred), propensities=table
        ).summary
        complete = evaluate(
            recs,
            t.complete,
            ["recall@10(agg=micro)", "recall@10", "rmse"],
            threshold=4,
            predictions=_predictions(t.complete, pred),
        ).summary
        row = {"seed": seed, "micro_mar": complete["recall@10(agg=micro)"], "macro_mar": complete["recall@10"]}
        row["mse_mar"] = complete["rmse"] ** 2
        for e in est:
            row[f"micro_{e}"] = observed[f"recall@10(agg=micro,estimator={e},propensity=known)"]
            row[f"macro_{e}"] = observed[f"recall@10(estimator={e},propensity=known)"]
        for e in [*est, "dr"]:
            row[f"mse_{e}"] = observed[f"rmse(estimator={e},propensity=known)"] ** 2
        rows.append(row)
    return pd.DataFrame(rows)


def _bias(table: pd.DataFrame, quantity: str, estimator: str) -> tuple[float, float]:
    diff = table[f"{quantity}_{estimator}"] - table[f"{quantity}_mar"]
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(len(diff)))


@pytest.mark.parametrize(("quantity", "tolerance"), [("micro", 1.0), ("mse", 2.0)])
def test_ips_is_unbiased_where_naive_is_not(replications, quantity, tolerance):
    """Mean over 50 seeds of (estimate − complete-data value), against its standard error.

    Micro Recall@10 (a ratio of two IPS sums: bias O(1/n)) is within one standard
    error. The IPS mean squared error is exactly unbiased, but its weights are heavy
    tailed (p down to ~0.01), so its spread over 50 seeds is judged at two standard
    errors. The naive estimate is more than three standard errors off for both.
    """
    bias, se = _bias(replications, quantity, "ips")
    naive_bias, naive_se = _bias(replications, quantity, "naive")
    assert abs(bias) <= tolerance * se, (bias, se)
    assert abs(naive_bias) > 3 * naive_se, (naive_bias, naive_se)


@pytest.mark.parametrize("quantity", ["micro", "macro", "mse"])
def test_snips_bias_is_smaller_than_naive(replications, quantity):
    assert abs(_bias(replications, quantity, "snips")[0]) < abs(_bias(replications, quantity, "naive")[0])


def test_macro_recall_and_doubly_robust_error_beat_naive(replications):
    assert abs(_bias(replications, "macro", "ips")[0]) < abs(_bias(replications, "macro", "naive")[0])
    bias, se = _bias(replications, "mse", "dr")
    assert abs(bias) <= 2 * se


# ------------------------------------------------------------------ identities
def _small_input(p: np.ndarray | float = 1.0, with_predictions: bool = True) -> MetricInput:
    truth = sp.csr_matrix(np.array([[5.0, 4.0, 0, 1.0, 2.0], [0, 3.0, 5.0, 0, 4.0], [2.0, 0, 0, 0, 1.0]]))
    truth.sort_indices()
    p = np.broadcast_to(np.asarray(p, dtype=np.float64), truth.data.shape).copy()
    rows = np.repeat(np.arange(3), np.diff(truth.indptr))
    preds = (rows, truth.data.astype(np.float64), truth.data + np.array([0.5, -1, 0, 2, 1, -0.5, 0.25, 1.5, -2]))
    props = Propensities(
        truth=p, population=15.0, predictions=p, prediction_items=truth.indices.copy(), n_items=5, model="known"
    )
    return MetricInput(
        np.array([[1, 3, 2], [4, 0, 2], [1, 4, -1]]),
        truth,
        threshold=4,
        predictions=preds if with_predictions else None,
        propensities={"known": props},
    )


@pytest.mark.parametrize(
    "name",
    [
        "precision@3",
        "recall@3",
        "recall@3(agg=micro)",
        "ndcg@3",
        "ndcg@2(gain=exponential)",
        "map@3",
        "hit_rate@2",
        "fallout@3",
        "anti_precision@3",
    ],
)
def test_ips_with_unit_propensities_is_the_naive_metric(name):
    """Every rating observed (p = 1): IPS changes nothing."""
    data = _small_input(1.0)
    extra = "estimator=ips,propensity=known"
    debiased = f"{name[:-1]},{extra})" if "(" in name else f"{name}({extra})"
    assert parse_metric(debiased).compute(data) == pytest.approx(parse_metric(name).compute(data), rel=1e-12)


@pytest.mark.parametrize("name", ["rmse", "mae", "rmse(agg=macro)", "mae(agg=macro)"])
@pytest.mark.parametrize("estimator", ["ips", "snips", "dr"])
def test_error_estimators_on_complete_data_are_the_naive_error(name, estimator):
    """Two users who rated all three items (p = 1): every estimator gives the plain error."""
    rows = np.repeat([0, 1], 3)
    items = np.tile([0, 1, 2], 2)
    truth = sp.csr_matrix((np.arange(1.0, 7.0), (rows, items)), shape=(2, 3))
    preds = (rows, np.arange(1.0, 7.0), np.arange(1.0, 7.0) + np.array([0.5, -1, 2, 0, 1.5, -0.25]))
    unit = np.ones(6)
    props = Propensities(truth=unit, population=6.0, predictions=unit, prediction_items=items, n_items=3)
    data = MetricInput(np.zeros((2, 0), dtype=int), truth, predictions=preds, propensities={"known": props})
    extra = f"estimator={estimator},propensity=known"
    debiased = f"{name[:-1]},{extra})" if "(" in name else f"{name}({extra})"
    assert parse_metric(debiased).compute(data) == pytest.approx(parse_metric(name).compute(data), rel=1e-12)


def test_weighted_ideal_dcg_fills_weight_slots():
    from receval.metrics.debiased import _weighted_idcg

    truth = sp.csr_matrix(np.array([[3.0, 1.0, 2.0, 0.0]]))
    gains = truth.data.astype(np.float64)
    assert _weighted_idcg(truth.indptr, gains, np.ones(3), 2)[0] == pytest.approx(ideal_dcg(truth, 2, 1, "linear")[0])
    # gain 3 with weight 2 fills ranks 1 and 2: 3/log2(2) + 3/log2(3)
    w = np.array([2.0, 1.0, 1.0])
    assert _weighted_idcg(truth.indptr, gains, w, 2)[0] == pytest.approx(3.0 + 3.0 / np.log2(3))


def test_ips_hand_computed_values():
    data = _small_input(np.array([0.5, 0.25, 1.0, 0.5, 0.5, 1.0, 0.25, 0.5, 1.0]))
    # user 0: truth items 0(5, w2) 1(4, w4) 3(1, w1) 4(2, w2); list [1, 3, 2] -> hit item 1 (w 4)
    # user 1: items 1(3, w2) 2(5, w1) 4(4, w4); list [4, 0, 2] -> hits 4 (w4), 2 (w1)
    # user 2: items 0(2, w2) 4(1, w1): no positive -> skipped
    recall = parse_metric("recall@3(estimator=ips,propensity=known)").per_user(data)
    assert recall[:2].tolist() == pytest.approx([4 / 6, 5 / 5]) and np.isnan(recall[2])
    hit = parse_metric("hit_rate@1(estimator=ips,propensity=known)").per_user(data)
    assert hit[:2].tolist() == pytest.approx([1 - (1 - 4), 1 - (1 - 4)])
    ap = parse_metric("map@3(estimator=ips,propensity=known)").per_user(data)
    assert ap[1] == pytest.approx((4 * 1 / 1 + 1 * (1 + 4) / 3) / 5)
    fallout = parse_metric("fallout@3(estimator=ips,propensity=known)").per_user(data)
    assert fallout[0] == pytest.approx(1 / 3)  # negative item 3 (w 1) ranked, negatives 3 (w1) + 4 (w2)
    # snips: weights rescaled to sum to the population (15); Σ w = 2+4+1+2+2+1+4+2+1 = 19
    prec = parse_metric("precision@3(estimator=snips,propensity=known)").per_user(data)
    assert prec[:2].tolist() == pytest.approx([4 * 15 / 19 / 3, 5 * 15 / 19 / 3])


def test_stratified_and_weighted_sampling_identities():
    data = _small_input(np.array([0.5, 0.25, 1.0, 0.5, 0.5, 1.0, 0.25, 0.5, 1.0]))
    naive = parse_metric("recall@3").compute(data)
    assert parse_metric("recall@3(estimator=stratified,n_strata=1,propensity=known)").compute(data) == naive
    assert parse_metric("recall@3(estimator=wtd_h,sample=1,propensity=known)").compute(data) == naive
    # two strata: p <= 0.625 and p > 0.625 (equal width over [0.25, 1]); Cornac's size-weighted mean
    low = parse_metric("recall@3").compute(_restrict(data, data.propensities["known"].truth <= 0.625))
    high = parse_metric("recall@3").compute(_restrict(data, data.propensities["known"].truth > 0.625))
    expected = (6 * low + 3 * high) / 9
    got = parse_metric("recall@3(estimator=stratified,propensity=known)").compute(data)
    assert got == pytest.approx(expected)


def _restrict(data: MetricInput, mask: np.ndarray) -> MetricInput:
    t = data.truth.tocoo()
    keep = sp.csr_matrix((t.data[mask], (t.row[mask], t.col[mask])), shape=t.shape)
    return MetricInput(data.rankings, keep, threshold=data.threshold)


def test_weighted_samples_are_seeded_and_record_the_estimator():
    t, recs, _ = _world(0)
    metrics = ["recall@10(estimator=wtd_h)", "recall@10(estimator=wtd_h,sample_seed=1)", "ndcg@10(estimator=snips)"]
    a = evaluate(recs, t.data, metrics, threshold=4)
    b = evaluate(recs, t.data, metrics, threshold=4)
    assert a.summary == b.summary
    assert a.summary[metrics[0]] != a.summary[metrics[1]]
    assert a.conventions.estimators[metrics[2]] == {"estimator": "snips", "propensity": "popularity"}


# ------------------------------------------------------------------ propensity models
def test_popularity_gamma_is_recovered_from_a_mar_sample():
    n = np.array([1, 2, 4, 8, 16, 32, 64])
    m = (n ** (1 - 0.75) * 4).round().astype(int)  # MAR counts ∝ n / p with p ∝ n^0.75
    obs = Interactions.from_arrays(users=np.arange(n.sum()), items=np.repeat(np.arange(7), n), ratings=np.ones(n.sum()))
    mar = Interactions.from_arrays(users=np.arange(m.sum()), items=np.repeat(np.arange(7), m), ratings=np.ones(m.sum()))
    model = PopularityPropensity().fit(obs, mar=mar)
    assert model.gamma_ == pytest.approx(2 * 0.75 - 1, abs=0.1)


def test_logistic_propensities_follow_the_true_exposure():
    t = generate_with_truth(n_users=150, n_items=100, n_ratings=3000, sampling="bernoulli", seed=3)
    model = LogisticPropensity(n_factors=2, seed=0).fit(t.data)
    users, items = t.data.user_ids[t.data.users], t.data.item_ids[t.data.items]
    fitted = calibrated_propensities(model, users, items, None, t.data.user_ids)
    assert pd.Series(fitted).corr(pd.Series(t.propensities()), method="spearman") > 0.7


def test_generator_propensities():
    t = generate_with_truth(n_users=200, n_items=60, n_ratings=2400, sampling="bernoulli", seed=5)
    # the sum of the pair propensities over every cell is the expected count: compare with its realisation
    assert abs(t.data.n_ratings - 2400) < 4 * np.sqrt(2400)
    s = generate_with_truth(n_users=50, n_items=60, n_ratings=900, seed=5)
    lam = s.propensities()
    assert (lam > 0).all() and (lam <= 1).all()


# ------------------------------------------------------------------ bad input
def test_zero_or_nan_propensity_names_the_pair():
    t, recs, _ = _world(1)
    table = t.propensity_table()
    table.loc[3, "propensity"] = 0.0
    with pytest.raises(DataError, match=r"propensity 0 to the observed pair user \d+, item \d+.*clip="):
        evaluate(recs, t.data, ["recall@10(estimator=ips,propensity=known)"], threshold=4, propensities=table)
    table.loc[3, "propensity"] = np.nan
    with pytest.raises(DataError, match="propensity nan"):
        evaluate(recs, t.data, ["recall@10(estimator=ips,propensity=known)"], threshold=4, propensities=table)


def test_missing_side_data_is_named():
    t, recs, _ = _world(1)
    with pytest.raises(ConfigError, match=r"needs a MAR sample.*mar_sample"):
        evaluate(recs, t.data, ["recall@10(estimator=ips,propensity=naive-bayes)"], threshold=4)
    with pytest.raises(ConfigError, match="propensity=known needs the propensities"):
        evaluate(recs, t.data, ["recall@10(estimator=ips,propensity=known)"], threshold=4)
    with pytest.raises(ConfigError, match="needs a MAR sample"):
        evaluate(recs, t.data, ["recall@10(estimator=wtd)"], threshold=4)
    with pytest.raises(MetricError, match=r"no inverse-propensity form for mrr.*stratified"):
        evaluate(recs, t.data, ["mrr(estimator=ips)"], threshold=4)
    with pytest.raises(MetricError, match="estimator=dr is the doubly robust rating error"):
        evaluate(recs, t.data, ["recall@10(estimator=dr)"], threshold=4)
    with pytest.raises(MetricError, match="unknown estimator 'magic'"):
        evaluate(recs, t.data, ["recall@10(estimator=magic)"], threshold=4)


def test_mar_sample_without_some_rating_value():
    obs = Interactions.from_arrays(users=[1, 1, 2], items=[1, 2, 1], ratings=[1, 3, 4])
    mar = Interactions.from_arrays(users=[3, 3], items=[1, 2], ratings=[1, 4])
    with pytest.raises(DataError, match=r"the MAR sample has no rating 3.*larger MAR sample"):
        NaiveBayesPropensity().fit(obs, mar=mar)
