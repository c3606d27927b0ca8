"""The one validated reader of evaluation tables, in the formats the field writes.

:func:`read_table` reads truth, recommendations (runs), predictions, training data
and aspects into a DataFrame with receval's column names (``user``, ``item``,
``rating``, ``score``, ``rank``, ``timestamp``, ``prediction``, ``aspect``):

Every format of :data:`receval.data.formats.FORMATS` is read here, by the same names
and aliases everywhere (:func:`~receval.data.formats.check_format`): ``csv``/``tsv``
(with a header, or positional columns user, item, rating or score, timestamp),
``parquet`` (also as ranx's ``Run.save("x.parquet")`` writes it), ``trec`` (a run
``qid Q0 docid rank score tag`` or qrels ``qid 0 docid grade``), ``ranx-json``
(``{user: {item: score}}``), ``recbole`` (``name:type`` headers), and the data set
formats (``movielens-100k``'s ``u.data``/``u1.base``, MovieLens 1M/10M ``ratings.dat``,
20M/25M/latest ``ratings.csv``, CM100k ``ratings.txt``: the folder or the file; ``yelp``,
the Yelp Open Dataset's review and business JSON lines, read by :mod:`receval.data._jsonl`
as :func:`receval.data.load` reads them: the folder or the review file).
``kind=`` says what the table holds (:data:`KINDS`); it sets the columns of a file
without a header, and nothing else decides what is read.

Without a format, :func:`~receval.data.formats.detect` tells it from the extension,
then from the first lines (a TREC line, a RecBole header, JSON, a headerless line of
numbers); when it cannot tell, the error names the option to pass. Columns called as
LensKit, RecBole, MovieLens or ranx call them (``user_id``/``item_id``,
``userId``/``movieId``, ``q_id``/``doc_id``) are recognised; any other name is given by
``columns`` (``{"user": "uid"}``; ``--user uid`` on the command line).

Every problem is a :class:`~receval.errors.DataError` naming the file, the line
(1-based, as an editor shows it), the column and what to pass instead: a missing
file or column, a folder, an empty file, text that is not UTF-8, a line with the
wrong number of fields, a value that is not a number where a number is meant.

Speed: delimited text is read by Arrow's multi-threaded CSV reader with the column
types fixed up front and the id columns dictionary-encoded (each distinct id is
decoded once; :mod:`receval.data.vocab` maps rows to indices through the dictionary
codes, with no per-row Python). Every check runs on the Arrow table, so that
``arrow=True`` hands it to :func:`receval.evaluate` without importing pandas (the
command line's ``evaluate`` and ``compare`` do; :func:`receval.data.load` builds its
ratings from it). Only when the read fails does a second, slow line-by-line scan find
the first bad line to name it.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "run.trec").write_text("7 Q0 x 1 0.9 bm25\\n7 Q0 y 2 0.5 bm25\\n")
>>> read_table(folder / "run.trec", "recommendations").astype({"user": str, "item": str}).to_dict("list")
{'user': ['7', '7'], 'item': ['x', 'y'], 'score': [0.9, 0.5]}
>>> _ = (folder / "u1.test").write_text("1\\t6\\t5\\t887431973\\n2\\t9\\t3\\t887431974\\n")
>>> read_table(folder / "u1.test", "truth").columns.tolist()
['user', 'item', 'rating', 'timestamp']
>>> _ = (folder / "bad.csv").write_text("user,item,score\\n1,x,0.5\\n2,y,high\\n")
>>> read_table(folder / "bad.csv", "recommendations")
Traceback (most recent call last):
...
receval.errors.DataError: .../bad.csv, line 3, column score: score 'high' is not a number
"""

from __future__ import annotations

import collections
import contextlib
import csv
import io
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from receval.data import _arrow, _jsonl, _source, vocab
from receval.data.formats import KNOWN_COLUMNS as _KNOWN
from receval.data.formats import LAYOUTS, ROLES, check_format, detect, has_header, head_lines, named, ratings_file
from receval.errors import DataError, ReceValWarning

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "KINDS",
    "NUMERIC",
    "ROLES",
    "Located",
    "is_time",
    "read_aspects",
    "read_located",
    "read_table",
    "text_dictionary",
]


NUMERIC = ("rating", "score", "rank", "prediction")
"""Columns read as numbers (64-bit floats) wherever they appear."""
KINDS = ("truth", "train", "recommendations", "predictions", "aspects")
"""What a table holds (``kind=``): it decides the default columns of a file without a header."""
_IDS = ("user", "item")
_USES = {  # the columns each table uses: a column map naming one of these must name a column that exists
    "truth": ("user", "item", "rating", "timestamp"),
    "train": ("user", "item", "rating", "timestamp"),
    "recommendations": ("user", "item", "score", "rank"),
    "predictions": ("user", "item", "rating", "prediction"),
    "aspects": ("item", "aspect"),
}


class Located(NamedTuple):
    """A table as :func:`read_located` read and checked it, with the way back to the file's lines."""

    table: pa.Table
    """receval's columns; ids dictionary-encoded text unless ``text_ids=False``."""
    path: Path
    """The file read (for a data set folder, its ratings file)."""
    line_of: Callable[[int], int | None]
    """The line (1-based, as an editor counts) of a data row (0-based); None for Parquet and JSON."""
    token_seq: tuple[str, ...]
    """A RecBole file's ``token_seq`` columns (space-separated values in one field)."""
    businesses: pa.Table | None = None
    """Yelp: the business file's ``business_id`` and ``categories`` (the loader's item aspects); None otherwise."""


