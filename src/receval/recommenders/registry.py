"""Algorithms by name: ``make("item-knn", k=50)``, parameters from ``key=value`` strings.

The one registry of the package: a name means one class in one-shot evaluation,
the experiment runner and the cyclic simulator. Names: ``random``, ``popularity``,
``average``, ``global-mean``, ``biases``, ``user-knn``, ``item-knn``, ``mf``, ``hkv``,
the strong simple baselines of implicit feedback ``ease`` (EASE^R), ``slim``, ``p3alpha``,
``rp3beta`` and ``ials``, the online learners ``item-bandit-egreedy``, ``item-bandit-ucb``, ``item-bandit-ts``,
``im-item-bandit-egreedy``, ``im-item-bandit-ucb``, ``im-item-bandit-ts`` (item
bandits: one class, :class:`~receval.recommenders.bandits.ItemBandit`, with the policy
and the treatment of unknown feedback fixed by the name) and ``knn-bandit``, the sequential
baselines ``markov`` and ``sknn`` (SKNN/V-SKNN, :mod:`receval.recommenders.sequential`), plus
``surprise:<ClassName>`` and ``implicit:<ClassName>`` for the adapters of
:mod:`receval.recommenders.adapters`.

Presets are parameter sets, not classes: ``make(name, preset="cyclorec")`` starts
from CycloRec's parameters for ``popularity`` and the item bandits, ``preset="thesis"``
from those plus the variants faithful to the text of the thesis behind CycloRec (see
:data:`PRESETS`, and :data:`SIMULATION_PRESETS` for the simulation's options;
parameters given explicitly always win). ``standard`` (the default) is the classes'
own defaults.

Examples
--------
>>> make("popularity", threshold=3)
MostPopular(count='positive', update_count='positive', threshold=3)
>>> make("item-knn", **parse_params(["k=20", "similarity=cosine"])).get_params()["k"]
20
>>> make("biases", **parse_params(["item_damping=5", "clip=false"]))
Biases(item_damping=5.0, user_damping=10.0, clip=False)
>>> make("biases", damping=3)
Traceback (most recent call last):
...
receval.errors.ConfigError: biases (Biases) has no parameter 'damping'; valid: item_damping, user_damping, clip; \
did you mean 'user_damping' or 'item_damping'?
>>> make("item-knn", kk=20)
Traceback (most recent call last):
...
receval.errors.ConfigError: item-knn (ItemKNN) has no parameter 'kk'; valid: k, similarity, ...; did you mean 'k'?
>>> make("popularity", preset="cyclorec").count
'any'
>>> make("im-item-bandit-ts", preset="cyclorec")
ItemBandit(policy='thompson', epsilon=0.1, epsilon_decay=0.0, delta=1.0, delta_decay=0.0, pulls='all', alpha0=0.0, \
beta0=0.0, unknown='ignore', draw_offset=1.0, threshold=None, seed=0)
>>> make("knn-bandit", preset="thesis").agreement
'both'
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from receval.errors import ConfigError, did_you_mean
from receval.validate import check_seed

__all__ = [
    "make",
    "parse_params",
    "list_algorithms",
    "ALGORITHMS",
    "FIXED",
    "PRESETS",
    "SIMULATION_PRESETS",
    "AlgorithmInfo",
    "simulation_option",
]

_ITEM_BANDIT = "receval.recommenders.bandits.item:ItemBandit"
_POLICY = {"egreedy": "egreedy", "ucb": "ucb", "ts": "thompson"}

ALGORITHMS: dict[str, str] = {
    "random": "receval.recommenders.baselines:Random",
    "popularity": "receval.recommenders.baselines:MostPopular",
    "average": "receval.recommenders.baselines:Average",
    "global-mean": "receval.recommenders.baselines:GlobalMean",
    "biases": "receval.recommenders.baselines:Biases",
    "user-knn": "receval.recommenders.knn:UserKNN",
    "item-knn": "receval.recommenders.knn:ItemKNN",
    "mf": "receval.recommenders.mf:BiasedMF",
    "hkv": "receval.recommenders.als:HKV",
    "ease": "receval.recommenders.linear:EASE",
    "slim": "receval.recommenders.linear:SLIM",
    "p3alpha": "receval.recommenders.graph:P3alpha",
    "rp3beta": "receval.recommenders.graph:RP3beta",
    "ials": "receval.recommenders.ials:IALS",
    **{f"item-bandit-{k}": _ITEM_BANDIT for k in _POLICY},
    **{f"im-item-bandit-{k}": _ITEM_BANDIT for k in _POLICY},
    "knn-bandit": "receval.recommenders.bandits.knn:KNNBandit",
    "markov": "receval.recommenders.sequential:MarkovChain",
    "sknn": "receval.recommenders.sequential:SessionKNN",
}

# Parameters a name fixes (they are not parameters of that name).
FIXED: dict[str, dict[str, Any]] = {
    **{f"item-bandit-{k}": {"policy": v, "unknown": "failure"} for k, v in _POLICY.items()},
    **{f"im-item-bandit-{k}": {"policy": v, "unknown": "ignore"} for k, v in _POLICY.items()},
}

# Parameter sets by preset (what differs from the classes' defaults):
#
# ==============================  ==========================  ============================
#                                 ``standard`` (textbook)     ``cyclorec`` (CycloRec)
# ==============================  ==========================  ============================
# popularity counts               positive training ratings   every training rating
# item bandit prior (α⁰, β⁰)      (1, 1)                      (1, 1)
# item bandit unknown feedback    failure                     failure
# ignore-missing prior (α⁰, β⁰)   (1, 1)                      (0, 0)
# ignore-missing unknown          ignored                     ignored
# Thompson sampling draws         Beta(α, β)                  Beta(α + 1, β + 1)
# ==============================  ==========================  ============================
#
# With prior (0, 0), ε-greedy and UCB take μ̂ = 0 for an arm with no observation.
#
# ``thesis`` is ``cyclorec`` (the thesis' own code, CycloRec) plus the variants that
# follow the text of Cuesta Fernández's BSc thesis (UAM 2021) where receval's defaults
# depart from it: the kNN bandit counts agreement on positive and negative ratings
# (§2.2.4, Eq. 2.15–2.17); UCB counts as pulls only the simulation's feedback (Eq. 2.13,
# with its initialisation round) and decays δ (the text says δ may decrease but gives no
# schedule: δ/(1 + 10⁻⁴·step) is receval's, halving δ after 10,000 decisions). The
# simulation options of each preset are in SIMULATION_PRESETS.
_THESIS_UCB = {"delta_decay": 1e-4, "pulls": "feedback"}
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
PRESETS["thesis"] = {
    **PRESETS["cyclorec"],
    "item-bandit-ucb": PRESETS["cyclorec"]["item-bandit-ucb"] | _THESIS_UCB,
    "im-item-bandit-ucb": PRESETS["cyclorec"]["im-item-bandit-ucb"] | _THESIS_UCB,
    "knn-bandit": {"agreement": "both"},
}

# The cyclic simulation's options by preset (receval.simulate.simulate's refit_every, the
# Kendall τ variant of the agreement between rankings, the holdout's test fraction).
# ``thesis``: the offline models updated every round as in the thesis' loop, τ-a (its
# Eq. 2.10), and 20% of the ratings held out for test as its code does
# (``test_proportion=0.2``; its prose says 20% for training).
SIMULATION_PRESETS: dict[str, dict[str, Any]] = {
    name: {"refit_every": 10, "tau": "b", "test_fraction": 0.2} for name in PRESETS
}
SIMULATION_PRESETS["thesis"] |= {"refit_every": 1, "tau": "a"}


def simulation_option(name: str, preset: str | None = None, value: Any = None) -> Any:
    """A cyclic simulation option as a configuration resolves it: ``value`` when given, else the preset's.

    Returns
    -------
    object
        ``value``, or ``SIMULATION_PRESETS[preset][name]`` when ``value`` is None
        (``preset`` None: ``standard``). An unknown preset or option is a ConfigError.

    Examples
    --------
    >>> simulation_option("tau", "thesis"), simulation_option("tau", "thesis", "b"), simulation_option("tau")
    ('a', 'b', 'b')
    """
    preset = "standard" if preset is None else preset
    if preset not in SIMULATION_PRESETS:
        hint = did_you_mean(str(preset), SIMULATION_PRESETS)
        raise ConfigError(f"unknown preset {preset!r}; use one of {', '.join(SIMULATION_PRESETS)}{hint}")
    options = SIMULATION_PRESETS[preset]
    if name not in options:
        raise ConfigError(f"{name!r} is not a simulation option of a preset; use one of {', '.join(options)}")
    return options[name] if value is None else value


_ADAPTERS = {
    "surprise": "receval.recommenders.adapters:SurpriseAdapter",
    "implicit": "receval.recommenders.adapters:ImplicitAdapter",
}


@dataclass(frozen=True)
class AlgorithmInfo:
    """An algorithm name, its class, its parameters with defaults, and a summary."""

    name: str
    cls: type
    params: dict[str, Any]
    summary: str


def _load(target: str) -> type[Any]:
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def _signature(cls: type[Any]) -> dict[str, inspect.Parameter]:
    params = inspect.signature(cls.__init__).parameters
    return {n: p for n, p in params.items() if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _coerce(name: str, key: str, value: Any, param: inspect.Parameter, hint: Any) -> Any:
    """Convert a string value to the parameter's type (non-strings pass unchanged)."""
    if not isinstance(value, str):
        return value
    choices = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else ()
    if choices:
        if value not in choices:
            raise ConfigError(f"{name}: {key}={value!r} is not one of {list(choices)}")
        return value
    default = param.default
    kinds = [default] if default is not inspect.Parameter.empty and default is not None else []
    if not kinds and hint is not None:
        kinds = [t() for t in typing.get_args(hint) or (hint,) if t in (bool, int, float, str)]
    target = type(kinds[0]) if kinds else None
    if value.lower() in ("none", "null") and (default is None or "None" in str(hint)):
        return None
    if target is None:
        return _guess(value)
    try:
        if target is bool:
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
            raise ValueError(value)
        if target is int:
            return int(value)
        if target is float:
            return float(value)
    except ValueError:
        raise ConfigError(f"{name}: {key}={value!r} is not a valid {target.__name__}") from None
    return value


