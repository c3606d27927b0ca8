"""What every protocol is built on: the registry, what a task gets and gives, and the steps protocols share.

A protocol is a function ``run(task, dataset) -> TaskOutput`` plus the options it
accepts (name -> (type, default)) and whether its grid crosses recommenders;
:func:`register_protocol` adds one to :data:`PROTOCOLS`. The steps several protocols
take are here once: the task's split (:func:`split_for`, cached per worker), its model
(:func:`make_model`), its relevance threshold (:func:`task_threshold`) and the long
per-user table (:func:`long_per_user`). The built-in protocols are the other modules of
:mod:`receval.experiment.protocols`, one each.

Examples
--------
>>> get_protocol("one-shot").options["k"]
(<class 'int'>, 10)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from typing import Protocol as Structural

import numpy as np
import pandas as pd

from receval.errors import ConfigError, did_you_mean
from receval.vocabulary import NO_SPLIT, UnpairedTest

if TYPE_CHECKING:
    from receval.data.interactions import Interactions
    from receval.experiment.ids import Task

__all__ = [
    "PROTOCOLS",
    "Configuration",
    "PreparedDataset",
    "Protocol",
    "TaskOutput",
    "build_model",
    "get_protocol",
    "long_per_user",
    "make_model",
    "protocol_names",
    "register_protocol",
    "split_for",
    "string_columns",
    "task_threshold",
]


@dataclass(frozen=True)
class PreparedDataset:
    """A data set as shipped to workers: the interactions, optional per-user features and user groups.

    ``user_groups`` (the configuration's ``groups``): each user's group, indexed by the user id as text;
    ``group_test`` the unpaired test of their gaps.
    """

    data: Interactions
    user_features: pd.DataFrame | None = None
    user_groups: pd.Series | None = None
    group_test: UnpairedTest = "welch"


@dataclass
class TaskOutput:
    """What a task produces.

    ``aggregates``: metric name -> value (one row each in ``aggregates.parquet``).
    ``per_user``: long table ``user_index``, ``user``, ``metric``, ``value``.
    ``tables``: further named long tables (``trajectories``, ``slices``, one-shot's
    ``cold_start``: the policy and the counts of :class:`receval.evaluation.Conventions`), each
    stored as ``<name>.parquet`` with the task id added.
    """

    aggregates: dict[str, float]
    per_user: pd.DataFrame | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


Runner = Callable[["Task", PreparedDataset], TaskOutput]
Factory = Callable[[str, Mapping[str, Any], Mapping[str, Any]], Any]


def build_model(algorithm: str, params: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
    """:func:`receval.recommenders.make` with the protocol's ``preset`` option (``standard`` without one)."""
    from receval.recommenders.registry import make

    return make(algorithm, preset=str(options.get("preset", "standard")), **params)


class Configuration(Structural):
    """What :meth:`Protocol.validate` reads of a configuration (:class:`~receval.experiment.config.ExperimentConfig`).

    Named by its parts so that the registry needs nothing of the module that parses configurations.
    """

    @property
    def metrics(self) -> Sequence[str]: ...
    @property
    def recommenders(self) -> Mapping[str, Any]: ...
    @property
    def datasets(self) -> Mapping[str, Any]: ...


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
    check: Callable[[Mapping[str, Any]], None] | None = None

    def defaults(self) -> dict[str, Any]:
        """The option defaults."""
        return {k: v[1] for k, v in self.options.items()}

    def validate(self, cfg: Configuration) -> None:
        """Checks that need the whole configuration."""
        if self.needs_metrics and not cfg.metrics:
            raise ConfigError(f'protocol {self.name!r} needs at least one metric: add metrics = ["ndcg@10", ...]')
        if self.uses_recommenders and not cfg.recommenders:
            raise ConfigError(f"protocol {self.name!r} needs at least one [recommenders.<label>] table")
        if not cfg.datasets:
            raise ConfigError("no data set: add a [datasets.<label>] table with path + format or generate = {...}")


# The built-in protocols are registered by their decorators in the modules that define them, which the
# package receval.experiment.protocols imports (listed there): a package is initialised before any of its
# modules, so every process that can look a protocol up has them all, whatever it imported first.
PROTOCOLS: dict[str, Protocol] = {}


def protocol_names() -> list[str]:
    """Sorted names of every protocol, the built-in ones and those registered since.

    >>> protocol_names()[:4]
    ['attack', 'coherence-barrier', 'coherence-split', 'cyclic']
    """
    return sorted(PROTOCOLS)


def register_protocol(
    name: str,
    *,
    options: Mapping[str, tuple[type, Any]] | None = None,
    uses_recommenders: bool = True,
    uses_split: bool = True,
    needs_metrics: bool = True,
    description: str = "",
    factory: Factory | None = build_model,
    metric_names: Callable[[], Sequence[str]] | None = None,
    check: Callable[[Mapping[str, Any]], None] | None = None,
) -> Callable[[Runner], Runner]:
    """Decorator adding ``run(task, dataset) -> TaskOutput`` to the registry under ``name``.

    ``factory(algorithm, params, options)`` builds a model (used to validate the
    recommenders of a configuration before any work; default :func:`build_model`,
    ``None`` for protocols without recommenders). ``metric_names()`` lists the metric names the
    protocol reports, when it does not take metric strings of the metric registry.
    ``check(options)`` refuses option values beyond their types (a vocabulary word, a range,
    two options that exclude each other) with a :class:`ConfigError` whose ``parameters`` name
    the option; the configuration calls it on every grid point's options (with the defaults)
    when it is parsed, before any work.
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
            check=check,
        )
        return fn

    return decorator


def task_threshold(task: Task, data: Interactions) -> float:
    """The task's relevance threshold λ: the configuration's (data set or protocol), else the data's default.

    Protocols declare ``threshold`` with no default (None) and read it here, so that a
    configuration without one relates ratings to relevance as ``receval evaluate`` and every
    study do (:meth:`~receval.data.interactions.RatingScale.default_threshold`).

    >>> from types import SimpleNamespace
    >>> from receval.data.interactions import Interactions
    >>> from receval.data.interactions import RatingScale
    >>> data = Interactions.from_arrays([0, 1], [0, 0], [0.5, 5], scale=RatingScale(0.5, 5, 0.5))
    >>> task_threshold(SimpleNamespace(options={"threshold": None}), data)
    0.5
    >>> task_threshold(SimpleNamespace(options={"threshold": 4}), data)
    4.0
    """
    return data.scale.relevance(task.options.get("threshold")).threshold


def get_protocol(name: str) -> Protocol:
    """The registered protocol ``name`` (:class:`ConfigError` listing the known ones otherwise)."""
    if name not in PROTOCOLS:
        raise ConfigError(
            f"unknown protocol {name!r}; known: {', '.join(protocol_names())}{did_you_mean(name, PROTOCOLS)}"
        )
    return PROTOCOLS[name]


# ---------------------------------------------------------------- splitting
_SPLITS: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_SPLIT_CACHE_SIZE = 4  # a worker usually runs many tasks on the same (data, split, seed)


def split_for(task: Task, data: Interactions) -> tuple[Interactions, Interactions]:
    """The task's (train, test), computed once per worker for each (data set, split, seed, fold)."""
    from receval.experiment.ids import canonical_json

    key = (task.dataset_key, canonical_json(task.split), task.seed)
    if key not in _SPLITS:
        opts = {k: v for k, v in task.split.items() if k != "method"}
        method = task.split["method"]
        if method == NO_SPLIT:
            _SPLITS[key] = [(data, data)]
        else:
            from receval.split import split_by_name

            _SPLITS[key] = split_by_name(data, method, seed=task.seed, **opts)
        while len(_SPLITS) > _SPLIT_CACHE_SIZE:
            _SPLITS.popitem(last=False)
    folds = _SPLITS[key]
    return folds[task.fold or 0]


def make_model(task: Task) -> Any:
    """The task's model from its protocol's factory, seeded with the task's seed unless the grid fixes one."""
    from receval.recommenders import clone

    params = dict(task.params)
    factory = get_protocol(task.protocol).factory
    if factory is None or task.algorithm is None:
        raise ConfigError(f"protocol {task.protocol!r} builds no recommenders")
    model = factory(task.algorithm, params, task.options)
    return model if "seed" in params else clone(model, seed=task.seed)


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


def string_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose column names are strings, as Parquet needs them.

    >>> string_columns(pd.DataFrame({0.1: [1.0]})).columns.tolist()
    ['0.1']
    """
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    return frame
