"""The data boundary of one-shot evaluation: runs, truth and side data aligned on the same users and items.

:func:`align` takes what users hold — file paths, DataFrames or Arrow tables with
original ids, ``{user: {item: value}}`` dicts, ranx objects, an item-index matrix from
:func:`receval.recommenders.recommend` or a score matrix — and returns an
:class:`Aligned`: a rankings matrix padded with -1 and the truth CSR on the same rows
(the users with at least one truth rating), the training ratings, item aspects and
rating predictions on those rows, over one item catalogue (the truth's items, then the
items only the lists name, then those only the training data names). Only vectorised
factorising and sorting; no metric is known here (``receval.evaluation`` builds the
metrics' input from the arrays).

Examples
--------
>>> import pandas as pd
>>> truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "rating": [5, 2, 4]})
>>> recs = pd.DataFrame({"user": ["a", "a", "b"], "item": ["y", "z", "x"], "score": [0.9, 0.5, 0.7]})
>>> aligned = align(recs, truth)
>>> aligned.rankings.tolist(), aligned.item_ids.tolist()
([[1, 2], [0, -1]], ['x', 'y', 'z'])
>>> aligned.truth_rows.toarray().tolist()
[[5.0, 2.0, 0.0], [0.0, 4.0, 0.0]]
"""

from __future__ import annotations

import itertools
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.data import _arrow
from receval.data.csr import CSR
from receval.data.interactions import Interactions, aspect_matrix, distinct
from receval.data.tables import as_frame
from receval.data.vocab import _TEXT_LOOKUP_MAX, dictionary_codes, mismatch, same_numbers
from receval.data.vocab import encode as _encode
from receval.data.vocab import extend as _extend
from receval.data.vocab import index_of as _index_of
from receval.errors import ConfigError, DataError, MetricError, shown_id
from receval.vocabulary import RANKS, TIE_ORDERS, TIES, Ranks, Ties

if TYPE_CHECKING:
    import pandas as pd
    import scipy.sparse as sp

__all__ = [
    "RANKS",
    "TIES",
    "Aligned",
    "Catalogue",
    "Kind",
    "Ranks",
    "Ties",
    "align",
    "as_table",
    "check_ranks",
    "check_ties",
    "tie_rule",
    "to_rankings",
]

Kind = Literal["recommendations", "truth", "train", "aspects", "predictions"]
"""The role of a table in an evaluation (what a file given for it holds)."""

_REQUIRED: dict[str, tuple[str, ...]] = {
    "recommendations": ("user", "item"),
    "truth": ("user", "item"),
    "train": ("user", "item"),
    "predictions": ("user", "item", "prediction"),
}
# a repeated pair would be two truths for one rating, or one prediction counted twice in RMSE
_UNIQUE: dict[str, tuple[str, ...]] = {"truth": ("user", "item"), "predictions": ("user", "item")}


class Catalogue:
    """The item ids of an evaluation, made Python objects only when read whole.

    ``head`` (an id array: the truth's items, or any id space), then the ids at
    ``positions`` of an Arrow ``dictionary`` (the items only the lists name, as
    :func:`~receval.data.vocab.dictionary_codes` gives them). A run over a catalogue of
    millions names millions of items no truth holds: evaluating it needs their number,
    not their ids (5M Python strings cost 0.6 s and 300 MB).
    :attr:`ids` builds the whole array once (debiased metrics, ties by id, training data);
    one id (for a message) is read alone.

    ``per_row=True``: ``dictionary`` is the item column of a run (no ``positions``), each
    row an index of its own after ``head`` (an item two rows name has two), for metrics
    that only ask whether a listed item is a truth item: the catalogue's length counts
    rows, and :attr:`ids` is refused (no identity was made).

    >>> import pyarrow as pa
    >>> catalogue = Catalogue(np.array(["x", "y"], dtype=object), pa.array(["q", "z", "w"]), np.array([1, 2]))
    >>> len(catalogue), catalogue[3], catalogue.ids.tolist()
    (4, 'w', ['x', 'y', 'z', 'w'])
    """

    __slots__ = ("_dictionary", "_head", "_ids", "_positions", "per_row")

    def __init__(
        self, head: np.ndarray, dictionary: Any = None, positions: np.ndarray | None = None, per_row: bool = False
    ) -> None:
        self._head, self._dictionary, self.per_row = head, dictionary, per_row
        self._positions = np.zeros(0, dtype=np.int64) if positions is None else positions
        self._ids: np.ndarray | None = None
        if dictionary is None or not (per_row or len(self._positions)):
            self._ids = head

    def __len__(self) -> int:
        return len(self._head) + (len(self._dictionary) if self.per_row else len(self._positions))

    @property
    def ids(self) -> np.ndarray:
        """Every id, ``head`` first (built on first use, then kept)."""
        if self._ids is None and self.per_row:
            raise RuntimeError("a catalogue of one index per row has no ids: align(item_identity=True) makes them")
        if self._ids is None:
            self._ids = _extend(self._head, _ids_of(self._dictionary, self._positions))
        return self._ids

    def __getitem__(self, index: Any) -> Any:
        """``ids[index]``; one id (an integer ``index``) without building the others."""
        if self._ids is None and isinstance(index, int | np.integer) and 0 <= index < len(self):
            if index < len(self._head):
                return self._head[index]
            at = index - len(self._head)
            one = self._dictionary.take([at if self.per_row else int(self._positions[at])])
            return _ids_of(one, np.zeros(1, dtype=np.int64))[0]
        return self.ids[index]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.ids if dtype is None else self.ids.astype(dtype)


@dataclass(frozen=True, eq=False)
class Aligned:
    """Runs, truth and side data on the same user rows and one item catalogue.

    Attributes
    ----------
    truth : Interactions
        The truth (its own id space; ``users`` index it).
    train : Interactions or None
    users : ndarray of int
        The evaluated users: truth user indices with at least one rating, ascending.
    catalogue : Catalogue
        The catalogue: the truth's items, then items only the lists name (in order of
        first appearance, user by user), then items only the training data names;
        :attr:`item_ids` as an array.
    rankings : int32 array (len(users), width)
        Item indices into ``item_ids`` in rank order, padded with -1 (zero columns
        without recommendations).
    truth_rows : receval.data.csr.CSR (len(users) x len(item_ids))
        The truth ratings of the evaluated users.
    train_rows, train_all : receval.data.csr.CSR or None
        Training ratings of the evaluated users (empty rows for users without any)
        and of every training user.
    aspects : scipy CSR (len(item_ids) x n_aspects) or None
        Its metrics multiply it: it stays scipy's (scipy is imported only when it is given).
    predictions : (rows, ratings, predictions) or None
        Rating predictions: row into ``users``, true rating and prediction of each.
    predictions_table : DataFrame or None
        The predictions as given (original ids), for estimators that read them.
    graded : bool
        Whether the truth has ratings (without a rating column every item is rated 1).
    ranked_by : {"score", "rank"} or None
        What ordered the lists: scores (a table's ``score`` column or a score matrix),
        a table's ``rank`` column, or None (an item matrix, ranked already, or no lists).
    ties : {"input", "id", "trec_eval"}
        The rule that ordered items of equal score or rank (:data:`TIES`).
    ranks : {"order", "positions"}
        How a rank column was read (:data:`RANKS`).
    users_dropped : int
        Users of the recommendations absent from the truth (left out).
    users_without_list : int or None
        Evaluated users with an empty list (None when no recommendations were given).
    """

    truth: Interactions
    train: Interactions | None
    users: np.ndarray
    catalogue: Catalogue
    rankings: np.ndarray
    truth_rows: CSR
    train_rows: CSR | None
    train_all: CSR | None
    aspects: sp.csr_matrix | None
    predictions: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    predictions_table: pd.DataFrame | None
    graded: bool
    ranked_by: Literal["score", "rank"] | None
    ties: Ties
    ranks: Ranks
    users_dropped: int
    users_without_list: int | None

    @property
    def user_ids(self) -> np.ndarray:
        """The original ids of the evaluated users."""
        return self.truth.user_ids[self.users]

    @property
    def item_ids(self) -> np.ndarray:
        """The catalogue's ids (:attr:`Catalogue.ids`: built on first use)."""
        return self.catalogue.ids

    @property
    def tie_break(self) -> str:
        """How the lists were ordered, in words (:func:`tie_rule`)."""
        return tie_rule(self.ranked_by, self.ties, self.ranks)


