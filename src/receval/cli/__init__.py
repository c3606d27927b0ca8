"""The ``receval`` command line: one sub-command per module of this package."""

from receval.cli.app import app, main

__all__ = ["app", "main"]
