"""Statistics for comparing systems over paired per-user values.

Every test takes two equally long arrays ``a`` and ``b`` holding the same users' values
for two systems (one value per user, same order) and returns a :class:`PairedResult`.
The tests are written here from their textbook definitions (scipy supplies only the
reference distributions) and are cross-checked against ``scipy.stats`` in the test
suite; the multiple-comparison corrections against ``statsmodels``.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> a = rng.normal(0.30, 0.1, 200)
>>> b = a - rng.normal(0.02, 0.05, 200)
>>> r = paired_ttest(a, b)
>>> round(r.statistic, 3), r.pvalue < 1e-3
(4.286, True)
>>> correct_pvalues([0.01, 0.04, 0.03], method="holm").round(3).tolist()
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from receval.errors import ConfigError, DataError
from receval.vocabulary import CORRECTION_NAMES, STATISTIC_NAMES, TEST_NAMES, Correction, TestName

__all__ = [
    "PairedResult",
    "paired_ttest",
    "wilcoxon_test",
    "permutation_test",
    "bootstrap_ci",
    "cohens_d_paired",
    "correct_pvalues",
    "compare_systems",
    "rank_agreement",
    "system_agreement",
    "TESTS",
    "TEST_NAMES",
    "STATISTIC_NAMES",
    "CORRECTION_NAMES",
    "TestName",
    "Correction",
]

_PATTERN_CELLS = 2_000_000  # sign-pattern cells of the exact permutation test held at once (16 MB)


@dataclass(frozen=True)
class PairedResult:
    """Outcome of a paired test: statistic, two-sided p-value, mean difference ``a - b``, n."""

    statistic: float
    pvalue: float
    mean_diff: float
    n: int


def _paired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise DataError(f"paired samples must be two 1-d arrays of equal length, got shapes {x.shape} and {y.shape}")
    if len(x) < 2:
        raise DataError(f"a paired test needs at least 2 pairs, got {len(x)}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise DataError("paired samples contain NaN or infinite values; drop those users first")
    return x - y


def paired_ttest(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> PairedResult:
    """Two-sided paired t-test: ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom.

    Equals ``scipy.stats.ttest_rel(a, b)``. Constant differences (zero variance) leave the
    test undefined: ``statistic`` and ``pvalue`` are NaN.

    Returns
    -------
    PairedResult
        ``statistic`` (t), the two-sided ``pvalue``, ``mean_diff`` (mean of ``a - b``) and ``n`` (pairs).

    Examples
    --------
    >>> round(paired_ttest([1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 2.5, 4.0]).pvalue, 4)
    0.0917
    """
    d = _paired(a, b)
    n = len(d)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return PairedResult(float("nan"), float("nan"), mean, n)
    t = mean / (sd / np.sqrt(n))
    p = float(2.0 * stats.t.sf(abs(t), n - 1))
    return PairedResult(float(t), min(p, 1.0), mean, n)


def _signed_rank_exact_cdf(n: int) -> np.ndarray:
    """Counts of each signed-rank sum 0..n(n+1)/2 over the 2**n sign patterns (no ties)."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1, dtype=np.float64)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[: top + 1 - r].copy()
    return counts / counts.sum()


def wilcoxon_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    method: Literal["auto", "exact", "asymptotic"] = "auto",
) -> PairedResult:
    """Two-sided Wilcoxon signed-rank test on ``d = a - b`` (zero differences dropped).

    The statistic is ``min(R+, R-)``. ``method="auto"`` uses the exact null distribution
    when at most 50 non-zero differences remain and none are tied, otherwise the normal
    approximation with the tie correction (no continuity correction). Equals
    ``scipy.stats.wilcoxon(a, b, method=...)`` for ``"exact"`` (no ties) and ``"asymptotic"``.

    Returns
    -------
    PairedResult
        ``statistic`` (``min(R+, R-)``), the two-sided ``pvalue``, ``mean_diff`` (mean of ``a - b``) and ``n`` (all
        pairs, zero differences included).

    Examples
    --------
    >>> round(wilcoxon_test([1.1, 2.2, 3.3, 4.4, 5.6], [1.0, 2.0, 3.0, 4.0, 5.0]).pvalue, 4)
    0.0625
    """
    d = _paired(a, b)
    mean = float(d.mean())
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return PairedResult(float("nan"), float("nan"), mean, len(_paired(a, b)))
    ranks = stats.rankdata(np.abs(d))
    r_plus = float(ranks[d > 0].sum())
    r_minus = float(ranks[d < 0].sum())
    t = min(r_plus, r_minus)
    _, tie_counts = np.unique(ranks, return_counts=True)
    has_ties = bool(np.any(tie_counts > 1))
    if method == "auto":
        method = "exact" if n <= 50 and not has_ties else "asymptotic"
    if method == "exact":
        pmf = _signed_rank_exact_cdf(n)
        k = int(round(t))
        p = 2.0 * min(pmf[: k + 1].sum(), pmf[k:].sum())
    elif method == "asymptotic":
        mu = n * (n + 1) / 4.0
        var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(tie_counts**3 - tie_counts)) / 48.0
        z = (t - mu) / np.sqrt(var)
        p = 2.0 * float(stats.norm.sf(abs(z)))
    else:
        raise ConfigError(f"unknown Wilcoxon method {method!r}; use 'auto', 'exact' or 'asymptotic'")
    return PairedResult(t, float(min(p, 1.0)), mean, len(_paired(a, b)))


