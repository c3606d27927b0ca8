"""Propensity models: the probability ``p(u, i)`` that a (user, item) rating is observed.

Debiased estimators (:mod:`receval.metrics.debiased`) reweight each observed test
rating by ``1 / p(u, i)`` so that the observed, missing-not-at-random (MNAR) ratings
stand in for a missing-at-random (MAR) test set. Every model here follows one small
contract: ``fit(observed, mar=None) -> self`` on :class:`~receval.data.Interactions`,
then ``predict(user_ids, item_ids, ratings=None)`` gives the (uncalibrated) propensity
of any pairs by original ids, and ``row_total(user_ids)`` the sum of those values over
the whole catalogue for each user, which :func:`calibrated_propensities` uses to put them on
an absolute scale.

Models
------
- :class:`PopularityPropensity` — item popularity power law, ``p_i ∝ n_i^((γ+1)/2)``
  (Steck, KDD 2011; Yang et al., RecSys 2018), γ given or estimated from a MAR sample.
- :class:`LogisticPropensity` — user × item logistic matrix factorisation of the
  observation indicator (Schnabel et al., ICML 2016, §5: propensities by logistic
  regression on user and item embeddings).
- :class:`NaiveBayesPropensity` — ``P(O=1 | R=r) = P(R=r | O=1) P(O=1) / P(R=r)`` from
  the rating distribution of the observed data and of a small MAR sample (Schnabel
  et al., ICML 2016, §5).
- :class:`KnownPropensity` — given propensities, e.g. the exposure probabilities of
  :func:`receval.data.synthetic.generate_with_truth` (the oracle every estimator is
  checked against).
- :class:`FrequencyPropensity` — ``p(u, i) ∝ P(u) P(i)`` from the observed user and
  item frequencies, divided by the same frequencies in a MAR sample when one is
  given: the sampling weights of Carraro & Bridge's WTD (with a MAR sample) and WTD_H
  (hypothesised uniform MAR distribution) (Carraro & Bridge, JIIS 2022).

Scale. Fitted models know propensities only up to a factor (and the test set is a
part of the observed data). :func:`calibrated_propensities` calibrates them to the test
set: the propensities of every (user, item) pair of the evaluated users sum to the
number of test ratings (the expected count under the model). Known propensities are
absolute and are kept as given. ``clip`` bounds small propensities from below (after
calibration) — the usual bias-for-variance trade (Swaminathan & Joachims, 2015).

Examples
--------
>>> import numpy as np
>>> from receval.data.interactions import Interactions
>>> obs = Interactions.from_arrays(users=[1, 1, 2, 3], items=["a", "b", "a", "a"], ratings=[5, 3, 4, 2])
>>> model = PopularityPropensity(gamma=1.0).fit(obs)
>>> model.predict(np.array([1, 2]), np.array(["a", "b"])).tolist()
[3.0, 1.0]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from receval.data.interactions import Interactions, distinct, pair_keys
from receval.errors import ConfigError, DataError, shown_id
from receval.metrics.debiased import DEBIAS_DEFAULTS, Propensities, check_params, propensity_name

if TYPE_CHECKING:
    import pandas as pd

    from receval.metrics._definition import Metric
    from receval.metrics._input import MetricInput

__all__ = [
    "FrequencyPropensity",
    "KnownPropensity",
    "LogisticPropensity",
    "NaiveBayesPropensity",
    "PopularityPropensity",
    "PropensityModel",
    "calibrated_propensities",
    "check_propensities",
    "estimator_of",
    "input_propensities",
    "make_propensity",
    "propensity_models",
]


class PropensityModel(ABC):
    """A model of ``p(u, i) = P(the rating of u for i is observed)``.

    Attributes
    ----------
    name : str
        The name used in metric strings (``recall@10(estimator=ips,propensity=NAME)``).
    needs_mar : bool
        Fitting needs a MAR sample (``mar=``).
    absolute : bool
        Values are probabilities on their final scale (no calibration to the test set).
    """

    name: ClassVar[str]
    needs_mar: bool = False  # FrequencyPropensity decides per instance
    absolute: ClassVar[bool] = False

    def __init__(self, *, clip: float = 0.0) -> None:
        if not 0.0 <= float(clip) < 1.0:
            raise ConfigError(f"propensity clip must be in [0, 1), got {clip!r}")
        self.clip = float(clip)

    @abstractmethod
    def fit(self, observed: Interactions, *, mar: Interactions | None = None) -> PropensityModel:
        """Fit on the observed (MNAR) ratings, optionally with a MAR sample."""

    @abstractmethod
    def predict(self, user_ids: np.ndarray, item_ids: np.ndarray, ratings: np.ndarray | None = None) -> np.ndarray:
        """Propensities of the pairs (original ids); uncalibrated unless ``absolute``."""

    def row_total(self, user_ids: np.ndarray) -> np.ndarray:
        """Σ over the catalogue items of :meth:`predict` for each user (for calibration)."""
        raise NotImplementedError

    def _require(self, attribute: str) -> None:
        if not hasattr(self, attribute):
            raise ConfigError(f"propensity model {self.name!r} is not fitted; call fit(observed) first")

    def _need_mar(self, mar: Interactions | None) -> Interactions:
        if mar is None:
            raise ConfigError(
                f"propensity model {self.name!r} needs a MAR sample (ratings of randomly chosen items): pass "
                "mar=Interactions (evaluate(..., mar_sample=...); on the CLI a data set with a MAR part such as "
                "CM100k); or use propensity=popularity"
            )
        return mar


def _pair_counts(data: Interactions) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rated pairs per user and per item (repeated ratings of a pair count once)."""
    data = data.deduplicate("last") if data.has_duplicates else data
    return (
        np.bincount(data.users, minlength=data.n_users).astype(np.float64),
        np.bincount(data.items, minlength=data.n_items).astype(np.float64),
    )


