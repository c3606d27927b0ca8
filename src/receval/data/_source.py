"""Input files as their readers see them: compressed files decompressed in one place.

A ratings file, a truth table, a run or a JSON file may be compressed with gzip
(``.gz``), bzip2 (``.bz2``), xz (``.xz``) or Zstandard (``.zst``). Every reader of
:mod:`receval.data.tables` opens its files here, so that the header sniffing, the
format detection, Arrow's parser and the line scan that names a bad line all read
the same decompressed text, and a line number in a message is a line of that text.

What is decompressed is decided by the file's first bytes (each format's magic
number), so that a file that was decompressed on download but kept its ``.gz`` name
still reads; the compression suffix is then only part of the name:
:func:`inner_suffix` gives the suffix that tells the table format (``.csv`` for
``ratings.csv.gz``). A damaged or truncated compressed file is a
:class:`~receval.errors.DataError` naming the file, wherever the read stops.

gzip, bzip2 and xz are decompressed by the standard library; Zstandard by the codec
built into pyarrow (a dependency already), so no package is added.

A reader looks at a file several times (its first bytes, its header, its body, its
lines again to name a bad one), which a pipe cannot give: a named pipe (FIFO), a
process substitution ``<(zcat ratings.gz)`` or ``/dev/stdin`` fed by a pipe is read
once, into a temporary file that every later look reads (:func:`readable`; removed at
exit). A character or block device (``/dev/zero``) or a socket is not an input: it is
refused, not read without end. Lines are read up to :data:`MAX_LINE` bytes
(:func:`lines`): a file that is one endless line is an error, not all of memory.

Examples
--------
>>> import gzip, tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "ratings.csv.gz"
>>> _ = path.write_bytes(gzip.compress(b"user,item\\n1,a\\n"))
>>> compression(path), inner_suffix(path)
('gzip', '.csv')
>>> with open_binary(path) as fh:
...     fh.read()
b'user,item\\n1,a\\n'
>>> _ = path.write_bytes(gzip.compress(b"user,item\\n1,a\\n")[:12])
>>> with open_binary(path) as fh:
...     fh.read()
Traceback (most recent call last):
...
receval.errors.DataError: .../ratings.csv.gz: the gzip-compressed data is damaged or incomplete (...); ...
"""

from __future__ import annotations

import atexit
import contextlib
import io
import itertools
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from receval.errors import DataError

__all__ = [
    "COMPRESSIONS",
    "MAX_LINE",
    "arrow_input",
    "compression",
    "inner_suffix",
    "lines",
    "open_binary",
    "readable",
    "stem",
]

COMPRESSIONS: dict[str, str] = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}
"""File suffix -> the compression it names (the one list of compressions receval reads)."""

_MAGIC: dict[bytes, str] = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
}
_LONGEST_MAGIC = max(len(m) for m in _MAGIC)
MAX_LINE = 1 << 24
"""The longest line (bytes) a reader takes: 16 MiB, a thousand times a long JSON review line."""
_SPOOLED: dict[tuple[int, ...], Path] = {}  # a pipe (_pipe_key) -> the temporary file holding what it gave


def readable(path: str | Path) -> Path:
    """The file to open for ``path``: ``path`` itself, or for a pipe the temporary file it was read into once.

    A pipe can be read only once, and a reader reads its input several times: the
    first time a process asks for a pipe, what it gives is copied to a temporary file
    (removed at exit), and every later read of that pipe in this process reads the copy
    (a pipe cannot tell that it was written again: a long-lived process that reads new
    content through one named pipe should read a file instead). A device or a
    socket is a :class:`DataError`; a path that does not exist is returned as it is,
    for the reader to name.

    Returns
    -------
    pathlib.Path
        A regular file (or folder, or missing path) to open.

    Examples
    --------
    >>> import os, tempfile, threading
    >>> fifo = Path(tempfile.mkdtemp()) / "ratings.csv"
    >>> os.mkfifo(fifo)
    >>> writer = threading.Thread(target=fifo.write_text, args=("user,item\\n1,a\\n",))
    >>> writer.start()
    >>> copy = readable(fifo)
    >>> writer.join()
    >>> copy.read_text(), readable(fifo) == copy  # read once, the copy given again
    ('user,item\\n1,a\\n', True)
    >>> readable("/dev/zero")
    Traceback (most recent call last):
    ...
    receval.errors.DataError: /dev/zero: is a character device, not a file or a pipe; give a file ...
    """
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return Path(path)
    mode = status.st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return Path(path)
    if not stat.S_ISFIFO(mode):
        kind = "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else "a socket"
        raise DataError(f"is {kind}, not a file or a pipe; give a file (or a pipe: <(command))", path=path)
    spooled = _SPOOLED.get(_pipe_key(status))
    if spooled is None:
        handle, name = tempfile.mkstemp(prefix="receval-pipe-")
        atexit.register(_remove, name)
        with open(handle, "wb") as copy, open(path, "rb") as pipe:
            shutil.copyfileobj(pipe, copy, 1 << 20)
        spooled = _SPOOLED[_pipe_key(os.stat(path))] = Path(name)  # as it stands once written
    return spooled


