"""Data: the :class:`Interactions` model, loaders of known formats, preparation, statistics, synthetic data.

Every name loads its module on first use (PEP 562): importing the package imports
nothing heavy (``receval --help`` stays fast), and a command that only evaluates files
never imports the generator's compiled kernels (numba, scipy.special).

>>> import receval.data as data
>>> data.load.__module__, data.generate.__module__
('receval.data.loaders', 'receval.data.synthetic')
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "FORMATS": "receval.data.formats",
    "Interactions": "receval.data.interactions",
    "RatingScale": "receval.data.interactions",
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
