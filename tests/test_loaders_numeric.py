"""The pyarrow reader of small all-numeric ratings files gives what the pandas reader gives, or defers to it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from receval.data import loaders
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


def _fields(data) -> dict:
    return {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "nnz"):
        return a.shape == b.shape and (a != b).nnz == 0
    return a == b


def _load(path: Path, monkeypatch: pytest.MonkeyPatch, numeric: bool, **options):
    if not numeric:
        monkeypatch.setattr(loaders, "_read_numeric", lambda *args: None)
    try:
        return loaders.load(path, "tsv", **options)
    except DataError as err:
        return str(err)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", list(FILES))
@pytest.mark.parametrize("scale", [None, "1..4"])
def test_same_interactions_or_error_as_the_pandas_reader(tmp_path, monkeypatch, name, scale):
    path = tmp_path / "r.tsv"
    path.write_text(FILES[name], encoding="utf-8")
    fast = _load(path, monkeypatch, True, scale=scale)
    slow = _load(path, monkeypatch, False, scale=scale)
    if isinstance(slow, str):
        assert fast == slow
    else:
        assert not isinstance(fast, str)
        differ = [k for k, v in _fields(fast).items() if not _same(v, _fields(slow)[k])]
        assert differ == []


def test_reads_small_numeric_files_and_defers_the_others(tmp_path, monkeypatch):
    layout = loaders._Layout(
        sep="\t", roles={"user": "user", "item": "item", "rating": "rating", "timestamp": "timestamp"}
    )
    path = tmp_path / "r.tsv"
    path.write_text(FILES["plain"], encoding="utf-8")
    data = loaders._read_numeric(path, layout, "r")
    assert data is not None and data.user_ids.tolist() == [1, 2] and data.ratings.tolist() == [4, 3, 5]
    for name in ("text ids", "NaN rating", "short row", "header only", "date timestamps", "hexadecimal-looking ids"):
        path.write_text(FILES[name], encoding="utf-8")
        assert loaders._read_numeric(path, layout, "r") is None, name
    path.write_text(FILES["plain"], encoding="utf-8")
    monkeypatch.setattr(loaders, "_NUMERIC_MAX_BYTES", path.stat().st_size - 1)
    assert loaders._read_numeric(path, layout, "r") is None  # a large file: pandas' parser is faster
