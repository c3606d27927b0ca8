"""Bandit logs with propensities: a logging pass beside the cyclic simulator, and the log table's format.

The compiled loop of :mod:`receval.simulate._loop` draws its items inside numba kernels that
do not expose the probability of their choice; rather than change them (and the default
path's speed and outputs), the logging pass here is separate. A policy is fitted once on the
training ratings and stays fixed while it logs (the stationary setting the off-policy
estimators assume); its action probabilities are a users x items table, :class:`PolicyTable`:

=====================  ===================================================================
``random``             uniform over the user's actions (exact)
``egreedy[:ε]``        1 − ε on the best item (ties: lowest index) + ε uniform (exact; ε 0.1)
``softmax[:T]``        ∝ exp(score / T) (exact; T 0.1)
``greedy``             the best item (deterministic: propensity 1)
``ucb[:δ]``            the best of mean + δ √(ln t / nᵢ) (deterministic; δ 1)
``thompson[:D]``       argmax of Beta(aᵢ, bᵢ) draws; the propensity is estimated from D
                       (default 1000) Monte Carlo draws per user as (c + 1)/(D + 1), c the
                       draws choosing the logged item (the logged draw is one more)
=====================  ===================================================================

Scores are the items' smoothed means (aᵢ + 1)/(nᵢ + 2) of the training ratings binarised at
λ (the item bandits' statistics); ``KIND@MODEL`` scores with any receval recommender instead
(``egreedy:0.2@item-knn``), fitted on the training data. A user's actions are the items with
a known reward (``test`` pairs): all items on complete data. Each round draws a user uniformly
among those with an action, then an action from the policy; the reward is 1 for a test
rating ≥ λ, else 0.

The log table (:data:`LOG_COLUMNS`): ``round`` (1..), ``user``, ``item`` (indices of the data's id
space), ``reward``, ``propensity`` (π₀ of the logged item), optional ``position``; written
atomically as Parquet or CSV (:func:`write_log`) and read back with its checks (:func:`read_log`).
:func:`from_obp` reads Open Bandit Pipeline's dictionary form (``action``, ``reward``,
``pscore``, optional ``position``, ``context``).

A target policy can also be a table of action probabilities rather than a policy kind:
:func:`policy_from_probs` checks a users x items array, :func:`read_policy_table` reads a
file with the columns ``user``, ``item`` (indices, as in the log), ``probability``. Each user
with an action needs a row of probabilities summing to 1, on pairs with a known reward (the
truth is computed there).

Examples
--------
>>> from receval import Interactions
>>> test = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 0, 1], [5, 1, 4, 2])
>>> table = policy_table("egreedy:0.5", test, test, threshold=4)
>>> table.probs.tolist()
[[0.75, 0.25], [0.75, 0.25]]
>>> log = log_policy(table, test, threshold=4, rounds=4, seed=0)
>>> list(log.frame.columns), bool(log.frame["propensity"].isin([0.75, 0.25]).all())
(['round', 'user', 'item', 'reward', 'propensity'], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from receval.data.interactions import Interactions, relevant
from receval.errors import ConfigError, DataError, shown_id
from receval.validate import check_memory
from receval.vocabulary import OPE_POLICIES

__all__ = [
    "POLICY_KINDS",
    "LOG_COLUMNS",
    "PolicyTable",
    "BanditLog",
    "reward_matrix",
    "policy_table",
    "policy_from_probs",
    "read_policy_table",
    "log_policy",
    "policy_value",
    "write_log",
    "read_log",
    "from_obp",
]

_DEFAULTS: dict[str, float | None] = {"egreedy": 0.1, "softmax": 0.1, "ucb": 1.0, "thompson": 1000.0}
POLICY_KINDS: dict[str, float | None] = {k: _DEFAULTS.get(k) for k in OPE_POLICIES}
"""Logging/target policy kinds (:data:`receval.vocabulary.OPE_POLICIES`) and the default of their parameter."""
LOG_COLUMNS: tuple[str, ...] = ("round", "user", "item", "reward", "propensity")
"""The log table's columns (``position`` optional)."""


