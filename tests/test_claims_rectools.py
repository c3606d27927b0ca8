"""``convention="rectools"`` with ``ranks="positions"`` against RecTools' metric code, transcribed, on generated runs.

tests/peers/rectools holds RecTools' own fixed test cases; this adds generated runs with gaps in the ranks, lists
shorter and longer than k, test users without a recommendation. RecTools is not installed here (it pins older
pandas); its code is copied below from MobileTeleSystems/RecTools at 41a5a639a78bd07fa313d12b5d39bc140199c5f5
(Apache 2.0), the commit the preset was read from, its debiasing branches left out:
rectools/metrics/base.py (``merge_reco``), rectools/metrics/classification.py (``calc_confusions``; Precision with
``r_precision``, Recall, F1Beta, HitRate ``_calc_per_user_from_confusion_df``) and rectools/metrics/ranking.py
(``MAP.fit`` and ``calc_per_user_from_fitted``, ``NDCG.calc_per_user_from_merged``, ``MRR``), log base 2.

RecTools' relevance is membership of the test interactions (every one): the runs use receval's default threshold,
the lowest rating, which makes every test rating relevant. It scores the users of the interactions table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse

import receval

USER, ITEM, RANK = "user_id", "item_id", "rank"  # RecTools' Columns.User, .Item, .Rank
LIKED, TP, FP, FN = "__liked", "__tp", "__fp", "__fn"


# ----------------------------------------------------------------------------------- RecTools, transcribed
def merge_reco(reco: pd.DataFrame, interactions: pd.DataFrame) -> pd.DataFrame:
    return pd.merge(
        interactions.reindex(columns=[USER, ITEM]),
        reco.reindex(columns=[USER, ITEM, RANK]),
        on=[USER, ITEM],
        how="left",
    )


def calc_confusions(merged: pd.DataFrame, k: int) -> pd.DataFrame:
    confusion_df = merged.groupby(USER)[ITEM].agg("size").rename(LIKED).to_frame()
    confusion_df[TP] = merged.eval(f"__is_hit = {RANK} <= @k").groupby(USER)["__is_hit"].agg("sum")
    confusion_df[FP] = k - confusion_df[TP]
    confusion_df[FN] = confusion_df[LIKED] - confusion_df[TP]
    return confusion_df


def _classification(name: str, confusion_df: pd.DataFrame, k: int, beta: float = 1.0) -> pd.Series:
    if name in ("precision", "r_precision"):
        denominator = np.minimum(k, confusion_df[TP] + confusion_df[FN]) if name == "r_precision" else k
        return confusion_df[TP] / denominator
    if name == "recall":
        return confusion_df[TP] / confusion_df[LIKED]
    if name == "f1":
        beta_sqr = beta**2
        p_k = confusion_df[TP] / k
        r_k = confusion_df[TP] / confusion_df[LIKED]
        f1 = (1 + beta_sqr) * p_k * r_k / (beta_sqr * p_k + r_k)
        f1.loc[(p_k == 0.0) & (r_k == 0.0)] = 0.0
        return f1
    assert name == "hit_rate"
    return (confusion_df[TP] > 0).astype(float)


def _map(merged: pd.DataFrame, k_max: int, divide_by_k: bool = False) -> pd.Series:  # MAP.fit + calc_per_user_...
    users = np.unique(merged[USER])
    n_relevant_items = merged.groupby(USER, sort=False)[ITEM].agg("size")[users].values
    user_to_idx_map = pd.Series(np.arange(users.size), index=users)
    df_prepared = merged.query(f"{RANK} <= @k_max")
    csr = sparse.csr_matrix(
        (
            np.ones(len(df_prepared)),
            (df_prepared[USER].map(user_to_idx_map), df_prepared[RANK].round().astype(int)),
        ),
        shape=(users.size, k_max + 1),
    )
    full_cumsum = np.cumsum(csr.data)
    n_row_elements = np.diff(csr.indptr)
    row_sums = np.asarray(csr.sum(axis=1)).ravel()
    sum_n_elements_in_prev_rows = np.repeat(np.concatenate((np.array([0]), np.cumsum(row_sums)[:-1])), n_row_elements)
    n_relevant_items_at_k = csr
    n_relevant_items_at_k.data = full_cumsum - sum_n_elements_in_prev_rows
    counts = np.arange(k_max + 1)
    counts_indexed = counts[n_relevant_items_at_k.indices]
    prec_at_k = n_relevant_items_at_k
    prec_at_k.data = prec_at_k.data / counts_indexed
    valid_precisions = prec_at_k[:, 1 : k_max + 1]
    sum_precisions = np.asarray(valid_precisions.sum(axis=1)).reshape(-1)
    sum_precisions = sum_precisions / k_max if divide_by_k else sum_precisions / n_relevant_items
    return pd.Series(sum_precisions, index=pd.Series(users, name=USER)).rename(None)


def _ndcg(merged: pd.DataFrame, k: int, divide_by_achievable: bool = False) -> pd.Series:
    merged = merged.copy()
    merged["__DCG"] = (merged[RANK] <= k).astype(int) / (np.log(merged[RANK] + 1) / np.log(2))
    ranks = np.arange(1, k + 1)
    discounted_gains = 1 / (np.log(ranks + 1) / np.log(2))
    if divide_by_achievable:
        grouped = merged.groupby(USER, sort=False)
        stats = grouped.agg(n_items=(ITEM, "count"), dcg=("__DCG", "sum"))
        n_items_to_ndcg_map = dict(zip(ranks, discounted_gains.cumsum(), strict=True))
        n_items_to_ndcg_map[0] = 0
        idcg = stats["n_items"].clip(upper=k).map(n_items_to_ndcg_map)
        ndcg = stats["dcg"] / idcg
    else:
        idcg = discounted_gains.sum()
        ndcg = (
            pd.DataFrame({USER: merged[USER], "__ndcg": merged["__DCG"] / idcg})
            .groupby(USER, sort=False)["__ndcg"]
            .sum()
        )
    return ndcg.rename(None)


def _mrr(merged: pd.DataFrame, k: int) -> pd.Series:
    cutted_rank = np.where(merged[RANK] <= k, merged[RANK], np.nan)
    min_rank_per_user = (
        pd.DataFrame({USER: merged[USER], "__cutted_rank": cutted_rank})
        .groupby(USER, sort=False)["__cutted_rank"]
        .min()
    )
    return (1.0 / min_rank_per_user).fillna(0).rename(None)


def _rectools(metric: str, merged: pd.DataFrame, k: int) -> pd.Series:
    """RecTools' per-user values for receval's metric string (without the @k and the preset)."""
    if metric in ("precision", "r_precision", "recall", "f1", "hit_rate"):
        return _classification(metric, calc_confusions(merged, k), k)
    return {
        "f1(beta=2)": lambda: _classification("f1", calc_confusions(merged, k), k, beta=2.0),
        "map": lambda: _map(merged, k),
        "map(denominator=k)": lambda: _map(merged, k, divide_by_k=True),
        "ndcg": lambda: _ndcg(merged, k),
        "ndcg(ideal=truth)": lambda: _ndcg(merged, k, divide_by_achievable=True),
        "mrr": lambda: _mrr(merged, k),
    }[metric]()


METRICS = [
    "precision", "r_precision", "recall", "f1", "f1(beta=2)", "hit_rate", "map", "map(denominator=k)", "ndcg",
    "ndcg(ideal=truth)", "mrr",
]  # fmt: skip
ITEMS = [f"i{n}" for n in range(14)]


@st.composite
def runs(draw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Lists of 0-9 items at positions with gaps (rank r is position r); 1-6 test items per user."""
    reco, interactions = [], []
    for u in range(draw(st.integers(1, 6))):
        items = draw(st.permutations(ITEMS))[: draw(st.integers(0 if u else 1, 9))]  # u0 has a list
        positions = sorted(draw(st.lists(st.integers(1, 14), min_size=len(items), max_size=len(items), unique=True)))
        reco += [(f"u{u}", i, r) for i, r in zip(items, positions, strict=True)]
        liked = draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=6, unique=True))
        interactions += [(f"u{u}", i) for i in liked]
    reco_frame = pd.DataFrame(reco, columns=[USER, ITEM, RANK]).astype({RANK: "int64"})
    return reco_frame, pd.DataFrame(interactions, columns=[USER, ITEM])


def _string(metric: str, k: int) -> str:
    name, _, params = metric.partition("(")
    return f"{name}@{k}(convention=rectools{',' + params[:-1] if params else ''})"


@pytest.mark.filterwarnings("ignore:none of the item ids")
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.sampled_from([1, 3, 5, 20]))
def test_ranking_metrics_equal_rectools(run, k: int) -> None:
    reco, interactions = run
    merged = merge_reco(reco, interactions)
    strings = [_string(m, k) for m in METRICS]
    result = receval.evaluate(reco, interactions.assign(rating=1.0), strings, ranks="positions")
    table = result.per_user.set_index("user")
    for metric, string in zip(METRICS, strings, strict=True):
        expected = _rectools(metric, merged, k)
        got = table.loc[expected.index, string].to_numpy(dtype=float)
        np.testing.assert_allclose(got, expected.to_numpy(dtype=float), rtol=0, atol=1e-12, err_msg=string)
        assert result.summary[string] == pytest.approx(expected.mean(), abs=1e-12), string
