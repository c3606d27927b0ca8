"""``receval coherence``, ``barrier``, ``coherence-barrier`` and ``coherence-split`` (Said & Bellogín, UMUAI 2018)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from receval.cli.common import FORMAT_HELP, SCALE_HELP, load_data, one_of
from receval.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

_AVERAGES: tuple[Literal["users", "equal"], ...] = ("users", "equal")
DataOpt = Annotated[Path, typer.Option("--data", help="The data set's folder (multi-file formats) or file.")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)]
ScaleOpt = Annotated[str | None, typer.Option("--scale", help=SCALE_HELP)]
AspectsOpt = Annotated[
    Path | None,
    typer.Option(
        "--aspects",
        help="Item attributes: a CSV/TSV with columns item,aspect (one row per pair; '|' separates several).",
    ),
]


def _load(data: Path, format: str, aspects: Path | None, scale: str | None):
    inter = load_data(data, format, scale=scale)
    if aspects is not None:
        from receval.data.tables import read_aspects

        inter = inter.with_aspects(read_aspects(aspects, inter.item_ids))
    return inter


def _finite(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _key(user: Any) -> str:
    import numpy as np

    return str(user.item() if isinstance(user, np.generic) else user)


def coherence_command(
    data: DataOpt,
    format: FormatOpt,
    aspects: AspectsOpt = None,
    gamma: Annotated[
        str,
        typer.Option(
            "--gamma",
            help="std|wstd|mean|wmean|entropy|kld|size (Table 1, over item attributes) or barrier (Eq. 8: the "
            "squared deviations of repeated ratings from their pair's mean, over the times they were given).",
        ),
    ] = "wstd",
    scale: ScaleOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Per-user coherence C_u = -sum_a gamma(u_a) on the items' attributes (e.g. genres).

    With --gamma barrier: on the times of repeated ratings (Eq. 8), approximating the per-user magic barrier.
    """
    from receval.stats.coherence import EQ8, coherence

    coh = coherence(_load(data, format, aspects, scale), gamma)
    summary = {k: _finite(v) if isinstance(v, float) else v for k, v in coh.summary().items()}
    series = coh.to_series()
    if json_out:
        undefined = [_key(u) for u in coh.user_ids[~coh.defined]]
        out = {"users": {_key(u): float(v) for u, v in series.items()}, **summary, "undefined_users": undefined}
        typer.echo(json.dumps(out))
        return
    if gamma == EQ8:
        typer.echo(
            f"coherence ({gamma}, Eq. 8) of {summary['n_users']} users; {summary['n_undefined']} without a "
            "repeated rating (left out); higher = noisier (it approximates the per-user magic barrier)"
        )
    else:
        typer.echo(
            f"coherence ({gamma}) of {summary['n_users']} users; {summary['n_undefined']} without rated items "
            f"with attributes (left out); {summary['n_unattributed_ratings']} ratings of items without attributes"
        )
    typer.echo(
        f"mean {summary['mean']:.4f}  std {summary['std']:.4f}  min {summary['min']:.4f}  "
        f"median {summary['median']:.4f}  max {summary['max']:.4f}"
    )
    ordered = series.sort_values(kind="stable", ascending=gamma != EQ8)  # Eq. 8 grows with the noise
    typer.echo("least coherent users (difficult):")
    for user, value in ordered.head(10).items():
        typer.echo(f"  {_key(user)}\t{value:.4f}")
    typer.echo("most coherent users (easy):")
    for user, value in ordered.tail(10)[::-1].items():
        typer.echo(f"  {_key(user)}\t{value:.4f}")


