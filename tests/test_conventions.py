"""Library conventions: each convention parameter on a hand-computed case (the library's formula, read from its
source, cited), the presets by name, and one letter's case never changing a number."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import receval
from receval.errors import MetricError
from receval.metrics import apply_convention
from receval.metrics._definition import _ALIASES
from receval.metrics.conventions import CONVENTION_NAMES, LIBRARIES, markdown_table, preset_ties
from receval.metrics.registry import MetricInput, available_metrics, get_definition, parse_metric
from test_metrics_oracles import WIDTH, assert_equals_ranx

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _values(metric: str, data: MetricInput) -> list[float]:
    return parse_metric(metric).per_user(data).tolist()


# ----------------------------------------------------------------- parameters, hand-computed
def test_recall_denominator_min_lenskit_recpack() -> None:
    # positives 0, 1, 2; the top 2 holds one of them: 1/3, or 1/min(2, 3) (lenskit _pr.py Recall,
    # recpack recall.py CalibratedRecallK)
    data = MetricInput(np.array([[0, 3, 1]]), sp.csr_matrix(np.array([[5.0, 4, 5, 0]])), threshold=4)
    assert _values("recall@2", data) == pytest.approx([1 / 3])
    assert _values("recall@2(denominator=min)", data) == pytest.approx([1 / 2])
    assert _values("calibrated_recall@2", data) == pytest.approx([1 / 2])
    assert _values("recall@2(convention=lenskit)", data) == pytest.approx([1 / 2])


def test_map_denominators_and_elliot_average() -> None:
    # user 0: positives 0 and 2, ranked 1st and 3rd: Σ P@i = 1 + 2/3
    # user 1: the same truth, a one-item list holding item 0
    truth = sp.csr_matrix(np.array([[5.0, 2, 4, 0], [5.0, 2, 4, 0]]))
    data = MetricInput(np.array([[0, 1, 2], [0, -1, -1]]), truth, threshold=4)
    assert _values("map@3", data) == pytest.approx([(5 / 3) / 2, 1 / 2])
    assert _values("map@3(denominator=k)", data) == pytest.approx([(5 / 3) / 3, 1 / 3])  # RecTools divide_by_k
    assert _values("map@3(denominator=min_list)", data) == pytest.approx([(5 / 3) / 2, 1.0])  # LensKit
    # Elliot's MAP: the mean of P@1..P@k, positive ranks or not
    assert _values("map@3(average=ranks)", data) == pytest.approx([(1 + 1 / 2 + 2 / 3) / 3, (1 + 1 / 2 + 1 / 3) / 3])
    narrow = MetricInput(np.array([[0], [1]]), truth, threshold=4)  # lists narrower than k
    assert _values("map@3(average=ranks)", narrow) == pytest.approx([(1 + 1 / 2 + 1 / 3) / 3, 0.0])
    with pytest.raises(MetricError, match="needs a cutoff"):
        parse_metric("map(denominator=k)").per_user(data)


def test_f1_beta_rectools() -> None:
    # rectools classification.py F1Beta: (1 + β²) P R / (β² P + R) with P = 1/2, R = 1/3
    data = MetricInput(np.array([[0, 3, 1]]), sp.csr_matrix(np.array([[5.0, 4, 5, 0]])), threshold=4)
    p, r, b2 = 1 / 2, 1 / 3, 4.0
    assert _values("f1@2(beta=2)", data) == pytest.approx([(1 + b2) * p * r / (b2 * p + r)])
    assert _values("f1@2", data) == pytest.approx([2 * p * r / (p + r)])
    with pytest.raises(MetricError, match="beta must be > 0"):
        parse_metric("f1@2(beta=0)").per_user(data)


def test_ndcg_discount_ideal_graded_and_gains() -> None:
    truth = sp.csr_matrix(np.array([[5.0, 3, 0, 0]]))
    first_miss = MetricInput(np.array([[3, 0, 2]]), truth, threshold=4)  # the one positive at rank 2
    # lenskit _weighting.py LogRankWeight: 1/log2(max(r, 2)) — rank 2 counts fully
    assert _values("ndcg@3(gain=binary)", first_miss) == pytest.approx([1 / math.log2(3)])
    assert _values("ndcg@3(gain=binary,discount=clipped)", first_miss) == pytest.approx([1.0])
    # rectools ranking.py NDCG(divide_by_achievable=False): the ideal of k relevant items
    hit = MetricInput(np.array([[0, 2, 3]]), truth, threshold=4)
    assert _values("ndcg@3(gain=binary,ideal=full)", hit) == pytest.approx([1 / (1 + 1 / math.log2(3) + 1 / 2)])
    # trec_eval m_ndcg_cut.c: every judged grade gains its value, relevance level or not
    both = MetricInput(np.array([[1, 0]]), truth, threshold=4)
    assert _values("ndcg@2(graded=true)", both) == pytest.approx([(3 + 5 / math.log2(3)) / (5 + 3 / math.log2(3))])
    assert _values("ndcg@2", both) == pytest.approx([(5 / math.log2(3)) / 5])
    # elliot relevance.py: gain 2^(r − threshold + 1) − 1 for r ≥ threshold: 5 → 3 at threshold 4
    graded = MetricInput(np.array([[1, 0]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4)
    assert _values("ndcg@2(gain=shifted_exponential)", graded) == pytest.approx(
        [(1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))]
    )
    with pytest.raises(MetricError, match="discount must be one of log2, clipped"):
        parse_metric("ndcg@2(discount=ln)")


def test_empty_list_skip_lenskit() -> None:
    # lenskit _pr.py Precision and _map.py AveragePrecision: an empty list is NaN; receval scores it 0
    truth = sp.csr_matrix(np.array([[5.0, 0], [5.0, 0]]))
    data = MetricInput(np.array([[0, 1], [-1, -1]]), truth, threshold=4)
    assert _values("precision@2", data) == [0.5, 0.0]
    got = _values("precision@2(empty_list=skip)", data)
    assert got[0] == 0.5 and math.isnan(got[1])
    assert parse_metric("precision@2(empty_list=skip,agg=micro)").compute(data) == 0.5  # the empty list left out
    assert parse_metric("precision@2(agg=micro)").compute(data) == 0.25
    assert math.isnan(_values("map(convention=lenskit)", data)[1])
    with pytest.raises(MetricError, match=r"'recall@2\(empty_list=nan\)': empty_list must be one of zero, skip"):
        parse_metric("recall@2(empty_list=nan)")  # refused as the string is read, before any data


def test_r_precision_cut_at_k_rectools() -> None:
    # rectools classification.py Precision(r_precision=True): tp@k / min(k, |test|)
    truth = sp.csr_matrix(np.array([[5.0, 5, 5, 0], [0, 5.0, 0, 0]]))
    data = MetricInput(np.array([[3, 1, 0], [0, 1, 2]]), truth, threshold=4)
    assert _values("r_precision@2", data) == pytest.approx([1 / 2, 1.0])
    assert _values("r_precision", data) == pytest.approx([2 / 3, 0.0])  # trec_eval Rprec: within the first R


def test_auc_negatives_all_and_weighted_by_positives_recbole() -> None:
    # user 0: unrated, positive, judged negative; user 1: two positives, then an unrated item
    truth = sp.csr_matrix(np.array([[0, 5.0, 1, 0], [5.0, 5, 0, 0]]))
    data = MetricInput(np.array([[0, 1, 2], [0, 1, 3]]), truth, threshold=4)
    judged = _values("auc", data)
    assert judged[0] == 1.0 and math.isnan(judged[1])
    assert _values("auc(negatives=all)", data) == [0.5, 1.0]
    # recbole metrics.py GAUC: Σ_u auc_u · |pos_u| / Σ_u |pos_u|
    assert parse_metric("auc(negatives=all,agg=micro)").compute(data) == pytest.approx((0.5 * 1 + 1.0 * 2) / 3)
    assert parse_metric("gauc").compute(data) == pytest.approx(5 / 6)
    assert parse_metric("auc(negatives=all)").compute(data) == pytest.approx(0.75)


def test_recbole_gauc_formula_on_a_full_ranking() -> None:
    # recbole metrics.py GAUC.metric_info, from ranks of the positives in the full ranking
    rng = np.random.default_rng(3)
    n_users, n_items = 6, 9
    ratings = np.where(rng.random((n_users, n_items)) < 0.35, 5.0, 0.0)
    ratings[:, 0] = 5.0  # every user has a positive
    ratings[:, 1] = 0.0  # and a negative
    rankings = np.array([rng.permutation(n_items) for _ in range(n_users)])
    data = MetricInput(rankings, sp.csr_matrix(ratings), threshold=4)
    pos_len = (ratings > 0).sum(axis=1)
    user_len = np.full(n_users, n_items)
    # recbole collector.py rec.meanrank: the ranks (1 = the highest score) of the positives, summed
    pos_rank_sum = np.array([sum(1 + np.flatnonzero(ratings[u][rankings[u]] > 0)) for u in range(n_users)])
    pair_num = (user_len + 1) * pos_len - pos_len * (pos_len + 1) / 2 - pos_rank_sum
    user_auc = pair_num / ((user_len - pos_len) * pos_len)
    expected = (user_auc * pos_len).sum() / pos_len.sum()
    assert parse_metric("auc(convention=recbole)").compute(data) == pytest.approx(expected, abs=1e-12)


def test_gini_denominator_n_recbole_lenskit() -> None:
    # every list recommends item 2 of 3: receval's (Xiang) Gini 1; lenskit stats.py gini divides
    # Σ (2j − n − 1) p_j by n: (2·3 − 3 − 1)·1 / 3; recbole metrics.py GiniIndex too, over its num_items = n + 1
    # (the [PAD] token counts): (2·4 − 4 − 1)·1 / 4
    data = MetricInput(np.array([[2], [2]]), sp.csr_matrix((2, 3)))
    assert parse_metric("gini").compute(data) == pytest.approx(1.0)
    assert parse_metric("gini(denominator=n)").compute(data) == pytest.approx(2 / 3)
    assert parse_metric("gini(convention=lenskit)").compute(data) == pytest.approx(2 / 3)
    assert parse_metric("gini(convention=recbole)").compute(data) == pytest.approx(3 / 4)
    with pytest.raises(MetricError, match="denominator must be one of n-1, n, got 'm'"):
        parse_metric("gini(denominator=m)")


def test_entropy_per_item_recbole() -> None:
    # recbole metrics.py ShannonEntropy: Σ −p ln p / the number of distinct items; p = 1/2, 1/4, 1/4
    data = MetricInput(np.array([[0, 1], [0, 2]]), sp.csr_matrix((2, 3)))
    h = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert parse_metric("entropy").compute(data) == pytest.approx(h)
    assert parse_metric("entropy(per_item=true)").compute(data) == pytest.approx(h / 3)


def _rectools(recs: list[list[int]], train: list[list[int]], n_items: int) -> MetricInput:
    rows = np.full((len(recs), max(map(len, recs))), -1)
    for u, items in enumerate(recs):
        rows[u, : len(items)] = items
    t = np.zeros((len(train), n_items))
    for u, items in enumerate(train):
        t[u, items] = 1.0
    return MetricInput(rows, sp.csr_matrix((len(recs), n_items)), train=sp.csr_matrix(t))


def test_novelty_unsmoothed_self_information_rectools_miuf() -> None:
    # rectools novelty.py MeanInvUserFreq docstring: items i1, i2, i3 = 0, 1, 2; i3 never rated (counted once)
    data = _rectools([[2], [1, 2], [0, 1]], [[0, 1], [0], [0]], 3)
    assert _values("novelty@1(form=self_information,smoothed=false)", data) == pytest.approx(
        [-math.log2(1 / 3), -math.log2(1 / 3), 0.0]
    )
    assert _values("novelty@3(form=self_information,convention=rectools)", data) == pytest.approx(
        [1.5849625, 1.5849625, 0.79248125], abs=1e-7
    )
    smoothed = _values("novelty@1(form=self_information)", data)
    assert smoothed == pytest.approx([-math.log2(1 / 4), -math.log2(2 / 4), -math.log2(4 / 4)])


def test_novelty_normalised_popularity_rectools_arp() -> None:
    # rectools popularity.py AvgRecPopularity docstring (k=3): [2.5, 2, 1.5], normalize=True: [0.41666667, ...]
    data = _rectools([[0, 1], [2, 0, 1], [2, 1]], [[0, 1], [0, 2], [0, 1]], 3)
    assert _values("novelty@3", data) == pytest.approx([2.5, 2.0, 1.5])
    assert _values("novelty@3(normalised=true)", data) == pytest.approx([0.41666667, 0.33333333, 0.25], abs=1e-8)
    assert parse_metric("novelty@3(convention=rectools)").direction == "lower"  # still a popularity


def test_diversity_single_item() -> None:
    aspects = sp.csr_matrix(np.array([[1.0, 0], [0, 1], [1, 1]]))
    data = MetricInput(np.array([[0, 1], [2, -1]]), sp.csr_matrix((2, 3)), aspects=aspects)
    default = _values("diversity@2", data)
    assert default[0] == 1.0 and math.isnan(default[1])
    assert _values("diversity@2(single_item=0)", data) == [1.0, 0.0]  # rectools diversity.py, recpack
    assert _values("diversity@2(convention=lenskit)", data) == [1.0, 0.0]  # lenskit _ils.py: ILS 1


# ------------------------------------------------------------------------ presets by name
def test_names_are_the_issue_names_and_case_insensitive() -> None:
    assert CONVENTION_NAMES == (
        "trec_eval", "ranx", "recbole", "lenskit", "rectools", "recpack", "elliot", "msr", "cornac"
    )  # fmt: skip
    for name in CONVENTION_NAMES:
        assert str(parse_metric(f"recall@5(convention={name.upper()})")) == str(
            parse_metric(f"recall@5(convention={name})")
        )
    assert preset_ties("TREC_EVAL") == "trec_eval"
    assert {preset_ties(n) for n in CONVENTION_NAMES if n != "trec_eval"} == {"input"}
    with pytest.raises(MetricError, match="unknown convention 'terrier'; known: trec_eval, ranx, recbole"):
        parse_metric("recall@5(convention=terrier)")


def test_explicit_parameters_win_and_the_string_shows_the_resolution() -> None:
    assert str(parse_metric("precision@10(convention=lenskit)")) == "precision@10(denominator=list,empty_list=skip)"
    assert str(parse_metric("precision@10(convention=lenskit,denominator=k)")) == "precision@10(empty_list=skip)"
    assert str(parse_metric("gini(convention=recbole)")) == "gini(denominator=n,pad=true)"
    metric = apply_convention("recall@5(denominator=all)", "lenskit")
    assert str(metric) == "recall@5" and metric.convention == "lenskit"
    named = apply_convention("ndcg@10(convention=ranx)", "trec_eval")  # a convention in the string is kept
    assert str(named) == "ndcg@10" and named.convention == "ranx"
    assert apply_convention(parse_metric("mrr@5"), None) == parse_metric("mrr@5")
    assert str(apply_convention(parse_metric("map@5"), "recbole")) == "map@5(denominator=min)"


def test_a_preset_covers_only_its_library_metrics() -> None:
    with pytest.raises(MetricError, match=r"trec_eval has no metric gini .* convention=recbole or lenskit"):
        parse_metric("gini(convention=trec_eval)")
    with pytest.raises(MetricError, match="unknown convention"):
        apply_convention("recall@5", "nope")


def test_every_preset_resolves_to_valid_parameters() -> None:
    for library in LIBRARIES.values():
        for name, preset in library.metrics.items():
            definition = get_definition(name)
            text = name if definition.k == "none" else f"{name}@5"
            metric = parse_metric(f"{text}(convention={library.name})")
            assert metric.convention == library.name
            assert {key: metric.params[key] for key in preset.params} == dict(preset.params), (library.name, name)


def test_library_spellings_select_their_library() -> None:
    for typed in ("P_10", "P.10", "ndcg_cut_10", "map_cut_10", "success_5", "recall_10"):
        assert parse_metric(typed).convention == "trec_eval", typed
    assert str(parse_metric("iprec_at_recall_0.20")) == "iprec_at_recall(recall=0.2)"
    assert parse_metric("ndcg_burges@10").convention == "ranx"
    assert parse_metric("P@10").convention is None  # ir-measures' spelling is receval's precision
    # a metric's own convention parameter (rbu: evall or paper) is not a library
    assert parse_metric("rbu@5(convention=paper)").params["convention"] == "paper"


def test_debiased_estimators_refuse_what_they_do_not_compute() -> None:
    assert parse_metric("recall@5(estimator=ips)").debiased
    with pytest.raises(MetricError, match="compute recall only with denominator=all, not min"):
        parse_metric("recall@5(estimator=ips,denominator=min)")
    with pytest.raises(MetricError, match="compute ndcg only with discount=log2"):
        parse_metric("ndcg@5(estimator=ips,convention=lenskit)")


# ----------------------------------------------------------------------------- the trap
def _graded_run() -> tuple[pd.DataFrame, pd.DataFrame]:
    truth = pd.DataFrame(
        {"user": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "y"], "rating": [5, 3, 4, 2, 5]}
    )
    recs = pd.DataFrame({"user": ["a", "a", "b", "b"], "item": ["y", "x", "x", "y"], "score": [2.0, 1.0, 2.0, 1.0]})
    return truth, recs


def test_a_letters_case_never_changes_a_number() -> None:
    truth, recs = _graded_run()
    spellings = ["nDCG@10", "ndcg@10", "NDCG@10", "Ndcg@10"]
    res = receval.evaluate(recs, truth, [*spellings, "ndcg_cut_10"], threshold=4)
    values = {res.summary[s] for s in spellings}
    assert len(values) == 1
    # trec_eval's nDCG, asked by its name, takes gains from every grade: the threshold changes nothing in it
    assert res.summary["ndcg_cut_10"] != res.summary["ndcg@10"]
    assert (
        res.summary["ndcg_cut_10"]
        == receval.evaluate(recs, truth, ["ndcg@10(graded=true)"]).summary["ndcg@10(graded=true)"]
    )


_NAMES = sorted({*available_metrics(), *_ALIASES})


@settings(max_examples=150)
@given(name=st.sampled_from(_NAMES), flips=st.lists(st.booleans(), min_size=40, max_size=40))
def test_no_spelling_depends_on_case(name: str, flips: list[bool]) -> None:
    """Every metric name and alias, in any mix of cases, resolves to the same metric with the same parameters."""
    cased = "".join(c.upper() if flip else c for c, flip in zip(name, flips, strict=False)) + name[len(flips) :]
    k = "" if get_definition(name).k == "none" else "@5"
    plain, mixed = parse_metric(f"{name}{k}"), parse_metric(f"{cased}{k}")
    assert (str(mixed), mixed.convention) == (str(plain), plain.convention)


@settings(max_examples=60)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 6))
def test_convention_parameters_against_their_formulas(seed: int, k: int) -> None:
    """On random runs: recall by min(k, R) ≥ recall; AP over k ≤ AP over R when R ≤ k; Gini by n is (n − 1)/n
    of Gini by n − 1; nDCG with the clipped discount is scored for the same users and stays ≤ 1; unsmoothed
    self-information ≥ 0."""
    rng = np.random.default_rng(seed)
    n_users, n_items = 5, 8
    ratings = np.where(rng.random((n_users, n_items)) < 0.4, rng.integers(1, 6, (n_users, n_items)), 0).astype(float)
    rankings = np.array([rng.permutation(n_items)[:6] for _ in range(n_users)])
    train = sp.csr_matrix((rng.random((n_users, n_items)) < 0.5).astype(float))
    data = MetricInput(rankings, sp.csr_matrix(ratings), threshold=3, train=train)
    recall, by_min = _values(f"recall@{k}", data), _values(f"recall@{k}(denominator=min)", data)
    assert all((math.isnan(a) and math.isnan(b)) or b >= a - 1e-12 for a, b in zip(recall, by_min, strict=True))
    n_pos = (ratings >= 3).sum(axis=1)
    ap, ap_k = _values(f"map@{k}", data), _values(f"map@{k}(denominator=k)", data)
    for a, b, r in zip(ap, ap_k, n_pos, strict=True):
        if r and r <= k:
            assert b <= a + 1e-12
    g1, gn = parse_metric(f"gini@{k}").compute(data), parse_metric(f"gini@{k}(denominator=n)").compute(data)
    assert gn == pytest.approx(g1 * (n_items - 1) / n_items)
    log2 = parse_metric(f"ndcg@{k}(gain=binary)").per_user(data)
    clipped = parse_metric(f"ndcg@{k}(gain=binary,discount=clipped)").per_user(data)
    assert np.array_equal(np.isnan(log2), np.isnan(clipped))
    assert np.all(np.nan_to_num(clipped) <= 1 + 1e-12)
    assert min(_values(f"novelty@{k}(form=self_information,smoothed=false)", data)) >= 0


# ------------------------------------------------------------------------ the docs table
def test_docs_table_is_the_table_in_the_code() -> None:
    text = (DOCS / "conventions.md").read_text(encoding="utf-8")
    assert markdown_table() in text
    assert "conventions.md" in (DOCS / "metrics.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ against ranx itself
@pytest.mark.slow
def test_ranx_preset_equals_ranx() -> None:
    assert_equals_ranx(
        {
            "precision@10": "precision@10(convention=ranx)",
            "recall@10-l4": "recall@10(convention=ranx,threshold=4)",
            "ndcg@10": "ndcg@10(convention=ranx)",
            f"map@{WIDTH}": f"map@{WIDTH}(convention=ranx)",
            "mrr": "mrr(convention=ranx)",
            "hits@10": "tp@10(convention=ranx)",
            "f1@10": "f1@10(convention=ranx)",
            "r-precision": "r_precision(convention=ranx)",
            "hit_rate@5": "hit_rate@5(convention=ranx)",
        },
        seed=5,
    )


def test_diversity_of_an_empty_list_as_recpack_scores_it() -> None:
    """RecPack's IntraListDiversityK gives a user without recommendations 0 (recpack/metrics/diversity.py)."""
    import numpy as np
    import pandas as pd

    from receval import evaluate

    truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "x"], "rating": [1, 1, 1]})
    recs = pd.DataFrame({"user": ["a", "a"], "item": ["x", "y"], "score": [0.9, 0.8]})
    aspects = pd.DataFrame({"item": ["x", "y"], "aspect": ["p", "q"]})
    got = evaluate(recs, truth, ["diversity@2", "diversity@2(empty_list=zero)", "diversity@2(convention=recpack)"],
                   aspects=aspects, empty_users="zero").per_user.set_index("user")  # fmt: skip
    assert got.loc["a"].tolist() == [1.0, 1.0, 1.0]  # x and y share no aspect: Jaccard distance 1
    assert np.isnan(got.loc["b", "diversity@2"])
    assert got.loc["b", "diversity@2(empty_list=zero)"] == got.loc["b", "diversity@2(convention=recpack)"] == 0.0


# ------------------------------------------------------------------ where a preset's library differs
def test_ranx_bpref_without_a_judged_nonrelevant_document_is_trec_evals_value() -> None:
    # ranx/metrics/bpref.py divides by min(R, N) = 0 here and returns NaN; receval keeps trec_eval's value under
    # convention=ranx (m_bpref.c: a relevant document with no non-relevant one above it counts 1), as documented
    run = pd.DataFrame({"user": ["q1"] * 3, "item": ["d1", "d3", "d4"], "score": [3, 2, 1]})
    truth = pd.DataFrame({"user": ["q1", "q1"], "item": ["d1", "d2"], "rating": [1, 1]})
    for convention in ("ranx", "trec_eval"):
        per_user = receval.evaluate(run, truth, ["bpref"], convention=convention, threshold=1).per_user
        assert per_user["bpref"].tolist() == [0.5]  # d1 ranked of d1, d2
    text = (DOCS / "conventions.md").read_text(encoding="utf-8")
    section = text.split("## Where a preset's library gives another number", 1)[1].split("\n## ", 1)[0]
    assert "ranx's `bpref` is NaN" in section and "convention=ranx" in section
