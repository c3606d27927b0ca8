"""Headerless CSV/TSV ratings (``--no-header``, ``load(header=False)``): positional user, item, rating[, timestamp].

The same rows read with and without a header line give the same data and the same outputs
from ``split``, ``recommend``, ``predict`` and ``data stats``; a bad line is named by its
number (line 1 is data when there is no header).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from receval.cli import main
from receval.data.interactions import Interactions
from receval.data.loaders import load
from receval.errors import ConfigError, DataError

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SEPS = {"csv": ",", "tsv": "\t"}
HEADER = ("user", "item", "rating", "timestamp")


def _rows(n_users: int = 12, n_items: int = 9) -> list[tuple[object, ...]]:
    return [
        (u, i, 1 + (u * i) % 5, 880_000_000 + 100 * u + i)
        for u in range(1, n_users + 1)
        for i in range(1, n_items + 1)
        if (u + 2 * i) % 4
    ]


def _write(path: Path, rows: list[tuple[object, ...]], fmt: str, header: bool) -> Path:
    sep = SEPS[fmt]
    width = len(rows[0])
    lines = [sep.join(HEADER[:width])] if header else []
    lines += [sep.join(str(v) for v in row) for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _pair(tmp_path: Path, fmt: str, rows: list[tuple[object, ...]] | None = None) -> tuple[Path, Path]:
    """The same rows with a header (``with/r.fmt``) and without (``without/r.fmt``): one name, so one data name."""
    rows = _rows() if rows is None else rows
    return (
        _write(tmp_path / "with" / f"r.{fmt}", rows, fmt, header=True),
        _write(tmp_path / "without" / f"r.{fmt}", rows, fmt, header=False),
    )


def _same(a: Interactions, b: Interactions) -> None:
    np.testing.assert_array_equal(a.user_ids, b.user_ids)
    np.testing.assert_array_equal(a.item_ids, b.item_ids)
    np.testing.assert_array_equal(a.users, b.users)
    np.testing.assert_array_equal(a.items, b.items)
    np.testing.assert_array_equal(a.ratings, b.ratings)
    assert (a.timestamps is None) == (b.timestamps is None)
    if a.timestamps is not None:
        np.testing.assert_array_equal(a.timestamps, b.timestamps)
    assert a.scale == b.scale and a.name == b.name


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------ the Python API
@pytest.mark.parametrize("fmt", ["csv", "tsv"])
@pytest.mark.parametrize("width", [3, 4])
def test_load_without_header_equals_load_with_one(tmp_path: Path, fmt: str, width: int) -> None:
    with_header, without = _pair(tmp_path, fmt, [row[:width] for row in _rows()])
    expected = load(with_header, fmt)
    got = load(without, fmt, header=False)
    _same(got, expected)
    assert got.n_ratings == len(_rows()) and (got.timestamps is not None) == (width == 4)


def test_load_without_header_text_ids_and_dates(tmp_path: Path) -> None:
    rows = [("ann", "x", 4, "2020-01-01"), ("bob", "x", 2, "2020-01-02"), ("bob", "007", 5, "2020-01-03")]
    with_header, without = _pair(tmp_path, "csv", rows)
    got = load(without, "csv", header=False, ids_as_str=True)
    _same(got, load(with_header, "csv", ids_as_str=True))
    assert sorted(got.item_ids) == ["007", "x"]
    assert list(got.timestamps) == [1577836800, 1577923200, 1578009600]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("1,2,3,4,5\n1,3,4,5,6\n", "line 1: has 5 fields; a file without a header has 3 (user, item, rating) or 4"),
        ("1,2\n", "line 1: has 2 fields"),
        ("1,2,3,4\n1,3,4,5,6\n", "line 2: has 5 fields, expected 4 (user,item,rating,timestamp)"),
        ("1,2,3\n\n1,3,4\n2,2\n", "line 4: has 2 fields, expected 3 (user,item,rating)"),
        ("1,2,3\n1,3,lots\n", "line 2, column rating: rating 'lots' is not a number"),
        ("1,2,3,4\n1,3,4,soon\n", "line 2, column timestamp: timestamp 'soon' is neither an integer nor a date"),
        ("1,2,oops\n", "line 1, column rating: rating 'oops' is not a number"),
        ("", "line 1: the file is empty"),
    ],
)
def test_load_without_header_names_the_bad_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DataError) as caught:
        load(path, "csv", header=False)
    assert str(caught.value).startswith(f"{path}, ") and expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_load_without_header_checks_the_declared_scale(tmp_path: Path) -> None:
    path = tmp_path / "r.tsv"
    path.write_text("1\t2\t4\n1\t3\t9\n")
    with pytest.raises(DataError, match=r"line 2, column rating: rating 9 is outside the declared scale 1\.\.5"):
        load(path, "tsv", header=False, scale="1..5")


def test_load_header_false_conflicts(tmp_path: Path) -> None:
    _, without = _pair(tmp_path, "csv")
    for options in ({"user": "uid"}, {"timestamp": "ts"}, {"extra": ["familiar"]}):
        with pytest.raises(ConfigError, match="give one or the other"):
            load(without, "csv", header=False, **options)
    assert load(without, "csv", header=False, sep=",").n_ratings == len(_rows())
    for fmt in ("parquet", "movielens-100k"):
        with pytest.raises(DataError, match=f"header=False applies only to the csv and tsv formats, not {fmt}"):
            load(without, fmt, header=False)


# ------------------------------------------------------------------------ the commands
def _strip(text: str, *folders: Path) -> str:
    for folder in folders:
        text = text.replace(str(folder), "FOLDER")
    return text


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_split_without_header_writes_the_same_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    outputs = []
    for path, extra in zip(_pair(tmp_path, fmt), ([], ["--no-header"]), strict=True):
        out = path.parent / "split"
        code, printed, err = _run(
            capsys, "split", path, "--format", fmt, "--method", "per-user", "--seed", "3", "--out", out, *extra
        )
        assert code == 0, err
        outputs.append((_strip(printed, out), (out / "train.tsv").read_bytes(), (out / "test.tsv").read_bytes()))
    assert outputs[0] == outputs[1]
    assert outputs[0][1].startswith(b"user\titem\trating\ttimestamp\n")


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_data_stats_without_header_prints_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    with_header, without = _pair(tmp_path, fmt)
    for options in ([], ["--json"]):
        code, expected, _ = _run(capsys, "data", "stats", with_header, "--format", fmt, *options)
        assert code == 0
        code, got, err = _run(capsys, "data", "stats", without, "--format", fmt, "--no-header", *options)
        assert code == 0, err
        assert _strip(got, without) == _strip(expected, with_header)
    assert f'"n_ratings": {len(_rows())}' in got


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_recommend_and_predict_without_header_write_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    rows = _rows()
    train_rows, test_rows = rows[::3] + rows[1::3], rows[2::3]
    written: dict[str, list[bytes]] = {"recommend": [], "predict": []}
    for folder, extra in (("with", []), ("without", ["--no-header"])):
        train = _write(tmp_path / folder / f"train.{fmt}", train_rows, fmt, header=not extra)
        test = _write(tmp_path / folder / f"test.{fmt}", test_rows, fmt, header=not extra)
        common = ["--train", train, "--algorithm", "item-knn", "--param", "k=3", "--format", fmt, *extra]
        recs, preds = tmp_path / folder / "recs.tsv", tmp_path / folder / "preds.tsv"
        code, _, err = _run(capsys, "recommend", *common, "--test", test, "--k", "5", "--out", recs)
        assert code == 0, err
        code, _, err = _run(capsys, "predict", *common, "--test", test, "--out", preds)
        assert code == 0, err
        written["recommend"].append(recs.read_bytes())
        written["predict"].append(preds.read_bytes())
    for name, (expected, got) in written.items():
        assert got == expected, name
    assert len(written["predict"][0].splitlines()) == len(test_rows) + 1


def _command(name: str, path: Path, tmp_path: Path, fmt: str = "csv") -> list[object]:
    if name == "split":
        return ["split", path, "--format", fmt, "--out", tmp_path / "out"]
    if name == "stats":
        return ["data", "stats", path, "--format", fmt]
    out = tmp_path / "o.tsv"
    return [name, "--train", path, "--test", path, "--algorithm", "popularity", "--format", fmt, "--out", out]


COMMANDS = ["split", "stats", "recommend", "predict"]


@pytest.mark.parametrize("command", COMMANDS)
def test_five_fields_without_header_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = tmp_path / "r.csv"
    path.write_text("1,31,2.5,1260759144,x\n1,1029,3,1260759179,y\n")
    code, out, err = _run(capsys, *_command(command, path, tmp_path), "--no-header")
    assert code == 2
    assert err.startswith(f"error: {path}, line 1: has 5 fields;") and err.count("\n") == 1
    assert "Traceback" not in out + err
    assert not (tmp_path / "out").exists() and not (tmp_path / "o.tsv").exists()


@pytest.mark.parametrize("command", ["split", "stats"])
def test_no_header_with_a_column_option_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    _, without = _pair(tmp_path, "csv")
    code, _, err = _run(capsys, *_command(command, without, tmp_path), "--no-header", "--user", "uid")
    assert code == 2
    assert err.startswith("error: --user names a header's column, --no-header reads positional columns")
    assert err.rstrip().endswith("give one or the other") and err.count("\n") == 1


@pytest.mark.parametrize("command", COMMANDS)
def test_no_header_on_a_fixed_layout_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    folder = tmp_path / "ml"
    _write(folder / "u.data", _rows(), "tsv", header=False)
    code, _, err = _run(capsys, *_command(command, folder / "u.data", tmp_path, "movielens-100k"), "--no-header")
    assert code == 2 and "applies only to the csv and tsv formats, not movielens-100k" in err


# ------------------------------------------------------------------------ MovieLens 100K
def _u1_base() -> Path:
    path = SHARED_DATA / "ml-100k" / "u1.base"
    if not path.is_file():
        pytest.skip(f"real data not available: {path}")
    return path


def test_ml100k_u1_base_without_header_equals_the_movielens_format(tmp_path: Path) -> None:
    path = _u1_base()
    got = load(path, "tsv", header=False)
    expected = load(path, "movielens-100k")
    np.testing.assert_array_equal(got.user_ids, expected.user_ids)
    np.testing.assert_array_equal(got.item_ids, expected.item_ids)
    np.testing.assert_array_equal(got.users, expected.users)
    np.testing.assert_array_equal(got.items, expected.items)
    np.testing.assert_array_equal(got.ratings, expected.ratings)
    np.testing.assert_array_equal(got.timestamps, expected.timestamps)
    assert got.scale == expected.scale and got.n_ratings == 80_000


def test_ml100k_u1_base_split_without_header_equals_the_movielens_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _u1_base()
    written = []
    for name, options in (("known", ["--format", "movielens-100k"]), ("plain", ["--format", "tsv", "--no-header"])):
        out = tmp_path / name
        code, _, err = _run(capsys, "split", path, *options, "--method", "temporal", "--out", out)
        assert code == 0, err
        written.append(((out / "train.tsv").read_bytes(), (out / "test.tsv").read_bytes()))
    assert written[0] == written[1]
