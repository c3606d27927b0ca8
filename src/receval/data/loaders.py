"""Loaders for the rating data sets the field uses, and for generic CSV/TSV/Parquet files.

:func:`load` reads a data set into :class:`~receval.data.interactions.Interactions`.
Format names (shared by every command that reads data) are the keys of :data:`FORMATS`.

Speed: the ratings file is read once by pandas' C parser with explicit dtypes and
checked with vectorised operations; a file of up to 64 MB whose ids, ratings and
timestamps are all numbers is read by pyarrow's CSV reader instead, without importing
pandas (which costs more than the parsing there), and any file that reader would read
differently goes to pandas. That fast path cannot know line
numbers, so only when it fails does a second, slower line-by-line scan find the first
bad line and report it as ``file, line N, column C: problem`` (lines are 1-based and
count the header, as an editor shows them; with ``header=False`` line 1 is data).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "r.csv").write_text("user,item,rating\\nann,x,4\\nbob,x,2\\nbob,y,5\\n")
>>> data = load(folder / "r.csv", "csv")
>>> data.n_users, data.n_items, data.scale
(2, 2, RatingScale(low=2.0, high=5.0, step=1.0))
>>> _ = (folder / "bad.csv").write_text("user,item,rating\\nann,x,4\\nbob,x,lots\\n")
>>> load(folder / "bad.csv", "csv")
Traceback (most recent call last):
...
receval.errors.DataError: .../bad.csv, line 3, column rating: rating 'lots' is not a number
"""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from receval.data import _arrow
from receval.data.formats import FORMATS
from receval.data.interactions import Interactions, RatingScale
from receval.data.prepare import prepare
from receval.errors import ConfigError, DataError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMATS", "ML100K_GENRES", "load", "load_user_features", "parse_scale"]


ML100K_GENRES: tuple[str, ...] = (
    "unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama",
    "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western",
)  # fmt: skip
"""The 19 genres of MovieLens 100K in flag order (used when ``u.genre`` is absent)."""

_NO_GENRE = "(no genres listed)"
# Files up to this size whose columns are all numbers are read by pyarrow's CSV reader: there, importing
# pandas costs more than its C parser saves; on large files pandas' parser is the faster one (on 2 cores,
# where pyarrow's reading threads compete with each other).
_NUMERIC_MAX_BYTES = 64 << 20
_log = logging.getLogger(__name__)
_ML_SCALE = RatingScale(1, 5, 1)
_ML_HALF_SCALE = RatingScale(0.5, 5, 0.5)
_CM_SCALE = RatingScale(1, 4, 1)
_ROLES = ("user", "item", "rating", "timestamp", "familiar")


