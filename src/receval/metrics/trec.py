"""trec_eval's and ir-measures' measures that receval's other modules lack, and RecBole's TailPercentage.

Each is computed as its library computes it, per user (trec_eval's query) and with
receval's relevance rule: relevant = grade ≥ ``threshold`` (trec_eval's relevance
level, 1 by default on integer grades). Every measure with a cutoff ``@k`` reads only
the first k recommended items (trec_eval's ``-M k``); without one, the whole list.

- ``num_ret[@k]``, ``num_rel``, ``num_rel_ret[@k]``: the items recommended, the user's
  relevant items in the truth, the relevant recommended items. Summed over users by
  default, as trec_eval's summary line is (``agg=macro``: the mean).
- ``set_P[@k]`` = num_rel_ret / num_ret over the list as long as it is (a short list is
  not filled up to k, unlike ``precision@k``; an empty one scores 0), ``set_recall[@k]`` =
  num_rel_ret / num_rel, ``set_F[@k](beta=1)`` = (1 + β)·P·R / (β·P + R) with P and R the
  set precision and recall, 0 without a relevant recommended item. ``beta`` is trec_eval's
  parameter x of ``set_F.x`` (and ir-measures' ``SetF(beta=x)``): it weighs recall
  linearly, so ``set_F(beta=b²)`` is van Rijsbergen's F_b.
- ``bpref[@k]`` (Buckley & Voorhees 2004, trec_eval's code): for each relevant
  recommended item, 1 − min(n, R) / min(N, R), n = judged non-relevant items ranked above
  it, R = relevant items of the user, N = judged non-relevant items of the user; summed
  and divided by R. Unjudged items (not in the truth) are skipped. Judged non-relevant =
  in the truth with a grade below ``threshold``; with ``negative_grades=unjudged`` (the
  default, trec_eval's rule) a negative grade such as trec_eval's −1 means "in the pool,
  not judged" and the item is skipped like an unjudged one; ``negative_grades=nonrelevant``
  (ranx's rule) makes it judged non-relevant.
- ``iprec_at_recall[@k](recall=r)``: interpolated precision at recall level r, the
  highest precision at any rank at or below the rank where the list reaches
  round(r·R) relevant items (trec_eval's ``lround``: halves away from zero; level 0 and
  levels rounding to 0 take the highest precision of the list), 0 when the list never
  reaches it. ``rounding=trec_eval9`` counts round(r·R) as trec_eval 9 did (and
  pytrec_eval, built on it, does): ⌊r·R + 0.9⌋, so 0.1 × 474 needs 48 relevant items,
  not 47. trec_eval's names ``iprec_at_recall_0.00`` … ``iprec_at_recall_1.00`` read
  as ``iprec_at_recall(recall=0.0)`` … ``(recall=1.0)``.
- ``gm_map[@k](epsilon=1e-5)``: the geometric mean over the scored users of max(AP, ε),
  AP as ``map[@k]`` computes it (so users without a relevant item are left out under
  ``empty_users=skip`` and floored to ε under ``zero``); a system-level value,
  exp(mean log max(AP, ε)), as trec_eval's summary ``gm_map`` (trec_eval prints no
  per-query value; pytrec_eval's per-query value is the log).
- ``rbp[@k](p=0.8, gain=linear)``: rank-biased precision (Moffat & Zobel 2008),
  (1 − p) Σ_i p^(i−1) g_i with g_i the item's gain as in ``ndcg`` (``linear``: its grade
  when relevant, else 0; ``binary``: 1 when relevant; ``exponential``: 2^grade − 1). The
  linear default is what ranx's ``rbp`` and ir-measures' ``RBP(p=…)`` without ``rel=``
  compute (graded, so above 1 with grades above 1); ``gain=binary`` is the paper's
  binary RBP, ir-measures' ``RBP(p=…, rel=threshold)``, in [0, 1]. trec_eval's ``rbp`` is
  ``rbp(p=0.9, graded=true, normalize=true)``: every grade above 0 gains whatever the
  threshold (its relevance level), divided by the user's top grade when that is above 1.
- ``rbp_residual[@k](p=0.8)``: how much binary RBP could still grow, the weight
  (1 − p)·p^(i−1) of the unjudged recommended items plus the weight p^n of every rank
  after the n items read (n = min(k, list length)): binary RBP lies in
  [rbp, rbp + rbp_residual] whatever the unjudged items are. Unjudged: not in the truth,
  or with a negative grade (``negative_grades=unjudged``, the default, as in trec_eval).
  trec_eval's ``rbp_resid`` (the name reads its convention) is
  ``rbp_residual(p=0.9, tail=with_unjudged)``: 0 for a list without an unjudged item,
  whose unread ranks it leaves out (an empty list's residual is 0, not 1).
- ``judged[@k]`` (ir-measures' ``Judged@k``): the share of the recommended items (the
  first k, or all when fewer) that are in the truth, whatever their grade (trec_eval's
  −1 too; ``negative_grades=unjudged`` leaves negative grades out); an empty list is not
  scored (NaN). ``unjudged@k`` (trec_eval's ``unj_k``): the unjudged items of the top k
  (not in the truth, or with a negative grade) divided by k even for a shorter list;
  ``denominator=list`` divides by the items there are (``judged``'s default), ``k`` by k.
- ``tail_percentage@k(tail_ratio=0.1)`` (RecBole's ``TailPercentage``): the share of the
  top k (as many as the list has; an empty list is not scored) that are long-tail items.
  As in RecBole, the tail is read from the training ratings' item counts, among the items
  rated at least once in training: with ``tail_ratio`` > 1, the items with at most that
  many ratings; with a ratio in (0, 1], the max(⌊ratio × n⌋, 1) least rated of those n
  items, equal counts ordered by the catalogue (RecBole: by its internal item id).

Users without a relevant item in the truth follow ``empty_users`` (NaN or 0) in every
per-user measure above that divides by R or reads relevance (``bpref``, ``set_*``,
``iprec_at_recall``, ``rbp``), as in the rest of receval; the counts, ``num_ret``,
``judged``, ``unjudged``, ``rbp_residual`` and ``tail_percentage`` score every user.

Examples
--------
One user; items 0…4 have grades 2, 0, 1, −1, 0; item 5 is not in the truth. The list is
5, 1, 0, 3, 2, 4. Relevant (grade ≥ 1): items 0 and 2 at ranks 3 and 5, R = 2; judged
non-relevant: items 1 and 4, N = 2 (item 3's −1 is unjudged). bpref: item 0 has one
non-relevant item above it, 1 − 1/2; item 2 also one, 1 − 1/2; (0.5 + 0.5) / 2 = 0.5.
Counting −1 as non-relevant, item 2 has two above it: (0.5 + 0) / 2 = 0.25. set_P = 2/6,
set_F = 2·(1/3)·1 / (1/3 + 1) = 0.5, Judged@4 = 3/4 (items 1, 0 and 3 are in the truth).
RBP with p = 0.5: 0.5·(2·0.5² + 1·0.5⁴) = 0.28125, binary 0.5·(0.5² + 0.5⁴) = 0.15625;
its residual: item 5 at rank 1 weighs 0.5, item 3 (−1) at rank 4 0.5⁴, and 0.5⁶ after the
six items: 0.578125 (0.515625 when −1 counts as judged).

>>> import numpy as np, scipy.sparse as sp
>>> from receval.metrics.registry import MetricInput, parse_metric
>>> grades = np.array([2.0, 0, 1, -1, 0])
>>> truth = sp.csr_matrix((grades, np.arange(5), np.array([0, 5])), shape=(1, 6))
>>> data = MetricInput(np.array([[5, 1, 0, 3, 2, 4]]), truth, threshold=1)
>>> [parse_metric(m).per_user(data).item() for m in ("bpref", "bpref(negative_grades=nonrelevant)")]
[0.5, 0.25]
>>> [round(parse_metric(m).per_user(data).item(), 4) for m in ("set_P", "set_recall", "set_F", "Judged@4")]
[0.3333, 1.0, 0.5, 0.75]
>>> [parse_metric(m).per_user(data).item() for m in ("RBP(p=0.5)", "rbp(p=0.5,gain=binary)", "rbp_residual(p=0.5)")]
[0.28125, 0.15625, 0.578125]
>>> parse_metric("rbp_residual(p=0.5,negative_grades=nonrelevant)").per_user(data).item()
0.515625
>>> [parse_metric(m).compute(data) for m in ("num_ret", "num_rel", "num_rel_ret@3")]
[6.0, 2.0, 1.0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput, count_rows
from receval.metrics.ranking import (
    GAINS,
    PRECISION_DENOMINATORS,
    Gain,
    _empty,
    _hits,
    _safe_div,
    _thr,
    average_precision,
    dcg_gains,
)

if TYPE_CHECKING:
    import scipy.sparse as sp

    from receval.data.csr import CSR

__all__ = ["NEGATIVE_GRADES", "RESIDUAL_TAILS", "ROUNDINGS", "interpolated_precision", "tail_items"]

_THRESHOLD = {"threshold": None}
NEGATIVE_GRADES = ("unjudged", "nonrelevant")
"""What a negative grade (trec_eval's −1) means: in the pool but not judged (trec_eval), or judged non-relevant
(ranx's bpref, ir-measures' Judged)."""
_COUNT_AGGREGATIONS = ("sum", "macro")  # trec_eval's summary of a count is the sum over queries


def _top(data: MetricInput, k: int | None) -> int:
    """How many leading rank positions a measure reads."""
    width = data.rankings.shape[1]
    return width if k is None else min(k, width)


def _num_ret(data: MetricInput, k: int | None) -> np.ndarray:
    return data.list_length if k is None else np.minimum(data.list_length, k)


def _num_rel_ret(data: MetricInput, k: int | None, threshold: float | None) -> np.ndarray:
    return _hits(data, k, threshold).sum(axis=1)


@register_metric(
    "num_ret",
    k="optional",
    aggregations=_COUNT_AGGREGATIONS,
    aliases=("numret",),
    description="Items recommended (trec_eval num_ret)",
)
def num_ret(data: MetricInput, k: int | None) -> np.ndarray:
    """The length of each list (at most k)."""
    return _num_ret(data, k).astype(np.float64)


@register_metric(
    "num_rel",
    k="none",
    defaults=_THRESHOLD,
    aggregations=_COUNT_AGGREGATIONS,
    aliases=("numrel",),
    description="Relevant items of the user in the truth (trec_eval num_rel)",
)
def num_rel(data: MetricInput, k: None, threshold: float | None = None) -> np.ndarray:
    """The user's items with a grade ≥ threshold in the truth, recommended or not."""
    return data.n_positive_at(_thr(data, threshold)).astype(np.float64)


@register_metric(
    "num_rel_ret",
    direction="higher",
    k="optional",
    defaults=_THRESHOLD,
    aggregations=_COUNT_AGGREGATIONS,
    aliases=("numrelret",),
    description="Relevant items recommended (trec_eval num_rel_ret)",
)
def num_rel_ret(data: MetricInput, k: int | None, threshold: float | None = None) -> np.ndarray:
    """The relevant items in the (top-k) list."""
    return _num_rel_ret(data, k, threshold).astype(np.float64)


@register_metric(
    "set_p",
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults=_THRESHOLD,
    aliases=("setp",),
    description="Relevant items recommended / items recommended (trec_eval set_P)",
)
def set_precision(data: MetricInput, k: int | None, threshold: float | None = None) -> np.ndarray:
    """num_rel_ret / num_ret over the list as long as it is (0 for an empty list)."""
    values = _safe_div(_num_rel_ret(data, k, threshold), _num_ret(data, k))
    return _empty(values, data.n_positive_at(_thr(data, threshold)) == 0, data)


@register_metric(
    "set_recall",
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults=_THRESHOLD,
    aliases=("setr",),
    description="Relevant items recommended / relevant items (trec_eval set_recall)",
)
def set_recall(data: MetricInput, k: int | None, threshold: float | None = None) -> np.ndarray:
    """num_rel_ret / num_rel."""
    n_rel = data.n_positive_at(_thr(data, threshold))
    return _empty(_safe_div(_num_rel_ret(data, k, threshold), n_rel), n_rel == 0, data)


@register_metric(
    "set_f",
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, "beta": 1.0},
    aliases=("setf",),
    description="(1 + β)·P·R / (β·P + R) of set precision and recall (trec_eval set_F)",
)
def set_f(data: MetricInput, k: int | None, threshold: float | None = None, beta: float = 1.0) -> np.ndarray:
    """trec_eval's set_F.β: (β + 1)·P·R / (β·P + R), 0 without a relevant recommended item.

    >>> import scipy.sparse as sp
    >>> data = MetricInput(np.array([[0, 1, 2, 3]]), sp.csr_matrix(np.array([[1.0, 0, 0, 0, 1, 1]])))
    >>> round(set_f(data, None, beta=0.5).item(), 6)  # P = 1/4, R = 1/3: 1.5·(1/12) / (1/8 + 1/3)
    0.272727
    """
    if not beta >= 0:
        raise MetricError(f"set_F beta must be a number ≥ 0 (trec_eval's set_F.x), got {beta!r}")
    n_rel = data.n_positive_at(_thr(data, threshold))
    hits = _num_rel_ret(data, k, threshold).astype(np.float64)
    precision = _safe_div(hits, _num_ret(data, k))
    recall = _safe_div(hits, n_rel)
    # trec_eval's operation order, so that the values agree to the last bits
    den = beta * precision + recall
    values = np.divide((beta + 1.0) * precision * recall, den, out=np.zeros_like(den), where=hits > 0)
    return _empty(values, n_rel == 0, data)


