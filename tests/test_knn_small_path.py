"""The numpy path of small kNN problems against the numba kernels: the same neighbourhoods, scores and lists,
bit for bit (``np.array_equal``), each path forced by the private switches ``knn._NUMPY`` and ``topn._NUMPY``;
and a small ``recommend`` run never imports numba."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval import Interactions, _jit
from receval.recommenders import knn, recommend, topn
from receval.recommenders.knn import ItemKNN, UserKNN

# the whole-vector similarities the numpy path computes, and co-rated ones, which keep the kernel either way
SIMILARITIES = ("vector-cosine", "vector-pearson", "vector-adjusted-cosine", "asymmetric-cosine", "jaccard",
                "tversky", "auto", "pearson", "cosine")  # fmt: skip


@contextlib.contextmanager
def _path(numpy: bool) -> Iterator[list[int]]:
    """Force the numpy path (every size is small) or the numba one (none is); yields a one-item list counting
    the calls of the numpy selection, so that a test can tell which path ran."""
    calls = [0]
    original = topn._topk_numpy

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    saved = knn._NUMPY, topn._NUMPY
    knn._NUMPY = topn._NUMPY = numpy
    knn._topk_numpy = topn._topk_numpy = counted
    try:
        yield calls
    finally:
        knn._NUMPY, topn._NUMPY = saved
        knn._topk_numpy = topn._topk_numpy = original


@st.composite
def ratings(draw) -> Interactions:
    """Up to 24 users x 18 items, ratings from a few values (ties, and centred values summing to exactly 0),
    with users and items left without ratings in the id space (empty rows)."""
    n_users, n_items = draw(st.integers(1, 24)), draw(st.integers(1, 18))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    mask = rng.random((n_users, n_items)) < draw(st.sampled_from([0.15, 0.4, 0.8]))
    mask[0, 0] = True  # at least one rating
    u, i = np.nonzero(mask)
    values = draw(st.sampled_from([(1.0,), (1.0, 2.0), (1.0, 3.0, 5.0), (0.5, 1.0, 2.5, 4.0)]))
    r = rng.choice(values, len(u))
    order = rng.permutation(len(u))
    data = Interactions.from_arrays(u[order], i[order], r[order])
    emptied_user, emptied_item = draw(st.booleans()), draw(st.booleans())
    keep = np.ones(data.n_ratings, dtype=bool)
    if emptied_user and data.n_users > 1:
        keep &= data.users != data.n_users - 1
    if emptied_item and data.n_items > 1:
        keep &= data.items != data.n_items - 1
    return data.subset(keep) if keep.any() else data


@st.composite
def models(draw):
    similarity = draw(st.sampled_from(SIMILARITIES))
    params = {
        "k": draw(st.integers(1, 30)),  # often more than the neighbours available
        "similarity": similarity,
        "shrink": draw(st.sampled_from([0.0, 0.5, 3.0])),
        "shrinkage": draw(st.sampled_from([0.0, 2.0])),
        "min_support": draw(st.integers(1, 3)),
        "centered": draw(st.booleans()),
        "feature_weighting": draw(st.sampled_from(["none", "BM25", "TF-IDF"])),
        "mode": draw(st.sampled_from(["auto", "sparse"])),
    }
    if similarity in ("auto", "vector-cosine", "vector-pearson", "vector-adjusted-cosine", "asymmetric-cosine"):
        params["normalize"] = draw(st.booleans())
    if similarity == "asymmetric-cosine":
        params["asymmetric_alpha"] = draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]))
    if similarity == "tversky":
        params["tversky_alpha"] = draw(st.sampled_from([0.0, 0.4, 1.0]))
        params["tversky_beta"] = draw(st.sampled_from([0.0, 0.7, 1.0]))
    return draw(st.sampled_from([ItemKNN, UserKNN])), params


def _same_csr(a: sp.csr_matrix, b: sp.csr_matrix) -> None:
    assert a.shape == b.shape
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), strict=True, err_msg=name)


def _run(cls, params: dict, train: Interactions, k: int, exclude, seed: int, numpy: bool):
    with _path(numpy) as calls:
        model = cls(**params).fit(train)
        neighbours = model.neighbours_
        items, scores = recommend(model, np.arange(train.n_users), k, exclude=exclude, seed=seed)
    return neighbours, items, scores, calls[0]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ratings(), models(), st.data())
def test_numpy_path_gives_the_kernels_bits(train, model, data):
    cls, params = model
    k = data.draw(st.integers(1, train.n_items), label="list length")
    seed = data.draw(st.integers(0, 3), label="seed")
    exclusion = data.draw(st.sampled_from(["none", "train", "random"]), label="exclude")
    exclude = {"none": None, "train": train}.get(exclusion)
    if exclusion == "random":  # some users lose every item: padded lists
        rng = np.random.default_rng(seed)
        exclude = sp.csr_matrix(rng.random((train.n_users, train.n_items)) < rng.choice([0.3, 1.0]))
    fast = _run(cls, params, train, k, exclude, seed, numpy=True)
    slow = _run(cls, params, train, k, exclude, seed, numpy=False)
    _same_csr(fast[0], slow[0])
    np.testing.assert_array_equal(fast[1], slow[1], strict=True)
    np.testing.assert_array_equal(fast[2], slow[2], strict=True)  # NaN padding at the same places
    assert slow[3] == 0 and fast[3] >= 1  # the numba run never reached numpy's selection; the numpy run did
    assert ((fast[1] >= 0) == ~np.isnan(fast[2])).all()


class _Dense:
    """A scorer of fixed dense rows (no score_operands): recommend's dense path."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = scores
        self.n_users_, self.n_items_ = scores.shape

    def score(self, users: np.ndarray) -> np.ndarray:
        return self.scores[users]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_numpy_selection_of_dense_rows_gives_the_kernels_lists(data):
    """Ties (few distinct values), NaN, ±inf, -0.0 beside 0.0, excluded items, rows with fewer than k
    recommendable items, several seeds and batch sizes."""
    n_users, n_items = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 15))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    palette = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, 2.5, -3.0])
    scores = rng.choice(palette[: data.draw(st.integers(1, len(palette)))], (n_users, n_items))
    distinct = rng.random(scores.shape) < 0.3
    scores[distinct] = rng.normal(size=int(distinct.sum()))
    exclude = sp.csr_matrix(rng.random((n_users, n_items)) < data.draw(st.sampled_from([0.0, 0.3, 0.9])))
    k = data.draw(st.integers(1, n_items))
    seed = data.draw(st.integers(0, 5))
    batch = data.draw(st.sampled_from([None, 1, 3]))
    users = rng.permutation(n_users)
    got = []
    for numpy in (True, False):
        with _path(numpy) as calls:
            got.append((*recommend(_Dense(scores), users, k, exclude=exclude, seed=seed, batch_size=batch), calls[0]))
    (items, values, fast_calls), (kernel_items, kernel_values, slow_calls) = got
    np.testing.assert_array_equal(items, kernel_items, strict=True)
    # the same bits, -0.0 included (assert_array_equal calls -0.0 and 0.0 equal)
    np.testing.assert_array_equal(values.view(np.int64), kernel_values.view(np.int64), strict=True)
    assert fast_calls >= 1 and slow_calls == 0


