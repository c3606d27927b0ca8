"""Entry point of the ``receval`` command (also ``python -m receval``).

Each command module exposes ``register(app)`` and ``EXAMPLES`` (command name -> one example
command line); :data:`COMMAND_MODULES` lists them. A command line imports and builds only the
module of the command it names (:mod:`receval.cli._index`, generated from these modules, says
which one): typer reads every parameter's annotation of each command it builds, so building all
of them cost every command as much as its own start. ``--help`` and a name the index does not
know get every command; so do :data:`app` and :data:`EXAMPLES`, built on first use.
Errors of the :class:`~receval.errors.ReceValError` family print their message and
exit with status 2, never a traceback; with ``--json`` (or ``--output json``) the
message goes to stdout as ``{"error": "..."}``, so a script reading JSON always gets
JSON. A parameter the message names in Python's spelling (``force=True``) is shown as
the command's own flag (``--force``, :func:`flag_spelling`). Operating-system errors
(a full disk, a name too long, no permission, a closed or full stdout) are one line
too, status 2. Long-running commands show progress bars on stderr when it is a terminal (not
with ``--quiet``, never when piped); ``-v``/``-vv`` show the library's log lines there.
Help is plain text (no markup: ``[quick]`` stays as written; long defaults wrap, never
cut), and every command's help ends with its example (:data:`EXAMPLES` gathers them). The process
around a command (the allocator's tuning, the pools' trackers) is :mod:`receval.cli._process`'s.

Examples
--------
>>> main(["--version"])  # doctest: +ELLIPSIS
receval ...
0
>>> main(["evaluate", "--truth", "missing.csv", "--recs", "r.csv", "--metrics", "mrr", "--json"])
{"error": "missing.csv: truth file not found"}
2
"""

from __future__ import annotations

import contextlib
import errno
import functools
import gc
import importlib
import inspect
import itertools
import os
import re
import shlex
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import typer
import typer.main

from receval import jsontext
from receval.cli._index import COMMAND_INDEX
from receval.cli._process import (
    COLLECTOR_COMMANDS,
    command_word,
    stop_resource_trackers,
    tune_allocator,
    tune_collector,
    wants_tuning,
)
from receval.cli._process import TUNED_COMMANDS as TUNED_COMMANDS  # the commands tuned, named here too
from receval.cli._process import TUNING_VARIABLE as TUNING_VARIABLE
from receval.cli.output import CheckedStdout, StdoutError
from receval.errors import ReceValError, ReceValWarning, Spelling, describe_os_error

COMMAND_MODULES: tuple[str, ...] = (
    "receval.cli.data",
    "receval.cli.split",
    "receval.cli.power",
    "receval.cli.demo",
    "receval.cli.coherence",
    "receval.cli.barrier",
    "receval.cli.coherence_barrier",
    "receval.cli.coherence_split",
    "receval.cli.run",
    "receval.cli.results",
    "receval.cli.evaluate",
    "receval.cli.compare",
    "receval.cli.recommend",
    "receval.cli.metaeval",
    "receval.cli.simulate",
    "receval.cli.ope",
    "receval.cli.report",
    "receval.cli.attack",
    "receval.cli.debias",
    "receval.cli.sampled",
    "receval.cli.check",
    "receval.cli.aa",
    "receval.cli.tune",
    "receval.cli.audit",
    "receval.cli.protocols_study",
)

if TYPE_CHECKING:  # built on first use (module __getattr__ below): every command registered
    app: typer.Typer
    EXAMPLES: dict[str, str]


def version_command() -> None:
    """Print receval's version (the same as `receval --version` without the name)."""
    from receval import __version__

    typer.echo(__version__)


def _print_version(value: bool) -> None:
    if value:
        from receval import __version__

        typer.echo(f"receval {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", help="Print receval's version and exit.", is_eager=True, callback=_print_version
    ),
    verbose: int = typer.Option(
        0, "--verbose", "-v", count=True, show_default=False, help="Log on stderr what receval does (-vv: more)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars; log errors only."),
) -> None:
    """Rigorous offline evaluation of recommender systems."""
    from receval.cli.feedback import TerminalProgress, logging_to_stderr
    from receval.progress import reporting

    # both last as long as the command: progress bars on a terminal's stderr, log lines as "receval: ..."
    ctx.with_resource(logging_to_stderr(verbose, quiet))
    ctx.with_resource(reporting(ctx.with_resource(TerminalProgress(quiet=quiet))))


