"""The simulator's random numbers: one seeded ``numpy.random.Generator`` used inside numba.

numba (≥ 0.56) compiles calls to a ``numpy.random.Generator`` passed into a jitted
function (``rng.random()``, ``rng.beta(a, b)``, ...) with numpy's own algorithms on
the Generator's bit generator: the kernels advance the very state the Python object
holds, and a draw inside a kernel is bit-identical to the same draw made by numpy.
Every kernel of the simulator draws from the one Generator :func:`generator` builds
from the caller's seed, never from a global one, so the same seed gives the same
trajectory in any process or executor.

Draws are numpy's: Beta(a, b) is Jöhnk's algorithm (Metrika, 1964) when a, b ≤ 1 and
``X / (X + Y)`` with Gamma variates by Marsaglia & Tsang (ACM TOMS, 2000) otherwise;
``tests/test_simulate_rng.py`` checks them against scipy (Kolmogorov–Smirnov) and
numpy. Thompson sampling, whose plain form makes one Beta draw per available arm and
decision (about 6·10⁸ for 500 rounds on MovieLens 100K), needs only the largest draw:
it places most arms below a threshold with one uniform each (see
:mod:`receval.recommenders.bandits._kernels`), through the survival function
:func:`beta_sf` — the regularised incomplete beta function by its continued fraction
(Press, Teukolsky, Vetterling & Flannery, Numerical Recipes, 3rd ed., 2007, §6.4).

(Until this version the simulator used its own xoshiro256** generator with a ziggurat
normal and drew every arm; the trajectories for a given seed changed with this version.)

Examples
--------
>>> from numba import njit
>>> @njit
... def draws(rng, n):
...     return np.array([rng.beta(2.0, 5.0) for _ in range(n)])
>>> bool(np.array_equal(draws(generator(0), 5), np.random.default_rng(0).beta(2.0, 5.0, 5)))
True
>>> @njit
... def dice(rng, n):
...     return [bounded(rng, 6) for _ in range(n)]
>>> dice(generator(1), 8) == dice(generator(1), 8)
True
>>> round(beta_sf(2.0, 3.0, 0.5, log_beta_norm(2.0, 3.0)), 12)  # P(X > ½), Beta(2, 3): 5/16
0.3125
"""

from __future__ import annotations

from math import lgamma

import numpy as np
from numba import int64, njit

__all__ = ["generator", "bounded", "log_beta_norm", "beta_sf"]


def generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """The simulator's Generator: ``seed`` itself when it is one, else ``numpy.random.default_rng(seed)``."""
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


@njit(inline="always", cache=True)
def bounded(rng, n):
    """Uniform integer in [0, n) from one 53-bit uniform (bias below n/2⁵³)."""
    return int64(rng.random() * n)


@njit(cache=True)
def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return h


@njit(cache=True)
def log_beta_norm(a, b):
    """log(1 / B(a, b)), the normalising constant of Beta(a, b) (callers may cache it)."""
    return lgamma(a + b) - lgamma(a) - lgamma(b)


@njit(cache=True)
def beta_sf(a, b, x, lnorm):
    """P(X > x) for X ~ Beta(a, b), ``lnorm`` = :func:`log_beta_norm` (a, b): 1 − I_x(a, b),
    the smaller tail computed directly by the continued fraction."""
    if x <= 0.0:
        return 1.0
    if x >= 1.0:
        return 0.0
    scale = np.exp(lnorm + a * np.log(x) + b * np.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return 1.0 - scale * _betacf(a, b, x) / a
    return scale * _betacf(b, a, 1.0 - x) / b
