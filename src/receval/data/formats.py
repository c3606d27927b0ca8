"""The input formats: their names, aliases, file layouts and the one rule that tells them apart.

Every reader and command takes its format names from here: :func:`check_format`
normalises a name (case, ``_``, the aliases of :data:`ALIASES`, a known data set's
name), :func:`detect` tells a file's format (and whether it has a header) when none
is given, and :data:`LAYOUTS` says where a data set folder keeps its ratings and how
they are written. No pandas, no pyarrow: ``receval --help`` reads this module.

>>> check_format("ML100K"), check_format("json"), check_format("ml-latest-small")
('movielens-100k', 'ranx-json', 'movielens-latest')
>>> "trec" in FORMATS and LAYOUTS["movielens-1m"].sep
'::'
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from receval.errors import DataError

__all__ = [
    "ALIASES",
    "FORMATS",
    "KNOWN_COLUMNS",
    "LAYOUTS",
    "ROLES",
    "SUFFIXES",
    "YELP_BUSINESSES",
    "YELP_FIELDS",
    "YELP_REVIEWS",
    "YELP_SCALE",
    "Layout",
    "check_format",
    "detect",
    "has_header",
    "head_lines",
    "ratings_file",
]

FORMATS: dict[str, str] = {
    "csv": "comma-separated text with a header (or no header: user, item, rating|score, timestamp in order)",
    "tsv": "tab-separated text with a header (or no header)",
    "parquet": "Parquet file (ranx's Run/Qrels parquet too)",
    "trec": "TREC run (qid Q0 docid rank score tag) or qrels (qid 0 docid grade), no header",
    "ranx-json": "JSON {user: {item: score}} (ranx Run/Qrels .json, ir-measures/pytrec_eval dicts)",
    "recbole": "RecBole atomic file (.inter/.item): tab-separated, header name:type (user_id:token ...)",
    "movielens-100k": "MovieLens 100K folder (u.data, u.item genres, u.user) or one of its files "
    "(u.data, u1.base, u1.test: tab-separated user, item, rating, timestamp, no header)",
    "movielens-1m": "MovieLens 1M folder: ratings.dat and movies.dat ('::'-separated), users.dat",
    "movielens-10m": "MovieLens 10M folder (ml-10M100K): ratings.dat and movies.dat ('::'-separated)",
    "movielens-20m": "MovieLens 20M folder: ratings.csv and movies.csv",
    "movielens-25m": "MovieLens 25M folder: ratings.csv and movies.csv",
    "movielens-latest": "MovieLens latest or latest-small folder: ratings.csv and movies.csv",
    "cm100k": "CM100k folder: ratings.txt (release) or data.txt (authors' copy); Known -> 'familiar'",
    "yelp": "Yelp Open Dataset folder: yelp_academic_dataset_review.json (JSON lines: user_id, business_id, "
    "stars 1-5, date) and yelp_academic_dataset_business.json (business_id, categories -> item aspects)",
}
"""Format name -> what PATH must be. Every command and every reader accepts each of them."""

ALIASES: dict[str, str] = {
    "tab": "tsv", "pq": "parquet", "parq": "parquet", "json": "ranx-json", "ranx": "ranx-json",
    "atomic": "recbole", "ml100k": "movielens-100k", "trec-run": "trec", "qrels": "trec", "trec-qrels": "trec",
}  # fmt: skip
"""Other spellings of a format name; a known data set's name (``ml-100k``, ``ml-1m``, ...) is one too."""

SUFFIXES: dict[str, str] = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet", ".parq": "parquet",
    ".json": "ranx-json", ".inter": "recbole", ".item": "recbole", ".trec": "trec", ".run": "trec", ".qrels": "trec",
}  # fmt: skip
"""File extension -> format; a file with another extension is told by its first lines (:func:`detect`)."""

ROLES = ("user", "item", "rating", "score", "rank", "timestamp", "prediction", "aspect")
"""receval's column names; ``columns={role: name}`` maps a file's own names onto them."""

KNOWN_COLUMNS: dict[str, tuple[str, ...]] = {  # LensKit, RecBole, MovieLens, ranx, trec_eval
    "user": ("user_id", "userId", "userid", "q_id", "qid", "query_id"),
    "item": ("item_id", "itemId", "itemid", "movieId", "doc_id", "docid", "docno"),
    "rating": ("grade", "relevance"),
}
"""Other libraries' names for receval's columns, recognised in a header."""


