"""iALS through implicit: the same factors as implicit's own ALS on the binary matrix, seeded determinism."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from implicit.cpu.als import AlternatingLeastSquares
from threadpoolctl import threadpool_limits

from receval import Interactions
from receval.recommenders import make, recommend
from receval.recommenders.ials import IALS


def _data(seed: int, n_users: int = 60, n_items: int = 30, density: float = 0.2) -> Interactions:
    rng = np.random.default_rng(seed)
    users, items = np.nonzero(rng.random((n_users, n_items)) < density)
    return Interactions.from_arrays(users, items, rng.integers(1, 6, len(users)))


def test_factors_are_implicits_on_the_binary_matrix():
    data = _data(0)
    keep = data.ratings >= 4
    binary = sp.csr_matrix(
        (np.ones(keep.sum(), np.float32), (data.users[keep], data.items[keep])), shape=(data.n_users, data.n_items)
    )
    params = {"factors": 6, "regularization": 0.05, "alpha": 2.0, "iterations": 4}
    with threadpool_limits(1, "blas"):
        reference = AlternatingLeastSquares(**params, random_state=3, num_threads=1)
        reference.fit(binary, show_progress=False)
    model = IALS(**params, seed=3, num_threads=1).fit(data)
    np.testing.assert_array_equal(model.user_factors_, reference.user_factors)
    np.testing.assert_array_equal(model.item_factors_, reference.item_factors)
    expected = (reference.user_factors @ reference.item_factors.T).astype(np.float64)
    np.testing.assert_allclose(model.score(np.arange(data.n_users)), expected, rtol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_same_seed_gives_the_same_lists(threads):
    data = _data(1)
    users = np.arange(data.n_users)

    def lists(seed):
        model = make("ials", factors=8, iterations=5, seed=seed, num_threads=threads).fit(data)
        return recommend(model, users, k=10, exclude=data)[0]

    np.testing.assert_array_equal(lists(7), lists(7))
    np.testing.assert_array_equal(lists(7), _single_thread_lists(data, 7))
    assert (lists(7) != lists(8)).any()


def _single_thread_lists(data, seed):
    model = IALS(factors=8, iterations=5, seed=seed, num_threads=1).fit(data)
    return recommend(model, np.arange(data.n_users), k=10, exclude=data)[0]


def test_threshold_none_counts_every_rating():
    data = _data(2)
    assert IALS(threshold=None).confidence_matrix(data).nnz == data.n_ratings
    assert IALS().confidence_matrix(data).nnz == int((data.ratings >= 4).sum())