def test_hand_computed_neighbourhoods_and_lists():
    """Ratings whose norms are exact (3-4-5): vector cosines 24/25, 9/25, 12/25; k=1 neighbourhoods; each rated
    item votes for its neighbour with its rating; training items excluded."""
    train = Interactions.from_arrays([0, 0, 0, 1, 1, 2], [0, 1, 2, 0, 1, 2], [3, 4, 3, 4, 3, 4])
    with _path(numpy=True) as calls:
        model = ItemKNN(k=1).fit(train)
        neighbours = model.neighbours_.toarray()
        items, scores = recommend(model, [0, 1, 2], 2, exclude=train)
    # items 0 = (3, 4, 0), 1 = (4, 3, 0), 2 = (3, 0, 4) over the users: all norms 5
    assert neighbours.tolist() == [[0, 24 / 25, 0], [24 / 25, 0, 0], [0, 12 / 25, 0]]
    # user 0 rated everything; user 1 only has item 2 left, which no neighbourhood holds (score 0); user 2's
    # item 2 votes for item 1 (12/25 x 4), then item 0 scores 0
    assert items.tolist() == [[-1, -1], [2, -1], [1, 0]]
    np.testing.assert_array_equal(scores, [[np.nan, np.nan], [0.0, np.nan], [12 / 25 * 4, 0.0]])
    assert calls[0] >= 2


