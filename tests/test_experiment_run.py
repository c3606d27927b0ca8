"""Running grids: identical results on every executor, resume after SIGKILL, failures recorded, bad input refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval.cli import main
from receval.errors import ConfigError
from receval.experiment import ResultStore, register_protocol, run_experiment
from receval.experiment.protocols import PROTOCOLS, TaskOutput

GRID = """\
name = "small"
seeds = [0, 1]
metrics = ["precision@5", "ndcg@5", "recall@5(agg=micro)", "rmse"]

[datasets.toy]
generate = {{ n_users = {n_users}, n_items = {n_items}, n_ratings = {n_ratings}, seed = 5 }}

[split]
method = "holdout"
test_fraction = 0.25

[protocol]
name = "one-shot"
k = 5

[recommenders.random]
[recommenders.popularity]
params = {{ threshold = [3, 4] }}
[recommenders.biases]
params = {{ item_damping = [5.0, 25.0] }}
"""
TIMING = ["started", "seconds", "peak_rss_mb", "worker"]


def _config(tmp_path: Path, name: str = "grid.toml", size: tuple[int, int, int] = (60, 80, 1500)) -> Path:
    path = tmp_path / name
    path.write_text(GRID.format(n_users=size[0], n_items=size[1], n_ratings=size[2]))
    return path


def _results(root: Path) -> dict[str, pd.DataFrame]:
    out = {name: pd.read_parquet(root / f"{name}.parquet") for name in ("aggregates", "per_user")}
    out["tasks"] = pd.read_parquet(root / "tasks.parquet").drop(columns=TIMING)
    return out


def _assert_same(a: Path, b: Path) -> None:
    ra, rb = _results(a), _results(b)
    for name in ra:
        pd.testing.assert_frame_equal(ra[name], rb[name], check_exact=True)
    for name in ("aggregates", "per_user"):  # the files themselves are byte-identical
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ref")
    report = run_experiment(_config(tmp), out=tmp / "out")
    assert (report.ok, report.failed, report.n_tasks) == (10, 0, 10)
    return tmp / "out"


def test_reference_run_has_one_row_per_task_and_metric(reference: Path) -> None:
    res = _results(reference)
    assert len(res["tasks"]) == 10 and res["tasks"]["task_id"].is_unique
    assert len(res["aggregates"]) == 10 * 4
    assert set(res["tasks"]["status"]) == {"ok"}
    rmse = res["aggregates"].merge(res["tasks"], on="task_id").query("metric == 'rmse'")
    assert rmse.loc[rmse["algorithm"] == "random", "value"].isna().all()  # a pure ranker has no RMSE
    assert rmse.loc[rmse["algorithm"] == "biases", "value"].between(0.5, 2).all()
    per_user = res["per_user"].merge(res["tasks"][["task_id", "algorithm"]], on="task_id")
    ndcg = per_user.query("metric == 'ndcg@5'").groupby("task_id")["value"].mean()
    agg = res["aggregates"].query("metric == 'ndcg@5'").set_index("task_id")["value"]
    np.testing.assert_allclose(ndcg.sort_index(), agg.sort_index(), rtol=1e-12)  # macro = mean of per-user


def test_local_processes_give_identical_files(reference: Path, tmp_path: Path) -> None:
    report = run_experiment(_config(tmp_path), out=tmp_path / "out", jobs=2)
    assert report.ok == 10
    _assert_same(reference, tmp_path / "out")
    assert pd.read_parquet(tmp_path / "out" / "tasks.parquet")["worker"].nunique() >= 1


def test_dask_local_cluster_and_address_give_identical_files(reference: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    report = run_experiment(_config(tmp_path), out=tmp_path / "a", executor="dask", jobs=1, processes=False)
    assert report.ok == 10
    _assert_same(reference, tmp_path / "a")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl:
        report = run_experiment(_config(tmp_path), out=tmp_path / "b", executor="dask", scheduler=cl.scheduler_address)
    assert report.ok == 10
    _assert_same(reference, tmp_path / "b")


@pytest.mark.slow
def test_ray_local_instance_gives_identical_files(reference: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    report = run_experiment(_config(tmp_path), out=tmp_path / "out", executor="ray", jobs=1)
    assert report.ok == 10
    _assert_same(reference, tmp_path / "out")


def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path: Path) -> None:
    cfg = _config(tmp_path, size=(1200, 1000, 45_000))  # tasks of about half a second each
    reference = tmp_path / "reference"
    assert run_experiment(cfg, out=reference).ok == 10
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from receval.cli.app import entry; entry()", "run", str(cfg), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            done = list((out / "parts").glob("*.task.parquet")) if (out / "parts").exists() else []
            if len(done) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read().decode()}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    finished_before = {p.name.split(".")[0] for p in (out / "parts").glob("*.task.parquet")}
    assert 2 <= len(finished_before) < 10
    assert main(["run", str(cfg), "--out", str(out)]) == 0
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert tasks["task_id"].is_unique and len(tasks) == 10
    started = pd.to_datetime(tasks.set_index("task_id")["started"])
    first_run_end = started[sorted(finished_before)].max()
    rerun = set(tasks["task_id"]) - finished_before
    assert (started[sorted(rerun)] > first_run_end).all()  # finished tasks were not run again
    _assert_same(reference, out)
    assert not list(out.rglob(".receval-*.tmp"))  # the killed run's partial files are gone


@pytest.fixture
def flaky_protocol():
    @register_protocol("test-flaky", options={"fail_seed": (int, 1)}, uses_recommenders=False, needs_metrics=False)
    def flaky(task, dataset) -> TaskOutput:
        if task.seed == task.options["fail_seed"]:
            raise RuntimeError(f"seed {task.seed} is cursed")
        return TaskOutput(aggregates={"n": float(dataset.data.n_ratings + task.seed)})

    yield flaky
    del PROTOCOLS["test-flaky"]


def test_a_failing_task_is_recorded_and_retried(tmp_path: Path, flaky_protocol) -> None:
    text = """
