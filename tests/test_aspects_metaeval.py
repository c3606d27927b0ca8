"""Meta-evaluation experiments: swaps, distortion, discriminative power, incompleteness, CLI."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from receval.errors import ConfigError
from receval.report.studies import plot_metaeval
from receval.studies import metaeval as me


def _world(n_users=40, n_items=60, seed=0):
    rng = np.random.default_rng(seed)
    truth = sp.random(n_users, n_items, density=0.4, random_state=seed, format="csr")
    truth.data = rng.integers(1, 6, truth.nnz).astype(float)
    aspects = (rng.random((n_items, 5)) < 0.35).astype(float)
    aspects[aspects.sum(axis=1) == 0, 0] = 1.0
    return truth, sp.csr_matrix(aspects), rng


def test_swaps_with_distinct_ratings_give_ndcg_tau_one_and_precision_zero():
    n_items = 8
    truth = sp.csr_matrix(np.tile(np.arange(n_items, 0, -1, dtype=float), (3, 1)))  # ratings 8..1
    aspects = sp.csr_matrix(np.ones((n_items, 1)))
    table, curves = me.swap_correlation(["ndcg@8", "precision@8"], truth, aspects, k=8, modes=["bottom-to-top"])
    t = table.set_index("metric")["tau"]
    assert t["ndcg@8"] == pytest.approx(1.0)
    assert t["precision@8"] == 0.0
    values = curves[curves.metric == "ndcg@8"]["value"].to_numpy()
    assert values[0] == pytest.approx(1.0) and np.all(np.diff(values) < 0)
    assert len(values) == 5  # the reference list and 4 swap levels


def test_redundant_mode_keeps_the_positions_of_the_redundant_aspect():
    lists = np.array([[0, 1, 2, 3, 4, 5]])
    aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1], [1, 0], [1, 0]], dtype=float))
    levels = me._levels(lists, aspects, "redundant", 3)
    # aspect 0 holds positions 0, 2, 4, 5: swap (0, 5) then (2, 4); then nothing left
    assert levels[1].tolist() == [[5, 1, 2, 3, 4, 0]]
    assert levels[2].tolist() == [[5, 1, 4, 3, 2, 0]]
    assert levels[3].tolist() == levels[2].tolist()


def test_distort_is_seeded_and_never_duplicates():
    r = np.tile(np.arange(10), (50, 1))
    a = me.distort(r, 30, 0.5, seed=3)
    assert np.array_equal(a, me.distort(r, 30, 0.5, seed=3))
    assert not np.array_equal(a, me.distort(r, 30, 0.5, seed=4))
    assert all(len(set(row)) == 10 for row in a)
    share = (a != r).mean()
    assert 0.35 < share < 0.65
    assert np.array_equal(me.distort(np.array([[3, -1]]), 10, 1.0, seed=0)[:, 1], [-1])  # padding stays
    with pytest.raises(ConfigError, match="strength"):
        me.distort(r, 30, 1.5)


def test_discriminative_power_separates_good_from_random_and_not_copies():
    truth, aspects, rng = _world()
    good = np.stack([np.argsort(-truth[u].toarray()[0], kind="stable")[:10] for u in range(truth.shape[0])])
    noise = np.stack([rng.permutation(truth.shape[1])[:10] for _ in range(truth.shape[0])])
    power = me.discriminative_power(["ndcg@10", "alpha_ndcg@10"], {"good": good, "noise": noise}, truth, aspects,
                                    strengths=[0.0], n_resamples=500)  # fmt: skip
    assert (power["pairs"] == 1).all() and (power["share"] == 1.0).all()
    same = me.discriminative_power(["ndcg@10"], {"a": good, "b": good.copy()}, truth, aspects, strengths=[0.0])
    assert (same["significant"] == 0).all()
    # the t-test count agrees with scipy's paired t-test on the same per-user values
    va = me.per_user("ndcg@10", good, truth, aspects)
    vb = me.per_user("ndcg@10", noise, truth, aspects)
    ok = ~np.isnan(va) & ~np.isnan(vb)
    assert stats.ttest_rel(va[ok], vb[ok]).pvalue < 0.05


def test_incompleteness_is_seeded_and_bounded():
    truth, aspects, rng = _world(seed=1)
    systems = {
        f"s{j}": np.stack([rng.permutation(truth.shape[1])[:10] for _ in range(truth.shape[0])]) for j in range(3)
    }
    best = np.stack([np.argsort(-truth[u].toarray()[0], kind="stable")[:10] for u in range(truth.shape[0])])
    systems["best"] = best
    out = me.incompleteness(["ndcg@10", "s_recall@10"], systems, truth, aspects, fractions=[0.2, 0.8], seeds=[0, 1])
    assert list(out.columns) == ["metric", "fraction", "tau", "tau_std"]
    assert out["tau"].between(-1, 1).all()
    again = me.incompleteness(["ndcg@10", "s_recall@10"], systems, truth, aspects, fractions=[0.2, 0.8], seeds=[0, 1])
    assert out.equals(again)
    with pytest.raises(ConfigError, match="fractions"):
        me.incompleteness(["ndcg@10"], systems, truth, aspects, fractions=[1.0])


def test_figures_are_written(tmp_path):
    truth, aspects, rng = _world(seed=2)
    systems = {
        f"s{j}": np.stack([rng.permutation(truth.shape[1])[:5] for _ in range(truth.shape[0])]) for j in range(2)
    }
    _, curves = me.swap_correlation(["alpha_ndcg@5"], truth, aspects, k=5)
    power = me.discriminative_power(["alpha_ndcg@5"], systems, truth, aspects, strengths=[0, 0.5], n_resamples=200)
    robust = me.incompleteness(["alpha_ndcg@5"], systems, truth, aspects, fractions=[0.5], seeds=[0])
    paths = plot_metaeval(curves, power, robust, tmp_path)
    assert sorted(p.name for p in paths) == ["discriminative_power.png", "incompleteness.png", "swap_curves.png"]
    assert all(p.stat().st_size > 1000 for p in paths)


def test_cli_needs_aspects(tmp_path, capsys):
    from receval.cli import main

    (tmp_path / "r.csv").write_text("user,item,rating\n1,a,5\n1,b,3\n2,a,4\n2,b,2\n")
    assert main(["metaeval", "--data", str(tmp_path / "r.csv"), "--format", "csv", "--systems", "random"]) == 2
    assert "--aspects" in capsys.readouterr().err
