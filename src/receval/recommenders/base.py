"""The recommender protocol: scikit-learn's estimator contract (Buitinck et al., ECML PKDD workshop 2013).

Any object with ``fit(train) -> self`` and ``score(users) -> (len(users), n_items)``
is evaluable; ``predict(users, items)`` serves rating prediction and
``update(users, items, feedback)`` interactive protocols. :class:`Recommender` is a
convenience base class giving scikit-learn's ``get_params(deep=True)``/``set_params``
(so :func:`sklearn.base.clone` works) and fitted-state checks; models from other
libraries need not inherit from it. :func:`clone` is the one way to get a fresh,
optionally re-seeded copy of a model. :func:`score_items` scores given items only
(sampled evaluation's candidates): through the model's own ``score_items(users, items)``
when it has one, else from full rows in user batches.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, Protocol, runtime_checkable

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ColdStartError, DataError, NotFittedError

__all__ = [
    "MAX_ITERATIONS",
    "Recommender",
    "Scorer",
    "Predictor",
    "Updatable",
    "clone",
    "positive_ratings",
    "score_items",
]

MAX_ITERATIONS = 10_000
"""Most passes over the training data an iterative fit may make (ALS ``iterations``, SGD ``epochs``), refused
above before the fit: implicit's ALS defaults to 15 sweeps and converges in tens (Hu, Koren & Volinsky 2008;
Rendle et al. 2022 tune iALS up to a few hundred), Funk's SGD to 20 epochs; MovieLens-100K takes about 0.05 s
an ALS sweep with 100 factors, so 10,000 is already minutes, and 10^12 would run for millennia."""

# the fallback of score_items scores this many (user, item) cells of full rows at a time (64 MB of float64)
SCORE_CELLS = 1 << 23


@runtime_checkable
class Scorer(Protocol):
    """Ranks items: one score per (user, item); higher is better."""

    def fit(self, train: Interactions) -> Scorer: ...

    def score(self, users: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Predictor(Protocol):
    """Predicts ratings for (user, item) pairs."""

    def fit(self, train: Interactions) -> Predictor: ...

    def predict(self, users: np.ndarray, items: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Updatable(Protocol):
    """Learns online from feedback (1 positive, 0 negative, NaN unknown)."""

    def update(self, users: np.ndarray, items: np.ndarray, feedback: np.ndarray) -> None: ...


class Recommender:
    """Base class: constructor arguments are hyper-parameters, stored unchanged.

    Learned state lives in attributes ending in ``_``; ``n_users_``/``n_items_`` are
    set by :meth:`_start_fit`.

    Examples
    --------
    >>> class Constant(Recommender):
    ...     def __init__(self, value: float = 1.0):
    ...         self.value = value
    ...     def fit(self, train):
    ...         self._start_fit(train)
    ...         return self
    ...     def score(self, users):
    ...         users = self._check_users(users)
    ...         return np.full((len(users), self.n_items_), self.value)
    >>> Constant(2.0).get_params()
    {'value': 2.0}
    >>> Constant().score([0])
    Traceback (most recent call last):
    ...
    receval.errors.NotFittedError: Constant is not fitted yet: call fit(train) first
    """

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Hyper-parameters, as given to the constructor.

        ``deep`` is scikit-learn's flag for nested estimators; receval's models hold
        none, so both values give the same dict.
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Recommender:
        """Change hyper-parameters (unknown names raise ``ConfigError``)."""
        from receval.errors import ConfigError

        valid = set(self._param_names())
        for key, value in params.items():
            if key not in valid:
                raise ConfigError(f"{type(self).__name__} has no parameter {key!r}; valid: {sorted(valid)}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # helpers for subclasses ---------------------------------------------------
    def _start_fit(self, train: Interactions) -> None:
        from receval.errors import DataError

        if not isinstance(train, Interactions):
            raise DataError(f"fit expects receval.Interactions, got {type(train).__name__}")
        if train.n_ratings == 0:
            raise DataError(f"cannot fit {type(self).__name__} on empty training data")
        self.n_users_ = train.n_users
        self.n_items_ = train.n_items

    def _check_factor_memory(
        self, factors: int, itemsize: int, fix: str = "lower factors (e.g. factors=50)", *, squares: int = 0
    ) -> None:
        """Refuse, before fitting, factor matrices (users + items) x ``factors`` and ``squares`` factors x factors
        matrices (a solver's Gram matrices) larger than the free memory.

        >>> from receval.data.interactions import Interactions
        >>> class Factored(Recommender):
        ...     def fit(self, train):
        ...         self._start_fit(train)
        ...         self._check_factor_memory(10**12, 8)
        >>> Factored().fit(Interactions.from_ids(["u"], ["i"], [5.0]))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        receval.errors.ConfigError: fitting Factored with 1,000,000,000,000 factors (1 users + 1 items) needs 16.0 TB...
        """
        from receval.validate import check_memory

        entities = f"{self.n_users_:,} users + {self.n_items_:,} items"
        what = f"fitting {type(self).__name__} with {factors:,} factors ({entities})"
        check_memory(float(itemsize) * factors * (self.n_users_ + self.n_items_), what, fix)
        if squares:
            check_memory(
                float(itemsize) * factors * (self.n_users_ + self.n_items_ + squares * factors),
                f"{what}, with {squares} Gram matrices of {factors:,} x {factors:,},",
                fix,
            )

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_items_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(train) first")

    def _check_users(self, users: np.ndarray) -> np.ndarray:
        return self._check_indices(users, "user", getattr(self, "n_users_", 0))

    def _check_items(self, items: np.ndarray) -> np.ndarray:
        return self._check_indices(items, "item", getattr(self, "n_items_", 0))

    def _check_candidates(self, users: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Checked user indices and a 2-D item matrix with a row per user (for ``score_items``)."""
        users = self._check_users(users)
        shape = np.shape(items)
        if len(shape) != 2 or shape[0] != len(users):
            from receval.errors import ConfigError

            raise ConfigError(f"score_items needs one row of items per user ({len(users)}), got shape {shape}")
        return users, self._check_items(items).reshape(shape)

    def _check_indices(self, values: np.ndarray, what: str, n: int) -> np.ndarray:
        self._check_fitted()
        values = np.asarray(values, dtype=np.int64).ravel()
        if values.size and (values.min() < 0 or values.max() >= n):
            bad = values[(values < 0) | (values >= n)][0]
            raise ColdStartError(f"{what} index {bad} is outside the {n} {what}s {type(self).__name__} was trained on")
        return values


def positive_ratings(train: Interactions, threshold: float, model: str, otherwise: str = "") -> np.ndarray:
    """The rows of ``train`` rated at or above ``threshold``, the parameter of the model named ``model``.

    A threshold off the training data's rating scale is refused with a message that names
    the model and its parameter: a default of 4 (MovieLens' "liked") means nothing on
    data rated 1..3 or on implicit data, whose every rating is the same value; ``otherwise``
    adds the model's other way out (", or threshold=none to count every rating").

    Returns
    -------
    numpy.ndarray of bool
        One entry per training row: whether it is rated at or above ``threshold``.

    Examples
    --------
    >>> positive_ratings(Interactions.from_arrays([0, 1], [0, 1], [5, 2]), 4, "EASE").tolist()
    [True, False]
    >>> positive_ratings(Interactions.from_arrays([0], [0], [3]), 4, "EASE")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: EASE's threshold 4 is outside the rating scale 3..3 of its training data; give \
the model a threshold on that scale (parameter threshold, e.g. threshold=3)
    """
    low, high = train.scale.low, train.scale.high
    if not low <= threshold <= high:
        raise DataError(
            f"{model}'s threshold {threshold:g} is outside the rating scale {low:g}..{high:g} of its training data; "
            f"give the model a threshold on that scale (parameter threshold, e.g. threshold={high:g}){otherwise}"
        )
    return train.positive_mask(threshold)


def clone(model: Any, *, seed: int | None = None) -> Any:
    """A fresh, unfitted copy of ``model`` with the same hyper-parameters.

    The copy is built from ``get_params()`` (parameter values deep-copied), as
    :func:`sklearn.base.clone` does; a model without ``get_params`` is deep-copied
    (its next ``fit`` replaces the learned state). With ``seed``, a model that has a
    ``seed`` parameter gets that seed; models without one are copied unchanged.

    Returns
    -------
    object
        A new, unfitted model of ``model``'s class.

    Examples
    --------
    >>> from receval.recommenders import make
    >>> model = make("mf", factors=8)
    >>> copy_ = clone(model, seed=7)
    >>> copy_.get_params()["factors"], copy_.get_params()["seed"], model.get_params()["seed"]
    (8, 7, 0)
    >>> clone(make("biases"), seed=7)  # no seed parameter: unchanged
    Biases(item_damping=25.0, user_damping=10.0, clip=True)
    """
    if hasattr(model, "get_params"):
        params = copy.deepcopy(model.get_params())
        new = type(model)(**params)
    else:
        new = copy.deepcopy(model)
    if seed is not None and hasattr(new, "get_params") and "seed" in new.get_params():
        new.set_params(seed=seed)
    return new


def score_items(model: Any, users: Any, items: Any) -> np.ndarray:
    """The scores of ``model`` for ``items[r]`` of user ``users[r]``: a (len(users), items.shape[1]) float array.

    A model with a ``score_items(users, items)`` method (matrix factorisation, ALS,
    popularity, biases: a lookup or a dot product per candidate) computes only those
    cells, so that ranking 1M users against 100 sampled candidates each never builds 1M
    full score rows. Any other model is scored through ``score(users)`` in user batches
    of at most :data:`SCORE_CELLS` cells, the asked columns kept. The two give the same
    numbers (RecBole's ``full_sort_predict`` / ``predict`` pair serves the same purpose).

    Parameters
    ----------
    model
        A fitted model (``score(users) -> (len(users), n_items)``).
    users
        User indices, one per row of ``items``.
    items
        Item indices, an int array (len(users), n): the candidates of each row.

    Returns
    -------
    numpy.ndarray
        float64 scores, higher is better, shaped like ``items``.

    Examples
    --------
    >>> class Table:  # a model with score only: the fallback
    ...     def score(self, users):
    ...         return np.array([[0.1, 0.2, 0.3], [1.0, 2.0, 3.0]])[np.asarray(users)]
    >>> score_items(Table(), [1, 0], [[2, 0], [1, 1]]).tolist()
    [[3.0, 1.0], [0.2, 0.2]]
    """
    from receval.errors import ConfigError

    users = np.asarray(users, dtype=np.int64).ravel()
    items = np.asarray(items)
    if items.ndim != 2 or items.shape[0] != len(users) or not np.issubdtype(items.dtype, np.integer):
        raise ConfigError(
            f"score_items needs an int array of item indices with one row per user ({len(users)} rows), "
            f"got shape {items.shape} of {items.dtype}"
        )
    items = items.astype(np.int64, copy=False)
    own = getattr(model, "score_items", None)
    if own is not None:
        return np.asarray(own(users, items), dtype=np.float64).reshape(items.shape)
    n_items = getattr(model, "n_items_", None)
    if n_items is None:
        n_items = np.shape(model.score(users[:1]))[1] if len(users) else 0
    if items.size and (items.min() < 0 or items.max() >= n_items):
        bad = items[(items < 0) | (items >= n_items)][0]
        raise ColdStartError(f"item index {bad} is outside the {n_items} items {type(model).__name__} scores")
    out = np.empty(items.shape, dtype=np.float64)
    step = max(1, SCORE_CELLS // max(int(n_items), 1))
    for start in range(0, len(users), step):
        rows = np.asarray(model.score(users[start : start + step]), dtype=np.float64)
        out[start : start + step] = np.take_along_axis(rows, items[start : start + step], axis=1)
    return out