def read_table(
    path: str | Path,
    kind: str,
    required: Sequence[str] = (),
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
    header: bool | None = None,
    positional: Sequence[str] | None = None,
    text_ids: bool = True,
    option: str = "format=",
    unique: Sequence[str] = (),
    arrow: bool = False,
    label: str | None = None,
    sep: str | None = None,
    plain_items: bool = False,
) -> pd.DataFrame | pa.Table:
    """Read a table in any of :data:`~receval.data.formats.FORMATS`; check it and its ``required`` columns.

    Parameters
    ----------
    path
        The file; for a data set format (``movielens-1m``, ``cm100k``, ...) also the
        folder holding its ratings file.
    kind
        What the table holds, one of :data:`KINDS`: ``"truth"``, ``"train"``,
        ``"recommendations"``, ``"predictions"`` or ``"aspects"``. It chooses the
        columns of a file without a header (``score`` for recommendations, ``rating``
        otherwise); any other value is a DataError.
    required
        receval column names that must be present.
    format
        One of :data:`~receval.data.formats.FORMATS` or an alias
        (:func:`~receval.data.formats.check_format`); by default told from the
        extension, then the content (:func:`~receval.data.formats.detect`).
    columns
        ``{role: column}``: the file's name for a receval column (``{"user": "uid"}``);
        for a file without a header, names are positional.
    header
        Whether delimited text has a header line; by default detected (a first line
        whose fields are all numbers, or no known column name over a body of the
        same shape, is data).
    positional
        Column names of a file without a header, in order (default ``user, item``,
        then ``score`` for recommendations or ``rating``, then ``prediction`` for
        predictions or ``timestamp``).
    text_ids
        Read ``user``/``item`` as text (default; dictionary-encoded: each distinct id
        once), or let the file's values decide (integers stay integers).
    option
        The setting that gave ``format`` (named in errors).
    unique
        Columns whose combination must not repeat (``("user", "item")`` for a truth
        table); a repeat is an error naming both lines.
    arrow
        Return the ``pyarrow.Table`` the checks ran on instead of a DataFrame (ids
        dictionary-encoded); :func:`receval.evaluate` takes it as it is, and neither
        reading nor evaluating then imports pandas.
    label
        The file's name in messages (default ``kind``: "the truth file ..."); it
        never changes what is read.
    sep
        The field separator of a ``csv``/``tsv`` file (default ``,`` and tab; ``tab``
        or ``\\t`` for a tab).
    plain_items
        Keep the ``item`` column of a run over millions of distinct items as plain Arrow
        text instead of dictionary-encoding it (more than a million rows, most of the first
        65,536 distinct, or block dictionaries of more than a million entries; a Parquet
        column of numbers: each cast to text, as its dictionary is): encoding hashes every
        distinct id, 1-2 s for 5M of them, which an evaluation that looks the items up in
        the truth's ids never needs (:func:`receval.evaluation.align.align`). Checked as
        encoded ids are; any other column is encoded as always.

    Returns
    -------
    DataFrame or pyarrow.Table
        receval's column names; ``rating``, ``score``, ``rank`` and ``prediction`` as
        finite floats; ids as text (categorical / dictionary-encoded) unless
        ``text_ids=False``.

    Raises
    ------
    DataError
        One line naming the file (and line, column) for an unknown format or kind, a
        missing file or column, an empty or header-only file, a malformed line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "train.csv"
    >>> _ = p.write_text("user,item,rating\\n1,10,4\\n1,11,2\\n2,10,5\\n")
    >>> table = read_table(p, "train")
    >>> table.to_dict("list")
    {'user': ['1', '1', '2'], 'item': ['10', '11', '10'], 'rating': [4.0, 2.0, 5.0]}
    >>> str(table["user"].dtype)
    'category'
    """
    located = read_located(
        path, kind, required, format=format, columns=columns, header=header, positional=positional,
        text_ids=text_ids, option=option, unique=unique, label=label, sep=sep, plain_items=plain_items,
    )  # fmt: skip
    if arrow:
        return located.table
    frame = located.table.to_pandas()
    if located.token_seq:
        frame.attrs["token_seq"] = list(located.token_seq)
    return frame


def read_located(
    path: str | Path,
    kind: str,
    required: Sequence[str] = (),
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
    header: bool | None = None,
    positional: Sequence[str] | None = None,
    text_ids: bool = True,
    option: str = "format=",
    unique: Sequence[str] = (),
    label: str | None = None,
    sep: str | None = None,
    text_columns: Sequence[str] = (),
    plain_items: bool = False,
) -> Located:
    """:func:`read_table` as an Arrow table with the file's line of each row (for messages about rows found later).

    ``text_columns`` names further columns of delimited text kept as written
    (dictionary-encoded text, as ids are), not parsed: a list of item ids in columns of
    their own (NCF's negatives), where ``0286`` must stay ``0286``. ``plain_items``: as
    :func:`read_table`'s.

    Returns
    -------
    Located
        ``table`` (the Arrow table) and ``line_of(row)``, the file line of a row.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = p.write_text("user,item,rating\\n\\n7,x,4\\n")
    >>> got = read_located(p, "train")
    >>> got.table.column_names, got.line_of(0)
    (['user', 'item', 'rating'], 3)
    """
    if kind not in KINDS:
        raise DataError(f"unknown table kind {kind!r}; use one of: {', '.join(KINDS)}")
    label = kind if label is None else label
    path = Path(path)
    fmt = check_format(format, option, path) if format is not None else None
    if not path.exists() and fmt != "yelp":  # yelp's own message names the folder and files it expects
        raise DataError(f"{label} file not found", path=path)
    layout = LAYOUTS.get(fmt) if fmt is not None else None
    if layout is not None and path.is_dir():
        path = ratings_file(path, fmt)  # type: ignore[arg-type]
    if path.is_dir() and fmt != "yelp":
        raise DataError(f"the {label} path is a folder; give the file, or {option} naming a data set format",
                        path=path, parameters=named(option))  # fmt: skip
    value = "score" if kind == "recommendations" else "rating"
    last = "prediction" if kind == "predictions" else "timestamp"
    names = tuple(positional) if positional is not None else ("user", "item", value, last)
    if fmt is None:
        fmt, detected_header = detect(path, label, option)
        header = detected_header if header is None else header
        layout = LAYOUTS.get(fmt)
    reader = _Reader(path, label, names, text_ids, columns)
    reader.text = frozenset(text_columns)
    reader.plain_items = plain_items
    businesses = None
    if layout is not None:
        table = reader.delimited(layout.sep, layout.names is None, layout.names)
        missing = [c for c in layout.header if c not in table.column_names]
        if missing:
            raise DataError(f"missing required column {missing[0]!r}; this format's header is "
                            f"{','.join(layout.header)}", path=path, line=1, column=missing[0])  # fmt: skip
    elif fmt in ("csv", "tsv"):
        sep = _separator(sep if sep is not None else "," if fmt == "csv" else "\t", path)
        table = reader.delimited(sep, has_header(path, sep, columns) if header is None else header)
    elif sep is not None:
        raise DataError(f"a separator (sep=) applies to csv and tsv files, not {fmt}", path=path)
    elif fmt == "parquet":
        table = reader.parquet()
    elif fmt == "trec":
        table = reader.trec()
    elif fmt == "ranx-json":
        table = reader.json(value)
    elif fmt == "yelp":
        table, businesses = reader.yelp()
        path = reader.path  # the review file, which messages about a row name
    else:
        table = reader.recbole()
    import pyarrow as pa

    # one chunk, one dictionary per id column: every later look at a column is a view, not a merge
    held = [table]
    del table  # one_chunk frees each column's chunks once it is combined
    # a plain item column (plain_items) stays in its chunks: looked up, never viewed (combined, its text is copied)
    names = held[0].column_names
    items = (
        (n, _many_items(held[0][n], n in reader.kept_plain)) for n in names if reader._plain(reader.role_of.get(n, n))
    )
    plain = {n: column for n, column in items if column is not None}
    if plain:
        held[0] = held[0].drop_columns(list(plain))
    table = _arrow.one_chunk(held)
    if plain:
        table = pa.Table.from_arrays([plain[n] if n in plain else table[n] for n in names], names=names)
    table = _roles(table, path, kind, columns)
    if text_ids:  # ids as text in every file, so that they match across files and formats
        for j, col in enumerate(table.column_names):
            kind_of = table.column(j).type
            if (
                col in _IDS
                and not pa.types.is_dictionary(kind_of)
                and not (plain and col == "item" and _arrow.is_text(kind_of))
            ):
                table = table.set_column(j, col, text_dictionary(table.column(j)))
    if table.num_rows == 0:
        text = reader.sep is not None and reader.header
        raise DataError(f"the {label} file has {'a header but ' if text else ''}no rows; "
                        "a table needs at least one", path=path, line=2 if text else None)  # fmt: skip
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise DataError(
            f"missing required column {missing[0]!r}: the {label} file needs columns {', '.join(required)}; "
            f"it has {table.column_names} (name yours with columns={{'{missing[0]}': COL}}, or header=False for "
            "positional columns)",
            path=path,
            line=1 if reader.sep is not None and reader.header else None,
            column=missing[0],
            parameters=["columns", "header"],
        )
    _check_values(table, path, reader.line_of)
    if unique and all(c in table.column_names for c in unique):
        _check_unique(table, list(unique), path, label, reader.line_of)
    return Located(table, path, reader.line_of, tuple(reader.token_seq or ()), businesses)


