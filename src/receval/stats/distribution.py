"""The distribution of per-user utility: quantiles, ECDF, Gini, CVaR of the worst-served users, risk–reward.

A mean hides who is served badly. After Ekstrand, Carterette & Diaz, "Distributionally-Informed
Recommender System Evaluation" (ACM TORS 2024), this module describes the per-user values of
one metric (one value per user):

- :func:`quantiles` (linear interpolation, ``numpy.quantile``'s default) and :func:`ecdf`;
- :func:`gini`: the Gini coefficient of per-user utility, ``Σ_i Σ_j |x_i - x_j| / (2 n² mean)``
  (0: every user served alike; values must be ≥ 0);
- :func:`cvar`: the conditional value at risk of the *lower* tail at level ``q`` — the mean
  utility of the worst-served ``q`` share of users. With ``q n`` fractional, the
  Rockafellar–Uryasev form (J. Risk 2000; the integral ``(1/q) ∫_0^q F⁻¹(u) du`` of the
  empirical quantile function) counts the ``⌊q n⌋`` worst users whole and the next one
  with weight ``q n - ⌊q n⌋``: ``CVaR_q = (Σ_{i ≤ ⌊qn⌋} x_(i) + (qn - ⌊qn⌋) x_(⌊qn⌋+1)) / (q n)``.
  ``CVaR_1`` is the mean;
- :func:`risk_reward` of a system against a baseline over the same users: shares of users
  helped and hurt (difference above / below ``tolerance``), the mean gain and mean loss
  (sums of positive and negative differences over all ``n`` users, so ``gain - loss`` is the
  mean difference) and URisk ``gain - (1 + alpha) loss`` (Wang, Bennett & Collins, SIGIR
  2012; GeoRisk, Dinçer, Macdonald & Ounis, SIGIR 2016, builds on it);
- :func:`cvar_test`: a paired test of ``CVaR_q(a) - CVaR_q(b)`` — the per-user values of the two
  systems are swapped at random (the null: the systems are exchangeable for every user),
  ``p = (1 + hits) / (1 + n_resamples)`` — with a paired bootstrap interval of the difference.

Each statistic comes with a seeded percentile bootstrap interval (users resampled with
replacement; pairs kept together against a baseline) in :func:`describe` and :func:`compare_to`.

Examples
--------
>>> x = [0.0, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0, 1.0]
>>> cvar(x, 0.2), cvar(x, 0.25), round(cvar(x, 1.0), 6) == round(sum(x) / 10, 6)
(0.0, 0.04, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from receval.errors import ConfigError, DataError

__all__ = [
    "DEFAULT_QUANTILES",
    "check_cvar_level",
    "compare_to",
    "cvar",
    "cvar_test",
    "describe",
    "ecdf",
    "gini",
    "quantiles",
    "risk_reward",
]

DEFAULT_QUANTILES: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 0.9)
"""The per-user utility quantiles reported when none are asked for."""


def check_cvar_level(q: float, where: str = "the CVaR level") -> float:
    """``q`` when it lies in (0, 1], else a one-line ConfigError naming ``where``.

    >>> check_cvar_level(0.1)
    0.1
    >>> check_cvar_level(0)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: the CVaR level must lie in (0, 1] (the worst q share of users), got 0
    """
    if not (isinstance(q, int | float) and 0 < q <= 1):
        raise ConfigError(f"{where} must lie in (0, 1] (the worst q share of users), got {q}")
    return float(q)


def _values(x: Sequence[float] | np.ndarray, name: str = "per-user values") -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or len(a) == 0:
        raise DataError(f"{name} must be a non-empty 1-d array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise DataError(f"{name} hold NaN or infinite values; drop the users a metric leaves undefined first")
    return a


def quantiles(values: Sequence[float] | np.ndarray, qs: Sequence[float] = DEFAULT_QUANTILES) -> np.ndarray:
    """Per-user utility quantiles (``numpy.quantile``, linear interpolation).

    >>> quantiles([0.0, 1.0, 2.0, 3.0, 4.0], [0.25, 0.5]).tolist()
    [1.0, 2.0]
    """
    return np.quantile(_values(values), np.asarray(qs, dtype=np.float64))


def ecdf(values: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The empirical CDF: distinct values ``x`` and ``F(x)``, the share of users at most ``x``.

    >>> [v.tolist() for v in ecdf([0.5, 0.0, 0.5, 1.0])]
    [[0.0, 0.5, 1.0], [0.25, 0.75, 1.0]]
    """
    x = _values(values)
    distinct, counts = np.unique(x, return_counts=True)
    return distinct, np.cumsum(counts) / len(x)


def _gini_rows(s: np.ndarray) -> np.ndarray:
    """Gini of each row of ``s`` (sorted within), from the sorted form ``Σ (2i - n - 1) x_(i) / (n Σ x)``."""
    s = np.sort(s, axis=-1)
    n = s.shape[-1]
    total = s.sum(axis=-1)
    weights = 2 * np.arange(1, n + 1) - n - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        g = (s * weights).sum(axis=-1) / (n * total)
    return np.where(total > 0, g, 0.0)


