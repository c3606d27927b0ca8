"""One-shot evaluation: recommendation lists (or rating predictions) × truth × metrics.

:func:`evaluate` turns what users hold — DataFrames with original ids, or an item
index matrix from :func:`receval.recommenders.recommend` — into the metric kernels'
form (a rankings matrix padded with -1 and a truth CSR, aligned on the same users)
with vectorised factorising and sorting only, then computes every metric and
returns an :class:`EvaluationResult`.

Conventions (also written into ``EvaluationResult.conventions``):

- Evaluated users: those with at least one rating in the truth. A truth user with
  no recommendations gets an empty list (every accuracy metric 0). Users in the
  recommendations that are absent from the truth cannot be scored: a warning, and
  they are dropped (``unknown_users="error"`` raises instead).
- Ranking from scores: descending score, ties kept in input order; from ranks:
  ascending rank. Duplicate (user, item) rows and NaN scores are errors.
- ``threshold`` (λ, default 1 — trec_eval's ``relevance_level``): positive means
  rating ≥ λ. ``negative_threshold`` (default λ): negative means rating < it. Anti-
  metrics (fallout, anti_precision, fp, tn) need one of them given explicitly.
- ``empty_users``: users with no positive (fallout: no negative) item are left out
  of the mean (``"skip"``, NaN in ``per_user``) or scored 0 (``"zero"``).

Examples
--------
>>> import pandas as pd
>>> truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "rating": [5, 2, 4]})
>>> recs = pd.DataFrame({"user": ["a", "a", "b"], "item": ["y", "x", "z"], "score": [0.9, 0.5, 0.7]})
>>> res = evaluate(recs, truth, ["precision@2", "recall@2", "ndcg@2", "mrr"], threshold=4)
>>> {name: round(value, 4) for name, value in res.summary.items()}
{'precision@2': 0.25, 'recall@2': 0.5, 'ndcg@2': 0.3155, 'mrr': 0.25}
>>> res.per_user["mrr"].tolist()
[0.5, 0.0]
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp

from receval.data import _arrow
from receval.data.interactions import Interactions, aspect_matrix
from receval.data.tables import as_frame
from receval.data.vocab import dictionary_codes, mismatch
from receval.data.vocab import encode as _encode
from receval.data.vocab import extend as _extend
from receval.data.vocab import index_of as _index_of
from receval.errors import DataError, MetricError
from receval.metrics.registry import Metric, MetricInput, parse_metric, parse_metric_list
from receval.stats.propensity import PropensityModel, estimator_of, input_propensities
from receval.validate import check_number, check_threshold

if TYPE_CHECKING:
    import pandas as pd

    from receval.stats.barrier import MagicBarrier, OverfittingCheck

__all__ = ["EvaluationResult", "evaluate", "evaluate_model", "to_rankings"]
_log = logging.getLogger(__name__)


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
    conventions : dict
        Thresholds, empty-user policy, tie-break, aggregation of each metric, the
        number of users scored by each metric and of users dropped.
    overfitting : OverfittingCheck or None
        With ``barrier=`` and an RMSE metric: the comparison of the users' RMSE with
        their magic barrier (``flagged`` when below: the model fits rating noise).
    rankings : ndarray or None
        From :func:`evaluate_model`: the top-k item indices (padded with -1) of the
        evaluated users, one row per row of ``per_user`` (``None`` without list metrics).
    predictions : DataFrame or None
        From :func:`evaluate_model` with a rating predictor and error metrics: the
        predictions ``user, item, prediction`` on the evaluated test pairs (original ids).
    """

    def __init__(
        self,
        per_user: pd.DataFrame | Mapping[str, np.ndarray],
        summary: dict[str, float],
        conventions: dict[str, object] | None = None,
        overfitting: OverfittingCheck | None = None,
        rankings: np.ndarray | None = None,
        predictions: pd.DataFrame | None = None,
    ) -> None:
        self._per_user = per_user
        self.summary = summary
        self.conventions = {} if conventions is None else conventions
        self.overfitting = overfitting
        self.rankings = rankings
        self.predictions = predictions

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


