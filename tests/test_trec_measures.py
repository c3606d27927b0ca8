"""trec_eval's and ir-measures' measures and RecBole's TailPercentage (receval.metrics.trec) against the libraries.

- trec_eval through pytrec_eval, per query to 1e-9, on trec_eval's own test files
  (tests/peers/trec_eval/, from usnistgov/trec_eval at f4253652c8efd0d86ddffd0d163cc0a0f813111a)
  and on generated qrels (grades −1…3) and runs; and the values trec_eval 10 prints for
  the measures pytrec_eval (built on trec_eval 9) lacks or computes the old way (rbp,
  rbp_resid, unj_k, iprec_at_recall's rounding), to its 4 decimals.
- ir-measures' Judged@k and ranx's rbp per query (ir-measures' RBP too when its trectools
  provider is installed).
- RecBole's TailPercentage against its code transcribed (recbole/evaluator/metrics.py,
  class TailPercentage, RUCAIBox/RecBole at 7b02be5ec80a88310f2d04a27a82adfcbb5dc211).

Runs are given to receval with trec_eval's rank order (score descending, then document id
descending), so that no tie rule decides a value.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import receval
from receval.errors import MetricError
from receval.metrics import MetricInput, parse_metric

PEERS = Path(__file__).resolve().parent / "peers" / "trec_eval"
Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
LEVELS = [i / 10 for i in range(11)]


def _read(path: Path, column: int, cast: type) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            out.setdefault(fields[0], {})[fields[2]] = cast(fields[column])
    return out


@cache
def _qrels(name: str) -> Qrels:
    return _read(PEERS / name, 3, int)  # type: ignore[return-value]


@cache
def _run(name: str) -> Run:
    return _read(PEERS / name, 4, float)  # type: ignore[return-value]


def _trec_order(run: Run) -> pd.DataFrame:
    """user, item, rank in trec_eval's order: score descending, then document id descending."""
    rows = []
    for query, docs in run.items():
        ranked = sorted(sorted(docs.items(), reverse=True), key=lambda kv: -kv[1])
        rows += [(query, doc, rank) for rank, (doc, _) in enumerate(ranked, 1)]
    return pd.DataFrame(rows, columns=["user", "item", "rank"])


def _as_scores(run: Run) -> Run:
    """The same lists with distinct scores in trec_eval's order (for libraries that break ties otherwise)."""
    ranks = _trec_order(run)
    return {q: dict(zip(g.item, -g["rank"].astype(float), strict=True)) for q, g in ranks.groupby("user")}


def _truth(qrels: Qrels, run: Run) -> pd.DataFrame:
    """The qrels of the run's queries (trec_eval evaluates those) as a truth table."""
    rows = [(q, d, g) for q, docs in qrels.items() if q in run for d, g in docs.items()]
    return pd.DataFrame(rows, columns=["user", "item", "rating"])


def _receval(qrels: Qrels, run: Run, metrics: list[str], **options: object) -> dict[str, dict[str, float]]:
    """{metric: {query: value}} over the run's queries."""
    result = receval.evaluate(_trec_order(run), _truth(qrels, run), metrics, **options)  # type: ignore[arg-type]
    users = result.per_user["user"].astype(str)
    return {m: dict(zip(users, np.asarray(result.per_user[m], dtype=float), strict=True)) for m in metrics}


# receval metric string -> (pytrec_eval measure, the key of its value)
TREC_MEASURES = {
    "bpref": ("bpref", "bpref"),
    "set_P": ("set_P", "set_P"),
    "set_recall": ("set_recall", "set_recall"),
    "set_F": ("set_F", "set_F"),
    "set_F(beta=0.5)": ("set_F.0.5", "set_F"),
    "set_F(beta=2)": ("set_F.2", "set_F"),
    "num_ret": ("num_ret", "num_ret"),
    "num_rel": ("num_rel", "num_rel"),
    "num_rel_ret": ("num_rel_ret", "num_rel_ret"),
    # pytrec_eval counts recall levels as trec_eval 9 did
    **{
        f"iprec_at_recall(recall={level},rounding=trec_eval9)": ("iprec_at_recall", f"iprec_at_recall_{level:.2f}")
        for level in LEVELS
    },
}


