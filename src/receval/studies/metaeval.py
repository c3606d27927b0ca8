"""Meta-evaluation of metrics (Parapar & Radlinski 2021, §5): how a metric behaves, not a system.

Three experiments, each for any list of registry metric strings (``"ab_ndcg@10"``,
``"alpha_ndcg@10"``, ``"ndcg@10"`` …) on one truth/train/aspect setting:

- :func:`swap_correlation` — rank correlation with the ideal ordering under progressive
  swaps. Each user's reference list is their top-k truth items by rating (ties: item
  index). Level s of ``mode="bottom-to-top"`` swaps the pairs (1, k), (2, k−1), …, s
  pairs in all (the bottom items climb to the top); ``mode="redundant"`` makes the
  same swaps among the positions held by items of the list's most frequent (most
  redundant) aspect only, so which positions carry that aspect does not change. No
  level is better than the previous one in rating order; the score is Kendall's τ
  between the levels' order and the metric's per-user values (τ-b, averaged over users
  with at least k truth items; 1 = the metric sees every degradation).
- :func:`discriminative_power` — the systems and their distorted copies (each list
  position replaced, with probability = strength, by a random catalogue item not in the
  list, seeded), paired tests between every pair of runs (paired t-test and paired
  randomisation test from :mod:`receval.stats.significance`, over the users both
  score), the share of pairs separated at p < ``level``.
- :func:`incompleteness` — remove a fraction x of the truth ratings (uniformly, seeded),
  rank the systems by each metric with full and reduced truth, Kendall's τ between the
  two rankings (scipy's τ-b), averaged over seeds.

:func:`metaeval_study` runs the three on a data set with real recommenders (a seeded
holdout, each system's top-k lists, training items excluded);
:func:`receval.report.studies.plot_metaeval` draws the three figures.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> rng = np.random.default_rng(0)
>>> truth = sp.random(30, 40, density=0.5, random_state=0, format="csr")
>>> truth.data = rng.integers(1, 6, truth.nnz).astype(float)
>>> aspects = sp.csr_matrix((rng.random((40, 4)) < 0.4).astype(float))
>>> table, curves = swap_correlation(["alpha_ndcg@5", "ndcg@5"], truth, aspects, k=5)
>>> t = table.set_index(["metric", "mode"])["tau"]
>>> bool(t["ndcg@5", "bottom-to-top"] > 0), bool(t["ndcg@5", "redundant"] > 0)
(True, True)
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats

from receval.errors import ConfigError
from receval.metrics._input import spanned_scale
from receval.metrics.registry import MetricInput, parse_metric
from receval.progress import Progress, progress_to
from receval.stats.significance import paired_ttest, permutation_test
from receval.studies.metaeval_defaults import DEFAULT_METRICS, DEFAULT_SYSTEMS
from receval.validate import check_number

if TYPE_CHECKING:
    from receval.data.interactions import Interactions

_log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_METRICS",
    "DEFAULT_SYSTEMS",
    "MetaevalStudy",
    "discriminative_power",
    "distort",
    "incompleteness",
    "metaeval_study",
    "per_user",
    "swap_correlation",
]


def per_user(
    metric: str,
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix | None,
    train: sp.csr_matrix | None = None,
    *,
    threshold: float | None = None,
    rating_max: float | None = None,
) -> np.ndarray:
    """Per-user values of a registry metric string (NaN = user not scored).

    ``threshold`` defaults to that of the scale the truth's ratings span (:class:`MetricInput`).

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings``.

    Examples
    --------
    Each user's list holds two items rated 4 or more among three:

    >>> truth = sp.csr_matrix(np.array([[5, 4, 0, 0, 1, 0], [0, 5, 5, 0, 0, 2], [4, 0, 0, 5, 0, 0]], dtype=float))
    >>> aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1], [1, 1], [1, 0]], dtype=float))
    >>> good, bad = np.array([[0, 1, 4], [1, 2, 5], [3, 0, 1]]), np.array([[5, 3, 2], [0, 3, 4], [5, 4, 2]])
    >>> per_user("precision@3", good, truth, aspects, threshold=4).round(3).tolist()
    [0.667, 0.667, 0.667]
    """
    data = MetricInput(rankings, truth, aspects=aspects, train=train, threshold=threshold, rating_max=rating_max)
    return parse_metric(metric).per_user(data)


def _reference_lists(truth: sp.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of users with ≥ k truth items and their top-k truth items by rating (ties: item index)."""
    counts = np.diff(truth.indptr)
    users = np.flatnonzero(counts >= k)
    lists = np.empty((len(users), k), dtype=np.int64)
    for row, u in enumerate(users):
        sl = slice(truth.indptr[u], truth.indptr[u + 1])
        items, ratings = truth.indices[sl], truth.data[sl]
        order = np.lexsort((items, -ratings))
        lists[row] = items[order[:k]]
    return users, lists


