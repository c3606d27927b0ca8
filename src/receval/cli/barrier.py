"""``receval barrier``: the magic barrier from repeated ratings (Said & Bellogín, UMUAI 2018, Algorithm 1)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from receval import jsontext
from receval.cli.common import DataOption, FormatOption, ScaleOption, id_text, json_value, load_data
from receval.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd


def barrier_command(
    data: DataOption,
    format: FormatOption,
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
    scale: ScaleOption = None,
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
            **{k: (json_value(v) if isinstance(v, float) else v) for k, v in mb.summary().items()},
            "system_ci": [json_value(v) for v in mb.system_ci],
            "users": {id_text(u): float(b) for u, b in users["barrier"].items()},
            "users_ci": {
                id_text(u): [json_value(lo), json_value(hi)]
                for u, lo, hi in zip(users.index, users["ci_low"], users["ci_high"], strict=True)
            },
        }
        if checks:
            out["overfitting"] = [c.summary() for c in checks]
        typer.echo(jsontext.dumps(out))
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


def _per_user_rmse(path: Path) -> pd.Series:
    import numpy as np

    from receval.data.tables import read_table

    frame = read_table(path, "predictions", ("user", "rating", "prediction"), text_ids=False)  # as the data's ids
    err2 = (frame["prediction"] - frame["rating"]) ** 2
    return np.sqrt(err2.groupby(frame["user"]).mean())


def register(app: typer.Typer) -> None:
    """Attach ``barrier`` to the main app."""
    app.command("barrier")(barrier_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {"barrier": "receval barrier --data rerated.csv --format csv --scale 1..5 --bootstrap 200"}
