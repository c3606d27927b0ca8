"""Top-k accuracy metrics and the false-positive ("anti") metrics, vectorised over users.

Conventions (each a parameter where implementations disagree):

- A ranked item is **positive** (relevant) when its truth rating is ≥ ``threshold``
  and **negative** when it is < ``negative_threshold`` (≤ ``threshold``; by default
  equal, so every rated item is in exactly one class). Recommended items the user
  did not rate are **unknown**: they count in the list length but never as TP or FP.
  Every metric here also takes its own ``threshold=`` to override the global one.
- ``precision@k`` divides by k (trec_eval ``P_k``, ranx); ``denominator=list`` divides
  by the length of the (possibly shorter) list instead. ``agg=micro`` gives seed
  003's Σ|R(u)∩T(u)| / Σ|R(u)| (and Σ|R(u)∩T(u)| / Σ|T(u)| for recall).
- ``ndcg@k``: gain = rating (``gain=linear``, trec_eval), 2^rating − 1
  (``gain=exponential``, ranx ``ndcg_burges``) or 1 (``gain=binary``) for positive
  items, 0 otherwise; discount 1/log2(rank + 1); ideal DCG from the user's truth
  ratings sorted descending (not from the list).
- ``map@k``: AP@k = Σ_{i≤k, i positive} P@i / |positives| — trec_eval's ``map_cut``
  and ranx divide by *all* the user's positives; ``denominator=min`` divides by
  min(k, |positives|) instead.
- ``mrr[@k]``: 1 / rank of the first positive (0 if none in the top k).
- Users with no positive item in the truth: NaN (``empty_users="skip"``, left out of
  the mean) or 0 (``"zero"``); the same rule applies to Fallout for users with no
  negative item. A user with an empty list (and positives) scores 0
  (``empty_list="zero"``) or NaN (``empty_list="skip"``, LensKit's precision and AP).

Every other convention a library uses is a parameter too (``recall@k(denominator=min)``,
``ndcg@k(discount=clipped)``, ``map@k(denominator=k)`` ...); docs/conventions.md lists
which library uses which, and :mod:`receval.metrics.conventions` applies them by name.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> from receval.metrics.registry import MetricInput, parse_metric
>>> truth = sp.csr_matrix(np.array([[5.0, 0, 2, 4], [0, 3, 0, 1]]))
>>> data = MetricInput(np.array([[0, 1, 2], [3, 1, -1]]), truth, threshold=3)
>>> parse_metric("precision@3").per_user(data).round(4).tolist()
[0.3333, 0.3333]
>>> parse_metric("anti_precision@3").per_user(data).round(4).tolist()
[0.3333, 0.3333]
>>> parse_metric("recall@3").per_user(data).tolist(), parse_metric("fallout@3").per_user(data).tolist()
([0.5, 1.0], [1.0, 1.0])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

from receval.errors import MetricError
from receval.metrics._definition import Direction, Metric, register_metric
from receval.metrics._input import MetricInput, count_rows

if TYPE_CHECKING:
    import scipy.sparse as sp

    from receval.data.csr import CSR

__all__ = ["dcg_gains", "discount_sum", "harmonic_tail", "ideal_dcg", "pr_curve", "rank_discount"]

_THRESHOLD = {"threshold": None}
_NEG = {"negative_threshold": None}
# users with an empty list: scored 0 (their hits are 0) or skipped (LensKit's precision and AP: NaN)
EMPTY_LIST = ("zero", "skip")
_LIST = {"empty_list": "zero"}
# the vocabulary of each string parameter, checked when a metric string is read (register_metric choices=)
PRECISION_DENOMINATORS = ("k", "list")
RECALL_DENOMINATORS = ("all", "min")
MAP_DENOMINATORS = ("all", "min", "k", "min_list")
MAP_AVERAGES = ("positives", "ranks")
AUC_NEGATIVES = ("judged", "all")
IDEALS = ("truth", "full")


def _thr(data: MetricInput, threshold: float | None) -> float:
    return data.threshold if threshold is None else float(threshold)


def _hits(data: MetricInput, k: int | None, threshold: float | None) -> np.ndarray:
    """Boolean (n_users, min(k, width)) of positive ranked items."""
    pos = data.positive_at(_thr(data, threshold))
    return pos if k is None else pos[:, :k]


def _empty(values: np.ndarray, empty: np.ndarray, data: MetricInput, empty_list: str = "zero") -> np.ndarray:
    """Apply the empty-user policy to users flagged ``empty``, and the empty-list policy."""
    values = values.astype(np.float64, copy=False)
    values[empty] = np.nan if data.empty_users == "skip" else 0.0
    values[_skipped_lists(data, empty_list)] = np.nan
    return values


def _skipped_lists(data: MetricInput, empty_list: str) -> np.ndarray:
    """Users whose empty list is not scored (``empty_list="skip"``)."""
    if empty_list not in EMPTY_LIST:
        raise MetricError(f"empty_list must be one of {', '.join(EMPTY_LIST)}, got {empty_list!r}")
    if empty_list == "zero":
        return np.zeros(data.n_users, dtype=bool)
    return data.list_length == 0


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(np.shape(num), dtype=np.float64), where=den > 0)


def _list_denominator(data: MetricInput, k: int, denominator: str) -> np.ndarray:
    if denominator == "k":
        return np.full(data.n_users, float(k))
    if denominator == "list":
        return np.minimum(data.list_length, k).astype(np.float64)
    raise MetricError(f"denominator must be one of {', '.join(PRECISION_DENOMINATORS)}, got {denominator!r}")


def _precision_parts(
    data: MetricInput, k: int, threshold: float | None = None, denominator: str = "k", empty_list: str = "zero"
) -> tuple[np.ndarray, np.ndarray]:
    num = _hits(data, k, threshold).sum(axis=1).astype(np.float64)
    den = _list_denominator(data, k, denominator)
    keep = _keep(data, threshold, empty_list)
    return num * keep, den * keep


def _keep(data: MetricInput, threshold: float | None, empty_list: str = "zero") -> np.ndarray:
    """1 for users counted in micro sums (all, or only those with a positive under ``skip``, and a list
    under ``empty_list="skip"``)."""
    keep = np.ones(data.n_users) if data.empty_users == "zero" else data.n_positive_at(_thr(data, threshold)) > 0
    return (keep & ~_skipped_lists(data, empty_list)).astype(np.float64)


@register_metric(
    "precision",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    defaults={**_THRESHOLD, "denominator": "k", **_LIST},
    choices={"denominator": PRECISION_DENOMINATORS, "empty_list": EMPTY_LIST},
    micro=_precision_parts,
    description="Positives in the top k / k",
)
def precision(
    data: MetricInput, k: int, threshold: float | None = None, denominator: str = "k", empty_list: str = "zero"
) -> np.ndarray:
    """Positives in the top k divided by k (``denominator=k``) or by the list length (``list``, LensKit's)."""
    num = _hits(data, k, threshold).sum(axis=1)
    values = _safe_div(num, _list_denominator(data, k, denominator))
    return _empty(values, data.n_positive_at(_thr(data, threshold)) == 0, data, empty_list)


def _recall_denominator(data: MetricInput, k: int, threshold: float | None, denominator: str) -> np.ndarray:
    n_pos = data.n_positive_at(_thr(data, threshold)).astype(np.float64)
    if denominator == "all":
        return n_pos
    if denominator == "min":
        return np.minimum(n_pos, k)
    raise MetricError(f"recall denominator must be one of {', '.join(RECALL_DENOMINATORS)}, got {denominator!r}")


def _recall_parts(
    data: MetricInput, k: int, threshold: float | None = None, denominator: str = "all", empty_list: str = "zero"
) -> tuple[np.ndarray, np.ndarray]:
    keep = ~_skipped_lists(data, empty_list)
    num = _hits(data, k, threshold).sum(axis=1).astype(np.float64)
    return num * keep, _recall_denominator(data, k, threshold, denominator) * keep


@register_metric(
    "recall",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    defaults={**_THRESHOLD, "denominator": "all", **_LIST},
    choices={"denominator": RECALL_DENOMINATORS, "empty_list": EMPTY_LIST},
    micro=_recall_parts,
    description="Positives in the top k / positives",
)
def recall(
    data: MetricInput, k: int, threshold: float | None = None, denominator: str = "all", empty_list: str = "zero"
) -> np.ndarray:
    """Positives in the top k divided by the user's positives in the truth (``denominator=all``) or by
    min(k, positives) (``denominator=min``: LensKit's Recall, RecPack's CalibratedRecallK)."""
    den = _recall_denominator(data, k, threshold, denominator)
    values = _safe_div(_hits(data, k, threshold).sum(axis=1), den)
    return _empty(values, den == 0, data, empty_list)


@register_metric(
    "hit_rate",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    defaults={**_THRESHOLD, **_LIST},
    choices={"empty_list": EMPTY_LIST},
    description="1 if the top k holds a positive",
)
def hit_rate(data: MetricInput, k: int, threshold: float | None = None, empty_list: str = "zero") -> np.ndarray:
    """1 when at least one positive is in the top k, else 0."""
    values = np.asarray(_hits(data, k, threshold).any(axis=1), dtype=np.float64)
    return _empty(values, data.n_positive_at(_thr(data, threshold)) == 0, data, empty_list)


@register_metric(
    "mrr",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, **_LIST},
    choices={"empty_list": EMPTY_LIST},
    description="1 / rank of the first positive",
)
def mrr(data: MetricInput, k: int | None, threshold: float | None = None, empty_list: str = "zero") -> np.ndarray:
    """Reciprocal rank of the first positive within the top k (0 when there is none)."""
    hits = _hits(data, k, threshold)
    first = hits.argmax(axis=1) if hits.shape[1] else np.zeros(hits.shape[0], dtype=np.int64)
    values = np.where(hits.any(axis=1), 1.0 / (first + 1.0), 0.0)
    return _empty(values, data.n_positive_at(_thr(data, threshold)) == 0, data, empty_list)


