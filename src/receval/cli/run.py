"""``receval run CONFIG`` (run or resume an experiment grid) and ``receval results DIR``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from receval.cli.evaluate import CONVENTION_HELP
from receval.cli.output import OUTPUT_HELP, Table, escape, output_format, print_table, render
from receval.errors import ConfigError, DataError

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console


def _console() -> Console:
    """A console; wide when the output is not a terminal (logs, pipes) so tables stay readable."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=160)


def _summary_table(frame: pd.DataFrame, title: str, fmt: str = "table") -> Table:
    """Mean ± std of every metric per configuration; tsv and json keep means and stds as separate numbers."""
    import pandas as pd

    metrics = [c for c in frame.columns if c not in ("label", "n") and not c.endswith("_std")]
    if fmt in ("tsv", "json"):
        columns = ["label", "n", *(c for m in metrics for c in (m, f"{m}_std") if c in frame.columns)]
        numbers = frame[columns].rename(columns={"label": "configuration"})
        return Table.from_frame(numbers, title=title, index=False)
    table = Table(["configuration", "n", *metrics], title=title, right=[False, *([True] * (len(metrics) + 1))])
    for _, row in frame.iterrows():
        cells = [str(row["label"]), str(row["n"])]
        for m in metrics:
            mean, std = row[m], row.get(f"{m}_std")
            cells.append(f"{mean:.4f}" + (f" ± {std:.4f}" if pd.notna(std) else ""))
        table.add_row(*cells)
    return table


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

    console = _console()  # the progress bar: receval's own on stderr (a terminal only), see receval.cli.feedback

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
        title = f"{report.config.name}: mean ± std over seeds" + _convention_words(report.config.convention)
        print_table(_summary_table(summary, title), console=console)
    for line in _cold_start_lines(report.store):
        console.print(escape(line), highlight=False)
    console.print(
        f"{report.ok} ok, {report.failed} failed, {report.skipped} skipped (already done) of {report.n_tasks} tasks "
        f"in {time.perf_counter() - t0:.1f}s; results in {escape(report.store.root)}"
    )
    return 1 if report.failed else 0