def gini(values: Sequence[float] | np.ndarray) -> float:
    """Gini coefficient of per-user utility: ``Σ_i Σ_j |x_i - x_j| / (2 n² mean)``; 0 when every value is 0.

    >>> gini([1.0, 1.0, 1.0]), round(gini([0.0, 0.0, 0.0, 1.0]), 4)
    (0.0, 0.75)
    """
    x = _values(values)
    if np.any(x < 0):
        raise DataError("the Gini of per-user utility needs values ≥ 0 (a metric such as nDCG or recall)")
    return float(_gini_rows(x))


def _cvar_rows(s: np.ndarray, q: float) -> np.ndarray:
    """CVaR at ``q`` of each row of ``s`` (Rockafellar–Uryasev weights on the sorted values)."""
    s = np.sort(s, axis=-1)
    n = s.shape[-1]
    qn = q * n
    whole = int(np.floor(qn + 1e-9))  # q n = 3 read from 0.30000000000000004 * 10 is 3
    frac = qn - whole if qn - whole > 1e-9 else 0.0
    total = s[..., :whole].sum(axis=-1)
    if frac > 0:
        total = total + frac * s[..., whole]
    return total / qn


def cvar(values: Sequence[float] | np.ndarray, q: float = 0.1) -> float:
    """Mean utility of the worst-served ``q`` share of users (lower-tail CVaR, Rockafellar–Uryasev form).

    ``CVaR_q = (Σ_{i ≤ ⌊qn⌋} x_(i) + (qn - ⌊qn⌋) x_(⌊qn⌋+1)) / (q n)`` over the sorted values;
    ``cvar(x, 1)`` is the mean.

    >>> cvar([4.0, 1.0, 3.0, 2.0], 0.5), cvar([4.0, 1.0, 3.0, 2.0], 0.375)
    (1.5, 1.3333333333333333)
    """
    return float(_cvar_rows(_values(values), check_cvar_level(q)))


def _pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = _values(a, "the system's values"), _values(b, "the baseline's values")
    if len(x) != len(y):
        raise DataError(f"a paired comparison needs the same users, got {len(x)} and {len(y)} values")
    return x, y


def _risk_reward_rows(d: np.ndarray, tolerance: float, alpha: float) -> dict[str, np.ndarray]:
    n = d.shape[-1]
    gain = np.where(d > 0, d, 0.0).sum(axis=-1) / n
    loss = np.where(d < 0, -d, 0.0).sum(axis=-1) / n
    return {
        "helped": (d > tolerance).mean(axis=-1),
        "hurt": (d < -tolerance).mean(axis=-1),
        "mean_gain": gain,
        "mean_loss": loss,
        "urisk": gain - (1 + alpha) * loss,
    }


def risk_reward(
    values: Sequence[float] | np.ndarray,
    baseline: Sequence[float] | np.ndarray,
    *,
    tolerance: float = 0.0,
    alpha: float = 1.0,
) -> dict[str, float]:
    """Risk–reward of a system against a baseline over the same users (same order).

    ``helped``/``hurt``: shares of users whose difference ``values - baseline`` is above
    ``tolerance`` / below ``-tolerance``; ``mean_gain``/``mean_loss``: the positive and
    negative differences summed over the users and divided by all ``n`` (``mean_gain -
    mean_loss`` is the mean difference); ``urisk = mean_gain - (1 + alpha) mean_loss``.

    >>> risk_reward([0.5, 0.2, 0.0, 1.0], [0.3, 0.4, 0.0, 0.2])
    {'helped': 0.5, 'hurt': 0.25, 'mean_gain': 0.25, 'mean_loss': 0.05, 'urisk': 0.15}
    """
    x, y = _pair(values, baseline)
    return {k: round(float(v), 12) for k, v in _risk_reward_rows(x - y, tolerance, alpha).items()}


