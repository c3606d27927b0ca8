"""The simulator's random numbers: distributions against scipy, seeding."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from receval.recommenders.bandits._rng import beta, bounded, gamma, normal, seed_state


@njit(cache=True)
def _draw(s, kind, a, b, n):
    out = np.empty(n)
    for k in range(n):
        if kind == 0:
            out[k] = normal(s)
        elif kind == 1:
            out[k] = gamma(s, a)
        elif kind == 2:
            out[k] = beta(s, a, b)
        else:
            out[k] = bounded(s, int(a))
    return out


def test_normal_matches_scipy():
    x = _draw(seed_state(1), 0, 0.0, 0.0, 200_000)
    assert stats.kstest(x, stats.norm.cdf).pvalue > 1e-3
    tail = _draw(seed_state(2), 0, 0.0, 0.0, 2_000_000)
    # the ziggurat's base strip: P(|Z| > 3.44) = 5.8e-4
    assert abs(np.mean(np.abs(tail) > 3.442619855899) - 2 * stats.norm.sf(3.442619855899)) < 1e-4


@pytest.mark.parametrize("a", [0.3, 1.0, 2.5, 40.0])
def test_gamma_matches_scipy(a):
    x = _draw(seed_state(3), 1, a, 0.0, 100_000)
    assert stats.kstest(x, stats.gamma(a).cdf).pvalue > 1e-3


@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (2.0, 5.0), (0.5, 0.5), (300.0, 20.0)])
def test_beta_matches_scipy(a, b):
    x = _draw(seed_state(4), 2, a, b, 100_000)
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-3


def test_bounded_is_uniform_and_seeded():
    x = _draw(seed_state(5), 3, 7.0, 0.0, 70_000).astype(int)
    assert x.min() == 0 and x.max() == 6
    assert stats.chisquare(np.bincount(x)).pvalue > 1e-3
    again = _draw(seed_state(5), 3, 7.0, 0.0, 100)
    assert np.array_equal(again, x[:100].astype(float))
    assert not np.array_equal(_draw(seed_state(6), 3, 7.0, 0.0, 100), again)
