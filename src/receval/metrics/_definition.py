"""What a metric is: its definition (every fact about it), a resolved :class:`Metric`, the table of names.

A :class:`MetricDefinition` holds the function and every fact the rest of the
package reads about a metric: its direction (higher or lower is better), its range
when bounded, the side data it needs, how it aggregates, its accepted parameters,
its canonical name and its aliases. :func:`register_metric` is the decorator metric
modules use to add one; :func:`register_alias` adds another spelling (with preset
parameters when the spelling implies a convention).

Examples
--------
>>> d = get_definition("fallout")
>>> d.name, d.direction, d.bounds, d.needs_negatives
('fallout', 'lower', (0.0, 1.0), True)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.errors import MetricError, ReceValError
from receval.metrics.conventions import CONVENTION_PARAM, LIBRARIES, convention_name, preset_params
from receval.vocabulary import (
    SAMPLE_SHAPES,
    SAMPLED_CORRECTIONS,
    SAMPLING_SCHEMES,
    UNIFORM_ONLY_CORRECTIONS,
    sampled_word,
)

if TYPE_CHECKING:
    from receval.metrics._input import MetricInput

__all__ = [
    "aggregate",
    "Direction",
    "Kind",
    "Metric",
    "MetricDefinition",
    "available_metrics",
    "get_definition",
    "resolve_metric",
    "register_alias",
    "register_metric",
    "resolve_name",
]

Kind = Literal["user", "system", "error"]
Direction = Literal["higher", "lower"] | None
_DIRECTIONS = ("higher", "lower", None)
_REGISTRY: dict[str, MetricDefinition] = {}
# alias (lower case: a letter's case never changes a number) -> (canonical name, parameters the alias presets)
_ALIASES: dict[str, tuple[str, Mapping[str, Any]]] = {}
# debiased estimation (estimator=ips, propensity=popularity ...) of per-user and error metrics: the parameters
# every such metric accepts, with their defaults; receval.metrics.debiased computes them
DEBIAS_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"estimator": "naive", "propensity": "auto", "n_strata": 2, "sample": 0.5, "n_samples": 10, "sample_seed": 0}
)
DEBIAS_PARAMS = frozenset(DEBIAS_DEFAULTS)
# the values of the convention parameters the debiased estimators compute (receval.metrics.debiased.ht_parts);
# with an estimator, any other value is refused rather than read as the default
DEBIAS_SUPPORTS: Mapping[str, Mapping[str, tuple[Any, ...]]] = MappingProxyType(
    {
        "precision": {"denominator": ("k", "list"), "empty_list": ("zero",)},
        "recall": {"denominator": ("all",), "empty_list": ("zero",)},
        "hit_rate": {"empty_list": ("zero",)},
        "map": {"denominator": ("all", "min"), "average": ("positives",), "empty_list": ("zero",)},
        "ndcg": {"graded": (False,), "discount": ("log2",), "ideal": ("truth",), "empty_list": ("zero",)},
    }
)
# sampled evaluation (ndcg@10(sampled=100,correction=bv)): the metric of each held-out item ranked against N
# sampled negatives instead of the whole catalogue, computed by receval.evaluation.sampled from a model's scores.
# SAMPLED_PARAM carries N; these are the other parameters every sampled metric has, with their defaults
# (exponent: popularity ** exponent; gamma: the bias-variance estimator's trade-off, None = the estimator's own)
SAMPLED_PARAM = "sampled"
SAMPLED_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "sampling": SAMPLING_SCHEMES[0],
        "exponent": 1.0,
        "shape": SAMPLE_SHAPES[0],
        "correction": SAMPLED_CORRECTIONS[0],
        "gamma": None,
    }
)
# the metrics with a sampled form -> the name receval.stats.sampled.rank_metric computes it by (with one relevant
# item per ranked list, hit rate is recall)
SAMPLED_METRICS: Mapping[str, str] = MappingProxyType(
    {"recall": "recall", "hit_rate": "recall", "precision": "precision", "ndcg": "ndcg", "mrr": "mrr",
     "map": "ap", "auc": "auc"}
)  # fmt: skip
# the sampled parameters a library's convention presets: RecBole's uni100 ranks all of a user's positives with the
# pooled negatives in one list (receval.stats.sampled.pooled_ranks), RecBole's eval_args mode uni100
_SAMPLED_PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType({"recbole": {"shape": SAMPLE_SHAPES[2]}})
# the spelling candidates=sampled: sampled negatives, NCF's (and RecBole's uni100) 100 of them
_CANDIDATES = {"all": None, "sampled": 100}
# the only other parameter a sampled metric reads: which test ratings are held-out positives
_SAMPLED_KEEPS = frozenset({"threshold"})
# their entry points, registered by receval.metrics.debiased where they are defined; the package
# receval.metrics imports it (registry.BUILTIN_MODULES) before any of its modules can be used
_ESTIMATION: dict[str, Callable[..., Any]] = {}


@dataclass(frozen=True)
class MetricDefinition:
    """A registered metric: its function and every fact about it.

    Attributes
    ----------
    name : str
        Canonical lower-case name used in metric strings.
    fn : callable
        ``fn(data: MetricInput, k: int | None, **params) -> ndarray`` (per user) or
        ``float`` (``kind="system"``).
    direction : {"higher", "lower", None} or callable
        Which values are better; ``None`` for a descriptive quantity with no better
        side (the training data's Gini). A callable ``direction(params)`` when the
        direction depends on a parameter (novelty as raw popularity is better low,
        as self-information better high).
    bounds : (low, high) or None
        The range of values when bounded (per user and aggregated); ``None`` when a
        side is unbounded or depends on the data.
    kind : {"user", "system", "error"}
    k : {"required", "optional", "none"}
        Whether the metric string must, may or must not carry ``@k``.
    defaults : mapping
        Every accepted parameter with its default; unknown parameters are an error.
    needs_grades, needs_negatives, needs_train, needs_aspects, needs_predictions : bool
        Side data the metric cannot be computed without.
    list_only : bool
        The (naive) value reads of a listed item only whether the user's truth rates it: not which item it is
        otherwise, nor the catalogue's size, so that a run's items need no identity
        (``receval.evaluation.align.align(item_identity=False)``).
    micro : callable or None
        ``micro(data, k, **params) -> (numerator, denominator)`` per user, enabling
        ``agg=micro`` (Σ numerator / Σ denominator); for error metrics it gives the
        global value over all predictions (``agg=global``, the default).
    transform : callable or None
        Applied to the micro/global ratio (``sqrt`` for RMSE).
    aggregations : tuple of str
        Accepted values of the ``agg`` parameter, the default first.
    choices : mapping
        Parameter -> the values it accepts (its vocabulary), checked when a metric string is read.
    aliases : tuple of str
        Other names that resolve to this metric (see :func:`register_alias`).
    description : str
    check : callable or None
        ``check(params, label)`` raises a :class:`MetricError` for a parameter value outside its range (a
        head/tail cut outside (0, 1)), when the metric string is read, before any work.
    """

    name: str
    fn: Callable[..., Any]
    direction: Direction | Callable[[Mapping[str, Any]], Direction]
    bounds: tuple[float, float] | None = None
    kind: Kind = "user"
    k: Literal["required", "optional", "none"] = "required"
    defaults: Mapping[str, Any] = field(default_factory=dict)
    needs_grades: bool = False
    needs_negatives: bool = False
    needs_train: bool = False
    needs_aspects: bool = False
    needs_predictions: bool = False
    list_only: bool = False
    micro: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    transform: Callable[[float], float] | None = None
    aggregations: tuple[str, ...] = ("macro",)
    description: str = ""
    choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    # check(params, label): refuses values outside the parameter's range (a MetricError) when the string is read
    check: Callable[[Mapping[str, Any], str], None] | None = None

    @property
    def needs_threshold(self) -> bool:
        """Whether the metric reads the relevance threshold (binary relevance or a negative class)."""
        return "threshold" in self.defaults or "negative_threshold" in self.defaults

    @property
    def aliases(self) -> tuple[str, ...]:
        """Every registered alias of this metric, sorted."""
        return tuple(sorted(a for a, (name, _) in _ALIASES.items() if name == self.name))

    def direction_for(self, params: Mapping[str, Any]) -> Direction:
        """The direction under the given (resolved) parameters."""
        return self.direction(params) if callable(self.direction) else self.direction


@dataclass(frozen=True)
class Metric:
    """A metric ready to compute: a definition, a cutoff and resolved parameters.

    ``str(metric)`` is the canonical metric string (parameters that differ from the
    defaults, in sorted order): two metrics with the same string give the same numbers.
    The summary of an evaluation is keyed by the string the user wrote. ``convention``
    names the library preset the parameters were read from (``None``: receval's own) and
    ``explicit`` the parameters given in the string, which a preset applied later keeps
    (:func:`receval.metrics.apply_convention`).

    >>> m = Metric.of("recall", 5, agg="micro")
    >>> str(m), m.aggregation, m.direction
    ('recall@5(agg=micro)', 'micro', 'higher')
    """

    definition: MetricDefinition
    k: int | None
    params: Mapping[str, Any]
    # the library convention the parameters were read from (receval.metrics.conventions), None for receval's own;
    # and the parameters given explicitly, which a convention applied later leaves as they are
    convention: str | None = field(default=None, compare=False)
    explicit: frozenset[str] = field(default=frozenset(), compare=False)

    @classmethod
    def of(cls, name: str, k: int | None = None, **params: Any) -> Metric:
        """Build from a name (or alias), a cutoff and keyword parameters (validated); ``convention=NAME`` presets
        every parameter to that library's (:mod:`receval.metrics.conventions`)."""
        canonical, preset = resolve_name(name)
        definition = _REGISTRY[canonical]
        label = name if k is None else f"{name}@{k}"
        check_k(definition, k, label)
        return resolve_metric(definition, k, {**preset, **params}, label)

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def kind(self) -> Kind:
        return self.definition.kind

    @property
    def direction(self) -> Direction:
        """``"higher"`` or ``"lower"`` (which values are better), ``None`` for a descriptive quantity."""
        return self.definition.direction_for(self.params)

    @property
    def aggregation(self) -> str:
        """How per-user values become one number: ``macro`` (mean over scored users),
        ``micro`` (Σ numerators / Σ denominators), ``global`` (error metrics over all
        predictions), ``sum`` (counts) or ``system`` (computed on the whole run)."""
        return str(self.params.get("agg", self.definition.aggregations[0]))

    def __str__(self) -> str:
        out = self.name if self.k is None else f"{self.name}@{self.k}"
        defaults = {**SAMPLED_DEFAULTS, **self.definition.defaults}
        changed = {key: v for key, v in self.params.items() if defaults.get(key, _MISSING) != v}
        if changed:
            out += "(" + ",".join(f"{key}={_format_value(v)}" for key, v in sorted(changed.items())) + ")"
        return out

    @property
    def debiased(self) -> bool:
        """Whether a debiasing parameter is given (then :mod:`receval.metrics.debiased` computes the value).

        >>> Metric.of("recall", 5, estimator="ips").debiased, Metric.of("recall", 5).debiased
        (True, False)
        """
        return self.kind != "system" and not DEBIAS_PARAMS.isdisjoint(self.params)

    @property
    def sampled(self) -> int | None:
        """The number of sampled negatives of a sampled metric (:mod:`receval.evaluation.sampled`), else None.

        >>> Metric.of("ndcg", 10, sampled=100).sampled, Metric.of("ndcg", 10).sampled
        (100, None)
        """
        return self.params.get(SAMPLED_PARAM)

    def per_user(self, data: MetricInput) -> np.ndarray:
        """Per-user values (NaN = not scored); ``kind="system"`` metrics have none."""
        if self.kind == "system":
            raise MetricError(f"metric {self}: a system-level metric has no per-user values")
        if self.sampled is not None:
            raise MetricError(
                f"metric {self}: a sampled metric ranks each held-out item against sampled negatives, which "
                "recommendation lists do not hold; evaluate a model (evaluate_model) or candidate scores"
            )
        if self.debiased:
            return _ESTIMATION["per_user"](self, data)
        params = {key: v for key, v in self.params.items() if key != "agg"}
        return np.asarray(self.definition.fn(data, self.k, **params), dtype=np.float64)

    def compute(self, data: MetricInput, per_user: np.ndarray | None = None) -> float:
        """The aggregated value (reuses ``per_user`` values when given)."""
        if self.debiased:
            return _ESTIMATION["compute"](self, data, per_user)
        params = {key: v for key, v in self.params.items() if key != "agg"}
        agg = self.aggregation
        if agg == "system":
            return float(self.definition.fn(data, self.k, **params))
        micro = self.definition.micro
        if agg in ("micro", "global") and micro is not None:  # register_metric refuses these without micro
            num, den = micro(data, self.k, **params)
            return aggregate(self, totals=(float(np.sum(num)), float(np.sum(den))))
        return aggregate(self, self.per_user(data) if per_user is None else per_user)


def aggregate(
    metric: Metric, per_user: np.ndarray | None = None, *, totals: tuple[float, float] | None = None
) -> float:
    """A metric's value over the users: the one rule of in-memory and sharded evaluation.

    With ``totals`` (Σ numerators, Σ denominators of a micro or global metric, over every user):
    their ratio (NaN when the denominator is 0), through the definition's ``transform`` when it
    has one. Else the mean of the ``per_user`` values the metric scores (NaN: not scored; NaN when
    it scores no user), or their sum when the metric's aggregation is ``sum``.

    Examples
    --------
    >>> from receval.metrics import parse_metric
    >>> aggregate(parse_metric("precision@10"), np.array([0.5, np.nan, 0.25]))
    0.375
    >>> aggregate(parse_metric("recall@10(agg=micro)"), totals=(3.0, 4.0))
    0.75
    """
    if totals is not None:
        num, den = totals
        value = num / den if den > 0 else float("nan")
        transform = metric.definition.transform
        return transform(value) if transform is not None else value
    assert per_user is not None, "aggregate needs per-user values or totals"
    scored = per_user[~np.isnan(per_user)]
    if metric.aggregation == "sum":
        return float(scored.sum())
    return float(scored.mean()) if scored.size else float("nan")


class _Missing:
    pass


_MISSING = _Missing()
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def register_metric(
    name: str,
    *,
    direction: Direction | Callable[[Mapping[str, Any]], Direction] = None,
    bounds: tuple[float, float] | None = None,
    kind: Kind = "user",
    k: Literal["required", "optional", "none"] = "required",
    defaults: Mapping[str, Any] | None = None,
    needs_grades: bool = False,
    needs_negatives: bool = False,
    needs_train: bool = False,
    needs_aspects: bool = False,
    needs_predictions: bool = False,
    list_only: bool = False,
    micro: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None,
    transform: Callable[[float], float] | None = None,
    aggregations: tuple[str, ...] | None = None,
    aliases: Iterable[str] = (),
    description: str = "",
    choices: Mapping[str, tuple[Any, ...]] | None = None,
    check: Callable[[Mapping[str, Any], str], None] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering ``fn(data, k, **params)`` under ``name``.

    ``direction``: ``"higher"`` or ``"lower"`` is better, a function of the resolved
    parameters giving one of them, or ``None`` (the default) for a descriptive quantity
    with no better side — reports then mark no best value and agreement refuses it. ``defaults``
    lists every parameter the metric accepts. ``aggregations`` defaults to
    ``("system",)`` for system metrics, ``("global", "macro")`` for error metrics,
    ``("macro", "micro")`` when ``micro`` is given and ``("macro",)`` otherwise; with
    more than one, the parameter ``agg`` (default: the first) chooses. ``choices`` lists the values a
    string parameter accepts, so that a wrong one is refused when the metric string is read.
    Re-registering a name replaces the definition (so modules can be reloaded).

    >>> @register_metric("list_length_example", k="optional", description="items in the list")
    ... def _length(data, k):
    ...     return np.minimum(data.list_length, k or data.rankings.shape[1]).astype(float)
    >>> get_definition("list_length_example").description
    'items in the list'
    >>> del _REGISTRY["list_length_example"]
    """
    key = name.lower()
    if not _NAME.fullmatch(key):
        raise MetricError(f"metric name {name!r} must be letters, digits and underscores, starting with a letter")
    if not callable(direction) and direction not in _DIRECTIONS:
        raise MetricError(f"metric {name!r}: direction must be 'higher', 'lower' or None, got {direction!r}")
    if bounds is not None and not (len(bounds) == 2 and bounds[0] < bounds[1]):
        raise MetricError(f"metric {name!r}: bounds must be (low, high) with low < high, got {bounds!r}")
    params = dict(defaults or {})
    if aggregations is None:
        if kind == "system":
            aggregations = ("system",)
        elif kind == "error":
            aggregations = ("global", "macro")
        else:
            aggregations = ("macro", "micro") if micro is not None else ("macro",)
    if any(a in ("micro", "global") for a in aggregations) and micro is None:
        raise MetricError(f"metric {name!r}: micro/global aggregation needs a micro function")
    if len(aggregations) > 1:
        params["agg"] = aggregations[0]

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        _REGISTRY[key] = MetricDefinition(
            name=key,
            fn=fn,
            direction=direction,
            bounds=None if bounds is None else (float(bounds[0]), float(bounds[1])),
            kind=kind,
            k=k,
            defaults=MappingProxyType(params),
            needs_grades=needs_grades,
            needs_negatives=needs_negatives,
            needs_train=needs_train,
            needs_aspects=needs_aspects,
            needs_predictions=needs_predictions,
            list_only=list_only,
            micro=micro,
            transform=transform,
            aggregations=tuple(aggregations),
            description=description or (fn.__doc__ or "").strip().split("\n")[0],
            choices=MappingProxyType(dict(choices or {})),
            check=check,
        )
        for alias in aliases:
            register_alias(alias, key)
        return fn

    return decorator


def register_alias(alias: str, name: str, **params: Any) -> None:
    """Let ``alias`` (any case) stand for the metric ``name`` with ``params`` preset.

    Parameters written after an alias override its presets; a library's own spelling presets
    ``convention=`` that library (trec_eval's ``ndcg_cut``).

    >>> register_alias("precision_example", "precision", denominator="list")
    >>> Metric.of("PRECISION_EXAMPLE", 5).params["denominator"]
    'list'
    >>> del _ALIASES["precision_example"]
    """
    key = alias.lower()
    if not _NAME.fullmatch(key):
        raise MetricError(f"alias {alias!r} must be letters, digits and underscores, starting with a letter")
    if name.lower() not in _REGISTRY:
        raise MetricError(f"alias {alias!r} names the unknown metric {name!r}")
    if key in _REGISTRY:
        raise MetricError(f"alias {alias!r} is already the name of a metric")
    resolve_metric(_REGISTRY[name.lower()], None, params, alias)  # fail now on a wrong preset
    _ALIASES[key] = (name.lower(), MappingProxyType(dict(params)))


def resolve_name(name: str) -> tuple[str, Mapping[str, Any]]:
    """The canonical name and preset parameters of a name or alias (:class:`MetricError` if unknown).

    >>> resolve_name("NDCG")
    ('ndcg', mappingproxy({}))
    """
    key = name.strip().lower()
    if key in _REGISTRY:
        return key, MappingProxyType({})
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, [*_REGISTRY, *_ALIASES], n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise MetricError(f"unknown metric {name!r}{hint} (known metrics: {', '.join(available_metrics())})")


def get_definition(name: str) -> MetricDefinition:
    """The registered definition of a metric name or alias (raises :class:`MetricError` with close names)."""
    return _REGISTRY[resolve_name(name)[0]]


def available_metrics() -> list[str]:
    """Sorted canonical names of every registered metric."""
    return sorted(_REGISTRY)


# the largest cutoff, a 64-bit integer: a cutoff beyond the longest list reads the whole list (the metrics cap k at
# the lists, never allocating k positions), so a larger one would mean the same
MAX_CUTOFF = 2**63 - 1
CUTOFF_LIMIT = "the cutoff k must be at most 2^63 - 1 (a cutoff beyond the longest list reads the whole list)"


def check_k(definition: MetricDefinition, k: int | None, label: str) -> None:
    """Validate the cutoff of a metric string against what the definition accepts."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0):
        raise MetricError(f"metric {label!r}: the cutoff k must be a positive integer, got {k!r}")
    if k is not None and k > MAX_CUTOFF:
        raise MetricError(f"metric {label!r}: {CUTOFF_LIMIT}, got {k!r}")
    if definition.k == "required" and k is None:
        raise MetricError(f"metric {label!r} needs a cutoff: write {definition.name}@k, e.g. {definition.name}@10")
    if definition.k == "none" and k is not None:
        raise MetricError(f"metric {label!r} takes no cutoff: write {definition.name}")


def resolve_params(definition: MetricDefinition, params: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    """The definition's defaults overridden by ``params`` (unknown names and aggregations refused)."""
    params = _sampled_params(definition, params, label)
    if SAMPLED_PARAM in params:
        return MappingProxyType({**definition.defaults, **SAMPLED_DEFAULTS, **params})
    debias = DEBIAS_PARAMS if definition.kind != "system" else frozenset()
    unknown = sorted(set(params) - set(definition.defaults) - debias)
    if unknown:
        accepted = ", ".join(sorted(definition.defaults)) or "none"
        raise MetricError(f"metric {label!r}: unknown parameter(s) {unknown}; accepted: {accepted}")
    if "agg" in params and params["agg"] not in definition.aggregations:
        allowed = ", ".join(definition.aggregations)
        raise MetricError(f"metric {label!r}: agg must be one of {allowed}, got {params['agg']!r}")
    for key, value in params.items():
        _check_type(definition, key, value, label)
        vocabulary = definition.choices.get(key)
        if vocabulary is not None and value not in vocabulary:
            words = ", ".join(_format_value(v) for v in vocabulary)
            raise MetricError(f"metric {label!r}: {key} must be one of {words}, got {value!r}")
    merged = {**definition.defaults, **params}
    if not debias.isdisjoint(params):
        for key, supported in DEBIAS_SUPPORTS.get(definition.name, {}).items():
            if merged.get(key) not in supported:
                raise MetricError(
                    f"metric {label!r}: the debiased estimators compute {definition.name} only with {key}="
                    f"{' or '.join(_format_value(v) for v in supported)}, not {_format_value(merged.get(key))}"
                )
    if definition.check is not None:
        definition.check(merged, label)
    return MappingProxyType(merged)


def _sampled_params(definition: MetricDefinition, params: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    """``params`` with the sampled parameters checked (and ``candidates=`` read as ``sampled=``), or unchanged.

    >>> p = _sampled_params(get_definition("ndcg"), {"candidates": "sampled", "correction": "BV"}, "ndcg@10")
    >>> dict(p)
    {'correction': 'bv', 'sampled': 100}
    """
    words = set(SAMPLED_DEFAULTS) | {SAMPLED_PARAM, "candidates"}
    asked = {key: params[key] for key in params if key in words and key not in definition.defaults}
    if not asked:
        return params
    if definition.name not in SAMPLED_METRICS:
        raise MetricError(
            f"metric {label!r} has no sampled form ({', '.join(sorted(asked))}); sampled metrics: "
            f"{', '.join(SAMPLED_METRICS)}"
        )
    out = {key: value for key, value in params.items() if key != "candidates"}
    if "candidates" in asked:
        size = _CANDIDATES.get(str(asked["candidates"]).lower(), _MISSING)
        if size is _MISSING:
            raise MetricError(f"metric {label!r}: candidates must be all or sampled, got {asked['candidates']!r}")
        if size is None:
            if len(asked) > 1:
                given = ", ".join(sorted(set(asked) - {"candidates"}))
                raise MetricError(f"metric {label!r}: candidates=all ranks the whole catalogue, without {given}; "
                                  "write candidates=sampled")  # fmt: skip
            return out
        out.setdefault(SAMPLED_PARAM, size)
    n = out.get(SAMPLED_PARAM)
    if n is None:
        raise MetricError(
            f"metric {label!r}: {', '.join(f'{key}=' for key in sorted(asked))} belong to a sampled metric; add "
            f"sampled=N, e.g. {definition.name}@10(sampled=100,...)"
        )
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise MetricError(f"metric {label!r}: sampled is the number of sampled negatives, an integer >= 1, got {n!r}")
    out[SAMPLED_PARAM] = int(n)
    others = sorted(set(out) - words - _SAMPLED_KEEPS)
    if others:
        raise MetricError(
            f"metric {label!r}: a sampled metric has one relevant item per ranked list and no {', '.join(others)}; "
            f"it takes {', '.join(sorted(words - {'candidates'}))} and threshold"
        )
    try:
        for key, vocabulary in (("sampling", SAMPLING_SCHEMES), ("shape", SAMPLE_SHAPES),
                                ("correction", SAMPLED_CORRECTIONS)):  # fmt: skip
            if key in out:  # metric strings read the word none as None
                out[key] = sampled_word(key, "none" if out[key] is None else out[key], vocabulary)
    except ReceValError as exc:
        raise MetricError(f"metric {label!r}: {exc}") from None
    # refused here, not only when the ranks are estimated: every surface parses the metric before any work
    scheme, correction = out.get("sampling", SAMPLED_DEFAULTS["sampling"]), out.get("correction")
    if correction in UNIFORM_ONLY_CORRECTIONS and scheme != SAMPLING_SCHEMES[0]:
        raise MetricError(
            f"metric {label!r}: correction={correction} assumes uniformly sampled negatives, but sampling={scheme}; "
            f"write sampling={SAMPLING_SCHEMES[0]} or correction={SAMPLED_CORRECTIONS[0]}"
        )
    for key in ("exponent", "gamma"):
        value = out.get(key)
        number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
        if key in out and not (number and np.isfinite(float(value))):  # type: ignore[arg-type]
            raise MetricError(f"metric {label!r}: {key} must be a finite number, got {value!r}")
    if "exponent" in out and out.get("sampling") != "popularity":
        raise MetricError(f"metric {label!r}: exponent weights popularity sampling; add sampling=popularity")
    if out.get("exponent", 0) < 0:
        raise MetricError(f"metric {label!r}: exponent must be >= 0 (popularity ** exponent), got {out['exponent']!r}")
    if "gamma" in out:
        if out.get("correction") != "bv":
            raise MetricError(f"metric {label!r}: gamma is the bias-variance trade-off; add correction=bv")
        if not 0 <= out["gamma"] <= 1:
            raise MetricError(f"metric {label!r}: gamma weighs variance against bias, in [0, 1]; got {out['gamma']!r}")
        out["gamma"] = float(out["gamma"])
    if "exponent" in out:
        out["exponent"] = float(out["exponent"])
    return out


# parameters whose default is None but whose value, when given, is a number
_NUMBER_OR_NONE = frozenset({"threshold", "negative_threshold", "rmax", "single_item"})


def _check_type(definition: MetricDefinition, key: str, value: Any, label: str) -> None:
    """A parameter's value has its default's type: true/false, a finite number, ``base`` = e or a number > 0, ≠ 1."""
    default = definition.defaults.get(key, _MISSING)
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise MetricError(f"metric {label!r}: {key} must be true or false, got {value!r}")
    elif isinstance(default, (int, float)) or (key in _NUMBER_OR_NONE and value is not None):
        if not number or not np.isfinite(value):
            raise MetricError(f"metric {label!r}: {key} must be a finite number, got {value!r}")
    elif key == "base" and value != "e" and not (number and np.isfinite(value) and value > 0 and value != 1):
        raise MetricError(f"metric {label!r}: base must be e or a number > 0 other than 1, got {value!r}")


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def resolve_metric(definition: MetricDefinition, k: int | None, params: Mapping[str, Any], label: str) -> Metric:
    """A :class:`Metric` from its definition, cutoff and given parameters, ``convention=NAME`` applied.

    The preset's values come first and every other given parameter overrides them. A
    metric with a ``convention`` parameter of its own (rbu) keeps a value that is not a
    library's name.
    """
    given = dict(params)
    name = given.pop(CONVENTION_PARAM, None)
    own = CONVENTION_PARAM in definition.defaults
    if own and name is not None and str(name).strip().lower().replace("-", "_") not in LIBRARIES:
        given[CONVENTION_PARAM], name = name, None
    sampled = SAMPLED_PARAM in given or given.get("candidates") == "sampled"
    convention = None if name is None else convention_name(name)
    if sampled:
        # a sampled metric has one definition (one relevant item per list): a library's preset names only its shape
        preset = dict(_SAMPLED_PRESETS.get(convention or "", {}))
        convention = convention if preset else None
    else:
        try:
            preset = {} if convention is None else dict(preset_params(convention, definition.name))
        except MetricError as exc:
            raise MetricError(f"metric {label!r}: {exc}") from None
    resolved = resolve_params(definition, {**preset, **given}, label)
    return Metric(definition, k, resolved, convention=convention, explicit=frozenset(given))
