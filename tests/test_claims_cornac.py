"""``estimator=stratified`` against Cornac's ``PropensityStratifiedEvaluation`` (receval.metrics.debiased: "as Cornac's
PropensityStratifiedEvaluation: the test ratings are split into n_strata equal-width bins of propensity, the metric is
computed naively on each, and the values are averaged weighted by each stratum's share of the test ratings").

Cornac is not installed here; its code is transcribed from PreferredAI/cornac at
4db147def0c79c6b2ba5210457808d6041f0d0b3 (Apache 2.0): cornac/eval_methods/propensity_stratified_evaluation.py
(``_build_stratified_dataset``: equal-width bins from 0.99 x the smallest propensity to 1.01 x the largest, by
``np.digitize``) and cornac/experiment/result.py (``PSTResult.organize``: the "Unbiased" row, each stratum's value
weighted by its share of the test ratings). The metric inside a stratum is receval's naive one on that stratum's
ratings (the metrics themselves are checked against Cornac's in tests/peers/cornac).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from receval.metrics import MetricInput, parse_metric
from receval.metrics.debiased import Propensities


def _cornac_strata(test_props: np.ndarray, n_strata: int) -> list[str]:
    """``_build_stratified_dataset``'s stratum label of each test rating."""
    minp = min(test_props) - 0.01 * min(test_props)
    maxp = max(test_props) + 0.01 * max(test_props)
    slice = (maxp - minp) / n_strata  # Cornac's name
    return [f"Q{idx}" for idx in np.digitize(x=test_props, bins=np.arange(minp, maxp, slice))]


def _input(p: np.ndarray) -> MetricInput:
    truth = sp.csr_matrix(np.array([[5.0, 4.0, 0, 1.0, 2.0], [0, 3.0, 5.0, 0, 4.0], [2.0, 0, 0, 0, 1.0]]))
    truth.sort_indices()
    props = Propensities(truth=p, population=15.0, predictions=None, prediction_items=None, n_items=5, model="known")
    return MetricInput(np.array([[1, 3, 2], [4, 0, 2], [1, 4, -1]]), truth, threshold=4, propensities={"known": props})


def _restricted(data: MetricInput, keep: np.ndarray) -> MetricInput:
    t = data.truth.tocoo()
    kept = sp.csr_matrix((t.data[keep], (t.row[keep], t.col[keep])), shape=t.shape)
    return MetricInput(data.rankings, kept, threshold=data.threshold)


def _cornac_unbiased(metric: str, data: MetricInput, p: np.ndarray, n_strata: int, defined: bool = False) -> float:
    """``PSTResult.organize``: Σ over strata of (stratum size / test size) x the stratum's value.

    ``defined``: over the strata with a value only, their sizes renormalised (receval's documented departure, where
    Cornac's sum is NaN)."""
    labels = np.array(_cornac_strata(p, n_strata))
    naive = parse_metric(metric)
    values, sizes = [], []
    for stratum in sorted(np.unique(labels)):
        keep = labels == stratum
        values.append(naive.compute(_restricted(data, keep)))
        sizes.append(keep.sum())
    kept = ~np.isnan(values) if defined else np.ones(len(values), dtype=bool)
    weights = np.asarray(sizes)[kept] / len(p)
    mean = np.average(np.asarray(values)[kept], weights=weights)
    return float(mean if defined else mean * sum(weights))  # Cornac's form: a NaN value makes the sum NaN


@pytest.mark.parametrize("metric", ["recall@3", "precision@3", "ndcg@3"])
@pytest.mark.parametrize("p", [[0.5, 0.25, 1.0, 0.5, 0.5, 1.0, 0.25, 0.5, 1.0], [1, 4, 1, 4, 4, 1, 1, 4, 1]])
def test_two_strata_where_the_bins_agree_are_cornacs(metric: str, p: list[float]) -> None:
    """No propensity between receval's middle edge and Cornac's: the same strata, the same size-weighted mean."""
    props = np.asarray(p, dtype=np.float64)
    data = _input(props)
    ours = parse_metric(f"{metric}(estimator=stratified,propensity=known)").compute(data)
    assert ours == pytest.approx(_cornac_unbiased(metric, data, props, 2), abs=1e-12)


