"""Gaps between user groups: per-group means, an unpaired test, a bootstrap interval and an effect size.

Given one value per user (a metric's per-user values) and a user → group mapping (gender,
age band, activity, a coherence partition …), :func:`group_gap` reports each group's mean,
the gap and its test:

- **two groups** ``g1 < g2`` (groups sorted by name): the gap is ``mean(g1) - mean(g2)``;
  tests: Welch's t-test (default; unequal variances, Welch–Satterthwaite degrees of
  freedom), the Mann–Whitney U test (normal approximation with tie and continuity
  corrections, as ``scipy.stats.mannwhitneyu(method="asymptotic")``) or a permutation
  test of the difference of means (group labels shuffled);
- **more than two groups**: the gap is the *range* ``max - min`` of the group means
  (``gap_kind = "range"``); tests: the one-way ANOVA F-test, the Kruskal–Wallis H test
  (tie-corrected) or a permutation test of the range.

The confidence interval of the gap is a percentile bootstrap that resamples users within
each group (group sizes fixed), seeded. The effect size is Hedges' g (Cohen's d with the
pooled standard deviation, times ``1 - 3 / (4 (n1 + n2) - 9)``; Hedges & Olkin 1985) between
the two groups, or between the groups of highest and lowest mean when there are more.
:func:`group_gaps` does this for several metrics and corrects the p-values across them
with :func:`receval.stats.significance.correct_pvalues`.

The tests are written from their textbook definitions and cross-checked against
``scipy.stats.ttest_ind(equal_var=False)``, ``mannwhitneyu``, ``f_oneway`` and ``kruskal``
in tests/test_groups.py.

Examples
--------
>>> r = group_gap([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], ["F", "F", "F", "M", "M", "M"])
>>> r.values, r.gap, r.gap_kind
({'F': 2.0, 'M': 5.0}, -3.0, 'difference')
>>> round(r.statistic, 4), round(r.p_value, 4), round(r.effect_size, 4)
(-3.6742, 0.0213, -2.4)
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from receval.errors import ConfigError, DataError, shown_id
from receval.stats.significance import correct_pvalues
from receval.vocabulary import UNPAIRED_TEST_NAMES, UNPAIRED_TEST_NAMES_K, Correction, UnpairedTest

__all__ = [
    "GAPS_FRAME_COLUMNS",
    "GroupGap",
    "align_groups",
    "check_unknown_group",
    "cohens_d_unpaired",
    "group_gap",
    "group_gaps",
    "group_gaps_frame",
    "hedges_g",
    "kruskal_test",
    "mann_whitney_test",
    "oneway_anova",
    "read_user_groups",
    "welch_ttest",
]


@dataclass(frozen=True)
class GroupGap:
    """The gap of one metric between user groups (see the module's docstring for each field's definition)."""

    values: dict[str, float]
    counts: dict[str, int]
    gap: float
    gap_kind: str  # "difference" (first group minus second, by name) or "range" (max - min)
    test: str  # the test in words
    statistic: float
    p_value: float
    ci: tuple[float, float]
    effect_size: float
    p_value_adj: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``values, gap, p_value, ci`` first, then the rest."""
        return {
            "values": dict(self.values),
            "gap": self.gap,
            "p_value": self.p_value,
            "ci": [self.ci[0], self.ci[1]],
            "gap_kind": self.gap_kind,
            "counts": dict(self.counts),
            "test": self.test,
            "statistic": self.statistic,
            "p_value_adj": self.p_value_adj,
            "effect_size": self.effect_size,
            "effect_size_kind": "Hedges' g",
        }


