"""The one-shot entry points: :func:`evaluate` (lists × truth × metrics) and :func:`evaluate_model` (fit, rank and
evaluate a model).

:func:`evaluate` reads in four steps: parse the metrics; align the lists, truth and
side data (:func:`receval.evaluation.align.align`: paths, DataFrames with original ids, an
item index matrix from :func:`receval.recommenders.recommend` ... become a rankings
matrix padded with -1 and a truth CSR on the same users); check the thresholds and
side data the metrics need; compute every metric into an :class:`EvaluationResult`.

Conventions (also written into ``EvaluationResult.conventions``, a :class:`Conventions`):

- Evaluated users: those with at least one rating in the truth. A truth user with
  no recommendations gets an empty list (every accuracy metric 0). Users in the
  recommendations that are absent from the truth cannot be scored: a warning, and
  they are dropped (``unknown_users="error"`` raises instead).
- Ranking from scores: descending score; from ranks: ascending rank. Ties (equal
  scores, or one rank given to two items of a list) go by ``ties`` (``"input"``: kept
  in input order, the default; ``"id"``: by item id ascending; ``"trec_eval"``: by
  item id descending as text, as trec_eval sorts a run). ``ranks="positions"`` reads
  a rank column as positions, as RecTools does (rank 9 alone is a list whose first
  eight positions are empty). Duplicate (user, item) rows and NaN scores are errors.
- Library conventions: ``convention=NAME`` (``trec_eval``, ``ranx``, ``recbole``,
  ``lenskit``, ``rectools``, ``recpack``, ``elliot``; :mod:`receval.metrics.conventions`)
  applies that library's preset to every metric string that does not name its own
  ``convention=``, and its tie rule unless ``ties=`` is given.
- Relevance: positive means rating ≥ ``threshold`` (λ; by default the truth scale's
  :meth:`~receval.data.interactions.RatingScale.default_threshold`, the one policy of
  receval). ``negative_threshold`` (default λ): negative means rating < it. Anti-
  metrics (fallout, anti_precision, fp, tn) need one of them given explicitly.
- ``empty_users``: users with no positive (fallout: no negative) item are left out
  of the mean (``"skip"``, NaN in ``per_user``) or scored 0 (``"zero"``).
- Cold users (truth users without a training rating; told apart only with ``train``)
  follow ``cold_start`` (:mod:`receval.cold_start`): ``"empty"`` (the default: scored
  as empty lists when they have none), ``"exclude"`` (left out) or ``"fallback"`` (the
  most-rated training items as their list when they have none); ``conventions.users_cold``
  and ``users_cold_without_list`` count them.

Examples
--------
>>> import pandas as pd
>>> truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "rating": [5, 2, 4]})
>>> recs = pd.DataFrame({"user": ["a", "a", "b"], "item": ["y", "x", "z"], "score": [0.9, 0.5, 0.7]})
>>> res = evaluate(recs, truth, ["precision@2", "recall@2", "ndcg@2", "mrr"], threshold=4)
>>> {name: round(value, 4) for name, value in res.summary.items()}
{'precision@2': 0.25, 'recall@2': 0.5, 'ndcg@2': 0.3155, 'mrr': 0.25}
>>> res.per_user["mrr"].tolist()
[0.5, 0.0]
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.data.interactions import Interactions, Relevance
from receval.errors import ConfigError, MetricError
from receval.evaluation._result import Conventions, EvaluationResult, _check_split, _resolved
from receval.evaluation.align import Aligned, Ranks, Ties, align, check_ties
from receval.metrics._list import MetricList, check_convention
from receval.metrics.conventions import preset_ties
from receval.metrics.registry import Metric, MetricInput
from receval.stats.propensity import PropensityModel, estimator_of, input_propensities
from receval.validate import check_count, check_number, check_seed, check_threshold
from receval.vocabulary import COLD_START_DEFAULT, ColdStart, cold_start_policy

if TYPE_CHECKING:
    import pandas as pd

    from receval.evaluation.candidates import Candidates
    from receval.evaluation.sampled import SampledPlan
    from receval.stats.barrier import MagicBarrier, OverfittingCheck

__all__ = ["check_cold_start", "check_convention", "check_depth", "evaluate", "evaluate_model"]
_log = logging.getLogger(__name__)

Table = Any
"""A table :func:`evaluate` reads: a path (str or ``pathlib.Path``), a DataFrame, a ``pyarrow.Table``, a dict ..."""


def evaluate(
    recommendations: Table | np.ndarray | None,
    truth: Table | Interactions,
    metrics: MetricList | Sequence[str | Metric] | str,
    *,
    train: Table | Interactions | None = None,
    threshold: float | None = None,
    negative_threshold: float | None = None,
    aspects: Table | None = None,
    predictions: Table | None = None,
    empty_users: Literal["skip", "zero"] = "skip",
    users: Sequence | np.ndarray | None = None,
    unknown_users: Literal["warn", "error"] = "warn",
    barrier: MagicBarrier | None = None,
    propensities: PropensityModel | Mapping[str, PropensityModel] | pd.DataFrame | None = None,
    mar_sample: Interactions | pd.DataFrame | None = None,
    columns: Mapping[str, str] | None = None,
    ties: Ties | None = None,
    convention: str | None = None,
    ranks: Ranks = "order",
    cold_start: ColdStart = COLD_START_DEFAULT,
    user_groups: Any = None,
    unknown_group: str | None = None,
) -> EvaluationResult:
    """Evaluate recommendation lists and/or rating predictions against held-out truth.

    Parameters
    ----------
    recommendations
        A file path (str or ``pathlib.Path``: any format
        :func:`receval.data.tables.read_table` reads, a TREC run among them), a
        DataFrame or ``pyarrow.Table`` (ids dictionary-encoded as ``read_table`` gives
        them with ``arrow=True``: then nothing here imports pandas) with columns
        ``user``, ``item`` and ``score`` (higher first) or ``rank`` (1 first),
        original ids (LensKit's ``user_id``/``item_id`` and ranx's ``q_id``/``doc_id``
        are recognised; other names through ``columns=``); a ``{user: {item: score}}``
        dict (pytrec_eval), a list of ir-measures ``ScoredDoc`` tuples or a ``ranx.Run``;
        an int matrix of item indices (into the truth's item id space, padded with
        -1), one row per user of ``users`` (user indices of the truth; by default
        every user of the truth's id space); a float or scipy-sparse *score* matrix
        of the same rows × the truth's items (each row ranked by descending score,
        ties by item index; a sparse matrix ranks only its stored entries, a dense one
        every finite score); or ``None`` when only error metrics are asked.
    truth
        A file path, :class:`~receval.Interactions`, a DataFrame or ``pyarrow.Table``
        ``user, item[, rating]`` (without ``rating`` every truth item has rating 1 and
        graded metrics refuse), a ``{user: {item: grade}}`` dict or a ``ranx.Qrels``.
    metrics
        Metric strings (``"ndcg@10"``, ``"fallout@10(negative_threshold=3)"``) or
        :class:`~receval.metrics.Metric` objects; a single string may list several
        separated by commas; or a :class:`~receval.metrics.MetricList` read already
        (with its convention: then ``convention`` is left out or names the same one).
    train
        Training ratings (popularity, profiles, G1) in the same original ids (a path too).
    threshold, negative_threshold
        Positive: rating ≥ ``threshold`` (default: the truth scale's
        :meth:`~receval.data.interactions.RatingScale.default_threshold`, 1 on the
        usual scales); negative: rating < ``negative_threshold`` (default
        ``threshold``). Each is checked only when a metric asked uses it.
    aspects
        Item aspects, a path or a DataFrame ``item, aspect``; by default the truth's or
        the training data's aspects when they are :class:`Interactions` with aspects.
    predictions
        A path or a DataFrame ``user, item, prediction[, rating]`` for RMSE/MAE (the
        rating is looked up in the truth when absent).
    empty_users
        Policy for users with no positive item: ``"skip"`` or ``"zero"``.
    unknown_users
        Users of the recommendations absent from the truth: ``"warn"`` and drop, or ``"error"``.
    barrier
        A magic-barrier estimate (:func:`receval.stats.barrier.magic_barrier`, from
        re-ratings of the same users): an RMSE below it is flagged in
        ``result.overfitting`` and by a warning.
    propensities, mar_sample
        For debiased estimates (``recall@10(estimator=snips,propensity=popularity)``,
        :mod:`receval.metrics.debiased`): fitted propensity models (or a DataFrame
        ``user, item, propensity`` for ``propensity=known``) and a missing-at-random
        sample of ratings (``naive-bayes``, ``wtd``); other models are fitted on
        ``train`` and the truth together. ``conventions.estimators`` records each
        metric's estimator and propensity model.
    columns
        ``{receval column: the tables' column}`` when they are not receval's names
        (``{"user": "uid", "score": "p"}``; roles ``user, item, rating, score, rank, timestamp``).
    ties
        How items of equal score (or rank) are ordered: ``"input"`` (as the rows come), ``"id"``
        (item id ascending) or ``"trec_eval"`` (item id descending, as text: trec_eval's
        ``form_res_rels.c``). Default: the preset's (``trec_eval`` for
        ``convention="trec_eval"``), else ``"input"``. ``conventions.tie_break`` states it.
    convention
        A library's name (case-insensitive): its preset for every metric string that
        does not name its own ``convention=`` (``conventions.metrics`` shows what each
        string resolved to).
    ranks
        How a ``rank`` column is read: ``"order"`` (the ranks only order each list) or
        ``"positions"`` (rank r is position r, a missing rank an empty position: RecTools'
        reading; a rank given twice in a list is then an error).
    cold_start
        Truth users without a rating in ``train`` (cold users): ``"empty"`` (scored as
        empty lists when they have none), ``"exclude"`` (left out of the evaluation) or
        ``"fallback"`` (the most-rated training items as the list of those without one,
        as long as the largest cutoff, or the longest list given when no metric has one);
        ``"exclude"`` and ``"fallback"`` need ``train``. See :mod:`receval.cold_start` and
        docs/concepts.md, "Cold-start users: one policy".
    user_groups, unknown_group
        A ``user, group`` table (a path, a DataFrame or a ``{user: group}`` mapping): every
        per-user metric's gap between the groups of the evaluated users in ``result.groups``
        (:func:`receval.stats.groups.group_gaps`: Welch's t-test, Holm across metrics);
        users without a group are an error unless ``unknown_group`` names the group that pools them.

    Returns
    -------
    EvaluationResult
        The summary, the per-user values and the conventions of the evaluation.

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.DataFrame({"user": ["q", "q"], "item": ["d1", "d2"], "rating": [1, 1]})
    >>> recs = pd.DataFrame({"user": ["q", "q", "q"], "item": ["d3", "d1", "d2"], "score": [1.0, 1.0, 1.0]})
    >>> evaluate(recs, truth, "precision@1").summary  # ties in input order: d3 first
    {'precision@1': 0.0}
    >>> evaluate(recs, truth, "precision@1", ties="id").summary  # item id ascending: d1 first
    {'precision@1': 1.0}
    >>> res = evaluate(recs, truth, "precision@2", convention="trec_eval")  # item id descending: d3, d2
    >>> res.summary, res.conventions.tie_break, res.conventions.convention
    ({'precision@2': 0.5}, "descending score, ties by item id descending as text (trec_eval's order)", 'trec_eval')
    """
    specs = MetricList.of(metrics, convention)
    preset = specs.convention
    sampled = next((label for label, spec in specs if spec.sampled is not None), None)
    if sampled is not None:
        raise MetricError(
            f"metric {sampled!r} ranks each held-out item against sampled negatives, which recommendation lists do "
            "not hold: evaluate a model with evaluate_model (receval run), or its candidate scores with "
            "receval.evaluation.sampled.evaluate_sampled"
        )
    if empty_users not in ("skip", "zero"):
        raise MetricError(f"empty_users must be 'skip' or 'zero', got {empty_users!r}")
    ties = check_ties(("input" if preset is None else preset_ties(preset)) if ties is None else ties)
    policy = check_cold_start(cold_start, train)
    group_table = None
    if user_groups is not None:  # read and checked before any work; pandas and scipy only when asked
        from receval.stats.groups import read_user_groups

        group_table = read_user_groups(user_groups)
    aligned = align(
        recommendations, truth, width=_needed_width(specs), train=train, aspects=aspects, predictions=predictions,
        users=users, unknown_users=unknown_users, columns=columns, ties=ties, ranks=ranks,
        item_identity=propensities is not None or not all(_list_only(spec) for _, spec in specs),
    )  # fmt: skip
    aligned, users_cold, cold_without_list = _apply_cold_start(aligned, policy, _needed_width(specs))
    relevance = _thresholds(specs, threshold, negative_threshold, aligned)
    _check_needs(specs, aligned)
    data = MetricInput(
        aligned.rankings, aligned.truth_rows, relevance=relevance, train=aligned.train_rows,
        train_all=aligned.train_all, aspects=aligned.aspects, rating_max=float(aligned.truth.scale.high),
        predictions=aligned.predictions, empty_users=empty_users,
    )  # fmt: skip
    data.propensities = input_propensities(
        specs, data, eval_user_ids=aligned.user_ids, item_ids=lambda: aligned.item_ids,
        truth=aligned.truth, train=aligned.train, predictions=aligned.predictions_table, given=propensities,
        mar_sample=mar_sample,
    )  # fmt: skip
    per_user: dict[str, np.ndarray] = {"user": aligned.user_ids}
    summary: dict[str, float] = {}
    scored: dict[str, int] = {}
    for label, spec in specs:
        values = None
        if spec.kind != "system":
            values = per_user[label] = spec.per_user(data)
            scored[label] = int(np.count_nonzero(~np.isnan(values)))
        summary[label] = spec.compute(data, values)
    conventions = Conventions(
        threshold=relevance.threshold,
        negative_threshold=relevance.negative_threshold,
        empty_users=empty_users,
        tie_break=aligned.tie_break,
        convention=preset,
        aggregation={label: spec.aggregation for label, spec in specs},
        users_evaluated=len(aligned.users),
        users_scored=scored,
        users_dropped_not_in_truth=aligned.users_dropped,
        users_without_list=aligned.users_without_list,
        cold_start=policy,
        users_cold=users_cold,
        users_cold_without_list=cold_without_list,
        estimators={label: estimator_of(spec) for label, spec in specs if spec.kind != "system"},
        # what each metric string (aliases as typed) resolved to: the canonical metric and every parameter
        metrics={label: _resolved(spec) for label, spec in specs},
    )
    result = EvaluationResult(per_user, summary, conventions)
    _log.info("evaluate: %d metrics computed over %d users", len(specs), len(aligned.users))
    if barrier is not None:
        result.overfitting = _check_barrier(result, specs, barrier)
    if group_table is not None:
        from receval.stats.groups import align_groups, group_gaps

        where = "the evaluated users"
        groups = align_groups(aligned.user_ids, group_table, unknown_group=unknown_group, where=where)
        result.groups = group_gaps(result.per_user, groups)
    return result


def check_cold_start(cold_start: object, train: object) -> ColdStart:
    """The cold-start policy ``cold_start`` (:func:`receval.vocabulary.cold_start_policy`), checked against ``train``.

    ``exclude`` and ``fallback`` need the training data: without it no user can be told cold.

    Returns
    -------
    ColdStart
        The policy's name.

    Examples
    --------
    >>> check_cold_start("Exclude", train=[("u", "i")])
    'exclude'
    >>> check_cold_start("fallback", train=None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: cold_start='fallback' needs the training data ...: pass train=
    """
    policy = cold_start_policy(cold_start)
    if policy != "empty" and train is None:
        raise ConfigError(
            f"cold_start={policy!r} needs the training data to tell cold users (truth users without a training "
            "rating): pass train=",
            parameters=["cold_start", "train"],
        )
    return policy


def _apply_cold_start(
    aligned: Aligned, policy: ColdStart, needed: int | None
) -> tuple[Aligned, int | None, int | None]:
    """The aligned data after the cold-start policy, the number of cold users and of those without a list.

    Cold: an evaluated user with no row in the training data (None, None without it).
    """
    if aligned.train_rows is None:
        return aligned, None, None
    cold = np.diff(aligned.train_rows.indptr) == 0
    users_cold = int(cold.sum())
    if aligned.users_without_list is None:  # rating predictions only: there are no lists
        return (_keep_users(aligned, ~cold) if policy == "exclude" and users_cold else aligned), users_cold, None
    without = (aligned.rankings < 0).all(axis=1)
    cold_without_list = int((cold & without).sum())
    if policy == "exclude" and users_cold:
        aligned = _keep_users(aligned, ~cold)
    elif policy == "fallback" and cold_without_list:
        width = needed or aligned.rankings.shape[1]
        if not width:
            raise ConfigError(
                "cold_start='fallback' cannot tell how long the fallback list is: no user has a list and no metric "
                "has a cutoff; give a metric with @k",
                parameters=["cold_start"],
            )
        assert aligned.train_all is not None  # train_rows is its rows
        from receval.cold_start import fallback_items

        counts = np.bincount(aligned.train_all.indices, minlength=aligned.train_all.shape[1])  # ratings per item
        items = fallback_items(counts, aligned.item_ids, width)
        rankings = np.full((len(aligned.users), width), -1, dtype=aligned.rankings.dtype)
        rankings[:, : aligned.rankings.shape[1]] = aligned.rankings
        rankings[cold & without, : len(items)] = items
        aligned = replace(aligned, rankings=rankings,
                          users_without_list=int(np.count_nonzero((rankings < 0).all(axis=1))))  # fmt: skip
    return aligned, users_cold, cold_without_list


def _keep_users(aligned: Aligned, keep: np.ndarray) -> Aligned:
    """``aligned`` on the users where ``keep`` holds (every per-user table; the catalogue is unchanged)."""
    predictions = aligned.predictions
    if predictions is not None:
        rows, ratings, values = predictions
        kept = keep[rows]
        predictions = ((np.cumsum(keep) - 1)[rows[kept]], ratings[kept], values[kept])
    rankings = aligned.rankings[keep]
    return replace(
        aligned,
        users=aligned.users[keep],
        rankings=rankings,
        truth_rows=aligned.truth_rows[keep],
        train_rows=None if aligned.train_rows is None else aligned.train_rows[keep],
        predictions=predictions,
        users_without_list=None if aligned.users_without_list is None
        else int(np.count_nonzero((rankings < 0).all(axis=1))),
    )  # fmt: skip


def check_depth(specs: MetricList, k: int) -> None:
    """Refuse a metric whose cutoff reads deeper than the lists ``evaluate_model`` makes (``k`` items).

    recall@50 of 10-item lists would be recall@10 under another name: a number that looks right and is not.
    Sampled metrics rank their own candidates and error metrics read no list.

    Returns
    -------
    None
        Or raises a :class:`~receval.errors.ConfigError` naming the deepest such metric (``parameters``: ``k``).

    >>> check_depth(MetricList(["ndcg@10", "rmse", "map"]), 10)
    >>> check_depth(MetricList(["ndcg@10", "recall@50"]), 10)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: recall@50 reads the top 50 of each list, but the lists hold k = 10 items: ...
    """
    deep = [(s.k, label) for label, s in specs if s.kind != "error" and s.sampled is None and (s.k or 0) > k]
    if deep:
        depth, label = max(deep)
        raise ConfigError(
            f"{label} reads the top {depth} of each list, but the lists hold k = {k} items: make k at least "
            f"{depth}, or cut the metric at {k}",
            parameters=["k"],
        )


def evaluate_model(
    model: Any,
    train: Interactions,
    test: Interactions,
    metrics: MetricList | Sequence[str | Metric] | str,
    *,
    k: int = 10,
    threshold: float | None = None,
    seed: int = 0,
    exclude_train: bool = True,
    users: Sequence[int] | np.ndarray | None = None,
    fitted: bool = False,
    seed_model: bool = True,
    negative_threshold: float | None = None,
    empty_users: Literal["skip", "zero"] = "skip",
    aspects: pd.DataFrame | None = None,
    barrier: MagicBarrier | None = None,
    propensities: PropensityModel | Mapping[str, PropensityModel] | pd.DataFrame | None = None,
    mar_sample: Interactions | pd.DataFrame | None = None,
    convention: str | None = None,
    cold_start: ColdStart = COLD_START_DEFAULT,
    candidates: Candidates | None = None,
) -> EvaluationResult:
    """Fit a model on ``train``, rank and predict for the test users, evaluate: the one-shot protocol.

    The protocol's rules, written once (the experiment runner, the demo, the
    studies and the command line all call this):

    - **Model**: unless ``fitted``, a fresh copy (:func:`receval.recommenders.clone`;
      the given model is left untouched) is fitted on ``train``; with ``seed_model``
      its ``seed`` parameter, when it has one, is set to ``seed``. With ``fitted=True``
      the model is used as is (already fitted on ``train``'s id space).
    - **Users evaluated**: the test users with at least one rating, restricted to
      ``users`` (user indices of the shared id space) when given.
    - **Lists**: the top ``k`` items by the model's scores
      (:func:`receval.recommenders.recommend`, ties broken by ``seed``), the user's
      training items excluded when ``exclude_train``. Skipped when only error metrics
      are asked.
    - **Cold users** (test users without a training rating) follow ``cold_start``, as
      ``receval recommend --cold-start`` and ``receval evaluate --cold-start`` treat
      them: ``"empty"`` (the default: no list, scored as an empty list), ``"exclude"``
      (left out of the evaluation) or ``"fallback"`` (the most-rated training items);
      the model makes no list for them (:mod:`receval.cold_start`).
    - **Error metrics** (RMSE, MAE) use ``predict`` on the evaluated test pairs; a
      model without ``predict`` (a pure ranker) gets NaN for them (summary and
      per-user), and ``conventions.not_applicable`` names them.
    - The lists are evaluated with :func:`evaluate` against the test ratings of those
      users, ``train`` given for the metrics that need it, and ``convention`` (a
      library's preset for every metric that names none). The lists are ranked by the
      model, ties in the seeded order above, so a preset's tie rule does not apply to
      them (``conventions.tie_break``: an item matrix as given).
    - **Sampled metrics** (``ndcg@10(sampled=100,correction=bv)``) rank each held-out
      positive against sampled negatives (:mod:`receval.evaluation.sampled`): the
      candidates are drawn once per design with ``seed``, before the model is fitted, and
      shared by every metric of that design — or are ``candidates`` (e.g. NCF's files,
      :func:`receval.evaluation.sampled.read_ncf_candidates`); the model scores only them
      (``score_items``); ``conventions.sampled`` records each metric's design. Their
      per-user values are NaN for a user without a positive test item.

    ``train`` and ``test`` must share one id space (as :mod:`receval.split` makes
    them).

    Returns
    -------
    EvaluationResult
        As :func:`evaluate` gives it (``summary``, ``per_user``, ``conventions``), and also
        the lists (``rankings``) and the predictions.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.recommenders import make
    >>> from receval.split import holdout
    >>> train, test = holdout(generate(60, 80, 1500, seed=0), test_fraction=0.2, seed=0)
    >>> res = evaluate_model(make("popularity"), train, test, ["precision@5", "rmse"], k=5, threshold=4)
    >>> res.rankings.shape == (res.conventions.users_evaluated, 5)
    True
    >>> import math; math.isnan(res.summary["rmse"]), res.conventions.not_applicable
    (True, ('rmse',))
    >>> res2 = evaluate_model(make("biases"), train, test, "rmse")
    >>> 0.5 < res2.summary["rmse"] < 2.0
    True
    """
    from receval.recommenders import clone, recommend

    k = check_count(k, "k")  # 0, -1 and True were 'the lists hold k = -1 items'; 10.5 was cut to 10 silently
    check_seed(seed)  # -1 was numpy's 'expected non-negative integer'
    if not fitted and (isinstance(model, type) or not callable(getattr(model, "fit", None))):
        raise ConfigError(f"evaluate_model: model must be a recommender object, e.g. "
                          f"receval.recommenders.make('popularity'); got {model!r}")  # fmt: skip
    specs = MetricList.of(metrics, convention)  # read once: evaluate and the sampled plan take the list
    preset = specs.convention
    policy = cold_start_policy(cold_start)
    _check_split(train, test, "evaluate_model")
    check_depth(specs, k)
    plan = _sampled_plan(specs, train, test, candidates=candidates, seed=seed, threshold=threshold, users=users,
                         cold_start=policy)  # fmt: skip
    rest = [(label, spec) for label, spec in specs if spec.sampled is None]
    if not fitted:
        t0 = time.perf_counter()
        model = clone(model, seed=seed if seed_model else None).fit(train)
        _log.info("%s fitted on %d ratings in %.2f s", type(model).__name__, train.n_ratings, time.perf_counter() - t0)
    truth = test
    if users is not None:
        wanted = np.zeros(test.n_users, dtype=bool)
        wanted[np.asarray(users, dtype=np.int64)] = True
        truth = test.subset(wanted[test.users])
    eval_users = np.unique(truth.users)
    errors = [label for label, spec in rest if spec.kind == "error"]
    ranking = [label for label, spec in rest if spec.kind != "error"]
    skipped = errors if errors and not hasattr(model, "predict") else []
    own = {label for label, _ in rest} - set(skipped)
    asked = specs.subset(own)

    items = None
    if ranking:
        items, _ = recommend(model, eval_users, int(k), exclude=train if exclude_train else None, seed=seed,
                             cold_start=policy, train=train)  # fmt: skip
    predictions = _predictions(model, truth) if errors and not skipped else None
    if asked:
        result = evaluate(
            items,
            truth,
            asked,
            train=train,
            threshold=threshold,
            negative_threshold=negative_threshold,
            aspects=aspects,
            predictions=predictions,
            empty_users=empty_users,
            users=eval_users if items is not None else None,
            barrier=barrier,
            propensities=propensities,
            mar_sample=mar_sample,
            cold_start=policy,
        )
    elif rest:  # only error metrics, for a model that cannot predict
        relevance = test.scale.relevance(threshold, negative_threshold)
        cold = np.bincount(train.users, minlength=train.n_users)[eval_users] == 0
        if policy == "exclude":
            eval_users = eval_users[~cold]
        conventions = Conventions(relevance.threshold, relevance.negative_threshold, empty_users,
                                  users_evaluated=len(eval_users), convention=preset, cold_start=policy,
                                  users_cold=int(cold.sum()))  # fmt: skip
        result = EvaluationResult({"user": truth.user_ids[eval_users]}, {}, conventions)
    if plan is not None:
        result = plan.run(model) if not rest else _with_sampled(result, plan.run(model))
    for label in skipped:
        result.per_user[label] = np.nan
    order = [label for label, _ in specs]
    result.summary = {label: result.summary.get(label, float("nan")) for label in order}
    result.per_user = result.per_user[["user", *(label for label in order if label in result.per_user.columns)]]
    result.conventions = replace(result.conventions, not_applicable=tuple(skipped))
    if items is not None:  # the model made no list for a cold user: those lists are the policy's
        warm = np.bincount(train.users, minlength=train.n_users)[eval_users] > 0
        result.conventions = replace(result.conventions, users_cold_without_list=int((~warm).sum()))
        if policy == "exclude":  # one row per row of per_user: the warm users
            items = items[warm]
    result.rankings = items
    result.predictions = predictions
    return result


def _sampled_plan(
    specs: MetricList,
    train: Interactions,
    test: Interactions,
    *,
    candidates: Candidates | None,
    seed: int,
    threshold: float | None,
    users: Sequence[int] | np.ndarray | None,
    cold_start: ColdStart,
) -> SampledPlan | None:
    """The sampled metrics' candidates, checked and drawn before the model is fitted (None without sampled
    metrics; ``candidates`` without one is an error)."""
    sampled = [(label, spec) for label, spec in specs if spec.sampled is not None]
    if sampled:
        from receval.evaluation.sampled import plan_sampled

        return plan_sampled(sampled, train, test, candidates=candidates, seed=seed, threshold=threshold, users=users,
                            cold_start=cold_start)  # fmt: skip
    if candidates is not None:
        raise MetricError(
            "candidates= are ranked by sampled metrics, and none is asked; add one with their size, e.g. "
            f"ndcg@10(sampled={candidates.n})",
            parameters=["candidates"],
        )
    return None


def _predictions(model: Any, truth: Interactions) -> pd.DataFrame:
    """The model's rating predictions of the truth's pairs, ``user, item, prediction`` in original ids."""
    import pandas as pd

    return pd.DataFrame(
        {
            "user": truth.user_ids[truth.users],
            "item": truth.item_ids[truth.items],
            "prediction": np.asarray(model.predict(truth.users, truth.items), dtype=np.float64),
        }
    )


def _with_sampled(result: EvaluationResult, sampled: EvaluationResult) -> EvaluationResult:
    """``result`` with the sampled metrics' summary, per-user columns (NaN for a user without a positive) and
    conventions added."""
    c, extra = result.conventions, sampled.conventions
    result.per_user = result.per_user.merge(sampled.per_user, on="user", how="left")
    result.summary = {**result.summary, **sampled.summary}
    result.conventions = replace(
        c,
        aggregation={**c.aggregation, **extra.aggregation},
        users_scored={**c.users_scored, **extra.users_scored},
        metrics={**c.metrics, **extra.metrics},
        sampled=extra.sampled,
    )
    return result


def _check_barrier(result: EvaluationResult, specs, barrier: MagicBarrier) -> OverfittingCheck:
    label = next((label for label, spec in specs if spec.name == "rmse"), None)
    if label is None:
        raise MetricError("barrier= compares an RMSE with the magic barrier: add 'rmse' to the metrics")
    from receval.stats.barrier import check_overfitting

    per_user = result.per_user.set_index("user")[label].dropna()
    check = check_overfitting(per_user, barrier)
    if check.flagged:
        warnings.warn(check.message, RuntimeWarning, stacklevel=3)
    return check


def _thresholds(
    specs: Sequence[tuple[str, Metric]], threshold: float | None, negative_threshold: float | None, aligned: Aligned
) -> Relevance:
    """λ and the negative threshold (the truth scale's :meth:`~receval.data.interactions.RatingScale.relevance`),
    each checked against the scale only when a metric asked reads it.

    A metric reads λ unless it sets its own ``threshold=``, and the negative
    threshold unless it sets its own ``negative_threshold=`` (which defaults to λ).
    """
    scale = aligned.truth.scale
    reads_thr = any(s.definition.needs_threshold and "threshold" in s.definition.defaults
                    and s.params.get("threshold") is None for _, s in specs)  # fmt: skip
    reads_neg = any(s.definition.needs_threshold and "negative_threshold" in s.definition.defaults
                    and s.params.get("negative_threshold") is None for _, s in specs)  # fmt: skip
    read = reads_thr or (reads_neg and negative_threshold is None)
    # above the truth's top grade no item is positive: NaN over 0 users (below its lowest, every rated item is);
    # a threshold no metric reads is still a number (it is reported in the conventions)
    if threshold is not None:
        threshold = check_threshold(threshold, scale.low, scale.high, "threshold", below=True) if read else (
            check_number(threshold, "threshold"))  # fmt: skip
    if negative_threshold is not None:
        negative_threshold = check_number(negative_threshold, "negative_threshold")
    relevance = scale.relevance(threshold, negative_threshold)
    thr, neg = relevance.threshold, relevance.negative_threshold
    if read and threshold is None and thr > scale.high:
        raise MetricError(
            f"the truth's ratings {scale.low:g}..{scale.high:g} are all below the default relevance threshold "
            f"{thr:g} (1, or the smallest positive rating of a stepped scale below 1): give threshold=",
            parameters=["threshold"],
        )
    if reads_neg and (reads_thr or threshold is not None) and neg > thr:  # given or read, λ must not sit below it
        raise MetricError(
            f"negative_threshold {neg:g} is above threshold {thr:g}: an item would be both positive and "
            "negative; give negative_threshold ≤ threshold"
        )
    for label, spec in specs:
        if spec.definition.needs_negatives:
            if not aligned.graded:
                raise MetricError(f"metric {label!r} needs negative ratings, but the truth has no rating column")
            if threshold is None and negative_threshold is None and spec.params.get("negative_threshold") is None:
                raise MetricError(
                    f"metric {label!r} counts negatives: give threshold= (and optionally negative_threshold=), "
                    "e.g. threshold=4 on a 1-5 scale, so that ratings below it are negative",
                    parameters=["threshold", "negative_threshold"],
                )
    return relevance


def _needed_width(specs: Sequence[tuple[str, Metric]]) -> int | None:
    ks = [spec.k for _, spec in specs if spec.kind != "error"]
    if not ks or any(k is None for k in ks):
        return None
    return max(k for k in ks if k is not None)


def _list_only(spec: Metric) -> bool:
    """Whether a metric reads of a listed item only whether the truth rates it (its run's items need no identity)."""
    return spec.definition.list_only and spec.params.get("estimator", "naive") == "naive"


def _check_needs(specs: Sequence[tuple[str, Metric]], aligned: Aligned) -> None:
    for label, spec in specs:
        d = spec.definition
        if d.needs_grades and not aligned.graded and spec.params.get("gain", "linear") != "binary":
            raise MetricError(
                f"metric {label!r} needs graded truth but the truth has no rating column; "
                f"add ratings or use {spec.name}@{spec.k}(gain=binary)"
            )
        if d.needs_train and aligned.train_all is None:
            raise MetricError(f"metric {label!r} needs training data: pass train=", parameters=["train"])
        if d.needs_aspects and aligned.aspects is None:
            raise MetricError(f"metric {label!r} needs item aspects: pass aspects=", parameters=["aspects"])
        if d.needs_predictions and aligned.predictions is None:
            raise MetricError(
                f"metric {label!r} needs rating predictions: pass predictions=", parameters=["predictions"]
            )
        if spec.kind != "error" and aligned.rankings.shape[1] == 0 and aligned.predictions is not None:
            raise MetricError(f"metric {label!r} needs recommendation lists; only predictions were given")


# the entry points' public home is the package that re-exports them (`receval.evaluation.evaluate_model`, as
# scripts import it): their __module__ says so, for pickling by reference, help() and the doctests' collection
for _entry in (evaluate, evaluate_model, check_cold_start):
    _entry.__module__ = "receval.evaluation"
