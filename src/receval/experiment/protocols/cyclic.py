"""The ``cyclic`` protocol: :func:`receval.simulate.simulate` on the task's split in the experiment runner.

The aggregates are the metrics at the last round, the whole trajectory goes to
``trajectories``. ``preset`` (``standard``, ``cyclorec`` or ``thesis``) sets the models'
parameters and the defaults of ``refit_every`` and ``tau`` (Kendall's τ variant, ``a`` or
``b``, that ``receval results --best-per-algorithm`` uses) from
:data:`receval.recommenders.registry.SIMULATION_PRESETS`; the split is the
configuration's ``[split]`` (the thesis' code holds out 20% for test).

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("cyclic").options["rounds"]
(<class 'int'>, 500)
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
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "g"\\nmetrics = ["recall"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\nthreshold = 4\\n'
    >>> text += '[recommenders.popularity]\\n'
    >>> text += '[protocol]\\nname = "cyclic"\\nrounds = 3\\n'
    >>> out = cyclic(*first_task(text))
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
