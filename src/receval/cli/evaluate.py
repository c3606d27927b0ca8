"""``receval evaluate``: trec_eval for recommenders (one-shot evaluation of files).

Every file is read and checked by :func:`receval.data.tables.read_table`: CSV, TSV,
Parquet, TREC run/qrels, ranx JSON, RecBole atomic files or headerless MovieLens
files (``u1.test``), told from the extension, then the content, or set by
``--truth-format`` / ``--recs-format``. Columns: truth ``user,item[,rating]``,
recommendations ``user,item,score`` or ``user,item,rank``, predictions
``user,item,rating,prediction`` (for RMSE/MAE), training data ``user,item[,rating]``,
aspects ``item,aspect``; other names through ``--user/--item/--rating/--score/--rank/
--timestamp``, positional columns through ``--no-header``. Ids are read as text in
every file so that they match across files.

Examples
--------
>>> import tempfile, pathlib
>>> from receval.cli import main
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "t.csv").write_text("user,item,rating\\n1,a,5\\n1,b,2\\n")
>>> _ = (d / "r.csv").write_text("user,item,score\\n1,b,0.9\\n1,a,0.1\\n")
>>> main(["evaluate", "--truth", str(d / "t.csv"), "--recs", str(d / "r.csv"), "--metrics", "mrr,precision@2",
...       "--threshold", "4", "--json"])  # doctest: +ELLIPSIS
{"mrr": 0.5, "precision@2": 0.5, "conventions": {"threshold": 4.0, "negative_threshold": 4.0, "empty_users": "skip", ...
0
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from receval import jsontext
from receval.cli.common import (
    TABLE_FORMAT_HELP,
    ItemColumn,
    NoHeader,
    RankColumn,
    RatingColumn,
    ScoreColumn,
    TimestampColumn,
    UserColumn,
    table_reader,
)
from receval.cli.output import OUTPUT_HELP, Table, output_format, print_table
from receval.errors import ConfigError, DataError
from receval.vocabulary import RANK_READINGS, TIE_RULES, TIES

if TYPE_CHECKING:
    from receval.evaluation import Conventions, EvaluationResult

__all__ = [
    "COLD_START_HELP",
    "CONVENTION_HELP",
    "ColdStartOption",
    "OutputOption",
    "RANKS_HELP",
    "RecsFormat",
    "TIES_HELP",
    "ThresholdOption",
    "TruthFormat",
    "cold_start_line",
    "register",
]


def _choices(words: Mapping[Any, str]) -> str:
    """``a (what a is), b (...) or c (...)``: an option's values with their words.

    >>> _choices({"x": "first", "y": "second", "z": "third"})
    'x (first), y (second) or z (third)'
    """
    each = [f"{name} ({text})" for name, text in words.items()]
    return ", ".join(each[:-1]) + f" or {each[-1]}"


# the names are receval.metrics.conventions.CONVENTION_NAMES, checked when the MetricList is made;
# not imported here, so that --help loads no metric module
CONVENTION_HELP = (
    "A library's conventions for every metric string that names none (trec_eval, ranx, recbole, lenskit, ...; "
    "case-insensitive; an unknown name is refused with the list)."
)
TIES_HELP = f"Order of items of equal score: {_choices(TIE_RULES)}; default: the convention's, else {TIES[0]}."
COLD_START_HELP = (
    "Test users without a training rating (cold): empty (no list: scored as an empty list; the default), exclude "
    "(left out of the evaluation) or fallback (the most-rated training items as their list); exclude and fallback "
    "need --train. Counted in the output; see docs/concepts.md, 'Cold-start users: one policy'."
)
RANKS_HELP = f"How a rank column is read: {_choices(RANK_READINGS)}."

# the options `receval evaluate` and `receval compare` share, written once
ThresholdOption = Annotated[
    float | None, typer.Option("--threshold", help="Positive: rating ≥ λ (default 1 on usual scales).")
]
OutputOption = Annotated[str | None, typer.Option("--output", help=OUTPUT_HELP)]
TruthFormat = Annotated[str | None, typer.Option("--truth-format", help=TABLE_FORMAT_HELP)]
RecsFormat = Annotated[str | None, typer.Option("--recs-format", help=TABLE_FORMAT_HELP)]
ColdStartOption = Annotated[str, typer.Option("--cold-start", help=COLD_START_HELP)]


def evaluate_command(
    truth: Annotated[Path, typer.Option("--truth", help="Held-out ratings: user,item[,rating].")],
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated metric strings, e.g. ndcg@10,mrr.")],
    recs: Annotated[Path | None, typer.Option("--recs", help="Recommendations: user,item,score or rank.")] = None,
    predictions: Annotated[
        Path | None, typer.Option("--predictions", help="Rating predictions: user,item,rating,prediction.")
    ] = None,
    threshold: ThresholdOption = None,
    negative_threshold: Annotated[
        float | None, typer.Option("--negative-threshold", help="Negative: rating < λ- (default λ).")
    ] = None,
    train: Annotated[Path | None, typer.Option("--train", help="Training ratings: user,item[,rating].")] = None,
    aspects: Annotated[Path | None, typer.Option("--aspects", help="Item aspects: item,aspect.")] = None,
    empty_users: Annotated[
        str, typer.Option("--empty-users", help="Users with no positive item: skip or zero.")
    ] = "skip",
    per_user: Annotated[
        Path | None, typer.Option("--per-user", help="Write the per-user table here (.csv/.tsv/.parquet).")
    ] = None,
    barrier_data: Annotated[
        Path | None,
        typer.Option(
            "--barrier-data",
            help="Ratings with re-ratings of the same users (user,item,rating; repeated pairs): "
            "flag an RMSE below their magic barrier.",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {metric: value, conventions: {...}} as JSON (= --output json).")
    ] = False,
    output: OutputOption = None,
    truth_format: TruthFormat = None,
    recs_format: RecsFormat = None,
    user: UserColumn = None,
    item: ItemColumn = None,
    rating: RatingColumn = None,
    score: ScoreColumn = None,
    rank: RankColumn = None,
    timestamp: TimestampColumn = None,
    no_header: NoHeader = False,
    shards: Annotated[
        int | None,
        typer.Option(
            "--shards",
            help="Evaluate Parquet files in this many user shards, each read and scored on its own "
            "(runs larger than memory; same values).",
        ),
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="With --shards: local worker processes.")] = 1,
    executor: Annotated[str, typer.Option("--executor", help="With --shards: local or dask.")] = "local",
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="With --executor dask: the scheduler's address.")
    ] = None,
    convention: Annotated[str | None, typer.Option("--convention", help=CONVENTION_HELP)] = None,
    ties: Annotated[str | None, typer.Option("--ties", help=TIES_HELP)] = None,
    ranks: Annotated[str, typer.Option("--ranks", help=RANKS_HELP)] = "order",
    cold_start: ColdStartOption = "empty",
    points: Annotated[bool, typer.Option("--points", help=POINTS_HELP)] = False,
    weighting: Annotated[str, typer.Option("--weighting", help="With --points: event or user.")] = "event",
    repeat: Annotated[str | None, typer.Option("--repeat", help="With --points: only or exclude.")] = None,
    exclude_history: Annotated[bool, typer.Option("--exclude-history", help=EXCLUDE_HISTORY_HELP)] = False,
    user_groups: UserGroupsOption = None,
    unknown_group: UnknownGroupOption = None,
    group_test: GroupTestOption = "welch",
) -> None:
    """Evaluate recommendation lists and/or rating predictions against held-out truth."""
    from receval.data.tables import read_aspects
    from receval.evaluation import check_cold_start
    from receval.evaluation.align import check_ranks, check_ties
    from receval.metrics import MetricList
    from receval.validate import check_command_options

    metric_list = MetricList(metrics, convention)  # the convention checked and the metrics read once, before any file
    # before any file is read: --negative-threshold nan was refused only after the lists had been aligned (the
    # threshold is checked against the truth's scale, which needs the file)
    check_command_options(negative_threshold=negative_threshold)
    policy = check_cold_start(cold_start, train)
    if ties is not None:
        check_ties(ties)
    check_ranks(ranks)
    if (recs is None) == (predictions is None):
        raise DataError("give exactly one of --recs FILE or --predictions FILE")
    if per_user is not None:
        from receval.outputs import check_output_file

        inputs = {"--truth": truth, "--recs": recs, "--predictions": predictions, "--train": train}
        check_output_file(per_user, "--per-user", inputs | {"--aspects": aspects, "--user-groups": user_groups})
    fmt = output_format(output, as_json)
    group_table, group_kind = check_group_options(user_groups, unknown_group, group_test, no_header)
    if group_table is not None and shards is not None:
        raise ConfigError("--user-groups applies to evaluation without --shards; leave one out")
    points_asked = points or weighting != "event" or repeat is not None or exclude_history
    if group_table is not None and points_asked:
        raise ConfigError("--user-groups applies to per-user evaluation, not to --points; leave one out")
    if points_asked:  # next-item evaluation points
        read = table_reader(user=user, item=item, rating=rating, score=score, rank=rank, timestamp=timestamp,
                            no_header=no_header)  # fmt: skip
        _points(read, truth, recs, train, metric_list, points, weighting, repeat, exclude_history,
                threshold=threshold, empty_users=empty_users, ties=ties, per_user=per_user, fmt=fmt)  # fmt: skip
        return
    if shards is None and (jobs != 1 or executor != "local" or scheduler is not None):
        raise ConfigError("--jobs, --executor and --scheduler apply to sharded evaluation; add --shards N")
    if shards is not None:
        if recs is None or any(x is not None for x in (train, aspects, barrier_data)):
            raise DataError("--shards evaluates --recs against --truth only (no --predictions, --train, --aspects, "
                            "--barrier-data); evaluate without --shards")  # fmt: skip
        from receval.evaluation.sharded_files import evaluate_parquet_sharded

        names = {"user": user, "item": item, "rating": rating, "score": score, "rank": rank}
        result = evaluate_parquet_sharded(
            truth, recs, metric_list, n_shards=shards, threshold=threshold, negative_threshold=negative_threshold,
            empty_users=empty_users, columns={k: v for k, v in names.items() if v is not None}, executor=executor,
            jobs=jobs, scheduler=scheduler, ties=ties, ranks=ranks,
        )  # fmt: skip
        _report(result, per_user, fmt)
        return
    read = table_reader(
        user=user, item=item, rating=rating, score=score, rank=rank, timestamp=timestamp, no_header=no_header
    )
    # truth, lists and training data as Arrow tables: evaluate() reads them without pandas
    truth_frame = read(
        truth, "truth", ("user", "item"), truth_format, "--truth-format", unique=("user", "item"), arrow=True
    )
    recs_frame = (
        read(recs, "recommendations", ("user", "item"), recs_format, "--recs-format", arrow=True, plain_items=True)
        if recs
        else None
    )
    pred_frame = (  # one prediction per pair: a repeated one would count twice in RMSE
        read(predictions, "predictions", ("user", "item", "rating", "prediction"), unique=("user", "item"))
        if predictions
        else None
    )
    train_frame = read(train, "train", ("user", "item"), truth_format, "--truth-format", arrow=True) if train else None
    if train_frame is not None:  # a split that trains on its test users' future (receval.stats.leakage)
        from receval.stats.leakage import leakage_warning

        if (line := leakage_warning(train_frame, truth_frame)) is not None:
            typer.echo(line, err=True)
    groups_of_truth = truth_groups(truth_frame, group_table, unknown_group)  # checked before any scoring
    aspect_frame = read_aspects(aspects, header=False if no_header else None) if aspects is not None else None
    barrier = None
    if barrier_data is not None:
        from receval.data.interactions import Interactions
        from receval.stats.barrier import magic_barrier

        rerated = Interactions.from_frame(read(barrier_data, "train", ("user", "item", "rating"), label="barrier data"))
        barrier = magic_barrier(rerated, ddof=1, n_bootstrap=0)
    from receval.evaluation import evaluate

    with warnings.catch_warnings():  # the overfitting check is reported below, once
        warnings.filterwarnings("ignore", message=r"RMSE .* below")
        result = evaluate(
            recs_frame,
            truth_frame,
            metric_list,
            train=train_frame,
            threshold=threshold,
            negative_threshold=negative_threshold,
            aspects=aspect_frame,
            predictions=pred_frame,
            empty_users=empty_users,  # type: ignore[arg-type]
            barrier=barrier,
            ties=ties,  # type: ignore[arg-type]
            ranks=ranks,  # type: ignore[arg-type]
            cold_start=policy,
        )
    if result.overfitting is not None and result.overfitting.flagged:
        typer.echo(f"WARNING overfitting: {result.overfitting.message}", err=True)
    gaps = None
    if groups_of_truth is not None:
        from receval.stats.groups import group_gaps

        gaps = group_gaps(result.per_user, groups_of_truth, test=group_kind)  # Holm across the metrics
    _report(result, per_user, fmt, gaps)


def _report(result: EvaluationResult, per_user: Path | None, fmt: str, gaps: Mapping[str, Any] | None = None) -> None:
    """Write the per-user table (if asked) and print the summary in the output format."""
    if per_user is not None:
        from receval.data.writers import write_table

        write_table(result.per_user, per_user)
    conv = result.conventions
    if fmt == "json":  # {metric as typed: value}, the conventions under one extra key
        body: dict[str, object] = dict(result.summary)
        body["conventions"] = conv.to_dict()
        if gaps is not None:
            body["groups"] = {m: g.to_dict() for m, g in gaps.items()}
        typer.echo(jsontext.dumps(body))
        return
    if fmt == "table":
        typer.echo(
            f"users evaluated: {conv.users_evaluated}  threshold: {conv.threshold:g}  "
            f"negative threshold: {conv.negative_threshold:g}  empty users: {conv.empty_users}  "
            f"ties: {conv.tie_break}" + (f"  convention: {conv.convention}" if conv.convention else "")
        )
        typer.echo(cold_start_line(conv))
        if conv.users_without_list:
            typer.echo(f"truth users without a list (scored as empty lists): {conv.users_without_list}")
    print_table(_summary_table(result), fmt)
    if gaps is not None:
        print_table(groups_table({"": gaps}), fmt)


def cold_start_line(conv: Conventions) -> str:
    """The cold users of an evaluation and what ``--cold-start`` did with them, in words.

    >>> from receval.evaluation import Conventions
    >>> cold_start_line(Conventions(4.0, 4.0, users_evaluated=9, users_cold=3, users_cold_without_list=3))
    'cold users (no training rating): 3 of 9, 3 of them without a list and scored as empty lists (--cold-start empty)'
    """
    from receval.cold_start import describe

    if conv.users_cold is None:
        return "cold users (no training rating): not counted without --train"
    text = describe(conv.cold_start, users_cold=conv.users_cold, users_cold_without_list=conv.users_cold_without_list,
                    users_evaluated=conv.users_evaluated)  # fmt: skip
    return f"{text} (--cold-start {conv.cold_start})"


def _summary_table(result: EvaluationResult) -> Table:
    """One row per metric as typed: value, aggregation, users scored and the metric it resolved to."""
    conv = result.conventions
    aggregation, users_scored, resolved = conv.aggregation, conv.users_scored, conv.metrics
    table = Table(["metric", "value", "aggregation", "users", "resolved as"], [])
    for name, value in result.summary.items():
        table.rows.append([name, value, aggregation[name], users_scored.get(name), resolved[name]["metric"]])
    table.float_format = "{:.6f}"
    return table


# ``--points``: runs and truth keyed by evaluation point (receval.evaluation.points) ----------------------------
POINTS_HELP = (
    "Key --recs and --truth by evaluation point: a 'point' column in both, or user and timestamp; "
    "--train is then the history before the points (user,item,timestamp)."
)
EXCLUDE_HISTORY_HELP = "With --points: drop from each point's list the items of the user's history before it."


def _points(read: Any, truth: Path, recs: Path | None, train: Path | None, metric_list: Any, points: bool,
            weighting: str, repeat: str | None, exclude_history: bool, **options: Any) -> None:  # fmt: skip
    """``evaluate --points``: the options checked, the tables read, :func:`evaluate_points`, the summary printed."""
    from receval.evaluation.points import REPEATS, WEIGHTINGS, evaluate_points

    if not points:
        raise ConfigError("--weighting, --repeat and --exclude-history apply to evaluation points; add --points")
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"--weighting {weighting!r} is not one of {', '.join(WEIGHTINGS)}")
    if repeat is not None and repeat not in REPEATS:
        raise ConfigError(f"--repeat {repeat!r} is not one of {', '.join(REPEATS)}")
    if recs is None:
        raise DataError("--points evaluates --recs FILE against --truth FILE; give --recs")
    if (repeat is not None or exclude_history) and train is None:
        raise ConfigError("--repeat and --exclude-history need --train FILE (the history before the points)")
    per_user, fmt = options.pop("per_user"), options.pop("fmt")
    if per_user is not None:
        from receval.outputs import check_output_file

        check_output_file(per_user, "--per-user", {"--truth": truth, "--recs": recs, "--train": train})
    truth_frame = read(truth, "truth", ("user", "item"))
    recs_frame = read(recs, "recommendations", ("user", "item"))
    history = read(train, "train", ("user", "item", "timestamp")) if train is not None else None
    result = evaluate_points(recs_frame, truth_frame, metric_list, history=history, weighting=weighting,
                             repeat=repeat, exclude_history=exclude_history, **options)  # fmt: skip
    if per_user is not None:
        from receval.data.writers import write_table

        write_table(result.per_point, per_user)
    extra: dict[str, object] = {"weighting": weighting, "repeat": repeat, "exclude_history": exclude_history}
    extra |= {"points_evaluated": result.points_evaluated, "points_without_truth": result.points_without_truth}
    if fmt == "json":
        body: dict[str, object] = dict(result.summary)
        body["conventions"] = {**result.conventions, **extra}
        typer.echo(jsontext.dumps(body))
        return
    if fmt == "table":
        typer.echo("  ".join(f"{k.replace('_', ' ')}: {v}" for k, v in extra.items()))
    table = Table(["metric", "value"], [[name, value] for name, value in result.summary.items()])
    table.float_format = "{:.6f}"
    print_table(table, fmt)


def register(app: typer.Typer) -> None:
    """Attach ``evaluate`` to the main app."""
    app.command("evaluate")(evaluate_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "evaluate": "receval evaluate --truth test.tsv --recs recs.tsv --metrics ndcg@10,precision@10 --threshold 4"
}


# --- user groups: options and helpers shared with `receval compare` ---
UserGroupsOption = Annotated[
    Path | None,
    typer.Option(
        "--user-groups",
        help="A CSV/TSV user,group: every per-user metric's gap between the groups, with an unpaired test, "
        "a bootstrap interval and Hedges' g.",
    ),
]
UnknownGroupOption = Annotated[
    str | None,
    typer.Option("--unknown-group", help="With --user-groups: pool truth users without a group under this name."),
]
GroupTestOption = Annotated[
    str,
    typer.Option("--group-test", help="With --user-groups: the unpaired test: welch, mannwhitney or permutation."),
]


def check_group_options(
    user_groups: Path | None, unknown_group: str | None, group_test: str, no_header: bool
) -> tuple[Any, Any]:
    """The group file read and checked and the test's name checked, before any other file is read."""
    from receval.cli.common import one_of
    from receval.vocabulary import UNPAIRED_TEST_NAMES

    kind = one_of(group_test, tuple(UNPAIRED_TEST_NAMES), "--group-test")
    if user_groups is None:
        if unknown_group is not None:
            raise ConfigError("--unknown-group applies with --user-groups FILE; add one or leave it out")
        return None, kind
    from receval.stats.groups import check_unknown_group, read_user_groups

    table = read_user_groups(user_groups, header=False if no_header else None)
    check_unknown_group(unknown_group, table["group"], "--user-groups")
    return table, kind


