"""HKV equals implicit called directly; adapters for surprise and implicit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from implicit.cpu.als import AlternatingLeastSquares
from threadpoolctl import threadpool_limits

from receval import Interactions
from receval.errors import ColdStartError, ConfigError, NotFittedError
from receval.recommenders import make, parse_params, recommend
from receval.recommenders.adapters import ImplicitAdapter, SurpriseAdapter
from receval.recommenders.als import HKV
from receval.recommenders.knn import ItemKNN
from receval.recommenders.topn import exclusion_matrix


def _data(seed: int = 0, n_users: int = 120, n_items: int = 80) -> Interactions:
    rng = np.random.default_rng(seed)
    pop = rng.pareto(1.2, n_items) + 0.3
    mask = rng.random((n_users, n_items)) < np.minimum(0.7, 0.12 * pop / np.median(pop))
    mask[:, 0] = True
    u, i = np.nonzero(mask)
    return Interactions.from_arrays(u, i, rng.integers(1, 6, len(u)))


@pytest.mark.parametrize("values", ["rating", "ones", "positive"])
def test_hkv_equals_implicit_direct(values):
    train = _data()
    params = {"factors": 16, "regularization": 0.05, "alpha": 2.0, "iterations": 6}
    ours = HKV(**params, values=values, threshold=4, num_threads=1, seed=7).fit(train)
    if values == "rating":
        matrix = train.to_csr()
    elif values == "ones":
        matrix = train.to_csr("ones")
    else:
        matrix = train.to_csr((train.ratings >= 4).astype(np.float32))
        matrix.eliminate_zeros()
    with threadpool_limits(1, "blas"):
        ref = AlternatingLeastSquares(**params, num_threads=1, random_state=7)
        ref.fit(matrix, show_progress=False)
    np.testing.assert_array_equal(ours.user_factors_, ref.user_factors)
    np.testing.assert_array_equal(ours.item_factors_, ref.item_factors)
    users = np.arange(train.n_users)
    np.testing.assert_allclose(ours.score(users), ref.user_factors @ ref.item_factors.T, rtol=1e-6)
    ref_items, ref_scores = ref.recommend(users, train.to_csr()[users], N=10, filter_already_liked_items=True)
    items, scores = ours.recommend_implicit(users, 10, exclusion_matrix(train, train.n_users, train.n_items))
    valid = items >= 0
    np.testing.assert_array_equal(items[valid], ref_items[valid])
    np.testing.assert_allclose(scores[valid], ref_scores[valid], rtol=1e-6)
    generic, generic_scores = recommend(ours, users, 10, exclude=train)  # our path: same lists up to float ties
    np.testing.assert_array_equal(generic >= 0, valid)
    assert np.mean(generic[valid] == ref_items[valid]) > 0.99
    np.testing.assert_allclose(generic_scores[valid], ref_scores[valid], rtol=1e-5, atol=1e-6)


def test_implicit_lists_pad_like_recommend():
    train = _data(1)
    model = HKV(factors=8, iterations=4, num_threads=1).fit(train)
    users = np.arange(train.n_users)
    excl = exclusion_matrix(train, train.n_users, train.n_items)
    theirs, their_scores = model.recommend_implicit(users, train.n_items, excl)
    ours, our_scores = recommend(model, users, train.n_items, exclude=train)
    rated = train.to_csr().toarray() > 0
    assert ((theirs >= 0).sum(1) == (~rated).sum(1)).all()  # padded with -1 where training items were
    assert np.isnan(their_scores[theirs < 0]).all()
    np.testing.assert_array_equal(theirs < 0, ours < 0)
    np.testing.assert_allclose(their_scores[:, :10], our_scores[:, :10], rtol=1e-5, atol=1e-6)
    assert (theirs[:, :10] == ours[:, :10]).mean() > 0.99  # equal up to float32 ties
    unfiltered, _ = model.recommend_implicit(users[:3], 5)
    np.testing.assert_array_equal(unfiltered, recommend(model, users[:3], 5)[0])


def test_hkv_no_blas_warning_and_errors():
    train = _data(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with threadpool_limits(2, "blas"):
            HKV(factors=4, iterations=2).fit(train)
    with pytest.raises(NotFittedError):
        HKV().score([0])
    with pytest.raises(ConfigError, match="values="):
        HKV(values="clicks").fit(train)
    with pytest.raises(ColdStartError):
        HKV(factors=4, iterations=2).fit(train).score([train.n_users])


def test_surprise_adapter_equals_our_knn():
    train = _data(3)
    test_u, test_i = np.arange(40), (np.arange(40) * 7) % train.n_items
    adapter = make("surprise:KNNWithMeans", **parse_params(["k=20", "sim_options.name=pearson", "verbose=false"]))
    adapter.params["sim_options"]["user_based"] = False
    got = adapter.fit(train).predict(test_u, test_i)
    np.testing.assert_allclose(got, ItemKNN(k=20).fit(train).predict(test_u, test_i), atol=1e-9)
    assert adapter.get_params()["algorithm"] == "KNNWithMeans"
    svd = make("surprise:SVD", n_factors="5", n_epochs="3", random_state="0").fit(train)
    assert svd.model_.n_factors == 5
    assert svd.score([0, 1]).shape == (2, train.n_items)
    with pytest.raises(ConfigError, match="no algorithm 'Nope'"):
        SurpriseAdapter("Nope").fit(train)
    with pytest.raises(ConfigError, match="rejected the parameters"):
        SurpriseAdapter("SVD", factors=3).fit(train)


def test_implicit_adapter():
    train = _data(4)
    params = {"factors": 8, "iterations": 3, "regularization": 0.1, "num_threads": 1, "random_state": 1}
    adapter = ImplicitAdapter("AlternatingLeastSquares", **params).fit(train)
    hkv = HKV(factors=8, iterations=3, regularization=0.1, num_threads=1, seed=1).fit(train)
    np.testing.assert_array_equal(adapter.score([0, 5]), hkv.score([0, 5]))
    knn = make("implicit:CosineRecommender", K="10").fit(train)
    items, _ = recommend(knn, np.arange(train.n_users), 5, exclude=train)
    rated = train.to_csr().toarray() > 0
    assert not rated[np.arange(train.n_users)[:, None], items].any()
    with pytest.raises(ConfigError, match="no CPU model"):
        make("implicit:Missing").fit(train)
