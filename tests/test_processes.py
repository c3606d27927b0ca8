"""No process outlives the command that started it.

Each command runs in a new session (its own process group, as a shell job or a benchmark
harness starts it); once it has exited, the group must be empty: no pool worker and no
resource tracker of loky or multiprocessing left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from /proc")


def _group(pgid: int) -> list[str]:
    """``pid command`` of every live process whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended while being read
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (name) ": state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(f"{entry.name} {cmdline}")
    return members


def _left_behind(*args: str, cwd: Path) -> list[str]:
    """Run ``receval ARGS`` as the leader of a new process group; what of the group is alive after it exits."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    # output to files, not pipes: reading a pipe to its end would wait for every process holding it
    with open(cwd / "out.txt", "w") as out, open(cwd / "err.txt", "w") as err:
        child = subprocess.Popen(
            [sys.executable, "-m", "receval", *args], cwd=cwd, env=env, start_new_session=True, stdout=out, stderr=err
        )
        try:
            child.wait(timeout=600)
        finally:
            child.kill()
    left = _group(child.pid)
    assert child.returncode == 0, (cwd / "err.txt").read_text()
    assert (cwd / "out.txt").read_text()  # the command did its work
    return left


@pytest.fixture
def sharded_files(tmp_path):
    rng = np.random.default_rng(3)
    truth = pd.DataFrame(
        {
            "user": np.repeat(np.arange(200), 4),
            "item": rng.integers(0, 60, 800),
            "rating": rng.integers(1, 6, 800).astype(float),
        }
    ).drop_duplicates(["user", "item"])
    run = pd.DataFrame({"user": np.repeat(np.arange(200), 10), "item": rng.integers(0, 80, 2000),
                        "score": rng.random(2000)}).drop_duplicates(["user", "item"])  # fmt: skip
    truth.to_parquet(tmp_path / "truth.parquet", row_group_size=50)
    run.to_parquet(tmp_path / "run.parquet", row_group_size=200)
    return tmp_path


def test_sharded_evaluate_with_workers_leaves_no_process(sharded_files):
    args = ("evaluate", "--truth", "truth.parquet", "--recs", "run.parquet", "--metrics", "ndcg@10,recall@5",
            "--shards", "4", "--jobs", "2", "--json")  # fmt: skip
    assert _left_behind(*args, cwd=sharded_files) == []


def test_run_with_local_workers_leaves_no_process(tmp_path):
    (tmp_path / "tiny.toml").write_text(
        'name = "tiny"\nmetrics = ["precision@5"]\nseeds = [0, 1]\n'
        "[datasets.toy]\ngenerate = { n_users = 40, n_items = 30, n_ratings = 600 }\n"
        "[recommenders.popularity]\n[recommenders.random]\n"
    )
    assert _left_behind("run", "tiny.toml", "--out", "results", "--jobs", "2", cwd=tmp_path) == []
    assert (tmp_path / "results").is_dir()


def test_group_listing_sees_a_live_member(tmp_path):
    # the check above could pass by seeing nothing: a sleeping member of a new group is found, then gone
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert [line.split()[0] for line in _group(child.pid)] == [str(child.pid)]
    finally:
        child.kill()
        child.wait()
    assert _group(child.pid) == []
