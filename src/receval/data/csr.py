"""`CSR`: a compressed sparse row matrix in plain numpy arrays, for the paths that need no scipy operation.

The evaluation holds truth and training ratings as users x items rows, and the ranking
metrics only read them (``indptr``, ``indices``, ``data``, ``shape``): importing
``scipy.sparse`` for that costs a command that evaluates files a sixth of its time
(scipy 1.17's array-API layer walks every numpy attribute at import). :class:`CSR` has
exactly those attributes, built in the canonical form scipy builds (column indices
sorted within each row, repeated entries summed), and :meth:`CSR.to_scipy` hands the
same arrays to scipy where a metric multiplies or transposes.

Examples
--------
>>> m = CSR.from_coo(np.array([5.0, 2.0, 4.0]), np.array([0, 0, 1]), np.array([2, 0, 1]), (2, 3))
>>> m.indptr.tolist(), m.indices.tolist(), m.data.tolist(), m.nnz
([0, 2, 3], [0, 2, 1], [2.0, 5.0, 4.0], 3)
>>> m[np.array([1])].toarray().tolist()
[[0.0, 4.0, 0.0]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["CSR", "as_scipy"]

_INT32_MAX = np.iinfo(np.int32).max


def _index_dtype(*sizes: int) -> type[np.signedinteger]:
    """int32 while every size fits it, else int64: scipy's ``get_index_dtype`` rule for a new matrix."""
    return np.int32 if max(sizes, default=0) <= _INT32_MAX else np.int64


@dataclass(frozen=True, eq=False)
class CSR:
    """A ``shape[0]`` x ``shape[1]`` matrix in compressed sparse row form (the arrays scipy's ``csr_matrix`` holds).

    Row ``r`` stores the columns ``indices[indptr[r]:indptr[r + 1]]`` (sorted, each once) with
    the values ``data[indptr[r]:indptr[r + 1]]``; an explicit zero is a stored value. Build it
    with :meth:`from_coo` (or keep that form when building it by hand).

    Attributes
    ----------
    indptr : int array (shape[0] + 1,)
    indices : int array (nnz,)
    data : array (nnz,)
    shape : tuple of int
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def from_coo(cls, values: np.ndarray, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> CSR:
        """The matrix with ``values[j]`` at ``(rows[j], cols[j])``: ``scipy.sparse.csr_matrix((values, (rows, cols)),
        shape)``, the same arrays and dtypes.

        Column indices end sorted within each row and a repeated ``(row, col)`` is summed, in
        input order, into one entry (scipy does the same when each row's columns come in
        order; otherwise it sums them in the order its unstable sort leaves, which only exact
        sums, as of integers, make equal). Indices must lie inside ``shape`` (not checked).

        >>> m = CSR.from_coo(np.array([1.0, 2.0, 4.0]), np.array([1, 1, 0]), np.array([3, 3, 0]), (2, 4))
        >>> m.indptr.tolist(), m.indices.tolist(), m.data.tolist()
        ([0, 1, 2], [0, 3], [4.0, 3.0])
        """
        values, rows, cols = np.asarray(values), np.asarray(rows), np.asarray(cols)
        n_rows, n_cols = int(shape[0]), int(shape[1])
        idx = _index_dtype(n_rows, n_cols, len(values))
        # row-major keys; in 32 bits when they fit: a stable sort of them is then twice as fast
        keys = rows.astype(_index_dtype(n_rows * n_cols)) * n_cols + cols
        step = np.diff(keys)
        if (step < 0).any():  # files list rows in order: no sort then
            order = np.argsort(keys, kind="stable")
            keys, rows, cols, values = keys[order], rows[order], cols[order], values[order]
            step = np.diff(keys)
        else:
            values = values.copy()  # scipy copies too: the matrix never shares the caller's array
        repeated = step == 0
        if repeated.any():
            new = np.concatenate(([True], ~repeated))
            first = np.flatnonzero(new)
            summed = values[first]
            rest = np.flatnonzero(repeated) + 1
            np.add.at(summed, np.cumsum(new)[rest] - 1, values[rest])  # one addition at a time, in order, as scipy
            rows, cols, values = rows[first], cols[first], summed
        indptr = np.zeros(n_rows + 1, dtype=idx)
        np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
        indices = cols.astype(idx)
        return cls(indptr, indices, values, (n_rows, n_cols))

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.indptr[-1])

    def __getitem__(self, rows: np.ndarray) -> CSR:
        """The rows ``rows`` (an integer array, repeats allowed, or a boolean mask over the rows), in that order.

        >>> m = CSR.from_coo(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 2]), np.array([1, 0, 2]), (3, 3))
        >>> m[np.array([2, 0, 2])].toarray().tolist(), m[np.array([False, True, False])].nnz
        ([[2.0, 0.0, 3.0], [0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], 0)
        """
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        starts = self.indptr[rows].astype(np.int64)
        counts = self.indptr[rows + 1] - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        take = np.arange(indptr[-1]) + np.repeat(starts - indptr[:-1], counts)
        idx = _index_dtype(len(rows), self.shape[1], int(indptr[-1]))
        return CSR(indptr.astype(idx), self.indices[take].astype(idx), self.data[take], (len(rows), self.shape[1]))

    def toarray(self) -> np.ndarray:
        """The dense matrix (zeros where nothing is stored), of the values' dtype.

        >>> CSR.from_coo(np.array([2.0]), np.array([1]), np.array([0]), (2, 2)).toarray().tolist()
        [[0.0, 0.0], [2.0, 0.0]]
        """
        out = np.zeros(self.shape, dtype=self.data.dtype)
        out[np.repeat(np.arange(self.shape[0]), np.diff(self.indptr)), self.indices] = self.data
        return out

    def to_scipy(self) -> sp.csr_matrix:
        """A ``scipy.sparse.csr_matrix`` over the same arrays (no copy: an in-place scipy operation changes both).

        >>> CSR.from_coo(np.array([2.0]), np.array([1]), np.array([0]), (2, 2)).to_scipy().toarray().tolist()
        [[0.0, 0.0], [2.0, 0.0]]
        """
        import scipy.sparse as sp

        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)


def as_scipy(matrix: CSR | sp.spmatrix | sp.sparray) -> sp.csr_matrix | sp.spmatrix | sp.sparray:
    """``matrix`` for a scipy operation: a :class:`CSR` as :meth:`CSR.to_scipy`, a scipy matrix unchanged.

    >>> import scipy.sparse as sp
    >>> s = sp.csr_matrix(np.eye(2))
    >>> as_scipy(s) is s, as_scipy(CSR.from_coo(np.array([1.0]), np.array([0]), np.array([0]), (1, 1))).nnz
    (True, 1)
    """
    return matrix.to_scipy() if isinstance(matrix, CSR) else matrix
