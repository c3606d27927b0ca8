"""``receval results DIR``: an experiment's results, and how ``run`` and ``results`` show them.

The summary table (mean ± std of every metric per configuration), the cold-start lines
and the console are shared with ``receval run``, which ends by showing the same summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from receval import jsontext
from receval.cli.output import OUTPUT_HELP, Table, escape, output_format, print_table, render
from receval.errors import ConfigError, DataError

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

__all__ = ["cold_start_lines", "convention_words", "results_console", "results_command", "summary_table"]


def results_console() -> Console:
    """A console; wide when the output is not a terminal (logs, pipes) so tables stay readable."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=160)


def summary_table(frame: pd.DataFrame, title: str, fmt: str = "table") -> Table:
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
    friedman: str | None = typer.Option(
        None,
        "--friedman",
        help="Friedman test with Nemenyi's post-hoc (Demšar 2006) of the configurations on this metric, across "
        "data sets (or folds and seeds, with one data set); --cd-diagram draws it.",
    ),
    cd_figure: Path | None = typer.Option(
        None, "--cd-diagram", help="With --friedman: write the critical-difference diagram here (.png or .svg)."
    ),
) -> int:
    """List and summarise an experiment's results; optionally compare configurations with paired tests."""
    import pandas as pd
    from rich.console import Console

    from receval.cli.common import one_of
    from receval.experiment.runner import compare, summarise
    from receval.experiment.store import ResultStore
    from receval.vocabulary import CORRECTION_NAMES, TEST_NAMES

    one_of(test, tuple(TEST_NAMES), "--test")  # before the store is read, and even when nothing is compared
    one_of(correction, tuple(CORRECTION_NAMES), "--correction")
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
    console = results_console() if fmt == "table" else Console(stderr=True)  # stdout: only the tables
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
        f"experiment {escape(repr(name))} (config {escape(config_hash)}{escape(convention_words(convention))}): "
        + (f"{n_tasks} tasks, " if n_tasks is not None else "")
        + ", ".join(state)
    )
    for task_id, why in damaged.items():
        console.print(f"  damaged: {escape(task_id)}: {escape(why)}", highlight=False)
    if damaged:
        console.print("  (run the same configuration again: damaged tasks run again, the others are kept)")
    console.print("tables: " + ", ".join(escape(p.name) for p in sorted(store.root.glob("*.parquet"))))
    if len(tasks) and counts.get("ok"):
        summary = summary_table(summarise(store), "mean ± std over seeds", fmt)
        if fmt == "json":
            doc["summary"] = json.loads(render(summary, "json"))
        else:
            print_table(summary, fmt, tables)
        for line in cold_start_lines(store):
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
    if friedman is not None:
        _friedman(store, friedman, cd_figure, fmt, doc, tables)
    elif cd_figure is not None:
        raise ConfigError("--cd-diagram draws the result of --friedman METRIC; add it")
    if fmt == "json":
        typer.echo(jsontext.dumps(doc, ensure_ascii=False))
    return 0


# --- claims that hold: Friedman and Nemenyi across data sets (or folds and seeds) -----------------------


def _friedman(store: Any, metric: str, cd_figure: Path | None, fmt: str, doc: dict[str, Any], tables: Any) -> None:
    from receval.report.claims import friedman_of

    if cd_figure is not None:  # never over one of the store's own files (an earlier figure is not one)
        from receval.outputs import check_output_file

        own = store.root.rglob("*") if store.root.is_dir() else ()
        kept = {f"the result store's {p.relative_to(store.root)}": p for p in own if p.suffix not in (".png", ".svg")}
        check_output_file(cd_figure, "--cd-diagram", kept)
    result, table, what = friedman_of(store, metric)
    rows = [[name, rank] for name, rank in zip(result.systems, result.avg_ranks, strict=True)]
    title = (
        f"Friedman over {len(table)} {what} on {metric}: chi2 = {result.statistic:.4g}, p = {result.pvalue:.4g}; "
        f"Nemenyi CD = {result.cd:.3g} at alpha = {result.alpha:g}"
    )
    ranks = Table(["configuration", "average rank"], rows=sorted(rows, key=lambda r: r[1]), title=title)
    if fmt == "json":
        doc["friedman"] = {
            "metric": metric,
            "blocks": what,
            "n_blocks": len(table),
            "statistic": result.statistic,
            "pvalue": result.pvalue,
            "iman_davenport": result.iman_davenport,
            "iman_davenport_pvalue": result.iman_davenport_pvalue,
        } | result.cd_data()
    else:
        print_table(ranks, fmt, tables)
    if cd_figure is not None:
        from receval.report.claims import cd_diagram

        cd_diagram(result).savefig(cd_figure)


def cold_start_lines(store: Any) -> list[str]:
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


def convention_words(convention: str | None) -> str:
    """``", convention trec_eval"`` for a run with a library preset, else nothing."""
    return f", convention {convention}" if convention else ""


def register(app: typer.Typer) -> None:
    """Attach ``results`` to the main app."""
    app.command("results")(results_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {"results": "receval results results/quickstart --compare ndcg@10 --baseline 'popularity()'"}