# ---------------------------------------------------------------- public entry points
def load(
    path: str | Path,
    format: str,
    *,
    user: str | None = None,
    item: str | None = None,
    rating: str | None = None,
    timestamp: str | None = None,
    extra: Sequence[str] = (),
    scale: RatingScale | Sequence[float] | str | None = None,
    sep: str | None = None,
    familiar_only: bool = False,
    ids_as_str: bool = False,
    header: bool = True,
) -> Interactions:
    """Read a data set into :class:`Interactions`.

    Parameters
    ----------
    path
        The data set's folder for the multi-file formats (MovieLens, CM100k; its
        ratings file, or a folder one level above it, is accepted too), or the file
        for ``csv``/``tsv``/``parquet``.
    format
        One of :data:`FORMATS`.
    user, item, rating, timestamp
        Column names for the generic formats (defaults ``user``, ``item``, ``rating``,
        and ``timestamp`` when such a column exists). Timestamps may be integers or
        dates (converted to Unix seconds).
    extra
        Further per-row columns to keep (generic formats); a column named
        ``familiar`` becomes a boolean flag (0/1, true/false).
    scale
        The rating scale: a :class:`RatingScale`, ``(low, high[, step])`` or a string
        ``"low..high[:step]"``. Known formats have a declared scale (MovieLens
        100K/1M 1..5 step 1; 10M/20M/25M/latest 0.5..5 step 0.5; CM100k 1..4 step 1);
        generic files infer it from the data when not given. A rating off the scale
        is an error naming its line.
    sep
        Field separator of a csv/tsv file (default ``,`` and tab).
    familiar_only
        Keep only the rows whose ``familiar`` flag is set (CM100k's "Familiar
        CM100k"), re-indexing users and items to those that remain: the same as
        :func:`receval.data.prepare.prepare` with ``familiar_only=True``.
    ids_as_str
        Read user and item ids of generic files as text (keeps ``007`` distinct
        from ``7``); by default integer-looking ids become integers.
    header
        Whether a csv/tsv file starts with a header line. ``False``: the columns are
        positional, ``user, item, rating[, timestamp]`` (3 or 4 fields a line; line 1
        is data), as in MovieLens' ``u.data`` (Harper & Konstan, 2015); column names
        and ``extra`` then do not apply.

    Returns
    -------
    Interactions
        Repeated (user, item) pairs are kept (see ``n_duplicates``). Item aspects
        (MovieLens genres) cover the rated items only; ``n_items`` counts rated items.

    Raises
    ------
    DataError
        For an unknown format, a missing file or column, a malformed line (wrong
        number of fields, non-numeric or off-scale rating), an empty file: the
        message names the file, the line and the column.
    """
    path = Path(path)
    fmt = check_format(format, path)
    declared = parse_scale(scale)
    generic_opts = {"user": user, "item": item, "rating": rating, "timestamp": timestamp, "sep": sep}
    if fmt not in ("csv", "tsv", "parquet"):
        given = [k for k, v in generic_opts.items() if v is not None] + (["extra"] if extra else [])
        if given:
            raise DataError(
                f"options {given} apply only to the csv, tsv and parquet formats; {fmt} has a fixed layout",
                path=path,
            )
    if not header:
        if fmt not in ("csv", "tsv"):
            raise DataError(
                f"header=False (--no-header) applies only to the csv and tsv formats, not {fmt}",
                path=path,
            )
        given = [k for k, v in generic_opts.items() if v is not None and k != "sep"] + (["extra"] if extra else [])
        if given:
            raise ConfigError(
                f"{given[0]}= names a header's column; a file without a header (header=False) has positional "
                "columns user, item, rating[, timestamp]: give one or the other"
            )
    if fmt == "movielens-100k":
        data = _load_ml100k(path, declared)
    elif fmt in ("movielens-1m", "movielens-10m"):
        data = _load_ml_dat(path, fmt, declared)
    elif fmt.startswith("movielens-"):
        data = _load_ml_csv(path, fmt, declared)
    elif fmt == "cm100k":
        data = _load_cm100k(path, declared)
    else:
        roles = {
            "user": user or "user",
            "item": item or "item",
            "rating": rating or "rating",
            "timestamp": timestamp,
        }
        data = _load_generic(path, fmt, roles, tuple(extra), declared, sep, ids_as_str, header)
    if familiar_only:
        if "familiar" not in data.extra:
            raise DataError(
                "familiar_only needs a 'familiar' flag, which this data does not have "
                "(CM100k has it; for a generic file name the column with extra=['familiar'])",
                path=path,
            )
        data = prepare(data, familiar_only=True)
    _log.info(
        "loaded %s (%s): %d ratings by %d users of %d items", path, format, data.n_ratings, data.n_users, data.n_items
    )
    return data


def check_format(format: str, path: str | Path | None = None) -> str:
    """The format name normalised (case, ``_``), or a :class:`DataError` listing the valid names.

    >>> check_format("MovieLens_100K"), check_format("ml-100k"), check_format("ml-latest-small")
    ('movielens-100k', 'movielens-100k', 'movielens-latest')
    >>> check_format("ml100k")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: unknown format 'ml100k'; use one of: movielens-100k, movielens-1m, ...
    """
    from receval.data.registry import format_aliases

    name = str(format).strip().lower().replace("_", "-")
    name = format_aliases().get(name, name)  # a known data set's name: ml-100k is movielens-100k
    if name not in FORMATS:
        raise DataError(f"unknown format {format!r}; use one of: {', '.join(FORMATS)}", path=path)
    return name


def parse_scale(scale: RatingScale | Sequence[float] | str | None) -> RatingScale | None:
    """A :class:`RatingScale` from ``(low, high[, step])`` or ``"low..high[:step]"`` (None stays None).

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

    Returns a DataFrame with columns ``user``, ``age``, ``gender``, ``occupation``,
    ``zip``. In 100K ``age`` is in years and ``occupation`` a name; in 1M both are
    the codes its README lists (age brackets 1, 18, 25, 35, 45, 50, 56; occupations
    0–20). Other formats ship no user features (:class:`DataError`).
    """
    import pandas as pd

    path = Path(path)
    fmt = check_format(format, path)
    if fmt == "movielens-100k":
        folder = _find_folder(path, "u.data", fmt)
        rows = _read_small(folder / "u.user", "|", 5, "latin-1")
        cols = ["user", "age", "gender", "occupation", "zip"]
        frame = pd.DataFrame([r for _, r in rows], columns=cols)
        ints = ["user", "age"]
    elif fmt == "movielens-1m":
        folder = _find_folder(path, "ratings.dat", fmt)
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
@dataclass(frozen=True)
class _Layout:
    """How a delimited ratings file is laid out (shared by the fast read and the error scan)."""

    sep: str
    roles: dict[str, str]  # role (user, item, rating, timestamp, familiar) -> column name
    names: tuple[str, ...] | None = None  # column names of a file without a header
    dtypes: dict[str, str] = field(default_factory=dict)
    scale: RatingScale | None = None  # None: inferred from the data
    extra: tuple[str, ...] = ()
    fixed: bool = False  # a published layout (column options do not apply)


