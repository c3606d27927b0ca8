"""Randomised Tukey HSD, Friedman and Nemenyi (receval.stats.multiple).

References: scipy 1.17.1 ``scipy.stats.friedmanchisquare`` and ``studentized_range``; ranx 0.3.21
(``ranx/statistical_tests/tukey_hsd_test.py``, AmenRa/ranx@v0.3.21: ranx's Tukey test is
``scipy.stats.tukey_hsd`` over the per-query scores, the classical unpaired HSD); Demšar, JMLR 7 (2006),
Table 5(a) (the Nemenyi critical values q_0.05) and section 3.2.4 (k = 4 classifiers on N = 14 data sets:
CD = 1.25); scikit-posthocs 0.17.1 (``posthoc_nemenyi_friedman``).
"""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs
from scipy import stats

import receval
from receval.errors import DataError
from receval.stats.multiple import (
    _key,
    _ranges_kernel,
    _slots,
    _tables,
    friedman_nemenyi,
    tukey_hsd,
    tukey_ranges,
    tukey_ranges_numpy,
    wide_values,
)
from receval.stats.significance import permutation_test


# tables up to 14 systems (odd and even halves), Fisher-Yates beyond (odd and even k: its draws go two by two)
@pytest.mark.parametrize("k", [2, 3, 7, 12, 13, 14, 15, 20])
def test_kernel_gives_the_numpy_ranges(k: int) -> None:
    x = np.random.default_rng(k).uniform(size=(300, k))
    ref = tukey_ranges_numpy(x, 120, seed=9)
    got = np.asarray(_ranges_kernel(x, _key(9), 120))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13)  # summation order only
    assert not np.array_equal(ref, tukey_ranges_numpy(x, 120, seed=10))
    np.testing.assert_allclose(tukey_ranges(x, 120, seed=9), ref, rtol=0, atol=1e-13)  # whichever path runs


@pytest.mark.parametrize("k", range(2, 9))
def test_tables_are_a_bijection_onto_the_permutations(k: int) -> None:
    subsets, first, second = _tables(k)
    h = k // 2
    perms = {
        tuple(subsets[s, first[a]]) + tuple(subsets[s, second[b]])
        for s in range(len(subsets))
        for a in range(len(first))
        for b in range(len(second))
    }
    assert len(perms) == math.factorial(k) == len(subsets) * len(first) * len(second)
    assert all(sorted(p) == list(range(k)) for p in perms)
    assert first.shape[1] == h


@pytest.mark.parametrize("k", [4, 16])  # from tables, and by Fisher-Yates
def test_every_permutation_is_equally_likely(k: int) -> None:
    n = 24_000
    slots = _slots(_key(3), 5, n, k)
    assert (np.sort(slots, axis=1) == np.arange(k)).all()
    if k == 4:  # all 24 permutations, 1,000 expected each
        _, counts = np.unique(slots @ (4 ** np.arange(4)), return_counts=True)
        assert len(counts) == 24
        assert stats.chisquare(counts).pvalue > 1e-3
    # each column lands in each slot with probability 1 / k
    placed = np.stack([(slots == c).sum(axis=0) for c in range(k)])
    assert stats.chisquare(placed.ravel()).pvalue > 1e-3


def test_two_systems_is_the_paired_randomisation_test() -> None:
    # with k = 2, permuting within a user flips the sign of its difference: Tukey's range is |mean(d)|
    rng = np.random.default_rng(4)
    a = rng.uniform(size=9)
    b = a - rng.normal(0.15, 0.2, 9)
    exact = permutation_test(a, b, n_resamples=10_000).pvalue  # 2**9 patterns: enumerated
    ours = tukey_hsd(np.column_stack([a, b]), ["a", "b"], n_resamples=20_000, seed=1).pvalues[0, 1]
    assert abs(ours - exact) < 3 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4


def test_family_wise_error_rate_under_the_null() -> None:
    rng = np.random.default_rng(7)
    rejections = 0
    sims = 120
    for s in range(sims):
        x = rng.normal(0, 1, (40, 4)) + rng.normal(0, 1, (40, 1))  # user effects, no system effect
        rejections += bool((tukey_hsd(x, list("abcd"), n_resamples=199, seed=s).pvalues <= 0.05).any())
    # one error rate for all six pairs: at most alpha (binomial 99% upper bound at 0.05 over 120 sims: 0.105)
    assert rejections / sims <= 0.105


def _ranx_tukey(names, scores, max_p):
    from ranx.statistical_tests.tukey_hsd_test import tukey_hsd_test

    return tukey_hsd_test(model_names=names, scores=scores, max_p=max_p)


