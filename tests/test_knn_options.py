"""kNN options as Dacrema et al. (RecSys 2019) tune them, each against a dense numpy computation written
from their formulas (``Compute_Similarity_Python``, ``okapi_BM_25``, ``TF_IDF``); score_items; threads."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from receval import Interactions
from receval.errors import ConfigError, DataError
from receval.recommenders import recommend
from receval.recommenders.base import score_items
from receval.recommenders.knn import ItemKNN, UserKNN

K1, B = 1.2, 0.75


def _data(seed: int = 0, n_users: int = 45, n_items: int = 32) -> Interactions:
    """Ratings 1..5 on a random ~25 % of the cells, popularity-skewed, rows shuffled; a few users and items
    rate a single entity or none, so that the empty and single-entry cases are met."""
    rng = np.random.default_rng(seed)
    pop = np.linspace(0.6, 0.05, n_items)
    mask = rng.random((n_users, n_items)) < pop[None, :]
    mask[-1] = False  # a user without ratings (still in the id space: the last id)
    mask[-1, 0] = True
    u, i = np.nonzero(mask)
    order = rng.permutation(len(u))
    r = rng.integers(1, 6, len(u)).astype(float)
    return Interactions.from_arrays(u[order], i[order], r[order])


def _entities(train: Interactions, user_based: bool) -> np.ndarray:
    """The y x x matrix of ratings (columns: the compared entities), 0 = unrated, as Dacrema et al. pass the
    URM for item-based and its transpose for user-based."""
    dense = train.to_csr().toarray().astype(np.float64)
    return dense.T if user_based else dense


def _weighted(m: np.ndarray, weighting: str) -> np.ndarray:
    """Their ``okapi_BM_25(M.T).T`` / ``TF_IDF(M.T).T``: documents are the columns, terms the rows."""
    if weighting == "none":
        return m
    rated = m != 0
    docs = m.T
    idf = np.log(docs.shape[0] / (1.0 + rated.sum(1)))  # per term (row of m)
    if weighting == "TF-IDF":
        return np.where(rated, np.sqrt(m) * idf[:, None], 0.0)
    length = docs.sum(1)
    norm = (1 - B) + B * length / length.mean()
    return np.where(rated, m * (K1 + 1) / (K1 * norm[None, :] + m) * idf[:, None], 0.0)


def _reference(m: np.ndarray, similarity: str, shrink: float, normalize: bool, alpha: float, beta: float,
               asym: float) -> np.ndarray:  # fmt: skip
    """S[a, b]: the weight of voter column a for candidate column b (their ``W[a, b]``), diagonal 0."""
    rated = m != 0
    if similarity == "vector-adjusted-cosine":
        row_mean = m.sum(1) / np.maximum(rated.sum(1), 1)
        m = np.where(rated, m - row_mean[:, None], 0.0)
    elif similarity == "vector-pearson":
        col_mean = m.sum(0) / np.maximum(rated.sum(0), 1)
        m = np.where(rated, m - col_mean[None, :], 0.0)
    elif similarity in ("jaccard", "tversky"):
        m = rated.astype(float)
    dot = m.T @ m
    squares = (m * m).sum(0)
    if similarity in ("jaccard", "tversky"):
        n_a, n_b = squares[:, None], squares[None, :]
        if similarity == "jaccard":
            den = n_a + n_b - dot + shrink
        else:
            den = dot + alpha * (n_b - dot) + beta * (n_a - dot) + shrink
    elif not normalize:
        den = np.ones_like(dot)
    elif similarity == "asymmetric-cosine":
        den = squares[:, None] ** (1 - asym) * squares[None, :] ** asym + shrink
    else:
        den = np.sqrt(squares)[:, None] * np.sqrt(squares)[None, :] + shrink
    with np.errstate(divide="ignore", invalid="ignore"):
        sim = np.where(den != 0, dot / den, 0.0)
    np.fill_diagonal(sim, 0.0)
    return sim


def _top_k(sim: np.ndarray, k: int) -> np.ndarray:
    """Each row's k largest positive entries (ties: the lower column), the others 0."""
    out = np.zeros_like(sim)
    for a in range(len(sim)):
        order = np.argsort(-sim[a], kind="stable")[:k]
        order = order[sim[a, order] > 0]
        out[a, order] = sim[a, order]
    return out


