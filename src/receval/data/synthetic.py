"""Synthetic MovieLens-like rating data with a known ground truth.

The generative model (every draw from one seeded :class:`numpy.random.Generator`):

1. **Aspects (genres).** Genre ``g`` (0-based) has weight ∝ ``1 / (g + 1)`` (Zipf);
   each item gets 1, 2 or 3 distinct genres (probabilities 0.5, 0.33, 0.17, capped at
   ``n_aspects``) drawn without replacement from those weights. The first 19 genre
   names are MovieLens's, ordered by their frequency in ML-100k.
2. **True preferences.** ``z_ui = c + b_u + b_i + p_u·q_i + a_u·g_i`` with user and item
   biases ``b_u ~ N(0, 0.35²)``, ``b_i ~ N(0, 0.5²)``, ``n_factors`` latent factors
   whose dot product has standard deviation 0.5, a user-genre affinity
   ``a_u ~ N(0, 0.7²)`` per genre and ``g_i`` the item's genre indicator divided by its
   number of genres (so genre taste drives ratings and aspect metrics / coherence have
   signal). ``c = 0.4``. The true value on the scale is
   ``μ_ui = low + (high - low) · sigmoid(z_ui)``.
3. **Exposure (which pairs are observed).** User activity weights are log-normal
   (``user_activity_sigma``; every user gets at least ``min(20, n_ratings // (2 n_users))``
   pairs). Item exposure weights follow a power law over a popularity rank,
   ``w_i ∝ (rank_i + 1 + 0.06 n_items) ** -popularity_exponent`` (the offset flattens
   the head so the top items are not rated by every user), where the rank orders items by
   ``b_i / 0.5 + N(0, 1)`` (so popular items tend to be better liked, as in MovieLens).
   ``exposure="mar"`` means exponent 0: uniform over items (like CM100k). Each user's
   items are the first distinct items of an i.i.d. sequence from ``w`` (successive
   sampling without replacement, drawn in a compiled loop with an alias table), so no
   users x items matrix is ever built.
4. **Ratings.** Each observed pair is rated ``reratings`` times (increasing
   timestamps); each rating is ``μ_ui + σ_u · ε`` with independent ``ε ~ N(0, 1)``, then
   rounded to the scale step (``low + step · floor((x - low) / step + 1/2)``) and clipped
   to the scale. ``σ_u`` is the user's noise level: a fixed float, or drawn
   ``Uniform(lo, hi)`` (default ``lo, hi = 0.05, 0.30`` times the scale range, i.e.
   0.2..1.2 on a 1..5 scale).
5. **Timestamps.** User ``u`` starts at a uniform time in 2000-01-01 + 3 years and stays
   active a log-normal duration (median 30 days); ratings are uniform in that window.
   A re-rating comes 1..180 days (uniform) after the previous rating of the pair.
   Rows are grouped by user, in random order within a user, a pair's re-ratings
   adjacent (not by time: sort by ``timestamps`` for a log order; splits never depend
   on row order).

**Exposure truth** (for debiased evaluation). ``generate_with_truth(sampling="bernoulli")``
observes each pair independently with probability ``p_ui = min(1, κ a_u w_i)`` (``a_u`` the
user's activity weight, ``κ`` set so that the expected number of pairs is ``n_ratings``; the
count is then random): the propensity of every observed pair is exact.
:meth:`SyntheticData.propensities` gives it per row; for the default successive sampling it
gives the first-order inclusion probability of each user's ``counts[u]`` draws, by Rosén's
(1997) approximation ``1 - exp(-λ_u w_i)`` with ``λ_u`` solving ``Σ_i (1 - exp(-λ_u w_i)) =
counts[u]``. ``keep_complete=True`` also rates every unobserved pair (one rating each, noise
drawn after everything else, so the observed data are unchanged) in
:attr:`SyntheticData.complete`: the missing-at-random (complete-data) value of any metric is
then known exactly.

Because rounding and clipping change the noise, :class:`SyntheticData` reports both the
declared ``σ_u`` and exact quantities of the observed-rating distribution
(:meth:`SyntheticData.rating_moments`, :meth:`SyntheticData.magic_barrier`) plus the
empirical RMSE of the rows around the true values (:meth:`SyntheticData.noise_rmse`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import ndtr

from receval.data.interactions import Interactions, RatingScale, distinct, pair_keys
from receval.errors import ConfigError
from receval.validate import check_memory, check_seed

__all__ = ["SyntheticData", "generate", "generate_with_truth"]

GENRES = (
    "Drama",
    "Comedy",
    "Thriller",
    "Action",
    "Romance",
    "Adventure",
    "Children's",
    "Crime",
    "Sci-Fi",
    "Horror",
    "War",
    "Mystery",
    "Musical",
    "Documentary",
    "Animation",
    "Western",
    "Film-Noir",
    "Fantasy",
    "unknown",
)
_GENRE_COUNT_P = np.array([0.5, 0.33, 0.17])
_T0 = 946_684_800  # 2000-01-01T00:00:00Z
_SPAN = 3 * 365 * 86_400
_DAY = 86_400
_FAMILIAR_EXPONENT = 1.5  # familiarity ∝ fame ** 1.5: Familiar-CM100k-like long tail even in MAR data
_HEAD = 0.06  # flat head of the popularity power law, as a share of the items
_BLOCK = 1 << 20  # pairs per block when drawing ratings and timestamps
_DENSE_CELLS = 1 << 22  # users x items cells sampled densely per block


@dataclass(frozen=True, eq=False)
class _Preferences:
    """The latent model: ``μ = low + (high - low) · sigmoid(c + b_u + b_i + p_u · q_i + a_u · g_i)``."""

    offset: float
    user_bias: np.ndarray
    item_bias: np.ndarray
    user_factors: np.ndarray
    item_factors: np.ndarray
    affinity: np.ndarray  # users x genres
    genres: np.ndarray  # items x 3 genre indices, padded with -1
    low: float
    high: float

    def __call__(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        # one row per item holding bias, factors and genres: rows are visited in random
        # item order, so a compact record costs fewer cache misses than four arrays
        table = np.hstack([self.item_bias[:, None], self.item_factors, self.genres.astype(np.float64)])
        return _true_values(
            np.ascontiguousarray(users, dtype=np.int32),
            np.ascontiguousarray(items, dtype=np.int32),
            self.offset,
            self.user_bias,
            self.user_factors,
            self.affinity,
            np.ascontiguousarray(table),
            self.low,
            self.high,
        )


@numba.njit(cache=True, nogil=True)
def _true_values(users, items, offset, user_bias, p, affinity, item_table, low, high):
    n_factors = p.shape[1]
    width = item_table.shape[1]
    out = np.empty(len(users), dtype=np.float64)
    for j in range(len(users)):
        u, i = users[j], items[j]
        z = offset + user_bias[u] + item_table[i, 0]
        for f in range(n_factors):
            z += p[u, f] * item_table[i, 1 + f]
        taste = 0.0
        n = 0
        for c in range(1 + n_factors, width):
            g = int(item_table[i, c])
            if g >= 0:
                taste += affinity[u, g]
                n += 1
        if n:
            z += taste / n
        out[j] = low + (high - low) / (1.0 + np.exp(-z))
    return out


@dataclass(frozen=True, eq=False)
class SyntheticData:
    """Generated data together with the ground truth that produced it.

    Attributes
    ----------
    data : Interactions
        The ratings, exactly as :func:`generate` returns them.
    true_ratings : ndarray of float64
        ``μ_ui`` of each row's (user, item) pair (before noise, rounding, clipping).
    user_noise : ndarray of float64, shape (n_users,)
        The noise standard deviation ``σ_u`` used for each user.
    item_popularity : ndarray of float64, shape (n_items,)
        The item exposure probabilities ``w_i`` (sum 1; uniform for MAR / complete data).
    pair_propensity : ndarray of float64 or None
        With ``sampling="bernoulli"``: the exact observation probability of each row's pair.
    complete : Interactions or None
        With ``keep_complete=True``: one rating for every (user, item) pair (the observed
        pairs keep their first observed rating).

    Examples
    --------
    >>> truth = generate_with_truth(n_users=50, n_items=40, n_ratings=600, reratings=2, seed=1)
    >>> truth.data.n_ratings, truth.true_ratings.shape, truth.user_noise.shape
    (1200, (1200,), (50,))
    >>> bool(0.2 < truth.magic_barrier() < 1.2)
    True
    """

    data: Interactions
    true_ratings: np.ndarray
    user_noise: np.ndarray
    item_popularity: np.ndarray
    _preferences: _Preferences
    pair_propensity: np.ndarray | None = None
    complete: Interactions | None = None

    def propensities(self) -> np.ndarray:
        """The probability that each row's (user, item) pair is observed.

        Exact for ``sampling="bernoulli"``; for successive sampling Rosén's (1997)
        approximation of the inclusion probability given each user's number of pairs
        (1 for complete data).

        >>> t = generate_with_truth(n_users=30, n_items=40, n_ratings=300, sampling="bernoulli", seed=2)
        >>> p = t.propensities()
        >>> bool(0 < p.min() and p.max() <= 1), p.shape == (t.data.n_ratings,)
        (True, True)
        """
        if self.pair_propensity is not None:
            return self.pair_propensity
        n_users, n_items = self.data.n_users, self.data.n_items
        pairs = np.bincount(self.data.users, minlength=n_users) // max(1, self._reratings())
        if pairs.sum() == n_users * n_items:
            return np.ones(self.data.n_ratings)
        lam = _inclusion_scale(self.item_popularity, pairs.astype(np.float64))
        return -np.expm1(-lam[self.data.users] * self.item_popularity[self.data.items])

    def propensity_table(self) -> pd.DataFrame:
        """``user, item, propensity`` (original ids) of the distinct observed pairs."""
        frame = pd.DataFrame(
            {
                "user": self.data.user_ids[self.data.users],
                "item": self.data.item_ids[self.data.items],
                "propensity": self.propensities(),
            }
        )
        return frame.drop_duplicates(["user", "item"], ignore_index=True)

    def _reratings(self) -> int:
        n_pairs = len(distinct(pair_keys(self.data.users, self.data.items, self.data.n_items)))
        return self.data.n_ratings // max(n_pairs, 1)

    def true_rating(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``μ_ui`` for any (user, item) index pairs, observed or not."""
        users = np.asarray(users, dtype=np.int64)
        items = np.asarray(items, dtype=np.int64)
        if users.shape != items.shape:
            raise ConfigError(f"users has shape {users.shape} but items has shape {items.shape}")
        for label, arr, n in (("user", users, self.data.n_users), ("item", items, self.data.n_items)):
            if arr.size and (arr.min() < 0 or arr.max() >= n):
                raise ConfigError(f"{label} indices must lie in 0..{n - 1}")
        return self._preferences(users.ravel(), items.ravel()).reshape(users.shape)

    def rating_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Exact mean and variance of each row's rating distribution.

        The observed rating is ``clip(round(μ + σ ε))``; its mean ``E[r]`` (the optimal
        prediction under squared error) and variance ``V[r]`` follow in closed form from
        the normal CDF over the rounding cells (discrete scale) or from the censored
        normal (continuous scale).
        """
        mu = self.true_ratings
        sigma = self.user_noise[self.data.users]
        return _rating_moments(mu, sigma, self.data.scale)

    def magic_barrier(self, per_user: bool = False) -> float | np.ndarray:
        """The exact magic barrier ``B = sqrt(mean V[r_ui])`` over the observed pairs.

        Every observed pair has the same number of rows, so the mean over rows equals
        the mean over pairs (``p(u, i)`` uniform). ``per_user=True`` gives one value per
        user (NaN for users with no rows). Algorithm 1 of Said & Bellogín (2018), which
        divides by ``m`` rather than ``m - 1``, estimates ``(m - 1) / m`` times ``B²``.
        """
        _, var = self.rating_moments()
        return self._root_mean_by_user(var, per_user)

    def noise_rmse(self, per_user: bool = False) -> float | np.ndarray:
        """Empirical RMSE of the rows around ``μ_ui``: the effective noise.

        Rounding and clipping make it differ from the declared ``σ_u`` (rounding adds
        about ``step² / 12`` of variance when ``σ_u`` is small against the step;
        clipping removes some near the ends of the scale). ``per_user=True`` gives one
        value per user (NaN for users with no rows).
        """
        err2 = (self.data.ratings.astype(np.float64) - self.true_ratings) ** 2
        return self._root_mean_by_user(err2, per_user)

    def _root_mean_by_user(self, values: np.ndarray, per_user: bool) -> float | np.ndarray:
        if not per_user:
            return float(np.sqrt(values.mean())) if len(values) else float("nan")
        n = self.data.n_users
        counts = np.bincount(self.data.users, minlength=n)
        sums = np.bincount(self.data.users, weights=values, minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        return np.sqrt(means)


@numba.njit(cache=True)
def _inclusion_scale(w, counts):
    """Per user, λ with Σ_i (1 - exp(-λ w_i)) = counts[u] (bisection on a log scale)."""
    out = np.zeros(len(counts))
    n = len(w)
    for u in range(len(counts)):
        c = counts[u]
        if c <= 0:
            continue
        if c >= n:
            out[u] = np.inf
            continue
        lo, hi = 0.0, 1.0
        while True:
            total = 0.0
            for i in range(n):
                total += 1.0 - np.exp(-hi * w[i])
            if total >= c:
                break
            lo = hi
            hi *= 2.0
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            total = 0.0
            for i in range(n):
                total += 1.0 - np.exp(-mid * w[i])
            if total < c:
                lo = mid
            else:
                hi = mid
        out[u] = 0.5 * (lo + hi)
    return out


def _rating_moments(mu: np.ndarray, sigma: np.ndarray, scale: RatingScale) -> tuple[np.ndarray, np.ndarray]:
    low, high = float(scale.low), float(scale.high)
    safe = np.where(sigma > 0, sigma, 1.0)
    if scale.step is None:
        a = (low - mu) / safe
        b = (high - mu) / safe
        pa, pb = ndtr(a), ndtr(b)
        fa, fb = np.exp(-0.5 * a * a) / np.sqrt(2 * np.pi), np.exp(-0.5 * b * b) / np.sqrt(2 * np.pi)
        inside = pb - pa
        mean = low * pa + high * (1 - pb) + mu * inside + safe * (fa - fb)
        second = (
            low * low * pa
            + high * high * (1 - pb)
            + (mu * mu + safe * safe) * inside
            + 2 * mu * safe * (fa - fb)
            + safe * safe * (a * fa - b * fb)
        )
        var = np.maximum(second - mean * mean, 0.0)
        exact = np.clip(mu, low, high)
    else:
        values = scale.values()
        mean = np.zeros_like(mu)
        second = np.zeros_like(mu)
        previous = np.zeros_like(mu)
        for k, v in enumerate(values):
            upper = np.ones_like(mu) if k == len(values) - 1 else ndtr((v + scale.step / 2 - mu) / safe)
            p = upper - previous
            mean += p * v
            second += p * v * v
            previous = upper
        var = np.maximum(second - mean * mean, 0.0)
        exact = _round_clip(mu, scale)
    deterministic = sigma <= 0
    mean = np.where(deterministic, exact, mean)
    var = np.where(deterministic, 0.0, var)
    return mean, var


def _round_clip(x: np.ndarray, scale: RatingScale) -> np.ndarray:
    if scale.step is None:
        return np.clip(x, scale.low, scale.high)
    return np.clip(scale.low + scale.step * np.floor((x - scale.low) / scale.step + 0.5), scale.low, scale.values()[-1])


def generate(
    n_users: int = 943,
    n_items: int = 1682,
    n_ratings: int = 100_000,
    *,
    density: float | None = None,
    n_aspects: int = 19,
    scale: RatingScale = RatingScale(1, 5, 1),
    exposure: Literal["mnar", "mar"] = "mnar",
    popularity_exponent: float | None = None,
    user_activity_sigma: float | None = None,
    complete: bool = False,
    reratings: int = 1,
    noise: float | tuple[float, float] | None = None,
    n_factors: int = 10,
    familiar_fraction: float = 0.0,
    seed: int | np.random.Generator = 0,
    name: str | None = None,
) -> Interactions:
    """Generate MovieLens-like ratings (see the module docstring for the model).

    Parameters
    ----------
    n_users, n_items
        Size of the id space (ids are ``1..n``).
    n_ratings
        Number of distinct observed (user, item) pairs (exact). Rows are
        ``n_ratings * reratings``.
    density
        When given, overrides ``n_ratings``: ``round(density * n_users * n_items)`` pairs.
    n_aspects
        Number of genres (0 for no aspects).
    scale
        The rating scale; ``step=None`` gives real-valued ratings (only clipped).
    exposure
        ``"mnar"`` (popularity-biased power law) or ``"mar"`` (uniform over items).
    popularity_exponent
        MNAR strength, the power-law exponent of item exposure (default 2.0 for MNAR,
        which gives ML-100k-like item popularity: Gini about 0.65;
        must be 0 or omitted for MAR).
    user_activity_sigma
        Log-normal sigma of user activity (default 1.0 for MNAR, 0.0 — equal activity,
        as in CM100k — for MAR).
    complete
        Every user rates every item (``n_ratings``, ``density`` and exposure are
        ignored); limited to 50 million rows.
    reratings
        Ratings per observed pair (``m`` of the magic barrier), with independent noise
        and increasing timestamps.
    noise
        Per-user noise standard deviation in rating units: a float (the same for every
        user), a ``(lo, hi)`` pair (``σ_u ~ Uniform(lo, hi)``), or None for
        ``(0.05, 0.30)`` times the scale range.
    n_factors
        Latent factors of the true preferences.
    familiar_fraction
        Share of pairs flagged ``extra["familiar"]`` (exact count, rounded), chosen
        without replacement with probability ∝ ``fame_i ** 1.5``, where
        ``fame_i = 1 / (rank_i + 1 + 0.06 n_items)`` is the item's latent popularity (the
        rank that drives MNAR exposure). So the familiar subset is popularity-biased
        even in MAR data, like Familiar CM100k (at CM100k's size and share, the
        coefficient of variation of its item counts is about 1.3; CM100k's is 1.17).
        0 adds no column.
    seed
        Seed or Generator; the same seed gives bit-identical output.
    name
        Data set name (default ``"synthetic-<exposure>"`` or ``"synthetic-complete"``).

    Returns
    -------
    Interactions
        Ids ``1..n_users`` and ``1..n_items``, ratings on ``scale``, timestamps, the
        genres as aspects (unless ``n_aspects=0``) and, with ``familiar_fraction``, the
        ``familiar`` column; the same ``seed`` gives the same data.

    Examples
    --------
    >>> data = generate(n_users=100, n_items=80, n_ratings=2_000, seed=3)
    >>> data.n_ratings, data.n_users, data.n_items, data.aspects.shape
    (2000, 100, 80, (80, 19))
    >>> bool(data.scale.contains(data.ratings)), data.has_duplicates
    (True, False)
    >>> generate(n_users=3, n_items=4, complete=True, n_aspects=2).n_ratings
    12
    """
    return generate_with_truth(
        n_users,
        n_items,
        n_ratings,
        density=density,
        n_aspects=n_aspects,
        scale=scale,
        exposure=exposure,
        popularity_exponent=popularity_exponent,
        user_activity_sigma=user_activity_sigma,
        complete=complete,
        reratings=reratings,
        noise=noise,
        n_factors=n_factors,
        familiar_fraction=familiar_fraction,
        seed=seed,
        name=name,
    ).data


def generate_with_truth(
    n_users: int = 943,
    n_items: int = 1682,
    n_ratings: int = 100_000,
    *,
    density: float | None = None,
    n_aspects: int = 19,
    scale: RatingScale = RatingScale(1, 5, 1),
    exposure: Literal["mnar", "mar"] = "mnar",
    popularity_exponent: float | None = None,
    user_activity_sigma: float | None = None,
    complete: bool = False,
    reratings: int = 1,
    noise: float | tuple[float, float] | None = None,
    n_factors: int = 10,
    familiar_fraction: float = 0.0,
    seed: int | np.random.Generator = 0,
    name: str | None = None,
    sampling: Literal["successive", "bernoulli"] = "successive",
    keep_complete: bool = False,
) -> SyntheticData:
    """As :func:`generate`, returning the data with its ground truth (:class:`SyntheticData`).

    ``sampling="bernoulli"`` observes each pair independently with a known propensity
    (the number of pairs is then random, ``n_ratings`` in expectation); ``keep_complete``
    also rates every pair into :attr:`SyntheticData.complete` (see the module docstring).
    The defaults give exactly the data of :func:`generate`.

    Returns
    -------
    SyntheticData
        ``data`` (what :func:`generate` returns for the same arguments) with its ground
        truth: each row's rating before noise, each user's noise, the items' exposure
        probabilities, with ``sampling="bernoulli"`` each pair's observation probability
        and, with ``keep_complete``, every pair rated.

    Examples
    --------
    >>> t = generate_with_truth(n_users=20, n_items=15, n_ratings=60, sampling="bernoulli", keep_complete=True)
    >>> t.complete.n_ratings, bool(abs(t.data.n_ratings - 60) < 25)
    (300, True)

    >>> t = generate_with_truth(n_users=20, n_items=30, n_ratings=200, noise=0.0, scale=RatingScale(1, 5))
    >>> bool(np.allclose(t.data.ratings, t.true_ratings, atol=1e-5)), t.magic_barrier()
    (True, 0.0)
    """
    n_pairs, pop_exp, act_sigma, noise_lo, noise_hi = _check(
        n_users,
        n_items,
        n_ratings,
        density,
        n_aspects,
        scale,
        exposure,
        popularity_exponent,
        user_activity_sigma,
        complete,
        reratings,
        noise,
        n_factors,
        familiar_fraction,
    )
    if sampling not in ("successive", "bernoulli"):
        raise ConfigError(f"unknown sampling {sampling!r}; use 'successive' (exact counts) or 'bernoulli'")
    if keep_complete and n_users * n_items > 50_000_000:
        raise ConfigError(
            f"keep_complete rates all {n_users} x {n_items} pairs (over 50 million); use fewer users or items"
        )
    # sized before drawing: the preference model's per-user and per-item rows (factors, aspects, biases, noise)
    check_memory(8.0 * (n_users + n_items) * (n_factors + n_aspects + 8), f"generating {n_users:,} users x "
                 f"{n_items:,} items", "use fewer users or items")  # fmt: skip
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(check_seed(seed))

    # aspects and the latent preference model
    genres = _item_genres(n_items, n_aspects, rng)
    prefs = _preference_model(n_users, n_items, n_factors, n_aspects, genres, float(scale.low), float(scale.high), rng)
    user_noise = (
        np.full(n_users, noise_lo, dtype=np.float64)
        if noise_hi == noise_lo
        else rng.uniform(noise_lo, noise_hi, size=n_users)
    )

    # latent item popularity (fame): a rank correlated with quality; drives MNAR exposure and familiarity
    quality = prefs.item_bias / 0.5 + rng.standard_normal(n_items)
    rank = np.empty(n_items, dtype=np.float64)
    rank[np.argsort(-quality, kind="stable")] = np.arange(n_items)
    fame = 1.0 / (rank + 1.0 + _HEAD * n_items)

    # exposure: which pairs are observed
    if complete:
        item_p = np.full(n_items, 1.0 / n_items)
        users = np.repeat(np.arange(n_users, dtype=np.int32), n_items)
        items = np.tile(np.arange(n_items, dtype=np.int32), n_users)
    else:
        item_p = fame**pop_exp
        item_p /= item_p.sum()
        activity = rng.lognormal(0.0, act_sigma, size=n_users) if act_sigma > 0 else np.ones(n_users)
        if sampling == "bernoulli":
            users, items, pair_p = _bernoulli_pairs(n_pairs, activity, item_p, rng)
        else:
            counts = _allocate(n_pairs, activity, n_items, rng)
            users = np.repeat(np.arange(n_users, dtype=np.int32), counts)
            items = _sample_items(counts, item_p, rng)
    n_obs = len(users)

    # familiar flag (per pair), true values, timestamps, ratings
    familiar = _familiar(fame[items] ** _FAMILIAR_EXPONENT, familiar_fraction, rng) if familiar_fraction > 0 else None
    mu = prefs(users, items)
    start = rng.integers(_T0, _T0 + _SPAN, size=n_users)
    duration = rng.lognormal(np.log(30 * _DAY), 1.5, size=n_users)
    # rows: by user, a pair's m rows adjacent in time order; filled in blocks to bound memory
    n_rows = n_obs * reratings
    timestamps = np.empty(n_rows, dtype=np.int64)
    ratings = np.empty(n_rows, dtype=np.float32)
    for a in range(0, n_obs, _BLOCK):
        u = users[a : a + _BLOCK]
        t = start[u] + np.floor(duration[u] * rng.random(len(u))).astype(np.int64)
        for r in range(reratings):
            if r:
                t += rng.integers(_DAY, 180 * _DAY, size=len(u), endpoint=True)
            rows = slice(a * reratings + r, (a + len(u)) * reratings, reratings)
            timestamps[rows] = t
            ratings[rows] = _round_clip(mu[a : a + _BLOCK] + user_noise[u] * rng.standard_normal(len(u)), scale)
    all_users, all_items, all_mu = (x if reratings == 1 else np.repeat(x, reratings) for x in (users, items, mu))
    extra = {} if familiar is None else {"familiar": np.repeat(familiar, reratings)}
    aspects, aspect_names = _aspect_table(genres, n_items, n_aspects)
    label = name if name is not None else ("synthetic-complete" if complete else f"synthetic-{exposure}")
    data = Interactions(
        users=all_users,
        items=all_items,
        ratings=ratings,
        user_ids=np.arange(1, n_users + 1, dtype=np.int64),
        item_ids=np.arange(1, n_items + 1, dtype=np.int64),
        scale=scale,
        timestamps=timestamps,
        aspects=aspects,
        aspect_names=aspect_names,
        extra=extra,
        name=label,
    )
    complete_data = None
    if keep_complete:
        complete_data = _complete(data, prefs, user_noise, users, items, ratings[::reratings], scale, rng)
    return SyntheticData(
        data=data,
        true_ratings=all_mu,
        user_noise=user_noise,
        item_popularity=item_p,
        _preferences=prefs,
        pair_propensity=None if sampling != "bernoulli" or complete else np.repeat(pair_p, reratings),
        complete=complete_data,
    )


def _bernoulli_pairs(
    n_pairs: int, activity: np.ndarray, item_p: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair observed independently with ``min(1, κ a_u w_i)``, ``Σ p = n_pairs``."""
    a = activity / activity.sum()
    lo, hi = 0.0, float(n_pairs) / float(np.max(a) * np.max(item_p)) + 1.0
    block = max(1, _DENSE_CELLS // len(item_p))

    def expected(kappa: float) -> float:
        return sum(
            float(np.minimum(1.0, kappa * a[s : s + block, None] * item_p[None, :]).sum())
            for s in range(0, len(a), block)
        )

    for _ in range(80):  # the expected count grows with κ; bisection
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if expected(mid) < n_pairs else (lo, mid)
    kappa = 0.5 * (lo + hi)
    users, items, probs = [], [], []
    for start in range(0, len(a), block):
        p = np.minimum(1.0, kappa * a[start : start + block, None] * item_p[None, :])
        rows, cols = np.nonzero(rng.random(p.shape) < p)
        users.append((rows + start).astype(np.int32))
        items.append(cols.astype(np.int32))
        probs.append(p[rows, cols])
    return np.concatenate(users), np.concatenate(items), np.concatenate(probs)


def _complete(
    data: Interactions,
    prefs: _Preferences,
    user_noise: np.ndarray,
    users: np.ndarray,
    items: np.ndarray,
    observed: np.ndarray,
    scale: RatingScale,
    rng: np.random.Generator,
) -> Interactions:
    """Every (user, item) pair rated once: observed pairs keep their first rating."""
    n_users, n_items = data.n_users, data.n_items
    all_users = np.repeat(np.arange(n_users, dtype=np.int32), n_items)
    all_items = np.tile(np.arange(n_items, dtype=np.int32), n_users)
    mu = prefs(all_users, all_items)
    ratings = _round_clip(mu + user_noise[all_users] * rng.standard_normal(len(mu)), scale).astype(np.float32)
    ratings[users.astype(np.int64) * n_items + items] = observed
    return Interactions(
        users=all_users,
        items=all_items,
        ratings=ratings,
        user_ids=data.user_ids,
        item_ids=data.item_ids,
        scale=scale,
        aspects=data.aspects,
        aspect_names=data.aspect_names,
        name=f"{data.name}-complete",
    )


def _check(
    n_users: int,
    n_items: int,
    n_ratings: int,
    density: float | None,
    n_aspects: int,
    scale: RatingScale,
    exposure: str,
    popularity_exponent: float | None,
    user_activity_sigma: float | None,
    complete: bool,
    reratings: int,
    noise: float | tuple[float, float] | None,
    n_factors: int,
    familiar_fraction: float,
) -> tuple[int, float, float, float, float]:
    """Validate the parameters; returns (pairs, exponent, activity sigma, noise lo, noise hi)."""
    for label, value, least in (
        ("n_users", n_users, 1),
        ("n_items", n_items, 1),
        ("n_aspects", n_aspects, 0),
        ("reratings", reratings, 1),
        ("n_factors", n_factors, 0),
    ):
        if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < least:
            raise ConfigError(f"{label} must be an integer >= {least}, got {value!r}")
    if not isinstance(scale, RatingScale):
        raise ConfigError(f"scale must be a RatingScale, got {scale!r}")
    if scale.high <= scale.low:
        raise ConfigError(f"scale {scale.low:g}..{scale.high:g} has no range; give low < high")
    if exposure not in ("mnar", "mar"):
        raise ConfigError(f"unknown exposure {exposure!r}; use 'mnar' (popularity-biased) or 'mar' (uniform)")
    cells = n_users * n_items
    if complete:
        n_pairs = cells
        if n_pairs * reratings > 50_000_000:
            raise ConfigError(
                f"complete data of {n_users} x {n_items} x {reratings} ratings exceeds 50 million rows; "
                "use fewer users or items"
            )
    else:
        if density is not None:
            if not 0 < density <= 1:
                raise ConfigError(f"density must be in (0, 1], got {density!r}")
            n_ratings = round(density * cells)
        if not isinstance(n_ratings, int | np.integer) or n_ratings < 1:
            raise ConfigError(f"n_ratings must be a positive integer, got {n_ratings!r}")
        if n_ratings > cells:
            raise ConfigError(
                f"n_ratings={n_ratings} exceeds the {cells} possible (user, item) pairs; "
                "use complete=True for full observation or more users/items"
            )
        n_pairs = int(n_ratings)
    if popularity_exponent is None:
        pop_exp = 2.0 if exposure == "mnar" else 0.0
    else:
        pop_exp = float(popularity_exponent)
        if not np.isfinite(pop_exp) or pop_exp < 0:
            raise ConfigError(f"popularity_exponent must be a finite number >= 0, got {popularity_exponent!r}")
        if exposure == "mar" and pop_exp != 0:
            raise ConfigError("exposure='mar' means uniform exposure; leave popularity_exponent unset or 0")
    act_sigma = (1.0 if exposure == "mnar" else 0.0) if user_activity_sigma is None else float(user_activity_sigma)
    if not np.isfinite(act_sigma) or act_sigma < 0:
        raise ConfigError(f"user_activity_sigma must be a finite number >= 0, got {user_activity_sigma!r}")
    if noise is None:
        lo, hi = 0.05 * (scale.high - scale.low), 0.30 * (scale.high - scale.low)
    elif isinstance(noise, tuple | list):
        if len(noise) != 2:
            raise ConfigError(f"noise as a range must be (lo, hi), got {noise!r}")
        lo, hi = float(noise[0]), float(noise[1])
    else:
        lo = hi = float(noise)
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 <= lo <= hi):
        raise ConfigError(f"noise must be a standard deviation >= 0 or a range 0 <= lo <= hi, got {noise!r}")
    if not 0 <= familiar_fraction <= 1:
        raise ConfigError(f"familiar_fraction must be in [0, 1], got {familiar_fraction!r}")
    return n_pairs, pop_exp, act_sigma, lo, hi


def _item_genres(n_items: int, n_aspects: int, rng: np.random.Generator) -> np.ndarray:
    """Genres of each item, shape (n_items, 3), padded with -1 (empty when no aspects)."""
    if n_aspects == 0:
        return np.full((n_items, 0), -1, dtype=np.int64)
    width = min(3, n_aspects)
    p = _GENRE_COUNT_P[:width] / _GENRE_COUNT_P[:width].sum()
    n_genres = rng.choice(np.arange(1, width + 1), size=n_items, p=p)
    # Gumbel top-k = sampling genres without replacement with Zipf weights
    keys = -np.log(np.arange(1, n_aspects + 1))[None, :] + rng.gumbel(size=(n_items, n_aspects))
    top = np.argsort(-keys, axis=1, kind="stable")[:, :width]
    return np.where(np.arange(width)[None, :] < n_genres[:, None], top, -1)


def _aspect_table(genres: np.ndarray, n_items: int, n_aspects: int) -> tuple[sp.csr_matrix | None, np.ndarray | None]:
    if n_aspects == 0:
        return None, None
    rows, cols = np.nonzero(genres >= 0)
    table = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, genres[rows, cols])), shape=(n_items, n_aspects)
    )
    table.sort_indices()
    names = [GENRES[g] if g < len(GENRES) else f"genre_{g + 1}" for g in range(n_aspects)]
    return table, np.asarray(names, dtype=object)