@register_metric(
    "ncrr",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, **_LIST},
    choices={"empty_list": EMPTY_LIST},
    description="Normalised cumulative reciprocal rank: Σ 1/rank of the positives in the top k over its ideal",
)
def ncrr(data: MetricInput, k: int | None, threshold: float | None = None, empty_list: str = "zero") -> np.ndarray:
    """Σ_{i ≤ k, i positive} 1/i divided by Σ_{i ≤ m} 1/i, m = min(|positives|, the list's length within k)
    (Cornac's ``NCRR``); 0 without a positive in the top k.

    >>> import scipy.sparse as sp
    >>> data = MetricInput(np.array([[1, 2, 0]]), sp.csr_matrix(np.array([[1.0, 0, 1.0]])), threshold=1)
    >>> ncrr(data, None).item() == (1 / 2 + 1 / 3) / (1 + 1 / 2)
    True
    """
    hits = _hits(data, k, threshold)
    n_pos = data.n_positive_at(_thr(data, threshold))
    inverse = 1.0 / np.arange(1, hits.shape[1] + 1, dtype=np.float64)
    crr = (hits * inverse).sum(axis=1)
    length = data.list_length if k is None else np.minimum(data.list_length, k)
    ideal = np.concatenate(([0.0], np.cumsum(inverse)))[np.minimum(n_pos, length)]
    return _empty(_safe_div(crr, ideal), n_pos == 0, data, empty_list)