@dataclass
class PolicyTable:
    """A fixed policy's action probabilities: ``probs[u, i]`` = π(i | u), rows summing to 1 over the actions.

    ``deterministic``: one action per user (propensity 1); ``mc_draws``: the Monte Carlo draws behind
    a Thompson table (None when exact); ``beta``: Thompson's Beta parameters (a, b) per item.
    """

    name: str
    probs: np.ndarray
    deterministic: bool = False
    mc_draws: int | None = None
    beta: tuple[np.ndarray, np.ndarray] | None = None


@dataclass
class BanditLog:
    """A logged run: :data:`LOG_COLUMNS` in ``frame``, the policy's name and how its propensities were found."""

    frame: pd.DataFrame
    policy: str
    propensity: str  # "exact", "deterministic" or "monte-carlo (D draws)"


def reward_matrix(test: Interactions, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(rewards, actions): users x items rewards (1 for a test rating ≥ λ, else 0) and the pairs with one.

    Returns
    -------
    tuple of numpy.ndarray
        Float rewards and boolean actions, users x items.

    >>> from receval import Interactions
    >>> r, a = reward_matrix(Interactions.from_arrays([0, 1], [1, 0], [5, 2]), threshold=4)
    >>> r.tolist(), a.tolist()
    ([[0.0, 1.0], [0.0, 0.0]], [[False, True], [True, False]])
    """
    nu, ni = test.n_users, test.n_items
    check_memory(9.0 * nu * ni, f"the reward table of {nu:,} users x {ni:,} items", "filter the data first")
    test = test.deduplicate("last")
    rewards = np.zeros((nu, ni))
    actions = np.zeros((nu, ni), bool)
    rewards[test.users, test.items] = relevant(test.ratings, threshold).astype(np.float64)
    actions[test.users, test.items] = True
    return rewards, actions


def _parse(spec: str) -> tuple[str, float | None, str | None]:
    head, _, model = spec.partition("@")
    kind, sep, value = head.partition(":")
    kind = kind.strip()
    if kind not in POLICY_KINDS:
        raise ConfigError(
            f"policy {spec!r}: {kind!r} is not one of {', '.join(POLICY_KINDS)} "
            "(e.g. egreedy:0.1 or softmax:0.5@biases)"
        )
    param = POLICY_KINDS[kind]
    if sep:
        try:
            param = float(value)
        except ValueError:
            raise ConfigError(f"policy {spec!r}: the parameter {value!r} is not a number") from None
        if param is None or not np.isfinite(param) or param <= 0 or (kind == "egreedy" and param > 1):
            raise ConfigError(f"policy {spec!r}: {kind} takes a positive parameter (ε ≤ 1), got {value!r}")
    return kind, param, model.strip() or None


def _scores(train: Interactions, threshold: float, model: str | None, nu: int) -> np.ndarray:
    if model is None:
        pos = relevant(train.ratings, threshold)
        a = np.bincount(train.items[pos], minlength=train.n_items)
        n = np.bincount(train.items, minlength=train.n_items)
        return np.broadcast_to((a + 1.0) / (n + 2.0), (nu, train.n_items))
    from receval.recommenders import make

    scores = np.asarray(make(model).fit(train).score(np.arange(nu)), dtype=np.float64)
    return np.where(np.isfinite(scores), scores, -np.inf)


def _best(scores: np.ndarray, actions: np.ndarray) -> np.ndarray:
    masked = np.where(actions, scores, -np.inf)
    out = np.zeros(scores.shape)
    has = actions.any(axis=1)
    out[np.flatnonzero(has), masked[has].argmax(axis=1)] = 1.0
    return out


def policy_table(
    spec: str,
    train: Interactions,
    test: Interactions,
    *,
    threshold: float,
    seed: int = 0,
) -> PolicyTable:
    """The action probabilities of policy ``spec`` (see the module docs) over ``test``'s pairs.

    Returns
    -------
    PolicyTable
        ``probs`` users x items, zero outside the user's actions.

    >>> from receval import Interactions
    >>> test = Interactions.from_arrays([0, 0, 0], [0, 1, 2], [5, 1, 4])
    >>> policy_table("greedy", test, test, threshold=4).probs.tolist()
    [[1.0, 0.0, 0.0]]
    >>> policy_table("softmax:2", test, test, threshold=4).probs.round(3).tolist()
    [[0.351, 0.297, 0.351]]
    """
    kind, param, model = _parse(spec)
    _, actions = reward_matrix(test, threshold)
    nu, ni = actions.shape
    if kind == "random":
        counts = actions.sum(axis=1, keepdims=True)
        return PolicyTable(spec, actions / np.maximum(counts, 1))
    if kind == "thompson":
        if model is not None:
            raise ConfigError(
                f"policy {spec!r}: Thompson sampling draws from the items' Beta laws, not a model's scores"
            )
        pos = relevant(train.ratings, threshold)
        a = np.bincount(train.items[pos], minlength=ni) + 1.0
        b = np.bincount(train.items[~pos], minlength=ni) + 1.0
        draws = int(param or 1000)
        rng = np.random.default_rng(seed)
        probs = np.zeros((nu, ni))
        rows, inverse = np.unique(actions, axis=0, return_inverse=True)  # users with one action set share draws
        for j, row in enumerate(rows):
            items = np.flatnonzero(row)
            if len(items) == 0:
                continue
            theta = rng.beta(a[items], b[items], size=(draws, len(items)))
            freq = np.bincount(theta.argmax(axis=1), minlength=len(items)) / draws
            probs[np.ix_(np.flatnonzero(inverse.ravel() == j), items)] = freq
        return PolicyTable(spec, probs, mc_draws=draws, beta=(a, b))
    scores = _scores(train, threshold, model, nu)
    if kind == "ucb":
        n = np.bincount(train.items, minlength=ni).astype(np.float64)
        log_t = np.log(max(float(n.sum()), 1.0))
        bonus = np.where(n > 0, (param or 1.0) * np.sqrt(log_t / np.maximum(n, 1.0)), np.inf)
        return PolicyTable(spec, _best(scores + bonus, actions), deterministic=True)
    if kind == "greedy":
        return PolicyTable(spec, _best(scores, actions), deterministic=True)
    if kind == "egreedy":
        eps = float(param or 0.0)
        counts = actions.sum(axis=1, keepdims=True)
        return PolicyTable(spec, (1 - eps) * _best(scores, actions) + eps * actions / np.maximum(counts, 1))
    finite = np.where(actions & np.isfinite(scores), scores, -np.inf)
    top = finite.max(axis=1, keepdims=True)
    expo = np.where(actions & np.isfinite(finite), np.exp((finite - np.where(np.isfinite(top), top, 0.0)) / param), 0.0)
    total = expo.sum(axis=1, keepdims=True)
    return PolicyTable(spec, np.divide(expo, total, out=np.zeros_like(expo), where=total > 0))


def policy_from_probs(name: str, probs: object, test: Interactions, *, threshold: float) -> PolicyTable:
    """A target policy given as its action probabilities: ``probs[u, i]`` = π(i | u), users x items of ``test``.

    Refused with a one-line :class:`DataError`: a value that is not a number in [0, 1], a user
    with an action whose row does not sum to 1, mass on pairs without a known reward (named
    with its share: the simulator has no truth there).

    Returns
    -------
    PolicyTable
        The checked table.

    >>> from receval import Interactions
    >>> test = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 1, 4])
    >>> policy_from_probs("mine", [[0.5, 0.5], [0.0, 1.0]], test, threshold=4).probs.tolist()
    [[0.5, 0.5], [0.0, 1.0]]
    >>> policy_from_probs("mine", [[0.5, 0.5], [0.5, 0.5]], test, threshold=4)
    Traceback (most recent call last):
    ...
    receval.errors.DataError: target 'mine' puts 25.0% of its mass (1 pair(s), first user 1 item 0) on pairs ...
    """
    _, actions = reward_matrix(test, threshold)
    try:
        table = np.array(probs, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"target {name!r}: the probabilities are not numbers") from None
    if table.shape != actions.shape:
        raise DataError(f"target {name!r}: the table is {table.shape}, the data's users x items are {actions.shape}")
    bad = ~np.isfinite(table) | (table < 0) | (table > 1 + 1e-12)
    if bad.any():
        u, i = np.argwhere(bad)[0]
        raise DataError(
            f"target {name!r}: {int(bad.sum())} probabilit(ies) are not numbers in [0, 1] "
            f"(first user {u} item {i}: {table[u, i]})"
        )
    off = (table > 0) & ~actions
    if off.any():
        u, i = np.argwhere(off)[0]
        share = float(table[off].sum() / max(table.sum(), 1e-300))
        raise DataError(
            f"target {name!r} puts {share:.1%} of its mass ({int(off.sum())} pair(s), first user {u} item {i}) on "
            "pairs without a known reward; give probabilities over each user's items with a known reward"
        )
    active = actions.any(axis=1)
    wrong = active & ~np.isclose(table.sum(axis=1), 1.0, atol=1e-6)
    if wrong.any():
        first = int(np.flatnonzero(wrong)[0])
        raise DataError(
            f"target {name!r}: {int(wrong.sum())} user(s) with an action have probabilities that do not sum to 1 "
            f"(first user {first}: {table[first].sum():g})"
        )
    return PolicyTable(name, table)


def read_policy_table(
    path: str | Path, test: Interactions, *, threshold: float, name: str | None = None
) -> PolicyTable:
    """A target policy from a file (Parquet for ``.parquet``, else CSV) with columns user, item, probability.

    ``user`` and ``item`` are indices of the data's id space (as in the log table); pairs not
    listed have probability 0. The table is checked by :func:`policy_from_probs`; its name is
    ``name`` or the file's stem.

    Returns
    -------
    PolicyTable
        The checked table.

    >>> import tempfile
    >>> from receval import Interactions
    >>> test = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 1, 4])
    >>> p = Path(tempfile.mkdtemp()) / "half.csv"
    >>> _ = p.write_text("user,item,probability\\n0,0,0.5\\n0,1,0.5\\n1,1,1\\n")
    >>> t = read_policy_table(p, test, threshold=4)
    >>> t.name, t.probs.tolist()
    ('half', [[0.5, 0.5], [0.0, 1.0]])
    """
    path = Path(path)
    frame = _read(path, ("user", "item", "probability"), "target table")
    cols = {col: _numbers(frame, col, str(path)) for col in ("user", "item", "probability")}
    nu, ni = test.n_users, test.n_items
    for col, size in (("user", nu), ("item", ni)):
        v = cols[col]
        bad = (v != np.floor(v)) | (v < 0) | (v >= size)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"{path}: {col} {v[first]:g} at line {first + 2} is not an index of the data (0..{size - 1})"
            )
    users, items = cols["user"].astype(np.int64), cols["item"].astype(np.int64)
    dup = pd.Series(users * ni + items).duplicated().to_numpy()
    if dup.any():
        first = int(np.flatnonzero(dup)[0])
        raise DataError(f"{path}: the pair (user {users[first]}, item {items[first]}) repeats at line {first + 2}")
    probs = np.zeros((nu, ni))
    probs[users, items] = cols["probability"]
    return policy_from_probs(name or path.stem, probs, test, threshold=threshold)


def policy_value(table: PolicyTable, rewards: np.ndarray, actions: np.ndarray) -> float:
    """The exact expected reward of a policy: the mean over users with an action of Σᵢ π(i | u) r(u, i).

    Returns
    -------
    float
        The policy's value.

    >>> t = PolicyTable("p", np.array([[0.5, 0.5], [1.0, 0.0]]))
    >>> policy_value(t, np.array([[1.0, 0.0], [0.0, 1.0]]), np.ones((2, 2), bool))
    0.25
    """
    users = actions.any(axis=1)
    return float((table.probs[users] * rewards[users]).sum(axis=1).mean())


def log_policy(table: PolicyTable, test: Interactions, *, threshold: float, rounds: int, seed: int = 0) -> BanditLog:
    """``rounds`` decisions of the policy: a uniformly drawn user, an action from π(· | user), its reward.

    Returns
    -------
    BanditLog
        The log table; Thompson's rounds draw from the Beta laws and carry Monte Carlo propensities.

    >>> from receval import Interactions
    >>> test = Interactions.from_arrays([0, 0], [0, 1], [5, 1])
    >>> log_policy(policy_table("greedy", test, test, threshold=4), test, threshold=4, rounds=2).frame.values.tolist()
    [[1.0, 0.0, 0.0, 1.0, 1.0], [2.0, 0.0, 0.0, 1.0, 1.0]]
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int | np.integer) or rounds < 1:
        raise ConfigError(f"rounds={rounds!r} must be a positive integer", parameters=["rounds"])
    # sized first: each round's user, item, propensity, sort order and the log table's columns, some 100 bytes
    check_memory(100.0 * rounds, f"a log of {rounds:,} rounds", "give fewer rounds")
    rewards, actions = reward_matrix(test, threshold)
    active = np.flatnonzero(actions.any(axis=1))
    if len(active) == 0:
        raise DataError("no user has an item with a known reward: nothing to log")
    rng = np.random.default_rng(seed)
    users = active[rng.integers(0, len(active), rounds)]
    items = np.empty(rounds, np.int64)
    prop = np.empty(rounds)
    order = np.argsort(users, kind="stable")
    bounds = np.flatnonzero(np.diff(users[order])) + 1
    for group in np.split(order, bounds):
        u = int(users[group[0]])
        p_u = table.probs[u]
        if table.beta is not None:  # real Thompson draws; propensity from the table's D draws plus this one
            cand = np.flatnonzero(actions[u])
            theta = rng.beta(table.beta[0][cand], table.beta[1][cand], size=(len(group), len(cand)))
            chosen = cand[theta.argmax(axis=1)]
            d = float(table.mc_draws or 1)
            items[group] = chosen
            prop[group] = (p_u[chosen] * d + 1.0) / (d + 1.0)
        else:
            chosen = rng.choice(p_u.shape[0], size=len(group), p=p_u / p_u.sum())
            items[group] = chosen
            prop[group] = p_u[chosen]
    frame = pd.DataFrame(
        {
            "round": np.arange(1, rounds + 1),
            "user": users,
            "item": items,
            "reward": rewards[users, items],
            "propensity": prop,
        }
    )
    how = "deterministic" if table.deterministic else "exact"
    if table.mc_draws is not None:
        how = f"monte-carlo ({table.mc_draws} draws)"
    return BanditLog(frame, table.name, how)


