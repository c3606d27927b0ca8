"""``convention="recpack"`` against RecPack's metric definitions, on generated score matrices.

tests/peers/recpack holds RecPack's own fixed test cases; this adds generated runs: users without a scored item,
rows with fewer scored items than K, K beyond every row, users without a test item. RecPack is not installed here,
and its code is AGPL-3.0 (receval is MIT): nothing of it is copied. What its code computes, read from LienM/recpack
at d42997736d0d5dfda5127a7690c732465aa03df3 (the commit the preset was read from), is re-written below as plain
loops: ``Metric._eliminate_empty_users`` keeps the users with a test item; ``get_top_K_ranks`` ranks a row's stored
scores, highest first, at most K of them; PrecisionK divides the hits by K, RecallK by the test items,
CalibratedRecallK by min(test items, K); NDCGK sums 1 / log2(rank + 1) over the hits and divides by the same sum
over ranks 1..min(test items, K); ReciprocalRankK is 1 / the best hit's rank (0 without a hit); HitK counts the hits,
its value the mean count; each ``value`` is the mean over the users kept. Scores are distinct, so no tie is decided.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

import receval


def _value(metric: str, hit_ranks: list[int], n_relevant: int, k: int) -> float:
    """One user's value: the 1-based ranks of its hits in the top k, its number of test items."""
    if metric == "precision":
        return len(hit_ranks) / k
    if metric == "recall":
        return len(hit_ranks) / n_relevant
    if metric == "calibrated_recall":
        return len(hit_ranks) / min(n_relevant, k)
    if metric == "ndcg":
        ideal = sum(1 / math.log2(r + 1) for r in range(1, min(n_relevant, k) + 1))
        return sum(1 / math.log2(r + 1) for r in hit_ranks) / ideal
    if metric == "mrr":
        return 1 / min(hit_ranks) if hit_ranks else 0.0
    assert metric == "tp"
    return float(len(hit_ranks))


def _recpack(metric: str, y_true: csr_matrix, y_pred: csr_matrix, k: int) -> tuple[list[int], list[float]]:
    """The users RecPack keeps (those with a test item) and each one's value, by the definitions above."""
    users, values = [], []
    for u in range(y_true.shape[0]):
        relevant = set(y_true[u].indices[y_true[u].data != 0])
        if relevant:
            row = y_pred[u]
            top = row.indices[np.argsort(-row.data, kind="stable")][:k]
            hit_ranks = [r for r, item in enumerate(top.tolist(), start=1) if item in relevant]
            users.append(u)
            values.append(_value(metric, hit_ranks, len(relevant), k))
    return users, values


@st.composite
def matrices(draw) -> tuple[csr_matrix, csr_matrix]:
    n_users, n_items = draw(st.integers(1, 8)), draw(st.integers(2, 12))
    truth = np.array(draw(st.lists(st.booleans(), min_size=n_users * n_items, max_size=n_users * n_items)))
    scored = np.array(draw(st.lists(st.booleans(), min_size=n_users * n_items, max_size=n_users * n_items)))
    truth[0] = scored[0] = True  # user 0 in both tables (receval refuses a run none of whose users is in the truth)
    scores = np.zeros(n_users * n_items)
    scores[scored] = np.arange(1, scored.sum() + 1)[np.argsort(draw(st.permutations(range(int(scored.sum())))))]
    shape = (n_users, n_items)
    return csr_matrix(truth.reshape(shape).astype(float)), csr_matrix(scores.reshape(shape))


@pytest.mark.filterwarnings("ignore:none of the item ids", "ignore:.*have no truth")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matrices(), st.sampled_from([1, 2, 3, 5, 20]))
def test_metrics_equal_recpacks(pair, k: int) -> None:
    y_true, y_pred = pair
    t, p = y_true.tocoo(), y_pred.tocoo()
    truth = pd.DataFrame({"user": t.row, "item": t.col, "rating": 1.0})
    recs = pd.DataFrame({"user": p.row, "item": p.col, "score": p.data})
    strings = {
        "precision": f"precision@{k}(convention=recpack)",
        "recall": f"recall@{k}(convention=recpack)",
        "calibrated_recall": f"calibrated_recall@{k}",
        "ndcg": f"ndcg@{k}(convention=recpack)",
        "mrr": f"mrr@{k}(convention=recpack)",
        "tp": f"tp@{k}(convention=recpack)",
    }
    result = receval.evaluate(recs, truth, list(strings.values()), unknown_users="warn")
    table = result.per_user.set_index("user")
    for metric, string in strings.items():
        users, per_user = _recpack(metric, y_true, y_pred, k)
        np.testing.assert_allclose(
            table.loc[users, string].to_numpy(float), per_user, rtol=0, atol=1e-12, err_msg=string
        )
        assert result.summary[string] == pytest.approx(np.mean(per_user), abs=1e-12), string
