"""``receval coherence-barrier``: coherence against the per-user magic barrier (Said & Bellogín 2018, Table 2)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from receval import jsontext
from receval.cli.common import (
    AspectsOption,
    DataOption,
    FormatOption,
    ScaleOption,
    json_value,
    load_with_aspects,
    one_of,
)
from receval.errors import ConfigError


def coherence_barrier_command(
    data: DataOption,
    format: FormatOption,
    aspects: AspectsOption = None,
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
    scale: ScaleOption = None,
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
    table = barrier_validation(
        load_with_aspects(data, format, aspects, scale), keep=kept, ddof=1 if ddof == 1 else 0, seed=seed
    )
    mb = table.attrs["barrier"]
    if json_out:
        out: dict[str, Any] = {
            col: {str(name): json_value(v) for name, v in table[col].items()}
            for col in ("spearman", "pearson", "spearman_p", "pearson_p")
        }
        out["n_users"] = {str(name): int(n) for name, n in table["n_users"].items()}
        out["keep"] = kept
        out["barrier"] = {k: v for k, v in mb.items() if k not in ("system_ci", "confidence", "resample")}
        typer.echo(jsontext.dumps(out))
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


def register(app: typer.Typer) -> None:
    """Attach ``coherence-barrier`` to the main app."""
    app.command("coherence-barrier")(coherence_barrier_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "coherence-barrier": "receval coherence-barrier --data rerated.csv --format csv --aspects genres.csv --json"
}
