"""``shape=recbole``: RecBole's sampled evaluation (``uni100``), all of a user's positives ranked in one list.

RecBole (RUCAIBox/RecBole, commit 7b02be5ec80a88310f2d04a27a82adfcbb5dc211) evaluates
``uni100`` in ``NegSampleEvalDataLoader`` (recbole/data/dataloader/general_dataloader.py):
a user's test interactions are batched together, ``_neg_sampling`` draws 100 negatives per
interaction (``sample_by_user_ids(user_ids, item_ids, 100)``, ``times = 1 + 100``), and
``Trainer._neg_sample_batch_eval`` writes the candidates' scores into a row of ``-inf``
(a negative drawn twice is one column), which the collector ranks by ``torch.topk``; the
metrics are recbole/evaluator/metrics.py's, over ``pos_index`` (whether each of the top
items is a positive) and ``pos_len`` (the user's positives). The reference below is that
path written out with RecBole's ``metric_info`` functions copied from the commit above
(``np.float`` read as ``float``).
"""

from __future__ import annotations

import numpy as np
import pytest

from receval.data.interactions import Interactions
from receval.data.synthetic import generate
from receval.errors import MetricError
from receval.evaluation.candidates import Candidates, draw_candidates
from receval.evaluation.sampled import evaluate_sampled
from receval.experiment.config import parse_config
from receval.metrics import MetricList, apply_convention, parse_metric
from receval.split import holdout
from receval.stats.sampled import list_metric, pooled_ranks


class Fixed:
    """A fitted model whose scores are a fixed table (users x items)."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = np.asarray(table, dtype=np.float64)
        self.n_items_ = self.table.shape[1]

    def fit(self, train):  # pragma: no cover - evaluated with fitted=True
        return self

    def score(self, users):
        return self.table[np.asarray(users)]


# --- RecBole's metric_info functions (recbole/evaluator/metrics.py @ 7b02be5), np.float -> float
def _rb_hit(pos_index, pos_len):
    result = np.cumsum(pos_index, axis=1)
    return (result > 0).astype(int)


def _rb_mrr(pos_index, pos_len):
    idxs = pos_index.argmax(axis=1)
    result = np.zeros_like(pos_index, dtype=float)
    for row, idx in enumerate(idxs):
        if pos_index[row, idx] > 0:
            result[row, idx:] = 1 / (idx + 1)
        else:
            result[row, idx:] = 0
    return result


def _rb_map(pos_index, pos_len):
    pre = pos_index.cumsum(axis=1) / np.arange(1, pos_index.shape[1] + 1)
    sum_pre = np.cumsum(pre * pos_index.astype(float), axis=1)
    len_rank = np.full_like(pos_len, pos_index.shape[1])
    actual_len = np.where(pos_len > len_rank, len_rank, pos_len)
    result = np.zeros_like(pos_index, dtype=float)
    for row, lens in enumerate(actual_len):
        ranges = np.arange(1, pos_index.shape[1] + 1)
        ranges[lens:] = ranges[lens - 1]
        result[row] = sum_pre[row] / ranges
    return result


def _rb_recall(pos_index, pos_len):
    return np.cumsum(pos_index, axis=1) / pos_len.reshape(-1, 1)


def _rb_ndcg(pos_index, pos_len):
    len_rank = np.full_like(pos_len, pos_index.shape[1])
    idcg_len = np.where(pos_len > len_rank, len_rank, pos_len)
    iranks = np.zeros_like(pos_index, dtype=float)
    iranks[:, :] = np.arange(1, pos_index.shape[1] + 1)
    idcg = np.cumsum(1.0 / np.log2(iranks + 1), axis=1)
    for row, idx in enumerate(idcg_len):
        idcg[row, idx:] = idcg[row, idx - 1]
    ranks = np.zeros_like(pos_index, dtype=float)
    ranks[:, :] = np.arange(1, pos_index.shape[1] + 1)
    dcg = 1.0 / np.log2(ranks + 1)
    dcg = np.cumsum(np.where(pos_index, dcg, 0), axis=1)
    return dcg / idcg


def _rb_precision(pos_index, pos_len):
    return pos_index.cumsum(axis=1) / np.arange(1, pos_index.shape[1] + 1)


RECBOLE = {"hit_rate": _rb_hit, "mrr": _rb_mrr, "map": _rb_map, "recall": _rb_recall, "ndcg": _rb_ndcg,
           "precision": _rb_precision}  # fmt: skip


def recbole_uni(table, cands, test, k, name):
    """RecBole's uni-N evaluation of the scores ``table`` with the negatives of ``cands`` (one row per positive)."""
    values = []
    for user in np.unique(cands.users):
        rows = np.flatnonzero(cands.users == user)
        positives = cands.items[rows]
        row = np.full(table.shape[1], -np.inf)  # Trainer._neg_sample_batch_eval: scores[row_idx, col_idx] = ...
        row[positives] = table[user, positives]
        negatives = cands.negatives[rows].ravel()
        row[negatives] = table[user, negatives]
        top = np.argsort(-row, kind="stable")[:k]  # the collector's torch.topk (distinct scores: no ties)
        pos_index = np.isin(top, positives)[None, :]
        values.append(RECBOLE[name](pos_index, np.array([len(positives)]))[0, k - 1])
    return float(np.mean(values))


