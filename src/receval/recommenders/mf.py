"""Biased matrix factorisation for ratings, trained by stochastic gradient descent.

``r̂_ui = μ + b_u + b_i + p_u·q_i`` (Koren, Bell & Volinsky 2009; scikit-surprise's
``SVD``). Each epoch visits the training ratings once, in an order shuffled by the
seeded generator (``shuffle=False``: training-row order), with the updates

``e = r − r̂``, ``b_u += lr (e − reg b_u)``, ``b_i += lr (e − reg b_i)``,
``p_u += lr (e q_i − reg p_u)``, ``q_i += lr (e p_u − reg q_i)``

(the old ``p_u`` in the last one). Defaults are surprise's (learning rate 0.005,
regularisation 0.02, 20 epochs, factors initialised N(0, 0.1²)) except 50 factors,
the seeds' setting. The loop is a sequential numba kernel, so a seed gives
bit-identical models.

Users or items inside the id space without training ratings get zero bias and
zero factors (a user without ratings is predicted ``μ + b_i``). Predictions are
clipped to the rating scale when ``clip``.

Top-N ranking (``score``, :func:`~receval.recommenders.recommend`) depends on
``ranking``. A model fitted to the observed ratings only predicts how much a user
would like an item *if* they rated it, so ranking by the predicted rating puts
rarely rated, highly rated items first: on MovieLens 100K ``u1`` (P@10, λ = 4,
training items excluded) that scores 0.120, below Popularity's 0.222 (Cremonesi,
Koren & Turrin, RecSys 2010, found the same for rating-trained MF). By default
(``ranking="pure-svd"``) ``score`` therefore uses PureSVD from that paper: the
``factors`` leading right singular vectors ``Q`` of the training rating matrix with
unrated entries 0, ``score(u) = r_u Q Qᵀ`` (0.327 on ``u1``); it is computed on the
first call of ``score``, so rating prediction alone never pays for it.
``ranking="rating"`` ranks by the (unclipped) predicted rating.

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 1, 1], [5, 3, 4, 2, 4])
>>> model = BiasedMF(factors=2, epochs=50, seed=1).fit(train)
>>> bool(abs(model.predict([0], [0])[0] - 5) < abs(model.predict([0], [1])[0] - 5))
True
"""

from __future__ import annotations

from typing import Literal

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.recommenders.base import MAX_ITERATIONS, Recommender
from receval.recommenders.baselines import check_pairs

__all__ = ["BiasedMF"]


@numba.njit(cache=True)
def _sgd_epoch(users, items, ratings, order, mu, bu, bi, pu, qi, lr, reg):  # pragma: no cover
    n_factors = pu.shape[1]
    for t in range(len(order)):
        j = order[t]
        u = users[j]
        i = items[j]
        dot = 0.0
        for f in range(n_factors):
            dot += qi[i, f] * pu[u, f]
        err = ratings[j] - (mu + bu[u] + bi[i] + dot)
        bu[u] += lr * (err - reg * bu[u])
        bi[i] += lr * (err - reg * bi[i])
        for f in range(n_factors):
            puf = pu[u, f]
            qif = qi[i, f]
            pu[u, f] += lr * (err * qif - reg * puf)
            qi[i, f] += lr * (err * puf - reg * qif)


