"""NCF's test files: ``*.test.rating`` and ``*.test.negative``, the held-out items and their sampled negatives.

Neural Collaborative Filtering (He et al., WWW 2017; the authors' repository
``hexiangnan/neural_collaborative_filtering``, ``Data/ml-1m.test.*``) evaluates
leave-one-out: each user's latest item is held out and ranked against 99 sampled items the
user never rated. Two tab-separated files, one line per held-out item, in the same order:

- ``*.test.rating``: ``user  item  rating  timestamp``;
- ``*.test.negative``: ``(user,item)  neg1  neg2 ... negN`` (NCF: N = 99).

:func:`read_ncf` reads them (through :func:`receval.data.tables.read_located`, the one
validated reader) against a data set's id space; :func:`write_ncf` writes them through
:mod:`receval.atomic`. :func:`receval.evaluation.sampled.read_ncf_candidates` turns them
into the candidates sampled metrics rank against.

Examples
--------
>>> import tempfile
>>> from receval.data.interactions import Interactions
>>> data = Interactions.from_ids(["u1", "u1", "u2"], ["a", "b", "c"], [5, 4, 3])
>>> folder = Path(tempfile.mkdtemp())
>>> test = NCFTest(np.array([0, 1]), np.array([0, 2]), np.array([5.0, 3.0]), np.array([7, 8]),
...                np.array([[2], [1]]))
>>> paths = write_ncf(folder / "toy.test.rating", folder / "toy.test.negative", test, data)
>>> paths[1].read_text().splitlines()
['(u1,a)\\tc', '(u2,c)\\tb']
>>> back = read_ncf(*paths, data)
>>> back.negatives.tolist(), back.items.tolist()
([[2], [1]], [0, 2])
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from receval.data.formats import head_lines
from receval.data.interactions import Interactions
from receval.data.loaders import _timestamps
from receval.data.tables import read_located
from receval.errors import DataError

__all__ = ["NCFTest", "read_ncf", "write_ncf"]

_PAIR = re.compile(r"^\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)$")


class NCFTest(NamedTuple):
    """The content of a pair of NCF test files, as indices of a data set's id space (a row per line)."""

    users: np.ndarray
    """int64 user index of each line."""
    items: np.ndarray
    """int64 index of the held-out item of each line."""
    ratings: np.ndarray
    """float64 rating of the held-out item."""
    timestamps: np.ndarray
    """int64 timestamp of the held-out rating."""
    negatives: np.ndarray
    """int64 (lines, N) indices of the sampled negatives."""
    lines: np.ndarray | None = None
    """int64 line of the negative file each row was read from (for messages about a row found later)."""


def read_ncf(rating: str | Path, negative: str | Path, data: Interactions) -> NCFTest:
    """Read NCF's ``*.test.rating`` and ``*.test.negative`` into indices of ``data``'s id space.

    Parameters
    ----------
    rating, negative
        The two files; line ``j`` of one belongs to line ``j`` of the other.
    data
        The data set whose ids the files use (its users and items; e.g. NCF's
        ``*.train.rating`` and ``*.test.rating`` read as one
        :class:`~receval.data.interactions.Interactions`).

    Returns
    -------
    NCFTest
        users, held-out items, ratings, timestamps and negatives, one row per line.

    Raises
    ------
    DataError
        One line naming the file and line: a wrong number of fields, a user or item that
        is not in ``data``, a pair ``(user,item)`` that is not the rating file's line, a
        line with another number of negatives, files of different lengths. (Whether a
        negative is one of the user's rated items depends on the split:
        :func:`receval.evaluation.candidates.check_candidates` checks it, with ``lines``.)

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> data = Interactions.from_ids(["1", "1", "2"], ["10", "11", "12"], [5, 4, 3])
    >>> _ = (folder / "t.test.rating").write_text("1\\t10\\t5\\t0\\n")
    >>> _ = (folder / "t.test.negative").write_text("(1,10)\\t13\\n")
    >>> read_ncf(folder / "t.test.rating", folder / "t.test.negative", data)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.DataError: .../t.test.negative, line 1: item '13' is not in the data set (3 items); ...
    """
    rating, negative = Path(rating), Path(negative)
    held = read_located(rating, "truth", format="tsv", header=False, label="NCF test rating",
                        positional=("user", "item", "rating", "timestamp"))  # fmt: skip
    users = _indices(held.table.column("user").to_numpy(zero_copy_only=False), data.user_ids, "user", rating,
                     held.line_of)  # fmt: skip
    items = _indices(held.table.column("item").to_numpy(zero_copy_only=False), data.item_ids, "item", rating,
                     held.line_of)  # fmt: skip
    ratings = held.table.column("rating").to_numpy(zero_copy_only=False).astype(np.float64)
    stamps = _timestamps(held.table.column("timestamp"), "timestamp", held)

    readable = negative.exists() and not negative.is_dir()  # a missing file is named by the reader below
    first = head_lines(negative) if readable else []
    if readable and not first:
        raise DataError("the NCF negative file has no lines; it needs one per line of the rating file", path=negative)
    n = len(first[0].split("\t")) - 1 if first else 0
    if first and n < 1:
        raise DataError("a line holds (user,item) and no negative; give (user,item)<TAB>neg1<TAB>neg2...",
                        path=negative, line=1)  # fmt: skip
    names = ("pair", *(f"negative_{j}" for j in range(1, n + 1)))
    # every field as text: '0286' is not item 286, and a 24-digit id is not 1e+23
    neg = read_located(negative, "truth", format="tsv", header=False, label="NCF test negative", positional=names,
                       text_columns=names)  # fmt: skip
    if neg.table.num_rows != len(users):
        raise DataError(
            f"the negative file has {neg.table.num_rows} lines and the rating file {len(users)}; "
            "line j of one is the held-out item of line j of the other",
            path=negative,
        )
    pairs = neg.table.column("pair").to_numpy(zero_copy_only=False)
    for row, text in enumerate(pairs):
        found = _PAIR.match(str(text).strip())
        expected = (str(data.user_ids[users[row]]), str(data.item_ids[items[row]]))
        if found is None or found.groups() != expected:
            raise DataError(
                f"the first field is {text!r}, expected ({expected[0]},{expected[1]}) as line "
                f"{held.line_of(row)} of {rating.name} holds",
                path=negative,
                line=neg.line_of(row),
            )
    ids = np.column_stack([neg.table.column(name).to_numpy(zero_copy_only=False).astype(str) for name in names[1:]])
    negatives = _indices(ids, data.item_ids, "item", negative, neg.line_of)
    lines = np.array([neg.line_of(row) for row in range(len(users))], dtype=np.int64)
    return NCFTest(users, items, ratings, stamps, negatives, lines)


