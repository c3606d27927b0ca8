"""Numba decide/update kernels of the online recommenders, one pair per family.

The simulator's loop (:func:`receval.simulate._loop.run_rounds`) calls a family's
``decide(st, s, cell, mask, u, step, n_avail) -> item`` and ``update(st, u, i, fb)``.
``st`` is the family's tuple of state arrays (mutated in place), ``s`` the simulator's
``numpy.random.Generator`` (:mod:`receval.recommenders.bandits._rng`). Shared simulator
state:

- ``cell`` (uint8, users x items): bit 0 = the pair is in the training data, bit 1 = it
  has been recommended; an item is available to a user when ``cell & mask == 0``.
- ``label`` (int8, users x items): held-out feedback, 1 positive, 0 negative, −1 unknown.
- ``avail`` (per user): how many items are still available; 0 means the user dropped out.
- ``counters``: [decisions, distinct pairs, TP, FP, unknown].

Families: item policies (random, popularity, average, ε-greedy, UCB, Thompson sampling
over one arm per item), the kNN bandit, and fixed score matrices (models refitted
between calls). Ties in every argmax are broken uniformly at random.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from receval.recommenders.bandits._codes import ARGMAX, COUNT, RANDOM, THOMPSON, UCB
from receval.recommenders.bandits._rng import beta_sf, bounded, log_beta_norm


@njit(cache=True)
def uniform_available(s, cell, mask, u, n_avail):
    """A uniformly random available item of user ``u`` (rejection, then an exact scan)."""
    n_items = cell.shape[1]
    if n_avail * 8 >= n_items:
        for _ in range(64):
            i = bounded(s, n_items)
            if cell[u, i] & mask == 0:
                return i
    k = bounded(s, n_avail)
    for i in range(n_items):
        if cell[u, i] & mask == 0:
            if k == 0:
                return i
            k -= 1
    return -1


# ------------------------------------------------------------------ item policies
# state (a, b, p, m, w, sf, lvl, tau): a (successes + α⁰), b (failures + β⁰), p
# (parameters, see ItemBandit; p[9] decisions since the Thompson thresholds were drawn,
# p[10] how many between draws), and keys kept current by item_update. Argmax policies:
# m, w so that a decision is one tight scan, score = m + c·w with c = δ_step·√(ln t) for
# UCB (w[i] = 1/√pulls, δ_step = δ/(1 + p[11]·step)) and 0 otherwise; for UCB,
# w[n_items + i] holds arm i's observations that are not pulls (the prior, plus the
# training ratings when ItemBandit.pulls is "feedback"). Thompson sampling with X_i ~ Beta(a_i + o, b_i + o):
# m = log(1/B) of that law, thresholds τ_0 ≥ ... ≥ τ_{L-1} (tau), survival probabilities
# sf[i·L + k] = P(X_i > τ_k) and each user's start level lvl[u] (see thompson_decide).
@njit(cache=True)
def item_key(st, i):
    a, b, p, m, w, sf, tau = st[0], st[1], st[2], st[3], st[4], st[5], st[7]
    if int(p[0]) == THOMPSON:
        x, y = a[i] + p[6], b[i] + p[6]
        m[i] = log_beta_norm(x, y)
        n_levels = tau.shape[0]
        for k in range(n_levels):
            sf[i * n_levels + k] = beta_sf(x, y, tau[k], m[i])
        return
    kind = int(p[1])
    if kind == COUNT:
        m[i] = a[i]
        return
    n = a[i] + b[i]
    m[i] = a[i] / n if n > 0.0 else 0.0
    if kind == UCB:
        pulls = n - w[a.shape[0] + i]
        if pulls <= 0.0:
            m[i] = np.inf
            w[i] = 0.0
        else:
            w[i] = 1.0 / np.sqrt(pulls)


@njit(cache=True)
def item_keys(st):
    """Recompute every item's keys (after fit); Thompson thresholds are drawn at the next decision."""
    if int(st[2][0]) == THOMPSON:
        st[2][9] = st[2][10]
    for i in range(st[0].shape[0]):
        item_key(st, i)


