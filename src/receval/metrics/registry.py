"""Metric names, metric strings and the registry every metric module adds itself to.

A metric string is ``name[@k][(key=value, ...)]``: ``"ndcg@10"``, ``"mrr"``,
``"precision@10(agg=micro)"``, ``"alpha_ndcg@10(alpha=0.5)"``. :func:`parse_metric`
turns it into a :class:`Metric` (the definition plus the cutoff and parameters);
:func:`register_metric` is the decorator metric modules use to add a definition.

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
>>> parse_metric("mrr").k is None
True
>>> parse_metric("precision@0")
Traceback (most recent call last):
...
receval.errors.MetricError: metric 'precision@0': the cutoff k must be a positive integer, got '0'
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from receval.errors import MetricError

__all__ = [
    "Metric",
    "MetricDefinition",
    "MetricInput",
    "available_metrics",
    "get_definition",
    "parse_metric",
    "parse_metric_list",
    "register_metric",
]

Kind = Literal["user", "system", "error"]
UserFn = Callable[..., np.ndarray]
_REGISTRY: dict[str, MetricDefinition] = {}
# Modules whose import registers the built-in metrics; optional ones may be absent.
_BUILTIN_MODULES = ("receval.metrics.error", "receval.metrics.ranking", "receval.metrics.beyond")
_OPTIONAL_MODULES = ("receval.metrics.aspects",)
_loaded = False


@dataclass(frozen=True)
class MetricDefinition:
    """A registered metric: its function, what it needs and how it aggregates.

    Attributes
    ----------
    name : str
        Lower-case name used in metric strings.
    fn : callable
        ``fn(data: MetricInput, k: int | None, **params) -> ndarray`` (per user) or
        ``float`` (``kind="system"``).
    kind : {"user", "system", "error"}
    k : {"required", "optional", "none"}
        Whether the metric string must, may or must not carry ``@k``.
    defaults : mapping
        Every accepted parameter with its default; unknown parameters are an error.
    needs_grades, needs_negatives, needs_train, needs_aspects, needs_predictions : bool
        Side data the metric cannot be computed without.
    micro : callable or None
        ``micro(data, k, **params) -> (numerator, denominator)`` per user, enabling
        ``agg=micro`` (Σ numerator / Σ denominator); for error metrics it gives the
        global value over all predictions (``agg=global``, the default).
    transform : callable or None
        Applied to the micro/global ratio (``sqrt`` for RMSE).
    aggregations : tuple of str
        Accepted values of the ``agg`` parameter, the default first.
    description : str
    """

    name: str
    fn: Callable[..., Any]
    kind: Kind = "user"
    k: Literal["required", "optional", "none"] = "required"
    defaults: Mapping[str, Any] = field(default_factory=dict)
    needs_grades: bool = False
    needs_negatives: bool = False
    needs_train: bool = False
    needs_aspects: bool = False
    needs_predictions: bool = False
    micro: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    transform: Callable[[float], float] | None = None
    aggregations: tuple[str, ...] = ("macro",)
    description: str = ""


@dataclass(frozen=True)
class Metric:
    """A metric ready to compute: a definition, a cutoff and resolved parameters.

    ``str(metric)`` is the canonical metric string (parameters that differ from the
    defaults, in sorted order); the summary of an evaluation is keyed by the string
    the user wrote.

    >>> m = Metric.of("recall", 5, agg="micro")
    >>> str(m), m.aggregation
    ('recall@5(agg=micro)', 'micro')
    """

    definition: MetricDefinition
    k: int | None
    params: Mapping[str, Any]

    @classmethod
    def of(cls, name: str, k: int | None = None, **params: Any) -> Metric:
        """Build from a name, a cutoff and keyword parameters (validated)."""
        definition = get_definition(name)
        label = name if k is None else f"{name}@{k}"
        _check_k(definition, k, label)
        return cls(definition, k, _resolve_params(definition, params, label))

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def kind(self) -> Kind:
        return self.definition.kind

    @property
    def aggregation(self) -> str:
        """How per-user values become one number: ``macro`` (mean over scored users),
        ``micro`` (Σ numerators / Σ denominators), ``global`` (error metrics over all
        predictions), ``sum`` (counts) or ``system`` (computed on the whole run)."""
        return str(self.params.get("agg", self.definition.aggregations[0]))

    def __str__(self) -> str:
        out = self.name if self.k is None else f"{self.name}@{self.k}"
        changed = {key: v for key, v in self.params.items() if self.definition.defaults.get(key, _MISSING) != v}
        if changed:
            out += "(" + ",".join(f"{key}={_format_value(v)}" for key, v in sorted(changed.items())) + ")"
        return out

    def per_user(self, data: MetricInput) -> np.ndarray:
        """Per-user values (NaN = not scored); ``kind="system"`` metrics have none."""
        if self.kind == "system":
            raise MetricError(f"metric {self}: a system-level metric has no per-user values")
        params = {key: v for key, v in self.params.items() if key != "agg"}
        return np.asarray(self.definition.fn(data, self.k, **params), dtype=np.float64)

    def compute(self, data: MetricInput, per_user: np.ndarray | None = None) -> float:
        """The aggregated value (reuses ``per_user`` values when given)."""
        params = {key: v for key, v in self.params.items() if key != "agg"}
        agg = self.aggregation
        if agg == "system":
            return float(self.definition.fn(data, self.k, **params))
        if agg in ("micro", "global"):
            num, den = self.definition.micro(data, self.k, **params)  # type: ignore[misc]
            total = float(np.sum(den))
            value = float(np.sum(num)) / total if total > 0 else float("nan")
            return self.definition.transform(value) if self.definition.transform is not None else value
        values = self.per_user(data) if per_user is None else per_user
        scored = values[~np.isnan(values)]
        if agg == "sum":
            return float(scored.sum())
        return float(scored.mean()) if scored.size else float("nan")


class _Missing:
    pass


_MISSING = _Missing()


class MetricInput:
    """Everything a metric may look at, aligned on the same user rows.

    Parameters
    ----------
    rankings : int array (n_users, n)
        Item indices in rank order, padded with -1 at the end of short lists.
    truth : scipy CSR (n_users x n_items)
        The held-out ratings (presence in the sparsity pattern = rated; explicit
        zeros kept).
    threshold : float
        Positive (relevant) = rating ≥ threshold.
    negative_threshold : float
        Negative = rating < negative_threshold (≤ ``threshold``); items rated in
        between are neither. Unrated recommended items are unknown, never negative.
    train : CSR (n_users x n_items) or None
        Training ratings of the same users (popularity, profiles).
    aspects : CSR (n_items x n_aspects, 0/1) or None
    rating_max : float or None
        Top of the rating scale (for gains normalised by it).
    predictions : tuple (user_rows, ratings, predictions) or None
        Rating predictions for error metrics, ``user_rows`` indexing the user rows.
    empty_users : {"skip", "zero"}
        Users with no relevant item in the truth: NaN (left out of the mean) or 0.
    train_all : CSR or None
        Training ratings of *all* users (for item popularity and G1); defaults to ``train``.

    Examples
    --------
    >>> truth = sp.csr_matrix(np.array([[5.0, 0, 2], [0, 4, 0]]))
    >>> data = MetricInput(np.array([[0, 1], [2, -1]]), truth, threshold=4)
    >>> data.grades.tolist()
    [[5.0, nan], [nan, nan]]
    >>> data.positive.tolist(), data.n_positive.tolist()
    ([[True, False], [False, False]], [1, 1])
    """

    def __init__(
        self,
        rankings: np.ndarray,
        truth: sp.csr_matrix,
        *,
        threshold: float = 1.0,
        negative_threshold: float | None = None,
        train: sp.csr_matrix | None = None,
        aspects: sp.csr_matrix | None = None,
        rating_max: float | None = None,
        predictions: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        empty_users: Literal["skip", "zero"] = "skip",
        train_all: sp.csr_matrix | None = None,
    ) -> None:
        self.rankings = np.asarray(rankings)
        self.truth = truth
        self.threshold = float(threshold)
        self.negative_threshold = self.threshold if negative_threshold is None else float(negative_threshold)
        self.train = train
        self.train_all = train if train_all is None else train_all
        self.aspects = aspects
        self.rating_max = rating_max
        self.predictions = predictions
        self.empty_users = empty_users
        self.n_items = truth.shape[1]

    @property
    def n_users(self) -> int:
        return self.rankings.shape[0]

    @cached_property
    def valid(self) -> np.ndarray:
        """Boolean (n_users, n): the position holds an item (not padding)."""
        return self.rankings >= 0

    @cached_property
    def list_length(self) -> np.ndarray:
        """Number of recommended items of each user."""
        return self.valid.sum(axis=1)

    @cached_property
    def grades(self) -> np.ndarray:
        """Float32 (n_users, n): the truth rating of each ranked item, NaN if unrated or padding."""
        return lookup(self.truth, self.rankings)

    @cached_property
    def positive(self) -> np.ndarray:
        """Boolean (n_users, n): the ranked item is rated ≥ threshold."""
        return self.grades >= self.threshold

    @cached_property
    def negative(self) -> np.ndarray:
        """Boolean (n_users, n): the ranked item is rated < negative_threshold."""
        return self.grades < self.negative_threshold

    @cached_property
    def n_positive(self) -> np.ndarray:
        """Number of truth items of each user rated ≥ threshold."""
        return count_rows(self.truth, self.truth.data >= self.threshold)

    @cached_property
    def n_negative(self) -> np.ndarray:
        """Number of truth items of each user rated < negative_threshold."""
        return count_rows(self.truth, self.truth.data < self.negative_threshold)

    def positive_at(self, threshold: float) -> np.ndarray:
        """Like :attr:`positive` for another threshold (metrics with their own ``threshold``)."""
        return self.positive if threshold == self.threshold else self.grades >= threshold

    def n_positive_at(self, threshold: float) -> np.ndarray:
        """Like :attr:`n_positive` for another threshold."""
        if threshold == self.threshold:
            return self.n_positive
        return count_rows(self.truth, self.truth.data >= threshold)

    @cached_property
    def item_popularity(self) -> np.ndarray:
        """Number of training ratings of each item (needs ``train``)."""
        if self.train_all is None:
            raise MetricError("this metric needs training data for item popularity; pass train=")
        return np.bincount(self.train_all.indices, minlength=self.n_items).astype(np.float64)

    @cached_property
    def n_train_users(self) -> int:
        """Number of users with at least one training rating (for popularity as a probability)."""
        assert self.train_all is not None
        return int(np.count_nonzero(np.diff(self.train_all.indptr)))


def lookup(matrix: sp.csr_matrix, columns: np.ndarray, *, budget: int = 1 << 21) -> np.ndarray:
    """Values ``matrix[row, columns[row, j]]`` as float32, NaN where absent or ``columns < 0``.

    Rows are processed in chunks: each chunk's sparse rows are scattered into a
    reused dense buffer of about ``budget`` cells, gathered with one ``take`` and
    cleared again — memory-bound and several times faster than a global search.

    >>> m = sp.csr_matrix(np.array([[1.0, 0, 3], [0, 0, 2]]))
    >>> lookup(m, np.array([[2, 1], [2, -1]])).tolist()
    [[3.0, nan], [2.0, nan]]
    """
    n_rows, width = columns.shape
    n_cols = max(int(matrix.shape[1]), 1)
    out = np.empty((n_rows, width), dtype=np.float32)
    step = max(1, min(n_rows, budget // n_cols))
    dense = np.full(step * n_cols, np.nan, dtype=np.float32)
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data.astype(np.float32, copy=False)
    local_row = np.repeat(np.arange(n_rows, dtype=np.int64) % step, np.diff(indptr))
    flat = local_row * n_cols + indices
    offsets = np.arange(step, dtype=np.int64)[:, None] * n_cols
    invalid = columns < 0
    safe = np.where(invalid, 0, columns)
    for start in range(0, n_rows, step):
        stop = min(start + step, n_rows)
        cells = flat[indptr[start] : indptr[stop]]
        dense[cells] = data[indptr[start] : indptr[stop]]
        np.take(dense, offsets[: stop - start] + safe[start:stop], out=out[start:stop])
        dense[cells] = np.nan
    out[invalid] = np.nan
    return out


def count_rows(matrix: sp.csr_matrix, mask: np.ndarray) -> np.ndarray:
    """Per-row count of stored entries selected by ``mask`` (aligned with ``matrix.data``)."""
    csum = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))
    return csum[matrix.indptr[1:]] - csum[matrix.indptr[:-1]]


# ------------------------------------------------------------------ registration
def register_metric(
    name: str,
    *,
    kind: Kind = "user",
    k: Literal["required", "optional", "none"] = "required",
    defaults: Mapping[str, Any] | None = None,
    needs_grades: bool = False,
    needs_negatives: bool = False,
    needs_train: bool = False,
    needs_aspects: bool = False,
    needs_predictions: bool = False,
    micro: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None,
    transform: Callable[[float], float] | None = None,
    aggregations: tuple[str, ...] | None = None,
    description: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering ``fn(data, k, **params)`` under ``name``.

    ``defaults`` lists every parameter the metric accepts. ``aggregations`` defaults
    to ``("system",)`` for system metrics, ``("global", "macro")`` for error metrics,
    ``("macro", "micro")`` when ``micro`` is given and ``("macro",)`` otherwise; with
    more than one, the parameter ``agg`` (default: the first) chooses.
    Re-registering a name replaces the definition (so modules can be reloaded).

    >>> @register_metric("list_length_example", k="optional", description="items in the list")
    ... def _length(data, k):
    ...     return np.minimum(data.list_length, k or data.rankings.shape[1]).astype(float)
    >>> parse_metric("list_length_example@3").definition.description
    'items in the list'
    >>> del _REGISTRY["list_length_example"]
    """
    key = name.lower()
    if not re.fullmatch(r"[a-z][a-z0-9_]*", key):
        raise MetricError(f"metric name {name!r} must be letters, digits and underscores, starting with a letter")
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
            kind=kind,
            k=k,
            defaults=MappingProxyType(params),
            needs_grades=needs_grades,
            needs_negatives=needs_negatives,
            needs_train=needs_train,
            needs_aspects=needs_aspects,
            needs_predictions=needs_predictions,
            micro=micro,
            transform=transform,
            aggregations=tuple(aggregations),
            description=description or (fn.__doc__ or "").strip().split("\n")[0],
        )
        return fn

    return decorator


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)
    for module in _OPTIONAL_MODULES:
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)


