"""Easy and difficult users by coherence, and the five training/test models (Said & Bellogín, UMUAI 2018, §5).

For a share ``p``, the ``p`` least coherent users are *difficult*, the rest *easy*.
Training and test data split into ``Tr_e, Tr_d, Te_e, Te_d`` and five models are
scored by RMSE (the paper's Table 3):

=========  =================  ==============
model      training           test
=========  =================  ==============
All-All    Tr_e ∪ Tr_d        Te_e ∪ Te_d
All-Easy   Tr_e ∪ Tr_d        Te_e
All-Diff   Tr_e ∪ Tr_d        Te_d
Easy-Easy  Tr_e               Te_e
Diff-Diff  Tr_d               Te_d
=========  =================  ==============

:func:`coherence_split_experiment` runs per-user k-fold cross-validation, computing
coherence on each fold's *training* data, and reports each model's RMSE relative to
All-All at the same ``p`` in %: ``100 (E - E_AllAll) / E_AllAll``.

Conventions (stated because the paper leaves them open or contradicts itself):

* RMSE pools the squared errors of all folds (each rating is tested once).
* ``rating_ratio`` is the difficult users' share of all ratings. The paper's formula
  ``|Tr_d| / |Tr_e ∪ Tr_d ∪ Te_e ∪ Te_d|`` cannot exceed ``(k-1)/k`` = 0.8 with 5 folds,
  yet its Table 6 prints 0.94 at ``p = 0.9``; the share of all ratings matches the table
  (with per-user folds it also equals ``|Tr_d| / |Tr_e ∪ Tr_d|``).
* ``Avg`` weights All-Easy and All-Diff by their numbers of test users (the paper's
  text); ``avg="equal"`` takes the plain mean of the two relative errors, which is
  what the paper's Table 6 column matches (to within 0.06 points).
* Users whose coherence is undefined in a fold (no rated item with an attribute) stay
  in the All training data but are in neither group and are not tested (counted in
  ``n_undefined``). Predictions a model returns as NaN are left out and counted
  (``coverage``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.progress import Progress, progress_to
from receval.stats.coherence import GAMMAS, coherence

_log = logging.getLogger(__name__)

__all__ = [
    "AVERAGES",
    "MODELS",
    "PAPER_MODELS",
    "difficult_users",
    "coherence_partitions",
    "CoherenceSplitResult",
    "coherence_split_experiment",
    "paper_models",
]

AVERAGES: tuple[str, ...] = ("users", "equal")
"""The ``Avg`` column of the coherence split: weighted by the users of each part (the paper's text), or the plain
mean of the four models (the numbers of its tables)."""
MODELS: tuple[str, ...] = ("All-All", "All-Easy", "All-Diff", "Easy-Easy", "Diff-Diff")
_COMPARED = ("All-Diff", "All-Easy", "Diff-Diff", "Easy-Easy")  # the columns Table 6 marks

#: The paper's recommenders (Said & Bellogín 2018, Table 5): Pearson kNN with 50 neighbours, MF with 50 factors.
PAPER_MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "ib": ("item-knn", {"k": 50, "similarity": "pearson"}),
    "ub": ("user-knn", {"k": 50, "similarity": "pearson"}),
    "mf": ("mf", {"factors": 50}),
}


def paper_models(names: Sequence[str], seed: int = 0) -> dict[str, Any]:
    """Unfitted models by name: ``ib``, ``ub``, ``mf`` (:data:`PAPER_MODELS`, labelled upper-case) or any algorithm.

    Models with a ``seed`` parameter get ``seed`` (:func:`receval.recommenders.clone`).

    Returns
    -------
    dict of str to object
        Label (``IB``, ``UB``, ``MF`` for the paper's names, else the name) to the unfitted model.

    Examples
    --------
    >>> {label: type(model).__name__ for label, model in paper_models(["ib", "mf", "biases"], seed=3).items()}
    {'IB': 'ItemKNN', 'MF': 'BiasedMF', 'biases': 'Biases'}
    >>> paper_models(["mf"], seed=3)["MF"].get_params()["seed"]
    3
    """
    from receval.recommenders import clone, make

    out = {}
    for name in names:
        algo, params = PAPER_MODELS.get(name, (name, {}))
        out[name.upper() if name in PAPER_MODELS else name] = clone(make(algo, **params), seed=seed)
    return out


def _check_p(ps: Sequence[float]) -> list[float]:
    out = []
    for p in ps:
        if not (isinstance(p, int | float) and 0 < p < 1):
            raise ConfigError(f"p={p!r}: the share of difficult users must lie strictly between 0 and 1")
        out.append(float(p))
    if not out:
        raise ConfigError("give at least one share p of difficult users, e.g. 0.1,0.5,0.9")
    return out


def difficult_users(values: np.ndarray, p: float, defined: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of the ``round(p * n)`` least coherent users among the defined ones.

    Ties are broken by user index (stable), so the result is deterministic.

    Returns
    -------
    numpy.ndarray of bool
        One entry per user of ``values``; True for the difficult ones.

    Examples
    --------
    >>> difficult_users(np.array([-0.5, -3.0, -1.0, -0.1]), 0.5).tolist()
    [False, True, True, False]
    >>> difficult_users(np.array([-0.5, np.nan, -1.0]), 0.5, np.array([True, False, True])).tolist()
    [False, False, True]
    """
    (p,) = _check_p([p])
    values = np.asarray(values, dtype=np.float64)
    defined = np.isfinite(values) if defined is None else np.asarray(defined, dtype=bool)
    candidates = np.flatnonzero(defined)
    n_diff = int(round(p * len(candidates)))
    if n_diff == 0 or n_diff == len(candidates):
        raise DataError(
            f"p={p} of {len(candidates)} users leaves one group empty; use more users or a p further from 0 and 1"
        )
    order = candidates[np.argsort(values[candidates], kind="stable")]
    mask = np.zeros(len(values), dtype=bool)
    mask[order[:n_diff]] = True
    return mask


def coherence_partitions(
    train: Interactions, test: Interactions, difficult: np.ndarray, easy: np.ndarray | None = None
) -> dict[str, Interactions]:
    """``Tr_e, Tr_d, Te_e, Te_d`` for user masks (``easy`` defaults to not difficult).

    Returns
    -------
    dict of str to Interactions
        ``Tr_e``, ``Tr_d`` (training ratings of easy / difficult users) and ``Te_e``,
        ``Te_d`` (their test ratings), each over the shared id space.

    Examples
    --------
    >>> tr = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 0, 1], [1, 2, 3, 4])
    >>> te = Interactions.from_arrays([0, 1], [1, 0], [5, 5])
    >>> parts = coherence_partitions(tr, te, np.array([False, True]))
    >>> {k: len(v) for k, v in parts.items()}
    {'Tr_e': 2, 'Tr_d': 2, 'Te_e': 1, 'Te_d': 1}
    """
    difficult = np.asarray(difficult, dtype=bool)
    easy = ~difficult if easy is None else np.asarray(easy, dtype=bool)
    return {
        "Tr_e": train.subset(easy[train.users]),
        "Tr_d": train.subset(difficult[train.users]),
        "Te_e": test.subset(easy[test.users]),
        "Te_d": test.subset(difficult[test.users]),
    }


@dataclass(frozen=True)
class CoherenceSplitResult:
    """Outcome of :func:`coherence_split_experiment`.

    Attributes
    ----------
    table : DataFrame
        One row per (recommender, p): ``base_error`` (All-All RMSE), the relative errors in %
        of ``All-Diff, All-Easy, Diff-Diff, Easy-Easy`` and ``Avg``, ``rating_ratio``,
        ``best``/``worst`` (model names among the four), ``coverage`` (share of test
        ratings predicted), ``n_undefined`` (users without coherence, summed over folds).
    rmse : DataFrame
        Absolute RMSE per (recommender, p, model), with the number of test ratings.
    gamma : str
    folds : int
    avg : str
    """

    table: pd.DataFrame
    rmse: pd.DataFrame
    gamma: str
    folds: int
    avg: str

    def table6(self, decimals: int = 2) -> pd.DataFrame:
        """The paper's Table 6 layout as strings, ``▲`` marking the best and ``▼`` the worst."""
        rows = []
        for (rec, p), row in self.table.iterrows():
            out: dict[str, Any] = {"Rec": rec, "p": p, "Base error": f"{row['base_error']:.{decimals}f}"}
            for model in _COMPARED:
                mark = "▲" if model == row["best"] else "▼" if model == row["worst"] else ""
                out[model] = f"{row[model]:.{decimals}f}{mark}"
            out["Avg"] = f"{row['Avg']:.{decimals}f}"
            out["Rating ratio"] = f"{row['rating_ratio']:.2f}"
            rows.append(out)
        return pd.DataFrame(rows)


def coherence_split_experiment(
    data: Interactions,
    models: Mapping[str, Any],
    ps: Sequence[float] = (0.1, 0.5, 0.9),
    *,
    folds: int = 5,
    gamma: str = "wstd",
    avg: Literal["users", "equal"] = "users",
    seed: int = 0,
    progress: Progress | None = None,
) -> CoherenceSplitResult:
    """Run the five-model experiment for every recommender and share ``p``.

    Parameters
    ----------
    data
        All ratings, with item attributes (one rating per pair; repeated pairs raise).
    models
        Name -> unfitted model with ``fit(train)`` and ``predict(users, items)`` (any
        protocol model, e.g. ``make("item-knn")``; every fit uses a fresh
        :func:`receval.recommenders.clone` of it), or a factory returning one (e.g.
        ``lambda: make("item-knn")``).
    ps
        Shares of difficult users, each in (0, 1).
    folds
        Per-user k-fold cross-validation (``receval.split.kfold_per_user``).
    gamma
        Coherence function (the paper uses ``wstd``), computed on each fold's training data.
    avg
        ``"users"``: Avg weights All-Easy and All-Diff by test users; ``"equal"``: plain mean.
    seed
        Seed of the fold assignment.
    progress
        Called as ``progress(fits_done, fits, "coherence-split fits")`` after each fitted
        model (default: the active callback of :func:`receval.progress.reporting`).

    Returns
    -------
    CoherenceSplitResult
        ``table`` (one row per recommender and ``p``: All-All RMSE and the relative
        errors of the other four models) and ``rmse`` (each model's absolute RMSE).

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.recommenders import make
    >>> data = generate(n_users=40, n_items=30, n_ratings=600, n_aspects=3, seed=0)
    >>> result = coherence_split_experiment(data, {"gm": make("global-mean")}, ps=[0.5], folds=2)
    >>> result.table.index.tolist(), list(result.rmse.index.names)
    ([('gm', 0.5)], ['recommender', 'p', 'model'])
    """
    from receval.split import kfold_per_user
    from receval.studies._models import model_factory

    ps = _check_p(ps)
    if gamma not in GAMMAS:
        raise ConfigError(f"unknown coherence function gamma={gamma!r}; choose one of {', '.join(GAMMAS)}",
                          parameters=["gamma"])  # fmt: skip
    if avg not in AVERAGES:
        raise ConfigError(f"avg={avg!r} is not supported; use {' or '.join(map(repr, AVERAGES))}", parameters=["avg"])
    if not models:
        raise ConfigError("give at least one recommender (a model or a factory)")
    factories = {name: model_factory(model) for name, model in models.items()}
    if data.has_duplicates:
        raise DataError(
            f"{data.n_duplicates} repeated (user, item) ratings; call data.deduplicate(...) before the "
            "coherence split (repeated ratings belong to the magic-barrier estimate)"
        )
    if len(data.ratings) and data.ratings.min() == data.ratings.max():  # the table would be all NaN
        raise DataError(
            f"every rating is {data.ratings[0]:g}: no coherence tells users apart, and the errors relative to "
            "All-All divide by an RMSE of (nearly) 0; the coherence split needs ratings that vary (explicit feedback)"
        )
    # accumulators: (rec, p, model) -> [sum of squared errors, n predicted, n test]
    acc: dict[tuple[str, float, str], np.ndarray] = {}
    users_acc: dict[tuple[float, str], int] = {}
    ratio: dict[float, list[float]] = {p: [] for p in ps}
    n_undefined = 0

    def add(key: tuple[str, float, str], pred: np.ndarray, truth: np.ndarray) -> None:
        ok = np.isfinite(pred)
        err = np.sum((pred[ok] - truth[ok]) ** 2)
        acc.setdefault(key, np.zeros(3))
        acc[key] += (err, ok.sum(), len(truth))

    notify, fits, total = progress_to(progress), 0, folds * len(factories) * (1 + 2 * len(ps))
    notify(0, total, "coherence-split fits")
    for f, (train, test) in enumerate(kfold_per_user(data, k=folds, seed=seed)):
        coh = coherence(train, gamma)
        n_undefined += int((~coh.defined).sum())
        truth = test.ratings.astype(np.float64)
        for rec, factory in factories.items():
            _log.debug("coherence split: fold %d/%d %s All", f + 1, folds, rec)
            pred_all = np.asarray(factory().fit(train).predict(test.users, test.items), dtype=np.float64)
            fits += 1
            notify(fits, total, "coherence-split fits")
            for p in ps:
                diff = difficult_users(coh.values, p, coh.defined)
                easy = coh.defined & ~diff
                in_e, in_d = easy[test.users], diff[test.users]
                add((rec, p, "All-All"), pred_all[in_e | in_d], truth[in_e | in_d])
                add((rec, p, "All-Easy"), pred_all[in_e], truth[in_e])
                add((rec, p, "All-Diff"), pred_all[in_d], truth[in_d])
                parts = coherence_partitions(train, test, diff, easy)
                for model, tr, te in (("Easy-Easy", "Tr_e", "Te_e"), ("Diff-Diff", "Tr_d", "Te_d")):
                    _log.debug("coherence split: fold %d/%d %s p=%g %s", f + 1, folds, rec, p, model)
                    fitted = factory().fit(parts[tr])
                    pred = np.asarray(fitted.predict(parts[te].users, parts[te].items), dtype=np.float64)
                    fits += 1
                    notify(fits, total, "coherence-split fits")
                    add((rec, p, model), pred, parts[te].ratings.astype(np.float64))
                if rec == next(iter(models)):
                    users_acc[(p, "easy")] = users_acc.get((p, "easy"), 0) + int(np.unique(test.users[in_e]).size)
                    users_acc[(p, "diff")] = users_acc.get((p, "diff"), 0) + int(np.unique(test.users[in_d]).size)
                    n_diff_ratings = np.count_nonzero(diff[train.users]) + np.count_nonzero(in_d)
                    ratio[p].append(n_diff_ratings / (len(train) + len(test)))

    rmse_rows = []
    for (rec, p, model), (sse, n_pred, n_test) in acc.items():
        rmse = float(np.sqrt(sse / n_pred)) if n_pred else np.nan
        rmse_rows.append((rec, p, model, rmse, int(n_pred), int(n_test)))
    rmse = pd.DataFrame(rmse_rows, columns=["recommender", "p", "model", "rmse", "n_predicted", "n_test"])
    rmse = rmse.set_index(["recommender", "p", "model"]).sort_index()

    rows = []
    for rec in models:
        for p in ps:
            base = rmse.loc[(rec, p, "All-All"), "rmse"]
            rel = {m: 100.0 * (rmse.loc[(rec, p, m), "rmse"] - base) / base for m in _COMPARED}
            n_e, n_d = users_acc[(p, "easy")], users_acc[(p, "diff")]
            if avg == "users":
                avg_rmse = (
                    n_e * rmse.loc[(rec, p, "All-Easy"), "rmse"] + n_d * rmse.loc[(rec, p, "All-Diff"), "rmse"]
                ) / (n_e + n_d)
                rel_avg = 100.0 * (avg_rmse - base) / base
            else:
                rel_avg = (rel["All-Easy"] + rel["All-Diff"]) / 2
            finite = {m: v for m, v in rel.items() if np.isfinite(v)}
            sub = rmse.loc[(rec, p)]
            rows.append(
                {
                    "recommender": rec,
                    "p": p,
                    "base_error": base,
                    **rel,
                    "Avg": rel_avg,
                    "rating_ratio": float(np.mean(ratio[p])),
                    "best": min(finite, key=finite.__getitem__) if finite else None,
                    "worst": max(finite, key=finite.__getitem__) if finite else None,
                    "coverage": float(sub["n_predicted"].sum() / sub["n_test"].sum()),
                    "n_undefined": n_undefined,
                }
            )
    table = pd.DataFrame(rows).set_index(["recommender", "p"])
    return CoherenceSplitResult(table=table, rmse=rmse, gamma=gamma, folds=folds, avg=avg)
