"""Operating-system errors end in one line naming the path, the cause and a fix, status 2.

A full disk (a real tiny tmpfs where this process may mount one, else skipped; and fault
injection everywhere), a full or closed stdout, a reader that went away, a read-only
folder, a refused permission, a name too long. Every case runs the command as a user
does when the stream matters (``python -m receval`` in its own process); no traceback,
no output left behind.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import receval.atomic
from receval.cli import main
from receval.cli.app import flag_spelling
from receval.errors import ConfigError, describe_os_error

ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
CONFIG = """name = "tiny"
seeds = 1
metrics = ["ndcg@10"]

[datasets.toy]
generate = { n_users = 40, n_items = 30, n_ratings = 600 }

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 10

[recommenders.pop]
algorithm = "popularity"
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """600 users x 10 ratings (every output written from it is larger than the tiny disk), a run, a config."""
    d = tmp_path_factory.mktemp("os-errors")
    rng = np.random.default_rng(0)
    rows = [(u, int(i), int(rng.integers(1, 6))) for u in range(600) for i in rng.choice(50, 10, replace=False)]
    data = pd.DataFrame(rows, columns=["user", "item", "rating"])
    out = {"data": d / "data.csv", "truth": d / "truth.csv", "recs": d / "recs.csv", "config": d / "exp.toml"}
    data.to_csv(out["data"], index=False)
    truth = data.iloc[::3]
    truth.to_csv(out["truth"], index=False)
    truth[["user", "item"]].assign(score=rng.random(len(truth))).to_csv(out["recs"], index=False)
    out["config"].write_text(CONFIG, encoding="utf-8")
    out["results"] = d / "results"
    assert main(["run", str(out["config"]), "--out", str(out["results"])]) == 0
    return out


def run_cli(*args: object, cwd: Path | None = None, **popen: object) -> subprocess.CompletedProcess:
    """``python -m receval ARGS`` in its own process, text captured (unless ``popen`` redirects stdout)."""
    popen.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "receval", *map(str, args)],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=cwd,
        timeout=300,
        check=False,
        **popen,  # type: ignore[arg-type]
    )


