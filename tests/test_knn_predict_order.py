"""kNN rating prediction: the neighbour selection and summation order, and the lazily made top-N parts."""

from __future__ import annotations

import numpy as np
import pytest

from receval import Interactions
from receval.errors import ConfigError, DataError
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
    users = np.repeat(np.arange(train.n_users), train.n_items)
    items = np.tile(np.arange(train.n_items), train.n_users)
    model = cls(k=k, min_k=min_k, similarity="pearson", mode="dense").fit(train)
    sim = model.similarity_
    assert len(np.unique(sim[sim > 0])) < 0.2 * (sim > 0).sum()  # the data has many ties
    np.testing.assert_array_equal(model.predict(users, items), _reference(model, train, users, items))


@pytest.mark.parametrize("cls", [ItemKNN, UserKNN])
@pytest.mark.parametrize(
    ("centered", "mode", "similarity"),
    [(False, "dense", "auto"), (True, "sparse", "auto"), (False, "sparse", "pearson"), (True, "dense", "cosine")],
)
def test_scoring_first_leaves_predictions_and_scores_unchanged(cls, centered, mode, similarity):
    train = _tied(seed=5)
    users, items = train.users[::3], train.items[::3]
    fresh = cls(k=4, centered=centered, mode=mode, similarity=similarity).fit(train)
    predicted = fresh.predict(users, items)
    scores = fresh.score(np.arange(train.n_users))
    scored_first = cls(k=4, centered=centered, mode=mode, similarity=similarity).fit(train)
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


@pytest.mark.parametrize(
    ("cls", "options"),
    [
        (ItemKNN, {"k": 50, "name": "pearson"}),
        (UserKNN, {"k": 50, "name": "pearson"}),
        (ItemKNN, {"k": 3, "min_k": 3, "name": "cosine", "min_support": 3}),
        (UserKNN, {"k": 5, "min_k": 3, "name": "pearson", "min_support": 2}),
    ],
)
def test_means_false_is_surprise_knn_basic(cls, options):
    surprise = pytest.importorskip("surprise")
    train, test = _tied(seed=7, n_users=80, n_items=50), _tied(seed=8, n_users=80, n_items=50)
    df = train.to_frame(original_ids=False)[["user", "item", "rating"]]
    trainset = surprise.Dataset.load_from_df(df, surprise.Reader(rating_scale=(1, 3))).build_full_trainset()
    options = dict(options)
    k, min_k, min_support = options.pop("k"), options.pop("min_k", 1), options.pop("min_support", 1)
    sim_options = {**options, "min_support": min_support, "user_based": cls is UserKNN}
    algo = surprise.KNNBasic(k=k, min_k=min_k, sim_options=sim_options, verbose=False).fit(trainset)
    assert (train.user_ids == np.arange(train.n_users)).all() and (train.item_ids == np.arange(train.n_items)).all()
    users, items = test.user_ids[test.users], test.item_ids[test.items]  # surprise's ids: train's indices
    ref = np.array([algo.predict(u, i).est for u, i in zip(users.tolist(), items.tolist(), strict=True)])
    model = cls(k=k, min_k=min_k, min_support=min_support, similarity=options["name"], means=False).fit(train)
    known = (users < train.n_users) & (items < train.n_items)
    got = np.full(len(users), train.ratings.mean(dtype=np.float64))
    got[known] = model.predict(train.user_index(users[known]), train.item_index(items[known]))
    impossible = np.array([algo.predict(u, i).details["was_impossible"] for u, i in zip(users, items, strict=True)])
    assert 0 < impossible.sum() < len(ref)  # the global-mean fallback is exercised
    np.testing.assert_array_equal(got, ref)
    with_means = cls(k=k, min_k=min_k, min_support=min_support, similarity=options["name"]).fit(train)
    assert not np.allclose(with_means.predict(train.users, train.items), model.predict(train.users, train.items))


def test_means_must_be_a_boolean():
    with pytest.raises(ConfigError, match="means must be True"):
        ItemKNN(means="no").fit(_tied())  # type: ignore[arg-type]