CASES = [
    {"similarity": "vector-cosine", "shrink": 10.0},
    {"similarity": "vector-cosine", "normalize": False},
    {"similarity": "vector-pearson", "shrink": 3.0, "feature_weighting": "TF-IDF"},
    {"similarity": "vector-adjusted-cosine", "shrink": 5.0},
    {"similarity": "vector-adjusted-cosine", "normalize": False, "feature_weighting": "BM25"},
    {"similarity": "asymmetric-cosine", "asymmetric_alpha": 0.2, "shrink": 2.0},
    {"similarity": "asymmetric-cosine", "asymmetric_alpha": 0.9, "feature_weighting": "BM25"},
    {"similarity": "jaccard", "shrink": 1.0},
    {"similarity": "tversky", "tversky_alpha": 0.3, "tversky_beta": 1.7, "shrink": 0.5},
    {"similarity": "vector-cosine", "feature_weighting": "BM25", "shrink": 4.0},
]


@pytest.mark.parametrize("options", CASES, ids=lambda o: "-".join(f"{v}" for v in o.values()))
@pytest.mark.parametrize("cls", [ItemKNN, UserKNN])
def test_similarity_neighbourhoods_and_scores_equal_the_dense_formulas(cls, options):
    train = _data()
    user_based = cls is UserKNN
    m = _weighted(_entities(train, user_based), options.get("feature_weighting", "none"))
    sim = _reference(
        m,
        options["similarity"],
        options.get("shrink", 0.0),
        options.get("normalize", True),
        options.get("tversky_alpha", 1.0),
        options.get("tversky_beta", 1.0),
        options.get("asymmetric_alpha", 0.5),
    )
    dense = cls(k=6, mode="dense", **options).fit(train)
    expected_sim = sim + np.eye(len(sim))  # receval's similarity_ has 1 on the diagonal
    np.testing.assert_allclose(dense.similarity_, expected_sim, rtol=1e-12, atol=1e-12)
    neighbours = _top_k(sim, 6)
    # the same neighbourhoods (ties at equal values broken alike); values to rounding
    got = dense.neighbours_.toarray()
    np.testing.assert_array_equal(got != 0, neighbours != 0)
    np.testing.assert_allclose(got, neighbours, rtol=1e-12, atol=1e-12)
    # score: the user's (weighted) ratings summed through the voters' neighbourhoods
    weights = m.T if user_based else m  # users x items
    expected = neighbours @ weights if user_based else weights @ neighbours
    users = np.arange(train.n_users)
    np.testing.assert_allclose(dense.score(users), expected, rtol=1e-10, atol=1e-10)
    sparse = cls(k=6, mode="sparse", **options).fit(train)
    np.testing.assert_array_equal(sparse.score(users), dense.score(users))


def test_shrink_and_shrinkage_are_two_terms():
    """``shrink`` in the denominator (Dacrema et al.), ``shrinkage`` n / (n + λ) on the result: both apply."""
    train = _data(seed=2)
    m = _entities(train, False)
    sim = _reference(m, "vector-cosine", 7.0, True, 1.0, 1.0, 0.5)
    common = (m != 0).astype(float)
    n = common.T @ common
    with np.errstate(invalid="ignore"):
        expected = np.where(n > 0, sim * n / (n + 2.0), 0.0)
    got = ItemKNN(similarity="vector-cosine", shrink=7.0, shrinkage=2.0, mode="dense").fit(train).similarity_
    np.testing.assert_allclose(got, expected + np.eye(m.shape[1]), atol=1e-12)