def evaluate(
    recommendations: pd.DataFrame | np.ndarray | None,
    truth: Interactions | pd.DataFrame,
    metrics: Sequence[str | Metric] | str,
    *,
    train: Interactions | pd.DataFrame | None = None,
    threshold: float | None = None,
    negative_threshold: float | None = None,
    aspects: pd.DataFrame | None = None,
    predictions: pd.DataFrame | None = None,
    empty_users: Literal["skip", "zero"] = "skip",
    users: Sequence | np.ndarray | None = None,
    unknown_users: Literal["warn", "error"] = "warn",
    barrier: MagicBarrier | None = None,
    propensities: PropensityModel | Mapping[str, PropensityModel] | pd.DataFrame | None = None,
    mar_sample: Interactions | pd.DataFrame | None = None,
    user: str | None = None,
    item: str | None = None,
    rating: str | None = None,
    score: str | None = None,
    rank: str | None = None,
    timestamp: str | None = None,
) -> EvaluationResult:
    """Evaluate recommendation lists and/or rating predictions against held-out truth.

    Parameters
    ----------
    recommendations
        A DataFrame or ``pyarrow.Table`` (ids dictionary-encoded as
        :func:`receval.data.tables.read_table` gives them with ``arrow=True``: then
        nothing here imports pandas) with columns ``user``, ``item`` and ``score`` (higher first) or
        ``rank`` (1 first), original ids (LensKit's ``user_id``/``item_id`` and ranx's
        ``q_id``/``doc_id`` are recognised; other names through ``user=`` ...); a
        ``{user: {item: score}}`` dict (pytrec_eval), a list of ir-measures
        ``ScoredDoc`` tuples or a ``ranx.Run``;
        an int matrix of item indices (into the truth's item id space, padded with
        -1), one row per user of ``users`` (user indices of the truth; by default
        every user of the truth's id space); a float or scipy-sparse *score* matrix
        of the same rows × the truth's items (each row ranked by descending score,
        ties by item index; a sparse matrix ranks only its stored entries, a dense one
        every finite score); or ``None`` when only error metrics are asked.
    truth
        :class:`~receval.Interactions`, a DataFrame or ``pyarrow.Table`` ``user, item[, rating]``
        (without ``rating`` every truth item has rating 1 and graded metrics refuse),
        a ``{user: {item: grade}}`` dict or a ``ranx.Qrels``.
    metrics
        Metric strings (``"ndcg@10"``, ``"fallout@10(negative_threshold=3)"``) or
        :class:`~receval.metrics.Metric` objects; a single string may list several
        separated by commas.
    train
        Training ratings (popularity, profiles, G1) in the same original ids.
    threshold, negative_threshold
        Positive: rating ≥ ``threshold`` (default 1); negative: rating <
        ``negative_threshold`` (default ``threshold``).
    aspects
        Item aspects, a DataFrame ``item, aspect``; by default the truth's or the
        training data's aspects when they are :class:`Interactions` with aspects.
    predictions
        A DataFrame ``user, item, prediction[, rating]`` for RMSE/MAE (the rating is
        looked up in the truth when absent).
    empty_users
        Policy for users with no positive item: ``"skip"`` or ``"zero"``.
    unknown_users
        Users of the recommendations absent from the truth: ``"warn"`` and drop, or ``"error"``.
    barrier
        A magic-barrier estimate (:func:`receval.stats.barrier.magic_barrier`, from
        re-ratings of the same users): an RMSE below it is flagged in
        ``result.overfitting`` and by a warning.
    propensities, mar_sample
        For debiased estimates (``recall@10(estimator=snips,propensity=popularity)``,
        :mod:`receval.metrics.debiased`): fitted propensity models (or a DataFrame
        ``user, item, propensity`` for ``propensity=known``) and a missing-at-random
        sample of ratings (``naive-bayes``, ``wtd``); other models are fitted on
        ``train`` and the truth together. ``conventions["estimators"]`` records each
        metric's estimator and propensity model.
    user, item, rating, score, rank, timestamp
        Column names of the given DataFrames, when they are not receval's.
    """
    specs = _parse_metrics(metrics)
    names = {"user": user, "item": item, "rating": rating, "score": score, "rank": rank, "timestamp": timestamp}
    columns = {role: name for role, name in names.items() if name is not None}
    recommendations = as_frame(recommendations, "recommendations", columns)
    truth = as_frame(truth, "truth", columns)
    train = as_frame(train, "train", columns)
    predictions = as_frame(predictions, "predictions", columns)
    if hasattr(predictions, "column_names"):  # an Arrow table: predictions are checked as a DataFrame
        predictions = predictions.to_pandas()
    if empty_users not in ("skip", "zero"):
        raise MetricError(f"empty_users must be 'skip' or 'zero', got {empty_users!r}")
    if unknown_users not in ("warn", "error"):
        raise MetricError(f"unknown_users must be 'warn' or 'error', got {unknown_users!r}")
    graded = not (_is_table(truth) and "rating" not in _columns(truth))
    truth_data = truth if isinstance(truth, Interactions) else _frame_to_interactions(truth, "truth")
    thr, neg_thr = _thresholds(specs, threshold, negative_threshold, graded)
    # above the truth's top grade no item is positive: NaN over 0 users (below its lowest, every rated item is)
    check_threshold(thr, truth_data.scale.low, truth_data.scale.high, "threshold", below=True)
    check_number(neg_thr, "negative_threshold")

    if _is_score_matrix(recommendations):
        recommendations = _rank_scores(recommendations, users, truth_data, _needed_width(specs))
    all_items = truth_data.item_ids
    rec_users: Any = None  # with a DataFrame of recommendations: user and item indices, ordering values
    rec_items: Any = None
    order_values: Any = None
    descending = False
    n_dropped = 0
    if _is_table(recommendations):
        rec_users, rec_items, order_values, descending, new_items, n_dropped = _map_recommendations(
            recommendations, truth_data, unknown_users
        )
        all_items = _extend(all_items, new_items)
    train_data = None
    if train is not None:
        train_data = train if isinstance(train, Interactions) else _frame_to_interactions(train, "train")
        new = train_data.item_ids[_index_of(all_items, train_data.item_ids) < 0]
        all_items = _extend(all_items, new)
    n_items = len(all_items)

    truth_csr = _csr(truth_data, n_items)
    eval_users = np.flatnonzero(np.diff(truth_csr.indptr) > 0)
    truth_eval = truth_csr[eval_users] if len(eval_users) < truth_csr.shape[0] else truth_csr
    width = _needed_width(specs)

    rankings = np.full((len(eval_users), 0), -1, dtype=np.int32)
    if _is_table(recommendations):
        rankings = to_rankings(rec_users, rec_items, order_values, truth_data.n_users, width, descending=descending)
        if len(eval_users) < truth_data.n_users:
            rankings = rankings[eval_users]
    elif recommendations is not None:
        rankings = _matrix_input(recommendations, users, truth_data, eval_users, width, n_items)
    _check_duplicates(rankings, eval_users, truth_data, all_items)

    train_csr = train_all = None
    if train_data is not None:
        train_all, train_user_ids = _train_matrix(train_data, all_items)
        rows = _index_of(train_user_ids, truth_data.user_ids[eval_users])
        train_csr = _rows_or_empty(train_all, rows)
    aspect_matrix = _aspects(aspects, truth_data, train_data, all_items)
    pred = _predictions(predictions, truth_data, truth_csr, eval_users) if predictions is not None else None

    data = MetricInput(
        rankings,
        truth_eval,
        threshold=thr,
        negative_threshold=neg_thr,
        train=train_csr,
        train_all=train_all,
        aspects=aspect_matrix,
        rating_max=float(truth_data.scale.high),
        predictions=pred,
        empty_users=empty_users,
    )
    _check_needs(specs, data, graded)
    data.propensities = input_propensities(
        specs,
        data,
        eval_user_ids=truth_data.user_ids[eval_users],
        item_ids=all_items,
        truth=truth_data,
        train=train_data,
        predictions=predictions,
        given=propensities,
        mar_sample=mar_sample,
    )
    per_user = {"user": truth_data.user_ids[eval_users]}
    summary: dict[str, float] = {}
    scored: dict[str, int] = {}
    for label, spec in specs:
        values = None
        if spec.kind != "system":
            values = spec.per_user(data)
            per_user[label] = values
            scored[label] = int(np.count_nonzero(~np.isnan(values)))
        summary[label] = spec.compute(data, values)
    conventions: dict[str, object] = {
        "threshold": thr,
        "negative_threshold": neg_thr,
        "empty_users": empty_users,
        "tie_break": "descending score, ties in input order" if _has(recommendations, "score") else "ascending rank",
        "aggregation": {label: spec.aggregation for label, spec in specs},
        "users_evaluated": len(eval_users),
        "users_scored": scored,
        "users_dropped_not_in_truth": n_dropped,
        "users_without_list": None if recommendations is None else int(np.count_nonzero((rankings < 0).all(axis=1))),
        "estimators": {label: estimator_of(spec) for label, spec in specs if spec.kind != "system"},
        # what each metric string (aliases as typed) resolved to: the canonical metric and every parameter
        "metrics": {label: {"metric": str(spec), **_plain_params(spec.params)} for label, spec in specs},
    }
    result = EvaluationResult(per_user, summary, conventions)
    _log.info("evaluate: %d metrics computed over %d users", len(specs), len(eval_users))
    if barrier is not None:
        result.overfitting = _check_barrier(result, specs, barrier)
    return result