def _ap_sums(hits: np.ndarray, average: str, k: int | None) -> np.ndarray:
    """Each row's Σ of P@i over its hit ranks i (``average="positives"``) or over every rank i ≤ k (``"ranks"``).

    When at most half of the rows hold a hit, only those are computed (a row without one sums
    to 0 either way): most users of a large run may have none (0.05 of 0.06 s for 30,000 x 100
    at a hit rate of 1%). Each computed row is the same array of the same values as over all
    rows, summed the same way.

    >>> hits = np.array([[True, False, True], [False, False, False]])
    >>> _ap_sums(hits, "positives", None).round(4).tolist(), _ap_sums(hits, "ranks", 4).round(4).tolist()
    ([1.6667, 0.0], [2.6667, 0.0])
    """
    rows = np.flatnonzero(hits.any(axis=1))
    if 2 * len(rows) > len(hits):  # most rows: copying them out would cost more than the rows without a hit
        rows = np.arange(len(hits))
    some = hits[rows] if len(rows) < len(hits) else hits
    ranks = np.arange(1, hits.shape[1] + 1, dtype=np.float64)
    precisions = np.cumsum(some, axis=1, dtype=np.int32) / ranks  # int32: 4x faster from bool than int64, same counts
    if average == "ranks":
        # ranks beyond the lists' width hold no item: P@i there is the list's hits / i
        sums = precisions.sum(axis=1) + some.sum(axis=1) * harmonic_tail(hits.shape[1], int(k or 0))
    else:
        sums = (some * precisions).sum(axis=1)
    if len(rows) == len(hits):
        return sums
    total = np.zeros(len(hits), dtype=np.float64)
    total[rows] = sums
    return total