def _pytrec(qrels: Qrels, run: Run, threshold: int = 1) -> dict[str, dict[str, float]]:
    """{receval metric string: {query: trec_eval's value}}; one evaluator per measure (set_F keeps one β)."""
    out: dict[str, dict[str, float]] = {}
    for metric, (measure, key) in TREC_MEASURES.items():
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=threshold)
        out[metric] = {q: values[key] for q, values in evaluator.evaluate(run).items()}
    gm = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map"}, relevance_level=threshold).evaluate(run)
    out["gm_map"] = {q: values["gm_map"] for q, values in gm.items()}  # per query: log max(AP, 1e-5)
    return out


def _assert_per_query(qrels: Qrels, run: Run, threshold: int = 1) -> int:
    expected = _pytrec(qrels, run, threshold)
    got = _receval(qrels, run, list(TREC_MEASURES), threshold=threshold, empty_users="zero")
    compared = 0
    for metric in TREC_MEASURES:
        assert set(got[metric]) == set(expected[metric]), metric
        for query, value in expected[metric].items():
            assert got[metric][query] == pytest.approx(value, abs=1e-9), (metric, query)
            compared += 1
    gm = receval.evaluate(_trec_order(run), _truth(qrels, run), ["gm_map"], threshold=threshold, empty_users="zero")
    assert gm.summary["gm_map"] == pytest.approx(math.exp(np.mean(list(expected["gm_map"].values()))), abs=1e-9)
    return compared


@pytest.mark.parametrize(
    ("qrels", "run", "threshold"),
    [
        ("qrels.test", "results.test", 1),
        ("qrels.rel_level", "results.test", 1),  # grades −1…4: −1 is in the pool, unjudged
        ("qrels.rel_level", "results.test", 2),
        ("qrels.test", "results.trunc", 1),
    ],
)
def test_per_query_equal_to_trec_eval_on_its_test_files(qrels: str, run: str, threshold: int) -> None:
    assert _assert_per_query(_qrels(qrels), _run(run), threshold) == len(_run(run)) * len(TREC_MEASURES)


@st.composite
def _qrels_and_run(draw: st.DrawFn) -> tuple[Qrels, Run]:
    n_docs = draw(st.integers(2, 14))
    docs = [f"d{i:02d}" for i in range(n_docs)]
    qrels: Qrels = {}
    run: Run = {}
    for q in range(draw(st.integers(1, 4))):
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
        qrels[f"q{q}"] = {d: draw(st.integers(-1, 3)) for d in judged}
        listed = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))  # in the order drawn
        run[f"q{q}"] = {d: float(len(listed) - i) for i, d in enumerate(listed)}  # distinct scores
    return qrels, run


def _top_grade(qrels: Qrels) -> int:
    return max(g for docs in qrels.values() for g in docs.values())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_qrels_and_run(), st.sampled_from([1, 2]))
def test_per_query_equal_to_trec_eval_on_generated_runs(case: tuple[Qrels, Run], threshold: int) -> None:
    qrels, run = case
    assume(_top_grade(qrels) >= threshold)  # receval refuses a threshold above every grade of the truth
    assert _assert_per_query(qrels, run, threshold) == len(run) * len(TREC_MEASURES)


def _printed(name: str) -> dict[tuple[str, str], float]:
    """{(measure, query or 'all'): value} of a trec_eval output file."""
    rows = (line.split() for line in (PEERS / name).read_text(encoding="utf-8").splitlines())
    return {(m, q): float(v) for m, q, v in rows if m != "runid" and not m.startswith("relstring")}


# trec_eval 10's own spelling of each measure -> receval's string with trec_eval's parameters written out
TREC_EVAL_10 = {
    "rbp": "rbp(p=0.9,graded=true,normalize=true)",
    "rbp_resid": "rbp_residual(p=0.9,tail=with_unjudged)",
    "unj_5": "unjudged@5",
    "unj_10": "unjudged@10",
    "unj_20": "unjudged@20",
    "bpref": "bpref",
    "set_F": "set_F",
    **{f"iprec_at_recall_{level:.2f}": f"iprec_at_recall(recall={level})" for level in LEVELS},
}