def check_ties(ties: Any) -> Ties:
    """``ties`` if it is a tie rule of :data:`TIES`, else a :class:`~receval.errors.ConfigError` naming them.

    >>> check_ties("trec_eval")
    'trec_eval'
    >>> check_ties("random")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: ties='random' is not a tie rule; use one of input, id, trec_eval
    """
    if ties not in TIES:
        raise ConfigError(f"ties={ties!r} is not a tie rule; use one of {', '.join(TIES)}", parameters=["ties"])
    return ties


def check_ranks(ranks: Any) -> Ranks:
    """``ranks`` if it is a reading of :data:`RANKS`, else a :class:`~receval.errors.ConfigError` naming them.

    >>> check_ranks("positions")
    'positions'
    """
    if ranks not in RANKS:
        raise ConfigError(f"ranks={ranks!r} is not a reading of ranks; use one of {', '.join(RANKS)}",
                          parameters=["ranks"])  # fmt: skip
    return ranks


def tie_rule(ranked_by: Literal["score", "rank"] | None, ties: Ties = "input", ranks: Ranks = "order") -> str:
    """How lists ranked by ``ranked_by`` with the tie rule ``ties`` are ordered, in words.

    Equal ranks tie as equal scores do (RecTools' tables may give two items one rank):
    the same rule orders them. Ranks read as positions cannot tie: a position holds one item.

    >>> tie_rule("score", "trec_eval")
    "descending score, ties by item id descending as text (trec_eval's order)"
    >>> tie_rule("rank")
    'ascending rank, ties in input order'
    >>> tie_rule("rank", ranks="positions")
    'rank r at position r (a missing rank is an empty position; one item per rank)'
    """
    if ranked_by is None:
        return "as given (an item matrix is ranked already)"
    if ranked_by == "rank" and ranks == "positions":
        return "rank r at position r (a missing rank is an empty position; one item per rank)"
    return f"{'descending score' if ranked_by == 'score' else 'ascending rank'}, {TIE_ORDERS[ties]}"


def as_table(obj: Any, kind: Kind, columns: Mapping[str, str] | None = None) -> Any:
    """A table given for ``kind``: a path is read (every format :func:`~receval.data.tables.read_table` knows).

    Anything else goes through :func:`~receval.data.tables.as_frame` (DataFrames,
    Arrow tables, dicts and ranx objects renamed to receval's columns; Interactions,
    arrays and ``None`` as they are).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "test.tsv"
    >>> _ = path.write_text("user\\titem\\trating\\nu1\\ti1\\t4\\n")
    >>> as_table(path, "truth").column_names
    ['user', 'item', 'rating']
    """
    if isinstance(obj, str | os.PathLike):
        from receval.data.tables import read_aspects, read_table

        if kind == "aspects":
            return read_aspects(Path(obj))
        table = read_table(Path(obj), kind, _REQUIRED[kind], columns=columns, unique=_UNIQUE.get(kind, ()), arrow=True,
                           plain_items=kind == "recommendations")  # fmt: skip
        return table.to_pandas() if kind == "predictions" else table  # predictions are checked as a DataFrame
    table = as_frame(obj, kind, columns)
    if kind == "predictions" and hasattr(table, "column_names"):
        return table.to_pandas()
    return table


def align(
    recommendations: Any,
    truth: Any,
    *,
    width: int | None = None,
    train: Any = None,
    aspects: Any = None,
    predictions: Any = None,
    users: Sequence[int] | np.ndarray | None = None,
    unknown_users: Literal["warn", "error"] = "warn",
    columns: Mapping[str, str] | None = None,
    ties: Ties = "input",
    ranks: Ranks = "order",
    item_identity: bool = True,
) -> Aligned:
    """Align recommendations (or predictions), truth and side data; see :func:`receval.evaluate` for the forms.

    ``width`` cuts the lists (the largest cutoff asked; ``None`` keeps them whole).
    ``ties`` orders items of equal score or rank (:data:`TIES`); ``ranks`` says how a
    rank column is read (:data:`RANKS`).
    ``users`` gives the truth user index of each row of a recommendation matrix.
    ``columns`` maps receval's column names to the tables' own (``{"user": "uid"}``).
    ``item_identity=False`` says that no metric asks which item a listed item is beyond
    whether the user's truth holds it (``MetricDefinition.list_only``): a large
    run of plain Arrow text items (``read_table(plain_items=True)``) whose users each name
    their rows together is then never hashed whole: its lists are hashed a slice at a time
    with their users' truth items (:func:`_list_items`), an item of the user's truth takes its
    index, any other an index of its own row (:class:`Catalogue` ``per_row``), and a list
    naming an item twice is found user by user (:func:`_check_row_duplicates`). The values
    and messages are the same; training data, aspects, predictions or ties broken by id make
    the identities as always.

    >>> import pandas as pd
    >>> truth = pd.DataFrame({"user": [1, 1, 2], "item": [7, 8, 7]})
    >>> aligned = align(None, truth, predictions=pd.DataFrame({"user": [2], "item": [7], "prediction": [0.5]}))
    >>> aligned.predictions, aligned.graded
    ((array([1]), array([1.]), array([0.5])), False)
    """
    if unknown_users not in ("warn", "error"):
        raise MetricError(f"unknown_users must be 'warn' or 'error', got {unknown_users!r}")
    check_ties(ties)
    check_ranks(ranks)
    recommendations = as_table(recommendations, "recommendations", columns)
    truth = as_table(truth, "truth", columns)
    train = as_table(train, "train", columns)
    aspects = as_table(aspects, "aspects", columns)
    predictions = as_table(predictions, "predictions", columns)
    graded = not (_is_table(truth) and "rating" not in _columns(truth))
    truth_data = truth if isinstance(truth, Interactions) else _interactions(truth, "truth")

    ranked_by: Literal["score", "rank"] | None = None
    if _is_score_matrix(recommendations):
        recommendations, ranked_by = _rank_scores(recommendations, users, truth_data, width, ties), "score"
    catalogue = Catalogue(truth_data.item_ids)
    n_dropped = 0
    if _is_table(recommendations):
        per_row = not item_identity and ties == "input" and train is None and aspects is None and predictions is None
        per_row = per_row and truth_data.aspects is None
        arrow = per_row and _is_table(truth) and hasattr(truth, "column_names")  # the truth's own Arrow columns
        columns_of = (truth["item"], truth["user"]) if arrow else (None, None)
        ranked = _map_recommendations(recommendations, truth_data, unknown_users, per_row, *columns_of)
        rec_users, rec_items, order, ranked_by, new_items, n_dropped, row_users, list_codes = ranked
        if isinstance(new_items, tuple):  # (Arrow dictionary or column, positions[, per row]): ids made when read
            catalogue = Catalogue(truth_data.item_ids, *new_items)
        else:
            catalogue = Catalogue(_extend(truth_data.item_ids, new_items))
    train_data = None
    if train is not None:
        train_data = train if isinstance(train, Interactions) else _interactions(train, "train")
        known = catalogue.ids
        catalogue = Catalogue(_extend(known, train_data.item_ids[_index_of(known, train_data.item_ids) < 0]))

    truth_csr = _csr(truth_data, len(catalogue))
    eval_users = np.flatnonzero(np.diff(truth_csr.indptr) > 0)
    truth_rows = truth_csr[eval_users] if len(eval_users) < truth_csr.shape[0] else truth_csr
    rankings = np.full((len(eval_users), 0), -1, dtype=np.int32)
    if _is_table(recommendations):
        if ranked_by == "rank" and ranks == "positions":
            _one_item_per_rank(rec_users, rec_items, order, truth_data.user_ids, catalogue)
        rankings = to_rankings(
            rec_users, rec_items, order, truth_data.n_users, width, descending=ranked_by == "score", ties=ties,
            item_ids=None if ties == "input" else catalogue.ids, positions=ranked_by == "rank" and ranks == "positions",
        )  # fmt: skip
        if len(eval_users) < truth_data.n_users:
            rankings = rankings[eval_users]
    elif recommendations is not None:
        rankings = _matrix_input(recommendations, users, truth_data, eval_users, width, len(catalogue))
    if catalogue.per_row:
        _check_row_duplicates(rankings, eval_users, truth_data, catalogue, row_users, list_codes)
    else:
        _check_duplicates(rankings, eval_users, truth_data, catalogue)

    train_rows = train_all = None
    if train_data is not None:
        train_all = _train_matrix(train_data, catalogue.ids)
        train_rows = _rows_or_empty(train_all, _index_of(train_data.user_ids, truth_data.user_ids[eval_users]))
    return Aligned(
        truth=truth_data,
        train=train_data,
        users=eval_users,
        catalogue=catalogue,
        rankings=rankings,
        truth_rows=truth_rows,
        train_rows=train_rows,
        train_all=train_all,
        aspects=_aspects(aspects, truth_data, train_data, catalogue),
        predictions=None if predictions is None else _predictions(predictions, truth_data, truth_csr, eval_users),
        predictions_table=predictions,
        graded=graded,
        ranked_by=ranked_by,
        ties=ties,
        ranks=ranks,
        users_dropped=n_dropped,
        users_without_list=None if recommendations is None else int(np.count_nonzero((rankings < 0).all(axis=1))),
    )


