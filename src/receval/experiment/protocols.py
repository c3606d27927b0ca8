"""Protocols: what one task does with its data set. A registry maps names to small adapters.

A protocol is a function ``run(task, dataset) -> TaskOutput`` plus the options it
accepts (name -> (type, default)) and whether its grid crosses recommenders. The
built-in ones adapt the library's entry points: ``one-shot`` (split, fit, recommend,
:func:`receval.evaluate`); others (cyclic, coherence-split, metaeval) are registered
in :mod:`receval.experiment.adapters` (and :mod:`receval.experiment.attack_protocol`) the same way.

Examples
--------
>>> "one-shot" in PROTOCOLS
True
>>> get_protocol("one-shot").options["k"]
(<class 'int'>, 10)
>>> get_protocol("oneshot")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
receval.errors.ConfigError: unknown protocol 'oneshot'; known: ...one-shot...
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from receval.errors import ConfigError

if TYPE_CHECKING:
    from receval.data.interactions import Interactions
    from receval.experiment.config import ExperimentConfig
    from receval.experiment.grid import Task

__all__ = [
    "PROTOCOLS",
    "PreparedDataset",
    "Protocol",
    "TaskOutput",
    "get_protocol",
    "long_per_user",
    "make_model",
    "register_protocol",
    "split_for",
]


@dataclass(frozen=True)
class PreparedDataset:
    """A data set as shipped to workers: the interactions and optional per-user features."""

    data: Interactions
    user_features: pd.DataFrame | None = None


@dataclass
class TaskOutput:
    """What a task produces.

    ``aggregates``: metric name -> value (one row each in ``aggregates.parquet``).
    ``per_user``: long table ``user_index``, ``user``, ``metric``, ``value``.
    ``tables``: further named long tables (``trajectories``, ``slices``, ...), each
    stored as ``<name>.parquet`` with the task id added.
    """

    aggregates: dict[str, float]
    per_user: pd.DataFrame | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


Runner = Callable[["Task", PreparedDataset], TaskOutput]
Factory = Callable[[str, Mapping[str, Any], Mapping[str, Any]], Any]


def _make_offline(algorithm: str, params: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
    """``receval.recommenders.make`` (protocol options do not matter)."""
    from receval.recommenders.registry import make

    return make(algorithm, **params)


@dataclass(frozen=True)
class Protocol:
    """A registered protocol; see :func:`register_protocol`."""

    name: str
    run: Runner
    options: Mapping[str, tuple[type, Any]]
    uses_recommenders: bool = True
    uses_split: bool = True
    needs_metrics: bool = True
    description: str = ""
    factory: Factory | None = None
    metric_names: Callable[[], Sequence[str]] | None = None

    def defaults(self) -> dict[str, Any]:
        """The option defaults."""
        return {k: v[1] for k, v in self.options.items()}

    def validate(self, cfg: ExperimentConfig) -> None:
        """Checks that need the whole configuration."""
        if self.needs_metrics and not cfg.metrics:
            raise ConfigError(f'protocol {self.name!r} needs at least one metric: add metrics = ["ndcg@10", ...]')
        if self.uses_recommenders and not cfg.recommenders:
            raise ConfigError(f"protocol {self.name!r} needs at least one [recommenders.<label>] table")
        if not cfg.datasets:
            raise ConfigError("no data set: add a [datasets.<label>] table with path + format or generate = {...}")


PROTOCOLS: dict[str, Protocol] = {}
# Modules whose import registers the built-in protocols (imported on first lookup, also in workers).
_PROTOCOL_MODULES = ("receval.experiment.adapters", "receval.experiment.attack_protocol")


def register_protocol(
    name: str,
    *,
    options: Mapping[str, tuple[type, Any]] | None = None,
    uses_recommenders: bool = True,
    uses_split: bool = True,
    needs_metrics: bool = True,
    description: str = "",
    factory: Factory | None = _make_offline,
    metric_names: Callable[[], Sequence[str]] | None = None,
) -> Callable[[Runner], Runner]:
    """Decorator adding ``run(task, dataset) -> TaskOutput`` to the registry under ``name``.

    ``factory(algorithm, params, options)`` builds a model (used to validate the
    recommenders of a configuration before any work; default
    :func:`receval.recommenders.make`). ``metric_names()`` lists the metric names the
    protocol reports, when it does not take metric strings of the metric registry.
    """

    def decorator(fn: Runner) -> Runner:
        PROTOCOLS[name] = Protocol(
            name=name,
            run=fn,
            options=dict(options or {}),
            uses_recommenders=uses_recommenders,
            uses_split=uses_split,
            needs_metrics=needs_metrics,
            description=description or (fn.__doc__ or "").strip().split("\n")[0],
            factory=factory,
            metric_names=metric_names,
        )
        return fn

    return decorator


def get_protocol(name: str) -> Protocol:
    """The registered protocol ``name`` (:class:`ConfigError` listing the known ones otherwise)."""
    import importlib

    for module in _PROTOCOL_MODULES:
        importlib.import_module(module)
    if name not in PROTOCOLS:
        raise ConfigError(f"unknown protocol {name!r}; known: {', '.join(sorted(PROTOCOLS))}")
    return PROTOCOLS[name]


# ---------------------------------------------------------------- splitting
_SPLITS: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_SPLIT_CACHE_SIZE = 4  # a worker usually runs many tasks on the same (data, split, seed)


def split_for(task: Task, data: Interactions) -> tuple[Interactions, Interactions]:
    """The task's (train, test), computed once per worker for each (data set, split, seed, fold)."""
    from receval.experiment.config import canonical_json

    key = (task.dataset_key, canonical_json(task.split), task.seed)
    if key not in _SPLITS:
        opts = {k: v for k, v in task.split.items() if k != "method"}
        method = task.split["method"]
        if method == "none":
            _SPLITS[key] = [(data, data)]
        else:
            import receval.split as splits

            fn = getattr(splits, method)
            try:
                result = fn(data, seed=task.seed, **opts)
            except TypeError as err:
                raise ConfigError(f"split {method!r}: {err}") from None
            _SPLITS[key] = result if isinstance(result, list) else [result]
        while len(_SPLITS) > _SPLIT_CACHE_SIZE:
            _SPLITS.popitem(last=False)
    folds = _SPLITS[key]
    return folds[task.fold or 0]


