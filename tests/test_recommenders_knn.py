"""kNN: oracle tests against scikit-surprise's KNNWithMeans, brute-force similarities, top-N."""

from __future__ import annotations

import numpy as np
import pytest

from receval import Interactions
from receval.errors import ColdStartError, ConfigError, DataError, NotFittedError
from receval.recommenders import make, recommend
from receval.recommenders.knn import ItemKNN, UserKNN

surprise = pytest.importorskip("surprise")


def _generated(seed: int = 0, n_users: int = 250, n_items: int = 180) -> tuple[Interactions, Interactions]:
    """Low-rank ratings 1..5 with popularity-biased exposure, split 80/20 by rows."""
    rng = np.random.default_rng(seed)
    uf, itf = rng.normal(size=(n_users, 3)), rng.normal(size=(n_items, 3))
    pop = rng.pareto(1.5, n_items) + 0.5
    mask = rng.random((n_users, n_items)) < np.minimum(0.6, 0.15 * pop / np.median(pop))[None, :]
    u, i = np.nonzero(mask)
    order = rng.permutation(len(u))  # rows in no particular order: exercises the tie order
    u, i = u[order], i[order]
    r = np.clip(np.round(3 + (uf[u] * itf[i]).sum(1) + rng.normal(0, 0.7, len(u))), 1, 5)
    data = Interactions.from_arrays(u, i, r)
    test = rng.random(len(u)) < 0.2
    return data.subset(~test), data.subset(test)


@pytest.fixture(scope="module")
def split() -> tuple[Interactions, Interactions]:
    return _generated()


def _surprise_predictions(train: Interactions, test: Interactions, **options) -> np.ndarray:
    df = train.to_frame(original_ids=False)[["user", "item", "rating"]]
    reader = surprise.Reader(rating_scale=(train.scale.low, train.scale.high))
    trainset = surprise.Dataset.load_from_df(df, reader).build_full_trainset()
    k, min_k = options.pop("k"), options.pop("min_k", 1)
    algo = surprise.KNNWithMeans(k=k, min_k=min_k, sim_options=options, verbose=False).fit(trainset)
    return np.array([algo.predict(u, i).est for u, i in zip(test.users.tolist(), test.items.tolist(), strict=True)])


@pytest.mark.parametrize("user_based", [False, True])
def test_pearson_k50_equals_surprise_knn_with_means(split, user_based):
    train, test = split
    assert len(test) > 1500
    ref = _surprise_predictions(train, test, k=50, name="pearson", user_based=user_based)
    cls = UserKNN if user_based else ItemKNN
    got = cls(k=50, similarity="pearson").fit(train).predict(test.users, test.items)
    np.testing.assert_allclose(got, ref, atol=1e-6, rtol=0)


@pytest.mark.parametrize(
    ("user_based", "options"),
    [
        (False, {"k": 5, "min_k": 3, "name": "cosine", "min_support": 3}),
        (True, {"k": 10, "min_k": 2, "name": "pearson", "min_support": 4}),
    ],
)
def test_other_settings_equal_surprise(split, user_based, options):
    train, test = split
    ref = _surprise_predictions(train, test, user_based=user_based, **dict(options))
    cls = UserKNN if user_based else ItemKNN
    model = cls(k=options["k"], min_k=options["min_k"], similarity=options["name"], min_support=options["min_support"])
    got = model.fit(train).predict(test.users, test.items)
    np.testing.assert_allclose(got, ref, atol=1e-6, rtol=0)


def _brute_similarity(dense: np.ndarray, kind: str, shrinkage: float, min_support: int) -> np.ndarray:
    """Columns are the compared entities; 0 = unrated."""
    rated = dense > 0
    if kind == "adjusted-cosine":
        row_mean = np.where(rated, dense, 0).sum(1) / np.maximum(rated.sum(1), 1)
        dense = np.where(rated, dense - row_mean[:, None], 0)
    n = dense.shape[1]
    sim = np.eye(n)
    full_norm = np.sqrt((dense * dense).sum(0))
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            common = rated[:, a] & rated[:, b]
            m = common.sum()
            if m < min_support or m == 0:
                continue
            x, y = dense[common, a], dense[common, b]
            if kind == "pearson":
                x, y = x - x.mean(), y - y.mean()
            den = full_norm[a] * full_norm[b] if kind == "vector-cosine" else np.sqrt((x * x).sum() * (y * y).sum())
            s = (x * y).sum() / den if den > 1e-12 else 0.0
            sim[a, b] = s * (m / (m + shrinkage) if shrinkage else 1.0)
    return sim


