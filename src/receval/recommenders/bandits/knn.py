"""The kNN bandit of Sanz-Cruzado, Castells & López (RecSys 2019), two readings of its counts.

State: ``liked_`` (users x items, 1 when the user's rating or feedback is positive), the
symmetric agreement counts ``co_[u, v] = α_uv`` and ``n_rated_`` (n_v). To recommend to
u, every other user v gets a weight x_v ~ Beta(α⁰ + α_uv, β⁰ + n_v − α_uv) (Eq. 2.15 of
Cuesta Fernández's BSc thesis, UAM 2021, with receval's prior α⁰, β⁰ added so that a
pair with no agreement still has a proper Beta law); the k largest are the neighbours
and the item maximising Σ_j x_j · r(i, nn_j) among u's available items is recommended
(Eq. 2.17, r = 1 when nn_j liked i and 0 otherwise, the thesis' binarised ratings;
uniformly at random when no neighbour likes any of them).

``agreement`` says what α_uv and n_v count:

- ``"positive"`` (receval's default, kept from its earlier releases): α_uv = items both
  u and v liked, n_v = v's positives; negative feedback changes nothing (the
  implicit-feedback reading, where only positives are observed).
- ``"both"`` (the thesis' §2.2.4, Eq. 2.15–2.17): α_uv = items u and v rated the same way
  (both positive or both negative), n_v = every item v rated; a negative feedback (u, i)
  adds 1 to α_uv for every v who disliked i and to n_u. With repeated training ratings
  of a pair the last one counts.

In both readings unknown feedback (a pair absent from the test data) is not a rating
and changes nothing, and a pair already rated keeps its first known rating.

Cost per decision: one Beta draw per other user plus the neighbours' positives;
memory: users² int32 agreement counts and users x items for the positives (and, with
``agreement="both"``, the negatives).

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 0, 2, 2], [5, 5, 4, 5, 1])
>>> m = KNNBandit(k=1, threshold=4).fit(train)
>>> m.co_.tolist(), m.n_rated_.tolist()
([[0, 1, 0], [1, 0, 0], [0, 0, 0]], [2, 2, 0])
>>> m.update([2], [1], [1.0])
>>> m.co_.tolist(), m.n_rated_.tolist()
([[0, 1, 1], [1, 0, 0], [1, 0, 0]], [2, 2, 1])

The thesis' counts: user 2's dislike of item 2 is a rating, and agrees with nobody yet.

>>> t = KNNBandit(k=1, threshold=4, agreement="both").fit(train)
>>> t.co_.tolist(), t.n_rated_.tolist()
([[0, 1, 0], [1, 0, 0], [0, 0, 0]], [2, 2, 1])
>>> t.update([0], [2], [0.0])  # user 0 dislikes item 2, as user 2 did
>>> t.co_.tolist(), t.n_rated_.tolist()
([[0, 1, 1], [1, 0, 0], [1, 0, 0]], [3, 2, 1])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.bandits._codes import MIN_BETA
from receval.recommenders.bandits.item import _check_finite, _check_threshold, feedback_codes
from receval.recommenders.base import Recommender
from receval.validate import check_memory

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["KNNBandit", "AGREEMENTS"]

AGREEMENTS = ("positive", "both")


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
    agreement : "positive" or "both"
        What α_uv and n_v count: positives only (receval's default) or ratings of either
        sign, as the thesis' Eq. 2.15–2.17 define them (see the module docs).
    seed
        For the draws of :meth:`score` (the simulator uses its own seed).
    """

    def __init__(
        self,
        k: int = 10,
        alpha0: float = 1.0,
        beta0: float = 1.0,
        threshold: float | None = None,
        agreement: str = "positive",
        seed: int = 0,
    ):
        self.k = k
        self.alpha0 = alpha0
        self.beta0 = beta0
        self.threshold = threshold
        self.agreement = agreement
        self.seed = seed

    def _validate(self) -> None:
        """The parameters' own rules: run by :func:`~receval.recommenders.make` before any data is read, and by fit."""
        _check_finite(self, ("alpha0", "beta0"))
        if not 1 <= self.k < float("inf"):
            raise ConfigError(f"k={self.k} must be a whole number of neighbours, at least 1")
        if not (self.alpha0 >= MIN_BETA and self.beta0 >= MIN_BETA):
            raise ConfigError(
                f"the Beta prior needs alpha0 and beta0 of at least {MIN_BETA:g} (numba's Beta draws stall below), "
                f"got {self.alpha0}, {self.beta0}"
            )
        if self.agreement not in AGREEMENTS:
            raise ConfigError(f"agreement={self.agreement!r} is not one of {', '.join(AGREEMENTS)}")

    def fit(self, train: Interactions) -> KNNBandit:
        """Positives (and, with ``agreement="both"``, negatives) and agreement counts of the training ratings."""
        self._validate()
        self._start_fit(train)
        threshold = _check_threshold(self, train)
        both = self.agreement == "both"
        nu, ni = train.n_users, train.n_items
        check_memory(  # sized first: agreement counts (users², int64 then int32) and the users x items tables
            12.0 * nu * nu + (6.0 if both else 5.0) * nu * ni,
            f"{type(self).__name__} on {nu:,} users x {ni:,} items (dense agreement counts and rated-item tables)",
            "filter the data (min_user_ratings / min_item_ratings) or simulate a sample of users",
        )
        if both and train.has_duplicates:  # a pair is rated one way: its last rating
            train = train.deduplicate("last")
        pos = train.positive_mask(threshold)
        likes = _binary(train.users[pos], train.items[pos], nu, ni)
        co = likes @ likes.T
        self.liked_ = likes.toarray().astype(np.uint8)
        self.n_liked_ = np.diff(likes.indptr).astype(np.int64)
        if both:
            dislikes = _binary(train.users[~pos], train.items[~pos], nu, ni)
            co = co + dislikes @ dislikes.T
            self.disliked_ = dislikes.toarray().astype(np.uint8)
            self.n_rated_ = self.n_liked_ + np.diff(dislikes.indptr)
        else:  # never read: the kernels look at negatives only with agreement="both"
            self.disliked_ = np.zeros((0, 0), np.uint8)
            self.n_rated_ = self.n_liked_.copy()
        co = co.toarray().astype(np.int32)
        np.fill_diagonal(co, 0)
        self.liked_list_ = np.zeros((nu, ni), np.int32)
        for u in range(nu):
            row = likes.indices[likes.indptr[u] : likes.indptr[u + 1]]
            self.liked_list_[u, : len(row)] = row
        self.co_ = co
        self.params_ = np.array([float(self.k), float(self.alpha0), float(self.beta0), 1.0 if both else 0.0])
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
            self.disliked_,
            self.n_rated_,
        )

    def update(self, users: np.ndarray, items: np.ndarray, feedback: np.ndarray) -> None:
        """Learn from feedback: positives (and negatives with ``agreement="both"``) update the counts."""
        users = self._check_users(users)
        items = self._check_items(items)
        codes = feedback_codes(feedback)
        from receval.recommenders.bandits._kernels import knn_update

        state = self.kernel_state()
        for u, i, f in zip(users, items, codes, strict=True):
            knn_update(state, u, i, f)

    def score(self, users: np.ndarray) -> np.ndarray:
        """Σ_j x_j · liked(nn_j, i) with freshly drawn neighbour weights (seeded)."""
        users = self._check_users(users)
        rng = np.random.default_rng(self.seed)
        k = max(1, min(int(self.k), self.n_users_ - 1))
        out = np.zeros((len(users), self.n_items_))
        for row, u in enumerate(users):
            x = rng.beta(self.alpha0 + self.co_[u], self.beta0 + self.n_rated_ - self.co_[u])
            x[u] = -1.0
            nn = np.argsort(-x, kind="stable")[:k]
            out[row] = x[nn] @ self.liked_[nn]
        return out


def _binary(users: np.ndarray, items: np.ndarray, nu: int, ni: int) -> sp.csr_matrix:
    """The 0/1 users x items matrix of the given pairs (repeats count once)."""
    import scipy.sparse as sp

    m = sp.csr_matrix((np.ones(len(users), np.int32), (users, items)), shape=(nu, ni))
    m.sum_duplicates()
    m.data[:] = 1
    return m
