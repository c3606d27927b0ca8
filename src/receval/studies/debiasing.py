"""Debiased evaluation study: do the estimators recover what a MAR test set says?

For a data set with a missing-not-at-random (MNAR) part and a missing-at-random (MAR)
ground truth — CM100k (the ratings of tracks users already knew, ``familiar``, against
all ratings of randomly shown tracks) or generated data (the observed ratings against
the complete rating matrix) — every system is trained once, its top-k lists are
evaluated on the MNAR test ratings with each estimator
(:mod:`receval.metrics.debiased`) and on the MAR test ratings, and the study reports
per system and metric the estimate, the MAR value, the error, and per estimator the
mean absolute error and Kendall τ between its ranking of the systems and the MAR
ranking. With Recall and Fallout among the metrics it also gives τ(Recall, Fallout)
per estimator: on MAR data the two agree, on MNAR data they can invert (Sánchez &
Bellogín, RecSys 2018) — the question is which estimator restores the agreement.

The MAR value of a metric is its IPS estimate on the MAR test set with the uniform
propensity ``|MAR test| / (users × items − training pairs)``, i.e. its estimate of the complete-data
value, the target of the estimators: for Recall, Fallout and the error metrics this is
the plain value on the MAR test; precision, nDCG and AP are put on the scale of the
complete data (a sparse test set deflates their plain values).

Examples
--------
>>> from receval.data.synthetic import generate_with_truth
>>> from receval.recommenders import make
>>> truth = generate_with_truth(80, 60, 1500, n_aspects=0, sampling="bernoulli", keep_complete=True, seed=0)
>>> parts = generated_parts(truth, test_fraction=0.3, seed=0)
>>> systems = {"popularity": make("popularity"), "random": make("random")}
>>> study = debiasing_study(parts, systems, metrics=["recall@10"], estimators=["naive", "ips", "snips"], threshold=4)
>>> sorted(study.summary("recall@10")["kendall_tau"])  # ips: known propensities, ips[popularity]: fitted
['ips', 'ips[popularity]', 'naive', 'snips', 'snips[popularity]']
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from receval import jsontext
from receval.data.interactions import Interactions, distinct, pair_keys
from receval.data.synthetic import SyntheticData
from receval.errors import ConfigError, DataError
from receval.evaluation import evaluate, evaluate_model
from receval.metrics import parse_metric
from receval.metrics.debiased import ESTIMATORS, HT_METRICS
from receval.progress import Progress, progress_to
from receval.split import holdout
from receval.stats.propensity import (
    KnownPropensity,
    PropensityModel,
    observed_ratings,
    resolve_models,
    wanted_models,
)
from receval.stats.significance import rank_agreement
from receval.validate import check_distinct

_log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_ESTIMATORS",
    "DEFAULT_METRICS",
    "DebiasParts",
    "DebiasStudy",
    "cm100k_parts",
    "debiasing_study",
    "default_systems",
    "generated_parts",
]

DEFAULT_METRICS = ("recall@10", "precision@10", "ndcg@10", "map@10", "fallout@10", "rmse", "mae")
DEFAULT_ESTIMATORS = ESTIMATORS


@dataclass(frozen=True)
class DebiasParts:
    """The pieces of a debiasing study over one id space.

    Attributes
    ----------
    train : Interactions
        What the systems are trained on (MNAR ratings).
    mnar_test, mar_test : Interactions
        The observed (MNAR) test ratings and the MAR ground truth of the same users.
    mar_sample : Interactions or None
        MAR ratings outside the test (for naive-bayes propensities and ``wtd``).
    known : DataFrame or None
        Exact propensities ``user, item, propensity`` of the MNAR test pairs (generated data).
    name : str
    """

    train: Interactions
    mnar_test: Interactions
    mar_test: Interactions
    mar_sample: Interactions | None = None
    known: pd.DataFrame | None = None
    name: str = ""


def cm100k_parts(data: Interactions, *, test_fraction: float = 0.2, seed: int = 0) -> DebiasParts:
    """CM100k: a random holdout of all ratings; the familiar ratings are the MNAR part.

    The systems train on the familiar training ratings; the MNAR test is the familiar
    test ratings, the MAR truth all test ratings (tracks were shown at random), and the
    other training ratings are the MAR sample.

    Returns
    -------
    DebiasParts
        ``train``, ``mnar_test``, ``mar_test`` and ``mar_sample`` over one id space (no
        known propensities).

    Examples
    --------
    >>> familiar = [True, False, True, True, False, True, True, False]
    >>> d = Interactions.from_arrays([0, 0, 1, 1, 2, 2, 3, 3], [0, 1, 0, 1, 0, 1, 0, 1], [4, 3, 2, 1, 4, 4, 3, 2],
    ...                              extra={"familiar": familiar})
    >>> parts = cm100k_parts(d, test_fraction=0.5)
    >>> parts.train.n_ratings, parts.mnar_test.n_ratings, parts.mar_test.n_ratings
    (2, 3, 4)
    """
    if "familiar" not in data.extra:
        raise DataError(
            f"{data.name or 'the data'} has no 'familiar' column: the debiasing study needs an MNAR part and a MAR "
            "ground truth (load CM100k with format cm100k, or pass generated data)"
        )
    if not np.asarray(data.extra["familiar"], dtype=bool).any():  # else 'cannot fit ... on empty training data'
        raise DataError(
            f"{data.name or 'the data'}: no rating is flagged familiar, so the MNAR part the systems train on is "
            "empty; flag the familiar (MNAR) ratings 1"
        )
    train_all, test = holdout(data, test_fraction=test_fraction, seed=seed)
    familiar = lambda part: part.subset(np.asarray(part.extra["familiar"], dtype=bool))  # noqa: E731
    return DebiasParts(
        train=familiar(train_all),
        mnar_test=familiar(test),
        mar_test=test,
        mar_sample=train_all,
        name=data.name or "cm100k",
    )


def generated_parts(truth: SyntheticData, *, test_fraction: float = 0.2, seed: int = 0) -> DebiasParts:
    """Generated data: a holdout of the observed ratings; the complete ratings of the other pairs are the MAR truth.

    Needs ``generate_with_truth(..., keep_complete=True)``. The known propensity of a
    test pair is ``P(observed and held out | not in training) = f p / (1 − (1 − f) p)``.

    Returns
    -------
    DebiasParts
        ``train`` and ``mnar_test`` (the holdout of the observed ratings), ``mar_test``
        (every pair outside ``train``, rated) and the ``known`` propensities.

    Examples
    --------
    >>> from receval.data.synthetic import generate_with_truth
    >>> parts = generated_parts(generate_with_truth(n_users=40, n_items=30, n_ratings=300, keep_complete=True))
    >>> parts.train.n_ratings, parts.mnar_test.n_ratings, parts.mar_test.n_ratings, parts.known is not None
    (240, 60, 960, True)
    """
    if truth.complete is None:
        raise ConfigError("generated data needs its complete ratings: generate_with_truth(..., keep_complete=True)")
    train, test = holdout(truth.data, test_fraction=test_fraction, seed=seed)
    complete = truth.complete
    n_items = complete.n_items
    in_train = np.zeros(complete.n_users * n_items, dtype=bool)
    in_train[train.users.astype(np.int64) * n_items + train.items] = True
    mar_test = complete.subset(~in_train[complete.users.astype(np.int64) * n_items + complete.items])
    table = truth.propensity_table()
    p = table["propensity"].to_numpy()
    f = float(test_fraction)
    table = table.assign(propensity=f * p / (1.0 - (1.0 - f) * p))
    return DebiasParts(train=train, mnar_test=test, mar_test=mar_test, known=table, name=truth.data.name or "synthetic")


def default_systems() -> dict[str, object]:
    """The cyclic study's non-personalised configurations plus user-kNN, item-kNN, MF and HKV.

    Returns
    -------
    dict of str to object
        Name to unfitted model with its default parameters (:func:`debiasing_study` seeds
        each clone).

    Examples
    --------
    >>> sorted(default_systems())
    ['average', 'hkv', 'item-knn', 'mf', 'popularity', 'random', 'user-knn']
    """
    from receval.recommenders import make

    names = ("random", "popularity", "average", "user-knn", "item-knn", "mf", "hkv")
    return {name: make(name) for name in names}


@dataclass
class DebiasStudy:
    """What :func:`debiasing_study` returns.

    Attributes
    ----------
    estimates : DataFrame
        ``system, metric, estimator, propensity, estimate, se, truth, error``: one row per
        system, metric and estimator (``se``: standard error over users; ``truth``: the
        MAR value; ``error = estimate − truth``).
    kendall : DataFrame
        ``metric, estimator, kendall_tau, mae``: τ between the estimator's and the MAR
        ranking of the systems, and the mean absolute error over systems.
    recall_fallout : DataFrame
        ``estimator, kendall_tau``: τ(Recall, Fallout) over the systems (``mar`` = the MAR
        truth), Fallout lower-is-better, so +1 means the two metrics agree.
    conventions : dict
    """

    estimates: pd.DataFrame
    kendall: pd.DataFrame
    recall_fallout: pd.DataFrame
    conventions: dict[str, object] = field(default_factory=dict)

    def summary(self, metric: str = "recall@10") -> dict[str, dict[str, float | None]]:
        """``{"kendall_tau": {estimator: τ}, "error": {estimator: MAE}}`` for one metric."""
        rows = self.kendall[self.kendall["metric"] == metric]
        if rows.empty:
            raise ConfigError(f"no metric {metric!r} in the study; it has {sorted(self.kendall['metric'].unique())}")
        return {
            "kendall_tau": {r.estimator: jsontext.plain(r.kendall_tau) for r in rows.itertuples()},
            "error": {r.estimator: jsontext.plain(r.mae) for r in rows.itertuples()},
        }


def _label(metric: str, estimator: str, propensity: str | None) -> str:
    base = parse_metric(metric)
    if estimator == "naive":
        return str(base)
    extra = f"estimator={estimator}" + (f",propensity={propensity}" if propensity else "")
    text = str(base)
    return f"{text[:-1]},{extra})" if text.endswith(")") else f"{text}({extra})"


def _applies(metric: str, estimator: str, has_mar: bool) -> bool:
    m = parse_metric(metric)
    if estimator == "dr":
        return m.kind == "error"
    if estimator in ("ips", "snips"):
        return m.name in HT_METRICS
    if estimator == "wtd":
        return has_mar
    return True


def debiasing_study(
    parts: DebiasParts,
    systems: Mapping[str, object],
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    estimators: Sequence[str] = DEFAULT_ESTIMATORS,
    propensities: Sequence[str] | None = None,
    threshold: float,
    negative_threshold: float | None = None,
    k: int = 10,
    seed: int = 0,
    progress: Progress | None = None,
) -> DebiasStudy:
    """Train every system on ``parts.train`` and compare each estimator on the MNAR test with the MAR truth.

    Parameters
    ----------
    parts
        From :func:`cm100k_parts` or :func:`generated_parts`.
    systems
        Name -> unfitted recommender (each is cloned with ``seed`` and fitted once).
    metrics, estimators
        Metric strings without estimator parameters, and estimators; pairs with no
        form (``dr`` for ranking metrics, ``ips`` for MRR, ``wtd`` without a MAR sample)
        are skipped.
    propensities
        The propensity models of ``ips``, ``snips``, ``dr`` and ``stratified``; the first
        gives the plain labels (``ips``), the others labels like ``ips[naive-bayes]``. By
        default ``known`` and ``popularity`` when the parts carry exact propensities, else
        ``popularity``, ``logistic`` and (with a MAR sample) ``naive-bayes``.
    threshold, negative_threshold
        Relevance threshold λ (and the negative threshold for Fallout).
    progress
        Called as ``progress(systems_done, systems, "debias systems")`` after each system
        (default: the active callback of :func:`receval.progress.reporting`).

    Returns
    -------
    DebiasStudy
        Each system's estimate by each estimator beside the MAR truth (``estimates``),
        and how well each estimator ranks the systems (``kendall``, ``recall_fallout``).

    Examples
    --------
    >>> from receval.data.synthetic import generate_with_truth
    >>> from receval.recommenders import make
    >>> parts = generated_parts(generate_with_truth(n_users=40, n_items=30, n_ratings=300, keep_complete=True))
    >>> study = debiasing_study(parts, {"pop": make("popularity"), "rand": make("random")}, metrics=["precision@5"],
    ...                         estimators=["naive", "ips"], threshold=4)
    >>> study.estimates.loc[study.estimates["system"] == "pop", "estimator"].tolist()
    ['naive', 'ips', 'ips[popularity]']
    """
    from receval.recommenders import clone

    has_mar = parts.mar_sample is not None
    if propensities is None:
        propensities = ["known", "popularity"] if parts.known is not None else ["popularity", "logistic"]
        propensities += ["naive-bayes"] if has_mar else []
    models = check_distinct(propensities, "propensities")  # a repeated one gave arrays of two lengths
    if not models:
        raise ConfigError("give at least one propensity model, e.g. propensities=['popularity']")
    estimators = check_distinct(estimators, "estimators")
    plan = []
    for metric in metrics:
        for est in estimators:
            if not _applies(metric, est, has_mar):
                continue
            if est in ("ips", "snips", "dr", "stratified"):
                plan += [
                    (metric, est if j == 0 else f"{est}[{model}]", _label(metric, est, model))
                    for j, model in enumerate(models)
                ]
            else:
                plan.append((metric, est, _label(metric, est, None)))
    if not plan:
        raise ConfigError("no (metric, estimator) pair applies; give ranking or error metrics and estimators")
    mar_n_pairs = len(distinct(pair_keys(parts.mar_test.users, parts.mar_test.items, parts.mar_test.n_items)))
    # every pair outside the training ratings could be a MAR test pair (the population of known propensities)
    n_train = len(distinct(pair_keys(parts.train.users, parts.train.items, parts.train.n_items)))
    uniform = parts.mar_test.n_users * parts.mar_test.n_items - n_train
    mar_table = pd.DataFrame(
        {
            "user": parts.mar_test.user_ids[parts.mar_test.users],
            "item": parts.mar_test.item_ids[parts.mar_test.items],
            "propensity": mar_n_pairs / uniform,
        }
    ).drop_duplicates(["user", "item"])
    parsed = {m: parse_metric(m) for m in metrics}  # each metric string read once, for every system
    truth_labels = {m: _label(m, "ips", "known") if parsed[m].name in HT_METRICS else m for m in metrics}
    # the propensity models are fitted on the training and MNAR test ratings, the same for every system: once
    # (CM100k's logistic model took 8 s a fit, five systems 40 s)
    given: dict[str, PropensityModel] = {} if parts.known is None else {"known": KnownPropensity(parts.known).fit()}
    observed = observed_ratings(parts.mnar_test, parts.train)
    label_specs = {label: parse_metric(label) for _, _, label in plan}  # read once, for every system
    rows = []
    notify = progress_to(progress)
    notify(0, len(systems), "debias systems")
    for done, (name, system) in enumerate(systems.items(), 1):
        model = clone(system, seed=seed).fit(parts.train)
        can_predict = hasattr(model, "predict")
        mar_metrics = [truth_labels[m] for m in metrics if can_predict or parsed[m].kind != "error"]
        mar = evaluate_model(
            model,
            parts.train,
            parts.mar_test,
            mar_metrics,
            k=k,
            threshold=threshold,
            negative_threshold=negative_threshold,
            seed=seed,
            fitted=True,
            propensities=mar_table,
        )
        users = np.unique(parts.mar_test.users)
        asked = [(m, e, label) for m, e, label in plan if can_predict or parsed[m].kind != "error"]
        predictions = None
        if can_predict and any(parsed[m].kind == "error" for m, _, _ in asked):
            t = parts.mnar_test
            predictions = pd.DataFrame(
                {
                    "user": t.user_ids[t.users],
                    "item": t.item_ids[t.items],
                    "prediction": np.asarray(model.predict(t.users, t.items), dtype=np.float64),
                }
            )
        labels = [label for _, _, label in asked]
        missing = [n for n in wanted_models([(label, label_specs[label]) for label in labels]) if n not in given]
        given.update(resolve_models({n: {} for n in missing}, observed, mar=parts.mar_sample))
        mnar = evaluate(
            mar.rankings,
            parts.mnar_test,
            labels,
            users=users,
            train=parts.train,
            threshold=threshold,
            negative_threshold=negative_threshold,
            predictions=predictions,
            propensities=given,
            mar_sample=parts.mar_sample,
        )
        recorded = mnar.conventions.estimators  # {label: estimator_of(metric)}
        assert isinstance(recorded, dict)
        for metric, est, label in asked:
            values = mnar.per_user[label].to_numpy(dtype=np.float64)
            values = values[np.isfinite(values)]
            se = float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")
            truth = mar.summary[truth_labels[metric]]
            estimate = mnar.summary[label]
            rows.append(
                {
                    "system": name,
                    "metric": metric,
                    "estimator": est,
                    "propensity": recorded[label]["propensity"],
                    "estimate": estimate,
                    "se": se,
                    "truth": truth,
                    "error": estimate - truth,
                }
            )
        _log.info("debias: %s fitted and its %d estimates computed", name, len(asked))
        notify(done, len(systems), "debias systems")
    estimates = pd.DataFrame(rows)
    return DebiasStudy(
        estimates=estimates,
        kendall=_kendall(estimates),
        recall_fallout=_recall_fallout(estimates),
        conventions={
            "data": parts.name,
            "propensities": models,
            "threshold": threshold,
            "negative_threshold": parts.mar_test.scale.relevance(threshold, negative_threshold).negative_threshold,
            "k": k,
            "seed": seed,
            "systems": list(systems),
            "truth": "IPS value on the MAR test, uniform propensity |MAR test| / (users x items - training pairs)",
        },
    )


def _kendall(estimates: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (metric, est), group in estimates.groupby(["metric", "estimator"], sort=False):
        tau = rank_agreement(group["estimate"].to_numpy(), group["truth"].to_numpy())["kendall_tau"]
        out.append({"metric": metric, "estimator": est, "kendall_tau": tau, "mae": float(group["error"].abs().mean())})
    return pd.DataFrame(out, columns=["metric", "estimator", "kendall_tau", "mae"])


def _recall_fallout(estimates: pd.DataFrame) -> pd.DataFrame:
    recall = [m for m in estimates["metric"].unique() if parse_metric(m).name == "recall"]
    fallout = [m for m in estimates["metric"].unique() if parse_metric(m).name == "fallout"]
    if not recall or not fallout:
        return pd.DataFrame(columns=["estimator", "kendall_tau"])
    r = estimates[estimates["metric"] == recall[0]].set_index(["estimator", "system"])
    f = estimates[estimates["metric"] == fallout[0]].set_index(["estimator", "system"])
    out = []
    first = r.xs(r.index.get_level_values(0)[0], level="estimator")
    systems = first.index
    truth_r = first["truth"].to_numpy()
    truth_f = f.xs(f.index.get_level_values(0)[0], level="estimator").loc[systems, "truth"].to_numpy()
    lower = (True, False)
    tau_mar = rank_agreement(truth_r, truth_f, higher_is_better=lower)["kendall_tau"]
    out.append({"estimator": "mar", "kendall_tau": tau_mar})
    for est in r.index.get_level_values(0).unique():
        if est not in f.index.get_level_values(0):
            continue
        a = r.xs(est, level="estimator").loc[systems, "estimate"].to_numpy()
        b = f.xs(est, level="estimator").loc[systems, "estimate"].to_numpy()
        out.append({"estimator": est, "kendall_tau": rank_agreement(a, b, higher_is_better=lower)["kendall_tau"]})
    return pd.DataFrame(out, columns=["estimator", "kendall_tau"])
