"""Rating-prediction error: RMSE and MAE, global and per user.

As defined by Xiang (Recommender System Practice, 2012, ch. 1); per user for the magic
barrier of Said & Bellogín (UMUAI 2018).

``rmse`` / ``mae`` default to the global value over all test predictions
(``agg=global``: sqrt(Σ(r − r̂)² / |T|) and Σ|r − r̂| / |T|); per user they are the
same formulas over the user's own predictions, and ``agg=macro`` averages those.
``round=true`` rounds predictions to the nearest step of the rating scale first
(``rating_step``, default 1), which lowers MAE on integer scales.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> from receval.metrics.registry import MetricInput, parse_metric
>>> preds = (np.array([0, 0, 1]), np.array([4.0, 2.0, 5.0]), np.array([3.0, 2.0, 4.0]))
>>> data = MetricInput(np.zeros((2, 0), dtype=int), sp.csr_matrix((2, 1)), predictions=preds)
>>> round(parse_metric("rmse").compute(data), 6), parse_metric("mae").per_user(data).tolist()
(0.816497, [0.5, 1.0])
>>> round(parse_metric("rmse(agg=macro)").compute(data), 6)
0.853553

``rating_auc`` reads the predictions as scores of relevance: the ROC AUC of all of them
pooled (scikit-learn's ``roc_auc_score`` over the test pairs, Microsoft Recommenders' ``auc``)
or, with ``agg=macro``, of each user's.
"""

from __future__ import annotations

import math

import numpy as np

from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput

__all__ = ["errors_of", "rating_auc"]


