"""Power and sample size of a paired comparison over users (Sakai, "Topic set size design", IRJ 2016).

Given the standard deviation ``sd`` of the per-user differences ``d = a - b`` (from a pilot
comparison, or ``sqrt(2)`` times a baseline's per-user standard deviation, Sakai's
conservative choice when the two runs' correlation is unknown):

- :func:`ttest_power` — the power of the two-sided paired t-test to detect a mean difference
  ``effect`` at ``alpha`` with ``n`` users, in closed form from the noncentral t
  distribution (``df = n - 1``, noncentrality ``effect / sd * sqrt(n)``): both tails, as
  ``statsmodels.stats.power.TTestPower().power`` computes it;
- :func:`ttest_mde` — the smallest effect detected with probability ``power``;
- :func:`ttest_n_needed` — the fewest users that reach ``power`` (statsmodels' ``solve_power``
  for ``nobs`` returns the real root; this is its ceiling);
- :func:`resampled_power` — the power of any of receval's paired tests (``wilcoxon``,
  ``permutation``, ``ttest``) by seeded resampling of the pilot differences shifted to mean
  ``effect``.

Examples
--------
>>> round(ttest_power(0.01, sd=0.1, n=800), 3)
0.806
>>> round(ttest_mde(sd=0.1, n=800), 5)
0.00992
>>> ttest_n_needed(0.01, sd=0.1)
787
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special, stats

from receval.errors import ConfigError, DataError
from receval.stats.significance import TESTS
from receval.vocabulary import TEST_NAMES, TestName

__all__ = [
    "PowerResult",
    "check_alpha",
    "check_power",
    "power_analysis",
    "resampled_power",
    "ttest_mde",
    "ttest_n_needed",
    "ttest_power",
]

_MAX_USERS = 10**9  # beyond this no recommender test set exists; an effect that needs more is reported as such
# scipy's nct.sf sums a series whose length grows with the noncentrality: 0.01 s a call at 1e4, 0.2 s at 1e6, where
# it no longer converges (0.82 for 0.64); past this the power is one smooth integral (_far_power), as exact
_NCT_SERIES_MAX = 1e3


def check_alpha(alpha: float, option: str = "alpha") -> float:
    """``alpha`` as a float in (0, 1), or a one-line :class:`ConfigError` naming ``option``.

    >>> check_alpha(0.05)
    0.05
    """
    if not (isinstance(alpha, (int, float)) and 0.0 < float(alpha) < 1.0):
        raise ConfigError(f"{option} must lie in (0, 1), got {alpha!r}; e.g. 0.05")
    return float(alpha)


def check_power(power: float, option: str = "power") -> float:
    """``power`` as a float in (0, 1), or a one-line :class:`ConfigError` naming ``option``.

    >>> check_power(0.8)
    0.8
    """
    if not (isinstance(power, (int, float)) and 0.0 < float(power) < 1.0):
        raise ConfigError(f"{option} must lie in (0, 1), got {power!r}; e.g. 0.8")
    return float(power)


def _check_sd(sd: float) -> float:
    if not (math.isfinite(sd) and sd > 0):
        raise DataError(f"the per-user differences' standard deviation must be finite and > 0, got {sd!r}")
    return float(sd)


def ttest_power(effect: float, *, sd: float, n: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test: ``P(|T| > t_{1-alpha/2, n-1})`` with ``T ~ nct(n-1, effect/sd*sqrt(n))``.

    Equal to ``statsmodels.stats.power.TTestPower().power(effect/sd, n, alpha)`` (tested).

    Examples
    --------
    >>> round(ttest_power(0.0, sd=1.0, n=30), 3)  # no effect: the power is alpha
    0.05
    """
    check_alpha(alpha)
    sd = _check_sd(sd)
    if not n >= 2:
        raise DataError(f"power needs at least 2 users, got {n}")
    df = n - 1
    nc = abs(effect) / sd * math.sqrt(n)
    crit = stats.t.isf(alpha / 2, df)
    if nc > _NCT_SERIES_MAX and 0 < crit < math.inf:
        power = _far_power(crit, df, nc)
    else:
        with warnings.catch_warnings(), np.errstate(all="ignore"):  # its non-convergence is checked below
            warnings.simplefilter("ignore")
            # the lower tail as the upper tail of -T: scipy's nct.cdf returns NaN deep in the tail, its sf does not
            power = float(stats.nct.sf(crit, df, nc)) + float(stats.nct.sf(crit, df, -nc))
    if not (crit > 0 and 0.0 <= power <= 1.0 + 1e-9):  # t.isf is -inf below alpha ~1e-300; nct does not converge
        raise DataError(
            f"alpha={alpha:g} with {n:g} users puts the t-test's critical value at {crit:.3g}, past where the "
            "noncentral t distribution can be evaluated; give a larger alpha (e.g. 0.05)"
        )
    return power


