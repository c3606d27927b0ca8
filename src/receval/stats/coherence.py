"""User coherence on an item-attribute space (Said & Bellogín, UMUAI 2018, §3).

``C_u^gamma = - sum_a gamma_{u,a}`` where ``gamma_{u,a}`` is a statistic of ``u_a``, the
ratings the user gave to items with attribute ``a`` (e.g. genre). The seven functions
of the paper's Table 1:

===========  ===============================================
``entropy``  ``p(a|u) log p(a|u)``
``kld``      ``p(a|u) log(p(a|u) / p(a))``
``mean``     ``mu(u_a)``
``wmean``    ``mu(u_a) |u_a| / |u_A|``
``std``      ``sigma(u_a)``
``wstd``     ``sigma(u_a) |u_a| / |u_A|``
``size``     ``|u_a|``
===========  ===============================================

Conventions (each reproduces the paper's worked example, see the tests):

* ``sigma`` is the sample standard deviation (``n - 1``). The standard deviation of a
  single rating is taken as 0, which in a sum is the same as skipping the attribute:
  a user whose every attribute holds one rating gets ``C = 0`` for ``std``/``wstd``
  (``n_multi`` in :class:`Coherence` tells how many attributes had two or more ratings).
* ``|u_A|`` counts the user's rated items that have at least one attribute (an item in
  two genres counts once); ratings of items without attributes enter no ``u_a`` and
  are counted in ``n_unattributed``.
* ``p(a|u) = sum(u_a) / sum_b sum(u_b)`` and ``p(a) = sum_u sum(u_a) / sum_{u,b} sum(u_b)``
  normalise rating values per user and over the community; ``0 log 0 = 0``; natural log.
  They need non-negative ratings (a ``DataError`` says so otherwise).
* Users without any rating of an attributed item (and, for entropy and KLD, users whose
  ratings sum to 0) have no coherence: NaN, and ``defined`` is False. Summaries and
  partitions leave them out and count them; nothing averages a NaN.

Everything is sparse algebra over all users at once: a users x items rating matrix
times the items x attributes matrix gives the per-(user, attribute) counts and sums.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numba import njit

from receval.data.interactions import Interactions
from receval.errors import DataError

__all__ = ["GAMMAS", "Coherence", "coherence", "coherence_all", "coherence_barrier_correlation"]

GAMMAS: tuple[str, ...] = ("entropy", "kld", "mean", "wmean", "std", "wstd", "size")
Keep = Literal["first", "last", "mean"]


@dataclass(frozen=True)
class Coherence:
    """Coherence of every user of a data set's id space for one ``gamma``.

    Attributes
    ----------
    values : ndarray of float64, one per user index (NaN where not ``defined``)
    defined : ndarray of bool
    gamma : str
    user_ids : ndarray (original ids, aligned with ``values``)
    n_attributed : ndarray of int, ``|u_A|`` per user
    n_multi : ndarray of int, attributes with at least two of the user's ratings
    n_unattributed : int, training ratings of items without any attribute
    """

    values: np.ndarray
    defined: np.ndarray
    gamma: str
    user_ids: np.ndarray
    n_attributed: np.ndarray
    n_multi: np.ndarray
    n_unattributed: int

    def to_series(self) -> pd.Series:
        """Coherence of the defined users, indexed by original user id."""
        return pd.Series(self.values[self.defined], index=pd.Index(self.user_ids[self.defined], name="user"))

    def summary(self) -> dict[str, Any]:
        """JSON-ready statistics over the defined users (undefined ones are counted, not averaged)."""
        v = self.values[self.defined]
        stats = {"mean": np.nan, "std": np.nan, "min": np.nan, "median": np.nan, "max": np.nan}
        if v.size:
            stats = {
                "mean": float(v.mean()),
                "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
                "min": float(v.min()),
                "median": float(np.median(v)),
                "max": float(v.max()),
            }
        return {
            "gamma": self.gamma,
            "n_users": int(self.defined.sum()),
            "n_undefined": int((~self.defined).sum()),
            "n_unattributed_ratings": int(self.n_unattributed),
            **stats,
        }


@dataclass(frozen=True)
class _AspectStats:
    """Per (user, attribute) counts and sums on the sparsity pattern of R @ A."""

    rows: np.ndarray  # user index of each (user, attribute) entry
    cols: np.ndarray  # attribute index
    n: np.ndarray  # |u_a|
    mean: np.ndarray  # mu(u_a)
    var: np.ndarray  # sample variance (0 for a single rating)
    raw_sum: np.ndarray  # sum of the raw ratings in u_a
    n_attributed: np.ndarray  # |u_A| per user
    n_unattributed: int
    n_users: int
    n_aspects: int
    ratings_nonnegative: bool


@njit(cache=True)
def _group_by_user(users, items, ratings, n_users, n_items):  # pragma: no cover - compiled
    """Counting sort of the rows by user (CSR arrays) and whether a (user, item) pair repeats."""
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    for u in users:
        indptr[u + 1] += 1
    for u in range(n_users):
        indptr[u + 1] += indptr[u]
    fill = indptr[:-1].copy()
    indices = np.empty(len(users), dtype=np.int32)
    data = np.empty(len(users), dtype=np.float64)
    for j in range(len(users)):
        u = users[j]
        indices[fill[u]] = items[j]
        data[fill[u]] = ratings[j]
        fill[u] += 1
    seen = np.full(n_items, -1, dtype=np.int64)  # last user that rated each item
    repeated = False
    for u in range(n_users):
        for k in range(indptr[u], indptr[u + 1]):
            if seen[indices[k]] == u:
                repeated = True
            seen[indices[k]] = u
    return indptr, indices, data, repeated


def _rating_matrix(data: Interactions) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Users x items CSR arrays of the ratings (float64, rows in data order) and whether pairs repeat."""
    return _group_by_user(data.users, data.items, data.ratings.astype(np.float64), data.n_users, data.n_items)


