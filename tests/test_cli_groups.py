"""``--user-groups`` on evaluate/compare and ``compare --distribution``: JSON keys, values, bad input (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from receval.cli import main
from receval.stats.distribution import cvar
from receval.studies.compare import compare_runs


def _world(tmp_path, n_users: int = 40):
    rng = np.random.default_rng(0)
    users = np.arange(1, n_users + 1)
    truth = pd.DataFrame({"user": np.repeat(users, 3), "item": rng.integers(0, 30, 3 * n_users), "rating": 5})
    truth = truth.drop_duplicates(["user", "item"])
    paths = {}
    for name in ("a", "b", "c"):
        items = np.concatenate([rng.permutation(30)[:5] for _ in users])
        run = pd.DataFrame({"user": np.repeat(users, 5), "item": items, "rank": np.tile(np.arange(1, 6), n_users)})
        paths[name] = tmp_path / f"{name}.csv"
        run.to_csv(paths[name], index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    groups = pd.DataFrame({"user": users, "group": np.where(users % 3 == 0, "old", "young")})
    groups.to_csv(tmp_path / "groups.csv", index=False)
    return truth, paths, groups


def test_evaluate_groups_json_matches_scipy_on_per_user_values(tmp_path, capsys):
    _, paths, groups = _world(tmp_path)
    per_user = tmp_path / "per_user.csv"
    argv = ["evaluate", "--truth", str(tmp_path / "truth.csv"), "--recs", str(paths["a"]), "--metrics",
            "recall@5,precision@5", "--threshold", "4", "--user-groups", str(tmp_path / "groups.csv"),
            "--per-user", str(per_user), "--json"]  # fmt: skip
    assert main(argv) == 0
    body = json.loads(capsys.readouterr().out)
    values = pd.read_csv(per_user).merge(groups, on="user")
    for metric in ("recall@5", "precision@5"):
        g = body["groups"][metric]
        assert set(g) >= {"values", "gap", "p_value", "ci"}
        old, young = (values.loc[values["group"] == k, metric].to_numpy() for k in ("old", "young"))
        assert g["values"] == pytest.approx({"old": old.mean(), "young": young.mean()})
        assert g["gap"] == pytest.approx(old.mean() - young.mean())
        assert g["p_value"] == pytest.approx(stats.ttest_ind(old, young, equal_var=False).pvalue)
        assert g["ci"][0] <= g["gap"] <= g["ci"][1]


def test_compare_groups_and_distribution(tmp_path, capsys):
    truth, paths, _ = _world(tmp_path)
    argv = ["compare", "--truth", str(tmp_path / "truth.csv"), *(f"{k}={v}" for k, v in paths.items()),
            "--metrics", "recall@5", "--threshold", "4", "--user-groups", str(tmp_path / "groups.csv"),
            "--group-test", "mannwhitney", "--distribution", "--cvar-level", "0.25", "--json"]  # fmt: skip
    assert main(argv) == 0
    body = json.loads(capsys.readouterr().out)
    assert set(body["groups"]) == {"a", "b", "c"}
    assert body["groups"]["b"]["recall@5"]["test"] == "Mann–Whitney U test"
    dist = body["distribution"]["recall@5"]
    tables = {k: pd.read_csv(v) for k, v in paths.items()}
    py = compare_runs(tables, truth, ["recall@5"], threshold=4, distribution=True)
    values = py.per_user[py.per_user["system"] == "c"]["value"].to_numpy()
    assert dist["c"]["cvar"] == pytest.approx(cvar(values, 0.25))
    assert dist["c"]["cvar_level"] == 0.25
    assert "vs_first" not in dist["a"] and dist["b"]["vs_first"]["baseline"] == "a"
    vs = dist["c"]["vs_first"]
    first = py.per_user[py.per_user["system"] == "a"]["value"].to_numpy()
    assert vs["helped"] == pytest.approx(np.mean(values > first))
    assert vs["hurt"] == pytest.approx(np.mean(values < first))
    assert 0 < vs["cvar_p_value"] <= 1 and len(vs["ci"]["cvar_diff"]) == 2


@pytest.mark.parametrize(
    ("groups", "extra", "message"),
    [
        ("user,group\n1,F\n2,F\n", [], "name one group only"),
        ("user,group\n1,F\n2,M\n3,M\n4,F\n", [], "users of the truth have no group in --user-groups (e.g. 5, 6, 7)"),
        ("user,sex\n1,F\n", [], "need columns user, group"),
        (None, ["--unknown-group", "x"], "--unknown-group applies with --user-groups"),
        ("user,group\n1,F\n2,M\n", ["--group-test", "t"], "--group-test must be one of welch"),
        (None, ["--distribution", "--cvar-level", "0"], "--cvar-level must lie in (0, 1]"),
        (None, ["--distribution", "--cvar-level", "1.01"], "--cvar-level must lie in (0, 1]"),
    ],
)
def test_bad_input_exit_2_one_line(tmp_path, capsys, groups, extra, message):
    _, paths, _ = _world(tmp_path)
    argv = ["compare", "--truth", str(tmp_path / "truth.csv"), str(paths["a"]), str(paths["b"]), "--metrics",
            "recall@5", "--threshold", "4", *extra]  # fmt: skip
    if groups is not None:
        (tmp_path / "bad.csv").write_text(groups)
        argv += ["--user-groups", str(tmp_path / "bad.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_unknown_group_pools_and_extra_users_warn(tmp_path, capsys):
    _, paths, groups = _world(tmp_path)
    part = pd.concat([groups[groups["user"] <= 20], pd.DataFrame({"user": [999], "group": ["young"]})])
    part.to_csv(tmp_path / "part.csv", index=False)
    argv = ["evaluate", "--truth", str(tmp_path / "truth.csv"), "--recs", str(paths["a"]), "--metrics", "recall@5",
            "--threshold", "4", "--user-groups", str(tmp_path / "part.csv"), "--unknown-group", "rest",
            "--json"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    counts = json.loads(captured.out)["groups"]["recall@5"]["counts"]
    assert counts == {"old": 6, "rest": 20, "young": 14}
    assert counts["old"] + counts["young"] == 20
    assert "1 users in --user-groups are not in the truth (e.g. 999)" in captured.err


def test_python_evaluate_user_groups_equals_the_cli(tmp_path, capsys):
    from receval import evaluate

    truth, paths, groups = _world(tmp_path)
    result = evaluate(pd.read_csv(paths["a"]), truth, "recall@5", threshold=4, user_groups=groups)
    argv = ["evaluate", "--truth", str(tmp_path / "truth.csv"), "--recs", str(paths["a"]), "--metrics", "recall@5",
            "--threshold", "4", "--user-groups", str(tmp_path / "groups.csv"), "--json"]  # fmt: skip
    assert main(argv) == 0
    cli = json.loads(capsys.readouterr().out)["groups"]["recall@5"]
    assert result.groups is not None
    py = result.groups["recall@5"].to_dict()
    for key in ("gap", "p_value", "p_value_adj", "statistic", "effect_size"):
        assert py[key] == pytest.approx(cli[key], rel=1e-12)
    assert py["values"] == pytest.approx(cli["values"], rel=1e-12) and py["counts"] == cli["counts"]
    # ids as text (the CLI) order the users differently from ints: the same seed draws other resamples
    assert py["ci"] == pytest.approx(cli["ci"], abs=0.02)
    assert evaluate(pd.read_csv(paths["a"]), truth, "recall@5", threshold=4).groups is None


def test_report_has_group_gaps_distribution_and_ecdf(tmp_path, capsys):
    _, paths, _ = _world(tmp_path)
    report = tmp_path / "cmp.html"
    argv = ["compare", "--truth", str(tmp_path / "truth.csv"), str(paths["a"]), str(paths["b"]), "--metrics",
            "recall@5,precision@5", "--threshold", "4", "--user-groups", str(tmp_path / "groups.csv"),
            "--distribution", "--report", str(report)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Gaps between user groups" in out and "CVaR@0.1" in out
    page = report.read_text(encoding="utf-8")
    assert 'id="group-gaps"' in page and 'id="utility-distribution"' in page
    assert 'id="fig-utility-ecdf"' in page and "not drawn" not in page and "failed" not in page
    assert page.count("<tr><td") >= 2 * 2 + 2 * 2  # a row per (run, metric) in both tables


def test_ml100k_gender_and_age_gaps_of_ndcg(ml100k_dir, tmp_path, capsys):
    """Popularity on u1.base/u1.test, groups from u.user: the CLI's gaps equal scipy's on the per-user nDCG@10."""
    users = pd.read_csv(ml100k_dir / "u.user", sep="|", header=None, names=["user", "age", "gender", "job", "zip"])
    users[["user", "gender"]].rename(columns={"gender": "group"}).to_csv(tmp_path / "gender.csv", index=False)
    bands = pd.cut(users["age"], [0, 24, 34, 44, 200], labels=["<25", "25-34", "35-44", "45+"]).astype(str)
    pd.DataFrame({"user": users["user"], "group": bands}).to_csv(tmp_path / "age.csv", index=False)
    recs = tmp_path / "pop.tsv"
    argv = ["recommend", "--train", str(ml100k_dir / "u1.base"), "-f", "movielens-100k", "--test",
            str(ml100k_dir / "u1.test"), "-a", "popularity", "-o", str(recs), "--k", "10"]  # fmt: skip
    assert main(argv) == 0
    per_user = tmp_path / "per_user.csv"
    base = ["evaluate", "--truth", str(ml100k_dir / "u1.test"), "--truth-format", "movielens-100k", "--recs",
            str(recs), "--metrics", "ndcg@10", "--threshold", "4", "--per-user", str(per_user), "--json"]  # fmt: skip
    capsys.readouterr()
    assert main([*base, "--user-groups", str(tmp_path / "gender.csv")]) == 0
    gender = json.loads(capsys.readouterr().out)["groups"]["ndcg@10"]
    assert main([*base, "--user-groups", str(tmp_path / "age.csv"), "--group-test", "mannwhitney"]) == 0
    age = json.loads(capsys.readouterr().out)["groups"]["ndcg@10"]
    values = pd.read_csv(per_user).dropna().merge(users, on="user")
    f, m = (values.loc[values["gender"] == g, "ndcg@10"].to_numpy() for g in ("F", "M"))
    assert gender["counts"] == {"F": len(f), "M": len(m)} and len(f) + len(m) == 456
    assert gender["gap"] == pytest.approx(f.mean() - m.mean(), rel=1e-12)
    assert gender["p_value"] == pytest.approx(stats.ttest_ind(f, m, equal_var=False).pvalue, rel=1e-9)
    by_band = [values.loc[bands[values["user"] - 1].to_numpy() == b, "ndcg@10"].to_numpy() for b in sorted(set(bands))]
    assert age["gap_kind"] == "range" and age["test"] == "Kruskal–Wallis H test"
    assert age["p_value"] == pytest.approx(stats.kruskal(*by_band).pvalue, rel=1e-9)
    assert age["gap"] == pytest.approx(max(b.mean() for b in by_band) - min(b.mean() for b in by_band), rel=1e-12)
