"""RecBole's own metric test cases (tests/peers/recbole/cases.json) run through receval with convention=recbole;
its coverage and Gini formulas, with the [PAD] item its num_items counts, against receval's."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval
from peers import peer_cases

CASES = peer_cases.load("recbole")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_recbole_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)


# RecBole's ItemCoverage.get_coverage and GiniIndex.get_gini, verbatim from recbole/evaluator/metrics.py at commit
# 7b02be5ec80a88310f2d04a27a82adfcbb5dc211 (MIT licence, tests/peers/recbole/SOURCE.md). num_items is
# dataset.num(item_id), which counts the [PAD] token (item id 0): the catalogue's n items + 1.
def _recbole_coverage(item_matrix: np.ndarray, num_items: int) -> float:
    unique_count = np.unique(item_matrix).shape[0]
    return unique_count / num_items


def _recbole_gini(item_matrix: np.ndarray, num_items: int) -> float:
    item_count = dict(Counter(item_matrix.flatten()))
    sorted_count = np.array(sorted(item_count.values()))
    num_recommended_items = sorted_count.shape[0]
    total_num = item_matrix.shape[0] * item_matrix.shape[1]
    idx = np.arange(num_items - num_recommended_items + 1, num_items + 1)
    gini_index = np.sum((2 * idx - num_items - 1) * sorted_count) / total_num
    gini_index /= num_items
    return gini_index


def test_recbole_coverage_and_gini_count_the_pad_item() -> None:
    # the 4-item example: every top-1 list holds item 1 (RecBole's ids 1..4, num_items = 5)
    lists = pd.DataFrame({"user": ["a", "b"], "item": [1, 1], "rank": [1, 1]})
    truth = pd.DataFrame({"user": ["a", "b", "b", "b"], "item": [1, 2, 3, 4]})
    summary = receval.evaluate(lists, truth, ["coverage@1", "gini@1"], convention="recbole").summary
    assert summary["coverage@1"] == _recbole_coverage(np.array([[1], [1]]), 5) == 0.2  # receval on main: 0.25
    assert summary["gini@1"] == pytest.approx(_recbole_gini(np.array([[1], [1]]), 5)) == pytest.approx(0.8)  # 0.75


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.integers(1, 6), st.integers(1, 4), st.data())
def test_recbole_coverage_and_gini_equal_recboles_formula(n_items: int, n_users: int, k: int, data) -> None:
    k = min(k, n_items)
    rows = [data.draw(st.permutations(range(1, n_items + 1)))[:k] for _ in range(n_users)]
    item_matrix = np.array(rows)
    lists = pd.DataFrame(
        [(f"u{u}", item, rank + 1) for u, row in enumerate(rows) for rank, item in enumerate(row)],
        columns=["user", "item", "rank"],
    )
    # the truth names every user (a user without truth is left out) and every catalogue item, so that receval's
    # catalogue is RecBole's items 1..n
    pairs = {(f"u{i % n_users}", i % n_items + 1) for i in range(max(n_users, n_items))}
    truth = pd.DataFrame(sorted(pairs), columns=["user", "item"])
    summary = receval.evaluate(lists, truth, [f"coverage@{k}", f"gini@{k}"], convention="recbole").summary
    assert summary[f"coverage@{k}"] == pytest.approx(_recbole_coverage(item_matrix, n_items + 1), rel=1e-12)
    assert summary[f"gini@{k}"] == pytest.approx(_recbole_gini(item_matrix, n_items + 1), rel=1e-12, abs=1e-15)
