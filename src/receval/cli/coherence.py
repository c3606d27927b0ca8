"""``receval coherence``: per-user coherence on item attributes or repeated ratings (Said & Bellogín, UMUAI 2018)."""

from __future__ import annotations

from typing import Annotated

import typer

from receval import jsontext
from receval.cli.common import (
    AspectsOption,
    DataOption,
    FormatOption,
    ScaleOption,
    id_text,
    json_value,
    load_with_aspects,
)


def coherence_command(
    data: DataOption,
    format: FormatOption,
    aspects: AspectsOption = None,
    gamma: Annotated[
        str,
        typer.Option(
            "--gamma",
            help="std|wstd|mean|wmean|entropy|kld|size (Table 1, over item attributes) or barrier (Eq. 8: the "
            "squared deviations of repeated ratings from their pair's mean, over the times they were given).",
        ),
    ] = "wstd",
    scale: ScaleOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Per-user coherence C_u = -sum_a gamma(u_a) on the items' attributes (e.g. genres).

    With --gamma barrier: on the times of repeated ratings (Eq. 8), approximating the per-user magic barrier.
    """
    from receval.stats.coherence import EQ8, coherence

    coh = coherence(load_with_aspects(data, format, aspects, scale), gamma)
    summary = {k: json_value(v) if isinstance(v, float) else v for k, v in coh.summary().items()}
    series = coh.to_series()
    if json_out:
        undefined = [id_text(u) for u in coh.user_ids[~coh.defined]]
        out = {"users": {id_text(u): float(v) for u, v in series.items()}, **summary, "undefined_users": undefined}
        typer.echo(jsontext.dumps(out))
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
        typer.echo(f"  {id_text(user)}\t{value:.4f}")
    typer.echo("most coherent users (easy):")
    for user, value in ordered.tail(10)[::-1].items():
        typer.echo(f"  {id_text(user)}\t{value:.4f}")


def register(app: typer.Typer) -> None:
    """Attach ``coherence`` to the main app."""
    app.command("coherence")(coherence_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "coherence": "receval coherence --data ~/data/ml-100k --format movielens-100k --gamma wstd --json"
}
