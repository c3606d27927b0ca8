"""Loaders for the rating data sets the field uses, and for ratings files in every table format.

:func:`load` reads a data set into :class:`~receval.data.interactions.Interactions`.
Format names (shared by every command and reader) are the keys of :data:`FORMATS`;
the file itself is read by the one table reader, :func:`receval.data.tables.read_located`
(Arrow's CSV and Parquet readers, no pandas for number columns), so a file ``load``
reads gives the same rows as ``receval evaluate`` reads from it. This module adds
what makes rows ratings: the rating scale (declared by a data set's format, given,
or inferred), ids as written, timestamps (numbers or dates), flags, the data sets'
side files (genres).

Ids are text exactly as written: ``007``, ``7`` and ``7.0`` are three ids. A column
whose every id is an integer written the way Python writes it (``7``, ``-3``, no
sign, space or leading zero) is kept as integers, which give the same ids and are
written back as the same text (and sort as numbers). ``ids_as_str=True`` keeps even
those as text; ``ids_as_str=False`` asks for integer ids (``007`` is then ``7``).

A problem is a :class:`~receval.errors.DataError` naming ``file, line N, column C``
(lines are 1-based and count the header, as an editor shows them; with
``header=False`` line 1 is data), or the row for Parquet.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "r.csv").write_text("user,item,rating\\nann,x,4\\nbob,x,2\\nbob,y,5\\n")
>>> data = load(folder / "r.csv", "csv")
>>> data.n_users, data.n_items, data.scale
(2, 2, RatingScale(low=2.0, high=5.0, step=1.0))
>>> _ = (folder / "ids.csv").write_text("user,item,rating\\n1,007,4\\n1,7,2\\n")
>>> load(folder / "ids.csv").item_ids.tolist(), load(folder / "ids.csv").user_ids.tolist()
(['007', '7'], [1])
>>> _ = (folder / "bad.csv").write_text("user,item,rating\\nann,x,4\\nbob,x,lots\\n")
>>> load(folder / "bad.csv", "csv")
Traceback (most recent call last):
...
receval.errors.DataError: .../bad.csv, line 3, column rating: rating 'lots' is not a number
"""

from __future__ import annotations

import csv
import logging
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from receval.data import _arrow, _source
from receval.data.formats import (
    FORMATS,
    LAYOUTS,
    YELP_FIELDS,
    YELP_SCALE,
    check_format,
    detect,
    ratings_file,
)
from receval.data.interactions import Interactions, RatingScale, distinct
from receval.data.prepare import prepare
from receval.errors import ConfigError, DataError

if TYPE_CHECKING:
    import pandas as pd

    from receval.data.tables import Located

__all__ = ["FORMATS", "ML100K_GENRES", "check_format", "load", "load_user_features", "parse_scale"]


ML100K_GENRES: tuple[str, ...] = (
    "unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama",
    "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western",
)  # fmt: skip
"""The 19 genres of MovieLens 100K in flag order (used when ``u.genre`` is absent)."""

_NO_GENRE = "(no genres listed)"
_log = logging.getLogger(__name__)
_OWN_COLUMNS = ("csv", "tsv", "parquet")  # the formats whose column names a caller may give
# an integer id written as Python writes it (and at most 18 digits: within int64): its text round-trips
_CANONICAL_INT = re.compile(r"(0|-?[1-9][0-9]{0,17})\Z")
_PARSED_BY_ARROW = 100_000  # distinct ids from which pyarrow.compute (about 35 ms to import) reads them faster
_POSITIONAL = ("user", "item", "rating", "timestamp")


