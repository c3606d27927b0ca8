"""Items only the lists name (not the truth's): the Arrow dictionary path numbers them as the generic path does.

The catalogue of :func:`receval.evaluation.align.align` is the truth's items, then the items only the lists
name in order of first appearance user by user; an Arrow dictionary column (what the readers return) takes
them from its codes, any other column through :func:`receval.data.vocab.encode`. Both must give the same
catalogue, the same rankings and the same values, with users out of order, repeated unseen items, users the
truth does not know, and integer ids.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from receval.evaluation import evaluate
from receval.evaluation.align import align


def _data(rng: np.random.Generator, as_text: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    users = rng.permutation(np.repeat(np.arange(40), 8))  # rows of a user scattered: order by user is stable
    items = rng.integers(0, 300, len(users)) * 3 + 1  # most ids not in the truth, several repeated
    truth = pd.DataFrame({"user": np.repeat(np.arange(1, 40), 3), "item": rng.integers(0, 60, 117) * 3 + 1})
    truth = truth.drop_duplicates(["user", "item"]).assign(rating=1.0)
    recs = pd.DataFrame({"user": users, "item": items, "score": rng.random(len(users))})
    recs = recs.drop_duplicates(["user", "item"])  # an item once per list
    if as_text:
        recs, truth = recs.astype({"user": str, "item": str}), truth.astype({"user": str, "item": str})
    return recs, truth


def _arrow(frame: pd.DataFrame) -> pa.Table:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for name in ("user", "item"):
        column = pa.chunked_array([c.dictionary_encode() for c in table[name].chunks])
        table = table.set_column(table.schema.get_field_index(name), name, column)
    return table


@pytest.mark.parametrize("as_text", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_arrow_dictionary_and_plain_columns_give_one_catalogue(seed: int, as_text: bool) -> None:
    recs, truth = _data(np.random.default_rng(seed), as_text)
    with pytest.warns(UserWarning, match="have no truth"):  # user 0 has no truth: dropped in both paths
        plain = align(recs, truth, width=8)
    with pytest.warns(UserWarning, match="have no truth"):
        arrow = align(_arrow(recs), truth, width=8)
    n_truth = len(plain.truth.item_ids)
    assert len(plain.item_ids) > n_truth + 50  # many items only the lists name
    assert plain.item_ids.tolist() == arrow.item_ids.tolist()
    assert [type(v) for v in plain.item_ids] == [type(v) for v in arrow.item_ids]
    assert np.array_equal(plain.rankings, arrow.rankings)
    # first appearance, user by user: the first list naming an unseen item numbers it first
    seen: dict[object, int] = {}
    known = set(plain.truth.item_ids.tolist())
    kept = recs[recs["user"].isin(set(truth["user"]))]
    for item in kept.sort_values("user", kind="stable")["item"]:
        if item not in known and item not in seen:
            seen[item] = len(seen)
    assert plain.item_ids[n_truth : n_truth + len(seen)].tolist() == list(seen)
    metrics = ["ndcg@5", "coverage@8", "recall@8"]
    with pytest.warns(UserWarning):
        a = evaluate(recs, truth, metrics)
    with pytest.warns(UserWarning):
        b = evaluate(_arrow(recs), truth, metrics)
    assert a.summary == b.summary
