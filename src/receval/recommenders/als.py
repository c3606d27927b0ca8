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

Bounds, checked before the fit (:func:`check_implicit`): ``num_threads`` at most
:data:`MAX_THREADS`, ``iterations`` at most
:data:`~receval.recommenders.base.MAX_ITERATIONS`, the largest confidence ``alpha`` x
value at most :data:`MAX_CONFIDENCE`, and the factors (users + items) plus implicit's
``factors x factors`` matrices within the free memory; a solve that still breaks down
(NaN factors, a failed Cholesky factorisation) is a ConfigError naming the parameters,
not implicit's exception.

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 5, 3, 4])
>>> model = HKV(factors=4, iterations=5, seed=0).fit(train)
>>> model.score([0, 1]).shape
(2, 3)
"""

from __future__ import annotations

import os
from typing import Literal, TypeGuard

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.base import MAX_ITERATIONS, Recommender, positive_ratings

__all__ = ["HKV", "MAX_CONFIDENCE", "MAX_THREADS", "check_implicit", "implicit_topk"]

MAX_THREADS = 1024
"""Most threads an implicit model may start (``num_threads``). Its OpenMP loops start every thread asked for,
each with its own stack and buffers: 8,192 ran on a 2-core machine, 100,000 ended the process with a
segmentation fault. Past the cores, threads only take turns; a fixed bound keeps a configuration valid on
every machine."""

MAX_CONFIDENCE = 1e6
"""Largest confidence ``alpha x value`` handed to implicit, whose solve runs in float32 (7 significant digits):
past it the unobserved items' weight of 1 and the regularisation vanish from the sums. On generated data the
Cholesky solve failed from 10^7 and the conjugate gradient returned NaN factors at 10^12 and its random start
unchanged at 10^15 (Hu et al. use alpha = 40)."""


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


def check_implicit(label: str, params: dict, largest_value: float | None = None) -> None:
    """Refuse implicit parameters past the bounds above: ``num_threads``, ``iterations``, ``alpha`` (times
    ``largest_value``, the input's largest entry, when known), each when present in ``params``; the message
    starts with ``label`` when it is not empty.

    Returns
    -------
    None
        The parameters are within the bounds; else :class:`~receval.errors.ConfigError` names the first that is
        not, its value and the bound.

    Examples
    --------
    >>> check_implicit("ials", {"num_threads": 4, "iterations": 15, "alpha": 40.0}, 1.0)
    >>> check_implicit("ials", {"num_threads": 100_000})
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: ials: num_threads=100000 is more than 1024 threads (implicit starts every one); \
use 0 (all cores) or at most 1024
    >>> check_implicit("hkv", {"alpha": 1e6}, 5.0)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: hkv: alpha=1e+06 times the largest value 5 is a confidence of 5e+06, more than \
implicit's float32 solve resolves (1e+06); use alpha <= 200000
    >>> check_implicit("ials", {"alpha": float("inf")})
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: ials: alpha=inf is a confidence of inf, more than implicit's float32 solve resolves \
(1e+06); use alpha <= 1e+06
    """
    label = f"{label}: " if label else ""
    threads = params.get("num_threads")
    if _integer(threads) and threads > MAX_THREADS:
        raise ConfigError(
            f"{label}num_threads={threads} is more than {MAX_THREADS} threads (implicit starts every one); "
            f"use 0 (all cores) or at most {MAX_THREADS}"
        )
    iterations = params.get("iterations")
    if _integer(iterations) and iterations > MAX_ITERATIONS:
        raise ConfigError(
            f"{label}iterations={iterations} is more than {MAX_ITERATIONS:,} ALS sweeps (ALS converges in tens; "
            f"each sweep solves every user and item); use at most {MAX_ITERATIONS:,}"
        )
    alpha = params.get("alpha")
    if isinstance(alpha, (int, float, np.number)) and not isinstance(alpha, bool):
        largest = 1.0 if largest_value is None else float(largest_value)
        if not alpha * largest <= MAX_CONFIDENCE:  # also NaN and inf
            what = f"alpha={alpha:g}" + ("" if largest_value is None else f" times the largest value {largest:g}")
            raise ConfigError(
                f"{label}{what} is a confidence of {alpha * largest:g}, more than implicit's float32 solve "
                f"resolves ({MAX_CONFIDENCE:g}); use alpha <= {MAX_CONFIDENCE / largest:g}"
            )


def solver_squares(use_cg: bool, num_threads: int) -> int:
    """The factors x factors float32 matrices implicit's ALS holds: ``YtY``, its copy, and with the Cholesky
    solver one more per thread."""
    return 2 + (0 if use_cg else num_threads or os.cpu_count() or 1)


def _integer(value: object) -> TypeGuard[int]:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def fit_implicit(label: str, model, matrix: sp.csr_matrix) -> None:
    """``model.fit(matrix)``, implicit's numerical breakdowns a ConfigError naming ``label`` and the parameters."""
    from implicit.recommender_base import ModelFitError

    try:
        model.fit(matrix, show_progress=False)
    except (ModelFitError, ValueError) as err:
        if isinstance(err, ValueError) and "posv failed" not in str(err):
            raise
        names = [name for name in ("alpha", "regularization", "factors") if hasattr(model, name)]
        params = ", ".join(f"{name}={getattr(model, name)!r}" for name in names)
        raise ConfigError(
            f"{label}: implicit's {type(model).__name__} broke down ({err}) with {params}: use a smaller alpha or "
            "a larger regularization"
        ) from None


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
            m = train.to_csr(positive_ratings(train, self.threshold, type(self).__name__).astype(np.float32))
            m.eliminate_zeros()
            return m
        raise ConfigError(f"values={self.values!r} is not one of ['rating', 'ones', 'positive']")

    def _validate(self) -> None:
        """The parameters' rules (also applied by :func:`receval.recommenders.make`, before any data is read)."""
        for name in ("factors", "iterations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if not _integer(self.num_threads) or self.num_threads < 0:
            raise ConfigError(f"num_threads must be an integer >= 0 (0: all cores), got {self.num_threads!r}")
        if not (self.alpha > 0 and 0 <= self.regularization < np.inf):
            raise ConfigError("alpha must be > 0 and regularization >= 0 (finite)")
        if self.values not in ("rating", "ones", "positive"):
            raise ConfigError(f"values={self.values!r} is not one of ['rating', 'ones', 'positive']")
        check_implicit("", self.get_params())

    def fit(self, train: Interactions) -> HKV:
        from implicit.cpu.als import AlternatingLeastSquares

        self._validate()
        self._start_fit(train)
        matrix = self.confidence_matrix(train)
        check_implicit(type(self).__name__, {"alpha": self.alpha}, matrix.data.max() if matrix.nnz else None)
        self._check_factor_memory(
            int(self.factors), np.dtype(np.float32).itemsize, squares=solver_squares(self.use_cg, self.num_threads)
        )
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
            fit_implicit(type(self).__name__, model, matrix)
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
                fit_implicit(type(self).__name__, self.model_, matrix)
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