def test_defaults_are_unchanged_by_the_new_options():
    train = _data(seed=4)
    users = np.arange(train.n_users)
    for cls in (ItemKNN, UserKNN):
        plain = cls(k=5).fit(train)
        spelled = cls(k=5, shrink=0.0, normalize=True, feature_weighting="none").fit(train)
        np.testing.assert_array_equal(plain.score(users), spelled.score(users))
        np.testing.assert_array_equal(
            plain.predict(train.users, train.items), spelled.predict(train.users, train.items)
        )


@pytest.mark.parametrize("cls", [ItemKNN, UserKNN])
@pytest.mark.parametrize("similarity", ["auto", "asymmetric-cosine", "jaccard"])
def test_score_items_equals_the_columns_of_score_bit_for_bit(cls, similarity):
    train = _data(seed=5)
    model = cls(k=4, similarity=similarity).fit(train)
    rng = np.random.default_rng(0)
    users = rng.integers(0, train.n_users, 30)
    items = rng.integers(0, train.n_items, (30, 7))
    full = model.score(users)
    expected = np.take_along_axis(full, items, axis=1)
    np.testing.assert_array_equal(model.score_items(users, items), expected)
    np.testing.assert_array_equal(score_items(model, users, items), expected)


def test_results_do_not_depend_on_the_number_of_threads():
    train = _data(seed=6, n_users=300, n_items=120)
    users = np.arange(train.n_users)
    before = numba.get_num_threads()
    results = []
    try:
        for threads in (1, numba.config.NUMBA_NUM_THREADS):
            numba.set_num_threads(threads)
            item = ItemKNN(k=9, mode="sparse", similarity="vector-pearson", shrink=2.0).fit(train)
            user = UserKNN(k=9, mode="dense").fit(train)
            lists = recommend(item, users, 10, exclude=train)[0]
            results.append((item.neighbours_.toarray(), item.score(users), user.score(users), user.similarity_, lists))
    finally:
        numba.set_num_threads(before)
    for one, many in zip(*results, strict=True):
        np.testing.assert_array_equal(one, many)


def test_recommend_reads_the_score_rows_without_writing_them():
    """A model may return its own state (here one stored matrix): recommend must leave it as it was."""
    train = _data(seed=7)

    class Stored:
        n_users_, n_items_ = train.n_users, train.n_items

        def __init__(self) -> None:
            self.table = np.random.default_rng(1).random((train.n_users, train.n_items))
            self.table[0, :3] = np.nan

        def score(self, users):
            return self.table if len(users) == train.n_users else self.table[np.asarray(users)]

    model = Stored()
    kept = model.table.copy()
    items, _ = recommend(model, np.arange(train.n_users), 5, exclude=train, batch_size=train.n_users)
    np.testing.assert_array_equal(model.table, kept)
    rated = train.to_csr().toarray() != 0
    assert not rated[np.arange(train.n_users)[:, None], items].any()
    assert not np.isin(items[0], [0, 1, 2]).any()  # NaN scores are never recommended


def test_bad_options_are_one_line_errors():
    train = _data()
    with pytest.raises(ConfigError, match=r"feature_weighting='bm25' is not one of \['none', 'BM25', 'TF-IDF'\]"):
        ItemKNN(feature_weighting="bm25").fit(train)
    with pytest.raises(ConfigError, match=r"normalize=False .* not to similarity='jaccard'"):
        ItemKNN(similarity="jaccard", normalize=False).fit(train)
    with pytest.raises(ConfigError, match=r"asymmetric_alpha must be a number in \[0, 1\], got 1.5"):
        UserKNN(similarity="asymmetric-cosine", asymmetric_alpha=1.5).fit(train)
    with pytest.raises(ConfigError, match="shrink must be a number >= 0, got -1"):
        ItemKNN(shrink=-1).fit(train)
    with pytest.raises(ConfigError, match="tversky_beta must be a number >= 0"):
        ItemKNN(similarity="tversky", tversky_beta="x").fit(train)
    with pytest.raises(ConfigError, match="normalize must be True or False"):
        ItemKNN(normalize="no").fit(train)
    negative = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [-2.0, 3.0, 1.0])
    with pytest.raises(DataError, match="feature_weighting='TF-IDF' weighs non-negative ratings, and the smallest"):
        ItemKNN(feature_weighting="TF-IDF").fit(negative)


