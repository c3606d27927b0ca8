"""Item-item linear models of implicit feedback: EASE^R and SLIM, and the scoring they share with P3α/RP3β.

Each model learns an items x items weight matrix ``W`` from the binary users x items
matrix ``X`` of the training interactions and scores ``X_u · W`` (the sum of the
weights from the items the user interacted with). ``X`` holds a 1 for each training
rating at or above ``threshold`` (MovieLens 1-5: 4, as ``popularity`` and ``average``
count positives; Steck's EASE^R experiments binarise ML-20M the same way) and nothing
for the others; ``threshold=None`` counts every rating (data that is already implicit).

:class:`EASE` (Steck, "Embarrassingly Shallow Autoencoders for Sparse Data", WWW 2019)
is the closed form of ``min ||X − XB||² + λ||B||²`` subject to ``diag(B) = 0``:
``P = (XᵀX + λI)⁻¹``, ``B = I − P·diag(1/diag(P))``. ``l2`` is λ, 500 by default (the
paper's value for ML-20M; 200 for MSD, 1000 for Netflix). ``B`` is dense: EASE^R refuses,
before allocating, a catalogue whose items x items matrices do not fit in memory.

:class:`SLIM` (Ning & Karypis, "SLIM: Sparse Linear Methods for Top-N Recommender
Systems", ICDM 2011) fits, for every item ``j``, a non-negative elastic net of the
column ``X_j`` on the other columns (column ``j`` zeroed, so ``w_jj = 0``), through
scikit-learn's ``ElasticNet(positive=True, fit_intercept=False)`` as Dacrema, Cremonesi
& Jannach's ``SLIMElasticNetRecommender`` (RecSys 2019,
github.com/MaurizioFD/RecSys2019_DeepLearning_Evaluation) does, with its parameter
names (``l1_ratio``, ``alpha``, ``topK=100``, ``max_iter=100``, ``tol=1e-4``). The penalty
defaults to RecBole's ``SLIMElastic`` (``recbole/properties/model/SLIMElastic.yaml``,
github.com/RUCAIBox/RecBole at 08eece7ce07e703610bb26c76e349a76a9d25abd: ``alpha=0.2``,
``l1_ratio=0.02``, the same scikit-learn objective), not Dacrema et al.'s ``alpha=1``,
``l1_ratio=0.1``: on MovieLens-100K ``u1.base`` (threshold 4) theirs leaves 222 non-zero
weights and 170 of the 459 test users fewer than 10 positively scored unrated items, so
that tie order decides their lists; RecBole's leaves 44,721 weights and every user a full
top-10 (nDCG@10 0.431 against 0.254). Two choices differ from Dacrema et al.'s code:
coordinates are visited in order (``selection="cyclic"``) rather than at random, so a fit
needs no seed and is the same on every run; and each column keeps its ``topK`` largest
weights (that implementation keeps one fewer when fewer than ``topK`` are non-zero).
scikit-learn's objective divides the squared error by the number of users: the ``alpha``
that gives a useful model depends on the data's size (tune it).

Scoring: ``score(users)`` returns the rows ``X_users · W`` (callers such as
:func:`~receval.recommenders.recommend` ask for batches of users, so memory follows
the batch); ``score_items(users, items)`` scores only the given items of each user
(sampled evaluation), never forming a users x items row.

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 5, 3, 4])
>>> model = EASE(l2=1.0, threshold=None).fit(train)
>>> model.weights_.round(3).tolist()
[[0.0, 0.5, -0.2], [0.375, 0.0, 0.4], [-0.125, 0.333, 0.0]]
>>> model.score([2]).round(3).tolist()
[[-0.125, 0.333, 0.0]]
>>> model.score_items([2, 0], [[1, 0], [2, 2]]).round(3).tolist()
[[0.333, -0.125], [0.2, 0.2]]
>>> EASE(l2=1.0).fit(train).score([2]).tolist()  # threshold 4: user 1's 3 is not an interaction; item 2 shares none
[[0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from receval._jit import njit
from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.base import MAX_ITERATIONS, Recommender, positive_ratings
from receval.recommenders.knn import _score_rows  # the one sparse-product row kernel (parallel, same bits)
from receval.validate import check_memory

__all__ = ["EASE", "SLIM", "ItemItemModel", "interaction_matrix"]


def interaction_matrix(train: Interactions, threshold: float | None, model: str = "the model") -> sp.csr_matrix:
    """The binary users x items matrix the item-item models learn from.

    Returns
    -------
    scipy.sparse.csr_matrix of float64
        A 1 at each training pair rated at or above ``threshold`` (every pair when it is None),
        sorted indices, no explicit zeros. Repeated pairs are a DataError (deduplicate first).

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 2, 4])
    >>> interaction_matrix(train, 4).toarray().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> interaction_matrix(train, None).toarray().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    >>> interaction_matrix(Interactions.from_arrays([0], [0], [1]), 4)
    Traceback (most recent call last):
    ...
    receval.errors.DataError: the model's threshold 4 is outside the rating scale 1..1 of its training data; give \
the model a threshold on that scale (parameter threshold, e.g. threshold=1), or threshold=none to count every rating
    """
    if threshold is None:
        values = np.ones(train.n_ratings)
    else:  # implicit data (one rating value) needs the other choice: say it
        values = positive_ratings(train, threshold, model, ", or threshold=none to count every rating").astype(float)
    matrix = train.to_csr(values)
    matrix.eliminate_zeros()
    return matrix


def _check_threshold(threshold: object) -> None:
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number))):
        raise ConfigError(
            f"threshold must be a rating (positives: at or above it) or None (every rating), got {threshold!r}"
        )


def _check_top_k(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"topK must be a positive integer (neighbours kept per item), got {value!r}")


@njit(cache=True)
def _dense_pairs(x_ptr, x_idx, x_val, users, items, weights, out):  # pragma: no cover
    """``out[r, c] = Σ_j X[users[r], j] · weights[j, items[r, c]]``: one weight row per interaction, gathered."""
    for r in range(len(users)):
        u = users[r]
        for p in range(x_ptr[u], x_ptr[u + 1]):
            row = weights[x_idx[p]]
            v = x_val[p]
            for c in range(items.shape[1]):
                out[r, c] += v * row[items[r, c]]


@njit(cache=True)
def _sparse_pairs(x_ptr, x_idx, x_val, users, items, w_ptr, w_idx, w_val, out):  # pragma: no cover
    """As :func:`_dense_pairs` with CSR weights (sorted indices): each item looked up in the row by bisection."""
    for r in range(len(users)):
        u = users[r]
        for p in range(x_ptr[u], x_ptr[u + 1]):
            j = x_idx[p]
            lo = w_ptr[j]
            hi = w_ptr[j + 1]
            if lo == hi:
                continue
            cols = w_idx[lo:hi]
            v = x_val[p]
            for c in range(items.shape[1]):
                q = np.searchsorted(cols, items[r, c])
                if q < hi - lo and cols[q] == items[r, c]:
                    out[r, c] += v * w_val[lo + q]


class ItemItemModel(Recommender):
    """A model scoring ``X_u · W`` with a learned items x items ``weights_`` (dense or CSR); see the module docstring.

    Subclasses set ``threshold`` in their constructor and call :meth:`_interactions` in ``fit``.
    """

    threshold: float | None
    weights_: np.ndarray | sp.csr_matrix
    user_items_: sp.csr_matrix

    def _interactions(self, train: Interactions) -> sp.csr_matrix:
        """Validate the parameters, start the fit and keep the binary training matrix (returned)."""
        validate = getattr(self, "_validate", None)
        if callable(validate):
            validate()
        self._start_fit(train)
        self.user_items_ = interaction_matrix(train, self.threshold, type(self).__name__)
        return self.user_items_

    def score(self, users: np.ndarray) -> np.ndarray:
        """Scores of every item for each user: the rows ``X_users · W`` (float64, ``len(users) x n_items``).

        Returns
        -------
        numpy.ndarray
            ``len(users) x n_items`` float64; a user without training positives scores 0 everywhere.

        Examples
        --------
        >>> from receval import Interactions
        >>> model = EASE(l2=1.0, threshold=None).fit(Interactions.from_arrays([0, 1], [0, 1], [1, 1]))
        >>> model.score([0]).tolist()
        [[0.0, 0.0]]
        """
        users = self._check_users(users)
        check_memory(
            8.0 * len(users) * self.n_items_,
            f"{type(self).__name__}'s scores of {len(users):,} users x {self.n_items_:,} items",
            "score fewer users at once (recommend() batches them), or use score_items",
        )
        x, w = self.user_items_, self.weights_
        if isinstance(w, sp.csr_matrix):
            # added into the dense rows directly: scipy's sparse product built a sparse result and then densified
            # it, 70% of recommend's time on 20,000 users x 20,000 items (the same sums in the same order)
            out = np.zeros((len(users), self.n_items_))
            _score_rows(users, x.indptr, x.indices, x.data, w.indptr, w.indices, w.data, out)
            return out
        return np.asarray(x[users] @ w, dtype=np.float64)

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Scores of the given items only: row ``r`` scores ``items[r]`` for ``users[r]``.

        Returns
        -------
        numpy.ndarray
            ``len(users) x items.shape[1]`` float64, equal to ``score(users)`` at those items.

        Examples
        --------
        >>> from receval import Interactions
        >>> model = EASE(l2=1.0, threshold=None).fit(Interactions.from_arrays([0, 0, 1], [0, 1, 1], [1, 1, 1]))
        >>> model.score_items([1], [[0, 1]]).round(3).tolist()
        [[0.333, 0.0]]
        """
        users, items = self._check_candidates(users, items)
        out = np.zeros(items.shape)
        x = self.user_items_
        w = self.weights_
        if isinstance(w, sp.csr_matrix):
            _sparse_pairs(x.indptr, x.indices, x.data, users, items, w.indptr, w.indices, w.data, out)
        else:
            _dense_pairs(x.indptr, x.indices, x.data, users, items, w, out)
        return out


