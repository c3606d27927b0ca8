"""Cyclic (interactive) recommendation: recommend, read the feedback, learn, repeat.

:func:`simulate` trains a recommender on ``train``; then in each round t = 1..N every
active user receives ``n_per_round`` recommendations, the feedback comes from the
held-out ``test`` ratings (positive ≥ λ, negative < λ, unknown when the pair is not in
``test``), the model learns from it and the cumulative counts of the
false-positive study (Cuesta Fernández, BSc thesis, Universidad Autónoma de Madrid,
2021) are recorded.

Definitions (R_t = the distinct (user, item) pairs recommended up to round t; a repeated
recommendation, when allowed, is fed back again but does not enlarge R_t):

- TP_t / FP_t: pairs of R_t rated ≥ λ / < λ in ``test``; ``unknown``: pairs of R_t not in it.
- Precision = TP/|R_t|, AntiPrecision = FP/|R_t|, Recall = TP/(test positives),
  Fallout = FP/(test negatives), discovered = (TP + FP)/|test|.
- Normalised curves: ``recall_norm`` = TP_t / Σ_u min(k_u(t), P_u) and
  ``fallout_norm`` = FP_t / Σ_u min(k_u(t), N_u), where k_u(t) is the number of
  recommendations user u has received and P_u / N_u the user's recommendable test
  positives / negatives. The denominators are what an oracle that always picks a known
  positive (an anti-oracle that always picks a known negative) would reach with the
  same per-user budget, so both curves lie in [0, 1] and 1 means "as good (as bad) as
  possible so far". The thesis' own normalisation is not in the part of it we worked
  from; this one is ours.
- A test set without positives makes Recall (and ``recall_norm``) NaN, one without
  negatives Fallout NaN, each with a ``RuntimeWarning`` — never a silent zero.

Users with no available item left drop out; the run stops early (fewer rows) when all
have. The hot loop is numba-compiled per recommender family
(:mod:`receval.simulate._loop`); models other than the built-in online ones (e.g.
``user-knn``, ``item-knn``, ``hkv`` or any object with ``fit``/``score``) are scored
once for all users, recommended from by the same compiled loop, and refitted on the
training data plus the known feedback revealed so far every ``refit_every`` rounds:
between refits they do not learn (each refit costs one ``fit`` and one full
``score``, so ``refit_every=1`` with 500 rounds means 500 fits). A model with a
``refit(train)`` method is refitted through it after its first fit: HKV continues ALS
from its current factors for a few sweeps (:meth:`receval.recommenders.als.HKV.refit`).

Examples
--------
>>> from receval import Interactions
>>> data = Interactions.from_arrays([0, 1, 0, 0, 1, 1], [0, 1, 1, 2, 0, 2], [5, 5, 4, 1, 2, 5])
>>> train, test = data.subset([0, 1]), data.subset([2, 3, 4, 5])
>>> traj = simulate("random", train, test, rounds=5, threshold=4, seed=1)
>>> traj.table[["tp", "fp", "recall", "fallout"]].iloc[-1].tolist()
[2.0, 2.0, 1.0, 1.0]
>>> len(traj.table)  # every user exhausted after two rounds
2
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from receval.data.interactions import Interactions, distinct, pair_keys, relevant
from receval.errors import ConfigError, DataError, ReceValWarning
from receval.progress import Progress, progress_to
from receval.recommenders.bandits import KernelDriven, make_online
from receval.recommenders.bandits._rng import generator
from receval.recommenders.registry import SIMULATION_PRESETS
from receval.simulate._loop import COLUMNS, LoopOptions, SimState, run_rounds
from receval.validate import check_count, check_distinct, check_memory

__all__ = ["simulate", "simulate_many", "check_loop_options", "Trajectory", "METRICS"]

METRICS = ("precision", "recall", "anti_precision", "fallout", "discovered", "recall_norm", "fallout_norm")
_ORDERS = {"random": 0, "uniform-with-replacement": 1}
_UPDATES = ("sequential", "batched")
_MAX_CELLS = 2_000_000_000
_log = logging.getLogger(__name__)


@dataclass
class Trajectory:
    """The result of :func:`simulate`.

    Attributes
    ----------
    table
        One row per round (``round`` 1..): counts ``n_recommendations`` (with repeats),
        ``n_distinct`` (|R_t|), ``tp``, ``fp``, ``unknown``, ``active_users``,
        ``oracle_tp``, ``oracle_fp`` and the metrics of :data:`METRICS`.
    log
        With ``record_log=True``: one row per recommendation (``round``, ``user``,
        ``item`` as indices, ``feedback`` 1/0/−1 for positive/negative/unknown).
    algorithm, model
        The name (or class name) and the fitted model after the run.
    n_positives, n_negatives, n_test
        Test-set sizes behind Recall, Fallout and ``discovered``.
    settings
        The simulation options, for the record.
    """

    table: pd.DataFrame
    algorithm: str
    model: Any
    n_positives: int
    n_negatives: int
    n_test: int
    settings: dict[str, Any] = field(default_factory=dict)
    log: pd.DataFrame | None = None

    def final(self) -> dict[str, float]:
        """The metrics at the last round."""
        row = self.table.iloc[-1]
        return {m: float(row[m]) for m in METRICS}


def _check_pair(train: Interactions, test: Interactions) -> None:
    for label, obj in (("train", train), ("test", test)):
        if not isinstance(obj, Interactions):
            raise DataError(f"{label} must be a receval.Interactions, got {type(obj).__name__}")
    if train.n_users != test.n_users or train.n_items != test.n_items:
        raise DataError(
            f"train ({train.n_users} users x {train.n_items} items) and test ({test.n_users} x {test.n_items}) "
            "must share one id space: split one Interactions with receval.split"
        )
    if train.n_users * train.n_items > _MAX_CELLS:
        raise ConfigError(
            f"{train.n_users} users x {train.n_items} items is too large for the simulator's dense "
            "per-pair state (about 2 bytes per pair); sample users or items first"
        )


def _build_model(model_or_name: Any, preset: str) -> tuple[Any, str]:
    if isinstance(model_or_name, str):
        return make_online(model_or_name, preset=preset), model_or_name
    if not (hasattr(model_or_name, "fit") and hasattr(model_or_name, "score")):
        raise ConfigError(
            f"simulate needs an algorithm name or a model with fit(train) and score(users); "
            f"got {type(model_or_name).__name__}"
        )
    return model_or_name, type(model_or_name).__name__


def _configure(model: Any, threshold: float, unknown: str | None) -> None:
    params = model.get_params() if hasattr(model, "get_params") else {}
    if params.get("update_count", "positive") != "positive":  # MostPopular: the kernels count positives
        raise ConfigError("the cyclic simulator counts positive feedback only: use update_count='positive'")
    if "threshold" in params:
        model.set_params(threshold=threshold)
    if unknown is not None:
        if "unknown" not in params:
            raise ConfigError(
                f"unknown={unknown!r} applies to the item bandits only; {type(model).__name__} has no such option"
            )
        model.set_params(unknown=unknown)


def check_loop_options(order: object, updates: object, unknown: object) -> None:
    """The words of :func:`simulate`'s ``order``, ``updates`` and ``unknown``, or a ConfigError naming the one.

    Returns
    -------
    None
        When every word is known.

    Examples
    --------
    >>> check_loop_options("random", "batched", None)
    >>> check_loop_options("shuffled", "batched", None)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: order='shuffled' is not one of random, uniform-with-replacement
    """
    if order not in _ORDERS:
        raise ConfigError(f"order={order!r} is not one of {', '.join(_ORDERS)}", parameters=["order"])
    if updates not in _UPDATES:
        raise ConfigError(f"updates={updates!r} is not one of {', '.join(_UPDATES)}", parameters=["updates"])
    if unknown not in (None, "failure", "ignore"):
        raise ConfigError(
            f"unknown={unknown!r} is not one of 'failure', 'ignore' (or None for the model's own)",
            parameters=["unknown"],
        )


def simulate(
    model_or_name: Any,
    train: Interactions,
    test: Interactions,
    *,
    rounds: int,
    threshold: float | None = None,
    n_per_round: int = 1,
    order: str = "random",
    updates: str = "sequential",
    allow_repeats: bool = False,
    exclude_train: bool = True,
    unknown: str | None = None,
    preset: str = "standard",
    refit_every: int | None = None,
    seed: int = 0,
    record_log: bool = False,
    progress: Progress | None = None,
) -> Trajectory:
    """Run a cyclic recommendation simulation (see the module docs for the definitions).

    Parameters
    ----------
    model_or_name
        An algorithm name of :func:`receval.recommenders.bandits.make_online` (built
        with ``preset``) or a model with ``fit``/``score``. A given model is changed
        in place: its ``threshold`` (when it has one) is set to ``threshold``, it is
        fitted on ``train`` and it ends holding what it learned during the run.
    train, test
        Ratings over one id space; ``test`` gives the feedback (repeated pairs: the
        last rating counts).
    rounds
        Number of rounds N (≥ 1); fewer rows when every user runs out of items.
    threshold
        λ: ratings ≥ λ are positive (:func:`receval.data.interactions.relevant`), the
        others negative. Must lie on the rating scale. None (the default) is the
        library-wide default of ``train``'s scale
        (:meth:`~receval.data.interactions.RatingScale.relevance`, 1 on 1–5), which makes
        every rating positive (Fallout is then NaN, with a warning), so a study of false
        positives gives its λ.
    n_per_round
        Recommendations each user receives per round (one after the other).
    order
        ``"random"`` (default): every active user once per round in a fresh seeded
        random order; ``"uniform-with-replacement"``: the interactive-bandit protocol,
        each of the round's steps (as many as users active when the round starts)
        picks one of them uniformly at random with replacement (a step that picks a
        user who has run out of items meanwhile is skipped).
    updates
        ``"sequential"`` (default): each feedback updates the model before the next
        decision; ``"batched"``: the round's feedback is applied after the round, in the
        order it was received. The order is receval's choice: the thesis' cyclic process
        (§2.1.2) stores each recommendation's feedback and lets the utility function change
        at each of its N cycles (g¹ … g^N), without fixing whether a cycle is one
        recommendation or one round of all users.
    allow_repeats
        Whether an item may be recommended again to the same user (default no).
    exclude_train
        Whether items the user rated in ``train`` are never recommended (default yes).
    unknown
        ``"failure"`` or ``"ignore"``: overrides an item bandit's handling of unknown
        feedback (default: the model's own, set by its name and preset).
    preset
        ``"standard"``, ``"cyclorec"`` or ``"thesis"``: the parameters of models built by
        name (:data:`receval.recommenders.registry.PRESETS`) and the default of
        ``refit_every`` (:data:`~receval.recommenders.registry.SIMULATION_PRESETS`).
    refit_every
        Rounds between refits of models other than the built-in online ones (warm, through
        the model's ``refit`` method, when it has one); default the preset's: 10, or 1 for
        ``"thesis"``, whose cyclic process (§2.1.2) updates the utility function at every
        cycle.
    seed
        Seeds every random choice of the run (same seed ⇒ identical trajectory).
    record_log
        Keep one row per recommendation in :attr:`Trajectory.log`.
    progress
        Called as ``progress(rounds_done, rounds, "simulate NAME")`` after each round
        (default: the active callback of :func:`receval.progress.reporting`, if any).

    Returns
    -------
    Trajectory
        The per-round table (cumulative counts and the metrics of :data:`METRICS`),
        the test-set sizes behind them, the options and the model after the run.

    Examples
    --------
    Two users, two rounds of Popularity; the test set holds two positives (ratings ≥ 4)
    and two negatives, and each round finds one of each:

    >>> from receval import Interactions
    >>> data = Interactions.from_arrays([0, 1, 0, 0, 1, 1], [0, 1, 1, 2, 0, 2], [5, 5, 4, 1, 2, 5])
    >>> run = simulate("popularity", data.subset([0, 1]), data.subset([2, 3, 4, 5]), rounds=2, threshold=4)
    >>> run.table[["round", "tp", "fp"]].values.tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    >>> run.final()["recall"], run.final()["precision"]
    (1.0, 0.5)
    """
    _check_pair(train, test)
    if isinstance(rounds, bool) or not isinstance(rounds, int | np.integer) or rounds < 1:
        raise ConfigError(f"rounds={rounds!r} must be a positive integer")
    if not isinstance(n_per_round, int | np.integer) or n_per_round < 1:
        raise ConfigError(f"n_per_round={n_per_round!r} must be a positive integer")
    if preset not in SIMULATION_PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; use one of {', '.join(SIMULATION_PRESETS)}")
    if refit_every is None:
        refit_every = int(SIMULATION_PRESETS[preset]["refit_every"])
    if not isinstance(refit_every, int | np.integer) or refit_every < 1:
        raise ConfigError(f"refit_every={refit_every!r} must be a positive integer")
    check_loop_options(order, updates, unknown)
    if threshold is None:  # the one default of a missing λ
        threshold = train.scale.relevance().threshold
    train._check_threshold(threshold)
    test._check_threshold(threshold)
    model, name = _build_model(model_or_name, preset)
    _configure(model, threshold, unknown)
    test = test.deduplicate("last")
    nu, ni = train.n_users, train.n_items

    check_memory(  # sized before allocating: the user x item cell and label arrays, one byte each
        2.0 * nu * ni,
        f"the cyclic simulation's state for {nu:,} users x {ni:,} items",
        "filter the data (min_user_ratings / min_item_ratings) or simulate a sample of users",
    )
    keep_log = record_log or not isinstance(model, KernelDriven)  # refits read the feedback revealed so far
    _check_size(nu, ni, rounds, n_per_round, keep_log, updates == "batched")
    pos = relevant(test.ratings, threshold)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    cell = np.zeros((nu, ni), np.uint8)
    cell[train.users, train.items] = 1
    label = np.full((nu, ni), -1, np.int8)
    label[test.users, test.items] = pos.astype(np.int8)
    mask = np.uint8((1 if exclude_train else 0) | (0 if allow_repeats else 2))
    unique_train = np.zeros(nu, np.int64)
    if exclude_train:
        pairs = distinct(pair_keys(train.users, train.items, ni))
        unique_train = np.bincount(pairs // ni, minlength=nu)
    avail = (ni - unique_train).astype(np.int64)
    if avail.sum() == 0:
        raise DataError("every user has rated every item in train: there is nothing left to recommend")
    reachable = (cell[test.users, test.items] & 1) == 0 if exclude_train else np.ones(test.n_ratings, bool)
    pos_u = np.bincount(test.users[pos & reachable], minlength=nu).astype(np.int64)
    neg_u = np.bincount(test.users[~pos & reachable], minlength=nu).astype(np.int64)
    rng = generator(seed)
    sim = SimState(
        cell=cell,
        mask=mask,
        label=label,
        avail=avail,
        given=np.zeros(nu, np.int64),
        pos_u=pos_u,
        neg_u=neg_u,
        counters=np.zeros(5, np.int64),
        out=np.zeros((rounds, len(COLUMNS)), np.int64),
        log=np.zeros((rounds * nu * n_per_round if keep_log else 0, 4), np.int32),
    )
    opts = LoopOptions(int(n_per_round), _ORDERS[order], updates == "batched", keep_log)

    t0 = time.perf_counter()
    model.fit(train)
    _log.info("simulate %s: fitted on %d ratings in %.2f s", name, train.n_ratings, time.perf_counter() - t0)
    # after the fit, which may refuse the data (its memory is sized first): an error is then the only line
    if n_pos == 0:
        warnings.warn("the test set has no positive rating: Recall is undefined (NaN)", RuntimeWarning, stacklevel=2)
    if n_neg == 0:
        warnings.warn(
            ReceValWarning(
                f"the test set has no negative rating (below threshold {threshold:g}): Fallout is undefined (NaN); "
                "give the threshold that splits likes from dislikes, e.g. threshold=4 on a 1-5 scale",
                parameters=["threshold"],
            ),
            stacklevel=2,
        )
    notify, what = progress_to(progress), f"simulate {name}"
    counters = sim.counters

    def tick(t: int) -> None:  # after round t (1-based)
        _log.debug("simulate %s: round %d of %d, %d recommendations so far", name, t, rounds, counters[0])
        notify(t, rounds, what)

    notify(0, rounds, what)
    if isinstance(model, KernelDriven):
        done = _rounds(model.kernel_state(), rng, sim, opts, 0, rounds, tick)
    else:
        done = _run_refitted(model, train, test, rng, sim, opts, rounds, refit_every, tick)
    if done < rounds:  # every user ran out of items: the rest is done too
        notify(rounds, rounds, what)
    _log.info(
        "simulate %s: %d rounds (%d users, %d items), %d recommendations in %.2f s",
        name, done, nu, ni, counters[0], time.perf_counter() - t0,
    )  # fmt: skip

    table = _table(sim.out[:done], n_pos, n_neg, test.n_ratings)
    log_frame = None
    if record_log:
        log_frame = pd.DataFrame(sim.log[: counters[0]], columns=["round", "user", "item", "feedback"])
        log_frame["round"] += 1
        log_frame["feedback"] = log_frame["feedback"].astype(np.int8)
    settings = {
        "rounds": rounds,
        "threshold": threshold,
        "n_per_round": n_per_round,
        "order": order,
        "updates": updates,
        "allow_repeats": allow_repeats,
        "exclude_train": exclude_train,
        "unknown": unknown,
        "preset": preset,
        "refit_every": refit_every,
        "seed": seed,
    }
    return Trajectory(table, name, model, n_pos, n_neg, test.n_ratings, settings, log_frame)


def _check_size(nu: int, ni: int, rounds: int, n_per_round: int, keep_log: bool, batched: bool) -> None:
    """Refuse, before anything is allocated, a run whose state does not fit in memory (the estimate in the message).

    The state: the users x items cell and label arrays (one byte each), the per-round table (8 counts of
    8 bytes per round), the log (16 bytes per recommendation, when kept) and a batched round's feedback
    buffer (17 bytes per recommendation of one round).

    >>> _check_size(943, 1682, 500, 1, False, False)
    >>> try:
    ...     _check_size(943, 1682, 10**12, 1, False, False)
    ... except ConfigError as err:
    ...     print(str(err).split(" of memory")[0])
    the cyclic simulation with rounds=1000000000000 for 943 users x 1,682 items needs 64.0 TB
    """
    per_round = float(nu) * n_per_round  # recommendations in one round, at most
    n_bytes = 2.0 * nu * ni + 8.0 * len(COLUMNS) * rounds
    n_bytes += 16.0 * rounds * per_round if keep_log else 0.0
    n_bytes += 17.0 * per_round if batched else 0.0
    try:
        check_memory(
            n_bytes,
            f"the cyclic simulation with rounds={rounds} for {nu:,} users x {ni:,} items",
            "give fewer rounds or recommendations per round (n_per_round=), or filter the data "
            "(min_user_ratings / min_item_ratings)",
        )
    except ConfigError as err:  # the same message, naming the options (a command shows its flags)
        raise ConfigError(err.message, parameters=["rounds", "n_per_round"]) from None


def _rounds(
    state: Any,
    rng: np.random.Generator,
    sim: SimState,
    opts: LoopOptions,
    t0: int,
    t1: int,
    tick: Callable[[int], None],
) -> int:
    """:func:`run_rounds` for rounds ``t0..t1-1`` one round at a time, ``tick(t)`` after round t; the first not run.

    The compiled loop keeps all its state in ``sim``, ``state`` and ``rng``, so running it round
    by round gives the same trajectory as one call for all the rounds.
    """
    t = t0
    while t < t1:
        reached = run_rounds(state, rng, sim, opts, t, t + 1)
        if reached == t:
            return t
        t = reached
        tick(t)
    return t


def _run_refitted(
    model: Any,
    train: Interactions,
    test: Interactions,
    rng: np.random.Generator,
    sim: SimState,
    opts: LoopOptions,
    rounds: int,
    refit_every: int,
    tick: Callable[[int], None],
) -> int:
    """Score all users, run ``refit_every`` rounds, refit on train + known feedback, repeat."""
    nu, ni = train.n_users, train.n_items
    row_of = np.full((nu, ni), -1, np.int64)
    row_of[test.users, test.items] = np.arange(test.n_ratings)
    t = 0
    while True:
        scores = np.asarray(model.score(np.arange(nu)), dtype=np.float64)
        if scores.shape != (nu, ni):
            raise DataError(f"{type(model).__name__}.score returned shape {scores.shape}, expected {(nu, ni)}")
        scores = np.where(np.isnan(scores), -np.inf, scores)
        end = min(rounds, t + refit_every)
        scores = np.ascontiguousarray(scores)
        done = _rounds(scores, rng, sim, opts, t, end, tick)
        if done < end or end == rounds:
            return done
        t = end
        seen = sim.log[: sim.counters[0]]
        rows = row_of[seen[:, 1], seen[:, 2]]
        rows = np.unique(rows[rows >= 0])
        refit = getattr(model, "refit", model.fit)
        refit(Interactions.concat([train, test.subset(rows)]))  # revealed feedback joins the training data


def _table(out: np.ndarray, n_pos: int, n_neg: int, n_test: int) -> pd.DataFrame:
    df = pd.DataFrame(out.astype(np.float64), columns=list(COLUMNS))
    df.insert(0, "round", np.arange(1, len(df) + 1))
    nan = float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        size = df["n_distinct"].to_numpy()
        df["precision"] = np.where(size > 0, df["tp"] / np.maximum(size, 1), nan)
        df["recall"] = df["tp"] / n_pos if n_pos else nan
        df["anti_precision"] = np.where(size > 0, df["fp"] / np.maximum(size, 1), nan)
        df["fallout"] = df["fp"] / n_neg if n_neg else nan
        df["discovered"] = (df["tp"] + df["fp"]) / n_test if n_test else nan
        df["recall_norm"] = np.where(df["oracle_tp"] > 0, df["tp"] / df["oracle_tp"].clip(lower=1), nan)
        df["fallout_norm"] = np.where(df["oracle_fp"] > 0, df["fp"] / df["oracle_fp"].clip(lower=1), nan)
    return df


def simulate_many(
    algorithms: list[str] | tuple[str, ...],
    train: Interactions,
    test: Interactions,
    *,
    params: dict[str, dict[str, Any]] | None = None,
    preset: str = "standard",
    **options: Any,
) -> dict[str, Trajectory]:
    """:func:`simulate` for several named algorithms with the same options and seed.

    An entry ``NAME@TAG`` of ``algorithms`` is one more configuration of the algorithm
    NAME, under that label. ``params`` maps a name (or label) to its parameters
    (strings are converted); a ``refit_every`` entry there overrides the option for it.

    Returns
    -------
    dict of str to Trajectory
        One trajectory per name of ``algorithms``, each with ``algorithm`` set to that name.

    Examples
    --------
    >>> from receval import Interactions
    >>> data = Interactions.from_arrays([0, 1, 0, 0, 1, 1], [0, 1, 1, 2, 0, 2], [5, 5, 4, 1, 2, 5])
    >>> runs = simulate_many(["random", "popularity"], data.subset([0, 1]), data.subset([2, 3, 4, 5]),
    ...                      rounds=2, threshold=4, params={"popularity": {"count": "any"}})
    >>> sorted(runs), runs["popularity"].model.count
    (['popularity', 'random'], 'any')
    >>> runs = simulate_many(["popularity", "popularity@any"], data.subset([0, 1]), data.subset([2, 3, 4, 5]),
    ...                      rounds=2, threshold=4, params={"popularity@any": {"count": "any"}})
    >>> [(label, run.model.count) for label, run in runs.items()]
    [('popularity', 'positive'), ('popularity@any', 'any')]
    """
    check_distinct(algorithms, "algorithms")  # keyed by name: a second entry would be dropped silently
    params = params or {}
    unknown_names = set(params) - set(algorithms)
    if unknown_names:
        raise ConfigError(f"parameters given for {sorted(unknown_names)}, which are not among {list(algorithms)}")
    models = {}  # every model made (its parameters checked) before the first run
    for name in algorithms:
        kwargs = dict(params.get(name, {}))
        opts = dict(options)
        if "refit_every" in kwargs:
            value = kwargs.pop("refit_every")
            try:
                opts["refit_every"] = check_count(int(value) if isinstance(value, str) else value, "refit_every")
            except ValueError:  # int() of text that is no integer, and check_count's ConfigError alike
                raise ConfigError(f"{name}: refit_every={value!r}: give an integer of at least 1") from None
        models[name] = (make_online(name.partition("@")[0], preset=preset, **kwargs), opts)
    out = {}
    for name, (model, opts) in models.items():
        given = progress_to(opts.pop("progress", None))  # reported under the name asked for, not the class's

        def renamed(done: int, total: int, what: str, name: str = name, given: Progress = given) -> None:
            given(done, total, f"simulate {name}")

        out[name] = simulate(model, train, test, preset=preset, progress=renamed, **opts)
        out[name].algorithm = name
    return out