def _far_power(crit: float, df: float, nc: float) -> float:
    """``P(|T| > crit)`` for ``T = (Z + nc) / sqrt(V / df)`` (Z normal, V chi-squared with ``df``), a noncentral t.

    ``|T| > crit`` is ``V < df ((Z + nc) / crit)^2``, so the power is the mean over Z of the chi-squared cdf there:
    an integral of a smooth function of Z, as fast (about 1 ms) and exact at any noncentrality. It agrees with
    scipy's series to 1e-13 at nc = 1e3 (used from there on, where the series slows down and then fails).

    >>> nc = 2e3
    >>> crit = stats.t.isf(0.025, 4)
    >>> abs(_far_power(crit, 4, nc) - float(stats.nct.sf(crit, 4, nc) + stats.nct.sf(crit, 4, -nc))) < 1e-12
    True
    """

    def mean(cdf: Callable[[float, float], float]) -> float:  # over Z; +-40: the normal density beyond is < 1e-300
        def at(z: float) -> float:
            return math.exp(-0.5 * z * z) * float(cdf(df, df * ((z + nc) / crit) ** 2))

        return integrate.quad(at, -40.0, 40.0, epsabs=1e-14, epsrel=1e-12, limit=200)[0] / math.sqrt(2.0 * math.pi)

    power = mean(special.chdtr)
    # a power near 1 from its complement: exactly 1.0 where the miss is below float precision, not 1 - 2e-16
    return power if power < 0.5 else 1.0 - mean(special.chdtrc)


