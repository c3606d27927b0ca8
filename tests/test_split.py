import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import Interactions
from receval.data.synthetic import generate
from receval.errors import ConfigError, DataError
from receval.split import (
    holdout,
    kfold_per_user,
    leave_one_out,
    per_user_holdout,
    temporal,
    train_validation_test,
)


def tagged(data: Interactions) -> Interactions:
    """The data with a per-row id column, to trace rows through a split."""
    from dataclasses import replace

    return replace(data, extra={**data.extra, "row": np.arange(data.n_ratings)})


def pair_keys(d: Interactions) -> np.ndarray:
    return d.users.astype(np.int64) * d.n_items + d.items


def assert_partition(data: Interactions, parts: list[Interactions]) -> None:
    rows = np.concatenate([p.extra["row"] for p in parts])
    assert np.array_equal(np.sort(rows), np.arange(data.n_ratings))  # nothing lost or duplicated
    for p in parts:
        assert p.n_users == data.n_users and p.n_items == data.n_items
        assert p.scale == data.scale and (p.aspects != data.aspects).nnz == 0
        r = p.extra["row"]
        assert np.array_equal(p.ratings, data.ratings[r]) and np.array_equal(p.items, data.items[r])
    # repeated ratings of a pair never straddle two parts
    seen = [set(pair_keys(p).tolist()) for p in parts]
    for a in range(len(seen)):
        for b in range(a + 1, len(seen)):
            assert not seen[a] & seen[b]


@pytest.fixture(scope="module")
def data() -> Interactions:
    return tagged(generate(120, 80, 3000, seed=0))


@pytest.fixture(scope="module")
def rerated() -> Interactions:
    return tagged(generate(60, 50, 800, reratings=3, seed=1))


