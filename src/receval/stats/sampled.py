"""Sampled metrics and their corrections: from ranks among sampled negatives to the full-catalogue metric.

A held-out item is ranked against ``n`` sampled negatives instead of the ``N - 1`` other
items of the catalogue (``n_items = N``). Its *sampled rank* ``r~`` (1 to ``n + 1``) is then
a draw given its full rank ``r``: with negatives drawn uniformly, each of the ``n`` is one of
the ``r - 1`` items ranked above it with probability ``(r - 1) / (N - 1)``, so

    r~ - 1 | r  ~  Binomial(n, (r - 1) / (N - 1))

(Krichene & Rendle, KDD 2020, "On Sampled Metrics for Item Recommendation", §3; exact for
draws with replacement, and close to the hypergeometric law of draws without replacement
when ``n`` is much smaller than ``N``). The metric of the sampled list is biased: a
sampled top-10 is roughly a full top-``10 N / n`` and, as ``n`` shrinks, every metric
collapses to AUC. The corrections of :func:`estimate` (words of
:data:`receval.vocabulary.SAMPLED_CORRECTIONS`):

- ``none`` — the mean metric of the sampled lists, uncorrected.
- ``ls`` / ``bv`` — Krichene & Rendle §4: a value ``M^(r~)`` for each sampled rank, chosen
  so that ``E[M^(r~) | r]`` is close to ``M(r)`` for every full rank (least squares), with a
  penalty ``gamma`` on the variance of ``M^`` (the bias-variance trade-off).
- ``mapping`` — Li, Jin, Gao & Liu (KDD 2020, "On Sampling Top-K Recommendation Evaluation"):
  the sampled top-``k`` hit ratio is the global hit ratio at a mapped cutoff ``f(k)``, so the
  global hit ratio at ``K`` is read off the sampled hit-ratio curve at ``f^-1(K)``.
- ``mle`` / ``mes`` — Jin, Li, Mudrak, Gao & Liu (AAAI 2021, "On Estimating Recommendation
  Evaluation Metrics under Sampling"): the distribution of full ranks is estimated from the
  sampled ranks (maximum likelihood by EM; maximum entropy under a squared distance to the
  observed sampled-rank distribution), and the metric is its expectation.

Each estimator works on the histogram of sampled ranks (``n + 1`` bins) and the
``N x (n + 1)`` table of ``P(r~ | r)``: its cost is ``O(n N)`` whatever the number of users.
Every correction assumes uniform sampling; asked for popularity-sampled ranks it is refused
(:func:`check_correction`). The estimators' formulas and assumptions are in
``docs/sampled_estimators.md``.

Examples
--------
Three held-out items at full ranks 1, 5 and 40 of 100 items, ranked against 9 negatives
(sampled ranks 1, 1 and 4):

>>> ranks = np.array([1, 1, 4])
>>> rank_metric("recall", 1, ranks, 10).mean().round(3)  # the sampled HR@1
np.float64(0.667)
>>> estimate("recall", 1, ranks, n_sampled=9, n_items=100)  # the same, through estimate
0.6666666666666666
>>> round(estimate("auc", None, ranks, n_sampled=9, n_items=100, correction="bv"), 2)
0.88
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from receval.errors import ConfigError
from receval.validate import check_count, check_memory, check_number
from receval.vocabulary import SAMPLED_CORRECTIONS, SAMPLING_SCHEMES, UNIFORM_ONLY_CORRECTIONS, sampled_word

__all__ = [
    "GAMMA_DEFAULT",
    "METRICS",
    "SUPPORTED",
    "TIES",
    "check_correction",
    "check_exponent",
    "check_sample_memory",
    "estimate",
    "estimate_per_row",
    "list_metric",
    "pooled_ranks",
    "rank_distribution",
    "rank_metric",
    "sampled_ranks",
    "transition",
]

METRICS: tuple[str, ...] = ("recall", "precision", "ndcg", "mrr", "ap", "auc")
"""The metrics of one held-out item at a rank (``recall`` is also the hit ratio, HR)."""

TIES: tuple[str, ...] = ("pessimistic", "optimistic", "average")
"""How a negative scored equal to the positive counts: above it, below it, or half of each."""

GAMMA_DEFAULT = 0.1
"""The bias-variance trade-off of ``bv`` when none is given: the value of Krichene & Rendle's experiments."""

SUPPORTED: dict[str, frozenset[str]] = {
    "none": frozenset(METRICS),
    "ls": frozenset(METRICS),
    "bv": frozenset(METRICS),
    # Li et al. map the hit ratio's cutoff; precision of one held-out item is HR@k / k
    "mapping": frozenset({"recall", "precision"}),
    "mle": frozenset(METRICS),
    "mes": frozenset(METRICS),
}
"""The metrics each correction of :data:`~receval.vocabulary.SAMPLED_CORRECTIONS` estimates."""