def _levels(lists: np.ndarray, aspects: sp.csr_matrix, mode: str, n_levels: int) -> list[np.ndarray]:
    k = lists.shape[1]
    out = [lists.copy()]
    if mode == "bottom-to-top":
        cur = lists.copy()
        for s in range(n_levels):
            cur = cur.copy()
            cur[:, [s, k - 1 - s]] = cur[:, [k - 1 - s, s]]
            out.append(cur)
        return out
    # redundant: the same bottom-to-top swaps, restricted to the positions of the items
    # with the list's most frequent aspect (the positions that aspect occupies stay put)
    dense = aspects[lists.ravel()].toarray().reshape(lists.shape[0], k, -1) > 0
    top_aspect = dense.sum(axis=1).argmax(axis=1)
    has = dense[np.arange(lists.shape[0]), :, top_aspect]  # (users, k)
    cur = lists.copy()
    for s in range(n_levels):
        cur = cur.copy()
        for row in range(lists.shape[0]):
            pos = np.flatnonzero(has[row])
            if s < len(pos) // 2:
                a, b = pos[s], pos[len(pos) - 1 - s]
                cur[row, [a, b]] = cur[row, [b, a]]
        out.append(cur)
    return out


def swap_correlation(
    metrics: Sequence[str],
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int = 10,
    modes: Sequence[Literal["bottom-to-top", "redundant"]] = ("bottom-to-top", "redundant"),
    threshold: float | None = None,
    rating_max: float | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Kendall τ between degradation level and metric value, per metric and mode.

    Returns
    -------
    tuple of (pandas.DataFrame, pandas.DataFrame)
        ``table`` with columns metric, mode, tau, users, and ``curves`` with metric,
        mode, level, value (mean over users) for plotting.

    Examples
    --------
    >>> truth = sp.csr_matrix(np.array([[5, 4, 0, 0, 1, 0], [0, 5, 5, 0, 0, 2], [4, 0, 0, 5, 0, 0]], dtype=float))
    >>> aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1], [1, 1], [1, 0]], dtype=float))
    >>> good, bad = np.array([[0, 1, 4], [1, 2, 5], [3, 0, 1]]), np.array([[5, 3, 2], [0, 3, 4], [5, 4, 2]])
    >>> table, curves = swap_correlation(["ndcg@3"], truth, aspects, k=3, threshold=4)
    >>> table[["mode", "tau"]].values.tolist(), curves.columns.tolist()
    ([['bottom-to-top', 1.0], ['redundant', 1.0]], ['metric', 'mode', 'level', 'value'])
    """
    truth = sp.csr_matrix(truth)
    threshold = spanned_scale(truth).relevance(threshold).threshold  # one λ for every reduced truth
    users, lists = _reference_lists(truth, k)
    if len(users) == 0:
        raise ConfigError(f"no user has {k} truth items; lower k for the swap experiment")
    sub_truth = truth[users]
    sub_train = None if train is None else sp.csr_matrix(train)[users]
    rows, curves = [], []
    for mode in modes:
        if mode not in ("bottom-to-top", "redundant"):
            raise ConfigError(f"unknown swap mode {mode!r}; use 'bottom-to-top' or 'redundant'")
        n_levels = k // 2
        levels = _levels(lists, aspects, mode, n_levels)
        for metric in metrics:
            values = np.stack(
                [
                    per_user(metric, lv, sub_truth, aspects, sub_train, threshold=threshold, rating_max=rating_max)
                    for lv in levels
                ],
                axis=1,
            )
            taus = []
            target = -np.arange(len(levels), dtype=float)
            for v in values:
                if np.isnan(v).any():
                    continue
                tau = stats.kendalltau(target, v).statistic if np.ptp(v) > 0 else 0.0
                taus.append(tau)
            rows.append(
                {"metric": metric, "mode": mode, "tau": float(np.mean(taus)) if taus else np.nan, "users": len(taus)}
            )
            for lv, mean in enumerate(np.nanmean(values, axis=0)):
                curves.append({"metric": metric, "mode": mode, "level": lv, "value": float(mean)})
    return pd.DataFrame(rows), pd.DataFrame(curves)


def distort(rankings: np.ndarray, n_items: int, strength: float, seed: int | np.random.Generator = 0) -> np.ndarray:
    """Replace each listed item, with probability ``strength``, by a random item not in the list.

    Returns
    -------
    numpy.ndarray
        A copy of ``rankings`` of the same shape; padding (-1) stays.

    Examples
    --------
    >>> distort(np.array([[0, 1, 2]]), 10, 0.0).tolist()
    [[0, 1, 2]]
    >>> out = distort(np.array([[0, 1, 2]]), 10, 1.0, seed=1)
    >>> sorted(set(out[0]) & {0, 1, 2}), len(set(out[0]))
    ([], 3)
    """
    if not 0.0 <= strength <= 1.0:
        raise ConfigError(f"distortion strength must lie in [0, 1], got {strength}")
    rng = np.random.default_rng(seed)
    out = np.array(rankings, dtype=np.int64, copy=True)
    replace = (rng.random(out.shape) < strength) & (out >= 0)
    for row in np.flatnonzero(replace.any(axis=1)):
        taken = set(out[row][out[row] >= 0].tolist())
        for j in np.flatnonzero(replace[row]):
            while True:
                cand = int(rng.integers(n_items))
                if cand not in taken:
                    break
            taken.add(cand)
            out[row, j] = cand
    return out


def _runs(systems: Mapping[str, np.ndarray], strengths: Sequence[float], n_items: int, seed: int) -> dict:
    """Each system at each distortion strength (strength 0 = the system itself)."""
    runs = {}
    for s_i, (name, rankings) in enumerate(systems.items()):
        for d_i, d in enumerate(strengths):
            label = name if d == 0 else f"{name}@{d:g}"
            rng = np.random.default_rng([seed, s_i, d_i])
            runs[label] = distort(rankings, n_items, d, seed=rng) if d > 0 else rankings
    return runs


def discriminative_power(
    metrics: Sequence[str],
    systems: Mapping[str, np.ndarray],
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    strengths: Sequence[float] = (0.0, 0.2, 0.5),
    level: float = 0.05,
    n_resamples: int = 1_000,
    threshold: float | None = None,
    rating_max: float | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Share of pairs of runs (system x distortion strength) separated at p < ``level``.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, test): ``metric``, ``test``, ``pairs``, ``significant``, ``share``.

    Examples
    --------
    Two systems over three users are one pair, too few to be separated:

    >>> truth = sp.csr_matrix(np.array([[5, 4, 0, 0, 1, 0], [0, 5, 5, 0, 0, 2], [4, 0, 0, 5, 0, 0]], dtype=float))
    >>> aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1], [1, 1], [1, 0]], dtype=float))
    >>> good, bad = np.array([[0, 1, 4], [1, 2, 5], [3, 0, 1]]), np.array([[5, 3, 2], [0, 3, 4], [5, 4, 2]])
    >>> power = discriminative_power(["ndcg@3"], {"good": good, "bad": bad}, truth, aspects, strengths=[0.0],
    ...                              n_resamples=200, threshold=4)
    >>> power[["test", "pairs", "significant"]].values.tolist()
    [['t-test', 1, 0], ['permutation', 1, 0]]
    """
    runs = _runs(systems, strengths, truth.shape[1], seed)
    threshold = spanned_scale(truth).relevance(threshold).threshold
    if len(runs) < 2:
        raise ConfigError("discriminative power needs at least two runs (systems x strengths)")
    rows = []
    for metric in metrics:
        values = {
            name: per_user(metric, r, truth, aspects, train, threshold=threshold, rating_max=rating_max)
            for name, r in runs.items()
        }
        counts = {"t-test": 0, "permutation": 0}
        pairs = list(itertools.combinations(runs, 2))
        for p_i, (a, b) in enumerate(pairs):
            ok = ~np.isnan(values[a]) & ~np.isnan(values[b])
            x, y = values[a][ok], values[b][ok]
            if len(x) < 2 or np.all(x == y):
                continue
            counts["t-test"] += paired_ttest(x, y).pvalue < level
            rng = np.random.default_rng([seed, p_i])
            counts["permutation"] += permutation_test(x, y, n_resamples=n_resamples, seed=rng).pvalue < level
        for test, n_sig in counts.items():
            rows.append(
                {"metric": metric, "test": test, "pairs": len(pairs), "significant": n_sig, "share": n_sig / len(pairs)}
            )
    return pd.DataFrame(rows)


