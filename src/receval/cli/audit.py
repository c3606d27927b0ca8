"""``receval audit``: the leakage figures of a train/test split (and of a run on it).

Reads ``--train`` and ``--test`` (any table ``receval evaluate`` reads, with a
``timestamp`` column for the time figures; ids matched by value) and, with ``--recs``, a
run; prints the figures of :func:`receval.stats.leakage.audit`: the share of training
interactions later than their user's first test interaction (``train_after_test``), the
share of test users affected, the share of test interactions of items first seen after
the user's test time (``future_items``; ``future_items_in_recs`` for the run), the pairs
in both parts and the test users and items unseen in training.

Examples
--------
>>> import tempfile, pathlib
>>> from receval.cli import main
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> head = "user\\titem\\trating\\ttimestamp\\n"
>>> _ = (d / "train.tsv").write_text(head + "1\\t10\\t5\\t1\\n1\\t11\\t4\\t9\\n2\\t10\\t3\\t2\\n")
>>> _ = (d / "test.tsv").write_text(head + "1\\t12\\t5\\t5\\n2\\t11\\t4\\t6\\n")
>>> main(["audit", "--train", str(d / "train.tsv"), "--test", str(d / "test.tsv"), "--json"])  # doctest: +ELLIPSIS
{"train_after_test": 0.3333333333333333, "users_affected": 0.5, "future_items": 0.0, "overlap_pairs": 0, ...}
0
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval import jsontext
from receval.cli.common import ItemColumn, NoHeader, TimestampColumn, UserColumn, table_reader

__all__ = ["register"]


def audit_command(
    train: Annotated[Path, typer.Option("--train", help="Training interactions: user,item[,rating],timestamp.")],
    test: Annotated[Path, typer.Option("--test", help="Test interactions: user,item[,rating],timestamp.")],
    recs: Annotated[Path | None, typer.Option("--recs", help="A run on the test users: user,item[,score].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as one JSON object.")] = False,
    user: UserColumn = None,
    item: ItemColumn = None,
    timestamp: TimestampColumn = None,
    no_header: NoHeader = False,
) -> None:
    """Leakage of a split: training after the test time, future items, overlapping pairs, unseen users and items."""
    from receval.stats.leakage import audit

    read = table_reader(user=user, item=item, timestamp=timestamp, no_header=no_header)
    train_frame = read(train, "train", ("user", "item"), label="--train")
    test_frame = read(test, "truth", ("user", "item"), label="--test")
    recs_frame = read(recs, "recommendations", ("user", "item"), label="--recs") if recs is not None else None
    report = audit(train_frame, test_frame, recs_frame)
    body = report.as_dict()
    if as_json:
        typer.echo(jsontext.dumps(body))
        return
    if not report.timestamps:
        typer.echo("no timestamp column in --train and --test: the time figures need one")
    for name, value in body.items():
        if isinstance(value, bool):
            shown = "yes" if value else "no"
        else:
            shown = "-" if value is None else (f"{value:.4%}" if isinstance(value, float) else f"{value:,}")
        typer.echo(f"{name}\t{shown}")


def register(app: typer.Typer) -> None:
    """Attach ``audit`` to the main app."""
    app.command("audit")(audit_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {"audit": "receval audit --train split/train.tsv --test split/test.tsv --json"}
