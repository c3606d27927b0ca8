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


# ---------------------------------------------------------------- the report
def _graded_world(seed: int = 7, n_users: int = 80) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Runs of clearly different quality: ``good`` finds most truth items, ``close`` nearly the same lists,
    ``noise1`` and ``noise2`` random lists (so some pairs differ significantly and some do not)."""
    rng = np.random.default_rng(seed)
    n_items = 200
    truth_items = {u: rng.choice(n_items, 10, replace=False) for u in range(n_users)}
    rows = [(u, i, 5) for u, items in truth_items.items() for i in items]
    truth = pd.DataFrame(rows, columns=["user", "item", "rating"])

    def run(hit_share: float, rng: np.random.Generator) -> pd.DataFrame:
        rows = []
        for u, items in truth_items.items():
            hits = [int(i) for i in items if rng.random() < hit_share]
            others = [int(i) for i in rng.permutation(n_items) if i not in set(items)][: 10 - len(hits)]
            rows += [(u, i, r + 1) for r, i in enumerate(hits + others)]
        return pd.DataFrame(rows, columns=["user", "item", "rank"])

    runs = {"good": run(0.6, np.random.default_rng(1)), "close": run(0.58, np.random.default_rng(2))}
    runs |= {"noise1": run(0.02, np.random.default_rng(3)), "noise2": run(0.02, np.random.default_rng(4))}
    return truth, runs


def _cells(page: str, table_id: str) -> list[list[str]]:
    import html
    import re

    table = re.search(rf'<table id="{table_id}".*?</table>', page, re.S)
    assert table, f"no table {table_id}"
    rows = re.findall(r"<tr>(.*?)</tr>", table.group(0), re.S)
    return [[html.unescape(re.sub("<.*?>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)] for r in rows]


@pytest.mark.parametrize("baseline", [None, "noise1"])
def test_report_marks_exactly_where_the_tests_table_is_significant(tmp_path, baseline: str | None) -> None:
    from receval.report.compare import compare_report, format_pvalue

    truth, runs = _graded_world()
    result = compare_runs(runs, truth, ["precision@10", "ndcg@10"], test="wilcoxon", baseline=baseline)
    page = compare_report(result, tmp_path / "cmp.html", truth="qrels.tsv").read_text()
    summary = _cells(page, "summary-comparison")
    assert summary[0] == ["run", "precision@10", "ndcg@10"]
    marked, unmarked = 0, 0
    for row in summary[1:]:
        run = row[0]
        for metric, cell in zip(summary[0][1:], row[1:], strict=True):
            other = baseline or result.summary[metric].idxmax()
            t = result.tests
            pair = t[(t["metric"] == metric) & (t["a"].isin([run, other])) & (t["b"].isin([run, other]))]
            expected = run != other and float(pair["pvalue_adj"].iloc[0]) < 0.05
            assert ("†" in cell) == expected, (run, metric, cell)
            marked, unmarked = marked + expected, unmarked + (not expected)
    assert marked >= 2 and unmarked >= 2  # the world has both kinds
    tests = _cells(page, "paired-tests")
    assert tests[0][0] == "metric" and tests[0][-2:] == ["p", "p adjusted (Holm)"]
    assert [row[-1] for row in tests[1:]] == [format_pvalue(p) for p in result.tests["pvalue_adj"]]
    assert "0.0000" not in page and "Wilcoxon signed-rank test" in page and "t-test" not in page
    against = "the baseline noise1" if baseline else "the best run of the column"
    assert f"differs from {against}" in page


def test_report_header_and_number_formats(tmp_path) -> None:
    from receval.report.compare import compare_report

    truth, runs = _graded_world()
    runs["noise2"] = runs["noise2"][runs["noise2"]["user"] >= 5]  # five truth users get no list from noise2
    result = compare_runs(runs, truth, ["precision@10", "coverage@10"], test="wilcoxon", threshold=4)
    page = compare_report(result, tmp_path / "cmp.html", truth="qrels.tsv", runs={"good": "good.tsv"}).read_text()
    setup = dict(row for row in _cells(page, "comparison-setup"))  # type: ignore[misc]
    assert setup["truth"] == "qrels.tsv" and setup["threshold λ"] == "relevant: rating ≥ 4"
    assert setup["users evaluated"].startswith("80 ") and "noise2 5 " in setup["users without a list"]
    assert setup["baseline"].startswith("none") and setup["paired test"].startswith("Wilcoxon signed-rank test")
    assert "good (good.tsv)" in setup["runs"] and setup["training data"].startswith("not given")
    statistics = [row[9] for row in _cells(page, "paired-tests")[1:]]
    decimals = {len(s.partition(".")[2]) for s in statistics}
    assert len(decimals) == 1, statistics  # one format for the whole column
    assert "coverage@10: one value per run" in page and page.count("<figure") == 1


def test_format_pvalue_by_hand() -> None:
    from receval.report.compare import format_pvalue

    assert format_pvalue(0.0747) == "0.075" and format_pvalue(1.0) == "1.000"
    assert format_pvalue(3.25e-5) == "3.2 × 10⁻⁵" and format_pvalue(0.001) == "0.001"
    assert format_pvalue(0.0) == "< 2.2 × 10⁻³⁰⁸" and format_pvalue(float("nan")) == "–"


def test_cli_compare_train_gives_evaluates_catalogue(tmp_path, capsys) -> None:
    import json

    from receval.cli import main

    truth, runs = _world(6)
    train = pd.DataFrame({"user": [0, 1, 2] * 40, "item": list(range(80, 200)), "rating": 4})  # 120 more items
    lines = [f"{r.user} 0 {r.item} {r.rating}" for r in train.itertuples()]  # --truth-format reads it too
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")
    paths = _write_trec(tmp_path, truth, runs)
    argv = ["compare", "--truth", str(tmp_path / "qrels.txt"), "--truth-format", "trec", *paths]
    argv += ["--metrics", "coverage@10,precision@10", "--json"]
    assert main([*argv, "--train", str(tmp_path / "train.csv")]) == 0
    with_train = json.loads(capsys.readouterr().out)["summary"]
    assert main(argv) == 0
    without = json.loads(capsys.readouterr().out)["summary"]
    for name, recs in runs.items():
        expected = evaluate(recs, truth, ["coverage@10"], train=train).summary["coverage@10"]
        assert with_train[name]["coverage@10"] == pytest.approx(expected)
        plain = evaluate(recs, truth, ["coverage@10"]).summary["coverage@10"]
        assert without[name]["coverage@10"] == pytest.approx(plain)
        assert with_train[name]["coverage@10"] < without[name]["coverage@10"]  # 80 items, then 200


def test_compare_convention_is_evaluates(tmp_path, capsys) -> None:
    from receval.cli import main
    from receval.metrics.conventions import CONVENTION_NAMES

    truth, runs = _world(8)
    result = compare_runs(runs, truth, ["ndcg@10", "precision@10"], convention="trec_eval", threshold=4)
    for name, recs in runs.items():
        expected = evaluate(recs, truth, ["ndcg@10", "precision@10"], convention="trec_eval", threshold=4).summary
        assert result.summary.loc[name].to_dict() == pytest.approx(expected)
    assert "trec_eval" in CONVENTION_NAMES
    paths = _write_trec(tmp_path, truth, runs)
    argv = ["compare", "--truth", str(tmp_path / "qrels.txt"), "--truth-format", "trec", *paths, "--metrics", "mrr"]
    assert main([*argv, "--convention", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "nosuch" in err and "Traceback" not in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("test", ["ttest", "wilcoxon", "permutation", "tukey"])
def test_cli_compare_says_why_a_figure_is_nan(tmp_path, capsys, test: str) -> None:
    from receval.cli import main

    truth, runs = _world(6)
    paths = _write_trec(tmp_path, truth, {"pop": runs["pop"], "als": runs["als"]})
    same = tmp_path / "again.trec"  # the same lists again: every user's difference with pop is 0
    same.write_text((tmp_path / "pop.trec").read_text())
    argv = ["compare", "--truth", str(tmp_path / "qrels.txt"), "--truth-format", "trec", *paths, str(same)]
    assert main([*argv, "--metrics", "mrr", "--test", test, "--output", "tsv"]) == 0
    captured = capsys.readouterr()
    rows = [line.split("\t") for line in captured.out.splitlines() if line.startswith("mrr\t")]
    nan_pairs = {(r[1], r[2]) for r in rows if "nan" in r}
    said = [line for line in captured.err.splitlines() if "so the differences have no spread" in line]
    assert nan_pairs == {("pop", "again")} and len(said) == 1, captured
    assert said[0].startswith("warning: mrr, pop against again: every user differs by 0,") and "effect_size" in said[0]


def test_cli_compare_with_one_common_user_says_a_test_needs_two(tmp_path, capsys) -> None:
    from receval.cli import main

    truth, runs = _world(7)
    one = truth[truth["user"] == truth["user"].iloc[0]]
    paths = _write_trec(tmp_path, one, {name: recs[recs["user"] == one["user"].iloc[0]] for name, recs in runs.items()})
    assert (
        main(["compare", "--truth", str(tmp_path / "qrels.txt"), "--truth-format", "trec", *paths, "--metrics", "mrr"])
        == 0
    )
    err = capsys.readouterr().err
    assert err.count("1 user scored by both runs; a paired test needs 2 or more") == 3, err  # 3 pairs of 3 runs
