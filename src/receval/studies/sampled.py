"""Sampled against full: how far is a metric over 100 sampled negatives from the full-catalogue metric?

Since NCF (He et al., WWW 2017), many papers rank each held-out item against a small
sample of negatives instead of the whole catalogue. Krichene & Rendle (KDD 2020, "On
Sampled Metrics for Item Recommendation") showed that such sampled metrics can order
systems differently from the full metrics, even in expectation, and proposed corrected
estimators; Li et al. (KDD 2020) map sampled to global top-k and Jin et al. (AAAI 2021)
estimate the global rank distribution. This study puts each estimate beside the full
value for several systems on one split:

1. the data is split (leave-one-out by default, as NCF; any method of
   :data:`receval.vocabulary.SPLIT_METHODS` by name), every system is fitted once;
2. ``repeats`` candidate samples are drawn
   (:func:`receval.evaluation.candidates.draw_candidates`, seeds derived from ``seed``),
   all systems ranked against the same ones;
3. per test item, the full rank (among every item that is neither a training nor a test
   item of the user, as the negatives are) and the rank among each sample's negatives
   (:func:`receval.stats.sampled.sampled_ranks`, one tie convention for both);
4. per metric the full value (the mean of :func:`receval.stats.sampled.rank_metric` over
   the full ranks: for leave-one-out the usual full-catalogue metric with training items
   excluded), the uncorrected sampled value (``sampled``) and each correction
   (:func:`receval.stats.sampled.estimate`);
5. per estimate, its error against the full value over systems and samples, the spread
   (standard deviation) over samples, and Kendall τ between its ranking of the systems and
   the full ranking (:func:`receval.stats.significance.rank_agreement`): the mean of the τ
   of each sample (what one study with one sample sees) and the τ of the mean estimates
   (the ranking in expectation).

Every system's scores are computed once per test user as full rows: the full ranks need
them, and each sample's candidate scores are then read from the same rows, so every
estimate of a system comes from one set of scores.

Examples
--------
>>> from receval.data.synthetic import generate
>>> data = generate(n_users=60, n_items=300, n_ratings=2400, seed=0)
>>> study = sampled_study(data, ["popularity", "item-knn"], n=50, repeats=3, metrics=["recall@10"],
...                       corrections=["none", "bv"], split="loo-random")
>>> sorted(study.summary("recall@10")["error"])
['bv', 'sampled']
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from receval import jsontext
from receval.data.interactions import Interactions, distinct, pair_keys
from receval.errors import ConfigError, DataError, did_you_mean
from receval.metrics import parse_metric
from receval.metrics._definition import SAMPLED_METRICS
from receval.progress import Progress, progress_to
from receval.split import split_by_name
from receval.stats.sampled import (
    SUPPORTED,
    check_correction,
    check_exponent,
    check_sample_memory,
    estimate,
    rank_metric,
    sampled_ranks,
)
from receval.stats.significance import rank_agreement
from receval.validate import check_count, check_distinct, check_number, check_seed
from receval.vocabulary import (
    DEFAULT_SAMPLED_CORRECTIONS,
    SAMPLE_SHAPES,
    SAMPLED_CORRECTIONS,
    SAMPLING_SCHEMES,
    sampled_word,
    split_method,
)

_log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_METRICS",
    "DEFAULT_REPEATS",
    "DEFAULT_SPLIT",
    "DEFAULT_SYSTEMS",
    "UNCORRECTED",
    "SampledStudy",
    "check_algorithms",
    "check_study_data",
    "check_study_design",
    "check_study_metrics",
    "estimate_label",
    "sampled_study",
    "study_corrections",
]

DEFAULT_METRICS = ("ndcg@10", "recall@10")
DEFAULT_REPEATS = 20  # enough samples for a spread and a mean tau
DEFAULT_SPLIT = "loo"  # each user's last pair, as NCF holds out
DEFAULT_SYSTEMS = ("popularity", "item-knn", "user-knn", "mf", "hkv", "ease", "rp3beta", "slim")
UNCORRECTED = "sampled"
"""The label of the uncorrected sampled estimate (correction ``none``) in tables and JSON."""

_BATCH_CELLS = 1 << 22  # score cells per batch of test users (32 MB of float64)
_SMALLER = "use fewer repeats= or a smaller n="


def estimate_label(correction: str) -> str:
    """The name of a correction's estimate in the study's tables: ``sampled`` for ``none``, else the correction.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> estimate_label("none"), estimate_label("bv")
    ('sampled', 'bv')
    """
    return UNCORRECTED if correction == "none" else correction


def check_study_metrics(metrics: Sequence[str], option: str = "metrics") -> list[tuple[str, str, int | None]]:
    """``(metric string, rank metric, k)`` of each metric the study can estimate from one relevant item's rank.

    Returns
    -------
    list of tuple
        The string as given, the name of :func:`receval.stats.sampled.rank_metric`, the cutoff.

    Examples
    --------
    >>> check_study_metrics(["nDCG@10", "hit_rate@5", "auc"])
    [('nDCG@10', 'ndcg', 10), ('hit_rate@5', 'recall', 5), ('auc', 'auc', None)]
    >>> check_study_metrics(["fallout@10"])
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: fallout@10 in metrics= has no sampled form; use recall, precision, ndcg, mrr, map or auc
    """
    out = []
    if not metrics:
        raise ConfigError(f"{option}= names no metric; give one, e.g. ndcg@10", parameters=[option])
    for text in metrics:
        metric = parse_metric(text)
        name = SAMPLED_METRICS.get(metric.name)
        if name is None:
            raise ConfigError(
                f"{text} in {option}= has no sampled form; use recall, precision, ndcg, mrr, map or auc",
                parameters=[option],
            )
        if metric.explicit:
            raise _own_parameters(text, metric, option)
        if name != "auc" and metric.k is None:
            raise ConfigError(
                f"{text} in {option}= needs a cutoff for the sampled study, e.g. {metric.name}@10", parameters=[option]
            )
        out.append((str(text), name, metric.k))
    return out


def check_study_design(n: int, repeats: int, shape: str, option: str = "shape") -> str:
    """The study's ``shape`` (per-item or per-user), once ``repeats`` samples of ``n`` negatives can fit in memory.

    Checked before the data is read: every data set needs at least one row per sample
    (:func:`receval.stats.sampled.check_sample_memory`), so ``repeats=10**12`` is refused
    here; :func:`sampled_study` checks again with the data's test pairs. The study compares
    each held-out item's sampled rank with its full rank, so RecBole's shape (a user's
    positives ranked in one list, ``shape=recbole``) is refused: evaluate it with
    :func:`receval.evaluation.sampled.evaluate_sampled`.

    Returns
    -------
    str
        The shape's word.

    Examples
    --------
    >>> check_study_design(100, 20, "Per_Item")
    'per-item'
    >>> check_study_design(100, 20, "recbole")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: shape=recbole ranks a user's positives in one list; the study compares each held-out ...
    """
    word = sampled_word(option, shape, SAMPLE_SHAPES)
    if word == "recbole":
        raise ConfigError(
            f"{option}=recbole ranks a user's positives in one list; the study compares each held-out item's sampled "
            f"rank with its full rank: use {option}=per-item or {option}=per-user (evaluate recbole's shape with a "
            "metric string, e.g. ndcg@10(sampled=100,shape=recbole))",
            parameters=[option],
        )
    check_sample_memory(n, repeats=repeats, kept=16.0, fix=_SMALLER, parameters=["repeats", "n"])
    return word


def check_study_data(data: Interactions, n: int, sampling: str, exponent: float, prefix: str = "") -> None:
    """Refuse, before any split, a study's ``n`` or popularity ``exponent`` that no split of ``data`` can draw.

    Every split keeps a user's own items out of the negatives, so ``n`` beyond the
    catalogue minus the fewest items a user has in ``data`` fails every split
    (:func:`sampled_study` checks again with the split); popularity weights that overflow
    on ``data``'s counts overflow on any training part's (:func:`receval.stats.sampled.check_exponent`).
    ``prefix`` is put before the option names in the message (``protocol.``).

    Returns
    -------
    None
        Or a one-line :class:`~receval.errors.ConfigError` naming the option and the largest value the data allows.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(40, 120, 1200, seed=0)
    >>> check_study_data(data, 50, "popularity", 0.75)
    >>> check_study_data(data, 50, "popularity", 400, prefix="protocol.")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: protocol.exponent=400: the popularity weights overflow float64 ...
    """
    keys = distinct(pair_keys(data.users, data.items, data.n_items))
    per_user = np.bincount(keys // max(data.n_items, 1), minlength=data.n_users)
    most = data.n_items - (int(per_user[per_user > 0].min()) if (per_user > 0).any() else 0)
    if n > most:
        raise ConfigError(
            f"{prefix}n={n} negatives cannot be drawn: the data has {data.n_items:,} items and every user has "
            f"{data.n_items - most:,} or more of them; use {prefix}n={max(most, 1)} or fewer",
            parameters=["n"],
        )
    if sampling == "popularity":
        check_exponent(exponent, np.bincount(data.items, minlength=data.n_items), f"{prefix}exponent")


def _own_parameters(text: str, metric: Any, option: str) -> ConfigError:
    """A metric string's own parameters are refused by the study, which would not apply them (one sample design and
    set of corrections for every metric; every held-out item counts): the message says which option does."""
    given = sorted(metric.explicit)
    reasons = []
    if {"sampled", "candidates", "sampling", "exponent", "shape"} & set(given):
        reasons.append("the sample is the study's own (n=, sampling=, exponent=, shape=), the same for every metric")
    if {"correction", "gamma"} & set(given):
        reasons.append("the estimates are the study's corrections=")
    if "threshold" in given:
        reasons.append("every held-out item of the split counts, whatever its rating")
    if not reasons:
        reasons.append("the study computes one held-out item's metric from its rank")
    bare = metric.name if metric.k is None else f"{metric.name}@{metric.k}"
    return ConfigError(
        f"{text} in {option}= sets {', '.join(f'{p}=' for p in given)}, which the sampled study does not apply: "
        f"{'; '.join(reasons)}; write {bare}",
        parameters=[option, "n", "sampling", "exponent", "shape", "corrections"],
    )


def study_corrections(corrections: Sequence[str] | None, sampling: str, option: str = "corrections") -> list[str]:
    """The corrections of a study, in the vocabulary's order; by default ``DEFAULT_SAMPLED_CORRECTIONS``.

    Every correction but ``none`` assumes uniformly drawn negatives
    (:func:`receval.stats.sampled.check_correction`): with ``sampling="popularity"`` one asked
    for is an error, and the default is ``none`` alone.

    Returns
    -------
    list of str
        Corrections of :data:`receval.vocabulary.SAMPLED_CORRECTIONS`.

    Examples
    --------
    >>> study_corrections(["BV", "none"], "uniform")
    ['none', 'bv']
    >>> study_corrections(None, "uniform")
    ['none', 'ls', 'bv', 'mapping']
    >>> study_corrections(None, "popularity")
    ['none']
    """
    scheme = sampled_word("sampling", sampling, SAMPLING_SCHEMES)
    if corrections is None:
        return list(DEFAULT_SAMPLED_CORRECTIONS) if scheme == "uniform" else ["none"]
    chosen = {sampled_word(option, c, SAMPLED_CORRECTIONS) for c in corrections}
    if not chosen:
        raise ConfigError(f"{option}= names no correction; give one, e.g. none,bv", parameters=[option])
    for c in chosen:
        check_correction(c, "recall", sampling=scheme)  # every correction estimates recall: this checks the scheme
    return [c for c in SAMPLED_CORRECTIONS if c in chosen]


def check_algorithms(names: Sequence[str], option: str = "algorithms", *, minimum: int = 2) -> list[str]:
    """The algorithm names, each known to :func:`receval.recommenders.make`; at least ``minimum`` (two to rank).

    Returns
    -------
    list of str
        The names, in their order (a name given twice is refused: :func:`receval.validate.check_distinct`).

    Examples
    --------
    >>> check_algorithms(["popularity", "item-knn"])
    ['popularity', 'item-knn']
    >>> check_algorithms(["popularity", "itemknn"])
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: unknown algorithm 'itemknn' in algorithms=; did you mean 'item-knn'?
    """
    from receval.recommenders.registry import ALGORITHMS

    chosen = check_distinct([n.strip() for n in names if n.strip()], option)
    for name in chosen:
        if name not in ALGORITHMS and ":" not in name:
            hint = did_you_mean(name, ALGORITHMS) or " (receval algorithms lists them)"
            raise ConfigError(f"unknown algorithm {name!r} in {option}={hint}", parameters=[option])
    if len(chosen) < minimum:
        raise ConfigError(
            f"{option}= needs at least {minimum} algorithm{'s' if minimum > 1 else ''} to rank, "
            "e.g. popularity,item-knn",
            parameters=[option],
        )
    return chosen


def default_systems() -> list[str]:
    """:data:`DEFAULT_SYSTEMS` that this receval has (the strong baselines may be absent).

    Returns
    -------
    list of str
        Algorithm names.

    Examples
    --------
    >>> default_systems()[:5]
    ['popularity', 'item-knn', 'user-knn', 'mf', 'hkv']
    """
    from receval.recommenders.registry import ALGORITHMS

    return [name for name in DEFAULT_SYSTEMS if name in ALGORITHMS]


@dataclass(frozen=True)
class SampledStudy:
    """What :func:`sampled_study` returns.

    Attributes
    ----------
    values : DataFrame
        ``system, metric, estimate, repeat, value, full``: one row per system, metric,
        estimate and candidate sample (``full``: the system's full-catalogue value).
    kendall : DataFrame
        ``metric, estimate, kendall_tau, kendall_tau_std, kendall_tau_expected, mae, mse, spread``:
        per metric and estimate, the mean (and standard deviation) over samples of τ
        between the estimate's and the full ranking of the systems, τ of the systems' mean
        estimates (the ranking in expectation), the mean absolute and squared error against
        the full value over systems and samples, and the mean over systems of the standard
        deviation over samples.
    conventions : dict
        The split, the sample's design (scheme, size, exponent, shape, exclusions, the
        samples' seeds), the systems, the tie convention and the catalogue.
    """

    values: pd.DataFrame
    kendall: pd.DataFrame
    conventions: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """Per system, metric and estimate: ``full, mean, std, bias, mae, mse`` over the samples.

        Returns
        -------
        DataFrame
            One row per (system, metric, estimate) in the study's order.

        Examples
        --------
        >>> v = pd.DataFrame({"system": "a", "metric": "ndcg@10", "estimate": "sampled", "repeat": [0, 1],
        ...                   "value": [0.3, 0.5], "full": 0.1})
        >>> SampledStudy(v, pd.DataFrame()).to_frame()[["mean", "bias", "mae"]].round(3).values.tolist()
        [[0.4, 0.3, 0.3]]
        """
        v = self.values.assign(error=self.values["value"] - self.values["full"])
        groups = v.groupby(["system", "metric", "estimate"], sort=False)
        out = groups.agg(
            full=("full", "first"),
            mean=("value", "mean"),
            std=("value", "std"),
            bias=("error", "mean"),
            mae=("error", lambda e: float(np.abs(e).mean())),
            mse=("error", lambda e: float(np.square(e).mean())),
        )
        return out.reset_index()

    def summary(self, metric: str = "ndcg@10") -> dict[str, dict[str, float | None]]:
        """``{"kendall_tau": {estimate: τ}, "error": {estimate: MAE}}`` for one metric (τ: mean over samples).

        Returns
        -------
        dict
            ``kendall_tau``, ``kendall_tau_expected``, ``error`` (mean absolute error), ``mse`` and
            ``spread``, each by estimate.

        Examples
        --------
        >>> k = pd.DataFrame({"metric": "ndcg@10", "estimate": ["sampled"], "kendall_tau": [0.5],
        ...                   "kendall_tau_expected": [1.0], "mae": [0.2], "mse": [0.04], "spread": [0.01]})
        >>> SampledStudy(pd.DataFrame(), k).summary()["error"]
        {'sampled': 0.2}
        """
        rows = self.kendall[self.kendall["metric"] == metric]
        if rows.empty:
            raise ConfigError(f"no metric {metric!r} in the study; it has {sorted(self.kendall['metric'].unique())}")
        columns = {"kendall_tau": "kendall_tau", "kendall_tau_expected": "kendall_tau_expected", "error": "mae",
                   "mse": "mse", "spread": "spread"}  # fmt: skip
        by_estimate = rows.set_index("estimate")
        return {key: jsontext.plain(by_estimate[col].to_dict()) for key, col in columns.items()}

    def to_json(self, metric: str | None = None) -> str:
        """The study as one JSON object: ``metric``'s summary at the top, every metric under ``metrics``.

        ``metric`` defaults to the study's first metric.

        Returns
        -------
        str
            ``{"metric", "kendall_tau", "error", ..., "metrics": {metric: summary}, "systems": {metric:
            {system: {"full": v, estimate: mean}}}, "conventions": {...}}``.

        Examples
        --------
        >>> v = pd.DataFrame({"system": "a", "metric": "ndcg@10", "estimate": "sampled", "repeat": [0],
        ...                   "value": [0.3], "full": 0.1})
        >>> k = pd.DataFrame({"metric": "ndcg@10", "estimate": ["sampled"], "kendall_tau": [None],
        ...                   "kendall_tau_expected": [None], "mae": [0.2], "mse": [0.04], "spread": [None]})
        >>> import json
        >>> json.loads(SampledStudy(v, k).to_json())["systems"]
        {'ndcg@10': {'a': {'full': 0.1, 'sampled': 0.3}}}
        """
        metrics = list(dict.fromkeys(self.kendall["metric"]))
        first = metric or metrics[0]
        frame = self.to_frame()
        systems: dict[str, dict[str, dict[str, float | None]]] = {}
        for r in frame.itertuples():
            entry = systems.setdefault(str(r.metric), {}).setdefault(str(r.system), {"full": jsontext.plain(r.full)})
            entry[str(r.estimate)] = jsontext.plain(r.mean)
        payload = {
            "metric": first,
            **self.summary(first),
            "metrics": {m: self.summary(m) for m in metrics},
            "systems": systems,
            "conventions": self.conventions,
        }
        return jsontext.dumps(payload)


def _split(
    data: Interactions | tuple[Interactions, Interactions], method: str, test_fraction: float, seed: int
) -> tuple[Interactions, Interactions]:
    if isinstance(data, tuple):
        train, test = data
        return train, test
    chosen = split_method(method)
    if chosen.folds:
        raise ConfigError(f"split={method!r} gives several folds; the sampled study takes one split, e.g. loo")
    return split_by_name(data, method, test_fraction=test_fraction, seed=seed)[0]  # used where the method has one


def _sample_seeds(seed: int, repeats: int) -> list[int]:
    """One seed per candidate sample, independent streams spawned from ``seed`` (numpy's SeedSequence)."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(repeats)]


def _test_rows(train: Interactions, test: Interactions) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """The distinct test pairs ``(users, items)`` sorted by user, and every user's train + test items (CSR)."""
    n_items = train.n_items
    keys = distinct(pair_keys(test.users, test.items, n_items))
    users, items = (keys // n_items).astype(np.int32), (keys % n_items).astype(np.int32)
    both_u = np.concatenate([train.users, test.users])
    both_i = np.concatenate([train.items, test.items])
    seen = sp.csr_matrix((np.ones(len(both_u), dtype=bool), (both_u, both_i)), shape=(train.n_users, n_items))
    seen.sum_duplicates()
    return users, items, seen


def _candidate_rows(candidates: Any, users: np.ndarray, items: np.ndarray, n_items: int) -> np.ndarray:
    """For each test pair, the row of ``candidates`` that holds its negatives (by pair, or by user)."""
    if candidates.items is None:  # one sample per user, shared by its test items
        keys, wanted = candidates.users.astype(np.int64), users.astype(np.int64)
    else:
        keys = candidates.users.astype(np.int64) * n_items + candidates.items
        wanted = users.astype(np.int64) * n_items + items
    order = np.argsort(keys, kind="stable")
    at = np.searchsorted(keys, wanted, sorter=order)
    at = np.minimum(at, len(keys) - 1)
    rows = order[at]
    if not np.array_equal(keys[rows], wanted):
        raise DataError("the candidate sample has no row for some test pairs; draw it from the same train and test")
    return rows


def _batches(users: np.ndarray, n_items: int) -> Iterator[slice]:
    """Consecutive runs of test rows, whole users each, of about :data:`_BATCH_CELLS` score cells."""
    starts = np.flatnonzero(np.r_[True, users[1:] != users[:-1]])
    bounds = np.r_[starts, len(users)]
    per = max(1, _BATCH_CELLS // max(n_items, 1))
    for lo in range(0, len(starts), per):
        yield slice(int(bounds[lo]), int(bounds[min(lo + per, len(starts))]))


def _ranks(
    model: Any, users: np.ndarray, items: np.ndarray, seen: sp.csr_matrix, negatives: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Full ranks of the test pairs and their ranks within each sample (``negatives[d]``: one row per pair)."""
    full = np.empty(len(users), dtype=np.float64)
    sampled = np.empty((len(negatives), len(users)), dtype=np.float64)
    n_items = seen.shape[1]
    for rows in _batches(users, n_items):
        batch, local = np.unique(users[rows], return_inverse=True)
        scores = np.asarray(model.score(batch), dtype=np.float64)
        positive = scores[local, items[rows]]
        # the user's training and test items are no negatives (the sample excludes them too): below every score
        masked = scores.copy()
        mask = seen[batch].toarray()
        masked[mask] = np.nextafter(scores.min(axis=1, keepdims=True), -np.inf).repeat(n_items, 1)[mask]
        full[rows] = sampled_ranks(positive, masked[local])
        for d, neg in enumerate(negatives):
            sampled[d, rows] = sampled_ranks(positive, np.take_along_axis(scores[local], neg[rows], axis=1))
    return full, sampled


def sampled_study(
    data: Interactions | tuple[Interactions, Interactions],
    algorithms: Sequence[str] | Mapping[str, Any],
    *,
    n: int = 100,
    sampling: str = "uniform",
    exponent: float = 1.0,
    shape: str = "per-item",
    repeats: int = DEFAULT_REPEATS,
    seed: int = 0,
    metrics: Sequence[str] = DEFAULT_METRICS,
    corrections: Sequence[str] | None = None,
    split: str = DEFAULT_SPLIT,
    test_fraction: float = 0.2,
    seed_model: bool = True,
    progress: Progress | None = None,
) -> SampledStudy:
    """Fit each system once and compare its full metric with the sampled one, uncorrected and corrected.

    Parameters
    ----------
    data
        The interactions to split with ``split``, or a ``(train, test)`` pair already split.
    algorithms
        Algorithm names of :func:`receval.recommenders.make`, or name -> unfitted model;
        each is cloned (with ``seed`` unless ``seed_model`` is false) and fitted once on
        the training part. Kendall τ needs at least two.
    n, sampling, exponent, shape
        The candidate samples: ``n`` negatives per test item (``shape="per-item"``, as NCF)
        or per user (``"per-user"``, each test item ranked against it alone), drawn uniformly or in proportion to
        training popularity ``** exponent``, never a training or test item of the user.
    repeats, seed
        The number of samples, their seeds derived from ``seed`` (which also seeds the
        split and the models).
    metrics
        Metric strings of one relevant item's rank (recall/HR, precision, ndcg, mrr, map,
        auc) with a cutoff.
    corrections
        Of :data:`receval.vocabulary.SAMPLED_CORRECTIONS` (``none``: the uncorrected value,
        labelled ``sampled``); default :data:`receval.vocabulary.DEFAULT_SAMPLED_CORRECTIONS` (``none`` alone with
        popularity sampling). A correction
        without a form for a metric (:data:`receval.stats.sampled.SUPPORTED`) is skipped for it.
    split, test_fraction
        The split method by name (default leave-one-out of each user's last pair; data
        without timestamps need e.g. ``loo-random``), and its test share where it has one.
    progress
        Called as ``progress(done, systems, "sampled systems")`` after each system.

    Returns
    -------
    SampledStudy
        Each system's value per metric, estimate and sample beside its full value
        (``values``), and per metric and estimate the errors, the spread and Kendall τ
        against the full ranking (``kendall``).

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=50, n_items=300, n_ratings=2000, seed=1)
    >>> study = sampled_study(data, ["popularity", "random"], n=30, repeats=2, metrics=["ndcg@10"],
    ...                       corrections=["none"], split="loo-random")
    >>> study.to_frame()[["system", "estimate"]].values.tolist()
    [['popularity', 'sampled'], ['random', 'sampled']]
    """
    from receval.evaluation.candidates import draw_candidates
    from receval.recommenders import clone, make

    plan = check_study_metrics(metrics)
    chosen = study_corrections(corrections, sampling)
    n = check_count(n, "n")
    repeats = check_count(repeats, "repeats")
    seed = check_seed(seed)
    exponent = check_number(exponent, "exponent", minimum=0)
    shape = check_study_design(n, repeats, shape)
    if isinstance(algorithms, Mapping):
        systems = dict(algorithms)
        if not systems:
            raise ConfigError("algorithms: give at least one algorithm")
    else:
        systems = {name: make(name) for name in check_algorithms(algorithms, minimum=1)}
    train, test = _split(data, split, test_fraction, seed)
    if test.n_ratings == 0:
        raise DataError(f"split {split!r} left no test pairs; use another split method")
    users, items, seen = _test_rows(train, test)
    most = train.n_items - int(np.diff(seen.indptr)[users].min())  # the most items a test user has left
    if n > most:
        raise ConfigError(
            f"n={n} negatives cannot be drawn: every test user has at most {most} items outside their training and "
            f"test items; use n={most} or fewer",
            parameters=["n"],
        )
    # each sample: the drawn rows (a test pair's or a user's) and their copy by test pair (int32), and its ranks
    check_sample_memory(n, len(users), repeats=repeats, kept=8.0 + 8.0 / n, fix=_SMALLER, parameters=["repeats", "n"])
    if sampling == "popularity":
        check_exponent(exponent, np.bincount(train.items, minlength=train.n_items))
    seeds = _sample_seeds(seed, repeats)
    draws = [draw_candidates(train, test, n, sampling=sampling, exponent=exponent, shape=shape, seed=s) for s in seeds]
    negatives = [d.negatives[_candidate_rows(d, users, items, train.n_items)] for d in draws]
    # each test item's full list: every item that is not one of the user's training or test items, and itself
    n_full = train.n_items - np.diff(seen.indptr)[users] + 1
    # the estimators assume one list length N for every item; the users' lengths differ by their own items
    n_catalogue = int(round(float(n_full.mean())))
    rows: list[dict[str, Any]] = []
    notify = progress_to(progress)
    notify(0, len(systems), "sampled systems")
    for done, (name, system) in enumerate(systems.items(), 1):
        model = clone(system, seed=seed if seed_model else None).fit(train)
        full_ranks, ranks = _ranks(model, users, items, seen, negatives)
        for text, metric, k in plan:
            full = _full_value(metric, k, full_ranks, n_full)
            for correction in chosen:
                if metric not in SUPPORTED.get(correction, frozenset()):
                    continue
                for d in range(repeats):
                    value = estimate(
                        metric, k, ranks[d], n_sampled=n, n_items=n_catalogue, correction=correction, sampling=sampling
                    )
                    rows.append({"system": name, "metric": text, "estimate": estimate_label(correction),
                                 "repeat": d, "value": float(value), "full": full})  # fmt: skip
        _log.info("sampled: %s fitted, %d test items ranked in full and in %d samples", name, len(users), repeats)
        notify(done, len(systems), "sampled systems")
    values = pd.DataFrame(rows, columns=["system", "metric", "estimate", "repeat", "value", "full"])
    if values.empty:
        raise ConfigError(f"no correction of {chosen} has a form for the metrics {[p[0] for p in plan]}")
    design = dict(draws[0].design)
    design.pop("seed", None)
    return SampledStudy(
        values=values,
        kendall=_kendall(values),
        conventions={
            "data": getattr(data, "name", "") if not isinstance(data, tuple) else data[0].name,
            "split": "given" if isinstance(data, tuple) else split_method(split).name,
            "sample": {**design, "seeds": seeds},
            "repeats": repeats,
            "systems": list(systems),
            "corrections": chosen,
            "test_items": len(users),
            "mean_full_list": n_catalogue,
            "full_rank": "among the items that are neither training nor test items of the user, and the test item",
            "ties": "pessimistic (a negative scored equal to the test item ranks above it)",
            "seed": seed,
        },
    )


def _full_value(metric: str, k: int | None, ranks: np.ndarray, lengths: np.ndarray) -> float:
    """The mean metric of the full ranks, each in its own list's length (AUC depends on it, a cutoff metric not)."""
    values = np.empty(len(ranks), dtype=np.float64)
    for length in np.unique(lengths):
        at = lengths == length
        values[at] = rank_metric(metric, k, ranks[at], int(length))
    return float(values.mean())


def _kendall(values: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (metric, est), group in values.groupby(["metric", "estimate"], sort=False):
        wide = group.pivot_table(index="system", columns="repeat", values="value", sort=False)
        full = group.groupby("system", sort=False)["full"].first().reindex(wide.index).to_numpy()
        taus = np.array([rank_agreement(wide[r].to_numpy(), full)["kendall_tau"] for r in wide.columns])
        finite = taus[np.isfinite(taus)]
        error = group["value"].to_numpy() - group["full"].to_numpy()
        spread = wide.std(axis=1, ddof=1) if wide.shape[1] > 1 else pd.Series(np.nan, index=wide.index)
        out.append(
            {
                "metric": metric,
                "estimate": est,
                "kendall_tau": float(finite.mean()) if finite.size else float("nan"),
                "kendall_tau_std": float(finite.std(ddof=1)) if finite.size > 1 else float("nan"),
                "kendall_tau_expected": rank_agreement(wide.mean(axis=1).to_numpy(), full)["kendall_tau"],
                "mae": float(np.abs(error).mean()),
                "mse": float(np.square(error).mean()),
                "spread": float(spread.mean()),
            }
        )
    columns = ["metric", "estimate", "kendall_tau", "kendall_tau_std", "kendall_tau_expected", "mae", "mse", "spread"]
    return pd.DataFrame(out, columns=columns)