def incompleteness(
    metrics: Sequence[str],
    systems: Mapping[str, np.ndarray],
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    fractions: Sequence[float] = (0.1, 0.3, 0.5, 0.7, 0.9),
    seeds: Sequence[int] = (0, 1, 2),
    strengths: Sequence[float] = (0.0,),
    threshold: float | None = None,
    rating_max: float | None = None,
) -> pd.DataFrame:
    """Kendall τ between system rankings with full and with reduced truth.

    The ranked runs are the systems and, for each strength > 0 in ``strengths``, their
    distorted copies (as in :func:`discriminative_power`, seeded by the first seed), so
    that runs of close quality make the ranking harder to keep.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, fraction): ``metric``, ``fraction``, ``tau`` (the mean over
        ``seeds``) and ``tau_std``.

    Examples
    --------
    >>> truth = sp.csr_matrix(np.array([[5, 4, 0, 0, 1, 0], [0, 5, 5, 0, 0, 2], [4, 0, 0, 5, 0, 0]], dtype=float))
    >>> aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1], [1, 1], [1, 0]], dtype=float))
    >>> good, bad = np.array([[0, 1, 4], [1, 2, 5], [3, 0, 1]]), np.array([[5, 3, 2], [0, 3, 4], [5, 4, 2]])
    >>> incompleteness(["ndcg@3"], {"good": good, "bad": bad}, truth, aspects, fractions=[0.5], seeds=[0, 1],
    ...                threshold=4).values.tolist()
    [['ndcg@3', 0.5, 1.0, 0.0]]
    """
    runs = _runs(systems, strengths, truth.shape[1], seeds[0] if len(seeds) else 0)
    if len(runs) < 2:
        raise ConfigError("robustness to incompleteness ranks runs: give at least two systems or strengths")
    truth = sp.csr_matrix(truth)
    threshold = spanned_scale(truth).relevance(threshold).threshold  # one λ for every reduced truth
    systems = runs
    names = list(runs)

    def means(t: sp.csr_matrix, metric: str) -> np.ndarray:
        return np.array(
            [
                np.nanmean(per_user(metric, systems[n], t, aspects, train, threshold=threshold, rating_max=rating_max))
                for n in names
            ]
        )

    full = {m: means(truth, m) for m in metrics}
    rows = []
    for x in fractions:
        if not 0.0 < x < 1.0:
            raise ConfigError(f"fractions of judgments to remove must lie in (0, 1), got {x}")
        taus: dict[str, list[float]] = {m: [] for m in metrics}
        for s in seeds:
            keep = np.random.default_rng([s, int(round(x * 1000))]).random(truth.nnz) >= x
            reduced = truth.copy()
            reduced.data = np.where(keep, reduced.data, np.nan)
            reduced = _drop_nan(reduced)
            for m in metrics:
                taus[m].append(float(stats.kendalltau(full[m], means(reduced, m)).statistic))
        for m in metrics:
            rows.append(
                {"metric": m, "fraction": x, "tau": float(np.nanmean(taus[m])), "tau_std": float(np.nanstd(taus[m]))}
            )
    return pd.DataFrame(rows)


