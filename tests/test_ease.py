"""EASE^R (Steck, WWW 2019) against an independent numpy computation, and what every item-item baseline shares:
registry names, the command line's list, score_items, bad parameters."""

from __future__ import annotations

import numpy as np
import pytest

from receval import Interactions
from receval.cli import main
from receval.errors import ConfigError, DataError
from receval.recommenders import make, recommend
from receval.recommenders.linear import EASE

BASELINES = ("ease", "slim", "p3alpha", "rp3beta", "ials")


def _data(seed: int, n_users: int = 30, n_items: int = 12, density: float = 0.3) -> Interactions:
    rng = np.random.default_rng(seed)
    users, items = np.nonzero(rng.random((n_users, n_items)) < density)
    ratings = rng.integers(1, 6, len(users))
    return Interactions.from_arrays(users, items, ratings)


def _dense(data: Interactions, threshold: float | None) -> np.ndarray:
    x = np.zeros((data.n_users, data.n_items))
    keep = np.ones(data.n_ratings, bool) if threshold is None else data.ratings >= threshold
    x[data.users[keep], data.items[keep]] = 1.0
    return x


@pytest.mark.parametrize(("seed", "l2", "threshold"), [(0, 1.0, None), (1, 10.0, 4.0), (2, 500.0, 3.0), (3, 0.1, None)])
def test_weights_equal_the_closed_form_computed_with_numpy(seed, l2, threshold):
    data = _data(seed)
    x = _dense(data, threshold)
    p = np.linalg.inv(x.T @ x + l2 * np.eye(data.n_items))
    expected = np.eye(data.n_items) - p @ np.diag(1.0 / np.diag(p))
    model = EASE(l2=l2, threshold=threshold).fit(data)
    np.testing.assert_allclose(model.weights_, expected, rtol=0, atol=1e-9)
    assert np.all(np.diag(model.weights_) == 0.0)
    users = np.arange(data.n_users)
    np.testing.assert_allclose(model.score(users), x @ expected, rtol=0, atol=1e-9)


def test_weights_solve_the_constrained_least_squares_problem():
    """Stationarity of ||X - XB||² + λ||B||² under diag(B) = 0: off the diagonal, (XᵀX + λI)B = XᵀX."""
    data = _data(4, n_users=60, n_items=15)
    x = _dense(data, None)
    model = EASE(l2=3.0, threshold=None).fit(data)
    gram = x.T @ x
    residual = (gram + 3.0 * np.eye(15)) @ model.weights_ - gram
    off = ~np.eye(15, dtype=bool)
    assert np.abs(residual[off]).max() < 1e-9


def test_threshold_drops_the_ratings_below_it():
    data = _data(5)
    positives = data.subset(data.ratings >= 4)
    a = EASE(l2=5.0, threshold=4).fit(data).weights_
    b = EASE(l2=5.0, threshold=None).fit(positives).weights_
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    with pytest.raises(
        DataError, match=r"EASE.s threshold 9 is outside the rating scale 1\.\.5 .*, or threshold=none to count every"
    ):
        EASE(threshold=9).fit(data)


@pytest.mark.parametrize("name", BASELINES)
def test_score_items_equals_the_full_scores_at_those_items(name):
    data = _data(6, n_users=40, n_items=20, density=0.4)
    params = {"factors": 4, "iterations": 3} if name == "ials" else {"alpha": 0.01} if name == "slim" else {}
    model = make(name, threshold=3, **params).fit(data)
    users = np.array([3, 0, 17, 3, 39])
    items = np.random.default_rng(0).integers(0, data.n_items, (len(users), 7))
    expected = np.take_along_axis(model.score(users), items, axis=1)
    np.testing.assert_allclose(model.score_items(users, items), expected, rtol=1e-6, atol=1e-9)
    with pytest.raises(ConfigError, match="one row of items per user"):
        model.score_items(users, items[:2])


