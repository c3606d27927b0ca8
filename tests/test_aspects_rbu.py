"""RBU against the authors' reference implementation, re-implemented here line by line.

Reference: E. Amigó, D. Spina, J. Carrillo-de-Albornoz, "An Axiomatic Analysis of
Diversity Evaluation Metrics: Introducing the Rank-Biased Utility Metric", SIGIR 2018;
code: ``rbu/src/main/java/es/uned/nlp/rbu/RBU.java`` of
github.com/jCarrilloDeAlbornoz/RBU (the RBU of the EvALL platform). Mapping: test case
= user, gold = the user's relevant truth items with their aspects (grade 1), aspect
weight = 1/|S_u|; the run = the user's list cut at k, padding dropped.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.errors import MetricError
from receval.metrics import aspects as am
from receval.metrics.registry import MetricInput, parse_metric


def rbu_reference(
    ranking: list[int], gold: dict[int, dict[int, float]], weights: dict[int, float], p: float, e: float
) -> float:
    """``RBU.evaluate`` for one test case: gold maps item -> {aspect: grade}."""
    left = 0.0
    for aspect, weight in weights.items():
        relevant = sorted((g[aspect] for g in gold.values() if g.get(aspect, 0.0) > 0.0), reverse=True)
        pow_max = 2.0 ** relevant[0] if relevant else 0.0
        rbp_mul_err = 0.0
        for i, item in enumerate(ranking):
            rel_i, err_multi = 0.0, 1.0
            if item in gold and aspect in gold[item]:
                for j in range(i):
                    rel_j = 0.0
                    other = ranking[j]
                    if other in gold and aspect in gold[other] and pow_max != 0.0:
                        rel_j = (2.0 ** gold[other][aspect] - 1.0) / pow_max
                    err_multi *= 1.0 - rel_j
                rel_i = (2.0 ** gold[item][aspect] - 1.0) / pow_max
            rbp_mul_err += p**i * rel_i * err_multi
        left += weight * rbp_mul_err * (1.0 - p)
    right = sum(p**i for i in range(len(ranking))) * e * (1.0 - p) if ranking else 0.0
    return left - right


@st.composite
def _cases(draw):
    n_users, n_items, n_aspects = draw(st.integers(1, 4)), draw(st.integers(2, 9)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    aspects = (rng.random((n_items, n_aspects)) < 0.45).astype(float)
    aspects[rng.integers(n_items), rng.integers(n_aspects)] = 1.0
    ratings = rng.integers(1, 6, (n_users, n_items)).astype(float)
    truth = sp.csr_matrix(np.where(rng.random((n_users, n_items)) < 0.6, ratings, 0.0))
    width = draw(st.integers(1, n_items))
    rankings = np.array([rng.permutation(n_items)[:width] for _ in range(n_users)])
    for row, length in zip(rankings, rng.integers(0, width + 1, n_users), strict=True):
        row[length:] = -1
    k = draw(st.integers(1, n_items + 2))  # beyond the list width too
    p = draw(st.sampled_from([0.5, 0.8, 0.95, 0.3]))
    e = draw(st.sampled_from([0.0, 0.03, 0.1]))
    threshold = draw(st.sampled_from([1.0, 3.0, 4.0]))
    return rankings, truth, sp.csr_matrix(aspects), k, p, e, threshold


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_rbu_equals_the_reference_implementation(case) -> None:
    rankings, truth, aspects, k, p, e, threshold = case
    ours = am.rbu(rankings, truth, aspects, k=k, p=p, e=e, threshold=threshold)
    paper = am.rbu(rankings, truth, aspects, k=k, p=p, e=e, threshold=threshold, convention="paper")
    for u in range(truth.shape[0]):
        row = slice(truth.indptr[u], truth.indptr[u + 1])
        gold = {}
        for item, rating in zip(truth.indices[row], truth.data[row], strict=True):
            if rating >= threshold:
                tags = aspects.indices[aspects.indptr[item] : aspects.indptr[item + 1]]
                if len(tags):
                    gold[int(item)] = {int(a): 1.0 for a in tags}
        topics = {a for g in gold.values() for a in g}
        if not topics:  # no relevant aspect: not scored (the reference has no test case)
            assert np.isnan(ours[u])
            continue
        ranking = [int(i) for i in rankings[u, :k] if i >= 0]
        expected = rbu_reference(ranking, gold, {a: 1.0 / len(topics) for a in topics}, p, e)
        assert ours[u] == pytest.approx(expected, abs=1e-12)
        assert paper[u] == pytest.approx(expected / (1.0 - p), abs=1e-12)


def test_the_reference_is_five_times_smaller_at_p_08_and_charges_no_padding() -> None:
    aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1]], dtype=float))
    truth = sp.csr_matrix(np.array([[1.0, 1.0, 0.0]]))
    full = np.array([[0, 2, 1]])
    paper = am.rbu(full, truth, aspects, k=3, convention="paper")[0]
    assert am.rbu(full, truth, aspects, k=3)[0] == pytest.approx(paper / 5)
    # k beyond the list: the same value as k = the list length (padding is not read)
    short = np.array([[0, 1, -1]])
    assert am.rbu(short, truth, aspects, k=10)[0] == pytest.approx(am.rbu(short, truth, aspects, k=2)[0])
    # by hand: (1 - 0.8) [(0.5 * 0.5 - 0.03) + 0.8 (0.5 * 0.5 - 0.03)]
    assert am.rbu(short, truth, aspects, k=10)[0] == pytest.approx(0.2 * (0.22 + 0.8 * 0.22))


def test_rbu_convention_through_the_registry() -> None:
    aspects = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=float))
    data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[1.0, 1.0]])), aspects=aspects)
    assert parse_metric("rbu@2").compute(data) == pytest.approx(0.0792)
    assert parse_metric("rbu@2(convention=paper)").compute(data) == pytest.approx(0.396)
    with pytest.raises(MetricError, match="convention"):
        parse_metric("rbu@2(convention=nope)").compute(data)
