"""Freshness and reactivity: Jaccard list change, simulation logs, time windows, item cold start."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from receval import Interactions
from receval.data.synthetic import generate
from receval.errors import ConfigError, DataError
from receval.split import holdout
from receval.studies.freshness import (
    item_cold_start,
    item_cold_start_split,
    jaccard_distance,
    log_list_change,
    reactivity,
    window_freshness,
)


def test_jaccard_distance_hand_made():
    a = np.array([[1, 2, 3], [4, 5, -1], [-1, -1, -1], [7, 8, 9], [1, -1, -1]])
    b = np.array([[3, 1, 2], [5, 6, 7], [-1, -1, -1], [10, 11, 12], [-1, -1, -1]])
    # {4,5} vs {5,6,7}: 1 shared of 4; two empty lists: 0; disjoint: 1; {1} vs {}: 1
    assert jaccard_distance(a, b).tolist() == [0.0, 0.75, 0.0, 1.0, 1.0]
    with pytest.raises(DataError, match="do not pair"):
        jaccard_distance(a, b[:2])


def test_log_list_change_hand_made():
    log = pd.DataFrame(
        {
            "round": [1, 1, 1, 2, 2, 3, 3, 1, 2, 4],
            "user": [0, 0, 0, 0, 0, 0, 0, 7, 7, 7],
            "item": [1, 2, 3, 2, 3, 2, 3, 9, 8, 8],
        }
    )
    out = log_list_change(log)
    assert out["user"].tolist() == [0, 0, 7, 7]
    assert out["previous"].tolist() == [1, 2, 1, 2]
    assert out["round"].tolist() == [2, 3, 2, 4]
    # {1,2,3}→{2,3}: 1 − 2/3; {2,3}→{2,3}: 0; {9}→{8}: 1; {8}→{8}: 0
    assert np.allclose(out["distance"], [1 / 3, 0.0, 1.0, 0.0])
    with pytest.raises(DataError, match="lacks column"):
        log_list_change(log.drop(columns="item"))


def test_log_list_change_on_a_simulation_log():
    from receval.simulate import simulate

    data = generate(n_users=40, n_items=30, n_ratings=600, seed=1)
    train, test = holdout(data, seed=0)
    traj = simulate("popularity", train, test, rounds=4, threshold=4, n_per_round=3, seed=0, record_log=True)
    out = log_list_change(traj.log)
    assert len(out) > 0 and out["distance"].between(0, 1).all()
    # without repeats a user never gets an item twice: consecutive rounds are disjoint
    assert (out["distance"] == 1.0).all()


def test_reactivity_update_and_refit():
    data = generate(n_users=80, n_items=60, n_ratings=2_000, seed=2)
    train, test = holdout(data, seed=0)
    table = reactivity("random", train, test, k=5, steps=3)
    assert table["mode"].eq("update").all() and table["step"].tolist() == [1, 2, 3]
    assert table["n_feedback"].sum() == test.n_ratings
    # Random's scores never change: only users whose rated items grew see another list
    assert (table["change_untouched"] == 0).all() and (table["change_touched"] > 0).all()
    refit = reactivity("item-knn", train, test, k=5, steps=2)
    assert refit["mode"].eq("refit").all()
    assert refit[["change_touched", "change_untouched", "change_all"]].stack().between(0, 1).all()
    with pytest.raises(ConfigError, match="steps"):
        reactivity("random", train, test, steps=0)
    with pytest.raises(DataError, match="one id space"):
        reactivity("random", train, Interactions.from_arrays([0], [0], [5]))


def test_window_freshness_hand_made():
    rows = [
        (0, 0, 5, 1),
        (0, 1, 5, 2),
        (1, 0, 5, 3),
        (1, 3, 2, 4),
        (2, 0, 5, 5),
        (3, 2, 5, 6),
        (2, 2, 5, 7),
        (3, 4, 5, 8),
        (1, 2, 5, 9),
        (2, 4, 5, 10),
    ]
    frame = pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"])
    data = Interactions.from_frame(frame, timestamp="timestamp")
    table = window_freshness(data, "popularity", n_windows=2, k=2)
    # window 1 lists (items seen: 0, 1, 3): u0 [3], u1 [1], u2 [1, 3]
    # window 2 lists: u0 [2, 4], u1 [4, 1], u2 [1, 3], u3 [0, 1]; new items: 2 and 4
    row = table.iloc[0]
    assert row["window"] == 2 and row["end"] == 10 and row["n_users"] == 3
    assert row["change"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert row["new_item_share"] == pytest.approx((1.0 + 0.5 + 0.0 + 0.0) / 4)
    assert row["n_new_items"] == 2 and row["new_catalogue_share"] == pytest.approx(2 / 5)
    with pytest.raises(DataError, match="timestamps"):
        window_freshness(Interactions.from_arrays([0], [0], [5]), "popularity")
    with pytest.raises(ConfigError, match="n_windows"):
        window_freshness(data, "popularity", n_windows=1)


def test_item_cold_start_split_holds_items_out_entirely():
    data = generate(n_users=100, n_items=80, n_ratings=3_000, seed=4)
    train, test, cold = item_cold_start_split(data, 0.2, seed=1)
    rated = np.unique(data.items)
    assert len(cold) == round(0.2 * len(rated))
    assert not np.isin(train.items, cold).any() and np.isin(test.items, cold).all()
    assert train.n_ratings + test.n_ratings == data.n_ratings
    assert train.n_items == test.n_items == data.n_items and train.n_users == data.n_users
    again = item_cold_start_split(data, 0.2, seed=1)[2]
    assert np.array_equal(again, cold)
    with pytest.raises(ConfigError):
        item_cold_start_split(data, 1.0)


def test_item_cold_start_ranks_only_cold_items():
    data = generate(n_users=100, n_items=80, n_ratings=3_000, seed=4)
    result = item_cold_start(data, "popularity", ["precision@5", "ndcg@5"], item_fraction=0.2, k=5, seed=1)
    _, test, cold = item_cold_start_split(data, 0.2, seed=1)
    assert result["n_cold_items"] == len(cold) and result["n_users"] == len(np.unique(test.users))
    # popularity scores every warm item above every cold one (cold items have no training rating) and the test
    # part holds only cold items: without the restriction to cold items every list would score 0
    assert 0 < result["precision@5"] <= 1 and 0 < result["ndcg@5"] <= 1
