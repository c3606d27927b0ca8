"""Shilling (profile-injection) attacks, robustness measures and an attack-detection baseline.

An attacker creates fake user profiles that rate a *target* item with the top of the
scale (*push*) or the bottom (*nuke*), plus *filler* items chosen at random (the
filler size is the number of them, or a fraction of the catalogue) and, for some
attack models, a set of *selected* items. :func:`inject` adds ``round(size × n)``
such profiles (``n`` = users with at least one rating) to training data.

Attack models (Lam & Riedl 2004, "Shilling recommender systems for fun and profit",
WWW; Burke, Mobasher, Bhaumik & Williams 2005, "Segment-based injection attacks
against collaborative filtering recommender systems", ICDM; Mobasher, Burke, Bhaumik
& Williams 2007, "Toward trustworthy recommender systems: an analysis of attack
models and algorithm robustness", ACM TOIT 7(4)), with μ, σ the mean and standard
deviation of all ratings and μ_i, σ_i those of item i:

=============  ====================  ======================  ==============  ==========
attack         selected items        filler ratings          target          intent
=============  ====================  ======================  ==============  ==========
``random``     —                     N(μ, σ)                 r_max / r_min   push, nuke
``average``    —                     N(μ_i, σ_i) per item    r_max / r_min   push, nuke
``bandwagon``  most-rated, r_max     N(μ, σ)                 r_max / r_min   push, nuke
``segment``    segment items, r_max  r_min                   r_max           push
``love-hate``  —                     r_max                   r_min           nuke
=============  ====================  ======================  ==============  ==========

Drawn ratings are rounded to the scale's step and clipped to it; an item with fewer
than two ratings uses μ / σ. Fake users get the ids ``"__attack_0"``, ``"__attack_1"``…
appended at the *end* of the user id space, so every index of the original data (and
of a test split over it) stays valid; :func:`fake_user_mask` finds them by id and
:meth:`AttackResult.extend` re-expresses a test split in the extended id space. When
the data has timestamps the fake ratings get the latest one (the attack comes last).

Robustness measures (Mobasher et al. 2007, §5), over the *real* users who have not
rated the target in the training data, averaged over users then targets:

- prediction shift: mean of ``r̂_after − r̂_before`` (``predict``; models without it,
  e.g. popularity or random, are measured on ``score`` and the shift is marked
  ``"score"``: not comparable across models);
- hit ratio: share of those users whose top-k list (training items excluded) holds
  the target, before and after;
- rank: ``1 +`` the number of the user's unrated items scored strictly above the
  target (mean before/after; rank shift = before − after, positive = moved up);
- ordinary metrics: :func:`receval.evaluate` on the real users of a test split,
  before, after and their change.

Detection baseline (Chirita, Nejdl & Zamfir 2005, "Preventing shilling attacks in
online recommender systems", WIDM): RDMA_u = Σ_{i∈I_u} |r_ui − μ_i| / n_i / |I_u| (rating
deviation from mean agreement, n_i = ratings of item i) and DegSim_u = mean Pearson
similarity of u to its k most similar users; each is z-scored over the users with
ratings and a user is flagged when the mean of the two z-scores exceeds ``threshold``.

Examples
--------
>>> from receval.data.synthetic import generate
>>> data = generate(n_users=100, n_items=80, n_ratings=2000, seed=1)
>>> attack = inject(data, "average", targets=[data.item_ids[10]], size=0.05, filler=10, seed=0)
>>> attack.fake_users.tolist(), attack.data.user_ids[-1]
([100, 101, 102, 103, 104], '__attack_4')
>>> profile = attack.data.subset(attack.data.users == 100)
>>> len(profile), float(profile.ratings[profile.items == 10][0])
(11, 5.0)
>>> int(fake_user_mask(attack.data).sum())
5
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from receval.data.interactions import Interactions
from receval.data.vocab import index_of
from receval.errors import ConfigError, DataError
from receval.progress import Progress, progress_to

_log = logging.getLogger(__name__)

__all__ = [
    "ATTACKS",
    "FAKE_PREFIX",
    "AttackResult",
    "attack_effect",
    "attack_experiment",
    "check_attack",
    "choose_targets",
    "detect_attackers",
    "detection_features",
    "detection_quality",
    "fake_user_mask",
    "inject",
    "run_attack",
    "summarize_attack_experiment",
]

ATTACKS: tuple[str, ...] = ("random", "average", "bandwagon", "segment", "love-hate")
FAKE_PREFIX = "__attack_"
Intent = Literal["push", "nuke"]
_INTENTS: dict[str, Literal["push", "nuke"] | None] = {
    "random": None,
    "average": None,
    "bandwagon": None,
    "segment": "push",
    "love-hate": "nuke",
}
_KEY_CELLS = 4_000_000  # random keys drawn at once when sampling filler items
_SCORE_CELLS = 4_000_000  # scores computed at once for ranks


@dataclass(frozen=True)
class AttackResult:
    """Attacked training data and where the attack is.

    Attributes
    ----------
    data
        The original rows followed by the fake profiles; fake users are the last
        ``len(fake_users)`` indices of the user id space.
    fake_users, targets, selected
        Indices of the fake users, the target items and the selected items.
    attack, intent
        The attack model and ``"push"`` or ``"nuke"``.
    n_real_users
        Size of the original user id space.
    """

    data: Interactions
    fake_users: np.ndarray
    targets: np.ndarray
    selected: np.ndarray
    attack: str
    intent: str
    n_real_users: int

    @property
    def fake_mask(self) -> np.ndarray:
        """Boolean mask over the attacked user id space, True for fake users."""
        mask = np.zeros(self.data.n_users, dtype=bool)
        mask[self.fake_users] = True
        return mask

    def extend(self, other: Interactions) -> Interactions:
        """``other`` (e.g. the test split of the original data) over the attacked id space.

        The rows are unchanged (fake users come after every real user); only the user
        id space grows, so models fitted on :attr:`data` can be evaluated on it.
        """
        original = self.data.user_ids[: self.n_real_users]
        if other.n_users != self.n_real_users or not np.array_equal(other.user_ids, original):
            raise DataError(
                "the data to extend is not over the attacked data's original user id space: "
                "split the original data before the attack and extend its parts"
            )
        if other.n_items != self.data.n_items:
            raise DataError(f"the data to extend has {other.n_items} items, the attacked data {self.data.n_items}")
        return replace(other, user_ids=self.data.user_ids)


def fake_user_mask(data: Interactions) -> np.ndarray:
    """True for the users whose id starts with :data:`FAKE_PREFIX` (the injected profiles).

    Returns
    -------
    numpy.ndarray of bool
        One entry per user index of ``data``.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    >>> attacked = inject(data, "average", [data.item_ids[5]], filler=5)  # 4 fake users (5% of 80)
    >>> int(fake_user_mask(attacked.data).sum()), int(fake_user_mask(data).sum())
    (4, 0)
    """
    ids = data.user_ids
    if ids.dtype.kind not in ("U", "O"):
        return np.zeros(len(ids), dtype=bool)
    return np.fromiter((isinstance(u, str) and u.startswith(FAKE_PREFIX) for u in ids), dtype=bool, count=len(ids))


# ------------------------------------------------------------------ injection
def _item_indices(data: Interactions, ids: Sequence[Any] | np.ndarray, what: str) -> np.ndarray:
    ids = np.atleast_1d(np.asarray(ids, dtype=object))
    if ids.size == 0:
        raise ConfigError(f"no {what} item given")
    index = index_of(data.item_ids, ids, coerce=True)  # ids typed on a command line arrive as text
    if (index < 0).any():
        bad = ids[np.flatnonzero(index < 0)[0]]
        raise DataError(
            f"{what} item {bad!r} does not exist in the data ({data.n_items} items, ids such as "
            f"{data.item_ids[:3].tolist()}); give an original item id"
        )
    if len(np.unique(index)) < len(index):
        raise ConfigError(f"{what} items repeat: {ids.tolist()}")
    return index.astype(np.int64)


def _n_fake(data: Interactions, size: float) -> tuple[int, int]:
    if isinstance(size, bool) or not isinstance(size, int | float | np.integer | np.floating) or not np.isfinite(size):
        raise ConfigError(f"attack size {size!r} must be a number: the fraction of fake users, e.g. 0.05 for 5%")
    if not 0 < size < 1:
        raise ConfigError(
            f"attack size {size:g} must lie strictly between 0 and 1 (a fraction of the real users: 0.05 is 5%); "
            f"an attack of {size:.0%} is not a shilling attack"
        )
    n_real = int(len(np.unique(data.users)))
    if n_real == 0:
        raise DataError("cannot attack data without ratings")
    return max(1, int(round(size * n_real))), n_real


def _n_filler(filler: float, n_items: int, n_fixed: int) -> int:
    if isinstance(filler, bool) or not isinstance(filler, int | float | np.integer | np.floating):
        raise ConfigError(f"filler size {filler!r} must be a count (int) or a fraction of the items (float)")
    if isinstance(filler, int | np.integer):
        if filler < 0:
            raise ConfigError(f"filler size {filler} must not be negative")
        count = int(filler)
    else:
        if not 0 < filler <= 1:
            raise ConfigError(
                f"filler size {filler:g} as a fraction of the {n_items} items must lie in (0, 1]; "
                "give an int for a count"
            )
        count = max(1, int(round(filler * n_items)))
    if count + n_fixed > n_items:
        raise DataError(
            f"filler size {count} plus {n_fixed} target/selected item(s) is larger than the catalogue of "
            f"{n_items} items: use a smaller filler size"
        )
    return count


def _on_scale(values: np.ndarray, data: Interactions) -> np.ndarray:
    scale = data.scale
    if scale.step is not None:
        values = scale.low + np.round((values - scale.low) / scale.step) * scale.step
    return np.clip(values, scale.low, scale.high)


def _sample_filler(candidates: np.ndarray, n_fake: int, n_filler: int, rng: np.random.Generator) -> np.ndarray:
    """``n_fake`` rows of ``n_filler`` distinct items drawn uniformly from ``candidates``."""
    out = np.empty((n_fake, n_filler), dtype=np.int64)
    if n_filler == 0:
        return out
    if n_filler == len(candidates):
        out[:] = candidates
        return out
    step = max(1, _KEY_CELLS // len(candidates))
    for start in range(0, n_fake, step):
        keys = rng.random((min(step, n_fake - start), len(candidates)))
        out[start : start + len(keys)] = candidates[np.argpartition(keys, n_filler - 1, axis=1)[:, :n_filler]]
    return out


def _item_moments(data: Interactions) -> tuple[float, float, np.ndarray, np.ndarray]:
    r = data.ratings.astype(np.float64)
    mu, sigma = float(r.mean()), float(r.std())
    n = np.bincount(data.items, minlength=data.n_items).astype(np.float64)
    s = np.bincount(data.items, weights=r, minlength=data.n_items)
    s2 = np.bincount(data.items, weights=r * r, minlength=data.n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, s / n, mu)
        var = np.where(n > 1, (s2 - n * mean * mean) / np.maximum(n - 1, 1), sigma**2)
    return mu, sigma, mean, np.sqrt(np.maximum(var, 0.0))


def _default_selected(data: Interactions, attack: str, targets: np.ndarray, n_selected: int) -> np.ndarray:
    counts = np.bincount(data.items, minlength=data.n_items).astype(np.float64)
    counts[targets] = -1
    if attack == "segment":
        if data.aspects is None:
            raise ConfigError(
                "a segment attack needs selected items (the segment the attacker targets): "
                "give selected=[item ids], or data with item aspects to pick popular items of the target's aspects"
            )
        target_aspects = np.asarray(data.aspects[targets].sum(axis=0)).ravel() > 0
        shares = np.asarray(data.aspects[:, target_aspects].sum(axis=1)).ravel() > 0
        counts[~shares] = -1
    order = np.argsort(-counts, kind="stable")
    chosen = order[:n_selected]
    return np.sort(chosen[counts[chosen] >= 0]).astype(np.int64)


def _fill_extra(column: np.ndarray, n: int) -> np.ndarray:
    if column.dtype == bool:
        fill = np.zeros(n, dtype=bool)
    elif column.dtype.kind in "iu":
        fill = np.zeros(n, dtype=column.dtype)
    elif column.dtype.kind == "f":
        fill = np.full(n, np.nan, dtype=column.dtype)
    else:
        fill = np.full(n, None, dtype=object)
    return fill


def check_attack(attack: object, intent: object = None) -> Literal["push", "nuke"]:
    """``attack`` one of :data:`ATTACKS` and ``intent`` (None: the attack's own, else push) one it has.

    Returns
    -------
    str
        The intent, ``"push"`` or ``"nuke"``.

    Examples
    --------
    >>> check_attack("average"), check_attack("love-hate")
    ('push', 'nuke')
    >>> check_attack("segment", "nuke")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: the segment attack is a push attack (Mobasher et al. 2007); it has no nuke form
    """
    if attack not in ATTACKS:
        raise ConfigError(f"unknown attack {attack!r}; use one of {', '.join(ATTACKS)}", parameters=["attack"])
    forced = _INTENTS[str(attack)]
    chosen = intent or forced or "push"
    if chosen not in ("push", "nuke"):
        raise ConfigError(f"intent {chosen!r} must be 'push' or 'nuke'", parameters=["intent"])
    if forced is not None and chosen != forced:
        raise ConfigError(f"the {attack} attack is a {forced} attack (Mobasher et al. 2007); it has no {chosen} form",
                          parameters=["intent"])  # fmt: skip
    return chosen


def inject(
    data: Interactions,
    attack: str,
    targets: Sequence[Any] | np.ndarray,
    *,
    intent: Intent | None = None,
    size: float = 0.05,
    filler: float = 0.05,
    selected: Sequence[Any] | np.ndarray | None = None,
    n_selected: int = 3,
    seed: int | np.random.Generator = 0,
) -> AttackResult:
    """Add ``round(size × n_real)`` fake profiles of the given attack model (see the module docs).

    Parameters
    ----------
    data
        The training ratings to attack (one rating per (user, item) pair expected).
    attack
        One of :data:`ATTACKS`.
    targets
        Original ids of the attacked item(s); every fake profile rates all of them.
    intent
        ``"push"`` (target rated r_max) or ``"nuke"`` (r_min); by default push, except
        love/hate (nuke only); segment is push only.
    size
        Fake users as a fraction of the users with ratings, in (0, 1).
    filler
        Filler items per profile: an int count, or a float fraction of the catalogue.
    selected
        Original ids of the selected items (bandwagon, segment). By default the
        ``n_selected`` most-rated items (bandwagon) or the most-rated items sharing an
        aspect with a target (segment; data with aspects only).
    n_selected
        Number of default selected items.
    seed
        Seed (or Generator) of the filler choice and ratings.

    Returns
    -------
    AttackResult
        The attacked data (the original rows, then the fake profiles' over an id space
        extended by the fake users) and the indices of the fake users, targets and
        selected items.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    >>> attacked = inject(data, "average", [data.item_ids[5]], filler=5)  # 4 fake users (5% of 80)
    >>> attacked.data.n_users, attacked.fake_users.tolist(), attacked.intent
    (84, [80, 81, 82, 83], 'push')
    """
    intent = check_attack(attack, intent)
    target_idx = _item_indices(data, targets, "target")
    n_fake, _ = _n_fake(data, size)
    if attack in ("bandwagon", "segment"):
        if selected is not None:
            sel = _item_indices(data, selected, "selected")
            if np.isin(sel, target_idx).any():
                raise ConfigError("a selected item is also a target")
        else:
            if isinstance(n_selected, bool) or not isinstance(n_selected, int | np.integer) or n_selected < 1:
                raise ConfigError(f"n_selected={n_selected!r} must be a positive integer")
            sel = _default_selected(data, attack, target_idx, int(n_selected))
    else:
        if selected is not None:
            raise ConfigError(f"the {attack} attack has no selected items (bandwagon and segment attacks do)")
        sel = np.zeros(0, dtype=np.int64)
    n_fill = _n_filler(filler, data.n_items, len(target_idx) + len(sel))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    low, high = float(data.scale.low), float(data.scale.high)
    mu, sigma, item_mean, item_std = _item_moments(data)
    candidates = np.setdiff1d(np.arange(data.n_items), np.concatenate([target_idx, sel]))
    fill_items = _sample_filler(candidates, n_fake, n_fill, rng)
    if attack in ("random", "bandwagon"):
        fill_ratings = rng.normal(mu, sigma, size=fill_items.shape)
    elif attack == "average":
        fill_ratings = item_mean[fill_items] + item_std[fill_items] * rng.standard_normal(fill_items.shape)
    elif attack == "segment":
        fill_ratings = np.full(fill_items.shape, low)
    else:  # love-hate
        fill_ratings = np.full(fill_items.shape, high)
    target_rating = high if intent == "push" else low
    per_user = len(target_idx) + len(sel) + n_fill
    items = np.concatenate(
        [np.broadcast_to(target_idx, (n_fake, len(target_idx))), np.broadcast_to(sel, (n_fake, len(sel))), fill_items],
        axis=1,
    )
    ratings = np.concatenate(
        [
            np.full((n_fake, len(target_idx)), target_rating),
            np.full((n_fake, len(sel)), high),
            _on_scale(fill_ratings, data),
        ],
        axis=1,
    )
    n_real_users = data.n_users
    fake_users = np.arange(n_real_users, n_real_users + n_fake, dtype=np.int64)
    fake_ids = np.array([f"{FAKE_PREFIX}{j}" for j in range(n_fake)], dtype=object)
    user_ids = np.concatenate([data.user_ids.astype(object), fake_ids])
    n_new = n_fake * per_user
    timestamps = None
    if data.timestamps is not None:
        timestamps = np.full(n_new, int(data.timestamps.max()) if data.n_ratings else 0, dtype=np.int64)
    fake = Interactions(
        users=np.repeat(fake_users, per_user),
        items=items.ravel(),
        ratings=ratings.ravel(),
        user_ids=user_ids,
        item_ids=data.item_ids,
        scale=data.scale,
        timestamps=timestamps,
        extra={k: _fill_extra(v, n_new) for k, v in data.extra.items()},
    )
    attacked = Interactions.concat([data, fake], name=f"{data.name}+{attack}" if data.name else attack)
    return AttackResult(attacked, fake_users, target_idx, sel, attack, intent, n_real_users)


# ------------------------------------------------------------------ measuring
def choose_targets(
    data: Interactions, n: int = 5, *, band: tuple[float, float] = (0.4, 0.6), seed: int = 0
) -> np.ndarray:
    """``n`` original item ids of mid popularity: rating-count quantile within ``band`` among rated items.

    Returns
    -------
    numpy.ndarray
        ``n`` original item ids, drawn without replacement (seeded) and sorted by index;
        fewer than ``n`` items in the band is a DataError.

    Examples
    --------
    >>> d = Interactions.from_arrays([0, 0, 0, 1, 1, 2], [0, 1, 2, 0, 1, 0], [5, 4, 3, 2, 5, 4])
    >>> choose_targets(d, 1, band=(0.4, 0.6)).tolist()
    [1]
    """
    counts = np.bincount(data.items, minlength=data.n_items)
    rated = np.flatnonzero(counts > 0)
    lo, hi = np.quantile(counts[rated], band)
    pool = rated[(counts[rated] >= lo) & (counts[rated] <= hi)]
    if len(pool) < n:
        raise DataError(f"only {len(pool)} items have a rating count in the {band} quantile band; ask fewer targets")
    rng = np.random.default_rng(seed)
    return data.item_ids[np.sort(rng.choice(pool, size=n, replace=False))]


def _target_measures(
    model: Any, users: np.ndarray, targets: np.ndarray, exclude: Interactions, rated: sp.csr_matrix
) -> tuple[np.ndarray, np.ndarray, str]:
    """Per (user, target): prediction (or score) and rank among the user's unrated items."""
    from receval.recommenders.topn import exclusion_matrix

    excl = exclusion_matrix(exclude, exclude.n_users, exclude.n_items)
    n_items = exclude.n_items
    kind = "rating" if hasattr(model, "predict") else "score"
    values = np.empty((len(users), len(targets)))
    ranks = np.empty((len(users), len(targets)))
    step = max(1, _SCORE_CELLS // n_items)
    for start in range(0, len(users), step):
        batch = users[start : start + step]
        scores = np.asarray(model.score(batch), dtype=np.float64)
        scores[np.isnan(scores)] = -np.inf
        sub = excl[batch].tocoo()
        scores[sub.row, sub.col] = -np.inf
        at = scores[:, targets]
        if kind == "score":
            values[start : start + len(batch)] = at
        for j in range(len(targets)):
            ranks[start : start + len(batch), j] = 1 + (scores > at[:, j : j + 1]).sum(axis=1)
    if kind == "rating":
        uu = np.repeat(users, len(targets))
        tt = np.tile(targets, len(users))
        values = np.asarray(model.predict(uu, tt), dtype=np.float64).reshape(len(users), len(targets))
    valid = np.asarray(rated[users][:, targets].toarray() == 0)
    values[~valid] = np.nan
    ranks[~valid] = np.nan
    return values, ranks, kind


def _per_target_mean(values: np.ndarray) -> float:
    with np.errstate(invalid="ignore"):
        return float(np.nanmean(np.nanmean(values, axis=0))) if np.isfinite(values).any() else float("nan")


def attack_effect(
    before: Any,
    after: Any,
    train: Interactions,
    attack: AttackResult,
    *,
    k: int = 10,
    test: Interactions | None = None,
    metrics: Sequence[str] = (),
    threshold: float | None = None,
    seed: int = 0,
) -> dict[str, float | str]:
    """Robustness measures of one attack on one algorithm (see the module docs).

    ``before`` is fitted on ``train``, ``after`` on ``attack.data``; measures are over
    the real users of ``train`` (those with ratings), ``metrics`` on the users of
    ``test`` (the original id space) by the one-shot protocol
    (:func:`receval.evaluation.evaluate_model` on the fitted models: top-``k`` lists,
    training items excluded; ``train`` is the reference of the metrics that need
    one, before and after).

    Returns
    -------
    dict
        ``prediction_shift``, ``shift_kind``, ``hit_ratio_before/after``,
        ``rank_before/after``, ``rank_shift``, ``n_users`` and ``<metric>_before/after/change``.

    Examples
    --------
    Pushing one item into Popularity's lists moves it up (a lower mean rank):

    >>> from receval.recommenders import make
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    >>> attacked = inject(data, "average", [data.item_ids[5]], filler=5)  # 4 fake users (5% of 80)
    >>> effect = attack_effect(make("popularity").fit(data), make("popularity").fit(attacked.data), data, attacked)
    >>> effect["shift_kind"], effect["rank_after"] < effect["rank_before"]
    ('score', True)
    """
    from receval.evaluation import evaluate_model
    from receval.recommenders import recommend

    users = np.unique(train.users).astype(np.int64)
    targets = attack.targets
    rated = train.to_csr("ones") if not train.has_duplicates else train.deduplicate("last").to_csr("ones")
    v0, r0, kind = _target_measures(before, users, targets, train, rated)
    v1, r1, _ = _target_measures(after, users, targets, attack.data, rated)
    lists0, _ = recommend(before, users, k, exclude=train, seed=seed)
    lists1, _ = recommend(after, users, k, exclude=attack.data, seed=seed)
    valid = np.isfinite(r0)
    hits0 = np.where(valid, (lists0[:, :, None] == targets[None, None, :]).any(axis=1), np.nan)
    hits1 = np.where(valid, (lists1[:, :, None] == targets[None, None, :]).any(axis=1), np.nan)
    out: dict[str, float | str] = {
        "prediction_shift": _per_target_mean(v1 - v0),
        "shift_kind": kind,
        "hit_ratio_before": _per_target_mean(hits0),
        "hit_ratio_after": _per_target_mean(hits1),
        "rank_before": _per_target_mean(r0),
        "rank_after": _per_target_mean(r1),
        "rank_shift": _per_target_mean(r0 - r1),
        "n_users": int(valid.any(axis=1).sum()),
    }
    if test is not None and metrics:
        results = [
            evaluate_model(model, fitted_on, truth, list(metrics), k=k, threshold=threshold, seed=seed, fitted=True)
            for model, fitted_on, truth in ((before, train, test), (after, attack.extend(train), attack.extend(test)))
        ]
        for m in metrics:
            b, a = results[0].summary[m], results[1].summary[m]
            out[f"{m}_before"], out[f"{m}_after"], out[f"{m}_change"] = b, a, a - b
    return out


Factory = Callable[[], Any]


def _factories(algorithms: Sequence[str] | Mapping[str, Any], seed: int) -> dict[str, Factory]:
    """Label -> factory of fresh models (:func:`~receval.studies._models.model_factory`; names get ``seed``)."""
    from receval.studies._models import model_factory

    items = algorithms.items() if isinstance(algorithms, Mapping) else ((a, a) for a in algorithms)
    out = {str(label): model_factory(spec, seed=seed) for label, spec in items}
    if not out:
        raise ConfigError("no algorithm given")
    return out


def attack_experiment(
    data: Interactions,
    attack: str | Sequence[str],
    sizes: Sequence[float],
    algorithms: Sequence[str] | Mapping[str, Any],
    *,
    targets: Sequence[Any] | None = None,
    n_targets: int = 5,
    intent: Intent | None = None,
    filler: float = 0.05,
    selected: Sequence[Any] | None = None,
    k: int = 10,
    metrics: Sequence[str] = ("ndcg@10", "precision@10"),
    threshold: float | None = None,
    test_fraction: float = 0.2,
    seed: int = 0,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Attack × size × target × algorithm grid; one tidy row per point.

    The data is split once (:func:`receval.split.holdout`, ``test_fraction``, ``seed``);
    each algorithm is fitted on the clean training part and, for each attack, size and
    target, on the attacked one (each target attacked on its own). ``algorithms`` are
    names of :func:`receval.recommenders.make` (models with a ``seed`` parameter get
    ``seed``) or a mapping label -> name, unfitted model (a fresh
    :func:`receval.recommenders.clone` per fit) or factory. ``targets`` are
    original item ids (default: :func:`choose_targets` on the training part, mid
    popularity). ``threshold`` (default: the scale's :meth:`~receval.data.interactions.RatingScale.default_threshold`)
    defines relevance for ``metrics``. Columns: ``attack``, ``intent``, ``size``,
    ``n_fake``, ``target``, ``algorithm`` and those of :func:`attack_effect`.
    ``progress(points_done, points, "attack grid")`` (default: the active callback of
    :func:`receval.progress.reporting`) hears of each point done.

    Returns
    -------
    pandas.DataFrame
        One row per attack, size, target and algorithm, with the columns above.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    >>> frame = attack_experiment(data, "average", [0.05], ["random"], n_targets=1, filler=5, metrics=())
    >>> frame[["attack", "size", "algorithm", "prediction_shift", "shift_kind"]].values.tolist()
    [['average', 0.05, 'random', 0.0, 'score']]
    """
    from receval.split import holdout

    attacks = [attack] if isinstance(attack, str) else list(attack)
    for a in attacks:
        if a not in ATTACKS:
            raise ConfigError(f"unknown attack {a!r}; use one of {', '.join(ATTACKS)}")
    factories = _factories(algorithms, seed)
    sizes = [float(s) for s in sizes]
    for s in sizes:
        _n_fake(data, s)
    data = data.deduplicate("last") if data.has_duplicates else data
    train, test = holdout(data, test_fraction=test_fraction, seed=seed)
    target_ids = list(targets) if targets is not None else choose_targets(train, n_targets, seed=seed).tolist()
    _item_indices(train, target_ids, "target")
    thr = data.scale.relevance(threshold).threshold
    clean = {label: fresh().fit(train) for label, fresh in factories.items()}
    rows: list[dict[str, Any]] = []
    notify, total = progress_to(progress), len(attacks) * len(sizes) * len(target_ids) * len(factories)
    notify(0, total, "attack grid")
    for a_index, kind in enumerate(attacks):
        for s_index, size in enumerate(sizes):
            for t_index, target in enumerate(target_ids):
                rng = np.random.default_rng([seed, a_index, s_index, t_index])
                result = inject(
                    train, kind, [target], intent=intent, size=size, filler=filler, selected=selected, seed=rng
                )
                for label, fresh in factories.items():
                    after = fresh().fit(result.data)
                    effect = attack_effect(
                        clean[label], after, train, result, k=k, test=test, metrics=metrics, threshold=thr, seed=seed
                    )
                    rows.append(
                        {
                            "attack": kind,
                            "intent": result.intent,
                            "size": size,
                            "n_fake": len(result.fake_users),
                            "target": target,
                            "algorithm": label,
                            **effect,
                        }
                    )
                    _log.debug("attack %s size %g target %s: %s done", kind, size, target, label)
                    notify(len(rows), total, "attack grid")
    return pd.DataFrame(rows)


def run_attack(
    data: Interactions,
    attack: str,
    targets: Sequence[Any],
    algorithm: str,
    *,
    params: Mapping[str, Any] | None = None,
    intent: Intent | None = None,
    size: float = 0.05,
    filler: float = 0.05,
    selected: Sequence[Any] | None = None,
    k: int = 10,
    test_fraction: float = 0.2,
    threshold: float | None = None,
    detect: bool = False,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One attack (all ``targets`` at once) on one algorithm: the measures of :func:`attack_effect`.

    The data is split by a seeded holdout (:func:`receval.split.holdout`); ``algorithm``
    (a name of :func:`receval.recommenders.make` with ``params``; seeded with ``seed``
    unless ``params`` sets one) is fitted on the training part and on the training part
    with the fake profiles (:func:`inject`, seeded with ``seed``); ``ndcg@k`` and
    ``precision@k`` are measured on the test part with relevance threshold
    ``threshold`` (default: the scale's :meth:`~receval.data.interactions.RatingScale.default_threshold`). With
    ``detect``, ``detection_*`` holds :func:`detection_quality` of
    :func:`detect_attackers` on the attacked data. ``progress(done, 3, "attack")``
    (default: the active callback of :func:`receval.progress.reporting`) hears of the
    two fits and the measures.

    Returns
    -------
    dict
        ``attack``, ``size``, ``n_fake`` and the other settings, the measures of
        :func:`attack_effect`, and with ``detect`` the ``detection_*`` entries.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    >>> out = run_attack(data, "average", [data.item_ids[5]], "popularity", filler=5, detect=True)
    >>> out["n_fake"], out["shift_kind"], sorted(key for key in out if key.startswith("detection_"))[:2]
    (4, 'score', ['detection_f1', 'detection_n_fake'])
    """
    from receval.recommenders import clone, make
    from receval.split import holdout

    data = data.deduplicate("last") if data.has_duplicates else data
    train, test = holdout(data, test_fraction=test_fraction, seed=seed)
    result = inject(train, attack, targets, intent=intent, size=size, filler=filler, selected=selected, seed=seed)
    params = dict(params or {})
    model = make(algorithm, **params)
    model_seed = None if "seed" in params else seed
    notify = progress_to(progress)
    notify(0, 3, "attack")
    before = clone(model, seed=model_seed).fit(train)
    notify(1, 3, "attack")
    after = clone(model, seed=model_seed).fit(result.data)
    notify(2, 3, "attack")
    thr = data.scale.relevance(threshold).threshold
    metrics = [f"ndcg@{k}", f"precision@{k}"]
    out: dict[str, Any] = {
        "attack": attack,
        "intent": result.intent,
        "size": size,
        "n_fake": len(result.fake_users),
        "target": train.item_ids[result.targets].tolist(),
        "algorithm": algorithm,
        **attack_effect(before, after, train, result, k=k, test=test, metrics=metrics, threshold=thr, seed=seed),
    }
    if detect:
        flags, _ = detect_attackers(result.data)
        out.update({f"detection_{key}": value for key, value in detection_quality(flags, result.fake_mask).items()})
    notify(3, 3, "attack")
    return out


def summarize_attack_experiment(frame: pd.DataFrame) -> pd.DataFrame:
    """Means over targets of every numeric column, per attack, intent, size and algorithm.

    Returns
    -------
    pandas.DataFrame
        One row per attack, intent, size and algorithm, with ``n_targets``.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    >>> frame = attack_experiment(data, "average", [0.05], ["random", "popularity"], n_targets=2, filler=5, metrics=())
    >>> len(frame), len(summarize_attack_experiment(frame)), summarize_attack_experiment(frame)["n_targets"].tolist()
    (4, 2, [2, 2])
    """
    keys = ["attack", "intent", "size", "algorithm", "shift_kind"]
    numeric = [c for c in frame.columns if c not in keys and c != "target" and pd.api.types.is_numeric_dtype(frame[c])]
    out = frame.groupby(keys, sort=False)[numeric].mean().reset_index()
    out.insert(len(keys), "n_targets", frame.groupby(keys, sort=False)["target"].nunique().to_numpy())
    return out


# ------------------------------------------------------------------ detection
def detection_features(data: Interactions, k: int = 25) -> pd.DataFrame:
    """RDMA and DegSim of every user (NaN for users without ratings), with their z-scores.

    DegSim uses :class:`~receval.recommenders.knn.UserKNN`'s Pearson similarity (over
    co-rated items, 0 when undefined) and the ``k`` most similar other users.

    Returns
    -------
    pandas.DataFrame
        One row per user index: ``user_index``, ``user``, ``rdma``, ``degsim``, their
        z-scores ``z_rdma``, ``z_degsim`` and ``score`` (their mean).

    Examples
    --------
    >>> d = Interactions.from_arrays([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], [5, 1, 4, 2, 1, 5])
    >>> detection_features(d, k=1)["rdma"].round(3).tolist()
    [0.556, 0.222, 0.778]
    """
    from receval.recommenders.knn import UserKNN

    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ConfigError(f"k={k!r} must be a positive integer")
    data = data.deduplicate("last") if data.has_duplicates else data
    r = data.ratings.astype(np.float64)
    n_i = np.bincount(data.items, minlength=data.n_items).astype(np.float64)
    mean_i = np.bincount(data.items, weights=r, minlength=data.n_items) / np.maximum(n_i, 1)
    dev = np.abs(r - mean_i[data.items]) / n_i[data.items]
    n_u = np.bincount(data.users, minlength=data.n_users).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rdma = np.bincount(data.users, weights=dev, minlength=data.n_users) / n_u
    dense = UserKNN(k=k, similarity="pearson", mode="dense").fit(data).similarity_
    assert dense is not None  # mode="dense" keeps the similarity matrix
    sim = dense.copy()
    np.fill_diagonal(sim, -np.inf)
    kk = min(k, data.n_users - 1)
    degsim = np.full(data.n_users, np.nan)
    if kk >= 1:
        top = -np.partition(-sim, kk - 1, axis=1)[:, :kk]
        degsim = np.where(np.isfinite(top), top, np.nan).mean(axis=1)
    active = n_u > 0
    rdma[~active] = np.nan
    degsim[~active] = np.nan
    frame = pd.DataFrame({"user_index": np.arange(data.n_users), "user": data.user_ids, "rdma": rdma, "degsim": degsim})
    for col in ("rdma", "degsim"):
        v = frame[col].to_numpy()
        sd = np.nanstd(v)
        frame[f"z_{col}"] = (v - np.nanmean(v)) / sd if sd > 0 else np.where(np.isnan(v), np.nan, 0.0)
    frame["score"] = (frame["z_rdma"] + frame["z_degsim"]) / 2
    return frame


def detect_attackers(data: Interactions, threshold: float = 1.5, k: int = 25) -> tuple[np.ndarray, pd.DataFrame]:
    """Flag users whose mean z-score of RDMA and DegSim exceeds ``threshold``; returns (flags, features).

    Returns
    -------
    tuple of (numpy.ndarray of bool, pandas.DataFrame)
        One flag per user index, and :func:`detection_features`' table.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    >>> attacked = inject(data, "average", [data.item_ids[5]], filler=5)  # 4 fake users (5% of 80)
    >>> flags, features = detect_attackers(attacked.data)
    >>> flags[attacked.fake_users].tolist(), int(flags.sum())
    ([True, False, False, False], 1)
    """
    if not np.isfinite(threshold):
        raise ConfigError(f"threshold {threshold!r} must be a finite z-score")
    features = detection_features(data, k=k)
    flags = (features["score"] > threshold).to_numpy()
    return flags, features


def detection_quality(flagged: np.ndarray, fake: np.ndarray) -> dict[str, float]:
    """Precision, recall and F1 of flagged users against the truly fake ones (boolean masks).

    Precision is NaN when nothing is flagged, recall NaN when nothing is fake.

    Returns
    -------
    dict of str to float
        ``precision``, ``recall``, ``f1``, ``n_flagged`` and ``n_fake``.

    Examples
    --------
    >>> q = detection_quality(np.array([1, 1, 0, 0, 1], bool), np.array([1, 0, 0, 1, 1], bool))
    >>> {key: round(value, 3) for key, value in q.items()}
    {'precision': 0.667, 'recall': 0.667, 'f1': 0.667, 'n_flagged': 3, 'n_fake': 3}
    """
    flagged, fake = np.asarray(flagged, dtype=bool), np.asarray(fake, dtype=bool)
    if flagged.shape != fake.shape:
        raise DataError(f"{flagged.shape[0]} flags for {fake.shape[0]} users: give one flag per user")
    tp = int((flagged & fake).sum())
    n_flagged, n_fake = int(flagged.sum()), int(fake.sum())
    precision = tp / n_flagged if n_flagged else float("nan")
    recall = tp / n_fake if n_fake else float("nan")
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else float("nan")
    return {"precision": precision, "recall": recall, "f1": f1, "n_flagged": n_flagged, "n_fake": n_fake}