class BiasedMF(Recommender):
    """Biased matrix factorisation by SGD (surprise's ``SVD``); see the module docstring.

    Parameters
    ----------
    factors
        Latent dimensions.
    epochs
        Passes over the training ratings.
    learning_rate, regularization
        SGD step and L2 penalty (for biases and factors alike).
    init_std
        Standard deviation of the normal initialisation of the factors.
    shuffle
        Visit the ratings in a new seeded random order each epoch.
    seed
        Seed of the initialisation and the shuffling.
    clip
        Clip predictions to the rating scale.
    ranking
        What ``score`` ranks by: ``"pure-svd"`` (PureSVD of the training ratings with
        ``factors`` dimensions) or ``"rating"`` (the predicted rating); see the module
        docstring.
    """

    def __init__(
        self,
        factors: int = 50,
        epochs: int = 20,
        learning_rate: float = 0.005,
        regularization: float = 0.02,
        init_std: float = 0.1,
        shuffle: bool = True,
        seed: int = 0,
        clip: bool = True,
        ranking: Literal["pure-svd", "rating"] = "pure-svd",
    ):
        self.factors = factors
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.regularization = regularization
        self.init_std = init_std
        self.shuffle = shuffle
        self.seed = seed
        self.clip = clip
        self.ranking = ranking

    def _validate(self) -> None:
        """The parameters' rules (also applied by :func:`receval.recommenders.make`, before any data is read)."""
        for name in ("factors", "epochs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.epochs > MAX_ITERATIONS:
            raise ConfigError(
                f"epochs={self.epochs} is more than {MAX_ITERATIONS:,} passes over the ratings (SGD converges in "
                f"tens); use at most {MAX_ITERATIONS:,}"
            )
        if not (self.learning_rate > 0 and self.regularization >= 0 and self.init_std >= 0):
            raise ConfigError("learning_rate must be > 0, regularization and init_std >= 0")
        if self.ranking not in ("pure-svd", "rating"):
            raise ConfigError(f"ranking={self.ranking!r} is not one of ['pure-svd', 'rating']")

    def fit(self, train: Interactions) -> BiasedMF:
        self._validate()
        self._start_fit(train)
        self._check_factor_memory(int(self.factors), np.dtype(np.float64).itemsize)
        self._train = train
        self.__dict__.pop("pure_svd_", None)
        rng = np.random.default_rng(self.seed)
        users, items = train.users.astype(np.int64), train.items.astype(np.int64)
        ratings = train.ratings.astype(np.float64)
        self.mean_ = float(ratings.mean())
        self.scale_ = train.scale
        self.user_factors_ = rng.normal(0.0, self.init_std, size=(self.n_users_, self.factors))
        self.item_factors_ = rng.normal(0.0, self.init_std, size=(self.n_items_, self.factors))
        self.user_bias_ = np.zeros(self.n_users_)
        self.item_bias_ = np.zeros(self.n_items_)
        order = np.arange(len(ratings))
        for _ in range(self.epochs):
            if self.shuffle:
                order = rng.permutation(len(ratings))
            _sgd_epoch(
                users,
                items,
                ratings,
                order,
                self.mean_,
                self.user_bias_,
                self.item_bias_,
                self.user_factors_,
                self.item_factors_,
                float(self.learning_rate),
                float(self.regularization),
            )
        learned = (self.user_bias_, self.item_bias_, self.user_factors_, self.item_factors_)
        if not all(np.isfinite(a).all() for a in learned):  # else every prediction is NaN, and scored as one
            raise DataError(
                f"mf (BiasedMF): SGD diverged at learning_rate={self.learning_rate!r} (the factors overflowed to "
                "inf/NaN); use a smaller learning_rate, e.g. 0.01"
            )
        self.user_factors_[np.bincount(users, minlength=self.n_users_) == 0] = 0.0
        self.item_factors_[np.bincount(items, minlength=self.n_items_) == 0] = 0.0
        return self

    def _raw(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        dots = np.einsum("ij,ij->i", self.user_factors_[users], self.item_factors_[items])
        return self.mean_ + self.user_bias_[users] + self.item_bias_[items] + dots

    def predict(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        users, items = check_pairs(self, users, items)
        raw = self._raw(users, items)
        return np.clip(raw, self.scale_.low, self.scale_.high) if self.clip else raw

    def score(self, users: np.ndarray) -> np.ndarray:
        """Top-N scores: PureSVD's ``r_u Q Qᵀ`` (default) or the unclipped predicted rating."""
        users = self._check_users(users)
        if self.ranking == "pure-svd":
            ratings, q = self._pure_svd()
            return np.asarray(ratings[users] @ q) @ q.T
        return (
            self.mean_
            + self.user_bias_[users][:, None]
            + self.item_bias_[None, :]
            + self.user_factors_[users] @ self.item_factors_.T
        )

    def score_items(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """``score`` at ``items[r]`` of user ``users[r]`` only: a dot product per candidate, no full row.

        >>> from receval import Interactions
        >>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 2, 1], [5, 3, 4, 2, 4])
        >>> model = BiasedMF(factors=2, epochs=5).fit(train)
        >>> bool(np.allclose(model.score_items([2], [[2, 0]]), model.score([2])[:, [2, 0]]))
        True
        """
        users, items = self._check_candidates(users, items)
        if self.ranking == "pure-svd":
            ratings, q = self._pure_svd()
            return np.einsum("uf,unf->un", np.asarray(ratings[users] @ q), q[items])
        return (
            self.mean_
            + self.user_bias_[users][:, None]
            + self.item_bias_[items]
            + np.einsum("uf,unf->un", self.user_factors_[users], self.item_factors_[items])
        )

    def _pure_svd(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """The training rating matrix and PureSVD's items x f matrix Q (computed once per fit).

        f = ``factors``; a matrix with fewer users or items than that keeps all of its
        singular vectors (a dense SVD: then ``Q Qᵀ`` projects onto the row space).
        """
        if "pure_svd_" not in self.__dict__:
            train = self._train.deduplicate("last") if self._train.has_duplicates else self._train
            ratings = train.to_csr().astype(np.float64)
            rank = min(ratings.shape)
            if int(self.factors) < rank:
                start = np.full(rank, 1.0 / np.sqrt(rank))  # ARPACK's start vector, fixed: deterministic
                _, _, vt = svds(ratings, k=int(self.factors), v0=start)
            else:
                _, _, vt = np.linalg.svd(ratings.toarray(), full_matrices=False)
            self.pure_svd_ = (ratings, np.ascontiguousarray(vt.T))
        return self.pure_svd_
