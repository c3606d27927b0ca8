"""A result store that survives damage, workers that die with their parent, temporaries cleaned after a kill.

Damage is done to a copy of a finished run (one task's files corrupted, emptied,
truncated or deleted; ``experiment.json`` truncated): ``receval results`` names it and
exits 0, and ``receval run`` resumes to tables byte-identical to the uninterrupted run,
re-running only the damaged task.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from receval.atomic import atomic_write
from receval.cli import main
from receval.errors import ConfigError
from receval.experiment import ResultStore, register_protocol, run_experiment
from receval.experiment.protocols import PROTOCOLS, TaskOutput
from receval.experiment.runner import summarise

GRID = """\
name = "damage"
seeds = [0, 1]
metrics = ["precision@5", "ndcg@5", "rmse"]

[datasets.toy]
generate = {{ n_users = {n_users}, n_items = {n_items}, n_ratings = {n_ratings}, seed = 5 }}

[split]
method = "holdout"
test_fraction = 0.25

[protocol]
name = "one-shot"
k = 5

[recommenders.popularity]
params = {{ threshold = [3, 4] }}
[recommenders.biases]
params = {{ item_damping = [5.0, 25.0] }}
"""
TIMING = ["started", "seconds", "peak_rss_mb", "worker"]


def _config(folder: Path, size: tuple[int, int, int] = (60, 80, 1500)) -> Path:
    path = folder / "grid.toml"
    path.write_text(GRID.format(n_users=size[0], n_items=size[1], n_ratings=size[2]))
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("reference")
    cfg = _config(folder)
    report = run_experiment(cfg, out=folder / "out")
    assert (report.ok, report.failed, report.n_tasks) == (8, 0, 8)
    return cfg, folder / "out"


def _victim(out: Path) -> str:
    """The first task of the biases(item_damping=5.0) configuration (one of its two seeds)."""
    tasks = pd.read_parquet(out / "tasks.parquet")
    mine = tasks[tasks["label"].str.contains("item_damping=5.0")].sort_values("seed")
    return str(mine["task_id"].iloc[0])


def _flip_bytes(path: Path) -> None:
    """Same size, different content: only the checksum can tell."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8] = bytes(b ^ 0xFF for b in data[middle : middle + 8])
    path.write_bytes(bytes(data))


