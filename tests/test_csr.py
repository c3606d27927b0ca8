"""``receval.data.csr.CSR`` against scipy itself: the same arrays, bit for bit, as ``scipy.sparse.csr_matrix``.

scipy (1.17.1, ``scipy/sparse/_compressed.py`` and ``sparsetools/csr.h``) builds
``csr_matrix((data, (rows, cols)), shape)`` by a stable counting sort on the rows, sorts
each row's columns only when they are out of order (``std::sort``: not stable), then sums
each run of a repeated column from left to right. Repeats summed in input order are thus
the same bits when each row's columns come in order; otherwise only exact sums are
comparable, so those cases draw integer values.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.data.csr import CSR


def _same(ours: CSR, theirs: sp.csr_matrix) -> None:
    assert ours.shape == theirs.shape and ours.nnz == theirs.nnz
    for name in ("indptr", "indices", "data"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert a.dtype == b.dtype, (name, a.dtype, b.dtype)
        assert a.tobytes() == b.tobytes(), (name, a, b)  # bit for bit: -0.0, NaN payloads, explicit zeros


@st.composite
def _entries(draw, *, ordered: bool, exact: bool):
    n_rows, n_cols = draw(st.integers(0, 6)), draw(st.integers(0, 7))
    n = draw(st.integers(0, 30)) if n_rows and n_cols else 0
    rows = np.array(draw(st.lists(st.integers(0, max(n_rows - 1, 0)), min_size=n, max_size=n)), dtype=np.int32)
    cols = np.array(draw(st.lists(st.integers(0, max(n_cols - 1, 0)), min_size=n, max_size=n)), dtype=np.int32)
    if exact:
        values = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    else:
        values = draw(st.lists(st.floats(-1e6, 1e6, width=32), min_size=n, max_size=n))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    values = np.array(values, dtype=dtype)
    if ordered:  # each row's columns in order (a stable sort keeps the order of repeats)
        order = np.lexsort((cols, rows))
        rows, cols, values = rows[order], cols[order], values[order]
    return values, rows, cols, (n_rows, n_cols)


@settings(max_examples=300, deadline=None)
@given(_entries(ordered=True, exact=False))
def test_from_coo_is_scipys_csr_for_any_floats_in_row_order(entries):
    values, rows, cols, shape = entries
    _same(CSR.from_coo(values, rows, cols, shape), sp.csr_matrix((values, (rows, cols)), shape=shape))


@settings(max_examples=300, deadline=None)
@given(_entries(ordered=False, exact=True))
def test_from_coo_is_scipys_csr_in_any_order(entries):
    values, rows, cols, shape = entries
    _same(CSR.from_coo(values, rows, cols, shape), sp.csr_matrix((values, (rows, cols)), shape=shape))


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 6),
    st.integers(1, 7),
    st.floats(0, 1),
    st.lists(st.integers(0, 5), max_size=8),
    st.integers(0, 2**32 - 1),
)
def test_unique_pairs_in_any_order_and_row_selection_are_scipys(n_rows, n_cols, density, picked, seed):
    rng = np.random.default_rng(seed)
    rows, cols = np.nonzero(rng.random((n_rows, n_cols)) < density)
    order = rng.permutation(len(rows))  # any order: without repeats scipy's sort is deterministic
    rows, cols = rows[order], cols[order]
    values = rng.normal(size=len(rows)).astype(np.float32)
    values[rng.random(len(rows)) < 0.2] = 0.0  # explicit zeros are stored values
    shape = (n_rows, n_cols)
    ours, theirs = CSR.from_coo(values, rows, cols, shape), sp.csr_matrix((values, (rows, cols)), shape=shape)
    _same(ours, theirs)
    assert np.array_equal(ours.toarray(), theirs.toarray()) and ours.toarray().dtype == theirs.dtype
    index = np.array([p for p in picked if p < n_rows], dtype=np.int64)
    _same(ours[index], theirs[index])
    mask = rng.random(n_rows) < 0.5
    _same(ours[mask], theirs[mask])
    _same(CSR.from_coo(values, rows, cols, shape), ours.to_scipy())  # to_scipy keeps every array


def test_index_dtype_grows_with_the_shape_as_scipys():
    values, rows, cols = np.array([1.0, 2.0]), np.array([0, 1]), np.array([2**31, 5])
    shape = (2, 2**31 + 1)
    _same(CSR.from_coo(values, rows, cols, shape), sp.csr_matrix((values, (rows, cols)), shape=shape))


def test_from_coo_never_shares_the_callers_values():
    values = np.array([1.0, 2.0])
    m = CSR.from_coo(values, np.array([0, 1]), np.array([0, 0]), (2, 1))
    values[:] = 7.0
    assert m.data.tolist() == [1.0, 2.0]


def test_to_scipy_shares_the_arrays():
    m = CSR.from_coo(np.array([1.0, 2.0]), np.array([0, 1]), np.array([1, 0]), (2, 2))
    s = m.to_scipy()
    assert s.data is m.data or np.shares_memory(s.data, m.data)
    assert np.shares_memory(s.indices, m.indices) and np.shares_memory(s.indptr, m.indptr)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 4), (2, 3)])
def test_empty_matrices_are_scipys(shape):
    empty = np.array([], dtype=np.int32)
    values = np.array([], dtype=np.float32)
    _same(CSR.from_coo(values, empty, empty, shape), sp.csr_matrix((values, (empty, empty)), shape=shape))