def write_log(path: str | Path, log: BanditLog | pd.DataFrame) -> Path:
    """Write a log table atomically (Parquet for ``.parquet``, else CSV) after checking it.

    Returns
    -------
    pathlib.Path
        ``path``.

    >>> import tempfile
    >>> frame = pd.DataFrame({"round": [1], "user": [0], "item": [3], "reward": [1.0], "propensity": [0.25]})
    >>> read_log(write_log(Path(tempfile.mkdtemp()) / "log.parquet", frame)).values.tolist()
    [[1.0, 0.0, 3.0, 1.0, 0.25]]
    """
    from receval.atomic import write_frame

    frame = log.frame if isinstance(log, BanditLog) else log
    return write_frame(path, _checked(frame, str(path)))


def read_log(path: str | Path) -> pd.DataFrame:
    """Read a log table written by :func:`write_log` (or by hand), with the checks of the format.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`LOG_COLUMNS` (and ``position``), typed.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = p.write_text("round,user,item,reward,propensity\\n1,0,2,1,0.5\\n2,1,0,x,0.5\\n")
    >>> read_log(p)
    Traceback (most recent call last):
    ...
    receval.errors.DataError: ...log.csv: column reward is not numeric (first bad value 'x' at line 3)
    """
    path = Path(path)
    return _checked(_read(path, LOG_COLUMNS, "log"), str(path))


