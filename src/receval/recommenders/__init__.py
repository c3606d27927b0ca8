"""Recommenders: the protocol, baselines, kNN, MF, HKV (ALS) and adapters to other libraries.

>>> from receval.recommenders import make, recommend
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 4, 5])
>>> items, _ = recommend(make("popularity").fit(train), [0, 1], k=1, exclude=train)
>>> items.tolist()
[[-1], [0]]
"""

from receval.recommenders.base import Predictor, Recommender, Scorer, Updatable
from receval.recommenders.registry import list_algorithms, make, parse_params
from receval.recommenders.topn import recommend

__all__ = ["Predictor", "Recommender", "Scorer", "Updatable", "list_algorithms", "make", "parse_params", "recommend"]