def _plain_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """A metric's parameters as JSON-able values (numbers, strings, None)."""
    return {key: value if value is None or isinstance(value, bool | int | float | str) else str(value)
            for key, value in params.items()}


def evaluate_model(
    model: Any,
    train: Interactions,
    test: Interactions,
    metrics: Sequence[str | Metric] | str,
    *,
    k: int = 10,
    threshold: float | None = None,
    seed: int = 0,
    exclude_train: bool = True,
    users: Sequence[int] | np.ndarray | None = None,
    fitted: bool = False,
    seed_model: bool = True,
    negative_threshold: float | None = None,
    empty_users: Literal["skip", "zero"] = "skip",
    aspects: pd.DataFrame | None = None,
    barrier: MagicBarrier | None = None,
    propensities: PropensityModel | Mapping[str, PropensityModel] | pd.DataFrame | None = None,
    mar_sample: Interactions | pd.DataFrame | None = None,
) -> EvaluationResult:
    """Fit a model on ``train``, rank and predict for the test users, evaluate: the one-shot protocol.

    The protocol's rules, written once (the experiment runner, the demo, the
    studies and the command line all call this):

    - **Model**: unless ``fitted``, a fresh copy (:func:`receval.recommenders.clone`;
      the given model is left untouched) is fitted on ``train``; with ``seed_model``
      its ``seed`` parameter, when it has one, is set to ``seed``. With ``fitted=True``
      the model is used as is (already fitted on ``train``'s id space).
    - **Users evaluated**: the test users with at least one rating, restricted to
      ``users`` (user indices of the shared id space) when given.
    - **Lists**: the top ``k`` items by the model's scores
      (:func:`receval.recommenders.recommend`, ties broken by ``seed``), the user's
      training items excluded when ``exclude_train``. Skipped when only error metrics
      are asked.
    - **Error metrics** (RMSE, MAE) use ``predict`` on the evaluated test pairs; a
      model without ``predict`` (a pure ranker) gets NaN for them (summary and
      per-user), and ``conventions["not_applicable"]`` names them.
    - The lists are evaluated with :func:`evaluate` against the test ratings of those
      users, ``train`` given for the metrics that need it.

    ``train`` and ``test`` must share one id space (as :mod:`receval.split` makes
    them). The result also carries the lists (``rankings``) and the predictions.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.recommenders import make
    >>> from receval.split import holdout
    >>> train, test = holdout(generate(60, 80, 1500, seed=0), test_fraction=0.2, seed=0)
    >>> res = evaluate_model(make("popularity"), train, test, ["precision@5", "rmse"], k=5, threshold=4)
    >>> res.rankings.shape == (res.conventions["users_evaluated"], 5)
    True
    >>> import math; math.isnan(res.summary["rmse"]), res.conventions["not_applicable"]
    (True, ['rmse'])
    >>> res2 = evaluate_model(make("biases"), train, test, "rmse")
    >>> 0.5 < res2.summary["rmse"] < 2.0
    True
    """
    from receval.recommenders import clone, recommend

    given = parse_metric_list(metrics) if isinstance(metrics, str) else list(metrics)
    specs = _parse_metrics(given)
    for label, obj in (("train", train), ("test", test)):
        if not isinstance(obj, Interactions):
            raise DataError(f"evaluate_model: {label} must be a receval.Interactions, got {type(obj).__name__}")
    if (train.n_users, train.n_items) != (test.n_users, test.n_items):
        raise DataError(
            f"train ({train.n_users} users x {train.n_items} items) and test ({test.n_users} x {test.n_items}) "
            "must share one id space: split one Interactions with receval.split"
        )
    if not fitted:
        t0 = time.perf_counter()
        model = clone(model, seed=seed if seed_model else None).fit(train)
        _log.info("%s fitted on %d ratings in %.2f s", type(model).__name__, train.n_ratings, time.perf_counter() - t0)
    truth = test
    if users is not None:
        wanted = np.zeros(test.n_users, dtype=bool)
        wanted[np.asarray(users, dtype=np.int64)] = True
        truth = test.subset(wanted[test.users])
    eval_users = np.unique(truth.users)
    errors = [label for label, spec in specs if spec.kind == "error"]
    ranking = [label for label, spec in specs if spec.kind != "error"]
    skipped = errors if errors and not hasattr(model, "predict") else []
    asked = [m for m, (label, _) in zip(given, _labelled(given), strict=True) if label not in skipped]

    items = None
    if ranking:
        items, _ = recommend(model, eval_users, int(k), exclude=train if exclude_train else None, seed=seed)
    predictions = None
    if errors and not skipped:
        import pandas as pd

        predictions = pd.DataFrame(
            {
                "user": truth.user_ids[truth.users],
                "item": truth.item_ids[truth.items],
                "prediction": np.asarray(model.predict(truth.users, truth.items), dtype=np.float64),
            }
        )
    if asked:
        result = evaluate(
            items,
            truth,
            asked,
            train=train,
            threshold=threshold,
            negative_threshold=negative_threshold,
            aspects=aspects,
            predictions=predictions,
            empty_users=empty_users,
            users=eval_users if items is not None else None,
            barrier=barrier,
            propensities=propensities,
            mar_sample=mar_sample,
        )
    else:  # only error metrics, for a model that cannot predict
        result = EvaluationResult(
            {"user": truth.user_ids[eval_users]}, {}, {"users_evaluated": len(eval_users)}
        )
    for label in skipped:
        result.per_user[label] = np.nan
    order = [label for label, _ in specs]
    result.summary = {label: result.summary.get(label, float("nan")) for label in order}
    result.per_user = result.per_user[["user", *(label for label in order if label in result.per_user.columns)]]
    result.conventions["not_applicable"] = skipped
    result.rankings = items
    result.predictions = predictions
    return result


