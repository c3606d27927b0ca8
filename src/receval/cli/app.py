"""Entry point of the ``receval`` command.

Each command module exposes ``register(app)``; :data:`COMMAND_MODULES` lists them.
Errors of the :class:`~receval.errors.ReceValError` family print their message and
exit with status 2, never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import typer

from receval.errors import ReceValError

app = typer.Typer(
    name="receval",
    help="Rigorous offline evaluation of recommender systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

COMMAND_MODULES: tuple[str, ...] = (
    "receval.cli.data",
    "receval.cli.demo",
    "receval.cli.coherence",
    "receval.cli.run",
    "receval.cli.evaluate",
    "receval.cli.recommend",
    "receval.cli.metaeval",
    "receval.cli.simulate",
    "receval.cli.report",
    "receval.cli.attack",
)

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


@app.command("version")
def version_command() -> None:
    """Print receval's version."""
    from receval import __version__

    typer.echo(__version__)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input or usage)."""
    try:
        result = app(args=list(argv) if argv is not None else None, standalone_mode=False)
    except ReceValError as err:
        typer.echo(f"error: {err}", err=True)
        return 2
    except typer.TyperException as err:  # usage errors (typer vendors click)
        err.show()
        return getattr(err, "exit_code", 2)
    except typer.Exit as err:
        return err.exit_code
    except typer.Abort:
        typer.echo("aborted", err=True)
        return 1
    return result if isinstance(result, int) else 0


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
