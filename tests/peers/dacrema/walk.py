"""Dacrema et al.'s P3α and RP3β fits, ported to numpy/scipy for receval's tests (see SOURCE.md beside this file).

The steps and their order are those of ``P3alphaRecommender.fit`` and ``RP3betaRecommender.fit`` (with
``implicit=True``: the caller passes the binary matrix of the interactions) and of ``similarityMatrixTopK``:
the row-normalised interactions ``Pui`` and the row-normalised transposed binary matrix ``Piu`` (scikit-learn's
``normalize(norm="l1")``), both to the power ``alpha`` when it is not 1; the item rows of ``Piu · Pui`` in
blocks of 200, each (times ``deg(j)^-beta`` for RP3β) with its diagonal zeroed, its ``topK`` largest entries by
``argsort`` and the zeros among them dropped; the rows l1-normalised when ``normalize_similarity``; then, since
``topK`` is not False, each column's ``topK`` largest non-zero entries. Two deliberate departures, both named by
a parameter: the arithmetic stays float64 (``check_matrix`` and the reference's buffers round to float32), and
``ties="lower index"`` replaces ``argsort``'s unspecified order of equal weights by the lower index first (the
order receval documents), so that two correct implementations can be compared weight for weight.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

BLOCK = 200
"""Rows of ``Piu · Pui`` formed at once, as the reference's ``block_dim``."""


def walk_fit(
    urm: sp.csr_matrix,
    *,
    topK: int = 100,
    alpha: float = 1.0,
    beta: float | None = None,
    normalize_similarity: bool = False,
    ties: str = "argsort",
) -> sp.csr_matrix:
    """The item-item ``W_sparse`` of P3α (``beta=None``) or RP3β (``beta`` a number), float64.

    ``urm`` is the users x items matrix of ones the reference fits on with ``implicit=True``;
    ``ties`` is ``"argsort"`` (the reference's order) or ``"lower index"``.
    """
    urm = sp.csr_matrix(urm, dtype=np.float64)
    n_items = urm.shape[1]
    pui = normalize(urm, norm="l1", axis=1)
    x_bool = sp.csr_matrix(urm.T, copy=True)
    x_bool.data = np.ones(x_bool.data.size)
    if beta is None:
        degree = None
    else:
        popularity = np.asarray(x_bool.sum(axis=1)).ravel()
        degree = np.zeros(n_items)
        rated = popularity != 0.0
        degree[rated] = np.power(popularity[rated], -beta)
    piu = normalize(x_bool, norm="l1", axis=1)
    if alpha != 1.0:
        pui = pui.power(alpha)
        piu = piu.power(alpha)
    rows, cols, values = [], [], []
    for start in range(0, n_items, BLOCK):
        stop = min(start + BLOCK, n_items)
        block = (piu[start:stop, :] @ pui).toarray()
        for offset in range(stop - start):
            row = block[offset, :] if degree is None else np.multiply(block[offset, :], degree)
            row[start + offset] = 0.0
            best = _descending(row, ties)[:topK]
            best = best[row[best] != 0.0]
            rows.append(np.full(len(best), start + offset))
            cols.append(best)
            values.append(row[best])
    w = sp.csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=(n_items, n_items))
    if normalize_similarity:
        w = normalize(w, norm="l1", axis=1)
    if topK:
        w = _columns_top_k(w, topK, ties)
    return sp.csr_matrix(w)


def _descending(row: np.ndarray, ties: str) -> np.ndarray:
    """Positions of ``row`` from its largest entry down: ``row.argsort()[::-1]``, or ties to the lower index first."""
    if ties == "argsort":
        return row.argsort()[::-1]
    return np.lexsort((np.arange(len(row)), -row))


def _columns_top_k(w: sp.csr_matrix, k: int, ties: str) -> sp.csc_matrix:
    """``similarityMatrixTopK``: each column's ``k`` largest non-zero entries, the last ``k`` of an ascending sort."""
    n_items = w.shape[1]
    k = min(k, n_items)
    w = sp.csc_matrix(w)
    data, indices, indptr = [], [], [0]
    for item in range(n_items):
        column = w.data[w.indptr[item] : w.indptr[item + 1]]
        column_rows = w.indices[w.indptr[item] : w.indptr[item + 1]]
        non_zero = column != 0
        column, column_rows = column[non_zero], column_rows[non_zero]
        ascending = np.argsort(column) if ties == "argsort" else np.lexsort((-column_rows, column))
        top = ascending[-k:]
        data.append(column[top])
        indices.append(column_rows[top])
        indptr.append(indptr[-1] + len(top))
    return sp.csc_matrix((np.concatenate(data), np.concatenate(indices), indptr), shape=(n_items, n_items))