class EASE(ItemItemModel):
    """EASE^R (Steck, WWW 2019): closed-form item-item weights with a zero diagonal; see the module docstring.

    Parameters
    ----------
    l2
        λ, the L2 penalty of the weights (> 0); 500 as the paper's ML-20M experiments.
    threshold
        Training ratings at or above it are the interactions; None: every rating.

    Examples
    --------
    >>> from receval import Interactions
    >>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 5, 4])
    >>> EASE(l2=1.0).fit(train).weights_.round(3).tolist()
    [[0.0, 0.5], [0.333, 0.0]]
    """

    def __init__(self, l2: float = 500.0, threshold: float | None = 4.0):
        self.l2 = l2
        self.threshold = threshold

    def _validate(self) -> None:
        if isinstance(self.l2, bool) or not isinstance(self.l2, (int, float, np.number)) or not 0 < self.l2 < np.inf:
            # inf made every score NaN (B = 0 / 0), silently
            raise ConfigError(f"l2 must be a positive number, finite (EASE^R's λ), got {self.l2!r}")
        _check_threshold(self.threshold)

    def fit(self, train: Interactions) -> EASE:
        """Learn ``B = I − P·diag(1/diag(P))`` with ``P = (XᵀX + λI)⁻¹``.

        Returns
        -------
        EASE
            ``self``, fitted: ``weights_`` is the dense n_items x n_items ``B`` (float64, zero diagonal).

        Examples
        --------
        >>> from receval import Interactions
        >>> EASE(l2=2.0, threshold=None).fit(Interactions.from_arrays([0], [0], [5])).weights_.tolist()
        [[0.0]]
        """
        self._validate()
        n = train.n_items
        # the sparse Gram matrix (at most 12 bytes a cell), its dense copy, inverted in place
        check_memory(
            20.0 * n * n,
            f"EASE's dense {n:,} x {n:,} item-item matrices",
            "filter the items (e.g. min_item_ratings), or use rp3beta or slim, which keep top-k neighbours only",
        )
        x = self._interactions(train)
        gram = (x.T @ x).toarray()
        gram[np.diag_indices(n)] += float(self.l2)
        weights = _spd_inverse(gram)
        weights /= -np.diag(weights)  # column j divided by -P_jj: -P_ij / P_jj
        np.fill_diagonal(weights, 0.0)
        self.weights_ = weights
        return self


