"""Top-N lists from any scorer: batched, training items excluded, seeded tie-breaking.

:func:`recommend` turns a fitted model's ``score(users)`` into ranked lists, the
shape the metrics take (an ``int64`` array of item indices padded with ``-1``).
Memory stays bounded: users are scored in batches of at most ``batch_size`` rows.

Ties are broken by a seeded, per-user order of the items: item ``i`` gets the key
``(perm[i] + offset[u]) mod n_items``, where ``perm`` is a random permutation of the
items drawn from ``seed`` and ``offset[u]`` a hash of ``(seed, u)``. Among equal
scores the smaller key comes first, so lists are identical for a given seed whatever
the batch size or the order of ``users``, and differ between users and seeds.

An item whose score is ``NaN`` or ``-inf``, or that the ``exclude`` matrix marks for
the user, is never recommended; when fewer than ``k`` items remain the row is padded
with ``-1`` (score ``NaN``).

Models whose scores are a product of sparse matrices (kNN) may expose
``score_operands()``, CSR matrices ``(A, B)`` with ``score(users) = A[users] @ B``:
:func:`recommend` then adds up each user's row in a buffer and selects from the items
its terms reach and, in tie order, the zeros, with the same lists as the dense rows
would give, in time proportional to the terms and without score batches.

Small problems (users x items at most :data:`receval._jit.NUMPY_CELLS`, 4M, in a process that has
not imported numba) are ranked with numpy instead of the compiled kernels, and never import numba
(whose import and cached kernels cost about 0.5 s per process): the product rows are made by
:mod:`scipy.sparse` (its ``csr_matmat`` adds each row's terms in the order of its A entries, as the
kernel), and the lists are selected by a partition then a sort by (score, tie key), a total order:
the same items and scores, bit for bit.

Models whose scores are one row for every user (popularity, the smoothed average) expose
``global_scores()``, that row: :func:`recommend` sorts the items once by (score, ``perm``) and
reads each user's list off that order, each run of equal scores rotated to the user's tie keys,
skipping the user's excluded items — the same lists and scores as scoring every user's row, in
time that grows with ``k`` and the items skipped, not with the catalogue.

Models that can do better than scoring every item (e.g. with an index over item
vectors) expose ``recommend_topk(users, k, exclude)`` with ``exclude`` a
CSR matrix or ``None``; :func:`recommend` uses it and their own tie order (the method
may return ``NotImplemented`` to fall back to scoring).
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_left
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from receval._jit import njit, numpy_pays, one_at_a_time, prange
from receval.data.interactions import Interactions
from receval.errors import ColdStartError, ConfigError, DataError, NotFittedError
from receval.progress import Progress, progress_to
from receval.validate import check_memory
from receval.vocabulary import ColdStart, cold_start_policy

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["recommend", "exclusion_matrix"]

# Scores of one batch take at most this many float64 cells (64 MB).
_log = logging.getLogger(__name__)

LARGE_RANKING = 10**10
"""Scores (users x items) from which :func:`recommend` logs its work before it starts and, once its first
batches have run :data:`PACE_SECONDS`, the time left at their pace (a warning of the ``receval`` logger, which
the command line prints): 50,000 users x 5,000,000 items, 2.5e11 scores, took about 0.1 s a user on 2 cores,
well over an hour."""

PACE_SECONDS = 2.0
"""Seconds of ranking after which a large ranking's time left is estimated from the pace so far."""

_BATCH_CELLS = 8_000_000
# None: recommend ranks with numpy when receval._jit.numpy_pays(users x items); True / False force the numpy
# or the compiled path (tests)
_NUMPY: bool | None = None
# Score cells the numpy selection handles at once: its half-dozen temporaries of a chunk take about 50 MB.
_NUMPY_CHUNK = 1 << 20


