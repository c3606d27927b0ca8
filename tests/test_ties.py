"""Ties of equal score: ``ties="input" | "id" | "trec_eval"``, checked by hand and against trec_eval (pytrec_eval).

trec_eval sorts a run by score descending, then by docno descending as text
(``form_res_rels.c``, ``comp_sim_docno``: ``strcmp(p2->docno, p1->docno)``); pytrec_eval
runs trec_eval's own code, so its per-query values are the reference for ``ties="trec_eval"``.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import receval
from receval.cli import main
from receval.errors import ConfigError, MetricError
from receval.evaluation.align import TIES, tie_rule, to_rankings
from receval.evaluation.sharded_files import evaluate_parquet_sharded

# q1: four documents tied at 0.5 whose text order ("d10" < "d2" < "d9") is neither their input
# order nor their numeric order; q2: three tied at 0.7, the relevant one first by input only
QRELS = {"q1": {"d2": 1, "d10": 2, "d7": 0, "d4": 1}, "q2": {"d1": 1, "d9": 2}}
RUN = {
    "q1": [("d10", 0.5), ("d2", 0.5), ("d9", 0.5), ("d4", 0.5), ("d1", 0.2)],
    "q2": [("d1", 0.7), ("d3", 0.7), ("d9", 0.7)],
}
# receval's metric string -> trec_eval's measure
MEASURES = {
    "precision@1": "P_1",
    "precision@2": "P_2",
    "recall@2": "recall_2",
    "mrr": "recip_rank",
    "map": "map",
    "ndcg@3": "ndcg_cut_3",
}


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    truth = pd.DataFrame(
        [(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()], columns=["user", "item", "rating"]
    )
    recs = pd.DataFrame([(q, d, s) for q, docs in RUN.items() for d, s in docs], columns=["user", "item", "score"])
    return truth, recs


def _trec_eval() -> dict[str, dict[str, float]]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluator = pytrec_eval.RelevanceEvaluator(QRELS, set(MEASURES.values()))
    return evaluator.evaluate({q: dict(docs) for q, docs in RUN.items()})


@pytest.mark.parametrize("how", ["ties", "convention"])
def test_trec_eval_ties_give_trec_evals_values_per_query(how):
    reference = _trec_eval()
    truth, recs = _tables()
    given = {"ties": "trec_eval"} if how == "ties" else {"convention": "trec_eval"}
    res = receval.evaluate(recs, truth, list(MEASURES), **given)
    per_user = res.per_user.set_index("user")
    for metric, measure in MEASURES.items():
        for query in QRELS:
            assert per_user.loc[query, metric] == pytest.approx(reference[query][measure], abs=1e-12), (metric, query)
    assert res.conventions.tie_break == tie_rule("score", "trec_eval")


def test_input_order_differs_from_trec_eval_on_this_run():
    """The run above is not vacuous: kept in input order, several values differ from trec_eval's."""
    reference = _trec_eval()
    truth, recs = _tables()
    per_user = receval.evaluate(recs, truth, list(MEASURES)).per_user.set_index("user")
    differ = {
        (metric, query)
        for metric, measure in MEASURES.items()
        for query in QRELS
        if abs(per_user.loc[query, metric] - reference[query][measure]) > 1e-9
    }
    # q1: d10 (grade 2) first by input, d9 (unjudged) by trec_eval; q2: d1 (grade 1) before d9 (grade 2)
    assert {("precision@1", "q1"), ("mrr", "q1"), ("ndcg@3", "q2")} <= differ


def test_the_order_of_each_rule_by_hand():
    truth, recs = _tables()
    # q1 lists d10, d2, d9, d4 at 0.5 then d1; relevant: d2, d10, d4
    firsts = {}
    for ties in TIES:
        res = receval.evaluate(recs, truth, ["precision@1", "precision@3"], ties=ties)
        firsts[ties] = res.per_user.set_index("user").loc["q1"].tolist()
    assert firsts["input"] == [1.0, pytest.approx(2 / 3)]  # d10, d2, d9
    assert firsts["id"] == [1.0, 1.0]  # d10, d2, d4 (text ascending: d10 < d2 < d4 < d9)
    assert firsts["trec_eval"] == [0.0, pytest.approx(2 / 3)]  # d9, d4, d2


