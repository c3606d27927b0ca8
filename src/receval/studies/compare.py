"""Compare several runs against one truth: a metric table, paired tests, effect sizes.

This is the comparison ranx's ``compare`` makes for IR runs, with receval's metrics and
statistics: every run is evaluated on the same truth with :func:`receval.evaluate`, then
each metric's per-user values are compared pairwise over the users both runs score,
with a paired test (t-test, Wilcoxon signed-rank or randomisation), a bootstrap
confidence interval of the mean difference, the paired Cohen's d and p-values
corrected for the number of pairs (Holm by default). Using per-user values as the
paired samples follows Sakai, *Statistical Significance, Power, and Sample Sizes*
(SIGIR 2016) and Smucker, Allan & Carterette (CIKM 2007).

Examples
--------
>>> import pandas as pd
>>> truth = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [10, 11, 10, 12, 11]})
>>> runs = {
...     "a": pd.DataFrame({"user": [1, 2, 3], "item": [10, 10, 11], "rank": [1, 1, 1]}),
...     "b": pd.DataFrame({"user": [1, 2, 3], "item": [12, 11, 12], "rank": [1, 1, 1]}),
... }
>>> result = compare_runs(runs, truth, ["precision@1"])
>>> result.summary["precision@1"].to_dict()
{'a': 1.0, 'b': 0.0}
>>> result.tests[["metric", "a", "b", "n", "diff"]].to_dict("records")
[{'metric': 'precision@1', 'a': 'a', 'b': 'b', 'n': 3, 'diff': 1.0}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from receval.errors import ConfigError
from receval.evaluation import evaluate
from receval.evaluation.align import as_table
from receval.metrics import MetricList
from receval.stats.groups import GroupGap, align_groups, group_gaps, read_user_groups
from receval.stats.significance import Correction, TestName, compare_systems
from receval.vocabulary import UnpairedTest

__all__ = ["RunComparison", "compare_runs"]


@dataclass
class RunComparison:
    """What :func:`compare_runs` returns.

    Attributes
    ----------
    summary : DataFrame
        One row per run (index ``run``, in the order given), one column per metric string.
    tests : DataFrame
        One row per (metric, pair of runs): ``metric, a, b, n, mean_a, mean_b, diff,
        ci_low, ci_high, effect_size, statistic, pvalue, pvalue_adj`` (p-values
        corrected within each metric). System-level metrics (coverage, Gini …) have no
        per-user values and no rows here.
    per_user : DataFrame
        Long table ``system, user, metric, value`` of every per-user value.
    conventions : dict
        ``{run: the Conventions of its evaluation}`` plus ``"comparison"``: ``test``,
        ``correction``, ``baseline``, ``confidence``, ``n_resamples`` and ``seed`` as used.
    groups : dict or None
        With ``user_groups=``: ``{run: {metric: GroupGap}}`` (:func:`receval.stats.groups.group_gaps`,
        p-values corrected across the metrics of each run).
    distribution : dict or None
        With ``distribution=True``: ``{metric: {run: {...}}}``, each run's
        :func:`receval.stats.distribution.describe` and, for every run but the first, ``"vs_first"``:
        :func:`receval.stats.distribution.compare_to` against the first run over the users both score.
    """

    summary: pd.DataFrame
    tests: pd.DataFrame
    per_user: pd.DataFrame
    conventions: dict[str, Any] = field(default_factory=dict)
    groups: dict[str, dict[str, GroupGap]] | None = None
    distribution: dict[str, dict[str, dict[str, Any]]] | None = None


def compare_runs(
    runs: Mapping[str, Any],
    truth: Any,
    metrics: MetricList | Sequence[str] | str,
    *,
    baseline: str | None = None,
    test: TestName = "ttest",
    correction: Correction = "holm",
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
    convention: str | None = None,
    user_groups: Any = None,
    unknown_group: str | None = None,
    group_test: UnpairedTest = "welch",
    distribution: bool = False,
    cvar_level: float = 0.1,
    **evaluate_options: Any,
) -> RunComparison:
    """Evaluate every run on ``truth`` and compare them pairwise, metric by metric.

    Parameters
    ----------
    runs
        ``{name: recommendations}``, each anything :func:`receval.evaluate` accepts
        (a file path, a DataFrame ``user, item, score|rank``, an item matrix …). At least two.
    truth, metrics
        As for :func:`receval.evaluate`.
    baseline
        Compare every run with this one only; all pairs when omitted.
    test, correction, confidence, n_resamples, seed
        As for :func:`receval.stats.significance.compare_systems`.
    convention
        A library's conventions for every run (``"trec_eval"``, ``"ranx"`` …:
        :data:`receval.metrics.conventions.CONVENTION_NAMES`), as ``evaluate(convention=)``.
    user_groups, unknown_group, group_test
        A ``user, group`` table, a path to one or a ``{user: group}`` mapping: every per-user
        metric's gap between the groups of the truth's users, per run (``result.groups``), with
        ``group_test`` (``welch``, ``mannwhitney``, ``permutation``) and ``correction`` across
        metrics; truth users without a group are an error unless ``unknown_group`` names the
        group that pools them (:func:`receval.stats.groups.align_groups`).
    distribution, cvar_level
        Add each metric's per-user utility distribution per run (quantiles, Gini, CVaR at
        ``cvar_level``) and the risk–reward of every run against the first (``result.distribution``).
    evaluate_options
        Passed to :func:`receval.evaluate` for every run (``threshold``, ``train`` …); a
        ``train`` table makes coverage-type metrics count over the same catalogue as
        ``evaluate(train=)`` does (the truth's, the runs' and the training items).
    """
    names = [str(name) for name in runs]
    if len(names) < 2:
        raise ConfigError(f"compare needs at least two runs, got {len(names)}")
    if len(set(names)) != len(names):
        raise ConfigError(f"run names must be distinct, got {names}")
    if baseline is not None and baseline not in names:
        raise ConfigError(f"baseline {baseline!r} is not one of the runs {names}")
    group_table = _check_groups(user_groups, distribution, cvar_level)
    truth = as_table(truth, "truth", evaluate_options.get("columns"))  # a path is read once for every run
    if evaluate_options.get("train") is not None:
        evaluate_options["train"] = as_table(evaluate_options["train"], "train", evaluate_options.get("columns"))
    metric_list = MetricList.of(metrics, convention)  # read once, for every run
    rows, long = {}, []
    conventions: dict[str, Any] = {}  # {run: Conventions}, then "comparison"
    for name, recs in zip(names, runs.values(), strict=True):
        result = evaluate(recs, truth, metric_list, **evaluate_options)
        rows[name] = result.summary
        conventions[name] = result.conventions
        values = result.per_user.melt(id_vars="user", var_name="metric", value_name="value")
        long.append(values.dropna(subset=["value"]).assign(system=name))
    summary = pd.DataFrame.from_dict(rows, orient="index").rename_axis("run")
    per_user = pd.concat(long, ignore_index=True)[["system", "user", "metric", "value"]]
    frames = []
    for metric in summary.columns:
        part = per_user[per_user["metric"] == metric]
        if part.empty:  # a system-level metric
            continue
        res = compare_systems(
            part,
            baseline=baseline,
            test=test,
            correction=correction,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
        frames.append(res.assign(metric=metric))
    tests = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["metric", "a", "b"])
    tests = tests[["metric", *[c for c in tests.columns if c != "metric"]]]
    conventions["comparison"] = {
        "test": test,
        "correction": correction,
        "baseline": baseline,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
    }
    comparison = RunComparison(summary=summary, tests=tests, per_user=per_user, conventions=conventions)
    _add_groups(comparison, group_table, unknown_group, group_test, correction, distribution, cvar_level,
                 confidence=confidence, n_resamples=n_resamples, seed=seed)  # fmt: skip
    return comparison


# --- user groups and the utility distribution ---
def _check_groups(user_groups: Any, distribution: bool, cvar_level: float) -> pd.DataFrame | None:
    """The group table read and the CVaR level checked before any run is evaluated."""
    if distribution:
        from receval.stats.distribution import check_cvar_level

        check_cvar_level(cvar_level, "cvar_level")
    return None if user_groups is None else read_user_groups(user_groups)


def _add_groups(
    result: RunComparison,
    group_table: pd.DataFrame | None,
    unknown_group: str | None,
    group_test: UnpairedTest,
    correction: Correction,
    distribution: bool,
    cvar_level: float,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> None:
    """Fill ``result.groups`` and ``result.distribution`` from the per-user values."""
    long = result.per_user
    wide = {
        run: part.pivot(index="user", columns="metric", values="value").reset_index()
        for run, part in long.groupby("system", sort=False)
    }
    if group_table is not None:
        users = pd.unique(long["user"])
        groups = align_groups(users, group_table, unknown_group=unknown_group, where="the evaluated users")
        result.groups = {
            run: group_gaps(table, groups, test=group_test, correction=correction, confidence=confidence,
                            n_resamples=n_resamples, seed=seed)
            for run, table in wide.items()
        }  # fmt: skip
    if distribution:
        from receval.stats.distribution import compare_to, describe

        runs = list(result.summary.index)
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for metric in result.summary.columns:
            series = {
                run: wide[run].set_index("user")[metric].dropna() if metric in wide[run] else pd.Series(dtype=float)
                for run in runs
            }
            if any(s.empty for s in series.values()):  # a system-level metric
                continue
            first = series[runs[0]]
            per_run: dict[str, dict[str, Any]] = {}
            for run in runs:
                per_run[run] = describe(series[run].to_numpy(), cvar_level=cvar_level, confidence=confidence,
                                        n_resamples=n_resamples, seed=seed)  # fmt: skip
                if run != runs[0]:
                    common = first.index.intersection(series[run].index)
                    per_run[run]["vs_first"] = {
                        "baseline": runs[0],
                        **compare_to(series[run][common].to_numpy(), first[common].to_numpy(), cvar_level=cvar_level,
                                     confidence=confidence, n_resamples=n_resamples, seed=seed),
                    }  # fmt: skip
            out[metric] = per_run
        result.distribution = out


# --- claims that hold: the smallest detectable effect, equivalence and Tukey HSD per pair ---------------

__all__ += ["claims_columns", "within_margin_lines"]


def claims_columns(
    result: RunComparison,
    *,
    margin: str | float | None = None,
    tukey: bool = False,
    alpha: float = 0.05,
    power: float = 0.8,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """``result.tests`` with each pair's ``mde`` and, as asked, its equivalence (TOST) and Tukey HSD p-values.

    - ``mde``: the smallest mean difference the paired t-test detects with probability ``power`` at
      ``alpha`` with the pair's n users and the spread of its per-user differences
      (:func:`receval.stats.power.ttest_mde`; NaN when the differences are constant);
    - with ``margin`` (absolute, or ``"1%"`` of the mean of ``b``, the baseline when one is given):
      ``margin`` (absolute), ``tost_p``, ``equivalent`` (``tost_p < alpha``: the ``1 - 2 alpha`` interval
      ``tost_ci_low, tost_ci_high`` inside ``(-margin, margin)``), from
      :func:`receval.stats.equivalence.tost_paired`;
    - with ``tukey``: ``pvalue`` and ``pvalue_adj`` become the randomised Tukey HSD's family-wise p-value
      over all the runs (:func:`receval.stats.multiple.tukey_hsd`, ``n_resamples`` within-user permutations)
      and ``statistic`` the mean difference; every run must score the same users.

    Examples
    --------
    >>> truth = pd.DataFrame({"user": [1, 2, 3, 4], "item": [10, 11, 10, 12]})
    >>> runs = {
    ...     "a": pd.DataFrame({"user": [1, 2, 3, 4], "item": [10, 11, 10, 10], "rank": [1, 1, 1, 1]}),
    ...     "b": pd.DataFrame({"user": [1, 2, 3, 4], "item": [10, 11, 12, 10], "rank": [1, 1, 1, 1]}),
    ... }
    >>> out = claims_columns(compare_runs(runs, truth, ["precision@1"]), margin="50%", tukey=True, n_resamples=99)
    >>> out[["a", "b", "diff", "margin", "equivalent", "pvalue"]].round(3).to_dict("records")
    [{'a': 'a', 'b': 'b', 'diff': 0.25, 'margin': 0.25, 'equivalent': False, 'pvalue': 1.0}]
    """
    from receval.errors import DataError
    from receval.stats.equivalence import parse_margin, resolve_margin, tost_paired
    from receval.stats.multiple import tukey_hsd, wide_values
    from receval.stats.power import check_alpha, check_power, ttest_mde

    check_alpha(alpha)
    check_power(power)
    if margin is not None:
        parse_margin(margin)  # a bad margin is refused before any work
    tests = result.tests.copy()
    extra: dict[str, list[Any]] = {"mde": []}
    if margin is not None:
        extra |= {"margin": [], "tost_p": [], "equivalent": [], "tost_ci_low": [], "tost_ci_high": []}
    tukey_p: list[float] = []
    per_metric: dict[str, Any] = {}
    for row in tests.itertuples(index=False):
        part = result.per_user[result.per_user["metric"] == row.metric]
        wide = part.pivot_table(index="user", columns="system", values="value", aggfunc="mean", observed=True)
        both = wide[[row.a, row.b]].dropna()
        d = (both[row.a] - both[row.b]).to_numpy()
        varied = len(d) >= 2 and float(d.std(ddof=1)) > 0
        extra["mde"].append(
            ttest_mde(sd=float(d.std(ddof=1)), n=len(d), alpha=alpha, power=power) if varied else float("nan")
        )
        if margin is not None:
            absolute = resolve_margin(margin, float(both[row.b].mean()) if len(both) else 0.0)
            res = tost_paired(both[row.a], both[row.b], margin=absolute, alpha=alpha) if varied else None
            extra["margin"].append(absolute)
            extra["tost_p"].append(res.pvalue if res else float("nan"))
            extra["equivalent"].append(res.equivalent if res else False)
            extra["tost_ci_low"].append(res.ci_low if res else float("nan"))
            extra["tost_ci_high"].append(res.ci_high if res else float("nan"))
        if tukey:
            if row.metric not in per_metric:
                matrix = wide_values(part)
                if len(matrix) < 2:
                    raise DataError(f"Tukey HSD on {row.metric} needs at least two users scored by every run")
                per_metric[row.metric] = tukey_hsd(
                    matrix.to_numpy(), list(matrix.columns), n_resamples=n_resamples, seed=seed
                )
            fit = per_metric[row.metric]
            tukey_p.append(float(fit.pvalues[fit.systems.index(row.a), fit.systems.index(row.b)]))
    for name, values in extra.items():
        tests[name] = values
    if tukey:
        tests["statistic"] = tests["diff"]
        tests["pvalue"] = tukey_p
        tests["pvalue_adj"] = tukey_p  # one family-wise error rate already: no further correction
    return tests


def undefined_lines(tests: pd.DataFrame) -> list[str]:
    """Why a pair's test figures are NaN (null in JSON), one line per such pair of a tests table.

    A paired test needs two users scored by both runs, and a spread of their differences:
    with every user's difference the same (two identical runs) Student's t, the
    standardised effect size and the detectable difference divide by a zero deviation.

    >>> tests = pd.DataFrame({"metric": ["m", "m"], "a": ["x", "x"], "b": ["y", "z"], "n": [1, 5],
    ...                       "diff": [0.5, 0.0], "effect_size": [None, None], "pvalue": [None, 1.0]})
    >>> for line in undefined_lines(tests):
    ...     print(line)
    m, x against y: 1 user scored by both runs; a paired test needs 2 or more: effect_size, pvalue undefined (nan)
    m, x against z: every user differs by 0, so the differences have no spread: effect_size undefined (nan)
    """
    figures = [c for c in ("effect_size", "statistic", "pvalue", "pvalue_adj", "mde") if c in tests.columns]
    lines = []
    for row in tests.to_dict("records"):
        empty = ", ".join(c for c in figures if pd.isna(row[c]))
        if not empty:
            continue
        pair = f"{row['metric']}, {row['a']} against {row['b']}"
        if row["n"] < 2:
            users = "user" if row["n"] == 1 else "users"
            why = f"{row['n']} {users} scored by both runs; a paired test needs 2 or more"
        else:
            why = f"every user differs by {row['diff']:g}, so the differences have no spread"
        lines.append(f"{pair}: {why}: {empty} undefined (nan)")
    return lines


def within_margin_lines(tests: pd.DataFrame) -> list[str]:
    """``"b is within 0.005 of a (ndcg@10): TOST p = 0.01"`` for each equivalent pair (``claims_columns``' rows).

    >>> within_margin_lines(pd.DataFrame({"metric": ["m"], "a": ["x"], "b": ["y"], "margin": [0.01],
    ...                                   "equivalent": [True], "tost_p": [0.012]}))
    ['x is within 0.01 of y (m): TOST p = 0.012']
    """
    if "equivalent" not in tests.columns:
        return []
    return [
        f"{row.a} is within {row.margin:.4g} of {row.b} ({row.metric}): TOST p = {row.tost_p:.3g}"
        for row in tests.itertuples(index=False)
        if row.equivalent
    ]
