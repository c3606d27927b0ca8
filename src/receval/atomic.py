"""Write files, and sets of files, so that a reader never sees a half-written one.

One file: :func:`atomic_write` writes to a short hidden temporary name in the
target's folder (``.receval-<pid>-<n>.tmp``, short enough that any legal target name
can be written), then renames it over the target (atomic on POSIX file systems); on
failure the temporary file is removed and the target is left as it was.

Files that belong together (a train/test split, a report with its figures, the result
store's combined tables): :func:`publish` stages the whole set in a hidden folder of
the same kind beside the targets, then moves it into place in one step that SIGINT and
SIGTERM cannot cut (they are held until the set is in place, then take effect). An
interrupted or failed command therefore leaves either the old set or the new one. The
step is recorded first (a journal in the staging folder), so even a process killed
with ``SIGKILL`` in the middle of it is completed by the next write into that folder.

A process killed with ``SIGKILL`` cannot remove its temporaries: the first write into
the same folder by a later process removes those of processes that no longer run, and
completes their recorded publications (:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import re
import shutil
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from receval.errors import ConfigError, naming_path

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PARQUET_SUFFIXES",
    "TSV_SUFFIXES",
    "Publication",
    "atomic_write",
    "publish",
    "remove_stale_temporaries",
    "temporary_name",
    "write_figure",
    "write_frame",
    "write_text",
]

# the extensions receval's reader takes as Parquet and as tab-separated text: a file written under one reads back
PARQUET_SUFFIXES: tuple[str, ...] = (".parquet", ".pq", ".parq")
TSV_SUFFIXES: tuple[str, ...] = (".tsv", ".tab", ".txt")
_TEMPORARY = re.compile(r"^\.receval-(\d+)-\d+\.tmp$")
_COUNTER = itertools.count()
_CLEANED: set[Path] = set()  # folders already cleaned by this process
_STAGED = "files"  # a staging folder holds the set under files/ ...
_JOURNAL = "journal.json"  # ... and, once the set is complete, the list of moves to make


def temporary_name() -> str:
    """A hidden name, unique to this process and call, for a temporary file or folder.

    Returns
    -------
    str
        ``.receval-<pid>-<n>.tmp``.

    Examples
    --------
    >>> name = temporary_name()
    >>> name.startswith(f".receval-{os.getpid()}-") and name.endswith(".tmp") and len(name) < 40
    True
    """
    return f".receval-{os.getpid()}-{next(_COUNTER)}.tmp"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (the folder itself: no lock file is left in it)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then let the first one take effect.

    Python runs signal handlers in the main thread only, so a caller in another thread
    cannot hold them (its block runs as is).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda number, _frame: caught.append(number)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        if caught:
            signal.raise_signal(caught[0])


def _inside(name: str) -> bool:
    """Whether ``name`` (a journal's entry) stays inside its folder: relative, without ``..``."""
    path = Path(name)
    return not path.is_absolute() and ".." not in path.parts


def _complete(folder: Path, stage: Path) -> None:
    """Make the moves a staging folder's journal records, then remove the staging folder."""
    journal = json.loads((stage / _JOURNAL).read_text(encoding="utf-8"))
    inside = [name for name in (*journal["files"], *journal["remove"]) if _inside(name)]  # a doctored journal
    for name in journal["files"]:
        source, target = stage / _STAGED / name, folder / name
        if name in inside and source.exists():  # not there: moved already by an attempt that was cut short
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
    for name in journal["remove"]:
        if name in inside:
            (folder / name).unlink(missing_ok=True)
            with suppress(OSError):  # a sub-folder the set emptied goes too; one holding other files stays
                if (folder / name).parent != folder:
                    (folder / name).parent.rmdir()
    shutil.rmtree(stage, ignore_errors=True)


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Remove the temporaries ``.receval-<pid>-<n>.tmp`` in ``folder`` whose process is gone; returns them.

    Temporaries of running processes (a concurrent writer) are kept. A staging folder
    of :func:`publish` whose set was complete (its journal written) is moved into
    place first, so the set its process was publishing when it died is published.

    Returns
    -------
    list of pathlib.Path
        The temporaries removed (those of running processes are kept).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / ".receval-999999999-0.tmp").write_text("half")  # no process has this pid
    >>> _ = (folder / f".receval-{os.getpid()}-0.tmp").write_text("mine")
    >>> [p.name for p in remove_stale_temporaries(folder)]
    ['.receval-999999999-0.tmp']
    >>> [p.name for p in folder.iterdir()] == [f".receval-{os.getpid()}-0.tmp"]
    True
    """
    removed: list[Path] = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for entry in os.scandir(folder):
        match = _TEMPORARY.match(entry.name)
        if not match or int(match.group(1)) == os.getpid() or _running(int(match.group(1))):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            with _locked(folder):
                try:
                    if (path / _JOURNAL).exists():
                        _complete(folder, path)
                except (OSError, ValueError, KeyError):  # cannot be completed (a target became a folder...)
                    continue  # left as found: the old files are kept, and so is the evidence
                shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _clean_once(folder: Path) -> None:
    folder = folder.resolve()
    if folder not in _CLEANED and folder.is_dir():
        remove_stale_temporaries(folder)
        _CLEANED.add(folder)


def _check_replaceable(target: Path) -> None:
    """Refuse a ``target`` that exists and is not a regular file, before anything is written.

    The rename that puts a new file in place would replace whatever is there: a
    device (``/dev/null``), a named pipe or a socket would become a plain file. A
    command refuses such a path with its option before any work
    (:func:`receval.outputs.check_output_file`); this is the writer's own last check.
    """
    try:
        mode = os.stat(target).st_mode
    except (OSError, ValueError):  # nothing there (or a name no file can have): nothing to replace
        return
    if not stat.S_ISREG(mode):
        raise ConfigError(
            f"{target}: exists and is not a regular file (a device, named pipe, socket or folder); writing would "
            "replace it with a file: name a regular file or a new path; nothing was written"
        )


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp_path)`` then rename the temporary file to ``path``.

    The first write of this process into a folder also removes the temporaries that
    killed processes left there (:func:`remove_stale_temporaries`). A ``path`` that
    exists and is not a regular file is refused before ``write`` is called.

    Returns
    -------
    pathlib.Path
        ``path``, now holding what ``write`` wrote.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = atomic_write(target, lambda p: p.write_text("ok"))
    >>> target.read_text()
    'ok'
    >>> atomic_write("/dev/null", lambda p: p.write_text("never written"))
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: /dev/null: exists and is not a regular file (...); writing would replace it ...
    """
    path = Path(path)
    _check_replaceable(path)
    _clean_once(path.parent)
    tmp = path.parent / temporary_name()
    try:
        with naming_path(path):  # a full disk names no file: the target is the one to name
            write(tmp)
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


