"""Sequential baselines: a first-order Markov chain and session-based kNN (SKNN / V-SKNN).

Both read each user's training history in time order (timestamps, ties in row order) and
score the next item from the end of it, through the ordinary protocol (``fit(train)``,
``score(users)``), so ``receval recommend -a markov`` and a configuration's
``algorithm = "sknn"`` work as for any other model. Data without timestamps is refused
at ``fit``: neither model has an order to read.

* :class:`MarkovChain` (``markov``): ``P(j | i) = (c_ij + α) / (Σ_j' c_ij' + α·n_items)``,
  ``c_ij`` the number of times item ``j`` directly follows item ``i`` in a user's history
  (every user's consecutive pairs, repeats included); a user is scored by the row of their
  last item. The first-order transition model that FPMC (Rendle et al., WWW 2010) factorises.
* :class:`SessionKNN` (``sknn``): the session-based kNN of Ludewig & Jannach, "Evaluation of
  session-based recommendation algorithms", UMUAI 28(4-5), 2018, §3.3, with every other
  user's training history as a past session and the user's last ``session_length`` events
  as the current session ``s``. Of the past sessions sharing an item with ``s``, the
  ``sample_size`` most recent (by their last event) are kept, the ``k`` most similar of
  them are the neighbours ``N_s``, and ``score(i) = Σ_{n ∈ N_s} sim(s, n) · 1_n(i)``.
  ``weighting="same"`` is SKNN: ``sim`` is the cosine of the binary vectors,
  ``|s ∩ n| / sqrt(|s| |n|)``. ``weighting="linear"`` is V-SKNN: the current session is a
  real vector in which the event at position ``p`` (1 = oldest) of the ``L`` events of
  ``s`` weighs ``p / L`` (the last event 1, the paper's linear decay; an item repeated in
  ``s`` takes the weight of its last occurrence), and ``sim`` is its dot product with the
  binary past session, as the paper describes V-SKNN.

Ties between neighbours (equal recency, equal similarity) go to the lower user index.

Examples
--------
>>> from receval.data.interactions import Interactions
>>> data = Interactions.from_ids(["a", "a", "a", "b", "b"], ["x", "y", "x", "x", "y"], [1.0] * 5,
...                              timestamps=[1, 2, 3, 1, 2])
>>> MarkovChain().fit(data).score([0, 1]).round(2).tolist()  # a ends on x, b on y; x->y twice, y->x once
[[0.0, 1.0], [1.0, 0.0]]
>>> SessionKNN(k=1).fit(data).score([1]).tolist()  # b's only neighbour is a: cosine 2/sqrt(2*2)
[[1.0, 1.0]]
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.recommenders.base import SCORE_CELLS, Recommender

__all__ = ["MarkovChain", "SessionKNN", "time_order"]


def time_order(train: Interactions, model: str) -> np.ndarray:
    """Row indices of ``train`` by user, then timestamp, then row (a stable sort); a DataError without timestamps.

    >>> from receval.data.interactions import Interactions
    >>> data = Interactions.from_ids(["a", "b", "a"], ["x", "y", "z"], [1.0] * 3, timestamps=[5, 1, 2])
    >>> time_order(data, "markov").tolist()
    [2, 0, 1]
    """
    if train.timestamps is None:
        label = f"data set {train.name!r}" if train.name else "the training data"
        raise DataError(
            f"{model} orders each user's history by time, but {label} has no timestamps; "
            "load it with a timestamp column"
        )
    return np.lexsort((train.timestamps, train.users))


def _user_starts(users: np.ndarray, n_users: int) -> np.ndarray:
    """CSR-style offsets of sorted ``users``: user u's rows are ``starts[u]:starts[u + 1]``."""
    return np.concatenate(([0], np.cumsum(np.bincount(users, minlength=n_users)))).astype(np.int64)


