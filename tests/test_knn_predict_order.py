"""kNN rating prediction: the neighbour selection and summation order, and the lazily made top-N parts."""

from __future__ import annotations

import numpy as np
import pytest

from receval import Interactions
from receval.errors import DataError
from receval.recommenders.knn import ItemKNN, UserKNN


def _tied(seed: int = 3, n_users: int = 60, n_items: int = 40) -> Interactions:
    """Sparse ratings 1..3 in shuffled rows: few co-ratings, so many similarities tie (1.0, -1.0, 0.5...)."""
    rng = np.random.default_rng(seed)
    u, i = np.nonzero(rng.random((n_users, n_items)) < 0.25)
    order = rng.permutation(len(u))
    return Interactions.from_arrays(u[order], i[order], rng.integers(1, 4, len(u)))


def _reference(model, train: Interactions, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """KNNWithMeans by its definition: the candidates in training-row order, a stable sort by decreasing
    similarity, its first k, the positive ones summed in that order (mean-centred), clipped."""
    sim = model.similarity_
    xs, ys = (users, items) if model.user_based else (items, users)
    x_rows, y_rows = (train.users, train.items) if model.user_based else (train.items, train.users)
    out = []
    for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
        rows = np.flatnonzero(y_rows == y)  # training-row order
        cand = x_rows[rows]
        order = np.argsort(-sim[x, cand], kind="stable")[: model.k]
        sum_sim = sum_r = 0.0
        used = 0
        for j in order.tolist():
            s = sim[x, cand[j]]
            if s > 0:
                sum_sim += s
                sum_r += s * (float(train.ratings[rows[j]]) - model.means_[cand[j]])
                used += 1
        if used < model.min_k:
            sum_r = 0.0
        est = model.means_[x] + (sum_r / sum_sim if sum_sim != 0 else 0.0)
        out.append(min(max(est, train.scale.low), train.scale.high))
    return np.array(out)


@pytest.mark.parametrize("cls", [ItemKNN, UserKNN])
@pytest.mark.parametrize(("k", "min_k"), [(1, 1), (3, 2), (7, 1), (1000, 1)])
def test_predictions_equal_the_definition_bit_for_bit(cls, k, min_k):
    train = _tied()
    users, items = np.meshgrid(np.arange(train.n_users), np.arange(train.n_items), indexing="ij")
    users, items = users.ravel(), items.ravel()
    model = cls(k=k, min_k=min_k, similarity="pearson", mode="dense").fit(train)
    sim = model.similarity_
    assert len(np.unique(sim[sim > 0])) < 0.2 * (sim > 0).sum()  # the data has many ties
    np.testing.assert_array_equal(model.predict(users, items), _reference(model, train, users, items))


@pytest.mark.parametrize("cls", [ItemKNN, UserKNN])
@pytest.mark.parametrize("centered", [False, True])
def test_scoring_first_leaves_predictions_and_scores_unchanged(cls, centered):
    train = _tied(seed=5)
    users, items = train.users[::3], train.items[::3]
    fresh = cls(k=4, centered=centered).fit(train)
    predicted = fresh.predict(users, items)
    scores = fresh.score(np.arange(train.n_users))
    scored_first = cls(k=4, centered=centered).fit(train)
    np.testing.assert_array_equal(scored_first.score(np.arange(train.n_users)), scores)
    np.testing.assert_array_equal(scored_first.predict(users, items), predicted)
    rows = train.users if cls is UserKNN else train.items
    assert scored_first.neighbours_.shape == (rows.max() + 1,) * 2


def test_fit_for_prediction_makes_no_neighbourhoods_and_repeated_pairs_are_refused():
    train = _tied()
    model = ItemKNN(k=5).fit(train)
    model.predict(train.users[:10], train.items[:10])
    assert model._neighbours is None and model._weights_csr is None
    twice = Interactions.from_arrays([0, 0, 1], [1, 1, 0], [4, 5, 3])
    with pytest.raises(DataError, match=r"^1 repeated \(user, item\) ratings; call \.deduplicate"):
        ItemKNN().fit(twice)
