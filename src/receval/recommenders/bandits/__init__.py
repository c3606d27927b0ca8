"""Online (interactive) recommenders for the cyclic simulator, by name and preset.

Names: ``random``, ``popularity``, ``average``, ``item-bandit-egreedy``,
``item-bandit-ucb``, ``item-bandit-ts``, ``im-item-bandit-egreedy``,
``im-item-bandit-ucb``, ``im-item-bandit-ts``, ``knn-bandit``, and the offline models
``user-knn``, ``item-knn``, ``hkv`` (built by :func:`receval.recommenders.make` and
refitted by the simulator every ``refit_every`` rounds).

Presets (what differs; parameters given explicitly always win):

==============================  ==========================  ============================
                                ``standard`` (textbook)     ``cyclorec`` (CycloRec)
==============================  ==========================  ============================
popularity counts               positive training ratings   every training rating
item bandit prior (α⁰, β⁰)      (1, 1)                      (1, 1)
item bandit unknown feedback    failure                     failure
ignore-missing prior (α⁰, β⁰)   (1, 1)                      (0, 0)
ignore-missing unknown          ignored                     ignored
Thompson sampling draws         Beta(α, β)                  Beta(α + 1, β + 1)
==============================  ==========================  ============================

With prior (0, 0), ε-greedy and UCB take μ̂ = 0 for an arm with no observation.

Examples
--------
>>> make_online("im-item-bandit-ts", preset="cyclorec")
ItemBandit(policy='thompson', epsilon=0.1, epsilon_decay=0.0, delta=1.0, alpha0=0.0, beta0=0.0, unknown='ignore', \
draw_offset=1.0, threshold=None, seed=0)
>>> make_online("item-bandit-egreedy", epsilon="0.2").epsilon
0.2
"""

from __future__ import annotations

import inspect
from typing import Any

from receval.errors import ConfigError
from receval.recommenders.bandits.item import ItemBandit, OnlineAverage, OnlinePopularity, OnlineRandom
from receval.recommenders.bandits.knn import KNNBandit

__all__ = [
    "ItemBandit",
    "KNNBandit",
    "OnlineAverage",
    "OnlinePopularity",
    "OnlineRandom",
    "ONLINE_ALGORITHMS",
    "PRESETS",
    "OFFLINE_ALGORITHMS",
    "make_online",
]

_POLICY = {"egreedy": "egreedy", "ucb": "ucb", "ts": "thompson"}

ONLINE_ALGORITHMS: dict[str, tuple[type, dict[str, Any]]] = {
    "random": (OnlineRandom, {}),
    "popularity": (OnlinePopularity, {}),
    "average": (OnlineAverage, {}),
    **{f"item-bandit-{k}": (ItemBandit, {"policy": v, "unknown": "failure"}) for k, v in _POLICY.items()},
    **{f"im-item-bandit-{k}": (ItemBandit, {"policy": v, "unknown": "ignore"}) for k, v in _POLICY.items()},
    "knn-bandit": (KNNBandit, {}),
}
OFFLINE_ALGORITHMS = ("user-knn", "item-knn", "hkv")

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "standard": {
        "popularity": {"count": "positive"},
        **{f"item-bandit-{k}": {"alpha0": 1.0, "beta0": 1.0, "draw_offset": 0.0} for k in _POLICY},
        **{f"im-item-bandit-{k}": {"alpha0": 1.0, "beta0": 1.0, "draw_offset": 0.0} for k in _POLICY},
    },
    "cyclorec": {
        "popularity": {"count": "any"},
        **{f"item-bandit-{k}": {"alpha0": 1.0, "beta0": 1.0, "draw_offset": 1.0} for k in _POLICY},
        **{f"im-item-bandit-{k}": {"alpha0": 0.0, "beta0": 0.0, "draw_offset": 1.0} for k in _POLICY},
    },
}


def _coerce(cls: type, key: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str) or isinstance(default, str):
        return value
    low = value.strip().lower()
    if isinstance(default, bool):
        if low in ("true", "1", "yes", "false", "0", "no"):
            return low in ("true", "1", "yes")
    elif default is None or isinstance(default, int | float):
        try:
            return int(value) if isinstance(default, int) and low.lstrip("-").isdigit() else float(value)
        except ValueError:
            pass
    raise ConfigError(f"{cls.__name__} parameter {key}={value!r} is not a valid {type(default).__name__}")


def make_online(name: str, preset: str = "standard", **params: Any) -> Any:
    """An unfitted online recommender by name, with the preset's defaults.

    String parameter values (from the command line) are converted to the type of the
    parameter's default. ``user-knn``, ``item-knn`` and ``hkv`` come from
    :func:`receval.recommenders.make`.
    """
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    if name in OFFLINE_ALGORITHMS:
        from receval.recommenders import make

        return make(name, **params)
    if name not in ONLINE_ALGORITHMS:
        known = ", ".join([*ONLINE_ALGORITHMS, *OFFLINE_ALGORITHMS])
        raise ConfigError(f"unknown algorithm {name!r} for the cyclic simulation; known: {known}")
    cls, fixed = ONLINE_ALGORITHMS[name]
    sig = inspect.signature(cls.__init__).parameters
    kwargs = {**fixed, **PRESETS[preset].get(name, {})}
    for key, value in params.items():
        if key not in sig or key in fixed:
            valid = [p for p in sig if p not in ("self", *fixed)]
            raise ConfigError(f"{name} has no parameter {key!r}; valid: {', '.join(valid)}")
        kwargs[key] = _coerce(cls, key, value, sig[key].default)
    return cls(**kwargs)