def _negative_unjudged(negative_grades: str) -> bool:
    """Whether a negative grade means unjudged (else judged non-relevant); an unknown value is refused."""
    if negative_grades not in NEGATIVE_GRADES:
        raise MetricError(f"negative_grades must be one of {', '.join(NEGATIVE_GRADES)}, got {negative_grades!r}")
    return negative_grades == "unjudged"


def _nonrelevant(grades: np.ndarray, threshold: float, negative_grades: str) -> np.ndarray:
    """Judged non-relevant grades: below the threshold, and (trec_eval's rule) not negative; NaN never."""
    below = grades < threshold
    return below & (grades >= 0) if _negative_unjudged(negative_grades) else below


@register_metric(
    "bpref",
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, "negative_grades": "unjudged"},
    choices={"negative_grades": NEGATIVE_GRADES},
    description="Binary preference: relevant items ranked above judged non-relevant ones (trec_eval bpref)",
)
def bpref(
    data: MetricInput, k: int | None, threshold: float | None = None, negative_grades: str = "unjudged"
) -> np.ndarray:
    """Σ over relevant recommended items of 1 − min(n above, R) / min(N, R), divided by R."""
    thr = _thr(data, threshold)
    width = _top(data, k)
    rel = _hits(data, k, threshold)
    nonrel = _nonrelevant(data.grades[:, :width], thr, negative_grades)
    n_rel = data.n_positive_at(thr)
    n_nonrel = count_rows(data.truth, _nonrelevant(data.truth.data, thr, negative_grades))
    above = np.cumsum(nonrel, axis=1) - nonrel  # judged non-relevant items ranked above each position
    cap = np.minimum(n_nonrel, n_rel)[:, None].astype(np.float64)
    # nothing above a relevant item: all its preferences hold (and a user without a relevant item has none)
    share = np.divide(np.minimum(above, n_rel[:, None]), cap, out=np.zeros(above.shape), where=(above > 0) & (cap > 0))
    total = ((1.0 - share) * rel).sum(axis=1)
    return _empty(_safe_div(total, n_rel), n_rel == 0, data)


