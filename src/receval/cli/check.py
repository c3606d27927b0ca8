"""``receval check PATH [--json]``: lint an evaluation protocol (a configuration, a result store or a split folder).

Prints each finding (rule, message, reference; :mod:`receval.experiment.check`); with
``--json``, ``{"findings": [{"rule": ..., "message": ..., "reference": ...}, ...]}``.
Exits 1 when it finds a flaw and 0 when it finds none, like a linter; 2 on bad input.
docs/guides/check.md says how to fix each rule's flaw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval import jsontext

__all__ = ["register"]


def check_command(
    path: Annotated[Path, typer.Argument(help="A run configuration (TOML), a result store or a split folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> int:
    """Report the known flaws of an evaluation protocol, each with its reference (exit 1 when there are any)."""
    from receval.experiment.check import check_path

    findings = check_path(path)
    if as_json:
        typer.echo(jsontext.dumps({"findings": [f.as_dict() for f in findings]}))
    else:
        for f in findings:
            typer.echo(f"{f.rule} {f.message} [{f.reference}]")
        typer.echo(f"{len(findings)} finding(s) in {path}")
    return 1 if findings else 0


def register(app: typer.Typer) -> None:
    """Attach ``check`` to the main app."""
    app.command("check")(check_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {"check": "receval check examples/quickstart.toml --json"}