# ---------------------------------------------------------------- public entry points
def load(
    path: str | Path,
    format: str | None = None,
    *,
    user: str | None = None,
    item: str | None = None,
    rating: str | None = None,
    timestamp: str | None = None,
    extra: Sequence[str] = (),
    scale: RatingScale | Sequence[float] | str | None = None,
    sep: str | None = None,
    familiar_only: bool = False,
    ids_as_str: bool | None = None,
    header: bool | None = None,
    genres: bool = True,
) -> Interactions:
    """Read a data set into :class:`Interactions`.

    Parameters
    ----------
    path
        The data set's folder for the data set formats (MovieLens, CM100k; its
        ratings file, or a folder one level above it, is accepted too; Yelp: the
        folder of its JSON files, or its review file), or the file.
    format
        One of :data:`FORMATS` or an alias (``tab``, ``ml100k``, a data set's name such
        as ``ml-100k``: :func:`check_format`). By default told from the file's extension,
        then its first lines (:func:`receval.data.formats.detect`; a headerless
        tab-separated file of numbers such as ``u1.base`` is read as such, with the scale
        inferred: name ``movielens-100k`` for its declared scale and genres; Yelp's review
        file is told by its name).
    user, item, rating, timestamp
        Column names of a csv/tsv/parquet file (defaults ``user``, ``item``,
        ``rating``, and ``timestamp`` when such a column exists; LensKit's, RecBole's
        and MovieLens' names are found too). Timestamps may be integers or dates
        (converted to Unix seconds). A file of only user, item and timestamp columns
        is an implicit-feedback log: each row rated 1, on the scale 1..1.
    extra
        Further per-row columns to keep (csv/tsv/parquet); a column named
        ``familiar`` becomes a boolean flag (0/1, true/false).
    scale
        The rating scale: a :class:`RatingScale`, ``(low, high[, step])`` or a string
        ``"low..high[:step]"``. Data set formats have a declared scale (MovieLens
        100K/1M 1..5 step 1; 10M/20M/25M/latest 0.5..5 step 0.5; CM100k 1..4 step 1);
        other files infer it from the data when not given. A rating off the scale
        is an error naming its line.
    sep
        Field separator of a csv/tsv file (default ``,`` and tab).
    familiar_only
        Keep only the rows whose ``familiar`` flag is set (CM100k's "Familiar
        CM100k"), re-indexing users and items to those that remain: the same as
        :func:`receval.data.prepare.prepare` with ``familiar_only=True``.
    ids_as_str
        None (default): ids exactly as written, kept as integers when every id of
        the column is an integer written canonically (so the same ids either way).
        True: always text. False: integer ids asked for (``007`` and ``7`` are then
        one id; an id that is not an integer is an error).
    header
        Whether a csv/tsv file starts with a header line (default: detected, as
        every reader detects it). ``False``: the columns are positional,
        ``user, item, rating[, timestamp]`` (3 or 4 fields a line; line 1 is data),
        as in MovieLens' ``u.data`` (Harper & Konstan, 2015); column names and
        ``extra`` then do not apply.
    genres
        Read a MovieLens data set's item genres as its aspects (default). ``False`` leaves
        the side file unread, for work that never reads aspects (ranking and predicting
        ratings): MovieLens 100K's ``u1.base`` loads in 0.05 s without pandas instead of 0.2 s.

    Returns
    -------
    Interactions
        Repeated (user, item) pairs are kept (see ``n_duplicates``). Item aspects
        (MovieLens genres, Yelp's business categories) cover the rated items only;
        ``n_items`` counts rated items.

    Raises
    ------
    DataError
        For an unknown format, a missing file or column, a malformed line (wrong
        number of fields, non-numeric or off-scale rating), an empty or header-only
        file: the message names the file, the line and the column.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "ratings.csv"
    >>> _ = p.write_text("user,item,rating\\n1,10,4\\n1,11,2\\n2,10,5\\n")
    >>> data = load(p)
    >>> data.n_users, data.n_items, len(data)
    (2, 2, 3)
    """
    path = Path(path)
    if format is None:
        fmt = _detected(path)
    else:
        fmt = check_format(format, path=path)
    declared = parse_scale(scale)
    names = {"user": user, "item": item, "rating": rating, "timestamp": timestamp}
    if fmt not in _OWN_COLUMNS:
        given = [k for k, v in {**names, "sep": sep}.items() if v is not None] + (["extra"] if extra else [])
        if given:
            raise DataError(
                f"options {given} apply only to the csv, tsv and parquet formats; {fmt} has a fixed layout",
                path=path,
            )
    if header is False:
        if fmt not in ("csv", "tsv"):
            raise DataError(f"header=False applies only to the csv and tsv formats, not {fmt}", path=path,
                            parameters=["header"])  # fmt: skip
        given = [k for k, v in names.items() if v is not None] + (["extra"] if extra else [])
        if given:
            raise ConfigError(
                f"{given[0]}= names a header's column; a file without a header (header=False) has positional "
                "columns user, item, rating[, timestamp]: give one or the other"
            )
    if fmt in LAYOUTS:
        data = _load_data_set(path, fmt, declared, ids_as_str, genres)
    elif fmt == "yelp":
        data = _load_yelp(path, declared, ids_as_str)
    else:
        if path.is_dir():
            raise DataError(f"a folder: format {fmt} expects the path of one file", path=path)
        if not path.exists():
            raise DataError(f"no such file: format {fmt} expects the path of one file", path=path)
        columns = {role: name for role, name in names.items() if name is not None}
        located = _read(path, fmt, columns=columns, header=header, sep=sep, extra=tuple(extra))
        data = _interactions(located, _source.stem(path), declared, ids_as_str, tuple(extra), columns=columns)
        del located
    _return_reader_memory()
    if familiar_only:
        if "familiar" not in data.extra:
            raise DataError(
                "familiar_only needs a 'familiar' flag, which this data does not have "
                "(CM100k has it; for a generic file name the column with extra=['familiar'])",
                path=path,
            )
        data = prepare(data, familiar_only=True)
    _log.info("loaded %s (%s): %d ratings by %d users of %d items", path, fmt, data.n_ratings, data.n_users,
              data.n_items)  # fmt: skip
    return data


