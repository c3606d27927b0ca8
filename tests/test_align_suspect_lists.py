"""The repeat check of a ``per_row`` catalogue sorts only the lists that may name an item twice.

:func:`receval.evaluation.align._suspect_lists` picks them from the run's codes (the lists of
the users of rows sharing a code; none when every code is distinct); the check over those lists
must refuse the same runs, by the same message, as the check that sorts every list (what
``_check_row_duplicates`` did before), and every list that names an id twice must be picked.
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
from test_align_list_only_items import _outcome  # values and per-user tables, or the refusal

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
            patch.setattr(align_module, "_suspect_lists", lambda eval_users, *_: np.arange(len(eval_users)))
        yield


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
        expected = _outcome(recs, truth, METRICS)
    with per_row(every_list=False):
        assert _outcome(recs, truth, METRICS) == expected


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 8), st.integers(1, 12), st.integers(1, 30), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_every_list_naming_an_id_twice_is_a_suspect(n_lists, width, n_ids, per_slice, seed):
    """Codes as :func:`_list_items` gives them: ids numbered by first appearance in slices of whole lists, each
    slice's codes after the one's before; some users left out (-1), some lists' users without a rankings row."""
    rng = np.random.default_rng(seed)
    texts = rng.integers(0, n_ids, (n_lists, width))
    codes = np.empty(n_lists * width, dtype=np.int32)
    base = 0
    for start in range(0, n_lists, per_slice):
        block = texts[start : start + per_slice].ravel()
        first = {int(t): base + rng.integers(0, 3) + j for j, t in enumerate(dict.fromkeys(block.tolist()))}
        codes[start * width : start * width + len(block)] = [first[int(t)] for t in block]
        base = max(first.values()) + 1
    users = np.where(rng.random(n_lists) < 0.2, -1, rng.permutation(n_lists))
    row_users = np.repeat(users, width)
    eval_users = np.flatnonzero(rng.random(n_lists) < 0.8)  # truth users with a rankings row, ascending
    got = align_module._suspect_lists(eval_users, row_users, codes, n_lists)
    twice = {int(user) for user, row in zip(users, texts, strict=True) if user >= 0 and len(set(row.tolist())) < width}
    assert {int(eval_users[row]) for row in got} >= twice & set(eval_users.tolist())
    assert np.all(np.diff(got) > 0)


def test_a_run_of_distinct_ids_sorts_no_list():
    """Every code once (the lists name distinct ids, truth items among them): nothing to sort."""
    codes = np.array([9, 1, 10, 11, 2, 12], dtype=np.int32)  # 1 and 2: truth items' codes, each named once
    assert align_module._suspect_lists(np.array([0, 1, 2]), np.array([0, 0, 1, 1, 2, 2]), codes, 3).tolist() == []
