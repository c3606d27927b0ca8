"""A/A study: do the paired tests keep their error rate at this data's size? (``receval aa``).

A system is compared with itself — the same lists (``b`` is ``a``), or the same model
refitted with another seed (:func:`refit_values`) — over ``resamples`` seeded bootstrap
samples of the test users (with replacement), at the data's n and at growing n (``sizes``,
multiples of n). The null hypothesis is made true in every sample in one of two ways (``null``):

- ``"swap"``: each sampled user's two values are exchanged with probability 1/2 — two fits
  of one model differ only by their seeds, so which is "A" is arbitrary (exchangeability;
  the differences are symmetric about 0, the null of all three tests);
- ``"shift"``: ``b`` is shifted by the observed mean difference (Efron & Tibshirani, An
  Introduction to the Bootstrap, 1993, §16.4): equal *means*, the t-test's and the permutation
  test's null, while the differences keep their skewed shape.

The share of samples with ``p < alpha`` is each test's false-positive rate, reported with its
Clopper–Pearson interval (:func:`scipy.stats.binomtest`). Ihemelandu & Ekstrand (arXiv
2305.02461) report that the Wilcoxon and sign tests inflate false positives on recommender
data at large n; under ``"shift"`` the Wilcoxon test shows why: it tests symmetry about 0
(a zero median of the differences), which a zero mean of skewed differences is not.

With the same lists every difference is zero: the t-test is undefined (counted in
``undefined``, not as a rejection) and the rank and permutation tests never reject.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> a = rng.random(300)
>>> b = a + rng.normal(0, 0.1, 300)
>>> table = aa_study(a, b, resamples=40, sizes=(1,), n_permutations=200)
>>> list(table["test"]), bool((table["rate"] <= table["ci_high"]).all())
(['ttest', 'wilcoxon', 'permutation'], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from receval.errors import ConfigError, DataError
from receval.stats.significance import TESTS, permutation_test
from receval.validate import check_count, check_memory

__all__ = ["NULLS", "aa_study", "check_aa_options", "refit_values"]

NULLS = ("swap", "shift")
"""How the study makes the null true in each sample (see the module's docstring)."""


def aa_study(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    resamples: int = 200,
    alpha: float = 0.05,
    sizes: Sequence[float] = (1, 2, 4, 8),
    seed: int = 0,
    n_permutations: int = 1000,
    confidence: float = 0.95,
    null: str = "swap",
) -> pd.DataFrame:
    """Each paired test's false-positive rate comparing ``a`` with ``b`` (the same system) under a true null.

    ``a`` and ``b`` are per-user values of the same users in the same order; ``sizes`` are
    the sample sizes as multiples of the number of users (1: the data's n).

    Returns
    -------
    pandas.DataFrame
        One row per test and size: ``test``, ``n`` (users per sample), ``resamples``,
        ``rejections``, ``undefined`` (samples where the test has no p-value), ``rate``
        (rejections / resamples), ``ci_low``, ``ci_high`` (Clopper–Pearson at ``confidence``).
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or len(x) < 2:
        raise DataError(f"a and b must be per-user values of the same >= 2 users; got shapes {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DataError("per-user values contain NaN or infinite values; drop those users first")
    check_aa_options(resamples=resamples, alpha=alpha, sizes=sizes, n_permutations=n_permutations, null=null)
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1); got {confidence}")
    if null == "shift":
        y = y + (x - y).mean()  # equal means (a's values are untouched)
    largest = max(2, round(max(sizes) * len(x)))
    try:  # a sample's index, values, swaps and sign flips: some 64 bytes a user
        check_memory(64.0 * largest, f"sizes={max(sizes):g}: a sample of {largest:,} users", "use smaller sizes")
    except ConfigError as err:
        raise ConfigError(err.message, parameters=("sizes",)) from None
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        m = max(2, round(size * len(x)))
        counts = {name: [0, 0] for name in TESTS}
        for _ in range(resamples):
            idx = rng.integers(0, len(x), m)
            xs, ys = x[idx], y[idx]
            if null == "swap":
                flip = rng.integers(0, 2, m).astype(bool)
                xs, ys = np.where(flip, ys, xs), np.where(flip, xs, ys)
            for name, test in TESTS.items():
                if name == "permutation":
                    res = permutation_test(xs, ys, n_resamples=n_permutations, seed=rng)
                else:
                    res = test(xs, ys)
                if np.isnan(res.pvalue):
                    counts[name][1] += 1
                else:
                    counts[name][0] += int(res.pvalue < alpha)
        for name, (hits, undefined) in counts.items():
            ci = stats.binomtest(hits, resamples).proportion_ci(confidence_level=confidence, method="exact")
            rows.append((name, m, resamples, hits, undefined, hits / resamples, ci.low, ci.high))
    columns = ["test", "n", "resamples", "rejections", "undefined", "rate", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)


def check_aa_options(*, resamples: int, alpha: float, sizes: Sequence[float], n_permutations: int, null: str) -> None:
    """The study's options checked (a ConfigError naming the option), before any data is read."""
    check_count(resamples, "resamples")
    check_count(n_permutations, "n_permutations")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1); got {alpha}")
    if not sizes or any(not s > 0 for s in sizes):
        raise ConfigError(f"sizes must be positive multiples of the number of users; got {list(sizes)}")
    if null not in NULLS:
        raise ConfigError(f"null must be one of {', '.join(NULLS)}; got {null!r}")


def refit_values(
    data: Any,
    algorithm: str,
    metric: str,
    *,
    seeds: tuple[int, int] = (0, 1),
    split: str = "per-user",
    test_fraction: float = 0.2,
    k: int = 10,
    threshold: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-user values of ``metric`` of one model fitted twice (model seeds ``seeds``) on one split (seed 0).

    The split is the same for both fits: only the model's own randomness differs. Users
    without a value (no relevant test item) are left out of both. The lists hold ``k`` items, or as many as
    the metric's cutoff reads when it is deeper.
    """
    from receval.evaluation import evaluate_model
    from receval.metrics import MetricList
    from receval.recommenders import make
    from receval.split import split_by_name

    (_, spec), *_ = MetricList([metric])
    if spec.kind == "system":  # one value per run: nothing to pair per user
        raise ConfigError(f"metric={metric!r} has no per-user values (a system-level metric); give a per-user "
                          "metric, e.g. ndcg@10", parameters=["metric"])  # fmt: skip
    if spec.k is not None and spec.k > data.n_items:  # the list cannot be as deep as the metric reads
        raise ConfigError(
            f"{metric} reads {spec.k} items but the data has {data.n_items}; use a cutoff <= {data.n_items}"
        )
    depth = min(max(k, spec.k or 0), data.n_items)  # as deep as the metric reads; a list is at most the catalogue
    (train, test), *_ = split_by_name(data, split, test_fraction=test_fraction, seed=0)
    values = []
    for s in seeds:
        result = evaluate_model(make(algorithm), train, test, [metric], k=depth, threshold=threshold, seed=s)
        values.append(result.per_user.set_index("user")[metric].sort_index())
    both = pd.concat(values, axis=1).dropna()  # users without a relevant test item have no value (NaN): left out
    if len(both) < 2:  # e.g. rmse of a model that does not predict ratings, or a threshold above every test rating
        raise DataError(
            f"metric={metric!r}: {len(both)} user(s) have a value in both fits of {algorithm!r}, a paired test needs "
            "2 or more; give a metric the model answers (rmse needs one that predicts ratings) or a lower threshold"
        )
    return both.iloc[:, 0].to_numpy(np.float64), both.iloc[:, 1].to_numpy(np.float64)