def shell(command: str, *args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m receval ARGS`` followed by ``command`` (a redirection such as ``>&-``) through bash."""
    line = " ".join(map(_quote, [sys.executable, "-m", "receval", *map(str, args)])) + " " + command
    return subprocess.run(
        ["bash", "-c", line], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300, check=False
    )


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def one_error(stderr: str, status: int, *fragments: str) -> str:
    """Assert status 2 and exactly one ``error:`` line on stderr holding every fragment; that line."""
    lines = stderr.strip().splitlines()
    assert status == 2, stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    """Every file under ``folder`` (a failed command must leave none: no half-written output, no temporary)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


# ------------------------------------------------------------------ a full disk
@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 kB tmpfs: writes beyond it fail with ENOSPC, as on a full disk. Skipped where mounting is not allowed."""
    if shutil.which("mount") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    point = tmp_path / "full"
    point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(point)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=False)


def _writing(name: str, f: dict[str, Path], full: Path) -> tuple[list[object], Path]:
    """The command ``name`` with its output on the full disk; the path its error must name."""
    return {
        "recommend": (
            ["recommend", "--train", f["data"], "--algorithm", "popularity", "--k", "20", "--out", full / "recs.tsv"],
            full / "recs.tsv",
        ),
        "evaluate --per-user": (
            [
                "evaluate",
                "--truth",
                f["truth"],
                "--recs",
                f["recs"],
                "--metrics",
                "ndcg@10,mrr",
                "--per-user",
                full / "u.tsv",
            ],
            full / "u.tsv",
        ),
        "split": (["split", f["data"], "--format", "csv", "--out", full / "split"], full / "split"),
        "demo": (
            ["demo", "--users", "60", "--items", "80", "--ratings", "1500", "--rounds", "2", "--out", full / "demo"],
            full / "demo",
        ),
        "run": (["run", f["config"], "--out", full / "results"], full / "results"),
        "report": (["report", f["results"], "--no-data", "--out", full / "report.html"], full / "report.html"),
    }[name]


@pytest.mark.parametrize("command", ["recommend", "evaluate --per-user", "split", "demo", "run", "report"])
def test_full_disk_is_one_line_naming_the_output(files, full_disk: Path, command: str) -> None:
    args, named = _writing(command, files, full_disk)
    proc = run_cli(*args)
    one_error(proc.stderr, proc.returncode, f"error: {named}", ": no space left on the device; free some space")
    left = leftovers(full_disk)
    if command == "run":  # a store keeps what it finished (whole files), to resume; never a temporary
        assert not [name for name in left if Path(name).name.startswith(".")], left
    else:
        assert left == [], "a half-written output or a temporary was left"


@pytest.mark.parametrize("command", ["recommend", "evaluate --per-user", "split", "report"])
def test_full_disk_by_fault_injection(files, tmp_path: Path, capsys, monkeypatch, command: str) -> None:
    """The same without a mount: every file write of receval's atomic writers fails as on a full disk."""

    naming = receval.atomic.naming_path

    @contextlib.contextmanager
    def full(path: Path) -> Iterator[None]:  # every write fails as it starts, named as a real one is
        with naming(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        yield

    monkeypatch.setattr(receval.atomic, "naming_path", full)  # looked up by each write: the fault ends here
    out = tmp_path / "out"
    out.mkdir()
    args, _ = _writing(command, files, out)
    status = main([str(a) for a in args])
    one_error(capsys.readouterr().err, status, f"error: {out}", ": no space left on the device; free some space")
    assert leftovers(out) == []


# ------------------------------------------------------------------ stdout: full, closed, gone
needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")


@needs_dev_full
@pytest.mark.parametrize("args", [["algorithms"], ["data", "list"], ["--help"]])
def test_stdout_on_a_full_device(args: list[str]) -> None:
    proc = shell("> /dev/full", *args)
    one_error(proc.stderr, proc.returncode, "error: stdout: no space left on the device")


@needs_dev_full
def test_results_to_a_full_device(files) -> None:
    proc = shell("> /dev/full", "results", files["results"])
    one_error(proc.stderr, proc.returncode, "error: stdout: no space left on the device")


@needs_dev_full
def test_input_error_under_json_on_a_full_device(tmp_path: Path) -> None:
    """The JSON error cannot be written: the error still arrives, on stderr, with what happened to stdout."""
    proc = shell("> /dev/full", "evaluate", "--truth", "missing.csv", "--recs", "r.csv", "--metrics", "mrr", "--json",
                 cwd=tmp_path)  # fmt: skip
    one_error(proc.stderr, proc.returncode, "missing.csv: truth file not found", "stdout: no space left")


@pytest.mark.parametrize("args", [["algorithms"], ["--version"], ["data", "list", "--output", "json"]])
def test_closed_stdout_is_an_error_not_a_silent_success(args: list[str]) -> None:
    proc = shell(">&-", *args)
    one_error(proc.stderr, proc.returncode, "error: stdout: closed; give the command an open stream")


def test_closed_stdout_under_json_still_reports_the_input_error(tmp_path: Path) -> None:
    proc = shell(">&-", "evaluate", "--truth", "missing.csv", "--recs", "r.csv", "--metrics", "mrr", "--json",
                 cwd=tmp_path)  # fmt: skip
    one_error(proc.stderr, proc.returncode, "missing.csv: truth file not found", "stdout: closed")


def test_closed_stdout_never_becomes_an_output_file(files, tmp_path: Path) -> None:
    """With descriptor 1 closed, the first file opened would get it: what goes to stdout must not land there."""
    args = ["recommend", "--train", files["data"], "--algorithm", "popularity", "--k", "5"]
    expected = run_cli(*args, "--out", tmp_path / "open.tsv")
    assert expected.returncode == 0, expected.stderr
    closed = shell(">&-", *args, "--out", tmp_path / "closed.tsv")
    assert closed.returncode in (0, 2), closed.stderr
    if expected.stdout:  # the command prints: the closed stdout is then an error
        one_error(closed.stderr, closed.returncode, "stdout: closed")
    assert (tmp_path / "closed.tsv").read_bytes() == (tmp_path / "open.tsv").read_bytes()


def test_reader_gone_ends_silently_with_the_broken_pipe_status() -> None:
    """``receval ... | head``: the reader left before the output was written; no message, status 141."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "receval", "algorithms"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child has started: its first write finds no reader
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert err == ""


# ------------------------------------------------------------------ permissions, read-only, long names
@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder bound read-only onto itself (root writes anywhere chmod allows nothing). Skipped without mount."""
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    folder = tmp_path / "ro"
    folder.mkdir()
    steps = [["mount", "--bind", str(folder), str(folder)], ["mount", "-o", "remount,bind,ro", str(folder)]]
    for step in steps:
        if subprocess.run(step, capture_output=True).returncode != 0:
            subprocess.run(["umount", str(folder)], capture_output=True, check=False)
            pytest.skip("cannot bind-mount read-only here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("command", ["recommend", "evaluate --per-user", "split", "report"])
def test_read_only_folder(files, read_only: Path, command: str) -> None:
    args, _ = _writing(command, files, read_only)
    proc = run_cli(*args)
    line = one_error(proc.stderr, proc.returncode, str(read_only))
    assert "read-only" in line or "cannot be written" in line, line
    assert leftovers(read_only) == []


@pytest.mark.parametrize("command", ["recommend", "evaluate --per-user", "split", "demo"])
def test_permission_denied(files, tmp_path: Path, capsys, monkeypatch, command: str) -> None:
    """Tests run as root, whom permissions do not stop: the folder refuses as it would refuse another user."""

    def denied(folder: Path) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder))

    monkeypatch.setattr(receval.atomic, "_clean_once", denied)
    out = tmp_path / "out"
    out.mkdir()
    args, _ = _writing(command, files, out)
    status = main([str(a) for a in args])
    one_error(capsys.readouterr().err, status, str(out), "permission denied; choose a place you may write")
    assert leftovers(out) == []


def test_longest_legal_name_is_written_and_a_longer_one_refused(files, tmp_path: Path) -> None:
    """255 bytes is the longest name the file system takes; the temporary name must not push it over."""
    args = ["recommend", "--train", files["data"], "--algorithm", "popularity", "--k", "5", "--out"]
    longest = tmp_path / ("r" * 251 + ".tsv")
    proc = run_cli(*args, longest)
    assert proc.returncode == 0, proc.stderr
    assert longest.read_text().startswith("user\titem")
    too_long = tmp_path / ("r" * 252 + ".tsv")
    proc = run_cli(*args, too_long)
    one_error(proc.stderr, proc.returncode, "the name is too long for the file system; choose a shorter name")


def test_report_of_a_missing_store(tmp_path: Path) -> None:
    proc = run_cli("report", "no/such/store", cwd=tmp_path)
    one_error(proc.stderr, proc.returncode, "no/such/store")
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------ the one-line description
@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.ENOSPC, "out/x.tsv: no space left on the device; free some space or write elsewhere"),
        (errno.ENAMETOOLONG, "out/x.tsv: the name is too long for the file system; choose a shorter name"),
        (errno.EROFS, "out/x.tsv: the file system is read-only; write elsewhere"),
        (errno.EACCES, "out/x.tsv: permission denied; choose a place you may write, or change its permissions"),
        (errno.ESRCH, "out/x.tsv: no such process"),  # not in the table: the system's words
    ],
)
def test_describe_os_error(code: int, expected: str) -> None:
    assert describe_os_error(OSError(code, os.strerror(code), "out/x.tsv")) == expected


