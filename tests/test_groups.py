"""User-group gaps (receval.stats.groups): hand-computed examples and scipy/statsmodels cross-checks.

References: scipy.stats 1.17.1 (ttest_ind equal_var=False, mannwhitneyu method="asymptotic", f_oneway,
kruskal) and statsmodels 0.15.0 (multipletests), both installed in the test environment.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from receval.errors import DataError
from receval.stats.groups import (
    align_groups,
    cohens_d_unpaired,
    group_gap,
    group_gaps,
    hedges_g,
    kruskal_test,
    mann_whitney_test,
    oneway_anova,
    welch_ttest,
)

samples = st.lists(st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 2)), min_size=3, max_size=30)


def test_welch_by_hand():
    # a = 1,2,3: mean 2, s² 1; b = 2,4,6,8: mean 5, s² 20/3; se² = 1/3 + 5/3 = 2; t = -3/√2
    t, p = welch_ttest([1.0, 2.0, 3.0], [2.0, 4.0, 6.0, 8.0])
    assert t == pytest.approx(-3 / np.sqrt(2), abs=1e-12)
    df = 4 / ((1 / 3) ** 2 / 2 + (5 / 3) ** 2 / 3)  # Welch–Satterthwaite by hand: 4.0755
    assert p == pytest.approx(2 * stats.t.sf(3 / np.sqrt(2), df), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(samples, samples)
def test_welch_equals_scipy(a, b):
    if np.var(a) == 0 and np.var(b) == 0:
        return
    t, p = welch_ttest(a, b)
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert t == pytest.approx(ref.statistic, rel=1e-9, abs=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(samples, samples)
def test_mann_whitney_equals_scipy(a, b):
    if len(set(a) | set(b)) == 1:
        return
    u, p = mann_whitney_test(a, b)
    ref = stats.mannwhitneyu(a, b, method="asymptotic")
    assert u == pytest.approx(ref.statistic, abs=1e-9)
    assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


def test_mann_whitney_by_hand():
    # every a below every b: U_a = 0; σ² = 3·4/12·8 = 8, z = (6 - 1/2)/√8
    u, p = mann_whitney_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0])
    assert u == 0.0
    assert p == pytest.approx(2 * stats.norm.sf(5.5 / np.sqrt(8)), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(samples, samples, samples)
def test_k_group_tests_equal_scipy(a, b, c):
    groups = [np.array(a), np.array(b), np.array(c)]
    if len(set(a) | set(b) | set(c)) > 1:
        h, p = kruskal_test(groups)
        ref = stats.kruskal(a, b, c)
        assert h == pytest.approx(ref.statistic, rel=1e-9) and p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)
    if sum(np.var(g) for g in groups) > 0:
        f, p = oneway_anova(groups)
        ref = stats.f_oneway(a, b, c)
        assert f == pytest.approx(ref.statistic, rel=1e-9, abs=1e-12)
        if abs(ref.statistic) < 1e-12:  # equal means up to rounding: scipy 1.17 can get F = -1.6e-32 and p = NaN
            assert f >= 0 and p == pytest.approx(1.0)
        else:
            assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


def test_anova_by_hand():
    # means 2, 3, 6, grand 11/3; SS_b = 3·((5/3)² + (2/3)² + (7/3)²) = 26; SS_w = 6; F = (26/2)/(6/6) = 13
    f, _ = oneway_anova([np.array([1.0, 2, 3]), np.array([2.0, 3, 4]), np.array([5.0, 6, 7])])
    assert f == pytest.approx(13.0)


def test_effect_sizes_by_hand():
    # means 2 and 5, both s² = 1: d = -3; g = -3·(1 - 3/(24 - 9)) = -2.4
    assert cohens_d_unpaired([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == pytest.approx(-3.0)
    assert hedges_g([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == pytest.approx(-2.4)


def test_two_group_gap_and_ci():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.4, 0.1, 300), rng.normal(0.3, 0.1, 200)
    values = np.concatenate([a, b])
    labels = ["F"] * 300 + ["M"] * 200
    r = group_gap(values, labels)
    assert r.values == {"F": pytest.approx(a.mean()), "M": pytest.approx(b.mean())}
    assert r.gap == pytest.approx(a.mean() - b.mean()) and r.gap_kind == "difference"
    # the within-group bootstrap interval is close to the normal one, gap ± 1.96 se, for 500 users
    se = np.sqrt(a.var(ddof=1) / 300 + b.var(ddof=1) / 200)
    assert r.ci == pytest.approx((r.gap - 1.96 * se, r.gap + 1.96 * se), abs=0.15 * 1.96 * se)
    assert r.p_value == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue)
    assert r.counts == {"F": 300, "M": 200}
    assert group_gap(values, labels, seed=3).ci == group_gap(values, labels, seed=3).ci  # same seed same bits
    perm = group_gap(values, labels, test="permutation", n_resamples=500)
    assert perm.p_value == pytest.approx(1 / 501)  # no shuffle reaches a gap 10 standard errors wide


def test_permutation_p_is_uniformish_under_null():
    # identical distributions: the permutation p-value should not be small; agrees with Welch's in size
    rng = np.random.default_rng(2)
    values = rng.random(80)
    labels = np.repeat(["a", "b"], 40)
    perm = group_gap(values, labels, test="permutation", n_resamples=4000).p_value
    welch = group_gap(values, labels).p_value
    assert abs(perm - welch) < 0.05


def test_three_groups_range():
    r = group_gap([0.2, 0.4, 0.3, 0.9, 0.8, 0.7, 0.5, 0.5, 0.6], list("aaabbbccc"))
    assert r.gap_kind == "range" and r.gap == pytest.approx(0.8 - 0.3)
    assert r.test == "one-way ANOVA F-test"
    groups = [np.array([0.2, 0.4, 0.3]), np.array([0.9, 0.8, 0.7]), np.array([0.5, 0.5, 0.6])]
    assert r.p_value == pytest.approx(stats.f_oneway(*groups).pvalue)
    assert r.effect_size == pytest.approx(hedges_g(groups[1], groups[0]))
    k = group_gap([0.2, 0.4, 0.3, 0.9, 0.8, 0.7, 0.5, 0.5, 0.6], list("aaabbbccc"), test="mannwhitney")
    assert k.p_value == pytest.approx(stats.kruskal(*groups).pvalue)


def test_group_gaps_corrected_like_statsmodels():
    rng = np.random.default_rng(4)
    table = pd.DataFrame({"user": np.arange(60), **{f"m{j}": rng.random(60) + 0.1 * j * (np.arange(60) < 30)
                                                    for j in range(4)}})  # fmt: skip
    groups = pd.Series(np.where(np.arange(60) < 30, "x", "y"), index=np.arange(60))
    gaps = group_gaps(table, groups, correction="holm")
    raw = [gaps[m].p_value for m in ["m0", "m1", "m2", "m3"]]
    expected = multipletests(raw, method="holm")[1]
    assert [gaps[m].p_value_adj for m in ["m0", "m1", "m2", "m3"]] == pytest.approx(expected)
    d = gaps["m3"].to_dict()
    assert list(d)[:4] == ["values", "gap", "p_value", "ci"]


def test_align_groups_policies():
    table = pd.DataFrame({"user": ["1", "2", "3", "4", "9"], "group": ["F", "F", "M", "M", "M"]})
    with pytest.warns(UserWarning, match=r"1 users in the user groups are not in the truth \(e\.g\. 9\)"):
        out = align_groups([1, 2, 3, 4, 5, 6], table, unknown_group="unknown")
    assert out.to_dict() == {1: "F", 2: "F", 3: "M", 4: "M", 5: "unknown", 6: "unknown"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DataError, match=r"^2 users of the truth have no group .*e\.g\. 5, 6.*--unknown-group"):
            align_groups([1, 2, 3, 4, 5, 6], table)
        with pytest.raises(DataError, match=r"two groups of at least 2 users of the truth; got unknown \(1\)"):
            align_groups([1, 2, 3, 4, 5], table, unknown_group="unknown")
    with pytest.raises(DataError, match="one group only"):
        align_groups([1, 2], pd.DataFrame({"user": [1, 2], "group": ["F", "F"]}))
    with pytest.raises(DataError, match="two groups"):
        align_groups([1, 2], pd.DataFrame({"user": [1, 1, 2], "group": ["F", "M", "M"]}))


def test_bad_groups():
    with pytest.raises(DataError, match="at least two groups"):
        group_gap([1.0, 2.0], ["a", "a"])
    with pytest.raises(DataError, match="at least 2 users"):
        group_gap([1.0, 2.0, 3.0], ["a", "a", "b"])