def _pipe_key(status: os.stat_result) -> tuple[int, ...]:
    """A pipe by its inode and the time it was made: a new pipe given a freed inode number is read anew."""
    return status.st_dev, status.st_ino, status.st_ctime_ns


def _remove(name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name)


def lines(fh: IO[bytes], path: str | Path) -> Iterator[bytes]:
    """The lines of a binary stream (line ends kept), each at most :data:`MAX_LINE` bytes; a longer one is an error.

    >>> list(lines(io.BytesIO(b"a\\nb"), "x.tsv"))
    [b'a\\n', b'b']
    """
    for number in itertools.count(1):
        line = fh.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE:
            raise DataError(
                f"the line is longer than {MAX_LINE:,} bytes; this is not a table (or it has no line ends)",
                path=path,
                line=number,
            )
        yield line


def compression(path: str | Path) -> str | None:
    """The compression of ``path`` told from its first bytes (one of :data:`COMPRESSIONS`' values), or None.

    >>> import tempfile, pathlib
    >>> plain = pathlib.Path(tempfile.mkdtemp()) / "x.csv.gz"
    >>> _ = plain.write_text("user,item\\n")
    >>> compression(plain) is None  # named .gz, but plain text: read as it is
    True
    """
    try:
        with open(readable(path), "rb") as fh:
            head = fh.read(_LONGEST_MAGIC)
    except OSError:
        return None  # the reader that opens it next names the problem
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)


def inner_suffix(path: str | Path) -> str:
    """The suffix that names the table format: the last one before any compression suffix (lower case).

    >>> inner_suffix("ratings.CSV.gz"), inner_suffix("run.trec"), inner_suffix("u1.base.zst"), inner_suffix("x.gz")
    ('.csv', '.trec', '.base', '')
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    while suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def stem(path: str | Path) -> str:
    """The file's name without its format suffix and any compression suffix: a data set's or a run's label.

    >>> stem("ratings.csv.gz"), stem("bm25.trec"), stem("u1.base.zst"), stem("x.gz")
    ('ratings', 'bm25', 'u1', 'x')
    """
    name = Path(path).name
    while Path(name).suffix.lower() in COMPRESSIONS:
        name = Path(name).stem
    return Path(name).stem


def open_binary(path: str | Path) -> IO[bytes]:
    """``path`` opened for reading bytes, decompressed when it is compressed (a buffered, line-iterable stream).

    A read that meets damaged compressed data raises a :class:`DataError` naming the
    file (so a reader, Arrow's among them, stops with that line, not a codec error).
    """
    kind = compression(path)
    if kind is None:
        return open(readable(path), "rb")
    inner, errors = _decompressor(readable(path), kind)
    return io.BufferedReader(_Checked(inner, errors, Path(path), kind), buffer_size=1 << 20)


@contextlib.contextmanager
def arrow_input(path: str | Path) -> Iterator[Any]:
    """What pyarrow's readers should be given for ``path``: the path itself when plain, else the decompressed stream.

    A plain path lets Arrow read the file with its own threads. A plain file with a
    compression suffix is given as a stream too: Arrow would decompress it by its name.

    >>> import tempfile, pathlib, pyarrow.csv
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.csv.gz"
    >>> _ = path.write_text("user,item\\n1,a\\n")  # not compressed, whatever the name says
    >>> with arrow_input(path) as source:
    ...     pyarrow.csv.read_csv(source).num_rows
    1
    """
    if compression(path) is None and Path(path).suffix.lower() not in COMPRESSIONS:
        yield str(readable(path))
        return
    with open_binary(path) as fh:
        yield fh


def _decompressor(path: Path, kind: str) -> tuple[Any, tuple[type[BaseException], ...]]:
    """The decompressing stream and the exceptions its codec raises for damaged data."""
    if kind == "gzip":
        import gzip
        import zlib

        return gzip.open(path, "rb"), (OSError, EOFError, zlib.error)
    if kind == "bz2":
        import bz2

        return bz2.open(path, "rb"), (OSError, EOFError)
    if kind == "xz":
        import lzma

        return lzma.open(path, "rb"), (lzma.LZMAError, EOFError)
    import pyarrow as pa

    if not pa.Codec.is_available("zstd"):  # every pyarrow wheel has it; a source build may not
        raise DataError("this pyarrow was built without Zstandard; decompress the file first (zstd -d)", path=path)
    return pa.input_stream(str(path), compression="zstd"), (OSError,)


class _Checked(io.RawIOBase):
    """A decompressing stream whose codec errors become a DataError naming the file."""

    def __init__(self, inner: Any, errors: tuple[type[BaseException], ...], path: Path, kind: str) -> None:
        super().__init__()
        self._inner, self._errors, self._path, self._kind = inner, errors, path, kind

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._inner.read(len(buffer))
        except self._errors as exc:
            raise DataError(
                f"the {self._kind}-compressed data is damaged or incomplete ({exc}); "
                "download or compress the file again (a truncated download ends like this)",
                path=self._path,
            ) from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()