def _drop_nan(m: sp.csr_matrix) -> sp.csr_matrix:
    keep = ~np.isnan(m.data)
    indptr = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))[m.indptr]
    return sp.csr_matrix((m.data[keep], m.indices[keep], indptr), shape=m.shape)


@dataclass(frozen=True)
class MetaevalStudy:
    """Outcome of :func:`metaeval_study`.

    Attributes
    ----------
    swap, curves
        :func:`swap_correlation`'s table and curves.
    power
        :func:`discriminative_power`'s table.
    robustness
        :func:`incompleteness`'s table.
    means
        Mean per-user value of each metric (columns) for each system (rows).
    n_users, n_items, n_aspects
        Users with test ratings (the evaluated users), catalogue size, number of aspects.
    """

    swap: pd.DataFrame
    curves: pd.DataFrame
    power: pd.DataFrame
    robustness: pd.DataFrame
    means: pd.DataFrame
    n_users: int
    n_items: int
    n_aspects: int

    def tables(self) -> dict[str, pd.DataFrame]:
        """The four tables by their file names (``swap_correlation``, ``swap_curves``, ...)."""
        return {
            "swap_correlation": self.swap,
            "swap_curves": self.curves,
            "discriminative_power": self.power,
            "incompleteness": self.robustness,
        }


