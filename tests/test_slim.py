"""SLIM (Ning & Karypis 2011) against an independent per-column elastic net and the problem's optimality conditions."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from sklearn.linear_model import ElasticNet

from receval import Interactions
from receval.errors import ConfigError
from receval.recommenders import make
from receval.recommenders.linear import SLIM


def _data(seed: int, n_users: int = 50, n_items: int = 15, density: float = 0.3) -> Interactions:
    rng = np.random.default_rng(seed)
    users, items = np.nonzero(rng.random((n_users, n_items)) < density)
    return Interactions.from_arrays(users, items, rng.integers(1, 6, len(users)))


def _binary(data: Interactions, threshold: float | None) -> np.ndarray:
    x = np.zeros((data.n_users, data.n_items))
    keep = np.ones(data.n_ratings, bool) if threshold is None else data.ratings >= threshold
    x[data.users[keep], data.items[keep]] = 1.0
    return x


@pytest.mark.parametrize(("seed", "alpha", "l1_ratio", "threshold"), [(0, 0.01, 0.1, None), (1, 0.003, 0.5, 3.0)])
def test_columns_equal_elastic_nets_fitted_one_by_one_on_dense_data(seed, alpha, l1_ratio, threshold):
    data = _data(seed)
    x = _binary(data, threshold)
    model = SLIM(alpha=alpha, l1_ratio=l1_ratio, topK=100, threshold=threshold, max_iter=5000, tol=1e-12).fit(data)
    w = model.weights_.toarray()
    for j in range(data.n_items):
        others = x.copy()
        others[:, j] = 0.0
        net = ElasticNet(alpha=alpha, l1_ratio=l1_ratio, positive=True, fit_intercept=False, max_iter=5000, tol=1e-12)
        np.testing.assert_allclose(w[:, j], net.fit(others, x[:, j]).coef_, rtol=0, atol=1e-8)
    assert np.all(np.diag(w) == 0) and np.all(w >= 0) and w.any()


def test_weights_satisfy_the_optimality_conditions():
    """Per column j: min (1/2n)||x_j − X w||² + α ρ |w|₁ + α (1−ρ)/2 |w|², w >= 0, w_j = 0. With the gradient
    g = −(1/n) Xᵀ(x_j − X w) + α(1−ρ) w: g_k + αρ = 0 where w_k > 0 and g_k + αρ >= 0 where w_k = 0 (k ≠ j)."""
    data = _data(2, n_users=80, n_items=12)
    alpha, rho = 0.005, 0.2
    x = _binary(data, None)
    w = SLIM(alpha=alpha, l1_ratio=rho, threshold=None, max_iter=10000, tol=1e-14).fit(data).weights_.toarray()
    n = data.n_users
    for j in range(data.n_items):
        others = x.copy()
        others[:, j] = 0.0
        g = -others.T @ (x[:, j] - others @ w[:, j]) / n + alpha * (1 - rho) * w[:, j] + alpha * rho
        active = (w[:, j] > 0) & (np.arange(data.n_items) != j)
        assert np.abs(g[active]).max(initial=0) < 1e-7
        assert g[~active & (np.arange(data.n_items) != j)].min(initial=0) > -1e-7


def test_top_k_keeps_each_columns_largest_weights():
    data = _data(3, n_users=80, n_items=20, density=0.4)
    full = SLIM(alpha=0.002, threshold=None).fit(data).weights_.toarray()
    cut = SLIM(alpha=0.002, threshold=None, topK=3).fit(data).weights_.toarray()
    for j in range(data.n_items):
        column = full[:, j]
        expected = np.zeros_like(column)
        order = np.lexsort((np.arange(len(column)), -column))[:3]
        expected[order] = column[order]
        np.testing.assert_array_equal(cut[:, j], np.where(expected > 0, expected, 0.0))


def test_the_default_penalty_and_a_missing_scikit_learn(monkeypatch):
    assert make("slim").get_params() == {
        "l1_ratio": 0.02,
        "alpha": 0.2,
        "topK": 100,
        "threshold": 4.0,
        "max_iter": 100,
        "tol": 1e-4,
    }
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sklearn" else real(name, *a))
    with pytest.raises(ConfigError, match="slim needs scikit-learn"):
        make("slim")


@pytest.mark.realdata
def test_the_default_penalty_gives_every_ml100k_user_a_full_list(ml100k_dir):
    """RecBole's alpha=0.2, l1_ratio=0.02: every u1.test user has at least 10 positively scored unrated items, so no
    top-10 list is decided by tie order (Dacrema et al.'s alpha=1 left 222 weights and 170 users short)."""
    import pandas as pd

    columns = ["user", "item", "rating", "timestamp"]
    base = pd.read_csv(ml100k_dir / "u1.base", sep="\t", names=columns)
    test = pd.read_csv(ml100k_dir / "u1.test", sep="\t", names=columns)
    data = Interactions.from_frame(pd.concat([base, test], ignore_index=True), rating="rating")
    train = data.subset(np.arange(len(base)))
    users = np.unique(data.users[len(base) :])
    model = make("slim").fit(train)
    scores = model.score(users)
    scores[train.to_csr("ones")[users].toarray() > 0] = 0.0  # rated items are not recommended
    assert model.weights_.nnz > 40_000
    assert (scores > 0).sum(axis=1).min() >= 10
