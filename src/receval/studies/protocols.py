"""The protocols study: does the split (and the k-core before it) change which recommender wins?

Offline results depend on the protocol. A random or leave-one-out split lets a model learn
from interactions later than the ones it is tested on (Ji, Sun, Zhang & Li, "A Critical
Study on Data Leakage in Recommender System Offline Evaluation", TOIS 2023); k-core pruning
removes most users and changes which model wins (Hidasi & Czapp, RecSys 2023); the choice
of split changes the ranking of models (Sun et al., "Are We Evaluating Rigorously?", RecSys
2020; Gusak et al., "Time to Split", 2025). :func:`protocols_study` fits the same
recommenders, with their defaults, under each protocol of
:data:`~receval.vocabulary.STUDY_PROTOCOLS` after each k-core, and reports:

- per setting (protocol, core): what the k-core kept (:func:`receval.data.prepare.k_core`),
  the leakage figures of :func:`receval.stats.leakage.audit` and ``global_after_test``
  (:func:`global_after_test`), the users evaluated and the cold test users left out;
- per setting and recommender: each metric (for ``rolling``, the mean over the windows, each
  window weighted equally);
- per metric and pair of settings: Kendall τ-b (:func:`scipy.stats.kendalltau`) between
  the two rankings of the recommenders.

The protocols: ``random`` is :func:`receval.split.per_user_holdout` (``test_fraction`` of
each user's pairs), ``loo`` is :func:`receval.split.leave_one_out` (each user's last pair),
``temporal`` is :func:`receval.split.temporal` cut at one date (``at``; by default the UTC
day on which ``1 - test_fraction`` of the unpruned data's ratings were made, the same date
for every core), ``rolling`` is :func:`receval.split.rolling` (``windows`` windows of
``window``, expanding). Every split is made by :func:`receval.split.split_by_name` with
``seed``; every model is fitted and scored by :func:`receval.evaluation.evaluate_model`
with ``seed``, its training items excluded from its lists. Test users without training
data (users who arrive after a cut) cannot be scored by these models: they are left out
(``cold_start="exclude"``) under every protocol, and counted in ``users_cold``.

Each recommender runs in the variants of :data:`~receval.vocabulary.STUDY_VARIANTS`: with
its defaults, and, when ``trials > 0``, tuned with the same budget for every recommender
(the protocol of Rendle, Zhang & Koren, "On the Difficulty of Evaluating Baselines", 2019,
as ``receval tune`` runs it). Tuning never reads a test part: in each fold a validation
part is carved from the training part by the same kind of split (``random``: a per-user
holdout of ``test_fraction`` of train; ``loo``: each user's last training pair;
``temporal`` and each ``rolling`` window: the latest ``test_fraction`` of the training
pairs, the split ``[tune.validation] method = "temporal"`` makes), leaving the *fit* part.
The defaults and ``trials`` random-search draws from the recommender's space
(:data:`PROTOCOLS_STUDY_SPACES`, or ``spaces``) are each fitted on the fit part and scored
by the first metric on the validation part; the best is chosen (a draw replaces the defaults
only when strictly better, where ``receval tune`` gives a tie to the trial), refitted on the
whole training part and evaluated on the test part exactly as the defaults are. A recommender without a space
(``popularity``) is its defaults in both variants. The draws of a (protocol, core,
recommender) come from one :func:`numpy.random.default_rng` seeded with ``seed`` and a CRC-32
of the three names, and are the same draws in every fold (rolling window) of the setting.
Kendall τ is computed within each variant.

Examples
--------
>>> from receval.data.synthetic import generate
>>> data = generate(n_users=60, n_items=40, n_ratings=1200, seed=1)
>>> study = protocols_study(data, ["popularity", "item-knn"], protocols=["random", "temporal"], cores=[0],
...                         metrics=["ndcg@10"], windows=2)
>>> leak = study.settings.set_index("protocol")["global_after_test"]
>>> float(leak["temporal"]), bool(leak["random"] > 0)  # a global cut: no training interaction after a test one
(0.0, True)
>>> sorted(study.values["algorithm"].unique()), len(study.kendall)
(['item-knn', 'popularity'], 1)
>>> tuned = protocols_study(data, ["popularity", "item-knn"], protocols=["loo"], cores=[0], metrics=["ndcg@10"],
...                         trials=2)
>>> sorted(set(zip(tuned.values["variant"], tuned.values["algorithm"])))
[('defaults', 'item-knn'), ('defaults', 'popularity'), ('tuned', 'item-knn'), ('tuned', 'popularity')]
>>> tuned.tuning.groupby("algorithm")["draw"].max().to_dict()  # popularity has no space: its defaults only
{'item-knn': 2, 'popularity': 0}
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from receval import jsontext
from receval.data.interactions import Interactions
from receval.data.prepare import k_core
from receval.errors import ConfigError, DataError
from receval.evaluation import evaluate_model
from receval.evaluation.oneshot import check_depth
from receval.metrics import MetricList
from receval.metrics.registry import metric_direction
from receval.recommenders.space import ParamRange, draw, parse_space
from receval.stats.leakage import audit
from receval.validate import check_count, check_fraction, check_seed, parse_duration, parse_instant
from receval.vocabulary import PROTOCOLS_STUDY_ALGORITHMS, PROTOCOLS_STUDY_CORES, STUDY_PROTOCOLS, STUDY_VARIANTS

__all__ = [
    "PROTOCOLS_STUDY_SPACES",
    "ProtocolsStudy",
    "check_protocols_options",
    "global_after_test",
    "kendall_pairs",
    "protocols_study",
]

_log = logging.getLogger(__name__)
_DAY = 86_400
_NEEDS_TIME = ("loo", "temporal", "rolling")  # the protocols that read the timestamps
# the leakage figures of receval.stats.leakage.audit the study keeps: shares are averaged over a
# protocol's folds (rolling windows), counts summed
_SHARES = ("train_after_test", "users_affected", "future_items")
_COUNTS = ("overlap_pairs", "unseen_test_users", "unseen_test_items")
_DEFAULTS, _TUNED = STUDY_VARIANTS  # the two variants, in the vocabulary's order

PROTOCOLS_STUDY_SPACES: dict[str, dict[str, dict[str, Any]]] = {
    "item-knn": {"k": {"int": [5, 800], "log": True}, "shrink": {"float": [0, 1000]}},
    "user-knn": {"k": {"int": [5, 800], "log": True}, "shrink": {"float": [0, 1000]}},
    "ease": {"l2": {"float": [1, 100_000], "log": True}},
    "rp3beta": {"alpha": {"float": [0.01, 2]}, "beta": {"float": [0, 2]}},
    "hkv": {"factors": {"int": [8, 128], "log": True}, "regularization": {"float": [0.001, 10], "log": True}},
    "mf": {"factors": {"int": [8, 128], "log": True}},
}
"""The search spaces of the study's tuned variant, per recommender (a name not here has none: tuned = defaults).

