"""Many systems at once: a randomised Tukey HSD over users, and Friedman/Nemenyi over data sets.

**Randomised Tukey HSD** (Carterette, "Multiple testing in statistical analysis of
systems-based information retrieval experiments", TOIS 2012): ``values`` is a users x
systems matrix. Under the null hypothesis that no system differs, each user's k values
are exchangeable between systems, so each resample permutes the values *within every
user* and records the range (max minus min) of the k system means. A pair's p-value is the
share of resamples whose range reaches the pair's observed ``|mean_i - mean_j|``: every
pair is tested against the distribution of the largest difference, so one family-wise
error rate holds over all ``k (k - 1) / 2`` pairs without a further correction.

The permutations come from a counter-based generator: one splitmix64 word per (seed, resample,
user), so the same seed gives the same bits on any number of threads. Up to 14 systems the
word's top 50 bits, read as a fraction, pick by multiply-shift the three parts of a uniform
permutation — which ``k // 2`` systems take the first ``k // 2`` slots (one of ``C(k, k // 2)``
subsets), their order and the order of the rest — from small tables, a bijection onto all
``k!`` permutations; beyond 14 systems (where those tables outgrow the cache) a Fisher–Yates
shuffle draws from the word and its xorshift64* successors, 32 bits per draw. The numpy
formulation (:func:`tukey_ranges_numpy`, for small inputs and as the reference) and the
compiled kernels give the same ranges.

**Friedman test with Nemenyi post-hoc** (Demšar, "Statistical comparisons of classifiers
over multiple data sets", JMLR 2006): ``scores`` is a data sets (or folds, windows) x
systems matrix; systems are ranked within each data set (1 = best, ties averaged); the
Friedman statistic tests whether the average ranks differ; the Nemenyi critical
difference ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` (``q_alpha`` the studentized range
quantile over ``sqrt(2)``) says which pairs do.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> values = rng.uniform(0, 1, (300, 3)) + np.array([0.0, 0.0, 0.2])
>>> r = tukey_hsd(values, ["a", "b", "c"], n_resamples=2000, seed=1)
>>> r.pvalues.round(3).tolist()
[[1.0, 0.75, 0.0], [0.75, 1.0, 0.0], [0.0, 0.0, 1.0]]
>>> f = friedman_nemenyi(np.array([[0.9, 0.8, 0.7], [0.8, 0.9, 0.6], [0.9, 0.7, 0.5], [0.95, 0.9, 0.6]]), list("xyz"))
>>> f.avg_ranks.tolist(), round(f.statistic, 3), round(f.cd, 3)
([1.25, 1.75, 3.0], 6.5, 1.657)
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from receval._jit import njit, numpy_pays, prange
from receval.errors import ConfigError, DataError
from receval.stats.power import check_alpha

__all__ = [
    "FriedmanResult",
    "TwoLevelInterval",
    "TukeyResult",
    "friedman_nemenyi",
    "tukey_hsd",
    "tukey_ranges",
    "tukey_ranges_numpy",
    "two_level_bootstrap",
    "wide_values",
]

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_STAR = np.uint64(0x2545F4914F6CDD1D)
_LOW32 = np.uint64(0xFFFFFFFF)
_S12, _S25, _S27, _S30, _S27B, _S31, _S32 = (np.uint64(s) for s in (12, 25, 27, 30, 27, 31, 32))
_TABLE_SYSTEMS = 14
"""Systems up to which a permutation is read from tables: at 14, C(14, 7) = 3,432 subsets and 7! = 5,040
orders (83 KB, within the cache) and every table size below 2**14, so a 50-bit fraction times it stays in 64 bits."""
_FRACTION = np.uint64(50)
_FRACTION_MASK = np.uint64((1 << 50) - 1)
_S14 = np.uint64(14)


def _splitmix(z: np.ndarray) -> np.ndarray:
    """splitmix64's output function (vectorised; uint64 arithmetic wraps)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27B)) * _MIX2
    return z ^ (z >> _S31)


def _key(seed: int) -> np.uint64:
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed must be an integer >= 0, got {seed!r}")
    return np.uint64(_splitmix(np.array([np.uint64(int(seed) % 2**64) + _GOLDEN], dtype=np.uint64))[0])