def _load_ratings_file(path: Path, layout: _Layout, name: str) -> Interactions:
    """Fast read + vectorised checks; on any failure the error path names the bad line."""
    data = _read_numeric(path, layout, name)
    if data is not None:
        return data
    frame = None
    try:
        frame = _fast_read(path, layout)
        if frame.empty:
            raise DataError("no ratings")
        return _build(frame, layout, name)
    except (ValueError, KeyError) as exc:  # DataError and the parsers' errors are ValueErrors
        raise _locate(path, layout, frame, exc) from exc


def _read_numeric(path: Path, layout: _Layout, name: str) -> Interactions | None:
    """The ratings of a file of at most :data:`_NUMERIC_MAX_BYTES` whose id, rating and timestamp
    columns all hold numbers, read by pyarrow's CSV reader with those columns typed (no pandas);
    None for any other file or on any problem, which the pandas path then reads (and reports by line).

    On the files it reads it gives what the pandas path gives: every value it accepts pandas reads as
    the same number (anything else, a missing value or a row of another length, sends the file there).
    """
    roles = layout.roles
    if layout.extra or "familiar" in roles or len(layout.sep) != 1 or "str" in layout.dtypes.values():
        return None
    try:
        if path.stat().st_size > _NUMERIC_MAX_BYTES:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    start = 0 if layout.names else raw.find(b"\n") + 1
    first = raw[: max(start - 1, 0)].decode("utf-8", "replace").rstrip("\r")
    header = layout.names or tuple(next(csv.reader([first], delimiter=layout.sep), []))
    if len(set(header)) != len(header):  # pandas renames repeated column names
        return None
    if b"x" in raw[start:] or b"X" in raw[start:]:  # pyarrow reads 0x10 as the integer 16, pandas as text
        return None
    import pyarrow as pa
    import pyarrow.csv as pv

    types = {roles["user"]: pa.int64(), roles["item"]: pa.int64(), roles["rating"]: pa.float64()}
    if "timestamp" in roles:
        types[roles["timestamp"]] = pa.int64()
    try:
        table = pv.read_csv(
            pa.BufferReader(raw),
            read_options=pv.ReadOptions(column_names=list(layout.names) if layout.names else None),
            parse_options=pv.ParseOptions(delimiter=layout.sep),
            convert_options=pv.ConvertOptions(column_types=types, include_columns=list(types)),
        )
    except (pa.ArrowException, OSError):
        return None
    if table.num_rows == 0 or any(column.null_count for column in table.columns):
        return None
    values = {col: _arrow.numbers(table.column(col)) for col in types}
    ratings = values[roles["rating"]]
    if not (np.abs(ratings) <= _FLOAT32_MAX).all():  # inf, or beyond the float32 ratings
        return None
    ratings = ratings.astype(np.float32)
    try:
        return Interactions.from_ids(
            values[roles["user"]],
            values[roles["item"]],
            ratings,
            scale=layout.scale if layout.scale is not None else RatingScale.infer(np.unique(ratings)),
            timestamps=np.array(values[roles["timestamp"]]) if "timestamp" in roles else None,  # writable
            name=name,
        )
    except (ValueError, KeyError):  # e.g. a rating off the declared scale: the pandas path names its line
        return None


