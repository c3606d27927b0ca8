"""Known data sets: where to download them, their checksums, and :func:`fetch`.

:func:`fetch` downloads with :mod:`pooch` into a cache folder, verifies the SHA-256
(a mismatch is an error, nothing is extracted) and unpacks zip archives with
:func:`safe_extract`, which refuses any entry that would land outside the target
folder (absolute paths, ``..``, symbolic links) instead of silently rewriting it.
A data set whose checksum is not known is not downloaded unless the caller supplies
one (``sha256=`` / ``--sha256``), or the user downloads it by hand and gives
:func:`receval.data.load` the local folder. Loading never needs the network.

Provenance of the checksums (none could be verified by downloading from here):
the MovieLens archive SHA-256 values are those published by many independent
projects for the GroupLens files, each agreeing with GroupLens' own MD5 sidecar
(``<archive>.zip.md5``) which :func:`fetch` checks as well; CM100k's is the SHA-256 of
the authors' ``data.txt`` as copied for this project. ``ml-latest`` is rebuilt by
GroupLens from time to time, so it has no fixed checksum.

Examples
--------
>>> sorted(DATASETS)[:3]
['cm100k', 'ml-100k', 'ml-10m']
>>> DATASETS["ml-100k"].format
'movielens-100k'
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from receval.errors import DataError

__all__ = ["DATASETS", "KnownDataset", "dataset_name", "default_cache", "fetch", "format_aliases", "safe_extract"]

_GROUPLENS = "https://files.grouplens.org/datasets/movielens"


@dataclass(frozen=True)
class KnownDataset:
    """A downloadable data set.

    Attributes
    ----------
    name : registry name (``receval data fetch NAME``)
    format : the :func:`receval.data.load` format that reads it
    url : download address, or None when it must be downloaded by hand
    sha256 : checksum of the downloaded file, or None when unknown
    md5 : the publisher's MD5 of the downloaded file, checked too when given
    folder : sub-folder of the unpacked archive holding the data (``""``: the top)
    description, note : what it is; provenance or how to get it by hand
    """

    name: str
    format: str
    url: str | None
    sha256: str | None
    md5: str | None
    folder: str
    description: str
    note: str = ""

    @property
    def is_archive(self) -> bool:
        return self.url is not None and self.url.endswith(".zip")


DATASETS: dict[str, KnownDataset] = {
    d.name: d
    for d in (
        KnownDataset(
            "ml-100k",
            "movielens-100k",
            f"{_GROUPLENS}/ml-100k.zip",
            "50d2a982c66986937beb9ffb3aa76efe955bf3d5c6b761f4e3a7cd717c6a3229",
            "0e33842e24a9c977be4e0107933c0723",
            "ml-100k",
            "MovieLens 100K: 943 users, 1,682 items, 100,000 ratings 1-5, 19 genres, demographics",
        ),
        KnownDataset(
            "ml-1m",
            "movielens-1m",
            f"{_GROUPLENS}/ml-1m.zip",
            "a6898adb50b9ca05aa231689da44c217cb524e7ebd39d264c56e2832f2c54e20",
            "c4d9eecfca2ab87c1945afe126590906",
            "ml-1m",
            "MovieLens 1M: 6,040 users, 3,706 rated items, 1,000,209 ratings 1-5, genres, demographics",
        ),
        KnownDataset(
            "ml-10m",
            "movielens-10m",
            f"{_GROUPLENS}/ml-10m.zip",
            "813c411ccb6122564edfe752e7f80c4dcc5aa25fa94c93622f6877a7ba252862",
            "ce571fd55effeba0271552578f2648bd",
            "ml-10M100K",
            "MovieLens 10M: 69,878 users, 10,677 items, 10,000,054 ratings 0.5-5, genres",
        ),
        KnownDataset(
            "ml-20m",
            "movielens-20m",
            f"{_GROUPLENS}/ml-20m.zip",
            "96f243c338a8665f6bcc89c53edf6ee39162a846940de6b7c8c48aeada765ff3",
            "cd245b17a1ae2cc31bb14903e1204af3",
            "ml-20m",
            "MovieLens 20M: 138,493 users, 26,744 items, 20,000,263 ratings 0.5-5, genres",
        ),
        KnownDataset(
            "ml-25m",
            "movielens-25m",
            f"{_GROUPLENS}/ml-25m.zip",
            "8b21cfb7eb1706b4ec0aac894368d90acf26ebdfb6aced3ebd4ad5bd1eb9c6aa",
            "6b51fb2759a8657d3bfcbfc42b592ada",
            "ml-25m",
            "MovieLens 25M: 162,541 users, 59,047 items, 25,000,095 ratings 0.5-5, genres",
        ),
        KnownDataset(
            "ml-latest-small",
            "movielens-latest",
            f"{_GROUPLENS}/ml-latest-small.zip",
            "696d65a3dfceac7c45750ad32df2c259311949efec81f0f144fdfb91ebc9e436",
            None,
            "ml-latest-small",
            "MovieLens latest-small (Sept 2018 build): 610 users, 9,724 rated items, 100,836 ratings 0.5-5",
        ),
        KnownDataset(
            "ml-latest",
            "movielens-latest",
            f"{_GROUPLENS}/ml-latest.zip",
            None,
            None,
            "ml-latest",
            "MovieLens latest (full): rebuilt by GroupLens from time to time",
            "no fixed checksum: pass --sha256 of the build you expect, or download it by hand",
        ),
        KnownDataset(
            "cm100k",
            "cm100k",
            "https://raw.githubusercontent.com/ir-uam/SIGIR2018/01d4c08e79772237ceac99231bfce314bbea6b77/"
            "datasets/cm100k/data.txt",
            "d8d5f446a9ec6df158bf172426088e609a5c3f63eb87df7b805dd19b7dfa4402",
            None,
            "",
            "CM100k (Cañamares & Castells, SIGIR 2018): 1,054 users, 1,084 items, 103,584 ratings 1-4, 11,594 familiar",
            "the authors' data.txt from github.com/ir-uam/SIGIR2018 (datasets/cm100k); the original release "
            "(ratings.txt, items.txt) is distributed by the authors' group and loads the same way by hand",
        ),
    )
}
"""Registry name -> :class:`KnownDataset`."""


def dataset_name(name: str) -> str:
    """The registry name of a data set given by its name or its format (``data fetch`` and ``--format`` share them).

    >>> dataset_name("MovieLens-100K"), dataset_name("ml_1m")
    ('ml-100k', 'ml-1m')
    >>> dataset_name("movielens-latest")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: format 'movielens-latest' names several data sets (ml-latest-small, ml-latest); give one
    """
    key = str(name).strip().lower().replace("_", "-")
    if key in DATASETS:
        return key
    by_format = [d.name for d in DATASETS.values() if d.format == key]
    if len(by_format) == 1:
        return by_format[0]
    if by_format:
        raise DataError(f"format {name!r} names several data sets ({', '.join(by_format)}); give one")
    raise DataError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}")


def format_aliases() -> dict[str, str]:
    """Data set name -> its :func:`receval.data.load` format (``ml-100k`` -> ``movielens-100k``)."""
    return {d.name: d.format for d in DATASETS.values()}


def default_cache() -> Path:
    """The download cache: ``$RECEVAL_DATA`` if set, else the user cache folder (``pooch.os_cache``)."""
    env = os.environ.get("RECEVAL_DATA")
    if env:
        return Path(env)
    import pooch

    return Path(pooch.os_cache("receval"))


def fetch(name: str, cache_dir: str | Path | None = None, *, sha256: str | None = None) -> Path:
    """Download (once), verify and unpack a known data set; returns the folder to give :func:`load`.

    Parameters
    ----------
    name
        A key of :data:`DATASETS`.
    cache_dir
        Where downloads and unpacked folders live (default :func:`default_cache`).
    sha256
        The expected SHA-256 of the download, overriding (or supplying) the registry's.

    Raises
    ------
    DataError
        Unknown name, unknown checksum, checksum mismatch, an archive entry that
        escapes the target folder, or a failed download.
    """
    import pooch

    name = dataset_name(name)
    entry = DATASETS[name]
    if entry.url is None:
        raise DataError(f"{name} must be downloaded by hand: {entry.note}")
    expected = (sha256 or entry.sha256 or "").lower().removeprefix("sha256:") or None
    if expected is None:
        raise DataError(
            f"no known SHA-256 for {name} ({entry.note or 'not recorded'}); supply the one you expect "
            f"with sha256= (--sha256 on the command line), or download {entry.url} by hand and load the folder"
        )
    if len(expected) != 64 or any(ch not in "0123456789abcdef" for ch in expected):
        raise DataError(f"{sha256!r} is not a SHA-256 (64 hexadecimal digits)")
    cache = Path(cache_dir) if cache_dir is not None else default_cache()
    target = cache / name
    fname = entry.url.rsplit("/", 1)[-1]
    downloader = _copy_local if entry.url.startswith("file://") else None
    logger = pooch.get_logger()  # its handler holds the stderr of import time: keep it quiet, errors are raised
    level = logger.level
    logger.setLevel("WARNING")
    try:
        downloaded = Path(
            pooch.retrieve(
                entry.url, known_hash=f"sha256:{expected}", fname=fname, path=cache / "downloads",
                downloader=downloader,
            )
        )  # fmt: skip
    except ValueError as exc:  # pooch reports a hash mismatch as ValueError and deletes the file
        raise DataError(f"download of {name} failed verification: {exc}") from exc
    except OSError as exc:
        raise DataError(f"download of {name} from {entry.url} failed: {exc}") from exc
    finally:
        logger.setLevel(level)
    if entry.md5 is not None and sha256 is None:
        got = _digest(downloaded, "md5")
        if got != entry.md5:
            downloaded.unlink()
            raise DataError(f"{fname}: MD5 {got} differs from the publisher's {entry.md5}; the file was removed")
    if not entry.is_archive:
        target.mkdir(parents=True, exist_ok=True)
        final = target / fname
        if not final.exists() or _digest(final, "sha256") != expected:
            shutil.copyfile(downloaded, final)
        return target
    stamp = target / ".receval-sha256"
    if not (stamp.is_file() and stamp.read_text().strip() == expected):
        safe_extract(downloaded, target)
        stamp.write_text(expected + "\n")
    return target / entry.folder if entry.folder else target


def safe_extract(archive: str | Path, target: str | Path) -> Path:
    """Unpack a zip archive into ``target``, refusing entries that would escape it.

    Every entry is checked before anything is written: absolute paths, drive
    letters, ``..`` components, backslashes, symbolic links and repeated names are a
    :class:`DataError`. The archive is unpacked into a fresh temporary folder next to
    ``target`` which then replaces ``target`` as a whole, so no existing file is ever
    overwritten piecemeal and a failure leaves ``target`` as it was.
    """
    archive, target = Path(archive), Path(target)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataError(f"not a readable zip archive: {exc}", path=archive) from exc
    with zf:
        seen: set[str] = set()
        for info in zf.infolist():
            name = info.filename
            parts = PurePosixPath(name).parts
            mode = info.external_attr >> 16
            problem = None
            if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
                problem = "is an absolute path"
            elif ".." in parts or "\\" in name:
                problem = "climbs out of the target folder"
            elif stat.S_ISLNK(mode):
                problem = "is a symbolic link"
            elif name in seen:
                problem = "appears twice"
            if problem is not None:
                raise DataError(f"archive entry {name!r} {problem}; refusing to unpack", path=archive)
            seen.add(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            root = staging.resolve()
            for info in zf.infolist():
                dest = (staging / info.filename).resolve()
                if dest != root and root not in dest.parents:
                    raise DataError(f"archive entry {info.filename!r} escapes the target folder", path=archive)
                if info.is_dir():
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
            if target.exists():
                old = target.with_name(f".{target.name}-old")
                shutil.rmtree(old, ignore_errors=True)
                target.rename(old)
                staging.rename(target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _copy_local(url: str, output_file: str | object, pooch: object, check_only: bool = False) -> bool | None:
    """A pooch downloader for ``file://`` addresses (local mirrors; used by the tests)."""
    source = Path(url.removeprefix("file://"))
    if check_only:
        return source.is_file()
    if not source.is_file():
        raise OSError(f"no such file: {source}")
    if hasattr(output_file, "write"):
        with open(source, "rb") as fh:
            shutil.copyfileobj(fh, output_file)
    else:
        shutil.copyfile(source, str(output_file))
    return None
