"""The ``debiased`` protocol: naive and debiased estimates on an MNAR test against the MAR truth.

The data set needs a ``familiar`` column (CM100k; generated data with
``familiar_fraction``): :func:`receval.studies.debiasing.cm100k_parts` holds out
``test_fraction`` of the ratings with the task's seed, the task's recommender is
trained on the familiar training ratings, and
:func:`receval.studies.debiasing.debiasing_study` evaluates its lists on the familiar
test ratings with each of ``estimators`` (propensity models ``propensities``, empty
for the default) and on all test ratings. Aggregates: ``<metric>|<estimator>`` (the
estimate) and ``<metric>|mar`` (the MAR value) for each metric of the configuration;
the table ``debias`` holds the rows of the study. Kendall τ between the rankings of the
recommenders follows from the aggregates of the tasks
(:func:`receval.stats.significance.system_agreement`).

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("debiased").options["test_fraction"]
(<class 'float'>, 0.2)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from receval.errors import ConfigError
from receval.experiment.ids import Task
from receval.experiment.protocols.base import PreparedDataset, TaskOutput, make_model, register_protocol, task_threshold
from receval.metrics.debiased import ESTIMATORS

__all__: list[str] = []


def _check(options: Mapping[str, Any]) -> None:
    """Every estimator one of :data:`~receval.metrics.debiased.ESTIMATORS`, every propensity model a known one."""
    from receval.stats.propensity import propensity_models

    for key, words in (("estimators", ESTIMATORS), ("propensities", tuple(propensity_models()))):
        unknown = [w for w in options[key] if w not in words]
        if unknown:
            raise ConfigError(f"protocol.{key}: {unknown[0]!r} is not one of {', '.join(words)}", parameters=[key])
    if not options["estimators"]:
        raise ConfigError(f"protocol.estimators is empty: give some of {', '.join(ESTIMATORS)}",
                          parameters=["estimators"])  # fmt: skip


@register_protocol(
    "debiased",
    options={
        "estimators": (list, list(ESTIMATORS)),
        "propensities": (list, []),
        "test_fraction": (float, 0.2),
        "k": (int, 10),
        "threshold": (float, None),
    },
    uses_split=False,
    description="estimates on the familiar (MNAR) test with each estimator against the MAR truth (all test ratings)",
    check=_check,
)
def debiased(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """One recommender: its estimates per metric and estimator, and the MAR values.

    Returns
    -------
    TaskOutput
        ``aggregates``: ``<metric>|<estimator>`` (with the first propensity model; the others in brackets,
        ``ips[logistic]``) and ``<metric>|mar``; ``tables["debias"]``: the study's rows.

    Examples
    --------
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "g"\\nmetrics = ["recall@5"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 40, n_items = 30, n_ratings = 600, familiar_fraction = 0.5 }\\n'
    >>> text += '[recommenders.popularity]\\n[protocol]\\nname = "debiased"\\nestimators = ["naive", "ips"]\\n'
    >>> out = debiased(*first_task(text))
    >>> sorted(k for k in out.aggregates if "[" not in k), list(out.tables)
    (['recall@5|ips', 'recall@5|mar', 'recall@5|naive'], ['debias'])
    """
    from receval.studies.debiasing import cm100k_parts, debiasing_study

    opts = task.options
    parts = cm100k_parts(dataset.data, test_fraction=float(opts["test_fraction"]), seed=task.seed)
    model = make_model(task)  # raises unless the task names an algorithm
    assert task.algorithm is not None
    study = debiasing_study(
        parts,
        {task.algorithm: model},
        metrics=list(task.metrics),
        estimators=list(opts["estimators"]),
        propensities=list(opts["propensities"]) or None,
        threshold=task_threshold(task, dataset.data),
        k=int(opts["k"]),
        seed=task.seed,
    )
    rows = study.estimates
    aggregates = {f"{r.metric}|{r.estimator}": float(r.estimate) for r in rows.itertuples()}
    aggregates.update({f"{r.metric}|mar": float(r.truth) for r in rows.itertuples()})
    return TaskOutput(aggregates=aggregates, tables={"debias": rows})
