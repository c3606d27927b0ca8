"""Off-policy estimators of a target policy's value from a bandit log (pure numpy on arrays).

A log holds, per decision i, the reward ``r_i`` of the action shown, the logging policy's
probability ``p_i = π₀(a_i | x_i)`` of that action (the propensity), the target policy's
probability ``e_i = π(a_i | x_i)`` of the same action and, for the model-based estimators,
a reward model's prediction ``q_i = q̂(x_i, a_i)`` and its expectation under the target,
``d_i = Σ_a π(a | x_i) q̂(x_i, a)``. With the importance weight ``w_i = e_i / p_i``
(clipped at ``clip`` when given: ``min(w_i, clip)``):

==========  =====================================================================  =========================
``dm``      mean(d)                                                                direct method
``ips``     mean(w r)                                                              Horvitz & Thompson 1952
``snips``   Σ w r / Σ w                                                            Swaminathan & Joachims 2015
``dr``      mean(d + w (r − q))                                                    Dudík et al. 2011
``switch``  mean(d + 1{w ≤ τ} w (r − q))                                           Wang et al. 2017 (OBP form)
``dros``    mean(d + λw/(w² + λ) (r − q))                                          Su et al., ICML 2020
==========  =====================================================================  =========================

Every estimate comes with a seeded percentile bootstrap interval (rows resampled with
replacement, the same replicates for every estimator) and diagnostics: the effective sample
size (Σw)²/Σw² (Kish), the largest weight and, when the caller gives it, the overlap (the
share of the target's mass on actions the logging policy can take).
:func:`replay` is Li et al.'s (WSDM 2011) replay for logs of a uniformly random policy;
:func:`slate_estimates` the top-k forms IIPS (Li et al. 2018), SIPS and RIPS (McInerney
et al. 2020; Kiyohara et al. 2022) for policies that factor over positions.

Bad input is refused before any work: a propensity outside (0, 1], a reward or model
value that is not a finite number (a ``DataError`` naming how many rows and the first).
The formulas follow Open Bandit Pipeline's ``obp/ope/estimators.py`` (st-tech/zr-obp, commit
51eba00f0dda5c26c1fa6826f544c60de485da52, ``_estimate_round_rewards`` of each class; switch-DR
there gates only the correction term, as here).

Examples
--------
>>> r = np.array([1.0, 0.0, 1.0]); p = np.array([0.5, 0.5, 0.25]); e = np.array([1.0, 0.0, 0.5])
>>> q = np.array([0.5, 0.5, 0.5]); d = np.array([0.5, 0.5, 0.5])
>>> est = estimate(r, p, e, q_logged=q, q_target=d, n_bootstrap=0)
>>> round(est["ips"].value, 4), round(est["snips"].value, 4), round(est["dr"].value, 4)
(1.3333, 1.0, 1.1667)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from receval.errors import ConfigError, DataError
from receval.vocabulary import OPE_ESTIMATORS

__all__ = [
    "ESTIMATORS",
    "MODEL_FREE",
    "Estimate",
    "estimate",
    "estimate_many",
    "round_values",
    "replay",
    "slate_estimates",
    "check_log_arrays",
]

ESTIMATORS: tuple[str, ...] = OPE_ESTIMATORS
"""The estimators of :func:`estimate`, in the order reports show them (:data:`receval.vocabulary.OPE_ESTIMATORS`)."""
MODEL_FREE: tuple[str, ...] = ("ips", "snips")
"""Those that need no reward model."""


@dataclass
class Estimate:
    """One estimator's value of one target policy, its interval and the diagnostics beside it.

    ``low``/``high``: the percentile bootstrap interval (NaN-free: equal to ``value`` without
    replicates); ``ess``: Kish's effective sample size of the weights; ``max_weight``: the
    largest importance weight; ``overlap``: the share of target mass on covered actions (None
    when not given); ``clipped``: rows whose weight was clipped.
    """

    value: float
    low: float
    high: float
    ess: float
    max_weight: float
    n: int
    overlap: float | None = None
    clipped: int = 0
    extra: dict[str, float] = field(default_factory=dict)


def _finite(name: str, x: np.ndarray) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise DataError(f"{name} must be numbers; found a value that is not") from None
    bad = ~np.isfinite(arr)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{name}: {int(bad.sum())} value(s) are not finite numbers (first at row {first}: {arr[first]})"
        )
    return arr


def check_log_arrays(reward: object, pscore: object, target: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reward, propensity and target-probability arrays as float64, or a one-line DataError.

    Returns
    -------
    tuple of numpy.ndarray
        ``reward``, ``pscore``, ``target``, each of one length.

    >>> check_log_arrays([1, 0], [0.5, 0.0], [1, 1])
    Traceback (most recent call last):
    ...
    receval.errors.DataError: propensity: 1 logged action(s) have a propensity outside (0, 1] (first at row 1: 0.0)
    """
    r = _finite("reward", reward)  # type: ignore[arg-type]
    p = _finite("propensity", pscore)  # type: ignore[arg-type]
    e = _finite("target probability", target)  # type: ignore[arg-type]
    if not len(r) == len(p) == len(e):
        raise DataError(f"reward ({len(r)}), propensity ({len(p)}) and target ({len(e)}) must have one length")
    if len(r) == 0:
        raise DataError("the log is empty: no decisions to estimate from")
    bad = (p <= 0.0) | (p > 1.0 + 1e-12)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"propensity: {int(bad.sum())} logged action(s) have a propensity outside (0, 1] "
            f"(first at row {first}: {p[first]})"
        )
    bad = (e < 0.0) | (e > 1.0 + 1e-12)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(f"target probability: {int(bad.sum())} value(s) outside [0, 1] (first at row {first})")
    return r, p, e