class MarkovChain(Recommender):
    """First-order Markov chain: the transition probabilities from a user's last item.

    Parameters
    ----------
    smoothing : float
        Additive (Laplace) smoothing ``α`` of every transition count, ``α >= 0``; with 0, an
        item never seen followed scores 0 for every next item.

    Examples
    --------
    >>> from receval.data.interactions import Interactions
    >>> data = Interactions.from_ids(["a"] * 3, ["x", "y", "x"], [1.0] * 3, timestamps=[1, 2, 3])
    >>> MarkovChain(smoothing=1.0).fit(data).score([0]).tolist()  # last x; x->y once: (0+1)/(1+2), (1+1)/(1+2)
    [[0.3333333333333333, 0.6666666666666666]]
    """

    def __init__(self, smoothing: float = 0.0):
        self.smoothing = smoothing

    def _validate(self) -> None:
        if not isinstance(self.smoothing, int | float) or not np.isfinite(self.smoothing) or self.smoothing < 0:
            raise ConfigError(f"smoothing must be a finite number >= 0, got {self.smoothing!r}")

    def fit(self, train: Interactions) -> MarkovChain:
        """Count the consecutive item pairs of every user's time-ordered history."""
        self._validate()
        self._start_fit(train)
        order = time_order(train, "markov")
        users, items = train.users[order], train.items[order]
        same = users[1:] == users[:-1]
        counts = sp.csr_matrix(
            (np.ones(int(same.sum())), (items[:-1][same], items[1:][same])), shape=(self.n_items_, self.n_items_)
        )
        counts.sum_duplicates()
        self.transitions_ = counts
        self.out_counts_ = np.asarray(counts.sum(axis=1)).ravel()
        last = np.full(self.n_users_, -1, dtype=np.int64)
        last[users] = items  # sorted by time within user: the last write is the last item
        self.last_item_ = last
        return self

    def score(self, users: np.ndarray) -> np.ndarray:
        """Rows ``P(· | last item)``; a user without training history scores 0 everywhere."""
        users = self._check_users(users)
        last = self.last_item_[users]
        known = last >= 0
        out = np.zeros((len(users), self.n_items_))
        rows = last[known]
        alpha = float(self.smoothing)
        dense = self.transitions_[rows].toarray() + alpha
        denom = self.out_counts_[rows] + alpha * self.n_items_
        out[known] = dense / np.where(denom > 0, denom, 1.0)[:, None]  # denominator 0: a row of zeros
        return out