def errors_of(data: MetricInput, round: bool = False, rating_step: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(user rows, prediction errors r̂ − r) of the predictions in ``data``.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        The user row of each prediction and its error ``prediction - rating`` (predictions first rounded to the
        nearest multiple of ``rating_step`` when ``round``).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> preds = (np.array([0, 1, 1]), np.array([4.0, 2.0, 3.0]), np.array([3.75, 2.25, 3.0]))
    >>> data = MetricInput(np.zeros((2, 0), dtype=int), sp.csr_matrix((2, 1)), predictions=preds)
    >>> rows, errors = errors_of(data)
    >>> rows.tolist(), errors.tolist()
    ([0, 1, 1], [-0.25, 0.25, 0.0])
    >>> errors_of(data, round=True)[1].tolist()  # 3.75 and 2.25 round to 4 and 2
    [0.0, 0.0, 0.0]
    """
    if data.predictions is None:
        raise MetricError(
            "error metrics (rmse, mae) need rating predictions: pass predictions with a 'prediction' column"
        )
    rows, truth, pred = data.predictions
    pred = np.asarray(pred, dtype=np.float64)
    if round:
        if not rating_step > 0:
            raise MetricError(f"rating_step must be positive, got {rating_step}")
        pred = np.round(pred / rating_step) * rating_step
    return np.asarray(rows), pred - np.asarray(truth, dtype=np.float64)


def _summable(values: np.ndarray, err: np.ndarray, metric: str) -> np.ndarray:
    """``values`` (squared or absolute errors), whose sum float64 holds; else a MetricError: an error of 1e200 made
    rmse inf (and JSON's invalid ``Infinity``), silently."""
    with np.errstate(over="ignore"):
        total = float(np.sum(values))
    if not np.isfinite(total):
        raise MetricError(
            f"{metric}: prediction errors up to {float(np.max(np.abs(err))):g} overflow float64 when summed; the "
            "predictions are not on the ratings' scale: check them"
        )
    return values


def _per_user_mean(data: MetricInput, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    total = np.bincount(rows, weights=values, minlength=data.n_users)
    count = np.bincount(rows, minlength=data.n_users)
    return np.divide(total, count, out=np.full(data.n_users, np.nan), where=count > 0)


def _sq_parts(data: MetricInput, k: None, round: bool = False, rating_step: float = 1.0):
    _, err = errors_of(data, round, rating_step)
    with np.errstate(over="ignore"):
        return _summable(err**2, err, "rmse"), np.ones(len(err))


def _abs_parts(data: MetricInput, k: None, round: bool = False, rating_step: float = 1.0):
    _, err = errors_of(data, round, rating_step)
    return _summable(np.abs(err), err, "mae"), np.ones(len(err))


_DEFAULTS = {"round": False, "rating_step": 1.0}


@register_metric(
    "rmse",
    direction="lower",
    kind="error",
    k="none",
    defaults=_DEFAULTS,
    needs_predictions=True,
    micro=_sq_parts,
    transform=math.sqrt,
    description="Root mean squared error of rating predictions",
)
def rmse(data: MetricInput, k: None, round: bool = False, rating_step: float = 1.0) -> np.ndarray:
    """Per-user RMSE (NaN for users without predictions)."""
    rows, err = errors_of(data, round, rating_step)
    with np.errstate(over="ignore"):
        return np.sqrt(_per_user_mean(data, rows, _summable(err**2, err, "rmse")))


@register_metric(
    "mae",
    direction="lower",
    kind="error",
    k="none",
    defaults=_DEFAULTS,
    needs_predictions=True,
    micro=_abs_parts,
    description="Mean absolute error of rating predictions",
)
def mae(data: MetricInput, k: None, round: bool = False, rating_step: float = 1.0) -> np.ndarray:
    """Per-user MAE (NaN for users without predictions)."""
    rows, err = errors_of(data, round, rating_step)
    return _per_user_mean(data, rows, _summable(np.abs(err), err, "mae"))


def _auc_counts(
    keys: np.ndarray, positive: np.ndarray, groups: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per prediction of a positive: the negatives of its group scored below it (ties count ½), and each
    group's negatives. ``keys`` are the scores' dense ranks; ``groups`` 0 pools every prediction."""
    span = int(keys.max(initial=0)) + 2
    shifted = groups.astype(np.int64) * span + keys
    negatives = np.sort(shifted[~positive])
    mine = shifted[positive]
    base = groups[positive].astype(np.int64) * span
    below = np.searchsorted(negatives, mine, "left") - np.searchsorted(negatives, base, "left")
    tied = np.searchsorted(negatives, mine, "right") - np.searchsorted(negatives, mine, "left")
    n_negative = np.bincount(groups[~positive], minlength=int(groups.max(initial=0)) + 1)
    return below + 0.5 * tied, n_negative, groups[positive]


def _rating_auc_inputs(data: MetricInput, threshold: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if data.predictions is None:
        raise MetricError("rating_auc needs rating predictions: pass predictions with a 'prediction' column")
    rows, ratings, scores = (np.asarray(a) for a in data.predictions)
    positive = np.asarray(ratings, dtype=np.float64) >= (data.threshold if threshold is None else float(threshold))
    keys = np.unique(np.asarray(scores, dtype=np.float64), return_inverse=True)[1].astype(np.int64)
    return np.asarray(rows, dtype=np.int64), positive, keys


def _rating_auc_parts(data: MetricInput, k: None, threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    rows, positive, keys = _rating_auc_inputs(data, threshold)
    correct, n_negative, _ = _auc_counts(keys, positive, np.zeros(len(rows), dtype=np.int64))
    pooled = float(n_negative[0]) if len(n_negative) else 0.0
    # the pooled AUC as Σ_u (pairs ordered right) / Σ_u (pairs): each positive against every negative of any user
    num = np.bincount(rows[positive], weights=correct, minlength=data.n_users)
    den = np.bincount(rows[positive], minlength=data.n_users) * pooled
    return num, den.astype(np.float64)


@register_metric(
    "rating_auc",
    direction="higher",
    bounds=(0, 1),
    kind="error",
    k="none",
    defaults={"threshold": None},
    needs_predictions=True,
    micro=_rating_auc_parts,
    description="ROC AUC of rating predictions as scores of relevance (rating ≥ threshold)",
)
def rating_auc(data: MetricInput, k: None, threshold: float | None = None) -> np.ndarray:
    """ROC AUC of the predictions as scores for the test ratings' relevance (rating ≥ ``threshold``), ties ½.

    ``agg=global`` (the default) pools every user's predictions into one curve, as
    scikit-learn's ``roc_auc_score`` over the joined test pairs does: Microsoft
    Recommenders' ``auc``, RecBole's ``AUC``; per user (``agg=macro``) it ranks each
    user's predictions alone (NaN for a user without a relevant and a non-relevant pair).

    Returns
    -------
    numpy.ndarray
        Each user's AUC (NaN for a user without both classes); the global value is the metric's micro.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from receval.metrics.registry import parse_metric
    >>> preds = (np.array([0, 0, 1, 1]), np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.9, 0.2, 0.1, 0.05]))
    >>> data = MetricInput(np.zeros((2, 0), dtype=int), sp.csr_matrix((2, 1)), predictions=preds)
    >>> parse_metric("rating_auc").compute(data), rating_auc(data, None, threshold=1).tolist()
    (0.75, [1.0, 1.0])
    """
    rows, positive, keys = _rating_auc_inputs(data, threshold)
    correct, n_negative, groups = _auc_counts(keys, positive, rows)
    n_negative = np.pad(n_negative, (0, max(data.n_users - len(n_negative), 0)))
    num = np.bincount(groups, weights=correct, minlength=data.n_users)
    den = np.bincount(groups, minlength=data.n_users) * n_negative[: data.n_users]
    return np.divide(num, den, out=np.full(data.n_users, np.nan), where=den > 0)
