"""``./dev CMD ARGS`` run from another folder: relative paths in ARGS mean the caller's folder.

The script installs receval into ``.venv`` when its stamp does not match ``pyproject.toml``;
these tests run it only when the environment is already set up (no network at test time).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "dev"


def _set_up() -> bool:
    stamp = ROOT / ".venv" / ".receval-installed"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    return stamp.is_file() and stamp.read_text().strip() == want


pytestmark = pytest.mark.skipif(not _set_up(), reason="./dev has not set up .venv for this pyproject.toml")


def _dev(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run([str(DEV), *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300, check=False)


def test_receval_command_reads_and_writes_relative_to_the_caller(tmp_path: Path) -> None:
    (tmp_path / "split").mkdir()
    (tmp_path / "split" / "test.tsv").write_text("user\titem\trating\n1\t1\t5\n1\t2\t4\n2\t1\t5\n")
    (tmp_path / "run.tsv").write_text("user\titem\tscore\trank\n1\t1\t0.9\t1\n1\t3\t0.5\t2\n2\t2\t0.9\t1\n")
    res = _dev(
        tmp_path, "evaluate", "--truth", "split/test.tsv", "--recs", "run.tsv", "--metrics", "precision@1",
        "--threshold", "4", "--per-user", "per_user.tsv", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    # user 1's first item is rated 5 (relevant at λ = 4), user 2's is unrated: P@1 = (1 + 0) / 2
    assert json.loads(res.stdout)["precision@1"] == 0.5
    assert (tmp_path / "per_user.tsv").read_text().splitlines() == ["user\tprecision@1", "1\t1.0", "2\t0.0"]
    assert not (ROOT / "per_user.tsv").exists()


def test_test_command_runs_the_callers_test_file(tmp_path: Path) -> None:
    tests = "def test_passes():\n    assert 1 + 1 == 2\n\n\ndef test_fails():\n    assert False\n"
    (tmp_path / "test_mine.py").write_text(tests)
    selected = _dev(tmp_path, "test", "test_mine.py::test_passes")
    assert selected.returncode == 0, selected.stdout[-2000:]
    assert "1 passed" in selected.stdout
    whole = _dev(tmp_path, "test", "test_mine.py")
    assert whole.returncode == 1 and "1 failed, 1 passed" in whole.stdout, whole.stdout[-2000:]
