"""Executors: run tasks in this process, in local processes (joblib/loky), on Dask or on Ray.

Every executor runs the same function, :func:`run_task`, which takes its seed from
the task (never from worker state) and limits native thread pools to one thread, so
results are bit-identical whatever the executor and the number of workers. Data sets
travel to the workers once: as the worker initializer's argument (local processes),
``Client.scatter(..., broadcast=True)`` (Dask) or ``ray.put`` (Ray) — tasks carry only
a reference.

Examples
--------
>>> ex = make_executor("local", jobs=1)
>>> ex.describe()
'local (in-process)'
"""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass
from typing import Any

from receval.errors import ConfigError
from receval.experiment.ids import Task
from receval.experiment.protocols import PreparedDataset, TaskOutput, get_protocol
from receval.validate import check_jobs

__all__ = ["TaskResult", "make_executor", "run_task", "EXECUTORS"]

EXECUTORS = ("local", "dask", "ray")


@dataclass
class TaskResult:
    """A finished task: status, error, timing, memory and (when ok) its output."""

    task_id: str
    status: str
    error: str | None
    traceback: str | None
    started: float
    seconds: float
    peak_rss_mb: float | None
    worker: str
    output: TaskOutput | None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:  # Linux: resets VmHWM, the peak resident set
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_mb(reset_ok: bool) -> float | None:
    if reset_ok:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # lifetime peak of the process (kB on Linux)
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


def run_task(task: Task, dataset: PreparedDataset) -> TaskResult:
    """Run one task; any exception is caught and reported in the result (the others go on).

    Returns
    -------
    TaskResult
        ``status`` ``"ok"`` with the protocol's output, or ``"failed"`` with the error
        and its traceback; timing, peak memory and the worker in both cases.

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> from receval.experiment.datasets import prepare_dataset
    >>> from receval.experiment.grid import expand
    >>> text = 'name = "g"\\nmetrics = ["precision@5"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 50, n_items = 40, n_ratings = 600 }\\n[recommenders.popularity]\\n'
    >>> cfg = parse_config(text)
    >>> result = run_task(expand(cfg)[0], prepare_dataset(cfg.datasets["toy"]))
    >>> result.status, sorted(result.output.aggregates)
    ('ok', ['precision@5'])
    """
    from threadpoolctl import threadpool_limits

    started = time.time()
    t0 = time.perf_counter()
    reset_ok = _reset_peak()
    output = None
    error = tb = None
    try:
        with threadpool_limits(limits=1):
            output = get_protocol(task.protocol).run(task, dataset)
        status = "ok"
    except Exception as err:  # a failing task is recorded, not raised
        status = "failed"
        error = f"{type(err).__name__}: {err}"
        tb = traceback.format_exc()
    return TaskResult(
        task_id=task.id,
        status=status,
        error=error,
        traceback=tb,
        started=started,
        seconds=time.perf_counter() - t0,
        peak_rss_mb=_peak_mb(reset_ok),
        worker=f"{socket.gethostname()}:{os.getpid()}",
        output=output,
    )


# ----------------------------------------------------------------- executors
class _Executor:
    name = "base"

    def start(self) -> None:
        """Connect to (or start) the workers; errors here come before any work."""

    def run(self, tasks: list[Task], datasets: Mapping[str, PreparedDataset]) -> Iterator[TaskResult]:
        """Results in completion order."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the workers."""

    def describe(self) -> str:
        """One-line description for the progress display."""
        return self.name

    def call(self, fn: Callable[[Any, Any], Any], jobs: Sequence[Any], shared: Any) -> list[Any]:
        """``[fn(job, shared) for job in jobs]`` on the workers, results in the order of ``jobs``.

        ``shared`` (the data every job reads) travels to each worker once per executor,
        however many times ``call`` is given the same object: tuning runs its trials in
        many small rounds. Native thread pools are limited to one thread, as for tasks.
        """
        return [_limited(fn, job, shared) for job in jobs]


class _InProcess(_Executor):
    name = "local"

    def run(self, tasks: list[Task], datasets: Mapping[str, PreparedDataset]) -> Iterator[TaskResult]:
        for task in tasks:
            yield run_task(task, datasets[task.dataset_key])

    def describe(self) -> str:
        return "local (in-process)"