def _spd_inverse(matrix: np.ndarray) -> np.ndarray:
    """The inverse of the symmetric positive definite ``matrix``, computed in its place (overwritten).

    By Cholesky (LAPACK ``potrf`` then ``potri``): half the work of an LU inverse, and no second n x n array;
    ``potri`` fills the upper triangle, copied onto the lower one block by block."""
    factor, info = lapack.dpotrf(matrix, lower=False, clean=False, overwrite_a=True)
    if info == 0:
        factor, info = lapack.dpotri(factor, lower=False, overwrite_c=True)
    if info != 0:  # XᵀX + λI with λ > 0 is positive definite: only a non-finite λ gets here
        raise ConfigError(
            f"EASE's Gram matrix plus l2 is not positive definite (LAPACK info {info}): use a finite l2 > 0"
        )
    n = len(factor)
    block = 512
    for start in range(0, n, block):
        stop = min(start + block, n)
        factor[start:stop, :start] = factor[:start, start:stop].T
        diagonal = factor[start:stop, start:stop]
        diagonal[np.tril_indices(stop - start, -1)] = diagonal.T[np.tril_indices(stop - start, -1)]
    return factor


class SLIM(ItemItemModel):
    """SLIM (Ning & Karypis, ICDM 2011): a non-negative elastic net per item, by scikit-learn; see the module docstring.

    Parameters
    ----------
    l1_ratio, alpha
        scikit-learn's ``ElasticNet``: penalty ``alpha · (l1_ratio·|w|₁ + (1 − l1_ratio)/2·|w|²)``; RecBole's
        defaults (see the module docstring).
    topK
        Weights kept per item (its largest).
    threshold
        Training ratings at or above it are the interactions; None: every rating.
    max_iter, tol
        The coordinate descent's sweeps and tolerance per item.

    Examples
    --------
    >>> from receval import Interactions
    >>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 1, 2], [5, 5, 4, 4, 5])
    >>> SLIM(alpha=0.01, l1_ratio=0.5).fit(train).weights_.toarray().round(3).tolist()
    [[0.0, 0.985, 0.0], [0.985, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """

    def __init__(
        self,
        l1_ratio: float = 0.02,
        alpha: float = 0.2,
        topK: int = 100,
        threshold: float | None = 4.0,
        max_iter: int = 100,
        tol: float = 1e-4,
    ):
        self.l1_ratio = l1_ratio
        self.alpha = alpha
        self.topK = topK
        self.threshold = threshold
        self.max_iter = max_iter
        self.tol = tol

    def _validate(self) -> None:
        if importlib.util.find_spec("sklearn") is None:
            raise ConfigError("slim needs scikit-learn (its ElasticNet): pip install 'receval[slim]'")
        if not 0 <= self.l1_ratio <= 1:
            raise ConfigError(f"l1_ratio must be in [0, 1], got {self.l1_ratio!r}")
        if not self.alpha > 0:
            raise ConfigError(f"alpha must be > 0 (the elastic net's penalty), got {self.alpha!r}")
        _check_top_k(self.topK)
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1:
            raise ConfigError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if self.max_iter > MAX_ITERATIONS:  # 10**12 was an OverflowError of the solver's unsigned int, a traceback
            raise ConfigError(f"max_iter={self.max_iter} is more than {MAX_ITERATIONS:,} coordinate-descent sweeps "
                              f"(SLIM converges in about 100); use at most {MAX_ITERATIONS:,}")  # fmt: skip
        if not self.tol > 0:
            raise ConfigError(f"tol must be > 0, got {self.tol!r}")
        _check_threshold(self.threshold)

    def fit(self, train: Interactions) -> SLIM:
        """One elastic net per item column, on the other columns.

        Returns
        -------
        SLIM
            ``self``, fitted: ``weights_`` is the CSR n_items x n_items ``W`` (column ``j``: item ``j``'s
            regression weights, at most ``topK``, non-negative, ``W_jj = 0``).

        Examples
        --------
        >>> from receval import Interactions
        >>> SLIM(alpha=0.1, threshold=None).fit(Interactions.from_arrays([0, 1], [0, 1], [5, 5])).weights_.nnz
        0
        """
        self._validate()
        from sklearn import config_context
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import ElasticNet

        x = sp.csc_matrix(self._interactions(train))
        n = self.n_items_
        model = ElasticNet(
            alpha=float(self.alpha),
            l1_ratio=float(self.l1_ratio),
            positive=True,
            fit_intercept=False,
            copy_X=False,
            precompute=False,
            selection="cyclic",
            max_iter=int(self.max_iter),
            tol=float(self.tol),
        )
        rows, cols, vals = [], [], []
        # the parameters are checked once above and x is CSC float64 already: scikit-learn's per-call checks
        # took as long as the fits themselves (ML-100K: 5 s of 10)
        with warnings.catch_warnings(), config_context(skip_parameter_validation=True):
            # max_iter bounds the cost of a fit by design (Dacrema et al.'s 100 sweeps): an item stopped by it keeps
            # the weights reached, as theirs do
            warnings.simplefilter("ignore", ConvergenceWarning)
            for j in range(n):
                lo, hi = x.indptr[j], x.indptr[j + 1]
                if lo == hi:  # nobody interacted with j: its weights are 0
                    continue
                target = np.zeros(x.shape[0])
                target[x.indices[lo:hi]] = x.data[lo:hi]
                saved = x.data[lo:hi].copy()
                x.data[lo:hi] = 0.0  # the column of j zeroed in place: w_jj = 0
                model.fit(x, target, check_input=False)
                x.data[lo:hi] = saved
                coef = model.sparse_coef_
                keep = _largest(coef.data, coef.indices, int(self.topK))
                rows.append(coef.indices[keep])
                vals.append(coef.data[keep])
                cols.append(np.full(len(keep), j))
        self.weights_ = _csr(rows, cols, vals, n)
        return self


def _largest(values: np.ndarray, index: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest positive ``values`` (ties: the lower ``index``)."""
    positive = np.flatnonzero(values > 0)
    if len(positive) <= k:
        return positive
    order = np.lexsort((index[positive], -values[positive]))
    return positive[order[:k]]


def _csr(rows: list[np.ndarray], cols: list[np.ndarray], vals: list[np.ndarray], n: int) -> sp.csr_matrix:
    """The n x n CSR matrix (sorted indices) of the concatenated (row, column, value) parts."""
    if not rows:
        return sp.csr_matrix((n, n))
    matrix = sp.csr_matrix(
        (np.concatenate(vals).astype(np.float64), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    matrix.sort_indices()
    return matrix