# measured with tracemalloc (receval.evaluation.candidates.draw_candidates, 50,000 to 8M negatives, both schemes and
# shapes): a draw peaks at 102-163 bytes per negative and keeps 4 (int32); the lower figure is used, so a sample
# refused certainly cannot fit
_DRAW_BYTES = 100
_KEPT_BYTES = 8  # a kept sample (int32) and its copy ordered by test pair (the study's) or its ranks
_SAMPLE_BYTES = 512  # per sample: its seed, its candidate object and a few table rows
_LOG_FLOAT_MAX = float(np.log(np.finfo(np.float64).max))
_PER_ROW = ("none", "ls", "bv", "mapping")  # mle and mes estimate a rank distribution: a mean, not a row's value
_EM_ITERATIONS = 5000


# ----------------------------------------------------------------------------- one item's metric
def rank_metric(name: str, k: int | None, ranks: np.ndarray | Any, n_items: int) -> np.ndarray:
    """The value of metric ``name`` at cutoff ``k`` for ONE relevant item at 1-based rank ``r`` of ``n_items``.

    With one relevant item the metrics reduce to functions of its rank: ``recall`` (the hit
    ratio) ``1[r <= k]``, ``precision`` ``1[r <= k] / k``, ``ndcg`` ``1[r <= k] / log2(r + 1)``
    (the ideal DCG of one item is 1), ``mrr`` and ``ap`` ``1[r <= k] / r`` (the precision at the
    one relevant item), ``auc`` ``(n_items - r) / (n_items - 1)`` (the share of the other items
    ranked below it; no cutoff). Non-integer ranks (ties averaged) are used as they are.

    Parameters
    ----------
    name
        One of :data:`METRICS`.
    k
        The cutoff, or ``None`` for the whole list.
    ranks
        1-based ranks, any shape; NaN (no item) gives NaN.
    n_items
        The length of the list the item is ranked in (the catalogue, or ``n + 1`` for a sample).

    Returns
    -------
    numpy.ndarray
        float64 values, the shape of ``ranks``.

    Examples
    --------
    >>> rank_metric("ndcg", 10, [1, 3, 11], 100).round(3).tolist()
    [1.0, 0.5, 0.0]
    >>> rank_metric("auc", None, [1, 51, 101], 101).tolist()
    [1.0, 0.5, 0.0]
    """
    name = _metric_name(name)
    n_items = check_count(n_items, "n_items", minimum=2)
    cutoff = n_items if k is None else check_count(k, "k")
    r = np.asarray(ranks, dtype=np.float64)
    finite = r[np.isfinite(r)]
    if finite.size and (finite.min() < 1 or finite.max() > n_items):
        raise ConfigError(f"ranks run from {finite.min():g} to {finite.max():g}; a rank is from 1 to n_items={n_items}")
    if name == "auc":
        return (n_items - r) / (n_items - 1)
    hit = np.where(np.isnan(r), np.nan, (r <= cutoff).astype(np.float64))
    if name == "recall":
        return hit
    if name == "precision":
        return hit / cutoff
    if name == "ndcg":
        return hit / np.log2(r + 1.0)
    return hit / r  # mrr, ap


def _metric_name(name: str) -> str:
    key = str(name).strip().lower()
    key = "recall" if key in ("hr", "hit", "hit_ratio", "hitrate") else key
    if key not in METRICS:
        raise ConfigError(f"metric {name!r} has no sampled form; use one of {', '.join(METRICS)}")
    return key


