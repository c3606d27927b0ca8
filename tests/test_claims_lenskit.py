"""``convention="lenskit"`` against LensKit's ranking metrics, transcribed, on generated runs.

tests/peers/lenskit holds LensKit's own fixed test cases; this adds generated runs with ties, empty lists and
cutoffs beyond the lists. LensKit (2025) needs Python >= 3.12 and is not installed here: the ``measure_list`` bodies
below are copied from lenskit/lkpy at 3bd1c175d6dae4e30da906e4f986797f214d1fe8 (MIT), the commit the preset was
read from: src/lenskit/metrics/ranking/_pr.py (Precision, Recall), _map.py (AveragePrecision), _hit.py (Hit),
_recip.py (RecipRank), _dcg.py (NDCG with its default binary gain, ``_binary_dcg``, ``fixed_dcg``), _rbp.py (RBP,
patience 0.85, not normalised: divided by the weights' series sum) and _weighting.py (LogRankWeight
log(2) / log(max(r, 2)), GeometricRankWeight p^(r - 1)); ``RankingMetricBase.truncate`` keeps the first n items.

LensKit's relevance is membership of the test list (every test rating): the runs below use receval's default
threshold, the lowest rating, which makes every test rating relevant. LensKit measures every output list
(``MeasurementCollector.add_collection_measurements``), an empty one included: a test user without a
recommendation below has an empty output list, and a truth user of receval without rows in the run has an empty
list. Its summary is the mean of the lists' values, NaN left out.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval


# ----------------------------------------------------------------------------------- LensKit, transcribed
class _Items:
    """The parts of ``ItemList`` the metrics use: ids in order, ``isin``, 1-based ``ranks``, ``[:n]``."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = list(ids)

    def __len__(self) -> int:
        return len(self.ids)

    def isin(self, other: _Items) -> np.ndarray:
        return np.array([i in set(other.ids) for i in self.ids], dtype=bool)

    def ranks(self) -> np.ndarray:
        return np.arange(1, len(self.ids) + 1, dtype=np.int32)


def _truncate(recs: _Items, n: int | None) -> _Items:
    return _Items(recs.ids[:n]) if n is not None and len(recs) > n else recs


def _log_weight(ranks):  # LogRankWeight(base=2, offset=0).weight
    return np.log(2) / np.log(np.maximum(ranks, 2))


def _precision(recs, test, n):
    recs = _truncate(recs, n)
    nrecs = len(recs)
    if nrecs == 0:
        return np.nan
    ngood = recs.isin(test).sum()
    return ngood / nrecs


def _recall(recs, test, n):
    recs = _truncate(recs, n)
    ngood = recs.isin(test).sum()
    nrel = len(test)
    if n is not None and n < nrel:
        nrel = n
    return ngood / nrel


def _average_precision(recs, test, n):
    recs = _truncate(recs, n)
    nrecs = len(recs)
    if nrecs == 0:
        return np.nan
    good = recs.isin(test)
    sum_good = np.cumsum(good)
    ranks = recs.ranks()
    ap_sum = np.sum(sum_good[good] / ranks[good]).item()
    denom = min(len(test), len(recs))
    return ap_sum / denom


def _hit(recs, test, n):
    if len(test) == 0:
        return np.nan
    recs = _truncate(recs, n)
    return 1 if np.any(recs.isin(test)) else 0


def _recip_rank(recs, test, n):
    if len(test) == 0:
        return np.nan
    recs = _truncate(recs, n)
    good = recs.isin(test)
    (npz,) = np.nonzero(good)
    if len(npz):
        return 1.0 / (npz[0] + 1.0)
    return 0.0


def _ndcg(recs, test, n):
    recs = _truncate(recs, n)
    if len(test) == 0:
        return np.nan
    good = recs.isin(test)  # _binary_dcg
    realized = np.sum(_log_weight(recs.ranks()[good])).item()
    nrel = len(test)
    if n and n < nrel:
        nrel = n
    ideal = np.sum(_log_weight(np.arange(1, nrel + 1))).item()  # fixed_dcg
    return realized / ideal


def _rbp(recs, test, n, patience=0.85):
    recs = _truncate(recs, n)
    if len(test) == 0:
        return np.nan
    good = recs.isin(test)
    weights = np.exp(np.log(patience) * (recs.ranks() - 1))  # GeometricRankWeight
    return np.sum(weights[good]).item() / (1 / (1 - patience))  # normalization = series_sum


LENSKIT = {
    "precision": _precision,
    "recall": _recall,
    "map": _average_precision,
    "hit_rate": _hit,
    "mrr": _recip_rank,
    "ndcg": _ndcg,
    "rbp": _rbp,
}
ITEMS = [f"i{n}" for n in range(15)]


@st.composite
def runs(draw) -> tuple[dict[str, list[str]], dict[str, dict[str, int]]]:
    """Lists of 0-12 distinct items (0: an empty output list); test ratings 1-5 on 1-8 items."""
    lists, test = {}, {}
    for u in range(draw(st.integers(1, 7))):
        lists[f"u{u}"] = draw(st.permutations(ITEMS))[: draw(st.integers(0, 12))]
        rated = draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=8, unique=True))
        test[f"u{u}"] = {i: draw(st.integers(1, 5)) for i in rated}
    test["scale"] = {"i0": 1, "i1": 5}  # a 1-5 scale whatever was drawn; an empty list in both libraries
    lists["scale"] = []
    return lists, test


@pytest.mark.filterwarnings("ignore:none of the item ids")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.sampled_from([1, 3, 5, 20, None]))
def test_ranking_metrics_equal_lenskits(run, k) -> None:
    lists, test = run
    rows = [(u, i, float(10 - r // 2)) for u, items in lists.items() for r, i in enumerate(items)]  # tied pairs
    recs = pd.DataFrame(rows, columns=["user", "item", "score"])
    truth = pd.DataFrame([(u, i, g) for u, t in test.items() for i, g in t.items()], columns=["user", "item", "rating"])
    cut = "" if k is None else f"@{k}"
    names = [m for m in LENSKIT if k is not None or m in ("map", "mrr", "rbp")]  # the others need a cutoff
    metrics = [f"{m}{cut}" for m in names]
    result = receval.evaluate(recs, truth, metrics, convention="lenskit")
    assert "input" in result.conventions.tie_break
    table = result.per_user.set_index("user")
    for name, metric in zip(names, metrics, strict=True):
        expected = {u: LENSKIT[name](_Items(lists[u]), _Items(list(test[u])), k) for u in lists}
        for user, value in expected.items():
            got = float(table.loc[user, metric])
            assert (math.isnan(got) and math.isnan(value)) or got == pytest.approx(value, abs=1e-12), (metric, user)
        scored = [v for v in expected.values() if not math.isnan(v)]
        if scored:
            assert result.summary[metric] == pytest.approx(np.mean(scored), abs=1e-12), metric
        else:  # every list empty: no value, in both
            assert math.isnan(result.summary[metric]), metric