def _positions(space: np.ndarray, ids: np.ndarray, what: str, model: str) -> np.ndarray:
    import pandas as pd

    idx = pd.Index(space).get_indexer(np.asarray(ids))
    if (idx < 0).any():
        bad = np.asarray(ids)[idx < 0][0]
        raise DataError(
            f"propensity model {model!r}: {what} {bad!r} does not occur in the data it was fitted on, so its "
            "propensity is unknown; fit the model on data that covers the test set (train and test together)"
        )
    return idx


class PopularityPropensity(PropensityModel):
    """Item popularity power law: ``p(u, i) ∝ n_i^((γ+1)/2)``.

    ``n_i`` is the number of observed ratings of item ``i``. Yang et al. (RecSys 2018)
    derive the exponent ``(γ + 1) / 2`` from a power-law relation between an item's
    popularity and its relevance; γ = 1 gives Steck's (KDD 2011) propensity
    proportional to popularity.

    Parameters
    ----------
    gamma : float or None
        The exponent parameter. ``None``: estimated from a MAR sample when ``fit`` gets
        one — the least-squares slope ``e`` of ``log(n_i / m_i)`` on ``log n_i`` over the
        items rated in both (``m_i``: the item's ratings in the MAR sample), γ = 2e − 1 —
        else 1.
    clip : float
        Lower bound of calibrated propensities.

    >>> from receval.data.interactions import Interactions
    >>> obs = Interactions.from_arrays(users=[1, 2, 3, 1], items=[7, 7, 7, 8], ratings=[1, 1, 1, 1])
    >>> PopularityPropensity(gamma=3.0).fit(obs).predict(np.array([1]), np.array([7])).tolist()
    [9.0]
    """

    name = "popularity"

    def __init__(self, gamma: float | None = None, *, clip: float = 0.0) -> None:
        super().__init__(clip=clip)
        if gamma is not None and not np.isfinite(gamma):
            raise ConfigError(f"popularity propensity gamma must be a finite number, got {gamma!r}")
        self.gamma = gamma

    def fit(self, observed: Interactions, *, mar: Interactions | None = None) -> PopularityPropensity:
        import pandas as pd

        _, n_i = _pair_counts(observed)
        gamma = self.gamma
        if gamma is None and mar is not None:
            _, m = _pair_counts(mar)
            m_i = np.zeros(observed.n_items)
            pos = pd.Index(observed.item_ids).get_indexer(mar.item_ids)
            m_i[pos[pos >= 0]] = m[pos >= 0]
            both = (n_i > 0) & (m_i > 0)
            if both.sum() < 3:
                raise DataError(
                    "popularity propensity: fewer than 3 items are rated both in the observed data and in the MAR "
                    "sample, so gamma cannot be estimated; give gamma= explicitly"
                )
            x, y = np.log(n_i[both]), np.log(n_i[both] / m_i[both])
            slope = float(np.cov(x, y, bias=True)[0, 1] / np.var(x)) if np.var(x) > 0 else 1.0
            gamma = 2.0 * slope - 1.0
        self.gamma_ = 1.0 if gamma is None else float(gamma)
        self.item_ids_ = observed.item_ids
        self.weights_ = n_i ** ((self.gamma_ + 1.0) / 2.0)
        self.weights_[n_i == 0] = 0.0
        return self

    def predict(self, user_ids: np.ndarray, item_ids: np.ndarray, ratings: np.ndarray | None = None) -> np.ndarray:
        self._require("weights_")
        return self.weights_[_positions(self.item_ids_, item_ids, "item", self.name)]

    def row_total(self, user_ids: np.ndarray) -> np.ndarray:
        self._require("weights_")
        return np.full(len(user_ids), float(self.weights_.sum()))


