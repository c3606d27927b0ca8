"""Integer ids only where they are the same ids: the integer path of the loader gives, row by row, the text read."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from receval.data import load
from receval.errors import DataError

H = "user\titem\trating\ttimestamp\n"
FILES = {
    "plain": H + "1\t10\t4\t100\n2\t10\t3\t200\n2\t30\t5\t300\n",
    "zeros and signs": H + "007\t10\t4\t100\n-2\t+10\t3.5\t200\n",
    "quotes, CRLF, blank lines": 'user\titem\trating\n"1"\t10\t4\r\n\r\n2\t"10"\t3\r\n',
    "more columns": "user\titem\trating\tnote\n1\t10\t4\tgood\n2\t10\t3\t\n",
    "text ids": H + "ann\tx\t4\t100\n2\tx\t3\t200\n",
    "float ids": H + "1.0\t10\t4\t100\n2\t10\t3\t200\n",
    "huge ids": H + "99999999999999999999\t10\t4\t100\n2\t10\t3\t200\n",
    "hexadecimal-looking ids": H + "0x10\t10\t4\t100\n0X1f\t10\t3\t200\n",
    "byte order mark, no final newline": "\ufeff" + H + "1\t10\t4\t100",
    "date timestamps": H + "1\t10\t4\t2020-01-01\n2\t10\t3\t2020-01-02\n",
    "repeated header name": "user\titem\trating\trating\n1\t10\t4\t5\n",
    "spaces": H + "1\t 10\t4\t100\n",
    "missing rating": H + "1\t10\t\t100\n2\t10\t3\t200\n",
    "NaN rating": H + "1\t10\tNaN\t100\n",
    "inf rating": H + "1\t10\tinf\t100\n",
    "too large rating": H + "1\t10\t1e300\t100\n",
    "short row": H + "1\t10\t4\t100\n2\t10\t3\n",
    "long row": H + "1\t10\t4\t100\t7\n",
    "header only": H,
    "missing column": "user\titem\tscore\n1\t10\t4\n",
}
# the ids each file holds, as written (None: the file is an error)
USERS = {
    "plain": [1, 2], "zeros and signs": ["-2", "007"], "text ids": ["2", "ann"], "float ids": ["1.0", "2"],
    "huge ids": ["2", "99999999999999999999"], "hexadecimal-looking ids": ["0X1f", "0x10"], "spaces": [1],
}  # fmt: skip
ITEMS = {"zeros and signs": ["+10", "10"], "spaces": [" 10"], "plain": [10, 30]}


def _load(path: Path, **options):
    try:
        return load(path, "tsv", **options)
    except DataError as err:
        return str(err)


@pytest.mark.parametrize("name", list(FILES))
@pytest.mark.parametrize("scale", [None, "1..4"])
def test_integer_ids_are_the_text_ids_row_by_row(tmp_path, name, scale):
    path = tmp_path / "r.tsv"
    path.write_text(FILES[name], encoding="utf-8", newline="")
    exact, text = _load(path, scale=scale), _load(path, scale=scale, ids_as_str=True)
    if isinstance(text, str):
        assert exact == text
        return
    assert not isinstance(exact, str)
    for a, b in ((exact.user_ids[exact.users], text.user_ids[text.users]),
                 (exact.item_ids[exact.items], text.item_ids[text.items])):  # fmt: skip
        assert [str(v) for v in a] == [str(v) for v in b] and all(type(v) is str for v in b)
    np.testing.assert_array_equal(exact.ratings, text.ratings)
    assert exact.scale == text.scale and (exact.timestamps is None) == (text.timestamps is None)
    if name in USERS:
        assert exact.user_ids.tolist() == USERS[name]
    if name in ITEMS:
        assert exact.item_ids.tolist() == ITEMS[name]


def test_integers_asked_for_merge_spellings_and_refuse_text(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text(H + "007\t10\t4\t100\n7\t+10\t3\t200\n")
    data = load(path, ids_as_str=False)
    assert data.user_ids.tolist() == [7] and data.item_ids.tolist() == [10] and data.n_duplicates == 1
    assert data.users.tolist() == [0, 0]
    path.write_text(H + "7\t10\t4\t100\n\nann\t10\t3\t200\n")
    with pytest.raises(DataError, match=r"r\.tsv, line 4, column user: user 'ann' is not an integer id"):
        load(path, ids_as_str=False)


def test_error_cases_are_one_line(tmp_path):
    path = tmp_path / "r.tsv"
    for name in ("missing rating", "NaN rating", "short row", "long row", "header only", "missing column"):
        path.write_text(FILES[name], encoding="utf-8")
        got = _load(path)
        assert isinstance(got, str) and got.startswith(f"{path}") and "\n" not in got, name


@pytest.mark.parametrize(
    ("stamps", "warned"),
    [
        ([1_600_000_000, 1_600_000_000_123, 5], ("1600000000, line 2", "1600000000123, line 3")),
        ([1_600_000_000_000, 1_600_000_000_123, 5], None),  # milliseconds and a counter: nothing to compare
        ([1_600_000_000, 1_600_000_100, 7], None),  # seconds
        ([99_999_999, 100_000_000_000, 1], None),  # a counter below the seconds of 1973
        ([100_000_000, 100_000_000_000, 1], ("100000000, line 2", "100000000000, line 3")),  # the edges
    ],
)
def test_timestamps_mixing_seconds_and_milliseconds_are_named(
    tmp_path: Path, stamps: list[int], warned: tuple[str, str] | None
) -> None:
    path = tmp_path / "r.csv"
    path.write_text("user,item,rating,timestamp\n" + "".join(f"{u},i{u},4,{t}\n" for u, t in enumerate(stamps)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = load(path)
    assert data.timestamps.tolist() == stamps  # read as written, whatever the warning
    said = [str(w.message) for w in caught if "mix seconds" in str(w.message)]
    if warned is None:
        assert said == []
    else:
        (message,) = said
        assert f"seconds ({warned[0]}) and milliseconds ({warned[1]})" in message and str(path) in message