def test_to_rankings_orders_ties_by_id_value_or_by_text():
    users, items, scores = np.zeros(4, dtype=int), np.array([0, 1, 2, 3]), np.array([1.0, 1.0, 1.0, 0.5])
    ids = np.array([10, 9, 100, 1])  # numbers: "id" compares them as numbers, trec_eval as text
    rank = {t: to_rankings(users, items, scores, 1, descending=True, ties=t, item_ids=ids)[0].tolist() for t in TIES}
    assert rank["input"] == [0, 1, 2, 3]
    assert rank["id"] == [1, 0, 2, 3]  # 9 < 10 < 100
    assert rank["trec_eval"] == [1, 2, 0, 3]  # "9" > "100" > "10" as strcmp compares them
    # grouped, ranked input without ties takes the fast path and gives the same lists
    distinct = np.array([4.0, 3.0, 2.0, 1.0])
    for t in TIES:
        assert to_rankings(users, items, distinct, 1, descending=True, ties=t, item_ids=ids)[0].tolist() == [0, 1, 2, 3]


def test_ties_of_many_users_match_a_sort_by_key():
    """Shuffled rows of 50 users with few distinct scores: each list is the sort by (-score, the rule's key)."""
    rng = np.random.default_rng(5)
    n = 600
    users = rng.integers(0, 50, n)
    items = rng.permutation(n)  # distinct items
    scores = rng.integers(0, 3, n).astype(float)
    ids = np.array([f"i{j}" for j in range(n)], dtype=object)  # ASCII: Python's text order is strcmp's
    for ties, descending_text in (("id", False), ("trec_eval", True)):
        got = to_rankings(users, items, scores, 50, descending=True, ties=ties, item_ids=ids)
        for u in range(50):
            rows = np.flatnonzero(users == u)
            if descending_text:
                want = sorted(rows, key=lambda r: (scores[r], ids[items[r]]), reverse=True)
            else:
                want = sorted(rows, key=lambda r: (-scores[r], ids[items[r]]))
            assert got[u, : len(rows)].tolist() == items[want].tolist()


def test_a_score_matrix_follows_the_rule_too():
    truth = receval.Interactions.from_frame(pd.DataFrame({"user": ["u", "u"], "item": ["a", "c"], "rating": [1, 0]}))
    scores = np.array([[0.5, 0.5]])  # columns: the truth's items "a" (relevant) and "c"
    mrr = {t: receval.evaluate(scores, truth, ["mrr"], ties=t).summary["mrr"] for t in TIES}
    assert mrr == {"input": 1.0, "id": 1.0, "trec_eval": 0.5}  # trec_eval: "c" before "a"


def test_equal_ranks_tie_as_equal_scores_do():
    """RecTools' tables may give two items of a list one rank: they are ordered by the same rule."""
    truth = pd.DataFrame({"user": ["u", "u", "v"], "item": ["b", "c", "a"], "rating": [1, 1, 1]})
    # u: "b" and "a" share rank 1; "c" is third. v: one item
    ranked = pd.DataFrame({"user": ["u", "u", "u", "v"], "item": ["c", "b", "a", "a"], "rank": [3, 1, 1, 1]})
    mrr = {}
    for ties in TIES:
        res = receval.evaluate(ranked, truth, ["mrr", "precision@2"], ties=ties)
        mrr[ties] = res.per_user.set_index("user").loc["u"].tolist()
        assert res.conventions.tie_break == tie_rule("rank", ties)
        assert tie_rule("rank", ties).replace("ascending rank", "descending score") == tie_rule("score", ties)
    assert mrr == {"input": [1.0, 0.5], "id": [0.5, 0.5], "trec_eval": [1.0, 0.5]}  # b, a | a, b | b, a


def test_a_tie_rule_not_known_is_one_error_naming_the_rules():
    truth, recs = _tables()
    with pytest.raises(ConfigError, match=r"^ties='random' is not a tie rule; use one of input, id, trec_eval$"):
        receval.evaluate(recs, truth, ["mrr"], ties="random")


