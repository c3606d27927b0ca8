"""Stochastic rankings: a Plackett–Luce sampler over any recommender's scores.

A Plackett–Luce ranker with temperature τ draws the item at each rank with probability
proportional to exp(score / τ) among the items not drawn yet. Sampling it is the Gumbel-top-k
trick: add independent standard Gumbel noise to score / τ and sort (Yellott 1977; Kool, van Hoof
& Welling, ICML 2019), so K rankings of length k cost K sorts of the candidates. Expected
exposure (:func:`receval.metrics.exposure.expected_exposure_sampled`) scores the samples; a large
τ spreads exposure (low EE-D), τ → 0 gives the deterministic ranking back — the trade-off of
Diaz et al. (CIKM 2020). Excluded items (score −inf, or the stored entries of ``exclude``) are
never drawn; a user with fewer than k candidates gets a list padded with -1.

Examples
--------
>>> scores = np.array([[3.0, 1.0, 2.0]])
>>> plackett_luce_rankings(scores, 2, n_samples=3, seed=0).shape
(3, 1, 2)
>>> plackett_luce_rankings(scores, 3, n_samples=1, seed=0, temperature=1e-9).tolist()  # τ → 0: sorted
[[[0, 2, 1]]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from receval.errors import ConfigError

__all__ = ["plackett_luce_probability", "plackett_luce_rankings", "sample_rankings"]


def _check(k: int, n_samples: int, temperature: float) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ConfigError(f"the list length k must be a positive integer, got {k!r}", parameters=["k"])
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples <= 0:
        raise ConfigError(
            f"the number of sampled rankings K must be a positive integer, got {n_samples!r}", parameters=["n_samples"]
        )
    if not (np.isfinite(temperature) and temperature > 0):
        raise ConfigError(
            f"the temperature must be a finite number > 0, got {temperature!r}", parameters=["temperature"]
        )


def plackett_luce_rankings(
    scores: np.ndarray,
    k: int,
    *,
    n_samples: int,
    seed: int,
    temperature: float = 1.0,
    exclude: sp.spmatrix | None = None,
) -> np.ndarray:
    """``n_samples`` Plackett–Luce rankings of length ``k`` per user row of ``scores``.

    Parameters
    ----------
    scores : float array (n_users, n_items)
        Any recommender's scores; −inf marks an item that must not be drawn.
    k : int
        List length (at most the number of items; shorter lists are padded with -1).
    n_samples : int
        K, the rankings sampled per user (> 0).
    seed : int
        Seed of the numpy Generator: same seed, same rankings.
    temperature : float
        τ > 0: the scores are divided by it.
    exclude : sparse (n_users, n_items) or None
        Stored entries are never drawn (the users' training items).

    Returns
    -------
    int array (n_samples, n_users, k)
        Item indices in rank order, -1 where a user has run out of candidates.
    """
    _check(k, n_samples, temperature)
    logits = np.array(scores, dtype=np.float64) / temperature
    if exclude is not None:
        coo = sp.coo_matrix(exclude)
        logits[coo.row, coo.col] = -np.inf
    rng = np.random.default_rng(seed)
    n_users, n_items = logits.shape
    depth = min(k, n_items)
    out = np.full((n_samples, n_users, k), -1, dtype=np.int64)
    allowed = ~np.isnan(logits) & (logits > -np.inf)
    for s in range(n_samples):
        keys = logits + rng.gumbel(size=logits.shape)
        keys[~allowed] = -np.inf
        if depth < n_items:
            top = np.argpartition(-keys, depth - 1, axis=1)[:, :depth]
        else:
            top = np.tile(np.arange(n_items), (n_users, 1))
        chosen = np.take_along_axis(keys, top, axis=1)
        order = np.argsort(-chosen, axis=1, kind="stable")
        ranked = np.take_along_axis(top, order, axis=1)
        ranked[~np.isfinite(np.take_along_axis(chosen, order, axis=1))] = -1
        out[s, :, :depth] = ranked
    return out


def plackett_luce_probability(scores: np.ndarray, ranking: np.ndarray, temperature: float = 1.0) -> float:
    """The probability that a Plackett–Luce ranker over ``scores`` (one user's, a 1-d array) ranks ``ranking`` first.

    Examples
    --------
    >>> round(plackett_luce_probability(np.log([2.0, 1.0]), np.array([0, 1])), 6)  # 2 / 3, then 1
    0.666667
    """
    weights = np.exp((np.asarray(scores, dtype=np.float64) - np.max(scores)) / temperature)
    remaining = float(weights.sum())
    probability = 1.0
    for item in ranking:
        probability *= float(weights[item]) / remaining
        remaining -= float(weights[item])
    return probability


def sample_rankings(
    model: Any,
    users: np.ndarray,
    k: int,
    *,
    n_samples: int,
    seed: int,
    temperature: float = 1.0,
    exclude: sp.spmatrix | None = None,
) -> np.ndarray:
    """Plackett–Luce rankings over a fitted recommender's scores of ``users`` (:func:`plackett_luce_rankings`).

    Examples
    --------
    >>> from receval import Interactions
    >>> from receval.recommenders import make
    >>> model = make("popularity").fit(Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 4, 5]))
    >>> sample_rankings(model, np.array([0, 1]), 2, n_samples=4, seed=1).shape
    (4, 2, 2)
    """
    _check(k, n_samples, temperature)
    users = np.asarray(users, dtype=np.int64)
    scores = np.asarray(model.score(users), dtype=np.float64)
    rows = None if exclude is None else sp.csr_matrix(exclude)[users]
    return plackett_luce_rankings(scores, k, n_samples=n_samples, seed=seed, temperature=temperature, exclude=rows)