ROUNDINGS = ("nearest", "trec_eval9")
"""How iprec_at_recall turns a recall level into a number of relevant items: trec_eval 10's lround, or
trec_eval 9's (and pytrec_eval's) level × R + 0.9, truncated."""


def _needed(recall: float, n_rel: np.ndarray, rounding: str) -> np.ndarray:
    """Relevant items a list must reach for the recall level, as trec_eval computes it.

    >>> _needed(0.3, np.array([5, 7]), "nearest").tolist(), _needed(0.3, np.array([5, 7]), "trec_eval9").tolist()
    ([2, 2], [2, 3])
    """
    if rounding == "nearest":
        x = recall * n_rel.astype(np.float64)
        whole = np.floor(x)
        return (whole + (x - whole >= 0.5)).astype(np.int64)  # C's lround: halves away from zero
    if rounding == "trec_eval9":
        return np.floor(recall * n_rel.astype(np.float64) + 0.9).astype(np.int64)
    raise MetricError(f"iprec_at_recall rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")


def interpolated_precision(
    data: MetricInput, k: int | None, recall: float, threshold: float | None = None, rounding: str = "nearest"
) -> np.ndarray:
    """trec_eval's interpolated precision at one recall level, per user (before the empty-user policy).

    Returns
    -------
    numpy.ndarray
        One float per user: the highest precision at any rank whose recall reaches ``recall`` (0 when none does).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> truth = sp.csr_matrix(np.array([[1.0, 0, 1, 1]]))  # R = 3: relevant at ranks 1 and 3, item 3 not listed
    >>> data = MetricInput(np.array([[0, 1, 2, -1]]), truth)
    >>> [round(interpolated_precision(data, None, r).item(), 4) for r in (0.0, 0.5, 0.6, 0.9)]
    [1.0, 0.6667, 0.6667, 0.0]

    Level 0.5 needs round(1.5) = 2 relevant items, reached at rank 3 (precision 2/3);
    0.6 needs round(1.8) = 2 too; 0.9 needs all 3, which the list never reaches.
    """
    if not 0.0 <= recall <= 1.0:
        raise MetricError(f"iprec_at_recall: the recall level must be in [0, 1], got {recall!r}")
    thr = _thr(data, threshold)
    hits = _hits(data, k, threshold)
    n_rel = data.n_positive_at(thr)
    so_far = np.cumsum(hits, axis=1)
    ranks = np.arange(1, hits.shape[1] + 1, dtype=np.float64)
    precision = np.where(data.valid[:, : hits.shape[1]], so_far / ranks, 0.0)
    # best precision at each rank or below it (trec_eval's Int_Prec)
    best_below = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
    needed = np.maximum(_needed(recall, n_rel, rounding), 1)  # level 0 reads from the first hit on
    reached = so_far[:, -1] >= needed if hits.shape[1] else np.zeros(data.n_users, dtype=bool)
    where = np.argmax(so_far >= needed[:, None], axis=1) if hits.shape[1] else np.zeros(data.n_users, dtype=np.int64)
    picked = best_below[np.arange(data.n_users), where] if hits.shape[1] else np.zeros(data.n_users)
    return np.where(reached, picked, 0.0)


