"""Progress of long-running work, reported to a callback and never printed by receval itself.

A progress callback is any function ``progress(done, total, what)``: ``done`` steps of
``total`` are finished in the task named ``what`` (e.g. ``"simulate rounds"``); within
one task ``done`` only grows, from 0 to ``total``. Long-running functions of receval
(:func:`receval.simulate.simulate`, the studies, the experiment runner, sharded
evaluation) take ``progress=`` and, when it is not given, report to the callback made
active by :func:`reporting` (none by default: the Python API is silent). The command
line makes one active that draws bars on a terminal's stderr.

Work that calls other reporting work (the demo simulates, a study fits models) gives
each its own ``what``, so a display can keep one row per task.

Examples
--------
>>> seen = []
>>> def count(n, progress=None):
...     notify = progress_to(progress)
...     for i in range(n):
...         notify(i + 1, n, "counting")
>>> count(2, progress=lambda done, total, what: seen.append((done, total, what)))
>>> seen
[(1, 2, 'counting'), (2, 2, 'counting')]
>>> with reporting(lambda done, total, what: seen.append(done)):
...     count(3)
>>> seen[-3:]
[1, 2, 3]
>>> count(3)  # no callback given and none active: nothing happens
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

__all__ = ["Progress", "active", "progress_to", "reporting"]


class Progress(Protocol):
    """A progress callback: ``done`` of ``total`` steps of ``what`` are finished."""

    def __call__(self, done: int, total: int, what: str) -> None: ...


_ACTIVE: ContextVar[Progress | None] = ContextVar("receval_progress", default=None)


def _silent(done: int, total: int, what: str) -> None:
    """The callback used when there is none: does nothing."""


def active() -> Progress | None:
    """The callback made active by :func:`reporting`, or None.

    Returns
    -------
    Progress or None
        The innermost active callback; None outside any :func:`reporting` block.

    Examples
    --------
    >>> active() is None
    True
    """
    return _ACTIVE.get()


@contextmanager
def reporting(progress: Progress | None) -> Iterator[Progress | None]:
    """Make ``progress`` the callback of every reporting function called in the block (None: silence).

    Yields
    ------
    Progress or None
        ``progress``; the previous callback is active again after the block.

    Examples
    --------

    >>> with reporting(print):
    ...     progress_to(None)(1, 4, "folds")
    1 4 folds
    """
    token = _ACTIVE.set(progress)
    try:
        yield progress
    finally:
        _ACTIVE.reset(token)


def progress_to(progress: Progress | None = None) -> Progress:
    """The callback to report to: ``progress`` when given, else the active one, else one that does nothing.

    Returns
    -------
    Progress
        A callable ``(done, total, what) -> None``.

    Examples
    --------
    >>> progress_to(None)(1, 2, "anything")  # silent
    """
    if progress is not None:
        return progress
    current = _ACTIVE.get()
    return current if current is not None else _silent
