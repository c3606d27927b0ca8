"""``receval debias``: how well do debiased estimators recover the MAR evaluation?

``receval debias --data PATH --format FORMAT [--familiar COLUMN] [--test-fraction F] [--threshold λ]
[--negative-threshold ν] [--metrics LIST] [--estimators LIST] [--propensities LIST]
[--algorithms LIST] [--k K] [--seed S] [--out DIR] [--json]``

The data set needs an MNAR part and a MAR ground truth: a ``familiar`` column, as
CM100k has (familiar ratings = MNAR, all ratings of randomly shown tracks = MAR); for a
csv/tsv/parquet file ``--familiar`` names the column.
:func:`receval.studies.debiasing.debiasing_study` trains the algorithms (default: the
cyclic study's random, popularity and average plus user-kNN, item-kNN, MF and HKV) on
the familiar training ratings, evaluates their lists on the familiar test ratings with
each estimator and on all test ratings. The output is, per metric and estimator, Kendall
τ between the estimator's system ranking and the MAR ranking and the mean absolute
error against the MAR values; ``--json`` prints ``{"metric": "recall@10",
"kendall_tau": {estimator: τ}, "error": {estimator: MAE}, "recall_fallout":
{estimator: τ}}`` for Recall@10 (``ips``, ``snips``: the first propensity model; others
as ``ips[naive-bayes]``). ``--out`` writes ``estimates.csv``, ``kendall.csv``,
``recall_fallout.csv``, ``estimates.png`` and ``tau.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval import jsontext
from receval.cli.common import FORMAT_HELP, load_data
from receval.errors import ConfigError, DataError

_ALGORITHMS = "random,popularity,average,user-knn,item-knn,mf,hkv"


def register(app: typer.Typer) -> None:
    """Attach the ``debias`` command to the main app (``receval run`` registers the ``debiased`` protocol)."""
    app.command("debias")(debias_command)


def _split(text: str | None) -> list[str] | None:
    from receval.metrics import parse_metric_list

    return None if text is None else parse_metric_list(text)


def debias_command(
    data: Annotated[Path, typer.Option("--data", help="Ratings file or folder with a 'familiar' column (CM100k).")],
    format: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)],
    familiar: Annotated[
        str, typer.Option("--familiar", help="Column flagging the MNAR (familiar) ratings, for csv/tsv/parquet.")
    ] = "familiar",
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Share of ratings held out.")] = 0.2,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Relevance threshold λ (rating ≥ λ; default 1 on usual scales).")
    ] = None,
    negative_threshold: Annotated[
        float | None, typer.Option("--negative-threshold", help="Negative: rating below this (default: λ).")
    ] = None,
    metrics: Annotated[str | None, typer.Option("--metrics", help="Comma-separated metric strings.")] = None,
    estimators: Annotated[
        str | None, typer.Option("--estimators", help="naive,ips,snips,dr,stratified,wtd,wtd_h (default: all).")
    ] = None,
    propensities: Annotated[
        str | None,
        typer.Option("--propensities", help="Propensity models, the first for plain labels (popularity,logistic,...)."),
    ] = None,
    algorithms: Annotated[str, typer.Option("--algorithms", help="Comma-separated algorithm names.")] = _ALGORITHMS,
    k: Annotated[int, typer.Option("--k", help="List length.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split, the models and the samples.")] = 0,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for tables and figures.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print Recall@10's τ and error as JSON.")] = False,
) -> None:
    """Compare naive and debiased estimates on the MNAR part with the MAR ground truth."""
    from receval.recommenders import make
    from receval.studies.debiasing import DEFAULT_ESTIMATORS, DEFAULT_METRICS, cm100k_parts, debiasing_study
    from receval.validate import check_command_options, check_distinct, check_threshold

    check_command_options(seed=seed, k=k, test_fraction=test_fraction, negative_threshold=negative_threshold)
    names = check_distinct([a.strip() for a in algorithms.split(",") if a.strip()], "--algorithms")
    if len(names) < 2:
        raise ConfigError("--algorithms needs at least two algorithms to rank")
    chosen_estimators = [e.strip() for e in estimators.split(",")] if estimators else list(DEFAULT_ESTIMATORS)
    check_distinct(chosen_estimators, "--estimators")
    models = [p.strip() for p in propensities.split(",")] if propensities else None
    check_distinct(models or [], "--propensities")
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    if format.strip().lower() == "cm100k":
        loaded = load_data(data, format)
    else:
        try:
            loaded = load_data(data, format, extra=[familiar])
        except DataError as err:
            if err.column != familiar or not err.message.startswith("missing required column"):
                raise  # a flag that is not 0/1 is named at its line, not called a missing column
            raise DataError(
                f"{data}: no column {familiar!r} flagging the MNAR (familiar) ratings; the debiasing study needs an "
                "MNAR part and a MAR ground truth — name the column with --familiar, or use CM100k (--format cm100k)"
            ) from None
    if threshold is not None:
        check_threshold(threshold, loaded.scale.low, loaded.scale.high, "--threshold")
    parts = cm100k_parts(loaded, test_fraction=test_fraction, seed=seed)
    metric_list = _split(metrics) or list(DEFAULT_METRICS)
    if as_json and "recall@10" not in metric_list:
        metric_list = ["recall@10", *metric_list]
    study = debiasing_study(
        parts,
        {name: make(name) for name in names},
        metrics=metric_list,
        estimators=chosen_estimators,
        propensities=models,
        threshold=loaded.scale.relevance(threshold).threshold,
        negative_threshold=negative_threshold,
        k=k,
        seed=seed,
    )
    if out is not None:
        from receval.report.debias import write_outputs

        write_outputs(study, out)
    if as_json:
        import numpy as np

        payload = {"metric": "recall@10", **study.summary("recall@10")}
        payload["recall_fallout"] = {
            r.estimator: None if not np.isfinite(r.kendall_tau) else float(r.kendall_tau)
            for r in study.recall_fallout.itertuples()
        }
        typer.echo(jsontext.dumps(payload))
        return
    table = study.kendall.pivot_table(index="estimator", columns="metric", values="kendall_tau", sort=False)
    typer.echo("Kendall tau between each estimator's system ranking and the MAR ranking")
    typer.echo(table.round(3).to_string())
    mae = study.kendall.pivot_table(index="estimator", columns="metric", values="mae", sort=False)
    typer.echo("\nMean absolute error against the MAR values")
    typer.echo(mae.round(4).to_string())
    if not study.recall_fallout.empty:
        typer.echo("\ntau(Recall, Fallout) per estimator (mar = the MAR truth)")
        typer.echo(study.recall_fallout.set_index("estimator").round(3).to_string())


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {"debias": "receval debias --data ~/data/cm100k --format cm100k --seed 1 --json"}