@register_metric(
    "iprec_at_recall",
    direction="higher",
    bounds=(0, 1),
    k="optional",
    defaults={**_THRESHOLD, "recall": 0.0, "rounding": "nearest"},
    choices={"rounding": ROUNDINGS},
    description="Interpolated precision at a recall level (trec_eval iprec_at_recall_0.00 … _1.00)",
)
def iprec_at_recall(
    data: MetricInput, k: int | None, threshold: float | None = None, recall: float = 0.0, rounding: str = "nearest"
) -> np.ndarray:
    """The highest precision at or below the rank where round(recall·R) relevant items are reached."""
    values = interpolated_precision(data, k, float(recall), threshold, rounding)
    return _empty(values, data.n_positive_at(_thr(data, threshold)) == 0, data)


@register_metric(
    "gm_map",
    direction="higher",
    bounds=(0, 1),
    kind="system",
    k="optional",
    defaults={**_THRESHOLD, "epsilon": 1e-5},
    description="Geometric mean over users of max(AP, ε) (trec_eval gm_map)",
)
def gm_map(data: MetricInput, k: int | None, threshold: float | None = None, epsilon: float = 1e-5) -> float:
    """exp(mean over the scored users of log max(AP, ε)); NaN without a scored user.

    >>> import scipy.sparse as sp
    >>> truth = sp.csr_matrix(np.array([[1.0, 0], [0, 1.0]]))
    >>> data = MetricInput(np.array([[0, 1], [0, 1]]), truth)  # AP 1 and 1/2
    >>> round(gm_map(data, None), 6), round(float(np.sqrt(0.5)), 6)
    (0.707107, 0.707107)
    """
    if not epsilon > 0:
        raise MetricError(f"gm_map epsilon must be a number > 0 (trec_eval's is 1e-5), got {epsilon!r}")
    ap = average_precision(data, k, threshold)
    scored = ap[~np.isnan(ap)]
    if not scored.size:
        return float("nan")
    return float(np.exp(np.mean(np.log(np.maximum(scored, epsilon)))))


