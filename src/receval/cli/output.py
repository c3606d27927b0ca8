"""Tables for terminals and pipes: the one way every command prints a table.

A command builds a :class:`Table` (or :meth:`Table.from_frame`) and calls
:func:`print_table` with the format of its ``--output`` option (:data:`OUTPUT_HELP`,
checked by :func:`output_format`):

``table``
    On a terminal, boxed tables as wide as the terminal; a table wider than the terminal
    is split into column groups that fit, each repeating the first column, so no value is
    ever cut. In a pipe or a file, plain aligned text at full width (never wrapped).
``tsv``
    A header line and one tab-separated line per row (a ``# title`` line first).
``json``
    ``{"title": ..., "columns": [...], "rows": [[...], ...]}`` with numbers as numbers.
``csv``
    A header line and one comma-separated line per row, numbers at full precision.
``latex``
    A booktabs ``tabular`` (special characters escaped), its title as a comment.
``markdown``
    A GitHub pipe table under its title in bold.

No value is truncated in any format; JSON is strict (:mod:`receval.jsontext`: a value that is
not a finite number is ``null``). Only the standard library is imported here (rich is imported
when a terminal table is drawn), so importing this module costs nothing.

While a command runs, stdout is a :class:`CheckedStdout`: a write that fails (a full
device, a closed stdout, a reader that went away) raises :class:`StdoutError`, which
names stdout and which click does not mistake for its own broken-pipe case.

Examples
--------
>>> t = Table(["metric", "popularity", "item-knn"], [["ndcg@10", 0.21, 0.3], ["mrr", 0.4, float("nan")]])
>>> print(render(t, "table"))
metric   popularity  item-knn
-------  ----------  --------
ndcg@10      0.2100    0.3000
mrr          0.4000       nan
>>> render(t, "tsv").splitlines()
['metric\\tpopularity\\titem-knn', 'ndcg@10\\t0.2100\\t0.3000', 'mrr\\t0.4000\\tnan']
>>> print(render(t, "markdown"))
| metric | popularity | item-knn |
|---|--:|--:|
| ndcg@10 | 0.2100 | 0.3000 |
| mrr | 0.4000 | nan |
>>> render(t, "json")
'{"title": null, "columns": ["metric", "popularity", "item-knn"], "rows": [["ndcg@10", 0.21, 0.3], ["mrr", 0.4, null]]}'
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import math
import numbers
import os
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from receval import jsontext
from receval.errors import ConfigError

__all__ = [
    "FORMATS",
    "OUTPUT_HELP",
    "CheckedStdout",
    "StdoutError",
    "Table",
    "escape",
    "output_format",
    "print_table",
    "render",
    "terminal_tables",
]

FORMATS: tuple[str, ...] = ("table", "tsv", "csv", "json", "markdown", "latex")
OUTPUT_HELP = (
    "How to print tables: table (boxed on a terminal, aligned plain text in a pipe), tsv, csv, json, markdown "
    "or latex (booktabs). Values are never cut."
)


def output_format(output: str | None, as_json: bool = False) -> str:
    """The ``--output`` format; ``--json`` is the same as ``--output json``.

    Examples
    --------
    >>> output_format(None), output_format("TSV"), output_format(None, as_json=True)
    ('table', 'tsv', 'json')
    >>> output_format("html")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: --output must be one of table, tsv, csv, json, markdown, latex; got 'html'
    """
    if output is None:
        return "json" if as_json else "table"
    fmt = output.strip().lower()
    if fmt not in FORMATS:
        raise ConfigError(f"--output must be one of {', '.join(FORMATS)}; got {output!r}")
    if as_json and fmt != "json":
        raise ConfigError(f"--json and --output {fmt} contradict each other; give one of them")
    return fmt


@dataclass
class Table:
    """A titled table of raw values; numbers are formatted with ``float_format`` for text output.

    A column whose values are all numbers (or empty) is right-aligned, unless ``right``
    says per column (for numbers already formatted as text, such as ``"1,234"``).
    """

    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    title: str | None = None
    float_format: str = "{:.4f}"
    right: list[bool] | None = None
    _text: list[list[str]] = field(init=False, repr=False, default_factory=list)

    def __post_init__(self) -> None:
        self.columns = [str(c) for c in self.columns]
        self.rows = [list(r) for r in self.rows]
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {i} has {len(row)} values for {len(self.columns)} columns")

    def add_row(self, *values: Any) -> None:
        """Append one row (as many values as columns)."""
        if len(values) != len(self.columns):
            raise ValueError(f"{len(values)} values for {len(self.columns)} columns")
        self.rows.append(list(values))
        self._text = []

    @classmethod
    def from_frame(
        cls,
        frame: Any,
        *,
        title: str | None = None,
        index: bool = True,
        index_label: str | None = None,
        float_format: str = "{:.4f}",
    ) -> Table:
        """A table from a pandas DataFrame (its index as the first column unless ``index=False``).

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"rmse": [0.91, 0.95]}, index=pd.Index(["mf", "biases"], name="system"))
        >>> print(render(Table.from_frame(frame, title="Rating prediction"), "table"))
        Rating prediction
        system    rmse
        ------  ------
        mf      0.9100
        biases  0.9500
        """
        columns = [str(c) for c in frame.columns]
        if index:
            columns = [str(index_label if index_label is not None else (frame.index.name or "")), *columns]
        rows = [list(r) for r in frame.itertuples(index=index, name=None)]
        return cls(columns, rows, title=title, float_format=float_format)

    def cell(self, value: Any) -> str:
        """The text of one value: floats by ``float_format``, None as empty, the rest by ``str``."""
        if value is None:
            return ""
        if isinstance(value, numbers.Real) and not isinstance(value, bool | numbers.Integral):
            return "nan" if math.isnan(value) else self.float_format.format(float(value))
        return str(value)

    def text(self) -> list[list[str]]:
        """Every row as text cells."""
        if not self._text and self.rows:
            self._text = [[self.cell(v) for v in row] for row in self.rows]
        return self._text

    def numeric(self) -> list[bool]:
        """Whether each column is right-aligned: ``right`` when given, else whether it holds only numbers."""
        if self.right is not None:
            return list(self.right)
        out = []
        for j in range(len(self.columns)):
            values = [row[j] for row in self.rows if row[j] is not None]
            out.append(bool(values) and all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in values))
        return out

    def json_rows(self) -> list[list[Any]]:
        """Rows with plain Python values (NaN as None) for JSON."""
        return [[_plain(v) for v in row] for row in self.rows]


def _plain(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _width(text: str) -> int:
    """Columns a string takes on a terminal (East Asian wide characters count two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * (width - _width(text))
    return gap + text if right else text + gap


def _plain_text(table: Table) -> str:
    header, body, right = table.columns, table.text(), table.numeric()
    widths = [max([_width(header[j]), *(_width(r[j]) for r in body)]) for j in range(len(header))]
    last = len(header) - 1

    def line(cells: Sequence[str]) -> str:
        parts = [_pad(c, widths[j], right[j]) if (right[j] or j < last) else c for j, c in enumerate(cells)]
        return "  ".join(parts)

    lines = [table.title] if table.title else []
    lines += [line(header), "  ".join("-" * w for w in widths)]
    lines += [line(r) for r in body]
    return "\n".join(lines)


def _tsv(table: Table) -> str:
    def clean(text: str) -> str:
        return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")

    lines = [f"# {clean(table.title)}"] if table.title else []
    lines += ["\t".join(clean(c) for c in table.columns)]
    lines += ["\t".join(clean(c) for c in row) for row in table.text()]
    return "\n".join(lines)


def _markdown(table: Table) -> str:
    def clean(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [f"**{clean(table.title)}**", ""] if table.title else []
    lines += ["| " + " | ".join(clean(c) for c in table.columns) + " |"]
    lines += ["|" + "|".join("--:" if r else "---" for r in table.numeric()) + "|"]
    lines += ["| " + " | ".join(clean(c) for c in row) + " |" for row in table.text()]
    return "\n".join(lines)


def _csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows(table.json_rows())  # full precision: a CSV is read by programs
    return buffer.getvalue().rstrip("\n")


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex(table: Table) -> str:
    def clean(text: str) -> str:
        text = text.replace("\\", r"\textbackslash{}")
        return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)

    lines = [f"% {table.title}"] if table.title else []
    lines += [r"\begin{tabular}{" + "".join("r" if r else "l" for r in table.numeric()) + "}", r"\toprule"]
    lines += [" & ".join(clean(c) for c in table.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(clean(c) for c in row) + r" \\" for row in table.text()]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def render(table: Table, fmt: str = "table") -> str:
    """The table as text in ``fmt`` (``table`` here is the plain aligned text of pipes)."""
    if fmt == "table":
        return _plain_text(table)
    if fmt == "tsv":
        return _tsv(table)
    if fmt == "markdown":
        return _markdown(table)
    if fmt == "csv":
        return _csv(table)
    if fmt == "latex":
        return _latex(table)
    if fmt == "json":
        return jsontext.dumps(
            {"title": table.title, "columns": table.columns, "rows": table.json_rows()}, ensure_ascii=False
        )
    raise ConfigError(f"--output must be one of {', '.join(FORMATS)}; got {fmt!r}")


def terminal_tables(table: Table, width: int) -> list[Any]:
    """Boxed rich tables that fit ``width`` columns, splitting the columns into groups when needed.

    Each group repeats the first column; a column wider than the terminal folds its cells
    onto several lines instead of cutting them.

    Examples
    --------
    >>> t = Table(["metric", *(f"system-{i}" for i in range(12))], [["ndcg@10", *range(12)]])
    >>> [len(group.columns) for group in terminal_tables(t, 80)]  # 12 systems: 6 + 6, each with the metric
    [7, 7]
    """
    from rich.table import Table as RichTable
    from rich.text import Text

    header, body, right = table.columns, table.text(), table.numeric()
    need = [max([_width(header[j]), *(_width(r[j]) for r in body)]) + 3 for j in range(len(header))]  # pad + rule
    groups: list[list[int]] = []
    rest = list(range(1, len(header)))
    while rest or not groups:
        group, used = [0], need[0] + 1
        while rest and (len(group) == 1 or used + need[rest[0]] <= width):
            used += need[rest[0]]
            group.append(rest.pop(0))
        groups.append(group)
    out = []
    for g, group in enumerate(groups):
        title = table.title if g == 0 else (f"{table.title} (continued)" if table.title else None)
        rich_table = RichTable(title=Text(title) if title else None, title_justify="left")  # Text: no markup
        for j in group:
            rich_table.add_column(Text(header[j]), justify="right" if right[j] else "left", overflow="fold")
        for row in body:
            rich_table.add_row(*(Text(row[j]) for j in group))
        out.append(rich_table)
    return out


def escape(text: object) -> str:
    r"""``text`` for a rich console's markup: what users named (labels, paths, errors) is shown as written.

    >>> escape("pop[bold]"), escape("pip install 'receval[surprise]'")
    ('pop\\[bold]', "pip install 'receval\\[surprise]'")
    """
    from rich.markup import escape as rich_escape

    return rich_escape(str(text))


def print_table(table: Table, fmt: str = "table", console: Any = None) -> None:
    """Print ``table`` in ``fmt`` to ``console`` (a rich Console; stdout by default).

    ``table`` on a terminal draws boxed tables that fit it (:func:`terminal_tables`);
    everywhere else the text of :func:`render` is written as is, followed by a blank line
    between tables, never wrapped or cropped.
    """
    if console is None and not (fmt == "table" and _may_be_terminal()):  # rich (20 ms to import) would draw nothing
        out, quiet = sys.stdout, False
    else:
        if console is None:
            from rich.console import Console

            console = Console()
        if fmt == "table" and console.is_terminal:
            from rich.text import Text

            for part in terminal_tables(table, console.width):
                console.print(part)
            console.print(Text(""))
            return
        out, quiet = console.file, console.quiet
    if not quiet:  # written as is: rich would expand tabs and parse markup
        out.write(render(table, fmt) + ("\n" if fmt == "json" else "\n\n"))
        out.flush()


def _may_be_terminal() -> bool:
    """Whether rich's ``Console().is_terminal`` may say yes: stdout is a terminal, or the environment forces one
    (``FORCE_COLOR``, ``TTY_COMPATIBLE``, as rich reads them), or a notebook's kernel is loaded."""
    forced = any(os.environ.get(name) for name in ("FORCE_COLOR", "TTY_COMPATIBLE"))
    return forced or "ipykernel" in sys.modules or sys.stdout.isatty()


class StdoutError(Exception):
    """Writing to stdout failed; ``error`` is the operating system's error, with ``filename`` "stdout"."""

    def __init__(self, error: OSError) -> None:
        error.filename = "stdout"
        self.error = error
        super().__init__(str(error))


class CheckedStdout(io.TextIOBase):
    """A text stream over ``stream`` (``None``: stdout is closed) whose failed writes raise :class:`StdoutError`.

    Not an ``OSError``: click turns a broken pipe into exit status 1 without a word, and
    a full device would look like a failure of whatever file the command was writing.

    >>> out = CheckedStdout(None)  # what Python gives a process started with >&-
    >>> out.write("")
    0
    >>> out.write("ndcg@10 0.31")
    Traceback (most recent call last):
    ...
    receval.cli.output.StdoutError: [Errno 9] stdout is closed: 'stdout'
    """

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` (an empty string to a closed stdout is no write and no error)."""
        if not isinstance(text, str):  # click probes for a binary stream with b"": this is a text one
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.stream is None:
            if text:
                raise StdoutError(OSError(errno.EBADF, "stdout is closed"))
            return 0
        try:
            return self.stream.write(text)
        except OSError as err:
            raise StdoutError(err) from None

    def flush(self) -> None:
        """Flush the stream: the write a buffered stdout put off happens (and may fail) here."""
        if self.stream is not None:
            try:
                self.stream.flush()
            except OSError as err:
                raise StdoutError(err) from None

    def isatty(self) -> bool:
        """Whether stdout is a terminal (rich and click draw for terminals only).

        A library that kept this stream past the command (colorama asks at exit) gets
        False once the stream beneath is closed.
        """
        try:
            return self.stream is not None and self.stream.isatty()
        except ValueError:  # closed
            return False

    @property
    def closed(self) -> bool:
        """Whether the stream beneath was closed; a stdout closed from the start is not (its writes must fail)."""
        return self.stream is not None and self.stream.closed

    def fileno(self) -> int:
        """The descriptor of the stream (``OSError`` when stdout is closed)."""
        if self.stream is None:
            raise OSError(errno.EBADF, "stdout is closed")
        return self.stream.fileno()

    def writable(self) -> bool:
        """Always: a failed write is reported by :meth:`write`, not refused in advance."""
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase declares it read-only
        """The stream's encoding (UTF-8 for a closed stdout), which click checks before writing."""
        return getattr(self.stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        """The stream's error handler, which click checks with :attr:`encoding`."""
        return getattr(self.stream, "errors", None)

    def discard(self) -> None:
        """After a failed write: what the interpreter's stdout still buffers goes nowhere.

        Python flushes its stdout once more at exit and would print a second error for a
        full device or a closed pipe; the descriptor now leads to the null device.
        """
        if self.stream is None or self.stream is not sys.__stdout__:
            return  # a stream of the caller's (a test's capture): theirs to handle
        with contextlib.suppress(OSError, ValueError):
            fd = sys.__stdout__.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
