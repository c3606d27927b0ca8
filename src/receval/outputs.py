"""Output paths checked before any work starts.

Every command that writes a file or a folder checks the paths its options name
first, before reading its inputs or computing anything, so a misspelt folder or a
file given where a folder is meant (or the reverse) is a one-line
:class:`~receval.errors.ConfigError` naming the option and the path, and nothing is
written. :func:`check_output_file` wants a file whose folder exists;
:func:`check_output_dir` wants a folder, which the command creates (with its
parents) when missing. Both refuse what the file system would refuse: a path under
an existing file, and a folder that cannot be written (tried, not only read off
its permission bits: by its bits root may write ``/proc``, and a read-only mount
keeps its bits). Both refuse an existing path that is not what is meant: a file is written
by renaming a new one over it (:mod:`receval.atomic`), which would replace a device
(``/dev/null``), a named pipe or a socket with a plain file, so only a regular
file (or a new name) is a file output and only a folder a folder output.

>>> import tempfile
>>> base = Path(tempfile.mkdtemp())
>>> check_output_file(base / "recs.tsv", "--out") == base / "recs.tsv"
True
>>> check_output_file(base / "nosuchdir" / "x.csv", "--per-user")
Traceback (most recent call last):
...
receval.errors.ConfigError: --per-user .../nosuchdir/x.csv: the folder .../nosuchdir does not exist; create it first ...
>>> check_output_dir(base / "new" / "results", "--out") == base / "new" / "results"
True
>>> _ = (base / "table.csv").write_text("x")
>>> check_output_dir(base / "table.csv", "--out")
Traceback (most recent call last):
...
receval.errors.ConfigError: --out .../table.csv: is a file, but a folder is meant; name a folder (created when missing)

A name that becomes part of a path (a data set label, an experiment, recommender or
study name) goes through :func:`safe_name` first, so it cannot leave the folder named.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import tempfile
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from receval.errors import ConfigError

__all__ = ["MAX_NAME_BYTES", "check_output_dir", "check_output_file", "safe_name"]

MAX_NAME_BYTES = 120  # room left for a suffix (".parquet", "-pr.svg") within the usual 255-byte limit
_RESERVED = frozenset('/\\<>:"|?*+')  # separators, characters Windows refuses, and the mark of a changed name
_MARK = "+"
_HASH_CHARS = 8


def _unsafe(ch: str) -> bool:
    return ch in _RESERVED or unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp")


def safe_name(text: object, *, max_bytes: int = MAX_NAME_BYTES) -> str:
    """``text`` as one file name: no separators, no ``..``, no control characters, at most ``max_bytes`` bytes.

    A name that is safe already is returned as it is. Any other gets its unsafe
    characters replaced by ``_`` (a leading ``.`` too, so nothing is hidden and nothing
    is ``..``), is cut to fit, and ends in ``+`` and 8 hex digits of the SHA-256 of the
    original, so two different names never give the same file name: an unchanged name
    holds no ``+``, a changed one ends in its own digest.

    Returns
    -------
    str
        A single path component of at most ``max_bytes`` UTF-8 bytes.

    Examples
    --------
    >>> safe_name("ml-100k-one-shot"), safe_name("knn(k=50)")
    ('ml-100k-one-shot', 'knn(k=50)')
    >>> safe_name("../../x"), safe_name("a/b"), safe_name("a_b")
    ('_._.._x+9cdf6a50', 'a_b+c14cddc0', 'a_b')
    >>> len(safe_name("x" * 250).encode()), safe_name(""), safe_name("..")
    (120, '_+e3b0c442', '__+5ec1f7e7')
    """
    original = str(text)
    body = unicodedata.normalize("NFC", original)
    body = "".join("_" if _unsafe(ch) else ch for ch in body)
    if body.startswith("."):
        body = "_" + body[1:]
    if body.endswith((" ", ".")):  # Windows drops them, so two names could become one
        body = body[:-1] + "_"
    if body == original and body and len(body.encode("utf-8")) <= max_bytes:
        return body
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    room = max_bytes - len(_MARK) - _HASH_CHARS
    while len(body.encode("utf-8")) > room:  # cut at a character, never inside one
        body = body[:-1]
    return f"{body or '_'}{_MARK}{digest}"


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (the current folder at worst)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _refused(option: str, path: Path, why: str) -> ConfigError:
    """The error naming ``option`` (a flag, or a Python parameter written ``out=``, which the CLI shows as its flag)."""
    return ConfigError(f"{option} {path}: {why}", parameters=(option[:-1],) if option.endswith("=") else ())


def _writable(folder: Path, option: str, path: Path) -> None:
    """The permission bits, then a nameless file created (and dropped) in ``folder``: the bits do not tell root
    that ``/proc`` refuses files, nor anyone that a mount is read-only."""
    try:
        if os.access(folder, os.W_OK | os.X_OK):
            with tempfile.TemporaryFile(dir=folder):  # O_TMPFILE where supported: no name, nothing left behind
                return
    except OSError:
        pass
    raise _refused(option, path, f"the folder {folder} cannot be written; choose another place")


_KINDS = (  # what stat says an existing path is, named for a message
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISREG, "a file"),
)


def _kind(path: Path) -> str | None:
    """What ``path`` is (through a symbolic link): ``"a file"``, ``"a folder"``, ``"a named pipe"``...; None when
    nothing is there.

    >>> _kind(Path("/dev/null")), _kind(Path("/no/such/path"))
    ('a character device', None)
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, a dangling link, a NUL in the name: nothing to replace
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them missing (an input checked later), or no name a file can have
        return False


