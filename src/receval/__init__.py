"""receval: rigorous offline evaluation of recommender systems.

The layers, bottom up (each imports only from the ones to its left; ``|`` joins siblings,
which never import each other; :mod:`receval._layers` holds the order and
``tests/test_layers.py`` enforces it)::

    errors -> atomic -> data -> split -> recommenders | metrics -> stats
        -> evaluate | simulate -> studies -> experiment -> report -> cli -> __main__

Examples
--------
>>> import receval
>>> data = receval.Interactions.from_arrays(users=[0, 0, 1], items=[0, 1, 1], ratings=[5, 3, 4])
>>> data.n_users, data.n_items, data.n_ratings
(2, 2, 3)
"""

from receval.data.interactions import Interactions, RatingScale
from receval.errors import ReceValError
from receval.evaluate import EvaluationResult, evaluate


def _installed_version() -> str:
    """The installed distribution's version (set from the git tag at build time)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("receval")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0.0.0+unknown"


__version__ = _installed_version()
del _installed_version

__all__ = ["EvaluationResult", "Interactions", "RatingScale", "ReceValError", "__version__", "evaluate"]
