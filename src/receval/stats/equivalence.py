"""Equivalence and non-inferiority of two systems over paired per-user values.

"Not significantly different" is not "as good": a small test set fails to reject any
difference. Equivalence is shown by two one-sided tests (TOST, Schuirmann 1987): the mean
difference ``a - b`` is above ``-margin`` *and* below ``+margin``, each one-sided paired
t-test at ``alpha``; the TOST p-value is the larger of the two, and equivalence holds at
``alpha`` exactly when the ``1 - 2 alpha`` t interval of the mean difference lies inside
``(-margin, margin)``. Non-inferiority is the first half alone: ``a`` is no worse than ``b``
by more than ``margin``.

A margin is absolute (``0.005``) or relative to the mean of ``b`` (``"1%"``), read by
:func:`parse_margin` / :func:`resolve_margin`.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> b = rng.uniform(0.2, 0.6, 2000)
>>> a = b + rng.normal(0.0, 0.02, 2000)
>>> r = tost_paired(a, b, margin=0.005)
>>> r.equivalent, r.pvalue < 0.05
(True, True)
>>> noninferiority_paired(a - 0.01, b, margin=0.005).noninferior
False
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from receval.errors import ConfigError, DataError
from receval.stats.power import check_alpha

__all__ = [
    "EquivalenceResult",
    "NonInferiorityResult",
    "noninferiority_paired",
    "parse_margin",
    "resolve_margin",
    "tost_paired",
]


def parse_margin(text: str | float) -> tuple[float, bool]:
    """``(value, relative)`` from ``"0.005"`` (absolute) or ``"1%"`` (relative: 0.01 of the baseline's mean).

    >>> parse_margin("1%"), parse_margin("0.005")
    ((0.01, True), (0.005, False))
    """
    raw = str(text).strip()
    relative = raw.endswith("%")
    try:
        value = float(raw[:-1] if relative else raw)
    except ValueError:
        raise ConfigError(f"--margin must be a number or a percentage such as 1%, got {text!r}") from None
    _check_margin(value, text)
    return (value / 100.0 if relative else value), relative


def _check_margin(margin: float, shown: object) -> None:
    if not (math.isfinite(margin) and margin > 0):
        raise ConfigError(f"--margin must be a finite number > 0, got {shown!r}; e.g. 0.005 or 1%")


def resolve_margin(margin: str | float, baseline_mean: float) -> float:
    """The absolute margin: a relative one times ``|baseline_mean|``.

    >>> resolve_margin("10%", 0.3)
    0.03
    """
    value, relative = parse_margin(margin)
    if not relative:
        return value
    out = round(value * abs(float(baseline_mean)), 15)
    if not out > 0:
        raise DataError(f"a relative margin {margin} of a baseline of mean {baseline_mean} is 0; give it absolute")
    return out


def _differences(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise DataError(f"paired samples must be two 1-d arrays of equal length, got shapes {x.shape} and {y.shape}")
    if len(x) < 2 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise DataError("equivalence needs at least 2 pairs of finite values; drop users with NaN first")
    return x - y


@dataclass(frozen=True)
class EquivalenceResult:
    """TOST: ``pvalue`` (the larger one-sided p), the two one-sided p-values and t's, the ``1 - 2 alpha`` interval."""

    margin: float
    mean_diff: float
    pvalue: float
    p_lower: float
    p_upper: float
    t_lower: float
    t_upper: float
    ci_low: float
    ci_high: float
    alpha: float
    n: int

    @property
    def equivalent(self) -> bool:
        """Whether equivalence is shown at ``alpha`` (the interval inside ``(-margin, margin)``)."""
        return bool(self.pvalue < self.alpha)


@dataclass(frozen=True)
class NonInferiorityResult:
    """Non-inferiority: the one-sided p-value of ``H0: mean(a - b) <= -margin`` and the ``1 - 2 alpha`` lower bound."""

    margin: float
    mean_diff: float
    pvalue: float
    statistic: float
    ci_low: float
    alpha: float
    n: int

    @property
    def noninferior(self) -> bool:
        """Whether ``a`` is shown no worse than ``b`` by more than ``margin`` at ``alpha``."""
        return bool(self.pvalue < self.alpha)


def _moments(d: np.ndarray) -> tuple[float, float, int]:
    n = len(d)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0.0:
        raise DataError("the per-user differences are all equal: equivalence is undefined (no variance)")
    return float(d.mean()), se, n - 1


def tost_paired(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    margin: float,
    alpha: float = 0.05,
) -> EquivalenceResult:
    """Two one-sided paired t-tests of ``-margin < mean(a - b) < margin``.

    Equal to ``statsmodels.stats.weightstats.ttost_paired(a, b, -margin, margin)`` (tested): its p-value and
    both one-sided t's and p's.

    Examples
    --------
    >>> r = tost_paired([0.50, 0.61, 0.40, 0.72], [0.51, 0.60, 0.42, 0.70], margin=0.05)
    >>> round(r.pvalue, 4), r.equivalent
    (0.006, True)
    """
    check_alpha(alpha)
    _check_margin(margin, margin)
    d = _differences(a, b)
    mean, se, df = _moments(d)
    t_lower = (mean + margin) / se
    t_upper = (mean - margin) / se
    p_lower = float(stats.t.sf(t_lower, df))
    p_upper = float(stats.t.cdf(t_upper, df))
    q = float(stats.t.isf(alpha, df))
    return EquivalenceResult(
        margin=float(margin),
        mean_diff=mean,
        pvalue=max(p_lower, p_upper),
        p_lower=p_lower,
        p_upper=p_upper,
        t_lower=float(t_lower),
        t_upper=float(t_upper),
        ci_low=mean - q * se,
        ci_high=mean + q * se,
        alpha=alpha,
        n=len(d),
    )


def noninferiority_paired(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    margin: float,
    alpha: float = 0.05,
) -> NonInferiorityResult:
    """One-sided paired t-test of ``H0: mean(a - b) <= -margin`` against ``mean(a - b) > -margin``.

    Equal to ``statsmodels.stats.weightstats.DescrStatsW(a - b).ttest_mean(-margin, alternative="larger")``
    (tested); ``ci_low`` is the lower bound of the ``1 - 2 alpha`` two-sided interval, above ``-margin``
    exactly when non-inferiority holds.

    Examples
    --------
    >>> r = noninferiority_paired([0.50, 0.61, 0.40, 0.72], [0.51, 0.60, 0.42, 0.70], margin=0.05)
    >>> round(r.pvalue, 4), r.noninferior
    (0.006, True)
    """
    check_alpha(alpha)
    _check_margin(margin, margin)
    d = _differences(a, b)
    mean, se, df = _moments(d)
    t = (mean + margin) / se
    q = float(stats.t.isf(alpha, df))
    return NonInferiorityResult(
        margin=float(margin),
        mean_diff=mean,
        pvalue=float(stats.t.sf(t, df)),
        statistic=float(t),
        ci_low=mean - q * se,
        alpha=alpha,
        n=len(d),
    )