def _first_sentence(doc: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    return re.split(r"(?<=[.!?])\s+(?=[A-Z`])", paragraph, maxsplit=1)[0]  # not after "e.g. genres"


def _add_examples(typer_app: typer.Typer, examples: dict[str, str], prefix: str = "") -> None:
    """Append the ``examples`` line to the help of every command of ``typer_app``.

    Also gives each command its first sentence as the short help of the command list,
    which click would otherwise cut to the terminal's width with "...".
    """
    for info in typer_app.registered_commands:
        name = prefix + (info.name or info.callback.__name__.replace("_", "-"))  # type: ignore[union-attr]  # registered: has a callback
        if not info.epilog and name in examples:
            info.epilog = f"\b\nExample:\n  {examples[name]}"  # \b: click keeps the line as written
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if not info.short_help and doc:
            info.short_help = _first_sentence(doc)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _add_examples(group.typer_instance, examples, f"{prefix}{group.name} ")


@functools.cache
def _registered(modules: tuple[str, ...]) -> tuple[typer.Typer, dict[str, str]]:
    """The application with the commands of ``modules`` (and ``version``) registered, and their examples.

    Registering is cheap; what costs is importing a command's module and typer building its
    parameters (reading every annotation), which happens only for the commands registered here.
    """
    typer_app = typer.Typer(
        name="receval",
        help="Rigorous offline evaluation of recommender systems.",
        no_args_is_help=True,
        add_completion=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )
    # one example per command, shown at the end of its --help (a command's own epilog wins)
    examples: dict[str, str] = {"version": "receval version"}
    for name in modules:
        module = importlib.import_module(name)
        module.register(typer_app)
        examples |= module.EXAMPLES
    typer_app.command("version")(version_command)
    typer_app.callback()(_root)
    _add_examples(typer_app, examples)
    return typer_app, examples


def _app_for(args: Sequence[str]) -> typer.Typer:
    """The application that runs ``args``: only the named command's module registered, when the index knows it.

    ``--help`` without a command, a command the index does not know (a typo, one added since the
    index was written) and shell completion get every command, as they list or search them all.

    >>> sorted(typer.main.get_command(_app_for(["-q", "predict", "--help"])).commands)
    ['algorithms', 'predict', 'recommend', 'version']
    """
    word = command_word(args)
    if word == "version":
        return _registered(())[0]
    module = COMMAND_INDEX.get(word or "")
    return _registered((module,) if module in COMMAND_MODULES else COMMAND_MODULES)[0]


def command_index() -> dict[str, str]:
    """Each top-level command of :data:`COMMAND_MODULES` and the module that registers it (what ``_index.py`` holds).

    Imports every command module: for tests and for writing the index, never on a command's path.
    """
    index: dict[str, str] = {}
    for name in COMMAND_MODULES:
        typer_app = typer.Typer()
        importlib.import_module(name).register(typer_app)
        commands = [info.name or info.callback.__name__ for info in typer_app.registered_commands]  # type: ignore[union-attr]  # registered: has a callback
        groups = [group.name for group in typer_app.registered_groups if group.name]
        index |= dict.fromkeys([*commands, *groups], name)
    return index


def write_index(path: str | os.PathLike[str] | None = None) -> None:
    """Rewrite :data:`receval.cli._index.COMMAND_INDEX` from the command modules (:func:`command_index`).

    ``path``: the copy of ``receval/cli/_index.py`` to rewrite (by default the module itself).
    """
    from pathlib import Path

    from receval.cli import _index

    path = Path(path if path is not None else _index.__file__)
    rows = "".join(f"    {name!r}: {module!r},\n".replace("'", '"') for name, module in command_index().items())
    text = re.sub(r"(COMMAND_INDEX: dict\[str, str\] = \{\n).*?(^\}\n)", rf"\g<1>{rows}\g<2>", path.read_text(),
                  count=1, flags=re.S | re.M)  # fmt: skip
    path.write_text(text)


def __getattr__(name: str) -> Any:
    # the application with every command, and every example: for what lists them all (docs, tests)
    if name in ("app", "EXAMPLES"):
        typer_app, examples = _registered(COMMAND_MODULES)
        return typer_app if name == "app" else examples
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _wants_json(args: Sequence[str]) -> bool:
    """True when the command line asks for JSON output (``--json``, ``--output json``)."""
    args = list(args[: args.index("--")] if "--" in args else args)
    return (
        "--json" in args
        or "--output=json" in args
        or any(a == "--output" and b == "json" for a, b in itertools.pairwise(args))
    )


# numpy's floating-point notices (NaN or inf met in a computation) are never the user's concern
_NUMPY_NOTICES = r"(invalid value|divide by zero|overflow|underflow) encountered|Mean of empty slice|Degrees of freedom"


@contextlib.contextmanager
def _one_line_warnings(spelling: Spelling | None = None) -> Iterator[None]:
    """Warnings as one line ``warning: ...`` on stderr while a command runs; numpy's floating-point notices dropped.

    No source path, no code line; a :class:`~receval.errors.ReceValWarning` names its
    parameters as ``spelling`` writes them (the command's flags).

    >>> import io, numpy as np
    >>> stderr = io.StringIO()
    >>> with contextlib.redirect_stderr(stderr), _one_line_warnings(lambda name, value: f"--{name} {value}"):
    ...     warnings.warn("2 users have no truth\\n  and are left out", UserWarning)
    ...     warnings.warn(ReceValWarning("give threshold=4", parameters=["threshold"]))
    ...     _ = np.log(np.float64(-1.0))  # numpy: "invalid value encountered in log"
    >>> print(stderr.getvalue(), end="")
    warning: 2 users have no truth and are left out
    warning: give --threshold 4
    """

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        text = str(message)
        if isinstance(message, ReceValWarning) and spelling is not None:
            text = message.spelled(spelling)
        typer.echo(f"warning: {' '.join(text.split())}", err=True)

    with warnings.catch_warnings():
        warnings.showwarning = show
        warnings.filterwarnings("ignore", message=_NUMPY_NOTICES, category=RuntimeWarning)
        yield


# what a shell reports for a process killed by SIGPIPE (128 + 13), as for any tool whose reader left (`| head`)
BROKEN_PIPE_STATUS = 141


def _command_options(args: Sequence[str]) -> dict[str, Any]:
    """The click options of the command ``args`` name, by parameter name and by flag (``{"force": <Option>}``)."""
    command: Any = typer.main.get_command(_app_for(args))
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-"):
            continue
        sub = getattr(command, "commands", {}).get(arg)
        if sub is None:
            break
        command = sub
    options = [p for p in command.params if p.param_type_name == "option"]
    by_flag = {o[2:].replace("-", "_"): p for p in options for o in p.opts if o.startswith("--")}
    return by_flag | {p.name: p for p in options}  # ``--format`` whose parameter is ``fmt``: "format" finds it


# a library parameter whose value a command takes under another option's name (library name -> option name)
OPTION_OF_PARAMETER: dict[str, str] = {"item_aspects": "aspects", "n_shards": "shards"}
# ``columns={'user': COL}``: one column of a table, which a command takes as its option ``--user COL``
_COLUMN_VALUE = re.compile(r"""\{\s*['"](\w+)['"]\s*:\s*(.+?)\s*\}""")


def flag_spelling(args: Sequence[str]) -> Spelling:
    """How the command ``args`` name writes a library parameter: its own flag (the command's options are the table).

    ``force=True`` becomes ``--force``, ``out=`` ``--out``, ``k=5`` ``--k 5``; a parameter
    the command has no option for keeps its Python spelling.

    >>> spell = flag_spelling(["run", "x.toml"])
    >>> spell("force", "True"), spell("out", None), spell("jobs", "2"), spell("seed", "3")
    ('--force', '--out', '--jobs 2', None)
    >>> flag_spelling(["coherence", "--data", "u.data"])("item_aspects", None)
    '--aspects'

    A column named through ``columns=`` is the command's column option, and ``x=False``
    its ``--no-x`` flag:

    >>> spell = flag_spelling(["evaluate"])
    >>> spell("columns", "{'user': COL}"), spell("header", "False")
    ('--user COL', '--no-header')
    """
    options = _command_options(args)

    def spell(name: str, value: str | None) -> str | None:
        column = _COLUMN_VALUE.fullmatch(value or "") if name == "columns" else None
        if column is not None:
            name, value = column.group(1), column.group(2)
        option = options.get(OPTION_OF_PARAMETER.get(name, name))
        if option is None and value == "False" and f"no_{name}" in options:
            return str(options[f"no_{name}"].opts[0])
        if option is None:
            return None
        flag = next((o for o in option.opts if o.startswith("--")), option.opts[0])
        if option.is_flag:
            if value in (None, "True"):
                return str(flag)
            off = [str(o) for o in option.secondary_opts if o.startswith("--")]
            return off[0] if value == "False" and off else None
        if value is None:
            return str(flag)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = shlex.quote(value[1:-1])
        return f"{flag} {value}"

    return spell


def _report(message: str, as_json: bool, stdout: CheckedStdout) -> None:
    """Print an error: ``{"error": ...}`` on stdout under ``--json``, else ``error: ...`` on stderr.

    When stdout cannot take the JSON (a full device, closed), the error goes to stderr
    with what happened to stdout, still on one line.
    """
    if as_json:
        try:
            stdout.write(jsontext.dumps({"error": message}, ensure_ascii=False) + "\n")
            stdout.flush()
            return
        except StdoutError as failed:
            stdout.discard()
            message = f"{message} ({describe_os_error(failed.error)})"
    with contextlib.suppress(OSError):  # stderr itself gone: the exit status is all that is left
        typer.echo(f"error: {message}", err=True)


def _usage_line(err: Exception, as_json: bool) -> str:
    """click's usage error as one line, naming the command's help (click prints usage, hint and message on four).

    >>> import typer
    >>> _usage_line(typer.BadParameter("'' is not a valid float.", param_hint="'--k'"), False)
    "Invalid value for '--k': '' is not a valid float."
    """
    message = " ".join(err.format_message().split())  # type: ignore[attr-defined]
    ctx = getattr(err, "ctx", None)
    if as_json or ctx is None:
        return message
    return f"{message} (see '{ctx.command_path} --help')"


def _closed_stdout() -> None:
    """Stdout started closed (``>&-``): keep its descriptor taken, so that no file the command opens becomes stdout."""
    try:
        os.fstat(1)
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        if null != 1:
            os.dup2(null, 1)
            os.close(null)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input, usage or an operating-system error).

    Every write to stdout is checked (:class:`~receval.cli.output.CheckedStdout`, flushed
    before returning): a full device or a closed stdout is one ``error:`` line naming
    stdout, status 2. A reader that stopped reading (``| head``) ends the command without
    a word and with status 141, as a shell shows for any tool in that pipe.
    """
    args = list(argv) if argv is not None else sys.argv[1:]
    as_json = _wants_json(args)
    if sys.stdout is None:
        _closed_stdout()
    saved = sys.stdout
    stdout = CheckedStdout(saved)
    sys.stdout = stdout
    try:
        try:
            with _one_line_warnings(lambda name, value: flag_spelling(args)(name, value)):  # built when used
                result = _app_for(args)(args=args, standalone_mode=False)
            stdout.flush()
        except ReceValError as err:
            _report(err.spelled(flag_spelling(args)), as_json, stdout)
            return 2
        except typer.TyperException as err:  # usage errors (typer vendors click)
            if type(err).__name__ == "NoArgsIsHelpError" and not as_json:  # a group named alone: its help
                err.show()  # type: ignore[attr-defined]
                return err.exit_code
            _report(_usage_line(err, as_json), as_json, stdout)
            return err.exit_code
        except typer.Exit as err:
            return err.exit_code
        except typer.Abort:
            typer.echo("aborted", err=True)
            return 1
    except StdoutError as failed:
        stdout.discard()
        if failed.error.errno == errno.EPIPE:
            return BROKEN_PIPE_STATUS
        _report(describe_os_error(failed.error), False, stdout)
        return 2
    except OSError as err:
        _report(describe_os_error(err), as_json, stdout)
        return 2
    finally:
        sys.stdout = saved
    return result if isinstance(result, int) else 0


def entry() -> None:
    """Console-script entry point: :func:`main`, in a tuned process for the commands that gain from it.

    ``receval evaluate`` gets glibc's allocator tuned for arrays of a few million rows
    (:func:`~receval.cli._process.tune_allocator`; set ``RECEVAL_MALLOC_TUNING=0`` to run it untuned); no
    other command is tuned, and nothing is set that a child process would inherit. ``evaluate`` and
    ``predict`` run with fewer passes of the cyclic garbage collector (:func:`~receval.cli._process.tune_collector`:
    its passes over what numba and scipy build at import cost ``predict`` a tenth of its time; a forked
    worker keeps the setting, a spawned one does not). Once the command is
    done, the resource trackers of its worker pools are stopped (:func:`~receval.cli._process.stop_resource_trackers`)
    and the objects left are frozen out of the garbage collector (:func:`gc.freeze`): the
    interpreter's exit then skips scanning what numba, scipy and pandas built at import (a visible
    share of a short command such as ``receval predict``); exit handlers still run and files are
    closed as before.
    """
    if wants_tuning(sys.argv[1:], os.environ):
        tune_allocator()
    if command_word(sys.argv[1:]) in COLLECTOR_COMMANDS:
        tune_collector()
    status = main()
    stop_resource_trackers()
    gc.freeze()
    sys.exit(status)
