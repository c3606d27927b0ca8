"""receval check: every rule fails on a configuration that commits its flaw (one finding per flaw) and passes on a
clean one; stores, split folders, the shipped examples and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval.cli import main
from receval.errors import ConfigError, ReceValError
from receval.experiment.check import RULES, check_path, comparison_findings, split_findings

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guides" / "check.md"


def _data(folder: Path, *, graded: bool = True) -> Path:
    """60 users x 15 of 30 items with timestamps; graded ratings 1..5 or all 1 (implicit feedback)."""
    rng = np.random.default_rng(0)
    rated = [(u, i) for u in range(60) for i in range(u % 16, u % 16 + 15)]  # items left unrated: sampled negatives
    rows = [(u, i, int(rng.integers(1, 6)) if graded else 1, 1000 + 37 * u + i) for u, i in rated]
    path = folder / ("ratings.csv" if graded else "clicks.csv")
    pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"]).to_csv(path, index=False)
    return path


def _config(folder: Path, **parts: str) -> Path:
    """A clean configuration; each keyword replaces one section's text."""
    sections = {
        "top": 'name = "c"\nseeds = 2\nmetrics = ["ndcg@10"]\n',
        "data": f'[datasets.d]\npath = "{_data(folder).name}"\nformat = "csv"\n',
        "split": '[split]\nmethod = "temporal-per-user"\ntest_fraction = 0.2\n',
        "protocol": '[protocol]\nname = "one-shot"\nk = 10\n',
        "recs": "[recommenders.popularity]\n[recommenders.random]\n",
        "extra": "",
    }
    sections.update(parts)
    path = folder / "c.toml"
    path.write_text("".join(sections.values()))
    return path


def _rules(path: Path) -> list[str]:
    return [f.rule for f in check_path(path)]


def test_clean_configuration_passes(tmp_path: Path) -> None:
    assert _rules(_config(tmp_path)) == []
    assert main(["check", str(tmp_path / "c.toml"), "--json"]) == 0


FLAWS = {  # rule: the sections that commit its flaw (and nothing else)
    "R001": {"split": '[split]\nmethod = "loo"\n',
             "protocol": '[protocol]\nname = "sampled"\nn = 5\nrepeats = 2\ncorrections = ["none"]\n'},
    "R002": {"split": '[split]\nmethod = "per-user"\ntest_fraction = 0.2\n'},
    "R003": {"data": '[datasets.d]\npath = "ratings.csv"\nformat = "csv"\nfilters = { min_user_ratings = 5 }\n'},
    "R005": {"recs": '[recommenders.popularity]\nspace = { threshold = { float = [0, 4] } }\n'
                     '[recommenders.item-knn]\ntrials = 9\nspace = { k = { int = [2, 20] } }\n',
             "extra": '[tune]\nmetric = "ndcg@10"\ntrials = 3\n'},
    "R007": {"top": 'name = "c"\nseeds = 1\nmetrics = ["ndcg@10"]\n'},
    "R010": {"recs": '[recommenders.popularity]\n[recommenders.als]\nalgorithm = "implicit:AlternatingLeastSquares"\n'},
    "R011": {"split": '[split]\nmethod = "temporal"\ntest_fraction = 0.2\n'},
}  # fmt: skip


@pytest.mark.parametrize("rule", sorted(FLAWS))
def test_each_flaw_one_finding(tmp_path: Path, rule: str) -> None:
    findings = check_path(_config(tmp_path, **FLAWS[rule]))
    assert [f.rule for f in findings] == [rule]
    assert findings[0].reference == RULES[rule].reference and RULES[rule].slug in findings[0].message


def test_cold_users_excluded_is_r003(tmp_path: Path) -> None:
    path = _config(tmp_path, protocol='[protocol]\nname = "one-shot"\ncold_start = "exclude"\n')
    assert _rules(path) == ["R003"]
    # the same split with a stated policy that keeps the users: clean
    assert _rules(_config(tmp_path, protocol='[protocol]\nname = "one-shot"\ncold_start = "fallback"\n')) == []


def test_grid_on_test_and_untuned_baselines(tmp_path: Path) -> None:
    every = "[recommenders.popularity]\nparams = { threshold = [0, 4] }\n"
    every += "[recommenders.random]\nparams = { seed = [0, 1] }\n"
    assert _rules(_config(tmp_path, recs=every)) == ["R004"]  # all tuned, on test
    one = "[recommenders.popularity]\nparams = { threshold = [0, 4] }\n[recommenders.random]\n"
    assert _rules(_config(tmp_path, recs=one)) == ["R004", "R006"]  # and random left untuned beside it


def test_equal_tuning_budgets_pass(tmp_path: Path) -> None:
    recs = "[recommenders.popularity]\nspace = { threshold = { float = [0, 4] } }\n"
    recs += "[recommenders.item-knn]\nspace = { k = { int = [2, 20] } }\n"
    assert _rules(_config(tmp_path, recs=recs, extra='[tune]\nmetric = "ndcg@10"\ntrials = 3\n')) == []


