"""The input bundle every metric reads: ranked lists, truth and side data on the same user rows.

:class:`MetricInput` holds the ranked lists (item indices padded with -1), the truth
(a users x items CSR of ratings) and the optional side data (training ratings, item
aspects, rating predictions), with the derived arrays metrics share (grades of the
ranked items, positives, negatives) computed once on first use.

Examples
--------
>>> import scipy.sparse as sp
>>> truth = sp.csr_matrix(np.array([[5.0, 0, 2]]))
>>> MetricInput(np.array([[2, 0]]), truth, threshold=4).positive.tolist()
[[False, True]]
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.data.interactions import RatingScale, Relevance, relevant
from receval.errors import MetricError

if TYPE_CHECKING:
    import scipy.sparse as sp

    from receval.data.csr import CSR

__all__ = ["MetricInput", "count_rows", "lookup", "spanned_scale"]


class MetricInput:
    """Everything a metric may look at, aligned on the same user rows.

    Parameters
    ----------
    rankings : int array (n_users, n)
        Item indices in rank order, padded with -1 at the end of short lists.
    truth : CSR (n_users x n_items)
        The held-out ratings (presence in the sparsity pattern = rated; explicit
        zeros kept): a scipy CSR matrix or a :class:`receval.data.csr.CSR` (what
        :func:`receval.evaluation.evaluate` passes: the ranking metrics read only its
        arrays, the metrics that need scipy convert it).
    threshold : float or None
        Positive (relevant) = rating ≥ threshold (:func:`receval.data.interactions.relevant`);
        without it (and without ``relevance``) the
        :meth:`~receval.data.interactions.RatingScale.relevance` of the scale the truth's
        ratings span (:func:`spanned_scale`; λ = 1 on the usual scales).
    negative_threshold : float
        Negative = rating < negative_threshold (≤ ``threshold``; by default ``threshold``);
        items rated in between are neither. Unrated recommended items are unknown, never negative.
    train : CSR (n_users x n_items) or None
        Training ratings of the same users (popularity, profiles).
    aspects : CSR (n_items x n_aspects, 0/1) or None
    rating_max : float or None
        Top of the rating scale (for gains normalised by it).
    predictions : tuple (user_rows, ratings, predictions) or None
        Rating predictions for error metrics, ``user_rows`` indexing the user rows.
    empty_users : {"skip", "zero"}
        Users with no relevant item in the truth: NaN (left out of the mean) or 0.
    train_all : CSR or None
        Training ratings of *all* users (for item popularity and G1); defaults to ``train``.
    propensities : mapping or None
        Propensity model name -> :class:`receval.metrics.debiased.Propensities` of the
        test ratings, for debiased estimators (``recall@10(estimator=ips)``).
    relevance : Relevance or None
        Both thresholds as the caller resolved them (:meth:`RatingScale.relevance
        <receval.data.interactions.RatingScale.relevance>` of the truth's declared scale, as
        :func:`receval.evaluation.evaluate` does); instead of ``threshold`` and ``negative_threshold``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> truth = sp.csr_matrix(np.array([[5.0, 0, 2], [0, 4, 0]]))
    >>> data = MetricInput(np.array([[0, 1], [2, -1]]), truth, threshold=4)
    >>> data.grades.tolist()
    [[5.0, nan], [nan, nan]]
    >>> data.positive.tolist(), data.n_positive.tolist()
    ([[True, False], [False, False]], [1, 1])
    """

    def __init__(
        self,
        rankings: np.ndarray,
        truth: CSR | sp.csr_matrix,
        *,
        threshold: float | None = None,
        negative_threshold: float | None = None,
        train: CSR | sp.csr_matrix | None = None,
        aspects: CSR | sp.csr_matrix | None = None,
        rating_max: float | None = None,
        predictions: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        empty_users: Literal["skip", "zero"] = "skip",
        train_all: CSR | sp.csr_matrix | None = None,
        propensities: Mapping[str, Any] | None = None,
        relevance: Relevance | None = None,
    ) -> None:
        self.rankings = np.asarray(rankings)
        self.truth = truth
        if relevance is None:  # the ratings' scale is read only when λ is not given
            scale = spanned_scale(truth) if threshold is None else RatingScale(1, 1)
            relevance = scale.relevance(threshold, negative_threshold)
        elif threshold is not None or negative_threshold is not None:
            raise MetricError("give relevance= or threshold= and negative_threshold=, not both")
        self.relevance = relevance
        self.threshold = relevance.threshold
        self.negative_threshold = relevance.negative_threshold
        self.train = train
        self.train_all = train if train_all is None else train_all
        self.aspects = aspects
        self.rating_max = rating_max
        self.predictions = predictions
        self.empty_users = empty_users
        self.propensities = dict(propensities or {})
        self.n_items = truth.shape[1]

    @property
    def n_users(self) -> int:
        return self.rankings.shape[0]

    @cached_property
    def valid(self) -> np.ndarray:
        """Boolean (n_users, n): the position holds an item (not padding)."""
        return self.rankings >= 0

    @cached_property
    def list_length(self) -> np.ndarray:
        """Number of recommended items of each user."""
        return self.valid.sum(axis=1)

    @cached_property
    def grades(self) -> np.ndarray:
        """Float32 (n_users, n): the truth rating of each ranked item, NaN if unrated or padding."""
        return lookup(self.truth, self.rankings)

    @cached_property
    def judged(self) -> np.ndarray:
        """Boolean (n_users, n): the ranked item is in the truth, whatever its grade (0 and negative grades too).

        >>> import scipy.sparse as sp
        >>> truth = sp.csr_matrix((np.array([0.0, -1.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 3))
        >>> MetricInput(np.array([[0, 1, 2, -1]]), truth).judged.tolist()
        [[True, True, False, False]]
        """
        return ~np.isnan(self.grades)

    @cached_property
    def positive(self) -> np.ndarray:
        """Boolean (n_users, n): the ranked item is rated ≥ threshold."""
        return relevant(self.grades, self.threshold)

    @cached_property
    def negative(self) -> np.ndarray:
        """Boolean (n_users, n): the ranked item is rated < negative_threshold."""
        return self.grades < self.negative_threshold

    @cached_property
    def n_positive(self) -> np.ndarray:
        """Number of truth items of each user rated ≥ threshold."""
        return count_rows(self.truth, relevant(self.truth.data, self.threshold))

    @cached_property
    def n_negative(self) -> np.ndarray:
        """Number of truth items of each user rated < negative_threshold."""
        return count_rows(self.truth, self.truth.data < self.negative_threshold)

    def positive_at(self, threshold: float) -> np.ndarray:
        """Like :attr:`positive` for another threshold (metrics with their own ``threshold``)."""
        return self.positive if threshold == self.threshold else relevant(self.grades, threshold)

    def n_positive_at(self, threshold: float) -> np.ndarray:
        """Like :attr:`n_positive` for another threshold."""
        if threshold == self.threshold:
            return self.n_positive
        return count_rows(self.truth, relevant(self.truth.data, threshold))

    @cached_property
    def item_popularity(self) -> np.ndarray:
        """Number of training ratings of each item (needs ``train``)."""
        if self.train_all is None:
            raise MetricError("this metric needs training data for item popularity; pass train=", parameters=["train"])
        return np.bincount(self.train_all.indices, minlength=self.n_items).astype(np.float64)

    @cached_property
    def n_train_users(self) -> int:
        """Number of users with at least one training rating (for popularity as a probability)."""
        assert self.train_all is not None
        return int(np.count_nonzero(np.diff(self.train_all.indptr)))


def spanned_scale(truth: CSR | sp.csr_matrix) -> RatingScale:
    """The rating scale the stored ratings span (:meth:`RatingScale.infer
    <receval.data.interactions.RatingScale.infer>`; 1..1 with none stored), for a truth given without its scale.

    >>> import scipy.sparse as sp
    >>> spanned_scale(sp.csr_matrix(np.array([[0.5, 5.0]]))).relevance().threshold
    0.5
    >>> spanned_scale(sp.csr_matrix((1, 2))).relevance().threshold
    1.0
    """
    return RatingScale.infer(truth.data) if truth.nnz else RatingScale(1, 1)


def lookup(matrix: CSR | sp.csr_matrix, columns: np.ndarray, *, budget: int = 1 << 21) -> np.ndarray:
    """Values ``matrix[row, columns[row, j]]`` as float32, NaN where absent or ``columns < 0``.

    Rows are processed in chunks: each chunk's sparse rows are scattered into a
    reused dense buffer of about ``budget`` cells, gathered with one ``take`` and
    cleared again — memory-bound and several times faster than a global search.
    The buffer spans the columns up to the last one holding a value (the evaluation
    numbers the truth's items first, so that over a catalogue of millions the items only
    lists name lie past it): many rows a chunk, not one row each over 5M columns.

    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.array([[1.0, 0, 3], [0, 0, 2]]))
    >>> lookup(m, np.array([[2, 1], [2, -1]])).tolist()
    [[3.0, nan], [2.0, nan]]
    >>> lookup(sp.csr_matrix(np.array([[1.0, 0, 0, 0]])), np.array([[3, 0, 2]])).tolist()  # past the last value
    [[nan, 1.0, nan]]
    """
    n_rows, width = columns.shape
    stored = matrix.indices[: matrix.indptr[-1]]
    n_cols = int(stored.max()) + 1 if len(stored) else 1  # no column past it holds a value
    out = np.empty((n_rows, width), dtype=np.float32)
    step = max(1, min(n_rows, budget // n_cols))
    dense = np.full(step * n_cols, np.nan, dtype=np.float32)
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data.astype(np.float32, copy=False)
    local_row = np.repeat(np.arange(n_rows, dtype=np.int64) % step, np.diff(indptr))
    flat = local_row * n_cols + indices
    offsets = np.arange(step, dtype=np.int64)[:, None] * n_cols
    invalid = (columns < 0) | (columns >= n_cols)
    for start in range(0, n_rows, step):
        stop = min(start + step, n_rows)
        cells = flat[indptr[start] : indptr[stop]]
        dense[cells] = data[indptr[start] : indptr[stop]]
        # an invalid column reads some other cell (clipped into the buffer): overwritten with NaN below
        np.take(dense, offsets[: stop - start] + columns[start:stop], out=out[start:stop], mode="clip")
        dense[cells] = np.nan
    out[invalid] = np.nan
    return out


def count_rows(matrix: CSR | sp.csr_matrix, mask: np.ndarray) -> np.ndarray:
    """Per-row count of stored entries selected by ``mask`` (aligned with ``matrix.data``)."""
    csum = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))
    return csum[matrix.indptr[1:]] - csum[matrix.indptr[:-1]]
