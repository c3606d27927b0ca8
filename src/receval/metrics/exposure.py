"""Exposure: how much attention each item (and item group) gets from a ranking, against what it deserves.

``expected_exposure@k`` (Diaz, Mitra, Ekstrand, Biega & Carterette, "Evaluating Stochastic Rankings
with Expected Exposure", CIKM 2020). A reader with patience γ (``gamma`` = 0.5, the RBP browsing
model of the paper) looks at rank r with probability γ^(r−1), so an item at rank r ≤ k gets that
exposure and an item outside the top k none. For a stochastic ranker the exposure ε_u(i) of user u is
the mean over its sampled rankings (:func:`expected_exposure_sampled`; a deterministic ranking is one
sample). The target ε*_u spreads the exposure of the first min(m, k) ranks equally over the user's m
relevant items (rating ≥ threshold, the paper's ideal policy for binary relevance):
ε*_u(i) = (1 − γ^min(m,k)) / ((1 − γ) m). Then

- EE-L = ‖ε − ε*‖² (``component=loss``, the default; lower is better),
- EE-D = ‖ε‖² (``component=disparity``, the inequality of exposure; lower is better),
- EE-R = ε·ε* (``component=relevance``, exposure put on relevant items; higher is better),

with EE-L = EE-D − 2 EE-R + ‖ε*‖². Users without a relevant item are not scored (NaN).

``awrf@k`` (attention-weighted rank fairness, Sapiezynski, Zeng, Robertson & Wilson, WWW 2019 companion;
as TREC Fair Ranking 2022 scores it): 1 − JS(E, T), the Jensen–Shannon divergence in bits between the
list's exposure over item groups E and a target distribution T; 1 is a list whose exposure matches the
target. Item groups are the columns of the aspect table (any item attribute: genre, artist, provider;
``--aspects`` reads ``item,group`` rows); an item in several groups splits its exposure equally, an item
in none is left out. Attention per rank: 1 / log2(r + 1) (``discount=log2``, the default) or γ^(r−1)
(``discount=geometric``). Targets (``target``): ``uniform`` over the groups that hold an item,
``catalogue`` each group's share of the catalogue's items, ``relevance`` each group's share of the
user's relevant truth items (a user without a grouped relevant item is not scored).

Examples
--------
>>> import scipy.sparse as sp
>>> from receval.metrics._input import MetricInput
>>> truth = sp.csr_matrix(np.array([[1.0, 1, 0, 0]]))
>>> data = MetricInput(np.array([[0, 2, 1]]), truth, threshold=1)
>>> expected_exposure(data, 3, component="disparity").tolist()  # 1 + 0.25 + 0.0625
[1.3125]
>>> expected_exposure(data, 3, component="relevance").tolist()  # target 0.75 each: (1 + 0.25) * 0.75
[0.9375]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from receval.data.csr import as_scipy
from receval.data.interactions import relevant
from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput, lookup
from receval.metrics.calibration import dense_rows, item_shares, list_matrix

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "AWRF_TARGETS",
    "EE_COMPONENTS",
    "awrf",
    "awrf_against",
    "expected_exposure",
    "expected_exposure_sampled",
    "exposure_share",
    "group_target",
    "target_shares",
]

EE_COMPONENTS = ("loss", "disparity", "relevance")
AWRF_TARGETS = ("uniform", "catalogue", "relevance")
DISCOUNTS = ("log2", "geometric")


def _check_gamma(params: Mapping[str, Any], label: str) -> None:
    gamma = params.get("gamma", 0.5)
    if not 0 < gamma < 1:
        raise MetricError(f"metric {label!r}: the patience gamma must be in (0, 1), got {gamma!r}")


def _target_per_item(data: MetricInput, k: int, gamma: float) -> np.ndarray:
    """Per user: ε* of each of their relevant items, (1 − γ^min(m,k)) / ((1 − γ) m); 0 without one."""
    m = data.n_positive.astype(np.float64)
    return np.divide(1.0 - gamma ** np.minimum(m, k), (1.0 - gamma) * m, out=np.zeros_like(m), where=m > 0)


def _distinct_rows(top: np.ndarray) -> bool:
    """Whether no row holds an item twice (padding aside): then a ranking's exposure is its rank weight."""
    ordered = np.sort(top, axis=1)
    return not np.any((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0))


