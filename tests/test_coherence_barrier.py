"""Barrier and coherence on generated data with re-ratings and known per-user noise."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from receval.data import synthetic
from receval.stats.barrier import magic_barrier
from receval.stats.coherence import coherence_barrier_correlation

M = 5


@pytest.fixture(scope="module")
def truth():
    return synthetic.generate_with_truth(n_users=300, n_items=400, n_ratings=15_000, reratings=M, seed=1)


def test_unbiased_estimate_within_5_percent(truth):
    b1 = magic_barrier(truth.data, ddof=1, n_bootstrap=0)
    assert b1.m_min == b1.m_max == M
    # the exact barrier of the generator (noise after rounding and clipping) and the effective noise RMSE
    assert b1.system == pytest.approx(truth.magic_barrier(), rel=0.05)
    assert b1.system == pytest.approx(truth.noise_rmse(), rel=0.05)


def test_paper_estimator_biased_by_sqrt_m_minus_1_over_m(truth):
    b0 = magic_barrier(truth.data, ddof=0, n_bootstrap=0).system
    b1 = magic_barrier(truth.data, ddof=1, n_bootstrap=0).system
    assert b0 / b1 == pytest.approx(np.sqrt((M - 1) / M), rel=1e-9)
    assert b0 == pytest.approx(np.sqrt((M - 1) / M) * truth.magic_barrier(), rel=0.05)
    assert b0 < 0.95 * truth.magic_barrier()


def test_per_user_estimates_follow_true_noise(truth):
    users = magic_barrier(truth.data, ddof=1, n_bootstrap=0).users
    idx = users["index"].to_numpy()
    assert stats.spearmanr(users["barrier"], truth.user_noise[idx]).statistic > 0.8
    assert stats.spearmanr(users["barrier"], truth.magic_barrier(per_user=True)[idx]).statistic > 0.8


def test_correlation_table_weighted_std_ahead_of_random(truth):
    barrier = magic_barrier(truth.data, ddof=1, n_bootstrap=0)
    train = truth.data.deduplicate("first")  # the "system" rating of each pair
    table = coherence_barrier_correlation(train, barrier, seed=0)
    assert list(table.index) == [
        "entropy",
        "kld",
        "mean",
        "wmean",
        "std",
        "wstd",
        "size",
        "random",
        "n_ratings",
        "mean_rating",
    ]
    assert (table["n_users"] == 300).all()
    # more coherent users (higher C) have a lower barrier: negative, and far beyond random
    assert table.loc["wstd", "spearman"] < -0.3
    assert abs(table.loc["wstd", "spearman"]) > abs(table.loc["random", "spearman"]) + 0.2
    assert abs(table.loc["wstd", "pearson"]) > abs(table.loc["random", "pearson"]) + 0.2
    assert abs(table.loc["wstd", "spearman"]) >= abs(table.loc["std", "spearman"])


def test_overfitting_check_on_an_evaluate_result(truth):
    """A predictor that knows each row's realised rating beats the barrier: flagged."""
    from receval import evaluate
    from receval.stats.barrier import check_overfitting

    barrier = magic_barrier(truth.data, ddof=1, n_bootstrap=0)
    test = truth.data.deduplicate("last").to_frame()
    cheat = test.assign(prediction=test["rating"] + 0.1)
    honest = test.assign(prediction=truth.data.deduplicate("last").ratings.mean())
    flagged = check_overfitting(evaluate(None, test, ["rmse"], predictions=cheat), barrier)
    assert flagged.flagged and flagged.n_users == 300 and flagged.rmse == pytest.approx(0.1, rel=1e-4)
    assert not check_overfitting(evaluate(None, test, ["rmse"], predictions=honest), barrier).flagged