def test_small_recommend_never_imports_numba(imports_numba):
    assert not imports_numba(
        "from receval.recommenders import recommend\n"
        "from receval.recommenders.knn import ItemKNN, UserKNN\n"
        "for cls in (ItemKNN, UserKNN):\n"
        "    recommend(cls(k=5, shrink=1.0).fit(train), np.arange(train.n_users), 5, exclude=train)"
    )


@pytest.mark.parametrize("similarity", ["pearson", "cosine", "adjusted-cosine"])
def test_co_rated_similarities_keep_the_kernel(similarity):
    """The co-rated kinds read per-pair sums the numpy path does not make: their neighbourhoods stay numba's."""
    train = Interactions.from_arrays([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 1, 2], [5, 3, 4, 2, 1, 4])
    with _path(numpy=True) as calls:
        neighbours = ItemKNN(k=2, similarity=similarity).fit(train).neighbours_
    assert calls[0] == 0 and neighbours.shape == (3, 3)


@st.composite
def integer_ratings(draw) -> Interactions:
    """Up to 24 users x 18 items with ratings from a palette: integers (the numpy path: small ones in float32,
    large ones in float64, negative ones without the packed product), or halves (the kernel); users and items
    left without ratings in the id space."""
    n_users, n_items = draw(st.integers(1, 24)), draw(st.integers(1, 18))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((n_users, n_items)) < draw(st.sampled_from([0.2, 0.5, 0.9]))
    mask[0, 0] = True
    palette = draw(st.sampled_from([(1, 2, 3, 4, 5), (0, 1), (-2, 0, 3), (4,), (1000, 3000), (0.5, 1.0, 2.5)]))
    u, i = np.nonzero(mask)
    order = rng.permutation(len(u))
    r = rng.choice(np.array(palette, dtype=np.float64), len(u))
    data = Interactions.from_arrays(u[order], i[order], r[order])
    keep = np.ones(data.n_ratings, dtype=bool)
    if draw(st.booleans()) and data.n_users > 1:
        keep &= data.users != data.n_users - 1
    if draw(st.booleans()) and data.n_items > 1:
        keep &= data.items != data.n_items - 1
    return data.subset(keep) if keep.any() else data


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(integer_ratings(), st.data())
def test_numpy_similarities_and_predictions_give_the_kernels_bits(train, data):
    """``similarity_`` and ``predict`` of the co-rated similarities: the numpy path (matrix products of exact
    integer sums, a stable sort per pair) against the kernels, bit for bit (-0.0 included)."""
    cls = data.draw(st.sampled_from([ItemKNN, UserKNN]), label="model")
    params = {
        "k": data.draw(st.integers(1, 30)),
        "min_k": data.draw(st.integers(0, 3)),
        "similarity": data.draw(st.sampled_from(["pearson", "cosine", "auto", "adjusted-cosine"])),
        "min_support": data.draw(st.integers(1, 3)),
        "shrinkage": data.draw(st.sampled_from([0.0, 2.0])),
        "shrink": data.draw(st.sampled_from([0.0, 0.5])),
        "means": data.draw(st.booleans()),
        "clip": data.draw(st.booleans()),
        "mode": "dense",
    }
    rng = np.random.default_rng(data.draw(st.integers(0, 3)))
    users = rng.integers(0, train.n_users, 40)
    items = rng.integers(0, train.n_items, 40)
    # blocks off the diagonal, batches of one pair or several lists, and threads writing blocks and batches at once
    block = data.draw(st.sampled_from([knn._FORMULA_BLOCK, 1, 4]), label="formula block")
    cells = data.draw(st.sampled_from([knn._PREDICT_CELLS, 1, 40]), label="batch cells")
    workers = data.draw(st.sampled_from([1, 2, 3]), label="threads")
    got = []
    saved = knn._FORMULA_BLOCK, knn._PREDICT_CELLS, knn.threads, _jit.threads
    knn._FORMULA_BLOCK, knn._PREDICT_CELLS = block, cells
    knn.threads = _jit.threads = lambda: workers
    try:
        for numpy in (True, False):
            with _path(numpy):
                model = cls(**params).fit(train)
                got.append((model.similarity_, model.predict(users, items)))
    finally:
        knn._FORMULA_BLOCK, knn._PREDICT_CELLS, knn.threads, _jit.threads = saved
    (sim, predictions), (kernel_sim, kernel_predictions) = got
    np.testing.assert_array_equal(sim.view(np.int64), kernel_sim.view(np.int64), strict=True)
    np.testing.assert_array_equal(predictions.view(np.int64), kernel_predictions.view(np.int64), strict=True)


