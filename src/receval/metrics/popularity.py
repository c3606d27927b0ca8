"""Popularity bias: how popular the recommended items are, and whether popular and long-tail items get equal chances.

Every definitional choice is a parameter with a stated default:

- ``popularity`` — where an item's popularity is counted: ``train`` (the default; the number of
  training users who rated it, as Elliot, RecBole and RecTools count it) or ``test`` (the held-out
  ratings of the evaluated users, as ClayRS counts it);
- ``tail`` and ``tail_by`` — the head/tail cut. ``tail_by=interactions`` (the default, Elliot's
  ``Popularity``): items in decreasing popularity join the head until the head holds ``1 − tail`` of
  the interactions (the item that crosses the line included); every other item, unrated ones too, is
  in the long tail. ``tail_by=items`` (RecBole's ``TailPercentage`` with ``tail_ratio`` ≤ 1): the
  ``max(⌊tail · n⌋, 1)`` least popular of the n items. ``catalogue=train`` ranks only the items with a
  popularity count (RecBole's items: those in the training data), ``all`` every item. Ties are broken
  by item index, the order Elliot's stable sort keeps;
- ``normalize`` (``arp``) — popularity divided by the number of interactions it is counted over
  (RecTools' ``AvgRecPopularity(normalize=True)``: ``value_counts(normalize=True)``) instead of the count.

The metrics:

- ``arp@k``: average recommendation popularity, the mean popularity of a user's top k (Abdollahpouri
  et al., FLAIRS 2019; Elliot ``ARP``, RecBole ``AveragePopularity``, RecTools ``AvgRecPopularity``);
- ``aplt@k`` / ``aclt@k``: the share / number of long-tail items in a user's top k (Abdollahpouri
  et al., RecSys 2017; Elliot ``APLT``, ``ACLT``, RecBole ``TailPercentage``);
- ``pop_reo@k`` / ``pop_rsp@k``: std / mean over the head and tail groups of the probability of being
  recommended given relevant (REO) or given not in the training profile (RSP) — Zhu, Wang & Caverlee,
  SIGIR 2021; Elliot ``PopREO``, ``PopRSP``; 0 is parity;
- ``delta_gap@k``: ΔGAP of a user group (Abdollahpouri et al., UMAP 2021): (GAP_r − GAP_p) / GAP_p,
  GAP the group's mean over users of the mean popularity (share of users) of their list (r) or profile
  (p). Groups by the share of head items in the training profile: ``niche`` the ``user_share`` of users
  with the lowest, ``blockbuster`` those with the highest, ``diverse`` the rest, ``all`` every user;
- :func:`popularity_lift_curve`: ΔGAP over users binned by their profile's popularity.

Examples
--------
>>> import scipy.sparse as sp
>>> from receval.metrics._input import MetricInput
>>> train = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1.0]]))
>>> data = MetricInput(np.array([[0, 1], [2, 3], [1, 3]]), sp.csr_matrix((3, 4)), train=train)
>>> arp(data, 2).tolist()
[2.0, 1.0, 1.0]
>>> long_tail(item_popularity(data, "train"), 0.2).tolist()
[False, False, False, True]
>>> aplt(data, 2).tolist()
[0.0, 0.5, 0.5]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from receval.data.csr import as_scipy
from receval.data.interactions import relevant
from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput

__all__ = [
    "GAP_GROUPS",
    "POPULARITY_SOURCES",
    "TAIL_BY",
    "aclt",
    "aplt",
    "arp",
    "delta_gap",
    "item_popularity",
    "long_tail",
    "pop_reo",
    "pop_rsp",
    "popularity_lift_curve",
    "user_groups_by_profile",
]

POPULARITY_SOURCES = ("train", "test")
TAIL_BY = ("interactions", "items")
CATALOGUES = ("all", "train")
GAP_GROUPS = ("all", "niche", "diverse", "blockbuster")
_TAIL_DEFAULTS = {"tail": 0.2, "tail_by": "interactions", "catalogue": "all", "popularity": "train"}
_TAIL_CHOICES = {"tail_by": TAIL_BY, "catalogue": CATALOGUES, "popularity": POPULARITY_SOURCES}


def item_popularity(data: MetricInput, popularity: str = "train") -> np.ndarray:
    """Each item's popularity: the number of users who rated it in the training data (``train``, every user's
    ratings) or in the held-out ratings of the evaluated users (``test``, as ClayRS).

    >>> import scipy.sparse as sp
    >>> d = MetricInput(np.array([[0]]), sp.csr_matrix(np.array([[0, 2.0]])), train=sp.csr_matrix(np.eye(2)))
    >>> item_popularity(d, "train").tolist(), item_popularity(d, "test").tolist()
    ([1.0, 1.0], [0.0, 1.0])
    """
    if popularity == "test":
        return np.bincount(data.truth.indices, minlength=data.n_items).astype(np.float64)
    return data.item_popularity


def _n_counted_users(data: MetricInput, popularity: str) -> int:
    """The users popularity is counted over (its normaliser): those with a rating in the source."""
    matrix = data.truth if popularity == "test" else data.train_all
    assert matrix is not None
    return max(int(np.count_nonzero(np.diff(matrix.indptr))), 1)


def long_tail(
    popularity: np.ndarray, tail: float = 0.2, tail_by: str = "interactions", catalogue: str = "all"
) -> np.ndarray:
    """Boolean per item: in the long tail under the cut ``tail`` (see the module notes).

    Returns
    -------
    ndarray of bool
        True for a long-tail item.

    Examples
    --------
    >>> long_tail(np.array([5.0, 3, 1, 1, 0]), 0.2).tolist()  # head: 5 + 3 >= 0.8 * 10
    [False, False, True, True, True]
    >>> long_tail(np.array([5.0, 3, 1, 1, 0]), 0.5, "items", "train").tolist()  # RecBole: 2 of the 4 rated items
    [False, False, True, True, False]
    """
    _check_tail(tail, "long_tail")
    pop = np.asarray(popularity, dtype=np.float64)
    out = np.zeros(pop.size, dtype=bool)
    if tail_by == "interactions":
        order = np.argsort(-pop, kind="stable")
        cumulative = np.cumsum(pop[order])
        limit = pop.sum() * (1.0 - tail)
        # Elliot's loop: append, subtract, stop once the remaining limit is <= 0
        n_head = int(np.searchsorted(cumulative, limit, side="left")) + 1 if pop.sum() > 0 else 0
        out[order[n_head:]] = True
        return out
    ranked = np.flatnonzero(pop > 0) if catalogue == "train" else np.arange(pop.size)
    order = ranked[np.argsort(pop[ranked], kind="stable")]
    out[order[: max(int(len(order) * tail), 1)]] = True
    return out


def _check_tail(tail: float, label: str) -> None:
    if not 0 < tail < 1:
        raise MetricError(f"{label}: the head/tail cut tail must be in (0, 1), got {tail!r}")


def _check_tail_params(params: Mapping[str, Any], label: str) -> None:
    """The head/tail cut of a metric string, refused when the string is read (outside (0, 1))."""
    if "tail" in params:
        _check_tail(params["tail"], f"metric {label!r}")


def _top(data: MetricInput, k: int | None) -> np.ndarray:
    return data.rankings if k is None else data.rankings[:, :k]


def _per_item_mean(data: MetricInput, k: int | None, values: np.ndarray, *, total: bool = False) -> np.ndarray:
    top = _top(data, k)
    valid = top >= 0
    sums = np.where(valid, values[np.where(valid, top, 0)], 0.0).sum(axis=1)
    if total:
        return sums
    length = valid.sum(axis=1)
    return np.divide(sums, length, out=np.full(len(length), np.nan), where=length > 0)


@register_metric(
    "arp",
    direction="lower",
    defaults={"normalize": False, "popularity": "train"},
    choices={"popularity": POPULARITY_SOURCES},
    needs_train=True,
    description="Average recommendation popularity of the top k (normalize=true: as a share of the interactions); "
    "Abdollahpouri et al., FLAIRS 2019",
)
def arp(data: MetricInput, k: int | None, normalize: bool = False, popularity: str = "train") -> np.ndarray:
    """Mean popularity of each user's top k; NaN for an empty list."""
    pop = item_popularity(data, popularity)
    if normalize:
        pop = pop / max(float(pop.sum()), 1.0)
    return _per_item_mean(data, k, pop)


