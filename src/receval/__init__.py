"""receval: rigorous offline evaluation of recommender systems.

The layers, bottom up (each imports only from the ones to its left; ``|`` joins siblings,
which never import each other; :mod:`receval._layers` holds the order and
``tests/test_layers.py`` enforces it)::

    errors -> atomic -> data -> split -> recommenders | metrics -> stats
        -> evaluation | simulate -> studies -> experiment -> report -> cli -> __main__

``import receval`` imports nothing heavy (no pandas, numba, scipy or pyarrow): each name
below loads its module on first use (PEP 562), so ``receval --help`` starts about as
fast as ``import numpy``.

Examples
--------
>>> import receval
>>> data = receval.Interactions.from_arrays(users=[0, 0, 1], items=[0, 1, 1], ratings=[5, 3, 4])
>>> data.n_users, data.n_items, data.n_ratings
(2, 2, 3)
>>> callable(receval.evaluate), "evaluate_model" in dir(receval)
(True, True)
"""

from __future__ import annotations

import types
from importlib import import_module
from logging import NullHandler as _NullHandler
from logging import getLogger as _getLogger
from typing import TYPE_CHECKING, Any

from receval.errors import ReceValError

# The library logs to the "receval" logger hierarchy and shows nothing unless the application
# configures logging (the command line does, with -v/--verbose).
_getLogger(__name__).addHandler(_NullHandler())

if TYPE_CHECKING:
    from receval.data.interactions import Interactions, RatingScale
    from receval.evaluation import EvaluationResult, evaluate, evaluate_model

_LAZY: dict[str, str] = {
    "EvaluationResult": "receval.evaluation",
    "Interactions": "receval.data.interactions",
    "RatingScale": "receval.data.interactions",
    "evaluate": "receval.evaluation",
    "evaluate_model": "receval.evaluation",
}

__all__ = [
    "EvaluationResult", "Interactions", "RatingScale", "ReceValError", "__version__", "evaluate", "evaluate_model",
]  # fmt: skip


def _installed_version() -> str:
    """The installed distribution's version (set from the git tag at build time)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("receval")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":  # importlib.metadata alone costs as much as the rest of the start-up
        value: Any = _installed_version()
    elif name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'receval' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the subpackages imported so far (not the helpers of this module)."""
    loaded = {name for name, value in globals().items() if isinstance(value, types.ModuleType)}
    return sorted(set(__all__) | (loaded - {"types"}))
