"""Fuzz the online recommenders' numba kernels that index buffers, over extreme parameters.

The kernels of :mod:`receval.recommenders.bandits._kernels` index per-item and per-user
buffers (``touched``, ``cand``, ``nn_idx``, ``liked_list``, ``sf``, ``lvl``) with values they
compute; numba does not check those indices unless ``NUMBA_BOUNDSCHECK=1``. The properties
here call every kernel on fitted states with extreme parameters (priors from 10⁻³⁰⁰ to
10³⁰⁰ where no Beta law is drawn from them, 10⁻⁶ to 10¹⁰ where one is, δ up to 1.7·10³⁰⁸,
k up to 2⁷⁰, step counts up to 2⁶²) and random availability: a decision is an available
item whenever one is left, and an update keeps the counts' shapes.
:func:`test_the_properties_hold_under_numba_boundscheck` runs them again in a fresh process
compiled with bounds checks, where an out-of-bounds index raises ``IndexError`` instead of
reading or writing past a buffer.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from receval import Interactions
from receval.data.interactions import RatingScale
from receval.errors import ConfigError
from receval.recommenders.bandits import make_online
from receval.recommenders.bandits._codes import MIN_BETA
from receval.recommenders.bandits._kernels import (
    item_decide,
    item_update,
    knn_decide,
    knn_update,
    score_decide,
    uniform_available,
)
from receval.recommenders.bandits._rng import generator
from receval.simulate import simulate
from receval.split import holdout

EXTREME = [0.0, 1e-300, 1e-6, 1.0, 3.0, 1e300]
POSITIVE = [1e-6, 1.0, 1e10]  # Beta draws: refused below MIN_BETA; above 10¹⁰ a survival value takes 10⁵ steps
BOUNDSCHECK = os.environ.get("NUMBA_BOUNDSCHECK") == "1"
FUZZ = settings(max_examples=15 if BOUNDSCHECK else 40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def ratings(draw: st.DrawFn, nu: int | None = None, ni: int | None = None) -> Interactions:
    """1-6 users x 1-9 items (or ``nu`` x ``ni``), every user and item rated at least once, ratings 1-5."""
    nu = draw(st.integers(1, 6)) if nu is None else nu
    ni = draw(st.integers(1, 9)) if ni is None else ni
    extra = draw(st.lists(st.tuples(st.integers(0, nu - 1), st.integers(0, ni - 1)), max_size=30))
    pairs = sorted({*((u, u % ni) for u in range(nu)), *((i % nu, i) for i in range(ni)), *extra})
    values = draw(st.lists(st.integers(1, 5), min_size=len(pairs), max_size=len(pairs)))
    users, items = zip(*pairs, strict=True)
    return Interactions.from_arrays(list(users), list(items), values, scale=RatingScale(1, 5, 1))


@st.composite
def cells(draw: st.DrawFn, nu: int, ni: int) -> np.ndarray:
    """A simulator cell array: bit 0 training pair, bit 1 already recommended."""
    bits = draw(st.lists(st.integers(0, 3), min_size=nu * ni, max_size=nu * ni))
    return np.array(bits, np.uint8).reshape(nu, ni)


def item_models(draw: st.DrawFn) -> object:
    policies = [f"{kind}-{p}" for kind in ("item-bandit", "im-item-bandit") for p in ("egreedy", "ucb", "ts")]
    name = draw(st.sampled_from(["random", "popularity", "average", *policies]))
    if name not in policies:
        return make_online(name, threshold=draw(st.sampled_from([1, 3, 5])))
    alpha0, beta0 = draw(st.sampled_from(EXTREME)), draw(st.sampled_from(EXTREME))
    offset = draw(st.sampled_from(EXTREME))
    if name.endswith("ts"):  # priors that Thompson sampling draws from in reasonable time
        alpha0, beta0, offset = min(alpha0, 1e10), min(beta0, 1e10), min(offset, 1e10)
        if min(alpha0, beta0) + offset < MIN_BETA:
            offset = 1.0
    return make_online(
        name,
        threshold=draw(st.sampled_from([1, 3, 5])),
        epsilon=draw(st.sampled_from([0.0, 1e-300, 0.5, 1.0])),
        epsilon_decay=draw(st.sampled_from([0.0, 1e300])),
        delta=draw(st.sampled_from([0.0, 1e-300, 1.0, 1e300, 1.7e308])),
        delta_decay=draw(st.sampled_from([0.0, 1e-300, 1e300])),
        pulls=draw(st.sampled_from(["all", "feedback"])),
        alpha0=alpha0,
        beta0=beta0,
        draw_offset=offset,
    )


def knn_model(draw: st.DrawFn) -> object:
    return make_online(
        "knn-bandit",
        threshold=draw(st.sampled_from([1, 3, 5])),
        k=draw(st.sampled_from([1, 2, 5, 10**6, 2**63, 2**70, 1e300])),
        alpha0=draw(st.sampled_from(POSITIVE)),
        beta0=draw(st.sampled_from(POSITIVE)),
        agreement=draw(st.sampled_from(["positive", "both"])),
    )


def _available(cell: np.ndarray, mask: int, u: int) -> np.ndarray:
    return np.flatnonzero((cell[u] & mask) == 0)


def _drive(decide, update, state, cell: np.ndarray, mask: int, step: int, seed: int, feedback: list[int]) -> None:
    """Every user decides and learns until no item is left (or the feedback runs out); each choice is available."""
    s = generator(seed)
    cell = cell.copy()
    nu = cell.shape[0]
    for n, fb in enumerate(feedback):
        u = n % nu
        free = _available(cell, mask, u)
        if len(free) == 0:
            continue
        i = decide(state, s, cell, np.uint8(mask), u, step, len(free))
        assert i in free, (u, i, free)
        cell[u, i] |= 2
        update(state, u, i, fb)


@given(data=st.data())
@FUZZ
def test_item_kernels_choose_an_available_item(data: st.DataObject) -> None:
    train = data.draw(ratings())
    model = item_models(data.draw)
    state = model.fit(train).kernel_state()
    shapes = [a.shape for a in state]
    cell = data.draw(cells(train.n_users, train.n_items))
    feedback = data.draw(st.lists(st.sampled_from([-1, 0, 1]), max_size=3 * train.n_users * train.n_items))
    step = data.draw(st.sampled_from([0, 1, 2**62]))
    _drive(item_decide, item_update, state, cell, data.draw(st.sampled_from([1, 2, 3])), step, 7, feedback)
    assert [a.shape for a in state] == shapes


@given(data=st.data())
@FUZZ
def test_knn_kernels_choose_an_available_item(data: st.DataObject) -> None:
    train = data.draw(ratings())
    state = knn_model(data.draw).fit(train).kernel_state()
    cell = data.draw(cells(train.n_users, train.n_items))
    feedback = data.draw(st.lists(st.sampled_from([-1, 0, 1]), max_size=3 * train.n_users * train.n_items))
    _drive(knn_decide, knn_update, state, cell, data.draw(st.sampled_from([1, 2, 3])), 0, 3, feedback)
    liked, n_liked = state[0], state[2]
    assert (n_liked == liked.sum(axis=1)).all()  # the list of liked items holds each liked item once


@given(data=st.data())
@FUZZ
def test_score_and_uniform_kernels_choose_an_available_item(data: st.DataObject) -> None:
    nu, ni = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 9))
    cell = data.draw(cells(nu, ni))
    values = st.sampled_from([-np.inf, -1e308, 0.0, 1.0, 1e308, np.inf])
    scores = np.array(data.draw(st.lists(values, min_size=nu * ni, max_size=nu * ni))).reshape(nu, ni)
    mask = data.draw(st.sampled_from([1, 2, 3]))
    s = generator(data.draw(st.integers(0, 2**32 - 1)))
    for u in range(nu):
        free = _available(cell, mask, u)
        if len(free):
            assert score_decide(scores, s, cell, np.uint8(mask), u, 0, len(free)) in free
            assert uniform_available(s, cell, np.uint8(mask), u, len(free)) in free


@given(data=st.data())
@settings(max_examples=6 if BOUNDSCHECK else 15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_simulations_with_extreme_parameters_stay_in_bounds(data: st.DataObject) -> None:
    """The compiled round loop (its user order, log, batch buffers) around each family's kernels."""
    train, test = holdout(data.draw(ratings()), 0.3, seed=data.draw(st.integers(0, 9)))
    exclude_train = data.draw(st.booleans())
    assume(not exclude_train or len(set(zip(train.users, train.items, strict=True))) < train.n_users * train.n_items)
    model = data.draw(st.sampled_from(["item", "knn", "scores"]))
    chosen = item_models(data.draw) if model == "item" else knn_model(data.draw) if model == "knn" else "item-knn"
    with warnings.catch_warnings():  # a test part without positives or negatives: NaN Recall or Fallout
        warnings.simplefilter("ignore")
        run = simulate(
            chosen,
            train,
            test,
            rounds=data.draw(st.integers(1, 12)),
            threshold=data.draw(st.sampled_from([1, 3, 5])),
            n_per_round=data.draw(st.integers(1, 4)),
            order=data.draw(st.sampled_from(["random", "uniform-with-replacement"])),
            updates=data.draw(st.sampled_from(["sequential", "batched"])),
            allow_repeats=data.draw(st.booleans()),
            exclude_train=exclude_train,
            refit_every=2,
            seed=data.draw(st.integers(0, 2**32 - 1)),
            record_log=True,
        )
    log = run.log
    assert log is not None and len(log) == run.table["n_recommendations"].iloc[-1]
    assert log["user"].between(0, train.n_users - 1).all() and log["item"].between(0, train.n_items - 1).all()


