"""The one family of exceptions receval raises.

Every error says what was wrong, where (file, line, column, id) and, when it can,
how to fix it. The command line prints the message and exits with status 2.

Examples
--------
>>> err = DataError("rating 7 is outside the scale 1..5", path="u.data", line=3, column="rating")
>>> str(err)
'u.data, line 3, column rating: rating 7 is outside the scale 1..5'
"""

from __future__ import annotations

__all__ = [
    "ReceValError",
    "DataError",
    "ConfigError",
    "MetricError",
    "NotFittedError",
    "ColdStartError",
]


class ReceValError(Exception):
    """Base class of every error receval raises on purpose.

    Parameters
    ----------
    message
        What was wrong and how to fix it.
    path, line, column
        Where the problem is, when it comes from a file (``line`` is 1-based and
        counts the header, as an editor shows it).
    """

    def __init__(
        self,
        message: str,
        *,
        path: object | None = None,
        line: int | None = None,
        column: str | int | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.column = column
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class DataError(ReceValError, ValueError):
    """Malformed or inconsistent input data (files, frames, arrays)."""


class ConfigError(ReceValError, ValueError):
    """A bad option, parameter, algorithm name or experiment configuration."""


class MetricError(ReceValError, ValueError):
    """An unknown metric name, a bad cutoff, or inputs a metric cannot score."""


class NotFittedError(ReceValError, RuntimeError):
    """A model was asked to score or predict before ``fit``."""


class ColdStartError(ReceValError, KeyError):
    """Users or items outside the id space a model was trained on."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self._render()
