"""``receval ope``: off-policy estimates of target policies from a simulated log, against the truth.

``receval ope --data PATH --format FORMAT [--logging POLICY] [--targets LIST] [--rounds N]
[--seed S] [--threshold λ] [--test-fraction F] [--reward-model NAME] [--clip C]
[--bootstrap B] [--log FILE] [--target-table FILE ...] [--log-out FILE] [--out DIR] [--json]``
(or ``--synthetic USERSxITEMS`` instead of ``--data``: generated data whose complete preference
matrix gives every reward).

Real data are split by a seeded random holdout: the training part fits the policies, the
held-out ratings are the rewards (1 for a rating ≥ λ) and each user's actions. The logging
policy logs ``--rounds`` decisions with propensities
(:mod:`receval.simulate.logged`), or ``--log FILE`` gives the log (a log table with indices of
the same data and split, e.g. an earlier ``--log-out``); every target (``--targets`` policies and
``--target-table`` files of action probabilities, columns user, item, probability) is estimated
by every estimator of :mod:`receval.stats.ope` and run on-policy for the truth
(:func:`receval.studies.ope.ope_study`). Warnings (uncovered target mass, reward-model pairs it
could not predict) go to stderr with their counts; bad input is a one-line error, exit 2.
``--json`` prints ``{"truth": {policy: value}, "on_policy": {...}, "estimates": {estimator:
{policy: value}}, "intervals": {...}, "diagnostics": {policy: {"ess", "max_weight",
"overlap"}}, "error": {estimator: mean absolute error}, "kendall_tau": {estimator: τ-b},
"width": {...}, "coverage": {...}, "settings": {...}}``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import typer

from receval import jsontext
from receval.cli.common import FORMAT_HELP, load_data
from receval.cli.output import OUTPUT_HELP, output_format
from receval.errors import ConfigError
from receval.vocabulary import OPE_DEFAULT_TARGETS


def register(app: typer.Typer) -> None:
    """Attach the ``ope`` command to the main app."""
    app.command("ope")(ope_command)


def default_threshold(low: float, high: float) -> float:
    """λ when none is given: the upper part of the scale, ⌈low + 0.6 (high − low)⌉ (4 on 1–5, 3 on 1–4).

    >>> default_threshold(1, 5), default_threshold(1, 4)
    (4.0, 3.0)
    """
    return float(math.ceil(low + 0.6 * (high - low)))


def ope_command(
    data: Path | None = typer.Option(None, "--data", help="The data set's folder (multi-file formats) or file."),
    fmt: str | None = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    synthetic: str | None = typer.Option(
        None, "--synthetic", help="USERSxITEMS: generated data with its complete matrix as rewards (instead of --data)."
    ),
    logging_policy: str = typer.Option(
        "egreedy:0.3", "--logging", help="The logging policy: random, egreedy[:ε], softmax[:T], thompson[:D], ..."
    ),
    targets: str = typer.Option(
        ",".join(OPE_DEFAULT_TARGETS), "--targets", help="Comma-separated target policies ('' for tables only)."
    ),
    target_tables: list[Path] | None = typer.Option(
        None, "--target-table", help="A target as action probabilities: CSV/Parquet user,item,probability (repeatable)."
    ),
    log_in: Path | None = typer.Option(
        None, "--log", help="Estimate from this log table (.parquet/.csv) instead of logging with --logging."
    ),
    rounds: int = typer.Option(20000, "--rounds", help="Logged decisions."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split, the log and the bootstrap."),
    threshold: float | None = typer.Option(
        None, "--threshold", help="λ: ratings ≥ λ are reward 1 (default 4 on 1-5, 3 on 1-4)."
    ),
    test_fraction: float = typer.Option(0.5, "--test-fraction", help="Share of ratings held out as rewards."),
    reward_model: str = typer.Option("biases", "--reward-model", help="Recommender with predict, fitted on the log."),
    clip: float | None = typer.Option(None, "--clip", help="Clip importance weights at this value."),
    bootstrap: int = typer.Option(200, "--bootstrap", help="Bootstrap replicates of every interval."),
    log_out: Path | None = typer.Option(None, "--log-out", help="Write the log table here (.parquet or .csv)."),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for estimates.csv/.png and error_by_size.csv/.png (logs of N/100, N/10 and N)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print truth, estimates, errors and τ as JSON."),
    output: str | None = typer.Option(None, "--output", help=OUTPUT_HELP),
) -> None:
    """Log with one policy, estimate others off-policy with every estimator, and measure each estimator's error."""
    import pandas as pd

    from receval.studies.ope import ope_study
    from receval.validate import check_command_options, check_distinct, check_number

    check_command_options(seed=seed, rounds=rounds, test_fraction=test_fraction, bootstrap=bootstrap)
    if clip is not None:
        check_number(clip, "--clip", minimum=1e-12)
    if (data is None) == (synthetic is None):
        raise ConfigError("give one of --data PATH (with --format) or --synthetic USERSxITEMS")
    names = [t.strip() for t in targets.split(",") if t.strip()]
    if not names and not target_tables:
        raise ConfigError("--targets is empty; give comma-separated policies such as random,greedy or --target-table")
    check_distinct(names, "--targets")  # the study keys targets by name: a second 'random' was dropped silently
    if log_out is not None:
        from receval.outputs import check_output_file

        tables = {f"--target-table {t}": t for t in target_tables or []}
        check_output_file(log_out, "--log-out", {"--data": data, "--log": log_in, **tables})
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    fmt_out = output_format(output, as_json)
    from receval.simulate.logged import PolicyTable, read_log, read_policy_table

    given = None if log_in is None else read_log(log_in)  # the log's checks before any work
    if synthetic is not None:
        match = re.fullmatch(r"(\d+)x(\d+)", synthetic.strip())
        if not match or min(int(match[1]), int(match[2])) < 2:
            raise ConfigError(f"--synthetic {synthetic!r} is not USERSxITEMS with at least 2 of each (e.g. 300x100)")
        from receval.data.synthetic import generate_with_truth

        nu, ni = int(match[1]), int(match[2])
        gen = generate_with_truth(
            n_users=nu, n_items=ni, n_ratings=max(nu * ni // 10, nu * 2), seed=seed, keep_complete=True
        )
        assert gen.complete is not None  # keep_complete=True
        train, test = gen.data, gen.complete
    else:
        from receval.split import holdout

        assert data is not None
        train, test = holdout(load_data(data, fmt), test_fraction, seed=seed)
    lam = default_threshold(train.scale.low, train.scale.high) if threshold is None else threshold
    train._check_threshold(lam)
    chosen: dict[str, str | PolicyTable] = {n: n for n in names}
    for path in target_tables or []:
        table = read_policy_table(path, test, threshold=lam)
        if table.name in chosen:
            raise ConfigError(f"--target-table {path}: a target named {table.name!r} is already given; rename the file")
        chosen[table.name] = table
    label = logging_policy if log_in is None else str(log_in)
    result = ope_study(
        train, test, logging=label, targets=chosen, threshold=lam, rounds=rounds, log=given, seed=seed,
        reward_model=reward_model, clip=clip, n_bootstrap=bootstrap,
    )  # fmt: skip
    rounds = len(result.log.frame)
    if log_out is not None:
        from receval.simulate.logged import write_log

        write_log(log_out, result.log)
    if out is not None:
        from receval.atomic import publish, write_frame
        from receval.report.ope import plot_error_by_size, plot_estimates
        from receval.studies.ope import error_by_size

        sizes = sorted({max(rounds // 100, 10), max(rounds // 10, 10)} - {rounds})
        by_size = error_by_size(
            train, test, sizes=sizes, logging=label, targets=chosen, threshold=lam, seed=seed,
            reward_model=reward_model, clip=clip, n_bootstrap=0, log=given,
        )  # fmt: skip
        mine = pd.DataFrame([{"rounds": rounds, "estimator": k, "error": v, "coverage": result.coverage[k],
                              "kendall_tau": result.kendall_tau[k]} for k, v in result.error.items()])  # fmt: skip
        by_size = pd.concat([by_size, mine], ignore_index=True)
        with publish(out) as pub:
            write_frame(pub.path(out / "estimates.csv"), result.frame())
            plot_estimates(result.frame(), pub.path(out / "estimates.png"))
            write_frame(pub.path(out / "error_by_size.csv"), by_size)
            plot_error_by_size(by_size, pub.path(out / "error_by_size.png"))
    if fmt_out == "json":
        typer.echo(jsontext.dumps(result.payload()))
        return
    from receval.cli.output import Table, print_table

    table = pd.DataFrame({"truth": result.truth, "on_policy": result.on_policy})
    for k, row in result.estimates.items():
        table[k] = pd.Series({p: e.value for p, e in row.items()})
    title = f"{label} logged {rounds} decisions (λ = {lam:g}, propensities {result.log.propensity})"
    print_table(Table.from_frame(table, title=title, index_label="target"), fmt_out)
    summary = pd.DataFrame(
        {"mae": result.error, "kendall_tau": result.kendall_tau, "width": result.width, "coverage": result.coverage}
    )
    print_table(Table.from_frame(summary, title="per estimator", index_label="estimator"), fmt_out)
    diagnostics = pd.DataFrame(result.payload()["diagnostics"]).T
    title = "diagnostics per target (ESS of the importance weights, largest weight, target mass on logged actions)"
    print_table(Table.from_frame(diagnostics, title=title, index_label="target"), fmt_out)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "ope": "receval ope --data ~/data/cm100k --format cm100k --logging egreedy:0.3 --targets random,greedy,thompson"
}