class SessionKNN(Recommender):
    """Session-based kNN (SKNN; V-SKNN with ``weighting="linear"``), Ludewig & Jannach, UMUAI 2018.

    Parameters
    ----------
    k : int
        Neighbours per user, ``k >= 1``.
    sample_size : int
        The most recent past sessions sharing an item with the current one that are
        compared, ``>= 0`` (0: all of them).
    session_length : int or None
        The current session is the user's last ``session_length`` events (None: the whole history).
    weighting : {"same", "linear"}
        ``same``: SKNN, cosine of binary sessions; ``linear``: V-SKNN, the current session's
        events weighted ``p / L`` (last 1) and a dot product with the binary past session.

    Examples
    --------
    >>> SessionKNN(k=0).fit(None)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: k must be an integer >= 1, got 0
    """

    def __init__(
        self,
        k: int = 100,
        sample_size: int = 500,
        session_length: int | None = None,
        weighting: Literal["same", "linear"] = "same",
    ):
        self.k = k
        self.sample_size = sample_size
        self.session_length = session_length
        self.weighting = weighting

    def _validate(self) -> None:
        def integer(value: object) -> bool:
            return isinstance(value, int | np.integer) and not isinstance(value, bool)

        if not integer(self.k) or self.k < 1:
            raise ConfigError(f"k must be an integer >= 1, got {self.k!r}")
        if not integer(self.sample_size) or self.sample_size < 0:
            raise ConfigError(f"sample_size must be an integer >= 0 (0: every session), got {self.sample_size!r}")
        if self.session_length is not None and (not integer(self.session_length) or self.session_length < 1):
            raise ConfigError(f"session_length must be an integer >= 1 or None, got {self.session_length!r}")
        if self.weighting not in ("same", "linear"):
            raise ConfigError(f"weighting must be 'same' (SKNN) or 'linear' (V-SKNN), got {self.weighting!r}")

    def fit(self, train: Interactions) -> SessionKNN:
        """Build the binary past sessions, their recency and every user's current session."""
        self._validate()
        self._start_fit(train)
        order = time_order(train, "sknn")
        users, items = train.users[order], train.items[order]
        times = train.timestamps[order] if train.timestamps is not None else np.zeros(len(order), np.int64)
        n_u, n_i = self.n_users_, self.n_items_
        past = sp.csr_matrix((np.ones(len(users)), (users, items)), shape=(n_u, n_i))
        past.sum_duplicates()
        past.data[:] = 1.0
        self.sessions_ = past
        self.session_sizes_ = np.diff(past.indptr).astype(np.float64)
        recency = np.full(n_u, np.iinfo(np.int64).min, dtype=np.int64)
        recency[users] = times  # the last event of each session
        self.recency_ = recency
        # the current session: the last L events, each item weighted by its last occurrence
        starts = _user_starts(users, n_u)
        position = np.arange(len(users)) - starts[users]  # 0 = oldest
        length = np.diff(starts)[users]
        window = length if self.session_length is None else np.minimum(length, self.session_length)
        keep = position >= length - window
        pos_in = position[keep] - (length - window)[keep] + 1  # 1 = oldest event of the session
        # V-SKNN keeps the integer positions and divides the dot product by L once: sums of integers are exact,
        # so equal similarities tie exactly whatever the order of summation
        weight = pos_in.astype(np.float64) if self.weighting == "linear" else np.ones(int(keep.sum()))
        self.session_lengths_ = np.maximum(
            np.diff(starts) if self.session_length is None else np.minimum(np.diff(starts), self.session_length), 1
        ).astype(np.float64)
        u_s, i_s = users[keep], items[keep]
        key = u_s * n_i + i_s
        _, last = np.unique(key[::-1], return_index=True)  # the last occurrence of each (user, item)
        last = len(key) - 1 - last
        self.current_ = sp.csr_matrix((weight[last], (u_s[last], i_s[last])), shape=(n_u, n_i))
        return self

    def neighbours(self, users: np.ndarray) -> sp.csr_matrix:
        """The neighbour similarities: a (len(users), n_users) sparse matrix of ``sim(s_u, n)`` for ``n ∈ N_s``."""
        users = self._check_users(users)
        current = self.current_[users]
        overlap = (current @ self.sessions_.T).tocoo()
        row, col, dot = overlap.row.astype(np.int64), overlap.col.astype(np.int64), overlap.data
        mine = col != users[row]  # a user's own history is no neighbour
        row, col, dot = row[mine], col[mine], dot[mine]
        if self.weighting == "same":
            sizes = np.diff(current.indptr).astype(np.float64)
            sim = dot / np.sqrt(sizes[row] * self.session_sizes_[col])
        else:
            sim = dot / self.session_lengths_[users][row]
        if self.sample_size:
            order = np.lexsort((col, -self.recency_[col], row))
            row, col, sim = row[order], col[order], sim[order]
            keep = _rank_in_row(row, len(users)) < self.sample_size
            row, col, sim = row[keep], col[keep], sim[keep]
        order = np.lexsort((col, -sim, row))
        row, col, sim = row[order], col[order], sim[order]
        keep = _rank_in_row(row, len(users)) < self.k
        return sp.csr_matrix((sim[keep], (row[keep], col[keep])), shape=(len(users), self.n_users_))

    def score(self, users: np.ndarray) -> np.ndarray:
        """``Σ_{n ∈ N_s} sim(s, n) · 1_n(i)`` for every item, in batches of users."""
        users = self._check_users(users)
        out = np.empty((len(users), self.n_items_))
        step = max(1, SCORE_CELLS // max(self.n_items_, self.n_users_, 1))
        for start in range(0, len(users), step):
            batch = users[start : start + step]
            out[start : start + len(batch)] = (self.neighbours(batch) @ self.sessions_).toarray()
        return out


def _rank_in_row(row: np.ndarray, n_rows: int) -> np.ndarray:
    """The position of each entry within its row, for entries sorted by row."""
    starts = _user_starts(row, n_rows)
    return np.arange(len(row)) - starts[row]
