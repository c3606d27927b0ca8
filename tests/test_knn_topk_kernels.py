"""The item-kNN top-N path of issue 39 against the formulations it replaced, bit for bit.

* ``knn._similarity_topk_dot`` (the whole-vector similarities with ``min_support`` 1 and no ``shrinkage``:
  a dot product per pair, no count) against the general kernel ``knn._similarity_topk`` (forced by
  ``knn._DOT = False``) and against a dense reference written here: every pair's sums added term by term in
  the order of y in Python floats, the kernel's formula, then each row's ``k`` best by (similarity, lower index);
* ``knn._list_orders`` by counting sorts (from ``COMPILED_FROM`` ratings) against the argsorts;
* the rating weights ``score`` reads, taken from the ranking lists, against the CSR built from the y-major lists;
* ``recommend``'s sparse-product kernel (its operands converted once, int32 exclusion lists) against ranking the
  dense ``score`` rows of every user.

Ratings come from a few values (ties everywhere; centred values whose sums return to exactly 0).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval import Interactions
from receval.errors import DataError
from receval.recommenders import knn, recommend, topn
from receval.recommenders.knn import ItemKNN, UserKNN
from test_knn_small_path import _Dense, _same_csr

# the similarities whose top-k neighbourhoods the dot-product kernel makes (with min_support 1, no shrinkage)
WHOLE_VECTOR = ("vector-cosine", "vector-pearson", "vector-adjusted-cosine", "asymmetric-cosine", "jaccard",
                "tversky")  # fmt: skip


@pytest.fixture(autouse=True)
def _compiled(monkeypatch):
    """The numba kernels, not the numpy formulation of small problems."""
    monkeypatch.setattr(knn, "_NUMPY", False)
    monkeypatch.setattr(topn, "_NUMPY", False)


# the autouse fixture sets the same switches for every example
SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]}


@contextlib.contextmanager
def _set(module: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


@st.composite
def ratings(draw, max_users: int = 20, max_items: int = 16) -> Interactions:
    """Up to 20 users x 16 items, any density, ratings from a few values, in a random row order."""
    n_users, n_items = draw(st.integers(1, max_users)), draw(st.integers(1, max_items))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((n_users, n_items)) < draw(st.sampled_from([0.1, 0.3, 0.7, 1.0]))
    mask[0, 0] = True
    u, i = np.nonzero(mask)
    values = draw(st.sampled_from([(1.0,), (1.0, 3.0), (1.0, 2.0, 5.0), (0.5, 2.5, 4.0)]))
    r = rng.choice(values, len(u))
    order = rng.permutation(len(u))
    return Interactions.from_arrays(u[order], i[order], r[order])


@st.composite
def whole_vector_params(draw) -> dict:
    similarity = draw(st.sampled_from(WHOLE_VECTOR))
    params = {"k": draw(st.integers(1, 20)), "similarity": similarity, "mode": "sparse",
              "shrink": draw(st.sampled_from([0.0, 0.5, 3.0])),
              "feature_weighting": draw(st.sampled_from(["none", "none", "BM25"]))}  # fmt: skip
    if similarity in ("vector-cosine", "vector-pearson", "vector-adjusted-cosine", "asymmetric-cosine"):
        params["normalize"] = draw(st.booleans())
    if similarity == "asymmetric-cosine":
        params["asymmetric_alpha"] = draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]))
    if similarity == "tversky":
        params["tversky_alpha"] = draw(st.sampled_from([0.0, 0.4, 1.0]))
        params["tversky_beta"] = draw(st.sampled_from([0.0, 0.7, 1.0]))
    return params


def _reference_neighbours(model, train: Interactions) -> list[list[tuple[float, int]]]:
    """Each entity's k best (similarity, entity) from the kernel lists, summed in Python in the order of y."""
    x_ptr, x_idx, x_val, _, _, _, code, row_norms, col_norms = model._rank_lists
    n_x = len(x_ptr) - 1
    rows = [dict(zip(x_idx[x_ptr[i] : x_ptr[i + 1]].tolist(), x_val[x_ptr[i] : x_ptr[i + 1]].tolist(), strict=True))
            for i in range(n_x)]  # fmt: skip
    shrink, alpha, beta = float(model.shrink), float(model.tversky_alpha), float(model.tversky_beta)
    best = []
    for i in range(n_x):
        found = []
        for j in range(n_x):
            common = sorted(set(rows[i]) & set(rows[j]))
            if i == j or not common:
                continue
            dot = 0.0
            for y in common:  # the kernel's order: x-lists sorted by y
                dot += rows[i][y] * rows[j][y]
            if code == 2:
                den = row_norms[i] * col_norms[j] + shrink
            elif code == 3:
                den = row_norms[i] + col_norms[j] - dot + shrink
            elif code == 4:
                den = dot + alpha * (col_norms[j] - dot) + beta * (row_norms[i] - dot) + shrink
            else:
                den = 1.0
            s = dot / den if den != 0 else 0.0
            if s > 0:
                found.append((s, j))
        found.sort(key=lambda pair: (-pair[0], pair[1]))
        best.append(found[: min(int(model.k), n_x - 1)])
    return best