class FrequencyPropensity(PropensityModel):
    """``p(u, i) ∝ P(u) P(i)``: the weights of Carraro & Bridge's weighted sampling.

    ``P(u)`` and ``P(i)`` are the user's and the item's share of the observed ratings.
    With a MAR sample (``mar=True``, WTD) they are divided by the same shares in the MAR
    sample (add-one smoothed, so an item absent from the sample keeps a finite weight);
    without (WTD_H) the MAR distribution is hypothesised uniform.

    >>> from receval.data.interactions import Interactions
    >>> obs = Interactions.from_arrays(users=[1, 1, 2], items=[7, 8, 7], ratings=[1, 1, 1])
    >>> FrequencyPropensity().fit(obs).predict(np.array([1, 2]), np.array([7, 8])).round(4).tolist()
    [0.4444, 0.1111]
    """

    name = "frequency"

    def __init__(self, mar: bool = False, *, clip: float = 0.0) -> None:
        super().__init__(clip=clip)
        self.mar = bool(mar)
        self.needs_mar = self.mar

    def fit(self, observed: Interactions, *, mar: Interactions | None = None) -> FrequencyPropensity:
        import pandas as pd

        n_u, n_i = _pair_counts(observed)
        p_u, p_i = n_u / n_u.sum(), n_i / n_i.sum()
        if self.mar:
            sample = self._need_mar(mar)
            m_u, m_i = _pair_counts(sample)
            q_u = np.ones(observed.n_users)
            q_i = np.ones(observed.n_items)
            pu = pd.Index(observed.user_ids).get_indexer(sample.user_ids)
            pi = pd.Index(observed.item_ids).get_indexer(sample.item_ids)
            q_u[pu[pu >= 0]] += m_u[pu >= 0]
            q_i[pi[pi >= 0]] += m_i[pi >= 0]
            p_u, p_i = p_u / (q_u / q_u.sum()), p_i / (q_i / q_i.sum())
        self.user_ids_, self.item_ids_ = observed.user_ids, observed.item_ids
        self.user_weights_, self.item_weights_ = p_u, p_i
        return self

    def predict(self, user_ids: np.ndarray, item_ids: np.ndarray, ratings: np.ndarray | None = None) -> np.ndarray:
        self._require("item_weights_")
        u = _positions(self.user_ids_, user_ids, "user", self.name)
        i = _positions(self.item_ids_, item_ids, "item", self.name)
        return self.user_weights_[u] * self.item_weights_[i]

    def row_total(self, user_ids: np.ndarray) -> np.ndarray:
        self._require("item_weights_")
        return self.user_weights_[_positions(self.user_ids_, user_ids, "user", self.name)] * self.item_weights_.sum()