def test_sharded_evaluation_keeps_the_rule(tmp_path):
    truth, recs = _tables()
    truth.to_parquet(tmp_path / "t.parquet")
    recs.to_parquet(tmp_path / "r.parquet", row_group_size=3)
    whole = receval.evaluate(recs, truth, list(MEASURES), convention="trec_eval")
    sharded = evaluate_parquet_sharded(tmp_path / "t.parquet", tmp_path / "r.parquet", list(MEASURES),
                                       n_shards=2, convention="trec_eval")  # fmt: skip
    assert sharded.conventions.shards == 2
    assert sharded.summary == pytest.approx(whole.summary)
    assert sharded.conventions.tie_break == whole.conventions.tie_break
    plain = evaluate_parquet_sharded(tmp_path / "t.parquet", tmp_path / "r.parquet", ["precision@1"], n_shards=2)
    assert plain.summary["precision@1"] != sharded.summary["precision@1"]


# ------------------------------------------------------------------ a rank column read as positions
def test_ranks_read_as_positions_leave_gaps_empty():
    truth = pd.DataFrame({"user": ["u", "u", "v"], "item": ["a", "b", "c"], "rating": [1, 1, 1]})
    ranked = pd.DataFrame({"user": ["u", "u", "v"], "item": ["a", "b", "c"], "rank": [1, 3, 9]})
    metrics = ["mrr", "precision@1", "precision@3", "ndcg@3"]
    by_order = receval.evaluate(ranked, truth, metrics).per_user.set_index("user")
    by_position = receval.evaluate(ranked, truth, metrics, ranks="positions")
    per_user = by_position.per_user.set_index("user")
    # v's one item is at position 9: a miss at every cutoff below it, reciprocal rank 1/9
    assert per_user.loc["v"].tolist() == [pytest.approx(1 / 9), 0.0, 0.0, 0.0]
    assert by_order.loc["v"].tolist() == [1.0, 1.0, pytest.approx(1 / 3), 1.0]
    # u: a at 1 and b at 3 (position 2 empty): DCG 1 + 1/log2(4) over the ideal 1 + 1/log2(3)
    assert per_user.loc["u", "ndcg@3"] == pytest.approx((1 + 1 / 2) / (1 + 1 / np.log2(3)))
    assert by_order.loc["u", "ndcg@3"] == 1.0
    assert per_user.loc["u", "precision@3"] == by_order.loc["u", "precision@3"] == pytest.approx(2 / 3)
    assert by_position.conventions.tie_break == tie_rule("rank", ranks="positions")


def test_a_rank_given_twice_cannot_be_read_as_positions():
    truth = pd.DataFrame({"user": ["u"], "item": ["a"], "rating": [1]})
    ranked = pd.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "rank": [1, 1]})
    assert receval.evaluate(ranked, truth, ["mrr"]).summary == {"mrr": 1.0}  # as an order: a tie
    with pytest.raises(MetricError, match=r"^column rank: user 'u' has two items at rank 1 \(e\.g\. 'b'\): read as"):
        receval.evaluate(ranked, truth, ["mrr"], ranks="positions")
    with pytest.raises(ConfigError, match=r"^ranks='gaps' is not a reading of ranks; use one of order, positions$"):
        receval.evaluate(ranked, truth, ["mrr"], ranks="gaps")


def test_ranks_as_positions_on_the_command_line_and_by_shards(tmp_path, capsys):
    truth = pd.DataFrame({"user": ["u", "u", "v"], "item": ["a", "b", "c"], "rating": [1, 1, 1]})
    ranked = pd.DataFrame({"user": ["u", "u", "v"], "item": ["a", "b", "c"], "rank": [1, 3, 9]})
    truth.to_parquet(tmp_path / "t.parquet")
    ranked.to_parquet(tmp_path / "r.parquet", row_group_size=2)
    want = receval.evaluate(ranked, truth, ["mrr", "ndcg@3"], ranks="positions").summary
    args = ["evaluate", "--truth", str(tmp_path / "t.parquet"), "--recs", str(tmp_path / "r.parquet"),
            "--metrics", "mrr,ndcg@3", "--ranks", "positions", "--json"]  # fmt: skip
    for extra in ([], ["--shards", "2"]):
        assert main([*args, *extra]) == 0
        got = json.loads(capsys.readouterr().out)
        assert {m: got[m] for m in want} == pytest.approx(want)