seeds = [0, 1, 2]
[datasets.toy]
generate = { n_users = 20, n_items = 20, n_ratings = 100 }
[protocol]
name = "test-flaky"
"""
    (tmp_path / "c.toml").write_text(text)
    report = run_experiment(tmp_path / "c.toml", out=tmp_path / "out")
    assert (report.ok, report.failed) == (2, 1)
    tasks = pd.read_parquet(tmp_path / "out" / "tasks.parquet")
    failed = tasks[tasks["status"] == "failed"].iloc[0]
    assert failed["seed"] == 1 and "cursed" in failed["error"] and "RuntimeError" in failed["traceback"]
    assert sorted(pd.read_parquet(tmp_path / "out" / "aggregates.parquet")["value"]) == [100.0, 102.0]
    again = run_experiment(tmp_path / "c.toml", out=tmp_path / "out")  # only the failed task runs again
    assert (again.skipped, again.ok, again.failed) == (2, 0, 1)
    assert len(pd.read_parquet(tmp_path / "out" / "tasks.parquet")) == 3


def test_cli_refuses_bad_input_before_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path)
    bad = _config(tmp_path, name="bad.toml")
    bad.write_text(bad.read_text().replace("seeds = [0, 1]", "seeds = [0, 1]\nsed = 3"))
    assert main(["run", str(bad), "--out", str(tmp_path / "x")]) == 2
    assert "line 3: unknown key 'sed'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    # a different config's results
    other = _config(tmp_path, name="other.toml")
    other.write_text(other.read_text().replace("seeds = [0, 1]", "seeds = [0]"))
    store = ResultStore(tmp_path / "busy")
    store.open({"name": "other", "config_hash": "0123"})
    assert main(["run", str(cfg), "--out", str(tmp_path / "busy")]) == 2
    assert "different configuration" in capsys.readouterr().err
    # an unreachable scheduler: refused before the store is touched
    assert (
        main(["run", str(cfg), "--out", str(tmp_path / "y"), "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"])
        == 2
    )
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()
    with pytest.raises(ConfigError, match="unknown executor"):
        run_experiment(cfg, out=tmp_path / "z", executor="spark")


def test_cli_run_and_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path)
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quick"]) == 0
    out = capsys.readouterr().out
    assert "10 ok, 0 failed" in out and "mean ± std over seeds" in out
    assert main(["run", str(cfg), "--out", str(tmp_path / "o")]) == 0
    assert "10 skipped" in capsys.readouterr().out
    assert main(["results", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "10 ok, 0 failed" in out and "toy/biases(item_damping=25.0)" in out


def test_compare_configurations_with_paired_tests(reference: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from receval.experiment.runner import compare
    from receval.stats.significance import paired_ttest

    res = compare(ResultStore(reference), "ndcg@5", baseline="random()")
    assert len(res) == 4 and set(res["b"]) == {"random()"} and res["pvalue_adj"].notna().all()
    # recompute one pair by hand from the stored per-user values
    tasks = pd.read_parquet(reference / "tasks.parquet")
    per_user = pd.read_parquet(reference / "per_user.parquet").merge(tasks[["task_id", "label"]], on="task_id")
    per_user = per_user[per_user["metric"] == "ndcg@5"]
    per_user["system"] = per_user["label"].str.replace(r"^toy/| seed=\d+$", "", regex=True)
    wide = per_user.groupby(["user_index", "system"])["value"].mean().unstack().dropna()
    row = res.set_index("a").loc["popularity(threshold=4)"]
    expected = paired_ttest(wide["popularity(threshold=4)"], wide["random()"])
    assert row["n"] == len(wide) and row["pvalue"] == pytest.approx(expected.pvalue)
    assert main(["results", str(reference), "--compare", "ndcg@5", "--baseline", "random()", "--test", "wilcoxon"]) == 0
    assert "paired wilcoxon" in capsys.readouterr().out


def test_results_compare_takes_a_metric_list(reference: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from receval.experiment.runner import compare

    metrics = ["ndcg@5", "precision@5", "recall@5(agg=micro)"]  # every configuration has them (not rmse)
    both = compare(ResultStore(reference), ",".join(metrics), baseline="random()")
    for metric in metrics:  # each metric compared as when asked alone, its correction within itself
        alone = compare(ResultStore(reference), metric, baseline="random()")
        got = both[both["metric"] == metric].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, alone.reset_index(drop=True))
    assert main(["results", str(reference), "--compare", ",".join(metrics), "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    column = doc["compare"]["columns"].index("metric")
    assert {row[column] for row in doc["compare"]["rows"]} == set(metrics)
    assert main(["results", str(reference), "--compare", f"{metrics[0]},nosuch@5"]) == 2
    err = capsys.readouterr().err
    assert "no per-user values of metric 'nosuch@5'" in err and "it has: ndcg@5, precision@5, " in err
