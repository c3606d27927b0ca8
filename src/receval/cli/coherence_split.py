"""``receval coherence-split``: easy vs difficult users by coherence, five models (Said & Bellogín, UMUAI 2018)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from receval.cli.common import AspectsOption, DataOption, FormatOption, ScaleOption, load_with_aspects, one_of
from receval.errors import ConfigError

_AVERAGES: tuple[Literal["users", "equal"], ...] = ("users", "equal")


def _parse_ps(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise ConfigError(f"--p {text!r}: give shares of difficult users like 0.1,0.5,0.9") from err


def coherence_split_command(
    data: DataOption,
    format: FormatOption,
    aspects: AspectsOption = None,
    p: Annotated[str, typer.Option("--p", help="Shares of difficult users, comma-separated.")] = "0.1,0.5,0.9",
    models: Annotated[str, typer.Option("--models", help="ib,ub,mf or algorithm names.")] = "ib,ub,mf",
    folds: Annotated[int, typer.Option("--folds", help="Per-user k-fold cross-validation.")] = 5,
    gamma: Annotated[str, typer.Option("--gamma")] = "wstd",
    avg: Annotated[
        str,
        typer.Option(
            "--avg",
            help="The Avg column: users (All-Easy and All-Diff weighted by test users, the paper's text) or equal "
            "(their plain mean, which reproduces the paper's tables).",
        ),
    ] = "users",
    out: Annotated[Path | None, typer.Option("--out", help="Folder for table.csv, rmse.csv, figure.png.")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    scale: ScaleOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
) -> None:
    """Easy vs difficult users by coherence: the five training/test models (Table 6, Figure 3)."""
    import numpy as np

    from receval.recommenders import list_algorithms
    from receval.report.studies import write_coherence_split
    from receval.studies.partitions import coherence_split_experiment, paper_models
    from receval.validate import check_command_options, check_folds

    names = [m.strip() for m in models.split(",") if m.strip()]
    check_command_options(seed=seed, folds=folds)
    averaging = one_of(avg, _AVERAGES, "--avg")
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    recommenders = paper_models(names, seed)  # unknown names or parameters fail before loading
    rankers = [name for name, model in recommenders.items() if not callable(getattr(model, "predict", None))]
    if rankers:  # the experiment compares RMSE: every model predicts ratings
        can = [a.name for a in list_algorithms() if callable(getattr(a.cls, "predict", None))]
        raise ConfigError(
            f"--models: {', '.join(rankers)} only rank items and cannot predict the ratings whose RMSE the "
            f"experiment compares; use ib, ub, mf or one of {', '.join(can)}"
        )
    inter = load_with_aspects(data, format, aspects, scale)
    if inter.has_duplicates:
        inter = inter.deduplicate("last")
    check_folds(folds, np.bincount(inter.users, minlength=inter.n_users))
    result = coherence_split_experiment(
        inter, recommenders, _parse_ps(p), folds=folds, gamma=gamma, avg=averaging, seed=seed
    )
    written = write_coherence_split(result, out) if out is not None else []
    if json_out:
        typer.echo(result.table.reset_index().to_json(orient="records"))
        return
    typer.echo(result.table6().to_string(index=False))
    typer.echo(f"relative RMSE in % w.r.t. All-All; ▲ best, ▼ worst; coherence {gamma}, {folds}-fold per user")
    typer.echo(
        "Avg: the mean of All-Easy and All-Diff weighted by their test users (the paper's text); --avg equal "
        "gives the plain mean, which reproduces the paper's tables"
        if averaging == "users"
        else "Avg: the plain mean of All-Easy and All-Diff, as the paper's tables (--avg users weights them by "
        "their test users, as its text says)"
    )
    if written:
        typer.echo(f"wrote {', '.join(map(str, written))}")


def register(app: typer.Typer) -> None:
    """Attach ``coherence-split`` to the main app."""
    app.command("coherence-split")(coherence_split_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "coherence-split": (
        "receval coherence-split --data ~/data/ml-100k --format movielens-100k --p 0.1,0.5,0.9 --models ib,ub,mf "
        "--out split"
    )
}
