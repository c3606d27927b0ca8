"""A metric list is read once where it enters, its convention checked once; one aggregation rule for every path."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import receval.metrics._list as metric_list_module
from receval.cli import main
from receval.data.interactions import Relevance
from receval.data.synthetic import generate
from receval.errors import ConfigError, MetricError
from receval.evaluation import evaluate, evaluate_model
from receval.evaluation.sharded import evaluate_sharded
from receval.metrics import MetricInput, MetricList, aggregate, parse_metric
from receval.recommenders import make
from receval.split import holdout

TRUTH = pd.DataFrame({"user": ["a", "a", "b", "c"], "item": ["x", "y", "y", "z"], "rating": [5, 2, 4, 3]})
RECS = pd.DataFrame({"user": ["a", "a", "b", "c"], "item": ["y", "x", "z", "z"], "score": [0.9, 0.5, 0.7, 0.2]})


@pytest.fixture
def counted(monkeypatch):
    """Counts of the metric strings MetricList reads and of the conventions it checks."""
    counts = {"read": 0, "checked": 0}
    parse, apply, check = (
        metric_list_module.parse_metric,
        metric_list_module.apply_convention,
        metric_list_module.check_convention,
    )

    def read(metric, *args):
        counts["read"] += 1
        return parse(metric) if not args else apply(metric, *args)

    def checked(convention):
        counts["checked"] += 1
        return check(convention)

    monkeypatch.setattr(metric_list_module, "parse_metric", read)
    monkeypatch.setattr(metric_list_module, "apply_convention", read)
    monkeypatch.setattr(metric_list_module, "check_convention", checked)
    return counts


def test_evaluate_model_reads_each_metric_once_and_checks_the_convention_once(counted):
    train, test = holdout(generate(60, 80, 1500, seed=0), test_fraction=0.2, seed=0)
    metrics = ["precision@5", "ndcg@5", "recall@5(agg=micro)", "rmse"]
    result = evaluate_model(make("biases"), train, test, metrics, k=5, threshold=4, convention="lenskit")
    assert list(result.summary) == metrics
    assert counted == {"read": len(metrics), "checked": 1}


def test_compare_runs_reads_the_metrics_once_for_every_run(counted):
    from receval.studies.compare import compare_runs

    compare_runs({"a": RECS, "b": RECS, "c": RECS}, TRUTH, "precision@2,mrr", threshold=4, convention="trec_eval")
    assert counted == {"read": 2, "checked": 1}


def test_evaluate_takes_a_metric_list_as_it_takes_strings():
    strings = evaluate(RECS, TRUTH, ["precision@2", " mrr", "recall@2(agg=micro)"], threshold=4, convention="ranx")
    listed = evaluate(RECS, TRUTH, MetricList("precision@2, mrr,recall@2(agg=micro)", "ranx"), threshold=4)
    assert listed.summary == strings.summary
    assert listed.conventions == strings.conventions
    assert listed.per_user.equals(strings.per_user)


def test_a_metric_list_keeps_its_convention():
    metrics = MetricList("precision@2", convention="trec_eval")
    assert evaluate(RECS, TRUTH, metrics, threshold=4, convention="TREC_EVAL").conventions.convention == "trec_eval"
    with pytest.raises(ConfigError, match="differs from the metric list's convention 'trec_eval'"):
        evaluate(RECS, TRUTH, metrics, threshold=4, convention="ranx")
    with pytest.raises(ConfigError, match="is not a library preset"):
        MetricList("precision@2", convention="pyterrier")


def test_a_metric_list_pickles_as_its_strings():
    metrics = MetricList(["ndcg@10", "P_10", "recall@5(agg=micro)"], convention="lenskit").subset(["P_10", "ndcg@10"])
    again = pickle.loads(pickle.dumps(metrics))
    assert again.labels == metrics.labels == ("ndcg@10", "P_10")
    assert again.convention == "lenskit"
    assert [str(spec) for _, spec in again] == [str(spec) for _, spec in metrics]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_one_aggregation_rule_in_memory_and_by_shards(seed, n_shards):
    rng = np.random.default_rng(seed)
    n_users, n_items = 12, 9
    truth = sp.random(n_users, n_items, density=0.4, random_state=rng, format="csr")
    truth.data = rng.integers(1, 6, truth.nnz).astype(np.float64)
    rankings = np.array([rng.permutation(n_items)[:4] for _ in range(n_users)])
    rankings[rng.random(rankings.shape) < 0.2] = -1
    rankings = -np.sort(-rankings, axis=1)  # padding at the end of each list
    metrics = ["precision@4", "recall@4(agg=micro)", "ndcg@4", "tp@4(agg=sum)"]
    per_user, summary = evaluate_sharded(rankings, truth, metrics, n_shards=n_shards, threshold=4)
    data = MetricInput(rankings, truth, threshold=4)
    for name in metrics:
        metric = parse_metric(name)
        assert summary[name] == pytest.approx(metric.compute(data), nan_ok=True)
        if metric.aggregation != "micro":
            assert summary[name] == aggregate(metric, per_user[name].to_numpy())


def test_aggregate():
    values = np.array([1.0, np.nan, 0.0, 0.5])
    assert aggregate(parse_metric("precision@2"), values) == 0.5
    assert aggregate(parse_metric("tp@2(agg=sum)"), values) == 1.5
    assert np.isnan(aggregate(parse_metric("precision@2"), np.array([np.nan])))
    assert aggregate(parse_metric("recall@2(agg=micro)"), totals=(1.0, 4.0)) == 0.25
    assert np.isnan(aggregate(parse_metric("recall@2(agg=micro)"), totals=(0.0, 0.0)))


def test_metric_input_takes_the_relevance_its_caller_resolved():
    truth = sp.csr_matrix(np.array([[5.0, 3.0, 1.0]]))
    data = MetricInput(np.array([[0, 1, 2]]), truth, relevance=Relevance(4.0, 2.0))
    assert (data.threshold, data.negative_threshold) == (4.0, 2.0)
    assert data.positive.tolist() == [[True, False, False]] and data.negative.tolist() == [[False, False, True]]
    with pytest.raises(MetricError, match="not both"):
        MetricInput(np.array([[0]]), truth, relevance=Relevance(4.0, 4.0), threshold=3)
    halves = sp.csr_matrix(np.array([[0.5, 4.5]]))  # a truth without its scale: the scale its ratings span
    assert MetricInput(np.array([[0]]), halves).relevance == Relevance(0.5, 0.5)


def test_evaluate_command_reads_the_metrics_before_any_file(tmp_path, capsys):
    code = main(["evaluate", "--truth", str(tmp_path / "absent.csv"), "--recs", str(tmp_path / "absent.csv"),
                 "--metrics", "precision@0", "--json"])  # fmt: skip
    assert code == 2
    assert "cutoff k must be a positive integer" in json.loads(capsys.readouterr().out)["error"]