Written as a configuration's ``[recommenders.NAME] space = {...}`` tables are (``int =
[low, high]`` or ``float = [low, high]``, ``log = true`` for a log-uniform draw, ``choices =
[...]``), as plain data, and read by the same parser (:func:`receval.recommenders.space.parse_space`).
The kNN, EASE and RP3β ranges are those of ``examples/tune_ml100k.toml``
(kNN's ``shrink`` is the term added to the similarity's denominator); ``hkv`` tunes its
factors and regularisation; ``mf`` its factors only, since its top-N lists are PureSVD's
(``ranking="pure-svd"``), which reads no other parameter.
"""


@dataclass(frozen=True)
class ProtocolsStudy:
    """What :func:`protocols_study` returns.

    Attributes
    ----------
    settings : pandas.DataFrame
        One row per (protocol, core): ``protocol``, ``core``, ``folds``, ``users``, ``items``,
        ``ratings`` (after the k-core), ``users_kept``, ``items_kept``, ``ratings_kept`` (shares
        of the data), the leakage figures ``train_after_test``, ``users_affected``,
        ``future_items``, ``global_after_test`` (means over the folds), ``overlap_pairs``,
        ``unseen_test_users``, ``unseen_test_items``, ``users_evaluated`` and ``users_cold``
        (sums over the folds).
    values : pandas.DataFrame
        One row per (protocol, core, variant, algorithm, metric): ``value`` (the mean over the
        folds); ``variant`` is a word of :data:`~receval.vocabulary.STUDY_VARIANTS`.
    kendall : pandas.DataFrame
        One row per variant, metric and pair of settings: ``variant``, ``metric``,
        ``protocol_a``, ``core_a``, ``protocol_b``, ``core_b``, ``tau`` (Kendall τ-b of the two
        rankings of the algorithms; NaN when either ranking is constant) and ``n``
        (algorithms ranked by both).
    design : dict
        The study's inputs: ``data``, ``algorithms``, ``protocols``, ``cores``, ``metrics``,
        ``k``, ``test_fraction``, ``cut`` (the temporal cut, ISO), ``windows``, ``window``,
        ``seed``, ``threshold``, ``cold_start``, ``trials``, ``spaces``.
    tuning : pandas.DataFrame
        With ``trials > 0``, one row per (protocol, core, fold, algorithm, draw): ``draw`` (0:
        the defaults, then 1 … ``trials``), ``params`` (the draw's parameters as JSON),
        ``validation`` (the first metric on the validation part; NaN when the draw failed or
        was not scored, as for a recommender without a space) and ``chosen``; empty otherwise.
    """

    settings: pd.DataFrame
    values: pd.DataFrame
    kendall: pd.DataFrame
    design: dict[str, Any] = field(default_factory=dict)
    tuning: pd.DataFrame = field(default_factory=pd.DataFrame)

    def to_dict(self) -> dict[str, Any]:
        """The study as plain values (``receval protocols-study --json``; NaN as ``None``).

        Returns
        -------
        dict
            ``{"design": {...}, "settings": [row, ...], "values": [row, ...], "kendall": [row, ...],
            "tuning": [row, ...]}``, each row a dict of the table's columns.

        Examples
        --------
        >>> s = ProtocolsStudy(pd.DataFrame({"protocol": ["loo"], "core": [0]}), pd.DataFrame(),
        ...                    pd.DataFrame({"tau": [float("nan")]}), {"seed": 0})
        >>> s.to_dict()["kendall"], s.to_dict()["design"]
        ([{'tau': None}], {'seed': 0})
        """

        def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [jsontext.plain(row) for row in frame.to_dict(orient="records")]

        return {
            "design": dict(self.design),
            "settings": rows(self.settings),
            "values": rows(self.values),
            "kendall": rows(self.kendall),
            "tuning": rows(self.tuning),
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as one line of JSON.

        Returns
        -------
        str
            The JSON text.
        """
        return jsontext.dumps(self.to_dict())

    def table(self, metric: str, variant: str = _DEFAULTS) -> pd.DataFrame:
        """``metric`` of ``variant`` per algorithm (rows) and setting (columns ``protocol/core``), in the study's order.

        Returns
        -------
        pandas.DataFrame
            The values, one column per setting (empty when the study has no such variant).
        """
        part = self.values[self.values["metric"] == metric]
        if "variant" in part:
            part = part[part["variant"] == variant]
        grid = part.pivot_table(index="algorithm", columns=["protocol", "core"], values="value", sort=False)
        grid.columns = [f"{p}/{c}" for p, c in grid.columns]
        return grid


def _check_spaces(spaces: Mapping[str, Any], algorithms: Sequence[str]) -> dict[str, tuple[ParamRange, ...]]:
    """Each space parsed as a configuration's ``space`` table is, for the algorithms of the study (a ConfigError)."""
    from receval.recommenders import make

    parsed = {}
    for name, space in spaces.items():

        def fail(path: tuple[str, ...], message: str, name: str = name) -> ConfigError:
            return ConfigError(f"spaces[{name!r}]: {message}", parameters=["spaces"])

        if not isinstance(space, Mapping) or not space:
            raise fail((), "give a non-empty table of parameters, e.g. {'k': {'int': [5, 800]}}")
        parsed[name] = parse_space(space, fail)
        if name in algorithms:
            make(name, **draw(parsed[name], np.random.default_rng(0)))  # an unknown parameter fails here
    return parsed


def check_protocols_options(
    *,
    algorithms: Sequence[str],
    protocols: Sequence[str],
    cores: Sequence[int],
    metrics: Sequence[str],
    k: int,
    test_fraction: float,
    at: str | float | None,
    windows: int,
    window: str | float | None,
    seed: int,
    trials: int = 0,
    spaces: Mapping[str, Any] | None = None,
) -> tuple[list[str], list[int]]:
    """The study's options checked before any data is read (a ConfigError naming the option).

    Returns
    -------
    tuple of (list of str, list of int)
        The protocols as words of :data:`~receval.vocabulary.STUDY_PROTOCOLS` and the cores, as given.

    Examples
    --------
    >>> check_protocols_options(algorithms=["popularity", "ease"], protocols=["LOO", "random"], cores=[0, 5],
    ...                         metrics=["ndcg@10"], k=10, test_fraction=0.2, at=None, windows=3, window="30d", seed=0)
    (['loo', 'random'], [0, 5])
    >>> check_protocols_options(algorithms=["popularity", "ease"], protocols=["holdout"], cores=[0],
    ...                         metrics=["ndcg@10"], k=10, test_fraction=0.2, at=None, windows=3, window=None, seed=0)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: protocols=holdout: use one or more of random, loo, temporal, rolling
    >>> check_protocols_options(algorithms=["popularity", "ease"], protocols=["loo"], cores=[0], metrics=["ndcg@10"],
    ...                         k=10, test_fraction=0.2, at=None, windows=3, window=None, seed=0, trials=-1)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: trials=-1: give an integer of at least 0
    """
    from receval.recommenders import make

    check_seed(seed, "seed")
    check_count(trials, "trials", minimum=0)
    check_count(k, "k")
    check_fraction(test_fraction, "test_fraction")
    check_count(windows, "windows")
    if window is not None:
        parse_duration(window, "window", fraction=True)
    if at is not None:
        parse_instant(at, "at")
    words = []
    for name in protocols:
        key = str(name).strip().lower().replace("_", "-")
        if key not in STUDY_PROTOCOLS:
            raise ConfigError(
                f"protocols={name}: use one or more of {', '.join(STUDY_PROTOCOLS)}", parameters=["protocols"]
            )
        words.append(key)
    if not words:
        raise ConfigError(f"protocols='': name one or more of {', '.join(STUDY_PROTOCOLS)}", parameters=["protocols"])
    if len(set(words)) != len(words):
        shown = ",".join(map(str, protocols))
        raise ConfigError(f"protocols={shown}: name each protocol once", parameters=["protocols"])
    chosen_cores = []
    for core in cores:
        if isinstance(core, bool) or not isinstance(core, int | np.integer) or core < 0:
            raise ConfigError(f"cores={core!r}: each core is a whole number ≥ 0 (0: no filter)", parameters=["cores"])
        chosen_cores.append(int(core))
    if not chosen_cores:
        raise ConfigError("cores='': give one or more k-cores, e.g. 0,10 (0: no filter)", parameters=["cores"])
    if len(set(chosen_cores)) != len(chosen_cores):
        raise ConfigError(f"cores={list(cores)}: give each core once", parameters=["cores"])
    if len(algorithms) < 2 or len(set(algorithms)) != len(algorithms):
        raise ConfigError(
            f"algorithms={','.join(algorithms)}: rank at least two different algorithms", parameters=["algorithms"]
        )
    for name in algorithms:
        make(name)  # an unknown name fails here, before any work
    if not metrics:
        raise ConfigError("metrics: give at least one metric, e.g. ndcg@10", parameters=["metrics"])
    specs = MetricList(list(metrics))  # an unknown metric fails here
    check_depth(specs, k)
    first = specs.labels[0]
    if trials and metric_direction(first) is None:
        raise ConfigError(f"metrics: the first metric {first!r} describes, it has no better direction to tune by; "
                          "put a metric such as ndcg@10 first", parameters=["metrics"])  # fmt: skip
    _check_spaces(PROTOCOLS_STUDY_SPACES if spaces is None else spaces, algorithms)
    return words, chosen_cores


def global_after_test(train: Interactions, test: Interactions) -> float | None:
    """The mean over test users of the share of *all* training interactions later than the user's test time.

    The leakage of Ji et al. (TOIS 2023): a split that does not follow the global timeline
    trains on interactions of other users made after a test user's test time (their first
    test interaction), so the model knows what was popular later. A global cut has 0; a
    leave-last-out split, whose own-user figure ``train_after_test`` is 0, does not.
    ``None`` when either part has no timestamps or the test part is empty.

    Returns
    -------
    float or None
        The share, in [0, 1].

    Examples
    --------
    >>> d = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 0, 1], [1] * 4, timestamps=[1, 4, 2, 3])
    >>> train, test = d.subset(np.array([1, 0, 1, 0], bool)), d.subset(np.array([0, 1, 0, 1], bool))
    >>> global_after_test(train, test)  # user 0 tested at 4: nothing later; user 1 at 3: none of (1, 2) later
    0.0
    >>> global_after_test(d.subset(np.array([1, 1, 0, 0], bool)), d.subset(np.array([0, 0, 1, 1], bool)))
    0.5
    """
    if train.timestamps is None or test.timestamps is None or test.n_ratings == 0 or train.n_ratings == 0:
        return None
    first = np.full(test.n_users, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, test.users, test.timestamps.astype(np.int64))
    times = first[np.unique(test.users)]
    ordered = np.sort(train.timestamps.astype(np.int64))
    later = len(ordered) - np.searchsorted(ordered, times, side="right")
    return float(np.mean(later / len(ordered)))


def kendall_pairs(values: pd.DataFrame) -> pd.DataFrame:
    """Kendall τ-b between the rankings of the algorithms of every pair of settings, per metric (and variant).

    ``values`` has columns ``protocol``, ``core``, ``algorithm``, ``metric``, ``value``, and
    optionally ``variant``: then the rankings are compared within each variant, never across.
    The pairs are the settings in their order of appearance, each unordered pair once; only
    the algorithms with a value in both settings are ranked (``n``).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``protocol_a``, ``core_a``, ``protocol_b``, ``core_b``, ``tau``, ``n``
        (after ``variant`` when ``values`` has it).

    Examples
    --------
    >>> v = pd.DataFrame({"protocol": ["a"] * 3 + ["b"] * 3, "core": 0, "algorithm": ["x", "y", "z"] * 2,
    ...                   "metric": "ndcg@10", "value": [0.1, 0.2, 0.3, 0.5, 0.6, 0.7]})
    >>> kendall_pairs(v)[["protocol_a", "protocol_b", "tau", "n"]].values.tolist()
    [['a', 'b', 1.0, 3]]
    """
    keys = ["variant", "metric"] if "variant" in values else ["metric"]
    rows = []
    for key, part in values.groupby(keys, sort=False):
        grid = part.pivot_table(index="algorithm", columns=["protocol", "core"], values="value", sort=False)
        for a, b in combinations(grid.columns, 2):
            both = grid[[a, b]].dropna()
            tau = float("nan")
            if len(both) >= 2:
                x, y = both[a].to_numpy(dtype=float), both[b].to_numpy(dtype=float)
                if np.ptp(x) > 0 and np.ptp(y) > 0:  # a constant ranking has no τ (scipy would warn and give NaN)
                    tau = float(stats.kendalltau(x, y).statistic)
            rows.append((*key, a[0], int(a[1]), b[0], int(b[1]), tau, len(both)))
    return pd.DataFrame(rows, columns=[*keys, "protocol_a", "core_a", "protocol_b", "core_b", "tau", "n"])


def _default_cut(data: Interactions, test_fraction: float) -> int:
    """The UTC day (midnight, epoch seconds) on which ``1 - test_fraction`` of the ratings had been made."""
    assert data.timestamps is not None
    instant = float(np.quantile(data.timestamps.astype(np.int64), 1 - test_fraction))
    return int(instant // _DAY * _DAY)


def _iso(seconds: int) -> str:
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.strftime("%Y-%m-%d") if seconds % _DAY == 0 else moment.isoformat().replace("+00:00", "Z")


def protocols_study(
    data: Interactions,
    algorithms: Sequence[str] | None = None,
    *,
    protocols: Sequence[str] = tuple(STUDY_PROTOCOLS),
    cores: Sequence[int] = PROTOCOLS_STUDY_CORES,
    metrics: Sequence[str] = ("ndcg@10", "recall@10"),
    k: int = 10,
    test_fraction: float = 0.2,
    at: str | float | None = None,
    windows: int = 5,
    window: str | float | None = None,
    threshold: float | None = None,
    seed: int = 0,
    trials: int = 0,
    spaces: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> ProtocolsStudy:
    """Fit ``algorithms`` under each protocol after each k-core; leakage, metrics and Kendall τ between settings.

    Parameters
    ----------
    data
        The ratings, with timestamps unless ``protocols`` is ``["random"]``.
    algorithms
        Names of :func:`receval.recommenders.make`, each with its defaults (by default
        :data:`~receval.vocabulary.PROTOCOLS_STUDY_ALGORITHMS`); at least two.
    protocols
        Words of :data:`~receval.vocabulary.STUDY_PROTOCOLS` (any case).
    cores
        The k-cores (0: the data as it is) the data is filtered to before each protocol.
    metrics, k, threshold
        As for :func:`~receval.evaluation.evaluate_model`.
    test_fraction
        The test share of ``random``, and of the default cut of ``temporal``.
    at
        The date (ISO, UTC unless a zone is given, or epoch seconds) of the ``temporal`` cut.
    windows, window
        The ``rolling`` windows: how many, and their length (a duration such as ``30d`` or a
        fraction of the time span; by default the span over ``windows + 1``).
    seed
        Seeds the splits, the models and the draws.
    trials
        The random-search draws of each recommender's tuning, per setting (0: defaults only).
    spaces
        The search spaces by algorithm name (by default :data:`PROTOCOLS_STUDY_SPACES`).

    Returns
    -------
    ProtocolsStudy
        The settings' retention and leakage, the metrics per setting, variant and algorithm, τ,
        and the tuning's draws.
    """
    names = list(algorithms) if algorithms is not None else list(PROTOCOLS_STUDY_ALGORITHMS)
    words, chosen_cores = check_protocols_options(
        algorithms=names, protocols=protocols, cores=cores, metrics=metrics, k=k, test_fraction=test_fraction, at=at,
        windows=windows, window=window, seed=seed, trials=trials, spaces=spaces,
    )  # fmt: skip
    space_of = {name: dict((PROTOCOLS_STUDY_SPACES if spaces is None else spaces).get(name) or {}) for name in names}
    ranges_of = {name: parse_space(space) for name, space in space_of.items()}  # checked above: parses cleanly
    timed = [w for w in words if w in _NEEDS_TIME]
    if timed and data.timestamps is None:
        label = f"data set {data.name!r}" if data.name else "the data"
        raise DataError(f"protocols {', '.join(timed)} cut in time, but {label} has no timestamps; use random only")
    cut = None
    if "temporal" in words:
        assert data.timestamps is not None
        cut = parse_instant(at, "at") if at is not None else _default_cut(data, test_fraction)
    from receval.recommenders import make

    models = {name: make(name) for name in names}
    specs = MetricList(list(metrics))
    labels = list(specs.labels)
    variants = [_DEFAULTS, _TUNED] if trials else [_DEFAULTS]
    settings, values, tuning = [], [], []
    for core in chosen_cores:
        pruned, kept = data, {"users_kept": 1.0, "items_kept": 1.0, "ratings_kept": 1.0}
        if core:
            pruned, report = k_core(data, core, label=data.name)
            kept = {key: value for key, value in report.as_dict().items() if key.endswith("_kept")}
        for word in words:
            folds = _folds(pruned, word, seed=seed, test_fraction=test_fraction, cut=cut, windows=windows,
                           window=window)  # fmt: skip
            _log.info("protocol %s, core %d: %d fold(s)", word, core, len(folds))
            row = {"protocol": word, "core": core, "folds": len(folds), "users": pruned.n_users,
                   "items": pruned.n_items, "ratings": pruned.n_ratings, **kept, **_leakage(folds)}  # fmt: skip
            per_fold: dict[tuple[str, str], list[dict[str, float]]] = {(v, n): [] for v in variants for n in names}
            draws = {name: _draws(ranges_of[name], trials, seed, word, core, name) for name in names}
            evaluated = cold = 0
            for fold, (train, test) in enumerate(folds):
                parts = _carve(train, word, seed=seed, test_fraction=test_fraction) if trials else None
                for name, model in models.items():
                    result = evaluate_model(model, train, test, specs, k=k, threshold=threshold, seed=seed,
                                            cold_start="exclude")  # fmt: skip
                    per_fold[_DEFAULTS, name].append(result.summary)
                    if parts is None:
                        continue
                    params, rows = _tune(name, draws[name], *parts, labels[0], k=k, threshold=threshold, seed=seed)
                    tuning += [{"protocol": word, "core": core, "fold": fold, "algorithm": name, **r} for r in rows]
                    if params == {}:  # the defaults chosen: the tuned model is the one just evaluated
                        per_fold[_TUNED, name].append(result.summary)
                        continue
                    tuned = evaluate_model(make(name, **params), train, test, specs, k=k, threshold=threshold,
                                           seed=seed, cold_start="exclude")  # fmt: skip
                    per_fold[_TUNED, name].append(tuned.summary)
                evaluated += result.conventions.users_evaluated
                cold += result.conventions.users_cold or 0
            settings.append({**row, "users_evaluated": evaluated, "users_cold": cold})
            for (variant, name), summaries in per_fold.items():
                for label in labels:
                    fold_values = np.array([s[label] for s in summaries], dtype=float)
                    value = float(np.nanmean(fold_values)) if np.isfinite(fold_values).any() else float("nan")
                    values.append((word, core, variant, name, label, value))
    value_frame = pd.DataFrame(values, columns=["protocol", "core", "variant", "algorithm", "metric", "value"])
    design = {
        "data": data.name, "algorithms": names, "protocols": words, "cores": chosen_cores, "metrics": labels, "k": k,
        "test_fraction": test_fraction, "cut": None if cut is None else _iso(cut), "windows": windows,
        "window": window, "seed": seed, "threshold": threshold, "cold_start": "exclude", "trials": trials,
        "spaces": {name: space for name, space in space_of.items() if space} if trials else {},
    }  # fmt: skip
    tuning_frame = pd.DataFrame(tuning, columns=_TUNING_COLUMNS)
    return ProtocolsStudy(pd.DataFrame(settings), value_frame, kendall_pairs(value_frame), design, tuning_frame)


_TUNING_COLUMNS = ["protocol", "core", "fold", "algorithm", "draw", "params", "validation", "chosen"]


def _draws(
    space: tuple[ParamRange, ...], trials: int, seed: int, word: str, core: int, name: str
) -> list[dict[str, Any]]:
    """The ``trials`` draws of one (protocol, core, recommender), from a generator seeded by all four."""
    if not space or not trials:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(f"{word}/{core}/{name}".encode())])
    return [draw(space, rng) for _ in range(trials)]


def _carve(train: Interactions, word: str, *, seed: int, test_fraction: float) -> tuple[Interactions, Interactions]:
    """The fit and validation parts of a training part, by the protocol's own kind of split (never the test part)."""
    from receval.split import split_by_name

    if word == "random":
        return split_by_name(train, "per-user", test_fraction=test_fraction, seed=seed)[0]
    if word == "loo":
        return split_by_name(train, "loo", seed=seed)[0]
    return split_by_name(train, "temporal", test_fraction=test_fraction, seed=seed)[0]  # temporal, each window


def _tune(
    name: str,
    draws: list[dict[str, Any]],
    fit: Interactions,
    validation: Interactions,
    metric: str,
    *,
    k: int,
    threshold: float | None,
    seed: int,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The chosen parameters (``{}``: the defaults) and one row per candidate, the defaults first (draw 0).

    Each candidate is fitted on ``fit`` and scored by ``metric`` on ``validation``; a draw
    replaces the best so far only when strictly better, so the defaults win a tie. A draw that
    fails (or scores NaN) is skipped, as ``receval tune`` records a failed trial and goes on.
    """
    from receval.recommenders import make

    if not draws:  # no space: nothing to choose, nothing fitted
        return {}, [{"draw": 0, "params": "{}", "validation": float("nan"), "chosen": True}]
    higher = metric_direction(metric) == "higher"
    candidates = [{}, *draws]
    scores = []
    for index, params in enumerate(candidates):
        try:
            result = evaluate_model(make(name, **params), fit, validation, [metric], k=k, threshold=threshold,
                                    seed=seed, cold_start="exclude")  # fmt: skip
            value = float(result.summary[metric])
        except Exception as err:  # a failing draw is skipped (as a failed trial of receval tune), the others go on
            _log.warning("%s draw %d %s failed on validation: %s", name, index, params, err)
            value = float("nan")
        scores.append(value if np.isfinite(value) else float("nan"))
    best = 0
    for index, value in enumerate(scores):
        better = not np.isfinite(scores[best]) or (value > scores[best] if higher else value < scores[best])
        if np.isfinite(value) and better:
            best = index
    rows = [{"draw": i, "params": json.dumps(p, sort_keys=True), "validation": v, "chosen": i == best}
            for i, (p, v) in enumerate(zip(candidates, scores, strict=True))]  # fmt: skip
    return candidates[best], rows


def _folds(
    data: Interactions,
    word: str,
    *,
    seed: int,
    test_fraction: float,
    cut: int | None,
    windows: int,
    window: str | float | None,
) -> list[tuple[Interactions, Interactions]]:
    from receval.split import split_by_name

    if word == "random":
        return split_by_name(data, "per-user", test_fraction=test_fraction, seed=seed)
    if word == "loo":
        return split_by_name(data, "loo", seed=seed)
    if word == "temporal":
        return split_by_name(data, "temporal", at=cut, seed=seed)
    return split_by_name(data, "rolling", windows=windows, window=window, seed=seed)


def _leakage(folds: list[tuple[Interactions, Interactions]]) -> dict[str, float | int | None]:
    """The audit's figures of a protocol's folds: shares averaged over the folds, counts summed."""
    reports = [(audit(train, test).as_dict(), global_after_test(train, test)) for train, test in folds]
    row: dict[str, float | int | None] = {}
    for name in _SHARES:
        shares = [r[name] for r, _ in reports if r[name] is not None]
        row[name] = float(np.mean(shares)) if shares else None
    shares = [g for _, g in reports if g is not None]
    row["global_after_test"] = float(np.mean(shares)) if shares else None
    for name in _COUNTS:
        row[name] = int(sum(r[name] for r, _ in reports))
    return row
