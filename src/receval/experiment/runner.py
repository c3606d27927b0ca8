"""Running an experiment: validate, expand, claim the store, start workers, run, summarise.

Everything that can be wrong with the input (the configuration, a grid of zero tasks,
an output directory holding another configuration, an unreachable scheduler) is
reported before any task runs. Tasks already finished in the store are skipped, so
re-running the same command after an interruption completes the experiment.
"""

from __future__ import annotations

import inspect
import json
import logging
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import pandas as pd

from receval.errors import ConfigError
from receval.experiment.card import write_card
from receval.experiment.config import ExperimentConfig, load_config
from receval.experiment.datasets import input_hashes
from receval.experiment.executors import TaskResult, make_executor
from receval.experiment.grid import expand
from receval.experiment.ids import Task
from receval.experiment.protocols import TaskOutput
from receval.experiment.store import DATA_PATHS, INPUTS, ResultStore, data_paths, folder_lock
from receval.experiment.validation import prepare_checked
from receval.progress import Progress, progress_to

__all__ = ["RunReport", "compare", "run_experiment", "summarise", "versions"]

_DEPENDENCIES = ("numpy", "scipy", "pandas", "pyarrow", "numba", "implicit", "joblib")
_DEMOGRAPHIC = ("age", "gender", "occupation")
_log = logging.getLogger(__name__)


def versions() -> dict[str, str]:
    """receval, Python and the main dependencies' versions (recorded with every task)."""
    out = {"python": platform.python_version()}
    for name in ("receval", *_DEPENDENCIES):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


@dataclass
class RunReport:
    """What a run did: the store, how many tasks were skipped, ran, failed; the damaged tasks it found (and re-ran)."""

    store: ResultStore
    config: ExperimentConfig
    n_tasks: int
    skipped: int
    ok: int
    failed: int
    seconds: float
    repaired: dict[str, str] = field(default_factory=dict)


def _record(task: Task, result: TaskResult, cfg: ExperimentConfig, vers: dict[str, str]) -> dict[str, Any]:
    # the preset is named only when there is one: stores of configurations without one keep their columns
    preset = {} if cfg.convention is None else {"convention": cfg.convention}
    return {
        "config_hash": cfg.hash,
        "experiment": cfg.name,
        "label": task.describe(),
        "dataset": task.dataset,
        "recommender": task.recommender,
        "algorithm": task.algorithm,
        "params": json.dumps(dict(task.params), sort_keys=True),
        "protocol": task.protocol,
        "options": json.dumps(dict(task.options), sort_keys=True),
        "split": json.dumps(dict(task.split), sort_keys=True),
        "fold": -1 if task.fold is None else task.fold,
        "seed": task.seed,
        "metrics": json.dumps(list(task.metrics)),
        **preset,
        "status": result.status,
        "error": result.error,
        "traceback": result.traceback,
        "started": pd.Timestamp(result.started, unit="s", tz="UTC"),
        "seconds": result.seconds,
        "peak_rss_mb": result.peak_rss_mb,
        "worker": result.worker,
        "receval_version": vers["receval"],
        "versions": json.dumps(vers, sort_keys=True),
    }


def _tables(output: TaskOutput | None) -> dict[str, pd.DataFrame]:
    if output is None:
        return {}
    tables = {
        "aggregates": pd.DataFrame(
            {"metric": list(output.aggregates), "value": [float(v) for v in output.aggregates.values()]}
        )
    }
    if output.per_user is not None:
        tables["per_user"] = output.per_user
    tables.update(output.tables)
    return tables


