"""User-sharded evaluation equals the unsharded one (per-user values concatenate, micro from summed counts)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.errors import MetricError
from receval.evaluation.sharded import evaluate_sharded, shard_bounds
from receval.metrics.registry import MetricInput, parse_metric

METRICS = [
    "precision@5",
    "precision@5(agg=micro)",
    "recall@5(agg=micro)",
    "ndcg@10",
    "map@10",
    "fallout@5",
    "novelty@5",
    "rmse",
    "mae(agg=macro)",
]


def _problem(seed: int, n_users: int = 60, n_items: int = 40):
    rng = np.random.default_rng(seed)
    dense = rng.integers(1, 6, (n_users, n_items)) * (rng.random((n_users, n_items)) < 0.3)
    truth = sp.csr_matrix(dense.astype(float))
    train = sp.csr_matrix(
        (rng.integers(1, 6, (n_users, n_items)) * (rng.random((n_users, n_items)) < 0.2)).astype(float)
    )
    rankings = np.argsort(rng.random((n_users, n_items)), axis=1)[:, :10]
    rankings[rng.random(n_users) < 0.2, 7:] = -1  # some short lists
    coo = truth.tocoo()
    predictions = (coo.row, coo.data, coo.data + rng.normal(0, 1, coo.nnz))
    return rankings, truth, train, predictions


def _reference(rankings, truth, train, predictions):
    data = MetricInput(rankings, truth, threshold=4, train=train, predictions=predictions)
    per_user = {m: parse_metric(m).per_user(data) for m in METRICS}
    summary = {m: parse_metric(m).compute(data) for m in METRICS}
    return per_user, summary


@given(st.integers(0, 10_000), st.integers(1, 13))
@settings(max_examples=15, deadline=None)
def test_sharded_equals_unsharded(seed: int, n_shards: int) -> None:
    rankings, truth, train, preds = _problem(seed)
    ref_users, ref_summary = _reference(rankings, truth, train, preds)
    per_user, summary = evaluate_sharded(
        rankings, truth, METRICS, n_shards=n_shards, train=train, predictions=preds, threshold=4
    )
    for m in METRICS:
        np.testing.assert_array_equal(per_user[m].to_numpy(), ref_users[m])  # bit-identical per user
        assert summary[m] == pytest.approx(ref_summary[m], rel=1e-12, nan_ok=True)


def test_sharded_on_a_pool_and_refusals() -> None:
    rankings, truth, train, preds = _problem(1)
    with ThreadPoolExecutor(3) as pool:
        _per_user, summary = evaluate_sharded(
            rankings, truth, METRICS, n_shards=5, train=train, predictions=preds, threshold=4, map_fn=pool.map
        )
    _, ref = _reference(rankings, truth, train, preds)
    assert summary == pytest.approx(ref, rel=1e-12)
    with pytest.raises(MetricError, match="cannot be sharded"):
        evaluate_sharded(rankings, truth, ["coverage@10"], n_shards=2, train=train)
    assert shard_bounds(3, 10) == [(0, 1), (1, 2), (2, 3)]