class LogisticPropensity(PropensityModel):
    """Logistic matrix factorisation of exposure: ``p(u, i) = σ(a_u + b_i + x_u · y_i)``.

    Fitted by full-batch Adam on the mean logistic loss of the complete users × items
    observation indicator (1 = rated), with an L2 penalty ``reg`` on the factors
    (Schnabel et al., ICML 2016, §5, estimate propensities by logistic regression; here
    the covariates are learned user and item embeddings). Limited to 50 million cells.

    Parameters
    ----------
    n_factors : int
    reg : float
        L2 penalty on the factors (per cell of the mean loss: ``reg / (n_users n_items)``
        times the squared norms).
    n_iter : int
    learning_rate : float
    seed : int
        Seed of the initial factors (normal, sd 0.01).

    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=40, n_items=30, n_ratings=300, seed=1)
    >>> model = LogisticPropensity(n_iter=50, seed=0).fit(data)
    >>> p = model.predict(data.user_ids[data.users], data.item_ids[data.items])
    >>> bool(0 < p.min() and p.max() < 1), round(float(model.row_total(data.user_ids).sum()) / 300, 1)
    (True, 1.0)
    """

    name = "logistic"
    _MAX_CELLS = 50_000_000

    def __init__(
        self,
        n_factors: int = 4,
        *,
        reg: float = 1.0,
        n_iter: int = 300,
        learning_rate: float = 0.05,
        seed: int = 0,
        clip: float = 0.0,
    ) -> None:
        super().__init__(clip=clip)
        if int(n_factors) < 0 or int(n_iter) < 1 or not reg >= 0 or not learning_rate > 0:
            raise ConfigError("logistic propensity: n_factors >= 0, n_iter >= 1, reg >= 0 and learning_rate > 0")
        self.n_factors, self.reg, self.n_iter = int(n_factors), float(reg), int(n_iter)
        self.learning_rate, self.seed = float(learning_rate), int(seed)

    def fit(self, observed: Interactions, *, mar: Interactions | None = None) -> LogisticPropensity:
        n_u, n_i = observed.n_users, observed.n_items
        if n_u * n_i > self._MAX_CELLS:
            raise ConfigError(
                f"logistic propensity fits the dense {n_u} x {n_i} observation matrix (over 50 million cells); "
                "use propensity=popularity for data this large"
            )
        target = np.zeros((n_u, n_i), dtype=np.float64)
        target[observed.users, observed.items] = 1.0
        rng = np.random.default_rng(self.seed)
        density = target.mean()
        params = [
            np.zeros(n_u),
            np.zeros(n_i) + np.log(density / (1 - density)) if 0 < density < 1 else np.zeros(n_i),
            rng.normal(0.0, 0.01, size=(n_u, self.n_factors)),
            rng.normal(0.0, 0.01, size=(n_i, self.n_factors)),
        ]
        moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
        cells = float(n_u * n_i)
        for step in range(1, self.n_iter + 1):
            a, b, x, y = params
            g = (_sigmoid(a[:, None] + b[None, :] + x @ y.T) - target) / cells
            lam = self.reg / cells
            grads = [g.sum(axis=1), g.sum(axis=0), g @ y + lam * x, g.T @ x + lam * y]
            for p, grad, (m, v) in zip(params, grads, moments, strict=True):
                m *= 0.9
                m += 0.1 * grad
                v *= 0.999
                v += 0.001 * grad * grad
                p -= self.learning_rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-12)
        a, b, x, y = params
        self.user_ids_, self.item_ids_ = observed.user_ids, observed.item_ids
        self.user_bias_, self.item_bias_, self.user_factors_, self.item_factors_ = a, b, x, y
        self.row_totals_ = _sigmoid(a[:, None] + b[None, :] + x @ y.T).sum(axis=1)
        return self

    def predict(self, user_ids: np.ndarray, item_ids: np.ndarray, ratings: np.ndarray | None = None) -> np.ndarray:
        self._require("item_bias_")
        u = _positions(self.user_ids_, user_ids, "user", self.name)
        i = _positions(self.item_ids_, item_ids, "item", self.name)
        dot = np.einsum("ij,ij->i", self.user_factors_[u], self.item_factors_[i])
        z = self.user_bias_[u] + self.item_bias_[i] + dot
        return _sigmoid(z)

    def row_total(self, user_ids: np.ndarray) -> np.ndarray:
        self._require("row_totals_")
        return self.row_totals_[_positions(self.user_ids_, user_ids, "user", self.name)]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


