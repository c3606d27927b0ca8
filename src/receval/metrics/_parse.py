"""Metric strings: ``name[@k][(key=value, ...)]`` read into a :class:`~receval.metrics.registry.Metric`.

Values are read as int, float, ``true``/``false`` or ``none``, else kept as strings;
names may be any registered alias (see :func:`~receval.metrics.registry.register_alias`),
in any case. ``convention=NAME`` presets every parameter to library NAME's
(:mod:`~receval.metrics.conventions`). trec_eval's ``name_k`` spelling (``P_10``,
``ndcg_cut_10``, and ``P.10`` as ``-m`` takes it) means ``name@k`` and, for trec_eval's own
measure names, selects trec_eval's convention; ranx's spellings read as ranx reads them:
``r-precision`` is ``r_precision`` and a ``-lN`` suffix is the relevance level
(``precision@10-l4`` = ``precision@10(threshold=4)``).

Examples
--------
>>> str(parse_metric("ndcg@10(gain=exponential)"))
'ndcg@10(gain=exponential)'
>>> parse_metric_list("ndcg@10, alpha_ndcg@10(alpha=0.5,beta=0.3),mrr")
['ndcg@10', 'alpha_ndcg@10(alpha=0.5,beta=0.3)', 'mrr']
"""

from __future__ import annotations

import re
from typing import Any

from receval.errors import MetricError
from receval.metrics._definition import (
    _REGISTRY,
    CUTOFF_LIMIT,
    MAX_CUTOFF,
    Metric,
    check_k,
    resolve_metric,
    resolve_name,
)
from receval.metrics.conventions import CONVENTION_PARAM, TREC_LEVEL_PARAMS, spelling_convention

__all__ = ["apply_convention", "parse_metric", "parse_metric_list"]

