"""Off-policy evaluation checked against the simulator's ground truth.

:func:`ope_study` logs ``rounds`` decisions of a logging policy on the held-out ratings
(:func:`receval.simulate.logged.log_policy`), estimates the value of every target policy
with every estimator of :mod:`receval.stats.ope` (the reward model of DM and the doubly
robust family is a receval recommender with ``predict``, fitted on the log: ``biases`` by
default), and computes each target's true value: exactly, Σᵢ π(i | u) r(u, i) averaged over
the users, and by running it on-policy in the same logging pass (``on_policy``). It reports
each estimator's mean absolute error, its interval's mean width and coverage (the share of
targets whose interval holds the truth) and Kendall's τ-b between its ranking of the targets
and the true one.

A target is a policy kind of :mod:`receval.simulate.logged` (``egreedy:0.1``,
``softmax:0.5@item-knn``) or a table of action probabilities (a
:class:`~receval.simulate.logged.PolicyTable`, from
:func:`~receval.simulate.logged.policy_from_probs` or
:func:`~receval.simulate.logged.read_policy_table`). The log is either drawn here from the
``logging`` policy or given (``log``: a checked log table, e.g. from
:func:`~receval.simulate.logged.read_log`), its indices in ``test``'s id space.

A target that puts mass on actions the log never covers is named, with its uncovered share,
in a warning (the importance-weighted estimators cannot see that mass): for a drawn log the
covered actions are those the logging policy can take, for a given log the (user, item) pairs
it holds. Predictions of the reward model that are not finite are replaced by the log's mean
reward, with a warning giving their count.

Examples
--------
>>> from receval.data.synthetic import generate_with_truth
>>> data = generate_with_truth(n_users=40, n_items=15, n_ratings=300, seed=1, keep_complete=True)
>>> res = ope_study(data.data, data.complete, logging="egreedy:0.5", targets=["random", "greedy"],
...                 threshold=4, rounds=2000, seed=0, n_bootstrap=20)
>>> sorted(res.truth), sorted(res.error)
(['greedy', 'random'], ['dm', 'dr', 'dros', 'ips', 'snips', 'switch'])
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from receval.data.interactions import Interactions, RatingScale
from receval.errors import ConfigError, DataError, ReceValWarning
from receval.simulate.logged import BanditLog, PolicyTable, log_policy, policy_table, policy_value, reward_matrix
from receval.stats.agreement import tau_between
from receval.stats.ope import ESTIMATORS, Estimate, estimate_many

__all__ = ["OpeResult", "ope_study", "error_by_size", "reward_model_table", "support"]


@dataclass
class OpeResult:
    """What :func:`ope_study` found: per target the truth, per estimator and target the estimate, and summaries."""

    truth: dict[str, float]
    on_policy: dict[str, float]
    estimates: dict[str, dict[str, Estimate]]
    error: dict[str, float]
    kendall_tau: dict[str, float]
    width: dict[str, float]
    coverage: dict[str, float]
    log: BanditLog
    settings: dict[str, Any] = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        """One row per estimator and target: estimator, policy, estimate, low, high, truth, ess, max_weight, overlap.

        Returns
        -------
        pandas.DataFrame
            The long table behind :func:`receval.report.ope.plot_estimates`.

        >>> from receval.stats.ope import Estimate
        >>> res = OpeResult({"a": 0.5}, {}, {"ips": {"a": Estimate(0.4, 0.3, 0.6, 9.0, 2.0, 10)}}, {}, {}, {}, {},
        ...                 None)  # type: ignore[arg-type]
        >>> res.frame()[["estimator", "policy", "estimate", "truth"]].values.tolist()
        [['ips', 'a', 0.4, 0.5]]
        """
        rows = [
            {"estimator": k, "policy": p, "estimate": e.value, "low": e.low, "high": e.high, "truth": self.truth[p],
             "ess": e.ess, "max_weight": e.max_weight, "overlap": e.overlap}
            for k, row in self.estimates.items() for p, e in row.items()
        ]  # fmt: skip
        return pd.DataFrame(rows)

    def payload(self) -> dict[str, Any]:
        """The JSON form: truth, estimates, intervals, diagnostics, error, kendall_tau, width, coverage."""

        def clean(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "truth": self.truth,
            "on_policy": self.on_policy,
            "estimates": {k: {p: e.value for p, e in row.items()} for k, row in self.estimates.items()},
            "intervals": {k: {p: [e.low, e.high] for p, e in row.items()} for k, row in self.estimates.items()},
            "diagnostics": {
                p: {"ess": e.ess, "max_weight": e.max_weight, "overlap": e.overlap}
                for p, e in self.estimates["ips"].items()
            },
            "error": self.error,
            "kendall_tau": {k: clean(v) for k, v in self.kendall_tau.items()},
            "width": self.width,
            "coverage": self.coverage,
            "settings": self.settings,
        }


def support(target: PolicyTable, logging: PolicyTable, users: np.ndarray) -> float:
    """The share of the target's mass, over the logged rounds' users, on actions the logging policy takes.

    Returns
    -------
    float
        In [0, 1]; 1 is full support.

    >>> t = PolicyTable("t", np.array([[0.5, 0.5]])); l = PolicyTable("l", np.array([[1.0, 0.0]]))
    >>> support(t, l, np.array([0, 0]))
    0.5
    """
    covered = (target.probs[users] * (logging.probs[users] > 0)).sum(axis=1)
    return float(covered.mean())


def reward_model_table(model: str, log: BanditLog, test: Interactions) -> np.ndarray:
    """q̂(u, i) for every pair: receval recommender ``model`` (with ``predict``) fitted on the log's rewards.

    Non-finite predictions become the log's mean reward, with a warning giving their count.

    Returns
    -------
    numpy.ndarray
        users x items predictions.

    >>> from receval.simulate.logged import log_policy, policy_table
    >>> test = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 0, 1], [5, 1, 4, 2])
    >>> log = log_policy(policy_table("random", test, test, threshold=4), test, threshold=4, rounds=50)
    >>> reward_model_table("biases", log, test).shape
    (2, 2)
    """
    from receval.recommenders import make

    frame = log.frame
    fitted_on = Interactions(
        users=frame["user"].to_numpy(np.int64),
        items=frame["item"].to_numpy(np.int64),
        ratings=frame["reward"].to_numpy(np.float64),
        user_ids=test.user_ids,
        item_ids=test.item_ids,
        scale=RatingScale(0.0, 1.0),
    )
    reg = make(model)
    if not callable(getattr(reg, "predict", None)):
        raise ConfigError(f"reward model {model!r} cannot predict rewards (no predict); use e.g. biases or item-knn")
    reg.fit(fitted_on)
    nu, ni = test.n_users, test.n_items
    uu, ii = np.divmod(np.arange(nu * ni), ni)
    pred = np.asarray(reg.predict(uu, ii), dtype=np.float64).reshape(nu, ni)
    bad = ~np.isfinite(pred)
    if bad.any():
        warnings.warn(
            f"reward model {model!r} could not predict {int(bad.sum())} pair(s); they get the log's mean reward",
            ReceValWarning,
            stacklevel=2,
        )
        pred[bad] = float(frame["reward"].mean())
    return pred


def _given_log(log: pd.DataFrame, test: Interactions, logging: str) -> BanditLog:
    """A given log table's checks against the data: its user and item indices within ``test``'s id space."""
    for col, size in (("user", test.n_users), ("item", test.n_items)):
        values = log[col].to_numpy(np.int64)
        bad = values >= size
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"log {logging}: {int(bad.sum())} {col} index(es) beyond the data's {size} (first {values[first]} "
                f"at line {first + 2}); a log's indices are those of the data it was drawn from"
            )
    reward = log["reward"].to_numpy(np.float64)
    off = (reward < 0) | (reward > 1)
    if off.any():  # the truth it is compared with is a 0/1 reward (rating ≥ λ); the reward model's scale is 0..1
        first = int(np.flatnonzero(off)[0])
        raise DataError(
            f"log {logging}: {int(off.sum())} reward(s) outside 0..1 (first {reward[first]:g} at line {first + 2}); "
            "this study's reward is 1 for a rating ≥ λ, else 0"
        )
    return BanditLog(log.reset_index(drop=True), logging, "given in the log")


def ope_study(
    train: Interactions,
    test: Interactions,
    *,
    logging: str,
    targets: Sequence[str] | Mapping[str, str | PolicyTable],
    threshold: float,
    rounds: int | None = None,
    log: pd.DataFrame | None = None,
    seed: int = 0,
    reward_model: str = "biases",
    clip: float | None = None,
    n_bootstrap: int = 200,
) -> OpeResult:
    """Log with ``logging`` (or take ``log``), estimate every target with every estimator, compare with the truth.

    ``targets``: policy kinds (a list), or a mapping of names to policy kinds or
    :class:`~receval.simulate.logged.PolicyTable` (tables of action probabilities).
    ``rounds``: the decisions to log (required without ``log``); with ``log``, ``logging`` only
    labels it and the truth's on-policy runs take as many rounds as the log holds.

    Returns
    -------
    OpeResult
        Truth, estimates, mean absolute error, interval width and coverage and Kendall's τ-b per estimator.

    >>> from receval.simulate.logged import policy_from_probs
    >>> test = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 0, 1], [5, 1, 4, 2])
    >>> res = ope_study(test, test, logging="random", targets=["greedy"], threshold=4, rounds=400, n_bootstrap=0)
    >>> res.truth, round(res.estimates["ips"]["greedy"].value, 2)
    ({'greedy': 1.0}, 0.93)
    >>> mine = policy_from_probs("mine", [[0.5, 0.5], [0.2, 0.8]], test, threshold=4)
    >>> res = ope_study(test, test, logging="random", targets={"mine": mine}, threshold=4, log=res.log.frame,
    ...                 n_bootstrap=0)
    >>> res.truth["mine"], round(res.estimates["ips"]["mine"].value, 2)
    (0.35, 0.31)
    """
    specs: list[tuple[str, str | PolicyTable]] = (
        list(targets.items()) if isinstance(targets, Mapping) else [(str(t), str(t)) for t in targets]
    )
    if not specs:
        raise ConfigError("give at least one target policy", parameters=["targets"])
    names = [n for n, _ in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"target policies repeat: {names}", parameters=["targets"])
    rewards, actions = reward_matrix(test, threshold)
    tables = {
        name: t if isinstance(t, PolicyTable) else policy_table(t, train, test, threshold=threshold, seed=seed + 1 + j)
        for j, (name, t) in enumerate(specs)
    }
    for name, table in tables.items():
        if table.probs.shape != actions.shape:
            raise DataError(f"target {name!r}: its table is {table.probs.shape}, the data's are {actions.shape}")
    if log is None:
        if rounds is None:
            raise ConfigError("give rounds (the decisions to log) or a log", parameters=["rounds"])
        log_table = policy_table(logging, train, test, threshold=threshold, seed=seed)
        drawn = log_policy(log_table, test, threshold=threshold, rounds=rounds, seed=seed)
    else:
        drawn = _given_log(log, test, logging)
        covered = np.zeros(actions.shape)
        covered[drawn.frame["user"].to_numpy(np.int64), drawn.frame["item"].to_numpy(np.int64)] = 1.0
        log_table = PolicyTable(logging, covered)  # the pairs the log holds: its support, as far as it shows
    rounds = len(drawn.frame)
    users = drawn.frame["user"].to_numpy(np.int64)
    items = drawn.frame["item"].to_numpy(np.int64)
    reward = drawn.frame["reward"].to_numpy(np.float64)
    pscore = drawn.frame["propensity"].to_numpy(np.float64)
    q = reward_model_table(reward_model, drawn, test)
    truth, on_policy, shares = {}, {}, {}
    inputs: dict[str, tuple[object, object | None, object | None]] = {}
    for j, (name, table) in enumerate(tables.items()):
        share = shares[name] = support(table, log_table, users)
        if share < 1.0 - 1e-9:
            covers = "never takes" if log is None else "never shows to the user"
            warnings.warn(
                f"target {name!r} puts {1 - share:.1%} of its mass on actions the logging policy {logging!r} {covers}"
                ": IPS/SNIPS cannot see it and DR relies on the reward model there",
                ReceValWarning,
                stacklevel=2,
            )
        truth[name] = policy_value(table, rewards, actions)
        on_policy[name] = float(log_policy(table, test, threshold=threshold, rounds=rounds, seed=seed + 1 + j)
                                .frame["reward"].mean())  # fmt: skip
        inputs[name] = (table.probs[users, items], q[users, items], (table.probs[users] * q[users]).sum(axis=1))
    per_target = estimate_many(
        reward, pscore, inputs, clip=clip, overlaps=shares, n_bootstrap=n_bootstrap, seed=seed
    )  # the resamples shared by every target
    if not np.all(np.isfinite(list(truth.values()))):
        raise DataError("a target's true value is not finite")
    estimates = {k: {t: per_target[t][k] for t in names} for k in ESTIMATORS}
    true = np.array([truth[t] for t in names])
    error, tau, width, coverage = {}, {}, {}, {}
    for k, row in estimates.items():
        values = np.array([row[t].value for t in names])
        error[k] = float(np.abs(values - true).mean())
        tau[k] = tau_between(values, true, "b") if len(names) > 1 else float("nan")
        width[k] = float(np.mean([row[t].high - row[t].low for t in names]))
        coverage[k] = float(np.mean([row[t].low <= truth[t] <= row[t].high for t in names]))
    settings = {
        "logging": logging, "targets": names, "rounds": rounds, "seed": seed, "threshold": threshold,
        "reward_model": reward_model, "clip": clip, "n_bootstrap": n_bootstrap, "propensity": drawn.propensity,
    }  # fmt: skip
    return OpeResult(truth, on_policy, estimates, error, tau, width, coverage, drawn, settings)


def error_by_size(train: Interactions, test: Interactions, *, sizes: list[int], **options: Any) -> pd.DataFrame:
    """:func:`ope_study` at each log size of ``sizes`` (other options alike): each estimator's mean absolute error.

    With a given ``log`` among the options, each size takes the log's first rounds.

    Returns
    -------
    pandas.DataFrame
        Columns rounds, estimator, error, coverage, kendall_tau.

    >>> test = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 0, 1], [5, 1, 4, 2])
    >>> out = error_by_size(test, test, sizes=[50, 500], logging="random", targets=["greedy", "random"],
    ...                     threshold=4, n_bootstrap=0)
    >>> out["rounds"].unique().tolist(), len(out)
    ([50, 500], 12)
    """
    rows = []
    given = options.pop("log", None)
    for n in sizes:
        if given is None:
            res = ope_study(train, test, rounds=int(n), **options)
        else:  # a given log: its first n rounds
            res = ope_study(train, test, log=given.iloc[: int(n)], **options)
        for k in res.error:
            rows.append({"rounds": int(n), "estimator": k, "error": res.error[k], "coverage": res.coverage[k],
                         "kendall_tau": res.kendall_tau[k]})  # fmt: skip
    return pd.DataFrame(rows)
