"""Non-personalised baselines: Random, MostPopular, Average, GlobalMean, Biases.

Random, MostPopular and Average are the ranking baselines of the cyclic protocol
(Cuesta Fernández, BSc thesis, Universidad Autónoma de Madrid, 2021) and learn
online through ``update(users, items, feedback)`` (feedback
1.0 positive, 0.0 negative, NaN unknown). GlobalMean and Biases are the rating
prediction baselines RMSE studies compare against.

Cold start: users or items outside the training id space raise
:class:`~receval.errors.ColdStartError`. Users and items inside it but without a
training rating get the fallback of each model (e.g. a zero bias).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from receval.data.interactions import Interactions, RatingScale
from receval.errors import ConfigError
from receval.recommenders.bandits.item import OnlineAverage, OnlinePopularity, OnlineRandom
from receval.recommenders.base import Recommender

__all__ = ["Random", "MostPopular", "Average", "GlobalMean", "Biases", "check_pairs"]


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"{name}={value!r} is not one of {list(choices)}")


def _feedback(users, items, feedback) -> tuple[np.ndarray, np.ndarray]:
    items = np.asarray(items, dtype=np.int64).ravel()
    fb = np.asarray(feedback, dtype=np.float64).ravel()
    if len(items) != len(fb) or len(np.asarray(users).ravel()) != len(fb):
        raise ConfigError(f"update needs as many users, items and feedback values; got {len(items)} and {len(fb)}")
    return items, fb


def _item_lookup(model: MostPopular | Average, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """A non-personalised model's one score row, looked up at each user's candidates."""
    _, items = model._check_candidates(users, items)
    return np.asarray(model._scores(), dtype=np.float64)[items]


def check_pairs(model: Recommender, users: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validated (user, item) index arrays of equal length for ``predict``.

    Returns
    -------
    tuple of numpy.ndarray
        The user and the item indices, checked against ``model``'s fitted id space.

    Examples
    --------
    >>> from receval import Interactions
    >>> from receval.recommenders import make
    >>> model = make("popularity").fit(Interactions.from_arrays([0, 1], [0, 1], [5, 4]))
    >>> [a.tolist() for a in check_pairs(model, [0, 1], [1, 1])]
    [[0, 1], [1, 1]]
    >>> check_pairs(model, [0], [0, 1])
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: predict needs as many users as items; got 1 and 2
    """
    users, items = model._check_users(users), model._check_items(items)
    if len(users) != len(items):
        raise ConfigError(f"predict needs as many users as items; got {len(users)} and {len(items)}")
    return users, items


class Random(OnlineRandom):
    """Uniformly random scores, reproducible per (seed, user) whatever the batching.

    In the cyclic simulator (:func:`receval.simulate.simulate`) it recommends a
    uniformly random available item per decision; ``threshold`` is set there (it
    binarises the training counts the simulator's kernels keep, which random ignores)
    and is not needed for one-shot ranking.

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 1], [0, 2], [5, 3])
    >>> m = Random(seed=1).fit(train)
    >>> bool((m.score([0, 1])[1] == m.score([1])[0]).all())
    True
    """

    def __init__(self, seed: int = 0, threshold: float | None = None):
        self.seed = seed
        self.threshold = threshold

    def fit(self, train: Interactions) -> Random:
        if self.threshold is None:  # one-shot ranking: nothing to count
            self._start_fit(train)
            return self
        super().fit(train)
        return self

    def score(self, users: np.ndarray) -> np.ndarray:
        users = self._check_users(users)
        out = np.empty((len(users), self.n_items_))
        for row, u in enumerate(users):
            out[row] = np.random.default_rng([self.seed, int(u)]).random(self.n_items_)
        return out

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at the given items: each user's seeded row drawn one at a time, never all rows at once."""
        users, items = self._check_candidates(users, items)
        out = np.empty(items.shape)
        for row, u in enumerate(users):
            out[row] = np.random.default_rng([self.seed, int(u)]).random(self.n_items_)[items[row]]
        return out

    def update(self, users: np.ndarray, items: np.ndarray, feedback: np.ndarray) -> None:
        """Random learns nothing."""
        self._check_fitted()


