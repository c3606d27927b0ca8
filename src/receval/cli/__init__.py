"""The ``receval`` command line: one sub-command per module of this package.

:func:`main` runs it on an argument list and returns the exit status; the Typer
application is :data:`receval.cli.app.app` (not re-exported here, so that
``receval.cli.app`` stays the module).
"""

from receval.cli.app import main

__all__ = ["main"]