# ----------------------------------------------------------------- tables
def _is_table(obj: object) -> bool:
    """A pandas DataFrame or a pyarrow Table (recognised without importing either)."""
    module = type(obj).__module__
    return (module.startswith("pandas") and hasattr(obj, "columns")) or (
        module.startswith("pyarrow") and hasattr(obj, "column_names")
    )


def _columns(table: Any) -> list[str]:
    return list(table.column_names) if hasattr(table, "column_names") else list(table.columns)


def _numbers(table: Any, column: str) -> np.ndarray:
    """A column as float64; what is not a number becomes NaN (the caller names it)."""
    values = table[column]
    if hasattr(table, "column_names"):  # Arrow: numbers arrive as numbers from the reader
        if _arrow.is_numeric(values):
            return _arrow.numbers(values).astype(np.float64, copy=False)
        values = values.to_pandas()
    import pandas as pd

    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)


def _value(table: Any, column: str, row: int) -> Any:
    """The cell of a column at a row position (for messages)."""
    values = table[column]
    if hasattr(values, "iloc"):  # pandas: by position, whatever the index
        return values.iloc[row]
    return values[row].as_py()


def _first_missing(column: Any) -> int | None:
    """The first row position of a missing id (null, NaN, None) in an id column of a table, or None.

    >>> import pandas as pd, pyarrow as pa
    >>> _first_missing(pd.Series([1.0, None, 3.0])), _first_missing(pa.chunked_array([["a"], [None]]))
    (1, 1)
    >>> _first_missing(pd.Series(["a", "b"])) is None
    True
    """
    if hasattr(column, "null_count"):  # Arrow: the readers refuse nulls, a table built in Python may hold them
        if not column.null_count:
            return None
        import pyarrow.compute as pc

        return int(pc.index(pc.is_null(column), True).as_py())
    import pandas as pd  # a pandas column: pandas is loaded

    missing = np.flatnonzero(pd.isna(column))
    return int(missing[0]) if len(missing) else None


def _ids_at(column: Any, rows: np.ndarray) -> np.ndarray:
    """The ids of some rows of an id column (Arrow, pandas or numpy), as an array."""
    dictionary = dictionary_codes(column)
    if dictionary is not None:
        codes, categories = dictionary
        return categories[codes[rows]]
    return np.asarray(column)[rows]


def _arrow_codes(column: Any) -> tuple[np.ndarray, Any] | None:
    """(codes, Arrow dictionary) of an Arrow dictionary column of text or integer ids, whose ids are distinct as
    receval compares them (one type, no NaN); None for any other column.

    >>> import pyarrow as pa
    >>> codes, ids = _arrow_codes(pa.chunked_array([pa.array(["b", "a", "b"]).dictionary_encode()]))
    >>> codes.tolist(), ids.to_pylist()
    ([0, 1, 0], ['b', 'a'])
    >>> _arrow_codes(pa.array([1.5, 2.5]).dictionary_encode()) is None
    True
    """
    if not type(column).__module__.startswith("pyarrow"):
        return None
    import pyarrow as pa

    kind = getattr(column.type, "value_type", None)
    if kind is None or not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)):
        return None
    return _arrow.dictionary(column)


def _ids_of(dictionary: Any, positions: np.ndarray) -> np.ndarray:
    """The ids at ``positions`` of an Arrow dictionary, as :func:`~receval.data.vocab.dictionary_codes` gives them.

    >>> import pyarrow as pa
    >>> _ids_of(pa.array(["a", "b", "c"]), np.array([2, 0])).tolist(), _ids_of(pa.array([5, 6]), np.array([1]))
    (['c', 'a'], array([6]))
    """
    return (_arrow.numbers(dictionary) if _arrow.is_numeric(dictionary) else _arrow.text(dictionary))[positions]


def _lookup(space: np.ndarray, column: Any, value_set: Any = None) -> np.ndarray:
    """:func:`~receval.data.vocab.index_of` of an id column in an id space (int32, -1 where absent).

    A column of text ids dictionary-encoded in Arrow (what the readers give) over a space of
    text ids, one of them past the size where ``index_of`` hashes through pandas: the
    dictionary is looked up by Arrow's hash table (``pyarrow.compute.index_in``) and the rows
    follow through their codes, without a Python string per distinct id (the dictionary as
    Python strings, then a pandas Index, cost 2.2 of 3.0 s at 5M distinct item ids). Text
    compares as Python compares it (UTF-8 bytes equal exactly when the strings are). Any
    other column, and smaller ones (whose lookup needs neither pandas nor Arrow's compute
    functions, which import it), go through ``index_of``, unless ``value_set`` gives the
    space as Arrow text already (:func:`_space_texts`): then Arrow looks any size up.

    >>> import pyarrow as pa
    >>> space = np.array(["a", "b", "c"], dtype=object)
    >>> _lookup(space, pa.chunked_array([pa.array(["c", "z", None, "a"]).dictionary_encode()])).tolist()
    [2, -1, -1, 0]
    """
    codes = _arrow_codes(column)
    if codes is None or _arrow.is_numeric(codes[1]):
        return _index_of(space, column)
    if value_set is None or value_set.type != codes[1].type:
        if max(len(space), len(codes[1])) <= _TEXT_LOOKUP_MAX or space.dtype != object or not _all_text(space):
            return _index_of(space, column)
        import pyarrow as pa

        try:
            value_set = pa.array(space, type=codes[1].type)
        except UnicodeEncodeError:  # a lone surrogate, which no Arrow text (UTF-8) holds: Python compares it
            return _index_of(space, column)
    import pyarrow.compute as pc

    found = _arrow.numbers(pc.index_in(codes[1], value_set=value_set))  # NaN: not found (pc.fill_null imports pandas)
    table = np.where(np.isnan(found), -1, found) if found.dtype.kind == "f" else found
    return np.append(table.astype(np.int32, copy=False), np.int32(-1))[codes[0]]  # code -1 (no id) finds -1


def _space_texts(column: Any, indices: np.ndarray, size: int) -> Any:
    """The id space of an Arrow column of text ids (dictionary-encoded, as the readers give them) as Arrow text, in
    the order of the space's ``size`` ids, which the rows name by ``indices`` (an Interactions' ``users`` of the
    table it was built from, row for row); None for any other column.

    (Made again from the space's Python strings, ``pyarrow.array`` imports pandas: 0.4 s of a TREC run.)

    >>> import pyarrow as pa
    >>> column = pa.chunked_array([pa.array(["b", "a", "b"]).dictionary_encode()])
    >>> _space_texts(column, np.array([1, 0, 1]), 2).to_pylist()
    ['a', 'b']
    """
    kind = getattr(column, "type", None)
    if kind is None or not type(column).__module__.startswith("pyarrow") or len(column) != len(indices):
        return None
    import pyarrow as pa

    if not (pa.types.is_dictionary(kind) and _arrow.is_text(kind.value_type)) or column.null_count:
        return None
    codes, dictionary = _arrow.dictionary(column)
    rows = np.zeros(size, dtype=np.int64)
    rows[indices] = np.arange(len(indices))  # a row naming each id (every id of a space built from rows has one)
    return dictionary.take(_arrow.int32_array(codes[rows]))


