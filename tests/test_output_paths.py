"""Output paths are checked before any work: a bad one is one `error:` line naming the option and the path.

Every command that writes is run with a bad output path and with inputs that do not
exist: the output error comes first (before any reading or computing), exit status 2,
no traceback, nothing written.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path

import pytest

from receval.atomic import atomic_write, publish
from receval.cli import main
from receval.errors import ConfigError
from receval.outputs import check_output_dir, check_output_file

# (command line before the output option, the output option, kind); INPUT is a file that does not exist
_FILE_OUTPUTS = [
    (["evaluate", "--truth", "INPUT", "--recs", "INPUT", "--metrics", "ndcg@10"], "--per-user"),
    (["recommend", "--train", "INPUT", "--algorithm", "popularity"], "--out"),
    (["predict", "--train", "INPUT", "--test", "INPUT", "--algorithm", "item-knn"], "--out"),
    (["report", "INPUT"], "--out"),
    (["compare", "a=INPUT", "b=INPUT", "--truth", "INPUT", "--metrics", "ndcg@10"], "--report"),
]
_DIR_OUTPUTS = [
    (["simulate", "--data", "INPUT", "--format", "tsv"], "--out"),
    (["metaeval", "--data", "INPUT", "--format", "tsv"], "--out"),
    (["demo"], "--out"),
    (["run", "INPUT"], "--out"),
    (["report", "INPUT"], "--latex"),
    (["report", "INPUT"], "--figures"),
    (["debias", "--data", "INPUT", "--format", "cm100k"], "--out"),
    (["split", "INPUT", "--format", "tsv"], "--out"),
    (["coherence-split", "--data", "INPUT", "--format", "tsv"], "--out"),
]


def _run(capsys, tmp_path: Path, args: list[str], option: str, output: Path) -> tuple[int, str]:
    before = sorted(tmp_path.rglob("*"))
    line = [a.replace("INPUT", str(tmp_path / "missing" / "ratings.tsv")) for a in args]
    code = main([*line, option, str(output)])
    out, err = capsys.readouterr()
    assert out == ""
    assert sorted(tmp_path.rglob("*")) == before, "something was written"
    return code, err


def _assert_one_error(code: int, err: str, option: str, output: Path, what: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert f"{option} {output}" in lines[0] and what in lines[0], lines[0]


@pytest.mark.parametrize(("args", "option"), _FILE_OUTPUTS, ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_file_output_in_a_missing_folder_or_naming_a_folder(capsys, tmp_path, args, option):
    missing = tmp_path / "nosuchdir" / "x.csv"
    code, err = _run(capsys, tmp_path, args, option, missing)
    _assert_one_error(code, err, option, missing, f"the folder {missing.parent} does not exist")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    code, err = _run(capsys, tmp_path, args, option, folder)
    _assert_one_error(code, err, option, folder, "is a folder, but a file is meant")
    (tmp_path / "plain.txt").write_text("x")
    under_file = tmp_path / "plain.txt" / "x.csv"
    code, err = _run(capsys, tmp_path, args, option, under_file)
    _assert_one_error(code, err, option, under_file, "plain.txt is a file, not a folder")


@pytest.mark.parametrize(("args", "option"), _DIR_OUTPUTS, ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_folder_output_naming_an_existing_file_or_under_one(capsys, tmp_path, args, option):
    existing = tmp_path / "results.csv"
    existing.write_text("x")
    code, err = _run(capsys, tmp_path, args, option, existing)
    _assert_one_error(code, err, option, existing, "is a file, but a folder is meant")
    under_file = existing / "deeper" / "out"
    code, err = _run(capsys, tmp_path, args, option, under_file)
    _assert_one_error(code, err, option, under_file, "results.csv is a file, so no folder can be made under it")


def test_the_checks_accept_what_can_be_written(tmp_path):
    (tmp_path / "old.csv").write_text("x")
    assert check_output_file(tmp_path / "old.csv", "--out") == tmp_path / "old.csv"  # replaced when written
    assert check_output_file(tmp_path / "new.csv", "--out") == tmp_path / "new.csv"
    assert check_output_dir(tmp_path, "--out") == tmp_path
    assert check_output_dir(tmp_path / "a" / "b" / "c", "--out") == tmp_path / "a" / "b" / "c"  # created by the command
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.csv"]  # the checks write nothing


def test_a_folder_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("receval.outputs.os.access", lambda path, mode: Path(path) != tmp_path)  # as a locked folder
    with pytest.raises(ConfigError, match=r"--out .*/x\.csv: the folder .* cannot be written; choose another place"):
        check_output_file(tmp_path / "x.csv", "--out")
    with pytest.raises(ConfigError, match=r"--latex .*/tables/t: the folder .* cannot be written"):
        check_output_dir(tmp_path / "tables" / "t", "--latex")
    (tmp_path / "open").mkdir()
    assert check_output_file(tmp_path / "open" / "x.csv", "--out") == tmp_path / "open" / "x.csv"


def test_run_checks_the_configurations_output_folder_before_any_task(capsys, tmp_path):
    taken = tmp_path / "taken.txt"
    taken.write_text("x")
    config = tmp_path / "c.toml"
    config.write_text(
        f'name = "c"\nseeds = [0]\nmetrics = ["precision@5"]\noutput = "{taken}"\n'
        "[datasets.toy]\ngenerate = { n_users = 30, n_items = 40, n_ratings = 400, seed = 5 }\n"
        '[split]\nmethod = "holdout"\ntest_fraction = 0.25\n[protocol]\nname = "one-shot"\nk = 5\n'
        "[recommenders.popularity]\n"
    )
    before = sorted(tmp_path.rglob("*"))
    code = main(["run", str(config)])
    _, err = capsys.readouterr()
    _assert_one_error(code, err, f"{config}: output", taken, "is a file, but a folder is meant")
    assert sorted(tmp_path.rglob("*")) == before


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(("args", "option"), _FILE_OUTPUTS, ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_file_output_that_is_a_named_pipe_is_refused_and_kept(capsys, tmp_path, args, option):
    fifo = _fifo(tmp_path / "out.tsv")  # the atomic rename would have replaced it with a plain file
    code, err = _run(capsys, tmp_path, args, option, fifo)
    _assert_one_error(code, err, option, fifo, "is a named pipe, not a file")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize(("args", "option"), _DIR_OUTPUTS, ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_folder_output_that_is_a_named_pipe_is_refused(capsys, tmp_path, args, option):
    fifo = _fifo(tmp_path / "results")
    code, err = _run(capsys, tmp_path, args, option, fifo)
    _assert_one_error(code, err, option, fifo, "is a named pipe, but a folder is meant")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(sys.platform != "linux", reason="/dev/full and /proc are Linux's")
def test_devices_sockets_and_links_to_them_are_no_file_outputs(tmp_path):
    # the checks only look: /dev/null is never opened, let alone written
    with pytest.raises(ConfigError, match=r"--out /dev/null: is a character device, not a file; writing would"):
        check_output_file(Path("/dev/null"), "--out")
    with pytest.raises(ConfigError, match=r"--report /dev/full: is a character device"):
        check_output_file("/dev/full", "--report")
    with pytest.raises(ConfigError, match=r"--out /dev/null: is a character device, but a folder is meant"):
        check_output_dir("/dev/null", "--out")
    (tmp_path / "null.tsv").symlink_to("/dev/null")  # the rename would replace the link, not write the device
    with pytest.raises(ConfigError, match=r"null\.tsv: is a character device"):
        check_output_file(tmp_path / "null.tsv", "--out")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s.tsv"))
        with pytest.raises(ConfigError, match=r"s\.tsv: is a socket, not a file"):
            check_output_file(tmp_path / "s.tsv", "--per-user")
    assert check_output_file(tmp_path / "dangling.tsv", "--out")  # a new name is fine


@pytest.mark.skipif(sys.platform != "linux", reason="/dev/full and /proc are Linux's")
def test_a_folder_the_file_system_refuses_is_refused_before_the_work(capsys, tmp_path):
    # root passes the permission bits of /proc; creating a file there fails, and is tried first
    with pytest.raises(ConfigError, match=r"--out /proc/x\.html: the folder /proc cannot be written"):
        check_output_file("/proc/x.html", "--out")
    with pytest.raises(ConfigError, match=r"--out /proc/x: the folder /proc cannot be written"):
        check_output_dir("/proc/x", "--out")
    (tmp_path / "r.tsv").write_text("user\titem\trating\n1\t1\t5\n")
    code = main(["split", str(tmp_path / "r.tsv"), "--out", "/proc/receval-split"])
    _, err = capsys.readouterr()
    _assert_one_error(code, err, "--out", Path("/proc/receval-split"), "the folder /proc cannot be written")


def test_the_writers_refuse_a_target_that_is_not_a_regular_file(tmp_path):
    fifo = _fifo(tmp_path / "recs.tsv")
    with pytest.raises(ConfigError, match=r"recs\.tsv: exists and is not a regular file"):
        atomic_write(fifo, lambda p: p.write_text("x"))
    with pytest.raises(ConfigError, match=r"recs\.tsv: exists and is not a regular file"), publish(tmp_path) as pub:
        pub.path(fifo).write_text("x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recs.tsv"]  # no temporary left


def test_split_into_a_folder_holding_a_named_pipe_replaces_nothing(capsys, tmp_path):
    data = tmp_path / "r.tsv"
    data.write_text(
        "user\titem\trating\n" + "".join(f"{u}\t{i}\t{1 + (u + i) % 5}\n" for u in range(6) for i in range(8))
    )
    out = tmp_path / "split"
    out.mkdir()
    fifo = _fifo(out / "train.tsv")
    code = main(["split", str(data), "--method", "holdout", "--seed", "1", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2 and "train.tsv: exists and is not a regular file" in err, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and sorted(p.name for p in out.iterdir()) == ["train.tsv"]
