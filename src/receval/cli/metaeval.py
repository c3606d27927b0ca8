"""``receval metaeval``: meta-evaluate metrics on a data set with real recommenders.

Loads the data (its item aspects, e.g. MovieLens genres, or ``--aspects FILE`` with
columns ``item,aspect``) and runs :func:`receval.studies.metaeval.metaeval_study`: a
seeded random holdout, each system of ``--systems`` (names of ``receval algorithms``)
recommending top-k lists excluding the training items, and the three experiments
(swap correlation, discriminative power, robustness to incompleteness). Tables (CSV)
and figures (PNG) go to ``--out`` (:func:`receval.report.studies.write_metaeval`); a
summary is printed.

Examples
--------
>>> import tempfile, pathlib
>>> from receval.data.synthetic import generate
>>> from receval.cli import main
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> data = generate(n_users=60, n_items=80, n_ratings=1500, seed=0)
>>> data.to_frame().to_csv(d / "r.csv", index=False)
>>> names = data.aspect_names
>>> import pandas as pd
>>> rows, cols = data.aspects.nonzero()
>>> pd.DataFrame({"item": data.item_ids[rows], "aspect": names[cols]}).to_csv(d / "a.csv", index=False)
>>> main(["metaeval", "--data", str(d / "r.csv"), "--format", "csv", "--aspects", str(d / "a.csv"),
...       "--systems", "random,popularity", "--metrics", "alpha_ndcg@5,ndcg@5", "--k", "5",
...       "--strengths", "0,0.5", "--fractions", "0.5", "--seeds", "1", "--out", str(d / "out"), "--quiet"])
0
>>> sorted(p.name for p in (d / "out").iterdir())  # doctest: +NORMALIZE_WHITESPACE
['discriminative_power.csv', 'discriminative_power.png', 'incompleteness.csv', 'incompleteness.png',
 'swap_correlation.csv', 'swap_curves.csv', 'swap_curves.png']
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval.studies.metaeval_defaults import DEFAULT_METRICS, DEFAULT_SYSTEMS

__all__ = ["register"]


def _floats(text: str, what: str) -> list[float]:
    from receval.errors import ConfigError

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise ConfigError(f"--{what} takes comma-separated numbers, got {text!r}") from err


def _with_aspects(data, path: Path):
    """``data`` with the item aspects of an ``item,aspect`` table (ids matched in the data's id type)."""
    from receval.data.tables import read_table
    from receval.data.vocab import lookup

    table = read_table(path, "aspects", ("item", "aspect"))
    rows = lookup(data.item_ids, table["item"].to_numpy(dtype=object), "item", coerce=True, path=path)  # read as text
    return data.with_aspects(table.assign(item=data.item_ids[rows]))


def metaeval_command(
    data: Annotated[Path, typer.Option("--data", help="Ratings file or folder.")],
    format: Annotated[str, typer.Option("--format", "-f", help="Data format (see `receval data list`).")],
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated metric strings.")] = ",".join(
        DEFAULT_METRICS
    ),
    systems: Annotated[str, typer.Option("--systems", help="Comma-separated algorithm names.")] = ",".join(
        DEFAULT_SYSTEMS
    ),
    out: Annotated[Path, typer.Option("--out", help="Output folder for tables and figures.")] = Path("metaeval"),
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split, the models and the distortions.")] = 0,
    aspects: Annotated[Path | None, typer.Option("--aspects", help="item,aspect table (else the data's).")] = None,
    k: Annotated[int, typer.Option("--k", help="List length and swap-experiment cutoff.")] = 10,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Relevance threshold λ (rating ≥ λ; default 1 on usual scales).")
    ] = None,
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Holdout test share.")] = 0.2,
    strengths: Annotated[str, typer.Option("--strengths", help="Distortion strengths.")] = "0,0.1,0.3,0.5",
    fractions: Annotated[str, typer.Option("--fractions", help="Shares of judgments removed.")] = "0.1,0.3,0.5,0.7,0.9",
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds per removal fraction.")] = 3,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing but errors.")] = False,
) -> None:
    """Meta-evaluate metrics: swap correlation, discriminative power, robustness to incompleteness."""
    import pandas as pd

    from receval.cli.common import load_data
    from receval.errors import ConfigError
    from receval.metrics.registry import parse_metric_list
    from receval.report.studies import write_metaeval
    from receval.studies.metaeval import metaeval_study
    from receval.validate import check_command_options, check_fraction, check_number, check_threshold

    check_command_options(seed=seed, k=k, test_fraction=test_fraction, seeds=seeds)
    from receval.outputs import check_output_dir

    check_output_dir(out, "--out")
    metric_list = parse_metric_list(metrics)
    strength_list = [check_number(d, "--strengths", minimum=0, maximum=1) for d in _floats(strengths, "strengths")]
    system_list = [s.strip() for s in systems.split(",") if s.strip()]
    if not system_list:
        raise ConfigError("--systems needs at least one algorithm name")
    loaded = load_data(data, format)
    if aspects is not None:
        loaded = _with_aspects(loaded, aspects)
    if loaded.aspects is None:
        raise ConfigError("the data has no item aspects: pass --aspects FILE (columns item,aspect)")
    if threshold is not None:
        check_threshold(threshold, loaded.scale.low, loaded.scale.high, "--threshold")
    study = metaeval_study(
        loaded,
        metric_list,
        system_list,
        k=k,
        threshold=threshold,
        test_fraction=test_fraction,
        strengths=strength_list,
        fractions=[check_fraction(f, "--fractions") for f in _floats(fractions, "fractions")],
        n_seeds=seeds,
        seed=seed,
    )
    write_metaeval(study, out)
    if quiet:
        return
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        typer.echo(f"{study.n_users} users, {study.n_items} items, {study.n_aspects} aspects\n")
        typer.echo("system means:\n" + study.means.round(4).to_string() + "\n")
        for title, frame, columns, values in (
            ("swap correlation (Kendall τ)", study.swap, "mode", "tau"),
            ("discriminative power (share of pairs, p < 0.05)", study.power, "test", "share"),
            ("incompleteness (Kendall τ vs full truth)", study.robustness, "fraction", "tau"),
        ):
            table = frame.pivot(index="metric", columns=columns, values=values).round(3)
            typer.echo(f"{title}:\n{table.to_string()}\n")
        typer.echo(f"tables and figures in {out}")


def register(app: typer.Typer) -> None:
    """Attach ``receval metaeval`` to the main app."""
    app.command("metaeval")(metaeval_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "metaeval": "receval metaeval --data ~/data/ml-100k --format movielens-100k --systems random,popularity,mf"
}