def _is_plain_text(column: Any) -> bool:
    """Whether a column is Arrow text, not dictionary-encoded (``read_table(plain_items=True)``'s item column)."""
    return type(column).__module__.startswith("pyarrow") and _arrow.is_text(column.type)


def _text_value_set(space: np.ndarray, column: Any) -> Any:
    """The id space as an Arrow text array to look ``column`` up in, when both are text and the column has no
    missing id; else None (the column is then looked up as any other).

    >>> import pyarrow as pa
    >>> _text_value_set(np.array(["a", "b"], dtype=object), pa.chunked_array([["b", "c"]])).to_pylist()
    ['a', 'b']
    >>> _text_value_set(np.array([1, 2]), pa.chunked_array([["1"]])) is None  # ids of another type
    True
    """
    if not _is_plain_text(column) or column.null_count or space.dtype != object or not _all_text(space):
        return None
    import pyarrow as pa  # (pa.array imports pandas: for large tables only, as _lookup)

    try:
        return pa.array(space.tolist(), type=column.type)  # a list: pa.array of an object array is slower
    except UnicodeEncodeError:  # a lone surrogate, which no Arrow text (UTF-8) holds: Python compares it
        return None


def _truth_texts(truth: Interactions, items: Any, column: Any) -> Any:
    """The item of each truth rating (``truth.items``' order) as Arrow text of ``column``'s type, to be hashed with a
    run's plain text items (:func:`_list_items`); None unless both are text and the run has no missing id.

    ``items`` is the truth table's own item column when it is one (Arrow text, dictionary-encoded
    as the readers give it; one row per rating): its text is decoded as it is. Else the truth's
    ids are made Arrow text again (``pyarrow.array`` imports pandas: 0.4 s for a TREC run, which
    needs nothing else of it).

    >>> import pyarrow as pa
    >>> truth = Interactions.from_ids(np.array([1, 2]), np.array(["b", "a"], dtype=object), np.ones(2))
    >>> _truth_texts(truth, None, pa.chunked_array([["c"]])).to_pylist()
    ['b', 'a']
    """
    if not _is_plain_text(column) or column.null_count:
        return None
    import pyarrow as pa

    kind = getattr(items, "type", None)
    if kind is not None and pa.types.is_dictionary(kind) and _arrow.is_text(kind.value_type):
        if len(items) == truth.n_ratings and not items.null_count:
            texts = _arrow.decoded(items)
            return texts if texts.type == column.type else texts.cast(column.type)
    value_set = _text_value_set(truth.item_ids, column)
    return None if value_set is None else value_set.take(_arrow.int32_array(truth.items.astype(np.int32)))


def _list_items(
    column: Any, row_users: np.ndarray, truth: Interactions, texts: Any
) -> tuple[np.ndarray, int, np.ndarray] | None:
    """(items, hits, codes) of the rows of a run's plain text item column, whose users (``row_users``, truth
    indices; -1: left out) each name their rows together; None when a user's rows are apart (or there are none).

    ``items``: the truth index of a row's item when its user's truth holds it, else an index of
    the row's own after the truth's (``len(truth.item_ids) + row``); ``hits``: how many rows hold one of the former.
    ``codes``: an int32 code for each row, equal for two rows of one user exactly when their ids
    are (the rows left out have codes never read). The run is hashed in slices of whole users
    (about :data:`_SLICE` rows: a hash table that stays in the cache; 5M distinct ids take a fifth
    of the time of one table of all), each with its users' truth items (``texts``, one a
    rating) first: one hash finds both the repeats within a list and the items of its user's
    truth, where looking every row up in all of the truth's ids (``pyarrow.compute.index_in``)
    cost as much again. Text compares as Python compares it (UTF-8 bytes equal exactly when the
    strings are).

    >>> import pyarrow as pa
    >>> truth = Interactions.from_ids(np.array([0, 1]), np.array(["a", "b"], dtype=object), np.ones(2))
    >>> items, hits, codes = _list_items(pa.chunked_array([["b", "a", "b", "a"]]), np.array([0, 0, 0, 1]), truth,
    ...                                  pa.array(["a", "b"]))
    >>> items.tolist(), hits, codes.tolist()
    ([2, 0, 4, 5], 1, [1, 0, 1, 0])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(row_users)
    if not n:
        return None
    filled = row_users
    if (row_users < 0).any():  # a row left out joins the user before it (or the first): never read, never apart
        at = np.where(row_users >= 0, np.arange(n), 0)
        filled = row_users[np.maximum.accumulate(at)]
    starts = np.flatnonzero(np.concatenate(([True], filled[1:] != filled[:-1])))
    if len(distinct(filled[starts])) < len(starts):  # a user's rows apart
        return None
    at = np.searchsorted(starts, np.arange(0, n, _SLICE))  # the first user starting in each slice
    cuts = np.unique(np.append(starts[at[at < len(starts)]], n))
    # the truth ratings of each slice's users, slice by slice
    slice_of = np.full(truth.n_users, -1, dtype=np.int64)
    firsts = filled[starts]
    listed = firsts >= 0
    slice_of[firsts[listed]] = np.searchsorted(cuts, starts[listed], side="right") - 1
    rated = slice_of[truth.users]
    entries = np.flatnonzero(rated >= 0)
    entries = entries[np.argsort(rated[entries], kind="stable")]
    bounds = np.searchsorted(rated[entries], np.arange(len(cuts))).tolist()
    rated_texts = texts.take(_arrow.int32_array(entries.astype(np.int32)))
    if isinstance(rated_texts, pa.ChunkedArray):
        rated_texts = rated_texts.combine_chunks()
    codes = np.empty(n, dtype=np.int32)
    rated_codes = np.empty(len(entries), dtype=np.int32)
    base = 0
    for j, (a, b) in enumerate(itertools.pairwise(cuts.tolist())):
        t0, t1 = bounds[j], bounds[j + 1]
        part = pa.concat_arrays([rated_texts.slice(t0, t1 - t0), *column.slice(a, b - a).chunks])
        encoded = pc.dictionary_encode(part)
        part_codes = _arrow.numbers(encoded.indices)
        np.add(part_codes[: t1 - t0], base, out=rated_codes[t0:t1])
        np.add(part_codes[t1 - t0 :], base, out=codes[a:b])
        base += len(encoded.dictionary)
    # a row's item is its user's truth item when (user, code) is a truth rating's: the rows whose code some truth
    # item of their slice has are the only ones to look up
    keys = truth.users[entries].astype(np.int64) << 32 | rated_codes
    by_key = np.argsort(keys)
    keys = keys[by_key]
    held = np.zeros(base + 1, dtype=bool)
    held[rated_codes] = True
    candidates = np.flatnonzero(held[codes])
    wanted = row_users[candidates].astype(np.int64) << 32 | codes[candidates]
    at_key = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    items = np.arange(len(truth.item_ids), len(truth.item_ids) + n, dtype=np.int32)
    hit = keys[at_key] == wanted if len(keys) else np.zeros(0, dtype=bool)
    items[candidates[hit]] = truth.items[entries[by_key[at_key[hit]]]]
    return items, int(np.count_nonzero(hit)), codes


def _encoded_items(recs: Any) -> Any:
    """A table whose item column is plain Arrow text, with it dictionary-encoded as the reader encodes ids."""
    if not (hasattr(recs, "column_names") and _is_plain_text(recs["item"])):
        return recs
    from receval.data.tables import text_dictionary

    at = recs.column_names.index("item")
    return recs.set_column(at, "item", text_dictionary(recs["item"]))


_BY_ROW_FROM = _TEXT_LOOKUP_MAX  # ids; below, a run's items are made identities as always (Python, no pandas)


def _all_text(values: np.ndarray) -> bool:
    return set(map(type, values.tolist())) <= {str}  # (a generator over the array: 4x slower)


def _distinct(column: Any, rows: np.ndarray) -> int:
    """How many distinct ids the rows ``rows`` of an id column hold (a missing id counts once)."""
    dictionary = dictionary_codes(column)
    if dictionary is not None:
        return len(distinct(dictionary[0][rows]))
    import pandas as pd

    return len(pd.unique(np.asarray(column)[rows]))


def _first_seen(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes renumbered in order of first appearance, and the original code of each new one.

    (``pandas.factorize`` of ``codes``.)

    >>> [c.tolist() for c in _first_seen(np.array([7, 3, 7, 5]))]
    [[0, 1, 0, 2], [7, 3, 5]]
    """
    unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inverse], unique[order]


