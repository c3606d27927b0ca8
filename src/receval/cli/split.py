"""``receval split``: seeded train/test files that every other command reads back.

Writes ``OUT/train.tsv`` and ``OUT/test.tsv`` (``kfold`` and ``rolling``: ``OUT/fold-1/…``
to ``OUT/fold-K/…``), tab-separated with the header ``user, item, rating[, timestamp]``
in the data's original ids (``--targets successive`` adds ``point``, one per
``(user, timestamp)``). With timestamps, a split whose training part holds interactions
later than a user's test time gets a one-line warning on stderr with the figures of
:func:`receval.stats.leakage.audit`. The files appear together (:func:`receval.atomic.publish`):
an interrupted split leaves the folder's old split, or the whole new one. The unit of
every split is the (user, item) pair, so repeated ratings of a pair stay on one side
(:mod:`receval.split`).

Examples
--------
>>> import tempfile, pathlib
>>> from receval.cli import main
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> rows = [f"{u}\\t{i}\\t{1 + (u * i) % 5}\\t{880000000 + u * 100 + i}" for u in range(1, 11) for i in range(1, 11)]
>>> _ = (d / "u.data").write_text("\\n".join(rows) + "\\n")
>>> main(["split", str(d), "--format", "ml-100k", "--method", "per-user", "--out", str(d / "split")])
train: 80 ratings of 10 users -> .../split/train.tsv
test: 20 ratings of 10 users -> .../split/test.tsv
0
>>> (d / "split" / "test.tsv").read_text().splitlines()[0]
'user\\titem\\trating\\ttimestamp'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer

from receval.cli.common import FORMAT_HELP, NoHeader, ScaleOption, load_data
from receval.errors import ConfigError
from receval.vocabulary import SPLIT_ALIASES, SPLIT_METHODS, split_method

__all__ = ["register"]

_METHOD_OPTIONS = ("at", "windows", "window", "expanding", "gap")  # options of some methods only

_METHOD_HELP = (
    f"One of {', '.join(SPLIT_METHODS)} (any case, _ or -; also {', '.join(SPLIT_ALIASES)}): "
    "the names of a configuration's [split] method."
)


def _check(
    method: str, test_fraction: float, folds: int, seed: int, out: Path, time: dict[str, Any], data: Path
) -> None:
    """Every option checked before any data is read, so bad options write nothing."""
    from receval.validate import check_command_options, check_count, parse_duration, parse_instant
    from receval.vocabulary import split_candidates, split_targets

    try:
        chosen = split_method(method)
    except ConfigError as err:
        raise ConfigError(f"--method: {err.message}") from None
    check_command_options(test_fraction=test_fraction, folds=folds, seed=seed)
    for name in time:
        if name in _METHOD_OPTIONS and name not in chosen.options:
            raise ConfigError(
                f"--{name.replace('_', '-')} is not an option of --method {chosen.name}; "
                f"its options: {', '.join(chosen.options) or 'none'}"
            )
    if "at" in time:
        parse_instant(time["at"], "at")
    if "windows" in time:
        check_count(time["windows"], "windows")
    if "window" in time:
        parse_duration(time["window"], "window", fraction=True)
    if "gap" in time:
        parse_duration(time["gap"], "gap")
    split_targets(time.get("targets", "all"))
    split_candidates(time.get("candidates", "all"))
    if "core" in time:
        check_count(time["core"], "core")
    from receval.outputs import check_output_dir

    written = tuple(f"{'fold-*/' if chosen.folds else ''}{name}.tsv" for name in ("train", "test"))
    check_output_dir(out, "--out", {"the data file": data}, written)


def split_command(
    data: Annotated[Path, typer.Argument(help="The data set's folder (multi-file formats) or file.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for train.tsv and test.tsv (created if missing).")],
    fmt: Annotated[str | None, typer.Option("--format", "-f", help=FORMAT_HELP)] = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help=_METHOD_HELP,
        ),
    ] = "holdout",
    test_fraction: Annotated[
        float | None,
        typer.Option("--test-fraction", help="Share of pairs held out (holdout and temporal methods; default 0.2)."),
    ] = None,
    folds: Annotated[int, typer.Option("--folds", help="Number of folds of --method kfold.")] = 5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random choice (ties included).")] = 0,
    scale: ScaleOption = None,
    sep: Annotated[str | None, typer.Option("--sep", help="Field separator of a csv/tsv file.")] = None,
    user: Annotated[str | None, typer.Option("--user", help="User column of a csv/tsv/parquet file.")] = None,
    item: Annotated[str | None, typer.Option("--item", help="Item column of a csv/tsv/parquet file.")] = None,
    rating: Annotated[str | None, typer.Option("--rating", help="Rating column of a csv/tsv/parquet file.")] = None,
    timestamp: Annotated[
        str | None, typer.Option("--timestamp", help="Timestamp column of a csv/tsv/parquet file.")
    ] = None,
    no_header: NoHeader = False,
    at: Annotated[
        str | None, typer.Option("--at", help="Temporal cut at this instant: an ISO date (UTC) or epoch seconds.")
    ] = None,
    windows: Annotated[int | None, typer.Option("--windows", help="Number of windows of --method rolling.")] = None,
    window: Annotated[
        str | None,
        typer.Option("--window", help="Length of each rolling test window: 30d, 12h, 1w or a fraction of the span."),
    ] = None,
    expanding: Annotated[
        bool | None,
        typer.Option("--expanding/--no-expanding", help="Rolling: train on all the past (default) or a sliding span."),
    ] = None,
    gap: Annotated[str | None, typer.Option("--gap", help="Rolling: time between training and test (1d).")] = None,
    targets: Annotated[
        str, typer.Option("--targets", help="Test pairs kept per user: all, first, last or successive.")
    ] = "all",
    candidates: Annotated[
        str, typer.Option("--candidates", help="all, or existing: drop test items without a training rating.")
    ] = "all",
    core: Annotated[
        int | None, typer.Option("--core", help="Filter to the K-core (to a fixed point) before splitting.")
    ] = None,
) -> None:
    """Split a data set into train/test files (seeded; repeated ratings of a pair stay together)."""
    from receval.atomic import publish, write_frame
    from receval.split import split_by_name
    from receval.stats.leakage import leakage_warning

    if at is not None and test_fraction is not None:  # the cut is the instant: the share would be ignored silently
        raise ConfigError(f"--at {at} cuts at an instant and --test-fraction {test_fraction:g} at a share: give one")
    test_fraction = 0.2 if test_fraction is None else test_fraction
    given = {"at": at, "windows": windows, "window": window, "expanding": expanding, "gap": gap, "core": core}
    time: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    time |= {"targets": targets, "candidates": candidates}
    _check(method, test_fraction, folds, seed, out, time, data)
    loaded = load_data(
        data, fmt, scale=scale, sep=sep, user=user, item=item, rating=rating, timestamp=timestamp,
        no_header=no_header,
    )  # fmt: skip
    parts = split_by_name(loaded, method, test_fraction=test_fraction, folds=folds, seed=seed, **time)
    if loaded.timestamps is not None:  # one line per fold that leaks (Ji et al., TOIS 2023)
        for number, (train, test) in enumerate(parts, start=1):
            line = leakage_warning(train, test)
            if line is not None:
                typer.echo((f"fold {number}: " if len(parts) > 1 else "") + line, err=True)
    written, paths = [], set()
    with publish(out) as publication:  # all files or none: never a new train beside an old test
        for number, (train, test) in enumerate(parts, start=1):
            folder = out / f"fold-{number}" if split_method(method).folds else out
            for name, part in (("train", train), ("test", test)):
                columns = ["user", "item", "rating", *(["timestamp"] if part.timestamps is not None else [])]
                columns += ["point"] if "point" in part.extra else []  # targets=successive: one point per event
                frame = part.to_frame()[columns]
                path = folder / f"{name}.tsv"
                write_frame(publication.path(path), frame)
                paths.add(path)
                written.append(f"{name}: {len(frame)} ratings of {len(frame['user'].unique())} users -> {path}")
        for old in _split_files(out):  # an earlier split's files the new one has not: gone with the old set
            if old not in paths:
                publication.remove(old)
    for line in written:
        typer.echo(line)


def _split_files(out: Path) -> list[Path]:
    """The files a split writes that ``out`` holds: ``train.tsv``, ``test.tsv`` and those of folders ``fold-N``."""
    folders = [out, *(p for p in out.glob("fold-*") if re.fullmatch(r"fold-\d+", p.name))]
    return [f / name for f in folders for name in ("train.tsv", "test.tsv") if (f / name).is_file()]


def register(app: typer.Typer) -> None:
    """Attach ``split`` to the main app."""
    app.command("split")(split_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "split": "receval split ~/data/ml-100k --format ml-100k --method per-user --test-fraction 0.2 --seed 1 --out split"
}