def _check_barrier(result: EvaluationResult, specs, barrier: MagicBarrier) -> OverfittingCheck:
    label = next((label for label, spec in specs if spec.name == "rmse"), None)
    if label is None:
        raise MetricError("barrier= compares an RMSE with the magic barrier: add 'rmse' to the metrics")
    from receval.stats.barrier import check_overfitting

    per_user = result.per_user.set_index("user")[label].dropna()
    check = check_overfitting(per_user, barrier)
    if check.flagged:
        warnings.warn(check.message, RuntimeWarning, stacklevel=3)
    return check


# ----------------------------------------------------------------- conversion
def to_rankings(
    users: np.ndarray,
    items: np.ndarray,
    order: np.ndarray,
    n_users: int,
    width: int | None = None,
    *,
    descending: bool = False,
) -> np.ndarray:
    """An (n_users, width) item matrix padded with -1 from flat (user, item, order) rows.

    Within a user, items go by ascending ``order`` (``descending=True``: by
    descending order, for scores); ties keep the input order. Input already grouped
    by user and sorted skips the sort (the common case: a recommender's output).

    >>> to_rankings(np.array([1, 0, 1]), np.array([7, 8, 9]), np.array([2.0, 1.0, 1.0]), 3).tolist()
    [[8, -1], [9, 7], [-1, -1]]
    >>> to_rankings(np.array([0, 0]), np.array([7, 8]), np.array([0.1, 0.9]), 1, descending=True).tolist()
    [[8, 7]]
    """
    users = np.asarray(users)
    n = len(users)
    if n == 0:
        return np.full((n_users, 0 if width is None else width), -1, dtype=np.int32)
    starts = _ranked_blocks(users, order, descending)
    if starts is None:  # not one ranked block per user: sort (stable, so ties keep the input order)
        perm = np.lexsort((-order if descending else order, users))
        users, items = users[perm], items[perm]
        starts = np.flatnonzero(np.concatenate(([True], users[1:] != users[:-1])))
    lengths = np.diff(np.append(starts, n))
    full = int(lengths.max())
    width = full if width is None else min(width, full)
    out = np.full((n_users, width), -1, dtype=np.int32)
    if n == len(starts) * full:  # every list has the same length: the blocks are the rows, wherever they go
        out[users[starts]] = items.reshape(len(starts), full)[:, :width]
        return out
    position = np.arange(n, dtype=np.int64)
    position -= np.repeat(starts, lengths)
    keep = position < width
    out.ravel()[users[keep].astype(np.int64) * width + position[keep]] = items[keep]
    return out


