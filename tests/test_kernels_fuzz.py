"""Fuzz tests of the numba kernels of receval.recommenders that index buffers, over extreme parameters.

The kernels: the random walk of P3α/RP3β (``graph._walk_top_k``), the neighbourhood kernels of the kNN models
(similarities dense and top-k, ``_mirror_upper``, ``_predict``, ``_score_rows``, ``_score_candidates``), the
pair scorers of the item-item models (``linear._dense_pairs``, ``_sparse_pairs``), the top-k kernels
(``topn._topk_kernel``, ``_topk_product_kernel``) and MF's SGD epoch (``mf._sgd_epoch``), each through the
model that calls it, on small random data (empty rows and columns, one user, one item) with parameters at
their extremes: powers that underflow, shrinkages of 1e300, neighbourhoods larger than the catalogue, lists of
every length, scores of NaN and ±inf.

They run twice: in the suite with the kernels as they ship (parallel, unchecked), and in a subprocess
(:func:`test_the_fuzz_tests_pass_with_numba_checking_every_index`) with ``NUMBA_BOUNDSCHECK=1`` and a fresh
``NUMBA_CACHE_DIR``, where numba checks every index the kernels use and an out-of-bounds access is an
IndexError (receval's ``njit`` compiles the kernels serially then: numba checks no index inside a parallel
loop). A positive control there checks that the checking is on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import Interactions
from receval._jit import njit
from receval.errors import DataError
from receval.recommenders import knn, recommend, topn
from receval.recommenders.graph import P3alpha, RP3beta, walk_weights
from receval.recommenders.knn import ItemKNN, UserKNN
from receval.recommenders.linear import EASE
from receval.recommenders.mf import BiasedMF

CHECKED = bool(numba.config.BOUNDSCHECK)
# the checked run compiles every kernel afresh: fewer examples keep it near half a minute of CPU
FUZZ = settings(
    max_examples=10 if CHECKED else 25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(autouse=True)
def _compiled_paths(monkeypatch):
    """The kernels, not the numpy formulations small problems take."""
    monkeypatch.setattr(knn, "_NUMPY", False)
    monkeypatch.setattr(topn, "_NUMPY", False)


@st.composite
def interactions(draw, max_users: int = 12, max_items: int = 12) -> Interactions:
    """1 to 12 users x 1 to 12 items, any density (rows and columns may be empty), ratings 1..5."""
    n_users = draw(st.integers(1, max_users))
    n_items = draw(st.integers(1, max_items))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((n_users, n_items)) < draw(st.sampled_from([0.05, 0.3, 0.7, 1.0]))
    mask[0, 0] = True  # at least one rating
    users, items = np.nonzero(mask)
    # ids from the full grid, so that a user or item without ratings is still in the id space
    data = Interactions.from_arrays(users, items, rng.integers(1, 6, len(users)))
    return data


POWERS = st.sampled_from([1e-308, 1e-3, 0.5, 1.0, 2.0, 200.0, 1e4, 1e308])
PENALTIES = st.sampled_from([0.0, 1e-300, 0.6, 3.0, 300.0, 1e308])


def _check_lists(items: np.ndarray, scores: np.ndarray, n_items: int, k: int) -> None:
    assert items.shape == scores.shape and items.shape[1] == k
    assert ((items >= -1) & (items < n_items)).all()
    for row, values in zip(items, scores, strict=True):
        kept = row[row >= 0]
        assert len(set(kept.tolist())) == len(kept)  # no item twice
        assert not np.isnan(values[: len(kept)]).any() and np.isnan(values[len(kept) :]).all()
        head = values[: len(kept)]
        assert (head[:-1] >= head[1:]).all()  # best first


@FUZZ
@given(
    data=interactions(),
    top_k=st.integers(1, 15),
    alpha=POWERS,
    beta=PENALTIES,
    normalize=st.booleans(),
    columns=st.booleans(),
)
def test_the_walk_keeps_its_bounds(data, top_k, alpha, beta, normalize, columns):
    x = sp.csr_matrix((np.ones(data.n_ratings), (data.users, data.items)), shape=(data.n_users, data.n_items))
    w = walk_weights(x, top_k, alpha, beta, normalize, columns)
    n = data.n_items
    assert w.shape == (n, n)
    assert np.all(np.diff(w.indptr) <= min(top_k, n - 1))
    if columns:
        assert np.all(np.diff(w.tocsc().indptr) <= top_k)
    assert np.isfinite(w.data).all() and (w.data > 0).all() and not w.diagonal().any()
    if normalize:
        assert (np.asarray(w.sum(axis=1)).ravel() <= 1 + 1e-12).all()


@FUZZ
@given(data=interactions(), top_k=st.integers(1, 15), alpha=POWERS, beta=PENALTIES, k=st.integers(1, 12))
def test_walk_models_score_rank_and_score_pairs_within_bounds(data, top_k, alpha, beta, k):
    model = RP3beta(topK=top_k, alpha=alpha, beta=beta, threshold=None).fit(data)
    users = np.arange(data.n_users)
    scores = model.score(users)  # knn._score_rows on the sparse weights
    assert scores.shape == (data.n_users, data.n_items) and np.isfinite(scores).all()
    k = min(k, data.n_items)
    _check_lists(*recommend(model, users, k, exclude=data), data.n_items, k)  # topn._topk_kernel
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, data.n_items, (data.n_users, 3))
    # linear._sparse_pairs: the same sums as the rows, in another order
    np.testing.assert_allclose(model.score_items(users, pairs), np.take_along_axis(scores, pairs, 1), atol=1e-12)
    assert P3alpha(topK=top_k, alpha=alpha, threshold=None).fit(data).weights_.shape == (data.n_items,) * 2


SIMILARITIES = [
    "pearson",
    "cosine",
    "adjusted-cosine",
    "vector-cosine",
    "vector-pearson",
    "asymmetric-cosine",
    "jaccard",
    "tversky",
]


@FUZZ
@given(
    data=interactions(),
    user_based=st.booleans(),
    similarity=st.sampled_from(SIMILARITIES),
    mode=st.sampled_from(["dense", "sparse"]),
    k=st.sampled_from([1, 2, 5, 10**6]),
    min_k=st.sampled_from([0, 1, 3]),
    min_support=st.sampled_from([1, 2, 10**6]),
    shrinkage=st.sampled_from([0.0, 1e-300, 100.0, 1e300]),
    shrink=st.sampled_from([0.0, 1e-300, 1e300]),
    extreme=st.sampled_from([0.0, 1e-300, 1.0, 1e300]),
    list_length=st.integers(1, 12),
)
def test_knn_kernels_keep_their_bounds(
    data, user_based, similarity, mode, k, min_k, min_support, shrinkage, shrink, extreme, list_length
):
    model = (UserKNN if user_based else ItemKNN)(
        k=k,
        similarity=similarity,
        mode=mode,
        min_k=min_k,
        min_support=min_support,
        shrinkage=shrinkage,
        shrink=shrink,
        asymmetric_alpha=min(extreme, 1.0),
        tversky_alpha=extreme,
        tversky_beta=extreme,
    ).fit(data)
    rng = np.random.default_rng(1)
    users = rng.integers(0, data.n_users, 20)
    items = rng.integers(0, data.n_items, 20)
    assert model.predict(users, items).shape == (20,)  # knn._predict
    every_user = np.arange(data.n_users)
    scores = model.score(every_user)
    assert scores.shape == (data.n_users, data.n_items)
    pairs = rng.integers(0, data.n_items, (data.n_users, 4))
    chosen = model.score_items(every_user, pairs)  # knn._score_candidates in sparse mode
    np.testing.assert_allclose(chosen, np.take_along_axis(scores, pairs, 1), rtol=1e-9, atol=1e-12)
    k = min(list_length, data.n_items)
    _check_lists(*recommend(model, every_user, k, exclude=data), data.n_items, k)  # the product kernel when sparse


@FUZZ
@given(data=interactions(), l2=st.sampled_from([1e-3, 1.0, 1e300]))
def test_dense_pair_scores_keep_their_bounds(data, l2):
    model = EASE(l2=l2, threshold=None).fit(data)
    users = np.arange(data.n_users)
    pairs = np.random.default_rng(2).integers(0, data.n_items, (data.n_users, 5))
    chosen = model.score_items(users, pairs)  # linear._dense_pairs
    np.testing.assert_allclose(chosen, np.take_along_axis(model.score(users), pairs, 1), rtol=1e-9, atol=1e-12)


class _Table:
    """A scorer returning fixed scores (NaN and ±inf among them)."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = scores
        self.n_users_, self.n_items_ = scores.shape

    def score(self, users: np.ndarray) -> np.ndarray:
        return self.scores[users]


