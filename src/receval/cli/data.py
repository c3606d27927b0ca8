"""``receval data ...``: statistics of a data set and downloads of known ones.

Commands: ``receval data stats PATH --format FORMAT [--json]``, ``receval data prepare
PATH --core K --out DIR [--json]`` (the k-core to a fixed point, with its retention report),
``receval data fetch NAME [--cache DIR] [--sha256 HEX]`` and ``receval data list``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from receval import jsontext
from receval.cli.common import FORMAT_HELP, SCALE_HELP, NoHeader, load_data
from receval.cli.output import OUTPUT_HELP, output_format

data_app = typer.Typer(help="Inspect and fetch data sets.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Attach the ``data`` command group to the main app."""
    app.add_typer(data_app, name="data")


@data_app.command("stats")
def stats_command(
    path: Path = typer.Argument(..., help="The data set's folder (multi-file formats) or file."),
    fmt: str | None = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    output: str | None = typer.Option(None, "--output", help=OUTPUT_HELP),
    familiar_only: bool = typer.Option(False, "--familiar-only", help="Only rows flagged familiar (CM100k)."),
    scale: str | None = typer.Option(None, "--scale", help=SCALE_HELP),
    sep: str | None = typer.Option(None, "--sep", help="Field separator of a csv/tsv file."),
    user: str | None = typer.Option(None, "--user", help="User column of a csv/tsv/parquet file."),
    item: str | None = typer.Option(None, "--item", help="Item column of a csv/tsv/parquet file."),
    rating: str | None = typer.Option(None, "--rating", help="Rating column of a csv/tsv/parquet file."),
    timestamp: str | None = typer.Option(None, "--timestamp", help="Timestamp column of a csv/tsv/parquet file."),
    no_header: NoHeader = False,
) -> None:
    """Users, items, ratings, density, rating histogram, popularity long tail, Gini, MAR/MNAR."""
    from receval.data.stats import dataset_stats

    fmt_out = output_format(output, as_json)
    data = load_data(
        path, fmt, familiar_only=familiar_only, scale=scale, sep=sep, user=user, item=item, rating=rating,
        timestamp=timestamp, no_header=no_header,
    )  # fmt: skip
    stats = dataset_stats(data)
    if fmt_out == "json":
        typer.echo(jsontext.dumps(stats))
    else:
        _print_stats(stats, str(path), fmt_out)


def _print_stats(stats: dict[str, Any], label: str, fmt: str = "table") -> None:
    from receval.cli.output import Table, print_table

    familiar = stats.get("familiar")
    columns = ["statistic", "all", *(["familiar"] if familiar is not None else [])]
    table = Table(columns, title=f"{stats['name'] or label}", right=[c != "statistic" for c in columns])
    rows = [
        ("users", "n_users", "{:,}"),
        ("items (rated)", "n_items", "{:,}"),
        ("ratings", "n_ratings", "{:,}"),
        ("density", "density", "{:.4%}"),
        ("mean rating", "mean_rating", "{:.3f}"),
        ("Gini of item popularity", "gini_item_popularity", "{:.3f}"),
        ("share on top 10% items", "top10pct_item_share", "{:.1%}"),
        ("repeated (user, item) rows", "n_duplicates", "{:,}"),
    ]
    for title, key, pattern in rows:
        cells = [_fmt(stats.get(key), pattern)]
        if familiar is not None:
            cells.append(_fmt(familiar.get(key), pattern))
        table.add_row(title, *cells)
    for title, pick in (
        ("popularity CV (uniform CV)", lambda s: f"{s['mar_mnar']['cv']:.3f} ({s['mar_mnar']['cv_uniform']:.3f})"),
        ("MAR / MNAR", lambda s: s["mar_mnar"]["label"]),
        ("most / least rated item", lambda s: f"{s['item_popularity'][0]:,} / {s['item_popularity'][-1]:,}"),
        ("ratings per user min/median/max", _activity),
    ):
        cells = [pick(stats) if stats["n_ratings"] else "-"]
        if familiar is not None:
            cells.append(pick(familiar) if familiar["n_ratings"] else "-")
        table.add_row(title, *cells)
    if familiar is not None:
        table.add_row("familiar rows", f"{stats['n_familiar']:,} ({stats['familiar_share']:.1%})", "")
    scale = stats["scale"]
    step = f" step {scale['step']:g}" if scale["step"] else ""
    table.add_row("scale", f"{scale['low']:g}..{scale['high']:g}{step}", *([""] if familiar is not None else []))
    if "n_aspects" in stats:
        table.add_row("aspects", str(stats["n_aspects"]), *([""] if familiar is not None else []))
    print_table(table, fmt)
    columns = ["rating", "count", *(["familiar"] if familiar is not None else [])]
    hist = Table(columns, title="ratings per value", right=[c != "rating" for c in columns])
    for value, count in stats["rating_counts"].items():
        extra = [f"{familiar['rating_counts'].get(value, 0):,}"] if familiar is not None else []
        hist.add_row(value, f"{count:,}", *extra)
    print_table(hist, fmt)
    typer.echo(("# " if fmt == "tsv" else "") + f"MAR/MNAR rule: {stats['mar_mnar'].get('rule', '')}")


