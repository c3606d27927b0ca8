"""evaluate_model (the one-shot protocol in one function) and clone (fresh, seeded copies)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sklearn.base

from receval.data.synthetic import generate
from receval.errors import DataError
from receval.evaluation import evaluate, evaluate_model
from receval.recommenders import clone, make, recommend
from receval.recommenders.registry import ALGORITHMS
from receval.split import holdout

METRICS = ["precision@5", "recall@5", "ndcg@5", "coverage@5", "rmse", "mae"]


@pytest.fixture(scope="module")
def split():
    data = generate(70, 90, 2000, seed=4)
    return holdout(data, test_fraction=0.25, seed=4)


def _by_hand(name, train, test, seed):
    """The protocol spelled out: seeded model, lists for the test users, training items excluded."""
    model = make(name)
    if "seed" in model.get_params():
        model.set_params(seed=seed)
    model.fit(train)
    users = np.unique(test.users)
    items, _ = recommend(model, users, 5, exclude=train, seed=seed)
    preds = test.to_frame()[["user", "item"]].assign(prediction=model.predict(test.users, test.items))
    return evaluate(items, test, METRICS, train=train, threshold=4, users=users, predictions=preds)


@pytest.mark.parametrize("name", ["mf", "item-knn", "biases"])
def test_equals_the_flow_by_hand(split, name):
    train, test = split
    got = evaluate_model(make(name), train, test, METRICS, k=5, threshold=4, seed=9)
    want = _by_hand(name, train, test, 9)
    assert got.summary == pytest.approx(want.summary, nan_ok=True)
    pd.testing.assert_frame_equal(got.per_user, want.per_user)
    assert got.conventions.not_applicable == ()


def test_seed_reaches_the_model_and_the_ties(split):
    train, test = split
    a = evaluate_model(make("random"), train, test, ["precision@5"], k=5, threshold=4, seed=1)
    b = evaluate_model(make("random"), train, test, ["precision@5"], k=5, threshold=4, seed=2)
    c = evaluate_model(make("random", seed=2), train, test, ["precision@5"], k=5, threshold=4, seed=1, seed_model=False)
    assert not np.array_equal(a.rankings, b.rankings)
    # Random's scores have no ties: its lists are decided by the model's own seed (2), kept here
    np.testing.assert_array_equal(c.rankings, b.rankings)


def test_ranker_gets_nan_error_metrics_in_place(split):
    train, test = split
    res = evaluate_model(make("popularity"), train, test, ["rmse", "precision@5", "mae"], k=5, threshold=4)
    assert list(res.summary) == ["rmse", "precision@5", "mae"]
    assert np.isnan(res.summary["rmse"]) and np.isnan(res.summary["mae"])
    assert list(res.per_user.columns) == ["user", "rmse", "precision@5", "mae"]
    assert res.per_user["rmse"].isna().all()
    assert res.conventions.not_applicable == ("rmse", "mae")
    only = evaluate_model(make("popularity"), train, test, ["rmse"])
    assert np.isnan(only.summary["rmse"]) and only.rankings is None


def test_training_items_excluded_or_not(split):
    train, test = split
    users = np.unique(test.users)
    seen = train.to_csr("ones")[users].toarray() > 0
    res = evaluate_model(make("popularity"), train, test, ["precision@10"], threshold=4)
    hit = np.take_along_axis(seen, np.maximum(res.rankings, 0), axis=1) & (res.rankings >= 0)
    assert not hit.any()
    res = evaluate_model(make("popularity"), train, test, ["precision@10"], threshold=4, exclude_train=False)
    hit = np.take_along_axis(seen, np.maximum(res.rankings, 0), axis=1)
    assert hit.any()


def test_users_restricts_the_evaluated_users(split):
    train, test = split
    everyone = evaluate_model(make("biases"), train, test, ["ndcg@5", "rmse"], k=5, threshold=4)
    some = np.unique(test.users)[::3]
    part = evaluate_model(make("biases"), train, test, ["ndcg@5", "rmse"], k=5, threshold=4, users=some)
    assert part.per_user["user"].tolist() == test.user_ids[some].tolist()
    want = everyone.per_user.set_index("user").loc[test.user_ids[some]]
    np.testing.assert_allclose(part.per_user.set_index("user").to_numpy(), want.to_numpy())


def test_given_model_untouched_and_fitted_models_used_as_is(split):
    train, test = split
    model = make("mf", seed=3)
    evaluate_model(model, train, test, ["rmse"], seed=5)
    assert not hasattr(model, "n_items_") and model.seed == 3
    fitted = make("mf", seed=3).fit(train)
    a = evaluate_model(fitted, train, test, ["rmse"], fitted=True, seed=5)
    b = evaluate_model(make("mf"), train, test, ["rmse"], seed=3)
    assert a.summary["rmse"] == b.summary["rmse"]


def test_id_spaces_must_match(split):
    train, _ = split
    other = generate(10, 12, 60, seed=0)
    with pytest.raises(DataError, match="share one id space"):
        evaluate_model(make("popularity"), train, other, ["precision@5"])


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_sklearn_clone_every_builtin(split, name):
    train, _ = split
    model = make(name)
    copy = sklearn.base.clone(model)
    assert type(copy) is type(model) and copy is not model
    assert copy.get_params(deep=True) == model.get_params(deep=False)
    fitted = make(name)
    if "threshold" in fitted.get_params() and fitted.threshold is None:  # online learners: set by simulate
        fitted.set_params(threshold=4)
    fitted.fit(train)
    fresh = clone(fitted)
    assert not hasattr(fresh, "n_items_")
    if "seed" in model.get_params():
        assert clone(model, seed=11).get_params()["seed"] == 11
        assert sklearn.base.clone(model.set_params(seed=11)).seed == 11


def test_one_shot_protocol_reports_system_metrics_and_nan_errors_for_rankers():
    from receval.experiment import expand, parse_config
    from receval.experiment.protocols import PreparedDataset, get_protocol

    cfg = parse_config(
        """
metrics = ["precision@5", "coverage@5", "rmse"]
[datasets.toy]
generate = { n_users = 50, n_items = 60, n_ratings = 1200, seed = 3 }
[split]
method = "holdout"
test_fraction = 0.25
[protocol]
name = "one-shot"
k = 5
[recommenders.popularity]
[recommenders.biases]
"""
    )
    data = generate(50, 60, 1200, seed=3)
    out = {t.algorithm: get_protocol("one-shot").run(t, PreparedDataset(data)) for t in expand(cfg)}
    assert np.isnan(out["popularity"].aggregates["rmse"]) and 0 < out["biases"].aggregates["rmse"] < 2
    assert all(0 < o.aggregates["coverage@5"] <= 1 for o in out.values())
    assert set(out["popularity"].per_user["metric"]) == {"precision@5"}  # no rows for a metric that does not apply
    assert set(out["biases"].per_user["metric"]) == {"precision@5", "rmse"}
