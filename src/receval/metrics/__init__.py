"""Metrics: per-user kernels over ranked lists and truth, a registry of metric strings.

Ranked lists are an int array ``rankings`` (n_users, k) of item indices padded with
-1; the truth is a users x items CSR of ratings. Every metric returns one value per
user (or one per run for system-level metrics); aggregation is separate and explicit.
Modules: :mod:`~receval.metrics.error` (RMSE, MAE), :mod:`~receval.metrics.ranking`
(precision, recall, nDCG, MAP, MRR, hit rate, anti-metrics, TP/FP/TN/FN),
:mod:`~receval.metrics.beyond` (coverage, entropy, Gini, diversity, novelty,
serendipity), :mod:`~receval.metrics.aspects` (α-nDCG, αβ-nDCG and the intent-aware
family), :mod:`~receval.metrics.popularity` (ARP, APLT, ACLT, PopREO, PopRSP, ΔGAP),
:mod:`~receval.metrics.calibration` (Steck's miscalibration) and :mod:`~receval.metrics.exposure`
(expected exposure, AWRF). :class:`MetricList` is a list of metric strings read once (at the boundary of an
evaluation, and passed down); :func:`aggregate` is the one rule that makes per-user values a
metric's value. :mod:`~receval.metrics.registry` holds every fact about each metric (direction,
range, side data needed, aliases); other modules add metrics with :func:`register_metric`.

Examples
--------
>>> from receval.metrics import parse_metric
>>> str(parse_metric("ndcg@10(gain=exponential)"))
'ndcg@10(gain=exponential)'
"""

from receval.metrics.registry import (
    Metric,
    MetricDefinition,
    MetricInput,
    MetricList,
    aggregate,
    apply_convention,
    available_metrics,
    get_definition,
    metric_direction,
    parse_metric,
    parse_metric_list,
    register_alias,
    register_metric,
)

__all__ = [
    "apply_convention",
    "Metric",
    "MetricDefinition",
    "MetricInput",
    "MetricList",
    "aggregate",
    "available_metrics",
    "get_definition",
    "metric_direction",
    "parse_metric",
    "parse_metric_list",
    "register_alias",
    "register_metric",
]
