"""Known data sets: where to download them, their checksums, and :func:`fetch`.

:func:`fetch` downloads with :mod:`pooch` into a cache folder, verifies the SHA-256
(a mismatch is an error, nothing is extracted) and unpacks zip archives with
:func:`safe_extract`, which refuses any entry that would land outside the target
folder (absolute paths, ``..``, symbolic links), names that clash once normalised,
and archives that would expand beyond a limit, instead of silently rewriting files.
The unpacked files' names, sizes and SHA-256 are recorded in a manifest beside the
folder; a later :func:`fetch` checks the folder against it and unpacks again when a
file is missing, altered or added.
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
import json
import os
import shutil
import stat
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO

from receval.errors import DataError

__all__ = [
    "DATASETS",
    "KnownDataset",
    "dataset_name",
    "default_cache",
    "extraction_problems",
    "fetch",
    "format_aliases",
    "manifest_path",
    "safe_extract",
]

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
            "no fixed checksum: give the SHA-256 of the build you expect, or download it by hand",
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
        KnownDataset(
            "yelp",
            "yelp",
            None,
            None,
            None,
            "",
            "Yelp Open Dataset: reviews (1-5 stars) of businesses, business categories as item aspects",
            "from https://www.yelp.com/dataset (accept its terms of use there): "
            "unpack the JSON archive and give its folder with --format yelp; Said & Bellogín (UMUAI 2018) used "
            "an earlier release (45,981 users, 11,537 businesses, 229,907 ratings)",
        ),
    )
}
"""Registry name -> :class:`KnownDataset`."""


def dataset_name(name: str) -> str:
    """The registry name of a data set given by its name or its format (``data fetch`` and ``--format`` share them).

    Returns
    -------
    str
        A key of :data:`DATASETS`; an unknown or ambiguous name is a DataError.

    Examples
    --------
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
    """Data set name -> its :func:`receval.data.load` format (``ml-100k`` -> ``movielens-100k``).

    Returns
    -------
    dict of str to str
        One entry per key of :data:`DATASETS`.

    Examples
    --------
    >>> format_aliases()["ml-100k"]
    'movielens-100k'
    """
    return {d.name: d.format for d in DATASETS.values()}


def default_cache() -> Path:
    """The download cache: ``$RECEVAL_DATA`` if set, else the user cache folder (``pooch.os_cache``).

    Returns
    -------
    pathlib.Path
        The folder (not created here).

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"RECEVAL_DATA": "/srv/receval-data"}):
    ...     default_cache().as_posix()
    '/srv/receval-data'
    """
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

    Returns
    -------
    pathlib.Path
        The unpacked data set's folder, to give :func:`receval.data.load` with its format.

    Examples
    --------
    Without network access only the refusals can be shown:

    >>> fetch("ml-100m")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: unknown data set 'ml-100m'; known: ...
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
            f"with sha256=, or download {entry.url} by hand and load the folder",
            parameters=["sha256"],
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
    if extraction_problems(target, expected):  # never unpacked, or damaged since: unpack the verified download
        safe_extract(downloaded, target)
    return target / entry.folder if entry.folder else target


_MANIFEST_VERSION = 1
# safe_extract's default limits: at most this many bytes unpacked, and this many times the archive's size
# (the registry's archives: MovieLens 25M unpacks 262 MB into 1.1 GB, 4.4 times).
MAX_EXTRACTED_BYTES = 16 * 10**9
MAX_EXPANSION_RATIO = 200.0


def manifest_path(target: str | Path) -> Path:
    """Where :func:`safe_extract` records what it unpacked into ``target``: ``<target>.manifest.json`` beside it.

    Returns
    -------
    pathlib.Path
        The manifest's path.

    Examples
    --------
    >>> manifest_path("/data/ml-100k").as_posix()
    '/data/ml-100k.manifest.json'
    """
    target = Path(target)
    return target.with_name(f"{target.name}.manifest.json")


@dataclass(frozen=True)
class _Member:
    name: str
    is_dir: bool
    size: int
    problem: str | None
    open: Callable[[], IO[bytes] | None]


