"""score_items: every registered algorithm scores given candidates exactly as the matching columns of score."""

from __future__ import annotations

import numpy as np
import pytest

from receval.data.synthetic import generate
from receval.errors import ColdStartError, ConfigError
from receval.recommenders import base, make
from receval.recommenders.registry import ALGORITHMS

TRAIN = generate(40, 60, 900, seed=3)


def _fitted(name: str):
    params = {"threshold": 4} if "bandit" in name or name in ("average", "popularity") else {}
    if name in ("mf", "hkv"):
        params["factors"] = 5
    return make(name, **params).fit(TRAIN)


def _candidates(seed: int, n_users: int = 25, n: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    users = rng.integers(0, TRAIN.n_users, n_users)
    return users, rng.integers(0, TRAIN.n_items, (n_users, n))


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_score_items_is_the_matching_columns_of_score(name):
    model = _fitted(name)
    users, items = _candidates(1)
    full = np.asarray(model.score(users), dtype=np.float64)
    if not np.array_equal(full, np.asarray(model.score(users), dtype=np.float64)):
        pytest.skip(f"{name} draws new scores on every call (Thompson sampling): no columns to match")
    expected = np.take_along_axis(full, items, axis=1)
    got = base.score_items(model, users, items)
    assert got.shape == items.shape and got.dtype == np.float64
    # HKV's factors are float32: its score sums in float32, score_items in float64
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * max(1.0, float(np.abs(full).max())))


@pytest.mark.parametrize("name", ["mf", "hkv", "popularity", "average", "biases", "global-mean", "random"])
def test_fast_paths_exist_and_agree_with_the_fallback(name, monkeypatch):
    model = _fitted(name)
    assert hasattr(model, "score_items")
    users, items = _candidates(2)
    fast = base.score_items(model, users, items)
    monkeypatch.setattr(base, "SCORE_CELLS", 2 * TRAIN.n_items)  # fallback in batches of two users

    class FullRows:  # the same model seen through score only
        def score(self, u):
            return model.score(u)

    np.testing.assert_allclose(fast, base.score_items(FullRows(), users, items), rtol=1e-6, atol=1e-9)


def test_mf_rating_ranking_fast_path():
    model = make("mf", factors=4, ranking="rating").fit(TRAIN)
    users, items = _candidates(3)
    np.testing.assert_allclose(
        model.score_items(users, items), np.take_along_axis(model.score(users), items, axis=1), rtol=1e-10
    )


def test_fallback_batches_never_score_more_rows_than_the_budget(monkeypatch):
    seen: list[int] = []

    class Counting:
        n_items_ = 10

        def score(self, users):
            seen.append(len(users))
            return np.tile(np.arange(10.0), (len(users), 1)) + np.asarray(users)[:, None] * 100

    monkeypatch.setattr(base, "SCORE_CELLS", 30)  # 3 users of 10 items at a time
    users = np.arange(8)
    items = np.tile([9, 0], (8, 1))
    got = base.score_items(Counting(), users, items)
    assert max(seen) == 3 and sum(seen) == 8
    np.testing.assert_array_equal(got, np.stack([users * 100 + 9, users * 100], axis=1))


def test_bad_candidates_are_one_line_errors():
    model = _fitted("biases")
    with pytest.raises(ConfigError, match="one row per user"):
        base.score_items(model, [0, 1], [[0, 1]])
    with pytest.raises(ConfigError, match="one row of items per user"):
        model.score_items([0, 1], [[0, 1]])
    with pytest.raises(ColdStartError, match="item index 60 is outside the 60 items"):
        base.score_items(model, [0], [[60]])

    class Plain:
        def score(self, users):
            return np.zeros((len(users), 3))

    with pytest.raises(ColdStartError, match="item index 3 is outside the 3 items Plain scores"):
        base.score_items(Plain(), [0], [[3]])
    with pytest.raises(ConfigError, match="int array of item indices"):
        base.score_items(Plain(), [0], [[0.5]])
