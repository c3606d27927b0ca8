"""Tuning (`[tune]`, receval tune): bad input, the protocol (test read once), seeds, samplers, executors, output."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

pytest.importorskip("optuna")

from receval.cli.app import main
from receval.evaluation import evaluate_model
from receval.experiment import tune as tune_module
from receval.experiment.config import load_config
from receval.experiment.datasets import prepare_dataset
from receval.experiment.tune import tune_experiment
from receval.recommenders import make
from receval.split import per_user_holdout

_BASE = """
metrics = ["ndcg@10", "recall@10"]

[datasets.toy]
generate = { n_users = 80, n_items = 60, n_ratings = 1600, seed = 3 }

[split]
method = "per-user"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 10

[tune]
metric = "ndcg@10"
trials = 4
seed = 5

[recommenders.popularity]
space = { threshold = { float = [1, 5] } }

[recommenders.biases]
[recommenders.biases.space]
item_damping = { float = [0.1, 500], log = true }
user_damping = { int = [0, 50] }
"""


def _config(tmp_path: Path, text: str = _BASE, name: str = "tune.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------- bad input
_BAD = [
    ("threshold = { float = [1, 5] }", "threshold = { float = [5, 1] }", 21, "is inverted: give low < high"),
    ("threshold = { float = [1, 5] }", "threshold = { float = [3, 3] }", 21, "is empty"),
    ("threshold = { float = [1, 5] }", "threshhold = { float = [1, 5] }", 21, "did you mean 'threshold'?"),
    ("trials = 4", "trials = 0", 17, "tune] trials"),
    ("trials = 4", "trials = 4\nseconds = 0", 18, "a time budget must be positive"),
    ('metric = "ndcg@10"', 'metric = "ndgc@10"', 16, "[tune] metric"),
    ('metric = "ndcg@10"', 'metric = "ndcg@10"\nsampler = "cmaes"', 17, "unknown sampler 'cmaes'"),
    ("item_damping = { float = [0.1, 500], log = true }", "item_damping = { float = [0, 500], log = true }", 25,
     "a log-scale range needs low > 0"),
    ("threshold = { float = [1, 5] }", "threshold = { float = [1, 5], when = { count = \"any\" } }", 21,
     "'count' must be a choices parameter above it"),
    ("trials = 4", "", 15, "needs a budget"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "line", "words"), _BAD)
def test_bad_tune_section_is_one_line_with_its_line_and_exit_2(tmp_path, capsys, old, new, line, words):
    cfg = _config(tmp_path, _BASE.replace(old, new, 1))
    out = tmp_path / "out"
    assert main(["tune", str(cfg), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"tune.toml, line {line}:" in err and words in err, err
    assert not out.exists() or not any(out.iterdir())  # refused before any trial or file


def test_data_checks_come_before_any_trial(tmp_path, capsys):
    # a validation split of 95% of each user's pairs with no minimum leaves users without training data
    text = _BASE.replace("seed = 5", 'seed = 5\n[tune.validation]\nmethod = "holdout"\ntest_fraction = 0.95')
    assert main(["tune", str(_config(tmp_path, text)), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "line 19:" in err and "with no training data" in err and "min_train" in err
    assert not (tmp_path / "o" / "tune.sqlite3").exists()
    # an objective the rankers cannot compute: RMSE needs predictions popularity does not make
    text = _BASE.replace('metric = "ndcg@10"', 'metric = "rmse"')
    assert main(["tune", str(_config(tmp_path, text)), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "line 16:" in err and "needs rating predictions" in err and "'popularity'" in err
    # --trials 0
    assert main(["tune", str(_config(tmp_path)), "--out", str(tmp_path / "q"), "--trials", "0"]) == 2
    assert "--trials" in capsys.readouterr().err


def test_a_space_without_tune_and_a_grid_with_a_float_range_are_refused(tmp_path, capsys):
    text = _BASE.replace('[tune]\nmetric = "ndcg@10"\ntrials = 4\nseed = 5\n', "")
    assert main(["run", str(_config(tmp_path, text)), "--out", str(tmp_path / "o")]) == 2
    assert "[recommenders.popularity] space needs a [tune] section" in capsys.readouterr().err
    text = _BASE.replace("seed = 5", 'seed = 5\nsampler = "grid"')
    assert main(["tune", str(_config(tmp_path, text)), "--out", str(tmp_path / "p")]) == 2
    assert "grid search needs a step for every float range" in capsys.readouterr().err


# ---------------------------------------------------------------- the protocol
class _Tripwire:
    """Stands for the test part; any use of it before the final evaluation is recorded and fails."""

    def __init__(self, real, touched: list[str]) -> None:
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_touched", touched)

    def __getattr__(self, name):
        self._touched.append(name)
        raise AssertionError(f"the test part was read ({name}) during tuning")

    def __reduce_ex__(self, protocol):
        self._touched.append("pickle")
        raise AssertionError("the test part was sent to a worker")


def test_the_test_part_is_read_once_after_every_trial(tmp_path, monkeypatch):
    touched: list[str] = []
    opened: list[int] = []
    original_split = tune_module._split_parts

    def sealed_split(cfg, label, data, seed):
        train, held = original_split(cfg, label, data, seed)
        held._test = _Tripwire(held._test, touched)
        return train, held

    def open_after_tuning(self):
        import optuna

        storage = f"sqlite:///{(tmp_path / 'out' / 'tune.sqlite3').resolve()}"
        finished = [
            len(optuna.load_study(study_name=s, storage=storage).trials)
            for s in optuna.study.get_all_study_names(storage)
        ]
        opened.append(min(finished))
        real = object.__getattribute__(self._test, "_real")
        return real

    monkeypatch.setattr(tune_module, "_split_parts", sealed_split)
    monkeypatch.setattr(tune_module.HeldOut, "open", open_after_tuning)
    report = tune_experiment(_config(tmp_path), out=tmp_path / "out", executor="dask", processes=False)
    assert touched == []
    assert opened == [4]  # opened once per data set, when every study had its 4 trials
    assert all(r["trials"] == 4 and r["failed_trials"] == 0 for r in report.summary["algorithms"].values())


def test_choice_is_the_best_validation_trial_and_test_is_one_refit(tmp_path):
    report = tune_experiment(_config(tmp_path), out=tmp_path / "out")
    cfg = load_config(_config(tmp_path))
    data = prepare_dataset(cfg.datasets["toy"]).data
    train, test = per_user_holdout(data, 0.2, seed=5)  # the configuration's split with the tune seed
    fit, validation = per_user_holdout(train, 0.2, seed=5)  # the default validation split: the same kind
    for key, res in report.summary["algorithms"].items():
        rows = report.trials[report.trials["study"] == key]
        best = rows.loc[rows["value"].idxmax()]
        algorithm = res["algorithm"]
        # the untuned defaults compete on validation, outside the budget: chosen only when better than every trial
        untuned = evaluate_model(make(algorithm), fit, validation, ["ndcg@10"], seed=5).summary["ndcg@10"]
        assert res["default_validation"] == pytest.approx(untuned, abs=1e-12)
        if untuned > best["value"]:
            assert res["chosen"] == "default" and res["best_params"] == {} and res["validation"] == untuned
        else:
            assert res["chosen"] == f"trial {int(best['number'])}" and best["value"] == res["validation"]
            assert json.loads(best["params"]) == res["best_params"]
        assert res["best_trial_validation"] == best["value"]
        assert rows["best_so_far"].tolist() == rows["value"].cummax().tolist()
        # every trial's value recomputed on the fit and validation parts
        for _, row in rows.iterrows():
            again = evaluate_model(make(algorithm, **json.loads(row["params"])), fit, validation, ["ndcg@10"], seed=5)
            assert again.summary["ndcg@10"] == pytest.approx(row["value"], abs=1e-12)
        tuned = evaluate_model(make(algorithm, **res["best_params"]), train, test, ["ndcg@10", "recall@10"], seed=5)
        default = evaluate_model(make(algorithm), train, test, ["ndcg@10", "recall@10"], seed=5)
        assert res["test"] == pytest.approx(tuned.summary["ndcg@10"], abs=1e-12)
        assert res["default_test"] == pytest.approx(default.summary["ndcg@10"], abs=1e-12)
        assert res["test_metrics"]["recall@10"] == pytest.approx(tuned.summary["recall@10"], abs=1e-12)
        # the paired test: scipy's paired t-test over the same users
        both = tuned.per_user.merge(default.per_user, on="user", suffixes=("_t", "_d"))
        row = report.compare[(report.compare["study"] == key) & (report.compare["metric"] == "ndcg@10")].iloc[0]
        expected = stats.ttest_rel(both["ndcg@10_t"], both["ndcg@10_d"])
        if np.isfinite(expected.pvalue):
            assert row["pvalue"] == pytest.approx(expected.pvalue, rel=1e-9)
        assert row["diff"] == pytest.approx((both["ndcg@10_t"] - both["ndcg@10_d"]).mean(), abs=1e-12)
    # Holm over the two recommenders within each metric
    for _, part in report.compare.groupby("metric"):
        tested = part.dropna(subset=["pvalue"])  # a pair with identical values has no p-value
        p = np.sort(tested["pvalue"].to_numpy())
        holm = np.maximum.accumulate(np.minimum(1, p * np.arange(len(p), 0, -1)))
        assert np.allclose(np.sort(tested["pvalue_adj"].to_numpy()), holm)


def test_refit_on_the_fit_part_is_recorded(tmp_path):
    text = _BASE.replace("seed = 5", 'seed = 5\nrefit = "train"')
    report = tune_experiment(_config(tmp_path, text), out=tmp_path / "out")
    cfg = load_config(_config(tmp_path, text))
    train, test = per_user_holdout(prepare_dataset(cfg.datasets["toy"]).data, 0.2, seed=5)
    fit, _ = per_user_holdout(train, 0.2, seed=5)
    res = report.summary["algorithms"]["toy/biases"]
    again = evaluate_model(make("biases", **res["best_params"]), fit, test, ["ndcg@10"], seed=5)
    assert report.summary["refit"] == "train" and res["test"] == pytest.approx(again.summary["ndcg@10"], abs=1e-12)


# ---------------------------------------------------------------- seeds, executors, samplers
def _choices(report) -> dict:
    return {
        k: (r["best_params"], r["validation"], r["test"], r["default_test"])
        for k, r in report.summary["algorithms"].items()
    }


def test_same_config_same_choices_whatever_the_executor(tmp_path):
    text = _BASE.replace("seed = 5", "seed = 5\nparallel = 2")
    cfg = _config(tmp_path, text)
    local = tune_experiment(cfg, out=tmp_path / "local")
    dask = tune_experiment(cfg, out=tmp_path / "dask", executor="dask", jobs=2, processes=False)
    pool = tune_experiment(cfg, out=tmp_path / "loky", executor="local", jobs=2)
    assert _choices(local) == _choices(dask) == _choices(pool)
    cols = ["study", "trial", "params", "value"]
    pd.testing.assert_frame_equal(local.trials[cols], dask.trials[cols])
    pd.testing.assert_frame_equal(local.trials[cols], pool.trials[cols])
    other = tune_experiment(_config(tmp_path, text.replace("seed = 5", "seed = 6"), "b.toml"), out=tmp_path / "six")
    assert other.trials["params"].tolist() != local.trials["params"].tolist()


def test_grid_search_visits_every_point_once(tmp_path):
    text = _BASE.replace("trials = 4", 'trials = 50\nsampler = "grid"')
    text = text.replace("threshold = { float = [1, 5] }", "threshold = { float = [1, 5], step = 1 }")
    text = text.replace("item_damping = { float = [0.1, 500], log = true }", "item_damping = { choices = [1, 25] }")
    text = text.replace("user_damping = { int = [0, 50] }", "user_damping = { int = [0, 20], step = 10 }")
    report = tune_experiment(_config(tmp_path, text), out=tmp_path / "out")
    pop = report.trials[report.trials["study"] == "toy/popularity"]
    assert sorted(json.loads(p)["threshold"] for p in pop["params"]) == [1.0, 2.0, 3.0, 4.0, 5.0]
    biases = report.trials[report.trials["study"] == "toy/biases"]
    seen = sorted((json.loads(p)["item_damping"], json.loads(p)["user_damping"]) for p in biases["params"])
    assert seen == sorted(itertools.product([1, 25], [0, 10, 20]))


def test_conditional_parameters_are_drawn_only_under_their_parent(tmp_path):
    text = _BASE.replace("trials = 4", 'trials = 12\nsampler = "random"').replace(
        "space = { threshold = { float = [1, 5] } }",
        'space = { count = { choices = ["positive", "any"] }, threshold = { float = [1, 5], when = { count = "positive" } } }',  # noqa: E501
    )
    report = tune_experiment(_config(tmp_path, text), out=tmp_path / "out")
    params = [json.loads(p) for p in report.trials.loc[report.trials["study"] == "toy/popularity", "params"]]
    assert {p["count"] for p in params} == {"positive", "any"}
    assert all(("threshold" in p) == (p["count"] == "positive") for p in params)


def test_budgets_equal_unless_a_recommender_sets_its_own(tmp_path):
    report = tune_experiment(_config(tmp_path), out=tmp_path / "a", trials=2)
    assert report.summary["equal_budgets"] and {r["trials"] for r in report.summary["algorithms"].values()} == {2}
    text = _BASE.replace("[recommenders.biases]\n", "[recommenders.biases]\ntrials = 3\n")
    report = tune_experiment(_config(tmp_path, text), out=tmp_path / "b")
    assert not report.summary["equal_budgets"]
    assert [r["trials"] for r in report.summary["algorithms"].values()] == [4, 3]
    from receval.report.tune import write_tune_report

    page = write_tune_report(report.summary, report.trials, report.compare, tmp_path / "b" / "tune.html")
    assert "The budgets are not equal" in page.read_text(encoding="utf-8")


def test_a_time_budget_stops_a_study(tmp_path):
    text = _BASE.replace("trials = 4", "seconds = 0.000001")
    report = tune_experiment(_config(tmp_path, text), out=tmp_path / "out")
    assert {r["trials"] for r in report.summary["algorithms"].values()} == {1}  # the first trial spends it


# ---------------------------------------------------------------- command line
def test_cli_json_and_run_honours_tune(tmp_path, capsys):
    cfg = _config(tmp_path)
    assert main(["tune", str(cfg), "--out", str(tmp_path / "out"), "--trials", "2", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert set(doc) == {"algorithms"} and set(doc["algorithms"]) == {"toy/popularity", "toy/biases"}
    for res in doc["algorithms"].values():
        assert {"best_params", "trials", "validation", "test", "default_test"} <= set(res) and res["trials"] == 2
        assert res["chosen"] == "default" or res["validation"] >= res["default_validation"]
    assert captured.err.count(" trial ") == 4  # progress: one line per trial on stderr
    files = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"tune.sqlite3", "tune.json", "tune.html", "tune_trials.parquet", "tune_compare.parquet"} <= files
    assert main(["run", str(cfg), "--out", str(tmp_path / "run"), "--quick"]) == 0
    assert "default and tuned on test" in capsys.readouterr().out
    assert json.loads((tmp_path / "run" / "tune.json").read_text())["algorithms"]["toy/biases"]["trials"] == 4


def test_missing_optuna_is_named_with_its_extra(tmp_path, monkeypatch):
    import sys

    from receval.errors import ConfigError

    monkeypatch.setitem(sys.modules, "optuna", None)  # `import optuna` now raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'receval\[tune\]'"):
        tune_experiment(_config(tmp_path), out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_ray_makes_the_same_choices(tmp_path):
    pytest.importorskip("ray")
    cfg = _config(tmp_path, _BASE.replace("seed = 5", "seed = 5\nparallel = 2"))
    local = tune_experiment(cfg, out=tmp_path / "local")
    ray = tune_experiment(cfg, out=tmp_path / "ray", executor="ray", jobs=1)
    assert _choices(local) == _choices(ray)
    assert local.trials["params"].tolist() == ray.trials["params"].tolist()


def test_a_protocol_grid_is_refused_and_the_seed_defaults_to_the_first_of_seeds(tmp_path, capsys):
    text = _BASE.replace("k = 10", "k = [10, 20]")
    assert main(["tune", str(_config(tmp_path, text)), "--out", str(tmp_path / "o")]) == 2
    assert "line 13: protocol.k is a grid axis" in capsys.readouterr().err
    text = "seeds = [7, 8]\n" + _BASE.replace("seed = 5\n", "")
    assert load_config(_config(tmp_path, text)).tune.seed == 7


def test_a_larger_budget_continues_the_same_study_in_a_named_storage(tmp_path):
    db = tmp_path / "elsewhere" / "studies.db"
    db.parent.mkdir()
    text = _BASE.replace("seed = 5", f'seed = 5\nstorage = "sqlite:///{db.as_posix()}"')
    cfg = _config(tmp_path, text)
    short = tune_experiment(cfg, out=tmp_path / "out", trials=2)
    longer = tune_experiment(cfg, out=tmp_path / "out", trials=4)
    assert db.exists() and not (tmp_path / "out" / "tune.sqlite3").exists()
    for key in short.summary["algorithms"]:
        first = short.trials[short.trials["study"] == key]["params"].tolist()
        assert longer.trials[longer.trials["study"] == key]["params"].tolist()[:2] == first
    assert {r["trials"] for r in longer.summary["algorithms"].values()} == {4}
    fresh = tune_experiment(_config(tmp_path, _BASE, "fresh.toml"), out=tmp_path / "fresh", trials=4)
    assert fresh.trials["params"].tolist() == longer.trials["params"].tolist()  # 2 then 4 trials = 4 at once


def test_receval_report_on_a_tuning_folder_writes_the_tuning_report(tmp_path, capsys):
    out = tmp_path / "out"
    tune_experiment(_config(tmp_path), out=out)
    assert main(["report", str(out), "--out", str(tmp_path / "page.html")]) == 0
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert page.count("<figure") == 1 and "toy/biases" in page and "Default and tuned on test" in page
    assert main(["report", str(out)]) == 0 and (out / "tune.html").is_file()
    from receval.report.html import build_report

    assert "holds a tuning run" in build_report(out, tmp_path / "store.html").read_text(encoding="utf-8")
    assert main(["report", str(out), "--latex", str(tmp_path / "tex")]) == 2
    assert "--latex" in capsys.readouterr().err and not (tmp_path / "tex").exists()
    summary = (out / "tune.json").read_text(encoding="utf-8")
    for damaged, named in (('{"algorithms": {"toy/biases": {}}, "objective": "ndcg@10"}', "has no 'dataset'"),
                           ("[1]", "not a tuning summary")):  # fmt: skip
        (out / "tune.json").write_text(damaged, encoding="utf-8")
        assert main(["report", str(out), "--out", str(tmp_path / "bad.html")]) == 2
        assert named in capsys.readouterr().err and not (tmp_path / "bad.html").exists()
    (out / "tune.json").write_text(summary, encoding="utf-8")
    pd.DataFrame({"a": [1]}).to_parquet(out / "tune_compare.parquet")
    assert main(["report", str(out), "--out", str(tmp_path / "bad.html")]) == 2
    assert "tune_compare.parquet: no column 'study'" in capsys.readouterr().err
    (out / "tune_trials.parquet").write_bytes(b"not parquet")
    assert main(["report", str(out), "--out", str(tmp_path / "again.html")]) == 2
    err = capsys.readouterr().err
    assert "tune_trials.parquet" in err and "Traceback" not in err and not (tmp_path / "again.html").exists()


def test_the_untuned_defaults_are_chosen_only_when_better_on_validation_and_can_be_left_out(tmp_path):
    bad_space = _BASE.replace("threshold = { float = [1, 5] }", "threshold = { float = [4.9, 5] }")
    report = tune_experiment(_config(tmp_path, bad_space), out=tmp_path / "a")
    pop = report.summary["algorithms"]["toy/popularity"]
    assert pop["default_validation"] > pop["best_trial_validation"]  # only 5-star ratings count: worse than 4
    assert pop["chosen"] == "default" and pop["best_params"] == {} and pop["test"] == pop["default_test"]
    assert pop["validation"] == pop["default_validation"]
    left_out = bad_space.replace("seed = 5", "seed = 5\ndefault_candidate = false")
    other = tune_experiment(_config(tmp_path, left_out, "b.toml"), out=tmp_path / "b")
    pop = other.summary["algorithms"]["toy/popularity"]
    assert pop["chosen"].startswith("trial ") and pop["default_validation"] is None
    assert pop["validation"] == pop["best_trial_validation"] and pop["test"] < pop["default_test"]
    assert other.summary["default_candidate"] is False
    text = _BASE.replace("seed = 5", 'seed = 5\ndefault_candidate = "yes"')
    assert main(["tune", str(_config(tmp_path, text, "c.toml")), "--out", str(tmp_path / "c")]) == 2
