"""Tuning makes the choices of a bare Optuna loop (optuna 5.1.0, in memory) asked the same questions.

``tune_experiment`` keeps its study in memory and writes each trial to the SQLite storage
when asked and when told. These tests hold it to a bare ask-and-tell loop on an in-memory
study whose sampler is re-seeded before each trial by tune's documented rule (a hash of the
tune seed, the study's name and the trial's index): the same parameters, the same
validation values, the same choice, and the same trials in the storage as Optuna's own
calls would write there (parameters, values, states, attributes). A grid search interrupted
mid-run and resumed runs the interrupted point as the trial queued for it (a storage write
of its own) and visits each point once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

from receval.evaluation import evaluate_model  # noqa: E402
from receval.experiment import tune as tune_module  # noqa: E402
from receval.experiment.config import load_config  # noqa: E402
from receval.experiment.datasets import prepare_dataset  # noqa: E402
from receval.experiment.ids import stable_hash  # noqa: E402
from receval.experiment.tune import tune_experiment  # noqa: E402
from receval.recommenders import make  # noqa: E402
from receval.split import per_user_holdout  # noqa: E402
from test_tune_identity import interrupted_then_resumed  # noqa: E402

# 14 trials: TPE's 10 random start-up trials, then 4 from its model of the finished ones
_CONFIG = """
metrics = ["ndcg@10"]
[datasets.toy]
generate = { n_users = 80, n_items = 60, n_ratings = 1600, seed = 3 }
[split]
method = "per-user"
test_fraction = 0.2
[protocol]
name = "one-shot"
k = 10
[tune]
trials = 14
seed = 5
default_candidate = false
[recommenders.biases]
[recommenders.biases.space]
item_damping = { float = [0.1, 500], log = true }
user_damping = { int = [0, 50] }
"""


_ERROR = "ValueError: user_damping above 35"  # a model failing on part of the space


def _fails(params: dict) -> bool:
    return params["user_damping"] > 35


def _bare(cfg: Path, sampler: str, parallel: int, failing: bool) -> optuna.Study:
    """The bare loop: tune's fit and validation parts, its sampler seeds, rounds of ``parallel`` asks then tells."""
    data = prepare_dataset(load_config(cfg).datasets["toy"]).data
    train, _ = per_user_holdout(data, 0.2, seed=5)  # the configuration's split with the tune seed
    fit, validation = per_user_holdout(train, 0.2, seed=5)  # the default validation split: the same kind
    samplers = {"tpe": optuna.samplers.TPESampler, "random": optuna.samplers.RandomSampler}
    study = optuna.create_study(direction="maximize")
    while len(study.trials) < 14:
        asked = []
        for _ in range(min(parallel, 14 - len(study.trials))):
            index = len(study.trials)
            study.sampler = samplers[sampler](seed=int(stable_hash([5, "toy/biases", index], 8), 16))
            trial = study.ask()
            damping = trial.suggest_float("item_damping", 0.1, 500, log=True)
            params = {"item_damping": damping, "user_damping": trial.suggest_int("user_damping", 0, 50)}
            asked.append((trial, params))
        for trial, params in asked:
            if failing and _fails(params):  # as tune records a failed model: its error, the trial failed
                trial.set_user_attr("error", _ERROR)
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            res = evaluate_model(make("biases", **params), fit, validation, ["ndcg@10"], k=10, seed=5)
            study.tell(trial, float(res.summary["ndcg@10"]))
    return study


def _stored(trials: list, *, drop: tuple[str, ...] = ("seconds",)) -> list[tuple]:
    """What a storage holds of each trial, but its times (and the attributes named in ``drop``)."""
    return [
        (
            t.number,
            t.state.name,
            t.params,
            t.values,
            {k: v for k, v in t.user_attrs.items() if k not in drop},
            t.system_attrs,
        )
        for t in trials
    ]