def _interactions(frame: Any, kind: str) -> Interactions:
    if not _is_table(frame):
        raise MetricError(f"{kind} must be an Interactions, a DataFrame or a file path, got {type(frame).__name__}")
    if len(frame) == 0:
        raise MetricError(f"the {kind} has no rows: there is nothing to evaluate against")
    columns = _columns(frame)
    for col in ("user", "item"):
        if col not in columns:
            raise MetricError(f"{kind} needs columns 'user' and 'item'; it has {columns}", column=col)
    return Interactions.from_frame(frame, rating="rating" if "rating" in columns else None, name=kind)


# ----------------------------------------------------------------- recommendations
def _map_recommendations(
    recs: Any,
    truth: Interactions,
    unknown_users: str,
    per_row: bool = False,
    truth_items: Any = None,
    truth_users: Any = None,
) -> tuple[Any, ...]:
    """Rows of a recommendation table as truth indices, in the table's order.

    Returns user and item indices (items the truth does not know numbered after its
    own, in order of first appearance in the lists), ordering values, what orders
    them (``"score"``: descending, ``"rank"``: ascending), the ids of those unknown
    items (an array, or an Arrow dictionary and their positions in it, for a
    :class:`Catalogue` to read when asked), and the number of users dropped.
    ``per_row`` (a column of plain Arrow text): an item its user's truth does not hold has its
    row's index instead (:class:`Catalogue` ``per_row``), and the user of every row of the
    table (-1: left out) and each row's list code (:func:`_list_items`) are returned too, for
    :func:`_check_row_duplicates` (else None); any other column, a run whose users' rows are
    apart, or a run of all misses, is dictionary-encoded, as the reader would have, and numbered
    so. ``truth_items``, ``truth_users``: the truth table's columns (Arrow), whose text is read
    from them rather than made again from the truth's ids.
    """
    columns = _columns(recs)
    missing = [c for c in ("user", "item") if c not in columns]
    if missing:
        raise MetricError(f"recommendations need columns user, item and score or rank; missing {missing}")
    ranked_by: Literal["score", "rank"]
    if "score" in columns:
        order = _numbers(recs, "score")
        bad = np.isnan(order)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise MetricError(
                f"score of user {shown_id(_value(recs, 'user', j))}, item {shown_id(_value(recs, 'item', j))} "
                f"(row {j}) is missing "
                "or not a number; drop the row or give it a score",
                column="score",
            )
        ranked_by = "score"
    elif "rank" in columns:
        order, ranked_by = _numbers(recs, "rank"), "rank"
        with np.errstate(invalid="ignore"):
            bad = ~(order >= 1) | (order != np.floor(order))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise MetricError(f"rank {order[j]:g} of row {j + 1}: ranks are positive integers (1 first)", column="rank")
    else:
        raise MetricError(f"recommendations need a 'score' or a 'rank' column; they have {columns}")
    for role in ("user", "item"):  # a missing id is not an unknown one (which is left out with a warning)
        blank = _first_missing(recs[role])
        if blank is not None:
            raise DataError(f"row {blank} of the recommendations has no {role} id; drop the row or give its id",
                            column=role)  # fmt: skip
    # plain text items (read_table's plain_items) past the size where ids are hashed, as the reader would encode them
    large = _is_plain_text(recs["item"]) and max(len(truth.item_ids), len(recs["item"])) > _BY_ROW_FROM
    # an int32 index for each row, and an int32 code for each row and truth rating (_list_items)
    per_row = per_row and large and len(truth.item_ids) + len(recs) + truth.n_ratings < 2**31
    # dictionary-encoded ids: each distinct one looked up once (per_row: in the truth table's own text)
    space = _space_texts(truth_users, truth.users, truth.n_users) if per_row else None
    users = _lookup(truth.user_ids, recs["user"], space)
    listed = None  # (items, hits, codes) of the rows, user by user (per_row)
    if per_row and (texts := _truth_texts(truth, truth_items, recs["item"])) is not None:
        listed = _list_items(recs["item"], users, truth, texts)
    by_row = listed is not None  # the run's other items numbered row by row
    n_hits = 0  # (by_row) rows whose item is in their user's truth
    if listed is not None:  # each list's items hashed with its user's truth items: no hash of all the run's items
        items, n_hits, list_codes = listed
    else:
        recs, list_codes = _encoded_items(recs) if large else recs, None
        items = _lookup(truth.item_ids, recs["item"])
    rows = None  # the table's row of each row kept (None: every row)
    table_users = users
    unknown = users < 0
    n_dropped = 0
    if len(users) and unknown.all():
        raise DataError(mismatch(truth.user_ids, recs["user"], "user"))
    if unknown.any():
        bad_rows = np.flatnonzero(unknown)
        bad_ids = _ids_at(recs["user"], bad_rows)
        n_dropped = _distinct(recs["user"], bad_rows)
        message = (
            f"{n_dropped} user(s) of the recommendations have no truth (e.g. {shown_id(bad_ids[0])}) "
            "and cannot be scored"
        )
        if unknown_users == "error":
            raise MetricError(message + "; evaluate only users of the test set")
        warnings.warn(message + "; they are left out", UserWarning, stacklevel=4)
        rows = np.flatnonzero(~unknown)
        users, order, items = users[rows], order[rows], items[rows]
    if len(items) and by_row and not n_hits:  # checked by the ids as the reader encodes them
        recs, by_row, list_codes = _encoded_items(recs), False, None
        items = _lookup(truth.item_ids, recs["item"])
        items = items if rows is None else items[rows]
    # an all-miss run scores 0, unless its ids are the truth's read otherwise
    if len(items) and not by_row and (items < 0).all():
        if same_numbers(truth.item_ids, recs["item"]) is not None:
            raise DataError(mismatch(truth.item_ids, recs["item"], "item"))
        all_miss = "every list scores as all misses; if these are not the truth's item ids, give the right column"
        warnings.warn(mismatch(truth.item_ids, recs["item"], "item", otherwise=all_miss), UserWarning, stacklevel=4)
    new_ids: np.ndarray | tuple[Any, ...] = np.zeros(0, dtype=object)
    missed = None if by_row else items < 0
    row_users = None
    if by_row and n_hits < len(items):  # an index per row (after the truth's): which item it is is never asked
        new_ids, row_users = (recs["item"], None, True), table_users  # users of every row: the repeat check's
    elif missed is not None and missed.any():  # items the truth never saw: in the catalogue, as the lists name them
        unseen = np.flatnonzero(missed)
        unseen = unseen[np.argsort(users[unseen], kind="stable")]
        at = unseen if rows is None else rows[unseen]
        codes = _arrow_codes(recs["item"])
        if codes is not None and (codes[0][at] >= 0).all():
            # an Arrow dictionary names each distinct id once: its codes are numbered by first appearance as they are
            # (was: every unseen row's id as a Python object, then sorted by pandas, 25 of 66 s at 5M unseen ids)
            first, new = _first_seen(codes[0][at])
            new_ids = (codes[1], new)  # the ids themselves only when read (Catalogue)
        else:
            sorted_codes, ids = _encode(_ids_at(recs["item"], at), what="item id")
            first, new = _first_seen(sorted_codes)
            new_ids = ids[new]
        items[unseen] = len(truth.item_ids) + first
    return users, items, order, ranked_by, new_ids, n_dropped, row_users, list_codes if by_row else None