class MostPopular(OnlinePopularity):
    """Items scored by how many ratings they received (all, or positive only).

    The same object serves one-shot ranking and the cyclic simulator, whose kernels
    update the counts in place and count positive feedback only (the simulator
    refuses ``update_count="any"``).

    Parameters
    ----------
    count
        What ``fit`` counts: ``"positive"`` ratings (``rating >= threshold``) or
        ``"any"`` rating.
    update_count
        What ``update`` counts: ``"positive"`` feedback (1.0) or ``"any"`` known
        feedback (0.0 or 1.0). CycloRec counted any rating at training time and
        positives online: ``count="any", update_count="positive"``.
    threshold
        Relevance threshold λ on the rating scale (4 for MovieLens 1–5, 3 for CM100k).

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 1, 2], [0, 1, 1], [5, 2, 2])
    >>> MostPopular(threshold=4).fit(train).score([0]).tolist()
    [[1.0, 0.0]]
    >>> m = MostPopular(count="any", threshold=4).fit(train)
    >>> m.score([0]).tolist()
    [[1.0, 2.0]]
    >>> m.update([0], [0], [1.0]); m.score([0]).tolist()
    [[2.0, 2.0]]
    """

    def __init__(
        self,
        count: Literal["positive", "any"] = "positive",
        update_count: Literal["positive", "any"] = "positive",
        threshold: float = 4.0,
    ):
        self.count = count
        self.update_count = update_count
        self.threshold = threshold

    def fit(self, train: Interactions) -> MostPopular:
        _check_choice("count", self.count, ("positive", "any"))
        _check_choice("update_count", self.update_count, ("positive", "any"))
        super().fit(train)
        return self

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at the given items: a lookup of their counts."""
        return _item_lookup(self, users, items)

    @property
    def counts_(self) -> np.ndarray:
        """The item counts (the scores), updated in place by feedback."""
        self._check_fitted()
        return self.a_

    def update(self, users: np.ndarray, items: np.ndarray, feedback: np.ndarray) -> None:
        """Count positive (or any known) feedback."""
        if self.update_count == "positive":
            super().update(users, items, feedback)
            return
        self._check_fitted()
        items, fb = _feedback(users, items, feedback)
        items = self._check_items(items)
        np.add.at(self.a_, items[~np.isnan(fb)], 1.0)


class Average(OnlineAverage):
    """Smoothed positive rate σ_i = (a_i + 1) / (n_i + 2) of binarised ratings.

    ``a_i`` counts item ``i``'s ratings at or above ``threshold`` and ``n_i`` all its
    ratings (Laplace smoothing: an unrated item scores 1/2). ``update`` adds known
    feedback (1.0 or 0.0); unknown (NaN) feedback changes nothing. The same object
    serves one-shot ranking and the cyclic simulator.

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 1, 2], [0, 1, 1], [5, 5, 2])
    >>> Average(threshold=4).fit(train).score([0]).round(3).tolist()
    [[0.667, 0.5]]
    """

    def __init__(self, threshold: float = 4.0):
        self.threshold = threshold

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at the given items: a lookup of their smoothed positive rates."""
        return _item_lookup(self, users, items)


class GlobalMean(Recommender):
    """Predicts the mean training rating for every pair (scores are all equal).

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 1, 1], [0, 0, 1], [5, 3, 4])
    >>> GlobalMean().fit(train).predict([0, 1], [1, 1]).tolist()
    [4.0, 4.0]
    """

    def fit(self, train: Interactions) -> GlobalMean:
        self._start_fit(train)
        self.mean_ = float(np.mean(train.ratings, dtype=np.float64))
        return self

    def predict(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        users, _ = check_pairs(self, users, items)
        return np.full(len(users), self.mean_)

    def score(self, users: np.ndarray) -> np.ndarray:
        users = self._check_users(users)
        return np.full((len(users), self.n_items_), self.mean_)

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at the given items: the mean for every one."""
        _, items = self._check_candidates(users, items)
        return np.full(items.shape, self.mean_)


def _clip(values: np.ndarray, scale: RatingScale, clip: bool) -> np.ndarray:
    return np.clip(values, scale.low, scale.high) if clip else values


class Biases(Recommender):
    """Damped user and item biases: r̂_ui = μ + b_i + b_u (Koren 2010, §2.1).

    ``b_i = Σ_u (r_ui − μ) / (item_damping + n_i)`` then
    ``b_u = Σ_i (r_ui − μ − b_i) / (user_damping + n_u)``; a user or item without
    training ratings has bias 0. Predictions are clipped to the rating scale when
    ``clip`` (as scikit-surprise does); ``score`` ranks by ``μ + b_i + b_u``.

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 0], [5, 1, 5])
    >>> Biases(item_damping=0, user_damping=0).fit(train).predict([1], [1]).round(3).tolist()
    [1.0]
    """

    def __init__(self, item_damping: float = 25.0, user_damping: float = 10.0, clip: bool = True):
        self.item_damping = item_damping
        self.user_damping = user_damping
        self.clip = clip

    def fit(self, train: Interactions) -> Biases:
        if self.item_damping < 0 or self.user_damping < 0:
            raise ConfigError("item_damping and user_damping must be non-negative")
        self._start_fit(train)
        r = train.ratings.astype(np.float64)
        self.mean_ = float(r.mean())
        self.scale_ = train.scale
        dev = r - self.mean_
        n_i = np.bincount(train.items, minlength=self.n_items_)
        with np.errstate(invalid="ignore", divide="ignore"):
            b_i = np.bincount(train.items, weights=dev, minlength=self.n_items_) / (self.item_damping + n_i)
            self.item_bias_ = np.nan_to_num(b_i)
            dev -= self.item_bias_[train.items]
            n_u = np.bincount(train.users, minlength=self.n_users_)
            b_u = np.bincount(train.users, weights=dev, minlength=self.n_users_) / (self.user_damping + n_u)
        self.user_bias_ = np.nan_to_num(b_u)
        return self

    def predict(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        users, items = check_pairs(self, users, items)
        raw = self.mean_ + self.user_bias_[users] + self.item_bias_[items]
        return _clip(raw, self.scale_, self.clip)

    def score(self, users: np.ndarray) -> np.ndarray:
        users = self._check_users(users)
        return self.mean_ + self.user_bias_[users][:, None] + self.item_bias_[None, :]

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at the given items: ``μ + b_u + b_i`` looked up, no full row."""
        users, items = self._check_candidates(users, items)
        return self.mean_ + self.user_bias_[users][:, None] + self.item_bias_[items]
