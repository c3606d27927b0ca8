"""``align._row_major_order``: the stable order of truth rows by (user, item), by one sort of packed keys.

It must be ``np.argsort(keys, kind="stable")`` exactly (repeated pairs in row order: a repeat
is summed in that order, then refused), and the truth matrix built from it the one
:meth:`CSR.from_coo` builds from the rows as they come.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data.csr import CSR
from receval.evaluation.align import _row_major_order


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60), st.integers(1, 9), st.integers(1, 9), st.booleans(), st.integers(0, 2**32 - 1))
def test_packed_sort_is_the_stable_argsort(n, n_users, n_items, grouped, seed):
    rng = np.random.default_rng(seed)
    users = rng.integers(0, n_users, n).astype(np.int32)
    items = rng.integers(0, n_items, n).astype(np.int32)
    if grouped:  # a file user by user, its items in any order
        users = np.sort(users)
    ratings = rng.random(n).astype(np.float32)
    keys = users.astype(np.int64) * n_items + items
    order = _row_major_order(users, items, n_items)
    if order is None:
        assert (np.diff(keys) >= 0).all()
        order = np.arange(n)
    assert order.tolist() == np.argsort(keys, kind="stable").tolist()
    ours = CSR.from_coo(ratings[order], users[order], items[order], (n_users, n_items))
    theirs = CSR.from_coo(ratings, users, items, (n_users, n_items))
    for mine, expected in ((ours.indptr, theirs.indptr), (ours.indices, theirs.indices), (ours.data, theirs.data)):
        assert mine.dtype == expected.dtype and mine.tobytes() == expected.tobytes()


def test_wide_keys_take_the_stable_argsort():
    users, items = np.array([1, 0, 1]), np.array([5, 7, 2])
    assert _row_major_order(users, items, 1 << 31).tolist() == [1, 2, 0]
