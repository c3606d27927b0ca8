"""``python -m receval``: the same as the ``receval`` command."""

from receval.cli.app import entry

if __name__ == "__main__":
    entry()
