"""αβ-nDCG and the intent-aware family: hand-computed cases, properties and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.errors import MetricError
from receval.metrics import aspects as am
from receval.metrics.registry import MetricInput, parse_metric

L3 = math.log2(3)


def csr(rows) -> sp.csr_matrix:
    return sp.csr_matrix(np.array(rows, dtype=float))


# ---------------------------------------------------------------- αβ-nDCG by hand
def test_ab_ndcg_greedy_ideal_differs_from_sorting_by_rating():
    # i0 {a0} r5, i1 {a0} r5, i2 {a1} r4; β = 1 so one a0 item saturates a0.
    a = csr([[1, 0], [1, 0], [0, 1]])
    truth = csr([[5, 5, 4]])
    g0, g1 = 10 / 14, 4 / 14
    # the greedy ideal is [i0, i2, i1] (i1 gains nothing once a0 is saturated),
    # sorting by rating gives [i0, i1, i2]
    idcg = g0 + 0.8 * g1 / L3
    by_rating = g0 + 0 + 0.8 * g1 / 2
    got = am.ab_ndcg(np.array([[0, 1, 2]]), truth, a, k=3, alpha=0.1, beta=1.0, rmax=5, gamma="truth")
    assert got[0] == pytest.approx(by_rating / idcg, abs=1e-12)
    assert got[0] == pytest.approx(0.965141, abs=1e-6)
    best = am.ab_ndcg(np.array([[0, 2, 1]]), truth, a, k=3, alpha=0.1, beta=1.0, rmax=5, gamma="truth")
    assert best[0] == pytest.approx(1.0, abs=1e-12)


def test_ab_ndcg_unrated_items_train_gamma_and_candidate_sets():
    # items: i0 {a0} (truth 5), i1 {a1}, i2 {a1} unrated, i3 {a1} and i4 {a0} in train (5 each)
    a = csr([[1, 0], [0, 1], [0, 1], [0, 1], [1, 0]])
    truth = csr([[5, 0, 0, 0, 0]])
    truth.eliminate_zeros()
    train = csr([[0, 0, 0, 5, 5]])
    train.eliminate_zeros()
    kw = {"k": 3, "alpha": 0.2, "beta": 0.5, "rmax": 5}
    # γ = (0.5, 0.5); P(i0) = 0.5, P(unrated) = 0.2
    dcg = 0.2 * 0.5 + (0.5 * 0.5) / L3 + (0.2 * 0.4) / 2
    # ideal over truth + unrated: i0, then the {a1} group twice (2 unrated items left)
    idcg = 0.5 * 0.5 + (0.2 * 0.5) / L3 + (0.2 * 0.4) / 2
    got = am.ab_ndcg(np.array([[1, 0, 2]]), truth, a, train, **kw)
    assert got[0] == pytest.approx(dcg / idcg, abs=1e-12)
    assert got[0] == pytest.approx(0.843213, abs=1e-6)
    # ideal over the truth only: just i0, so the list scores above 1 (documented)
    only = am.ab_ndcg(np.array([[1, 0, 2]]), truth, a, train, ideal="truth", **kw)
    assert only[0] == pytest.approx(dcg / 0.25, abs=1e-12)
    # γ from the truth: all weight on a0, unrated a1 items gain nothing
    t = am.ab_ndcg(np.array([[1, 0, 2]]), truth, a, train, gamma="truth", **kw)
    assert t[0] == pytest.approx((0.5 / L3) / 0.5, abs=1e-12)


def test_ab_ndcg_multi_aspect_gain_and_redundancy():
    a = csr([[1, 1], [1, 0]])
    truth = csr([[5, 5]])
    # γ = (2/3, 1/3), P = 0.5 for both items
    g = [2 / 3, 1 / 3]
    first = 1 - (1 - 0.5 * g[0]) * (1 - 0.5 * g[1])
    second = 0.5 * g[0] * 0.5
    expected = (first + second / L3) / (first + second / L3)
    got = am.ab_ndcg(np.array([[0, 1]]), truth, a, k=2, beta=0.5, rmax=5, gamma="truth")
    assert got[0] == pytest.approx(expected)
    swapped = am.ab_ndcg(np.array([[1, 0]]), truth, a, k=2, beta=0.5, rmax=5, gamma="truth")
    dcg = 0.5 * g[0] + (1 - (1 - 0.25 * g[0]) * (1 - 0.5 * g[1])) / L3
    assert swapped[0] == pytest.approx(dcg / (first + second / L3))


# ------------------------------------------------------------ RBU, EU, S-RR by hand
def test_rbu_eu_by_hand():
    a = csr([[1, 1], [1, 0]])
    truth = csr([[1, 1]])
    r = np.array([[0, 1]])
    # RBU: pos1 (1/2)(0.5 + 0.5) - 0.03; pos2 0.8 ((1/2) 0.5 * 0.5 - 0.03); the authors' code
    # (the default) multiplies by (1 - p) = 0.2, the paper's formula does not
    assert am.rbu(r, truth, a, k=2)[0] == pytest.approx(0.2 * (0.47 + 0.8 * 0.095))
    assert am.rbu(r, truth, a, k=2, convention="paper")[0] == pytest.approx(0.47 + 0.8 * 0.095)
    # EU: pos1 (1/2)(1 + 1) - 0.03; pos2 0.8 ((1/2) 0.5 - 0.03)
    assert am.eu(r, truth, a, k=2)[0] == pytest.approx(0.97 + 0.8 * 0.22)
    # a non-relevant item only costs; the padding of a short list is not read and costs nothing
    assert am.rbu(np.array([[0, 2]]), csr([[1, 1, 0]]), csr([[1, 1], [1, 0], [0, 1]]), k=2)[0] == pytest.approx(
        0.2 * (0.47 - 0.8 * 0.03)
    )
    assert am.rbu(np.array([[0, -1]]), truth, a, k=2)[0] == pytest.approx(0.2 * 0.47)


def test_s_rr_and_s_recall_by_hand():
    a = csr([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
    truth = csr([[1, 1, 0, 1]])  # i2 rated 0: not relevant
    r = np.array([[2, 0, 1, 3]])
    assert am.s_rr(r, truth, a, k=4)[0] == pytest.approx(1 / 3)
    assert am.s_rr(r, truth, a, k=2)[0] == 0.0
    assert am.s_recall(r, truth, a, k=2)[0] == pytest.approx(0.5)
    # every aspect, any item: i2 covers a2, i0 a0, i1 a1 -> full at rank 3
    assert am.s_rr(r, truth, a, k=4, denominator="all", relevant_only=False)[0] == pytest.approx(1 / 3)
    assert am.s_recall(r, truth, a, k=1, denominator="all")[0] == 0.0
    assert am.s_recall(np.array([[3, 2]]), truth, a, k=2, denominator="all")[0] == pytest.approx(2 / 3)


# ------------------------------------------------------------------ properties
@st.composite
def worlds(draw):
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    n_users, n_items, n_aspects = draw(st.integers(1, 6)), draw(st.integers(2, 12)), draw(st.integers(1, 4))
    dense_a = (rng.random((n_items, n_aspects)) < 0.5).astype(float)
    dense_a[0, 0] = 1.0  # an empty aspect table is an error (tested below)
    a = sp.csr_matrix(dense_a)
    dense = np.where(rng.random((n_users, n_items)) < 0.5, rng.integers(1, 6, (n_users, n_items)), 0)
    truth = sp.csr_matrix(dense.astype(float))
    train = sp.csr_matrix(np.where(rng.random((n_users, n_items)) < 0.3, 3.0, 0.0))
    width = draw(st.integers(1, n_items))
    r = np.stack([rng.permutation(n_items)[:width] for _ in range(n_users)])
    return r, truth, a, train


BOUNDED = [am.alpha_ndcg, am.nerr_ia, am.nnrbp, am.p_ia, am.s_recall, am.s_rr, am.err_ia, am.nrbp]


@settings(max_examples=40, deadline=None)
@given(worlds())
def test_values_bounded_and_user_order_invariant(world):
    r, truth, a, train = world
    perm = np.arange(r.shape[0])[::-1]
    for fn in [*BOUNDED, am.ab_ndcg]:
        kw = {"threshold": 3} if fn is not am.ab_ndcg else {"rmax": 5}
        v = fn(r, truth, a, train, **kw)
        ok = v[~np.isnan(v)]
        if fn is not am.ab_ndcg:
            assert np.all((ok >= -1e-12) & (ok <= 1 + 1e-9)), fn.__name__
        w = fn(r[perm], truth[perm], a, train[perm], **kw)
        np.testing.assert_allclose(w, v[perm], equal_nan=True)


def test_cutoff_beyond_the_list_is_padding():
    a = csr([[1, 0], [0, 1], [1, 1]])
    truth = csr([[5, 3, 4]])
    short = np.array([[2, 0]])
    padded = np.array([[2, 0, -1, -1, -1]])
    for fn in [am.alpha_ndcg, am.nerr_ia, am.p_ia, am.rbu, am.ab_ndcg]:
        kw = {"rmax": 5, "gamma": "truth"} if fn is am.ab_ndcg else {}
        assert fn(short, truth, a, k=5, **kw)[0] == pytest.approx(fn(padded, truth, a, k=5, **kw)[0])
    assert am.p_ia(short, truth, a, k=5)[0] == pytest.approx(3 / (5 * 2))


# ------------------------------------------------------------------ bad input
def test_bad_input_raises_clear_errors():
    a = csr([[1, 0], [0, 1]])
    truth = csr([[5, 3]])
    r = np.array([[0, 1]])
    with pytest.raises(MetricError, match="alpha must lie in"):
        am.alpha_ndcg(r, truth, a, alpha=1.5)
    with pytest.raises(MetricError, match="beta must lie in"):
        am.ab_ndcg(r, truth, a, gamma="truth", beta=-0.1)
    with pytest.raises(MetricError, match="alpha must lie in"):
        am.ab_ndcg(r, truth, a, gamma="truth", alpha=2)
    with pytest.raises(MetricError, match="below the largest rating 5"):
        am.ab_ndcg(r, truth, a, gamma="truth", rmax=4)
    with pytest.raises(MetricError, match="pass train="):
        am.ab_ndcg(r, truth, a)
    with pytest.raises(MetricError, match="3 item rows but the truth has 2"):
        am.alpha_ndcg(r, truth, csr([[1, 0], [0, 1], [1, 1]]))
    with pytest.raises(MetricError, match=r"outside 0\.\.1"):
        am.alpha_ndcg(np.array([[0, 7]]), truth, a)
    with pytest.raises(MetricError, match="repeats an item"):
        am.alpha_ndcg(np.array([[1, 1]]), truth, a)
    with pytest.raises(MetricError, match="positive integer"):
        am.s_recall(r, truth, a, k=0)
    with pytest.raises(MetricError, match="needs an item→aspect table"):
        am.p_ia(r, truth, None)
    with pytest.raises(MetricError, match="no aspect to any item"):
        am.alpha_ndcg(r, truth, sp.csr_matrix((2, 3)))
    with pytest.raises(MetricError, match="denominator"):
        am.s_recall(r, truth, a, denominator="query")


def test_users_without_aspects_are_skipped_never_nan_in_the_mean():
    # user 1's truth items have no aspects; item 2 has none either
    a = csr([[1, 0], [0, 1], [0, 0]])
    truth = csr([[5, 4, 0], [0, 0, 5]])
    train = csr([[3, 3, 0], [0, 0, 4]])
    r = np.array([[0, 2, 1], [2, 0, 1]])
    for text in ["alpha_ndcg@3", "ab_ndcg@3", "nerr_ia@3", "s_recall@3", "rbu@3", "nnrbp", "p_ia@2", "eu@3", "s_rr@3"]:
        m = parse_metric(text)
        data = MetricInput(r, truth, aspects=a, train=train, rating_max=5.0)
        per_user = m.per_user(data)
        assert np.isnan(per_user[1]) and not np.isnan(per_user[0]), text
        assert np.isfinite(m.compute(data)), text
        zero = m.per_user(MetricInput(r, truth, aspects=a, train=train, rating_max=5.0, empty_users="zero"))
        assert zero[1] == 0.0, text


def test_metric_strings_reach_the_kernels():
    a = csr([[1, 0], [0, 1], [1, 1]])
    truth = csr([[5, 2, 4]])
    train = csr([[0, 4, 0]])
    r = np.array([[2, 0, 1]])
    data = MetricInput(r, truth, aspects=a, train=train, rating_max=5.0, threshold=4)
    m = parse_metric("ab_ndcg@3(alpha=0.05,beta=0.7,gamma=truth)")
    direct = am.ab_ndcg(r, truth, a, train, k=3, alpha=0.05, beta=0.7, rmax=5.0, gamma="truth")
    assert m.per_user(data)[0] == pytest.approx(direct[0])
    # the evaluation's threshold applies unless the metric string sets its own
    assert parse_metric("alpha_ndcg@3").per_user(data)[0] == pytest.approx(
        am.alpha_ndcg(r, truth, a, k=3, threshold=4)[0]
    )
    own = parse_metric("alpha_ndcg@3(threshold=1)").per_user(data)[0]
    assert own == pytest.approx(am.alpha_ndcg(r, truth, a, k=3, threshold=1)[0])


def test_receval_evaluate_cli_with_aspect_file(tmp_path, capsys):
    import json

    from receval.cli import main

    (tmp_path / "t.csv").write_text("user,item,rating\n1,a,5\n1,b,2\n1,c,4\n2,a,3\n2,c,5\n")
    (tmp_path / "r.csv").write_text("user,item,score\n1,b,0.9\n1,a,0.5\n1,c,0.1\n2,c,0.9\n2,b,0.3\n")
    (tmp_path / "tr.csv").write_text("user,item,rating\n1,d,4\n2,d,5\n2,b,1\n")
    (tmp_path / "a.csv").write_text("item,aspect\na,x\nb,y\nc,x\nc,y\nd,x\n")
    args = ["evaluate", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "r.csv"), "--json"]
    metrics = "ab_ndcg@3(alpha=0.005,beta=0.5,rmax=5,gamma=truth),alpha_ndcg@3(alpha=0.5),s_recall@3"
    assert (
        main([*args, "--aspects", str(tmp_path / "a.csv"), "--train", str(tmp_path / "tr.csv"), "--metrics", metrics])
        == 0
    )
    got = json.loads(capsys.readouterr().out)
    # items a, b, c, d -> 0..3; aspects x, y -> 0, 1; users 1, 2 -> rows 0, 1
    a = csr([[1, 0], [0, 1], [1, 1], [1, 0]])
    truth = csr([[5, 2, 4, 0], [3, 0, 5, 0]])
    truth.eliminate_zeros()
    r = np.array([[1, 0, 2], [2, 1, -1]])
    train = csr([[0, 0, 0, 4], [0, 1, 0, 5]])  # excluded from the unrated candidates of the ideal
    train.eliminate_zeros()
    ab = am.ab_ndcg(r, truth, a, train, k=3, rmax=5, gamma="truth")
    assert ab.mean() != pytest.approx(am.ab_ndcg(r, truth, a, k=3, rmax=5, gamma="truth").mean())
    assert got["ab_ndcg@3(alpha=0.005,beta=0.5,rmax=5,gamma=truth)"] == pytest.approx(ab.mean())
    assert got["alpha_ndcg@3(alpha=0.5)"] == pytest.approx(am.alpha_ndcg(r, truth, a, k=3).mean())
    # an aspect file naming only unknown items is an error, not a silent NaN
    (tmp_path / "bad.csv").write_text("item,aspect\nzz,x\n")
    assert main([*args, "--aspects", str(tmp_path / "bad.csv"), "--metrics", "alpha_ndcg@3"]) == 2
    assert "no aspect to any item" in json.loads(capsys.readouterr().out)["error"]  # --json: errors as JSON