@pytest.mark.parametrize("kind", ["pearson", "cosine", "adjusted-cosine", "vector-cosine"])
@pytest.mark.parametrize("user_based", [False, True])
def test_similarities_equal_brute_force(kind, user_based):
    train, _ = _generated(seed=3, n_users=40, n_items=30)
    dense = train.to_csr().toarray().astype(np.float64)
    if user_based:
        dense = dense.T
    cls = UserKNN if user_based else ItemKNN
    model = cls(similarity=kind, shrinkage=2.5, min_support=2).fit(train)
    np.testing.assert_allclose(model.similarity_, _brute_similarity(dense, kind, 2.5, 2), atol=1e-10)


@pytest.mark.parametrize("centered", [False, True])
def test_topn_scores_equal_brute_force(split, centered):
    train, _ = split
    dense = train.to_csr().toarray().astype(np.float64)
    rated = dense > 0
    for cls in (ItemKNN, UserKNN):
        model = cls(k=7, centered=centered, similarity="pearson").fit(train)
        sim = model.similarity_.copy()
        np.fill_diagonal(sim, -np.inf)
        nbrs = np.zeros_like(sim)
        for x in range(len(sim)):
            top = np.argsort(-sim[x], kind="stable")[:7]
            top = top[sim[x, top] > 0]
            nbrs[x, top] = sim[x, top]
        axis = 1 if cls is UserKNN else 0
        means = dense.sum(axis) / np.maximum(rated.sum(axis), 1)
        w = dense - (np.expand_dims(means, axis) if centered else 0)
        w = np.where(rated, w, 0)
        expected = nbrs[:20] @ w if cls is UserKNN else w[:20] @ nbrs
        np.testing.assert_allclose(model.score(np.arange(20)), expected, atol=1e-9)


def test_topn_lists_exclude_training_items(split):
    train, _ = split
    model = make("item-knn", k=20, similarity="cosine").fit(train)
    items, scores = recommend(model, np.arange(train.n_users), 10, exclude=train)
    rated = train.to_csr().toarray() > 0
    assert not rated[np.arange(train.n_users)[:, None], items].any()
    assert (np.diff(scores, axis=1) <= 0).all()


def test_cold_start_and_bad_input(split):
    train, _ = split
    model = ItemKNN()
    with pytest.raises(NotFittedError):
        model.predict([0], [0])
    model.fit(train)
    with pytest.raises(ColdStartError, match="user index"):
        model.predict([train.n_users], [0])
    with pytest.raises(ColdStartError, match="item index"):
        model.predict([0], [-1])
    # in the id space but without training ratings: the global mean (as surprise)
    no_item = train.subset(train.items != 3)
    fitted = ItemKNN().fit(no_item)
    assert fitted.predict([0], [3])[0] == pytest.approx(float(no_item.ratings.astype(float).mean()))
    with pytest.raises(ConfigError, match="similarity='jacard'"):
        ItemKNN(similarity="jacard").fit(train)
    with pytest.raises(ConfigError, match="k must be"):
        UserKNN(k=0).fit(train)
    duplicated = Interactions.from_arrays([0, 0], [1, 1], [3, 4])
    with pytest.raises(DataError, match="deduplicate"):
        UserKNN().fit(duplicated)


@pytest.mark.parametrize("cls", [ItemKNN, UserKNN])
def test_auto_similarity_ranks_by_vector_cosine_and_predicts_by_pearson(split, cls):
    train, test = split
    auto = cls(k=9).fit(train)
    assert auto.similarity == "auto"
    ranking = cls(k=9, similarity="vector-cosine").fit(train)
    rating = cls(k=9, similarity="pearson").fit(train)
    users = np.arange(train.n_users)
    np.testing.assert_array_equal(auto.score(users), ranking.score(users))
    np.testing.assert_array_equal(auto.predict(test.users, test.items), rating.predict(test.users, test.items))
    np.testing.assert_array_equal(auto.similarity_, rating.similarity_)
    assert not np.array_equal(ranking.score(users), rating.score(users))


