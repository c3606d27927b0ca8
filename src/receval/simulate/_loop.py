"""The cyclic simulator's round loop, compiled (and cached) by numba once per family.

:func:`run_rounds` does the user order, the feedback lookup, the cumulative counts,
the oracle budgets, the optional log and sequential or batched updates on the
simulator's state (:class:`SimState`, one typed tuple of arrays that numba compiles
field by field) with the options of :class:`LoopOptions`; it calls the
``decide``/``update`` kernels of :mod:`receval.recommenders.bandits._kernels` that
the type of the model state ``st`` selects when the loop is compiled: a tuple of
equally typed arrays is the item policies' state, a mixed tuple the kNN bandit's, a
2-d array a fixed score matrix (models refitted between calls). So each family gets its own
specialised, cached loop, and a command compiles only the families it runs.

numba keys the on-disk cache of :func:`run_rounds` on this file's source alone, and the
kernels it calls are compiled into it: after changing a kernel, change this file too
(or clear the cache), or the old kernel keeps running (last kernel change: the kNN
bandit's neighbour count clamped before it is converted to an integer, and an argmax over
NaN scores falls back to a uniformly random available item).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from receval.recommenders.bandits._kernels import item_decide, item_update, knn_decide, knn_update, score_decide
from receval.recommenders.bandits._rng import bounded

# column order of the per-round output
COLUMNS = ("n_recommendations", "n_distinct", "tp", "fp", "unknown", "active_users", "oracle_tp", "oracle_fp")


class SimState(NamedTuple):
    """What the round loop reads and updates in place, besides the model's own state.

    The run's ``numpy.random.Generator`` travels beside it, as :func:`run_rounds`' own
    argument: numba types a tuple holding a Generator in Python, about 70 µs per call
    (9 µs without), and the loop is called once per round.

    Attributes
    ----------
    cell
        uint8 users x items: bit 0 = in the training data, bit 1 = recommended.
    mask
        The bits of ``cell`` that make an item unavailable (uint8).
    label
        int8 users x items: the held-out feedback, 1 positive, 0 negative, −1 unknown.
    avail, given
        Per user: items still available (0: the user dropped out), recommendations received.
    pos_u, neg_u
        Per user: recommendable test positives and negatives (the oracles' budgets).
    counters
        [decisions, distinct pairs, TP, FP, unknown].
    out
        rounds x :data:`COLUMNS`: the cumulative counts after each round.
    log
        recommendations x 4 (round, user, item, feedback), filled when ``LoopOptions.record``.
    """

    cell: np.ndarray
    mask: np.uint8
    label: np.ndarray
    avail: np.ndarray
    given: np.ndarray
    pos_u: np.ndarray
    neg_u: np.ndarray
    counters: np.ndarray
    out: np.ndarray
    log: np.ndarray


class LoopOptions(NamedTuple):
    """How the rounds run: recommendations per user and round, the user order, the update order, logging.

    ``order_mode`` 0 is a fresh random order of the active users each round, 1 uniform draws with
    replacement; ``batched`` applies a round's feedback after the round; ``record`` fills ``SimState.log``.
    """

    n_per_round: int
    order_mode: int
    batched: bool
    record: bool


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
def run_rounds(st, s, sim, opts, t0, t1):
    """Run rounds ``t0..t1-1`` of model state ``st`` on ``sim`` (:class:`SimState`) drawing from Generator ``s``.

    Returns the first round not run.
    """
    cell, mask, label, avail, given = sim.cell, sim.mask, sim.label, sim.avail, sim.given
    pos_u, neg_u, counters, out, log = sim.pos_u, sim.neg_u, sim.counters, sim.out, sim.log
    n_per_round, order_mode, batched, record = opts.n_per_round, opts.order_mode, opts.batched, opts.record
    n_users = cell.shape[0]
    active = np.empty(n_users, np.int64)
    n_buf = n_users * n_per_round if batched else 0
    buf_u = np.empty(n_buf, np.int64)
    buf_i = np.empty(n_buf, np.int64)
    buf_f = np.empty(n_buf, np.int8)
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
