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
Interactive Applications", ACM TiiS 2016); P3α is RP3β with ``β = 0``. Each item keeps
its ``topK`` largest off-diagonal weights (ties: the lower index), rows scaled to sum
to 1 after the selection when ``normalize_similarity``; a user scores ``X_u · W``.

Parameter names and defaults follow Dacrema, Cremonesi & Jannach's implementations
(RecSys 2019, github.com/MaurizioFD/RecSys2019_DeepLearning_Evaluation,
``GraphBased/P3alphaRecommender.py`` and ``RP3betaRecommender.py``): ``topK=100``,
``alpha=1``, ``beta=0.6``, ``normalize_similarity`` False for P3α and True for RP3β, and
the same computation (their ``Piu · Pui`` row by row, the diagonal zeroed, the top
``topK`` of each row kept). Where they differ: the walk starts from the binary
matrix for both steps (theirs weighs the user step by the rating unless ``implicit``),
and ties at the ``topK``-th weight go to the lower item index (theirs to an unspecified
order of ``argsort``).

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

__all__ = ["P3alpha", "RP3beta", "walk_weights"]


@njit(cache=True)
def _walk_top_k(x_ptr, x_idx, t_ptr, t_idx, to_user, to_item, penalty, k, top_cols, top_vals):  # pragma: no cover
    """Row ``i`` of the walk, ``to_user[i] · Σ_{u ∋ i} to_item[u] · x_u`` times ``penalty``, kept as its ``k``
    largest positive off-diagonal entries (ties: the lower column) in ``top_cols[i]``/``top_vals[i]`` (-1 padded).

    The sums run over the item's users in index order and each user's items in index order, as scipy's sparse
    product ``Xᵀ · diag(to_item) · X`` adds them; only the columns a row touches are visited (no dense rows)."""
    n = len(t_ptr) - 1
    acc = np.zeros(n)
    touched = np.empty(n, dtype=np.int64)
    cols = np.empty(n, dtype=np.int64)
    vals = np.empty(n)
    for i in range(n):
        m = 0
        for p in range(t_ptr[i], t_ptr[i + 1]):
            u = t_idx[p]
            step = to_item[u]  # > 0: u has at least item i
            for q in range(x_ptr[u], x_ptr[u + 1]):
                j = x_idx[q]
                if acc[j] == 0.0:
                    touched[m] = j
                    m += 1
                acc[j] += step
        c = 0
        for t in range(m):
            j = touched[t]
            s = acc[j] * to_user[i] * penalty[j]
            acc[j] = 0.0
            if j != i and s > 0:
                cols[c] = j
                vals[c] = s
                c += 1
        if c <= k:
            chosen = np.arange(c)
        else:  # the k-th largest value; all above it, and the lowest columns among those equal to it
            kth = -np.partition(-vals[:c], k - 1)[k - 1]
            above = np.nonzero(vals[:c] > kth)[0]
            tied = np.nonzero(vals[:c] == kth)[0]
            tied = tied[np.argsort(cols[tied])][: k - len(above)]
            chosen = np.concatenate((above, tied))
        for r in range(len(chosen)):
            top_cols[i, r] = cols[chosen[r]]
            top_vals[i, r] = vals[chosen[r]]


def walk_weights(x: sp.csr_matrix, top_k: int, alpha: float, beta: float, normalize: bool) -> sp.csr_matrix:
    """RP3β's item-item weights (P3α's with ``beta=0``) of the binary users x items matrix ``x``.

    Returns
    -------
    scipy.sparse.csr_matrix of float64
        n_items x n_items, each row the item's ``top_k`` largest positive off-diagonal weights
        ``(1/deg(i))^α Σ_u (x_uj/deg(u))^α · deg(j)^-β`` (ties: the lower column), scaled to sum 1
        when ``normalize``.

    Examples
    --------
    >>> x = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]]))
    >>> walk_weights(x, 10, 1.0, 0.0, False).toarray().tolist()
    [[0.0, 0.25], [0.5, 0.0]]
    """
    n = x.shape[1]
    x = sp.csr_matrix(x, dtype=np.float64)
    user_degree = np.diff(x.indptr).astype(np.float64)
    item_degree = np.bincount(x.indices, minlength=n).astype(np.float64)
    with np.errstate(divide="ignore"):
        to_user = np.where(item_degree > 0, 1.0 / item_degree, 0.0) ** alpha  # (1/deg(i))^α, 0 for unrated items
        to_item = np.where(user_degree > 0, 1.0 / user_degree, 0.0) ** alpha
        penalty = np.where(item_degree > 0, item_degree ** -float(beta), 0.0)
    k = min(int(top_k), n - 1)
    if k <= 0:
        return sp.csr_matrix((n, n))
    by_item = sp.csr_matrix(x.T)  # each item's users (sorted)
    by_item.sort_indices()
    x.sort_indices()
    cols = np.full((n, k), -1, dtype=np.int64)
    vals = np.zeros((n, k))
    _walk_top_k(x.indptr, x.indices, by_item.indptr, by_item.indices, to_user, to_item, penalty, k, cols, vals)
    keep = cols >= 0
    rows = np.broadcast_to(np.arange(n)[:, None], cols.shape)
    w = _csr([rows[keep]], [cols[keep]], [vals[keep]], n)
    if normalize:
        sums = np.asarray(w.sum(axis=1)).ravel()
        w = sp.csr_matrix(sp.diags(np.where(sums > 0, 1.0 / np.where(sums > 0, sums, 1.0), 0.0)) @ w)
        w.sort_indices()
    return w


class _Walk(ItemItemModel):
    """The fit and the parameter rules P3α and RP3β share; ``_penalty`` is β."""

    topK: int
    alpha: float
    normalize_similarity: bool

    def _penalty(self) -> float:
        raise NotImplementedError

    def _validate(self) -> None:
        _check_top_k(self.topK)
        if isinstance(self.alpha, bool) or not self.alpha > 0:
            raise ConfigError(f"alpha must be > 0 (the power of the walk's probabilities), got {self.alpha!r}")
        if not isinstance(self.normalize_similarity, (bool, np.bool_)):
            raise ConfigError(f"normalize_similarity must be true or false, got {self.normalize_similarity!r}")
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
            x, int(self.topK), float(self.alpha), self._penalty(), bool(self.normalize_similarity)
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
        threshold: float | None = 4.0,
    ):
        self.topK = topK
        self.alpha = alpha
        self.beta = beta
        self.normalize_similarity = normalize_similarity
        self.threshold = threshold

    def _penalty(self) -> float:
        return float(self.beta)

    def _validate(self) -> None:
        super()._validate()
        if isinstance(self.beta, bool) or not self.beta >= 0:
            raise ConfigError(f"beta must be >= 0 (the popularity penalty), got {self.beta!r}")


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
        threshold: float | None = 4.0,
    ):
        self.topK = topK
        self.alpha = alpha
        self.normalize_similarity = normalize_similarity
        self.threshold = threshold

    def _penalty(self) -> float:
        return 0.0
