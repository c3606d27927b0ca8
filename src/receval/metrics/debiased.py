"""Debiased estimators: what a missing-at-random (MAR) test set would have said.

Observed test ratings are missing not at random: users rate what they know, so the
naive average over them over-rewards popular items. The estimators here reweight
each observed test rating ``(u, i)`` by its propensity ``p(u, i)`` (the probability it
was observed; :mod:`receval.stats.propensity` fits them) and target the value the
metric would take on the *complete* data — every (user, item) pair rated, which is what
a MAR test set estimates. A metric string selects one:
``recall@10(estimator=snips,propensity=popularity)``.

Estimators (``w = 1 / p``):

- ``naive`` — today's value, the average over the observed ratings.
- ``ips`` — inverse propensity scoring (Horvitz–Thompson): every sum over the complete
  data is replaced by the ``w``-weighted sum over the observed ratings; sums in a
  metric's normaliser that range over the truth (recall's number of positives, nDCG's
  ideal DCG — built from the weighted truth, each rating filling ``w`` slots — AP's
  positives, Fallout's negatives) are estimated the same way, and known normalisers
  stay (precision's k; the number of (user, item) pairs for RMSE/MAE) (Schnabel et
  al., ICML 2016; Yang et al., RecSys 2018). Hit rate uses the unbiased product form
  ``1 − Π_{hits}(1 − w)``. AP's precision at a hit counts the hit itself once.
- ``snips`` — self-normalised IPS: the weights are rescaled so that they sum to the
  number of (user, item) pairs they stand for (Swaminathan & Joachims, NeurIPS 2015;
  Schnabel et al., 2016; Yang et al., 2018). Ratio metrics whose normaliser is itself
  an IPS sum of the same weights (recall, Fallout) are invariant to that scale, so
  their SNIPS value equals the IPS value; for the others (precision, hit rate,
  anti-precision, nDCG — whose ideal DCG fills at most k ranks —, AP, the error
  metrics) it differs.
- ``dr`` — doubly robust rating error (Wang, Zhang, Sun & Qi, ICML 2019): ``(1/N)(Σ_all
  ê + Σ_obs (e − ê) w)`` with the imputed error ``ê`` of an item the SNIPS mean error
  of its observed predictions (the global SNIPS mean for items without any); only
  ``rmse`` and ``mae``.
- ``stratified`` — propensity-stratified evaluation (Jadidinejad, Macdonald & Ounis,
  TOIS 2021, as Cornac's ``PropensityStratifiedEvaluation``): the test ratings are
  split into ``n_strata`` equal-width bins of propensity from 0.99 × the smallest to
  1.01 × the largest (Cornac's edges), the metric is computed
  naively on each, and the values are averaged weighted by each stratum's share of
  the test ratings. A stratum whose value is undefined (no user of it scored: no
  relevant rating for recall) is left out and the other shares renormalised, where
  Cornac's weighted sum is NaN.
- ``wtd`` / ``wtd_h`` — weighted sampling of the test set (Carraro & Bridge, JIIS 2022):
  ``n_samples`` samples of ``sample`` × the test ratings, drawn without replacement
  with probability ∝ ``w`` (seeded by ``sample_seed``), each evaluated naively; the value is
  their mean. ``wtd`` weights by the ratio of the MAR sample's user and item
  frequencies to the observed ones (propensity ``frequency-mar``), ``wtd_h`` assumes a
  uniform MAR distribution (propensity ``frequency``).

``propensity=auto`` (the default) means ``popularity`` for ``ips``, ``snips``, ``dr`` and
``stratified``, ``frequency-mar`` for ``wtd`` and ``frequency`` for ``wtd_h``.
Users whose observed test data leave a metric undefined follow the metric's empty-user
policy, as in the naive estimate.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> from receval.metrics.registry import MetricInput, parse_metric
>>> truth = sp.csr_matrix(np.array([[5.0, 4.0, 0, 1.0]]))  # items 0, 1 positive, 3 negative
>>> p = Propensities(truth=np.array([0.5, 0.25, 0.5]), population=4.0, model="known")
>>> data = MetricInput(np.array([[0, 2, 3]]), truth, threshold=4, propensities={"known": p})
>>> parse_metric("recall@3").compute(data)
0.5
>>> parse_metric("recall@3(estimator=ips,propensity=known)").compute(data)  # 2 / (2 + 4)
0.3333333333333333
>>> parse_metric("precision@3(estimator=ips,propensity=known)").compute(data)  # 2 / 3
0.6666666666666666
>>> parse_metric("precision@3(estimator=snips,propensity=known)").compute(data)  # weights x 4 / 8
0.3333333333333333
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from receval._jit import njit
from receval.data.csr import CSR
from receval.errors import MetricError
from receval.metrics import _definition
from receval.metrics._definition import DEBIAS_DEFAULTS

if TYPE_CHECKING:
    import scipy.sparse as sp

    from receval.metrics._definition import Metric
    from receval.metrics._input import MetricInput

__all__ = [
    "DEBIAS_DEFAULTS",
    "ESTIMATORS",
    "HT_METRICS",
    "Propensities",
    "base_metric",
    "debiased_per_user",
    "debiased_value",
    "estimate",
    "estimate_per_user",
    "ht_parts",
    "propensity_name",
    "sample_values",
]

ESTIMATORS = ("naive", "ips", "snips", "dr", "stratified", "wtd", "wtd_h")
# metrics with a Horvitz–Thompson (IPS/SNIPS) form; every user/error metric takes stratified and wtd
HT_METRICS = ("precision", "recall", "hit_rate", "ndcg", "map", "fallout", "anti_precision", "rmse", "mae")
_AUTO = {"wtd": "frequency-mar", "wtd_h": "frequency"}


@dataclass(frozen=True)
class Propensities:
    """Propensities aligned with a :class:`MetricInput`.

    Attributes
    ----------
    truth : float array
        ``p`` of each stored truth rating, in the truth CSR's ``data`` order.
    population : float
        Number of (user, item) pairs of the evaluated users the complete data has
        (normaliser of IPS error metrics and of SNIPS weights).
    predictions : float array or None
        ``p`` of each rating prediction (error metrics), aligned with
        ``MetricInput.predictions``.
    prediction_items : int array or None
        Item index of each prediction (the doubly robust imputation is per item).
    n_items : int
        Items of the catalogue the population spans.
    model : str
        Name of the propensity model (recorded with the result).
    """

    truth: np.ndarray
    population: float
    predictions: np.ndarray | None = None
    prediction_items: np.ndarray | None = None
    n_items: int = 0
    model: str = ""


def propensity_name(params: Mapping[str, Any]) -> str:
    """The propensity model a metric's parameters ask for (``auto`` resolved).

    Returns
    -------
    str
        A propensity model name (:func:`receval.stats.propensity.propensity_models`).

    Examples
    --------
    >>> propensity_name({"estimator": "wtd_h", "propensity": "auto"})
    'frequency'
    >>> propensity_name({"estimator": "ips", "propensity": "naive-bayes"})
    'naive-bayes'
    """
    name = str(params.get("propensity", "auto"))
    if name != "auto":
        return name
    return _AUTO.get(str(params.get("estimator", "naive")), "popularity")


def base_metric(metric: Metric) -> Metric:
    """The same metric without its debiasing parameters (the naive estimate).

    Returns
    -------
    Metric
        The metric with ``estimator`` and ``propensity`` removed.

    Examples
    --------
    >>> from receval.metrics.registry import parse_metric
    >>> str(base_metric(parse_metric("recall@10(estimator=snips,propensity=popularity)")))
    'recall@10'
    """
    return replace(metric, params={k: v for k, v in metric.params.items() if k not in DEBIAS_DEFAULTS})


def check_params(metric: Metric, label: str) -> None:
    """Validate the debiasing parameters of a metric (raises :class:`MetricError`)."""
    p = metric.params
    est = p.get("estimator", "naive")
    if est not in ESTIMATORS:
        raise MetricError(f"metric {label!r}: unknown estimator {est!r}; choose one of {', '.join(ESTIMATORS)}")
    if est in ("ips", "snips") and metric.name not in HT_METRICS:
        raise MetricError(
            f"metric {label!r}: estimator={est} has no inverse-propensity form for {metric.name}; it is defined for "
            f"{', '.join(HT_METRICS)} — use estimator=stratified or wtd_h, which reweight the test set of any metric"
        )
    if est == "dr" and metric.kind != "error":
        raise MetricError(f"metric {label!r}: estimator=dr is the doubly robust rating error: use it with rmse or mae")
    if est in ("stratified", "wtd", "wtd_h") and metric.kind == "system":
        raise MetricError(f"metric {label!r}: a system-level metric has no test ratings to reweight")
    if not (isinstance(p.get("n_strata"), int) and p["n_strata"] >= 1):
        raise MetricError(f"metric {label!r}: n_strata must be a positive integer, got {p.get('n_strata')!r}")
    if not 0 < float(p.get("sample", 0.5)) <= 1:
        raise MetricError(f"metric {label!r}: sample is the share of test ratings drawn, in (0, 1]")
    if not (isinstance(p.get("n_samples"), int) and p["n_samples"] >= 1):
        raise MetricError(f"metric {label!r}: n_samples must be a positive integer")


def _props(metric: Metric, data: MetricInput) -> Propensities:
    name = propensity_name(metric.params)
    available = getattr(data, "propensities", None) or {}
    if name not in available:
        raise MetricError(
            f"metric {metric}: estimator={metric.params['estimator']} needs propensities {name!r} of the test "
            "ratings; evaluate(...) fits them (give train= so every test item has a popularity, mar_sample= for "
            "naive-bayes / wtd, propensities=DataFrame(user, item, propensity) for known)"
        )
    return available[name]


# ---------------------------------------------------------------- entry points
def debiased_per_user(metric: Metric, data: MetricInput) -> np.ndarray:
    """Per-user values of a metric under its estimator (NaN = not scored).

    Returns
    -------
    numpy.ndarray of float64
        One value per user row of ``data``; NaN for a user not scored.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from receval.metrics.registry import MetricInput, parse_metric
    >>> p = Propensities(truth=np.array([0.5, 0.25]), population=2.0, model="known")  # w = 2 and 4
    >>> data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4,
    ...                    propensities={"known": p})
    >>> debiased_per_user(parse_metric("precision@2(estimator=ips,propensity=known)"), data)  # (2 + 4) / 2
    array([3.])
    >>> debiased_per_user(parse_metric("precision@2"), data)  # naive: both items relevant
    array([1.])
    """
    est = metric.params.get("estimator", "naive")
    base = base_metric(metric)
    if est == "naive":
        return base.per_user(data)
    props = _props(metric, data)
    if est in ("stratified", "wtd", "wtd_h"):
        parts = _strata(metric, data, props) if est == "stratified" else _samples(metric, data, props)
        values = np.array([base.per_user(sub) for sub, _ in parts])
        shares = np.array([share for _, share in parts])[:, None] * ~np.isnan(values)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nansum(values * shares, axis=0) / shares.sum(axis=0)
    if metric.kind == "error":
        num, den = _error_parts(metric, data, props, per_user=True)
        values = np.divide(num, den, out=np.full(len(num), np.nan), where=den > 0)
        if metric.name == "rmse":  # a doubly robust MSE of one user may be negative: no RMSE (NaN)
            with np.errstate(invalid="ignore"):
                return np.sqrt(values)
        return values
    num, den, empty = _ranking_parts(metric, data, props)
    values = np.divide(num, den, out=np.zeros(len(num)), where=den > 0)
    values[empty] = np.nan if data.empty_users == "skip" else 0.0
    return values


def debiased_value(metric: Metric, data: MetricInput, per_user: np.ndarray | None = None) -> float:
    """The aggregated value of a metric under its estimator.

    Returns
    -------
    float
        The estimate over the users (NaN when none is scored).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from receval.metrics.registry import MetricInput, parse_metric
    >>> p = Propensities(truth=np.array([0.5, 0.25]), population=2.0, model="known")  # w = 2 and 4
    >>> data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4,
    ...                    propensities={"known": p})
    >>> debiased_value(parse_metric("recall@1(estimator=ips,propensity=known)"), data)  # 2 / (2 + 4)
    0.3333333333333333
    """
    est = metric.params.get("estimator", "naive")
    base = base_metric(metric)
    if est == "naive":
        return base.compute(data, per_user)
    props = _props(metric, data)
    if est in ("stratified", "wtd", "wtd_h"):
        parts = _strata(metric, data, props) if est == "stratified" else _samples(metric, data, props)
        values = np.array([base.compute(sub) for sub, _ in parts])
        shares = np.array([share for _, share in parts])
        ok = ~np.isnan(values)
        return float(np.sum(values[ok] * shares[ok]) / np.sum(shares[ok])) if ok.any() else float("nan")
    agg = metric.aggregation
    if metric.kind == "error":
        if agg == "macro":
            values = debiased_per_user(metric, data) if per_user is None else per_user
            scored = values[~np.isnan(values)]
            return float(scored.mean()) if scored.size else float("nan")
        num, den = _error_parts(metric, data, props, per_user=False)
        value = float(num[0] / den[0]) if den[0] > 0 else float("nan")
        return float(np.sqrt(value)) if metric.name == "rmse" else value
    if agg == "micro":
        num, den, empty = _ranking_parts(metric, data, props)
        keep = ~empty if data.empty_users == "skip" else np.ones(len(num), dtype=bool)
        total = float(den[keep].sum())
        return float(num[keep].sum()) / total if total > 0 else float("nan")
    values = debiased_per_user(metric, data) if per_user is None else per_user
    scored = values[~np.isnan(values)]
    return float(scored.mean()) if scored.size else float("nan")


def sample_values(metric: Metric, data: MetricInput) -> np.ndarray:
    """The value on each weighted sample (``wtd``/``wtd_h``): their spread is the interval.

    For the other estimators, one value (the estimate).

    Returns
    -------
    numpy.ndarray of float64
        One value per weighted sample for ``wtd``/``wtd_h``, else the estimate alone.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from receval.metrics.registry import MetricInput, parse_metric
    >>> p = Propensities(truth=np.array([0.5, 0.25]), population=2.0, model="known")  # w = 2 and 4
    >>> data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4,
    ...                    propensities={"known": p})
    >>> sample_values(parse_metric("recall@1(estimator=ips,propensity=known)"), data).round(4).tolist()
    [0.3333]
    """
    est = metric.params.get("estimator", "naive")
    if est not in ("wtd", "wtd_h"):
        return np.array([debiased_value(metric, data)])
    base = base_metric(metric)
    return np.array([base.compute(sub) for sub, _ in _samples(metric, data, _props(metric, data))])


# ---------------------------------------------------------- Horvitz–Thompson forms
def _weights(metric: Metric, props: Propensities, values: np.ndarray | None = None) -> np.ndarray:
    """``1 / p``, rescaled for SNIPS so that the weights of the test ratings sum to the population."""
    w_truth = 1.0 / np.asarray(props.truth, dtype=np.float64)
    w = w_truth if values is None else 1.0 / np.asarray(values, dtype=np.float64)
    if metric.params.get("estimator") == "snips":
        total = float(w_truth.sum())
        w = w * (props.population / total) if total > 0 else w
    return w


def _weights_at(data: MetricInput, w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``w`` of the truth rating at each ranked position where ``mask``; 0 elsewhere.

    Only the masked positions (hits) are looked up, by binary search of (row, item)
    in the row-major, column-sorted truth — cheaper than a second dense lookup.
    """
    truth = data.truth
    rows, cols = np.nonzero(mask)
    out = np.zeros(mask.shape, dtype=np.float64)
    if len(rows):
        entries = _entries(truth.indptr, truth.indices, rows, data.rankings[rows, cols])
        out[rows, cols] = w[entries]
    return out


