"""iALS through implicit: the same factors as implicit's own ALS on the binary matrix, seeded determinism."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from implicit.cpu.als import AlternatingLeastSquares
from threadpoolctl import threadpool_limits

from receval import Interactions
from receval.recommenders import make, recommend
from receval.recommenders.ials import IALS


def _data(seed: int, n_users: int = 60, n_items: int = 30, density: float = 0.2) -> Interactions:
    rng = np.random.default_rng(seed)
    users, items = np.nonzero(rng.random((n_users, n_items)) < density)
    return Interactions.from_arrays(users, items, rng.integers(1, 6, len(users)))


def test_factors_are_implicits_on_the_binary_matrix():
    data = _data(0)
    keep = data.ratings >= 4
    binary = sp.csr_matrix(
        (np.ones(keep.sum(), np.float32), (data.users[keep], data.items[keep])), shape=(data.n_users, data.n_items)
    )
    params = {"factors": 6, "regularization": 0.05, "alpha": 2.0, "iterations": 4}
    with threadpool_limits(1, "blas"):
        reference = AlternatingLeastSquares(**params, random_state=3, num_threads=1)
        reference.fit(binary, show_progress=False)
    model = IALS(**params, seed=3, num_threads=1).fit(data)
    np.testing.assert_array_equal(model.user_factors_, reference.user_factors)
    np.testing.assert_array_equal(model.item_factors_, reference.item_factors)
    expected = (reference.user_factors @ reference.item_factors.T).astype(np.float64)
    np.testing.assert_allclose(model.score(np.arange(data.n_users)), expected, rtol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_same_seed_gives_the_same_lists(threads):
    data = _data(1)
    users = np.arange(data.n_users)

    def lists(seed):
        model = make("ials", factors=8, iterations=5, seed=seed, num_threads=threads).fit(data)
        return recommend(model, users, k=10, exclude=data)[0]

    np.testing.assert_array_equal(lists(7), lists(7))
    np.testing.assert_array_equal(lists(7), _single_thread_lists(data, 7))
    assert (lists(7) != lists(8)).any()


def _single_thread_lists(data, seed):
    model = IALS(factors=8, iterations=5, seed=seed, num_threads=1).fit(data)
    return recommend(model, np.arange(data.n_users), k=10, exclude=data)[0]


def test_threshold_none_counts_every_rating():
    data = _data(2)
    assert IALS(threshold=None).confidence_matrix(data).nnz == data.n_ratings
    assert IALS().confidence_matrix(data).nnz == int((data.ratings >= 4).sum())


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        # 100,000 OpenMP threads ended the process with a segmentation fault
        ("ials", {"num_threads": 100_000}, r"num_threads=100000 is more than 1024 threads"),
        ("hkv", {"num_threads": 2048}, r"num_threads=2048 is more than 1024 threads"),
        # implicit's float32 solve returned NaN factors (a ModelFitError traceback)
        ("ials", {"alpha": 1e308}, r"alpha=1e\+308 is a confidence of 1e\+308, more than .* use alpha <= 1e\+06"),
        ("ials", {"alpha": float("nan")}, r"alpha must be > 0"),
        ("ials", {"regularization": float("inf")}, r"regularization >= 0 \(finite\)"),
        # ran on with no end in sight
        ("ials", {"iterations": 10**12}, r"iterations=1000000000000 is more than 10,000 ALS sweeps"),
        ("hkv", {"iterations": 10_001}, r"iterations=10001 is more than 10,000"),
    ],
)
def test_implicit_parameters_past_their_bounds_are_refused_by_make(name, params, message):
    from receval.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        make(name, **params)


def test_hkv_refuses_a_confidence_past_the_bound_from_the_largest_rating():
    from receval.errors import ConfigError

    model = make("hkv", alpha=300_000.0, factors=2, iterations=1)  # ratings up to 5: a confidence of 1.5e6
    with pytest.raises(ConfigError, match=r"alpha=300000 times the largest value 5 is a confidence of 1\.5e\+06"):
        model.fit(_data(0))
    make("hkv", alpha=300_000.0, values="ones", factors=2, iterations=1).fit(_data(0))  # ones: 3e5 is fine


def test_implicit_adapter_has_the_same_bounds(monkeypatch):
    import receval.validate
    from receval.errors import ConfigError

    data = _data(1)
    with pytest.raises(ConfigError, match=r"implicit:AlternatingLeastSquares: num_threads=100000 is more than"):
        make("implicit:AlternatingLeastSquares", num_threads=100_000).fit(data)
    with pytest.raises(ConfigError, match=r"implicit:AlternatingLeastSquares: alpha=1e\+308 times the largest"):
        make("implicit:AlternatingLeastSquares", alpha=1e308).fit(data)
    # factors=10^8 was an _ArrayMemoryError traceback: now the memory refusal of receval's own factor models
    with pytest.raises(ConfigError, match=r"100,000,000 factors \(60 users \+ 30 items\) needs .* of memory"):
        make("implicit:AlternatingLeastSquares", factors=10**8).fit(data)
    monkeypatch.setattr(receval.validate, "available_memory", lambda: 10**6)  # the Gram matrices count too
    with pytest.raises(
        ConfigError,
        match=r"500 factors \(60 users \+ 30 items\), with 2 Gram matrices of 500 x 500, needs 2\.2 MB of memory",
    ):
        make("implicit:AlternatingLeastSquares", factors=500).fit(data)


def test_a_breakdown_inside_implicit_is_a_config_error(monkeypatch):
    from implicit.recommender_base import ModelFitError

    from receval.errors import ConfigError

    def diverge(self, *args, **kwargs):
        raise ModelFitError("NaN encountered in factors")

    monkeypatch.setattr(AlternatingLeastSquares, "fit", diverge)
    with pytest.raises(ConfigError, match=r"IALS: implicit's AlternatingLeastSquares broke down \(NaN encountered"):
        IALS(factors=2).fit(_data(2))
