"""User-sharded evaluation: one evaluation split by user rows across workers, aggregated exactly.

Per-user metric values depend only on the user's own row (lists, truth, training
profile) plus corpus-wide statistics (item popularity), which every shard receives
in full. So the shards' per-user values concatenate to the unsharded ones, the macro
average is their mean, and micro/global metrics are Σ numerators / Σ denominators over
the shards' per-user parts — the same numbers, up to float summation order, as
evaluating everything at once. System-level metrics (coverage, Gini, ...) need the
whole run and are refused here.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> truth = sp.csr_matrix(np.array([[5.0, 0, 3, 0], [0, 4, 0, 1], [2, 0, 0, 5]]))
>>> rankings = np.array([[0, 1], [1, 2], [3, -1]])
>>> per_user, summary = evaluate_sharded(rankings, truth, ["precision@2", "recall@2(agg=micro)"], n_shards=2,
...                                      threshold=4)
>>> per_user["precision@2"].tolist(), round(summary["recall@2(agg=micro)"], 4)
([0.5, 0.5, 0.5], 1.0)
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from receval.errors import MetricError
from receval.progress import Progress, progress_to

if TYPE_CHECKING:
    from receval.metrics import MetricList

__all__ = ["evaluate_sharded", "shard_bounds", "worker_pool"]


def shard_bounds(n_users: int, n_shards: int) -> list[tuple[int, int]]:
    """Contiguous, nearly equal row ranges ``[start, stop)`` covering ``n_users`` rows.

    Returns
    -------
    list of tuple of int
        ``min(n_shards, n_users)`` ranges (one empty range for no rows), in order, their
        sizes differing by at most one.

    Examples
    --------
    >>> shard_bounds(10, 3)
    [(0, 3), (3, 7), (7, 10)]
    """
    if n_shards < 1:
        raise MetricError(f"n_shards must be at least 1, got {n_shards}")
    edges = np.linspace(0, n_users, min(n_shards, max(n_users, 1)) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges)]


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(interval: float = 0.5) -> None:
    """End this worker process as soon as the process that started it is gone.

    A parent killed with ``SIGKILL`` cannot shut its pool down, and a worker in the
    middle of a task would otherwise finish it (and then idle) as an orphan. On Linux
    the kernel sends ``SIGKILL`` when the parent dies (``PR_SET_PDEATHSIG``), even while
    the worker is inside native code; everywhere, a daemon thread polls the parent's pid
    and exits when the worker has been re-parented.
    """
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    def watch() -> None:
        while os.getppid() == parent:  # also catches a parent that died before prctl took effect
            time.sleep(interval)
        os._exit(1)  # nobody is left to receive a result

    threading.Thread(target=watch, name="receval-parent-watchdog", daemon=True).start()


def _start_worker(initializer: Callable[..., Any] | None, initargs: tuple[Any, ...]) -> None:
    """Every pool worker's first call: its life tied to the parent's, then the caller's own initializer."""
    _die_with_parent()
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def worker_pool(
    workers: int, *, initializer: Callable[..., Any] | None = None, initargs: tuple[Any, ...] = (), **options: Any
) -> Iterator[Any]:
    """A pool of ``workers`` local processes (joblib's loky) whose workers all end with the block.

    On leaving (normally, on an error or on Ctrl-C) the workers are stopped and waited for;
    a parent killed outright takes its workers with it (each ends when its parent is gone).
    ``workers`` is checked by :func:`~receval.validate.check_jobs` (at most
    :func:`~receval.validate.jobs_limit`) before any process starts. ``initializer(*initargs)``
    runs once in each worker; ``options`` go to loky's ``ProcessPoolExecutor`` (``env`` ...):
    a pool of its own, not loky's process-wide reusable one, which keeps idle workers alive for
    minutes after use. (The resource-tracker process loky starts beside them ends with this
    process; the ``receval`` command stops it before exiting.)

    Yields
    ------
    concurrent.futures.Executor
        loky's executor (``submit``, ``map``).

    Examples
    --------

    >>> with worker_pool(2) as pool:
    ...     list(pool.map(abs, [-1, 2, -3]))
    [1, 2, 3]
    """
    from joblib.externals.loky import ProcessPoolExecutor

    from receval.validate import check_jobs

    pool = ProcessPoolExecutor(
        max_workers=check_jobs(workers), initializer=_start_worker, initargs=(initializer, initargs), **options
    )
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, kill_workers=True)