def _preference_model(
    n_users: int,
    n_items: int,
    n_factors: int,
    n_aspects: int,
    genres: np.ndarray,
    low: float,
    high: float,
    rng: np.random.Generator,
) -> _Preferences:
    factor_sd = np.sqrt(0.5 / np.sqrt(n_factors)) if n_factors else 0.0
    user_bias = rng.normal(0.0, 0.35, size=n_users)
    item_bias = rng.normal(0.0, 0.5, size=n_items)
    p = rng.normal(0.0, factor_sd, size=(n_users, n_factors))
    q = rng.normal(0.0, factor_sd, size=(n_items, n_factors))
    affinity = rng.normal(0.0, 0.7, size=(n_users, n_aspects))
    return _Preferences(
        offset=0.4,
        user_bias=user_bias,
        item_bias=item_bias,
        user_factors=p,
        item_factors=q,
        affinity=affinity,
        genres=np.ascontiguousarray(genres, dtype=np.int64),
        low=low,
        high=high,
    )


def _allocate(total: int, weights: np.ndarray, cap: int, rng: np.random.Generator) -> np.ndarray:
    """Split ``total`` pairs over users ∝ ``weights``, each at most ``cap``, a floor first."""
    n = len(weights)
    floor = min(20, total // (2 * n), cap)
    counts = np.full(n, floor, dtype=np.int64)
    left = total - floor * n
    p = weights / weights.sum()
    while left > 0:
        room = cap - counts
        p = np.where(room > 0, p, 0.0)
        if not p.sum() > 0:  # weights underflowed (huge activity spread): spread evenly
            p = (room > 0).astype(np.float64)
        p /= p.sum()
        counts += np.minimum(rng.multinomial(left, p), room)
        left = total - int(counts.sum())
    return counts


def _sample_items(counts: np.ndarray, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Items of each user (rows grouped by user, ``counts[u]`` each): the first
    ``counts[u]`` distinct items of an i.i.d. sequence drawn from ``p`` (successive
    sampling without replacement), in draw order.

    A compiled loop draws with Walker's alias table and rejects repeats; users wanting
    more than half the items, or whose rejections run long under a very skewed ``p``,
    are finished with Gumbel top-k over the items they do not have yet, which is the
    same conditional distribution.
    """
    n_items = len(p)
    starts = np.r_[0, np.cumsum(counts)].astype(np.int64)
    dense = counts > n_items // 2
    out = np.empty(int(starts[-1]), dtype=np.int32)
    prob, alias = _alias_table(p)
    got = _draw_distinct(np.where(dense, 0, counts), starts, prob, alias, out, rng)
    finish = np.flatnonzero(got < counts)
    log_p = np.log(p)
    per_block = max(1, _DENSE_CELLS // n_items)
    for first in range(0, len(finish), per_block):
        block = finish[first : first + per_block]
        scores = log_p[None, :] + rng.gumbel(size=(len(block), n_items))
        for row, u in enumerate(block):  # rule out the items the user already has
            scores[row, out[starts[u] : starts[u] + got[u]]] = -np.inf
        need = counts[block] - got[block]
        top = np.argpartition(-scores, int(need.max()) - 1, axis=1)[:, : need.max()]
        top = np.take_along_axis(top, np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1), axis=1)
        for row, u in enumerate(block):
            out[starts[u] + got[u] : starts[u + 1]] = top[row, : need[row]]
    return out


def _alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table: draw ``j`` uniform, keep it with ``prob[j]``, else ``alias[j]``."""
    n = len(p)
    scaled = p * n
    prob = np.ones(n)
    alias = np.arange(n)
    small = list(np.flatnonzero(scaled < 1))
    large = list(np.flatnonzero(scaled >= 1))
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s], alias[s] = scaled[s], g
        scaled[g] -= 1 - scaled[s]
        (small if scaled[g] < 1 else large).append(g)
    return prob, alias


@numba.njit(cache=True)
def _draw_distinct(counts, starts, prob, alias, out, rng):
    n_items = len(prob)
    seen = np.zeros(n_items, dtype=np.bool_)
    got = np.zeros(len(counts), dtype=np.int64)
    for u in range(len(counts)):
        c = counts[u]
        base = starts[u]
        k = 0
        limit = 50 * c + 1000  # beyond this, the rest is drawn densely
        draws = 0
        while k < c and draws < limit:
            j = min(int(rng.random() * n_items), n_items - 1)
            if rng.random() >= prob[j]:
                j = alias[j]
            draws += 1
            if not seen[j]:
                seen[j] = True
                out[base + k] = j
                k += 1
        for t in range(k):
            seen[out[base + t]] = False
        got[u] = k
    return got


def _familiar(weight: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Exactly ``round(fraction * n)`` pairs, sampled ∝ ``weight`` without replacement."""
    n = len(weight)
    k = round(fraction * n)
    flag = np.zeros(n, dtype=bool)
    if k == 0:
        return flag
    keys = np.log(rng.random(n)) / weight  # Efraimidis–Spirakis: the k largest keys
    flag[np.argpartition(-keys, k - 1)[:k]] = True
    return flag
