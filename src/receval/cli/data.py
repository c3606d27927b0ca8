"""``receval data ...``: statistics of a data set and downloads of known ones."""

from __future__ import annotations

import typer

data_app = typer.Typer(help="Inspect and fetch data sets.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Attach the ``data`` command group to the main app."""
    app.add_typer(data_app, name="data")