def _ranked_blocks(users: np.ndarray, order: np.ndarray, descending: bool) -> np.ndarray | None:
    """Where each user's rows start, when every user's rows are one block ranked by ``order``; else None.

    A run as tools write it (user after user, each list ranked) needs no sort: the
    lists are scattered into the matrix from their blocks, whatever the users' order.

    >>> _ranked_blocks(np.array([5, 5, 2]), np.array([0.9, 0.1, 0.5]), True).tolist()
    [0, 2]
    >>> _ranked_blocks(np.array([5, 2, 5]), np.array([0.9, 0.5, 0.1]), True) is None  # user 5 twice
    True
    """
    change = users[1:] != users[:-1]
    ranked = order[1:] <= order[:-1] if descending else order[1:] >= order[:-1]
    if not (ranked | change).all():
        return None
    starts = np.flatnonzero(np.concatenate(([True], change)))
    if len(np.unique(users[starts])) < len(starts):
        return None
    return starts


def _has(recommendations: object, column: str) -> bool:
    return _is_table(recommendations) and column in _columns(recommendations)


def _is_table(obj: object) -> bool:
    """A pandas DataFrame or a pyarrow Table (recognised without importing either)."""
    module = type(obj).__module__
    return (module.startswith("pandas") and hasattr(obj, "columns")) or (
        module.startswith("pyarrow") and hasattr(obj, "column_names")
    )


def _columns(table: Any) -> list[str]:
    return list(table.column_names) if hasattr(table, "column_names") else list(table.columns)


def _numbers(table: Any, column: str) -> np.ndarray:
    """A column as float64; what is not a number becomes NaN (the caller names it)."""
    values = table[column]
    if hasattr(table, "column_names"):  # Arrow: numbers arrive as numbers from the reader
        if _arrow.is_numeric(values):
            return _arrow.numbers(values).astype(np.float64, copy=False)
        values = values.to_pandas()
    import pandas as pd

    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)


def _value(table: Any, column: str, row: int) -> Any:
    """The cell of a column at a row position (for messages)."""
    values = table[column]
    if hasattr(values, "iloc"):  # pandas: by position, whatever the index
        return values.iloc[row]
    return values[row].as_py()


def _ids_at(column: Any, rows: np.ndarray) -> np.ndarray:
    """The ids of some rows of an id column (Arrow, pandas or numpy), as an array."""
    dictionary = dictionary_codes(column)
    if dictionary is not None:
        codes, categories = dictionary
        return categories[codes[rows]]
    return np.asarray(column)[rows]


def _distinct(column: Any, rows: np.ndarray) -> int:
    """How many distinct ids the rows ``rows`` of an id column hold (a missing id counts once)."""
    dictionary = dictionary_codes(column)
    if dictionary is not None:
        return len(np.unique(dictionary[0][rows]))
    import pandas as pd

    return len(pd.unique(np.asarray(column)[rows]))