@pytest.mark.parametrize(
    ("sampler", "parallel", "failing"), [("tpe", 1, False), ("tpe", 2, False), ("random", 1, False), ("tpe", 1, True)]
)
def test_trials_and_choice_are_a_bare_optuna_loops(tmp_path, monkeypatch, sampler, parallel, failing):
    cfg = tmp_path / "tune.toml"
    cfg.write_text(_CONFIG.replace("seed = 5", f'seed = 5\nsampler = "{sampler}"\nparallel = {parallel}'))
    real = tune_module.run_trial
    if failing:
        monkeypatch.setattr(
            tune_module, "run_trial", lambda job, parts: (None, 0.5, _ERROR) if _fails(job.params) else real(job, parts)
        )
    report = tune_experiment(cfg, out=tmp_path / "out")
    bare = _bare(cfg, sampler, parallel, failing)
    rows = report.trials[report.trials["study"] == "toy/biases"]
    assert [json.loads(p) for p in rows["params"]] == [t.params for t in bare.trials]
    values = [None if v != v else v for v in rows["value"]]  # a failed trial's value is NaN in the table
    assert values == [t.value for t in bare.trials]  # bit for bit: the same fits on the same parts
    errors = [e if isinstance(e, str) else None for e in rows["error"]]  # no error: None or NaN in the table
    assert errors == [t.user_attrs.get("error") for t in bare.trials]
    failed = sum(t.state == optuna.trial.TrialState.FAIL for t in bare.trials)
    assert report.summary["algorithms"]["toy/biases"]["failed_trials"] == failed and (failed > 0) == failing
    res = report.summary["algorithms"]["toy/biases"]
    assert res["best_params"] == bare.best_params and res["validation"] == bare.best_value
    assert res["chosen"] == f"trial {bare.best_trial.number}"
    # the storage holds the trials Optuna's own calls write: parameters, values, states, the sampler's attributes
    stored = optuna.load_study(study_name=None, storage=f"sqlite:///{tmp_path / 'out' / 'tune.sqlite3'}")
    assert _stored(stored.get_trials()) == _stored(bare.trials)
    assert all(t.user_attrs["seconds"] > 0 for t in stored.get_trials())
    if sampler == "tpe" and not failing:  # past 10 start-up trials TPE shares its draws in system attributes
        assert any(t.system_attrs for t in stored.get_trials())


_GRID = """
metrics = ["ndcg@10"]
[datasets.toy]
generate = { n_users = 80, n_items = 60, n_ratings = 1600, seed = 3 }
[split]
method = "per-user"
[tune]
trials = 50
seed = 5
sampler = "grid"
[recommenders.biases]
space = { item_damping = { choices = [1, 25] }, user_damping = { int = [0, 20], step = 10 } }
"""


def test_an_interrupted_grid_search_resumes_on_its_queued_point_and_visits_each_point_once(tmp_path, monkeypatch):
    cfg = tmp_path / "tune.toml"
    cfg.write_text(_GRID)
    reference = tune_experiment(cfg, out=tmp_path / "reference")
    # stopped while the fourth trial runs: its point is queued for the next run
    resumed = interrupted_then_resumed(monkeypatch, cfg, tmp_path / "out", 4)
    storage = f"sqlite:///{tmp_path / 'out' / 'tune.sqlite3'}"
    trials = optuna.load_study(study_name=None, storage=storage).get_trials()
    assert [(t.number, t.state.name, t.user_attrs.get("interrupted")) for t in trials[3:5]] == [
        (3, "FAIL", True),
        (4, "COMPLETE", None),  # the queued point, run as the trial the interruption left waiting
    ]
    assert trials[4].params == trials[3].params and trials[4].system_attrs["fixed_params"] == trials[3].params
    # Optuna's GridSampler (5.1.0, samplers/_grid.py before_trial) gives the first points by trial
    # number: after the queued point (number 4) comes number 5's point, then the one number 4 had
    # in the uninterrupted run. Each point once, with the same value; the order differs there.
    rows = reference.trials.to_dict("records")
    order = [rows[i] for i in (0, 1, 2, 3, 5, 4)]
    cols = ["params", "value"]
    assert resumed.trials[cols].to_dict("records") == [{c: r[c] for c in cols} for r in order]
    first = optuna.load_study(study_name=None, storage=f"sqlite:///{tmp_path / 'reference' / 'tune.sqlite3'}")
    kept = [t[1:4] for t in _stored(trials[:3] + trials[4:])]
    assert sorted(kept, key=str) == sorted((t[1:4] for t in _stored(first.get_trials())), key=str)
