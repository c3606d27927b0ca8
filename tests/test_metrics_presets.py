"""The presets added last against their libraries' own code, on random data.

The reference functions below are copied from the libraries at the commits the presets were read from:
Microsoft Recommenders ``recommenders/evaluation/python_evaluation.py`` at
b02c95e2b98b961f9943ce561bbb03f8dff2f41f (MIT licence, tests/peers/msr/SOURCE.md) with its decorators left out,
and Cornac ``cornac/metrics/ranking.py`` ``NCRR.compute`` at 4db147def0c79c6b2ba5210457808d6041f0d0b3 (Apache 2.0,
tests/peers/cornac/SOURCE.md). LensKit's discount and recall are checked by hand (lkpy at
3bd1c175d6dae4e30da906e4f986797f214d1fe8: ``LogRankWeight`` 1/log2(max(r, 2)), ``Recall`` hits / min(|test|, n)).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval

sklearn_metrics = pytest.importorskip("sklearn.metrics")

U, IT, R, P = "userID", "itemID", "rating", "prediction"


# ------------------------------------------------------- Microsoft Recommenders (verbatim but for decorators)
def merge_ranking_true_pred(rating_true, rating_pred, col_user, col_item, col_prediction, relevancy_method, k=10,
                            threshold=10, **_):  # fmt: skip
    common_users = set(rating_true[col_user]).intersection(set(rating_pred[col_user]))
    rating_true_common = rating_true[rating_true[col_user].isin(common_users)]
    rating_pred_common = rating_pred[rating_pred[col_user].isin(common_users)]
    n_users = len(common_users)
    top_k = k
    df_hit = get_top_k_items(dataframe=rating_pred_common, col_user=col_user, col_rating=col_prediction, k=top_k)
    df_hit = pd.merge(df_hit, rating_true_common, on=[col_user, col_item])[[col_user, col_item, "rank"]]
    df_hit_count = pd.merge(
        df_hit.groupby(col_user, as_index=False)[col_user].agg(hit="count"),
        rating_true_common.groupby(col_user, as_index=False)[col_user].agg(actual="count"),
        on=col_user,
    )
    return df_hit, df_hit_count, n_users


def get_top_k_items(dataframe, col_user=U, col_rating=R, k=10):
    top_k_items = (
        dataframe.sort_values([col_user, col_rating], ascending=[True, False])
        .groupby(col_user, as_index=False)
        .head(k)
        .reset_index(drop=True)
    )
    top_k_items["rank"] = top_k_items.groupby(col_user, sort=False).cumcount() + 1
    return top_k_items


def _merge(rating_true, rating_pred, k):
    return merge_ranking_true_pred(rating_true, rating_pred, U, IT, P, "top_k", k=k)


def precision_at_k(rating_true, rating_pred, k):
    df_hit, df_hit_count, n_users = _merge(rating_true, rating_pred, k)
    if df_hit.shape[0] == 0:
        return 0.0
    return (df_hit_count["hit"] / k).sum() / n_users


def recall_at_k(rating_true, rating_pred, k):
    df_hit, df_hit_count, n_users = _merge(rating_true, rating_pred, k)
    if df_hit.shape[0] == 0:
        return 0.0
    return (df_hit_count["hit"] / df_hit_count["actual"]).sum() / n_users


def r_precision_at_k(rating_true, rating_pred, k):
    df_hit, df_hit_count, _ = _merge(rating_true, rating_pred, k)
    if df_hit.shape[0] == 0:
        return 0.0
    df_merged = df_hit.merge(df_hit_count[[U, "actual"]])
    df_merged = df_merged[df_merged["rank"] <= df_merged["actual"]]
    return (df_merged.groupby(U).size() / df_hit_count.set_index(U)["actual"]).mean()


def ndcg_at_k(rating_true, rating_pred, k):
    df_hit, _, _ = _merge(rating_true, rating_pred, k)
    if df_hit.shape[0] == 0:
        return 0.0
    df_dcg = df_hit.merge(rating_pred, on=[U, IT]).merge(rating_true, on=[U, IT], how="outer", suffixes=("_left", None))
    df_dcg["rel"] = 1
    discfun = np.log
    df_dcg["dcg"] = df_dcg["rel"] / discfun(1 + df_dcg["rank"])
    df_idcg = df_dcg.sort_values([U, R], ascending=False)
    df_idcg["irank"] = df_idcg.groupby(U, as_index=False, sort=False)[R].rank("first", ascending=False)
    df_idcg["idcg"] = df_idcg["rel"] / discfun(1 + df_idcg["irank"])
    df_user = df_dcg.groupby(U, as_index=False, sort=False).agg({"dcg": "sum"})
    df_user = df_user.merge(
        df_idcg.groupby(U, as_index=False, sort=False)
        .head(k)
        .groupby(U, as_index=False, sort=False)
        .agg({"idcg": "sum"}),
        on=U,
    )
    df_user["ndcg"] = df_user["dcg"] / df_user["idcg"]
    return df_user["ndcg"].mean()


def map_at_k(rating_true, rating_pred, k):
    df_hit, df_hit_count, n_users = _merge(rating_true, rating_pred, k)
    if df_hit.shape[0] == 0:
        return 0.0
    df_hit_sorted = df_hit.copy()
    df_hit_sorted["rr"] = (df_hit_sorted.groupby(U).cumcount() + 1) / df_hit_sorted["rank"]
    df_hit_sorted = df_hit_sorted.groupby(U).agg({"rr": "sum"}).reset_index()
    df_merge = pd.merge(df_hit_sorted, df_hit_count, on=U)
    return (df_merge["rr"] / df_merge["actual"].apply(lambda x: min(x, k))).sum() / n_users


def novelty(train_df, reco_df, col_user=U, col_item=IT):
    n_records = train_df.shape[0]
    item_count = pd.DataFrame({"count": train_df.groupby([col_item]).size()}).reset_index()
    item_count["item_novelty"] = -np.log2(item_count["count"] / n_records)
    df_item_novelty = item_count[[col_item, "item_novelty"]].sort_values(col_item).reset_index(drop=True)
    n_recommendations = reco_df.shape[0]
    reco_item_count = pd.DataFrame({"count": reco_df.groupby([col_item]).size()}).reset_index()
    reco_item_novelty = reco_item_count.merge(df_item_novelty, on=col_item)
    reco_item_novelty["product"] = reco_item_novelty["count"] * reco_item_novelty["item_novelty"]
    return reco_item_novelty.agg({"product": "sum"}).iloc[0] / n_recommendations


# ------------------------------------------------------------------------ Cornac NCRR.compute (verbatim)
def cornac_ncrr(gt_pos, pd_rank, k=-1):
    if k > 0:
        truncated_pd_rank = pd_rank[:k]
    else:
        truncated_pd_rank = pd_rank
    rec_rank = np.where(np.isin(truncated_pd_rank, gt_pos))[0]
    if len(rec_rank) == 0:
        return 0.0
    rec_rank = rec_rank + 1
    crr = np.sum(1.0 / rec_rank)
    max_nb_pos = min(len(gt_pos), len(truncated_pd_rank))
    ideal_rank = np.arange(max_nb_pos)
    ideal_rank = ideal_rank + 1
    icrr = np.sum(1.0 / ideal_rank)
    return crr / icrr


# ------------------------------------------------------------------------------------------------ data
@st.composite
def worlds(draw):
    """Truth of 2-4 users over 8 items (ratings 1-5), predictions with distinct scores for random items (the
    first user's best-scored item a truth item: some hit), a user of the truth without predictions, and k."""
    n_users = draw(st.integers(2, 4))
    truth, preds = [], []
    for u in range(1, n_users + 1):
        items = draw(st.lists(st.integers(1, 8), min_size=1, max_size=6, unique=True))
        truth += [(u, i, draw(st.integers(1, 5))) for i in items]
        if u == n_users and draw(st.booleans()):
            continue  # a truth user without predictions: left out by precision, counted 0 by nDCG
        shown = draw(st.lists(st.integers(1, 8), min_size=1, max_size=8, unique=True))
        if u == 1:
            shown = [items[0], *[i for i in shown if i != items[0]]]
        preds += [(u, i, float(len(shown) - r)) for r, i in enumerate(shown)]
    return pd.DataFrame(truth, columns=[U, IT, R]), pd.DataFrame(preds, columns=[U, IT, P]), draw(st.integers(1, 6))


def _receval(truth: pd.DataFrame, preds: pd.DataFrame, metrics: list[str], **options) -> dict[str, float]:
    recs = preds.rename(columns={U: "user", IT: "item", P: "score"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return receval.evaluate(recs, truth.rename(columns={U: "user", IT: "item", R: "rating"}), metrics,
                                threshold=1, convention="msr", **options).summary  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_msr_preset_equals_microsoft_recommenders(world) -> None:
    truth, preds, k = world
    got = _receval(truth, preds, [f"precision@{k}", f"recall@{k}", f"ndcg@{k}", f"map@{k}", f"r_precision@{k}"])
    assert got[f"precision@{k}"] == pytest.approx(precision_at_k(truth, preds, k), rel=1e-12)
    assert got[f"recall@{k}"] == pytest.approx(recall_at_k(truth, preds, k), rel=1e-12)
    assert got[f"ndcg@{k}"] == pytest.approx(ndcg_at_k(truth, preds, k), rel=1e-12)
    assert got[f"map@{k}"] == pytest.approx(map_at_k(truth, preds, k), rel=1e-12)
    assert got[f"r_precision@{k}"] == pytest.approx(r_precision_at_k(truth, preds, k), rel=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.lists(st.tuples(st.integers(20, 24), st.integers(1, 10)), min_size=1, max_size=12, unique=True))
def test_msr_novelty_equals_microsoft_recommenders(world, train_pairs) -> None:
    truth, preds, _ = world
    preds = preds[preds[U].isin(truth[U])]
    train = pd.DataFrame(train_pairs, columns=[U, IT])
    recs = preds.rename(columns={U: "user", IT: "item", P: "score"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        truth = truth.rename(columns={U: "user", IT: "item", R: "rating"})
        train_table = train.rename(columns={U: "user", IT: "item"})
        got = receval.evaluate(recs, truth, ["novelty@8"], train=train_table, convention="msr").summary
    assert got["novelty@8"] == pytest.approx(novelty(train, preds), rel=1e-12, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, 1.0]), st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.9])),
                min_size=2, max_size=30))  # fmt: skip