def exclusion_matrix(exclude: Interactions | sp.spmatrix | sp.sparray | None, n_users: int, n_items: int):
    """The users x items CSR of (user, item) pairs never to recommend, or ``None``.

    Returns
    -------
    scipy.sparse.csr_matrix of bool, or None
        ``n_users`` x ``n_items``, sorted and without duplicates; None when ``exclude`` is
        None. A matrix of another shape is a DataError (build it over the training ids).

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 1], [1, 0], [5, 3])
    >>> exclusion_matrix(train, 2, 2).toarray()
    array([[False,  True],
           [ True, False]])
    """
    if exclude is None:
        return None
    import scipy.sparse as sp

    if isinstance(exclude, Interactions):
        m = sp.csr_matrix(
            (np.ones(exclude.n_ratings, dtype=bool), (exclude.users, exclude.items)),
            shape=(exclude.n_users, exclude.n_items),
        )
    elif sp.issparse(exclude):
        m = sp.csr_matrix(exclude, dtype=bool)
    else:
        raise ConfigError(
            f"exclude must be None, Interactions or a sparse users x items matrix, got {type(exclude).__name__}"
        )
    if m.shape != (n_users, n_items):
        raise DataError(
            f"exclude covers {m.shape[0]} users x {m.shape[1]} items but the model was trained on "
            f"{n_users} x {n_items}: build it over the training id space (split, don't re-index)"
        )
    m.sum_duplicates()
    m.sort_indices()
    return m


