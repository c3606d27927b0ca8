"""Grid expansion: a configuration becomes a list of tasks with stable ids.

A task is one point of data sets × folds × recommenders × parameter values × protocol
option values × seeds. Its id is a hash of its canonical JSON, so the same task gets
the same id in every run (that is how a resumed run recognises finished work), and
any change to what a task computes changes its id.

Examples
--------
>>> from receval.experiment.config import parse_config
>>> cfg = parse_config('''
... seeds = [0, 1]
... metrics = ["ndcg@5"]
... [datasets.toy]
... generate = { n_users = 50, n_items = 40 }
... [protocol]
... name = "one-shot"
... k = [5, 10]
... [recommenders.random]
... params = { seed = [0, 1, 2] }
... ''')
>>> tasks = expand(cfg)
>>> len(tasks), len({t.id for t in tasks})
(12, 12)
>>> tasks[0].params, tasks[0].options["k"], tasks[0].seed
({'seed': 0}, 5, 0)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from receval.errors import ConfigError
from receval.experiment.config import ExperimentConfig
from receval.experiment.ids import Task, task_id
from receval.experiment.protocols import get_protocol
from receval.validate import check_memory
from receval.vocabulary import NO_SPLIT, split_method

if TYPE_CHECKING:
    from receval.experiment.protocols import PreparedDataset

__all__ = ["Task", "expand", "first_task", "grid_points", "grid_size"]


def grid_points(values: Mapping[str, Any], *, list_options: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Cartesian product of a mapping whose list values are axes (keys in ``list_options`` stay whole).

    Returns
    -------
    list of dict
        One mapping per combination of the axes' values, in the order of the keys and
        of each list; an empty axis gives no point.

    Examples
    --------
    >>> grid_points({"k": [1, 2], "sim": "cosine"})
    [{'k': 1, 'sim': 'cosine'}, {'k': 2, 'sim': 'cosine'}]
    >>> grid_points({"k": []})
    []
    """
    keys = list(values)
    axes = [values[k] if isinstance(values[k], list) and k not in list_options else [values[k]] for k in keys]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes)]


def _points(values: Mapping[str, Any], list_options: tuple[str, ...] = ()) -> int:
    """How many points :func:`grid_points` gives, without building them."""
    return math.prod(len(v) for k, v in values.items() if isinstance(v, list) and k not in list_options)


def grid_size(cfg: ExperimentConfig) -> int:
    """The number of tasks :func:`expand` builds, counted without building them.

    Returns
    -------
    int
        Data sets x folds x recommender parameter points x protocol option points x seeds.

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> text = 'name = "g"\\nseeds = [0, 1]\\nmetrics = ["ndcg@10"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 50, n_items = 40 }\\n[recommenders.item-knn]\\nparams = { k = [10, 20] }\\n'
    >>> grid_size(parse_config(text))
    4
    """
    proto = get_protocol(cfg.protocol.name)
    list_options = tuple(k for k, (kind, _) in proto.options.items() if kind is list)
    options = _points(proto.defaults() | dict(cfg.protocol.options), list_options)
    split = dict(cfg.split)
    folds = 1
    if proto.uses_split and split.get("method", NO_SPLIT) != NO_SPLIT and split_method(split["method"]).folds:
        folds = split_method(split["method"]).n_folds(split)
    recs = sum(_points(dict(spec.params)) for spec in cfg.recommenders.values()) if proto.uses_recommenders else 1
    return len(cfg.datasets) * folds * recs * options * len(cfg.seeds)


_TASK_BYTES = 4_000  # a built task: its dicts, the record hashed for its id, the runner's bookkeeping


