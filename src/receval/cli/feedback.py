"""What the command line tells its user while it works: log lines and progress bars, both on stderr.

:func:`logging_to_stderr` sends the library's ``receval`` loggers to stderr as one-line
``receval: message`` records (warnings by default, ``-v`` info, ``-vv`` debug,
``--quiet`` errors only). :class:`TerminalProgress` is the progress callback
(:mod:`receval.progress`) of every command: one bar per task (what is running,
done/total, elapsed and ETA), drawn with rich only when stderr is a terminal and
``--quiet`` is not given; piped or redirected, nothing is drawn.

Examples
--------
>>> import io, logging
>>> stream = io.StringIO()
>>> with logging_to_stderr(verbosity=1, stream=stream):
...     logging.getLogger("receval.data").info("loaded 3 ratings")
...     logging.getLogger("receval.data").debug("not shown at -v")
>>> logging.getLogger("receval.data").info("not shown: outside the block")
>>> stream.getvalue()
'receval: loaded 3 ratings\\n'
>>> TerminalProgress(stream=io.StringIO()).enabled  # not a terminal: draws nothing
False
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

__all__ = ["TerminalProgress", "logging_to_stderr"]

_LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}


class _StderrHandler(logging.StreamHandler):
    """Writes to the ``sys.stderr`` of the moment (tests and tools replace it), or to a given stream."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__()
        self._fixed = stream

    @property
    def stream(self) -> IO[str]:
        return self._fixed if self._fixed is not None else sys.stderr

    @stream.setter
    def stream(self, value: IO[str]) -> None:  # logging.StreamHandler.__init__ assigns it
        pass


@contextmanager
def logging_to_stderr(verbosity: int = 0, quiet: bool = False, stream: IO[str] | None = None) -> Iterator[None]:
    """Show the ``receval`` loggers' records on stderr (or ``stream``) as ``receval: message`` lines.

    ``verbosity`` 0 shows warnings and errors, 1 adds info, 2 or more debug; ``quiet``
    shows errors only. On leaving the block the logger is as it was before.
    """
    logger = logging.getLogger("receval")
    handler = _StderrHandler(stream)
    handler.setFormatter(logging.Formatter("receval: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(_LEVELS[-1] if quiet else _LEVELS.get(verbosity, logging.DEBUG))
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


class TerminalProgress:
    """A progress callback drawing one rich bar per task on stderr, when stderr is a terminal.

    ``console`` (a rich console) replaces stderr, e.g. ``Console(force_terminal=True)`` in
    tests. The bars appear at the first report and are removed by :meth:`close`; a task
    reported again from 0 starts its bar again; a finished task other than the first
    (inner work, e.g. the simulations of the demo) leaves the display.
    """

    def __init__(self, *, quiet: bool = False, stream: IO[str] | None = None, console: Console | None = None) -> None:
        self._console = console
        self._stream = stream
        self._quiet = quiet
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._restore: dict[str, IO[str]] = {}

    @property
    def enabled(self) -> bool:
        """Whether anything is drawn: not quiet, and a terminal (or the given console)."""
        if self._quiet:
            return False
        if self._console is not None:
            return self._console.is_terminal
        stream = self._stream if self._stream is not None else sys.stderr
        isatty = getattr(stream, "isatty", None)
        return bool(isatty and isatty())

    def _start(self) -> Progress:
        from rich.console import Console
        from rich.file_proxy import FileProxy
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = self._console or Console(file=self._stream or sys.stderr, stderr=self._stream is None)
        progress = Progress(
            TextColumn("{task.description}", markup=False),  # a task's label is the user's text, never markup
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )

        class Above(FileProxy):
            """What the command writes to the terminal meanwhile, printed above the bars.

            rich's own proxy names the file it wraps, so that rich consoles write to it
            directly, under the bars (which then overwrite it); this one does not.
            """

            @property
            def rich_proxied_file(self) -> IO[str]:
                raise AttributeError("rich_proxied_file")  # rich consoles then write to this proxy

        for name in ("stdout", "stderr"):
            current = getattr(sys, name)
            if current.isatty() and self._console is None:  # only what goes to the terminal
                self._restore[name] = current
                setattr(sys, name, Above(console, current))
        progress.start()
        return progress

    def __call__(self, done: int, total: int, what: str) -> None:
        if not self.enabled:
            return
        if self._progress is None:
            self._progress = self._start()
        progress = self._progress
        task = self._tasks.get(what)
        if task is None:
            task = self._tasks[what] = progress.add_task(what, total=total, completed=done)
            progress.refresh()  # every task is seen at least once, however short
        elif done < next(t.completed for t in progress.tasks if t.id == task):  # the same task again, from 0
            progress.reset(task, total=total, completed=done)
        else:
            progress.update(task, total=total, completed=done)
        if done >= total and task != progress.task_ids[0]:  # finished inner work makes room
            progress.remove_task(task)
            del self._tasks[what]

    def close(self) -> None:
        """Remove the bars (they are transient) and stop drawing."""
        if self._progress is not None:
            for name, original in self._restore.items():
                getattr(sys, name).flush()
                setattr(sys, name, original)
            self._restore = {}
            self._progress.stop()
            self._progress = None
            self._tasks = {}

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
