"""What an evaluation returns — :class:`EvaluationResult` and its :class:`Conventions` — and the check that a
train/test split shares one id space.

Defined apart from :mod:`receval.evaluation` (which re-exports them) so that the evaluation
modules it calls, :mod:`receval.evaluation.sampled` among them, build the same results
without importing the package that imports them.

Examples
--------
>>> Conventions(threshold=4.0, negative_threshold=4.0).to_dict()["threshold"]
4.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import DataError
from receval.metrics.registry import Metric
from receval.vocabulary import COLD_START_DEFAULT, ColdStart

if TYPE_CHECKING:
    import pandas as pd

    from receval.stats.barrier import OverfittingCheck
    from receval.stats.groups import GroupGap

__all__ = ["Conventions", "EvaluationResult"]


@dataclass(frozen=True)
class Conventions:
    """How an evaluation scored: what :attr:`EvaluationResult.conventions` holds.

    Attributes
    ----------
    threshold, negative_threshold : float
        λ (positive: rating ≥ λ; the default is the truth scale's
        :meth:`~receval.data.interactions.RatingScale.default_threshold`) and the
        negative threshold (negative: rating below it).
    empty_users : {"skip", "zero"}
    tie_break : str
        How the lists were ordered, in words: the rule in force (descending score or
        ascending rank, and the tie rule of ``ties=``; or an item matrix as given).
    convention : str or None
        The library preset the evaluation applied (``convention=``), None without one.
    aggregation : mapping
        ``{metric string: aggregation}`` (macro, micro, global, sum, ...).
    users_evaluated : int
        Truth users with at least one rating.
    users_scored : mapping
        ``{metric string: users with a value}`` (per-user metrics).
    users_dropped_not_in_truth : int
        Users of the recommendations absent from the truth.
    users_without_list : int or None
        Evaluated users with no recommendation (None without recommendations), after the
        cold-start policy (a fallback list is a list).
    cold_start : {"empty", "exclude", "fallback"}
        The cold-start policy applied (:mod:`receval.cold_start`).
    users_cold : int or None
        Truth users without a training rating (None without training data); with
        ``exclude`` they are not among ``users_evaluated``.
    users_cold_without_list : int or None
        Of those, the users the recommendations gave no list (``empty``: scored as empty
        lists; ``fallback``: given the fallback list).
    estimators : mapping
        ``{metric string: {"estimator": ..., "propensity": ...}}`` of per-user metrics.
    metrics : mapping
        ``{metric string: {"metric": canonical string, parameter: value, ...}}``, with
        ``"preset"``: the library whose convention the metric follows, when one does.
    not_applicable : tuple of str or None
        From :func:`evaluate_model`: error metrics of a model that cannot predict (NaN).
    shards, executor : int and str, or None
        From sharded evaluation: the number of user shards and where they ran.
    sampled : mapping or None
        From sampled metrics (``ndcg@10(sampled=100)``, :mod:`receval.evaluation.sampled`):
        ``{metric string: its candidates' design}``: ``sampling``, ``n``, ``exponent``,
        ``shape``, ``seed``, ``exclude`` (what the negatives never are), ``n_items`` (the full
        list the corrections estimate for) and ``rows`` (the held-out positives ranked).

    Examples
    --------
    >>> c = Conventions(threshold=4.0, negative_threshold=4.0, users_evaluated=2)
    >>> c.threshold, c.to_dict()["users_evaluated"], "shards" in c.to_dict(), c.to_dict()["convention"]
    (4.0, 2, False, None)
    """

    threshold: float
    negative_threshold: float
    empty_users: Literal["skip", "zero"] = "skip"
    tie_break: str = "as given (an item matrix is ranked already)"
    convention: str | None = None
    aggregation: Mapping[str, str] = field(default_factory=dict)
    users_evaluated: int = 0
    users_scored: Mapping[str, int] = field(default_factory=dict)
    users_dropped_not_in_truth: int = 0
    users_without_list: int | None = None
    cold_start: ColdStart = COLD_START_DEFAULT
    users_cold: int | None = None
    users_cold_without_list: int | None = None
    estimators: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    not_applicable: tuple[str, ...] | None = None
    shards: int | None = None
    executor: str | None = None
    sampled: Mapping[str, Mapping[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON: every field, the last four only when set."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name in _OPTIONAL and value is None:
                continue
            if isinstance(value, tuple | Mapping):
                value = list(value) if isinstance(value, tuple) else dict(value)
            out[name] = value
        return out


_OPTIONAL = ("not_applicable", "shards", "executor", "sampled")


class EvaluationResult:
    """What :func:`evaluate` returns.

    Attributes
    ----------
    per_user : DataFrame
        Column ``user`` (original ids) and one column per per-user metric, named by
        the metric string as given (NaN = the user is not scored by that metric);
        built on first access (a command that prints only the summary never imports
        pandas).
    summary : dict
        ``{metric string: aggregated value}`` in the order given.
    conventions : Conventions
        Thresholds, empty-user policy, tie-break, aggregation of each metric, the
        number of users scored by each metric and of users dropped
        (``conventions.to_dict()`` for JSON).
    overfitting : OverfittingCheck or None
        With ``barrier=`` and an RMSE metric: the comparison of the users' RMSE with
        their magic barrier (``flagged`` when below: the model fits rating noise).
    rankings : ndarray or None
        From :func:`evaluate_model`: the top-k item indices (padded with -1) of the
        evaluated users, one row per row of ``per_user`` (``None`` without list metrics).
    predictions : DataFrame or None
        From :func:`evaluate_model` with a rating predictor and error metrics: the
        predictions ``user, item, prediction`` on the evaluated test pairs (original ids).
    groups : dict or None
        With ``evaluate(user_groups=)``: ``{metric: GroupGap}`` (:func:`receval.stats.groups.group_gaps`).
    """

    def __init__(
        self,
        per_user: pd.DataFrame | Mapping[str, np.ndarray],
        summary: dict[str, float],
        conventions: Conventions,
        overfitting: OverfittingCheck | None = None,
        rankings: np.ndarray | None = None,
        predictions: pd.DataFrame | None = None,
    ) -> None:
        self._per_user = per_user
        self.summary = summary
        self.conventions = conventions
        self.overfitting = overfitting
        self.rankings = rankings
        self.predictions = predictions
        self.groups: dict[str, GroupGap] | None = None  # evaluate(user_groups=): {metric: gap between user groups}

    @property
    def per_user(self) -> pd.DataFrame:
        """The per-user table (a DataFrame, built from the columns on first access)."""
        if isinstance(self._per_user, Mapping):
            import pandas as pd

            self._per_user = pd.DataFrame(self._per_user)
        return self._per_user

    @per_user.setter
    def per_user(self, table: pd.DataFrame) -> None:
        self._per_user = table

    def to_frame(self) -> pd.DataFrame:
        """The summary as a one-column DataFrame indexed by metric string."""
        import pandas as pd

        return pd.DataFrame({"value": self.summary}).rename_axis("metric")

    def __repr__(self) -> str:
        users = self._per_user["user"] if isinstance(self._per_user, Mapping) else self._per_user
        lines = [f"<EvaluationResult: {len(users)} users>"]
        lines += [f"  {name}: {value:.6g}" for name, value in self.summary.items()]
        return "\n".join(lines)


def _resolved(spec: Metric) -> dict[str, Any]:
    """What a metric string resolved to: the canonical string, every parameter (JSON-able) and the preset."""
    params = {key: value if value is None or isinstance(value, bool | int | float | str) else str(value)
              for key, value in spec.params.items()}  # fmt: skip
    out = {"metric": str(spec), **params}
    if spec.convention is not None:
        out["preset"] = spec.convention
    return out


def _check_split(train: Interactions, test: Interactions, caller: str) -> None:
    """``train`` and ``test`` are Interactions over one id space (as :mod:`receval.split` makes them)."""
    for label, obj in (("train", train), ("test", test)):
        if not isinstance(obj, Interactions):
            raise DataError(f"{caller}: {label} must be a receval.Interactions, got {type(obj).__name__}")
    if not test.n_ratings:  # every metric would be NaN over 0 users, returned as a summary
        raise DataError(f"{caller}: test has no ratings: there is nothing to evaluate against")
    if (train.n_users, train.n_items) != (test.n_users, test.n_items):
        raise DataError(
            f"train ({train.n_users} users x {train.n_items} items) and test ({test.n_users} x {test.n_items}) "
            "must share one id space: split one Interactions with receval.split"
        )
