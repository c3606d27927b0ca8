"""The kNN bandit of Sanz-Cruzado, Castells & López (RecSys 2019).

State: ``liked_`` (users x items, 1 when the user's rating or feedback is positive),
``n_liked_`` (n_v, each user's positives) and the symmetric co-like counts
``co_[u, v] = c_uv`` (items both u and v liked). To recommend to u, every other user v
gets a weight x_v ~ Beta(α⁰ + c_uv, β⁰ + n_v − c_uv); the k largest are the
neighbours and the item maximising Σ_j x_j · liked(nn_j, i) among u's available
items is recommended (uniformly at random when no neighbour likes any of them).
A positive feedback (u, i) adds 1 to c_uv and c_vu for every v that liked i and to
n_u; negative and unknown feedback change nothing (the model learns from positives,
as in the paper's implicit-feedback setting).

Cost per decision: one Beta draw per other user plus the neighbours' positives;
memory: users² int32 co-like counts and users x items for the positives.

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 2, 2], [5, 5, 4, 5, 1])
>>> m = KNNBandit(k=1, threshold=4).fit(train)
>>> m.co_.tolist(), m.n_liked_.tolist()
([[0, 1, 0], [1, 0, 0], [0, 0, 0]], [2, 2, 0])
>>> m.update([2], [1], [1.0])
>>> m.co_.tolist(), m.n_liked_.tolist()
([[0, 1, 1], [1, 0, 0], [1, 0, 0]], [2, 2, 1])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.bandits import _kernels as K
from receval.recommenders.bandits.item import _check_threshold, feedback_codes
from receval.recommenders.base import Recommender
from receval.validate import check_memory

__all__ = ["KNNBandit"]


class KNNBandit(Recommender):
    """kNN bandit with k Thompson-sampled neighbours (see the module docs).

    Parameters
    ----------
    k
        Number of neighbours.
    alpha0, beta0
        Beta prior of every neighbour weight (both must be positive).
    threshold
        Ratings ≥ threshold are positives (set by the simulator).
    seed
        For the draws of :meth:`score` (the simulator uses its own seed).
    """

    def __init__(
        self, k: int = 10, alpha0: float = 1.0, beta0: float = 1.0, threshold: float | None = None, seed: int = 0
    ):
        self.k = k
        self.alpha0 = alpha0
        self.beta0 = beta0
        self.threshold = threshold
        self.seed = seed

    def fit(self, train: Interactions) -> KNNBandit:
        """Positives and co-like counts of the training ratings."""
        if int(self.k) < 1:
            raise ConfigError(f"k={self.k} must be at least 1")
        if not (self.alpha0 > 0 and self.beta0 > 0):
            raise ConfigError(f"the Beta prior needs alpha0 > 0 and beta0 > 0, got {self.alpha0}, {self.beta0}")
        self._start_fit(train)
        pos = train.positive_mask(_check_threshold(self, train))
        nu, ni = train.n_users, train.n_items
        check_memory(  # sized first: co-like counts (users², int64 then int32) and two users x items tables
            12.0 * nu * nu + 5.0 * nu * ni,
            f"{type(self).__name__} on {nu:,} users x {ni:,} items (dense co-like counts and liked-item tables)",
            "filter the data (min_user_ratings / min_item_ratings) or simulate a sample of users",
        )
        likes = sp.csr_matrix((np.ones(int(pos.sum()), np.int32), (train.users[pos], train.items[pos])), shape=(nu, ni))
        likes.sum_duplicates()
        likes.data[:] = 1
        co = (likes @ likes.T).toarray().astype(np.int32)
        np.fill_diagonal(co, 0)
        self.liked_ = likes.toarray().astype(np.uint8)
        self.n_liked_ = np.diff(likes.indptr).astype(np.int64)
        self.liked_list_ = np.zeros((nu, ni), np.int32)
        for u in range(nu):
            row = likes.indices[likes.indptr[u] : likes.indptr[u + 1]]
            self.liked_list_[u, : len(row)] = row
        self.co_ = co
        self.params_ = np.array([float(self.k), float(self.alpha0), float(self.beta0)])
        return self

    def kernel_state(self) -> tuple:
        """The arrays the simulator's kernels read and update in place (plus scratch space)."""
        self._check_fitted()
        ni = self.n_items_
        k = max(1, min(int(self.k), self.n_users_ - 1))
        return (
            self.liked_,
            self.liked_list_,
            self.n_liked_,
            self.co_,
            self.params_,
            np.zeros(ni),
            np.zeros(ni, np.uint8),
            np.zeros(ni, np.int64),
            np.zeros(k, np.int64),
            np.zeros(k),
        )

    def update(self, users: np.ndarray, items: np.ndarray, feedback: np.ndarray) -> None:
        """Learn from feedback: positives update the co-like counts; the rest is ignored."""
        users = self._check_users(users)
        items = self._check_items(items)
        codes = feedback_codes(feedback)
        state = self.kernel_state()
        for u, i, f in zip(users, items, codes, strict=True):
            K.knn_update(state, u, i, f)

    def score(self, users: np.ndarray) -> np.ndarray:
        """Σ_j x_j · liked(nn_j, i) with freshly drawn neighbour weights (seeded)."""
        users = self._check_users(users)
        rng = np.random.default_rng(self.seed)
        k = max(1, min(int(self.k), self.n_users_ - 1))
        out = np.zeros((len(users), self.n_items_))
        for row, u in enumerate(users):
            x = rng.beta(self.alpha0 + self.co_[u], self.beta0 + self.n_liked_ - self.co_[u])
            x[u] = -1.0
            nn = np.argsort(-x, kind="stable")[:k]
            out[row] = x[nn] @ self.liked_[nn]
        return out