class Publication:
    """A set of files staged to appear together in one or more folders (see :func:`publish`).

    :meth:`path` tells where to write each file of the set now; :meth:`remove` names
    files of the old set the new one no longer has. Every target must lie inside one of
    the folders the publication was opened for: a name that would leave them (``..``,
    an absolute path) is refused before anything is written.
    """

    def __init__(self, folders: tuple[Path, ...]) -> None:
        self._folders = tuple(dict.fromkeys(Path(f).resolve() for f in folders))
        self._stages: dict[Path, Path] = {}
        self._removed: dict[Path, set[str]] = {}
        self._created: list[Path] = []  # folders this publication made, deepest first: removed again on failure
        self._committed = False

    def _locate(self, target: str | Path) -> tuple[Path, str]:
        resolved = Path(target).resolve()
        for folder in self._folders:
            if resolved != folder and resolved.is_relative_to(folder):
                return folder, resolved.relative_to(folder).as_posix()
        raise ConfigError(
            f"{target}: lies outside {' and '.join(map(str, self._folders))}, where this output was asked for; "
            "nothing was written"
        )

    def path(self, target: str | Path) -> Path:
        """The staged file to write now for ``target`` (its folders exist); it becomes ``target`` on success."""
        folder, name = self._locate(target)
        _check_replaceable(folder / name)
        stage = self._stages.get(folder)
        if stage is None:
            self._created += [p for p in (folder, *folder.parents) if not p.exists()]
            folder.mkdir(parents=True, exist_ok=True)
            _clean_once(folder)
            stage = folder / temporary_name()
            (stage / _STAGED).mkdir(parents=True)
            self._stages[folder] = stage
        staged = stage / _STAGED / name
        staged.parent.mkdir(parents=True, exist_ok=True)
        return staged

    def target_of(self, path: str | Path) -> Path:
        """The target a staged file stands for (``path`` itself when it is not staged), to name it in errors.

        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()).resolve()
        >>> with publish(out) as pub:
        ...     pub.target_of(pub.path(out / "fold-1" / "train.tsv")) == out / "fold-1" / "train.tsv"
        True
        """
        for folder, stage in self._stages.items():
            if Path(path).is_relative_to(stage / _STAGED):
                return folder / Path(path).relative_to(stage / _STAGED)
        return Path(path)

    def remove(self, target: str | Path) -> None:
        """Delete ``target`` (a file of the old set) when the new set is published."""
        folder, name = self._locate(target)
        self._removed.setdefault(folder, set()).add(name)

    def owns(self, folder: str | Path, names: Iterable[str]) -> None:
        """Declare ``names`` (inside ``folder``) every file the command writes there, whatever its settings: those
        the new set does not write are removed when it is published, so that no file of an earlier run with other
        settings (a figure, a table of a variant no longer computed) stands beside the new ones as if one run had
        written them all. Other files of the folder are left alone.

        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> for name in ("a.csv", "b.csv", "notes.txt"):
        ...     _ = (out / name).write_text("old")
        >>> with publish(out) as pub:
        ...     pub.owns(out, ["a.csv", "b.csv"])
        ...     _ = pub.path(out / "a.csv").write_text("new")
        >>> sorted(p.name for p in out.iterdir())  # b.csv was not written this time; notes.txt is not the command's
        ['a.csv', 'notes.txt']
        """
        for name in names:
            self.remove(Path(folder) / name)  # the journal keeps what the new set writes

    def _commit(self) -> None:
        folders = sorted(set(self._stages) | set(self._removed))
        with ExitStack() as locks:
            for folder in folders:  # in one order, so two publishers cannot wait on each other
                folder.mkdir(parents=True, exist_ok=True)
                locks.enter_context(_locked(folder))
            with _signals_held():
                for folder in folders:
                    stage = self._stages.get(folder)
                    if stage is None:
                        stage = self._stages[folder] = folder / temporary_name()
                        (stage / _STAGED).mkdir(parents=True)
                    files = sorted(p.relative_to(stage / _STAGED).as_posix()
                                   for p in (stage / _STAGED).rglob("*") if not p.is_dir())  # fmt: skip
                    journal = {"files": files, "remove": sorted(self._removed.get(folder, set()) - set(files))}
                    write_text(stage / _JOURNAL, json.dumps(journal))
                for folder in folders:
                    _complete(folder, self._stages[folder])
                self._committed = True

    def _discard(self) -> None:
        """Delete what was staged, except a set whose moves have begun (the next writer completes it); before a
        commit, also the folders made for it that are empty again (an interrupted command leaves no new folder)."""
        for stage in self._stages.values():
            if not (stage / _JOURNAL).exists():
                shutil.rmtree(stage, ignore_errors=True)
        for folder in () if self._committed else self._created:
            try:
                folder.rmdir()  # only an empty one: another writer's files stay
            except OSError:
                break


