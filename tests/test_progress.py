"""Progress and logging: the Python API is silent unless asked, the CLI draws bars on a terminal only.

The command-line checks run ``receval simulate`` on a tiny generated file in a fresh
process, once with stderr on a pseudo-terminal (:func:`pty.openpty`) and once with stderr
piped: bars (and their ANSI codes) appear on the terminal only, ``--quiet`` removes them
there too, and ``-v`` shows the library's log lines as ``receval: ...``.
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from receval.cli.feedback import TerminalProgress, logging_to_stderr
from receval.data.synthetic import generate
from receval.progress import active, progress_to, reporting
from receval.simulate import simulate
from receval.split import holdout

ANSI = "\x1b["


@pytest.fixture(scope="module")
def parts():
    data = generate(n_users=40, n_items=60, n_ratings=900, seed=3)
    return holdout(data, test_fraction=0.3, seed=3)


class Recorder:
    """A progress callback keeping every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, str]] = []

    def __call__(self, done: int, total: int, what: str) -> None:
        self.calls.append((done, total, what))

    def of(self, what: str) -> list[tuple[int, int]]:
        return [(d, t) for d, t, w in self.calls if w == what]


def assert_monotone_to_total(pairs: list[tuple[int, int]], total: int) -> None:
    done = [d for d, _ in pairs]
    assert pairs, "no progress reported"
    assert {t for _, t in pairs} == {total}
    assert done[0] == 0 and done[-1] == total
    assert all(b >= a for a, b in itertools.pairwise(done))


# ---------------------------------------------------------------- the Python API


def test_api_prints_nothing_by_default(parts, capsys):
    train, test = parts
    simulate("popularity", train, test, rounds=5, threshold=4, seed=1)
    assert active() is None
    assert capsys.readouterr() == ("", "")


def test_simulate_calls_the_callback_after_each_round(parts):
    train, test = parts
    seen = Recorder()
    traj = simulate("item-bandit-egreedy", train, test, rounds=7, threshold=4, seed=1, progress=seen)
    assert_monotone_to_total(seen.of("simulate item-bandit-egreedy"), 7)
    assert [d for d, _ in seen.of("simulate item-bandit-egreedy")] == list(range(8))  # one call per round
    quiet = simulate("item-bandit-egreedy", train, test, rounds=7, threshold=4, seed=1)
    assert traj.table.equals(quiet.table)  # reporting does not change the run


def test_simulate_of_a_refitted_model_reports_each_round(parts):
    train, test = parts
    seen = Recorder()
    simulate("item-knn", train, test, rounds=4, threshold=4, seed=1, refit_every=2, progress=seen)
    assert [d for d, _ in seen.of("simulate item-knn")] == [0, 1, 2, 3, 4]


def test_early_stop_still_reaches_total():
    from receval import Interactions

    data = Interactions.from_arrays([0, 1, 0, 0, 1, 1], [0, 1, 1, 2, 0, 2], [5, 5, 4, 1, 2, 5])
    seen = Recorder()
    traj = simulate("random", data.subset([0, 1]), data.subset([2, 3, 4, 5]), rounds=5, threshold=4, progress=seen)
    assert len(traj.table) == 2  # every user exhausted after two rounds
    assert seen.of("simulate random") == [(0, 5), (1, 5), (2, 5), (5, 5)]


def test_the_active_callback_is_used_when_none_is_given(parts):
    train, test = parts
    seen, explicit = Recorder(), Recorder()
    with reporting(seen):
        assert active() is seen
        simulate("random", train, test, rounds=3, threshold=4)
        simulate("random", train, test, rounds=2, threshold=4, progress=explicit)  # a given one wins
        with reporting(None):  # silence inside
            simulate("random", train, test, rounds=2, threshold=4)
    assert active() is None
    assert seen.of("simulate random") == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert explicit.of("simulate random") == [(0, 2), (1, 2), (2, 2)]


def test_studies_report_monotone_counts_reaching_total():
    from receval.recommenders import make
    from receval.studies.attacks import attack_experiment
    from receval.studies.partitions import coherence_split_experiment

    data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    seen = Recorder()
    attack_experiment(
        data, ["average", "random"], [0.05], ["random", "popularity"], n_targets=2, filler=5, metrics=(), progress=seen
    )
    assert_monotone_to_total(seen.of("attack grid"), 2 * 1 * 2 * 2)

    seen = Recorder()
    coherence_split_experiment(data, {"mean": lambda: make("global-mean")}, [0.3, 0.6], folds=2, seed=1, progress=seen)
    assert_monotone_to_total(seen.of("coherence-split fits"), 2 * 1 * (1 + 2 * 2))


