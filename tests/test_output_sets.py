"""Outputs that belong together appear together: a signal, a full disk or a killed process never leaves a mixed set.

The core case is the one seen on main: ``receval split --out DIR`` rewriting an
existing split and interrupted by SIGTERM or Ctrl-C must leave DIR with the old
train/test pair or the new one, never the new train beside the old test.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval import atomic
from receval.atomic import atomic_write, publish, remove_stale_temporaries, write_frame, write_text
from receval.cli import main
from receval.data.synthetic import generate
from receval.data.writers import write_table
from receval.errors import ConfigError


def _names(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# ---------------------------------------------------------------- the publication itself
def test_nothing_is_visible_until_the_set_is_complete_and_a_failure_keeps_the_old_set(tmp_path: Path) -> None:
    (tmp_path / "train.tsv").write_text("old train")
    (tmp_path / "test.tsv").write_text("old test")
    (tmp_path / "my_notes.txt").write_text("the user's")

    def full_disk(path: Path) -> None:
        path.write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with pytest.raises(OSError, match="No space left"), publish(tmp_path) as pub:
        pub.path(tmp_path / "train.tsv").write_text("new train")
        assert (tmp_path / "train.tsv").read_text() == "old train"
        atomic_write(pub.path(tmp_path / "test.tsv"), full_disk)
    assert (tmp_path / "train.tsv").read_text() == "old train" and (tmp_path / "test.tsv").read_text() == "old test"
    assert _names(tmp_path) == ["my_notes.txt", "test.tsv", "train.tsv"]  # no staging folder, no temporary left
    with publish(tmp_path) as pub:
        pub.path(tmp_path / "train.tsv").write_text("new train")
        pub.path(tmp_path / "test.tsv").write_text("new test")
        pub.remove(tmp_path / "stale.tsv")
    assert (tmp_path / "train.tsv").read_text() == "new train" and (tmp_path / "test.tsv").read_text() == "new test"
    assert (tmp_path / "my_notes.txt").read_text() == "the user's"


def test_a_signal_during_the_moves_takes_effect_after_the_whole_set_is_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moves: list[str] = []
    real_replace = os.replace

    def replace_then_interrupt(source: str | Path, target: str | Path) -> None:
        real_replace(source, target)
        moves.append(Path(target).name)
        if Path(target).name == "train.tsv":
            signal.raise_signal(signal.SIGINT)  # Ctrl-C between the two moves of the set

    monkeypatch.setattr(atomic.os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt), publish(tmp_path) as pub:
        pub.path(tmp_path / "test.tsv").write_text("new test")
        pub.path(tmp_path / "train.tsv").write_text("new train")
    assert moves[-2:] == ["test.tsv", "train.tsv"] or moves[-2:] == ["train.tsv", "test.tsv"]
    assert (tmp_path / "train.tsv").read_text() == "new train" and (tmp_path / "test.tsv").read_text() == "new test"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is given back


def test_a_set_cut_short_by_sigkill_is_completed_by_the_next_write(tmp_path: Path) -> None:
    # what a process killed between the two moves leaves: its journal, one file moved, one still staged
    stage = tmp_path / ".receval-999999999-0.tmp"  # no process has this pid
    (stage / "files" / "fold-1").mkdir(parents=True)
    (stage / "files" / "fold-1" / "test.tsv").write_text("new test")
    (tmp_path / "fold-1").mkdir()
    (tmp_path / "fold-1" / "train.tsv").write_text("new train")
    (tmp_path / "fold-1" / "test.tsv").write_text("old test")
    (tmp_path / "old.tsv").write_text("of the old set")
    journal = {"files": ["fold-1/test.tsv", "fold-1/train.tsv"], "remove": ["old.tsv"]}
    (stage / "journal.json").write_text(json.dumps(journal))
    # and a staging folder whose set was never complete (no journal): simply removed
    (tmp_path / ".receval-999999998-3.tmp" / "files").mkdir(parents=True)
    (tmp_path / ".receval-999999998-3.tmp" / "files" / "train.tsv").write_text("half")
    assert len(remove_stale_temporaries(tmp_path)) == 2
    assert (tmp_path / "fold-1" / "test.tsv").read_text() == "new test"
    assert _names(tmp_path) == ["fold-1", "fold-1/test.tsv", "fold-1/train.tsv"]


@pytest.mark.parametrize("target", ["../outside.txt", "/tmp/receval-escape.txt", "."])
def test_a_target_outside_the_folder_is_refused_before_anything_is_written(tmp_path: Path, target: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="lies outside"), publish(out) as pub:
        pub.path(out / target).write_text("escaped")
    assert not (tmp_path / "outside.txt").exists() and not Path("/tmp/receval-escape.txt").exists()
    assert not out.exists() or _names(out) == []


# ---------------------------------------------------------------- temporary names
def test_a_250_character_name_can_be_written(tmp_path: Path) -> None:
    stem = "r" * 246  # with ".tsv": 250 bytes, legal on every common file system (the limit is 255)
    run = pd.DataFrame({"user": ["u1", "u1"], "item": ["a", "b"], "score": [0.5, 0.25]})
    path = write_table(run, tmp_path / f"{stem}.tsv")
    assert len(path.name) == 250 and pd.read_csv(path, sep="\t")["item"].tolist() == ["a", "b"]
    assert write_text(tmp_path / f"{stem}.txt", "ok").read_text() == "ok"
    assert write_frame(tmp_path / f"{stem}.csv", run).stat().st_size > 0
    with publish(tmp_path / ("d" * 250)) as pub:  # a 250-character folder holds its staging folder too
        pub.path(tmp_path / ("d" * 250) / f"{stem}.txt").write_text("set")
    assert (tmp_path / ("d" * 250) / f"{stem}.txt").read_text() == "set"
    expected = [f"{stem}.tsv", f"{stem}.txt", f"{stem}.csv", "d" * 250]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(expected)


# ---------------------------------------------------------------- receval split under signals
def _ml100k_folder(tmp_path: Path) -> Path:
    data = generate(n_users=600, n_items=900, n_ratings=60_000, seed=4)
    frame = data.to_frame()
    frame["timestamp"] = 880_000_000 + np.arange(len(frame))
    folder = tmp_path / "ml"
    folder.mkdir()
    frame[["user", "item", "rating", "timestamp"]].astype({"rating": int}).to_csv(
        folder / "u.data", sep="\t", header=False, index=False
    )
    return folder


def _split_argv(data: Path, seed: int, out: Path) -> list[str]:
    return ["split", str(data), "--format", "ml-100k", "--seed", str(seed), "--out", str(out)]


def _pairs(path: Path) -> set[tuple[str, str]]:
    frame = pd.read_csv(path, sep="\t", dtype=str)
    return set(zip(frame["user"], frame["item"], strict=True))


def test_split_interrupted_at_random_moments_leaves_the_old_set_or_the_new_one(tmp_path: Path) -> None:
    data = _ml100k_folder(tmp_path)
    sets = {}
    for seed in (1, 2):  # the old split (seed 1) and the one the interrupted command writes (seed 2)
        assert main(_split_argv(data, seed, tmp_path / f"seed-{seed}")) == 0
        sets[seed] = tuple((tmp_path / f"seed-{seed}" / name).read_bytes() for name in ("train.tsv", "test.tsv"))
    assert sets[1] != sets[2] and _pairs(tmp_path / "seed-2" / "test.tsv") - _pairs(tmp_path / "seed-1" / "test.tsv")
    rng = random.Random(27)
    out = tmp_path / "out"
    for trial in range(8):
        out.mkdir(exist_ok=True)
        for name, content in zip(("train.tsv", "test.tsv"), sets[1], strict=True):
            (out / name).write_bytes(content)
        proc = subprocess.Popen(
            [sys.executable, "-c", "from receval.cli.app import entry; entry()", *_split_argv(data, 2, out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if trial % 4:  # a moment while the new set is being written: after its first temporary appears
            deadline = time.monotonic() + 60
            while proc.poll() is None and not list(out.glob(".receval-*")) and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rng.uniform(0.0, 0.5))  # about as long as the two files take to write
        else:  # any moment from the start
            time.sleep(rng.uniform(0.2, 2.5))
        proc.send_signal(signal.SIGTERM if trial % 4 < 2 else signal.SIGINT)
        proc.wait(timeout=60)
        remove_stale_temporaries(out)  # what the next write into the folder does first
        found = tuple((out / name).read_bytes() for name in ("train.tsv", "test.tsv"))
        assert found in (sets[1], sets[2]), f"trial {trial}: a mixed set"
        assert not _pairs(out / "train.tsv") & _pairs(out / "test.tsv")
        assert _names(out) == ["test.tsv", "train.tsv"]
    assert main(_split_argv(data, 2, out)) == 0  # and an uninterrupted rewrite publishes the new set
    assert tuple((out / name).read_bytes() for name in ("train.tsv", "test.tsv")) == sets[2]


# ---------------------------------------------------------------- receval demo --out
def test_demo_out_is_one_set_and_a_failed_write_keeps_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    argv = ["demo", "--users", "40", "--items", "60", "--ratings", "900", "--rounds", "3", "--out", str(out)]
    assert main([*argv, "--seed", "1"]) == 0
    before = {name: (out / name).read_bytes() for name in _names(out)}
    assert sorted(before) == ["cyclic.csv", "one_shot.csv", "report.html", "rmse.csv", "summary.json"]
    from receval.report import html

    def no_space(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(html, "report_from_tables", no_space)  # the last file of the set cannot be written
    try:
        code = main([*argv, "--seed", "2"])
    except OSError:  # a library caller sees the error itself
        code = None
    assert code != 0
    assert {name: (out / name).read_bytes() for name in _names(out)} == before
    capsys.readouterr()


# ---------------------------------------------------------------- the studies' folders of tables and figures
def test_a_simulation_folder_keeps_its_old_set_when_a_figure_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from receval.report import cyclic

    t = pd.DataFrame({"round": [1, 2], "recall_norm": [0.1, 0.2], "fallout_norm": [0.2, 0.1], "recall": [0.1, 0.2],
                      "fallout": [0.2, 0.3], "precision": [0.3, 0.2], "anti_precision": [0.1, 0.1]})  # fmt: skip
    out = cyclic.write_outputs(tmp_path / "sim", {"a": t, "b": t * 1.5})
    names = ["curves.png", "final.csv", "ranks.csv", "ranks.png", "tau.csv", "trajectories.csv", "trajectories.parquet"]
    assert _names(out) == names
    before = {name: (out / name).read_bytes() for name in names}

    def no_space(*_args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cyclic, "plot_ranks", no_space)  # the last file of the new set fails
    with pytest.raises(OSError, match="No space"):
        cyclic.write_outputs(out, {"a": t * 2.0, "b": t})
    assert {name: (out / name).read_bytes() for name in _names(out)} == before


def test_a_doctored_journal_moves_nothing_out_of_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    stage = out / ".receval-999999999-0.tmp"
    (stage / "files").mkdir(parents=True)
    (stage / "files" / "ok.txt").write_text("inside")
    (tmp_path / "victim.txt").write_text("the user's")
    journal = {"files": ["ok.txt", "../escaped.txt", "/tmp/receval-escaped.txt"], "remove": ["../victim.txt"]}
    (stage / "journal.json").write_text(json.dumps(journal))
    remove_stale_temporaries(out)
    assert (out / "ok.txt").read_text() == "inside" and (tmp_path / "victim.txt").read_text() == "the user's"
    assert not (tmp_path / "escaped.txt").exists() and not Path("/tmp/receval-escaped.txt").exists()
    assert _names(out) == ["ok.txt"]
