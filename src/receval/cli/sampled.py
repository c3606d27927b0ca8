"""``receval sampled``: how far are sampled metrics (and their corrections) from the full-catalogue metric?

``receval sampled --data PATH --format FORMAT [--algorithms LIST] [--n 100] [--sampling uniform|popularity]
[--exponent E] [--shape per-item|per-user] [--corrections LIST] [--metrics LIST] [--split METHOD]
[--repeats R] [--seed S] [--json] [--out DIR]``

:func:`receval.studies.sampled.sampled_study` splits the data (leave-one-out of each
user's last rating by default, as NCF), fits each algorithm once, draws ``--repeats``
samples of ``--n`` negatives per test item and reports, per metric and estimate (the
uncorrected ``sampled`` value and each correction), the mean absolute error against the
full-catalogue value, the spread over samples and Kendall τ between the estimate's and
the full ranking of the algorithms. ``--json`` prints ``{"metric": "ndcg@10",
"kendall_tau": {estimate: τ}, "error": {estimate: MAE}, ...}`` for nDCG@10 (every metric
under ``metrics``, per-system values under ``systems``). ``--out`` writes the tables
(CSV), the figures and ``report.html`` into the folder, as one set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval.cli.common import FORMAT_HELP, load_data
from receval.vocabulary import DEFAULT_SAMPLED_CORRECTIONS, SAMPLED_CORRECTIONS

_JSON_METRIC = "ndcg@10"


def register(app: typer.Typer) -> None:
    """Attach the ``sampled`` command to the main app (``receval run`` registers the ``sampled`` protocol)."""
    app.command("sampled")(sampled_command)


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def sampled_command(
    data: Annotated[Path, typer.Option("--data", help="Ratings file or folder.")],
    format: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)],
    algorithms: Annotated[
        str | None,
        typer.Option(
            "--algorithms",
            help="Comma-separated algorithm names (default: popularity, item-knn, user-knn, "
            "mf, hkv and the strong baselines this receval has).",
        ),
    ] = None,
    n: Annotated[int, typer.Option("--n", help="Sampled negatives per test item.")] = 100,
    sampling: Annotated[str, typer.Option("--sampling", help="How negatives are drawn: uniform or popularity.")] = (
        "uniform"
    ),
    exponent: Annotated[float, typer.Option("--exponent", help="Popularity sampling: counts ** exponent.")] = 1.0,
    shape: Annotated[
        str,
        typer.Option(
            "--shape",
            help="per-item (one sample per test item, NCF) or per-user (one per user, each test item ranked "
            "against it alone).",
        ),
    ] = "per-item",
    corrections: Annotated[
        str | None,
        typer.Option(
            "--corrections",
            help=f"{','.join(SAMPLED_CORRECTIONS)} (default: {','.join(DEFAULT_SAMPLED_CORRECTIONS)}; "
            "none alone with popularity sampling).",
        ),
    ] = None,
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated metric strings.")] = "ndcg@10,recall@10",
    split: Annotated[
        str, typer.Option("--split", help="Split method (loo: each user's last rating; loo-random without times).")
    ] = "loo",
    test_fraction: Annotated[
        float, typer.Option("--test-fraction", help="Test share, for split methods that take one.")
    ] = 0.2,
    repeats: Annotated[int, typer.Option("--repeats", help="Candidate samples drawn (seeds from --seed).")] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split, the models and the samples.")] = 0,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for tables, figures and report.html.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print nDCG@10's τ and errors as JSON.")] = False,
) -> None:
    """Compare sampled, uncorrected and corrected metrics with the full-catalogue metric for several algorithms."""
    from receval.metrics import parse_metric_list
    from receval.studies.sampled import (
        check_algorithms,
        check_study_design,
        check_study_metrics,
        default_systems,
        sampled_study,
        study_corrections,
    )
    from receval.validate import check_command_options, check_count, check_number
    from receval.vocabulary import split_method

    check_command_options(seed=seed, test_fraction=test_fraction)
    check_count(n, "n")
    check_count(repeats, "repeats")
    check_number(exponent, "exponent", minimum=0)
    check_study_design(n, repeats, shape)  # the memory of the samples, before the data is read
    split_method(split)
    chosen = study_corrections(_names(corrections), sampling)
    metric_list = parse_metric_list(metrics)
    if as_json and _JSON_METRIC not in metric_list:
        metric_list = [_JSON_METRIC, *metric_list]
    check_study_metrics(metric_list)
    names = check_algorithms(_names(algorithms) or default_systems())
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    study = sampled_study(
        load_data(data, format),
        names,
        n=n,
        sampling=sampling,
        exponent=exponent,
        shape=shape,
        repeats=repeats,
        seed=seed,
        metrics=metric_list,
        corrections=chosen,
        split=split,
        test_fraction=test_fraction,
    )
    if out is not None:
        from receval.report.sampled import write_outputs

        write_outputs(study, out)
    if as_json:
        typer.echo(study.to_json(_JSON_METRIC))
        return
    typer.echo(
        f"Kendall tau between each estimate's ranking of {len(names)} systems and the full ranking "
        f"(mean over {repeats} samples of {n})"
    )
    typer.echo(
        study.kendall.pivot_table(index="estimate", columns="metric", values="kendall_tau", sort=False)
        .round(3)
        .to_string()
    )
    typer.echo("\nMean absolute error against the full-catalogue value")
    typer.echo(
        study.kendall.pivot_table(index="estimate", columns="metric", values="mae", sort=False).round(4).to_string()
    )
    frame = study.to_frame()
    typer.echo("\nFull value and mean estimate per system")
    typer.echo(frame.pivot_table(index=["metric", "system"], columns="estimate", values="mean", sort=False)
               .join(frame.groupby(["metric", "system"], sort=False)["full"].first())
               .round(4).to_string())  # fmt: skip


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "sampled": "receval sampled --data ~/data/ml-100k --format movielens-100k --n 100 --repeats 20 --json"
}