@settings(max_examples=150, **SETTINGS)
@given(ratings(), whole_vector_params(), st.sampled_from([ItemKNN, UserKNN]))
def test_dot_kernel_gives_the_general_kernel_and_the_dense_reference(train, params, cls):
    fast = cls(**params).fit(train)
    reference = _reference_neighbours(fast, train)
    calls = []
    original = knn._similarity_topk_dot
    with _set(knn, "_similarity_topk_dot", lambda *a: (calls.append(1), original(*a))[1]):
        dot = fast.neighbours_
    with _set(knn, "_DOT", False):
        general = cls(**params).fit(train).neighbours_
    assert len(calls) == (dot.shape[0] > 1)  # the dot kernel ran (one entity: no neighbour to select)
    _same_csr(dot, general)
    for i, row in enumerate(reference):
        got = list(zip(dot.data[dot.indptr[i] : dot.indptr[i + 1]].tolist(),
                       dot.indices[dot.indptr[i] : dot.indptr[i + 1]].tolist(), strict=True))  # fmt: skip
        assert sorted(got, key=lambda pair: pair[1]) == sorted(row, key=lambda pair: pair[1])
        assert all(math.copysign(1, s) > 0 for s, _ in got)


def test_a_sum_returning_to_zero_is_one_neighbour():
    """Items 0 to 2 reach 10 terms, fewer than the 15 items (the kernel records first visits rather than
    scanning): item 1's dot product with item 0 passes through 0 (1, 0, 1, 2) and is recorded twice by either
    row, yet it is one neighbour of similarity 2; items 0 and 2 end at 0 (no neighbour). ``normalize=False``:
    the similarity is the plain dot product. Items 3 to 14 are rated once each, by users of their own."""
    users = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, *range(4, 16)]
    items = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, *range(3, 15)]
    values = [1, 1, 1, 1, 1, -1, 1, 1, 1, -1, *[1] * 12]
    train = Interactions.from_arrays(users, items, values)
    model = ItemKNN(k=5, similarity="vector-cosine", normalize=False, mode="sparse").fit(train)
    neighbours = model.neighbours_
    got = {i: dict(zip(neighbours[i].indices.tolist(), neighbours[i].data.tolist(), strict=True)) for i in range(3)}
    assert got == {0: {1: 2.0}, 1: {0: 2.0, 2: 2.0}, 2: {1: 2.0}}
    assert neighbours[3:].nnz == 0
    with _set(knn, "_DOT", False):
        _same_csr(neighbours, ItemKNN(k=5, normalize=False, mode="sparse").fit(train).neighbours_)


