"""The one family of exceptions receval raises.

Every error says what was wrong, where (file, line, column, id) and, when it can,
how to fix it. The command line prints the message and exits with status 2.

Examples
--------
>>> err = DataError("rating 7 is outside the scale 1..5", path="u.data", line=3, column="rating")
>>> str(err)
'u.data, line 3, column rating: rating 7 is outside the scale 1..5'

A message names the parameter that fixes it as a Python caller writes it (``force=True``,
``out=``) and lists it in ``parameters``; the command line shows the same message with its
own flags (:meth:`ReceValError.spelled`):

>>> err = ConfigError("results/ holds another experiment; pass force=True to replace it", parameters=["force"])
>>> str(err)
'results/ holds another experiment; pass force=True to replace it'
>>> err.spelled(lambda name, value: "--force")
'results/ holds another experiment; pass --force to replace it'
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

__all__ = [
    "Spelling",
    "describe_os_error",
    "did_you_mean",
    "naming_path",
    "ReceValError",
    "DataError",
    "ConfigError",
    "MetricError",
    "NotFittedError",
    "ColdStartError",
    "ReceValWarning",
]


Spelling = Callable[[str, "str | None"], "str | None"]
"""How a front end writes a parameter: ``(name, value text or None) -> text``, or ``None`` to keep ``name=value``."""


def _parameter(name: str) -> re.Pattern[str]:
    """``name=value`` as a word of its own; the value is quoted, a ``{...}`` mapping, or runs to whitespace, ",", ";"
    or ")" (a final "." or ":" ends the sentence), or is empty (a bare ``out=``)."""
    value = r"""'[^']*'|"[^"]*"|\{[^{}]*\}|[^\s,;)]+?(?=[.:]?(?:[\s,;)]|$))|"""
    return re.compile(rf"(?<![\w.\-]){re.escape(name)}=(?P<value>{value})")


def _spelled(message: str, parameters: Sequence[str], spelling: Spelling) -> str:
    """``message`` with each ``name=value`` of ``parameters`` (outside a quoted call) as ``spelling`` writes it."""
    for name in parameters:

        def spell(match: re.Match[str], name: str = name) -> str:
            if _in_call(match.string[: match.start()]):
                return match.group(0)  # an argument of a call the message quotes, not the caller's
            return spelling(name, match.group("value") or None) or match.group(0)

        message = _parameter(name).sub(spell, message)
    return message


def _in_call(before: str) -> bool:
    """Whether text ending with ``before`` is inside brackets opened right after a word (``f(``, ``x[``).

    >>> _in_call("as in ndcg@10(t=1, "), _in_call("a table (")
    (True, False)
    """
    opened: list[int] = []
    for i, ch in enumerate(before):
        if ch in "([":
            opened.append(i)
        elif ch in ")]" and opened:
            opened.pop()
    return any(i > 0 and not before[i - 1].isspace() for i in opened)