def get_definition(name: str) -> MetricDefinition:
    """The registered definition of ``name`` (raises :class:`MetricError` listing the known names)."""
    _load_builtins()
    key = name.strip().lower()
    if key not in _REGISTRY:
        raise MetricError(f"unknown metric {name!r}; known metrics: {', '.join(available_metrics())}")
    return _REGISTRY[key]


def available_metrics() -> list[str]:
    """Sorted names of every registered metric.

    >>> {"ndcg", "precision", "fallout", "rmse", "coverage"} <= set(available_metrics())
    True
    """
    _load_builtins()
    return sorted(_REGISTRY)


# ----------------------------------------------------------------------- parsing
_PATTERN = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:@\s*([^(\s]*))?\s*(?:\((.*)\))?\s*$", re.DOTALL)


def parse_metric(text: str | Metric) -> Metric:
    """Parse ``name[@k][(key=value,...)]`` into a :class:`Metric`.

    Values are read as int, float, ``true``/``false`` or ``none``, else kept as strings.

    >>> parse_metric("fallout@10(negative_threshold=3)").params["negative_threshold"]
    3
    >>> parse_metric("nope@3")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: unknown metric 'nope'; known metrics: ...
    """
    if isinstance(text, Metric):
        return text
    if not isinstance(text, str):
        raise MetricError(f"a metric is a string like 'ndcg@10' or a Metric, got {type(text).__name__}")
    match = _PATTERN.match(text)
    if not match:
        raise MetricError(f"cannot read metric {text!r}; write name@k or name@k(key=value,...), e.g. 'ndcg@10'")
    name, k_text, param_text = match.groups()
    definition = get_definition(name)
    k = None
    if k_text is not None:
        if not re.fullmatch(r"\d+", k_text) or int(k_text) <= 0:
            raise MetricError(f"metric {text.strip()!r}: the cutoff k must be a positive integer, got {k_text!r}")
        k = int(k_text)
    _check_k(definition, k, text.strip())
    params: dict[str, Any] = {}
    if param_text is not None and param_text.strip():
        for part in param_text.split(","):
            if "=" not in part:
                raise MetricError(f"metric {text.strip()!r}: parameter {part.strip()!r} is not key=value")
            key, value = (s.strip() for s in part.split("=", 1))
            params[key] = _parse_value(value)
    return Metric(definition, k, _resolve_params(definition, params, text.strip()))


