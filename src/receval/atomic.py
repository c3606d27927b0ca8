"""Write files so that a reader never sees a half-written one.

Each writer writes to a hidden temporary name in the target's folder
(``.<name>.tmp-<pid>``), then renames it over the target (atomic on POSIX file
systems); on failure the temporary file is removed and the target is left as it was.
A process killed with ``SIGKILL`` cannot remove its temporary: the first write into
the same folder by a later process removes the temporaries of processes that no
longer run (:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["atomic_write", "remove_stale_temporaries", "write_figure", "write_frame", "write_text"]

_TEMPORARY = re.compile(r"^\..+\.tmp-(\d+)$")
_CLEANED: set[Path] = set()  # folders already cleaned by this process


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Remove the temporaries ``.<name>.tmp-<pid>`` in ``folder`` whose process is gone; returns them.

    Temporaries of running processes (a concurrent writer) are kept.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / ".x.csv.tmp-999999999").write_text("half")  # no process has this pid
    >>> _ = (folder / f".y.csv.tmp-{os.getpid()}").write_text("mine")
    >>> [p.name for p in remove_stale_temporaries(folder)]
    ['.x.csv.tmp-999999999']
    >>> [p.name for p in folder.iterdir()] == [f".y.csv.tmp-{os.getpid()}"]
    True
    """
    removed: list[Path] = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for entry in os.scandir(folder):
        match = _TEMPORARY.match(entry.name)
        if match and int(match.group(1)) != os.getpid() and not _running(int(match.group(1))):
            Path(entry.path).unlink(missing_ok=True)
            removed.append(Path(entry.path))
    return removed


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp_path)`` then rename the temporary file to ``path``.

    The first write of this process into a folder also removes the temporaries that
    killed processes left there (:func:`remove_stale_temporaries`).

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = atomic_write(target, lambda p: p.write_text("ok"))
    >>> target.read_text()
    'ok'
    """
    path = Path(path)
    folder = path.parent.resolve()
    if folder not in _CLEANED and folder.is_dir():
        remove_stale_temporaries(folder)
        _CLEANED.add(folder)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Atomically write UTF-8 text."""
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def write_frame(path: str | Path, frame: pd.DataFrame, *, index: bool = False) -> Path:
    """Atomically write a DataFrame as Parquet, CSV or TSV, chosen by the file's extension."""
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return atomic_write(path, lambda p: frame.to_parquet(p, index=index))
    sep = "\t" if suffix in (".tsv", ".txt") else ","
    return atomic_write(path, lambda p: frame.to_csv(p, sep=sep, index=index))


def write_figure(path: str | Path, fig: Any, **savefig: Any) -> Path:
    """Atomically save a Matplotlib figure; the format comes from ``path``'s extension (PNG if it has none).

    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> target = write_figure(Path(tempfile.mkdtemp()) / "f.png", Figure(figsize=(1, 1)), dpi=10)
    >>> target.read_bytes()[:4], sorted(p.name for p in target.parent.iterdir())
    (b'\\x89PNG', ['f.png'])
    """
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    return atomic_write(path, lambda p: fig.savefig(p, format=fmt, **savefig))