def _shard_parts(job: dict[str, Any]) -> dict[str, tuple[np.ndarray, np.ndarray | None, np.ndarray | None]]:
    """Per-user values and (for micro/global metrics) per-user numerators/denominators of one shard."""
    from receval.metrics.registry import MetricInput

    train = job["train_all"]
    start, stop = job["rows"]
    data = MetricInput(
        job["rankings"],
        job["truth"],
        train=None if train is None else train[start:stop],
        train_all=train,
        predictions=job["predictions"],
        **job["options"],
    )
    out = {}
    for name, metric in job["metrics"]:
        values = metric.per_user(data)
        num = den = None
        micro = metric.definition.micro
        if metric.aggregation in ("micro", "global") and micro is not None:  # the parser allows them only then
            num, den = (np.asarray(x, dtype=np.float64) for x in micro(data, metric.k, **_params(metric)))
        out[name] = (values, num, den)
    return out


def _params(metric: Any) -> dict[str, Any]:
    return {k: v for k, v in metric.params.items() if k != "agg"}


def evaluate_sharded(
    rankings: np.ndarray,
    truth: sp.csr_matrix,
    metrics: MetricList | Sequence[str],
    *,
    n_shards: int,
    train: sp.csr_matrix | None = None,
    predictions: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    map_fn: Callable[[Callable[..., Any], Iterable[Any]], Iterable[Any]] = map,
    progress: Progress | None = None,
    convention: str | None = None,
    **options: Any,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Evaluate ``rankings`` against ``truth`` in ``n_shards`` user shards; exact aggregation.

    ``map_fn(fn, jobs)`` runs the shards: the builtin ``map`` (sequential), a pool's
    ``map``, or a cluster's, e.g. ``lambda f, jobs: client.gather(client.map(f, list(jobs)))``
    with Dask. ``convention`` applies a library's preset to every metric that names none
    (:func:`~receval.evaluation.evaluate`'s; the lists are ranked already, so no tie rule).
    ``options`` go to :class:`~receval.metrics.MetricInput` (``threshold``,
    ``aspects``, ``rating_max`` ...). Returns the per-user frame (one column per metric,
    rows = user rows) and the aggregated values. ``progress(shards_done, n_shards, "evaluate
    shards")`` (default: the active callback of :func:`receval.progress.reporting`) hears
    of each shard as ``map_fn`` yields it.

    Returns
    -------
    tuple of (pandas.DataFrame, dict of str to float)
        The per-user values (one column per metric, one row per row of ``rankings``,
        NaN for a user the metric does not score) and each metric's aggregate, equal to
        an evaluation in one piece.

    Examples
    --------
    User 1's only rating is below λ = 4, so no metric scores it:

    >>> truth = sp.csr_matrix(np.array([[5.0, 0, 4.0], [0, 3.0, 0], [4.0, 0, 0]]))
    >>> rankings = np.array([[0, 1], [1, 2], [2, 0]])
    >>> per_user, summary = evaluate_sharded(rankings, truth, ["precision@2", "recall@2"], n_shards=2, threshold=4)
    >>> per_user["recall@2"].tolist(), summary
    ([0.5, nan, 1.0], {'precision@2': 0.5, 'recall@2': 0.75})
    """
    from receval.metrics import MetricList, aggregate

    parsed = MetricList.of(metrics, convention)
    system = [n for n, m in parsed if m.aggregation == "system"]
    if system:
        raise MetricError(f"system-level metrics {system} need the whole run and cannot be sharded by user")
    truth = sp.csr_matrix(truth)
    train = None if train is None else sp.csr_matrix(train)
    jobs = []
    for start, stop in shard_bounds(truth.shape[0], n_shards):
        preds = None
        if predictions is not None:
            keep = (predictions[0] >= start) & (predictions[0] < stop)
            preds = (predictions[0][keep] - start, predictions[1][keep], predictions[2][keep])
        jobs.append(
            {
                "rows": (start, stop),
                "rankings": rankings[start:stop],
                "truth": truth[start:stop],
                "train_all": train,  # corpus statistics (item popularity) need every user's training data
                "predictions": preds,
                "metrics": parsed,  # a worker process reads the list again (MetricList pickles as its strings)
                "options": options,
            }
        )
    notify, parts = progress_to(progress), []
    notify(0, len(jobs), "evaluate shards")
    for part in map_fn(_shard_parts, jobs):
        parts.append(part)
        notify(len(parts), len(jobs), "evaluate shards")
    per_user = {}
    summary = {}
    for name, metric in parsed:
        values = np.concatenate([p[name][0] for p in parts])
        per_user[name] = values
        if metric.aggregation in ("micro", "global"):
            num = sum(float(np.sum(p[name][1])) for p in parts)
            den = sum(float(np.sum(p[name][2])) for p in parts)
            summary[name] = aggregate(metric, totals=(num, den))
        else:
            summary[name] = aggregate(metric, values)
    return pd.DataFrame(per_user), summary
