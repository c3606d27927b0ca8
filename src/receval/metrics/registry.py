"""The metric registry: every metric receval knows, with every fact about it, and its public API.

A metric string is ``name[@k][(key=value, ...)]``: ``"ndcg@10"``, ``"mrr"``,
``"precision@10(agg=micro)"``, ``"alpha_ndcg@10(alpha=0.5)"``. :func:`parse_metric`
turns it into a :class:`Metric` (the definition plus the cutoff and parameters).

Each :class:`MetricDefinition` holds the facts other parts of receval read instead of
keeping their own: the direction (:func:`metric_direction`: higher or lower is
better), the range when bounded, the side data needed (threshold, negatives,
training ratings, aspects, predictions), the canonical name and its aliases.

Built-in metrics come from the modules imported below: :mod:`~receval.metrics.error`,
:mod:`~receval.metrics.ranking`, :mod:`~receval.metrics.beyond`,
:mod:`~receval.metrics.aspects`, :mod:`~receval.metrics.popularity`, :mod:`~receval.metrics.calibration`
and :mod:`~receval.metrics.exposure`. A new metric module defines kernels
``fn(data: MetricInput, k, **params)``, registers each with :func:`register_metric`
(its parameters and defaults in ``defaults=``) and is imported here.

A definition's function takes a :class:`MetricInput` (the ranked lists, the truth and
the optional side data, all aligned on the same user rows) and returns:

- ``kind="user"``: one float per user (NaN = the user is not scored, e.g. skipped
  because it has no relevant item), aggregated by the mean over scored users
  (macro) — or, when the definition has a ``micro`` function giving per-user
  numerators and denominators, by Σ numerator / Σ denominator with ``agg=micro``;
- ``kind="system"``: one float for the whole run (coverage, Gini, entropy …);
- ``kind="error"``: one float per user computed from rating predictions
  (:attr:`MetricInput.predictions`), aggregated over all predictions (RMSE, MAE).

Examples
--------
>>> m = parse_metric("ndcg@10(gain=exponential)")
>>> m.name, m.k, m.params["gain"], str(m)
('ndcg', 10, 'exponential', 'ndcg@10(gain=exponential)')
>>> metric_direction("rmse"), metric_direction("fp@10"), metric_direction("matthew_effect")
('lower', 'lower', 'lower')
>>> get_definition("precision").bounds
(0.0, 1.0)
>>> str(parse_metric("ndcg_cut_10")), str(parse_metric("AP@100")), get_definition("RR").name
('ndcg@10(graded=true)', 'map@100', 'mrr')
"""

from __future__ import annotations

from dataclasses import dataclass

from receval.errors import MetricError
from receval.metrics import aspects, beyond, calibration, debiased, error, exposure, popularity, ranking, trec
from receval.metrics._definition import (
    _REGISTRY,  # also re-exported for code that removes a temporary registration
    Direction,
    Kind,
    Metric,
    MetricDefinition,
    aggregate,
    available_metrics,
    get_definition,
    register_alias,
    register_metric,
    resolve_name,
)
from receval.metrics._input import MetricInput, count_rows, lookup
from receval.metrics._list import MetricList
from receval.metrics._parse import apply_convention, parse_metric, parse_metric_list

__all__ = [
    "apply_convention",
    "BUILTIN_MODULES",
    "Direction",
    "FIELD_SPELLINGS",
    "Kind",
    "LIST_ONLY",
    "Metric",
    "MetricDefinition",
    "MetricInput",
    "MetricList",
    "Measure",
    "aggregate",
    "available_metrics",
    "count_rows",
    "get_definition",
    "lookup",
    "measure",
    "metric_direction",
    "parse_metric",
    "parse_metric_list",
    "register_alias",
    "register_measure",
    "register_metric",
    "resolve_name",
]

# the built-in metric modules, imported above: importing a module registers its metrics
BUILTIN_MODULES = (error, ranking, beyond, aspects, debiased, trec, popularity, calibration, exposure)
LIST_ONLY = frozenset(name for name, definition in _REGISTRY.items() if definition.list_only)
"""The built-in metrics registered ``list_only`` (:class:`MetricDefinition`): their (naive) value reads of a listed
item only whether the user's truth rates it."""


@dataclass(frozen=True)
class Measure:
    """A quantity computed outside the metric kernels (e.g. by the cyclic simulator) and its facts."""

    name: str
    direction: Direction
    bounds: tuple[float, float] | None
    description: str


_MEASURES: dict[str, Measure] = {}


