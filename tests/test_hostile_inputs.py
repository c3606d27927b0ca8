"""The inputs people have: compressed files, odd Parquet column types, hostile JSON, metric strings and configs.

Compressed input (gzip, bzip2, xz, Zstandard) is read by every reader and every command
that reads ratings or tables, and gives exactly what the plain file gives. Everything
else here is refused: exit status 2 and one ``error: ...`` line naming the file and the
column, key or parameter, never a traceback and never a silently chosen value.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval
from receval.cli import main
from receval.data.loaders import load
from receval.data.tables import read_table
from receval.errors import ConfigError, DataError, MetricError
from receval.experiment.config import load_config
from receval.metrics import parse_metric

COMPRESSIONS = ("gz", "bz2", "xz", "zst")

# 6 users x 3 items, text ids that a number parser would merge ('007' and '7'), ratings 1..5
RATINGS = [
    ("u1", "007", 5, 100), ("u1", "7", 3, 101), ("u1", "x", 1, 102),
    ("u2", "007", 4, 103), ("u2", "x", 2, 104), ("u2", "y", 5, 105),
    ("u3", "7", 4, 106), ("u3", "y", 1, 107), ("u3", "x", 3, 108),
    ("u4", "007", 2, 109), ("u4", "7", 5, 110), ("u4", "y", 4, 111),
    ("u5", "x", 5, 112), ("u5", "y", 3, 113), ("u5", "007", 1, 114),
    ("u6", "7", 2, 115), ("u6", "x", 4, 116), ("u6", "y", 5, 117),
]  # fmt: skip
RUN = [("u1", "007", 0.9), ("u1", "y", 0.5), ("u2", "y", 0.8), ("u2", "7", 0.1), ("u3", "x", 0.7), ("u3", "007", 0.6)]
RUN_B = [("u1", "x", 0.9), ("u1", "007", 0.5), ("u2", "007", 0.8), ("u2", "x", 0.1), ("u3", "7", 0.7), ("u3", "y", 0.6)]


def compress(data: bytes, kind: str) -> bytes:
    """``data`` compressed as the command-line tools write it (zstd by pyarrow's codec)."""
    if kind == "gz":
        return gzip.compress(data)
    if kind == "bz2":
        return bz2.compress(data)
    if kind == "xz":
        return lzma.compress(data)
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return bytes(sink.getvalue().to_pybytes())


def csv_text(rows: list[tuple[Any, ...]], header: str, sep: str = ",") -> bytes:
    lines = [header] if header else []
    lines += [sep.join(str(v) for v in row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def texts() -> dict[str, tuple[str, bytes, str]]:
    """Format case -> (file name, plain content, kind) covering every text format the reader takes."""
    qrels = "".join(f"{u} 0 {i} {r}\n" for u, i, r, _ in RATINGS).encode()
    trec = "".join(f"{u} Q0 {i} {j + 1} {s} tag\n" for j, (u, i, s) in enumerate(RUN)).encode()
    nested: dict[str, dict[str, float]] = {}
    for u, i, s in RUN:
        nested.setdefault(u, {})[i] = s
    return {
        "csv": ("ratings.csv", csv_text(RATINGS, "user,item,rating,timestamp"), "truth"),
        "tsv": ("ratings.tsv", csv_text(RATINGS, "user\titem\trating\ttimestamp", "\t"), "truth"),
        "headerless": ("ratings.csv", csv_text(RATINGS, ""), "truth"),
        "movielens": ("u1.base", csv_text([(u[1:], ord(i[0]), r, t) for u, i, r, t in RATINGS], "", "\t"), "truth"),
        "recbole": (
            "ml.inter",
            csv_text(RATINGS, "user_id:token\titem_id:token\trating:float\ttimestamp:float", "\t"),
            "truth",
        ),
        "qrels": ("test.qrels", qrels, "truth"),
        "trec": ("bm25.trec", trec, "recommendations"),
        "trec, runs of spaces": ("bm25.run", trec.replace(b" ", b"  "), "recommendations"),  # as trec_eval reads
        "json": ("run.json", json.dumps(nested).encode(), "recommendations"),
    }


def frame_of(table: pd.DataFrame) -> dict[str, list[Any]]:
    return {c: [str(v) if c in ("user", "item") else float(v) for v in table[c]] for c in table.columns}


# ------------------------------------------------------------------ the reader
@pytest.mark.parametrize("kind", COMPRESSIONS)
@pytest.mark.parametrize("case", sorted(texts()))
def test_a_compressed_file_reads_as_the_plain_one(tmp_path: Path, case: str, kind: str) -> None:
    """Every text format, compressed, detected from its name before the compression suffix or its content."""
    name, content, what = texts()[case]
    plain = tmp_path / name
    plain.write_bytes(content)
    packed = tmp_path / "packed" / f"{name}.{kind}"
    packed.parent.mkdir()
    packed.write_bytes(compress(content, kind))
    expected = frame_of(read_table(plain, what))
    assert frame_of(read_table(packed, what)) == expected
    # the hand-written rows: every line became a row, ids as written
    if case in ("csv", "tsv", "recbole", "headerless"):
        assert expected["item"] == [i for _, i, _, _ in RATINGS] and expected["rating"] == [r for _, _, r, _ in RATINGS]
    if case in ("json", "trec", "trec, runs of spaces"):
        assert sorted(zip(expected["user"], expected["item"], expected["score"], strict=True)) == sorted(RUN)


@pytest.mark.parametrize("kind", COMPRESSIONS)
def test_the_content_decides_what_is_decompressed(tmp_path: Path, kind: str) -> None:
    """Compressed bytes under a plain name, and plain text under a compressed name, both read."""
    content = texts()["csv"][1]
    hidden = tmp_path / "ratings.csv"
    hidden.write_bytes(compress(content, kind))
    unpacked = tmp_path / f"again.csv.{kind}"  # decompressed on download, the name kept
    unpacked.write_bytes(content)
    bare = tmp_path / f"ratings.{kind}"  # no format suffix: told from the decompressed first line
    bare.write_bytes(compress(content, kind))
    expected = frame_of(read_table(_write(tmp_path / "p.csv", content), "truth"))
    for path in (hidden, unpacked, bare):
        assert frame_of(read_table(path, "truth")) == expected, path


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("kind", COMPRESSIONS)
def test_a_compressed_parquet_file_reads_as_the_plain_one(tmp_path: Path, kind: str) -> None:
    frame = pd.DataFrame(RATINGS, columns=["user", "item", "rating", "timestamp"])
    plain = tmp_path / "r.parquet"
    frame.to_parquet(plain, index=False)
    packed = _write(tmp_path / f"r.parquet.{kind}", compress(plain.read_bytes(), kind))
    assert frame_of(read_table(packed, "truth")) == frame_of(read_table(plain, "truth"))


@pytest.mark.parametrize("kind", COMPRESSIONS)
def test_load_and_evaluate_read_compressed_paths(tmp_path: Path, kind: str) -> None:
    truth = _write(tmp_path / "t.csv", texts()["csv"][1])
    run = _write(tmp_path / "run.csv", csv_text(RUN, "user,item,score"))
    truth_z = _write(tmp_path / f"t.csv.{kind}", compress(truth.read_bytes(), kind))
    run_z = _write(tmp_path / f"run.csv.{kind}", compress(run.read_bytes(), kind))
    plain, packed = load(truth), load(truth_z)
    assert plain.n_ratings == packed.n_ratings == len(RATINGS)
    assert list(plain.item_ids) == list(packed.item_ids) and np.array_equal(plain.ratings, packed.ratings)
    metrics = ["precision@2(threshold=4)", "ndcg@2"]
    a = receval.evaluate(str(run), str(truth), metrics).summary
    b = receval.evaluate(str(run_z), str(truth_z), metrics).summary
    # precision@2 at rating >= 4: u1 (007) 1/2, u2 (y) 1/2, u3 0; u4..u6 (no list) 0: 1/6 over the 6 users
    assert a["precision@2(threshold=4)"] == pytest.approx(1 / 6)
    assert b == a


@pytest.mark.parametrize("kind", COMPRESSIONS)
def test_a_bad_line_in_a_compressed_file_is_named_by_its_line(tmp_path: Path, kind: str) -> None:
    content = b"user,item,score\n1,x,0.5\n2,y,0.4\n3,z,high\n"
    path = _write(tmp_path / f"run.csv.{kind}", compress(content, kind))
    with pytest.raises(DataError) as err:
        read_table(path, "recommendations")
    assert err.value.line == 4 and err.value.path == str(path) and "'high' is not a number" in str(err.value)
    _write(path, compress(b"user,item,score\n1,x,0.5\n2,\xe9,0.4\n", kind))  # latin-1, not UTF-8, on line 3
    with pytest.raises(DataError) as err:
        read_table(path, "recommendations")
    assert err.value.line == 3 and "not UTF-8" in err.value.message


@pytest.mark.parametrize("kind", COMPRESSIONS)
def test_a_truncated_compressed_file_is_one_line(tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    content = texts()["csv"][1] * 2000
    packed = compress(content, kind)
    path = _write(tmp_path / f"t.csv.{kind}", packed[: len(packed) // 2])
    with pytest.raises(DataError, match="damaged or incomplete"):
        read_table(path, "truth")
    run = _write(tmp_path / "run.csv", csv_text(RUN, "user,item,score"))
    line = refused(capsys, ["evaluate", "--truth", path, "--recs", run, "--metrics", "ndcg@2"], names=str(path))
    assert "damaged or incomplete" in line


def test_zstd_without_the_codec_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "t.csv.zst", compress(texts()["csv"][1], "zst"))

    class WithoutZstd:  # a pyarrow built from source without the codec
        @staticmethod
        def is_available(name: str) -> bool:
            return name != "zstd"

    monkeypatch.setattr(pa, "Codec", WithoutZstd)
    with pytest.raises(DataError, match="built without Zstandard; decompress the file first") as err:
        read_table(path, "truth")
    assert err.value.path == str(path)


# ------------------------------------------------------------------ every command that reads
def run_cli(capsys: pytest.CaptureFixture[str], args: list[Any]) -> str:
    """Run the command; assert exit 0 and no error; its stdout."""
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def refused(capsys: pytest.CaptureFixture[str], args: list[Any], *, names: str, out: Path | None = None) -> str:
    """Run the command; assert exit 2, one ``error:`` line containing ``names``, no traceback, ``out`` not
    written. The line."""
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status == 2, captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "Traceback" not in captured.err + captured.out
    assert names in lines[0], lines[0]
    if out is not None:
        assert not out.exists(), f"{out} was written"
    return lines[0]


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """The ratings, a test file and two runs, plain and in every compression."""
    files = {
        "ratings": ("ratings.csv", texts()["csv"][1]),
        "test": ("test.tsv", csv_text(RATINGS[::3], "user\titem\trating\ttimestamp", "\t")),
        "train": ("train.csv", csv_text([r for j, r in enumerate(RATINGS) if j % 3], "user,item,rating,timestamp")),
        "run": ("a.tsv", csv_text(RUN, "user\titem\tscore", "\t")),
        "run_b": ("b.tsv", csv_text(RUN_B, "user\titem\tscore", "\t")),
        "aspects": ("aspects.csv", b"item,aspect\n007,drama\n7,comedy|drama\nx,war\ny,comedy\n"),
    }
    out: dict[str, Path] = {}
    for key, (name, content) in files.items():
        out[key] = _write(tmp_path / name, content)
        for kind in COMPRESSIONS:
            folder = tmp_path / kind
            folder.mkdir(exist_ok=True)
            out[f"{key}.{kind}"] = _write(folder / f"{name}.{kind}", compress(content, kind))
    return out


def _outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("kind", COMPRESSIONS)
def test_every_command_reads_compressed_input_as_plain(
    tmp_path: Path, inputs: dict[str, Path], kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """data stats, split, evaluate, compare, recommend --train and predict: the same output, byte for byte."""
    results = {}
    for how, suffix in (("plain", ""), ("packed", f".{kind}")):
        f = {key: inputs[key + suffix] for key in ("ratings", "test", "train", "run", "run_b", "aspects")}
        out = tmp_path / how
        out.mkdir()
        stats = json.loads(run_cli(capsys, ["data", "stats", f["ratings"], "--json"]))
        run_cli(capsys, ["split", f["ratings"], "--out", out / "split", "--method", "holdout", "--seed", "3"])
        evaluate = json.loads(run_cli(capsys, [
            "evaluate", "--truth", f["test"], "--recs", f["run"], "--train", f["train"], "--aspects", f["aspects"],
            "--metrics", "precision@2(threshold=4),ndcg@2,alpha_ndcg@2", "--json",
        ]))  # fmt: skip
        compare = json.loads(run_cli(capsys, [
            "compare", f["run"], f["run_b"], "--truth", f["ratings"], "--metrics", "ndcg@2", "--json",
        ]))  # fmt: skip
        run_cli(capsys, ["recommend", "--train", f["ratings"], "-a", "popularity", "--k", "2", "-o", out / "recs.tsv"])
        run_cli(capsys, ["predict", "--train", f["ratings"], "--test", f["test"], "-a", "global-mean",
                         "-o", out / "pred.tsv"])  # fmt: skip
        results[how] = (stats, _outputs(out / "split"), evaluate, compare, _outputs(out))
    assert results["packed"] == results["plain"]
    stats, split, evaluate, _, written = results["plain"]
    assert stats["n_ratings"] == len(RATINGS) and stats["n_items"] == 4  # '007' and '7' stay two items
    assert stats["name"] == "ratings" and set(_values(compare)) >= {"a", "b"}  # labels without .csv.gz
    assert set(split) == {"train.tsv", "test.tsv"} and {"recs.tsv", "pred.tsv"} <= set(written)
    # test users with a rating >= 4: u1 (007 hit, 1/2), u2, u3 (no hit), u5 (no list): 1/8
    assert evaluate["precision@2(threshold=4)"] == pytest.approx(1 / 8)


@pytest.mark.parametrize("kind", COMPRESSIONS)
def test_a_compressed_users_file_lists_the_same_users(
    tmp_path: Path, inputs: dict[str, Path], kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = b"user\nu2\nu5\n"
    written = {}
    for how, users in (
        ("plain", _write(tmp_path / "u.txt", listed)),
        (kind, _write(tmp_path / f"u.txt.{kind}", compress(listed, kind))),
    ):
        out = tmp_path / f"recs-{how}.tsv"
        args = ["recommend", "--train", inputs["ratings"], "-a", "popularity", "--k", "1", "--users", users, "-o", out]
        run_cli(capsys, args)
        written[how] = out.read_bytes()
    assert written[kind] == written["plain"]
    assert [line.split("\t")[0] for line in written["plain"].decode().splitlines()[1:]] == ["u2", "u5"]
    latin = _write(tmp_path / "latin.txt", "user\nu2\nü\n".encode("latin-1"))
    line = refused(capsys, ["recommend", "--train", inputs["ratings"], "-a", "popularity", "--users", latin,
                            "-o", tmp_path / "no.tsv"], names=f"{latin}, line 3")  # fmt: skip
    assert "UTF-8" in line and not (tmp_path / "no.tsv").exists()


def _values(doc: Any) -> set[Any]:
    """Every key and text value of a JSON document (where the runs' labels are)."""
    if isinstance(doc, dict):
        return set(doc) | {v for value in doc.values() for v in _values(value)}
    if isinstance(doc, list):
        return {v for value in doc for v in _values(value)}
    return {doc} if isinstance(doc, str) else set()


# ------------------------------------------------------------------ Parquet column types
NESTED = {
    "list<string> item": ("item", pa.array([["a"], ["b"], ["c"]])),
    "large_list item": ("item", pa.array([["a"], ["b"], ["c"]], type=pa.large_list(pa.string()))),
    "fixed_size_list rating": ("rating", pa.array([[4.0], [3.0], [5.0]], type=pa.list_(pa.float64(), 1))),
    "struct user": ("user", pa.array([{"id": 1}, {"id": 2}, {"id": 3}])),
    "map item": ("item", pa.array([[("k", 1)], [("k", 2)], []], type=pa.map_(pa.string(), pa.int64()))),
    "binary item": ("item", pa.array([b"a", b"b", b"c"])),
    "large_binary user": ("user", pa.array([b"a", b"b", b"c"], type=pa.large_binary())),
    "fixed_size_binary item": ("item", pa.array([b"ab", b"cd", b"ef"], type=pa.binary(2))),
    "dictionary<binary> item": ("item", pa.array([b"a", b"b", b"a"]).dictionary_encode()),
    "duration timestamp": ("timestamp", pa.array([1, 2, 3], type=pa.duration("s"))),
    "list rating": ("rating", pa.array([[4.0], [3.0], [5.0]])),
}


def _parquet(path: Path, **replace: Any) -> Path:
    columns: dict[str, Any] = {"user": ["u1", "u2", "u3"], "item": ["a", "b", "c"], "rating": [4.0, 3.0, 5.0],
                               "timestamp": [1, 2, 3]}  # fmt: skip
    columns.update(replace)
    pq.write_table(pa.table(columns), path)
    return path


@pytest.mark.parametrize("case", sorted(NESTED))
def test_a_nested_or_binary_parquet_column_is_refused_by_name(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    column, values = NESTED[case]
    path = _parquet(tmp_path / "t.parquet", **{column: values})
    with pytest.raises(DataError) as err:
        read_table(path, "truth")
    assert err.value.column == column and err.value.path == str(path)
    kind = case.split()[0].split("<")[0]  # Parquet renames a list's field: the type's name, not its full text
    assert f"has type {kind}" in err.value.message and "integers, floats" in err.value.message
    for line in _refused_by_every_reader(tmp_path, path, column, capsys):
        assert str(path) in line


def _refused_by_every_reader(tmp_path: Path, path: Path, column: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The error line of each command that reads ``path`` (evaluate, data stats, split, recommend, predict), each
    naming ``column``; none of them writes anything (a list<string> item column never becomes "['a']")."""
    run = _write(tmp_path / "run.csv", csv_text(RUN, "user,item,score"))
    out = tmp_path / "out"
    out.mkdir()
    lines = [
        refused(capsys, args, names=f"column {column}")
        for args in (
            ["evaluate", "--truth", path, "--recs", run, "--metrics", "ndcg@2"],
            ["data", "stats", path],
            ["split", path, "--out", out / "split"],
            ["recommend", "--train", path, "-a", "popularity", "-o", out / "recs.tsv"],
            ["predict", "--train", path, "--test", path, "-a", "global-mean", "-o", out / "pred.tsv"],
        )
    ]
    assert not list(out.iterdir())
    return lines


@pytest.mark.parametrize("case", ["list<string> item", "struct user", "binary item"])
def test_an_in_memory_arrow_table_is_checked_as_a_file(case: str) -> None:
    """A pyarrow.Table handed to evaluate() gets the column check a Parquet file gets (a list is no id)."""
    column, values = NESTED[case]
    columns: dict[str, Any] = {"user": ["u1", "u2", "u3"], "item": ["a", "b", "c"], "rating": [4.0, 3.0, 5.0]}
    truth = pa.table({**columns, column: values})
    run = pa.table({"user": ["u1", "u2", "u3"], "item": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    with pytest.raises(DataError) as err:
        receval.evaluate(run, truth, ["precision@1"])
    assert err.value.column == column and "integers, floats" in err.value.message
    gap = pa.table({**columns, "user": pa.array([1.0, float("nan"), 3.0], from_pandas=False)})
    with pytest.raises(DataError, match="row 2: empty user id"):
        receval.evaluate(run, gap, ["precision@1"])


@pytest.mark.parametrize("cell", [["a"], ("a",), {"a": 1}, b"a", np.array(["a"])], ids=repr)
def test_a_dataframe_cell_holding_several_values_is_refused(cell: Any) -> None:
    """pandas keeps a list (or bytes, a dict, ...) in an object column: it is no id, not its text "['a']"."""
    truth = pd.DataFrame({"user": ["u1", "u2"], "item": pd.Series(["b", cell], dtype=object), "rating": [4.0, 5.0]})
    run = pd.DataFrame({"user": ["u1", "u2"], "item": ["b", "a"], "score": [1.0, 1.0]})
    with pytest.raises(DataError) as err:
        receval.evaluate(run, truth, ["precision@1"])
    assert err.value.column == "item" and err.value.message.startswith(
        f"row 2: the item column holds a {type(cell).__name__}"
    )
    fine = truth.assign(item=["b", "a"])
    assert receval.evaluate(run, fine, ["precision@1"]).summary["precision@1"] == 1.0


def test_an_unused_nested_column_is_left_alone(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "t.parquet", tags=pa.array([["x"], [], ["y"]]))
    assert read_table(path, "truth")["item"].astype(str).tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("missing", ["nan", "null"])
@pytest.mark.parametrize("column", ["user", "item"])
def test_a_missing_parquet_id_is_refused_everywhere(
    tmp_path: Path, column: str, missing: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A NaN float id (pandas writes int ids with a gap as floats) and a null id: row 2 named, every command."""
    gap = float("nan") if missing == "nan" else None
    values = pa.array([1.0, gap, 3.0], type=pa.float64(), from_pandas=missing == "nan")
    path = _parquet(tmp_path / "t.parquet", **{column: values})
    with pytest.raises(DataError) as err:
        read_table(path, "truth")
    assert err.value.column == column and "row 2" in err.value.message
    for line in _refused_by_every_reader(tmp_path, path, column, capsys):
        assert "row 2" in line and str(path) in line


@pytest.mark.parametrize("kind", ["plain", *COMPRESSIONS])
def test_an_empty_id_in_text_is_named_by_its_line(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    content = b"user,item,rating\nu1,a,4\nu2,b,3\n,c,5\n"  # line 4 has no user
    path = (
        _write(tmp_path / "t.csv", content)
        if kind == "plain"
        else _write(tmp_path / f"t.csv.{kind}", compress(content, kind))
    )
    run = _write(tmp_path / "run.csv", csv_text(RUN, "user,item,score"))
    out = tmp_path / "out"
    out.mkdir()
    for args in (
        ["evaluate", "--truth", path, "--recs", run, "--metrics", "ndcg@2"],
        ["data", "stats", path],
        ["split", path, "--out", out / "split"],
        ["recommend", "--train", path, "-a", "popularity", "-o", out / "recs.tsv"],
        ["predict", "--train", path, "--test", path, "-a", "global-mean", "-o", out / "pred.tsv"],
    ):
        refused(capsys, args, names=f"{path}, line 4, column user: empty user id")
    assert not list(out.iterdir())


def test_nan_in_a_float_id_column_is_not_the_id_nan(tmp_path: Path) -> None:
    """Arrow casts a float NaN to the text 'nan': the check runs before the ids become text."""
    path = _parquet(tmp_path / "t.parquet", user=pa.array([1.0, 2.0, float("nan")], from_pandas=False))
    with pytest.raises(DataError, match=r"row 3: empty user id"):
        read_table(path, "truth")
    ok = _parquet(tmp_path / "ok.parquet", user=pa.array([1.0, 2.0, 3.0]))
    assert read_table(ok, "truth")["user"].astype(str).tolist() == ["1", "2", "3"]


# ------------------------------------------------------------------ JSON
DUPLICATES = {
    "item": ('{"u1": {"a": 1, "b": 2, "a": 3}}', "user 'u1' lists item 'a' twice"),
    "user": ('{"u1": {"a": 1}, "u2": {"a": 2}, "u1": {"b": 3}}', "user 'u1' appears twice"),
    "deeper": ('{"u1": {"a": {"x": 1, "x": 2}}}', "key 'x' appears in one object twice"),
}


@pytest.mark.parametrize("case", sorted(DUPLICATES))
def test_a_repeated_json_key_is_refused_naming_it(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = DUPLICATES[case]
    path = _write(tmp_path / "run.json", text.encode())
    with pytest.raises(DataError, match=message):
        read_table(path, "recommendations")
    truth = _write(tmp_path / "t.csv", texts()["csv"][1])
    refused(capsys, ["evaluate", "--truth", truth, "--recs", path, "--metrics", "ndcg@2"], names=message)
    refused(capsys, ["evaluate", "--truth", path, "--recs", path, "--metrics", "ndcg@2"], names=message)


IDS = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(IDS, st.dictionaries(IDS, st.integers(0, 9), min_size=1, max_size=4), min_size=1, max_size=4),
    st.data(),
)
def test_json_keys_property(nested: dict[str, dict[str, int]], data: st.DataObject) -> None:
    """Unique keys parse to what ``json`` gives; the same text with one key written twice is refused, naming it."""
    import tempfile

    folder = Path(tempfile.mkdtemp())
    path = _write(folder / "run.json", json.dumps(nested).encode())
    table = read_table(path, "recommendations")
    pairs = sorted((u, i, float(s)) for u, row in nested.items() for i, s in row.items())
    assert sorted(zip(table["user"].astype(str), table["item"].astype(str), table["score"], strict=True)) == pairs
    user = data.draw(st.sampled_from(sorted(nested)))
    item = data.draw(st.sampled_from(sorted(nested[user])))
    row = ", ".join(f"{json.dumps(i)}: {s}" for i, s in nested[user].items())
    placeholder = json.dumps("<row written by hand>")  # longer than any id: found only where it was put
    text = json.dumps({**nested, user: "<row written by hand>"})
    text = text.replace(placeholder, "{" + row + f", {json.dumps(item)}: 1" + "}")
    _write(path, text.encode())
    with pytest.raises(DataError) as err:
        read_table(path, "recommendations")
    assert f"item {item!r} twice" in err.value.message and f"user {user!r}" in err.value.message


@pytest.mark.parametrize("opening", ["[", '{"a": '])
def test_json_nested_100000_deep_is_one_line(tmp_path: Path, opening: str, capsys: pytest.CaptureFixture[str]) -> None:
    closing = "]" if opening == "[" else "}"
    path = _write(tmp_path / "run.json", (opening * 100_000 + "1" + closing * 100_000).encode())
    with pytest.raises(DataError, match="nested deeper"):
        read_table(path, "recommendations")
    truth = _write(tmp_path / "t.csv", texts()["csv"][1])
    refused(capsys, ["evaluate", "--truth", truth, "--recs", path, "--metrics", "ndcg@2"], names="nested deeper")


def test_json_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.json", b'{"u1":\n {"a": 1,\n "\xff": 2}}')
    with pytest.raises(DataError) as err:
        read_table(path, "recommendations")
    assert err.value.line == 3 and "UTF-8" in err.value.message


# ------------------------------------------------------------------ metric strings
@pytest.mark.parametrize(
    ("metric", "parameter"),
    [
        ("precision@10(threshold=4,threshold=1)", "threshold"),
        ("ndcg@10(gain=exponential, gain=linear)", "gain"),
        ("precision@10(threshold=4,threshold=4)", "threshold"),  # the same value twice is still a slip
        ("recall@5(threshold=3,agg=macro,agg=micro)", "agg"),
    ],
)
def test_a_parameter_given_twice_is_refused(
    tmp_path: Path, metric: str, parameter: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(MetricError) as err:
        parse_metric(metric)
    assert f"parameter {parameter!r} is given twice" in str(err.value)
    truth = _write(tmp_path / "t.csv", texts()["csv"][1])
    run = _write(tmp_path / "run.csv", csv_text(RUN, "user,item,score"))
    refused(capsys, ["evaluate", "--truth", truth, "--recs", run, "--metrics", metric], names=f"'{parameter}'")


def test_a_parameter_given_twice_in_a_config_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CONFIG.replace('"ndcg@5"', '"precision@5(threshold=4,threshold=1)"')
    path = _write(tmp_path / "exp.toml", text.encode())
    refused(capsys, ["run", path, "--out", tmp_path / "out"], names=f"{path}, line 2: metric 'precision@5(threshold=4,")
    assert not (tmp_path / "out").exists()


def test_distinct_parameters_and_an_alias_preset_still_read() -> None:
    assert parse_metric("precision@10(threshold=4)").params["threshold"] == 4
    assert dict(parse_metric("nrbp@10(alpha=0.3,beta=0.7)").params) == {"threshold": None, "alpha": 0.3, "beta": 0.7}
    # hits@k presets agg=macro; the string may set agg once itself
    assert parse_metric("hits@5(agg=sum)").params["agg"] == "sum"


# ------------------------------------------------------------------ configuration files
CONFIG = 'name = "tiny"\nmetrics = ["ndcg@5"]\n[datasets.toy]\ngenerate = { n_users = 20, n_items = 15 }\n' \
         "[recommenders.random]\n"  # fmt: skip


@pytest.mark.parametrize(
    ("case", "content", "line"),
    [
        ("gzip", gzip.compress(CONFIG.encode()), 1),
        ("latin-1", CONFIG.replace("tiny", "tïny").encode("latin-1"), 1),
        ("binary", bytes(range(256)), 2),  # byte 10 is a newline, byte 128 the first that is not UTF-8
        ("third line", CONFIG.encode().replace(b"[datasets.toy]", b"[datasets.\xfe]"), 3),
    ],
)
def test_a_config_that_is_not_text_is_one_line(
    tmp_path: Path, case: str, content: bytes, line: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "exp.toml", content)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.line == line and err.value.path == str(path) and "not UTF-8 text" in err.value.message
    message = refused(capsys, ["run", path, "--out", tmp_path / "out"], names=f"{path}, line {line}")
    assert "TOML" in message
    assert not (tmp_path / "out").exists()


def test_a_config_with_a_byte_order_mark_reads_as_without(tmp_path: Path) -> None:
    plain = load_config(_write(tmp_path / "a.toml", CONFIG.encode()))
    marked = load_config(_write(tmp_path / "b.toml", b"\xef\xbb\xbf" + CONFIG.encode()))
    assert marked.metrics == plain.metrics == ("ndcg@5",) and marked.hash == plain.hash
