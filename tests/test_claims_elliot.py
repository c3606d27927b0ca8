"""``convention="elliot"`` against Elliot's own metric code, transcribed.

receval.metrics.conventions names Elliot's files for the preset's accuracy metrics, its ShannonEntropy and ARP
(as ``novelty``); the popularity-bias metrics (ARP, APLT, ACLT, PopREO, PopRSP as ``arp``...) are checked in
tests/test_popularity_bias.py. Elliot is not installable here (it pins TensorFlow 2.3), so its code is copied below,
from sisinflab/elliot at fc27efedaddf4a57294db14b4bcaa5553a0015d2 (Apache 2.0), the commit the preset was read from:

- elliot/evaluation/metrics/accuracy/{precision,recall,f1,hit_rate,mrr,map,ndcg}/*.py: ``__user_*`` and
  ``eval_user_metric`` (the users that have a list and a relevant test item), ``BaseMetric.eval`` (their mean);
- elliot/evaluation/relevance/relevance.py: ``BinaryRelevance`` (rating >= threshold), ``DiscountedRelevance``
  (gain 2^(r - threshold + 1) - 1 for r >= threshold) and ``logarithmic_ranking_discount`` (1 / log2(r + 2));
- elliot/evaluation/metrics/diversity/shannon_entropy/shannon_entropy.py: ``eval`` (weights 1 / list length);
- elliot/evaluation/metrics/bias/arp/arp.py (``pop_items``: the number of training users of each item).

Elliot takes each user's list in the order given: the preset's tie rule is ``input``, so the generated runs below
have tied scores (equal scores keep the rows' order) and are given in list order.
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

Lists = dict[str, list[tuple[str, float]]]
Test = dict[str, dict[str, int]]


# ----------------------------------------------------------------------------------- Elliot, transcribed
def _discount(k: int) -> float:  # AbstractRelevanceSingleton.logarithmic_ranking_discount
    return 1 / math.log(k + 2) * math.log(2)


def _binary(test: Test, rel_threshold: float) -> dict[str, list[str]]:  # BinaryRelevance.__init__
    return {u: [i for i, r in test_items.items() if r >= rel_threshold] for u, test_items in test.items()}


def _gains(test: Test, rel_threshold: float) -> dict[str, dict[str, float]]:  # DiscountedRelevance
    return {
        u: {i: 2 ** (score - rel_threshold + 1) - 1 for i, score in test_items.items() if score >= rel_threshold}
        for u, test_items in test.items()
    }


def _precision(recs, cutoff, rel):  # Precision.__user_precision
    return sum([1 if i in rel else 0 for i, _ in recs[:cutoff]]) / cutoff


def _recall(recs, cutoff, rel):  # Recall.__user_recall
    return sum([1 if i in rel else 0 for i, _ in recs[:cutoff]]) / len(rel)


def _f1(recs, cutoff, rel, squared_beta=1):  # F1.__user_f1
    p = sum([1 for i in recs[:cutoff] if i[0] in rel]) / cutoff
    r = sum([1 for i in recs[:cutoff] if i[0] in rel]) / len(rel)
    num = (1 + squared_beta) * p * r
    den = (squared_beta * p) + r
    return num / den if den != 0 else 0


def _hr(recs, cutoff, rel):  # HR.__user_HR
    return 1 if sum([1 for i in recs[:cutoff] if i[0] in rel]) > 0 else 0


def _mrr(recs, cutoff, rel):  # MRR.__user_mrr, __get_reciprocal_rank
    for r, (i, _) in enumerate(recs[:cutoff]):
        if i in rel:
            return 1 / (r + 1)
    return 0


def _map(recs, cutoff, rel):  # MAP.__user_ap over MAP.__user_precision
    def user_precision(user_recommendations, n):
        return sum([1 for i in user_recommendations[:n] if i[0] in rel]) / n

    return np.average([user_precision(recs[:cutoff], (n + 1)) for n in range(cutoff)])


def _ndcg(recs, cutoff, gains):  # nDCG.compute_idcg, compute_user_ndcg
    ordered = sorted(list(gains.values()))
    n, m = min(len(ordered), cutoff), len(ordered)
    idcg = sum(map(lambda g, r: ordered[m - r - 1] * _discount(r), ordered, range(n)))
    dcg = sum([gains.get(x, 0) * _discount(r) for r, x in enumerate([item for item, _ in recs[:cutoff]]) if r < cutoff])
    return dcg / idcg if dcg > 0 else 0


ACCURACY = {"precision": _precision, "recall": _recall, "f1": _f1, "hit_rate": _hr, "mrr": _mrr, "map": _map}


def _elliot_accuracy(metric: str, lists: Lists, test: Test, cutoff: int, threshold: float) -> dict[str, float]:
    """``eval_user_metric``: every user with a list and a relevant test item."""
    if metric == "ndcg":
        gains = _gains(test, threshold)
        return {u: _ndcg(r, cutoff, gains.get(u, {})) for u, r in lists.items() if len(gains.get(u, {}))}
    rel = _binary(test, threshold)
    return {u: ACCURACY[metric](r, cutoff, rel.get(u, [])) for u, r in lists.items() if len(rel.get(u, []))}


def _elliot_entropy(lists: Lists, cutoff: int) -> float:  # ShannonEntropy.__user_se, __sales_novelty, eval
    count: dict[str, int] = {}
    weights: dict[str, float] = {}
    free_norm = 0
    for u_r in lists.values():
        user_norm = len(u_r[:cutoff])
        free_norm += user_norm
        for i, _ in u_r[:cutoff]:
            count[i] = count.get(i, 0) + 1
            weights[i] = weights.get(i, 0) + (1 / user_norm)
    return sum([w * (-math.log(count[i] / free_norm) / math.log(2.0)) for i, w in weights.items()]) / len(lists)


def _elliot_arp(lists: Lists, cutoff: int, pop_items: dict[str, int]) -> dict[str, float]:  # ARP.__user_arp
    return {u: sum([pop_items[i] for i, _ in r[:cutoff]]) / len(r[:cutoff]) for u, r in lists.items()}


# ----------------------------------------------------------------------------------- generated worlds
ITEMS = [f"i{n}" for n in range(14)]


@st.composite
def worlds(draw, same_length: bool = False) -> tuple[Lists, Test]:
    """Lists of 1-12 distinct items, scores with ties (descending, given in list order); graded test ratings 1-5,
    some users without a rating >= 4, some list items unrated. Every user has a list and a test rating."""
    n_users = draw(st.integers(1, 7))
    width = draw(st.integers(1, 12))
    lists: Lists = {}
    test: Test = {}
    for u in range(n_users):
        length = width if same_length else draw(st.integers(1, 12))
        items = draw(st.permutations(ITEMS))[:length]
        steps = draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0]), min_size=length, max_size=length))
        scores = 20.0 - np.cumsum(steps)  # non-increasing: zero steps are ties
        lists[f"u{u}"] = [(i, float(s)) for i, s in zip(items, scores, strict=True)]
        rated = draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=8, unique=True))
        test[f"u{u}"] = {i: draw(st.integers(1, 5)) for i in rated}
    # a test user without a list (Elliot has no list for a user it could not score: it leaves them out); the
    # ratings 1 and 5 also give receval the 1-5 scale the thresholds are on
    test["nolist"] = {ITEMS[0]: 1, ITEMS[1]: 5}
    return lists, test


def _frames(lists: Lists, test: Test) -> tuple[pd.DataFrame, pd.DataFrame]:
    recs = pd.DataFrame([(u, i, s) for u, r in lists.items() for i, s in r], columns=["user", "item", "score"])
    truth = pd.DataFrame([(u, i, g) for u, t in test.items() for i, g in t.items()], columns=["user", "item", "rating"])
    return recs, truth


def _per_user(result: receval.EvaluationResult, metric: str) -> dict[str, float]:
    table = result.per_user.set_index("user")[metric]
    return {str(u): float(v) for u, v in table.items() if not math.isnan(v)}


@pytest.mark.filterwarnings("ignore:none of the item ids")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.sampled_from([1, 3, 5, 10, 20]), st.sampled_from([0, 1, 3, 4]))  # 0: Elliot's default
def test_accuracy_metrics_equal_elliots(world: tuple[Lists, Test], k: int, threshold: int) -> None:
    """Per user and the mean, for k shorter and longer than the lists, binary and graded relevance.

    Elliot's test users are its training users (``Dataset.build_dict(test, self.users)``), each with a list; a test
    user without training ratings is not in its test set. receval's ``cold_start="exclude"`` is that protocol step
    (without it such a user has an empty list, scored 0, and counts in the mean)."""
    lists, test = world
    recs, truth = _frames(lists, test)
    train = pd.DataFrame([(u, "seen", 1.0) for u in lists], columns=["user", "item", "rating"])
    names = [*ACCURACY, "ndcg"]
    metrics = [f"{m}@{k}" for m in names]
    result = receval.evaluate(
        recs, truth, metrics, convention="elliot", threshold=threshold, train=train, cold_start="exclude"
    )
    scored_as_empty = receval.evaluate(recs, truth, metrics, convention="elliot", threshold=threshold)
    assert "input" in result.conventions.tie_break
    for metric in names:
        expected = _elliot_accuracy(metric, lists, test, k, threshold)
        got = _per_user(result, f"{metric}@{k}")
        assert got.keys() == expected.keys(), metric  # users without a relevant item are left out, as Elliot does
        for user, value in expected.items():
            assert got[user] == pytest.approx(value, abs=1e-12), (metric, user)
        if expected:
            assert result.summary[f"{metric}@{k}"] == pytest.approx(np.mean(list(expected.values())), abs=1e-12)
        assert _per_user(scored_as_empty, f"{metric}@{k}") == {**got, "nolist": 0.0}


@pytest.mark.filterwarnings("ignore:none of the item ids")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(same_length=True), st.sampled_from([1, 3, 5, 20]))
def test_entropy_equals_elliots_shannon_entropy_when_lists_have_one_length(world, k: int) -> None:
    lists, test = world
    recs, truth = _frames(lists, test)
    result = receval.evaluate(recs, truth, [f"entropy@{k}"], convention="elliot")
    assert result.summary[f"entropy@{k}"] == pytest.approx(_elliot_entropy(lists, k), abs=1e-12)


def test_entropy_differs_from_elliots_when_list_lengths_differ() -> None:
    """The docs' condition is needed: Elliot weights an item by 1 / its list's length, not by its share."""
    lists: Lists = {"u0": [("a", 1.0)], "u1": [("a", 1.0), ("b", 0.5), ("c", 0.2)]}
    recs, truth = _frames(lists, {"u0": {"a": 5}, "u1": {"b": 5}})
    ours = receval.evaluate(recs, truth, ["entropy@3"], convention="elliot").summary["entropy@3"]
    shares = np.array([2, 1, 1]) / 4
    assert ours == pytest.approx(-(shares * np.log2(shares)).sum())  # 1.5 bits
    # weights a: 1/1 + 1/3, b and c: 1/3; -log2 of the shares 2/4, 1/4, 1/4; over 2 users: 4/3 bits
    assert _elliot_entropy(lists, 3) == pytest.approx((4 / 3 * 1 + 1 / 3 * 2 + 1 / 3 * 2) / 2)
    assert abs(ours - _elliot_entropy(lists, 3)) > 0.15


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.sampled_from([1, 3, 5, 20]), st.data())
def test_novelty_equals_elliots_arp(world, k: int, data) -> None:
    lists, test = world
    recs, truth = _frames(lists, test)
    seen = {u: data.draw(st.lists(st.sampled_from(ITEMS), max_size=9, unique=True)) for u in [*lists, "t0"]}
    seen["t1"] = data.draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=9, unique=True))
    train = pd.DataFrame([(u, i, 1.0) for u, items in seen.items() for i in items], columns=["user", "item", "rating"])
    pop_items = {i: sum(i in s for s in seen.values()) for i in ITEMS}  # Elliot's Popularity: training users
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # items of the lists that are not in the training data
        result = receval.evaluate(recs, truth, [f"novelty@{k}"], convention="elliot", train=train)
    expected = _elliot_arp(lists, k, pop_items)
    got = _per_user(result, f"novelty@{k}")
    assert got.keys() == expected.keys()
    for user, value in expected.items():
        assert got[user] == pytest.approx(value, abs=1e-12), user


# ----------------------------------------------------------------------------------- AUC: not Elliot's
def _elliot_auc(lists: Lists, test: Test, train: dict[str, list[str]], num_items: int, threshold: float) -> float:
    """elliot/evaluation/metrics/accuracy/AUC/auc.py: ``AUC.__user_auc`` and ``AUC.eval``."""

    def user_auc(user_recommendations, user_relevant_items, num_items, train_size):
        neg_num = num_items - train_size - len(user_relevant_items) + 1
        pos_ranks = [r for r, (i, _) in enumerate(user_recommendations) if i in user_relevant_items]
        return [(neg_num - r_r + p_r) / (neg_num) for p_r, r_r in enumerate(pos_ranks)]

    rel = _binary(test, threshold)
    list_of_lists = [
        user_auc(u_r, rel.get(u, []), num_items, len(train[u])) for u, u_r in lists.items() if len(rel.get(u, []))
    ]
    return float(np.average([item for sublist in list_of_lists for item in sublist]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([1, 4]))
def test_auc_over_a_full_ranking_counts_one_negative_fewer_than_elliots(seed: int, threshold: int) -> None:
    """docs/conventions.md: Elliot's AUC counts one negative more than there are (num_items - train - relevant + 1),
    so a positive scores (negatives below + 1) / (negatives + 1); receval's ``auc(negatives=all,agg=micro)`` is
    negatives below / negatives, the rest of Elliot's definition (the mean over every ranked positive of every user).
    """
    rng = np.random.default_rng(seed)
    items = ITEMS[:10]
    lists: Lists = {}
    test: Test = {}
    train: dict[str, list[str]] = {}
    for u in range(int(rng.integers(1, 6))):
        seen = [str(i) for i in rng.choice(items, size=int(rng.integers(0, 4)), replace=False)]
        unseen = [i for i in rng.permutation(items) if i not in seen]  # Elliot's full ranking: every unseen item
        rated = rng.choice(unseen, size=int(rng.integers(1, min(6, len(unseen) - 1) + 1)), replace=False)
        user = f"u{u}"
        lists[user] = [(str(i), float(len(unseen) - r)) for r, i in enumerate(unseen)]
        test[user] = {str(i): int(rng.integers(1, 6)) for i in rated}
        train[user] = seen
    recs, truth = _frames(lists, test)
    truth = pd.concat([truth, pd.DataFrame([("scale", "i0", 1), ("scale", "i1", 5)], columns=truth.columns)])
    train_frame = pd.DataFrame(
        [(u, i, 1.0) for u, seen in train.items() for i in seen] + [("all", i, 1.0) for i in items],
        columns=["user", "item", "rating"],
    )
    metric = "auc(negatives=all,agg=micro)"
    ours = receval.evaluate(recs, truth, [metric], threshold=threshold, train=train_frame).summary[metric]
    rel = _binary(test, threshold)
    below = []  # each ranked positive: (negatives below it, negatives), over users with a positive and a negative
    for user, ranked in lists.items():
        positives = [r for r, (i, _) in enumerate(ranked) if i in rel.get(user, [])]
        negatives = len(ranked) - len(positives)
        if positives and negatives:
            below += [((negatives - (r - p)), negatives) for p, r in enumerate(positives)]
    if not below:
        assert math.isnan(ours)
        return
    assert ours == pytest.approx(np.mean([b / n for b, n in below]), abs=1e-12)
    # a user whose every ranked item is relevant has no pair here; Elliot scores each of its positives 1 (neg_num 1)
    elliot = _elliot_auc({u: r for u, r in lists.items() if len(r) > len(rel.get(u, []))}, test, train, 10, threshold)
    assert elliot == pytest.approx(np.mean([(b + 1) / (n + 1) for b, n in below]), abs=1e-12)
