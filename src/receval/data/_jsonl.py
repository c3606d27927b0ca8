"""JSON-lines files (one JSON object a line) as Arrow tables, and the Yelp Open Dataset written that way.

The one JSON-lines parser of receval: :func:`receval.data.load` and the table reader
(:func:`receval.data.tables.read_located`, behind every ``--format`` and
``--truth-format``) both read Yelp through :func:`read_yelp`, so that a Yelp folder gives
the same (user, item, rating) rows, ids as written, whichever reads it.

Arrow's JSON reader parses the file on several threads with the fields' types fixed up
front (the other fields of a record are skipped unread), but it names no line when it
fails; only then does a second scan with :mod:`json` find the first bad line, and a line
number is counted only for a message. Lines are 1-based, as an editor shows them; blank
lines hold no record.

>>> import json, tempfile, pathlib
>>> import pyarrow as pa
>>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
>>> _ = path.write_text(json.dumps({"user_id": "u", "stars": 4}) + "\\n\\n" + json.dumps({"user_id": "v"}) + "\\n")
>>> read_lines(path, {"user_id": pa.string(), "stars": pa.float64()})
Traceback (most recent call last):
...
receval.errors.DataError: .../r.json, line 3, column stars: stars is missing
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from receval.data import _arrow, _source
from receval.data.formats import YELP_BUSINESSES, YELP_FIELDS, YELP_REVIEWS
from receval.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Yelp", "line_number", "read_lines", "read_yelp"]


class Yelp(NamedTuple):
    """A Yelp Open Dataset release as :func:`read_yelp` read and checked it."""

    reviews: pa.Table
    """``user``, ``item``, ``rating``, ``timestamp`` (Unix seconds; text when a date is not Yelp's own layout)."""
    path: Path
    """The review file."""
    line_of: Callable[[int], int | None]
    """The line of the review file holding review ``row`` (0-based)."""
    businesses: pa.Table
    """The business file's ``business_id`` and ``categories`` (comma-separated text, or null)."""


def read_lines(
    path: Path, fields: Mapping[str, Any], optional: Collection[str] = ()
) -> tuple[pa.Table, Callable[[int], int | None]]:
    """The ``fields`` of a JSON-lines file as an Arrow table, other fields ignored, and ``line_of(row)``.

    Parameters
    ----------
    path
        The file (compressed or not: :mod:`receval.data._source`).
    fields
        Field name -> Arrow type (``pa.string()`` for text, ``pa.float64()`` for a number).
    optional
        Fields that may be null or absent; every other field must be present in every record.

    Returns
    -------
    tuple of (pyarrow.Table, callable)
        One column per field, in order; ``line_of(row)`` is the line of record ``row``.

    Raises
    ------
    DataError
        At the first line that is not a JSON object, or whose field is missing or of the
        wrong kind; for a file without records.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pyarrow as pa
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "b.json"
    >>> _ = path.write_text('{"id": "a", "n": 2, "x": [1]}\\n\\n{"id": "b", "n": 3}\\n')
    >>> table, line_of = read_lines(path, {"id": pa.string(), "n": pa.float64()})
    >>> table.to_pydict(), line_of(1)
    ({'id': ['a', 'b'], 'n': [2.0, 3.0]}, 3)
    """
    import pyarrow as pa
    import pyarrow.json as pa_json

    schema = pa.schema(list(fields.items()))
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        with _source.arrow_input(path) as source:
            table = pa_json.read_json(source, parse_options=options)
    except pa.ArrowInvalid as err:
        _first_bad_line(path, fields, optional)
        raise DataError(f"cannot read it as JSON lines ({err}); each line must be one JSON object", path=path) from None
    if table.num_rows == 0:
        raise DataError("has no JSON lines; the file needs one object per line", path=path, line=1)
    for name in fields:
        column = table[name]
        if column.null_count and name not in optional:
            row = int(np.flatnonzero(np.asarray(column.is_null()))[0])
            raise DataError(f"{name} is missing", path=path, line=line_number(path, row), column=name)
    return table, lambda row: line_number(path, row)


def line_number(path: Path, row: int) -> int | None:
    """The line (1-based) of the ``row``-th JSON object of a file (blank lines hold none), None past the end.

    Returns
    -------
    int or None
        The line number.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"a": 1}\\n\\n{"a": 2}\\n')
    >>> line_number(path, 1), line_number(path, 2)
    (3, None)
    """
    with _source.open_binary(path) as fh:
        seen = -1
        for number, raw in enumerate(fh, start=1):
            if raw.strip():
                seen += 1
                if seen == row:
                    return number
    return None


def _first_bad_line(path: Path, fields: Mapping[str, Any], optional: Collection[str]) -> None:
    """Raise a DataError at the first line that is not a JSON object with the ``fields`` of the right kind."""
    import json

    import pyarrow as pa

    with _source.open_binary(path) as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
                raise DataError(f"not a JSON object: {getattr(err, 'msg', err)}", path=path, line=number) from None
            if not isinstance(record, dict):
                raise DataError(f"a JSON {type(record).__name__}, not an object", path=path, line=number)
            for name, kind in fields.items():
                value = record.get(name)
                if value is None:
                    if name in optional:
                        continue
                    raise DataError(f"{name} is missing", path=path, line=number, column=name)
                number_wanted = pa.types.is_floating(kind)
                if number_wanted and (isinstance(value, bool) or not isinstance(value, int | float)):
                    raise DataError(f"{name} {value!r} is not a number", path=path, line=number, column=name)
                if not number_wanted and not isinstance(value, str):
                    raise DataError(f"{name} {value!r} is not text", path=path, line=number, column=name)


def read_yelp(path: Path) -> Yelp:
    """The Yelp Open Dataset's reviews (user, business, stars, date) and its businesses' categories, checked.

    Parameters
    ----------
    path
        The folder holding ``yelp_academic_dataset_review.json`` and
        ``yelp_academic_dataset_business.json`` (Yelp's names), or the review file, with
        the business file beside it.

    Returns
    -------
    Yelp
        The reviews in receval's columns, ids as written (Arrow text), dates in Yelp's
        ``YYYY-MM-DD hh:mm:ss`` as Unix seconds (UTC); the businesses' categories.

    Raises
    ------
    DataError
        For a missing file, a bad line (named by file, line and field), a business
        listed twice, a review of a business the business file lacks.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> review = {"user_id": "007", "business_id": "b", "stars": 4, "date": "2016-03-09 00:44:42"}
    >>> _ = (folder / YELP_REVIEWS).write_text(json.dumps(review) + "\\n")
    >>> _ = (folder / YELP_BUSINESSES).write_text(json.dumps({"business_id": "b", "categories": "Pizza"}) + "\\n")
    >>> read_yelp(folder).reviews.to_pydict()
    {'user': ['007'], 'item': ['b'], 'rating': [4.0], 'timestamp': [1457484282]}
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    reviews = path / YELP_REVIEWS if path.is_dir() else path
    if not reviews.is_file():
        what = f"no {YELP_REVIEWS} in this folder" if path.is_dir() else "no such file or folder"
        raise DataError(f"{what}; format yelp expects the folder of the Yelp Open Dataset's JSON files "
                        f"({YELP_REVIEWS} and {YELP_BUSINESSES})", path=path)  # fmt: skip
    businesses = reviews.parent / YELP_BUSINESSES
    if not businesses.is_file():
        raise DataError(f"{YELP_BUSINESSES} is missing beside {reviews.name}: format yelp reads the business "
                        "categories as item aspects; put the release's business file in the folder",
                        path=businesses)  # fmt: skip
    kinds = {"user_id": pa.string(), "business_id": pa.string(), "stars": pa.float64(), "date": pa.string()}
    table, line_of = read_lines(reviews, {name: kinds[name] for name in YELP_FIELDS})
    known, _ = read_lines(businesses, {"business_id": pa.string(), "categories": pa.string()}, optional={"categories"})
    ids = _arrow.text(known["business_id"])
    order = np.argsort(ids, kind="stable")
    repeated = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if repeated.size:
        raise DataError(f"business_id {ids[order][repeated[0]]!r} is listed twice; keep one line per business",
                        path=businesses, line=line_number(businesses, int(order[repeated[0] + 1])))  # fmt: skip
    unknown = ~np.asarray(pc.is_in(table["business_id"], value_set=known["business_id"]))  # Arrow's hash set
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        business = table["business_id"][row].as_py()
        raise DataError(f"business_id {business!r} is not in {YELP_BUSINESSES} ({int(unknown.sum())} reviews of "
                        "unknown businesses); use the review and business files of the same Yelp release",
                        path=reviews, line=line_of(row), column="business_id")  # fmt: skip
    date = table["date"]
    try:  # the Open Dataset's "2016-03-09 00:44:42"; other text is left to the loader's general date reader
        date = pc.cast(pc.strptime(date, format="%Y-%m-%d %H:%M:%S", unit="s"), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    columns = {YELP_FIELDS[name]: date if name == "date" else table[name] for name in table.column_names}
    return Yelp(pa.table(columns), reviews, line_of, known)
