"""Catalogue-level presets against their libraries' code, transcribed: LensKit's ``ListGini``, RecTools'
``CatalogCoverage``. Neither library is installable here (LensKit 2025 needs Python 3.12, RecTools pins old
pandas), so their code is copied below from the commits receval.metrics.conventions names:

- lenskit/lkpy at 3bd1c175d6dae4e30da906e4f986797f214d1fe8 (MIT): src/lenskit/metrics/ranking/_gini.py
  (``ListGini.measure_list``: the truncated list's item numbers in the item vocabulary, weight 1;
  ``GiniAccumulator``: totals over the vocabulary, divided by their sum) and src/lenskit/stats.py ``gini``;
- MobileTeleSystems/RecTools at 41a5a639a78bd07fa313d12b5d39bc140199c5f5 (Apache 2.0): rectools/metrics/catalog.py
  (``CatalogCoverage.calc``: distinct items at rank <= k, divided by len(catalog) when ``normalize``).

The catalogue (LensKit's vocabulary, RecTools' ``catalog``) is what receval takes as the catalogue: the items of the
truth, the lists and the training data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval

ITEMS = [f"i{n}" for n in range(12)]


# ----------------------------------------------------------------------------------- LensKit, transcribed
def _lenskit_gini(xs) -> float:  # src/lenskit/stats.py gini (its warnings left out)
    xs = np.asarray(xs)
    n = len(xs)
    xs = np.sort(xs)
    ranks = np.arange(1, n + 1, dtype=np.float64)
    ranks *= 2
    ranks -= n + 1
    num = np.sum(xs * ranks)
    denom = n * np.sum(xs, dtype=np.float64)
    return max(num / denom, 0)


def _list_gini(lists: dict[str, list[str]], n: int, vocabulary: list[str]) -> float:
    totals = np.zeros(len(vocabulary))  # GiniAccumulator.__init__
    for items in lists.values():
        ids = np.array([vocabulary.index(i) for i in items[:n]], dtype=np.int32)  # truncate, numbers
        totals[ids] += 1.0  # GiniAccumulator.add with ListGini's weight 1.0
    dist = totals / totals.sum()  # GiniAccumulator.accumulate
    return _lenskit_gini(dist)


# ----------------------------------------------------------------------------------- RecTools, transcribed
def _catalog_coverage(reco: pd.DataFrame, catalog: list[str], k: int, normalize: bool) -> float:
    res = reco.loc[reco["rank"] <= k, "item"].nunique()
    if normalize:
        return res / len(catalog)
    return res


@st.composite
def worlds(draw) -> tuple[dict[str, list[str]], pd.DataFrame, pd.DataFrame | None]:
    """Lists of 1-10 distinct items (tied scores among them), a truth with items no list has, sometimes a training
    table with more items."""
    lists = {f"u{u}": draw(st.permutations(ITEMS))[: draw(st.integers(1, 10))] for u in range(draw(st.integers(1, 6)))}
    truth_rows = [(u, draw(st.sampled_from(ITEMS)), 5.0) for u in lists]
    truth = pd.DataFrame([*truth_rows, ("other", "only_in_truth", 1.0)], columns=["user", "item", "rating"])
    train = None
    if draw(st.booleans()):
        extra = draw(st.lists(st.sampled_from(["t0", "t1", "t2", *ITEMS]), min_size=1, max_size=5, unique=True))
        train = pd.DataFrame([("v", i, 1.0) for i in extra], columns=["user", "item", "rating"])
    return lists, truth, train


def _frames(lists: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(u, i, float(10 - r // 2), r + 1) for u, items in lists.items() for r, i in enumerate(items)]
    return pd.DataFrame(rows, columns=["user", "item", "score", "rank"])  # scores tie in pairs, ranks do not


def _catalogue(recs: pd.DataFrame, truth: pd.DataFrame, train: pd.DataFrame | None) -> list[str]:
    tables = [recs, truth] if train is None else [recs, truth, train]
    return sorted(set().union(*(set(t["item"]) for t in tables)))


@pytest.mark.filterwarnings("ignore:none of the item ids")
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.sampled_from([1, 2, 5, 20]))
def test_gini_and_coverage_presets_equal_lenskit_and_rectools(world, k: int) -> None:
    lists, truth, train = world
    recs = _frames(lists)
    catalogue = _catalogue(recs, truth, train)
    metrics = [f"gini@{k}(convention=lenskit)", f"coverage@{k}(convention=rectools)"]
    # ranks given (1..n per list): the lists are those orders whatever tie rule; RecTools reads ranks as positions
    result = receval.evaluate(recs.drop(columns="score"), truth, metrics, train=train, ranks="positions")
    assert result.summary[metrics[0]] == pytest.approx(_list_gini(lists, k, catalogue), abs=1e-12)
    assert result.summary[metrics[1]] == pytest.approx(_catalog_coverage(recs, catalogue, k, True), abs=1e-12)
    # the same numbers from tied scores kept in input order (the presets' tie rule)
    by_score = receval.evaluate(recs.drop(columns="rank"), truth, metrics, train=train)
    assert by_score.summary == pytest.approx(result.summary, abs=1e-12)


def test_rectools_coverage_without_normalize_is_a_count_receval_does_not_give() -> None:
    """The docs' note: RecTools' default (normalize=False) is the number of distinct items; receval's is the share."""
    lists = {"u0": ["i0", "i1"], "u1": ["i1", "i2"]}
    recs = _frames(lists)
    truth = pd.DataFrame([("u0", "i3", 1.0), ("u1", "i0", 1.0)], columns=["user", "item", "rating"])
    ours = receval.evaluate(recs, truth, ["coverage@2(convention=rectools)"]).summary["coverage@2(convention=rectools)"]
    assert _catalog_coverage(recs, ITEMS[:4], 2, False) == 3
    assert ours == _catalog_coverage(recs, ITEMS[:4], 2, True) == 0.75