@pytest.mark.parametrize(
    ("output", "qrels", "threshold"), [("out.test.aq", "qrels.test", 1), ("out.test.aql", "qrels.rel_level", 2)]
)
def test_equal_to_what_trec_eval_10_prints(output: str, qrels: str, threshold: int) -> None:
    printed = _printed(output)
    got = _receval(_qrels(qrels), _run("results.test"), list(TREC_EVAL_10.values()), threshold=threshold)
    for name, metric in TREC_EVAL_10.items():
        for query, value in got[metric].items():
            assert value == pytest.approx(printed[(name, query)], abs=0.5e-4 + 1e-12), (name, query)


def test_trec_eval_10_rounds_recall_levels_to_nearest_and_9_up() -> None:
    # query 301 of qrels.test has 474 relevant documents: level 0.1 needs 47 (lround) or 48 (⌊47.4 + 0.9⌋)
    qrels, run = _qrels("qrels.test"), _run("results.test")
    got = _receval(qrels, run, ["iprec_at_recall(recall=0.1)", "iprec_at_recall(recall=0.1,rounding=trec_eval9)"])
    printed = _printed("out.test.aq")[("iprec_at_recall_0.10", "301")]
    assert round(got["iprec_at_recall(recall=0.1)"]["301"], 4) == printed
    old = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)["301"]["iprec_at_recall_0.10"]
    assert got["iprec_at_recall(recall=0.1,rounding=trec_eval9)"]["301"] == pytest.approx(old, abs=1e-12)
    assert got["iprec_at_recall(recall=0.1)"]["301"] != pytest.approx(old, abs=1e-6)


def test_num_counts_sum_over_queries_as_trec_eval_summarises_them() -> None:
    printed = _printed("out.test")
    truth, run = PEERS / "qrels.test", PEERS / "results.test"
    summary = receval.evaluate(run, truth, ["num_ret", "num_rel", "num_rel_ret", "num_ret(agg=macro)"]).summary
    assert [summary[m] for m in ("num_ret", "num_rel", "num_rel_ret")] == [
        printed[(m, "all")] for m in ("num_ret", "num_rel", "num_rel_ret")
    ]
    assert summary["num_ret(agg=macro)"] == printed[("num_ret", "all")] / 3


def _ir_measures(qrels: Qrels, run: Run, measure: object, provider: object = ir_measures) -> dict[str, float]:
    """Per query of the run (ir-measures also scores the qrels' other queries, 0)."""
    return {m.query_id: m.value for m in provider.iter_calc([measure], qrels, run) if m.query_id in run}


@pytest.mark.parametrize("k", [1, 5, 10, 100, 1000])
def test_judged_equal_to_ir_measures_on_trec_eval_files(k: int) -> None:
    qrels, run = _qrels("qrels.rel_level"), _run("results.trunc")
    got = _receval(qrels, run, [f"Judged@{k}"])[f"Judged@{k}"]
    expected = _ir_measures(qrels, _as_scores(run), ir_measures.Judged @ k)
    assert got == pytest.approx(expected, abs=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_qrels_and_run(), st.integers(1, 15))
def test_judged_equal_to_ir_measures_on_generated_runs(case: tuple[Qrels, Run], k: int) -> None:
    qrels, run = case
    expected = _ir_measures(qrels, run, ir_measures.Judged @ k)
    got = _receval(qrels, run, [f"Judged@{k}"])[f"Judged@{k}"]
    assert got == pytest.approx(expected, abs=1e-12)


def _ranx_rbp(qrels: Qrels, run: Run, p: float) -> dict[str, float]:
    import ranx

    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, [f"rbp.{round(p * 10)}"])
    return dict(r.scores[f"rbp.{round(p * 10)}"])