def _guess(value: str) -> Any:
    """A literal's most likely type, for parameters of other libraries' classes."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def parse_params(pairs: Iterable[str]) -> dict[str, Any]:
    """``["k=50", "sim_options.name=pearson"]`` to a dict (values stay strings; dots nest).

    Returns
    -------
    dict
        One key per parameter; a dotted key ``a.b`` becomes ``{"a": {"b": value}}``.

    Examples
    --------
    >>> parse_params(["k=50", "sim_options.name=pearson", "sim_options.user_based=false"])
    {'k': '50', 'sim_options': {'name': 'pearson', 'user_based': 'false'}}
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"parameter {pair!r} is not of the form key=value")
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"parameter {key!r} conflicts with an earlier value of {part!r}")
        node[leaf] = value.strip()
    return out


def _nested_guess(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _nested_guess(v) for k, v in value.items()}
    return _guess(value) if isinstance(value, str) else value


def make(name: str, *, preset: str = "standard", **params: Any) -> Any:
    """An unfitted recommender by name; string parameter values are converted.

    ``preset`` picks a parameter set of :data:`PRESETS` (explicit parameters win).
    ``surprise:<ClassName>`` / ``implicit:<ClassName>`` pass the parameters to that
    class of the other library (values guessed as bool/int/float/str; dotted keys of
    :func:`parse_params` make nested dicts such as surprise's ``sim_options``).

    Returns
    -------
    object
        The unfitted model (a class of :data:`ALGORITHMS`, or an adapter of the other
        library's class): call ``fit(train)`` on it. An unknown name, preset or
        parameter, or a value out of the model's range, is a ConfigError naming it.

    Examples
    --------
    >>> model = make("item-knn", k="20")  # a string value, as the command line gives it
    >>> type(model).__name__, model.k, model.similarity
    ('ItemKNN', 20, 'auto')
    >>> make("popularity", preset="cyclorec").count
    'any'
    """
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}{did_you_mean(preset, PRESETS)}")
    lib, sep, cls_name = name.partition(":")
    if sep:
        if lib not in _ADAPTERS:
            hint = did_you_mean(lib, _ADAPTERS)
            raise ConfigError(f"unknown adapter prefix {lib!r} in {name!r}; use one of {sorted(_ADAPTERS)}{hint}")
        adapter = _load(_ADAPTERS[lib])
        return adapter(cls_name, **{k: _nested_guess(v) for k, v in params.items()})
    if name not in ALGORITHMS:
        raise ConfigError(
            f"unknown algorithm {name!r}; known: {', '.join(ALGORITHMS)}, surprise:<Class>, implicit:<Class>"
            f"{did_you_mean(name, ALGORITHMS)}"
        )
    cls = _load(ALGORITHMS[name])
    fixed = FIXED.get(name, {})
    sig = {n: p for n, p in _signature(cls).items() if n not in fixed}
    try:
        hints = typing.get_type_hints(cls.__init__)
    except (NameError, TypeError):
        hints = {}
    label = f"{name} ({cls.__name__})"
    kwargs = {**fixed, **PRESETS[preset].get(name, {})}
    for key, value in params.items():
        if key not in sig:  # a name also given is no guess: the configuration's error points at the first quoted key
            hint = did_you_mean(key, [n for n in sig if n not in params])
            raise ConfigError(f"{label} has no parameter {key!r}; valid: {', '.join(sig) or 'none'}{hint}")
        kwargs[key] = _coerce(label, key, value, sig[key], hints.get(key))
        if key == "seed" and kwargs[key] is not None:
            check_seed(kwargs[key], f"{label}: seed")
    model = cls(**kwargs)
    if callable(getattr(model, "_validate", None)):  # the model's own parameter rules, before any data is read
        try:
            model._validate()
        except ConfigError as err:
            raise ConfigError(f"{label}: {err.message}") from None
    return model


def list_algorithms(names: Sequence[str] | None = None) -> list[AlgorithmInfo]:
    """The built-in algorithms with their parameters and defaults.

    Returns
    -------
    list of AlgorithmInfo
        One per name of ``names`` (default: every built-in, in :data:`ALGORITHMS`' order),
        without the parameters :data:`FIXED` sets.

    Examples
    --------
    >>> [a.name for a in list_algorithms()][:3]
    ['random', 'popularity', 'average']
    >>> list_algorithms(["biases"])[0].params
    {'item_damping': 25.0, 'user_damping': 10.0, 'clip': True}
    """
    out = []
    for name in names or ALGORITHMS:
        if name not in ALGORITHMS:
            hint = did_you_mean(name, ALGORITHMS)
            raise ConfigError(f"unknown algorithm {name!r}; known: {', '.join(ALGORITHMS)}{hint}")
        cls = _load(ALGORITHMS[name])
        fixed = FIXED.get(name, {})
        params = {n: p.default for n, p in _signature(cls).items() if n not in fixed}
        summary = (inspect.getdoc(cls) or "").split("\n")[0]
        out.append(AlgorithmInfo(name, cls, params, summary))
    return out