def _first_seen(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes renumbered in order of first appearance, and the original code of each new one.

    (``pandas.factorize`` of ``codes``.)

    >>> [c.tolist() for c in _first_seen(np.array([7, 3, 7, 5]))]
    [[0, 1, 0, 2], [7, 3, 5]]
    """
    unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inverse], unique[order]


def _labelled(metrics: Sequence[str | Metric]) -> list[tuple[str, Metric]]:
    """(label, parsed metric) of each metric: the string as given, or the Metric's canonical string."""
    out = []
    for m in metrics:
        spec = parse_metric(m)
        out.append((m.strip() if isinstance(m, str) else str(spec), spec))
    return out


def _parse_metrics(metrics: Sequence[str | Metric] | str) -> list[tuple[str, Metric]]:
    if isinstance(metrics, str):
        metrics = parse_metric_list(metrics)
    if not metrics:
        raise MetricError("no metrics asked; give e.g. metrics=['ndcg@10', 'recall@10']")
    out, seen = [], set()
    for label, spec in _labelled(metrics):
        if label not in seen:
            seen.add(label)
            out.append((label, spec))
    return out


def _thresholds(specs, threshold, negative_threshold, graded) -> tuple[float, float]:
    thr = 1.0 if threshold is None else float(threshold)
    neg = thr if negative_threshold is None else float(negative_threshold)
    if neg > thr:
        raise MetricError(
            f"negative_threshold {neg:g} is above threshold {thr:g}: an item would be both positive and negative; "
            "give negative_threshold ≤ threshold"
        )
    for label, spec in specs:
        if spec.definition.needs_negatives:
            if not graded:
                raise MetricError(f"metric {label!r} needs negative ratings, but the truth has no rating column")
            if threshold is None and negative_threshold is None and spec.params.get("negative_threshold") is None:
                raise MetricError(
                    f"metric {label!r} counts negatives: give threshold= (and optionally negative_threshold=), "
                    "e.g. threshold=4 on a 1-5 scale, so that ratings below it are negative"
                )
    return thr, neg


def _frame_to_interactions(frame: Any, what: str) -> Interactions:
    if not _is_table(frame):
        raise MetricError(f"{what} must be an Interactions or a DataFrame, got {type(frame).__name__}")
    if len(frame) == 0:
        raise MetricError(f"the {what} has no rows: there is nothing to evaluate against")
    columns = _columns(frame)
    for col in ("user", "item"):
        if col not in columns:
            raise MetricError(f"{what} needs columns 'user' and 'item'; it has {columns}", column=col)
    return Interactions.from_frame(frame, rating="rating" if "rating" in columns else None, name=what)


def _map_recommendations(recs: Any, truth: Interactions, unknown_users: str):
    """Rows of a recommendation table as truth indices, in the table's order.

    Returns user and item indices (items the truth does not know numbered after its
    own, in order of first appearance in the lists), ordering values, whether they
    descend, the ids of those unknown items, and the number of users dropped.
    """
    columns = _columns(recs)
    missing = [c for c in ("user", "item") if c not in columns]
    if missing:
        raise MetricError(f"recommendations need columns user, item and score or rank; missing {missing}")
    if "score" in columns:
        values = _numbers(recs, "score")
        bad = np.isnan(values)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise MetricError(
                f"score of user {_value(recs, 'user', j)!r}, item {_value(recs, 'item', j)!r} (row {j}) is missing "
                "or not a number; drop the row or give it a score",
                column="score",
            )
        order, descending = values, True
    elif "rank" in columns:
        order, descending = _numbers(recs, "rank"), False
        with np.errstate(invalid="ignore"):
            bad = ~(order >= 1) | (order != np.floor(order))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise MetricError(
                f"rank {order[j]:g} of row {j + 1}: ranks are positive integers (1 first)", column="rank"
            )
    else:
        raise MetricError(f"recommendations need a 'score' or a 'rank' column; they have {columns}")
    users = _index_of(truth.user_ids, recs["user"])  # dictionary-encoded ids: each distinct one looked up once
    items = _index_of(truth.item_ids, recs["item"])
    rows = None  # the table's row of each row kept (None: every row)
    unknown = users < 0
    n_dropped = 0
    if len(users) and unknown.all():
        raise DataError(mismatch(truth.user_ids, recs["user"], "user"))
    if unknown.any():
        bad_rows = np.flatnonzero(unknown)
        bad_ids = _ids_at(recs["user"], bad_rows)
        n_dropped = _distinct(recs["user"], bad_rows)
        message = f"{n_dropped} user(s) of the recommendations have no truth (e.g. {bad_ids[0]!r}) and cannot be scored"
        if unknown_users == "error":
            raise MetricError(message + "; evaluate only users of the test set")
        warnings.warn(message + "; they are left out", UserWarning, stacklevel=3)
        rows = np.flatnonzero(~unknown)
        users, order, items = users[rows], order[rows], items[rows]
    if len(items) and (items < 0).all():
        raise DataError(mismatch(truth.item_ids, recs["item"], "item"))
    new_ids = np.zeros(0, dtype=object)
    unseen = np.flatnonzero(items < 0)
    if len(unseen):  # items the truth never saw: part of the catalogue, numbered as the lists name them
        unseen = unseen[np.argsort(users[unseen], kind="stable")]
        codes, ids = _encode(_ids_at(recs["item"], unseen if rows is None else rows[unseen]), what="item id")
        first, new = _first_seen(codes)
        items[unseen] = len(truth.item_ids) + first
        new_ids = ids[new]
    return users, items, order, descending, new_ids, n_dropped


def _is_score_matrix(recommendations: object) -> bool:
    if sp.issparse(recommendations):
        return True
    return isinstance(recommendations, np.ndarray) and recommendations.ndim == 2 and recommendations.dtype.kind == "f"


def _rank_scores(scores, users, truth: Interactions, width: int | None) -> np.ndarray:
    """Item-index lists from a score matrix (rows: ``users`` or every truth user; columns: the truth's items).

    Each row ranks by descending score, ties by item index; a sparse matrix ranks only
    its stored entries, a dense one every finite score (-inf or NaN: not recommended).
    """
    n_rows = truth.n_users if users is None else len(np.asarray(users))
    if scores.shape != (n_rows, truth.n_items):
        rows_meant = "truth users" if users is None else "entries of users="
        raise DataError(
            f"the score matrix is {scores.shape[0]} x {scores.shape[1]}, but there are {n_rows} {rows_meant} and "
            f"{truth.n_items} truth items: give scores over the truth's id space (an Interactions from "
            "receval.split keeps the whole data set's), or pass users= for the rows"
        )
    if sp.issparse(scores):
        m = sp.coo_matrix(scores)
        ok = np.isfinite(m.data)
        rows, cols, values = m.row[ok], m.col[ok], m.data[ok]
        order = np.lexsort((cols, rows))
        rows, cols, values = rows[order], cols[order], values[order]
    else:
        values_all = np.where(np.isnan(scores), -np.inf, scores)
        keep = np.isfinite(values_all)
        if width is not None and width < scores.shape[1]:  # only the top width per row (and ties) can be listed
            kth = -np.partition(-values_all, width - 1, axis=1)[:, width - 1 : width]
            keep &= values_all >= kth
        rows, cols = np.nonzero(keep)
        values = values_all[rows, cols]
    return to_rankings(rows, cols.astype(np.int32), values, n_rows, width, descending=True)


def _needed_width(specs: list[tuple[str, Metric]]) -> int | None:
    ks = [spec.k for _, spec in specs if spec.kind != "error"]
    if not ks or any(k is None for k in ks):
        return None
    return max(k for k in ks if k is not None)


def _matrix_input(matrix, users, truth: Interactions, eval_users, width, n_items) -> np.ndarray:
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.dtype.kind not in "iu":
        raise MetricError(
            f"a recommendation matrix must be a 2-D int array of item indices, got {matrix.dtype} {matrix.shape}"
        )
    if users is None:
        if matrix.shape[0] != truth.n_users:
            raise MetricError(
                f"the recommendation matrix has {matrix.shape[0]} rows but the truth has {truth.n_users} users; "
                "pass users= (the truth user index of each row)"
            )
        users = np.arange(truth.n_users)
    users = np.asarray(users)
    if len(users) != matrix.shape[0]:
        raise MetricError(f"users has {len(users)} entries for {matrix.shape[0]} rows of recommendations")
    if matrix.size and (matrix.max() >= n_items or matrix.min() < -1):
        raise MetricError(f"item indices must lie in -1..{n_items - 1} (-1 = padding)")
    if width is not None:
        matrix = matrix[:, :width]
    full = np.full((truth.n_users, matrix.shape[1]), -1, dtype=np.int32)
    full[users] = matrix
    return full[eval_users]


def _check_duplicates(rankings: np.ndarray, eval_users, truth: Interactions, all_items) -> None:
    if rankings.shape[1] < 2:
        return
    s = np.sort(rankings, axis=1)
    dup = (s[:, 1:] == s[:, :-1]) & (s[:, 1:] >= 0)
    if dup.any():
        row, col = np.argwhere(dup)[0]
        raise MetricError(
            f"user {truth.user_ids[eval_users[row]]!r} is recommended item {all_items[s[row, col]]!r} more than once; "
            "each item may appear once per list (deduplicate the recommendations)"
        )


def _csr(data: Interactions, n_items: int) -> sp.csr_matrix:
    """Users x items CSR of the ratings; repeated (user, item) pairs are an error.

    Built straight from the rows (scipy sums repeats, so fewer stored entries than
    rows means repeats) instead of a separate uniqueness pass.
    """
    m = sp.csr_matrix((data.ratings, (data.users, data.items)), shape=(data.n_users, n_items))
    if m.nnz != data.n_ratings:
        raise DataError(
            f"the {data.name or 'truth'} has {data.n_ratings - m.nnz} repeated (user, item) ratings; "
            "keep one per pair (Interactions.deduplicate('last' or 'mean'))"
        )
    m.sort_indices()
    return m


def _train_matrix(train: Interactions, all_items: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    if train.has_duplicates:
        train = train.deduplicate("last")
    item_map = _index_of(all_items, train.item_ids)
    m = sp.csr_matrix(
        (train.ratings.astype(np.float64), (train.users, item_map[train.items])), shape=(train.n_users, len(all_items))
    )
    m.sort_indices()
    return m, train.user_ids


def _rows_or_empty(matrix: sp.csr_matrix, rows: np.ndarray) -> sp.csr_matrix:
    """Rows of ``matrix`` (an empty row where ``rows < 0``)."""
    present = rows >= 0
    picked = matrix[np.where(present, rows, 0)]
    return sp.diags(present.astype(np.float64)) @ picked if not present.all() else picked


def _aspects(aspects, truth: Interactions, train: Interactions | None, all_items) -> sp.csr_matrix | None:
    if aspects is not None:
        if not _is_table(aspects) or not {"item", "aspect"} <= set(_columns(aspects)):
            raise MetricError("aspects must be a DataFrame with columns 'item' and 'aspect'")
        m, _ = aspect_matrix(aspects, all_items, unknown="drop")  # items no list or truth holds do not matter
        return m if m.shape[1] else sp.csr_matrix((len(all_items), 1))
    for source in (truth, train):
        if source is not None and source.aspects is not None:
            rows = _index_of(all_items, source.item_ids)
            a = source.aspects.tocoo()
            return sp.csr_matrix((a.data, (rows[a.row], a.col)), shape=(len(all_items), a.shape[1]))
    return None


def _predictions(frame: pd.DataFrame, truth: Interactions, truth_csr, eval_users) -> tuple:
    import pandas as pd

    missing = [c for c in ("user", "item", "prediction") if c not in frame.columns]
    if missing:
        raise MetricError(f"predictions need columns user, item, prediction[, rating]; missing {missing}")
    pred = pd.to_numeric(frame["prediction"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.isfinite(pred).all():
        j = int(np.flatnonzero(~np.isfinite(pred))[0])
        raise MetricError(f"prediction of row {j + 1} is missing or not a finite number", column="prediction")
    users = _index_of(truth.user_ids, frame["user"].to_numpy())
    row_of_user = np.full(truth.n_users, -1)
    row_of_user[eval_users] = np.arange(len(eval_users))
    rows = np.where(users >= 0, row_of_user[np.maximum(users, 0)], -1)
    if (rows < 0).any():
        j = int(np.flatnonzero(rows < 0)[0])
        raise MetricError(f"prediction for user {frame['user'].iloc[j]!r} (row {j}): the user has no truth ratings")
    if "rating" in frame.columns:
        ratings = pd.to_numeric(frame["rating"], errors="coerce").to_numpy(dtype=np.float64)
    else:
        items = _index_of(truth.item_ids, frame["item"].to_numpy())
        ratings = np.full(len(frame), np.nan)
        ok = items >= 0
        from receval.metrics.registry import lookup

        ratings[ok] = lookup(truth_csr[users[ok]], items[ok, None]).ravel()
    if np.isnan(ratings).any():
        j = int(np.flatnonzero(np.isnan(ratings))[0])
        raise MetricError(
            f"no true rating for the prediction of user {frame['user'].iloc[j]!r}, item {frame['item'].iloc[j]!r} "
            f"(row {j}); give a rating column or predict only test pairs"
        )
    repeated = frame.duplicated(["user", "item"]).to_numpy()
    if repeated.any():  # counted twice in RMSE and MAE otherwise
        j = int(np.flatnonzero(repeated)[0])
        raise MetricError(
            f"user {frame['user'].iloc[j]!r}, item {frame['item'].iloc[j]!r} (row {j + 1}) is predicted twice; "
            "keep one prediction per pair"
        )
    return rows, ratings, pred


def _check_needs(specs: list[tuple[str, Metric]], data: MetricInput, graded: bool) -> None:
    for label, spec in specs:
        d = spec.definition
        if d.needs_grades and not graded and spec.params.get("gain", "linear") != "binary":
            raise MetricError(
                f"metric {label!r} needs graded truth but the truth has no rating column; "
                f"add ratings or use {spec.name}@{spec.k}(gain=binary)"
            )
        if d.needs_train and data.train_all is None:
            raise MetricError(f"metric {label!r} needs training data: pass train= (or --train FILE)")
        if d.needs_aspects and data.aspects is None:
            raise MetricError(f"metric {label!r} needs item aspects: pass aspects= (or --aspects FILE)")
        if d.needs_predictions and data.predictions is None:
            raise MetricError(f"metric {label!r} needs rating predictions: pass predictions= (or --predictions FILE)")
        if spec.kind != "error" and data.rankings.shape[1] == 0 and data.predictions is not None:
            raise MetricError(f"metric {label!r} needs recommendation lists; only predictions were given")