@dataclass(frozen=True)
class Layout:
    """Where a data set folder keeps its ratings and how they are written.

    ``files``: the ratings file's names in the folder, the first found wins;
    ``sep``: the field separator; ``names``: the positional columns of a file
    without a header (None: the file has the header ``header``); ``scale``: the
    declared rating scale ``(low, high, step)``.
    """

    files: tuple[str, ...]
    sep: str
    names: tuple[str, ...] | None
    scale: tuple[float, float, float]
    header: tuple[str, ...] = ()


_ML = ("user", "item", "rating", "timestamp")
_ML_CSV = Layout(("ratings.csv",), ",", None, (0.5, 5, 0.5), ("userId", "movieId", "rating", "timestamp"))
LAYOUTS: dict[str, Layout] = {
    "movielens-100k": Layout(("u.data",), "\t", _ML, (1, 5, 1)),
    "movielens-1m": Layout(("ratings.dat",), "::", _ML, (1, 5, 1)),
    "movielens-10m": Layout(("ratings.dat",), "::", _ML, (0.5, 5, 0.5)),
    "movielens-20m": _ML_CSV,
    "movielens-25m": _ML_CSV,
    "movielens-latest": _ML_CSV,
    "cm100k": Layout(("data.txt", "ratings.txt", "release/ratings.txt"), "\t", ("user", "item", "rating", "known"),
                     (1, 4, 1)),
}  # fmt: skip
"""The published layouts of the data set formats (a folder, or one of its ratings files)."""

YELP_REVIEWS = "yelp_academic_dataset_review.json"
"""The Yelp Open Dataset's reviews (JSON lines): ``user_id``, ``business_id``, ``stars``, ``date`` are read."""
YELP_BUSINESSES = "yelp_academic_dataset_business.json"
"""The Yelp Open Dataset's businesses (JSON lines): ``business_id`` and ``categories`` (comma-separated)."""
YELP_FIELDS: dict[str, str] = {"user_id": "user", "business_id": "item", "stars": "rating", "date": "timestamp"}
"""The review fields read, and the receval column each becomes (messages name the field as Yelp writes it)."""
YELP_SCALE = (1.0, 5.0, 1.0)
"""Yelp's star ratings: 1 to 5 in whole stars."""

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def named(option: str) -> list[str]:
    """The parameter an ``option`` spelled ``name=`` stands for (for :class:`~receval.errors.ReceValError`'s
    ``parameters``, which the command line shows as its flag); none for an option written as a flag.

    >>> named("format="), named("--truth-format")
    (['format'], [])
    """
    return [option[:-1]] if option.endswith("=") else []


def check_format(format: str, option: str | None = None, path: str | Path | None = None) -> str:
    """A format name normalised (case, ``_``, :data:`ALIASES`, data set names), or a DataError listing the names.

    ``option`` is the command-line setting that gave the name (``--truth-format``), named in the error.

    Returns
    -------
    str
        The canonical name, a key of :data:`FORMATS`.

    Examples
    --------
    >>> check_format(" MovieLens_1M "), check_format("tab"), check_format("ml-100k")
    ('movielens-1m', 'tsv', 'movielens-100k')
    >>> check_format("excel")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: unknown format 'excel'; use one of: csv, tsv, parquet, ...
    """
    from receval.data.registry import format_aliases  # the data sets' names (standard library only)

    name = str(format).strip().lower().replace("_", "-")
    name = ALIASES.get(name) or format_aliases().get(name, name)
    if name not in FORMATS:
        given = f" for {option}" if option and not named(option) else ""
        raise DataError(f"unknown format {format!r}{given}; use one of: {', '.join(FORMATS)}", path=path)
    return name


def ratings_file(path: Path, fmt: str) -> Path:
    """The ratings file of a data set format: ``path`` itself when a file, else found in the folder (or one below).

    Returns
    -------
    pathlib.Path
        The ratings file; a DataError names the file the format expects when there is none.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "u.data").write_text("1\\t2\\t3\\t4\\n")
    >>> ratings_file(folder, "movielens-100k").name
    'u.data'
    """
    layout = LAYOUTS[fmt]
    if not path.exists():
        raise DataError(f"no such file or folder (format {fmt} expects the folder holding {layout.files[0]})",
                        path=path)  # fmt: skip
    if not path.is_dir():  # a file, or a pipe (<(zcat u.data.gz)) that the reader reads once
        return path
    for name in layout.files:
        if (path / name).is_file():
            return path / name
    below = sorted(p for name in layout.files[:1] for p in path.glob(f"*/{name}"))
    if len(below) == 1:
        return below[0]
    files = " or ".join(layout.files)
    raise DataError(f"no {files} in this folder; format {fmt} expects the folder that holds it ({FORMATS[fmt]})",
                    path=path)  # fmt: skip