def make_model(task: Task) -> Any:
    """The task's model from its protocol's factory, seeded with the task's seed unless the grid fixes one."""
    params = dict(task.params)
    model = get_protocol(task.protocol).factory(task.algorithm, params, task.options)
    # a stochastic model takes the task's seed unless the grid fixes it
    if "seed" not in params and "seed" in getattr(model, "get_params", dict)():
        model.set_params(seed=task.seed)
    return model


def long_per_user(per_user: pd.DataFrame, users: np.ndarray, user_ids: np.ndarray) -> pd.DataFrame:
    """Wide per-user frame (one column per metric, rows aligned with ``users``) to the long layout."""
    frames = []
    for metric in per_user.columns:
        frames.append(
            pd.DataFrame(
                {
                    "user_index": users.astype(np.int32),
                    "user": user_ids[users].astype(str),
                    "metric": str(metric),
                    "value": per_user[metric].to_numpy(dtype=np.float64),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@register_protocol(
    "one-shot",
    options={"k": (int, 10), "exclude_train": (bool, True), "threshold": (float, 4.0)},
    description="train on the split's training part, rank k items per test user, evaluate on the test part",
)
def one_shot(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """One-shot evaluation: split, fit, recommend top-k for every test user, evaluate.

    Error metrics (RMSE, MAE) use the model's ``predict`` on the test pairs; for models
    without ``predict`` (pure rankers) they are NaN.
    """
    from receval.evaluate import evaluate
    from receval.metrics.registry import parse_metric
    from receval.recommenders import recommend

    train, test = split_for(task, dataset.data)
    opts = task.options
    model = make_model(task).fit(train)
    users = np.unique(test.users)
    items, _ = recommend(model, users, int(opts["k"]), exclude=train if opts["exclude_train"] else None, seed=task.seed)
    metrics = list(task.metrics)
    predictions = None
    errors = [m for m in metrics if parse_metric(m).kind == "error"]
    if errors and not hasattr(model, "predict"):  # a pure ranker: error metrics do not apply
        metrics = [m for m in metrics if m not in errors]
    elif errors:
        predictions = pd.DataFrame(
            {
                "user": test.user_ids[test.users],
                "item": test.item_ids[test.items],
                "prediction": np.asarray(model.predict(test.users, test.items), dtype=np.float64),
            }
        )

    def run(truth: Interactions) -> Any:
        preds = predictions
        if preds is not None and len(truth) != len(test):  # a slice: only its pairs
            keys = pd.MultiIndex.from_arrays([truth.user_ids[truth.users], truth.item_ids[truth.items]])
            preds = preds[pd.MultiIndex.from_frame(preds[["user", "item"]]).isin(keys)]
        return evaluate(items, truth, metrics, train=train, threshold=opts["threshold"], users=users, predictions=preds)

    def wide(truth: Interactions) -> pd.DataFrame:
        per_user = run(truth).per_user
        index = truth.user_index(per_user["user"].to_numpy())
        return per_user.drop(columns="user").set_index(pd.Index(index, name="user_index"))

    result = run(test)
    per_user = result.per_user
    index = test.user_index(per_user["user"].to_numpy())
    summary = {m: float(result.summary.get(m, np.nan)) for m in task.metrics}  # NaN: the metric does not apply
    out = TaskOutput(
        aggregates=summary,
        per_user=long_per_user(per_user.drop(columns="user"), index, dataset.data.user_ids),
    )
    if task.slices:
        from receval.studies.slicing import evaluate_slices

        out.tables["slices"] = evaluate_slices(wide, train, test, task.slices, user_features=dataset.user_features)
    return out
