"""The habits a command-line tool is expected to have.

``--version``, ``python -m receval``, shell completion, ``--json`` errors as JSON, plain
help text (markup-safe, clean boolean flags, one parsable example per command) and a tidy
top-level namespace.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest
import typer.main

import receval
from receval.cli import main
from receval.cli.app import EXAMPLES, app

ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg", "COLUMNS": "80"}


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "receval", *args],
        capture_output=True,
        text=True,
        env=env or ENV,
        timeout=120,
        check=False,
    )


def _commands() -> dict:
    """Every leaf command (typer's click objects) by its full name ("demo", "data stats", ...)."""
    out = {}

    def walk(cmd, prefix: str) -> None:
        if hasattr(cmd, "commands"):  # a group
            for name, sub in cmd.commands.items():
                walk(sub, f"{prefix}{name} ")
        else:
            out[prefix.strip()] = cmd

    walk(typer.main.get_command(app), "")
    return out


def _help(name: str) -> str:
    cmd = _commands()[name]
    with cmd.context_class(cmd, info_name=f"receval {name}", terminal_width=80) as ctx:
        return cmd.get_help(ctx)


def test_version_option_and_subcommand(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"receval {receval.__version__}\n"
    assert main(["version"]) == 0
    assert capsys.readouterr().out == f"{receval.__version__}\n"
    assert receval.__version__[0].isdigit()


def test_python_m_receval():
    res = _run("--help")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Usage: python -m receval [OPTIONS] COMMAND")
    for name in ("demo", "evaluate", "run", "data", "--version", "--install-completion"):
        assert name in res.stdout
    res = _run("--version")
    assert (res.returncode, res.stdout) == (0, f"receval {receval.__version__}\n")


def _as_console_script(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import sys; from receval.cli.app import entry; sys.argv[0] = 'receval'; entry()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_shell_completion():
    res = _as_console_script(
        env={**ENV, "_RECEVAL_COMPLETE": "complete_bash", "COMP_WORDS": "receval coherence-", "COMP_CWORD": "1"}
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["coherence-barrier", "coherence-split"]
    script = _as_console_script("--show-completion", "bash", env=ENV)
    assert script.returncode == 0, script.stderr
    assert "_RECEVAL_COMPLETE=complete_bash" in script.stdout and "complete " in script.stdout


def test_json_errors_are_json(capsys, tmp_path):
    missing = tmp_path / "truth.csv"
    args = ["evaluate", "--truth", str(missing), "--recs", str(missing), "--metrics", "mrr"]
    assert main([*args, "--json"]) == 2
    out = capsys.readouterr()
    assert json.loads(out.out) == {"error": f"{missing}: truth file not found"} and out.err == ""
    # usage errors too (a missing required option)
    assert main(["evaluate", "--metrics", "mrr", "--json"]) == 2
    assert json.loads(capsys.readouterr().out) == {"error": "Missing option '--truth'."}
    # without --json: the plain message on stderr, nothing on stdout
    assert main(args) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == f"error: {missing}: truth file not found\n"


def test_json_error_from_a_subprocess(tmp_path):
    res = _run("data", "stats", str(tmp_path / "nothing"), "--format", "movielens-100k", "--json")
    assert res.returncode == 2
    error = json.loads(res.stdout)["error"]
    assert str(tmp_path / "nothing") in error


def test_every_command_has_one_parsable_example():
    commands = _commands()
    assert set(commands) <= set(EXAMPLES), set(commands) - set(EXAMPLES)
    for name, cmd in commands.items():
        text = _help(name)
        assert text.count("Example:") == 1, name
        example = text.split("Example:\n", 1)[1].strip()
        assert example == EXAMPLES[name], name
        words = shlex.split(example)
        assert words[: 1 + len(name.split())] == ["receval", *name.split()]
        cmd.make_context(f"receval {name}", words[1 + len(name.split()) :])  # options and arguments exist


def test_help_is_plain_text():
    for name in _commands():
        text = _help(name)
        assert "<bool>" not in text, name  # flags take no value
        assert "│" not in text and "…" not in text, name  # no boxes, nothing cut
    assert "Apply the config's [quick] overrides" in " ".join(_help("run").split())  # not eaten as markup
    simulate = " ".join(_help("simulate").split())
    from receval.cli.simulate import DEFAULT_ALGORITHMS

    assert ",".join(DEFAULT_ALGORITHMS) in simulate.replace("- ", "-").replace(", ", ",")


def test_command_list_is_not_cut(capsys):
    assert main(["--help"]) == 0
    listing = capsys.readouterr().out.split("Commands:", 1)[1]
    assert "..." not in listing and "…" not in listing
    listing = " ".join(listing.split())
    assert "Generate MovieLens-like data and evaluate recommenders on it, end to end." in listing
    assert "attributes (e.g. genres)." in listing  # the first sentence, not cut at "e.g."


def test_tidy_top_level_namespace():
    public = {n for n in dir(receval) if not n.startswith("_")}
    assert "version" not in public and "PackageNotFoundError" not in public
    assert "__version__" in receval.__all__
    for name in receval.__all__:
        assert hasattr(receval, name), name
    import types

    not_modules = {n for n in public if not isinstance(getattr(receval, n), types.ModuleType)}
    assert not_modules <= set(receval.__all__), not_modules - set(receval.__all__)


@pytest.mark.parametrize(
    ("argv", "message", "help_of"),
    [
        (["evaluate", "--threshold", "x"], "Invalid value for '--threshold': 'x' is not a valid float.", "evaluate"),
        (["evaluate", "--nosuch"], "No such option: --nosuch", "evaluate"),
        (["evalute"], "No such command 'evalute'. Did you mean 'evaluate'?", ""),
        (["recommend", "--out", "x.csv"], "Missing option '--train'.", "recommend"),
        (["data", "nosuch"], "No such command 'nosuch'.", "data"),
    ],
)
def test_usage_errors_are_one_line_naming_the_help(capsys, argv: list[str], message: str, help_of: str) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()  # click names the program as it was started (receval, python -m receval, ...)
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith(f"error: {message} (see '") and captured.err.endswith(f"{help_of} --help')\n")