def _activity(s: dict[str, Any]) -> str:
    a = s["user_activity"]
    return f"{a['min']:,} / {a['median']:g} / {a['max']:,}"


def _fmt(value: Any, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


@data_app.command("prepare")
def prepare_command(
    path: Path = typer.Argument(..., help="The data set's folder (multi-file formats) or file."),
    core: int = typer.Option(..., "--core", help="Keep the K-core: every user and item with at least K ratings."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for ratings.tsv (created if missing)."),
    fmt: str | None = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the retention report as one JSON object."),
    scale: str | None = typer.Option(None, "--scale", help=SCALE_HELP),
    sep: str | None = typer.Option(None, "--sep", help="Field separator of a csv/tsv file."),
    user: str | None = typer.Option(None, "--user", help="User column of a csv/tsv/parquet file."),
    item: str | None = typer.Option(None, "--item", help="Item column of a csv/tsv/parquet file."),
    rating: str | None = typer.Option(None, "--rating", help="Rating column of a csv/tsv/parquet file."),
    timestamp: str | None = typer.Option(None, "--timestamp", help="Timestamp column of a csv/tsv/parquet file."),
    no_header: NoHeader = False,
) -> None:
    """Filter to the k-core (iterated to a fixed point), write OUT/ratings.tsv and report what each round kept."""
    from receval.atomic import publish, write_frame
    from receval.data.prepare import k_core
    from receval.outputs import check_output_dir
    from receval.validate import check_count

    check_count(core, "core")
    check_output_dir(out, "--out", {"the data file": path}, ("ratings.tsv",))
    data = load_data(
        path, fmt, scale=scale, sep=sep, user=user, item=item, rating=rating, timestamp=timestamp,
        no_header=no_header,
    )  # fmt: skip
    kept, report = k_core(data, core, label=str(path))
    target = out / "ratings.tsv"
    columns = ["user", "item", "rating", *(["timestamp"] if kept.timestamps is not None else [])]
    with publish(out) as publication:
        write_frame(publication.path(target), kept.to_frame()[columns])
    body = report.as_dict() | {"path": str(target)}
    if as_json:
        typer.echo(jsontext.dumps(body))
        return
    for number, r in enumerate(report.rounds):
        typer.echo(f"round {number}: {r['users']:,} users, {r['items']:,} items, {r['ratings']:,} ratings")
    typer.echo(
        f"{core}-core: kept {body['users_kept']:.1%} of users, {body['items_kept']:.1%} of items, "
        f"{body['ratings_kept']:.1%} of ratings -> {target}"
    )


@data_app.command("fetch")
def fetch_command(
    name: str = typer.Argument(..., help="A known data set (see `receval data list`), by name or format."),
    cache: Path | None = typer.Option(None, "--cache", help="Cache folder (default $RECEVAL_DATA or the user cache)."),
    sha256: str | None = typer.Option(None, "--sha256", help="Expected SHA-256 of the download (overrides)."),
) -> None:
    """Download, verify and unpack a known data set; prints the folder to pass to --format."""
    from receval.data.registry import DATASETS, dataset_name, fetch

    folder = fetch(name, cache, sha256=sha256)
    typer.echo(f"{folder}\t(load with --format {DATASETS[dataset_name(name)].format})")


@data_app.command("list")
def list_command(output: str = typer.Option("table", "--output", help=OUTPUT_HELP)) -> None:
    """The known data sets, their formats and whether a checksum is on record."""
    from receval.cli.output import Table, print_table
    from receval.data.registry import DATASETS

    table = Table(["name", "format", "sha256", "description"])
    for d in DATASETS.values():
        check = "by hand" if d.url is None else ("yes" if d.sha256 else "none (--sha256)")
        table.add_row(d.name, d.format, check, d.description)
    print_table(table, output_format(output))


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "data stats": "receval data stats ~/data/ml-100k --format movielens-100k",
    "data prepare": "receval data prepare ~/data/ml-100k --format movielens-100k --core 10 --out ml-100k-10core --json",
    "data fetch": "receval data fetch ml-100k --cache ~/data",
    "data list": "receval data list",
}
