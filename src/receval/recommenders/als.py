"""HKV: implicit-feedback matrix factorisation by ALS (Hu, Koren & Volinsky 2008).

A thin layer over ``implicit.cpu.als.AlternatingLeastSquares`` (no hand-written
ALS): the training ratings become the users x items confidence matrix — the
ratings themselves (``values="rating"``), ones (``"ones"``), or ones for the ratings
at or above ``threshold`` only (``"positive"``) — which implicit scales by ``alpha``.
``score`` is ``user_factors @ item_factors.T``. :func:`receval.recommenders.recommend`
ranks from ``score`` (seeded ties, like every model): at MovieLens-1M size that took
about half the CPU time of implicit's own top-k (benchmarks/bench_recommenders.py).
:meth:`HKV.recommend_implicit` gives implicit's own lists, for comparison.

OpenBLAS's thread pool slows implicit down (and implicit warns about it): model
construction and fitting run under ``threadpoolctl.threadpool_limits(1, "blas")``;
implicit's own threads are ``num_threads`` (0 = all cores). Factors are float32 as
in implicit, so a seed gives the same model whatever the thread count. Users
without training interactions keep near-zero factors from implicit's solver: their
scores carry no information.

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 5, 3, 4])
>>> model = HKV(factors=4, iterations=5, seed=0).fit(train)
>>> model.score([0, 1]).shape
(2, 3)
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.base import Recommender

__all__ = ["HKV", "implicit_topk"]


def implicit_topk(model, users: np.ndarray, k: int, exclude: sp.csr_matrix | None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k through an implicit model's ``recommend``; padding as :func:`~receval.recommenders.recommend`.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        Item indices (int64, ``-1`` for an empty slot) and scores (float64, NaN there), both ``len(users) x k``.

    Examples
    --------
    >>> class Model:  # what implicit's recommend returns: N slots, filtered ones at the lowest float32 score
    ...     def recommend(self, users, liked, N, filter_already_liked_items):
    ...         low = np.finfo(np.float32).min
    ...         return np.array([[2, 0], [1, 5]]), np.array([[0.75, 0.5], [0.25, low]], dtype=np.float32)
    >>> ids, scores = implicit_topk(Model(), np.array([0, 1]), 3, None)
    >>> ids.tolist(), scores.tolist()
    ([[2, 0, -1], [1, -1, -1]], [[0.75, 0.5, nan], [0.25, nan, nan]])
    """
    if exclude is None:
        ids, scores = model.recommend(users, None, N=k, filter_already_liked_items=False)
    else:
        liked = sp.csr_matrix(exclude[users], dtype=np.float32)
        ids, scores = model.recommend(users, liked, N=k, filter_already_liked_items=True)
    ids = np.asarray(ids, dtype=np.int64).reshape(len(users), -1)
    scores = np.asarray(scores, dtype=np.float64).reshape(len(users), -1)
    # implicit marks filtered slots with the lowest float32 score (and arbitrary ids)
    missing = (ids < 0) | ~(scores > np.finfo(np.float32).min)
    ids[missing] = -1
    scores[missing] = np.nan
    if ids.shape[1] < k:  # implicit shortens the lists when fewer items remain
        pad = k - ids.shape[1]
        ids = np.pad(ids, ((0, 0), (0, pad)), constant_values=-1)
        scores = np.pad(scores, ((0, 0), (0, pad)), constant_values=np.nan)
    return ids, scores


