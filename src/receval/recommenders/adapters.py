"""Adapters: models of scikit-surprise and implicit in receval's protocol, unchanged.

``make("surprise:KNNWithMeans", k=50, sim_options={"name": "pearson"})`` or
``make("implicit:BayesianPersonalizedRanking", factors=64)`` build them; every
parameter goes to the other library's class as is.

Wrapping anything else takes a few lines — the protocol is duck-typed::

    class MyModel:
        def __init__(self, **params):
            self.params = params
        def fit(self, train):              # a receval.Interactions
            self.n_users_, self.n_items_ = train.n_users, train.n_items
            self.inner = OtherLibrary(**self.params).train(train.to_csr())
            return self
        def score(self, users):            # (len(users), n_items) array, higher = better
            return self.inner.scores(users)
        def predict(self, users, items):   # optional: rating prediction
            return self.inner.predict(users, items)

Indices are receval's contiguous user/item indices, so the other library never sees
the original ids.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.als import check_implicit, fit_implicit, solver_squares
from receval.recommenders.base import Recommender
from receval.recommenders.baselines import check_pairs

__all__ = ["SurpriseAdapter", "ImplicitAdapter"]

_IMPLICIT_MODULES = ("implicit.cpu.als", "implicit.cpu.bpr", "implicit.cpu.lmf", "implicit.nearest_neighbours")


class _Adapter(Recommender):
    def __init__(self, algorithm: str, **params: Any):
        self.algorithm = algorithm
        self.params = params

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"algorithm": self.algorithm, **self.params}

    def set_params(self, **params: Any) -> _Adapter:
        if "algorithm" in params:
            self.algorithm = params.pop("algorithm")
        self.params.update(params)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({self.algorithm!r}{', ' if args else ''}{args})"


class SurpriseAdapter(_Adapter):
    """A scikit-surprise prediction algorithm (``SVD``, ``KNNWithMeans``, ...).

    ``predict`` is surprise's ``predict(...).est`` (clipped to the scale, the global
    mean when surprise cannot predict); ``score`` predicts every item for each user
    (slow: surprise predicts one pair at a time).

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 0, 1], [0, 1, 0], [5, 3, 4])
    >>> SurpriseAdapter("BaselineOnly", verbose=False).fit(train).predict([1], [1]).round(2).tolist()
    [3.9]
    """

    def fit(self, train: Interactions) -> SurpriseAdapter:
        try:
            import surprise
        except ImportError as err:
            raise ConfigError(
                f"surprise:{self.algorithm} needs scikit-surprise: pip install 'receval[surprise]' ({err})"
            ) from None

        cls = getattr(surprise, self.algorithm, None)
        if not (isinstance(cls, type) and issubclass(cls, surprise.AlgoBase)):
            names = sorted(
                n
                for n in dir(surprise)
                if isinstance(getattr(surprise, n), type)
                and issubclass(getattr(surprise, n), surprise.AlgoBase)
                and n != "AlgoBase"
            )
            raise ConfigError(f"surprise has no algorithm {self.algorithm!r}; available: {', '.join(names)}")
        self._start_fit(train)
        frame = train.to_frame(original_ids=False)[["user", "item", "rating"]]
        reader = surprise.Reader(rating_scale=(train.scale.low, train.scale.high))
        trainset = surprise.Dataset.load_from_df(frame, reader).build_full_trainset()
        try:
            algo = cls(**self.params)
        except TypeError as err:
            raise ConfigError(f"surprise:{self.algorithm} rejected the parameters {self.params}: {err}") from None
        self.model_ = algo.fit(trainset)
        return self

    def predict(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        users, items = check_pairs(self, users, items)
        model = self.model_
        return np.array([model.predict(u, i).est for u, i in zip(users.tolist(), items.tolist(), strict=True)])

    def score(self, users: np.ndarray) -> np.ndarray:
        users = self._check_users(users)
        all_items = np.arange(self.n_items_)
        return np.stack([self.predict(np.full(self.n_items_, u), all_items) for u in users.tolist()]).reshape(
            len(users), self.n_items_
        )


class ImplicitAdapter(_Adapter):
    """An ``implicit`` model (ALS, BPR, LMF, item-item kNN ...) trained on the ratings.

    The users x items matrix of training ratings is the model's input (use
    :class:`~receval.recommenders.als.HKV` to choose ones or positives instead).
    Factor models score ``user_factors @ item_factors.T``; nearest-neighbour models
    score through implicit's ``recommend``.

    Examples
    --------
    >>> train = Interactions.from_arrays([0, 0, 1, 2], [0, 1, 1, 2], [5, 3, 4, 4])
    >>> ImplicitAdapter("CosineRecommender", K=2).fit(train).score([0]).shape
    (1, 3)
    """

    def fit(self, train: Interactions) -> ImplicitAdapter:
        from threadpoolctl import threadpool_limits

        cls = None
        for module in _IMPLICIT_MODULES:
            cls = getattr(importlib.import_module(module), self.algorithm, None)
            if isinstance(cls, type):
                break
        from implicit.recommender_base import RecommenderBase

        if not (isinstance(cls, type) and issubclass(cls, RecommenderBase)):
            raise ConfigError(
                f"implicit has no CPU model {self.algorithm!r}; try AlternatingLeastSquares, "
                "BayesianPersonalizedRanking, LogisticMatrixFactorization, CosineRecommender, "
                "BM25Recommender, TFIDFRecommender, ItemItemRecommender"
            )
        self._start_fit(train)
        self._user_items = train.to_csr("rating")
        # the bounds receval's own implicit models have (threads, sweeps, confidence, factors' memory)
        label = f"implicit:{self.algorithm}"
        largest = self._user_items.data.max() if self._user_items.nnz else None
        check_implicit(label, self.params, largest if "alpha" in self.params else None)
        defaults = {n: p.default for n, p in inspect.signature(cls).parameters.items()}
        factors = self.params.get("factors", defaults.get("factors"))
        if isinstance(factors, int) and not isinstance(factors, bool):
            als = self.algorithm == "AlternatingLeastSquares"
            use_cg = self.params.get("use_cg", defaults.get("use_cg", True))
            threads = self.params.get("num_threads", 0)
            squares = solver_squares(bool(use_cg), threads if isinstance(threads, int) else 0) if als else 0
            self._check_factor_memory(factors, np.dtype(np.float32).itemsize, squares=squares)
        with threadpool_limits(1, "blas"), warnings.catch_warnings():
            # implicit's kNN models convert an intermediate matrix of their own and warn about it
            warnings.filterwarnings("ignore", message="Method expects CSR input")
            try:
                model = cls(**self.params)
            except TypeError as err:
                raise ConfigError(f"implicit:{self.algorithm} rejected the parameters {self.params}: {err}") from None
            fit_implicit(label, model, self._user_items)
        self.model_ = model
        return self

    def _factors(self) -> bool:
        return getattr(self.model_, "user_factors", None) is not None

    def score(self, users: np.ndarray) -> np.ndarray:
        users = self._check_users(users)
        if self._factors():
            return np.asarray(self.model_.user_factors[users] @ self.model_.item_factors.T, dtype=np.float64)
        ids, scores = self.model_.recommend(
            users, self._user_items[users], N=self.n_items_, filter_already_liked_items=False
        )
        out = np.full((len(users), self.n_items_), -np.inf)
        ids, scores = np.asarray(ids).reshape(len(users), -1), np.asarray(scores).reshape(len(users), -1)
        valid = ids >= 0
        out[np.nonzero(valid)[0], ids[valid]] = scores[valid]
        return out
