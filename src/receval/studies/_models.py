"""Fresh, unfitted models for the studies, from a name, a model or a factory.

Every study refits a model many times (before and after an attack, per fold, per
window); each fit starts from a fresh copy so no learned state leaks between fits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from receval.errors import ConfigError

__all__ = ["model_factory"]


def model_factory(spec: Any, *, seed: int | None = None) -> Callable[[], Any]:
    """A function returning a fresh, unfitted model for ``spec`` at each call.

    ``spec`` is an algorithm name of :func:`receval.recommenders.make` (made now, so
    an unknown name fails before any work; given ``seed`` when it has a ``seed``
    parameter), an unfitted model (each call returns a
    :func:`receval.recommenders.clone` of it, its own seed kept) or a factory (a
    class or a function, called as is).

    >>> from receval.recommenders import make
    >>> fresh = model_factory("mf", seed=4)
    >>> fresh() is not fresh(), fresh().get_params()["seed"]
    (True, 4)
    >>> model = make("item-knn", k=5)
    >>> copy_ = model_factory(model)()
    >>> copy_ is not model, copy_.get_params()["k"]
    (True, 5)
    """
    from receval.recommenders import clone, make

    if isinstance(spec, str):
        spec = clone(make(spec), seed=seed)
    if hasattr(spec, "fit") and not isinstance(spec, type):
        return lambda: clone(spec)
    if callable(spec):
        return spec
    raise ConfigError(
        f"{spec!r} is not a model: give an algorithm name of receval.recommenders.make, an unfitted model or a factory"
    )