def _inside(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (links resolved), or None when it is elsewhere."""
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(folder)).as_posix()
    except ValueError:
        return None


def check_output_file(path: str | Path, option: str, inputs: Mapping[str, str | Path | None] | None = None) -> Path:
    """``path`` as a file the command may write (created or replaced); raises ConfigError otherwise.

    ``option`` names where the path came from in the error: a flag (``--out``) or a
    Python parameter (``out=``); ``inputs`` maps the command's input options to the files
    they name.

    Refused: an existing folder, device, named pipe or socket (anything but a regular
    file), a folder that does not exist or is a file, a folder that cannot be written,
    one of ``inputs`` (by any name or link: the command would replace what it reads).

    Returns
    -------
    pathlib.Path
        ``path`` (nothing is created).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_output_file(folder / "recs.tsv", "--out") == folder / "recs.tsv"
    True
    >>> check_output_file(folder / "missing" / "recs.tsv", "--out")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: --out .../missing/recs.tsv: the folder .../missing does not exist; ...
    >>> check_output_file("/dev/null", "--out")  # renaming a file over it would replace the device
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: --out /dev/null: is a character device, not a file; writing would replace it ...
    >>> _ = (folder / "train.tsv").write_text("x")
    >>> check_output_file(folder / "." / "train.tsv", "--out", {"--train": folder / "train.tsv"})
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: --out .../train.tsv: is also --train; writing would replace that input: ...
    """
    path = Path(path)
    kind = _kind(path)
    for name, given in (inputs or {}).items():
        if kind == "a file" and given is not None and _same_file(path, Path(given)):
            raise _refused(option, path, f"is also {name}; writing would replace that input: name another file")
    if kind == "a folder":
        raise _refused(option, path, "is a folder, but a file is meant; name a file inside it or elsewhere")
    if kind not in (None, "a file"):
        raise _refused(option, path, f"is {kind}, not a file; writing would replace it with a file, so name a file "
                       "(new or existing) instead")  # fmt: skip
    parent = path.parent
    if not parent.exists():
        holder = _nearest_existing(parent)
        if holder.is_file():
            raise _refused(option, path, f"{holder} is a file, not a folder; name a file in an existing folder")
        raise _refused(
            option, path, f"the folder {parent} does not exist; create it first (or name a file in an existing one)"
        )
    if not parent.is_dir():
        raise _refused(option, path, f"{parent} is a file, not a folder; name a file in an existing folder")
    _writable(parent, option, path)
    return path


def check_output_dir(
    path: str | Path,
    option: str,
    inputs: Mapping[str, str | Path | None] | None = None,
    writes: tuple[str, ...] = (),
) -> Path:
    """``path`` as a folder the command may write into (created with its parents when missing).

    Refused: an existing file, device, named pipe or socket (anything but a folder), a
    path under an existing file, a folder (or its nearest existing ancestor) that cannot
    be written, a folder where one of the files ``writes`` names (relative to it, ``*``
    for any part: ``fold-*/train.tsv``) is one of ``inputs`` (the command's input options,
    or a description of an argument, to the files they name).

    Returns
    -------
    pathlib.Path
        ``path`` (not created here: the command creates it when it writes).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_output_dir(folder / "a" / "b", "out=") == folder / "a" / "b", (folder / "a").exists()
    (True, False)
    >>> _ = (folder / "train.tsv").write_text("x")
    >>> check_output_dir(folder, "--out", {"the data file": folder / "train.tsv"}, ("train.tsv", "test.tsv"))
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: --out ...: its train.tsv would replace the data file (.../train.tsv); name ...
    """
    path = Path(path)
    kind = _kind(path)
    if kind not in (None, "a folder"):
        raise _refused(option, path, f"is {kind}, but a folder is meant; name a folder (created when missing)")
    for what, given in (inputs or {}).items() if kind == "a folder" else ():
        inside = _inside(Path(given), path) if given is not None else None
        if inside is not None and any(fnmatch.fnmatchcase(inside, name) for name in writes):
            raise _refused(option, path, f"its {inside} would replace {what} ({given}); name another folder")
    holder = _nearest_existing(path)
    if not holder.is_dir():
        raise _refused(option, path, f"{holder} is a file, so no folder can be made under it; name another folder")
    _writable(holder, option, path)
    return path
