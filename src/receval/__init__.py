"""receval: rigorous offline evaluation of recommender systems.

The flow, left to right (each stage imports only from the ones to its left)::

    data -> split -> recommenders -> metrics -> evaluate/simulate -> analysis -> experiment -> report

Examples
--------
>>> import receval
>>> data = receval.Interactions.from_arrays(users=[0, 0, 1], items=[0, 1, 1], ratings=[5, 3, 4])
>>> data.n_users, data.n_items, data.n_ratings
(2, 2, 3)
"""

from importlib.metadata import PackageNotFoundError, version

from receval.data.interactions import Interactions, RatingScale
from receval.errors import ReceValError
from receval.evaluate import EvaluationResult, evaluate

try:
    __version__ = version("receval")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"

__all__ = ["EvaluationResult", "Interactions", "RatingScale", "ReceValError", "__version__", "evaluate"]