@register_metric(
    "aplt",
    direction="higher",
    bounds=(0, 1),
    defaults=_TAIL_DEFAULTS,
    choices=_TAIL_CHOICES,
    check=_check_tail_params,
    needs_train=True,
    description="Share of long-tail items in the top k; Abdollahpouri et al., RecSys 2017",
)
def aplt(
    data: MetricInput,
    k: int | None,
    tail: float = 0.2,
    tail_by: str = "interactions",
    catalogue: str = "all",
    popularity: str = "train",
) -> np.ndarray:
    """Share of long-tail items in each user's top k; NaN for an empty list."""
    in_tail = long_tail(item_popularity(data, popularity), tail, tail_by, catalogue).astype(np.float64)
    return _per_item_mean(data, k, in_tail)


@register_metric(
    "aclt",
    direction="higher",
    defaults=_TAIL_DEFAULTS,
    choices=_TAIL_CHOICES,
    check=_check_tail_params,
    needs_train=True,
    description="Number of long-tail items in the top k; Abdollahpouri et al., RecSys 2017",
)
def aclt(
    data: MetricInput,
    k: int | None,
    tail: float = 0.2,
    tail_by: str = "interactions",
    catalogue: str = "all",
    popularity: str = "train",
) -> np.ndarray:
    """Number of long-tail items in each user's top k."""
    in_tail = long_tail(item_popularity(data, popularity), tail, tail_by, catalogue).astype(np.float64)
    return _per_item_mean(data, k, in_tail, total=True)


