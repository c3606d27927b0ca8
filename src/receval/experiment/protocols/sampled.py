"""The ``sampled`` protocol: a recommender's full-catalogue metrics beside its sampled, uncorrected and corrected ones.

The task's split (the configuration's ``[split]``; ``method = "loo"`` holds out each
user's last rating, as NCF) is the one :func:`receval.studies.sampled.sampled_study`
uses; the task's recommender is fitted once, ``repeats`` samples of ``n`` negatives are
drawn with seeds derived from the task's seed — the same samples for every recommender
of the same data set, split and seed — and every metric of the configuration is
computed in full and estimated from each sample with each of ``corrections`` (empty:
:data:`receval.vocabulary.DEFAULT_SAMPLED_CORRECTIONS`, or ``none`` alone with popularity
sampling). Aggregates: ``<metric>|full``,
``<metric>|<estimate>`` (the mean over samples; ``sampled`` is the uncorrected value)
and ``<metric>|<estimate>|std`` (the spread over samples); the table ``sampled`` holds
every sample's value. Kendall τ between the rankings of the recommenders follows from
the aggregates of the tasks (:func:`receval.stats.significance.system_agreement`).

Examples
--------
>>> from receval.experiment.protocols import get_protocol
>>> get_protocol("sampled").options["n"]
(<class 'int'>, 100)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from receval.errors import ConfigError
from receval.experiment.ids import Task
from receval.experiment.protocols.base import PreparedDataset, TaskOutput, make_model, register_protocol, split_for

__all__: list[str] = []


def _check(opts: Mapping[str, Any]) -> None:
    """The sample's design as ``receval sampled`` checks it: counts, vocabulary words, corrections fit for it."""
    from receval.studies.sampled import check_study_design, study_corrections
    from receval.validate import check_count, check_number
    from receval.vocabulary import SAMPLING_SCHEMES, sampled_word

    for key, check in (
        ("n", lambda v: check_count(v, "protocol.n")),
        ("repeats", lambda v: check_count(v, "protocol.repeats")),
        ("exponent", lambda v: check_number(v, "protocol.exponent")),
        ("sampling", lambda v: sampled_word("protocol.sampling", v, SAMPLING_SCHEMES)),
        ("shape", lambda v: check_study_design(opts["n"], opts["repeats"], v, "protocol.shape")),
        ("corrections", lambda v: study_corrections(list(v) or None, opts["sampling"], "protocol.corrections")),
    ):
        try:
            check(opts[key])
        except ConfigError as err:
            raise ConfigError(err.message, parameters=[key]) from None


@register_protocol(
    "sampled",
    options={
        "n": (int, 100),
        "sampling": (str, "uniform"),
        "exponent": (float, 1.0),
        "shape": (str, "per-item"),
        "repeats": (int, 20),
        "corrections": (list, []),
    },
    description="full-catalogue metrics beside sampled ones (uncorrected and corrected) over repeated samples",
    check=_check,
)
def sampled(task: Task, dataset: PreparedDataset) -> TaskOutput:
    """One recommender: its full value, and per estimate its mean and spread over the samples, per metric.

    Returns
    -------
    TaskOutput
        ``aggregates``: ``<metric>|full``, ``<metric>|<estimate>`` and ``<metric>|<estimate>|std``;
        ``tables["sampled"]``: one row per metric, estimate and sample.

    Examples
    --------
    >>> from receval.experiment.grid import first_task
    >>> text = 'name = "s"\\nmetrics = ["ndcg@10"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 40, n_items = 120, n_ratings = 1200 }\\n[split]\\nmethod = "loo-random"\\n'
    >>> text += '[recommenders.popularity]\\n[protocol]\\nname = "sampled"\\nn = 20\\nrepeats = 2\\n'
    >>> text += 'corrections = ["none", "bv"]\\n'
    >>> out = sampled(*first_task(text))
    >>> sorted(out.aggregates), list(out.tables)
    (['ndcg@10|bv', 'ndcg@10|bv|std', 'ndcg@10|full', 'ndcg@10|sampled', 'ndcg@10|sampled|std'], ['sampled'])
    """
    from receval.studies.sampled import sampled_study

    opts = task.options
    model = make_model(task)  # raises unless the task names an algorithm
    assert task.algorithm is not None
    study = sampled_study(
        split_for(task, dataset.data),
        {task.recommender or task.algorithm: model},
        n=int(opts["n"]),
        sampling=str(opts["sampling"]),
        exponent=float(opts["exponent"]),
        shape=str(opts["shape"]),
        repeats=int(opts["repeats"]),
        seed=task.seed,
        metrics=list(task.metrics),
        corrections=list(opts["corrections"]) or None,
        seed_model=False,  # make_model has seeded it (or the grid fixed its seed)
    )
    frame = study.to_frame()
    aggregates = {f"{r.metric}|full": float(r.full) for r in frame.itertuples()}
    for r in frame.itertuples():
        aggregates[f"{r.metric}|{r.estimate}"] = float(r.mean)
        aggregates[f"{r.metric}|{r.estimate}|std"] = float(r.std)
    return TaskOutput(aggregates=aggregates, tables={"sampled": study.values.drop(columns="system")})