@pytest.mark.parametrize("name", BASELINES)
def test_recommend_lists_only_unseen_items(name):
    data = _data(7, n_users=25, n_items=15, density=0.4)
    params = {"factors": 4, "iterations": 3} if name == "ials" else {}
    model = make(name, threshold=None, **params).fit(data)
    items, _ = recommend(model, np.arange(data.n_users), k=5, exclude=data)
    seen = set(zip(data.users.tolist(), data.items.tolist(), strict=True))
    assert all((u, i) not in seen for u, row in enumerate(items.tolist()) for i in row if i >= 0)


def test_make_converts_and_checks_the_parameters():
    assert make("ease", l2=100).l2 == 100
    assert make("ease", l2="100", threshold="none").get_params() == {"l2": 100.0, "threshold": None}
    assert make("rp3beta", topK="20", beta="0.3").get_params()["topK"] == 20
    for name, bad, message in [
        ("ease", {"l2": 0}, "l2 must be a positive number"),
        ("ease", {"lambda": 3}, "has no parameter 'lambda'"),
        ("rp3beta", {"topK": 0}, "topK must be a positive integer"),
        ("rp3beta", {"beta": -1}, "beta must be >= 0"),
        ("p3alpha", {"alpha": 0}, "alpha must be > 0"),
        ("slim", {"l1_ratio": 2}, r"l1_ratio must be in \[0, 1\]"),
        ("ials", {"factors": 0}, "factors must be an integer >= 1"),
        ("ease", {"threshold": "high"}, "is not a valid float"),
    ]:
        with pytest.raises(ConfigError, match=message):
            make(name, **bad)


def test_the_memory_guard_refuses_before_allocating(monkeypatch):
    import receval.validate

    monkeypatch.setattr(receval.validate, "available_memory", lambda: 1000)
    with pytest.raises(ConfigError, match=r"EASE's dense 12 x 12 item-item matrices needs .* use rp3beta or slim"):
        EASE().fit(_data(8))


@pytest.mark.parametrize("name", ["ease", "rp3beta"])
def test_score_refuses_rows_that_do_not_fit(name, monkeypatch):
    import receval.validate

    model = make(name, threshold=None).fit(_data(9))
    monkeypatch.setattr(receval.validate, "available_memory", lambda: 8 * 12 * 10)  # 10 rows of 12 items
    assert model.score(np.arange(10)).shape == (10, 12)
    with pytest.raises(ConfigError, match=r"scores of 11 users x 12 items needs .* score fewer users at once"):
        model.score(np.arange(11))


def test_the_command_line_lists_the_baselines(capsys):
    assert main(["algorithms"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line and not line[0].isspace()}
    assert set(BASELINES) <= listed


@pytest.mark.realdata
def test_defaults_beat_popularity_on_ml100k_u1(ml100k_dir):
    """MovieLens-100K u1.base -> u1.test, top-10, training items excluded, λ = 4: the closed-form and walk baselines
    rank far better than popularity with their defaults (Dacrema et al. 2019 report the same order on ML-1M)."""
    import pandas as pd

    from receval.evaluation import evaluate_model

    columns = ["user", "item", "rating", "timestamp"]
    base = pd.read_csv(ml100k_dir / "u1.base", sep="\t", names=columns)
    test = pd.read_csv(ml100k_dir / "u1.test", sep="\t", names=columns)
    data = Interactions.from_frame(pd.concat([base, test], ignore_index=True), rating="rating")
    train, test_part = data.subset(np.arange(len(base))), data.subset(np.arange(len(base), data.n_ratings))
    precision = {
        name: evaluate_model(make(name), train, test_part, ["precision@10"], k=10, threshold=4, seed=0).summary[
            "precision@10"
        ]
        for name in ("popularity", "ease", "p3alpha", "rp3beta")
    }
    popularity = precision.pop("popularity")
    assert all(value > popularity + 0.05 for value in precision.values()), (popularity, precision)
