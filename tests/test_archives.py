"""safe_extract and fetch: normalised names, archive bombs, tar archives, the manifest of an extraction."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from receval.data.registry import DATASETS, KnownDataset, extraction_problems, fetch, manifest_path, safe_extract
from receval.errors import DataError


def _zip(path: Path, entries: list[tuple[str, bytes]], compression: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path


def _tar(path: Path, entries: list[tuple[str, bytes | None, bytes]]) -> Path:
    """(name, data, type) entries; ``data`` None with type SYMTYPE/LNKTYPE/DIRTYPE entries."""
    with tarfile.open(path, "w:gz") as tf:
        for name, data, kind in entries:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = "/etc/passwd"
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([("a.txt", b"1"), ("./a.txt", b"2")], r"'\./a\.txt' appears twice \(as 'a\.txt'\)"),
        ([("d/a.txt", b"1"), ("d//a.txt", b"2")], r"'d//a\.txt' appears twice \(as 'd/a\.txt'\)"),
        ([("d/./a.txt", b"1"), ("d/a.txt", b"2")], "appears twice"),
        ([("A.txt", b"1"), ("a.txt", b"2")], r"'a\.txt' appears twice \(as 'A\.txt'\)"),
        ([("a", b"1"), ("a/b", b"2")], r"entry 'a' is a file and also a folder of 'a/b'"),
        ([("a/b", b"2"), ("a", b"1")], r"entry 'a' is a file and also a folder of 'a/b'"),
        ([("x/a", b"1"), ("x/a/", b"")], "appears twice"),
    ],
)
def test_names_that_clash_once_normalised_are_refused_before_writing(tmp_path, entries, message):
    archive = _zip(tmp_path / "clash.zip", entries)
    target = tmp_path / "out"
    with pytest.raises(DataError, match=message):
        safe_extract(archive, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clash.zip"]  # nothing written, no staging left


def test_tar_archives_are_checked_the_same_way(tmp_path):
    good = _tar(tmp_path / "good.tar.gz", [("d", None, tarfile.DIRTYPE), ("d/u.data", b"1\t1\t5\n", tarfile.REGTYPE)])
    target = safe_extract(good, tmp_path / "good")
    assert (target / "d" / "u.data").read_bytes() == b"1\t1\t5\n"
    assert extraction_problems(target) == []
    cases = [
        ([("a.txt", b"1", tarfile.REGTYPE), ("./a.txt", b"2", tarfile.REGTYPE)], "appears twice"),
        ([("a", b"1", tarfile.REGTYPE), ("a/b", b"2", tarfile.REGTYPE)], "is a file and also a folder"),
        ([("link", None, tarfile.SYMTYPE)], "'link' is a symbolic link"),
        ([("hard", None, tarfile.LNKTYPE)], "'hard' is a hard link"),
        ([("fifo", None, tarfile.FIFOTYPE)], "special file"),
        ([("../up.txt", b"x", tarfile.REGTYPE)], "climbs out"),
    ]
    for n, (entries, message) in enumerate(cases):
        with pytest.raises(DataError, match=message):
            safe_extract(_tar(tmp_path / f"bad{n}.tar.gz", entries), tmp_path / f"bad{n}")
        assert not (tmp_path / f"bad{n}").exists()
    assert not (tmp_path / "up.txt").exists()
    (tmp_path / "junk.bin").write_bytes(b"neither zip nor tar")
    with pytest.raises(DataError, match="not a readable zip or tar archive"):
        safe_extract(tmp_path / "junk.bin", tmp_path / "junk")


def test_excessive_expansion_is_refused(tmp_path):
    # 50 MB of zeros deflate to about 50 KB: a thousandfold expansion
    bomb = _zip(tmp_path / "bomb.zip", [("zeros.csv", bytes(50_000_000))], zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 100_000
    with pytest.raises(DataError, match=r"unpack to 50,000,000 bytes, .* times its own .*archive bomb"):
        safe_extract(bomb, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    # the total is capped too, whatever the ratio
    plain = _zip(tmp_path / "plain.zip", [("a.csv", b"1,2,3\n" * 100)])
    with pytest.raises(DataError, match=r"limits: 100 bytes"):
        safe_extract(plain, tmp_path / "out", max_bytes=100)
    # limits are parameters for an archive one trusts
    assert (safe_extract(bomb, tmp_path / "out", max_ratio=2_000) / "zeros.csv").stat().st_size == 50_000_000


def test_the_manifest_records_every_file_and_finds_damage(tmp_path):
    files = {"d/a.csv": b"1,2\n", "d/e/b.txt": b"hello", "top.txt": b""}
    archive = _zip(tmp_path / "x.zip", list(files.items()))
    target = safe_extract(archive, tmp_path / "x")
    record = json.loads(manifest_path(target).read_text())
    assert manifest_path(target) == tmp_path / "x.manifest.json"
    assert record["archive_sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert record["files"] == {
        name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()} for name, data in files.items()
    }
    assert extraction_problems(target, record["archive_sha256"]) == []
    other = extraction_problems(target, "0" * 64)
    assert other == [f"unpacked from another archive (SHA-256 {record['archive_sha256']})"]
    (target / "d" / "a.csv").write_bytes(b"1,3\n")  # same size, other bytes
    (target / "d" / "e" / "b.txt").write_bytes(b"hell")
    (target / "top.txt").unlink()
    (target / "extra.csv").write_bytes(b"x")
    assert extraction_problems(target) == [
        "d/a.csv was altered (SHA-256 differs)",
        "d/e/b.txt has 4 bytes, 5 were unpacked",
        "top.txt is missing",
        "extra.csv was not in the archive",
    ]
    manifest_path(target).unlink()
    assert extraction_problems(target)[0].startswith("no readable manifest")


def test_fetch_unpacks_again_when_the_extraction_was_damaged(tmp_path, monkeypatch):
    archive = _zip(tmp_path / "toy.zip", [("toy/u.data", b"1\t1\t5\t1\n2\t1\t3\t2\n"), ("toy/u.user", b"1|2|M|x|0\n")])
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    entry = KnownDataset("toy", "movielens-100k", f"file://{archive}", digest, None, "toy", "a toy archive")
    monkeypatch.setitem(DATASETS, "toy", entry)
    cache = tmp_path / "cache"
    folder = fetch("toy", cache)
    data = folder / "u.data"
    assert extraction_problems(cache / "toy", digest) == []
    inode = data.stat().st_ino
    assert fetch("toy", cache) == folder and data.stat().st_ino == inode  # intact: not unpacked again
    data.write_bytes(b"1\t1\t5\t1\n")  # a damaged (truncated) extraction
    assert fetch("toy", cache) == folder
    assert data.read_bytes() == b"1\t1\t5\t1\n2\t1\t3\t2\n"
    assert extraction_problems(cache / "toy", digest) == []
    # an extraction from before manifests (a stamp file only) is unpacked again and verified
    manifest_path(cache / "toy").unlink()
    (cache / "toy" / ".receval-sha256").write_text(digest + "\n")
    fetch("toy", cache)
    assert not (cache / "toy" / ".receval-sha256").exists() and extraction_problems(cache / "toy", digest) == []