def _members(handle: zipfile.ZipFile | tarfile.TarFile) -> list[_Member]:
    """The entries of a zip or tar archive, with the kinds that are never unpacked marked as a problem."""
    out = []
    if isinstance(handle, zipfile.ZipFile):
        for info in handle.infolist():
            problem = "is a symbolic link" if stat.S_ISLNK(info.external_attr >> 16) else None
            out.append(_Member(info.filename, info.is_dir(), info.file_size, problem, partial(handle.open, info)))
        return out
    for member in handle.getmembers():
        problem = None
        if member.issym():
            problem = "is a symbolic link"
        elif member.islnk():
            problem = "is a hard link"
        elif not (member.isfile() or member.isdir()):
            problem = "is a device, a pipe or another special file"
        out.append(_Member(member.name, member.isdir(), member.size, problem, partial(handle.extractfile, member)))
    return out


def _check_members(archive: Path, members: list[_Member], max_bytes: int, max_ratio: float) -> None:
    """Refuse escaping, special, repeated (after normalisation) or clashing entries and excessive expansion."""
    seen: dict[str, str] = {}  # normalised name -> the entry's name
    files: dict[str, str] = {}
    folders: dict[str, str] = {}  # every folder an entry needs -> an entry needing it
    for m in members:
        name = m.name
        parts = PurePosixPath(name).parts
        problem = m.problem
        if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
            problem = "is an absolute path"
        elif ".." in parts or "\\" in name:
            problem = "climbs out of the target folder"
        if problem is not None:
            raise DataError(f"archive entry {name!r} {problem}; refusing to unpack", path=archive)
        # the name as the file system sees it: './a' = 'a', 'a//b' = 'a/b', and case and Unicode
        # composition folded (they name one file on macOS and Windows)
        key = unicodedata.normalize("NFC", PurePosixPath(name).as_posix()).casefold()
        if key == ".":
            continue
        if key in seen:
            also = "" if seen[key] == name else f" (as {seen[key]!r})"
            raise DataError(f"archive entry {name!r} appears twice{also}; refusing to unpack", path=archive)
        seen[key] = name
        (folders if m.is_dir else files)[key] = name
        for parent in PurePosixPath(key).parents:
            folders.setdefault(parent.as_posix(), name)
    for key, name in files.items():
        if key in folders:
            raise DataError(
                f"archive entry {name!r} is a file and also a folder of {folders[key]!r}; refusing to unpack",
                path=archive,
            )
    total = sum(m.size for m in members if not m.is_dir)
    size = archive.stat().st_size
    if total > max_bytes or total > max_ratio * max(size, 1):
        raise DataError(
            f"archive would unpack to {total:,} bytes, {total / max(size, 1):,.0f} times its own {size:,} bytes "
            f"(limits: {max_bytes:,} bytes, {max_ratio:g} times); refusing to unpack a possible archive bomb — "
            "if you trust it, unpack it by hand (or pass max_bytes= / max_ratio=)",
            path=archive,
        )


