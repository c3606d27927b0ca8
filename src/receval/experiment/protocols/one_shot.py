"""The ``one-shot`` protocol: split, fit, recommend, evaluate — :func:`receval.evaluate_model` in the runner.

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("one-shot").options["cold_start"]
(<class 'str'>, 'empty')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from receval.experiment.protocols.base import (
    PreparedDataset,
    TaskOutput,
    long_per_user,
    make_model,
    register_protocol,
    split_for,
    task_threshold,
)
from receval.vocabulary import COLD_START_DEFAULT

if TYPE_CHECKING:
    from receval.data.interactions import Interactions
    from receval.experiment.ids import Task

__all__: list[str] = []


@register_protocol(
    "one-shot",
    options={
        "k": (int, 10),
        "exclude_train": (bool, True),
        "threshold": (float, None),
        "cold_start": (str, COLD_START_DEFAULT),
    },
    description="train on the split's training part, rank k items per test user, evaluate on the test part",
)
def one_shot(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """One-shot evaluation: split, fit, recommend top-k for every test user, evaluate.

    :func:`receval.evaluation.evaluate_model` applies the protocol's rules; error metrics
    (RMSE, MAE) are NaN for models without ``predict`` (pure rankers). The model takes
    the task's seed unless the grid fixes one. ``cold_start`` (``empty``, ``exclude`` or
    ``fallback``) treats test users without a training rating as ``receval evaluate
    --cold-start`` does (:mod:`receval.cold_start`). With the configuration's ``groups``, the
    ``groups`` table holds every metric's gap between the user groups
    (:func:`receval.stats.groups.group_gaps_frame`; a metric whose gap is undefined on the
    task's test users is left out).
    """
    from receval.evaluation import evaluate, evaluate_model

    train, test = split_for(task, dataset.data)
    opts, threshold = task.options, task_threshold(task, dataset.data)
    result = evaluate_model(
        make_model(task),
        train,
        test,
        list(task.metrics),
        k=int(opts["k"]),
        threshold=threshold,
        seed=task.seed,
        exclude_train=bool(opts["exclude_train"]),
        seed_model=False,  # make_model has seeded it
        cold_start=opts["cold_start"],
    )
    skipped = result.conventions.not_applicable or ()  # the metrics evaluate_model could not compute
    not_applicable = set(skipped)
    metrics = [m for m in task.metrics if m not in not_applicable]
    users = test.user_index(result.per_user["user"].to_numpy())  # the rows of result.rankings

    def wide(truth: Interactions) -> pd.DataFrame:
        """The per-user values of the same lists and predictions on a slice of the test data."""
        preds = result.predictions
        if preds is not None:  # only the slice's pairs
            keys = pd.MultiIndex.from_arrays([truth.user_ids[truth.users], truth.item_ids[truth.items]])
            preds = preds[pd.MultiIndex.from_frame(preds[["user", "item"]]).isin(keys)]
        per_user = evaluate(
            result.rankings, truth, metrics, train=train, threshold=threshold, users=users, predictions=preds,
            cold_start=opts["cold_start"],
        ).per_user  # fmt: skip
        index = truth.user_index(per_user["user"].to_numpy())
        return per_user.drop(columns="user").set_index(pd.Index(index, name="user_index"))

    per_user = result.per_user.drop(columns=sorted(not_applicable))
    out = TaskOutput(
        aggregates={m: float(result.summary[m]) for m in task.metrics},  # NaN: the metric does not apply
        per_user=long_per_user(per_user.drop(columns="user"), users, dataset.data.user_ids),
    )
    conv = result.conventions  # the cold users and what the policy did, for every task
    out.tables["cold_start"] = pd.DataFrame(
        {
            "cold_start": [conv.cold_start],
            "users_evaluated": [conv.users_evaluated],
            "users_cold": pd.array([conv.users_cold], dtype="Int64"),
            "users_cold_without_list": pd.array([conv.users_cold_without_list], dtype="Int64"),
        }
    )
    if dataset.user_groups is not None:  # the configuration's groups: every metric's gap, Holm across the metrics
        from receval.stats.groups import group_gaps, group_gaps_frame

        gaps = group_gaps(per_user, dataset.user_groups, test=dataset.group_test, seed=task.seed,
                          skip_undefined=True)  # fmt: skip
        out.tables["groups"] = group_gaps_frame(gaps)
    if task.slices:
        from receval.studies.slicing import evaluate_slices

        out.tables["slices"] = evaluate_slices(wide, train, test, task.slices, user_features=dataset.user_features)
    return out