@register_metric(
    "map",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, "denominator": "all", "average": "positives", **_LIST},
    choices={"denominator": MAP_DENOMINATORS, "average": MAP_AVERAGES, "empty_list": EMPTY_LIST},
    description="Average precision at k (trec_eval map_cut; map without k: trec_eval map over the whole list)",
)
def average_precision(
    data: MetricInput,
    k: int | None,
    threshold: float | None = None,
    denominator: str = "all",
    average: str = "positives",
    empty_list: str = "zero",
) -> np.ndarray:
    """AP@k = Σ_{i≤k, positive} P@i / D, the denominator D by ``denominator``:

    ``all`` |positives| (trec_eval, ranx); ``min`` min(k, |positives|) (RecBole); ``k`` k
    (RecTools' ``divide_by_k=True``); ``min_list`` min(list length within k, |positives|)
    (LensKit). ``average=ranks`` is Elliot's MAP instead: the mean of P@i over every rank
    i = 1..k, positive or not (``denominator`` is then not read).
    """
    hits = _hits(data, k, threshold)
    n_pos = data.n_positive_at(_thr(data, threshold))
    if average not in MAP_AVERAGES:
        raise MetricError(f"map average must be one of {', '.join(MAP_AVERAGES)}, got {average!r}")
    if average == "ranks" and k is None:
        raise MetricError("map with average=ranks needs a cutoff: write map@k(average=ranks)")
    total = _ap_sums(hits, average, k)
    if average == "ranks":
        return _empty(total / k, n_pos == 0, data, empty_list)
    if denominator == "all":
        den = n_pos
    elif denominator == "min":
        den = n_pos if k is None else np.minimum(n_pos, k)
    elif denominator == "k":
        if k is None:
            raise MetricError("map with denominator=k needs a cutoff: write map@k(denominator=k)")
        den = np.where(n_pos > 0, k, 0)
    elif denominator == "min_list":
        den = np.minimum(n_pos, data.list_length if k is None else np.minimum(data.list_length, k))
    else:
        raise MetricError(f"map denominator must be one of {', '.join(MAP_DENOMINATORS)}, got {denominator!r}")
    return _empty(_safe_div(total, den), n_pos == 0, data, empty_list)


@register_metric(
    "f1",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    defaults={**_THRESHOLD, "beta": 1.0, **_LIST},
    choices={"empty_list": EMPTY_LIST},
    description="Harmonic mean of precision@k and recall@k (F-beta with beta=)",
)
def f1(
    data: MetricInput, k: int, threshold: float | None = None, beta: float = 1.0, empty_list: str = "zero"
) -> np.ndarray:
    """F_β = (1 + β²) P R / (β² P + R) = (1 + β²) · hits / (k + β² · positives); 0 without a hit.

    β = 1 (default) is ranx's f1; RecTools' ``F1Beta(beta=)`` any β > 0.
    """
    if not beta > 0:
        raise MetricError(f"f1 beta must be > 0, got {beta!r}")
    n_pos = data.n_positive_at(_thr(data, threshold))
    hits = _hits(data, k, threshold).sum(axis=1)
    b2 = float(beta) ** 2
    return _empty(_safe_div((1.0 + b2) * hits, k + b2 * n_pos), n_pos == 0, data, empty_list)


R_PRECISION_DEPTHS = ("k", "r")
R_PRECISION_DENOMINATORS = ("min", "all")
MISSES = ("zero", "skip")


@register_metric(
    "r_precision",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, **_LIST, "depth": "k", "denominator": "min", "misses": "zero"},
    choices={
        "empty_list": EMPTY_LIST,
        "depth": R_PRECISION_DEPTHS,
        "denominator": R_PRECISION_DENOMINATORS,
        "misses": MISSES,
    },
    description="Precision at R, R = the user's number of positives (trec_eval Rprec); cut at k with @k",
)
def r_precision(
    data: MetricInput,
    k: int | None,
    threshold: float | None = None,
    empty_list: str = "zero",
    depth: str = "k",
    denominator: str = "min",
    misses: str = "zero",
) -> np.ndarray:
    """Positives among the first R recommended items / R, R = the user's positives in the truth.

    A list shorter than R counts its missing positions as misses (trec_eval ``Rprec``, ranx
    ``r-precision``). ``r_precision@k``, the R-precision cut at k, is RecTools'
    ``Precision(k, r_precision=True)``: positives in the top k / min(k, R) — positives down
    to rank k count even when R < k, as RecTools counts them. Its parameters give Microsoft
    Recommenders' ``r_precision_at_k``: ``depth=r`` counts positives only within the first
    min(R, k) ranks, ``denominator=all`` divides by R, and ``misses=skip`` leaves out (NaN)
    a user without a positive counted, as its mean over the users with a hit does
    (``misses`` applies without k too). Without k, ``depth`` and ``denominator`` are trec_eval's
    (within R, divided by R) and must keep their defaults.

    >>> import scipy.sparse as sp
    >>> data = MetricInput(np.array([[3, 0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0, 0, 0]])), threshold=4)
    >>> [r_precision(data, 3).item(), r_precision(data, 3, depth="r", denominator="all").item()]
    [1.0, 0.5]
    """
    hits = data.positive_at(_thr(data, threshold))
    n_pos = data.n_positive_at(_thr(data, threshold))
    if k is not None:
        upto = np.minimum(n_pos, k) if depth == "r" else np.full(len(n_pos), min(k, hits.shape[1]))
        den = n_pos if denominator == "all" else np.minimum(n_pos, k)
    elif depth != "k" or denominator != "min":
        raise MetricError(
            "r_precision without a cutoff reads the first R ranks and divides by R (trec_eval's Rprec); depth= "
            "and denominator= shape r_precision@k: add @k or drop them"
        )
    else:
        upto, den = n_pos, n_pos
    within = np.arange(hits.shape[1])[None, :] < np.asarray(upto)[:, None]
    counted = (hits & within).sum(axis=1)
    values = _empty(_safe_div(counted, den), n_pos == 0, data, empty_list)
    if misses == "skip":
        values[counted == 0] = np.nan
    return values