def parse_metric_list(text: str) -> list[str]:
    """Split a comma-separated list of metric strings, keeping commas inside parentheses.

    >>> parse_metric_list("ndcg@10, alpha_ndcg@10(alpha=0.5,beta=0.3),mrr")
    ['ndcg@10', 'alpha_ndcg@10(alpha=0.5,beta=0.3)', 'mrr']
    """
    out, depth, current = [], 0, []
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        depth += (ch == "(") - (ch == ")")
        current.append(ch)
    out.append("".join(current).strip())
    return [m for m in out if m]


def _check_k(definition: MetricDefinition, k: int | None, label: str) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0):
        raise MetricError(f"metric {label!r}: the cutoff k must be a positive integer, got {k!r}")
    if definition.k == "required" and k is None:
        raise MetricError(f"metric {label!r} needs a cutoff: write {definition.name}@k, e.g. {definition.name}@10")
    if definition.k == "none" and k is not None:
        raise MetricError(f"metric {label!r} takes no cutoff: write {definition.name}")


def _resolve_params(definition: MetricDefinition, params: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    unknown = sorted(set(params) - set(definition.defaults))
    if unknown:
        accepted = ", ".join(sorted(definition.defaults)) or "none"
        raise MetricError(f"metric {label!r}: unknown parameter(s) {unknown}; accepted: {accepted}")
    if "agg" in params and params["agg"] not in definition.aggregations:
        allowed = ", ".join(definition.aggregations)
        raise MetricError(f"metric {label!r}: agg must be one of {allowed}, got {params['agg']!r}")
    merged = {**definition.defaults, **params}
    return MappingProxyType(merged)


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


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
