"""``ndcg``: the ideal DCG computed only for the users whose list gains something, against every user's.

A user whose DCG is 0 scores 0 whatever its ideal above 0, and is an empty user when the ideal
is not above 0; :func:`receval.metrics.ranking._ideal_where_needed` computes the ideal of the
others only. The per-user values must be the same bits as with every user's ideal (the
per-user table is written byte for byte), for every gain, discount, threshold (negative gains
among them), graded reading and empty-user policy; ``ideal_dcg(users=...)`` must give each
chosen user the number it gives over all rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data.csr import CSR
from receval.metrics import ranking
from receval.metrics._input import MetricInput


def _truth_and_lists(seed: int, n_users: int, n_items: int, density: float, hit_rate: float):
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n_users, n_items)) < density, rng.integers(-2, 6, (n_users, n_items)), np.nan)
    rows, cols = np.nonzero(~np.isnan(dense))
    truth = CSR.from_coo(dense[rows, cols].astype(np.float32), rows, cols, (n_users, n_items))
    width = min(n_items, 6)
    rankings = np.array([rng.permutation(n_items)[:width] for _ in range(n_users)], dtype=np.int32).reshape(-1, width)
    rankings[rng.random(rankings.shape) > hit_rate] = -1  # most lists short or empty: few users gain
    return truth, rankings


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 25),
    st.integers(1, 12),
    st.floats(0, 1),
    st.floats(0, 1),
    st.sampled_from(ranking.GAINS),
    st.sampled_from(ranking.DISCOUNTS),
    st.sampled_from([-3.0, 0.0, 1.0, 2.5]),
    st.booleans(),
    st.sampled_from(["skip", "zero"]),
    st.integers(1, 8),
)
def test_ideal_of_the_gaining_users_gives_the_same_bits(
    seed, n_users, n_items, density, hit_rate, gain, discount, threshold, graded, empty_users, k
):
    truth, rankings = _truth_and_lists(seed, n_users, n_items, density, hit_rate)
    data = MetricInput(rankings, truth, threshold=threshold, empty_users=empty_users)
    kwargs = {"gain": gain, "discount": discount, "graded": graded, "threshold": None if graded else threshold}
    got = ranking.ndcg(data, k, **kwargs)
    with pytest.MonkeyPatch.context() as patch:  # every user's ideal, as before
        patch.setattr(ranking, "_ideal_where_needed", lambda data, dcg, k, thr, gain, graded, discount:
                      ranking.ideal_dcg(data.truth, k, thr, gain, graded=graded, discount=discount))  # fmt: skip
        expected = ranking.ndcg(MetricInput(rankings, truth, threshold=threshold, empty_users=empty_users), k,
                                **kwargs)  # fmt: skip
    assert got.tobytes() == expected.tobytes()
    users = np.flatnonzero(np.random.default_rng(seed).random(n_users) < 0.5)
    every = ranking.ideal_dcg(truth, k, threshold, gain, graded=graded, discount=discount)
    some = ranking.ideal_dcg(truth, k, threshold, gain, graded=graded, discount=discount, users=users)
    assert some[users].tobytes() == every[users].tobytes()
    assert not np.delete(some, users).any()


def test_a_user_gaining_nothing_scores_zero_or_is_empty_as_before():
    truth = CSR.from_coo(np.array([3.0, 1.0, 4.0], dtype=np.float32), np.array([0, 1, 2]), np.array([0, 1, 2]),
                         (3, 4))  # fmt: skip
    rankings = np.array([[3, -1], [1, 3], [3, -1]], dtype=np.int32)  # user 1 finds its item; users 0 and 2 nothing
    data = MetricInput(rankings, truth, threshold=2.0, empty_users="skip")
    values = ranking.ndcg(data, 2)
    assert values[0] == 0.0 and np.isnan(values[1]) and values[2] == 0.0  # user 1's item is below the threshold
