"""The result store: one directory per experiment, Parquet files, atomic per-task writes.

Layout of an experiment directory::

    experiment.json            configuration, its hash, receval version (written once)
    parts/<task>.<table>.parquet   one file per task and table, each written to a
                               temporary name then renamed; ``<task>.task.parquet`` is
                               written last and marks the task as finished
    tasks.parquet              one row per task (rebuilt from parts/)
    aggregates.parquet         task_id, metric, value
    per_user.parquet           task_id, user_index, user, metric, value
    <table>.parquet            any further table (trajectories, slices, ...)

A run interrupted at any point (Ctrl-C, ``kill -9``, a crashed worker) leaves only
whole files behind: a task without its ``.task.parquet`` marker is simply run again,
and its other files are replaced atomically. The combined tables are rebuilt from
``parts/``, sorted by task id, so they never hold a task twice.

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

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from receval.atomic import atomic_write, write_text
from receval.errors import ConfigError

__all__ = ["ResultStore", "CORE_TABLES"]

CORE_TABLES = ("tasks", "aggregates", "per_user")
_MARKER = "task"


def _atomic_parquet(frame: pd.DataFrame | pa.Table, path: Path, task_id: str | None = None) -> None:
    """Write to a temporary name, then rename (readers never see a partial file)."""
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    if task_id is not None:
        table = table.add_column(0, "task_id", pa.array([task_id] * table.num_rows, pa.string()))
    atomic_write(path, lambda tmp: pq.write_table(table, tmp))


class ResultStore:
    """An experiment directory (created on demand)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.parts = self.root / "parts"

    # ------------------------------------------------------------ identity
    @property
    def meta_path(self) -> Path:
        """``experiment.json``."""
        return self.root / "experiment.json"

    def meta(self) -> dict[str, Any] | None:
        """The stored experiment description, or None for a new directory."""
        if not self.meta_path.exists():
            return None
        return json.loads(self.meta_path.read_text(encoding="utf-8"))

    def check(self, meta: Mapping[str, Any], *, force: bool = False) -> bool:
        """Whether the directory may hold the configuration ``meta["config_hash"]`` (reads only).

        Returns True when existing results must be cleared first (``force`` over another
        configuration's results); raises :class:`ConfigError` when the directory holds
        another configuration's results (or unrelated files) and ``force`` is not set.
        """
        old = self.meta()
        if old is None:
            if self.root.exists() and any(self.root.iterdir()) and not force:
                raise ConfigError(
                    f"output directory {str(self.root)!r} is not empty and holds no receval experiment; "
                    "choose another --out or pass --force to write into it"
                )
            return False
        if old.get("config_hash") == meta["config_hash"]:
            return False
        if not force:
            raise ConfigError(
                f"output directory {str(self.root)!r} holds results of a different configuration "
                f"({old.get('name')!r}, hash {old.get('config_hash')}; this one is {meta['config_hash']}); "
                "choose another --out or pass --force to replace them"
            )
        return True

    def open(self, meta: Mapping[str, Any], *, force: bool = False) -> None:
        """Claim the directory for ``meta`` (see :meth:`check`); ``force`` deletes another configuration's results."""
        if self.check(meta, force=force):
            self.clear()
        self.root.mkdir(parents=True, exist_ok=True)
        self.parts.mkdir(exist_ok=True)
        for stale in [*self.parts.glob(".*.tmp-*"), *self.root.glob(".*.tmp-*")]:  # temps of a killed run
            stale.unlink(missing_ok=True)
        if self.meta() is None:
            write_text(self.meta_path, json.dumps(dict(meta), indent=2, sort_keys=True, default=str))

    def clear(self) -> None:
        """Delete the results this store wrote (parts, combined tables, experiment.json)."""
        if self.parts.exists():
            shutil.rmtree(self.parts)
        for path in self.root.glob("*.parquet"):
            path.unlink()
        if self.meta_path.exists():
            self.meta_path.unlink()

    # ------------------------------------------------------------ per task
    def finished_ids(self, *, ok_only: bool = True) -> set[str]:
        """Ids of tasks whose marker file exists (only the successful ones unless ``ok_only=False``)."""
        if not self.parts.exists():
            return set()
        ids = {p.name.split(".")[0] for p in self.parts.glob(f"*.{_MARKER}.parquet")}
        if not ok_only or not ids:
            return ids
        tasks = self.read_parts(_MARKER, columns=["task_id", "status"])
        return set(tasks.loc[tasks["status"] == "ok", "task_id"])

    def write_task(self, task_id: str, record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> None:
        """Write one task's tables, then its record (the marker), each atomically."""
        self.parts.mkdir(parents=True, exist_ok=True)
        for old in self.parts.glob(f"{task_id}.*.parquet"):  # a failed earlier attempt may have left tables
            if old.name.split(".")[1] not in tables:
                old.unlink()
        for name, frame in tables.items():
            if name == _MARKER:
                raise ValueError("table name 'task' is reserved")
            _atomic_parquet(frame, self.parts / f"{task_id}.{name}.parquet", task_id)
        _atomic_parquet(pa.Table.from_pylist([dict(record)]), self.parts / f"{task_id}.{_MARKER}.parquet", task_id)

    def read_parts(self, table: str, columns: list[str] | None = None) -> pd.DataFrame:
        """All per-task files of ``table`` concatenated in task-id order (finished tasks only)."""
        done = sorted(p.name.split(".")[0] for p in self.parts.glob(f"*.{_MARKER}.parquet"))
        frames = [
            pd.read_parquet(self.parts / f"{tid}.{table}.parquet", columns=columns)
            for tid in done
            if (self.parts / f"{tid}.{table}.parquet").exists()
        ]
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.DataFrame(columns=columns or ["task_id"])
        return pd.concat(frames, ignore_index=True)

    def table_names(self) -> list[str]:
        """Names of the tables present in parts/ (``tasks`` first)."""
        names = {p.name.split(".")[1] for p in self.parts.glob("*.parquet")} if self.parts.exists() else set()
        names.discard(_MARKER)
        return ["tasks", *sorted(names)]

    def rebuild(self) -> dict[str, int]:
        """Rewrite the combined tables from parts/; returns the row count of each."""
        counts = {}
        for name in self.table_names():
            frame = self.read_parts(_MARKER if name == "tasks" else name)
            _atomic_parquet(frame, self.root / f"{name}.parquet")
            counts[name] = len(frame)
        return counts

    def read(self, table: str) -> pd.DataFrame:
        """A combined table (rebuilt first when parts/ is newer)."""
        path = self.root / f"{table}.parquet"
        newest = max((p.stat().st_mtime for p in self.parts.glob("*.parquet")), default=0.0)
        if not path.exists() or path.stat().st_mtime < newest:
            self.rebuild()
        if not path.exists():
            raise ConfigError(f"{str(self.root)!r} has no table {table!r}; tables: {', '.join(self.table_names())}")
        return pd.read_parquet(path)
