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

``barrier`` is the paper's Eq. 8 (§3.3), the link between coherence and the magic
barrier: the attribute space is the times at which the user rated, and
``gamma_{u,t} = sum_i -(mu_hat_ui - r^t_ui)^2`` over the items rated at time ``t``,
``mu_hat_ui`` being the mean of every rating the user gave item ``i``. Then
``C_u = sum_t sum_i (mu_hat_ui - r^t_ui)^2`` is the user's sum of squared deviations of
repeated ratings from their pair means: ``m |X_u| B_hat_u^2`` when each of the user's
``|X_u|`` pairs is rated ``m`` times (Algorithm 1's per-user barrier, ``ddof=0``), so it
grows with the barrier (a positive correlation, where Table 1's functions correlate
negatively). It reads the repeated ratings themselves, never a deduplicated copy, and
needs no item attributes; grouping the rows by their time does not change the sum, so
data without timestamps (each row one rating occasion) gives the same value. A user
without a repeated pair has no estimate (NaN), as in the per-user barrier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from receval._jit import njit
from receval.data.interactions import Interactions
from receval.errors import DataError

__all__ = [
    "ALL_GAMMAS",
    "BASELINES",
    "EQ8",
    "GAMMAS",
    "KEEPS",
    "Coherence",
    "barrier_validation",
    "coherence",
    "coherence_all",
    "coherence_barrier_correlation",
]

GAMMAS: tuple[str, ...] = ("entropy", "kld", "mean", "wmean", "std", "wstd", "size")
"""The functions of the paper's Table 1, over item attributes."""
EQ8 = "barrier"
"""The paper's Eq. 8: coherence over the times of a user's repeated ratings (module docstring)."""
ALL_GAMMAS: tuple[str, ...] = (*GAMMAS, EQ8)
"""Every coherence function :func:`coherence` computes."""
BASELINES: tuple[str, ...] = ("random", "n_ratings", "mean_rating")
"""The predictors of the per-user barrier the paper's Table 2 compares coherence with."""
Keep = Literal["first", "last", "mean"]
KEEPS: tuple[Keep, ...] = ("first", "last", "mean")
"""How a repeated pair is reduced to one rating for Table 1's functions (:meth:`Interactions.deduplicate`)."""


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

    For ``gamma="barrier"`` (Eq. 8) ``n_attributed`` counts the user's ratings (each
    has its time), ``n_multi`` the user's pairs rated at least twice, and
    ``n_unattributed`` is 0.
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


def _eq8(data: Interactions) -> Coherence:
    """Eq. 8: per user, the sum over rating times and items of ``(mu_hat_ui - r^t_ui)^2`` (module docstring)."""
    from receval.stats.barrier import pair_statistics

    if data.n_ratings == 0:
        raise DataError("coherence needs training ratings; the data set is empty")
    pairs = pair_statistics(data, ddof=0)  # variance * m = the pair's sum of squared deviations
    if pairs.empty:
        raise DataError(
            f"coherence gamma={EQ8!r} (Eq. 8) sums the deviations of repeated ratings of a (user, item) pair "
            f"from their mean, and every one of the {pairs.attrs['n_single']} pairs of this data set is rated "
            "once; give data that keeps re-ratings (e.g. receval.data.synthetic.generate(..., reratings=3)), "
            "or a gamma over item attributes such as wstd",
            parameters=["gamma"],
        )
    users = pairs["user"].to_numpy()
    squares = pairs["m"].to_numpy() * pairs["variance"].to_numpy()
    total = np.bincount(users, weights=squares, minlength=data.n_users)
    n_multi = np.bincount(users, minlength=data.n_users).astype(np.int64)
    defined = n_multi > 0
    n_rated = np.bincount(data.users, minlength=data.n_users).astype(np.int64)
    return Coherence(np.where(defined, total, np.nan), defined, EQ8, data.user_ids, n_rated, n_multi, 0)


def coherence(train: Interactions, gamma: str = "wstd", *, keep: Keep = "last") -> Coherence:
    """User coherence ``C_u^gamma = -sum_a gamma_{u,a}`` for every user, from training data.

    Parameters
    ----------
    train
        Training interactions with item attributes (``train.aspects``). Compute it on
        training data only: test ratings must not decide who is "difficult".
    gamma
        One of ``entropy, kld, mean, wmean, std, wstd, size`` (Table 1, over item
        attributes) or ``barrier`` (Eq. 8, over the times of repeated ratings; no
        attributes needed; module docstring).
    keep
        How repeated ratings of a pair are reduced to one before a Table 1 function
        (``Interactions.deduplicate``); ``barrier`` reads every repeated rating.

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

    Eq. 8 on repeated ratings: user 1 rated item x at three times (1, 2, 6: mean 3) and
    item y once; user 2 rated x twice alike.

    >>> again = Interactions.from_arrays([1, 1, 1, 1, 2, 2], ["x", "x", "x", "y", "x", "x"], [1, 2, 6, 4, 5, 5],
    ...                                  timestamps=[10, 20, 30, 10, 10, 20])
    >>> coherence(again, "barrier").values.tolist()  # (1-3)^2 + (2-3)^2 + (6-3)^2 = 14
    [14.0, 0.0]
    """
    if gamma == EQ8:
        return _eq8(train)
    if gamma not in GAMMAS:
        raise DataError(f"unknown coherence function gamma={gamma!r}; choose one of {', '.join(ALL_GAMMAS)}")
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
    bad = [g for g in gammas if g not in ALL_GAMMAS]
    if bad:
        raise DataError(f"unknown coherence function(s) {bad}; choose from {', '.join(ALL_GAMMAS)}")
    out: dict[str, Coherence] = {}
    st = None
    for g in gammas:
        if g == EQ8:
            out[g] = _eq8(train)
            continue
        if st is None:
            st = _aspect_stats(train, keep)
        out[g] = _to_result(st, train, g)
    return out


