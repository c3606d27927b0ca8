"""Evaluate a run too large for memory from Parquet files, user shard by user shard.

The user ids are cut into ``n_shards`` ranges at the row-group boundaries of the run
file (read from the Parquet footer's statistics, no data read); each shard reads only
the rows of its users from both files (pyarrow prunes the row groups outside the range
and filters the rest) and evaluates them with :func:`receval.evaluation.evaluate`. A
user's value depends only on the user's own list and truth, so the shards' per-user
values, put in the order of one evaluation (users by their ids as text, as every file
is read), are those of one evaluation of everything, and every summary (the mean over
the users a metric scores, or the sum) is computed once from them: the same numbers,
bit for bit, as without shards, on any executor and any number of workers.

Shards run one after another (``executor="local", jobs=1``), in ``jobs`` local
processes, or on a Dask cluster (``executor="dask"`` and the scheduler's address; the
engine ``receval run`` uses). Only per-user metrics averaged over users (or summed)
can be sharded this way: metrics needing training data, aspects, predictions or
propensities, and micro or system aggregation, are refused with the reason.

Examples
--------
>>> import tempfile, pathlib, pandas as pd
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"user": [1, 1, 2, 3], "item": [10, 11, 10, 12], "rating": [5, 1, 4, 5]}).to_parquet(d / "t.parquet")
>>> pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [11, 10, 10, 12, 11], "score": [0.9, 0.8, 0.7, 0.6, 0.5]}
...              ).to_parquet(d / "r.parquet", row_group_size=2)
>>> result = evaluate_parquet_sharded(d / "t.parquet", d / "r.parquet", ["precision@1", "mrr"], threshold=4,
...                                   n_shards=2)
>>> result.summary, result.conventions.shards
({'precision@1': 0.3333333333333333, 'mrr': 0.5}, 2)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from receval.errors import ConfigError, DataError, MetricError
from receval.progress import progress_to

if TYPE_CHECKING:
    from receval.evaluation import EvaluationResult
    from receval.metrics import MetricList

__all__ = ["evaluate_parquet_sharded", "plan_shards"]

_COUNTS = ("users_evaluated", "users_dropped_not_in_truth", "users_without_list")
_SHARED = ("threshold", "negative_threshold", "tie_break", "convention", "estimators", "metrics")
"""Conventions that every shard reports alike (taken from the first shard with users)."""


def _open(path: str | Path, what: str) -> Any:
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} file not found", path=path)
    try:
        return pq.ParquetFile(path)
    except Exception as err:  # pyarrow raises ArrowInvalid / OSError for a file that is not Parquet
        raise DataError(f"not a readable Parquet file ({err}); sharded evaluation reads Parquet", path=path) from None


def plan_shards(recs: str | Path, n_shards: int, user: str = "user") -> list[tuple[Any, Any]]:
    """User ranges ``(after, upto)`` (``None`` = unbounded) cutting ``recs`` into at most ``n_shards`` shards.

    A shard holds the users ``after < user <= upto``. The bounds are the largest user
    id of row groups (from the footer's statistics): with a file sorted by user, every
    shard reads whole row groups. The ranges cover every possible id, so every row of
    both files falls in exactly one shard whatever the order of the files.

    Returns
    -------
    list of tuple
        ``(after, upto)`` pairs in increasing order, the first ``after`` and the last
        ``upto`` None; fewer than ``n_shards`` when the file has fewer row groups.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> pd.DataFrame({"user": [1, 1, 2, 2, 3, 3], "item": [1, 2, 1, 2, 1, 2]}).to_parquet(p, row_group_size=2)
    >>> plan_shards(p, 2), plan_shards(p, 5)
    ([(None, 2), (2, None)], [(None, 1), (1, 2), (2, None)])
    """
    if n_shards < 1:
        raise ConfigError(f"n_shards={n_shards} is too few: give at least n_shards=1", parameters=["n_shards"])
    meta = _open(recs, "recommendations").metadata
    names = meta.schema.names
    if user not in names:
        raise DataError(f"no user column {user!r} (columns: {', '.join(names)}); name it with user=COLUMN", path=recs,
                        parameters=["user"])  # fmt: skip
    column = names.index(user)
    tops = []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(column).statistics
        if stats is None or not stats.has_min_max:
            raise DataError(f"the Parquet row groups have no statistics of column {user!r}; write them", path=recs)
        tops.append((stats.max, meta.row_group(g).num_rows))
    total = sum(rows for _, rows in tops)
    bounds: list[Any] = []
    done = 0
    for top, rows in tops[:-1]:  # cut after a row group once its shard has its share of the rows
        done += rows
        if done >= (len(bounds) + 1) * total / n_shards and (not bounds or top > bounds[-1]):
            bounds.append(top)
    edges = [None, *bounds, None]
    return list(itertools.pairwise(edges))


def _scale(parquet: Any, rating: str | None, path: str | Path) -> tuple[float, float]:
    """The truth's rating range from the footer's statistics (every shard checks thresholds on it)."""
    if rating is None:
        return 1.0, 1.0
    meta = parquet.metadata
    column = meta.schema.names.index(rating)
    lows, highs = [], []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(column).statistics
        if meta.row_group(g).num_rows == 0:
            continue
        if stats is None or not stats.has_min_max:
            raise DataError(f"the Parquet row groups have no statistics of column {rating!r}; write them", path=path)
        lows.append(float(stats.min))
        highs.append(float(stats.max))
    if not lows:
        raise DataError("the truth has no rows: there is nothing to evaluate against", path=path)
    return min(lows), max(highs)


def _check_metrics(metrics: MetricList) -> None:
    from receval.metrics._definition import DEBIAS_PARAMS

    for name, spec in metrics:
        d = spec.definition
        why = (
            "it needs training data" if d.needs_train
            else "it needs item aspects" if d.needs_aspects
            else "it needs rating predictions" if d.needs_predictions
            else "its estimator needs propensities" if not DEBIAS_PARAMS.isdisjoint(spec.params)
            else f"its aggregation is {spec.aggregation}" if spec.aggregation not in ("macro", "sum")
            else None
        )  # fmt: skip
        if why is not None:
            raise MetricError(
                f"metric {name!r} cannot be evaluated by user shards: {why}; "
                "evaluate it without shards (leave out n_shards=)",
                parameters=["n_shards"],
            )


def _read_shard(path: str, columns: Mapping[str, str], user: str, after: Any, upto: Any) -> Any:
    """The rows of users ``after < user <= upto`` as a DataFrame with receval's column names.

    Reads only the row groups whose user range (footer statistics) meets the shard's,
    then keeps the shard's rows (only the groups at its edges hold others).
    """
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    meta = parquet.metadata
    column = meta.schema.names.index(user)
    groups = []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(column).statistics
        if (
            stats is not None
            and stats.has_min_max
            and ((after is not None and stats.max <= after) or (upto is not None and stats.min > upto))
        ):
            continue  # no user of this group is in the shard
        groups.append(g)
    table = parquet.read_row_groups(groups, columns=list(columns.values()), use_threads=False)
    ids = table.column(user)
    keep = None
    if after is not None:
        keep = pc.greater(ids, after)
    if upto is not None:
        below = pc.less_equal(ids, upto)
        keep = below if keep is None else pc.and_(keep, below)
    if keep is not None and pc.sum(keep).as_py() != len(table):
        table = table.filter(keep)
    return table.rename_columns(list(columns)).to_pandas()


def _shard_task(job: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Evaluate one user range: its per-user frame and its counts.

    The shard's truth is given to :func:`~receval.evaluation.evaluate` with the id spaces
    of both files' users and items of the range: a user or item of the run that the
    shard's truth lacks is then a user without truth (counted, as one evaluation counts
    it) or an unjudged item, never an id-mismatch error of a small range.
    """
    import numpy as np
    import pandas as pd

    from receval.data.interactions import Interactions, RatingScale
    from receval.evaluation import evaluate

    truth = _read_shard(job["truth"], job["truth_columns"], job["user"], job["after"], job["upto"])
    recs = _read_shard(job["recs"], job["recs_columns"], job["user"], job["after"], job["upto"])
    rec_users = pd.unique(recs["user"].to_numpy())
    truth_users = pd.unique(truth["user"].to_numpy())
    dropped = int(np.count_nonzero(~np.isin(rec_users, truth_users)))
    if truth.empty:  # no truth user in this range: nothing to score
        return None, {"users_evaluated": 0, "users_dropped_not_in_truth": dropped, "users_without_list": 0}
    user_ids = np.union1d(truth_users, rec_users)
    item_ids = np.union1d(pd.unique(truth["item"].to_numpy()), pd.unique(recs["item"].to_numpy()))
    ratings = truth["rating"].to_numpy(np.float32) if "rating" in truth else np.ones(len(truth), np.float32)
    data = Interactions(
        users=np.searchsorted(user_ids, truth["user"].to_numpy()).astype(np.int32),
        items=np.searchsorted(item_ids, truth["item"].to_numpy()).astype(np.int32),
        ratings=ratings,
        user_ids=user_ids,
        item_ids=item_ids,
        scale=RatingScale(*job["scale"]),
        name="truth",
    )
    result = evaluate(
        recs,
        data,
        job["metrics"],
        threshold=job["threshold"],
        negative_threshold=job["negative_threshold"],
        empty_users=job["empty_users"],
        ties=job["ties"],
        ranks=job["ranks"],
    )
    conventions = result.conventions.to_dict()
    counts = {key: conventions[key] for key in ("users_evaluated", "users_without_list", "users_scored")}
    counts.update(users_dropped_not_in_truth=dropped)
    counts.update({key: conventions[key] for key in _SHARED})
    return result.per_user, counts


def _collect(results: Iterable[Any], n_jobs: int) -> list[Any]:
    """The shards' results in order; the active progress callback hears of each."""
    notify, parts = progress_to(None), []
    notify(0, n_jobs, "evaluate shards")
    for part in results:
        parts.append(part)
        notify(len(parts), n_jobs, "evaluate shards")
    return parts


def _run(jobs: list[dict[str, Any]], executor: str, workers: int, scheduler: str | None) -> list[Any]:
    if executor == "local":
        if workers == 1:
            return _collect(map(_shard_task, jobs), len(jobs))
        from receval.evaluation.sharded import worker_pool

        with worker_pool(workers, env={"OPENBLAS_NUM_THREADS": "1"}) as pool:
            return _collect(pool.map(_shard_task, jobs), len(jobs))
    if executor == "dask":
        if scheduler is None:
            raise ConfigError(
                "executor='dask' needs scheduler= (the address of a running Dask scheduler, e.g. tcp://host:8786)",
                parameters=["executor", "scheduler"],
            )
        from distributed import Client

        with Client(scheduler) as client:
            return client.gather(client.map(_shard_task, jobs, pure=False))
    raise ConfigError(
        f"executor={executor!r} is not one of 'local', 'dask' for sharded evaluation", parameters=["executor"]
    )


def evaluate_parquet_sharded(
    truth: str | Path,
    recs: str | Path,
    metrics: MetricList | Sequence[str] | str,
    *,
    n_shards: int,
    threshold: float | None = None,
    negative_threshold: float | None = None,
    empty_users: str = "skip",
    columns: Mapping[str, str] | None = None,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    ties: str | None = None,
    convention: str | None = None,
    ranks: str = "order",
) -> EvaluationResult:
    """Evaluate the run ``recs`` against ``truth`` (both Parquet) in user shards; see the module's docs.

    ``columns`` maps receval's column names (``user``, ``item``, ``rating``, ``score``,
    ``rank``) to the files' own; ``ties``, ``convention`` and ``ranks`` are
    :func:`~receval.evaluation.evaluate`'s (a user's ties are among the user's own
    rows, all in one shard). Returns an :class:`~receval.evaluation.EvaluationResult`
    whose summary and per-user values equal one :func:`~receval.evaluation.evaluate` of
    both files; its conventions add ``shards``.

    Returns
    -------
    EvaluationResult
        ``summary``, ``per_user`` and ``conventions``, as :func:`~receval.evaluation.evaluate` gives them.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> truth = pd.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [5.0, 2.0, 4.0]})
    >>> truth.to_parquet(folder / "t.parquet")
    >>> run = pd.DataFrame({"user": [1, 1, 2, 2], "item": [10, 12, 11, 10], "score": [0.9, 0.5, 0.8, 0.1]})
    >>> run.to_parquet(folder / "r.parquet")
    >>> evaluate_parquet_sharded(folder / "t.parquet", folder / "r.parquet", ["precision@1", "recall@2"],
    ...                          n_shards=2, threshold=4).summary
    {'precision@1': 0.5, 'recall@2': 1.0}
    """
    import numpy as np
    import pandas as pd

    from receval.evaluation import Conventions, EvaluationResult
    from receval.evaluation.align import check_ranks, check_ties
    from receval.metrics import MetricList, aggregate
    from receval.validate import check_jobs

    jobs = check_jobs(jobs)  # 1 to jobs_limit(), before any file is read or worker started
    metric_list = MetricList.of(metrics, convention)  # each shard's evaluate takes it (its convention with it)
    if ties is not None:
        check_ties(ties)
    check_ranks(ranks)
    _check_metrics(metric_list)
    aggregation = {label: spec.aggregation for label, spec in metric_list}
    names = {role: role for role in ("user", "item", "rating", "score", "rank")} | dict(columns or {})
    files = {"truth": _open(truth, "truth"), "recs": _open(recs, "recommendations")}
    wanted = {"truth": ("user", "item", "rating"), "recs": ("user", "item", "score", "rank")}
    picked: dict[str, dict[str, str]] = {}
    for key, parquet in files.items():
        present = parquet.schema_arrow.names
        for role in ("user", "item"):
            if names[role] not in present:
                raise DataError(
                    f"no {role} column {names[role]!r} (columns: {', '.join(present)}); pass --{role} COLUMN",
                    path=truth if key == "truth" else recs,
                )
        picked[key] = {role: names[role] for role in wanted[key] if names[role] in present}
    types = {key: parquet.schema_arrow.field(names["user"]).type for key, parquet in files.items()}
    if types["truth"] != types["recs"]:
        raise DataError(
            f"the user ids of the truth ({types['truth']}) and of the run ({types['recs']}) have different types; "
            "write both with the same type to evaluate by shards",
            path=recs,
        )
    base = {
        "truth": str(truth), "recs": str(recs), "truth_columns": picked["truth"], "recs_columns": picked["recs"],
        "user": names["user"], "metrics": metric_list, "threshold": threshold,
        "negative_threshold": negative_threshold, "empty_users": empty_users, "ties": ties, "ranks": ranks,
        "scale": _scale(files["truth"], picked["truth"].get("rating"), truth),
    }  # fmt: skip
    plan = plan_shards(recs, n_shards, names["user"])
    parts = _run([{**base, "after": a, "upto": b} for a, b in plan], executor, jobs, scheduler)
    frames = [frame for frame, _ in parts if frame is not None]
    if not frames:
        raise DataError("the truth has no user", path=truth)
    per_user = pd.concat(frames, ignore_index=True)
    # ids are text, as every file is read without shards: users in the text order of their ids, as one evaluation
    text = per_user["user"].to_numpy().astype(str)
    order = np.argsort(text, kind="stable")
    per_user = per_user.iloc[order].reset_index(drop=True).assign(user=text[order].astype(object))
    summary: dict[str, float] = {}
    for label, spec in metric_list:
        summary[label] = aggregate(spec, per_user[label].to_numpy(dtype=np.float64))
    counts = [c for _, c in parts]
    conventions: dict[str, Any] = {key: sum(int(c[key]) for c in counts) for key in _COUNTS}
    conventions["users_scored"] = {
        label: sum(int(c.get("users_scored", {}).get(label, 0)) for c in counts) for label in metric_list.labels
    }
    first = next(c for (frame, c) in parts if frame is not None)
    conventions.update({key: first[key] for key in _SHARED})
    conventions.update(empty_users=empty_users, aggregation=aggregation, shards=len(plan), executor=executor)
    return EvaluationResult(per_user, summary, Conventions(**conventions))
