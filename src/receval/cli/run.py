"""``receval run CONFIG``: run or resume an experiment grid (``receval results DIR`` shows it again later)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from receval.cli.evaluate import CONVENTION_HELP
from receval.cli.output import escape, print_table
from receval.cli.results import cold_start_lines, convention_words, results_console, summary_table


def run_command(
    config: Path = typer.Argument(..., help="Experiment configuration (TOML)."),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default: the config's 'output')."),
    executor: str = typer.Option("local", "--executor", help="local, dask or ray."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Worker processes (local) or workers (Dask LocalCluster, Ray)."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", "--address", help="Dask scheduler or Ray cluster address (default: start one locally)."
    ),
    quick: bool = typer.Option(False, "--quick", help="Apply the config's [quick] overrides (smaller grid)."),
    force: bool = typer.Option(
        False, "--force", help="Replace results of a different config in --out (only files receval wrote are removed)."
    ),
    convention: str | None = typer.Option(
        None, "--convention", help=CONVENTION_HELP + " Replaces the config's 'convention'."
    ),
) -> int:
    """Run an experiment grid, or resume it: finished tasks in the output directory are skipped.

    A configuration with a ``[tune]`` section is tuned as ``receval tune`` does.
    """
    from receval.validate import check_jobs

    check_jobs(jobs)  # before anything is read: a pool of more workers than jobs_limit() exhausts memory
    if convention is not None:  # before anything is read or written
        from receval.evaluation import check_convention

        convention = check_convention(convention)
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    from receval.experiment.config import load_config

    if load_config(config, quick=quick, convention=convention).tune is not None:  # [tune]: receval tune runs it
        from receval.cli.tune import tune_command

        return tune_command(config, out, None, executor, jobs, scheduler, quick, False)
    from receval.experiment.runner import run_experiment, summarise

    console = results_console()  # the progress bar: receval's own on stderr (a terminal only), see receval.cli.feedback

    def on_start(todo: list, skipped: int, where: str) -> None:
        console.print(f"{len(todo) + skipped} tasks, {skipped} already finished, {len(todo)} to run on {escape(where)}")

    def on_result(task: Any, result: Any) -> None:
        mark = "[green]ok[/]" if result.status == "ok" else f"[red]failed[/] {escape(result.error)}"
        console.print(f"  {escape(task.id)}  {escape(task.describe())}  {result.seconds:.2f}s  {mark}", highlight=False)

    t0 = time.perf_counter()
    try:
        report = run_experiment(
            config,
            out=out,
            executor=executor,
            jobs=jobs,
            scheduler=scheduler,
            quick=quick,
            force=force,
            convention=convention,
            on_start=on_start,
            on_result=on_result,
        )
    except KeyboardInterrupt:
        console.print("interrupted: finished tasks are saved; run the same command again to resume")
        return 130
    for task_id, why in report.repaired.items():
        console.print(f"ran again: {escape(task_id)} (was damaged: {escape(why)})", highlight=False)
    summary = summarise(report.store)
    if len(summary):
        title = f"{report.config.name}: mean ± std over seeds" + convention_words(report.config.convention)
        print_table(summary_table(summary, title), console=console)
    for line in cold_start_lines(report.store):
        console.print(escape(line), highlight=False)
    console.print(
        f"{report.ok} ok, {report.failed} failed, {report.skipped} skipped (already done) of {report.n_tasks} tasks "
        f"in {time.perf_counter() - t0:.1f}s; results in {escape(report.store.root)}"
    )
    return 1 if report.failed else 0


def register(app: typer.Typer) -> None:
    """Attach ``run`` to the main app."""
    app.command("run")(run_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {"run": "receval run examples/quickstart.toml --out results/quickstart --jobs 2"}
