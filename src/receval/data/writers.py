"""The one writer of the tables receval produces, in the formats the field reads.

:func:`write_table` writes runs (``user, item, score, rank``), rating predictions,
per-user values and splits, atomically (a temporary file renamed over the target,
:mod:`receval.atomic`), with floats at full precision so that reading the file back
(:func:`receval.data.tables.read_table`) gives the same numbers bit for bit:

=============================  ====================================================
format (by extension)          what is written
=============================  ====================================================
``csv`` (``.csv``)             comma-separated with a header
``tsv`` (``.tsv .tab .txt``)   tab-separated with a header
``parquet`` (``.parquet .pq``) Parquet
``trec`` (``.trec .run``)      a TREC run ``qid Q0 docid rank score tag``, as
                               trec_eval, ranx and pytrec_eval read it
``ranx-json`` (``.json``)      ``{user: {item: score}}``, as ranx's ``Run.from_file``
                               and ir-measures read it
=============================  ====================================================

Examples
--------
>>> import tempfile, pathlib
>>> import pandas as pd
>>> run = pd.DataFrame({"user": [7, 7], "item": ["x", "y"], "score": [0.9, 0.25], "rank": [1, 2]})
>>> path = write_table(run, pathlib.Path(tempfile.mkdtemp()) / "run.trec")
>>> path.read_text().splitlines()
['7 Q0 x 1 0.9 receval', '7 Q0 y 2 0.25 receval']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from receval.atomic import PARQUET_SUFFIXES, TSV_SUFFIXES, write_frame, write_text
from receval.errors import DataError, shown_id

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WRITE_FORMATS", "write_table"]

WRITE_FORMATS: dict[str, tuple[str, ...]] = {
    "csv": (".csv",),
    "tsv": TSV_SUFFIXES,
    "parquet": PARQUET_SUFFIXES,
    "trec": (".trec", ".run"),
    "ranx-json": (".json",),
}
_ROWS = 1 << 16
"""Rows a piece of written text holds: the text of a million-row table never stands in memory at once."""


def _format_of(path: Path, format: str | None) -> str:
    if format is not None:
        if format not in WRITE_FORMATS:
            raise DataError(f"cannot write format {format!r}; use one of {', '.join(WRITE_FORMATS)}", path=path)
        return format
    suffix = path.suffix.lower()
    for name, suffixes in WRITE_FORMATS.items():
        if suffix in suffixes:
            return name
    known = ", ".join(s for suffixes in WRITE_FORMATS.values() for s in suffixes)
    raise DataError(f"cannot tell the output format from the extension {suffix!r}; use one of {known}", path=path)


def _run_columns(frame: pd.DataFrame | Mapping[str, Any], path: Path) -> dict[str, np.ndarray]:
    """``user, item, rank, score`` of a run as arrays; the missing one of rank/score is derived from the other."""
    names = list(frame.keys()) if isinstance(frame, Mapping) else list(frame.columns)
    missing = [c for c in ("user", "item") if c not in names]
    if missing or not {"score", "rank"} & set(names):
        raise DataError(f"a run needs columns user, item and score or rank; the table has {names}", path=path)
    out = {"user": np.asarray(frame["user"]), "item": np.asarray(frame["item"])}
    if "rank" in names:
        out["rank"] = np.asarray(frame["rank"])
    else:  # rank within each user by descending score, ties in row order
        import pandas as pd

        negated = pd.Series(-np.asarray(frame["score"], dtype=np.float64))
        out["rank"] = negated.groupby(out["user"], sort=False).rank(method="first").astype(np.int64).to_numpy()
    if "score" in names:
        out["score"] = np.asarray(frame["score"], dtype=np.float64)
    else:  # trec_eval orders by score: a score that decreases with the rank keeps the lists as given
        out["score"] = -out["rank"].astype(np.float64)
    return out


def _trec(frame: pd.DataFrame | Mapping[str, Any], path: Path, tag: str) -> Iterator[str]:
    run = _run_columns(frame, path)
    texts = {}
    for column in ("user", "item"):
        text = run[column].astype(str)
        spaced = [t for t in np.unique(text).tolist() if re.search(r"\s", t)]  # each distinct id checked once
        if spaced:
            bad = str(text[np.isin(text, spaced)][0])
            raise DataError(f"{column} id {bad!r} contains white space, which a TREC file cannot hold", path=path)
        texts[column] = text.tolist()
    return _trec_lines(texts["user"], texts["item"], run["rank"], run["score"], tag)


def _trec_lines(users: list[str], items: list[str], ranks: np.ndarray, scores: np.ndarray, tag: str) -> Iterator[str]:
    """A TREC run's lines in pieces of :data:`_ROWS` rows (a score ``x.0`` written ``x``, as trec_eval reads it)."""
    for start in range(0, len(users), _ROWS):
        stop = start + _ROWS
        shown = [repr(s) for s in scores[start:stop].tolist()]
        shown = [s[:-2] if s.endswith(".0") else s for s in shown]
        rows = zip(users[start:stop], items[start:stop], ranks[start:stop].tolist(), shown, strict=True)
        yield "".join(f"{u} Q0 {i} {int(r)} {s} {tag}\n" for u, i, r, s in rows)