def test_metaeval_and_sharded_evaluation_report():
    import scipy.sparse as sp

    from receval.evaluation.sharded import evaluate_sharded
    from receval.studies.metaeval import metaeval_study

    data = generate(n_users=60, n_items=80, n_ratings=1500, seed=0)
    seen = Recorder()
    metaeval_study(data, ["ndcg@5"], ["random", "popularity"], k=5, strengths=[0, 0.5], fractions=[0.5], n_seeds=1,
                   progress=seen)  # fmt: skip
    assert_monotone_to_total(seen.of("metaeval"), 2 + 3)

    rng = np.random.default_rng(0)
    rankings = np.argsort(rng.random((30, 20)), axis=1)[:, :5]
    truth = sp.random(30, 20, density=0.3, format="csr", random_state=1, data_rvs=lambda n: np.full(n, 5.0))
    seen = Recorder()
    _, summary = evaluate_sharded(rankings, truth, ["precision@5"], n_shards=4, threshold=4, progress=seen)
    whole, _ = evaluate_sharded(rankings, truth, ["precision@5"], n_shards=1, threshold=4)
    assert seen.of("evaluate shards") == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    assert summary["precision@5"] == pytest.approx(whole["precision@5"].mean())


def test_one_attack_and_the_debias_study_report():
    from receval.data.synthetic import generate_with_truth
    from receval.studies.attacks import run_attack
    from receval.studies.debiasing import debiasing_study, default_systems, generated_parts

    data = generate(n_users=80, n_items=60, n_ratings=1500, seed=2)
    seen = Recorder()
    run_attack(data, "average", [data.item_ids[5]], "popularity", filler=5, progress=seen)
    assert seen.of("attack") == [(0, 3), (1, 3), (2, 3), (3, 3)]

    truth = generate_with_truth(n_users=60, n_items=50, n_ratings=900, seed=1, keep_complete=True)
    systems = dict(list(default_systems().items())[:2])
    seen = Recorder()
    debiasing_study(generated_parts(truth, seed=1), systems, metrics=["precision@5"], threshold=4, progress=seen)
    assert seen.of("debias systems") == [(0, 2), (1, 2), (2, 2)]


def test_parquet_shards_report_to_the_active_callback(tmp_path):
    import pandas as pd

    from receval.evaluation.sharded_files import evaluate_parquet_sharded

    rng = np.random.default_rng(7)
    truth = pd.DataFrame(
        {
            "user": np.repeat(np.arange(60), 4),
            "item": rng.integers(0, 30, 240),
            "rating": rng.integers(1, 6, 240).astype(float),
        }
    ).drop_duplicates(["user", "item"])
    run = pd.DataFrame({"user": np.repeat(np.arange(60), 10), "item": rng.integers(0, 40, 600),
                        "score": rng.random(600).round(2)}).drop_duplicates(["user", "item"])  # fmt: skip
    truth.to_parquet(tmp_path / "truth.parquet", row_group_size=60)
    run.to_parquet(tmp_path / "run.parquet", row_group_size=100)
    seen = Recorder()
    with reporting(seen):
        evaluate_parquet_sharded(tmp_path / "truth.parquet", tmp_path / "run.parquet", ["ndcg@5"], threshold=4,
                                 n_shards=3)  # fmt: skip
    assert seen.of("evaluate shards") == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_progress_to_falls_back_to_silence():
    assert progress_to(None)(1, 2, "x") is None  # callable, does nothing
    seen = Recorder()
    assert progress_to(seen) is seen


# ---------------------------------------------------------------- the display and the log handler


def test_terminal_progress_draws_on_a_terminal_console_only():
    terminal = io.StringIO()
    with TerminalProgress(console=Console(file=terminal, force_terminal=True, width=100)) as bars:
        for done in range(4):
            bars(done, 3, "simulate random")
    drawn = terminal.getvalue()
    assert "simulate random" in drawn and "3/3" in drawn and ANSI in drawn

    piped = io.StringIO()
    with TerminalProgress(console=Console(file=piped, force_terminal=False)) as bars:
        bars(1, 3, "simulate random")
        assert not bars.enabled
    assert piped.getvalue() == ""

    quiet = io.StringIO()
    with TerminalProgress(quiet=True, console=Console(file=quiet, force_terminal=True)) as bars:
        bars(1, 3, "simulate random")
    assert quiet.getvalue() == ""


def test_terminal_progress_restarts_a_task_reported_again_from_zero():
    out = io.StringIO()
    bars = TerminalProgress(console=Console(file=out, force_terminal=True, width=100))
    bars(3, 3, "simulate random")
    bars(0, 5, "simulate random")
    assert bars._progress is not None
    (task,) = bars._progress.tasks
    assert (task.completed, task.total) == (0, 5)
    bars.close()


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_what_a_command_prints_meanwhile_goes_above_the_bars(monkeypatch):
    stdout, stderr = FakeTerminal(), FakeTerminal()
    monkeypatch.setattr(sys, "stdout", stdout)
    with TerminalProgress(stream=stderr) as bars:
        assert bars.enabled
        bars(1, 3, "steps")
        Console().print("a table line")  # a command's own console, made before or after the bars start
        print("a plain line")
        assert sys.stdout is not stdout
    assert sys.stdout is stdout  # restored
    assert stdout.getvalue() == ""  # nothing written under the bars, where they would overwrite it
    drawn = stderr.getvalue()
    erase = "\r\x1b[2K"  # the bars are erased before each line and drawn again below it
    assert f"{erase}a table line" in drawn and f"{erase}a plain line" in drawn
    assert drawn.index("a table line") < drawn.index("a plain line")