_WORKER_DATA: dict[str, PreparedDataset] = {}
_WORKER_SHARED: list[Any] = []


_CONTROLLER: list[Any] = []  # [len(sys.modules) when it was made, a ThreadpoolController]


def _limited(fn: Callable[[Any, Any], Any], job: Any, shared: Any) -> Any:
    """``fn(job, shared)`` with the native thread pools (BLAS, OpenMP) limited to one thread.

    Finding the pools walks every loaded shared library (2-3 ms, more than a small trial's
    scoring), so the controller is kept and made again only after an import: native
    libraries arrive with the modules that load them.
    """
    from threadpoolctl import ThreadpoolController

    if not _CONTROLLER or _CONTROLLER[0] != len(sys.modules):
        _CONTROLLER[:] = [len(sys.modules), ThreadpoolController()]
    with _CONTROLLER[1].limit(limits=1):
        return fn(job, shared)


def _install_shared(shared: Any) -> None:
    """The initializer of :meth:`_Executor.call`'s local workers: the shared data, kept for every round."""
    _WORKER_SHARED[:] = [shared]


def _call_installed(fn: Callable[[Any, Any], Any], job: Any) -> Any:
    return _limited(fn, job, _WORKER_SHARED[0])


def _install(datasets: Mapping[str, PreparedDataset]) -> None:
    """The local workers' initializer (their lives tied to this process by ``worker_pool``): keep the data sets."""
    _WORKER_DATA.clear()
    _WORKER_DATA.update(datasets)


def _run_installed(task: Task) -> TaskResult:
    return run_task(task, _WORKER_DATA[task.dataset_key])


class _Loky(_Executor):
    """joblib's process pool (loky); the data sets are the worker initializer's argument."""

    name = "local"

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.pool: Any = None
        self._shared: Any = None
        self._pool_block = contextlib.ExitStack()

    def run(self, tasks: list[Task], datasets: Mapping[str, PreparedDataset]) -> Iterator[TaskResult]:
        from receval.evaluation.sharded import worker_pool

        self.pool = self._pool_block.enter_context(
            worker_pool(self.jobs, initializer=_install, initargs=(dict(datasets),), timeout=60)
        )
        # keep at most 2 tasks per worker queued so Ctrl-C stops quickly
        pending: set[Any] = set()
        todo = iter(tasks)
        for task in todo:
            pending.add(self.pool.submit(_run_installed, task))
            if len(pending) >= 2 * self.jobs:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
                nxt = next(todo, None)
                if nxt is not None:
                    pending.add(self.pool.submit(_run_installed, nxt))

    def call(self, fn: Callable[[Any, Any], Any], jobs: Sequence[Any], shared: Any) -> list[Any]:
        from receval.evaluation.sharded import worker_pool

        if self._shared is not shared:  # a new pool for new shared data (tuning sends one object)
            self.close()
            self.pool = self._pool_block.enter_context(
                worker_pool(self.jobs, initializer=_install_shared, initargs=(shared,), timeout=60)
            )
            self._shared = shared
        futures = [self.pool.submit(_call_installed, fn, job) for job in jobs]
        return [f.result() for f in futures]

    def close(self) -> None:
        self.pool = None
        self._shared = None
        self._pool_block.close()  # stops the workers and waits for them (worker_pool)

    def describe(self) -> str:
        return f"local ({self.jobs} processes)"


