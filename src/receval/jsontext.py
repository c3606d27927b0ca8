"""JSON text that a strict parser reads: the one place receval turns results into JSON.

Python's :func:`json.dumps` writes NaN and ±infinity as ``NaN``, ``Infinity`` and
``-Infinity``, which are not JSON: ``jq``, JavaScript's ``JSON.parse`` and every strict
parser refuse them. A value that is not a finite number (an undefined metric, a ratio over
zero) is written as ``null``, NaN and ±inf alike, and :func:`dumps` passes
``allow_nan=False``, so a value that slipped past :func:`plain` fails loudly instead of
writing invalid JSON. NumPy scalars and arrays become Python numbers and lists; any other
object becomes its text (a path, a timestamp).

Examples
--------
>>> import numpy as np
>>> dumps({"ndcg@10": np.float64(0.5), "gap": float("inf"), "p": float("nan"), "n": np.int64(3)})
'{"ndcg@10": 0.5, "gap": null, "p": null, "n": 3}'
>>> plain([np.array([1.0, -np.inf]), (True, None)])
[[1.0, None], [True, None]]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps", "plain"]


def plain(value: Any) -> Any:
    """``value`` with plain Python containers and scalars only, every non-finite float as ``None``.

    Mappings keep the keys :func:`json.dumps` writes itself (str, int, float, bool, None) and
    write any other key as text; lists, tuples and NumPy arrays become lists.

    Returns
    -------
    Any
        A value :func:`json.dumps` writes with ``allow_nan=False``.

    Examples
    --------
    >>> plain({"a": float("-inf"), 1: [float("nan"), 2.5]})
    {'a': None, 1: [None, 2.5]}
    """
    if isinstance(value, Mapping):
        return {_key(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):  # NumPy scalars and arrays
        value = value.tolist()
        if isinstance(value, list):
            return [plain(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def _key(key: Any) -> Any:
    if hasattr(key, "item") and not isinstance(key, str | bytes):
        key = key.item()
    return key if key is None or isinstance(key, str | int | float | bool) else str(key)


def dumps(value: Any, **options: Any) -> str:
    """``value`` (through :func:`plain`) as strict JSON text; ``options`` go to :func:`json.dumps`.

    Returns
    -------
    str
        JSON text with no ``NaN`` or ``Infinity`` in it.

    Examples
    --------
    >>> dumps({"b": -float("inf"), "a": 1}, sort_keys=True)
    '{"a": 1, "b": null}'
    """
    return json.dumps(plain(value), allow_nan=False, **options)
