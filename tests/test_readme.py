"""The README's examples run, write only into git-ignored folders, and speak receval's metric names."""

import json
import re
import shlex
from pathlib import Path

import pytest

from receval.cli import main
from receval.cli.app import app
from receval.metrics import parse_metric

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
OUTPUT_OPTIONS = ("--out", "--per-user", "--report", "--latex", "--figures")


def _commands() -> list[list[str]]:
    """Each ``receval``/``./dev`` command of the README's bash blocks, as its words (continuation lines joined)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] in ("receval", "./dev"):
                commands.append(words)
    return commands


def _ignored_folders() -> set[str]:
    """The repository-root folders .gitignore ignores (``/name/`` lines)."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return {line.strip("/") for line in lines if line.startswith("/") and line.endswith("/")}


def test_python_examples_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
    assert "precision@10" in capsys.readouterr().out


def test_cli_reference_lists_every_command():
    import typer.main

    command = typer.main.get_command(app)
    names = set(command.commands)
    text = README.read_text(encoding="utf-8")
    documented = set(re.findall(r"`receval ([a-z][a-z-]*)", text))  # commands, not --options
    assert names - {"version"} <= documented, names - documented
    assert documented <= names


def test_example_outputs_go_to_ignored_folders():
    outputs = [c[i + 1] for c in _commands() for i, word in enumerate(c[:-1]) if word in OUTPUT_OPTIONS]
    assert len(outputs) >= 4  # split, recommend, run, report
    ignored = _ignored_folders()
    assert not [out for out in outputs if Path(out).parts[0] not in ignored], ignored
    assert "receval-demo" in ignored  # where `./dev demo` (the quick start) writes by default


def test_example_metric_strings_are_receval_names():
    text = README.read_text(encoding="utf-8")
    listed = [m for c in _commands() for i, w in enumerate(c[:-1]) if w == "--metrics" for m in c[i + 1].split(",")]
    python = [
        m
        for block in re.findall(r"```python\n(.*?)```", text, flags=re.S)
        for m in re.findall(r'"([a-z_]+@\d+)"', block)
    ]
    assert listed and python
    assert [m for m in listed + python if str(parse_metric(m)) != m] == []  # each is its own canonical name
    assert "[docs/conventions.md](docs/conventions.md)" in text  # where the other libraries' conventions are


@pytest.mark.realdata
def test_split_recommend_evaluate_chain_runs_as_written(tmp_path, ml100k_dir, monkeypatch, capsys):
    chain = [c for c in _commands() if c[0] == "receval" and c[1] in ("split", "recommend", "evaluate")]
    assert [c[1] for c in chain] == ["split", "recommend", "evaluate"]
    monkeypatch.chdir(tmp_path)  # the relative paths of the README, in a folder of the reader's
    summaries = []
    for command in chain:
        args = [str(ml100k_dir) if a == "~/data/ml-100k" else a for a in command[1:]]
        capsys.readouterr()
        assert main([*args, "--json"] if args[0] == "evaluate" else args) == 0, capsys.readouterr().err
    summaries.append(json.loads(capsys.readouterr().out))
    # the same chain with Popularity: the README's item-knn must rank better
    recommend, evaluate = (
        [w.replace("item-knn", "popularity").replace("run.trec", "pop.trec") for w in c[1:]] for c in chain[1:]
    )
    assert main(recommend) == 0 and (tmp_path / "results" / "pop.trec").exists()
    capsys.readouterr()
    assert main([*evaluate, "--json"]) == 0
    summaries.append(json.loads(capsys.readouterr().out))
    knn, popularity = summaries
    assert knn["conventions"]["threshold"] == popularity["conventions"]["threshold"] == 4
    assert all(knn[m] > popularity[m] for m in ("ndcg@10", "precision@10", "map@10")), (knn, popularity)
