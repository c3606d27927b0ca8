"""Sampled evaluation: each held-out item ranked against sampled negatives, and estimates of the full metric.

A metric string with ``sampled=N`` (``"ndcg@10(sampled=100,correction=bv)"``,
:mod:`receval.metrics`) asks for the metric of each held-out positive ranked against N
negatives sampled from the items the user has neither in training nor in test, as NCF
(He et al., WWW 2017) and most papers after it evaluate, instead of the whole catalogue.
:func:`evaluate_sampled` computes such metrics for a model:

1. **Candidates**: drawn once per *design* — scheme (``sampling=uniform|popularity``,
   ``exponent=``), size (``sampled=N``), ``shape`` (``per-item``: one sample per held-out
   test item, NCF's leave-one-out; ``per-user``: one sample per user shared by all of the
   user's test items; ``recbole``: a sample per held-out item, pooled per user, RecBole's
   ``uni100``) and ``seed`` — by
   :func:`receval.evaluation.candidates.draw_candidates`, and shared by every metric of
   that design; or given (``candidates=``, e.g. read from NCF's files by :func:`read_ncf`).
   Every system evaluated with the same seed is ranked against the same candidates, which
   RecBole's re-drawn negatives do not give (RecBole issues #1256, #2077).
2. **Scores**: the model scores only the candidates, in batches of rows, through
   :func:`receval.recommenders.base.score_items` (1M users x 100 candidates never builds
   1M full score rows).
3. **Ranks**: each positive's rank among its row's negatives
   (:func:`receval.stats.sampled.sampled_ranks`; ties as documented there); with
   ``shape=recbole``, among all of its user's positives and pooled negatives in one list
   (:func:`receval.stats.sampled.pooled_ranks`), and the metric is RecBole's over that list
   (:func:`receval.stats.sampled.list_metric`), averaged over users.
4. **Estimates**: ``correction=none`` is the metric on the sampled list (uncorrected, as
   published results report it); ``ls`` and ``bv`` (Krichene & Rendle, KDD 2020),
   ``mapping`` (Li et al., KDD 2020), ``mle`` and ``mes`` (Jin et al., AAAI 2021) estimate
   the full-catalogue metric (:func:`receval.stats.sampled.estimate`) over a full list of
   ``n_items`` items: the catalogue without the user's training items, as the full
   evaluation ranks them (its mean over the held-out items).

Positives are the test ratings at or above the threshold (the truth scale's default, or
the metric's ``threshold=``). The summary is the mean over held-out positives (one per
row with ``per-item``); ``per_user`` holds each user's mean over their positives (NaN
for ``mle``/``mes``, which estimate from the whole rank distribution only). Cold users
(no training rating) follow ``cold_start``: ``exclude`` leaves them out, ``empty`` ranks
their positives last (an empty list finds nothing), ``fallback`` ranks their candidates
by training popularity (the fallback list's order). The design of each metric is in
``conventions.sampled``: ``{metric string: {"sampling", "n", "exponent", "shape",
"seed", "exclude", "n_items", "rows"}}``.

Examples
--------
>>> from receval.data.synthetic import generate
>>> from receval.recommenders import make
>>> from receval.split import holdout
>>> train, test = holdout(generate(100, 300, 2000, seed=0), test_fraction=0.2, seed=0)
>>> res = evaluate_sampled(make("popularity"), train, test, ["recall@10(sampled=50)", "auc(sampled=50)"])
>>> 0 <= res.summary["recall@10(sampled=50)"] <= 1, res.conventions.sampled["auc(sampled=50)"]["n"]
(True, 50)
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from receval.data.interactions import Interactions, distinct, pair_keys
from receval.errors import DataError, MetricError, ReceValError, shown_id
from receval.evaluation._result import Conventions, EvaluationResult, _check_split, _resolved
from receval.metrics._definition import SAMPLED_METRICS
from receval.metrics.registry import Metric, MetricList
from receval.vocabulary import COLD_START_DEFAULT, ColdStart, cold_start_policy

if TYPE_CHECKING:
    from receval.evaluation.candidates import Candidates

__all__ = [
    "BATCH_CELLS",
    "SampledPlan",
    "check_sampled_metrics",
    "design_of",
    "evaluate_sampled",
    "plan_sampled",
    "read_candidates",
    "read_ncf_candidates",
    "write_candidates",
    "write_ncf_candidates",
]

BATCH_CELLS = 1 << 17
"""Scores computed per batch: rows x (1 + negatives) cells (with 50 factors, about 50 MB of factor lookups)."""

# the design keys that decide the candidates (the seed and the exclusions are the evaluation's)
_DESIGN = ("n", "sampling", "exponent", "shape")
# how the summary aggregates: by held-out positive (per-item, per-user), or by user (recbole: one list per user)
_AGGREGATION = {False: "mean over held-out positives", True: "mean over users (one list per user, as RecBole)"}


def design_of(metric: Metric) -> dict[str, Any]:
    """The candidate design a sampled metric asks for: ``n``, ``sampling``, ``exponent`` and ``shape``.

    Metrics with the same design are computed from the same candidates.

    Returns
    -------
    dict
        ``{"n": int, "sampling": str, "exponent": float, "shape": str}`` (exponent 1.0 unless popularity).

    Examples
    --------
    >>> from receval.metrics import parse_metric
    >>> design_of(parse_metric("ndcg@10(sampled=100,correction=bv)"))
    {'n': 100, 'sampling': 'uniform', 'exponent': 1.0, 'shape': 'per-item'}
    """
    if metric.sampled is None:
        raise MetricError(f"metric {metric} is not sampled: add sampled=N, e.g. {metric.name}@10(sampled=100)")
    p = metric.params
    return {"n": int(p["sampled"]), "sampling": p["sampling"], "exponent": float(p["exponent"]), "shape": p["shape"]}


def evaluate_sampled(
    model: Any,
    train: Interactions,
    test: Interactions,
    metrics: Sequence[str | Metric] | str,
    *,
    candidates: Candidates | None = None,
    seed: int = 0,
    fitted: bool = False,
    seed_model: bool = True,
    threshold: float | None = None,
    users: Sequence[int] | np.ndarray | None = None,
    cold_start: ColdStart = COLD_START_DEFAULT,
) -> EvaluationResult:
    """Evaluate sampled metrics (``sampled=N``) of a model: candidates drawn once per design, scored, estimated.

    Parameters
    ----------
    model
        A model (fitted on ``train`` here, on a fresh copy, unless ``fitted``).
    train, test
        Interactions over one id space (as :mod:`receval.split` makes them).
    metrics
        Sampled metric strings: ``recall``, ``hit_rate``, ``precision``, ``ndcg``, ``mrr``,
        ``map`` or ``auc`` with ``sampled=N`` (and ``sampling=``, ``exponent=``, ``shape=``,
        ``correction=``, ``gamma=``; see :mod:`receval.metrics`).
    candidates
        Candidates to rank against (:class:`~receval.evaluation.candidates.Candidates`, e.g.
        from :func:`read_ncf`); every metric's design must be theirs. By default drawn
        per design with ``seed``.
    seed
        Seed of the candidates (and of the model, with ``seed_model``).
    fitted, seed_model
        As in :func:`receval.evaluation.evaluate_model`.
    threshold
        Positive: test rating >= threshold (default: the test scale's default threshold).
    users
        User indices to evaluate (default: every test user with a positive).
    cold_start
        Test users without a training rating: ``empty``, ``exclude`` or ``fallback`` (see the module docstring).

    Returns
    -------
    EvaluationResult
        ``summary`` (the mean over held-out positives, or the estimate of the full metric),
        ``per_user`` and ``conventions`` with ``sampled``: each metric's design.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.recommenders import make
    >>> from receval.split import holdout
    >>> train, test = holdout(generate(100, 300, 2000, seed=0), test_fraction=0.2, seed=0)
    >>> res = evaluate_sampled(make("biases"), train, test, "ndcg@10(sampled=50),ndcg@10(sampled=50,correction=bv)")
    >>> res.conventions.sampled["ndcg@10(sampled=50)"]["seed"], list(res.per_user.columns)
    (0, ['user', 'ndcg@10(sampled=50)', 'ndcg@10(sampled=50,correction=bv)'])
    """
    from receval.recommenders import clone

    plan = plan_sampled(list(MetricList(metrics)), train, test, candidates=candidates, seed=seed, threshold=threshold,
                        users=users, cold_start=cold_start)  # fmt: skip
    if not fitted:
        model = clone(model, seed=seed if seed_model else None).fit(train)
    return plan.run(model)


class SampledPlan:
    """Sampled metrics checked and their candidates drawn, before any model is fitted: :func:`plan_sampled`."""

    def __init__(
        self,
        specs: list[tuple[str, Metric]],
        train: Interactions,
        test: Interactions,
        drawn: dict[tuple[Any, ...], Candidates],
        threshold: float,
        wanted: np.ndarray | None,
        policy: ColdStart,
    ) -> None:
        self.specs, self.train, self.test, self.drawn = specs, train, test, drawn
        self.threshold, self.wanted, self.policy = threshold, wanted, policy

    def run(self, model: Any) -> EvaluationResult:
        """Score the candidates with the fitted ``model``, rank, estimate: the :class:`EvaluationResult`."""
        train, test, policy = self.train, self.test, self.policy
        train_counts = np.bincount(train.users, minlength=train.n_users)
        # the key's last entry is the shape: recbole's rows are ranked per user once the positives are known
        scored = {key: _ranks(model, train, test, cands, train_counts, policy, pooled=key[-1] == "recbole")
                  for key, cands in self.drawn.items()}  # fmt: skip
        evaluated = np.zeros(test.n_users, dtype=bool)
        chosen = []
        sampled: dict[str, dict[str, Any]] = {}
        for label, spec in self.specs:
            key = _key(spec)
            pairs = scored[key]
            thr = self.threshold if spec.params.get("threshold") is None else float(spec.params["threshold"])
            keep = pairs.ratings >= thr
            if self.wanted is not None:
                keep &= self.wanted[pairs.users]
            if policy == "exclude":
                keep &= train_counts[pairs.users] > 0
            evaluated[pairs.users[keep]] = True
            chosen.append((label, spec, pairs, keep))
            sampled[label] = {**self.drawn[key].design, "n_items": pairs.n_items, "rows": int(keep.sum())}
        eval_users = np.flatnonzero(evaluated)
        summary: dict[str, float] = {}
        columns: dict[str, np.ndarray] = {}
        for label, spec, pairs, keep in chosen:
            if pairs.pooled is not None:
                summary[label], per_user = _pooled(spec, pairs, keep, test.n_users, test.n_items)
            else:
                summary[label], per_pair = _estimate(spec, pairs, keep)
                per_user = _per_user(pairs.users[keep], per_pair, test.n_users)
            columns[label] = per_user[eval_users]
        cold = int((train_counts[eval_users] == 0).sum())
        conventions = Conventions(
            threshold=self.threshold,
            negative_threshold=self.threshold,
            tie_break="sampled ranks: a negative scored equal to the positive ranks above it (pessimistic)",
            aggregation={label: _AGGREGATION[spec.params["shape"] == "recbole"] for label, spec in self.specs},
            users_evaluated=len(eval_users),
            users_scored={label: int(np.isfinite(col).sum()) for label, col in columns.items()},
            cold_start=policy,
            users_cold=cold,
            users_cold_without_list=0 if policy == "exclude" else cold,
            metrics={label: _resolved(spec) for label, spec in self.specs},
            sampled=sampled,
        )
        return EvaluationResult({"user": test.user_ids[eval_users], **columns}, summary, conventions)


def plan_sampled(
    specs: list[tuple[str, Metric]],
    train: Interactions,
    test: Interactions,
    *,
    candidates: Candidates | None = None,
    seed: int = 0,
    threshold: float | None = None,
    users: Sequence[int] | np.ndarray | None = None,
    cold_start: ColdStart = COLD_START_DEFAULT,
) -> SampledPlan:
    """Check sampled metrics (labelled, as :func:`receval.evaluation.evaluate_model` parses them) and draw their
    candidates, once per design: every error before a model is fitted.

    Returns
    -------
    SampledPlan
        ``run(model)`` evaluates a fitted model.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.metrics import parse_metric
    >>> from receval.split import holdout
    >>> train, test = holdout(generate(100, 300, 2000, seed=0), test_fraction=0.2, seed=0)
    >>> specs = [(m, parse_metric(m)) for m in ("recall@10(sampled=20)", "ndcg@10(sampled=20)", "mrr(sampled=30)")]
    >>> len(plan_sampled(specs, train, test).drawn)  # two designs: 20 and 30 negatives
    2
    """
    from receval.evaluation.candidates import check_candidates, draw_candidates
    from receval.stats.sampled import check_correction

    unsampled = [label for label, spec in specs if spec.sampled is None]
    if unsampled:
        raise MetricError(f"evaluate_sampled computes sampled metrics (sampled=N); {unsampled[0]!r} is not one: "
                          "evaluate it with evaluate_model")  # fmt: skip
    policy = cold_start_policy(cold_start)
    _check_split(train, test, "evaluate_sampled")
    for label, spec in specs:
        _check_shape(spec, label)
        try:
            check_correction(spec.params["correction"], SAMPLED_METRICS[spec.name], sampling=spec.params["sampling"])
        except ReceValError as exc:
            raise MetricError(f"metric {label!r}: {exc}") from None
    drawn: dict[tuple[Any, ...], Candidates] = {}
    counts = np.bincount(train.items, minlength=train.n_items)
    for label, spec in specs:
        design = design_of(spec)
        if candidates is not None:
            _check_design(candidates, design, label)
            drawn[_key(spec)] = candidates
        elif _key(spec) not in drawn:
            if design["n"] >= train.n_items:  # a test user has a test item: n_items - 1 others at most
                raise MetricError(
                    f"metric {label!r}: sampled={design['n']} negatives cannot be drawn from a catalogue of "
                    f"{train.n_items:,} items, less the user's own: use a smaller sampled="
                )
            _check_draw(design, label, counts, _rows(test, design["shape"]))
            drawn[_key(spec)] = draw_candidates(
                train, test, design["n"], sampling=design["sampling"], exponent=design["exponent"],
                shape=design["shape"], seed=seed,
            )  # fmt: skip
    if candidates is not None:
        check_candidates(candidates, train, test, where="the given candidates")
    thr = test.scale.relevance(threshold).threshold
    wanted = None
    if users is not None:
        wanted = np.zeros(test.n_users, dtype=bool)
        wanted[np.asarray(users, dtype=np.int64)] = True
    return SampledPlan(list(specs), train, test, drawn, thr, wanted, policy)


def check_sampled_metrics(metrics: Sequence[str | Metric] | Mapping[str, str | Metric], data: Interactions) -> None:
    """Refuse, before any split or task, the sampled metrics that cannot run on ``data``: the one check of a
    configuration's (or a command's) sampled metric strings once the data is known.

    Every split keeps a user's items apart from the negatives, so a test user has at most
    the catalogue minus the items the user has in ``data`` to draw from: ``sampled=N``
    beyond that for every user is refused; so are popularity weights that overflow on the
    data's counts (:func:`receval.stats.sampled.check_exponent`; training counts are at most
    these), a sample that cannot fit in memory
    (:func:`receval.stats.sampled.check_sample_memory`) and ``shape=recbole`` with a
    correction. Metrics without ``sampled=`` are skipped. Given a mapping, its keys (the
    strings as the user wrote them) name the metrics in the messages.

    Returns
    -------
    None
        Or a one-line :class:`~receval.errors.MetricError` naming the metric and the value.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> data = generate(40, 120, 1200, seed=0)
    >>> check_sampled_metrics(["ndcg@10", "ndcg@10(sampled=50)"], data)
    >>> check_sampled_metrics(["ndcg@10(sampled=1000000000)"], data)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: metric 'ndcg@10(sampled=1000000000)': sampled=1000000000 negatives cannot be drawn: ...
    """
    from receval.metrics import parse_metric

    given = metrics.items() if isinstance(metrics, Mapping) else ((str(m), m) for m in metrics)
    specs = [(label, m if isinstance(m, Metric) else parse_metric(m)) for label, m in given]
    specs = [(label, spec) for label, spec in specs if spec.sampled is not None]
    if not specs:
        return
    counts = np.bincount(data.items, minlength=data.n_items)
    keys = distinct(pair_keys(data.users, data.items, data.n_items))
    per_user = np.bincount(keys // max(data.n_items, 1), minlength=data.n_users)
    fewest = int(per_user[per_user > 0].min()) if (per_user > 0).any() else 0
    for label, spec in specs:
        _check_shape(spec, label)
        design = design_of(spec)
        drawable = int((counts > 0).sum()) if design["sampling"] == "popularity" else data.n_items
        if design["n"] > drawable - fewest:
            what = "items rated" if design["sampling"] == "popularity" else "items"
            raise MetricError(
                f"metric {label!r}: sampled={design['n']} negatives cannot be drawn: the data has {drawable:,} {what} "
                f"and every user has {fewest:,} or more of them, so at most {drawable - fewest:,} are left to draw "
                f"from; use sampled={max(drawable - fewest, 1)} or fewer"
            )
        _check_draw(design, label, counts, 1)


def _rows(test: Interactions, shape: str) -> int:
    """The candidate rows a shape draws for ``test``: its users (per-user), else its distinct (user, item) pairs."""
    if shape == "per-user":
        return len(np.unique(test.users))
    return len(distinct(pair_keys(test.users, test.items, test.n_items)))


def _check_shape(spec: Metric, label: str) -> None:
    """RecBole's shape ranks all of a user's positives in one list: no correction (they estimate one item's rank)."""
    if spec.params["shape"] == "recbole" and spec.params["correction"] != "none":
        raise MetricError(
            f"metric {label!r}: shape=recbole ranks all of a user's positives in one list, and correction="
            f"{spec.params['correction']} estimates from one held-out item's rank; use correction=none, or "
            "shape=per-item to estimate the full metric"
        )


def _check_draw(design: Mapping[str, Any], label: str, counts: np.ndarray, rows: int) -> None:
    """A design's draw fits in memory and its popularity weights are finite (on ``counts``), before it is drawn."""
    from receval.stats.sampled import check_exponent, check_sample_memory

    try:
        if design["sampling"] == "popularity":
            check_exponent(design["exponent"], counts)
        # RecBole's shape keeps each row's scores (float64) until the user's list is ranked
        kept = 12.0 if design["shape"] == "recbole" else 4.0
        check_sample_memory(design["n"], rows, kept=kept, fix="use a smaller sampled=")
    except ReceValError as exc:
        raise MetricError(f"metric {label!r}: {exc}") from None


def _key(spec: Metric) -> tuple[Any, ...]:
    design = design_of(spec)
    return tuple(design[k] for k in _DESIGN)


def _check_design(candidates: Candidates, design: Mapping[str, Any], label: str) -> None:
    """The given candidates are the design the metric asks for (their size, shape and scheme)."""
    shape = candidates.design.get("shape")
    if design["shape"] == "recbole" and candidates.items is not None:  # a sample per held-out item: pooled per user
        shape = "recbole"
    have = {"n": int(candidates.negatives.shape[1]), "shape": shape, "sampling": candidates.design.get("sampling")}
    for key, value in have.items():
        if design[key] != value:
            word = "sampled" if key == "n" else key
            raise MetricError(
                f"metric {label!r} asks for {word}={design[key]}, but the candidates given have {word}={value}; "
                f"write the metric with {word}={value}",
                parameters=["candidates"],
            )


class _Pairs:
    """Every held-out (user, test item) pair of a set of candidates, with its test rating and sampled rank; for
    RecBole's shape also its item's and its negatives' scores (``pooled``: positive scores, negative items, their
    scores), ranked per user once the positives are known."""

    def __init__(self, users: np.ndarray, ratings: np.ndarray, ranks: np.ndarray, n: int, n_items: int,
                 pooled: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:  # fmt: skip
        self.users, self.ratings, self.ranks, self.n, self.n_items = users, ratings, ranks, n, n_items
        self.pooled = pooled


def _ranks(
    model: Any,
    train: Interactions,
    test: Interactions,
    cands: Candidates,
    train_counts: np.ndarray,
    policy: str,
    *,
    pooled: bool = False,
) -> _Pairs:
    """Score the candidates in batches of rows (through score_items) and rank each held-out pair's item; ``pooled``
    (RecBole's shape) keeps the scores instead, for :func:`_pooled`."""
    from receval.recommenders.base import score_items
    from receval.stats.sampled import sampled_ranks

    n = int(cands.negatives.shape[1])
    pair_users, pair_items, pair_rows = _pairs(cands, test)
    ratings = _ratings_at(test, pair_users, pair_items)
    popularity = np.bincount(train.items, minlength=train.n_items).astype(np.float64)
    step = max(1, BATCH_CELLS // (n + 1))
    ranks = np.empty(len(pair_users), dtype=np.float64)
    pos_scores = np.empty(len(pair_users) if pooled else 0, dtype=np.float64)
    neg_scores = np.empty((len(pair_users), n) if pooled else (0, n), dtype=np.float64)
    # pairs are sorted by row: the pairs of rows [start, stop) are one slice
    bounds = np.searchsorted(pair_rows, np.arange(0, len(cands.users) + step, step))
    for lo, hi in itertools.pairwise(bounds):
        if lo == hi:
            continue
        rows = pair_rows[lo:hi]
        users = pair_users[lo:hi]
        grid = np.column_stack([pair_items[lo:hi], cands.negatives[rows]])
        scores = score_items(model, users, grid)
        cold = train_counts[users] == 0
        if cold.any() and policy == "fallback":  # the fallback list's order: training popularity
            scores[cold] = popularity[grid[cold]]
        if policy == "empty":  # an empty list finds nothing: below every negative
            scores[cold, 0] = -np.inf
        if pooled:  # ranked per user once the metric's positives are known
            pos_scores[lo:hi], neg_scores[lo:hi] = scores[:, 0], scores[:, 1:]
            continue
        batch = np.asarray(sampled_ranks(scores[:, 0], scores[:, 1:]), dtype=np.float64)
        if policy == "empty":
            batch[cold] = n + 1
        ranks[lo:hi] = batch
    n_items = train.n_items - train_counts[pair_users]
    return _Pairs(pair_users, ratings, ranks, n, int(round(float(n_items.mean()))) if len(n_items) else n + 1,
                  (pos_scores, cands.negatives[pair_rows], neg_scores) if pooled else None)  # fmt: skip


def _pairs(cands: Candidates, test: Interactions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(user, item, row) of every held-out pair, by row: a row's item (per-item) or each test item of its user."""
    users = np.asarray(cands.users, dtype=np.int64)
    rows = np.arange(len(users))
    if cands.items is not None:
        return users, np.asarray(cands.items, dtype=np.int64), rows
    csr = test.to_csr("ones")
    counts = np.diff(csr.indptr)[users]
    starts = csr.indptr[users]
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    items = csr.indices[np.repeat(starts, counts) + offsets].astype(np.int64)
    return np.repeat(users, counts), items, np.repeat(rows, counts)


def _ratings_at(test: Interactions, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The test rating of each (user, item) pair (the last of a repeated pair); a DataError for a pair not in test."""
    return np.asarray(test.ratings, dtype=np.float64)[_test_rows(test, users, items)]


def _test_rows(test: Interactions, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The test row of each (user, item) pair (the last of a repeated pair); a DataError for a pair not in test."""
    keys = test.users.astype(np.int64) * test.n_items + test.items
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    wanted = users * test.n_items + items
    at = np.searchsorted(sorted_keys, wanted, side="right") - 1
    found = (at >= 0) & (sorted_keys[np.maximum(at, 0)] == wanted)
    if not found.all():
        bad = int(np.flatnonzero(~found)[0])
        raise DataError(
            f"candidate row {bad + 1}: item {shown_id(test.item_ids[items[bad]])} is not a test item of user "
            f"{shown_id(test.user_ids[users[bad]])}; a row's held-out item must be one of the user's test ratings",
            parameters=["candidates"],
        )
    return order[at]


def _estimate(spec: Metric, pairs: _Pairs, keep: np.ndarray) -> tuple[float, np.ndarray]:
    """The summary (an estimate over the kept pairs' ranks) and a value per kept pair (NaN without a per-row form)."""
    from receval.stats.sampled import estimate, estimate_per_row

    ranks = pairs.ranks[keep]
    if not len(ranks):
        return float("nan"), ranks
    options: dict[str, Any] = {"n_sampled": pairs.n, "n_items": pairs.n_items, "correction": spec.params["correction"],
                               "sampling": spec.params["sampling"]}  # fmt: skip
    if spec.params.get("gamma") is not None:
        options["gamma"] = spec.params["gamma"]
    name = SAMPLED_METRICS[spec.name]
    value = float(estimate(name, spec.k, ranks, **options))
    if spec.params["correction"] in ("mle", "mes"):  # an estimate of the rank distribution: no value per row
        return value, np.full(len(ranks), np.nan)
    return value, np.asarray(estimate_per_row(name, spec.k, ranks, **options), dtype=np.float64)


def _pooled(spec: Metric, pairs: _Pairs, keep: np.ndarray, n_users: int, n_items: int) -> tuple[float, np.ndarray]:
    """RecBole's shape: each user's kept positives and the distinct negatives of their rows ranked as one list; the
    summary (the mean over users) and each user's value (NaN without a positive)."""
    from receval.stats.sampled import list_metric, pooled_ranks

    assert pairs.pooled is not None
    pos_scores, negatives, neg_scores = pairs.pooled
    users = pairs.users[keep]
    out = np.full(n_users, np.nan)
    if not len(users):
        return float("nan"), out
    neg_users = np.repeat(users, negatives.shape[1])
    # a negative drawn for two of a user's positives is one item of the user's list (RecBole's scores by item)
    _, first = np.unique(neg_users * n_items + negatives[keep].ravel(), return_index=True)
    neg_users = neg_users[first]
    ranks = pooled_ranks(users, pos_scores[keep], neg_users, neg_scores[keep].ravel()[first])
    ids, values = list_metric(spec.name, spec.k, users, ranks, np.bincount(neg_users, minlength=n_users))
    out[ids] = values
    return float(values.mean()), out


def _per_user(users: np.ndarray, values: np.ndarray, n_users: int) -> np.ndarray:
    """Each user's mean over their pairs (NaN for a user without one)."""
    counts = np.bincount(users, minlength=n_users).astype(np.float64)
    sums = np.bincount(users, weights=values, minlength=n_users)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def read_ncf_candidates(
    rating: str | Path, negative: str | Path, train: Interactions, test: Interactions
) -> Candidates:
    """NCF's ``*.test.rating`` and ``*.test.negative`` (:mod:`receval.data.ncf`) as candidates of a split, checked.

    A negative that is one of the user's training or test items, a held-out item that is not
    one of the user's test ratings, an unknown user or item: a one-line DataError naming the
    file and line.

    Returns
    -------
    Candidates
        One ``per-item`` row per line, ``sampling`` uniform (as NCF drew them), ``seed`` None.

    Examples
    --------
    >>> import tempfile
    >>> from receval import Interactions
    >>> data = Interactions.from_ids(["0", "0", "0", "1", "1"], ["a", "b", "c", "a", "d"], [1] * 5)
    >>> in_test = np.array([0, 1, 0, 0, 1], bool)
    >>> train, test = data.subset(~in_test), data.subset(in_test)
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "x.test.rating").write_text("0\\tb\\t1\\t0\\n1\\td\\t1\\t0\\n")
    >>> _ = (folder / "x.test.negative").write_text("(0,b)\\td\\n(1,d)\\tc\\n")
    >>> cands = read_ncf_candidates(folder / "x.test.rating", folder / "x.test.negative", train, test)
    >>> cands.negatives.tolist(), cands.design["n"]
    ([[3], [2]], 1)
    >>> _ = (folder / "x.test.negative").write_text("(0,b)\\td\\n(1,d)\\ta\\n")
    >>> read_ncf_candidates(folder / "x.test.rating", folder / "x.test.negative", train, test)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.DataError: .../x.test.negative, line 2: negative 'a' of user '1' is one of the user's training ...
    """
    from receval.data.ncf import read_ncf
    from receval.evaluation.candidates import Candidates, check_candidates

    _check_split(train, test, "read_ncf_candidates")
    got = read_ncf(rating, negative, train)
    design = {"sampling": "uniform", "n": int(got.negatives.shape[1]), "exponent": 0.0, "seed": None,
              "shape": "per-item", "exclude": "train+test"}  # fmt: skip
    cands = Candidates(got.users, got.items, got.negatives, design, train.user_ids, train.item_ids)
    check_candidates(cands, train, test, where=str(negative), lines=got.lines)
    return cands


def write_ncf_candidates(
    candidates: Candidates, test: Interactions, rating: str | Path, negative: str | Path
) -> tuple[Path, Path]:
    """Write ``per-item`` candidates as NCF's ``*.test.rating`` and ``*.test.negative`` (original ids, atomically).

    Each line's rating and timestamp are the held-out item's in ``test`` (timestamp 0 without timestamps).

    Returns
    -------
    tuple of pathlib.Path
        The rating file and the negative file.

    Examples
    --------
    >>> import tempfile
    >>> from receval.data.synthetic import generate
    >>> from receval.evaluation.candidates import draw_candidates
    >>> from receval.split import per_user_holdout
    >>> train, test = per_user_holdout(generate(30, 80, 400, seed=1), seed=1)
    >>> cands = draw_candidates(train, test, n=5, seed=2)
    >>> folder = Path(tempfile.mkdtemp())
    >>> paths = write_ncf_candidates(cands, test, folder / "s.test.rating", folder / "s.test.negative")
    >>> back = read_ncf_candidates(*paths, train, test)
    >>> bool((back.negatives == cands.negatives).all() and (back.items == cands.items).all())
    True
    """
    from receval.data.ncf import NCFTest, write_ncf

    if candidates.items is None:
        raise DataError(
            "NCF's files hold one held-out item per line: per-user candidates cannot be written as them; draw them "
            "with shape=per-item, or write receval's candidate table (write_candidates)"
        )
    rows = _test_rows(test, candidates.users.astype(np.int64), candidates.items.astype(np.int64))
    stamps = np.zeros(len(rows), np.int64) if test.timestamps is None else test.timestamps[rows]
    held = NCFTest(candidates.users, candidates.items, np.asarray(test.ratings, dtype=np.float64)[rows], stamps,
                   candidates.negatives)  # fmt: skip
    return write_ncf(rating, negative, held, test)


def write_candidates(candidates: Candidates, path: str | Path) -> Path:
    """Write receval's candidate table (:meth:`Candidates.to_frame`) as CSV, TSV or Parquet, by the extension.

    Written atomically (:func:`receval.atomic.write_frame`); Parquet keeps the design.

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile
    >>> from receval.data.synthetic import generate
    >>> from receval.evaluation.candidates import draw_candidates
    >>> from receval.split import per_user_holdout
    >>> train, test = per_user_holdout(generate(30, 80, 400, seed=1), seed=1)
    >>> cands = draw_candidates(train, test, n=5, shape="per-user", seed=2)
    >>> path = write_candidates(cands, Path(tempfile.mkdtemp()) / "candidates.csv")
    >>> path.read_text().splitlines()[0]
    'user,negative'
    """
    from receval.atomic import write_frame
    from receval.outputs import check_output_file

    return write_frame(check_output_file(path, "path="), candidates.to_frame())


def read_candidates(path: str | Path, train: Interactions, test: Interactions, *, sampling: str | None = None
                    ) -> Candidates:  # fmt: skip
    """Read receval's candidate table (``user[, item], negative``, original ids; CSV, TSV or Parquet), checked.

    Read by :func:`receval.data.tables.read_table`, the one validated reader; the design is
    the table's own (Parquet) or uniform sampling unless ``sampling=`` says otherwise.

    Returns
    -------
    Candidates
        Over ``train``'s id space.

    Examples
    --------
    >>> import tempfile
    >>> from receval.data.synthetic import generate
    >>> from receval.evaluation.candidates import draw_candidates
    >>> from receval.split import per_user_holdout
    >>> train, test = per_user_holdout(generate(30, 80, 400, seed=1), seed=1)
    >>> cands = draw_candidates(train, test, n=5, seed=2)
    >>> back = read_candidates(write_candidates(cands, Path(tempfile.mkdtemp()) / "c.tsv"), train, test)
    >>> bool((back.negatives == cands.negatives).all()), back.design["shape"]
    (True, 'per-item')
    """
    from receval.data.tables import read_located
    from receval.evaluation.candidates import Candidates, check_candidates
    from receval.vocabulary import SAMPLING_SCHEMES, sampled_word

    _check_split(train, test, "read_candidates")
    located = read_located(path, "truth", required=("user", "negative"), label="candidate table",
                           text_columns=("negative",))  # fmt: skip
    frame = located.table.to_pandas()
    if located.path.suffix.lower() == ".parquet":  # the design write_candidates stored (pandas keeps attrs there)
        import json

        import pyarrow.parquet as pq

        stored = (pq.read_schema(located.path).metadata or {}).get(b"PANDAS_ATTRS")
        frame.attrs.update(json.loads(stored) if stored else {})
    design = None if sampling is None else {"sampling": sampled_word("sampling", sampling, SAMPLING_SCHEMES)}

    def line(row: int) -> int | None:  # a table row (0-based) -> its line in the file (None in Parquet)
        return located.line_of(row)

    try:
        cands = Candidates.from_frame(frame, train, design=design)
    except DataError as exc:  # the table's message (rows counted from 1), with the file and its line
        raise DataError(exc.message, path=path, line=None if exc.line is None else line(exc.line - 1)) from None
    # each candidate row starts at the first table row of its user (and item)
    first = frame[[c for c in ("user", "item") if c in frame.columns]].drop_duplicates().index.to_numpy()
    lines = [line(int(row)) for row in first]
    check_candidates(cands, train, test, where=str(path), lines=None if None in lines else np.array(lines))
    return cands
