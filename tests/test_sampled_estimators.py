"""Sampled metrics and their corrections (receval.stats.sampled): hand-computed values, the papers' properties.

Krichene & Rendle (KDD 2020): the sampled rank of an item at full rank r is 1 + Binomial(n, (r-1)/(N-1));
the sampled metric is biased, the corrections are closer to the full metric, and as the sample shrinks
every sampled metric ranks systems like AUC. Li et al. (KDD 2020) map the sampled hit ratio's cutoff;
Jin et al. (AAAI 2021) estimate the distribution of full ranks.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from receval.errors import ConfigError
from receval.stats.sampled import (
    SUPPORTED,
    check_correction,
    estimate,
    estimate_per_row,
    rank_distribution,
    rank_metric,
    sampled_ranks,
    transition,
)
from receval.vocabulary import SAMPLED_CORRECTIONS

# ------------------------------------------------------------------ a hand-made example
# Three users, a catalogue of 3 items each: the held-out item and two others. Full scores give the full
# ranks; one sampled negative per user gives the sampled ranks.
POSITIVE = np.array([0.9, 0.6, 0.3])
OTHERS = np.array([[0.5, 0.1], [0.8, 0.2], [0.7, 0.4]])
SAMPLED = np.array([[0.5], [0.2], [0.4]])  # the negative each user drew


def test_the_hand_made_example_sampled_and_full_ranks() -> None:
    assert sampled_ranks(POSITIVE, OTHERS).tolist() == [1.0, 2.0, 3.0]  # full ranks
    assert sampled_ranks(POSITIVE, SAMPLED).tolist() == [1.0, 1.0, 2.0]
    # full recall@1 = 1/3 (only user 1 is first), sampled 2/3;
    # ndcg@2 full (1 + 1/log2 3 + 0) / 3, sampled (1 + 1 + 1/log2 3) / 3
    assert rank_metric("recall", 1, [1, 2, 3], 3).mean() == pytest.approx(1 / 3)
    assert estimate("recall", 1, [1, 1, 2], n_sampled=1, n_items=3) == pytest.approx(2 / 3)
    assert rank_metric("ndcg", 2, [1, 2, 3], 3).mean() == pytest.approx((1 + 1 / np.log2(3)) / 3)
    assert estimate("ndcg", 2, [1, 1, 2], n_sampled=1, n_items=3) == pytest.approx((2 + 1 / np.log2(3)) / 3)


def test_the_hand_made_example_corrected_by_hand() -> None:
    # n = 1, N = 3: A = P(r~ | r) = [[1, 0], [1/2, 1/2], [0, 1]]; recall@1: M = (1, 0, 0).
    assert transition(1, 3) == pytest.approx(np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]))
    ranks = [1, 1, 2]
    # ls: AᵀA x = AᵀM, AᵀA = [[5/4, 1/4], [1/4, 5/4]], AᵀM = (1, 0)  ->  x = (5/6, -1/6)
    assert estimate_per_row("recall", 1, ranks, n_sampled=1, n_items=3, correction="ls") == pytest.approx(
        [5 / 6, 5 / 6, -1 / 6]
    )
    assert estimate("recall", 1, ranks, n_sampled=1, n_items=3, correction="ls") == pytest.approx(0.5)
    # bv, γ = 1/2: (AᵀA / 2 + diag(3/2, 3/2) / 2) x = (1, 0): [[11/8, 1/8], [1/8, 11/8]] x = (1, 0) -> (11/15, -1/15)
    assert estimate("recall", 1, ranks, n_sampled=1, n_items=3, correction="bv", gamma=0.5) == pytest.approx(7 / 15)
    # mapping: f(1) solves P(Bin(1, p) = 0) = 1/2: p = 1/2, f(1) = 1 + 2 p = 2;
    # HR@1 is read at 1 of [f(0), f(1)] = [0, 2]
    assert estimate_per_row("recall", 1, ranks, n_sampled=1, n_items=3, correction="mapping") == pytest.approx(
        [0.5, 0.5, 0.0]
    )
    assert estimate("recall", 1, ranks, n_sampled=1, n_items=3, correction="mapping") == pytest.approx(1 / 3)
    # mle: the uniform start gives P(r~) = (1/2, 1/2); G = 6 (2/3 ln 4/3 + 1/3 ln 2/3) = 0.34 <= 1 (two ranks
    # observed): within sampling noise, EM stops there and recall@1 is π_1 = 1/3
    assert estimate("recall", 1, ranks, n_sampled=1, n_items=3, correction="mle") == pytest.approx(1 / 3)


def test_mle_iterates_until_the_fit_is_within_sampling_noise() -> None:
    counts = np.array([200.0, 100.0])  # the same shares from 300 rows: the uniform start is far off (G = 34)
    pi = rank_distribution(counts, n_sampled=1, n_items=3, method="mle")
    fitted = transition(1, 3).T @ pi
    h = counts / counts.sum()
    g = 2 * counts.sum() * float(h @ np.log(h / fitted))
    assert g <= 1.0 + 1e-9
    assert pi.sum() == pytest.approx(1.0) and (pi >= 0).all()
    # the first EM step from uniform, by hand: π ⊙ A (h / (1/2, 1/2)) = (4/9, 1/3, 2/9) has G = 3.97: EM went on
    assert not np.allclose(pi, [4 / 9, 1 / 3, 2 / 9])


# ------------------------------------------------------------------ the metrics and the law
def test_rank_metric_by_definition() -> None:
    r = np.array([1, 2, 5, 10, 11])
    assert rank_metric("recall", 10, r, 20).tolist() == [1, 1, 1, 1, 0]
    assert rank_metric("precision", 10, r, 20).tolist() == [0.1, 0.1, 0.1, 0.1, 0]
    assert rank_metric("mrr", 10, r, 20) == pytest.approx([1, 1 / 2, 1 / 5, 1 / 10, 0])
    assert rank_metric("ap", None, r, 20) == pytest.approx(1 / r)
    assert rank_metric("ndcg", 10, r, 20) == pytest.approx(np.where(r <= 10, 1 / np.log2(r + 1), 0))
    assert rank_metric("auc", 10, r, 20) == pytest.approx((20 - r) / 19)
    assert np.isnan(rank_metric("hr", 3, [np.nan], 5)[0])


def test_the_sampling_law_is_binomial_and_matches_uniform_draws() -> None:
    n_items, n, full_rank = 50, 10, 21
    rng = np.random.default_rng(0)
    others = np.delete(np.arange(n_items), full_rank - 1)  # item j sits at full rank j + 1
    draws = np.array([rng.choice(others, n, replace=True) for _ in range(4000)])
    observed = np.bincount((draws < full_rank - 1).sum(axis=1), minlength=n + 1)
    expected = transition(n, n_items)[full_rank - 1] * len(draws)
    keep = expected > 5
    assert stats.chisquare(observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()).pvalue > 1e-3


def test_sampled_auc_is_unbiased_for_the_full_auc() -> None:
    # E[AUC on the sample | r] = 1 - E[r~ - 1] / n = 1 - (r - 1) / (N - 1): sampled AUC needs no correction
    n, n_items = 20, 300
    sampled = rank_metric("auc", None, np.arange(1, n + 2), n + 1)
    full = rank_metric("auc", None, np.arange(1, n_items + 1), n_items)
    assert transition(n, n_items) @ sampled == pytest.approx(full)


def test_ls_has_the_least_bias_and_bv_the_least_bias_variance_loss() -> None:
    n, n_items, gamma = 20, 200, 0.1
    a = transition(n, n_items)
    metric = rank_metric("ndcg", 10, np.arange(1, n_items + 1), n_items)
    values = {
        c: estimate_per_row("ndcg", 10, np.arange(1, n + 2), n_sampled=n, n_items=n_items, correction=c, gamma=gamma)
        for c in ("none", "ls", "bv")
    }

    def loss(x: np.ndarray, g: float) -> float:
        mean = a @ x
        return float(np.mean((mean - metric) ** 2 + g * (a @ x**2 - mean**2)))

    assert loss(values["ls"], 0.0) <= min(loss(values["bv"], 0.0), loss(values["none"], 0.0))
    rng = np.random.default_rng(1)
    for _ in range(20):  # bv is the minimum of its own loss: no nearby vector does better
        assert loss(values["bv"], gamma) <= loss(values["bv"] + 1e-3 * rng.normal(size=n + 1), gamma)
    assert loss(values["bv"], gamma) < loss(values["none"], gamma)


# ------------------------------------------------------------------ properties
_SCORES = st.lists(st.integers(0, 6), min_size=2, max_size=9)


@settings(max_examples=60, deadline=None)
@given(st.lists(_SCORES, min_size=1, max_size=6), st.sampled_from(["pessimistic", "optimistic", "average"]))
def test_none_is_the_metric_of_the_sampled_list(rows: list[list[int]], ties: str) -> None:
    n = min(len(r) for r in rows) - 1
    scores = np.array([r[: n + 1] for r in rows], dtype=float)  # column 0 is the held-out item
    ranks = sampled_ranks(scores[:, 0], scores[:, 1:], ties=ties)
    for i, row in enumerate(scores):  # the rank by sorting the list of n + 1 items, ties as asked
        above, equal = int((row[1:] > row[0]).sum()), int((row[1:] == row[0]).sum())
        assert ranks[i] == 1 + above + {"pessimistic": equal, "optimistic": 0, "average": equal / 2}[ties]
    for metric, k in (("recall", 1), ("ndcg", 3), ("mrr", None), ("auc", None)):
        direct = np.mean([rank_metric(metric, k, [r], n + 1)[0] for r in ranks])
        assert estimate(metric, k, ranks, n_sampled=n, n_items=50) == pytest.approx(direct)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 11), min_size=1, max_size=40), st.sampled_from(["recall", "precision"]))
def test_mapping_mle_and_mes_stay_within_the_metric_range(ranks: list[int], metric: str) -> None:
    top = 1.0 if metric == "recall" else 1 / 5
    for correction in ("mapping", "mle", "mes"):
        got = estimate(metric, 5, ranks, n_sampled=10, n_items=80, correction=correction)
        assert -1e-12 <= got <= top + 1e-12, correction


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([1.0, 1.5, 2.0, 3.5, 6.0, np.nan]), min_size=1, max_size=20))
def test_per_row_estimates_average_to_the_estimate_and_keep_nan(ranks: list[float]) -> None:
    r = np.array(ranks)
    if np.isnan(r).all():
        return
    for correction in ("none", "ls", "bv", "mapping"):
        rows = estimate_per_row("recall", 2, r, n_sampled=5, n_items=40, correction=correction)
        assert np.array_equal(np.isnan(rows), np.isnan(r))
        mean = estimate("recall", 2, r, n_sampled=5, n_items=40, correction=correction)
        assert np.nanmean(rows) == pytest.approx(mean)


# ------------------------------------------------------------------ what the papers show
N_ITEMS, N_SAMPLED, N_USERS, SEEDS = 600, 60, 400, range(20)
# full-rank distributions of a few "systems": strong, mid, weak (geometric with growing means) and heavy-tailed
SYSTEMS = {
    "strong": lambda rng: np.minimum(N_ITEMS, rng.geometric(1 / 8, N_USERS)),
    "mid": lambda rng: np.minimum(N_ITEMS, rng.geometric(1 / 40, N_USERS)),
    "weak": lambda rng: np.minimum(N_ITEMS, rng.geometric(1 / 150, N_USERS)),
    "heavy-tailed": lambda rng: np.clip(np.exp(rng.normal(2.5, 1.5, N_USERS)).astype(int) + 1, 1, N_ITEMS),
}


def _sample(full: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # negatives drawn without replacement, as draw_candidates does: the number above is hypergeometric
    return 1 + rng.hypergeometric(full - 1, N_ITEMS - full, N_SAMPLED)


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_corrections_have_lower_mse_than_the_sampled_metric(system: str) -> None:
    full = SYSTEMS[system](np.random.default_rng(100))
    grid = np.arange(1, N_ITEMS + 1)
    errors: dict[tuple[str, str], list[float]] = {}
    for seed in SEEDS:
        ranks = _sample(full, np.random.default_rng(seed))
        counts = np.bincount(ranks - 1, minlength=N_SAMPLED + 1)
        # the rank distribution is estimated once per sample and read for both metrics
        pis = {m: rank_distribution(counts, n_sampled=N_SAMPLED, n_items=N_ITEMS, method=m) for m in ("mle", "mes")}
        for metric in ("recall", "ndcg"):
            truth = rank_metric(metric, 10, full, N_ITEMS).mean()
            for correction in ("none", "bv", "mapping"):
                if metric in SUPPORTED[correction]:
                    got = estimate(metric, 10, ranks, n_sampled=N_SAMPLED, n_items=N_ITEMS, correction=correction)
                    errors.setdefault((metric, correction), []).append(got - truth)
            for method, pi in pis.items():
                errors.setdefault((metric, method), []).append(pi @ rank_metric(metric, 10, grid, N_ITEMS) - truth)
    mse = {key: float(np.mean(np.square(v))) for key, v in errors.items()}
    for (metric, correction), value in mse.items():
        if correction != "none":
            assert value < mse[(metric, "none")], (system, metric, correction, value, mse[(metric, "none")])


def test_mle_through_estimate_is_the_expectation_under_the_rank_distribution() -> None:
    full = SYSTEMS["mid"](np.random.default_rng(3))
    ranks = _sample(full, np.random.default_rng(4))
    pi = rank_distribution(np.bincount(ranks - 1, minlength=N_SAMPLED + 1), n_sampled=N_SAMPLED, n_items=N_ITEMS)
    got = estimate("ndcg", 10, ranks, n_sampled=N_SAMPLED, n_items=N_ITEMS, correction="mle")
    assert got == pytest.approx(float(pi @ rank_metric("ndcg", 10, np.arange(1, N_ITEMS + 1), N_ITEMS)))


def test_with_a_small_sample_hr_ranks_systems_like_auc() -> None:
    # Two families that cross: "head" systems put many items first and the rest anywhere (high recall@10, low
    # AUC); "body" systems put every item fairly high but few first (low recall@10, high AUC).
    rng = np.random.default_rng(7)
    n_users, n_items = 3000, 1000

    def head(p: float) -> np.ndarray:
        return np.where(rng.random(n_users) < p, 1, rng.integers(1, n_items + 1, n_users))

    def body(scale: float) -> np.ndarray:
        return np.minimum(n_items, 1 + rng.geometric(1 / scale, n_users))

    systems = [head(0.3), head(0.2), body(60), body(120), body(250)]
    auc = [rank_metric("auc", None, f, n_items).mean() for f in systems]
    recall = [rank_metric("recall", 10, f, n_items).mean() for f in systems]
    assert stats.kendalltau(auc, recall).statistic < 0  # the full metrics disagree
    hr = np.zeros(len(systems))
    for seed in SEEDS:
        draw = np.random.default_rng(seed)
        for i, f in enumerate(systems):
            ranks = 1 + draw.hypergeometric(f - 1, n_items - f, 2)
            hr[i] += estimate("recall", 1, ranks, n_sampled=2, n_items=n_items) / len(SEEDS)
    assert stats.kendalltau(auc, hr).statistic == pytest.approx(1.0)


# ------------------------------------------------------------------ bad input
def test_every_word_of_the_vocabulary_has_an_estimator() -> None:
    assert set(SUPPORTED) == set(SAMPLED_CORRECTIONS)
    for correction in SAMPLED_CORRECTIONS:
        for metric in sorted(SUPPORTED[correction]):
            value = estimate(metric, 3, [1, 2, 4], n_sampled=5, n_items=30, correction=correction)
            assert np.isfinite(value)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: check_correction("bv", "ndcg", sampling="popularity"), "assumes uniformly sampled negatives"),
        (lambda: check_correction("mapping", "ndcg"), "correction=mapping does not estimate ndcg"),
        (lambda: check_correction("lsq", "ndcg"), "correction='lsq' is not known"),
        (lambda: estimate("fallout", 3, [1], n_sampled=5, n_items=30), "metric 'fallout' has no sampled form"),
        (lambda: estimate("recall", 3, [7], n_sampled=5, n_items=30), "a rank is from 1 to 6"),
        (lambda: estimate("recall", 3, [np.nan], n_sampled=5, n_items=30), "no sampled rank"),
        (lambda: estimate("recall", 3, [1], n_sampled=0, n_items=30), "n_sampled=0"),
        (lambda: estimate("recall", 3, [1], n_sampled=30, n_items=30), "cannot be drawn from the 29 other items"),
        (lambda: estimate("recall", 3, [1], n_sampled=5, n_items=30, correction="bv", gamma=2), "gamma=2"),
        (lambda: estimate_per_row("recall", 3, [1], n_sampled=5, n_items=30, correction="mes"), "not a row's value"),
        (lambda: sampled_ranks([1.0], [[np.nan, 0.0]]), "row 0 hold NaN"),
        (lambda: sampled_ranks([1.0, 2.0], [[0.0]]), "do not match"),
    ],
)
def test_bad_input_is_one_line(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=message) as err:
        call()
    assert "\n" not in str(err.value)


def test_on_movielens_100k_every_correction_is_closer_than_the_sampled_metric(ml100k_dir) -> None:  # type: ignore[no-untyped-def]
    # three systems scored with numpy (popularity, item co-occurrence with the user's history, seeded noise),
    # leave-one-out by time, 100 uniform negatives drawn by draw_candidates 20 times, ranked by sampled_ranks
    import pandas as pd

    from receval.data.interactions import Interactions
    from receval.evaluation.candidates import draw_candidates
    from receval.split import leave_one_out

    frame = pd.read_csv(ml100k_dir / "u.data", sep="\t", names=["user", "item", "rating", "time"])
    train, test = leave_one_out(Interactions.from_frame(frame, timestamp="time"))
    seen = train.to_csr("ones")
    n_items = seen.shape[1]
    counts = np.asarray(seen.sum(axis=0)).ravel()
    systems = {
        "popularity": np.broadcast_to(counts, seen.shape).astype(float),
        "co-occurrence": np.asarray((seen @ (seen.T @ seen)).todense(), dtype=float),
        "noise": np.random.default_rng(0).random(seen.shape),
    }
    first = draw_candidates(train, test, n=100, seed=0)
    users, items = first.users, first.items
    errors: dict[tuple[str, str, str], list[float]] = {}
    for name, scores in systems.items():
        masked = np.where(seen.toarray() > 0, -np.inf, scores)  # training items are not ranked in full
        full = sampled_ranks(scores[users, items], masked[users])
        for seed in SEEDS:
            c = draw_candidates(train, test, n=100, seed=seed)
            ranks = sampled_ranks(scores[c.users, c.items], np.take_along_axis(scores[c.users], c.negatives, axis=1))
            for metric in ("recall", "ndcg"):
                truth = rank_metric(metric, 10, full, n_items).mean()
                for correction in SAMPLED_CORRECTIONS:
                    if correction != "ls" and metric in SUPPORTED[correction]:
                        got = estimate(metric, 10, ranks, n_sampled=100, n_items=n_items, correction=correction)
                        errors.setdefault((name, metric, correction), []).append(got - truth)
    mse = {key: float(np.mean(np.square(v))) for key, v in errors.items()}
    for (name, metric, correction), value in mse.items():
        if correction != "none":
            assert value < mse[(name, metric, "none")], (name, metric, correction, value, mse[(name, metric, "none")])