@pytest.mark.parametrize(
    ("values", "numpy"),
    [([1, 2, 3, 4, 5], True), ([-2, 0, 3], True), ([1000, 3000], True), ([0.5, 2.5], False), ([1, 2**27], False)],
)
def test_co_rated_numpy_takes_exact_integer_sums_only(values, numpy):
    """Integers whose sums stay exact (float32, negatives without the packed product, float64 for large ones)
    take the matrix products, with the kernel's bits; halves, or squares past 2^53, keep the kernel (None)."""
    rng = np.random.default_rng(0)
    u, i = np.nonzero(rng.random((30, 12)) < 0.6)
    train = Interactions.from_arrays(u, i, rng.choice(np.array(values, dtype=np.float64), len(u)))
    with _path(numpy=False):
        model = ItemKNN(similarity="pearson", mode="dense").fit(train)
        lists = model._predict_lists
        kernel = model.similarity_
    sim = knn._co_rated_numpy(lists, train.n_items, 1, 0.0, 0.0)
    assert (sim is not None) == numpy
    if numpy:
        np.testing.assert_array_equal(sim.view(np.int64), kernel.view(np.int64), strict=True)


def test_hand_computed_pearson_and_predictions():
    """Items 0 and 1 rated (5, 3, 4) and (4, 2, 3) by users 0-2: co-rated Pearson 1 (a shift); item 2, rated by
    user 0 alone, shares one entry with each (no spread: similarity 0). User 3 rated item 0 only (2): KNNBasic
    predicts item 1 from that neighbour, 2; KNNWithMeans item 1's mean 3 plus (2 - item 0's mean 3.5), 1.5.
    User 1's item 2 has no positive neighbour: the global mean."""
    train = Interactions.from_arrays([0, 1, 2, 0, 1, 2, 0, 3], [0, 0, 0, 1, 1, 1, 2, 0], [5, 3, 4, 4, 2, 3, 1, 2])
    with _path(numpy=True):
        basic = ItemKNN(k=5, similarity="pearson", means=False).fit(train)
        with_means = ItemKNN(k=5, similarity="pearson").fit(train)
        assert basic.similarity_.tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        assert basic.predict([3, 1], [1, 2]).tolist() == [2.0, train.ratings.mean()]
        assert with_means.predict([3], [1]).tolist() == [1.5]


def test_a_sum_of_negative_zeros_is_positive_zero_as_in_the_kernel():
    """Co-rated cosine of items (-3, 0) and (0, -2): each product is -0.0, and the kernel's sum, started from +0.0,
    is +0.0, so the similarity is +0.0 (0 / 6), never -0.0 (a BLAS sum may start from its first term)."""
    train = Interactions.from_arrays([0, 1, 0, 1], [0, 0, 1, 1], [-3.0, 0.0, 0.0, -2.0])
    for numpy in (True, False):
        with _path(numpy):
            sim = ItemKNN(similarity="cosine", mode="dense").fit(train).similarity_
        assert sim[0, 1] == 0.0 and not np.signbit(sim[0, 1]) and not np.signbit(sim[1, 0])
