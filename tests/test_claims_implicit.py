"""Claims about implicit (0.7.3, installed), checked against implicit itself.

- receval.recommenders.knn: item-kNN's neighbourhoods "are the voter's (...), as implicit's": each rated item votes
  for its k most similar items. implicit's ``ItemItemRecommender`` keeps, for each item, its ``K`` most similar items
  *counting the item itself* (implicit/nearest_neighbours.py, ``all_pairs_knn``) and scores ``user_items @
  similarity``; so ``ItemKNN(k, similarity="vector-cosine").score`` is that product with implicit's
  ``CosineRecommender(K=k + 1)``, its diagonal removed.
- receval.recommenders.ials: ``factors``, ``regularization``, ``alpha`` and ``iterations`` "default to implicit's
  own (100, 0.01, 1.0, 15)" (docs/guides/baselines.md too).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval import Interactions
from receval.recommenders.ials import IALS
from receval.recommenders.knn import ItemKNN

implicit_nn = pytest.importorskip("implicit.nearest_neighbours")
implicit_als = pytest.importorskip("implicit.cpu.als")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([1, 2, 5, 12, 40]), st.sampled_from([0.15, 0.4]))
def test_item_knn_votes_as_implicits_cosine_recommender(seed: int, k: int, density: float) -> None:
    rng = np.random.default_rng(seed)
    n_users, n_items = 35, 25
    rated = rng.random((n_users, n_items)) < density
    for item in range(n_items):  # two raters at least: items rated by one same user alone all have cosine 1, a tie
        rated[rng.choice(n_users, 2, replace=False), item] = True
    u, i = np.nonzero(rated)
    ratings = rng.random(len(u)) * 4 + 1  # real-valued: no two cosines tie at a neighbourhood's edge
    train = Interactions.from_arrays(u, i, ratings)
    values = train.ratings.astype(np.float64)  # the float32 ratings receval keeps
    user_items = sp.csr_matrix((values, (train.users, train.items)), shape=(train.n_users, train.n_items))
    ours = ItemKNN(k=k, similarity="vector-cosine").fit(train).score(np.arange(train.n_users))

    model = implicit_nn.CosineRecommender(K=k + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # implicit's note on the matrix format it converts
        model.fit(user_items, show_progress=False)
    similarity = model.similarity.toarray()
    assert np.allclose(np.diag(similarity)[user_items.getnnz(axis=0) > 0], 1.0)  # each item is its own neighbour
    np.fill_diagonal(similarity, 0.0)
    np.testing.assert_allclose(ours, user_items @ similarity, rtol=1e-6, atol=1e-9)  # implicit's float32 cosines


def test_ials_defaults_are_implicits() -> None:
    theirs = inspect.signature(implicit_als.AlternatingLeastSquares.__init__).parameters
    ours = IALS().get_params()
    for name in ("factors", "regularization", "alpha", "iterations"):
        assert ours[name] == theirs[name].default, name
    assert (ours["factors"], ours["regularization"], ours["alpha"], ours["iterations"]) == (100, 0.01, 1.0, 15)