def _generated(seed: int, n_queries: int) -> tuple[Qrels, Run]:
    """Many queries at once (ranx compiles its kernel on the first call, so it is called once per p)."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i:02d}" for i in range(20)]
    qrels: Qrels = {}
    run: Run = {}
    for q in range(n_queries):
        judged = rng.choice(docs, int(rng.integers(1, 15)), replace=False)
        qrels[f"q{q}"] = {str(d): int(g) for d, g in zip(judged, rng.integers(-1, 4, len(judged)), strict=True)}
        listed = rng.choice(docs, int(rng.integers(1, 20)), replace=False)
        run[f"q{q}"] = {str(d): float(len(listed) - i) for i, d in enumerate(listed)}  # distinct scores
    return qrels, run


@pytest.mark.slow
@pytest.mark.parametrize("p", [0.5, 0.8, 0.9])
def test_rbp_equal_to_ranx_per_query(p: float) -> None:
    qrels, run = _generated(7, 300)
    for q, r in ((qrels, run), (_qrels("qrels.rel_level"), _as_scores(_run("results.test")))):
        got = _receval(q, r, [f"RBP(p={p})"], empty_users="zero")[f"RBP(p={p})"]
        assert got == pytest.approx(_ranx_rbp(q, r, p), abs=1e-9)


def test_rbp_equal_to_ir_measures_per_query() -> None:
    pytest.importorskip("trectools", reason="ir-measures computes RBP through its trectools provider")
    qrels, run = _qrels("qrels.rel_level"), _as_scores(_run("results.test"))
    got = _receval(qrels, run, ["RBP(p=0.8)", "RBP@10(p=0.8)"])
    for metric, measure in (("RBP(p=0.8)", ir_measures.RBP(p=0.8)), ("RBP@10(p=0.8)", ir_measures.RBP(p=0.8) @ 10)):
        expected = _ir_measures(qrels, run, measure, ir_measures.trectools)  # the default pipeline leaves it out
        assert expected and {q: got[metric][q] for q in expected} == pytest.approx(expected, abs=1e-9)


def test_rbp_residual_bounds_binary_rbp_whatever_the_unjudged_items_are() -> None:
    # grades: a=1, b=0; c is not in the truth. List c, a, b: RBP(p=0.5, binary) = 0.5·0.5 = 0.25;
    # residual = c's weight 0.5 + the tail 0.5³ = 0.625; c relevant and the tail too: 0.5 + 0.25 + 0.125
    qrels: Qrels = {"q": {"a": 1, "b": 0}}
    run: Run = {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}
    got = _receval(qrels, run, ["rbp(p=0.5,gain=binary)", "rbp_residual(p=0.5)", "rbp_residual@2(p=0.5)"])
    assert got["rbp(p=0.5,gain=binary)"]["q"] == 0.25
    assert got["rbp_residual(p=0.5)"]["q"] == 0.625
    assert got["rbp_residual@2(p=0.5)"]["q"] == 0.5 + 0.25  # two ranks read: the tail starts at rank 3
    best = _receval({"q": {"a": 1, "b": 0, "c": 1}}, run, ["rbp(p=0.5,gain=binary)"])["rbp(p=0.5,gain=binary)"]
    assert best["q"] + 0.125 == got["rbp(p=0.5,gain=binary)"]["q"] + got["rbp_residual(p=0.5)"]["q"]
    # every item judged: only the tail is left, which trec_eval's rbp_resid leaves out (tail=with_unjudged)
    judged = _receval({"q": {"a": 1, "b": 0, "c": 0}}, run, ["rbp_residual(p=0.5)", "rbp_resid(p=0.5)"])
    assert [judged[m]["q"] for m in judged] == [0.125, 0.0]


@pytest.mark.parametrize(
    "metric",
    ["set_P", "set_recall", "set_F(beta=0.5)", "bpref", "iprec_at_recall(recall=0.3)", "num_ret", "num_rel_ret",
     "rbp(p=0.7)", "rbp_residual", "judged", "unjudged", "gm_map"],
)  # fmt: skip
@pytest.mark.parametrize("k", [1, 3, 7])
def test_a_cutoff_reads_the_list_cut_there(metric: str, k: int) -> None:
    qrels, run = _qrels("qrels.rel_level"), _run("results.trunc")
    cut = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])[:k]) for q, docs in _as_scores(run).items()}
    name, _, params = metric.partition("(")
    at_k = f"{name}@{k}" + (f"({params}" if params else "")
    if metric == "unjudged":  # unj_k divides by k, the whole list by its length
        at_k, metric = f"unjudged@{k}(denominator=list)", "unjudged(denominator=list)"
    if metric == "gm_map":
        whole = receval.evaluate(_trec_order(cut), PEERS / "qrels.rel_level", [metric]).summary[metric]
        assert receval.evaluate(_trec_order(run), PEERS / "qrels.rel_level", [at_k]).summary[at_k] == whole
        return
    assert _receval(qrels, run, [at_k])[at_k] == pytest.approx(_receval(qrels, cut, [metric])[metric], nan_ok=True)


def test_grade_zero_and_minus_one_reach_the_measures() -> None:
    """Judged non-relevant (0) and in-the-pool-unjudged (−1) rows survive into the truth the kernels read."""
    truth = pd.DataFrame(
        {"user": ["u"] * 5, "item": ["a", "b", "c", "d", "e"], "rating": [2, 0, 1, -1, 0]}
    )  # the module docstring's example, through evaluate
    recs = pd.DataFrame({"user": ["u"] * 6, "item": ["x", "b", "a", "d", "c", "e"], "rank": range(1, 7)})
    metrics = ["bpref", "bpref(negative_grades=nonrelevant)", "Judged@4", "judged@4(negative_grades=unjudged)",
               "unj@4", "num_rel", "set_P"]  # fmt: skip
    summary = receval.evaluate(recs, truth, metrics, threshold=1).summary
    assert [summary[m] for m in metrics] == [0.5, 0.25, 0.75, 0.5, 0.5, 2.0, pytest.approx(1 / 3)]


def test_set_f_beta_weighs_recall_as_trec_eval_does() -> None:
    # P = 1/4, R = 1/2: (1 + β)PR / (βP + R); β = 4: 5/8 / (1 + 1/2) = 5/12 (van Rijsbergen's F_2 is 5/14)
    data = MetricInput(np.array([[0, 1, 2, 3]]), sp.csr_matrix(np.array([[1.0, 0, 0, 0, 1]])))
    assert parse_metric("set_F(beta=4)").per_user(data).item() == pytest.approx(5 / 12)
    assert parse_metric("set_F").per_user(data).item() == pytest.approx(1 / 3)
    assert parse_metric("set_F(beta=0)").per_user(data).item() == pytest.approx(1 / 4)  # precision


def test_gm_map_is_the_geometric_mean_of_ap_floored_at_epsilon() -> None:
    # AP: user 0 = 1, user 1 = 1/2, user 2 = 0 (its relevant item is not listed)
    truth = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]))
    data = MetricInput(np.array([[0, 1], [0, 1], [0, 1]]), truth)
    assert parse_metric("gm_map").compute(data) == pytest.approx((1 * 0.5 * 1e-5) ** (1 / 3))
    assert parse_metric("gm_map(epsilon=0.01)").compute(data) == pytest.approx((0.5 * 0.01) ** (1 / 3))
    assert parse_metric("map").compute(data) == pytest.approx(0.5)


def _recbole_tail_percentage(items: np.ndarray, count_items: dict[int, int], tail: float) -> np.ndarray:
    """RecBole's TailPercentage.get_tail and metric_info, as written (metrics.py, class TailPercentage)."""
    if tail > 1:
        tail_items = [item for item, cnt in count_items.items() if cnt <= tail]
    else:
        ranked = sorted(count_items.items(), key=lambda kv: (kv[1], kv[0]))
        cut = max(int(len(ranked) * tail), 1)
        tail_items = [item for item, cnt in ranked[:cut]]
    value = np.zeros_like(items)
    for i in range(items.shape[0]):
        for j in range(items.shape[1]):
            value[i][j] = 1 if items[i, j] in tail_items else 0
    return value.cumsum(axis=1) / np.arange(1, value.shape[1] + 1)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(3, 12),
    st.one_of(st.sampled_from([0.1, 0.25, 0.5, 1.0]), st.integers(2, 6)),
)
def test_tail_percentage_equal_to_recbole(seed: int, n_items: int, tail_ratio: float) -> None:
    rng = np.random.default_rng(seed)
    n_users, k = 4, min(3, n_items)
    train = sp.csr_matrix((rng.random((n_users + 3, n_items)) < rng.random(n_items)).astype(float))
    items = np.array([rng.permutation(n_items)[:k] for _ in range(n_users)])
    data = MetricInput(items, sp.csr_matrix((n_users, n_items)), train=train[:n_users], train_all=train)
    counts = np.bincount(train.indices, minlength=n_items)
    # RecBole counts the items of its training interactions: an item never rated there is not in the counter
    count_items = {item: int(c) for item, c in enumerate(counts) if c > 0}
    expected = _recbole_tail_percentage(items, count_items, tail_ratio).mean(axis=0)
    for cutoff in range(1, k + 1):
        metric = parse_metric(f"TailPercentage@{cutoff}(tail_ratio={tail_ratio})")
        assert metric.compute(data) == pytest.approx(expected[cutoff - 1], abs=1e-12)