def results_command(
    directory: Path = typer.Argument(..., help="An experiment's output directory."),
    failed: bool = typer.Option(False, "--failed", help="List the failed tasks with their errors."),
    compare_metric: str | None = typer.Option(
        None,
        "--compare",
        help="Paired significance tests between configurations on the per-user values of these metrics "
        "(comma-separated, as the configuration writes them; the correction runs within each metric).",
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Compare with this configuration (e.g. 'popularity()')."
    ),
    test: str = typer.Option("ttest", "--test", help="ttest, wilcoxon or permutation."),
    correction: str = typer.Option("holm", "--correction", help="bonferroni, holm, bh or none."),
    slices: bool = typer.Option(False, "--slices", help="With --compare: test within every slice group."),
    best: bool = typer.Option(
        False,
        "--best-per-algorithm",
        help="A cyclic experiment: per data set, each algorithm's best configuration at round 500 (or the last) by "
        "Recall and by Fallout, the algorithms' ranks and Kendall's τ between the two rankings.",
    ),
    output: str = typer.Option("table", "--output", help=OUTPUT_HELP + " Other than table: the rest on stderr."),
) -> int:
    """List and summarise an experiment's results; optionally compare configurations with paired tests."""
    import pandas as pd
    from rich.console import Console

    from receval.experiment.runner import compare, summarise
    from receval.experiment.store import ResultStore

    store = ResultStore(directory)
    try:
        meta = store.meta()
    except DataError as err:  # the tasks' own records still name the experiment
        typer.echo(f"warning: {err.message}", err=True)
        meta = {}
    else:
        if meta is None:
            raise ConfigError(f"{str(directory)!r} is not a receval experiment directory (no experiment.json)")
    fmt = output_format(output)
    console = _console() if fmt == "table" else Console(stderr=True)  # stdout: only the tables
    tables = console if fmt == "table" else None
    doc: dict[str, Any] = {}
    tasks = store.read("tasks") if store.parts.exists() else pd.DataFrame(columns=["status"])
    damaged = store.damaged()
    counts = tasks["status"].value_counts().to_dict() if len(tasks) else {}

    def recorded(key: str, column: str) -> Any:  # from experiment.json, else from the tasks' records
        return meta.get(key, tasks[column].iloc[0] if column in tasks and len(tasks) else "?")

    name, config_hash = recorded("name", "experiment"), recorded("config_hash", "config_hash")
    convention = meta.get("config", {}).get("convention")
    if convention is None and "convention" in tasks and len(tasks):  # without experiment.json: the tasks' records
        convention = tasks["convention"].iloc[0]
    n_tasks = meta.get("n_tasks")
    state = [f"{counts.get('ok', 0)} ok", f"{counts.get('failed', 0)} failed"]
    if damaged:
        state.append(f"{len(damaged)} damaged")
    if n_tasks is not None:
        state.append(f"{n_tasks - len(tasks) - len(damaged)} not run")
    console.print(
        f"experiment {escape(repr(name))} (config {escape(config_hash)}{escape(_convention_words(convention))}): "
        + (f"{n_tasks} tasks, " if n_tasks is not None else "")
        + ", ".join(state)
    )
    for task_id, why in damaged.items():
        console.print(f"  damaged: {escape(task_id)}: {escape(why)}", highlight=False)
    if damaged:
        console.print("  (run the same configuration again: damaged tasks run again, the others are kept)")
    console.print("tables: " + ", ".join(escape(p.name) for p in sorted(store.root.glob("*.parquet"))))
    if len(tasks) and counts.get("ok"):
        summary = _summary_table(summarise(store), "mean ± std over seeds", fmt)
        if fmt == "json":
            doc["summary"] = json.loads(render(summary, "json"))
        else:
            print_table(summary, fmt, tables)
        for line in _cold_start_lines(store):
            console.print(escape(line), highlight=False)
    if failed:
        for _, row in tasks[tasks["status"] != "ok"].iterrows():
            line = f"  {escape(row['task_id'])}  {escape(row['label'])}: {escape(row['error'])}"
            console.print(line, highlight=False)
    if compare_metric is not None:
        res = compare(store, compare_metric, baseline=baseline, test=test, correction=correction, slices=slices)
        title = f"paired {test} over users (values averaged over seeds), {correction} correction within each metric"
        table = Table.from_frame(res, title=title, index=False, float_format="{:.4g}")
        if fmt == "json":
            doc["compare"] = json.loads(render(table, "json"))
        else:
            print_table(table, fmt, tables)
    if best:
        from receval.report.cyclic import store_best_per_algorithm

        selection = store_best_per_algorithm(store)
        title = (
            f"best configuration of each algorithm at round {selection.t} (a shorter run: its last round; "
            f"Kendall τ-{selection.variant})"
        )
        table = Table.from_frame(selection.table, title=title, index=False, float_format="{:.4g}")
        if fmt == "json":
            doc["best_per_algorithm"] = json.loads(render(table, "json")) | {"kendall_tau": selection.tau}
        else:
            print_table(table, fmt, tables)
            for dataset, value in selection.tau.items():
                line = f"{dataset}: τ-{selection.variant}(Recall ranking, Fallout ranking) = {value:.3f}"
                console.print(escape(line), highlight=False)
    if fmt == "json":
        typer.echo(json.dumps(doc, ensure_ascii=False))
    return 0


def _cold_start_lines(store: Any) -> list[str]:
    """The cold users of the one-shot tasks and what ``[protocol] cold_start`` did, one line per distinct count.

    Read from the store's ``cold_start`` table (none for protocols without one).
    """
    from receval.cold_start import describe

    if "cold_start" not in store.table_names():
        return []
    table = store.read("cold_start")
    keys = ["cold_start", "users_evaluated", "users_cold", "users_cold_without_list"]
    lines = []
    for values, group in table.groupby(keys, dropna=False, sort=False):
        row = dict(zip(keys, values, strict=True))
        text = describe(
            row["cold_start"],
            users_cold=None if _missing(row["users_cold"]) else int(row["users_cold"]),
            users_cold_without_list=None if _missing(row["users_cold_without_list"])
            else int(row["users_cold_without_list"]),
            users_evaluated=int(row["users_evaluated"]),
        )  # fmt: skip
        tasks = f"{len(group)} task{'s' if len(group) != 1 else ''}"
        lines.append(f"{text} ([protocol] cold_start = {row['cold_start']!r}; {tasks})")
    return lines


def _missing(value: Any) -> bool:
    """Whether a cell is missing (pandas' NA or NaN)."""
    import pandas as pd

    return bool(pd.isna(value))


def _convention_words(convention: str | None) -> str:
    """``", convention trec_eval"`` for a run with a library preset, else nothing."""
    return f", convention {convention}" if convention else ""


def register(app: typer.Typer) -> None:
    """Attach ``run`` and ``results`` to the main app."""
    app.command("run")(run_command)
    app.command("results")(results_command)
