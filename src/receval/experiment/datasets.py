"""Obtaining a configuration's data sets: load or generate, then filter.

Examples
--------
>>> from receval.experiment.config import DatasetSpec
>>> ds = prepare_dataset(DatasetSpec("toy", generate={"n_users": 30, "n_items": 20, "n_ratings": 200, "seed": 3}))
>>> ds.data.n_ratings
200
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.experiment.config import DatasetSpec
from receval.experiment.protocols import PreparedDataset

__all__ = ["prepare_dataset", "apply_filters"]


def prepare_dataset(spec: DatasetSpec, *, user_features: bool = False) -> PreparedDataset:
    """Load (a known ``name``, or ``path`` + ``format``) or generate the data set, apply its filters.

    ``user_features=True`` also loads the demographics file the format ships
    (MovieLens 100K/1M), needed by demographic slices.
    """
    if spec.generate is not None:
        from receval.data.synthetic import generate

        try:
            data = generate(**dict(spec.generate))
        except TypeError as err:
            raise ConfigError(f"datasets.{spec.label}.generate: {err}") from None
    else:
        from receval.data import load

        data = load(_path(spec), spec.format, **dict(spec.options))
    data = apply_filters(data, spec.filters, label=spec.label)
    features = None
    if user_features:
        if spec.generate is not None:
            raise ConfigError(f"demographic slices need user features, but data set {spec.label!r} is generated")
        from receval.data import load_user_features

        features = load_user_features(_path(spec), spec.format)
    return PreparedDataset(data=data, user_features=features)


def _path(spec: DatasetSpec) -> str:
    """The folder of a known data set (downloaded and verified once) or the given path."""
    if spec.name is not None:
        from receval.data.registry import fetch

        return str(fetch(spec.name))
    return str(spec.resolved_path)


def apply_filters(data: Interactions, filters: Mapping[str, Any], *, label: str = "") -> Interactions:
    """Keep familiar ratings only and/or users and items with enough ratings (one pass each, in that order).

    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 4, 3], extra={"familiar": [True, False, True]})
    >>> apply_filters(d, {"familiar_only": True}).n_ratings
    2
    >>> apply_filters(d, {"min_item_ratings": 2}).n_ratings
    2
    """
    if filters.get("familiar_only"):
        if "familiar" not in data.extra:
            raise DataError(f"data set {label!r} has no 'familiar' column; familiar_only needs CM100k-like data")
        data = data.subset(np.asarray(data.extra["familiar"], dtype=bool))
    if filters.get("min_user_ratings", 0) > 0:
        counts = np.bincount(data.users, minlength=data.n_users)
        data = data.subset(counts[data.users] >= filters["min_user_ratings"])
    if filters.get("min_item_ratings", 0) > 0:
        counts = np.bincount(data.items, minlength=data.n_items)
        data = data.subset(counts[data.items] >= filters["min_item_ratings"])
    return data