def expand(cfg: ExperimentConfig) -> list[Task]:
    """All tasks of a configuration, in a deterministic order; zero tasks is an error.

    The grid is the product of data sets, folds, recommenders with each point of their
    parameter grids, protocol option points and seeds.

    Returns
    -------
    list of Task
        One per point of the grid, each with its stable id (:func:`~receval.experiment.ids.task_id`).

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> text = 'name = "g"\\nseeds = [0, 1]\\nmetrics = ["ndcg@10"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 50, n_items = 40 }\\n[recommenders.item-knn]\\nparams = { k = [10, 20] }\\n'
    >>> [(t.params["k"], t.seed) for t in expand(parse_config(text))]
    [(10, 0), (10, 1), (20, 0), (20, 1)]
    """
    size = grid_size(cfg)
    try:  # counted first: a grid of 10^8 points was built task by task until memory ran out
        check_memory(_TASK_BYTES * size, f"the grid of {size:,} tasks", "make the parameter grids smaller, or search "
                     "the space with [tune] (a budget of trials)")  # fmt: skip
    except ConfigError as err:
        raise ConfigError(err.message, path=cfg.source) from None
    proto = get_protocol(cfg.protocol.name)
    list_options = tuple(k for k, (kind, _) in proto.options.items() if kind is list)
    options = proto.defaults() | dict(cfg.protocol.options)
    option_points = grid_points(options, list_options=list_options)
    varying_options = tuple(k for k in options if isinstance(options[k], list) and k not in list_options)
    split = dict(cfg.split)
    folds: list[int | None] = [None]
    if proto.uses_split and split.get("method", NO_SPLIT) != NO_SPLIT and split_method(split["method"]).folds:
        folds = list(range(split_method(split["method"]).n_folds(split)))
    if not proto.uses_split:
        split = {"method": NO_SPLIT}
    recs: list[tuple[str | None, str | None, dict[str, Any]]] = [(None, None, {})]
    if proto.uses_recommenders:
        recs = [
            (label, spec.algorithm, point)
            for label, spec in cfg.recommenders.items()
            for point in grid_points(dict(spec.params))
        ]
    tasks = []
    for ds, fold, (label, algorithm, params), opts, seed in itertools.product(
        cfg.datasets.values(), folds, recs, option_points, cfg.seeds
    ):
        if ds.threshold is not None and "threshold" in opts:  # the data set's own λ wins
            opts = opts | {"threshold": ds.threshold}
        body = {
            "dataset": ds.label,
            "dataset_key": ds.key,
            "dataset_spec": ds.as_dict(),
            "split": split,
            "fold": fold,
            "recommender": label,
            "algorithm": algorithm,
            "params": params,
            "protocol": proto.name,
            "options": opts,
            "metrics": list(cfg.metrics),
            "seed": seed,
            "slices": {k: list(v) for k, v in cfg.slices.items()},
        }
        task = Task(
            id=task_id(body),
            dataset=ds.label,
            dataset_key=ds.key,
            split=split,
            fold=fold,
            recommender=label,
            algorithm=algorithm,
            params=params,
            protocol=proto.name,
            options=opts,
            metrics=tuple(cfg.metrics),
            seed=seed,
            slices=dict(cfg.slices),
            varying=varying_options,
        )
        tasks.append(task)
    if not tasks:
        raise ConfigError(
            f"the grid expands to zero tasks (datasets: {len(cfg.datasets)}, recommenders: "
            f"{len(recs)} parameter points, seeds: {len(cfg.seeds)}); nothing to run",
            path=cfg.source,
        )
    return tasks


def task_record(task: Task) -> dict[str, Any]:
    """The task as a JSON-able dict (stored with its results).

    Returns
    -------
    dict
        One key per field of :class:`Task`.

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> text = 'name = "g"\\nseeds = [0, 1]\\nmetrics = ["ndcg@10"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 50, n_items = 40 }\\n[recommenders.item-knn]\\nparams = { k = [10, 20] }\\n'
    >>> record = task_record(expand(parse_config(text))[0])
    >>> record["recommender"], record["params"], record["seed"]
    ('item-knn', {'k': 10}, 0)
    """
    return asdict(task)


def first_task(text: str) -> tuple[Task, PreparedDataset]:
    """The first task of the configuration ``text`` and its data set, prepared as a worker gets them.

    A protocol's ``run`` takes the pair: this tries one protocol by hand, without a result store.

    Returns
    -------
    tuple of (Task, PreparedDataset)
        The first task of :func:`expand` and its data set (:func:`~receval.experiment.datasets.prepare_dataset`).

    Examples
    --------
    >>> text = 'metrics = ["ndcg@10"]\\n[datasets.toy]\\ngenerate = { n_users = 50, n_items = 40, n_ratings = 600 }\\n'
    >>> task, dataset = first_task(text + "[recommenders.popularity]\\n")
    >>> task.describe(), dataset.data.n_users
    ('toy/popularity() seed=0', 50)
    """
    from receval.experiment.config import parse_config
    from receval.experiment.datasets import prepare_dataset

    cfg = parse_config(text)
    task = expand(cfg)[0]
    return task, prepare_dataset(cfg.datasets[task.dataset])