def test_finished_inner_work_leaves_the_display():
    out = io.StringIO()
    with TerminalProgress(console=Console(file=out, force_terminal=True, width=100)) as bars:
        bars(0, 2, "demo")
        bars(0, 5, "simulate random")
        assert bars._progress is not None
        assert [t.description for t in bars._progress.tasks] == ["demo", "simulate random"]
        bars(5, 5, "simulate random")
        bars(1, 2, "demo")
        assert [(t.description, t.completed) for t in bars._progress.tasks] == [("demo", 1)]
        bars(2, 2, "demo")  # the first task stays until the end
        assert [(t.description, t.completed) for t in bars._progress.tasks] == [("demo", 2)]
    assert "simulate random" in out.getvalue()  # drawn when it started, however short


def test_logging_levels_and_format():
    stream = io.StringIO()
    log = logging.getLogger("receval.split")
    with logging_to_stderr(verbosity=2, stream=stream):
        log.debug("details")
        log.info("steps")
    with logging_to_stderr(quiet=True, stream=stream):
        log.warning("not shown with --quiet")
        log.error("errors are")
    assert stream.getvalue().splitlines() == ["receval: details", "receval: steps", "receval: errors are"]


def test_library_log_lines(parts, caplog):
    train, test = parts
    with caplog.at_level(logging.DEBUG, logger="receval"):
        simulate("random", train, test, rounds=2, threshold=4)
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("simulate random: round 2 of 2") for m in messages)
    assert any(m.startswith("simulate random: 2 rounds") for m in messages)
    assert all(r.name.startswith("receval.") for r in caplog.records)


# ---------------------------------------------------------------- the command line, in a fresh process


@pytest.fixture(scope="module")
def ratings_file(tmp_path_factory) -> Path:
    data = generate(n_users=40, n_items=60, n_ratings=900, seed=3)
    path = tmp_path_factory.mktemp("progress") / "ratings.csv"
    columns = (data.user_ids[data.users], data.item_ids[data.items], data.ratings)
    rows = ["user,item,rating"] + [f"{u},{i},{r:g}" for u, i, r in zip(*columns, strict=True)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _simulate_args(path: Path, *before: str) -> list[str]:
    return [
        sys.executable, "-m", "receval", *before, "simulate", "--data", str(path), "--format", "csv",
        "--algorithms", "random,popularity", "--rounds", "40", "--threshold", "4", "--json",
    ]  # fmt: skip


def _env() -> dict[str, str]:
    return {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "OPENBLAS_NUM_THREADS": "1"}


def _on_a_terminal(args: list[str]) -> tuple[str, str]:
    """Run ``args`` with stderr on a pseudo-terminal; returns (stdout, what the terminal received)."""
    master, slave = pty.openpty()
    received = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            received.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=slave, env=_env(), timeout=300, check=False)
    finally:
        os.close(slave)
        reader.join(timeout=30)
        os.close(master)
    assert proc.returncode == 0, received.decode(errors="replace")
    return proc.stdout.decode(), received.decode(errors="replace")


def _piped(args: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_progress_appears_on_a_terminal(ratings_file):
    stdout, terminal = _on_a_terminal(_simulate_args(ratings_file))
    assert "simulate random" in terminal and "simulate popularity" in terminal
    assert "40/40" in terminal and "ETA" in terminal and ANSI in terminal
    assert stdout.lstrip().startswith("{")  # stdout keeps its JSON


def test_quiet_draws_nothing_even_on_a_terminal(ratings_file):
    _, terminal = _on_a_terminal(_simulate_args(ratings_file, "--quiet"))
    assert "simulate" not in terminal and ANSI not in terminal


def test_no_progress_when_piped(ratings_file):
    proc = _piped(_simulate_args(ratings_file))
    assert proc.stderr == ""
    assert ANSI not in proc.stdout
    assert proc.stdout.lstrip().startswith("{")


def test_verbose_shows_the_library_log_lines(ratings_file):
    lines = _piped(_simulate_args(ratings_file, "-v")).stderr.splitlines()
    assert lines and all(line.startswith("receval: ") for line in lines), lines
    n = len(ratings_file.read_text().splitlines()) - 1
    assert f"receval: loaded {ratings_file} (csv): {n} ratings by 40 users of 60 items" in lines, lines
    assert any("training and" in line and "test ratings" in line for line in lines), lines
    assert sum(bool(re.match(r"receval: simulate \w+: 40 rounds \(40 users, 60 items\)", line)) for line in lines) == 2
    assert not any("round 1 of 40" in line for line in lines)  # rounds are -vv
    assert any("round 1 of 40" in line for line in _piped(_simulate_args(ratings_file, "-vv")).stderr.splitlines())
