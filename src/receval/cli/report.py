"""``receval report RESULTS_DIR``: one self-contained HTML report (and LaTeX tables) of an experiment."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def report_command(
    results_dir: Path = typer.Argument(..., help="An experiment's output directory (written by 'receval run')."),
    out: Path | None = typer.Option(None, "--out", help="HTML file to write (default: RESULTS_DIR/report.html)."),
    latex: Path | None = typer.Option(None, "--latex", help="Folder for the summary tables as booktabs LaTeX."),
    figures: Path | None = typer.Option(None, "--figures", help="Folder to also save every figure as PNG and SVG."),
    no_data: bool = typer.Option(False, "--no-data", help="Skip the data set overview (no loading or generating)."),
) -> int:
    """Write an HTML report: configuration, provenance, tables with significance marks, every figure the results allow.

    The file embeds its figures and opens without network access. A partial or older
    result store gives a report of what is there and a notice of what is missing; a folder
    that is not a result store is an error (nothing is written). The data set overview
    reads each data set where the run read it (``experiment.json`` records the absolute
    path), from whatever folder the report is made. The folder of a tuning run gets its
    tuning report (default RESULTS_DIR/tune.html).
    """
    from receval.errors import ConfigError
    from receval.experiment.store import ResultStore
    from receval.outputs import check_output_dir, check_output_file
    from receval.report.html import INDEX, build_report
    from receval.report.tune import is_tune_folder, report_tune_folder

    if out is not None:  # never over one of the store's own files (an earlier report is not one)
        own = results_dir.rglob("*") if results_dir.is_dir() else ()
        kept = {f"the result store's {p.relative_to(results_dir)}": p for p in own if p.suffix != ".html"}
        check_output_file(out, "--out", kept)
    for folder, option in ((latex, "--latex"), (figures, "--figures")):
        if folder is not None:
            check_output_dir(folder, option)
    if not results_dir.is_dir():  # a mistyped name would otherwise become a new folder holding an empty report
        raise ConfigError(f"{results_dir}: no such folder; give the output folder of 'receval run'")
    if is_tune_folder(results_dir):
        for folder, option in ((latex, "--latex"), (figures, "--figures")):
            if folder is not None:
                raise ConfigError(f"{option}: a tuning run's report has no LaTeX tables or figure files; leave it out")
        typer.echo(f"report written to {report_tune_folder(results_dir, out)}")
        return 0
    if not ResultStore(results_dir).is_store():
        raise ConfigError(
            f"{results_dir}: not a result store (no experiment.json, no finished task in parts/); "
            "give the output folder of 'receval run'"
        )
    path = build_report(results_dir, out, latex_dir=latex, figures_dir=figures, dataset_overview=not no_data)
    typer.echo(f"report written to {path}")
    if latex is not None:
        n_tables = len(json.loads((latex / INDEX).read_text(encoding="utf-8")))
        typer.echo(
            f"{n_tables} LaTeX table(s) in {latex}"
            if n_tables
            else f"no LaTeX table written: {results_dir} has no successful task to tabulate"
        )
    return 0


def register(app: typer.Typer) -> None:
    """Attach ``report`` to the main app."""
    app.command("report")(report_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {"report": "receval report results/quickstart --out quickstart.html --latex tables"}
