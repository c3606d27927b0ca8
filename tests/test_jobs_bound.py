"""The one bound on worker counts (``--jobs``/``-j``, ``jobs=``) and worker pools that end with their parent.

``receval tune CONFIG -j 100000`` used to start hundreds of loky workers (~100 MB each) and hang: every
entry point now refuses a count above :func:`receval.validate.jobs_limit` before reading anything, so
these tests start no process for the refused counts (a pool that were started would fail the test).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from receval.cli import main
from receval.errors import ConfigError
from receval.evaluation.sharded import worker_pool
from receval.evaluation.sharded_files import evaluate_parquet_sharded
from receval.experiment.executors import make_executor
from receval.validate import JOBS_CAP, check_command_options, check_jobs, jobs_limit

TOO_MANY = 100_000


@pytest.fixture
def no_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any loky pool started from here fails the test instead of spawning processes."""
    import joblib.externals.loky as loky

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker pool was started for a refused worker count")

    monkeypatch.setattr(loky, "ProcessPoolExecutor", refuse)


def test_the_bound_is_the_cap_or_the_cores() -> None:
    assert jobs_limit() == max(64, os.cpu_count() or 1) and JOBS_CAP == 64
    assert check_jobs(1) == 1 and check_jobs(jobs_limit()) == jobs_limit()
    with pytest.raises(ConfigError, match=rf"^jobs={jobs_limit() + 1}: give at most {jobs_limit()} workers"):
        check_jobs(jobs_limit() + 1)
    for bad in (0, -3, 2.5, True, "4"):
        with pytest.raises(ConfigError, match="give an integer of at least 1"):
            check_jobs(bad)
    with pytest.raises(ConfigError, match=f"^jobs={TOO_MANY}: give at most"):
        check_command_options(jobs=TOO_MANY)


@pytest.mark.usefixtures("no_pools")
def test_library_entry_points_refuse_before_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"^jobs={TOO_MANY}: give at most {jobs_limit()} workers"):
        make_executor("local", jobs=TOO_MANY)
    with pytest.raises(ConfigError, match=f"^jobs={TOO_MANY}: give at most"):
        make_executor("dask", jobs=TOO_MANY, processes=False)
    with pytest.raises(ConfigError, match=f"^jobs={TOO_MANY}: give at most"), worker_pool(TOO_MANY):
        pass  # pragma: no cover - the pool is refused on entering
    # the files do not exist: the count is refused before either is opened
    missing = tmp_path / "none.parquet"
    with pytest.raises(ConfigError, match=f"^jobs={TOO_MANY}: give at most"):
        evaluate_parquet_sharded(missing, missing, ["mrr"], n_shards=2, jobs=TOO_MANY)


@pytest.mark.usefixtures("no_pools")
@pytest.mark.parametrize(
    "args",
    [
        ["tune", "{missing}.toml", "--out", "{out}", "-j", str(TOO_MANY)],
        ["run", "{missing}.toml", "--out", "{out}", "--jobs", str(TOO_MANY)],
        [
            "evaluate",
            "--truth",
            "{missing}.parquet",
            "--recs",
            "{missing}.parquet",
            "--metrics",
            "mrr",
            "--shards",
            "2",
            "-j",
            str(TOO_MANY),
        ],
    ],
)
def test_commands_refuse_in_one_line_exit_2(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    filled = [a.format(missing=tmp_path / "missing", out=tmp_path / "out") for a in args]
    assert main(filled) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --jobs {TOO_MANY}: give at most {jobs_limit()} workers " + (
        f"(max(64, the machine's {os.cpu_count()} cores))"
    )
    assert not (tmp_path / "out").exists()  # nothing written: the configuration was not even read


_ORPHAN = """
import os, sys
sys.path.insert(0, {src!r})
from receval.evaluation.sharded import worker_pool
with worker_pool(1) as pool:
    print(pool.submit(os.getpid).result(), flush=True)
    os.kill(os.getpid(), 9)  # the parent dies without shutting its pool down
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper has ended too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_end_when_the_parent_is_killed() -> None:
    src = str(Path(__file__).resolve().parents[1] / "src")
    code = textwrap.dedent(_ORPHAN.format(src=src))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == -signal.SIGKILL, done.stderr
    worker = int(done.stdout.split()[0])
    deadline = time.monotonic() + 30
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive(worker)
    if alive:  # pragma: no cover - clean up the orphan this test would otherwise leave
        os.kill(worker, signal.SIGKILL)
    assert not alive, "the pool's worker outlived its killed parent"