def _separator(sep: str, path: Path) -> str:
    """A field separator as given (``tab`` and ``\\t`` name a tab); one character, or ``::`` as MovieLens writes."""
    sep = {"\\t": "\t", "tab": "\t"}.get(sep, sep)
    if len(sep) != 1 and sep != "::":
        raise DataError(f"separator {sep!r} must be one character (or ::)", path=path)
    return sep


def _check_unique(table: pa.Table, cols: list[str], path: Path, what: str, line_of: Any) -> None:
    """A row repeating an earlier row's ``cols`` is an error naming both lines (keys from the id codes)."""
    keys, span = np.zeros(table.num_rows, dtype=np.int64), 1
    for col in cols:
        # an Arrow dictionary's codes and size, without its ids as Python strings (0.03 s for a 225,000-row truth)
        dictionary = _arrow.dictionary(table[col]) if _text_dictionary_of(table[col]) else None
        dictionary = dictionary if dictionary is not None else vocab.dictionary_codes(table[col])
        if dictionary is None:
            column = table[col]
            values = _arrow.numbers(column) if _arrow.is_numeric(column) else _arrow.text(column).astype(str)
            codes = np.unique(values, return_inverse=True)[1]
            size = int(codes.max()) + 2 if len(codes) else 1
        else:
            codes, size = dictionary[0].astype(np.int64) + 1, len(dictionary[1]) + 1
        if span * size >= 1 << 62:  # re-coded before the key could overflow
            keys = np.unique(keys, return_inverse=True)[1]
            span = int(keys.max()) + 1 if len(keys) else 1
        keys, span = keys * size + codes, span * size
    ordered = np.sort(keys)
    if not (ordered[1:] == ordered[:-1]).any():
        return
    order = np.argsort(keys, kind="stable")  # within a key, rows in file order
    ordered = keys[order]
    later = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
    row = int(order[later].min())
    first = int(order[np.searchsorted(ordered, keys[row])])
    shown = ", ".join(f"{c} {table[c][row].as_py()!r}" for c in cols)
    where_first = line_of(first)
    before = f"line {where_first}" if where_first is not None else f"row {first + 1}"
    message = f"{shown} repeats {before} ({len(later)} repeated pairs in the {what}); keep one row per pair"
    line = line_of(row)
    if line is None:
        raise DataError(f"row {row + 1}: {message}", path=path)
    raise DataError(message, path=path, line=line)


def read_aspects(path: str | Path, item_ids: np.ndarray | None = None, **options: Any) -> pd.DataFrame:
    """An item → aspect table (columns ``item``, ``aspect``; ``|`` separates several aspects in one cell).

    Blank aspects are left out. With ``item_ids`` (a data set's id space), items
    are matched by value, text read as the id space's kind (``'12'`` is item 12),
    the table's ``item`` column takes the data set's own ids, and items outside it
    are dropped (unrated items carry no signal); none matching is an error.
    ``options`` go to :func:`read_table`.

    Returns
    -------
    pandas.DataFrame
        One row per (item, aspect), columns ``item`` and ``aspect``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_text("item,aspect\\n1,Drama|Comedy\\n2, \\n9,War\\n")
    >>> read_aspects(p, np.array([1, 2, 3])).to_dict("list")
    {'item': [1, 1], 'aspect': ['Drama', 'Comedy']}
    """
    path = Path(path)
    options.setdefault("positional", ("item", "aspect"))
    table = read_table(path, "aspects", ("item",), **options)
    sequences = table.attrs.get("token_seq", ())
    if "aspect" not in table.columns and len(table.columns) == 2:  # a RecBole .item file: item_id and one feature
        table = table.rename(columns={c: "aspect" for c in table.columns if c != "item"})
    if "aspect" not in table.columns:
        raise DataError(
            f"the aspects file needs columns item, aspect; it has {list(table.columns)} (name yours with "
            "columns={'aspect': COL}, or give a file of two columns: item, aspect)",
            path=path,
            column="aspect",
            parameters=["columns"],
        )
    split = r"[|\s]+" if sequences else "|"  # RecBole token_seq fields are space-separated
    table = table[["item", "aspect"]].astype({"item": str, "aspect": str})
    table = table.assign(aspect=table["aspect"].str.split(split, regex=bool(sequences)))
    table = table.explode("aspect", ignore_index=True)
    table["aspect"] = table["aspect"].str.strip()
    table = table[table["aspect"] != ""]
    if item_ids is None:
        return table.reset_index(drop=True)
    idx = vocab.index_of(item_ids, table["item"].str.strip().to_numpy(dtype=object), coerce=True)
    table = table[idx >= 0].assign(item=item_ids[idx[idx >= 0]])
    if table.empty:
        raise DataError("no item of the aspects file is in the data set (compare the item ids)", path=path)
    return table.reset_index(drop=True)