DAMAGE: dict[str, Callable[[Path, str], None]] = {
    "corrupt aggregates part": lambda out, t: _flip_bytes(out / "parts" / f"{t}.aggregates.parquet"),
    "empty task marker": lambda out, t: (out / "parts" / f"{t}.task.parquet").write_bytes(b""),
    "truncated per-user part": lambda out, t: (out / "parts" / f"{t}.per_user.parquet").write_bytes(
        (out / "parts" / f"{t}.per_user.parquet").read_bytes()[:100]
    ),
    "deleted aggregates part": lambda out, t: (out / "parts" / f"{t}.aggregates.parquet").unlink(),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_task_is_named_then_rerun_to_identical_tables(
    reference: tuple[Path, Path], tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, ref = reference
    out = tmp_path / "out"
    shutil.copytree(ref, out)
    victim = _victim(out)
    DAMAGE[damage](out, victim)

    store = ResultStore(out)
    assert set(store.damaged()) == {victim}
    assert victim not in store.finished_ids() and len(store.finished_ids()) == 7
    summary = summarise(store).set_index("label")
    damped = summary.loc[[label for label in summary.index if "item_damping=5.0" in label]]
    assert damped["n"].tolist() == [1]  # one intact seed, not a mean "over 2" of one seed

    capsys.readouterr()
    assert main(["results", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"damaged: {victim}" in printed and "7 ok" in printed

    assert main(["run", str(cfg), "--out", str(out)]) == 0
    after = pd.read_parquet(out / "tasks.parquet").set_index("task_id")
    before = pd.read_parquet(ref / "tasks.parquet").set_index("task_id")
    rerun = after.index[after["started"] != before.loc[after.index, "started"]]
    assert list(rerun) == [victim]  # only the damaged task ran again
    pd.testing.assert_frame_equal(after.drop(columns=TIMING), before.drop(columns=TIMING), check_exact=True)
    for name in ("aggregates", "per_user"):
        assert (out / f"{name}.parquet").read_bytes() == (ref / f"{name}.parquet").read_bytes()
    assert ResultStore(out).damaged() == {}


def test_truncated_experiment_json_is_named_and_rewritten(
    reference: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, ref = reference
    out = tmp_path / "out"
    shutil.copytree(ref, out)
    text = (out / "experiment.json").read_text()
    (out / "experiment.json").write_text(text[: len(text) // 2])

    capsys.readouterr()
    assert main(["results", str(out)]) == 0
    captured = capsys.readouterr()
    assert "experiment.json: damaged experiment description" in captured.err
    assert "8 ok" in captured.out

    assert main(["run", str(cfg), "--out", str(out)]) == 0
    assert "8 skipped" in capsys.readouterr().out  # nothing ran again
    assert (out / "experiment.json").read_text().startswith("{")
    for name in ("aggregates", "per_user"):
        assert (out / f"{name}.parquet").read_bytes() == (ref / f"{name}.parquet").read_bytes()


def test_truncated_experiment_json_of_another_configuration_is_refused(
    reference: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, ref = reference
    out = tmp_path / "out"
    shutil.copytree(ref, out)
    (out / "experiment.json").write_text('{"name": "dam')
    other = tmp_path / "other.toml"
    other.write_text(_config(tmp_path).read_text().replace("seeds = [0, 1]", "seeds = [7]"))
    assert main(["run", str(other), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "experiment.json: damaged experiment description" in err and "another configuration" in err
    assert len(list((out / "parts").glob("*.task.parquet"))) == 8  # nothing touched


# ------------------------------------------------------------------ processes left behind


def _children(pid: int) -> set[int]:
    """Live descendants of ``pid`` (Linux /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
def test_kill_9_of_the_main_process_leaves_no_worker(tmp_path: Path) -> None:
    cfg = _config(tmp_path, size=(1200, 1000, 45_000))  # tasks of about half a second each
    out = tmp_path / "out"
    command = ["run", str(cfg), "--out", str(out), "--jobs", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from receval.cli.app import entry; entry()", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        start_new_session=True,
    )
    workers: set[int] = set()
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            workers |= _children(proc.pid)
            done = list((out / "parts").glob("*.task.parquet")) if (out / "parts").exists() else []
            if len(workers) >= 2 and done:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read().decode()}"
        workers |= _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        assert [p for p in workers if _alive(p)] == [], "workers outlived their killed parent by 10 s"
    finally:
        for pid in workers | {proc.pid}:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.stderr.close()


def test_temporary_of_a_killed_writer_is_removed_by_the_next_write(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from receval.atomic import atomic_write\n"
        "def write(tmp):\n"
        "    tmp.write_text('half a table')\n"
        "    print(tmp.name, flush=True)\n"
        "    time.sleep(600)\n"
        f"atomic_write({str(tmp_path / 'recs.csv')!r}, write)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        name = proc.stdout.readline().strip()
        assert re.fullmatch(rf"\.receval-{proc.pid}-\d+\.tmp", name)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
    assert (tmp_path / name).exists()  # SIGKILL leaves the temporary behind
    other = tmp_path / "other.txt"
    atomic_write(other, lambda p: p.write_text("ok"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]


def test_corrupt_combined_table_is_rebuilt_from_the_parts(
    reference: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, ref = reference
    out = tmp_path / "out"
    shutil.copytree(ref, out)
    _flip_bytes(out / "aggregates.parquet")
    os.utime(out / "aggregates.parquet", (time.time() + 60, time.time() + 60))  # newer than every part
    assert main(["results", str(out)]) == 0
    assert "8 ok" in capsys.readouterr().out
    assert (out / "aggregates.parquet").read_bytes() == (ref / "aggregates.parquet").read_bytes()


# ------------------------------------------------------------------ force removes only what receval wrote
def _finished_store(root: Path, config_hash: str, values: list[float]) -> ResultStore:
    store = ResultStore(root)
    store.open({"name": config_hash, "config_hash": config_hash})
    for n, value in enumerate(values):
        agg = pd.DataFrame({"metric": ["m"], "value": [value]})
        store.write_task(f"{config_hash}{n}", {"status": "ok"}, {"aggregates": agg, "extra_table": agg})
    store.rebuild()
    return store


def test_force_replaces_another_configuration_and_keeps_the_users_files(tmp_path: Path) -> None:
    root = tmp_path / "exp"
    _finished_store(root, "aaa", [0.25, 0.5])
    user_files = {
        root / "my_data.parquet": b"PAR1 the user's data",
        root / "notes.txt": b"my notes",
        root / "parts" / "README": b"mine too",
    }
    for path, content in user_files.items():
        path.write_bytes(content)
    with pytest.raises(ConfigError, match="different configuration") as refused:
        ResultStore(root).open({"name": "b", "config_hash": "bbb"})
    assert "pass force=True" in str(refused.value) and "--force" not in str(refused.value)
    assert refused.value.parameters == ("out", "force")
    store = ResultStore(root)
    store.open({"name": "b", "config_hash": "bbb"}, force=True)
    assert store.finished_ids() == set() and store.meta()["config_hash"] == "bbb"
    assert {path: path.read_bytes() for path in user_files} == user_files
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        "experiment.json", "my_data.parquet", "notes.txt", "parts", "parts/README",
    ]  # fmt: skip
    store.write_task("b0", {"status": "ok"}, {"aggregates": pd.DataFrame({"metric": ["m"], "value": [0.75]})})
    assert store.rebuild() == {"tasks": 1, "aggregates": 1}
    assert (root / "my_data.parquet").read_bytes() == user_files[root / "my_data.parquet"]
    assert not (root / "extra_table.parquet").exists()  # the old configuration's table the new one lacks is gone


def test_a_rebuild_removes_only_tables_it_wrote(tmp_path: Path) -> None:
    root = tmp_path / "exp"
    store = _finished_store(root, "aaa", [0.25])
    (root / "my_data.parquet").write_bytes(b"the user's")
    (store.parts / "aaa0.extra_table.parquet").unlink()
    (store.parts / "aaa0.task.parquet").unlink()
    store.write_task("aaa0", {"status": "ok"}, {"aggregates": pd.DataFrame({"metric": ["m"], "value": [0.5]})})
    assert store.rebuild() == {"tasks": 1, "aggregates": 1}
    assert sorted(p.name for p in root.glob("*.parquet")) == ["aggregates.parquet", "my_data.parquet", "tasks.parquet"]
    assert json.loads((root / "tables.json").read_text()).keys() == {"tasks", "aggregates"}


def test_run_force_into_a_folder_of_the_users_keeps_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "my_data.parquet").write_bytes(b"PAR1 the user's data")
    config = tmp_path / "c.toml"
    config.write_text(
        "[datasets.toy]\ngenerate = { n_users = 20, n_items = 20, n_ratings = 100 }\n"
        '[protocol]\nname = "test-store-constant"\n'
    )

    @register_protocol("test-store-constant", uses_recommenders=False, needs_metrics=False)
    def constant(task, dataset) -> TaskOutput:
        return TaskOutput(aggregates={"ratings": float(dataset.data.n_ratings)})

    try:
        assert main(["run", str(config), "--out", str(folder)]) == 2
        err = capsys.readouterr().err
        assert "not empty" in err and "--force" in err  # the command line shows its own flag
        assert main(["run", str(config), "--out", str(folder), "--force"]) == 0
        assert (folder / "my_data.parquet").read_bytes() == b"PAR1 the user's data"
        assert pd.read_parquet(folder / "aggregates.parquet")["value"].tolist() == [100.0]
        assert main(["run", str(config), "--out", str(folder), "--force"]) == 0  # its own experiment now: resumed
        assert "1 skipped" in capsys.readouterr().out
        assert (folder / "my_data.parquet").read_bytes() == b"PAR1 the user's data"
    finally:
        del PROTOCOLS["test-store-constant"]


# ------------------------------------------------------------------ what a report reads through the store
REPORTED = """\
name = "relative"
seeds = [0]
metrics = ["precision@2"]

[datasets.d]
path = "../data/ratings.csv"
format = "csv"

[split]
method = "holdout"
test_fraction = 0.3

[protocol]
name = "one-shot"
k = 2
threshold = 4

[recommenders.popularity]
"""


def _ratings(path: Path) -> None:
    rows = [f"{u},{i},{1 + (u * 7 + i * 3) % 5}" for u in range(1, 13) for i in range(1, 11) if (u + i) % 3]
    path.parent.mkdir(parents=True)
    path.write_text("user,item,rating\n" + "\n".join(rows) + "\n")


def test_report_reads_the_data_where_the_run_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _ratings(tmp_path / "data" / "ratings.csv")
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "config.toml").write_text(REPORTED)
    monkeypatch.chdir(tmp_path / "exp")
    assert main(["run", "config.toml", "--out", "store"]) == 0
    meta = json.loads((tmp_path / "exp" / "store" / "experiment.json").read_text())
    assert meta["data_paths"] == {"d": str((tmp_path / "data" / "ratings.csv").resolve())}
    assert meta["config"]["datasets"]["d"]["path"] == "../data/ratings.csv"  # the configuration as written
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # ../data/ratings.csv does not exist from here
    capsys.readouterr()
    assert main(["report", str(tmp_path / "exp" / "store"), "--out", "report.html"]) == 0
    html = (elsewhere / "report.html").read_text()
    assert "not available on this machine" not in html
    assert "d: rating distribution, item popularity" in html  # the data set overview was drawn


def test_report_of_a_store_without_the_record_says_where_the_data_was_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ratings(tmp_path / "data" / "ratings.csv")
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "config.toml").write_text(REPORTED)
    monkeypatch.chdir(tmp_path / "exp")
    assert main(["run", "config.toml", "--out", "store"]) == 0
    path = tmp_path / "exp" / "store" / "experiment.json"
    meta = json.loads(path.read_text())
    del meta["data_paths"]  # as an older receval wrote it: the relative path alone
    path.write_text(json.dumps(meta))
    monkeypatch.chdir(tmp_path)  # where ../data/ratings.csv would be another folder
    assert main(["report", str(tmp_path / "exp" / "store"), "--out", "report.html"]) == 0
    html = (tmp_path / "report.html").read_text()
    assert "data file &#x27;../data/ratings.csv&#x27; is not available on this machine" in html


@pytest.mark.parametrize("kind", ["missing", "empty", "other files", "parts without markers"])
def test_report_of_a_folder_that_is_not_a_store_is_one_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    folder = tmp_path / "folder"
    if kind != "missing":
        folder.mkdir()
    if kind == "other files":
        (folder / "notes.txt").write_text("mine")
    if kind == "parts without markers":
        (folder / "parts").mkdir()
        (folder / "parts" / "x.txt").write_text("mine")
    before = sorted(tmp_path.rglob("*"))
    capsys.readouterr()
    assert main(["report", str(folder), "--out", str(tmp_path / "x.html")]) == 2
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert out == "" and len(lines) == 1 and lines[0].startswith(f"error: {folder}: "), err
    assert ("no such folder" if kind == "missing" else "not a result store") in lines[0]
    assert "receval run" in lines[0] and "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before  # no report, no folder


def test_a_store_is_recognised_by_its_description_or_its_task_markers(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s")
    assert not store.is_store()
    store.write_task("t1", {"status": "ok"}, {"aggregates": pd.DataFrame({"metric": ["m"], "value": [1.0]})})
    assert store.is_store() and not store.meta_path.exists()  # experiment.json lost: the markers remain
    (store.parts / "t1.task.parquet").unlink()
    assert not store.is_store()
    described = ResultStore(tmp_path / "d")
    described.open({"name": "a", "config_hash": "h"})
    assert described.is_store()
