"""``receval simulate``: cyclic (interactive) simulation of several algorithms.

``receval simulate --data PATH --format FORMAT [--familiar-only] [--preset P]
[--test-fraction F] [--threshold λ] [--algorithms LIST] [--param NAME:key=value ...]
[--rounds N] [--seed S] [--tau a|b] [--out DIR] [--json]``

The data are split by a seeded random holdout (:func:`receval.split.holdout`); every
algorithm runs with the same split and seed. An entry ``NAME@TAG`` of ``--algorithms``
is one more configuration of the algorithm NAME (``--param NAME@TAG:key=value`` sets
its parameters); when an algorithm runs in several configurations, the best of each
per metric and the algorithms' ranking are printed too
(:func:`receval.studies.cyclic_selection.best_per_algorithm`). ``--json`` prints
``{"final": {algorithm: {metric: value}}, "kendall_tau": {"recall_fallout": x,
"precision_anti_precision": y}, "settings": {"preset": ..., "tau": "a" or "b", ...}}``
at the last round (τ between quality rankings: +1 the metrics agree), plus
``"best_per_algorithm"`` with several configurations of one algorithm. With ``--out``:
``trajectories.parquet`` and ``.csv`` (one row per algorithm and round), ``final.csv``,
``tau.csv`` (τ per round), ``ranks.csv``, ``curves.png`` (normalised Recall and
Fallout) and ``ranks.png`` (each algorithm's rank by Recall and by Fallout).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from receval import jsontext
from receval.cli.common import FORMAT_HELP, load_data
from receval.cli.output import OUTPUT_HELP, output_format
from receval.errors import ConfigError

DEFAULT_ALGORITHMS = (
    "random",
    "popularity",
    "average",
    "item-bandit-egreedy",
    "item-bandit-ts",
    "im-item-bandit-egreedy",
    "im-item-bandit-ts",
)


def register(app: typer.Typer) -> None:
    """Attach the ``simulate`` command to the main app."""
    app.command("simulate")(simulate_command)


def parse_algorithm_params(pairs: list[str]) -> dict[str, dict[str, str]]:
    """``["item-bandit-egreedy:epsilon=0.2"]`` to ``{"item-bandit-egreedy": {"epsilon": "0.2"}}``.

    Returns
    -------
    dict
        Algorithm name (or ``NAME@TAG`` label) to its parameters, values as strings.

    >>> parse_algorithm_params(["knn-bandit:k=5", "knn-bandit:alpha0=2"])
    {'knn-bandit': {'k': '5', 'alpha0': '2'}}
    """
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        name, sep, rest = pair.partition(":")
        key, eq, value = rest.partition("=")
        if not sep or not eq or not name.strip() or not key.strip():
            raise ConfigError(
                f"--param {pair!r} is not of the form NAME:key=value (e.g. item-bandit-egreedy:epsilon=0.1)"
            )
        out.setdefault(name.strip(), {})[key.strip()] = value.strip()
    return out


def simulate_command(
    data: Path = typer.Option(..., "--data", help="The data set's folder (multi-file formats) or file."),
    fmt: str | None = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    familiar_only: bool = typer.Option(False, "--familiar-only", help="Only rows flagged familiar (CM100k)."),
    preset: str = typer.Option(
        "standard",
        "--preset",
        help="standard (textbook), cyclorec (CycloRec's semantics) or thesis (CycloRec plus "
        "the variants faithful to the thesis' text: the kNN bandit's agreement on positive and negative ratings, "
        "UCB's pulls from feedback only and decaying δ, τ-a, offline models refitted every round, 20% test; "
        "docs/guides/thesis.md lists every value).",
    ),
    test_fraction: float | None = typer.Option(
        None, "--test-fraction", help="Share of ratings held out as feedback (default the preset's: 0.2)."
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        help="λ: ratings ≥ λ are positive, the others negative (default 1 on the usual scales, "
        "which leaves no negatives: give e.g. 4 on 1-5).",
    ),
    algorithms: str = typer.Option(",".join(DEFAULT_ALGORITHMS), "--algorithms", help="Comma-separated names."),
    param: list[str] = typer.Option([], "--param", help="NAME:key=value, e.g. item-bandit-egreedy:epsilon=0.1."),
    rounds: int = typer.Option(500, "--rounds", help="Number of rounds."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and of every run."),
    order: str = typer.Option("random", "--order", help="random or uniform-with-replacement."),
    updates: str = typer.Option("sequential", "--updates", help="sequential or batched."),
    refit_every: int | None = typer.Option(
        None,
        "--refit-every",
        help="Rounds between refits of user-knn/item-knn/hkv (default the preset's: 10, thesis 1).",
    ),
    tau: str | None = typer.Option(
        None, "--tau", help="Kendall's τ variant: a (the thesis' Eq. 2.10) or b (scipy's; default, thesis: a)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Folder for trajectories, tables and PNG figures."),
    as_json: bool = typer.Option(False, "--json", help="Print the final metrics and Kendall's τ as JSON."),
    output: str | None = typer.Option(None, "--output", help=OUTPUT_HELP),
) -> None:
    """Recommend, read feedback, learn, repeat: Precision/Recall/AntiPrecision/Fallout per round."""
    import pandas as pd

    from receval.recommenders.registry import SIMULATION_PRESETS
    from receval.simulate import simulate_many
    from receval.split import holdout
    from receval.stats.agreement import TAU_VARIANTS, kendall_agreement
    from receval.studies.cyclic_selection import best_of_runs
    from receval.validate import check_command_options, check_distinct

    check_command_options(seed=seed, rounds=rounds, test_fraction=test_fraction, refit_every=refit_every)
    if preset not in SIMULATION_PRESETS:
        raise ConfigError(f"--preset {preset!r} is not one of {', '.join(SIMULATION_PRESETS)}")
    if tau is not None and tau not in TAU_VARIANTS:
        raise ConfigError(f"--tau {tau!r} is not one of {', '.join(TAU_VARIANTS)} (Kendall's τ-a or τ-b)")
    defaults = SIMULATION_PRESETS[preset]
    tau_variant = str(tau or defaults["tau"])
    fraction = float(defaults["test_fraction"] if test_fraction is None else test_fraction)
    refit = int(defaults["refit_every"] if refit_every is None else refit_every)
    settings = {"preset": preset, "tau": tau_variant, "test_fraction": fraction, "refit_every": refit}
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    fmt_out = output_format(output, as_json)
    names = check_distinct([a.strip() for a in algorithms.split(",") if a.strip()], "--algorithms")
    if not names:
        raise ConfigError("--algorithms is empty; give comma-separated names such as random,popularity")
    params = parse_algorithm_params(param)
    ratings = load_data(data, fmt, familiar_only=familiar_only)  # prepared as a configuration's filters are
    train, test = holdout(ratings, fraction, seed=seed)
    runs = simulate_many(
        names, train, test, params=params, preset=preset, rounds=rounds, threshold=threshold, seed=seed, order=order,
        updates=updates, refit_every=refit,
    )  # fmt: skip
    lam = next(iter(runs.values())).settings["threshold"]  # a missing λ is resolved by simulate, for every run alike
    final = pd.DataFrame({name: run.final() for name, run in runs.items()}).T
    taus = kendall_agreement(runs, tau=tau_variant)
    selection = best_of_runs(runs, rounds, tau=tau_variant)
    if out is not None:
        from receval.report.cyclic import write_outputs

        write_outputs(out, runs, tau=tau_variant)
    if fmt_out == "json":
        payload: dict[str, Any] = {
            "final": final.to_dict("index"),
            "kendall_tau": dict(taus),
            "settings": settings,
        }
        if selection is not None:
            payload["best_per_algorithm"] = {
                "round": selection.t,
                "table": selection.table.to_dict("records"),
                "kendall_tau": dict(selection.tau),
            }
        typer.echo(jsontext.dumps(payload))
        return
    from receval.cli.output import Table, print_table

    title = f"after {rounds} rounds (λ = {lam:g}, preset {preset}, test fraction {fraction:g}, refit every {refit})"
    print_table(Table.from_frame(final, title=title, index_label="algorithm"), fmt_out)
    comment = "# " if fmt_out == "tsv" else ""
    typer.echo(
        comment + f"Kendall τ-{tau_variant} (quality rankings, +1 = agree): Recall/Fallout "
        f"{taus['recall_fallout']:.3f}, Precision/AntiPrecision {taus['precision_anti_precision']:.3f}"
    )
    if selection is not None:
        shown = selection.table.drop(columns=["dataset"]).set_index("algorithm")
        title = f"best configuration of each algorithm at round {selection.t} by Recall and by Fallout"
        print_table(Table.from_frame(shown, title=title, index_label="algorithm"), fmt_out)
        typer.echo(
            comment + f"Kendall τ-{tau_variant} between the algorithms' rankings by Recall and by Fallout: "
            f"{selection.tau['']:.3f}"
        )


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "simulate": "receval simulate --data ~/data/cm100k --format cm100k --threshold 3 --preset thesis --out cyclic"
}
