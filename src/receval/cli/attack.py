"""``receval attack``: inject a shilling attack into the training data and measure its effect.

``receval attack --data PATH --format FORMAT --attack random|average|bandwagon|segment|love-hate
--size 0.05 --target ITEM_ID [--push|--nuke] --algorithm NAME [--param key=value ...] [--k 10]
[--filler 0.05] [--selected ITEM_ID ...] [--test-fraction 0.2] [--threshold λ] [--detect]
[--seed S] [--json]``

:func:`receval.studies.attacks.run_attack` splits the data by a seeded random
holdout, fits the algorithm on the training part and on the training part plus the
fake profiles (:func:`receval.studies.attacks.inject`), and
:func:`receval.studies.attacks.attack_effect` compares them: prediction shift of the
target over the real users who have not rated it, hit ratio of the target in their
top-k lists before and after, its mean rank, and ``ndcg@k`` / ``precision@k`` on the
test part. ``--filler`` is a fraction of the catalogue (``0.05``) or a count (``30``).
``--detect`` adds the precision/recall of the RDMA + DegSim detector on the attacked
data. ``--json`` prints one object with at least ``prediction_shift``,
``hit_ratio_before`` and ``hit_ratio_after`` (NaN as ``null``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval import jsontext
from receval.cli.common import FormatOption, json_value, load_data
from receval.errors import ConfigError


def register(app: typer.Typer) -> None:
    """Attach the ``attack`` command to the main app (``receval run`` registers the ``attack`` protocol)."""
    app.command("attack")(attack_command)


def parse_filler(value: str) -> int | float:
    """``"0.05"`` is a fraction of the catalogue, ``"30"`` a count.

    >>> parse_filler("0.05"), parse_filler("30")
    (0.05, 30)
    """
    text = value.strip()
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        raise ConfigError(f"--filler {value!r} must be a fraction (0.05) or a count (30)") from None


def attack_command(
    data: Annotated[Path, typer.Option("--data", help="Ratings file or folder.")],
    format: FormatOption,
    attack: Annotated[str, typer.Option("--attack", help="random, average, bandwagon, segment or love-hate.")],
    size: Annotated[float, typer.Option("--size", help="Fake users as a fraction of the real users, e.g. 0.05.")],
    target: Annotated[list[str], typer.Option("--target", help="Original id of the target item (repeatable).")],
    algorithm: Annotated[str, typer.Option("--algorithm", "-a", help="Algorithm name, e.g. user-knn.")],
    push: Annotated[
        bool | None, typer.Option("--push/--nuke", help="Push or nuke the target (default: the attack's own).")
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Hyper-parameter key=value (repeatable).")
    ] = None,
    k: Annotated[int, typer.Option("--k", help="List length for hit ratio and metrics.")] = 10,
    filler: Annotated[str, typer.Option("--filler", help="Filler items: fraction (0.05) or count (30).")] = "0.05",
    selected: Annotated[
        list[str] | None, typer.Option("--selected", help="Selected item id for bandwagon/segment (repeatable).")
    ] = None,
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Share of ratings held out.")] = 0.2,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Relevance threshold λ (rating ≥ λ; default 1 on usual scales).")
    ] = None,
    detect: Annotated[bool, typer.Option("--detect", help="Also run the RDMA + DegSim detector.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split, the attack and the model.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the measures as one JSON object.")] = False,
) -> None:
    """Inject a shilling attack into the training part and report how the algorithm's output moves."""
    from receval.recommenders import parse_params
    from receval.studies.attacks import run_attack
    from receval.validate import check_command_options, check_threshold

    check_command_options(seed=seed, k=k, test_fraction=test_fraction, size=size)
    fill = parse_filler(filler)
    loaded = load_data(data, format)
    if threshold is not None:
        check_threshold(threshold, loaded.scale.low, loaded.scale.high, "--threshold")
    out = run_attack(
        loaded,
        attack,
        target,
        algorithm,
        params=parse_params(param or []),
        intent=None if push is None else ("push" if push else "nuke"),
        size=size,
        filler=fill,
        selected=selected,
        k=k,
        test_fraction=test_fraction,
        threshold=threshold,
        detect=detect,
        seed=seed,
    )
    out = {key: json_value(value) if not isinstance(value, list) else value for key, value in out.items()}
    if as_json:
        typer.echo(jsontext.dumps(out))
        return
    width = max(len(key) for key in out)
    for key, value in out.items():
        shown = f"{value:.6g}" if isinstance(value, float) else value
        typer.echo(f"{key:<{width}}  {shown}")


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "attack": (
        "receval attack --data ~/data/ml-100k --format movielens-100k --attack average --size 0.05 --target 50 "
        "--algorithm user-knn"
    )
}
