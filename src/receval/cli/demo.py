"""``receval demo``: the main job end to end on generated, MovieLens-like data.

It generates a data set, prints its statistics, trains several recommenders on a
random 80/20 split, evaluates them one-shot (accuracy, false-positive,
beyond-accuracy and aspect metrics, plus RMSE for rating predictors), runs a short
cyclic simulation with bandits and reports whether Recall and Fallout agree.
Everything is seeded: the same ``--seed`` gives the same numbers.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from receval import jsontext
from receval.cli.output import OUTPUT_HELP, output_format
from receval.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from receval.atomic import Publication

# λ on the generated 1–5 scale, as the thesis on MovieLens: the demo shows likes against dislikes, which the
# library's default (RatingScale.default_threshold: every rating relevant) would not split
THRESHOLD = 4.0
DEMO_K = 10  # the lists' length, the cutoff of every metric below
DEMO_METRICS = (
    "precision@10",
    "recall@10",
    "ndcg@10",
    "map@10",
    "mrr",
    "anti_precision@10",
    "fallout@10",
    "coverage@10",
    "gini@10",
    "alpha_ndcg@10(alpha=0.5)",
    "ab_ndcg@10",
)
# Defaults throughout: kNN ranks with whole-vector cosine and MF with PureSVD, and both
# predict ratings as scikit-surprise does (see receval.recommenders.knn and .mf).
DEMO_RANKERS: dict[str, dict[str, Any]] = {
    "random": {},
    "popularity": {"threshold": THRESHOLD},
    "average": {"threshold": THRESHOLD},
    "item-knn": {},
    "user-knn": {},
    "mf": {},
    "hkv": {"threshold": THRESHOLD},
}
DEMO_PREDICTORS = ("global-mean", "biases", "item-knn", "user-knn", "mf")
TITLES = {
    "one_shot": "One-shot top-10 evaluation (macro means over test users)",
    "rmse": "Rating prediction on the test ratings",
    "cyclic": "Cyclic simulation: cumulative metrics after {rounds} rounds",
}
DEMO_CYCLIC = ("random", "popularity", "average", "item-bandit-egreedy", "item-bandit-ts", "im-item-bandit-ts")


def register(app: typer.Typer) -> None:
    """Attach ``receval demo`` to the main app."""
    app.command("demo")(demo_command)


def demo_command(
    seed: int = typer.Option(0, help="Seed of the generator, the split and the models."),
    users: int = typer.Option(943, help="Number of generated users."),
    items: int = typer.Option(1682, help="Number of generated items."),
    ratings: int = typer.Option(100_000, help="Expected number of generated ratings."),
    rounds: int = typer.Option(100, help="Rounds of the cyclic simulation."),
    out: Path = typer.Option(Path("receval-demo"), help="Folder for the result tables and the HTML report."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    output: str | None = typer.Option(None, "--output", help=OUTPUT_HELP),
) -> None:
    """Generate MovieLens-like data and evaluate recommenders on it, end to end."""
    from rich.console import Console
    from rich.markup import escape

    from receval.atomic import publish
    from receval.cli.output import Table, print_table
    from receval.validate import check_command_options

    check_command_options(seed=seed, users=users, items=items, ratings=ratings, rounds=rounds)
    if items < DEMO_K:
        raise ConfigError(f"--items {items}: the demo's lists hold {DEMO_K} items; give --items {DEMO_K} or more")
    if ratings > users * items:
        raise ConfigError(f"--ratings {ratings}: more than the {users * items:,} (user, item) pairs of --users "
                          f"{users} x --items {items}; give fewer ratings or more users or items")  # fmt: skip
    from receval.outputs import check_output_dir

    check_output_dir(out, "--out")
    fmt = output_format(output, json_output)
    console = Console(quiet=fmt != "table")  # tsv/markdown/json: only the tables, printed below
    from receval.report.html import report_from_tables

    summary = run_demo(seed=seed, users=users, items=items, ratings=ratings, rounds=rounds, console=console)
    report = out / "report.html"
    with publish(out) as publication:  # the tables and their report appear together, or the old ones stay
        _write(summary, out, publication)
        titles = {key: title.format(rounds=rounds) for key, title in TITLES.items()}
        report_from_tables(summary, publication.path(report), titles=titles)
    console.print(f"\nTables written to [bold]{escape(str(out))}[/bold]; report: [bold]{escape(str(report))}[/bold]")
    if fmt == "json":
        typer.echo(jsontext.dumps(_jsonable(summary), indent=2))
    elif fmt != "table":
        for key, title in TITLES.items():
            print_table(_table(summary[key], title.format(rounds=rounds)), fmt)
        tau = summary["kendall_tau"]
        print_table(Table(["pair", "kendall_tau"], [[k, v] for k, v in tau.items()], title="Kendall τ"), fmt)


def run_demo(
    *, seed: int = 0, users: int = 943, items: int = 1682, ratings: int = 100_000, rounds: int = 100, console=None
) -> dict:
    """Run the demo and return its results (also printed to ``console`` when given).

    Examples
    --------
    >>> out = run_demo(users=60, items=80, ratings=1500, rounds=5)
    >>> sorted(out)
    ['cyclic', 'data', 'kendall_tau', 'one_shot', 'per_user', 'rmse', 'stats', 'trajectories']
    >>> bool(0.0 <= out["one_shot"].loc["popularity", "precision@10"] <= 1.0)
    True
    """
    from rich.console import Console

    from receval.cli.output import print_table
    from receval.data.stats import dataset_stats
    from receval.data.synthetic import generate
    from receval.progress import progress_to
    from receval.split import holdout

    console = console or Console(quiet=True)
    t0 = time.perf_counter()
    notify, steps = progress_to(None), itertools.count(1)
    total = 1 + len(DEMO_RANKERS) + len(DEMO_PREDICTORS) + len(DEMO_CYCLIC)

    def step() -> None:  # one step: the data, then each model evaluated or simulated
        notify(next(steps), total, "demo")

    notify(0, total, "demo")
    data = generate(users, items, ratings, seed=seed, name="demo (generated, MovieLens-like)")
    stats = dataset_stats(data)
    console.rule("[bold]receval demo")
    console.print(
        f"Generated {stats['n_ratings']:,} ratings by {stats['n_users']:,} users of {stats['n_items']:,} items "
        f"(density {stats['density']:.4f}, item-popularity Gini {stats['gini_item_popularity']:.3f}, "
        f"{stats['mar_mnar']['label']}), {0 if data.aspect_names is None else len(data.aspect_names)} genres."
    )
    train, test = holdout(data, test_fraction=0.2, seed=seed)
    threshold = THRESHOLD
    step()
    console.print(
        f"Random 80/20 holdout: {train.n_ratings:,} training, {test.n_ratings:,} test ratings; λ = {threshold:g}."
    )

    one_shot, per_user = _one_shot(train, test, threshold, seed, step)
    print_table(_table(one_shot, TITLES["one_shot"]), console=console)
    rmse = _rating_prediction(train, test, seed, step)
    print_table(_table(rmse, TITLES["rmse"]), console=console)
    cyclic, trajectories, tau = _cyclic(train, test, threshold, rounds, seed, step)
    print_table(_table(cyclic, TITLES["cyclic"].format(rounds=rounds)), console=console)
    console.print(
        f"Kendall τ between the quality rankings by Recall and by Fallout: {tau['recall_fallout']:+.2f}; "
        f"by Precision and AntiPrecision: {tau['precision_anti_precision']:+.2f} (+1 agree, −1 inverted)."
    )
    console.print(f"Done in {time.perf_counter() - t0:.1f} s.")
    return {
        "stats": stats,
        "data": data,
        "one_shot": one_shot,
        "per_user": per_user,
        "rmse": rmse,
        "cyclic": cyclic,
        "trajectories": trajectories,
        "kendall_tau": tau,
    }


def _one_shot(train, test, threshold: float, seed: int, step: Callable[[], None]) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    from receval.evaluation import evaluate_model
    from receval.recommenders import make

    rows, per_user = {}, []
    for name, params in DEMO_RANKERS.items():
        result = evaluate_model(
            make(name, **params), train, test, DEMO_METRICS, k=DEMO_K, threshold=threshold, seed=seed
        )
        rows[name] = result.summary
        long = result.per_user.melt(id_vars="user", var_name="metric", value_name="value")
        per_user.append(long.assign(system=name))
        step()
    return pd.DataFrame.from_dict(rows, orient="index"), pd.concat(per_user, ignore_index=True)


def _rating_prediction(train, test, seed: int, step: Callable[[], None]) -> pd.DataFrame:
    import pandas as pd

    from receval.evaluation import evaluate_model
    from receval.recommenders import make

    rows = {}
    for name in DEMO_PREDICTORS:
        rows[name] = evaluate_model(make(name), train, test, ["rmse", "mae"], seed=seed).summary
        step()
    return pd.DataFrame.from_dict(rows, orient="index")


def _cyclic(
    train, test, threshold: float, rounds: int, seed: int, step: Callable[[], None]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Final values per algorithm, every round's values (long: ``system, round, ...``) and the τ agreement."""
    import pandas as pd

    from receval.simulate import simulate
    from receval.stats.agreement import kendall_agreement

    final, rounds_table = {}, []
    for name in DEMO_CYCLIC:
        traj = simulate(name, train, test, rounds=rounds, threshold=threshold, seed=seed)
        final[name] = traj.final()
        rounds_table.append(traj.table.assign(system=name))
        step()
    table = pd.DataFrame.from_dict(final, orient="index")
    return table, pd.concat(rounds_table, ignore_index=True), kendall_agreement(table)


def _table(frame: pd.DataFrame, title: str):
    """Metrics as rows and systems as columns: there are more metrics than systems."""
    from receval.cli.output import Table

    rows = [[str(metric), *frame[metric].astype(float)] for metric in frame.columns]
    return Table(["metric", *(str(system) for system in frame.index)], rows, title=title)


def _write(summary: dict, out: Path, publication: Publication) -> None:
    from receval.atomic import write_frame, write_text

    for key in ("one_shot", "rmse", "cyclic"):
        write_frame(publication.path(out / f"{key}.csv"), summary[key], index=True)
    write_text(publication.path(out / "summary.json"), jsontext.dumps(_jsonable(summary), indent=2))


def _jsonable(summary: dict) -> dict:
    """The summary's tables as nested dicts, plain JSON values (:func:`receval.jsontext.plain`)."""
    import pandas as pd

    out = {}
    for key in ("stats", "one_shot", "rmse", "cyclic", "kendall_tau"):
        value = summary[key]
        out[key] = value.to_dict(orient="index") if isinstance(value, pd.DataFrame) else value
    return jsontext.plain(out)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "demo": "receval demo --seed 1 --users 300 --items 500 --ratings 15000 --rounds 20 --out demo"
}