_PATTERN = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.-]*)\s*(?:@\s*([^(\s]*))?\s*(?:\((.*)\))?\s*$", re.DOTALL)
_TREC_CUTOFF = re.compile(r"^([A-Za-z][A-Za-z0-9_]*?)[_.](\d+)$")  # trec_eval's P_10, ndcg_cut_10, P.10
_TREC_LEVEL = re.compile(r"^([A-Za-z][A-Za-z0-9_]*?)_(\d+\.\d+)$")  # trec_eval's iprec_at_recall_0.10
_RANX_LEVEL = re.compile(r"^([^()]*?)-l(\d+)\s*$")  # ranx's relevance level: ndcg@10-l4
_TREC_NUMBER = re.compile(r"^([A-Za-z][A-Za-z0-9_]*?)[_.]([-+.]?\d\S*)$")  # P_-1, P_1e3: a number that is no cutoff


def parse_metric(text: str | Metric) -> Metric:
    """Parse ``name[@k][(key=value,...)]`` into a :class:`Metric`.

    >>> m = parse_metric("ndcg@10(gain=exponential)")
    >>> m.name, m.k, m.params["gain"], str(m)
    ('ndcg', 10, 'exponential', 'ndcg@10(gain=exponential)')
    >>> parse_metric("mrr").k is None
    True
    >>> parse_metric("fallout@10(negative_threshold=3)").params["negative_threshold"]
    3
    >>> parse_metric("precision@0")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: metric 'precision@0': the cutoff k must be a positive integer, got '0'
    >>> str(parse_metric("P_10")), str(parse_metric("nDCG@10")), str(parse_metric("hits@5"))
    ('precision@10', 'ndcg@10', 'tp@5(agg=macro)')
    >>> str(parse_metric("ndcg_cut_10")), parse_metric("P.10").convention
    ('ndcg@10(graded=true)', 'trec_eval')
    >>> str(parse_metric("iprec_at_recall_0.10"))
    'iprec_at_recall(recall=0.1)'
    >>> str(parse_metric("precision@10(convention=LensKit)"))
    'precision@10(denominator=list,empty_list=skip)'
    >>> str(parse_metric("r-precision")), str(parse_metric("precision@10-l4"))
    ('r_precision', 'precision@10(threshold=4)')
    >>> parse_metric("precision@10(threshold=4,threshold=1)")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: metric 'precision@10(threshold=4,threshold=1)': parameter 'threshold' is given twice ...
    >>> parse_metric("nope@3")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: unknown metric 'nope'...
    >>> parse_metric("P_-1")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: metric 'P_-1': the cutoff k must be a positive integer, got '-1'
    >>> parse_metric("ndcg@99999999999999999999")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: metric 'ndcg@99999999999999999999': the cutoff k must be at most 2^63 - 1 ...
    """
    if isinstance(text, Metric):
        return text
    if not isinstance(text, str):
        raise MetricError(f"a metric is a string like 'ndcg@10' or a Metric, got {type(text).__name__}")
    ranx_level = _RANX_LEVEL.match(text)
    match = _PATTERN.match(ranx_level.group(1) if ranx_level else text)
    if not match:
        raise MetricError(f"cannot read metric {text!r}; write name@k or name@k(key=value,...), e.g. 'ndcg@10'")
    typed, k_text, param_text = match.groups()
    name = typed.replace("-", "_")  # ranx's r-precision
    library = None
    suffix: dict[str, float] = {}
    trec = _TREC_CUTOFF.match(name) if k_text is None else None
    level = _TREC_LEVEL.match(name)
    if trec is not None and not _known(name) and _known(trec.group(1)):
        name, k_text = trec.groups()
        library = spelling_convention(f"{name}_k")
    elif level is not None and level.group(1).lower() in TREC_LEVEL_PARAMS:
        name = level.group(1)
        suffix[TREC_LEVEL_PARAMS[name.lower()]] = float(level.group(2))
        library = "trec_eval"
    try:
        canonical, preset = resolve_name(name)
    except MetricError as exc:
        raise _unknown(typed, name, text.strip(), exc) from None
    definition = _REGISTRY[canonical]
    k = None
    if k_text is not None:
        if not re.fullmatch(r"\d+", k_text) or int(k_text) <= 0:
            raise MetricError(f"metric {text.strip()!r}: the cutoff k must be a positive integer, got {k_text!r}")
        if int(k_text) > MAX_CUTOFF:  # quoted as typed, before check_k reads the number
            raise MetricError(f"metric {text.strip()!r}: {CUTOFF_LIMIT}, got {k_text!r}")
        k = int(k_text)
    check_k(definition, k, text.strip())
    params: dict[str, Any] = {**preset, **suffix}
    if library is not None:
        params[CONVENTION_PARAM] = library
    if ranx_level is not None:
        params["threshold"] = int(ranx_level.group(2))
    given: dict[str, str] = {}  # parameter -> its key=value in the string (an alias's preset may be overridden)
    if param_text is not None and param_text.strip():
        for part in param_text.split(","):
            if "=" not in part:
                raise MetricError(f"metric {text.strip()!r}: parameter {part.strip()!r} is not key=value")
            key, value = (s.strip() for s in part.split("=", 1))
            if key in given:
                raise MetricError(
                    f"metric {text.strip()!r}: parameter {key!r} is given twice ({given[key]} and {part.strip()}); "
                    "give it once"
                )
            given[key] = part.strip()
            params[key] = _parse_value(value)
    return resolve_metric(definition, k, params, text.strip())


def _unknown(typed: str, name: str, label: str, exc: MetricError) -> MetricError:
    """The error ``exc`` for a name no metric has, quoting the name as typed (``name`` is it with ``-`` read as
    ``_``): a known measure with a number that is no cutoff (``P_-1``, ``P_1e3``) says so."""
    number = _TREC_NUMBER.match(typed)
    if number is not None and _known(number.group(1)):
        prefix, suffix = number.groups()
        if prefix.lower() in TREC_LEVEL_PARAMS:
            what = f"the {TREC_LEVEL_PARAMS[prefix.lower()]} level must be a number like 0.10"
        else:
            what = "the cutoff k must be a positive integer"
        return MetricError(f"metric {label!r}: {what}, got {suffix!r}")
    return MetricError(str(exc).replace(repr(name), repr(typed), 1))


def _known(name: str) -> bool:
    try:
        resolve_name(name)
    except MetricError:
        return False
    return True


def parse_metric_list(text: str) -> list[str]:
    """Split a comma-separated list of metric strings, keeping commas inside parentheses.

    >>> parse_metric_list("ndcg@10, alpha_ndcg@10(alpha=0.5,beta=0.3),mrr")
    ['ndcg@10', 'alpha_ndcg@10(alpha=0.5,beta=0.3)', 'mrr']
    """
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        depth += (ch == "(") - (ch == ")")
        current.append(ch)
    out.append("".join(current).strip())
    return [m for m in out if m]


def _parse_value(value: str) -> Any:
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value.strip("'\"")


def apply_convention(metric: str | Metric, name: str | None) -> Metric:
    """``metric`` with library ``name``'s preset applied (``None``: unchanged).

    Parameters given explicitly in the metric string, and a convention named there, are
    kept: ``apply_convention("ndcg@10(convention=ranx)", "trec_eval")`` stays ranx's.

    >>> str(apply_convention("recall@5", "lenskit")), str(apply_convention("recall@5", None))
    ('recall@5(denominator=min)', 'recall@5')
    >>> str(apply_convention("ndcg@10(convention=ranx)", "trec_eval"))
    'ndcg@10'
    """
    parsed = parse_metric(metric)
    if name is None or parsed.convention is not None:
        return parsed
    given = {key: parsed.params[key] for key in parsed.explicit}
    label = str(metric) if isinstance(metric, str) else str(parsed)
    return resolve_metric(parsed.definition, parsed.k, {**given, CONVENTION_PARAM: name}, label)
