"""The README's Python example runs, and its quick start names real commands."""

import re
from pathlib import Path

from receval.cli.app import app

README = Path(__file__).resolve().parents[1] / "README.md"


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
