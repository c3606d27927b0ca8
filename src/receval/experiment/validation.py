"""The checks of a configuration that need its data, run before any task starts (or any file is written).

:func:`receval.experiment.config.parse_config` checks every value it can without data
(types, names, counts, fractions, seeds: :mod:`receval.validate`). What depends on the
data is checked here, once the data sets are prepared: each task's relevance
threshold lies on its data set's rating scale, the filters leave ratings, and
per-user folds are no more than the fewest ratings of a user. Errors are
:class:`~receval.errors.ConfigError` with the configuration's file and the line of
the offending key, so ``receval run`` stops with exit status 2 before it starts.

Examples
--------
>>> from receval.experiment.config import parse_config
>>> text = '''
... metrics = ["ndcg@10"]
... [datasets.toy]
... generate = { n_users = 30, n_items = 20, n_ratings = 200 }
... threshold = 10
... [protocol]
... name = "one-shot"
... [recommenders.popularity]
... '''
>>> cfg = parse_config(text, path="toy.toml")
>>> from receval.experiment.grid import expand  # (from a file, the error also names the line)
>>> prepare_checked(cfg, expand(cfg))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
receval.errors.ConfigError: toy.toml: datasets.toy.threshold 10 is outside the rating scale 1..5; pick a threshold ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError, MetricError, shown_id
from receval.evaluation.sampled import check_sampled_metrics
from receval.experiment.config import ExperimentConfig, _Checker, _config_text
from receval.experiment.datasets import prepare_dataset
from receval.experiment.ids import Task
from receval.experiment.protocols import PreparedDataset, get_protocol
from receval.split import split_by_name
from receval.validate import check_folds, check_threshold
from receval.vocabulary import NO_SPLIT, split_method

__all__ = ["check_tune_parts", "prepare_checked", "tune_checker"]


def _checker(cfg: ExperimentConfig) -> _Checker:
    """Locates keys in the configuration's text (no lines for a configuration built in code)."""
    path = Path(cfg.source) if cfg.source else None
    text = _config_text(path) if path is not None and path.is_file() else ""
    return _Checker(text, cfg.source or "<config>")


def prepare_checked(
    cfg: ExperimentConfig, tasks: Sequence[Task], *, user_features: bool = False
) -> dict[str, PreparedDataset]:
    """Prepare the data sets of ``tasks`` (by key) and check every task's values against its data."""
    chk = _checker(cfg)
    keys = {t.dataset_key for t in tasks}
    datasets = {}
    for spec in cfg.datasets.values():
        if spec.key not in keys or spec.key in datasets:
            continue
        try:
            datasets[spec.key] = prepare_dataset(spec, user_features=user_features)
        except (ConfigError, DataError) as err:
            if err.path is not None:
                raise
            where = ("datasets", spec.label, "filters") if spec.filters else ("datasets", spec.label)
            raise chk.fail(where, err.message) from None
    labels = {spec.key: spec.label for spec in cfg.datasets.values()}
    if cfg.groups is not None:  # every data set's users matched with the groups file, once
        datasets = {key: _with_groups(chk, cfg, prepared, labels[key]) for key, prepared in datasets.items()}
    # a protocol with metric words of its own (the cyclic loop's recall, fallout) reads no metric strings
    metric_strings = get_protocol(cfg.protocol.name).metric_names is None
    # the metric strings as the file spells them, for the messages (cfg.metrics holds them resolved, in their order)
    typed = dict(zip(cfg.metrics, cfg.effective.get("metrics", ()), strict=False))
    seen: set[tuple[str, object, object]] = set()
    for task in tasks:
        data = datasets[task.dataset_key].data
        label = labels[task.dataset_key]
        try:  # sampled metrics (sampled=, exponent=) against the data, as a task would draw them
            if metric_strings:
                check_sampled_metrics({typed.get(m, m): m for m in task.metrics}, data)
        except MetricError as err:
            raise chk.fail(("metrics",), f"{err.message} (data set {label!r})") from None
        if cfg.protocol.name == "sampled":  # the study's own n and exponent, as its split would draw them
            from receval.studies.sampled import check_study_data  # scipy's optimize and stats: this study only

            opts = task.options
            try:
                check_study_data(data, int(opts["n"]), str(opts["sampling"]), float(opts["exponent"]), "protocol.")
            except ConfigError as err:
                key = err.parameters[0].removeprefix("protocol.") if err.parameters else "n"
                option: tuple[str, ...] = ("protocol", key) if key in cfg.protocol.options else ("protocol",)
                raise chk.fail(option, f"{err.message} (data set {label!r})") from None
        thr = task.options.get("threshold")
        method = task.split.get("method", NO_SPLIT)
        by_split = method != NO_SPLIT and split_method(method).function == "kfold_per_user"  # per-user folds
        folds = task.split.get("k", 5) if by_split else task.options.get("folds")
        if (task.dataset_key, thr, folds) in seen:
            continue
        seen.add((task.dataset_key, thr, folds))
        _check_time_split(chk, task.split, data, label)
        if thr is not None:
            own = cfg.datasets[label].threshold is not None
            where = ("datasets", label, "threshold") if own else ("protocol", "threshold")
            shown = f"datasets.{label}.threshold" if own else "protocol.threshold"
            if not own and "threshold" not in cfg.protocol.options:
                shown = f"protocol.threshold (default {thr:g}; data set {label!r})"
            try:
                check_threshold(thr, data.scale.low, data.scale.high, shown)
            except ConfigError as err:
                raise chk.fail(where, err.message) from None
        if folds is not None:
            where, shown = (
                (("split", "k"), "split.k") if "k" in task.split else (("protocol", "folds"), "protocol.folds")
            )
            try:
                check_folds(int(folds), np.bincount(data.users, minlength=data.n_users), shown)
            except ConfigError as err:
                raise chk.fail(where, f"{err.message} (data set {label!r})") from None
    return datasets


