"""``metrics._input.lookup``: the grades of ranked items, against a dense gather (the plain formulation).

The lookup's buffer spans only the columns up to the last one holding a value; the
values must be those of ``matrix.toarray()[row, column]`` (NaN where nothing is stored,
for padding and for columns past the last stored one), whatever the budget of cells.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.metrics._input import lookup


def _dense_reference(matrix: sp.csr_matrix, columns: np.ndarray) -> np.ndarray:
    stored = np.full(matrix.shape, np.nan, dtype=np.float32)
    coo = matrix.tocoo()
    stored[coo.row, coo.col] = coo.data  # explicit zeros are stored values
    out = stored[np.arange(len(columns))[:, None], np.maximum(columns, 0)]
    out[columns < 0] = np.nan
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 40),
    st.integers(1, 7),
    st.floats(0, 1),
    st.integers(1, 64),
    st.integers(0, 2**32 - 1),
)
def test_lookup_equals_a_dense_gather(n_rows, n_cols, width, density, budget, seed):
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n_rows, n_cols)) < density, rng.integers(0, 5, (n_rows, n_cols)), np.nan)
    rows, cols = np.nonzero(~np.isnan(dense))
    matrix = sp.csr_matrix((dense[rows, cols], (rows, cols)), shape=(n_rows, n_cols))  # zeros kept: stored
    matrix.sort_indices()
    columns = rng.integers(-1, n_cols, (n_rows, width)).astype(np.int32)
    got = lookup(matrix, columns, budget=budget)
    np.testing.assert_array_equal(got, _dense_reference(matrix, columns))
    assert got.dtype == np.float32


def test_items_past_the_truth_are_unrated_over_a_wide_catalogue():
    truth = sp.csr_matrix((np.array([4.0, 2.0]), (np.array([0, 1]), np.array([1, 0]))), shape=(2, 5_000_000))
    columns = np.array([[4_999_999, 1, -1], [0, 3_000_000, 2]], dtype=np.int32)
    got = lookup(truth, columns)
    expected = np.array([[np.nan, 4.0, np.nan], [2.0, np.nan, np.nan]], dtype=np.float32)  # by hand
    np.testing.assert_array_equal(got, expected)
