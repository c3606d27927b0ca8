"""``receval data stats|fetch|list``: output, exit status 2 with a message (never a traceback)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from receval.cli import main
from receval.cli.common import load_data, validate_format
from receval.data.registry import DATASETS, KnownDataset, fetch, safe_extract
from receval.errors import DataError
from test_loaders import write_cm100k_release, write_ml100k


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_json(tmp_path, capsys):
    folder = write_ml100k(tmp_path / "ml")
    code, out, err = run(capsys, "data", "stats", folder, "--format", "movielens-100k", "--json")
    assert code == 0, err
    stats = json.loads(out)
    for key in ("n_users", "n_items", "n_ratings", "density", "rating_counts", "gini_item_popularity"):
        assert key in stats
    assert (stats["n_users"], stats["n_items"], stats["n_ratings"], stats["n_duplicates"]) == (2, 2, 4, 1)
    assert "n_familiar" not in stats


def test_stats_table_with_familiar_column(tmp_path, capsys):
    folder = write_cm100k_release(tmp_path / "cm")
    code, out, _ = run(capsys, "data", "stats", folder, "-f", "cm100k")
    assert code == 0
    assert "familiar" in out and "MAR / MNAR" in out and "ratings per value" in out
    code, out, _ = run(capsys, "data", "stats", folder, "-f", "cm100k", "--json")
    assert json.loads(out)["n_familiar"] == 2
    code, out, _ = run(capsys, "data", "stats", folder, "-f", "cm100k", "--json", "--familiar-only")
    assert json.loads(out)["n_ratings"] == 2


def test_stats_generic_options(tmp_path, capsys):
    path = tmp_path / "r.txt"
    path.write_text("uid|iid|stars\n1|a|2.5\n2|a|4.75\n")
    code, out, err = run(
        capsys, "data", "stats", path, "-f", "csv", "--sep", "|", "--user", "uid", "--item", "iid",
        "--rating", "stars", "--scale", "0..5", "--json",
    )  # fmt: skip
    assert code == 0, err
    stats = json.loads(out)
    assert stats["n_ratings"] == 2 and stats["scale"] == {"low": 0.0, "high": 5.0, "step": None}


@pytest.mark.parametrize(
    ("content", "options", "expected"),
    [
        ("user,item,rating\na,x,4\nb,x,abc\n", [], "line 3, column rating: rating 'abc' is not a number"),
        ("user,item,rating\na,x,4\nb,x,9\n", ["--scale", "1..5"], "line 3, column rating: rating 9 is outside"),
        ("user,item,rating\na,x,4\nb,x\n", [], "line 3: has 2 fields, expected 3"),
        ("", [], "line 1: the file is empty"),
        ("u,i,r\na,x,4\n", [], "line 1, column user: missing required column 'user'"),
    ],
)
def test_stats_bad_input_exits_2_with_file_and_line(tmp_path, capsys, content, options, expected):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    code, out, err = run(capsys, "data", "stats", path, "--format", "csv", *options)
    assert code == 2
    assert err.startswith(f"error: {path}, ") and expected in err
    assert "Traceback" not in err + out


def test_stats_unknown_format_and_missing_path(tmp_path, capsys):
    code, _, err = run(capsys, "data", "stats", tmp_path, "--format", "excel")
    assert code == 2 and "unknown format 'excel' for --format; use one of: csv, tsv" in err and "cm100k" in err
    code, _, err = run(capsys, "data", "stats", tmp_path / "nope", "--format", "movielens-1m")
    assert code == 2 and "no such file or folder" in err and "Traceback" not in err


def test_common_helpers(tmp_path):
    assert validate_format("TSV") == "tsv"
    with pytest.raises(DataError, match="use one of"):
        validate_format("xlsx")
    folder = write_ml100k(tmp_path / "ml")
    assert load_data(folder, "movielens-100k", user=None, scale=None).n_ratings == 4


def test_real_data_stats_json(ml100k_dir, capsys):
    code, out, _ = run(capsys, "data", "stats", ml100k_dir, "--format", "movielens-100k", "--json")
    stats = json.loads(out)
    assert code == 0 and (stats["n_users"], stats["n_items"], stats["n_ratings"]) == (943, 1682, 100_000)


def test_real_cm100k_stats_json(cm100k_dir, capsys):
    for folder in (cm100k_dir, cm100k_dir / "release"):
        code, out, _ = run(capsys, "data", "stats", folder, "--format", "cm100k", "--json")
        stats = json.loads(out)
        assert code == 0
        assert (stats["n_users"], stats["n_items"], stats["n_ratings"], stats["n_familiar"]) == (
            1054, 1084, 103_584, 11_594,
        )  # fmt: skip


# ---------------------------------------------------------------- registry / fetch


def make_zip(path: Path, entries: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in entries.items():
            zf.writestr(name, text)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def toy_dataset(tmp_path, monkeypatch):
    archive = tmp_path / "toy.zip"
    digest = make_zip(archive, {"toy/u.data": "1\t1\t5\t1\n2\t1\t3\t2\n", "toy/u.user": "1|2|M|x|0\n"})
    entry = KnownDataset("toy", "movielens-100k", f"file://{archive}", digest, None, "toy", "a toy archive")
    monkeypatch.setitem(DATASETS, "toy", entry)
    return entry


def test_fetch_verifies_unpacks_and_caches(tmp_path, toy_dataset, capsys):
    cache = tmp_path / "cache"
    code, out, err = run(capsys, "data", "fetch", "toy", "--cache", cache)
    assert code == 0, err
    folder = Path(out.split("\t")[0])
    assert folder == cache / "toy" / "toy" and (folder / "u.data").is_file()
    assert "--format movielens-100k" in out
    code, out, _ = run(capsys, "data", "stats", folder, "-f", "movielens-100k", "--json")
    assert json.loads(out)["n_ratings"] == 2
    # a second fetch uses the cache (the source may disappear)
    Path(toy_dataset.url.removeprefix("file://")).unlink()
    assert fetch("toy", cache) == folder
    # names are spelled freely, and a data set's name is a format alias (ml-100k = movielens-100k)
    code, out, _ = run(capsys, "data", "fetch", "TOY", "--cache", cache)
    assert code == 0 and Path(out.split("\t")[0]) == folder
    code, out, _ = run(capsys, "data", "stats", folder, "-f", "ml-100k", "--json")
    assert code == 0 and json.loads(out)["n_ratings"] == 2


def test_fetch_checksum_mismatch_is_an_error(tmp_path, toy_dataset, capsys):
    code, _, err = run(capsys, "data", "fetch", "toy", "--cache", tmp_path / "c", "--sha256", "0" * 64)
    assert code == 2 and "failed verification" in err and "Traceback" not in err
    assert not (tmp_path / "c" / "toy").exists()


def test_fetch_refuses_without_checksum_and_unknown_names(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(DATASETS, "nohash", KnownDataset("nohash", "csv", "file:///x.zip", None, None, "", "d"))
    code, _, err = run(capsys, "data", "fetch", "nohash", "--cache", tmp_path)
    assert code == 2 and "no known SHA-256" in err and "--sha256" in err
    code, _, err = run(capsys, "data", "fetch", "ml-1b", "--cache", tmp_path)
    assert code == 2 and "unknown data set 'ml-1b'" in err
    with pytest.raises(DataError, match="not a SHA-256"):
        fetch("nohash", tmp_path, sha256="abc")
    assert not any(tmp_path.iterdir())  # nothing downloaded


def test_fetch_checks_the_publisher_md5(tmp_path, toy_dataset, monkeypatch):
    monkeypatch.setitem(DATASETS, "toy", KnownDataset(**{**toy_dataset.__dict__, "md5": "0" * 32}))
    with pytest.raises(DataError, match="differs from the publisher's"):
        fetch("toy", tmp_path / "c")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("../evil.txt", "climbs out"),
        ("toy/../../evil.txt", "climbs out"),
        ("/tmp/evil.txt", "absolute path"),
        ("..\\evil.txt", "climbs out"),
    ],
)
def test_safe_extract_refuses_escaping_entries(tmp_path, entry, problem):
    archive = tmp_path / "evil.zip"
    make_zip(archive, {"toy/ok.txt": "fine", entry: "owned"})
    target = tmp_path / "out" / "target"
    target.mkdir(parents=True)
    (target / "keep.txt").write_text("mine")
    with pytest.raises(DataError, match=problem):
        safe_extract(archive, target)
    assert (target / "keep.txt").read_text() == "mine"  # nothing overwritten, nothing added
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]
    assert not (tmp_path / "out" / "evil.txt").exists() and not (tmp_path / "evil.txt").exists()


def test_safe_extract_refuses_symlinks_and_repeated_names(tmp_path):
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        info = zipfile.ZipInfo("toy/link")
        info.external_attr = (0o120777 << 16) | 0
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(DataError, match="symbolic link"):
        safe_extract(archive, tmp_path / "t")
    twice = tmp_path / "twice.zip"
    with zipfile.ZipFile(twice, "w") as zf:
        zf.writestr("a.txt", "1")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("a.txt", "2")
    with pytest.raises(DataError, match="appears twice"):
        safe_extract(twice, tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_fetch_through_pooch_refuses_a_malicious_archive(tmp_path, monkeypatch):
    archive = tmp_path / "evil.zip"
    digest = make_zip(archive, {"ok/u.data": "1\t1\t5\t1\n", "../../escaped.txt": "x"})
    monkeypatch.setitem(
        DATASETS, "evil", KnownDataset("evil", "movielens-100k", f"file://{archive}", digest, None, "ok", "evil")
    )
    with pytest.raises(DataError, match="climbs out"):
        fetch("evil", tmp_path / "cache")
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "cache" / "evil").exists()


def test_safe_extract_replaces_an_old_copy_whole(tmp_path):
    archive = tmp_path / "a.zip"
    make_zip(archive, {"d/new.txt": "new"})
    target = tmp_path / "t"
    target.mkdir()
    (target / "stale.txt").write_text("old")
    safe_extract(archive, target)
    assert sorted(p.name for p in target.rglob("*")) == ["d", "new.txt"]


def test_list(capsys):
    code, out, _ = run(capsys, "data", "list")
    assert code == 0
    for name in ("ml-100k", "ml-25m", "ml-latest-small", "cm100k"):
        assert name in out


def test_registry_entries_are_well_formed():
    for entry in DATASETS.values():
        assert entry.format in validate_format.__globals__["FORMATS"]
        if entry.sha256 is not None:
            assert len(entry.sha256) == 64 and int(entry.sha256, 16) >= 0
        if entry.md5 is not None:
            assert len(entry.md5) == 32
        assert entry.url is None or entry.url.startswith("https://")