# ------------------------------------------------------------------ parameters in library messages, flags on the CLI
def test_library_names_parameters_and_the_command_line_its_flags(files, tmp_path: Path, capsys) -> None:
    """The store refuses a folder of someone else's files: Python callers read force=True, the CLI --force."""
    from receval.experiment.store import ResultStore

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "my_data.parquet").write_bytes(b"not receval's")
    with pytest.raises(ConfigError) as raised:
        ResultStore(folder).check({"config_hash": "abc", "name": "x"})
    assert "force=True" in str(raised.value) and "out=" in str(raised.value), raised.value
    assert "--force" not in str(raised.value) and "--out" not in str(raised.value)
    status = main(["run", str(files["config"]), "--out", str(folder)])
    line = one_error(capsys.readouterr().err, status, "--force", "--out")
    assert "force=True" not in line and "out=" not in line, line
    assert (folder / "my_data.parquet").read_bytes() == b"not receval's"


def test_a_raised_message_is_shown_with_the_commands_flags(tmp_path: Path, capsys, monkeypatch) -> None:
    """Whatever raises it, the command's options are the one table of flags (seed=3 -> --seed 3), JSON too."""
    import receval.cli.demo

    def refuse(**kwargs: object) -> None:
        message = "seed=3 gives no test users; pass seed= another seed, or out='my demo' (kept as written: k=5)"
        raise ConfigError(message, parameters=["seed", "out"])

    monkeypatch.setattr(receval.cli.demo, "run_demo", refuse)
    expected = "--seed 3 gives no test users; pass --seed another seed, or --out 'my demo' (kept as written: k=5)"
    status = main(["demo", "--out", str(tmp_path / "x")])
    one_error(capsys.readouterr().err, status, f"error: {expected}")
    assert main(["demo", "--out", str(tmp_path / "x"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out) == {"error": expected}


@pytest.mark.parametrize(
    ("args", "name", "value", "expected"),
    [
        (["run", "c.toml"], "force", "True", "--force"),
        (["run", "c.toml"], "force", "False", None),  # no --no-force: the Python spelling stays
        (["run", "c.toml"], "out", None, "--out"),
        (["run", "c.toml"], "out", "'my results'", "--out 'my results'"),
        (["run", "c.toml"], "jobs", "4", "--jobs 4"),
        (["-v", "data", "fetch", "x"], "sha256", None, "--sha256"),
        (["evaluate"], "aspects", None, "--aspects"),
        (["evaluate"], "force", "True", None),  # evaluate has no --force
        (["no-such-command"], "out", None, None),
    ],
)
def test_flag_spelling(args: list[str], name: str, value: str | None, expected: str | None) -> None:
    assert flag_spelling(args)(name, value) == expected