class _Dask(_Executor):
    name = "dask"

    def __init__(self, jobs: int, scheduler: str | None, processes: bool = True) -> None:
        self.jobs = jobs
        self.scheduler = scheduler
        self.processes = processes
        self.client: Any = None
        self.cluster: Any = None
        self._shared: tuple[Any, Any] | None = None

    def start(self) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as err:
            raise ConfigError(
                f"the Dask executor needs dask[distributed]: pip install 'receval[dask]' ({err})"
            ) from None
        if self.scheduler:
            try:
                self.client = Client(self.scheduler, timeout="5s", set_as_default=False)
            except (OSError, TimeoutError) as err:
                raise ConfigError(
                    f"cannot reach the Dask scheduler at {self.scheduler!r}: {err}; check the address "
                    "(tcp://host:8786) or leave scheduler= out to start a local cluster",
                    parameters=["scheduler"],
                ) from None
        else:
            self.cluster = LocalCluster(
                n_workers=self.jobs,
                threads_per_worker=1,
                processes=self.processes,
                dashboard_address=":0",
                silence_logs=40,
            )
            self.client = Client(self.cluster, set_as_default=False)

    def run(self, tasks: list[Task], datasets: Mapping[str, PreparedDataset]) -> Iterator[TaskResult]:
        from distributed import as_completed

        refs = {key: self.client.scatter(ds, broadcast=True, hash=False) for key, ds in datasets.items()}
        futures = [
            self.client.submit(run_task, t, refs[t.dataset_key], key=f"receval-{t.id}", pure=False) for t in tasks
        ]
        with self.client.as_current():  # as_completed looks up the current client
            for fut in as_completed(futures):
                yield fut.result()
                fut.release()

    def call(self, fn: Callable[[Any, Any], Any], jobs: Sequence[Any], shared: Any) -> list[Any]:
        if self._shared is None or self._shared[0] is not shared:
            self._shared = (shared, self.client.scatter(shared, broadcast=True, hash=False))
        futures = [self.client.submit(_limited, fn, job, self._shared[1], pure=False) for job in jobs]
        return list(self.client.gather(futures))

    def close(self) -> None:
        self._shared = None
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    def describe(self) -> str:
        return f"dask ({self.scheduler})" if self.scheduler else f"dask (LocalCluster, {self.jobs} workers)"


class _Ray(_Executor):
    name = "ray"

    def __init__(self, jobs: int, address: str | None) -> None:
        self.jobs = jobs
        self.address = address
        self.started_here = False
        self._shared: tuple[Any, Any] | None = None

    def start(self) -> None:
        try:
            import ray
        except ImportError as err:
            raise ConfigError(f"the Ray executor needs ray: pip install 'receval[ray]' ({err})") from None
        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
        try:
            if self.address:
                ray.init(address=self.address, **kwargs)
            else:
                ray.init(num_cpus=self.jobs, **kwargs)
        except (ConnectionError, OSError, RuntimeError, ValueError) as err:
            raise ConfigError(f"cannot start or reach Ray at {self.address or 'a local instance'!r}: {err}") from None
        self.started_here = True

    def run(self, tasks: list[Task], datasets: Mapping[str, PreparedDataset]) -> Iterator[TaskResult]:
        import ray

        refs = {key: ray.put(ds) for key, ds in datasets.items()}
        remote = ray.remote(num_cpus=1, max_retries=0)(run_task)
        pending = [remote.remote(t, refs[t.dataset_key]) for t in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])

    def call(self, fn: Callable[[Any, Any], Any], jobs: Sequence[Any], shared: Any) -> list[Any]:
        import ray

        if self._shared is None or self._shared[0] is not shared:
            self._shared = (shared, ray.put(shared))
        remote = ray.remote(num_cpus=1, max_retries=0)(_limited)
        return list(ray.get([remote.remote(fn, job, self._shared[1]) for job in jobs]))

    def close(self) -> None:
        import ray

        self._shared = None
        if self.started_here:
            ray.shutdown()
            self.started_here = False

    def describe(self) -> str:
        return f"ray ({self.address})" if self.address else f"ray (local, {self.jobs} CPUs)"


def make_executor(name: str, *, jobs: int = 1, scheduler: str | None = None, processes: bool = True) -> _Executor:
    """An executor by name; ``scheduler`` is the Dask scheduler or Ray cluster address.

    ``processes=False`` runs a Dask LocalCluster's workers as threads of this process
    (no process start-up; used by the tests).

    Returns
    -------
    executor
        Not started yet: ``start()``, then ``run(tasks, datasets)``; an unknown name is a
        ConfigError.

    Examples
    --------
    >>> make_executor("local").describe()
    'local (in-process)'
    >>> make_executor("spark")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: unknown executor 'spark'; use one of local, dask, ray
    """
    jobs = check_jobs(jobs)  # at least 1, at most jobs_limit(): before any worker is started
    if name == "local":
        if scheduler:
            raise ConfigError(
                f"scheduler={scheduler!r} only applies to executor='dask' or executor='ray'",
                parameters=["scheduler", "executor"],
            )
        return _InProcess() if jobs == 1 else _Loky(jobs)
    if name == "dask":
        return _Dask(jobs, scheduler, processes)
    if name == "ray":
        return _Ray(jobs, scheduler)
    raise ConfigError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