def _rbp_weights(p: float, width: int) -> np.ndarray:
    if not 0.0 < p < 1.0:
        raise MetricError(f"rbp: the persistence p must be in (0, 1), got {p!r}")
    return (1.0 - p) * p ** np.arange(width, dtype=np.float64)


def _row_max(truth: CSR | sp.csr_matrix, values: np.ndarray) -> np.ndarray:
    """The largest of ``values`` (aligned with ``truth.data``) in each row; 0 for an empty row."""
    counts = np.diff(truth.indptr)
    out = np.zeros(truth.shape[0])
    rows = np.flatnonzero(counts)
    if rows.size:
        out[rows] = np.maximum.reduceat(values, truth.indptr[rows])
    return out


@register_metric(
    "rbp",
    direction="higher",
    k="optional",
    defaults={**_THRESHOLD, "p": 0.8, "gain": "linear", "graded": False, "normalize": False},
    choices={"gain": GAINS},
    description="Rank-biased precision (1 − p) Σ p^(i−1) gain_i (Moffat & Zobel 2008)",
)
def rbp(
    data: MetricInput,
    k: int | None,
    threshold: float | None = None,
    p: float = 0.8,
    gain: Gain = "linear",
    graded: bool = False,
    normalize: bool = False,
) -> np.ndarray:
    """(1 − p) Σ_i p^(i−1) g_i over the (top-k) list, g_i the item's gain (as ``ndcg``'s).

    ``graded=true``: every grade above 0 gains, whatever the threshold (trec_eval's rule);
    ``normalize=true``: gains are divided by the user's largest gain in the truth when it is
    above 1 (trec_eval scales its gains into [0, 1]). A user whose truth gains nothing is not
    scored (``empty_users``).

    >>> import scipy.sparse as sp
    >>> data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[2.0, 4.0, 1.0]])))
    >>> rbp(data, None, p=0.5).item(), rbp(data, None, p=0.5, normalize=True).item()  # 0.5·(2 + 4·0.5)
    (2.0, 0.5)
    """
    thr = _thr(data, threshold)
    width = _top(data, k)
    gains = dcg_gains(data.grades[:, :width], thr, gain, graded=graded)
    truth_gains = dcg_gains(data.truth.data, thr, gain, graded=graded)
    top = _row_max(data.truth, truth_gains)
    if normalize:
        gains = gains / np.maximum(top, 1.0)[:, None]
    # a row-wise sum, not a BLAS product: a user's value must not depend on who else is in the batch
    return _empty((gains * _rbp_weights(p, width)).sum(axis=1), top <= 0, data)