def _mix64(values: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a fixed, well-mixed hash of uint64 values."""
    z = values.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _tie_keys(users: np.ndarray, n_items: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    perm = np.empty(n_items, dtype=np.int64)
    perm[np.random.default_rng(seed).permutation(n_items)] = np.arange(n_items)
    with np.errstate(over="ignore"):
        mixed = _mix64(users.astype(np.uint64) + _mix64(np.array([seed], dtype=np.uint64))[0])
    offsets = (mixed % np.uint64(n_items)).astype(np.int64)
    return perm, offsets


def _n_items(model: Any) -> int | None:
    n = getattr(model, "n_items_", None)
    return None if n is None else int(n)


@njit(inline="always")
def _worse(s_a, key_a, s_b, key_b):  # pragma: no cover
    return s_a < s_b or (s_a == s_b and key_a > key_b)


@njit(inline="always")
def _replace_root(hs, hk, hi, size, v, key, item):  # pragma: no cover
    """Put (v, key, item) at the root of the heap ``[:size]`` and sift it down."""
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and _worse(hs[child + 1], hk[child + 1], hs[child], hk[child]):
            child += 1
        if _worse(hs[child], hk[child], v, key):
            hs[pos], hk[pos], hi[pos] = hs[child], hk[child], hi[child]
            pos = child
        else:
            break
    hs[pos], hk[pos], hi[pos] = v, key, item


@njit(inline="always")
def _offer(hs, hk, hi, size, k, v, key, item):  # pragma: no cover
    """Offer (v, key, item) to the heap ``[:size]`` of at most ``k`` kept items; its new size."""
    if size < k:
        pos = size
        while pos > 0:  # sift up
            parent = (pos - 1) // 2
            if _worse(v, key, hs[parent], hk[parent]):
                hs[pos], hk[pos], hi[pos] = hs[parent], hk[parent], hi[parent]
                pos = parent
            else:
                break
        hs[pos], hk[pos], hi[pos] = v, key, item
        return size + 1
    if _worse(hs[0], hk[0], v, key):
        _replace_root(hs, hk, hi, size, v, key, item)
    return size


@njit(inline="always")
def _pop_all(hs, hk, hi, size, k, out_items, out_scores, r):  # pragma: no cover
    """Write the heap's items best first into row ``r`` (popping the worst repeatedly fills it from the
    back), padded with -1 / NaN to ``k``."""
    for last in range(size - 1, -1, -1):
        out_scores[r, last] = hs[0]
        out_items[r, last] = hi[0]
        _replace_root(hs, hk, hi, last, hs[last], hk[last], hi[last])
    for j in range(size, k):
        out_items[r, j] = -1
        out_scores[r, j] = np.nan


@one_at_a_time
@njit(cache=True, parallel=True)
def _topk_kernel(scores, k, perm, offsets, ex_ptr, ex_idx, out_items, out_scores):  # pragma: no cover
    """Per row, a size-k heap whose root is the worst kept item; then sorted best first.

    Row ``r`` never takes the items ``ex_idx[ex_ptr[r]:ex_ptr[r + 1]]`` (sorted, distinct), so the scores are
    read, never written. Rows are independent (one per thread at a time): the result does not depend on the
    number of threads. A score below the kept root is rejected before its tie key (a modulo) is computed:
    once the heap is full, that is almost every item."""
    n = scores.shape[1]
    for r in prange(scores.shape[0]):
        hs = np.empty(k)
        hk = np.empty(k, dtype=np.int64)
        hi = np.empty(k, dtype=np.int64)
        size = 0
        off = offsets[r]
        e = ex_ptr[r]
        e_end = ex_ptr[r + 1]
        for i in range(n):
            if e < e_end and ex_idx[e] == i:  # excluded for this user
                e += 1
                continue
            v = scores[r, i]
            if not v > -np.inf:  # -inf or NaN: not recommendable
                continue
            if size == k and v < hs[0]:
                continue
            size = _offer(hs, hk, hi, size, k, v, (perm[i] + off) % n, i)
        _pop_all(hs, hk, hi, size, k, out_items, out_scores, r)


@one_at_a_time
@njit(cache=True, parallel=True)
def _topk_product_kernel(
    rows, a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n, k, perm, order, offsets, ex_ptr, ex_idx, out_items,
    out_scores, n_chunks,
):  # pragma: no cover  # fmt: skip
    """:func:`_topk_kernel` on the rows of ``A[rows] @ B`` (CSR A and B), never made whole, in ``n_chunks``
    chunks of rows (:func:`_product_chunk`); user ``rows[r]`` never takes ``ex_idx[ex_ptr[u]:ex_ptr[u + 1]]``."""
    n_chunks = min(len(rows), n_chunks)
    for c in prange(n_chunks):
        # the loop's body is a kernel of its own: numba compiles a parallel loop's body twice (within the
        # kernel, then as its threads' function), which made the first compile of this kernel about twice as
        # long. The index is cast to the unsigned type numba gives a parallel loop's index, so that both see
        # one signature and the body's code is the loop's own
        _product_chunk(
            np.uint64(c), n_chunks, rows, a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n, k, perm, order, offsets,
            ex_ptr, ex_idx, out_items, out_scores,
        )  # fmt: skip


@njit(cache=True)
def _product_chunk(
    c, n_chunks, rows, a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n, k, perm, order, offsets, ex_ptr, ex_idx,
    out_items, out_scores,
):  # pragma: no cover  # fmt: skip
    """Rows ``c, c + n_chunks, ...`` of :func:`_topk_product_kernel`: each row is added up in a buffer (its
    terms in the order of its A entries), the entries it reaches go through the heap, then the other
    unexcluded items, which score 0, in tie-key order (item ``order[(t - offset) mod n]`` has key ``t``)
    until a 0 can no longer enter. Time follows the row's terms, not the catalogue."""
    buffer = np.zeros(n)
    reached = np.empty(n + 1, dtype=np.int64)  # + 1: the branch-free record writes one ahead
    blocked = np.zeros(n, dtype=np.bool_)  # reached (or excluded) by the current row
    hs = np.empty(k)
    hk = np.empty(k, dtype=np.int64)
    hi = np.empty(k, dtype=np.int64)
    for r in range(c, len(rows), n_chunks):
        u = rows[r]
        off = offsets[r]
        m = 0
        for p in range(a_ptr[u], a_ptr[u + 1]):
            j = a_idx[p]
            w = a_val[p]
            for q in range(b_ptr[j], b_ptr[j + 1]):
                i = b_idx[q]
                reached[m] = i  # recorded without a branch (kept when first reached): it mispredicts
                m += not blocked[i]
                blocked[i] = True
                buffer[i] += w * b_val[q]
        for e in range(ex_ptr[u], ex_ptr[u + 1]):  # after the sums: an excluded item is never offered
            i = ex_idx[e]
            if not blocked[i]:
                blocked[i] = True
                reached[m] = i
                m += 1
            buffer[i] = -np.inf
        size = 0
        for t in range(m):
            i = reached[t]
            v = buffer[i]
            if not v > -np.inf or (size == k and v < hs[0]):
                continue
            size = _offer(hs, hk, hi, size, k, v, (perm[i] + off) % n, i)
        for key in range(n):  # the items no term reached score 0: the best (smallest) keys first
            if size == k and not _worse(hs[0], hk[0], 0.0, key):
                break
            i = order[(key - off) % n]
            if not blocked[i]:
                size = _offer(hs, hk, hi, size, k, 0.0, key, i)
        for t in range(m):
            i = reached[t]
            buffer[i] = 0.0
            blocked[i] = False
        _pop_all(hs, hk, hi, size, k, out_items, out_scores, r)


