"""Every format name and alias is accepted by every reader and command, and the same file gives the same table.

One small data set is written in each format (csv, tsv, parquet, TREC qrels, ranx JSON,
RecBole, MovieLens 100K/1M/10M/latest, CM100k, Yelp's JSON lines); each name and alias of that format is
passed to :func:`receval.data.load`, :func:`receval.data.tables.read_table` and the
commands that read ratings (``data stats``, ``split``, ``recommend``, ``predict``,
``simulate``) or truth tables (``evaluate``, ``compare``), and every one must read the
same (user, item, rating) rows. Files without a format are detected alike, a headerless
``u1.base`` among them, and a header-only or empty file is one line naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import receval
from receval.cli import main
from receval.data import load
from receval.data.formats import ALIASES, FORMATS, YELP_BUSINESSES, YELP_REVIEWS, detect
from receval.data.registry import format_aliases
from receval.data.tables import KINDS, read_table
from receval.errors import DataError

ROWS = [(1, 10, 4), (1, 11, 2), (2, 10, 3), (2, 12, 1), (3, 11, 4), (3, 12, 3), (4, 10, 2), (4, 13, 4)]
EXPECTED = sorted((str(u), str(i), float(r)) for u, i, r in ROWS)


def _lines(sep: str, header: str | None = None, fourth: str = "") -> str:
    body = "".join(sep.join(map(str, row)) + (sep + fourth if fourth else "") + "\n" for row in ROWS)
    return (header + "\n" if header else "") + body


def write(folder: Path, fmt: str) -> Path:
    """The rows in ``fmt``: the file, or for a data set format its folder."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "csv": ("r.csv", _lines(",", "user,item,rating")),
        "tsv": ("r.tsv", _lines("\t", "user\titem\trating")),
        "trec": ("r.qrels", "".join(f"{u} 0 {i} {r}\n" for u, i, r in ROWS)),
        "ranx-json": ("r.json", json.dumps({str(u): {str(i): r for v, i, r in ROWS if v == u} for u, _, _ in ROWS})),
        "recbole": ("r.inter", _lines("\t", "user_id:token\titem_id:token\trating:float")),
        "movielens-100k": ("u1.base", _lines("\t", fourth="881250949")),
        "movielens-1m": ("ml/ratings.dat", _lines("::", fourth="978300760")),
        "movielens-10m": ("ml/ratings.dat", _lines("::", fourth="978300760")),
        "movielens-20m": ("ml/ratings.csv", _lines(",", "userId,movieId,rating,timestamp", "964982703")),
        "movielens-25m": ("ml/ratings.csv", _lines(",", "userId,movieId,rating,timestamp", "964982703")),
        "movielens-latest": ("ml/ratings.csv", _lines(",", "userId,movieId,rating,timestamp", "964982703")),
        "cm100k": ("cm/ratings.txt", _lines("\t", fourth="1")),
    }
    if fmt == "parquet":
        path = folder / "r.parquet"
        users, items, ratings = zip(*ROWS, strict=True)
        pq.write_table(pa.table({"user": users, "item": items, "rating": [float(r) for r in ratings]}), path)
        return path
    if fmt == "yelp":  # ids are JSON text, stars numbers; each rated business listed once in the business file
        yelp = folder / "yelp"
        yelp.mkdir()
        reviews = [{"review_id": f"r{n}", "user_id": str(u), "business_id": str(i), "stars": r, "text": "ok",
                    "date": f"2018-01-{n + 1:02d} 12:00:00"} for n, (u, i, r) in enumerate(ROWS)]  # fmt: skip
        (yelp / YELP_REVIEWS).write_text("".join(json.dumps(r) + "\n" for r in reviews))
        businesses = sorted({str(i) for _, i, _ in ROWS})
        (yelp / YELP_BUSINESSES).write_text("".join(json.dumps({"business_id": b, "categories": "Food"}) + "\n"
                                                    for b in businesses))  # fmt: skip
        return yelp
    name, text = files[fmt]
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path.parent if "/" in name else path


def names_of(fmt: str) -> list[str]:
    """The format's name, its aliases and the known data sets' names for it, with a case and '_' variant."""
    names = [fmt, *(a for a, f in ALIASES.items() if f == fmt), *(d for d, f in format_aliases().items() if f == fmt)]
    return [*names, fmt.upper().replace("-", "_")]


CASES = [(fmt, name) for fmt in FORMATS for name in names_of(fmt)]