def _auc_pairs(
    data: MetricInput, k: int | None, threshold: float | None, negative_threshold: float | None, negatives: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per user: correctly ordered (positive, negative) pairs, all pairs, ranked positives."""
    pos = _hits(data, k, threshold)
    if negatives == "judged":
        neg = _negatives(data, pos.shape[1], negative_threshold)[:, : pos.shape[1]]
    elif negatives == "all":
        neg = data.valid[:, : pos.shape[1]] & ~pos
    else:
        raise MetricError(f"auc negatives must be one of {', '.join(AUC_NEGATIVES)}, got {negatives!r}")
    # pairs ordered correctly: for each positive, the negatives ranked below it
    below = neg.sum(axis=1, keepdims=True) - np.cumsum(neg, axis=1)
    n_pos, n_neg = pos.sum(axis=1), neg.sum(axis=1)
    return (below * pos).sum(axis=1).astype(np.float64), (n_pos * n_neg).astype(np.float64), n_pos


def _auc_parts(
    data: MetricInput,
    k: int | None,
    threshold: float | None = None,
    negative_threshold: float | None = None,
    negatives: str = "judged",
) -> tuple[np.ndarray, np.ndarray]:
    correct, pairs, n_pos = _auc_pairs(data, k, threshold, negative_threshold, negatives)
    weight = np.where(pairs > 0, n_pos, 0).astype(np.float64)
    return _safe_div(correct, pairs) * weight, weight


@register_metric(
    "auc",
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, **_NEG, "negatives": "judged"},
    choices={"negatives": AUC_NEGATIVES},
    needs_negatives=True,
    micro=_auc_parts,
    description="ROC AUC of the ranking over the user's judged items in the (top-k) list",
)
def auc(
    data: MetricInput,
    k: int | None,
    threshold: float | None = None,
    negative_threshold: float | None = None,
    negatives: str = "judged",
) -> np.ndarray:
    """Share of (positive, negative) pairs of ranked items where the positive ranks higher.

    Conventions: only items in the user's top k (the whole list without k) take part —
    positives rated ≥ ``threshold``; negatives (``negatives=judged``, default) rated <
    ``negative_threshold``, unrated recommended items left out, or (``negatives=all``)
    every ranked item that is not a positive, unrated ones too (RecBole's GAUC over a full
    ranking; Elliot's AUC counts one negative more, see the conventions guide). Items missing
    from the list are left out. The list order is the score, so there are no ties. A user
    without a ranked positive or a ranked negative has no AUC: NaN (``empty_users="skip"``)
    or 0. ``agg=micro`` weighs each user's AUC by its ranked positives, users without pairs
    left out (RecBole's GAUC).
    """
    correct, pairs, _ = _auc_pairs(data, k, threshold, negative_threshold, negatives)
    return _empty(_safe_div(correct, pairs), pairs == 0, data)


Gain = Literal["linear", "exponential", "binary", "shifted_exponential"]
GAINS = ("linear", "exponential", "binary", "shifted_exponential")


def dcg_gains(ratings: np.ndarray, threshold: float, gain: Gain, *, graded: bool = False) -> np.ndarray:
    """Gain of each rating: positive ones (≥ threshold) get r, 2^r − 1, 1 or (``shifted_exponential``, Elliot's)
    2^(r − threshold + 1) − 1; the rest (and NaN) 0.

    ``graded=True`` is trec_eval's rule: every judged rating above 0 gains, whatever the threshold.

    Returns
    -------
    numpy.ndarray
        One float gain per rating, the shape of ``ratings``.

    Examples
    --------
    >>> dcg_gains(np.array([5.0, 2.0, np.nan]), 3, "exponential").tolist()
    [31.0, 0.0, 0.0]
    >>> dcg_gains(np.array([5.0, 2.0, 0.0]), 3, "linear", graded=True).tolist()
    [5.0, 2.0, 0.0]
    """
    ratings = np.asarray(ratings, dtype=np.float64)
    pos = ratings > 0 if graded else ratings >= threshold
    if gain == "linear":
        values = ratings
    elif gain == "exponential":
        values = np.exp2(ratings) - 1.0
    elif gain == "binary":
        values = np.ones_like(ratings)
    elif gain == "shifted_exponential":
        values = np.exp2(ratings - threshold + 1.0) - 1.0
    else:
        raise MetricError(f"ndcg gain must be one of {', '.join(GAINS)}, got {gain!r}")
    return np.where(pos, values, 0.0)


DISCOUNTS = ("log2", "clipped")
# ranks summed term by term in discount_sum and harmonic_tail; beyond, the Euler–Maclaurin formula
_EXACT_RANKS = 1 << 20


def rank_discount(width: int, discount: str = "log2") -> np.ndarray:
    """The discount of ranks 1..width: ``log2`` 1/log2(r + 1); ``clipped`` 1/max(log2 r, 1) (LensKit's
    LogRankWeight, the original nDCG paper: ranks 1 and 2 both count fully).

    ``width`` is a number of positions that exist (a list's or an ideal list's); a cutoff beyond
    every list is capped before it comes here (:func:`discount_sum` sums a discount over k ranks).

    Returns
    -------
    numpy.ndarray
        ``width`` floats, the discount of rank 1 first.

    Examples
    --------
    >>> rank_discount(3).round(4).tolist(), rank_discount(3, "clipped").round(4).tolist()
    ([1.0, 0.6309, 0.5], [1.0, 1.0, 0.6309])
    """
    ranks = np.arange(1, width + 1, dtype=np.float64)
    if discount == "log2":
        return 1.0 / np.log2(ranks + 1.0)
    if discount == "clipped":
        return 1.0 / np.maximum(np.log2(ranks), 1.0)
    raise MetricError(f"ndcg discount must be one of {', '.join(DISCOUNTS)}, got {discount!r}")


def discount_sum(k: int, discount: str = "log2") -> float:
    """Σ of :func:`rank_discount` over ranks 1..k, without allocating k ranks.

    Up to 2^20 ranks the terms are summed (the same number as ``rank_discount(k).sum()``);
    the ranks beyond by the Euler–Maclaurin formula with f(x) = ln 2 / ln(x + s) (s = 1 for
    ``log2``, 0 for ``clipped``), whose integral is ln 2 · li(x + s): the remainder after the
    f' term is below 10^-20 of the sum there.

    Returns
    -------
    float
        The ideal DCG of k items of gain 1 (``ndcg(ideal=full)``'s normaliser).

    Examples
    --------
    >>> discount_sum(3) == float(rank_discount(3).sum())
    True
    >>> k = 3_000_000
    >>> bool(abs(discount_sum(k) / rank_discount(k).sum() - 1) < 1e-13)
    True
    """
    k = int(k)
    head = rank_discount(min(k, _EXACT_RANKS), discount).sum()
    if k <= _EXACT_RANKS:
        return float(head)
    from scipy.special import expi  # li(y) = Ei(ln y)

    shift = 1.0 if discount == "log2" else 0.0
    a, b = float(_EXACT_RANKS + 1), float(k)
    ln2 = np.log(2.0)

    def f(x: float) -> float:
        return ln2 / np.log(x + shift)

    def df(x: float) -> float:
        return -ln2 / ((x + shift) * np.log(x + shift) ** 2)

    integral = ln2 * (expi(np.log(b + shift)) - expi(np.log(a + shift)))
    tail = integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0
    return float(head + tail)


def harmonic_tail(start: int, k: int) -> float:
    """Σ 1/i over the ranks i = start + 1..k (0 when k ≤ start), without allocating them.

    Returns
    -------
    float
        H_k − H_start: summed term by term up to 2^20 ranks, else ψ(k + 1) − ψ(start + 1).

    Examples
    --------
    >>> harmonic_tail(2, 4) == 1 / 3 + 1 / 4, harmonic_tail(5, 5)
    (True, 0.0)
    >>> euler_gamma = 0.5772156649015329
    >>> bool(abs(harmonic_tail(10, 10**12) - (np.log(10**12) + euler_gamma - sum(1 / i for i in range(1, 11)))) < 1e-9)
    True
    """
    if k <= start:
        return 0.0
    if k - start <= _EXACT_RANKS:
        return float(np.sum(1.0 / np.arange(start + 1, k + 1, dtype=np.float64)))
    from scipy.special import digamma

    return float(digamma(float(k) + 1.0) - digamma(float(start) + 1.0))


def ideal_dcg(
    truth: CSR | sp.csr_matrix,
    k: int,
    threshold: float,
    gain: Gain,
    *,
    graded: bool = False,
    discount: str = "log2",
    users: np.ndarray | None = None,
) -> np.ndarray:
    """DCG@k of each user's truth ratings sorted in decreasing gain.

    ``users`` (truth rows, ascending): only theirs are computed, each the same number as over
    every row; the others are 0.

    Returns
    -------
    numpy.ndarray
        One float per user (truth row): the largest DCG@k a list can reach, 0 for a user with no gain.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> ideal_dcg(sp.csr_matrix(np.array([[1.0, 3.0, 2.0]])), 2, 1, "linear").round(6).tolist()
    [4.26186]
    """
    gains = dcg_gains(truth.data.astype(np.float64), threshold, gain, graded=graded)
    counts = np.diff(truth.indptr)
    # one argsort of a composite key (row, then descending gain) instead of a slower lexsort; its terms, and the
    # discount's length, from every row: a user's sum is the same whichever users are computed
    span = float(gains.max() - gains.min()) + 1.0 if len(gains) else 1.0
    top = gains.max(initial=0.0)
    # an ideal list is as long as the user's truth: k beyond the longest is capped, never allocated
    depth = min(int(k), int(counts.max(initial=0)))
    starts = np.asarray(truth.indptr[:-1])
    if users is None:
        users = np.arange(truth.shape[0])
    else:  # the users' entries, row after row
        starts, counts = starts[users], counts[users]
        entries = np.arange(int(counts.sum())) + np.repeat(starts - (np.cumsum(counts) - counts), counts)
        gains = gains[entries]
    rows = np.repeat(users, counts)
    order = np.argsort(rows * span + (top - gains), kind="stable")
    rank = np.arange(len(gains)) - np.repeat(np.cumsum(counts) - counts, counts)
    keep = rank < k
    weights = gains[order][keep] * rank_discount(depth, discount)[rank[keep]]
    return np.bincount(rows[keep], weights=weights, minlength=truth.shape[0])


def _ideal_where_needed(
    data: MetricInput, dcg: np.ndarray, k: int, threshold: float, gain: Gain, graded: bool, discount: str
) -> np.ndarray:
    """:func:`ideal_dcg` of the users whose DCG is not 0; for the others only whether theirs is above 0 (1 or 0).

    A user whose list gains nothing scores 0 whatever the ideal above 0 (most users of a large
    run: 0.02 of 0.025 s for 30,000 users), and is an empty user when it is not above 0, which
    gains that are never negative tell (the ideal above 0 exactly when some gain is). Negative
    gains (a threshold at or below 0), or DCG in most lists: the ideal of every user.
    """
    truth = data.truth
    gains = dcg_gains(truth.data.astype(np.float64), threshold, gain, graded=graded)
    users = np.flatnonzero(dcg != 0)
    if 2 * len(users) > len(dcg) or (gains < 0).any():
        return ideal_dcg(truth, k, threshold, gain, graded=graded, discount=discount)
    idcg = (count_rows(truth, gains > 0) > 0).astype(np.float64)
    idcg[users] = ideal_dcg(truth, k, threshold, gain, graded=graded, discount=discount, users=users)[users]
    return idcg


@register_metric(
    "ndcg",
    list_only=True,
    direction="higher",
    bounds=(0, 1),
    defaults={**_THRESHOLD, "gain": "linear", "graded": False, "discount": "log2", "ideal": "truth", **_LIST},
    choices={"gain": GAINS, "discount": DISCOUNTS, "ideal": IDEALS, "empty_list": EMPTY_LIST},
    needs_grades=True,
    description="Normalised discounted cumulative gain",
)
def ndcg(
    data: MetricInput,
    k: int,
    threshold: float | None = None,
    gain: Gain = "linear",
    graded: bool = False,
    discount: str = "log2",
    ideal: str = "truth",
    empty_list: str = "zero",
) -> np.ndarray:
    """DCG@k / ideal DCG@k; gains per ``gain``, the discount per ``discount`` (:func:`rank_discount`).

    ``graded=false`` (default): only ratings ≥ the threshold gain (ranx's ``ndcg`` with
    ``-l`` = threshold; at threshold 1 on a 1–5 scale also trec_eval's).
    ``graded=true``: every judged rating above 0 gains its value and the threshold is not
    read (trec_eval's ``ndcg_cut``, which uses relevance_level only for binary measures).
    ``ideal=truth`` (default): the ideal DCG of the user's truth sorted by gain;
    ``ideal=full``: of k items all with the user's highest gain, however few the user has
    (RecTools' ``divide_by_achievable=False``).
    """
    if graded and threshold is not None:
        raise MetricError(
            "ndcg with graded=true (trec_eval's convention) takes gains from every judged rating and has no "
            "threshold; drop threshold= or set graded=false"
        )
    if ideal not in ("truth", "full"):
        raise MetricError(f"ndcg ideal must be one of {', '.join(IDEALS)}, got {ideal!r}")
    thr = _thr(data, threshold)
    grades = data.grades[:, :k]
    # a row-wise sum, not a BLAS product: a user's value must not depend on who else is in the batch
    dcg = (dcg_gains(grades, thr, gain, graded=graded) * rank_discount(grades.shape[1], discount)).sum(axis=1)
    idcg = _ideal_where_needed(data, dcg, k, thr, gain, graded, discount)
    if ideal == "full":
        top = ideal_dcg(data.truth, 1, thr, gain, graded=graded)  # the user's highest gain (rank 1 counts fully)
        idcg = top * discount_sum(k, discount)
    return _empty(_safe_div(dcg, idcg), idcg <= 0, data, empty_list)


# ------------------------------------------------------------------- anti-metrics
def _negatives(data: MetricInput, k: int, negative_threshold: float | None) -> np.ndarray:
    if negative_threshold is None or float(negative_threshold) == data.negative_threshold:
        neg = data.negative
    else:
        neg = data.grades < float(negative_threshold)
    return neg[:, :k]


def _n_negative(data: MetricInput, negative_threshold: float | None) -> np.ndarray:
    if negative_threshold is None or float(negative_threshold) == data.negative_threshold:
        return data.n_negative
    return count_rows(data.truth, data.truth.data < float(negative_threshold))


def _anti_parts(
    data: MetricInput, k: int, negative_threshold: float | None = None, denominator: str = "k"
) -> tuple[np.ndarray, np.ndarray]:
    return _negatives(data, k, negative_threshold).sum(axis=1).astype(np.float64), _list_denominator(
        data, k, denominator
    )


@register_metric(
    "anti_precision",
    direction="lower",
    bounds=(0, 1),
    defaults={**_NEG, "denominator": "k"},
    choices={"denominator": PRECISION_DENOMINATORS},
    needs_negatives=True,
    micro=_anti_parts,
    description="Negatives (false positives) in the top k / k",
)
def anti_precision(
    data: MetricInput, k: int, negative_threshold: float | None = None, denominator: str = "k"
) -> np.ndarray:
    """FP@k / k: recommended items the user rated below the negative threshold."""
    num, den = _anti_parts(data, k, negative_threshold, denominator)
    return _safe_div(num, den)


def _fallout_parts(data: MetricInput, k: int, negative_threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    return _negatives(data, k, negative_threshold).sum(axis=1).astype(np.float64), _n_negative(
        data, negative_threshold
    ).astype(np.float64)


@register_metric(
    "fallout",
    direction="lower",
    bounds=(0, 1),
    defaults=_NEG,
    needs_negatives=True,
    micro=_fallout_parts,
    description="FP@k / negatives of the user (FP + TN)",
)
def fallout(data: MetricInput, k: int, negative_threshold: float | None = None) -> np.ndarray:
    """FP@k divided by the user's negative items in the truth (users without any: empty policy)."""
    num, den = _fallout_parts(data, k, negative_threshold)
    return _empty(_safe_div(num, den), den == 0, data)


def _count(name: str, description: str, needs_negatives: bool, direction: Direction):
    @register_metric(
        name,
        direction=direction,
        defaults={**_THRESHOLD, **_NEG},
        needs_negatives=needs_negatives,
        aggregations=("sum", "macro"),
        description=description,
    )
    def count(data: MetricInput, k: int, threshold: float | None = None, negative_threshold=None) -> np.ndarray:
        if name in ("tp", "fn"):
            tp = _hits(data, k, threshold).sum(axis=1)
            out = tp if name == "tp" else data.n_positive_at(_thr(data, threshold)) - tp
        else:
            fp = _negatives(data, k, negative_threshold).sum(axis=1)
            out = fp if name == "fp" else _n_negative(data, negative_threshold) - fp
        return out.astype(np.float64)

    count.__doc__ = description
    return count


_COUNTS: tuple[tuple[str, str, bool, Direction], ...] = (
    ("tp", "True positives: positives in the top k", False, "higher"),
    ("fp", "False positives: negatives in the top k", True, "lower"),
    ("tn", "True negatives: negatives of the user not in the top k", True, "higher"),
    ("fn", "False negatives: positives of the user not in the top k", False, "lower"),
)
for _name, _description, _needs, _direction in _COUNTS:
    _count(_name, _description, _needs, _direction)


def pr_curve(data: MetricInput, cutoffs: list[int] | np.ndarray, *, agg: str = "macro") -> dict[str, np.ndarray]:
    """Precision and recall at each cutoff (a precision/recall curve over list lengths N).

    Returns
    -------
    dict of str to numpy.ndarray
        ``precision`` and ``recall``, one value per cutoff (aggregated over users as ``agg`` says).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> truth = sp.csr_matrix(np.array([[5.0, 0, 4]]))
    >>> curve = pr_curve(MetricInput(np.array([[1, 0, 2]]), truth, threshold=4), [1, 2, 3])
    >>> curve["precision"].round(3).tolist(), curve["recall"].tolist()
    ([0.0, 0.5, 0.667], [0.0, 0.5, 1.0])
    """
    cutoffs = np.asarray(cutoffs, dtype=int)
    out = {"cutoff": cutoffs}
    for name in ("precision", "recall"):
        out[name] = np.array([Metric.of(name, int(c), agg=agg).compute(data) for c in cutoffs])
    return out