def _read(path: Path, required: tuple[str, ...], label: str) -> pd.DataFrame:
    """A table of indices read and checked by receval's one reader (columns, encoding, format)."""
    from receval.data.tables import read_table

    if not path.is_file():
        raise DataError(f"{path}: {label} file not found")
    return read_table(path, "aspects", required, label=label, text_ids=False)


def _numbers(frame: pd.DataFrame, col: str, where: str) -> np.ndarray:
    """Column ``col`` as finite numbers (in its own dtype); the first that is not is a DataError naming its line."""
    values = pd.to_numeric(frame[col].reset_index(drop=True), errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=np.float64, na_value=np.nan))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{where}: column {col} is not numeric (first bad value {shown_id(frame[col].iloc[first])} at line "
            f"{first + 2})"
        )
    return values.to_numpy()


def _checked(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    missing = [c for c in LOG_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{where}: the log lacks column(s) {', '.join(missing)}; a log has {', '.join(LOG_COLUMNS)}")
    cols = [*LOG_COLUMNS, *(["position"] if "position" in frame.columns else [])]
    out = pd.DataFrame(index=range(len(frame)))
    for col in cols:
        out[col] = _numbers(frame, col, where)
    p = out["propensity"].to_numpy(dtype=np.float64)
    bad = (p <= 0) | (p > 1)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{where}: {int(bad.sum())} propensit(ies) outside (0, 1] (first {p[first]} at line {first + 2}); "
            "a logged action must have had a positive probability"
        )
    for col in ("round", "user", "item", *(["position"] if "position" in cols else [])):
        bad = ((out[col] != np.floor(out[col])) | (out[col] < 0)).to_numpy()
        if bad.any():  # named by its line, as the other checks of the log name theirs
            first = int(np.flatnonzero(bad)[0])
            raise DataError(f"{where}: column {col} must hold non-negative integers (first {out[col].iloc[first]:g} "
                            f"at line {first + 2})")  # fmt: skip
        out[col] = out[col].astype(np.int64)
    return out


def from_obp(feedback: dict[str, Any]) -> pd.DataFrame:
    """A log table from Open Bandit Pipeline's dictionary (action, reward, pscore [, position, context]).

    Rounds with equal ``context`` rows share a user index (first seen first); without ``context``
    every round is its own user.

    Returns
    -------
    pandas.DataFrame
        The checked log table.

    >>> from_obp({"action": [2, 0], "reward": [1, 0], "pscore": [0.5, 0.25], "context": [[1.0], [1.0]]}).values.tolist()
    [[1.0, 0.0, 2.0, 1.0, 0.5], [2.0, 0.0, 0.0, 0.0, 0.25]]
    """
    missing = [k for k in ("action", "reward", "pscore") if k not in feedback]
    if missing:
        raise DataError(f"the OBP feedback lacks key(s) {', '.join(missing)} (it needs action, reward, pscore)")
    n = len(np.asarray(feedback["action"]).ravel())
    if "context" in feedback and feedback["context"] is not None:
        ctx = np.asarray(feedback["context"]).reshape(n, -1)
        _, first, inverse = np.unique(ctx, axis=0, return_index=True, return_inverse=True)
        users = np.argsort(np.argsort(first))[inverse.ravel()]
    else:
        users = np.arange(n)
    frame = {
        "round": np.arange(1, n + 1),
        "user": users,
        "item": np.asarray(feedback["action"]).ravel(),
        "reward": np.asarray(feedback["reward"]).ravel(),
        "propensity": np.asarray(feedback["pscore"]).ravel(),
    }
    if feedback.get("position") is not None:
        frame["position"] = np.asarray(feedback["position"]).ravel()
    lengths = {k: len(v) for k, v in frame.items()}
    if len(set(lengths.values())) != 1:
        raise DataError(f"the OBP feedback's arrays differ in length: {lengths}")
    return _checked(pd.DataFrame(frame), "OBP feedback")
