"""User coherence (Said & Bellogín, UMUAI 2018, §3): worked example, naive-loop oracle, conventions, errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data.interactions import Interactions, RatingScale
from receval.errors import DataError
from receval.stats.coherence import GAMMAS, coherence, coherence_all

# Figure 1 of the paper: six items, "ah" is both Action and Horror.
GENRES = pd.DataFrame(
    {
        "item": ["a1", "a2", "ah", "ah", "h", "c1", "c2"],
        "aspect": ["Action", "Action", "Action", "Horror", "Horror", "Comedy", "Comedy"],
    }
)
ITEMS = ["a1", "a2", "ah", "h", "c1", "c2"]


def worked_example() -> Interactions:
    ratings = pd.DataFrame(
        {
            "user": ["u1"] * 6 + ["u2"] * 6,
            "item": ITEMS * 2,
            # u1: Action (4,4,3) Horror (3,3) Comedy (1,2); u2: Action (4,3,5) Horror (5,2) Comedy (1,5)
            "rating": [4, 4, 3, 3, 1, 2, 4, 3, 5, 2, 1, 5],
        }
    )
    return Interactions.from_frame(ratings, item_aspects=GENRES)


def test_worked_example_std_and_weighted_std():
    data = worked_example()
    std = coherence(data, "std").to_series()
    wstd = coherence(data, "wstd").to_series()
    assert std.round(2).to_dict() == {"u1": -1.28, "u2": -5.95}
    assert wstd.round(2).to_dict() == {"u1": -0.52, "u2": -2.15}
    # |u_A| counts items (6), not item-attribute pairs (7): weights 3/6, 2/6, 2/6
    assert coherence(data, "wstd").n_attributed.tolist() == [6, 6]
    # exact values under the sample (n-1) convention
    s = np.std
    assert std["u1"] == pytest.approx(-(s([4, 4, 3], ddof=1) + s([1, 2], ddof=1) + s([3, 3], ddof=1)))
    assert wstd["u2"] == pytest.approx(-(s([5, 4, 3], ddof=1) * 3 + s([1, 5], ddof=1) * 2 + s([2, 5], ddof=1) * 2) / 6)


def test_other_gammas_on_worked_example():
    data = worked_example()
    res = {g: c.to_series() for g, c in coherence_all(data).items()}
    # u1: sums Action 11, Horror 6, Comedy 3 -> p = 11/20, 6/20, 3/20
    p = np.array([11, 6, 3]) / 20
    assert res["entropy"]["u1"] == pytest.approx(-np.sum(p * np.log(p)))
    # community: Action 11+12, Horror 6+7, Comedy 3+6 -> 23/45, 13/45, 9/45
    q = np.array([23, 13, 9]) / 45
    assert res["kld"]["u1"] == pytest.approx(-np.sum(p * np.log(p / q)))
    assert res["mean"]["u1"] == pytest.approx(-(11 / 3 + 3 + 1.5))
    assert res["wmean"]["u1"] == pytest.approx(-(11 / 3 * 3 + 3 * 2 + 1.5 * 2) / 6)
    assert res["size"].to_dict() == {"u1": -7.0, "u2": -7.0}


def naive(data: Interactions, gamma: str) -> dict:
    """Per-user pandas loop, straight from the definitions (the oracle)."""
    frame = data.to_frame(original_ids=False)
    a = data.aspects.tocoo()
    pairs = pd.DataFrame({"item": a.row, "aspect": a.col})
    long = frame.merge(pairs, on="item")
    long["rating"] = long["rating"].astype(float)
    community = long.groupby("aspect")["rating"].sum()
    community = community / community.sum()
    out = {}
    for user, rows in long.groupby("user"):
        n_items = rows["item"].nunique()
        total = 0.0
        user_sum = rows["rating"].sum()
        for aspect, ua in rows.groupby("aspect"):
            r = ua["rating"].to_numpy(dtype=float)
            sd = float(np.std(r, ddof=1)) if len(r) > 1 else 0.0
            p = r.sum() / user_sum if user_sum > 0 else math.nan
            g = {
                "entropy": p * math.log(p) if p > 0 else 0.0,
                "kld": p * math.log(p / community[aspect]) if p > 0 else 0.0,
                "mean": r.mean(),
                "wmean": r.mean() * len(r) / n_items,
                "std": sd,
                "wstd": sd * len(r) / n_items,
                "size": float(len(r)),
            }[gamma]
            total += g
        if gamma in ("entropy", "kld") and user_sum == 0:
            continue
        out[user] = -total
    return out


@st.composite
def random_data(draw):
    n_users = draw(st.integers(1, 8))
    n_items = draw(st.integers(1, 10))
    n_aspects = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, 40))
    users = rng.integers(0, n_users, n)
    items = rng.integers(0, n_items, n)
    step = draw(st.sampled_from([1.0, 0.5, None]))
    ratings = rng.integers(0, 11, n) / 2 if step != 1.0 else rng.integers(0, 6, n).astype(float)
    if step is None:
        ratings = np.round(rng.uniform(0, 5, n), 4)
    data = Interactions.from_arrays(users, items, ratings, scale=RatingScale(0, 5, step)).deduplicate("last")
    # random item-attribute table; some items get none
    mask = rng.random((data.n_items, n_aspects)) < 0.45
    rows, cols = np.nonzero(mask)
    table = pd.DataFrame({"item": data.item_ids[rows], "aspect": [f"g{c}" for c in cols]})
    if table.empty:
        table = pd.DataFrame({"item": [data.item_ids[0]], "aspect": ["g0"]})
    return data.with_aspects(table)


@settings(max_examples=60, deadline=None)
@given(random_data(), st.sampled_from(GAMMAS))
def test_vectorised_equals_naive_loop(data, gamma):
    res = coherence(data, gamma)
    expected = naive(data, gamma)
    got = {int(u): float(v) for u, v in zip(np.flatnonzero(res.defined), res.values[res.defined], strict=True)}
    assert got.keys() == expected.keys()
    for u, v in expected.items():
        assert got[u] == pytest.approx(v, rel=1e-9, abs=1e-9)
    assert np.isnan(res.values[~res.defined]).all()


def test_single_ratings_and_items_without_attributes():
    ratings = pd.DataFrame(
        {"user": ["x", "x", "x", "y", "z"], "item": ["i1", "i2", "i3", "i3", "i1"], "rating": [5, 1, 3, 4, 2]}
    )
    genres = pd.DataFrame({"item": ["i1", "i2"], "aspect": ["A", "B"]})  # i3 has no genre
    data = Interactions.from_frame(ratings, item_aspects=genres)
    res = coherence(data, "wstd")
    # x: one rating in A and one in B -> sigma of a single rating counts as 0
    assert res.values[0] == 0.0 and res.n_multi[0] == 0
    # y only rated an item without attributes: undefined (NaN), counted, not averaged
    assert not res.defined[1] and np.isnan(res.values[1])
    assert res.n_attributed.tolist() == [2, 0, 1]
    assert res.n_unattributed == 2
    summary = res.summary()
    assert summary["n_users"] == 2 and summary["n_undefined"] == 1
    assert summary["mean"] == 0.0 and not math.isnan(summary["mean"])
    assert list(res.to_series().index) == ["x", "z"]


def test_duplicates_are_reduced_first():
    ratings = pd.DataFrame({"user": [0, 0, 0, 0], "item": [0, 0, 1, 2], "rating": [1, 5, 3, 4]})
    genres = pd.DataFrame({"item": [0, 1, 2], "aspect": ["A", "A", "A"]})
    data = Interactions.from_frame(ratings, item_aspects=genres)
    last = coherence(data, "std", keep="last").values[0]
    first = coherence(data, "std", keep="first").values[0]
    assert last == pytest.approx(-np.std([5, 3, 4], ddof=1))
    assert first == pytest.approx(-np.std([1, 3, 4], ddof=1))


def test_errors():
    data = Interactions.from_arrays([0, 1], [0, 1], [1, 2])
    with pytest.raises(DataError, match="attributes"):
        coherence(data)
    with pytest.raises(DataError, match="gamma"):
        coherence(worked_example(), "variance")
    neg = Interactions.from_frame(
        pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": [-2, 3]}),
        item_aspects=pd.DataFrame({"item": [0, 1], "aspect": ["A", "A"]}),
    )
    with pytest.raises(DataError, match=">= 0"):
        coherence(neg, "entropy")
    assert coherence(neg, "std").values[0] == pytest.approx(-np.std([-2, 3], ddof=1))