def round_values(
    reward: np.ndarray,
    weight: np.ndarray,
    q_logged: np.ndarray | None,
    q_target: np.ndarray | None,
    *,
    switch_tau: float = 10.0,
    dros_lambda: float = 10.0,
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Per-round numerator (and denominator, None for a plain mean) of every estimator.

    An estimator's value is Σ num / Σ den (den = 1 per row when None): the bootstrap
    resamples these columns.

    Returns
    -------
    dict
        Estimator name to (numerator, denominator or None) per round.

    >>> v = round_values(np.array([1.0, 0.0]), np.array([2.0, 0.5]), None, None)
    >>> sorted(v), v["ips"][0].tolist()
    (['ips', 'snips'], [2.0, 0.0])
    """
    out: dict[str, tuple[np.ndarray, np.ndarray | None]] = {
        "ips": (weight * reward, None),
        "snips": (weight * reward, weight),
    }
    if q_logged is None or q_target is None:
        return out
    resid = reward - q_logged
    out["dm"] = (q_target, None)
    out["dr"] = (q_target + weight * resid, None)
    out["switch"] = (q_target + np.where(weight <= switch_tau, weight, 0.0) * resid, None)
    out["dros"] = (q_target + dros_lambda * weight / (weight**2 + dros_lambda) * resid, None)
    return out


def estimate(
    reward: object,
    pscore: object,
    target: object,
    *,
    q_logged: object | None = None,
    q_target: object | None = None,
    clip: float | None = None,
    switch_tau: float = 10.0,
    dros_lambda: float = 10.0,
    overlap: float | None = None,
    n_bootstrap: int = 200,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Every estimator of :data:`ESTIMATORS` (only IPS and SNIPS without a reward model) on one log.

    Parameters
    ----------
    reward, pscore, target
        Per decision: the reward, π₀(a_i | x_i) and π(a_i | x_i).
    q_logged, q_target
        The reward model's prediction for the logged pair and its expectation under the target policy.
    clip
        Weights above it are clipped to it (None: no clipping); the clipped count is reported.
    switch_tau, dros_lambda
        Switch-DR's threshold τ on the weight and DRos' shrinkage λ (Su et al. 2020, Eq. 8).
    overlap
        The target's mass on covered actions, reported beside every estimate.
    n_bootstrap, alpha, seed
        Replicates, level and seed of the percentile bootstrap (0 replicates: interval = value).

    Returns
    -------
    dict of str to Estimate
        Estimator name to its :class:`Estimate`.

    Examples
    --------
    >>> est = estimate([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.5], [1, 1, 0, 1], n_bootstrap=50, seed=1)
    >>> est["ips"].value, est["snips"].value, est["ips"].ess, est["ips"].max_weight
    (1.0, 0.6666666666666666, 3.0, 2.0)
    """
    return estimate_many(
        reward, pscore, {"": (target, q_logged, q_target)}, clip=clip, switch_tau=switch_tau,
        dros_lambda=dros_lambda, overlaps={"": overlap}, n_bootstrap=n_bootstrap, alpha=alpha, seed=seed,
    )[""]  # fmt: skip


def estimate_many(
    reward: object,
    pscore: object,
    targets: Mapping[str, tuple[object, object | None, object | None]],
    *,
    clip: float | None = None,
    switch_tau: float = 10.0,
    dros_lambda: float = 10.0,
    overlaps: Mapping[str, float | None] | None = None,
    n_bootstrap: int = 200,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, dict[str, Estimate]]:
    """:func:`estimate` for several targets on one log, the bootstrap's resamples shared by all of them.

    ``targets`` maps a name to (target probabilities, q_logged, q_target) as :func:`estimate` takes them.
    Each resample is drawn once and every target's per-round values are summed over it in one
    matrix product, so k targets cost little more than one.

    Returns
    -------
    dict
        Target name to estimator name to :class:`Estimate`.

    >>> out = estimate_many([1, 0], [0.5, 0.5], {"a": ([1, 0], None, None), "b": ([0, 1], None, None)}, n_bootstrap=0)
    >>> out["a"]["ips"].value, out["b"]["ips"].value
    (1.0, 0.0)
    """
    if clip is not None and not (clip > 0 and math.isfinite(clip)):
        raise ConfigError(f"clip={clip!r} must be a positive number", parameters=["clip"])
    if not (switch_tau > 0 and dros_lambda > 0):
        raise ConfigError(f"switch_tau={switch_tau!r} and dros_lambda={dros_lambda!r} must be positive")
    if not (isinstance(n_bootstrap, int) and n_bootstrap >= 0) or not 0 < alpha < 1:
        raise ConfigError(f"n_bootstrap={n_bootstrap!r} must be a count and alpha={alpha!r} lie in (0, 1)")
    overlaps = overlaps or {}
    columns: list[np.ndarray] = []  # every target's per-round numerators and denominators, one column each
    plan: dict[str, dict[str, tuple[int, int | None]]] = {}
    facts: dict[str, tuple[float, float, int]] = {}
    r = p = np.empty(0)
    for name, (target, q_logged, q_target) in targets.items():
        r, p, e = check_log_arrays(reward, pscore, target)
        if (q_logged is None) != (q_target is None):
            raise ConfigError("give both q_logged and q_target (the reward model's predictions) or neither")
        ql = None if q_logged is None else _finite("reward model prediction (logged pairs)", q_logged)  # type: ignore[arg-type]
        qt = None if q_target is None else _finite("reward model prediction (target)", q_target)  # type: ignore[arg-type]
        for label, q in (("q_logged", ql), ("q_target", qt)):
            if q is not None and len(q) != len(r):
                raise DataError(f"{label} has {len(q)} values for {len(r)} decisions")
        w = e / p
        clipped = 0
        if clip is not None:
            clipped = int((w > clip).sum())
            w = np.minimum(w, clip)
        top = float(w.max())
        # Kish's (Σw)²/Σw² on w / max w: the same ratio, without Σw² overflowing to inf (a propensity of 1e-300)
        scaled = w / top if top > 0 else w
        sw, sw2 = float(scaled.sum()), float((scaled**2).sum())
        facts[name] = (sw * sw / sw2 if sw2 > 0 else 0.0, top, clipped)
        plan[name] = {}
        for k, (num, den) in round_values(r, w, ql, qt, switch_tau=switch_tau, dros_lambda=dros_lambda).items():
            columns.append(num)
            j_den = None
            if den is not None:
                columns.append(den)
                j_den = len(columns) - 1
            plan[name][k] = (len(columns) - 1 - (den is not None), j_den)
    n = len(r)
    if not columns:
        return {}
    matrix = np.column_stack(columns)

    def ratios(sums: np.ndarray, total: float) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for name, cols in plan.items():
            out[name] = {}
            for k, (j_num, j_den) in cols.items():
                base = total if j_den is None else float(sums[j_den])
                out[name][k] = float(sums[j_num]) / base if base > 0 else 0.0  # SNIPS without target mass: 0
        return out

    point = ratios(matrix.sum(axis=0), float(n))
    reps: dict[tuple[str, str], list[float]] = {(t, k): [] for t, cols in plan.items() for k in cols}
    rng = np.random.default_rng(seed)
    for _ in range(n_bootstrap):  # multiplicities of a resample: one bincount, then one matrix product
        counts = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
        for t, row in ratios(counts @ matrix, float(n)).items():
            for k, v in row.items():
                reps[(t, k)].append(v)
    result: dict[str, dict[str, Estimate]] = {}
    for name, cols in plan.items():
        ess, top, clipped = facts[name]
        result[name] = {}
        for k in (k for k in ESTIMATORS if k in cols):
            value = point[name][k]
            low = float(np.quantile(reps[(name, k)], alpha / 2)) if n_bootstrap else value
            high = float(np.quantile(reps[(name, k)], 1 - alpha / 2)) if n_bootstrap else value
            result[name][k] = Estimate(value, low, high, ess, top, n, overlaps.get(name), clipped if k != "dm" else 0)
    return result


def replay(reward: object, pscore: object, target: object, n_actions: object) -> tuple[float, int]:
    """Li et al.'s replay (WSDM 2011) on a log of a uniformly random policy: (value, rounds matched).

    A round counts with weight π(a_i | x_i): for a deterministic target that is "the target would
    have shown the logged item", and the value is the mean reward over those rounds. The
    propensities must be those of a uniform choice, 1/``n_actions`` of each round.

    Returns
    -------
    tuple of (float, int)
        The estimate and the number of rounds with a positive target probability.

    >>> replay([1, 0, 1], [0.5, 0.5, 0.5], [1, 0, 1], [2, 2, 2])
    (1.0, 2)
    >>> try:
    ...     replay([1, 0], [0.5, 0.25], [1, 0], [2, 2])
    ... except DataError as err:
    ...     print(str(err)[:60])
    replay needs a uniformly random logging policy: 1 round(s) h
    """
    r, p, e = check_log_arrays(reward, pscore, target)
    k = _finite("number of actions", n_actions)  # type: ignore[arg-type]
    bad = ~np.isclose(p * k, 1.0)
    if bad.any():
        raise DataError(
            f"replay needs a uniformly random logging policy: {int(bad.sum())} round(s) have a propensity other "
            f"than 1/(number of actions) (first at row {int(np.flatnonzero(bad)[0])})"
        )
    mass = float(e.sum())
    if mass == 0:
        raise DataError("replay: the target policy never chose a logged action, so no round matches")
    return float((e * r).sum() / mass), int((e > 0).sum())


def slate_estimates(reward: object, pscore: object, target: object) -> dict[str, float]:
    """IIPS, SIPS and RIPS of a top-k log, for policies that factor over positions.

    ``reward``, ``pscore`` and ``target`` are (n, k): per slate and position, the reward and the
    logging and target probabilities of the item shown there. The slate's joint probability is
    the product over positions (the factorisation is the assumption). The value is the expected
    sum of the slate's rewards. IIPS (independence: each position's reward depends on its own
    item) weighs position l by w_l; SIPS (standard: any dependence) by Π_l w_l; RIPS (cascade:
    a position's reward depends on the items above) by Π_{m ≤ l} w_m.

    Returns
    -------
    dict of str to float
        ``iips``, ``sips``, ``rips``.

    >>> est = slate_estimates([[1, 0]], [[0.5, 0.5]], [[1.0, 0.5]])
    >>> est["iips"], est["sips"], est["rips"]
    (2.0, 2.0, 2.0)
    """
    arrs = [np.asarray(x, dtype=np.float64) for x in (reward, pscore, target)]
    if arrs[0].ndim != 2 or any(a.shape != arrs[0].shape for a in arrs):
        raise DataError("slate estimators need reward, propensity and target arrays of one (n, k) shape")
    r, p, e = (a.reshape(arrs[0].shape) for a in check_log_arrays(*(a.ravel() for a in arrs)))
    w = e / p
    sips = w.prod(axis=1)
    rips = np.cumprod(w, axis=1)
    return {
        "iips": float((w * r).sum(axis=1).mean()),
        "sips": float((sips * r.sum(axis=1)).mean()),
        "rips": float((rips * r).sum(axis=1).mean()),
    }
