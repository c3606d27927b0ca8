"""Significance tests against scipy.stats; corrections against statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from receval.errors import DataError
from receval.stats.significance import (
    bootstrap_ci,
    cohens_d_paired,
    compare_systems,
    correct_pvalues,
    paired_ttest,
    permutation_test,
    wilcoxon_test,
)


def _pairs(seed: int, n: int, shift: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(0.4, 0.2, n)
    return a, a - rng.normal(shift, 0.1, n)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [5, 30, 400])
def test_ttest_equals_scipy(seed: int, n: int) -> None:
    a, b = _pairs(seed, n)
    ours = paired_ttest(a, b)
    ref = stats.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [6, 20, 50])
def test_wilcoxon_exact_equals_scipy(seed: int, n: int) -> None:
    a, b = _pairs(seed, n, shift=0.02)
    ours = wilcoxon_test(a, b)  # continuous data: no ties, n <= 50 -> exact
    ref = stats.wilcoxon(a, b, method="exact")
    assert ours.statistic == ref.statistic
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_wilcoxon_asymptotic_with_ties_and_zeros_equals_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, 300).astype(float)  # many ties and some zero differences
    b = rng.integers(0, 6, 300).astype(float)
    ours = wilcoxon_test(a, b, method="asymptotic")
    ref = stats.wilcoxon(a, b, method="asymptotic", zero_method="wilcox")
    assert ours.statistic == ref.statistic
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


# Both samples on a grid of eighths, so every difference and mean is exact in binary and
# ties are real ties. With float noise (e.g. differences [0, 1, 1.6e-13]) the test would
# compare tie tolerances instead: ours treats values within 1e-12 as ties (documented),
# scipy's relative tolerance is about 1e-14.
@given(st.lists(st.integers(-8, 8).map(lambda v: v / 8), min_size=3, max_size=9), st.integers(0, 10**6))
@settings(max_examples=40, deadline=None)
def test_exact_permutation_equals_scipy(diffs: list[float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    b = rng.integers(-16, 17, size=len(diffs)) / 8
    a = b + np.asarray(diffs)
    ours = permutation_test(a, b, n_resamples=10_000)
    ref = stats.permutation_test(
        (a, b), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    )
    assert ours.pvalue == pytest.approx(ref.pvalue, abs=1e-12)


def test_sampled_permutation_is_close_to_ttest_for_large_n() -> None:
    a, b = _pairs(3, 300, shift=0.01)
    perm = permutation_test(a, b, n_resamples=20_000, seed=1)
    assert perm.pvalue == pytest.approx(paired_ttest(a, b).pvalue, abs=0.02)
    assert permutation_test(a, b, n_resamples=2000, seed=5) == permutation_test(a, b, n_resamples=2000, seed=5)


@pytest.mark.parametrize("method", ["bonferroni", "holm", "bh"])
@pytest.mark.parametrize("seed", range(6))
def test_corrections_equal_statsmodels(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.05, 7), rng.uniform(0, 1, 13), [0.02, 0.02]])  # ties too
    ref = multipletests(p, method={"bh": "fdr_bh"}.get(method, method))[1]
    np.testing.assert_allclose(correct_pvalues(p, method=method), ref, rtol=1e-12)


def test_bootstrap_ci_matches_normal_theory_and_scipy() -> None:
    x = np.random.default_rng(0).normal(1.0, 2.0, 500)
    lo, hi = bootstrap_ci(x, n_resamples=20_000, seed=0)
    half = 1.96 * x.std(ddof=1) / np.sqrt(len(x))
    assert lo == pytest.approx(x.mean() - half, abs=0.03)
    assert hi == pytest.approx(x.mean() + half, abs=0.03)
    ref = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=20_000, rng=1).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.03) and hi == pytest.approx(ref.high, abs=0.03)


def test_cohens_d_and_bad_input() -> None:
    a, b = _pairs(1, 100)
    d = a - b
    assert cohens_d_paired(a, b) == pytest.approx(d.mean() / d.std(ddof=1))
    with pytest.raises(DataError, match="equal length"):
        paired_ttest([1.0, 2.0], [1.0])
    with pytest.raises(DataError, match="NaN"):
        wilcoxon_test([1.0, np.nan, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(DataError, match=r"\[0, 1\]"):
        correct_pvalues([0.5, 1.5])


def test_compare_systems_pairs_users_and_corrects() -> None:
    rng = np.random.default_rng(0)
    users = np.arange(60)
    base = rng.uniform(0, 1, 60)
    frames = []
    for name, shift in (("base", 0.0), ("better", 0.1), ("same", 0.0)):
        vals = base + shift + rng.normal(0, 0.05, 60)
        frames.append(pd.DataFrame({"system": name, "user": users, "value": vals}))
    df = pd.concat(frames).iloc[:-3]  # the last system misses 3 users
    out = compare_systems(df, baseline="base", test="wilcoxon", correction="bonferroni")
    assert set(out["a"]) == {"better", "same"}
    better = out.set_index("a").loc["better"]
    assert better["pvalue_adj"] < 1e-6 and better["ci_low"] > 0.05
    same = out.set_index("a").loc["same"]
    assert same["n"] == 57 and same["pvalue_adj"] == pytest.approx(min(1.0, 2 * same["pvalue"]))
    assert len(compare_systems(df)) == 3


def test_rank_agreement_against_scipy_and_directions() -> None:
    from receval.stats.significance import rank_agreement, system_agreement

    rng = np.random.default_rng(4)
    a, b = rng.random(12), rng.random(12)
    res = rank_agreement(a, b)
    assert res["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert res["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic)
    flipped = rank_agreement(a, b, higher_is_better=(True, False))
    assert flipped["kendall_tau"] == pytest.approx(-res["kendall_tau"])
    # recall-like and fallout-like metrics that rank 4 systems in opposite quality order
    recall, fallout = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.4, 0.3, 0.2, 0.1])
    assert rank_agreement(recall, fallout, higher_is_better=(True, False))["kendall_tau"] == -1.0
    long = pd.DataFrame(
        {"system": np.repeat(list("wxyz"), 2), "metric": ["r", "f"] * 4, "value": np.ravel([recall, fallout], "F")}
    )
    assert system_agreement(long, "r", "f")["spearman_rho"] == 1.0
    assert np.isnan(rank_agreement([1.0, 1.0], [0.0, 1.0])["kendall_tau"])  # a ranking of ties says nothing
