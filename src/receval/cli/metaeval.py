"""``receval metaeval``: meta-evaluate metrics on a data set with real recommenders.

Loads the data (its item aspects, e.g. MovieLens genres, or ``--aspects FILE`` with
columns ``item,aspect``), splits it by a seeded random holdout, trains each system of
``--systems`` (names of ``receval algorithms``), recommends top-k lists excluding the
training items, and runs the three experiments of :mod:`receval.studies.metaeval`:
swap correlation, discriminative power, robustness to incompleteness. Tables (CSV)
and figures (PNG) go to ``--out``; a summary is printed.

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

__all__ = ["register", "DEFAULT_METRICS", "DEFAULT_SYSTEMS"]

DEFAULT_METRICS = "ab_ndcg@10,alpha_ndcg@10,nerr_ia@10,s_recall@10,p_ia@10,ndcg@10,precision@10"
DEFAULT_SYSTEMS = "random,popularity,item-knn,mf,hkv"


def _floats(text: str, what: str) -> list[float]:
    from receval.errors import ConfigError

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise ConfigError(f"--{what} takes comma-separated numbers, got {text!r}") from err


def metaeval_command(
    data: Annotated[Path, typer.Option("--data", help="Ratings file or folder.")],
    format: Annotated[str, typer.Option("--format", "-f", help="Data format (see `receval data list`).")],
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated metric strings.")] = DEFAULT_METRICS,
    systems: Annotated[str, typer.Option("--systems", help="Comma-separated algorithm names.")] = DEFAULT_SYSTEMS,
    out: Annotated[Path, typer.Option("--out", help="Output folder for tables and figures.")] = Path("metaeval"),
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split, the models and the distortions.")] = 0,
    aspects: Annotated[Path | None, typer.Option("--aspects", help="item,aspect table (else the data's).")] = None,
    k: Annotated[int, typer.Option("--k", help="List length and swap-experiment cutoff.")] = 10,
    threshold: Annotated[float, typer.Option("--threshold", help="Relevance threshold λ (rating ≥ λ).")] = 4.0,
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Holdout test share.")] = 0.2,
    strengths: Annotated[str, typer.Option("--strengths", help="Distortion strengths.")] = "0,0.1,0.3,0.5",
    fractions: Annotated[str, typer.Option("--fractions", help="Shares of judgments removed.")] = "0.1,0.3,0.5,0.7,0.9",
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds per removal fraction.")] = 3,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing but errors.")] = False,
) -> None:
    """Meta-evaluate metrics: swap correlation, discriminative power, robustness to incompleteness."""
    import numpy as np
    import pandas as pd

    from receval.atomic import write_frame
    from receval.cli.common import load_data
    from receval.cli.evaluate import read_table
    from receval.errors import ConfigError, DataError
    from receval.metrics.registry import parse_metric, parse_metric_list
    from receval.recommenders import make, recommend
    from receval.split import holdout
    from receval.studies import metaeval as me

    metric_list = parse_metric_list(metrics)
    for m in metric_list:
        parse_metric(m)  # unknown names fail before any training
    system_list = [s.strip() for s in systems.split(",") if s.strip()]
    if not system_list:
        raise ConfigError("--systems needs at least one algorithm name")
    loaded = load_data(data, format).deduplicate("last")
    if aspects is not None:
        table = read_table(aspects, "aspects", ("item", "aspect"))
        if loaded.item_ids.dtype.kind in "iu":  # ids are read as text; match the data's integer ids
            numeric = pd.to_numeric(table["item"], errors="coerce")
            if numeric.isna().any():
                bad = table["item"][numeric.isna()].iloc[0]
                raise DataError(f"item id {bad!r} is not in the data's id space (integer ids)", path=aspects)
            table["item"] = numeric.astype(loaded.item_ids.dtype)
        loaded = loaded.with_aspects(table)
    if loaded.aspects is None:
        raise ConfigError("the data has no item aspects: pass --aspects FILE (columns item,aspect)")
    train, test = holdout(loaded, test_fraction=test_fraction, seed=seed)
    truth_all, train_all = test.to_csr(), train.to_csr()
    users = np.flatnonzero(np.diff(truth_all.indptr) > 0)
    truth, train_csr = truth_all[users], train_all[users]
    runs = {}
    for name in system_list:
        model = make(name).fit(train)
        items, _ = recommend(model, users, k, exclude=train, seed=seed)
        runs[name] = items
    common = {"threshold": threshold, "rating_max": float(loaded.scale.high)}
    swap, curves = me.swap_correlation(metric_list, truth, loaded.aspects, train_csr, k=k, **common)
    power = me.discriminative_power(
        metric_list,
        runs,
        truth,
        loaded.aspects,
        train_csr,
        strengths=_floats(strengths, "strengths"),
        seed=seed,
        **common,
    )
    robust = me.incompleteness(
        metric_list,
        runs,
        truth,
        loaded.aspects,
        train_csr,
        fractions=_floats(fractions, "fractions"),
        strengths=_floats(strengths, "strengths"),
        seeds=list(range(seed, seed + seeds)),
        **common,
    )
    out.mkdir(parents=True, exist_ok=True)
    for frame, name in (
        (swap, "swap_correlation"),
        (curves, "swap_curves"),
        (power, "discriminative_power"),
        (robust, "incompleteness"),
    ):
        write_frame(out / f"{name}.csv", frame)
    me.plot_metaeval(curves, power, robust, out)
    if not quiet:
        means = {
            name: {
                m: float(np.nanmean(me.per_user(m, r, truth, loaded.aspects, train_csr, **common))) for m in metric_list
            }
            for name, r in runs.items()
        }
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            typer.echo(f"{len(users)} users, {loaded.n_items} items, {loaded.aspects.shape[1]} aspects\n")
            typer.echo("system means:\n" + pd.DataFrame(means).T.round(4).to_string() + "\n")
            typer.echo(
                "swap correlation (Kendall τ):\n"
                + swap.pivot(index="metric", columns="mode", values="tau").round(3).to_string()
                + "\n"
            )
            typer.echo(
                "discriminative power (share of pairs, p < 0.05):\n"
                + power.pivot(index="metric", columns="test", values="share").round(3).to_string()
                + "\n"
            )
            typer.echo(
                "incompleteness (Kendall τ vs full truth):\n"
                + robust.pivot(index="metric", columns="fraction", values="tau").round(3).to_string()
            )
            typer.echo(f"\ntables and figures in {out}")


def register(app: typer.Typer) -> None:
    """Attach ``receval metaeval`` to the main app."""
    app.command("metaeval")(metaeval_command)