def test_decisions_equal_ranx_tukey() -> None:
    # ranx's comparison example: per-query scores of several runs, one clearly better, two alike
    rng = np.random.default_rng(42)
    base = rng.uniform(0.2, 0.6, 200)
    scores = [base, base + rng.normal(0.0, 0.02, 200), base + 0.15 + rng.normal(0.0, 0.02, 200), base - 0.1]
    names = ["bm25", "rm3", "dense", "tfidf"]
    ours = tukey_hsd(np.column_stack(scores), names, n_resamples=2000, seed=0)
    ref = {(r["control"], r["treatment"]): r["significant"] for r in _ranx_tukey(names, scores, 0.05)}
    for row in ours.pairs(alpha=0.05).itertuples():
        assert row.significant == ref[(row.a, row.b)], (row.a, row.b)
    assert ours.pairs()["significant"].sum() == 5  # all but bm25 vs rm3


def _ranx_report_example(rng: random.Random) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """ranx's ``tests/unit/ranx/report_test.py`` fixtures (AmenRa/ranx@2cae52f): 1,000 queries with 1-9 judged
    documents graded 0-5, and three runs of 1-99 documents scored uniformly. Its ``random.seed = 42`` assigns
    instead of seeding, so the data are drawn here from a seeded generator with the same draws' shapes."""
    truth = [
        (f"q{i}", f"d{j}", rng.choice([0, 1, 2, 3, 4, 5])) for i in range(1000) for j in range(rng.choice(range(1, 10)))
    ]
    runs = []
    for _ in range(3):
        rows = [
            (f"q{i}", f"d{j}", rng.uniform(0.0, 1.0)) for i in range(1000) for j in range(rng.choice(range(1, 100)))
        ]
        runs.append(pd.DataFrame(rows, columns=["user", "item", "score"]))
    return pd.DataFrame(truth, columns=["user", "item", "rating"]), runs


def test_decisions_equal_ranx_tukey_on_ranx_report_example() -> None:
    # ranx's own Tukey example: compare(qrels, runs, ["map@100", "mrr@100", "ndcg@10"], stat_test="tukey"), whose
    # default max_p is 0.01; per-query values from receval's ranx convention feed both tests
    truth, runs = _ranx_report_example(random.Random(42))
    names = ["model_1", "model_2", "model_3"]
    for metric in ("map@100", "mrr@100", "ndcg@10"):
        columns = []
        for run in runs:
            per_user = receval.evaluate(run, truth, [metric], convention="ranx").per_user
            columns.append(per_user.set_index("user")[metric].sort_index())
        wide = pd.concat(columns, axis=1).fillna(0.0)  # ranx scores a query without results 0
        scores = [wide.iloc[:, c].to_numpy() for c in range(3)]
        ours = tukey_hsd(wide.to_numpy(), names, n_resamples=2000, seed=0)
        ref = {(r["control"], r["treatment"]): r["significant"] for r in _ranx_tukey(names, scores, 0.01)}
        for row in ours.pairs(alpha=0.01).itertuples():
            assert row.significant == ref[(row.a, row.b)], (metric, row.a, row.b)


def test_friedman_equals_scipy() -> None:
    rng = np.random.default_rng(3)
    for n, k in ((5, 3), (14, 4), (30, 8)):
        x = rng.uniform(size=(n, k)).round(1)  # rounding makes ties: the tie correction matters
        ours = friedman_nemenyi(x, [f"s{i}" for i in range(k)])
        ref = stats.friedmanchisquare(*x.T)
        assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


@pytest.mark.parametrize(
    ("k", "q"), [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728), (6, 2.850), (7, 2.949), (8, 3.031), (10, 3.164)]
)
def test_nemenyi_critical_values_are_demsars(k: int, q: float) -> None:
    n = 14
    x = np.random.default_rng(k).uniform(size=(n, k))
    cd = friedman_nemenyi(x, [str(i) for i in range(k)]).cd
    assert cd / np.sqrt(k * (k + 1) / (6 * n)) == pytest.approx(q, abs=1e-3)  # the table has three decimals


def test_demsar_worked_example_cd() -> None:
    x = np.random.default_rng(0).uniform(size=(14, 4))
    assert round(friedman_nemenyi(x, list("abcd")).cd, 2) == 1.25  # Demšar 2006, section 3.2.4


def test_nemenyi_pvalues_and_cd_agree() -> None:
    x = np.random.default_rng(5).uniform(size=(20, 5)) + np.arange(5) * 0.15
    f = friedman_nemenyi(x, list("abcde"))
    differ = np.abs(f.avg_ranks[:, None] - f.avg_ranks[None, :]) > f.cd
    np.testing.assert_array_equal(differ, f.nemenyi_pvalues < 0.05)
    data = f.cd_data()
    assert data["systems"][0] == "e" and data["avg_ranks"] == sorted(data["avg_ranks"])
    for group in data["groups"]:
        ranks = [f.avg_ranks[list("abcde").index(s)] for s in group]
        assert max(ranks) - min(ranks) <= f.cd


