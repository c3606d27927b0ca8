"""Dataset statistics: hand-computed cases, an independent Gini, the MAR/MNAR rule, real data."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data import Interactions, RatingScale, dataset_stats, load
from receval.data.stats import gini, mar_mnar


def gini_mean_difference(values: np.ndarray) -> float:
    """Independent Gini: mean absolute difference over all pairs / (2 · mean), rescaled by n/(n−1)."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    mad = np.abs(x[:, None] - x[None, :]).sum() / (n * n)
    return float(mad / (2 * x.mean()) * n / (n - 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=2, max_size=40).filter(lambda v: sum(v) > 0))
def test_gini_matches_mean_difference_formula(values):
    assert gini(np.array(values)) == pytest.approx(gini_mean_difference(np.array(values)), abs=1e-9)


def test_gini_extremes():
    assert gini(np.full(10, 7)) == pytest.approx(0.0, abs=1e-12)
    assert gini(np.r_[np.zeros(9), 5]) == pytest.approx(1.0)
    assert gini(np.array([3])) == 0.0


def test_hand_computed_example():
    # users a, b, c; items x (3 ratings, one repeated pair), y (1), z listed in the id space but unrated
    data = Interactions.from_arrays(
        ["a", "a", "b", "b", "c"], ["x", "y", "x", "x", "x"], [5, 3, 4, 2, 1], scale=RatingScale(1, 5, 1)
    )
    s = dataset_stats(data)
    assert (s["n_users"], s["n_items"], s["n_ratings"], s["n_duplicates"]) == (3, 2, 5, 1)
    assert s["density"] == pytest.approx(4 / 6)  # distinct pairs (a,x) (a,y) (b,x) (c,x) over 3 x 2
    assert s["rating_counts"] == {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}
    assert s["item_popularity"] == [4, 1]
    assert s["gini_item_popularity"] == pytest.approx(0.6)
    assert s["top10pct_item_share"] == pytest.approx(4 / 5)  # ceil(0.1 * 2) = 1 item
    assert s["user_activity"] == {"min": 1, "median": 2.0, "mean": 5 / 3, "max": 2}
    assert s["scale"] == {"low": 1.0, "high": 5.0, "step": 1.0}
    assert "n_familiar" not in s
    json.dumps(s)  # JSON-ready


def test_items_without_ratings_are_not_counted():
    data = Interactions.from_arrays([0, 1], [0, 0], [4, 5])
    sub = data.subset(np.array([True, False]))
    wide = Interactions(
        users=sub.users, items=sub.items, ratings=sub.ratings, user_ids=np.arange(5), item_ids=np.arange(9),
        scale=sub.scale,
    )  # fmt: skip
    s = dataset_stats(wide)
    assert (s["n_users"], s["n_items"], s["density"]) == (1, 1, 1.0)


def test_continuous_scale_histogram_bins():
    rng = np.random.default_rng(0)
    ratings = rng.uniform(1, 5, 500)
    data = Interactions.from_arrays(rng.integers(0, 20, 500), rng.integers(0, 30, 500), ratings)
    counts = dataset_stats(data)["rating_counts"]
    assert len(counts) == 10 and sum(counts.values()) == 500
    assert next(iter(counts)).startswith("[")


def test_familiar_subset_stats():
    data = Interactions.from_arrays(
        [0, 0, 1, 1, 2], [0, 1, 0, 2, 0], [1, 2, 3, 4, 4], extra={"familiar": [True, False, True, False, True]}
    )
    s = dataset_stats(data)
    assert s["n_familiar"] == 3 and s["familiar_share"] == pytest.approx(0.6)
    assert s["familiar"]["n_ratings"] == 3 and s["familiar"]["n_items"] == 1
    assert s["familiar"]["item_popularity"] == [3]


def test_mar_mnar_rule_on_generated_exposure():
    rng = np.random.default_rng(7)
    n_users, n_items = 2000, 500
    # MAR: every user rates 50 items drawn uniformly (as CM100k's assignment)
    uniform = np.concatenate([rng.choice(n_items, 50, replace=False) for _ in range(n_users)])
    assert mar_mnar(np.bincount(uniform, minlength=n_items))["label"] == "MAR"
    # MNAR: the same number of ratings with power-law item popularity (as MovieLens)
    p = 1 / np.arange(1, n_items + 1) ** 1.0
    biased = rng.choice(n_items, len(uniform), p=p / p.sum())
    diag = mar_mnar(np.bincount(biased, minlength=n_items))
    assert diag["label"] == "MNAR" and diag["cv"] > 2 * diag["cv_uniform"]
    # complete observation: every item rated by every user
    assert mar_mnar(np.full(n_items, n_users))["label"] == "MAR"
    assert mar_mnar(np.zeros(3))["label"] is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 12), st.integers(1, 5)), min_size=1, max_size=80))
def test_invariants(rows):
    users, items, ratings = zip(*rows, strict=True)
    data = Interactions.from_arrays(users, items, ratings, scale=RatingScale(1, 5, 1))
    s = dataset_stats(data)
    assert sum(s["rating_counts"].values()) == s["n_ratings"] == len(rows)
    assert sum(s["item_popularity"]) == len(rows)
    assert s["item_popularity"] == sorted(s["item_popularity"], reverse=True)
    assert s["n_items"] == len(set(items)) and s["n_users"] == len(set(users))
    assert s["n_duplicates"] == len(rows) - len(set(zip(users, items, strict=True)))
    assert 0 < s["density"] <= 1 and 0 <= s["gini_item_popularity"] <= 1
    assert 0 < s["top10pct_item_share"] <= 1


def test_real_ml100k_stats(ml100k_dir):
    s = dataset_stats(load(ml100k_dir, "movielens-100k"))
    assert (s["n_users"], s["n_items"], s["n_ratings"]) == (943, 1682, 100_000)
    assert s["density"] == pytest.approx(100_000 / (943 * 1682))
    assert s["rating_counts"] == {"1": 6110, "2": 11370, "3": 27145, "4": 34174, "5": 21201}
    assert s["item_popularity"][0] == 583  # Star Wars (1977)
    assert s["mar_mnar"]["label"] == "MNAR"
    assert s["n_aspects"] == 19


def test_real_cm100k_stats(cm100k_dir):
    s = dataset_stats(load(cm100k_dir, "cm100k"))
    assert (s["n_users"], s["n_items"], s["n_ratings"], s["n_familiar"]) == (1054, 1084, 103_584, 11_594)
    assert s["mar_mnar"]["label"] == "MAR"  # every item has 67..125 ratings
    assert s["familiar"]["mar_mnar"]["label"] == "MNAR"  # the familiar subset is popularity-biased
    assert s["familiar"]["gini_item_popularity"] > 5 * s["gini_item_popularity"]
    assert min(s["item_popularity"]) >= 60 and max(s["item_popularity"]) <= 130
