"""A study's and a run's identity includes its data; one process per output folder; a resumed
tuning run's JSON equals the uninterrupted run's; a damaged tune.json is exit 2 naming the key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

optuna = pytest.importorskip("optuna")

from receval.cli.app import main  # noqa: E402
from receval.data.synthetic import generate  # noqa: E402
from receval.errors import ConfigError  # noqa: E402
from receval.experiment import tune as tune_module  # noqa: E402
from receval.experiment.runner import run_experiment  # noqa: E402
from receval.experiment.tune import tune_experiment  # noqa: E402

_TUNE = """
metrics = ["ndcg@10"]
[datasets.toy]
path = "ratings.csv"
format = "csv"
[split]
method = "per-user"
[tune]
trials = 3
seed = 4
[recommenders.biases]
space = { item_damping = { float = [0.1, 100], log = true } }
"""

_RUN = """
metrics = ["ndcg@10"]
[datasets.toy]
path = "ratings.csv"
format = "csv"
[split]
method = "per-user"
[recommenders.popularity]
"""


def _ratings(folder: Path, seed: int) -> Path:
    path = folder / "ratings.csv"
    generate(80, 60, 1600, seed=seed).to_frame()[["user", "item", "rating"]].to_csv(path, index=False)
    return path


def _setup(tmp_path: Path, text: str, seed: int = 1) -> Path:
    _ratings(tmp_path, seed)
    cfg = tmp_path / "exp.toml"
    cfg.write_text(text)
    return cfg


# ---------------------------------------------------------------- the data is part of the identity
def test_tune_over_a_changed_data_file_runs_new_trials_and_reports_the_new_data(tmp_path):
    cfg = _setup(tmp_path, _TUNE)
    heard: list[int] = []
    old = tune_experiment(cfg, out=tmp_path / "out", on_trial=lambda *a: heard.append(a[1]))
    assert heard == [0, 1, 2]
    _ratings(tmp_path, seed=2)  # the same path, other ratings
    heard.clear()
    again = tune_experiment(cfg, out=tmp_path / "out", on_trial=lambda *a: heard.append(a[1]))
    assert heard == [0, 1, 2]  # a new study: its trials run on the new data
    fresh = tune_experiment(cfg, out=tmp_path / "fresh")
    for key, res in again.summary["algorithms"].items():
        assert res["validation"] == fresh.summary["algorithms"][key]["validation"]
        assert res["validation"] != old.summary["algorithms"][key]["validation"]
    assert again.summary["inputs"] != old.summary["inputs"] and set(again.summary["inputs"]) == {"datasets"}
    # the old study stays in the storage (nothing deleted), beside the new one
    assert len(optuna.study.get_all_study_names(f"sqlite:///{tmp_path / 'out' / 'tune.sqlite3'}")) == 2
    # the same data again: the study is found, no trial runs
    heard.clear()
    tune_experiment(cfg, out=tmp_path / "out", on_trial=lambda *a: heard.append(a[1]))
    assert heard == []


def test_tune_over_a_changed_test_file_starts_new_studies(tmp_path):
    text = _TUNE.replace('[split]\nmethod = "per-user"\n', "").replace("seed = 4", 'seed = 4\ntest_path = "test.csv"')
    cfg = _setup(tmp_path, text)
    generate(80, 60, 300, seed=7).to_frame()[["user", "item", "rating"]].to_csv(tmp_path / "test.csv", index=False)
    first = tune_experiment(cfg, out=tmp_path / "out")
    generate(80, 60, 300, seed=8).to_frame()[["user", "item", "rating"]].to_csv(tmp_path / "test.csv", index=False)
    second = tune_experiment(cfg, out=tmp_path / "out")
    fresh = tune_experiment(cfg, out=tmp_path / "fresh")
    assert second.summary == fresh.summary | {"algorithms": {
        k: v | {"trial_seconds": second.summary["algorithms"][k]["trial_seconds"]}
        for k, v in fresh.summary["algorithms"].items()
    }}  # fmt: skip
    assert second.summary["algorithms"]["toy/biases"]["test"] != first.summary["algorithms"]["toy/biases"]["test"]


def test_run_into_a_store_of_changed_data_is_refused_and_force_replaces_it(tmp_path, capsys):
    cfg = _setup(tmp_path, _RUN)
    out = tmp_path / "out"
    run_experiment(cfg, out=out)
    old = out.joinpath("aggregates.parquet").read_bytes()
    _ratings(tmp_path, seed=2)
    with pytest.raises(ConfigError, match="this configuration over other data: data set 'toy' changed since"):
        run_experiment(cfg, out=out)
    assert out.joinpath("aggregates.parquet").read_bytes() == old  # refused before anything was written
    assert main(["run", str(cfg), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    report = run_experiment(cfg, out=out, force=True)
    assert report.ok == 1 and report.skipped == 0
    fresh = run_experiment(cfg, out=tmp_path / "fresh")
    assert fresh.store.read("aggregates")["value"].tolist() == report.store.read("aggregates")["value"].tolist()
    meta = json.loads((out / "experiment.json").read_text())
    assert set(meta["inputs"]["datasets"]) == {"toy"}


# ---------------------------------------------------------------- one process per folder
_HOLD = """
import sys, time
from receval.experiment.store import folder_lock
with folder_lock(sys.argv[1], "receval tune"):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("command", ["tune", "run"])
def test_a_second_process_on_one_output_folder_is_refused_with_one_line(tmp_path, capsys, command):
    cfg = _setup(tmp_path, _TUNE if command == "tune" else _RUN)
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main([command, str(cfg), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"is in use by receval tune (process {holder.pid}); wait for it to end, or choose another --out" in err
        assert len(err.strip().splitlines()) == 1 and [p.name for p in out.iterdir()] == [".receval.lock"]
    finally:
        holder.kill()
        holder.wait()
    assert main([command, str(cfg), "--out", str(out)]) == 0  # released when its holder died


def test_two_tune_processes_on_one_folder_spend_the_budget_once(tmp_path):
    cfg = _setup(tmp_path, _TUNE.replace("trials = 3", "trials = 6"))
    out = tmp_path / "out"
    run = [sys.executable, "-c", "from receval.cli.app import entry; entry()", "tune", str(cfg), "--out", str(out)]
    procs = [subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 2]), results  # the second either waited its turn out or was refused
    for code, err in results:
        assert "Traceback" not in err
        if code == 2:
            assert "is in use by receval tune (process" in err
    summary = json.loads((out / "tune.json").read_text())
    assert summary["algorithms"]["toy/biases"]["trials"] == 6
    study = optuna.load_study(study_name=None, storage=f"sqlite:///{out / 'tune.sqlite3'}")
    assert len(study.get_trials()) == 6


def interrupted_then_resumed(monkeypatch: pytest.MonkeyPatch, cfg: Path, out: Path, at: int) -> Any:
    """Tune ``cfg`` into ``out``, stopped (Ctrl-C) while its ``at``-th trial runs, then run it again to the end."""
    real, calls = tune_module.run_trial, []

    def interrupted(job, parts):
        calls.append(job)
        if len(calls) == at:
            raise KeyboardInterrupt
        return real(job, parts)

    monkeypatch.setattr(tune_module, "run_trial", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tune_experiment(cfg, out=out)
    monkeypatch.setattr(tune_module, "run_trial", real)
    return tune_experiment(cfg, out=out)


# ---------------------------------------------------------------- a resumed run's JSON
def test_a_resumed_run_chooses_the_same_trial_by_the_same_name(tmp_path, monkeypatch):
    text = _TUNE.replace("trials = 3", "trials = 6\ndefault_candidate = false")
    cfg = _setup(tmp_path, text)
    reference = tune_experiment(cfg, out=tmp_path / "reference")
    best = reference.trials.loc[reference.trials["value"].idxmax(), "trial"]
    resumed = interrupted_then_resumed(monkeypatch, cfg, tmp_path / "out", best)  # stopped before the best trial
    study = optuna.load_study(study_name=None, storage=f"sqlite:///{tmp_path / 'out' / 'tune.sqlite3'}")
    assert len(study.get_trials()) == 7  # the interrupted trial is in Optuna's count
    same_time = {
        k: v | {"trial_seconds": reference.summary["algorithms"][k]["trial_seconds"]}
        for k, v in resumed.summary["algorithms"].items()
    }
    assert resumed.summary | {"algorithms": same_time} == reference.summary
    assert resumed.summary["algorithms"]["toy/biases"]["chosen"] == f"trial {best}"


# ---------------------------------------------------------------- a damaged tune.json
@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("test", None, "algorithms['toy/biases'].test is null, not a number"),
        ("validation", "x", "algorithms['toy/biases'].validation is \"x\", not a number"),
        ("importance", [1, 2], "algorithms['toy/biases'].importance is [1, 2], not an object of numbers"),
        ("trials", 2.5, "algorithms['toy/biases'].trials is 2.5, not a whole number"),
        ("test_metrics", {"ndcg@10": "high"}, 'test_metrics is {"ndcg@10": "high"}, not an object of numbers'),
    ],
)
def test_report_on_a_tune_json_of_wrong_types_is_exit_2_naming_the_file_and_key(tmp_path, capsys, key, value, named):
    cfg = _setup(tmp_path, _TUNE.replace("trials = 3", "trials = 1"))
    out = tmp_path / "out"
    tune_experiment(cfg, out=out)
    summary = json.loads((out / "tune.json").read_text())
    summary["algorithms"]["toy/biases"][key] = value
    (out / "tune.json").write_text(json.dumps(summary))
    assert main(["report", str(out), "--out", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err
    assert "tune.json" in err and named in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "page.html").exists()


def test_identity_hash_is_read_in_blocks_and_covers_a_folder(tmp_path):
    from receval.experiment.ids import content_hash

    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.csv").write_bytes(b"1,1,5\n")
    (folder / "b.csv").write_bytes(b"")
    first = content_hash(folder)
    (folder / "b.csv").rename(folder / "c.csv")
    assert content_hash(folder) != first  # a renamed file changes it
    (folder / "c.csv").rename(folder / "b.csv")
    assert content_hash(folder) == first
    assert content_hash(tmp_path / "missing") is None


# ---------------------------------------------------------------- [tune] checked when parsed
_SPACE = "item_damping = { float = [0.1, 100], log = true }"
_GRID = ("trials = 3", 'trials = 3\nsampler = "grid"')
_PARSE = [
    (((_SPACE, "item_damping = { float = [0.1, inf] }"),), "space", "give two finite numbers (no inf or nan)"),
    (((_SPACE, "item_damping = { float = [nan, 5] }"),), "space", "give two finite numbers (no inf or nan)"),
    (((_SPACE, "item_damping = { float = [0.1, 5], step = nan }"),), "space", "step = nan: give a positive float"),
    (((_SPACE, "item_damping = { float = [0.1, 5], step = inf }"),), "space", "step = inf: give a positive float"),
    ((_GRID, (_SPACE, "item_damping = { float = [0, 1], step = 0.000000000001 }")), "space",
     "grid search over 1e+12 points or more"),
    ((_GRID, (_SPACE, "item_damping = { int = [1, 5000] }, user_damping = { int = [0, 5000] }")), "space",
     "the limit is 1,000,000"),
    ((("trials = 3", 'trials = 3\nstorage = "foo://bar"'),), "storage", "names no database receval can store"),
    ((("trials = 3", 'trials = 3\nstorage = "sqlite:///{tmp}"'),), "storage", "is a folder, not a database file"),
    ((("trials = 3", 'trials = 3\nstorage = "sqlite:///{tmp}/no/study.db"'),), "storage", "that does not exist"),
]  # fmt: skip


@pytest.mark.parametrize(("edits", "key", "words"), _PARSE)
def test_a_bad_tune_space_or_storage_is_exit_2_at_parse_time_naming_its_line(tmp_path, capsys, edits, key, words):
    text = _TUNE.replace('path = "ratings.csv"', 'path = "not-there.csv"')  # found missing only if the data is read
    for old, new in edits:
        text = text.replace(old, new.replace("{tmp}", tmp_path.as_posix()), 1)
    cfg = tmp_path / "exp.toml"
    cfg.write_text(text)
    assert main(["tune", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith(key))
    assert words in err and f"exp.toml, line {line}:" in err, err
    assert "not-there" not in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_sqlite_folder_is_exit_2_at_parse_time(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    cfg = tmp_path / "exp.toml"
    cfg.write_text(_TUNE.replace("trials = 3", f'trials = 3\nstorage = "sqlite:///{locked.as_posix()}/s.db"'))
    assert main(["tune", str(cfg), "--out", str(tmp_path / "out")]) == 2
    assert "is in a folder receval may not write" in capsys.readouterr().err


def test_a_full_disk_while_tuning_is_exit_2_in_one_line(tmp_path, capsys, monkeypatch):
    import sqlite3

    import sqlalchemy.exc

    def full(*args, **kwargs):  # what SQLite says on a full disk, as Optuna's storage passes it on
        try:
            raise sqlalchemy.exc.OperationalError("UPDATE", {}, sqlite3.OperationalError("database or disk is full"))
        except sqlalchemy.exc.OperationalError as err:
            raise optuna.exceptions.StorageInternalError("An exception is raised during the commit.") from err

    monkeypatch.setattr(optuna.storages.RDBStorage, "set_trial_state_values", full)
    cfg = _setup(tmp_path, _TUNE)
    assert main(["tune", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "tune.sqlite3: no space left on the device; free some space or write elsewhere" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "tune.json").exists() and not (tmp_path / "out" / ".receval.lock").exists()