@pytest.mark.parametrize(
    ("name", "params", "word"),
    [
        ("item-bandit-ucb", {"alpha0": float("inf")}, "alpha0=inf"),
        ("item-bandit-egreedy", {"delta": float("nan")}, "delta=nan"),
        ("item-bandit-ts", {"draw_offset": float("inf")}, "draw_offset=inf"),
        ("knn-bandit", {"beta0": float("inf")}, "beta0=inf"),
        ("knn-bandit", {"k": float("nan")}, "k=nan"),
        ("knn-bandit", {"k": float("inf")}, "k=inf"),
        ("knn-bandit", {"alpha0": 1e-300}, "at least 1e-06"),
        ("item-bandit-ts", {"alpha0": 1e-10, "beta0": 1e-10}, "at least 1e-06"),
    ],
)
def test_non_finite_parameters_are_refused_by_name(name: str, params: dict, word: str) -> None:
    train = Interactions.from_arrays([0, 1], [0, 1], [5, 2])
    with pytest.raises(ConfigError, match=word):
        make_online(name, threshold=4, **params).fit(train)


def test_a_huge_neighbour_count_is_every_other_user() -> None:
    """k ≥ 2⁶³ was converted to a negative int inside the kernel (an index below every buffer)."""
    train = Interactions.from_arrays([0, 0, 1, 2], [0, 1, 0, 1], [5, 5, 5, 5], scale=RatingScale(1, 5, 1))
    state = make_online("knn-bandit", threshold=4, k=2**70).fit(train).kernel_state()
    cell = np.zeros((3, 2), np.uint8)
    cell[1, 0] = 1
    assert knn_decide(state, generator(0), cell, np.uint8(1), 1, 0, 1) == 1


