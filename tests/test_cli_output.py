"""Tables in terminals and pipes: never truncated, in every ``--output`` format.

``receval demo | cat`` and ``COLUMNS=80 receval demo`` on a pseudo-terminal print every
value of the tables the demo writes to ``--out`` in full.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from receval.cli import main
from receval.cli.output import Table, output_format, print_table, render, terminal_tables
from receval.errors import ConfigError

DEMO = ["demo", "--users", "80", "--items", "120", "--ratings", "2500", "--rounds", "10", "--seed", "3"]
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg", "COLUMNS": "80"}
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _on_a_terminal(args: list[str], columns: int = 80) -> str:
    """Run ``python -m receval ARGS`` with stdout and stderr on a pseudo-terminal ``columns`` wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in ENV.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "receval", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env={**env, "COLUMNS": str(columns), "TERM": "xterm-256color"},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=600) == 0
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")


def _expected(out_dir) -> dict[str, pd.DataFrame]:
    """The demo's tables as written to --out: systems as rows, metrics as columns."""
    return {key: pd.read_csv(out_dir / f"{key}.csv", index_col=0) for key in ("one_shot", "rmse", "cyclic")}


@pytest.mark.slow
def test_demo_piped_and_on_an_80_column_terminal_show_every_value(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "receval", *DEMO, "--out", str(tmp_path / "piped")],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    piped = res.stdout
    tables = _expected(tmp_path / "piped")
    assert "…" not in piped
    # piped: plain aligned text, one line per metric with every system's value in order
    for key, frame in tables.items():
        assert any(line.split() == ["metric", *frame.index] for line in piped.splitlines()), key
        for metric in frame.columns:
            want = [f"{v:.4f}" for v in frame[metric]]
            assert any(line.split() == [metric, *want] for line in piped.splitlines()), (key, metric)

    terminal = _on_a_terminal([*DEMO, "--out", str(tmp_path / "tty")])
    assert "…" not in terminal
    lines = terminal.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert _expected(tmp_path / "tty")["one_shot"].equals(tables["one_shot"])  # same seed, same values
    cells = [[c.strip() for c in re.split("[│┃]", line.rstrip().strip("│┃"))] for line in lines]
    for frame in tables.values():
        for metric in frame.columns:
            for system, value in frame[metric].items():
                assert _in_group(cells, metric, system) == f"{value:.4f}", (metric, system)


def _in_group(cells: list[list[str]], metric: str, system: str) -> str | None:
    """The cell of ``metric``'s row under ``system`` in the boxed tables (split in column groups)."""
    for i, header in enumerate(cells):
        if header[:1] != ["metric"] or system not in header:
            continue
        col = header.index(system)
        for row in cells[i + 1 :]:
            if row[:1] == ["metric"]:
                break
            if row[:1] == [metric] and len(row) > col:
                return row[col]
    return None


def test_terminal_tables_fit_and_keep_every_value():
    names = [f"a-rather-long-system-name-{i}" for i in range(9)]
    rows = [[f"metric-{m}", *(m * 10 + i + 0.123456 for i in range(9))] for m in range(4)]
    table = Table(["metric", *names], rows, title="wide")
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    print_table(table, "table", console)
    text = buf.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    for name in names:
        assert name in text
    for row in rows:
        for value in row[1:]:
            assert f"{value:.4f}" in text
    groups = terminal_tables(table, 80)
    assert len(groups) > 1 and all(g.columns[0].header.plain == "metric" for g in groups)
    # a single column wider than the terminal folds instead of cutting
    long = Table(["id", "description"], [["x", "y" * 150]])
    buf = io.StringIO()
    print_table(long, "table", Console(file=buf, width=60, force_terminal=True, color_system=None))
    assert buf.getvalue().count("y") == 150


def test_piped_table_is_never_wrapped_or_cropped():
    row = ["m", *(1000.0 + i for i in range(30))]
    table = Table(["metric", *(f"system-{i}" for i in range(30))], [row])
    buf = io.StringIO()
    print_table(table, "table", Console(file=buf, width=80))  # a file: not a terminal
    lines = buf.getvalue().splitlines()
    assert lines[0].split() == table.columns
    assert lines[2].split() == [f"{v:.4f}" if i else v for i, v in enumerate(row)]
    assert len(lines[0]) > 80


def test_every_format_carries_every_value():
    frame = pd.DataFrame({"rmse": [0.912345, float("nan")], "users": [943, 10]}, index=["mf", "biases | x"])
    table = Table.from_frame(frame, title="Rating prediction", index_label="system")
    rows = list(csv.reader(io.StringIO(render(table, "tsv")), delimiter="\t"))
    assert rows == [
        ["# Rating prediction"],
        ["system", "rmse", "users"],
        ["mf", "0.9123", "943"],
        ["biases | x", "nan", "10"],
    ]
    assert json.loads(render(table, "json")) == {
        "title": "Rating prediction",
        "columns": ["system", "rmse", "users"],
        "rows": [["mf", 0.912345, 943], ["biases | x", None, 10]],
    }
    md = render(table, "markdown").splitlines()
    assert md[0] == "**Rating prediction**" and md[2] == "| system | rmse | users |"
    assert md[3] == "|---|--:|--:|" and md[5] == "| biases \\| x | nan | 10 |"


def test_output_option_checks():
    assert output_format("markdown") == "markdown"
    with pytest.raises(ConfigError, match=r"--output must be one of table, tsv, .*; got 'html'"):
        output_format("html")
    with pytest.raises(ConfigError, match="contradict"):
        output_format("tsv", as_json=True)


def test_demo_output_tsv(tmp_path, capsys):
    assert main([*DEMO[:-2], "--seed", "4", "--rounds", "3", "--out", str(tmp_path), "--output", "tsv"]) == 0
    out = capsys.readouterr().out
    blocks = [b for b in out.strip().split("\n\n") if b]
    assert [b.splitlines()[0] for b in blocks] == [
        "# One-shot top-10 evaluation (macro means over test users)",
        "# Rating prediction on the test ratings",
        "# Cyclic simulation: cumulative metrics after 3 rounds",
        "# Kendall τ",
    ]
    one_shot = pd.read_csv(io.StringIO(blocks[0]), sep="\t", comment="#", index_col=0)
    written = pd.read_csv(tmp_path / "one_shot.csv", index_col=0).T
    assert list(one_shot.columns) == list(written.columns)
    assert (one_shot - written).abs().max().max() <= 5e-5  # printed to 4 decimals


def test_results_output_formats(tmp_path, capsys):
    sys.path.insert(0, str(Path(__file__).parent))
    import _report_data

    root = _report_data.one_shot(tmp_path / "r", systems=3, seeds=2, users=30, slices=False)
    assert main(["results", str(root), "--output", "tsv"]) == 0
    out = capsys.readouterr().out
    summary = pd.read_csv(io.StringIO(out), sep="\t", comment="#")
    assert list(summary.columns[:2]) == ["configuration", "n"] and len(summary) == 3
    metrics = [c for c in summary.columns[2:] if not c.endswith("_std")]
    assert metrics and all(f"{m}_std" in summary.columns for m in metrics)  # every metric, not the first six
    assert main(["results", str(root), "--output", "json", "--compare", metrics[0]]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["columns"] == list(summary.columns)
    assert doc["compare"]["columns"][:2] == ["a", "b"] and len(doc["compare"]["rows"]) == 3  # three pairs
    assert main(["results", str(root), "--output", "markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0] == "**mean ± std over seeds**" and md[2].startswith("| configuration | n | ")
