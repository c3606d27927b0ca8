"""Helpers shared by every command that reads data, so all accept the same format names.

A command takes ``PATH`` and ``--format`` (help text :data:`FORMAT_HELP`) and calls
:func:`load_data`; an unknown format or a malformed file raises
:class:`~receval.errors.DataError`, which the CLI prints as ``error: ...`` with exit
status 2.

Examples
--------
>>> validate_format("CSV")
'csv'
>>> "movielens-100k" in FORMAT_HELP
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from receval.data.interactions import Interactions
from receval.data.loaders import FORMATS, check_format, load

__all__ = ["FORMAT_HELP", "SCALE_HELP", "load_data", "validate_format"]

FORMAT_HELP = "Data format: " + ", ".join(FORMATS) + "."
SCALE_HELP = "Rating scale LOW..HIGH[:STEP], e.g. 1..5 or 0.5..5:0.5 (known formats declare theirs)."


def validate_format(fmt: str) -> str:
    """The normalised format name; a DataError listing the valid names otherwise."""
    return check_format(fmt)


def load_data(
    path: str | Path,
    fmt: str,
    familiar_only: bool = False,
    **options: Any,
) -> Interactions:
    """Load ``path`` in format ``fmt`` for a command (options as :func:`receval.data.load`).

    Options left as None (typer's default for an option not given) are dropped, so a
    command can pass all its optional flags through unchanged.
    """
    given = {k: v for k, v in options.items() if v is not None and v != ()}
    return load(Path(path), validate_format(fmt), familiar_only=familiar_only, **given)