@contextmanager
def publish(*folders: str | Path) -> Iterator[Publication]:
    """Stage a set of files for ``folders``; on success they all appear, on any failure none does.

    Inside the block, write each file to ``publication.path(target)``. When the block
    ends normally, every staged file replaces its target (SIGINT and SIGTERM are held
    meanwhile); when it raises, the staged files are deleted and the folders keep what
    they held. Folders are created when missing; files of theirs the set does not name
    are left alone.

    Yields
    ------
    Publication
        Its ``path(target)`` gives the staged name to write for ``target``.

    Examples
    --------

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> with publish(out) as pub:
    ...     _ = pub.path(out / "train.tsv").write_text("new train")
    ...     _ = pub.path(out / "fold-1" / "test.tsv").write_text("new test")
    ...     (out / "train.tsv").exists()  # nothing is visible before the block ends
    False
    >>> sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    ['fold-1', 'fold-1/test.tsv', 'train.tsv']
    >>> with publish(out) as pub:
    ...     pub.path(out / ".." / "escape.txt")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: .../escape.txt: lies outside ..., where this output was asked for; nothing was written
    """
    publication = Publication(tuple(Path(f) for f in folders))
    try:
        with naming_path(folders[0]):  # a failed write inside names no file: the folder being written is named
            yield publication
    except BaseException as err:
        publication._discard()
        if isinstance(err, OSError) and err.filename is not None:
            err.filename = str(publication.target_of(err.filename))  # the file the user asked for, not its stage
        raise
    try:
        publication._commit()
    finally:
        publication._discard()  # what a failed commit staged; a completed one left nothing