class NaiveBayesPropensity(PropensityModel):
    """``P(O=1 | R=r) = P(R=r | O=1) P(O=1) / P(R=r)`` (Schnabel et al., ICML 2016, §5).

    ``P(R=r | O=1)`` is the share of rating ``r`` among the observed ratings, ``P(R=r)``
    its share in the MAR sample and ``P(O=1)`` the observed density. Every rating value
    of the observed data must occur in the MAR sample.

    >>> from receval.data.interactions import Interactions
    >>> obs = Interactions.from_arrays(users=[1, 1, 2, 2], items=[1, 2, 1, 2], ratings=[5, 5, 5, 1])
    >>> mar = Interactions.from_arrays(users=[3, 3], items=[1, 2], ratings=[5, 1])
    >>> m = NaiveBayesPropensity().fit(obs, mar=mar)
    >>> m.predict(np.array([1, 1]), np.array([1, 2]), np.array([5.0, 1.0])).tolist()
    [1.5, 0.5]
    """

    name = "naive-bayes"
    needs_mar = True

    def fit(self, observed: Interactions, *, mar: Interactions | None = None) -> NaiveBayesPropensity:
        sample = self._need_mar(mar)
        obs_values, obs_counts = np.unique(observed.ratings, return_counts=True)
        mar_values, mar_counts = np.unique(sample.ratings, return_counts=True)
        missing = np.setdiff1d(obs_values, mar_values)
        if len(missing):
            raise DataError(
                f"naive-bayes propensity: the MAR sample has no rating {missing[0]:g} (observed data has "
                f"{int(obs_counts[np.searchsorted(obs_values, missing[0])])}), so P(R={missing[0]:g}) is unknown; "
                "give a larger MAR sample or merge rating values (e.g. binarise both at the relevance threshold)"
            )
        p_mar = mar_counts / mar_counts.sum()
        p_obs = np.zeros(len(mar_values))
        p_obs[np.searchsorted(mar_values, obs_values)] = obs_counts / obs_counts.sum()
        density = observed.n_ratings / (observed.n_users * observed.n_items)
        self.values_, self.mar_share_ = mar_values, p_mar
        self.by_rating_ = p_obs * density / p_mar
        self.n_items_ = observed.n_items
        return self

    def predict(self, user_ids: np.ndarray, item_ids: np.ndarray, ratings: np.ndarray | None = None) -> np.ndarray:
        self._require("by_rating_")
        if ratings is None:
            raise ConfigError("naive-bayes propensities depend on the rating: pass ratings=")
        ratings = np.asarray(ratings, dtype=np.float32)
        pos = np.searchsorted(self.values_, ratings)
        pos = np.minimum(pos, len(self.values_) - 1)
        bad = self.values_[pos] != ratings
        if bad.any():
            raise DataError(
                f"naive-bayes propensity: rating {ratings[bad][0]:g} does not occur in the data the model was "
                "fitted on; fit it on data with the same rating values"
            )
        return self.by_rating_[pos]

    def row_total(self, user_ids: np.ndarray) -> np.ndarray:
        self._require("by_rating_")
        return np.full(len(user_ids), self.n_items_ * float(self.by_rating_ @ self.mar_share_))


class KnownPropensity(PropensityModel):
    """Propensities given per pair: a DataFrame ``user, item, propensity`` (original ids).

    They are absolute probabilities and are used as given (no calibration). A pair
    without a propensity is an error.

    >>> import pandas as pd
    >>> known = KnownPropensity(pd.DataFrame({"user": [1, 2], "item": [5, 5], "propensity": [0.5, 0.25]}))
    >>> known.fit(None).predict(np.array([2]), np.array([5])).tolist()
    [0.25]
    """

    name = "known"
    absolute = True

    def __init__(self, table: pd.DataFrame, *, clip: float = 0.0) -> None:
        import pandas as pd

        super().__init__(clip=clip)
        if not isinstance(table, pd.DataFrame) or not {"user", "item", "propensity"} <= set(table.columns):
            raise ConfigError("known propensities are a DataFrame with columns user, item, propensity")
        self.table = table

    def fit(self, observed: Interactions | None = None, *, mar: Interactions | None = None) -> KnownPropensity:
        import pandas as pd

        keys = pd.MultiIndex.from_arrays([self.table["user"].to_numpy(), self.table["item"].to_numpy()])
        self.index_ = keys
        self.values_ = pd.to_numeric(self.table["propensity"], errors="coerce").to_numpy(dtype=np.float64)
        return self

    def predict(self, user_ids: np.ndarray, item_ids: np.ndarray, ratings: np.ndarray | None = None) -> np.ndarray:
        import pandas as pd

        self._require("values_")
        pos = self.index_.get_indexer(pd.MultiIndex.from_arrays([np.asarray(user_ids), np.asarray(item_ids)]))
        if (pos < 0).any():
            j = int(np.flatnonzero(pos < 0)[0])
            raise DataError(
                f"known propensities: no propensity for user {shown_id(user_ids[j])}, "
                f"item {shown_id(item_ids[j])}; give one for every test pair (a DataFrame user, item, propensity)"
            )
        return self.values_[pos]


_MODELS: dict[str, type[PropensityModel]] = {
    "popularity": PopularityPropensity,
    "logistic": LogisticPropensity,
    "naive-bayes": NaiveBayesPropensity,
    "frequency": FrequencyPropensity,
}