def truth_groups(truth_frame: Any, group_table: Any, unknown_group: str | None) -> Any:
    """The group of every truth user (checked: one-group files, truth users without a group, unknown users)."""
    if group_table is None:
        return None
    import pandas as pd

    from receval.stats.groups import align_groups

    users = pd.unique(pd.Series(truth_frame.column("user").to_pylist()))
    return align_groups(users, group_table, unknown_group=unknown_group, source="--user-groups")


def groups_table(gaps_by_run: Mapping[str, Mapping[str, Any]]) -> Table:
    """One row per (run, metric): the group means, the gap, its test, p-values, interval and Hedges' g."""
    rows = []
    for run, gaps in gaps_by_run.items():
        for metric, g in gaps.items():
            means = ", ".join(f"{name} {value:.4g} (n={g.counts[name]})" for name, value in g.values.items())
            gap = f"{g.gap:.4g}" + (" (max-min)" if g.gap_kind == "range" else "")
            rows.append([*([run] if run else []), metric, means, gap, f"[{g.ci[0]:.4g}, {g.ci[1]:.4g}]", g.test,
                         g.p_value, g.p_value_adj, g.effect_size])  # fmt: skip
    header = ["metric", "group means", "gap", "CI", "test", "p", "p corrected", "Hedges' g"]
    first = next(iter(gaps_by_run), "")
    table = Table((["run"] if first else []) + header, rows, title="Gaps between user groups")
    table.float_format = "{:.4g}"
    return table