def _top_k_restricted(sim: np.ndarray, k: int) -> np.ndarray:
    """The dense similarity keeping each row's k largest positive off-diagonal entries (ties: lower index)."""
    sim = sim.copy()
    np.fill_diagonal(sim, -np.inf)
    nbrs = np.zeros_like(sim)
    for x in range(len(sim)):
        top = np.argsort(-sim[x], kind="stable")[:k]
        top = top[sim[x, top] > 0]
        nbrs[x, top] = sim[x, top]
    return nbrs


@pytest.mark.parametrize("kind", ["auto", "pearson", "cosine", "adjusted-cosine", "vector-cosine"])
@pytest.mark.parametrize("cls", [ItemKNN, UserKNN])
def test_sparse_mode_scores_equal_dense_scoring_restricted_to_top_k(split, monkeypatch, cls, kind):
    train, test = split
    n_x = train.n_users if cls is UserKNN else train.n_items
    monkeypatch.setattr("receval.recommenders.knn._BLOCK_CELLS", 7 * n_x)  # predict: blocks of 7 rows
    options = {"k": 6, "similarity": kind, "shrinkage": 1.5, "min_support": 2, "centered": kind == "cosine"}
    sparse = cls(mode="sparse", **options).fit(train)
    dense = cls(mode="dense", **options).fit(train)
    assert (sparse.mode_, dense.mode_) == ("sparse", "dense") and sparse.similarity_ is None
    ranking = cls(mode="dense", **{**options, "similarity": "vector-cosine" if kind == "auto" else kind}).fit(train)
    nbrs = _top_k_restricted(ranking.similarity_, 6)
    np.testing.assert_array_equal(sparse.neighbours_.toarray(), nbrs)
    w = sparse._weights.toarray()
    users = np.arange(train.n_users)
    expected = nbrs @ w if cls is UserKNN else w @ nbrs
    np.testing.assert_allclose(sparse.score(users), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(sparse.score(users), dense.score(users))
    # predictions: the similarity rows computed on demand equal the dense matrix's
    np.testing.assert_array_equal(sparse.predict(test.users, test.items), dense.predict(test.users, test.items))


@pytest.mark.parametrize("user_based", [False, True])
def test_sparse_mode_pearson_predictions_equal_surprise(split, monkeypatch, user_based):
    train, test = split
    monkeypatch.setattr("receval.recommenders.knn._BLOCK_CELLS", 3_000)
    ref = _surprise_predictions(train, test, k=50, name="pearson", user_based=user_based)
    cls = UserKNN if user_based else ItemKNN
    got = cls(k=50, similarity="pearson", mode="sparse").fit(train).predict(test.users, test.items)
    np.testing.assert_allclose(got, ref, atol=1e-6, rtol=0)


def test_mode_auto_goes_sparse_when_the_dense_matrices_are_large_and_dense_is_sized_first(split, monkeypatch):
    train, _ = split
    assert ItemKNN().fit(train).mode_ == "dense"
    # auto keeps two dense item x item matrices (Pearson and vector-cosine): 2 * 180² * 8 bytes
    monkeypatch.setattr("receval.recommenders.knn._DENSE_AUTO_BYTES", 2 * train.n_items**2 * 8 - 1)
    assert ItemKNN().fit(train).mode_ == "sparse"
    assert ItemKNN(similarity="cosine").fit(train).mode_ == "dense"  # one matrix fits
    monkeypatch.setattr("receval.validate.available_memory", lambda: 100_000)
    with pytest.raises(ConfigError, match=r"dense 180 x 180 similarity matrix of items needs .*mode=\"sparse\""):
        ItemKNN(similarity="cosine", mode="dense").fit(train)
    assert ItemKNN(similarity="cosine", mode="sparse").fit(train).mode_ == "sparse"
    with pytest.raises(ConfigError, match="mode='sparce'"):
        ItemKNN(mode="sparce").fit(train)