def _arr(x: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or len(a) < 2:
        raise DataError(f"{name} needs at least 2 values, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise DataError(f"{name} holds NaN or infinite values; drop them first")
    return a


def welch_ttest(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Welch's unequal-variance t-test, two-sided: ``(t, p)``.

    ``t = (mean_a - mean_b) / sqrt(s_a²/n_a + s_b²/n_b)`` with Welch–Satterthwaite degrees of freedom
    ``(s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a-1) + (s_b²/n_b)²/(n_b-1))``; equal to
    ``scipy.stats.ttest_ind(a, b, equal_var=False)``. Both groups constant: ``t = ±inf, p = 0`` when the
    means differ, ``nan`` when they do not.

    Examples
    --------
    >>> [round(v, 4) for v in welch_ttest([1.0, 2.0, 3.0], [2.0, 4.0, 6.0, 8.0])]
    [-2.1213, 0.0999]
    """
    x, y = _arr(a, "group a"), _arr(b, "group b")
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    diff = x.mean() - y.mean()
    se2 = va + vb
    if se2 == 0:
        return (float("nan"), float("nan")) if diff == 0 else (float(np.copysign(np.inf, diff)), 0.0)
    t = diff / np.sqrt(se2)
    df = se2**2 / (va**2 / (len(x) - 1) + vb**2 / (len(y) - 1))
    return float(t), float(min(1.0, 2.0 * stats.t.sf(abs(t), df)))


def mann_whitney_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mann–Whitney U test, two-sided, normal approximation with tie and continuity corrections: ``(U_a, p)``.

    ``U_a = R_a - n_a (n_a + 1) / 2`` (``R_a`` the sum of ``a``'s mid-ranks in the pooled sample);
    ``z = (|U_a - n_a n_b / 2| - 1/2) / sigma`` with
    ``sigma² = n_a n_b / 12 · ((n + 1) - Σ(t³ - t) / (n (n - 1)))``; equal to
    ``scipy.stats.mannwhitneyu(a, b, method="asymptotic")``.

    Examples
    --------
    >>> [round(v, 4) for v in mann_whitney_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0])]
    [0.0, 0.0518]
    """
    x, y = _arr(a, "group a"), _arr(b, "group b")
    na, nb = len(x), len(y)
    n = na + nb
    ranks = stats.rankdata(np.concatenate([x, y]))
    u = ranks[:na].sum() - na * (na + 1) / 2
    _, ties = np.unique(ranks, return_counts=True)
    var = na * nb / 12 * ((n + 1) - (ties**3 - ties).sum() / (n * (n - 1)))
    if var <= 0:
        return float(u), float("nan")
    z = (abs(u - na * nb / 2) - 0.5) / np.sqrt(var)
    return float(u), float(min(1.0, 2.0 * stats.norm.sf(max(z, 0.0))))


def oneway_anova(groups: Sequence[np.ndarray]) -> tuple[float, float]:
    """One-way ANOVA F-test over ``k`` groups: ``(F, p)``; equal to ``scipy.stats.f_oneway``.

    ``F = (SS_between / (k - 1)) / (SS_within / (n - k))``.

    Examples
    --------
    >>> [round(v, 4) for v in oneway_anova([np.array([1.0, 2, 3]), np.array([2.0, 3, 4]), np.array([5.0, 6, 7])])]
    [13.0, 0.0066]
    """
    xs = [_arr(g, "each group") for g in groups]
    allv = np.concatenate(xs)
    n, k = len(allv), len(xs)
    grand = allv.mean()
    ss_b = sum(len(g) * (g.mean() - grand) ** 2 for g in xs)
    ss_w = sum(((g - g.mean()) ** 2).sum() for g in xs)
    if ss_w == 0:
        return (float("nan"), float("nan")) if ss_b == 0 else (float("inf"), 0.0)
    f = (ss_b / (k - 1)) / (ss_w / (n - k))
    return float(f), float(stats.f.sf(f, k - 1, n - k))


def kruskal_test(groups: Sequence[np.ndarray]) -> tuple[float, float]:
    """Kruskal–Wallis H test, tie-corrected: ``(H, p)``; equal to ``scipy.stats.kruskal``.

    ``H = (12 / (n (n + 1)) Σ R_g² / n_g - 3 (n + 1)) / (1 - Σ(t³ - t) / (n³ - n))``, chi-squared with ``k - 1``
    degrees of freedom.

    Examples
    --------
    >>> [round(v, 4) for v in kruskal_test([np.array([1.0, 2, 3]), np.array([2.0, 3, 4]), np.array([5.0, 6, 7])])]
    [6.0565, 0.0484]
    """
    xs = [_arr(g, "each group") for g in groups]
    allv = np.concatenate(xs)
    n = len(allv)
    ranks = stats.rankdata(allv)
    bounds = np.cumsum([0] + [len(g) for g in xs])
    h = 12 / (n * (n + 1)) * sum(ranks[s:e].sum() ** 2 / (e - s) for s, e in itertools.pairwise(bounds))
    h -= 3 * (n + 1)
    _, ties = np.unique(allv, return_counts=True)
    c = 1 - (ties**3 - ties).sum() / (n**3 - n)
    if c == 0:
        return float("nan"), float("nan")
    h /= c
    return float(h), float(stats.chi2.sf(h, len(xs) - 1))


def cohens_d_unpaired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cohen's d of two independent groups: ``(mean_a - mean_b) / s_pooled``, NaN when ``s_pooled = 0``.

    ``s_pooled² = ((n_a - 1) s_a² + (n_b - 1) s_b²) / (n_a + n_b - 2)``.

    Examples
    --------
    >>> cohens_d_unpaired([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    -3.0
    """
    x, y = _arr(a, "group a"), _arr(b, "group b")
    pooled = ((len(x) - 1) * x.var(ddof=1) + (len(y) - 1) * y.var(ddof=1)) / (len(x) + len(y) - 2)
    return float((x.mean() - y.mean()) / np.sqrt(pooled)) if pooled > 0 else float("nan")


def hedges_g(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Hedges' g: Cohen's d times the small-sample correction ``1 - 3 / (4 (n_a + n_b) - 9)`` (Hedges & Olkin 1985).

    Examples
    --------
    >>> round(hedges_g([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), 4)
    -2.4
    """
    n = len(np.asarray(a)) + len(np.asarray(b))
    return cohens_d_unpaired(a, b) * (1 - 3 / (4 * n - 9))


def _gap(means: np.ndarray) -> np.ndarray:
    """The gap of the group means in the last axis: difference of two, range of more."""
    if means.shape[-1] == 2:
        return means[..., 0] - means[..., 1]
    return means.max(axis=-1) - means.min(axis=-1)


def _permutation_p(values: np.ndarray, codes: np.ndarray, k: int, n_resamples: int, seed: int) -> float:
    """Share of label shuffles whose ``|gap|`` reaches the observed one: ``(1 + hits) / (1 + n_resamples)``."""
    counts = np.bincount(codes, minlength=k)
    observed = abs(_gap(np.bincount(codes, weights=values, minlength=k) / counts))
    tol = 1e-12 * max(1.0, float(observed))
    rng = np.random.default_rng(seed)
    hits = 0
    step = max(1, 2_000_000 // len(values))
    for start in range(0, n_resamples, step):
        m = min(step, n_resamples - start)
        perm = rng.permuted(np.broadcast_to(codes, (m, len(codes))), axis=1)
        sums = np.stack([np.where(perm == j, values, 0.0).sum(axis=1) for j in range(k)], axis=1)
        hits += int(np.sum(np.abs(_gap(sums / counts)) >= observed - tol))
    return (1 + hits) / (1 + n_resamples)


def _bootstrap_gap(xs: list[np.ndarray], confidence: float, n_resamples: int, seed: int) -> tuple[float, float]:
    """Percentile interval of the gap, users resampled with replacement within each group."""
    rng = np.random.default_rng(seed)
    means = np.empty((n_resamples, len(xs)))
    for j, g in enumerate(xs):
        step = max(1, 2_000_000 // len(g))
        for start in range(0, n_resamples, step):
            m = min(step, n_resamples - start)
            means[start : start + m, j] = g[rng.integers(0, len(g), size=(m, len(g)))].mean(axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(_gap(means), [alpha, 1 - alpha])
    return float(lo), float(hi)


def group_gap(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[Any] | np.ndarray,
    *,
    test: UnpairedTest = "welch",
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> GroupGap:
    """The gap of ``values`` between the ``groups`` (one label per value), with its test, interval and effect size.

    Groups are sorted by name (as text); two groups: ``gap = mean(first) - mean(second)``,
    more: ``gap = max - min`` of the group means. Every group needs at least 2 values.

    Examples
    --------
    >>> r = group_gap([0.2, 0.4, 0.3, 0.9, 0.8, 0.7, 0.5, 0.5], list("aaabbbcc"), test="mannwhitney")
    >>> r.gap_kind, round(r.gap, 4), r.test
    ('range', 0.5, 'Kruskal–Wallis H test')
    """
    if test not in UNPAIRED_TEST_NAMES:
        raise ConfigError(f"unknown unpaired test {test!r}; use one of {', '.join(UNPAIRED_TEST_NAMES)}")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(values, dtype=np.float64)
    labels = np.asarray([str(g) for g in groups])
    if x.ndim != 1 or len(x) != len(labels):
        raise DataError(f"values and groups must be equally long, got {x.size} and {len(labels)}")
    keep = np.isfinite(x)  # users a metric leaves undefined (NaN) take no part
    x, labels = x[keep], labels[keep]
    names, codes = np.unique(labels, return_inverse=True)
    if len(names) < 2:
        raise DataError(f"a group gap needs at least two groups, got {len(names)}: {list(names)}")
    xs = [x[codes == j] for j in range(len(names))]
    small = [str(n) for n, g in zip(names, xs, strict=True) if len(g) < 2]
    if small:
        raise DataError(f"every group needs at least 2 users with a value; {', '.join(small)} has fewer")
    means = np.array([g.mean() for g in xs])
    if len(names) == 2:
        words = UNPAIRED_TEST_NAMES[test]
        if test == "welch":
            statistic, p = welch_ttest(xs[0], xs[1])
        elif test == "mannwhitney":
            statistic, p = mann_whitney_test(xs[0], xs[1])
        else:
            statistic, p = float(means[0] - means[1]), _permutation_p(x, codes, 2, n_resamples, seed)
        effect = hedges_g(xs[0], xs[1])
    else:
        words = UNPAIRED_TEST_NAMES_K[test]
        if test == "welch":
            statistic, p = oneway_anova(xs)
        elif test == "mannwhitney":
            statistic, p = kruskal_test(xs)
        else:
            statistic = float(_gap(means))
            p = _permutation_p(x, codes, len(names), n_resamples, seed)
        hi, lo = int(np.argmax(means)), int(np.argmin(means))
        effect = hedges_g(xs[hi], xs[lo])
    return GroupGap(
        values={str(n): float(m) for n, m in zip(names, means, strict=True)},
        counts={str(n): len(g) for n, g in zip(names, xs, strict=True)},
        gap=float(_gap(means)),
        gap_kind="difference" if len(names) == 2 else "range",
        test=words,
        statistic=float(statistic),
        p_value=float(p),
        ci=_bootstrap_gap(xs, confidence, n_resamples, seed),
        effect_size=float(effect),
    )


def group_gaps(
    per_user: pd.DataFrame,
    groups: pd.Series,
    metrics: Sequence[str] | None = None,
    *,
    user: str = "user",
    test: UnpairedTest = "welch",
    correction: Correction = "holm",
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
    skip_undefined: bool = False,
) -> dict[str, GroupGap]:
    """:func:`group_gap` for every metric column of a wide per-user table, p-values corrected across metrics.

    ``groups`` maps user (index) to group, as :func:`align_groups` returns it (users matched by
    their text); every user of ``per_user`` must have one. Metrics whose p-value is undefined (constant values) keep
    ``p_value_adj = None`` and take no part in the correction. ``skip_undefined=True`` leaves out a metric whose
    gap is undefined (fewer than two groups of 2 users with a value) instead of raising: an experiment's task
    stores the gaps it can compute rather than failing.

    Examples
    --------
    >>> table = pd.DataFrame({"user": [1, 2, 3, 4], "m": [1.0, 2.0, 4.0, 6.0], "n": [0.0, 1.0, 0.0, 1.0]})
    >>> gaps = group_gaps(table, pd.Series({1: "x", 2: "x", 3: "y", 4: "y"}), correction="bonferroni")
    >>> {m: (g.gap, round(g.p_value_adj, 4)) for m, g in gaps.items()}
    {'m': (-3.5, 0.2581), 'n': (0.0, 1.0)}
    """
    cols = [c for c in per_user.columns if c != user] if metrics is None else list(metrics)
    labels = per_user[user].astype(str).map(pd.Series(groups.to_numpy(), index=groups.index.astype(str)))
    if labels.isna().any():
        missing = per_user.loc[labels.isna(), user]
        raise DataError(f"{len(missing)} users have no group, e.g. {', '.join(map(str, missing[:3]))}")
    gaps = {}
    for m in cols:
        try:
            gaps[m] = group_gap(per_user[m].to_numpy(np.float64), labels.to_numpy(), test=test,
                                confidence=confidence, n_resamples=n_resamples, seed=seed)  # fmt: skip
        except DataError:
            if not skip_undefined:
                raise
    defined = [m for m, g in gaps.items() if np.isfinite(g.p_value)]
    if defined:
        adj = correct_pvalues([gaps[m].p_value for m in defined], method=correction)
        for m, p in zip(defined, adj, strict=True):
            gaps[m] = _with_adj(gaps[m], float(p))
    return gaps


def _with_adj(gap: GroupGap, p: float) -> GroupGap:
    return replace(gap, p_value_adj=p)


GAPS_FRAME_COLUMNS = ("metric", "group", "mean", "n", "gap", "gap_kind", "test", "statistic", "p_value",
                      "p_value_adj", "ci_low", "ci_high", "effect_size")  # fmt: skip
"""The columns of :func:`group_gaps_frame` (an experiment's ``groups`` table, with the task id added)."""


def group_gaps_frame(gaps: Mapping[str, GroupGap]) -> pd.DataFrame:
    """The gaps as a long table: one row per (metric, group) with the group's mean and size, the metric's gap,
    test, p-values, interval and Hedges' g repeated on each of its rows (``p_value_adj`` NaN when undefined).

    >>> table = pd.DataFrame({"user": [1, 2, 3, 4], "m": [1.0, 2.0, 4.0, 6.0]})
    >>> frame = group_gaps_frame(group_gaps(table, pd.Series({1: "x", 2: "x", 3: "y", 4: "y"})))
    >>> frame[["metric", "group", "mean", "n", "gap"]].to_dict("list")
    {'metric': ['m', 'm'], 'group': ['x', 'y'], 'mean': [1.5, 5.0], 'n': [2, 2], 'gap': [-3.5, -3.5]}
    """
    rows = [
        (metric, group, mean, g.counts[group], g.gap, g.gap_kind, g.test, g.statistic, g.p_value,
         np.nan if g.p_value_adj is None else g.p_value_adj, g.ci[0], g.ci[1], g.effect_size)
        for metric, g in gaps.items()
        for group, mean in g.values.items()
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(GAPS_FRAME_COLUMNS))
    return frame.astype({"n": np.int64, "mean": np.float64, "gap": np.float64, "p_value_adj": np.float64})


def read_user_groups(source: str | Path | pd.DataFrame | pd.Series | Mapping[Any, Any], **options: Any) -> pd.DataFrame:
    """A ``user, group`` table from a file (read and checked by :func:`receval.data.tables.read_table`), a
    DataFrame or a ``{user: group}`` mapping; ``options`` go to ``read_table`` (``header=False`` …).

    >>> read_user_groups({1: "F", 2: "M"}).to_dict("list")
    {'user': [1, 2], 'group': ['F', 'M']}
    """
    where = "the user groups"
    if isinstance(source, pd.Series):  # align_groups' answer: index user, values group
        table = pd.DataFrame({"user": source.index.to_numpy(), "group": source.to_numpy()})
    elif isinstance(source, Mapping):
        table = pd.DataFrame({"user": list(source), "group": list(source.values())})
    elif isinstance(source, pd.DataFrame):
        table = source
    else:
        from receval.data.tables import read_table

        options.setdefault("positional", ("user", "group"))
        where = str(source)
        table = read_table(Path(source), "aspects", ("user",), label="user groups", **options)
    if not {"user", "group"} <= set(table.columns):
        raise DataError(f"the user groups need columns user, group; got {list(table.columns)} (name yours so)")
    # a missing group is no group: str() would make it a group named '', 'nan' or 'None'
    groups = pd.Series(table["group"].to_numpy(), dtype=object)
    empty = (groups.isna() | (groups.astype(str).str.strip() == "")).to_numpy()
    if empty.any():
        user = table["user"].to_numpy()[int(np.flatnonzero(empty)[0])]
        raise DataError(f"{where}: {int(empty.sum())} user(s) have an empty group, e.g. user {shown_id(user)}; "
                        "give each user a group name or leave the user out")  # fmt: skip
    return pd.DataFrame({"user": table["user"].to_numpy(), "group": groups.astype(str).to_numpy()})


def check_unknown_group(unknown_group: str | None, groups: Iterable[str], source: str = "the user groups") -> None:
    """Refuse an ``unknown_group`` that is already one of ``groups``: the users without a group would join that
    group silently, and its gap would mix the two.

    Examples
    --------
    >>> check_unknown_group("other", ["F", "M"])
    >>> check_unknown_group("M", ["F", "M"], "--user-groups")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: unknown_group='M' is already a group of --user-groups, ...
    """
    if unknown_group is not None and unknown_group.strip() in {str(g).strip() for g in groups}:
        raise ConfigError(f"unknown_group={unknown_group!r} is already a group of {source}, so the users without a "
                          "group would join it; give unknown_group= a name no group has, e.g. 'other'",
                          parameters=["unknown_group"])  # fmt: skip


def align_groups(
    users: Sequence[Any] | np.ndarray | pd.Index,
    table: pd.DataFrame | pd.Series | Mapping[Any, Any],
    *,
    unknown_group: str | None = None,
    source: str = "the user groups",
    where: str = "the truth",
) -> pd.Series:
    """The group of each of ``users`` (the truth's), from a ``user, group`` table; checked.

    Users are matched by their text (``'12'`` is user 12). A user listed twice with two
    groups, a single group, truth users without a group (unless ``unknown_group`` names
    the group that pools them) and fewer than two groups of 2 users are DataErrors; users
    of the table missing from ``users`` are counted and named in a warning. ``source`` and
    ``where`` name the table and the users in messages.

    Returns
    -------
    pandas.Series
        Index: ``users`` (as given), values: group names (text).

    Examples
    --------
    >>> table = pd.DataFrame({"user": ["1", "2", "3", "4"], "group": ["F", "F", "M", "M"]})
    >>> align_groups([1, 2, 3, 4, 5, 6], table, unknown_group="?").to_dict()
    {1: 'F', 2: 'F', 3: 'M', 4: 'M', 5: '?', 6: '?'}
    """
    if unknown_group is not None and not unknown_group.strip():  # a group named '' (the empty cells' refusal)
        raise ConfigError(f"unknown_group={unknown_group!r}: give the pool of users without a group a name, e.g. "
                          "'other'", parameters=["unknown_group"])  # fmt: skip
    table = read_user_groups(table)
    keys = table["user"].astype(str).to_numpy()
    names = table["group"].astype(str).str.strip().to_numpy()
    pairs = pd.DataFrame({"user": keys, "group": names}).drop_duplicates()
    twice = pairs["user"][pairs["user"].duplicated()]
    if len(twice):
        raise DataError(f"{source}: {len(twice)} users have two groups, e.g. user {twice.iloc[0]}; give one each")
    mapping = dict(zip(pairs["user"], pairs["group"], strict=True))
    check_unknown_group(unknown_group, mapping.values(), source)
    if len(set(mapping.values())) < 2:
        raise DataError(f"{source} name one group only ({', '.join(sorted(set(mapping.values())))}); a gap needs two")
    index = pd.Index(users)
    text = index.astype(str)
    out = pd.Series([mapping.get(u) for u in text], index=index, dtype=object)
    missing = out.isna()
    if missing.any():
        if unknown_group is None:
            examples = ", ".join(map(str, index[missing.to_numpy()][:3]))
            raise DataError(f"{int(missing.sum())} users of {where} have no group in {source} (e.g. {examples}); add "
                            "them or pool them with --unknown-group NAME")  # fmt: skip
        out[missing] = unknown_group
    sizes = out.value_counts()
    if len(sizes) < 2 or sizes.min() < 2:
        small = ", ".join(f"{g} ({n})" for g, n in sizes.items() if n < 2) or f"only {sizes.index[0]}"
        raise DataError(f"{source}: a gap needs two groups of at least 2 users of {where}; got {small}")
    extra = sorted(set(mapping) - set(text))
    if extra:
        warnings.warn(f"{len(extra)} users in {source} are not in {where} (e.g. {', '.join(extra[:3])}); "
                      "they are left out", stacklevel=2)  # fmt: skip
    return out
