"""Candidate sets (receval.evaluation.candidates): negatives drawn once, seeded, excluding the user's own items,
with the distribution each scheme promises, stored and read back, and refused when they do not fit the split."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.evaluation.candidates import Candidates, check_candidates, draw_candidates


def _split(rows: list[tuple[str, str]], test_rows: list[tuple[str, str]]) -> tuple[Interactions, Interactions]:
    data = Interactions.from_arrays(
        [u for u, _ in rows + test_rows], [i for _, i in rows + test_rows], [1] * (len(rows) + len(test_rows))
    )
    in_test = np.arange(data.n_ratings) >= len(rows)
    return data.subset(~in_test), data.subset(in_test)


def _random_split(seed: int = 0, n_users: int = 60, n_items: int = 80, per_user: int = 12):
    rng = np.random.default_rng(seed)
    rows = [(f"u{u}", f"i{i}") for u in range(n_users) for i in rng.choice(n_items, per_user, replace=False)]
    # the last three of each user's items are held out
    train = [r for k, r in enumerate(rows) if k % per_user < per_user - 3]
    test = [r for k, r in enumerate(rows) if k % per_user >= per_user - 3]
    return _split(train, test)


def _owned(train: Interactions, test: Interactions) -> set[tuple[int, int]]:
    users = np.concatenate([train.users, test.users]).tolist()
    return set(zip(users, np.concatenate([train.items, test.items]).tolist(), strict=True))


@pytest.mark.parametrize("sampling", ["uniform", "popularity"])
@pytest.mark.parametrize("shape", ["per-item", "per-user"])
def test_negatives_are_distinct_and_never_the_users_own_items(sampling: str, shape: str) -> None:
    train, test = _random_split()
    c = draw_candidates(train, test, n=30, sampling=sampling, shape=shape, seed=5)
    owned = _owned(train, test)
    for user, row in zip(c.users.tolist(), c.negatives.tolist(), strict=True):
        assert len(set(row)) == 30
        assert not any((user, item) in owned for item in row)
    pairs = sorted(set(zip(test.users.tolist(), test.items.tolist(), strict=True)))
    if shape == "per-item":
        assert list(zip(c.users.tolist(), c.items.tolist(), strict=True)) == pairs
    else:
        assert c.items is None and c.users.tolist() == sorted({u for u, _ in pairs})
    assert c.design == {"sampling": sampling, "n": 30, "exponent": 1.0 if sampling == "popularity" else 0.0,
                        "seed": 5, "shape": shape, "exclude": "train+test"}  # fmt: skip
    check_candidates(c, train, test, where="drawn")


def test_popularity_never_draws_an_item_without_training_ratings() -> None:
    train, test = _random_split(seed=2)
    c = draw_candidates(train, test, n=20, sampling="popularity", seed=1)
    rated = set(train.items.tolist())
    assert set(c.negatives.ravel().tolist()) <= rated


def test_same_seed_same_bits_another_seed_another_sample() -> None:
    train, test = _random_split(seed=3)
    a = draw_candidates(train, test, n=25, sampling="popularity", exponent=0.5, seed=11)
    b = draw_candidates(train, test, n=25, sampling="popularity", exponent=0.5, seed=11)
    c = draw_candidates(train, test, n=25, sampling="popularity", exponent=0.5, seed=12)
    assert a.negatives.tobytes() == b.negatives.tobytes()
    assert a.negatives.tobytes() != c.negatives.tobytes()


def _many_alike(n_users: int, n_items: int, train_item: int, counts: list[int] | None = None):
    """n_users users, each with item 0 in training (train_item) and item 1 in test; optional extra training
    raters give the items popularity counts."""
    rows = [(f"u{u:04d}", f"i{train_item}") for u in range(n_users)]
    test = [(f"u{u:04d}", "i1") for u in range(n_users)]
    for item, count in enumerate(counts or []):
        rows += [(f"p{item}_{j}", f"i{item}") for j in range(count)]
    return _split(rows, test)


def test_uniform_draws_every_subset_equally_often() -> None:
    # items i2..i7 are open to each user: all 20 subsets of 3 equally likely (sampling without replacement)
    train, test = _many_alike(4000, 8, 0, counts=[0, 0, 1, 1, 1, 1, 1, 1])
    c = draw_candidates(train, test, n=3, seed=0)
    c = _only(c, test, prefix="u")
    names = test.item_ids[c.negatives]
    observed = pd.Series([tuple(sorted(r)) for r in names.tolist()]).value_counts()
    assert set(observed.index) == {tuple(s) for s in itertools.combinations([f"i{j}" for j in range(2, 8)], 3)}
    assert stats.chisquare(observed.to_numpy()).pvalue > 1e-4


def _only(c: Candidates, test: Interactions, prefix: str) -> Candidates:
    keep = np.char.startswith(test.user_ids[c.users].astype(str), prefix)
    return Candidates(c.users[keep], None if c.items is None else c.items[keep], c.negatives[keep], c.design)


def test_popularity_is_successive_sampling_in_proportion_to_count_power() -> None:
    counts = [0, 0, 1, 2, 4, 8]  # training counts of items i2..i5 (the raters are other users)
    train, test = _many_alike(6000, 6, 0, counts=counts)
    exponent = 0.7
    c = _only(draw_candidates(train, test, n=2, sampling="popularity", exponent=exponent, seed=4), test, "u")
    first, second = test.item_ids[c.negatives[:, 0]], test.item_ids[c.negatives[:, 1]]
    # "u" users rated i0 (train, count 6000 + 0) and i1 (test): open items i2..i5 with weights count ** exponent
    w = {f"i{j}": counts[j] ** exponent for j in range(2, 6)}
    total = sum(w.values())
    names = sorted(w)
    observed_first = pd.Series(first).value_counts().reindex(names).to_numpy()
    assert stats.chisquare(observed_first, np.array([w[i] / total for i in names]) * len(first)).pvalue > 1e-4
    # the second draw, given the first: P(j | i) = w_j / (W - w_i)
    pairs = pd.Series(list(zip(first.tolist(), second.tolist(), strict=True))).value_counts()
    expected = {(i, j): w[i] / total * w[j] / (total - w[i]) * len(first) for i in names for j in names if i != j}
    keys = sorted(expected)
    assert stats.chisquare(pairs.reindex(keys).fillna(0).to_numpy(), [expected[k] for k in keys]).pvalue > 1e-4


def test_a_user_with_few_open_items_left_still_gets_an_exact_draw() -> None:
    # one user has rated every popular item: the weight left to it is tiny, so the stream rounds fall short and
    # the row is drawn on its own; its negatives are the only items left
    counts = [50] * 40 + [1, 1, 1]
    rows = [(f"p{j}_{k}", f"i{j}") for j, count in enumerate(counts) for k in range(count)]
    rows += [("hungry", f"i{j}") for j in range(39)]
    train, test = _split(rows, [("hungry", "i39")])
    c = draw_candidates(train, test, n=3, sampling="popularity", exponent=3.0, seed=0)
    row = int(np.flatnonzero(test.user_ids[c.users] == "hungry")[0])
    assert sorted(test.item_ids[c.negatives[row]].tolist()) == ["i40", "i41", "i42"]


def test_a_large_draw_is_vectorised_and_valid() -> None:
    train, test = _random_split(seed=9, n_users=3000, n_items=2000, per_user=40)
    c = draw_candidates(train, test, n=100, seed=2)
    assert c.negatives.shape == (9000, 100)
    check_candidates(c, train, test, where="drawn")
    sorted_rows = np.sort(c.negatives, axis=1)
    assert (np.diff(sorted_rows, axis=1) > 0).all()


# ------------------------------------------------------------------ stored and read back
@pytest.mark.parametrize("shape", ["per-item", "per-user"])
def test_the_candidate_table_round_trips_through_original_ids(shape: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    train, test = _random_split(seed=4)
    c = draw_candidates(train, test, n=7, shape=shape, seed=3)
    frame = c.to_frame()
    assert len(frame) == len(c.users) * 7
    assert list(frame.columns) == (["user", "item", "negative"] if shape == "per-item" else ["user", "negative"])
    assert frame["user"].iloc[0] == test.user_ids[c.users[0]]
    path = tmp_path / "candidates.csv"
    frame.to_csv(path, index=False)
    back = Candidates.from_frame(pd.read_csv(path), test, design={"seed": 3})
    assert np.array_equal(back.users, c.users) and np.array_equal(back.negatives, c.negatives)
    assert (back.items is None) == (c.items is None) and (c.items is None or np.array_equal(back.items, c.items))
    assert back.design["shape"] == shape and back.design["n"] == 7 and back.design["seed"] == 3
    same = Candidates.from_frame(frame, test)  # the design travels in attrs when the frame itself is kept
    assert same.design == c.design


def test_a_table_naming_an_unknown_item_is_refused_with_its_line() -> None:
    _, test = _split([("u", "a"), ("v", "b")], [("u", "c"), ("v", "a")])
    frame = pd.DataFrame({"user": ["u", "u", "v"], "item": ["c", "c", "a"], "negative": ["b", "zz", "c"]})
    with pytest.raises(DataError, match=r"line 2: negative 'zz' is not in the data"):
        Candidates.from_frame(frame, test)


def test_rows_with_unequal_numbers_of_negatives_are_refused() -> None:
    _, test = _split([("u", "a"), ("v", "b")], [("u", "c"), ("v", "a")])
    frame = pd.DataFrame({"user": ["u", "u", "v"], "item": ["c", "c", "a"], "negative": ["b", "a", "c"]})
    with pytest.raises(DataError, match="user 'v' has 1 negatives, the first row 2"):
        Candidates.from_frame(frame, test)


# ------------------------------------------------------------------ refused
def test_check_names_the_file_line_user_and_item() -> None:
    train, test = _split([("u", "a"), ("v", "b")], [("u", "c"), ("v", "a")])
    items = {name: i for i, name in enumerate(test.item_ids.tolist())}
    users = {name: i for i, name in enumerate(test.user_ids.tolist())}
    ok = Candidates([users["u"], users["v"]], [items["c"], items["a"]], [[items["b"]], [items["c"]]])
    check_candidates(ok, train, test, where="x.test.negative")
    training = Candidates(ok.users, ok.items, [[items["b"]], [items["b"]]])
    with pytest.raises(DataError, match=r"^x\.test\.negative, line 2: negative 'b' of user 'v' is one of the user's "
                                        r"training items"):  # fmt: skip
        check_candidates(training, train, test, where="x.test.negative")
    positive = Candidates(ok.users, ok.items, [[items["c"]], [items["c"]]])
    with pytest.raises(DataError, match=r"line 8: negative 'c' of user 'u' is one of the user's test items"):
        check_candidates(positive, train, test, where="f", lines=np.array([8, 9]))
    not_held = Candidates(ok.users, [items["b"], items["a"]], ok.negatives)
    with pytest.raises(DataError, match="item 'b' is not a test item of user 'u'"):
        check_candidates(not_held, train, test, where="f")
    unknown = Candidates(ok.users, ok.items, [[items["b"]], [99]])
    with pytest.raises(DataError, match="line 2: negative index outside"):
        check_candidates(unknown, train, test, where="f")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "n=0: give an integer of at least 1"),
        ({"n": 2}, "user 'u' has 1 items outside their training and test items to draw negatives from; n=2 is larger"),
        ({"n": 2, "sampling": "popularity"}, r"user 'u' has 1 items rated in training outside .* \(and 1 more users\)"),
        ({"sampling": "pop"}, "sampling='pop' is not known; use one of uniform, popularity"),
        ({"shape": "per_row"}, "shape='per_row' is not known"),
        ({"exponent": -1, "sampling": "popularity"}, "exponent=-1"),
        ({"seed": -3}, "seed=-3"),
    ],
)
def test_bad_draws_are_one_line_errors(kwargs: dict, message: str) -> None:
    # items a, b, c, d: u rated a, b (train) and c (test), d is left; v rated a and d (test), b and c are left;
    # rated in training: a, b, d, so by popularity u has d alone and v has b alone
    train, test = _split([("u", "a"), ("u", "b"), ("v", "a"), ("w", "d")], [("u", "c"), ("v", "d")])
    with pytest.raises(ConfigError, match=message) as err:
        draw_candidates(train, test, **{"n": 1, **kwargs})
    assert "\n" not in str(err.value)


def test_train_and_test_of_two_id_spaces_are_refused() -> None:
    train, _ = _split([("u", "a")], [("u", "b")])
    _, test = _split([("u", "a")], [("u", "c"), ("v", "d")])
    with pytest.raises(DataError, match="not over one id space"):
        draw_candidates(train, test, n=1)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 14)), min_size=2, max_size=40, unique=True),
    st.integers(1, 14),
    st.sampled_from(["uniform", "popularity"]),
    st.sampled_from(["per-item", "per-user"]),
    st.integers(0, 2**32 - 1),
)
def test_any_split_gets_valid_negatives_or_a_one_line_refusal(pairs, n, sampling, shape, seed) -> None:  # type: ignore[no-untyped-def]
    rows = [(f"u{u}", f"i{i}") for u, i in pairs]
    train, test = _split(rows[::2], rows[1::2])
    owned = _owned(train, test)
    drawable = set(range(len(test.item_ids))) if sampling == "uniform" else set(train.items.tolist())
    open_items = {u: {i for i in drawable if (u, i) not in owned} for u in set(test.users.tolist())}
    if n > min(len(v) for v in open_items.values()):
        with pytest.raises(ConfigError, match="is larger: use a smaller n") as err:
            draw_candidates(train, test, n=n, sampling=sampling, shape=shape, seed=seed)
        assert "\n" not in str(err.value)
        return
    c = draw_candidates(train, test, n=n, sampling=sampling, shape=shape, seed=seed)
    for user, row in zip(c.users.tolist(), c.negatives.tolist(), strict=True):
        assert len(set(row)) == n and set(row) <= open_items[user]
