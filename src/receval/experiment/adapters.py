"""Protocols beyond one-shot, each a small adapter over the library's entry point.

Importing this module registers them in :data:`receval.experiment.protocols.PROTOCOLS`.

- ``cyclic``: :func:`receval.simulate.simulate` on the task's split; the aggregates
  are the metrics at the last round, the whole trajectory goes to ``trajectories``.
  ``preset`` (``standard``, ``cyclorec`` or ``thesis``) sets the models' parameters and
  the defaults of ``refit_every`` and ``tau`` (Kendall's τ variant, ``a`` or ``b``, that
  ``receval results --best-per-algorithm`` uses) from
  :data:`receval.recommenders.registry.SIMULATION_PRESETS`; the split is the
  configuration's ``[split]`` (the thesis' code holds out 20% for test).
- ``coherence-split``: :func:`receval.studies.partitions.coherence_split_experiment`
  for one recommender (it runs its own per-user k-fold); the aggregates are the five
  models' relative RMSE per ``p`` (``All-Easy(p=0.1)`` ...), the tables
  ``coherence`` (the paper's Table 6 rows) and ``coherence_rmse`` (absolute RMSE).

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("cyclic").options["rounds"]
(<class 'int'>, 500)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from receval.experiment.ids import Task
from receval.experiment.protocols import (
    PreparedDataset,
    TaskOutput,
    make_model,
    register_protocol,
    split_for,
    task_threshold,
)

__all__: list[str] = []


def _simulate_metrics() -> tuple[str, ...]:
    from receval.simulate import METRICS

    return METRICS


def _check_cyclic(options: Mapping[str, Any]) -> None:
    """The cyclic protocol's words: ``preset``, ``tau``, ``order``, ``updates`` and ``unknown``."""
    from receval.errors import ConfigError
    from receval.recommenders.registry import SIMULATION_PRESETS
    from receval.simulate.core import check_loop_options
    from receval.stats.agreement import TAU_VARIANTS

    preset, tau, unknown = options["preset"], options["tau"], options["unknown"]
    if preset not in SIMULATION_PRESETS:
        raise ConfigError(f"protocol.preset {preset!r} is not one of {', '.join(SIMULATION_PRESETS)}",
                          parameters=["preset"])  # fmt: skip
    if tau is not None and tau not in TAU_VARIANTS:
        raise ConfigError(f"protocol.tau {tau!r} is not one of {', '.join(TAU_VARIANTS)} (Kendall's τ-a or τ-b)",
                          parameters=["tau"])  # fmt: skip
    if unknown not in ("model", "failure", "ignore"):
        raise ConfigError(f"protocol.unknown {unknown!r} is not one of model (the model's own), failure, ignore",
                          parameters=["unknown"])  # fmt: skip
    check_loop_options(options["order"], options["updates"], None)


@register_protocol(
    "cyclic",
    options={
        "rounds": (int, 500),
        "threshold": (float, None),
        "n_per_round": (int, 1),
        "order": (str, "random"),
        "updates": (str, "sequential"),
        "allow_repeats": (bool, False),
        "exclude_train": (bool, True),
        "unknown": (str, "model"),
        "preset": (str, "standard"),
        "refit_every": (int, None),
        "tau": (str, None),
    },
    needs_metrics=False,
    metric_names=_simulate_metrics,
    check=_check_cyclic,
    description="cyclic (interactive) simulation: one recommendation per user and round, feedback from the test part",
)
def cyclic(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """Simulate ``rounds`` rounds; aggregates at the last round, the trajectory per round.

    Returns
    -------
    TaskOutput
        ``aggregates``: the configuration's metrics (all of the simulator's without any) at the last round;
        ``tables["trajectories"]``: one row per round.

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> from receval.experiment.datasets import prepare_dataset
    >>> from receval.experiment.grid import expand
    >>> text = 'name = "g"\\nmetrics = ["recall"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\nthreshold = 4\\n'
    >>> text += '[recommenders.popularity]\\n'
    >>> text += '[protocol]\\nname = "cyclic"\\nrounds = 3\\n'
    >>> cfg = parse_config(text)
    >>> out = cyclic(expand(cfg)[0], prepare_dataset(cfg.datasets["toy"]))
    >>> list(out.aggregates), out.tables["trajectories"]["round"].tolist()
    (['recall'], [1, 2, 3])
    """
    from receval.simulate import simulate

    train, test = split_for(task, dataset.data)
    opts = dict(task.options) | {"threshold": task_threshold(task, dataset.data)}
    unknown = opts.pop("unknown")
    opts.pop("tau")  # an option of the selection across configurations, not of one run
    traj = simulate(
        make_model(task),
        train,
        test,
        unknown=None if unknown == "model" else unknown,
        seed=task.seed,
        **opts,
    )
    final = traj.final()
    wanted = task.metrics or tuple(final)
    return TaskOutput(
        aggregates={m: final[m] for m in wanted},
        tables={"trajectories": traj.table.reset_index(drop=True)},
    )


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
    >>> from receval.experiment.config import parse_config
    >>> from receval.experiment.datasets import prepare_dataset
    >>> from receval.experiment.grid import expand
    >>> text = 'name = "g"\\nmetrics = []\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\n[recommenders.biases]\\n'
    >>> text += '[protocol]\\nname = "coherence-split"\\nps = [0.5]\\nfolds = 2\\n'
    >>> cfg = parse_config(text)
    >>> out = coherence_split(expand(cfg)[0], prepare_dataset(cfg.datasets["toy"]))
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
        tables={"coherence": _plain(table), "coherence_rmse": _plain(result.rmse.reset_index())},
    )


def _plain(frame: Any) -> Any:
    """Columns with string names (Parquet needs them) and the recommender column as text."""
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    return frame


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
    >>> from receval.experiment.config import parse_config
    >>> from receval.experiment.datasets import prepare_dataset
    >>> from receval.experiment.grid import expand
    >>> text = 'name = "g"\\nmetrics = ["ndcg@5"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\n[recommenders.popularity]\\n'
    >>> text += '[protocol]\\nname = "metaeval"\\nsystems = ["random", "popularity"]\\n'
    >>> text += 'experiments = ["swap"]\\nk = 5\\n'
    >>> cfg = parse_config(text)
    >>> out = metaeval(expand(cfg)[0], prepare_dataset(cfg.datasets["toy"]))
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
    return TaskOutput(aggregates=aggregates, tables={name: _plain(t) for name, t in tables.items()})
