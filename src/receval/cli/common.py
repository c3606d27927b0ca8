"""Helpers shared by every command that reads data, so all accept the same format names.

A command takes ``PATH`` and ``--format`` (help text :data:`FORMAT_HELP`) and calls
``load_data`` (:func:`receval.data.load`, the one validated loader; its options left
as None count as not given); an unknown format or a malformed file raises
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

from receval.data.loaders import FORMATS, check_format
from receval.data.loaders import load as load_data

__all__ = ["FORMAT_HELP", "SCALE_HELP", "load_data", "validate_format"]

FORMAT_HELP = (
    "Data format: " + ", ".join(FORMATS) + ", or a known data set's name (ml-100k, ..., cm100k: `receval data list`)."
)
SCALE_HELP = "Rating scale LOW..HIGH[:STEP], e.g. 1..5 or 0.5..5:0.5 (known formats declare theirs)."


def validate_format(fmt: str) -> str:
    """The normalised format name; a DataError listing the valid names otherwise."""
    return check_format(fmt)
