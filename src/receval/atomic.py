"""Write files so that a reader never sees a half-written one.

Each writer writes to a hidden temporary name in the target's folder, then renames
it over the target (atomic on POSIX file systems); on failure the temporary file is
removed and the target is left as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["atomic_write", "write_figure", "write_frame", "write_text"]


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp_path)`` then rename the temporary file to ``path``.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = atomic_write(target, lambda p: p.write_text("ok"))
    >>> target.read_text()
    'ok'
    """
    path = Path(path)
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
