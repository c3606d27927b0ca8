"""Aspect-aware metrics: αβ-nDCG and the intent-aware family, on recommendation lists.

Every function takes ``rankings`` (int array ``(n_users, n)`` of item indices in rank
order, padded with -1), ``truth`` (CSR users x items holding the held-out ratings;
presence in the sparsity pattern = rated, explicit zeros kept), ``aspects`` (CSR
items x aspects, 0/1: MovieLens genres or any item→aspect table) and optionally
``train`` (CSR users x items of training ratings), and returns one float per user.
NaN marks a user the metric cannot score (see ``empty``); the registry's mean leaves
those users out and :func:`receval.evaluate` reports how many were scored.

Conventions (each one a parameter; defaults in brackets)
--------------------------------------------------------
- Relevance for the binary family (α-nDCG, ERR-IA, NRBP, P-IA, S-recall, S-RR,
  RBU, EU): a truth rating ≥ ``threshold`` [1.0]. An item is relevant to an aspect
  (TREC's "subtopic") when it is relevant and has the aspect: J(i, a) ∈ {0, 1}.
  The user's aspects S_u are the aspects of their relevant truth items.
- Users with no relevant aspect (no relevant truth item that has an aspect) and, for
  αβ-nDCG, users whose aspect preference γ cannot be estimated: ``empty="skip"``
  (NaN, left out of the mean) or ``"zero"``.
- A cutoff ``k`` beyond the list width: the lists are treated as padded with -1
  (missing positions gain nothing; normalisers still use k positions), as trec_eval
  and ndeval do. The padding is not allocated: the run is read to the longest list, an
  ideal to the longest ideal list (the user's relevant items; αβ-nDCG's candidates, at
  most the catalogue), and what k positions add beyond them is computed in closed form
  (P-IA's 1/k, EU's cost e per position). Items without aspects gain nothing.
- Discount of the DCG-type metrics: 1 / log2(1 + rank).
- Ideal rankings are built greedily (the exact problem is NP-hard): at each position
  the candidate with the largest marginal gain; ties go to the lowest item index
  (αβ-nDCG: truth items first, then unrated-aspect groups, see :func:`ab_ndcg`).

Formulas (rank j = 1..k, c_{a,j} = relevant items with aspect a above rank j)
- α-nDCG@k (Clarke et al. 2008): gain_j = Σ_a J(i_j,a)(1−α)^{c_{a,j}}, DCG / ideal DCG,
  ideal greedy over the user's relevant truth items. Equals ndeval's alpha-nDCG.
- ERR-IA@k (Chapelle et al. 2009, binary grades): Σ_{a∈S_u} (1/|S_u|) Σ_j (1/j) ρ J(i_j,a)
  (1−ρ)^{c_{a,j}}, ρ = ``alpha`` [0.5] = (2^1−1)/2^1; nERR-IA divides by the value of
  the greedy ideal (ndeval's normalisation).
- NRBP (Clarke et al. 2009): (1−(1−α)β)/|S_u| · Σ_j β^{j−1} gain_j over the whole list
  (no cutoff, ``k=None``); nNRBP divides by the NRBP of the full greedy ideal.
- P-IA@k: Σ_{a∈S_u} (1/|S_u|) (1/k) Σ_j J(i_j, a).
- S-recall@k: |covered ∩ D| / |D|, covered = aspects of the relevant items in the top k
  (``relevant_only=False``: of any item), D = S_u (``denominator="relevant"``, ndeval's
  strec) or all aspects (``"all"``, Zhai et al.'s n_A).
- S-RR@k: 1 / (first rank at which S-recall reaches 1), 0 if not within k.
- RBU@k (Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018), as the authors' code computes it:
  (1 − p) Σ_{j≤n} p^{j−1} (Σ_{a∈S_u} (1/|S_u|) r(i_j,a) Π_{l<j}(1 − r(i_l,a)) − e) over the
  n ≤ k items of the list, r(i,a) = ρ J(i,a), p = 0.8, e = 0.03, ρ = ``alpha`` [0.5];
  ``convention="paper"`` without the (1 − p) factor (see :func:`rbu`).
- EU@k (expected utility, Yang & Lad 2009, in the form compared by Amigó et al.):
  Σ_j p^{j−1} (Σ_{a∈S_u} (1/|S_u|) J(i_j,a)(1−α)^{c_{a,j}} − e): nuggets dampened by
  redundancy as in α-nDCG, a geometric (RBP) reader with patience p, cost e per item read.
- αβ-nDCG@k (Parapar & Radlinski 2021): see :func:`ab_ndcg`.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> aspects = sp.csr_matrix(np.array([[1, 0], [1, 0], [0, 1]], dtype=float))
>>> truth = sp.csr_matrix(np.array([[5.0, 4.0, 3.0]]))
>>> round(float(alpha_ndcg(np.array([[0, 1, 2]]), truth, aspects, k=3)[0]), 4)
0.9652
>>> round(float(alpha_ndcg(np.array([[0, 2, 1]]), truth, aspects, k=3)[0]), 4)
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval._jit import njit
from receval.data.csr import CSR
from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "ab_ndcg",
    "alpha_ndcg",
    "err_ia",
    "nerr_ia",
    "nrbp",
    "nnrbp",
    "p_ia",
    "s_recall",
    "s_rr",
    "rbu",
    "eu",
    "aspect_preferences",
]

Empty = Literal["skip", "zero"]


# ------------------------------------------------------------------ validation
def _csr(matrix: object, what: str) -> sp.csr_matrix:
    import scipy.sparse as sp

    if isinstance(matrix, CSR):  # the evaluation's own rows (receval.data.csr): the same arrays, as scipy's
        matrix = matrix.to_scipy()
    if not sp.issparse(matrix):
        raise MetricError(f"{what} must be a scipy sparse matrix (CSR), got {type(matrix).__name__}")
    m = sp.csr_matrix(matrix)
    if not m.has_sorted_indices:
        m = m.sorted_indices()
    return m


def _prepare(
    rankings: np.ndarray, truth: sp.csr_matrix, aspects: sp.csr_matrix | None, k: int | None
) -> tuple[np.ndarray, sp.csr_matrix, sp.csr_matrix, int]:
    """Validated int32 rankings cut to k (a cutoff beyond the lists reads them whole), sorted CSR truth,
    0/1 CSR aspects and k."""
    truth = _csr(truth, "truth")
    if aspects is None:
        raise MetricError("this metric needs an item→aspect table: pass aspects=", parameters=["aspects"])
    aspects = _csr(aspects, "aspects")
    n_users, n_items = truth.shape
    if aspects.shape[0] != n_items:
        raise MetricError(
            f"the aspect table has {aspects.shape[0]} item rows but the truth has {n_items} items; "
            "build both over the same item id space"
        )
    if aspects.nnz and (np.any(aspects.data < 0) or not np.all(np.isfinite(aspects.data))):
        raise MetricError("aspect table entries must be 0/1 (an item has the aspect or not)")
    aspects = aspects.copy()
    aspects.eliminate_zeros()
    if aspects.nnz == 0:
        raise MetricError(
            "the aspect table gives no aspect to any item of the evaluation: check that its item ids "
            "are those of the truth/recommendations (an empty table would make every user unscorable)"
        )
    aspects.data[:] = 1.0
    r = np.asarray(rankings)
    if r.ndim != 2 or r.dtype.kind not in "iu":
        raise MetricError(f"rankings must be a 2-d integer array (n_users, n), got shape {r.shape} dtype {r.dtype}")
    if r.shape[0] != n_users:
        raise MetricError(f"rankings have {r.shape[0]} user rows but the truth has {n_users}")
    if r.size and (r.min() < -1 or r.max() >= n_items):
        bad = int(r.max()) if r.max() >= n_items else int(r.min())
        raise MetricError(f"rankings hold item index {bad}, outside 0..{n_items - 1} (-1 pads short lists)")
    if r.size:
        srt = np.sort(r, axis=1)
        dup = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)
        if dup.any():
            row = int(np.flatnonzero(dup.any(axis=1))[0])
            raise MetricError(f"the ranked list of user row {row} repeats an item; each item may appear once")
    if k is None:
        k = r.shape[1]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise MetricError(f"the cutoff k must be a positive integer, got {k!r}")
    k = int(k)
    # positions after the longest list hold nothing: never allocated, however large k (one column for no list)
    width = min(k, max(r.shape[1], 1))
    if width <= r.shape[1]:
        out = np.ascontiguousarray(r[:, :width], dtype=np.int32)
    else:
        out = np.full((n_users, width), -1, dtype=np.int32)
    return out, truth, aspects, k


def _check_empty(empty: str) -> None:
    if empty not in ("skip", "zero"):
        raise MetricError(f"empty must be 'skip' (NaN, left out of the mean) or 'zero', got {empty!r}")


def _check_unit(name: str, value: float, *, open_low: bool = False) -> float:
    v = float(value)
    if not (0.0 <= v <= 1.0) or (open_low and v == 0.0):
        span = "(0, 1]" if open_low else "[0, 1]"
        raise MetricError(f"{name} must lie in {span}, got {value!r}")
    return v


def _check_effort(e: float) -> None:
    if not np.isfinite(e) or e < 0:
        raise MetricError(f"the effort e must be a non-negative number, got {e!r}")


def _relevant(truth: sp.csr_matrix, threshold: float) -> sp.csr_matrix:
    """CSR pattern of the truth ratings ≥ threshold (sorted indices, data 1)."""
    import scipy.sparse as sp

    mask = truth.data >= threshold
    indptr = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))[truth.indptr]
    return sp.csr_matrix((np.ones(int(mask.sum())), truth.indices[mask], indptr), shape=truth.shape)


def _finish(values: np.ndarray, defined: np.ndarray, empty: str) -> np.ndarray:
    out = np.where(defined, values, np.nan if empty == "skip" else 0.0)
    return out.astype(np.float64)


def _ix(a: np.ndarray) -> np.ndarray:
    """Index arrays as int64, so each kernel compiles once whatever scipy's index dtype."""
    return np.asarray(a, dtype=np.int64)