@njit(cache=True)
def thompson_levels(st, s):
    """New thresholds: τ_k has about 2·3^k of one fresh draw per arm above it (bisection on
    the value; 0 when there are fewer arms), then every arm's P(X_i > τ_k). The thresholds
    only steer how much work a decision does, never which arm it picks."""
    a, b, p, tau = st[0], st[1], st[2], st[7]
    n = a.shape[0]
    draws = np.empty(n)
    for i in range(n):
        draws[i] = s.beta(a[i] + p[6], b[i] + p[6])
    want = 2
    for k in range(tau.shape[0]):
        lo = 0.0
        hi = 1.0
        for _ in range(50 if want <= n else 0):
            mid = 0.5 * (lo + hi)
            above = 0
            for i in range(n):
                above += draws[i] > mid
            if above >= want:
                lo = mid
            else:
                hi = mid
        tau[k] = lo
        want *= 3
    for i in range(n):
        item_key(st, i)
    p[9] = 0.0


@njit(cache=True)
def _largest(st, cand, vals, nc, lo, hi):
    """The candidate with the largest X_i, X_i = S_i⁻¹(vals[c]) in (lo, hi]: bisect the
    interval, keeping the candidates above the midpoint (X_i > x ⟺ v_i < S_i(x)). When lo and hi are
    adjacent doubles (draws of Beta(10⁻⁶, 10⁻⁶) lie below the smallest one), the midpoint is one of them
    and the interval splits no further: the bisection ends there."""
    a, b, p, m = st[0], st[1], st[2], st[3]
    while nc > 1 and hi - lo > 1e-15 * hi:
        mid = 0.5 * (lo + hi)
        adjacent = mid <= lo or mid >= hi
        above = 0
        for c in range(nc):
            i = cand[c]
            if vals[c] < beta_sf(a[i] + p[6], b[i] + p[6], mid, m[i]):
                cand[above] = i
                vals[above] = vals[c]
                above += 1
        if above > 0:
            nc = above
            lo = mid
        else:
            hi = mid
        if adjacent:
            break
    return cand[0]


@njit(cache=True)
def thompson_decide(st, s, cell, mask, u):
    """argmax_i X_i over u's available arms, X_i ~ Beta(a_i + o, b_i + o) independent: exact
    Thompson sampling that draws most arms only as far as "below a threshold".

    Going down the levels j = lvl[u], lvl[u] + 1, ..., L (τ_L = 0): an arm not yet found
    above a level is known to lie at or below τ_prev (τ = 1 at the start), so its
    survival value S_i(X_i), S_i(x) = P(X_i > x), is uniform on [S_i(τ_prev), 1]; one
    uniform v there places X_i above τ_j exactly when v < S_i(τ_j), and then
    X_i = S_i⁻¹(v). The first level with an arm above it holds the maximum, found among
    those arms by bisection on their survival functions (:func:`_largest`). Every X_i
    keeps its Beta law, so the choice is Thompson sampling's; the user's start level
    moves down when no arm cleared it and up when more than 8 did (work, not outcome).
    """
    p, sf, lvl, tau = st[2], st[5], st[6], st[7]
    if p[9] >= p[10]:
        thompson_levels(st, s)
    p[9] += 1.0
    n_levels = tau.shape[0]
    row = cell[u]
    cand = np.empty(row.shape[0], np.int64)
    vals = np.empty(row.shape[0])
    start = int(lvl[u])
    prev = -1
    j = start
    while True:
        hi = 1.0 if prev < 0 else tau[prev]
        lo = 0.0 if j == n_levels else tau[j]
        nc = 0
        for i in range(row.shape[0]):
            if row[i] & mask:
                continue
            s_hi = 0.0 if prev < 0 else sf[i * n_levels + prev]
            s_lo = 1.0 if j == n_levels else sf[i * n_levels + j]
            v = s_hi + s.random() * (1.0 - s_hi)
            if v < s_lo or j == n_levels:
                cand[nc] = i
                vals[nc] = v
                nc += 1
        if j == start:
            if nc == 0 and start < n_levels:
                lvl[u] = start + 1
            elif nc > 8 and start > 0:
                lvl[u] = start - 1
        if nc > 0:
            return _largest(st, cand, vals, nc, lo, hi)
        if j == n_levels:
            return -1
        prev = j
        j += 1