def tiny():
    """Two users; user 0 has three test positives whose negatives overlap, user 1 one (hand-computed below)."""
    users = [0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    items = [0, 1, 2, 3, 0, 4, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    data = Interactions.from_arrays(users, items, [5.0] * len(users))
    in_test = np.zeros(len(users), bool)
    in_test[[1, 2, 3, 5]] = True
    train, test = data.subset(~in_test), data.subset(in_test)
    negatives = [[5, 6, 7], [6, 8, 9], [10, 11, 5], [5, 6, 7]]
    design = {
        "sampling": "uniform",
        "n": 3,
        "exponent": 0.0,
        "seed": None,
        "shape": "per-item",
        "exclude": "train+test",
    }
    cands = Candidates(np.array([0, 0, 0, 1]), np.array([1, 2, 3, 4]), np.array(negatives), design,
                       data.user_ids, data.item_ids)  # fmt: skip
    score = np.array([0.0, 0.9, 0.4, 0.1, 0.5, 0.8, 0.7, 0.3, 0.2, 0.6, 0.05, 0.95])
    return train, test, cands, np.tile(score, (3, 1))


def test_hand_computed_example():
    # user 0's one list: 11 (.95), 1 (.9), 5, 6, 9, 2 (.4), 7, 8, 3 (.1), 10: positives at ranks 2, 6 and 9 of 10
    # (the negatives 5 and 6, drawn for two positives each, count once); user 1's: 5, 6, 4 (.5), 7: rank 3 of 4
    train, test, cands, table = tiny()
    metrics = [f"{m}(sampled=3,shape=recbole)" for m in ("recall@3", "ndcg@3", "map@3", "mrr", "auc")]
    metrics.append("hr@3(sampled=3,shape=per-item)")
    res = evaluate_sampled(Fixed(table), train, test, metrics, candidates=cands, fitted=True)
    s = res.summary
    assert s["recall@3(sampled=3,shape=recbole)"] == pytest.approx((1 / 3 + 1) / 2)
    ideal = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert s["ndcg@3(sampled=3,shape=recbole)"] == pytest.approx((1 / np.log2(3) / ideal + 1 / np.log2(4)) / 2)
    assert s["map@3(sampled=3,shape=recbole)"] == pytest.approx((1 / 2 / 3 + 1 / 3 / 1) / 2)  # / min(k, positives)
    assert s["mrr(sampled=3,shape=recbole)"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    # negatives below each positive: user 0 (6 + 3 + 1) / (3 x 7), user 1 1 / 3
    assert s["auc(sampled=3,shape=recbole)"] == pytest.approx((10 / 21 + 1 / 3) / 2)
    # each positive against its own negatives alone: ranks 1, 3, 3 and 3, every one a hit at 3
    assert s["hr@3(sampled=3,shape=per-item)"] == 1.0
    assert res.per_user["recall@3(sampled=3,shape=recbole)"].round(6).tolist() == [round(1 / 3, 6), 1.0]
    assert res.conventions.aggregation["recall@3(sampled=3,shape=recbole)"].startswith("mean over users")


@pytest.mark.parametrize("name", sorted(RECBOLE))
@pytest.mark.parametrize("k", [1, 5, 20])
def test_equals_recbole_code_on_drawn_candidates(name, k):
    train, test = holdout(generate(80, 500, 3000, seed=4), test_fraction=0.3, seed=4)
    table = np.random.default_rng(5).random((train.n_users, train.n_items))
    cands = draw_candidates(train, test, 20, shape="recbole", seed=6)
    metric = f"{name}@{k}(sampled=20,shape=recbole)"
    # threshold 1: every test rating a positive, as RecBole's test interactions are
    res = evaluate_sampled(Fixed(table), train, test, [metric], candidates=cands, fitted=True, threshold=1)
    assert res.summary[metric] == pytest.approx(recbole_uni(table, cands, test, k, name), abs=1e-12)


def test_drawn_shape_recbole_pools_a_sample_per_positive():
    train, test = holdout(generate(80, 500, 3000, seed=4), test_fraction=0.3, seed=4)
    cands = draw_candidates(train, test, 20, shape="recbole", seed=6)
    assert cands.items is not None and len(cands.users) == len(np.unique(test.users * test.n_items + test.items))
    assert cands.design["shape"] == "recbole"
    # drawn by evaluate_sampled itself: the same as the candidates given
    table = np.random.default_rng(5).random((train.n_users, train.n_items))
    metric = "ndcg@10(sampled=20,shape=recbole)"
    drawn = evaluate_sampled(Fixed(table), train, test, [metric], fitted=True, seed=6, threshold=1)
    given = evaluate_sampled(Fixed(table), train, test, [metric], candidates=cands, fitted=True, threshold=1)
    assert drawn.summary == given.summary


def test_recbole_shape_refuses_a_correction():
    train, test, _, table = tiny()
    with pytest.raises(MetricError, match=r"shape=recbole .* correction=bv .* use correction=none"):
        evaluate_sampled(Fixed(table), train, test, ["ndcg@3(sampled=3,shape=recbole,correction=bv)"], fitted=True)


def test_empty_cold_user_ranks_last_in_its_list():
    # user 1 without training: under cold_start=empty its positive is below every negative
    users, items = [0, 0, 1, 2, 2, 2, 2, 2], [0, 1, 4, 0, 1, 4, 5, 6]
    data = Interactions.from_arrays(users, items, [5.0] * len(users))
    in_test = np.array([0, 1, 1, 0, 0, 0, 0, 0], bool)
    train, test = data.subset(~in_test), data.subset(in_test)
    design = {
        "sampling": "uniform",
        "n": 2,
        "exponent": 0.0,
        "seed": None,
        "shape": "per-item",
        "exclude": "train+test",
    }
    # indices: items 0, 1, 4, 5, 6 are 0..4; user 0 holds out index 1, user 1 index 2
    cands = Candidates(np.array([0, 1]), np.array([1, 2]), np.array([[2, 3], [3, 4]]), design,
                       data.user_ids, data.item_ids)  # fmt: skip
    table = np.tile([0.0, 0.9, 0.1, 0.2, 0.3], (3, 1))
    res = evaluate_sampled(Fixed(table), train, test, ["auc(sampled=2,shape=recbole)"], candidates=cands, fitted=True)
    assert res.per_user["auc(sampled=2,shape=recbole)"].tolist() == [1.0, 0.0]


def test_pooled_ranks_and_list_metric_agree_with_a_sort():
    rng = np.random.default_rng(0)
    pos_users = rng.integers(0, 5, 40)
    neg_users = np.repeat(np.arange(5), 30)
    pos, neg = rng.integers(0, 8, 40).astype(float), rng.integers(0, 8, 150).astype(float)  # many ties
    ranks = pooled_ranks(pos_users, pos, neg_users, neg)
    for u in range(5):
        mine = np.sort(ranks[pos_users == u])
        p, q = np.sort(pos[pos_users == u])[::-1], neg[neg_users == u]
        # pessimistic: negatives tied with a positive above it; positives in a row among themselves
        expected = np.sort([1 + (q >= s).sum() + i for i, s in enumerate(p)])
        assert mine.tolist() == expected.tolist()
    ids, hits = list_metric("hit_rate", 1, pos_users, ranks, np.bincount(neg_users))
    assert ids.tolist() == np.unique(pos_users).tolist() and set(hits.tolist()) <= {0.0, 1.0}


def test_recbole_convention_makes_recbole_the_sampled_shape():
    # convention=recbole was dropped from a sampled metric, which kept the per-item shape
    assert parse_metric("ndcg@10(sampled=100,convention=recbole)").params["shape"] == "recbole"
    assert [str(spec) for _, spec in MetricList(["ndcg@10(sampled=100)"], convention="RecBole")] == [
        "ndcg@10(sampled=100,shape=recbole)"
    ]
    # a shape the string names is kept, and the other conventions keep the default shape
    assert parse_metric("ndcg@10(sampled=100,shape=per-user,convention=recbole)").params["shape"] == "per-user"
    assert str(apply_convention("ndcg@10(sampled=100,shape=per-item)", "recbole")) == "ndcg@10(sampled=100)"
    for name in ("trec_eval", "ranx", "lenskit", "msr"):
        assert str(apply_convention("ndcg@10(sampled=100)", name)) == "ndcg@10(sampled=100)"
    # and the value is RecBole's shape's (the hand-computed example above), not the per-item one
    train, test, cands, table = tiny()
    res = evaluate_sampled(Fixed(table), train, test, ["recall@3(sampled=3,convention=recbole)"], candidates=cands,
                           fitted=True)  # fmt: skip
    assert res.summary["recall@3(sampled=3,convention=recbole)"] == pytest.approx((1 / 3 + 1) / 2)


@pytest.mark.parametrize("where", ["file", "option"])
def test_recbole_convention_in_a_configuration_gives_the_recbole_shape(where):
    text = 'metrics = ["ndcg@10(sampled=20)"]\n[datasets.toy]\ngenerate = { n_users = 9 }\n[recommenders.random]\n'
    if where == "file":
        cfg = parse_config('convention = "recbole"\n' + text)
    else:  # receval run --convention recbole
        cfg = parse_config(text, convention="recbole")
    assert cfg.metrics == ("ndcg@10(sampled=20,shape=recbole)",)
    assert parse_config(text, convention="ranx").metrics == ("ndcg@10(sampled=20)",)
