"""``receval compare``: several runs against one truth, with paired tests and an HTML report.

Each RUN is a file (any format ``receval evaluate`` reads: CSV/TSV/Parquet, TREC, ranx
JSON, RecBole …) named by its file name without extension, or ``NAME=FILE``.

Examples
--------
>>> import json, tempfile, pathlib
>>> from receval.cli import main
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "qrels.trec").write_text("1 0 a 1\\n1 0 b 1\\n2 0 a 1\\n3 0 c 1\\n")
>>> _ = (d / "bm25.trec").write_text("1 Q0 a 1 9 x\\n2 Q0 a 1 9 x\\n3 Q0 c 1 9 x\\n")
>>> _ = (d / "pop.trec").write_text("1 Q0 c 1 9 y\\n2 Q0 b 1 9 y\\n3 Q0 a 1 9 y\\n")
>>> main(["compare", "--truth", str(d / "qrels.trec"), str(d / "bm25.trec"), str(d / "pop.trec"),
...       "--metrics", "precision@1", "--json"])  # doctest: +ELLIPSIS
{"summary": {"bm25": {"precision@1": 1.0}, "pop": {"precision@1": 0.0}}, "tests": [{"metric": "precision@1", ...
0
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import typer

from receval import jsontext
from receval.cli.common import (
    ItemColumn,
    NoHeader,
    RankColumn,
    RatingColumn,
    ScoreColumn,
    TimestampColumn,
    UserColumn,
    one_of,
    table_reader,
)
from receval.cli.evaluate import (  # the group options
    ColdStartOption,
    GroupTestOption,
    OutputOption,
    RecsFormat,
    ThresholdOption,
    TruthFormat,
    UnknownGroupOption,
    UserGroupsOption,
    check_group_options,
    cold_start_line,
    groups_table,
    truth_groups,
)
from receval.cli.output import Table, output_format, print_table
from receval.data import _source
from receval.errors import ConfigError
from receval.vocabulary import CONVENTION_NAMES, CORRECTION_NAMES, MULTI_TEST_NAMES, TEST_NAMES, Correction, TestName

__all__ = ["register"]

_TESTS: tuple[TestName, ...] = tuple(TEST_NAMES)
_CORRECTIONS: tuple[Correction, ...] = tuple(CORRECTION_NAMES)


def _named(runs: list[str]) -> dict[str, Path]:
    """``{name: path}`` from ``FILE`` or ``NAME=FILE`` arguments; names must be distinct."""
    named: dict[str, Path] = {}
    for text in runs:
        name, sep, path = text.partition("=")
        if not sep or not name or Path(text).exists():
            name, path = _source.stem(text), text  # a.tsv.gz is run 'a', as a.tsv is
        if name in named:
            raise ConfigError(f"two runs are named {name!r}; name them as NAME=FILE")
        named[name] = Path(path)
    return named


def compare_command(
    runs: Annotated[list[str], typer.Argument(help="Run files (FILE or NAME=FILE), at least two.")],
    truth: Annotated[Path, typer.Option("--truth", help="Held-out ratings or qrels: user,item[,rating].")],
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated metric strings, e.g. ndcg@10,P@10.")],
    threshold: ThresholdOption = None,
    test: Annotated[
        str, typer.Option("--test", help=f"Paired test: {', '.join((*_TESTS, *MULTI_TEST_NAMES))}.")
    ] = "ttest",
    correction: Annotated[
        str, typer.Option("--correction", help=f"Multiple-comparison correction: {', '.join(_CORRECTIONS)}.")
    ] = "holm",
    train: Annotated[
        Path | None,
        typer.Option("--train", help="Training ratings user,item[,rating]: the catalogue and popularity, as evaluate."),
    ] = None,
    convention: Annotated[
        str | None,
        typer.Option("--convention", help=f"Score every run as a library does: {', '.join(CONVENTION_NAMES)}."),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="Compare every run with this one only (default: all pairs).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap intervals and permutations.")] = 0,
    report: Annotated[Path | None, typer.Option("--report", help="Also write an HTML report to this file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary and tests as one JSON object.")] = False,
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
    cold_start: ColdStartOption = "empty",
    user_groups: UserGroupsOption = None,
    unknown_group: UnknownGroupOption = None,
    group_test: GroupTestOption = "welch",
    distribution: Annotated[
        bool,
        typer.Option(
            "--distribution",
            help="Per metric and run: per-user quantiles, Gini, CVaR at --cvar-level and helped/hurt shares against "
            "the first run, with bootstrap intervals and a paired test of the CVaR difference.",
        ),
    ] = False,
    cvar_level: Annotated[
        float, typer.Option("--cvar-level", help="With --distribution: the worst share of users, in (0, 1].")
    ] = 0.1,
    margin: MarginOption = None,
) -> None:
    """Compare runs on one truth: each metric per run, paired tests with corrected p-values, effect sizes."""
    from receval.studies.compare import compare_runs
    from receval.validate import check_command_options

    fmt = output_format(output, as_json)
    check_command_options(seed=seed)
    group_table, group_kind = check_group_options(user_groups, unknown_group, group_test, no_header)
    if distribution or cvar_level != 0.1:
        from receval.stats.distribution import check_cvar_level

        check_cvar_level(cvar_level, "--cvar-level")
    named = _named(runs)
    test_kind, tukey = _claims_test(test)
    _claims_check(margin)
    correction_kind = one_of(correction, _CORRECTIONS, "--correction")
    from receval.evaluation import check_cold_start
    from receval.metrics import MetricList

    metric_list = MetricList(metrics, convention)  # the convention checked and the metrics read once, here
    policy = check_cold_start(cold_start, train)
    if report is not None:
        from receval.outputs import check_output_file

        check_output_file(report, "--report", {"--truth": truth, "--train": train, "--user-groups": user_groups,
                                               **{f"run {name}": path for name, path in named.items()}})  # fmt: skip
    read = table_reader(
        user=user, item=item, rating=rating, score=score, rank=rank, timestamp=timestamp, no_header=no_header
    )
    # Arrow tables, as `receval evaluate` reads them: each run is evaluated without a pandas round trip
    truth_frame = read(truth, "truth", ("user", "item"), truth_format, "--truth-format", arrow=True)
    frames = {
        name: read(path, "recommendations", ("user", "item"), recs_format, "--recs-format", arrow=True)
        for name, path in named.items()
    }
    train_frame = read(train, "train", ("user", "item"), truth_format, "--truth-format", arrow=True) if train else None
    groups_of_truth = truth_groups(truth_frame, group_table, unknown_group)  # checked before any run
    result = compare_runs(
        frames,
        truth_frame,
        metric_list,
        baseline=baseline,
        test=test_kind,
        correction=correction_kind,
        seed=seed,
        threshold=threshold,
        train=train_frame,
        cold_start=policy,
        user_groups=groups_of_truth,
        group_test=group_kind,
        distribution=distribution,
        cvar_level=cvar_level,
    )
    claimed = _claims(result, margin, tukey, seed)
    if report is not None:
        from receval.report.compare import compare_report

        # the report names the paired test's p-values: it gets the claims' added columns (mde, TOST), not Tukey's
        result.tests = result.tests.join(claimed[[c for c in claimed.columns if c not in result.tests.columns]])
        compare_report(result, report, truth=truth, train=train, runs={name: str(p) for name, p in named.items()})
    result.tests = claimed
    if fmt == "json":
        body = {
            "summary": {run: dict(row.items()) for run, row in result.summary.iterrows()},
            "tests": result.tests.to_dict("records"),
            "conventions": {name: result.conventions[name].to_dict() for name in named},
        }
        body.update(_groups_json(result))  # "groups", "distribution"
        typer.echo(jsontext.dumps(body))
        return
    without = {name: result.conventions[name].users_without_list or 0 for name in named}
    if fmt == "table":
        for name in named:
            typer.echo(f"{name}: {cold_start_line(result.conventions[name])}")
    if fmt == "table" and any(without.values()):
        listed = ", ".join(f"{name} {n}" for name, n in without.items())
        typer.echo(f"truth users without a list (scored as empty lists): {listed}")
    print_table(Table.from_frame(result.summary, title="Metrics per run"), fmt)
    title = f"{TEST_NAMES[test_kind]}, p-values corrected: {CORRECTION_NAMES[correction_kind]}"
    title = _claims_title(title, tukey)
    tests = Table.from_frame(result.tests, title=title, index=False)
    tests.float_format = "{:.4g}"  # p-values span orders of magnitude
    print_table(tests, fmt)
    _groups_tables(result, fmt)
    _claims_echo(result.tests, fmt)
    _undefined_echo(result.tests)
    if report is not None:
        typer.echo(f"report written to {report}", err=True)


# --- user groups and the utility distribution ---
def _groups_json(result: Any) -> dict[str, Any]:
    """``groups``: ``{run: {metric: gap}}``; ``distribution``: ``{metric: {run: ...}}`` (only those asked)."""
    body: dict[str, Any] = {}
    if result.groups is not None:
        body["groups"] = {run: {m: g.to_dict() for m, g in gaps.items()} for run, gaps in result.groups.items()}
    if result.distribution is not None:
        body["distribution"] = result.distribution
    return body


def _groups_tables(result: Any, fmt: str) -> None:
    """The group gaps and the utility distributions as tables (text, markdown, CSV …)."""
    if result.groups is not None:
        print_table(groups_table(result.groups), fmt)
    if not result.distribution:
        return
    first_metric = next(iter(result.distribution.values()))
    baseline = next(iter(first_metric))
    level = first_metric[baseline]["cvar_level"]
    quantile_names = [f"q{q:g}" for q in first_metric[baseline]["quantiles"]]
    header = ["metric", "run", "mean", *quantile_names, f"CVaR@{level:g}", "CVaR CI", "Gini", "helped", "hurt",
              "CVaR diff", "p (CVaR diff)"]  # fmt: skip
    rows = []
    for metric, runs in result.distribution.items():
        for run, d in runs.items():
            vs = d.get("vs_first", {})
            lo, hi = d["ci"]["cvar"]
            risk = [vs.get(k) for k in ("helped", "hurt", "cvar_diff", "cvar_p_value")]
            rows.append([metric, run, d["mean"], *d["quantiles"].values(), d["cvar"], f"[{lo:.4g}, {hi:.4g}]",
                         d["gini"], *risk])  # fmt: skip
    title = f"Per-user utility; helped, hurt and CVaR difference against {baseline}"
    table = Table(header, rows, title=title)
    table.float_format = "{:.4g}"
    print_table(table, fmt)


# --- claims that hold: --margin (TOST), --test tukey and each pair's minimum detectable effect -----------

MarginOption = Annotated[
    str | None,
    typer.Option(
        "--margin",
        help="Equivalence margin, absolute (0.005) or relative to b's mean (1%): each pair's TOST p-value "
        "and whether b is within the margin of a.",
    ),
]


def _claims_test(test: str) -> tuple[TestName, bool]:
    """The paired test compare_runs runs and whether Tukey HSD replaces its p-values (``--test tukey``)."""
    if test in MULTI_TEST_NAMES:
        return "ttest", True  # the t-test's rows give diff, interval and effect size; Tukey gives the p-values
    choices: tuple[str, ...] = (*_TESTS, *MULTI_TEST_NAMES)
    return cast(TestName, one_of(test, choices, "--test")), False


def _claims_check(margin: str | None) -> None:
    """A bad --margin is refused before any file is read."""
    if margin is not None:
        from receval.stats.equivalence import parse_margin

        parse_margin(margin)


def _claims(result: Any, margin: str | None, tukey: bool, seed: int) -> Any:
    """The tests with each pair's ``mde`` (80% power, alpha 0.05) and, as asked, ``tost_p``/``equivalent``, Tukey."""
    from receval.experiment.check import comparison_findings
    from receval.studies.compare import claims_columns

    n_users = int(result.tests["n"].max()) if len(result.tests) else 0
    test = str(result.conventions["comparison"]["test"])
    for finding in comparison_findings(test=test, correction="holm", n_users=n_users, n_comparisons=1):
        typer.echo(f"warning: {finding.rule}: {finding.message} ({finding.reference})", err=True)  # R009 only
    if tukey:  # the record says which test gave the p-values
        result.conventions["comparison"]["multiple_test"] = "tukey"
    if margin is not None:
        result.conventions["comparison"]["margin"] = margin
    return claims_columns(result, margin=margin, tukey=tukey, seed=seed)


def _claims_title(title: str, tukey: bool) -> str:
    if tukey:
        return f"{MULTI_TEST_NAMES['tukey']}; mde: smallest difference detectable at 80% power"
    return f"{title}; mde: smallest difference detectable at 80% power"


def _claims_echo(tests: Any, fmt: str) -> None:
    """Say which pairs are within the margin ("b is within M of a"), under the printed table."""
    if fmt != "table":
        return
    from receval.studies.compare import within_margin_lines

    for line in within_margin_lines(tests):
        typer.echo(line)


def _undefined_echo(tests: Any) -> None:
    """Say on stderr why a test figure is NaN (the tables print ``nan``; JSON has ``null``)."""
    from receval.studies.compare import undefined_lines

    for line in undefined_lines(tests):
        typer.echo(f"warning: {line}", err=True)


def register(app: typer.Typer) -> None:
    """Attach ``compare`` to the main app."""
    app.command("compare")(compare_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "compare": "receval compare --truth qrels.trec bm25.trec als=als-run.trec --metrics nDCG@10,P@10 --report cmp.html"
}