def test_iman_davenport_is_demsars_formula() -> None:
    x = np.random.default_rng(1).uniform(size=(10, 4))
    f = friedman_nemenyi(x, list("abcd"))
    assert f.iman_davenport == pytest.approx(9 * f.statistic / (10 * 3 - f.statistic))


def test_bad_input() -> None:
    with pytest.raises(DataError, match="two or more systems"):
        tukey_hsd(np.ones((5, 1)), ["a"])
    with pytest.raises(DataError, match="two or more systems"):
        friedman_nemenyi(np.ones((5, 1)), ["a"])
    with pytest.raises(DataError, match="at least two data sets"):
        friedman_nemenyi(np.ones((1, 3)), list("abc"))
    with pytest.raises(DataError, match="NaN"):
        friedman_nemenyi(np.array([[1.0, np.nan], [1.0, 2.0]]), list("ab"))
    t = pd.DataFrame({"system": ["a", "a", "b"], "user": [1, 2, 1], "value": [0.1, 0.2, 0.3]})
    with pytest.raises(DataError, match=r"a: 2, b: 1; 1 in all"):
        wide_values(t)


def test_compare_test_tukey(tmp_path, capsys) -> None:
    import json

    from receval import evaluate
    from receval.cli import main
    from test_equivalence import _runs

    files = _runs(tmp_path)
    truth = str(tmp_path / "t.csv")
    args = ["compare", "--truth", truth, *files, "--metrics", "ndcg@10", "--test", "tukey", "--seed", "3", "--json"]
    assert main(args) == 0
    body = json.loads(capsys.readouterr().out)
    matrix = np.column_stack(
        [evaluate(f, truth, ["ndcg@10"]).per_user.sort_values("user")["ndcg@10"].to_numpy() for f in files]
    )
    ref = tukey_hsd(matrix, list("abc"), n_resamples=10_000, seed=3)
    for row in body["tests"]:
        i, j = "abc".index(row["a"]), "abc".index(row["b"])
        assert row["pvalue"] == row["pvalue_adj"] == pytest.approx(ref.pvalues[i, j])
    assert [r["pvalue"] < 0.05 for r in body["tests"]] == [False, True, True]


def test_cd_diagram_draws_every_system_and_the_cd() -> None:
    from receval.report.claims import cd_diagram

    scores = np.random.default_rng(0).uniform(size=(12, 6)) + np.array([0.3, 0.25, 0.2, 0.0, 0.0, -0.2])
    result = friedman_nemenyi(scores, ["ease", "als", "bpr", "pop", "knn", "random"])
    fig = cd_diagram(result)
    texts = [t.get_text() for t in fig.axes[0].texts]
    for name, rank in zip(result.systems, result.avg_ranks, strict=True):
        assert f"{name} ({rank:.2f})" in texts
    assert "CD" in texts and f"CD = {result.cd:.2f}" in fig.axes[0].get_title()


def test_two_level_bootstrap_agrees_with_mixedlm() -> None:
    import warnings

    import statsmodels.api as sm

    from receval.stats.multiple import two_level_bootstrap

    rng = np.random.default_rng(11)
    groups = [rng.normal(0.02 + rng.normal(0, 0.02), 0.1, 200) for _ in range(30)]  # 30 seeds, 200 users each
    r = two_level_bootstrap(groups, n_resamples=4000, seed=1)
    y = np.concatenate(groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' convergence chatter; the fit is checked below
        fit = sm.MixedLM(y, np.ones((len(y), 1)), groups=np.repeat(np.arange(30), 200)).fit()
    lo, hi = fit.conf_int()[0]
    assert r.mean_diff == pytest.approx(fit.params[0], abs=1e-9)  # balanced: the mean of the seeds' means
    # the stated tolerance: the 95% intervals' widths within 15%, their centres within a tenth of the width
    assert (r.ci_high - r.ci_low) / (hi - lo) == pytest.approx(1.0, abs=0.15)
    assert abs((r.ci_high + r.ci_low) / 2 - (hi + lo) / 2) < 0.1 * (hi - lo)
    # users only: the seeds' variance left out, a much narrower interval
    assert r.users_ci_high - r.users_ci_low < 0.5 * (r.ci_high - r.ci_low)
    with pytest.raises(DataError, match="at least two seeds"):
        two_level_bootstrap([np.ones(5)])


GRID = """\
name = "claims"
seeds = [0]
metrics = ["ndcg@5", "precision@5"]

[datasets.one]
generate = { n_users = 60, n_items = 50, n_ratings = 1200, seed = 1 }
[datasets.two]
generate = { n_users = 60, n_items = 50, n_ratings = 1200, seed = 2 }
[datasets.three]
generate = { n_users = 60, n_items = 50, n_ratings = 1200, seed = 3 }

[split]
method = "holdout"
test_fraction = 0.25

[protocol]
name = "one-shot"
k = 5

[recommenders.random]
[recommenders.popularity]
[recommenders.item-knn]
"""


def test_results_friedman(tmp_path, capsys) -> None:
    import json

    from receval.cli import main

    (tmp_path / "grid.toml").write_text(GRID)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "grid.toml"), "--out", str(out)]) == 0
    capsys.readouterr()
    figure = tmp_path / "cd.png"
    assert main(["results", str(out), "--friedman", "ndcg@5", "--cd-diagram", str(figure), "--output", "json"]) == 0
    body = json.loads(capsys.readouterr().out)["friedman"]
    agg = pd.read_parquet(out / "aggregates.parquet")
    tasks = pd.read_parquet(out / "tasks.parquet")
    merged = agg[agg["metric"] == "ndcg@5"].merge(tasks[["task_id", "dataset", "recommender"]], on="task_id")
    wide = merged.pivot_table(index="dataset", columns="recommender", values="value")
    ref = stats.friedmanchisquare(*wide.to_numpy().T)
    assert body["blocks"] == "data sets" and body["n_blocks"] == 3
    assert body["statistic"] == pytest.approx(ref.statistic) and body["pvalue"] == pytest.approx(ref.pvalue)
    assert figure.stat().st_size > 0
    assert main(["results", str(out), "--friedman", "nosuch@5", "--output", "json"]) == 2
    assert "nosuch@5" in json.loads(capsys.readouterr().out)["error"]


