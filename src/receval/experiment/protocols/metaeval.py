"""The ``metaeval`` protocol: the meta-evaluation of metrics (:mod:`receval.studies.metaeval`) in the runner.

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("metaeval").options["experiments"]
(<class 'list'>, ['swap', 'discriminative', 'incompleteness'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from receval.experiment.ids import Task
from receval.experiment.protocols.base import (
    PreparedDataset,
    TaskOutput,
    register_protocol,
    split_for,
    string_columns,
    task_threshold,
)

__all__: list[str] = []


METAEVAL_EXPERIMENTS: tuple[str, ...] = ("swap", "discriminative", "incompleteness")
"""The experiments of the ``metaeval`` protocol (:mod:`receval.studies.metaeval`)."""


def _check_metaeval(options: Mapping[str, Any]) -> None:
    """``experiments`` of :data:`METAEVAL_EXPERIMENTS`, ``systems`` that :func:`make` builds, ``strengths`` in
    [0, 1], ``fractions`` in (0, 1)."""
    from receval.errors import ConfigError
    from receval.recommenders import make
    from receval.validate import check_fraction, check_number

    def refuse(key: str, message: str) -> ConfigError:
        return ConfigError(f"protocol.{key}: {message}", parameters=[key])

    unknown = [e for e in options["experiments"] if e not in METAEVAL_EXPERIMENTS]
    if unknown or not options["experiments"]:
        what = f"{unknown[0]!r} is not an experiment" if unknown else "no experiment"
        raise refuse("experiments", f"{what}; give some of {', '.join(METAEVAL_EXPERIMENTS)}")
    if not options["systems"]:
        raise refuse("systems", "no system: give algorithm names, e.g. ['popularity', 'item-knn']")
    checks: list[tuple[str, Callable[[Any], Any], Any]] = [
        ("systems", make, options["systems"]),
        ("strengths", lambda v: check_number(v, "strength", minimum=0, maximum=1), options["strengths"]),
        ("fractions", lambda v: check_fraction(v, "fraction"), options["fractions"]),
    ]
    for key, check, values in checks:
        for value in values:
            try:
                check(value)
            except ConfigError as err:
                raise refuse(key, err.message) from None


@register_protocol(
    "metaeval",
    options={
        "k": (int, 10),
        "threshold": (float, None),
        "systems": (list, ["random", "popularity", "biases", "item-knn"]),
        "experiments": (list, list(METAEVAL_EXPERIMENTS)),
        "strengths": (list, [0.0, 0.2, 0.5]),
        "fractions": (list, [0.1, 0.3, 0.5, 0.7, 0.9]),
        "n_resamples": (int, 1000),
    },
    uses_recommenders=False,
    factory=None,
    description="meta-evaluation of metrics: swap correlation, discriminative power, robustness to incompleteness",
    check=_check_metaeval,
)
def metaeval(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """The three meta-evaluation experiments of :mod:`receval.studies.metaeval` for the config's metrics.

    The systems are the ``systems`` algorithms (default parameters) trained on the
    task's training part, ranking ``k`` items for every test user; the truth is the
    test part, the aspects the data set's.

    Returns
    -------
    TaskOutput
        ``aggregates``: the experiments' summary values (``swap_tau[<metric>,<mode>]`` ...); ``tables``: their tables,
        ``metaeval_<experiment>``.

    Examples
    --------
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "g"\\nmetrics = ["ndcg@5"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\n[recommenders.popularity]\\n'
    >>> text += '[protocol]\\nname = "metaeval"\\nsystems = ["random", "popularity"]\\n'
    >>> text += 'experiments = ["swap"]\\nk = 5\\n'
    >>> out = metaeval(*first_task(text))
    >>> sorted(out.aggregates), sorted(out.tables)
    (['swap_tau[ndcg@5,bottom-to-top]', 'swap_tau[ndcg@5,redundant]'], ['metaeval_swap', 'metaeval_swap_curves'])
    """
    import numpy as np

    from receval.errors import ConfigError
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.studies import metaeval as me

    train, test = split_for(task, dataset.data)
    if dataset.data.aspects is None:
        raise ConfigError(f"data set {task.dataset!r} has no item aspects; the meta-evaluation needs them")
    opts = task.options
    k, threshold = int(opts["k"]), task_threshold(task, dataset.data)
    users = np.unique(test.users)
    truth = test.to_csr()[users]
    train_rows = train.to_csr()[users]
    systems: dict[str, np.ndarray] = {}
    for name in opts["systems"]:
        result = evaluate_model(
            make(str(name)), train, test, list(task.metrics), k=k, threshold=threshold, seed=task.seed
        )
        if result.rankings is None:
            raise ConfigError("the meta-evaluation needs ranking metrics (e.g. ndcg@10), not only error metrics")
        systems[str(name)] = result.rankings
    common: dict[str, Any] = {"threshold": threshold, "rating_max": float(dataset.data.scale.high)}
    metrics = list(task.metrics)
    tables = {}
    aggregates: dict[str, float] = {}
    if "swap" in opts["experiments"]:
        table, curves = me.swap_correlation(metrics, truth, dataset.data.aspects, train_rows, k=k, **common)
        tables["metaeval_swap"], tables["metaeval_swap_curves"] = table, curves
        aggregates |= {f"swap_tau[{r.metric},{r.mode}]": float(r.tau) for r in table.itertuples()}
    if "discriminative" in opts["experiments"]:
        table = me.discriminative_power(
            metrics,
            systems,
            truth,
            dataset.data.aspects,
            train_rows,
            strengths=[float(s) for s in opts["strengths"]],
            n_resamples=int(opts["n_resamples"]),
            seed=task.seed,
            **common,
        )
        tables["metaeval_discriminative"] = table
        aggregates |= {f"discriminative[{r.metric},{r.test}]": float(r.share) for r in table.itertuples()}
    if "incompleteness" in opts["experiments"]:
        table = me.incompleteness(
            metrics,
            systems,
            truth,
            dataset.data.aspects,
            train_rows,
            fractions=[float(x) for x in opts["fractions"]],
            seeds=[task.seed],
            **common,
        )
        tables["metaeval_incompleteness"] = table
        tau = next(c for c in table.columns if "tau" in c and "std" not in c)
        aggregates |= {
            f"incompleteness_tau[{r['metric']},{r['fraction']:g}]": float(r[tau]) for _, r in table.iterrows()
        }
    return TaskOutput(aggregates=aggregates, tables={name: string_columns(t) for name, t in tables.items()})
