"""receval's leave-last-out + ``convention=recbole`` equals RecBole's leave-one-out full-sort evaluation.

RecBole's documented protocol for it (``eval_args: {split: {LS: valid_and_test}, order: TO, mode: full}``) is
transcribed below with lists and loops, from RUCAIBox/RecBole's source:

- ``recbole/data/dataset/dataset.py`` (commit 58b9bd1c8b61b64be64e11a62066d119298d4768): ``build`` sorts the
  interactions by time (``order: TO``), ``leave_one_out(..., "valid_and_test")`` calls
  ``_split_index_by_leave_one_out(grouped_index, leave_one_num=2)``: per user, the last interaction is the test
  one, the one before it the validation one (``min(2, n - 1)`` of them), the rest trains;
- the full-sort evaluation data loader (``recbole/data/dataloader/general_dataloader.py``, commit
  1ce52e08bf163e7784518a69f10e6c46b311329b, ``_set_user_property``): a user's history is ``used_item -
  positive_item``, the items of every phase up to the test one minus the test positives, i.e. training and
  validation items;
- ``recbole/trainer/trainer.py`` (commit 7e8e0b6c84fa4a5dcaf7b623726f504050621bc1, ``_full_sort_batch_eval``):
  ``scores[:, 0] = -inf`` (the ``[PAD]`` item) and ``scores[history_index] = -inf``; then ``torch.topk``;
- ``recbole/evaluator/metrics.py`` (commit 7b02be5ec80a88310f2d04a27a82adfcbb5dc211, as in tests/peers/recbole):
  ``Hit``, ``MRR``, ``NDCG`` (ideal DCG over ``min(pos_len, k)`` positions), ``Recall``, ``Precision``, ``MAP``,
  each the mean over test users, printed with ``metric_decimal_place`` = 4.

The model is a fixed score matrix without ties (``torch.topk``'s order of ties is unspecified), so the case
tests the protocol (split, history mask, full sort over the catalogue) and the metric formulas, not a model.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from receval.data.interactions import Interactions
from receval.evaluation import evaluate_model
from receval.recommenders.base import Recommender
from receval.split import leave_one_out

K = 10


class FixedScores(Recommender):
    """Scores read from a (users x items) table: the same model in both libraries."""

    def __init__(self, table: np.ndarray | None = None):
        self.table = table

    def fit(self, train: Interactions) -> FixedScores:
        self._start_fit(train)
        return self

    def score(self, users: np.ndarray) -> np.ndarray:
        return np.asarray(self.table)[self._check_users(users)]


def _log(seed: int = 0, n_users: int = 25, n_items: int = 30) -> Interactions:
    rng = np.random.default_rng(seed)
    users, items = [], []
    for u in range(n_users):
        n = int(rng.integers(1, 12))  # 1 and 2 interactions included: RecBole's min(2, n - 1) edge cases
        users += [u] * n
        items += list(rng.choice(n_items, n, replace=False))
    times = rng.permutation(len(users))  # distinct timestamps: RecBole's sort by time has no ties to break
    return Interactions.from_ids(users, items, np.ones(len(users)), timestamps=times)


def _recbole(data: Interactions, table: np.ndarray) -> dict[str, float]:
    """RecBole's LS valid_and_test, full sort, Hit/MRR/NDCG/Recall/Precision/MAP@K, as lists and loops."""
    order = sorted(range(data.n_ratings), key=lambda r: int(data.timestamps[r]))  # order: TO
    grouped: dict[int, list[int]] = {}
    for r in order:
        grouped.setdefault(int(data.users[r]), []).append(r)
    train, valid, test = [], [], []
    for index in grouped.values():  # _split_index_by_leave_one_out(grouped_index, leave_one_num=2)
        tot = len(index)
        legal = min(2, tot - 1)
        pr = tot - legal
        train += index[:pr]
        parts = [valid, test]
        for i in range(legal):
            parts[-legal + i].append(index[pr])
            pr += 1
    n_items = data.n_items + 1  # RecBole's item 0 is [PAD]; receval item j is RecBole item j + 1
    used: dict[int, set[int]] = {}
    for r in train + valid + test:
        used.setdefault(int(data.users[r]), set()).add(int(data.items[r]) + 1)
    positive: dict[int, set[int]] = {}
    for r in test:
        positive.setdefault(int(data.users[r]), set()).add(int(data.items[r]) + 1)
    sums = dict.fromkeys(("hit", "mrr", "ndcg", "recall", "precision", "map"), 0.0)
    for u, pos in positive.items():
        scores = [-math.inf] + [float(s) for s in table[u]]  # scores[:, 0] = -inf
        for j in used[u] - pos:  # history_item = used_item - positive_item
            scores[j] = -math.inf
        top = sorted(range(n_items), key=lambda j: -scores[j])[:K]  # torch.topk (no ties here)
        hits = [1 if j in pos else 0 for j in top]
        sums["hit"] += float(any(hits))
        first = next((i for i, h in enumerate(hits) if h), None)
        sums["mrr"] += 0.0 if first is None else 1.0 / (first + 1)
        dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
        idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(pos), K)))
        sums["ndcg"] += dcg / idcg
        sums["recall"] += sum(hits) / len(pos)
        sums["precision"] += sum(hits) / K
        # MAP: sum of precision@i at hit positions over min(pos_len, K) (RecBole's MAP.metric_info)
        sums["map"] += sum(sum(hits[: i + 1]) / (i + 1) for i, h in enumerate(hits) if h) / min(len(pos), K)
    return {name: value / len(positive) for name, value in sums.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_leave_last_out_full_sort_equals_recboles(seed):
    data = _log(seed)
    table = np.random.default_rng(100 + seed).random((data.n_users, data.n_items))
    expected = _recbole(data, table)
    train, test = leave_one_out(data, "last", seed=0)  # train = RecBole's train + valid
    metrics = [f"hit_rate@{K}", f"mrr@{K}", f"ndcg@{K}", f"recall@{K}", f"precision@{K}", f"map@{K}"]
    result = evaluate_model(FixedScores(table), train, test, metrics, k=K, convention="recbole", seed=0)
    got = dict(zip(("hit", "mrr", "ndcg", "recall", "precision", "map"), result.summary.values(), strict=True))
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # RecBole prints each metric with metric_decimal_place = 4
    assert {m: round(v, 4) for m, v in got.items()} == {m: round(v, 4) for m, v in expected.items()}
    assert result.conventions.users_evaluated == len(test.to_frame())  # one test event per user with two or more