def _row_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each CSR row (rows may be empty)."""
    c = np.concatenate([[0.0], np.cumsum(values, dtype=np.float64)])
    return c[indptr[1:]] - c[indptr[:-1]]


def _aspect_stats(data: Interactions, keep: Keep) -> _AspectStats:
    if data.aspects is None or data.aspects.shape[1] == 0:
        raise DataError(
            "coherence needs item attributes (e.g. genres): load the data with an item->attribute table "
            "(item_aspects=)",
            parameters=["item_aspects"],
        )
    if data.n_ratings == 0:
        raise DataError("coherence needs training ratings; the data set is empty")
    indptr, indices, r, repeated = _rating_matrix(data)
    if repeated:
        data = data.deduplicate(keep)
        indptr, indices, r, _ = _rating_matrix(data)
    n_u = data.n_users
    shape = (n_u, data.n_items)
    assert data.aspects is not None  # checked above; deduplicate keeps the item attributes
    a = data.aspects.astype(np.float64).tocsr()
    a.data[:] = 1.0
    attributed = (np.diff(a.indptr) > 0)[indices]
    n_attributed = np.rint(_row_sums(attributed, indptr)).astype(np.int64)
    # centring on one of the user's own ratings keeps the sums small (little cancellation
    # in the variance) and exact for ratings on a grid
    ref = r[np.minimum(indptr[:-1], len(r) - 1)]
    dev = r - np.repeat(ref, np.diff(indptr))
    # one product gives counts and sums: real part 1, imaginary part the deviation (never 0,
    # so no (user, attribute) entry is dropped from the pattern)
    first = sp.csr_matrix((1.0 + 1j * dev, indices, indptr), shape=shape) @ a.astype(np.complex128)
    # sums of squares, shifted by 1 per rating for the same reason
    second = sp.csr_matrix((dev * dev + 1.0, indices, indptr), shape=shape) @ a
    if not (np.array_equal(first.indptr, second.indptr) and np.array_equal(first.indices, second.indices)):
        raise AssertionError("internal error: per-attribute sums lost their common sparsity pattern")
    n = first.data.real
    d1 = first.data.imag
    d2 = second.data - n
    rows = np.repeat(np.arange(n_u), np.diff(first.indptr))
    mean = ref[rows] + d1 / n
    ss = d2 - d1 * d1 / n
    ss[ss <= 16 * np.finfo(float).eps * d2] = 0.0  # rounding residue of a constant group
    var = np.where(n > 1, ss / np.maximum(n - 1, 1), 0.0)
    return _AspectStats(
        rows=rows,
        cols=first.indices.astype(np.int64),
        n=n,
        mean=mean,
        var=var,
        raw_sum=mean * n,
        n_attributed=n_attributed,
        n_unattributed=int(len(r) - n_attributed.sum()),
        n_users=n_u,
        n_aspects=a.shape[1],
        ratings_nonnegative=bool(r.min() >= 0),
    )


def _gamma_values(st: _AspectStats, gamma: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-user sums of gamma_{u,a} over attributes, and the defined mask."""
    defined = st.n_attributed > 0
    weight = st.n / np.maximum(st.n_attributed[st.rows], 1)
    if gamma in ("entropy", "kld"):
        if not st.ratings_nonnegative:
            raise DataError(
                f"coherence gamma={gamma!r} normalises rating values into probabilities and needs ratings >= 0; "
                "shift the scale (e.g. subtract its minimum) or use std/wstd"
            )
        total_u = np.bincount(st.rows, weights=st.raw_sum, minlength=st.n_users)
        defined &= total_u > 0
        p_au = st.raw_sum / np.where(total_u[st.rows] > 0, total_u[st.rows], 1.0)
        pos = p_au > 0
        logp = np.zeros_like(p_au)
        logp[pos] = np.log(p_au[pos])
        if gamma == "kld":
            col_tot = np.bincount(st.cols, weights=st.raw_sum, minlength=st.n_aspects)
            p_a = col_tot / max(col_tot.sum(), np.finfo(float).tiny)  # all-zero data: every user is undefined
            logp[pos] -= np.log(p_a[st.cols[pos]])
        g = p_au * logp
    elif gamma == "mean":
        g = st.mean
    elif gamma == "wmean":
        g = st.mean * weight
    elif gamma == "std":
        g = np.sqrt(st.var)
    elif gamma == "wstd":
        g = np.sqrt(st.var) * weight
    elif gamma == "size":
        g = st.n
    else:
        raise DataError(f"unknown coherence function gamma={gamma!r}; choose one of {', '.join(GAMMAS)}")
    total = np.bincount(st.rows, weights=g, minlength=st.n_users)
    values = np.where(defined, -total, np.nan)
    return values, defined