def _group_counts(data: MetricInput, k: int | None, in_tail: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(head, tail) number of recommended items selected by ``mask`` (n_users, n) over all users."""
    top = _top(data, k)
    chosen = (top >= 0) & mask[:, : top.shape[1]]
    items = top[chosen]
    n_tail = float(in_tail[items].sum())
    return np.array([items.size - n_tail, n_tail])


def _std_over_mean(numerator: np.ndarray, denominator: np.ndarray) -> float:
    """Elliot's std / mean (population std) of the two groups' probabilities; NaN when a group has no candidates."""
    if np.any(denominator <= 0):
        return float("nan")
    p = numerator / denominator
    mean = float(p.mean())
    return float(p.std() / mean) if mean > 0 else float("nan")


def _relevant_candidates(data: MetricInput, in_tail: np.ndarray) -> np.ndarray:
    """(head, tail) number of relevant truth items not in the user's training profile, over all users."""
    truth = data.truth
    keep = relevant(truth.data, data.threshold)
    items = truth.indices[keep]
    if data.train is not None:  # the relevant pairs also in the profile: the product of the two patterns
        import scipy.sparse as sp

        rel = sp.csr_matrix((np.ones(items.size), items, np.concatenate(([0], np.cumsum(keep)))[truth.indptr]),
                            shape=truth.shape)  # fmt: skip
        seen = as_scipy(data.train).copy()
        seen.data = np.ones_like(seen.data)
        both = rel.multiply(seen).tocsr()
        both.eliminate_zeros()
        items = np.concatenate((items, both.indices))
        weights = np.concatenate((np.ones(keep.sum()), -np.ones(both.nnz)))
    else:
        weights = np.ones(items.size)
    total, n_tail = float(weights.sum()), float(weights[in_tail[items]].sum())
    return np.array([total - n_tail, n_tail])


def _unseen_candidates(data: MetricInput, in_tail: np.ndarray) -> np.ndarray:
    """(head, tail) number of items not in each user's training profile, summed over users."""
    n_users = data.n_users
    n_head, n_tail = float((~in_tail).sum()), float(in_tail.sum())
    if data.train is None:
        return np.array([n_users * n_head, n_users * n_tail])
    seen = data.train.indices
    seen_tail = float(in_tail[seen].sum())
    return np.array([n_users * n_head - (seen.size - seen_tail), n_users * n_tail - seen_tail])


@register_metric(
    "pop_reo",
    direction="lower",
    kind="system",
    defaults=_TAIL_DEFAULTS,
    choices=_TAIL_CHOICES,
    check=_check_tail_params,
    needs_train=True,
    description="Popularity-REO: std/mean over head and tail of P(recommended | relevant, unseen); Zhu et al., "
    "SIGIR 2021",
)
def pop_reo(
    data: MetricInput,
    k: int | None,
    tail: float = 0.2,
    tail_by: str = "interactions",
    catalogue: str = "all",
    popularity: str = "train",
) -> float:
    """Zhu et al. (SIGIR 2021) ranking-based equal opportunity over the head and tail groups, as Elliot's ``PopREO``:
    Σ relevant recommended / Σ relevant items not in the training profile, per group; NaN when a group has none."""
    in_tail = long_tail(item_popularity(data, popularity), tail, tail_by, catalogue)
    numerator = _group_counts(data, k, in_tail, data.positive)
    return _std_over_mean(numerator, _relevant_candidates(data, in_tail))


@register_metric(
    "pop_rsp",
    direction="lower",
    kind="system",
    defaults=_TAIL_DEFAULTS,
    choices=_TAIL_CHOICES,
    check=_check_tail_params,
    needs_train=True,
    description="Popularity-RSP: std/mean over head and tail of P(recommended | not in the profile); Zhu et al., "
    "SIGIR 2021",
)
def pop_rsp(
    data: MetricInput,
    k: int | None,
    tail: float = 0.2,
    tail_by: str = "interactions",
    catalogue: str = "all",
    popularity: str = "train",
) -> float:
    """Zhu et al. (SIGIR 2021) ranking-based statistical parity over the head and tail groups, as Elliot's
    ``PopRSP``: Σ recommended / Σ items not in the training profile, per group."""
    in_tail = long_tail(item_popularity(data, popularity), tail, tail_by, catalogue)
    everything = np.ones(data.rankings.shape, dtype=bool)
    return _std_over_mean(_group_counts(data, k, in_tail, everything), _unseen_candidates(data, in_tail))


def _profile_popularity(data: MetricInput, share: np.ndarray) -> np.ndarray:
    """Each evaluated user's mean of ``share`` over the items of their training profile (NaN without one)."""
    train = data.train
    assert train is not None
    length = np.diff(train.indptr)
    sums = np.add.reduceat(share[train.indices], train.indptr[:-1]) if train.nnz else np.zeros(len(length))
    sums = np.where(length > 0, sums, 0.0)
    return np.divide(sums, length, out=np.full(len(length), np.nan), where=length > 0)


def user_groups_by_profile(
    data: MetricInput, user_share: float = 0.2, tail: float = 0.2, popularity: str = "train"
) -> np.ndarray:
    """Abdollahpouri et al. (UMAP 2021) user groups: by the share of head items in the training profile, the lowest
    ``user_share`` of users ``niche``, the highest ``blockbuster``, the rest ``diverse`` (ties by user row).

    Returns
    -------
    ndarray of str
        ``niche``, ``diverse`` or ``blockbuster`` per user row; ``""`` for a user without a training profile.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> train = sp.csr_matrix(np.array([[1, 1, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 1, 1, 1.0]]))
    >>> d = MetricInput(np.array([[0], [1], [2]]), sp.csr_matrix((3, 5)), train=train)
    >>> user_groups_by_profile(d, 1 / 3).tolist()
    ['diverse', 'blockbuster', 'niche']
    """
    if not 0 < user_share < 0.5:
        raise MetricError(f"delta_gap: user_share must be in (0, 0.5), got {user_share!r}")
    head = (~long_tail(item_popularity(data, popularity), tail)).astype(np.float64)
    ratio = _profile_popularity(data, head)
    groups = np.full(data.n_users, "", dtype=object)
    profiled = np.flatnonzero(~np.isnan(ratio))
    order = profiled[np.argsort(ratio[profiled], kind="stable")]
    n_edge = int(round(user_share * order.size))
    groups[order] = "diverse"
    groups[order[:n_edge]] = "niche"
    groups[order[order.size - n_edge :]] = "blockbuster"
    return groups.astype(str)


def _gap_parts(data: MetricInput, k: int | None, popularity: str) -> tuple[np.ndarray, np.ndarray]:
    """Per user: the mean popularity (share of users) of the list and of the training profile."""
    share = item_popularity(data, popularity) / _n_counted_users(data, popularity)
    return _per_item_mean(data, k, share), _profile_popularity(data, share)


def _check_gap_params(params: Mapping[str, Any], label: str) -> None:
    _check_tail_params(params, label)
    if "user_share" in params and not 0 < params["user_share"] < 0.5:
        raise MetricError(f"metric {label!r}: user_share must be in (0, 0.5), got {params['user_share']!r}")


@register_metric(
    "delta_gap",
    direction=None,
    kind="system",
    defaults={"group": "all", "user_share": 0.2, "tail": 0.2, "popularity": "train"},
    choices={"group": GAP_GROUPS, "popularity": POPULARITY_SOURCES},
    check=_check_gap_params,
    needs_train=True,
    description="ΔGAP of a user group: relative change of mean popularity from the profile to the list; "
    "Abdollahpouri et al., UMAP 2021",
)
def delta_gap(
    data: MetricInput,
    k: int | None,
    group: str = "all",
    user_share: float = 0.2,
    tail: float = 0.2,
    popularity: str = "train",
) -> float:
    """(GAP_r − GAP_p) / GAP_p over the users of ``group`` with a list and a profile (Abdollahpouri et al., UMAP 2021;
    ClayRS ``DeltaGap``); 0 = the lists as popular as the profiles, > 0 popularity amplified. No better side: the
    sign is the finding."""
    listed, profiled = _gap_parts(data, k, popularity)
    scored = ~np.isnan(listed) & ~np.isnan(profiled)
    if group != "all":
        scored &= user_groups_by_profile(data, user_share, tail, popularity) == group
    if not scored.any() or profiled[scored].mean() == 0:
        return float("nan")
    gap_p = float(profiled[scored].mean())
    return (float(listed[scored].mean()) - gap_p) / gap_p


def popularity_lift_curve(
    data: MetricInput,
    k: int | None,
    n_bins: int = 10,
    popularity: str = "train",
    groups: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The popularity lift per user group: users with a profile and a list cut into ``n_bins`` equal-size bins by
    their profile's mean popularity, and each bin's ΔGAP (Abdollahpouri et al., UMAP 2021, Fig. 2).

    ``groups`` (one label per user row: gender, age band, a ``--user-groups`` file aligned to the rows, or
    :func:`user_groups_by_profile`) replaces the bins: one point per group, in the order of the sorted labels
    (``n_bins`` is then unused; ``""`` labels take no part).

    Returns
    -------
    (profile, lift) : two float arrays of length ``n_bins`` (or the number of groups)
        The bin's GAP_p (mean profile popularity, a share of users) and its ΔGAP.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> train = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1.0]]))
    >>> d = MetricInput(np.array([[0], [1], [3]]), sp.csr_matrix((3, 4)), train=train)
    >>> profile, lift = popularity_lift_curve(d, 1, n_bins=1)
    >>> profile.round(4).tolist(), lift.round(4).tolist()  # profiles 2/3, lists (1 + 1/3 + 1/3) / 3
    ([0.6667], [-0.1667])
    >>> _, lift = popularity_lift_curve(d, 1, groups=np.array(["F", "M", "M"]))
    >>> lift.round(4).tolist()  # F: list 1 against profile 2/3; M: lists 1/3 against profiles 2/3
    [0.5, -0.5]
    """
    if n_bins < 1:
        raise MetricError(f"popularity_lift_curve: n_bins must be a positive integer, got {n_bins!r}")
    listed, profiled = _gap_parts(data, k, popularity)
    users = np.flatnonzero(~np.isnan(listed) & ~np.isnan(profiled))
    if groups is not None:
        labels = np.asarray(groups).astype(str)
        if labels.shape != (data.n_users,):
            raise MetricError(f"popularity_lift_curve: groups needs one label per user row ({data.n_users}), "
                              f"got {labels.size}")  # fmt: skip
        bins = [users[labels[users] == g] for g in sorted(set(labels[users]) - {""})]
    else:
        bins = np.array_split(users[np.argsort(profiled[users], kind="stable")], n_bins)
    gap_p = np.array([profiled[b].mean() if b.size else np.nan for b in bins])
    gap_r = np.array([listed[b].mean() if b.size else np.nan for b in bins])
    with np.errstate(divide="ignore", invalid="ignore"):
        return gap_p, (gap_r - gap_p) / gap_p
