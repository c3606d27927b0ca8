"""User- and item-based k-nearest-neighbour collaborative filtering.

Both models compute a similarity matrix between "x" entities (users for
:class:`UserKNN`, items for :class:`ItemKNN`) from the ratings they share:

``pearson``
    Pearson correlation over the co-rated entries only, with the means taken over
    those common entries (scikit-surprise's ``pearson``):
    ``(n Σab − Σa Σb) / sqrt((n Σa² − (Σa)²)(n Σb² − (Σb)²))``, 0 when undefined.
``cosine``
    Cosine over the co-rated entries (norms over the common entries, as surprise).
``adjusted-cosine``
    Cosine over the co-rated entries of ratings centred by the mean of the *other*
    entity (the user's mean for item-based, Sarwar et al. 2001; the item's mean for
    user-based).
``vector-cosine``
    Cosine of the whole rating vectors, unrated entries counting 0 (norms over all of
    an entity's ratings, as RankSys and LensKit do for top-N). The co-rated forms above
    give similarity 1 to two entities sharing a single rating, so for top-N ranking
    they favour rarely rated items unless ``shrinkage`` damps them; this one does not.

``vector-pearson``, ``vector-adjusted-cosine``
    The whole-vector cosine of ratings centred by the mean of the compared entity itself (Pearson) or of the
    *other* entity (adjusted cosine), as Dacrema et al.'s ``pearson`` and ``adjusted``.
``asymmetric-cosine``
    Aiolli (RecSys 2013): ``a·b / (‖b‖^(2α) ‖a‖^(2(1−α)))`` for entity ``a`` voting for ``b`` (α =
    ``asymmetric_alpha``; 0.5 is ``vector-cosine``).
``jaccard``, ``tversky``
    On the binary vectors (rated or not), ``A`` the voter's set and ``B`` the candidate's: Jaccard
    ``|A∩B| / (|A| + |B| − |A∩B|)``; Tversky (1977) ``|A∩B| / (|A∩B| + α|B∖A| + β|A∖B|)`` (α, β =
    ``tversky_alpha``, ``tversky_beta``).

The options Dacrema, Cremonesi & Jannach (RecSys 2019, "Are We Really Making Much Progress?") tune for
their ItemKNN/UserKNN baselines (their ``Compute_Similarity_Python``): ``shrink`` adds a term to every
denominator above (``a·b / (‖a‖‖b‖ + shrink)``); ``normalize=False`` drops the norms of the whole-vector
cosines (the plain dot product; their code then divides by ``shrink``, a constant factor that changes no
neighbourhood or ranking); ``feature_weighting`` ``"BM25"`` (K1 = 1.2, B = 0.75) or ``"TF-IDF"`` reweighs
the ratings first, the compared entities as documents and the others as terms (their ``okapi_BM_25`` and
``TF_IDF``), for the similarity and for the ratings ``score`` sums (``predict`` keeps the ratings). Their
names: ``cosine`` is ``vector-cosine``, ``pearson`` ``vector-pearson``, ``adjusted``
``vector-adjusted-cosine``, ``asymmetric`` ``asymmetric-cosine``, ``topK`` ``k``. Their neighbourhoods are
the candidate's (each item's ``topK`` most similar items score it); receval's are the voter's (below), as
implicit's and RankSys's. ``shrinkage`` (``n / (n + λ)``, below) is another, independent damping.

``auto`` (the default)
    ``pearson`` for rating prediction (``predict``) and ``vector-cosine`` for top-N
    ranking (``score``, :func:`~receval.recommenders.recommend`): each task gets the
    similarity that serves it. On MovieLens 100K ``u1`` (P@10, λ = 4, training items
    excluded) item-based ranking with co-rated Pearson scores 0.002 (below Random),
    with ``vector-cosine`` 0.320 (Popularity: 0.222); Pearson remains the similarity
    whose predictions equal scikit-surprise's ``KNNWithMeans``. Naming a similarity
    uses it for both tasks. ``similarity_`` is the matrix ``predict`` uses (dense
    mode), and ``neighbours_`` the top-N neighbourhoods ``score`` uses; each is made on its first use, so a
    model fitted only to predict ratings never selects neighbourhoods, and one fitted to rank never builds
    the dense matrix.

A pair with fewer than ``min_support`` common entries has similarity 0; with
``shrinkage`` λ > 0 similarities are multiplied by ``n / (n + λ)`` (n = common entries).
The diagonal is 1.

Rating prediction is scikit-surprise's ``KNNWithMeans``: among the entities that
rated the target (its raters for user-based, the user's rated items for
item-based), take the ``k`` most similar (ties: the earlier training row first),
keep those with positive similarity, and predict
``μ_x + Σ sim·(r − μ_neighbour) / Σ sim``; with fewer than ``min_k`` such neighbours
the prediction is ``μ_x``. ``means=False`` gives scikit-surprise's ``KNNBasic`` instead:
``Σ sim·r / Σ sim`` over the same neighbours, and the global mean with fewer than
``min_k`` of them (surprise's impossible prediction). When the user or the item has no
training rating the prediction is the global mean (as surprise). Predictions are clipped to the rating
scale when ``clip``.

Top-N scoring (``score``) uses a fixed neighbourhood per entity: its ``k`` most
similar others with positive similarity (ties: the lower index). Item-based, as
RankSys and Deshpande & Karypis (2004): each item the user rated votes for its own
neighbours, ``score(u, i) = Σ_{j ∈ I_u : i ∈ N_k(j)} sim(j, i)·w_uj`` (taking instead the
neighbours of the candidate ``i`` lets rarely rated items, whose similarities to
everything are high, flood the lists); user-based: ``score(u, i) = Σ_{v ∈ N_k(u)} sim(u, v)·w_vi``, where
``w`` is the rating (``centered=False``, default) or the rating minus the
neighbour's mean (``centered=True``). Items no neighbour rated score 0.

Memory (``mode``): ``"dense"`` keeps the whole similarity matrix, ``n_x² × 8`` bytes
per similarity (6,040 users: 290 MB; two with ``auto``), sized against the available
memory before it is allocated (:class:`~receval.errors.ConfigError` when it would not
fit). ``"sparse"`` keeps only each entity's top-``k`` neighbours (``neighbours_``,
CSR), selected entity by entity among the entities it shares ratings with, and for
``predict`` computes the similarity rows of the queried entities on demand (256 MB
of rows at a time); ``similarity_`` is then None. Both modes give identical neighbourhoods, scores and predictions (the
similarity of a pair is accumulated in the same order either way; the neighbourhoods are selected row by
row in both). ``"auto"``
(default) is dense while the dense matrices take at most 2 GB (about 11,000 entities
with ``similarity="auto"``), sparse above; so MovieLens-25M's 59,000 items fit in a
few GB.

Speed: the similarity rows, the scores and :func:`~receval.recommenders.recommend`'s top-k selection run on all
cores (numba ``prange``; ``NUMBA_NUM_THREADS`` caps them), a row at a time per thread with its own buffers, so
the results are the same bits whatever the number of threads. Numba runs them on its OpenMP layer, which a
forked child of a process that has used it cannot use: pools of worker processes must be started by spawn or
forkserver (loky, Dask and Ray do). Small problems skip numba, whose import and cached kernels cost about 0.5 s
per process: with at most 2,048 entities (:func:`receval._jit.numpy_pays`) and numba not yet imported, the
neighbourhoods of the whole-vector similarities (all but ``pearson``, ``cosine`` and ``adjusted-cosine``) are
made with scipy and numpy, with the same bits (scipy's sparse product adds a pair's terms in the kernels'
order); :func:`~receval.recommenders.recommend` does the same for its lists. On MovieLens-100K ``u1``, ``receval
recommend`` with item-kNN (fit and top-10 for every user) then takes 0.60 s in all, implicit's
``CosineRecommender`` 0.66 s (``benchmarks/bench_knn_implicit.py --sets ml100k``, 7 runs, load average 0.3-0.5).
Small problems also skip numba in ``predict``: its dense similarity matrix of the co-rated kinds (``pearson``,
``cosine``) when the ratings are integers whose sums stay exact (:func:`_co_rated_numpy`: matrix products, as
the ratings 1-5 of MovieLens) and its predictions (:func:`_predict_numpy`, while pairs x ``k`` stays within
:data:`~receval._jit.NUMPY_CELLS`): ``receval predict`` on MovieLens-100K ``u1`` then imports neither numba nor
scipy (``benchmarks/bench_cli.py --only predict``). Their products, formula blocks and batches of predictions
run on as many threads as the kernels (:func:`receval._jit.threads`), each writing its own part: the same bits.
Large problems: the neighbourhoods of the whole-vector similarities (with ``min_support`` 1 and no
``shrinkage``) add up a dot product per pair and no count
(:func:`_similarity_topk_dot`), the lists' orders are counting sorts, and ``score``'s rating weights are the
ranking lists themselves; on 100,000 users x 20,000 items x 5M ratings (``--sets generated``, k = 50) the whole
``receval recommend`` process takes 7.7 s of CPU and 0.65 GB against implicit's 14.0 s and 0.71 GB in the same
three interleaved runs (load average 2.3).

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 2], [5, 4, 4, 3, 1, 2])
>>> model = ItemKNN(k=2).fit(train)
>>> float(model.similarity_[0, 1])
1.0
>>> model.predict([2], [1]).round(3).tolist()
[1.167]
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, ClassVar, Literal, cast

import numpy as np

from receval._jit import COMPILED_FROM, in_threads, njit, numpy_pays, one_at_a_time, prange, threads
from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.recommenders.base import Recommender
from receval.recommenders.baselines import check_pairs
from receval.recommenders.topn import _NUMPY_CHUNK, _chunks, _offer, _pop_all, _topk_numpy
from receval.validate import check_memory

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["UserKNN", "ItemKNN"]

_SIMILARITIES = (
    "auto", "pearson", "cosine", "adjusted-cosine", "vector-cosine", "vector-pearson", "vector-adjusted-cosine",
    "asymmetric-cosine", "jaccard", "tversky",
)  # fmt: skip
# the kernel's formula of each similarity (see _similarity_kernel); 5, the plain dot product, is normalize=False
_KIND_CODES = {
    "pearson": 0, "cosine": 1, "adjusted-cosine": 1, "vector-cosine": 2, "vector-pearson": 2,
    "vector-adjusted-cosine": 2, "asymmetric-cosine": 2, "jaccard": 3, "tversky": 4,
}  # fmt: skip
# the similarities that normalize=False turns into the plain dot product of the (weighted, centred) vectors
_NORMALIZED = ("vector-cosine", "vector-pearson", "vector-adjusted-cosine", "asymmetric-cosine")
_FEATURE_WEIGHTINGS = ("none", "BM25", "TF-IDF")
# Okapi BM25's constants, as Dacrema et al.'s okapi_BM_25
_BM25_K1, _BM25_B = 1.2, 0.75
_MODES = ("auto", "dense", "sparse")
# mode="auto" keeps dense similarity matrices while they take at most this many bytes.
_DENSE_AUTO_BYTES = 2 * 10**9
# Similarity rows computed at once in sparse mode: at most this many float64 cells (256 MB).
_BLOCK_CELLS = 32_000_000
# None: the top-k neighbourhoods of the similarities that read a pair's dot product only are made by
# _similarity_topk_dot; False forces the general kernel _similarity_topk (tests: the same bits)
_DOT: bool | None = None
# None: the whole-vector neighbourhoods are made with numpy and scipy, without numba, when
# receval._jit.numpy_pays(n_x x n_x) (up to 2,048 entities), and so are the co-rated similarity matrices of
# integer ratings (_co_rated_numpy) and the predictions (numpy_pays(pairs x k)); True / False force that or the
# kernel (tests)
_NUMPY: bool | None = None


def _similarity_kernel(top_k: bool):
    """The similarity loop compiled for one task: ``top_k=False`` the dense rows, ``True`` the sparse
    neighbourhoods. The task is a constant of the closure, so numba prunes the other task's branch and the
    dense path never compiles the top-k selection (the costliest part to compile)."""

    @one_at_a_time
    @njit(cache=True, parallel=True)
    def similarities(
        rows, upper, x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, kind, row_norms, col_norms, support, shrinkage,
        shrink, alpha, beta, out, k, nb_cols, nb_vals, n_chunks,
    ):  # pragma: no cover  # fmt: skip
        """The similarities of each entity ``xi = rows[r]`` to the entities ``xj`` it shares entries with.

        Dense rows: written into ``out[r, :]`` (``upper``: only the entries ``xj > xi``, and the diagonal).
        Top-k: only its ``k`` most similar others with positive similarity (ties: the lower index) are kept,
        in a heap as they are computed, into ``nb_cols[r]``/``nb_vals[r]`` (best first, padded with -1), so no
        row of the matrix is ever kept whole.

        A pair's sums (count n, dot = Σ ri·rj and, for ``kind`` 0 Pearson and 1 cosine over the co-rated
        entries, Σ ri, Σ rj, Σ ri², Σ rj²) accumulate in ``acc[xj]`` in the order of y: x-lists are sorted by
        y, so a pair's common entries add up in the same order from either side and in either mode (the
        similarity is exactly symmetric when its formula is, and dense and sparse modes agree). The other
        kinds read per-entity quantities: 2 ``dot / (row_norms[xi] · col_norms[xj] + shrink)``, 3 Jaccard
        ``dot / (row_norms[xi] + col_norms[xj] − dot + shrink)`` (counts), 4 Tversky ``dot / (dot + alpha
        (col_norms[xj] − dot) + beta (row_norms[xi] − dot) + shrink)``, 5 the plain dot product.

        Rows run in parallel, each thread with its own accumulators, and a row's result depends on that row
        alone: the same bits whatever the number of threads. One loop with its arithmetic written out: the
        same steps as separate functions ran slower."""
        n_x = len(x_ptr) - 1
        n_rows = len(rows)
        co_rated = kind < 2
        width = 6 if co_rated else 2  # the whole-vector kinds need only the count and the dot product
        n_chunks = min(n_rows, n_chunks)
        for c in prange(n_chunks):
            acc = np.zeros((n_x, width))
            touched = np.empty(n_x + 1, dtype=np.int64)  # + 1: the branch-free record below writes one ahead
            # top-k: a heap of the k best (value, then the lower index) whose root is the worst kept
            heap_vals = np.empty(max(k, 1))
            heap_keys = np.empty(max(k, 1), dtype=np.int64)
            heap_cols = np.empty(max(k, 1), dtype=np.int64)
            for r in range(c, n_rows, n_chunks):  # interleaved: rows of similar cost spread over the threads
                xi = rows[r]
                n_touched = 0
                for p in range(x_ptr[xi], x_ptr[xi + 1]):
                    y = x_idx[p]
                    ri = x_val[p]
                    lo = y_ptr[y]
                    hi = y_ptr[y + 1]
                    first = lo
                    if upper:
                        first = lo + np.searchsorted(y_idx[lo:hi], xi, side="right")
                    for q in range(first, hi):
                        xj = y_idx[q]
                        if xj == xi:
                            continue
                        rj = y_val[q]
                        # acc[xj, 0] counts the pair's common entries (+1 each, never a value that may round
                        # to 0), so it is 0 only before xj's first visit: each xj enters once, n_touched < n_x.
                        # Written without a branch (always stored, kept by the count): the branch mispredicts
                        # on most terms, and this loop is the similarity's cost (about 20% less time)
                        touched[n_touched] = xj
                        n_touched += acc[xj, 0] == 0
                        acc[xj, 0] += 1
                        acc[xj, 1] += ri * rj
                        if co_rated:
                            acc[xj, 2] += ri
                            acc[xj, 3] += rj
                            acc[xj, 4] += ri * ri
                            acc[xj, 5] += rj * rj
                size = 0
                for t in range(n_touched):
                    xj = touched[t]
                    n = acc[xj, 0]
                    dot = acc[xj, 1]
                    s = 0.0
                    if n >= support:
                        num = dot
                        if kind == 0:
                            num = n * dot - acc[xj, 2] * acc[xj, 3]
                            den = np.sqrt((n * acc[xj, 4] - acc[xj, 2] ** 2) * (n * acc[xj, 5] - acc[xj, 3] ** 2))
                        elif kind == 1:
                            den = np.sqrt(acc[xj, 4] * acc[xj, 5])
                        elif kind == 2:
                            den = row_norms[xi] * col_norms[xj]
                        elif kind == 3:
                            den = row_norms[xi] + col_norms[xj] - dot
                        elif kind == 4:
                            den = dot + alpha * (col_norms[xj] - dot) + beta * (row_norms[xi] - dot)
                        else:
                            den = 1.0
                        if kind != 5:
                            den += shrink
                        if den != 0:
                            s = num / den
                        if shrinkage > 0:
                            s *= n / (n + shrinkage)
                    for f in range(width):
                        acc[xj, f] = 0.0
                    if not top_k:
                        out[r, xj] = s
                    elif s > 0 and not (size == k and s < heap_vals[0]):
                        size = _offer(heap_vals, heap_keys, heap_cols, size, k, s, xj, xj)
                if top_k:
                    _pop_all(heap_vals, heap_keys, heap_cols, size, k, nb_cols, nb_vals, r)
                else:
                    out[r, xi] = 1.0

    return similarities


_similarity_rows = _similarity_kernel(top_k=False)
_similarity_topk = _similarity_kernel(top_k=True)


@one_at_a_time
@njit(cache=True, parallel=True)
def _similarity_topk_dot(
    x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, kind, row_norms, col_norms, shrink, alpha, beta, k, nb_cols, nb_vals,
    n_chunks,
):  # pragma: no cover  # fmt: skip
    """:func:`_similarity_topk`'s neighbourhoods when a pair's similarity reads its dot product only: the
    whole-vector kinds (2 to 5) with ``min_support`` 1 and no ``shrinkage``, where a pair sharing no entry and a
    pair whose dot product is 0 both get similarity 0, never a neighbour. So no count is kept: each term is one
    addition into ``dot[xj]`` (about 30% less time than the count and the record of first visits).

    A row reaching at least n_x terms reads its sums by a scan of ``dot`` (no record of the entities it
    reached); a shorter row records an entity when its sum is 0 before the term (branch-free), which a sum
    returning to 0 may record twice: each entry is read then reset to 0, so a second record reads 0 and is
    skipped, and the records (at most the row's terms) fit in n_x + 1. The sums run in the row kernel's order
    and the formula is its own, so the similarities are its bits; a row's ``k`` best under the total order
    (similarity, then the lower index) do not depend on the order they are offered in."""
    n_chunks = min(len(x_ptr) - 1, n_chunks)
    for c in prange(n_chunks):  # a kernel of its own: see topn._topk_product_kernel
        _dot_chunk(
            np.uint64(c), n_chunks, x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, kind, row_norms, col_norms, shrink,
            alpha, beta, k, nb_cols, nb_vals,
        )  # fmt: skip


@njit(cache=True)
def _dot_chunk(
    c, n_chunks, x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, kind, row_norms, col_norms, shrink, alpha, beta, k,
    nb_cols, nb_vals,
):  # pragma: no cover  # fmt: skip
    """Rows ``c, c + n_chunks, ...`` of :func:`_similarity_topk_dot`."""
    n_x = len(x_ptr) - 1
    n_rows = n_x
    dot = np.zeros(n_x)
    touched = np.empty(n_x + 1, dtype=np.int64)
    heap_vals = np.empty(k)
    heap_keys = np.empty(k, dtype=np.int64)
    heap_cols = np.empty(k, dtype=np.int64)
    for xi in range(c, n_rows, n_chunks):
        terms = 0
        for p in range(x_ptr[xi], x_ptr[xi + 1]):
            terms += y_ptr[x_idx[p] + 1] - y_ptr[x_idx[p]]
        scan = terms >= n_x
        n_touched = 0
        for p in range(x_ptr[xi], x_ptr[xi + 1]):
            y = x_idx[p]
            ri = x_val[p]
            if scan:
                for q in range(y_ptr[y], y_ptr[y + 1]):
                    dot[y_idx[q]] += ri * y_val[q]
            else:
                for q in range(y_ptr[y], y_ptr[y + 1]):
                    xj = y_idx[q]
                    touched[n_touched] = xj
                    n_touched += dot[xj] == 0
                    dot[xj] += ri * y_val[q]
        size = 0
        for t in range(n_x if scan else n_touched):
            xj = t if scan else touched[t]
            d = dot[xj]
            if d == 0:  # not reached, or its sum is 0 (similarity 0), or read already
                continue
            dot[xj] = 0.0
            if xj == xi:
                continue
            if kind == 2:
                den = row_norms[xi] * col_norms[xj]
            elif kind == 3:
                den = row_norms[xi] + col_norms[xj] - d
            elif kind == 4:
                den = d + alpha * (col_norms[xj] - d) + beta * (row_norms[xi] - d)
            else:
                den = 1.0
            if kind != 5:
                den += shrink
            s = 0.0
            if den != 0:
                s = d / den
            if s > 0 and not (size == k and s < heap_vals[0]):
                size = _offer(heap_vals, heap_keys, heap_cols, size, k, s, xj, xj)
        _pop_all(heap_vals, heap_keys, heap_cols, size, k, nb_cols, nb_vals, xi)


@njit(cache=True)
def _mirror_upper(sim):  # pragma: no cover
    """Copy the upper triangle onto the lower one, tile by tile (cache-friendly)."""
    n = sim.shape[0]
    tile = 64
    n_tiles = (n + tile - 1) // tile
    for bi in range(n_tiles):
        for bj in range(bi + 1):
            for i in range(bi * tile, min(n, (bi + 1) * tile)):
                for j in range(bj * tile, min(i, (bj + 1) * tile)):
                    sim[i, j] = sim[j, i]


@njit(cache=True)
def _predict(
    xs, ys, sim, sim_row, y_ptr, y_idx, y_val, means, with_means, known_x, known_y, k, min_k, global_mean
):  # pragma: no cover
    """Predictions of the pairs (xs, ys); ``sim[sim_row[p]]`` is the similarity row of ``xs[p]``;
    ``with_means``: KNNWithMeans, else KNNBasic (the global mean when fewer than ``min_k`` neighbours).

    The neighbours are the ``k`` candidates of largest positive similarity in decreasing order, ties in
    training-row order (a stable sort's first ``k``, as surprise's ``heapq.nlargest``), kept by insertion
    into a sorted buffer as the candidates are read: the sums run in that order."""
    out = np.empty(len(xs))
    longest = 1
    for y in range(len(y_ptr) - 1):
        longest = max(longest, y_ptr[y + 1] - y_ptr[y])
    size = min(k, longest)  # no list has more candidates than this
    top_sim = np.empty(size)
    top_row = np.empty(size, dtype=np.int64)
    for p in range(len(xs)):
        x = xs[p]
        y = ys[p]
        if not (known_x[x] and known_y[y]):
            out[p] = global_mean
            continue
        row = sim[sim_row[p]]
        m = 0
        for q in range(y_ptr[y], y_ptr[y + 1]):
            s = row[y_idx[q]]
            if not s > 0 or (m == size and s <= top_sim[size - 1]):
                continue  # not positive, or not above the k-th kept (which, earlier, wins a tie)
            pos = min(m, size - 1)
            while pos > 0 and top_sim[pos - 1] < s:  # after the kept ones at least as similar
                top_sim[pos] = top_sim[pos - 1]
                top_row[pos] = top_row[pos - 1]
                pos -= 1
            top_sim[pos] = s
            top_row[pos] = q
            m = min(m + 1, size)
        sum_sim = 0.0
        sum_r = 0.0
        for j in range(m):
            q = top_row[j]
            sum_sim += top_sim[j]
            sum_r += top_sim[j] * (y_val[q] - means[y_idx[q]] if with_means else y_val[q])
        if not with_means:
            out[p] = sum_r / sum_sim if m >= min_k and sum_sim != 0 else global_mean
            continue
        if m < min_k:
            sum_r = 0.0
        est = means[x]
        if sum_sim != 0:
            est += sum_r / sum_sim
        out[p] = est
    return out


_FORMULA_BLOCK = 256  # rows and columns of the pairs _co_rated_numpy's formula reads at once (in the cache)


def _co_rated_numpy(lists: tuple, n_x: int, support: int, shrinkage: float, shrink: float) -> np.ndarray | None:
    """:func:`_similarity_rows`' dense matrix of the co-rated kinds (0 Pearson, 1 cosine) by matrix products, or
    None when they would not give the kernel's bits.

    The kernel adds a pair's terms (its count n, Σ ri·rj, Σ ri, Σ ri² over the co-rated entries) one at a time;
    BLAS adds them in another order. The sums agree bit for bit when every partial sum is exact: integer
    values whose largest possible sum (the largest square times the longest list) stays below 2^24 (float32,
    as the ratings 1-5 of MovieLens) or 2^53 (float64). The formula is then the kernel's, operation for
    operation, on those exact sums. Other values (half stars, feature weights) return None.
    """
    x_ptr, x_idx, x_val, y_ptr = lists[:4]
    if len(x_val) == 0 or not (np.isfinite(x_val).all() and np.array_equal(x_val, np.round(x_val))):
        return None
    longest = int(np.diff(x_ptr).max())
    peak = float(np.abs(x_val).max())
    if peak * peak * longest >= 2.0**53:
        return None
    limit = 2.0**24 if peak * peak * longest < 2.0**24 else 2.0**53
    dtype = np.float32 if limit == 2.0**24 else np.float64
    values = np.zeros((n_x, len(y_ptr) - 1), dtype=dtype)
    rated = np.zeros_like(values)  # 1 where an entry is rated (a rated 0 counts)
    rows = np.repeat(np.arange(n_x), np.diff(x_ptr))
    values[rows, x_idx] = x_val
    rated[rows, x_idx] = 1.0
    # the sums stay in the products' dtype (exact integers); the formula reads them as float64, as the kernel.
    # dot: numpy's symmetric product; square[i, j] = Σ ri² over the pair's entries; first[i, j] = Σ ri over
    # them, which with values >= 0 shares one product with the counts, (values + scale·rated)·ratedᵀ = Σ ri +
    # scale·n, when scale exceeds every Σ ri and the whole stays exact. The products run on all threads.
    scale = 2.0 ** math.ceil(math.log2(peak * longest + 1))  # a Python float: the product stays in dtype
    packed = x_val.min() >= 0 and scale * (longest + 1) < limit
    pairs = [(values, values.T), (np.square(values), rated.T)]
    pairs += [(values + scale * rated, rated.T)] if packed else [(values, rated.T), (rated, rated.T)]
    dot, square, first, *counted = in_threads([functools.partial(np.matmul, a, b) for a, b in pairs])
    count = counted[0] if counted else None
    del values, rated, pairs
    sim = np.empty((n_x, n_x))
    signed = bool(np.signbit(x_val).any())

    def blocks(corners: list[tuple[int, int]]) -> None:  # the pairs (i, j) and (j, i) of blocks above the diagonal
        for i, j in corners:
            a, b = slice(i, i + _FORMULA_BLOCK), slice(j, j + _FORMULA_BLOCK)
            block = _co_rated_block(
                dot[a, b], square[a, b], square[b, a].T, first[a, b], first[b, a].T,
                None if count is None else count[a, b], scale, signed, int(lists[6]), support, shrinkage, shrink,
            )  # fmt: skip
            sim[a, b] = block
            sim[b, a] = block.T  # the formula is symmetric operation for operation: the kernel's mirror

    corners = [(i, j) for i in range(0, n_x, _FORMULA_BLOCK) for j in range(i, n_x, _FORMULA_BLOCK)]
    workers = threads()  # each thread writes its own blocks: the same bits whatever their number
    in_threads([functools.partial(blocks, corners[t::workers]) for t in range(workers)])
    np.fill_diagonal(sim, 1.0)
    return sim


def _co_rated_block(dot, square, square_t, first, first_t, count, scale, signed, kind, support, shrinkage, shrink):
    """:func:`_co_rated_numpy`'s similarities of a block of pairs from its exact sums: ``square_t`` and ``first_t``
    are the sums of the pairs (j, i), transposed; ``count`` None means ``first`` holds Σ ri + scale·n."""
    f64 = np.float64
    if count is None:  # scale a power of 2: the product is the exact quotient, the difference exact
        count = np.floor(first * (1.0 / scale))
        first = first - scale * count
        first_t = first_t - scale * count
    if signed:  # the kernel's sums start from +0.0: a sum of exactly 0 is +0.0 there whatever its terms' signs
        dot, square, square_t, first, first_t = (a + 0.0 for a in (dot, square, square_t, first, first_t))
    if kind == 0:  # Pearson: (n·Σ ri·rj − Σ ri·Σ rj) / sqrt((n·Σ ri² − (Σ ri)²)(n·Σ rj² − (Σ rj)²))
        num = np.multiply(count, dot, dtype=f64)
        num -= np.multiply(first, first_t, dtype=f64)
        den = np.multiply(count, square, dtype=f64)
        den -= np.square(first, dtype=f64)
        other = np.multiply(count, square_t, dtype=f64)
        other -= np.square(first_t, dtype=f64)
        den *= other
    else:  # cosine over the co-rated entries
        num = dot.astype(f64)
        den = np.multiply(square, square_t, dtype=f64)
    np.sqrt(den, out=den)
    if shrink:
        den += shrink
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den != 0)
    if shrinkage > 0:
        out *= np.divide(count, np.add(count, shrinkage, dtype=f64), dtype=f64)
    if support > 1:  # a pair sharing no entry has similarity +0.0 from the formula already, as in the kernel
        out[count < support] = 0.0
    return out


_PREDICT_CELLS = 1 << 18  # (pair, candidate) cells of a batch of _predict_numpy: 2 MB per float64 array


def _predict_numpy(
    xs, ys, sim, sim_row, y_ptr, y_idx, y_val, means, with_means, known_x, known_y, k, min_k, global_mean
) -> np.ndarray:
    """:func:`_predict` with numpy, the same bits: the pairs of many y entities at once, batches on all threads.

    Each pair's candidates (the x entities of y's list, in training-row order, then padding) are put in decreasing
    order of positive similarity by a stable sort (ties: the earlier in the list, the kernel's insertion); the first
    ``m`` (its positive ones, at most ``size``) are its neighbours, and their sums are cumulative sums along that
    order read at ``m - 1``: numpy's cumulative sum adds one term at a time, as the kernel does from 0.0 (+ 0.0
    makes a sum of exactly 0 +0.0, as the kernel's). A batch holds y entities of similar list lengths (little
    padding), as many as fill :data:`_PREDICT_CELLS` (their pairs times the longest list); each writes its own
    pairs' sums, so the threads give the same bits whatever their number."""
    n = len(xs)
    size = max(1, min(k, int(np.diff(y_ptr).max(initial=1))))
    sum_sim = np.zeros(n)
    sum_r = np.zeros(n)
    count = np.zeros(n, dtype=np.int64)
    known = np.flatnonzero(known_x[xs] & known_y[ys])
    known = known[np.argsort(ys[known], kind="stable")]
    starts = np.flatnonzero(np.diff(ys[known], prepend=-1))  # y entity g's pairs: known[starts[g]:][:group_pairs[g]]
    group_y = ys[known[starts]]
    group_pairs = np.diff(starts, append=len(known))
    lengths = y_ptr[group_y + 1] - y_ptr[group_y]  # candidates per y entity (at least one: known_y)
    by_length = np.argsort(lengths, kind="stable")
    batches = []
    first = 0
    while first < len(by_length):  # by increasing length: a batch's longest list is its last
        last, rows = first + 1, group_pairs[by_length[first]]
        while (
            last < len(by_length) and (rows + group_pairs[by_length[last]]) * lengths[by_length[last]] <= _PREDICT_CELLS
        ):
            rows += group_pairs[by_length[last]]
            last += 1
        batches.append(by_length[first:last])
        first = last

    def batch(groups: np.ndarray) -> None:
        spread = np.arange(lengths[groups[-1]])
        real = spread < lengths[groups][:, None]  # (groups, longest list): a candidate, not padding
        at = np.where(real, y_ptr[group_y[groups]][:, None] + spread, 0)
        candidates = y_idx[at]
        values = y_val[at] - means[candidates] if with_means else y_val[at]
        member = np.repeat(np.arange(len(groups)), group_pairs[groups])  # each pair's row among the groups
        offsets = np.cumsum(group_pairs[groups]) - group_pairs[groups]
        pairs = known[np.arange(len(member)) + np.repeat(starts[groups] - offsets, group_pairs[groups])]
        s = sim[sim_row[pairs][:, None], candidates[member]]
        positive = (s > 0) & real[member]
        key = np.where(positive, -s, np.inf)  # ascending: the most similar first, the others (and padding) last
        m = np.minimum(positive.sum(axis=1), size)
        if len(spread) > size:  # keep each pair's size smallest keys (ties: the earlier), in list order
            kth = np.partition(key, size - 1, axis=1)[:, size - 1 : size]
            below = key < kth
            tied = key == kth
            below |= tied & (np.cumsum(tied, axis=1) <= size - below.sum(axis=1)[:, None])
            kept = np.nonzero(below)[1].reshape(len(pairs), size)
            ranks = np.argsort(np.take_along_axis(key, kept, axis=1), axis=1, kind="stable")
            order = np.take_along_axis(kept, ranks, axis=1)
        else:
            order = np.argsort(key, axis=1, kind="stable")
        chosen = np.take_along_axis(s, order, axis=1)
        terms = chosen * values[member[:, None], order]
        read = (np.arange(len(pairs)), np.maximum(m - 1, 0))
        has = m > 0
        sum_sim[pairs] = np.where(has, np.cumsum(chosen, axis=1)[read] + 0.0, 0.0)
        sum_r[pairs] = np.where(has, np.cumsum(terms, axis=1)[read] + 0.0, 0.0)
        count[pairs] = m

    def run(mine: list[np.ndarray]) -> None:
        for groups in mine:
            batch(groups)

    workers = threads()
    in_threads([functools.partial(run, batches[t::workers]) for t in range(workers)])
    out = np.full(n, global_mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        if with_means:
            sum_r[count < min_k] = 0.0
            est = np.where(sum_sim != 0, means[xs] + sum_r / sum_sim, means[xs])
        else:
            est = np.where((count >= min_k) & (sum_sim != 0), sum_r / sum_sim, global_mean)
    out[known] = est[known]
    return out


def _list_orders(x, y, n_x: int, n_y: int) -> tuple:
    """The orders of the kernels' lists: x-major sorted by y, and y-major sorted by x, with their pointers
    and their (int32) index lists ``y[x_order]``, ``x[yx_order]``.

    Raises :class:`DataError` when an (x, y) pair repeats (seen in the sorted keys, no other pass). From
    :data:`~receval._jit.COMPILED_FROM` ratings the orders are counting sorts (:func:`_counting_orders`, linear,
    1.5 s less at 5M ratings); the pairs are distinct, so they are the argsorts' orders."""
    x_ptr = np.concatenate([[0], np.cumsum(np.bincount(x, minlength=n_x))])
    y_ptr = np.concatenate([[0], np.cumsum(np.bincount(y, minlength=n_y))])
    compiled = COMPILED_FROM <= len(x) < 2**31
    if compiled:
        x_order, yx_order, repeated = _counting_orders(x, y, x_ptr, y_ptr)
    else:
        keys = x.astype(np.int64) * n_y + y
        x_order = np.argsort(keys)
        repeated = int(np.count_nonzero(np.diff(keys[x_order]) == 0))
        del keys
    if repeated:
        raise DataError(
            f"{repeated} repeated (user, item) ratings; call .deduplicate('last' or 'mean') "
            "to choose one value per pair before building a matrix"
        )
    if not compiled:
        yx_order = np.argsort(y.astype(np.int64) * n_x + x)
    return (x_order, x_ptr, y[x_order].astype(np.int32, copy=False), yx_order, y_ptr,
            x[yx_order].astype(np.int32, copy=False))  # fmt: skip


@njit(cache=True)
def _counting_orders(x, y, x_ptr, y_ptr):  # pragma: no cover
    """(x_order, yx_order, repeated pairs) of :func:`_list_orders` by three stable counting sorts: by y, then
    by x (the order by (x, y)), then that by y (the order by (y, x))."""
    n = len(x)
    by_y = np.empty(n, dtype=np.int32)  # positions as int32 (the kernels' index lists are int32 too): half the memory
    at = y_ptr[:-1].copy()
    for i in range(n):
        by_y[at[y[i]]] = i
        at[y[i]] += 1
    x_order = np.empty(n, dtype=np.int32)
    at = x_ptr[:-1].copy()
    for t in range(n):
        i = by_y[t]
        x_order[at[x[i]]] = i
        at[x[i]] += 1
    yx_order = by_y  # overwritten: its order is no longer needed
    at = y_ptr[:-1].copy()
    for t in range(n):
        i = x_order[t]
        yx_order[at[y[i]]] = i
        at[y[i]] += 1
    repeated = 0
    for t in range(1, n):
        repeated += x[x_order[t]] == x[x_order[t - 1]] and y[x_order[t]] == y[x_order[t - 1]]
    return x_order, yx_order, repeated


def _feature_weights(weighting: str, x, y, r, n_x: int, n_y: int) -> np.ndarray:
    """The ratings reweighted as documents x (rows) over terms y, as Dacrema et al.'s ``okapi_BM_25`` and
    ``TF_IDF`` (Robertson & Zaragoza 2009): ``idf_y = log(n_x / (1 + |x rating y|))``; TF-IDF ``sqrt(r)·idf_y``;
    BM25 ``r (K1 + 1) / (K1 ((1 − B) + B L_x / mean L) + r) · idf_y`` with ``L_x`` the sum of x's ratings."""
    if weighting == "none":
        return r
    if r.size and r.min() < 0:
        raise DataError(
            f"feature_weighting={weighting!r} weighs non-negative ratings, and the smallest is {r.min():g}: "
            "shift the ratings or use feature_weighting='none'"
        )
    idf = np.log(n_x / (1.0 + np.bincount(y, minlength=n_y)))[y]
    if weighting == "TF-IDF":
        return np.sqrt(r) * idf
    length = np.bincount(x, weights=r, minlength=n_x)
    norm = (1.0 - _BM25_B) + _BM25_B * length / length.mean()
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero rating of a zero-length row weighs 0
        weighted = r * (_BM25_K1 + 1.0) / (_BM25_K1 * norm[x] + r) * idf
    return np.nan_to_num(weighted, nan=0.0)


def _entity_norms(kind: str, x, values, n_x: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(row_norms, col_norms) of the kernel's formula of ``kind`` (empty for the co-rated ones)."""
    if kind in ("jaccard", "tversky"):  # binary vectors: their counts
        counts = np.bincount(x, minlength=n_x).astype(np.float64)
        return counts, counts
    if kind not in _NORMALIZED:
        return np.zeros(0), np.zeros(0)
    if len(x) >= COMPILED_FROM:
        squares = _square_sums(x, values, n_x)
    else:
        squares = np.bincount(x, weights=values * values, minlength=n_x)
    if kind == "asymmetric-cosine":  # Aiolli (2013): ‖candidate‖^(2α) ‖voter‖^(2(1−α))
        return squares ** (1.0 - alpha), squares**alpha
    norms = np.sqrt(squares)
    return norms, norms


@njit(cache=True)
def _square_sums(x, values, n_x):  # pragma: no cover
    """``np.bincount(x, weights=values * values, minlength=n_x)`` without the array of squares (a copy of the
    ratings at fit's peak): the same products added in the same order (bincount's loop), so the same bits."""
    out = np.zeros(n_x)
    for i in range(len(x)):
        out[x[i]] += values[i] * values[i]
    return out


def _kernel_lists(kind: str, x, y, r, means: tuple, orders: tuple, normalize: bool, alpha: float, shared=None) -> tuple:
    """The inputs of the similarity kernels for the similarity ``kind`` of the (weighted) ratings ``r`` at
    (x, y); ``means`` = (x entities' means, y entities' means) of ``r``. ``shared``: lists made for another
    kind, whose value lists are reused when this kind reads the same values (no second copy)."""
    x_order, x_ptr, x_idx, yx_order, y_ptr, y_idx = orders
    x_mean, y_mean = means
    if kind in ("adjusted-cosine", "vector-adjusted-cosine"):
        values = r - y_mean[y]
    elif kind == "vector-pearson":
        values = r - x_mean[x]
    elif kind in ("jaccard", "tversky"):
        values = np.ones_like(r)
    else:
        values = r
    n_x = len(x_ptr) - 1
    row_norms, col_norms = _entity_norms(kind, x, values, n_x, alpha)
    code = _KIND_CODES[kind] if normalize or kind not in _NORMALIZED else 5
    if shared is not None and values is r and shared[-1] is r:
        x_val, y_val = shared[2], shared[5]
    else:
        x_val, y_val = values[x_order], values[yx_order]
    return (x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, code, row_norms, col_norms, values)


def _neighbours(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int) -> sp.csr_matrix:
    """The sparse n x n neighbourhood matrix of the (row, column, similarity) ``parts``, indices sorted."""
    import scipy.sparse as sp

    if not parts:
        return sp.csr_matrix((n, n))
    rows, cols, vals = (np.concatenate(p) for p in zip(*parts, strict=True))
    out = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    out.sort_indices()
    return out


@one_at_a_time
@njit(cache=True, parallel=True)
def _score_rows(rows, a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, out):  # pragma: no cover
    """``out[r] = A[rows[r]] @ B`` for CSR ``A`` and ``B`` (``out`` zeros): each row's terms add up in the
    order of its A entries, so a row's bits depend on that row alone (rows run in parallel)."""
    for r in prange(len(rows)):
        u = rows[r]
        for p in range(a_ptr[u], a_ptr[u + 1]):
            j = a_idx[p]
            w = a_val[p]
            for q in range(b_ptr[j], b_ptr[j + 1]):
                out[r, b_idx[q]] += w * b_val[q]


@one_at_a_time
@njit(cache=True, parallel=True)
def _score_candidates(rows, a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n_cols, items, out, n_chunks):  # pragma: no cover
    """``out[r, t] = (A[rows[r]] @ B)[items[r, t]]``, added up as :func:`_score_rows` does (the same bits),
    in a row buffer per thread reset entry by entry: no full score row is ever kept."""
    n_rows = len(rows)
    n_chunks = min(n_rows, n_chunks)
    for c in prange(n_chunks):
        buffer = np.zeros(n_cols)
        for r in range(c, n_rows, n_chunks):
            u = rows[r]
            for p in range(a_ptr[u], a_ptr[u + 1]):
                j = a_idx[p]
                w = a_val[p]
                for q in range(b_ptr[j], b_ptr[j + 1]):
                    buffer[b_idx[q]] += w * b_val[q]
            for t in range(items.shape[1]):
                out[r, t] = buffer[items[r, t]]
            for p in range(a_ptr[u], a_ptr[u + 1]):
                j = a_idx[p]
                for q in range(b_ptr[j], b_ptr[j + 1]):
                    buffer[b_idx[q]] = 0.0


Similarity = Literal[
    "auto", "pearson", "cosine", "adjusted-cosine", "vector-cosine", "vector-pearson", "vector-adjusted-cosine",
    "asymmetric-cosine", "jaccard", "tversky",
]  # fmt: skip


class _KNN(Recommender):
    user_based: ClassVar[bool]

    def __init__(
        self,
        k: int = 50,
        similarity: Similarity = "auto",
        min_k: int = 1,
        min_support: int = 1,
        shrinkage: float = 0.0,
        centered: bool = False,
        clip: bool = True,
        mode: Literal["auto", "dense", "sparse"] = "auto",
        means: bool = True,
        shrink: float = 0.0,
        normalize: bool = True,
        feature_weighting: Literal["none", "BM25", "TF-IDF"] = "none",
        asymmetric_alpha: float = 0.5,
        tversky_alpha: float = 1.0,
        tversky_beta: float = 1.0,
    ):
        self.k = k
        self.similarity = similarity
        self.min_k = min_k
        self.min_support = min_support
        self.shrinkage = shrinkage
        self.centered = centered
        self.clip = clip
        self.mode = mode
        self.means = means
        self.shrink = shrink
        self.normalize = normalize
        self.feature_weighting = feature_weighting
        self.asymmetric_alpha = asymmetric_alpha
        self.tversky_alpha = tversky_alpha
        self.tversky_beta = tversky_beta

    def _validate(self) -> None:
        if self.similarity not in _SIMILARITIES:
            raise ConfigError(f"similarity={self.similarity!r} is not one of {list(_SIMILARITIES)}")
        if self.mode not in _MODES:
            raise ConfigError(f"mode={self.mode!r} is not one of {list(_MODES)}")
        if self.feature_weighting not in _FEATURE_WEIGHTINGS:
            raise ConfigError(f"feature_weighting={self.feature_weighting!r} is not one of {list(_FEATURE_WEIGHTINGS)}")
        for name in ("k", "min_k", "min_support"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (name != "min_k"):
                raise ConfigError(f"{name} must be an integer >= {int(name != 'min_k')}, got {value!r}")
        for name in ("shrinkage", "shrink", "tversky_alpha", "tversky_beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not value >= 0:
                raise ConfigError(f"{name} must be a number >= 0, got {value!r}")
        alpha = self.asymmetric_alpha
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)) or not 0 <= alpha <= 1:
            raise ConfigError(f"asymmetric_alpha must be a number in [0, 1], got {alpha!r}")
        for name in ("means", "normalize"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ConfigError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if not self.normalize and self.similarity not in ("auto", *_NORMALIZED):
            raise ConfigError(
                f"normalize=False (the plain dot product) applies to the similarities {list(_NORMALIZED)} "
                f"(and the ranking one of 'auto'), not to similarity={self.similarity!r}: drop normalize or "
                "choose one of those"
            )

    def fit(self, train: Interactions) -> _KNN:
        """Learn the similarity inputs; the similarity matrix (dense mode) and the neighbourhoods are made on
        first use (``predict``, ``score``), so each task computes only what it reads.

        Returns
        -------
        self
        """
        self._validate()
        self._start_fit(train)
        n_x, n_y = (self.n_users_, self.n_items_) if self.user_based else (self.n_items_, self.n_users_)
        users, items = train.users.astype(np.int32, copy=False), train.items.astype(np.int32, copy=False)
        x, y = (users, items) if self.user_based else (items, users)
        orders = _list_orders(x, y, n_x, n_y)  # raises DataError on repeated pairs
        predict_kind, rank_kind = ("pearson", "vector-cosine") if self.similarity == "auto" else (self.similarity,) * 2
        n_matrices = 1 if predict_kind == rank_kind else 2
        dense_bytes = n_matrices * n_x * n_x * 8
        mode = self.mode
        if mode == "auto":
            mode = "dense" if dense_bytes <= _DENSE_AUTO_BYTES else "sparse"
        if mode == "dense":
            kind = "users" if self.user_based else "items"
            check_memory(
                dense_bytes,
                f"{type(self).__name__}'s dense {n_x:,} x {n_x:,} similarity matri{'ces' if n_matrices > 1 else 'x'} "
                f"of {kind}",
                'use mode="sparse" (top-k neighbours only), filter the data or use another algorithm',
            )
        self.mode_ = mode
        r = train.ratings.astype(np.float64)
        x_count = np.bincount(x, minlength=n_x)
        y_count = np.bincount(y, minlength=n_y)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.means_ = np.nan_to_num(np.bincount(x, weights=r, minlength=n_x) / x_count)
            y_means = np.nan_to_num(np.bincount(y, weights=r, minlength=n_y) / y_count)
        weighted = _feature_weights(str(self.feature_weighting), x, y, r, n_x, n_y)
        means = (self.means_, y_means)
        if weighted is not r:  # the centred similarities centre the weighted ratings (Dacrema et al.'s order)
            with np.errstate(invalid="ignore", divide="ignore"):
                means = (
                    np.nan_to_num(np.bincount(x, weights=weighted, minlength=n_x) / x_count),
                    np.nan_to_num(np.bincount(y, weights=weighted, minlength=n_y) / y_count),
                )
        alpha = float(self.asymmetric_alpha)
        normalize = bool(self.normalize)  # a named similarity serves both tasks; auto's Pearson is co-rated
        predict_lists = _kernel_lists(predict_kind, x, y, weighted, means, orders, normalize, alpha)
        rank_lists = predict_lists
        if rank_kind != predict_kind:  # auto: Pearson and vector-cosine read the same ratings, kept once
            rank_lists = _kernel_lists(rank_kind, x, y, weighted, means, orders, normalize, alpha, predict_lists)
        del orders
        # the similarity matrix (dense mode) and the neighbourhoods are made on first use from these lists
        self._predict_lists: tuple | None = predict_lists[:-1]
        self._rank_lists: tuple | None = rank_lists[:-1]
        self._similarity: np.ndarray | None = None
        self._neighbours: sp.csr_matrix | None = None
        self._weights_csr: sp.csr_matrix | None = None
        # score's rating weights are the ranking lists' own values (by reference) when the ranking similarity
        # reads the (weighted) ratings uncentred: the users' lists, sorted by item, as _weights makes them
        self._score_lists: tuple | None = None
        if not self.centered and rank_lists[-1] is weighted:
            self._score_lists = rank_lists[0:3] if self.user_based else rank_lists[3:6]
        self._y_major: tuple | None = None
        # the training arrays themselves (no copies), for the y-major lists predict and score make on first use
        self._xyr = (x, y, train.ratings, None if weighted is r else weighted)
        self._known_x, self._known_y = x_count > 0, y_count > 0
        self.global_mean_ = float(r.mean())
        self.scale_ = train.scale
        return self

    @property
    def similarity_(self) -> np.ndarray | None:
        """The dense n_x x n_x similarity matrix ``predict`` uses (dense mode; made on first use), else None."""
        self._check_fitted()
        if self.mode_ != "dense":
            return None
        if self._similarity is None:
            self._similarity = self._dense(cast(tuple, self._predict_lists), len(self._known_x))
            self._predict_lists = None  # no longer needed
        return self._similarity

    @property
    def neighbours_(self) -> sp.csr_matrix:
        """Each entity's ``k`` most similar others with positive similarity, sparse (made on first use)."""
        self._check_fitted()
        if self._neighbours is None:
            self._neighbours = self._sparse_neighbours(cast(tuple, self._rank_lists), len(self._known_x))
            self._rank_lists = None  # no longer needed
        return self._neighbours

    @property
    def _y_lists(self) -> tuple:
        """(pointers, x indices, ratings, score weights) of each y entity, in training-row order: the order
        of surprise's neighbour ties (predict); ``score`` weighs the (feature-weighted) ratings (made once)."""
        if self._y_major is None:
            x, y, ratings, weighted = self._xyr
            y_order = np.argsort(y, kind="stable")
            y_ptr = np.concatenate([[0], np.cumsum(np.bincount(y, minlength=len(self._known_y)))])
            values = ratings[y_order].astype(np.float64)
            self._y_major = (y_ptr, x[y_order], values, values if weighted is None else weighted[y_order])
        return self._y_major

    @property
    def _weights(self) -> sp.csr_matrix:
        """The users x items ratings (minus the x entity's mean when ``centered``; feature-weighted with
        ``feature_weighting``) that ``score`` weighs (sorted CSR, made on first use from the y-major lists)."""
        import scipy.sparse as sp

        self._check_fitted()
        if self._weights_csr is None and self._score_lists is not None:
            ptr, idx, values = self._score_lists
            self._weights_csr = sp.csr_matrix((values, idx, ptr), shape=(self.n_users_, self.n_items_))
            self._weights_csr.has_sorted_indices = True  # the lists are sorted by item (_list_orders)
            self._score_lists = None
        if self._weights_csr is None:
            y_ptr, y_idx, _, weights = self._y_lists
            values = weights - self.means_[y_idx] if self.centered else weights
            lists, shape = (values, y_idx, y_ptr), (self.n_users_, self.n_items_)
            if self.user_based:  # item-major lists
                weights = sp.csc_matrix(lists, shape=shape).tocsr()
            else:  # copied: sorting the indices in place must leave predict's lists in training-row order
                weights = sp.csr_matrix(lists, shape=shape, copy=True)
            weights.sort_indices()
            self._weights_csr = weights
        return self._weights_csr

    def _kernel(self, kernel, lists: tuple, rows: np.ndarray, upper: bool, out: np.ndarray, k: int, cols, vals) -> None:
        """``kernel`` (a :func:`_similarity_kernel`) on the entities ``rows`` with ``lists`` (of one similarity
        kind: its x-lists, y-lists, kind code and norms, in the kernel's order) and the model's parameters."""
        x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, code, row_norms, col_norms = lists
        support, shrinkage, shrink = int(self.min_support), float(self.shrinkage), float(self.shrink)
        alpha, beta = float(self.tversky_alpha), float(self.tversky_beta)
        kernel(rows, upper, x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, code, row_norms, col_norms, support,
               shrinkage, shrink, alpha, beta, out, k, cols, vals, _chunks())  # fmt: skip

    def _rows(self, lists: tuple, rows: np.ndarray, upper: bool, out: np.ndarray) -> None:
        """Write the similarity rows of the entities ``rows`` (of the kind of ``lists``) into ``out``."""
        none = np.zeros((0, 0), dtype=np.int64)
        self._kernel(_similarity_rows, lists, rows, upper, out, 0, none, none.astype(np.float64))

    def _dense(self, lists: tuple, n_x: int) -> np.ndarray:
        """The dense n_x x n_x similarity matrix (upper triangle computed then mirrored when the formula is
        symmetric, else every row)."""
        code, row_norms, col_norms = lists[6:]
        n_y = len(lists[3]) - 1
        if code < 2 and (numpy_pays(n_x * max(n_x, n_y)) if _NUMPY is None else _NUMPY):  # co-rated kinds, small
            sim = _co_rated_numpy(lists, n_x, int(self.min_support), float(self.shrinkage), float(self.shrink))
            if sim is not None:
                return sim
        # Tversky's ``dot + α(c_j − dot) + β(c_i − dot)`` adds its terms in another order for the pair (j, i):
        # the same bits only when the sums are exact, as with α = β ∈ {0, 1} over counts; otherwise every row
        # is computed, so that dense and sparse modes agree (at α = β = 0.3 a mirror differs in the last bit
        # for 11% of pairs)
        exact = self.tversky_alpha == self.tversky_beta and float(self.tversky_alpha) in (0.0, 1.0)
        symmetric = np.array_equal(row_norms, col_norms) and (code != 4 or exact)
        sim = np.zeros((n_x, n_x))
        self._rows(lists, np.arange(n_x), symmetric, sim)
        if symmetric:
            _mirror_upper(sim)
        return sim

    def _sparse_neighbours(self, lists: tuple, n_x: int) -> sp.csr_matrix:
        """The top-k neighbourhoods, each entity's kept as it is computed (never the whole matrix)."""
        import scipy.sparse as sp

        kk = min(int(self.k), n_x - 1)
        if kk <= 0:
            return sp.csr_matrix((n_x, n_x))
        if lists[6] >= 2 and (numpy_pays(n_x * n_x) if _NUMPY is None else _NUMPY):  # whole-vector kinds, small
            cols, vals = self._numpy_topk(lists, n_x, kk)
        else:
            cols = np.full((n_x, kk), -1, dtype=np.int64)
            vals = np.zeros((n_x, kk))
            if lists[6] >= 2 and self.min_support <= 1 and self.shrinkage == 0 and _DOT is not False:
                x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, code, row_norms, col_norms = lists
                _similarity_topk_dot(x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, code, row_norms, col_norms,
                                     float(self.shrink), float(self.tversky_alpha), float(self.tversky_beta), kk,
                                     cols, vals, _chunks())  # fmt: skip
            else:
                self._kernel(_similarity_topk, lists, np.arange(n_x), False, np.zeros((0, 0)), kk, cols, vals)
        keep = cols >= 0
        rows = np.broadcast_to(np.arange(n_x)[:, None], cols.shape)
        return _neighbours([(rows[keep], cols[keep], vals[keep])], n_x)

    def _numpy_topk(self, lists: tuple, n_x: int, kk: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`_similarity_topk`'s (columns, similarities) for the whole-vector kinds (codes 2 to 5, which
        read a pair's count and dot product only), with scipy and numpy: the same bits.

        A pair's dot product is ``(X @ Xᵀ)[xi, xj]`` with X the x-lists: scipy's ``csr_matmat`` adds the terms
        of row xi in the order of its entries (sorted by y), as the kernel's ``acc[xj]``, and drops the sums
        exactly 0 (similarity 0, which the kernel never keeps either); the formula is then the kernel's,
        operation for operation, by rows of chunks, and the k best of each row (ties: the lower index) are
        :func:`~receval.recommenders.topn._topk_numpy`'s with key = index.
        """
        import scipy.sparse as sp

        x_ptr, x_idx, x_val, y_ptr, y_idx, y_val, code, row_norms, col_norms = lists
        support, shrinkage, shrink = int(self.min_support), float(self.shrinkage), float(self.shrink)
        alpha, beta = float(self.tversky_alpha), float(self.tversky_beta)
        n_y = len(y_ptr) - 1
        a = sp.csr_matrix((x_val, x_idx, x_ptr), shape=(n_x, n_y))
        b = sp.csr_matrix((y_val, y_idx, y_ptr), shape=(n_y, n_x))
        counted = support > 1 or shrinkage > 0  # else every pair sharing an entry counts n >= 1 = support
        if counted:
            a_one = sp.csr_matrix((np.ones(len(x_idx)), x_idx, x_ptr), shape=(n_x, n_y))
            b_one = sp.csr_matrix((np.ones(len(y_idx)), y_idx, y_ptr), shape=(n_y, n_x))
        keys = np.arange(n_x)
        cols = np.empty((n_x, kk), dtype=np.int64)
        vals = np.empty((n_x, kk))
        step = max(1, _NUMPY_CHUNK // n_x)
        for start in range(0, n_x, step):
            stop = min(start + step, n_x)
            dot = (a[start:stop] @ b).toarray()
            row, col = row_norms[start:stop, None], col_norms[None, :]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                if code == 5:  # the plain dot product: the kernel divides by 1.0, which changes no bit
                    sim = dot
                else:
                    if code == 2:
                        den = row * col
                    elif code == 3:
                        den = row + col - dot
                    else:
                        den = dot + alpha * (col - dot) + beta * (row - dot)
                    den += shrink
                    sim = np.where(den != 0, dot / den, 0.0)
                if counted:
                    n = (a_one[start:stop] @ b_one).toarray()
                    if shrinkage > 0:
                        sim = sim * (n / (n + shrinkage))
                    sim[n < support] = 0.0
            sim[np.arange(stop - start), np.arange(start, stop)] = 0.0  # an entity is not its own neighbour
            sim[~(sim > 0)] = -np.inf  # only positive similarities are neighbours
            cols[start:stop], vals[start:stop] = _topk_numpy(
                sim, kk, keys, np.zeros(stop - start, dtype=np.int64), np.zeros(stop - start + 1, dtype=np.int64),
                keys[:0],
            )  # fmt: skip
        return cols, vals

    def predict(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Ratings for (user, item) pairs, as scikit-surprise's ``KNNWithMeans`` (``KNNBasic`` with ``means=False``).

        Returns
        -------
        numpy.ndarray
            float64, one prediction per pair (clipped to the rating scale when ``clip``).
        """
        users, items = check_pairs(self, users, items)
        xs, ys = (users, items) if self.user_based else (items, users)
        xs, ys = np.asarray(xs, dtype=np.int64), np.asarray(ys, dtype=np.int64)
        similarity = self.similarity_
        if similarity is not None:  # dense mode, the pairs by entity (its similarity row stays in cache)
            order = np.argsort(xs, kind="stable")
            est = np.empty(len(xs))
            est[order] = self._predict(xs[order], ys[order], similarity, xs[order])
        else:  # sparse mode: the similarity rows of the pairs' entities, by blocks
            est = np.empty(len(xs))
            unique, inverse = np.unique(xs, return_inverse=True)
            order = np.argsort(inverse, kind="stable")
            sorted_inverse = inverse[order]
            n_x = len(self._known_x)
            block = max(1, _BLOCK_CELLS // n_x)
            buffer = np.empty((min(block, len(unique)), n_x))
            for start in range(0, len(unique), block):
                stop = min(start + block, len(unique))
                sim = buffer[: stop - start]
                sim[:] = 0.0
                self._rows(cast(tuple, self._predict_lists), unique[start:stop], False, sim)
                lo, hi = np.searchsorted(sorted_inverse, [start, stop])
                pairs = order[lo:hi]
                est[pairs] = self._predict(xs[pairs], ys[pairs], sim, inverse[pairs] - start)
        return np.clip(est, self.scale_.low, self.scale_.high) if self.clip else est

    def _predict(self, xs: np.ndarray, ys: np.ndarray, sim: np.ndarray, sim_row: np.ndarray) -> np.ndarray:
        y_ptr, y_idx, y_val, _ = self._y_lists
        small = numpy_pays(len(xs) * int(self.k)) if _NUMPY is None else _NUMPY
        return (_predict_numpy if small else _predict)(
            xs,
            ys,
            sim,
            sim_row,
            y_ptr,
            y_idx,
            y_val,
            self.means_,
            bool(self.means),
            self._known_x,
            self._known_y,
            int(self.k),
            int(self.min_k),
            self.global_mean_,
        )

    def score_operands(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """(A, B) with ``score(users) = A[users] @ B`` (CSR, indices sorted): the rating weights and the
        neighbourhoods (item-based), the neighbourhoods and the rating weights (user-based).
        :func:`~receval.recommenders.recommend` ranks from them without score rows.

        Returns
        -------
        tuple of scipy.sparse.csr_matrix

        Examples
        --------
        >>> from receval import Interactions
        >>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 2, 1], [5, 3, 4, 2, 4])
        >>> model = ItemKNN(k=2).fit(train)
        >>> a, b = model.score_operands()
        >>> bool(np.allclose((a[[2, 0]] @ b).toarray(), model.score([2, 0])))
        True
        """
        self._check_fitted()
        if self.user_based:
            return self.neighbours_, self._weights
        return self._weights, self.neighbours_

    def score(self, users: np.ndarray) -> np.ndarray:
        """Top-N scores: similarity-weighted sums over the fixed k-neighbourhoods (``vector-cosine`` by default).

        Returns
        -------
        numpy.ndarray
            float64, (len(users), n_items), a fresh array.
        """
        users = self._check_users(users)
        a, b = self.score_operands()
        out = np.zeros((len(users), b.shape[1]))
        _score_rows(users, a.indptr, a.indices, a.data, b.indptr, b.indices, b.data, out)
        return out

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at ``items[r]`` of user ``users[r]`` only (the same bits), no full score row kept.

        Returns
        -------
        numpy.ndarray
            float64, shaped like ``items``.

        Examples
        --------
        >>> from receval import Interactions
        >>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 2, 1], [5, 3, 4, 2, 4])
        >>> model = ItemKNN(k=2).fit(train)
        >>> candidates = np.array([[2, 0], [1, 1]])
        >>> model.score_items([2, 0], candidates).round(3).tolist()
        [[0.0, 1.874], [2.343, 2.343]]
        >>> bool(np.array_equal(model.score_items([2, 0], candidates), model.score([2, 0])[[[0], [1]], candidates]))
        True
        """
        users, items = self._check_candidates(users, items)
        a, b = self.score_operands()
        out = np.empty(items.shape)
        operands = (a.indptr, a.indices, a.data, b.indptr, b.indices, b.data)
        _score_candidates(users, *operands, b.shape[1], items, out, _chunks())
        return out


class UserKNN(_KNN):
    """User-based kNN (similar users' ratings of the item); see the module docstring.

    Examples
    --------
    >>> from receval import Interactions
    >>> train = Interactions.from_arrays([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 1, 2], [5, 3, 4, 2, 1, 4])
    >>> UserKNN(k=5).fit(train).score([0]).round(2).tolist()  # ranking: vector-cosine neighbours
    [[3.99, 2.12, 0.5]]
    >>> UserKNN(k=5, similarity="pearson").fit(train).score([0]).round(2).tolist()
    [[4.0, 2.0, 0.0]]
    """

    user_based = True


class ItemKNN(_KNN):
    """Item-based kNN (the user's ratings of similar items); see the module docstring.

    Examples
    --------
    >>> from receval import Interactions
    >>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 1, 1], [5, 3, 4, 2, 4])
    >>> ItemKNN(k=5, similarity="cosine").fit(train).score([2]).round(3).tolist()
    [[3.985, 0.0]]
    """

    user_based = False
