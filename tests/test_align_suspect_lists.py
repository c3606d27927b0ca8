"""The repeat check of a ``per_row`` catalogue sorts only the lists that may name an item twice.

:func:`receval.evaluation.align._suspect_lists` picks them from the run's codes (a row whose
code is no larger than one before it) and the truth items the lists hold; the check over those
lists must refuse the same runs, by the same message, as the check that sorts every list (what
``_check_row_duplicates`` did before), and every list that names an item twice must be picked.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval.data.tables as tables
import receval.evaluation.align as align_module
from receval.data import _arrow
from receval.data.tables import text_dictionary
from receval.errors import DataError, MetricError
from receval.evaluation import evaluate

METRICS = ["precision@3", "ndcg@4", "map@10", "mrr"]


@contextlib.contextmanager
def per_row(every_list: bool) -> Iterator[None]:
    """Small runs take the per-row path; ``every_list``: the check sorts every list (the check before the change)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(align_module, "_BY_ROW_FROM", 0)
        patch.setattr(_arrow, "_ENCODED_FROM", 0)
        patch.setattr(tables, "_many_distinct", lambda column: True)
        patch.setattr(align_module, "_SLICE", 3)  # several slices of whole users
        if every_list:
            patch.setattr(align_module, "_suspect_lists", lambda rankings, n_truth, codes: np.arange(len(rankings)))
        yield


def _outcome(recs: pa.Table, truth: pa.Table) -> tuple[str, object]:
    try:
        result = evaluate(recs, truth, METRICS, empty_users="zero")
    except (MetricError, DataError) as error:
        return "error", f"{type(error).__name__}: {error}"
    return "ok", (result.summary, {k: np.asarray(v).tolist() for k, v in result.per_user.items()})


@st.composite
def runs(draw: st.DrawFn) -> tuple[pa.Table, pa.Table]:
    """Lists grouped by user over a small pool (repeats within and across lists, truth items among them)."""
    n_users = draw(st.integers(1, 6))
    pool = [f"i{j}" for j in range(draw(st.integers(2, 25)))]
    pairs = draw(st.lists(st.tuples(st.integers(0, n_users - 1), st.sampled_from(pool)), min_size=1, max_size=15,
                          unique=True))  # fmt: skip
    truth = pa.table({"user": text_dictionary(pa.chunked_array([[f"u{u}" for u, _ in pairs]])),
                      "item": text_dictionary(pa.chunked_array([[item for _, item in pairs]])),
                      "rating": [float(j % 5 + 1) for j in range(len(pairs))]})  # fmt: skip
    rows = draw(st.lists(st.tuples(st.integers(0, n_users + 1), st.sampled_from(pool)), min_size=2, max_size=50,
                         unique=not draw(st.booleans())))  # fmt: skip
    rows.sort(key=lambda row: row[0])  # users n_users, n_users + 1: no truth (left out, with a warning)
    scores = draw(st.lists(st.integers(0, 3), min_size=len(rows), max_size=len(rows)))
    cut = sorted(draw(st.lists(st.integers(0, len(rows)), max_size=2)))
    items = [item for _, item in rows]
    column = pa.chunked_array([pa.array(items[a:b], pa.string()) for a, b in itertools.pairwise([0, *cut, len(rows)])])
    recs = pa.table({"user": text_dictionary(pa.chunked_array([[f"u{u}" for u, _ in rows]])), "item": column,
                     "score": pa.array([float(s) for s in scores])})  # fmt: skip
    return recs, truth


@pytest.mark.filterwarnings("ignore:none of the item ids", "ignore:.* user.s. of the recommendations have no truth")
@settings(max_examples=300, deadline=None)
@given(runs())
def test_sorting_the_suspect_lists_refuses_what_sorting_every_list_refuses(run: tuple[pa.Table, pa.Table]) -> None:
    recs, truth = run
    with per_row(every_list=True):
        expected = _outcome(recs, truth)
    with per_row(every_list=False):
        assert _outcome(recs, truth) == expected


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 8), st.integers(2, 12), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_every_list_naming_an_item_twice_is_a_suspect(n_lists, width, n_ids, seed):
    """Codes as :func:`_list_items` gives them (first appearance in slices of whole lists, ascending from slice to
    slice); truth items below ``n_truth``, run rows after them."""
    rng = np.random.default_rng(seed)
    n_truth = 4
    texts = rng.integers(0, n_ids, (n_lists, width))
    is_truth = rng.random((n_lists, width)) < 0.3
    codes = np.empty(n_lists * width, dtype=np.int32)
    base = 0
    for start in range(0, n_lists, 2):  # slices of two lists
        block = texts[start : start + 2].ravel()
        first = {int(t): base + j for j, t in enumerate(dict.fromkeys(block.tolist()))}
        codes[start * width : start * width + len(block)] = [first[int(t)] for t in block]
        base += len(first)
    rankings = (n_truth + np.arange(n_lists * width)).reshape(n_lists, width).astype(np.int32)
    rankings[is_truth] = texts[is_truth] % n_truth  # a truth item: the same text, the same index
    rankings[:, -1] = np.where(rng.random(n_lists) < 0.3, -1, rankings[:, -1])  # a shorter list
    keys = np.where(rankings < n_truth, rankings, n_truth + codes[np.maximum(rankings - n_truth, 0)])
    twice = [row for row, key in enumerate(keys) if len(set(key[rankings[row] >= 0].tolist())) <
             int((rankings[row] >= 0).sum())]  # fmt: skip
    assert set(twice) <= set(align_module._suspect_lists(rankings, n_truth, codes).tolist())


def test_a_run_of_distinct_items_sorts_no_list():
    """Lists of distinct new items, and truth items once each: nothing to sort."""
    codes = np.arange(6, dtype=np.int32) + 9
    rankings = np.array([[0, 3, 4], [5, 6, 1], [7, 8, 0]], dtype=np.int32)  # truth items 0..2, rows 0..5 at 3..8
    assert align_module._suspect_lists(rankings, 3, codes).tolist() == []
