"""``receval aa DATA``: the A/A study — each paired test's false-positive rate comparing a model with itself.

The model (``--algorithm``, default ``ials``, whose fits depend on their seed) is fitted twice
on one split with model seeds 0 and 1 (``--same-list``: its lists are compared with themselves),
and :func:`receval.studies.aa.aa_study` reports, per test and sample size (``--sizes``,
multiples of the data's n), the rate of ``p < --alpha`` over ``--resamples`` bootstrap samples
of the test users with its Clopper–Pearson interval. ``--json`` prints
``{"n_users": n, "algorithm": ..., "metric": ..., "null": ..., "rows": [...]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval import jsontext
from receval.cli.common import FORMAT_HELP, load_data

__all__ = ["register"]


def aa_command(
    data: Annotated[Path, typer.Argument(help="The data set's folder (multi-file formats) or file.")],
    fmt: Annotated[str | None, typer.Option("--format", "-f", help=FORMAT_HELP)] = None,
    algorithm: Annotated[str, typer.Option("--algorithm", help="The model fitted twice (seeds 0 and 1).")] = "ials",
    metric: Annotated[str, typer.Option("--metric", help="The per-user metric compared.")] = "ndcg@10",
    threshold: Annotated[float | None, typer.Option("--threshold", help="Relevance threshold λ.")] = None,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap samples of the test users.")] = 200,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of every test.")] = 0.05,
    sizes: Annotated[str, typer.Option("--sizes", help="Sample sizes, multiples of the data's n.")] = "1,2,4,8",
    null: Annotated[str, typer.Option("--null", help="swap (exchange A and A' per user) or shift (equal means).")] = (
        "swap"
    ),
    permutations: Annotated[int, typer.Option("--permutations", help="Sign flips of the permutation test.")] = 1000,
    same_list: Annotated[bool, typer.Option("--same-list", help="Compare the model's lists with themselves.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rates as JSON.")] = False,
) -> None:
    """Each paired test's false-positive rate (with its interval) comparing a model with itself."""
    from receval.errors import ConfigError
    from receval.studies.aa import aa_study, check_aa_options, refit_values
    from receval.validate import check_seed

    try:
        multiples = [float(s) for s in sizes.split(",")]
    except ValueError:
        raise ConfigError(f"--sizes must be numbers separated by commas, e.g. 1,2,4; got {sizes!r}") from None
    check_seed(seed, "--seed")
    try:  # before any data is read
        check_aa_options(resamples=resamples, alpha=alpha, sizes=multiples, n_permutations=permutations, null=null)
    except ConfigError as err:
        raise ConfigError(f"--{err.message.replace('n_permutations', 'permutations')}") from None
    metric_name = metric.strip()
    loaded = load_data(data, fmt)
    a, b = refit_values(loaded, algorithm, metric_name, seeds=(0, 0) if same_list else (0, 1), threshold=threshold)
    table = aa_study(a, b, resamples=resamples, alpha=alpha, sizes=multiples, seed=seed, n_permutations=permutations,
                     null=null)  # fmt: skip
    if as_json:
        doc = {"n_users": len(a), "algorithm": algorithm, "metric": metric_name, "null": null, "same_list": same_list}
        typer.echo(jsontext.dumps({**doc, "rows": table.to_dict(orient="records")}))
        return
    typer.echo(f"A/A: {algorithm} {'with itself' if same_list else 'seed 0 vs seed 1'}, {metric_name}, "
               f"{len(a)} users, null={null}, alpha={alpha}")  # fmt: skip
    typer.echo(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def register(app: typer.Typer) -> None:
    """Attach ``aa`` to the main app."""
    app.command("aa")(aa_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "aa": "receval aa ~/data/ml-100k --format movielens-100k --algorithm ials --metric ndcg@10 --threshold 4 --json"
}