def _rows_of_table(table) -> list[tuple[str, str, float]]:
    return sorted(zip(map(str, table["user"].to_pylist()), map(str, table["item"].to_pylist()),
                      map(float, table["rating"].to_pylist()), strict=True))  # fmt: skip


def _rows_of_data(data) -> list[tuple[str, str, float]]:
    return sorted(
        (str(data.user_ids[u]), str(data.item_ids[i]), float(r))
        for u, i, r in zip(data.users, data.items, data.ratings, strict=True)
    )


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_alias_names_a_format():
    assert set(ALIASES.values()) <= set(FORMATS)
    assert {"recbole", "trec", "ranx-json", "movielens-100k", "tsv"} <= {f for _, f in ((n, f) for f, n in CASES)}
    assert {"ml100k", "ml-100k", "tab", "json", "qrels"} <= {n for _, n in CASES}


@pytest.mark.parametrize(("fmt", "name"), CASES)
def test_python_readers_accept_every_name_and_agree(tmp_path, fmt, name):
    path = write(tmp_path, fmt)
    assert _rows_of_data(load(path, name)) == EXPECTED
    for kind in ("truth", "train"):
        assert _rows_of_table(read_table(path, kind, format=name, arrow=True)) == EXPECTED


@pytest.mark.parametrize(("fmt", "name"), CASES)
def test_commands_accept_every_name(tmp_path, capsys, fmt, name):
    path = write(tmp_path / "data", fmt)
    code, out, err = _run(capsys, "data", "stats", path, "--format", name, "--json")
    assert code == 0, err
    assert json.loads(out)["n_ratings"] == len(ROWS)
    recs = tmp_path / "recs.tsv"
    recs.write_text("user\titem\tscore\n1\t10\t0.9\n2\t11\t0.8\n3\t11\t0.7\n4\t12\t0.6\n")
    code, out, err = _run(capsys, "evaluate", "--truth", path, "--truth-format", name, "--recs", recs,
                          "--metrics", "precision@1", "--threshold", "3", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["precision@1"] == pytest.approx(0.5)  # users 1 and 3 rank an item rated >= 3 first


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_rating_commands_accept_every_format(tmp_path, capsys, fmt):
    path = write(tmp_path / "data", fmt)
    code, _, err = _run(capsys, "split", path, "--format", fmt, "--method", "holdout", "--out", tmp_path / "s")
    assert code == 0, err
    train = (tmp_path / "s" / "train.tsv").read_text().splitlines()[1:]
    test = (tmp_path / "s" / "test.tsv").read_text().splitlines()[1:]
    assert sorted(tuple(line.split("\t")[:2]) for line in train + test) == [(u, i) for u, i, _ in EXPECTED]
    code, _, err = _run(capsys, "recommend", "--train", path, "--format", fmt, "--algorithm", "popularity",
                        "--k", "1", "--out", tmp_path / "recs.tsv")  # fmt: skip
    assert code == 0, err
    assert len((tmp_path / "recs.tsv").read_text().splitlines()) == 1 + 4  # one list per user
    code, _, err = _run(capsys, "predict", "--train", path, "--test", path, "--format", fmt, "--algorithm",
                        "global-mean", "--out", tmp_path / "pred.tsv")  # fmt: skip
    assert code == 0, err
    predicted = [line.split("\t") for line in (tmp_path / "pred.tsv").read_text().splitlines()[1:]]
    assert sorted((u, i, float(r)) for u, i, r, _ in predicted) == EXPECTED
    mean = sum(r for _, _, r in ROWS) / len(ROWS)
    assert all(float(p) == pytest.approx(mean) for *_, p in predicted)
    code, _, err = _run(capsys, "simulate", "--data", path, "--format", fmt, "--rounds", "2", "--algorithms",
                        "random", "--json")  # fmt: skip
    assert code == 0, err
    recs = tmp_path / "run.tsv"
    recs.write_text("user\titem\tscore\n1\t10\t0.9\n2\t11\t0.8\n")
    code, _, err = _run(capsys, "compare", f"a={recs}", f"b={recs}", "--truth", path, "--truth-format", fmt,
                          "--metrics", "precision@1", "--json")  # fmt: skip
    assert code == 0, err


DETECTABLE = ["csv", "tsv", "parquet", "trec", "ranx-json", "recbole", "movielens-100k"]


@pytest.mark.parametrize("fmt", DETECTABLE)
def test_detected_files_read_the_same_everywhere(tmp_path, capsys, fmt):
    path = write(tmp_path / "data", fmt)
    assert detect(path)[0] == fmt
    assert _rows_of_data(load(path)) == EXPECTED
    assert _rows_of_table(read_table(path, "truth", arrow=True)) == EXPECTED
    code, out, err = _run(capsys, "data", "stats", path, "--json")
    assert code == 0, err
    recs = tmp_path / "recs.tsv"
    recs.write_text("user\titem\tscore\n1\t10\t0.9\n2\t11\t0.8\n3\t11\t0.7\n4\t12\t0.6\n")
    result = receval.evaluate(str(recs), path, ["precision@1"], threshold=3)  # paths for the run and the truth
    assert result.summary["precision@1"] == pytest.approx(0.5)
    code, out, err = _run(capsys, "evaluate", "--truth", path, "--recs", recs, "--metrics", "precision@1",
                          "--threshold", "3", "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["precision@1"] == pytest.approx(result.summary["precision@1"])


def test_headerless_u1_base_is_detected_by_every_command(tmp_path, capsys):
    path = write(tmp_path, "movielens-100k")  # u1.base: no extension a format is named by
    assert detect(path) == ("movielens-100k", False)
    code, _, err = _run(capsys, "recommend", "--train", path, "--algorithm", "popularity", "--k", "1",
                        "--out", tmp_path / "recs.tsv")  # fmt: skip
    assert code == 0, err
    code, _, err = _run(capsys, "predict", "--train", path, "--test", path, "--algorithm", "global-mean",
                        "--out", tmp_path / "pred.tsv")  # fmt: skip
    assert code == 0, err
    assert len((tmp_path / "pred.tsv").read_text().splitlines()) == 1 + len(ROWS)


# ------------------------------------------------------------------ empty and header-only files
EMPTY = {  # a file of each format with no rows: a header alone, or nothing
    "csv": ("e.csv", "user,item,rating\n"),
    "tsv": ("e.tsv", "user\titem\trating\n"),
    "recbole": ("e.inter", "user_id:token\titem_id:token\trating:float\n"),
    "movielens-latest": ("ratings.csv", "userId,movieId,rating,timestamp\n"),
    "trec": ("e.trec", ""),
    "ranx-json": ("e.json", "{}"),
    "movielens-100k": ("u.data", ""),
    "movielens-1m": ("ratings.dat", ""),
    "cm100k": ("ratings.txt", ""),
    "empty csv": ("e2.csv", ""),
}


def _empty(folder: Path, fmt: str) -> tuple[Path, str]:
    if fmt == "parquet":
        path = folder / "e.parquet"
        pq.write_table(pa.table({"user": pa.array([], pa.string()), "item": pa.array([], pa.string()),
                                 "rating": pa.array([], pa.float64())}), path)  # fmt: skip
        return path, "parquet"
    name, text = EMPTY[fmt]
    path = folder / name
    path.write_text(text)
    return path, fmt.split()[-1]


@pytest.mark.parametrize("fmt", [*EMPTY, "parquet"])
@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_table_is_one_line_naming_the_file(tmp_path, fmt, kind):
    path, name = _empty(tmp_path, fmt)
    with pytest.raises(DataError) as caught:
        read_table(path, kind, format=name)
    message = str(caught.value)
    assert message.startswith(str(path)) and "\n" not in message
    assert "no rows" in message or "empty" in message


@pytest.mark.parametrize("fmt", [*EMPTY, "parquet"])
def test_empty_files_exit_2_in_the_commands(tmp_path, capsys, fmt):
    path, name = _empty(tmp_path, fmt)
    with pytest.raises(DataError, match=r"no rows|empty"):
        load(path, name)
    recs = tmp_path / "recs.tsv"
    recs.write_text("user\titem\tscore\n1\t10\t0.9\n")
    for args in (["data", "stats", path, "--format", name],
                 ["evaluate", "--truth", path, "--truth-format", name, "--recs", recs, "--metrics", "mrr"],
                 ["evaluate", "--truth", recs, "--recs", path, "--recs-format", name, "--metrics", "mrr"]):  # fmt: skip
        code, out, err = _run(capsys, *args)
        assert code == 2 and err.startswith(f"error: {path}") and "Traceback" not in err + out, (args, err)


def test_an_unknown_kind_is_an_error_not_a_label(tmp_path):
    path = write(tmp_path, "csv")
    with pytest.raises(DataError, match=r"unknown table kind 'recs'; use one of: truth, train, recommendations"):
        read_table(path, "recs")
    got = read_table(path, "truth", label="held-out ratings", arrow=True)  # a label changes only the messages
    assert got.equals(read_table(path, "truth", arrow=True))