# ------------------------------------------------------------------ readers
class _Reader:
    """One file's readers; ``line_of(row)`` gives a data row's line for error messages."""

    def __init__(
        self, path: Path, what: str, names: tuple[str, ...], text_ids: bool, columns: Mapping[str, str] | None = None
    ) -> None:
        self.path, self.what, self.names, self.text_ids = path, what, names, text_ids
        self.role_of = {name: role for role, name in (columns or {}).items()}
        self.sep: str | None = None
        self.header = True
        self.whitespace = False
        self.comments = False  # lines starting with '#' are not records (TREC files)
        self.token_seq: list[str] | None = None  # a RecBole file's token_seq columns
        self.json_lines: Callable[[int], int | None] | None = None  # a JSON-lines file's line of a row
        self.text: frozenset[str] = (
            frozenset()
        )  # further columns kept as the text written (read_located's text_columns)
        self.plain_items = False  # a text item column stays plain text (read_located's plain_items)
        self.kept_plain: set[str] = set()  # the Parquet columns kept plain (plain_items, many distinct ids)

    def _plain(self, role: str) -> bool:
        """Whether a column of this role (or another library's name for it) stays plain text."""
        return self.plain_items and (role == "item" or role in _KNOWN["item"])

    def _many_in_head(self, field: int, sep: str) -> bool:
        """Whether the file holds more than :data:`_HEAD` lines (in its first 512 KB) whose field ``field`` are
        mostly distinct (a run over millions of items: read as plain text, :func:`_many_items`). 5 ms."""
        lines = head_lines(self.path, 1 << 19)[int(self.header) : _HEAD + 1 + int(self.header)]
        if len(lines) <= _HEAD:
            return False
        values = {fields[field] for fields in (line.split(sep) for line in lines[:_HEAD]) if len(fields) > field}
        return 2 * len(values) > _HEAD

    def line_of(self, row: int) -> int | None:
        if self.json_lines is not None:
            return self.json_lines(row)
        if self.sep is None:
            return None
        skip = 1 if self.header else 0
        for j, (number, _) in enumerate(_records(self.path, self.sep, self.whitespace, self.comments)):
            if j == row + skip:
                return number
        return None

    def delimited(
        self, sep: str, header: bool, names: Sequence[str] | None = None, keep: Sequence[str] | None = None
    ) -> pa.Table:
        import pyarrow as pa
        import pyarrow.csv as pv

        self.sep, self.header = sep, header
        if header:
            own = _header(self.path, sep)
        else:
            n = _field_count(self.path, sep, self.whitespace)
            own = list(names) if names is not None else _positional(self.names, n)
            if len(own) != n:
                raise DataError(
                    f"has {n} fields, expected {len(own)} ({' '.join(own)})",
                    path=self.path,
                    line=_first_line(self.path),
                )
        # '::' (MovieLens 1M/10M): Arrow splits on ':' and the empty field between each pair is dropped
        doubled = len(sep) == 2 and sep[0] == sep[1]
        parsed = [own[0], *(x for j, c in enumerate(own[1:], 1) for x in (f"_gap{j}", c))] if doubled else own
        if header and not doubled:
            read = pv.ReadOptions(use_threads=True, block_size=1 << 20)
        else:
            read = pv.ReadOptions(column_names=parsed, skip_rows=int(header), use_threads=True, block_size=1 << 20)
        types: dict[str, Any] = {c: pa.float64() for c in NUMERIC if c in own}
        named = set(own)  # membership per column: a list would make a table of many columns quadratic
        types.update({c: pa.string() for c in parsed if c not in named})
        ids = pa.dictionary(pa.int32(), pa.string()) if self.text_ids else None
        for col in own:
            base = self.role_of.get(col, col.split(":")[0])
            if col in self.text:
                types[col] = pa.dictionary(pa.int32(), pa.string())
            elif base in _IDS or base in _KNOWN["user"] + _KNOWN["item"]:
                if ids is not None and self._plain(base) and not doubled and self._many_in_head(own.index(col), sep):
                    types[col] = pa.string()  # millions of distinct items, each row looked up: not hashed here
                    self.kept_plain.add(col)
                elif ids is not None:
                    types[col] = ids
            elif base == "aspect":
                types[col] = pa.string()
            elif base in NUMERIC + _KNOWN["rating"]:
                types[col] = pa.float64()
        numeric = [c for c in own if types.get(c) == pa.float64()]
        gaps = [c for c in parsed if c not in named]
        wanted = None if keep is None else [*keep, *gaps]
        convert = pv.ConvertOptions(
            column_types=types, null_values=[""], strings_can_be_null=False, include_columns=wanted
        )
        try:
            try:
                with _source.arrow_input(self.path) as source:
                    table = pv.read_csv(
                        source, read_options=read, parse_options=pv.ParseOptions(delimiter=sep[0]),
                        convert_options=convert,
                    )  # fmt: skip
            except pa.ArrowInvalid as exc:
                if "block" not in str(exc):  # "straddles two block boundaries", "Empty CSV file or block"
                    raise
                # a line longer than a block: read again in blocks that hold any line the line reader takes
                read.block_size = _source.MAX_LINE + 1
                with _source.arrow_input(self.path) as source:
                    table = pv.read_csv(
                        source, read_options=read, parse_options=pv.ParseOptions(delimiter=sep[0]),
                        convert_options=convert,
                    )  # fmt: skip
            if gaps and _gap_text(table, gaps):  # a single ':' inside a field
                raise pa.ArrowInvalid(f"a field is separated by a single {sep[0]!r}")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise _locate(self.path, sep, header, own, self.whitespace, exc, numeric) from exc
        return table.drop_columns(gaps) if gaps else table

    def trec(self) -> pa.Table:
        """A TREC run or qrels file read as trec_eval reads it (``get_trec_results.c``, ``get_qrels.c``).

        Fields are separated by white space; a run line's fields after its run tag are
        ignored (a tag written with spaces in a tab-separated file among them); lines whose
        first character after any white space is ``#`` are comments.
        """
        comments = _has_comment_lines(self.path)
        first = [line for line in head_lines(self.path) if not line.lstrip().startswith("#")]
        if not first:
            raise DataError(f"the {self.what} file is empty", path=self.path, line=1)
        n = len(first[0].split())
        names: tuple[str, ...]
        if n >= 6:
            names, keep = ("user", "_q0", "item", "rank", "score", "_tag"), ["user", "item", "score"]
            expected = "a TREC run line is: qid Q0 docid rank score tag"
        elif n == 4:
            names, keep = ("user", "_iter", "item", "rating"), ["user", "item", "rating"]
            expected = "a TREC qrels line is: qid 0 docid grade"
        else:
            raise DataError(f"has {n} fields; {self._trec_help()}", path=self.path, line=_first_line(self.path))
        if not comments:  # the fast readers, for files whose every line has the same fields
            sep = "\t" if "\t" in first[0] else " "
            self.whitespace = sep == " " and any("  " in line.strip() for line in first)
            try:
                if self.whitespace:
                    import pandas as pd

                    with warnings.catch_warnings():  # pandas drops the fields of a longer line with a warning
                        warnings.simplefilter("error", pd.errors.ParserWarning)
                        return self._whitespace(names, expected).select(keep)
                return self.delimited(sep, False, names, keep)  # the other fields are parsed, not converted
            except DataError as err:
                if err.line is None or "fields" not in err.message:
                    raise
            except Warning:
                pass
        return self._trec_lines(names, keep, expected)

    def _trec_lines(self, names: tuple[str, ...], keep: list[str], expected: str) -> pa.Table:
        """Line by line: comments skipped, a run's fields after the tag ignored, every line checked."""
        import pyarrow as pa

        self.sep, self.header, self.whitespace, self.comments = " ", False, True, True
        run = len(names) == 6
        columns: dict[str, list[str]] = {name: [] for name in keep}
        at = [names.index(name) for name in keep]
        for number, fields in _records(self.path, " ", whitespace=True, comments=True):
            if len(fields) < 6 if run else len(fields) != 4:
                wanted = "at least 6" if run else "4"
                raise DataError(f"has {len(fields)} fields, expected {wanted}; {expected}", path=self.path,
                                line=number)  # fmt: skip
            for name, j in zip(keep, at, strict=True):
                columns[name].append(fields[j])
        value = keep[-1]
        numbers = pa.array(columns.pop(value))
        try:
            parsed = numbers.cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            bad = next(j for j, text in enumerate(numbers.to_pylist()) if not _is_number(text))
            raise DataError(f"{value} {numbers[bad].as_py()!r} is not a number", path=self.path,
                            line=self.line_of(bad), column=value) from None  # fmt: skip
        ids = {name: pa.array(values).dictionary_encode() if self.text_ids else pa.array(values)
               for name, values in columns.items()}  # fmt: skip
        return pa.table({**ids, value: parsed})

    def _trec_help(self) -> str:
        return "a TREC run line is 'qid Q0 docid rank score tag' (6 fields), a qrels line 'qid 0 docid grade' (4)"

    def _whitespace(self, names: tuple[str, ...], expected: str) -> pa.Table:
        """Fields separated by runs of spaces (as trec_eval accepts): pandas' C parser, then the same checks."""
        import pandas as pd
        import pyarrow as pa

        self.sep, self.header = " ", False
        dtype: dict[str, Any] = {c: str for c in _IDS if self.text_ids}
        dtype.update({c: "float64" for c in NUMERIC if c in names})
        try:
            with _source.open_binary(self.path) as fh:
                frame = pd.read_csv(
                    fh, sep=r"\s+", header=None, names=list(names), index_col=False, engine="c", dtype=dtype,
                )  # fmt: skip
        except (ValueError, pd.errors.ParserError) as exc:
            located = _locate(self.path, " ", False, list(names), True, exc)
            raise DataError(f"{located.message}; {expected}", path=self.path, line=located.line,
                            column=located.column) from exc  # fmt: skip
        frame = frame.astype({c: "category" for c in _IDS if self.text_ids})
        return pa.Table.from_pandas(frame, preserve_index=False)

    def parquet(self) -> pa.Table:
        import pyarrow as pa
        import pyarrow.parquet as pq

        source: Any = str(_source.readable(self.path))
        if _source.compression(self.path) is not None:  # Parquet needs random access: decompressed into memory
            with _source.open_binary(self.path) as fh:
                source = pa.BufferReader(fh.read())
        try:
            table = pq.read_table(source, read_dictionary=self._users_encoded(source))
        except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
            raise DataError(f"not a readable Parquet file ({exc})", path=self.path) from exc
        _check_types(table, self.path, self.role_of)
        if self.text_ids:  # ids as text, dictionary-encoded in Arrow: pandas receives categorical columns
            for j, name in enumerate(table.column_names):
                role = self.role_of.get(name, name)
                column = table.column(j)
                if not (role in _IDS or role in _KNOWN["user"] + _KNOWN["item"]) or pa.types.is_dictionary(column.type):
                    continue
                many = self._plain(role) and _many_distinct(column)
                if many and _arrow.is_numeric(column):  # each number as text, as a dictionary casts it
                    import pyarrow.compute as pc

                    table = table.set_column(j, name, pc.cast(column, pa.string()))
                elif not (many and _arrow.is_text(column.type)):
                    table = table.set_column(j, name, text_dictionary(column))
                    continue
                self.kept_plain.add(name)
        for j, name in enumerate(table.column_names):
            if name in NUMERIC + _KNOWN["rating"]:
                table = table.set_column(j, name, _numbers(table.column(j), name, self.path, None))
        return table

    def _users_encoded(self, source: Any) -> list[str] | None:
        """The text user columns of a run's Parquet file (``plain_items``), read as the dictionaries they are stored as.

        A run names each user in many rows: Parquet keeps them as a dictionary per row group,
        which the read keeps (and :func:`~receval.data._arrow.one_chunk` unifies: the same
        dictionary and codes as encoding the text, first appearance first) instead of
        decoding millions of strings and hashing them again (0.2-1 s for 5M rows).
        """
        if not self.plain_items or not isinstance(source, str):
            return None
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(source)
        except Exception:  # not Parquet: the read names the error
            return None
        users = [f.name for f in schema if pa.types.is_string(f.type) and _is_user(self.role_of.get(f.name, f.name))]
        return users or None

    def json(self, value: str) -> pa.Table:
        with _source.open_binary(self.path) as fh:
            nested = _parse_json(fh.read(), self.path)
        import pyarrow as pa

        return pa.Table.from_pandas(from_nested(nested, value, source=self.path), preserve_index=False)

    def yelp(self) -> tuple[pa.Table, pa.Table]:
        """The Yelp Open Dataset's reviews and its businesses' categories (:func:`receval.data._jsonl.read_yelp`)."""
        yelp = _jsonl.read_yelp(self.path)
        self.path, self.json_lines = yelp.path, yelp.line_of
        return yelp.reviews, yelp.businesses

    def recbole(self) -> pa.Table:
        """RecBole atomic file: tab-separated, ``name:type`` header; ``token_seq`` fields stay text."""
        table = self.delimited("\t", True)
        names = table.column_names
        for j, col in enumerate(names):
            if ":" in col and col.split(":")[1] in ("float", "float_seq"):
                table = table.set_column(j, col, _numbers(table.column(j), col, self.path, self.line_of))
        self.token_seq = [c.split(":")[0] for c in names if c.endswith(":token_seq")]
        known = {name: role for role, names in _KNOWN.items() for name in names}
        for col in names:  # a sequence of ids in one field is not one id (an item's genres may be one)
            base = col.split(":")[0]
            role = self.role_of.get(base) or (base if base in ROLES else known.get(base))
            if col.endswith(":token_seq") and role in _IDS:
                raise DataError(
                    f"the {role} column is a token_seq (space-separated {role} ids in one field); receval reads "
                    f"one {role} per row: give a file with {base}:token, one row per {role}",
                    path=self.path,
                    column=col,
                )
        return table.rename_columns([c.split(":")[0] for c in names])


