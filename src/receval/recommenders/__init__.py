"""Recommenders: the protocol, baselines, kNN, MF, HKV (ALS) and adapters to other libraries.

Build one by name with :func:`make` (``receval algorithms`` lists names and
parameters), ``fit(train)``, then :func:`recommend` for ranked lists or
``predict(users, items)`` for ratings.

Cold start policy: user or item indices outside the training id space raise
:class:`~receval.errors.ColdStartError` in ``score``/``predict``; calling them before
``fit`` raises :class:`~receval.errors.NotFittedError`. Users and items inside the id
space (e.g. present only in the test split) but without a training rating get each
model's documented fallback: the global mean for GlobalMean and kNN (as
scikit-surprise), ``μ + b_i`` / ``μ + b_u`` for Biases and BiasedMF (zero bias and
zero factors), the item scores for the non-personalised baselines, and implicit's
(near-zero) factors for HKV. ``receval predict`` errors on test ids absent from the
training file unless ``--unknown global-mean`` or ``--unknown drop`` is given.

>>> from receval.recommenders import make, recommend
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 4, 5])
>>> items, _ = recommend(make("popularity").fit(train), [0, 1], k=1, exclude=train)
>>> items.tolist()
[[-1], [0]]
"""

from receval.recommenders.base import Predictor, Recommender, Scorer, Updatable, clone
from receval.recommenders.registry import list_algorithms, make, parse_params
from receval.recommenders.topn import recommend

__all__ = [
    "Predictor",
    "Recommender",
    "Scorer",
    "Updatable",
    "clone",
    "list_algorithms",
    "make",
    "parse_params",
    "recommend",
]