@settings(max_examples=20, deadline=None)
@given(
    n_users=st.integers(1, 12),
    n_items=st.integers(1, 12),
    fill=st.floats(0.05, 1.0),
    reratings=st.integers(1, 3),
    fraction=st.floats(0.01, 0.99),
    k=st.integers(2, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_split_partitions_rows(n_users, n_items, fill, reratings, fraction, k, seed):
    n = max(1, round(fill * n_users * n_items))
    d = tagged(generate(n_users, n_items, n, reratings=reratings, n_aspects=3, seed=seed))
    for tr, te in (
        holdout(d, fraction, seed=seed),
        per_user_holdout(d, fraction, seed=seed),
        temporal(d, fraction, seed=seed),
        temporal(d, fraction, per_user=True, seed=seed),
        leave_one_out(d, "last", seed=seed),
        leave_one_out(d, "random", seed=seed),
    ):
        assert_partition(d, [tr, te])
    folds = kfold_per_user(d, k=k, seed=seed)
    assert len(folds) == k
    assert_partition(d, [te for _, te in folds])
    for tr, te in folds:
        assert_partition(d, [tr, te])
    if fraction < 0.5:
        assert_partition(d, list(train_validation_test(d, fraction / 2, fraction, seed=seed)))


def test_holdout_counts_and_seed(data, rerated):
    tr, te = holdout(data, 0.2, seed=3)
    assert (len(tr), len(te)) == (2400, 600)
    _, te2 = holdout(data, 0.2, seed=3)
    assert np.array_equal(te.extra["row"], te2.extra["row"])
    assert not np.array_equal(te.extra["row"], holdout(data, 0.2, seed=4)[1].extra["row"])
    tr, te = holdout(rerated, 0.25, seed=0)
    assert (len(tr), len(te)) == (600 * 3, 200 * 3)
    assert_partition(rerated, [tr, te])
    # the split is uniform over pairs: test users are spread like all users
    assert len(np.unique(te.users)) > 50


def test_per_user_holdout(data):
    _, te = per_user_holdout(data, 0.3, seed=0)
    n = np.bincount(data.users, minlength=data.n_users)
    nt = np.bincount(te.users, minlength=data.n_users)
    assert np.array_equal(nt, np.minimum(np.floor(0.3 * n + 0.5), n - 1))
    small = tagged(Interactions.from_arrays([0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2], [1, 2, 3, 4, 5, 1]))
    _, te = per_user_holdout(small, 0.5, seed=0, min_train=1)
    assert np.bincount(te.users, minlength=3).tolist() == [0, 1, 2]  # user 0 keeps its single rating
    _, te = per_user_holdout(small, 0.5, seed=0, min_train=0)
    assert np.bincount(te.users, minlength=3).tolist() == [1, 1, 2]


def test_temporal_respects_time(data):
    tr, te = temporal(data, 0.25)
    assert tr.timestamps.max() <= te.timestamps.min()
    assert len(te) == 750
    tr, te = temporal(data, 0.25, per_user=True)
    for u in range(data.n_users):
        a, b = tr.timestamps[tr.users == u], te.timestamps[te.users == u]
        if len(a) and len(b):
            assert a.max() <= b.min()
    n = np.bincount(data.users, minlength=data.n_users)
    assert np.array_equal(np.bincount(te.users, minlength=data.n_users), np.minimum(np.floor(0.25 * n + 0.5), n - 1))


def test_temporal_ties_broken_by_seed():
    d = tagged(Interactions.from_arrays([0, 1, 2, 3], [0, 0, 0, 0], [1, 2, 3, 4], timestamps=[5, 5, 5, 5]))
    picks = {int(temporal(d, 0.25, seed=s)[1].extra["row"][0]) for s in range(30)}
    assert len(picks) > 1


def test_temporal_uses_first_rating_of_pair():
    # pair (0, 0) rated at t=1 and t=100 stays in training with its first time
    d = tagged(Interactions.from_arrays([0, 0, 0, 0], [0, 0, 1, 2], [1, 2, 3, 4], timestamps=[1, 100, 50, 60]))
    tr, te = temporal(d, 1 / 3)
    assert te.extra["row"].tolist() == [3]
    assert sorted(tr.extra["row"].tolist()) == [0, 1, 2]


def test_leave_one_out(data):
    tr, te = leave_one_out(data, "last")
    assert np.array_equal(np.bincount(te.users, minlength=data.n_users), np.ones(data.n_users))
    for u in range(0, data.n_users, 7):
        assert te.timestamps[te.users == u][0] >= tr.timestamps[tr.users == u].max()
    tr, te = leave_one_out(data, "random", seed=1)
    assert len(te) == data.n_users
    later = np.mean([te.timestamps[te.users == u][0] >= tr.timestamps[tr.users == u].max() for u in range(120)])
    assert later < 0.5  # a random pair is rarely the latest one
    single = tagged(Interactions.from_arrays([0, 1, 1], [0, 0, 1], [1, 2, 3], timestamps=[1, 2, 3]))
    tr, te = leave_one_out(single, "last")
    assert te.extra["row"].tolist() == [2] and sorted(tr.extra["row"].tolist()) == [0, 1]


def test_kfold_per_user_balanced(data):
    folds = kfold_per_user(data, k=5, seed=0)
    n = np.bincount(data.users, minlength=data.n_users)
    sizes = []
    for _, te in folds:
        nt = np.bincount(te.users, minlength=data.n_users)
        assert np.all((nt == n // 5) | (nt == -(-n // 5)))  # ~1/k of every user's ratings
        sizes.append(len(te))
    assert max(sizes) - min(sizes) <= 1
    again = kfold_per_user(data, k=5, seed=0)
    assert all(np.array_equal(a[1].extra["row"], b[1].extra["row"]) for a, b in zip(folds, again, strict=True))


def test_kfold_small_users_policy():
    d = tagged(Interactions.from_arrays([0, 0, 1, 1, 1, 1, 1, 1], [0, 1, 0, 1, 2, 3, 4, 5], [1] * 8))
    folds = kfold_per_user(d, k=3, seed=0)
    tested0 = [int((te.users == 0).sum()) for _, te in folds]
    assert sorted(tested0) == [0, 1, 1]  # 2 pairs: tested in two folds, training-only in one
    tested1 = [int((te.users == 1).sum()) for _, te in folds]
    assert tested1 == [2, 2, 2]


def test_train_validation_test(data):
    tr, va, te = train_validation_test(data, 0.1, 0.2, seed=0)
    assert (len(tr), len(va), len(te)) == (2100, 300, 600)
    assert_partition(data, [tr, va, te])
    tr, va, te = train_validation_test(data, 0.1, 0.2, method="temporal")
    assert tr.timestamps.max() <= va.timestamps.min() and va.timestamps.max() <= te.timestamps.min()
    tr, va, te = train_validation_test(data, 0.1, 0.2, method="per_user", seed=0)
    assert_partition(data, [tr, va, te])
    assert len(np.unique(va.users)) == data.n_users


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5, float("nan"), "0.2"])
def test_bad_fractions(data, fraction):
    for fn in (holdout, per_user_holdout, temporal):
        with pytest.raises(ConfigError, match="strictly between 0 and 1"):
            fn(data, fraction)


def test_bad_input(data):
    with pytest.raises(ConfigError, match="k must be"):
        kfold_per_user(data, k=1)
    with pytest.raises(ConfigError, match="mode"):
        leave_one_out(data, "first")
    with pytest.raises(ConfigError, match="leaves no training"):
        train_validation_test(data, 0.5, 0.5)
    with pytest.raises(ConfigError, match="method"):
        train_validation_test(data, 0.1, 0.2, method="kfold")
    with pytest.raises(ConfigError, match="min_train"):
        per_user_holdout(data, 0.2, min_train=-1)
    empty = data.subset(np.zeros(data.n_ratings, dtype=bool))
    with pytest.raises(DataError, match="no ratings"):
        holdout(empty)
    untimed = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [1, 2, 3])
    with pytest.raises(DataError, match="no timestamps"):
        temporal(untimed)
    with pytest.raises(DataError, match="no timestamps"):
        leave_one_out(untimed, "last")
    assert len(leave_one_out(untimed, "random")[1]) == 1


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9), st.integers(-5, 5)), min_size=1, max_size=60),
    st.booleans(),
)
def test_rows_grouped_by_numpy_as_by_the_compiled_loop(rows, timed):
    """Small data sets are grouped without numba: the same group numbers, users and first times."""
    from receval.split import _group_rows, _group_rows_numpy

    users = np.array([u for u, _, _ in rows], dtype=np.int32)
    items = np.array([i for _, i, _ in rows], dtype=np.int32)
    times = np.array([t for _, _, t in rows], dtype=np.int64) if timed else np.empty(0, dtype=np.int64)
    compiled = _group_rows(users, items, times, 7, 10)
    for ours, theirs in zip(_group_rows_numpy(users, items, times, 7, 10), compiled, strict=True):
        np.testing.assert_array_equal(ours, theirs)