@njit(cache=True)
def _entries(indptr, indices, rows, items):
    """Position in the CSR data of each (row, item), by binary search within the row's sorted columns."""
    out = np.empty(len(rows), dtype=np.int64)
    for j in range(len(rows)):
        lo, hi = indptr[rows[j]], indptr[rows[j] + 1]
        out[j] = lo + np.searchsorted(indices[lo:hi], items[j])
    return out


def _row_sums(truth: CSR | sp.csr_matrix, values: np.ndarray) -> np.ndarray:
    csum = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    return csum[truth.indptr[1:]] - csum[truth.indptr[:-1]]


def ht_parts(
    name: str, data: MetricInput, k: int | None, params: Mapping[str, Any], w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-user (numerator, denominator) of the IPS form of a ranking metric.

    ``w`` holds the weight of each stored truth rating (CSR order); ``params`` the base
    metric's parameters (thresholds, gain, denominator).

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        Per-user numerator and denominator (float64); the estimate of a user is their ratio.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from receval.metrics.registry import MetricInput
    >>> data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4)
    >>> num, den = ht_parts("recall", data, 1, {}, np.array([2.0, 4.0]))  # the hit weighs 2 of the 2 + 4 positives
    >>> num.tolist(), den.tolist()
    ([2.0], [6.0])
    """
    thr = data.threshold if params.get("threshold") is None else float(params["threshold"])
    truth = data.truth
    if name in ("fallout", "anti_precision"):
        neg_thr = params.get("negative_threshold")
        neg_thr = data.negative_threshold if neg_thr is None else float(neg_thr)
        ranked = (data.grades < neg_thr)[:, :k]
        in_truth = truth.data < neg_thr
    else:
        ranked = data.positive_at(thr)[:, :k]
        in_truth = truth.data >= thr
    wr = _weights_at(data, w, ranked)
    if name in ("precision", "anti_precision"):
        assert k is not None, "the registry requires k for precision and anti_precision"
        if params.get("denominator", "k") == "list":
            den = np.minimum(data.list_length, k).astype(np.float64)
        else:
            den = np.full(data.n_users, float(k))
        return wr.sum(axis=1), den
    n_class = _row_sums(truth, np.where(in_truth, w, 0.0))
    if name in ("recall", "fallout"):
        return wr.sum(axis=1), n_class
    if name == "hit_rate":
        return 1.0 - np.prod(1.0 - wr, axis=1), (n_class > 0).astype(np.float64)
    if name == "map":
        ranks = np.arange(1, wr.shape[1] + 1, dtype=np.float64)
        before = np.cumsum(wr, axis=1) - wr  # weighted hits ranked above each position
        total = (wr * (1.0 + before) / ranks).sum(axis=1)
        den = np.minimum(n_class, k) if k is not None and params.get("denominator", "all") == "min" else n_class
        return total, den
    if name == "ndcg":
        from receval.metrics.ranking import dcg_gains

        gain = params.get("gain", "linear")
        grades = data.grades[:, :k]
        discount = 1.0 / np.log2(np.arange(2, grades.shape[1] + 2, dtype=np.float64))
        dcg = (dcg_gains(grades, thr, gain) * discount * wr).sum(axis=1)
        gains = dcg_gains(truth.data.astype(np.float64), thr, gain)
        idcg = _weighted_idcg(truth.indptr, gains, np.asarray(w, dtype=np.float64), k)
        return dcg, idcg
    raise MetricError(f"no inverse-propensity form for metric {name!r}")


@njit(cache=True)
def _weighted_idcg(indptr, gains, weights, k):
    """Ideal DCG@k of each row when each rating fills ``weight`` rank slots (1 slot: the usual ideal DCG)."""
    n = len(indptr) - 1
    out = np.zeros(n)
    for u in range(n):
        a, b = indptr[u], indptr[u + 1]
        if b == a:
            continue
        g = gains[a:b]
        order = np.argsort(-g, kind="mergesort")
        filled = 0.0
        total = 0.0
        for t in order:
            if g[t] <= 0.0 or filled >= k:
                break
            end = filled + weights[a + t]
            slot = int(filled)
            while slot < k and slot < end:
                overlap = min(end, slot + 1.0) - max(filled, float(slot))
                if overlap > 0:
                    total += g[t] * overlap / np.log2(slot + 2.0)
                slot += 1
            filled = end
        out[u] = total
    return out


def _ranking_parts(metric: Metric, data: MetricInput, props: Propensities):
    """Per-user IPS numerator, denominator and the users the naive metric leaves empty."""
    base = base_metric(metric)
    num, den = ht_parts(metric.name, data, metric.k, base.params, _weights(metric, props))
    if metric.name == "anti_precision":
        return num, den, np.zeros(len(num), dtype=bool)
    if metric.name == "precision":
        thr = base.params.get("threshold")
        return num, den, data.n_positive_at(data.threshold if thr is None else float(thr)) == 0
    return num, den, den <= 0


def _error_parts(metric: Metric, data: MetricInput, props: Propensities, per_user: bool):
    from receval.metrics.error import errors_of

    if props.predictions is None:
        raise MetricError(
            f"metric {metric}: no propensities for the rating predictions; pass predictions= to evaluate",
            parameters=["predictions"],
        )
    base = base_metric(metric)
    rows, err = errors_of(data, base.params.get("round", False), base.params.get("rating_step", 1.0))
    e = err**2 if metric.name == "rmse" else np.abs(err)
    w = _weights(metric, props, props.predictions)
    n_items = float(max(props.n_items, 1))
    est = metric.params["estimator"]
    if est == "dr":
        imputed = _imputed_errors(e, w, props)
        extra = e - imputed[props.prediction_items]
        all_pairs = imputed.sum()  # Σ over a user's catalogue of the (item-wise) imputed error
        if per_user:
            users = np.bincount(rows, minlength=data.n_users) > 0
            num = np.where(users, all_pairs, 0.0) + np.bincount(rows, weights=extra * w, minlength=data.n_users)
            return num, np.where(users, n_items, 0.0)
        n_users = float(np.count_nonzero(np.bincount(rows, minlength=data.n_users)))
        return np.array([n_users * all_pairs + float((extra * w).sum())]), np.array([n_users * n_items])
    if per_user:
        num = np.bincount(rows, weights=e * w, minlength=data.n_users)
        den = (
            np.bincount(rows, weights=w, minlength=data.n_users)
            if est == "snips"
            else np.where(np.bincount(rows, minlength=data.n_users) > 0, n_items, 0.0)
        )
        return num, den
    total_weight = float(w.sum()) if est == "snips" else props.population
    return np.array([float((e * w).sum())]), np.array([total_weight])


def _imputed_errors(e: np.ndarray, w: np.ndarray, props: Propensities) -> np.ndarray:
    """Per catalogue item: the SNIPS mean error of its predictions (global mean for the others)."""
    if props.prediction_items is None:
        raise MetricError("estimator=dr needs the item of each prediction; evaluate(...) provides it")
    n = max(props.n_items, int(props.prediction_items.max(initial=-1)) + 1)
    num = np.bincount(props.prediction_items, weights=e * w, minlength=n)
    den = np.bincount(props.prediction_items, weights=w, minlength=n)
    overall = float((e * w).sum() / w.sum()) if w.sum() > 0 else 0.0
    return np.divide(num, den, out=np.full(n, overall), where=den > 0)[: max(props.n_items, 1)]


# ---------------------------------------------------------- reweighted test sets
def _restricted(data: MetricInput, entry_mask: np.ndarray | None, pred_mask: np.ndarray | None) -> MetricInput:
    """A copy of ``data`` keeping the selected truth ratings and predictions."""
    from receval.metrics._input import MetricInput

    truth = data.truth
    if entry_mask is not None:
        counts = np.bincount(
            np.repeat(np.arange(truth.shape[0]), np.diff(truth.indptr))[entry_mask], minlength=truth.shape[0]
        )
        indptr = np.concatenate(([0], np.cumsum(counts)))
        truth = CSR(indptr, truth.indices[entry_mask], truth.data[entry_mask], truth.shape)
    predictions = data.predictions
    if pred_mask is not None and predictions is not None:
        predictions = tuple(np.asarray(x)[pred_mask] for x in predictions)
    return MetricInput(
        data.rankings,
        truth,
        threshold=data.threshold,
        negative_threshold=data.negative_threshold,
        train=data.train,
        train_all=data.train_all,
        aspects=data.aspects,
        rating_max=data.rating_max,
        predictions=predictions,
        empty_users=data.empty_users,
    )


def _strata(metric: Metric, data: MetricInput, props: Propensities) -> list[tuple[MetricInput, float]]:
    """Equal-width propensity strata of the test ratings (of the predictions for error metrics)."""
    n = int(metric.params["n_strata"])
    p = props.predictions if metric.kind == "error" else props.truth
    if p is None:
        raise MetricError(
            f"metric {metric}: no propensities for the rating predictions; pass predictions=",
            parameters=["predictions"],
        )
    p = np.asarray(p, dtype=np.float64)
    # Cornac's bins, computed as Cornac computes them (to the bit): from 1% below the smallest propensity
    # to 1% above the largest, so that no propensity sits on the outer edges
    low, high = p.min() - 0.01 * p.min(), p.max() + 0.01 * p.max()
    stratum = np.clip(np.digitize(p, np.arange(low, high, (high - low) / n)) - 1, 0, n - 1)
    out = []
    for s in range(n):
        mask = stratum == s
        if mask.any():
            sub = _restricted(data, None, mask) if metric.kind == "error" else _restricted(data, mask, None)
            out.append((sub, float(mask.mean())))
    return out


def _samples(metric: Metric, data: MetricInput, props: Propensities) -> list[tuple[MetricInput, float]]:
    """Weighted samples without replacement (Efraimidis–Spirakis keys), probability ∝ 1/p."""
    p = props.predictions if metric.kind == "error" else props.truth
    if p is None:
        raise MetricError(
            f"metric {metric}: no propensities for the rating predictions; pass predictions=",
            parameters=["predictions"],
        )
    w = 1.0 / np.asarray(p, dtype=np.float64)
    size = max(1, round(float(metric.params["sample"]) * len(w)))
    rng = np.random.default_rng(int(metric.params["sample_seed"]))
    out = []
    for _ in range(int(metric.params["n_samples"])):
        keys = np.log(rng.random(len(w))) / w
        mask = np.zeros(len(w), dtype=bool)
        mask[np.argpartition(-keys, size - 1)[:size]] = True
        sub = _restricted(data, None, mask) if metric.kind == "error" else _restricted(data, mask, None)
        out.append((sub, 1.0))
    return out


def _with_defaults(metric: Metric) -> Metric:
    return replace(metric, params={**DEBIAS_DEFAULTS, **metric.params})


def estimate_per_user(metric: Metric, data: MetricInput) -> np.ndarray:
    """Per-user values of a metric with debiasing parameters (the others at their defaults, all checked).

    :meth:`Metric.per_user <receval.metrics.registry.Metric.per_user>` calls it for such a metric.

    Returns
    -------
    numpy.ndarray of float64
        One value per user row of ``data``; NaN for a user not scored.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from receval.metrics.registry import MetricInput, parse_metric
    >>> p = Propensities(truth=np.array([0.5, 0.25]), population=2.0, model="known")
    >>> data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4,
    ...                    propensities={"known": p})
    >>> estimate_per_user(parse_metric("precision@2(estimator=ips,propensity=known)"), data)  # (2 + 4) / 2
    array([3.])
    """
    full = _with_defaults(metric)
    check_params(full, str(metric))
    return debiased_per_user(full, data)


def estimate(metric: Metric, data: MetricInput, per_user: np.ndarray | None = None) -> float:
    """The aggregated value of a metric with debiasing parameters (reuses ``per_user`` values when given).

    :meth:`Metric.compute <receval.metrics.registry.Metric.compute>` calls it for such a metric.

    Returns
    -------
    float
        The estimate over the users (NaN when none is scored).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from receval.metrics.registry import MetricInput, parse_metric
    >>> p = Propensities(truth=np.array([0.5, 0.25]), population=2.0, model="known")
    >>> data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4,
    ...                    propensities={"known": p})
    >>> estimate(parse_metric("recall@1(estimator=ips,propensity=known)"), data)  # 2 / (2 + 4)
    0.3333333333333333
    """
    full = _with_defaults(metric)
    check_params(full, str(metric))
    return debiased_value(full, data, per_user)


_definition._ESTIMATION.update(per_user=estimate_per_user, compute=estimate)
