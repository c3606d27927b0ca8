"""compare_runs: per-user values from evaluate, p-values equal to scipy's, corrections to statsmodels'."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from receval import evaluate
from receval.errors import ConfigError
from receval.studies.compare import compare_runs


def _world(seed: int = 0, n_users: int = 60, n_items: int = 80) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(seed)
    rows = [(u, i, int(rng.integers(1, 6))) for u in range(n_users) for i in rng.choice(n_items, 12, replace=False)]
    truth = pd.DataFrame(rows, columns=["user", "item", "rating"])
    runs = {}
    for name in ("bm25", "als", "pop"):
        top = [(u, rng.permutation(n_items)[:20]) for u in range(n_users)]
        recs = [(u, i, float(20 - r)) for u, items in top for r, i in enumerate(items)]
        runs[name] = pd.DataFrame(recs, columns=["user", "item", "score"])
    return truth, runs


@pytest.mark.parametrize("test", ["ttest", "wilcoxon"])
def test_pvalues_equal_scipy_on_the_per_user_values(test: str) -> None:
    truth, runs = _world()
    result = compare_runs(runs, truth, ["ndcg@10", "recall@10"], test=test, threshold=4)  # type: ignore[arg-type]
    assert list(result.summary.index) == ["bm25", "als", "pop"]
    for metric in ("ndcg@10", "recall@10"):
        per_user = {
            name: evaluate(recs, truth, [metric], threshold=4).per_user.set_index("user")[metric]
            for name, recs in runs.items()
        }
        rows = result.tests[result.tests["metric"] == metric]
        assert len(rows) == 3  # every pair
        raw = []
        for row in rows.itertuples():
            both = pd.concat([per_user[row.a], per_user[row.b]], axis=1).dropna()
            x, y = both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy()
            if test == "ttest":
                ref = stats.ttest_rel(x, y)
            else:  # the method our wilcoxon_test documents: exact only for <= 50 untied non-zero differences
                d = (x - y)[x != y]
                exact = len(d) <= 50 and len(np.unique(np.abs(d))) == len(d)
                ref = stats.wilcoxon(x, y, zero_method="wilcox", method="exact" if exact else "asymptotic")
            assert row.n == len(both)
            assert row.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)
            assert row.diff == pytest.approx(float((x - y).mean()), abs=1e-12)
            raw.append(ref.pvalue)
        holm = multipletests(raw, method="holm")[1]
        np.testing.assert_allclose(rows["pvalue_adj"].to_numpy(), holm, rtol=1e-9)
        assert result.summary.loc["bm25", metric] == pytest.approx(per_user["bm25"].mean())


def test_baseline_compares_each_run_with_it_only() -> None:
    truth, runs = _world(1)
    result = compare_runs(runs, truth, "precision@10", baseline="pop")
    assert sorted(zip(result.tests["a"], result.tests["b"], strict=True)) == [("als", "pop"), ("bm25", "pop")]


def test_system_metrics_are_in_the_summary_but_not_tested() -> None:
    truth, runs = _world(2)
    result = compare_runs(runs, truth, ["coverage@10", "precision@10"])
    assert set(result.summary.columns) == {"coverage@10", "precision@10"}
    assert set(result.tests["metric"]) == {"precision@10"}


@pytest.mark.parametrize(
    ("runs", "baseline", "message"),
    [({"only": None}, None, "at least two runs"), ({"a": None, "b": None}, "c", "baseline 'c'")],
)
def test_bad_requests_are_config_errors(runs: dict, baseline: str | None, message: str) -> None:
    truth, _ = _world()
    with pytest.raises(ConfigError, match=message):
        compare_runs(runs, truth, "precision@10", baseline=baseline)
