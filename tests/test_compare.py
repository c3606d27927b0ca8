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


def test_runs_and_truth_given_as_paths_equal_the_tables(tmp_path) -> None:
    truth, runs = _world(2)
    truth.to_csv(tmp_path / "truth.tsv", sep="\t", index=False)
    paths = {}
    for name, recs in runs.items():
        paths[name] = tmp_path / f"{name}.csv"
        recs.to_csv(paths[name], index=False)
    from_files = compare_runs(paths, str(tmp_path / "truth.tsv"), ["ndcg@10", "precision@10"], threshold=4)
    in_memory = compare_runs(runs, truth, ["ndcg@10", "precision@10"], threshold=4)  # ids as numbers, same values
    pd.testing.assert_frame_equal(from_files.summary, in_memory.summary)
    assert from_files.conventions["bm25"] == in_memory.conventions["bm25"]


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


def _write_trec(folder, truth: pd.DataFrame, runs: dict[str, pd.DataFrame]) -> list[str]:
    lines = [f"{r.user} 0 {r.item} {r.rating}" for r in truth.itertuples()]
    (folder / "qrels.txt").write_text("\n".join(lines) + "\n")
    paths = []
    for name, recs in runs.items():
        rows = recs.sort_values(["user", "score"], ascending=[True, False])
        rows = rows.assign(rank=rows.groupby("user").cumcount() + 1)
        body = [f"{r.user} Q0 {r.item} {r.rank} {r.score} {name}" for r in rows.itertuples()]
        (folder / f"{name}.trec").write_text("\n".join(body) + "\n")
        paths.append(str(folder / f"{name}.trec"))
    return paths


def test_cli_compare_three_trec_runs_gives_scipys_pvalues(tmp_path, capsys) -> None:
    import json

    from receval.cli import main

    truth, runs = _world(3)
    paths = _write_trec(tmp_path, truth, runs)
    report = tmp_path / "cmp.html"
    argv = ["compare", "--truth", str(tmp_path / "qrels.txt"), "--truth-format", "trec", *paths]
    status = main([*argv, "--metrics", "ndcg@10", "--threshold", "3", "--report", str(report), "--json"])
    body = json.loads(capsys.readouterr().out)
    assert status == 0 and set(body["summary"]) == {"bm25", "als", "pop"} and report.stat().st_size > 0
    per_user = {
        name: evaluate(recs, truth, ["ndcg@10"], threshold=3).per_user.set_index("user")["ndcg@10"]
        for name, recs in runs.items()
    }
    for row in body["tests"]:
        both = pd.concat([per_user[row["a"]], per_user[row["b"]]], axis=1).dropna()
        assert row["pvalue"] == pytest.approx(stats.ttest_rel(both.iloc[:, 0], both.iloc[:, 1]).pvalue, rel=1e-9)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--test", "ztest"], "--test must be one of"),
        (["--correction", "fdr"], "--correction must be one of"),
        (["--baseline", "nosuch"], "baseline 'nosuch'"),
    ],
)
def test_cli_compare_bad_options_exit_2_before_work(tmp_path, capsys, extra: list[str], message: str) -> None:
    from receval.cli import main

    truth, runs = _world(4)
    paths = _write_trec(tmp_path, truth, runs)
    argv = ["compare", "--truth", str(tmp_path / "qrels.txt"), "--truth-format", "trec", *paths, "--metrics", "mrr"]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_cli_compare_same_names_must_be_renamed(tmp_path, capsys) -> None:
    from receval.cli import main

    truth, runs = _world(5)
    (tmp_path / "x").mkdir()
    first = _write_trec(tmp_path, truth, {"run": runs["pop"]})[0]
    second = _write_trec(tmp_path / "x", truth, {"run": runs["als"]})[0]
    argv = ["compare", "--truth", str(tmp_path / "qrels.txt"), "--truth-format", "trec", first, second]
    argv += ["--metrics", "mrr"]
    assert main(argv) == 2 and "NAME=FILE" in capsys.readouterr().err
    assert main([*argv[:5], f"a={first}", f"b={second}", *argv[7:], "--json"]) == 0
