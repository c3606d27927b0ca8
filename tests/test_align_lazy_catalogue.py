"""The catalogue's ids are built only when read: the lazy :class:`~receval.evaluation.align.Catalogue` gives the ids,
rankings, values and messages of the eager formulation.

A run read by receval's readers holds its item ids as an Arrow dictionary; the items only the lists name are kept
as positions in it, not Python objects. The eager formulation is the same tables with plain (pandas) columns,
whose unseen ids go through :func:`receval.data.vocab.encode` as arrays: both must give one catalogue (ids, types,
order), the same rankings under every tie rule, the same metric values (a debiased one, which reads the ids,
among them) and the same one-line errors naming an item.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from receval.errors import MetricError
from receval.evaluation import evaluate
from receval.evaluation.align import Catalogue, align
from test_align_catalogue import _arrow  # ids dictionary-encoded, as the readers give them


def _tables(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Truth and lists over a small id range: ids repeat across truth and lists, many items only the lists name."""
    as_text = draw(st.booleans())
    n_users = draw(st.integers(1, 6))
    truth_rows = draw(st.lists(st.tuples(st.integers(0, n_users - 1), st.integers(0, 15)), min_size=1, max_size=20))
    rec_rows = draw(st.lists(st.tuples(st.integers(0, n_users), st.integers(0, 40)), min_size=1, max_size=40))
    truth = pd.DataFrame(truth_rows, columns=["user", "item"]).drop_duplicates()
    truth["rating"] = np.arange(len(truth)) % 5 + 1.0
    recs = pd.DataFrame(rec_rows, columns=["user", "item"]).drop_duplicates()
    recs = recs[recs["user"].isin(set(truth["user"]))]  # users the truth does not know: tested elsewhere
    assume(len(recs) > 0)
    recs["score"] = np.asarray(draw(st.lists(st.integers(0, 3), min_size=len(recs), max_size=len(recs))), float)
    if as_text:  # text ids that do not sort as numbers do ("i10" < "i9")
        truth = truth.assign(user="u" + truth["user"].astype(str), item="i" + truth["item"].astype(str))
        recs = recs.assign(user="u" + recs["user"].astype(str), item="i" + recs["item"].astype(str))
    return recs.reset_index(drop=True), truth.reset_index(drop=True)


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    return _tables(draw)


@pytest.mark.filterwarnings("ignore:none of the item ids")  # lists of unseen items only: all misses, both ways
@given(tables(), st.sampled_from(["input", "id", "trec_eval"]))
def test_lazy_catalogue_is_the_eager_one(data: tuple[pd.DataFrame, pd.DataFrame], ties: str) -> None:
    recs, truth = data
    plain = align(recs, truth, ties=ties)  # type: ignore[arg-type]
    lazy = align(_arrow(recs), truth, ties=ties)  # type: ignore[arg-type]
    assert len(lazy.catalogue) == len(plain.item_ids)
    # one id at a time, before the whole array exists (a message's read)
    assert [lazy.catalogue[j] for j in range(len(lazy.catalogue))] == plain.item_ids.tolist()
    assert lazy.item_ids.tolist() == plain.item_ids.tolist()
    assert [type(v) for v in lazy.item_ids] == [type(v) for v in plain.item_ids]
    assert lazy.item_ids.dtype == plain.item_ids.dtype
    assert np.array_equal(lazy.rankings, plain.rankings)
    assert np.array_equal(lazy.truth_rows.toarray(), plain.truth_rows.toarray())


def test_evaluate_builds_no_id_of_the_unseen_items() -> None:
    truth = pd.DataFrame({"user": ["a", "b"], "item": ["x", "y"], "rating": [1.0, 1.0]})
    recs = pd.DataFrame({"user": ["a", "a", "b"], "item": ["z", "x", "w"], "score": [0.9, 0.5, 0.7]})
    aligned = align(_arrow(recs), truth)
    assert aligned.catalogue._ids is None  # z and w are positions in the Arrow dictionary, not Python strings
    assert len(aligned.catalogue) == 4 and aligned.catalogue[3] == "w"
    assert aligned.catalogue._ids is None  # one id read alone
    assert aligned.item_ids.tolist() == ["x", "y", "z", "w"]


