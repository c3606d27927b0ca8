"""The ``coherence-split`` protocol: easy and difficult users by coherence in the experiment runner.

:func:`receval.studies.partitions.coherence_split_experiment` for one recommender (it runs
its own per-user k-fold); the aggregates are the five models' relative RMSE per ``p``
(``All-Easy(p=0.1)`` ...), the tables ``coherence`` (the paper's Table 6 rows) and
``coherence_rmse`` (absolute RMSE).

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("coherence-split").options["folds"]
(<class 'int'>, 5)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from receval.experiment.ids import Task
from receval.experiment.protocols.base import (
    PreparedDataset,
    TaskOutput,
    make_model,
    register_protocol,
    string_columns,
)

__all__: list[str] = []


def _check_coherence_split(options: Mapping[str, Any]) -> None:
    """``gamma`` a coherence function of Table 1, ``avg`` a word of ``AVERAGES``, every share ``ps`` in (0, 1)."""
    from receval.errors import ConfigError
    from receval.stats.coherence import GAMMAS
    from receval.studies.partitions import AVERAGES
    from receval.validate import check_fraction

    if options["gamma"] not in GAMMAS:
        raise ConfigError(f"protocol.gamma {options['gamma']!r} is not one of {', '.join(GAMMAS)}",
                          parameters=["gamma"])  # fmt: skip
    if options["avg"] not in AVERAGES:
        raise ConfigError(f"protocol.avg {options['avg']!r} is not one of {', '.join(AVERAGES)}", parameters=["avg"])
    if not options["ps"]:
        raise ConfigError("protocol.ps is empty: give shares of difficult users, e.g. [0.1, 0.5]", parameters=["ps"])
    for p in options["ps"]:
        try:
            check_fraction(p, "protocol.ps")
        except ConfigError as err:
            raise ConfigError(err.message, parameters=["ps"]) from None


@register_protocol(
    "coherence-split",
    options={
        "ps": (list, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]),
        "folds": (int, 5),
        "gamma": (str, "wstd"),
        "avg": (str, "users"),
    },
    uses_split=False,
    needs_metrics=False,
    metric_names=tuple,
    description=(
        "easy vs difficult users by coherence: RMSE of the five training/test models (Said & Bellogín, UMUAI 2018)"
    ),
    check=_check_coherence_split,
)
def coherence_split(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """The five-model experiment for the task's recommender; relative RMSE per p as aggregates.

    Returns
    -------
    TaskOutput
        ``aggregates``: ``<model>(p=<p>)`` for the four models, ``Avg``, ``base_error`` and ``rating_ratio``;
        ``tables``: ``coherence`` and ``coherence_rmse``.

    Examples
    --------
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "g"\\nmetrics = []\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\n[recommenders.biases]\\n'
    >>> text += '[protocol]\\nname = "coherence-split"\\nps = [0.5]\\nfolds = 2\\n'
    >>> out = coherence_split(*first_task(text))
    >>> sorted(out.aggregates)[:3], sorted(out.tables)
    (['All-Diff(p=0.5)', 'All-Easy(p=0.5)', 'Avg(p=0.5)'], ['coherence', 'coherence_rmse'])
    """
    from receval.studies.partitions import coherence_split_experiment

    data = dataset.data.deduplicate("last") if dataset.data.has_duplicates else dataset.data
    label = task.recommender or task.algorithm or "model"
    opts = task.options
    result = coherence_split_experiment(
        data,
        {label: lambda: make_model(task)},
        [float(p) for p in opts["ps"]],
        folds=int(opts["folds"]),
        gamma=str(opts["gamma"]),
        avg=opts["avg"],  # a string: the protocol's option type
        seed=task.seed,
    )
    table = result.table.reset_index()
    aggregates = {}
    for _, row in table.iterrows():
        for model in ("All-Diff", "All-Easy", "Diff-Diff", "Easy-Easy", "Avg", "base_error", "rating_ratio"):
            aggregates[f"{model}(p={row['p']:g})"] = float(row[model])
    return TaskOutput(
        aggregates=aggregates,
        tables={"coherence": string_columns(table), "coherence_rmse": string_columns(result.rmse.reset_index())},
    )
