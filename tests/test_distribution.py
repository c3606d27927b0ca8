"""The distribution of per-user utility (receval.stats.distribution): hand-computed values and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.errors import ConfigError
from receval.stats.distribution import (
    check_cvar_level,
    compare_to,
    cvar,
    cvar_test,
    describe,
    ecdf,
    gini,
    quantiles,
    risk_reward,
)

utilities = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=50)


def test_cvar_by_hand():
    x = [0.9, 0.1, 0.5, 0.3, 0.7]  # sorted 0.1 0.3 0.5 0.7 0.9
    assert cvar(x, 0.2) == pytest.approx(0.1)  # q n = 1: the worst user
    assert cvar(x, 0.4) == pytest.approx(0.2)  # q n = 2: mean of 0.1 and 0.3
    # q n = 1.5: the worst user whole, half of the second: (0.1 + 0.5 · 0.3) / 1.5
    assert cvar(x, 0.3) == pytest.approx(0.25 / 1.5)
    # q n = 0.5 < 1: the worst user alone, as the integral (1/q) ∫_0^q F⁻¹ is
    assert cvar(x, 0.1) == pytest.approx(0.1)


def _cvar_integral(x: np.ndarray, q: float) -> float:
    """(1/q) ∫_0^q F⁻¹(u) du for the empirical quantile function F⁻¹(u) = x_(⌈u n⌉), integrated piece by piece."""
    s = np.sort(x)
    n = len(s)
    edges = np.arange(n + 1) / n
    widths = np.clip(np.minimum(edges[1:], q) - edges[:-1], 0, None)
    return float((widths * s).sum() / q)


@settings(max_examples=100, deadline=None)
@given(utilities, st.floats(0.01, 1.0))
def test_cvar_is_the_rockafellar_uryasev_integral(x, q):
    assert cvar(x, q) == pytest.approx(_cvar_integral(np.array(x), q), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(utilities)
def test_cvar_at_one_is_the_mean_and_monotone(x):
    assert cvar(x, 1.0) == pytest.approx(np.mean(x), abs=1e-12)
    assert cvar(x, 0.1) <= cvar(x, 0.5) + 1e-12 <= cvar(x, 1.0) + 2e-12
    assert cvar(x, 0.1) >= min(x) - 1e-12


def test_cvar_level_checked():
    for bad in (0, -0.1, 1.5, float("nan")):
        with pytest.raises(ConfigError, match=r"must lie in \(0, 1\]"):
            check_cvar_level(bad)
    assert check_cvar_level(1) == 1.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40))
def test_gini_is_the_mean_absolute_difference_form(x):
    a = np.array(x)
    expected = 0.0 if a.sum() == 0 else np.abs(a[:, None] - a[None, :]).sum() / (2 * len(a) ** 2 * a.mean())
    assert gini(a) == pytest.approx(expected, abs=1e-9)


def test_gini_by_hand():
    # one user of four has all the utility: Σ|xi - xj| = 6, 2 n² mean = 2·16·0.25 = 8
    assert gini([0.0, 0.0, 0.0, 1.0]) == pytest.approx(0.75)
    assert gini([0.3] * 5) == pytest.approx(0.0, abs=1e-15)


def test_quantiles_and_ecdf():
    x = np.array([0.0, 0.0, 0.5, 1.0])
    assert quantiles(x, [0.5]).tolist() == [0.25]
    v, f = ecdf(x)
    assert v.tolist() == [0.0, 0.5, 1.0] and f.tolist() == [0.5, 0.75, 1.0]


def test_risk_reward_by_hand():
    r = risk_reward([0.5, 0.2, 0.0, 1.0], [0.3, 0.4, 0.0, 0.2])  # differences 0.2, -0.2, 0, 0.8
    assert r == pytest.approx({"helped": 0.5, "hurt": 0.25, "mean_gain": 0.25, "mean_loss": 0.05, "urisk": 0.15})
    assert risk_reward([0.5, 0.2, 0.0, 1.0], [0.3, 0.4, 0.0, 0.2], tolerance=0.5)["helped"] == 0.25
    # URisk with alpha = 0 is the mean difference
    assert risk_reward([0.5, 0.2], [0.1, 0.4], alpha=0)["urisk"] == pytest.approx(0.1)


def test_describe_intervals_seeded_and_covering():
    rng = np.random.default_rng(0)
    x = rng.beta(2, 5, 1000)
    d = describe(x, cvar_level=0.1, n_resamples=500, seed=7)
    assert d == describe(x, cvar_level=0.1, n_resamples=500, seed=7)  # same seed, same numbers
    assert d["cvar"] == pytest.approx(np.sort(x)[:100].mean())
    assert d["quantiles"][0.5] == pytest.approx(np.median(x))
    for key, point in [("mean", d["mean"]), ("cvar", d["cvar"]), ("gini", d["gini"]), ("q0.5", np.median(x))]:
        lo, hi = d["ci"][key]
        assert lo < point < hi
    # the interval of the mean is close to the normal one
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert d["ci"]["mean"] == pytest.approx([x.mean() - 1.96 * se, x.mean() + 1.96 * se], abs=0.2 * 1.96 * se)


def test_cvar_test_detects_a_tail_difference_the_mean_hides():
    rng = np.random.default_rng(3)
    base = rng.uniform(0.2, 0.8, 400)
    # b lifts the worst 10% by 0.1 and lowers the best by the same total: equal means, better tail
    order = np.argsort(base)
    better = base.copy()
    better[order[:40]] += 0.1
    better[order[-40:]] -= 0.1
    expected = np.sort(better)[:40].mean() - np.sort(base)[:40].mean()  # lifted users may pass others: < 0.1
    d, p = cvar_test(better, base, 0.1, n_resamples=1000)
    assert d == pytest.approx(expected) and d > 0.05 and p < 0.01
    r = compare_to(better, base, cvar_level=0.1, n_resamples=500)
    assert r["cvar_diff"] == pytest.approx(expected) and r["cvar_p_value"] < 0.01
    assert r["ci"]["cvar_diff"][0] > 0
    assert abs(r["mean_gain"] - r["mean_loss"]) < 1e-9  # equal means
    # two identical systems: nothing to find
    same, p_same = cvar_test(base, base, 0.1, n_resamples=200)
    assert same == 0.0 and p_same == 1.0


def test_cvar_test_null_is_not_anticonservative():
    # exchangeable pairs: over 40 draws, p < 0.05 should occur about twice, never a majority
    rng = np.random.default_rng(5)
    small = 0
    for _ in range(40):
        a, b = rng.random(100), rng.random(100)
        small += cvar_test(a, b, 0.2, n_resamples=199, seed=int(rng.integers(1 << 30)))[1] < 0.05
    assert small <= 6