@functools.cache
def _tables(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A permutation of ``k`` as three table rows: a subset, its order, the rest's order (k <= 14).

    ``subsets[s]`` holds the ``h = k // 2`` columns of subset ``s`` (lexicographic), then the others, both
    ascending; ``first[a]`` is an order of the slots ``0 .. h - 1`` and ``second[b]`` of ``h .. k - 1``.
    Slot ``t`` takes column ``subsets[s, first[a, t]]`` (``t < h``) or ``subsets[s, second[b, t - h]]``:
    each of the ``k!`` permutations is one ``(s, a, b)``.

    >>> subsets, first, second = _tables(3)
    >>> subsets.tolist(), first.tolist(), second.tolist()
    ([[0, 1, 2], [1, 0, 2], [2, 0, 1]], [[0]], [[1, 2], [2, 1]])
    """
    h = k // 2
    rows = [[*c, *(x for x in range(k) if x not in c)] for c in itertools.combinations(range(k), h)]
    subsets = np.array(rows, dtype=np.uint8)
    first = np.array(list(itertools.permutations(range(h))), dtype=np.uint8).reshape(-1, h)
    second = np.array(list(itertools.permutations(range(h, k))), dtype=np.uint8)
    return subsets, first, second


def _slots(key: np.uint64, r: int, n: int, k: int) -> np.ndarray:
    """The column each of the ``k`` slots takes for every user in resample ``r`` (n x k; numpy, the reference)."""
    users = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        state = _splitmix(key + np.uint64(r) * np.uint64(n) + users)
        if k <= _TABLE_SYSTEMS:
            subsets, first, second = _tables(k)
            f = state >> _S14
            picks = []
            for size in (len(subsets), len(first), len(second)):
                f = f * np.uint64(size)
                picks.append((f >> _FRACTION).astype(np.int64))
                f = f & _FRACTION_MASK
            s, a, b = picks
            return np.hstack([subsets[s[:, None], first[a]], subsets[s[:, None], second[b]]]).astype(np.int64)
        rows = np.arange(n)
        word = state
        perm = np.tile(np.arange(k), (n, 1))
        for t in range(k - 1):
            i = k - 1 - t
            if t > 0 and t % 2 == 0:
                state = state ^ (state >> _S12)
                state = state ^ (state << _S25)
                state = state ^ (state >> _S27)
                word = state * _STAR
            half = (word >> _S32) if t % 2 == 0 else (word & _LOW32)
            j = ((half * np.uint64(i + 1)) >> _S32).astype(np.int64)
            pi, pj = perm[:, i].copy(), perm[rows, j]
            perm[:, i] = pj
            perm[rows, j] = pi
        return perm


def tukey_ranges_numpy(values: np.ndarray, n_resamples: int, seed: int = 0) -> np.ndarray:
    """The range (max - min) of the k column means after each of ``n_resamples`` within-user permutations (numpy).

    The reference formulation of :func:`tukey_ranges` (same generator, same bits up to summation order).

    >>> tukey_ranges_numpy(np.array([[1.0, 0.0], [1.0, 0.0]]), 4, seed=0).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    x = np.ascontiguousarray(values, dtype=np.float64)
    n, k = x.shape
    key = _key(seed)
    rows = np.arange(n)[:, None]
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        means = x[rows, _slots(key, r, n, k)].sum(axis=0) / n
        out[r] = means.max() - means.min()
    return out


@njit(cache=True, parallel=True)
def _table_kernel(
    x: np.ndarray, key: np.uint64, n_resamples: int, subsets: np.ndarray, first: np.ndarray, second: np.ndarray
) -> np.ndarray:  # pragma: no cover - compiled
    n, k = x.shape
    h = first.shape[1]
    sizes = (np.uint64(subsets.shape[0]), np.uint64(first.shape[0]), np.uint64(second.shape[0]))
    out = np.empty(n_resamples)
    m1, m2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    s14, s27, s30, s31 = np.uint64(14), np.uint64(27), np.uint64(30), np.uint64(31)
    fraction, mask = np.uint64(50), np.uint64((1 << 50) - 1)
    nn = np.uint64(n)
    # resamples in chunks (one per task), users in blocks that stay in cache while every resample of the chunk
    # walks them: the matrix is read once per chunk, not once per resample; each (resample, user) draws its own
    # counter-based word, so the order of the loops changes no bit. Reading the permutation from tables leaves
    # only loads and the sums' adds: about 1.4x faster than the Fisher-Yates shuffle, whose stores into the
    # user's row each wait on the draw before. Bounds: f < 2**50 before each pick, so (f * size) >> 50 < size,
    # and the tables hold slots below h (first), h .. k - 1 (second) and columns below k (subsets)
    chunk, block = 64, 1024
    for first_chunk in prange((n_resamples + chunk - 1) // chunk):
        r0 = first_chunk * chunk
        r1 = min(n_resamples, r0 + chunk)
        sums = np.zeros((r1 - r0, k))
        for u0 in range(0, n, block):
            u1 = min(n, u0 + block)
            for r in range(r0, r1):
                base = key + np.uint64(r) * nn
                row = sums[r - r0]
                for u in range(u0, u1):
                    z = base + np.uint64(u)
                    z = (z ^ (z >> s30)) * m1
                    z = (z ^ (z >> s27)) * m2
                    f = (z ^ (z >> s31)) >> s14
                    f = f * sizes[0]
                    s = np.int64(f >> fraction)
                    f = (f & mask) * sizes[1]
                    a = np.int64(f >> fraction)
                    f = (f & mask) * sizes[2]
                    b = np.int64(f >> fraction)
                    for t in range(h):
                        row[t] += x[u, subsets[s, first[a, t]]]
                    for t in range(k - h):
                        row[h + t] += x[u, subsets[s, second[b, t]]]
        _write_ranges(sums, out, r0, n)
    return out


@njit(cache=True)
def _write_ranges(sums: np.ndarray, out: np.ndarray, r0: int, n: int) -> None:  # pragma: no cover - compiled
    for r in range(sums.shape[0]):
        lo = sums[r, 0]
        hi = sums[r, 0]
        for c in range(1, sums.shape[1]):
            lo = min(lo, sums[r, c])
            hi = max(hi, sums[r, c])
        out[r0 + r] = (hi - lo) / n


@njit(cache=True, parallel=True)
def _shuffle_kernel(x: np.ndarray, key: np.uint64, n_resamples: int) -> np.ndarray:  # pragma: no cover - compiled
    n, k = x.shape
    out = np.empty(n_resamples)
    m1, m2, star, low = (
        np.uint64(0xBF58476D1CE4E5B9),
        np.uint64(0x94D049BB133111EB),
        np.uint64(0x2545F4914F6CDD1D),
        np.uint64(0xFFFFFFFF),
    )
    s12, s25, s27, s30, s31, s32 = (
        np.uint64(12),
        np.uint64(25),
        np.uint64(27),
        np.uint64(30),
        np.uint64(31),
        np.uint64(32),
    )
    nn = np.uint64(n)
    # resamples in chunks (one per task), users in blocks that stay in cache while every resample of the chunk
    # walks them: the matrix is read once per chunk, not once per resample; each (resample, user) draws its own
    # counter-based numbers, so the order of the loops changes no bit. The shuffle moves the user's values, not
    # indices: after step i, slot i holds its final value and is added at once (no index array to gather
    # through: about 1.7x faster than shuffling indices, with the same draws and sums). Two users are shuffled
    # side by side (two independent chains the core overlaps: about 1.2x); an odd block's last partner is zeros,
    # whose draws are never read and whose +0.0 changes no sum
    chunk, block = 64, 1024
    for first in prange((n_resamples + chunk - 1) // chunk):
        r0 = first * chunk
        r1 = min(n_resamples, r0 + chunk)
        sums = np.zeros((r1 - r0, k))
        v = np.empty(k)
        w = np.empty(k)
        for u0 in range(0, n, block):
            u1 = min(n, u0 + block)
            for r in range(r0, r1):
                base = key + np.uint64(r) * nn
                row = sums[r - r0]
                for u in range(u0, u1, 2):
                    z = base + np.uint64(u)
                    z = (z ^ (z >> s30)) * m1
                    z = (z ^ (z >> s27)) * m2
                    state = z ^ (z >> s31)
                    word = state
                    z = base + np.uint64(u + 1)
                    z = (z ^ (z >> s30)) * m1
                    z = (z ^ (z >> s27)) * m2
                    state2 = z ^ (z >> s31)
                    word2 = state2
                    paired = u + 1 < u1
                    for c in range(k):
                        v[c] = x[u, c]
                        w[c] = x[u + 1, c] if paired else 0.0
                    for t in range(0, k - 1, 2):  # two draws per 64-bit word: its high half, then its low half
                        if t > 0:
                            state = state ^ (state >> s12)
                            state = state ^ (state << s25)
                            state = state ^ (state >> s27)
                            word = state * star
                            state2 = state2 ^ (state2 >> s12)
                            state2 = state2 ^ (state2 << s25)
                            state2 = state2 ^ (state2 >> s27)
                            word2 = state2 * star
                        i = k - 1 - t
                        j = np.int64(((word >> s32) * np.uint64(i + 1)) >> s32)
                        j2 = np.int64(((word2 >> s32) * np.uint64(i + 1)) >> s32)
                        drawn, drawn2 = v[j], w[j2]
                        v[j], w[j2] = v[i], w[i]
                        row[i] += drawn + drawn2
                        if i > 1:
                            j = np.int64(((word & low) * np.uint64(i)) >> s32)
                            j2 = np.int64(((word2 & low) * np.uint64(i)) >> s32)
                            drawn, drawn2 = v[j], w[j2]
                            v[j], w[j2] = v[i - 1], w[i - 1]
                            row[i - 1] += drawn + drawn2
                    row[0] += v[0] + w[0]  # slot 0 is final once every step has run
        _write_ranges(sums, out, r0, n)
    return out


def tukey_ranges(values: np.ndarray, n_resamples: int, seed: int = 0) -> np.ndarray:
    """:func:`tukey_ranges_numpy`'s ranges, from a compiled parallel kernel on large inputs.

    >>> tukey_ranges(np.array([[1.0, 0.0], [1.0, 0.0]]), 4, seed=0).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    x = np.ascontiguousarray(values, dtype=np.float64)
    if numpy_pays(x.size * n_resamples):
        return tukey_ranges_numpy(x, n_resamples, seed)
    return np.asarray(_ranges_kernel(x, _key(seed), int(n_resamples)))


def _ranges_kernel(x: np.ndarray, key: np.uint64, n_resamples: int) -> np.ndarray:
    """The compiled kernel for ``x``'s number of systems: permutations from tables, or Fisher–Yates beyond 14."""
    if x.shape[1] <= _TABLE_SYSTEMS:
        return _table_kernel(x, key, n_resamples, *_tables(x.shape[1]))
    return _shuffle_kernel(x, key, n_resamples)


def _check_matrix(values: np.ndarray, names: Sequence[str], what: str, rows: str) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise DataError(f"{what} needs a 2-d {rows} x systems matrix, got shape {x.shape}")
    if x.shape[1] < 2 or len(names) != x.shape[1]:
        raise DataError(f"{what} needs two or more systems, one name each; got {x.shape[1]} and {len(names)} names")
    if x.shape[0] < 2:
        raise DataError(f"{what} needs at least two {rows}, got {x.shape[0]}")
    if not np.all(np.isfinite(x)):
        raise DataError(f"{what}: the {rows} x systems matrix holds NaN or infinite values; every system needs a value")
    return x


@dataclass(frozen=True)
class TukeyResult:
    """Randomised Tukey HSD: system ``means``, pairwise family-wise ``pvalues`` (k x k), ``n_resamples``."""

    systems: list[str]
    means: np.ndarray
    pvalues: np.ndarray
    n_users: int
    n_resamples: int
    seed: int

    def pairs(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per pair ``a, b, diff, pvalue, significant`` (``i < j`` in the systems' order)."""
        check_alpha(alpha)
        k = len(self.systems)
        rows = [
            {
                "a": self.systems[i],
                "b": self.systems[j],
                "diff": float(self.means[i] - self.means[j]),
                "pvalue": float(self.pvalues[i, j]),
                "significant": bool(self.pvalues[i, j] <= alpha),
            }
            for i in range(k)
            for j in range(i + 1, k)
        ]
        return pd.DataFrame(rows, columns=["a", "b", "diff", "pvalue", "significant"])


def tukey_hsd(
    values: np.ndarray,
    systems: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> TukeyResult:
    """Carterette's randomised Tukey HSD over a users x systems matrix; ``p = (1 + hits) / (1 + n_resamples)``.

    A hit is a resample whose range is at least the pair's ``|diff|`` (within 1e-12 relative: float noise in
    the sums does not break ties).

    >>> r = tukey_hsd(np.array([[0.5, 0.4], [0.6, 0.6], [0.9, 0.1]]), ["a", "b"], n_resamples=100)
    >>> r.pairs()[["a", "b", "pvalue"]].round(3).to_dict("records")
    [{'a': 'a', 'b': 'b', 'pvalue': 0.465}]
    """
    x = _check_matrix(values, systems, "Tukey HSD", "users")
    if not (isinstance(n_resamples, (int, np.integer)) and n_resamples >= 1):
        raise ConfigError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    means = x.mean(axis=0)
    ranges = np.sort(tukey_ranges(x, int(n_resamples), seed))
    diff = np.abs(means[:, None] - means[None, :])
    tol = 1e-12 * np.maximum(1.0, diff)
    hits = len(ranges) - np.searchsorted(ranges, diff - tol, side="left")
    p = (1.0 + hits) / (1.0 + n_resamples)
    np.fill_diagonal(p, 1.0)
    return TukeyResult([str(s) for s in systems], means, np.minimum(p, 1.0), x.shape[0], int(n_resamples), int(seed))


def wide_values(
    per_user: pd.DataFrame, *, system: str = "system", user: str = "user", value: str = "value"
) -> pd.DataFrame:
    """The users x systems matrix of a long per-user table; a user missing for some system is a one-line error.

    Tukey HSD permutes a user's values across *all* systems, so every system must score the same users.

    >>> t = pd.DataFrame({"system": ["a", "a", "b"], "user": [1, 2, 1], "value": [0.1, 0.2, 0.3]})
    >>> wide_values(t)
    Traceback (most recent call last):
    ...
    receval.errors.DataError: the systems score different users (a: 2, b: 1; 1 in all); every system needs every user
    """
    wide = per_user.pivot_table(index=user, columns=system, values=value, aggfunc="mean", observed=True)
    wide = wide[[s for s in dict.fromkeys(per_user[system]) if s in wide.columns]]
    if wide.isna().any().any():
        counts = ", ".join(f"{s}: {int(wide[s].notna().sum())}" for s in wide.columns)
        common = int(wide.notna().all(axis=1).sum())
        raise DataError(f"the systems score different users ({counts}; {common} in all); every system needs every user")
    wide.columns = [str(c) for c in wide.columns]
    return wide


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman test over data sets with Nemenyi's post-hoc: average ranks (1 = best), statistics, CD, p-values."""

    systems: list[str]
    avg_ranks: np.ndarray
    statistic: float
    pvalue: float
    iman_davenport: float
    iman_davenport_pvalue: float
    cd: float
    nemenyi_pvalues: np.ndarray
    n_datasets: int
    alpha: float

    def cd_data(self) -> dict[str, object]:
        """What a critical-difference diagram draws: systems by average rank, CD, and the groups not told apart."""
        order = np.argsort(self.avg_ranks, kind="stable")
        ranks = self.avg_ranks[order]
        groups: list[tuple[int, int]] = []
        for i in range(len(ranks)):
            j = int(np.searchsorted(ranks, ranks[i] + self.cd, side="right")) - 1
            if j > i and not any(g[0] <= i and j <= g[1] for g in groups):
                groups.append((i, j))
        names = [self.systems[o] for o in order]
        return {
            "systems": names,
            "avg_ranks": ranks.tolist(),
            "cd": self.cd,
            "groups": [[names[a] for a in range(i, j + 1)] for i, j in groups],
        }


def friedman_nemenyi(
    scores: np.ndarray,
    systems: Sequence[str],
    *,
    alpha: float = 0.05,
    higher_is_better: bool = True,
) -> FriedmanResult:
    """Friedman's test (tie-corrected, as ``scipy.stats.friedmanchisquare``) and Nemenyi's post-hoc (Demšar 2006).

    ``scores`` is data sets x systems. ``iman_davenport`` is Iman & Davenport's F,
    ``(N-1) chi2 / (N (k-1) - chi2)`` with ``(k-1, (k-1)(N-1))`` degrees of freedom, which Demšar recommends
    over the chi-square. Nemenyi's p-value of a pair is the studentized range's survival function at
    ``|R_i - R_j| sqrt(2) / sqrt(k (k+1) / (6N))`` (as scikit-posthocs' ``posthoc_nemenyi_friedman``).

    >>> f = friedman_nemenyi(np.array([[3.0, 2.0, 1.0]] * 5), ["a", "b", "c"])
    >>> f.avg_ranks.tolist(), round(f.pvalue, 4)
    ([1.0, 2.0, 3.0], 0.0067)
    """
    check_alpha(alpha)
    x = _check_matrix(scores, systems, "the Friedman test", "data sets")
    n, k = x.shape
    ranks = stats.rankdata(-x if higher_is_better else x, axis=1)
    avg = ranks.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(avg**2)) - k * (k + 1) ** 2 / 4.0)
    ties = sum(float(np.sum(c**3 - c)) for c in (np.unique(row, return_counts=True)[1] for row in ranks))
    correction = 1.0 - ties / (n * k * (k * k - 1))
    chi2 = chi2 / correction if correction > 0 else float("nan")
    p = float(stats.chi2.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    f_id = (n - 1) * chi2 / denom if denom > 0 else float("inf")
    p_id = float(stats.f.sf(f_id, k - 1, (k - 1) * (n - 1))) if np.isfinite(f_id) else 0.0
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    q = float(stats.studentized_range.ppf(1 - alpha, k, np.inf)) / np.sqrt(2.0)
    z = np.abs(avg[:, None] - avg[None, :]) / se
    nem = np.minimum(1.0, stats.studentized_range.sf(z * np.sqrt(2.0), k, np.inf))
    np.fill_diagonal(nem, 1.0)
    return FriedmanResult(
        systems=[str(s) for s in systems],
        avg_ranks=avg,
        statistic=float(chi2),
        pvalue=p,
        iman_davenport=float(f_id),
        iman_davenport_pvalue=p_id,
        cd=float(q * se),
        nemenyi_pvalues=nem,
        n_datasets=n,
        alpha=alpha,
    )


@dataclass(frozen=True)
class TwoLevelInterval:
    """The mean difference with its two-level (seeds/folds, then users) and users-only bootstrap intervals."""

    mean_diff: float
    ci_low: float
    ci_high: float
    users_ci_low: float
    users_ci_high: float
    n_groups: int
    n_users: int
    confidence: float


def two_level_bootstrap(
    differences: Sequence[Sequence[float] | np.ndarray],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> TwoLevelInterval:
    """Percentile intervals of the mean difference over seeds/folds *and* users, beside the users-only one.

    ``differences[g]`` holds the per-user differences ``a - b`` of seed (or fold, window) ``g``. The estimate is
    the mean of the groups' means. The two-level bootstrap draws the groups with replacement, then within each
    drawn group its users with replacement (Davison & Hinkley 1997, section 3.8, nested data); the users-only
    bootstrap keeps every group and redraws its users only, so the gap between the two intervals is what a new
    seed or fold adds to a new sample of users. Cross-checked in the tests against the Wald interval of
    statsmodels' ``MixedLM`` (a random intercept per group).

    >>> rng = np.random.default_rng(0)
    >>> groups = [rng.normal(0.01 + rng.normal(0, 0.01), 0.1, 300) for _ in range(8)]
    >>> r = two_level_bootstrap(groups, n_resamples=500)
    >>> (r.ci_high - r.ci_low) > (r.users_ci_high - r.users_ci_low)
    True
    """
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie in (0, 1), got {confidence}")
    arrays = [np.asarray(g, dtype=np.float64) for g in differences]
    if len(arrays) < 2:
        raise DataError(f"a two-level bootstrap needs at least two seeds or folds, got {len(arrays)}")
    for i, g in enumerate(arrays):
        if g.ndim != 1 or len(g) < 2 or not np.all(np.isfinite(g)):
            raise DataError(f"seed/fold {i} needs at least 2 finite per-user differences, got shape {g.shape}")
    rng = np.random.default_rng(seed)
    n_groups = len(arrays)
    both = np.empty(n_resamples)
    users_only = np.empty(n_resamples)
    for r in range(n_resamples):
        # each group's users redrawn once; the two-level mean takes the drawn groups' resampled means
        means = np.array([g[rng.integers(0, len(g), len(g))].mean() for g in arrays])
        users_only[r] = means.mean()
        both[r] = means[rng.integers(0, n_groups, n_groups)].mean()
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(both, [tail, 1 - tail])
    ulo, uhi = np.quantile(users_only, [tail, 1 - tail])
    return TwoLevelInterval(
        mean_diff=float(np.mean([g.mean() for g in arrays])),
        ci_low=float(lo),
        ci_high=float(hi),
        users_ci_low=float(ulo),
        users_ci_high=float(uhi),
        n_groups=n_groups,
        n_users=int(sum(len(g) for g in arrays)),
        confidence=confidence,
    )