def propensity_models() -> list[str]:
    """Names accepted by :func:`make_propensity` (plus ``known``, ``frequency-mar``).

    Returns
    -------
    list of str
        The names, sorted.

    Examples
    --------
    >>> propensity_models()
    ['frequency', 'frequency-mar', 'known', 'logistic', 'naive-bayes', 'popularity']
    """
    return sorted([*_MODELS, "known", "frequency-mar"])


def make_propensity(name: str, **params: Any) -> PropensityModel:
    """A propensity model by name (``known`` needs ``table=``; ``frequency-mar`` is WTD's).

    Returns
    -------
    PropensityModel
        The unfitted model; an unknown name is a ConfigError listing the known ones.

    Examples
    --------
    >>> make_propensity("popularity", gamma=0.5).gamma
    0.5
    >>> make_propensity("magic")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: unknown propensity model 'magic'; known: frequency, frequency-mar, known, ...
    """
    key = str(name).strip().lower()
    if key == "known":
        if "table" not in params:
            raise ConfigError(
                "propensity=known needs the propensities: pass propensities=DataFrame(user, item, propensity) to "
                "evaluate (for generated data: SyntheticData.propensity_table()), or choose a fitted model "
                "(popularity, logistic, naive-bayes)"
            )
        return KnownPropensity(**params)
    if key == "frequency-mar":
        return FrequencyPropensity(mar=True, **params)
    if key not in _MODELS:
        raise ConfigError(f"unknown propensity model {name!r}; known: {', '.join(propensity_models())}")
    return _MODELS[key](**params)


def check_propensities(p: np.ndarray, user_ids: np.ndarray, item_ids: np.ndarray, model: str) -> np.ndarray:
    """Raise :class:`DataError` for a propensity that is NaN, ≤ 0 or > 1 for an observed pair.

    Returns
    -------
    numpy.ndarray
        ``p`` as float64, when every value lies in (0, 1].

    Examples
    --------
    >>> check_propensities(np.array([0.5, 0.0]), np.array([1, 2]), np.array([3, 4]), "known")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: propensity model 'known' gives propensity 0 to the observed pair user 2, item 4: ...
    """
    p = np.asarray(p, dtype=np.float64)
    bad = ~((p > 0) & (p <= 1 + 1e-12))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"propensity model {model!r} gives propensity {p[j]:g} to the observed pair "
            f"user {shown_id(user_ids[j])}, item {shown_id(item_ids[j])}: "
            "an observed rating must have a positive propensity"
            + ("" if np.isnan(p[j]) or p[j] <= 0 else " of at most 1")
            + "; fix the propensities or bound them with clip= (e.g. clip=0.001)"
        )
    return p


def calibrated_propensities(
    model: PropensityModel,
    user_ids: np.ndarray,
    item_ids: np.ndarray,
    ratings: np.ndarray | None,
    eval_user_ids: np.ndarray,
) -> np.ndarray:
    """Calibrated, clipped and checked propensities of the test pairs.

    Unless the model is ``absolute``, the values are scaled so that their sum over
    every (user, item) pair of ``eval_user_ids`` equals ``len(user_ids)`` (the number of
    test ratings), capped at 1, then bounded below by the model's ``clip``.

    Returns
    -------
    numpy.ndarray of float64
        One propensity in [``clip``, 1] per pair (``user_ids[j]``, ``item_ids[j]``).

    Examples
    --------
    >>> from receval.data.interactions import Interactions
    >>> obs = Interactions.from_arrays(users=[1, 2, 2], items=[7, 7, 8], ratings=[1, 1, 1])
    >>> model = PopularityPropensity(gamma=1.0).fit(obs)
    >>> calibrated_propensities(model, np.array([2]), np.array([8]), None, np.array([1, 2])).tolist()
    [0.16666666666666666]
    """
    raw = np.asarray(model.predict(user_ids, item_ids, ratings), dtype=np.float64)
    if not model.absolute and len(raw):
        total = float(np.sum(model.row_total(np.asarray(eval_user_ids))))
        if not total > 0:
            raise DataError(f"propensity model {model.name!r} gives the evaluated users no exposure at all")
        raw = np.minimum(raw * (len(raw) / total), 1.0)
    if model.clip > 0:
        raw = np.where(np.isnan(raw), raw, np.maximum(raw, model.clip))
    return check_propensities(raw, user_ids, item_ids, model.name)