def coherence(train: Interactions, gamma: str = "wstd", *, keep: Keep = "last") -> Coherence:
    """User coherence ``C_u^gamma = -sum_a gamma_{u,a}`` for every user, from training data.

    Parameters
    ----------
    train
        Training interactions with item attributes (``train.aspects``). Compute it on
        training data only: test ratings must not decide who is "difficult".
    gamma
        One of ``entropy, kld, mean, wmean, std, wstd, size`` (module docstring).
    keep
        How repeated ratings of a pair are reduced to one first (``Interactions.deduplicate``).

    Returns
    -------
    Coherence
        One value per user index of ``train`` (NaN where undefined: a user without
        attributed ratings), with the counts behind it.

    Examples
    --------
    The paper's worked example (Figure 1): two users rate six items, one of which is
    both Action and Horror.

    >>> import pandas as pd
    >>> ratings = pd.DataFrame({
    ...     "user": [1] * 6 + [2] * 6,
    ...     "item": ["a1", "a2", "ah", "h", "c1", "c2"] * 2,
    ...     "rating": [4, 4, 3, 3, 1, 2, 4, 3, 5, 2, 1, 5]})
    >>> genres = pd.DataFrame({"item": ["a1", "a2", "ah", "ah", "h", "c1", "c2"],
    ...                        "aspect": ["Action", "Action", "Action", "Horror", "Horror", "Comedy", "Comedy"]})
    >>> data = Interactions.from_frame(ratings, item_aspects=genres)
    >>> coherence(data, "std").values.round(2).tolist(), coherence(data, "wstd").values.round(2).tolist()
    ([-1.28, -5.95], [-0.52, -2.15])
    """
    if gamma not in GAMMAS:
        raise DataError(f"unknown coherence function gamma={gamma!r}; choose one of {', '.join(GAMMAS)}")
    st = _aspect_stats(train, keep)
    return _to_result(st, train, gamma)


def _to_result(st: _AspectStats, train: Interactions, gamma: str) -> Coherence:
    values, defined = _gamma_values(st, gamma)
    n_multi = np.bincount(st.rows, weights=st.n > 1, minlength=st.n_users).astype(np.int64)
    return Coherence(values, defined, gamma, train.user_ids, st.n_attributed, n_multi, st.n_unattributed)


