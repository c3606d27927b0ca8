"""Inputs that are not plain files: pipes are read once, devices refused, lines bounded, NUL bytes refused.

A reader looks at its input several times (first bytes, header, body, the line of an
error). A named pipe or a process substitution ``<(cat file)`` gives its content once:
read twice, the second open waited forever for a writer (a hang) or found nothing ("the
file is empty"). ``/dev/zero`` was read as a header without end (``MemoryError``), and
a NUL byte inside a TREC qrels id became part of the id.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from receval.data import _source
from receval.data.tables import read_table
from receval.errors import DataError

TRAIN = "user\titem\trating\n1\t10\t5\n1\t11\t3\n2\t10\t4\n2\t12\t5\n3\t11\t4\n3\t12\t2\n"
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="named pipes and /dev are POSIX's")


def _shell(script: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``script`` in bash with ``receval`` as this interpreter's; killed whole (its process group) on a hang."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    receval = f"{sys.executable} -m receval"
    proc = subprocess.Popen(["bash", "-c", script.replace("receval ", receval + " ")], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"hung: {script}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution needs bash")


@needs_bash
def test_a_named_pipe_is_read_once(tmp_path):
    (tmp_path / "train.tsv").write_text(TRAIN)
    os.mkfifo(tmp_path / "in.tsv")
    got = _shell("cat train.tsv > in.tsv & receval recommend --train in.tsv -a popularity --k 2 -o recs.tsv", tmp_path)
    assert got.returncode == 0, got.stderr
    direct = _shell("receval recommend --train train.tsv -a popularity --k 2 -o direct.tsv", tmp_path)
    assert direct.returncode == 0, direct.stderr
    assert (tmp_path / "recs.tsv").read_text() == (tmp_path / "direct.tsv").read_text()


@needs_bash
def test_process_substitution_reads_like_the_file(tmp_path):
    (tmp_path / "train.tsv").write_text(TRAIN)
    (tmp_path / "recs.tsv").write_text("user\titem\tscore\n1\t10\t0.9\n2\t12\t0.8\n3\t12\t0.7\n")
    args = "--metrics ndcg@2,precision@1 --threshold 4 --json"
    piped = _shell(f"receval evaluate --truth <(cat train.tsv) --recs <(gzip -c recs.tsv) {args}", tmp_path)
    assert piped.returncode == 0, piped.stderr  # was: "line 1: the ratings file is empty"
    plain = _shell(f"receval evaluate --truth train.tsv --recs recs.tsv {args}", tmp_path)
    assert piped.stdout == plain.stdout and '"precision@1": 0.6666' in plain.stdout


def test_a_pipe_read_by_a_reader_in_this_process(tmp_path):
    fifo = tmp_path / "truth.csv"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"printf 'user,item,rating\\n1,a,4\\n2,b,5\\n' > '{fifo}'"])
    tables: list = []
    # a second open of the pipe would wait for a writer for ever: read in a thread the test can give up on
    reader = threading.Thread(target=lambda: tables.extend([read_table(fifo, "truth"), read_table(fifo, "truth")]),
                              daemon=True)  # fmt: skip
    reader.start()
    reader.join(timeout=60)
    writer.kill()
    assert not reader.is_alive(), "the reader waited for the pipe to be written again"
    assert tables[1].equals(tables[0])  # the copy read again
    assert tables[0]["item"].astype(str).tolist() == ["a", "b"]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_not_read_without_end(tmp_path, capsys):
    with pytest.raises(DataError, match=r"^/dev/zero: is a character device, not a file or a pipe"):
        read_table("/dev/zero", "truth", format="tsv")
    from receval.cli import main

    (tmp_path / "recs.tsv").write_text("user\titem\tscore\n1\t12\t0.9\n")
    code = main(["evaluate", "--truth", "/dev/zero", "--recs", str(tmp_path / "recs.tsv"), "--metrics", "ndcg@2"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [
        "error: /dev/zero: is a character device, not a file or a pipe; give a file (or a pipe: <(command))"
    ]


def test_a_line_without_end_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(_source, "MAX_LINE", 4096)
    # z.tsv: a header without end; a.csv: a long line found when the slow scan names the bad rating below it
    for name, body in (("z.tsv", b"\0" * 20_000), ("a.csv", b"user,item,rating\n1," + b"x" * 20_000 + b",high\n")):
        (tmp_path / name).write_bytes(body)
        line = 1 if name == "z.tsv" else 2
        with pytest.raises(DataError, match=rf"{name}, line {line}: the line is longer than 4,096 bytes"):
            read_table(tmp_path / name, "truth", format="tsv" if name == "z.tsv" else None, header=True)


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("q.qrels", "1 0 d1 1\n1 0 d\x002 0\n", 2),  # one space: the delimited reader
        ("w.qrels", "1 0 d1  1\n1 0 d\x002 0\n", 2),  # runs of spaces: the white-space reader
        ("c.qrels", "# comment\n1 0 d1 1\n1 0 d\x002 0\n", 3),  # comments: the line-by-line reader
        ("r.trec", "1 Q0 d1 1 0.9 t\n1\x00 Q0 d2 2 0.5 t\n", 2),
        ("t.csv", "user,item,rating\n1,a,4\n2,b\x00,5\n", 3),
    ],
)
def test_a_nul_byte_in_an_id_is_refused_with_its_line(tmp_path, name, text, line):
    (tmp_path / name).write_text(text)
    kind = "recommendations" if name.endswith(".trec") else "truth"
    with pytest.raises(DataError, match=rf"{name}, line {line}, column (user|item): \w+ id '.*' holds a NUL byte"):
        read_table(tmp_path / name, kind, format="trec" if name.endswith(("qrels", "trec")) else None)


@needs_bash
def test_a_data_set_format_reads_its_ratings_file_from_a_pipe(tmp_path):
    (tmp_path / "u.data").write_text("1\t10\t5\t881250949\n1\t11\t3\t881250950\n2\t10\t4\t881250951\n")
    got = _shell("receval data stats <(cat u.data) --format movielens-100k --json", tmp_path)
    assert got.returncode == 0, got.stderr  # was: the pipe taken for a folder without u.data
    assert '"n_ratings": 3' in got.stdout


def test_a_new_pipe_in_the_place_of_an_old_one_is_read_anew(tmp_path):
    fifo = tmp_path / "truth.csv"
    items: list[list[str]] = []

    def read_two_pipes() -> None:
        for item in ("a", "b"):  # the second pipe may get the first one's freed inode number
            fifo.unlink(missing_ok=True)
            os.mkfifo(fifo)
            writer = subprocess.Popen(["sh", "-c", f"printf 'user,item,rating\\n1,{item},4\\n' > '{fifo}'"])
            items.append(read_table(fifo, "truth")["item"].astype(str).tolist())
            items.append(read_table(fifo, "truth")["item"].astype(str).tolist())  # the copy, not a second open
            writer.wait(timeout=30)

    reader = threading.Thread(target=read_two_pipes, daemon=True)
    reader.start()
    reader.join(timeout=60)
    assert not reader.is_alive(), "the reader waited for a pipe to be written again"
    assert items == [["a"], ["a"], ["b"], ["b"]]  # not the first pipe's content
