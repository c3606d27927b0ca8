"""Data: the :class:`Interactions` model, loaders of known formats, dataset statistics."""

from receval.data.interactions import Interactions, RatingScale
from receval.data.loaders import FORMATS, load, load_user_features
from receval.data.prepare import prepare
from receval.data.stats import dataset_stats
from receval.data.synthetic import generate

__all__ = [
    "FORMATS", "Interactions", "RatingScale", "dataset_stats", "generate", "load", "load_user_features", "prepare",
]  # fmt: skip