def write_text(path: str | Path, text: str | Iterable[str]) -> Path:
    """Atomically write UTF-8 text, one string or its pieces in order (see :func:`atomic_write`).

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile
    >>> write_text(Path(tempfile.mkdtemp()) / "note.txt", "λ = 4").read_text(encoding="utf-8")
    'λ = 4'
    >>> write_text(Path(tempfile.mkdtemp()) / "two.txt", iter(["a\\n", "b\\n"])).read_text(encoding="utf-8")
    'a\\nb\\n'
    """
    pieces = (text,) if isinstance(text, str) else text

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            for piece in pieces:
                f.write(piece)

    return atomic_write(path, write)


def write_frame(path: str | Path, frame: pd.DataFrame, *, index: bool = False, format: str | None = None) -> Path:
    """Atomically write a DataFrame as Parquet, CSV or TSV, chosen by ``format`` or else the file's extension.

    ``format`` is ``"parquet"``, ``"csv"`` or ``"tsv"``; without it :data:`PARQUET_SUFFIXES` are
    Parquet, :data:`TSV_SUFFIXES` tab-separated, anything else comma-separated. Floats
    are written at full precision (pandas' ``repr``), so the file reads back to the same
    doubles.

    Returns
    -------
    pathlib.Path
        ``path``, now holding ``frame``.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> path = write_frame(Path(tempfile.mkdtemp()) / "t.tsv", pd.DataFrame({"user": [1], "item": [2]}))
    >>> path.read_text().splitlines()
    ['user\\titem', '1\\t2']
    """
    if format is None:
        suffix = Path(path).suffix.lower()
        format = "parquet" if suffix in PARQUET_SUFFIXES else "tsv" if suffix in TSV_SUFFIXES else "csv"
    if format == "parquet":
        return atomic_write(path, lambda p: frame.to_parquet(p, index=index))
    sep = "\t" if format == "tsv" else ","
    return atomic_write(path, lambda p: frame.to_csv(p, sep=sep, index=index))


def write_figure(path: str | Path, fig: Any, **savefig: Any) -> Path:
    """Atomically save a Matplotlib figure; the format comes from ``path``'s extension (PNG if it has none).

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> target = write_figure(Path(tempfile.mkdtemp()) / "f.png", Figure(figsize=(1, 1)), dpi=10)
    >>> target.read_bytes()[:4], sorted(p.name for p in target.parent.iterdir())
    (b'\\x89PNG', ['f.png'])
    """
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    return atomic_write(path, lambda p: fig.savefig(p, format=fmt, **savefig))
