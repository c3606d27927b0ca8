"""Expected exposure (Diaz et al., CIKM 2020), AWRF and exposure shares, the Plackett–Luce sampler: closed forms,
enumerated permutations, hand-computed values, bad input."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.cli import main
from receval.errors import ConfigError, MetricError
from receval.metrics import MetricInput, parse_metric
from receval.metrics.exposure import (
    awrf_against,
    expected_exposure_sampled,
    exposure_share,
    group_target,
    target_shares,
)
from receval.recommenders.stochastic import plackett_luce_probability, plackett_luce_rankings, sample_rankings


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8), st.floats(0.05, 0.95))
def test_deterministic_expected_exposure_equals_its_closed_form(seed: int, k: int, gamma: float) -> None:
    rng = np.random.default_rng(seed)
    n_items, width = 12, 8
    truth = sp.csr_matrix((rng.random((3, n_items)) < 0.3) * 5.0)
    rankings = np.array([rng.permutation(n_items)[:width] for _ in range(3)])
    rankings[0, rng.integers(1, width) :] = -1  # a short list
    data = MetricInput(rankings, truth, threshold=1)
    values = {c: parse_metric(f"expected_exposure@{k}(gamma={gamma},component={c})").per_user(data)
              for c in ("loss", "disparity", "relevance")}  # fmt: skip
    dense = truth.toarray() > 0
    for u in range(3):
        m = int(dense[u].sum())
        if m == 0:
            assert all(np.isnan(v[u]) for v in values.values())
            continue
        listed = [i for i in rankings[u, :k] if i >= 0]
        target = sum(gamma**r for r in range(min(m, k))) / m
        disparity = sum(gamma ** (2 * r) for r in range(len(listed)))
        relevance = sum(gamma**r * target for r, i in enumerate(listed) if dense[u, i])
        assert values["disparity"][u] == pytest.approx(disparity, abs=1e-12)
        assert values["relevance"][u] == pytest.approx(relevance, abs=1e-12)
        assert values["loss"][u] == pytest.approx(disparity - 2 * relevance + m * target**2, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_repeated_samples_equal_the_one_ranking(seed: int, k: int) -> None:
    """K copies of one ranking (the summed-exposure path) give its closed form (the one-ranking path)."""
    rng = np.random.default_rng(seed)
    truth = sp.csr_matrix((rng.random((4, 9)) < 0.4) * 5.0)
    rankings = np.array([rng.permutation(9)[:6] for _ in range(4)])
    data = MetricInput(np.zeros((4, 6), dtype=int), truth, threshold=1)
    for component in ("loss", "disparity", "relevance"):
        one = expected_exposure_sampled(data, rankings[None], k, 0.7, component)
        many = expected_exposure_sampled(data, np.stack([rankings] * 3), k, 0.7, component)
        np.testing.assert_allclose(many, one, atol=1e-12)


def test_hand_computed_expected_exposure() -> None:
    # relevant items 0 and 1 (target (1 + 0.5) / 2 = 0.75 each); ranking [0, 2, 1]: exposure 1, 0.5, 0.25
    data = MetricInput(np.array([[0, 2, 1]]), sp.csr_matrix(np.array([[1.0, 1, 0]])), threshold=1)
    # loss: (1 - 0.75)^2 + 0.5^2 + (0.25 - 0.75)^2
    assert parse_metric("expected_exposure@3").per_user(data).tolist() == [0.0625 + 0.25 + 0.25]
    assert parse_metric("expected_exposure@3").direction == "lower"
    assert parse_metric("expected_exposure@3(component=relevance)").direction == "higher"


def _exact_expected_exposure(scores: np.ndarray, truth: np.ndarray, k: int, gamma: float) -> tuple[float, float]:
    """EE-D and EE-R of a Plackett–Luce ranker, every permutation enumerated with its probability."""
    n = scores.size
    exposure = np.zeros(n)
    for perm in itertools.permutations(range(n)):
        p = plackett_luce_probability(scores, np.array(perm))
        for r, i in enumerate(perm[:k]):
            exposure[i] += p * gamma**r
    m = int((truth > 0).sum())
    target = np.where(truth > 0, sum(gamma**r for r in range(min(m, k))) / m, 0.0)
    return float(exposure @ exposure), float(exposure @ target)


@pytest.mark.parametrize("seed", range(3))
def test_stochastic_estimate_converges_to_the_enumerated_expectation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k, gamma = 4, 3, 0.5
    scores = rng.normal(size=n)
    truth = np.array([1.0, 0, 1, 0])
    disparity, relevance = _exact_expected_exposure(scores, truth, k, gamma)
    data = MetricInput(np.zeros((1, k), dtype=int), sp.csr_matrix(truth[None, :]), threshold=1)
    samples = plackett_luce_rankings(scores[None, :], k, n_samples=20_000, seed=seed)
    got_d = expected_exposure_sampled(data, samples, k, gamma, "disparity")[0]
    got_r = expected_exposure_sampled(data, samples, k, gamma, "relevance")[0]
    assert got_d == pytest.approx(disparity, abs=0.01)
    assert got_r == pytest.approx(relevance, abs=0.01)
    # the sampled rankings' frequencies are the Plackett–Luce probabilities
    counts: dict[tuple[int, ...], int] = {}
    for row in samples[:, 0, :]:
        counts[tuple(row.tolist())] = counts.get(tuple(row.tolist()), 0) + 1
    for prefix, c in counts.items():
        exact = sum(plackett_luce_probability(scores, np.array(p)) for p in itertools.permutations(range(n))
                    if p[:k] == prefix)  # fmt: skip
        assert c / 20_000 == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-3)


def test_sampler_is_seeded_excludes_and_pads() -> None:
    scores = np.array([[0.3, 1.0, -np.inf, 0.2], [1.0, 2.0, 3.0, 4.0]])
    exclude = sp.csr_matrix(np.array([[0, 0, 0, 1], [0, 0, 0, 0]]))
    a = plackett_luce_rankings(scores, 3, n_samples=50, seed=7, exclude=exclude)
    b = plackett_luce_rankings(scores, 3, n_samples=50, seed=7, exclude=exclude)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, plackett_luce_rankings(scores, 3, n_samples=50, seed=8, exclude=exclude))
    assert set(a[:, 0, :2].ravel()) == {0, 1} and np.all(a[:, 0, 2] == -1)  # items 2 and 3 never drawn
    assert all(len(set(row)) == 3 for row in a[:, 1, :].tolist())


def test_sampler_over_a_recommender() -> None:
    from receval import Interactions
    from receval.recommenders import make

    model = make("popularity").fit(Interactions.from_arrays([0, 0, 1, 2], [0, 1, 1, 1], [5, 4, 5, 5]))
    samples = sample_rankings(model, np.array([0, 1, 2]), 2, n_samples=30, seed=0, temperature=1e-6)
    assert np.all(samples[:, :, 0] == 1)  # tau -> 0: the model's own top item every time


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"n_samples": 0}, "K must be a positive integer"), ({"n_samples": 3, "temperature": 0.0}, "temperature")],
)
def test_sampler_refuses_bad_input(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        plackett_luce_rankings(np.zeros((1, 3)), 2, seed=0, **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ AWRF
def _grouped() -> MetricInput:
    # items 0, 1: group a; item 2: group b; item 3: a and b; item 4: no group
    groups = sp.csr_matrix(np.array([[1, 0], [1, 0], [0, 1], [1, 1], [0, 0.0]]))
    truth = sp.csr_matrix(np.array([[0, 0, 5, 0, 0], [5, 0, 0, 0, 0.0]]))
    return MetricInput(np.array([[0, 2, 4], [3, 4, -1]]), truth, aspects=groups, threshold=1)


def _js(p: np.ndarray, q: np.ndarray) -> float:
    m = (p + q) / 2
    return float(sum(0.5 * a * np.log2(a / c) for a, c in zip(p, m, strict=True) if a > 0)
                 + sum(0.5 * b * np.log2(b / c) for b, c in zip(q, m, strict=True) if b > 0))  # fmt: skip


def test_hand_computed_awrf() -> None:
    data = _grouped()
    w = 1 / math.log2(3)
    e0 = np.array([1.0, w]) / (1 + w)  # user 0: item 0 (a) at rank 1, item 2 (b) at rank 2, item 4 no group
    e1 = np.array([0.5, 0.5])  # user 1: item 3 splits its attention
    got = parse_metric("awrf@3").per_user(data)
    assert got.tolist() == pytest.approx([1 - _js(e0, np.array([0.5, 0.5])), 1.0])
    catalogue = np.array([2.5, 1.5]) / 4
    assert group_target(data, "catalogue")[0].tolist() == pytest.approx(catalogue.tolist())
    got = parse_metric("awrf@3(target=catalogue)").per_user(data)
    assert got.tolist() == pytest.approx([1 - _js(e0, catalogue), 1 - _js(e1, catalogue)])
    got = parse_metric("awrf@3(target=relevance)").per_user(data)  # u0 relevant: b only; u1: a only
    assert got.tolist() == pytest.approx([1 - _js(e0, np.array([0.0, 1])), 1 - _js(e1, np.array([1.0, 0]))])
    share = exposure_share(data, 3, "geometric")  # u0: a 1, b 0.5; u1: a 0.5, b 0.5
    assert share.tolist() == pytest.approx([1.5 / 2.5, 1.0 / 2.5])


def test_bad_exposure_parameters_are_refused_when_read() -> None:
    with pytest.raises(MetricError, match=r"gamma must be in \(0, 1\)"):
        parse_metric("expected_exposure@10(gamma=1)")
    with pytest.raises(MetricError, match="target must be one of uniform, catalogue, relevance"):
        parse_metric("awrf@10(target=zipf)")
    data = MetricInput(np.zeros((1, 2), dtype=int), sp.csr_matrix(np.array([[1.0, 0]])), threshold=1)
    with pytest.raises(MetricError, match="samples must be an array"):
        expected_exposure_sampled(data, np.zeros((0, 1, 2), dtype=int), 2)


def test_cli_evaluates_exposure_and_awrf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {
        "truth": "u1,i1,5\nu1,i2,5\nu2,i3,5\n",
        "recs": "u1,i1,0.9\nu1,i3,0.8\nu1,i2,0.7\nu2,i3,0.9\nu2,i4,0.1\n",
        "groups": "i1,studio_a\ni2,studio_a\ni3,studio_b\ni4,studio_b\n",
    }
    paths = {}
    for name, text in files.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text(text, encoding="utf-8")
    base = ["evaluate", "--truth", str(paths["truth"]), "--recs", str(paths["recs"]), "--threshold", "1"]
    status = main([*base, "--aspects", str(paths["groups"]), "--metrics", "expected_exposure@3,awrf@3", "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    out = json.loads(captured.out)
    # u1: exposure 1, 0.5, 0.25 on i1, i3, i2 (i1, i2 relevant, target 0.75); u2: 1 and 0.5 (i3 relevant, target 1)
    assert out["expected_exposure@3"] == pytest.approx((0.0625 + 0.25 + 0.25 + 0 + 0.25) / 2)
    status = main([*base, "--metrics", "awrf@3"])
    captured = capsys.readouterr()
    assert status == 2 and "aspects" in captured.err and len(captured.err.strip().splitlines()) == 1
    status = main([*base, "--metrics", "expected_exposure@3(gamma=2)"])
    captured = capsys.readouterr()
    assert status == 2 and "gamma must be in (0, 1)" in captured.err


def test_a_target_given_by_group_name() -> None:
    data = _grouped()
    uniform = awrf_against(data, 3, target_shares({"a": 0.5, "b": 0.5}, ["a", "b"]))
    np.testing.assert_allclose(uniform, parse_metric("awrf@3").per_user(data), atol=1e-12)
    with pytest.raises(MetricError, match=r"target names unknown group\(s\) \['c'\]; the groups are: a, b"):
        target_shares({"a": 0.5, "c": 0.5}, ["a", "b"])
    with pytest.raises(MetricError, match=r"must sum to 1, they sum to 0\.9"):
        target_shares({"a": 0.5, "b": 0.4}, ["a", "b"])
    with pytest.raises(MetricError, match="finite numbers >= 0"):
        target_shares({"a": 1.5, "b": -0.5}, ["a", "b"])