def test_catalogue_reads_like_its_array() -> None:
    catalogue = Catalogue(np.array([3, 4]), pa.array([9, 7, 5]), np.array([2, 0]))
    ids = np.array([3, 4, 5, 9])
    assert len(catalogue) == 4 and catalogue[2] == 5 and catalogue[3] == 9
    assert np.array_equal(np.asarray(catalogue), ids) and np.array_equal(catalogue[np.array([3, 0])], [9, 3])
    assert pd.Index(catalogue).equals(pd.Index(ids))  # as the propensity models read the ids
    assert Catalogue(np.array(["a"], dtype=object)).ids.tolist() == ["a"]


@pytest.mark.parametrize("as_text", [True, False])
def test_debiased_metric_reads_the_same_ids(as_text: bool) -> None:
    rng = np.random.default_rng(7)
    truth = pd.DataFrame({"user": np.repeat(np.arange(30), 4), "item": rng.integers(0, 50, 120)}).drop_duplicates()
    truth["rating"] = rng.integers(1, 6, len(truth)).astype(float)
    recs = pd.DataFrame({"user": np.repeat(np.arange(30), 10), "item": rng.permutation(np.arange(300) + 20)})
    recs["score"] = rng.random(len(recs))
    if as_text:
        truth, recs = truth.astype({"user": str, "item": str}), recs.astype({"user": str, "item": str})
    metrics = ["recall@10(estimator=ips)", "ndcg@10", "coverage@10"]
    lazy, eager = evaluate(_arrow(recs), truth, metrics, threshold=3), evaluate(recs, truth, metrics, threshold=3)
    assert lazy.summary == eager.summary
    assert lazy.per_user.equals(eager.per_user)


@pytest.mark.parametrize("as_text", [True, False])
def test_train_and_fallback_read_the_same_ids(as_text: bool) -> None:
    truth = pd.DataFrame({"user": [1, 1, 2, 3], "item": [10, 11, 10, 12], "rating": [1.0] * 4})
    recs = pd.DataFrame({"user": [1, 1, 2], "item": [99, 10, 98], "score": [0.9, 0.5, 0.7]})
    train = pd.DataFrame({"user": [1, 2, 2], "item": [97, 98, 11]})
    if as_text:
        truth, recs, train = (f.astype({"user": str, "item": str}) for f in (truth, recs, train))
    plain = align(recs, truth, train=train)
    lazy = align(_arrow(recs), truth, train=_arrow(train.assign(score=1.0)).drop(["score"]))
    assert lazy.item_ids.tolist() == plain.item_ids.tolist() and np.array_equal(lazy.rankings, plain.rankings)
    assert lazy.train_all is not None and plain.train_all is not None
    assert np.array_equal(lazy.train_all.toarray(), plain.train_all.toarray())
    args = {"metrics": ["recall@3", "coverage@3"], "cold_start": "fallback"}
    a = evaluate(_arrow(recs), truth, train=train, **args)  # type: ignore[arg-type]
    b = evaluate(recs, truth, train=train, **args)  # type: ignore[arg-type]
    assert a.summary == b.summary and a.per_user.equals(b.per_user)


@pytest.mark.parametrize("as_text", [True, False])
def test_messages_name_an_unseen_item_as_before(as_text: bool) -> None:
    truth = pd.DataFrame({"user": [1, 2], "item": [10, 11]})
    twice = pd.DataFrame({"user": [1, 1, 1, 2], "item": [50, 51, 50, 10], "score": [0.9, 0.8, 0.7, 0.1]})
    same_rank = pd.DataFrame({"user": [1, 1, 2], "item": [60, 61, 10], "rank": [1, 1, 1]})
    if as_text:
        truth = truth.astype(str)
        twice, same_rank = twice.astype({"user": str, "item": str}), same_rank.astype({"user": str, "item": str})
    for table, options, item in ((twice, {}, 50), (same_rank, {"ranks": "positions"}, 61)):
        messages = []
        for given_table in (table, _arrow(table)):
            with pytest.raises(MetricError) as caught:
                align(given_table, truth, **options)  # type: ignore[arg-type]
            messages.append(str(caught.value))
        shown = f"'{item}'" if as_text else str(item)
        assert messages[0] == messages[1] and "\n" not in messages[0] and shown in messages[0]