def _bootstrap(
    columns: Sequence[np.ndarray],
    statistic: Callable[..., dict[str, np.ndarray]],
    confidence: float,
    n_resamples: int,
    seed: int,
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of every statistic, users resampled with replacement (the columns kept together)."""
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}")
    n = len(columns[0])
    rng = np.random.default_rng(seed)
    draws: dict[str, list[np.ndarray]] = {}
    step = max(1, 2_000_000 // n)
    for start in range(0, n_resamples, step):
        idx = rng.integers(0, n, size=(min(step, n_resamples - start), n))
        for key, v in statistic(*(c[idx] for c in columns)).items():
            draws.setdefault(key, []).append(np.broadcast_to(v, idx.shape[:1]))
    alpha = (1 - confidence) / 2
    out = {}
    for key, parts in draws.items():
        lo, hi = np.quantile(np.concatenate(parts), [alpha, 1 - alpha])
        out[key] = (float(lo), float(hi))
    return out


def describe(
    values: Sequence[float] | np.ndarray,
    *,
    cvar_level: float = 0.1,
    qs: Sequence[float] = DEFAULT_QUANTILES,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> dict[str, Any]:
    """Mean, quantiles, Gini (values ≥ 0) and CVaR at ``cvar_level`` of one system's per-user values, with intervals.

    Returns
    -------
    dict
        ``{"n", "mean", "quantiles": {q: value}, "cvar", "cvar_level", "gini", "ci": {name: [lo, hi]}}``; ``ci``
        holds the percentile bootstrap interval of ``mean``, ``cvar``, ``gini`` and each quantile (key ``q0.1`` …).

    Examples
    --------
    >>> d = describe([0.0, 0.1, 0.5, 0.9, 1.0] * 20, cvar_level=0.2, n_resamples=200)
    >>> d["cvar"], d["quantiles"][0.5], d["ci"]["cvar"][0] <= d["cvar"] <= d["ci"]["cvar"][1]
    (0.0, 0.5, True)
    """
    x = _values(values)
    q = check_cvar_level(cvar_level)
    levels = np.asarray(qs, dtype=np.float64)
    nonneg = bool(np.all(x >= 0))

    def stat(s: np.ndarray) -> dict[str, np.ndarray]:
        out = {"mean": s.mean(axis=-1), "cvar": _cvar_rows(s, q)}
        if nonneg:
            out["gini"] = _gini_rows(s)
        for level, v in zip(levels, np.quantile(s, levels, axis=-1), strict=True):
            out[f"q{level:g}"] = v
        return out

    point = {k: float(v) for k, v in stat(x).items()}
    return {
        "n": len(x),
        "mean": point["mean"],
        "quantiles": {float(level): point[f"q{level:g}"] for level in levels},
        "cvar": point["cvar"],
        "cvar_level": q,
        "gini": point.get("gini"),
        "ci": {k: list(v) for k, v in _bootstrap([x], stat, confidence, n_resamples, seed).items()},
    }


def cvar_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    q: float = 0.1,
    *,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Paired randomisation test of ``CVaR_q(a) - CVaR_q(b)`` over the same users: ``(difference, p)``.

    Each user's two values are swapped with probability 1/2 (the null hypothesis: for every
    user the two systems' values are exchangeable); ``p = (1 + #{|D*| ≥ |D|}) / (1 + n_resamples)``.

    >>> d, p = cvar_test([0.3, 0.4, 0.5, 0.6] * 25, [0.0, 0.4, 0.5, 0.6] * 25, 0.25, n_resamples=500)
    >>> round(d, 4), p < 0.01
    (0.3, True)
    """
    x, y = _pair(a, b)
    level = check_cvar_level(q)
    observed = float(_cvar_rows(x, level) - _cvar_rows(y, level))
    tol = 1e-12 * max(1.0, abs(observed))
    rng = np.random.default_rng(seed)
    n = len(x)
    hits = 0
    step = max(1, 1_000_000 // n)
    for start in range(0, n_resamples, step):
        swap = rng.integers(0, 2, size=(min(step, n_resamples - start), n), dtype=np.int8).astype(bool)
        d = _cvar_rows(np.where(swap, y, x), level) - _cvar_rows(np.where(swap, x, y), level)
        hits += int(np.sum(np.abs(d) >= abs(observed) - tol))
    return observed, (1 + hits) / (1 + n_resamples)


def compare_to(
    values: Sequence[float] | np.ndarray,
    baseline: Sequence[float] | np.ndarray,
    *,
    cvar_level: float = 0.1,
    tolerance: float = 0.0,
    alpha: float = 1.0,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> dict[str, Any]:
    """Risk–reward against ``baseline`` and the CVaR difference with its paired test, each with a paired interval.

    Returns
    -------
    dict
        :func:`risk_reward`'s keys, ``cvar_diff`` (``CVaR(values) - CVaR(baseline)``), ``cvar_p_value``
        (:func:`cvar_test`) and ``ci``: ``{name: [lo, hi]}`` from one paired bootstrap (users resampled, pairs kept).

    Examples
    --------
    >>> r = compare_to([0.5, 0.2, 0.0, 1.0] * 10, [0.3, 0.4, 0.0, 0.2] * 10, cvar_level=0.25, n_resamples=200)
    >>> r["helped"], r["hurt"], r["cvar_diff"], r["ci"]["helped"][0] <= 0.5 <= r["ci"]["helped"][1]
    (0.5, 0.25, 0.0, True)
    """
    x, y = _pair(values, baseline)
    q = check_cvar_level(cvar_level)

    def stat(s: np.ndarray, t: np.ndarray) -> dict[str, np.ndarray]:
        return {**_risk_reward_rows(s - t, tolerance, alpha), "cvar_diff": _cvar_rows(s, q) - _cvar_rows(t, q)}

    point = {k: round(float(v), 12) for k, v in stat(x, y).items()}
    _, p = cvar_test(x, y, q, n_resamples=n_resamples, seed=seed)
    intervals = _bootstrap([x, y], stat, confidence, n_resamples, seed)
    return {**point, "cvar_p_value": p, "ci": {k: list(v) for k, v in intervals.items()}}