def _judged(data: MetricInput, width: int, negative_grades: str) -> np.ndarray:
    """Boolean (n_users, width): the ranked item is judged; a negative grade is by ``negative_grades``."""
    judged = data.judged[:, :width]
    return judged & (data.grades[:, :width] >= 0) if _negative_unjudged(negative_grades) else judged


RESIDUAL_TAILS = ("always", "with_unjudged")
"""When rbp_residual adds the weight p^n of the ranks after the list: always (Moffat & Zobel), or only when the
list read holds an unjudged item (trec_eval's rbp_resid, 0 otherwise)."""


@register_metric(
    "rbp_residual",
    k="optional",
    defaults={"p": 0.8, "negative_grades": "unjudged", "tail": "always"},
    choices={"negative_grades": NEGATIVE_GRADES, "tail": RESIDUAL_TAILS},
    description="Weight of the unjudged and unread ranks: the room binary RBP has left (trec_eval rbp_resid)",
)
def rbp_residual(
    data: MetricInput, k: int | None, p: float = 0.8, negative_grades: str = "unjudged", tail: str = "always"
) -> np.ndarray:
    """Σ (1 − p) p^(i−1) over unjudged recommended items + p^n after the n items read."""
    if tail not in RESIDUAL_TAILS:
        raise MetricError(f"rbp_residual tail must be one of {', '.join(RESIDUAL_TAILS)}, got {tail!r}")
    width = _top(data, k)
    unjudged = data.valid[:, :width] & ~_judged(data, width, negative_grades)
    after = p ** _num_ret(data, k).astype(np.float64)
    if tail == "with_unjudged":
        after = np.where(unjudged.any(axis=1), after, 0.0)
    return (unjudged * _rbp_weights(p, width)).sum(axis=1) + after