def _parse_json(raw: bytes, path: Path) -> Any:
    """JSON text parsed with every object's keys unique; a repeated key, bad text or runaway nesting is a DataError.

    Python's ``json`` keeps the last of two equal keys without a word, so a run listing
    an item twice would be scored with whichever score came last.

    >>> _parse_json(b'{"u": {"a": 1, "b": 2}}', Path("run.json"))
    {'u': {'a': 1, 'b': 2}}
    >>> _parse_json(b'{"u": {"a": 1, "a": 2}}', Path("run.json"))
    Traceback (most recent call last):
    ...
    receval.errors.DataError: run.json: user 'u' lists item 'a' twice; keep one (each pair once)
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise DataError("the file is not UTF-8 text; save it as UTF-8", path=path, line=line) from None
    repeated: list[tuple[str, dict[str, Any]]] = []

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) < len(pairs) and not repeated:
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    repeated.append((key, obj))
                    break
                seen.add(key)
        return obj

    try:
        nested = json.loads(text, object_pairs_hook=unique)
    except json.JSONDecodeError as err:
        raise DataError(f"not valid JSON: {err.msg} (column {err.colno})", path=path, line=err.lineno) from None
    except RecursionError:  # the C parser's own depth limit: raised cleanly, nothing half-built survives
        raise DataError(
            f"the JSON is nested deeper than Python reads ({sys.getrecursionlimit()} levels); "
            "a run or qrels file is {user: {item: score}}, two levels",
            path=path,
        ) from None
    if repeated:
        key, obj = repeated[0]
        owner = next((u for u, row in nested.items() if row is obj), None) if isinstance(nested, dict) else None
        if obj is nested:
            where = f"user {key!r} appears"
        elif owner is not None:
            where = f"user {owner!r} lists item {key!r}"
        else:
            where = f"key {key!r} appears in one object"
        raise DataError(f"{where} twice; keep one (each pair once)", path=path)
    return nested


def _check_types(table: pa.Table, path: Path | None, role_of: Mapping[str, str]) -> None:
    """The columns receval reads hold one flat value per row, and a float id column no NaN (a missing id).

    ``role_of`` maps a column's own name to its role (``columns`` turned around); other
    libraries' names are recognised, and a column of no role is not looked at.
    """
    import pyarrow as pa

    known = {name: role for role, names in _KNOWN.items() for name in names}
    for j, name in enumerate(table.column_names):
        role = role_of.get(name) or (name if name in ROLES else known.get(name))
        if role is None:
            continue  # a column no reader uses
        column = table.column(j)
        if not _arrow.is_flat(column.type):
            raise DataError(
                f"the {role} column has type {column.type}; receval reads columns of {_arrow.FLAT_TYPES}, "
                "one value a row (a list as one row per value, a struct field or binary as text in a column)",
                path=path,
                column=name,
            )
        if role in _IDS and pa.types.is_floating(column.type):
            missing = np.isnan(_arrow.numbers(column))
            if missing.any():
                raise DataError(f"row {int(np.argmax(missing)) + 1}: empty {role} id (NaN)", path=path, column=name)


def as_frame(obj: Any, what: str, columns: Mapping[str, str] | None = None) -> Any:
    """An in-memory table in receval's columns: DataFrames, Arrow tables, ranx ``Run``/``Qrels``, dicts.

    ``{user: {item: value}}`` dicts (ir-measures, pytrec_eval, ``ranx.Run.to_dict()``),
    lists of ir-measures ``Qrel``/``ScoredDoc`` tuples and ranx objects become
    ``user, item, score`` (``rating`` for the truth); a
    DataFrame or ``pyarrow.Table`` has its columns renamed by ``columns`` and by other libraries' names
    (LensKit's ``user_id``/``item_id``, ranx's ``q_id``/``doc_id``). Anything else
    (None, :class:`~receval.Interactions`, arrays, matrices) is returned as it is.

    >>> import pandas as pd
    >>> as_frame({"u": {"i": 3}}, "truth").to_dict("list")
    {'user': ['u'], 'item': ['i'], 'rating': [3.0]}
    >>> as_frame(pd.DataFrame({"user_id": [1], "item_id": [2], "score": [0.5]}), "recommendations").columns.tolist()
    ['user', 'item', 'score']
    """
    value = "score" if what.startswith("recommendation") else "rating"
    if type(obj).__module__.startswith("pyarrow") and hasattr(obj, "column_names"):  # a pyarrow.Table
        table = _roles(obj, None, what, columns)
        _check_types(table, None, {})
        return table
    if type(obj).__module__.startswith("ranx") and hasattr(obj, "to_dict"):  # ranx.Run / ranx.Qrels
        obj = obj.to_dict()
    if isinstance(obj, list | tuple) and obj and hasattr(obj[0], "_fields") and "query_id" in obj[0]._fields:
        obj = _named_rows(obj, value)  # ir-measures Qrel / ScoredDoc tuples
    if isinstance(obj, Mapping):
        return from_nested(obj, value)
    if type(obj).__module__.startswith("pandas") and hasattr(obj, "columns"):  # a DataFrame
        frame = _roles(obj, None, what, columns)
        _check_cells(frame)
        return frame
    return obj


def _check_cells(frame: pd.DataFrame) -> None:
    """A DataFrame's receval columns hold one value a cell: a list, tuple, dict, set, array or bytes is refused.

    pandas keeps such cells in object columns, which would otherwise be read as their
    text (``['a']``). The per-cell look runs only where pandas' own scan saw mixed objects.
    """
    import pandas as pd

    for name in frame.columns:
        if name not in ROLES or frame[name].dtype != object:
            continue
        if pd.api.types.infer_dtype(frame[name], skipna=True) not in ("mixed", "mixed-integer", "bytes"):
            continue
        values = frame[name].to_numpy()
        several = (list, tuple, dict, set, bytes, np.ndarray)
        row = next((j for j, v in enumerate(values) if isinstance(v, several)), None)
        if row is not None:
            raise DataError(
                f"row {row + 1}: the {name} column holds a {type(values[row]).__name__} value; receval reads "
                f"{_arrow.FLAT_TYPES}, one value a cell (a list as one row per value, bytes decoded to text)",
                column=name,
            )


def text_dictionary(column: Any) -> Any:
    """An Arrow id column dictionary-encoded with text values (numbers: encoded first, then each distinct one cast).

    One chunk, one dictionary: the chunks of an encoded chunked array each carry the whole
    dictionary, which the table's later unification would walk once per chunk (minutes for
    millions of distinct ids).

    Returns
    -------
    pyarrow.ChunkedArray
        The column dictionary-encoded, its dictionary of text (one chunk unless it exceeds 2 GiB).

    >>> import pyarrow as pa
    >>> encoded = text_dictionary(pa.chunked_array([[7, 5], [7]]))
    >>> encoded.chunk(0).dictionary.to_pylist(), encoded.chunk(0).indices.to_pylist()
    (['7', '5'], [0, 1, 0])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray) and column.num_chunks > 1:
        with contextlib.suppress(pa.ArrowInvalid):  # text beyond 2 GiB cannot be one chunk: encoded as it is
            column = pa.chunked_array([column.combine_chunks()])
    encoded = pc.dictionary_encode(column)
    if pa.types.is_string(encoded.type.value_type):
        return encoded
    chunks = [pa.DictionaryArray.from_arrays(c.indices, pc.cast(c.dictionary, pa.string())) for c in encoded.chunks]
    return pa.chunked_array(chunks, type=pa.dictionary(encoded.type.index_type, pa.string()))


