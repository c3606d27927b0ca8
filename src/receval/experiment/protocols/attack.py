"""The ``attack`` protocol: shilling attack × size × recommender grids in the experiment runner.

A task takes its split's training part, attacks ``n_targets`` mid-popularity target
items (:func:`receval.studies.attacks.choose_targets`, or the ``targets`` given as
original ids), each on its own, with ``attack`` at ``size`` and ``filler``, fits the
task's recommender on the clean and on each attacked training set, and reports the
means over targets of :func:`receval.studies.attacks.attack_effect` as aggregates:
``prediction_shift``, ``hit_ratio_before``, ``hit_ratio_after``, ``rank_before``,
``rank_after``, ``rank_shift`` and, for each metric of the configuration,
``<metric>_before``, ``<metric>_after`` and ``<metric>_change`` on the test part. The
per-target rows go to the table ``attack``. Options given as lists (``size = [0.01,
0.05]``, ``attack = ["average", "random"]``) are grid axes.

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("attack").options["size"]
(<class 'float'>, 0.05)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

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


def _check(options: Mapping[str, Any]) -> None:
    """``attack`` and ``intent`` (``default``: the attack's own) as :func:`~receval.studies.attacks.check_attack`."""
    from receval.studies.attacks import check_attack

    check_attack(options["attack"], None if options["intent"] == "default" else options["intent"])


@register_protocol(
    "attack",
    options={
        "attack": (str, "average"),
        "size": (float, 0.05),
        "intent": (str, "default"),
        "filler": (float, 0.05),
        "n_targets": (int, 5),
        "targets": (list, []),
        "k": (int, 10),
        "threshold": (float, None),
    },
    needs_metrics=False,
    description="shilling attack on the training part: prediction shift, hit ratio, rank and metric change",
    check=_check,
)
def attack(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """Attack each target on its own; aggregates are the means over targets.

    Returns
    -------
    TaskOutput
        ``aggregates``: the means over targets (``prediction_shift``, ``hit_ratio_before``/``_after``, ``n_fake``,
        each metric's ``_before``/``_after`` ...); ``tables["attack"]``: one row per target.

    Examples
    --------
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "g"\\nmetrics = ["ndcg@5"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\n[recommenders.popularity]\\n'
    >>> out = attack(*first_task(text + '[protocol]\\nname = "attack"\\nn_targets = 1\\n'))
    >>> {"ndcg@5_before", "ndcg@5_after", "hit_ratio_after"} <= set(out.aggregates), len(out.tables["attack"])
    (True, 1)
    """
    from receval.studies.attacks import attack_effect, choose_targets, inject

    train, test = split_for(task, dataset.data)
    opts = task.options
    targets = list(opts["targets"]) or choose_targets(train, int(opts["n_targets"]), seed=task.seed).tolist()
    intent = None if opts["intent"] == "default" else opts["intent"]
    before = make_model(task).fit(train)
    rows = []
    for index, target in enumerate(targets):
        result = inject(
            train,
            opts["attack"],
            [target],
            intent=intent,
            size=float(opts["size"]),
            filler=float(opts["filler"]),
            seed=np.random.default_rng([task.seed, index]),
        )
        after = make_model(task).fit(result.data)
        effect = attack_effect(
            before,
            after,
            train,
            result,
            k=int(opts["k"]),
            test=test,
            metrics=list(task.metrics),
            threshold=task_threshold(task, dataset.data),
            seed=task.seed,
        )
        rows.append({"target": str(target), "intent": result.intent, "n_fake": len(result.fake_users), **effect})
    table = pd.DataFrame(rows)
    numeric = [c for c in table.columns if c not in ("target", "intent", "shift_kind")]
    aggregates = {c: float(table[c].astype(float).mean()) for c in numeric}
    return TaskOutput(aggregates=aggregates, tables={"attack": table})
