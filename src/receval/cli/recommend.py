"""``receval recommend``, ``receval predict`` and ``receval algorithms``.

Train a model from a ratings file and write what ``receval evaluate`` reads:
ranked lists (``user,item,score,rank``) or rating predictions
(``user,item,rating,prediction``) with the files' original ids, as TSV, CSV or Parquet,
and lists also as a TREC run or ranx JSON (:func:`receval.data.writers.write_table`;
floats at full precision, so they read back exactly).
Outputs are written to a temporary file and renamed, so a failed run never leaves a
partial result.

Test rows whose user or item is not in the training file cannot be predicted by a
model trained on it: by default that is an error; ``--unknown global-mean`` predicts
the training mean for them instead and ``--unknown drop`` leaves them out.

``receval recommend --test`` treats the test users absent from the training file
(cold users) by ``--cold-start`` (:mod:`receval.cold_start`): no list (``empty``, the
default, and ``exclude``, which ``receval evaluate --cold-start exclude`` then leaves out)
or the most-rated training items (``fallback``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from receval.cli.common import FORMAT_HELP, SCALE_HELP, NoHeader, load_data, load_pair, one_of
from receval.cli.evaluate import COLD_START_HELP
from receval.errors import ConfigError, DataError

if TYPE_CHECKING:
    import numpy as np

    from receval.data.interactions import Interactions

_UNKNOWN: tuple[Literal["error", "global-mean", "drop"], ...] = ("error", "global-mean", "drop")

TrainOpt = Annotated[Path, typer.Option("--train", help="Training ratings (CSV, TSV or Parquet; user,item,rating).")]
AlgorithmOpt = Annotated[
    str, typer.Option("--algorithm", "-a", help="Algorithm name (see `receval algorithms`), e.g. item-knn.")
]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--param", "-p", help="Hyper-parameter key=value (repeatable), e.g. --param k=50."),
]
FormatOpt = Annotated[str | None, typer.Option("--format", "-f", help=FORMAT_HELP)]
ScaleOpt = Annotated[str | None, typer.Option("--scale", help=SCALE_HELP)]
OutOpt = Annotated[
    Path,
    typer.Option(
        "--out", "-o", help="Output file, by extension: .tsv, .csv, .parquet, .trec/.run (TREC run) or .json (ranx)."
    ),
]


def _train_model(train: Interactions, algorithm: str, params: list[str] | None, seed: int | None):
    """The named model fitted on ``train``; ``--seed`` seeds it unless ``--param seed=...`` does."""
    from receval.recommenders import clone, make, parse_params

    parsed = parse_params(params or [])
    model = make(algorithm, **parsed)
    if seed is not None and "seed" not in parsed:
        model = clone(model, seed=seed)
    return model.fit(train)


def recommend_command(
    train: TrainOpt,
    algorithm: AlgorithmOpt,
    out: OutOpt,
    param: ParamOpt = None,
    k: Annotated[int, typer.Option("--k", help="List length.")] = 100,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the model (if it has one) and of tie-breaking.")
    ] = None,
    include_train: Annotated[
        bool, typer.Option("--include-train", help="Also recommend items the user rated in training.")
    ] = False,
    format: FormatOpt = None,
    scale: ScaleOpt = None,
    test: Annotated[
        Path | None,
        typer.Option("--test", help="Make lists only for this ratings file's users (read as --train is)."),
    ] = None,
    users_file: Annotated[
        Path | None,
        typer.Option("--users", help="Make lists only for these users: a file of user ids, one per line."),
    ] = None,
    no_header: NoHeader = False,
    cold_start: Annotated[str, typer.Option("--cold-start", help="With --test: " + COLD_START_HELP)] = "empty",
) -> None:
    """Train on --train and write top-k lists (user, item, score, rank) for its users, or those of --test/--users.

    Without ``--test``/``--users`` every training user gets a list. With ``--test``, the
    users of that file do; those absent from the training file (cold users, which the
    model cannot score) are counted and get no list, or with ``--cold-start fallback`` the
    most-rated training items (score: the item's training ratings); with ``--users``,
    the ids listed (each must be a training user).
    """
    import numpy as np

    from receval.data.writers import write_table
    from receval.outputs import check_output_file
    from receval.recommenders import recommend
    from receval.validate import check_command_options
    from receval.vocabulary import cold_start_policy

    check_command_options(seed=seed, k=k)
    policy = cold_start_policy(cold_start)
    check_output_file(out, "--out", {"--train": train, "--test": test, "--users": users_file})
    if test is not None and users_file is not None:
        raise ConfigError("give --test or --users, not both")
    if test is not None:
        data, truth = load_pair(train, test, format, scale=scale, no_header=no_header, genres=False)
    else:
        data = load_data(train, format, scale=scale, no_header=no_header, genres=False)
    model = _train_model(data, algorithm, param, seed)
    users, cold_ids = np.unique(data.users), None
    if test is not None:
        test_ids = np.unique(truth.user_ids[truth.users])
        index = data.user_index(test_ids, strict=False)
        users, cold_ids = np.unique(index[index >= 0]), test_ids[index < 0]
    elif users_file is not None:
        users = _listed_users(users_file, data)
    items, scores = recommend(model, users, k, exclude=None if include_train else data, seed=seed or 0)
    valid = items >= 0
    rows, ranks = np.nonzero(valid)
    columns = {  # arrays: a TREC run, ranx JSON or number ids are written without pandas
        "user": data.user_ids[users[rows]],
        "item": data.item_ids[items[valid]],
        "score": scores[valid],
        "rank": ranks + 1,
    }
    listed = len(users)
    if cold_ids is not None and len(cold_ids) and policy == "fallback":
        from receval.cold_start import fallback_items

        counts = np.bincount(data.items, minlength=data.n_items)
        fallback = fallback_items(counts, data.item_ids, k)
        columns = {
            "user": np.concatenate([columns["user"], np.repeat(cold_ids, len(fallback))]),
            "item": np.concatenate([columns["item"], np.tile(data.item_ids[fallback], len(cold_ids))]),
            "score": np.concatenate([columns["score"], np.tile(counts[fallback].astype(np.float64), len(cold_ids))]),
            "rank": np.concatenate([columns["rank"], np.tile(np.arange(1, len(fallback) + 1), len(cold_ids))]),
        }
        listed += len(cold_ids)
    write_table(columns, out)
    typer.echo(
        f"wrote {len(columns['rank'])} recommendations for {listed} users to {out}{_cold_note(cold_ids, policy)}"
    )


def _cold_note(cold_ids: np.ndarray | None, policy: str) -> str:
    """What became of the test users absent from the training file (none without --test)."""
    if cold_ids is None:
        return ""
    head = f" ({len(cold_ids)} test users are not in the training file (cold): "
    if policy == "fallback":
        return head + "given the most-rated training items, --cold-start fallback)"
    if policy == "exclude":
        return head + "no list; receval evaluate --train TRAIN --cold-start exclude leaves them out)"
    return head + "no list, scored as empty lists, --cold-start empty)"


def _listed_users(path: Path, data: Interactions) -> np.ndarray:
    """Training user indices of the ids in ``path`` (one per line; blank lines and a ``user`` header skipped)."""
    import numpy as np
    import pandas as pd

    from receval.data import _source

    if not path.is_file():
        raise DataError("users file not found", path=path)
    with _source.open_binary(path) as fh:  # compressed like every other input
        raw = fh.read()
    try:
        lines = raw.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as err:
        raise DataError(
            "the users file is not UTF-8 text; save it as UTF-8, one user id per line",
            path=path,
            line=raw.count(b"\n", 0, err.start) + 1,
        ) from None
    rows = [(n, line.strip()) for n, line in enumerate(lines, start=1) if line.strip()]
    if rows and rows[0][1].lower() == "user":
        rows = rows[1:]
    if not rows:
        raise DataError("the users file lists no user id (one id per line)", path=path)
    known = pd.Index(np.asarray(data.user_ids).astype(str))
    index = known.get_indexer([value for _, value in rows])
    if (index < 0).any():
        line, value = rows[int(np.flatnonzero(index < 0)[0])]
        raise DataError(
            f"user {value!r} is not in the training file ({int((index < 0).sum())} listed users are not); "
            "list only training users (a model cannot score users it has not seen)",
            path=path,
            line=line,
        )
    return np.unique(index)


def predict_command(
    train: TrainOpt,
    test: Annotated[Path, typer.Option("--test", help="Test ratings to predict (same columns as --train).")],
    algorithm: AlgorithmOpt,
    out: OutOpt,
    param: ParamOpt = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the model (if it has one).")] = None,
    unknown: Annotated[
        str, typer.Option("--unknown", help="Test users/items absent from --train: error, global-mean or drop.")
    ] = "error",
    format: FormatOpt = None,
    scale: ScaleOpt = None,
    no_header: NoHeader = False,
) -> None:
    """Train on --train and predict every rating of --test (user, item, rating, prediction)."""
    import numpy as np

    from receval.outputs import check_output_file
    from receval.validate import check_command_options

    check_command_options(seed=seed)
    check_output_file(out, "--out", {"--train": train, "--test": test})
    policy = one_of(unknown, _UNKNOWN, "--unknown")
    data, truth = load_pair(train, test, format, scale=scale, no_header=no_header, genres=False)
    model = _train_model(data, algorithm, param, seed)
    if not hasattr(model, "predict"):
        raise ConfigError(f"{algorithm} ranks items but does not predict ratings; use `receval recommend`")
    u = data.user_index(truth.user_ids[truth.users], strict=False)
    i = data.item_index(truth.item_ids[truth.items], strict=False)
    known = (u >= 0) & (i >= 0)
    if not known.all() and policy == "error":
        bad = int(np.flatnonzero(~known)[0])
        raise DataError(
            f"{int((~known).sum())} test rows have a user or item absent from the training file (first: user "
            f"{_plain(truth.user_ids[truth.users[bad]])!r}, item {_plain(truth.item_ids[truth.items[bad]])!r}); pass "
            "--unknown global-mean to predict the training mean for them or --unknown drop to leave them out",
            path=test,
        )
    prediction = np.full(len(truth), float(np.mean(data.ratings, dtype=np.float64)))
    prediction[known] = model.predict(u[known], i[known])
    keep = known if policy == "drop" else np.ones(len(truth), dtype=bool)
    from receval.data.writers import write_table

    columns = {  # number ids (as most rating files hold) are written without pandas
        "user": truth.user_ids[truth.users][keep],
        "item": truth.item_ids[truth.items][keep],
        "rating": truth.ratings[keep].astype(np.float64),
        "prediction": prediction[keep],
    }
    write_table(columns, out)
    typer.echo(f"wrote {int(keep.sum())} predictions to {out}")


def _plain(value: object) -> object:
    import numpy as np

    return value.item() if isinstance(value, np.generic) else value


def algorithms_command() -> None:
    """List the algorithms with their parameters and defaults."""
    from receval.recommenders import list_algorithms

    for info in list_algorithms():
        typer.echo(f"{info.name:<12} {info.summary}")
        for key, default in info.params.items():
            typer.echo(f"    {key}={default}")
    typer.echo("surprise:<Class>  any scikit-surprise algorithm, e.g. surprise:SVD (parameters go to the class)")
    typer.echo("implicit:<Class>  any implicit CPU model, e.g. implicit:BayesianPersonalizedRanking")


def register(app: typer.Typer) -> None:
    """Attach ``recommend``, ``predict`` and ``algorithms`` to the main app."""
    app.command("recommend")(recommend_command)
    app.command("predict")(predict_command)
    app.command("algorithms")(algorithms_command)


# the example at the end of each command's --help (receval.cli.app gathers them)
EXAMPLES: dict[str, str] = {
    "recommend": "receval recommend --train train.tsv --algorithm item-knn --param k=50 --k 100 --out recs.tsv",
    "predict": "receval predict --train train.tsv --test test.tsv --algorithm user-knn --out predictions.tsv",
    "algorithms": "receval algorithms",
}