def test_strata_edges_are_cornacs() -> None:
    """Bins over [0.99 min, 1.01 max] as Cornac's (receval's bins were [min, max]: recall@3 0.667 against 0.806)."""
    # propensities 1, 2, 3 with 2 strata: receval's edge 2 puts 2 with 3; Cornac's (0.99 + 1.02 = 2.01) with 1
    props = np.array([1.0, 2.0, 3.0, 2.0, 1.0, 3.0, 2.0, 2.0, 1.0])
    assert _cornac_strata(props, 2) == ["Q1", "Q1", "Q2", "Q1", "Q1", "Q2", "Q1", "Q1", "Q1"]
    data = _input(props)
    ours = parse_metric("recall@3(estimator=stratified,propensity=known)").compute(data)
    assert ours == pytest.approx(_cornac_unbiased("recall@3", data, props, 2), abs=1e-12)


# ------------------------------------------------------------------------------ the cornac preset's ranking metrics
# Cornac's cornac/metrics/ranking.py at 4db147d (Apache 2.0), each ``compute`` transcribed; cornac/eval_methods/
# base_method.py ``ranking_eval``: users with a test rating >= rating_threshold, ``pd_rank`` the model's ranking of
# every candidate item (all items but the user's training and validation positives), the mean over those users.
def _cornac_ndcg(gt_pos, pd_rank, k):
    def dcg_score(gt_pos, pd_rank, k=-1):
        truncated_pd_rank = pd_rank[:k] if k > 0 else pd_rank
        ranked_scores = np.isin(truncated_pd_rank, gt_pos).astype(int)
        gain = 2**ranked_scores - 1
        discounts = np.log2(np.arange(len(ranked_scores)) + 2)
        return np.sum(gain / discounts)

    return dcg_score(gt_pos, pd_rank, k) / dcg_score(gt_pos, gt_pos, k)


def _cornac_ncrr(gt_pos, pd_rank, k):
    truncated_pd_rank = pd_rank[:k] if k > 0 else pd_rank
    rec_rank = np.where(np.isin(truncated_pd_rank, gt_pos))[0]
    if len(rec_rank) == 0:
        return 0.0
    crr = np.sum(1.0 / (rec_rank + 1))
    max_nb_pos = min(len(gt_pos), len(truncated_pd_rank))
    return crr / np.sum(1.0 / (np.arange(max_nb_pos) + 1))


def _cornac_mrr(gt_pos, pd_rank):
    matched_items = np.nonzero(np.isin(pd_rank, gt_pos))[0]
    return np.divide(1, (matched_items[0] + 1))  # every positive is ranked: no ValueError


def _measure_at_k(gt_pos, pd_rank, k):
    truncated_pd_rank = pd_rank[:k] if k > 0 else pd_rank
    tp = np.sum(np.isin(truncated_pd_rank, gt_pos))
    return tp, len(gt_pos), k if k > 0 else len(truncated_pd_rank)


def _cornac_f1(gt_pos, pd_rank, k):
    tp, tp_fn, tp_fp = _measure_at_k(gt_pos, pd_rank, k)
    prec, rec = tp / tp_fp, tp / tp_fn
    return 2 * (prec * rec) / (prec + rec) if (prec + rec) > 0 else 0


def _cornac_auc(item_indices, pd_scores, gt_pos, gt_neg):
    gt_pos_mask = np.isin(item_indices, gt_pos)
    gt_neg_mask = np.isin(item_indices, gt_neg)
    pos_scores, neg_scores = pd_scores[gt_pos_mask], pd_scores[gt_neg_mask]
    ui_scores = np.repeat(pos_scores, len(neg_scores))
    uj_scores = np.tile(neg_scores, len(pos_scores))
    return (ui_scores > uj_scores).sum() / len(uj_scores)


def _cornac_map(item_indices, pd_scores, gt_pos):
    from scipy.stats import rankdata

    relevant = np.isin(item_indices, gt_pos)
    rank = rankdata(-pd_scores, "max")[relevant]
    L = rankdata(-pd_scores[relevant], "max")  # Cornac's name
    return (L / rank).mean()


CORNAC_AT_K = {
    "precision": lambda pos, ranked, k: _measure_at_k(pos, ranked, k)[0] / _measure_at_k(pos, ranked, k)[2],
    "recall": lambda pos, ranked, k: _measure_at_k(pos, ranked, k)[0] / _measure_at_k(pos, ranked, k)[1],
    "f1": _cornac_f1,
    "hit_rate": lambda pos, ranked, k: 1.0 if _measure_at_k(pos, ranked, k)[0] > 0 else 0.0,
    "ndcg": _cornac_ndcg,
    "ncrr": _cornac_ncrr,
}