# ----------------------------------------------------------------------------- sampled ranks
def sampled_ranks(
    positive_scores: np.ndarray | Any, negative_scores: np.ndarray | Any, *, ties: str = "pessimistic"
) -> np.ndarray:
    """The 1-based rank of each positive among its row's negatives (``1 +`` the negatives scored above it).

    Each positive is ranked against the negatives only, not against the row's other
    positives: the setting of Krichene & Rendle's analysis, in which a sampled rank depends
    on one item's full rank. Ties (a negative scored equal to the positive): ``pessimistic``
    (default; the negative counts above, so a constant model scores the worst rank, not the
    best), ``optimistic`` (below) or ``average`` (half of each, a rank ending in .5).

    Parameters
    ----------
    positive_scores
        ``(n_rows,)`` (one held-out item per row) or ``(n_rows, m)`` (a user's ``m`` test
        items against the user's negatives; NaN pads a row with fewer).
    negative_scores
        ``(n_rows, n)`` scores of the row's sampled negatives (``-inf`` is below every score; no NaN).
    ties
        One of :data:`TIES`.

    Returns
    -------
    numpy.ndarray
        float64 ranks from 1 to ``n + 1``, the shape of ``positive_scores`` (NaN where it is NaN).

    Examples
    --------
    >>> sampled_ranks([0.9, 0.2], [[0.1, 0.5, 0.9], [0.3, 0.2, 0.1]]).tolist()
    [2.0, 3.0]
    >>> sampled_ranks([0.9, 0.2], [[0.1, 0.5, 0.9], [0.3, 0.2, 0.1]], ties="average").tolist()
    [1.5, 2.5]
    """
    ties = sampled_word("ties", ties, TIES)
    pos = np.asarray(positive_scores, dtype=np.float64)
    neg = np.asarray(negative_scores, dtype=np.float64)
    if neg.ndim != 2 or pos.ndim not in (1, 2) or pos.shape[0] != neg.shape[0]:
        raise ConfigError(
            f"positive_scores {pos.shape} and negative_scores {neg.shape} do not match: give (n_rows,) or "
            "(n_rows, m) positives and (n_rows, n) negatives"
        )
    if np.isnan(neg).any():
        row = int(np.flatnonzero(np.isnan(neg).any(axis=1))[0])
        raise ConfigError(f"negative_scores of row {row} hold NaN; score every candidate (-inf ranks an item last)")
    pos2 = pos.reshape(len(pos), -1)
    out = np.empty(pos2.shape)
    # rows in chunks: the comparison holds chunk x m x n booleans, not n_rows x m x n
    step = max(1, 4_000_000 // max(1, pos2.shape[1] * neg.shape[1]))
    for start in range(0, len(pos2), step):
        p, q = pos2[start : start + step, :, None], neg[start : start + step, None, :]
        above = (q > p).sum(axis=2)
        if ties != "optimistic":
            equal = (q == p).sum(axis=2)
            above = above + (equal if ties == "pessimistic" else 0.5 * equal)
        out[start : start + step] = 1.0 + above
    out[np.isnan(pos2)] = np.nan
    return out.reshape(pos.shape)


# ----------------------------------------------------------------------------- the sampling law
@lru_cache(maxsize=16)
def _transition(n_sampled: int, n_items: int) -> np.ndarray:
    # the estimators hold the table and a few products of its size (EM: two per step)
    check_memory(3 * 8.0 * n_items * (n_sampled + 1), f"the {n_items} x {n_sampled + 1} table of P(r~ | r)",
                 "estimate over a smaller catalogue (n_items) or use correction=none")  # fmt: skip
    r = np.arange(1, n_items + 1, dtype=np.float64)
    table = stats.binom.pmf(np.arange(n_sampled + 1)[None, :], n_sampled, ((r - 1) / (n_items - 1))[:, None])
    table.flags.writeable = False
    return table


def transition(n_sampled: int, n_items: int) -> np.ndarray:
    """``P(r~ | r)``: row ``r - 1`` holds the law of the sampled rank of an item at full rank ``r``.

    ``r~ - 1 ~ Binomial(n_sampled, (r - 1) / (n_items - 1))`` (Krichene & Rendle, KDD 2020, §3).

    Returns
    -------
    numpy.ndarray
        ``(n_items, n_sampled + 1)`` float64, each row summing to 1 (read-only, cached).

    Examples
    --------
    >>> transition(2, 3).round(3).tolist()  # full rank 2 of 3: each of 2 negatives is above it with probability 1/2
    [[1.0, 0.0, 0.0], [0.25, 0.5, 0.25], [0.0, 0.0, 1.0]]
    """
    n_sampled, n_items = _sizes(n_sampled, n_items)
    return _transition(n_sampled, n_items)


def _sizes(n_sampled: int, n_items: int) -> tuple[int, int]:
    n_sampled = check_count(n_sampled, "n_sampled")
    n_items = check_count(n_items, "n_items", minimum=2)
    if n_sampled > n_items - 1:
        raise ConfigError(f"n_sampled={n_sampled} negatives cannot be drawn from the {n_items - 1} other items")
    return n_sampled, n_items


# ----------------------------------------------------------------------------- checks
def check_correction(correction: str, name: str, *, sampling: str = "uniform") -> str:
    """``correction`` as a word of :data:`~receval.vocabulary.SAMPLED_CORRECTIONS` fit for ``name`` and ``sampling``.

    The one check of a correction, before any work starts: the corrections of
    :data:`~receval.vocabulary.UNIFORM_ONLY_CORRECTIONS` (every one but ``none``) rest on the
    binomial law of uniformly drawn negatives, so none of them is valid for negatives drawn by
    popularity; ``mapping`` estimates only the hit ratio (and precision).

    Returns
    -------
    str
        The correction's word.

    Examples
    --------
    >>> check_correction("BV", "ndcg")
    'bv'
    >>> check_correction("bv", "ndcg", sampling="popularity")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: correction=bv assumes uniformly sampled negatives, but sampling=popularity; use ...
    """
    word = sampled_word("correction", correction, SAMPLED_CORRECTIONS)
    scheme = sampled_word("sampling", sampling, SAMPLING_SCHEMES)
    metric = _metric_name(name)
    if word in UNIFORM_ONLY_CORRECTIONS and scheme != "uniform":
        raise ConfigError(
            f"correction={word} assumes uniformly sampled negatives, but sampling={scheme}; "
            "use sampling=uniform or correction=none",
            parameters=["correction", "sampling"],
        )
    if metric not in SUPPORTED[word]:
        raise ConfigError(
            f"correction={word} does not estimate {metric}; it estimates {', '.join(sorted(SUPPORTED[word]))}",
            parameters=["correction"],
        )
    return word


def check_sample_memory(
    n: int, rows: int = 1, *, repeats: int = 1, kept: float = _KEPT_BYTES, fix: str, parameters: Sequence[str] = ()
) -> None:
    """Refuse, before anything is drawn, ``repeats`` samples of ``n`` negatives for ``rows`` rows that cannot fit.

    A draw peaks at about 100 bytes per negative (measured: 102-163) and every sample kept
    holds ``kept`` bytes per negative (its int32 negatives and a copy or their ranks), so
    ``rows x n x (100 + repeats x kept) + repeats x 512`` bytes must fit in the available
    memory (:func:`receval.validate.check_memory`). Without the data, ``rows = 1`` gives the
    bound every data set needs.

    ``parameters`` are the options ``fix`` names as ``name=`` (a command spells them as its own).

    Returns
    -------
    None
        Or a one-line :class:`~receval.errors.ConfigError` with the memory needed and available, and ``fix``.

    Examples
    --------
    >>> check_sample_memory(100, 1000, repeats=20, fix="lower --repeats")
    >>> check_sample_memory(100, repeats=10**12, fix="lower --repeats")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: 1,000,000,000,000 samples of 100 negatives for 1 row needs 1312.0 TB of memory and ...
    """
    n_bytes = float(rows) * n * (_DRAW_BYTES + repeats * kept) + repeats * float(_SAMPLE_BYTES)
    what = (
        f"{repeats:,} sample{'s' if repeats > 1 else ''} of {n:,} negatives for {rows:,} row{'s' if rows > 1 else ''}"
    )
    try:
        check_memory(n_bytes, what, fix)
    except ConfigError as exc:
        raise ConfigError(exc.message, parameters=parameters) from None


def check_exponent(exponent: float, counts: np.ndarray | Any, option: str = "exponent") -> float:
    """``exponent`` if the popularity weights ``counts ** exponent`` and their sum are finite float64 numbers.

    Negatives drawn by popularity are drawn in proportion to the training count ``**
    exponent``; counts are at least 1 there, so a weight never underflows, but it overflows
    (and its sum, drawn against, is NaN) once ``exponent x ln(largest count) + ln(items)``
    passes ``ln`` of the largest float64 (about 709.78). The refusal names the largest
    exponent the data allows.

    Returns
    -------
    float
        The exponent.

    Examples
    --------
    >>> check_exponent(0.75, [1, 5, 583])
    0.75
    >>> check_exponent(400, [1, 5, 583])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: exponent=400: the popularity weights overflow float64 (583 ** 400 summed over 3 ...
    """
    c = np.asarray(counts, dtype=np.float64)
    drawable = c[c > 0]
    top = float(drawable.max()) if drawable.size else 1.0
    if top <= 1.0:  # every weight is 1 whatever the exponent
        return float(exponent)
    limit = (_LOG_FLOAT_MAX - np.log(drawable.size)) / np.log(top)
    if exponent >= limit:
        below = np.floor(limit * 100) / 100
        raise ConfigError(
            f"{option}={exponent:g}: the popularity weights overflow float64 ({top:g} ** {exponent:g} summed over "
            f"{drawable.size:,} items is beyond 1.8e308); on this data the largest is {option}={below:g}",
            parameters=[option],
        )
    return float(exponent)


def pooled_ranks(
    pos_users: np.ndarray | Any, pos_scores: np.ndarray | Any, neg_users: np.ndarray | Any, neg_scores: np.ndarray | Any
) -> np.ndarray:
    """The 1-based rank of each positive in its user's one list: all of the user's positives and negatives together.

    RecBole's sampled evaluation (``uni100``) scores each user's positives and sampled
    negatives and ranks them as one list (``recbole/trainer/trainer.py``
    ``_neg_sample_batch_eval``: the candidates' scores in a row of ``-inf``), so a
    positive is ranked below the user's other positives scored higher, unlike
    :func:`sampled_ranks`. A negative scored equal to a positive ranks above it
    (pessimistic); positives scored equal keep the order given (it changes no metric of
    binary relevance). Negatives must be distinct per user.

    Parameters
    ----------
    pos_users, pos_scores
        The user of each positive and its score.
    neg_users, neg_scores
        The user of each negative and its score (no NaN; ``-inf`` is below every score).

    Returns
    -------
    numpy.ndarray
        float64 ranks, one per positive, from 1 to the length of its user's list.

    Examples
    --------
    User 0 has positives scored 0.9 and 0.2 and negatives 0.5 and 0.9: the list is 0.9 (the
    negative, tied above), 0.9, 0.5, 0.2.

    >>> pooled_ranks([0, 0], [0.9, 0.2], [0, 0], [0.5, 0.9]).tolist()
    [2.0, 4.0]
    """
    pu = np.asarray(pos_users, dtype=np.int64)
    ps = np.asarray(pos_scores, dtype=np.float64)
    nu = np.asarray(neg_users, dtype=np.int64)
    ns = np.asarray(neg_scores, dtype=np.float64)
    if np.isnan(ns).any() or np.isnan(ps).any():
        raise ConfigError("a candidate's score is NaN; score every candidate (-inf ranks an item last)")
    # scores as integer codes (their order), so that (user, code) is one sortable int64 key
    codes = np.unique(np.concatenate([ps, ns]), return_inverse=True)[1]
    width = int(codes.max(initial=0)) + 2
    pos_code, neg_code = codes[: len(ps)], codes[len(ps) :]
    neg_keys = np.sort(nu * width + neg_code)
    # negatives of the user scored at least the positive's score
    above = np.searchsorted(neg_keys, pu * width + width - 1) - np.searchsorted(neg_keys, pu * width + pos_code)
    # positives of the user scored higher (or equal and given earlier)
    order = np.lexsort((np.arange(len(pu)), -pos_code, pu))
    starts = np.searchsorted(pu[order], pu[order], side="left")
    before = np.empty(len(pu), dtype=np.int64)
    before[order] = np.arange(len(pu)) - starts
    return 1.0 + above + before


def list_metric(
    name: str, k: int | None, users: np.ndarray | Any, ranks: np.ndarray | Any, n_negatives: np.ndarray | Any
) -> tuple[np.ndarray, np.ndarray]:
    """Each user's metric over one list holding all of the user's positives (ranks from :func:`pooled_ranks`).

    The definitions of RecBole (``recbole/evaluator/metrics.py``, binary relevance):
    ``recall`` hits / positives, ``hit_rate`` 1 if any hit, ``precision`` hits / ``k``,
    ``ndcg`` the DCG of the hits over the ideal DCG of ``min(k, positives)`` items, ``mrr``
    1 / the first hit's rank, ``map`` the sum of the precision at each hit over ``min(k,
    positives)``; ``auc`` is the share of (positive, negative) pairs ordered right. A hit is
    a positive at rank ``<= k``; without ``k`` the cutoff is the list's length.

    Parameters
    ----------
    name
        ``recall``, ``hit_rate``, ``precision``, ``ndcg``, ``mrr``, ``map`` or ``auc``.
    k
        The cutoff, or ``None``.
    users, ranks
        Each positive's user and rank in the user's list.
    n_negatives
        Per user index (``n_negatives[u]``), the number of negatives in the user's list.

    Returns
    -------
    tuple of numpy.ndarray
        The users (sorted, each once) and their values.

    Examples
    --------
    A user with 2 positives at ranks 2 and 4 of a list of 6 (4 negatives):

    >>> [round(float(list_metric(m, 3, [0, 0], [2, 4], [4])[1][0]), 4) for m in ("recall", "ndcg", "map", "auc")]
    [0.5, 0.3869, 0.25, 0.625]
    """
    u = np.asarray(users, dtype=np.int64)
    r = np.asarray(ranks, dtype=np.float64)
    negatives = np.asarray(n_negatives, dtype=np.float64)
    order = np.lexsort((r, u))
    u, r = u[order], r[order]
    ids, starts, m = np.unique(u, return_index=True, return_counts=True)
    if name == "auc":  # the negatives below each positive: its list length minus what is above it, itself excluded
        below = negatives[u] - (r - 1 - (np.arange(len(u)) - np.repeat(starts, m)))
        with np.errstate(invalid="ignore", divide="ignore"):
            return ids, np.add.reduceat(below, starts) / (m * negatives[ids])
    cutoff = negatives[u] + np.repeat(m, m) if k is None else np.full(len(u), float(k))
    hit = (r <= cutoff).astype(np.float64)
    per_user_cutoff = cutoff[starts]
    if name == "recall":
        return ids, np.add.reduceat(hit, starts) / m
    if name == "hit_rate":
        return ids, (np.add.reduceat(hit, starts) > 0).astype(np.float64)
    if name == "precision":
        return ids, np.add.reduceat(hit, starts) / per_user_cutoff
    if name == "mrr":
        return ids, hit[starts] / r[starts]
    position = np.arange(len(u)) - np.repeat(starts, m) + 1.0  # the positive's place among the user's positives
    ideal_n = np.minimum(m, per_user_cutoff)
    if name == "map":
        return ids, np.add.reduceat(hit * position / r, starts) / ideal_n
    if name == "ndcg":
        discount = 1.0 / np.log2(np.arange(2, int(ideal_n.max(initial=1)) + 2))
        ideal = np.concatenate([[0.0], np.cumsum(discount)])[ideal_n.astype(np.int64)]
        return ids, np.add.reduceat(hit / np.log2(r + 1.0), starts) / ideal
    raise ConfigError(f"metric {name!r} has no list form; use recall, hit_rate, precision, ndcg, mrr, map or auc")


def _ranks(ranks: np.ndarray | Any, n_sampled: int) -> np.ndarray:
    r = np.asarray(ranks, dtype=np.float64)
    finite = r[np.isfinite(r)]
    if finite.size == 0:
        raise ConfigError("no sampled rank to estimate from (every rank is NaN or there are none)")
    if finite.min() < 1 or finite.max() > n_sampled + 1:
        raise ConfigError(
            f"sampled ranks run from {finite.min():g} to {finite.max():g}; with n_sampled={n_sampled} negatives "
            f"a rank is from 1 to {n_sampled + 1}"
        )
    return r


def _histogram(ranks: np.ndarray, n_sampled: int) -> np.ndarray:
    """The number of rows at each sampled rank 1..n+1; a rank between two integers (averaged ties) is split."""
    r = ranks[np.isfinite(ranks)]
    low = np.floor(r).astype(np.int64)
    upper = r - low
    hist = np.bincount(low - 1, weights=1.0 - upper, minlength=n_sampled + 2)
    hist += np.bincount(np.minimum(low, n_sampled + 1), weights=upper, minlength=n_sampled + 2)
    return hist[: n_sampled + 1]


def _at(values: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """``values`` (one per sampled rank 1..n+1) at each rank, linear between integers, NaN kept."""
    out = np.full(ranks.shape, np.nan)
    ok = np.isfinite(ranks)
    out[ok] = np.interp(ranks[ok], np.arange(1, len(values) + 1), values)
    return out


# ----------------------------------------------------------------------------- the estimators
def estimate(
    name: str,
    k: int | None,
    ranks: np.ndarray | Any,
    *,
    n_sampled: int,
    n_items: int,
    correction: str = "none",
    gamma: float = GAMMA_DEFAULT,
    sampling: str = "uniform",
) -> float:
    """The estimate of the full-catalogue mean of metric ``name@k`` from sampled ranks.

    Parameters
    ----------
    name, k
        The metric (one of :data:`METRICS`) and its cutoff (``None``: no cutoff).
    ranks
        Sampled ranks from 1 to ``n_sampled + 1`` (:func:`sampled_ranks`), any shape; NaN is no item.
    n_sampled
        The number of negatives each positive was ranked against.
    n_items
        ``N``, the length of the full list (the catalogue) the estimate is for.
    correction
        ``none`` (the mean metric of the sampled lists), ``ls``, ``bv`` (Krichene & Rendle,
        KDD 2020), ``mapping`` (Li et al., KDD 2020), ``mle``, ``mes`` (Jin et al., AAAI 2021);
        see the module's text and ``docs/sampled_estimators.md``.
    gamma
        ``bv``'s weight of the variance against the squared bias, from 0 (``ls``) to 1.
    sampling
        How the negatives were drawn; every correction but ``none`` needs ``uniform``.

    Returns
    -------
    float
        The estimated mean over the finite ranks.

    Examples
    --------
    A system whose held-out items all sit at full rank 1 of 1000 is ranked first among
    any sample: HR@10 is 1 in full. The rank-distribution estimate says so; ``bv``'s values
    per sampled rank are not held to the metric's range (Krichene & Rendle do not clip them).

    >>> ranks = np.ones(50)
    >>> [round(estimate("recall", 10, ranks, n_sampled=99, n_items=1000, correction=c), 2)
    ...  for c in ("none", "bv", "mle")]
    [1.0, 1.1, 1.0]
    """
    word = check_correction(correction, name, sampling=sampling)
    if word in _PER_ROW:
        values = estimate_per_row(
            name, k, ranks, n_sampled=n_sampled, n_items=n_items, correction=word, gamma=gamma, sampling=sampling
        )
        return float(np.nanmean(values))
    n_sampled, n_items = _sizes(n_sampled, n_items)
    counts = _histogram(_ranks(ranks, n_sampled), n_sampled)
    pi = _distribution(tuple(counts.tolist()), n_sampled, n_items, word)
    return float(pi @ rank_metric(name, k, np.arange(1, n_items + 1), n_items))


@lru_cache(maxsize=64)
def _distribution(counts: tuple[float, ...], n_sampled: int, n_items: int, method: str) -> np.ndarray:
    # every metric of one system and sample estimates from the same ranks: one fit (seconds on 10k items) for all
    # (the study asks each metric's samples in turn: 64 fits cover 32 samples of both methods, and weigh less
    # than the transition table they are fitted with)
    pi = rank_distribution(np.asarray(counts), n_sampled=n_sampled, n_items=n_items, method=method)
    pi.flags.writeable = False
    return pi


def estimate_per_row(
    name: str,
    k: int | None,
    ranks: np.ndarray | Any,
    *,
    n_sampled: int,
    n_items: int,
    correction: str = "none",
    gamma: float = GAMMA_DEFAULT,
    sampling: str = "uniform",
) -> np.ndarray:
    """Each row's estimate of the full-catalogue metric, for the corrections with a per-row form.

    ``none``, ``ls``, ``bv`` and ``mapping`` give each sampled rank a value ``M^(r~)``; a row's
    estimate is the value at its rank, and :func:`estimate` is their mean. ``mle`` and ``mes``
    estimate the distribution of full ranks over all rows, so they have no per-row form.
    Parameters as for :func:`estimate`.

    Returns
    -------
    numpy.ndarray
        float64 estimates, the shape of ``ranks`` (NaN where it is NaN).

    Examples
    --------
    >>> estimate_per_row("recall", 1, [1, 2], n_sampled=1, n_items=2).tolist()
    [1.0, 0.0]
    >>> estimate_per_row("recall", 1, [1, 2], n_sampled=1, n_items=2, correction="mle")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: correction=mle estimates the distribution of full ranks over all rows, not a ...
    """
    word = check_correction(correction, name, sampling=sampling)
    if word not in _PER_ROW:
        raise ConfigError(
            f"correction={word} estimates the distribution of full ranks over all rows, not a row's value; "
            "use estimate() for its mean",
            parameters=["correction"],
        )
    n_sampled, n_items = _sizes(n_sampled, n_items)
    r = _ranks(ranks, n_sampled)
    if word == "none":
        return rank_metric(name, k, r, n_sampled + 1)
    if word == "mapping":
        values = _mapped_hits(_metric_name(name), k, n_sampled, n_items)
    else:
        g = 0.0 if word == "ls" else check_number(gamma, "gamma", minimum=0, maximum=1)
        values = _corrected(_metric_name(name), k, n_sampled, n_items, g)
    return _at(values, r)


@lru_cache(maxsize=64)
def _corrected(name: str, k: int | None, n_sampled: int, n_items: int, gamma: float) -> np.ndarray:
    """Krichene & Rendle's corrected metric: ``M^`` minimising the bias-variance loss (γ = 0: least squares).

    Write ``A[r, j] = P(r~ = j + 1 | r)`` and weight the full ranks uniformly, ``p(r) = 1/N``
    (the true rank distribution is unknown; Krichene & Rendle's choice). For a vector ``x``
    of values per sampled rank, ``E[x(r~) | r] = (A x)_r`` and
    ``Var[x(r~) | r] = (A x²)_r - (A x)_r²``; the loss

        L(x) = Σ_r p(r) [ ((A x)_r - M(r))² + γ ((A x²)_r - (A x)_r²) ]
             = (1 - γ) xᵀ Aᵀ P A x - 2 xᵀ Aᵀ P M + γ xᵀ diag(Aᵀ p) x + const

    is minimised where ``((1 - γ) Aᵀ P A + γ diag(Aᵀ p)) x = Aᵀ P M``. With γ = 0 (``ls``)
    ``Aᵀ P A`` is numerically singular for samples of 100 and more (its smallest singular
    values are below machine precision), so the minimum-norm least-squares solution is taken.
    """
    a = _transition(n_sampled, n_items)
    metric = rank_metric(name, k, np.arange(1, n_items + 1), n_items)
    if gamma == 0.0:
        values = np.linalg.lstsq(a, metric, rcond=None)[0]
    else:  # p(r) = 1/N is a common factor of both sides
        lhs = (1.0 - gamma) * (a.T @ a) + gamma * np.diag(a.sum(axis=0))
        values = np.linalg.solve(lhs, a.T @ metric)
    values.flags.writeable = False
    return values


@lru_cache(maxsize=64)
def _mapped_hits(name: str, k: int | None, n_sampled: int, n_items: int) -> np.ndarray:
    """Li et al.'s mapping: the global HR@K read off the sampled hit-ratio curve at the mapped cutoff.

    An item at full rank ``r`` is in the sampled top-``j`` with probability
    ``P(Binomial(n, (r - 1)/(N - 1)) <= j - 1)``, a smooth step in ``r``; its midpoint
    ``f(j)`` (probability 1/2, from the regularised incomplete beta function) is the global
    cutoff that the sampled top-``j`` stands for, ``SHR@j ≈ HR@f(j)``, and ``f`` is close to
    linear (``f(j) ≈ 1 + (j - 1/2)(N - 1)/n``). The global ``HR@K`` is the sampled hit-ratio
    curve placed at the global positions ``f(0) = 0, f(1), ..., f(n + 1) = N`` and read at
    ``K`` by linear interpolation; a row at sampled rank ``j`` contributes 1 when
    ``f(j) <= K``, the interpolation weight when ``f(j - 1) < K < f(j)``, and 0 after.
    """
    cutoff = n_items if k is None else k
    j = np.arange(1, n_sampled + 1)
    # P(Bin(n, p) <= j - 1) = I_{1-p}(n - j + 1, j): the p at which it is 1/2
    p_half = 1.0 - special.betaincinv(n_sampled - j + 1, j, 0.5)
    f = np.concatenate([[0.0], 1.0 + (n_items - 1) * p_half, [float(n_items)]])
    values = np.clip((cutoff - f[:-1]) / (f[1:] - f[:-1]), 0.0, 1.0)
    if name == "precision":
        values = values / cutoff
    values.flags.writeable = False
    return values


def rank_distribution(counts: np.ndarray | Any, *, n_sampled: int, n_items: int, method: str = "mle") -> np.ndarray:
    """Jin et al.'s estimate of the distribution of full ranks from the counts of sampled ranks.

    The sampled ranks are a mixture, ``P(r~) = Σ_r π_r P(r~ | r)`` with ``P(r~ | r)`` the
    binomial law of :func:`transition` (``A``), and ``U`` rows gave the observed shares ``h``.

    - ``mle`` maximises the likelihood ``Σ_j h_j log (Aᵀ π)_j`` over the simplex by EM (each
      step ``π_r ← π_r Σ_j A[r, j] h_j / (Aᵀ π)_j``, from the uniform distribution). The
      maximum itself is spiky (``N`` unknowns, ``n + 1`` observed shares) and its metric
      drifts as EM converges, so EM stops by the discrepancy principle, once the fit is
      within sampling noise: when the G statistic ``2 U KL(h || Aᵀ π)`` is at most the number
      of observed ranks minus one (its expectation for a correct model), or after 5000 steps.
    - ``mes`` keeps, among distributions that fit, the one of maximum entropy: it minimises
      ``U ||Aᵀ π - h||² - H(π)`` (the squared distance in units of its sampling noise, about
      ``1/U``) over the simplex, through its Fenchel dual: ``π = softmax(-A θ)`` for the ``n + 1``
      numbers ``θ`` maximising ``-logsumexp(-A θ) - θ·h - ||θ||²/(4U)`` (L-BFGS from ``θ = 0``).
      The entropy spreads the mass evenly over full ranks the sample cannot tell apart (those
      of one sampled rank), so for systems whose ranks crowd the top of the catalogue
      ``mes`` underestimates top-heavy metrics.

    Jin et al. tune the balance of fit and entropy; the stopping rule and the weight ``1/U``
    are our choices, with the reason above.

    Parameters
    ----------
    counts
        The number of rows at each sampled rank 1..n+1 (their sum is ``U``).
    n_sampled, n_items
        ``n`` and ``N``.
    method
        ``mle`` or ``mes``.

    Returns
    -------
    numpy.ndarray
        ``π``, ``(n_items,)`` float64 summing to 1.

    Examples
    --------
    Every sampled rank 1 (of 2 negatives among 3 items): the mass is at full rank 1.

    >>> rank_distribution([40, 0, 0], n_sampled=2, n_items=3).round(2).tolist()
    [1.0, 0.0, 0.0]
    """
    n_sampled, n_items = _sizes(n_sampled, n_items)
    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (n_sampled + 1,) or not np.isfinite(c).all() or c.min() < 0 or c.sum() <= 0:
        raise ConfigError(f"counts: give {n_sampled + 1} non-negative counts of the sampled ranks 1..{n_sampled + 1}")
    a = _transition(n_sampled, n_items)
    if method == "mle":
        return _em(a, c)
    if method == "mes":
        return _max_entropy(a, c)
    raise ConfigError(f"method={method!r}: use mle or mes", parameters=["method"])


def _em(a: np.ndarray, counts: np.ndarray) -> np.ndarray:
    n_rows = counts.sum()
    h = counts / n_rows
    seen = h > 0
    allowed = seen.sum() - 1
    pi = np.full(a.shape[0], 1.0 / a.shape[0])
    for _ in range(_EM_ITERATIONS):
        mix = a.T @ pi
        if 2.0 * n_rows * float(h[seen] @ np.log(h[seen] / mix[seen])) <= allowed:
            break
        pi = pi * (a @ np.where(seen, h / np.where(mix > 0, mix, 1.0), 0.0))
        pi /= pi.sum()
    return pi


def _max_entropy(a: np.ndarray, counts: np.ndarray) -> np.ndarray:
    # The Fenchel dual of min_π U ||Aᵀπ - h||² - H(π) over the simplex: with U ||v||² = max_θ θ·v - ||θ||²/(4U)
    # and min_π (Aθ)·π - H(π) = -logsumexp(-Aθ), it is max_θ -logsumexp(-Aθ) - θ·h - ||θ||²/(4U), smooth,
    # strongly concave and of n + 1 numbers only; π = softmax(-Aθ) at its maximum.
    n_rows = counts.sum()
    h = counts / n_rows

    def negated(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = -(a @ theta)
        top = special.logsumexp(z)
        pi = np.exp(z - top)
        return float(top + theta @ h + theta @ theta / (4.0 * n_rows)), h + theta / (2.0 * n_rows) - a.T @ pi

    found = optimize.minimize(negated, np.zeros(a.shape[1]), jac=True, method="L-BFGS-B",
                              options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})  # fmt: skip
    return _softmax(-(a @ found.x))


def _softmax(theta: np.ndarray) -> np.ndarray:
    z = np.exp(theta - theta.max())
    return z / z.sum()