def ttest_mde(*, sd: float, n: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest mean difference the two-sided paired t-test detects with probability ``power`` (n users).

    Equal to ``TTestPower().solve_power(nobs=n, alpha=alpha, power=power) * sd`` (tested).

    Examples
    --------
    >>> round(ttest_mde(sd=1.0, n=30), 4)
    0.5292
    """
    check_alpha(alpha)
    check_power(power)
    sd = _check_sd(sd)
    if power <= alpha:
        return 0.0  # every effect, even none, is detected this often
    hi = sd
    while ttest_power(hi, sd=sd, n=n, alpha=alpha) < power:
        hi *= 2
    return float(optimize.brentq(lambda e: ttest_power(e, sd=sd, n=n, alpha=alpha) - power, 0.0, hi, xtol=1e-12 * sd))


def ttest_n_needed(effect: float, *, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The fewest users with which the two-sided paired t-test reaches ``power`` for ``effect``.

    ``ceil`` of ``TTestPower().solve_power(effect_size=effect/sd, alpha=alpha, power=power)`` (tested); at
    least 2.

    Examples
    --------
    >>> ttest_n_needed(0.5, sd=1.0)
    34
    """
    check_alpha(alpha)
    check_power(power)
    sd = _check_sd(sd)
    if effect == 0:
        raise ConfigError("an effect of 0 cannot be detected with any number of users; give --effect > 0")
    lo, hi = 2, 4
    if ttest_power(effect, sd=sd, n=lo, alpha=alpha) >= power:
        return lo
    while ttest_power(effect, sd=sd, n=hi, alpha=alpha) < power:
        lo, hi = hi, hi * 2
        if hi > _MAX_USERS:
            raise DataError(f"effect {effect:g} needs more than {_MAX_USERS} users at power {power}")
    while hi - lo > 1:  # power grows with n: bisect on the integers
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ttest_power(effect, sd=sd, n=mid, alpha=alpha) < power else (lo, mid)
    return hi


def resampled_power(
    differences: Sequence[float] | np.ndarray,
    effect: float,
    *,
    n: int | None = None,
    test: TestName = "wilcoxon",
    alpha: float = 0.05,
    n_sims: int = 500,
    n_permutations: int = 500,
    seed: int = 0,
) -> float:
    """Power of a paired test by resampling: the share of ``n_sims`` samples of ``n`` users it rejects at ``alpha``.

    Each sample draws ``n`` users with replacement from the pilot ``differences`` shifted to mean
    ``effect`` (their shape kept, their mean set: the alternative the test must detect), and runs
    ``test`` (:data:`receval.vocabulary.TEST_NAMES`) on them against zero. Seeded: the same seed gives
    the same power.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> d = rng.normal(0.0, 1.0, 200)
    >>> p = resampled_power(d, 0.5, n=30, test="ttest", n_sims=400)
    >>> abs(p - ttest_power(0.5, sd=float(d.std(ddof=1)), n=30)) < 0.08
    True
    """
    check_alpha(alpha)
    if test not in TESTS:
        raise ConfigError(f"unknown test {test!r}; choose one of {', '.join(TEST_NAMES)}")
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2 or not np.all(np.isfinite(d)):
        raise DataError(f"power needs at least 2 finite per-user differences, got shape {d.shape}")
    size = len(d) if n is None else int(n)
    if size < 2:
        raise DataError(f"power needs at least 2 users, got {size}")
    shifted = d - d.mean() + effect
    rng = np.random.default_rng(seed)
    zeros = np.zeros(size)
    hits = 0
    for _ in range(n_sims):
        sample = shifted[rng.integers(0, len(d), size)]
        kwargs = {"n_resamples": n_permutations, "seed": rng} if test == "permutation" else {}
        p = TESTS[test](sample, zeros, **kwargs).pvalue
        hits += bool(p <= alpha)  # a NaN p-value (all differences equal) never rejects
    return hits / n_sims


@dataclass(frozen=True)
class PowerResult:
    """What :func:`power_analysis` returns (``n_needed`` None when no effect was given)."""

    n_users: int
    sd: float
    effect: float | None
    alpha: float
    target_power: float
    power: float | None
    mde: float
    n_needed: int | None
    test: str

    def to_dict(self) -> dict[str, object]:
        """The fields as a plain dict (the ``--json`` body of ``receval power``)."""
        return {
            "n_users": self.n_users,
            "power": self.power,
            "mde": self.mde,
            "n_needed": self.n_needed,
            "effect": self.effect,
            "alpha": self.alpha,
            "target_power": self.target_power,
            "sd": self.sd,
            "test": self.test,
        }


def power_analysis(
    differences: Sequence[float] | np.ndarray,
    *,
    effect: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    test: TestName = "ttest",
    n_sims: int = 500,
    seed: int = 0,
) -> PowerResult:
    """Power at the pilot's n, the minimum detectable effect and the users needed, from per-user differences.

    The paired t-test's figures are closed-form; for ``wilcoxon``/``permutation`` the power at n
    is :func:`resampled_power` (the MDE and users needed stay the t-test's, which these tests
    approach for large n; Sakai 2016 sizes topic sets by the t-test too).

    Examples
    --------
    >>> r = power_analysis(np.random.default_rng(0).normal(0.0, 0.1, 500), effect=0.01)
    >>> r.n_users, round(r.power, 2), r.n_needed > 500
    (500, 0.59, True)
    """
    check_alpha(alpha)
    check_power(power)
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2 or not np.all(np.isfinite(d)):
        raise DataError(f"power needs at least 2 finite per-user differences, got shape {d.shape}")
    if effect is not None and not (math.isfinite(effect) and effect > 0):
        raise ConfigError(f"--effect must be a finite number > 0, got {effect!r}")
    sd = float(d.std(ddof=1))
    n = len(d)
    mde = ttest_mde(sd=sd, n=n, alpha=alpha, power=power)
    at_n: float | None = None
    needed: int | None = None
    if effect is not None:
        if test == "ttest":
            at_n = ttest_power(effect, sd=sd, n=n, alpha=alpha)
        else:
            at_n = resampled_power(d, effect, test=test, alpha=alpha, n_sims=n_sims, seed=seed)
        needed = ttest_n_needed(effect, sd=sd, alpha=alpha, power=power)
    return PowerResult(n, sd, effect, alpha, power, at_n, mde, needed, test)
