"""Magic barrier (Algorithm 1 of Said & Bellogín 2018) and the overfitting check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from receval.data.interactions import Interactions, RatingScale
from receval.errors import DataError
from receval.stats.barrier import check_overfitting, magic_barrier, pair_statistics


def _rerated(n_users=300, pairs_per_user=30, m=5, seed=0):
    """Continuous ratings mu + eps, eps ~ N(0, sigma_u): the barrier is known exactly."""
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0.2, 1.5, n_users)
    users = np.repeat(np.arange(n_users), pairs_per_user * m)
    items = np.tile(np.repeat(np.arange(pairs_per_user), m), n_users)
    mu = rng.uniform(1, 5, n_users * pairs_per_user).repeat(m)
    ratings = mu + rng.normal(0, 1, len(mu)) * sigma[users]
    data = Interactions.from_arrays(users, items, ratings, scale=RatingScale(-10, 20, None))
    return data, pd.Series(sigma, index=np.arange(n_users))


def test_algorithm_1_by_hand():
    # pair (a,1): 3,5 -> mean 4, 1/m var 1 ; (a,2): 2,2,2 -> 0 ; (b,1): 1,5 -> 4 ; (b,2) rated once
    d = Interactions.from_arrays(
        ["a", "a", "a", "a", "a", "b", "b", "b"], [1, 1, 2, 2, 2, 1, 1, 2], [3, 5, 2, 2, 2, 1, 5, 4]
    )
    pairs = pair_statistics(d)
    assert pairs["m"].tolist() == [2, 3, 2]
    assert pairs.attrs["n_single"] == 1
    mb = magic_barrier(d, n_bootstrap=0)
    assert mb.system == pytest.approx(np.sqrt((1 + 0 + 4) / 3))
    assert mb.users.loc["a", "barrier"] == pytest.approx(np.sqrt(0.5))
    assert mb.users.loc["b", "barrier"] == pytest.approx(2.0)
    assert (mb.n_pairs, mb.n_single, mb.m_min, mb.m_max) == (3, 1, 2, 3)
    mb1 = magic_barrier(d, ddof=1, n_bootstrap=0)
    assert mb1.system == pytest.approx(np.sqrt((2 + 0 + 8) / 3))


def test_ddof_bias_and_unbiased_estimate():
    m = 5
    data, sigma = _rerated(m=m)
    truth = float(np.sqrt(np.mean(sigma**2)))
    b0 = magic_barrier(data, ddof=0, n_bootstrap=0).system
    b1 = magic_barrier(data, ddof=1, n_bootstrap=0).system
    assert b1 == pytest.approx(truth, rel=0.03)
    assert b0 / b1 == pytest.approx(np.sqrt((m - 1) / m), rel=1e-9)
    assert b0 < 0.92 * truth  # the paper's estimator is visibly low


def test_per_user_estimates_track_true_noise():
    data, sigma = _rerated()
    mb = magic_barrier(data, ddof=1, n_bootstrap=0)
    rho = stats.spearmanr(mb.users["barrier"], sigma.loc[mb.users.index]).statistic
    assert rho > 0.9


def test_bootstrap_intervals_cover_and_are_seeded():
    data, sigma = _rerated(n_users=120, pairs_per_user=20)
    truth = float(np.sqrt(np.mean(sigma**2)))
    a = magic_barrier(data, ddof=1, n_bootstrap=300, seed=3)
    b = magic_barrier(data, ddof=1, n_bootstrap=300, seed=3)
    assert a.system_ci == b.system_ci
    lo, hi = a.system_ci
    assert lo < a.system < hi
    assert lo < truth < hi
    users = a.users
    assert ((users["ci_low"] <= users["barrier"]) & (users["barrier"] <= users["ci_high"])).all()
    # per-user 95% intervals (percentile, 100 pairs of m=5) cover the true sigma_u for most users
    cover = (users["ci_low"] <= sigma.loc[users.index]) & (sigma.loc[users.index] <= users["ci_high"])
    assert cover.mean() > 0.8
    wide = magic_barrier(data, ddof=1, n_bootstrap=300, seed=3, resample="users").system_ci
    assert wide[1] - wide[0] > hi - lo  # users differ in noise: the cluster bootstrap is wider


def test_no_reratings_points_to_alternatives():
    d = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 3, 4])
    with pytest.raises(DataError, match=r"(?s)repeated ratings.*coherence.*synthetic"):
        magic_barrier(d)
    with pytest.raises(DataError, match="ddof"):
        magic_barrier(d, ddof=2)
    with pytest.raises(DataError, match="confidence"):
        magic_barrier(d, confidence=1.5)


def test_check_overfitting_per_user_and_result_object():
    data, _ = _rerated(n_users=50, pairs_per_user=10)
    mb = magic_barrier(data, ddof=1, n_bootstrap=50)
    below = mb.users["barrier"] * 0.5
    check = check_overfitting(below, mb)
    assert check.flagged and check.users["below"].all() and "below" in check.message
    above = mb.users["barrier"] * 1.5
    assert not check_overfitting(above, mb).flagged

    class Result:  # the shape of receval.evaluate's result
        per_user = pd.DataFrame({"user": above.index, "rmse": above.to_numpy(), "mae": 0.0})

    res = check_overfitting(Result(), mb)
    assert not res.flagged and res.n_users == 50
    assert check_overfitting(mb.system * 0.9, mb).flagged
    assert not check_overfitting(mb.system * 1.1, mb).flagged
    with pytest.raises(DataError, match="same users"):
        check_overfitting(pd.Series({"nobody": 1.0}), mb)


def test_per_user_intervals_in_blocks(monkeypatch):
    import receval.stats.barrier as barrier

    data, sigma = _rerated(n_users=40, pairs_per_user=15)
    monkeypatch.setattr(barrier, "_BOOT_CELLS", 7 * 200)  # blocks of 7 users
    users = magic_barrier(data, ddof=1, n_bootstrap=200, seed=1).users
    assert ((users["ci_low"] <= users["barrier"]) & (users["barrier"] <= users["ci_high"])).all()
    assert (users["ci_high"] - users["ci_low"] > 0).all()
    cover = (users["ci_low"] <= sigma.loc[users.index]) & (sigma.loc[users.index] <= users["ci_high"])
    assert cover.mean() > 0.75