def _one_item_per_rank(
    users: np.ndarray, items: np.ndarray, ranks: np.ndarray, user_ids: np.ndarray, item_ids: Catalogue
) -> None:
    """Read as positions, a rank holds one item: a rank given twice in a list is an error naming user and item."""
    perm = np.lexsort((ranks, users))
    u, r = users[perm], ranks[perm]
    repeated = np.flatnonzero((u[1:] == u[:-1]) & (r[1:] == r[:-1]))
    if len(repeated):
        j = perm[repeated[0] + 1]
        raise MetricError(
            f"user {shown_id(user_ids[users[j]])} has two items at rank {ranks[j]:g} "
            f"(e.g. {shown_id(item_ids[int(items[j])])}): "
            "read as positions (ranks=positions), a rank holds one item; give each item its own rank, or "
            "read ranks as an order (ranks=order)",
            column="rank",
            parameters=["ranks"],
        )


def _is_sparse(obj: object) -> bool:
    """A scipy sparse matrix or array, recognised without importing scipy (none exists before it is imported)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(obj))


def _is_score_matrix(recommendations: object) -> bool:
    if _is_sparse(recommendations):
        return True
    return isinstance(recommendations, np.ndarray) and recommendations.ndim == 2 and recommendations.dtype.kind == "f"


def _rank_scores(scores: Any, users: Any, truth: Interactions, width: int | None, ties: Ties) -> np.ndarray:
    """Item-index lists from a score matrix (rows: ``users`` or every truth user; columns: the truth's items).

    Each row ranks by descending score, ties by ``ties`` (``input``: by column, i.e. item
    index); a sparse matrix ranks only its stored entries, a dense one every finite
    score (-inf or NaN: not recommended).
    """
    n_rows = truth.n_users if users is None else len(np.asarray(users))
    if scores.shape != (n_rows, truth.n_items):
        rows_meant = "truth users" if users is None else "entries of users="
        raise DataError(
            f"the score matrix is {scores.shape[0]} x {scores.shape[1]}, but there are {n_rows} {rows_meant} and "
            f"{truth.n_items} truth items: give scores over the truth's id space (an Interactions from "
            "receval.split keeps the whole data set's), or pass users= for the rows"
        )
    if _is_sparse(scores):
        import scipy.sparse as sp

        m = sp.coo_matrix(scores)
        ok = np.isfinite(m.data)
        rows, cols, values = m.row[ok], m.col[ok], m.data[ok]
        order = np.lexsort((cols, rows))
        rows, cols, values = rows[order], cols[order], values[order]
    else:
        values_all = np.where(np.isnan(scores), -np.inf, scores)
        keep = np.isfinite(values_all)
        if width is not None and width < scores.shape[1]:  # only the top width per row (and ties) can be listed
            kth = -np.partition(-values_all, width - 1, axis=1)[:, width - 1 : width]
            keep &= values_all >= kth
        rows, cols = np.nonzero(keep)
        values = values_all[rows, cols]
    return to_rankings(
        rows, cols.astype(np.int32), values, n_rows, width, descending=True, ties=ties, item_ids=truth.item_ids
    )


def _matrix_input(
    matrix: Any, users: Any, truth: Interactions, eval_users: np.ndarray, width: int | None, n_items: int
) -> np.ndarray:
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.dtype.kind not in "iu":
        raise MetricError(
            f"a recommendation matrix must be a 2-D int array of item indices, got {matrix.dtype} {matrix.shape}"
        )
    if users is None:
        if matrix.shape[0] != truth.n_users:
            raise MetricError(
                f"the recommendation matrix has {matrix.shape[0]} rows but the truth has {truth.n_users} users; "
                "pass users= (the truth user index of each row)",
                parameters=["users"],
            )
        users = np.arange(truth.n_users)
    users = np.asarray(users)
    if len(users) != matrix.shape[0]:
        raise MetricError(f"users has {len(users)} entries for {matrix.shape[0]} rows of recommendations")
    if matrix.size and (matrix.max() >= n_items or matrix.min() < -1):
        raise MetricError(f"item indices must lie in -1..{n_items - 1} (-1 = padding)")
    if width is not None:
        matrix = matrix[:, :width]
    full = np.full((truth.n_users, matrix.shape[1]), -1, dtype=np.int32)
    full[users] = matrix
    return full[eval_users]


def _check_duplicates(rankings: np.ndarray, eval_users: np.ndarray, truth: Interactions, item_ids: Catalogue) -> None:
    if rankings.shape[1] < 2:
        return
    s = np.sort(rankings, axis=1)
    dup = (s[:, 1:] == s[:, :-1]) & (s[:, 1:] >= 0)
    if dup.any():
        row, col = np.argwhere(dup)[0]
        raise MetricError(
            f"user {shown_id(truth.user_ids[eval_users[row]])} is recommended item "
            f"{shown_id(item_ids[int(s[row, col])])} more than once; "
            "each item may appear once per list (deduplicate the recommendations)"
        )


_SLICE = 1 << 13  # rows of a run hashed at once: a hash table in L2 (8,192 rows took 0.75 of the time of 16,384)


def _check_row_duplicates(
    rankings: np.ndarray,
    eval_users: np.ndarray,
    truth: Interactions,
    catalogue: Catalogue,
    row_users: np.ndarray,
    codes: np.ndarray,
) -> None:
    """:func:`_check_duplicates` over a ``per_row`` catalogue (an index per row): the same lists refused, by the same
    message, without the run's items hashed all together.

    An item of its user's truth has its truth index; any other, its row's code (``codes``,
    :func:`_list_items`), equal for two rows of one user exactly when their ids are.
    ``row_users`` is the truth user of each row of the run (-1: left out), for the message:
    it names the repeated item that a catalogue of identities numbers first (the truth's
    first, then the first named, user by user).
    """
    if rankings.shape[1] < 2:
        return
    n_truth = len(truth.item_ids)
    suspects = _suspect_lists(eval_users, row_users, codes, truth.n_users)
    if not len(suspects):
        return
    keys = np.empty(n_truth + len(codes) + 1, dtype=np.int32)  # int32: below 2**31 (align's per_row), half the bytes
    keys[:n_truth] = np.arange(n_truth, dtype=np.int32)
    np.add(codes, n_truth, out=keys[n_truth:-1])
    keys[-1] = -1
    keys = keys[rankings[suspects]]  # -1 (no item) finds the -1 at the end
    keys.sort(axis=1)
    dup = (keys[:, 1:] == keys[:, :-1]) & (keys[:, 1:] >= 0)
    if not dup.any():
        return
    at = int(np.argwhere(dup)[0][0])
    row, repeated = int(suspects[at]), keys[at, 1:][dup[at]]
    known = repeated[repeated < n_truth]  # items of the user's truth
    column = catalogue._dictionary
    named = rankings[row][rankings[row] >= n_truth] - n_truth  # the rows of the list's other items
    twice = named[np.isin(codes[named], repeated[repeated >= n_truth] - n_truth)]
    ids = np.array(sorted(set(column.take(_arrow.int32_array(twice.astype(np.int32))).to_pylist())), dtype=object)
    held = _index_of(truth.item_ids, ids) if len(ids) else np.zeros(0, dtype=np.int32)  # other users' truth items
    known = np.concatenate([known, held[held >= 0]])
    if len(known):  # the truth's items come first in a catalogue of identities, in the order of their ids
        item = truth.item_ids[int(known.min())]
    else:
        item = min(ids.tolist(), key=lambda v: _first_named(column, row_users, v))
    raise MetricError(
        f"user {shown_id(truth.user_ids[eval_users[row]])} is recommended item {shown_id(item)} more than once; "
        "each item may appear once per list (deduplicate the recommendations)"
    )


def _suspect_lists(eval_users: np.ndarray, row_users: np.ndarray, codes: np.ndarray, n_users: int) -> np.ndarray:
    """The rankings rows (ascending) of the users whose lists may name an item twice; every user's whose list does.

    ``codes`` (:func:`_list_items`) number the ids of each slice of whole users (truth items
    and others alike), a slice's after the one's before: a list naming an id twice has two
    rows of one code. A run whose codes are all distinct (nearly every run over millions of
    items) has no such list, which one pass over the codes tells; otherwise the lists of the
    users of rows sharing a code are the suspects. Only they are then sorted (every list's sort
    cost 0.03-0.06 s of a 5M-row run). ``row_users``: each row's truth user (-1: left out);
    ``eval_users``: the truth user of each rankings row.

    >>> users = np.array([0, 0, 1, 1, 2, 2])
    >>> _suspect_lists(np.array([0, 1, 2]), users, np.array([3, 4, 5, 6, 7, 8]), 3).tolist()
    []
    >>> _suspect_lists(np.array([0, 1, 2]), users, np.array([3, 4, 5, 3, 7, 7]), 3).tolist()  # 3 twice, 7 twice
    [0, 1, 2]
    """
    seen = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=bool)
    seen[codes] = True
    if np.count_nonzero(seen) == len(codes):
        return np.zeros(0, dtype=np.int64)
    shared = np.bincount(codes)[codes] > 1
    users = row_users[shared]
    suspect = np.zeros(n_users, dtype=bool)
    suspect[users[users >= 0]] = True
    return np.flatnonzero(suspect[eval_users])


def _first_named(column: Any, row_users: np.ndarray, item: str) -> tuple[int, int]:
    """(user, row) of the first row of a user (not left out) naming ``item``, user by user then in the table's order."""
    import pyarrow.compute as pc

    at = _arrow.numbers(pc.indices_nonzero(pc.equal(column, item))).astype(np.int64)
    at = at[row_users[at] >= 0]
    first = at[np.lexsort((at, row_users[at]))[0]]
    return int(row_users[first]), int(first)


def to_rankings(
    users: np.ndarray,
    items: np.ndarray,
    order: np.ndarray,
    n_users: int,
    width: int | None = None,
    *,
    descending: bool = False,
    ties: Ties = "input",
    item_ids: np.ndarray | None = None,
    positions: bool = False,
) -> np.ndarray:
    """An (n_users, width) item matrix padded with -1 from flat (user, item, order) rows.

    Within a user, items go by ascending ``order`` (``descending=True``: by
    descending order, for scores); rows of equal order go by ``ties`` (:data:`TIES`):
    in input order, or by the ids ``item_ids[item]`` (needed then). Input already
    grouped by user and ranked without ties skips the sort (the common case: a
    recommender's output). ``positions=True`` reads ``order`` as positions (1 first):
    rank r goes to column r - 1, a rank missing leaves its column empty (-1), and a
    rank given twice in a list is a :class:`~receval.errors.MetricError`.

    >>> to_rankings(np.array([1, 0, 1]), np.array([7, 8, 9]), np.array([2.0, 1.0, 1.0]), 3).tolist()
    [[8, -1], [9, 7], [-1, -1]]
    >>> to_rankings(np.array([0, 0]), np.array([7, 8]), np.array([0.1, 0.9]), 1, descending=True).tolist()
    [[8, 7]]
    >>> ids = np.array(["d10", "d9", "d2"], dtype=object)
    >>> [to_rankings(np.zeros(3, int), np.array([2, 0, 1]), np.ones(3), 1, ties=t, item_ids=ids).tolist()
    ...  for t in ("input", "id", "trec_eval")]
    [[[2, 0, 1]], [[0, 2, 1]], [[1, 2, 0]]]
    >>> to_rankings(np.array([0, 0]), np.array([7, 8]), np.array([3, 1]), 1, positions=True).tolist()
    [[8, -1, 7]]
    """
    users = np.asarray(users)
    n = len(users)
    if n == 0:
        return np.full((n_users, 0 if width is None else width), -1, dtype=np.int32)
    if check_ties(ties) != "input" and item_ids is None:
        raise MetricError(f"ties={ties!r} orders tied items by their ids: pass item_ids=", parameters=["ties"])
    starts = _ranked_blocks(users, order, descending, strict=ties != "input")
    if starts is None:  # not one block per user ranked without ties to order: sort (stable: input order last)
        keys = (-order if descending else order, users)
        tie_keys = None if item_ids is None else _tie_keys(np.asarray(items), ties, item_ids)
        perm = np.lexsort(keys if tie_keys is None else (tie_keys, *keys))
        users, items, order = users[perm], items[perm], order[perm]
        starts = np.flatnonzero(np.concatenate(([True], users[1:] != users[:-1])))
    if positions:
        return _at_positions(users, items, order, n_users, width)
    lengths = np.diff(np.append(starts, n))
    full = int(lengths.max())
    width = full if width is None else min(width, full)
    out = np.full((n_users, width), -1, dtype=np.int32)
    if n == len(starts) * full:  # every list has the same length: the blocks are the rows, wherever they go
        out[users[starts]] = items.reshape(len(starts), full)[:, :width]
        return out
    position = np.arange(n, dtype=np.int64)
    position -= np.repeat(starts, lengths)
    keep = position < width
    out.ravel()[users[keep].astype(np.int64) * width + position[keep]] = items[keep]
    return out


def _at_positions(
    users: np.ndarray, items: np.ndarray, ranks: np.ndarray, n_users: int, width: int | None
) -> np.ndarray:
    """Rows sorted by (user, rank) scattered to column rank - 1 (gaps stay -1); a repeated rank is an error."""
    repeated = np.flatnonzero((users[1:] == users[:-1]) & (ranks[1:] == ranks[:-1]))
    if len(repeated):
        j = int(repeated[0])
        raise MetricError(
            f"two items of one list have rank {ranks[j]:g} (user index {users[j]}): read as positions "
            "(ranks=positions), a rank holds one item; give each item its own rank, or read ranks as an order"
        )
    position = ranks.astype(np.int64) - 1
    full = int(position.max()) + 1
    width = full if width is None else min(width, full)
    out = np.full((n_users, width), -1, dtype=np.int32)
    keep = position < width
    out.ravel()[users[keep].astype(np.int64) * width + position[keep]] = items[keep]
    return out


def _tie_keys(items: np.ndarray, ties: Ties, item_ids: np.ndarray) -> np.ndarray | None:
    """Each row's key among tied rows (ascending) by the rule ``ties``, from its item's id (None: the input order).

    >>> _tie_keys(np.array([0, 1, 2]), "trec_eval", np.array([9, 10, 2])).tolist()  # '9' > '2' > '10' as text
    [-2, 0, -1]
    """
    if ties == "input":
        return None
    ids = np.asarray(item_ids)
    if ties == "trec_eval" or (ids.dtype == object and not all(type(v) is str for v in ids)):
        ids = ids.astype(str)  # trec_eval compares docnos as text; mixed ids compare as text, as encode() does
    position = np.empty(len(ids), dtype=np.int64)
    position[np.argsort(ids, kind="stable")] = np.arange(len(ids))
    key = position[items]
    return -key if ties == "trec_eval" else key


def _ranked_blocks(users: np.ndarray, order: np.ndarray, descending: bool, strict: bool = False) -> np.ndarray | None:
    """Where each user's rows start, when every user's rows are one block ranked by ``order``; else None.

    A run as tools write it (user after user, each list ranked) needs no sort: the
    lists are scattered into the matrix from their blocks, whatever the users' order.
    ``strict``: a block with two equal values is not ranked (its ties are to be ordered).

    >>> _ranked_blocks(np.array([5, 5, 2]), np.array([0.9, 0.1, 0.5]), True).tolist()
    [0, 2]
    >>> _ranked_blocks(np.array([5, 2, 5]), np.array([0.9, 0.5, 0.1]), True) is None  # user 5 twice
    True
    >>> _ranked_blocks(np.array([5, 5]), np.array([0.9, 0.9]), True, strict=True) is None
    True
    """
    change = users[1:] != users[:-1]
    if strict:
        ranked = order[1:] < order[:-1] if descending else order[1:] > order[:-1]
    else:
        ranked = order[1:] <= order[:-1] if descending else order[1:] >= order[:-1]
    if not (ranked | change).all():
        return None
    starts = np.flatnonzero(np.concatenate(([True], change)))
    if len(distinct(users[starts])) < len(starts):
        return None
    return starts


# ----------------------------------------------------------------- truth and side data
def _csr(data: Interactions, n_items: int) -> CSR:
    """Users x items CSR of the ratings; repeated (user, item) pairs are an error.

    Built straight from the rows (:meth:`CSR.from_coo` sums repeats, as scipy does, so fewer
    stored entries than rows means repeats) instead of a separate uniqueness pass. The rows are put
    in row-major order first (:func:`_row_major_order`), which ``from_coo`` then keeps as it is.
    """
    users, items, ratings = data.users, data.items, data.ratings
    order = _row_major_order(users, items, n_items)
    if order is not None:
        users, items, ratings = users[order], items[order], ratings[order]
    m = CSR.from_coo(ratings, users, items, (data.n_users, n_items))
    if m.nnz != data.n_ratings:
        raise DataError(
            f"the {data.name or 'truth'} has {data.n_ratings - m.nnz} repeated (user, item) ratings; "
            "keep one per pair (Interactions.deduplicate('last' or 'mean'))"
        )
    return m


def _row_major_order(users: np.ndarray, items: np.ndarray, n_items: int) -> np.ndarray | None:
    """The stable order of rows by (user, item), None when they are in it already.

    ``np.argsort(kind="stable")`` of the (user, item) keys (what :meth:`CSR.from_coo` does), by
    one sort of each key packed with its row number: numpy's vectorised sort of 64-bit integers,
    where a stable argsort of 32-bit keys is a merge sort (0.03 s for 600,000 truth ratings, a
    fifth of that now). Keys of 2^31 or more, or 2^32 rows and more, take the stable argsort.

    >>> _row_major_order(np.array([1, 0, 1, 0]), np.array([0, 2, 0, 1]), 3).tolist()
    [3, 1, 0, 2]
    >>> _row_major_order(np.array([0, 0, 1]), np.array([1, 2, 0]), 3) is None
    True
    """
    keys = users.astype(np.int64) * n_items + items
    if not len(keys) or (keys[1:] >= keys[:-1]).all():
        return None
    if int(keys.max()) >= 1 << 31 or len(keys) >= 1 << 32:
        return np.argsort(keys, kind="stable")
    keys <<= 32
    keys |= np.arange(len(keys), dtype=np.int64)  # equal keys: in row order, as a stable sort leaves them
    keys.sort()
    return keys & 0xFFFFFFFF


def _train_matrix(train: Interactions, item_ids: np.ndarray) -> CSR:
    if train.has_duplicates:
        train = train.deduplicate("last")
    item_map = _index_of(item_ids, train.item_ids)
    return CSR.from_coo(
        train.ratings.astype(np.float64), train.users, item_map[train.items], (train.n_users, len(item_ids))
    )


def _rows_or_empty(matrix: CSR, rows: np.ndarray) -> CSR:
    """Rows of ``matrix`` (an empty row where ``rows < 0``), each the same arrays as in ``matrix`` (a stored 0 too).

    >>> m = CSR.from_coo(np.array([0.0, 3.0, 2.0]), np.array([0, 0, 1]), np.array([0, 1, 0]), (2, 2))
    >>> _rows_or_empty(m, np.array([1, -1, 0])).toarray().tolist(), _rows_or_empty(m, np.array([-1, 0])).nnz
    ([[2.0, 0.0], [0.0, 0.0], [0.0, 3.0]], 2)
    """
    present = rows >= 0
    if present.all():
        return matrix[rows]
    picked = matrix[rows[present]]
    counts = np.zeros(len(rows), dtype=np.int64)
    counts[present] = np.diff(picked.indptr)
    indptr = np.zeros(len(rows) + 1, dtype=picked.indptr.dtype)
    np.cumsum(counts, out=indptr[1:])
    return CSR(indptr, picked.indices, picked.data, (len(rows), matrix.shape[1]))


def _aspects(
    aspects: Any, truth: Interactions, train: Interactions | None, catalogue: Catalogue
) -> sp.csr_matrix | None:
    source = next((s for s in (truth, train) if s is not None and s.aspects is not None), None)
    if aspects is None and source is None:
        return None
    import scipy.sparse as sp  # the aspect metrics multiply: their table stays scipy's

    if aspects is not None:
        if not _is_table(aspects) or not {"item", "aspect"} <= set(_columns(aspects)):
            raise MetricError("aspects must be a DataFrame with columns 'item' and 'aspect'")
        m, _ = aspect_matrix(aspects, catalogue.ids, unknown="drop")  # items no list or truth holds do not matter
        return m if m.shape[1] else sp.csr_matrix((len(catalogue), 1))
    assert source is not None and source.aspects is not None
    rows = _index_of(catalogue.ids, source.item_ids)
    a = source.aspects.tocoo()
    return sp.csr_matrix((a.data, (rows[a.row], a.col)), shape=(len(catalogue), a.shape[1]))


def _stored(matrix: CSR, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``matrix[rows[j], cols[j]]`` as float64, NaN where nothing is stored (a CSR with sorted indices).

    An explicit zero is a stored 0, not a missing value.

    >>> m = CSR.from_coo(np.array([3.0, 2.0]), np.array([0, 1]), np.array([1, 0]), (2, 2))
    >>> _stored(m, np.array([0, 1, 1]), np.array([1, 0, 1])).tolist()
    [3.0, 2.0, nan]
    """
    n_cols = np.int64(matrix.shape[1])
    # row-major keys of the stored entries are sorted: one binary search finds each pair
    keys = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr)) * n_cols + matrix.indices
    wanted = rows.astype(np.int64) * n_cols + cols
    at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    out = np.full(len(wanted), np.nan)
    if len(keys):
        hit = keys[at] == wanted
        out[hit] = matrix.data[at[hit]]
    return out


def _predictions(
    frame: pd.DataFrame, truth: Interactions, truth_csr: CSR, eval_users: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import pandas as pd

    missing = [c for c in ("user", "item", "prediction") if c not in frame.columns]
    if missing:
        raise MetricError(f"predictions need columns user, item, prediction[, rating]; missing {missing}")
    pred = pd.to_numeric(frame["prediction"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.isfinite(pred).all():
        j = int(np.flatnonzero(~np.isfinite(pred))[0])
        raise MetricError(f"prediction of row {j + 1} is missing or not a finite number", column="prediction")
    users = _index_of(truth.user_ids, frame["user"].to_numpy())
    row_of_user = np.full(truth.n_users, -1)
    row_of_user[eval_users] = np.arange(len(eval_users))
    rows = np.where(users >= 0, row_of_user[np.maximum(users, 0)], -1)
    if (rows < 0).any():
        j = int(np.flatnonzero(rows < 0)[0])
        raise MetricError(f"prediction for user {frame['user'].iloc[j]!r} (row {j}): the user has no truth ratings")
    if "rating" in frame.columns:
        ratings = pd.to_numeric(frame["rating"], errors="coerce").to_numpy(dtype=np.float64)
    else:
        items = _index_of(truth.item_ids, frame["item"].to_numpy())
        ratings = np.full(len(frame), np.nan)
        ok = items >= 0
        ratings[ok] = _stored(truth_csr, users[ok], items[ok])
    if np.isnan(ratings).any():
        j = int(np.flatnonzero(np.isnan(ratings))[0])
        raise MetricError(
            f"no true rating for the prediction of user {frame['user'].iloc[j]!r}, item {frame['item'].iloc[j]!r} "
            f"(row {j}); give a rating column or predict only test pairs"
        )
    repeated = frame.duplicated(["user", "item"]).to_numpy()
    if repeated.any():  # counted twice in RMSE and MAE otherwise
        j = int(np.flatnonzero(repeated)[0])
        raise MetricError(
            f"user {frame['user'].iloc[j]!r}, item {frame['item'].iloc[j]!r} (row {j + 1}) is predicted twice; "
            "keep one prediction per pair"
        )
    return rows, ratings, pred
