"""Search spaces over a recommender's parameters: one :class:`ParamRange` per tuned parameter.

A space is spelled as a configuration's ``[recommenders.NAME] space = {...}`` table: each
parameter takes exactly one of ``int = [low, high]``, ``float = [low, high]`` or
``choices = [...]``, a range may add ``log = true`` (log-uniform) or a ``step``, and
``when = {parent = [values]}`` draws it only in trials whose earlier choices parameter
takes one of those values (Optuna's define-by-run spaces). :func:`parse_range` is the one
reading of that spelling, for the configurations of :mod:`receval.experiment` and the
studies' Python spaces alike; each caller says how a failure is reported (a
configuration names its file and line). :func:`draw` is one random-search draw.

Examples
--------
>>> space = parse_space({"k": {"int": [5, 800], "log": True}, "norm": {"choices": [True, False]}})
>>> [(r.name, r.kind, r.low, r.high, r.log) for r in space]
[('k', 'int', 5.0, 800.0, True), ('norm', 'choices', None, None, False)]
>>> parse_space({"k": {"int": [9, 5]}})
Traceback (most recent call last):
...
receval.errors.ConfigError: space.k int = [9, 5] is inverted: give low < high (a fixed value goes in params)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from receval.errors import ConfigError
from receval.validate import first_repeat

__all__ = ["SPACE_KEYS", "ParamRange", "draw", "parse_range", "parse_space"]

SPACE_KEYS: dict[str, type] = {"int": list, "float": list, "choices": list, "log": bool, "step": float, "when": dict}
"""The keys of one parameter's entry in a space, with the type each takes."""
_KINDS = ("int", "float", "choices")
_ABSENT = object()

Fail = Callable[[tuple[str, ...], str], Exception]
"""How a caller reports a bad entry: the key path within the entry (``()``, ``("int",)``, ``("when",)`` ...) and
the message, to an exception that :func:`parse_range` raises."""


