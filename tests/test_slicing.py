"""Slicing per-user tables by user, item and time dimension; statistics per slice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from receval import Interactions
from receval.errors import DataError
from receval.studies.slicing import (
    compare_slices,
    evaluate_slices,
    item_groups,
    slice_summary,
    slice_table,
    time_groups,
    user_groups,
)


def _data(seed: int = 0, n: int = 2000) -> Interactions:
    rng = np.random.default_rng(seed)
    users = rng.integers(0, 80, n)
    items = (rng.pareto(1.0, n) * 5).astype(int) % 60
    ts = rng.integers(1_500_000_000, 1_600_000_000, n)
    return Interactions.from_arrays(users, items, rng.integers(1, 6, n), timestamps=ts).deduplicate()


def _halves(data: Interactions) -> tuple[Interactions, Interactions]:
    mask = np.random.default_rng(1).random(data.n_ratings) < 0.8
    return data.subset(mask), data.subset(~mask)


def test_user_and_item_groups_partition() -> None:
    train, test = _halves(_data())
    act = user_groups("activity", train, test)
    assert len(act) == 4
    stacked = np.vstack(list(act.values()))
    assert stacked.sum(axis=0).max() == 1  # disjoint
    sizes = stacked.sum(axis=1)
    assert sizes.max() - sizes.min() <= 1  # equal-size bins
    counts = np.bincount(train.users, minlength=train.n_users)
    means = [counts[m].mean() for m in act.values()]
    assert means == sorted(means)  # q1 holds the lightest users
    pop = item_groups("popularity", train, test)
    covered = np.vstack(list(pop.values())).sum(axis=0)
    assert np.all(covered == 1)  # every item in exactly one group ("unseen" included)
    new = user_groups("new_returning", train, test)
    assert not np.any(new["new"] & new["returning"])


def test_time_groups_from_known_timestamps() -> None:
    # 2021-01-02 is a Saturday, 2021-07-05 a Monday; 03:00 and 15:00 UTC
    stamps = pd.to_datetime(["2021-01-02 03:00", "2021-07-05 15:00", "2021-10-10 20:00"], utc=True)
    t = Interactions.from_arrays(
        [0, 0, 1], [0, 1, 1], [5, 4, 3], timestamps=(stamps - pd.Timestamp(0, tz="UTC")) // pd.Timedelta("1s")
    )
    assert time_groups("weekday", t)["weekend"].tolist() == [True, False, True]
    season = time_groups("season", t)
    assert season["winter"].tolist() == [True, False, False] and season["autumn"].tolist() == [False, False, True]
    hour = time_groups("hour", t)
    assert hour["night 0-5"].tolist() == [True, False, False] and hour["evening 18-23"].tolist() == [False, False, True]
    with pytest.raises(DataError, match="needs timestamps"):
        time_groups("weekday", Interactions.from_arrays([0], [0], [1]))


def test_evaluate_slices_restricts_the_truth() -> None:
    train, test = _halves(_data(2))

    def evaluate(truth: Interactions) -> pd.DataFrame:  # per-user number of truth rows
        counts = np.bincount(truth.users, minlength=truth.n_users).astype(float)
        counts[counts == 0] = np.nan
        return pd.DataFrame({"n_truth": counts})

    table = evaluate_slices(evaluate, train, test, {"user": ["activity"], "item": ["popularity"], "time": ["season"]})
    total = len(test)
    for dim in ("item", "time"):
        assert table.loc[table["dimension"] == dim, "value"].sum() == total  # disjoint groups split the truth
    users = table[table["dimension"] == "user"]
    assert users["value"].sum() == total and users["user_index"].is_unique
    summary = slice_summary(table, n_resamples=200)
    assert set(summary["dimension"]) == {"user", "item", "time"} and (summary["n"] > 0).all()


def test_quantile_groups_carry_their_ranges() -> None:
    train, test = _halves(_data(3))

    def evaluate(truth: Interactions) -> pd.DataFrame:
        counts = np.bincount(truth.users, minlength=truth.n_users).astype(float)
        counts[counts == 0] = np.nan
        return pd.DataFrame({"n_truth": counts})

    table = evaluate_slices(evaluate, train, test, {"user": ["activity"], "item": ["popularity"], "time": ["season"]})
    activity = np.bincount(train.users, minlength=train.n_users)
    for label, mask in user_groups("activity", train, test).items():  # ranges by hand: min/max training profile
        rows = table[(table["slice"] == "activity") & (table["group"] == label)]
        assert (rows["low"] == activity[mask].min()).all() and (rows["high"] == activity[mask].max()).all()
    popularity = table[table["slice"] == "popularity"]
    assert popularity.loc[popularity["group"] == "unseen", ["low", "high"]].isna().all().all()
    low_of, high_of = popularity.groupby("group")["low"].min(), popularity.groupby("group")["high"].max()
    assert low_of["q4"] >= high_of["q1"]  # the groups are cut on training counts, lowest first
    assert table.loc[table["dimension"] == "time", ["low", "high"]].isna().all().all()


def test_slice_table_and_compare_slices() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for system, shift in (("a", 0.0), ("b", 0.2)):
        for u in range(100):
            rows.append({"system": system, "user_index": u, "metric": "m", "value": rng.normal(u / 100 + shift, 0.05)})
    per_user = pd.DataFrame(rows)
    groups = {"low": np.arange(100) < 50, "high": np.arange(100) >= 50}
    sliced = slice_table(per_user, groups).assign(dimension="user", slice="toy")
    assert len(sliced) == 200
    cmp = compare_slices(sliced, baseline="a", test="ttest")
    assert set(cmp["group"]) == {"low", "high"}
    assert (cmp["diff"] > 0.15).all() and (cmp["pvalue_adj"] < 1e-6).all()


def test_demographic_groups_on_ml100k(ml100k_dir) -> None:
    from receval.data import load, load_user_features

    data = load(ml100k_dir, "movielens-100k")
    feats = load_user_features(ml100k_dir, "movielens-100k")
    gender = user_groups("gender", data, data, user_features=feats)
    assert set(gender) == {"F", "M"} and int(gender["F"].sum() + gender["M"].sum()) == 943
    age = user_groups("age", data, data, user_features=feats)
    assert sum(int(m.sum()) for m in age.values()) == 943 and "25-34" in age
    assert int(np.count_nonzero(np.vstack(list(item_groups("aspect", data, data).values())).sum(0))) >= 1681


def test_age_groups_come_in_age_order() -> None:
    data = Interactions.from_frame(pd.DataFrame({"user": ["a", "b", "c", "d"], "item": ["x"] * 4, "rating": 4.0}))
    feats = pd.DataFrame({"user": ["a", "b", "c", "d"], "age": [60, 12, 30, 19]})
    assert list(user_groups("age", data, data, user_features=feats)) == ["<18", "18-24", "25-34", "56+"]