def run_experiment(
    config: str | Path | ExperimentConfig,
    *,
    out: str | Path | None = None,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    quick: bool = False,
    force: bool = False,
    processes: bool = True,
    on_start: Callable[[list[Task], int, str], None] | None = None,
    on_result: Callable[[Task, TaskResult], None] | None = None,
    progress: Progress | None = None,
    convention: str | None = None,
) -> RunReport:
    """Run (or resume) an experiment and return what happened.

    ``convention`` (a library's name) replaces the configuration file's ``convention``:
    that library's preset for every metric of every evaluation of the run, recorded in
    ``experiment.json`` (the effective configuration) and in every task's record.

    ``on_start(todo, skipped, executor_description)`` and ``on_result(task, result)``
    are hooks for displays; ``progress(tasks_done, tasks_to_run, "experiment tasks")``
    (default: the active callback of :func:`receval.progress.reporting`) hears of each
    finished task. ``processes=False`` runs a Dask LocalCluster's workers as threads.
    """
    t0 = time.perf_counter()
    if isinstance(config, ExperimentConfig):
        if convention is not None and convention != config.convention:
            raise ConfigError(
                "convention= is applied when a configuration is parsed: give the configuration's path, or "
                "parse_config(text, convention=...)",
                parameters=["convention"],
            )
        cfg = config
    else:
        cfg = load_config(config, quick=quick, convention=convention)
    if cfg.tune is not None:
        raise ConfigError(
            f"{cfg.source}: the configuration has a [tune] section: run it with receval tune (or receval run), "
            "or receval.experiment.tune.tune_experiment"
        )
    tasks = expand(cfg)
    root = Path(out) if out is not None else cfg.output_dir
    from receval.outputs import check_output_dir

    source = "the configuration" if isinstance(config, ExperimentConfig) else str(config)
    check_output_dir(root, "out=" if out is not None else f"{source}: output")  # before any task runs
    with folder_lock(root, "receval run"):  # one process at a time writes a store
        store = ResultStore(root)
        vers = versions()
        meta = {
            "name": cfg.name,
            "config_hash": cfg.hash,
            "config": dict(cfg.effective),
            "source": cfg.source,
            DATA_PATHS: data_paths(cfg.datasets),
            INPUTS: input_hashes(cfg),
            "n_tasks": len(tasks),
            "receval_version": vers["receval"],
            "created": pd.Timestamp.now(tz="UTC").isoformat(),
        }
        cleared = store.check(meta, force=force)
        demographic = any(s in _DEMOGRAPHIC for s in cfg.slices.get("user", ()))
        # the data sets are prepared and the values that depend on them checked before anything is written;
        # a resumed run prepares only those of its unfinished tasks (finished_ids only reads)
        done = store.finished_ids() if not cleared and store.parts.is_dir() else set()
        prepared = prepare_checked(cfg, [t for t in tasks if t.id not in done], user_features=demographic)
        ex = make_executor(executor, jobs=jobs, scheduler=scheduler, processes=processes)
        ex.start()
        ok = failed = 0
        try:
            store.open(meta, force=force)
            repaired = store.damaged()
            finished = store.finished_ids()
            todo = [t for t in tasks if t.id not in finished]
            by_id = {t.id: t for t in todo}
            keys = {t.dataset_key for t in todo}
            datasets = {key: value for key, value in prepared.items() if key in keys}
            if on_start is not None:
                on_start(todo, len(tasks) - len(todo), ex.describe())
            _log.info("%s: %d tasks started on %s (%d already finished)", cfg.name, len(todo), ex.describe(),
                      len(tasks) - len(todo))  # fmt: skip
            notify = progress_to(progress)
            notify(0, len(todo), "experiment tasks")
            for result in ex.run(todo, datasets) if todo else ():
                task = by_id[result.task_id]
                store.write_task(task.id, _record(task, result, cfg, vers), _tables(result.output))
                ok += result.status == "ok"
                failed += result.status != "ok"
                if result.status == "ok":
                    _log.info("task %s (%s) finished in %.2f s", task.id, task.describe(), result.seconds)
                else:
                    _log.warning("task %s (%s) failed: %s", task.id, task.describe(), result.error)
                if on_result is not None:
                    on_result(task, result)
                notify(ok + failed, len(todo), "experiment tasks")
        finally:
            ex.close()
            if store.parts.exists():
                store.rebuild()
        defaults = inspect.signature(compare).parameters  # what `receval compare` applies to these results
        tests = {f"compare_default_{k}": defaults[k].default for k in ("test", "correction")}
        write_card(root, cfg, vers, tests)  # what was run, to rerun it bit for bit
        seconds = time.perf_counter() - t0
        return RunReport(store, cfg, len(tasks), len(tasks) - len(todo), ok, failed, seconds, repaired)