class ReceValError(Exception):
    """Base class of every error receval raises on purpose.

    Parameters
    ----------
    message
        What was wrong and how to fix it.
    path, line, column
        Where the problem is, when it comes from a file (``line`` is 1-based and
        counts the header, as an editor shows it).
    parameters
        The parameters the message names as ``name=value`` (or ``name=`` alone), in
        Python's spelling; :meth:`spelled` rewrites exactly these.
    """

    def __init__(
        self,
        message: str,
        *,
        path: object | None = None,
        line: int | None = None,
        column: str | int | None = None,
        parameters: Sequence[str] = (),
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.column = column
        self.parameters = tuple(parameters)
        super().__init__(self._render())

    def spelled(self, spelling: Spelling) -> str:
        """The rendered message with each of :attr:`parameters` written as ``spelling`` writes it.

        ``spelling(name, value)`` gets the parameter's name and the text after its ``=``
        (``None`` for a bare ``name=``) and returns the replacement, or ``None`` to keep
        the Python spelling. An occurrence inside a call or an index (``ndcg@10(t=1, k=5)``)
        is not a parameter of the caller and is left alone; one in a parenthesis is spelled.

        >>> err = ConfigError("no output: pass out=, or seed=3 with k=5 as in f(t=1, k=5)", parameters=["out", "k"])
        >>> err.spelled(lambda name, value: f"--{name}" + ("" if value is None else f" {value}"))
        'no output: pass --out, or seed=3 with --k 5 as in f(t=1, k=5)'
        """
        return self._render(_spelled(self.message, self.parameters, spelling))

    def _render(self, message: str | None = None) -> str:
        message = self.message if message is None else message
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {message}" if where else message


class ReceValWarning(RuntimeWarning):
    """A warning about a result (a metric undefined, users left out) that names its parameters as errors do.

    >>> w = ReceValWarning("Fallout is undefined; give threshold=4", parameters=["threshold"])
    >>> str(w), w.spelled(lambda name, value: f"--{name} {value}")
    ('Fallout is undefined; give threshold=4', 'Fallout is undefined; give --threshold 4')
    """

    def __init__(self, message: str, *, parameters: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.parameters = tuple(parameters)

    def spelled(self, spelling: Spelling) -> str:
        """The message with each of :attr:`parameters` written as ``spelling`` writes it (see :class:`ReceValError`)."""
        return _spelled(self.message, self.parameters, spelling)


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


# errno -> (what happened, how to fix it), in the words of someone who did not write the program
_OS_CAUSES: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("no space left on the device", "free some space or write elsewhere"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some space or write elsewhere"),
    errno.EFBIG: ("the file is too large for the file system", "write it elsewhere"),
    errno.ENAMETOOLONG: ("the name is too long for the file system", "choose a shorter name"),
    errno.EACCES: ("permission denied", "choose a place you may write, or change its permissions"),
    errno.EPERM: ("operation not permitted", "choose a place you may write, or change its permissions"),
    errno.EROFS: ("the file system is read-only", "write elsewhere"),
    errno.ENOENT: ("no such file or folder", "check the path"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "check the path"),
    errno.EISDIR: ("is a folder, but a file is meant", "name a file"),
    errno.EEXIST: ("already exists", "remove it or choose another name"),
    errno.ENOTEMPTY: ("the folder is not empty", "empty it or choose another"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n) or use fewer jobs"),
    errno.EIO: ("input/output error", "check the device"),
    errno.EPIPE: ("broken pipe: the reader stopped reading", "keep the reader open until the command ends"),
    errno.EBADF: ("closed", "give the command an open stream; > /dev/null discards it"),
}


def describe_os_error(err: OSError) -> str:
    """One line for an operating-system error: the path, what happened and how to fix it.

    The path is the error's ``filename`` (a writer that knows it adds it with
    :func:`naming_path`: a failed write names no file).

    Returns
    -------
    str
        ``"<path>: <what happened>[; <how to fix it>]"`` (no path prefix when the error names none).

    Examples
    --------
    >>> describe_os_error(OSError(errno.ENOSPC, "No space left on device", "out/recs.tsv"))
    'out/recs.tsv: no space left on the device; free some space or write elsewhere'
    >>> describe_os_error(OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left"))
    'no space left on the device; free some space or write elsewhere'
    >>> describe_os_error(OSError(errno.EXDEV, "Invalid cross-device link", "a", None, "b"))
    'a -> b: invalid cross-device link'
    """
    cause, fix = _OS_CAUSES.get(err.errno, (None, None)) if err.errno is not None else (None, None)
    if cause is None:
        cause = (err.strerror or str(err) or type(err).__name__).strip()
        cause = cause[:1].lower() + cause[1:]
    where = " -> ".join(str(f) for f in (err.filename, err.filename2) if f is not None)
    line = f"{cause}; {fix}" if fix else cause
    return f"{where}: {line}" if where else line


@contextlib.contextmanager
def naming_path(path: str | Path) -> Iterator[None]:
    """Give an :class:`OSError` raised inside without a path (a full disk, a write) the path ``path``.

    Returns
    -------
    Yields
    ------
    None
        Inside the block, an OSError with no ``filename`` gets ``path`` (raised again, the same error).

    Examples
    --------
    >>> try:
    ...     with naming_path("out/recs.tsv"):
    ...         raise OSError(errno.ENOSPC, "No space left on device")
    ... except OSError as err:
    ...     describe_os_error(err)
    'out/recs.tsv: no space left on the device; free some space or write elsewhere'
    """
    try:
        yield
    except OSError as err:
        if err.filename is None:
            err.filename = str(path)
        raise


def did_you_mean(word: str, choices: Iterable[str], *, n: int = 2) -> str:
    """``"; did you mean 'x'?"`` for up to ``n`` choices close to ``word`` (difflib ratio >= 0.6), else ``""``.

    The one suggestion of receval's messages (algorithms, presets, parameters, search spaces).

    Returns
    -------
    str
        The hint to append to a message, or an empty string when nothing is close.

    Examples
    --------
    >>> did_you_mean("itemknn", ["item-knn", "user-knn", "mf"], n=1)
    "; did you mean 'item-knn'?"
    >>> did_you_mean("zzz", ["mf"])
    ''
    """
    close = difflib.get_close_matches(word, list(choices), n=n, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def shown_id(value: object) -> str:
    """A user or item id as a message shows it: as written in the data (``repr`` of the plain value).

    NumPy 2 scalars repr as ``np.int64(10)``; a message names the id the user wrote.

    Examples
    --------
    >>> import numpy as np
    >>> print(shown_id(np.int64(10)), shown_id("u1"), shown_id(np.str_("007")))
    10 'u1' '007'
    """
    item = getattr(value, "item", None)
    return repr(item() if callable(item) else value)