def test_run_report_draws_friedman_across_data_sets(tmp_path) -> None:
    import re

    from receval.experiment import run_experiment
    from receval.report.html import build_report

    (tmp_path / "grid.toml").write_text(GRID)
    run_experiment(tmp_path / "grid.toml", out=tmp_path / "out", processes=False)
    page = build_report(tmp_path / "out", dataset_overview=False).read_text(encoding="utf-8")
    agg = pd.read_parquet(tmp_path / "out" / "aggregates.parquet")
    tasks = pd.read_parquet(tmp_path / "out" / "tasks.parquet")
    merged = agg[agg["metric"] == "ndcg@5"].merge(tasks[["task_id", "dataset", "recommender"]], on="task_id")
    wide = merged.pivot_table(index="dataset", columns="recommender", values="value")
    ref = stats.friedmanchisquare(*wide.to_numpy().T)
    assert "Across data sets: Friedman and Nemenyi" in page
    shown = re.search(r"ndcg@5: χ² = ([0-9.e+-]+), p = ([0-9.e+-]+) over 3 data sets", page)
    assert shown is not None
    assert float(shown[1]) == pytest.approx(ref.statistic, rel=1e-3)
    assert float(shown[2]) == pytest.approx(ref.pvalue, rel=1e-3)
    assert 'id="friedman-ndcg@5"' in page
    assert 'alt="Critical-difference diagram of ndcg@5"' in page


@pytest.mark.parametrize(("test", "warned"), [("wilcoxon", True), ("ttest", False)])
def test_compare_warns_of_a_test_known_to_drift(tmp_path, capsys, monkeypatch, test: str, warned: bool) -> None:
    import receval.experiment.check as check
    from receval.cli import main
    from test_equivalence import _runs

    files = _runs(tmp_path)  # 300 users: the drift threshold lowered below them, the facts kept in check.py
    monkeypatch.setattr(check, "DRIFT_N", 300)
    args = ["compare", "--truth", str(tmp_path / "t.csv"), *files[:2], "--metrics", "ndcg@10", "--test", test]
    assert main([*args, "--json"]) == 0
    err = capsys.readouterr().err
    assert ("warning: R009" in err and "wilcoxon test at n = 300" in err) is warned
    monkeypatch.setattr(check, "DRIFT_N", 301)
    assert main([*args, "--json"]) == 0
    assert "R009" not in capsys.readouterr().err


@pytest.mark.parametrize("seed", [0, 1, 2, None])
def test_nemenyi_pvalues_equal_scikit_posthocs(seed: int | None) -> None:
    if seed is None:  # the example of scikit-posthocs' docstring
        x = np.array([[31, 27, 24], [31, 28, 31], [45, 29, 46], [21, 18, 48], [42, 36, 46], [32, 17, 40]], float)
    else:
        x = np.random.default_rng(seed).uniform(size=(12, 5)) + np.linspace(0, 0.6, 5)  # some pairs differ
        x[0, :2] = x[0, 2]  # a tie: average ranks
    ours = friedman_nemenyi(x, [str(c) for c in range(x.shape[1])]).nemenyi_pvalues
    ref = scikit_posthocs.posthoc_nemenyi_friedman(x).to_numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-9)