def permutation_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> PairedResult:
    """Two-sided paired randomisation test: random sign flips of the differences.

    The statistic is the mean difference; the p-value is the share of sign patterns
    whose ``|mean|`` is at least the observed one (within 1e-12, relative to the observed
    value when it exceeds 1: float noise does not break ties). When ``2**n <= n_resamples`` every
    pattern is enumerated (exact test, as ``scipy.stats.permutation_test`` does);
    otherwise ``n_resamples`` random patterns are drawn and ``p = (1 + hits) / (1 + n_resamples)``.

    Returns
    -------
    PairedResult
        ``statistic`` (the mean difference), the two-sided ``pvalue``, ``mean_diff`` and ``n`` (pairs).

    Examples
    --------
    >>> permutation_test([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]).pvalue
    0.25
    """
    d = _paired(a, b)
    n = len(d)
    observed = abs(d.mean())
    tol = 1e-12 * max(1.0, observed)
    if n <= 30 and 2**n <= n_resamples:
        hits = 0
        step = max(1, _PATTERN_CELLS // n)  # patterns in chunks: all 2^30 at once were 240 GiB
        for start in range(0, 2**n, step):
            codes = np.arange(start, min(2**n, start + step))
            patterns = ((codes[:, None] >> np.arange(n)) & 1) * 2 - 1
            hits += int(np.count_nonzero(np.abs(patterns @ d) / n >= observed - tol))
        p = hits / 2**n
    else:
        rng = np.random.default_rng(seed)
        hits = 0
        done = 0
        while done < n_resamples:  # chunks keep memory bounded for many users
            m = min(n_resamples - done, max(1, 2_000_000 // n))
            signs = rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1
            hits += int(np.sum(np.abs(signs @ d) / n >= observed - tol))
            done += m
        p = (1 + hits) / (1 + n_resamples)
    return PairedResult(float(d.mean()), p, float(d.mean()), n)


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of ``statistic`` (default: the mean).

    ``statistic`` receives a 2-d array (one resample per row) and returns one value per
    row. For a paired comparison pass the differences ``a - b``.

    Returns
    -------
    tuple of (float, float)
        The interval's lower and upper bounds, the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of
        the resampled statistic.

    Examples
    --------
    >>> lo, hi = bootstrap_ci(np.arange(100.0))
    >>> lo < 49.5 < hi
    True
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or len(x) < 2:
        raise DataError(f"bootstrap needs a 1-d array of at least 2 values, got shape {x.shape}")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}")
    stat = statistic if statistic is not None else (lambda s: s.mean(axis=1))
    rng = np.random.default_rng(seed)
    out = np.empty(n_resamples)
    step = max(1, 2_000_000 // len(x))
    for start in range(0, n_resamples, step):
        m = min(step, n_resamples - start)
        idx = rng.integers(0, len(x), size=(m, len(x)))
        out[start : start + m] = stat(x[idx])
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(out, [alpha, 1 - alpha])
    return float(lo), float(hi)


def cohens_d_paired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Paired Cohen's d (d_z): mean of the differences over their sample standard deviation.

    Returns
    -------
    float
        ``mean(a - b) / sd(a - b)`` (sample standard deviation); NaN when the differences are constant.

    Examples
    --------
    >>> round(cohens_d_paired([2.0, 3.0, 5.0], [1.0, 1.0, 2.0]), 4)
    2.0
    """
    d = _paired(a, b)
    sd = d.std(ddof=1)
    return float(d.mean() / sd) if sd > 0 else float("nan")


def correct_pvalues(
    pvalues: Sequence[float] | np.ndarray,
    method: Correction = "holm",
) -> np.ndarray:
    """Adjusted p-values for multiple comparisons (compare them to the family-wise alpha).

    ``bonferroni``: ``min(1, m p)``; ``holm``: step-down ``max_{j<=i} min(1, (m - j + 1) p_(j))``;
    ``bh`` (Benjamini–Hochberg, false discovery rate): step-up ``min_{j>=i} m p_(j) / j``.
    Equal to ``statsmodels.stats.multitest.multipletests(p, method=...)[1]``.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order of ``pvalues``.

    Examples
    --------
    >>> correct_pvalues([0.01, 0.02, 0.03, 0.5], method="bh").round(3).tolist()
    [0.04, 0.04, 0.04, 0.5]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise DataError(f"p-values must be a 1-d array, got shape {p.shape}")
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise DataError("p-values must lie in [0, 1] (drop undefined tests before correcting)")
    m = len(p)
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    ps = p[order]
    if method == "holm":
        adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * ps))
    elif method == "bh":
        adj = np.minimum(1.0, np.minimum.accumulate((m * ps / np.arange(1, m + 1))[::-1])[::-1])
    else:
        raise ConfigError(f"unknown correction {method!r}; use 'bonferroni', 'holm', 'bh' or 'none'")
    out = np.empty(m)
    out[order] = adj
    return out


TESTS: dict[TestName, Callable[..., PairedResult]] = {
    "ttest": paired_ttest,
    "wilcoxon": wilcoxon_test,
    "permutation": permutation_test,
}


def compare_systems(
    per_user: pd.DataFrame,
    *,
    system: str = "system",
    user: str = "user",
    value: str = "value",
    baseline: str | None = None,
    test: TestName = "ttest",
    correction: Correction = "holm",
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Pairwise comparison of systems over their common users, with corrected p-values.

    ``per_user`` is a long table with one row per (system, user) and the metric in
    ``value``. Users missing for either system of a pair are left out of that pair.
    Compares every system with ``baseline`` (or every pair when ``baseline`` is None), in
    the order the systems first appear in ``per_user``.

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``a``, ``b``, ``n``, ``mean_a``, ``mean_b``, ``diff``, ``ci_low``/``ci_high`` (bootstrap CI of
        the mean difference), ``effect_size`` (paired Cohen's d), ``statistic``, ``pvalue``, ``pvalue_adj``.

    Examples
    --------
    >>> df = pd.DataFrame({"system": ["x"] * 4 + ["y"] * 4, "user": [1, 2, 3, 4] * 2,
    ...                    "value": [0.5, 0.6, 0.7, 0.8, 0.1, 0.3, 0.2, 0.4]})
    >>> compare_systems(df)[["a", "b", "n", "diff"]].round(3).to_dict("records")
    [{'a': 'x', 'b': 'y', 'n': 4, 'diff': 0.4}]
    """
    missing = [c for c in (system, user, value) if c not in per_user.columns]
    if missing:
        raise DataError(f"per-user table lacks column(s) {missing}; it has {list(per_user.columns)}")
    if test not in TESTS:
        raise ConfigError(f"unknown test {test!r}; choose one of {sorted(TESTS)}")
    wide = per_user.pivot_table(index=user, columns=system, values=value, aggfunc="mean", observed=True)
    wide = wide[[s for s in dict.fromkeys(per_user[system]) if s in wide.columns]]  # pairs in the systems' order
    systems = [str(s) for s in wide.columns]
    wide.columns = systems
    if baseline is not None and baseline not in systems:
        raise DataError(f"baseline {baseline!r} is not among the systems {systems}")
    if baseline is None:
        pairs = [(systems[i], systems[j]) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    else:
        pairs = [(s, baseline) for s in systems if s != baseline]
    rows = []
    for a, b in pairs:
        both = wide[[a, b]].dropna()
        x, y = both[a].to_numpy(), both[b].to_numpy()
        row = {"a": a, "b": b, "n": len(both), "mean_a": float(x.mean()) if len(x) else np.nan}
        row["mean_b"] = float(y.mean()) if len(y) else np.nan
        if len(both) < 2:
            row |= {"diff": np.nan, "ci_low": np.nan, "ci_high": np.nan, "effect_size": np.nan}
            row |= {"statistic": np.nan, "pvalue": np.nan}
        else:
            kwargs = {"seed": seed, "n_resamples": n_resamples} if test == "permutation" else {}
            res = TESTS[test](x, y, **kwargs)
            lo, hi = bootstrap_ci(x - y, confidence=confidence, n_resamples=n_resamples, seed=seed)
            row |= {"diff": float((x - y).mean()), "ci_low": lo, "ci_high": hi}
            row |= {"effect_size": cohens_d_paired(x, y), "statistic": res.statistic, "pvalue": res.pvalue}
        rows.append(row)
    out = pd.DataFrame(
        rows,
        columns=["a", "b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size", "statistic", "pvalue"],
    )
    ok = out["pvalue"].notna().to_numpy()
    adj = np.full(len(out), np.nan)
    adj[ok] = correct_pvalues(out.loc[ok, "pvalue"].to_numpy(), method=correction)
    out["pvalue_adj"] = adj
    return out


def rank_agreement(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    higher_is_better: tuple[bool, bool] = (True, True),
) -> dict[str, float]:
    """Kendall τ-b and Spearman ρ between the quality rankings of systems under two metrics.

    ``a[i]`` and ``b[i]`` are system i's values under the two metrics; a metric where
    lower is better (fallout, RMSE ...) is negated first, so +1 always means the two
    metrics order the systems identically from best to worst (the convention of
    :mod:`receval.stats.agreement`, which does the same for cyclic trajectories).
    Systems with a NaN under either metric are left out.

    Returns
    -------
    dict
        ``kendall_tau`` (τ-b), ``spearman_rho`` and ``n_systems`` (those without a NaN).

    Examples
    --------
    >>> rank_agreement([0.3, 0.2, 0.1], [0.01, 0.02, 0.03], higher_is_better=(True, False))
    {'kendall_tau': 1.0, 'spearman_rho': 1.0, 'n_systems': 3}
    """
    x = np.asarray(a, dtype=np.float64) * (1 if higher_is_better[0] else -1)
    y = np.asarray(b, dtype=np.float64) * (1 if higher_is_better[1] else -1)
    if x.shape != y.shape or x.ndim != 1:
        raise DataError(f"two 1-d arrays of equal length are needed, got shapes {x.shape} and {y.shape}")
    ok = np.isfinite(x) & np.isfinite(y)
    tau = _kendall_tau(x, y)
    rho = float("nan") if np.isnan(tau) else float(stats.spearmanr(x[ok], y[ok]).statistic)
    return {"kendall_tau": tau, "spearman_rho": rho, "n_systems": int(ok.sum())}


def _kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall τ-b over the pairs where both are finite; NaN when fewer than two or one side is all ties."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan")
    return float(stats.kendalltau(x[ok], y[ok]).statistic)


def system_agreement(
    aggregates: pd.DataFrame,
    metric_a: str,
    metric_b: str,
    *,
    system: str = "system",
    metric: str = "metric",
    value: str = "value",
    higher_is_better: tuple[bool, bool] = (True, True),
) -> dict[str, float]:
    """:func:`rank_agreement` of the systems in a long table (system, metric, value; mean over repeats).

    For an experiment's store: ``aggregates.parquet`` merged with ``tasks.parquet`` and
    ``system="label"`` (or ``"recommender"``) — restrict it to one data set first.

    Returns
    -------
    dict
        :func:`rank_agreement`'s ``kendall_tau``, ``spearman_rho`` and ``n_systems``.

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["a", "a", "b", "b"], "metric": ["p", "f"] * 2, "value": [0.5, 0.1, 0.4, 0.2]})
    >>> system_agreement(t, "p", "f", higher_is_better=(True, False))["kendall_tau"]
    1.0
    """
    for col in (system, metric, value):
        if col not in aggregates.columns:
            raise DataError(f"the table lacks column {col!r}; it has {list(aggregates.columns)}")
    wide = aggregates.pivot_table(index=system, columns=metric, values=value, aggfunc="mean", observed=True)
    for m in (metric_a, metric_b):
        if m not in wide.columns:
            raise DataError(f"no metric {m!r} in the table; it has {sorted(map(str, wide.columns))}")
    return rank_agreement(wide[metric_a].to_numpy(), wide[metric_b].to_numpy(), higher_is_better=higher_is_better)
