"""The ``ope`` protocol: off-policy evaluation against the simulator's truth (:mod:`receval.studies.ope`).

One task per data set and seed, no recommender: the configuration's ``[split]`` gives the
training part (which fits the policies) and the held-out part (the rewards, 1 for a rating
≥ λ, and each user's actions); ``logging`` logs ``rounds`` decisions with propensities, every
one of ``targets`` is estimated by every estimator of :mod:`receval.stats.ope` and run
on-policy for the truth (:func:`receval.studies.ope.ope_study`). Aggregates:
``error[<estimator>]`` (mean absolute error), ``kendall_tau[<estimator>]`` (NaN with one
target), ``width[<estimator>]`` and ``coverage[<estimator>]`` of the bootstrap intervals,
and ``truth[<target>]``; the table ``ope_estimates`` holds one row per estimator and target
with the interval and the diagnostics (ESS, largest weight, overlap).

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("ope").options["logging"]
(<class 'str'>, 'egreedy:0.3')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from receval.errors import ConfigError
from receval.experiment.ids import Task
from receval.experiment.protocols.base import (
    PreparedDataset,
    TaskOutput,
    register_protocol,
    split_for,
    task_threshold,
)
from receval.vocabulary import OPE_DEFAULT_TARGETS

__all__: list[str] = []


def _check(options: Mapping[str, Any]) -> None:
    """Policies that parse, a positive ``rounds``, a non-negative ``bootstrap``, a positive ``clip``."""
    from receval.simulate.logged import POLICY_KINDS

    def refuse(key: str, message: str) -> ConfigError:
        return ConfigError(f"protocol.{key}: {message}", parameters=[key])

    targets = [str(t) for t in options["targets"]]
    if not targets:
        raise refuse("targets", "no target policy; give e.g. ['random', 'greedy']")
    if len(set(targets)) != len(targets):
        raise refuse("targets", f"target policies repeat: {targets}")
    for key, specs in (("logging", [str(options["logging"])]), ("targets", targets)):
        for spec in specs:
            kind = spec.partition("@")[0].partition(":")[0].strip()
            if kind not in POLICY_KINDS:
                raise refuse(key, f"{spec!r}: {kind!r} is not one of {', '.join(POLICY_KINDS)}")
    if options["rounds"] < 1:
        raise refuse("rounds", f"{options['rounds']!r} must be a positive integer")
    if options["bootstrap"] < 0:
        raise refuse("bootstrap", f"{options['bootstrap']!r} must be a count (0: no intervals)")
    if options["clip"] is not None and not options["clip"] > 0:
        raise refuse("clip", f"{options['clip']!r} must be a positive number")


@register_protocol(
    "ope",
    options={
        "logging": (str, "egreedy:0.3"),
        "targets": (list, list(OPE_DEFAULT_TARGETS)),
        "rounds": (int, 20000),
        "threshold": (float, None),
        "reward_model": (str, "biases"),
        "clip": (float, None),
        "bootstrap": (int, 200),
    },
    uses_recommenders=False,
    needs_metrics=False,
    factory=None,
    metric_names=tuple,
    description="off-policy estimates of target policies from a simulated log, against the simulator's truth",
    check=_check,
)
def ope(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """Log, estimate every target with every estimator, measure each estimator against the truth.

    Returns
    -------
    TaskOutput
        ``aggregates``: ``error[<estimator>]``, ``kendall_tau[<estimator>]``, ``width[<estimator>]``,
        ``coverage[<estimator>]`` and ``truth[<target>]``; ``tables["ope_estimates"]``.

    Examples
    --------
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "g"\\n[datasets.toy]\\ngenerate = { n_users = 40, n_items = 15, n_ratings = 300 }\\n'
    >>> text += '[split]\\nmethod = "holdout"\\ntest_fraction = 0.5\\n'
    >>> text += '[protocol]\\nname = "ope"\\ntargets = ["random", "greedy"]\\nrounds = 500\\nbootstrap = 10\\n'
    >>> out = ope(*first_task(text))
    >>> sorted(k for k in out.aggregates if k.startswith("error")), list(out.tables)
    (['error[dm]', 'error[dr]', 'error[dros]', 'error[ips]', 'error[snips]', 'error[switch]'], ['ope_estimates'])
    """
    from receval.studies.ope import ope_study

    opts = task.options
    train, test = split_for(task, dataset.data)
    result = ope_study(
        train,
        test,
        logging=str(opts["logging"]),
        targets=[str(t) for t in opts["targets"]],
        threshold=task_threshold(task, dataset.data),
        rounds=int(opts["rounds"]),
        seed=task.seed,
        reward_model=str(opts["reward_model"]),
        clip=None if opts["clip"] is None else float(opts["clip"]),
        n_bootstrap=int(opts["bootstrap"]),
    )
    aggregates: dict[str, float] = {}
    for name, values in (("error", result.error), ("kendall_tau", result.kendall_tau),
                         ("width", result.width), ("coverage", result.coverage), ("truth", result.truth)):  # fmt: skip
        aggregates.update({f"{name}[{k}]": float(v) for k, v in values.items()})
    frame = result.frame()
    frame["overlap"] = frame["overlap"].astype(float)
    return TaskOutput(aggregates=aggregates, tables={"ope_estimates": frame})
