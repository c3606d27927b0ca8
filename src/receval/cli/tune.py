"""``receval tune CONFIG [--out DIR] [--trials N] [--json]``: tune on validation data, evaluate once on test.

:func:`receval.experiment.tune.tune_experiment` runs the configuration's ``[tune]``
section; each finished trial is a line on stderr. The output folder receives the
study (``tune.sqlite3``), the tables (``tune_trials.parquet``,
``tune_test_per_user.parquet``, ``tune_compare.parquet``), ``tune.json`` and the report
``tune.html``. ``--json`` prints ``{"algorithms": {name: {"best_params": {...}, "trials":
N, "validation": v, "test": v, "default_test": v}}}`` for the objective metric, where
a name is ``<dataset>/<recommender>``; otherwise a table of default against tuned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from receval import jsontext
from receval.cli.output import Table, print_table

_JSON_KEYS = ("best_params", "chosen", "trials", "validation", "default_validation", "test", "default_test")


def register(app: typer.Typer) -> None:
    """Attach the ``tune`` command to the main app."""
    app.command("tune")(tune_command)


def tune_command(
    config: Path = typer.Argument(..., help="Experiment configuration (TOML) with a [tune] section."),
    out: Path | None = typer.Option(None, "--out", help="Output folder (default: the config's 'output')."),
    trials: int | None = typer.Option(None, "--trials", help="Trials per recommender, replacing the config's budget."),
    executor: str = typer.Option("local", "--executor", help="local, dask or ray (where the trials run)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Worker processes (local) or workers (Dask LocalCluster, Ray)."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", "--address", help="Dask scheduler or Ray cluster address (default: start one locally)."
    ),
    quick: bool = typer.Option(False, "--quick", help="Apply the config's [quick] overrides."),
    as_json: bool = typer.Option(False, "--json", help="Print the objective's results as JSON."),
) -> int:
    """Tune every recommender on validation data with the same budget, then evaluate each choice once on test."""
    from receval.validate import check_jobs

    check_jobs(jobs)  # before anything is read: a pool of more workers than jobs_limit() exhausts memory
    if trials is not None:
        from receval.validate import check_count

        check_count(trials, "--trials")
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    from receval.experiment.tune import tune_experiment
    from receval.report.tune import results_table, write_tune_report

    def on_trial(study: str, number: int, params: Any, value: float | None, error: str | None) -> None:
        shown = f"{value:.4f}" if value is not None else f"failed: {error}"
        typer.echo(f"  {study} trial {number}: {jsontext.dumps(params, sort_keys=True)} -> {shown}", err=True)

    report = tune_experiment(
        config, out=out, trials=trials, executor=executor, jobs=jobs, scheduler=scheduler, quick=quick,
        on_trial=on_trial,
    )  # fmt: skip
    page = write_tune_report(report.summary, report.trials, report.compare, report.root / "tune.html")
    if as_json:
        doc = {name: {k: res[k] for k in _JSON_KEYS} for name, res in report.summary["algorithms"].items()}
        typer.echo(jsontext.dumps({"algorithms": doc}, sort_keys=True))
        return 0
    frame = results_table(report.summary, report.compare)
    objective = report.summary["objective"]
    table = Table(
        ["data set / recommender", f"{objective} default", f"{objective} tuned", "p (Holm)", "validation", "trials",
         "chosen parameters"],
        title=f"default and tuned on test ({objective}; tuned on validation data)",
        right=[False, True, True, True, True, True, False],
    )  # fmt: skip
    for _, row in frame.iterrows():
        table.add_row(
            f"{row['dataset']}/{row['recommender']}",
            f"{row[f'{objective} default']:.4f}",
            f"{row[f'{objective} tuned']:.4f}",
            f"{row[f'{objective} p (Holm)']:.3g}",
            f"{row['validation']:.4f}",
            str(row["trials"]),
            str(row["chosen parameters"]),
        )
    print_table(table)
    if not report.summary["equal_budgets"]:
        typer.echo("note: the budgets differ between recommenders (see tune.html)")
    typer.echo(f"results in {report.root}; report {page} ({report.seconds:.1f}s)")
    return 0


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "tune": "receval tune examples/tune_ml100k.toml --out results/tune-ml100k --trials 20 --json"
}