def summarise(store: ResultStore) -> pd.DataFrame:
    """Mean ± standard deviation over seeds and folds of every metric, per data set / recommender / parameters.

    Returns a frame with one row per configuration and columns ``dataset``, ``label``,
    ``n`` (finished tasks), then ``<metric>`` (mean) and ``<metric>_std``.
    """
    tasks = store.read("tasks")
    if "aggregates" not in store.table_names():
        return pd.DataFrame(columns=["label", "n"])
    agg = store.read("aggregates")
    tasks = tasks[tasks["status"] == "ok"].copy()
    tasks["config"] = _configs(tasks)
    merged = agg.merge(tasks[["task_id", "dataset", "config"]], on="task_id")
    stats = merged.groupby(["config", "metric"], sort=True)["value"].agg(["mean", "std"]).unstack("metric")
    metrics = list(dict.fromkeys(merged["metric"]))
    out = pd.DataFrame(index=stats.index)
    for m in metrics:
        out[m] = stats[("mean", m)]
        out[f"{m}_std"] = stats[("std", m)]
    counts = tasks.groupby("config", sort=True).size()
    out.insert(0, "n", counts.reindex(out.index).to_numpy())
    out = out.reset_index().rename(columns={"config": "label"})
    return out


def _configs(tasks: pd.DataFrame) -> pd.Series:
    return tasks["label"].str.replace(r" seed=\d+( fold=\d+)?$", "", regex=True)


def compare(
    store: ResultStore,
    metrics: str | Sequence[str],
    *,
    baseline: str | None = None,
    test: str = "ttest",
    correction: str = "holm",
    slices: bool = False,
) -> pd.DataFrame:
    """Paired significance tests between the configurations of an experiment, per data set and metric.

    ``metrics`` is one metric string, a comma-separated list (``"ndcg@10,recall@20"``) or
    a sequence of them, as the configuration wrote them. Each user's value is averaged
    over the seeds/folds that evaluated them, then configurations are compared over
    their common users with :func:`~receval.stats.significance.compare_systems` (or,
    with ``slices=True``, within every slice group with
    :func:`~receval.studies.slicing.compare_slices`); the correction runs within each
    metric. ``baseline`` is a configuration label as shown by ``receval results``
    without the data set prefix (e.g. ``popularity()``); all pairs when omitted.

    Returns
    -------
    pandas.DataFrame
        One row per pair of configurations, data set and metric (and slice group).
    """
    from receval.metrics import parse_metric_list
    from receval.stats.significance import compare_systems
    from receval.studies.slicing import compare_slices

    asked = parse_metric_list(metrics) if isinstance(metrics, str) else list(metrics)
    tasks = store.read("tasks")
    tasks = tasks[tasks["status"] == "ok"]
    if tasks.empty:  # all failed, damaged or not run yet
        raise ConfigError(f"{str(store.root)!r} holds no task that finished ok, so nothing to compare; "
                          "`receval results` lists the tasks")  # fmt: skip
    tasks = tasks.assign(system=lambda t: _configs(t).str.split("/", n=1).str[-1])
    table = store.read("slices" if slices else "per_user")
    present = set(table["metric"].unique())
    missing = [m for m in asked if m not in present]
    if missing or not asked:
        have = ", ".join(sorted(map(str, present))) or "none"
        raise ConfigError(
            f"no per-user values of metric {(missing or [''])[0]!r} in {str(store.root)!r}; it has: {have}"
        )
    table = table[table["metric"].isin(asked)].merge(tasks[["task_id", "dataset", "system"]], on="task_id")
    keys = ["dimension", "slice", "group"] if slices else []
    frames = []
    for metric in asked:
        for dataset, part in table[table["metric"] == metric].groupby("dataset", sort=True):
            mean = part.groupby([*keys, "system", "user_index"], as_index=False, observed=True)["value"].mean()
            if slices:
                res = compare_slices(mean.assign(metric=metric), baseline=baseline, test=test, correction=correction)
            else:
                # compare_systems checks the names of the test and the correction
                res = compare_systems(
                    mean, user="user_index", baseline=baseline, test=cast(Any, test), correction=cast(Any, correction)
                )
            frames.append(res.assign(dataset=dataset, metric=metric))
    return pd.concat(frames, ignore_index=True)
