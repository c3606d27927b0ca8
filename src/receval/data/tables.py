"""The one validated reader of evaluation tables: truth, recommendations, predictions, aspects.

:func:`read_table` reads a CSV, TSV or Parquet file into a DataFrame with the
columns a command needs, checked: a missing file or column, a folder, an empty
file, text that is not UTF-8, a row with the wrong number of fields, a value that
is not a number where a number is meant — each is a :class:`~receval.errors.DataError`
naming the file, the line (1-based, counting the header, as an editor shows it)
and the column. Ids (``user``, ``item``) are read as text in every file, so that
they match across files whatever they look like (``007`` stays ``007``).

Speed: the file is read by Arrow's multi-threaded CSV reader with the column types
fixed up front; only when that read fails does a second, slow line-by-line scan
find the first bad line to name it (as :mod:`receval.data.loaders` does).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "recs.csv").write_text("user,item,score\\n007,x,0.5\\n7,y,0.25\\n")
>>> read_table(folder / "recs.csv", "recommendations", ("user", "item")).to_dict("list")
{'user': ['007', '7'], 'item': ['x', 'y'], 'score': [0.5, 0.25]}
>>> _ = (folder / "bad.csv").write_text("user,item,score\\n1,x,0.5\\n2,y,high\\n")
>>> read_table(folder / "bad.csv", "recommendations")
Traceback (most recent call last):
...
receval.errors.DataError: .../bad.csv, line 3, column score: score 'high' is not a number
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from receval.data import vocab
from receval.errors import DataError

__all__ = ["NUMERIC", "read_aspects", "read_table"]

TEXT_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")
NUMERIC = ("rating", "score", "rank", "prediction")
"""Columns read as numbers (64-bit floats) wherever they appear."""
_IDS = ("user", "item")
_TEXT = ("aspect",)


def read_table(
    path: str | Path,
    what: str = "table",
    required: Sequence[str] = (),
    *,
    text_ids: bool = True,
) -> pd.DataFrame:
    """Read a CSV/TSV/Parquet table by extension; check it and its ``required`` columns.

    Parameters
    ----------
    path
        ``.csv`` (comma), ``.tsv``/``.tab``/``.txt`` (tab) with a header, or
        ``.parquet``/``.pq``.
    what
        The table's role in messages (``"truth"``, ``"recommendations"``, ...).
    required
        Columns that must be present.
    text_ids
        Read ``user``/``item`` as text (default), or let the file's values decide
        (integers stay integers: for matching ids of a data set loaded with its format).

    Returns
    -------
    DataFrame
        ``rating``, ``score``, ``rank`` and ``prediction`` as finite floats; ids as
        text (unless ``text_ids=False``); an ``aspect`` column as text.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{what} file not found", path=path)
    if path.is_dir():
        raise DataError(f"the {what} path is a folder; give the file", path=path)
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        frame = _read_parquet(path, text_ids)
        sep = None
    elif suffix in TEXT_SUFFIXES:
        sep = "," if suffix == ".csv" else "\t"
        frame = _read_text(path, sep, text_ids)
    else:
        raise DataError(
            f"cannot tell the format of the {what} file from its extension {suffix!r}; use .csv, .tsv or .parquet",
            path=path,
        )
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DataError(
            f"the {what} file needs columns {', '.join(required)}; it has {list(frame.columns)}",
            path=path,
            column=missing[0],
        )
    _check_values(frame, path, sep)
    return frame


def read_aspects(path: str | Path, item_ids: np.ndarray | None = None) -> pd.DataFrame:
    """An item → aspect table (columns ``item``, ``aspect``; ``|`` separates several aspects in one cell).

    Blank aspects are left out. With ``item_ids`` (a data set's id space), items
    are matched by value, text read as the id space's kind (``'12'`` is item 12),
    the table's ``item`` column takes the data set's own ids, and items outside it
    are dropped (unrated items carry no signal); none matching is an error.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_text("item,aspect\\n1,Drama|Comedy\\n2, \\n9,War\\n")
    >>> read_aspects(p, np.array([1, 2, 3])).to_dict("list")
    {'item': [1, 1], 'aspect': ['Drama', 'Comedy']}
    """
    path = Path(path)
    table = read_table(path, "aspects", ("item", "aspect"))[["item", "aspect"]]
    table = table.assign(aspect=table["aspect"].str.split("|")).explode("aspect", ignore_index=True)
    table["aspect"] = table["aspect"].str.strip()
    table = table[table["aspect"] != ""]
    if item_ids is None:
        return table.reset_index(drop=True)
    idx = vocab.index_of(item_ids, table["item"].str.strip().to_numpy(dtype=object), coerce=True)
    table = table[idx >= 0].assign(item=item_ids[idx[idx >= 0]])
    if table.empty:
        raise DataError("no item of the aspects file is in the data set (compare the item ids)", path=path)
    return table.reset_index(drop=True)