@pytest.mark.parametrize("seed", range(12))
def test_ranking_metrics_equal_cornacs(seed: int) -> None:
    """Full rankings of each user's candidates (every test item among them), graded test ratings at threshold 3
    (items rated below it are negatives, as for Cornac), distinct scores, k shorter and longer than the rankings."""
    import pandas as pd

    import receval

    rng = np.random.default_rng(seed)
    items = np.arange(16)
    truth_rows, rec_rows, users = [], [], {}
    for u in range(int(rng.integers(2, 8))):
        rated = rng.choice(items, size=int(rng.integers(1, 6)), replace=False)
        grades = rng.integers(1, 6, size=len(rated))
        others = rng.choice(np.setdiff1d(items, rated), size=int(rng.integers(1, 8)), replace=False)
        ranking = rng.permutation(np.concatenate([rated, others]))  # the user's candidates, ranked
        scores = np.sort(rng.random(len(ranking)))[::-1] + 1.0
        truth_rows += [(u, int(i), int(g)) for i, g in zip(rated, grades, strict=True)]
        rec_rows += [(u, int(i), float(s)) for i, s in zip(ranking, scores, strict=True)]
        users[u] = (ranking, scores, rated[grades >= 3])
    truth = pd.DataFrame(truth_rows, columns=["user", "item", "rating"])
    truth.loc[len(truth)] = (99, 0, 5)  # a 1-5 scale whatever was drawn (a user without a list: none below)
    truth.loc[len(truth)] = (99, 1, 1)
    recs = pd.DataFrame(rec_rows, columns=["user", "item", "score"])
    scored = {u: v for u, v in users.items() if len(v[2])}  # ranking_eval: users with a positive test rating
    for k in (1, 3, 20):
        strings = [f"{m}@{k}" for m in CORNAC_AT_K] + ["mrr", "map", "auc"]
        res = receval.evaluate(recs, truth[truth["user"] != 99], strings, convention="cornac", threshold=3)
        table = res.per_user.set_index("user")
        for m in CORNAC_AT_K:
            expected = {u: CORNAC_AT_K[m](pos, ranking, k) for u, (ranking, _, pos) in scored.items()}
            for u, value in expected.items():
                assert table.loc[u, f"{m}@{k}"] == pytest.approx(value, abs=1e-12), (m, k, u)
            assert res.summary[f"{m}@{k}"] == pytest.approx(np.mean(list(expected.values())), abs=1e-12)
        for m, fn in {
            "mrr": lambda ranking, s, pos: _cornac_mrr(pos, ranking),
            "map": lambda ranking, s, pos: _cornac_map(ranking, s, pos),
            "auc": lambda ranking, s, pos: _cornac_auc(ranking, s, pos, np.setdiff1d(ranking, pos)),
        }.items():
            expected = {u: fn(*v) for u, v in scored.items()}
            for u, value in expected.items():
                assert table.loc[u, m] == pytest.approx(value, abs=1e-12), (m, u)
            assert res.summary[m] == pytest.approx(np.mean(list(expected.values())), abs=1e-12), m


@pytest.mark.parametrize("n_strata", [2, 3, 5, 9])
def test_stratified_is_cornacs_on_drawn_propensities(n_strata: int) -> None:
    """Drawn propensities (a few distinct values; the integers 1-4 sit on the edges of bins over [min, max]
    but not on Cornac's; seed 0: all equal). A stratum without a relevant rating has no value in either: Cornac's
    weighted sum is NaN then, receval's the mean of the other strata, their sizes renormalised (as documented)."""
    compared = undefined = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        values = rng.uniform(0.01, 2.0, 4) if seed % 2 else np.arange(1.0, 5.0)  # integers: on [min, max]'s edges
        props = np.full(9, 0.3) if seed == 0 else rng.choice(values, 9)
        data = _input(props)
        for metric in ("recall@3", "ndcg@3"):
            expected = _cornac_unbiased(metric, data, props, n_strata)
            ours = parse_metric(f"{metric}(estimator=stratified,propensity=known,n_strata={n_strata})").compute(data)
            if np.isnan(expected):
                expected = _cornac_unbiased(metric, data, props, n_strata, defined=True)
                undefined += 1
            assert ours == pytest.approx(expected, abs=1e-12), (seed, metric, props)
            compared += 1
    assert compared >= 4 and (undefined >= 1 or n_strata == 2)
