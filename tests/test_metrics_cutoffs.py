"""Cutoffs beyond every list: capped at the lists, never allocated; too large for an integer, a one-line error.

A cutoff k reads the first k positions of each list; positions after the longest list hold
nothing, so a metric reads the longest list (and an ideal list the longest ideal one) and adds
what the empty positions contribute in closed form (P@k's 1/k, EU's cost per position, the
discount sum of ``ndcg(ideal=full)``). The values equal those of lists padded to k with -1.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval.cli import main
from receval.errors import MetricError
from receval.metrics import Metric, MetricInput, available_metrics, get_definition, parse_metric
from receval.metrics.ranking import discount_sum, harmonic_tail, rank_discount

HUGE = 10**12
# every metric with a cutoff, and the parameter values that make k itself part of the value
VARIANTS = [
    "ndcg(ideal=full)",
    "ndcg(ideal=full,discount=clipped)",
    "ndcg(discount=clipped)",
    "ndcg(graded=true)",
    "map(average=ranks)",
    "map(denominator=k)",
    "map(denominator=min)",
    "precision(denominator=list)",
    "recall(denominator=min)",
    "unjudged(denominator=list)",
    "judged(denominator=k)",
    "r_precision",
    "ab_ndcg(gamma=truth,ideal=truth)",
    "eu(p=1)",
    "rbu(convention=paper)",
    "s_recall(denominator=all,relevant_only=false)",
]
# the metrics whose value at k depends on k once k passes every list (the rest equal their value there)
K_DEPENDENT = {
    "precision",
    "anti_precision",
    "f1",
    "p_ia",
    "eu",
    "eu(p=1)",
    "serendipity",
    "unjudged",
    "judged(denominator=k)",
    "map(average=ranks)",
    "map(denominator=k)",
    "ndcg(ideal=full)",
    "ndcg(ideal=full,discount=clipped)",
}


def _with_k(metric: str, k: int) -> str:
    name, _, params = metric.partition("(")
    return f"{name}@{k}" + (f"({params}" if params else "")


def _cutoff_metrics() -> list[str]:
    names = [
        n for n in available_metrics() if get_definition(n).k != "none" and not get_definition(n).needs_predictions
    ]
    return names + VARIANTS


@st.composite
def inputs(draw) -> tuple[MetricInput, np.ndarray]:
    """Short lists (some empty, padded with -1), graded truth, training ratings and aspects over a few items."""
    n_items = draw(st.integers(2, 6))
    n_users = draw(st.integers(1, 3))
    rows = []
    for _ in range(n_users):
        order = draw(st.permutations(range(n_items)))
        rows.append(list(order[: draw(st.integers(0, n_items))]))
    width = max(1, max(len(r) for r in rows))
    rankings = np.full((n_users, width), -1, dtype=np.int64)
    for u, row in enumerate(rows):
        rankings[u, : len(row)] = row
    grades = st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, np.nan])
    truth = np.array([[draw(grades) for _ in range(n_items)] for _ in range(n_users)])
    truth[0, draw(st.integers(0, n_items - 1))] = 5.0  # a relevant item, so that most metrics score a user
    train = np.array([[draw(st.sampled_from([0.0, 0.0, 3.0, 5.0])) for _ in range(n_items)] for _ in range(n_users)])
    train[:, 0] = 4.0
    aspects = np.array([[draw(st.sampled_from([0.0, 1.0])) for _ in range(3)] for _ in range(n_items)])
    aspects[:, 0] = 1.0
    mask = ~np.isnan(truth)
    csr = sp.csr_matrix((truth[mask], np.nonzero(mask)[1], np.r_[0, np.cumsum(mask.sum(axis=1))]), shape=truth.shape)
    data = MetricInput(
        rankings,
        csr,
        threshold=3,
        train=sp.csr_matrix(train),
        aspects=sp.csr_matrix(aspects),
        rating_max=5.0,
        empty_users="zero",
    )
    return data, rankings


def _value(metric: str, data: MetricInput) -> float:
    return parse_metric(metric).compute(data)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs(), st.integers(1, 4))
def test_a_cutoff_beyond_the_lists_equals_the_lists_padded_to_it(drawn, extra) -> None:
    data, rankings = drawn
    k = data.n_items + extra  # beyond every list, every truth row and the catalogue
    padded = np.full((rankings.shape[0], k), -1, dtype=np.int64)
    padded[:, : rankings.shape[1]] = rankings
    wide = MetricInput(
        padded,
        data.truth,
        threshold=3,
        train=data.train,
        aspects=data.aspects,
        rating_max=5.0,
        empty_users="zero",
    )
    for metric in _cutoff_metrics():
        got, want = _value(_with_k(metric, k), data), _value(_with_k(metric, k), wide)
        assert _same(got, want), (metric, k, got, want)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs())
def test_value_at_a_huge_cutoff_equals_the_value_at_the_longest_list(drawn) -> None:
    data, _ = drawn
    longest = data.n_items  # no list, truth row or ideal list is longer than the catalogue
    for metric in _cutoff_metrics():
        huge = _value(_with_k(metric, HUGE), data)  # on main: MemoryError (7.28 TiB) for ndcg and the aspect family
        if metric in K_DEPENDENT:
            assert math.isnan(huge) or math.isfinite(huge), metric
            continue
        assert _same(huge, _value(_with_k(metric, longest), data)), metric


def test_k_dependent_values_at_a_huge_cutoff_are_the_closed_forms() -> None:
    truth = sp.csr_matrix(np.array([[5.0, 4.0, 0.0]]))
    data = MetricInput(np.array([[0, 2]]), truth, threshold=4)
    assert _value(f"precision@{HUGE}", data) == 1 / HUGE
    assert _value(f"map@{HUGE}(average=ranks)", data) == pytest.approx((1 + 1 / 2 + harmonic_tail(2, HUGE)) / HUGE)
    # RecTools' divide_by_achievable=False: the ideal DCG of k items of the top gain
    assert _value(f"ndcg@{HUGE}(gain=binary,ideal=full)", data) == pytest.approx(1 / discount_sum(HUGE))


def test_discount_sum_and_harmonic_tail_beyond_the_summed_ranks() -> None:
    for discount in ("log2", "clipped"):
        for k in (2**20, 2**20 + 3, 3_000_000):
            assert discount_sum(k, discount) == pytest.approx(math.fsum(rank_discount(k, discount)), rel=1e-14)
    exact = math.fsum(1.0 / np.arange(8, 2**21 + 5, dtype=np.float64))
    assert harmonic_tail(7, 2**21 + 4) == pytest.approx(exact, rel=1e-14)
    assert harmonic_tail(9, 9) == 0.0


def test_a_million_item_list_at_a_billion_cutoff_allocates_the_list_only() -> None:
    # the case: one 10^6-item list and ndcg@1000000000 was killed for memory (7.45 GiB discount)
    n = 10**6
    recs = pd.DataFrame({"user": ["u"] * n, "item": np.arange(n), "rank": np.arange(1, n + 1)})
    truth = pd.DataFrame({"user": ["u"] * 3, "item": [5, 500, n - 1], "rating": [5, 4, 3]})
    tracemalloc.start()
    try:
        result = receval.evaluate(recs, truth, ["ndcg@1000000000", f"ndcg@{n}", "ndcg_cut_1000000000000"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.summary["ndcg@1000000000"] == result.summary[f"ndcg@{n}"] == result.summary["ndcg_cut_1000000000000"]
    assert peak < 600 * 2**20, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize(
    "text", ["ndcg@99999999999999999999", "ndcg_cut_99999999999999999999", "P_9223372036854775808"]
)
def test_a_cutoff_beyond_a_64_bit_integer_is_a_parse_error(text: str) -> None:
    with pytest.raises(MetricError, match=r"the cutoff k must be at most 2\^63 - 1 .*got '9"):
        parse_metric(text)
    assert parse_metric(_with_k("ndcg", 2**63 - 1)).k == 2**63 - 1


@pytest.mark.parametrize("name", ["ndcg", "judged", "set_p", "r_precision", "unjudged", "num_ret"])
def test_a_cutoff_beyond_a_64_bit_integer_from_python_is_refused(name: str) -> None:
    # on main: Metric.of took it, and computing was an OverflowError (or UFuncTypeError) traceback
    with pytest.raises(MetricError, match=r"at most 2\^63 - 1 .*got 100000000000000000000"):
        Metric.of(name, 10**20)


def test_a_cutoff_beyond_a_64_bit_integer_on_the_command_line(tmp_path, capsys) -> None:
    (tmp_path / "truth.csv").write_text("user,item,rating\nu,a,5\n")
    (tmp_path / "run.csv").write_text("user,item,rank\nu,a,1\n")
    args = ["evaluate", "--recs", str(tmp_path / "run.csv"), "--truth", str(tmp_path / "truth.csv")]
    assert main([*args, "--metrics", "ndcg@99999999999999999999"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "at most 2^63 - 1" in err and "Traceback" not in err
    assert main([*args, "--metrics", "ndcg@1000000000000,ndcg_cut_1000000000000"]) == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("P_-1", "metric 'P_-1': the cutoff k must be a positive integer, got '-1'"),
        ("P.-1", "metric 'P.-1': the cutoff k must be a positive integer, got '-1'"),
        ("ndcg_cut_-5", "metric 'ndcg_cut_-5': the cutoff k must be a positive integer, got '-5'"),
        ("P_1e3", "metric 'P_1e3': the cutoff k must be a positive integer, got '1e3'"),
        ("iprec_at_recall_-0.1", "metric 'iprec_at_recall_-0.1': the recall level must be a number like 0.10"),
        ("nope-x@3", "unknown metric 'nope-x'"),
        ("r-precisionx", "unknown metric 'r-precisionx'; did you mean 'r_precision'"),
    ],
)
def test_messages_quote_the_metric_as_typed(text: str, message: str) -> None:
    # on main: P_-1 was quoted as 'P__1', the '-' read as '_' before the message was written
    with pytest.raises(MetricError) as caught:
        parse_metric(text)
    assert str(caught.value).startswith(message), str(caught.value)
