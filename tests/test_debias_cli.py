"""``receval debias``: the study on a data set with a familiar (MNAR) part, JSON output, bad input, CM100k."""

from __future__ import annotations

import json

import pytest

from conftest import shared_path
from receval.cli.app import main
from receval.data.synthetic import generate

FAST = ["--algorithms", "random,popularity,average,user-knn", "--metrics", "recall@10,fallout@10"]


@pytest.fixture(scope="module")
def familiar_csv(tmp_path_factory):
    data = generate(n_users=150, n_items=120, n_ratings=6000, familiar_fraction=0.3, n_aspects=0, seed=4)
    path = tmp_path_factory.mktemp("debias") / "ratings.csv"
    data.to_frame()[["user", "item", "rating", "familiar"]].to_csv(path, index=False)
    return path


def test_json_has_tau_and_error_per_estimator(familiar_csv, capsys, tmp_path):
    args = ["debias", "--data", str(familiar_csv), "--format", "csv", "--threshold", "4", "--json", *FAST]
    assert main([*args, "--estimators", "naive,ips,snips,stratified,wtd_h", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metric"] == "recall@10"
    for key in ("naive", "ips", "snips", "stratified", "wtd_h"):
        assert -1 <= out["kendall_tau"][key] <= 1
        assert out["error"][key] >= 0
    assert {"mar", "naive", "ips"} <= set(out["recall_fallout"])
    assert {p.name for p in tmp_path.iterdir()} >= {"estimates.csv", "kendall.csv", "tau.png", "estimates.png"}


def test_data_without_a_mar_truth_is_an_error(tmp_path, capsys):
    path = tmp_path / "plain.csv"
    generate(n_users=20, n_items=20, n_ratings=200, n_aspects=0, seed=1).to_frame()[["user", "item", "rating"]].to_csv(
        path, index=False
    )
    assert main(["debias", "--data", str(path), "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "no column 'familiar'" in err and "--familiar" in err


def test_cm100k_familiar_against_all_ratings(capsys):
    """On CM100k the MAR truth ranks Recall and Fallout alike; the familiar ratings do not (the thesis' finding)."""
    path = shared_path("cm100k")
    algorithms = "random,popularity,average,user-knn,item-knn"
    # λ = 3 on CM100k's 1–4 scale (likes vs dislikes, as the thesis): the default λ (every rating relevant)
    # leaves no negatives, so no Fallout
    args = ["debias", "--data", str(path), "--format", "cm100k", "--json", "--algorithms", algorithms]
    args += ["--threshold", "3"]
    assert main([*args, "--metrics", "recall@10,fallout@10", "--estimators", "naive,ips,snips,wtd,wtd_h"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"naive", "ips", "snips", "wtd", "wtd_h"} <= set(out["kendall_tau"])
    assert out["recall_fallout"]["mar"] > out["recall_fallout"]["naive"]


def test_debiased_protocol_in_the_runner(tmp_path):
    from receval.experiment import ResultStore, run_experiment

    config = tmp_path / "debias.toml"
    config.write_text(
        """\
name = "debias"
seeds = [0]
metrics = ["recall@10", "fallout@10"]

[datasets.toy]
generate = { n_users = 120, n_items = 100, n_ratings = 4000, familiar_fraction = 0.3, n_aspects = 0, seed = 2 }

[protocol]
name = "debiased"
estimators = ["naive", "ips", "wtd_h"]
threshold = 4.0

[recommenders.popularity]
[recommenders.random]
"""
    )
    report = run_experiment(config, out=tmp_path / "out")
    assert (report.ok, report.failed) == (2, 0)
    aggregates = ResultStore(tmp_path / "out").read("aggregates")
    names = set(aggregates["metric"])
    assert {"recall@10|naive", "recall@10|ips", "recall@10|wtd_h", "recall@10|mar", "fallout@10|ips"} <= names


def test_each_propensity_model_is_fitted_once_for_every_system(familiar_csv, capsys, tmp_path, monkeypatch):
    """The models fit the training and MNAR test ratings, the same for each system: CM100k's logistic model was
    fitted once per system (8 s each), with the same result."""
    from receval.stats.propensity import LogisticPropensity, NaiveBayesPropensity

    fits: list[str] = []
    for cls in (LogisticPropensity, NaiveBayesPropensity):
        fit = cls.fit
        monkeypatch.setattr(cls, "fit", lambda self, *a, _fit=fit, **kw: fits.append(self.name) or _fit(self, *a, **kw))
    args = ["debias", "--data", str(familiar_csv), "--format", "csv", "--threshold", "4", "--json"]
    args += ["--algorithms", "random,popularity,average", "--metrics", "recall@10", "--estimators", "ips,snips"]
    assert main([*args, "--propensities", "logistic,naive-bayes", "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["kendall_tau"]
    assert sorted(fits) == ["logistic", "naive-bayes"]
