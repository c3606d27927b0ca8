"""Data: the :class:`Interactions` model, loaders of known formats, preparation, statistics, synthetic data.

Only :class:`Interactions` and :class:`RatingScale` are imported with the package; the
other names load their module on first use (PEP 562), so a command that only
evaluates files never imports the generator's compiled kernels (numba, scipy.special).

>>> import receval.data as data
>>> data.load.__module__, data.generate.__module__
('receval.data.loaders', 'receval.data.synthetic')
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from receval.data.interactions import Interactions, RatingScale

_LAZY = {
    "FORMATS": "receval.data.loaders",
    "load": "receval.data.loaders",
    "load_user_features": "receval.data.loaders",
    "prepare": "receval.data.prepare",
    "dataset_stats": "receval.data.stats",
    "generate": "receval.data.synthetic",
}

__all__ = [
    "FORMATS", "Interactions", "RatingScale", "dataset_stats", "generate", "load", "load_user_features", "prepare",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'receval.data' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