def resolve_models(
    names: Mapping[str, Mapping[str, object]],
    observed: Interactions,
    *,
    mar: Interactions | None = None,
    given: Mapping[str, PropensityModel] | None = None,
) -> dict[str, PropensityModel]:
    """Fitted models for each name (``given`` fitted models take precedence).

    ``names`` maps a model name to its constructor parameters; ``observed`` is the data
    the models are fitted on (training and test ratings together, so that every test
    item has a popularity).

    Returns
    -------
    dict of str to PropensityModel
        One fitted model per name of ``names``.

    Examples
    --------
    >>> from receval.data.interactions import Interactions
    >>> observed = Interactions.from_arrays(users=[1, 2, 2], items=[7, 7, 8], ratings=[1, 1, 1])
    >>> models = resolve_models({"popularity": {"gamma": 0.5}}, observed)
    >>> type(models["popularity"]).__name__, models["popularity"].gamma
    ('PopularityPropensity', 0.5)
    """
    out: dict[str, PropensityModel] = {}
    for name, params in names.items():
        if given is not None and name in given:
            out[name] = given[name]
            continue
        model = make_propensity(name, **params)
        if model.needs_mar and mar is None:
            model._need_mar(None)
        out[name] = model.fit(observed, mar=mar)
    return out


def _as_interactions(data: Interactions | pd.DataFrame, what: str) -> Interactions:
    import pandas as pd

    if isinstance(data, Interactions):
        return data
    if isinstance(data, pd.DataFrame) and {"user", "item"} <= set(data.columns):
        return Interactions.from_frame(data, rating="rating" if "rating" in data.columns else None, name=what)
    raise ConfigError(f"{what} must be an Interactions or a DataFrame with columns user, item[, rating]")


def wanted_models(specs: Sequence[tuple[str, Metric]]) -> list[str]:
    """The propensity models the debiased metrics of ``specs`` name, each once, in order (checks their parameters).

    >>> from receval.metrics import parse_metric
    >>> labels = ["recall@5(estimator=snips)", "ndcg@5", "precision@5(estimator=ips,propensity=logistic)"]
    >>> wanted_models([(label, parse_metric(label)) for label in labels])
    ['popularity', 'logistic']
    """
    wanted: dict[str, None] = {}
    for label, spec in specs:
        if spec.kind == "system" or DEBIAS_DEFAULTS.keys().isdisjoint(spec.params):
            continue
        full = replace(spec, params={**DEBIAS_DEFAULTS, **spec.params})
        check_params(full, label)
        if full.params["estimator"] != "naive":
            wanted.setdefault(propensity_name(full.params), None)
    return list(wanted)


def observed_ratings(truth: Interactions, train: Interactions | None = None) -> Interactions:
    """The ratings the propensity models are fitted on: the training and test ratings together.

    >>> train = Interactions.from_arrays(users=[1], items=[7], ratings=[4])
    >>> observed_ratings(Interactions.from_arrays(users=[2], items=[8], ratings=[5]), train).n_ratings
    2
    """
    if train is None:
        return truth
    import pandas as pd

    frame = pd.concat([train.to_frame(), truth.to_frame()], ignore_index=True)
    return Interactions.from_frame(frame, rating="rating", name="observed")


