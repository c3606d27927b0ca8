"""Protocols beyond one-shot, each a small adapter over the library's entry point.

Importing this module registers them in :data:`receval.experiment.protocols.PROTOCOLS`.

- ``cyclic``: :func:`receval.simulate.simulate` on the task's split; the aggregates
  are the metrics at the last round, the whole trajectory goes to ``trajectories``.

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("cyclic").options["rounds"]
(<class 'int'>, 500)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from receval.experiment.grid import Task
from receval.experiment.protocols import PreparedDataset, TaskOutput, make_model, register_protocol, split_for

__all__: list[str] = []


def _make_online(algorithm: str, params: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
    from receval.recommenders.bandits import make_online

    return make_online(algorithm, preset=str(options.get("preset", "standard")), **params)


def _simulate_metrics() -> tuple[str, ...]:
    from receval.simulate import METRICS

    return METRICS


@register_protocol(
    "cyclic",
    options={
        "rounds": (int, 500),
        "threshold": (float, 4.0),
        "n_per_round": (int, 1),
        "order": (str, "random"),
        "updates": (str, "sequential"),
        "allow_repeats": (bool, False),
        "exclude_train": (bool, True),
        "unknown": (str, "model"),
        "preset": (str, "standard"),
        "refit_every": (int, 10),
    },
    needs_metrics=False,
    factory=_make_online,
    metric_names=_simulate_metrics,
    description="cyclic (interactive) simulation: one recommendation per user and round, feedback from the test part",
)
def cyclic(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """Simulate ``rounds`` rounds; aggregates at the last round, the trajectory per round."""
    from receval.simulate import simulate

    train, test = split_for(task, dataset.data)
    opts = dict(task.options)
    unknown = opts.pop("unknown")
    traj = simulate(
        make_model(task),
        train,
        test,
        unknown=None if unknown == "model" else unknown,
        seed=task.seed,
        **{k: v for k, v in opts.items() if k != "preset"},
    )
    final = traj.final()
    wanted = task.metrics or tuple(final)
    return TaskOutput(
        aggregates={m: final[m] for m in wanted},
        tables={"trajectories": traj.table.reset_index(drop=True)},
    )
