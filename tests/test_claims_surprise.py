"""BiasedMF is scikit-surprise's ``SVD`` (receval.recommenders.mf: "Koren, Bell & Volinsky 2009; scikit-surprise's
SVD", its updates and its defaults), checked against surprise itself.

surprise draws its initial factors from its own ``RandomState``; ``random_state`` may be a ``RandomState``, so the one
below hands surprise receval's initial factors (``default_rng(seed).normal``, users then items). With
``shuffle=False`` receval visits the training rows in their order, and surprise its ``Trainset.all_ratings()`` (user by
user in the order users first appear, each user's ratings in row order): the rows below are grouped by user, so both
run the same SGD steps in the same order, and the fitted biases, factors and predictions agree to rounding.
Reference: scikit-surprise 1.1.5, surprise/prediction_algorithms/matrix_factorization.pyx (``SVD.sgd``,
``SVD.estimate``) and surprise/prediction_algorithms/algo_base.py (``predict`` clips to the rating scale).
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval import Interactions
from receval.recommenders.mf import BiasedMF

surprise = pytest.importorskip("surprise")


class _Given(np.random.RandomState):
    """A RandomState whose ``normal`` returns the given matrices in turn (surprise's ``get_rng`` takes it as is)."""

    def __init__(self, *draws: np.ndarray) -> None:
        super().__init__(0)
        self._draws = list(draws)

    def normal(self, loc=0.0, scale=1.0, size=None):  # type: ignore[override]
        out = self._draws.pop(0)
        assert out.shape == size
        return out.copy()


def _ratings(seed: int, n_users: int, n_items: int) -> pd.DataFrame:
    """Every user and item rated at least once; rows grouped by user, items in a random order within a user."""
    rng = np.random.default_rng(seed)
    rated = rng.random((n_users, n_items)) < 0.35
    rated[np.arange(n_users), rng.integers(0, n_items, n_users)] = True
    rated[rng.integers(0, n_users, n_items), np.arange(n_items)] = True
    rows = []
    for u in range(n_users):
        items = rng.permutation(np.flatnonzero(rated[u]))
        rows += [(u, int(i), float(rng.integers(1, 6))) for i in items]
    return pd.DataFrame(rows, columns=["user", "item", "rating"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 10_000),
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from([(0.005, 0.02), (0.05, 0.1), (0.02, 0.0)]),
    st.sampled_from([0.1, 0.5]),
)
def test_biased_mf_without_shuffling_is_surprise_svd(seed, factors, epochs, step, init_std) -> None:
    lr, reg = step
    frame = _ratings(seed, 12, 9)
    train = Interactions.from_arrays(frame["user"], frame["item"], frame["rating"])
    assert train.users.tolist() == frame["user"].tolist() and train.items.tolist() == frame["item"].tolist()
    ours = BiasedMF(
        factors=factors, epochs=epochs, learning_rate=lr, regularization=reg, init_std=init_std, shuffle=False,
        seed=seed, ranking="rating",
    ).fit(train)  # fmt: skip

    rng = np.random.default_rng(seed)  # receval's initial factors, drawn as BiasedMF.fit draws them
    p0 = rng.normal(0.0, init_std, size=(12, factors))
    q0 = rng.normal(0.0, init_std, size=(9, factors))
    trainset = surprise.Dataset.load_from_df(frame, surprise.Reader(rating_scale=(1, 5))).build_full_trainset()
    inner_items = [trainset.to_raw_iid(i) for i in range(trainset.n_items)]  # surprise numbers items as first seen
    assert [trainset.to_raw_uid(u) for u in range(trainset.n_users)] == list(range(12))
    algo = surprise.SVD(
        n_factors=factors, n_epochs=epochs, lr_all=lr, reg_all=reg, random_state=_Given(p0, q0[inner_items])
    ).fit(trainset)

    assert ours.mean_ == trainset.global_mean
    np.testing.assert_allclose(ours.user_bias_, algo.bu, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.item_bias_[inner_items], algo.bi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.user_factors_, algo.pu, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.item_factors_[inner_items], algo.qi, rtol=0, atol=1e-12)
    users, items = np.repeat(np.arange(12), 9), np.tile(np.arange(9), 12)  # every pair, rated or not
    theirs = [algo.predict(int(u), int(i)).est for u, i in zip(users, items, strict=True)]  # clipped to 1..5
    np.testing.assert_allclose(ours.predict(users, items), theirs, rtol=0, atol=1e-12)


def test_defaults_are_surprises_but_the_factors() -> None:
    """The module docstring: surprise's learning rate, regularisation, epochs and initial spread; 50 factors."""
    theirs = inspect.signature(surprise.SVD.__init__).parameters
    ours = BiasedMF().get_params()
    assert ours["learning_rate"] == theirs["lr_all"].default == 0.005
    assert ours["regularization"] == theirs["reg_all"].default == 0.02
    assert ours["epochs"] == theirs["n_epochs"].default == 20
    assert ours["init_std"] == theirs["init_std_dev"].default == 0.1 and theirs["init_mean"].default == 0
    assert (ours["factors"], theirs["n_factors"].default) == (50, 100)


@pytest.mark.parametrize("means", [True, False])
@pytest.mark.parametrize("user_based", [False, True])
def test_knn_predicts_surprises_global_mean_for_a_user_or_item_without_ratings(user_based: bool, means: bool) -> None:
    """receval.recommenders.knn: "When the user or the item has no training rating the prediction is the global mean
    (as surprise)": surprise's KNNWithMeans / KNNBasic raise PredictionImpossible for an unknown user or item and
    ``predict`` falls back to ``default_prediction()``, the training mean (algo_base.py)."""
    from receval.recommenders.knn import ItemKNN, UserKNN

    full = _ratings(7, 12, 9)
    kept = ((full["user"] != 4) & (full["item"] != 5)).to_numpy()  # user 4 and item 5 stay in the id space, unrated
    train = Interactions.from_arrays(full["user"], full["item"], full["rating"]).subset(kept)
    frame = full[kept]
    ours = (UserKNN if user_based else ItemKNN)(k=5, similarity="pearson", means=means).fit(train)
    trainset = surprise.Dataset.load_from_df(frame, surprise.Reader(rating_scale=(1, 5))).build_full_trainset()
    algo = (surprise.KNNWithMeans if means else surprise.KNNBasic)(
        k=5, sim_options={"name": "pearson", "user_based": user_based}, verbose=False
    ).fit(trainset)
    users, items = np.array([4, 4, 0, 3]), np.array([5, 2, 5, 1])
    theirs = [algo.predict(int(u), int(i)) for u, i in zip(users, items, strict=True)]
    assert [p.details["was_impossible"] for p in theirs[:3]] == [True, True, True]
    np.testing.assert_allclose(ours.predict(users, items), [p.est for p in theirs], rtol=0, atol=1e-12)
    assert theirs[0].est == trainset.global_mean