def _return_reader_memory() -> None:
    """Give back to the system the pages Arrow's allocator kept from the table just read and freed.

    Arrow's pool (mimalloc) keeps freed pages for its next allocation; the arrays that follow a read come
    from malloc, so those pages would only add to every later peak: 0.22 GB after reading 5M ratings.
    """
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _detected(path: Path) -> str:
    """The format of a file told by :func:`~receval.data.formats.detect`; a folder needs its format named."""
    if path.is_dir():
        raise DataError(f"a folder: name its format with format= (one of {', '.join([*LAYOUTS, 'yelp'])})", path=path,
                        parameters=["format"])  # fmt: skip
    if not path.exists():
        raise DataError("no such file", path=path)
    fmt, _ = detect(path, "ratings")
    # told from the content, u1.base is a headerless tab-separated file; only a named data set format declares more
    return "tsv" if fmt in LAYOUTS else fmt


def parse_scale(scale: RatingScale | Sequence[float] | str | None) -> RatingScale | None:
    """A :class:`RatingScale` from ``(low, high[, step])`` or ``"low..high[:step]"`` (None stays None).

    Returns
    -------
    RatingScale or None
        The scale (a RatingScale given stays as it is), or None for ``None``; a DataError for a scale it cannot read.

    Examples
    --------
    >>> parse_scale("0.5..5:0.5")
    RatingScale(low=0.5, high=5.0, step=0.5)
    >>> parse_scale((1, 4))
    RatingScale(low=1.0, high=4.0, step=None)
    """
    if scale is None or isinstance(scale, RatingScale):
        return scale
    if isinstance(scale, str):
        text = scale.strip()
        step_text = None
        if ":" in text:
            text, step_text = text.split(":", 1)
        parts = text.split("..") if ".." in text else text.split(",")
        if step_text is None and len(parts) == 3:
            parts, step_text = parts[:2], parts[2]
        try:
            values = [float(p) for p in parts] + ([float(step_text)] if step_text is not None else [])
        except ValueError:
            values = []
        if len(values) not in (2, 3):
            raise DataError(f"cannot read the rating scale {scale!r}; write it as LOW..HIGH or LOW..HIGH:STEP")
        scale = values
    values = [float(v) for v in scale]
    if len(values) not in (2, 3):
        raise DataError(f"a rating scale is (low, high) or (low, high, step), not {scale!r}")
    return RatingScale(*values)