@njit(cache=True)
def item_decide(st, s, cell, mask, u, step, n_avail):
    p, m, w = st[2], st[3], st[4]
    policy = int(p[0])
    if policy == RANDOM:
        return uniform_available(s, cell, mask, u, n_avail)
    if policy == ARGMAX and p[2] > 0.0:
        eps = p[2] / (1.0 + p[3] * step)
        if s.random() < eps:
            return uniform_available(s, cell, mask, u, n_avail)
    best = -np.inf
    bi = -1
    ties = 0
    if policy == THOMPSON:
        return thompson_decide(st, s, cell, mask, u)
    c = p[4] / (1.0 + p[11] * step) * np.sqrt(np.log(max(p[8], 1.0))) if int(p[1]) == UCB else 0.0
    row = cell[u]
    for i in range(row.shape[0]):
        if row[i] & mask:
            continue
        v = m[i] + c * w[i]
        if v > best:
            best = v
            bi = i
            ties = 1
        elif v == best:
            ties += 1
            if bounded(s, ties) == 0:
                bi = i
    if bi < 0:  # every score NaN (priors or δ so large that a sum overflows): no arm is better than another
        return uniform_available(s, cell, mask, u, n_avail)
    return bi


@njit(cache=True)
def item_update(st, u, i, fb):
    a, b, p = st[0], st[1], st[2]
    if fb == 1:
        a[i] += 1.0
        p[8] += 1.0
    elif fb == 0 or p[7] > 0.0:
        b[i] += 1.0
        p[8] += 1.0
    else:
        return
    item_key(st, i)


# ------------------------------------------------------------------ kNN bandit
@njit(cache=True)
def knn_decide(st, s, cell, mask, u, step, n_avail):
    liked, liked_list, n_liked, co, p, score, mark, touched, nn_idx, nn_x = st[:10]
    n_rated = st[11]
    n_users = liked.shape[0]
    k = n_users - 1 if p[0] >= n_users - 1 else int(p[0])  # compared as a float first: int() of k ≥ 2⁶³ wraps
    a0 = p[1]
    b0 = p[2]
    for j in range(k):
        nn_idx[j] = -1
        nn_x[j] = -1.0
    for v in range(n_users):
        if v == u:
            continue
        c = co[u, v]
        x = s.beta(a0 + c, b0 + n_rated[v] - c)
        if x > nn_x[k - 1]:
            j = k - 1
            while j > 0 and nn_x[j - 1] < x:
                nn_x[j] = nn_x[j - 1]
                nn_idx[j] = nn_idx[j - 1]
                j -= 1
            nn_x[j] = x
            nn_idx[j] = v
    nt = 0
    for j in range(k):
        v = nn_idx[j]
        if v < 0:
            continue
        x = nn_x[j]
        for q in range(n_liked[v]):
            i = liked_list[v, q]
            if cell[u, i] & mask:
                continue
            if mark[i] == 0:
                mark[i] = 1
                score[i] = 0.0
                touched[nt] = i
                nt += 1
            score[i] += x
    if nt == 0:
        return uniform_available(s, cell, mask, u, n_avail)
    best = -np.inf
    bi = -1
    ties = 0
    for q in range(nt):
        i = touched[q]
        mark[i] = 0
        v = score[i]
        if v > best:
            best = v
            bi = i
            ties = 1
        elif v == best:
            ties += 1
            if bounded(s, ties) == 0:
                bi = i
    if bi < 0:  # every weight NaN (an infinite prior): no candidate is better than another
        return uniform_available(s, cell, mask, u, n_avail)
    return bi


@njit(cache=True)
def knn_update(st, u, i, fb):
    """A rating joins the agreement counts once: positives always, negatives when p[3] (agreement "both")."""
    liked, liked_list, n_liked, co, p, disliked, n_rated = st[0], st[1], st[2], st[3], st[4], st[10], st[11]
    both = p[3] > 0.0
    if fb < 0 or liked[u, i] or (both and disliked[u, i]):
        return
    if fb == 1:
        for v in range(liked.shape[0]):
            if liked[v, i] and v != u:
                co[u, v] += 1
                co[v, u] += 1
        liked[u, i] = 1
        liked_list[u, n_liked[u]] = i
        n_liked[u] += 1
        n_rated[u] += 1
    elif both:
        for v in range(disliked.shape[0]):
            if disliked[v, i] and v != u:
                co[u, v] += 1
                co[v, u] += 1
        disliked[u, i] = 1
        n_rated[u] += 1


# ------------------------------------------------------------------ fixed scores
@njit(cache=True)
def score_decide(scores, s, cell, mask, u, step, n_avail):
    best = -np.inf
    bi = -1
    ties = 0
    for i in range(cell.shape[1]):
        if cell[u, i] & mask:
            continue
        v = scores[u, i]
        if v > best or bi < 0:
            best = v
            bi = i
            ties = 1
        elif v == best:
            ties += 1
            if bounded(s, ties) == 0:
                bi = i
    return bi
