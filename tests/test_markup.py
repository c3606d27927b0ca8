"""Text from users is never read as rich markup: labels, paths and names print as written.

rich reads ``[bold]`` as a style and ``[/red]`` without an opening tag as an error, so an
unescaped label is either eaten (``pop[bold]`` shown as ``pop``) or crashes the command
after its work is done (``MarkupError``). Each test puts the same hostile names through
one place that prints with rich.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from receval.cli import main
from receval.cli.feedback import TerminalProgress
from receval.cli.output import Table, escape, print_table

# a style, a closing tag with no opening one, an unclosed bracket, an extra of a package
LABELS = ["pop[bold]", "[red]x[/red]", "a[", "receval[surprise]"]
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=100, color_system="standard"), buffer


def _plain(buffer: io.StringIO) -> str:
    return _ANSI.sub("", buffer.getvalue())


@pytest.mark.parametrize("label", LABELS)
def test_escape_gives_back_the_text_as_rich_prints_it(label: str) -> None:
    console, buffer = _terminal()
    console.print(f"[green]ok[/] {escape(label)}")
    assert _plain(buffer).strip() == f"ok {label}"


def test_boxed_terminal_table_shows_labels_as_written() -> None:
    console, buffer = _terminal()
    table = Table(["system", *LABELS], [[label, 0.5, 0.25, 1, 2] for label in LABELS], title="[bold]t[/bold]")
    print_table(table, "table", console)
    text = _plain(buffer)
    for label in LABELS:
        assert text.count(label) >= 2, (label, text)  # its column and its row
    assert "[bold]t[/bold]" in text


@pytest.mark.parametrize("label", LABELS)
def test_progress_bar_label_is_not_markup(label: str) -> None:
    """A simulation's progress row is named after the user's model label."""
    console, buffer = _terminal()
    with TerminalProgress(console=console) as progress:
        progress(0, 4, f"simulate {label}")
        progress(2, 4, f"simulate {label}")
        progress(4, 4, f"simulate {label}")
    assert f"simulate {label}" in _plain(buffer)


CONFIG = """name = "receval[surprise]"
seeds = 1
metrics = ["ndcg@5"]

[datasets."pop[bold]"]
generate = {{ n_users = 30, n_items = 20, n_ratings = 300 }}

[datasets."a["]
generate = {{ n_users = 30, n_items = 20, n_ratings = 300 }}

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 5

[recommenders."{recommender}"]
algorithm = "popularity"
"""


def test_run_results_and_report_print_hostile_names_verbatim(tmp_path: Path, capsys) -> None:
    """Data set, recommender and experiment names and the output folder, through run, results and report."""
    config = tmp_path / "c.toml"
    config.write_text(CONFIG.format(recommender="[red]x[/red]"), encoding="utf-8")
    out = tmp_path / "out[bold]"
    assert main(["run", str(config), "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    for text in ("pop[bold]/[red]x[/red]()", "a[/[red]x[/red]()", "receval[surprise]: mean", f"results in {out}"):
        assert text in shown, (text, shown)
    assert main(["results", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "experiment 'receval[surprise]'" in shown and "pop[bold]/[red]x[/red]()" in shown
    assert main(["report", str(out), "--no-data"]) == 0
    assert f"report written to {out / 'report.html'}" in capsys.readouterr().out


def test_demo_output_folder_with_brackets(tmp_path: Path, capsys) -> None:
    out = tmp_path / "demo[bold]"
    args = ["demo", "--users", "40", "--items", "50", "--ratings", "800", "--rounds", "2", "--out", str(out)]
    assert main(args) == 0
    shown = capsys.readouterr().out.replace("\n", "")  # rich folds long lines at 80 columns in a pipe
    assert f"Tables written to {out}; report: {out / 'report.html'}" in shown


@pytest.mark.parametrize("label", LABELS)
def test_error_naming_a_bracketed_value_keeps_it(tmp_path: Path, capsys, label: str) -> None:
    data = tmp_path / "r.csv"
    data.write_text("user,item,rating\n1,1,4\n1,2,3\n2,1,5\n", encoding="utf-8")
    status = main(["recommend", "--train", str(data), "--algorithm", label, "--out", str(tmp_path / "x.tsv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert repr(label) in err[0] or label in err[0], err[0]
