"""The simulator's random numbers: the jitted draws against scipy and numpy, seeding."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from receval.recommenders.bandits import _kernels as K
from receval.recommenders.bandits._rng import bounded, generator


@njit(cache=True)
def _draw(rng, kind, a, b, n):
    out = np.empty(n)
    for k in range(n):
        if kind == 0:
            out[k] = rng.beta(a, b)
        else:
            out[k] = bounded(rng, int(a))
    return out


# Jöhnk's branch (both shapes ≤ 1), the Gamma-ratio branch with a shape below and above 1,
# uniform, and the shapes of an arm seen hundreds of times
@pytest.mark.parametrize(("a", "b"), [(0.5, 0.5), (0.3, 1.0), (0.5, 3.0), (1.0, 1.0), (2.0, 5.0), (300.0, 20.0)])
def test_beta_matches_scipy(a, b):
    x = _draw(generator(4), 0, a, b, 100_000)
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-3
    assert x.min() > 0.0 and x.max() < 1.0


def test_jitted_draws_are_numpys_draws_and_share_its_state():
    rng = generator(7)
    inside = _draw(rng, 0, 2.0, 5.0, 1000)
    ref = np.random.default_rng(7)
    np.testing.assert_array_equal(inside, ref.beta(2.0, 5.0, 1000))
    # the kernel advanced the Generator the caller holds: the next Python draw continues the stream
    assert rng.random() == ref.random()
    assert generator(rng) is rng


def test_bounded_is_uniform_and_seeded():
    x = _draw(generator(5), 1, 7.0, 0.0, 70_000).astype(int)
    assert x.min() == 0 and x.max() == 6
    assert stats.chisquare(np.bincount(x)).pvalue > 1e-3
    again = _draw(generator(5), 1, 7.0, 0.0, 100)
    assert np.array_equal(again, x[:100].astype(float))
    assert not np.array_equal(_draw(generator(6), 1, 7.0, 0.0, 100), again)
    # 53 random bits: floor(U · n) with U the Generator's uniform
    np.testing.assert_array_equal(again, np.floor(np.random.default_rng(5).random(100) * 7))


@njit(cache=True)
def _decide_many(st, rng, cell, n):
    out = np.empty(n, np.int64)
    for j in range(n):
        out[j] = K.item_decide(st, rng, cell, np.uint8(3), 0, 0, cell.shape[1])
    return out


def test_thompson_decision_is_the_argmax_of_numpys_beta_draws():
    # the kernel's decision, draw for draw: numpy's Beta(a + o, b + o) for each available arm, then argmax
    a = np.array([3.0, 1.0, 7.0, 2.0, 0.5])
    b = np.array([2.0, 1.0, 9.0, 6.0, 0.5])
    cell = np.zeros((1, 5), np.uint8)
    cell[0, 3] = 1  # arm 3 is not available
    p = np.zeros(9)
    p[0], p[6] = K.THOMPSON, 1.0
    st = (a, b, p, np.zeros(5), np.zeros(5))
    picks = _decide_many(st, generator(3), cell, 200)
    ref = np.random.default_rng(3)
    keep = np.array([0, 1, 2, 4])
    expected = [keep[np.argmax([ref.beta(a[i] + 1.0, b[i] + 1.0) for i in keep])] for _ in range(200)]
    np.testing.assert_array_equal(picks, expected)