@FUZZ
@given(data=interactions(), k=st.integers(1, 12), seed=st.integers(0, 2**32 - 1), excluded=st.booleans())
def test_top_k_keeps_its_bounds_with_any_scores(data, k, seed, excluded):
    rng = np.random.default_rng(seed)
    scores = rng.choice([np.nan, -np.inf, np.inf, 0.0, 1.0, -1e308, 1e308, 0.5], (data.n_users, data.n_items))
    k = min(k, data.n_items)
    items, values = recommend(_Table(scores), np.arange(data.n_users), k, exclude=data if excluded else None)
    _check_lists(items, values, data.n_items, k)
    for user, row in enumerate(items):
        kept = row[row >= 0]
        assert not np.isnan(scores[user, kept]).any() and (scores[user, kept] > -np.inf).all()
        if excluded:
            rated = data.items[data.users == user]
            assert not np.isin(kept, rated).any()


@FUZZ
@given(
    data=interactions(),
    factors=st.integers(1, 4),
    learning_rate=st.sampled_from([1e-300, 0.005, 1.0]),
    epochs=st.integers(1, 3),
)
def test_sgd_epochs_keep_their_bounds(data, factors, learning_rate, epochs):
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            model = BiasedMF(factors=factors, epochs=epochs, learning_rate=learning_rate, seed=0).fit(data)
    except DataError as err:  # rate 1 can diverge: refused after the epochs ran, their bounds checked
        assert learning_rate == 1.0 and "diverged" in str(err)
        return
    assert model.user_factors_.shape == (data.n_users, factors)
    assert model.item_factors_.shape == (data.n_items, factors)


@njit(cache=False, parallel=True)
def _write_past_the_end(out, stride):  # pragma: no cover
    for c in numba.prange(4):
        out[c * stride] = 1.0


@pytest.mark.skipif(not CHECKED, reason="writes out of bounds: only with numba's bounds checking on")
def test_bounds_checking_is_on_even_in_parallel_kernels():
    """The positive control of the checked run: an index past the end is an IndexError, in a kernel declared
    parallel too (receval's njit compiles it serially under NUMBA_BOUNDSCHECK)."""
    with pytest.raises(IndexError):
        _write_past_the_end(np.zeros(3), 7)


@pytest.mark.slow  # numba compiles the kernels afresh, with checks: about 30 s of CPU
@pytest.mark.skipif(CHECKED, reason="the checked run itself")
def test_the_fuzz_tests_pass_with_numba_checking_every_index(tmp_path):
    src = str(Path(receval.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "NUMBA_BOUNDSCHECK": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"),  # checked kernels must not meet the unchecked cache
        "PYTHONPATH": os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "-rs", "-x", __file__],
        env=env,
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "SKIPPED" in done.stdout and "the checked run itself" in done.stdout
    assert "only with numba's bounds checking on" not in done.stdout  # the positive control ran