def head_lines(path: Path, size: int = 1 << 16) -> list[str]:
    """The non-blank lines of the first ``size`` bytes (decompressed), the last one dropped when cut short.

    Returns
    -------
    list of str
        The lines without their line ends, blank ones left out.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.tsv"
    >>> _ = p.write_text("a\\n\\nb\\ncut")
    >>> head_lines(p), head_lines(p, size=6)  # the first 6 bytes end inside the line 'cut'
    (['a', 'b', 'cut'], ['a', 'b'])
    """
    from receval.data import _source

    with _source.open_binary(path) as fh:
        raw = fh.read(size)
    text = raw.decode("utf-8-sig", errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[:-1] if len(raw) == size and len(lines) > 1 else lines


def detect(path: Path, label: str = "table", option: str = "format=") -> tuple[str, bool | None]:
    """(format, header) of a file: from the extension, else from its first lines.

    Yelp's review file is told by its name (``yelp_academic_dataset_review.json``,
    compressed or not: JSON lines, not one JSON document). Otherwise: a TREC line, a
    RecBole ``name:type`` header, JSON, a tab-separated line of four numbers (MovieLens'
    ``u.data``/``u1.base``: ``movielens-100k``) or delimited text; ``header`` is None
    when :func:`has_header` decides it later. ``label`` names the file, and ``option``
    the setting to pass, in the error raised when nothing fits.

    Returns
    -------
    tuple of (str, bool or None)
        The format (a key of :data:`FORMATS`) and whether the file has a header line (None: not decided yet).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "u1.base").write_text("1\\t6\\t5\\t887431973\\n2\\t9\\t3\\t887431974\\n")
    >>> detect(folder / "u1.base")
    ('movielens-100k', False)
    """
    from receval.data import _source

    if _source.stem(path) + _source.inner_suffix(path) == YELP_REVIEWS:
        return "yelp", None
    by_suffix = SUFFIXES.get(_source.inner_suffix(path))  # ratings.csv.gz is csv
    if by_suffix is not None:
        return by_suffix, None
    lines = head_lines(path)
    if not lines:
        raise DataError(f"the {label} file is empty", path=path, line=1)
    first = lines[0]
    if first.lstrip().startswith("{"):
        return "ranx-json", None
    records = [line for line in lines if not line.lstrip().startswith("#")]  # trec_eval's comment lines
    fields = records[0].split() if records else []
    if len(fields) >= 6 and fields[1] == "Q0":  # a run; trec_eval ignores the fields after the tag
        return "trec", False
    if records and records[0] != first and len(fields) == 4 and fields[1] == "0":
        return "trec", False  # qrels after comment lines
    fields = first.split()
    if "\t" in first and all(":" in f for f in first.split("\t")):
        return "recbole", True
    sep = "\t" if "\t" in first else ("," if "," in first else None)
    if sep is None:
        if len(fields) == 4 and all(line.split()[1:2] == ["0"] for line in lines if line.split()):
            return "trec", False  # qid 0 docid grade
        raise DataError(
            f"cannot tell the format of the {label} file from its extension "
            f"{_source.inner_suffix(path)!r} or its first line; pass {option} with one of {', '.join(FORMATS)}",
            path=path,
            parameters=named(option),
        )
    if sep == "\t" and len(fields) == 4 and all(_NUMBER.match(f.strip()) for f in fields):
        return "movielens-100k" if len(lines) < 2 or len(lines[1].split("\t")) == 4 else "tsv", False
    return ("tsv" if sep == "\t" else "csv"), None


def has_header(path: Path, sep: str, columns: Mapping[str, str] | None = None) -> bool:
    """Whether the first line names columns: it holds a known name, or text where the body has numbers.

    Returns
    -------
    bool
        True when the first line is a header.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = p.write_text("7,x,4\\n8,y,5\\n")
    >>> has_header(p, ",")
    False
    """
    lines = head_lines(path, 1 << 13)  # the first 50 lines decide
    if not lines:
        return True  # the empty-file error comes from the reader, with its line
    first = [f.strip() for f in next(csv.reader([lines[0]], delimiter=sep))]
    known = set(ROLES) | {n for names in KNOWN_COLUMNS.values() for n in names} | set((columns or {}).values())
    if any(f in known or f.split(":")[0] in known for f in first):
        return True
    if all(_NUMBER.match(f) for f in first):
        return False
    body = [next(csv.reader([line], delimiter=sep)) for line in lines[1:50]]
    if not body:
        return True  # one line of text: a header (an empty table) rather than one row of text ids
    numeric_below = [j for j in range(len(first)) if all(j < len(r) and _NUMBER.match(r[j].strip()) for r in body)]
    return any(not _NUMBER.match(first[j]) for j in numeric_below)