def coherence_all(
    train: Interactions, gammas: tuple[str, ...] | list[str] = GAMMAS, *, keep: Keep = "last"
) -> dict[str, Coherence]:
    """Several coherence functions sharing one pass of sparse products.

    Returns
    -------
    dict of str to Coherence
        One :class:`Coherence` per name of ``gammas``, as :func:`coherence` gives it.

    Examples
    --------
    >>> from receval.data.interactions import Interactions
    >>> import pandas as pd
    >>> d = Interactions.from_frame(
    ...     pd.DataFrame({"user": [0, 0, 0], "item": [0, 1, 2], "rating": [1, 3, 5]}),
    ...     item_aspects=pd.DataFrame({"item": [0, 1, 2], "aspect": ["x", "x", "y"]}))
    >>> {g: float(c.values[0]) for g, c in coherence_all(d, ["std", "mean", "size"]).items()}
    {'std': -1.4142135623730951, 'mean': -7.0, 'size': -3.0}
    """
    bad = [g for g in gammas if g not in GAMMAS]
    if bad:
        raise DataError(f"unknown coherence function(s) {bad}; choose from {', '.join(GAMMAS)}")
    st = _aspect_stats(train, keep)
    return {g: _to_result(st, train, g) for g in gammas}


def coherence_barrier_correlation(
    train: Interactions,
    barrier: Any,
    *,
    gammas: tuple[str, ...] | list[str] = GAMMAS,
    seed: int | np.random.Generator = 0,
    keep: Keep = "last",
) -> pd.DataFrame:
    """Spearman and Pearson correlation of each coherence function with the per-user barrier.

    Adds the paper's baselines (Table 2): ``random`` (uniform draws, seeded), ``n_ratings``
    and ``avg_rating`` of the user in ``train``. More coherent users (higher ``C``) should
    have a lower barrier, so good coherence functions correlate negatively.

    Parameters
    ----------
    train
        Training interactions with item attributes (ids shared with the barrier's data).
    barrier
        A :class:`~receval.stats.barrier.MagicBarrier` or a Series of per-user barriers
        keyed by original user id.

    Returns
    -------
    DataFrame indexed by predictor with columns ``spearman``, ``spearman_p``, ``pearson``,
    ``pearson_p``, ``n_users`` (users with both values defined).

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.stats.barrier import magic_barrier
    >>> data = generate(n_users=60, n_items=40, n_ratings=900, n_aspects=4, reratings=2, seed=0)
    >>> table = coherence_barrier_correlation(data, magic_barrier(data, n_bootstrap=0), gammas=["wstd", "size"])
    >>> table.index.tolist(), int(table.loc["wstd", "n_users"])
    (['wstd', 'size', 'random', 'n_ratings', 'avg_rating'], 60)
    """
    from scipy import stats

    from receval.stats.barrier import MagicBarrier

    b = barrier.users["barrier"] if isinstance(barrier, MagicBarrier) else pd.Series(barrier, dtype=float)
    b = b.dropna()
    idx = train.user_index(b.index.to_numpy(), strict=False)
    if (idx < 0).any():
        missing = b.index[idx < 0][0]
        raise DataError(f"user {missing!r} of the barrier is not in the training data's id space")
    target = np.full(train.n_users, np.nan)
    target[idx] = b.to_numpy()
    predictors: dict[str, np.ndarray] = {g: c.values for g, c in coherence_all(train, gammas, keep=keep).items()}
    rng = np.random.default_rng(seed)
    predictors["random"] = rng.random(train.n_users)
    cnt = np.bincount(train.users, minlength=train.n_users).astype(np.float64)
    predictors["n_ratings"] = cnt
    with np.errstate(invalid="ignore", divide="ignore"):
        predictors["avg_rating"] = np.bincount(train.users, weights=train.ratings, minlength=train.n_users) / cnt
    rows = []
    for name, x in predictors.items():
        ok = np.isfinite(x) & np.isfinite(target)
        if name == "n_ratings":
            ok &= cnt > 0
        n = int(ok.sum())
        if n < 3 or np.ptp(x[ok]) == 0 or np.ptp(target[ok]) == 0:
            rows.append((name, np.nan, np.nan, np.nan, np.nan, n))
            continue
        sr = stats.spearmanr(x[ok], target[ok])
        pr = stats.pearsonr(x[ok], target[ok])
        rows.append((name, float(sr.statistic), float(sr.pvalue), float(pr.statistic), float(pr.pvalue), n))
    return pd.DataFrame(
        rows, columns=["predictor", "spearman", "spearman_p", "pearson", "pearson_p", "n_users"]
    ).set_index("predictor")