def test_rating_auc_is_sklearns_roc_auc_over_every_prediction(rows) -> None:
    # Microsoft Recommenders' auc is roc_auc_score(y_true, y_pred) over the joined test pairs; ties count 1/2
    frame = pd.DataFrame(rows, columns=["user", "rating", "prediction"]).assign(item=range(len(rows)))
    frame.loc[0, "rating"], frame.loc[1, "rating"] = 1.0, 0.0  # both classes: a rating scale 0..1
    got = receval.evaluate(None, frame[["user", "item", "rating"]], ["rating_auc", "rating_auc(agg=macro)"],
                           predictions=frame[["user", "item", "prediction"]], threshold=1).summary  # fmt: skip
    assert got["rating_auc"] == pytest.approx(sklearn_metrics.roc_auc_score(frame["rating"], frame["prediction"]))
    per_user = [
        sklearn_metrics.roc_auc_score(g["rating"], g["prediction"])
        for _, g in frame.groupby("user")
        if 0 < g["rating"].sum() < len(g)
    ]
    assert got["rating_auc(agg=macro)"] == pytest.approx(np.mean(per_user) if per_user else math.nan, nan_ok=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=5, unique=True),
       st.lists(st.integers(0, 9), min_size=1, max_size=8, unique=True), st.integers(-1, 6))  # fmt: skip
