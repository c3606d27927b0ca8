"""The cyclic simulator's round loop, compiled (and cached) by numba once per family.

:func:`run_rounds` does the user order, the feedback lookup, the cumulative counts,
the oracle budgets, the optional log and sequential or batched updates; it calls the
``decide``/``update`` kernels of :mod:`receval.recommenders.bandits._kernels` that
the type of the model state ``st`` selects when the loop is compiled: a tuple of
equally typed arrays is the item policies' state, a mixed tuple the kNN bandit's, a
2-d array a fixed score matrix (models refitted between calls). So each family gets its own
specialised, cached loop, and a command compiles only the families it runs.

numba keys the on-disk cache of :func:`run_rounds` on this file's source alone, and the
kernels it calls are compiled into it: after changing a kernel, change this file too
(or clear the cache), or the old kernel keeps running (last kernel change: the kNN
bandit's agreement in both directions and UCB's δ decay and pull counts).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from receval.recommenders.bandits._kernels import item_decide, item_update, knn_decide, knn_update, score_decide
from receval.recommenders.bandits._rng import bounded

# column order of the per-round output
COLUMNS = ("n_recommendations", "n_distinct", "tp", "fp", "unknown", "active_users", "oracle_tp", "oracle_fp")


def _decide(st, s, cell, mask, u, step, n_avail):
    """The next item for user ``u`` (compiled only: the implementation follows ``st``'s type)."""
    raise NotImplementedError


def _update(st, u, i, fb):
    """Learn from feedback ``fb`` on (u, i) (compiled only; fixed scores learn nothing)."""
    raise NotImplementedError


@overload(_decide)
def _decide_for(st, s, cell, mask, u, step, n_avail):
    if isinstance(st, types.Array):
        return lambda st, s, cell, mask, u, step, n_avail: score_decide(st, s, cell, mask, u, step, n_avail)
    if isinstance(st, types.UniTuple):
        return lambda st, s, cell, mask, u, step, n_avail: item_decide(st, s, cell, mask, u, step, n_avail)
    return lambda st, s, cell, mask, u, step, n_avail: knn_decide(st, s, cell, mask, u, step, n_avail)


@overload(_update)
def _update_for(st, u, i, fb):
    if isinstance(st, types.Array):
        return lambda st, u, i, fb: None
    if isinstance(st, types.UniTuple):
        return lambda st, u, i, fb: item_update(st, u, i, fb)
    return lambda st, u, i, fb: knn_update(st, u, i, fb)


@njit(cache=True)
def run_rounds(
    st,
    s,
    cell,
    mask,
    label,
    avail,
    given,
    pos_u,
    neg_u,
    counters,
    out,
    t0,
    t1,
    n_per_round,
    order_mode,
    batched,
    log,
    record,
):
    """Run rounds ``t0..t1-1``; returns the number of the first round not run.

    ``log`` rows are (round, user, item, feedback); ``record`` says whether to fill it.
    """
    n_users = cell.shape[0]
    active = np.empty(n_users, np.int64)
    buf_u = np.empty(n_users * n_per_round, np.int64)
    buf_i = np.empty(n_users * n_per_round, np.int64)
    buf_f = np.empty(n_users * n_per_round, np.int8)
    for t in range(t0, t1):
        na = 0
        for u in range(n_users):
            if avail[u] > 0:
                active[na] = u
                na += 1
        if na == 0:
            return t
        if order_mode == 0:
            for j in range(na - 1, 0, -1):
                r = bounded(s, j + 1)
                tmp = active[j]
                active[j] = active[r]
                active[r] = tmp
        nb = 0
        for step in range(na):
            u = active[step] if order_mode == 0 else active[bounded(s, na)]
            for _ in range(n_per_round):
                if avail[u] == 0:
                    break
                i = _decide(st, s, cell, mask, u, counters[0], avail[u])
                fb = label[u, i]
                counters[0] += 1
                given[u] += 1
                if cell[u, i] & 2 == 0:
                    cell[u, i] |= 2
                    counters[1] += 1
                    if fb == 1:
                        counters[2] += 1
                    elif fb == 0:
                        counters[3] += 1
                    else:
                        counters[4] += 1
                    if mask & 2:
                        avail[u] -= 1
                if record:
                    n = counters[0] - 1
                    log[n, 0] = t
                    log[n, 1] = u
                    log[n, 2] = i
                    log[n, 3] = fb
                if batched:
                    buf_u[nb] = u
                    buf_i[nb] = i
                    buf_f[nb] = fb
                    nb += 1
                else:
                    _update(st, u, i, fb)
        for j in range(nb):
            _update(st, buf_u[j], buf_i[j], buf_f[j])
        otp = 0
        ofp = 0
        for u in range(n_users):
            otp += min(given[u], pos_u[u])
            ofp += min(given[u], neg_u[u])
        out[t, 0] = counters[0]
        out[t, 1] = counters[1]
        out[t, 2] = counters[2]
        out[t, 3] = counters[3]
        out[t, 4] = counters[4]
        out[t, 5] = na
        out[t, 6] = otp
        out[t, 7] = ofp
    return t1