def _with_groups(chk: _Checker, cfg: ExperimentConfig, prepared: PreparedDataset, label: str) -> PreparedDataset:
    """The data set with its users' groups (``groups``): users without one pooled or refused, as
    ``evaluate --user-groups`` does (:func:`receval.stats.groups.align_groups`); users of the file not in the
    data set are counted in a warning."""
    import dataclasses

    from receval.stats.groups import align_groups, read_user_groups

    spec = cfg.groups
    assert spec is not None
    where = ("groups", "path") if isinstance(cfg.effective.get("groups"), Mapping) else ("groups",)
    try:
        groups = align_groups(prepared.data.user_ids.astype(str), read_user_groups(spec.resolved_path),
                              unknown_group=spec.unknown_group, source=f"groups file {spec.path!r}",
                              where=f"data set {label!r}")  # fmt: skip
    except DataError as err:
        text = err.message.replace("--unknown-group NAME", "groups unknown_group = NAME")
        raise chk.fail(where, text) from None
    return dataclasses.replace(prepared, user_groups=groups, group_test=spec.test)


def _check_time_split(chk: _Checker, split: Mapping[str, Any], data: Interactions, label: str) -> None:
    """A split with time options (a cut at a date, rolling windows, targets, a k-core) made once on the data, so that
    missing timestamps, a cut outside the data's range or windows that do not fit fail before any task."""
    method = split.get("method", NO_SPLIT)
    timed = ("at", "windows", "window", "gap", "core", "candidates")
    if method == NO_SPLIT or not (split_method(method).function == "rolling" or any(k in split for k in timed)
                                  or split.get("targets", "all") != "all"):  # fmt: skip
        return
    try:
        split_by_name(data, method, **{k: v for k, v in split.items() if k != "method"})
    except (ConfigError, DataError) as err:
        key = next((k for k in (*timed, "targets") if k in split and f"{k}=" in err.message), "method")
        raise chk.fail(("split", key), f"{err.message} (data set {label!r})") from None


def tune_checker(cfg: ExperimentConfig) -> _Checker:
    """The locator of ``cfg``'s keys, for the tuning checks that need data (file and line in their errors).

    Returns
    -------
    _Checker
        Its ``fail(where, message)`` gives a ConfigError naming the file and the key's line.

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> text = 'metrics = ["ndcg@10"]\\n[datasets.toy]\\ngenerate = { n_users = 9 }\\n'
    >>> cfg = parse_config(text + '[recommenders.random]\\n')
    >>> tune_checker(cfg).fail(("datasets",), "bad").message
    'bad'
    """
    return _checker(cfg)


def check_tune_parts(
    cfg: ExperimentConfig, label: str, fit: Interactions, validation: Interactions, threshold: float
) -> None:
    """Check that a data set's validation part can score the objective, before any trial runs.

    Refused: a validation part that leaves one of its users without a rating in the
    fit part (the user would be scored on an empty profile), a validation part without
    a relevant rating (the objective is the same for every model), an objective that
    needs item aspects the data has not, or rating predictions a recommender cannot make.

    Returns
    -------
    None
        The parts pass; otherwise a ConfigError with the file and the line of ``[tune]``.

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> from receval.data.synthetic import generate
    >>> from receval.split import holdout
    >>> text = 'metrics = ["ndcg@10"]\\n[datasets.toy]\\ngenerate = { n_users = 9 }\\n[tune]\\ntrials = 2\\n'
    >>> cfg = parse_config(text + '[recommenders.popularity]\\nspace = { threshold = { float = [1, 5] } }\\n')
    >>> fit, validation = holdout(generate(30, 20, 300, seed=0), 0.9, seed=0)
    >>> check_tune_parts(cfg, "toy", fit, validation, 4.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: <config>: the validation split 'holdout' leaves ... user(s) of data set 'toy' ...
    """
    from receval.experiment.protocols import build_model
    from receval.metrics import parse_metric

    tune = cfg.tune
    assert tune is not None
    chk = _checker(cfg)
    where = ("tune", "validation") if "validation" in cfg.effective.get("tune", {}) else ("tune",)
    have = np.bincount(fit.users, minlength=fit.n_users) > 0
    cold = np.unique(validation.users[~have[validation.users]])
    if len(cold):
        raise chk.fail(
            where,
            f"the validation split {tune.validation['method']!r} leaves {len(cold)} user(s) of data set {label!r} "
            f'with no training data (user {shown_id(validation.user_ids[cold[0]])}, ...); use method = "per-user" or '
            '"temporal-per-user" with min_train = 1',
        )
    metric = parse_metric(tune.metric)
    if metric.kind != "error" and not np.any(validation.ratings >= threshold):
        raise chk.fail(
            where, f"the validation part of {label!r} has no rating >= the threshold {threshold:g}: nothing to rank"
        )
    if metric.definition.needs_aspects and fit.aspects is None:
        raise chk.fail(("tune", "metric"), f"objective {tune.metric!r} needs item aspects; data set {label!r} has none")
    if metric.kind == "error":
        for rec in cfg.recommenders.values():
            if not callable(getattr(build_model(rec.algorithm, rec.params, {}), "predict", None)):
                raise chk.fail(
                    ("tune", "metric"),
                    f"objective {tune.metric!r} needs rating predictions, which {rec.label!r} does not make; "
                    "tune a ranking metric (ndcg@10)",
                )
