"""The simulator's random numbers: the jitted draws against scipy and numpy, seeding."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from receval.recommenders.bandits import _kernels as K
from receval.recommenders.bandits._rng import beta_sf, bounded, generator, log_beta_norm


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


@njit  # not cached: numba's cache would not see changes to the kernels it calls
def _decide_many(st, rng, cell, start, n):
    out = np.empty(n, np.int64)
    for j in range(n):
        st[6][0] = start  # the user's start level: 0 walks down the levels, L starts at τ = 0
        out[j] = K.item_decide(st, rng, cell, np.uint8(3), 0, 0, cell.shape[1])
    return out


def _thompson_state(a, b, offset, n_levels):
    p = np.zeros(11)
    p[0], p[6], p[10] = K.THOMPSON, offset, 1e9
    n = len(a)
    st = (a, b, p, np.zeros(n), np.zeros(n), np.zeros(n * n_levels), np.zeros(1), np.zeros(n_levels))
    K.item_keys(st)
    K.thompson_levels(st, generator(1))
    return st


def _argmax_probabilities(a, b):
    """P(arm i has the largest of independent Beta(a_j, b_j) draws), by quadrature."""
    from scipy import integrate

    dists = [stats.beta(x, y) for x, y in zip(a, b, strict=True)]
    out = []
    for i, d in enumerate(dists):
        others = [e for j, e in enumerate(dists) if j != i]
        out.append(integrate.quad(lambda x, d=d, o=others: d.pdf(x) * np.prod([e.cdf(x) for e in o]), 0, 1,
                                  limit=200, points=[d.mean()])[0])  # fmt: skip
    return np.array(out)


@pytest.mark.parametrize("start", [0, 1, 3])
def test_thompson_choice_distribution_is_exact(start):
    # confident strong arms, uncertain arms, a hopeless arm, one shape below 1; arm 3 unavailable
    a = np.array([30.0, 2.0, 14.0, 9.0, 1.0, 0.5, 1.0, 60.0])
    b = np.array([20.0, 1.0, 10.0, 3.0, 1.0, 0.5, 40.0, 45.0])
    st = _thompson_state(a.copy(), b.copy(), 0.0, 3)  # thresholds with 2, 6 and 18 (> 8 arms: 0) draws above
    assert 0.0 == st[7][2] < st[7][1] < st[7][0] < 1.0
    sf = [[stats.beta(x, y).sf(t) for t in st[7]] for x, y in zip(a, b, strict=True)]
    np.testing.assert_allclose(st[5].reshape(8, 3), sf, rtol=1e-9, atol=1e-14)
    cell = np.zeros((1, 8), np.uint8)
    cell[0, 3] = 1
    n = 30_000
    picks = _decide_many(st, generator(11 + start), cell, start, n)
    keep = np.array([0, 1, 2, 4, 5, 6, 7])
    expected = _argmax_probabilities(a[keep], b[keep])
    assert abs(expected.sum() - 1.0) < 1e-6
    counts = np.bincount(picks, minlength=8)
    assert counts[3] == 0
    assert stats.chisquare(counts[keep], expected * n / expected.sum()).pvalue > 1e-3


def test_beta_sf_matches_scipy_in_both_tails():
    for a, b, x in [(2.0, 3.0, 0.5), (0.5, 0.5, 0.999), (300.0, 20.0, 0.9), (3.0, 800.0, 0.05), (50.0, 500.0, 0.3),
                    (1.0, 2000.0, 0.01), (400.0, 300.0, 0.7), (5.0, 5.0, 0.0), (5.0, 5.0, 1.0)]:  # fmt: skip
        assert beta_sf(a, b, x, log_beta_norm(a, b)) == pytest.approx(stats.beta(a, b).sf(x), rel=1e-9, abs=1e-300)