def _share(data: MetricInput, k: int | None, count: np.ndarray, denominator: str) -> np.ndarray:
    """``count`` / the items read (``list``; NaN for an empty list) or / k (``k``; the whole list without k)."""
    if denominator == "list" or (denominator == "k" and k is None):
        length = _num_ret(data, k)
    elif denominator == "k":
        length = np.full(data.n_users, k)
    else:
        raise MetricError(f"denominator must be one of {', '.join(PRECISION_DENOMINATORS)}, got {denominator!r}")
    return np.divide(count, length, out=np.full(data.n_users, np.nan), where=length > 0)


@register_metric(
    "judged",
    bounds=(0, 1),
    k="optional",
    defaults={"negative_grades": "nonrelevant", "denominator": "list"},
    choices={"negative_grades": NEGATIVE_GRADES, "denominator": PRECISION_DENOMINATORS},
    description="Share of the (top-k) list that is in the truth (ir-measures Judged@k)",
)
def judged(
    data: MetricInput, k: int | None, negative_grades: str = "nonrelevant", denominator: str = "list"
) -> np.ndarray:
    """Judged items of the list / items in the list (at most k), or / k with ``denominator=k``."""
    width = _top(data, k)
    return _share(data, k, _judged(data, width, negative_grades).sum(axis=1), denominator)


@register_metric(
    "unjudged",
    bounds=(0, 1),
    k="optional",
    defaults={"negative_grades": "unjudged", "denominator": "k"},
    choices={"negative_grades": NEGATIVE_GRADES, "denominator": PRECISION_DENOMINATORS},
    aliases=("unj",),
    description="Share of the top k that is not judged (trec_eval unj_k)",
)
def unjudged(data: MetricInput, k: int | None, negative_grades: str = "unjudged", denominator: str = "k") -> np.ndarray:
    """Unjudged items of the list / k (a short list is not filled up), or / the list with ``denominator=list``."""
    width = _top(data, k)
    count = (data.valid[:, :width] & ~_judged(data, width, negative_grades)).sum(axis=1)
    return _share(data, k, count, denominator)


def tail_items(popularity: np.ndarray, tail_ratio: float) -> np.ndarray:
    """Boolean per item: long-tail as RecBole's TailPercentage reads it from training counts.

    Returns
    -------
    numpy.ndarray
        One bool per item, True for the long-tail items (never an item without training ratings).

    Examples
    --------
    >>> tail_items(np.array([5.0, 0, 1, 2, 1]), 0.5).tolist()  # ⌊0.5·4⌋ = 2 least rated of the 4 rated items
    [False, False, True, False, True]
    >>> tail_items(np.array([5.0, 0, 1, 2, 1]), 2).tolist()  # at most 2 ratings
    [False, False, True, True, True]
    """
    if not tail_ratio > 0:
        raise MetricError(f"tail_percentage tail_ratio must be > 0 (a share in (0, 1] or a count), got {tail_ratio!r}")
    rated = popularity >= 1
    if tail_ratio > 1:
        return rated & (popularity <= tail_ratio)
    candidates = np.flatnonzero(rated)
    cut = max(int(len(candidates) * tail_ratio), 1)
    order = candidates[np.argsort(popularity[candidates], kind="stable")]
    out = np.zeros(len(popularity), dtype=bool)
    out[order[:cut]] = True
    return out


@register_metric(
    "tail_percentage",
    direction="higher",
    bounds=(0, 1),
    defaults={"tail_ratio": 0.1},
    needs_train=True,
    aliases=("tailpercentage",),
    description="Share of the top k that are long-tail items (RecBole TailPercentage)",
)
def tail_percentage(data: MetricInput, k: int, tail_ratio: float = 0.1) -> np.ndarray:
    """Long-tail items in the top k / items in the top k; NaN for an empty list."""
    tail = tail_items(data.item_popularity, float(tail_ratio))
    top = data.rankings[:, :k]
    valid = top >= 0
    count = (tail[np.where(valid, top, 0)] & valid).sum(axis=1)
    length = valid.sum(axis=1)
    return np.divide(count, length, out=np.full(data.n_users, np.nan), where=length > 0)