def _indices(ids: np.ndarray, space: np.ndarray, what: str, path: Path, line_of) -> np.ndarray:
    """Indices of ``ids`` (any shape) in the id space ``space``; an unknown id is an error naming its line."""
    from receval.data import vocab

    flat = np.asarray(ids).astype(str).ravel()
    index = vocab.index_of(np.asarray(space).astype(str), flat)
    if (index < 0).any():
        bad = int(np.flatnonzero(index < 0)[0])
        row = bad // max(1, flat.size // max(1, len(ids)))
        raise DataError(
            f"{what} {str(flat[bad])!r} is not in the data set ({len(space):,} {what}s); the files must use its ids",
            path=path,
            line=line_of(row),
        )
    return index.astype(np.int64).reshape(np.shape(ids))


# what read_ncf would split (a field, a line: Python's line ends too), strip or unquote
_UNWRITABLE = re.compile(r'[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029\x00,()]|^\s|\s$|^"|^$')


def _check_writable(ids: np.ndarray, what: str, path: Path) -> None:
    """Refuse an id NCF's files cannot hold as written: read back, it would be another id or break its line.

    Fields are tab-separated lines, a negative line starts with ``(user,item)``, and a
    field starting with ``"`` is read as quoted: so no tab, line end (of any kind Python
    splits lines on), NUL byte, comma or bracket, no white space at either end, no
    leading quote, no empty id.

    >>> _check_writable(np.array(["u1", "it em"]), "item", Path("x.test.negative"))
    >>> _check_writable(np.array(["u1", "a\\tb"]), "item", Path("x.test.negative"))
    Traceback (most recent call last):
    ...
    receval.errors.DataError: x.test.negative: item 'a\\tb' cannot be written in NCF's files (they hold ...
    """
    for text in np.unique(ids).tolist():
        if _UNWRITABLE.search(text):
            raise DataError(
                f"{what} {text!r} cannot be written in NCF's files (they hold no tab, line end, NUL, comma or bracket "
                "in an id, nor white space at its ends or a leading quote): it would not read back as the same id; "
                "write receval's candidate table instead (write_candidates); nothing was written",
                path=path,
            )


def write_ncf(rating: str | Path, negative: str | Path, test: NCFTest, data: Interactions) -> tuple[Path, Path]:
    """Write ``test`` as NCF's ``*.test.rating`` and ``*.test.negative`` in ``data``'s original ids.

    Each file is written atomically (:func:`receval.atomic.write_text`): never half-written;
    a path that cannot be written (a folder, a missing folder) and an id the files cannot
    hold as written (a tab, a comma: :func:`_check_writable`) are refused before either is.

    Returns
    -------
    tuple of pathlib.Path
        The rating file and the negative file.

    Examples
    --------
    >>> import tempfile
    >>> data = Interactions.from_ids(["u", "u"], ["x", "y"], [4, 2])
    >>> test = NCFTest(np.array([0]), np.array([0]), np.array([4.0]), np.array([0]), np.array([[1]]))
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_ncf(folder / "r", folder / "n", test, data)[0].read_text()
    'u\\tx\\t4\\t0\\n'
    """
    from receval.atomic import write_text
    from receval.outputs import check_output_file

    rating, negative = check_output_file(rating, "rating="), check_output_file(negative, "negative=")
    user_ids = np.asarray(data.user_ids).astype(str)[test.users]
    item_ids = np.asarray(data.item_ids).astype(str)
    held = item_ids[test.items]
    negs = item_ids[np.asarray(test.negatives, dtype=np.int64)]
    for what, ids in (("user", user_ids), ("item", held), ("item", negs)):
        _check_writable(ids, what, negative)
    rating_lines = [
        f"{u}\t{i}\t{r:g}\t{int(t)}\n" for u, i, r, t in zip(user_ids, held, test.ratings, test.timestamps, strict=True)
    ]
    negative_lines = ["\t".join((f"({u},{i})", *row)) + "\n" for u, i, row in zip(user_ids, held, negs, strict=True)]
    return write_text(rating, "".join(rating_lines)), write_text(negative, "".join(negative_lines))
