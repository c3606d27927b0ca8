"""Calibration (Steck, RecSys 2018; the JS form of RADio): hand-computed values, a loop written from Steck's
formulas, the hypothesis property (0 when the list reproduces the profile), the axioms, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.cli import main
from receval.errors import MetricError
from receval.metrics import MetricInput, parse_metric
from receval.metrics.calibration import AXIOMS
from receval.studies.axioms import AXIOMS as ALL_AXIOMS
from receval.studies.axioms import axiom_table, calibration_metrics


def _steck(profile: list[list[int]], ranked: list[list[int]], n: int, alpha: float, rank: bool, js: bool) -> float:
    """Steck's C_KL (eq. 1-5) from item genre lists, as a plain loop; the JS form in bits."""

    def dist(items: list[list[int]], weights: list[float]) -> list[float]:
        out = [0.0] * n
        for genres, w in zip(items, weights, strict=True):
            for g in genres:
                out[g] += w / len(genres)
        total = sum(out)
        return [x / total for x in out] if total > 0 else out

    p = dist(profile, [1.0] * len(profile))
    weights = [1 / math.log2(r + 2) if rank else 1.0 for r in range(len(ranked))]
    q = dist(ranked, weights)
    q = [(1 - alpha) * b + alpha * a for a, b in zip(p, q, strict=True)]
    if not js:
        return sum(a * math.log(a / b) for a, b in zip(p, q, strict=True) if a > 0)
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    kl_p = sum(a * math.log2(a / c) for a, c in zip(p, m, strict=True) if a > 0)
    kl_q = sum(b * math.log2(b / c) for b, c in zip(q, m, strict=True) if b > 0)
    return 0.5 * kl_p + 0.5 * kl_q


def _input(genres: list[list[int]], n_aspects: int, profiles: list[list[int]], lists: list[list[int]]) -> MetricInput:
    rows = [i for i, g in enumerate(genres) for _ in g]
    cols = [a for g in genres for a in g]
    aspects = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(genres), n_aspects))
    train = np.zeros((len(profiles), len(genres)))
    for u, items in enumerate(profiles):
        train[u, items] = 1
    width = max(len(x) for x in lists)
    rankings = np.array([x + [-1] * (width - len(x)) for x in lists])
    return MetricInput(rankings, sp.csr_matrix((len(lists), len(genres))), train=sp.csr_matrix(train), aspects=aspects)


def test_hand_computed_steck_example() -> None:
    # profile: 2 drama, 1 comedy -> (2/3, 1/3); list: comedy, drama -> (1/2, 1/2)
    data = _input([[0], [0], [1], [1], [0]], 2, [[0, 1, 2]], [[3, 4]])
    q = np.array([0.99 * 0.5 + 0.01 * 2 / 3, 0.99 * 0.5 + 0.01 / 3])
    p = np.array([2 / 3, 1 / 3])
    assert parse_metric("miscalibration@2").per_user(data)[0] == pytest.approx(float(np.sum(p * np.log(p / q))))
    # rank-weighted: comedy weighs 1, drama 1/log2(3)
    w = 1 / math.log2(3)
    q = np.array([w, 1.0]) / (1 + w)
    q = 0.99 * q + 0.01 * p
    value = parse_metric("miscalibration@2(weighting=rank)").per_user(data)[0]
    assert value == pytest.approx(float(np.sum(p * np.log(p / q))))
    # alpha = 1 replaces the list's distribution by the profile's: 0 whatever the list
    assert parse_metric("miscalibration@1(alpha=1)").per_user(data)[0] == pytest.approx(0.0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["kl", "js"]), st.booleans(), st.floats(0.001, 0.5))
def test_equals_the_loop_from_stecks_formulas(seed: int, divergence: str, rank: bool, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    n_items, n_aspects = 12, 4
    genres = [sorted(set(rng.integers(0, n_aspects, rng.integers(0, 3)).tolist())) for _ in range(n_items)]
    profiles = [sorted(rng.choice(n_items, rng.integers(1, 6), replace=False).tolist()) for _ in range(5)]
    lists = [rng.choice(n_items, rng.integers(1, 6), replace=False).tolist() for _ in range(5)]
    data = _input(genres, n_aspects, profiles, lists)
    weighting = "rank" if rank else "uniform"
    got = parse_metric(f"miscalibration@5(alpha={alpha},divergence={divergence},weighting={weighting})").per_user(data)
    for u in range(5):
        profile = [genres[i] for i in profiles[u]]
        if not any(profile):
            assert np.isnan(got[u])
            continue
        want = _steck(profile, [genres[i] for i in lists[u]], n_aspects, alpha, rank, divergence == "js")
        assert got[u] == pytest.approx(want, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["kl", "js"]))
def test_zero_when_the_list_reproduces_the_profile(seed: int, divergence: str) -> None:
    rng = np.random.default_rng(seed)
    n_items, n_aspects = 10, 3
    genres = [sorted(set(rng.integers(0, n_aspects, rng.integers(1, 3)).tolist())) for _ in range(n_items)]
    profile = sorted(rng.choice(n_items, rng.integers(1, 6), replace=False).tolist())
    # the listed items are copies of the profile's (same genres, new item ids): the same distribution
    listed = list(range(n_items, n_items + len(profile)))
    data = _input(genres + [genres[i] for i in profile], n_aspects, [profile], [listed])
    value = parse_metric(f"miscalibration@{len(listed)}(divergence={divergence})").per_user(data)[0]
    assert value == pytest.approx(0.0, abs=1e-12)


def test_the_axioms_each_form_satisfies() -> None:
    table = axiom_table(calibration_metrics())
    for name, satisfied in AXIOMS.items():
        assert [a for a in ALL_AXIOMS if table.loc[name, a] == "✓"] == list(satisfied), name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("miscalibration@10(alpha=0)", "alpha must be in (0, 1]"),
        ("miscalibration@10(alpha=1.5,divergence=js)", "alpha must be in [0, 1]"),
        ("miscalibration@10(weighting=log)", "weighting must be one of uniform, rank"),
    ],
)
def test_bad_parameters_are_refused_when_read(text: str, message: str) -> None:
    with pytest.raises(MetricError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        parse_metric(text)


def test_cli_needs_aspects_for_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {
        "train": "u1,i1,5\nu1,i2,5\nu2,i3,5\n",
        "truth": "u1,i4,5\nu2,i1,5\n",
        "recs": "u1,i3,0.9\nu1,i4,0.8\nu2,i1,0.9\nu2,i2,0.5\n",
        "aspects": "i1,drama\ni2,comedy\ni3,drama\ni4,comedy\n",
    }
    paths = {}
    for name, text in files.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text(text, encoding="utf-8")
    base = ["evaluate", "--truth", str(paths["truth"]), "--recs", str(paths["recs"]), "--train", str(paths["train"])]
    status = main([*base, "--metrics", "miscalibration@2"])
    captured = capsys.readouterr()
    assert status == 2 and "aspects" in captured.err and len(captured.err.strip().splitlines()) == 1
    status = main([*base, "--aspects", str(paths["aspects"]), "--metrics", "miscalibration@2", "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    # u1: profile (1/2, 1/2), list drama, comedy: 0; u2: profile drama, list drama, comedy: log(1 / (0.99/2 + 0.01))
    assert json.loads(captured.out)["miscalibration@2"] == pytest.approx(np.log(1 / 0.505) / 2)
