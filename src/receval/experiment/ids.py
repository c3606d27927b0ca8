"""Stable identities: canonical JSON, short hashes, and the task record they name.

A task's id is a hash of its canonical JSON, so the same task gets the same id in every
run (that is how a resumed run recognises finished work) and any change to what a task
computes changes its id. This module imports nothing of the experiment package: the
configuration, the grid, the protocols and the store all name things through it.

Examples
--------
>>> canonical_json({"b": [1, 2.5], "a": "x"})
'{"a":"x","b":[1,2.5]}'
>>> stable_hash({"a": "x", "b": [1, 2.5]}) == stable_hash({"b": [1, 2.5], "a": "x"})
True
>>> len(stable_hash([1, 2], 12))
12
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Task", "canonical_json", "stable_hash", "task_id"]


def canonical_json(value: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces) used for hashes and task ids.

    Returns
    -------
    str
        The same text for equal values, whatever the order of their keys.

    Examples
    --------
    >>> canonical_json({"b": None, "a": float("nan")})
    '{"a":NaN,"b":null}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


def stable_hash(value: Any, n: int = 16) -> str:
    """The first ``n`` hex digits of the SHA-256 of ``canonical_json(value)``.

    Returns
    -------
    str
        ``n`` lowercase hex digits, the same on every machine and in every process.

    Examples
    --------
    >>> stable_hash({"seed": 0})
    'bd0488843468e63c'
    """
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:n]


def task_id(body: Mapping[str, Any]) -> str:
    """The id of the task described by ``body`` (every field that changes what it computes).

    Returns
    -------
    str
        :func:`stable_hash` of ``body``, 16 hex digits: a file name, and the same task
        gets the same id in every run, so a resumed run finds what it finished.

    Examples
    --------
    >>> task_id({"seed": 0, "recommender": "popularity"}) == task_id({"recommender": "popularity", "seed": 0})
    True
    >>> len(task_id({"seed": 0})), task_id({"seed": 0}) != task_id({"seed": 1})
    (16, True)
    """
    return stable_hash(body, 16)


@dataclass(frozen=True)
class Task:
    """One unit of work; ``id`` is the hash of every other field (see :func:`receval.experiment.grid.expand`)."""

    id: str
    dataset: str
    dataset_key: str
    split: Mapping[str, Any]
    fold: int | None
    recommender: str | None
    algorithm: str | None
    params: Mapping[str, Any]
    protocol: str
    options: Mapping[str, Any]
    metrics: tuple[str, ...]
    seed: int
    slices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    varying: tuple[str, ...] = ()  # protocol options that vary in the grid (for labels; not hashed)

    def describe(self) -> str:
        """A short human-readable label: ``dataset/recommender(params) seed=s``.

        >>> Task("0", "toy", "k", {}, None, "pop", "popularity", {"n": 1}, "one-shot", {}, (), 3).describe()
        'toy/pop(n=1) seed=3'
        """
        params = ",".join(f"{k}={v}" for k, v in self.params.items())
        opts = ",".join(f"{k}={v}" for k, v in self.options.items() if k in self.varying)
        parts = [self.dataset, f"{self.recommender}({params})" if self.recommender else self.protocol]
        if opts:
            parts.append(opts)
        fold = f" fold={self.fold}" if self.fold is not None else ""
        return "/".join(parts) + f" seed={self.seed}{fold}"