def coherence_barrier_correlation(
    train: Interactions,
    barrier: Any,
    *,
    gammas: tuple[str, ...] | list[str] = GAMMAS,
    seed: int | np.random.Generator = 0,
    keep: Keep = "first",
) -> pd.DataFrame:
    """Spearman and Pearson correlation of each coherence function with the per-user barrier (Table 2).

    Adds the paper's baselines (:data:`BASELINES`): ``random`` (uniform draws, seeded),
    ``n_ratings`` and ``mean_rating`` of the user in ``train``. More coherent users
    (higher ``C``) should have a lower barrier, so Table 1's good functions correlate
    negatively; Eq. 8 (``barrier``) grows with the barrier and correlates positively.

    Parameters
    ----------
    train
        Training interactions with item attributes (ids shared with the barrier's data).
        When it keeps repeated ratings, Table 1's functions and the baselines read one
        rating per pair (``keep``) and Eq. 8 reads them all.
    barrier
        A :class:`~receval.stats.barrier.MagicBarrier` or a Series of per-user barriers
        keyed by original user id.
    gammas
        Coherence functions (:data:`ALL_GAMMAS`); ``barrier`` needs repeated ratings.
    seed
        Seed or generator of the ``random`` baseline.
    keep
        The rating of a repeated pair that stands for it: ``first`` (default) as in the
        paper, where coherence comes from the ratings in the system and the barrier
        adds opinions collected later; ``last`` or ``mean``.

    Returns
    -------
    DataFrame indexed by predictor (``gammas``, then :data:`BASELINES`) with columns
    ``spearman``, ``spearman_p``, ``pearson``, ``pearson_p``, ``n_users`` (users with both
    values defined; NaN correlations where fewer than 3 or a constant column).

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.stats.barrier import magic_barrier
    >>> data = generate(n_users=60, n_items=40, n_ratings=900, n_aspects=4, reratings=2, seed=0)
    >>> table = coherence_barrier_correlation(data, magic_barrier(data, n_bootstrap=0), gammas=["wstd", "barrier"])
    >>> table.index.tolist(), int(table.loc["wstd", "n_users"])
    (['wstd', 'barrier', 'random', 'n_ratings', 'mean_rating'], 60)
    >>> round(float(table.loc["barrier", "spearman"]), 2)  # Eq. 8 = 2 |X_u| B_u^2 here: |X_u| differs by user
    0.82
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
    once = train.deduplicate(keep) if train.has_duplicates else train  # same users: deduplicating keeps each pair
    rng = np.random.default_rng(seed)
    predictors["random"] = rng.random(train.n_users)
    cnt = np.bincount(once.users, minlength=train.n_users).astype(np.float64)
    predictors["n_ratings"] = cnt
    with np.errstate(invalid="ignore", divide="ignore"):
        predictors["mean_rating"] = np.bincount(once.users, weights=once.ratings, minlength=train.n_users) / cnt
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


def barrier_validation(
    data: Interactions,
    *,
    gammas: tuple[str, ...] | list[str] = ALL_GAMMAS,
    keep: Keep = "first",
    ddof: Literal[0, 1] = 0,
    seed: int = 0,
) -> pd.DataFrame:
    """The paper's validation table on one data set with repeated ratings: coherence and baselines vs the barrier.

    The per-user magic barrier comes from the repeated ratings
    (:func:`~receval.stats.barrier.magic_barrier`, no bootstrap); the predictors from
    :func:`coherence_barrier_correlation` on the same data.

    Parameters
    ----------
    data
        Interactions that keep repeated ratings of (user, item) pairs, with item
        attributes unless ``gammas`` is only ``["barrier"]``.
    gammas, keep, seed
        As in :func:`coherence_barrier_correlation`.
    ddof
        The barrier's estimator: 0 the paper's ``1/m``, 1 the unbiased ``1/(m-1)``.

    Returns
    -------
    DataFrame
        :func:`coherence_barrier_correlation`'s table; ``attrs["barrier"]`` holds the
        barrier's :meth:`~receval.stats.barrier.MagicBarrier.summary`, ``attrs["keep"]``
        the rating that stood for a repeated pair.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=40, n_items=30, n_ratings=500, n_aspects=3, reratings=2, seed=1)
    >>> table = barrier_validation(data, gammas=["wstd", "barrier"])
    >>> table.index.tolist(), table.attrs["barrier"]["n_users"]
    (['wstd', 'barrier', 'random', 'n_ratings', 'mean_rating'], 40)
    """
    from receval.stats.barrier import magic_barrier
    from receval.validate import check_seed

    seed = check_seed(seed)
    mb = magic_barrier(data, ddof=ddof, n_bootstrap=0)  # the one-line error for data without repeats
    table = coherence_barrier_correlation(data, mb, gammas=gammas, seed=seed, keep=keep)
    table.attrs["barrier"] = mb.summary()
    table.attrs["keep"] = keep
    return table