def _fast_read(path: Path, layout: _Layout, as_text: bool = False) -> pd.DataFrame:
    # pandas' C engine with explicit dtypes: measured on a busy 2-core machine it was faster
    # than the pyarrow engine (whose threads compete for the cores) and needs no Arrow copy.
    # index_col=False: a row with one field too many is an error, never an implicit index.
    import pandas as pd

    options = {"dtype": str if as_text else layout.dtypes, "engine": "c", "index_col": False}
    if layout.sep == "::":  # a one-character separator is parsed in C: '::' leaves empty columns between fields
        names = []
        for j, col in enumerate(layout.names or ()):
            names += [col] if j == 0 else [f"_gap{j}", col]
        frame = pd.read_csv(path, sep=":", header=None, names=names, **options)
        gaps = [c for c in names if c.startswith("_gap")]
        if gaps and frame[gaps].notna().to_numpy().any():
            raise DataError("a field is separated by a single ':'")
        return frame.drop(columns=gaps)
    if layout.names is not None:
        return pd.read_csv(path, sep=layout.sep, header=None, names=list(layout.names), **options)
    return pd.read_csv(path, sep=layout.sep, **options)


def _build(frame: pd.DataFrame, layout: _Layout, name: str) -> Interactions:
    """Interactions from a parsed frame; any ValueError here sends the caller to the slow scan."""
    import pandas as pd

    roles = layout.roles
    missing = [c for c in roles.values() if c not in frame.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}")
    extra: dict[str, np.ndarray] = {}
    for col in layout.extra:
        extra[col] = (_as_flag(frame[col]) if col == "familiar" else frame[col]).to_numpy()
    if "familiar" in roles:
        extra["familiar"] = _as_flag(frame[roles["familiar"]]).to_numpy()
    ratings = frame[roles["rating"]]
    if not pd.api.types.is_numeric_dtype(ratings) or ratings.isna().any():
        raise DataError("a rating is missing or not a number")
    values = ratings.to_numpy(dtype=np.float64)
    if not (np.abs(values) <= _FLOAT32_MAX).all():  # inf, or beyond the float32 ratings (1e308 would become inf)
        raise DataError("a rating is not a finite number")
    ratings = values.astype(np.float32)
    timestamps = None
    ts_col = roles.get("timestamp")
    if ts_col is not None:
        stamps = frame[ts_col]
        if not pd.api.types.is_numeric_dtype(stamps):
            stamps = _to_datetime(stamps)
            stamps = (stamps - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(1, "s")
        if stamps.isna().any():
            raise DataError("a timestamp is missing")
        timestamps = stamps.to_numpy(dtype=np.int64)
    return Interactions.from_ids(
        frame[roles["user"]],
        frame[roles["item"]],
        ratings,
        scale=layout.scale if layout.scale is not None else RatingScale.infer(pd.unique(ratings)),
        timestamps=timestamps,
        extra=extra,
        name=name,
    )


def _to_datetime(values: pd.Series) -> pd.Series:
    """Dates to UTC datetimes: ISO 8601 (fast), else element-wise; a ValueError sends the caller to the scan."""
    import pandas as pd

    try:
        return pd.to_datetime(values, utc=True, format="ISO8601")
    except ValueError:
        return pd.to_datetime(values, utc=True, format="mixed")


_LINE_BLOCK = 1 << 24  # bytes read at a time when counting lines on the error path


def _as_flag(col: pd.Series) -> pd.Series:
    import pandas as pd

    if pd.api.types.is_bool_dtype(col):
        return col
    if pd.api.types.is_numeric_dtype(col):
        if col.isna().any() or not col.isin([0, 1]).all():
            raise DataError("a familiar/known flag is not 0 or 1")
        return col.astype(bool)
    lowered = col.astype(str).str.strip().str.lower()
    mapping = {"0": False, "1": True, "false": False, "true": True}
    if not lowered.isin(list(mapping)).all():
        raise DataError("a familiar/known flag is not 0/1 or true/false")
    return lowered.map(mapping).astype(bool)


# ------------------------------------------------------------------ the error path
def _records(path: Path, sep: str, encoding: str = "utf-8") -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank record, as the fast reader splits them."""
    with open(path, encoding=encoding, errors="replace", newline="") as fh:
        if len(sep) == 1:
            reader = csv.reader(fh, delimiter=sep)
            for fields in reader:
                if fields and any(fields):
                    yield reader.line_num, fields
        else:
            for number, line in enumerate(fh, start=1):
                line = line.rstrip("\r\n")
                if line.strip():
                    yield number, line.split(sep)


def _locate(path: Path, layout: _Layout, frame: pd.DataFrame | None, exc: Exception) -> DataError:
    """The error for the first bad line.

    When a parsed frame shows which row is bad (vectorised; the file is re-read as
    text when typed parsing failed), only that row's line is looked up, counting
    lines in a tight loop; otherwise every record is checked in order (slow, but
    only ever on the error path).
    """
    if frame is None:
        try:
            frame = _fast_read(path, layout, as_text=True)
        except (ValueError, KeyError):
            frame = None
    row = _first_bad_row(frame, layout) if frame is not None else None
    if row is not None:
        found = _record_at(path, layout, row)
        if found is not None:
            number, names, fields = found
            try:
                problem = _RecordChecker(names, layout)(fields)
            except (KeyError, IndexError):  # the header read here and the parser's disagree: scan
                problem = None
            if problem is not None:
                return DataError(problem[1], path=path, line=number, column=problem[0])
    located = _scan(path, layout)
    return located if located is not None else DataError(f"could not read the ratings: {exc}", path=path)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _first_bad_row(frame: pd.DataFrame, layout: _Layout) -> int | None:
    """Index of the first row failing a vectorised check (ids, rating, integer columns, flags)."""
    import pandas as pd

    roles = layout.roles
    if len(frame) == 0 or any(c not in frame.columns for c in roles.values()):
        return None
    bad = np.zeros(len(frame), dtype=bool)
    for role in ("user", "item"):
        col = frame[roles[role]]
        bad |= col.isna().to_numpy()
        if not pd.api.types.is_numeric_dtype(col):
            bad |= (col.astype(str).str.strip() == "").to_numpy()
    rating = pd.to_numeric(frame[roles["rating"]], errors="coerce").to_numpy(dtype=np.float64)
    finite = np.abs(rating) <= _FLOAT32_MAX  # NaN, inf and 1e308 (inf as float32) are bad
    bad |= ~finite
    if layout.scale is not None:
        bad |= ~layout.scale.valid_mask(np.where(finite, rating, layout.scale.low))
    for col, dtype in layout.dtypes.items():
        if dtype == "int64" and col != roles.get("familiar"):
            num = pd.to_numeric(frame[col], errors="coerce")
            bad |= num.isna().to_numpy()
    flags = [roles["familiar"]] if "familiar" in roles else [c for c in layout.extra if c == "familiar"]
    for col in flags:
        text = frame[col].astype(str).str.strip().str.lower()
        bad |= ~text.isin(["0", "1", "true", "false", "1.0", "0.0"]).to_numpy()
    hits = np.flatnonzero(bad)
    return int(hits[0]) if len(hits) else None


def _record_at(path: Path, layout: _Layout, row: int) -> tuple[int, tuple[str, ...], list[str]] | None:
    """(line number, column names, fields) of data row ``row`` (0-based), counting non-blank lines.

    Whole blocks without blank lines are counted with ``bytes.count``; only the block
    holding the row (or one with blank lines) is walked line by line.
    """
    names: tuple[str, ...] = layout.names or ()
    header = layout.names is None
    want = row + (1 if header else 0)  # index among non-blank lines; the header is the first
    seen = 0  # non-blank lines before the current block
    number = 0  # physical lines before the current block
    carry = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(_LINE_BLOCK)
            data = carry + block
            if not block:
                cut = len(data)
            else:
                cut = data.rfind(b"\n") + 1
            body, carry = data[:cut], data[cut:]
            lines = body.count(b"\n") + (1 if not block and body and not body.endswith(b"\n") else 0)
            blank = body.startswith((b"\n", b"\r\n")) or b"\n\n" in body or b"\n\r\n" in body
            if blank or seen + lines > want or (header and seen == 0):
                for raw in body.splitlines(keepends=True):
                    number += 1
                    if not raw.strip(b"\r\n"):
                        continue
                    if seen == 0 and header:
                        names = tuple(h.strip() for h in _split(raw, layout.sep))
                    if seen == want:
                        return number, names, _split(raw, layout.sep)
                    seen += 1
            else:
                seen += lines
                number += lines
            if not block:
                return None


def _split(raw: bytes, sep: str) -> list[str]:
    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    return next(csv.reader([line], delimiter=sep)) if len(sep) == 1 else line.split(sep)


def _scan(path: Path, layout: _Layout) -> DataError | None:
    """The first bad line of a ratings file as a DataError, or None when none is found."""
    records = _records(path, layout.sep)
    names = layout.names
    first_line = 1
    if names is None:
        try:
            first_line, header = next(records)
        except StopIteration:
            return DataError("the file is empty: a header and at least one rating are needed", path=path, line=1)
        names = tuple(h.strip() for h in header)
        missing = [c for c in layout.roles.values() if c not in names]
        if missing:
            role = next(r for r, c in layout.roles.items() if c == missing[0])
            fix = (
                f"this format's header is {','.join(layout.roles.values())}"
                if layout.fixed
                else f"name the {role} column with {role}= (--{role} on the command line)"
            )
            return DataError(
                f"missing required column {missing[0]!r}; the header has {list(names)}; {fix}",
                path=path,
                line=first_line,
                column=missing[0],
            )
    check = _RecordChecker(names, layout)
    count = 0
    for number, fields in records:
        count += 1
        problem = check(fields)
        if problem is not None:
            column, message = problem
            return DataError(message, path=path, line=number, column=column)
    if count == 0:
        where = first_line + 1 if layout.names is None else 1
        return DataError("the file is empty: it has no ratings", path=path, line=where)
    return None


class _RecordChecker:
    """Checks one record's fields; pure Python with a per-value cache (the scan may see 25M lines)."""

    def __init__(self, names: tuple[str, ...], layout: _Layout) -> None:
        self.n = len(names)
        self.shown = (layout.sep if layout.sep != "\t" else "\\t").join(names)
        index = {col: j for j, col in enumerate(names)}
        roles = layout.roles
        self.ids = [(index[roles[r]], roles[r], r) for r in ("user", "item")]
        self.rating = (index[roles["rating"]], roles["rating"])
        self.scale = layout.scale
        self.on_scale: dict[str, bool] = {}
        ts = roles.get("timestamp")
        self.timestamp = None if ts is None else (index[ts], ts, layout.dtypes.get(ts) == "int64")
        flags = [roles["familiar"]] if "familiar" in roles else [c for c in layout.extra if c == "familiar"]
        self.flags = [(index[c], c) for c in flags]
        skip = (ts, roles.get("familiar"))
        self.int_ids = [(index[c], c) for c, d in layout.dtypes.items() if d == "int64" and c not in skip]

    def __call__(self, fields: list[str]) -> tuple[str | None, str] | None:
        if len(fields) != self.n:
            return None, f"has {len(fields)} fields, expected {self.n} ({self.shown})"
        for j, col, role in self.ids:
            if not fields[j].strip():
                return col, f"empty {role} id"
        j, col = self.rating
        text = fields[j].strip()
        ok = self.on_scale.get(text)
        if ok is None:
            problem = self._rating_problem(text)
            if problem is not None:
                return col, problem
            self.on_scale[text] = True
        if self.timestamp is not None:
            j, col, integer = self.timestamp
            text = fields[j].strip()
            try:
                int(text) if integer else float(text)
            except ValueError:
                if integer or not _is_date(text):
                    return col, f"timestamp {text!r} is neither an integer nor a date"
        for j, col in self.flags:
            text = fields[j].strip().lower()
            if text not in ("0", "1", "true", "false"):
                return col, f"flag {text!r} is not 0 or 1"
        for j, col in self.int_ids:
            text = fields[j].strip()
            try:
                int(text)
            except ValueError:
                return col, f"{col} {text!r} is not an integer id"
        return None

    def _rating_problem(self, text: str) -> str | None:
        try:
            value = float(text)
        except ValueError:
            return f"rating {text!r} is not a number"
        if not math.isfinite(value):
            return f"rating {text!r} is not a finite number"
        if abs(value) > _FLOAT32_MAX:
            return f"rating {text!r} is too large (ratings are 32-bit floats, at most {_FLOAT32_MAX:.3g} in size)"
        s = self.scale
        if s is not None and not s.contains([value]):
            step = f" step {s.step:g}" if s.step else ""
            return (
                f"rating {text} is outside the declared scale {s.low:g}..{s.high:g}{step}; "
                "fix the line or declare another scale (scale= / --scale)"
            )
        return None


def _is_date(text: str) -> bool:
    import pandas as pd

    try:
        pd.Timestamp(text)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------------- formats
def _find_folder(path: Path, ratings_name: str, fmt: str) -> Path:
    """The folder holding ``ratings_name``: PATH itself, PATH's parent (a file given), or one level down."""
    if not path.exists():
        raise DataError(f"no such file or folder (format {fmt} expects the folder holding {ratings_name})", path=path)
    if path.is_file():
        return path.parent
    if (path / ratings_name).is_file():
        return path
    below = sorted(p.parent for p in path.glob(f"*/{ratings_name}"))
    if len(below) == 1:
        return below[0]
    raise DataError(
        f"no {ratings_name} in this folder; format {fmt} expects the folder that holds {ratings_name} ({FORMATS[fmt]})",
        path=path,
    )


def _ratings_path(path: Path, folder: Path, ratings_name: str) -> Path:
    return path if path.is_file() else folder / ratings_name


def _load_ml100k(path: Path, scale: RatingScale | None) -> Interactions:
    folder = _find_folder(path, "u.data", "movielens-100k")
    layout = _Layout(
        sep="\t",
        roles={"user": "user", "item": "item", "rating": "rating", "timestamp": "timestamp"},
        names=("user", "item", "rating", "timestamp"),
        dtypes={"user": "int64", "item": "int64", "rating": "float64", "timestamp": "int64"},
        scale=scale or _ML_SCALE,
    )
    data = _load_ratings_file(_ratings_path(path, folder, "u.data"), layout, "movielens-100k")
    if not (folder / "u.item").is_file():
        return data
    genres = _ml100k_genre_names(folder / "u.genre")
    pairs = []
    for number, fields in _read_small(folder / "u.item", "|", 5 + len(genres), "latin-1"):
        movie = _int_field(fields[0], folder / "u.item", number, "movie id")
        for name, flag in zip(genres, fields[5:], strict=True):
            if flag.strip() not in ("0", "1"):
                raise DataError(f"genre flag {flag!r} is not 0 or 1", path=folder / "u.item", line=number, column=name)
            if flag.strip() == "1":
                pairs.append((movie, name))
    return _attach_aspects(data, pairs)


def _ml100k_genre_names(path: Path) -> tuple[str, ...]:
    if not path.is_file():
        return ML100K_GENRES
    names: dict[int, str] = {}
    for number, fields in _read_small(path, "|", 2, "latin-1"):
        names[_int_field(fields[1], path, number, "genre index")] = fields[0]
    if sorted(names) != list(range(len(names))):
        raise DataError(f"genre indices {sorted(names)} are not 0..{len(names) - 1}", path=path)
    return tuple(names[j] for j in range(len(names)))


def _load_ml_dat(path: Path, fmt: str, scale: RatingScale | None) -> Interactions:
    folder = _find_folder(path, "ratings.dat", fmt)
    layout = _Layout(
        sep="::",
        roles={"user": "user", "item": "item", "rating": "rating", "timestamp": "timestamp"},
        names=("user", "item", "rating", "timestamp"),
        dtypes={"user": "int64", "item": "int64", "rating": "float64", "timestamp": "int64"},
        scale=scale or (_ML_SCALE if fmt == "movielens-1m" else _ML_HALF_SCALE),
    )
    data = _load_ratings_file(_ratings_path(path, folder, "ratings.dat"), layout, fmt)
    movies = folder / "movies.dat"
    if not movies.is_file():
        return data
    pairs = []
    for number, fields in _read_small(movies, "::", 3, None, at_least=True):
        movie = _int_field(fields[0], movies, number, "movie id")
        pairs += [(movie, g) for g in fields[-1].split("|") if g and g != _NO_GENRE]
    return _attach_aspects(data, pairs)


def _load_ml_csv(path: Path, fmt: str, scale: RatingScale | None) -> Interactions:
    folder = _find_folder(path, "ratings.csv", fmt)
    layout = _Layout(
        sep=",",
        roles={"user": "userId", "item": "movieId", "rating": "rating", "timestamp": "timestamp"},
        dtypes={"userId": "int64", "movieId": "int64", "rating": "float64", "timestamp": "int64"},
        scale=scale or _ML_HALF_SCALE,
        fixed=True,
    )
    data = _load_ratings_file(_ratings_path(path, folder, "ratings.csv"), layout, fmt)
    movies = folder / "movies.csv"
    if not movies.is_file():
        return data
    records = _records(movies, ",")
    next(records, None)  # header movieId,title,genres
    pairs = []
    for number, fields in records:
        if len(fields) != 3:
            raise DataError(f"has {len(fields)} fields, expected 3 (movieId,title,genres)", path=movies, line=number)
        movie = _int_field(fields[0], movies, number, "movieId")
        pairs += [(movie, g) for g in fields[2].split("|") if g and g != _NO_GENRE]
    return _attach_aspects(data, pairs)


def _load_cm100k(path: Path, scale: RatingScale | None) -> Interactions:
    if path.is_file():
        ratings = path
    else:
        if not path.exists():
            raise DataError("no such file or folder (format cm100k expects the CM100k folder)", path=path)
        candidates = [path / "data.txt", path / "ratings.txt", path / "release" / "ratings.txt"]
        found = [c for c in candidates if c.is_file()]
        if not found:
            raise DataError(
                "no data.txt (authors' copy) or ratings.txt (release) in this folder; "
                "give the CM100k folder or its ratings file",
                path=path,
            )
        ratings = found[0]
    layout = _Layout(
        sep="\t",
        roles={"user": "user", "item": "item", "rating": "rating", "familiar": "known"},
        names=("user", "item", "rating", "known"),
        dtypes={"user": "int64", "item": "int64", "rating": "float64", "known": "int64"},
        scale=scale or _CM_SCALE,
    )
    return _load_ratings_file(ratings, layout, "cm100k")


def _load_generic(
    path: Path,
    fmt: str,
    roles: dict[str, str | None],
    extra: tuple[str, ...],
    scale: RatingScale | None,
    sep: str | None,
    ids_as_str: bool,
    header: bool = True,
) -> Interactions:
    if not path.is_file():
        what = "a folder" if path.is_dir() else "no such file"
        raise DataError(f"{what}: format {fmt} expects the path of one file", path=path)
    name = path.stem
    dtypes = {str(roles["rating"]): "float64"}  # user, item and rating always have a column name
    if ids_as_str:
        dtypes.update({str(roles["user"]): "str", str(roles["item"]): "str"})
    if fmt == "parquet":
        return _load_parquet(path, roles, extra, scale, dtypes, name)
    if sep is None:
        sep = "," if fmt == "csv" else "\t"
    sep = {"\\t": "\t", "tab": "\t"}.get(sep, sep)
    if len(sep) != 1:
        raise DataError(f"separator {sep!r} must be one character", path=path)
    names = None if header else _positional(path, sep)
    if names is not None:
        roles = {role: role for role in names}  # positional: each column is named by its role
    elif roles["timestamp"] is None:
        with open(path, encoding="utf-8", errors="replace") as fh:
            first = next(csv.reader([fh.readline()], delimiter=sep), [])
        if "timestamp" in (h.strip() for h in first):
            roles = {**roles, "timestamp": "timestamp"}
    layout = _Layout(
        sep=sep,
        roles={k: v for k, v in roles.items() if v is not None},
        names=names,
        dtypes=dtypes,
        scale=scale,
        extra=extra,
    )
    return _load_ratings_file(path, layout, name)


def _positional(path: Path, sep: str) -> tuple[str, ...]:
    """Column names of a file without a header, from its first record: user, item, rating[, timestamp]."""
    for number, fields in _records(path, sep):
        if len(fields) not in (3, 4):
            raise DataError(
                f"has {len(fields)} fields; a file without a header has 3 (user, item, rating) "
                "or 4 (user, item, rating, timestamp)",
                path=path,
                line=number,
            )
        return ("user", "item", "rating", "timestamp")[: len(fields)]
    raise DataError("the file is empty: it has no ratings", path=path, line=1)


def _load_parquet(
    path: Path,
    roles: dict[str, str | None],
    extra: tuple[str, ...],
    scale: RatingScale | None,
    dtypes: dict[str, str],
    name: str,
) -> Interactions:
    import pandas as pd
    import pyarrow.parquet as pq

    try:
        columns = pq.read_schema(path).names
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        raise DataError(f"not a readable Parquet file: {exc}", path=path) from exc
    if roles["timestamp"] is None and "timestamp" in columns:
        roles = {**roles, "timestamp": "timestamp"}
    wanted = [c for c in roles.values() if c is not None] + list(extra)
    missing = [c for c in wanted if c not in columns]
    if missing:
        raise DataError(f"missing required column {missing[0]!r}; the file has {columns}", path=path, column=missing[0])
    frame = pd.read_parquet(path, columns=list(dict.fromkeys(wanted)))
    if frame.empty:
        raise DataError("the file has no ratings", path=path)
    for col, dtype in dtypes.items():
        if dtype == "str":
            frame[col] = frame[col].astype(str)
    rating = frame[roles["rating"]]
    num = pd.to_numeric(rating, errors="coerce")
    bad = num.isna().to_numpy()
    if not bad.any() and scale is not None:
        bad = ~scale.valid_mask(num.to_numpy())
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        what = "is not a number" if pd.isna(num.iloc[row]) else "is outside the declared scale"
        value = rating.iloc[row]
        shown = f"{float(value):g}" if isinstance(value, int | float | np.number) else repr(value)
        raise DataError(f"row {row + 1}: rating {shown} {what}", path=path, column=roles["rating"])
    frame[roles["rating"]] = num
    layout = _Layout(sep=",", roles={k: v for k, v in roles.items() if v is not None}, scale=scale, extra=extra)
    try:
        return _build(frame, layout, name)
    except (ValueError, KeyError) as exc:
        raise DataError(str(exc), path=path) from exc


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