def test_threshold_on_implicit_data_is_r012(tmp_path: Path) -> None:
    _data(tmp_path, graded=False)
    data = '[datasets.d]\npath = "clicks.csv"\nformat = "csv"\nthreshold = 1\n'
    assert _rules(_config(tmp_path, data=data)) == ["R012"]
    with pytest.raises(ConfigError, match=r"threshold 4 is outside the rating scale 1\.\.1"):  # as run refuses it
        check_path(_config(tmp_path, data=data.replace("= 1", "= 4")))
    # graded ratings: a threshold is a relevance definition, not a flaw
    assert _rules(_config(tmp_path, data=data.replace("clicks", "ratings"))) == []


def test_comparison_rules() -> None:
    assert comparison_findings(test="ttest", correction="holm", n_users=10_000, n_comparisons=10) == []
    assert [f.rule for f in comparison_findings(test="ttest", correction="none", n_users=50, n_comparisons=3)] == [
        "R008"
    ]
    assert comparison_findings(test="ttest", correction="none", n_users=50, n_comparisons=1) == []  # one comparison
    assert [f.rule for f in comparison_findings(test="Wilcoxon", correction="holm", n_users=943, n_comparisons=1)] == []
    assert [f.rule for f in comparison_findings(test="sign", correction="holm", n_users=6040, n_comparisons=1)] == [
        "R009"
    ]


def _split(folder: Path, method: str, *extra: str) -> Path:
    data = _data(folder)
    out = folder / method
    assert main(["split", str(data), "--format", "csv", "--method", method, "--out", str(out), *extra]) == 0
    return out


def test_split_folders(tmp_path: Path) -> None:
    assert [f.rule for f in split_findings(_split(tmp_path, "kfold", "--folds", "3"))] == ["R002"] * 3
    assert [f.rule for f in split_findings(_split(tmp_path, "temporal-per-user"))] == ["R007"]
    # a global temporal split: latest pairs overall; users whose pairs all fall late are cold
    assert [f.rule for f in split_findings(_split(tmp_path, "temporal"))] == ["R007", "R011"]


def test_store_is_checked_as_its_configuration(tmp_path: Path) -> None:
    from receval.experiment.runner import run_experiment

    path = _config(tmp_path, top='name = "c"\nseeds = 1\nmetrics = ["ndcg@10"]\n')
    run_experiment(path, out=tmp_path / "store", processes=False)
    assert _rules(tmp_path / "store") == ["R007"]


def test_cli_json_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _config(tmp_path, top='name = "c"\nseeds = 1\nmetrics = ["ndcg@10"]\n')
    assert main(["check", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [f["rule"] for f in out["findings"]] == ["R007"] and set(out["findings"][0]) == {
        "rule",
        "message",
        "reference",
    }
    (tmp_path / "empty").mkdir()
    for bad in (tmp_path / "empty", tmp_path / "missing.toml", _data(tmp_path)):
        assert main(["check", str(bad), "--json"]) == 2
        err = json.loads(capsys.readouterr().out)["error"]
        assert "\n" not in err and "not a run configuration" in err
    with pytest.raises(ConfigError, match="not a run configuration"):
        check_path(tmp_path / "empty")


def test_guide_explains_every_rule() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for rule in RULES.values():
        line = next((ln for ln in text.splitlines() if ln.startswith(f"| {rule.id} ")), "")
        cells = [c.strip() for c in line.split("|")]
        assert cells[2] == rule.slug and cells[5] == rule.reference and cells[4], rule.id


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_examples_clean_or_explained(example: Path) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    try:
        findings = check_path(example)
    except ReceValError as err:  # the real data (../shared/data) are absent on this machine
        if "not found" not in str(err):
            raise
        pytest.skip(f"data of {example.name} not available: {err}")
    # the guide's section on the examples names each example's findings
    section = text.split("## The shipped examples", 1)[1]
    line = next(ln for ln in section.splitlines() if example.name in ln)
    assert sorted(set(re.findall(r"R\d{3}", line))) == sorted({f.rule for f in findings}), example.name


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ({"split": '[split]\nmethod = "kfold-per-user"\nk = 20\n'}, "split.k 20: 60 users have fewer than 20"),
        ({"data": '[datasets.d]\npath = "ratings.csv"\nformat = "csv"\nthreshold = 9\n'}, "threshold 9 is outside"),
        ({"top": 'name = "c"\nseeds = 100_000_000\nmetrics = ["ndcg@10"]\n'}, "the grid of 200,000,000 tasks needs"),
    ],
)
def test_check_refuses_what_run_refuses_with_the_same_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], part: dict[str, str], message: str
) -> None:
    config = _config(tmp_path, **part)
    assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 2
    refused = capsys.readouterr().err
    assert main(["check", str(config)]) == 2
    free = re.compile(r"[\d.]+ [KMGT]?B are available")  # the memory free at each moment
    assert free.sub("", capsys.readouterr().err) == free.sub("", refused), refused
    assert message in refused and refused.count("\n") == 1, refused
    assert not (tmp_path / "out").exists()


def test_a_counted_seed_axis_is_refused_by_the_grid_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``seeds = N`` was expanded into N integers before the grid's memory check refused it (10^8 took 20 s)."""
    config = _config(tmp_path, top='name = "c"\nseeds = 1_000_000_000_000_000\nmetrics = ["ndcg@10"]\n')
    assert main(["check", str(config)]) == 2
    assert "the grid of 2,000,000,000,000,000 tasks needs" in capsys.readouterr().err
