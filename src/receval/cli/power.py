"""``receval power``: was the test set large enough? Power, minimum detectable effect and users needed.

From one run (a baseline) the per-user differences' standard deviation is taken as
``sqrt(2)`` times the run's per-user standard deviation (Sakai, "Topic set size design",
IRJ 2016: two runs of that spread, no correlation assumed — the conservative choice); from
two runs (``--recs A --recs B``, a pilot comparison) it is the standard deviation of their
per-user differences. The paired t-test's figures are closed-form (noncentral t, equal to
statsmodels' ``TTestPower``); ``--test wilcoxon|permutation`` gives the power at n by seeded
resampling of the per-user differences.

Examples
--------
>>> import json, tempfile, pathlib
>>> from receval.cli import main
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "t.csv").write_text("user,item\\n1,a\\n2,b\\n3,a\\n4,c\\n")
>>> _ = (d / "r.csv").write_text("user,item,rank\\n1,a,1\\n2,a,1\\n3,b,1\\n3,a,2\\n4,c,1\\n")
>>> main(["power", "--truth", str(d / "t.csv"), "--recs", str(d / "r.csv"), "--metric", "recall@10",
...       "--effect", "0.1", "--json"])  # doctest: +ELLIPSIS
{"n_users": 4, "power": 0.0548..., "mde": 1.504..., "n_needed": 395, ...
0
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from receval import jsontext
from receval.cli.common import (
    ItemColumn,
    NoHeader,
    RankColumn,
    RatingColumn,
    ScoreColumn,
    UserColumn,
    one_of,
    table_reader,
)
from receval.cli.evaluate import OutputOption, RecsFormat, ThresholdOption, TruthFormat
from receval.cli.output import Table, output_format, print_table
from receval.errors import ConfigError, DataError
from receval.vocabulary import TEST_NAMES, TestName

__all__ = ["EXAMPLES", "register"]

_TESTS: tuple[TestName, ...] = tuple(TEST_NAMES)


def _per_user(recs: Any, truth: Any, metric: Any, threshold: float | None) -> Any:
    """The run's per-user values of the one metric (a Series indexed by user, NaN users dropped)."""
    from receval.evaluation import evaluate

    result = evaluate(recs, truth, metric, threshold=threshold)
    name = metric[0][0]
    columns = [c for c in result.per_user.columns if c != "user"]
    if not columns:
        raise ConfigError(f"--metric {name} has no per-user values (a system-level metric); give a per-user metric")
    return result.per_user.set_index("user")[columns[0]].dropna()


def power_command(
    truth: Annotated[Path, typer.Option("--truth", help="Held-out ratings or qrels: user,item[,rating].")],
    recs: Annotated[
        list[Path],
        typer.Option("--recs", help="A baseline run; give it twice (--recs A --recs B) for a pilot comparison."),
    ],
    metric: Annotated[str, typer.Option("--metric", help="One per-user metric string, e.g. ndcg@10.")],
    effect: Annotated[
        float | None, typer.Option("--effect", help="The mean difference to detect (metric units), > 0.")
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level, in (0, 1).")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Target power of the MDE and users needed, (0, 1).")] = 0.8,
    test: Annotated[str, typer.Option("--test", help=f"Paired test: {', '.join(_TESTS)}.")] = "ttest",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampled power (wilcoxon, permutation).")] = 0,
    threshold: ThresholdOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    output: OutputOption = None,
    truth_format: TruthFormat = None,
    recs_format: RecsFormat = None,
    user: UserColumn = None,
    item: ItemColumn = None,
    rating: RatingColumn = None,
    score: ScoreColumn = None,
    rank: RankColumn = None,
    no_header: NoHeader = False,
) -> None:
    """Power of a paired test at the test set's n, the minimum detectable effect and the users needed."""
    from receval.metrics import MetricList
    from receval.stats.power import check_alpha, check_power, power_analysis
    from receval.validate import check_command_options

    fmt = output_format(output, as_json)
    check_command_options(seed=seed)
    check_alpha(alpha, "--alpha")
    check_power(power, "--power")
    if effect is not None and not (math.isfinite(effect) and effect > 0):
        raise ConfigError(f"--effect must be a number > 0 (metric units), got {effect}")
    test_kind = one_of(test, _TESTS, "--test")
    if len(recs) not in (1, 2):
        raise ConfigError(f"--recs is a baseline run or two runs of a pilot comparison, got {len(recs)}")
    metric_list = MetricList(metric)
    if len(metric_list) != 1:
        raise ConfigError(f"--metric takes one metric string, got {metric!r}")
    read = table_reader(user=user, item=item, rating=rating, score=score, rank=rank, no_header=no_header)
    truth_frame = read(truth, "truth", ("user", "item"), truth_format, "--truth-format", arrow=True)
    frames = [read(p, "recommendations", ("user", "item"), recs_format, "--recs-format", arrow=True) for p in recs]
    values = [_per_user(f, truth_frame, metric_list, threshold) for f in frames]
    if len(values) == 1:
        sd_source = "sqrt(2) x the baseline's per-user standard deviation"
        differences = values[0].to_numpy() * math.sqrt(2.0)
    else:
        a, b = values
        if set(a.index) != set(b.index):
            common = len(set(a.index) & set(b.index))
            raise DataError(
                f"the two runs have per-user values for different users ({recs[0]}: {len(a)}, {recs[1]}: {len(b)}, "
                f"{common} in both); score the same users"
            )
        differences = (a - b.reindex(a.index)).to_numpy()
        sd_source = "the per-user differences of the two runs"
    result = power_analysis(differences, effect=effect, alpha=alpha, power=power, test=test_kind, seed=seed)
    body = result.to_dict() | {"metric": metric_list[0][0], "sd_source": sd_source}
    if fmt == "json":
        typer.echo(jsontext.dumps(body))
        return
    table = Table(
        columns=["quantity", "value"],
        rows=[[key, "" if value is None else value] for key, value in body.items()],
        title=f"Power of the {TEST_NAMES[test_kind]} at alpha = {alpha:g}",
    )
    print_table(table, fmt)


def register(app: typer.Typer) -> None:
    """Attach ``power`` to the main app."""
    app.command("power")(power_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "power": "receval power --truth test.csv --recs baseline.csv --metric ndcg@10 --effect 0.01 --power 0.8 --json"
}