def test_ncrr_is_cornacs(gt_pos, pd_rank, k) -> None:
    k = -1 if k == 0 else k
    recs = pd.DataFrame({"user": "u", "item": pd_rank, "rank": range(1, len(pd_rank) + 1)})
    truth = pd.DataFrame({"user": "u", "item": gt_pos})
    metric = "ncrr" if k < 0 else f"ncrr@{k}"
    got = receval.evaluate(recs, truth, [metric], convention="cornac").summary[metric]
    assert got == pytest.approx(cornac_ncrr(np.array(gt_pos), np.array(pd_rank), k), rel=1e-12)


def test_msr_users_without_a_list_are_left_out_of_precision_and_count_zero_in_ndcg() -> None:
    # python_evaluation.py: precision_at_k divides by the users common to truth and predictions; ndcg_at_k's outer
    # join keeps every truth user, a user without predictions scoring 0
    truth = pd.DataFrame({"user": ["a", "b"], "item": [1, 2], "rating": [5, 5]})
    recs = pd.DataFrame({"user": ["a"], "item": [1], "score": [1.0]})
    msr = receval.evaluate(recs, truth, ["precision@1", "ndcg@1"], convention="msr").summary
    plain = receval.evaluate(recs, truth, ["precision@1", "ndcg@1"]).summary
    assert (msr["precision@1"], msr["ndcg@1"]) == (1.0, 0.5)
    assert plain["precision@1"] == 0.5


def test_lenskit_preset_discount_and_recall_denominator_by_hand() -> None:
    # the list x, a, b, y against the test items a, b, c. LensKit NDCG (gain=None, LogRankWeight): the realised
    # DCG 1/log2(max(2, 2)) + 1/log2(3), the ideal fixed_dcg(3) = 1 + 1 + 1/log2(3); Recall@2: 1 / min(3, 2)
    recs = pd.DataFrame({"user": "u", "item": ["x", "a", "b", "y"], "rank": [1, 2, 3, 4]})
    truth = pd.DataFrame({"user": "u", "item": ["a", "b", "c"]})
    got = receval.evaluate(recs, truth, ["ndcg@4", "recall@2"], convention="lenskit").summary
    assert got["ndcg@4"] == pytest.approx((1 + 1 / math.log2(3)) / (2 + 1 / math.log2(3)), rel=1e-12)
    assert got["recall@2"] == pytest.approx(1 / 2, rel=1e-12)
    plain = receval.evaluate(recs, truth, ["ndcg@4(gain=binary)", "recall@2"]).summary
    assert plain["ndcg@4(gain=binary)"] != pytest.approx(got["ndcg@4"]) and plain["recall@2"] == pytest.approx(1 / 3)
