"""Sampled metrics: metric strings with sampled=N, evaluate_model/evaluate_sampled, hand-computed values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from receval.errors import MetricError
from receval.metrics import parse_metric
from receval.vocabulary import SAMPLE_SHAPES, SAMPLED_CORRECTIONS, SAMPLING_SCHEMES

# ----------------------------------------------------------------------------- metric strings


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg@10(sampled=100,correction=bv)", "ndcg@10(correction=bv,sampled=100)"),
        ("recall@10(sampled=100)", "recall@10(sampled=100)"),
        ("recall@10(sampled=100,sampling=uniform,shape=per-item,correction=none)", "recall@10(sampled=100)"),
        ("ndcg@10(candidates=sampled)", "ndcg@10(sampled=100)"),
        ("recall@10(candidates=sampled,correction=BV,gamma=0.5)", "recall@10(correction=bv,gamma=0.5,sampled=100)"),
        ("ndcg@10(candidates=all)", "ndcg@10"),
        ("hr@5(sampled=49,shape=per_user)", "hit_rate@5(sampled=49,shape=per-user)"),
        ("AP@10(sampled=9,sampling=popularity,exponent=0.5)", "map@10(exponent=0.5,sampled=9,sampling=popularity)"),
        ("auc(sampled=99)", "auc(sampled=99)"),
        ("mrr(sampled=99,correction=mle)", "mrr(correction=mle,sampled=99)"),
        ("precision@3(sampled=20,threshold=4)", "precision@3(sampled=20,threshold=4)"),
        ("ab_ndcg@10(gamma=0.5)", "ab_ndcg@10(gamma=0.5)"),  # a metric's own parameter named like bv's is its own
    ],
)
def test_metric_strings_read_and_round_trip(text, canonical):
    metric = parse_metric(text)
    assert str(metric) == canonical
    assert str(parse_metric(str(metric))) == canonical
    assert parse_metric(str(metric)) == metric


def test_parameters_resolved():
    m = parse_metric("ndcg@10(sampled=100,correction=bv)")
    assert m.sampled == 100
    assert {k: m.params[k] for k in ("sampling", "exponent", "shape", "correction", "gamma")} == {
        "sampling": "uniform", "exponent": 1.0, "shape": "per-item", "correction": "bv", "gamma": None,
    }  # fmt: skip
    assert parse_metric("ndcg@10").sampled is None
    # no library preset applies to a sampled metric (one relevant item per list: one definition)
    assert parse_metric("ndcg@10(sampled=100,convention=ranx)").convention is None


@given(
    n=st.integers(1, 10_000),
    sampling=st.sampled_from(SAMPLING_SCHEMES),
    shape=st.sampled_from(SAMPLE_SHAPES),
    correction=st.sampled_from(SAMPLED_CORRECTIONS),
    k=st.integers(1, 50),
    name=st.sampled_from(["recall", "hit_rate", "precision", "ndcg", "mrr", "map"]),
)
def test_every_combination_round_trips(n, sampling, shape, correction, k, name):
    parts = [f"sampled={n}", f"sampling={sampling}", f"shape={shape}", f"correction={correction}"]
    if correction == "bv":
        parts.append("gamma=0.25")
    metric = parse_metric(f"{name}@{k}({','.join(parts)})")
    again = parse_metric(str(metric))
    assert again == metric and str(again) == str(metric)
    assert (again.sampled, again.params["sampling"], again.params["shape"], again.params["correction"]) == (
        n, sampling, shape, correction,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndcg@10(sampled=0)", "sampled is the number of sampled negatives, an integer >= 1, got 0"),
        ("ndcg@10(sampled=2.5)", "an integer >= 1, got 2.5"),
        ("ndcg@10(sampled=true)", "an integer >= 1, got True"),
        ("ndcg@10(correction=bv)", "correction= belong to a sampled metric; add sampled=N"),
        ("ndcg@10(sampled=10,correction=lsq)", "correction='lsq' is not known; use one of none, ls, bv, mapping, mle"),
        ("ndcg@10(sampled=10,sampling=pop)", "sampling='pop' is not known; use one of uniform, popularity"),
        ("ndcg@10(sampled=10,shape=row)", "shape='row' is not known; use one of per-item, per-user"),
        ("ndcg@10(sampled=10,exponent=2)", "exponent weights popularity sampling; add sampling=popularity"),
        ("ndcg@10(sampled=10,sampling=popularity,exponent=x)", "exponent must be a finite number, got 'x'"),
        ("ndcg@10(sampled=10,gamma=0.1)", "gamma is the bias-variance trade-off; add correction=bv"),
        ("ndcg@10(sampled=10,correction=bv,gamma=1.5)", "gamma weighs variance against bias, in [0, 1]"),
        ("ndcg@10(sampled=10,gain=exponential)", "a sampled metric has one relevant item per ranked list and no gain"),
        ("recall@10(sampled=10,estimator=ips)", "no estimator"),
        ("coverage@10(sampled=10)", "has no sampled form"),
        ("ndcg@10(candidates=some)", "candidates must be all or sampled, got 'some'"),
        ("ndcg@10(candidates=all,sampled=5)", "candidates=all ranks the whole catalogue"),
    ],
)
def test_bad_parameters_are_one_line_errors(text, message):
    with pytest.raises(MetricError) as err:
        parse_metric(text)
    assert message in str(err.value)
    assert text in str(err.value) and "\n" not in str(err.value)


def test_evaluate_refuses_sampled_metrics_on_lists():
    import pandas as pd

    from receval import evaluate

    truth = pd.DataFrame({"user": ["a"], "item": ["x"], "rating": [5]})
    recs = pd.DataFrame({"user": ["a"], "item": ["x"], "score": [1.0]})
    with pytest.raises(MetricError, match="recommendation lists do not hold"):
        evaluate(recs, truth, ["ndcg@10", "ndcg@10(sampled=100)"])