# ------------------------------------------------------------------ reading
def _read_text(path: Path, sep: str, text_ids: bool) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pv

    header = _header(path, sep)
    types = {c: pa.float64() for c in NUMERIC if c in header}
    types.update({c: pa.string() for c in _TEXT if c in header})
    if text_ids:
        types.update({c: pa.string() for c in _IDS if c in header})
    options = pv.ConvertOptions(column_types=types, null_values=[""], strings_can_be_null=False)
    try:
        table = pv.read_csv(path, parse_options=pv.ParseOptions(delimiter=sep), convert_options=options)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise _locate(path, sep, exc) from exc
    return table.to_pandas()


def _header(path: Path, sep: str) -> list[str]:
    with open(path, "rb") as fh:
        first = fh.readline()
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError("the header is not UTF-8 text; save the file as UTF-8", path=path, line=1) from None
    if not text.strip():
        raise DataError("the file is empty: it has no header and no rows", path=path, line=1)
    return [h.strip() for h in next(csv.reader([text], delimiter=sep))]


def _read_parquet(path: Path, text_ids: bool) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        frame = pq.read_table(path).to_pandas()
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        raise DataError(f"not a readable Parquet file ({exc})", path=path) from exc
    if text_ids:
        frame = frame.astype({c: str for c in _IDS if c in frame.columns})
    for col in NUMERIC:
        if col in frame.columns and not pd.api.types.is_numeric_dtype(frame[col]):
            num = pd.to_numeric(frame[col], errors="coerce")
            bad = num.isna() & frame[col].notna()
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise DataError(f"row {row + 1}: {col} {frame[col].iloc[row]!r} is not a number", path=path, column=col)
            frame[col] = num
    return frame


def _check_values(frame: pd.DataFrame, path: Path, sep: str | None) -> None:
    """Ids present, numbers finite; the first bad value is named by its line (text) or row (Parquet)."""
    for col in frame.columns:
        if col in _IDS:
            values = frame[col]
            bad = values.isna().to_numpy()
            if values.dtype != object and not pd.api.types.is_string_dtype(values):
                problem = "missing"
            else:
                bad = bad | (values.fillna("").astype(str).str.strip() == "").to_numpy()
                problem = "empty"
            message = f"{problem} {col} id"
        elif col in NUMERIC and pd.api.types.is_float_dtype(frame[col]):
            values = frame[col].to_numpy()
            bad = ~np.isfinite(values)
            message = None
        else:
            continue
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            if message is None:
                value = values[row]
                message = f"{col} is missing" if np.isnan(value) else f"{col} {value!r} is not a finite number"
            if sep is None:  # Parquet: no lines
                raise DataError(f"row {row + 1}: {message}", path=path, column=col)
            raise DataError(message, path=path, line=_line_of_row(path, sep, row), column=col)


# ------------------------------------------------------------------ the error path
def _records(path: Path, sep: str):
    """(line number, fields) of every non-blank record; raises a DataError at the first non-UTF-8 line."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise DataError(
                    f"byte {err.start + 1} of the line is not UTF-8 text; save the file as UTF-8",
                    path=path,
                    line=number,
                ) from None
            fields = next(csv.reader(io.StringIO(text), delimiter=sep), [])
            if any(f.strip() for f in fields):
                yield number, fields


def _line_of_row(path: Path, sep: str, row: int) -> int | None:
    """The line of data row ``row`` (0-based, after the header)."""
    for j, (number, _) in enumerate(_records(path, sep)):
        if j == row + 1:
            return number
    return None


def _locate(path: Path, sep: str, exc: Exception) -> DataError:
    """The first bad line: not UTF-8, a wrong number of fields, or a non-number in a numeric column."""
    records = _records(path, sep)
    first = next(records, None)
    if first is None:
        return DataError("the file is empty: it has no header and no rows", path=path, line=1)
    _, names = first
    names = [n.strip() for n in names]
    shown = ("\\t" if sep == "\t" else sep).join(names)
    numeric = [(j, c) for j, c in enumerate(names) if c in NUMERIC]
    count = 0
    for number, fields in records:
        count += 1
        if len(fields) != len(names):
            return DataError(f"has {len(fields)} fields, expected {len(names)} ({shown})", path=path, line=number)
        for j, col in numeric:
            text = fields[j].strip()
            if not text:
                continue  # a missing number is named after the read
            try:
                float(text)
            except ValueError:
                return DataError(f"{col} {text!r} is not a number", path=path, line=number, column=col)
    if count == 0:
        return DataError("the file has a header but no rows", path=path, line=2)
    return DataError(f"could not read the table: {exc}", path=path)
