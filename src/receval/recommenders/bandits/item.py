"""Non-personalised online recommenders: random, popularity, average and the item bandit.

All keep two counts per item, ``a_`` (successes plus the prior α⁰) and ``b_``
(failures plus β⁰), initialised from the training ratings binarised at ``threshold``,
and learn from feedback through :meth:`update` (1 positive, 0 negative, NaN unknown).
The cyclic simulator (:func:`receval.simulate.simulate`) drives the same counts from
its numba kernels, so after a simulation the model holds the learned state.

=================  ==========================================================
``OnlineRandom``    a uniformly random available item
``OnlinePopularity`` argmax of positive ratings so far (``count="any"``: every
                    training rating counts, as CycloRec does; feedback adds positives)
``OnlineAverage``   argmax of the smoothed mean σᵢ = (aᵢ + 1)/(nᵢ + 2); unknown
                    feedback is not a rating and is ignored
``ItemBandit``      one arm per item shared by all users; ε-greedy (ε may decay as
                    ε/(1 + decay·step)), UCB (μ̂ᵢ + δ·√(ln t / nᵢ), arms never pulled
                    first) or Thompson sampling (argmax of Beta(aᵢ + o, bᵢ + o) draws,
                    o = ``draw_offset``: 0 textbook, 1 CycloRec)
=================  ==========================================================

``unknown="failure"`` counts feedback absent from the test data as a failure (the
standard item bandit); ``"ignore"`` leaves the counts alone (the "ignore missing"
bandit).

UCB scores μ̂ᵢ + δ·√(ln t / nᵢ) (Eq. 2.13 of Cuesta Fernández's BSc thesis, UAM 2021).
What counts as a pull is ``pulls``: ``"all"`` (receval's default) counts item i's
training ratings and counted feedback in nᵢ (never the prior) and their total in t;
``"feedback"`` counts only the simulation's counted feedback, the thesis' reading of
nᵢ(t) as the times arm i was chosen, so every arm is first chosen once — the thesis'
initialisation round — while μ̂ still uses the training ratings. The thesis says δ
"may also decrease with time" without a schedule; receval's is the one it uses for ε,
δ/(1 + ``delta_decay``·step) with step = decisions so far (0: constant δ, the default).

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 1, 1, 2], [0, 0, 1, 1], [5, 4, 1, 2])
>>> bandit = ItemBandit("egreedy", epsilon=0.0, threshold=4).fit(train)
>>> bandit.a_.tolist(), bandit.b_.tolist()
([3.0, 1.0], [1.0, 3.0])
>>> bandit.update([2], [1], [float("nan")])
>>> bandit.b_.tolist()
[1.0, 4.0]
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.bandits import _codes as C
from receval.recommenders.base import Recommender, positive_ratings

__all__ = ["OnlineRandom", "OnlinePopularity", "OnlineAverage", "ItemBandit"]

_POLICIES = {"egreedy": C.ARGMAX, "ucb": C.ARGMAX, "thompson": C.THOMPSON}
PULLS = ("all", "feedback")


class _Thresholded(Protocol):
    threshold: float | None


def _check_threshold(model: _Thresholded, train: Interactions) -> float:
    if model.threshold is None:
        raise ConfigError(
            f"{type(model).__name__} needs a relevance threshold to binarise ratings: pass threshold=λ "
            "(simulate() sets it from its own threshold)"
        )
    positive_ratings(train, model.threshold, type(model).__name__)
    return float(model.threshold)


def _check_finite(model: object, names: tuple[str, ...]) -> None:
    """Refuse a parameter that is not a finite number (the kernels' sums would turn it into NaN scores).

    >>> _check_finite(ItemBandit(alpha0=float("inf")), ("alpha0", "beta0"))
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: alpha0=inf must be a finite number
    """
    for name in names:
        value = getattr(model, name)
        if not np.isfinite(value):
            raise ConfigError(f"{name}={value!r} must be a finite number", parameters=[name])


def feedback_codes(feedback: np.ndarray) -> np.ndarray:
    """Protocol feedback (1, 0, NaN) to the kernels' int8 codes (1, 0, −1).

    Returns
    -------
    numpy.ndarray
        int8 codes, one per value: 1 positive (> 0.5), 0 negative, −1 unknown (NaN).

    Examples
    --------
    >>> feedback_codes([1.0, 0.0, float("nan")]).tolist()
    [1, 0, -1]
    """
    fb = np.asarray(feedback, dtype=np.float64).ravel()
    out = np.where(np.isnan(fb), -1, np.where(fb > 0.5, 1, 0)).astype(np.int8)
    return out


class _ItemCounts(Recommender):
    """Shared state and protocol methods of the non-personalised online models."""

    threshold: float | None  # set by each model's __init__
    _policy = C.ARGMAX
    _kind = C.MEAN

    def _scores(self) -> np.ndarray:
        """The current score of every item (one row, the same for every user); each model defines it."""
        raise NotImplementedError

    def _priors(self) -> tuple[float, float]:
        return 0.0, 0.0

    def _unknown_fails(self) -> bool:
        return False

    def _pulls_from_feedback(self) -> bool:
        return False

    def _train_counts(self, train: Interactions, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = train.n_items
        a = np.bincount(train.items[pos], minlength=n).astype(np.float64)
        b = np.bincount(train.items[~pos], minlength=n).astype(np.float64)
        return a, b

    def fit(self, train: Interactions) -> _ItemCounts:
        """Counts of the training ratings (binarised at ``threshold``) plus the prior."""
        self._start_fit(train)
        pos = train.positive_mask(_check_threshold(self, train))
        a, b = self._train_counts(train, pos)
        a0, b0 = self._priors()
        self.a_ = a + a0
        self.b_ = b + b0
        from_feedback = self._pulls_from_feedback()
        self.params_ = self._kernel_params(0.0 if from_feedback else float((a + b).sum()))
        n, levels = train.n_items, 0
        w = np.zeros(n)
        if self._kind == C.UCB:  # the weights, then the observations that are not pulls
            w = np.concatenate([w, self.a_ + self.b_ if from_feedback else np.full(n, a0 + b0)])
        if self._policy == C.THOMPSON:  # thresholds with 2·3^k arms above, k < levels, up to 90% of the arms
            levels = 1 + sum(1 for k in range(1, 64) if 2 * 3**k <= 0.9 * n)
            self.params_[10] = float(n)  # new thresholds every n_items decisions
        users = train.n_users if levels else 0
        self.keys_ = (np.zeros(n), w, np.zeros(n * levels), np.zeros(users), np.zeros(levels))
        self.keyed_ = False  # the items' keys serve a simulation's decisions only: made when one asks for them
        return self

    def _kernel_params(self, total: float) -> np.ndarray:
        p = np.zeros(12)
        p[0] = self._policy
        p[1] = self._kind
        p[7] = 1.0 if self._unknown_fails() else 0.0
        p[8] = total
        return p

    def kernel_state(self) -> tuple[np.ndarray, ...]:
        """The arrays the simulator's kernels read and update in place."""
        self._check_fitted()
        state = (self.a_, self.b_, self.params_, *self.keys_)
        if not self.keyed_:
            from receval.recommenders.bandits._kernels import item_keys

            item_keys(state)
            self.keyed_ = True
        return state

    def update(self, users: np.ndarray, items: np.ndarray, feedback: np.ndarray) -> None:
        """Learn from feedback: 1 a success, 0 a failure, NaN unknown (see ``unknown``)."""
        users = self._check_users(users)
        items = self._check_items(items)
        codes = feedback_codes(feedback)
        if not len(users) == len(items) == len(codes):
            raise ConfigError(f"update got {len(users)} users, {len(items)} items and {len(codes)} feedback values")
        from receval.recommenders.bandits._kernels import item_update

        state = self.kernel_state()
        for u, i, f in zip(users, items, codes, strict=True):
            item_update(state, u, i, f)

    def _expected(self) -> np.ndarray:
        n = self.a_ + self.b_
        return np.divide(self.a_, n, out=np.zeros_like(n), where=n > 0)

    def score(self, users: np.ndarray) -> np.ndarray:
        """Current item scores for each user (the same row for every user)."""
        users = self._check_users(users)
        return np.broadcast_to(self._scores(), (len(users), self.n_items_)).copy()


class OnlineRandom(_ItemCounts):
    """A uniformly random available item (scores: seeded uniform draws).

    >>> from receval import Interactions
    >>> m = OnlineRandom(threshold=4).fit(Interactions.from_arrays([0, 1], [0, 1], [5, 2]))
    >>> m.score([0, 1]).shape
    (2, 2)
    """

    _policy = C.RANDOM

    def __init__(self, threshold: float | None = None, seed: int = 0):
        self.threshold = threshold
        self.seed = seed

    def _scores(self) -> np.ndarray:
        return np.random.default_rng(self.seed).random(self.n_items_)


class _SameForEveryUser:
    """Scores that do not depend on the user: :func:`receval.recommenders.topn.recommend` ranks the one row once."""

    def global_scores(self) -> np.ndarray:
        """The row ``score`` gives every user."""
        self._check_fitted()  # type: ignore[attr-defined]
        return self._scores()  # type: ignore[attr-defined]


class OnlinePopularity(_SameForEveryUser, _ItemCounts):
    """Most popular: argmax of the positive ratings so far.

    ``count="any"`` counts every training rating whatever its value (CycloRec's
    popularity); feedback adds positives in both modes.
    """

    _kind = C.COUNT

    def __init__(self, count: str = "positive", threshold: float | None = None):
        self.count = count
        self.threshold = threshold

    def _train_counts(self, train: Interactions, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.count not in ("positive", "any"):
            raise ConfigError(f"count={self.count!r} is not one of 'positive', 'any'")
        a, b = super()._train_counts(train, pos)
        return (a + b, np.zeros_like(b)) if self.count == "any" else (a, b)

    def _scores(self) -> np.ndarray:
        return self.a_.copy()


class OnlineAverage(_SameForEveryUser, _ItemCounts):
    """Best smoothed mean σᵢ = (aᵢ + 1)/(nᵢ + 2) of the binarised ratings so far."""

    _kind = C.MEAN

    def __init__(self, threshold: float | None = None):
        self.threshold = threshold

    def _priors(self) -> tuple[float, float]:
        return 1.0, 1.0

    def _scores(self) -> np.ndarray:
        return self._expected()


class ItemBandit(_ItemCounts):
    """Item bandit with ε-greedy, UCB or Thompson sampling (see the module docs).

    Parameters
    ----------
    policy : "egreedy", "ucb" or "thompson"
    epsilon, epsilon_decay
        ε-greedy exploration rate ε/(1 + decay·step), step = decisions so far.
    delta, delta_decay
        UCB exploration weight δ/(1 + decay·step) (the thesis gives no schedule; this is ε's).
    pulls : "all" or "feedback"
        UCB's nᵢ and t: training ratings and feedback (receval's default) or only the
        simulation's feedback (the thesis' Eq. 2.13; see the module docs).
    alpha0, beta0
        Prior successes / failures of every arm.
    unknown : "failure" or "ignore"
        What feedback absent from the test data does to the counts.
    draw_offset
        Thompson sampling draws Beta(a + o, b + o): 0 textbook, 1 CycloRec.
    threshold
        Ratings ≥ threshold are successes (set by the simulator).
    seed
        For the draws of :meth:`score` (the simulator uses its own seed).
    """

    def __init__(
        self,
        policy: str = "egreedy",
        epsilon: float = 0.1,
        epsilon_decay: float = 0.0,
        delta: float = 1.0,
        delta_decay: float = 0.0,
        pulls: str = "all",
        alpha0: float = 1.0,
        beta0: float = 1.0,
        unknown: str = "failure",
        draw_offset: float = 0.0,
        threshold: float | None = None,
        seed: int = 0,
    ):
        self.policy = policy
        self.epsilon = epsilon
        self.epsilon_decay = epsilon_decay
        self.delta = delta
        self.delta_decay = delta_decay
        self.pulls = pulls
        self.alpha0 = alpha0
        self.beta0 = beta0
        self.unknown = unknown
        self.draw_offset = draw_offset
        self.threshold = threshold
        self.seed = seed

    def _priors(self) -> tuple[float, float]:
        return float(self.alpha0), float(self.beta0)

    def _unknown_fails(self) -> bool:
        return self.unknown == "failure"

    def _pulls_from_feedback(self) -> bool:
        return self.policy == "ucb" and self.pulls == "feedback"

    def _validate(self) -> None:
        """The parameters' own rules: run by :func:`~receval.recommenders.make` before any data is read, and by fit."""
        _check_finite(self, ("epsilon_decay", "delta", "delta_decay", "alpha0", "beta0", "draw_offset"))
        if self.policy not in _POLICIES:
            raise ConfigError(f"policy={self.policy!r} is not one of {sorted(_POLICIES)}")
        if self.pulls not in PULLS:
            raise ConfigError(f"pulls={self.pulls!r} is not one of {', '.join(PULLS)}")
        if self.delta_decay < 0:
            raise ConfigError(f"delta_decay={self.delta_decay} must be non-negative")
        if self.unknown not in ("failure", "ignore"):
            raise ConfigError(f"unknown={self.unknown!r} is not one of 'failure', 'ignore'")
        if self.alpha0 < 0 or self.beta0 < 0:
            raise ConfigError(f"priors must be non-negative, got alpha0={self.alpha0}, beta0={self.beta0}")
        if not 0.0 <= self.epsilon <= 1.0 or self.epsilon_decay < 0:
            raise ConfigError(
                f"epsilon={self.epsilon} must lie in [0, 1] and epsilon_decay={self.epsilon_decay} be non-negative"
            )
        if self.policy == "thompson" and min(self.alpha0, self.beta0) + self.draw_offset < C.MIN_BETA:
            raise ConfigError(
                f"Thompson sampling draws Beta(a + {self.draw_offset:g}, b + {self.draw_offset:g}), which needs "
                f"positive parameters of at least {C.MIN_BETA:g}: raise alpha0/beta0 "
                f"(now {self.alpha0:g}, {self.beta0:g}) or draw_offset"
            )

    def fit(self, train: Interactions) -> ItemBandit:
        self._validate()
        self._policy = _POLICIES[self.policy]
        self._kind = C.UCB if self.policy == "ucb" else C.MEAN
        super().fit(train)
        return self

    def _kernel_params(self, total: float) -> np.ndarray:
        p = super()._kernel_params(total)
        p[2] = self.epsilon if self.policy == "egreedy" else 0.0
        p[3] = self.epsilon_decay
        p[4] = self.delta
        p[6] = self.draw_offset
        p[11] = self.delta_decay
        return p

    def _scores(self) -> np.ndarray:
        if self.policy == "thompson":
            rng = np.random.default_rng(self.seed)
            return rng.beta(self.a_ + self.draw_offset, self.b_ + self.draw_offset)
        mean = self._expected()
        if self.policy == "ucb":  # δ as at step 0: outside a simulation there are no decisions to decay it by
            pulls = self.a_ + self.b_ - self.keys_[1][self.n_items_ :]
            log_t = np.log(max(self.params_[8], 1.0))
            bonus = self.delta * np.sqrt(log_t / np.where(pulls > 0, pulls, 1.0))
            return np.where(pulls > 0, mean + bonus, np.inf)
        return mean
