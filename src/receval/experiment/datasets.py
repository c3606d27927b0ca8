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

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.experiment.config import DatasetSpec
from receval.experiment.protocols import PreparedDataset

__all__ = ["prepare_dataset", "apply_filters"]


def prepare_dataset(spec: DatasetSpec, *, user_features: bool = False) -> PreparedDataset:
    """Load (a known ``name``, or ``path`` + ``format``) or generate the data set, apply its filters.

    ``user_features=True`` also loads the demographics file the format ships
    (MovieLens 100K/1M), needed by demographic slices.

    Returns
    -------
    PreparedDataset
        The interactions after the filters, and the user features when asked for.

    Examples
    --------
    >>> from receval.experiment.config import DatasetSpec
    >>> spec = DatasetSpec("toy", generate={"n_users": 30, "n_items": 20, "n_ratings": 200, "seed": 1},
    ...                    filters={"min_user_ratings": 5})
    >>> prepared = prepare_dataset(spec)
    >>> prepared.data.n_users <= 30, bool((prepared.data.to_frame()["user"].value_counts() >= 5).all())
    (True, True)
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
    """The configuration's ``filters`` applied by :func:`receval.data.prepare.prepare` (the one preparation path).

    Users and items left without a rating leave the id space, exactly as
    ``load(..., familiar_only=True)`` and ``receval simulate --familiar-only`` do.

    Returns
    -------
    Interactions
        The filtered data, over the ids that keep a rating.

    Examples
    --------
    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 4, 3], extra={"familiar": [True, False, True]})
    >>> apply_filters(d, {"familiar_only": True}).n_ratings
    2
    >>> apply_filters(d, {"min_item_ratings": 2}).n_ratings, apply_filters(d, {"min_item_ratings": 2}).n_items
    (2, 1)
    """
    from receval.data.prepare import prepare

    return prepare(data, **dict(filters), label=label)