class HKV(Recommender):
    """Implicit-feedback ALS (HKV 2008) through ``implicit``; see the module docstring.

    Parameters
    ----------
    factors, regularization, alpha, iterations
        As implicit's ``AlternatingLeastSquares`` (alpha scales the confidences).
    values
        Confidence source: ``"rating"``, ``"ones"`` or ``"positive"``.
    threshold
        Relevance threshold for ``values="positive"``.
    use_cg
        Conjugate-gradient solver (implicit's default) or exact Cholesky.
    num_threads
        implicit's threads (0 = all cores).
    seed
        implicit's ``random_state``.
    """

    def __init__(
        self,
        factors: int = 50,
        regularization: float = 0.01,
        alpha: float = 1.0,
        iterations: int = 15,
        values: Literal["rating", "ones", "positive"] = "rating",
        threshold: float = 4.0,
        use_cg: bool = True,
        num_threads: int = 0,
        seed: int = 0,
    ):
        self.factors = factors
        self.regularization = regularization
        self.alpha = alpha
        self.iterations = iterations
        self.values = values
        self.threshold = threshold
        self.use_cg = use_cg
        self.num_threads = num_threads
        self.seed = seed

    def confidence_matrix(self, train: Interactions) -> sp.csr_matrix:
        """The users x items matrix handed to implicit (before ``alpha``)."""
        if self.values == "rating":
            return train.to_csr("rating")
        if self.values == "ones":
            return train.to_csr("ones")
        if self.values == "positive":
            m = train.to_csr(train.positive_mask(self.threshold).astype(np.float32))
            m.eliminate_zeros()
            return m
        raise ConfigError(f"values={self.values!r} is not one of ['rating', 'ones', 'positive']")

    def _validate(self) -> None:
        """The parameters' rules (also applied by :func:`receval.recommenders.make`, before any data is read)."""
        for name in ("factors", "iterations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if not (self.alpha > 0 and self.regularization >= 0):
            raise ConfigError("alpha must be > 0 and regularization >= 0")
        if self.values not in ("rating", "ones", "positive"):
            raise ConfigError(f"values={self.values!r} is not one of ['rating', 'ones', 'positive']")

    def fit(self, train: Interactions) -> HKV:
        from implicit.cpu.als import AlternatingLeastSquares

        self._validate()
        self._start_fit(train)
        self._check_factor_memory(int(self.factors), np.dtype(np.float32).itemsize)  # implicit's factors: float32
        matrix = self.confidence_matrix(train)
        with threadpool_limits(1, "blas"):
            model = AlternatingLeastSquares(
                factors=self.factors,
                regularization=self.regularization,
                alpha=self.alpha,
                iterations=self.iterations,
                use_cg=self.use_cg,
                num_threads=self.num_threads,
                random_state=self.seed,
            )
            model.fit(matrix, show_progress=False)
        self.model_ = model
        self.user_factors_ = model.user_factors
        self.item_factors_ = model.item_factors
        return self

    def refit(self, train: Interactions, iterations: int = 3) -> HKV:
        """Continue ALS from the current factors on ``train`` (same users and items): a warm refit.

        The cyclic simulator refits a model on the training data plus the feedback revealed
        so far; from factors that already fit most of it, ``iterations`` sweeps follow the
        trajectory of cold refits (15 sweeps from random factors) closely (ML-100K, 200
        rounds, refit every 10: Recall 0.812 vs 0.816) at a fifth of the cost.

        >>> from receval import Interactions
        >>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 5, 3, 4])
        >>> model = HKV(factors=4, iterations=5, seed=0).fit(train)
        >>> model.refit(train).score([0]).shape, model.model_.iterations
        ((1, 3), 5)
        """
        self._check_fitted()
        if (train.n_users, train.n_items) != (self.n_users_, self.n_items_):
            raise ConfigError(
                f"refit needs the id space of fit ({self.n_users_} users x {self.n_items_} items), "
                f"got {train.n_users} x {train.n_items}: call fit for new data"
            )
        matrix = self.confidence_matrix(train)
        with threadpool_limits(1, "blas"):
            self.model_.iterations = iterations
            try:
                self.model_.fit(matrix, show_progress=False)
            finally:
                self.model_.iterations = self.iterations
        self.user_factors_ = self.model_.user_factors
        self.item_factors_ = self.model_.item_factors
        return self

    def score(self, users: np.ndarray) -> np.ndarray:
        users = self._check_users(users)
        return (self.user_factors_[users] @ self.item_factors_.T).astype(np.float64)

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at ``items[r]`` of user ``users[r]`` only: a dot product of the factors per candidate.

        >>> from receval import Interactions
        >>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 5, 3, 4])
        >>> model = HKV(factors=4, iterations=5, seed=0).fit(train)
        >>> bool(np.allclose(model.score_items([1], [[2, 0]]), model.score([1])[:, [2, 0]], atol=1e-6))
        True
        """
        users, items = self._check_candidates(users, items)
        left = np.asarray(self.user_factors_[users], dtype=np.float64)
        return np.einsum("uf,unf->un", left, np.asarray(self.item_factors_[items], dtype=np.float64))

    def recommend_implicit(
        self, users: np.ndarray, k: int, exclude: sp.csr_matrix | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """implicit's own top-k lists (its tie order), padded like ``recommend`` (see :func:`implicit_topk`)."""
        users = self._check_users(users)
        return implicit_topk(self.model_, users, k, exclude)