def _named_rows(rows: Sequence[Any], value: str) -> pd.DataFrame:
    import pandas as pd

    fields = rows[0]._fields
    source = "relevance" if "relevance" in fields else "score"
    frame = pd.DataFrame.from_records(rows, columns=fields)
    return pd.DataFrame({"user": frame["query_id"], "item": frame["doc_id"], value: frame[source].astype(float)})


def from_nested(nested: Any, value: str = "score", *, source: object | None = None) -> pd.DataFrame:
    """``{user: {item: value}}`` (ranx, ir-measures, pytrec_eval) as a frame ``user, item, <value>``.

    >>> from_nested({"u1": {"a": 2.0, "b": 1.0}, "u2": {"a": 0.5}}).to_dict("list")
    {'user': ['u1', 'u1', 'u2'], 'item': ['a', 'b', 'a'], 'score': [2.0, 1.0, 0.5]}
    """
    if not isinstance(nested, Mapping):
        raise DataError(f"expected {{user: {{item: {value}}}}}, got {type(nested).__name__}", path=source)
    users: list[Any] = []
    items: list[Any] = []
    values: list[Any] = []
    for user, row in nested.items():
        if not isinstance(row, Mapping):
            raise DataError(f"user {user!r}: expected {{item: {value}}}, got {type(row).__name__}", path=source)
        users += [user] * len(row)
        items += list(row.keys())
        values += list(row.values())
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        j = next(j for j, v in enumerate(values) if not _is_number(v))
        raise DataError(
            f"the {value} of user {users[j]!r}, item {items[j]!r} is {values[j]!r}, not a number", path=source
        ) from None
    import pandas as pd

    return pd.DataFrame({"user": users, "item": items, value: numbers})


def is_time(text: str) -> bool:
    """Whether ``text`` is a number or an ISO 8601 date (what a timestamp column may hold).

    Returns
    -------
    bool
        True for text that reads as a number or as an ISO 8601 date or date-time.

    Examples
    --------
    >>> is_time("887431973"), is_time("2020-01-02 12:00"), is_time("soon"), is_time("")
    (True, True, False, False)
    """
    import datetime

    if _is_number(text):
        return True
    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


# ------------------------------------------------------------------ columns
def _roles(frame: Any, path: Path | None, what: str, columns: Mapping[str, str] | None) -> Any:
    """The table's columns renamed to receval's: the ``columns`` map, then other libraries' names.

    ``frame`` is a pandas DataFrame or a pyarrow Table; the result is of the same kind.
    """
    arrow = hasattr(frame, "column_names")
    present = list(frame.column_names) if arrow else list(frame.columns)
    rename: dict[str, str] = {}
    uses = _USES.get(what, ROLES)
    for role, name in (columns or {}).items():
        if role not in ROLES:
            raise DataError(f"unknown column role {role!r}; use one of {', '.join(ROLES)}", path=path)
        if name in present:
            rename[name] = role
        elif role in uses and role not in present:
            raise DataError(
                f"columns={{{role!r}: {name!r}}}: the {what} {'file' if path else 'table'} has no such column; "
                f"it has {present}",
                path=path,
                column=name,
                parameters=["columns"],
            )
        elif role in uses and name != role:  # one option may name the columns of several files: said, not refused
            where = f"{path}: " if path else ""
            warnings.warn(
                ReceValWarning(
                    f"{where}columns={{{role!r}: {name!r}}}: the {what} {'file' if path else 'table'} has no column "
                    f"{name!r}; its column {role!r} is read",
                    parameters=["columns"],
                ),
                stacklevel=2,
            )
    taken = set(rename.values())
    for role, names in _KNOWN.items():
        if role in taken or role in present:
            continue
        found = [n for n in names if n in present and n not in rename]
        if found:
            rename[found[0]] = role
            taken.add(role)
    if what == "truth" and "rating" not in taken and "rating" not in present and "score" in present:
        rename.setdefault("score", "rating")  # a qrels table (ranx) calls the grade 'score'
    renamed = [rename.get(c, c) for c in present]
    counts = collections.Counter(renamed)  # not list.count per column: a table may have 1e5 columns
    clash = next((c for c in renamed if counts[c] > 1), None)
    if clash is not None:
        raise DataError(f"two columns would be called {clash!r}; map only one of them", path=path)
    return frame.rename_columns(renamed) if arrow else frame.rename(columns=rename)


