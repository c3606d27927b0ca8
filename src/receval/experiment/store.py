"""The result store: one directory per experiment, Parquet files, atomic per-task writes.

Layout of an experiment directory::

    experiment.json            configuration, its hash, receval version, and where the data
                               sets were read (``data_paths``: label -> absolute path; see
                               :func:`data_paths`), written once
    parts/<task>.<table>.parquet   one file per task and table, each written to a
                               temporary name then renamed; ``<task>.task.parquet`` is
                               written last and marks the task as finished
    tasks.parquet              one row per task (rebuilt from parts/)
    aggregates.parquet         task_id, metric, value
    per_user.parquet           task_id, user_index, user, metric, value
    <table>.parquet            any further table (trajectories, slices, ...)
    tables.json                size and SHA-256 of each combined table (rebuilt with them)

The combined tables and ``tables.json`` are published as one set
(:func:`receval.atomic.publish`): a rebuild cut short by a signal or a full disk leaves
the previous set, never new tables beside an old ``tables.json``. ``tables.json`` is also
the store's record of which files in the directory it wrote: :meth:`ResultStore.clear`
(``force=True``) and a rebuild remove only those, the task files in ``parts/`` and
``experiment.json``, never a file of the user's that happens to lie beside them.

A run interrupted at any point (Ctrl-C, ``kill -9``, a crashed worker) leaves only
whole files behind: a task without its ``.task.parquet`` marker is simply run again,
and its other files are replaced atomically. The combined tables are rebuilt from
``parts/``, sorted by task id, so they never hold a task twice.

Files damaged after the fact (a disk error, a copy cut short, a file deleted by hand)
are found too: each marker records the size and SHA-256 checksum of every file of its
task, and a task whose marker is unreadable, or whose files are missing or differ from
the record, counts as *damaged* — never as finished. A resumed run runs it again;
:meth:`ResultStore.damaged` names such tasks and why, and the combined tables hold only
intact tasks; a combined table that differs from the size and checksum recorded in
``tables.json`` is rebuilt before it is read. A damaged ``experiment.json`` is rewritten
by a run of the configuration whose tasks the markers record.

Reading without receval::

    import pandas as pd
    tasks = pd.read_parquet("results/quickstart/tasks.parquet")
    agg = pd.read_parquet("results/quickstart/aggregates.parquet").merge(tasks, on="task_id")

or with DuckDB (not a dependency of receval)::

    SELECT t.recommender, a.metric, avg(a.value)
    FROM 'results/quickstart/aggregates.parquet' a JOIN 'results/quickstart/tasks.parquet' t USING (task_id)
    GROUP BY ALL;

Examples
--------
>>> import tempfile
>>> store = ResultStore(tempfile.mkdtemp())
>>> store.finished_ids()
set()
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from receval import jsontext
from receval.atomic import atomic_write, publish, remove_stale_temporaries, write_text
from receval.errors import ConfigError, DataError
from receval.outputs import safe_name

if TYPE_CHECKING:
    from receval.experiment.config import DatasetSpec

__all__ = [
    "ResultStore",
    "CORE_TABLES",
    "DATA_PATHS",
    "INPUTS",
    "LOCK_FILE",
    "data_paths",
    "folder_lock",
    "recorded_data_path",
]

CORE_TABLES = ("tasks", "aggregates", "per_user")
_MARKER = "task"
_FILES = "files"  # the marker's column recording {table: [size, sha256]} of the task's files
_UNREADABLE = (OSError, ValueError, pa.ArrowException)  # what reading a damaged file raises
_PART = re.compile(r"^[^.]+\.[^.]+\.parquet$")  # parts/<task>.<table>.parquet: the only files the store puts there
_CHOOSE = "choose another out= or pass force=True"
_PARAMETERS = ("out", "force")  # the parameters _CHOOSE names (the CLI shows its flags)
DATA_PATHS = "data_paths"  # experiment.json's record of where each data set was read
INPUTS = "inputs"  # experiment.json's record of the content hash of each file read (see datasets.input_hashes)


LOCK_FILE = ".receval.lock"
"""The file a run holds while it writes into its output folder (removed when it ends; see :func:`folder_lock`)."""


@contextmanager
def folder_lock(root: str | Path, command: str) -> Iterator[None]:
    """Hold ``root`` for one process: a second one that tries is refused at once, not made to wait.

    Two runs writing into one folder would interleave their work (two Optuna processes
    telling the same trial, a budget of 6 spent as 7 trials, tasks written twice). The
    lock is the operating system's (``flock`` on :data:`LOCK_FILE` in the folder, which
    a killed process releases; the folder itself is what :func:`receval.atomic.publish`
    locks for a moment); the file is removed when the run ends, and the folder, when
    the run created it and leaves it empty (bad input found after the lock was taken).
    Where ``flock`` does not exist (Windows) nothing is locked.

    Returns
    -------
    Iterator[None]
        A context: the folder is held inside it.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()) / "out"
    >>> with folder_lock(root, "receval tune"):
    ...     with folder_lock(root, "receval tune"):
    ...         pass
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: output folder '...out' is in use by receval tune (process ...); wait for it to end, ...
    >>> root.exists()  # created for the run, removed again: nothing was written
    False
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows has no flock
        yield
        return
    folder = Path(root)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = os.stat(path).st_ino == os.fstat(fd).st_ino  # not a file its holder removed as it ended
        except (BlockingIOError, FileNotFoundError):
            held = False
        if not held:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another receval process"
            raise ConfigError(
                f"output folder {str(folder)!r} is in use by {holder}; wait for it to end, or choose another out=",
                parameters=("out",),
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{command} (process {os.getpid()})".encode(), 0)  # what the next one is told
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # while still held: the next run makes its own
    finally:
        os.close(fd)
        if created:
            try:
                folder.rmdir()  # only when empty
            except OSError:
                pass


def data_paths(datasets: Mapping[str, DatasetSpec]) -> dict[str, str]:
    """Each read data set's file or folder as an absolute path, for ``experiment.json``'s ``data_paths``.

    A configuration names its data relative to its own folder; the run records where that
    was, so that a report made later, from any folder, reads the data the run read.
    Generated data sets have no path and no entry.

    Returns
    -------
    dict of str to str
        ``{data set label: absolute path}``.

    Examples
    --------
    >>> import tempfile
    >>> from receval.experiment.config import DatasetSpec
    >>> base = Path(tempfile.mkdtemp()).resolve()
    >>> spec = DatasetSpec("ml", path="../data/ml-100k", format="movielens-100k", base=str(base / "exp"))
    >>> paths = data_paths({"ml": spec, "toy": DatasetSpec("toy", generate={"n_users": 50})})
    >>> paths == {"ml": str(base / "data" / "ml-100k")}  # the configuration's folder, one up, then data/ml-100k
    True
    """
    return {
        label: str(Path(spec.resolved_path).resolve())
        for label, spec in datasets.items()
        if spec.resolved_path is not None
    }


def recorded_data_path(meta: Mapping[str, Any], label: str) -> str | None:
    """Where the run described by ``meta`` (an ``experiment.json``) read data set ``label``.

    The record is ``meta["data_paths"]`` (see :func:`data_paths`). A store written before
    that record gives the configuration's path only when it is absolute: a relative one
    meant the configuration's folder, which such a store does not record.

    Returns
    -------
    str or None
        The absolute path, or None (a generated data set, an unknown label, or no record).

    Examples
    --------
    >>> meta = {"data_paths": {"ml": "/data/ml-100k"}, "config": {"datasets": {"old": {"path": "/srv/old.csv"}}}}
    >>> recorded_data_path(meta, "ml"), recorded_data_path(meta, "old"), recorded_data_path(meta, "toy")
    ('/data/ml-100k', '/srv/old.csv', None)
    """
    recorded = meta.get(DATA_PATHS)
    if isinstance(recorded, dict) and label in recorded:
        return str(recorded[label])
    spec = ((meta.get("config") or {}).get("datasets") or {}).get(label)
    path = spec.get("path") if isinstance(spec, dict) else None
    return str(path) if path is not None and Path(str(path)).is_absolute() else None


def _changed_inputs(old: Any, new: Any) -> str | None:
    """What differs between two records of input hashes (see :data:`INPUTS`), in words; None when nothing does.

    A store written before the record (``old`` missing) cannot tell, and is taken as it is.

    Examples
    --------
    >>> _changed_inputs({"datasets": {"ml": "a" * 64}}, {"datasets": {"ml": "b" * 64}})
    "data set 'ml' changed since (sha256 aaaaaaaaaaaa…, now bbbbbbbbbbbb…)"
    >>> _changed_inputs(None, {"datasets": {"ml": "b" * 64}}) is None
    True
    """
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    words = {"datasets": "data set", "test_path": "the test file of data set", "groups": "the groups file"}
    for part in sorted(set(old) | set(new)):
        before, now = old.get(part) or {}, new.get(part) or {}
        for label in sorted(set(before) | set(now)):
            if before.get(label) != now.get(label):
                then, this = (str(h)[:12] + "…" if h else "none" for h in (before.get(label), now.get(label)))
                return f"{words.get(part, part)} {label!r} changed since (sha256 {then}, now {this})"
    return None


def _atomic_parquet(frame: pd.DataFrame | pa.Table, path: Path, task_id: str | None = None) -> None:
    """Write to a temporary name, then rename (readers never see a partial file)."""
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    if task_id is not None:
        table = table.add_column(0, "task_id", pa.array([task_id] * table.num_rows, pa.string()))
    atomic_write(path, lambda tmp: pq.write_table(table, tmp))


def _signature(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


@dataclass(frozen=True)
class _Finished:
    """An intact task: its record (the marker's row, without the checksums) and its tables' files."""

    record: pd.DataFrame
    files: Mapping[str, Path]


class ResultStore:
    """An experiment directory (created on demand)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.parts = self.root / "parts"
        # checksums and markers already read, keyed by path and (size, mtime): a file is read again only when it changed
        self._digests: dict[Path, tuple[tuple[int, int], tuple[int, str]]] = {}
        self._markers: dict[Path, tuple[tuple[int, int], pd.DataFrame]] = {}

    # ------------------------------------------------------------ identity
    @property
    def meta_path(self) -> Path:
        """``experiment.json``."""
        return self.root / "experiment.json"

    def meta(self) -> dict[str, Any] | None:
        """The stored experiment description, or None for a new directory.

        Raises :class:`~receval.errors.DataError` naming the file when it is damaged
        (truncated, not JSON, not an object).

        Returns
        -------
        dict or None
            ``experiment.json``'s object (name, configuration and its hash, version,
            ``data_paths``, ...), or None when the file does not exist.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.meta() is None
        True
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> store.meta()["name"]
        'a'
        """
        if not self.meta_path.exists():
            return None
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise ValueError(f"a JSON {type(meta).__name__}, not an object")
        except (OSError, ValueError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise DataError(
                f"{self.meta_path}: damaged experiment description ({err}); run the same configuration "
                "into this folder to rewrite it"
            ) from None
        return meta

    def is_store(self) -> bool:
        """Whether the directory holds results of ``receval run``: an ``experiment.json``, or task files in ``parts/``.

        A store whose ``experiment.json`` was lost still counts (its tasks' markers are read).

        Returns
        -------
        bool
            True for a result store, False for a missing folder or one receval did not write.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.is_store()
        False
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> store.is_store()
        True
        """
        if self.meta_path.is_file():
            return True
        return self.parts.is_dir() and any(self.parts.glob(f"*.{_MARKER}.parquet"))

    def _recorded_hashes(self) -> set[str]:
        """The configuration hashes the intact tasks' markers record."""
        hashes: set[str] = set()
        for finished in self._scan()[0].values():
            if "config_hash" in finished.record:
                hashes.update(str(h) for h in finished.record["config_hash"])
        return hashes

    def check(self, meta: Mapping[str, Any], *, force: bool = False) -> bool:
        """Whether the directory may hold the configuration ``meta["config_hash"]`` (reads only).

        Returns True when existing results must be cleared first (``force`` over another
        configuration's results); raises :class:`ConfigError` when the directory holds
        another configuration's results (or unrelated files) and ``force`` is not set.
        A damaged ``experiment.json`` is judged by the hashes the task markers record.

        Returns
        -------
        bool
            Whether :meth:`open` must clear the directory first.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> store.check({"name": "a", "config_hash": "h"}), store.check({"name": "b", "config_hash": "g"}, force=True)
        (False, True)
        >>> store.check({"name": "b", "config_hash": "g"})
        Traceback (most recent call last):
        ...
        receval.errors.ConfigError: output directory ... holds results of a different configuration ('a', hash h; ...
        """
        try:
            old = self.meta()
        except DataError as err:
            others = self._recorded_hashes() - {meta["config_hash"]}
            if not others:
                return False  # our own experiment: open() rewrites the description
            if not force:
                raise ConfigError(
                    f"{err.message}; its tasks belong to another configuration (hash {', '.join(sorted(others))}); "
                    f"{_CHOOSE} to replace them (only the files receval wrote are removed)",
                    parameters=_PARAMETERS,
                ) from None
            return True
        if old is None:
            if self.root.exists() and any(p.name != LOCK_FILE for p in self.root.iterdir()) and not force:
                raise ConfigError(
                    f"output directory {str(self.root)!r} is not empty and holds no receval experiment; "
                    f"{_CHOOSE} to write into it (its files are kept)",
                    parameters=_PARAMETERS,
                )
            return False
        if old.get("config_hash") == meta["config_hash"]:
            changed = _changed_inputs(old.get(INPUTS), meta.get(INPUTS))
            if changed is None:
                return False
            if not force:
                raise ConfigError(
                    f"output directory {str(self.root)!r} holds results of this configuration over other data: "
                    f"{changed}; {_CHOOSE} to replace them (only the files receval wrote are removed)",
                    parameters=_PARAMETERS,
                )
            return True
        if not force:
            raise ConfigError(
                f"output directory {str(self.root)!r} holds results of a different configuration "
                f"({old.get('name')!r}, hash {old.get('config_hash')}; this one is {meta['config_hash']}); "
                f"{_CHOOSE} to replace them (only the files receval wrote are removed)",
                parameters=_PARAMETERS,
            )
        return True

    def open(self, meta: Mapping[str, Any], *, force: bool = False) -> None:
        """Claim the directory for ``meta`` (see :meth:`check`); ``force`` deletes another configuration's results.

        Only what the store wrote is deleted (see :meth:`clear`): a folder that holds no
        experiment is written into and keeps its files.

        Returns
        -------
        None
            The directory then holds ``experiment.json`` and ``parts/``.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> sorted(p.name for p in store.root.iterdir())
        ['experiment.json', 'parts']
        """
        if self.check(meta, force=force):
            self.clear()
        self.root.mkdir(parents=True, exist_ok=True)
        self.parts.mkdir(exist_ok=True)
        for folder in (self.root, self.parts):  # temporaries of a killed run
            remove_stale_temporaries(folder)
        try:
            intact = self.meta() is not None
        except DataError:
            intact = False
        if not intact:
            write_text(self.meta_path, jsontext.dumps(dict(meta), indent=2, sort_keys=True))

    @property
    def manifest_path(self) -> Path:
        """``tables.json``: size and checksum of each combined table."""
        return self.root / "tables.json"

    def _combined(self) -> list[Path]:
        """The combined tables the store wrote: those ``tables.json`` records, and those of the tasks in parts/."""
        try:
            recorded = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            names = set(recorded) if isinstance(recorded, dict) else set()
        except (OSError, ValueError):  # missing or damaged: the tables of the tasks still say what was written
            names = set()
        if self.parts.exists():
            names.update(self.table_names())
        return [self.root / f"{name}.parquet" for name in sorted(names) if safe_name(name) == name]

    def clear(self) -> None:
        """Delete the results this store wrote, and nothing else.

        Removed: the task files in parts/ (``<task>.<table>.parquet``; parts/ itself when
        that empties it), the combined tables ``tables.json`` records or the tasks name,
        ``tables.json`` and ``experiment.json``. Any other file stays.

        Returns
        -------
        None
            The directory keeps only the files the store did not write.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> store.write_task("t1", {"status": "ok"}, {"aggregates": pd.DataFrame({"metric": ["m"], "value": [1.0]})})
        >>> _ = store.rebuild()
        >>> _ = (store.root / "my_data.parquet").write_text("the user's")
        >>> store.clear()
        >>> sorted(p.name for p in store.root.iterdir())
        ['my_data.parquet']
        """
        for path in self._combined():
            path.unlink(missing_ok=True)
        if self.parts.is_dir():
            for entry in self.parts.iterdir():
                if _PART.match(entry.name) and entry.is_file():
                    entry.unlink()
            remove_stale_temporaries(self.parts)
            if not any(self.parts.iterdir()):
                self.parts.rmdir()
        self.manifest_path.unlink(missing_ok=True)
        self.meta_path.unlink(missing_ok=True)
        self._digests.clear()
        self._markers.clear()

    # ------------------------------------------------------------ per task
    def _digest(self, path: Path) -> tuple[int, str]:
        """(size, SHA-256) of a file, read again only when its size or modification time changed."""
        signature = _signature(path)
        known = self._digests.get(path)
        if known is None or known[0] != signature:
            sha = hashlib.sha256()
            size = 0
            with path.open("rb") as fh:
                while block := fh.read(1 << 20):
                    sha.update(block)
                    size += len(block)
            known = (signature, (size, sha.hexdigest()))
            self._digests[path] = known
        return known[1]

    def _marker(self, path: Path) -> pd.DataFrame:
        signature = _signature(path)
        known = self._markers.get(path)
        if known is None or known[0] != signature:
            known = (signature, pq.read_table(path).to_pandas())
            self._markers[path] = known
        return known[1]

    def _verify(self, task_id: str, marker: Path) -> _Finished | str:
        """The intact task, or why it is damaged."""
        name = f"parts/{marker.name}"
        try:
            record = self._marker(marker)
        except _UNREADABLE as err:
            return f"{name} is unreadable ({type(err).__name__}: {err})"
        try:
            recorded = json.loads(record[_FILES].iloc[0]) if len(record) == 1 and _FILES in record else None
        except (TypeError, ValueError):
            recorded = None
        if not isinstance(recorded, dict):
            return f"{name} records no file sizes and checksums (damaged, or written by an older receval)"
        files = {}
        for table, (size, sha) in sorted(recorded.items()):
            path = self.parts / f"{task_id}.{table}.parquet"
            if not path.exists():
                return f"parts/{path.name} is missing"
            try:
                actual = self._digest(path)
            except OSError as err:
                return f"parts/{path.name} is unreadable ({err})"
            if actual[0] != size:
                return f"parts/{path.name} has {actual[0]} bytes, the marker recorded {size}"
            if actual[1] != sha:
                return f"parts/{path.name} differs from the checksum its marker recorded"
            files[table] = path
        return _Finished(record.drop(columns=_FILES), files)

    def _scan(self) -> tuple[dict[str, _Finished], dict[str, str]]:
        """(intact tasks by id, damaged tasks' reasons by id), in task-id order."""
        intact: dict[str, _Finished] = {}
        damaged: dict[str, str] = {}
        if not self.parts.exists():
            return intact, damaged
        for marker in sorted(self.parts.glob(f"*.{_MARKER}.parquet")):
            task_id = marker.name.split(".")[0]
            verdict = self._verify(task_id, marker)
            if isinstance(verdict, str):
                damaged[task_id] = verdict
            else:
                intact[task_id] = verdict
        return intact, damaged

    def damaged(self) -> dict[str, str]:
        """Tasks whose marker exists but whose files are unreadable, missing or changed: id -> what is wrong.

        A resumed run runs them again; until then they count as not finished.

        Returns
        -------
        dict of str to str
            Task id to the first problem found, in words.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.write_task("t1", {"status": "ok"}, {"aggregates": pd.DataFrame({"metric": ["m"], "value": [1.0]})})
        >>> store.finished_ids()
        {'t1'}
        >>> (store.parts / "t1.aggregates.parquet").unlink()
        >>> store.damaged(), store.finished_ids()
        ({'t1': 'parts/t1.aggregates.parquet is missing'}, set())
        """
        return self._scan()[1]

    def finished_ids(self, *, ok_only: bool = True) -> set[str]:
        """Ids of intact finished tasks (only the successful ones unless ``ok_only=False``); see :meth:`damaged`.

        Returns
        -------
        set of str
            The task ids.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> agg = pd.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})
        >>> store.write_task("t1", {"status": "ok"}, {"aggregates": agg})
        >>> store.write_task("t2", {"status": "failed"}, {})
        >>> store.finished_ids(), sorted(store.finished_ids(ok_only=False))
        ({'t1'}, ['t1', 't2'])
        """
        intact = self._scan()[0]
        if not ok_only:
            return set(intact)
        return {tid for tid, f in intact.items() if "status" in f.record and (f.record["status"] == "ok").all()}

    def write_task(self, task_id: str, record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> None:
        """Write one task's tables, then its record (the marker, with their sizes and checksums), each atomically.

        Task ids and table names must be file names without a dot; ``task`` is reserved.

        Returns
        -------
        None
            ``parts/<task_id>.<table>.parquet`` for each table and the marker
            ``parts/<task_id>.task.parquet``; the task counts as finished.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> agg = pd.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})
        >>> store.write_task("t1", {"status": "ok", "seed": 0}, {"aggregates": agg})
        >>> sorted(p.name for p in store.parts.iterdir())
        ['t1.aggregates.parquet', 't1.task.parquet']
        """
        if _MARKER in tables:
            raise ValueError("table name 'task' is reserved")
        if _FILES in record:
            raise ValueError(f"record key {_FILES!r} is reserved")
        bad = [name for name in (task_id, *tables) if "." in name or safe_name(name) != name]
        if bad:
            what = "task id" if bad[0] == task_id else "table name"
            raise ValueError(f"{what} {bad[0]!r} cannot be part of a file name; use letters, digits, '_' and '-'")
        self.parts.mkdir(parents=True, exist_ok=True)
        for old in self.parts.glob(f"{task_id}.*.parquet"):  # a failed earlier attempt may have left tables
            if old.name.split(".")[1] not in tables:
                old.unlink()
        files = {}
        for name, frame in tables.items():
            path = self.parts / f"{task_id}.{name}.parquet"
            _atomic_parquet(frame, path, task_id)
            files[name] = list(self._digest(path))
        marker = dict(record, **{_FILES: json.dumps(files, sort_keys=True)})
        _atomic_parquet(pa.Table.from_pylist([marker]), self.parts / f"{task_id}.{_MARKER}.parquet", task_id)

    def read_parts(self, table: str, columns: list[str] | None = None) -> pd.DataFrame:
        """All per-task files of ``table`` concatenated in task-id order (intact finished tasks only).

        ``table="task"`` gives the tasks' records.

        Returns
        -------
        pandas.DataFrame
            A ``task_id`` column first, then the table's columns (``columns`` only, when given).

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> agg = pd.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})
        >>> store.write_task("t1", {"status": "ok"}, {"aggregates": agg})
        >>> store.read_parts("aggregates").values.tolist()
        [['t1', 'ndcg@10', 0.5]]
        """
        intact = self._scan()[0]
        if table == _MARKER:
            frames = [f.record if columns is None else f.record[columns] for f in intact.values()]
        else:
            frames = [pd.read_parquet(f.files[table], columns=columns) for f in intact.values() if table in f.files]
        frames = [f for f in frames if len(f)]
        if not frames:  # every record has a status: readers select on it even when no task is intact
            return pd.DataFrame(columns=columns or (["task_id", "status"] if table == _MARKER else ["task_id"]))
        return pd.concat(frames, ignore_index=True)

    def table_names(self) -> list[str]:
        """Names of the tables of the intact tasks in parts/ (``tasks`` first).

        Returns
        -------
        list of str
            ``tasks``, then the others sorted.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> agg = pd.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})
        >>> store.write_task("t1", {"status": "ok"}, {"per_user": agg, "aggregates": agg})
        >>> store.table_names()
        ['tasks', 'aggregates', 'per_user']
        """
        names = {name for finished in self._scan()[0].values() for name in finished.files}
        return ["tasks", *sorted(names)]

    def rebuild(self) -> dict[str, int]:
        """Rewrite the combined tables from the intact tasks in parts/; returns the row count of each.

        The tables and ``tables.json`` appear as one set (see the module docs). A combined
        table the store wrote that no intact task contributes to any more is removed; other
        files in the directory are not touched.

        Returns
        -------
        dict of str to int
            Table name to its number of rows.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> agg = pd.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})
        >>> store.write_task("t1", {"status": "ok"}, {"aggregates": agg})
        >>> store.rebuild()
        {'tasks': 1, 'aggregates': 1}
        """
        counts = {}
        manifest = {}
        names = self.table_names()
        digests = {}
        with publish(self.root) as publication:
            for path in self._combined():
                if path.stem not in names:
                    publication.remove(path)
            for name in names:
                frame = self.read_parts(_MARKER if name == "tasks" else name)
                path = self.root / f"{name}.parquet"
                staged = publication.path(path)
                _atomic_parquet(frame, staged)
                counts[name] = len(frame)
                digests[path] = self._digest(staged)
                self._digests.pop(staged, None)  # the staged name is gone after the publication
                manifest[name] = list(digests[path])
            text = json.dumps(manifest, indent=1, sort_keys=True)
            write_text(publication.path(self.manifest_path), text)
        for path, digest in digests.items():  # a rename keeps size and time: the digest holds for the target
            self._digests[path] = (_signature(path), digest)
        return counts

    def _stale(self, table: str) -> bool:
        """Whether a combined table may not reflect parts/: missing, older, changed since written, or damage present."""
        path = self.root / f"{table}.parquet"
        if not path.exists():
            return True
        newest = max((p.stat().st_mtime for p in self.parts.glob("*.parquet")), default=0.0)
        if self.parts.exists():
            newest = max(newest, self.parts.stat().st_mtime)  # a deleted part changes the folder's time
        if path.stat().st_mtime < newest or self.damaged():
            return True
        try:
            recorded = json.loads(self.manifest_path.read_text(encoding="utf-8")).get(table)
        except (OSError, ValueError, AttributeError):  # missing, damaged, or not an object
            return True
        return recorded != list(self._digest(path))

    def read(self, table: str) -> pd.DataFrame:
        """A combined table, rebuilt from the intact tasks first when it may not reflect them (see the module docs).

        Returns
        -------
        pandas.DataFrame
            The table; one the store does not hold is a ConfigError listing those it does.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.open({"name": "a", "config_hash": "h"})
        >>> agg = pd.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})
        >>> store.write_task("t1", {"status": "ok"}, {"aggregates": agg})
        >>> store.read("aggregates")["value"].tolist()
        [0.5]
        """
        if self._stale(table):
            self.rebuild()
        path = self.root / f"{table}.parquet"
        if not path.exists():
            raise ConfigError(f"{str(self.root)!r} has no table {table!r}; tables: {', '.join(self.table_names())}")
        return pd.read_parquet(path)