def test_tail_percentage_reads_the_training_counts() -> None:
    # training counts 5, 0, 1, 2, 1: with tail_ratio 0.5 the tail is the 2 least rated of the 4 rated items (2, 4)
    train = sp.csr_matrix(np.array([[1.0, 0, 1, 1, 1]] + [[1.0, 0, 0, 1, 0]] + [[1.0, 0, 0, 0, 0]] * 3))
    data = MetricInput(np.array([[2, 1, 0], [4, 3, -1]]), sp.csr_matrix((2, 5)), train=train[:2], train_all=train)
    assert parse_metric("tail_percentage@3(tail_ratio=0.5)").per_user(data).tolist() == [1 / 3, 1 / 2]
    assert parse_metric("tail_percentage@3(tail_ratio=2)").per_user(data).tolist() == [1 / 3, 1.0]
    empty = MetricInput(np.array([[-1]]), sp.csr_matrix((1, 5)), train=train[:1], train_all=train)
    assert np.isnan(parse_metric("tail_percentage@3").per_user(empty)).all()


NAMES = {
    "bpref": "bpref",
    "BPref": "bpref",
    "set_P": "set_p",
    "SetP": "set_p",
    "set_recall": "set_recall",
    "SetR": "set_recall",
    "set_F": "set_f",
    "SetF(beta=0.5)": "set_f(beta=0.5)",
    "gm_map": "gm_map",
    "num_ret": "num_ret",
    "NumRet": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "NumRelRet": "num_rel_ret",
    "RBP(p=0.8)": "rbp",
    "rbp(p=0.9)": "rbp(p=0.9)",
    "rbp_resid": "rbp_residual(p=0.9,tail=with_unjudged)",  # trec_eval's own name: trec_eval's convention
    "Judged@10": "judged@10",
    "unj_5": "unjudged@5",
    "TailPercentage@10": "tail_percentage@10",
    "iprec_at_recall_0.00": "iprec_at_recall",
    "iprec_at_recall_0.10": "iprec_at_recall(recall=0.1)",
    "iprec_at_recall_1.00": "iprec_at_recall(recall=1.0)",
}