def _gap_text(table: pa.Table, gaps: list[str]) -> bool:
    """Whether a column between two fields of a ``::`` file holds text (the compute kernels load only here)."""
    import pyarrow.compute as pc

    return any(pc.any(pc.not_equal(table[c], "")).as_py() for c in gaps)


def _positional(names: tuple[str, ...], n: int) -> list[str]:
    return list(names[:n]) + [f"column{j + 1}" for j in range(len(names), n)]


def _header(path: Path, sep: str) -> list[str]:
    with _source.open_binary(path) as fh:
        first = next(_source.lines(fh, path), b"")
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError("the header is not UTF-8 text; save the file as UTF-8", path=path, line=1) from None
    if not text.strip():
        raise DataError("the file is empty: it has no header and no rows", path=path, line=1)
    return [h.strip() for h in _split(text, sep, path, 1)]


def _split(text: str, sep: str, path: Path | None = None, line: int | None = None) -> list[str]:
    """A line's fields: csv quoting for a one-character separator, a plain split for ``::``.

    A carriage return inside an unquoted field is an error naming the line: lines ended by
    ``\\r`` alone (an old Mac file) are one line to a reader that splits at ``\\n``.

    >>> _split('a,"b,c",d\\r\\n', ",")
    ['a', 'b,c', 'd']
    >>> _split("user,item\\ru1,i1\\r", ",", Path("mac.csv"), 1)
    Traceback (most recent call last):
    ...
    receval.errors.DataError: mac.csv, line 1: the line holds a carriage return (\\r) inside it: ...
    """
    if len(sep) > 1:
        return text.rstrip("\r\n").split(sep)
    if len(text) > csv.field_size_limit():  # csv's own limit (128 KiB) is below the longest line read (MAX_LINE)
        csv.field_size_limit(_source.MAX_LINE)  # only ever raised, so no other reader of csv meets a lower one
    try:
        return next(csv.reader(io.StringIO(text), delimiter=sep), [])
    except csv.Error:  # the one error left at this limit: a line end inside an unquoted field
        raise DataError(
            "the line holds a carriage return (\\r) inside it: are its lines ended by \\r alone (an old Mac "
            "file)? save the file with \\n (or \\r\\n) line ends",
            path=path,
            line=line,
        ) from None


_COMMENT = re.compile(rb"\n[ \t]*#")
_FIRST_COMMENT = re.compile(rb"[ \t]*#")  # the file's first line, which no newline precedes


def _has_comment_lines(path: Path) -> bool:
    """Whether a line of the file starts with ``#`` (after white space): trec_eval's comments.

    A file as it is (not compressed) is searched where the system keeps it (``mmap``): read in
    pieces, its copy cost a 240 MB run 0.1 s, more than finding its first ``#`` (``memchr``).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = path.write_text("q1 Q0 d#1 1 0.5 x\\n  # a comment\\n")
    >>> _has_comment_lines(path)
    True
    >>> _ = path.write_text("  # a comment first\\nq1 Q0 d#1 1 0.5 x\\n")
    >>> _has_comment_lines(path)
    True
    >>> _ = path.write_text("q1 Q0 d#1 1 0.5 x\\n")
    >>> _has_comment_lines(path)
    False
    """
    if _source.compression(path) is None:
        import mmap

        with open(_source.readable(path), "rb") as fh:
            if not os.fstat(fh.fileno()).st_size:  # (an empty file cannot be mapped)
                return False
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as view:
                if view.find(b"#") < 0:  # memchr first: most files have no '#'
                    return False
                return _FIRST_COMMENT.match(view) is not None or _COMMENT.search(view) is not None
    before = b"\n"  # what precedes the chunk: the start of a line, or the white space ending the last chunk
    with _source.open_binary(path) as fh:
        while chunk := fh.read(1 << 24):
            if b"#" in chunk and _COMMENT.search(before + chunk):  # memchr first: most files have no '#'
                return True
            rest = chunk[chunk.rfind(b"\n") :] if b"\n" in chunk else before + chunk
            before = rest if not rest.strip() else b""
    return False


def _field_count(path: Path, sep: str, whitespace: bool) -> int:
    for _, fields in _records(path, sep, whitespace):
        return len(fields)
    raise DataError("the file is empty: it has no rows", path=path, line=1)


def _first_line(path: Path) -> int:
    for number, _ in _records(path, ",", False):
        return number
    return 1


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _check_values(table: pa.Table, path: Path, line_of: Any) -> None:
    """Ids present, numbers finite; the first bad value is named by its line (text) or row (Parquet)."""
    import pyarrow as pa

    for col in table.column_names:
        column = table[col]
        numeric = _arrow.is_numeric(column)
        if col in _IDS:
            bad = _missing_ids(column)
            message: str | None = f"empty {col} id"
            if not bad.any():
                bad = _nul_ids(column)
                if bad.any():
                    message = (f"{col} id {column[int(np.argmax(bad))].as_py()!r} holds a NUL byte, which no id can "
                               "(a binary or damaged file?); remove it")  # fmt: skip
        elif col == "rank" and numeric:
            values = _arrow.numbers(column).astype(np.float64)  # nulls are NaN
            with np.errstate(invalid="ignore"):
                bad = ~(values >= 1) | (values != np.floor(values))  # NaN and inf included
            first = values[np.argmax(bad)]
            message = None if np.isnan(first) else f"rank {first:g}: ranks are positive integers (1 first)"
        elif col in NUMERIC and pa.types.is_floating(column.type):
            values = _arrow.numbers(column)
            bad = ~np.isfinite(values)
            message = None
            if col == "rating" and not bad.any():  # ratings are kept as float32: 1e308 would become inf
                bad = np.abs(values) > _FLOAT32_MAX
                message = f"rating {values[np.argmax(bad)]:g} is too large (ratings are 32-bit floats)"
                if not bad.any():  # and 5e-324 would become 0
                    with np.errstate(under="ignore"):
                        bad = (values != 0) & (values.astype(np.float32) == 0)
                    message = (f"rating {values[np.argmax(bad)]:g} is too small: it becomes 0 as a 32-bit float "
                               "(ratings are); give it on a scale of ordinary numbers")  # fmt: skip
        else:
            continue
        if np.any(bad):
            row = int(np.flatnonzero(bad)[0])
            if message is None:
                number = values[row]
                message = f"{col} is missing" if np.isnan(number) else f"{col} {float(number):g} is not a finite number"
            line = line_of(row)
            if line is None:
                raise DataError(f"row {row + 1}: {message}", path=path, column=col)
            raise DataError(message, path=path, line=line, column=col)