def load_user_features(path: str | Path, format: str) -> pd.DataFrame:
    """User demographics shipped with MovieLens 100K (``u.user``) and 1M (``users.dat``).

    In 100K ``age`` is in years and ``occupation`` a name; in 1M both are the codes
    its README lists (age brackets 1, 18, 25, 35, 45, 50, 56; occupations 0–20).
    Other formats ship no user features (:class:`DataError`).

    Returns
    -------
    pandas.DataFrame
        One row per user, columns ``user``, ``age``, ``gender``, ``occupation``, ``zip``.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "u.data").write_text("1\\t10\\t4\\t881250949\\n")
    >>> _ = (folder / "u.user").write_text("1|24|M|technician|85711\\n2|53|F|other|94043\\n")
    >>> load_user_features(folder, "movielens-100k").iloc[0].to_dict()
    {'user': 1, 'age': 24, 'gender': 'M', 'occupation': 'technician', 'zip': '85711'}
    """
    import pandas as pd

    path = Path(path)
    fmt = check_format(format, path=path)
    if fmt == "movielens-100k":
        folder = ratings_file(path, fmt).parent
        rows = _read_small(folder / "u.user", "|", 5, "latin-1")
        cols = ["user", "age", "gender", "occupation", "zip"]
        frame = pd.DataFrame([r for _, r in rows], columns=cols)
        ints = ["user", "age"]
    elif fmt == "movielens-1m":
        folder = ratings_file(path, fmt).parent
        rows = _read_small(folder / "users.dat", "::", 5, None)
        frame = pd.DataFrame([r for _, r in rows], columns=["user", "gender", "age", "occupation", "zip"])
        frame = frame[["user", "age", "gender", "occupation", "zip"]]
        ints = ["user", "age", "occupation"]
    else:
        raise DataError(f"format {fmt} ships no user features (movielens-100k and movielens-1m do)", path=path)
    source = folder / ("u.user" if fmt == "movielens-100k" else "users.dat")
    for col in ints:
        num = pd.to_numeric(frame[col], errors="coerce")
        if num.isna().any():
            bad = int(np.flatnonzero(num.isna().to_numpy())[0])
            raise DataError(f"{col} {frame[col].iloc[bad]!r} is not an integer", path=source, line=rows[bad][0])
        frame[col] = num.astype(np.int64)
    return frame


# -------------------------------------------------------------- the ratings-file core
def _read(
    path: Path,
    fmt: str,
    *,
    columns: dict[str, str] | None = None,
    header: bool | None = None,
    sep: str | None = None,
    extra: tuple[str, ...] = (),
) -> Located:
    """The ratings table as the one table reader reads it (kind ``train``); positional columns checked.

    A file of only users, items, timestamps and the ``extra`` columns asked for (an implicit-feedback log)
    has no rating column: each row is read as rated 1 (:func:`_interactions`). A file with any other column,
    or a rating column named in ``columns``, must have its ratings found, as before: that column may hold
    them under another name.
    """
    from receval.data.tables import read_located

    if header is not False:
        found = read_located(path, "train", ("user", "item", *extra), format=fmt, columns=columns, header=header,
                             sep=sep, label="ratings")  # fmt: skip
        names = set(found.table.column_names)
        if "rating" in names or not ((columns or {}).get("rating") or names - {"user", "item", "timestamp", *extra}):
            return found
        # read again requiring the ratings: the reader's own message names the columns and how to name one
        return read_located(path, "train", ("user", "item", "rating", *extra), format=fmt, columns=columns,
                            header=header, sep=sep, label="ratings")  # fmt: skip
    located = read_located(path, "train", format=fmt, header=False, positional=_POSITIONAL, sep=sep, label="ratings")
    n = located.table.num_columns
    if n not in (3, 4):
        raise DataError(
            f"has {n} fields; a file without a header has 3 (user, item, rating) or 4 (user, item, rating, timestamp)",
            path=located.path,
            line=located.line_of(0),
        )
    return located


def _interactions(
    located: Located,
    name: str,
    scale: RatingScale | None,
    ids_as_str: bool | None,
    extra: tuple[str, ...] = (),
    *,
    columns: dict[str, str] | None = None,
    fixed_ids: bool = False,
    flag: str | None = None,
) -> Interactions:
    """Interactions from a read table: ids as written, ratings on the scale, timestamps as seconds, flags.

    ``fixed_ids``: the format numbers its users and items (a data set's layout), so a
    non-integer id is an error; ``flag``: the column that is the ``familiar`` flag.
    """
    table = located.table
    own = columns or {}
    ids = [_ids(table[role], role, own.get(role, role), located, ids_as_str, fixed_ids) for role in ("user", "item")]
    if "rating" in table.column_names:
        ratings = _arrow.numbers(table["rating"]).astype(np.float32)  # finite and within float32: checked by the reader
    else:  # an implicit-feedback log (see _read): every row rated 1, as Interactions.from_frame(rating=None) reads it
        ratings = np.ones(table.num_rows, dtype=np.float32)
    if scale is not None:
        ok = scale.valid_mask(ratings)
        if not ok.all():
            row = int(np.flatnonzero(~ok)[0])
            step = f" step {scale.step:g}" if scale.step else ""
            _fail(located, row, own.get("rating", "rating"),
                  f"rating {float(ratings[row]):g} is outside the declared scale {scale.low:g}..{scale.high:g}{step}; "
                  "fix the line or declare another scale (scale=)", ["scale"])  # fmt: skip
    stamps = None
    if "timestamp" in table.column_names:
        stamps = _timestamps(table["timestamp"], own.get("timestamp", "timestamp"), located)
    kept: dict[str, np.ndarray] = {}
    for col in extra:
        kept[col] = _flags(table[col], col, located) if col == "familiar" else _values(table[col])
    if flag is not None:
        kept["familiar"] = _flags(table[flag], flag, located)
    return Interactions.from_ids(
        ids[0], ids[1], ratings,
        scale=scale if scale is not None else RatingScale.infer(distinct(ratings)),
        timestamps=stamps, extra=kept, name=name,
    )  # fmt: skip