@pytest.mark.parametrize(("typed", "resolved"), NAMES.items())
def test_trec_eval_and_ir_measures_names_resolve(typed: str, resolved: str) -> None:
    assert str(parse_metric(typed)) == resolved
    name, rest = typed[: len(typed.split("(")[0].split("@")[0])], typed[len(typed.split("(")[0].split("@")[0]) :]
    assert str(parse_metric(name.lower() + rest)) == str(parse_metric(name.upper() + rest)) == resolved


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("rbp(p=1)", "persistence p must be in \\(0, 1\\)"),
        ("rbp_residual(p=0)", "persistence p must be in \\(0, 1\\)"),
        ("set_F(beta=-1)", "beta must be a number ≥ 0"),
        ("iprec_at_recall(recall=1.5)", "recall level must be in \\[0, 1\\]"),
        ("gm_map(epsilon=0)", "epsilon must be a number > 0"),
        ("tail_percentage@5(tail_ratio=0)", "tail_ratio must be > 0"),
        # a word outside a parameter's vocabulary is refused as soon as the string is read
        ("iprec_at_recall(rounding=up)", "rounding must be one of nearest, trec_eval9"),
        ("rbp_residual(tail=never)", "tail must be one of always, with_unjudged"),
        ("bpref(negative_grades=ignored)", "negative_grades must be one of unjudged, nonrelevant"),
        ("judged@5(denominator=all)", "denominator must be one of k, list"),
        ("rbp(gain=log)", "gain must be one of linear, exponential"),
    ],
)
def test_bad_parameters_are_refused_in_one_line(metric: str, message: str) -> None:
    truth = pd.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "rating": [1, 0]})
    recs = pd.DataFrame({"user": ["u", "u"], "item": ["a", "c"], "rank": [1, 2]})
    with pytest.raises(MetricError, match=message) as raised:
        receval.evaluate(recs, truth, [metric], train=truth)
    assert "\n" not in str(raised.value)
    if "one of" in message:
        with pytest.raises(MetricError, match=message):
            parse_metric(metric)
