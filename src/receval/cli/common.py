"""Helpers shared by every command that reads data, so all accept the same format names.

A command takes ``PATH`` and ``--format`` (help text :data:`FORMAT_HELP`: the names of
:data:`receval.data.formats.FORMATS`, the same for every command; without it the format
is told from the file) and calls ``load_data`` (:func:`receval.data.load`; its options
left as None count as not given) or ``table_reader`` (:func:`receval.data.tables.read_table`);
an unknown format or a malformed file raises :class:`~receval.errors.DataError`, which
the CLI prints as ``error: ...`` with exit status 2.

Examples
--------
>>> validate_format("CSV")
'csv'
>>> "movielens-100k" in FORMAT_HELP
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from receval.data.formats import FORMATS
from receval.errors import ConfigError

if TYPE_CHECKING:
    from receval.data.interactions import Interactions

__all__ = [
    "FORMAT_HELP",
    "SCALE_HELP",
    "TABLE_FORMAT_HELP",
    "AspectsOption",
    "DataOption",
    "FormatOption",
    "ItemColumn",
    "NoHeader",
    "RankColumn",
    "RatingColumn",
    "ScaleOption",
    "ScoreColumn",
    "TimestampColumn",
    "UserColumn",
    "id_text",
    "json_value",
    "load_data",
    "load_pair",
    "load_with_aspects",
    "one_of",
    "table_reader",
    "validate_format",
]

_Choice = TypeVar("_Choice", bound=str)

FORMAT_HELP = (
    "Format (default: from the extension, then the content): " + ", ".join(FORMATS) + ", an alias "
    "(tab, pq, json, qrels, ml100k, ...) or a known data set's name (ml-100k, ..., cm100k: `receval data list`)."
)
TABLE_FORMAT_HELP = FORMAT_HELP  # --truth-format and --recs-format take the same names as --format
# The column options every command that reads tables accepts (they apply to every table it reads).
UserColumn = Annotated[str | None, typer.Option("--user", help="User column (default user; user_id, q_id found).")]
ItemColumn = Annotated[str | None, typer.Option("--item", help="Item column (default item; item_id found).")]
RatingColumn = Annotated[str | None, typer.Option("--rating", help="Rating (grade) column of the truth.")]
ScoreColumn = Annotated[str | None, typer.Option("--score", help="Score column of the recommendations.")]
RankColumn = Annotated[str | None, typer.Option("--rank", help="Rank column of the recommendations.")]
TimestampColumn = Annotated[str | None, typer.Option("--timestamp", help="Timestamp column.")]
NoHeader = Annotated[
    bool,
    typer.Option(
        "--no-header", help="Text tables have no header: columns user, item, rating|score, timestamp in order."
    ),
]


def table_reader(
    *,
    user: str | None = None,
    item: str | None = None,
    rating: str | None = None,
    score: str | None = None,
    rank: str | None = None,
    timestamp: str | None = None,
    no_header: bool = False,
) -> Callable[..., Any]:
    """``read(path, kind, required, fmt=None, option=..., label=...)``: :func:`read_table` with a command's columns.

    ``kind`` is what the file holds (``"truth"``, ``"recommendations"``, ...); ``label``
    names it in messages (default: the kind).
    """
    names = {"user": user, "item": item, "rating": rating, "score": score, "rank": rank, "timestamp": timestamp}
    columns = {role: name for role, name in names.items() if name is not None}
    header = False if no_header else None

    def read(
        path: Path, kind: str, required: tuple[str, ...], fmt: str | None = None, option: str = "--format", **kw: Any
    ) -> Any:
        from receval.data.tables import read_table

        return read_table(path, kind, required, format=fmt, columns=columns, header=header, option=option, **kw)

    return read


SCALE_HELP = "Rating scale LOW..HIGH[:STEP], e.g. 1..5 or 0.5..5:0.5 (known formats declare theirs)."
# The data options of the commands that read one data set (``--data PATH --format NAME``).
DataOption = Annotated[Path, typer.Option("--data", help="The data set's folder (multi-file formats) or file.")]
FormatOption = Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)]
ScaleOption = Annotated[str | None, typer.Option("--scale", help=SCALE_HELP)]
AspectsOption = Annotated[
    Path | None,
    typer.Option(
        "--aspects",
        help="Item attributes: a CSV/TSV with columns item,aspect (one row per pair; '|' separates several).",
    ),
]


def load_data(path: str | Path, format: str | None, *, no_header: bool = False, **options: Any) -> Interactions:
    """:func:`receval.data.load` (imported when a command reads data, not with the command line).

    ``format`` None: told from the file, as every reader tells it.

    ``no_header``: the file has positional columns user, item, rating[, timestamp]
    (``--no-header``), which a column option given with it contradicts (a ConfigError).
    """
    if no_header:
        given = [f"--{k}" for k in ("user", "item", "rating", "timestamp") if options.get(k) is not None]
        if given:
            raise ConfigError(
                f"{given[0]} names a header's column, --no-header reads positional columns "
                "user, item, rating[, timestamp]: give one or the other"
            )
        options["header"] = False
    from receval.data.formats import check_format
    from receval.data.loaders import load

    return load(path, None if format is None else check_format(format, "--format", path), **options)


def load_with_aspects(data: Path, format: str, aspects: Path | None, scale: str | None) -> Interactions:
    """:func:`load_data` with the items' attributes of ``--aspects`` (when given) in place of the data's own."""
    inter = load_data(data, format, scale=scale)
    if aspects is not None:
        from receval.data.tables import read_aspects

        inter = inter.with_aspects(read_aspects(aspects, inter.item_ids))
    return inter


def load_pair(
    train: Path, test: Path, format: str | None, *, no_header: bool = False, **options: Any
) -> tuple[Interactions, Interactions]:
    """Training and test ratings (``--train``, ``--test``), read by :func:`load_data` so that their ids compare.

    Ids are read as written; a file whose ids are all integers holds them as integers.
    When one file's ids are integers and the other's text (``7`` beside ``007``),
    both are read as text, so that an id matches only the same spelling.
    """
    first = load_data(train, format, no_header=no_header, **options)
    second = load_data(test, format, no_header=no_header, **options)
    if _integer_ids(first) != _integer_ids(second):
        options["ids_as_str"] = True
        first = load_data(train, format, no_header=no_header, **options)
        second = load_data(test, format, no_header=no_header, **options)
    return first, second


def _integer_ids(data: Interactions) -> tuple[bool, bool]:
    return data.user_ids.dtype.kind in "iu", data.item_ids.dtype.kind in "iu"


def one_of(value: str, choices: tuple[_Choice, ...], option: str) -> _Choice:
    """``value`` as the one of ``choices`` it equals (typed as them), else a ConfigError naming ``option``.

    >>> one_of("holm", ("holm", "bh"), "--correction")
    'holm'
    >>> one_of("fdr", ("holm", "bh"), "--correction")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: --correction must be one of holm, bh; got 'fdr'
    """
    for choice in choices:
        if value == choice:
            return choice
    raise ConfigError(f"{option} must be one of {', '.join(choices)}; got {value!r}")


def validate_format(fmt: str) -> str:
    """The normalised format name of ``--format``; a DataError listing the valid names otherwise."""
    from receval.data.formats import check_format

    return check_format(fmt, "--format")


def json_value(value: Any) -> Any:
    """``value`` as JSON writes it: NaN as None (``null``), a numpy scalar as Python's.

    >>> import numpy as np
    >>> json_value(np.float64("nan")), json_value(np.float64(0.5)), json_value(None)
    (None, 0.5, None)
    """
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def id_text(value: Any) -> str:
    """A user's or item's id as the key of a JSON object (a numpy scalar as Python's, then as text).

    >>> import numpy as np
    >>> id_text(np.int64(7)), id_text("u1")
    ('7', 'u1')
    """
    import numpy as np

    return str(value.item() if isinstance(value, np.generic) else value)
