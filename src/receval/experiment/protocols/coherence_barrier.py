"""The ``coherence-barrier`` protocol: the coherence–barrier validation table in the experiment runner.

One task per data set and seed: :func:`receval.stats.coherence.barrier_validation` on the
whole data set (no split, no recommender), which needs repeated ratings of (user, item)
pairs. It is the validation of Said & Bellogín (UMUAI 2018, Table 2): the Spearman and
Pearson correlation of each coherence function (``gammas``, Table 1's over item attributes
and Eq. 8's ``barrier`` over the repeated ratings) and of the baselines ``random`` (drawn
with the task's seed), ``n_ratings`` and ``mean_rating`` with the per-user magic barrier
(``ddof`` 0: the paper's ``1/m``). Aggregates: ``spearman[<predictor>]``,
``pearson[<predictor>]``, ``barrier`` (the system's) and ``n_barrier_users``; the table
``coherence_barrier`` holds one row per predictor with the p-values and user counts.

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("coherence-barrier").options["keep"]
(<class 'str'>, 'first')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from receval.errors import ConfigError
from receval.experiment.ids import Task
from receval.experiment.protocols.base import PreparedDataset, TaskOutput, register_protocol
from receval.stats.coherence import ALL_GAMMAS, KEEPS

__all__: list[str] = []


def _check(opts: Mapping[str, Any]) -> None:
    """``keep`` a word of :data:`~receval.stats.coherence.KEEPS`, ``ddof`` 0 or 1, ``gammas`` coherence functions."""
    if opts["keep"] not in KEEPS:
        raise ConfigError(f"protocol.keep = {opts['keep']!r}: use one of {', '.join(KEEPS)}", parameters=["keep"])
    if opts["ddof"] not in (0, 1) or isinstance(opts["ddof"], bool):
        raise ConfigError(
            f"protocol.ddof = {opts['ddof']!r}: use 0 (the paper's 1/m) or 1 (unbiased 1/(m-1))", parameters=["ddof"]
        )
    unknown = [g for g in opts["gammas"] if g not in ALL_GAMMAS]
    if unknown or not opts["gammas"]:
        raise ConfigError(
            f"protocol.gammas = {list(opts['gammas'])!r}: give coherence functions of {', '.join(ALL_GAMMAS)}",
            parameters=["gammas"],
        )


@register_protocol(
    "coherence-barrier",
    options={"gammas": (list, list(ALL_GAMMAS)), "keep": (str, "first"), "ddof": (int, 0)},
    uses_recommenders=False,
    uses_split=False,
    needs_metrics=False,
    factory=None,
    metric_names=tuple,
    description="correlation of each coherence function and the baselines with the per-user magic barrier "
    "(Said & Bellogín, UMUAI 2018, Table 2); needs repeated ratings",
    check=_check,
)
def coherence_barrier(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """The validation table of the task's data set; its correlations as aggregates.

    Returns
    -------
    TaskOutput
        ``aggregates``: ``spearman[<predictor>]`` and ``pearson[<predictor>]`` for each of ``gammas`` and the
        baselines (NaN where undefined), ``barrier`` and ``n_barrier_users``; ``tables["coherence_barrier"]``.

    Examples
    --------
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "g"\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 40, n_items = 30, n_ratings = 500, n_aspects = 4, reratings = 2 }\\n'
    >>> text += '[protocol]\\nname = "coherence-barrier"\\ngammas = ["wstd", "barrier"]\\n'
    >>> out = coherence_barrier(*first_task(text))
    >>> sorted(k for k in out.aggregates if k.startswith("spearman"))[:3], list(out.tables)
    (['spearman[barrier]', 'spearman[mean_rating]', 'spearman[n_ratings]'], ['coherence_barrier'])
    """
    from receval.stats.coherence import barrier_validation

    opts = task.options
    _check(opts)
    keep = next(k for k in KEEPS if k == opts["keep"])
    gammas = [str(g) for g in opts["gammas"]]
    table = barrier_validation(
        dataset.data, gammas=gammas, keep=keep, ddof=1 if opts["ddof"] == 1 else 0, seed=task.seed
    )
    aggregates: dict[str, float] = {}
    for name, row in table.iterrows():
        aggregates[f"spearman[{name}]"] = float(row["spearman"])
        aggregates[f"pearson[{name}]"] = float(row["pearson"])
    barrier = table.attrs["barrier"]
    aggregates["barrier"] = float(barrier["system"])
    aggregates["n_barrier_users"] = float(barrier["n_users"])
    frame = table.reset_index()
    frame.attrs = {}  # the barrier's summary is in the aggregates; Parquet keeps no attrs
    return TaskOutput(aggregates=aggregates, tables={"coherence_barrier": frame})