_ALNUM = np.frombuffer(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
_ALNUM_BYTE = np.zeros(256, dtype=bool)  # by byte
_ALNUM_BYTE[_ALNUM] = True


def _missing_ids(column: Any) -> np.ndarray:
    """Rows whose id is missing or blank text."""
    if _text_dictionary_of(column):  # an id ending in a letter or a digit is not blank: only the others are decoded
        codes, ids = _arrow.dictionary(column)
        blank = ~np.isin(_arrow.last_bytes(ids), _ALNUM)
        if blank.any():
            blank[blank] = np.char.strip(_arrow.text(ids)[blank].astype(str)) == ""
        return (codes < 0) | (blank[codes] if blank.any() else False)
    if _plain_text(column):  # the same look at each row (plain_items): a Python string only where it may be blank
        # a gather: np.isin sorts 5M values
        blank = ~np.concatenate([np.zeros(0, dtype=bool), *(_arrow.ending_in(c, _ALNUM_BYTE) for c in column.chunks)])
        if blank.any():
            at = np.flatnonzero(blank)
            blank[at] = [v is None or not v.strip() for v in column.take(at).to_pylist()]
        return blank
    dictionary = vocab.dictionary_codes(column)
    if dictionary is not None:
        codes, categories = dictionary
        blank = np.char.strip(categories.astype(str)) == ""
        return (codes < 0) | (blank[codes] if blank.any() else False)
    if _arrow.is_numeric(column):
        return np.isnan(_arrow.numbers(column).astype(np.float64))
    values = _arrow.text(column)
    return np.array([v is None or (isinstance(v, str) and not v.strip()) for v in values], dtype=bool)


def _nul_ids(column: Any) -> np.ndarray:
    """Rows whose id holds a NUL byte (each distinct id looked at once; NumPy's text arrays would drop a final NUL).

    >>> import pyarrow as pa
    >>> _nul_ids(pa.chunked_array([pa.array(["a", "a\\x00b", "a"]).dictionary_encode()])).tolist()
    [False, True, False]
    """
    if _text_dictionary_of(column):  # Arrow searches its dictionary: a Python string per id costs 2 s at 5M ids
        codes, ids = _arrow.dictionary(column)
        nul = _arrow.holding_byte(ids, 0)
        return nul[codes] & (codes >= 0) if nul.any() else np.zeros(len(codes), dtype=bool)
    if _plain_text(column):
        return np.concatenate([np.zeros(0, dtype=bool), *(_arrow.holding_byte(chunk, 0) for chunk in column.chunks)])
    dictionary = vocab.dictionary_codes(column)
    if dictionary is not None:
        codes, categories = dictionary
        nul = np.fromiter(("\x00" in str(v) for v in categories.tolist()), dtype=bool, count=len(categories))
        return nul[codes] & (codes >= 0) if nul.any() else np.zeros(len(codes), dtype=bool)
    if _arrow.is_numeric(column):
        return np.zeros(len(column), dtype=bool)
    return np.array([isinstance(v, str) and "\x00" in v for v in _arrow.text(column)], dtype=bool)


def _text_dictionary_of(column: Any) -> bool:
    """Whether a column is an Arrow dictionary of text (what the readers make of id columns)."""
    if not type(column).__module__.startswith("pyarrow"):
        return False
    value_type = getattr(column.type, "value_type", None)  # only dictionary types have one
    return value_type is not None and _arrow.is_text(value_type)


_SAMPLE = 1 << 16  # first rows of a column whose distinct ids tell whether most of its ids are distinct
_HEAD = 1 << 13  # first lines of a delimited file, the same (read as text, in Python)


def _many_items(column: Any, kept: bool) -> Any:
    """A run's item column as plain text when it names so many distinct ids that hashing them all costs more than
    looking each row up, else None (encoded as always).

    Read as dictionaries block by block (delimited text): decoded when their entries pass
    a million (``_arrow._ENCODED_FROM``), where one dictionary for all takes a hash of
    them all. Plain text: ``kept`` says (a Parquet column whose first rows mostly differ,
    :func:`_many_distinct`).
    """
    import pyarrow as pa

    if pa.types.is_dictionary(column.type):
        entries = sum(len(chunk.dictionary) for chunk in column.chunks)
        many = entries > _arrow._ENCODED_FROM and _arrow.is_text(column.type.value_type)
        return _arrow.decoded(column) if many else None
    return column if kept and _arrow.is_text(column.type) else None


def _many_distinct(column: Any) -> bool:
    """Whether a column of more than a million (``_arrow._ENCODED_FROM``) rows has mostly distinct values in its
    first rows (a run over a catalogue of millions: each list names items of its own)."""
    if len(column) <= _arrow._ENCODED_FROM:
        return False
    import pyarrow.compute as pc

    return 2 * len(pc.unique(column.slice(0, _SAMPLE))) > min(len(column), _SAMPLE)


def _is_user(role: str) -> bool:
    return role == "user" or role in _KNOWN["user"]


def _plain_text(column: Any) -> bool:
    """Whether a column is a chunked Arrow column of plain text (a text item column read with ``plain_items``)."""
    return type(column).__module__.startswith("pyarrow") and hasattr(column, "chunks") and _arrow.is_text(column.type)


def _numbers(column: Any, name: str, path: Path, line_of: Any) -> Any:
    """A numeric column as 64-bit floats (text parsed); the first value that is not a number is an error."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return column
    base = name.split(":")[0]
    try:
        return pc.cast(pc.utf8_trim_whitespace(pc.cast(column, pa.string())), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = column.to_pylist()
        row = next(j for j, v in enumerate(values) if v is not None and not _is_number(v))
        line = line_of(row) if line_of is not None else None
        if line is None:
            raise DataError(f"row {row + 1}: {base} {values[row]!r} is not a number", path=path, column=name) from None
        raise DataError(f"{base} {values[row]!r} is not a number", path=path, line=line, column=name) from None


# ------------------------------------------------------------------ the error path
def _records(path: Path, sep: str, whitespace: bool = False, comments: bool = False) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank record (and, with ``comments``, not a ``#`` line); a DataError at
    the first non-UTF-8 line."""
    with _source.open_binary(path) as fh:
        for number, raw in enumerate(_source.lines(fh, path), start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise DataError(
                    f"byte {err.start + 1} of the line is not UTF-8 text; save the file as UTF-8",
                    path=path,
                    line=number,
                ) from None
            fields = text.split() if whitespace else _split(text, sep, path, number)
            if any(f.strip() for f in fields) and not (comments and fields[0].lstrip().startswith("#")):
                yield number, fields


def _locate(
    path: Path,
    sep: str,
    header: bool,
    names: list[str],
    whitespace: bool,
    exc: Exception,
    numbers: Sequence[str] | None = None,
) -> DataError:
    """The first bad line: not UTF-8, a wrong number of fields, a non-number in a numeric column (``numbers``,
    by default those named as receval's), a timestamp that is neither a number nor a date."""
    records = _records(path, sep, whitespace)
    if header:
        first = next(records, None)
        if first is None:
            return DataError("the file is empty: it has no header and no rows", path=path, line=1)
    shown = ("\\t" if sep == "\t" else sep).join(names)
    if numbers is None:
        numbers = [c for c in names if c.split(":")[0] in NUMERIC + _KNOWN["rating"]]
    numeric = [(j, c) for j, c in enumerate(names) if c in numbers]
    stamps = [j for j, c in enumerate(names) if c == "timestamp"]
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
        for j in stamps:
            if not is_time(fields[j].strip()):
                return DataError(f"timestamp {fields[j].strip()!r} is neither an integer nor a date", path=path,
                                 line=number, column="timestamp")  # fmt: skip
    if count == 0:
        return DataError("the file has no rows", path=path, line=2 if header else 1)
    return DataError(f"could not read the table: {exc}", path=path)