def _components(data: MetricInput, samples: np.ndarray, depth: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Per user: ‖ε‖² and Σ over the relevant items of ε(i) (the mean exposure over the samples).

    One ranking whose items are distinct has the closed form Σ γ^(2r) and Σ_relevant γ^r; otherwise the
    exposures are summed into dense rows, a block of users at a time (about 2^21 cells).
    """
    n_samples, n_users, _ = samples.shape
    top = samples[:, :, :depth]
    weights = gamma ** np.arange(depth, dtype=np.float64)
    if n_samples == 1 and _distinct_rows(top[0]):
        valid = top[0] >= 0
        own = top[0].shape == data.rankings[:, :depth].shape and np.array_equal(top[0], data.rankings[:, :depth])
        positive = data.positive[:, :depth] if own else relevant(lookup(data.truth, top[0]), data.threshold)
        on_relevant = positive & valid
        disparity = np.where(valid, weights**2, 0.0).sum(axis=1)
        return disparity, np.where(on_relevant, weights, 0.0).sum(axis=1)
    truth = data.truth
    keep = relevant(truth.data, data.threshold)
    n_items = max(data.n_items, 1)
    step = max(1, min(n_users, (1 << 21) // n_items))
    disparity, on_relevant = np.zeros(n_users), np.zeros(n_users)
    scale = np.broadcast_to(weights / n_samples, (n_samples, step, depth))
    for start in range(0, n_users, step):
        stop = min(start + step, n_users)
        block = top[:, start:stop]
        valid = block >= 0
        local = np.broadcast_to(np.arange(stop - start)[None, :, None], block.shape)
        cells = np.bincount(
            (local * n_items + block)[valid], scale[:, : stop - start][valid], minlength=(stop - start) * n_items
        ).reshape(stop - start, n_items)
        disparity[start:stop] = np.einsum("ij,ij->i", cells, cells)
        lo, hi = truth.indptr[start], truth.indptr[stop]
        rows = np.repeat(np.arange(stop - start), np.diff(truth.indptr[start : stop + 1]))
        gathered = np.where(keep[lo:hi], cells[rows, truth.indices[lo:hi]], 0.0)
        on_relevant[start:stop] = np.bincount(rows, gathered, minlength=stop - start)
    return disparity, on_relevant


def expected_exposure_sampled(
    data: MetricInput, samples: np.ndarray, k: int | None, gamma: float = 0.5, component: str = "loss"
) -> np.ndarray:
    """Expected exposure of a stochastic ranker from its sampled rankings (Diaz et al., CIKM 2020).

    Parameters
    ----------
    data : MetricInput
        The truth (and threshold) of the users; its own rankings are not read.
    samples : int array (n_samples, n_users, n)
        Sampled rankings per user (item indices padded with -1), e.g. from
        :func:`receval.recommenders.stochastic.plackett_luce_rankings`.
    k, gamma, component
        As ``expected_exposure@k(gamma=..., component=...)``.

    Returns
    -------
    ndarray
        One value per user (NaN: no relevant item).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> truth = sp.csr_matrix(np.array([[1.0, 0]]))
    >>> d = MetricInput(np.zeros((1, 2), dtype=int), truth, threshold=1)
    >>> both = np.array([[[0, 1]], [[1, 0]]])  # each order half the time: exposure 0.75 each
    >>> expected_exposure_sampled(d, both, 2, component="disparity").tolist()
    [1.125]
    """
    samples = np.asarray(samples)
    if samples.ndim != 3 or samples.shape[0] < 1:
        raise MetricError(f"samples must be an array (n_samples >= 1, n_users, n), got shape {samples.shape}")
    if not 0 < gamma < 1:
        raise MetricError(f"expected exposure: the patience gamma must be in (0, 1), got {gamma!r}")
    width = samples.shape[2]
    depth = width if k is None else min(k, width)
    per_item = _target_per_item(data, depth if k is None else k, gamma)
    disparity, on_relevant = _components(data, samples, depth, gamma)
    relevance_part = on_relevant * per_item
    target_norm = data.n_positive * per_item**2
    value = {
        "loss": disparity - 2.0 * relevance_part + target_norm,
        "disparity": disparity,
        "relevance": relevance_part,
    }[component]
    return np.where(data.n_positive > 0, value, np.nan)


@register_metric(
    "expected_exposure",
    direction=lambda params: "higher" if params["component"] == "relevance" else "lower",
    defaults={"gamma": 0.5, "component": "loss"},
    choices={"component": EE_COMPONENTS},
    check=_check_gamma,
    description="Expected exposure: EE-L, or its disparity EE-D or relevance EE-R component; Diaz et al., CIKM 2020",
)
def expected_exposure(data: MetricInput, k: int | None, gamma: float = 0.5, component: str = "loss") -> np.ndarray:
    """EE-L (or EE-D, EE-R) of each user's deterministic ranking: one sample of :func:`expected_exposure_sampled`."""
    return expected_exposure_sampled(data, data.rankings[None], k, gamma, component)


def _item_groups(data: MetricInput) -> np.ndarray | sp.csr_matrix:
    """Items × groups: each grouped item's membership sharing one unit equally."""
    if data.aspects is None:
        raise MetricError("this metric needs item groups; pass aspects= (an item,group table)")
    return item_shares(data.aspects)


def _attention(width: int, discount: str, gamma: float) -> np.ndarray:
    ranks = np.arange(width, dtype=np.float64)
    return gamma**ranks if discount == "geometric" else 1.0 / np.log2(ranks + 2.0)


def _group_exposure(data: MetricInput, k: int | None, discount: str, gamma: float) -> np.ndarray:
    """Users × groups: the attention each group gets from each user's top k (not normalised)."""
    top = data.rankings if k is None else data.rankings[:, :k]
    listed = list_matrix(top, _attention(top.shape[1], discount, gamma), data.n_items)
    return dense_rows(listed @ _item_groups(data))


def exposure_share(data: MetricInput, k: int | None, discount: str = "log2", gamma: float = 0.5) -> np.ndarray:
    """Each item group's share of all the attention the lists give to grouped items (summed over users).

    Returns
    -------
    ndarray
        One share per group (aspect column), summing to 1 (all NaN when no listed item has a group).

    Examples
    --------
    >>> from receval.metrics._input import MetricInput
    >>> import scipy.sparse as sp
    >>> groups = sp.csr_matrix(np.array([[1, 0], [0, 1.0]]))
    >>> d = MetricInput(np.array([[0, 1]]), sp.csr_matrix((1, 2)), aspects=groups)
    >>> exposure_share(d, 2, "geometric").round(4).tolist()  # attention 1 and 0.5
    [0.6667, 0.3333]
    """
    total = _group_exposure(data, k, discount, gamma).sum(axis=0)
    return total / total.sum() if total.sum() > 0 else np.full(total.size, np.nan)


def group_target(data: MetricInput, target: str) -> np.ndarray:
    """The target distribution over item groups: one row for every user (``relevance``) or one row for all.

    Examples
    --------
    >>> from receval.metrics._input import MetricInput
    >>> import scipy.sparse as sp
    >>> groups = sp.csr_matrix(np.array([[1, 0], [1, 0], [0, 1.0]]))
    >>> d = MetricInput(np.array([[0]]), sp.csr_matrix(np.array([[0, 0, 5.0]])), aspects=groups)
    >>> group_target(d, "uniform").tolist(), group_target(d, "catalogue").round(4).tolist()
    ([[0.5, 0.5]], [[0.6667, 0.3333]])
    >>> group_target(d, "relevance").tolist()
    [[0.0, 1.0]]
    """
    shares = _item_groups(data)
    if target == "uniform":
        held = (np.asarray(shares.sum(axis=0)).ravel() > 0).astype(np.float64)
        return (held / held.sum())[None, :]
    if target == "catalogue":
        mass = np.asarray(shares.sum(axis=0)).ravel()
        return (mass / mass.sum())[None, :]
    truth = as_scipy(data.truth).tocsr().copy()
    truth.data = relevant(truth.data, data.threshold).astype(np.float64)
    mass = dense_rows(truth @ shares)
    total = mass.sum(axis=1, keepdims=True)
    return np.divide(mass, total, out=np.full_like(mass, np.nan), where=total > 0)


def _js_bits(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    middle = 0.5 * (p + q)

    def kl(a: np.ndarray) -> np.ndarray:
        return (a * np.log2(np.divide(a, middle, out=np.ones_like(a), where=a > 0))).sum(axis=1)

    return 0.5 * kl(p) + 0.5 * kl(q)


@register_metric(
    "awrf",
    direction="higher",
    bounds=(0, 1),
    defaults={"target": "uniform", "discount": "log2", "gamma": 0.5},
    choices={"target": AWRF_TARGETS, "discount": DISCOUNTS},
    check=_check_gamma,
    needs_aspects=True,
    description="Attention-weighted rank fairness: 1 − JS of the item groups' exposure against a target; "
    "Sapiezynski et al., WWW 2019",
)
def awrf(
    data: MetricInput, k: int | None, target: str = "uniform", discount: str = "log2", gamma: float = 0.5
) -> np.ndarray:
    """Per user: 1 − JS(E, T) in bits (see the module notes); NaN without a grouped item in the list (or, for
    ``target=relevance``, without a grouped relevant item)."""
    return awrf_against(data, k, group_target(data, target), discount, gamma)


def target_shares(shares: Mapping[str, float], groups: Sequence[str]) -> np.ndarray:
    """A target distribution given by group name, as a row over ``groups`` (the aspect columns' names).

    Refused with a one-line :class:`MetricError`: a name that is not a group, a negative or non-finite share,
    shares that do not sum to 1 (within 1e-9). Groups not named get 0.

    Examples
    --------
    >>> target_shares({"drama": 0.75, "comedy": 0.25}, ["comedy", "drama", "horror"]).tolist()
    [0.25, 0.75, 0.0]
    >>> target_shares({"drama": 0.5, "western": 0.5}, ["comedy", "drama"])
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: target names unknown group(s) ['western']; the groups are: comedy, drama
    """
    index = {name: j for j, name in enumerate(groups)}
    unknown = sorted(set(shares) - set(index))
    if unknown:
        raise MetricError(f"target names unknown group(s) {unknown}; the groups are: {', '.join(map(str, groups))}")
    values = np.array([float(v) for v in shares.values()], dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise MetricError(f"target shares must be finite numbers >= 0, got {dict(shares)}")
    if abs(values.sum() - 1.0) > 1e-9:
        raise MetricError(f"target shares must sum to 1, they sum to {values.sum():.6g}: {dict(shares)}")
    out = np.zeros(len(groups))
    for name, value in zip(shares, values, strict=True):
        out[index[name]] = value
    return out


def awrf_against(
    data: MetricInput, k: int | None, target: np.ndarray, discount: str = "log2", gamma: float = 0.5
) -> np.ndarray:
    """AWRF against any target: one row over the item groups for every user (e.g. :func:`target_shares`), or
    one row per user; NaN for a user without a grouped item in the list or with a NaN target.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> groups = sp.csr_matrix(np.array([[1, 0], [0, 1.0]]))
    >>> d = MetricInput(np.array([[0, 1]]), sp.csr_matrix((1, 2)), aspects=groups)
    >>> awrf_against(d, 2, np.array([[0.5, 0.5]]), "geometric").round(4).tolist()  # exposure 2/3, 1/3
    [0.9793]
    """
    mass = _group_exposure(data, k, discount, gamma)
    total = mass.sum(axis=1, keepdims=True)
    exposure = np.divide(mass, total, out=np.zeros_like(mass), where=total > 0)
    wanted = np.broadcast_to(np.atleast_2d(np.asarray(target, dtype=np.float64)), exposure.shape)
    scored = (total[:, 0] > 0) & ~np.isnan(wanted).any(axis=1)
    value = 1.0 - _js_bits(exposure, np.nan_to_num(wanted))
    return np.where(scored, value, np.nan)