def register_measure(
    name: str, *, direction: Direction, bounds: tuple[float, float] | None = None, description: str = ""
) -> Measure:
    """Declare the facts of a quantity that is not a metric string (a simulator column, say).

    Returns
    -------
    Measure
        The declared measure (declaring the same name again replaces it).

    Examples
    --------
    >>> register_measure("example_share", direction="higher", bounds=(0, 1)).direction
    'higher'
    >>> del _MEASURES["example_share"]
    """
    if direction not in ("higher", "lower", None):
        raise MetricError(f"measure {name!r}: direction must be 'higher', 'lower' or None, got {direction!r}")
    key = name.lower()
    found = _MEASURES[key] = Measure(
        key, direction, None if bounds is None else (float(bounds[0]), float(bounds[1])), description
    )
    return found


def measure(name: str) -> Measure | None:
    """The declared :class:`Measure` called ``name``, if any.

    Returns
    -------
    Measure or None
        The measure (names are matched case-insensitively, spaces stripped); None when no measure has the name.

    Examples
    --------
    >>> measure("Recall_norm").direction, measure("n_users")
    ('higher', None)
    """
    return _MEASURES.get(name.strip().lower())


def metric_direction(metric: str | Metric) -> Direction:
    """``"higher"`` or ``"lower"``: which values of a metric string (or declared measure) are better.

    A bare name stands for the metric with its default parameters, whatever its cutoff
    (the cyclic simulator's ``recall`` column). ``None`` for a descriptive quantity
    (``gini_train``) and for text that is neither a metric string, a metric name nor a
    declared measure (a table column such as ``n_users``).

    Returns
    -------
    {"higher", "lower"} or None
        The better direction, or None as above.

    Examples
    --------
    >>> metric_direction("ndcg@10"), metric_direction("fallout@10"), metric_direction("anti_precision@5")
    ('higher', 'lower', 'lower')
    >>> metric_direction("novelty@10"), metric_direction("novelty@10(form=self_information)")
    ('lower', 'higher')
    >>> metric_direction("recall"), metric_direction("recall_norm"), metric_direction("gini_train")
    ('higher', 'higher', None)
    >>> metric_direction("n_users"), metric_direction("ndcg@0")
    (None, None)
    """
    if isinstance(metric, Metric):
        return metric.direction
    if not isinstance(metric, str):
        return None
    found = measure(metric)
    if found is not None:
        return found.direction
    try:
        return parse_metric(metric).direction
    except MetricError:
        pass
    try:
        name, preset = resolve_name(metric)
    except MetricError:
        return None
    definition = get_definition(name)
    return definition.direction_for({**definition.defaults, **preset})


# the cyclic simulator's columns that are not metric strings (receval.simulate)
register_measure(
    "recall_norm", direction="higher", bounds=(0, 1), description="true positives / the oracle's true positives"
)
register_measure(
    "fallout_norm", direction="lower", bounds=(0, 1), description="false positives / the oracle's false positives"
)
register_measure(
    "discovered", direction="higher", bounds=(0, 1), description="share of the held-out ratings recommended so far"
)


# the spellings of trec_eval, ranx and ir-measures; a library's own spelling selects its convention
# (receval.metrics.conventions). Case never matters: ir-measures' nDCG@10 is receval's ndcg@10, and
# trec_eval's nDCG is asked for by its own name, ndcg_cut_10, or by ndcg@10(convention=trec_eval).
# A metric string keeps the spelling typed (evaluation summaries are keyed by it).
FIELD_SPELLINGS: tuple[tuple[str, str, dict[str, object], str], ...] = (
    ("p", "precision", {}, "ir-measures P@k, trec_eval P_k"),
    ("r", "recall", {}, "ir-measures R@k"),
    ("ndcg_cut", "ndcg", {"convention": "trec_eval"}, "trec_eval ndcg_cut_k"),
    ("ndcg_burges", "ndcg", {"convention": "ranx", "gain": "exponential"}, "ranx ndcg_burges@k"),
    ("ap", "map", {}, "ir-measures AP, AP@k (trec_eval map, map_cut_k)"),
    ("map_cut", "map", {}, "trec_eval map_cut_k"),
    ("rr", "mrr", {}, "ir-measures RR, RR@k"),
    ("recip_rank", "mrr", {}, "trec_eval recip_rank"),
    ("hits", "tp", {"convention": "ranx"}, "ranx hits@k: mean number of positives in the top k"),
    ("success", "hit_rate", {}, "trec_eval success_k, ir-measures Success@k"),
    ("hr", "hit_rate", {}, "NCF's HR@k (hit ratio), as the sampled-metric papers write it"),
    ("rprec", "r_precision", {}, "trec_eval Rprec, ir-measures Rprec"),
    ("gauc", "auc", {"convention": "recbole"}, "RecBole GAUC: auc weighted by positives, unrated items negatives"),
    ("calibrated_recall", "recall", {"convention": "recpack", "denominator": "min"}, "RecPack CalibratedRecallK"),
    ("rbp_resid", "rbp_residual", {"convention": "trec_eval"}, "trec_eval rbp_resid (p = 0.9)"),
)
for _alias, _name, _preset, _ in FIELD_SPELLINGS:
    register_alias(_alias, _name, **_preset)
