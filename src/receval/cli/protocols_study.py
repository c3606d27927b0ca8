"""``receval protocols-study DATA``: which recommender wins under which protocol, and how much each protocol leaks.

:func:`receval.studies.protocols.protocols_study` fits the recommenders (``--algorithms``,
defaults) under each protocol of ``--protocols`` (``random``: per-user holdout, ``loo``:
leave-last-out, ``temporal``: a global cut at ``--at``, by default the day on which
``1 - --test-fraction`` of the ratings had been made, ``rolling``: ``--windows`` windows)
after each k-core of ``--cores`` (0: none), and prints the first metric per algorithm and
setting, each setting's leakage and Kendall τ between the rankings of every pair of
settings. ``--trials N`` (default 0) adds the tuned variant: in each setting every
recommender is tuned with ``N`` seeded random-search draws on a validation part carved
from the training part by the same kind of split, the defaults a candidate too, and the
choice evaluated on test beside the defaults; τ is computed within each variant and the
chosen parameters are printed. ``--json`` prints ``{"design": {...}, "settings": [...],
"values": [...], "kendall": [...], "tuning": [...]}``
(:meth:`~receval.studies.protocols.ProtocolsStudy.to_dict`: one row per setting with its
retention and leakage figures, per setting, variant, algorithm and metric with its
``value``, per variant, metric and pair of settings with ``tau``, per tuning draw with its
parameters, validation value and whether it was chosen). ``--out DIR`` writes the tables
as CSV, the figures and ``report.html``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval.cli.common import FORMAT_HELP, load_data
from receval.vocabulary import PROTOCOLS_STUDY_ALGORITHMS, PROTOCOLS_STUDY_CORES, STUDY_PROTOCOLS

__all__ = ["register"]


def _words(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def protocols_study_command(
    data: Annotated[Path, typer.Argument(help="The data set's folder (multi-file formats) or file.")],
    fmt: Annotated[str | None, typer.Option("--format", "-f", help=FORMAT_HELP)] = None,
    algorithms: Annotated[str, typer.Option("--algorithms", help="Comma-separated algorithm names.")] = ",".join(
        PROTOCOLS_STUDY_ALGORITHMS
    ),
    protocols: Annotated[
        str, typer.Option("--protocols", help=f"Comma-separated: {', '.join(STUDY_PROTOCOLS)}.")
    ] = ",".join(STUDY_PROTOCOLS),
    cores: Annotated[str, typer.Option("--cores", help="Comma-separated k-cores (0: no filter).")] = ",".join(
        map(str, PROTOCOLS_STUDY_CORES)
    ),
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated metric strings.")] = "ndcg@10,recall@10",
    k: Annotated[int, typer.Option("--k", help="List length.")] = 10,
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Test share of random (and default cut).")] = (
        0.2
    ),
    at: Annotated[str | None, typer.Option("--at", help="Date of the temporal cut (ISO or epoch seconds).")] = None,
    windows: Annotated[int, typer.Option("--windows", help="Rolling windows.")] = 5,
    window: Annotated[str | None, typer.Option("--window", help="Rolling window length (30d, or a fraction).")] = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="Relevance threshold λ.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the splits, the models and the draws.")] = 0,
    trials: Annotated[
        int, typer.Option("--trials", help="Random-search draws to tune each recommender per setting (0: defaults).")
    ] = 0,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for tables, figures and report.html.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the study as JSON.")] = False,
) -> None:
    """Leakage, metrics and Kendall τ of the recommenders' rankings under each protocol and k-core."""
    from typing import Any

    from receval.errors import ConfigError
    from receval.metrics import parse_metric_list
    from receval.studies.protocols import check_protocols_options, protocols_study

    try:
        core_list = [int(c) for c in _words(cores)]
    except ValueError:
        raise ConfigError(f"--cores must be whole numbers separated by commas, e.g. 0,5,10; got {cores!r}") from None
    names, metric_list = _words(algorithms), parse_metric_list(metrics)
    options: dict[str, Any] = {"algorithms": names, "protocols": _words(protocols), "cores": core_list,
                               "metrics": metric_list, "k": k, "test_fraction": test_fraction, "at": at,
                               "windows": windows, "window": window, "seed": seed, "trials": trials}  # fmt: skip
    check_protocols_options(**options)  # before any data is read
    if out is not None:
        from receval.outputs import check_output_dir

        check_output_dir(out, "--out")
    study = protocols_study(load_data(data, fmt), threshold=threshold, **options)
    if out is not None:
        from receval.report.protocols import write_outputs

        write_outputs(study, out)
    if as_json:
        typer.echo(study.to_json())
        return
    first = study.design["metrics"][0]
    typer.echo(f"{first} per algorithm and protocol/core (cut {study.design['cut']})")
    typer.echo(study.table(first).round(4).to_string())
    if trials:
        typer.echo(f"\n{first} tuned ({trials} draws each, chosen on a validation part of each training part)")
        typer.echo(study.table(first, "tuned").round(4).to_string())
    typer.echo("\nLeakage and what each setting kept")
    shown = ["protocol", "core", "ratings_kept", "users_kept", "items_kept", "train_after_test", "global_after_test",
             "future_items", "users_evaluated", "users_cold"]  # fmt: skip
    typer.echo(study.settings[shown].round(4).to_string(index=False))
    typer.echo(f"\nKendall tau between the rankings by {first}" + (" within each variant" if trials else ""))
    part = study.kendall[study.kendall["metric"] == first].drop(columns="metric")
    typer.echo((part if trials else part.drop(columns="variant")).round(3).to_string(index=False))
    if trials:
        typer.echo("\nChosen parameters (draw 0: the defaults)")
        chosen = study.tuning[study.tuning["chosen"]].drop(columns="chosen")
        typer.echo(chosen.round(4).to_string(index=False))


def register(app: typer.Typer) -> None:
    """Attach ``protocols-study`` to the main app."""
    app.command("protocols-study")(protocols_study_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "protocols-study": "receval protocols-study ~/data/ml-100k --format movielens-100k --cores 0,10 --json"
}
