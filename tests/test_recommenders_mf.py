"""BiasedMF: RMSE within 1% of scikit-surprise's SVD on the same split; determinism; cold start."""

from __future__ import annotations

import numpy as np
import pytest

from receval import Interactions
from receval.errors import ConfigError, NotFittedError
from receval.recommenders.mf import BiasedMF

surprise = pytest.importorskip("surprise")


def _low_rank(seed: int, n_users: int = 500, n_items: int = 300, density: float = 0.15):
    rng = np.random.default_rng(seed)
    uf, itf = rng.normal(size=(n_users, 4)), rng.normal(size=(n_items, 4))
    mask = rng.random((n_users, n_items)) < density
    u, i = np.nonzero(mask)
    bu, bi = rng.normal(0, 0.5, n_users), rng.normal(0, 0.7, n_items)
    r = np.clip(np.round(3.4 + bu[u] + bi[i] + 0.5 * (uf[u] * itf[i]).sum(1) + rng.normal(0, 0.6, len(u))), 1, 5)
    data = Interactions.from_arrays(u, i, r)
    test = rng.random(len(u)) < 0.2
    return data.subset(~test), data.subset(test)


def _rmse(pred: np.ndarray, truth: Interactions) -> float:
    return float(np.sqrt(np.mean((pred - truth.ratings.astype(np.float64)) ** 2)))


def test_rmse_within_one_percent_of_surprise_svd():
    train, test = _low_rank(0)
    df = train.to_frame(original_ids=False)[["user", "item", "rating"]]
    trainset = surprise.Dataset.load_from_df(df, surprise.Reader(rating_scale=(1, 5))).build_full_trainset()
    ours, theirs = [], []
    for seed in range(2):
        algo = surprise.SVD(n_factors=50, random_state=seed).fit(trainset)
        ref = np.array([algo.predict(u, i).est for u, i in zip(test.users.tolist(), test.items.tolist(), strict=True)])
        theirs.append(_rmse(ref, test))
        ours.append(_rmse(BiasedMF(seed=seed).fit(train).predict(test.users, test.items), test))
    assert abs(np.mean(ours) - np.mean(theirs)) / np.mean(theirs) < 0.01, (ours, theirs)
    mean_only = _rmse(np.full(len(test), train.ratings.mean()), test)
    assert np.mean(ours) < 0.95 * mean_only  # it learned something


def test_seeded_and_deterministic():
    train, test = _low_rank(1, 120, 80)
    a = BiasedMF(factors=8, epochs=5, seed=3, ranking="rating").fit(train)
    b = BiasedMF(factors=8, epochs=5, seed=3, ranking="rating").fit(train)
    c = BiasedMF(factors=8, epochs=5, seed=4).fit(train)
    np.testing.assert_array_equal(a.user_factors_, b.user_factors_)
    np.testing.assert_array_equal(a.score([0, 1]), b.score([0, 1]))
    assert not np.array_equal(a.item_factors_, c.item_factors_)
    raw = a.score(test.users[:50])[np.arange(50), test.items[:50]]
    np.testing.assert_allclose(
        BiasedMF(**{**a.get_params(), "clip": False}).fit(train).predict(test.users[:50], test.items[:50]), raw
    )


def test_cold_start_and_errors():
    train, _ = _low_rank(2, 60, 40)
    no_user = train.subset(train.users != 5)
    model = BiasedMF(factors=4, epochs=3, clip=False).fit(no_user)
    np.testing.assert_allclose(model.predict([5, 5], [0, 1]), model.mean_ + model.item_bias_[[0, 1]])
    with pytest.raises(NotFittedError):
        BiasedMF().score([0])
    with pytest.raises(ConfigError, match="factors must be"):
        BiasedMF(factors=0).fit(train)
    with pytest.raises(ConfigError, match="learning_rate"):
        BiasedMF(learning_rate=-1).fit(train)


def test_pure_svd_ranking_equals_numpy_svd():
    # PureSVD (Cremonesi, Koren & Turrin, RecSys 2010): scores r_u Q Qᵀ with Q the leading right singular vectors
    train, _ = _low_rank(2, 60, 40)
    dense = train.to_csr().toarray().astype(np.float64)
    _, _, vt = np.linalg.svd(dense, full_matrices=False)
    for f in (5, 60):  # svds path, and more factors than items: every singular vector (dense path)
        q = vt[:f].T
        model = BiasedMF(factors=f, epochs=1).fit(train)
        np.testing.assert_allclose(model.score(np.arange(12)), dense[:12] @ q @ q.T, atol=1e-8)
    rated = BiasedMF(factors=5, epochs=1, ranking="rating").fit(train).predict([0, 1], [2, 3])
    np.testing.assert_array_equal(rated, BiasedMF(factors=5, epochs=1).fit(train).predict([0, 1], [2, 3]))
    with pytest.raises(ConfigError, match="ranking='best'"):
        BiasedMF(ranking="best").fit(train)


def test_mf_epochs_share_the_bound_of_als_sweeps():
    from receval.recommenders import make
    from receval.recommenders.base import MAX_ITERATIONS

    with pytest.raises(ConfigError, match=r"epochs=1000000000000 is more than 10,000 passes over the ratings"):
        make("mf", epochs=10**12)
    assert make("mf", epochs=MAX_ITERATIONS).epochs == MAX_ITERATIONS