def _topk_batch(
    scores: np.ndarray,
    k: int,
    perm: np.ndarray,
    offsets: np.ndarray,
    exclude: sp.csr_matrix | None = None,
    compiled: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of each row of ``scores`` (-inf or NaN = not recommendable), ties by key; ``exclude`` (a sorted
    CSR with a row per score row, or None) marks the items a row never takes. ``scores`` is not modified.
    ``compiled``: by :func:`_topk_kernel`, else by :func:`_topk_numpy` (the same lists)."""
    ex_ptr, ex_idx = _exclusion_lists(exclude, scores.shape[0])
    if not compiled:
        return _topk_numpy(scores, k, perm.astype(np.int64, copy=False), offsets, ex_ptr, ex_idx)
    items = np.empty((scores.shape[0], k), dtype=np.int64)
    values = np.empty((scores.shape[0], k))
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    _topk_kernel(scores, k, perm.astype(np.int64, copy=False), offsets, ex_ptr, ex_idx, items, values)
    return items, values


def _exclusion_lists(exclude: sp.csr_matrix | None, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, indices) of the excluded items of each row; empty rows for None. The indices keep their type
    (no int64 copy of a training set's pairs)."""
    if exclude is None:
        return np.zeros(n_rows + 1, dtype=np.int64), np.zeros(0, dtype=np.int32)
    return exclude.indptr.astype(np.int64, copy=False), exclude.indices


def _product_lists(operands: tuple, exclude: sp.csr_matrix | None) -> tuple:
    """:func:`_topk_product_kernel`'s arrays of ``operands`` = (A, B) and the whole exclusion matrix, from
    ``a_ptr`` to ``ex_idx`` (made once for every batch; copies only of the pointers and of values that are
    not float64)."""
    a, b = operands
    ex_ptr, ex_idx = _exclusion_lists(exclude, a.shape[0])
    return (a.indptr.astype(np.int64, copy=False), a.indices, a.data.astype(np.float64, copy=False),
            b.indptr.astype(np.int64, copy=False), b.indices, b.data.astype(np.float64, copy=False), b.shape[1],
            ex_ptr, ex_idx)  # fmt: skip


def _topk_product_batch(lists: tuple, users, k: int, perm, order, offsets, out_items, out_scores) -> None:
    """:func:`_topk_product_kernel` for ``users`` with ``lists`` of :func:`_product_lists`."""
    a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n_items, ex_ptr, ex_idx = lists
    _topk_product_kernel(users, a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n_items, k, perm, order, offsets, ex_ptr,
                         ex_idx, out_items, out_scores, _chunks())  # fmt: skip


def _chunks() -> int:
    """How many groups of rows a parallel kernel splits its rows into (each with its own buffers): a few per
    thread, so that a slow group does not keep the others waiting. Read outside the kernels: calling
    ``numba.get_num_threads`` inside one keeps numba from caching it (imported here: only the compiled paths
    need it)."""
    import numba

    return 4 * numba.get_num_threads()


def _topk_numpy(
    scores: np.ndarray, k: int, perm: np.ndarray, offsets: np.ndarray, ex_ptr: np.ndarray, ex_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_topk_kernel`'s lists with numpy: row ``r`` ranks its items by score then tie key (smaller
    first), a total order, leaving out NaN, -inf and ``ex_idx[ex_ptr[r]:ex_ptr[r + 1]]``; the same items and
    scores as the kernel's heap, padded with -1 / NaN.

    A partition finds each row's k-th largest score; the items above it are taken, and of those equal to it
    the ones of smallest key, so only the tied items get a key before the k of each row are sorted.

    >>> items, values = _topk_numpy(np.array([[1.0, 3.0, 1.0, np.nan]]), 3, np.arange(4), np.array([2]),
    ...                             np.array([0, 0]), np.zeros(0, dtype=np.int64))
    >>> items.tolist(), values.tolist()  # keys (i + 2) mod 4: item 2 has key 0, item 0 key 2
    ([[1, 2, 0]], [[3.0, 1.0, 1.0]])
    """
    n_rows, n = scores.shape
    items = np.full((n_rows, k), -1, dtype=np.int64)
    values = np.full((n_rows, k), np.nan)
    step = max(1, _NUMPY_CHUNK // max(n, 1))
    for start in range(0, n_rows, step):
        stop = min(start + step, n_rows)
        v = np.array(scores[start:stop], dtype=np.float64)  # a copy: the excluded are overwritten below
        v[np.isnan(v)] = -np.inf  # NaN and -inf: not recommendable
        excluded = ex_idx[ex_ptr[start] : ex_ptr[stop]]
        v[np.repeat(np.arange(stop - start), np.diff(ex_ptr[start : stop + 1])), excluded] = -np.inf
        kth = np.partition(v, n - k, axis=1)[:, n - k]  # the k-th largest (-inf: fewer than k recommendable)
        above = v > kth[:, None]  # fewer than k per row
        needed = k - np.count_nonzero(above, axis=1)  # >= 1 items equal to the k-th, of the smallest keys
        tr, ti = np.nonzero(v == kth[:, None])
        tied = kth[tr] > -np.inf  # a row with fewer than k recommendable items takes them all (above)
        tr, ti = tr[tied], ti[tied]
        order = np.lexsort(((perm[ti] + offsets[start + tr]) % n, tr))
        tr, ti = tr[order], ti[order]
        keep = np.arange(len(tr)) - np.searchsorted(tr, tr) < needed[tr]
        ar, ai = np.nonzero(above)
        r, i = np.concatenate([ar, tr[keep]]), np.concatenate([ai, ti[keep]])
        s = v[r, i]
        order = np.lexsort(((perm[i] + offsets[start + r]) % n, -s, r))  # by row, score (largest first), key
        r, i, s = r[order], i[order], s[order]
        rank = np.arange(len(r)) - np.searchsorted(r, r)  # the place in its row's list
        items[start + r, rank] = i
        values[start + r, rank] = s
    return items, values


def _topk_product_numpy(operands: tuple, users, k: int, perm, offsets, exclude, out_items, out_scores) -> None:
    """:func:`_topk_product_batch` with numpy: dense product rows by chunks (``csr_matmat`` adds each row's
    terms in the order of its A entries, as the kernel; sums exactly 0 are dropped, and score 0 as unreached
    items do), ranked by :func:`_topk_numpy`."""
    a, b = operands
    n_items = b.shape[1]
    a, b = a.astype(np.float64, copy=False), b.astype(np.float64, copy=False)  # the kernel's float64 terms
    step = max(1, _NUMPY_CHUNK // n_items)
    for start in range(0, len(users), step):
        chunk = users[start : start + step]
        ex_ptr, ex_idx = _exclusion_lists(None if exclude is None else exclude[chunk], len(chunk))
        stop = start + len(chunk)
        out_items[start:stop], out_scores[start:stop] = _topk_numpy(
            (a[chunk] @ b).toarray(), k, perm, offsets[start:stop], ex_ptr, ex_idx
        )


def recommend(
    model: Any,
    users: np.ndarray | list[int],
    k: int,
    *,
    exclude: Interactions | sp.spmatrix | None = None,
    seed: int = 0,
    batch_size: int | None = None,
    progress: Progress | None = None,
    cold_start: ColdStart | None = None,
    train: Interactions | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Ranked top-``k`` item indices and scores for each user.

    Parameters
    ----------
    model
        A fitted scorer: ``score(users) -> (len(users), n_items)``, or a model with
        ``recommend_topk(users, k, exclude)``.
    users
        User indices in the model's training id space.
    k
        List length; at most the number of items.
    exclude
        ``None`` (recommend anything), the training :class:`~receval.Interactions`
        (each user's rated items are excluded — the usual protocol), or a sparse
        users x items matrix whose stored entries are excluded.
    seed
        Seed of the tie-breaking order (see the module docstring).
    batch_size
        Users scored at once; by default as many as fit in about 64 MB of scores. A batch whose
        score rows would not fit in the free memory is refused before it is scored.
    progress
        ``progress(users_done, n_users, "recommend users")`` after each batch (default: the
        active callback of :func:`receval.progress.reporting`; the command line draws it with
        the time remaining).
    cold_start
        ``None`` (the default): the model ranks items for every user, with or without
        history. A policy of :data:`receval.vocabulary.COLD_START_POLICIES` treats the
        users without a rating in ``train`` (cold users) as ``receval recommend
        --cold-start`` does: ``"empty"`` and ``"exclude"`` give them no list (a row of
        -1; :func:`receval.evaluate` then scores or leaves them out), ``"fallback"`` the
        most-rated training items (:func:`receval.cold_start.fallback_items`; scores: the
        items' training ratings).
    train
        The training data that tells cold users (default: ``exclude`` when it is an
        :class:`~receval.Interactions`), in the model's id space.

    Returns
    -------
    items : ndarray of int64, shape (len(users), k)
        Item indices, best first, padded with ``-1``.
    scores : ndarray of float64, shape (len(users), k)
        Their scores, ``NaN`` in the padding.

    Examples
    --------
    >>> from receval.recommenders.baselines import MostPopular
    >>> train = Interactions.from_arrays([0, 0, 1, 2, 2], [0, 1, 1, 2, 3], [5, 5, 5, 5, 1])
    >>> model = MostPopular(threshold=4).fit(train)
    >>> items, scores = recommend(model, [0, 1, 2], k=3, exclude=train)
    >>> items.tolist()
    [[2, 3, -1], [2, 0, 3], [1, 0, -1]]
    >>> scores[1].tolist()
    [1.0, 1.0, 0.0]
    >>> data = Interactions.from_arrays([0, 0, 1, 2, 2], [0, 1, 1, 2, 3], [5, 5, 5, 5, 1])
    >>> train = data.subset(data.users != 2)  # user 2 has no training rating: cold
    >>> model = MostPopular(threshold=4).fit(train)
    >>> recommend(model, [1, 2], k=2, exclude=train, cold_start="fallback")[0].tolist()
    [[0, 3], [1, 0]]
    """
    if cold_start is not None:
        return _recommend_cold(model, users, k, cold_start_policy(cold_start), exclude, train, seed, batch_size,
                               progress)  # fmt: skip
    users = np.asarray(users, dtype=np.int64).ravel()
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"k must be a positive integer, got {k!r}")
    k = int(k)
    n_items = _n_items(model)
    if n_items is None and not hasattr(model, "score"):
        raise ConfigError(f"{type(model).__name__} has no score(users) method: it cannot rank items")
    if n_items is None:
        if not users.size:
            raise NotFittedError(f"{type(model).__name__} exposes no n_items_; fit it before recommending")
        n_items = model.score(users[:1]).shape[1]
    if k > n_items:
        raise ConfigError(f"k={k} is larger than the catalogue of {n_items} items; use k <= {n_items}")
    n_users = getattr(model, "n_users_", None)
    if n_users is None:
        n_users = int(users.max()) + 1 if users.size else 0
    excl = exclusion_matrix(exclude, int(n_users), n_items)
    if hasattr(model, "recommend_topk"):
        shortcut = model.recommend_topk(users, k, excl)
        if shortcut is not NotImplemented:
            items, scores = shortcut
            return np.asarray(items, dtype=np.int64), np.asarray(scores, dtype=np.float64)
    if batch_size is not None and batch_size < 1:
        raise ConfigError(f"batch_size must be positive, got {batch_size}")
    if callable(getattr(model, "global_scores", None)):
        return _recommend_global(model, users, k, excl, seed, progress, batch_size)
    batch_size_given = batch_size
    if batch_size is None:
        batch_size = max(1, _BATCH_CELLS // n_items)
    batch_size = min(batch_size, max(len(users), 1))
    operands = None
    if hasattr(model, "score_operands"):
        import scipy.sparse as sp

        operands = tuple(sp.csr_matrix(m) for m in model.score_operands())
        for m in operands:
            m.sum_duplicates()  # a pair stored twice is one entry (their sum), as the dense product makes it
        a, b = operands
        if a.shape[1] != b.shape[0] or b.shape[1] != n_items:
            raise DataError(f"score_operands gave {a.shape} and {b.shape} matrices: their product is not users x items")
        bad = users[(users < 0) | (users >= operands[0].shape[0])]
        if bad.size:  # the kernel reads A's rows unchecked: refused here, as score would
            raise ColdStartError(
                f"user index {bad[0]} is outside the {operands[0].shape[0]} users {type(model).__name__} was trained on"
            )
        if batch_size_given is None:  # no score rows: batches only pace the progress
            batch_size = max(1, -(-len(users) // 16))
    check_memory(  # the model's score rows (a float64 copy only when the model returns another type or layout)
        0.0 if operands is not None else 8.0 * batch_size * n_items,
        f"scoring {batch_size:,} users x {n_items:,} items at once",
        "pass a smaller batch_size or filter the items (min_item_ratings)",
    )
    perm, offsets = _tie_keys(users, n_items, seed)
    compiled = not (numpy_pays(len(users) * n_items) if _NUMPY is None else _NUMPY)  # small: numba not imported
    order = np.empty_like(perm)
    order[perm] = np.arange(n_items)
    out_items = np.full((len(users), k), -1, dtype=np.int64)
    out_scores = np.full((len(users), k), np.nan)
    notify = progress_to(progress)
    if len(users) * n_items >= LARGE_RANKING:
        notify = _paced(notify, len(users), n_items)
    notify(0, len(users), "recommend users")
    lists = _product_lists(operands, excl) if operands is not None and compiled else ()
    for start in range(0, len(users), batch_size):
        stop = min(start + batch_size, len(users))
        batch = users[start:stop]
        if operands is not None:
            if compiled:
                _topk_product_batch(lists, batch, k, perm, order, offsets[start:stop], out_items[start:stop],
                                    out_scores[start:stop])  # fmt: skip
            else:
                _topk_product_numpy(operands, batch, k, perm, offsets[start:stop], excl, out_items[start:stop],
                                    out_scores[start:stop])  # fmt: skip
            notify(stop, len(users), "recommend users")
            continue
        sub = None if excl is None else excl[batch]
        # read, never written (NaN and the excluded items are skipped by the kernel): the model's own array,
        # which may be its state (a popularity row), is safe without a copy
        s = np.asarray(model.score(batch))
        if s.shape != (len(batch), n_items):
            raise DataError(f"{type(model).__name__}.score returned shape {s.shape}, expected {(len(batch), n_items)}")
        out_items[start:stop], out_scores[start:stop] = _topk_batch(s, k, perm, offsets[start:stop], sub, compiled)
        notify(stop, len(users), "recommend users")
    return out_items, out_scores


_SHORT_RUN = 4096  # runs of ties up to this long are bisected as Python lists (kept); longer ones by numpy


def _recommend_global(
    model: Any,
    users: np.ndarray,
    k: int,
    excl: sp.csr_matrix | None,
    seed: int,
    progress: Progress | None,
    batch_size: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The lists of a model whose scores are one row for every user (``model.global_scores()``, popularity).

    The items are sorted once by (score descending, ``perm``); within a run of equal scores a user's tie keys
    ``(perm + offset) mod n_items`` are that order rotated, so each user's list is read off the sorted items
    from the first position whose key wraps, skipping the user's excluded items: work grows with ``k`` plus
    the items skipped, not with the catalogue. The lists and scores are those of the scored path, bit for bit
    (``tests/test_recommenders_topn.py`` checks it).
    """
    users = model._check_users(users) if hasattr(model, "_check_users") else users
    row = np.asarray(model.global_scores(), dtype=np.float64)
    n_items = len(row)
    perm, offsets = _tie_keys(users, n_items, seed)
    kept = np.flatnonzero(~np.isnan(row) & (row != -np.inf))  # never recommended, as in the scored path
    order = kept[np.lexsort((perm[kept], -row[kept]))]
    ranked, keys = row[order], perm[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if len(order) else np.zeros(0, np.int64)
    ends = np.append(starts[1:], len(order)) if len(order) else starts
    out_items = np.full((len(users), k), -1, dtype=np.int64)
    out_scores = np.full((len(users), k), np.nan)
    notify = progress_to(progress)
    notify(0, len(users), "recommend users")
    step = batch_size or max(1, -(-len(users) // 16))  # no score rows: batches only pace the progress
    wraps = (n_items - offsets).tolist()  # a user's keys wrap to the front from the first perm >= wrap
    runs: dict[int, list[int]] = {}  # the perms of each short run of ties a user has reached, for bisect
    groups = list(zip(starts.tolist(), ends.tolist(), strict=True))
    for r, u in enumerate(users.tolist()):
        skip = set() if excl is None else set(excl.indices[excl.indptr[u] : excl.indptr[u + 1]].tolist())
        got = 0
        for g, (a, b) in enumerate(groups):
            if b - a == 1:
                positions: Any = (a,)
            else:
                if b - a <= _SHORT_RUN:
                    if g not in runs:
                        runs[g] = keys[a:b].tolist()
                    cut = a + bisect_left(runs[g], wraps[r])
                else:
                    cut = a + int(np.searchsorted(keys[a:b], wraps[r]))
                positions = chain(range(cut, b), range(a, cut))  # lazy: a run may hold millions of items
            for pos in positions:
                item = int(order[pos])
                if item in skip:
                    continue
                out_items[r, got], out_scores[r, got] = item, ranked[pos]
                got += 1
                if got == k:
                    break
            if got == k:
                break
        if (r + 1) % step == 0 or r + 1 == len(users):
            notify(r + 1, len(users), "recommend users")
    return out_items, out_scores


def _paced(notify: Progress, n_users: int, n_items: int) -> Progress:
    """``notify``, after logging the size of the work; once it has run :data:`PACE_SECONDS`, it also logs (once)
    the time left at the pace so far (``tests/test_recommenders_topn.py`` shows both).
    """
    _log.warning(
        "ranking %s users x %s items (%.2g scores): the time left follows once the first users are ranked",
        f"{n_users:,}",
        f"{n_items:,}",
        float(n_users) * n_items,
    )
    start = time.perf_counter()
    told = False

    def report(done: int, total: int, what: str) -> None:
        nonlocal told
        notify(done, total, what)
        elapsed = time.perf_counter() - start
        if not told and 0 < done < total and elapsed >= PACE_SECONDS:
            told = True
            left = elapsed * (total - done) / done
            _log.warning("%s of %s users ranked in %s: about %s left", f"{done:,}", f"{total:,}", _duration(elapsed),
                         _duration(left))  # fmt: skip

    return report


def _duration(seconds: float) -> str:
    """``45 s``, ``14 min``, ``1 h 40 min``, ``3 d 2 h``: the two largest units.

    >>> _duration(45.2), _duration(840), _duration(6000), _duration(266400)
    ('45 s', '14 min', '1 h 40 min', '3 d 2 h')
    """
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    if seconds < 86400:
        hours, minutes = divmod(round(seconds / 60), 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(round(seconds / 3600), 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def _recommend_cold(
    model: Any,
    users: np.ndarray | list[int],
    k: int,
    policy: ColdStart,
    exclude: Interactions | sp.spmatrix | None,
    train: Interactions | None,
    seed: int,
    batch_size: int | None,
    progress: Progress | None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`recommend` with a cold-start policy: the model's lists for warm users, the policy's for cold ones."""
    history = train if train is not None else exclude if isinstance(exclude, Interactions) else None
    if history is None:
        raise ConfigError(
            f"cold_start={policy!r} needs the training data to tell cold users: pass train= (or exclude=train)",
            parameters=["cold_start", "train"],
        )
    users = np.asarray(users, dtype=np.int64).ravel()
    rated = np.bincount(history.users, minlength=history.n_users)
    cold = np.ones(len(users), dtype=bool)
    known = (users >= 0) & (users < len(rated))
    cold[known] = rated[users[known]] == 0
    warm_items, warm_scores = recommend(model, users[~cold], k, exclude=exclude, seed=seed, batch_size=batch_size,
                                        progress=progress)  # fmt: skip
    width = warm_items.shape[1] if len(warm_items) else int(k)
    items = np.full((len(users), width), -1, dtype=np.int64)
    scores = np.full((len(users), width), np.nan)
    items[~cold], scores[~cold] = warm_items, warm_scores
    if policy == "fallback" and cold.any():
        from receval.cold_start import fallback_items

        counts = np.bincount(history.items, minlength=history.n_items)
        listed = fallback_items(counts, history.item_ids, width)
        items[np.ix_(cold, np.arange(len(listed)))] = listed
        scores[np.ix_(cold, np.arange(len(listed)))] = counts[listed].astype(np.float64)
    return items, scores
