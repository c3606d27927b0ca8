"""``convention="trec_eval"`` (its tie rule and its metric spellings) against trec_eval itself, on generated runs.

pytrec_eval-terrier 0.5.11 runs trec_eval 9's C code (``form_res_rels.c`` sorts a run by score descending, then
by docno descending with ``strcmp``); tests/test_ties.py checks one hand-made run, this drives the rule with
hypothesis: many tied scores, ids whose text order is neither their numeric nor their input order (``d10`` < ``d2``,
upper before lower case, a non-ASCII id: UTF-8 bytes sort as code points), lists shorter than the cutoffs, graded
judgments with judged non-relevant (grade 0) documents, and queries without a relevant document (trec_eval scores
them 0: ``empty_users="zero"``). trec_eval evaluates the queries of the run; receval every truth user, so the
comparison is over the run's queries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval

pytrec_eval = pytest.importorskip("pytrec_eval")

DOCS = ["d1", "d2", "d9", "d10", "d100", "D3", "a", "b7", "é1", "d02"]
MEASURES = {  # receval's spelling (trec_eval's own names select the convention) -> trec_eval's measure
    "P_1": "P_1",
    "P_5": "P_5",
    "P_20": "P_20",
    "recall_5": "recall_5",
    "recip_rank": "recip_rank",
    "map": "map",
    "map_cut_5": "map_cut_5",
    "ndcg_cut_3": "ndcg_cut_3",
    "ndcg_cut_20": "ndcg_cut_20",
    "Rprec": "Rprec",
    "success_3": "success_3",
}


@st.composite
def runs(draw) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(draw(st.integers(1, 6))):
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        qrels[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in judged}  # some queries: only grade 0
        ranked = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=len(DOCS), unique=True))
        run[f"q{q}"] = {d: draw(st.sampled_from([0.25, 0.5, 0.5, 1.0])) for d in ranked}  # ties everywhere
    # grades 0 and 3 somewhere: receval refuses a threshold above every grade (docs/metrics.md), trec_eval scores 0;
    # a query of the qrels only, which trec_eval (without -c) does not evaluate
    qrels["scale"] = {"d1": 0, "d2": 3}
    return qrels, run


@pytest.mark.filterwarnings("ignore:none of the item ids")
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.sampled_from(["convention", "ties"]))
def test_trec_eval_ties_and_measures_equal_trec_eval(given_run, how: str) -> None:
    qrels, run = given_run
    truth = pd.DataFrame(
        [(q, d, g) for q, j in qrels.items() for d, g in j.items()], columns=["user", "item", "rating"]
    )
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    recs = pd.DataFrame(rows, columns=["user", "item", "score"]).sample(frac=1.0, random_state=len(rows))
    options = {"convention": "trec_eval"} if how == "convention" else {"ties": "trec_eval"}
    res = receval.evaluate(recs, truth, list(MEASURES), threshold=1, empty_users="zero", **options)
    reference = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(run)
    table = res.per_user.set_index("user")
    for ours, theirs in MEASURES.items():
        expected = np.array([reference[q][theirs] for q in run])
        got = table.loc[list(run), ours].to_numpy(dtype=float)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, err_msg=ours)