def _discount(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


# ------------------------------------------------------------- binary kernels
@njit(cache=True, nogil=True)
def _find(indices: np.ndarray, lo: int, hi: int, item: int) -> int:
    """Position of ``item`` in the sorted ``indices[lo:hi]``, or -1."""
    end = hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < item:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < end and indices[lo] == item else -1


@njit(cache=True, nogil=True)
def _contains(indices: np.ndarray, lo: int, hi: int, item: int) -> bool:
    return _find(indices, lo, hi, item) >= 0


@njit(cache=True, nogil=True)
def _canonical_gain(counts, a_indices, lo, hi, powers, buf):
    """Σ_a (1−α)^{counts[a]} over ``a_indices[lo:hi]``, summed in a canonical order.

    The exponents are sorted (largest first, so the smallest terms are added first)
    and ``powers[c]`` is one table of (1−α)^c: two candidates whose gains are equal
    in real arithmetic because they hold the same multiset of exponents get the same
    float, whatever the order of their aspects — ties are never decided by rounding.
    """
    n = hi - lo
    for q in range(n):
        e = counts[a_indices[lo + q]]
        j = q
        while j > 0 and buf[j - 1] < e:  # insertion sort, descending
            buf[j] = buf[j - 1]
            j -= 1
        buf[j] = e
    g = 0.0
    for q in range(n):
        g += powers[buf[q]]
    return g


@njit(cache=True, nogil=True)
def _ia_kernel(rankings, rel_indptr, rel_indices, a_indptr, a_indices, n_aspects, alpha, ideal_depth):
    """Per user: novelty-discounted gains of the run and of the greedy ideal, |S_u|,
    relevant (item, aspect) pairs per position and newly covered aspects per position."""
    n_users, k = rankings.shape
    run = np.zeros((n_users, k))
    pairs = np.zeros((n_users, k))
    ideal = np.zeros((n_users, ideal_depth))
    n_rel_aspects = np.zeros(n_users, dtype=np.int64)
    seen = np.zeros(n_aspects, dtype=np.int64)
    covered = np.zeros(n_aspects, dtype=np.int64)
    in_s = np.zeros(n_aspects, dtype=np.bool_)
    # (1-α)^c for every count an aspect can reach in the ideal (at most ideal_depth items)
    powers = np.ones(ideal_depth + 1)
    for c in range(1, ideal_depth + 1):
        powers[c] = powers[c - 1] * (1.0 - alpha)
    max_aspects = 0
    for i in range(len(a_indptr) - 1):
        max_aspects = max(max_aspects, a_indptr[i + 1] - a_indptr[i])
    buf = np.zeros(max(max_aspects, 1), dtype=np.int64)
    for u in range(n_users):
        lo, hi = rel_indptr[u], rel_indptr[u + 1]
        # aspects of the relevant items (S_u)
        ns = 0
        for t in range(lo, hi):
            it = rel_indices[t]
            for q in range(a_indptr[it], a_indptr[it + 1]):
                a = a_indices[q]
                if not in_s[a]:
                    in_s[a] = True
                    ns += 1
        n_rel_aspects[u] = ns
        if ns > 0:
            for j in range(k):
                it = rankings[u, j]
                if it < 0 or not _contains(rel_indices, lo, hi, it):
                    continue
                g = 0.0
                for q in range(a_indptr[it], a_indptr[it + 1]):
                    a = a_indices[q]
                    g += (1.0 - alpha) ** seen[a]
                    seen[a] += 1
                run[u, j] = g
                pairs[u, j] = a_indptr[it + 1] - a_indptr[it]
            # greedy ideal over the relevant items; exact ties -> lowest item index
            n_cand = hi - lo
            used = np.zeros(n_cand, dtype=np.bool_)
            steps = min(n_cand, ideal_depth)
            for step in range(steps):
                best = -1
                best_g = -1.0
                best_canonical = -1.0  # the canonical sum of the best, once a near tie needs it
                for c in range(n_cand):
                    if used[c]:
                        continue
                    it = rel_indices[lo + c]
                    g = 0.0
                    for q in range(a_indptr[it], a_indptr[it + 1]):
                        g += powers[covered[a_indices[q]]]
                    # rounding moves a sum of at most a few dozen terms ≤ 1 by far less than tol:
                    # beyond it the order is that of the real values; within it, compare the
                    # canonical sums, equal whenever the real values are equal
                    tol = 1e-9 * (1.0 + best_g)
                    if best < 0 or g > best_g + tol:
                        best, best_g, best_canonical = c, g, -1.0
                    elif g >= best_g - tol:
                        if best_canonical < 0.0:
                            top = rel_indices[lo + best]
                            best_canonical = _canonical_gain(
                                covered, a_indices, a_indptr[top], a_indptr[top + 1], powers, buf
                            )
                        canonical = _canonical_gain(covered, a_indices, a_indptr[it], a_indptr[it + 1], powers, buf)
                        if canonical > best_canonical:
                            best, best_g, best_canonical = c, g, canonical
                used[best] = True
                ideal[u, step] = best_g if best_canonical < 0.0 else best_canonical
                it = rel_indices[lo + best]
                for q in range(a_indptr[it], a_indptr[it + 1]):
                    covered[a_indices[q]] += 1
        # reset the per-user buffers
        for t in range(lo, hi):
            it = rel_indices[t]
            for q in range(a_indptr[it], a_indptr[it + 1]):
                a = a_indices[q]
                in_s[a] = False
                seen[a] = 0
                covered[a] = 0
    return run, ideal, n_rel_aspects, pairs


def _ia(rankings, truth, aspects, k, threshold, alpha, ideal_depth):
    r, truth, aspects, k = _prepare(rankings, truth, aspects, k)
    rel = _relevant(truth, threshold)
    longest = max(1, int(np.diff(rel.indptr).max(initial=0)))  # the longest ideal list: a user's relevant items
    # the whole ideal ranking (None), or k positions of it: beyond the longest list and ideal, nothing
    ideal_depth = longest if ideal_depth is None else min(ideal_depth, max(r.shape[1], longest))
    run, ideal, ns, pairs = _ia_kernel(
        r,
        _ix(rel.indptr),
        _ix(rel.indices),
        _ix(aspects.indptr),
        _ix(aspects.indices),
        aspects.shape[1],
        alpha,
        ideal_depth,
    )
    return r, k, rel, aspects, run, ideal, ns, pairs


def alpha_ndcg(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    alpha: float = 0.5,
    threshold: float = 1.0,
    empty: Empty = "skip",
) -> np.ndarray:
    """α-nDCG@k (Clarke et al. 2008) with a greedy ideal over the relevant truth items.

    ``train`` is accepted for a uniform signature and ignored.

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 1], [1, 0], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0, 1.0]]))
    >>> alpha_ndcg(np.array([[0, 1, 2]]), T, A, k=2).round(4).tolist()
    [1.0]
    """
    _check_empty(empty)
    alpha = _check_unit("alpha", alpha)
    _, k, _, _, run, ideal, ns, _ = _ia(rankings, truth, aspects, k, threshold, alpha, k)
    # row-wise: batch-independent
    dcg, idcg = (run * _discount(run.shape[1])).sum(axis=1), (ideal * _discount(ideal.shape[1])).sum(axis=1)
    defined = (ns > 0) & (idcg > 0)
    return _finish(np.divide(dcg, idcg, out=np.zeros_like(dcg), where=defined), defined, empty)


def _err(gains: np.ndarray, rho: float) -> np.ndarray:
    return rho * (gains / np.arange(1, gains.shape[1] + 1)).sum(axis=1)


def err_ia(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    alpha: float = 0.5,
    threshold: float = 1.0,
    empty: Empty = "skip",
) -> np.ndarray:
    """ERR-IA@k with uniform intent weights over S_u and satisfaction probability ``alpha``.

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0]]))
    >>> err_ia(np.array([[0, 1]]), T, A, k=2).tolist()  # (0.5/1 + 0.5/2) / 2
    [0.375]
    """
    _check_empty(empty)
    rho = _check_unit("alpha", alpha, open_low=True)
    _, _, _, _, run, _, ns, _ = _ia(rankings, truth, aspects, k, threshold, rho, 1)
    defined = ns > 0
    return _finish(_err(run, rho) / np.maximum(ns, 1), defined, empty)


def nerr_ia(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    alpha: float = 0.5,
    threshold: float = 1.0,
    empty: Empty = "skip",
) -> np.ndarray:
    """ERR-IA@k divided by the ERR-IA@k of the greedy ideal ranking (ndeval's nERR-IA).

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0]]))
    >>> nerr_ia(np.array([[1, 0]]), T, A, k=2).tolist()
    [1.0]
    """
    _check_empty(empty)
    rho = _check_unit("alpha", alpha, open_low=True)
    _, k, _, _, run, ideal, ns, _ = _ia(rankings, truth, aspects, k, threshold, rho, k)
    num, den = _err(run, rho), _err(ideal, rho)
    defined = (ns > 0) & (den > 0)
    return _finish(np.divide(num, den, out=np.zeros_like(num), where=defined), defined, empty)


def _rbp_sum(gains: np.ndarray, beta: float) -> np.ndarray:
    return (gains * beta ** np.arange(gains.shape[1])).sum(axis=1)


def nrbp(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = None,
    alpha: float = 0.5,
    beta: float = 0.5,
    threshold: float = 1.0,
    empty: Empty = "skip",
) -> np.ndarray:
    """Novelty- and rank-biased precision (Clarke et al. 2009) over the first k items (default: all).

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0]]))
    >>> nrbp(np.array([[0, 1]]), T, A).tolist()  # (1 - 0.5*0.5)/2 * (1 + 0.5)
    [0.5625]
    """
    _check_empty(empty)
    alpha = _check_unit("alpha", alpha)
    beta = _check_unit("beta", beta)
    _, _, _, _, run, _, ns, _ = _ia(rankings, truth, aspects, k, threshold, alpha, 1)
    value = (1 - (1 - alpha) * beta) / np.maximum(ns, 1) * _rbp_sum(run, beta)
    return _finish(value, ns > 0, empty)


def nnrbp(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = None,
    alpha: float = 0.5,
    beta: float = 0.5,
    threshold: float = 1.0,
    empty: Empty = "skip",
) -> np.ndarray:
    """NRBP divided by the NRBP of the full greedy ideal ranking of all relevant items.

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0]]))
    >>> nnrbp(np.array([[0, -1]]), T, A).tolist()  # 1 / 1.5
    [0.6666666666666666]
    """
    _check_empty(empty)
    alpha = _check_unit("alpha", alpha)
    beta = _check_unit("beta", beta)
    _, _, _, _, run, ideal, ns, _ = _ia(rankings, truth, aspects, k, threshold, alpha, None)
    num, den = _rbp_sum(run, beta), _rbp_sum(ideal, beta)
    defined = (ns > 0) & (den > 0)
    return _finish(np.divide(num, den, out=np.zeros_like(num), where=defined), defined, empty)


def p_ia(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    threshold: float = 1.0,
    empty: Empty = "skip",
) -> np.ndarray:
    """Intent-aware precision@k with uniform weights over the user's aspects S_u.

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 1], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 0.0]]))
    >>> p_ia(np.array([[0, 1]]), T, A, k=2).tolist()  # 2 pairs / (2 positions * 2 aspects)
    [0.5]
    """
    _check_empty(empty)
    _, k, _, _, _, _, ns, pairs = _ia(rankings, truth, aspects, k, threshold, 0.5, 1)
    return _finish(pairs.sum(axis=1) / (float(k) * np.maximum(ns, 1)), ns > 0, empty)


@njit(cache=True, nogil=True)
def _first_full(rankings, rel_indptr, rel_indices, a_indptr, a_indices, target, relevant_only):
    """Per user: covered aspects of ``target`` after each position (target: 1 = counts)."""
    n_users, k = rankings.shape
    n_aspects = target.shape[1]
    covered = np.zeros((n_users, k))
    mark = np.zeros(n_aspects, dtype=np.bool_)
    for u in range(n_users):
        lo, hi = rel_indptr[u], rel_indptr[u + 1]
        count = 0
        for j in range(k):
            it = rankings[u, j]
            if it >= 0 and (not relevant_only or _contains(rel_indices, lo, hi, it)):
                for q in range(a_indptr[it], a_indptr[it + 1]):
                    a = a_indices[q]
                    if target[u, a] and not mark[a]:
                        mark[a] = True
                        count += 1
            covered[u, j] = count
        mark[:] = False
    return covered


def _coverage(rankings, truth, aspects, k, threshold, denominator, relevant_only):
    if denominator not in ("relevant", "all"):
        raise MetricError(f"denominator must be 'relevant' (the user's aspects) or 'all', got {denominator!r}")
    r, truth, aspects, k = _prepare(rankings, truth, aspects, k)
    rel = _relevant(truth, threshold)
    user_aspects = (rel @ aspects).toarray() > 0
    target = user_aspects if denominator == "relevant" else np.ones_like(user_aspects)
    covered = _first_full(
        r, _ix(rel.indptr), _ix(rel.indices), _ix(aspects.indptr), _ix(aspects.indices), target, bool(relevant_only)
    )
    size = target.sum(axis=1).astype(np.float64)
    return covered, size, user_aspects.any(axis=1)


def s_recall(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    threshold: float = 1.0,
    denominator: Literal["relevant", "all"] = "relevant",
    relevant_only: bool = True,
    empty: Empty = "skip",
) -> np.ndarray:
    """Subtopic recall@k: the share of the aspects in D covered by the top k.

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0, 0.0]]))
    >>> s_recall(np.array([[0, 2]]), T, A, k=2).tolist()
    [0.5]
    >>> s_recall(np.array([[0, 2]]), T, A, k=2, denominator="all", relevant_only=False).round(4).tolist()
    [0.6667]
    """
    _check_empty(empty)
    covered, size, has = _coverage(rankings, truth, aspects, k, threshold, denominator, relevant_only)
    defined = has & (size > 0)
    return _finish(covered[:, -1] / np.maximum(size, 1), defined, empty)


def s_rr(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    threshold: float = 1.0,
    denominator: Literal["relevant", "all"] = "relevant",
    relevant_only: bool = True,
    empty: Empty = "skip",
) -> np.ndarray:
    """Subtopic reciprocal rank: 1 / the first rank where S-recall reaches 1 (0 if not by k).

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0, 1.0]]))
    >>> s_rr(np.array([[0, 2, 1]]), T, A, k=3).round(4).tolist()
    [0.3333]
    """
    _check_empty(empty)
    covered, size, has = _coverage(rankings, truth, aspects, k, threshold, denominator, relevant_only)
    full = covered >= size[:, None]
    first = np.where(full.any(axis=1), full.argmax(axis=1) + 1, 0)
    value = np.divide(1.0, first, out=np.zeros(len(first)), where=first > 0)
    return _finish(value, has & (size > 0), empty)


def rbu(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    p: float = 0.8,
    e: float = 0.03,
    alpha: float = 0.5,
    threshold: float = 1.0,
    convention: Literal["evall", "paper"] = "evall",
    empty: Empty = "skip",
) -> np.ndarray:
    """Rank-biased utility (Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018) with r(i, a) = ``alpha`` · J(i, a).

    RBU@k = (1 − p) Σ_{j ≤ n} p^{j−1} (Σ_{a∈S_u} (1/|S_u|) r(i_j, a) Π_{l<j} (1 − r(i_l, a)) − e)
    over the n = min(k, list length) recommended items: the authors' reference
    implementation (``RBU.java`` of github.com/jCarrilloDeAlbornoz/RBU, the code behind
    EvALL's RBU), ``convention="evall"`` (default). Its (1 − p) turns the geometric
    weights into the probability that the user stops at rank j, and the effort e is
    charged only for the items the list holds (padding of a list shorter than k is
    never read). With binary relevance its r = (2^1 − 1) / 2^1 = 0.5 = ``alpha``.
    ``convention="paper"`` omits the (1 − p) factor, as the metric is written in the paper.

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0]]))
    >>> rbu(np.array([[0, 1]]), T, A, k=2).round(6).tolist()  # 0.2 ((0.25 - 0.03) + 0.8 (0.25 - 0.03))
    [0.0792]
    >>> rbu(np.array([[0, -1]]), T, A, k=2, convention="paper").round(6).tolist()  # padding costs nothing
    [0.22]
    """
    _check_empty(empty)
    p = _check_unit("p", p)
    rho = _check_unit("alpha", alpha, open_low=True)
    _check_effort(e)
    if convention not in ("evall", "paper"):
        raise MetricError(f"rbu convention must be 'evall' (the authors' code) or 'paper', got {convention!r}")
    r, k, _, _, run, _, ns, _ = _ia(rankings, truth, aspects, k, threshold, rho, 1)
    # r Π(1 - r) per aspect = ρ (1-ρ)^c: the novelty gain times ρ; the effort only where an item is shown
    gains = rho * run / np.maximum(ns, 1)[:, None] - e * (r >= 0)
    value = _rbp_sum(gains, p)
    return _finish(value * (1.0 - p) if convention == "evall" else value, ns > 0, empty)


def eu(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    p: float = 0.8,
    e: float = 0.03,
    alpha: float = 0.5,
    threshold: float = 1.0,
    empty: Empty = "skip",
) -> np.ndarray:
    """Expected utility: Σ_j p^{j-1} (mean over S_u of J (1-α)^c − e) (see the module notes).

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect is
        NaN (``empty="skip"``, left out of the mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [1, 0]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[1.0, 1.0]]))
    >>> eu(np.array([[0, 1]]), T, A, k=2).round(6).tolist()  # (1 - 0.03) + 0.8 (0.5 - 0.03)
    [1.346]
    """
    _check_empty(empty)
    p = _check_unit("p", p)
    alpha = _check_unit("alpha", alpha)
    _check_effort(e)
    _, k, _, _, run, _, ns, _ = _ia(rankings, truth, aspects, k, threshold, alpha, 1)
    gains = run / np.maximum(ns, 1)[:, None] - e
    # the positions after the longest list gain nothing and cost e each: e Σ_{j=n}^{k-1} p^j
    n = run.shape[1]
    rest = 0.0 if k <= n else float(k - n) if p == 1.0 else p**n * (1.0 - p ** (k - n)) / (1.0 - p)
    return _finish(_rbp_sum(gains, p) - e * rest, ns > 0, empty)


# ------------------------------------------------------------------- αβ-nDCG
def aspect_preferences(ratings: sp.csr_matrix, aspects: sp.csr_matrix) -> np.ndarray:
    """γ_φ^u = Σ_{i rated by u, φ∈i} r_ui / Σ_ϕ Σ_{i rated by u, ϕ∈i} r_ui, dense (n_users, n_aspects).

    Rows of users with no rated item having an aspect (or only zero ratings) are all 0.

    Returns
    -------
    numpy.ndarray of float64
        ``(n_users, n_aspects)``; each row sums to 1, or is all 0 for a user without
        rated items that have an aspect.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 1], [1, 0]], dtype=float))
    >>> aspect_preferences(sp.csr_matrix(np.array([[4.0, 2.0]])), A).tolist()
    [[0.6, 0.4]]
    """
    g = np.asarray((_csr(ratings, "ratings") @ _csr(aspects, "aspects")).todense(), dtype=np.float64)
    tot = g.sum(axis=1, keepdims=True)
    return np.divide(g, tot, out=np.zeros_like(g), where=tot > 0)


@njit(inline="always")
def _novel_gain(rem, aspects, lo, hi, p):
    """1 − Π (1 − p · rem[a]) over ``aspects[lo:hi]``: the αβ gain of an item (or group) of those aspects."""
    miss = 1.0
    for q in range(lo, hi):
        miss *= 1.0 - p * rem[aspects[q]]
    return 1.0 - miss


@njit(inline="always")
def _consume(rem, aspects, lo, hi, p):
    """rem[a] *= 1 − p over ``aspects[lo:hi]``: what is left of those aspects once an item with them is shown."""
    for q in range(lo, hi):
        rem[aspects[q]] *= 1.0 - p


@njit(cache=True, nogil=True)
def _ab_kernel(
    rankings,
    t_indptr,
    t_indices,
    t_data,
    x_indptr,
    x_indices,
    a_indptr,
    a_indices,
    gamma,
    alpha,
    beta,
    rmax,
    item_sig,
    sig_indptr,
    sig_aspects,
    sig_count,
    use_unrated,
    depth,
):
    """Per user: αβ gains of the run (its positions) and of the greedy ideal (``depth`` positions)."""
    n_users, k = rankings.shape
    n_aspects = gamma.shape[1]
    n_sig = sig_count.shape[0]
    max_len = 0
    for s in range(n_sig):
        max_len = max(max_len, sig_indptr[s + 1] - sig_indptr[s])
    run = np.zeros((n_users, k))
    ideal = np.zeros((n_users, depth))
    rem = np.empty(n_aspects)
    avail = np.empty(n_sig, dtype=np.int64)
    for u in range(n_users):
        lo, hi = t_indptr[u], t_indptr[u + 1]
        for a in range(n_aspects):
            rem[a] = gamma[u, a]
        for j in range(k):
            it = rankings[u, j]
            if it < 0:
                continue
            pos = _find(t_indices, lo, hi, it)
            p = beta * t_data[pos] / rmax if pos >= 0 else alpha
            miss = 1.0
            for q in range(a_indptr[it], a_indptr[it + 1]):
                a = a_indices[q]
                miss *= 1.0 - p * rem[a]
                rem[a] *= 1.0 - p
            run[u, j] = 1.0 - miss
        # the ideal: truth items, then groups of unrated items sharing an aspect set
        for a in range(n_aspects):
            rem[a] = gamma[u, a]
        n_cand = hi - lo
        used = np.zeros(n_cand, dtype=np.bool_)
        if use_unrated:
            for s in range(n_sig):
                avail[s] = sig_count[s]
            for t in range(lo, hi):
                s = item_sig[t_indices[t]]
                if s >= 0:
                    avail[s] -= 1
            xlo, xhi = x_indptr[u], x_indptr[u + 1]
            for t in range(xlo, xhi):
                it = x_indices[t]
                s = item_sig[it]
                if s >= 0 and not _contains(t_indices, lo, hi, it):
                    avail[s] -= 1
        for j in range(depth):
            best = -1
            best_g = 0.0
            best_p = 0.0
            for c in range(n_cand):
                if used[c]:
                    continue
                it = t_indices[lo + c]
                p = beta * t_data[lo + c] / rmax
                g = _novel_gain(rem, a_indices, a_indptr[it], a_indptr[it + 1], p)
                if g > best_g:
                    best_g = g
                    best = c
                    best_p = p
            # an unrated group gains at most alpha * (its size) * max(rem): skip the scan when
            # no group can beat the best truth item (ties go to truth items anyway)
            top = 0.0
            for a in range(n_aspects):
                top = max(top, rem[a])
            if use_unrated and alpha * max_len * top > best_g:
                for s in range(n_sig):
                    if avail[s] <= 0:
                        continue
                    g = _novel_gain(rem, sig_aspects, sig_indptr[s], sig_indptr[s + 1], alpha)
                    if g > best_g:
                        best_g = g
                        best = n_cand + s
                        best_p = alpha
            if best < 0:
                break
            ideal[u, j] = best_g
            if best < n_cand:
                used[best] = True
                it = t_indices[lo + best]
                _consume(rem, a_indices, a_indptr[it], a_indptr[it + 1], best_p)
            else:
                s = best - n_cand
                avail[s] -= 1
                _consume(rem, sig_aspects, sig_indptr[s], sig_indptr[s + 1], best_p)
    return run, ideal


def _signatures(aspects: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct non-empty aspect sets: item → group (-1 without aspects), group aspects, group sizes."""
    n_items = aspects.shape[0]
    lengths = np.diff(aspects.indptr)
    keys = [aspects.indices[aspects.indptr[i] : aspects.indptr[i + 1]].tobytes() for i in range(n_items)]
    item_sig = np.full(n_items, -1, dtype=np.int64)
    groups: dict[bytes, int] = {}
    members: list[np.ndarray] = []
    for i in np.flatnonzero(lengths > 0):
        g = groups.setdefault(keys[i], len(groups))
        if g == len(members):
            members.append(aspects.indices[aspects.indptr[i] : aspects.indptr[i + 1]])
        item_sig[i] = g
    counts = np.bincount(item_sig[item_sig >= 0], minlength=len(groups)).astype(np.int64)
    sig_indptr = np.concatenate(([0], np.cumsum([len(m) for m in members], dtype=np.int64)))
    sig_aspects = np.concatenate(members).astype(np.int64) if members else np.zeros(0, dtype=np.int64)
    return item_sig, sig_indptr, sig_aspects, counts


def ab_ndcg(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    aspects: sp.csr_matrix,
    train: sp.csr_matrix | None = None,
    *,
    k: int | None = 10,
    alpha: float = 0.005,
    beta: float = 0.5,
    rmax: float | None = None,
    gamma: Literal["train", "truth"] = "train",
    ideal: Literal["truth+unrated", "truth"] = "truth+unrated",
    empty: Empty = "skip",
) -> np.ndarray:
    """αβ-nDCG@k (Parapar & Radlinski, RecSys 2021).

    P(a|u,i) = 0 if a ∉ i, ``alpha`` if u has no truth rating for i, ``beta``·r_ui/``rmax``
    if u rated i in the truth. P(a|u) = γ_a^u estimated from the user's ratings
    (:func:`aspect_preferences`): ``gamma="train"`` (default) uses ``train``, ``"truth"``
    the truth. The default follows the paper — the preference is the MLE
    over the items the user has *already* interacted with — and keeps the weights
    independent of the held-out sample, which for users with few test ratings would
    otherwise put all the weight on one or two genres. Gain at rank j:
    1 − Π_a (1 − P(a|u,i_j)·γ_a^u·Π_{l<j}(1 − P(a|u,i_l))), discounted by log2(1 + j).

    The ideal list is built greedily over ``ideal="truth+unrated"`` (default): the
    user's truth items plus the unrated items (not in the user's truth nor, when given,
    train), taken as groups of items sharing the same aspect set, so that no list can
    score above the ideal just by recommending unrated items (values stay in [0, 1] up
    to the greedy approximation); ``"truth"`` uses the truth items only (α-nDCG's
    choice; values can then exceed 1 when α > 0). Ties go to the earlier candidate:
    truth items by item index, then unrated groups by the index of their first item.

    ``rmax`` defaults to the largest rating in truth and train (pass the scale's maximum
    for the paper's definition); it must not be below the largest rating. Users whose
    γ is undefined (no rated item with an aspect) or whose ideal gains nothing get
    NaN (``empty="skip"``) or 0.

    Returns
    -------
    numpy.ndarray of float64
        One value per row of ``rankings`` (a user); a user with no relevant aspect, or
        whose preference γ cannot be estimated, is NaN (``empty="skip"``, left out of the
        mean) or 0 (``"zero"``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=float))
    >>> T = sp.csr_matrix(np.array([[5.0, 5.0]]))
    >>> ab_ndcg(np.array([[0, 1]]), T, A, k=2, gamma="truth", beta=1.0, rmax=5).tolist()
    [1.0]
    """
    _check_empty(empty)
    alpha = _check_unit("alpha", alpha)
    beta = _check_unit("beta", beta)
    if gamma not in ("train", "truth"):
        raise MetricError(f"gamma must be 'train' or 'truth', got {gamma!r}")
    if ideal not in ("truth+unrated", "truth"):
        raise MetricError(f"ideal must be 'truth+unrated' or 'truth', got {ideal!r}")
    r, truth, aspects, k = _prepare(rankings, truth, aspects, k)
    if train is not None:
        train = _csr(train, "train")
        if train.shape != truth.shape:
            raise MetricError(f"train has shape {train.shape} but the truth has {truth.shape}")
    if gamma == "train" and train is None:
        raise MetricError(
            "ab_ndcg with gamma='train' estimates the users' aspect preferences from the training "
            "ratings: pass train=, or use gamma='truth'",
            parameters=["train"],
        )
    largest = max(
        float(truth.data.max()) if truth.nnz else 0.0,
        float(train.data.max()) if train is not None and train.nnz else 0.0,
    )
    for m, label in ((truth, "truth"), (train, "train")):
        if m is not None and m.nnz and m.data.min() < 0:
            raise MetricError(f"ab_ndcg needs non-negative ratings; the {label} holds {m.data.min():g}")
    if rmax is None:
        rmax = largest
    rmax = float(rmax)
    if not np.isfinite(rmax) or rmax <= 0 or rmax < largest:
        raise MetricError(
            f"rmax={rmax:g} is below the largest rating {largest:g} (or not positive): pass the top of the rating scale"
        )
    gam = aspect_preferences(train if gamma == "train" else truth, aspects)
    item_sig, sig_indptr, sig_aspects, counts = _signatures(aspects)
    import scipy.sparse as sp  # loaded by _prepare already

    excl = train if train is not None else sp.csr_matrix(truth.shape)
    # an ideal list holds at most the candidates: the user's truth items, and the unrated items (the catalogue)
    longest = truth.shape[1] if ideal == "truth+unrated" else int(np.diff(truth.indptr).max(initial=0))
    depth = min(k, max(r.shape[1], longest))
    run, best = _ab_kernel(
        r,
        _ix(truth.indptr),
        _ix(truth.indices),
        truth.data.astype(np.float64),
        _ix(excl.indptr),
        _ix(excl.indices),
        _ix(aspects.indptr),
        _ix(aspects.indices),
        gam,
        alpha,
        beta,
        rmax,
        item_sig,
        sig_indptr,
        sig_aspects,
        counts,
        ideal == "truth+unrated",
        depth,
    )
    # row-wise: batch-independent
    dcg, idcg = (run * _discount(run.shape[1])).sum(axis=1), (best * _discount(best.shape[1])).sum(axis=1)
    defined = (gam.sum(axis=1) > 0) & (idcg > 0)
    return _finish(np.divide(dcg, idcg, out=np.zeros_like(dcg), where=defined), defined, empty)


# ------------------------------------------------------------------ registry
def _kernel(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """The metric kernel ``(data, k, threshold=None, **params)`` of a binary-relevance function above.

    The threshold and the empty-user policy are the evaluation's unless the metric
    string sets ``threshold``.
    """

    def kernel(data: MetricInput, k: int | None, threshold: float | None = None, **params: Any) -> np.ndarray:
        thr = data.threshold if threshold is None else float(threshold)
        arrays = (data.rankings, data.truth, data.aspects, data.train)
        return fn(*arrays, k=k, threshold=thr, empty=data.empty_users, **params)

    kernel.__name__ = kernel.__qualname__ = f"{fn.__name__}_kernel"
    kernel.__doc__ = fn.__doc__
    return kernel


@register_metric(
    "ab_ndcg",
    direction="higher",
    needs_aspects=True,
    defaults={"alpha": 0.005, "beta": 0.5, "rmax": None, "gamma": "train", "ideal": "truth+unrated"},
    description=(ab_ndcg.__doc__ or "").strip().split("\n")[0],
)
def ab_ndcg_kernel(
    data: MetricInput,
    k: int | None,
    alpha: float = 0.005,
    beta: float = 0.5,
    rmax: float | None = None,
    gamma: Literal["train", "truth"] = "train",
    ideal: Literal["truth+unrated", "truth"] = "truth+unrated",
) -> np.ndarray:
    """αβ-nDCG on a :class:`MetricInput`: ``rmax`` defaults to the top of the evaluation's rating scale."""
    return ab_ndcg(
        data.rankings,
        data.truth,
        data.aspects,
        data.train,
        k=k,
        alpha=alpha,
        beta=beta,
        rmax=data.rating_max if rmax is None else rmax,
        gamma=gamma,
        ideal=ideal,
        empty=data.empty_users,
    )


_UNIT = (0.0, 1.0)
_ASPECT_METRICS: tuple[
    tuple[str, Callable[..., np.ndarray], Literal["required", "optional"], tuple[float, float] | None, dict[str, Any]],
    ...,
] = (
    ("alpha_ndcg", alpha_ndcg, "required", None, {"alpha": 0.5}),
    ("err_ia", err_ia, "required", _UNIT, {"alpha": 0.5}),
    ("nerr_ia", nerr_ia, "required", None, {"alpha": 0.5}),
    ("nrbp", nrbp, "optional", None, {"alpha": 0.5, "beta": 0.5}),
    ("nnrbp", nnrbp, "optional", None, {"alpha": 0.5, "beta": 0.5}),
    ("p_ia", p_ia, "required", _UNIT, {}),
    ("s_recall", s_recall, "required", _UNIT, {"denominator": "relevant", "relevant_only": True}),
    ("s_rr", s_rr, "required", _UNIT, {"denominator": "relevant", "relevant_only": True}),
    ("rbu", rbu, "required", None, {"p": 0.8, "e": 0.03, "alpha": 0.5, "convention": "evall"}),
    ("eu", eu, "required", None, {"p": 0.8, "e": 0.03, "alpha": 0.5}),
)
for _name, _fn, _k, _bounds, _defaults in _ASPECT_METRICS:
    register_metric(
        _name,
        direction="higher",
        bounds=_bounds,
        k=_k,
        needs_aspects=True,
        defaults={"threshold": None, **_defaults},
        description=(_fn.__doc__ or "").strip().split("\n")[0],
    )(_kernel(_fn))
