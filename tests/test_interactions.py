import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import Interactions, RatingScale
from receval.data.interactions import distinct, pair_keys
from receval.errors import DataError


def test_from_frame_ids_and_csr():
    df = pd.DataFrame({"user": ["b", "a", "a"], "item": [3, 1, 3], "rating": [1.0, 5.0, 2.5]})
    d = Interactions.from_frame(df, scale=RatingScale(0.5, 5, 0.5))
    assert d.user_ids.tolist() == ["a", "b"]
    assert d.item_ids.tolist() == [1, 3]
    m = d.to_csr().toarray()
    assert m.tolist() == [[5.0, 2.5], [0.0, 1.0]]
    back = d.to_frame()
    assert back.sort_values(["user", "item"])["rating"].tolist() == [5.0, 2.5, 1.0]


def test_rating_outside_scale_names_ids():
    df = pd.DataFrame({"user": ["u1"], "item": ["i9"], "rating": [7]})
    with pytest.raises(DataError, match=r"rating 7 of user 'u1', item 'i9' is outside"):
        Interactions.from_frame(df, scale=RatingScale(1, 5, 1))


def test_non_numeric_rating_and_missing_column():
    with pytest.raises(DataError, match="not a number"):
        Interactions.from_frame(pd.DataFrame({"user": [1], "item": [1], "rating": ["x"]}))
    with pytest.raises(DataError, match="missing column"):
        Interactions.from_frame(pd.DataFrame({"user": [1], "item": [1]}))


def test_duplicates_kept_and_deduplicated():
    d = Interactions.from_arrays([0, 0, 0, 1], [0, 0, 1, 0], [1, 3, 4, 5], timestamps=[5, 1, 2, 3])
    assert d.n_ratings == 4 and d.n_duplicates == 1
    with pytest.raises(DataError, match="deduplicate"):
        d.to_csr()
    last = d.deduplicate("last").to_csr().toarray()
    assert last[0, 0] == 1  # timestamp 5 is the latest
    first = d.deduplicate("first").to_csr().toarray()
    assert first[0, 0] == 3
    mean = d.deduplicate("mean").to_csr().toarray()
    assert mean[0, 0] == 2


def test_subset_keeps_id_space_and_binarize():
    d = Interactions.from_arrays([0, 1, 2], [0, 1, 2], [5, 1, 4])
    s = d.subset(np.array([True, False, False]))
    assert s.n_users == 3 and s.n_items == 3 and s.n_ratings == 1
    assert d.binarize(4).ratings.tolist() == [1, 0, 1]
    with pytest.raises(DataError, match="outside the rating scale"):
        d.binarize(9)


def test_aspects_table():
    d = Interactions.from_arrays([0, 0], ["x", "y"], [4, 5])
    d = d.with_aspects(pd.DataFrame({"item": ["x", "x", "y"], "aspect": ["Drama", "Comedy", "Drama"]}))
    assert d.aspect_names.tolist() == ["Comedy", "Drama"]
    assert d.aspects.toarray().tolist() == [[1, 1], [0, 1]]
    with pytest.raises(DataError, match="'z' is not in"):
        d.with_aspects(pd.DataFrame({"item": ["z"], "aspect": ["Drama"]}))


@given(st.lists(st.integers(-(2**62), 2**62), max_size=200))
def test_distinct_equals_numpy_unique(values):
    arr = np.array(values, dtype=np.int64)
    assert np.array_equal(distinct(arr), np.unique(arr))


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 6)), max_size=60))
def test_pair_keys_equal_exactly_when_pairs_do(pairs):
    users = np.array([u for u, _ in pairs], dtype=np.int32)
    items = np.array([i for _, i in pairs], dtype=np.int32)
    assert len(distinct(pair_keys(users, items, 7))) == len(set(pairs))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-2, 12, allow_nan=False).map(lambda v: round(v * 2) / 2 if v > 5 else v), max_size=40),
    st.sampled_from([(1, 5, 1), (0.5, 5, 0.5), (0, 10, None)]),
    st.integers(1, 7),
)
def test_valid_mask_by_blocks_is_the_whole_array_formula(ratings, bounds, block):
    from receval.data import interactions

    scale = RatingScale(*bounds)
    r = np.asarray(ratings, dtype=np.float64)
    tol = 1e-5 * max(1.0, abs(scale.high))
    expected = (r >= scale.low - tol) & (r <= scale.high + tol)
    if scale.step is not None:
        k = (r - scale.low) / scale.step
        expected &= np.abs(k - np.round(k)) <= 1e-4
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(interactions, "_MASK_BLOCK", block)
        assert scale.valid_mask(r).tolist() == expected.tolist()