def _ranx_json(frame: pd.DataFrame | Mapping[str, Any], path: Path) -> str:
    run = _run_columns(frame, path)
    scores = np.asarray(run["score"], dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):  # JSON has no Infinity or NaN, and ranx no score of null
        row = int(bad[0])
        user, item = (np.asarray(run[c])[row] for c in ("user", "item"))
        raise DataError(f"score {scores[row]} of user {shown_id(user)}, item {shown_id(item)} "
                        "is not a finite number, which a ranx JSON run cannot hold; give finite scores, or write "
                        "a format that holds them (tsv, trec)", path=path)  # fmt: skip
    nested: dict[str, dict[str, float]] = {}
    for u, i, s in zip(run["user"].astype(str).tolist(), run["item"].astype(str).tolist(), run["score"].tolist(),
                       strict=True):  # fmt: skip
        nested.setdefault(u, {})[i] = s
    return json.dumps(nested, allow_nan=False)  # checked above: a score that slipped by fails, never Infinity


def _delimited(columns: Mapping[str, np.ndarray], sep: str) -> Iterator[str]:
    """Number columns as ``DataFrame.to_csv`` writes them: integers, floats by ``repr``, NaN as an empty field.

    The text comes in pieces of :data:`_ROWS` rows, so that a million rows never stand as one string.

    >>> print("".join(_delimited({"u": np.array([3, 4]), "p": np.array([0.1, np.nan])}, ",")), end="")
    u,p
    3,0.1
    4,
    """
    yield sep.join(columns) + "\n"
    n = len(next(iter(columns.values()))) if columns else 0
    for start in range(0, n, _ROWS):
        texts = []
        for values in columns.values():
            part = values[start : start + _ROWS].tolist()
            texts.append(["" if v != v else repr(v) for v in part] if values.dtype.kind == "f" else map(str, part))
        yield "".join(sep.join(row) + "\n" for row in zip(*texts, strict=True))


def write_table(
    frame: pd.DataFrame | Mapping[str, np.ndarray],
    path: str | Path,
    *,
    format: str | None = None,
    tag: str = "receval",
) -> Path:
    """Write ``frame`` to ``path`` atomically in ``format`` (default: from the extension); returns the path.

    Parameters
    ----------
    frame
        The table; ``trec`` and ``ranx-json`` need ``user``, ``item`` and ``score`` or ``rank``.
        A ``{column: array}`` mapping is written without pandas as a TREC run or ranx
        JSON, and to CSV/TSV when its columns are integers and float64 (exactly as
        ``DataFrame.to_csv`` writes them: floats at full precision, NaN empty); any
        other mapping becomes a DataFrame first.
    path
        The file to write; its folder must exist.
    format
        One of :data:`WRITE_FORMATS`.
    tag
        The run tag of a TREC file (its sixth column).

    Returns
    -------
    pathlib.Path
        ``path``, now holding the table in ``format``.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> run = pd.DataFrame({"user": ["u1", "u1"], "item": ["a", "b"], "score": [0.9, 0.5]})
    >>> write_table(run, Path(tempfile.mkdtemp()) / "run.trec").read_text().splitlines()
    ['u1 Q0 a 1 0.9 receval', 'u1 Q0 b 2 0.5 receval']
    """
    path = Path(path)
    fmt = _format_of(path, format)
    if not path.parent.is_dir():
        raise DataError("the output folder does not exist; create it first", path=path.parent)
    if path.is_dir():
        raise DataError("the output path is a folder; give a file name", path=path)
    text: str | Iterator[str] | None = None
    table: Any = frame
    if isinstance(frame, Mapping):
        columns = {name: np.asarray(values) for name, values in frame.items()}
        if fmt in ("csv", "tsv") and all(c.dtype.kind in "iu" or c.dtype == np.float64 for c in columns.values()):
            text = _delimited(columns, "," if fmt == "csv" else "\t")
        elif fmt in ("trec", "ranx-json"):  # written from the arrays
            table = columns
        else:
            import pandas as pd

            table = pd.DataFrame(columns)
    if fmt == "trec":
        text = _trec(table, path, tag)
    elif fmt == "ranx-json":
        text = _ranx_json(table, path)
    if text is not None:
        return write_text(path, text)
    return write_frame(path, table, format=fmt)