def _fail(located: Located, row: int, column: str, message: str, parameters: Sequence[str] = ()) -> NoReturn:
    """Raise ``message`` about data row ``row``: at its line in a text file, by row number otherwise."""
    line = located.line_of(row)
    if line is None:
        raise DataError(f"row {row + 1}: {message}", path=located.path, column=column, parameters=parameters)
    raise DataError(message, path=located.path, line=line, column=column, parameters=parameters)


def _canonical_integers(dictionary: Any) -> np.ndarray | None:
    """The ids of an Arrow text dictionary as int64 when every one is :data:`_CANONICAL_INT`, else None.

    pyarrow's compute kernels (RE2's full match, a cast) instead of a Python loop: 5M distinct ids in
    0.25 s instead of 1.8 s; below :data:`_PARSED_BY_ARROW` ids the loop is cheaper than loading them.

    >>> import pyarrow as pa
    >>> _canonical_integers(pa.array(["7", "-12", "0"])).tolist(), _canonical_integers(pa.array(["7", "007"]))
    ([7, -12, 0], None)
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    matched = pc.match_substring_regex(dictionary, "^" + _CANONICAL_INT.pattern.removesuffix(r"\Z") + "$")
    if not pc.all(pc.fill_null(matched, False)).as_py():
        return None
    return np.asarray(pc.cast(dictionary, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


def _ids(column: Any, role: str, name: str, located: Located, as_str: bool | None, fixed: bool) -> Any:
    """An id column as :meth:`Interactions.from_ids` takes it: text as written, or integers that give the same ids.

    The reader gives ids as dictionary-encoded text, so every test below looks at
    each distinct id once.
    """
    if as_str:
        return column
    chunk = column.combine_chunks()  # one chunk already (the reader combined them): no copy
    codes = _arrow.numbers(chunk.indices)
    if as_str is None and len(chunk.dictionary) >= _PARSED_BY_ARROW:
        integers = _canonical_integers(chunk.dictionary)
        if integers is not None:
            return integers[codes]
    dictionary = chunk.dictionary.to_pylist()  # the distinct ids, in Python: no compute kernels to load
    if as_str is None:
        bad = np.fromiter((_CANONICAL_INT.match(v) is None for v in dictionary), dtype=bool, count=len(dictionary))
        if not bad.any():  # every id round-trips: integers are the same ids
            return np.fromiter(map(int, dictionary), dtype=np.int64, count=len(dictionary))[codes]
        if not fixed:
            return column
        problem = "is not an integer id"
    else:  # each distinct id parsed once; int() reads 007, +7 and ' 7' as 7, as asked
        parsed = [_integer(v) for v in dictionary]
        bad = np.array([v is None for v in parsed], dtype=bool)
        if not bad.any():
            return np.asarray(parsed, dtype=np.int64)[codes]
        problem = "is not an integer id (ids_as_str=False reads integer ids)"
    row = int(np.flatnonzero(bad[codes])[0])
    _fail(located, row, name, f"{role} {column[row].as_py()!r} {problem}")


def _integer(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if -(1 << 63) <= value < 1 << 63 else None


def _timestamps(column: Any, name: str, located: Located) -> np.ndarray:
    """Timestamps as Unix seconds: integers as they are, dates (ISO 8601 or as pandas reads them) converted."""
    # numbers as written (not a date type; dictionary-encoded text has its value type)
    written = _arrow.is_numeric(column) or _arrow.is_text(getattr(column.type, "value_type", column.type))
    if not _arrow.is_numeric(column):  # dates or text: Arrow's compute kernels (loaded only then)
        column = _timestamp_numbers(column, name, located)
        if isinstance(column, np.ndarray):  # dates
            return column
    values = _arrow.numbers(column)
    if values.dtype.kind == "f":
        missing = np.isnan(values)
        if missing.any():
            _fail(located, int(np.flatnonzero(missing)[0]), name, "timestamp '' is neither an integer nor a date")
        _check_int64(values, name, located)
    elif values.dtype == np.uint64 and values.size and values.max() >= 1 << 63:  # the cast would wrap to negative
        _check_int64(values.astype(np.float64), name, located)
    stamps = values.astype(np.int64)
    if written:
        _warn_mixed_units(stamps, name, located)
    return stamps


# Unix seconds below this are dates before the year 5138; milliseconds at or above it, dates after 1973-03-03
_MILLISECONDS_FROM = 10**11
_SECONDS_FROM = 10**8  # 1973-03-03 in seconds: smaller values may be counters, not dates


def _warn_mixed_units(stamps: np.ndarray, name: str, located: Located) -> None:
    """Warn when some timestamps read as seconds of a date and others as milliseconds (a log merged from two sources).

    Both are read as seconds, so the milliseconds sort 1,000 times later and a temporal split would cut at the wrong
    place; which unit each row meant cannot be told for sure, so the file is read as written, with the two rows named.
    """
    late = stamps >= _MILLISECONDS_FROM
    if not late.any() or late.all():
        return
    seconds = np.flatnonzero(~late & (stamps >= _SECONDS_FROM))
    if not len(seconds):
        return
    ms = int(np.flatnonzero(late)[0])

    def at(row: int) -> str:
        line = located.line_of(row)
        return f"line {line}" if line is not None else f"row {row + 1}"

    warnings.warn(
        f"{located.path}, column {name}: timestamps mix seconds ({stamps[seconds[0]]}, {at(int(seconds[0]))}) and "
        f"milliseconds ({stamps[ms]}, {at(ms)}); all are read as seconds: give every timestamp in one unit",
        UserWarning,
        stacklevel=2,
    )


def _check_int64(values: np.ndarray, name: str, located: Located, rows: np.ndarray | None = None) -> None:
    """Refuse a float timestamp that int64 cannot hold: the cast would give -2^63 (inf and 1e20 alike), silently.

    ``rows`` are the data rows of ``values`` when they are some of the column's.
    """
    with np.errstate(invalid="ignore"):
        outside = ~(np.abs(values) < 2.0**63)  # NaN included
    if outside.any():
        at = int(np.flatnonzero(outside)[0])
        row = at if rows is None else int(rows[at])
        _fail(located, row, name, f"timestamp {values[at]:g} is outside the 64-bit range of Unix seconds "
              "(±9.2e18); give seconds (or a date) within it")  # fmt: skip


def _timestamp_numbers(column: Any, name: str, located: Located) -> Any:
    """A timestamp column that is not numbers: dates as seconds, integer text as integers (else :func:`_dates`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_date(kind) or pa.types.is_timestamp(kind):  # whole seconds, as a float column's are cut
        seconds = pc.cast(column, pa.timestamp("s", tz=getattr(kind, "tz", None)), safe=False)
        column = pc.cast(seconds, pa.int64())
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_dictionary(kind):
        text = pc.utf8_trim_whitespace(pc.cast(column, pa.string()))
        try:
            column = pc.cast(text, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return _dates(text.to_pylist(), name, located)
    else:
        _fail(located, 0, name, f"timestamp column of type {kind}: timestamps are integers or dates")
    return column


def _dates(values: list[Any], name: str, located: Located) -> np.ndarray:
    """Dates (and integers among them) as Unix seconds (UTC); the first that is neither is an error at its line."""
    import pandas as pd

    from receval.data.tables import is_time

    for row, text in enumerate(values):
        if text is None or not is_time(text):
            _fail(located, row, name, f"timestamp {text or ''!r} is neither an integer nor a date")
    series = pd.Series(values, dtype=object)
    numbers = pd.to_numeric(series, errors="coerce")
    is_number = numbers.notna() | series.str.strip().str.lower().isin(("nan", "+nan", "-nan")).to_numpy()
    _check_int64(numbers[is_number].to_numpy(dtype=np.float64), name, located, np.flatnonzero(is_number))
    try:
        dates = pd.to_datetime(series.where(~is_number), utc=True, format="ISO8601")
    except ValueError:
        dates = pd.to_datetime(series.where(~is_number), utc=True, format="mixed")
    # the epoch in the dates' own unit: pandas keeps a date past 2262 (or before 1677) in µs or s, not ns
    seconds = (dates - pd.Timestamp(0, tz="UTC").as_unit(dates.dt.unit)) // pd.Timedelta(1, "s")
    return numbers.where(is_number, seconds).to_numpy(dtype=np.int64)


def _flags(column: Any, name: str, located: Located) -> np.ndarray:
    """A familiar/known flag as booleans: 0/1 or true/false (any case); anything else is an error at its line."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(column.type):
        if column.null_count:
            _fail(located, int(np.flatnonzero(_arrow.text(column) == None)[0]), name, "flag '' is not 0 or 1")  # noqa: E711
        return np.asarray(column.to_pylist(), dtype=bool)
    text = pc.utf8_lower(pc.utf8_trim_whitespace(pc.cast(column, pa.string())))
    values = _arrow.text(text)
    truth = {"0": False, "1": True, "false": False, "true": True}
    for row, value in enumerate(values):
        if value not in truth:
            _fail(located, row, name, f"flag {value or ''!r} is not 0 or 1")
    return np.fromiter((truth[v] for v in values), dtype=bool, count=len(values))


def _values(column: Any) -> np.ndarray:
    """An extra column as numpy: numbers as numbers, anything else as Python values."""
    return _arrow.numbers(column) if _arrow.is_numeric(column) else _arrow.text(column)


# ------------------------------------------------------------------------- formats
def _load_data_set(
    path: Path, fmt: str, scale: RatingScale | None, ids_as_str: bool | None, genres: bool = True
) -> Interactions:
    """A data set format: its ratings file in the published layout, its declared scale, its genres (``genres``)."""
    layout = LAYOUTS[fmt]
    if fmt == "cm100k" and not path.exists():
        raise DataError("no such file or folder (format cm100k expects the CM100k folder)", path=path)
    if fmt == "cm100k" and path.is_dir() and not any((path / f).is_file() for f in layout.files):
        raise DataError(
            "no data.txt (authors' copy) or ratings.txt (release) in this folder; "
            "give the CM100k folder or its ratings file",
            path=path,
        )
    located = _read(ratings_file(path, fmt), fmt)
    declared = scale or RatingScale(*layout.scale)
    flag = "known" if "known" in (layout.names or ()) else None
    data = _interactions(located, fmt, declared, ids_as_str, fixed_ids=True, flag=flag)
    folder = located.path.parent
    if not genres:
        return data
    if fmt == "movielens-100k":
        return _attach_aspects(data, _ml100k_genres(folder))
    side = folder / ("movies.dat" if layout.sep == "::" else "movies.csv")
    if fmt == "cm100k" or not side.is_file():
        return data
    return _attach_aspects(data, _ml_dat_genres(side) if layout.sep == "::" else _ml_csv_genres(side))


def _ml100k_genres(folder: Path) -> list[tuple[int, str]]:
    if not (folder / "u.item").is_file():
        return []
    genres = _ml100k_genre_names(folder / "u.genre")
    pairs = []
    for number, fields in _read_small(folder / "u.item", "|", 5 + len(genres), "latin-1"):
        movie = _int_field(fields[0], folder / "u.item", number, "movie id")
        for name, flag in zip(genres, fields[5:], strict=True):
            if flag.strip() not in ("0", "1"):
                raise DataError(f"genre flag {flag!r} is not 0 or 1", path=folder / "u.item", line=number, column=name)
            if flag.strip() == "1":
                pairs.append((movie, name))
    return pairs


def _ml100k_genre_names(path: Path) -> tuple[str, ...]:
    if not path.is_file():
        return ML100K_GENRES
    names: dict[int, str] = {}
    for number, fields in _read_small(path, "|", 2, "latin-1"):
        names[_int_field(fields[1], path, number, "genre index")] = fields[0]
    if sorted(names) != list(range(len(names))):
        raise DataError(f"genre indices {sorted(names)} are not 0..{len(names) - 1}", path=path)
    return tuple(names[j] for j in range(len(names)))


def _ml_dat_genres(movies: Path) -> list[tuple[int, str]]:
    pairs = []
    for number, fields in _read_small(movies, "::", 3, None, at_least=True):
        movie = _int_field(fields[0], movies, number, "movie id")
        pairs += [(movie, g) for g in fields[-1].split("|") if g and g != _NO_GENRE]
    return pairs


def _ml_csv_genres(movies: Path) -> list[tuple[int, str]]:
    pairs = []
    with open(movies, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh)
        next(reader, None)  # header movieId,title,genres
        for fields in reader:
            if not any(fields):
                continue
            number = reader.line_num
            if len(fields) != 3:
                raise DataError(f"has {len(fields)} fields, expected 3 (movieId,title,genres)", path=movies,
                                line=number)  # fmt: skip
            movie = _int_field(fields[0], movies, number, "movieId")
            pairs += [(movie, g) for g in fields[2].split("|") if g and g != _NO_GENRE]
    return pairs


# ---------------------------------------------------------------------------- Yelp
def _load_yelp(path: Path, scale: RatingScale | None, ids_as_str: bool | None) -> Interactions:
    """The Yelp Open Dataset: reviews as ratings (ids as written), business categories as item aspects."""
    located = _read(path, "yelp")  # the table reader's Yelp, as --truth-format yelp reads it
    data = _interactions(located, "yelp", scale or RatingScale(*YELP_SCALE), True if ids_as_str is None else ids_as_str,
                         columns={role: field for field, role in YELP_FIELDS.items()})  # fmt: skip
    businesses = located.businesses
    if businesses is None or businesses["categories"].null_count == businesses.num_rows:
        return data
    return data.with_aspects(_yelp_aspects(businesses, data.item_ids))


def _yelp_aspects(businesses: Any, item_ids: np.ndarray) -> pd.DataFrame:
    """Item -> category pairs of the rated businesses (Yelp writes ``"Restaurants, Pizza"``), split by Arrow.

    The items are the data's own ids (integers too, with ``ids_as_str=False``), matched by their text.
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    at = pc.index_in(businesses["business_id"], value_set=pa.array(item_ids.astype(str), pa.string())).combine_chunks()
    categories = businesses["categories"].combine_chunks()
    kept = pc.and_(at.is_valid(), categories.is_valid())  # rated businesses with categories
    parts = pc.split_pattern(categories.filter(kept), ",")
    rows = _arrow.numbers(at.filter(kept).take(pc.list_parent_indices(parts)))
    frame = pd.DataFrame(
        {"item": item_ids[rows], "aspect": _arrow.text(pc.utf8_trim_whitespace(pc.list_flatten(parts)))}
    )
    return frame[frame["aspect"] != ""].reset_index(drop=True)


# ---------------------------------------------------------------------- small files
def _read_small(
    path: Path, sep: str, n_fields: int, encoding: str | None, *, at_least: bool = False
) -> list[tuple[int, list[str]]]:
    """Lines of a small side file (items, users) split on ``sep``, checked for field count.

    ``encoding=None`` tries UTF-8 and falls back to latin-1 (MovieLens 1M/10M differ).
    """
    if not path.is_file():
        raise DataError("file not found", path=path)
    raw = path.read_bytes()
    if encoding is None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
    else:
        text = raw.decode(encoding)
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split(sep)
        if len(fields) < n_fields or (not at_least and len(fields) != n_fields):
            expected = f"at least {n_fields}" if at_least else str(n_fields)
            raise DataError(f"has {len(fields)} fields, expected {expected}", path=path, line=number)
        out.append((number, fields))
    return out


def _int_field(text: str, path: Path, line: int, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise DataError(f"{what} {text!r} is not an integer", path=path, line=line) from None


def _attach_aspects(data: Interactions, pairs: list[tuple[int, str]]) -> Interactions:
    """Item aspects for the rated items (items listed but never rated stay out of the id space)."""
    import pandas as pd

    table = pd.DataFrame(pairs, columns=["item", "aspect"])
    table = table[table["item"].isin(data.item_ids)]
    if table.empty:
        return data
    return data.with_aspects(table)
