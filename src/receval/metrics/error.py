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
"""

from __future__ import annotations

import math

import numpy as np

from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput

__all__ = ["errors_of"]


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


def _per_user_mean(data: MetricInput, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    total = np.bincount(rows, weights=values, minlength=data.n_users)
    count = np.bincount(rows, minlength=data.n_users)
    return np.divide(total, count, out=np.full(data.n_users, np.nan), where=count > 0)


def _sq_parts(data: MetricInput, k: None, round: bool = False, rating_step: float = 1.0):
    _, err = errors_of(data, round, rating_step)
    return err**2, np.ones(len(err))


def _abs_parts(data: MetricInput, k: None, round: bool = False, rating_step: float = 1.0):
    _, err = errors_of(data, round, rating_step)
    return np.abs(err), np.ones(len(err))


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
    return np.sqrt(_per_user_mean(data, rows, err**2))


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
    return _per_user_mean(data, rows, np.abs(err))