def test_ucb_with_an_overflowing_bonus_chooses_an_available_item() -> None:
    """Priors whose sum overflows make every UCB score NaN; the argmax used to return item −1."""
    train = Interactions.from_arrays([0, 1], [0, 1], [5, 2])
    state = make_online("item-bandit-ucb", threshold=4, alpha0=1e308, beta0=1e308).fit(train).kernel_state()
    cell = np.zeros((2, 2), np.uint8)
    assert item_decide(state, generator(0), cell, np.uint8(3), 0, 0, 2) in (0, 1)


_BELOW_THE_SMALLEST_DOUBLE = """
import numpy as np
from receval import Interactions
from receval.data.interactions import RatingScale
from receval.recommenders.bandits import make_online
from receval.recommenders.bandits._kernels import _largest, item_decide
from receval.recommenders.bandits._rng import generator

train = Interactions.from_arrays([0, 1, 2], [0, 1, 2], [1, 1, 1], scale=RatingScale(1, 5, 1))  # no positive
state = make_online("item-bandit-ts", threshold=5, alpha0=0.0, beta0=0.0, draw_offset=1e-6).fit(train).kernel_state()
# v above S(x) for every double x > 0: each X lies below 5e-324, where the midpoint of (0, 5e-324) is 0
print(_largest(state, np.arange(3), np.array([0.9, 0.8, 0.7]), 3, 0.0, 1.0))
s = generator(0)
cell = np.zeros((3, 3), np.uint8)
print(sorted({int(item_decide(state, s, cell, np.uint8(2), 0, 0, 3)) for _ in range(300)}))
"""


def test_thompson_among_draws_below_the_smallest_double_ends() -> None:
    """Beta(10⁻⁶, 10⁻⁶) puts about half its mass below the smallest positive double: the bisection for the
    largest draw among several such arms used to loop forever once its interval was (0, 5e-324)."""
    done = subprocess.run(
        [sys.executable, "-c", _BELOW_THE_SMALLEST_DOUBLE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first, chosen = done.stdout.splitlines()
    assert first == "0"  # the draws are equal at double precision: the first candidate, as for any tie
    assert set(ast.literal_eval(chosen)) <= {0, 1, 2}  # an available arm each time


@pytest.mark.slow
def test_the_properties_hold_under_numba_boundscheck(tmp_path: Path) -> None:
    """This file's properties in a fresh process whose kernels are compiled with bounds checks."""
    if BOUNDSCHECK:
        pytest.skip("already running with bounds checks")
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", __file__, "-k", "not boundscheck"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "[100%]" in done.stdout and "s" not in done.stdout.split("[100%]")[0]  # nothing skipped: the control ran


@pytest.mark.skipif(not BOUNDSCHECK, reason="the positive control of the bounds-checked run")
def test_this_process_checks_bounds() -> None:
    """Under NUMBA_BOUNDSCHECK=1 an index past a buffer raises instead of reading memory."""
    from numba import njit

    @njit
    def past(a: np.ndarray, i: int) -> float:
        return a[i]

    with pytest.raises(IndexError):
        past(np.zeros(2), 2)