def barrier_command(
    data: DataOpt,
    format: FormatOpt,
    ddof: Annotated[int, typer.Option("--ddof", help="0: the paper's 1/m; 1: unbiased 1/(m-1).")] = 0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap replicates for the CIs (0: none).")] = 1000,
    confidence: Annotated[float, typer.Option("--confidence")] = 0.95,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    rmse: Annotated[
        float | None, typer.Option("--rmse", help="An evaluation's RMSE to check against the barrier.")
    ] = None,
    predictions: Annotated[
        Path | None,
        typer.Option("--predictions", help="Predictions file (user,item,rating,prediction) to check per user."),
    ] = None,
    scale: ScaleOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Magic barrier (Algorithm 1 of Said & Bellogín 2018) from repeated ratings."""
    from receval.stats.barrier import check_overfitting, magic_barrier
    from receval.validate import check_command_options

    if ddof not in (0, 1):
        raise ConfigError(f"--ddof {ddof}: use 0 (the paper's 1/m) or 1 (unbiased)")
    check_command_options(seed=seed, bootstrap=bootstrap, confidence=confidence, rmse=rmse)
    mb = magic_barrier(
        load_data(data, format, scale=scale),
        ddof=1 if ddof == 1 else 0,  # checked above to be 0 or 1
        n_bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
    )
    checks = []
    if rmse is not None:
        checks.append(check_overfitting(rmse, mb))
    if predictions is not None:
        checks.append(check_overfitting(_per_user_rmse(predictions), mb))
    if json_out:
        users = mb.users
        out = {
            **{k: (_finite(v) if isinstance(v, float) else v) for k, v in mb.summary().items()},
            "system_ci": [_finite(v) for v in mb.system_ci],
            "users": {_key(u): float(b) for u, b in users["barrier"].items()},
            "users_ci": {
                _key(u): [_finite(lo), _finite(hi)]
                for u, lo, hi in zip(users.index, users["ci_low"], users["ci_high"], strict=True)
            },
        }
        if checks:
            out["overfitting"] = [c.summary() for c in checks]
        typer.echo(json.dumps(out))
        return
    lo, hi = mb.system_ci
    ci = f" ({mb.confidence:.0%} CI {lo:.4f}..{hi:.4f})" if bootstrap else ""
    typer.echo(f"magic barrier {mb.system:.4f}{ci}, ddof={mb.ddof}")
    typer.echo(
        f"{mb.n_pairs} pairs rated {mb.m_min}..{mb.m_max} times by {len(mb.users)} users; "
        f"{mb.n_single} pairs rated once left out"
    )
    b = mb.users["barrier"]
    typer.echo(f"per user: mean {b.mean():.4f}  median {b.median():.4f}  min {b.min():.4f}  max {b.max():.4f}")
    for check in checks:
        typer.echo(("WARNING overfitting: " if check.flagged else "ok: ") + check.message)


def coherence_barrier_command(
    data: DataOpt,
    format: FormatOpt,
    aspects: AspectsOpt = None,
    keep: Annotated[
        str,
        typer.Option(
            "--keep",
            help="The rating of a repeated pair that Table 1's functions and the baselines read: first (the "
            "paper: coherence from the ratings in the system, the barrier adds later opinions), last or mean. "
            "Eq. 8 reads every repeated rating.",
        ),
    ] = "first",
    ddof: Annotated[
        int, typer.Option("--ddof", help="Barrier estimator. 0: the paper's 1/m; 1: unbiased 1/(m-1).")
    ] = 0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random baseline.")] = 0,
    scale: ScaleOpt = None,
    json_out: Annotated[
        bool,
        typer.Option("--json", help='Print {"spearman": {gamma: rho}, "pearson": {gamma: r}, ...} as one JSON object.'),
    ] = False,
) -> None:
    """Correlation of each coherence function and the baselines with the per-user magic barrier (Table 2 of Said &
    Bellogín, UMUAI 2018) on data with repeated ratings."""
    from receval.stats.coherence import KEEPS, barrier_validation
    from receval.validate import check_command_options

    if ddof not in (0, 1):
        raise ConfigError(f"--ddof {ddof}: use 0 (the paper's 1/m) or 1 (unbiased)")
    check_command_options(seed=seed)
    kept = one_of(keep, KEEPS, "--keep")
    table = barrier_validation(_load(data, format, aspects, scale), keep=kept, ddof=1 if ddof == 1 else 0, seed=seed)
    mb = table.attrs["barrier"]
    if json_out:
        out: dict[str, Any] = {
            col: {str(name): _finite(v) for name, v in table[col].items()}
            for col in ("spearman", "pearson", "spearman_p", "pearson_p")
        }
        out["n_users"] = {str(name): int(n) for name, n in table["n_users"].items()}
        out["keep"] = kept
        out["barrier"] = {k: v for k, v in mb.items() if k not in ("system_ci", "confidence", "resample")}
        typer.echo(json.dumps(out))
        return
    typer.echo(
        f"coherence vs the per-user magic barrier (Said & Bellogín, UMUAI 2018, Table 2): {mb['n_users']} users "
        f"with a barrier from {mb['n_pairs']} pairs rated {mb['m_min']}..{mb['m_max']} times (ddof={mb['ddof']}); "
        f"Table 1's functions and the baselines read the {kept} rating of each pair"
    )
    shown = table[["spearman", "pearson", "n_users"]].reset_index()
    typer.echo(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="n/a"))
    typer.echo(
        "Table 1's functions: more coherent users have a lower barrier, so a good one correlates negatively; "
        "barrier (Eq. 8) grows with the noise and correlates positively; n/a: fewer than 3 users or a constant"
    )


def _per_user_rmse(path: Path) -> pd.Series:
    import numpy as np

    from receval.data.tables import read_table

    frame = read_table(path, "predictions", ("user", "rating", "prediction"), text_ids=False)  # as the data's ids
    err2 = (frame["prediction"] - frame["rating"]) ** 2
    return np.sqrt(err2.groupby(frame["user"]).mean())


def _parse_ps(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise ConfigError(f"--p {text!r}: give shares of difficult users like 0.1,0.5,0.9") from err


def coherence_split_command(
    data: DataOpt,
    format: FormatOpt,
    aspects: AspectsOpt = None,
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
    scale: ScaleOpt = None,
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
    inter = _load(data, format, aspects, scale)
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
    """Attach ``coherence``, ``barrier``, ``coherence-barrier`` and ``coherence-split`` to the main app."""
    app.command("coherence")(coherence_command)
    app.command("barrier")(barrier_command)
    app.command("coherence-barrier")(coherence_barrier_command)
    app.command("coherence-split")(coherence_split_command)
