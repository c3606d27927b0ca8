"""receval's P3α/RP3β against a port of Dacrema et al.'s fits (tests/peers/dacrema, commit in its SOURCE.md).

The port follows their code step by step (row top-K, l1 rows, then ``similarityMatrixTopK``'s column top-K) in
float64, with equal weights ordered by the lower index as receval orders them (``argsort``'s order is unspecified);
with that, the weights agree to 1e-12 (in fact to the bit) and so do the top-N lists.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import Interactions
from receval.recommenders import recommend
from receval.recommenders.graph import P3alpha, RP3beta

pytest.importorskip("sklearn")  # the port calls scikit-learn's normalize, as the original does

from peers.dacrema.walk import walk_fit

# P3α and RP3β at their defaults, and one each away from them: another topK, alpha, beta and normalisation
PARAMETERS = [
    (P3alpha, {}),
    (RP3beta, {}),
    (RP3beta, {"topK": 50, "alpha": 0.5, "beta": 0.3, "normalize_similarity": False}),
    (P3alpha, {"topK": 20, "alpha": 1.5, "normalize_similarity": True}),
]


def _port(model, urm: sp.csr_matrix) -> sp.csr_matrix:
    params = model.get_params()
    return walk_fit(
        urm,
        topK=params["topK"],
        alpha=params["alpha"],
        beta=params.get("beta"),
        normalize_similarity=params["normalize_similarity"],
        ties="lower index",
    )


def _binary(data: Interactions, threshold: float | None) -> sp.csr_matrix:
    keep = np.ones(data.n_ratings, bool) if threshold is None else data.ratings >= threshold
    ones = np.ones(int(keep.sum()))
    return sp.csr_matrix((ones, (data.users[keep], data.items[keep])), shape=(data.n_users, data.n_items))


def _assert_same_weights(ours: sp.csr_matrix, theirs: sp.csr_matrix) -> None:
    assert ours.shape == theirs.shape
    assert ((ours != 0) != (theirs != 0)).nnz == 0  # the same entries kept
    assert abs(ours - theirs).max() <= 1e-12 if ours.nnz else theirs.nnz == 0


def _assert_same_lists(model, urm: sp.csr_matrix, theirs: sp.csr_matrix, users: np.ndarray, k: int) -> None:
    """Our top-k lists hold, for each user, items whose scores under their weights are the top k of that user's
    unrated items (ties may order equal scores either way)."""
    items, _ = recommend(model, users, k=k, exclude=urm)
    scores = np.asarray((urm[users] @ theirs).toarray())
    scores[urm[users].toarray() > 0] = -np.inf
    best = -np.sort(-scores, axis=1)[:, :k]
    np.testing.assert_allclose(-np.sort(-np.take_along_axis(scores, items, axis=1), axis=1), best, rtol=0, atol=1e-12)


@pytest.mark.realdata
@pytest.mark.parametrize(("cls", "params"), PARAMETERS, ids=lambda p: getattr(p, "__name__", str(p)))
def test_equals_dacrema_et_al_on_ml100k_u1(ml100k_dir, cls, params):
    train, test = _u1(ml100k_dir)
    model = cls(**params).fit(train)
    urm = _binary(train, 4.0)
    theirs = _port(model, urm)
    _assert_same_weights(model.weights_, theirs)
    _assert_same_lists(model, urm, theirs, np.unique(test.users), 10)


def _u1(folder) -> tuple[Interactions, Interactions]:
    """u1.base and u1.test in one id space."""
    import pandas as pd

    columns = ["user", "item", "rating", "timestamp"]
    base = pd.read_csv(folder / "u1.base", sep="\t", names=columns)
    test = pd.read_csv(folder / "u1.test", sep="\t", names=columns)
    data = Interactions.from_frame(pd.concat([base, test], ignore_index=True), rating="rating")
    return data.subset(np.arange(len(base))), data.subset(np.arange(len(base), data.n_ratings))


@pytest.mark.parametrize(
    ("cls", "params"),
    [
        *PARAMETERS,
        (RP3beta, {"topK": 3, "beta": 1.5}),
        (P3alpha, {"alpha": 200.0}),  # (1/deg)^α underflows to 0 past degree 40: those weights are 0 in both
        (RP3beta, {"alpha": 1e308}),  # only steps from degree 1 survive, which lead back to the item: no weights
        (RP3beta, {"beta": 300.0}),  # deg^-β is subnormal from degree 11 and underflows to 0 from degree 13
        (P3alpha, {"topK": 1, "normalize_similarity": True}),
    ],
    ids=str,
)
def test_equals_dacrema_et_al_on_generated_data(cls, params):
    rng = np.random.default_rng(7)
    users, items = np.nonzero(rng.random((120, 60)) < rng.uniform(0.02, 0.5, 60))  # items of every popularity
    data = Interactions.from_arrays(users, items, rng.integers(1, 6, len(users)))
    model = cls(**params, threshold=3.0).fit(data)
    urm = _binary(data, 3.0)
    theirs = _port(model, urm)
    _assert_same_weights(model.weights_, theirs)
    _assert_same_lists(model, urm, theirs, np.arange(data.n_users), 5)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_users=st.integers(1, 30),
    n_items=st.integers(1, 25),
    top_k=st.integers(1, 30),
    alpha=st.sampled_from([0.1, 0.5, 1.0, 2.0, 50.0, 1e3]),
    beta=st.sampled_from([None, 0.0, 0.6, 3.0, 1e3]),
    normalize=st.booleans(),
)
def test_equals_dacrema_et_al_on_any_small_matrix(seed, n_users, n_items, top_k, alpha, beta, normalize):
    rng = np.random.default_rng(seed)
    users, items = np.nonzero(rng.random((n_users, n_items)) < rng.uniform(0.05, 0.9))
    if len(users) == 0:
        return
    data = Interactions.from_arrays(users, items, np.ones(len(users)))
    params = {"topK": top_k, "alpha": alpha, "normalize_similarity": normalize, "threshold": None}
    model = (P3alpha(**params) if beta is None else RP3beta(**params, beta=beta)).fit(data)
    _assert_same_weights(model.weights_, _port(model, _binary(data, None)))
