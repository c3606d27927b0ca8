"""Random-walk item-item models: P3α (Cooper et al. 2014) and RP3β (Paudel et al. 2016).

Both walk the bipartite user-item graph of the binary training matrix ``X`` (see
:func:`~receval.recommenders.linear.interaction_matrix`; ``threshold`` as there): from
an item to one of its users (probability ``1/deg(i)``), then to one of that user's
items (``1/deg(u)``), each step's probability raised to the power ``α``:

``W_ij = Σ_u (X_ui / deg(i))^α · (X_uj / deg(u))^α``

(Cooper, Lee, Radcliffe, Guo & Chierichetti, "Random Walks in Recommender Systems:
Exact Computation and Simulations", WWW 2014). RP3β divides each column by the
target item's popularity to the power ``β``, ``W_ij · deg(j)^-β`` (Paudel, Christoffel,
Newell & Bernstein, "Updatable, Accurate, Diverse, and Scalable Recommendations for
Interactive Applications", ACM TiiS 2016); P3α is RP3β with ``β = 0``.

The fit is Dacrema, Cremonesi & Jannach's (RecSys 2019,
github.com/MaurizioFD/RecSys2019_DeepLearning_Evaluation, ``GraphBased/P3alphaRecommender.py``
and ``RP3betaRecommender.py``), with their parameter names and defaults (``topK=100``,
``alpha=1``, ``beta=0.6``, ``normalize_similarity`` False for P3α and True for RP3β): each
item's row of the walk, diagonal zeroed, keeps its ``topK`` largest positive weights; rows
are divided by their sums when ``normalize_similarity``; then each column keeps its
``topK`` largest weights (their ``similarityMatrixTopK``; ``column_topK=False`` stops after
the rows). A user scores ``X_u · W``. ``tests/peers/dacrema`` holds a port of their fit
(commit recorded) that ``tests/test_graph_dacrema.py`` compares with this one, weights to
1e-12. Where they differ: the walk starts from the binary matrix for both steps (theirs
weighs the user step by the rating unless ``implicit``); ties at a ``topK``-th weight go to
the lower index (theirs to ``argsort``'s unspecified order); the arithmetic is float64
(their weights are stored as float32). A power ``(1/deg)^α`` or ``deg^-β`` that underflows
to 0 (a large ``α`` or ``β``) makes its weights 0, dropped as theirs are.

Memory: ``W`` is sparse (at most ``topK`` entries per item); it is computed item by item,
visiting only the items that share a user with it, so no items x items matrix (not even a
block of dense rows) is ever formed.

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 5, 4, 4])
>>> P3alpha(threshold=None).fit(train).weights_.toarray().round(3).tolist()
[[0.0, 0.5, 0.0], [0.25, 0.0, 0.25], [0.0, 0.25, 0.0]]
>>> RP3beta(beta=1.0, normalize_similarity=False, threshold=None).fit(train).score([2]).round(3).tolist()
[[0.0, 0.125, 0.0]]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from receval._jit import njit
from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.linear import ItemItemModel, _check_threshold, _check_top_k, _csr
from receval.validate import check_memory

__all__ = ["P3alpha", "RP3beta", "walk_weights"]


@njit(cache=True)
def _walk_top_k(x_ptr, x_idx, t_ptr, t_idx, to_user, to_item, penalty, k, top_cols, top_vals):  # pragma: no cover
    """Row ``i`` of the walk, ``Σ_{u ∋ i} (to_user[i] · to_item[u]) · x_u`` times ``penalty``, kept as its ``k``
    largest positive off-diagonal entries (ties: the lower column) in ``top_cols[i]``/``top_vals[i]`` (-1 padded).

    The products and sums are those of Dacrema et al.'s ``Piu · Pui`` (scipy's sparse product adds the item's
    users in index order, each user's items in index order), so the weights have their bits and their near ties
    fall the same way; only the columns a row touches are visited (no dense rows).
    A column enters ``touched`` only when its ``seen`` flag is down, and the flag stays up until the row is
    done, so a row lists each of its ``n`` columns at most once: ``m <= n``, whatever the sums are (a step of
    ``(1/deg)^α`` that underflows to 0 adds 0 and is listed once, then dropped as a weight of 0)."""
    n = len(t_ptr) - 1
    acc = np.zeros(n)
    seen = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    cols = np.empty(n, dtype=np.int64)
    vals = np.empty(n)
    for i in range(n):
        m = 0
        for p in range(t_ptr[i], t_ptr[i + 1]):
            u = t_idx[p]
            step = to_user[i] * to_item[u]
            for q in range(x_ptr[u], x_ptr[u + 1]):
                j = x_idx[q]
                if not seen[j]:
                    seen[j] = True
                    touched[m] = j
                    m += 1
                acc[j] += step
        c = 0
        for t in range(m):
            j = touched[t]
            s = acc[j] * penalty[j]
            acc[j] = 0.0
            seen[j] = False
            if j != i and s > 0:
                cols[c] = j
                vals[c] = s
                c += 1
        if c <= k:
            chosen = np.arange(c)
        else:  # the k-th largest value; all above it (fewer than k), and the lowest columns among those equal to it
            kth = -np.partition(-vals[:c], k - 1)[k - 1]
            above = np.nonzero(vals[:c] > kth)[0]
            tied = np.nonzero(vals[:c] == kth)[0]
            tied = tied[np.argsort(cols[tied])][: k - len(above)]
            chosen = np.concatenate((above, tied))
        for r in range(len(chosen)):
            top_cols[i, r] = cols[chosen[r]]
            top_vals[i, r] = vals[chosen[r]]


def walk_weights(
    x: sp.csr_matrix, top_k: int, alpha: float, beta: float, normalize: bool, column_top_k: bool = True
) -> sp.csr_matrix:
    """RP3β's item-item weights (P3α's with ``beta=0``) of the binary users x items matrix ``x``.

    Returns
    -------
    scipy.sparse.csr_matrix of float64
        n_items x n_items: each row's ``top_k`` largest positive off-diagonal weights
        ``(1/deg(i))^α Σ_u (x_uj/deg(u))^α · deg(j)^-β`` (ties: the lower column), each row divided by its
        sum when ``normalize``; then, when ``column_top_k``, each column's ``top_k`` largest of those (ties:
        the lower row), as Dacrema et al.'s ``similarityMatrixTopK`` ends their fit.

    Examples
    --------
    >>> x = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]]))
    >>> walk_weights(x, 10, 1.0, 0.0, False).toarray().tolist()
    [[0.0, 0.25], [0.5, 0.0]]
    >>> x = sp.csr_matrix(np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]))
    >>> walk_weights(x, 1, 1.0, 0.0, False, column_top_k=False).toarray().round(3).tolist()
    [[0.0, 0.417, 0.0], [0.417, 0.0, 0.0], [0.333, 0.0, 0.0]]
    >>> walk_weights(x, 1, 1.0, 0.0, False).toarray().round(3).tolist()  # column 0: its largest only
    [[0.0, 0.417, 0.0], [0.417, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    n = x.shape[1]
    x = sp.csr_matrix(x, dtype=np.float64)
    user_degree = np.diff(x.indptr).astype(np.float64)
    item_degree = np.bincount(x.indices, minlength=n).astype(np.float64)
    # powers of probabilities (at most 1) and of degrees (at least 1) to α, β >= 0: at most 1, never inf or
    # NaN; a power that underflows to 0 makes its weights 0, dropped as Dacrema et al.'s are
    with np.errstate(divide="ignore", under="ignore"):
        to_user = np.where(item_degree > 0, 1.0 / item_degree, 0.0) ** alpha  # (1/deg(i))^α, 0 for unrated items
        to_item = np.where(user_degree > 0, 1.0 / user_degree, 0.0) ** alpha
        penalty = np.where(item_degree > 0, item_degree ** -float(beta), 0.0)
    k = min(int(top_k), n - 1)
    if k <= 0:
        return sp.csr_matrix((n, n))
    # the kernel's five n-long buffers and the n x k selection (a column and a weight per slot)
    check_memory(
        41.0 * n + 16.0 * n * k,
        f"the walk's top-{k} of {n:,} items",
        "lower topK, or filter the items (e.g. min_item_ratings)",
    )
    by_item = sp.csr_matrix(x.T)  # each item's users (sorted)
    by_item.sort_indices()
    x.sort_indices()
    top_cols = np.full((n, k), -1, dtype=np.int64)
    top_vals = np.zeros((n, k))
    _walk_top_k(x.indptr, x.indices, by_item.indptr, by_item.indices, to_user, to_item, penalty, k, top_cols, top_vals)
    keep = top_cols >= 0
    rows = np.broadcast_to(np.arange(n)[:, None], top_cols.shape)
    w = _csr([rows[keep]], [top_cols[keep]], [top_vals[keep]], n)
    if normalize:
        # each row divided by its sum, added in column order one after another (scipy's product by ones): the
        # bits of scikit-learn's normalize(norm="l1"); dividing, as it does, also keeps tiny sums from overflowing
        w.data /= np.repeat(w @ np.ones(n), np.diff(w.indptr))
    if column_top_k:
        rows = np.repeat(np.arange(n), np.diff(w.indptr))
        chosen = _column_top_k(rows, w.indices, w.data, k)
        w = _csr([rows[chosen]], [w.indices[chosen]], [w.data[chosen]], n)
    return w


def _column_top_k(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, k: int) -> np.ndarray:
    """Positions of each column's ``k`` largest ``vals`` (ties: the lower row).

    >>> _column_top_k(np.array([0, 1, 2, 0]), np.array([1, 1, 1, 2]), np.array([0.5, 0.7, 0.5, 0.1]), 2).tolist()
    [1, 0, 3]
    """
    order = np.lexsort((rows, -vals, cols))  # by column, then weight descending, then row
    by_column = cols[order]
    rank = np.arange(len(order)) - np.searchsorted(by_column, by_column, side="left")
    return order[rank < k]


class _Walk(ItemItemModel):
    """The fit and the parameter rules P3α and RP3β share; ``_penalty`` is β."""

    topK: int
    alpha: float
    normalize_similarity: bool
    column_topK: bool

    def _penalty(self) -> float:
        raise NotImplementedError

    def _validate(self) -> None:
        _check_top_k(self.topK)
        if not _finite(self.alpha) or not self.alpha > 0:
            raise ConfigError(
                f"alpha must be > 0 and finite (the power of the walk's probabilities), got {self.alpha!r}"
            )
        for name in ("normalize_similarity", "column_topK"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")
        _check_threshold(self.threshold)

    def fit(self, train: Interactions) -> _Walk:
        """Learn the sparse walk weights (see :func:`walk_weights`).

        Returns
        -------
        P3alpha or RP3beta
            ``self``, fitted: ``weights_`` is the CSR n_items x n_items ``W``.

        Examples
        --------
        >>> from receval import Interactions
        >>> RP3beta(threshold=None).fit(Interactions.from_arrays([0], [0], [5])).weights_.nnz
        0
        """
        x = self._interactions(train)
        self.weights_ = walk_weights(
            x,
            int(self.topK),
            float(self.alpha),
            self._penalty(),
            bool(self.normalize_similarity),
            bool(self.column_topK),
        )
        return self


class RP3beta(_Walk):
    """RP3β (Paudel et al. 2016): a popularity-penalised 3-step random walk; see the module docstring.

    Parameters
    ----------
    topK
        Neighbours kept per item.
    alpha
        Power of each step's transition probability.
    beta
        Popularity penalty: the weight to item ``j`` is divided by ``deg(j)^β``.
    normalize_similarity
        Scale each item's kept weights to sum 1.
    column_topK
        Then keep each column's ``topK`` largest weights too, as Dacrema et al.'s fit ends; false: the rows'
        selection only.
    threshold
        Training ratings at or above it are the interactions; None: every rating.

    Examples
    --------
    >>> from receval import Interactions
    >>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 5, 4])
    >>> RP3beta(beta=0.0).fit(train).weights_.toarray().tolist()  # normalised rows
    [[0.0, 1.0], [1.0, 0.0]]
    """

    def __init__(
        self,
        topK: int = 100,
        alpha: float = 1.0,
        beta: float = 0.6,
        normalize_similarity: bool = True,
        column_topK: bool = True,
        threshold: float | None = 4.0,
    ):
        self.topK = topK
        self.alpha = alpha
        self.beta = beta
        self.normalize_similarity = normalize_similarity
        self.column_topK = column_topK
        self.threshold = threshold

    def _penalty(self) -> float:
        return float(self.beta)

    def _validate(self) -> None:
        super()._validate()
        if not _finite(self.beta) or not self.beta >= 0:
            raise ConfigError(f"beta must be >= 0 and finite (the popularity penalty), got {self.beta!r}")


def _finite(value: object) -> bool:
    """Whether ``value`` is a finite real number (not a bool)."""
    return (
        isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and np.isfinite(value)
    )


class P3alpha(_Walk):
    """P3α (Cooper et al. 2014): a 3-step random walk, probabilities to the power α; see the module docstring.

    The parameters are :class:`RP3beta`'s but ``beta`` (P3α is RP3β with β = 0), and ``normalize_similarity``
    is false by default (as Dacrema et al.'s).

    Examples
    --------
    >>> from receval import Interactions
    >>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 5, 4])
    >>> P3alpha().fit(train).weights_.toarray().tolist()
    [[0.0, 0.5], [0.25, 0.0]]
    """

    def __init__(
        self,
        topK: int = 100,
        alpha: float = 1.0,
        normalize_similarity: bool = False,
        column_topK: bool = True,
        threshold: float | None = 4.0,
    ):
        self.topK = topK
        self.alpha = alpha
        self.normalize_similarity = normalize_similarity
        self.column_topK = column_topK
        self.threshold = threshold

    def _penalty(self) -> float:
        return 0.0