def metaeval_study(
    data: Interactions,
    metrics: Sequence[str] = DEFAULT_METRICS,
    systems: Sequence[str] = DEFAULT_SYSTEMS,
    *,
    k: int = 10,
    threshold: float | None = None,
    test_fraction: float = 0.2,
    strengths: Sequence[float] = (0.0, 0.1, 0.3, 0.5),
    fractions: Sequence[float] = (0.1, 0.3, 0.5, 0.7, 0.9),
    n_seeds: int = 3,
    seed: int = 0,
    progress: Progress | None = None,
) -> MetaevalStudy:
    """The three experiments on ``data`` (with item aspects) and real recommenders.

    The data (repeated pairs: last rating kept) is split by a seeded holdout
    (:func:`receval.split.holdout`, ``test_fraction``, ``seed``); each of ``systems`` is
    fitted on the training part and recommends top-``k`` lists, training items
    excluded, to the users with test ratings. Those lists are the runs of
    :func:`swap_correlation` (cutoff ``k``), :func:`discriminative_power` (distortion
    ``strengths``, seeded by ``seed``) and :func:`incompleteness` (``fractions`` of the
    judgments removed, seeds ``seed … seed + n_seeds - 1``). Relevance is rating ≥
    ``threshold`` (default: the data scale's
    :meth:`~receval.data.interactions.RatingScale.default_threshold`). The systems' means are
    :func:`receval.evaluation.evaluate_model`'s.
    ``progress(done, total, "metaeval")`` (default: the active callback of
    :func:`receval.progress.reporting`) hears of each system and each experiment done.

    Returns
    -------
    MetaevalStudy
        The systems' metric means and the three experiments' tables (``tables()``).

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=60, n_items=80, n_ratings=1500, seed=0)
    >>> study = metaeval_study(data, ["alpha_ndcg@5", "ndcg@5"], ["random", "popularity"], k=5,
    ...                        strengths=[0, 0.5], fractions=[0.5], n_seeds=1)
    >>> study.means.shape, sorted(study.tables())
    ((2, 2), ['discriminative_power', 'incompleteness', 'swap_correlation', 'swap_curves'])
    """
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.split import holdout

    metric_list = [str(m) for m in metrics]
    if not metric_list:
        raise ConfigError("give at least one metric to meta-evaluate, e.g. alpha_ndcg@10,ndcg@10")
    for m in metric_list:
        parse_metric(m)  # unknown names fail before any training
    system_list = [str(s) for s in systems]
    if not system_list:
        raise ConfigError("give at least one system (an algorithm name of receval.recommenders.make)")
    # a strength of -1 or NaN was the undistorted system under another label (_runs distorts only d > 0)
    strengths = [check_number(d, "strengths", minimum=0, maximum=1) for d in strengths]
    data = data.deduplicate("last")
    threshold = data.scale.relevance(threshold).threshold
    if data.aspects is None:
        raise ConfigError("the data has no item aspects: give data with aspects (an item,aspect table)")
    train, test = holdout(data, test_fraction=test_fraction, seed=seed)
    truth_all, train_all = test.to_csr(), train.to_csr()
    users = np.flatnonzero(np.diff(truth_all.indptr) > 0)
    truth, train_csr = truth_all[users], train_all[users]
    runs: dict[str, np.ndarray] = {}
    means: dict[str, dict[str, float]] = {}
    notify, total = progress_to(progress), len(system_list) + 3
    notify(0, total, "metaeval")
    for done, name in enumerate(system_list, 1):  # one-shot protocol: test users' lists, training items excluded
        t0 = time.perf_counter()
        result = evaluate_model(make(name), train, test, metric_list, k=k, threshold=threshold, seed=seed)
        if result.rankings is None:
            raise ConfigError(f"metaeval: {name} made no rankings for {metric_list}; meta-evaluate ranking metrics")
        runs[name], means[name] = result.rankings, result.summary
        _log.info("metaeval: %s fitted and evaluated in %.2f s", name, time.perf_counter() - t0)
        notify(done, total, "metaeval")
    rating_max = float(data.scale.high)
    swap, curves = swap_correlation(
        metric_list, truth, data.aspects, train_csr, k=k, threshold=threshold, rating_max=rating_max
    )
    _log.info("metaeval: swap correlation of %d metrics", len(metric_list))
    notify(len(system_list) + 1, total, "metaeval")
    power = discriminative_power(
        metric_list,
        runs,
        truth,
        data.aspects,
        train_csr,
        strengths=strengths,
        seed=seed,
        threshold=threshold,
        rating_max=rating_max,
    )
    _log.info("metaeval: discriminative power over %d distortion strengths", len(strengths))
    notify(len(system_list) + 2, total, "metaeval")
    robustness = incompleteness(
        metric_list,
        runs,
        truth,
        data.aspects,
        train_csr,
        fractions=fractions,
        strengths=strengths,
        seeds=list(range(seed, seed + n_seeds)),
        threshold=threshold,
        rating_max=rating_max,
    )
    _log.info("metaeval: incompleteness over %d fractions and %d seeds", len(fractions), n_seeds)
    notify(total, total, "metaeval")
    return MetaevalStudy(
        swap=swap,
        curves=curves,
        power=power,
        robustness=robustness,
        means=pd.DataFrame(means).T,
        n_users=len(users),
        n_items=data.n_items,
        n_aspects=data.aspects.shape[1],
    )