class _DenseOnly:
    """The model's dense score rows only: recommend's generic path."""

    def __init__(self, model) -> None:
        self.model, self.n_users_, self.n_items_ = model, model.n_users_, model.n_items_

    def score(self, users):
        return self.model.score(users)


@pytest.mark.parametrize(
    ("cls", "centered", "k", "seed"),
    [(ItemKNN, False, 10, 0), (ItemKNN, True, 25, 3), (UserKNN, False, 31, 1), (UserKNN, True, 5, 2)],
)
def test_sparse_scores_give_the_lists_of_the_dense_rows(cls, centered, k, seed):
    """Few neighbours (k=2): most items score 0, so the lists end in zeros taken in tie order; centred
    weights give negative scores too, which rank below the zeros."""
    train = _data(seed=8)
    model = cls(k=2, centered=centered).fit(train)
    users = np.arange(train.n_users)
    a, b = model.score_operands()
    np.testing.assert_allclose((a @ b).toarray(), model.score(users), rtol=1e-12, atol=1e-12)
    for exclude in (train, None):
        got = recommend(model, users, k, exclude=exclude, seed=seed, batch_size=7)
        expected = recommend(_DenseOnly(model), users, k, exclude=exclude, seed=seed)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    if centered:  # the case is met: negative scores exist
        assert (model.score(users) < 0).any()


def test_any_model_with_score_operands_ranks_as_its_product_and_refuses_unknown_users():
    import scipy.sparse as sp

    from receval.errors import ColdStartError

    rng = np.random.default_rng(3)
    rows, cols = rng.integers(0, 30, 200), rng.integers(0, 12, 200)  # repeated pairs: summed, as scipy does
    a = sp.coo_matrix((rng.normal(size=200), (rows, cols)), shape=(30, 12))
    b = sp.random(12, 40, density=0.2, random_state=4, format="csr")

    class Product:
        n_users_, n_items_ = 30, 40

        def score_operands(self):
            return a, b

        def score(self, users):
            return (a.tocsr()[np.asarray(users)] @ b).toarray()

    model = Product()
    users = np.arange(30)
    exclude = sp.random(30, 40, density=0.1, random_state=5, format="csr")
    got = recommend(model, users, 8, exclude=exclude, seed=4)
    expected = recommend(_DenseOnly(model), users, 8, exclude=exclude, seed=4)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-12)
    with pytest.raises(ColdStartError, match="user index 30 is outside the 30 users Product was trained on"):
        recommend(model, [0, 30], 3)


@pytest.mark.parametrize("alpha", [0.3, 0.7, 1.0, 0.0])
def test_tversky_dense_and_sparse_modes_agree_bit_for_bit_when_alpha_equals_beta(alpha):
    """The dense matrix was the upper triangle mirrored: for α = β = 0.3 its lower triangle differed from the
    rows the sparse mode computes in the last bit (1,121 of 9,900 pairs on these data)."""
    from receval.data.synthetic import generate

    data = generate(300, 100, 9000, seed=3)
    n = data.n_items
    options = {"similarity": "tversky", "tversky_alpha": alpha, "tversky_beta": alpha, "k": n}
    dense = ItemKNN(mode="dense", **options).fit(data).similarity_
    sparse = ItemKNN(mode="sparse", **options).fit(data).neighbours_.toarray()
    kept = sparse != 0
    assert kept.sum() > n * (n - 1) // 2  # most pairs are neighbours: the comparison covers both triangles
    np.testing.assert_array_equal(dense[kept], sparse[kept], strict=True)
    # the row formula itself, written out: dot / (dot + α (c_j − dot) + β (c_i − dot))
    ones = np.zeros((data.n_users, n))
    ones[data.users, data.items] = 1
    dot, count = ones.T @ ones, ones.sum(axis=0)
    den = dot + alpha * (count[None, :] - dot) + alpha * (count[:, None] - dot)
    np.testing.assert_array_equal(dense[kept], (dot / den)[kept], strict=True)