def input_propensities(
    specs: Sequence[tuple[str, Metric]],
    data: MetricInput,
    *,
    eval_user_ids: np.ndarray,
    item_ids: np.ndarray | Callable[[], np.ndarray],
    truth: Interactions,
    train: Interactions | None = None,
    predictions: pd.DataFrame | None = None,
    given: PropensityModel | Mapping[str, PropensityModel] | pd.DataFrame | None = None,
    mar_sample: Interactions | pd.DataFrame | None = None,
) -> dict[str, Propensities]:
    """The propensities a list of metrics needs, aligned with ``data`` (for :func:`receval.evaluate`).

    ``item_ids`` may be a function that returns them: it is called only when a metric is debiased (the ids
    of a catalogue of millions cost seconds to build, and most evaluations never read them).

    Each model a debiased metric names (``propensity=...``) is fitted once, on the
    training and test ratings together (``known`` takes ``given`` as its table; a fitted
    model in ``given`` is used as is), then evaluated on every test rating and rating
    prediction (:func:`calibrated_propensities`).

    Returns
    -------
    dict of str to Propensities
        One entry per propensity model the metrics name, with the propensity of each stored truth rating of ``data``
        (CSR order) and of each rating prediction; empty when no metric is debiased.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from receval.data.interactions import Interactions
    >>> from receval.metrics import parse_metric
    >>> from receval.metrics.registry import MetricInput
    >>> truth = Interactions.from_arrays(users=[1, 2, 2], items=[7, 7, 8], ratings=[5, 4, 5])
    >>> data = MetricInput(np.array([[0], [1]]), sp.csr_matrix(np.array([[5.0, 0], [4.0, 5.0]])), threshold=4)
    >>> specs = [("recall@1", parse_metric("recall@1")), ("r", parse_metric("recall@1(estimator=ips)"))]
    >>> ids = {"eval_user_ids": np.array([1, 2]), "item_ids": np.array([7, 8]), "truth": truth}
    >>> got = input_propensities(specs, data, **ids)
    >>> list(got), got["popularity"].truth.tolist()  # items 7, 8: 1 and 0.5; 2 x (1 + 0.5) = 3 ratings
    (['popularity'], [1.0, 1.0, 0.5])
    >>> input_propensities(specs[:1], data, **ids)  # no debiased metric
    {}
    """
    wanted = wanted_models(specs)
    if not wanted:
        return {}
    import pandas as pd

    if callable(item_ids):
        item_ids = item_ids()
    fitted: dict[str, PropensityModel] = {}
    if isinstance(given, PropensityModel):
        fitted[given.name] = given
    elif isinstance(given, Mapping):
        fitted.update(given)
    elif isinstance(given, pd.DataFrame):
        fitted["known"] = KnownPropensity(given).fit()
    elif given is not None:
        raise ConfigError("propensities= must be a fitted model, a {name: model} mapping or a DataFrame")
    if "known" in wanted and "known" not in fitted:
        make_propensity("known")  # raises: how to give them
    mar = None if mar_sample is None else _as_interactions(mar_sample, "MAR sample")
    models = resolve_models({n: {} for n in wanted if n not in fitted}, observed_ratings(truth, train), mar=mar)
    models.update({n: fitted[n] for n in wanted if n in fitted})

    rows = np.repeat(np.arange(data.n_users), np.diff(data.truth.indptr))
    t_users, t_items, t_ratings = eval_user_ids[rows], item_ids[data.truth.indices], data.truth.data
    predicted: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # users, items, ratings
    item_pos = None
    if predictions is not None and data.predictions is not None:
        predicted = (
            eval_user_ids[np.asarray(data.predictions[0])],
            predictions["item"].to_numpy(),
            np.asarray(data.predictions[1]),
        )
        item_pos = pd.Index(item_ids).get_indexer(predicted[1])
    out = {}
    for name, model in models.items():
        catalogue = len(item_ids) if model.absolute else max(len(item_ids), len(getattr(model, "item_ids_", ())))
        out[name] = Propensities(
            truth=calibrated_propensities(model, t_users, t_items, t_ratings, eval_user_ids),
            population=_population(model, data, truth, train, catalogue),
            predictions=None if predicted is None else calibrated_propensities(model, *predicted, eval_user_ids),
            prediction_items=item_pos,
            n_items=catalogue,
            model=name,
        )
    return out


def _population(
    model: PropensityModel, data: MetricInput, truth: Interactions, train: Interactions | None, catalogue: int
) -> float:
    """The (user, item) pairs a test rating stands for: the evaluated users' catalogue for calibrated models;
    for known (absolute) propensities every user of the id space, less the training pairs (they cannot be test)."""
    if not model.absolute:
        return float(data.n_users * catalogue)
    n_train = 0 if train is None else len(distinct(pair_keys(train.users, train.items, train.n_items)))
    return float(len(truth.user_ids) * catalogue - n_train)


def estimator_of(metric: Metric) -> dict[str, str | None]:
    """The estimator and propensity model of a metric, as recorded with every result.

    Returns
    -------
    dict of str to str or None
        ``estimator`` and ``propensity`` (None for the naive estimator).

    Examples
    --------
    >>> from receval.metrics import parse_metric
    >>> estimator_of(parse_metric("recall@10(estimator=snips)"))
    {'estimator': 'snips', 'propensity': 'popularity'}
    >>> estimator_of(parse_metric("ndcg@10"))
    {'estimator': 'naive', 'propensity': None}
    """
    params = {**DEBIAS_DEFAULTS, **metric.params}
    if params["estimator"] == "naive":
        return {"estimator": "naive", "propensity": None}
    return {"estimator": str(params["estimator"]), "propensity": propensity_name(params)}