def safe_extract(
    archive: str | Path,
    target: str | Path,
    *,
    max_bytes: int = MAX_EXTRACTED_BYTES,
    max_ratio: float = MAX_EXPANSION_RATIO,
) -> Path:
    """Unpack a zip or tar archive into ``target``, refusing entries that would escape it.

    Every entry is checked before anything is written: absolute paths, drive
    letters, ``..`` components, backslashes, symbolic and hard links, special files, names
    that repeat once normalised (``a.txt`` and ``./a.txt``; ``A.txt`` and ``a.txt``) and a
    name that is both a file and a folder (``a`` then ``a/b``) are a :class:`DataError`; so
    is an archive that would unpack to more than ``max_bytes`` or more than ``max_ratio``
    times its own size (an archive bomb). The archive is unpacked into a fresh temporary
    folder next to ``target`` which then replaces ``target`` as a whole, so no existing
    file is ever overwritten piecemeal and a failure leaves ``target`` as it was. The
    names, sizes and SHA-256 of the unpacked files, and the archive's SHA-256, are
    recorded in :func:`manifest_path` (beside ``target``), which
    :func:`extraction_problems` checks.

    Returns
    -------
    pathlib.Path
        ``target``, holding the archive's files.

    Examples
    --------
    >>> import io, tempfile, zipfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with zipfile.ZipFile(folder / "a.zip", "w") as zf:
    ...     zf.writestr("a.txt", "1")
    ...     zf.writestr("./a.txt", "2")
    >>> safe_extract(folder / "a.zip", folder / "out")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: ...a.zip: archive entry './a.txt' appears twice (as 'a.txt'); refusing to unpack
    """
    archive, target = Path(archive), Path(target)
    try:
        handle: zipfile.ZipFile | tarfile.TarFile = (
            zipfile.ZipFile(archive) if zipfile.is_zipfile(archive) else tarfile.open(archive)
        )
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        raise DataError(f"not a readable zip or tar archive: {exc}", path=archive) from exc
    with handle:
        try:
            members = _members(handle)
        except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
            raise DataError(f"damaged archive: {exc}", path=archive) from exc
        _check_members(archive, members, max_bytes, max_ratio)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        files: dict[str, dict[str, int | str]] = {}
        try:
            root = staging.resolve()
            for m in members:
                dest = (staging / m.name).resolve()
                if dest != root and root not in dest.parents:
                    raise DataError(f"archive entry {m.name!r} escapes the target folder", path=archive)
                if m.is_dir:
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                files[dest.relative_to(root).as_posix()] = _copy_entry(archive, m, dest)
            manifest = manifest_path(target)
            manifest.unlink(missing_ok=True)
            if target.exists():
                old = target.with_name(f".{target.name}-old")
                shutil.rmtree(old, ignore_errors=True)
                target.rename(old)
                staging.rename(target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                staging.rename(target)
            record = {"version": _MANIFEST_VERSION, "archive_sha256": _digest(archive, "sha256"), "files": files}
            partial_manifest = manifest.with_name(f".{manifest.name}.tmp-{os.getpid()}")
            partial_manifest.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
            os.replace(partial_manifest, manifest)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
            raise DataError(f"damaged archive: {exc}", path=archive) from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _copy_entry(archive: Path, member: _Member, dest: Path) -> dict[str, int | str]:
    """Copy one entry, never more bytes than its header declares; its size and SHA-256."""
    h = hashlib.sha256()
    size = 0
    source = member.open()
    if source is None:
        raise DataError(f"archive entry {member.name!r} has no data", path=archive)
    with source, open(dest, "wb") as out:
        for chunk in iter(lambda: source.read(1 << 20), b""):
            size += len(chunk)
            if size > member.size:
                raise DataError(
                    f"archive entry {member.name!r} holds more than the {member.size:,} bytes its header declares",
                    path=archive,
                )
            h.update(chunk)
            out.write(chunk)
    return {"size": size, "sha256": h.hexdigest()}


def extraction_problems(target: str | Path, archive_sha256: str | None = None) -> list[str]:
    """What differs between ``target`` and the manifest :func:`safe_extract` recorded (empty: intact).

    A missing or unreadable manifest, another archive than ``archive_sha256`` (when
    given), and each missing, resized, altered or unexpected file is one problem.

    Returns
    -------
    list of str
        One sentence per problem; empty when ``target`` is as unpacked.

    Examples
    --------
    >>> import tempfile, zipfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with zipfile.ZipFile(folder / "a.zip", "w") as zf:
    ...     zf.writestr("d/a.txt", "1")
    >>> out = safe_extract(folder / "a.zip", folder / "out")
    >>> extraction_problems(out)
    []
    >>> _ = (out / "d" / "a.txt").write_text("22")
    >>> extraction_problems(out)
    ['d/a.txt has 2 bytes, 1 were unpacked']
    """
    target = Path(target)
    manifest = manifest_path(target)
    try:
        record = json.loads(manifest.read_text())
        files = record["files"]
        recorded_archive = record["archive_sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"no readable manifest {manifest} ({exc})"]
    problems = []
    if archive_sha256 is not None and recorded_archive != archive_sha256:
        problems.append(f"unpacked from another archive (SHA-256 {recorded_archive})")
    if not target.is_dir():
        return [*problems, f"{target} is not a folder"]
    present = {p.relative_to(target).as_posix() for p in target.rglob("*") if not p.is_dir()}
    for name, facts in sorted(files.items()):
        path = target / name
        if name not in present:
            problems.append(f"{name} is missing")
        elif path.stat().st_size != facts["size"]:
            problems.append(f"{name} has {path.stat().st_size:,} bytes, {facts['size']:,} were unpacked")
        elif _digest(path, "sha256") != facts["sha256"]:
            problems.append(f"{name} was altered (SHA-256 differs)")
    problems.extend(f"{name} was not in the archive" for name in sorted(present - set(files)))
    return problems


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
