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


def _cornac_unbiased(metric: str, data: MetricInput, p: np.ndarray, n_strata: int) -> float:
    """``PSTResult.organize``: Σ over strata of (stratum size / test size) x the stratum's value."""
    labels = np.array(_cornac_strata(p, n_strata))
    naive = parse_metric(metric)
    values, sizes = [], []
    for stratum in sorted(np.unique(labels)):
        keep = labels == stratum
        values.append(naive.compute(_restricted(data, keep)))
        sizes.append(keep.sum())
    weights = np.asarray(sizes) / len(p)
    return float(np.average(values, weights=weights) * sum(weights))


@pytest.mark.parametrize("metric", ["recall@3", "precision@3", "ndcg@3"])
@pytest.mark.parametrize("p", [[0.5, 0.25, 1.0, 0.5, 0.5, 1.0, 0.25, 0.5, 1.0], [1, 4, 1, 4, 4, 1, 1, 4, 1]])
def test_two_strata_where_the_bins_agree_are_cornacs(metric: str, p: list[float]) -> None:
    """No propensity between receval's middle edge and Cornac's: the same strata, the same size-weighted mean."""
    props = np.asarray(p, dtype=np.float64)
    data = _input(props)
    ours = parse_metric(f"{metric}(estimator=stratified,propensity=known)").compute(data)
    assert ours == pytest.approx(_cornac_unbiased(metric, data, props, 2), abs=1e-12)


@pytest.mark.xfail(
    strict=True,
    reason="receval.metrics.debiased._strata bins over [min, max]; Cornac over [0.99 min, 1.01 max]: a propensity "
    "near an edge changes stratum (the fix: edges from min - 0.01 min to max + 0.01 max, as Cornac)",
)
def test_strata_edges_are_cornacs() -> None:
    # propensities 1, 2, 3 with 2 strata: receval's edge 2 puts 2 with 3; Cornac's (0.99 + 1.02 = 2.01) with 1
    props = np.array([1.0, 2.0, 3.0, 2.0, 1.0, 3.0, 2.0, 2.0, 1.0])
    assert _cornac_strata(props, 2) == ["Q1", "Q1", "Q2", "Q1", "Q1", "Q2", "Q1", "Q1", "Q1"]
    data = _input(props)
    ours = parse_metric("recall@3(estimator=stratified,propensity=known)").compute(data)
    assert ours == pytest.approx(_cornac_unbiased("recall@3", data, props, 2), abs=1e-12)