@settings(max_examples=100, **SETTINGS)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1), st.integers(0, 3))
def test_counting_orders_are_the_argsorts(n_x, n_y, seed, repeats):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, n_x * n_y + 1))
    keys = rng.choice(n_x * n_y, n, replace=False)
    x, y = (keys // n_y).astype(np.int32), (keys % n_y).astype(np.int32)
    if repeats:
        again = rng.integers(0, n, repeats)
        x, y = np.append(x, x[again]), np.append(y, y[again])
    shuffle = rng.permutation(len(x))
    x, y = x[shuffle], y[shuffle]
    results = []
    for compiled_from in (1 << 40, 0):  # argsorts, then counting sorts
        with _set(knn, "COMPILED_FROM", compiled_from):
            try:
                results.append(knn._list_orders(x, y, n_x, n_y))
            except DataError as error:
                results.append(str(error))
    if repeats:
        assert results[0] == results[1] and results[0].startswith(f"{repeats} repeated")
        return
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
    x_order, yx_order = results[0][0], results[0][3]
    assert np.all(np.diff(x.astype(np.int64)[x_order] * n_y + y[x_order]) > 0)
    assert np.all(np.diff(y.astype(np.int64)[yx_order] * n_x + x[yx_order]) > 0)


@settings(max_examples=100, **SETTINGS)
@given(ratings(), st.sampled_from([ItemKNN, UserKNN]), st.sampled_from(["auto", *WHOLE_VECTOR, "pearson"]),
       st.booleans(), st.sampled_from(["none", "TF-IDF"]))  # fmt: skip
def test_score_weights_from_the_ranking_lists_are_the_y_major_ones(train, cls, similarity, centered, weighting):
    params = {"k": 5, "similarity": similarity, "centered": centered, "feature_weighting": weighting}
    shared = cls(**params).fit(train)
    built = cls(**params).fit(train)
    built._score_lists = None  # the construction from the y-major lists
    a, b = shared.score_operands()[int(cls is UserKNN)], built.score_operands()[int(cls is UserKNN)]
    a.sort_indices()  # checks the flag set from _list_orders: a no-op when the indices are sorted
    _same_csr(a, b)
    assert a.has_canonical_format


@settings(max_examples=100, **SETTINGS)
@given(ratings(), st.sampled_from([ItemKNN, UserKNN]), st.integers(1, 12), st.integers(0, 3), st.data())
def test_product_lists_rank_as_the_dense_scores(train, cls, k, seed, data):
    model = cls(k=k, similarity=data.draw(st.sampled_from(["auto", "vector-cosine", "jaccard"]))).fit(train)
    n = data.draw(st.integers(1, train.n_items), label="list length")
    exclusion = data.draw(st.sampled_from(["none", "train", "random"]), label="exclude")
    exclude = {"none": None, "train": train}.get(exclusion)
    if exclusion == "random":
        rng = np.random.default_rng(seed)
        exclude = sp.csr_matrix(rng.random((train.n_users, train.n_items)) < 0.4)
    users = np.random.default_rng(seed).permutation(train.n_users)
    items, scores = recommend(
        model, users, n, exclude=exclude, seed=seed, batch_size=data.draw(st.sampled_from([None, 1, 3]))
    )
    dense = _Dense(model.score(np.arange(train.n_users)))
    dense_items, dense_scores = recommend(dense, users, n, exclude=exclude, seed=seed)
    np.testing.assert_array_equal(items, dense_items)
    np.testing.assert_array_equal(scores.view(np.int64), dense_scores.view(np.int64))


@settings(max_examples=50, **SETTINGS)
@given(st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_square_sums_are_bincounts_bits(n_x, seed):
    """Values of any magnitude (sums that round): the kernel's sums in bincount's order."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    x = rng.integers(0, n_x, n).astype(np.int32)
    values = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n)
    got = knn._square_sums(x, values, n_x)
    np.testing.assert_array_equal(
        got.view(np.int64), np.bincount(x, weights=values * values, minlength=n_x).view(np.int64)
    )


def test_the_parallel_dot_kernel_runs_one_thread_at_a_time():
    """numba's threading layers abort a process whose threads launch parallel kernels at once: the new parallel
    kernel is wrapped as the others (``tests/test_recommenders_topn.py`` runs them from threads)."""
    assert hasattr(knn._similarity_topk_dot, "__wrapped__")
    data = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 2, 1], [5, 3, 4, 2, 4])
    assert ItemKNN(k=2).fit(data).neighbours_.nnz == 4  # items 0-1 and 0-2 share a user; 1-2 none