@dataclass(frozen=True)
class ParamRange:
    """One dimension of a search space: an int or float range (``log`` scale, ``step``) or ``choices``.

    ``when`` makes it conditional: the parameter is drawn only in trials whose earlier
    parameters take one of the given values (``{"similarity": ("cosine",)}``), as in
    Optuna's define-by-run spaces.
    """

    name: str
    kind: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: float | None = None
    choices: tuple[Any, ...] = ()
    when: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def grid(self) -> tuple[Any, ...]:
        """The values grid search visits: the choices, or the range's steps (ints step 1 by default).

        >>> ParamRange("k", "int", 5, 9, step=2).grid()
        (5, 7, 9)
        """
        if self.kind == "choices":
            return self.choices
        assert self.low is not None and self.high is not None
        step = self.step if self.step is not None else 1
        n = int((self.high - self.low) // step) + 1
        values = [self.low + i * step for i in range(n)]
        return tuple(int(v) for v in values) if self.kind == "int" else tuple(float(v) for v in values)


def _plain_fail(_path: tuple[str, ...], message: str) -> Exception:
    return ConfigError(message)


def parse_range(
    name: str, entry: Mapping[str, Any], earlier: Sequence[ParamRange], fail: Fail = _plain_fail
) -> ParamRange:
    """The :class:`ParamRange` of one parameter's ``entry``, after the parameters ``earlier`` in its space.

    The entry's keys and their types are the caller's to check (:data:`SPACE_KEYS`); this reads their
    meaning: exactly one kind, a range of two finite numbers with ``low < high`` (integers for ``int``),
    ``low > 0`` with ``log``, a positive ``step`` but not with ``log``, ``when`` naming an earlier choices
    parameter and some of its values.

    >>> parse_range("n", {"choices": [1, 2], "log": True}, [])
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: space.n: log and step apply to ranges, not choices
    """
    kinds = [k for k in _KINDS if k in entry]
    if len(kinds) != 1:
        raise fail((), f"space.{name} needs exactly one of int = [low, high], float = [low, high], choices = [..]")
    kind = kinds[0]
    values = entry[kind]
    when = {}
    for key, allowed in entry.get("when", {}).items():
        parent = next((r for r in earlier if r.name == key), None)
        allowed = tuple(allowed) if isinstance(allowed, list) else (allowed,)
        if parent is None or parent.kind != "choices":
            raise fail(("when",), f"space.{name} when = {{ {key} = .. }}: {key!r} must be a choices parameter above it")
        bad = [v for v in allowed if v not in parent.choices]
        if bad:
            raise fail(("when",), f"space.{name} when: {bad[0]!r} is not one of {key}'s choices")
        when[key] = allowed
    if kind == "choices":
        if not values:
            raise fail((kind,), f"space.{name} choices are empty: give at least one value")
        if "log" in entry or "step" in entry:
            raise fail((), f"space.{name}: log and step apply to ranges, not choices")
        j = first_repeat(values)
        if j is not None:  # grid search would run its trials twice, and TPE or random draw it twice as often
            raise fail((kind,), f"space.{name} choices list {values[j]!r} twice ({values!r}): list each value once")
        return ParamRange(name, kind, choices=tuple(values), when=when)
    if len(values) != 2 or any(not isinstance(v, int | float) or isinstance(v, bool) for v in values):
        raise fail((kind,), f"space.{name} {kind} = {values!r}: give [low, high], two numbers")
    if kind == "int" and any(not isinstance(v, int) for v in values):
        raise fail((kind,), f"space.{name} int = {values!r}: give two integers (or use float = [..])")
    low, high = values
    if not all(math.isfinite(v) for v in values):
        raise fail((kind,), f"space.{name} {kind} = [{low}, {high}]: give two finite numbers (no inf or nan)")
    if low >= high:
        word = "empty" if low == high else "inverted"
        raise fail(
            (kind,), f"space.{name} {kind} = [{low}, {high}] is {word}: give low < high (a fixed value goes in params)"
        )
    log = bool(entry.get("log", False))
    if log and low <= 0:
        raise fail(("log",), f"space.{name}: a log-scale range needs low > 0, got {low}")
    step = entry.get("step")
    if step is not None:
        if not math.isfinite(step) or step <= 0 or (kind == "int" and not isinstance(step, int)):
            raise fail(("step",), f"space.{name} step = {step!r}: give a positive {kind}")
        if log:
            raise fail(("step",), f"space.{name}: Optuna takes a step or a log scale, not both")
    return ParamRange(name, kind, float(low), float(high), log, None if step is None else float(step), when=when)


def parse_space(space: Mapping[str, Any], fail: Fail = _plain_fail) -> tuple[ParamRange, ...]:
    """Every parameter of a space spelled as plain data (a table per parameter), keys and types checked too.

    ``fail`` receives the key path from the parameter's name (``("k", "int")``).

    >>> parse_space({"k": {"int": [5, 50], "steps": 5}})
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: space.k: unknown key 'steps'; valid keys: choices, float, int, log, step, when
    """
    ranges: list[ParamRange] = []
    for name, entry in space.items():

        def at(path: tuple[str, ...], message: str, name: str = name) -> Exception:
            return fail((name, *path), message)

        if not isinstance(entry, Mapping):
            raise at((), f"space.{name} = {entry!r}: give a table such as {{int = [low, high]}}")
        for key, value in entry.items():
            if key not in SPACE_KEYS:
                raise at((key,), f"space.{name}: unknown key {key!r}; valid keys: {', '.join(sorted(SPACE_KEYS))}")
            want = SPACE_KEYS[key]
            number = want is float and isinstance(value, int | float) and not isinstance(value, bool)
            if not (number or isinstance(value, want)) or (want is not bool and isinstance(value, bool)):
                raise at((key,), f"space.{name} {key} = {value!r}: give {want.__name__}")
        ranges.append(parse_range(name, entry, ranges, at))
    return tuple(ranges)


def draw(space: Sequence[ParamRange], rng: np.random.Generator) -> dict[str, Any]:
    """One random-search draw from ``space``, in its order.

    A ``float`` range is drawn uniformly (log-uniformly with ``log``), an ``int`` range the same and rounded
    to the nearest integer within it, ``choices`` uniformly; a range with a ``step`` lands on its grid; a
    parameter whose ``when`` its earlier draws do not meet is left out.

    >>> rng = np.random.default_rng(0)
    >>> p = draw(parse_space({"k": {"int": [5, 800], "log": True}, "norm": {"choices": [True, False]}}), rng)
    >>> sorted(p), 5 <= p["k"] <= 800, isinstance(p["k"], int)
    (['k', 'norm'], True, True)
    """
    params: dict[str, Any] = {}
    for r in space:
        if any(params.get(parent, _ABSENT) not in allowed for parent, allowed in r.when.items()):
            continue
        if r.kind == "choices":
            params[r.name] = r.choices[int(rng.integers(len(r.choices)))]
            continue
        assert r.low is not None and r.high is not None
        low, high = r.low, r.high
        value = float(np.exp(rng.uniform(np.log(low), np.log(high)))) if r.log else rng.uniform(low, high)
        if r.step is not None:  # the nearest point of the grid low, low + step, ... within high
            value = low + min(round((value - low) / r.step), (high - low) // r.step) * r.step
        value = min(high, max(low, value))  # exp(log(high)) may round a hair above high
        params[r.name] = round(value) if r.kind == "int" else float(value)
    return params
